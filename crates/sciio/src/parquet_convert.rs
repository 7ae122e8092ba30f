//! Conversions that involve a frame (Parquet) do not go through the array leaves of the tree:
//! a frame's columns are Arrow arrays, not numpy blocks. `x.parquet → y.parquet` streams
//! record batches (bounded memory, pandas metadata kept); `x.parquet → y.npz` stores one member
//! per index level and column (the frame in memory), `x.parquet → y.npy` one structured array
//! like `df.to_records(index=False)` (a stored index as leading fields); columns numpy has no
//! type for are left out. A 1-d structured array (`.npy`, npz member, PyTables `Table`) →
//! `.parquet` becomes one column per field ([`Frame::from_structured_partial`], subarray
//! fields as fixed-size list columns), a 1-d array one column named after its node, an n-d
//! array one fixed-size list column ([`Frame::from_ndarray`]), a VLArray of numbers one list
//! column ([`Frame::from_rows`]); the source's attributes go into the file's key-value metadata.

use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use sciio_core::contain::contain_panics;
use sciio_core::{Error, Limits, NdArray, Result};
use sciio_pandas::arrow_array::RecordBatch;
use sciio_pandas::{Frame, IndexLevel, ParquetOptions, ParquetReader, ParquetWriter, ReadOptions};

use crate::atomic::write_atomically;
use crate::file::File;
use crate::format::Format;
use crate::job::{Job, Written};
use crate::node::{normalise, AttrValue, Node, NodeKind};
use crate::options::npz_compression;
use crate::parquet::{
    array_frame, numpy_columns, options_for, read_frame, records_of, write_frame, write_npz,
};
#[cfg(feature = "hdf5")]
use crate::parquet::{frame_table, table_name};
use crate::plan::LeftOut;
use crate::vlarray::VlKind;

/// Row-group decoders of a Parquet copy (see [`copy`]).
const DECODERS: usize = 2;

/// Batches a decoder may hold decoded ahead of the writer (a polars row group is ~2 batches).
const BATCHES_AHEAD: usize = 3;

