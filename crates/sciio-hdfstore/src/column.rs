//! Raw PyTables data (one column of an n×k block, or a 1-d array) into Arrow arrays with the
//! pandas dtype `pd.read_hdf` gives.

use std::sync::Arc;

use arrow_array::types::{
    DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType, DurationSecondType,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{
    ArrayRef, BooleanArray, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array,
    Int8Array, PrimitiveArray, StringArray, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
};
use sciio_core::{Error, Result};
use sciio_pytables::sciio_hdf5::{ByteOrder, H5Type, RawData};

/// One index level: name and values (int64 ordinals of this frequency for a PeriodIndex).
#[derive(Debug, Clone)]
pub(crate) struct Level {
    pub name: Option<String>,
    pub values: ArrayRef,
    pub period: Option<String>,
    /// A categorical level's `ordered` flag.
    pub ordered: Option<bool>,
}

impl Level {
    pub(crate) fn new(name: Option<String>, values: ArrayRef) -> Level {
        Level {
            name,
            values,
            period: None,
            ordered: None,
        }
    }
}

/// How the integers of a column are to be read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Meaning {
    /// The stored numbers as they are.
    Plain,
    /// `datetime64[unit]`, UTC instants shown in `tz` when given (NaT = i64::MIN).
    Datetime { unit: Unit, tz: Option<String> },
    /// `timedelta64[unit]`.
    Timedelta { unit: Unit },
    /// `period[freq]`: int64 period ordinals (NaT = i64::MIN → missing).
    Period { freq: String },
}

impl Meaning {
    /// The frequency of a `period[freq]` dtype name (`period[M]` → `M`).
    pub(crate) fn period_of(dtype: &str) -> Option<Meaning> {
        let freq = dtype.strip_prefix("period[")?.strip_suffix(']')?;
        (!freq.is_empty()).then(|| Meaning::Period {
            freq: freq.to_string(),
        })
    }
}

/// A numpy time unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Unit {
    S,
    Ms,
    Us,
    Ns,
}

impl Unit {
    /// `"datetime64[us]"` → `us`; no bracket: nanoseconds (pandas' old default).
    pub(crate) fn of_dtype(dtype: &str) -> Result<Unit> {
        let unit = dtype
            .split_once('[')
            .map(|(_, u)| u.trim_end_matches(']'))
            .unwrap_or("ns");
        match unit {
            "s" => Ok(Unit::S),
            "ms" => Ok(Unit::Ms),
            "us" => Ok(Unit::Us),
            "ns" => Ok(Unit::Ns),
            other => Err(Error::unsupported(format!(
                "time unit {other:?} of {dtype:?}"
            ))),
        }
    }
}

/// Raw values to read columns from: their element type and bytes (a whole array, or the
/// rows of a table read straight from its row bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Raw<'a> {
    pub ty: &'a H5Type,
    pub bytes: &'a [u8],
}

impl<'a> From<&'a RawData> for Raw<'a> {
    fn from(raw: &'a RawData) -> Raw<'a> {
        Raw {
            ty: &raw.ty,
            bytes: &raw.bytes,
        }
    }
}

/// The rows × columns of a block; `transposed` blocks are stored rows-first (n, k).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub rows: usize,
    pub cols: usize,
    /// Element `(r, c)` is at `r * cols + c` (true) or `c * rows + r` (false).
    pub row_major: bool,
    /// A strided view: the bytes of row `r` start at `start + r * stride` (the rows of a
    /// table: a field's values without copying them out first).
    pub strided: Option<(usize, usize)>,
}

impl Layout {
    /// The layout of a block stored with PyTables' shape `shape`.
    pub(crate) fn of(shape: &[usize], transposed: bool) -> Result<Layout> {
        match shape {
            [n] => Ok(Layout {
                rows: *n,
                cols: 1,
                row_major: true,
                strided: None,
            }),
            [a, b] if transposed => Ok(Layout {
                rows: *a,
                cols: *b,
                row_major: true,
                strided: None,
            }),
            [a, b] => Ok(Layout {
                rows: *b,
                cols: *a,
                row_major: false,
                strided: None,
            }),
            other => Err(Error::unsupported(format!(
                "a block of {} dimensions",
                other.len()
            ))),
        }
    }

    /// `rows` rows of `cols` values each, row `r` starting at byte `start + r * stride`.
    pub(crate) fn strided(rows: usize, cols: usize, start: usize, stride: usize) -> Layout {
        Layout {
            rows,
            cols,
            row_major: true,
            strided: Some((start, stride)),
        }
    }

