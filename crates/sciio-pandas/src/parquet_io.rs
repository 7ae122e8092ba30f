//! Reading and writing Parquet files with pandas metadata, streamed batch by batch / row group by
//! row group so memory stays bounded by the batch and row-group sizes, not the file.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::str::FromStr;
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowRowGroupWriterFactory};
use parquet::arrow::{add_encoded_arrow_schema_to_metadata, ArrowSchemaConverter, ProjectionMask};
use parquet::basic::{
    BrotliLevel, ConvertedType, GzipLevel, LogicalType, Type as PhysicalType, ZstdLevel,
};
use parquet::file::metadata::{FileMetaData, KeyValue, ParquetMetaData, ParquetMetaDataBuilder};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::ChunkReader;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;

use crate::categorical::{self, DictionaryChunk};
use crate::column_lanes::{self, Backlog, Chunk, ColumnEncoder, Lane, LaneJob, Piece};
use crate::encode_pool::{EncodePool, Pending};
use crate::fixed_list;
use crate::frame::Frame;
use crate::metadata::{PandasMetadata, PANDAS_KEY};
use crate::schema::FrameSchema;
use sciio_core::contain::contain_panics;
use sciio_core::{Error, ErrorKind, Limits, Result};

use crate::parquet_error::parquet_err;

fn arrow_err(e: arrow_schema::ArrowError) -> Error {
    match e {
        arrow_schema::ArrowError::IoError(m, io) => Error::io(m, io),
        other => Error::format(format!("parquet: {other}")),
    }
}

/// What to do when the `pandas` metadata of a file is unusable (bad JSON, wrong types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadMetadata {
    /// Fail with an [`ErrorKind::Format`] error (the default).
    Error,
    /// Read the data as plain Arrow with a default RangeIndex and record a warning
    /// ([`FrameSchema::warnings`]).
    Ignore,
}

/// Options for reading. Defaults: batches of 65 536 rows, [`BadMetadata::Error`],
/// [`Limits::default`], as many decoding threads as the machine has cores (whole-file reads
/// only; streaming reads decode on the caller's thread).
#[derive(Debug, Clone)]
pub struct ReadOptions {
    batch_size: usize,
    bad_metadata: BadMetadata,
    limits: Limits,
    threads: usize,
    fields: Option<Vec<usize>>,
    dictionary_strings: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            batch_size: 65_536,
            bad_metadata: BadMetadata::Error,
            limits: Limits::default(),
            threads: std::thread::available_parallelism().map_or(1, usize::from),
            fields: None,
            dictionary_strings: false,
        }
    }
}

impl ReadOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }
    /// Rows per record batch (at least 1).
    pub fn batch_size(mut self, rows: usize) -> Self {
        self.batch_size = rows.max(1);
        self
    }
    /// What to do with unusable pandas metadata.
    pub fn bad_metadata(mut self, what: BadMetadata) -> Self {
        self.bad_metadata = what;
        self
    }
    /// Allocation limits (`max_header` bounds the metadata JSON).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
    /// Threads decoding row groups in [`read_frame_with`] (at least 1).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }
    /// A [`ParquetReader`] decoding only the fields at `positions` of the frame's Arrow schema
    /// ([`FrameSchema::arrow_schema`]; index columns are fields like the others, a range index
    /// none): its [`ParquetReader::schema`] stays the whole frame's, its batches hold the
    /// selected fields only, in the schema's order (duplicates once), typed as the schema
    /// types them ([`ParquetReader::batch_fields`]). Only the streaming reader projects.
    pub fn fields(mut self, positions: Vec<usize>) -> Self {
        self.fields = Some(positions);
        self
    }
    /// Batches hold the string columns that are dictionary-encoded in every row group as
    /// Arrow `Dictionary(Int32, <the string type>)` arrays: the file's dictionary and keys as
    /// they are, not a string per row (for a [`ParquetWriter`], which writes them back as the
    /// same string columns without interning every value again). The schema stays the
    /// frame's; only unprojected streaming reads do this.
    pub fn dictionary_strings(mut self, on: bool) -> Self {
        self.dictionary_strings = on;
        self
    }
}

/// A streaming reader: the [`FrameSchema`] up front, then record batches.
///
/// ```no_run
/// use sciio_pandas::ParquetReader;
/// let reader = ParquetReader::open("frame.parquet")?;
/// println!("{}", reader.schema());
/// for batch in reader {
///     let batch = batch?;
///     println!("{} rows", batch.num_rows());
/// }
/// # Ok::<(), sciio_core::Error>(())
/// ```
#[derive(Debug)]
pub struct ParquetReader {
    schema: FrameSchema,
    inner: GroupReaders,
    num_rows: u64,
    /// The file's categories of each categorical field (by position), read from the
    /// dictionary pages: arrow-rs's own dictionaries drop unused categories or reorder them.
    categories: HashMap<usize, ArrayRef>,
    physical: HashMap<usize, PhysicalType>,
    /// The selected row groups (index in the file, rows the footer gives it), in read order.
    groups: Vec<(usize, u64)>,
    /// The uncompressed bytes of the selected row groups, as the footer gives them.
    data_bytes: u64,
    /// Rows handed out so far.
    rows_read: u64,
    /// Set once a batch failed: the inner reader's state is then unknown.
    failed: bool,
    /// Why the selected row groups cannot be decoded within the limits, if so: the first
    /// read returns it ([`check_chunk_sizes`]).
    oversized: Option<Error>,
    /// Re-reads one row group column by column to name the column that fails to decode.
    probe: ColumnProbe,
    /// The frame's fields the batches hold (positions in the schema), in order.
    batch_fields: Vec<usize>,
    /// Whether the batches hold fewer fields than the schema ([`ReadOptions::fields`]).
    projected: bool,
    /// Each field's missing values in the selected row groups, from the footer's statistics
    /// (`None`: not a flat column, or a row group without the count).
    footer_nulls: Vec<Option<u64>>,
    /// The batches' schema when string columns are read as dictionaries
    /// ([`ReadOptions::dictionary_strings`]).
    dictionary_schema: Option<SchemaRef>,
}

/// A second handle on the input and its footer, used only after a decoding failure: each leaf
/// column of the failing row group is decoded alone (panics contained) to find the damaged one.
struct ColumnProbe {
    decode_alone: Box<dyn Fn(usize, usize) -> Result<()> + Send>,
    columns: Vec<String>,
}

impl std::fmt::Debug for ColumnProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ColumnProbe")
            .field("columns", &self.columns)
            .finish()
    }
}

impl ColumnProbe {
    fn new<R: ChunkReader + 'static>(input: Shared<R>, meta: ArrowReaderMetadata) -> Self {
        let columns = meta
            .parquet_schema()
            .columns()
            .iter()
            .map(|c| c.path().string())
            .collect();
        let decode_alone = move |group: usize, column: usize| -> Result<()> {
            let mask = ProjectionMask::leaves(meta.parquet_schema(), [column]);
            contain_panics("", || {
                let reader =
                    ParquetRecordBatchReaderBuilder::new_with_metadata(input.clone(), meta.clone())
                        .with_row_groups(vec![group])
                        .with_projection(mask)
                        .build()
                        .map_err(parquet_err)?;
                for batch in reader {
                    batch.map_err(arrow_err)?;
                }
                Ok(())
            })
        };
        ColumnProbe {
            decode_alone: Box::new(decode_alone),
            columns,
        }
    }

    /// The first leaf column of `group` that does not decode on its own.
    fn failing_column(&self, group: usize) -> Option<&str> {
        (0..self.columns.len())
            .find(|&c| (self.decode_alone)(group, c).is_err())
            .map(|c| self.columns[c].as_str())
    }
}

/// The input shared between the batch reader and the [`ColumnProbe`].
/// The batches of the selected row groups, from one arrow-rs reader per row group (built when
/// the previous one is done), so that a batch never spans two row groups: arrow-rs decodes a
/// dictionary-encoded column whose dictionary changes inside a batch value by value and
/// re-encodes it by hashing every value (the files polars writes: a dictionary per row group
/// of ~123,000 rows).
struct GroupReaders {
    open: Box<dyn FnMut(usize) -> Result<ParquetRecordBatchReader> + Send>,
    pending: std::vec::IntoIter<usize>,
    current: Option<ParquetRecordBatchReader>,
}

impl std::fmt::Debug for GroupReaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupReaders")
            .field("pending", &self.pending)
            .finish()
    }
}

impl GroupReaders {
    /// Opens the next row group's reader (none once every group is read).
    fn advance(&mut self) -> Result<()> {
        self.current = match self.pending.next() {
            Some(g) => Some((self.open)(g)?),
            None => None,
        };
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            let Some(reader) = self.current.as_mut() else {
                return Ok(None);
            };
            match reader.next() {
                Some(batch) => return batch.map(Some).map_err(arrow_err),
                None => self.advance()?,
            }
        }
    }
}

struct Shared<R>(Arc<R>);

impl<R> Clone for Shared<R> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<R: ChunkReader> parquet::file::reader::Length for Shared<R> {
    fn len(&self) -> u64 {
        self.0.len()
    }
}

impl<R: ChunkReader> ChunkReader for Shared<R> {
    type T = R::T;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        self.0.get_read(start)
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        self.0.get_bytes(start, length)
    }
}

