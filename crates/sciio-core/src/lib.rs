//! sciio's core: the numpy dtype model, dynamic n-d arrays, the one error type and the
//! allocation limits shared by every format crate. It never does I/O.
//!
//! - [`DType`]: every dtype numpy's `descr` can express, parsed from and printed to numpy's
//!   exact strings ([`DType::from_typestr`], [`DType::parse_descr`], [`DType::descr_literal`]).
//! - [`NdArray`]: dtype + shape + [`Order`] + bytes (owned or memory-mapped), with typed
//!   zero-copy `ndarray` views ([`NdArray::view`]) and dynamic [`Value`]s ([`NdArray::get`]).
//! - [`PyLiteral`]: the Python literals numpy stores in headers.
//! - [`Error`]/[`ErrorKind`] and [`Limits`] for untrusted input.
// Input never reaches a panic: errors are returned (tests may unwrap).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable
    )
)]

pub mod array;
pub mod calendar;
pub mod contain;
pub mod dtype;
pub mod element;
pub mod error;
pub mod json;
pub mod limits;
pub mod numpy_text;
pub mod pyliteral;
pub mod value;

pub use array::{NdArray, Order};
pub use dtype::{
    byteswap_in_place, to_native_in_place, ByteOrder, DType, Field, RecordType, ScalarKind,
    ScalarType, TimeBase, TimeUnit,
};
pub use element::Element;
pub use error::{Error, ErrorKind, Location, Result};
pub use limits::Limits;
pub use pyliteral::{LiteralLimits, PyLiteral};
pub use value::{LongDouble, Value};

/// Re-exported so users name the same versions sciio uses.
pub use half;
pub use ndarray;
pub use num_complex;
