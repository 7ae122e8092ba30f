//! Tables and frames as Arrow record batches with their pandas metadata.
//!
//! [`File::batches`] reads the rows of any table-like node as a stream of
//! [`RecordBatch`]es sharing one [`FrameSchema`] (the Arrow schema plus the pandas index,
//! column labels and dtypes pandas would restore):
//!
//! | source | streamed? |
//! |---|---|
//! | a Parquet file | yes, row group by row group (arrow-rs' reader; a batch never spans two row groups) |
//! | a PyTables `Table` or a 1-d structured array in HDF5 | yes, `rows` rows per read |
//! | a pandas HDFStore key (`df.to_hdf`) | read whole, then handed out in batches |
//! | a structured `.npy` / `.npz` member | read whole, then handed out in batches |
//!
//! Structured fields become columns as [`Frame::from_structured`] maps them (subarray fields
//! as fixed-size lists); a field with no Arrow equivalent is an error naming it.
//! [`write_pytables_table`] writes batches back as a PyTables `Table`.

#[cfg(feature = "hdf5")]
use std::path::Path;

use sciio_core::{Error, Result};
use sciio_pandas::arrow_array::RecordBatch;
use sciio_pandas::{Frame, FrameSchema};

use crate::file::File;
use crate::node::NodeKind;

/// Rows per batch when the caller has no preference (as pyarrow's default batch size).
pub const DEFAULT_BATCH_ROWS: usize = 65_536;

/// A stream of record batches of one frame: call [`Batches::schema`] for what they hold.
pub struct Batches<'a> {
    schema: FrameSchema,
    next: Box<dyn FnMut() -> Option<Result<RecordBatch>> + 'a>,
}

impl std::fmt::Debug for Batches<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batches")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl Batches<'_> {
    /// The schema every batch has, with the pandas metadata.
    pub fn schema(&self) -> &FrameSchema {
        &self.schema
    }

    /// Reads the remaining batches into one [`Frame`].
    pub fn into_frame(self) -> Result<Frame> {
        let schema = self.schema.clone();
        let batches = self.collect::<Result<Vec<_>>>()?;
        Frame::new(schema, batches)
    }
}

impl Iterator for Batches<'_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        (self.next)()
    }
}

impl File {
    /// The rows of the table-like node at `node` (`"/"` for a Parquet file or a `.npy`) as
    /// record batches of at most `rows` rows (0: [`DEFAULT_BATCH_ROWS`]); see
    /// [`crate::frames`] for what streams.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("t.h5");
    /// # let ids = sciio::pandas::arrow_array::Int32Array::from_iter_values(0..1000);
    /// # let frame = sciio::pandas::Frame::builder().column("id", std::sync::Arc::new(ids)).build()?;
    /// # sciio::frames::write_pytables_table(&frame, &path, "/t", None)?;
    /// let mut file = sciio::open(&path)?;
    /// let mut total = 0;
    /// for batch in file.batches("/t", 256)? {
    ///     total += batch?.num_rows();
    /// }
    /// assert_eq!(total, 1000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn batches(&mut self, node: &str, rows: usize) -> Result<Batches<'_>> {
        let rows = if rows == 0 { DEFAULT_BATCH_ROWS } else { rows };
        let path = self.path().to_path_buf();
        let located = |e: Error| e.with_file(&path).with_node(node.to_string());
        if matches!(self.root().kind, NodeKind::Frame { .. }) {
            return parquet_batches(self, rows).map_err(located);
        }
        #[cfg(feature = "hdfstore")]
        if let Some(frame) = self.store_key_frame(node).map_err(located)? {
            return in_batches(frame, rows);
        }
        #[cfg(feature = "hdf5")]
        if self.format() == crate::Format::Hdf5 {
            return self.hdf5_table_batches(node, rows).map_err(located);
        }
        let array = self.read_array(node)?;
        in_batches(Frame::from_structured(&array).map_err(located)?, rows)
    }

    /// The data frame held by a Parquet file (`node` `None` or `"/"`) or by a pandas HDFStore
    /// key (`store.h5`, `"/df"`), read whole; `None` when the file or node holds no frame.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("f.parquet");
    /// # let n = sciio::pandas::arrow_array::Int64Array::from(vec![1, 2, 3]);
    /// # let frame = sciio::pandas::Frame::builder().column("n", std::sync::Arc::new(n)).build()?;
    /// # sciio::pandas::write_frame(&path, &frame, &Default::default())?;
    /// let frame = sciio::open(&path)?.frame(None)?.expect("a Parquet file is a frame");
    /// let doc = frame.to_json(0..2)?; // pandas' orient="split"
    /// assert_eq!(doc["data"], serde_json::json!([[1], [2]]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn frame(&self, node: Option<&str>) -> Result<Option<Frame>> {
        let located = |e: Error| {
            let e = e.with_file(self.path());
            match node {
                Some(n) => e.with_node(n.to_string()),
                None => e,
            }
        };
        if matches!(self.root().kind, NodeKind::Frame { .. }) {
            if let Some(n) = node.filter(|n| !n.trim_matches('/').is_empty()) {
                return Err(Error::not_found(format!(
                    "a Parquet file is one data frame without nodes; drop ':{n}'"
                ))
                .with_file(self.path()));
            }
            #[cfg(feature = "parquet")]
            return crate::parquet::read_frame(self.path(), self.limits())
                .map(Some)
                .map_err(located);
        }
        #[cfg(feature = "hdfstore")]
        if let Some(node) = node {
            return self.store_key_frame(node).map_err(located);
        }
        let _ = located;
        Ok(None)
    }

    /// The frame of a pandas HDFStore key at `node`, `None` when `node` is not one.
    #[cfg(feature = "hdfstore")]
    fn store_key_frame(&self, node: &str) -> Result<Option<Frame>> {
        let Some(store) = self.hdf_store() else {
            return Ok(None);
        };
        match crate::store::frame_key(&store, node, || self.is_group(node))? {
            Some(key) => store.read(&key).map(Some),
            None => Ok(None),
        }
    }

    /// A PyTables Table (or 1-d structured dataset) read `rows` rows at a time.
    #[cfg(feature = "hdf5")]
    fn hdf5_table_batches(&mut self, node: &str, rows: usize) -> Result<Batches<'_>> {
        let info = self
            .node(node)?
            .array_info()
            .cloned()
            .ok_or_else(|| Error::mismatch("not a table or array"))?;
        let [len] = info.shape[..] else {
            return Err(Error::mismatch(format!(
                "a table has one dimension; this array has shape {:?}",
                info.shape
            )));
        };
        let node = node.to_string();
        let first = self.read_row_range(&node, 0, len.min(rows))?;
        let schema = Frame::from_structured(&first)?.schema().clone();
        let mut start = 0usize;
        let mut pending = std::collections::VecDeque::new();
        let file: &File = self;
        let next = move || loop {
            if let Some(batch) = pending.pop_front() {
                return Some(Ok(batch));
            }
            if start >= len {
                return None;
            }
            let stop = len.min(start.saturating_add(rows));
            let block = file
                .read_row_range(&node, start, stop)
                .and_then(|block| Frame::from_structured(&block))
                .and_then(|frame| check_rows(frame, stop - start));
            start = stop;
            match block {
                Ok(batches) => pending.extend(batches),
                Err(e) => {
                    start = len;
                    return Some(Err(e));
                }
            }
        };
        Ok(Batches {
            schema,
            next: Box::new(next),
        })
    }
}