impl ParquetReader {
    /// Opens a file with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Opens a file.
    pub fn open_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Self> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::io("cannot open", e).with_file(path))?;
        Self::new(file, options).map_err(|e| e.with_file(path))
    }

    /// Opens a file to read its row groups `groups` only, in that order (several readers of
    /// one file decode its parts on threads of their own).
    pub fn open_row_groups(
        path: impl AsRef<Path>,
        groups: Vec<usize>,
        options: &ReadOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::io("cannot open", e).with_file(path))?;
        let meta = load_metadata(&file).map_err(|e| e.with_file(path))?;
        Self::with_metadata(file, meta, Some(groups), options).map_err(|e| e.with_file(path))
    }

    /// Readers of the file's row groups dealt round-robin into `parts` selections (row group
    /// `g` to reader `g % parts`; fewer readers when the file has fewer row groups), the footer
    /// parsed once and each reader on a file handle of its own: each can decode on a thread of
    /// its own while the caller takes their batches in file order, a row group at a time
    /// ([`Self::group_rows`] tells where each reader's row groups end).
    pub fn open_interleaved(
        path: impl AsRef<Path>,
        parts: usize,
        options: &ReadOptions,
    ) -> Result<Vec<Self>> {
        let path = path.as_ref();
        let open = || File::open(path).map_err(|e| Error::io("cannot open", e).with_file(path));
        let file = open()?;
        let meta = load_metadata(&file).map_err(|e| e.with_file(path))?;
        let groups = meta.metadata().num_row_groups();
        let parts = parts.clamp(1, groups.max(1));
        let mut files = vec![file];
        for _ in 1..parts {
            // not `try_clone`: clones share one file offset, and arrow-rs seeks then reads
            files.push(open()?);
        }
        files
            .into_iter()
            .enumerate()
            .map(|(part, file)| {
                let selection = (part..groups).step_by(parts).collect();
                Self::with_metadata(file, meta.clone(), Some(selection), options)
                    .map_err(|e| e.with_file(path))
            })
            .collect()
    }

    /// Reads from bytes in memory.
    pub fn from_bytes(bytes: impl Into<bytes::Bytes>, options: &ReadOptions) -> Result<Self> {
        Self::new(bytes.into(), options)
    }

    /// Reads from any Parquet [`ChunkReader`] (a `File`, `bytes::Bytes`).
    pub fn new<R: ChunkReader + 'static>(input: R, options: &ReadOptions) -> Result<Self> {
        let meta = load_metadata(&input)?;
        Self::with_metadata(input, meta, None, options)
    }

    /// A reader of `row_groups` (all when `None`) of a file whose footer is parsed.
    fn with_metadata<R: ChunkReader + 'static>(
        input: R,
        meta: ArrowReaderMetadata,
        row_groups: Option<Vec<usize>>,
        options: &ReadOptions,
    ) -> Result<Self> {
        let (meta, footer_rows) = repaired(meta, &input)?;
        check_chunk_ranges(meta.metadata(), input.len())?;
        let file_meta = meta.metadata().file_metadata();
        // The row groups' counts are what pyarrow reads (some writers leave the footer's total
        // at 0: parquet-testing's repeated_no_annotation.parquet); a footer that disagrees is
        // reported as a warning, and every row group must then decode to its own count.
        let num_rows = row_group_rows(meta.metadata())?;
        let footer_warning = (footer_rows != num_rows).then(|| {
            format!(
                "the footer announces {footer_rows} rows, its row groups {num_rows}: \
                 read the row groups' rows, as pyarrow does"
            )
        });
        let raw = file_meta
            .key_value_metadata()
            .and_then(|kv| kv.iter().find(|k| k.key == PANDAS_KEY))
            .and_then(|k| k.value.clone())
            .or_else(|| meta.schema().metadata().get(PANDAS_KEY).cloned());
        let arrow: Schema = meta.schema().as_ref().clone();
        let (pandas, warning) = match raw {
            None => (None, None),
            Some(json) => match parse_checked(&json, &options.limits) {
                Ok(m) => (Some(m), None),
                Err(e) if options.bad_metadata == BadMetadata::Ignore => {
                    (None, Some(format!("pandas metadata ignored: {e}")))
                }
                Err(e) => return Err(e.with_node(PANDAS_KEY)),
            },
        };
        let mut schema = FrameSchema::from_arrow(&arrow, pandas, num_rows);
        // top-level Parquet leaf of each field name (flat columns only)
        let mut leaf_of = HashMap::new();
        for (i, col) in meta.parquet_schema().columns().iter().enumerate() {
            let json = matches!(col.logical_type_ref(), Some(LogicalType::Json))
                || col.converted_type() == ConvertedType::JSON;
            if col.path().parts().len() == 1 {
                if json {
                    schema.mark_json(col.name().to_string());
                }
                leaf_of.insert(col.name().to_string(), (i, col.physical_type()));
            }
        }
        for w in warning.into_iter().chain(footer_warning) {
            schema.add_warning(w);
        }
        let all_fields = schema.arrow_schema().fields().len();
        let batch_fields = selected_fields(options.fields.as_deref(), all_fields)?;
        let projected = batch_fields.len() != all_fields;
        // Categorical fields keyed by their position in the batches.
        let mut categorical = Vec::new();
        let mut physical = HashMap::new();
        for (at, &pos) in batch_fields.iter().enumerate() {
            let f = schema.arrow_schema().field(pos);
            if let (DataType::Dictionary(_, v), Some(&(leaf, p))) =
                (f.data_type(), leaf_of.get(f.name()))
            {
                categorical.push((at, leaf, v.as_ref().clone()));
                physical.insert(at, p);
            }
        }
        let categories = contain_panics("parquet: reading the dictionary pages", || {
            crate::categorical::read_categories(&input, meta.metadata(), &categorical)
        })?;
        let groups = selected_groups(meta.metadata(), row_groups.as_deref())?;
        let data_bytes = uncompressed_bytes(meta.metadata(), &groups);
        let footer_nulls = schema
            .arrow_schema()
            .fields()
            .iter()
            .map(|f| {
                let &(leaf, _) = leaf_of.get(f.name())?;
                footer_null_count(meta.metadata(), &groups, leaf)
            })
            .collect();
        let (meta, dictionary_schema) = match options.dictionary_strings && !projected {
            true => dictionary_strings(meta, &schema, &leaf_of, &groups),
            false => (meta, None),
        };
        let mask = projected
            .then(|| ProjectionMask::roots(meta.parquet_schema(), batch_fields.iter().copied()));
        // Listing the file needs no page: oversized chunks fail the first read instead.
        let oversized = check_chunk_sizes(meta.metadata(), &groups, &options.limits).err();
        let input = Shared(Arc::new(input));
        let probe = ColumnProbe::new(input.clone(), meta.clone());
        let batch_size = options.batch_size;
        let open = move |group: usize| {
            let builder =
                ParquetRecordBatchReaderBuilder::new_with_metadata(input.clone(), meta.clone())
                    .with_row_groups(vec![group])
                    .with_batch_size(batch_size);
            match &mask {
                Some(mask) => builder.with_projection(mask.clone()),
                None => builder,
            }
            .build()
            .map_err(parquet_err)
        };
        let mut inner = GroupReaders {
            open: Box::new(open),
            pending: groups
                .iter()
                .map(|&(g, _)| g)
                .collect::<Vec<_>>()
                .into_iter(),
            current: None,
        };
        // The first row group's reader now: what arrow-rs refuses about the file's schema is
        // an error of opening it.
        contain_panics("parquet: opening the row groups", || inner.advance())?;
        Ok(ParquetReader {
            schema,
            inner,
            num_rows,
            categories,
            physical,
            groups,
            data_bytes,
            rows_read: 0,
            failed: false,
            oversized,
            probe,
            batch_fields,
            projected,
            footer_nulls,
            dictionary_schema,
        })
    }

    /// The frame's fields (positions in [`Self::schema`]'s Arrow schema) the batches hold, in
    /// order: every field unless [`ReadOptions::fields`] selected some.
    pub fn batch_fields(&self) -> &[usize] {
        &self.batch_fields
    }

    /// Each field's count of missing values in the row groups read, as the footer's column
    /// statistics give it, without decoding a page: `None` for a field that is not a flat
    /// column or when a row group's statistics leave the count out.
    pub fn footer_null_counts(&self) -> &[Option<u64>] {
        &self.footer_nulls
    }

    /// The frame's schema.
    pub fn schema(&self) -> &FrameSchema {
        &self.schema
    }

    /// Number of rows the footer announces.
    pub fn num_rows(&self) -> u64 {
        self.num_rows
    }

    /// The row groups read.
    pub fn num_row_groups(&self) -> usize {
        self.groups.len()
    }

    /// The rows of each row group read, in read order, as the footer gives them (each row
    /// group's batches hold these rows and no batch spans two row groups).
    pub fn group_rows(&self) -> Vec<u64> {
        self.groups.iter().map(|&(_, rows)| rows).collect()
    }

    /// The batches' schema when it differs from the frame's (string columns read as
    /// dictionaries, [`ReadOptions::dictionary_strings`]); two readers of one file whose
    /// batches are alike give the same.
    pub fn dictionary_batch_schema(&self) -> Option<&SchemaRef> {
        self.dictionary_schema.as_ref()
    }

    /// The uncompressed bytes of the row groups read, as the footer announces them (about
    /// the memory the whole frame takes; 0 for a writer that leaves the sizes out).
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes
    }

    /// Reads every batch into a [`Frame`].
    pub fn read_all(self) -> Result<Frame> {
        let schema = self.schema.clone();
        let batches = self.collect::<Result<Vec<_>>>()?;
        Frame::new(schema, batches)
    }
}

