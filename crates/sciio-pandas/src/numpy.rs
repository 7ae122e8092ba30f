//! Conversions between Arrow columns and sciio-core's [`NdArray`]: a frame's columns to numpy
//! arrays (`x.parquet → y.npz`) and a structured (record) array to a [`Frame`].
//!
//! What numpy represents is converted; the rest is refused with an error naming the column:
//!
//! | Arrow                          | numpy                                             |
//! |--------------------------------|---------------------------------------------------|
//! | bool (no nulls)                | `bool`                                            |
//! | int / uint                     | same width; with nulls `float64` with NaN, as pandas |
//! | float16/32/64                  | same, nulls as NaN                                |
//! | timestamp (any zone), date     | `datetime64[unit]` (UTC values), `datetime64[D]`, nulls NaT |
//! | duration                       | `timedelta64[unit]`, nulls NaT                    |
//! | string / binary                | `<U{max}` / `S{max}`; with missing values refused |
//! | fixed-size binary (n bytes)    | `S{n}`                                             |
//! | dictionary (categorical)       | its decoded values                                |
//! | struct                         | a packed structured array (nested records)        |
//!
//! [`array_to_masked_ndarray`] converts nullable integer, boolean and fixed-size binary
//! columns (pandas' `Int64`, `boolean`...), categoricals of those, and struct columns with
//! missing values losslessly instead: the values (missing ones as 0, `False`, zero bytes, NaN)
//! and a `bool` mask, true where a value is missing (numpy.ma's convention: for a struct, a
//! record array of `bool` with the struct's field names); a frame's conversions store the mask
//! as the array `NAME.mask` ([`MASK_SUFFIX`]).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Float16Array, Float32Array, Float64Array,
    Int16Array, Int32Array, Int64Array, Int8Array, PrimitiveArray, StringArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow_schema::{DataType, TimeUnit as ArrowUnit};

use crate::frame::Frame;
use sciio_core::{
    ByteOrder, DType, Error, Limits, NdArray, Order, Result, ScalarKind, ScalarType, TimeBase,
    TimeUnit,
};

const NAT: i64 = i64::MIN;

fn time_unit(u: &ArrowUnit) -> TimeUnit {
    TimeUnit::new(match u {
        ArrowUnit::Second => TimeBase::Seconds,
        ArrowUnit::Millisecond => TimeBase::Millis,
        ArrowUnit::Microsecond => TimeBase::Micros,
        ArrowUnit::Nanosecond => TimeBase::Nanos,
    })
}

fn le_array(kind: ScalarKind, bytes: Vec<u8>, rows: usize) -> Result<NdArray> {
    let order = match kind {
        ScalarKind::Bool | ScalarKind::Bytes(_) => ByteOrder::NotApplicable,
        _ => ByteOrder::Little,
    };
    NdArray::from_byte_vec(
        DType::Scalar(ScalarType::new(kind, order)),
        &[rows],
        Order::C,
        bytes,
    )
}

/// Little-endian bytes of a primitive column, nulls replaced by `null`.
fn primitive_bytes<T, const N: usize>(
    a: &PrimitiveArray<T>,
    null: T::Native,
    to_le: impl Fn(T::Native) -> [u8; N],
) -> Vec<u8>
where
    T: ArrowPrimitiveType,
{
    let mut out = Vec::with_capacity(a.len() * N);
    for i in 0..a.len() {
        let v = if a.is_null(i) { null } else { a.value(i) };
        out.extend_from_slice(&to_le(v));
    }
    out
}

fn ints_with_nulls_as_f64(a: &dyn Array) -> Result<NdArray> {
    let f = arrow_cast::cast(a, &DataType::Float64)
        .map_err(|e| Error::unsupported(format!("cannot convert to float64: {e}")))?;
    let f = f.as_primitive::<Float64Type>();
    le_array(
        ScalarKind::Float(8),
        primitive_bytes(f, f64::NAN, f64::to_le_bytes),
        f.len(),
    )
}

macro_rules! int_case {
    ($a:expr, $t:ty, $kind:expr) => {{
        if $a.null_count() > 0 {
            return ints_with_nulls_as_f64($a);
        }
        let p = $a.as_primitive::<$t>();
        le_array($kind, primitive_bytes(p, 0, |v| v.to_le_bytes()), p.len())
    }};
}

fn fixed_width_text(
    a: &dyn Array,
    limits: &Limits,
    what: &str,
    width_of: impl Fn(usize) -> Option<usize>,
) -> Result<NdArray> {
    match a.data_type() {
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let b = arrow_cast::cast(a, &DataType::Binary)
                .map_err(|e| Error::unsupported(e.to_string()))?;
            let b = b.as_binary::<i32>();
            let width = b
                .iter()
                .flatten()
                .map(<[u8]>::len)
                .max()
                .unwrap_or(0)
                .max(1);
            let total = width_of(width)
                .and_then(|w| w.checked_mul(b.len()))
                .ok_or_else(|| Error::unsupported(format!("{what} too large")))?;
            limits.check_alloc(total as u64, what)?;
            let mut out = vec![0u8; total];
            for (row, v) in b.iter().enumerate() {
                if let Some(v) = v {
                    out[row * width..row * width + v.len()].copy_from_slice(v);
                }
            }
            le_array(ScalarKind::Bytes(width), out, b.len())
        }
        _ => {
            let s = arrow_cast::cast(a, &DataType::Utf8)
                .map_err(|e| Error::unsupported(e.to_string()))?;
            let s = s.as_string::<i32>();
            let width = s
                .iter()
                .flatten()
                .map(|v| v.chars().count())
                .max()
                .unwrap_or(0)
                .max(1);
            let total = width_of(width)
                .and_then(|w| w.checked_mul(4))
                .and_then(|w| w.checked_mul(s.len()))
                .ok_or_else(|| Error::unsupported(format!("{what} too large")))?;
            limits.check_alloc(total as u64, what)?;
            let mut out = vec![0u8; total];
            for (row, v) in s.iter().enumerate() {
                let Some(v) = v else { continue };
                for (k, c) in v.chars().enumerate() {
                    let at = (row * width + k) * 4;
                    out[at..at + 4].copy_from_slice(&u32::from(c).to_le_bytes());
                }
            }
            le_array(ScalarKind::Unicode(width), out, s.len())
        }
    }
}

