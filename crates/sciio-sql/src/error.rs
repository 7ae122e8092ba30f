//! sciio's errors and DataFusion's, each carried inside the other so that a reader's error
//! (its kind, file, node and offset) comes out of a query as it went in.

use datafusion::error::DataFusionError;
use sciio::Error;

/// A sciio error as DataFusion carries it (an external error, found again by [`from_df`]).
pub(crate) fn to_df(e: Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// A DataFusion error as a sciio error: a sciio error inside it comes out with its kind and
/// location, anything else (SQL syntax, unknown columns, execution) is invalid input with
/// DataFusion's message.
pub(crate) fn from_df(e: DataFusionError) -> Error {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(c) = cause {
        if let Some(inner) = c.downcast_ref::<Error>() {
            let copy = Error::new(inner.kind(), inner.message());
            let at = inner.location();
            let copy = match &at.file {
                Some(file) => copy.with_file(file),
                None => copy,
            };
            let copy = match &at.node {
                Some(node) => copy.with_node(node.clone()),
                None => copy,
            };
            return match at.offset {
                Some(offset) => copy.with_offset(offset),
                None => copy,
            };
        }
        cause = c.source();
    }
    Error::invalid_input(e.strip_backtrace())
}