/// The fields a reader decodes: `selection` sorted and deduplicated, or all `count` fields.
fn selected_fields(selection: Option<&[usize]>, count: usize) -> Result<Vec<usize>> {
    let Some(selection) = selection else {
        return Ok((0..count).collect());
    };
    if let Some(&bad) = selection.iter().find(|&&p| p >= count) {
        return Err(Error::invalid_input(format!(
            "field {bad} selected to read, the frame has {count} fields"
        )));
    }
    let mut fields = selection.to_vec();
    fields.sort_unstable();
    fields.dedup();
    Ok(fields)
}

/// The missing values of leaf column `leaf` in `groups`, summed from the footer's statistics
/// (`None` when a group's statistics leave the count out).
fn footer_null_count(meta: &ParquetMetaData, groups: &[(usize, u64)], leaf: usize) -> Option<u64> {
    groups.iter().try_fold(0u64, |total, &(g, _)| {
        let chunk = meta.row_groups().get(g)?.columns().get(leaf)?;
        total.checked_add(chunk.statistics()?.null_count_opt()?)
    })
}

fn parse_checked(json: &str, limits: &Limits) -> Result<PandasMetadata> {
    if json.len() as u64 > limits.max_header {
        return Err(Error::new(
            ErrorKind::LimitExceeded,
            format!(
                "pandas metadata of {} bytes is over the {}-byte header limit",
                json.len(),
                limits.max_header
            ),
        ));
    }
    PandasMetadata::parse(json.as_bytes())
}

impl ParquetReader {
    /// The row group (index in the file) holding the row at `row` of this reader's selection.
    fn group_at(&self, row: u64) -> Option<usize> {
        let mut end = 0u64;
        self.groups.iter().find_map(|&(g, rows)| {
            end = end.saturating_add(rows);
            (row < end).then_some(g)
        })
    }

    fn selected_rows(&self) -> u64 {
        self.groups.iter().map(|&(_, r)| r).sum()
    }

    /// The next raw batch, with a panic inside arrow-rs contained and any failure located.
    fn next_raw(&mut self) -> Option<Result<RecordBatch>> {
        let inner = &mut self.inner;
        let outcome =
            contain_panics("parquet: decoding pages", || inner.next_batch()).transpose()?;
        let outcome = outcome.and_then(|b| {
            let rows = b.num_rows() as u64;
            match self.rows_read.checked_add(rows) {
                Some(n) if n <= self.selected_rows() => {
                    self.rows_read = n;
                    Ok(b)
                }
                _ => Err(Error::format(format!(
                    "more rows decoded than the row groups announce ({})",
                    self.selected_rows()
                ))),
            }
        });
        Some(outcome.map_err(|e| self.locate(e)))
    }

    /// Names the row group being decoded in a decoding error, and the column that fails when
    /// decoded alone.
    fn locate(&self, e: Error) -> Error {
        let Some(g) = self.group_at(self.rows_read) else {
            return e;
        };
        let column = self
            .probe
            .failing_column(g)
            .map_or(String::new(), |c| format!(", column '{c}'"));
        Error::new(e.kind(), format!("row group {g}{column}: {}", e.message()))
    }

    /// At the end of the data: every row the footer announces must have been read.
    fn check_complete(&self) -> Result<()> {
        let expected = self.selected_rows();
        if self.rows_read == expected {
            return Ok(());
        }
        let group = self
            .group_at(self.rows_read)
            .map_or(String::new(), |g| format!("row group {g}: "));
        Err(Error::format(format!(
            "{group}the data ends after {} rows, the row groups announce {expected}",
            self.rows_read
        )))
    }
}

impl Iterator for ParquetReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if let Some(e) = self.oversized.take() {
            self.failed = true;
            return Some(Err(e));
        }
        let item = match self.next_raw() {
            None => self.check_complete().err().map(Err),
            Some(batch) => Some(
                batch
                    .and_then(|b| match (self.projected, &self.dictionary_schema) {
                        (true, _) => self.schema.apply_fixes_at(b, &self.batch_fields),
                        (false, Some(target)) => self.schema.apply_fixes_as(b, target),
                        (false, None) => self.schema.apply_fixes(b),
                    })
                    .and_then(|b| {
                        crate::categorical::restore_categories(b, &self.categories, &self.physical)
                    }),
            ),
        };
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}

/// The footer's reading with the string columns whose pages are all dictionary-encoded in every
/// selected row group (a dictionary that overflowed into plain pages holds many distinct
/// values: those are read as strings) read as `Dictionary(Int32, <string type>)`, and the frame schema with those
/// fields so typed (`None`, and `meta` as it was, when no column qualifies or arrow-rs
/// refuses the hint). Only flat columns that arrow-rs reads as the frame has them (no fix).
fn dictionary_strings(
    meta: ArrowReaderMetadata,
    schema: &FrameSchema,
    leaf_of: &HashMap<String, (usize, PhysicalType)>,
    groups: &[(usize, u64)],
) -> (ArrowReaderMetadata, Option<SchemaRef>) {
    let read = meta.schema().clone();
    let frame = schema.arrow_schema();
    if read.fields().len() != frame.fields().len() {
        return (meta, None);
    }
    let row_groups = meta.metadata().row_groups();
    let all_dictionary = |leaf: usize| {
        groups.iter().all(|&(g, _)| {
            row_groups
                .get(g)
                .and_then(|rg| rg.columns().get(leaf))
                .is_some_and(categorical::all_pages_dictionary)
        })
    };
    let mut hint = Vec::with_capacity(read.fields().len());
    let mut typed = Vec::with_capacity(read.fields().len());
    let mut any = false;
    for (pos, (r, f)) in read.fields().iter().zip(frame.fields()).enumerate() {
        let qualifies = matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8)
            && r.data_type() == f.data_type()
            && r.name() == f.name()
            && schema.read_as_is(pos)
            && leaf_of
                .get(f.name())
                .is_some_and(|&(leaf, p)| p == PhysicalType::BYTE_ARRAY && all_dictionary(leaf));
        if !qualifies {
            hint.push(r.clone());
            typed.push(f.clone());
            continue;
        }
        any = true;
        let dictionary =
            |v: &DataType| DataType::Dictionary(Box::new(DataType::Int32), Box::new(v.clone()));
        hint.push(Arc::new(
            r.as_ref().clone().with_data_type(dictionary(r.data_type())),
        ));
        typed.push(Arc::new(
            f.as_ref().clone().with_data_type(dictionary(f.data_type())),
        ));
    }
    if !any {
        return (meta, None);
    }
    let hint = Arc::new(Schema::new_with_metadata(hint, read.metadata().clone()));
    let options = ArrowReaderOptions::new().with_schema(hint);
    match ArrowReaderMetadata::try_new(meta.metadata().clone(), options) {
        Ok(hinted) => (
            hinted,
            Some(Arc::new(Schema::new_with_metadata(
                typed,
                frame.metadata().clone(),
            ))),
        ),
        Err(_) => (meta, None),
    }
}

/// Parses the footer, a panic inside the parquet crate contained. A file that starts as
/// Parquet but does not end with the footer's magic is called truncated (arrow-rs says
/// "corrupt footer").
fn load_metadata<R: ChunkReader>(input: &R) -> Result<ArrowReaderMetadata> {
    check_ends_with_footer(input)?;
    let refused = match contain_panics("parquet: reading the footer", || {
        ArrowReaderMetadata::load(input, ArrowReaderOptions::new()).map_err(parquet_err)
    }) {
        Ok(meta) => return Ok(meta),
        Err(e) => e,
    };
    // A footer with a field of an unexpected wire type: Thrift's generated readers (Arrow C++)
    // skip the field, arrow-rs refuses the footer; read it without those fields.
    match sanitized_metadata(input) {
        Some(meta) => Ok(meta),
        None => Err(refused),
    }
}

/// The footer decoded without the fields arrow-rs refuses ([`crate::footer::sanitized`]), or
/// `None` when there are none or the footer still does not decode.
fn sanitized_metadata<R: ChunkReader>(input: &R) -> Option<ArrowReaderMetadata> {
    let len = input.len();
    let tail = input.get_bytes(len.checked_sub(8)?, 4).ok()?;
    let meta_len = u64::from(u32::from_le_bytes(tail.as_ref().try_into().ok()?));
    let start = len.checked_sub(8)?.checked_sub(meta_len)?;
    let footer = input
        .get_bytes(start, usize::try_from(meta_len).ok()?)
        .ok()?;
    let fixed = crate::footer::sanitized(&footer).ok()??;
    contain_panics("parquet: reading the footer", || {
        let meta = parquet::file::metadata::ParquetMetaDataReader::decode_metadata(&fixed)
            .map_err(parquet_err)?;
        ArrowReaderMetadata::try_new(Arc::new(meta), ArrowReaderOptions::new()).map_err(parquet_err)
    })
    .ok()
}

