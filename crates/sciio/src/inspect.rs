//! What a file says about itself beyond its node tree, and partial reads: how a node's data
//! is stored ([`File::storage`]: layout, chunks, filters, bytes on disk and the compression
//! ratio), a Parquet file's row groups and column chunks ([`File::parquet_info`]), and rows
//! `start..stop` of an array read without reading the rest ([`File::read_array_rows`]).

use std::io::{self, Read, Seek, SeekFrom};

use sciio_core::{Error, NdArray, Order, Result};

use crate::file::{expect_root, member_index, normalise, Backend, File};
use crate::node::Node;

/// How a node's data is stored in its file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Storage {
    /// `contiguous`, `chunked` or `compact` (HDF5; a `.npy` is contiguous), `stored` or
    /// `deflated` (an npz member).
    pub layout: String,
    /// The chunk shape of a chunked HDF5 dataset.
    pub chunk_shape: Option<Vec<u64>>,
    /// How many chunks of a chunked HDF5 dataset are written.
    pub chunks_stored: Option<u64>,
    /// The filter pipeline, in order, in `--compress` syntax (`shuffle`, `deflate:5`,
    /// `blosc:lz4:5`), or the name and id of a filter sciio has no syntax for.
    pub filters: Vec<String>,
    /// Bytes the data takes in the file (compressed), when known.
    pub stored_bytes: Option<u64>,
    /// Bytes of the data uncompressed.
    pub logical_bytes: u64,
    /// Where the data starts in the file (`.npy`, stored npz members), when it is one block.
    pub offset: Option<u64>,
}

impl Storage {
    /// Logical bytes per stored byte (`None` when nothing is stored or the size is unknown).
    pub fn ratio(&self) -> Option<f64> {
        self.stored_bytes
            .filter(|s| *s > 0)
            .map(|s| self.logical_bytes as f64 / s as f64)
    }
}

/// A Parquet file's layout: its row groups, their column chunks, the key-value metadata.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ParquetInfo {
    /// Rows in the file.
    pub rows: u64,
    /// The writer (`created_by`).
    pub created_by: Option<String>,
    /// Row groups, in file order.
    pub row_groups: Vec<RowGroupInfo>,
    /// Keys of the file's key-value metadata, with the size of their values in bytes.
    pub metadata_keys: Vec<(String, usize)>,
}

/// One row group of a Parquet file.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RowGroupInfo {
    /// Rows in the group.
    pub rows: u64,
    /// Its column chunks.
    pub columns: Vec<ColumnChunkInfo>,
}

/// One column chunk of a row group.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ColumnChunkInfo {
    /// The column's path (`a.b` for nested columns).
    pub path: String,
    /// Parquet physical type (`INT64`, `BYTE_ARRAY`...).
    pub physical_type: String,
    /// Compression codec (`SNAPPY`, `ZSTD(ZstdLevel(1))`...).
    pub codec: String,
    /// Encodings used (`PLAIN`, `RLE_DICTIONARY`...).
    pub encodings: Vec<String>,
    /// Bytes as stored.
    pub compressed_bytes: u64,
    /// Bytes uncompressed.
    pub uncompressed_bytes: u64,
    /// Null count, from the statistics.
    pub nulls: Option<u64>,
    /// Minimum and maximum, from the statistics, as text.
    pub min_max: Option<(String, String)>,
}

/// A filter of an HDF5 pipeline in `--compress` syntax where it has one.
#[cfg(feature = "hdf5")]
/// An HDF5 dataset's storage facts as [`Storage`].
#[cfg(feature = "hdf5")]
fn hdf5_storage(facts: crate::hdf5::StorageFacts, logical: u64) -> Storage {
    use sciio_pytables::sciio_hdf5::Layout;
    let (layout, chunk_shape, chunks_stored, filters, stored) = facts;
    Storage {
        layout: match layout {
            Layout::Compact => "compact",
            Layout::Contiguous => "contiguous",
            Layout::Chunked => "chunked",
            Layout::Other => "other (virtual?)",
        }
        .to_string(),
        chunk_shape,
        chunks_stored,
        filters: filters.iter().map(filter_text).collect(),
        stored_bytes: Some(stored),
        logical_bytes: logical,
        offset: None,
    }
}