/// What is appended to a column's name to name its mask ([`array_to_masked_ndarray`]):
/// column `count` → arrays `count` and `count.mask`.
pub const MASK_SUFFIX: &str = ".mask";

/// The values of an integer column with missing values as 0.
macro_rules! int_values {
    ($a:expr, $t:ty, $kind:expr) => {{
        let p = $a.as_primitive::<$t>();
        le_array($kind, primitive_bytes(p, 0, |v| v.to_le_bytes()), p.len())
    }};
}

/// One Arrow column as a numpy array and, for an integer, boolean or fixed-size binary column
/// with missing values, its mask (`bool`, true where the value is missing; the values there
/// are 0, `False` or zero bytes): lossless where [`array_to_ndarray`] turns integers into
/// `float64` with NaN and refuses booleans. Other columns as [`array_to_ndarray`], no mask.
pub fn array_to_masked_ndarray(
    a: &dyn Array,
    limits: &Limits,
) -> Result<(NdArray, Option<NdArray>)> {
    // A categorical is its decoded values: integer or boolean categories with missing values
    // get a mask like any nullable column (not floats with NaN).
    if let DataType::Dictionary(_, values) = a.data_type() {
        if a.null_count() > 0 {
            let decoded = arrow_cast::cast(a, values)
                .map_err(|e| Error::unsupported(format!("decoding categories: {e}")))?;
            return array_to_masked_ndarray(decoded.as_ref(), limits);
        }
    }
    if let DataType::Struct(_) = a.data_type() {
        if has_missing(a) {
            let (values, mask) = masked_struct(a, &vec![false; a.len()], limits)?;
            return Ok((values, Some(mask)));
        }
    }
    let rows = a.len();
    let maskable = a.data_type().is_integer()
        || matches!(
            a.data_type(),
            DataType::Boolean | DataType::FixedSizeBinary(_)
        );
    if !maskable || a.null_count() == 0 {
        return Ok((array_to_ndarray(a, limits)?, None));
    }
    let mask = le_array(
        ScalarKind::Bool,
        (0..rows).map(|i| u8::from(a.is_null(i))).collect(),
        rows,
    )?;
    let values = match a.data_type() {
        DataType::Boolean => {
            let b = a.as_boolean();
            le_array(
                ScalarKind::Bool,
                (0..rows)
                    .map(|i| u8::from(b.is_valid(i) && b.value(i)))
                    .collect(),
                rows,
            )?
        }
        DataType::Int8 => int_values!(a, Int8Type, ScalarKind::Int(1))?,
        DataType::Int16 => int_values!(a, Int16Type, ScalarKind::Int(2))?,
        DataType::Int32 => int_values!(a, Int32Type, ScalarKind::Int(4))?,
        DataType::Int64 => int_values!(a, Int64Type, ScalarKind::Int(8))?,
        DataType::UInt8 => int_values!(a, UInt8Type, ScalarKind::UInt(1))?,
        DataType::UInt16 => int_values!(a, UInt16Type, ScalarKind::UInt(2))?,
        DataType::UInt32 => int_values!(a, UInt32Type, ScalarKind::UInt(4))?,
        DataType::UInt64 => int_values!(a, UInt64Type, ScalarKind::UInt(8))?,
        _ => fixed_size_binary(a, limits)?,
    };
    Ok((values, Some(mask)))
}

/// Whether `a` or, for a struct, any of its fields (at any depth) has a missing value.
fn has_missing(a: &dyn Array) -> bool {
    a.null_count() > 0
        || matches!(a.data_type(), DataType::Struct(_))
            && a.as_struct()
                .columns()
                .iter()
                .any(|c| has_missing(c.as_ref()))
}

/// A struct column with missing values (its own or its fields'), as numpy.ma holds a
/// structured array: the record array of the fields' values (missing ones as 0, `False`, NaN,
/// zero bytes) and a mask record array with the same field names, `bool` throughout, true
/// where a field's value is missing; a missing struct masks all its fields. `outer` marks the
/// rows missing in an enclosing struct.
fn masked_struct(a: &dyn Array, outer: &[bool], limits: &Limits) -> Result<(NdArray, NdArray)> {
    let DataType::Struct(fields) = a.data_type() else {
        return Err(Error::mismatch("not a struct column"));
    };
    let s = a.as_struct();
    let rows = s.len();
    let missing: Vec<bool> = (0..rows)
        .map(|i| outer.get(i).copied().unwrap_or(false) || s.is_null(i))
        .collect();
    let mut values = Vec::with_capacity(fields.len());
    let mut masks = Vec::with_capacity(fields.len());
    for (child, field) in s.columns().iter().zip(fields) {
        let name = field.name().clone();
        let (v, m) = if let DataType::Struct(_) = child.data_type() {
            masked_struct(child.as_ref(), &missing, limits).map_err(|e| in_field(&name, e))?
        } else {
            let (v, _) =
                array_to_masked_ndarray(child.as_ref(), limits).map_err(|e| in_field(&name, e))?;
            let m = (0..rows)
                .map(|i| u8::from(missing[i] || child.is_null(i)))
                .collect();
            (v, le_array(ScalarKind::Bool, m, rows)?)
        };
        values.push((name.clone(), v));
        masks.push((name, m));
    }
    Ok((
        record_array(values, rows, limits)?,
        record_array(masks, rows, limits)?,
    ))
}

