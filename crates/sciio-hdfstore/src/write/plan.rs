//! How each Arrow column of a frame is stored in a pandas `table` key: the HDF5 element type,
//! the numpy dtype name pandas records (`{col}_dtype` / `index_kind`), the `_meta` and `info`
//! entries, and how the values are encoded into the table's rows.

use std::collections::HashSet;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType, DurationSecondType,
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use sciio_core::{Error, Result};
use sciio_pandas::ColumnMeta;
use sciio_pickle::Value;
use sciio_pytables::sciio_hdf5::{ByteOrder, CharSet, H5Type};

/// How values are laid into a table cell.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Enc {
    /// Primitive values copied little-endian; nulls become `null` (NaN, NaT).
    Copy { size: usize, null: Option<Vec<u8>> },
    /// Integers with nulls: float64 with NaN (what `pd.read_parquet` gives).
    IntAsF64,
    /// numpy bool: one byte 0/1.
    Bool,
    /// UTF-8 bytes padded with NULs to `itemsize`; nulls are `nan_rep`, the column's sentinel
    /// (`None` when no value is missing).
    Str {
        itemsize: usize,
        nan_rep: Option<String>,
    },
    /// Categorical codes (-1 for missing) as signed integers of `size` bytes.
    Codes { size: usize },
    /// A dictionary array's values, encoded as the inner encoding.
    Decoded(Box<Enc>),
    /// `datetime.date` objects (date32): the fixed format's pickled object array only.
    Dates,
}

/// pandas' refusal of a date column in the table format.
pub(crate) fn date_refusal(label: &str) -> Error {
    Error::unsupported(format!(
        "pandas cannot store column {label:?} in the table format: \"[date] is not \
         implemented as a table column\""
    ))
}

/// `period[M]` when the column is a pandas Period column (pandas metadata `numpy_type`, as
/// pyarrow writes it for its `pandas.period` extension type).
fn period_dtype(meta: &ColumnMeta) -> Option<String> {
    let t = meta.numpy_type.as_str();
    (t.starts_with("period[") && t.ends_with(']')).then(|| t.to_string())
}

fn is_text(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    )
}

/// The values a dictionary array stands for.
fn decode_dictionary(a: &dyn Array) -> Result<ArrayRef> {
    let d = a
        .as_any_dictionary_opt()
        .ok_or_else(|| Error::mismatch("not a dictionary array"))?;
    arrow_select::take::take(d.values().as_ref(), d.keys(), None)
        .map_err(|e| Error::mismatch(format!("decoding a dictionary: {e}")))
}

/// One stored column (a data column, a level, or one member of a values block).
#[derive(Debug, Clone)]
pub(crate) struct Elem {
    /// The element type in the table (a values block holds an array of it).
    pub ty: H5Type,
    /// numpy dtype name (`int64`, `bytes24`, `datetime64[us]`, `int8` for codes).
    pub dtype: String,
    /// `index_kind` when used as the index column.
    pub index_kind: String,
    /// `{col}_meta`: `str`, `category`, or none.
    pub meta: Option<&'static str>,
    /// The column's `info` entries (`tz`, `ordered`).
    pub info: Vec<(Value, Value)>,
    pub enc: Enc,
    /// A categorical's categories (stored as a series table beside the key).
    pub categories: Option<ArrayRef>,
    /// Whether pandas keeps columns of this dtype together in one block.
    pub consolidates: bool,
}

impl Elem {
    /// The key under which columns share a values block.
    pub fn block_key(&self) -> Option<String> {
        self.consolidates.then(|| self.dtype.clone())
    }

    /// The numpy dtype of the frame's block this column comes from, as pyarrow makes it:
    /// `object` for an object column of text, else the stored dtype.
    pub(crate) fn writer_dtype(&self) -> &str {
        match (&self.enc, self.meta) {
            (Enc::Str { .. }, None) => "object",
            _ => &self.dtype,
        }
    }
}

/// The sentinel pandas tries first for a missing string (and the one of every store written
/// before pandas 3.1).
pub(crate) const NAN_REP: &str = "nan";