#[cfg(feature = "hdf5")]
fn filter_text(f: &sciio_pytables::sciio_hdf5::Filter) -> String {
    let cd = |i: usize| f.cd_values.get(i).copied();
    match f.id {
        1 => format!("deflate:{}", cd(0).unwrap_or(0)),
        2 => "shuffle".to_string(),
        3 => "fletcher32".to_string(),
        4 => "szip".to_string(),
        5 => "nbit".to_string(),
        6 => "scaleoffset".to_string(),
        32000 => "lzf".to_string(),
        32001 => {
            // PyTables' blosc: cd[4] level, cd[5] shuffle, cd[6] compressor.
            let codec = match cd(6) {
                Some(0) => "blosclz",
                Some(1) => "lz4",
                Some(2) => "lz4hc",
                Some(3) => "snappy",
                Some(4) => "zlib",
                Some(5) => "zstd",
                _ => "?",
            };
            format!("blosc:{codec}:{}", cd(4).unwrap_or(0))
        }
        32026 => "blosc2".to_string(),
        32008 => "bitshuffle".to_string(),
        305 => "lzo".to_string(),
        307 => format!("bzip2:{}", cd(0).unwrap_or(9)),
        id => format!("{} (filter {id})", f.name),
    }
}

impl File {
    /// How the array at `path` is stored: layout, chunks, filters, bytes on disk. `None` for
    /// nodes without data of their own (groups, links) and for formats that do not say
    /// (MAT, Parquet: see [`File::parquet_info`]).
    pub fn storage(&mut self, path: &str) -> Result<Option<Storage>> {
        let path = normalise(path);
        let file = self.path.clone();
        let located = |e: Error| e.with_file(&file).with_node(path.clone());
        let Some(info) = self.root.find(&path).and_then(Node::array_info).cloned() else {
            return Ok(None);
        };
        let logical = info.nbytes();
        match &mut self.backend {
            Backend::Npy(header) => Ok(Some(Storage {
                layout: "contiguous".to_string(),
                stored_bytes: Some(logical),
                logical_bytes: logical,
                offset: Some(header.header_len as u64),
                ..Storage::default()
            })),
            Backend::Npz { archive, members } => {
                let index = member_index(members, &path).map_err(located)?;
                let entry = archive.entries()[index].clone();
                let stored = entry.method() == sciio_zip::CompressionMethod::STORED;
                let offset = if stored {
                    Some(archive.data_offset(index).map_err(located)?)
                } else {
                    None
                };
                Ok(Some(Storage {
                    layout: if stored { "stored" } else { "deflated" }.to_string(),
                    filters: if stored {
                        Vec::new()
                    } else {
                        vec![format!("{}", entry.method())]
                    },
                    // The member holds the .npy header too.
                    stored_bytes: Some(entry.compressed_size()),
                    logical_bytes: entry.size(),
                    offset,
                    ..Storage::default()
                }))
            }
            #[cfg(feature = "hdf5")]
            Backend::Hdf5(h5) => {
                let facts = h5.storage(&path).map_err(located)?;
                Ok(Some(hdf5_storage(facts, logical)))
            }
            // A v7.3 MAT file is HDF5: a variable, or a struct's field, stored as a dataset
            // at its path reports that dataset's storage. Cell elements (behind #refs#) and
            // v4-v7 files, whose variables are (compressed) elements, report none.
            #[cfg(all(feature = "mat", feature = "hdf5"))]
            Backend::Mat(_) => {
                let limits = self.limits;
                let Ok(h5) = sciio_pytables::sciio_hdf5::File::open_with_limits(&file, limits)
                else {
                    return Ok(None);
                };
                let Ok(ds) = h5.dataset(&path) else {
                    return Ok(None);
                };
                let facts = crate::hdf5::dataset_storage(&ds).map_err(located)?;
                Ok(Some(hdf5_storage(facts, logical)))
            }
            #[allow(unreachable_patterns)]
            _ => Ok(None),
        }
    }