/// A fixed-size binary column as `S{n}` (missing values as zero bytes).
fn fixed_size_binary(a: &dyn Array, limits: &Limits) -> Result<NdArray> {
    let b = a.as_fixed_size_binary();
    let width = usize::try_from(b.value_length()).unwrap_or(0);
    let item = width.max(1);
    let total = item
        .checked_mul(b.len())
        .ok_or_else(|| Error::unsupported("fixed-size binary column too large"))?;
    limits.check_alloc(total as u64, "fixed-size bytes array")?;
    let mut out = vec![0u8; total];
    for row in 0..b.len() {
        if b.is_valid(row) {
            if let Some(dst) = out.get_mut(row * item..row * item + width) {
                dst.copy_from_slice(b.value(row));
            }
        }
    }
    le_array(ScalarKind::Bytes(item), out, b.len())
}

/// One Arrow column as a 1-d numpy array (see the module table); `limits` bounds the buffers
/// of fixed-width string arrays, whose size depends on the longest value.
pub fn array_to_ndarray(a: &dyn Array, limits: &Limits) -> Result<NdArray> {
    let rows = a.len();
    match a.data_type() {
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
            if a.null_count() > 0 =>
        {
            Err(Error::unsupported(format!(
                "{} of its {rows} values are missing, which numpy's fixed-width strings cannot \
                 hold (pandas holds them as objects)",
                a.null_count()
            )))
        }
        DataType::FixedSizeBinary(_) if a.null_count() > 0 => Err(Error::unsupported(
            "fixed-size binary values are missing; numpy's S cannot hold a missing value",
        )),
        DataType::FixedSizeBinary(_) => fixed_size_binary(a, limits),
        DataType::Boolean => {
            if a.null_count() > 0 {
                return Err(Error::unsupported(
                    "a boolean column with missing values has no numpy dtype (pandas uses object)",
                ));
            }
            let b = a.as_boolean();
            le_array(
                ScalarKind::Bool,
                b.values().iter().map(u8::from).collect(),
                rows,
            )
        }
        DataType::Int8 => int_case!(a, Int8Type, ScalarKind::Int(1)),
        DataType::Int16 => int_case!(a, Int16Type, ScalarKind::Int(2)),
        DataType::Int32 => int_case!(a, Int32Type, ScalarKind::Int(4)),
        DataType::Int64 => int_case!(a, Int64Type, ScalarKind::Int(8)),
        DataType::UInt8 => int_case!(a, UInt8Type, ScalarKind::UInt(1)),
        DataType::UInt16 => int_case!(a, UInt16Type, ScalarKind::UInt(2)),
        DataType::UInt32 => int_case!(a, UInt32Type, ScalarKind::UInt(4)),
        DataType::UInt64 => int_case!(a, UInt64Type, ScalarKind::UInt(8)),
        DataType::Float16 => {
            let p = a.as_primitive::<Float16Type>();
            let nan = sciio_core::half::f16::NAN;
            le_array(
                ScalarKind::Float(2),
                primitive_bytes(p, nan, |v| v.to_le_bytes()),
                rows,
            )
        }
        DataType::Float32 => {
            let p = a.as_primitive::<Float32Type>();
            le_array(
                ScalarKind::Float(4),
                primitive_bytes(p, f32::NAN, f32::to_le_bytes),
                rows,
            )
        }
        DataType::Float64 => {
            let p = a.as_primitive::<Float64Type>();
            le_array(
                ScalarKind::Float(8),
                primitive_bytes(p, f64::NAN, f64::to_le_bytes),
                rows,
            )
        }
        DataType::Timestamp(u, _) => {
            let v = arrow_cast::cast(a, &DataType::Int64)
                .map_err(|e| Error::unsupported(e.to_string()))?;
            let p = v.as_primitive::<Int64Type>();
            le_array(
                ScalarKind::DateTime(time_unit(u)),
                primitive_bytes(p, NAT, i64::to_le_bytes),
                rows,
            )
        }
        DataType::Duration(u) => {
            let v = arrow_cast::cast(a, &DataType::Int64)
                .map_err(|e| Error::unsupported(e.to_string()))?;
            let p = v.as_primitive::<Int64Type>();
            le_array(
                ScalarKind::TimeDelta(time_unit(u)),
                primitive_bytes(p, NAT, i64::to_le_bytes),
                rows,
            )
        }
        DataType::Date32 => {
            let p = a.as_primitive::<Date32Type>();
            le_array(
                ScalarKind::DateTime(TimeUnit::new(TimeBase::Days)),
                primitive_bytes(p, i32::MIN, |v| {
                    if v == i32::MIN { NAT } else { i64::from(v) }.to_le_bytes()
                }),
                rows,
            )
        }
        DataType::Date64 => {
            let p = a.as_primitive::<Date64Type>();
            le_array(
                ScalarKind::DateTime(TimeUnit::new(TimeBase::Millis)),
                primitive_bytes(p, NAT, i64::to_le_bytes),
                rows,
            )
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            fixed_width_text(a, limits, "fixed-width unicode array", Some)
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            fixed_width_text(a, limits, "fixed-width bytes array", Some)
        }
        DataType::Dictionary(_, values) => {
            let decoded = arrow_cast::cast(a, values)
                .map_err(|e| Error::unsupported(format!("decoding categories: {e}")))?;
            array_to_ndarray(decoded.as_ref(), limits)
        }
        DataType::Struct(fields) => {
            let children = a
                .as_struct()
                .columns()
                .iter()
                .zip(fields)
                .map(|(c, f)| {
                    array_to_ndarray(c.as_ref(), limits)
                        .map(|n| (f.name().clone(), n))
                        .map_err(|e| in_field(f.name(), e))
                })
                .collect::<Result<Vec<_>>>()?;
            record_array(children, rows, limits)
        }
        other => Err(Error::unsupported(format!(
            "{} values have no numpy equivalent",
            crate::schema::arrow_type_text(other)
        ))),
    }
}

