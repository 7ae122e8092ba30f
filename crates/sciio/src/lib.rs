//! sciio: read and write the files of scientific Python and MATLAB from Rust — numpy
//! `.npy`/`.npz`, HDF5 (PyTables, h5py, pandas HDFStore), MATLAB MAT (v4 to v7.3) and pandas
//! Parquet — as numpy, PyTables, pandas and MATLAB read and write them.
//!
//! - [`open`] ([`File::open`]) picks the format by extension and first bytes and describes the
//!   file as one neutral tree of [`Node`]s; [`File::read_array`] reads an array's data
//!   (`to_ndarray::<T>()` for a typed `ndarray`), [`File::batches`] streams tables and frames
//!   as Arrow record batches with their pandas metadata.
//! - [`convert`] writes a file or one node into another format, atomically
//!   ([`write_atomically`]); what the target cannot hold is left out and listed with its
//!   reason ([`LeftOut`], [`plan`]), or refused before writing with
//!   [`ConvertOptions::strict`].
//! - [`CompressSpec`] is the one compression syntax (`deflate:6`, `shuffle,zlib:1`, ...).
//! - [`guide`]: the ten commonest tasks as short programs.
//!
//! The format crates are re-exported for what the neutral tree does not cover: [`npy`],
//! [`pytables`], [`matlab`] (MATLAB values), [`pandas`] (frames, Parquet), [`hdfstore`].
//! Every format is a default cargo feature (`hdf5`, `mat`, `parquet`, `hdfstore`); with
//! `default-features = false` only `.npy`/`.npz` are built, and opening another format
//! says which feature it needs.
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

pub mod atomic;
pub mod compress;
pub mod format;
#[cfg(all(feature = "hdf5", feature = "mat", feature = "parquet"))]
pub mod guide;
pub mod inspect;
pub mod node;
pub mod plan;
pub mod target;
pub mod vlarray;

pub use atomic::write_atomically;
pub use compress::{CompressSpec, Filter};
pub use format::Format;
pub use inspect::{ColumnChunkInfo, ParquetInfo, RowGroupInfo, Storage};
pub use node::{ArrayInfo, AttrValue, Attribute, NativeInfo, Node, NodeKind};
pub use sciio_core as core;
pub use sciio_core::{DType, Error, ErrorKind, NdArray, Order, Result, Value};
pub use sciio_npy as npy;
pub use sciio_zip as zip;
// The format crates, for what the neutral tree does not cover (MATLAB values, PyTables
// writers, pandas frames, HDFStore keys).
#[cfg(feature = "hdfstore")]
pub use sciio_hdfstore as hdfstore;
#[cfg(feature = "mat")]
pub use sciio_mat as matlab;
#[cfg(feature = "parquet")]
pub use sciio_pandas as pandas;
#[cfg(feature = "hdf5")]
pub use sciio_pytables as pytables;
pub use target::Target;

pub mod convert;
pub mod file;
#[cfg(all(feature = "parquet", feature = "mat"))]
mod frame_mat;
#[cfg(feature = "parquet")]
mod frame_numpy;
#[cfg(feature = "hdfstore")]
mod frame_store;
#[cfg(feature = "parquet")]
pub mod frames;
#[cfg(feature = "hdf5")]
mod h5_convert;
#[cfg(feature = "hdf5")]
mod h5write;
#[cfg(feature = "hdf5")]
mod hdf5;
mod job;
mod leaves;
#[cfg(feature = "mat")]
mod mat;
#[cfg(feature = "mat")]
mod mat_convert;
#[cfg(feature = "mat")]
mod mat_pieces;
#[cfg(feature = "mat")]
mod mat_text;
#[cfg(feature = "mat")]
mod mat_write;
mod options;
#[cfg(feature = "parquet")]
mod parquet;
#[cfg(feature = "parquet")]
mod parquet_convert;
mod route;
#[cfg(feature = "hdfstore")]
mod store;
#[cfg(feature = "hdfstore")]
mod store_convert;
// Streaming writes into .h5 or .parquet: nothing to stream into with neither.
#[cfg(any(feature = "hdf5", feature = "parquet", feature = "mat"))]
mod stream;

pub use convert::{
    convert, convert_many, ConvertOptions, ConvertSummary, MatOutVersion, StoreOptions,
};
pub use file::File;
pub use plan::LeftOut;

/// Makes a signal that stops the process (Ctrl-C, `kill`, a crash inside a C library) remove
/// the temporary files of unfinished outputs first, as errors and panics already do. Call it
/// once at the start of a program that converts files; see [`sciio_temp`].
pub fn remove_temporaries_on_signals() {
    sciio_temp::remove_on_signals();
}

/// The C libraries sciio is built with that carry a version of their own, as `name version`
/// (`libhdf5 2.0.0` with the `hdf5` feature; empty without it), for `sciio --version`.
pub fn linked_libraries() -> Vec<String> {
    #[allow(unused_mut)] // filled only with format features
    let mut out = Vec::new();
    #[cfg(feature = "hdf5")]
    if let Ok((major, minor, release)) = sciio_pytables::sciio_hdf5::libhdf5_version() {
        out.push(format!("libhdf5 {major}.{minor}.{release}"));
    }
    out
}

/// Opens a file of any supported format: the same as [`File::open`].
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// let path = dir.path().join("x.npy");
/// let mut bytes = Vec::new();
/// sciio::npy::write_array(&mut bytes, &sciio::NdArray::from_vec(vec![1u8, 2, 3], &[3])?)?;
/// std::fs::write(&path, bytes)?;
/// let file = sciio::open(&path)?;
/// assert_eq!(file.root().array_info().map(|i| i.shape.clone()), Some(vec![3]));
/// assert!(sciio::open(dir.path().join("missing.npy")).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open(path: impl AsRef<std::path::Path>) -> Result<File> {
    File::open(path)
}
