//! pandas HDFStore files (`df.to_hdf`) through `sciio-hdfstore`, as [`File`](crate::File) reads
//! them: the keys `sciio ls` lists (each a group with a `pandas_type` attribute) and which node
//! is read as a frame. Conversions from and to stores are in `store_convert.rs`.

use std::path::Path;

use sciio_core::Result;
use sciio_hdfstore::HdfStore;

/// `sciio ls`: every key with its format, shape and schema; a key that cannot be read is
/// listed with its reason. `None` when the file holds no key.
pub(crate) fn describe(store: &HdfStore, path: &Path) -> Result<Option<String>> {
    let keys = store.keys().map_err(|e| e.with_file(path))?;
    if !keys.iter().any(|k| k.is_pandas()) {
        // A plain PyTables file: its Tables are listed as nodes, not as frames.
        return Ok(None);
    }
    let mut out = format!("pandas HDFStore: {} key(s)\n", keys.len());
    for key in keys {
        let kind = if key.pandas_type.to_ascii_lowercase().contains("series") {
            "series"
        } else {
            "frame"
        };
        match key_schema(store, &key) {
            Ok((frame, rows, left_out)) => {
                out += &format!(
                    "\n{} ({} {kind}, {rows} rows × {} columns)\n",
                    key.key,
                    key.format(),
                    frame.schema().columns().count()
                );
                for line in frame.schema().describe().lines() {
                    out += &format!("  {line}\n");
                }
                for c in left_out {
                    out += &format!("  {:?}: left out ({})\n", c.column, c.reason);
                }
            }
            Err(e) => {
                out += &format!(
                    "\n{} ({} {kind}): cannot read: {}\n",
                    key.key,
                    key.format(),
                    e.message()
                )
            }
        }
    }
    Ok(Some(out))
}

/// What `ls` shows of a key: a frame of its schema, its rows, the columns left out. A
/// `fixed` frame or Series that reads as a stream is read for its first row (string
/// pickles scanned without keeping their text), any other key whole.
fn key_schema(
    store: &HdfStore,
    key: &sciio_hdfstore::StoreKey,
) -> Result<(sciio_pandas::Frame, u64, Vec<sciio_hdfstore::LeftOutColumn>)> {
    if key.format() == "fixed" {
        if let Some(mut batches) = store.read_batches(&key.key, 1)? {
            if let Some(first) = batches.next().transpose()? {
                return Ok((first, batches.num_rows(), batches.left_out().to_vec()));
            }
        }
    }
    let (frame, left_out) = store.read_leaving_out(&key.key)?;
    let rows = frame.num_rows() as u64;
    Ok((frame, rows, left_out))
}

/// The key at `node` when it is read as a pandas frame: a pandas key, or a group holding a
/// plain Table pandas reads (generic_table). A Table node itself keeps the PyTables reading
/// (`cat`) and conversion (with its attributes). `is_group`: whether `node` is a group of the
/// file's tree.
pub(crate) fn frame_key(
    store: &HdfStore,
    node: &str,
    is_group: impl FnOnce() -> bool,
) -> Result<Option<String>> {
    Ok(match store.key(node)? {
        Some(key) if key.is_pandas() || is_group() => Some(key.key),
        _ => None,
    })
}
