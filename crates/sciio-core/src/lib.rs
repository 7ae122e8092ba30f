//! sciio's core: the numpy dtype model, dynamic n-d arrays, the one error type and the
//! allocation limits shared by every format crate. It never does I/O.

pub mod error;
pub mod limits;

pub use error::{Error, ErrorKind, Location, Result};
pub use limits::Limits;
