//! numpy's text for arrays: the printer lives in the library ([`sciio::core::numpy_text`]) so
//! that library users print arrays as numpy does too.

pub(crate) use sciio::core::numpy_text::{array_str, rows_repr};