/// A packed structured array of the 1-d arrays `fields` (a struct column as nested records).
fn record_array(fields: Vec<(String, NdArray)>, rows: usize, limits: &Limits) -> Result<NdArray> {
    let record = sciio_core::RecordType::packed(
        fields
            .iter()
            .map(|(name, a)| (name.clone(), a.dtype().clone())),
    );
    let total = record
        .itemsize
        .checked_mul(rows)
        .ok_or_else(|| Error::unsupported("struct column too large"))?;
    limits.check_alloc(total as u64, "struct column")?;
    let mut out = Vec::with_capacity(total);
    for row in 0..rows {
        for (name, a) in &fields {
            let width = a.dtype().itemsize();
            let cell = a
                .as_bytes()
                .get(row * width..(row + 1) * width)
                .ok_or_else(|| {
                    in_field(name, Error::format("struct field shorter than its column"))
                })?;
            out.extend_from_slice(cell);
        }
    }
    NdArray::from_byte_vec(DType::Record(record), &[rows], Order::C, out)
}

impl Frame {
    /// The index levels and data columns as numpy arrays, with their names (what
    /// `x.parquet → y.npz` stores): [`Frame::column_arrays`] through [`array_to_ndarray`].
    /// Errors name the column that numpy cannot represent.
    pub fn to_ndarrays(&self, limits: &Limits) -> Result<Vec<(String, NdArray)>> {
        self.column_arrays()?
            .into_iter()
            .map(|(name, a)| {
                array_to_ndarray(a.as_ref(), limits)
                    .map(|n| (name.clone(), n))
                    .map_err(|e| e.with_node(name))
            })
            .collect()
    }

    /// A frame from a 1-d structured (record) array: one column per field, nested records
    /// flattened to `a.b` labels, a default RangeIndex. Scalar fields of numpy kinds bool,
    /// int, uint, float, `datetime64`/`timedelta64` in s/ms/us/ns, `S` and `U` are converted,
    /// and subarray fields of those become fixed-size list columns (one list level per
    /// dimension); others (complex, void, object, other time units, subarrays of records) are
    /// refused naming the field. [`Frame::from_structured_with`] makes struct columns of nested
    /// records instead.
    pub fn from_structured(array: &NdArray) -> Result<Frame> {
        Self::from_structured_with(array, NestedFields::DottedNames)
    }

    /// Like [`Frame::from_structured`], but fields that have no column equivalent
    /// ([`Unsupported`](sciio_core::ErrorKind::Unsupported) errors) are left out of the frame
    /// and returned, each with its label and the reason, instead of failing the whole frame.
    ///
    /// ```
    /// use sciio_core::{ByteOrder, DType, NdArray, Order, RecordType, ScalarKind, ScalarType};
    /// let scalar = |k| DType::Scalar(ScalarType::new(k, ByteOrder::Little));
    /// let record = RecordType::packed([
    ///     ("n".to_string(), scalar(ScalarKind::Int(4))),
    ///     ("z".to_string(), scalar(ScalarKind::Complex(16))),
    /// ]);
    /// let array = NdArray::from_bytes(DType::Record(record), &[1], Order::C, &[0u8; 20])?;
    /// let (frame, left_out) = sciio_pandas::Frame::from_structured_partial(&array)?;
    /// assert!(frame.column("n").is_ok() && frame.column("z").is_err());
    /// assert_eq!(left_out[0].0, "z");
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn from_structured_partial(array: &NdArray) -> Result<(Frame, Vec<(String, Error)>)> {
        let (record, records) = records_of(array)?;
        Self::from_records(record, &records)
    }

    /// [`Frame::from_structured_partial`] of the records in `bytes` (whole records of the
    /// record type `dtype`, as a 1-d structured array holds them), read where they are: a
    /// stream of batches of rows makes its frames without copying each batch into an array.
    ///
    /// ```
    /// use sciio_core::{ByteOrder, DType, RecordType, ScalarKind, ScalarType};
    /// let scalar = |k| DType::Scalar(ScalarType::new(k, ByteOrder::Little));
    /// let record = DType::Record(RecordType::packed([("n".to_string(), scalar(ScalarKind::Int(2)))]));
    /// let (frame, _) = sciio_pandas::Frame::from_record_bytes_partial(&record, &[1, 0, 2, 0])?;
    /// assert_eq!(frame.num_rows(), 2);
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn from_record_bytes_partial(
        dtype: &DType,
        bytes: &[u8],
    ) -> Result<(Frame, Vec<(String, Error)>)> {
        let DType::Record(record) = dtype else {
            return Err(Error::invalid_input(format!(
                "a frame needs a structured array, not {dtype}"
            )));
        };
        let itemsize = record.itemsize;
        if itemsize == 0 || !bytes.len().is_multiple_of(itemsize) {
            return Err(Error::invalid_input(format!(
                "{} bytes are no whole number of {itemsize}-byte records",
                bytes.len()
            )));
        }
        let records = Records {
            bytes,
            rows: bytes.len() / itemsize,
            itemsize,
        };
        Self::from_records(record, &records)
    }

    /// The frame of `records`, one column per leaf field of `record`; fields without a column
    /// equivalent left out with their reason.
    fn from_records(
        record: &sciio_core::RecordType,
        records: &Records<'_>,
    ) -> Result<(Frame, Vec<(String, Error)>)> {
        let mut leaves = Vec::new();
        flatten(record, "", 0, &mut leaves)?;
        let mut builder = Frame::builder();
        let mut left_out = Vec::new();
        for (name, offset, dtype) in leaves {
            match records.leaf_column(&dtype, offset) {
                Ok(col) => builder = builder.column(name, col),
                Err(e) if e.kind() == sciio_core::ErrorKind::Unsupported => {
                    left_out.push((name, e))
                }
                Err(e) => return Err(in_field(&name, e)),
            }
        }
        Ok((builder.build()?, left_out))
    }

