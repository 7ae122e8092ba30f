//! Parquet files (pandas, pyarrow) in the neutral tree, through `sciio-pandas`: a file is one
//! [`NodeKind::Frame`] node with its column labels and row count.
//!
//! Conversions that involve a frame do not go through the array leaves of the tree: a frame's
//! columns are Arrow arrays, not numpy blocks. `x.parquet → y.parquet` streams record batches
//! (bounded memory, pandas metadata kept); `x.parquet → y.npz` stores one member per index
//! level and column (the frame in memory), `x.parquet → y.npy` one structured array like
//! `df.to_records(index=False)` (a stored index as leading fields); columns numpy has no type
//! for are left out. A 1-d structured array (`.npy`, npz member, PyTables `Table`) →
//! `.parquet` becomes one column per field ([`Frame::from_structured_partial`], subarray
//! fields as fixed-size list columns), a 1-d array one column named after its node, an n-d
//! array one fixed-size list column ([`Frame::from_ndarray`]), a VLArray of numbers one list
//! column ([`Frame::from_rows`]); the source's attributes go into the file's key-value metadata.

use std::path::Path;

use sciio_core::{DType, Error, ErrorKind, Limits, NdArray, Result, Value};
use sciio_pandas::{
    Compression, Frame, FrameSchema, IndexLevel, ParquetOptions, ParquetReader, ParquetWriter,
    ReadOptions,
};
use sciio_zip::ZipWriter;

use crate::atomic::write_atomically;
use crate::compress::CompressSpec;
use crate::convert::{npz_compression, ConvertOptions, ConvertSummary};
use crate::file::{normalise, File};
use crate::format::Format;
use crate::node::{AttrValue, Node, NodeKind};
use crate::plan::{refuse_if_strict, LeftOut};
use crate::vlarray::VlKind;

