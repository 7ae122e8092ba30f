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
//! | string / binary                | `<U{max}` / `S{max}`, nulls empty                 |
//! | dictionary (categorical)       | its decoded values                                |

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

/// One Arrow column as a 1-d numpy array (see the module table); `limits` bounds the buffers
/// of fixed-width string arrays, whose size depends on the longest value.
pub fn array_to_ndarray(a: &dyn Array, limits: &Limits) -> Result<NdArray> {
    let rows = a.len();
    match a.data_type() {
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
        other => Err(Error::unsupported(format!(
            "Arrow type {other} has no numpy equivalent"
        ))),
    }
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
    /// int, uint, float, `datetime64`/`timedelta64` in s/ms/us/ns, `S` and `U` are converted;
    /// others (complex, void, object, subarrays, other time units) are refused naming the
    /// field.
    pub fn from_structured(array: &NdArray) -> Result<Frame> {
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
        let mut columns = Vec::new();
        flatten(record, "", 0, &mut columns)?;
        let mut builder = Frame::builder();
        for (name, offset, scalar) in columns {
            let field_bytes = |row: usize| {
                let at = row * itemsize + offset;
                &bytes[at..at + scalar.kind.itemsize()]
            };
            let col = column_from_records(&scalar, rows, field_bytes)
                .map_err(|e| e.with_node(name.clone()))?;
            builder = builder.column(name, col);
        }
        builder.build()
    }
}

fn flatten(
    record: &sciio_core::RecordType,
    prefix: &str,
    base: usize,
    out: &mut Vec<(String, usize, ScalarType)>,
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
            DType::Scalar(s) => out.push((name, offset, *s)),
            DType::Record(r) => flatten(r, &format!("{name}."), offset, out)?,
            DType::SubArray(..) => {
                return Err(Error::unsupported(
                    "subarray fields have no column equivalent in a DataFrame",
                )
                .with_node(name))
            }
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
            b[..end].to_vec()
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
