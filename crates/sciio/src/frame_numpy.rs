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

/// Frames smaller than this both on disk and in memory are read whole: one pass instead of two.
const STREAM_MIN_BYTES: u64 = 32 << 20;

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
    match Layout::of_file(reader, &schema, file, limits, with_index)? {
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
    for_each_frame(open(file, limits)?, &source.schema, file, |frame| {
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

/// The Parquet file being streamed.
struct Source<'a> {
    file: &'a Path,
    limits: Limits,
    schema: FrameSchema,
    total_rows: u64,
    total_bytes: u64,
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
            schema,
            total_rows,
            total_bytes: src.size_on_disk(),
        };
        Ok(Some((source, layout)))
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
        for_each_frame(open(file, limits)?, &source.schema, file, |frame| {
            let columns = layout.columns(frame, file, limits, offset)?;
            for (writer, (name, column)) in writers.iter_mut().zip(&columns) {
                writer
                    .write_all(column.as_bytes())
                    .map_err(|e| Error::io("cannot write a temporary file", e).with_node(name))?;
                gathered += column.as_bytes().len() as u64;
            }
            offset += frame.num_rows() as u64;
            // Half the work: gathering; the other half, copying into the archive.
            progress((gathered / 2).min(source.total_bytes), source.total_bytes);
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
    write_atomically(dst, |out| {
        let mut zip = ZipWriter::new(out).compression(compression);
        let mut copied = 0u64;
        for ((name, dtype), (temp, _)) in layout.fields.iter().zip(&temps) {
            let member_name = format!("{name}.npy");
            let located = |e: Error| e.with_node(member_name.clone());
            let mut member = zip.start_member(&member_name).map_err(located)?;
            let header = sciio_npy::header_bytes(dtype, &[rows], false)?;
            member
                .write_all(&header)
                .map_err(|e| located(Error::io("cannot write", e)))?;
            let mut data = temp
                .reopen()
                .map_err(|e| located(Error::io("cannot read a temporary file", e)))?;
            copied += std::io::copy(&mut data, &mut member)
                .map_err(|e| located(Error::io("cannot copy a temporary file", e)))?;
            member.finish().map_err(located)?;
            progress(
                (gathered / 2 + copied / 2).min(source.total_bytes),
                source.total_bytes,
            );
        }
        zip.finish()?;
        Ok(copied)
    })
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
    /// The first pass: `None` when batches disagree in a way padding cannot mend.
    fn of_file(
        reader: ParquetReader,
        schema: &FrameSchema,
        file: &Path,
        limits: &Limits,
        with_index: bool,
    ) -> Result<Option<Layout>> {
        let mut fields: Vec<(String, DType)> = Vec::new();
        let mut left_out: Vec<LeftOut> = Vec::new();
        let mut left_names: HashSet<String> = HashSet::new();
        let mut first = true;
        let mut suited = true;
        for_each_frame(reader, schema, file, |frame| {
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
            schema,
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