    /// A frame of one column from an n-d array (at least 1-d): one row per index of the first
    /// axis, each cell the rest of the array as a fixed-size list (one list level per further
    /// dimension), which pyarrow reads back with the same shape.
    ///
    /// ```
    /// use sciio_core::NdArray;
    /// let array = NdArray::from_vec((0..6).map(f64::from).collect::<Vec<_>>(), &[2, 3])?;
    /// let frame = sciio_pandas::Frame::from_ndarray("x", &array)?;
    /// assert_eq!(frame.num_rows(), 2);
    /// assert!(matches!(
    ///     frame.column("x")?.data_type(),
    ///     sciio_pandas::arrow_schema::DataType::FixedSizeList(_, 3)
    /// ));
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn from_ndarray(label: &str, array: &NdArray) -> Result<Frame> {
        let DType::Scalar(scalar) = array.dtype() else {
            return Err(Error::unsupported(format!(
                "a {} array is not one column; a structured array makes one column per field",
                array.dtype()
            )));
        };
        let Some((&rows, cell)) = array.shape().split_first() else {
            return Err(Error::unsupported("a 0-d array has no rows"));
        };
        let array = array.to_order(Order::C);
        let bytes = array.as_bytes();
        let width = scalar.kind.itemsize();
        let col = list_column(scalar, rows, cell, |i| &bytes[i * width..(i + 1) * width])?;
        Frame::builder().column(label, col).build()
    }

    /// A frame of one list column from rows of variable length (a PyTables VLArray read
    /// row by row): row `i` is the list of `rows[i]`'s values, rows of shape `[n, a, b]`
    /// lists of `n` fixed-size lists of shape `[a, b]` (pyarrow reads them back as the same
    /// nested lists). Every row must have the same scalar dtype and the same shape past its
    /// first axis; there must be at least one row (it gives the column's type).
    ///
    /// ```
    /// use sciio_core::NdArray;
    /// let rows = [NdArray::from_vec(vec![1i32, 2, 3], &[3])?, NdArray::from_vec(Vec::<i32>::new(), &[0])?];
    /// let frame = sciio_pandas::Frame::from_rows("vl", &rows)?;
    /// assert_eq!(frame.num_rows(), 2);
    /// assert!(matches!(frame.column("vl")?.data_type(), sciio_pandas::arrow_schema::DataType::List(_)));
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn from_rows(label: &str, rows: &[NdArray]) -> Result<Frame> {
        Frame::from_typed_rows(label, rows, None)
    }

    /// [`Frame::from_rows`] where `typed` (a row of no items, as the source's type
    /// describes its rows) gives the column its type when `rows` is empty: a VLArray with no
    /// row still becomes a list column of its atom's type, with no row.
    ///
    /// ```
    /// use sciio_core::NdArray;
    /// let typed = NdArray::from_vec(Vec::<f32>::new(), &[0])?;
    /// let frame = sciio_pandas::Frame::from_typed_rows("vl", &[], Some(&typed))?;
    /// assert_eq!(frame.num_rows(), 0);
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn from_typed_rows(
        label: &str,
        rows: &[NdArray],
        typed: Option<&NdArray>,
    ) -> Result<Frame> {
        let first = rows
            .first()
            .or(typed)
            .ok_or_else(|| Error::unsupported("no rows to give a list column its type"))?;
        let DType::Scalar(scalar) = first.dtype() else {
            return Err(Error::unsupported(format!(
                "rows of {} have no list column equivalent",
                first.dtype()
            )));
        };
        let cell = first.shape().get(1..).unwrap_or(&[]).to_vec();
        let per_item = cell
            .iter()
            .try_fold(1usize, |acc, d| acc.checked_mul(*d))
            .ok_or_else(|| Error::unsupported("rows too large"))?;
        let mut bytes = Vec::new();
        let mut offsets = vec![0i32];
        let mut items = 0usize;
        for (i, row) in rows.iter().enumerate() {
            if row.dtype() != first.dtype()
                || row.shape().is_empty()
                || row.shape().get(1..) != Some(cell.as_slice())
            {
                return Err(Error::unsupported(format!(
                    "row {i} ({} of shape {:?}) differs from row 0 ({} of shape {:?}) past its \
                     length; a list column needs one item type",
                    row.dtype(),
                    row.shape(),
                    first.dtype(),
                    first.shape()
                )));
            }
            let n = row.shape().first().copied().unwrap_or(0);
            items = items
                .checked_add(n)
                .ok_or_else(|| Error::unsupported("rows too large"))?;
            let end = i32::try_from(items)
                .map_err(|_| Error::unsupported("more than 2**31 items in a list column"))?;
            offsets.push(end);
            bytes.extend_from_slice(row.to_order(Order::C).as_bytes());
        }
        let width = scalar.kind.itemsize();
        let need = items
            .checked_mul(per_item)
            .and_then(|n| n.checked_mul(width))
            .ok_or_else(|| Error::unsupported("rows too large"))?;
        if need != bytes.len() {
            return Err(Error::format("rows' bytes do not match their shapes"));
        }
        if per_item == 0 {
            return Err(Error::unsupported(format!(
                "rows of items of shape {cell:?} have no values"
            )));
        }
        let values = list_column(scalar, items, &cell, |i| &bytes[i * width..(i + 1) * width])?;
        let item = Arc::new(arrow_schema::Field::new(
            "item",
            values.data_type().clone(),
            true,
        ));
        let offsets = arrow_buffer::OffsetBuffer::new(arrow_buffer::ScalarBuffer::from(offsets));
        let column = arrow_array::ListArray::try_new(item, offsets, values, None)
            .map_err(|e| Error::format(e.to_string()))?;
        Frame::builder().column(label, Arc::new(column)).build()
    }