fn check_ends_with_footer<R: ChunkReader>(input: &R) -> Result<()> {
    const MAGIC: &[u8] = b"PAR1";
    // Encrypted footers end with PARE; arrow-rs reports those itself.
    const ENCRYPTED: &[u8] = b"PARE";
    let len = input.len();
    if len < 8 {
        return Err(Error::truncated(format!(
            "the file is truncated: {len} bytes cannot hold Parquet's header and footer"
        ))
        .with_offset(len));
    }
    let read = |at: u64| input.get_bytes(at, 4).map_err(parquet_err);
    let (head, tail) = (read(0)?, read(len - 4)?);
    if head.as_ref() == MAGIC && tail.as_ref() != MAGIC && tail.as_ref() != ENCRYPTED {
        return Err(Error::truncated(format!(
            "the file is truncated or its footer damaged: it ends at byte {len} without \
             Parquet's closing PAR1"
        ))
        .with_offset(len));
    }
    Ok(())
}

/// The footer's metadata as pyarrow reads it, and the footer's own row count. Rebuilt (only
/// when something is to be repaired) where arrow-rs would read a file pyarrow reads otherwise:
///
/// * a footer whose row count disagrees with its row groups' total: arrow-rs clamps its batch
///   size to the footer's count (`ParquetRecordBatchReaderBuilder::with_batch_size`), so a
///   footer saying 0 rows made it return no row at all from a file with 6, silently; the row
///   groups' total is used (the caller warns);
/// * a dictionary page offset that is not before the first data page (0 in parquet-testing's
///   `dict-page-offset-zero.parquet`): Arrow C++ then starts the column chunk at its first data
///   page, arrow-rs read the file's magic as a page header ("Expected list element type of I64
///   but got I16"); the offset is dropped, so the chunk starts at the data page offset;
/// * files of parquet-mr before 1.2.9 (PARQUET-816, IMPALA-694) leave the dictionary page
///   header out of `total_compressed_size` (`nation.dict-malformed.parquet`): Arrow C++ pads
///   such chunks by up to 100 bytes; arrow-rs stopped inside the last page ("Invalid page
///   header"). The chunk is extended up to the next chunk (or the footer), at most 100 bytes,
///   so the page reader does not read past it either.
fn repaired<R: ChunkReader>(
    meta: ArrowReaderMetadata,
    input: &R,
) -> Result<(ArrowReaderMetadata, u64)> {
    let parquet = meta.metadata();
    let file = parquet.file_metadata();
    let footer_rows = u64::try_from(file.num_rows())
        .map_err(|_| Error::format("negative row count in the Parquet footer"))?;
    let total = row_group_rows(parquet)?;
    let padded = parquet_816_affected(file.created_by());
    let footer_start = if padded { footer_start(input)? } else { 0 };
    // every chunk's start: the end of the chunk before a padded one
    let mut starts: Vec<i64> = Vec::new();
    if padded {
        for rg in parquet.row_groups() {
            starts.extend(rg.columns().iter().map(chunk_start));
        }
        starts.sort_unstable();
    }
    let mut changed = total != footer_rows;
    let mut groups = Vec::with_capacity(parquet.num_row_groups());
    for rg in parquet.row_groups() {
        let mut columns = Vec::with_capacity(rg.num_columns());
        for chunk in rg.columns() {
            let mut fixed = chunk.clone();
            let dict_misplaced = chunk
                .dictionary_page_offset()
                .is_some_and(|d| d <= 0 || d >= chunk.data_page_offset());
            if dict_misplaced {
                fixed = fixed
                    .into_builder()
                    .set_dictionary_page_offset(None)
                    .build()
                    .map_err(parquet_err)?;
            }
            if padded {
                let start = chunk_start(&fixed);
                let end = start.saturating_add(fixed.compressed_size());
                let next = starts
                    .iter()
                    .copied()
                    .find(|&s| s > start)
                    .unwrap_or(footer_start)
                    .min(footer_start);
                let pad = next.saturating_sub(end).clamp(0, PARQUET_816_PADDING);
                if pad > 0 {
                    let size = fixed.compressed_size() + pad;
                    fixed = fixed
                        .into_builder()
                        .set_total_compressed_size(size)
                        .build()
                        .map_err(parquet_err)?;
                }
            }
            changed |= fixed != *chunk;
            columns.push(fixed);
        }
        groups.push(columns);
    }
    if !changed {
        return Ok((meta, footer_rows));
    }
    let total_i64 =
        i64::try_from(total).map_err(|_| Error::format("the row groups' row counts overflow"))?;
    let fixed = FileMetaData::new(
        file.version(),
        total_i64,
        file.created_by().map(str::to_string),
        file.key_value_metadata().cloned(),
        file.schema_descr_ptr(),
        file.column_orders().cloned(),
    );
    let row_groups = parquet
        .row_groups()
        .iter()
        .zip(groups)
        .map(|(rg, columns)| {
            rg.clone()
                .into_builder()
                .set_column_metadata(columns)
                .build()
                .map_err(parquet_err)
        })
        .collect::<Result<Vec<_>>>()?;
    let rebuilt = ParquetMetaDataBuilder::new(fixed)
        .set_row_groups(row_groups)
        .build();
    let meta = ArrowReaderMetadata::try_new(Arc::new(rebuilt), ArrowReaderOptions::new())
        .map_err(parquet_err)?;
    Ok((meta, footer_rows))
}

/// Arrow C++'s `kMaxDictHeaderSize`: how far a PARQUET-816 chunk may be extended.
const PARQUET_816_PADDING: i64 = 100;

/// Where a column chunk's pages start: its dictionary page, else its first data page.
fn chunk_start(chunk: &parquet::file::metadata::ColumnChunkMetaData) -> i64 {
    chunk
        .dictionary_page_offset()
        .unwrap_or_else(|| chunk.data_page_offset())
}

/// Where the footer's metadata starts: before its length and the closing magic.
fn footer_start<R: ChunkReader>(input: &R) -> Result<i64> {
    let len = input.len();
    let tail = input
        .get_bytes(len.saturating_sub(8), 4)
        .map_err(parquet_err)?;
    let meta_len = match tail.as_ref() {
        [a, b, c, d] => u64::from(u32::from_le_bytes([*a, *b, *c, *d])),
        _ => return Err(Error::truncated("the Parquet footer length is cut off")),
    };
    let start = len.saturating_sub(8).saturating_sub(meta_len);
    i64::try_from(start).map_err(|_| Error::format("the file is over 2^63 bytes"))
}

/// Whether `created_by` names parquet-mr before 1.2.9, whose column chunk sizes leave out the
/// dictionary page header (PARQUET-816). Parsed as Arrow C++'s `ApplicationVersion` does: the
/// application is the first word; a missing version counts as 0.0.0.
fn parquet_816_affected(created_by: Option<&str>) -> bool {
    let Some(created_by) = created_by else {
        return false;
    };
    let lower = created_by.to_ascii_lowercase();
    let mut words = lower.split_whitespace();
    if words.next() != Some("parquet-mr") {
        return false;
    }
    let version = match (words.next(), words.next()) {
        (Some("version"), Some(v)) => v,
        _ => "",
    };
    let mut parts = version
        .split(|c: char| !c.is_ascii_digit())
        .take(3)
        .map(|p| p.parse::<u64>().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    let v = (next(), next(), next());
    v < (1, 2, 9)
}

/// The rows row group `g` announces.
fn rows_of(meta: &ParquetMetaData, g: usize) -> Result<u64> {
    let rg = meta
        .row_groups()
        .get(g)
        .ok_or_else(|| Error::format(format!("row group {g} is not in the file")))?;
    u64::try_from(rg.num_rows())
        .map_err(|_| Error::format(format!("row group {g} has a negative row count")))
}

/// The uncompressed bytes of row groups `groups` (a negative size counts as 0).
fn uncompressed_bytes(meta: &ParquetMetaData, groups: &[(usize, u64)]) -> u64 {
    groups
        .iter()
        .filter_map(|&(g, _)| meta.row_groups().get(g))
        .map(|rg| u64::try_from(rg.total_byte_size()).unwrap_or(0))
        .fold(0u64, u64::saturating_add)
}

/// The rows of all row groups together.
fn row_group_rows(meta: &ParquetMetaData) -> Result<u64> {
    (0..meta.num_row_groups()).try_fold(0u64, |total, g| {
        total
            .checked_add(rows_of(meta, g)?)
            .ok_or_else(|| Error::format("the row groups' row counts overflow"))
    })
}

/// The row groups a reader reads (all when `selection` is `None`) with the rows each
/// announces: what every group must decode to, or the read fails naming it.
fn selected_groups(
    meta: &ParquetMetaData,
    selection: Option<&[usize]>,
) -> Result<Vec<(usize, u64)>> {
    match selection {
        Some(groups) => groups.iter().map(|&g| Ok((g, rows_of(meta, g)?))).collect(),
        None => (0..meta.num_row_groups())
            .map(|g| Ok((g, rows_of(meta, g)?)))
            .collect(),
    }
}

/// Reads a whole file into a [`Frame`] with default options.
pub fn read_frame(path: impl AsRef<Path>) -> Result<Frame> {
    read_frame_with(path, &ReadOptions::default())
}

/// Reads a whole file into a [`Frame`], decoding contiguous runs of row groups on
/// [`ReadOptions::threads`] threads (the footer is parsed once and shared).
pub fn read_frame_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Frame> {
    let path = path.as_ref();
    let open = || File::open(path).map_err(|e| Error::io("cannot open", e).with_file(path));
    let meta = load_metadata(&open()?).map_err(|e| e.with_file(path))?;
    let groups = meta.metadata().num_row_groups();
    let threads = options.threads.min(groups).max(1);
    // The whole file is held anyway: a batch per row group (up to 4Mi rows), not 64Ki-row
    // pieces of them (fewer, larger allocations; less per-batch work).
    let largest = meta
        .metadata()
        .row_groups()
        .iter()
        .map(|g| usize::try_from(g.num_rows()).unwrap_or(0))
        .max()
        .unwrap_or(0);
    let options = &options
        .clone()
        .batch_size(largest.clamp(options.batch_size, 1 << 22));
    let reader_for = |range: std::ops::Range<usize>| -> Result<ParquetReader> {
        ParquetReader::with_metadata(open()?, meta.clone(), Some(range.collect()), options)
            .map_err(|e| e.with_file(path))
    };
    if threads == 1 {
        return reader_for(0..groups)?.read_all();
    }
    let per = groups.div_ceil(threads);
    let chunks: Vec<std::ops::Range<usize>> = (0..groups)
        .step_by(per)
        .map(|start| start..(start + per).min(groups))
        .collect();
    let results: Vec<Result<Frame>> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|range| {
                let reader_for = &reader_for;
                scope.spawn(move || reader_for(range)?.read_all())
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::format("a decoding thread panicked")))
            })
            .collect()
    });
    let mut schema = None;
    let mut batches = Vec::new();
    for r in results {
        let (s, b) = r?.into_parts();
        schema.get_or_insert(s);
        batches.extend(b);
    }
    // every chunk's schema is the same: it checks the RangeIndex against the footer's row count
    match schema {
        Some(s) => Frame::new(s, batches),
        None => reader_for(0..groups)?.read_all(),
    }
}

