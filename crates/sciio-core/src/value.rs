//! Dynamic element values: one [`Value`] per array element, for any dtype.

use num_complex::Complex;

use crate::dtype::{ByteOrder, DType, ScalarKind, TimeUnit};
use crate::error::{Error, Result};

/// An x86 extended-precision long double (`<f16`/`<f12`, 80 bits used), kept exactly as its
/// bytes in little-endian order, convertible to `f64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LongDouble {
    /// The little-endian storage bytes; the first 10 are the value, the rest padding.
    pub bytes: [u8; 16],
    /// Storage size in bytes (12 or 16).
    pub size: u8,
}

impl LongDouble {
    /// Reads one long double of `size` bytes in `order`.
    pub fn from_bytes(raw: &[u8], order: ByteOrder) -> Self {
        let mut bytes = [0u8; 16];
        let n = raw.len().min(16);
        bytes[..n].copy_from_slice(&raw[..n]);
        if order == ByteOrder::Big {
            bytes[..n].reverse();
        }
        LongDouble {
            bytes,
            size: n as u8,
        }
    }

    /// The value rounded to the nearest `f64` (ties to even; overflow gives infinity).
    ///
    /// ```
    /// use sciio_core::{ByteOrder, LongDouble};
    /// // 1.5 as an x86 extended: mantissa 0xC000..., exponent 0x3FFF.
    /// let mut b = [0u8; 16];
    /// b[7] = 0xC0; b[8] = 0xFF; b[9] = 0x3F;
    /// assert_eq!(LongDouble::from_bytes(&b, ByteOrder::Little).to_f64(), 1.5);
    /// ```
    pub fn to_f64(&self) -> f64 {
        let mut m = [0u8; 8];
        m.copy_from_slice(&self.bytes[..8]);
        let mantissa = u64::from_le_bytes(m);
        let se = u16::from_le_bytes([self.bytes[8], self.bytes[9]]);
        let negative = se & 0x8000 != 0;
        let exp = i32::from(se & 0x7fff);
        let sign = if negative { -1.0 } else { 1.0 };
        if exp == 0x7fff {
            return if mantissa << 1 == 0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
        if mantissa == 0 {
            return sign * 0.0;
        }
        // value = mantissa * 2^(exp - 16383 - 63), denormals have exp 0 meaning 1 - 16383.
        let e = if exp == 0 { 1 } else { exp } - 16383 - 63;
        sign * scale(mantissa, e)
    }
}

/// `2^k` exactly, for `-1022 <= k <= 1023` (a normal f64 built from its exponent bits;
/// `f64::powi` does not promise an exact result, and Miri checks that promise).
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `m * 2^e` correctly rounded to f64.
fn scale(m: u64, e: i32) -> f64 {
    // Normalise so the top bit is set, then round the 64-bit mantissa to 53 bits (or fewer
    // for subnormal results) with ties to even.
    let shift = m.leading_zeros() as i32;
    let m = m << shift;
    let e = e - shift; // value = m * 2^e, m in [2^63, 2^64)
    let top_exp = e + 63; // unbiased exponent of the leading bit
    if top_exp > 1023 {
        return f64::INFINITY;
    }
    // Number of mantissa bits the result keeps.
    let keep: i32 = if top_exp >= -1022 {
        53
    } else {
        53 - (-1022 - top_exp)
    };
    if keep <= 0 {
        // Below half the smallest subnormal (or exactly rounding to it).
        if keep == 0 && m > (1u64 << 63) {
            return f64::from_bits(1);
        }
        return 0.0;
    }
    let drop = 64 - keep as u32;
    let mut kept = m >> drop;
    let rest = m & ((1u64 << drop) - 1);
    let half = 1u64 << (drop - 1);
    if rest > half || (rest == half && kept & 1 == 1) {
        kept += 1;
    }
    // kept * 2^(e + drop), exact in f64 unless it overflows.
    let mut exp = e + drop as i32;
    let mut value = kept as f64;
    // Multiply by 2^exp in steps that stay representable.
    while exp > 0 {
        let step = exp.min(1000);
        value *= pow2(step);
        exp -= step;
    }
    while exp < 0 {
        let step = exp.max(-1000);
        value *= pow2(step);
        exp -= step;
    }
    value
}

/// One array element of any dtype.
///
/// ```
/// use sciio_core::{DType, NdArray, Order, PyLiteral, Value};
/// let dt = DType::parse_descr(&PyLiteral::parse("[('name', '<U3'), ('t', '<M8[s]')]")?)?;
/// let mut bytes = Vec::new();
/// for c in "ab".chars() { bytes.extend_from_slice(&(c as u32).to_le_bytes()); }
/// bytes.extend_from_slice(&[0; 4]);
/// bytes.extend_from_slice(&60i64.to_le_bytes());
/// let a = NdArray::from_bytes(dt, &[1], Order::C, &bytes)?;
/// let Value::Record(fields) = a.get(&[0])? else { unreachable!() };
/// assert_eq!(fields[0], ("name".to_string(), Value::Str("ab".into())));
/// assert!(matches!(fields[1].1, Value::DateTime(60, _)));
/// # Ok::<(), sciio_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `b1`
    Bool(bool),
    /// Signed integers of every size.
    Int(i64),
    /// Unsigned integers of every size.
    UInt(u64),
    /// `f2`, `f4`, `f8`, widened to `f64`.
    Float(f64),
    /// `f12`/`f16`, kept exact.
    LongDouble(LongDouble),
    /// `c8`, `c16`, widened.
    Complex(Complex<f64>),
    /// `c24`/`c32`: real and imaginary long doubles.
    LongComplex(LongDouble, LongDouble),
    /// `S<n>`, trailing NULs removed (as numpy does).
    Bytes(Vec<u8>),
    /// `U<n>`, trailing NULs removed.
    Str(String),
    /// `V<n>` raw bytes.
    Void(Vec<u8>),
    /// datetime64 ticks since the epoch (`i64::MIN` is NaT).
    DateTime(i64, TimeUnit),
    /// timedelta64 ticks (`i64::MIN` is NaT).
    TimeDelta(i64, TimeUnit),
    /// A structured record: (field name, value) in field order.
    Record(Vec<(String, Value)>),
    /// A subarray field: its shape and its values in C order.
    Array(Vec<usize>, Vec<Value>),
}

