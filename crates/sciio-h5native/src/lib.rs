//! HDF5 in pure Rust, without libhdf5: the model of HDF5 types and values sciio reads and
//! writes ([`H5Type`] and its numpy mapping, [`RawData`], [`VlenData`], [`AttrValue`],
//! [`Element`] trees, [`DatasetSpec`]) and the [`native`] writer of new files in the earliest
//! file format (MAT v7.3 cells and structs: many small objects). `sciio-hdf5` reads into and
//! writes from the same model through libhdf5, and re-exports all of it.
//!
//! ```
//! use sciio_h5native::{ByteOrder, H5Type};
//! let f8 = H5Type::Float { size: 8, precision: 64, order: ByteOrder::Little };
//! assert_eq!(f8.numpy_descr()?, "\"<f8\"");
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
#![forbid(unsafe_code)]

mod elements;
pub mod native;
mod spec;
mod types;
mod values;

pub use elements::{Element, ElementData, RefTarget, Selection};
pub use spec::DatasetSpec;
pub use types::{ByteOrder, CharSet, Field, H5Type};
pub use values::{AttrValue, Attribute, RawData, Slice, VlenData};