    /// A frame from a 1-d structured array, nested records as `nested` says.
    ///
    /// ```
    /// use sciio_core::{ByteOrder, DType, NdArray, Order, RecordType, ScalarKind, ScalarType};
    /// use sciio_pandas::{arrow_schema::DataType, Frame, NestedFields};
    ///
    /// let scalar = |k| DType::Scalar(ScalarType::new(k, ByteOrder::Little));
    /// let inner = RecordType::packed([("b".to_string(), scalar(ScalarKind::Int(4)))]);
    /// let outer = RecordType::packed([
    ///     ("a".to_string(), DType::Record(inner)),
    ///     ("n".to_string(), scalar(ScalarKind::Float(8))),
    /// ]);
    /// let bytes: Vec<u8> = [7i32.to_le_bytes().as_slice(), 1.5f64.to_le_bytes().as_slice()].concat();
    /// let array = NdArray::from_bytes(DType::Record(outer), &[1], Order::C, &bytes)?;
    /// let dotted = Frame::from_structured(&array)?;
    /// assert!(dotted.column("a.b").is_ok());
    /// let structs = Frame::from_structured_with(&array, NestedFields::Structs)?;
    /// assert!(matches!(structs.column("a")?.data_type(), DataType::Struct(f) if f[0].name() == "b"));
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn from_structured_with(array: &NdArray, nested: NestedFields) -> Result<Frame> {
        let (record, records) = records_of(array)?;
        let mut builder = Frame::builder();
        match nested {
            NestedFields::DottedNames => {
                let mut columns = Vec::new();
                flatten(record, "", 0, &mut columns)?;
                for (name, offset, dtype) in columns {
                    let col = records
                        .leaf_column(&dtype, offset)
                        .map_err(|e| in_field(&name, e))?;
                    builder = builder.column(name, col);
                }
            }
            NestedFields::Structs => {
                for (name, col) in records.columns(record, "", 0)? {
                    builder = builder.column(name, col);
                }
            }
        }
        builder.build()
    }
}

/// How nested record fields of a structured array become frame columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NestedFields {
    /// One column per scalar field, labelled `a.b` (the default).
    #[default]
    DottedNames,
    /// One Arrow struct column per top-level record field (Parquet struct columns; pandas
    /// reads them as dicts, pyarrow as structs).
    Structs,
}

/// The record type and the rows of a structured array (checked to be long enough).
fn records_of(array: &NdArray) -> Result<(&sciio_core::RecordType, Records<'_>)> {
    let DType::Record(record) = array.dtype() else {
        return Err(Error::invalid_input(format!(
            "a frame needs a structured array, not {}",
            array.dtype()
        )));
    };
    let rows = array.len();
    let bytes = array.as_bytes();
    let itemsize = record.itemsize;
    if bytes.len() < rows.saturating_mul(itemsize) {
        return Err(Error::truncated("structured array shorter than its shape"));
    }
    Ok((
        record,
        Records {
            bytes,
            rows,
            itemsize,
        },
    ))
}

/// An error about one field of a record: the field named in the message, so that the error's
/// location stays free for the node (the array) it belongs to.
fn in_field(name: &str, e: Error) -> Error {
    if e.location().node.is_some() {
        return e;
    }
    Error::new(e.kind(), format!("field '{name}': {}", e.message()))
}

/// A fixed-size list column of `rows` cells of shape `cell` (one list level per dimension;
/// no dimension: a plain column), element `i` of all cells in row-major order read by `at(i)`.
fn list_column<'a>(
    scalar: &ScalarType,
    rows: usize,
    cell: &[usize],
    at: impl Fn(usize) -> &'a [u8],
) -> Result<ArrayRef> {
    let per_row = cell
        .iter()
        .try_fold(1usize, |acc, d| acc.checked_mul(*d))
        .filter(|n| *n > 0)
        .ok_or_else(|| Error::unsupported(format!("cells of shape {cell:?} have no values")))?;
    let total = rows
        .checked_mul(per_row)
        .ok_or_else(|| Error::unsupported("list column too large"))?;
    fixed_size_lists(column_from_records(scalar, total, at)?, cell)
}

/// `span` bytes at `offset` of each of `rows` rows of `itemsize` bytes (`bytes` holds them
/// all: checked by [`records_of`]), one after the other in an Arrow buffer (aligned for any
/// native type), which is never zeroed first (it is all overwritten): spans of 1 to 16 bytes
/// (every numeric field) collected as words of their width, others (subarray fields) row by
/// row.
fn gather(
    bytes: &[u8],
    rows: usize,
    itemsize: usize,
    offset: usize,
    span: usize,
) -> arrow_buffer::Buffer {
    let records = || bytes.chunks_exact(itemsize.max(1)).take(rows);
    macro_rules! words {
        ($t:ty) => {{
            const N: usize = std::mem::size_of::<$t>();
            let words: Vec<$t> = records()
                .map(|row| {
                    let mut word = [0u8; N];
                    if let Some(src) = row.get(offset..offset + N) {
                        word.copy_from_slice(src);
                    }
                    <$t>::from_ne_bytes(word)
                })
                .collect();
            arrow_buffer::Buffer::from_vec(words)
        }};
    }
    match span {
        1 => words!(u8),
        2 => words!(u16),
        4 => words!(u32),
        8 => words!(u64),
        16 => words!(u128),
        _ => {
            let mut out = arrow_buffer::MutableBuffer::with_capacity(rows * span);
            for row in records() {
                match row.get(offset..offset + span) {
                    Some(src) => out.extend_from_slice(src),
                    None => out.extend_zeros(span),
                }
            }
            out.into()
        }
    }
}

/// `values` (every cell's values, row after row) as fixed-size lists of shape `cell`, one
/// list level per dimension.
fn fixed_size_lists(mut values: ArrayRef, cell: &[usize]) -> Result<ArrayRef> {
    for &dim in cell.iter().rev() {
        let size = i32::try_from(dim)
            .map_err(|_| Error::unsupported(format!("a list of {dim} values is too long")))?;
        let item = Arc::new(arrow_schema::Field::new(
            "item",
            values.data_type().clone(),
            true,
        ));
        values = Arc::new(
            arrow_array::FixedSizeListArray::try_new(item, size, values, None)
                .map_err(|e| Error::format(e.to_string()))?,
        );
    }
    Ok(values)
}