fn fixed<const N: usize>(raw: &[u8], order: ByteOrder) -> [u8; N] {
    let mut b = [0u8; N];
    b.copy_from_slice(&raw[..N]);
    if order == ByteOrder::Big {
        b.reverse();
    }
    b
}

impl Value {
    /// Decodes one element of `dtype` from `raw` (at least `dtype.itemsize()` bytes).
    pub fn decode(dtype: &DType, raw: &[u8]) -> Result<Value> {
        let size = dtype.itemsize();
        let raw = raw.get(..size).ok_or_else(|| {
            Error::truncated(format!("element of {size} bytes, {} available", raw.len()))
        })?;
        match dtype {
            DType::Scalar(s) => decode_scalar(s.kind, s.order, raw),
            DType::Record(r) => r
                .fields
                .iter()
                .map(|f| {
                    let part = raw.get(f.offset..).unwrap_or(&[]);
                    Ok((f.name.clone(), Value::decode(&f.dtype, part)?))
                })
                .collect::<Result<_>>()
                .map(Value::Record),
            DType::SubArray(base, shape) => {
                let n = base.itemsize();
                let count: usize = shape.iter().product();
                let values = (0..count)
                    .map(|i| Value::decode(base, raw.get(i * n..).unwrap_or(&[])))
                    .collect::<Result<_>>()?;
                Ok(Value::Array(shape.clone(), values))
            }
        }
    }
}