/// `src.parquet → dst.parquet`, batch by batch, written atomically. Returns the rows copied.
///
/// The row groups are decoded on [`DECODERS`] threads (row group `g` by decoder
/// `g % DECODERS`, a few batches ahead) while this thread feeds the encoders and writes the
/// file: decompressing and decoding the source is a third of a copy's work and would otherwise
/// wait whenever the writer waits for a row group's encoding. The batches reach the writer in
/// file order, as from one reader: the same file.
pub(crate) fn copy(
    src: &Path,
    limits: &Limits,
    dst: &Path,
    options: &ParquetOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<u64> {
    // string columns stay dictionaries from the source's pages to the written ones
    let read = ReadOptions::new().limits(*limits).dictionary_strings(true);
    let decoders = std::thread::available_parallelism().map_or(1, usize::from);
    let parts = ParquetReader::open_interleaved(src, decoders.min(DECODERS), &read)?;
    // Each part decides alone which string columns it reads as dictionaries; parts that
    // differ would not give the batches one reader gives.
    let alike = parts
        .windows(2)
        .all(|w| w[0].dictionary_batch_schema() == w[1].dictionary_batch_schema());
    if !alike {
        drop(parts);
        let reader = ParquetReader::open_with(src, &read).map_err(|e| e.with_file(src))?;
        return copy_from(vec![reader], src, dst, options, progress);
    }
    copy_from(parts, src, dst, options, progress)
}

/// [`copy`] from the readers of interleaved row groups (one reader: all of them).
fn copy_from(
    parts: Vec<ParquetReader>,
    src: &Path,
    dst: &Path,
    options: &ParquetOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<u64> {
    let Some(first) = parts.first() else {
        return Err(Error::invalid_input("internal: a copy without a reader"));
    };
    let total = first.num_rows();
    let schema = first.schema().clone();
    let group_rows: Vec<Vec<u64>> = parts.iter().map(|p| p.group_rows()).collect();
    std::thread::scope(|scope| {
        let mut inputs = Vec::with_capacity(parts.len());
        for reader in parts {
            let (batches, input) = sync_channel(BATCHES_AHEAD);
            std::thread::Builder::new()
                .name("parquet-decode".into())
                .spawn_scoped(scope, move || decode_into(reader, &batches))
                .map_err(|e| Error::io("cannot start a Parquet decoding thread", e))?;
            inputs.push(input);
        }
        let copied = write_atomically(dst, |out| {
            let mut writer = ParquetWriter::new(out, &schema, options);
            let mut rows = 0u64;
            for (part, group_rows) in interleaved(&group_rows) {
                let input = inputs.get(part).ok_or_else(|| no_decoder(src))?;
                let mut left = group_rows;
                while left > 0 {
                    let batch = input.recv().map_err(|_| no_decoder(src))?;
                    let batch = batch.map_err(|e| e.with_file(src))?;
                    let n = batch.num_rows() as u64;
                    left = left.checked_sub(n).ok_or_else(|| {
                        Error::format("a batch spans two row groups").with_file(src)
                    })?;
                    rows += n;
                    writer.write(&batch)?;
                    progress(rows, total);
                }
            }
            for input in &inputs {
                expect_end(input, src)?;
            }
            writer.finish()?;
            Ok(rows)
        });
        // Decoders still sending see their channel closed and stop: the scope can end.
        drop(inputs);
        copied
    })
}

/// Decodes the reader's batches into `batches` until it ends, fails, or the writer stops
/// taking them.
fn decode_into(reader: ParquetReader, batches: &SyncSender<Result<RecordBatch>>) {
    let sent = contain_panics("parquet: decoding a row group", || {
        for batch in reader {
            let failed = batch.is_err();
            if batches.send(batch).is_err() || failed {
                break;
            }
        }
        Ok(())
    });
    if let Err(e) = sent {
        let _ = batches.send(Err(e));
    }
}

/// The row groups in file order as (decoder, rows): decoder `d`'s `k`-th row group is the
/// file's `k * decoders + d`-th.
fn interleaved(group_rows: &[Vec<u64>]) -> Vec<(usize, u64)> {
    let longest = group_rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .flat_map(|k| {
            group_rows
                .iter()
                .enumerate()
                .filter_map(move |(part, rows)| rows.get(k).map(|&r| (part, r)))
        })
        .collect()
}

/// After the announced rows: the decoder ends without more (an error it met is the copy's).
fn expect_end(input: &Receiver<Result<RecordBatch>>, src: &Path) -> Result<()> {
    while let Ok(batch) = input.recv() {
        if batch.map_err(|e| e.with_file(src))?.num_rows() > 0 {
            return Err(Error::format("more rows than the row groups announce").with_file(src));
        }
    }
    Ok(())
}

fn no_decoder(src: &Path) -> Error {
    Error::format("a decoding thread stopped before the rows its row groups announce")
        .with_file(src)
}

/// The checks of a conversion that involves a data frame (a frame source or a Parquet
/// destination): one source, no `DST:NODE` the destination cannot name, no node inside a
/// frame. Refuses or passes (`None`); never converts.
pub(crate) fn check_frame_job(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let (dst, format, options) = (job.dst, job.format, job.options);
    let any_frame = job.sources.iter().any(|(f, _)| frame_src(f));
    if format != Format::Parquet && !any_frame {
        return Ok(None);
    }
    let Some((src, src_node)) = job.single() else {
        return Err(Error::unsupported(format!(
            "a data frame converts from or to one file at a time, got {} sources",
            job.sources.len()
        ))
        .with_file(dst));
    };
    let is_frame = frame_src(src);
    if let Some(node) = options.dst_node.as_deref() {
        let takes_node =
            format == Format::Hdf5 || (is_frame && matches!(format, Format::Npz | Format::Mat));
        if !takes_node {
            return Err(Error::invalid_input(format!(
                "a {format} destination of a data frame takes no node; drop ':{node}'"
            ))
            .with_file(dst));
        }
    }
    if is_frame && src_node.is_some_and(|n| !n.trim_matches('/').is_empty()) {
        return Err(Error::not_found(
            "a Parquet file is one data frame without nodes (use the file name alone)",
        )
        .with_file(src.path()));
    }
    Ok(None)
}

/// `x.parquet → y.parquet`, record batch by record batch (pandas metadata kept).
pub(crate) fn frame_to_parquet(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let (dst, options) = (job.dst, job.options);
    let progress = &mut *job.progress;
    let [(src, _)] = &mut *job.sources else {
        return Ok(None);
    };
    let parquet = options_for(options.compress.as_ref())?;
    copy(src.path(), src.limits(), dst, &parquet, progress)?;
    Ok(Some(summary(src.root(), src.size_on_disk())))
}

/// A data frame into a format whose frame route this build leaves out (every format holds
/// frames, through a feature): refused, naming the feature.
pub(crate) fn no_frame_destination(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let format = job.format;
    let Some((src, _)) = job.single() else {
        return Ok(None);
    };
    Err(Error::unsupported(format!(
        "a data frame into {format} needs the `{}` feature of the sciio crate, which this \
         build leaves out; write .parquet, .npz (one array per column) or .npy (a structured \
         array)",
        format.feature().unwrap_or("default")
    ))
    .with_file(src.path()))
}

fn frame_src(src: &File) -> bool {
    matches!(src.root().kind, NodeKind::Frame { .. })
}

/// `x.parquet → y.npz`: one member per index level and column, or with `y.npz:NAME` one
/// structured member (as `x.parquet → y.npy` makes it); columns numpy has no type for are
/// left out.
pub(crate) fn frame_to_npz(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let (dst, options) = (job.dst, job.options);
    let [(src, _)] = &*job.sources else {
        return Ok(None);
    };
    let compression = npz_compression(options.compress.as_ref())?;
    let (arrays, left_out) = match npz_member(options) {
        Some(name) => {
            let (records, left_out) = frame_records(src)?;
            (vec![(name.to_string(), records)], left_out)
        }
        None => {
            let frame = read_frame(src.path(), src.limits())?;
            numpy_columns(&frame, true, src.path(), src.limits())?
        }
    };
    job.plan.extend(left_out);
    job.plan.ready()?;
    write_npz(&arrays, dst, compression)?;
    let bytes = arrays.iter().map(|(_, a)| a.as_bytes().len() as u64).sum();
    (job.progress)(bytes, bytes);
    Ok(Some(Written {
        arrays: arrays.into_iter().map(|(name, _)| name).collect(),
        data_bytes: bytes,
    }))
}

/// The member a frame's records go into (`y.npz:m`), or `None`: a member per column.
pub(crate) fn npz_member(options: &crate::options::ConvertOptions) -> Option<&str> {
    options
        .dst_node
        .as_deref()
        .map(|d| d.trim_matches('/'))
        .filter(|d| !d.is_empty())
}

/// `x.parquet → y.npy`: one structured array like `df.to_records(index=False)`, the index
/// levels as leading fields when the index is stored (not a RangeIndex); columns numpy has no
/// type for are left out.
pub(crate) fn frame_to_npy(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let (dst, options) = (job.dst, job.options);
    let [(src, _)] = &*job.sources else {
        return Ok(None);
    };
    if let Some(spec) = options.compress.as_ref().filter(|s| !s.is_uncompressed()) {
        return Err(Error::unsupported(format!(
            "npy files are never compressed (got '{spec}'); write .npz to compress"
        )));
    }
    let (records, left_out) = frame_records(src)?;
    job.plan.extend(left_out);
    job.plan.ready()?;
    write_atomically(dst, |out| sciio_npy::write_array(out, &records))?;
    let bytes = records.as_bytes().len() as u64;
    (job.progress)(bytes, bytes);
    Ok(Some(Written {
        arrays: vec!["/".to_string()],
        data_bytes: bytes,
    }))
}

/// The frame as one structured array like `df.to_records(index=False)`, the index levels as
/// leading fields when the index is stored (not a RangeIndex), and the columns numpy has no
/// type for (left out).
fn frame_records(src: &File) -> Result<(NdArray, Vec<LeftOut>)> {
    let frame = read_frame(src.path(), src.limits())?;
    let stored_index = frame
        .schema()
        .index()
        .iter()
        .any(|level| matches!(level, IndexLevel::Column { .. }));
    let (columns, left_out) = numpy_columns(&frame, stored_index, src.path(), src.limits())?;
    if columns.is_empty() {
        return Err(Error::not_found(
            "nothing to convert: no column of the frame has a numpy type",
        )
        .with_file(src.path()));
    }
    let records = records_of(&columns, frame.num_rows()).map_err(|e| e.with_file(src.path()))?;
    Ok((records, left_out))
}

/// `x.parquet → y.h5`: a PyTables Table of the columns PyTables has a type for.
#[cfg(feature = "hdf5")]
pub(crate) fn frame_to_h5(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let (dst, options) = (job.dst, job.options);
    let [(src, _)] = &*job.sources else {
        return Ok(None);
    };
    let frame = read_frame(src.path(), src.limits())?;
    let (arrays, mut left_out) = numpy_columns(&frame, true, src.path(), src.limits())?;
    let (table, no_type) = frame_table(&arrays).map_err(|e| e.with_file(src.path()))?;
    left_out.extend(no_type);
    job.plan.extend(left_out);
    job.plan.ready()?;
    let name = table_name(options.dst_node.as_deref(), src.path());
    let mut out = crate::h5write::H5Out::create(dst, options.compress.as_ref())?;
    out.write(&name, &table).map_err(|e| e.with_file(dst))?;
    out.finish(dst)?;
    let bytes = table.as_bytes().len() as u64;
    (job.progress)(bytes, bytes);
    Ok(Some(Written {
        arrays: vec![name],
        data_bytes: bytes,
    }))
}

/// A structured array or an n-d array (or the one array of a file) → a Parquet file: one
/// column per field (subarray fields as fixed-size list columns), or one fixed-size list
/// column for an n-d array. Attributes go into the file's key-value metadata under
/// [`PARQUET_ATTRIBUTES_KEY`](crate::options::PARQUET_ATTRIBUTES_KEY); fields with no column
/// type and whatever else the selection holds (links, opaque nodes) are left out.
pub(crate) fn array_to_parquet(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let (dst, options) = (job.dst, job.options);
    let progress = &mut *job.progress;
    let plan = &mut job.plan;
    let [(src, src_node)] = &mut *job.sources else {
        return Ok(None);
    };
    let (src, src_node): (&mut File, Option<&str>) = (src, *src_node);
    // A whole file whose one leaf is a VLArray converts as that VLArray.
    let only_vlarray = match src_node {
        None => sole_vlarray(src.root()),
        Some(_) => None,
    };
    let src_node = src_node.or(only_vlarray.as_deref());
    let vl = match src_node {
        Some(node) if is_vlarray(src.node(node)?) => src.vl_kind(node)?,
        _ => None,
    };
    let path = match vl {
        Some(_) => src_node.map(normalise).unwrap_or_else(|| "/".to_string()),
        None => src.single_array_path(src_node)?,
    };
    let selected = match src_node {
        Some(node) => src.node(node)?,
        None => src.root(),
    };
    let base = src_node.map(normalise).unwrap_or_else(|| "/".to_string());
    let (attributes, left_out) = selection_plan(selected, &base, &path);
    plan.extend(left_out);
    let label = column_label(&path, src.path());
    let file = src.path().to_path_buf();
    let located = |e: Error| e.with_file(&file).with_node(path.clone());
    if vl.is_none() {
        // Batch by batch, in bounded memory (crate::stream).
        let mut parquet = options_for(options.compress.as_ref())?;
        if let Some(json) = &attributes {
            parquet = parquet.key_value(crate::options::PARQUET_ATTRIBUTES_KEY, json.clone());
        }
        let streamed = crate::stream::array_to_parquet(
            src,
            &path,
            &label,
            dst,
            parquet,
            options.partition_rows,
            plan,
            progress,
        )
        .map_err(located)?;
        if let Some((arrays, data_bytes)) = streamed {
            return Ok(Some(Written { arrays, data_bytes }));
        }
    }
    if options.partition_rows.is_some() {
        return Err(located(Error::unsupported(
            "--partition-rows splits tables and arrays of rows (C order); this one converts \
             whole into one .parquet file",
        )));
    }
    let (frame, fields_left, bytes) = match vl {
        // Rows of numbers: one list column, a row per row.
        Some(VlKind::Rows) => {
            let rows = src.read_rows(&path)?;
            let bytes = rows.iter().map(|r| r.as_bytes().len() as u64).sum();
            let typed = match rows.is_empty() {
                true => src.empty_row(&path)?,
                false => None,
            };
            let frame = Frame::from_typed_rows(&label, &rows, typed.as_ref()).map_err(located)?;
            (frame, Vec::new(), bytes)
        }
        Some(VlKind::Objects) => {
            return Err(located(Error::unsupported(
                "nothing parquet can hold there: left out a VLArray of pickled Python objects \
                 (never unpickled)",
            )))
        }
        // Strings read as one S/U array, as any other array.
        Some(VlKind::Strings) | None => {
            let array = src.read_array(&path)?;
            let bytes = array.as_bytes().len() as u64;
            let (frame, left) = array_frame(&array, &label).map_err(located)?;
            (frame, left, bytes)
        }
    };
    plan.extend(
        fields_left
            .into_iter()
            .map(|(field, e)| LeftOut::column(path.clone(), field, "a record field", e.message())),
    );
    plan.ready()?;
    let mut parquet = options_for(options.compress.as_ref())?;
    if let Some(json) = attributes {
        parquet = parquet.key_value(crate::options::PARQUET_ATTRIBUTES_KEY, json);
    }
    let arrays = write_frame(&frame, dst, &parquet).map_err(located)?;
    progress(bytes, bytes);
    Ok(Some(Written {
        arrays,
        data_bytes: bytes,
    }))
}

/// The path of the one leaf under `root` when the tree holds that leaf only and it is a
/// VLArray (groups and their attributes aside).
fn sole_vlarray(root: &Node) -> Option<String> {
    fn leaves<'a>(node: &'a Node, path: String, out: &mut Vec<(String, &'a Node)>) {
        match &node.kind {
            NodeKind::Group(children) => {
                for child in children {
                    leaves(
                        child,
                        format!("{}/{}", path.trim_end_matches('/'), child.name),
                        out,
                    );
                }
            }
            _ => out.push((path, node)),
        }
    }
    let mut found = Vec::new();
    leaves(root, "/".to_string(), &mut found);
    match found.as_slice() {
        [(path, node)] if is_vlarray(node) => Some(path.clone()),
        _ => None,
    }
}

fn is_vlarray(node: &Node) -> bool {
    matches!(&node.kind, NodeKind::Opaque { kind, .. } if kind == "VLArray")
}

/// The column label of an n-d array: its node's name, or the file's stem for a `.npy`.
pub(crate) fn column_label(path: &str, file: &Path) -> String {
    match path.rsplit('/').next().filter(|n| !n.is_empty()) {
        Some(name) => name.to_string(),
        None => file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "values".to_string()),
    }
}

/// What a Parquet destination makes of the selected subtree besides the array at `chosen`:
/// the attributes of every node as the JSON text of `{node path: {name: value}}` (`None`
/// without attributes), and the left-out items (attributes without a JSON value, and nodes
/// that are neither groups nor the chosen array).
fn selection_plan(selected: &Node, base: &str, chosen: &str) -> (Option<String>, Vec<LeftOut>) {
    let mut by_node = serde_json::Map::new();
    let mut left_out = Vec::new();
    for (rel, node) in selected.walk("") {
        let path = crate::node::join(base, &rel);
        let mut attrs = serde_json::Map::new();
        for attr in &node.attrs {
            match &attr.value {
                AttrValue::Array(value) => match array_json(value) {
                    Ok(json) => {
                        attrs.insert(attr.name.clone(), json);
                    }
                    Err(e) => left_out.push(LeftOut::attribute(&path, &attr.name, e.message())),
                },
                AttrValue::Other(what) => left_out.push(LeftOut::attribute(
                    &path,
                    &attr.name,
                    format!("sciio does not read this value ({what})"),
                )),
            }
        }
        if !attrs.is_empty() {
            by_node.insert(path.clone(), serde_json::Value::Object(attrs));
        }
        if path != chosen && !matches!(node.kind, NodeKind::Group(_)) {
            let what = match &node.kind {
                NodeKind::Link(target) => format!("a link to {target}"),
                _ => format!("a {}", node.kind_name()),
            };
            left_out.push(LeftOut::node(
                &path,
                what,
                format!("a .parquet file holds one table, {chosen}"),
            ));
        }
    }
    let json = (!by_node.is_empty()).then(|| serde_json::Value::Object(by_node).to_string());
    (json, left_out)
}

/// An attribute's value as JSON: numbers, booleans and text as themselves (bytes decoded as
/// UTF-8, else latin-1), arrays as nested lists, records as objects; NaN and infinities as the
/// strings `"nan"`, `"inf"`, `"-inf"`, complex numbers as `[re, im]`, datetimes as ticks.
fn array_json(array: &NdArray) -> Result<serde_json::Value> {
    sciio_core::json::array_json(array, sciio_core::json::BytesText::Utf8OrLatin1)
}

/// What a Parquet → Parquet copy wrote: the frame's columns and the source file's size.
fn summary(root: &Node, bytes: u64) -> Written {
    let arrays = match &root.kind {
        NodeKind::Frame { columns, .. } => columns.clone(),
        _ => Vec::new(),
    };
    Written {
        arrays,
        data_bytes: bytes,
    }
}