    pub(crate) fn at(&self, r: usize, c: usize) -> usize {
        if self.row_major {
            r * self.cols + c
        } else {
            c * self.rows + r
        }
    }
}

fn word<const N: usize>(b: &[u8], order: ByteOrder) -> [u8; N] {
    let mut w = [0u8; N];
    w.copy_from_slice(&b[..N]);
    if order == ByteOrder::Big {
        w.reverse();
    }
    w
}

/// The elements of column `c` as byte slices of `size` bytes.
fn elements<'a>(
    raw: Raw<'a>,
    layout: Layout,
    c: usize,
    size: usize,
) -> Result<impl Iterator<Item = &'a [u8]> + 'a> {
    if let Some((start, stride)) = layout.strided {
        // Row r's element c at start + r * stride + c * size: the last one must fit.
        let first = c.checked_mul(size).and_then(|o| o.checked_add(start));
        let need = layout.rows.checked_sub(1).map_or(Some(0), |last| {
            last.checked_mul(stride)
                .and_then(|o| o.checked_add(first?))
                .and_then(|o| o.checked_add(size))
        });
        let fits = need.is_some_and(|n| n <= raw.bytes.len());
        if size == 0 || !fits || c >= layout.cols.max(1) || first.is_none() {
            return Err(Error::format(format!(
                "{} rows of {stride} bytes hold {} bytes",
                layout.rows,
                raw.bytes.len()
            )));
        }
        let first = first.unwrap_or(0);
        let bytes = raw.bytes;
        return Ok(Either::Strided((0..layout.rows).map(move |r| {
            let i = first + r * stride;
            &bytes[i..i + size]
        })));
    }
    let need = layout
        .rows
        .checked_mul(layout.cols)
        .and_then(|n| n.checked_mul(size));
    if size == 0 || need.is_none_or(|n| n > raw.bytes.len()) || c >= layout.cols.max(1) {
        return Err(Error::format(format!(
            "a block of {}×{} elements of {size} bytes holds {} bytes",
            layout.rows,
            layout.cols,
            raw.bytes.len()
        )));
    }
    let bytes = raw.bytes;
    Ok(Either::Block((0..layout.rows).map(move |r| {
        let i = layout.at(r, c) * size;
        &bytes[i..i + size]
    })))
}

/// One of two iterators of the same items.
enum Either<A, B> {
    Strided(A),
    Block(B),
}

impl<'a, A: Iterator<Item = &'a [u8]>, B: Iterator<Item = &'a [u8]>> Iterator for Either<A, B> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        match self {
            Either::Strided(a) => a.next(),
            Either::Block(b) => b.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Either::Strided(a) => a.size_hint(),
            Either::Block(b) => b.size_hint(),
        }
    }
}

macro_rules! prim {
    ($arr:ty, $t:ty, $n:expr, $raw:expr, $layout:expr, $c:expr, $order:expr) => {{
        let v: Vec<$t> = elements($raw, $layout, $c, $n)?
            .map(|b| <$t>::from_le_bytes(word::<$n>(b, $order)))
            .collect();
        Arc::new(<$arr>::from(v)) as ArrayRef
    }};
}

/// Column `c` of a numeric block.
pub(crate) fn numeric(
    raw: Raw<'_>,
    layout: Layout,
    c: usize,
    meaning: &Meaning,
) -> Result<ArrayRef> {
    if *meaning != Meaning::Plain {
        let H5Type::Int { size: 8, order, .. } = *raw.ty else {
            return Err(Error::unsupported(format!(
                "datetime/timedelta values stored as {:?}, not 64-bit integers",
                raw.ty
            )));
        };
        let v: Vec<i64> = elements(raw, layout, c, 8)?
            .map(|b| i64::from_le_bytes(word::<8>(b, order)))
            .collect();
        return Ok(time_array(v, meaning));
    }
    Ok(match *raw.ty {
        H5Type::Int {
            size,
            signed,
            order,
        } => match (size, signed) {
            (1, true) => prim!(Int8Array, i8, 1, raw, layout, c, order),
            (2, true) => prim!(Int16Array, i16, 2, raw, layout, c, order),
            (4, true) => prim!(Int32Array, i32, 4, raw, layout, c, order),
            (8, true) => prim!(Int64Array, i64, 8, raw, layout, c, order),
            (1, false) => prim!(UInt8Array, u8, 1, raw, layout, c, order),
            (2, false) => prim!(UInt16Array, u16, 2, raw, layout, c, order),
            (4, false) => prim!(UInt32Array, u32, 4, raw, layout, c, order),
            (8, false) => prim!(UInt64Array, u64, 8, raw, layout, c, order),
            _ => return Err(Error::unsupported(format!("{size}-byte integers"))),
        },
        H5Type::Float { size: 8, order, .. } => prim!(Float64Array, f64, 8, raw, layout, c, order),
        H5Type::Float { size: 4, order, .. } => prim!(Float32Array, f32, 4, raw, layout, c, order),
        H5Type::Bitfield { size: 1, .. } | H5Type::Enum { .. } if raw.ty.size() == 1 => {
            let v: Vec<bool> = elements(raw, layout, c, 1)?.map(|b| b[0] != 0).collect();
            Arc::new(BooleanArray::from(v))
        }
        H5Type::FixedString { size, .. } => fixed_strings(raw, layout, c, size, None)?,
        H5Type::Compound { .. } => {
            return Err(Error::unsupported(
                "complex (or compound) values: Arrow and Parquet have no complex type",
            ))
        }
        ref other => return Err(Error::unsupported(format!("values of HDF5 type {other:?}"))),
    })
}

