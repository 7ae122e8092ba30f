//! Parquet into numpy files in bounded memory, record batch by record batch: `x.parquet →
//! y.npy` (and `y.npz:member`) as the structured array `df.to_records(index=False)` gives,
//! `x.parquet → y.npz` as one member per index level and column, each member's data gathered
//! in a temporary file beside the destination while the batches pass, then copied into the
//! archive (zip members are written one after the other).
//!
//! A batch's columns become numpy arrays exactly as the whole-frame path makes them
//! (`parquet::numpy_columns`); what only the whole file decides is found by a first pass over
//! it: the widest text (`U<n>`/`S<n>`), which columns have missing values somewhere (an
//! integer column then carries a mask in every batch) and which are left out somewhere (text
//! with a missing value: numpy's fixed-width strings cannot hold it). The second pass writes
//! each batch's records padded to that layout, after the NPY header sized from the footer's
//! row count. Frames whose batches disagree otherwise (none that sciio-pandas makes) and small
//! files are left to the whole-frame path.

use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::path::Path;

use sciio_core::{DType, Error, Limits, NdArray, Order, Result, ScalarKind, ScalarType};
use sciio_pandas::{Frame, FrameSchema, IndexLevel, ParquetReader, ReadOptions, MASK_SUFFIX};

use crate::atomic::{temp_file_beside, write_atomically};
use crate::file::File;
use crate::job::{Job, Written};
use crate::options::npz_compression;
use crate::parquet::{numpy_columns, records_of};
use crate::parquet_convert::npz_member;
use crate::plan::{Item, LeftOut};
use sciio_zip::ZipWriter;

#[cfg(feature = "hdfstore")]
use sciio_hdfstore::HdfStore;

/// Frames smaller than this both on disk and in memory are read whole: one pass instead of two.
pub(crate) const STREAM_MIN_BYTES: u64 = 32 << 20;

/// Whether a Parquet frame is large enough to stream: [`STREAM_MIN_BYTES`] on disk or in
/// memory (the footer's uncompressed size: a well-compressed file can hold many times its size).
pub(crate) fn large_enough_to_stream(src: &File) -> Result<bool> {
    if src.size_on_disk() >= STREAM_MIN_BYTES {
        return Ok(true);
    }
    Ok(open(src.path(), src.limits())?.data_bytes() >= STREAM_MIN_BYTES)
}

/// Record batches decoded ahead of the writer.
const IN_FLIGHT: usize = 2;

/// `x.parquet → y.npy` streamed (see the module docs); `None` for small files, compressed
/// destinations (refused by the whole-frame path) and frames the first pass finds unsuited.
pub(crate) fn frame_to_npy(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let (dst, options) = (job.dst, job.options);
    let [(src, _)] = &*job.sources else {
        return Ok(None);
    };
    let compressed = options
        .compress
        .as_ref()
        .is_some_and(|s| !s.is_uncompressed());
    if compressed || !large_enough_to_stream(src)? {
        return Ok(None);
    }
    let Some((source, layout)) = Source::of(src, None)? else {
        return Ok(None);
    };
    job.plan.extend(layout.left_out.clone());
    job.plan.ready()?;
    let progress = &mut *job.progress;
    let written = write_atomically(dst, |out| write_records(&source, &layout, out, progress))?;
    progress(source.total_bytes, source.total_bytes);
    Ok(Some(Written {
        arrays: vec!["/".to_string()],
        data_bytes: written,
    }))
}

/// The file's schema, row count and layout: the index levels as fields when `with_index`
/// (`None`: when the index is stored, not a RangeIndex); `None` when the frame does not
/// stream or has no field numpy holds.
fn plan(
    file: &Path,
    limits: &Limits,
    with_index: Option<bool>,
) -> Result<Option<(FrameSchema, u64, Layout)>> {
    let reader = open(file, limits)?;
    let schema = reader.schema().clone();
    let total_rows = reader.num_rows();
    let with_index = with_index.unwrap_or_else(|| stored_index(&schema));
    let frames =
        |each: &mut dyn FnMut(&Frame) -> Result<()>| for_each_frame(reader, &schema, file, each);
    match Layout::of_frames(frames, file, limits, with_index)? {
        Some(layout) if !layout.fields.is_empty() => Ok(Some((schema, total_rows, layout))),
        _ => Ok(None),
    }
}

