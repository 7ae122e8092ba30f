//! Parquet files (pandas, pyarrow) in the neutral tree, through `sciio-pandas`: a file is one
//! [`NodeKind::Frame`] node with its column labels and row count. Frames are listed; reading
//! their values as arrays and converting them are not wired into the facade yet.

use std::path::Path;

use sciio_core::{Limits, Result};
use sciio_pandas::{ParquetReader, ReadOptions};

use crate::node::{Node, NodeKind};

/// The tree of a Parquet file: its frame.
pub(crate) fn open(path: &Path, limits: &Limits) -> Result<Node> {
    let options = ReadOptions::new().limits(*limits);
    let reader = ParquetReader::open_with(path, &options).map_err(|e| e.with_file(path))?;
    let columns = reader
        .schema()
        .columns()
        .map(|c| {
            c.label()
                .map_or_else(|| c.field_name.clone(), str::to_string)
        })
        .collect();
    Ok(Node::new(
        "",
        NodeKind::Frame {
            columns,
            rows: reader.num_rows(),
        },
    ))
}
