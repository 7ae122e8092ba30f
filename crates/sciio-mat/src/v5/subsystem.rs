//! The decoded object subsystem of a Level-5 file (what `mcos.rs` resolves MATLAB objects
//! from), kept by the file ([`super::Mat5File`]) once loaded.

use crate::mcos::FileWrapper;
use crate::value::MatValue;

/// The loaded object subsystem of one file.
#[derive(Debug)]
pub(crate) struct Subsystem {
    pub(super) wrapper: FileWrapper,
    pub(super) items: Vec<MatValue>,
    pub(super) defaults: Vec<MatValue>,
    pub(super) values_end: usize,
}