/// Sentinel number `k`: `"nan"` wrapped in `k` underscores on each side (pandas'
/// `_make_nan_rep` tries `nan`, `_nan_`, `__nan__`, ...).
fn sentinel(k: usize) -> String {
    format!("{u}{NAN_REP}{u}", u = "_".repeat(k))
}

/// `k` when `v` is sentinel number `k` (no allocation: every present value is tried).
pub(crate) fn sentinel_number(v: &str) -> Option<usize> {
    let inner = v.trim_start_matches('_');
    let k = v.len() - inner.len();
    let rest = inner.strip_prefix(NAN_REP)?;
    (rest.len() == k && rest.bytes().all(|b| b == b'_')).then_some(k)
}

/// The present values of a string array (`None` for another type).
fn present_strs(a: &dyn Array) -> Box<dyn Iterator<Item = &str> + '_> {
    match a.data_type() {
        DataType::Utf8 => Box::new(a.as_string::<i32>().iter().flatten()),
        DataType::LargeUtf8 => Box::new(a.as_string::<i64>().iter().flatten()),
        DataType::Utf8View => Box::new(a.as_string_view().iter().flatten()),
        _ => Box::new(std::iter::empty()),
    }
}

fn le_int(size: usize, signed: bool) -> H5Type {
    H5Type::Int {
        size,
        signed,
        order: ByteOrder::Little,
    }
}

fn le_float(size: usize) -> H5Type {
    H5Type::Float {
        size,
        precision: size * 8,
        order: ByteOrder::Little,
    }
}

pub(crate) fn string_type(itemsize: usize) -> H5Type {
    H5Type::FixedString {
        size: itemsize,
        charset: CharSet::Ascii,
    }
}

fn unit_name(u: &TimeUnit) -> &'static str {
    match u {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}

/// pandas' refusal of an object column (`Cannot serialize the column [c] because ...`).
fn object_refusal(label: &str, what: &str) -> Error {
    Error::unsupported(format!(
        "pandas cannot store column {label:?} in the table format: \"Cannot serialize the \
         column [{label}] because its data contents are not [string] but [{what}] object dtype\""
    ))
}

/// What planning a column needs to know of all its values, gathered batch by batch (a
/// streamed frame's first pass) or from its arrays at once: the same plan either way.
#[derive(Debug, Clone, Default)]
pub(crate) struct ColumnStats {
    /// Whether a value is missing (a dictionary of numbers or times: once decoded).
    nulls: bool,
    /// The longest text value, in UTF-8 bytes.
    max_len: usize,
    /// The sentinel numbers ([`sentinel_number`]) of the present text values.
    sentinels: HashSet<usize>,
    /// The present text values among those [`ColumnStats::add`] was asked to watch.
    watched: HashSet<String>,
    /// A categorical's categories: those of its first batch.
    categories: Option<ArrayRef>,
    /// Whether a later batch had other categories.
    categories_differ: bool,
}

impl ColumnStats {
    /// The statistics of a column whose arrays (one per record batch) are `parts`.
    pub(crate) fn of(parts: &[&dyn Array]) -> Result<ColumnStats> {
        let mut stats = ColumnStats::default();
        for p in parts {
            stats.add(*p, &HashSet::new())?;
        }
        Ok(stats)
    }

    /// Adds one batch's array; present text values in `watch` are remembered.
    pub(crate) fn add(&mut self, a: &dyn Array, watch: &HashSet<String>) -> Result<()> {
        match a.data_type() {
            DataType::Dictionary(_, values) if !is_text(values) => {
                self.add_values(decode_dictionary(a)?.as_ref(), watch);
            }
            DataType::Dictionary(..) => self.add_categories(a)?,
            _ => self.add_values(a, watch),
        }
        Ok(())
    }

    fn add_values(&mut self, a: &dyn Array, watch: &HashSet<String>) {
        // An Arrow null array has no validity buffer: its values are missing all the same.
        self.nulls |= a.null_count() > 0 || (*a.data_type() == DataType::Null && !a.is_empty());
        for v in present_strs(a) {
            self.max_len = self.max_len.max(v.len());
            if let Some(k) = sentinel_number(v) {
                self.sentinels.insert(k);
            }
            if !watch.is_empty() && watch.contains(v) && !self.watched.contains(v) {
                self.watched.insert(v.to_string());
            }
        }
    }

