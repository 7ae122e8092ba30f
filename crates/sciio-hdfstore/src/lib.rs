//! pandas `HDFStore` files (`df.to_hdf`, `pd.HDFStore`) read into [`sciio_pandas::Frame`]s, as
//! `pd.read_hdf(path, key)` returns them.
//!
//! A store is a PyTables file whose groups carrying a `pandas_type` attribute are its keys
//! (`/df`, nested `/a/b/df`). pandas lays a key out in one of two formats (the reference is
//! pandas' own `pandas/io/pytables.py`):
//!
//! * `fixed` (`pandas_type` `frame` / `series`): the axes and blocks of the frame's block
//!   manager as arrays; string (object) blocks as a pickled numpy object array in a VLArray.
//! * `table` (`frame_table`, `appendable_*`): one PyTables Table.
//!
//! Pickled attributes and object arrays are read with [`sciio_pickle`], which builds a tree of
//! values and never runs anything; only the shapes pandas writes are interpreted, by name.
//! Anything else is a one-line error naming the key and the attribute.
//!
//! ```no_run
//! let store = sciio_hdfstore::HdfStore::open("store.h5")?;
//! for key in store.keys()? {
//!     println!("{} ({})", key.key, key.pandas_type);
//! }
//! let frame = store.read("/df")?;
//! println!("{}", frame.to_text(10)?);
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

mod attrs;
mod column;
mod fixed;
mod offsets;
mod pyobj;
mod table;
pub mod write;
mod zone;

use std::path::{Path, PathBuf};

use sciio_core::{Error, Result};
use sciio_pandas::Frame;
use sciio_pytables::{NodeClass, NodeInfo, PtFile};

use crate::attrs::Attrs;

pub use write::{
    field_needs, write, write_streamed, DataColumns, FieldNeed, FramePasses, StoreFormat, Survey,
    WriteOptions, Written,
};

/// A column of a key that the frame read does not hold, and why (Arrow has no type for it,
/// or its objects are not of one kind sciio reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOutColumn {
    /// The column's label.
    pub column: String,
    /// Why it is left out.
    pub reason: String,
}

/// One key of a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreKey {
    /// The key's path (`/df`, `/a/b/df`).
    pub key: String,
    /// Its `pandas_type` attribute (`frame`, `series`, `frame_table`, ...).
    pub pandas_type: String,
    /// Its `table_type` attribute (`table` format only).
    pub table_type: Option<String>,
}

impl StoreKey {
    /// Whether pandas wrote this key (it has a `pandas_type`), rather than it being a plain
    /// PyTables Table pandas reads as a `generic_table`.
    pub fn is_pandas(&self) -> bool {
        self.pandas_type != "generic_table"
    }

    /// `"fixed"` or `"table"`, as pandas' `HDFStore.info()` names the format.
    pub fn format(&self) -> &'static str {
        if self.pandas_type.ends_with("_table") || self.table_type.is_some() {
            "table"
        } else {
            "fixed"
        }
    }
}

/// A pandas HDFStore opened for reading.
#[derive(Debug)]
pub struct HdfStore {
    file: PtFile,
    path: PathBuf,
}

