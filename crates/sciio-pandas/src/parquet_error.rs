//! arrow-rs' Parquet errors as sciio errors (their kind from the Parquet error's own kind).

use sciio_core::{Error, ErrorKind};

/// A Parquet error as a sciio [`Error`]: truncations, unsupported features and I/O keep
/// their kind; everything else is a format error.
pub(crate) fn parquet_err(e: parquet::errors::ParquetError) -> Error {
    use parquet::errors::ParquetError as P;
    let kind = match &e {
        P::EOF(_) | P::NeedMoreData(_) | P::NeedMoreDataRange(_) => ErrorKind::Truncated,
        P::NYI(_) => ErrorKind::Unsupported,
        P::IndexOutOfBound(..) => ErrorKind::Format,
        P::External(_) => ErrorKind::Io,
        _ => ErrorKind::Format,
    };
    Error::new(kind, format!("parquet: {e}"))
}
