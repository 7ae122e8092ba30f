//! Parquet files (pandas, pyarrow) in the neutral tree, through `sciio-pandas`: a file is one
//! [`NodeKind::Frame`] node with its column labels and row count. Also the frame <-> numpy
//! pieces every conversion of frames shares (numpy columns of a frame, records, a PyTables
//! table of columns, a frame written as Parquet or npz); the conversions themselves are in
//! `parquet_convert.rs`.

use std::path::Path;

use sciio_core::{DType, Error, ErrorKind, Limits, NdArray, Result};
#[cfg(feature = "hdf5")]
use sciio_pandas::IndexLevel;
use sciio_pandas::{
    Compression, Frame, FrameSchema, ParquetOptions, ParquetReader, ParquetWriter, ReadOptions,
};
use sciio_zip::ZipWriter;

use crate::atomic::write_atomically;
use crate::compress::CompressSpec;
use crate::node::{Node, NodeKind};
use crate::plan::LeftOut;

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

pub(crate) fn reader(path: &Path, limits: &Limits) -> Result<ParquetReader> {
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

/// The frame of an array: a 1-d structured array's fields as columns (those without a column
/// type returned apart), a 1-d array as one column, an n-d array as one fixed-size list column.
pub(crate) fn array_frame(array: &NdArray, label: &str) -> Result<(Frame, Vec<(String, Error)>)> {
    match (array.dtype(), array.shape().len()) {
        (DType::Record(_), 1) => Frame::from_structured_partial(array),
        (DType::Record(_), _) => Err(Error::unsupported(format!(
            "a data frame needs a 1-d structured array, got shape {:?}",
            array.shape()
        ))),
        (_, 1..) => {
            refuse_overlong_lists(array.shape())?;
            Ok((Frame::from_ndarray(label, array)?, Vec::new()))
        }
        _ => Err(Error::unsupported(format!(
            "a {}-d {} array is no data frame; a frame needs a structured array (one column \
             per field), a 1-d array (one column) or an n-d array (a column of fixed-size lists)",
            array.shape().len(),
            array.dtype()
        ))),
    }
}

/// Refuses an n-d array whose row cannot be one Parquet value: a row is a fixed-size list
/// per axis after the first, and Arrow's fixed-size lists hold at most `i32::MAX` items.
fn refuse_overlong_lists(shape: &[usize]) -> Result<()> {
    let most = i32::MAX as usize;
    let row = shape.get(1..).unwrap_or_default();
    match row.iter().find(|&&d| d > most) {
        Some(&d) => Err(Error::unsupported(format!(
            "a row of this array (shape {row:?}) would be a Parquet list of {d} values along \
             one axis, over the {most} an Arrow fixed-size list holds (a row is one value of \
             the column and cannot be cut); .npy, .h5 and MAT take rows of any size"
        ))),
        None => Ok(()),
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