impl HdfStore {
    /// Opens the store at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<HdfStore> {
        let path = path.as_ref();
        Ok(HdfStore {
            file: PtFile::open(path)?,
            path: path.to_path_buf(),
        })
    }

    /// A store over an already opened PyTables file.
    pub fn from_file(file: PtFile, path: impl AsRef<Path>) -> HdfStore {
        HdfStore {
            file,
            path: path.as_ref().to_path_buf(),
        }
    }

    /// The keys: every group with a `pandas_type` attribute (its children are not searched,
    /// as pandas' `HDFStore.keys()`), in name order.
    pub fn keys(&self) -> Result<Vec<StoreKey>> {
        let tree = self.file.tree(false).map_err(|e| e.with_file(&self.path))?;
        let mut out = Vec::new();
        self.collect(&tree, &mut out)
            .map_err(|e| e.with_file(&self.path))?;
        Ok(out)
    }

    fn collect(&self, node: &NodeInfo, out: &mut Vec<StoreKey>) -> Result<()> {
        // A PyTables Table pandas did not write is a key too (pandas' generic_table): a
        // Table not named `table`, or a group holding a Table named `table`.
        let generic = |path: &str| StoreKey {
            key: path.to_string(),
            pandas_type: "generic_table".into(),
            table_type: Some("generic_table".into()),
        };
        if node.class == NodeClass::Table && !node.path.ends_with("/table") {
            out.push(generic(&node.path));
            return Ok(());
        }
        if node.class != NodeClass::Group {
            return Ok(());
        }
        if let Some(key) = self.key_at(&node.path)? {
            out.push(key);
            return Ok(());
        }
        let holds_table = node
            .children
            .iter()
            .any(|c| c.class == NodeClass::Table && c.path.ends_with("/table"));
        if holds_table {
            out.push(generic(&node.path));
        }
        for child in &node.children {
            self.collect(child, out)?;
        }
        Ok(())
    }

    /// The key at `path`, or `None` when `path` is not a key.
    pub fn key(&self, path: &str) -> Result<Option<StoreKey>> {
        self.key_at(&normalise(path))
            .map_err(|e| e.with_file(&self.path))
    }

    fn key_at(&self, path: &str) -> Result<Option<StoreKey>> {
        let node = self.file.node(path)?;
        let generic = || StoreKey {
            key: path.to_string(),
            pandas_type: "generic_table".into(),
            table_type: Some("generic_table".into()),
        };
        if node.class == NodeClass::Table {
            return Ok((!path.ends_with("/table")).then(generic));
        }
        let attrs = Attrs::read(&self.file, path)?;
        let Some(pandas_type) = attrs.str("pandas_type")? else {
            let table = format!("{path}/table");
            let holds_table =
                matches!(self.file.node(&table), Ok(n) if n.class == NodeClass::Table);
            return Ok(holds_table.then(generic));
        };
        Ok(Some(StoreKey {
            key: path.to_string(),
            pandas_type,
            table_type: attrs.str("table_type").unwrap_or(None),
        }))
    }

    /// Whether `path` is a key of this store (a group with a `pandas_type` attribute).
    pub fn is_key(&self, path: &str) -> bool {
        matches!(self.key_at(&normalise(path)), Ok(Some(_)))
    }

    /// Reads `key` as `pd.read_hdf(path, key)` returns it; a series becomes a one-column frame
    /// labelled by its name (pandas' `None` label when unnamed). A column the frame cannot
    /// hold (complex numbers, objects of mixed kinds) is an error naming it: use
    /// [`HdfStore::read_leaving_out`] to read the rest.
    pub fn read(&self, key: &str) -> Result<Frame> {
        let (frame, left_out) = self.read_leaving_out(key)?;
        match left_out.first() {
            None => Ok(frame),
            Some(c) => Err(
                Error::unsupported(format!("column {:?}: {}", c.column, c.reason))
                    .with_node(normalise(key))
                    .with_file(&self.path),
            ),
        }
    }

    /// Reads `key` as [`HdfStore::read`] does, leaving out the columns the frame cannot hold
    /// (returned with the reason each is left out).
    pub fn read_leaving_out(&self, key: &str) -> Result<(Frame, Vec<LeftOutColumn>)> {
        let key = normalise(key);
        let mut left_out = Vec::new();
        let frame = self
            .read_key(&key, &mut left_out)
            .map_err(|e| locate(e, &key).with_file(&self.path))?;
        Ok((frame, left_out))
    }

    fn read_key(&self, key: &str, left_out: &mut Vec<LeftOutColumn>) -> Result<Frame> {
        let info = self.key_at(key)?.ok_or_else(|| {
            Error::not_found("not a pandas key (a group with a pandas_type attribute)")
        })?;
        if info.pandas_type == "generic_table" {
            let node = self.file.node(key)?;
            let table = if node.class == NodeClass::Table {
                key.to_string()
            } else {
                format!("{key}/table")
            };
            return table::read_generic(&self.file, &table);
        }
        let attrs = Attrs::read(&self.file, key)?;
        match info.pandas_type.as_str() {
            "frame" => fixed::read_frame(&self.file, key, &attrs, left_out),
            "series" => fixed::read_series(&self.file, key, &attrs, left_out),
            "frame_table" => table::read(&self.file, key, &attrs, false, left_out),
            "Series" | "TimeSeries" => fixed::read_legacy(&self.file, key, &attrs, false),
            "DataFrame" | "DataMatrix" => fixed::read_legacy(&self.file, key, &attrs, true),
            "series_table" => table::read(&self.file, key, &attrs, true, left_out),
            other => Err(Error::unsupported(format!(
                "pandas_type {other:?} is not read yet (attribute pandas_type)"
            ))),
        }
    }

    /// Reads a `table`-format key in slices of `batch_rows` rows, each slice a frame of the
    /// same schema (`pd.read_hdf(..., start=, stop=)` slice by slice, the values blocks' text
    /// columns `str` in every slice: see [`FrameBatches::text_missing_throughout`]): memory is
    /// bounded by one slice whatever the key's length. A `fixed` frame or series with string
    /// or number blocks is read so too (as [`HdfStore::fixed_batches`] reads it): its strings
    /// parsed from their pickles as streams (in batches of at most 16 Ki rows), its numbers
    /// and a plain number or datetime index by row ranges, a MultiIndex's or
    /// CategoricalIndex's codes by row ranges into their values read whole. `None` for keys
    /// read whole only (other `fixed` keys, plain PyTables tables, empty tables): use
    /// [`HdfStore::read`].
    pub fn read_batches(&self, key: &str, batch_rows: usize) -> Result<Option<FrameBatches<'_>>> {
        let key = normalise(key);
        let located = |e: Error| locate(e, &key).with_file(&self.path);
        let Some(info) = self.key_at(&key).map_err(located)? else {
            return Ok(None);
        };
        if info.format() == "fixed" {
            let attrs = Attrs::read(&self.file, &key).map_err(located)?;
            let Some(fixed) = fixed::stream_key(
                &self.file,
                &key,
                &attrs,
                &info.pandas_type,
                batch_rows,
                None,
            )
            .map_err(located)?
            else {
                return Ok(None);
            };
            return Ok(Some(FrameBatches {
                store: self,
                key,
                attrs,
                series: false,
                rows: fixed.rows as u64,
                next: 0,
                batch_rows: batch_rows.max(1) as u64,
                left_out: fixed.left_out.clone(),
                columns: None,
                bytes_read: 0,
                null_text: Vec::new(),
                missing_text: None,
                fixed: Some(fixed),
            }));
        }
        self.table_batches(&key, batch_rows)
    }

    /// A `fixed` frame or series key (`pandas_type` frame or series) read in batches of at
    /// most `batch_rows` rows as [`HdfStore::read_batches`] reads it, with only the columns
    /// labelled in `columns` (the frame's labels, `"None"` for an unnamed series' values;
    /// `None`: all; the index is always read): a block holding none of them is not read.
    /// Number blocks (a series' `values`) and a plain index of numbers or times are read by
    /// row ranges, string blocks parsed from their pickles as streams; the codes of a
    /// MultiIndex or CategoricalIndex by row ranges, their levels or categories whole;
    /// other blocks (and other indexes) are read whole and sliced. The batches own what they
    /// read (a reader handed to another thread keeps them). `None` for any other key, or a
    /// key the stream does not read (use [`HdfStore::read`]).
    ///
    /// ```no_run
    /// let store = sciio_hdfstore::HdfStore::open("store.h5")?;
    /// if let Some(batches) = store.fixed_batches("/df", 65_536, Some(&["x".to_string()]))? {
    ///     for frame in batches {
    ///         println!("{} rows", frame?.num_rows());
    ///     }
    /// }
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn fixed_batches(
        &self,
        key: &str,
        batch_rows: usize,
        columns: Option<&[String]>,
    ) -> Result<Option<FixedKeyBatches>> {
        let key = normalise(key);
        let located = |e: Error| locate(e, &key).with_file(&self.path);
        let Some(info) = self.key_at(&key).map_err(located)? else {
            return Ok(None);
        };
        if info.format() != "fixed" {
            return Ok(None);
        }
        let attrs = Attrs::read(&self.file, &key).map_err(located)?;
        let batches = fixed::stream_key(
            &self.file,
            &key,
            &attrs,
            &info.pandas_type,
            batch_rows,
            columns,
        )
        .map_err(located)?;
        Ok(batches.map(|inner| FixedKeyBatches {
            inner,
            key,
            path: self.path.clone(),
        }))
    }

    /// [`HdfStore::read_batches`] of a `table`-format key.
    fn table_batches(&self, key: &str, batch_rows: usize) -> Result<Option<FrameBatches<'_>>> {
        let key = normalise(key);
        let located = |e: Error| locate(e, &key).with_file(&self.path);
        let Some(info) = self.key_at(&key).map_err(located)? else {
            return Ok(None);
        };
        let series = match info.pandas_type.as_str() {
            "frame_table" => false,
            "series_table" => true,
            _ => return Ok(None),
        };
        let rows = self
            .file
            .node(&format!("{key}/table"))
            .map_err(located)?
            .shape
            .first()
            .copied()
            .unwrap_or(0);
        if rows == 0 {
            return Ok(None);
        }
        let attrs = Attrs::read(&self.file, &key).map_err(located)?;
        Ok(Some(FrameBatches {
            store: self,
            key,
            attrs,
            series,
            rows,
            next: 0,
            batch_rows: batch_rows.max(1) as u64,
            left_out: Vec::new(),
            columns: None,
            bytes_read: 0,
            null_text: Vec::new(),
            missing_text: None,
            fixed: None,
        }))
    }

    /// Rows `start..stop` (`stop` clamped to the key's length; an empty range is an error) of
    /// a `table`-format key as one frame, as `pd.read_hdf(path, key, start=start, stop=stop)`
    /// returns them — except that the values blocks' text columns are `str` even where every
    /// value of these rows is missing (pandas infers `object` then), so that the slices of one
    /// key share a schema — with the key's number of rows; `None` for keys read whole only
    /// (see [`HdfStore::read_batches`]). A reader that
    /// owns the store (a stream handed to another thread) reads slice by slice with this.
    ///
    /// ```no_run
    /// let store = sciio_hdfstore::HdfStore::open("store.h5")?;
    /// if let Some((frame, rows)) = store.read_rows("/df", 0, 100)? {
    ///     assert!(frame.num_rows() as u64 <= rows.min(100));
    /// }
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn read_rows(&self, key: &str, start: u64, stop: u64) -> Result<Option<(Frame, u64)>> {
        let read = self.read_rows_of(key, start, stop, None)?;
        Ok(read.map(|r| (r.frame, r.key_rows)))
    }

    /// Rows `start..stop` of a `table`-format key as [`HdfStore::read_rows`] reads them, with
    /// only the index and the frame columns named in `columns` (`reset_index()`'s labels;
    /// `None`: all), reading only the table fields that hold them: the index column, and the
    /// values blocks and data columns of those columns (the columns of a MultiIndex are read
    /// whatever `columns` says).
    ///
    /// ```no_run
    /// let store = sciio_hdfstore::HdfStore::open("store.h5")?;
    /// if let Some(read) = store.read_rows_of("/df", 0, 100, Some(&["x".to_string()]))? {
    ///     println!("{} rows, {} bytes read", read.frame.num_rows(), read.bytes_read);
    /// }
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn read_rows_of(
        &self,
        key: &str,
        start: u64,
        stop: u64,
        columns: Option<&[String]>,
    ) -> Result<Option<RowsRead>> {
        let Some(mut slices) = self.table_batches(key, 1)? else {
            return Ok(None);
        };
        slices.columns = columns.map(<[String]>::to_vec);
        let rows = slices.num_rows();
        if start >= stop.min(rows) {
            return Err(Error::invalid_input(format!(
                "rows {start}..{stop} of a key of {rows} rows hold no row"
            ))
            .with_node(normalise(key))
            .with_file(&self.path));
        }
        slices.next = start;
        slices.batch_rows = stop.min(rows) - start;
        let Some(frame) = slices.next().transpose()? else {
            return Ok(None);
        };
        Ok(Some(RowsRead {
            frame,
            key_rows: rows,
            bytes_read: slices.bytes_read,
        }))
    }

    /// The underlying PyTables file.
    pub fn pytables(&self) -> &PtFile {
        &self.file
    }
}