/// A Parquet compression codec with its level.
///
/// Parsed from the CLI's `--compress` spelling: `none`, `snappy`, `gzip[:0-9]`, `zstd[:1-22]`,
/// `lz4` (LZ4_RAW, what pyarrow's `"lz4"` writes).
///
/// ```
/// use sciio_pandas::Compression;
/// assert_eq!("zstd:3".parse::<Compression>()?, Compression::Zstd(Some(3)));
/// assert_eq!("snappy".parse::<Compression>()?, Compression::Snappy);
/// assert!("zstd:99".parse::<Compression>().is_err());
/// # Ok::<(), sciio_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Uncompressed.
    None,
    /// Snappy (pandas' default).
    Snappy,
    /// Gzip at a level (default 6).
    Gzip(Option<u32>),
    /// Zstandard at a level (default 1, as pyarrow).
    Zstd(Option<i32>),
    /// LZ4 raw blocks.
    Lz4,
    /// Brotli at a level (default 8, as Arrow C++).
    Brotli(Option<u32>),
}

impl FromStr for Compression {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let (name, level) = match s.split_once(':') {
            Some((n, l)) => (n, Some(l)),
            None => (s, None),
        };
        let bad = || Error::invalid_input(format!("bad compression level in {s:?}"));
        let c = match (name.to_ascii_lowercase().as_str(), level) {
            ("none" | "uncompressed", None) => Compression::None,
            ("snappy", None) => Compression::Snappy,
            ("lz4", None) => Compression::Lz4,
            ("gzip", l) => Compression::Gzip(l.map(|l| l.parse().map_err(|_| bad())).transpose()?),
            ("zstd", l) => Compression::Zstd(l.map(|l| l.parse().map_err(|_| bad())).transpose()?),
            ("brotli", l) => {
                Compression::Brotli(l.map(|l| l.parse().map_err(|_| bad())).transpose()?)
            }
            _ => {
                return Err(Error::invalid_input(format!(
                    "unknown compression {s:?} \
                     (none, snappy, gzip[:level], zstd[:level], brotli[:level], lz4)"
                )))
            }
        };
        c.to_parquet()?;
        Ok(c)
    }
}

impl Compression {
    fn to_parquet(self) -> Result<parquet::basic::Compression> {
        use parquet::basic::Compression as C;
        let bad = |e: parquet::errors::ParquetError| Error::invalid_input(e.to_string());
        Ok(match self {
            Compression::None => C::UNCOMPRESSED,
            Compression::Snappy => C::SNAPPY,
            Compression::Lz4 => C::LZ4_RAW,
            Compression::Gzip(l) => C::GZIP(GzipLevel::try_new(l.unwrap_or(6)).map_err(bad)?),
            Compression::Zstd(l) => C::ZSTD(ZstdLevel::try_new(l.unwrap_or(1)).map_err(bad)?),
            Compression::Brotli(l) => C::BROTLI(BrotliLevel::try_new(l.unwrap_or(8)).map_err(bad)?),
        })
    }
}

/// Options for writing Parquet.
///
/// Defaults follow pyarrow's `write_table`: snappy, row groups of 1 Mi rows (1 048 576),
/// dictionary encoding on, data pages of 1 MiB, statistics on; column chunks are encoded on as
/// many threads as the machine has cores.
///
/// ```
/// use sciio_pandas::{Compression, ParquetOptions};
/// let opts = ParquetOptions::new().compression("zstd:3".parse()?).row_group_rows(100_000);
/// assert_eq!(opts.get_compression(), Compression::Zstd(Some(3)));
/// # Ok::<(), sciio_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ParquetOptions {
    compression: Compression,
    row_group_rows: usize,
    dictionary: bool,
    data_page_bytes: usize,
    statistics: bool,
    threads: usize,
    key_value: Vec<(String, String)>,
    fixed_list_encoder: bool,
}

impl Default for ParquetOptions {
    fn default() -> Self {
        ParquetOptions {
            compression: Compression::Snappy,
            row_group_rows: 1 << 20,
            dictionary: true,
            data_page_bytes: 1 << 20,
            statistics: true,
            threads: std::thread::available_parallelism().map_or(1, usize::from),
            key_value: Vec::new(),
            fixed_list_encoder: true,
        }
    }
}

impl ParquetOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }
    /// The codec (default snappy).
    pub fn compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self
    }
    /// The codec set.
    pub fn get_compression(&self) -> Compression {
        self.compression
    }
    /// Maximum rows per row group (default 1 048 576; at least 1).
    pub fn row_group_rows(mut self, rows: usize) -> Self {
        self.row_group_rows = rows.max(1);
        self
    }
    /// Dictionary encoding of column chunks (default on). Categorical columns are always
    /// dictionary-encoded, with their categories as the dictionary, as pyarrow does.
    pub fn dictionary(mut self, on: bool) -> Self {
        self.dictionary = on;
        self
    }
    /// Target data page size in bytes (default 1 MiB).
    pub fn data_page_bytes(mut self, bytes: usize) -> Self {
        self.data_page_bytes = bytes.max(1);
        self
    }
    /// Column chunk and page statistics (default on).
    pub fn statistics(mut self, on: bool) -> Self {
        self.statistics = on;
        self
    }
    /// Threads encoding the column chunks of a row group (default: the number of cores).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }
    /// Fixed-size lists of primitives with no dictionary encoded by sciio's own column chunk
    /// encoder (default on) or, off, by arrow-rs's; for tests comparing the two.
    #[doc(hidden)]
    pub fn fixed_list_encoder(mut self, on: bool) -> Self {
        self.fixed_list_encoder = on;
        self
    }
    /// An extra entry of the file's key-value metadata, also set on the Arrow schema (pyarrow
    /// shows it in `schema.metadata`). The `pandas` key is the writer's own and cannot be set.
    ///
    /// ```
    /// let opts = sciio_pandas::ParquetOptions::new().key_value("origin", "run 7");
    /// assert_eq!(opts.get_key_values(), [("origin".to_string(), "run 7".to_string())]);
    /// ```
    pub fn key_value(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let key = key.into();
        if key != PANDAS_KEY {
            self.key_value.retain(|(k, _)| *k != key);
            self.key_value.push((key, value.into()));
        }
        self
    }
    /// The extra key-value metadata set with [`ParquetOptions::key_value`].
    pub fn get_key_values(&self) -> &[(String, String)] {
        &self.key_value
    }

    /// The writer properties; `plain`: the leaf columns written without dictionary encoding.
    /// `categoricals`: the file has categorical columns, whose chunks (encoded by
    /// categorical.rs) carry no offset index; parquet 59's footer writer panics on a file where
    /// only some chunks have one, so such files get none (chunk statistics, no page index).
    fn properties(
        &self,
        pandas_json: String,
        plain: &[ColumnPath],
        categoricals: bool,
    ) -> Result<WriterProperties> {
        let mut builder = WriterProperties::builder().set_offset_index_disabled(categoricals);
        for path in plain {
            builder = builder.set_column_dictionary_enabled(path.clone(), false);
        }
        Ok(builder
            .set_compression(self.compression.to_parquet()?)
            .set_max_row_group_row_count(Some(self.row_group_rows))
            .set_dictionary_enabled(self.dictionary)
            .set_data_page_size_limit(self.data_page_bytes)
            .set_statistics_enabled(if self.statistics && categoricals {
                EnabledStatistics::Chunk
            } else if self.statistics {
                EnabledStatistics::Page
            } else {
                EnabledStatistics::None
            })
            .set_created_by(format!("sciio version {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(
                std::iter::once(KeyValue::new(PANDAS_KEY.into(), pandas_json))
                    .chain(
                        self.key_value
                            .iter()
                            .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
                    )
                    .collect(),
            ))
            .build())
    }
}