    fn add_categories(&mut self, a: &dyn Array) -> Result<()> {
        self.nulls |= a.null_count() > 0;
        let d = a
            .as_any_dictionary_opt()
            .ok_or_else(|| Error::mismatch("not a dictionary array"))?;
        match &self.categories {
            None => self.categories = Some(d.values().clone()),
            Some(f) if f.to_data() == d.values().to_data() => {}
            Some(_) => self.categories_differ = true,
        }
        Ok(())
    }

    /// Records whether a value is missing, known without the values (a footer's counts).
    pub(crate) fn note_nulls(&mut self, nulls: bool) {
        self.nulls |= nulls;
    }

    /// Whether a value is missing.
    pub(crate) fn nulls(&self) -> bool {
        self.nulls
    }

    /// Whether the present text values include `v` (a sentinel pandas makes, or a value
    /// watched while the statistics were gathered).
    pub(crate) fn has_text(&self, v: &str) -> bool {
        sentinel_number(v).is_some_and(|k| self.sentinels.contains(&k)) || self.watched.contains(v)
    }

    /// pandas' `_make_nan_rep` (GH#9604): the first of `nan`, `_nan_`, `__nan__`, ... that is
    /// none of the column's values nor of `taken` (values already stored in the column), so
    /// that a literal "nan" stays text.
    pub(crate) fn choose_sentinel(&self, taken: &HashSet<String>) -> String {
        let mut used = self.sentinels.clone();
        used.extend(taken.iter().filter_map(|v| sentinel_number(v)));
        let k = (0..).find(|k| !used.contains(k)).unwrap_or_default();
        sentinel(k)
    }

    /// The one dictionary every batch of a categorical shares.
    fn shared_categories(&self, label: &str) -> Result<ArrayRef> {
        if self.categories_differ {
            return Err(Error::unsupported(format!(
                "column {label:?}: the categories differ between record batches"
            )));
        }
        self.categories.clone().ok_or_else(|| {
            Error::unsupported(format!(
                "column {label:?}: a categorical without rows has no categories to store"
            ))
        })
    }
}

/// What planning a table needs to know of a field's values ([`super::field_needs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldNeed {
    /// Nothing: its storage follows from its type (floats, times, types refused whatever
    /// the values).
    Nothing,
    /// Only whether a value is missing (integers become float64, booleans are refused).
    Nulls,
    /// Its values (text: the widest value and the sentinel; categoricals: the categories).
    Values,
}

/// What [`plan_column_of`] reads of the statistics of a column of type `dt`: nothing for
/// floats and times (missing values are NaN / NaT whatever they are) and for types refused
/// whatever the values; whether a value is missing for integers and booleans (and the
/// dictionaries of those, decoded); the values for the rest (text, categoricals, nested).
pub(crate) fn field_need(dt: &DataType) -> FieldNeed {
    match dt {
        DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Timestamp(..)
        | DataType::Duration(_)
        | DataType::Date32
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => FieldNeed::Nothing,
        DataType::Boolean => FieldNeed::Nulls,
        int if int.is_integer() => FieldNeed::Nulls,
        DataType::Dictionary(_, values) if !is_text(values) => match field_need(values) {
            FieldNeed::Nothing => FieldNeed::Nothing,
            // A dictionary's missing values are its null keys and the keys of null values.
            _ => FieldNeed::Values,
        },
        _ => FieldNeed::Values,
    }
}

/// The storage of a column whose arrays (one per record batch) are `parts`.
pub(crate) fn plan_column(
    label: &str,
    dt: &DataType,
    meta: Option<&ColumnMeta>,
    parts: &[&dyn Array],
) -> Result<Elem> {
    plan_column_of(label, dt, meta, &ColumnStats::of(parts)?)
}

