//! pandas HDFStore files (`df.to_hdf`) through `sciio-hdfstore`: each key (a group with a
//! `pandas_type` attribute) is listed, printed and converted as the data frame
//! `pd.read_hdf(file, key)` returns.
//!
//! `store.h5:/key → x.parquet` writes the key's frame (pandas metadata included), `→ x.npz`
//! one member per index level and column. A whole store → `.npz` holds every key's columns as
//! `key/column` members; → a folder (`--to parquet` with a destination that is a folder or ends
//! in `/`) holds one Parquet file per key, named from the key with every character outside
//! `[A-Za-z0-9_-]` (and a leading `.`) escaped as `%XX`, so a key such as `/..` or one with
//! control characters never names a path outside that folder.

use std::path::{Path, PathBuf};

use sciio_core::{Error, Result};
use sciio_hdfstore::HdfStore;
use sciio_pandas::Frame;

use crate::format::Format;
use crate::frame_numpy::{write_members, Member, StoreKey};
use crate::job::{Job, Written};
use crate::options::{npz_compression, ConvertOptions};
use crate::parquet::{numpy_columns, options_for, records_of, write_frame, write_npz};
use crate::parquet_convert::npz_member;
use crate::plan::Plan;
use crate::store::frame_key;

/// A key of a whole store that cannot be read is left out with the reason (the other keys
/// convert); a key asked for by name stays an error.
fn read_or_leave_out(
    store: &HdfStore,
    key: &str,
    left_out: &mut Vec<crate::plan::LeftOut>,
) -> Result<Option<Frame>> {
    match store.read_leaving_out(key) {
        Ok((frame, columns)) => {
            left_out.extend(columns_left_out(key, columns));
            Ok(Some(frame))
        }
        Err(e) if e.kind() == crate::ErrorKind::Io => Err(e),
        Err(e) => {
            left_out.push(crate::plan::LeftOut::node(
                key,
                "a pandas key sciio cannot read",
                e.message().to_string(),
            ));
            Ok(None)
        }
    }
}

/// The columns a key's frame leaves out, as items of the conversion plan.
fn columns_left_out(
    key: &str,
    columns: Vec<sciio_hdfstore::LeftOutColumn>,
) -> Vec<crate::plan::LeftOut> {
    columns
        .into_iter()
        .map(|c| crate::plan::LeftOut::column(key, c.column, "a pandas column", c.reason))
        .collect()
}

/// The keys a store job converts: the key its node names, or every key of a whole store
/// going into a format that holds frames side by side; `None` when the source is not a store
/// key nor such a store.
fn keys_of(
    src: &crate::file::File,
    src_node: Option<&str>,
    format: Format,
) -> Result<Option<Vec<String>>> {
    let Some(store) = src.hdf_store() else {
        return Ok(None);
    };
    match src_node
        .map(|n| n.trim_matches('/'))
        .filter(|n| !n.is_empty())
    {
        Some(node) => Ok(frame_key(&store, node, || src.is_group(node))?.map(|key| vec![key])),
        None => {
            let keys = store.keys().map_err(|e| e.with_file(src.path()))?;
            let pandas = keys.iter().any(|k| k.is_pandas());
            if !pandas || !matches!(format, Format::Parquet | Format::Npz | Format::Mat) {
                return Ok(None);
            }
            Ok(Some(keys.into_iter().map(|k| k.key).collect()))
        }
    }
}