/// The tree of a Parquet file: its frame.
pub(crate) fn open(path: &Path, limits: &Limits) -> Result<Node> {
    let reader = reader(path, limits)?;
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

fn reader(path: &Path, limits: &Limits) -> Result<ParquetReader> {
    let options = ReadOptions::new().limits(*limits);
    ParquetReader::open_with(path, &options).map_err(|e| e.with_file(path))
}

/// The frame's schema (index, columns with pandas/numpy/Arrow types), without reading data.
pub(crate) fn schema(path: &Path, limits: &Limits) -> Result<FrameSchema> {
    Ok(reader(path, limits)?.schema().clone())
}

/// The whole frame in memory.
pub(crate) fn read_frame(path: &Path, limits: &Limits) -> Result<Frame> {
    reader(path, limits)?
        .read_all()
        .map_err(|e| e.with_file(path))
}

/// The Parquet options for `--compress`: the spec's one filter spelled as `sciio-pandas`
/// parses it (`zstd:3`, `snappy`, `gzip:6`, `lz4`, `none`); no spec keeps pandas' default
/// (snappy).
pub(crate) fn options_for(spec: Option<&CompressSpec>) -> Result<ParquetOptions> {
    let options = ParquetOptions::new();
    let Some(spec) = spec else {
        return Ok(options);
    };
    let compression = match spec.filters() {
        [] => Compression::None,
        [one] if one.codec.is_none() => one.to_string().parse::<Compression>()?,
        _ => {
            return Err(Error::unsupported(format!(
                "parquet takes one codec without sub-codec, got '{spec}' \
                 (none, snappy, gzip[:level], zstd[:level], lz4)"
            )))
        }
    };
    Ok(options.compression(compression))
}

/// `src.parquet → dst.parquet`, batch by batch, written atomically. Returns the rows copied.
pub(crate) fn copy(
    src: &Path,
    limits: &Limits,
    dst: &Path,
    options: &ParquetOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<u64> {
    let reader = reader(src, limits)?;
    let total = reader.num_rows();
    let schema = reader.schema().clone();
    write_atomically(dst, |out| {
        let mut writer = ParquetWriter::new(out, &schema, options);
        let mut rows = 0u64;
        for batch in reader {
            let batch = batch.map_err(|e| e.with_file(src))?;
            rows += batch.num_rows() as u64;
            writer.write(&batch)?;
            progress(rows, total);
        }
        writer.finish()?;
        Ok(rows)
    })
}

/// The conversions that involve a data frame, or `None` when neither the destination is
/// Parquet nor a source is a frame (the array leaves path of [`convert_many`] handles those).
///
/// [`convert_many`]: crate::convert_many
pub(crate) fn convert_frames(
    sources: &mut [(&mut File, Option<&str>)],
    dst: &Path,
    format: Format,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Option<ConvertSummary>> {
    #[cfg(feature = "hdfstore")]
    if let Some(summary) = crate::store::convert(sources, dst, format, options, &mut *progress)? {
        return Ok(Some(summary));
    }
    let any_frame = sources
        .iter()
        .any(|(f, _)| matches!(f.root().kind, NodeKind::Frame { .. }));
    if format != Format::Parquet && !any_frame {
        return Ok(None);
    }
    let [(src, src_node)] = sources else {
        return Err(Error::unsupported(format!(
            "a data frame converts from or to one file at a time, got {} sources",
            sources.len()
        ))
        .with_file(dst));
    };
    if let Some(node) = options.dst_node.as_deref() {
        if format != Format::Hdf5 && !(frame_src(src) && format == Format::Npz) {
            return Err(Error::invalid_input(format!(
                "a {format} destination of a data frame takes no node; drop ':{node}'"
            ))
            .with_file(dst));
        }
    }
    let is_frame = frame_src(src);
    if is_frame && src_node.is_some_and(|n| !n.trim_matches('/').is_empty()) {
        return Err(Error::not_found(
            "a Parquet file is one data frame without nodes (use the file name alone)",
        )
        .with_file(src.path()));
    }
    let summary = match (is_frame, format) {
        (true, Format::Parquet) => {
            let parquet = options_for(options.compress.as_ref())?;
            copy(src.path(), src.limits(), dst, &parquet, progress)?;
            summary(format, src.root(), src.size_on_disk())
        }
        (true, Format::Npz) => frame_to_npz(src, dst, options, progress)?,
        (true, Format::Npy) => frame_to_npy(src, dst, options, progress)?,
        #[cfg(feature = "hdf5")]
        (true, Format::Hdf5) => {
            #[cfg(feature = "hdfstore")]
            if options.store.format.as_deref() != Some("pytables") {
                return crate::store::frame_to_store(src, dst, options, progress).map(Some);
            }
            match crate::stream::frame_to_h5(src, dst, options, progress)? {
                Some(summary) => summary,
                None => frame_to_h5(src, dst, options, progress)?,
            }
        }
        (true, other) => {
            return Err(Error::unsupported(format!(
                "{other} cannot hold a data frame; write .parquet, .npz (one array per column), \
             .npy (a structured array) or .h5 (a Table)"
            ))
            .with_file(src.path()))
        }
        (false, _) => array_to_parquet(src, *src_node, dst, options, progress)?,
    };
    Ok(Some(summary))
}

fn frame_src(src: &File) -> bool {
    matches!(src.root().kind, NodeKind::Frame { .. })
}

/// `x.parquet → y.npz`: one member per index level and column, or with `y.npz:NAME` one
/// structured member (as `x.parquet → y.npy` makes it); columns numpy has no type for are
/// left out.
fn frame_to_npz(
    src: &File,
    dst: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ConvertSummary> {
    let compression = npz_compression(options.compress.as_ref())?;
    let member = options
        .dst_node
        .as_deref()
        .map(|d| d.trim_matches('/'))
        .filter(|d| !d.is_empty());
    let (arrays, left_out) = match member {
        Some(name) => {
            let (records, left_out) = frame_records(src)?;
            (vec![(name.to_string(), records)], left_out)
        }
        None => {
            let frame = read_frame(src.path(), src.limits())?;
            numpy_columns(&frame, true, src.path(), src.limits())?
        }
    };
    refuse_if_strict(&left_out, options.strict, dst)?;
    write_npz(&arrays, dst, compression)?;
    let bytes = arrays.iter().map(|(_, a)| a.as_bytes().len() as u64).sum();
    progress(bytes, bytes);
    Ok(ConvertSummary {
        format: Format::Npz,
        arrays: arrays.into_iter().map(|(name, _)| name).collect(),
        data_bytes: bytes,
        left_out,
    })
}

/// `x.parquet → y.npy`: one structured array like `df.to_records(index=False)`, the index
/// levels as leading fields when the index is stored (not a RangeIndex); columns numpy has no
/// type for are left out.
fn frame_to_npy(
    src: &File,
    dst: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ConvertSummary> {
    if let Some(spec) = options.compress.as_ref().filter(|s| !s.is_uncompressed()) {
        return Err(Error::unsupported(format!(
            "npy files are never compressed (got '{spec}'); write .npz to compress"
        )));
    }
    let (records, left_out) = frame_records(src)?;
    refuse_if_strict(&left_out, options.strict, dst)?;
    write_atomically(dst, |out| sciio_npy::write_array(out, &records))?;
    let bytes = records.as_bytes().len() as u64;
    progress(bytes, bytes);
    Ok(ConvertSummary {
        format: Format::Npy,
        arrays: vec!["/".to_string()],
        data_bytes: bytes,
        left_out,
    })
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

/// `frame`'s rows as one structured array for a PyTables Table at `dst` (the index as
/// leading fields unless a RangeIndex); a column PyTables has no type for is an error.
#[cfg(feature = "hdf5")]
pub(crate) fn records_of_frame(frame: &Frame, dst: &Path) -> Result<NdArray> {
    let stored_index = frame
        .schema()
        .index()
        .iter()
        .any(|level| matches!(level, IndexLevel::Column { .. }));
    let (arrays, mut left_out) = numpy_columns(frame, stored_index, dst, &Limits::default())?;
    let (table, no_type) = frame_table(&arrays).map_err(|e| e.with_file(dst))?;
    left_out.extend(no_type);
    match left_out.first() {
        Some(item) => Err(Error::unsupported(format!(
            "PyTables cannot hold it: {item}"
        ))),
        None => Ok(table),
    }
}

/// `x.parquet → y.h5`: a PyTables Table of the columns PyTables has a type for.
#[cfg(feature = "hdf5")]
fn frame_to_h5(
    src: &File,
    dst: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ConvertSummary> {
    let frame = read_frame(src.path(), src.limits())?;
    let (arrays, mut left_out) = numpy_columns(&frame, true, src.path(), src.limits())?;
    let (table, no_type) = frame_table(&arrays).map_err(|e| e.with_file(src.path()))?;
    left_out.extend(no_type);
    refuse_if_strict(&left_out, options.strict, dst)?;
    let name = table_name(options.dst_node.as_deref(), src.path());
    let mut out = crate::h5write::H5Out::create(dst, options.compress.as_ref())?;
    out.write(&name, &table).map_err(|e| e.with_file(dst))?;
    out.finish(dst)?;
    let bytes = table.as_bytes().len() as u64;
    progress(bytes, bytes);
    Ok(ConvertSummary {
        format: Format::Hdf5,
        arrays: vec![name],
        data_bytes: bytes,
        left_out,
    })
}

/// A structured array or an n-d array (or the one array of a file) → a Parquet file: one
/// column per field (subarray fields as fixed-size list columns), or one fixed-size list
/// column for an n-d array. Attributes go into the file's key-value metadata under
/// [`PARQUET_ATTRIBUTES_KEY`](crate::convert::PARQUET_ATTRIBUTES_KEY); fields with no column
/// type and whatever else the selection holds (links, opaque nodes) are left out.
fn array_to_parquet(
    src: &mut File,
    src_node: Option<&str>,
    dst: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ConvertSummary> {
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
    let (attributes, mut left_out) = selection_plan(selected, &base, &path);
    let label = column_label(&path, src.path());
    let file = src.path().to_path_buf();
    let located = |e: Error| e.with_file(&file).with_node(path.clone());
    if vl.is_none() {
        // Batch by batch, in bounded memory (crate::stream).
        let mut parquet = options_for(options.compress.as_ref())?;
        if let Some(json) = &attributes {
            parquet = parquet.key_value(crate::convert::PARQUET_ATTRIBUTES_KEY, json.clone());
        }
        let streamed = crate::stream::array_to_parquet(
            src,
            &path,
            &label,
            dst,
            parquet,
            options.partition_rows,
            &mut left_out,
            options.strict,
            progress,
        )
        .map_err(located)?;
        if let Some((arrays, data_bytes)) = streamed {
            return Ok(ConvertSummary {
                format: Format::Parquet,
                arrays,
                data_bytes,
                left_out,
            });
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
    left_out.extend(
        fields_left
            .into_iter()
            .map(|(field, e)| LeftOut::column(path.clone(), field, "a record field", e.message())),
    );
    refuse_if_strict(&left_out, options.strict, dst)?;
    let mut parquet = options_for(options.compress.as_ref())?;
    if let Some(json) = attributes {
        parquet = parquet.key_value(crate::convert::PARQUET_ATTRIBUTES_KEY, json);
    }
    let arrays = write_frame(&frame, dst, &parquet).map_err(located)?;
    progress(bytes, bytes);
    Ok(ConvertSummary {
        format: Format::Parquet,
        arrays,
        data_bytes: bytes,
        left_out,
    })
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

/// The frame of an array: a 1-d structured array's fields as columns (those without a column
/// type returned apart), a 1-d array as one column, an n-d array as one fixed-size list column.
pub(crate) fn array_frame(array: &NdArray, label: &str) -> Result<(Frame, Vec<(String, Error)>)> {
    match (array.dtype(), array.shape().len()) {
        (DType::Record(_), 1) => Frame::from_structured_partial(array),
        (DType::Record(_), _) => Err(Error::unsupported(format!(
            "a data frame needs a 1-d structured array, got shape {:?}",
            array.shape()
        ))),
        (_, 1..) => Ok((Frame::from_ndarray(label, array)?, Vec::new())),
        _ => Err(Error::unsupported(format!(
            "a {}-d {} array is no data frame; a frame needs a structured array (one column \
             per field), a 1-d array (one column) or an n-d array (a column of fixed-size lists)",
            array.shape().len(),
            array.dtype()
        ))),
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
        let path = crate::convert::join(base, &rel);
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
    let values = array.to_order(sciio_core::Order::C).values()?;
    let mut items = values.iter().map(value_json);
    Ok(nest(array.shape(), &mut items))
}

fn nest(shape: &[usize], items: &mut dyn Iterator<Item = serde_json::Value>) -> serde_json::Value {
    match shape.split_first() {
        None => items.next().unwrap_or(serde_json::Value::Null),
        Some((&n, rest)) => serde_json::Value::Array((0..n).map(|_| nest(rest, items)).collect()),
    }
}

fn value_json(value: &Value) -> serde_json::Value {
    use serde_json::Value as Json;
    let float = |x: f64| {
        if x.is_finite() {
            Json::from(x)
        } else if x.is_nan() {
            Json::from("nan")
        } else {
            Json::from(if x > 0.0 { "inf" } else { "-inf" })
        }
    };
    match value {
        Value::Bool(b) => Json::from(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(x) => float(*x),
        Value::LongDouble(x) => float(x.to_f64()),
        Value::Complex(c) => Json::Array(vec![float(c.re), float(c.im)]),
        Value::LongComplex(re, im) => Json::Array(vec![float(re.to_f64()), float(im.to_f64())]),
        Value::Bytes(b) | Value::Void(b) => Json::from(match std::str::from_utf8(b) {
            Ok(text) => text.to_string(),
            Err(_) => b.iter().map(|&c| char::from(c)).collect(),
        }),
        Value::Str(text) => Json::from(text.as_str()),
        Value::DateTime(i64::MIN, _) | Value::TimeDelta(i64::MIN, _) => Json::Null,
        Value::DateTime(t, _) | Value::TimeDelta(t, _) => Json::from(*t),
        Value::Record(fields) => Json::Object(
            fields
                .iter()
                .map(|(name, v)| (name.clone(), value_json(v)))
                .collect(),
        ),
        Value::Array(shape, items) => nest(shape, &mut items.iter().map(value_json)),
    }
}

/// Arrays with their names (npz members, record fields).
type NamedArrays = Vec<(String, NdArray)>;

/// A frame's columns as numpy arrays, named as [`Frame::to_ndarrays`] names them (with the
/// index levels first when `with_index`); a column numpy has no type for is left out, two
/// arrays of the same name are an error.
pub(crate) fn numpy_columns(
    frame: &Frame,
    with_index: bool,
    path: &Path,
    limits: &Limits,
) -> Result<(NamedArrays, Vec<LeftOut>)> {
    let mut arrays = Vec::new();
    let mut left_out = Vec::new();
    let index = if with_index {
        frame.index_arrays().map_err(|e| e.with_file(path))?
    } else {
        Vec::new()
    };
    let columns = frame.schema().columns().map(|c| {
        (
            c.label().unwrap_or("None").to_string(),
            c.meta.numpy_type.clone(),
        )
    });
    let index = index
        .into_iter()
        .map(|(name, a)| (name, Ok(a), String::new()));
    let columns = columns.map(|(label, numpy)| (label.clone(), frame.column(&label), numpy));
    for (name, column, numpy) in index.chain(columns) {
        let column = match column {
            Ok(column) => column,
            Err(e) if e.kind() == ErrorKind::Unsupported => {
                left_out.push(no_numpy_type(name, numpy, &e));
                continue;
            }
            Err(e) => return Err(e.with_file(path).with_node(name)),
        };
        match sciio_pandas::array_to_masked_ndarray(column.as_ref(), limits) {
            Ok((array, mask)) => {
                let mask_name = format!("{name}{}", sciio_pandas::MASK_SUFFIX);
                arrays.push((name, array));
                if let Some(mask) = mask {
                    arrays.push((mask_name, mask));
                }
            }
            Err(e) if e.kind() == ErrorKind::Unsupported => left_out.push(no_numpy_type(
                name,
                sciio_pandas::arrow_type_text(column.data_type()),
                &e,
            )),
            Err(e) => return Err(e.with_file(path).with_node(name)),
        }
    }
    check_distinct(&arrays, path)?;
    Ok((arrays, left_out))
}

pub(crate) fn no_numpy_type(label: String, description: String, e: &Error) -> LeftOut {
    LeftOut::column(
        "/",
        label,
        description,
        format!("numpy has no type for it: {}", e.message()),
    )
}

pub(crate) fn check_distinct(arrays: &[(String, NdArray)], path: &Path) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for (name, _) in arrays {
        if !seen.insert(name.as_str()) {
            return Err(Error::invalid_input(format!(
                "two columns/index levels are named '{name}'; npz members and record fields \
                 need distinct names"
            ))
            .with_file(path)
            .with_node(name.clone()));
        }
    }
    Ok(())
}

/// The Table node a frame becomes in an `.h5` file: the destination node, else the source's
/// file stem (`prices.parquet` → `/prices`).
#[cfg(feature = "hdf5")]
pub(crate) fn table_name(dst_node: Option<&str>, src: &Path) -> String {
    match dst_node
        .map(|n| n.trim_matches('/'))
        .filter(|n| !n.is_empty())
    {
        Some(node) => node.to_string(),
        None => src
            .file_stem()
            .map(|s| s.to_string_lossy().replace(['.', '/'], "_"))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "frame".to_string()),
    }
}

/// The frame's index levels and columns as one packed record array, the row type of a
/// PyTables Table. Text columns become UTF-8 byte strings as wide as their longest value
/// (PyTables has no unicode column; pandas' HDFStore stores text the same way); columns
/// PyTables has no type for (datetimes, durations, objects) are left out.
#[cfg(feature = "hdf5")]
pub(crate) fn frame_table(arrays: &[(String, NdArray)]) -> Result<(NdArray, Vec<LeftOut>)> {
    use sciio_core::{Order, ScalarKind};
    let rows = arrays.first().map_or(0, |(_, a)| a.len());
    let mut columns = Vec::with_capacity(arrays.len());
    let mut left_out = Vec::new();
    for (name, array) in arrays {
        let array = array.to_native();
        let column = match array.dtype() {
            DType::Scalar(s) if matches!(s.kind, ScalarKind::Unicode(_)) => utf8_column(&array)?,
            DType::Scalar(s)
                if matches!(
                    s.kind,
                    ScalarKind::DateTime(_) | ScalarKind::TimeDelta(_) | ScalarKind::Object
                ) =>
            {
                left_out.push(LeftOut::column(
                    "/",
                    name,
                    array.dtype().to_typestr(),
                    "PyTables has no column type for it (.parquet and .npz hold it)",
                ));
                continue;
            }
            _ => array.to_order(Order::C),
        };
        columns.push((name.clone(), column));
    }
    Ok((records_of(&columns, rows)?, left_out))
}

/// Named 1-d columns of `rows` values interleaved into one packed record array.
pub(crate) fn records_of(columns: &[(String, NdArray)], rows: usize) -> Result<NdArray> {
    use sciio_core::{Order, RecordType};
    let mut native = Vec::with_capacity(columns.len());
    for (name, column) in columns {
        if column.shape() != [rows] {
            return Err(Error::invalid_input(format!(
                "column '{name}' has shape {:?}, the records need {rows} rows",
                column.shape()
            )));
        }
        native.push((name.clone(), column.to_order(Order::C)));
    }
    let record = RecordType::packed(native.iter().map(|(n, c)| (n.clone(), c.dtype().clone())));
    let itemsize = record.itemsize;
    let mut bytes = vec![0u8; itemsize * rows];
    let mut offset = 0;
    for (_, column) in &native {
        let width = column.dtype().itemsize();
        for (row, value) in column.as_bytes().chunks_exact(width.max(1)).enumerate() {
            let at = row * itemsize + offset;
            bytes[at..at + width].copy_from_slice(value);
        }
        offset += width;
    }
    NdArray::from_bytes(DType::Record(record), &[rows], Order::C, &bytes)
}

/// A `U<n>` column as `S<m>`: each value UTF-8 encoded, `m` the longest encoding (at least 1).
#[cfg(feature = "hdf5")]
fn utf8_column(array: &NdArray) -> Result<NdArray> {
    use sciio_core::{DType, Order, ScalarKind, ScalarType, Value};
    let texts: Vec<String> = (0..array.len())
        .map(|i| match array.get(&[i])? {
            Value::Str(s) => Ok(s),
            other => Err(Error::invalid_input(format!("not text: {other:?}"))),
        })
        .collect::<Result<_>>()?;
    let width = texts.iter().map(String::len).max().unwrap_or(0).max(1);
    let mut bytes = vec![0u8; width * texts.len()];
    for (slot, text) in bytes.chunks_exact_mut(width).zip(&texts) {
        slot[..text.len()].copy_from_slice(text.as_bytes());
    }
    let dtype = DType::Scalar(ScalarType::native(ScalarKind::Bytes(width)));
    NdArray::from_bytes(dtype, &[texts.len()], Order::C, &bytes)
}

/// A Parquet → Parquet summary: the frame's columns and the source file's size.
fn summary(format: Format, root: &Node, bytes: u64) -> ConvertSummary {
    let arrays = match &root.kind {
        NodeKind::Frame { columns, .. } => columns.clone(),
        _ => Vec::new(),
    };
    ConvertSummary {
        format,
        arrays,
        data_bytes: bytes,
        left_out: Vec::new(),
    }
}

/// A frame → a Parquet file, written atomically. Returns the column labels.
pub(crate) fn write_frame(
    frame: &Frame,
    dst: &Path,
    options: &ParquetOptions,
) -> Result<Vec<String>> {
    write_atomically(dst, |out| {
        let mut writer = ParquetWriter::new(out, frame.schema(), options);
        for batch in frame.batches() {
            writer.write(batch)?;
        }
        writer.finish()
    })?;
    Ok(frame
        .schema()
        .columns()
        .map(|c| c.label().unwrap_or("None").to_string())
        .collect())
}

/// Writes named arrays as an `.npz` file (members `name.npy`), atomically.
pub(crate) fn write_npz(
    arrays: &[(String, NdArray)],
    dst: &Path,
    compression: sciio_zip::Compression,
) -> Result<()> {
    write_atomically(dst, |out| {
        let mut zip = ZipWriter::new(out).compression(compression);
        for (name, array) in arrays {
            let member_name = format!("{name}.npy");
            let mut member = zip
                .start_member(&member_name)
                .map_err(|e| e.with_node(member_name.clone()))?;
            sciio_npy::write_array(&mut member, array)
                .map_err(|e| e.with_node(member_name.clone()))?;
            member
                .finish()
                .map_err(|e| e.with_node(member_name.clone()))?;
        }
        zip.finish()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compress_specs_map_to_parquet_codecs() {
        let codec = |s: &str| {
            options_for(Some(&CompressSpec::parse(s).unwrap())).map(|o| o.get_compression())
        };
        assert_eq!(codec("zstd:3").unwrap(), Compression::Zstd(Some(3)));
        assert_eq!(codec("snappy").unwrap(), Compression::Snappy);
        assert_eq!(codec("gzip").unwrap(), Compression::Gzip(None));
        assert_eq!(codec("none").unwrap(), Compression::None);
        assert!(codec("deflate:6").is_err());
        assert!(codec("shuffle,zstd").is_err());
        assert!(codec("zstd:99").is_err());
        assert_eq!(
            options_for(None).unwrap().get_compression(),
            Compression::Snappy
        );
    }
}