/// Rows of a `table` key read by [`HdfStore::read_rows_of`].
#[derive(Debug)]
#[non_exhaustive]
pub struct RowsRead {
    /// The rows, as `pd.read_hdf(path, key, start=, stop=)` returns them (the columns asked).
    pub frame: Frame,
    /// Rows in the key.
    pub key_rows: u64,
    /// Bytes of the table's rows read for them (only the fields that hold the columns asked).
    pub bytes_read: u64,
}

/// A `fixed` frame or series key read batch by batch ([`HdfStore::fixed_batches`]).
#[derive(Debug)]
pub struct FixedKeyBatches {
    inner: fixed::FixedBatches,
    key: String,
    path: PathBuf,
}

impl FixedKeyBatches {
    /// Rows in the key.
    pub fn num_rows(&self) -> u64 {
        self.inner.rows as u64
    }

    /// Bytes of the number blocks (a Series' values) and the index (its values, or its
    /// codes) read by row ranges so far (string blocks' pickles, a MultiIndex's levels, a
    /// CategoricalIndex's categories and whatever is read whole are not counted).
    pub fn bytes_read(&self) -> u64 {
        self.inner.bytes_read
    }

    /// The columns the batches leave out, with the reason.
    pub fn left_out(&self) -> &[LeftOutColumn] {
        &self.inner.left_out
    }
}