/// The storage of a column whose values' statistics are `stats`.
pub(crate) fn plan_column_of(
    label: &str,
    dt: &DataType,
    meta: Option<&ColumnMeta>,
    stats: &ColumnStats,
) -> Result<Elem> {
    if let Some(m) = meta.filter(|m| m.is_masked()) {
        let dtype = if m.numpy_type.is_empty() {
            m.pandas_type.as_str().to_string()
        } else {
            m.numpy_type.clone()
        };
        return Err(Error::unsupported(format!(
            "pandas cannot store column {label:?}: \"Cannot store a column with dtype {dtype} in \
             an HDF5 file. HDFStore supports NumPy dtypes, datetime64 with timezone, \
             categorical, and string extension types.\""
        )));
    }
    let nulls = stats.nulls;
    let plain = |ty: H5Type, dtype: &str, kind: &str, size: usize, null: Option<Vec<u8>>| Elem {
        ty,
        dtype: dtype.to_string(),
        index_kind: kind.to_string(),
        meta: None,
        info: Vec::new(),
        enc: Enc::Copy { size, null },
        categories: None,
        consolidates: true,
    };
    let int = |size: usize, signed: bool| {
        if nulls {
            Elem {
                enc: Enc::IntAsF64,
                ..plain(le_float(8), "float64", "float", 8, None)
            }
        } else {
            let name = format!("{}int{}", if signed { "" } else { "u" }, size * 8);
            plain(le_int(size, signed), &name, "integer", size, None)
        }
    };
    let float = |size: usize| {
        let nan = match size {
            2 => 0x7e00u16.to_le_bytes().to_vec(),
            4 => f32::NAN.to_le_bytes().to_vec(),
            _ => f64::NAN.to_le_bytes().to_vec(),
        };
        plain(
            le_float(size),
            &format!("float{}", size * 8),
            "float",
            size,
            Some(nan),
        )
    };
    let nat = Some(i64::MIN.to_le_bytes().to_vec());
    if let Some(dtype) = meta.and_then(period_dtype) {
        // A Period column (pyarrow's `pandas.period` extension over int64 ordinals): stored
        // as the ordinals, NaT as i64::MIN, one block per column (an extension block).
        if *dt != DataType::Int64 {
            return Err(Error::unsupported(format!(
                "column {label:?}: {dtype} stored as {dt}, not int64 ordinals"
            )));
        }
        return Ok(Elem {
            consolidates: false,
            ..plain(le_int(8, true), &dtype, "period", 8, nat)
        });
    }
    Ok(match dt {
        DataType::Int8 => int(1, true),
        DataType::Int16 => int(2, true),
        DataType::Int32 => int(4, true),
        DataType::Int64 => int(8, true),
        DataType::UInt8 => int(1, false),
        DataType::UInt16 => int(2, false),
        DataType::UInt32 => int(4, false),
        DataType::UInt64 => int(8, false),
        DataType::Float16 => float(2),
        DataType::Float32 => float(4),
        DataType::Float64 => float(8),
        DataType::Boolean if nulls => return Err(object_refusal(label, "mixed")),
        DataType::Boolean => Elem {
            enc: Enc::Bool,
            ..plain(
                H5Type::Bitfield {
                    size: 1,
                    precision: 8,
                    order: ByteOrder::Little,
                },
                "bool",
                "bool",
                1,
                None,
            )
        },
        DataType::Timestamp(unit, tz) => {
            let dtype = format!("datetime64[{}]", unit_name(unit));
            let mut e = plain(le_int(8, true), &dtype, &dtype, 8, nat);
            if let Some(tz) = tz {
                e.info.push((Value::Str("tz".into()), tz_value(tz)?));
                e.consolidates = false;
            }
            e
        }
        DataType::Duration(unit) => {
            let dtype = format!("timedelta64[{}]", unit_name(unit));
            plain(le_int(8, true), &dtype, &dtype, 8, nat)
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => text_elem(stats, false),
        // pandas' object column of missing values (pd.read_parquet of Arrow null): to_hdf
        // fills it with the sentinel and stores it as text, in an object block (no `_meta`).
        DataType::Null => text_elem(stats, true),
        // pd.read_parquet gives the values of a dictionary column of numbers or times (pyarrow
        // keeps only dictionaries of strings as categoricals).
        DataType::Dictionary(_, values) if !is_text(values) => {
            // `stats` are the decoded values' (ColumnStats::add).
            let inner = plan_column_of(label, values, meta.filter(|m| !m.is_masked()), stats)?;
            Elem {
                enc: Enc::Decoded(Box::new(inner.enc.clone())),
                ..inner
            }
        }
        DataType::Dictionary(_, values) => {
            let categories = stats.shared_categories(label)?;
            let n = categories.len();
            if categories.null_count() > 0 {
                return Err(Error::unsupported(format!(
                    "column {label:?}: a categorical with a missing category"
                )));
            }
            // Checks the categories can be stored (their own column of the meta table).
            plan_column(label, values, None, &[categories.as_ref()])?;
            // pandas' coerce_indexer_dtype.
            let size = if n < 1 << 7 {
                1
            } else if n < 1 << 15 {
                2
            } else if n < 1 << 31 {
                4
            } else {
                8
            };
            let ordered = meta
                .and_then(ColumnMeta::categorical)
                .map(|(_, o)| o)
                .unwrap_or(false);
            Elem {
                ty: le_int(size, true),
                dtype: format!("int{}", size * 8),
                index_kind: "integer".into(),
                meta: Some("category"),
                info: vec![(Value::Str("ordered".into()), Value::Bool(ordered))],
                enc: Enc::Codes { size },
                categories: Some(categories),
                consolidates: false,
            }
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            return Err(object_refusal(label, "bytes"))
        }
        DataType::Date32 => Elem {
            // Only the fixed format stores dates (a pickled object array of datetime.date);
            // the table writer refuses `Enc::Dates` with pandas' reason.
            enc: Enc::Dates,
            consolidates: false,
            ..plain(le_int(4, true), "object", "date", 4, None)
        },
        DataType::Date64 => {
            return Err(Error::unsupported(format!(
                "column {label:?}: date64 values (pandas reads dates from Parquet as date32)"
            )))
        }
        other => {
            return Err(Error::unsupported(format!(
                "pandas cannot store column {label:?} ({other}) in the table format: an object \
                 column of [mixed] values"
            )))
        }
    })
}

/// The storage of a text column: a `str` column (its own block, `_meta` `str`), or an object
/// column of text (`object`: blocks of objects consolidate, no `_meta`).
fn text_elem(stats: &ColumnStats, object: bool) -> Elem {
    let mut itemsize = stats.max_len.max(1);
    // The column's own sentinel for its missing values, only when it has some.
    let nan_rep = stats.nulls.then(|| stats.choose_sentinel(&HashSet::new()));
    if let Some(n) = &nan_rep {
        itemsize = itemsize.max(n.len());
    }
    Elem {
        ty: string_type(itemsize),
        dtype: format!("bytes{}", itemsize * 8),
        index_kind: "string".into(),
        meta: (!object).then_some("str"),
        info: Vec::new(),
        enc: Enc::Str { itemsize, nan_rep },
        categories: None,
        consolidates: object,
    }
}

/// A time zone as pandas keeps it in `info`: an IANA name as text, UTC and fixed offsets as
/// the pickled `datetime.timezone` pandas gives.
pub(crate) fn tz_value(tz: &str) -> Result<Value> {
    let global = |module: &str, name: &str| Value::Global {
        module: module.into(),
        name: name.into(),
    };
    let offset = if tz == "UTC" || tz == "utc" {
        Some(0)
    } else {
        parse_offset(tz)
    };
    let Some(seconds) = offset else {
        return Ok(Value::Str(tz.to_string()));
    };
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    let delta = Value::Reduce {
        callable: Box::new(global("datetime", "timedelta")),
        args: Box::new(Value::Tuple(vec![
            Value::Int(days),
            Value::Int(secs),
            Value::Int(0),
        ])),
    };
    Ok(Value::Reduce {
        callable: Box::new(global("datetime", "timezone")),
        args: Box::new(Value::Tuple(vec![delta])),
    })
}

/// `+01:00` / `-05:30` → seconds east of UTC.
fn parse_offset(tz: &str) -> Option<i64> {
    let (sign, rest) = match tz.as_bytes().first()? {
        b'+' => (1, &tz[1..]),
        b'-' => (-1, &tz[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
    let h: i64 = h.parse().ok()?;
    let m: i64 = m.parse().ok()?;
    Some(sign * (h * 3600 + m * 60))
}

/// Refuses missing values in an encoding without a mark for them (integers, booleans): the
/// plan chose it because the first pass found none (or a Parquet footer counted none), and
/// writing the arrays' placeholder values would change them silently.
fn check_no_missing(enc: &Enc, a: &dyn Array) -> Result<()> {
    let unmarked = matches!(enc, Enc::Copy { null: None, .. } | Enc::Bool);
    if unmarked && a.null_count() > 0 {
        return Err(Error::mismatch(format!(
            "{} missing values in a {} column planned without any (the first pass, or the \
             Parquet footer's statistics, counted none)",
            a.null_count(),
            a.data_type()
        )));
    }
    Ok(())
}

/// Writes rows `[from, from + n)` of `a` (encoded as `enc`) into `out`: row `i` at
/// `out[i * stride + at ..]`.
pub(crate) fn encode(
    enc: &Enc,
    a: &dyn Array,
    from: usize,
    n: usize,
    out: &mut [u8],
    stride: usize,
    at: usize,
) -> Result<()> {
    if let Enc::Decoded(inner) = enc {
        let values = decode_dictionary(a.slice(from, n).as_ref())?;
        return encode(inner, values.as_ref(), 0, n, out, stride, at);
    }
    let a = a.slice(from, n);
    let a = a.as_ref();
    check_no_missing(enc, a)?;
    macro_rules! prim {
        ($t:ty) => {{
            let p = a.as_primitive::<$t>();
            for (i, v) in p.values().iter().enumerate() {
                let b = v.to_le_bytes();
                out[i * stride + at..i * stride + at + b.len()].copy_from_slice(&b);
            }
            p.nulls()
        }};
    }
    match enc {
        Enc::Copy { size, null } => {
            let nulls = match a.data_type() {
                DataType::Int8 => prim!(Int8Type),
                DataType::Int16 => prim!(Int16Type),
                DataType::Int32 => prim!(Int32Type),
                DataType::Int64 => prim!(Int64Type),
                DataType::Timestamp(TimeUnit::Second, _) => prim!(TimestampSecondType),
                DataType::Timestamp(TimeUnit::Millisecond, _) => prim!(TimestampMillisecondType),
                DataType::Timestamp(TimeUnit::Microsecond, _) => prim!(TimestampMicrosecondType),
                DataType::Timestamp(TimeUnit::Nanosecond, _) => prim!(TimestampNanosecondType),
                DataType::Duration(TimeUnit::Second) => prim!(DurationSecondType),
                DataType::Duration(TimeUnit::Millisecond) => prim!(DurationMillisecondType),
                DataType::Duration(TimeUnit::Microsecond) => prim!(DurationMicrosecondType),
                DataType::Duration(TimeUnit::Nanosecond) => prim!(DurationNanosecondType),
                DataType::UInt8 => prim!(UInt8Type),
                DataType::UInt16 => prim!(UInt16Type),
                DataType::UInt32 => prim!(UInt32Type),
                DataType::UInt64 => prim!(UInt64Type),
                DataType::Float16 => prim!(Float16Type),
                DataType::Float32 => prim!(Float32Type),
                DataType::Float64 => prim!(Float64Type),
                other => return Err(Error::mismatch(format!("{other} values to copy"))),
            };
            if let (Some(nulls), Some(null)) = (nulls, null) {
                for i in nulls.iter().enumerate().filter(|(_, v)| !v).map(|(i, _)| i) {
                    out[i * stride + at..i * stride + at + size].copy_from_slice(null);
                }
            }
        }
        Enc::IntAsF64 => {
            let f = arrow_cast_f64(a)?;
            for (i, v) in f.iter().enumerate() {
                out[i * stride + at..i * stride + at + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
        Enc::Bool => {
            let b = a.as_boolean();
            for i in 0..n {
                out[i * stride + at] = u8::from(b.value(i));
            }
        }
        Enc::Str { itemsize, nan_rep } => {
            let missing = nan_rep.as_deref().unwrap_or(NAN_REP);
            let mut put = |i: usize, v: Option<&str>| {
                let cell = &mut out[i * stride + at..i * stride + at + itemsize];
                let bytes = v.unwrap_or(missing).as_bytes();
                let k = bytes.len().min(*itemsize);
                cell[..k].copy_from_slice(&bytes[..k]);
                cell[k..].fill(0);
            };
            match a.data_type() {
                DataType::Utf8 => a
                    .as_string::<i32>()
                    .iter()
                    .enumerate()
                    .for_each(|(i, v)| put(i, v)),
                DataType::LargeUtf8 => a
                    .as_string::<i64>()
                    .iter()
                    .enumerate()
                    .for_each(|(i, v)| put(i, v)),
                DataType::Utf8View => a
                    .as_string_view()
                    .iter()
                    .enumerate()
                    .for_each(|(i, v)| put(i, v)),
                DataType::Null => (0..n).for_each(|i| put(i, None)),
                other => return Err(Error::mismatch(format!("{other} values as strings"))),
            }
        }
        Enc::Codes { size } => {
            let d = a
                .as_any_dictionary_opt()
                .ok_or_else(|| Error::mismatch("categorical codes of a non-dictionary"))?;
            let keys = d.normalized_keys();
            let valid = a.logical_nulls();
            for (i, k) in keys.iter().enumerate() {
                let code = if valid.as_ref().is_some_and(|v| v.is_null(i)) {
                    -1i64
                } else {
                    *k as i64
                };
                out[i * stride + at..i * stride + at + size]
                    .copy_from_slice(&code.to_le_bytes()[..*size]);
            }
        }
        Enc::Decoded(_) => {}
        Enc::Dates => return Err(Error::mismatch("dates are stored as objects")),
    }
    Ok(())
}

fn arrow_cast_f64(a: &dyn Array) -> Result<Vec<f64>> {
    macro_rules! conv {
        ($t:ty) => {
            a.as_primitive::<$t>()
                .iter()
                .map(|v| v.map_or(f64::NAN, |x| x as f64))
                .collect()
        };
    }
    Ok(match a.data_type() {
        DataType::Int8 => conv!(Int8Type),
        DataType::Int16 => conv!(Int16Type),
        DataType::Int32 => conv!(Int32Type),
        DataType::Int64 => conv!(Int64Type),
        DataType::UInt8 => conv!(UInt8Type),
        DataType::UInt16 => conv!(UInt16Type),
        DataType::UInt32 => conv!(UInt32Type),
        DataType::UInt64 => conv!(UInt64Type),
        other => return Err(Error::mismatch(format!("{other} values as float64"))),
    })
}

#[cfg(test)]
mod tests {
    use super::{encode, Enc};
    use arrow_array::{BooleanArray, Int64Array};

    #[test]
    fn missing_values_without_a_mark_are_refused_not_written() {
        let mut out = vec![0u8; 16];
        let ints = Int64Array::from(vec![Some(1), None]);
        let copy = Enc::Copy {
            size: 8,
            null: None,
        };
        let e = encode(&copy, &ints, 0, 2, &mut out, 8, 0).unwrap_err();
        assert!(e.to_string().contains("1 missing values"), "{e}");
        let bools = BooleanArray::from(vec![Some(true), None]);
        assert!(encode(&Enc::Bool, &bools, 0, 2, &mut out, 1, 0).is_err());
        // Without missing values, written.
        let ints = Int64Array::from(vec![1, 2]);
        encode(&copy, &ints, 0, 2, &mut out, 8, 0).unwrap();
        assert_eq!(out[8], 2);
    }
}