fn decode_scalar(kind: ScalarKind, order: ByteOrder, raw: &[u8]) -> Result<Value> {
    Ok(match kind {
        ScalarKind::Bool => Value::Bool(raw[0] != 0),
        ScalarKind::Int(1) => Value::Int(i64::from(raw[0] as i8)),
        ScalarKind::Int(2) => Value::Int(i64::from(i16::from_le_bytes(fixed(raw, order)))),
        ScalarKind::Int(4) => Value::Int(i64::from(i32::from_le_bytes(fixed(raw, order)))),
        ScalarKind::Int(8) => Value::Int(i64::from_le_bytes(fixed(raw, order))),
        ScalarKind::UInt(1) => Value::UInt(u64::from(raw[0])),
        ScalarKind::UInt(2) => Value::UInt(u64::from(u16::from_le_bytes(fixed(raw, order)))),
        ScalarKind::UInt(4) => Value::UInt(u64::from(u32::from_le_bytes(fixed(raw, order)))),
        ScalarKind::UInt(8) => Value::UInt(u64::from_le_bytes(fixed(raw, order))),
        ScalarKind::Float(2) => Value::Float(half::f16::from_le_bytes(fixed(raw, order)).to_f64()),
        ScalarKind::Float(4) => Value::Float(f64::from(f32::from_le_bytes(fixed(raw, order)))),
        ScalarKind::Float(8) => Value::Float(f64::from_le_bytes(fixed(raw, order))),
        ScalarKind::Float(12 | 16) => Value::LongDouble(LongDouble::from_bytes(raw, order)),
        ScalarKind::Complex(8) => Value::Complex(Complex::new(
            f64::from(f32::from_le_bytes(fixed(raw, order))),
            f64::from(f32::from_le_bytes(fixed(&raw[4..], order))),
        )),
        ScalarKind::Complex(16) => Value::Complex(Complex::new(
            f64::from_le_bytes(fixed(raw, order)),
            f64::from_le_bytes(fixed(&raw[8..], order)),
        )),
        ScalarKind::Complex(n @ (24 | 32)) => {
            let h = usize::from(n / 2);
            Value::LongComplex(
                LongDouble::from_bytes(&raw[..h], order),
                LongDouble::from_bytes(&raw[h..], order),
            )
        }
        ScalarKind::Bytes(_) => {
            let end = raw.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
            Value::Bytes(raw[..end].to_vec())
        }
        ScalarKind::Unicode(_) => Value::Str(decode_ucs4(raw, order)?),
        ScalarKind::Void(_) => Value::Void(raw.to_vec()),
        ScalarKind::DateTime(u) => Value::DateTime(i64::from_le_bytes(fixed(raw, order)), u),
        ScalarKind::TimeDelta(u) => Value::TimeDelta(i64::from_le_bytes(fixed(raw, order)), u),
        ScalarKind::Object => {
            return Err(Error::new(
                crate::ErrorKind::Refused,
                "dtype '|O' holds pickled Python objects, which sciio never loads",
            ))
        }
        other => {
            return Err(Error::unsupported(format!(
                "scalar kind {other:?} has an unsupported size"
            )))
        }
    })
}

/// UCS-4 code units to a string, trailing NULs removed like numpy does.
pub fn decode_ucs4(raw: &[u8], order: ByteOrder) -> Result<String> {
    let mut out = String::new();
    let mut nuls = 0usize;
    for unit in raw.chunks_exact(4) {
        let code = u32::from_le_bytes(fixed(unit, order));
        if code == 0 {
            nuls += 1;
            continue;
        }
        for _ in 0..nuls {
            out.push('\0');
        }
        nuls = 0;
        let c = char::from_u32(code).ok_or_else(|| {
            Error::format(format!(
                "U string holds {code:#x}, not a Unicode scalar value"
            ))
        })?;
        out.push(c);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ld(value_bits: (u64, u16)) -> f64 {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&value_bits.0.to_le_bytes());
        b[8..10].copy_from_slice(&value_bits.1.to_le_bytes());
        LongDouble::from_bytes(&b, ByteOrder::Little).to_f64()
    }

    #[test]
    fn long_double_conversion() {
        assert_eq!(ld((0x8000_0000_0000_0000, 0x3fff)), 1.0);
        assert_eq!(ld((0x8000_0000_0000_0000, 0xbfff)), -1.0);
        assert_eq!(ld((0, 0)), 0.0);
        assert!(ld((0xc000_0000_0000_0000, 0x7fff)).is_nan());
        assert_eq!(ld((0x8000_0000_0000_0000, 0x7fff)), f64::INFINITY);
        assert_eq!(ld((0x8000_0000_0000_0000, 0x3fff + 2000)), f64::INFINITY);
        // 1 + 2^-63 rounds to 1; 0.1 rounds to f64's 0.1.
        assert_eq!(ld((0x8000_0000_0000_0001, 0x3fff)), 1.0);
        assert_eq!(ld((0xcccc_cccc_cccc_cccd, 0x3ffb)), 0.1);
        // smallest f64 subnormal
        assert_eq!(
            ld((0x8000_0000_0000_0000, 0x3fff - 1074)),
            f64::from_bits(1)
        );
    }
}