impl Iterator for FixedKeyBatches {
    type Item = Result<Frame>;

    fn next(&mut self) -> Option<Result<Frame>> {
        let (key, path) = (&self.key, &self.path);
        self.inner
            .next()
            .map(|r| r.map_err(|e| locate(e, key).with_file(path)))
    }
}

/// A `table` key read slice by slice ([`HdfStore::read_batches`]).
#[derive(Debug)]
pub struct FrameBatches<'a> {
    store: &'a HdfStore,
    key: String,
    attrs: Attrs,
    series: bool,
    rows: u64,
    next: u64,
    batch_rows: u64,
    left_out: Vec<LeftOutColumn>,
    /// The frame columns to read (`None`: all).
    columns: Option<Vec<String>>,
    bytes_read: u64,
    /// Text columns read as object columns of missing values ([`FrameBatches::missing_text_as_null`]).
    null_text: Vec<String>,
    /// The values blocks' text columns missing in every slice read so far (`None`: none read).
    missing_text: Option<Vec<String>>,
    /// A `fixed` frame read as a stream.
    fixed: Option<fixed::FixedBatches>,
}

impl FrameBatches<'_> {
    /// Rows in the key.
    pub fn num_rows(&self) -> u64 {
        self.rows
    }

    /// Rows of each slice when the key is a `fixed` frame or series read as a stream (its
    /// slices are at most 16 Ki rows with a string block, about 16 MiB of numbers without,
    /// whatever was asked): a writer that buffers no more than this many rows keeps the whole
    /// conversion small. `None` for `table` keys.
    pub fn stream_rows(&self) -> Option<usize> {
        self.fixed.as_ref().map(fixed::FixedBatches::batch_rows)
    }

    /// The columns the slices read so far leave out, with the reason (the same for every
    /// slice: known once the first is read).
    pub fn left_out(&self) -> &[LeftOutColumn] {
        &self.left_out
    }

    /// The text columns of values blocks that had no value in any slice read so far. Every
    /// slice holds them as `str` columns; once the last slice is read, these are the columns
    /// `pd.read_hdf` of the whole key gives as `object` columns of missing values (it infers
    /// text columns' dtypes from the values): read the key again with
    /// [`FrameBatches::missing_text_as_null`] to get the whole key's frame slice by slice.
    pub fn text_missing_throughout(&self) -> &[String] {
        self.missing_text.as_deref().unwrap_or_default()
    }

    /// Slices in which the text columns `labels` (found by
    /// [`FrameBatches::text_missing_throughout`]) are object columns of missing values
    /// (Arrow null), as `pd.read_hdf` of the whole key gives them, when they have no value.
    pub fn missing_text_as_null(mut self, labels: Vec<String>) -> Self {
        self.null_text = labels;
        self
    }
}