    /// Rows `start..stop` along the first dimension of the array at `path` (clamped to its
    /// length; a 0-d array is read whole), reading only what they need where the format
    /// allows: the bytes of those rows in a `.npy` (C order: one read), an npz member
    /// decompressed up to the last row (its CRC is then not checked), a hyperslab of an HDF5
    /// dataset or table (only the chunks it touches). MAT variables are read whole and cut.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("x.npy");
    /// let a = sciio::NdArray::from_vec((0..20i32).collect::<Vec<_>>(), &[10, 2])?;
    /// std::fs::write(&path, { let mut b = Vec::new(); sciio::npy::write_array(&mut b, &a)?; b })?;
    /// let rows = sciio::open(&path)?.read_array_rows("/", 2, 4)?;
    /// assert_eq!(rows.shape(), &[2, 2]);
    /// assert_eq!(rows.view::<i32>()?.iter().copied().collect::<Vec<_>>(), vec![4, 5, 6, 7]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_array_rows(&mut self, path: &str, start: u64, stop: u64) -> Result<NdArray> {
        let path = normalise(path);
        let file = self.path.clone();
        let located = |e: Error| e.with_file(&file).with_node(path.clone());
        let info = self.root.find(&path).and_then(Node::array_info).cloned();
        let Some(info) = info.filter(|i| !i.shape.is_empty()) else {
            return self.read_array(&path);
        };
        let rows = info.shape[0] as u64;
        let (start, stop) = (start.min(rows), stop.min(rows).max(start.min(rows)));
        let row_bytes = info.nbytes().checked_div(rows).unwrap_or(0);
        match &mut self.backend {
            Backend::Npy(header) => {
                expect_root(&path).map_err(located)?;
                header.refuse_objects().map_err(located)?;
                let mut f = std::fs::File::open(&self.path)
                    .map_err(|e| located(Error::io("cannot open", e)))?;
                let base = header.header_len as u64;
                read_rows_from(&mut f, &info, base, start, stop, row_bytes, &self.limits)
                    .map_err(located)
            }
            Backend::Npz { archive, members } if info.order == Order::C => {
                let index = member_index(members, &path).map_err(located)?;
                let size = archive.entries()[index].size();
                let limits = self.limits;
                let mut member = archive.open_member(index).map_err(located)?;
                let header = sciio_npy::read_header_from(&mut member, &limits, Some(size))
                    .map_err(located)?;
                header.refuse_objects().map_err(located)?;
                let skip = start * row_bytes;
                let copied = io::copy(&mut (&mut member).take(skip), &mut io::sink())
                    .map_err(|e| located(sciio_zip::error_from_io(e)))?;
                if copied < skip {
                    return Err(located(Error::truncated("the member ends before the rows")));
                }
                read_c_rows(&mut member, &info, start, stop, row_bytes, &limits).map_err(located)
            }
            #[cfg(feature = "hdf5")]
            Backend::Hdf5(h5) => {
                let index = |i: u64| usize::try_from(i).map_err(|_| too_big());
                h5.read_row_range(&path, index(start)?, index(stop)?)
                    .map_err(located)
            }
            _ => {
                let whole = self.read_array(&path)?;
                slice_rows(&whole, start, stop).map_err(located)
            }
        }
    }

    /// Rows `start..stop` of a structured array or table at `path` (as
    /// [`File::read_array_rows`]) with only the top-level fields named in `fields` (numpy's
    /// `rows[fields]`), in the array's field order. An HDF5 compound dataset (a PyTables
    /// Table) is read with a memory type of those fields alone: libhdf5 converts only their
    /// bytes and the result holds only them. A `.npy`/`.npz` stores its records interleaved,
    /// so the rows' whole records are read and the result views the kept fields in them (the
    /// other fields' bytes stay unconverted). A name the array lacks is an error naming it.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// use sciio::core::{ByteOrder, DType, Order, RecordType, ScalarKind, ScalarType};
    /// let f8 = DType::Scalar(ScalarType::new(ScalarKind::Float(8), ByteOrder::Little));
    /// let record = RecordType::packed([("a".to_string(), f8.clone()), ("b".to_string(), f8)]);
    /// let bytes: Vec<u8> = (0..8).flat_map(|i| (i as f64).to_le_bytes()).collect();
    /// let a = sciio::NdArray::from_bytes(DType::Record(record), &[4], Order::C, &bytes)?;
    /// let path = dir.path().join("r.npy");
    /// std::fs::write(&path, { let mut b = Vec::new(); sciio::npy::write_array(&mut b, &a)?; b })?;
    /// let rows = sciio::open(&path)?.read_array_fields("/", 1, 3, &["b".to_string()])?;
    /// let DType::Record(kept) = rows.dtype() else { unreachable!() };
    /// assert_eq!(kept.fields.len(), 1);
    /// assert_eq!(rows.shape(), &[2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_array_fields(
        &mut self,
        path: &str,
        start: u64,
        stop: u64,
        fields: &[String],
    ) -> Result<NdArray> {
        let path = normalise(path);
        let file = self.path.clone();
        let located = |e: Error| e.with_file(&file).with_node(path.clone());
        #[cfg(feature = "hdf5")]
        if let Backend::Hdf5(h5) = &self.backend {
            let rows = self
                .root
                .find(&path)
                .and_then(Node::array_info)
                .and_then(|i| i.shape.first().copied())
                .unwrap_or(0) as u64;
            let (start, stop) = (start.min(rows), stop.min(rows).max(start.min(rows)));
            return h5
                .read_row_fields(&path, start, stop, fields)
                .map_err(located);
        }
        let rows = self.read_array_rows(&path, start, stop)?;
        only_fields(&rows, fields).map_err(located)
    }

    /// The row groups and column chunks of a Parquet file (its footer only is read); `None`
    /// for other formats.
    pub fn parquet_info(&self) -> Result<Option<ParquetInfo>> {
        #[cfg(feature = "parquet")]
        if let Backend::Parquet = &self.backend {
            return parquet_footer(&self.path)
                .map(Some)
                .map_err(|e| e.with_file(&self.path));
        }
        Ok(None)
    }
}