/// The rows of a structured array.
struct Records<'a> {
    bytes: &'a [u8],
    rows: usize,
    itemsize: usize,
}

impl Records<'_> {
    fn scalar_column(&self, scalar: &ScalarType, offset: usize) -> Result<ArrayRef> {
        if let Some(column) = self.native_column(scalar, offset, 1) {
            return Ok(column);
        }
        if let ScalarKind::Bytes(width) = scalar.kind {
            return self.bytes_column(offset, width);
        }
        let field_bytes = |row: usize| {
            let at = row * self.itemsize + offset;
            &self.bytes[at..at + scalar.kind.itemsize()]
        };
        column_from_records(scalar, self.rows, field_bytes)
    }

    /// An `S<width>` field at `offset` of every row as a binary column, each value without
    /// its trailing NUL bytes (as numpy reads it), built in one pass into two buffers.
    fn bytes_column(&self, offset: usize, width: usize) -> Result<ArrayRef> {
        let mut values: Vec<u8> = Vec::with_capacity(self.rows * width);
        let mut offsets: Vec<i32> = Vec::with_capacity(self.rows + 1);
        offsets.push(0);
        let too_long = || Error::unsupported("over 2 GiB of text in one column of one batch");
        for row in self
            .bytes
            .chunks_exact(self.itemsize.max(1))
            .take(self.rows)
        {
            let field = row.get(offset..offset + width).unwrap_or(&[]);
            let end = field.iter().rposition(|c| *c != 0).map_or(0, |p| p + 1);
            values.extend_from_slice(&field[..end]);
            offsets.push(i32::try_from(values.len()).map_err(|_| too_long())?);
        }
        let offsets = arrow_buffer::OffsetBuffer::new(offsets.into());
        let array = BinaryArray::try_new(offsets, values.into(), None)
            .map_err(|e| Error::format(e.to_string()))?;
        Ok(Arc::new(array))
    }

    /// The `per_row` consecutive numbers at `offset` of every row as one flat Arrow array, their
    /// bytes copied as they are, when they need no conversion: integers and floats stored in
    /// this machine's byte order. `None` for other types (converted value by value).
    fn native_column(
        &self,
        scalar: &ScalarType,
        offset: usize,
        per_row: usize,
    ) -> Option<ArrayRef> {
        let native = scalar.order == ByteOrder::NATIVE || scalar.order == ByteOrder::NotApplicable;
        if !native {
            return None;
        }
        let width = scalar.kind.itemsize();
        let span = width.checked_mul(per_row)?;
        if span == 0 || offset.checked_add(span)? > self.itemsize {
            return None;
        }
        let gathered = || gather(self.bytes, self.rows, self.itemsize, offset, span);
        fn typed<T: ArrowPrimitiveType>(buffer: arrow_buffer::Buffer) -> ArrayRef {
            Arc::new(PrimitiveArray::<T>::new(buffer.into(), None))
        }
        Some(match scalar.kind {
            ScalarKind::Int(1) => typed::<Int8Type>(gathered()),
            ScalarKind::Int(2) => typed::<Int16Type>(gathered()),
            ScalarKind::Int(4) => typed::<Int32Type>(gathered()),
            ScalarKind::Int(8) => typed::<Int64Type>(gathered()),
            ScalarKind::UInt(1) => typed::<UInt8Type>(gathered()),
            ScalarKind::UInt(2) => typed::<UInt16Type>(gathered()),
            ScalarKind::UInt(4) => typed::<UInt32Type>(gathered()),
            ScalarKind::UInt(8) => typed::<UInt64Type>(gathered()),
            ScalarKind::Float(2) => typed::<Float16Type>(gathered()),
            ScalarKind::Float(4) => typed::<Float32Type>(gathered()),
            ScalarKind::Float(8) => typed::<Float64Type>(gathered()),
            _ => return None,
        })
    }

    /// The column of a scalar or subarray field at `offset` in each row (a subarray as a
    /// fixed-size list column).
    fn leaf_column(&self, dtype: &DType, offset: usize) -> Result<ArrayRef> {
        match dtype {
            DType::Scalar(s) => self.scalar_column(s, offset),
            DType::SubArray(base, shape) => self.subarray_column(base, shape, offset),
            DType::Record(_) => Err(Error::unsupported("a record is not one column")),
        }
    }

    fn subarray_column(&self, base: &DType, shape: &[usize], offset: usize) -> Result<ArrayRef> {
        let DType::Scalar(scalar) = base else {
            return Err(Error::unsupported(
                "a subarray of records has no column equivalent in a DataFrame",
            ));
        };
        let width = scalar.kind.itemsize();
        let per_row = shape.iter().product::<usize>().max(1);
        let cells = shape.iter().try_fold(1usize, |acc, d| acc.checked_mul(*d));
        let fast = cells
            .filter(|&n| n > 0)
            .and_then(|n| self.native_column(scalar, offset, n));
        if let Some(values) = fast {
            return fixed_size_lists(values, shape);
        }
        list_column(scalar, self.rows, shape, |i| {
            let at = (i / per_row) * self.itemsize + offset + (i % per_row) * width;
            &self.bytes[at..at + width]
        })
    }

    /// The fields of `record` (at `base` in each row) as named columns, nested records as
    /// struct arrays.
    fn columns(
        &self,
        record: &sciio_core::RecordType,
        prefix: &str,
        base: usize,
    ) -> Result<Vec<(String, ArrayRef)>> {
        let mut out = Vec::new();
        for f in &record.fields {
            let path = format!("{prefix}{}", f.name);
            let offset = base + f.offset;
            if offset + f.dtype.itemsize() > record.itemsize + base {
                return Err(Error::format(format!(
                    "field {path} lies outside its record"
                )));
            }
            let col: ArrayRef = match &f.dtype {
                DType::Scalar(_) | DType::SubArray(..) => self
                    .leaf_column(&f.dtype, offset)
                    .map_err(|e| in_field(&path, e))?,
                DType::Record(r) => {
                    let children = self.columns(r, &format!("{path}."), offset)?;
                    let fields: Vec<arrow_schema::FieldRef> = children
                        .iter()
                        .map(|(n, a)| {
                            Arc::new(arrow_schema::Field::new(
                                n.rsplit('.').next().unwrap_or(n),
                                a.data_type().clone(),
                                true,
                            ))
                        })
                        .collect();
                    let arrays = children.into_iter().map(|(_, a)| a).collect();
                    Arc::new(
                        arrow_array::StructArray::try_new(fields.into(), arrays, None)
                            .map_err(|e| in_field(&path, Error::format(e.to_string())))?,
                    )
                }
            };
            out.push((path, col));
        }
        Ok(out)
    }
}