impl Iterator for FrameBatches<'_> {
    type Item = Result<Frame>;

    fn next(&mut self) -> Option<Result<Frame>> {
        if let Some(fixed) = &mut self.fixed {
            let (key, path) = (&self.key, &self.store.path);
            return fixed
                .next()
                .map(|r| r.map_err(|e| locate(e, key).with_file(path)));
        }
        if self.next >= self.rows {
            return None;
        }
        let stop = self.rows.min(self.next.saturating_add(self.batch_rows));
        let rows = table::RowsOf {
            rows: sciio_pytables::Rows::range(self.next, stop, 1),
            columns: self.columns.as_deref(),
            text_dtype: if self.null_text.is_empty() {
                table::TextDtype::Str
            } else {
                table::TextDtype::NullFor(&self.null_text)
            },
        };
        self.next = stop;
        let mut left_out = Vec::new();
        let read = table::read_rows(
            &self.store.file,
            &self.key,
            &self.attrs,
            self.series,
            rows,
            &mut left_out,
        )
        .map_err(|e| locate(e, &self.key).with_file(&self.store.path));
        self.left_out = left_out;
        Some(read.map(|slice| {
            self.bytes_read += slice.bytes;
            self.missing_text = Some(match self.missing_text.take() {
                None => slice.missing_text,
                Some(before) => before
                    .into_iter()
                    .filter(|l| slice.missing_text.contains(l))
                    .collect(),
            });
            slice.frame
        }))
    }
}

fn normalise(key: &str) -> String {
    format!("/{}", key.trim_matches('/'))
}

/// Names the key when the error names no node yet.
fn locate(e: Error, key: &str) -> Error {
    if e.location().node.is_some() {
        e
    } else {
        e.with_node(key.to_string())
    }
}
