//! What a `FILE[:NODE]` holds as a table for SQL, and its rows read block by block: only the
//! fields a query uses are read, and no row past its limit is read.
//!
//! - rows of arrays ([`Shape::Rows`]): a `.npy`, a `.npz` member, a PyTables `Table` or any
//!   HDF5 dataset, read along its first axis `BLOCK_ROWS` rows at a time
//!   (`File::read_array_rows`: a hyperslab in HDF5, a seek in `.npy`). Of a structured
//!   dtype only the fields holding projected columns are read (`File::read_array_fields`):
//!   an HDF5 compound through a memory type of those fields alone, so libhdf5 converts only
//!   their bytes; a `.npy`/`.npz` stores records interleaved, so its rows' whole records are
//!   read and only the projected fields become Arrow columns. No projected field
//!   (`count(*)`) reads nothing. A plain array is one column named after its node (a
//!   fixed-size list per row past 1-d);
//! - a pandas HDFStore key ([`Shape::StoreKey`]): the frame `pd.read_hdf(f, key).reset_index()`
//!   gives, a `table` key in slices of `BLOCK_ROWS` rows (`HdfStore::read_rows_of`: only the
//!   index and the values blocks and data columns holding projected columns are read; a
//!   values block is one field, read whole), a `fixed` frame or Series key batch by batch
//!   in order (`HdfStore::fixed_batches`: number blocks — a Series' values — and a plain
//!   number or datetime index read by row ranges, a MultiIndex's or CategoricalIndex's codes
//!   too, only the blocks holding projected columns read; a string block's pickle, one
//!   object by the format, parsed as a stream; other blocks and indexes read whole and
//!   sliced), any other key whole.
//!
//! A source of no rows has the schema of a read of no rows (its columns and types).
//!
//! Parquet files are not here: DataFusion's own reader takes them (see `session.rs`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use sciio::core::DType;
use sciio::hdfstore::{HdfStore, StoreKey};
use sciio::pandas::Frame;
use sciio::{Error, Format, Result};

/// Rows read per block: what one batch holds.
pub(crate) const BLOCK_ROWS: u64 = 65_536;

/// How a node's rows are read.
#[derive(Debug, Clone)]
pub(crate) enum Shape {
    /// Rows along the first axis of the array at `node`; `label` names the one column of a
    /// plain (not structured) array.
    Rows {
        node: String,
        rows: u64,
        label: String,
        /// The top-level fields of a structured array, in order (empty for a plain one).
        fields: Vec<String>,
    },
    /// A pandas HDFStore key; `unnamed_series` when it holds a Series without a name
    /// (`reset_index()` calls its values `0`).
    StoreKey { key: String, unnamed_series: bool },
}

/// A table-like node of a file, with its Arrow schema (no metadata).
#[derive(Debug, Clone)]
pub(crate) struct Source {
    pub(crate) path: PathBuf,
    pub(crate) shape: Shape,
    pub(crate) schema: SchemaRef,
}

/// What the reads of a table have done, for the tests of projection and limit pushdown.
#[derive(Debug, Default)]
pub struct ReadStats {
    rows: AtomicU64,
    columns: AtomicU64,
    bytes: AtomicU64,
}

impl ReadStats {
    /// Rows read from the file so far (whole blocks).
    pub fn rows_read(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }

    /// Arrow columns built so far, summed over blocks (only projected fields are built).
    pub fn columns_built(&self) -> u64 {
        self.columns.load(Ordering::Relaxed)
    }

