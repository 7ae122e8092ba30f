//! pandas DataFrames in Apache Parquet, interoperable with pandas, pyarrow and fastparquet.
//!
//! * [`Frame`]: Arrow record batches plus a [`FrameSchema`] that knows the row index
//!   ([`IndexLevel`]: a metadata-only [`RangeIndex`], or stored levels, several for a
//!   MultiIndex), the column labels and their levels (column MultiIndex), and each column's
//!   pandas metadata ([`ColumnMeta`]). Users get plain Arrow arrays and typed accessors.
//! * [`PandasMetadata`]: the `pandas` key-value metadata, parsed and printed without I/O.
//! * [`ParquetReader`] / [`ParquetWriter`]: streaming, batch by batch and row group by row
//!   group; [`read_frame`], [`write_frame`], [`copy_parquet`] for whole files.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Int64Array, StringArray};
//! use sciio_pandas::{read_frame, write_frame, Frame, ParquetOptions};
//!
//! let dir = std::env::temp_dir().join(format!("sciio-pandas-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("f.parquet");
//! let frame = Frame::builder()
//!     .column("n", Arc::new(Int64Array::from(vec![1, 2, 3])))
//!     .index_level(Some("key"), Arc::new(StringArray::from(vec!["a", "b", "c"])))
//!     .build()?;
//! write_frame(&path, &frame, &ParquetOptions::default())?;
//! let back = read_frame(&path)?;
//! assert_eq!(back.schema().index()[0].name(), Some("key"));
//! assert_eq!(back.strings("n").is_err(), false); // ints print as strings too
//! # std::fs::remove_dir_all(&dir).unwrap();
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

mod categorical;
mod column_lanes;
mod encode_pool;
mod fixed_list;
mod footer;
mod frame;
mod frame_json;
pub mod metadata;
mod numpy;
mod parquet_error;
mod parquet_io;
mod rle_codes;
mod schema;
mod spliced;

#[doc(hidden)]
pub use fixed_list::chunks_encoded_here as fixed_list_chunks_encoded_here;
pub use frame::{period_freq, Frame, FrameBuilder, PERIOD_EXTENSION};
pub use metadata::{
    ColumnMeta, Creator, IndexDescriptor, ObjectEncoding, PandasMetadata, PandasType, RangeIndex,
    PANDAS_KEY,
};
pub use numpy::{array_to_masked_ndarray, array_to_ndarray, NestedFields, MASK_SUFFIX};
pub use parquet_io::{
    copy_parquet, read_frame, read_frame_with, write_frame, BadMetadata, Compression,
    ParquetOptions, ParquetReader, ParquetWriter, ReadOptions,
};
pub use schema::{
    arrow_type_text, infer_column_meta, numpy_type_of, pandas_type_of, parse_py_tuple,
    py_tuple_repr, pyarrow_type_name, string_column_level, FrameColumn, FrameSchema, IndexLevel,
    WRITTEN_PANDAS_VERSION,
};

/// Re-exported so users name the same Arrow types sciio uses.
pub use arrow_array;
pub use arrow_schema;
pub use parquet;