/// Conversions from a store: `None` when the source is not a store key nor a whole store.
pub(crate) fn store_keys(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let keys = match &*job.sources {
        [(src, src_node)] => keys_of(src, *src_node, job.format)?,
        _ => None,
    };
    let Some(keys) = keys else {
        return Ok(None);
    };
    // A frame into MAT: its columns, as into .npz (see frame_mat).
    #[cfg(feature = "mat")]
    if job.format == Format::Mat {
        return crate::frame_mat::through_columns(job, store_keys).map(Some);
    }
    let (dst, format, options) = (job.dst, job.format, job.options);
    let progress = &mut *job.progress;
    let plan = &mut job.plan;
    let [(src, src_node)] = &mut *job.sources else {
        return Ok(None);
    };
    let Some(store) = src.hdf_store() else {
        return Ok(None);
    };
    let file = src.path().to_path_buf();
    let whole = src_node.is_none();
    check_dst_node(options, format, whole, dst)?;
    let read = |key: &str, plan: &mut Plan| -> Result<Frame> {
        let (frame, columns) = store.read_leaving_out(key)?;
        plan.extend(columns_left_out(key, columns));
        plan.ready()?;
        Ok(frame)
    };
    let summary = match format {
        Format::Parquet if !whole || (keys.len() == 1 && !is_folder(dst)) => {
            let parquet = options_for(options.compress.as_ref())?;
            if let Some(written) = stream_key(&store, &keys[0], dst, &parquet, plan, progress)? {
                return Ok(Some(written));
            }
            let frame = read(&keys[0], plan)?;
            let arrays = write_frame(&frame, dst, &parquet)
                .map_err(|e| e.with_file(dst).with_node(keys[0].clone()))?;
            done(arrays, &frame, progress)
        }
        Format::Parquet if is_folder(dst) => {
            to_folder(&store, &keys, dst, options, plan, progress)?
        }
        Format::Parquet => {
            return Err(Error::invalid_input(format!(
                "the store holds {} keys and a Parquet file one frame: name a key \
                 (store.h5:{}) or give a folder ending in '/'",
                keys.len(),
                keys[0]
            ))
            .with_file(dst))
        }
        Format::Npz => {
            let compression = npz_compression(options.compress.as_ref())?;
            match npz_member(options) {
                Some(name) => to_records(
                    src,
                    &keys[0],
                    Records::Member(name, compression),
                    dst,
                    plan,
                    progress,
                )?,
                None => to_npz(src, &keys, whole, dst, compression, plan, progress)?,
            }
        }
        Format::Npy => {
            if let Some(spec) = options.compress.as_ref().filter(|s| !s.is_uncompressed()) {
                return Err(Error::unsupported(format!(
                    "npy files are never compressed (got '{spec}'); write .npz to compress"
                ))
                .with_file(dst));
            }
            to_records(src, &keys[0], Records::Npy, dst, plan, progress)?
        }
        other => {
            return Err(Error::unsupported(format!(
                "a pandas HDFStore key converts to .parquet, .npz, .npy or .mat, not {other}"
            ))
            .with_file(&file))
        }
    };
    Ok(Some(summary))
}

