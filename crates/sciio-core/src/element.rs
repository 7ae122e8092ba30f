//! Rust element types with a numpy dtype: the typed fast paths of [`NdArray`](crate::NdArray).

use half::f16;
use num_complex::Complex;

use crate::dtype::{DType, ScalarKind, ScalarType};

/// A Rust type whose values are stored exactly like a native-order numpy scalar.
///
/// # Safety
/// Implementors must be plain data without padding whose size equals the dtype's itemsize,
/// whose alignment is at most 8, and for which every byte pattern accepted by
/// [`Element::valid_bytes`] is a valid value. sciio reinterprets file bytes as `&[Self]`.
pub unsafe trait Element: Copy + Send + Sync + std::fmt::Debug + 'static {
    /// The native-order dtype of this type.
    fn dtype() -> DType;

    /// Whether `bytes` (a whole number of elements) are valid values. Only `bool` restricts
    /// them (numpy bools are 0 or 1; anything else would be undefined behaviour in Rust).
    fn valid_bytes(bytes: &[u8]) -> bool {
        let _ = bytes;
        true
    }
}

macro_rules! element {
    ($($t:ty => $kind:expr),* $(,)?) => {$(
        // SAFETY: primitive numeric types without padding, any bit pattern valid, align <= 8.
        unsafe impl Element for $t {
            fn dtype() -> DType {
                DType::Scalar(ScalarType::native($kind))
            }
        }
    )*};
}

element! {
    i8 => ScalarKind::Int(1),
    i16 => ScalarKind::Int(2),
    i32 => ScalarKind::Int(4),
    i64 => ScalarKind::Int(8),
    u8 => ScalarKind::UInt(1),
    u16 => ScalarKind::UInt(2),
    u32 => ScalarKind::UInt(4),
    u64 => ScalarKind::UInt(8),
    f16 => ScalarKind::Float(2),
    f32 => ScalarKind::Float(4),
    f64 => ScalarKind::Float(8),
    Complex<f32> => ScalarKind::Complex(8),
    Complex<f64> => ScalarKind::Complex(16),
}

// SAFETY: bool is one byte; valid_bytes admits only 0 and 1, the two valid patterns.
unsafe impl Element for bool {
    fn dtype() -> DType {
        DType::Scalar(ScalarType::native(ScalarKind::Bool))
    }

    fn valid_bytes(bytes: &[u8]) -> bool {
        bytes.iter().all(|b| *b <= 1)
    }
}