/// A streaming writer: batches in, row groups out; the pandas metadata and `ARROW:schema` are
/// written like pyarrow does. Each batch's rows go to the open row group's column encoders as
/// they come, on [`ParquetOptions::threads`] threads (with more than one: see the
/// `column_lanes` and `encode_pool` modules) while the next rows come in; a row group holds
/// [`ParquetOptions::row_group_rows`] rows (memory stays bounded by a few row groups); row
/// groups reach the file in order, the same bytes as with one thread. The file writer is
/// created at the first batch so the metadata can record the categories of categorical
/// columns.
pub struct ParquetWriter<W: Write + Send> {
    schema: FrameSchema,
    options: ParquetOptions,
    out: Option<W>,
    inner: Option<Encoder<W>>,
}

struct Encoder<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    arrow: SchemaRef,
    /// How each field's column chunks are encoded.
    kinds: Vec<FieldKind>,
    /// The field of each leaf column.
    field_of: Vec<usize>,
    /// The leaf columns of the open row group (none open: empty).
    lanes: Vec<Arc<Lane>>,
    /// Rows fed to the open row group.
    pending_rows: usize,
    /// Row groups opened so far (each one's index in the file).
    row_groups_started: usize,
    compression: parquet::basic::Compression,
    page_bytes: usize,
    statistics: bool,
    /// The background encoders (none with one thread: batches are encoded in `write`).
    pool: Option<EncodePool<LaneJob, ()>>,
    /// Where the open row group's lanes send their closed chunks (with the pool).
    open_chunks: Option<Receiver<(usize, Result<Chunk>)>>,
    /// Closed row groups queued to the pool, oldest first.
    in_flight: std::collections::VecDeque<ClosingRowGroup>,
    /// Bytes queued in the lanes and not encoded yet.
    backlog: Arc<Backlog>,
}

/// A row group whose chunks are being closed on the pool: each lane sends its chunk (with
/// its position) when closed.
struct ClosingRowGroup {
    chunks: Receiver<(usize, Result<Chunk>)>,
    columns: usize,
    /// The close jobs' outcomes (a failure there says why a chunk did not come).
    closes: Pending<()>,
}

impl ClosingRowGroup {
    /// Waits for every chunk: in column order, or the first failing column's error (by
    /// position). A lane that stops without sending (its thread failed) is an error, not a
    /// wait forever: the channel closes once every lane is gone.
    fn wait(self) -> Result<Vec<Chunk>> {
        let mut slots: Vec<Option<Result<Chunk>>> = (0..self.columns).map(|_| None).collect();
        for _ in 0..self.columns {
            let Ok((position, chunk)) = self.chunks.recv() else {
                self.closes.wait()?;
                return Err(Error::invalid_input(
                    "internal: a column chunk was not encoded (an encoding thread stopped)",
                ));
            };
            if let Some(slot) = slots.get_mut(position) {
                *slot = Some(chunk);
            }
        }
        self.closes.wait()?;
        slots
            .into_iter()
            .map(|s| s.unwrap_or_else(|| Err(Error::format("a column chunk was not encoded"))))
            .collect()
    }
}

/// Bytes a piece of a batch holds for its encoder: a slice's share of its buffers (a
/// dictionary array's keys: its values are shared by every piece).
fn piece_bytes(part: &ArrayRef) -> usize {
    let data = match part.as_any_dictionary_opt() {
        Some(d) => d.keys().to_data(),
        None => part.to_data(),
    };
    data.get_slice_memory_size().unwrap_or(0)
}

/// Bytes of batches queued for the encoding threads before the writer waits for them (or
/// two batches' bytes if more): the threads always have work, and memory does not hold the
/// row group's batches as well as the row groups being closed when the batches come faster
/// than they are encoded.
const BACKLOG_BYTES: usize = 16 << 20;

/// How a field's column chunks are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldKind {
    /// By arrow-rs, from the field's leaf arrays.
    Arrow,
    /// A categorical with its categories as they are ([`DictionaryChunk::categorical`]).
    Categorical,
    /// A string field fed as dictionary arrays (read with
    /// [`ReadOptions::dictionary_strings`]): their keys and used values, not every value
    /// interned again ([`DictionaryChunk::strings`]).
    DictionaryStrings,
    /// A fixed-size list of primitives written without dictionary: by `fixed_list`.
    FixedList,
}

impl<W: Write + Send> std::fmt::Debug for ParquetWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetWriter")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl ParquetWriter<File> {
    /// Creates (truncates) the file at `path`.
    pub fn create(
        path: impl AsRef<Path>,
        schema: &FrameSchema,
        options: &ParquetOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|e| Error::io("cannot create", e).with_file(path))?;
        Ok(Self::new(file, schema, options))
    }
}

impl<W: Write + Send> ParquetWriter<W> {
    /// Writes to `out`.
    pub fn new(out: W, schema: &FrameSchema, options: &ParquetOptions) -> Self {
        ParquetWriter {
            schema: schema.clone(),
            options: options.clone(),
            out: Some(out),
            inner: None,
        }
    }

    fn start(&mut self, first: Option<&RecordBatch>) -> Result<()> {
        let mut cats = HashMap::new();
        if let Some(b) = first {
            for (col, f) in b.columns().iter().zip(self.schema.arrow_schema().fields()) {
                if let (Some(d), DataType::Dictionary(..)) =
                    (col.as_any_dictionary_opt(), f.data_type())
                {
                    cats.insert(f.name().clone(), d.values().len());
                }
            }
        }
        let json = self.schema.to_pandas_metadata(&cats).to_json();
        let arrow = self.schema.arrow_schema();
        let mut md = arrow.metadata().clone();
        md.insert(PANDAS_KEY.to_string(), json.clone());
        for (key, value) in &self.options.key_value {
            md.insert(key.clone(), value.clone());
        }
        let arrow = Arc::new(Schema::new_with_metadata(arrow.fields().clone(), md));
        let out = self
            .out
            .take()
            .ok_or_else(|| Error::invalid_input("writer already finished"))?;
        let plain = match first {
            Some(b) if self.options.dictionary => {
                mostly_distinct_columns(b, self.options.row_group_rows)
            }
            _ => Vec::new(),
        };
        // the writer properties' default, as the file writer converts the schema
        let parquet_schema = ArrowSchemaConverter::new()
            .convert(&arrow)
            .map_err(parquet_err)?;
        let descr = parquet_schema.root_schema_ptr();
        let field_of: Vec<usize> = (0..parquet_schema.num_columns())
            .map(|leaf| parquet_schema.get_column_root_idx(leaf))
            .collect();
        let plain_leaves: Vec<usize> = (0..field_of.len())
            .filter(|&leaf| {
                let field = field_of.get(leaf).and_then(|&f| arrow.fields().get(f));
                field.is_some_and(|f| plain.contains(f.name()))
            })
            .collect();
        let mut kinds = field_kinds(
            &arrow,
            &parquet_schema,
            &field_of,
            first.filter(|_| self.options.dictionary),
        );
        if self.options.fixed_list_encoder {
            mark_fixed_lists(&mut kinds, &arrow, &parquet_schema, &field_of);
        }
        let plain: Vec<ColumnPath> = plain_leaves
            .iter()
            .map(|&leaf| parquet_schema.column(leaf).path().clone())
            .collect();
        // sciio's dictionary chunks carry no page index (see `properties`); its fixed-size
        // list chunks carry arrow-rs's
        let dictionaries = kinds
            .iter()
            .any(|k| matches!(k, FieldKind::Categorical | FieldKind::DictionaryStrings));
        let mut props = self.options.properties(json, &plain, dictionaries)?;
        add_encoded_arrow_schema_to_metadata(&arrow, &mut props);
        let file = SerializedFileWriter::new(out, descr, Arc::new(props)).map_err(parquet_err)?;
        let factory = ArrowRowGroupWriterFactory::new(&file, arrow.clone());
        self.inner = Some(Encoder {
            file,
            factory,
            arrow,
            kinds,
            field_of,
            lanes: Vec::new(),
            pending_rows: 0,
            row_groups_started: 0,
            compression: self.options.compression.to_parquet()?,
            page_bytes: self.options.data_page_bytes,
            statistics: self.options.statistics,
            pool: match self.options.threads {
                0 | 1 => None,
                n => Some(EncodePool::new(n, column_lanes::run)?),
            },
            open_chunks: None,
            in_flight: std::collections::VecDeque::new(),
            backlog: Arc::default(),
        });
        Ok(())
    }

    /// Writes one batch (fields as in the schema; a string field may come as a dictionary
    /// of its strings); its rows go to the open row group's encoders at once, and row groups
    /// are written as they fill.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let schema = batch.schema();
        let fields = self.schema.arrow_schema().fields();
        if schema.fields().len() != fields.len()
            || !schema
                .fields()
                .iter()
                .zip(fields)
                .all(|(b, f)| same_field(b, f))
        {
            return Err(Error::mismatch(
                "record batch fields differ from the frame schema being written",
            ));
        }
        if self.inner.is_none() {
            self.start(Some(batch))?;
        }
        let limit = self.options.row_group_rows;
        let enc = self
            .inner
            .as_mut()
            .ok_or_else(|| Error::invalid_input("writer already finished"))?;
        let columns = enc.conform(batch)?;
        let rows = batch.num_rows();
        let mut offset = 0;
        while offset < rows {
            let take = (limit - enc.pending_rows).min(rows - offset);
            enc.feed(&columns, offset, take)?;
            offset += take;
            if enc.pending_rows == limit {
                enc.close_row_group()?;
            }
        }
        Ok(())
    }

    /// Writes the last row group and the footer.
    pub fn finish(mut self) -> Result<()> {
        if self.inner.is_none() {
            self.start(None)?;
        }
        match self.inner.take() {
            Some(mut enc) => {
                if enc.pending_rows > 0 {
                    enc.close_row_group()?;
                }
                enc.write_all_queued()?;
                enc.file.close().map(|_| ()).map_err(parquet_err)
            }
            None => Err(Error::invalid_input("writer already finished")),
        }
    }
}

