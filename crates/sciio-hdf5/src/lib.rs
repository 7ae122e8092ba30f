//! sciio's HDF5 layer: the only crate that touches libhdf5 (bundled, statically linked through
//! `hdf5-metno`).
//!
//! It reads any HDF5 file in the file's own byte layout ([`RawData`], [`VlenData`]) with a
//! type model ([`H5Type`]) richer than the safe crate's — bitfields, H5T_TIME, enums, nested
//! compounds at exact offsets, arrays, big-endian types, references, vlen of any atom — and
//! registers the filters PyTables files use ([`filters`]). libhdf5's error stack is never
//! printed: failures become [`sciio_core::Error`]s naming the file and node path.
//!
//! ```no_run
//! use sciio_hdf5::File;
//! let file = File::open("table.h5")?;
//! let data = file.dataset("/table")?.read()?;
//! println!("{} rows of {}", data.shape[0], data.ty.numpy_descr()?);
//! # Ok::<(), sciio_core::Error>(())
//! ```
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

mod chunk_decode;
mod chunks;
mod element_read;
mod elements;
mod file;
pub mod filters;
mod handle;
mod header;
mod image;
mod layout;
mod projected;
mod small;
mod types;
mod vlen_direct;
mod vlen_guard;
pub mod write;

pub use elements::{Element, ElementData, RefTarget, Selection};
pub use file::{
    join_path, Dataset, Extent, File, Filter, Group, Layout, Link, LinkKind, Object, ObjectInfo,
    ObjectKind,
};
pub use handle::libhdf5_version;
pub use layout::{native_order, Packing, Relayout};
pub use sciio_h5native::{AttrValue, Attribute, RawData, Slice, VlenData};
pub use types::{native_long_double, ByteOrder, CharSet, Field, H5Type};
pub use vlen_direct::VlenElementReader;