    /// Bytes of rows read from the file so far, as they were converted out of it: the
    /// projected fields of an HDF5 table's rows (a memory type of those fields alone), whole
    /// records of a `.npy`/`.npz` (stored interleaved), the fields of a store key's table
    /// that hold the projected columns.
    pub fn bytes_read(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    fn add_bytes(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    fn add(&self, batch: &RecordBatch) {
        self.rows
            .fetch_add(batch.num_rows() as u64, Ordering::Relaxed);
        self.columns
            .fetch_add(batch.num_columns() as u64, Ordering::Relaxed);
    }
}

impl Source {
    /// The table at `node` of `path` (`None`: the file's one array, or its root).
    pub(crate) fn open(path: &Path, node: Option<&str>) -> Result<Source> {
        let mut file = sciio::open(path)?;
        if file.format() == Format::Parquet {
            return Err(Error::invalid_input(
                "a Parquet file is read by DataFusion's reader, not as a sciio table",
            )
            .with_file(path));
        }
        if file.format() == Format::Hdf5 {
            if let Some(key) = node.map(|n| store_key(path, n)).transpose()?.flatten() {
                let series = key.pandas_type.starts_with("series");
                let (schema, unnamed_series) = store_schema(path, &key.key, series)?;
                let shape = Shape::StoreKey {
                    key: key.key,
                    unnamed_series,
                };
                return Ok(Source {
                    path: path.to_path_buf(),
                    shape,
                    schema,
                });
            }
        }
        let node = file.single_array_path(node)?;
        let info = file
            .node(&node)?
            .array_info()
            .cloned()
            .ok_or_else(|| Error::mismatch("not an array or table").with_node(node.clone()))?;
        let rows = info.shape.first().copied().ok_or_else(|| {
            Error::mismatch("a 0-d array has no rows to query")
                .with_file(path)
                .with_node(node.clone())
        })? as u64;
        if matches!(info.dtype, DType::Record(_)) && info.shape.len() > 1 {
            return Err(Error::unsupported(format!(
                "a structured array of shape {:?}: SQL reads rows of records (one dimension)",
                info.shape
            ))
            .with_file(path)
            .with_node(node));
        }
        let label = column_label(path, &node);
        let fields = match &info.dtype {
            DType::Record(record) => record.fields.iter().map(|f| f.name.clone()).collect(),
            _ => Vec::new(),
        };
        let mut source = Source {
            path: path.to_path_buf(),
            shape: Shape::Rows {
                node,
                rows,
                label,
                fields,
            },
            schema: Arc::new(Schema::empty()),
        };
        // The schema of a block of at most one row: every column's type, nothing else read.
        let (first, _) = source.read_block(&mut file, 0, rows.min(1), None)?;
        source.schema = first.schema();
        Ok(source)
    }

    /// Batches of the columns at `projection` (all when `None`), `limit` rows at most,
    /// counted into `stats`; the file is opened again by the caller's thread.
    pub(crate) fn batches(
        &self,
        projection: Option<Vec<usize>>,
        limit: Option<usize>,
        stats: Arc<ReadStats>,
    ) -> Box<dyn Iterator<Item = Result<RecordBatch>> + Send> {
        let wanted = limit.map_or(u64::MAX, |n| n as u64);
        let source = self.clone();
        let mut start = 0u64;
        let mut failed = false;
        let mut store: Option<StoreReader> = None;
        let mut file: Option<sciio::File> = None;
        Box::new(std::iter::from_fn(move || {
            if failed || start >= wanted {
                return None;
            }
            let batch = match &source.shape {
                Shape::Rows { rows, .. } => {
                    let stop = (*rows).min(wanted).min(start.saturating_add(BLOCK_ROWS));
                    if start >= stop {
                        return None;
                    }
                    let opened = match &mut file {
                        Some(f) => f,
                        None => match sciio::open(&source.path) {
                            Ok(f) => file.insert(f),
                            Err(e) => {
                                failed = true;
                                return Some(Err(e));
                            }
                        },
                    };
                    let batch = source.read_block(opened, start, stop, projection.as_deref());
                    start = stop;
                    batch.map(|(b, bytes)| {
                        stats.add_bytes(bytes);
                        b
                    })
                }
                Shape::StoreKey {
                    key,
                    unnamed_series,
                } => {
                    let reader = match &mut store {
                        Some(r) => r,
                        None => match StoreReader::open(&source.path, key) {
                            Ok(r) => store.insert(r),
                            Err(e) => {
                                failed = true;
                                return Some(Err(e));
                            }
                        },
                    };
                    let columns: Option<Vec<String>> = projection.as_deref().map(|p| {
                        let names = names_at(&source.schema, p);
                        names
                            .iter()
                            .map(|n| stored_label(n, *unnamed_series))
                            .collect()
                    });
                    let frame = reader.next(columns.as_deref())?;
                    let batch = frame
                        .and_then(|(f, bytes)| {
                            stats.add_bytes(bytes);
                            frame_batch(&f, *unnamed_series, &source.schema, projection.as_deref())
                        })
                        .map(|b| b.slice(0, b.num_rows().min((wanted - start) as usize)));
                    start += batch.as_ref().map_or(0, |b| b.num_rows() as u64);
                    batch
                }
            };
            if let Ok(b) = &batch {
                stats.add(b);
            }
            failed = batch.is_err();
            Some(batch)
        }))
    }

    /// Rows `start..stop` of a [`Shape::Rows`] source as one batch of the projected columns,
    /// and the bytes read for it. A structured array's rows are read with only the fields
    /// that hold projected columns (`File::read_array_fields`); no field at all (`count(*)`)
    /// reads nothing.
    fn read_block(
        &self,
        file: &mut sciio::File,
        start: u64,
        stop: u64,
        projection: Option<&[usize]>,
    ) -> Result<(RecordBatch, u64)> {
        let Shape::Rows {
            node,
            label,
            fields,
            ..
        } = &self.shape
        else {
            return Err(Error::mismatch("not rows of an array"));
        };
        let wanted: Option<Vec<String>> =
            projection.map(|p| p.iter().map(|&i| self.field_name(i)).collect());
        if wanted.as_ref().is_some_and(Vec::is_empty) {
            return Ok((select(Vec::new(), Some(&[]), stop - start)?, 0));
        }
        let needed = wanted.as_deref().map(|w| fields_holding(fields, w));
        let block = match needed.filter(|n| !fields.is_empty() && n.len() < fields.len()) {
            Some(needed) => file.read_array_fields(node, start, stop, &needed)?,
            None => file.read_array_rows(node, start, stop)?,
        };
        let bytes = block.nbytes() as u64;
        let located = |e: Error| e.with_file(&self.path).with_node(node.clone());
        let frame = match block.dtype() {
            DType::Record(_) => Frame::from_structured(&block).map_err(located)?,
            _ => Frame::from_ndarray(label, &block).map_err(located)?,
        };
        // The data columns only: a frame of an array carries a RangeIndex, no column here.
        let columns = frame
            .schema()
            .columns()
            .map(|c| {
                let label = c.label().unwrap_or(&c.field_name).to_string();
                frame.column(&label).map(|a| (label, a))
            })
            .collect::<Result<Vec<(String, ArrayRef)>>>()
            .map_err(located)?;
        Ok((select(columns, wanted.as_deref(), stop - start)?, bytes))
    }

    fn field_name(&self, i: usize) -> String {
        self.schema
            .fields()
            .get(i)
            .map_or_else(String::new, |f| f.name().clone())
    }
}

/// The key at `node` when it is a pandas key (a plain PyTables Table is read as rows).
fn store_key(path: &Path, node: &str) -> Result<Option<StoreKey>> {
    let store = HdfStore::open(path)?;
    Ok(store.key(node)?.filter(StoreKey::is_pandas))
}

/// The label under which a frame read from a store holds the column SQL calls `name`: an
/// unnamed Series' values are `0` in `reset_index()`, "None" in the frame read.
fn stored_label(name: &str, unnamed_series: bool) -> String {
    match name {
        SERIES_VALUES if unnamed_series => UNNAMED.to_string(),
        _ => name.to_string(),
    }
}

/// `reset_index()`'s name for the values of an unnamed Series.
const SERIES_VALUES: &str = "0";
/// The label [`Frame::column_arrays`] gives an unnamed column.
const UNNAMED: &str = "None";

/// A store key's frame as `reset_index()`'s columns: the index levels, then the data columns,
/// an unnamed Series' values called `0`.
fn reset_index_columns(frame: &Frame, unnamed_series: bool) -> Result<Vec<(String, ArrayRef)>> {
    let mut columns = frame.column_arrays()?;
    if unnamed_series {
        if let Some((name, _)) = columns.last_mut() {
            *name = SERIES_VALUES.to_string();
        }
    }
    Ok(columns)
}

/// A store key's columns (`reset_index()`'s), from its first slice, and whether it is a
/// Series without a name.
fn store_schema(path: &Path, key: &str, series: bool) -> Result<(SchemaRef, bool)> {
    let mut reader = StoreReader::open(path, key)?;
    let frame = match reader.next(None) {
        Some(frame) => frame?.0,
        None => HdfStore::open(path)?.read(key)?,
    };
    let unnamed_series = series && frame.schema().columns().all(|c| c.meta.name.is_none());
    let fields: Vec<Field> = reset_index_columns(&frame, unnamed_series)?
        .iter()
        .map(|(name, a)| Field::new(name, a.data_type().clone(), true))
        .collect();
    Ok((Arc::new(Schema::new(fields)), unnamed_series))
}

/// A store key's frames: `BLOCK_ROWS`-row slices of a `table` key, batches of a `fixed`
/// frame key (with the columns of the first call's projection), or another key whole.
struct StoreReader {
    store: HdfStore,
    key: String,
    how: ReadBy,
}

/// How a [`StoreReader`] reads its key.
enum ReadBy {
    /// A `table` key by row ranges: the rows in it, the next row.
    Rows { rows: u64, next: u64 },
    /// A `fixed` frame or Series key in order: its batches once the first call opened them
    /// (with its projection), and the bytes counted so far.
    Batches {
        batches: Option<Box<sciio::hdfstore::FixedKeyBatches>>,
        counted: u64,
    },
    /// Any other key, read whole on the first call.
    Whole { read: bool },
}

impl StoreReader {
    fn open(path: &Path, key: &str) -> Result<StoreReader> {
        let store = HdfStore::open(path)?;
        let format = store.key(key)?;
        let how = match format {
            Some(k) if k.format() == "table" => match store.read_batches(key, 1)? {
                Some(b) => ReadBy::Rows {
                    rows: b.num_rows(),
                    next: 0,
                },
                None => ReadBy::Whole { read: false },
            },
            Some(k) if matches!(k.pandas_type.as_str(), "frame" | "series") => ReadBy::Batches {
                batches: None,
                counted: 0,
            },
            _ => ReadBy::Whole { read: false },
        };
        Ok(StoreReader {
            store,
            key: key.to_string(),
            how,
        })
    }

    /// The next slice with the columns named `columns` (all when `None`) and the bytes of
    /// the key's rows read for it (0 for a key read whole: not counted).
    fn next(&mut self, columns: Option<&[String]>) -> Option<Result<(Frame, u64)>> {
        match &mut self.how {
            ReadBy::Rows { rows, next } if *next < *rows => {
                let stop = (*rows).min(next.saturating_add(BLOCK_ROWS));
                let read = self.store.read_rows_of(&self.key, *next, stop, columns);
                *next = stop;
                match read {
                    Ok(Some(read)) => Some(Ok((read.frame, read.bytes_read))),
                    Ok(None) => Some(Err(Error::mismatch("the key is no longer a table key"))),
                    Err(e) => Some(Err(e)),
                }
            }
            ReadBy::Rows { .. } => None,
            ReadBy::Batches { batches, counted } => {
                if batches.is_none() {
                    match self
                        .store
                        .fixed_batches(&self.key, BLOCK_ROWS as usize, columns)
                    {
                        Ok(Some(b)) => *batches = Some(Box::new(b)),
                        // A frame the stream does not read: whole.
                        Ok(None) => {
                            self.how = ReadBy::Whole { read: false };
                            return self.next(columns);
                        }
                        Err(e) => return Some(Err(e)),
                    }
                }
                let b = batches.as_mut()?;
                let frame = b.next()?;
                let bytes = b.bytes_read() - *counted;
                *counted = b.bytes_read();
                Some(frame.map(|f| (f, bytes)))
            }
            ReadBy::Whole { read: false } => {
                self.how = ReadBy::Whole { read: true };
                Some(self.store.read(&self.key).map(|f| (f, 0)))
            }
            ReadBy::Whole { read: true } => None,
        }
    }
}

/// The names of `schema`'s fields at `projection`.
fn names_at(schema: &SchemaRef, projection: &[usize]) -> Vec<String> {
    projection
        .iter()
        .filter_map(|&i| schema.fields().get(i).map(|f| f.name().clone()))
        .collect()
}

/// One batch of a store key's `reset_index()` columns, those at `projection` only.
fn frame_batch(
    frame: &Frame,
    unnamed_series: bool,
    schema: &SchemaRef,
    projection: Option<&[usize]>,
) -> Result<RecordBatch> {
    let wanted = projection.map(|p| names_at(schema, p));
    select(
        reset_index_columns(frame, unnamed_series)?,
        wanted.as_deref(),
        frame.num_rows() as u64,
    )
}

/// The columns named `wanted` (all when `None`), in that order, as one batch of `rows` rows.
fn select(
    columns: Vec<(String, ArrayRef)>,
    wanted: Option<&[String]>,
    rows: u64,
) -> Result<RecordBatch> {
    let picked: Vec<(String, ArrayRef)> = match wanted {
        None => columns,
        Some(names) => names
            .iter()
            .map(|name| {
                columns
                    .iter()
                    .find(|(n, _)| n == name)
                    .cloned()
                    .ok_or_else(|| {
                        Error::not_found(format!("no column {name:?} in the block read"))
                    })
            })
            .collect::<Result<_>>()?,
    };
    let fields: Vec<Field> = picked
        .iter()
        .map(|(name, a)| Field::new(name, a.data_type().clone(), true))
        .collect();
    let arrays = picked.into_iter().map(|(_, a)| a).collect();
    let options = RecordBatchOptions::new().with_row_count(Some(rows as usize));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options)
        .map_err(|e| Error::mismatch(format!("columns of different lengths: {e}")))
}

/// The top-level `fields` that hold a column named in `names` (a nested record's columns are
/// `outer.inner`), in the fields' order.
fn fields_holding(fields: &[String], names: &[String]) -> Vec<String> {
    fields
        .iter()
        .filter(|f| {
            names.iter().any(|n| {
                n == *f
                    || n.strip_prefix(f.as_str())
                        .is_some_and(|r| r.starts_with('.'))
            })
        })
        .cloned()
        .collect()
}

/// The column name of a plain array: its node's last name, or the file's stem for a `.npy`.
fn column_label(path: &Path, node: &str) -> String {
    let name = node.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    if !name.is_empty() {
        return name.to_string();
    }
    path.file_stem().map_or_else(
        || "values".to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}
