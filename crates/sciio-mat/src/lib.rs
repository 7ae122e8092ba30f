//! MATLAB MAT files for Rust: v7.3 (HDF5), v7/v6/v5 (Level 5) and v4.
//!
//! - [`MatValue`]: MATLAB's values — numeric arrays of every class (real or complex), logical,
//!   char, cell arrays, structs and struct arrays, sparse matrices, empties of any class and
//!   shape, and (read only) function handles and MATLAB objects: [`MatObject`] decodes
//!   `string`, `datetime`, `duration`, `categorical`, `table`, `timetable` (a table with row
//!   times), `containers.Map`, `calendarDuration`, `missing` and enumerations, and keeps other
//!   classes' properties (dynamic properties included) by name; whatever cannot be decoded
//!   stays [`Opaque`] with its class name and the reason.
//!   Arrays keep MATLAB's dimensions and column-major order; [`MatValue::to_numpy`] gives the
//!   row-major array `hdf5storage.loadmat` returns.
//! - [`MatFile`]: reads v7.3 files written by MATLAB, hdf5storage (with or without Python
//!   metadata) and mat73/h5py in MATLAB's layout, and — in pure Rust, into the same values —
//!   Level-5 files (v5, v6, v7 with zlib-compressed variables, as MATLAB's `save` and
//!   `scipy.io.savemat` write them; both byte orders) and v4 files. [`MatFile::version`]
//!   tells which.
//! - [`MatWriter`] / [`write_mat`]: writes MATLAB-loadable files with MATLAB's conventions
//!   (hdf5storage's `matlab_compatible` mode), optionally with hdf5storage's `Python.*`
//!   attributes, deflate+shuffle compressed on all cores, and replaces variables of an
//!   existing file in place.
//!
//! ```
//! use sciio_mat::{CellArray, MatFile, MatValue, MatWriter, StructArray, WriteOptions};
//! let dir = std::env::temp_dir().join(format!("sciio-mat-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let path = dir.join("demo.mat");
//! let s = StructArray::scalar(vec![
//!     ("x".into(), MatValue::from(vec![1.0, 2.0])),
//!     ("c".into(), MatValue::Cell(CellArray::row(vec![MatValue::from("hi"), MatValue::from(true)]))),
//! ]);
//! let mut w = MatWriter::create(&path, WriteOptions::default())?;
//! w.write("s", &MatValue::Struct(s.clone()))?;
//! w.finish()?;
//! let back = MatFile::open(&path)?.read("s")?;
//! assert_eq!(back, MatValue::Struct(s));
//! # std::fs::remove_dir_all(&dir).ok();
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

mod array_pieces;
mod booleans;
mod byte_strings;
pub mod header;
mod mcos;
mod numpy;
mod object;
mod object_values;
mod plain;
mod read;
mod text_pieces;
mod v5;
mod value;
mod write;

pub use array_pieces::{
    ArrayPieces, FillElements, Pieces, PiecesOf, PutBytes, RecordPass, RecordPieces, TreeValue,
};
#[doc(hidden)]
pub use mcos::fuzz_metadata as fuzz_mcos_metadata;
pub use numpy::{
    from_numpy, no_class_reason, numeric_meta, scipy_chars, scipy_value, PythonAttrs, PythonMeta,
};
pub use plain::PlainNote;
pub use read::{read_mat, MatFile, Outline, ABSENT_FIELD};
pub use text_pieces::{TextPieces, TextSummary};
#[doc(hidden)]
pub use v5::fuzz_read as fuzz_mat5_read;
pub use v5::{is_level5, is_v4, MatVersion};
pub use value::{
    at_least_2d, CellArray, CharArray, MatClass, MatValue, NumpyText, Opaque, SparseKind,
    SparseMatrix, StructArray, VarInfo,
};
pub use value::{
    Categorical, Datetime, Dictionary, Duration, MatObject, ObjectData, Properties, Table,
};
pub use write::{write_mat, MatWriter, WriteOptions};
