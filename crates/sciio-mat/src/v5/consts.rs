//! Level-5 constants shared by the reader (`mod.rs`, `decode.rs`, `plain.rs`) and the writer:
//! the array class codes (`mxCELL_CLASS`...) and the size from which a variable streams.

/// Array classes (`mxCLASS`).
pub(crate) const MX_CELL: u32 = 1;
pub(crate) const MX_STRUCT: u32 = 2;
pub(crate) const MX_OBJECT: u32 = 3;
pub(crate) const MX_CHAR: u32 = 4;
pub(crate) const MX_SPARSE: u32 = 5;
pub(crate) const MX_FUNCTION: u32 = 16;
pub(crate) const MX_OPAQUE: u32 = 17;

/// Compressed variables from this size on are first tried as plain ones (`plain.rs`).
pub(super) const PLAIN_FROM: usize = 1 << 20;