/// `rows` (a structured array) viewed with only the top-level `fields`, at their offsets in
/// the same records: numpy's `rows[fields]`; the other fields' bytes are not converted.
fn only_fields(rows: &NdArray, fields: &[String]) -> Result<NdArray> {
    let sciio_core::DType::Record(record) = rows.dtype() else {
        return Err(Error::mismatch(
            "not a structured array: it has no fields to select",
        ));
    };
    if let Some(missing) = fields
        .iter()
        .find(|n| !record.fields.iter().any(|f| &f.name == *n))
    {
        return Err(Error::not_found(format!("no field {missing:?}")));
    }
    let kept = sciio_core::RecordType {
        fields: record
            .fields
            .iter()
            .filter(|f| fields.contains(&f.name))
            .cloned()
            .collect(),
        itemsize: record.itemsize,
    };
    NdArray::from_bytes(
        sciio_core::DType::Record(kept),
        rows.shape(),
        rows.order(),
        rows.as_bytes(),
    )
}

/// Rows `start..stop` of an array stored at `base` in `f` (a `.npy` file's data).
fn read_rows_from(
    f: &mut std::fs::File,
    info: &crate::ArrayInfo,
    base: u64,
    start: u64,
    stop: u64,
    row_bytes: u64,
    limits: &sciio_core::Limits,
) -> Result<NdArray> {
    if info.order == Order::C || info.shape.len() == 1 {
        f.seek(SeekFrom::Start(base + start * row_bytes))
            .map_err(|e| Error::io("cannot seek", e))?;
        return read_c_rows(f, info, start, stop, row_bytes, limits);
    }
    // Fortran order: the first index varies fastest, so the rows are one run of
    // `stop - start` elements in each of the product(shape[1..]) columns.
    let item = info.dtype.itemsize() as u64;
    let rows = info.shape[0] as u64;
    let columns: u64 = info.shape[1..].iter().map(|&d| d as u64).product();
    let run = (stop - start) * item;
    let total = run.saturating_mul(columns);
    limits.check_alloc(total, "rows")?;
    let mut bytes = vec![0u8; usize::try_from(total).map_err(|_| too_big())?];
    for (c, chunk) in (0..columns).zip(bytes.chunks_mut(run.max(1) as usize)) {
        f.seek(SeekFrom::Start(base + (c * rows + start) * item))
            .map_err(|e| Error::io("cannot seek", e))?;
        f.read_exact(chunk)
            .map_err(|e| Error::io("cannot read the rows", e))?;
    }
    let mut shape = info.shape.clone();
    shape[0] = (stop - start) as usize;
    NdArray::from_bytes(info.dtype.clone(), &shape, Order::F, &bytes)
}

/// Reads `stop - start` C-order rows of `row_bytes` each from `r` (already at row `start`).
fn read_c_rows(
    r: &mut dyn Read,
    info: &crate::ArrayInfo,
    start: u64,
    stop: u64,
    row_bytes: u64,
    limits: &sciio_core::Limits,
) -> Result<NdArray> {
    let total = (stop - start).saturating_mul(row_bytes);
    limits.check_alloc(total, "rows")?;
    let mut bytes = vec![0u8; usize::try_from(total).map_err(|_| too_big())?];
    r.read_exact(&mut bytes)
        .map_err(|e| Error::io("cannot read the rows", e))?;
    let mut shape = info.shape.clone();
    shape[0] = (stop - start) as usize;
    NdArray::from_bytes(info.dtype.clone(), &shape, info.order, &bytes)
}

fn too_big() -> Error {
    Error::unsupported("the rows do not fit in memory on this platform")
}