/// Column `c` of a block of fixed-length strings (NUL-padded, UTF-8), straight into one Arrow
/// buffer; values equal to `nan_rep` are missing (pandas' `table` format).
pub(crate) fn fixed_strings(
    raw: Raw<'_>,
    layout: Layout,
    c: usize,
    size: usize,
    nan_rep: Option<&str>,
) -> Result<ArrayRef> {
    use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
    let mut offsets: Vec<i32> = Vec::with_capacity(layout.rows + 1);
    let mut data: Vec<u8> = Vec::with_capacity(layout.rows.saturating_mul(size.min(64)));
    let mut valid: Vec<bool> = Vec::with_capacity(layout.rows);
    offsets.push(0);
    let nan = nan_rep.map(str::as_bytes);
    for b in elements(raw, layout, c, size)? {
        let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
        let text = &b[..end];
        if nan == Some(text) {
            valid.push(false);
        } else {
            valid.push(true);
            match std::str::from_utf8(text) {
                Ok(_) => data.extend_from_slice(text),
                Err(_) => data.extend_from_slice(String::from_utf8_lossy(text).as_bytes()),
            }
        }
        let at = i32::try_from(data.len())
            .map_err(|_| Error::unsupported("a string column of over 2 GiB of text"))?;
        offsets.push(at);
    }
    let nulls = NullBuffer::from(valid);
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    let array = StringArray::try_new(
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        data.into(),
        nulls,
    )
    .map_err(|e| Error::format(format!("string column: {e}")))?;
    Ok(Arc::new(array))
}

/// Time values (NaT = `i64::MIN` → missing) as Arrow timestamps or durations.
pub(crate) fn time_array(v: Vec<i64>, meaning: &Meaning) -> ArrayRef {
    let nulls = arrow_buffer::NullBuffer::from_iter(v.iter().map(|&x| x != i64::MIN));
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    fn ts<T: arrow_array::types::ArrowTimestampType>(
        v: Vec<i64>,
        nulls: Option<arrow_buffer::NullBuffer>,
        tz: &Option<String>,
    ) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::new(v.into(), nulls).with_timezone_opt(tz.clone()))
    }
    fn plain<T: arrow_array::ArrowPrimitiveType<Native = i64>>(
        v: Vec<i64>,
        nulls: Option<arrow_buffer::NullBuffer>,
    ) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::new(v.into(), nulls))
    }
    match meaning {
        Meaning::Datetime { unit, tz } => match unit {
            Unit::S => ts::<TimestampSecondType>(v, nulls, tz),
            Unit::Ms => ts::<TimestampMillisecondType>(v, nulls, tz),
            Unit::Us => ts::<TimestampMicrosecondType>(v, nulls, tz),
            Unit::Ns => ts::<TimestampNanosecondType>(v, nulls, tz),
        },
        Meaning::Timedelta { unit } => match unit {
            Unit::S => plain::<DurationSecondType>(v, nulls),
            Unit::Ms => plain::<DurationMillisecondType>(v, nulls),
            Unit::Us => plain::<DurationMicrosecondType>(v, nulls),
            Unit::Ns => plain::<DurationNanosecondType>(v, nulls),
        },
        Meaning::Plain | Meaning::Period { .. } => plain::<arrow_array::types::Int64Type>(v, nulls),
    }
}

