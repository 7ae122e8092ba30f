//! SQL over the files of scientific Python, on [DataFusion](datafusion): PyTables tables
//! and arrays, pandas HDFStore keys, `.npy`/`.npz` arrays (structured or plain) and Parquet,
//! each named in the query as the command line names it (`FROM 'run.h5:/t'`).
//!
//! - [`SqlSession`] runs queries: a single-quoted table name that is a file (`'x.npy'`,
//!   `'run.h5:/t'`, `'store.h5:/df'`, `'f.parquet'`) is opened when a query names it, or
//!   registered under a short name with [`SqlSession::register`]; results come back as Arrow
//!   record batches, or go to a Parquet file pandas reads ([`SqlSession::query_to_parquet`]).
//! - [`FileTable`] is the [`TableProvider`](datafusion::catalog::TableProvider) for the
//!   numpy, PyTables and HDFStore sources: it reads only the rows up to a query's limit and
//!   only the projected fields (their bytes alone from an HDF5 table or a store key's
//!   values blocks; whole interleaved records from a `.npy`/`.npz`, of which only the
//!   projected fields become columns). Parquet goes to DataFusion's own reader, its pandas
//!   index columns named as `reset_index()` names them.
//! - [`format_table`] prints results as `sciio`'s other tables are drawn.
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("t.h5");
//! # let ids = sciio::pandas::arrow_array::Int32Array::from_iter_values(0..1000);
//! # let frame = sciio::pandas::Frame::builder().column("id", std::sync::Arc::new(ids)).build()?;
//! # sciio::frames::write_pytables_table(&frame, &path, "/t", None)?;
//! let session = sciio_sql::SqlSession::new()?;
//! let sql = format!("SELECT count(*) AS n, sum(id) AS s FROM '{}:/t' WHERE id < 10", path.display());
//! let text = sciio_sql::format_table(&session.query(&sql)?)?;
//! assert!(text.contains("│ 10 ┆ 45 │"), "{text}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
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

mod error;
mod print;
mod session;
mod source;
mod table;

pub use datafusion;
pub use print::format_table;
pub use session::SqlSession;
pub use source::ReadStats;
pub use table::FileTable;