/// Rows `start..stop` (within bounds) of an array in memory, in its own order.
pub(crate) fn slice_rows(a: &NdArray, start: u64, stop: u64) -> Result<NdArray> {
    let shape = a.shape();
    let Some(&rows) = shape.first() else {
        return Ok(a.clone());
    };
    let (start, stop) = (
        start.min(rows as u64) as usize,
        stop.min(rows as u64) as usize,
    );
    let stop = stop.max(start);
    let bytes = a.as_bytes();
    let item = a.dtype().itemsize();
    let short = || Error::format("the array holds fewer bytes than its shape needs");
    let mut out_shape = shape.to_vec();
    out_shape[0] = stop - start;
    let out = match a.order() {
        Order::C => {
            let row = bytes.len().checked_div(rows).unwrap_or(0);
            bytes
                .get(start * row..stop * row)
                .ok_or_else(short)?
                .to_vec()
        }
        Order::F => {
            let columns: usize = shape[1..].iter().product();
            let mut out = Vec::with_capacity((stop - start) * item * columns);
            for c in 0..columns {
                let at = (c * rows + start) * item;
                out.extend_from_slice(
                    bytes
                        .get(at..at + (stop - start) * item)
                        .ok_or_else(short)?,
                );
            }
            out
        }
    };
    NdArray::from_bytes(a.dtype().clone(), &out_shape, a.order(), &out)
}

/// The footer of the Parquet file at `path`, described.
#[cfg(feature = "parquet")]
fn parquet_footer(path: &std::path::Path) -> Result<ParquetInfo> {
    use sciio_pandas::parquet::file::reader::{FileReader, SerializedFileReader};
    let f = std::fs::File::open(path).map_err(|e| Error::io("cannot open", e))?;
    let reader = SerializedFileReader::new(f)
        .map_err(|e| Error::format(format!("cannot read the Parquet footer: {e}")))?;
    let meta = reader.metadata();
    let file = meta.file_metadata();
    let row_groups = meta
        .row_groups()
        .iter()
        .map(|rg| RowGroupInfo {
            rows: rg.num_rows().max(0) as u64,
            columns: rg
                .columns()
                .iter()
                .map(|c| ColumnChunkInfo {
                    path: c.column_path().string(),
                    physical_type: c.column_type().to_string(),
                    codec: c.compression().to_string(),
                    encodings: c.encodings().map(|e| e.to_string()).collect(),
                    compressed_bytes: c.compressed_size().max(0) as u64,
                    uncompressed_bytes: c.uncompressed_size().max(0) as u64,
                    nulls: c.statistics().and_then(|s| s.null_count_opt()),
                    min_max: c.statistics().and_then(statistics_text),
                })
                .collect(),
        })
        .collect();
    Ok(ParquetInfo {
        rows: file.num_rows().max(0) as u64,
        created_by: file.created_by().map(str::to_string),
        row_groups,
        metadata_keys: file
            .key_value_metadata()
            .map(|kv| {
                kv.iter()
                    .map(|k| (k.key.clone(), k.value.as_ref().map_or(0, String::len)))
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// A column chunk's minimum and maximum as text (strings quoted when they are UTF-8).
#[cfg(feature = "parquet")]
fn statistics_text(
    s: &sciio_pandas::parquet::file::statistics::Statistics,
) -> Option<(String, String)> {
    use sciio_pandas::parquet::file::statistics::Statistics as S;
    fn bytes(b: &[u8]) -> String {
        match std::str::from_utf8(b) {
            Ok(t) => format!("{t:?}"),
            Err(_) => format!("{} bytes", b.len()),
        }
    }
    Some(match s {
        S::Boolean(v) => (v.min_opt()?.to_string(), v.max_opt()?.to_string()),
        S::Int32(v) => (v.min_opt()?.to_string(), v.max_opt()?.to_string()),
        S::Int64(v) => (v.min_opt()?.to_string(), v.max_opt()?.to_string()),
        S::Int96(v) => (
            format!("{:?}", v.min_opt()?.data()),
            format!("{:?}", v.max_opt()?.data()),
        ),
        S::Float(v) => (v.min_opt()?.to_string(), v.max_opt()?.to_string()),
        S::Double(v) => (v.min_opt()?.to_string(), v.max_opt()?.to_string()),
        S::ByteArray(v) => (bytes(v.min_opt()?.data()), bytes(v.max_opt()?.data())),
        S::FixedLenByteArray(v) => (bytes(v.min_opt()?.data()), bytes(v.max_opt()?.data())),
    })
}