impl<W: Write + Send> Encoder<W> {
    /// The batch's columns as the encoders take them: string fields written from
    /// dictionaries as dictionary arrays, every other field as its schema types it.
    fn conform(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>> {
        let fields = self.arrow.fields();
        batch
            .columns()
            .iter()
            .zip(fields)
            .zip(&self.kinds)
            .map(|((column, field), kind)| {
                let wanted = match kind {
                    FieldKind::DictionaryStrings => DataType::Dictionary(
                        Box::new(DataType::Int32),
                        Box::new(field.data_type().clone()),
                    ),
                    _ => field.data_type().clone(),
                };
                let as_dictionary = *kind == FieldKind::DictionaryStrings
                    && matches!(column.data_type(), DataType::Dictionary(..));
                if as_dictionary || *column.data_type() == wanted {
                    return Ok(column.clone());
                }
                arrow_cast::cast(column, &wanted)
                    .map_err(|e| arrow_err(e).with_node(field.name().clone()))
            })
            .collect()
    }

    /// Opens a row group: a lane per leaf column with its encoder.
    fn open_row_group(&mut self) -> Result<()> {
        let writers = self
            .factory
            .create_column_writers(self.row_groups_started)
            .map_err(parquet_err)?;
        self.row_groups_started += 1;
        let descr = self.file.schema_descr();
        let props = self.file.properties().clone();
        let mut lanes = Vec::with_capacity(writers.len());
        // with the pool, the lanes send their closed chunks here
        let (sink, chunks) = std::sync::mpsc::channel();
        let pooled = self.pool.is_some();
        self.open_chunks = pooled.then_some(chunks);
        for (leaf, writer) in writers.into_iter().enumerate() {
            let column = descr.column(leaf);
            let kind = self
                .field_of
                .get(leaf)
                .and_then(|&f| self.kinds.get(f))
                .copied()
                .unwrap_or(FieldKind::Arrow);
            let (c, b) = (self.compression, self.page_bytes);
            let encoder = match kind {
                FieldKind::Arrow => ColumnEncoder::Arrow(Box::new(writer)),
                FieldKind::FixedList => {
                    let field = self
                        .field_of
                        .get(leaf)
                        .and_then(|&f| self.arrow.fields().get(f))
                        .ok_or_else(|| Error::format("a leaf column without its field"))?;
                    ColumnEncoder::FixedList(fixed_list::chunk_encoder(
                        field.clone(),
                        column.clone(),
                        &props,
                        Box::new(writer),
                    )?)
                }
                FieldKind::Categorical => ColumnEncoder::Dictionary(Box::new(
                    DictionaryChunk::categorical(column.clone(), c, b),
                )),
                FieldKind::DictionaryStrings => ColumnEncoder::Dictionary(Box::new(
                    DictionaryChunk::strings(column.clone(), c, b, self.statistics),
                )),
            };
            let sink = pooled.then(|| (leaf, sink.clone()));
            lanes.push(Lane::new(
                column.path().string(),
                encoder,
                sink,
                Arc::clone(&self.backlog),
            ));
        }
        self.lanes = lanes;
        Ok(())
    }

    /// Feeds rows `offset..offset + rows` of the batch's `columns` to the open row group
    /// (opening one if none is): encoded on the pool's threads, or here with one thread.
    fn feed(&mut self, columns: &[ArrayRef], offset: usize, rows: usize) -> Result<()> {
        if self.lanes.is_empty() {
            self.open_row_group()?;
        }
        let mut lanes = self.lanes.iter();
        let mut next_lane = || {
            lanes
                .next()
                .ok_or_else(|| Error::format("more leaf columns than the schema has"))
        };
        let mut fed = 0;
        for ((field, column), kind) in self.arrow.fields().iter().zip(columns).zip(&self.kinds) {
            let part = column.slice(offset, rows);
            let bytes = piece_bytes(&part);
            fed += bytes;
            match kind {
                FieldKind::Arrow => {
                    let leaves = compute_leaves(field, &part).map_err(parquet_err)?;
                    let share = bytes / leaves.len().max(1);
                    for leaf in leaves {
                        next_lane()?.queue(Piece::Leaf(leaf), share)?;
                    }
                }
                FieldKind::Categorical | FieldKind::DictionaryStrings | FieldKind::FixedList => {
                    next_lane()?.queue(Piece::Array(part), bytes)?;
                }
            }
        }
        self.pending_rows += rows;
        match self.pool.as_ref() {
            // a feed's outcome is its lane's: a failure is reported when the lane closes
            Some(pool) => drop(
                pool.submit(
                    self.lanes
                        .iter()
                        .map(|l| LaneJob::Feed(Arc::clone(l)))
                        .collect(),
                )?,
            ),
            None => {
                for lane in &self.lanes {
                    lane.feed()?;
                }
            }
        }
        // two batches' worth at least, so the next batch is prepared while this one encodes
        self.backlog
            .wait_below(BACKLOG_BYTES.max(fed.saturating_mul(2)))
    }

    /// Closes the open row group: written here with one thread, else its chunks are closed
    /// in the background (at most [`ROW_GROUPS_IN_FLIGHT`] closed row groups wait; the oldest
    /// is written to the file when more are queued).
    fn close_row_group(&mut self) -> Result<()> {
        let lanes = std::mem::take(&mut self.lanes);
        self.pending_rows = 0;
        let Some(pool) = self.pool.as_ref() else {
            let chunks = lanes
                .iter()
                .map(|l| l.close())
                .collect::<Result<Vec<_>>>()?;
            return self.append_row_group(chunks);
        };
        let chunks = self.open_chunks.take().ok_or_else(|| {
            Error::invalid_input("internal: a row group without its chunks' channel")
        })?;
        let columns = lanes.len();
        // the chunks come through the row group's channel, closed by whichever job is last
        // at each lane
        let closes = pool.submit(lanes.into_iter().map(LaneJob::Close).collect())?;
        self.in_flight.push_back(ClosingRowGroup {
            chunks,
            columns,
            closes,
        });
        while self.in_flight.len() > ROW_GROUPS_IN_FLIGHT {
            self.write_oldest()?;
        }
        Ok(())
    }

    /// Waits for the oldest closed row group and writes it to the file.
    fn write_oldest(&mut self) -> Result<()> {
        let Some(closing) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let chunks = closing.wait()?;
        self.append_row_group(chunks)
    }

    /// Writes every queued row group (before the footer).
    fn write_all_queued(&mut self) -> Result<()> {
        while !self.in_flight.is_empty() {
            self.write_oldest()?;
        }
        Ok(())
    }

    /// Appends one row group's encoded column chunks (in column order) to the file.
    fn append_row_group(&mut self, chunks: Vec<Chunk>) -> Result<()> {
        let mut rg = self.file.next_row_group().map_err(parquet_err)?;
        for chunk in chunks {
            match chunk {
                Chunk::Arrow(c) => c.append_to_row_group(&mut rg).map_err(parquet_err)?,
                Chunk::Spliced(c) => rg.append_column(&c.bytes, c.close).map_err(parquet_err)?,
            }
        }
        rg.close().map_err(parquet_err)?;
        Ok(())
    }
}

/// Whether a batch's field `batch` can be written as the schema's `field`: the same, or a
/// dictionary of the strings of a string field.
fn same_field(batch: &arrow_schema::Field, field: &arrow_schema::Field) -> bool {
    match (batch.data_type(), field.data_type()) {
        (DataType::Dictionary(_, v), t @ (DataType::Utf8 | DataType::LargeUtf8)) => {
            v.as_ref() == t && batch.clone().with_data_type(t.clone()) == *field
        }
        _ => batch == field,
    }
}

/// How each field of `arrow` is encoded: categoricals whose values [`DictionaryChunk`]
/// writes as they are, flat string fields the `first` batch gives as dictionaries (`None`
/// when dictionary encoding is off), the rest by arrow-rs.
fn field_kinds(
    arrow: &Schema,
    parquet: &parquet::schema::types::SchemaDescriptor,
    field_of: &[usize],
    first: Option<&RecordBatch>,
) -> Vec<FieldKind> {
    arrow
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut leaves = field_of.iter().enumerate().filter(|&(_, &r)| r == i);
            let (Some((leaf, _)), None) = (leaves.next(), leaves.next()) else {
                return FieldKind::Arrow;
            };
            let descr = parquet.column(leaf);
            if categorical::writes_exactly(f.data_type(), &descr) {
                return FieldKind::Categorical;
            }
            let given = first
                .and_then(|b| b.columns().get(i))
                .map(|c| c.data_type());
            match (f.data_type(), given) {
                (t @ (DataType::Utf8 | DataType::LargeUtf8), Some(DataType::Dictionary(_, v)))
                    if v.as_ref() == t && descr.max_rep_level() == 0 =>
                {
                    FieldKind::DictionaryStrings
                }
                _ => FieldKind::Arrow,
            }
        })
        .collect()
}