/// A Parquet file's batches, streamed by the Parquet reader.
fn parquet_batches(file: &File, rows: usize) -> Result<Batches<'static>> {
    let options = sciio_pandas::ReadOptions::new()
        .batch_size(rows)
        .limits(*file.limits());
    let reader = sciio_pandas::ParquetReader::open_with(file.path(), &options)?;
    let schema = reader.schema().clone();
    let mut reader = reader;
    Ok(Batches {
        schema,
        next: Box::new(move || reader.next()),
    })
}

/// A frame already in memory, handed out `rows` rows at a time.
fn in_batches(frame: Frame, rows: usize) -> Result<Batches<'static>> {
    let (schema, batches) = frame.into_parts();
    let mut pieces = batches
        .into_iter()
        .flat_map(move |b| {
            let n = b.num_rows();
            (0..n.max(1))
                .step_by(rows)
                .map(move |at| b.slice(at, rows.min(n - at.min(n))))
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>()
        .into_iter();
    Ok(Batches {
        schema,
        next: Box::new(move || pieces.next().map(Ok)),
    })
}

/// The batches of a frame built from `expected` rows.
#[cfg(feature = "hdf5")]
fn check_rows(frame: Frame, expected: usize) -> Result<Vec<RecordBatch>> {
    let (_, batches) = frame.into_parts();
    let got: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if got != expected {
        return Err(Error::format(format!(
            "a block of {expected} rows read as {got} rows"
        )));
    }
    Ok(batches)
}

/// Writes `frame` as the PyTables `Table` `node` of a new file `dst` (one field per column
/// PyTables has a type for, the index as leading fields unless it is a RangeIndex), as
/// `sciio convert x.parquet dst:node` does; a column with no PyTables type is an error naming
/// it. `compress` takes [`crate::CompressSpec`]'s syntax (`"zlib:5"`, `"blosc2:lz4"`).
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// use std::sync::Arc;
/// use sciio::pandas::{arrow_array::Int64Array, Frame};
/// let frame = Frame::builder().column("n", Arc::new(Int64Array::from(vec![1, 2, 3]))).build()?;
/// let dst = dir.path().join("t.h5");
/// sciio::frames::write_pytables_table(&frame, &dst, "/readings", Some("zlib:1"))?;
/// assert_eq!(sciio::open(&dst)?.batches("/readings", 0)?.into_frame()?.num_rows(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "hdf5")]
pub fn write_pytables_table(
    frame: &Frame,
    dst: &Path,
    node: &str,
    compress: Option<&str>,
) -> Result<()> {
    let spec = compress
        .map(|c| c.parse::<crate::CompressSpec>())
        .transpose()?;
    let table = crate::parquet::records_of_frame(frame, dst)?;
    let mut out = crate::h5write::H5Out::create(dst, spec.as_ref())?;
    out.write(node.trim_start_matches('/'), &table)
        .map_err(|e| e.with_file(dst))?;
    out.finish(dst)
}
