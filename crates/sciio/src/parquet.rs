//! Parquet files (pandas, pyarrow) in the neutral tree, through `sciio-pandas`: a file is one
//! [`NodeKind::Frame`] node with its column labels and row count.
//!
//! Conversions that involve a frame do not go through the array leaves of the tree: a frame's
//! columns are Arrow arrays, not numpy blocks. `x.parquet → y.parquet` streams record batches
//! (bounded memory, pandas metadata kept); `x.parquet → y.npz` stores one member per index
//! level and column ([`Frame::to_ndarrays`], the frame in memory); a 1-d structured array
//! (`.npy`, npz member, PyTables `Table`) → `.parquet` becomes one column per field
//! ([`Frame::from_structured`]).

use std::path::Path;

use sciio_core::{Error, Limits, NdArray, Result};
use sciio_pandas::{
    Compression, Frame, FrameSchema, ParquetOptions, ParquetReader, ParquetWriter, ReadOptions,
};
use sciio_zip::ZipWriter;

use crate::atomic::write_atomically;
use crate::compress::CompressSpec;
use crate::convert::{npz_compression, ConvertOptions, ConvertSummary};
use crate::file::File;
use crate::format::Format;
use crate::node::{Node, NodeKind};

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
        if format != Format::Hdf5 {
            return Err(Error::invalid_input(format!(
                "a {format} destination of a data frame takes no node; drop ':{node}'"
            ))
            .with_file(dst));
        }
    }
    let frame_src = matches!(src.root().kind, NodeKind::Frame { .. });
    if frame_src && src_node.is_some_and(|n| !n.trim_matches('/').is_empty()) {
        return Err(Error::not_found(
            "a Parquet file is one data frame without nodes (use the file name alone)",
        )
        .with_file(src.path()));
    }
    let limits = *src.limits();
    match (frame_src, format) {
        (true, Format::Parquet) => {
            let parquet = options_for(options.compress.as_ref())?;
            copy(src.path(), &limits, dst, &parquet, progress)?;
            Ok(Some(summary(format, src.root(), src.size_on_disk())))
        }
        (true, Format::Npz) => {
            let compression = npz_compression(options.compress.as_ref())?;
            let arrays = frame_arrays(src.path(), &limits)?;
            write_npz(&arrays, dst, compression)?;
            let bytes = arrays.iter().map(|(_, a)| a.as_bytes().len() as u64).sum();
            progress(bytes, bytes);
            Ok(Some(ConvertSummary {
                format,
                arrays: arrays.into_iter().map(|(name, _)| name).collect(),
                data_bytes: bytes,
            }))
        }
        #[cfg(feature = "hdf5")]
        (true, Format::Hdf5) => {
            let arrays = frame_arrays(src.path(), &limits)?;
            let table = frame_table(&arrays).map_err(|e| e.with_file(src.path()))?;
            let name = table_name(options.dst_node.as_deref(), src.path());
            let mut out = crate::h5write::H5Out::create(dst, options.compress.as_ref())?;
            out.write(&name, &table).map_err(|e| e.with_file(dst))?;
            out.finish(dst)?;
            let bytes = table.as_bytes().len() as u64;
            progress(bytes, bytes);
            Ok(Some(ConvertSummary {
                format,
                arrays: vec![name],
                data_bytes: bytes,
            }))
        }
        (true, other) => Err(Error::unsupported(format!(
            "{other} cannot hold a data frame; write .parquet, .npz (one array per column) or .h5 (a Table)"
        ))
        .with_file(src.path())),
        (false, _) => {
            let path = src.single_array_path(*src_node)?;
            let parquet = options_for(options.compress.as_ref())?;
            let array = src.read_array(&path)?;
            let file = src.path().to_path_buf();
            let arrays = write_structured(&array, dst, &parquet)
                .map_err(|e| e.with_file(&file).with_node(path.clone()))?;
            let bytes = array.as_bytes().len() as u64;
            progress(bytes, bytes);
            Ok(Some(ConvertSummary {
                format,
                arrays,
                data_bytes: bytes,
            }))
        }
    }
}

/// The Table node a frame becomes in an `.h5` file: the destination node, else the source's
/// file stem (`prices.parquet` → `/prices`).
#[cfg(feature = "hdf5")]
fn table_name(dst_node: Option<&str>, src: &Path) -> String {
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

/// The frame's index levels and columns (all 1-d, one length) interleaved into one packed
/// record array, the row type of a PyTables Table. Text columns become UTF-8 byte strings as wide
/// as their longest value (PyTables has no unicode column; pandas' HDFStore stores text the same
/// way); columns PyTables has no type for (datetimes, durations, objects) are refused by name.
#[cfg(feature = "hdf5")]
fn frame_table(arrays: &[(String, NdArray)]) -> Result<NdArray> {
    use sciio_core::{DType, Order, RecordType, ScalarKind};
    let rows = arrays.first().map_or(0, |(_, a)| a.len());
    let mut columns = Vec::with_capacity(arrays.len());
    for (name, array) in arrays {
        if array.shape() != [rows] {
            return Err(Error::invalid_input(format!(
                "column '{name}' has shape {:?}, a Table needs {rows} rows",
                array.shape()
            )));
        }
        let array = array.to_native();
        let column = match array.dtype() {
            DType::Scalar(s) if matches!(s.kind, ScalarKind::Unicode(_)) => utf8_column(&array)?,
            DType::Scalar(s)
                if matches!(
                    s.kind,
                    ScalarKind::DateTime(_) | ScalarKind::TimeDelta(_) | ScalarKind::Object
                ) =>
            {
                return Err(Error::unsupported(format!(
                    "column '{name}' ({}) has no PyTables column type; convert to .parquet or .npz",
                    array.dtype().to_typestr()
                )))
            }
            _ => array.to_order(Order::C),
        };
        columns.push((name.clone(), column));
    }
    let record = RecordType::packed(columns.iter().map(|(n, c)| (n.clone(), c.dtype().clone())));
    let itemsize = record.itemsize;
    let mut bytes = vec![0u8; itemsize * rows];
    let mut offset = 0;
    for (_, column) in &columns {
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
    }
}

/// A 1-d structured array → a Parquet file of one column per field, written atomically.
/// Returns the column labels.
pub(crate) fn write_structured(
    array: &NdArray,
    dst: &Path,
    options: &ParquetOptions,
) -> Result<Vec<String>> {
    if array.shape().len() != 1 {
        return Err(Error::unsupported(format!(
            "a data frame needs a 1-d structured array, got shape {:?}",
            array.shape()
        )));
    }
    let frame = Frame::from_structured(array)?;
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

/// A frame's index levels and columns as numpy arrays (named as [`Frame::to_ndarrays`] names
/// them), refusing two arrays of the same name.
pub(crate) fn frame_arrays(path: &Path, limits: &Limits) -> Result<Vec<(String, NdArray)>> {
    let frame = read_frame(path, limits)?;
    let arrays = frame.to_ndarrays(limits).map_err(|e| e.with_file(path))?;
    let mut seen = std::collections::HashSet::new();
    for (name, _) in &arrays {
        if !seen.insert(name.as_str()) {
            return Err(Error::invalid_input(format!(
                "two columns/index levels are named '{name}'; npz members need distinct names"
            ))
            .with_file(path)
            .with_node(name.clone()));
        }
    }
    Ok(arrays)
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
