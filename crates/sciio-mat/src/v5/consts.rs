//! The Level-5 array class codes (`mxCELL_CLASS`...), used by the reader (`mod.rs`,
//! `decode.rs`) and the writer (`write.rs`).

/// Array classes (`mxCLASS`).
pub(crate) const MX_CELL: u32 = 1;
pub(crate) const MX_STRUCT: u32 = 2;
pub(crate) const MX_OBJECT: u32 = 3;
pub(crate) const MX_CHAR: u32 = 4;
pub(crate) const MX_SPARSE: u32 = 5;
pub(crate) const MX_FUNCTION: u32 = 16;
pub(crate) const MX_OPAQUE: u32 = 17;
