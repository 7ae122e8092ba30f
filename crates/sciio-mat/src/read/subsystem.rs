//! The loaded object subsystem of a v7.3 file (what `objects.rs` reads MATLAB objects from),
//! kept by the file ([`super::Mat73`]) once loaded.

use sciio_core::{Error, Result};

use crate::mcos::FileWrapper;

/// Where MATLAB keeps the object subsystem.
pub(super) const SUBSYSTEM: &str = "/#subsystem#/MCOS";

/// The loaded object subsystem of one file.
#[derive(Debug)]
pub(crate) struct Subsystem {
    pub(super) wrapper: FileWrapper,
    /// Paths of the items of the MCOS cell.
    pub(super) items: Vec<String>,
    /// Paths of each class's defaults struct, by class id.
    pub(super) defaults: Vec<String>,
    /// Items `2..values_end` hold property values.
    pub(super) values_end: usize,
}

impl Subsystem {
    /// The path of property value `n` (item `n + 2`).
    pub(super) fn value_path(&self, n: usize) -> Result<&str> {
        n.checked_add(2)
            .filter(|&i| i < self.values_end)
            .and_then(|i| self.items.get(i))
            .map(String::as_str)
            .ok_or_else(|| {
                Error::format(format!(
                    "property value {n} outside the {} values of {SUBSYSTEM}",
                    self.values_end.saturating_sub(2)
                ))
            })
    }
}