/// Keys into one archive at `dst`: a member per index level and column of each (named
/// `key/column` when `whole` is the whole store). A large store's keys that read in slices
/// are gathered column by column in temporary files ([`StoreKey`]); the others, and small
/// stores, are read whole.
fn to_npz(
    src: &crate::file::File,
    keys: &[String],
    whole: bool,
    dst: &Path,
    compression: sciio_zip::Compression,
    plan: &mut Plan,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Written> {
    let file = src.path();
    let Some(store) = src.hdf_store() else {
        return Err(Error::invalid_input("not a pandas HDFStore").with_file(file));
    };
    let store = &store;
    let stream = large_enough_to_stream(src);
    let mut parts: Vec<(String, Part<'_>)> = Vec::new();
    for key in keys {
        let prefix = match whole {
            true => format!("{}/", key.trim_start_matches('/')),
            false => String::new(),
        };
        // A key that fails here is read whole: that path reports it (or leaves it out).
        if let Some(streamed) = stream
            .then(|| StoreKey::of(src, key))
            .and_then(|k| k.ok().flatten())
        {
            let (columns, numpy) = streamed.left_out();
            plan.extend(columns_left_out(key, columns.to_vec()));
            plan.extend(numpy.to_vec());
            parts.push((prefix, Part::Streamed(Box::new(streamed))));
            continue;
        }
        let frame = if whole {
            match read_or_leave_out(store, key, &mut plan.left_out)? {
                Some(frame) => frame,
                None => continue,
            }
        } else {
            let (frame, columns) = store.read_leaving_out(key)?;
            plan.extend(columns_left_out(key, columns));
            frame
        };
        let (cols, left) = numpy_columns(&frame, true, file, src.limits())?;
        plan.extend(left);
        parts.push((prefix, Part::Whole(cols)));
    }
    plan.ready()?;
    let total: u64 = src.size_on_disk();
    let mut members = Vec::new();
    let mut gathered = 0u64;
    for (prefix, part) in parts {
        match part {
            Part::Streamed(key) => {
                let base = gathered;
                members.extend(key.gather(&prefix, dst, &mut |d| {
                    gathered = base + d;
                    progress((gathered / 2).min(total), total);
                })?);
            }
            Part::Whole(cols) => members.extend(
                cols.into_iter()
                    .map(|(n, a)| Member::array(format!("{prefix}{n}"), a)),
            ),
        }
    }
    let names: Vec<String> = members.iter().map(|m| m.name().to_string()).collect();
    let bytes = write_members(members, dst, compression, &mut |d| {
        progress((gathered / 2 + d / 2).min(total), total)
    })?;
    progress(total, total);
    Ok(Written {
        arrays: names,
        data_bytes: bytes,
    })
}

/// A destination node: a member of an archive for one key (its records); nothing else
/// takes one (a MAT destination's is a struct path, taken before).
fn check_dst_node(options: &ConvertOptions, format: Format, whole: bool, dst: &Path) -> Result<()> {
    let Some(node) = npz_member(options) else {
        return Ok(());
    };
    match (format, whole) {
        (Format::Npz, false) => Ok(()),
        (Format::Npz, true) => Err(Error::invalid_input(format!(
            "a whole store goes into an archive a member per key and column; name a key \
             (store.h5:KEY) to write its records as member '{node}'"
        ))
        .with_file(dst)),
        _ => Err(Error::invalid_input(format!(
            "a {format} destination of a pandas key takes no node; drop ':{node}'"
        ))
        .with_file(dst)),
    }
}

/// Where a key's records go: a `.npy` file, or a member of a new archive.
enum Records<'n> {
    Npy,
    Member(&'n str, sciio_zip::Compression),
}

/// A key as one structured array (`df.to_records()`: the index levels, then the columns
/// numpy has a type for), streamed slice by slice from a large store, else read whole.
fn to_records(
    src: &crate::file::File,
    key: &str,
    into: Records<'_>,
    dst: &Path,
    plan: &mut Plan,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Written> {
    let name = match into {
        Records::Npy => "/".to_string(),
        Records::Member(name, _) => name.to_string(),
    };
    // A key that fails here is read whole: that path reports it.
    if let Some(streamed) = large_enough_to_stream(src)
        .then(|| StoreKey::of(src, key))
        .and_then(|k| k.ok().flatten())
    {
        let (columns, numpy) = streamed.left_out();
        plan.extend(columns_left_out(key, columns.to_vec()));
        plan.extend(numpy.to_vec());
        plan.ready()?;
        let bytes = match into {
            Records::Npy => streamed.write_npy(dst, progress)?,
            Records::Member(name, compression) => {
                streamed.records_member(name, dst, compression, progress)?
            }
        };
        return Ok(Written {
            arrays: vec![name],
            data_bytes: bytes,
        });
    }
    let Some(store) = src.hdf_store() else {
        return Err(Error::invalid_input("not a pandas HDFStore").with_file(src.path()));
    };
    let (frame, columns) = store.read_leaving_out(key)?;
    plan.extend(columns_left_out(key, columns));
    let (cols, left) = numpy_columns(&frame, true, src.path(), src.limits())?;
    plan.extend(left);
    if cols.is_empty() {
        return Err(Error::not_found(
            "nothing to convert: no column of the frame has a numpy type",
        )
        .with_file(src.path())
        .with_node(key.to_string()));
    }
    plan.ready()?;
    let records = records_of(&cols, frame.num_rows())
        .map_err(|e| e.with_file(src.path()).with_node(key.to_string()))?;
    let bytes = records.as_bytes().len() as u64;
    match into {
        Records::Npy => crate::write_atomically(dst, |out| sciio_npy::write_array(out, &records))?,
        Records::Member(name, compression) => {
            write_npz(&[(name.to_string(), records)], dst, compression)?
        }
    }
    progress(bytes, bytes);
    Ok(Written {
        arrays: vec![name],
        data_bytes: bytes,
    })
}

/// A key going into an archive: streamed, or its columns read whole.
enum Part<'a> {
    Streamed(Box<StoreKey<'a>>),
    Whole(Vec<(String, sciio_core::NdArray)>),
}

/// Whether a store is large enough to gather its keys slice by slice (a second pass) rather
/// than read them whole.
fn large_enough_to_stream(src: &crate::file::File) -> bool {
    src.size_on_disk() >= crate::frame_numpy::STREAM_MIN_BYTES
}

/// Rows of a `table` key read per slice while written: memory bounded by a slice.
const STREAM_ROWS: usize = 1 << 20;

/// A `table` key → Parquet slice by slice (`None`: the key is read whole). A values block's
/// text column found to have no value in the whole key is an object column of missing values
/// for pandas (Arrow null), which only the last slice tells: the key is then written again
/// with those columns null (rare: such a column holds nothing).
fn stream_key(
    store: &HdfStore,
    key: &str,
    dst: &Path,
    parquet: &sciio_pandas::ParquetOptions,
    plan: &mut Plan,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Option<Written>> {
    let Some(batches) = store.read_batches(key, STREAM_ROWS)? else {
        return Ok(None);
    };
    let Some((written, missing)) = stream_slices(batches, key, dst, parquet, Some(plan), progress)?
    else {
        return Ok(None);
    };
    if missing.is_empty() {
        return Ok(Some(written));
    }
    let Some(batches) = store.read_batches(key, STREAM_ROWS)? else {
        return Ok(None);
    };
    let again = batches.missing_text_as_null(missing);
    let written = stream_slices(again, key, dst, parquet, None, progress)?;
    Ok(written.map(|(written, _)| written))
}

/// Writes the slices of a `table` key as one Parquet file, with the values blocks' text
/// columns that had no value in any slice ([`sciio_hdfstore::FrameBatches::text_missing_throughout`]).
/// The columns left out go to `plan` (given the first time a key is written).
fn stream_slices(
    mut batches: sciio_hdfstore::FrameBatches<'_>,
    key: &str,
    dst: &Path,
    parquet: &sciio_pandas::ParquetOptions,
    plan: Option<&mut Plan>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Option<(Written, Vec<String>)>> {
    let total = batches.num_rows();
    // A `fixed` key parsed as a stream: row groups of its slices, else the writer would hold
    // a million rows of Arrow data before encoding them (the memory the stream saves).
    let parquet = match batches.stream_rows() {
        Some(rows) => &parquet.clone().row_group_rows(rows),
        None => parquet,
    };
    let Some(first) = batches.next().transpose()? else {
        return Ok(None);
    };
    // Every slice leaves out the same columns: known from the first, refused before writing
    // with --strict.
    if let Some(plan) = plan {
        plan.extend(columns_left_out(key, batches.left_out().to_vec()));
        plan.ready()?;
    }
    let arrays: Vec<String> = first
        .schema()
        .columns()
        .map(|c| c.label().unwrap_or("None").to_string())
        .collect();
    let mut bytes = 0u64;
    let mut rows = 0u64;
    // Slices are read here while the Parquet writer encodes the previous ones on its thread.
    crate::write_atomically(dst, |out| {
        let schema = first.schema().clone();
        let mut first = Some(first);
        crate::stream::write_batches(out, &schema, parquet, &mut |send| {
            let mut put = |frame: Frame| -> Result<()> {
                rows += frame.num_rows() as u64;
                for batch in frame.batches() {
                    bytes += batch.get_array_memory_size() as u64;
                    send(batch.clone())?;
                }
                progress(rows, total);
                Ok(())
            };
            if let Some(first) = first.take() {
                put(first)?;
            }
            for frame in batches.by_ref() {
                put(frame?)?;
            }
            Ok(())
        })
    })
    .map_err(|e| {
        if e.location().node.is_none() {
            e.with_node(key.to_string())
        } else {
            e
        }
        .with_file(dst)
    })?;
    let missing = batches.text_missing_throughout().to_vec();
    let written = Written {
        arrays,
        data_bytes: bytes,
    };
    Ok(Some((written, missing)))
}

fn is_folder(dst: &Path) -> bool {
    dst.is_dir() || dst.as_os_str().to_string_lossy().ends_with('/')
}

fn done(arrays: Vec<String>, frame: &Frame, progress: &mut dyn FnMut(u64, u64)) -> Written {
    let bytes: u64 = frame
        .batches()
        .iter()
        .map(|b| b.get_array_memory_size() as u64)
        .sum();
    progress(bytes, bytes);
    Written {
        arrays,
        data_bytes: bytes,
    }
}

/// Every key → `dst/<escaped key>.parquet`.
fn to_folder(
    store: &HdfStore,
    keys: &[String],
    dst: &Path,
    options: &ConvertOptions,
    plan: &mut Plan,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Written> {
    if plan.strict() {
        // Refused before anything is written: every key is read once to know.
        let planned = plan.left_out.len();
        for key in keys {
            read_or_leave_out(store, key, &mut plan.left_out)?;
        }
        plan.ready()?;
        plan.left_out.truncate(planned);
    }
    std::fs::create_dir_all(dst)
        .map_err(|e| Error::io("cannot create the output folder", e).with_file(dst))?;
    let parquet = options_for(options.compress.as_ref())?;
    let mut written = Vec::new();
    let mut bytes = 0u64;
    for key in keys {
        let Some(frame) = read_or_leave_out(store, key, &mut plan.left_out)? else {
            continue;
        };
        let out: PathBuf = dst.join(file_name_of_key(key));
        write_frame(&frame, &out, &parquet).map_err(|e| e.with_node(key.clone()))?;
        bytes += frame
            .batches()
            .iter()
            .map(|b| b.get_array_memory_size() as u64)
            .sum::<u64>();
        progress(bytes, bytes);
        written.push(
            out.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        );
    }
    Ok(Written {
        arrays: written,
        data_bytes: bytes,
    })
}

/// `x.parquet → store.h5[:/key]`: the frame as a key of a pandas HDFStore (`table` format by
/// default; `--store-format fixed`, `--data-columns a,b|all`, `--append`), the key being the
/// destination node or the source's file stem. The store is created, or the key added to it
/// (replacing a key of that name, as `df.to_hdf` does), or its rows appended. `None` with
/// `--store-format pytables` (a plain PyTables Table: the routes of `parquet_convert`).
pub(crate) fn frame_to_store(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    use sciio_hdfstore::{DataColumns, StoreFormat, WriteOptions};
    let (dst, options) = (job.dst, job.options);
    let [(src, _)] = &*job.sources else {
        return Ok(None);
    };
    if options.store.format.as_deref() == Some("pytables") {
        return Ok(None);
    }
    let format: StoreFormat = match options.store.format.as_deref() {
        None => StoreFormat::Table,
        Some(f) => f.parse()?,
    };
    let data_columns: DataColumns = match options.store.data_columns.as_deref() {
        None => DataColumns::None,
        Some(d) => d.parse()?,
    };
    if options.store.append && data_columns != DataColumns::None {
        return Err(Error::invalid_input(
            "--data-columns applies to a new key (appended rows take the key's data columns)",
        ));
    }
    let filters = crate::h5write::filters(options.compress.as_ref())?;
    let key = format!(
        "/{}",
        crate::parquet::table_name(options.dst_node.as_deref(), src.path())
    );
    let write_options = WriteOptions {
        format,
        data_columns,
        filters,
        append: options.store.append,
        series: options.store.series,
    };
    let located = |e: Error| {
        let e = if e.location().node.is_none() {
            e.with_node(key.clone())
        } else {
            e
        };
        e.with_file(dst)
    };
    let streamed = crate::frame_store::write_key(src, dst, &key, &write_options, job.progress);
    if let Some(bytes) = streamed.map_err(located)? {
        return Ok(Some(Written {
            arrays: vec![key],
            data_bytes: bytes,
        }));
    }
    let frame = crate::parquet::read_frame(src.path(), src.limits())?;
    let written = sciio_hdfstore::write(dst, &key, &frame, &write_options).map_err(located)?;
    let bytes: u64 = frame
        .batches()
        .iter()
        .map(|b| b.get_array_memory_size() as u64)
        .sum();
    (job.progress)(bytes, bytes);
    Ok(Some(Written {
        arrays: vec![written.key],
        data_bytes: bytes,
    }))
}

/// One file name (never a path, never `.`/`..`) for a store key: `/a/b/df` → `a%2Fb%2Fdf.parquet`.
pub(crate) fn file_name_of_key(key: &str) -> String {
    let mut name = String::new();
    for (i, b) in key.trim_start_matches('/').bytes().enumerate() {
        let plain = b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (b == b'.' && i > 0);
        if plain {
            name.push(char::from(b));
        } else {
            name += &format!("%{b:02X}");
        }
    }
    if name.is_empty() {
        name = "%2F".into();
    }
    name + ".parquet"
}

#[cfg(test)]
mod tests {
    use super::file_name_of_key;

    #[test]
    fn key_names_stay_inside_the_folder() {
        assert_eq!(file_name_of_key("/df"), "df.parquet");
        assert_eq!(file_name_of_key("/a/b/df"), "a%2Fb%2Fdf.parquet");
        assert_eq!(file_name_of_key("/.."), "%2E..parquet");
        assert_eq!(file_name_of_key("/../../etc"), "%2E.%2F..%2Fetc.parquet");
        assert_eq!(file_name_of_key("/x\n\u{1b}y"), "x%0A%1By.parquet");
        assert_eq!(file_name_of_key("/C:\\w"), "C%3A%5Cw.parquet");
        for key in ["/..", "/.", "/", "/a/../..", "/\0"] {
            let name = file_name_of_key(key);
            let path = std::path::Path::new(&name);
            assert_eq!(path.components().count(), 1, "{name}");
            assert!(!name.starts_with('.'), "{name}");
        }
    }
}