/// The NPY header and records of the whole file into `out`; the bytes of data written.
fn write_records(
    source: &Source<'_>,
    layout: &Layout,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<u64> {
    let (file, limits) = (source.file, &source.limits);
    let mut written = 0u64;
    let mut offset = 0u64;
    source.each_frame(|frame| {
        let rows = frame.num_rows();
        let records = records_of(&layout.columns(frame, file, limits, offset)?, rows)
            .map_err(|e| e.with_file(file))?;
        if offset == 0 {
            let shape = [usize::try_from(source.total_rows).unwrap_or(usize::MAX)];
            let header = sciio_npy::header_bytes(records.dtype(), &shape, false)?;
            out.write_all(&header)
                .map_err(|e| Error::io("cannot write", e))?;
        }
        out.write_all(records.as_bytes())
            .map_err(|e| Error::io("cannot write", e))?;
        offset += rows as u64;
        written += records.as_bytes().len() as u64;
        progress(written.min(source.total_bytes), source.total_bytes);
        Ok(())
    })?;
    check_rows(offset, source.total_rows, file)?;
    Ok(written)
}

/// `x.parquet → y.npz` streamed: a member per index level and column, or the records in one
/// member when the destination names one (`y.npz:m`); `None` as [`frame_to_npy`] and for
/// frames of more than [`MAX_MEMBERS`] arrays.
pub(crate) fn frame_to_npz(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let (dst, options) = (job.dst, job.options);
    let [(src, _)] = &*job.sources else {
        return Ok(None);
    };
    if !large_enough_to_stream(src)? {
        return Ok(None);
    }
    let compression = npz_compression(options.compress.as_ref())?;
    let member = npz_member(options);
    // One member of records holds the stored index only, as `.npy`; members hold every level.
    let with_index = member.is_none().then_some(true);
    let Some((source, layout)) = Source::of(src, with_index)? else {
        return Ok(None);
    };
    if member.is_none() && layout.fields.len() > MAX_MEMBERS {
        return Ok(None);
    }
    job.plan.extend(layout.left_out.clone());
    job.plan.ready()?;
    let progress = &mut *job.progress;
    let (arrays, bytes) = match member {
        Some(name) => {
            let bytes = records_member(&source, &layout, name, dst, compression, progress)?;
            (vec![name.to_string()], bytes)
        }
        None => {
            let bytes = column_members(&source, &layout, dst, compression, progress)?;
            (
                layout.fields.iter().map(|(n, _)| n.clone()).collect(),
                bytes,
            )
        }
    };
    progress(source.total_bytes, source.total_bytes);
    Ok(Some(Written {
        arrays,
        data_bytes: bytes,
    }))
}

/// Arrays of a frame gathered in temporary files at most (each an open file).
const MAX_MEMBERS: usize = 256;

/// The frame being streamed: a Parquet file, or a key of a pandas HDFStore.
struct Source<'a> {
    file: &'a Path,
    limits: Limits,
    origin: Origin,
    total_rows: u64,
    total_bytes: u64,
}

/// Where a [`Source`]'s record batches come from.
enum Origin {
    /// The Parquet file, its frame's schema.
    Parquet(Box<FrameSchema>),
    /// A key of a store read in slices ([`HdfStore::read_batches`]).
    #[cfg(feature = "hdfstore")]
    Store(HdfStore, String),
}

impl<'a> Source<'a> {
    /// `src` with its layout (the index levels as fields as [`plan`] says); `None` when the
    /// frame does not stream.
    fn of(src: &'a File, with_index: Option<bool>) -> Result<Option<(Source<'a>, Layout)>> {
        let (file, limits) = (src.path(), *src.limits());
        let Some((schema, total_rows, layout)) = plan(file, &limits, with_index)? else {
            return Ok(None);
        };
        let source = Source {
            file,
            limits,
            origin: Origin::Parquet(Box::new(schema)),
            total_rows,
            total_bytes: src.size_on_disk(),
        };
        Ok(Some((source, layout)))
    }