/// The scalar and subarray fields of `record` (nested records flattened to `a.b`), with their
/// offsets in a row.
fn flatten(
    record: &sciio_core::RecordType,
    prefix: &str,
    base: usize,
    out: &mut Vec<(String, usize, DType)>,
) -> Result<()> {
    for f in &record.fields {
        let name = format!("{prefix}{}", f.name);
        let offset = base + f.offset;
        if offset + f.dtype.itemsize() > record.itemsize + base {
            return Err(Error::format(format!(
                "field {name} lies outside its record"
            )));
        }
        match &f.dtype {
            DType::Record(r) => flatten(r, &format!("{name}."), offset, out)?,
            leaf => out.push((name, offset, leaf.clone())),
        }
    }
    Ok(())
}

fn word<const N: usize>(b: &[u8], order: ByteOrder) -> [u8; N] {
    let mut w = [0u8; N];
    w.copy_from_slice(&b[..N]);
    if order == ByteOrder::Big {
        w.reverse();
    }
    w
}

fn column_from_records<'a>(
    s: &ScalarType,
    rows: usize,
    at: impl Fn(usize) -> &'a [u8],
) -> Result<ArrayRef> {
    let o = s.order;
    macro_rules! prim {
        ($arr:ty, $t:ty, $n:expr) => {
            Arc::new(<$arr>::from_iter_values(
                (0..rows).map(|r| <$t>::from_le_bytes(word::<$n>(at(r), o))),
            )) as ArrayRef
        };
    }
    let time = |u: &TimeUnit| -> Result<ArrowUnit> {
        match (u.base, u.multiple) {
            (TimeBase::Seconds, 1) => Ok(ArrowUnit::Second),
            (TimeBase::Millis, 1) => Ok(ArrowUnit::Millisecond),
            (TimeBase::Micros, 1) => Ok(ArrowUnit::Microsecond),
            (TimeBase::Nanos, 1) => Ok(ArrowUnit::Nanosecond),
            _ => Err(Error::unsupported(format!(
                "time unit {} has no Arrow equivalent",
                u.suffix()
            ))),
        }
    };
    let i64s = || -> Vec<Option<i64>> {
        (0..rows)
            .map(|r| Some(i64::from_le_bytes(word::<8>(at(r), o))).filter(|v| *v != NAT))
            .collect()
    };
    Ok(match s.kind {
        ScalarKind::Bool => Arc::new(BooleanArray::from_iter(
            (0..rows).map(|r| Some(at(r)[0] != 0)),
        )),
        ScalarKind::Int(1) => prim!(Int8Array, i8, 1),
        ScalarKind::Int(2) => prim!(Int16Array, i16, 2),
        ScalarKind::Int(4) => prim!(Int32Array, i32, 4),
        ScalarKind::Int(8) => prim!(Int64Array, i64, 8),
        ScalarKind::UInt(1) => prim!(UInt8Array, u8, 1),
        ScalarKind::UInt(2) => prim!(UInt16Array, u16, 2),
        ScalarKind::UInt(4) => prim!(UInt32Array, u32, 4),
        ScalarKind::UInt(8) => prim!(UInt64Array, u64, 8),
        ScalarKind::Float(2) => {
            Arc::new(Float16Array::from_iter_values((0..rows).map(|r| {
                sciio_core::half::f16::from_le_bytes(word::<2>(at(r), o))
            })))
        }
        ScalarKind::Float(4) => prim!(Float32Array, f32, 4),
        ScalarKind::Float(8) => prim!(Float64Array, f64, 8),
        ScalarKind::DateTime(u) => {
            let v = Int64Array::from(i64s());
            let dt = DataType::Timestamp(time(&u)?, None);
            arrow_cast::cast(&v, &dt).map_err(|e| Error::unsupported(e.to_string()))?
        }
        ScalarKind::TimeDelta(u) => {
            let v = Int64Array::from(i64s());
            let dt = DataType::Duration(time(&u)?);
            arrow_cast::cast(&v, &dt).map_err(|e| Error::unsupported(e.to_string()))?
        }
        ScalarKind::Bytes(n) => Arc::new(BinaryArray::from_iter_values((0..rows).map(|r| {
            let b = &at(r)[..n];
            let end = b.iter().rposition(|c| *c != 0).map_or(0, |p| p + 1);
            &b[..end]
        }))),
        ScalarKind::Unicode(n) => {
            let mut values = Vec::with_capacity(rows);
            for r in 0..rows {
                let b = at(r);
                let mut s = String::with_capacity(n);
                for k in 0..n {
                    let cp = u32::from_le_bytes(word::<4>(&b[k * 4..], o));
                    if cp == 0 {
                        continue;
                    }
                    s.push(char::from_u32(cp).ok_or_else(|| {
                        Error::format(format!("row {r}: {cp:#x} is not a Unicode code point"))
                    })?);
                }
                values.push(s.trim_end_matches('\0').to_string());
            }
            Arc::new(StringArray::from(values))
        }
        other => {
            return Err(Error::unsupported(format!(
                "numpy kind '{}' has no DataFrame column equivalent",
                other.kind_char()
            )))
        }
    })
}