/// An empty column of numpy dtype `dtype` (`int64`, `float32`, `bool`, `str`, `datetime64[ns]`...).
pub(crate) fn empty(dtype: &str, meaning: &Meaning) -> Result<ArrayRef> {
    use arrow_schema::DataType as D;
    if *meaning != Meaning::Plain {
        return Ok(time_array(Vec::new(), meaning));
    }
    let dt = match dtype {
        "int8" => D::Int8,
        "int16" => D::Int16,
        "int32" => D::Int32,
        "int64" => D::Int64,
        "uint8" => D::UInt8,
        "uint16" => D::UInt16,
        "uint32" => D::UInt32,
        "uint64" => D::UInt64,
        "float32" => D::Float32,
        "float64" => D::Float64,
        "bool" => D::Boolean,
        "str" | "object" | "string" => D::Utf8,
        other => {
            return Err(Error::unsupported(format!(
                "an empty block of dtype {other:?} (attribute value_type)"
            )))
        }
    };
    Ok(arrow_array::new_empty_array(&dt))
}

/// Adds a column read from a store to `builder`, by the dtype name it carries.
pub(crate) fn add_column(
    builder: sciio_pandas::FrameBuilder,
    label: Option<String>,
    values: ArrayRef,
    dtype: Option<String>,
) -> sciio_pandas::FrameBuilder {
    let unnamed = label.is_none();
    let label = label.unwrap_or_else(|| "None".into());
    let builder = match dtype {
        Some(t) => match Meaning::period_of(&t) {
            Some(Meaning::Period { freq }) => builder.period(label, values, &freq),
            _ => builder.column_with_numpy_type(label, values, t),
        },
        None => builder.column(label, values),
    };
    if unnamed {
        builder.unnamed()
    } else {
        builder
    }
}

/// The index levels into `builder`.
pub(crate) fn add_index(
    mut builder: sciio_pandas::FrameBuilder,
    index: Vec<Level>,
) -> sciio_pandas::FrameBuilder {
    for level in index {
        let name = level.name.as_deref();
        builder = match (level.period, level.ordered) {
            (Some(freq), _) => builder.period_index_level(name, level.values, &freq),
            (None, Some(ordered)) => builder.categorical_index_level(name, level.values, ordered),
            (None, None) => builder.index_level(name, level.values),
        };
    }
    builder
}

/// Codes (-1 = missing) and categories as an Arrow dictionary array.
pub(crate) fn dictionary(codes: &dyn arrow_array::Array, categories: ArrayRef) -> Result<ArrayRef> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int16Type, Int32Type, Int64Type, Int8Type};
    use arrow_array::{Array, DictionaryArray};
    let codes: Vec<i64> = match codes.data_type() {
        arrow_schema::DataType::Int8 => codes
            .as_primitive::<Int8Type>()
            .values()
            .iter()
            .map(|&v| i64::from(v))
            .collect(),
        arrow_schema::DataType::Int16 => codes
            .as_primitive::<Int16Type>()
            .values()
            .iter()
            .map(|&v| i64::from(v))
            .collect(),
        arrow_schema::DataType::Int32 => codes
            .as_primitive::<Int32Type>()
            .values()
            .iter()
            .map(|&v| i64::from(v))
            .collect(),
        arrow_schema::DataType::Int64 => codes.as_primitive::<Int64Type>().values().to_vec(),
        other => {
            return Err(Error::unsupported(format!(
                "categorical codes of type {other}"
            )))
        }
    };
    let n = categories.len() as i64;
    let mut keys: Vec<i32> = Vec::with_capacity(codes.len());
    let mut valid: Vec<bool> = Vec::with_capacity(codes.len());
    for &c in &codes {
        match c {
            -1 => {
                keys.push(0);
                valid.push(false);
            }
            c if (0..n).contains(&c) => {
                keys.push(
                    i32::try_from(c)
                        .map_err(|_| Error::unsupported("more than 2^31 categories"))?,
                );
                valid.push(true);
            }
            c => {
                return Err(Error::format(format!(
                    "category code {c} outside the {n} categories"
                )))
            }
        }
    }
    let nulls = arrow_buffer::NullBuffer::from(valid);
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    let keys = Int32Array::new(keys.into(), nulls);
    let dict = DictionaryArray::<Int32Type>::try_new(keys, categories)
        .map_err(|e| Error::format(format!("categorical: {e}")))?;
    Ok(Arc::new(dict))
}