/// Marks the fields `fixed_list` writes: fixed-size lists of primitives (one leaf).
fn mark_fixed_lists(
    kinds: &mut [FieldKind],
    arrow: &Schema,
    parquet: &parquet::schema::types::SchemaDescriptor,
    field_of: &[usize],
) {
    for (i, (kind, f)) in kinds.iter_mut().zip(arrow.fields()).enumerate() {
        let mut leaves = field_of.iter().enumerate().filter(|&(_, &r)| r == i);
        let (Some((leaf, _)), None) = (leaves.next(), leaves.next()) else {
            continue;
        };
        if *kind == FieldKind::Arrow && fixed_list::writes(f.data_type(), &parquet.column(leaf)) {
            *kind = FieldKind::FixedList;
        }
    }
}

/// Row groups closed and queued for the background encoders besides the newest before the
/// writer waits for the oldest: the previous row group finishes while the new one's rows are
/// encoded as they come; memory holds about three row groups.
const ROW_GROUPS_IN_FLIGHT: usize = 1;

/// Values of the first batch sampled to judge a column's cardinality.
const DICTIONARY_SAMPLE: usize = 65_536;

/// The top-level numeric, time and text columns of `batch` whose first [`DICTIONARY_SAMPLE`]
/// values are more than half distinct: a dictionary of those fills its page and falls back to
/// plain encoding anyway, after hashing every value and leaving dictionary-encoded pages behind
/// that compress worse than plain ones (polars encodes such columns plain too). Written plain.
/// Fixed-size lists of 4- and 8-byte values too, when their dictionary would outgrow its page
/// early in a row group of `group_rows` rows ([`list_dictionary_overflows`]).
fn mostly_distinct_columns(batch: &RecordBatch, group_rows: usize) -> Vec<String> {
    use arrow_array::Array;
    let mut out = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if matches!(field.data_type(), DataType::Dictionary(..)) {
            continue;
        }
        if let Some(list) = column.as_fixed_size_list_opt() {
            let values = list.values();
            let group_values = group_rows.saturating_mul(list.value_length().max(0) as usize);
            let overflows = match values.data_type().primitive_width() {
                Some(w @ (4 | 8)) => list_dictionary_overflows(values, w, group_values),
                _ => false,
            };
            if overflows {
                out.push(field.name().clone());
            }
            continue;
        }
        let n = column.len().min(DICTIONARY_SAMPLE);
        let sample = column.slice(0, n);
        let distinct = match field.data_type() {
            DataType::Utf8 => distinct_texts(
                sample
                    .as_string::<i32>()
                    .iter()
                    .map(|v| v.map(str::as_bytes)),
            ),
            DataType::LargeUtf8 => distinct_texts(
                sample
                    .as_string::<i64>()
                    .iter()
                    .map(|v| v.map(str::as_bytes)),
            ),
            DataType::Binary => distinct_texts(sample.as_binary::<i32>().iter()),
            DataType::LargeBinary => distinct_texts(sample.as_binary::<i64>().iter()),
            t => match t.primitive_width() {
                Some(w @ (4 | 8)) => distinct_words(&sample, w),
                _ => None,
            },
        };
        if let Some((distinct, valid)) = distinct {
            if valid > 0 && distinct * 2 > valid {
                out.push(field.name().clone());
            }
        }
    }
    out
}

/// Whether a dictionary of a fixed-size list column's `width`-byte values (`group_values` per
/// row group) would outgrow arrow-rs's dictionary page limit within the first quarter of a
/// row group: arrow-rs then writes the rest PLAIN anyway, so writing the whole chunk PLAIN (by
/// sciio's own encoder, `fixed_list`) changes the file size little and spares hashing. Judged
/// on the first [`DICTIONARY_SAMPLE`] values: new values are assumed to keep coming at the
/// rate of the sample's second half (a column of few values stops adding any).
fn list_dictionary_overflows(values: &ArrayRef, width: usize, group_values: usize) -> bool {
    let n = values.len().min(DICTIONARY_SAMPLE);
    let half = n / 2;
    if half == 0 {
        return false;
    }
    let (Some((first, _)), Some((all, _))) = (
        distinct_words(&values.slice(0, half), width),
        distinct_words(&values.slice(0, n), width),
    ) else {
        return false;
    };
    let rate = all.saturating_sub(first) as f64 / (n - half) as f64;
    let expected = all as f64 + rate * group_values.saturating_sub(n) as f64;
    let limit = parquet::file::properties::DEFAULT_DICTIONARY_PAGE_SIZE_LIMIT as f64;
    expected * width as f64 > 4.0 * limit
}

/// Distinct values and valid values among `values`.
fn distinct_texts<'a>(values: impl Iterator<Item = Option<&'a [u8]>>) -> Option<(usize, usize)> {
    let mut seen = std::collections::HashSet::new();
    let mut valid = 0usize;
    for v in values.flatten() {
        valid += 1;
        seen.insert(v);
    }
    Some((seen.len(), valid))
}

/// Distinct values and valid values of a primitive column of `width`-byte values.
fn distinct_words(column: &ArrayRef, width: usize) -> Option<(usize, usize)> {
    use arrow_array::Array;
    let data = column.to_data();
    let values = data.buffers().first()?;
    let start = data.offset().saturating_mul(width);
    let bytes = values
        .as_slice()
        .get(start..start.saturating_add(column.len() * width))?;
    let mut seen = std::collections::HashSet::with_capacity(column.len());
    let mut valid = 0usize;
    for (i, v) in bytes.chunks_exact(width).enumerate() {
        if column.is_valid(i) {
            valid += 1;
            let mut word = [0u8; 8];
            if let Some(dst) = word.get_mut(..width) {
                dst.copy_from_slice(v);
            }
            seen.insert(u64::from_le_bytes(word));
        }
    }
    Some((seen.len(), valid))
}

/// Writes a whole frame to `path`.
pub fn write_frame(path: impl AsRef<Path>, frame: &Frame, options: &ParquetOptions) -> Result<()> {
    let path = path.as_ref();
    let mut w = ParquetWriter::create(path, frame.schema(), options)?;
    for b in frame.batches() {
        w.write(b).map_err(|e| e.with_file(path))?;
    }
    w.finish().map_err(|e| e.with_file(path))
}

/// `x.parquet → y.parquet`: copies batch by batch (bounded memory), keeping the pandas metadata
/// (index, labels, per-column metadata) and re-encoding with `options`; dictionary-encoded
/// string columns keep their dictionaries ([`ReadOptions::dictionary_strings`]). Returns the
/// rows copied.
pub fn copy_parquet(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    options: &ParquetOptions,
) -> Result<u64> {
    let (src, dst) = (src.as_ref(), dst.as_ref());
    let reader = ParquetReader::open_with(src, &ReadOptions::new().dictionary_strings(true))?;
    let mut writer = ParquetWriter::create(dst, reader.schema(), options)?;
    let mut rows = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| e.with_file(src))?;
        rows += batch.num_rows() as u64;
        writer.write(&batch).map_err(|e| e.with_file(dst))?;
    }
    writer.finish().map_err(|e| e.with_file(dst))?;
    Ok(rows)
}

/// Refuses column chunks whose byte range is negative or beyond the file: the parquet crate
/// asserts (panics) on negative ones when it opens their pages (found by fuzzing parquet_read).
/// Column chunks whose decoded pages would be larger than the limits allow, checked before
/// any page is read: over `max_alloc`, or a decompression bomb (parquet-testing's
/// large_string_map.brotli.parquet: 3 KiB of brotli announcing 2 GiB of pages, which pyarrow
/// refuses too after decoding them). Honest pages are at most a few MiB each behind their own
/// page header, which bounds a chunk's ratio far below `max_ratio` x 32 unless it is large.
fn check_chunk_sizes(
    meta: &ParquetMetaData,
    groups: &[(usize, u64)],
    limits: &Limits,
) -> Result<()> {
    const SMALL: u64 = 256 << 20;
    for &(g, _) in groups {
        let Some(rg) = meta.row_groups().get(g) else {
            continue;
        };
        for chunk in rg.columns() {
            let packed = u64::try_from(chunk.compressed_size()).unwrap_or(0).max(1);
            let unpacked = u64::try_from(chunk.uncompressed_size()).unwrap_or(0);
            let where_ = || format!("row group {g}, column '{}'", chunk.column_path().string());
            limits
                .check_alloc(unpacked, "a column chunk's decoded pages")
                .map_err(|e| e.with_node(where_()))?;
            if unpacked > SMALL && unpacked / packed > limits.max_ratio.saturating_mul(32) {
                return Err(Error::unsupported(format!(
                    "{}: {packed} compressed bytes announce {unpacked} bytes of pages \
                     ({}:1), a decompression bomb; not read",
                    where_(),
                    unpacked / packed
                )));
            }
        }
    }
    Ok(())
}

fn check_chunk_ranges(meta: &ParquetMetaData, file_len: u64) -> Result<()> {
    for (g, rg) in meta.row_groups().iter().enumerate() {
        for (c, chunk) in rg.columns().iter().enumerate() {
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or_else(|| chunk.data_page_offset());
            let len = chunk.compressed_size();
            let inside = u64::try_from(start)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(s, l)| s.checked_add(l))
                .is_some_and(|end| end <= file_len);
            if !inside {
                return Err(Error::format(format!(
                    "row group {g}, column {c}: pages at offset {start}, {len} bytes, outside the \
                     {file_len}-byte file"
                )));
            }
        }
    }
    Ok(())
}