    /// Calls `each` with every batch of the source as a frame of its rows, in order.
    fn each_frame(&self, each: impl FnMut(&Frame) -> Result<()>) -> Result<()> {
        match &self.origin {
            Origin::Parquet(schema) => {
                for_each_frame(open(self.file, &self.limits)?, schema, self.file, each)
            }
            #[cfg(feature = "hdfstore")]
            Origin::Store(store, key) => store_frames(store, key, self.file, each),
        }
    }
}

/// The frame's records into the one member `name` of a new archive at `dst`.
fn records_member(
    source: &Source<'_>,
    layout: &Layout,
    name: &str,
    dst: &Path,
    compression: sciio_zip::Compression,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<u64> {
    let member_name = format!("{name}.npy");
    let located = |e: Error| e.with_node(member_name.clone());
    write_atomically(dst, |out| {
        let mut zip = ZipWriter::new(out).compression(compression);
        let mut member = zip.start_member(&member_name).map_err(located)?;
        let written = write_records(source, layout, &mut member, progress).map_err(located)?;
        member.finish().map_err(located)?;
        zip.finish()?;
        Ok(written)
    })
}

/// A member per field of `layout` in a new archive at `dst`: each field's data is gathered in
/// a temporary file while the batches pass, then copied into its member.
fn column_members(
    source: &Source<'_>,
    layout: &Layout,
    dst: &Path,
    compression: sciio_zip::Compression,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<u64> {
    let total = source.total_bytes;
    let mut gathered = 0u64;
    let members = gather_columns(source, layout, "", dst, &mut |d| {
        gathered = d;
        // Half the work: gathering; the other half, copying into the archive.
        progress((d / 2).min(total), total);
    })?;
    write_members(members, dst, compression, &mut |d| {
        progress((gathered / 2 + d / 2).min(total), total)
    })
}

/// A member of an archive being made: its name (without `.npy`) and data.
pub(crate) struct Member {
    name: String,
    data: MemberData,
}

/// Where a [`Member`]'s data is.
enum MemberData {
    /// Gathered in a temporary file: `rows` values of `dtype`.
    Gathered {
        dtype: DType,
        rows: usize,
        temp: tempfile::NamedTempFile,
        _registered: sciio_temp::Registration,
    },
    /// Held whole.
    #[cfg(feature = "hdfstore")]
    Array(NdArray),
}

#[cfg(feature = "hdfstore")]
impl Member {
    /// A member of `array`, held whole.
    pub(crate) fn array(name: String, array: NdArray) -> Member {
        Member {
            name,
            data: MemberData::Array(array),
        }
    }

    /// Its name in the archive, without `.npy`.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}

/// Each field of `layout` gathered into a temporary file beside `dst` as the source's batches
/// pass, named `prefix` and the field's name; `progress` is told the bytes gathered so far.
fn gather_columns(
    source: &Source<'_>,
    layout: &Layout,
    prefix: &str,
    dst: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<Member>> {
    let (file, limits) = (source.file, &source.limits);
    let temps = layout
        .fields
        .iter()
        .map(|_| temp_file_beside(dst))
        .collect::<Result<Vec<_>>>()?;
    let mut gathered = 0u64;
    {
        let mut writers: Vec<_> = temps
            .iter()
            .map(|(t, _)| BufWriter::with_capacity(256 << 10, t.as_file()))
            .collect();
        let mut offset = 0u64;
        source.each_frame(|frame| {
            let columns = layout.columns(frame, file, limits, offset)?;
            for (writer, (name, column)) in writers.iter_mut().zip(&columns) {
                writer
                    .write_all(column.as_bytes())
                    .map_err(|e| Error::io("cannot write a temporary file", e).with_node(name))?;
                gathered += column.as_bytes().len() as u64;
            }
            offset += frame.num_rows() as u64;
            progress(gathered);
            Ok(())
        })?;
        check_rows(offset, source.total_rows, file)?;
        for writer in &mut writers {
            writer
                .flush()
                .map_err(|e| Error::io("cannot write a temporary file", e))?;
        }
    }
    let rows = usize::try_from(source.total_rows).unwrap_or(usize::MAX);
    let members = layout
        .fields
        .iter()
        .zip(temps)
        .map(|((name, dtype), (temp, registered))| Member {
            name: format!("{prefix}{name}"),
            data: MemberData::Gathered {
                dtype: dtype.clone(),
                rows,
                temp,
                _registered: registered,
            },
        })
        .collect();
    Ok(members)
}

/// `members` in order into a new archive at `dst` (gathered ones copied from their temporary
/// files); `progress` is told the bytes of data written so far, which this returns.
pub(crate) fn write_members(
    members: Vec<Member>,
    dst: &Path,
    compression: sciio_zip::Compression,
    progress: &mut dyn FnMut(u64),
) -> Result<u64> {
    write_atomically(dst, |out| {
        let mut zip = ZipWriter::new(out).compression(compression);
        let mut copied = 0u64;
        for member in &members {
            let member_name = format!("{}.npy", member.name);
            let located = |e: Error| e.with_node(member_name.clone());
            let mut out = zip.start_member(&member_name).map_err(located)?;
            match &member.data {
                MemberData::Gathered {
                    dtype, rows, temp, ..
                } => {
                    let header = sciio_npy::header_bytes(dtype, &[*rows], false)?;
                    out.write_all(&header)
                        .map_err(|e| located(Error::io("cannot write", e)))?;
                    let mut data = temp
                        .reopen()
                        .map_err(|e| located(Error::io("cannot read a temporary file", e)))?;
                    copied += std::io::copy(&mut data, &mut out)
                        .map_err(|e| located(Error::io("cannot copy a temporary file", e)))?;
                }
                #[cfg(feature = "hdfstore")]
                MemberData::Array(array) => {
                    sciio_npy::write_array(&mut out, array).map_err(located)?;
                    copied += array.as_bytes().len() as u64;
                }
            }
            out.finish().map_err(located)?;
            progress(copied);
        }
        zip.finish()?;
        Ok(copied)
    })
}

/// Rows of a store key's slices read while its columns are gathered.
#[cfg(feature = "hdfstore")]
const STORE_SLICE_ROWS: usize = 1 << 17;

/// Calls `each` with every slice of a store's `key` in order.
#[cfg(feature = "hdfstore")]
fn store_frames(
    store: &HdfStore,
    key: &str,
    file: &Path,
    mut each: impl FnMut(&Frame) -> Result<()>,
) -> Result<()> {
    let located = |e: Error| e.with_file(file).with_node(key.to_string());
    let batches = store
        .read_batches(key, STORE_SLICE_ROWS)
        .map_err(located)?
        .ok_or_else(|| located(Error::format("the key no longer reads in slices")))?;
    for frame in batches {
        each(&frame.map_err(located)?)?;
    }
    Ok(())
}

/// A store's key to be streamed into an archive's members ([`StoreKey::of`]).
#[cfg(feature = "hdfstore")]
pub(crate) struct StoreKey<'a> {
    source: Source<'a>,
    layout: Layout,
    /// The columns the key's frame leaves out (numpy's are in `layout`).
    columns: Vec<sciio_hdfstore::LeftOutColumn>,
}

#[cfg(feature = "hdfstore")]
impl<'a> StoreKey<'a> {
    /// A store's `key` with the layout of its columns as members, found by a first pass over
    /// its slices as for Parquet (widest text, masks, what is left out). `None` when the key
    /// does not read in slices, or its slices do not give the whole key's columns (a text
    /// column without a value in the whole key: see
    /// [`sciio_hdfstore::FrameBatches::text_missing_throughout`]): read it whole.
    pub(crate) fn of(src: &'a File, key: &str) -> Result<Option<StoreKey<'a>>> {
        let (file, limits) = (src.path(), *src.limits());
        let Some(store) = src.hdf_store() else {
            return Ok(None);
        };
        let located = |e: Error| e.with_file(file).with_node(key.to_string());
        let Some(mut batches) = store.read_batches(key, STORE_SLICE_ROWS).map_err(located)? else {
            return Ok(None);
        };
        let total_rows = batches.num_rows();
        let frames = |each: &mut dyn FnMut(&Frame) -> Result<()>| {
            for frame in batches.by_ref() {
                each(&frame.map_err(located)?)?;
            }
            Ok(())
        };
        let layout = Layout::of_frames(frames, file, &limits, true)?;
        let (Some(layout), []) = (layout, batches.text_missing_throughout()) else {
            return Ok(None);
        };
        if layout.fields.is_empty() {
            return Ok(None);
        }
        let columns = batches.left_out().to_vec();
        drop(batches);
        let source = Source {
            file,
            limits,
            origin: Origin::Store(store, key.to_string()),
            total_rows,
            total_bytes: src.size_on_disk(),
        };
        Ok(Some(StoreKey {
            source,
            layout,
            columns,
        }))
    }

    /// The columns left out: the frame's, then numpy's.
    pub(crate) fn left_out(&self) -> (&[sciio_hdfstore::LeftOutColumn], &[LeftOut]) {
        (&self.columns, &self.layout.left_out)
    }

    /// The key as one structured array (`df.to_records()`, the index levels first) into a
    /// new `.npy` file at `dst`; the bytes of data written.
    pub(crate) fn write_npy(&self, dst: &Path, progress: &mut dyn FnMut(u64, u64)) -> Result<u64> {
        write_atomically(dst, |out| {
            write_records(&self.source, &self.layout, out, progress)
        })
    }

    /// The key as one structured array in member `name` of a new archive at `dst`.
    pub(crate) fn records_member(
        &self,
        name: &str,
        dst: &Path,
        compression: sciio_zip::Compression,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<u64> {
        records_member(&self.source, &self.layout, name, dst, compression, progress)
    }

    /// The members (named `prefix` and the column), gathered in temporary files beside `dst`
    /// slice by slice; `progress` is told the bytes gathered so far.
    pub(crate) fn gather(
        &self,
        prefix: &str,
        dst: &Path,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Vec<Member>> {
        gather_columns(&self.source, &self.layout, prefix, dst, progress)
    }
}

fn stored_index(schema: &FrameSchema) -> bool {
    schema
        .index()
        .iter()
        .any(|level| matches!(level, IndexLevel::Column { .. }))
}

fn check_rows(read: u64, footer: u64, file: &Path) -> Result<()> {
    if read == footer {
        return Ok(());
    }
    Err(Error::format(format!(
        "the footer counts {footer} rows, the row groups {read}"
    ))
    .with_file(file))
}

fn open(file: &Path, limits: &Limits) -> Result<ParquetReader> {
    ParquetReader::open_with(file, &ReadOptions::new().limits(*limits))
        .map_err(|e| e.with_file(file))
}

/// Calls `each` with every record batch of `reader` as a frame of its rows, in order; the
/// batches are decoded on a thread of their own, a few ahead.
fn for_each_frame(
    reader: ParquetReader,
    schema: &FrameSchema,
    file: &Path,
    mut each: impl FnMut(&Frame) -> Result<()>,
) -> Result<()> {
    std::thread::scope(|scope| {
        let (tx, batches) = std::sync::mpsc::sync_channel(IN_FLIGHT);
        scope.spawn(move || {
            for batch in reader {
                if tx.send(batch).is_err() {
                    break;
                }
            }
        });
        let mut offset = 0u64;
        for batch in batches.iter() {
            let batch = batch.map_err(|e| e.with_file(file))?;
            let rows = batch.num_rows() as u64;
            let part = schema.rows_slice(offset, rows);
            let frame = Frame::new(part, vec![batch]).map_err(|e| e.with_file(file))?;
            each(&frame)?;
            offset += rows;
        }
        Ok(())
    })
}

/// What the whole file's records hold: every field with its widest dtype, in the whole-frame
/// path's order, and what is left out.
#[derive(Debug)]
struct Layout {
    /// Whether the index levels are fields (the index is stored: not a RangeIndex).
    with_index: bool,
    fields: Vec<(String, DType)>,
    left_out: Vec<LeftOut>,
}

impl Layout {
    /// The first pass over the batches `frames` calls its argument with: `None` when they
    /// disagree in a way padding cannot mend.
    fn of_frames(
        frames: impl FnOnce(&mut dyn FnMut(&Frame) -> Result<()>) -> Result<()>,
        file: &Path,
        limits: &Limits,
        with_index: bool,
    ) -> Result<Option<Layout>> {
        let mut fields: Vec<(String, DType)> = Vec::new();
        let mut left_out: Vec<LeftOut> = Vec::new();
        let mut left_names: HashSet<String> = HashSet::new();
        let mut first = true;
        let mut suited = true;
        frames(&mut |frame| {
            if !suited {
                return Ok(());
            }
            let (arrays, left) = numpy_columns(frame, with_index, file, limits)?;
            for item in left {
                if let Item::Column { label, .. } = &item.what {
                    if left_names.insert(label.clone()) {
                        left_out.push(item);
                    }
                }
            }
            suited = merge(&mut fields, &arrays, first, &left_names);
            first = false;
            Ok(())
        })?;
        if !suited {
            return Ok(None);
        }
        fields.retain(|(name, _)| !left_names.contains(name));
        Ok(Some(Layout {
            with_index,
            fields,
            left_out,
        }))
    }

    /// One batch's arrays in this layout: text padded to the widest, a mask of `False`
    /// where this batch had no missing value.
    fn columns(
        &self,
        frame: &Frame,
        file: &Path,
        limits: &Limits,
        offset: u64,
    ) -> Result<Vec<(String, NdArray)>> {
        let rows = frame.num_rows();
        let (arrays, _) = numpy_columns(frame, self.with_index, file, limits)?;
        let mut columns = Vec::with_capacity(self.fields.len());
        for (name, dtype) in &self.fields {
            let column = match arrays.iter().find(|(n, _)| n == name) {
                Some((_, array)) => widen(array, dtype)?,
                None if name.ends_with(MASK_SUFFIX) => no_missing(rows)?,
                None => {
                    return Err(Error::format(format!(
                        "column '{name}' has no numpy values in the rows from {offset} \
                         (the first pass found it)"
                    ))
                    .with_file(file))
                }
            };
            columns.push((name.clone(), column));
        }
        Ok(columns)
    }
}

/// Merges one batch's arrays into `fields`: text widened to the widest, masks where a batch
/// has one; false when the batch brings another dtype or an unknown column.
fn merge(
    fields: &mut Vec<(String, DType)>,
    arrays: &[(String, NdArray)],
    first: bool,
    left: &HashSet<String>,
) -> bool {
    for (name, array) in arrays {
        let dtype = array.dtype();
        if let Some((_, known)) = fields.iter_mut().find(|(n, _)| n == name) {
            match widest(known, dtype) {
                Some(wide) => *known = wide,
                None => return false,
            }
            continue;
        }
        let base = name.strip_suffix(MASK_SUFFIX);
        match base.and_then(|b| fields.iter().position(|(n, _)| n == b)) {
            Some(at) => fields.insert(at + 1, (name.clone(), dtype.clone())),
            None if first || left.contains(name) => fields.push((name.clone(), dtype.clone())),
            None => return false,
        }
    }
    // Every known field is in the batch, but masks (the batch had no missing value) and the
    // columns left out of it.
    fields.iter().all(|(name, _)| {
        name.ends_with(MASK_SUFFIX) || left.contains(name) || arrays.iter().any(|(n, _)| n == name)
    })
}

/// The wider of two dtypes that differ at most in a text width.
fn widest(a: &DType, b: &DType) -> Option<DType> {
    if a == b {
        return Some(a.clone());
    }
    let (DType::Scalar(x), DType::Scalar(y)) = (a, b) else {
        return None;
    };
    let kind = match (x.kind, y.kind) {
        (ScalarKind::Unicode(m), ScalarKind::Unicode(n)) => ScalarKind::Unicode(m.max(n)),
        (ScalarKind::Bytes(m), ScalarKind::Bytes(n)) => ScalarKind::Bytes(m.max(n)),
        _ => return None,
    };
    (x.order == y.order).then(|| DType::Scalar(ScalarType::new(kind, x.order)))
}

/// `array` (1-d) as `dtype`: the same array, or text zero-padded to a wider width.
fn widen(array: &NdArray, dtype: &DType) -> Result<NdArray> {
    if array.dtype() == dtype {
        return Ok(array.clone());
    }
    let (from, to) = (array.dtype().itemsize(), dtype.itemsize());
    if widest(array.dtype(), dtype).as_ref() != Some(dtype) || from == 0 {
        return Err(Error::format(format!(
            "a batch's {} does not fit the file's {dtype}",
            array.dtype()
        )));
    }
    let rows = array.len();
    let mut bytes = vec![0u8; rows.saturating_mul(to)];
    for (slot, value) in bytes
        .chunks_exact_mut(to)
        .zip(array.as_bytes().chunks_exact(from))
    {
        slot[..from].copy_from_slice(value);
    }
    NdArray::from_byte_vec(dtype.clone(), &[rows], Order::C, bytes)
}

/// The mask of a batch without missing values: `rows` times `False`.
fn no_missing(rows: usize) -> Result<NdArray> {
    NdArray::from_byte_vec(
        DType::scalar(ScalarKind::Bool),
        &[rows],
        Order::C,
        vec![0u8; rows],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(width: usize) -> DType {
        DType::Scalar(ScalarType::native(ScalarKind::Unicode(width)))
    }

    #[test]
    fn text_widens_and_other_types_disagree() {
        assert_eq!(widest(&text(3), &text(7)), Some(text(7)));
        let int = DType::scalar(ScalarKind::Int(8));
        assert_eq!(widest(&int, &text(3)), None);
    }

    #[test]
    fn widened_text_keeps_each_value_padded() {
        let narrow =
            NdArray::from_byte_vec(text(1), &[2], Order::C, b"a\0\0\0b\0\0\0".to_vec()).unwrap();
        let wide = widen(&narrow, &text(2)).unwrap();
        assert_eq!(wide.as_bytes(), b"a\0\0\0\0\0\0\0b\0\0\0\0\0\0\0");
    }

    /// A frame whose row groups disagree: an Int64 and a boolean column missing values only
    /// in some, the longest text in the last, text with a missing value in the middle one
    /// (left out), a categorical, tz-aware times and a stored (named) index.
    const UNEVEN_FRAME: &str = "
import sys, numpy as np, pandas as pd
n = 3000
k = np.arange(n)
df = pd.DataFrame({
    'i': k,
    'n': pd.array([None if x > 2500 else x for x in k], dtype='Int64'),
    'b': pd.array([None if 1200 < x < 1300 else x % 2 == 0 for x in k], dtype='boolean'),
    's': ['x' * 50 if x == 2999 else 'v%d' % x for x in k],
    'm': [None if x == 1500 else 'w' for x in k],
    'c': pd.Categorical(['a', 'bb', 'ccc'] * 1000),
    't': pd.date_range('2020-01-01', periods=n, freq='s', tz='UTC'),
}, index=pd.Index(k * 2, name='key'))
df.to_parquet(sys.argv[1], row_group_size=1000)
";

    fn uneven_frame(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("uneven.parquet");
        sciio_testkit::run_python(UNEVEN_FRAME, &[path.to_str().unwrap()]);
        path
    }

    #[test]
    fn streamed_columns_are_the_whole_frame_s() {
        let dir = tempfile::tempdir().unwrap();
        let path = uneven_frame(dir.path());
        let limits = Limits::default();
        let whole = crate::parquet::read_frame(&path, &limits).unwrap();
        let (want, want_left) = numpy_columns(&whole, true, &path, &limits).unwrap();
        let (schema, rows, layout) = plan(&path, &limits, Some(true)).unwrap().unwrap();
        assert_eq!(rows, 3000);
        let mut got: Vec<(String, Vec<u8>)> = Vec::new();
        let (mut offset, mut batches) = (0, 0);
        for_each_frame(open(&path, &limits).unwrap(), &schema, &path, |frame| {
            for (i, (name, array)) in layout
                .columns(frame, &path, &limits, offset)?
                .iter()
                .enumerate()
            {
                if offset == 0 {
                    got.push((name.clone(), Vec::new()));
                }
                got[i].1.extend_from_slice(array.as_bytes());
            }
            offset += frame.num_rows() as u64;
            batches += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(batches, 3, "a batch per row group");
        let names = |v: &[(String, NdArray)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(
            got.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
            names(&want)
        );
        for ((name, bytes), (_, array)) in got.iter().zip(&want) {
            assert_eq!(bytes, array.as_bytes(), "{name}");
        }
        assert_eq!(
            layout
                .fields
                .iter()
                .map(|(_, d)| d.clone())
                .collect::<Vec<_>>(),
            want.iter()
                .map(|(_, a)| a.dtype().clone())
                .collect::<Vec<_>>()
        );
        assert_eq!(layout.left_out.len(), want_left.len());
        assert_eq!(layout.left_out.len(), 1, "{:?}", layout.left_out);
    }

    #[test]
    fn streamed_records_are_the_whole_frame_s() {
        let dir = tempfile::tempdir().unwrap();
        let path = uneven_frame(dir.path());
        let limits = Limits::default();
        let whole = crate::parquet::read_frame(&path, &limits).unwrap();
        let (columns, _) = numpy_columns(&whole, true, &path, &limits).unwrap();
        let mut want = Vec::new();
        sciio_npy::write_array(&mut want, &records_of(&columns, 3000).unwrap()).unwrap();
        let (schema, total_rows, layout) = plan(&path, &limits, None).unwrap().unwrap();
        let source = Source {
            file: &path,
            limits,
            origin: Origin::Parquet(Box::new(schema)),
            total_rows,
            total_bytes: 1,
        };
        let mut got = Vec::new();
        write_records(&source, &layout, &mut got, &mut |_, _| {}).unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn masks_join_after_their_values_and_may_be_missing_from_a_batch() {
        let ints = NdArray::from_vec(vec![1i64, 2], &[2]).unwrap();
        let mask = no_missing(2).unwrap();
        let mut fields = Vec::new();
        let none = HashSet::new();
        assert!(merge(
            &mut fields,
            &[("a".into(), ints.clone())],
            true,
            &none
        ));
        let with_mask = [("a".into(), ints.clone()), ("a.mask".into(), mask)];
        assert!(merge(&mut fields, &with_mask, false, &none));
        assert_eq!(fields.len(), 2);
        assert!(merge(&mut fields, &[("a".into(), ints)], false, &none));
        let other = NdArray::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
        assert!(!merge(&mut fields, &[("a".into(), other)], false, &none));
    }
}

#[cfg(all(test, feature = "hdfstore"))]
mod store_tests {
    use super::*;

    /// Keys of several slices (`STORE_SLICE_ROWS`): a `table` key with data columns, text
    /// whose widest value is in the last slice, missing values, booleans, zoned datetimes and
    /// a stored index; a `fixed` key of number blocks and a string block.
    const STORE: &str = "
import sys, numpy as np, pandas as pd
n = 300_000
k = np.arange(n)
df = pd.DataFrame({
    'i': k * 3,
    'x': np.where(k % 7 == 0, np.nan, k / 3),
    'y': (k % 11).astype('f4'),
    'b': k % 2 == 0,
    's': ['w' * 40 if v == n - 1 else 'v%d' % (v % 1000) for v in k],
    't': pd.date_range('2020-01-01', periods=n, freq='s', tz='UTC'),
}, index=pd.Index(k * 2, name='key'))
df.to_hdf(sys.argv[1], key='tab', format='table', data_columns=['i', 's'])
df.drop(columns=['t']).to_hdf(sys.argv[1], key='fix', format='fixed')
";

    #[test]
    fn store_keys_gathered_slice_by_slice_are_the_whole_keys_members() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.h5");
        sciio_testkit::run_python(STORE, &[path.to_str().unwrap()]);
        let src = File::open(&path).unwrap();
        let store = src.hdf_store().unwrap();
        let dst = dir.path().join("out.npz");
        for key in ["/tab", "/fix"] {
            let (frame, _) = store.read_leaving_out(key).unwrap();
            let (want, want_left) = numpy_columns(&frame, true, &path, src.limits()).unwrap();
            let streamed = StoreKey::of(&src, key).unwrap().expect("the key streams");
            assert!(streamed.source.total_rows > STORE_SLICE_ROWS as u64 * 2);
            assert_eq!(streamed.left_out().1.len(), want_left.len(), "{key}");
            let members = streamed.gather("p/", &dst, &mut |_| {}).unwrap();
            assert_eq!(members.len(), want.len(), "{key}");
            for (member, (name, array)) in members.iter().zip(&want) {
                assert_eq!(member.name(), format!("p/{name}"), "{key}");
                let MemberData::Gathered {
                    dtype, rows, temp, ..
                } = &member.data
                else {
                    panic!("{key}/{name} was not gathered");
                };
                assert_eq!((dtype, *rows), (array.dtype(), array.len()), "{key}/{name}");
                let bytes = std::fs::read(temp.path()).unwrap();
                assert!(bytes == array.as_bytes(), "{key}/{name}");
            }
        }
    }
}
