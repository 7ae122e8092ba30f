//! Categorical columns with their categories exactly as pandas has them: in their order,
//! unused ones included, in every row group.
//!
//! pyarrow (parquet-cpp) writes an Arrow dictionary array by handing the array's dictionary
//! to the column's dictionary encoder as is, so the Parquet dictionary page of every row group
//! holds the categories in order, and the data pages hold the pandas codes; on reading,
//! pyarrow turns each row group's dictionary page into the chunk's dictionary and unifies them
//! (first row group's order, then new values).
//!
//! arrow-rs's `ArrowWriter` cannot do this: it interns the *values* of a dictionary array row
//! by row, so its dictionary page lists the categories in order of first appearance and drops
//! the unused ones, and arrow-rs's reader turns non-string dictionary pages into plain values
//! and re-encodes them. So the writer here encodes categorical column chunks itself — a PLAIN
//! dictionary page of the categories and RLE_DICTIONARY data pages of the codes, serialized
//! by parquet's own page writer and spliced into the row group — and the reader reads each
//! row group's dictionary page to restore the categories.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, DictionaryArray, Float32Array, Float64Array,
    Int32Array, Int64Array, PrimitiveArray, RecordBatch,
};
use arrow_buffer::{ArrowNativeType, NullBuffer};
use arrow_cast::CastOptions;
use arrow_schema::{DataType, TimeUnit};
use bytes::Bytes;
use parquet::basic::{Compression, Encoding, LogicalType, PageType, Type as PhysicalType};
use parquet::column::page::{CompressedPage, Page, PageReader, PageWriteSpec};
use parquet::column::writer::ColumnCloseResult;
use parquet::compression::{create_codec, CodecOptionsBuilder};
use parquet::data_type::ByteArray;
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::serialized_reader::SerializedPageReader;
use parquet::file::statistics::Statistics;
use parquet::schema::types::ColumnDescPtr;

use sciio_core::{Error, Result};

use crate::parquet_error::parquet_err;
use crate::rle_codes;
use crate::spliced::{serialize_pages, EncodedChunk};

/// The PLAIN encoding of each dictionary value in the column's physical type (`None` for a
/// null value), or `None` when this value type is left to arrow-rs (it would store it
/// differently, e.g. seconds as milliseconds).
fn plain_values(values: &dyn Array, physical: PhysicalType) -> Option<Vec<Option<Vec<u8>>>> {
    let nulls = values.logical_nulls();
    let valid = |i: usize| nulls.as_ref().is_none_or(|n| n.is_valid(i));
    let fixed = |bytes: Vec<Vec<u8>>| -> Vec<Option<Vec<u8>>> {
        bytes
            .into_iter()
            .enumerate()
            .map(|(i, b)| valid(i).then_some(b))
            .collect()
    };
    let dt = values.data_type();
    Some(match physical {
        PhysicalType::BYTE_ARRAY => {
            if !matches!(
                dt,
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary
            ) {
                return None;
            }
            let b = arrow_cast::cast(values, &DataType::LargeBinary).ok()?;
            b.as_binary::<i64>()
                .iter()
                .map(|v| {
                    v.and_then(|v| {
                        let len = u32::try_from(v.len()).ok()?;
                        let mut out = Vec::with_capacity(4 + v.len());
                        out.extend_from_slice(&len.to_le_bytes());
                        out.extend_from_slice(v);
                        Some(out)
                    })
                })
                .collect()
        }
        PhysicalType::INT32 => {
            let ints: Vec<i32> = match dt {
                DataType::UInt32 => values
                    .as_primitive::<UInt32Type>()
                    .values()
                    .iter()
                    .map(|&v| v as i32) // Parquet stores uint32 in int32's bits
                    .collect(),
                DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::UInt8
                | DataType::UInt16
                | DataType::Date32 => arrow_cast::cast(values, &DataType::Int32)
                    .ok()?
                    .as_primitive::<Int32Type>()
                    .values()
                    .to_vec(),
                _ => return None,
            };
            fixed(ints.iter().map(|v| v.to_le_bytes().to_vec()).collect())
        }
        PhysicalType::INT64 => {
            let ints: Vec<i64> = match dt {
                DataType::UInt64 => values
                    .as_primitive::<UInt64Type>()
                    .values()
                    .iter()
                    .map(|&v| v as i64) // Parquet stores uint64 in int64's bits
                    .collect(),
                DataType::Int64
                | DataType::Timestamp(
                    TimeUnit::Millisecond | TimeUnit::Microsecond | TimeUnit::Nanosecond,
                    _,
                )
                | DataType::Duration(_) => arrow_cast::cast(values, &DataType::Int64)
                    .ok()?
                    .as_primitive::<Int64Type>()
                    .values()
                    .to_vec(),
                _ => return None,
            };
            fixed(ints.iter().map(|v| v.to_le_bytes().to_vec()).collect())
        }
        PhysicalType::FLOAT if *dt == DataType::Float32 => fixed(
            values
                .as_primitive::<arrow_array::types::Float32Type>()
                .values()
                .iter()
                .map(|v| v.to_le_bytes().to_vec())
                .collect(),
        ),
        PhysicalType::DOUBLE if *dt == DataType::Float64 => fixed(
            values
                .as_primitive::<arrow_array::types::Float64Type>()
                .values()
                .iter()
                .map(|v| v.to_le_bytes().to_vec())
                .collect(),
        ),
        _ => return None,
    })
}

/// Whether a categorical column of this Arrow type is written by [`encode_chunk`]: a
/// dictionary whose values [`plain_values`] handles for the column's physical type.
pub(crate) fn writes_exactly(dt: &DataType, descr: &ColumnDescPtr) -> bool {
    match dt {
        DataType::Dictionary(_, v) => {
            descr.max_rep_level() == 0
                && plain_values(
                    arrow_array::new_empty_array(v).as_ref(),
                    descr.physical_type(),
                )
                .is_some()
        }
        _ => false,
    }
}

/// Categories in order and where each one is.
#[derive(Default)]
struct Categories {
    plain: Vec<Vec<u8>>,
    position: HashMap<Vec<u8>, u32>,
}

impl Categories {
    /// The position of `value`, appending it when new (pyarrow's dictionary unification).
    fn intern(&mut self, value: Vec<u8>) -> Result<u32> {
        if let Some(&p) = self.position.get(&value) {
            return Ok(p);
        }
        let p = u32::try_from(self.plain.len())
            .map_err(|_| Error::invalid_input("more than 2^32 categories"))?;
        self.plain.push(value.clone());
        self.position.insert(value, p);
        Ok(p)
    }
}

/// Number of bits of codes `0..n` (at least 1: readers differ on bit width 0).
fn bit_width(n: usize) -> u8 {
    let max = n.saturating_sub(1) as u64;
    (64 - max.leading_zeros()).max(1) as u8
}

/// One dictionary column chunk, fed dictionary arrays batch by batch: a PLAIN dictionary page
/// of the unified values (in order of the first array's dictionary, then values first seen
/// later, as pyarrow unifies), then RLE_DICTIONARY data pages of about `page_bytes`.
///
/// Two uses: a pandas categorical keeps every category, used or not, in order
/// ([`DictionaryChunk::categorical`]); a string column read as a dictionary
/// (`ReadOptions::dictionary_strings`) keeps only the values rows use, with the chunk's
/// statistics of those ([`DictionaryChunk::strings`]), as a writer interning each value would.
pub(crate) struct DictionaryChunk {
    descr: ColumnDescPtr,
    compression: Compression,
    page_bytes: usize,
    /// Keep every dictionary value (categoricals), or only those rows use.
    keep_unused: bool,
    /// Write min/max/null count statistics (used values only).
    statistics: bool,
    categories: Categories,
    /// The code of each row with a value, in row order.
    codes: Vec<u32>,
    /// Per row, whether it has a value; `None` while every row has one.
    defined: Option<Vec<bool>>,
    rows: usize,
    /// The last dictionary seen and its codes: the batches of one row group of the source
    /// share their dictionary, so it is looked up once.
    last: Option<Remap>,
}

/// A code not given yet: no row used that dictionary value so far.
const UNSEEN: u32 = u32::MAX;

/// The code of dictionary key `key` when a row used its value before (`None`: out of range,
/// a null value or not coded yet).
fn known_code(code: &[Option<u32>], key: Option<usize>) -> Option<u32> {
    match code.get(key?) {
        Some(&Some(c)) if c != UNSEEN => Some(c),
        _ => None,
    }
}

/// The codes of one dictionary's values in the chunk's unified values.
struct Remap {
    values: ArrayRef,
    /// Per value: `None` for a null value, `Some(UNSEEN)` until a row uses it, else its code.
    code: Vec<Option<u32>>,
    /// The PLAIN encoding of each value not interned yet.
    plain: Vec<Option<Vec<u8>>>,
}

/// Longest min/max value written in the statistics (arrow-rs's default truncation length):
/// with a longer one, min and max are left out (the null count stays).
const STATISTICS_MAX_VALUE: usize = 64;

impl DictionaryChunk {
    /// A pandas categorical column: every category in the dictionary page, no statistics.
    pub(crate) fn categorical(
        descr: ColumnDescPtr,
        compression: Compression,
        page_bytes: usize,
    ) -> Self {
        Self::new(descr, compression, page_bytes, true, false)
    }

    /// A string column fed as dictionaries: the used values only, statistics if `statistics`.
    pub(crate) fn strings(
        descr: ColumnDescPtr,
        compression: Compression,
        page_bytes: usize,
        statistics: bool,
    ) -> Self {
        Self::new(descr, compression, page_bytes, false, statistics)
    }

    fn new(
        descr: ColumnDescPtr,
        compression: Compression,
        page_bytes: usize,
        keep_unused: bool,
        statistics: bool,
    ) -> Self {
        DictionaryChunk {
            descr,
            compression,
            page_bytes,
            keep_unused,
            statistics,
            categories: Categories::default(),
            codes: Vec::new(),
            defined: None,
            rows: 0,
            last: None,
        }
    }

    /// Appends the rows of one dictionary array.
    pub(crate) fn push(&mut self, array: &ArrayRef) -> Result<()> {
        let dict = array
            .as_any_dictionary_opt()
            .ok_or_else(|| Error::mismatch("dictionary column is not a dictionary array"))?;
        let values = dict.values();
        let mut remap = match self.last.take() {
            Some(last) if Arc::ptr_eq(&last.values, values) => last,
            _ => self.remap_of(values)?,
        };
        let keys = dict.keys();
        let outcome = match keys.data_type() {
            DataType::Int8 => self.push_keys(keys.as_primitive::<Int8Type>(), &mut remap),
            DataType::Int16 => self.push_keys(keys.as_primitive::<Int16Type>(), &mut remap),
            DataType::Int32 => self.push_keys(keys.as_primitive::<Int32Type>(), &mut remap),
            DataType::Int64 => self.push_keys(keys.as_primitive::<Int64Type>(), &mut remap),
            DataType::UInt8 => self.push_keys(keys.as_primitive::<UInt8Type>(), &mut remap),
            DataType::UInt16 => self.push_keys(keys.as_primitive::<UInt16Type>(), &mut remap),
            DataType::UInt32 => self.push_keys(keys.as_primitive::<UInt32Type>(), &mut remap),
            DataType::UInt64 => self.push_keys(keys.as_primitive::<UInt64Type>(), &mut remap),
            other => Err(Error::unsupported(format!(
                "dictionary keys of type {other}"
            ))),
        };
        self.last = Some(remap);
        outcome
    }

    /// The codes of a new dictionary's values: all interned now for a categorical (its
    /// categories in order), else interned as rows use them.
    fn remap_of(&mut self, values: &ArrayRef) -> Result<Remap> {
        let mut plain = plain_values(values.as_ref(), self.descr.physical_type())
            .ok_or_else(|| Error::unsupported("dictionary values of this type"))?;
        let mut code = Vec::with_capacity(plain.len());
        for slot in &mut plain {
            code.push(match slot.take() {
                None => None,
                Some(v) if self.keep_unused => Some(self.categories.intern(v)?),
                Some(v) => {
                    *slot = Some(v);
                    Some(UNSEEN)
                }
            });
        }
        Ok(Remap {
            values: values.clone(),
            code,
            plain,
        })
    }

    /// Appends the rows of keys `keys` into the dictionary of `remap`: the codes, written as
    /// they are (no widening, no vector of options).
    fn push_keys<K: ArrowPrimitiveType>(
        &mut self,
        keys: &PrimitiveArray<K>,
        remap: &mut Remap,
    ) -> Result<()> {
        self.codes.reserve(keys.len());
        let nulls = keys.nulls();
        let values = keys.values();
        let mut done = 0;
        if nulls.is_none() {
            // the common case: every row has a value; runs of rows whose code is known are
            // copied in one go, a row with a value not coded yet takes the general path
            while done < values.len() && self.defined.is_none() {
                let rest = values.get(done..).unwrap_or_default();
                let before = self.codes.len();
                self.codes.extend(
                    rest.iter()
                        .map_while(|k| known_code(&remap.code, k.to_usize())),
                );
                let copied = self.codes.len() - before;
                self.rows += copied;
                done += copied;
                if let Some(k) = values.get(done) {
                    let code = self.code_of(k.to_usize(), remap)?;
                    self.push_row(code);
                    done += 1;
                }
            }
        }
        for (i, k) in values.iter().enumerate().skip(done) {
            let code = match nulls.is_none_or(|n| n.is_valid(i)) {
                true => self.code_of(k.to_usize(), remap)?,
                false => None,
            };
            self.push_row(code);
        }
        Ok(())
    }

    /// The code of dictionary key `key` (`None`: a null value), interning its value when it
    /// is the first row using it.
    fn code_of(&mut self, key: Option<usize>, remap: &mut Remap) -> Result<Option<u32>> {
        let out_of_range = || Error::format(format!("dictionary key {key:?} out of range"));
        let k = key.ok_or_else(out_of_range)?;
        match remap.code.get(k).copied().ok_or_else(out_of_range)? {
            Some(UNSEEN) => {
                let value = remap
                    .plain
                    .get_mut(k)
                    .and_then(Option::take)
                    .ok_or_else(|| Error::format("internal: a dictionary value interned twice"))?;
                let code = self.categories.intern(value)?;
                if let Some(slot) = remap.code.get_mut(k) {
                    *slot = Some(code);
                }
                Ok(Some(code))
            }
            code => Ok(code),
        }
    }

    fn push_row(&mut self, code: Option<u32>) {
        match code {
            Some(c) => self.codes.push(c),
            None if self.defined.is_none() => self.defined = Some(vec![true; self.rows]),
            None => {}
        }
        if let Some(defined) = &mut self.defined {
            defined.push(code.is_some());
        }
        self.rows += 1;
    }

    /// The chunk's statistics: min and max of the used values (byte order, as Parquet orders
    /// UTF-8) and the missing rows.
    fn statistics(&self) -> Option<Statistics> {
        if !self.statistics {
            return None;
        }
        let nulls = (self.rows - self.codes.len()) as u64;
        // a PLAIN byte array is its length (4 bytes) and its bytes
        let bytes = |plain: &Vec<u8>| plain.get(4..).map(<[u8]>::to_vec).unwrap_or_default();
        let min = self.categories.plain.iter().map(bytes).min();
        let max = self.categories.plain.iter().map(bytes).max();
        let (min, max) = match (min, max) {
            (Some(lo), Some(hi))
                if lo.len() <= STATISTICS_MAX_VALUE && hi.len() <= STATISTICS_MAX_VALUE =>
            {
                (Some(ByteArray::from(lo)), Some(ByteArray::from(hi)))
            }
            _ => (None, None),
        };
        Some(Statistics::new(min, max, None, Some(nulls), false))
    }

    /// The encoded column chunk: the dictionary page, then the data pages.
    pub(crate) fn finish(self) -> Result<EncodedChunk> {
        let descr = &self.descr;
        let nullable = descr.max_def_level() > 0;
        if !nullable && self.defined.is_some() {
            return Err(Error::invalid_input(format!(
                "column {} is not nullable but has missing values",
                descr.name()
            )));
        }
        let compression = self.compression;
        let mut codec = create_codec(compression, &CodecOptionsBuilder::default().build())
            .map_err(parquet_err)?;
        let mut compress = |raw: Vec<u8>| -> Result<(Bytes, usize)> {
            let len = raw.len();
            match codec.as_mut() {
                None => Ok((Bytes::from(raw), len)),
                Some(c) => {
                    let mut out = Vec::new();
                    c.compress(&raw, &mut out).map_err(parquet_err)?;
                    Ok((Bytes::from(out), len))
                }
            }
        };

        let mut pages = Vec::new();
        let n_categories = self.categories.plain.len();
        let (buf, raw_len) = compress(self.categories.plain.concat())?;
        pages.push(CompressedPage::new(
            Page::DictionaryPage {
                buf,
                num_values: u32::try_from(n_categories)
                    .map_err(|_| Error::invalid_input("too many categories"))?,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            },
            raw_len,
        ));
        let width = bit_width(n_categories);
        let rows_per_page = (self.page_bytes.saturating_mul(8) / usize::from(width)).max(1);
        let mut next_code = 0usize;
        for first in (0..self.rows).step_by(rows_per_page) {
            let rows = rows_per_page.min(self.rows - first);
            let mut raw = Vec::new();
            let present = match &self.defined {
                Some(defined) if nullable => {
                    let page = defined.get(first..first + rows).unwrap_or_default();
                    let levels =
                        rle_codes::by_value(1, page.iter().map(|&d| u64::from(d)), page.len());
                    let len = u32::try_from(levels.len())
                        .map_err(|_| Error::invalid_input("definition levels over 4 GiB"))?;
                    raw.extend_from_slice(&len.to_le_bytes());
                    raw.extend_from_slice(&levels);
                    page.iter().filter(|&&d| d).count()
                }
                _ if nullable => {
                    let levels = rle_codes::all_ones(rows);
                    let len = u32::try_from(levels.len())
                        .map_err(|_| Error::invalid_input("definition levels over 4 GiB"))?;
                    raw.extend_from_slice(&len.to_le_bytes());
                    raw.extend_from_slice(&levels);
                    rows
                }
                _ => rows,
            };
            let codes = self
                .codes
                .get(next_code..next_code + present)
                .ok_or_else(|| Error::format("internal: fewer codes than rows with a value"))?;
            next_code += present;
            raw.push(width);
            raw.extend(rle_codes::encode(width, codes));
            let (buf, raw_len) = compress(raw)?;
            pages.push(CompressedPage::new(
                Page::DataPage {
                    buf,
                    num_values: u32::try_from(rows)
                        .map_err(|_| Error::invalid_input("page of over 2^32 rows"))?,
                    encoding: Encoding::RLE_DICTIONARY,
                    def_level_encoding: Encoding::RLE,
                    rep_level_encoding: Encoding::RLE,
                    statistics: None,
                },
                raw_len,
            ));
        }
        let statistics = self.statistics();
        splice(descr, compression, pages, self.rows as u64, statistics)
    }
}

/// The pages serialized as one column chunk, with its metadata.
fn splice(
    descr: &ColumnDescPtr,
    compression: Compression,
    pages: Vec<CompressedPage>,
    rows: u64,
    statistics: Option<Statistics>,
) -> Result<EncodedChunk> {
    let (bytes, specs) = serialize_pages(pages)?;
    let sum = |f: fn(&PageWriteSpec) -> u64| specs.iter().map(f).sum::<u64>();
    let compressed = sum(|s| s.compressed_size as u64);
    let uncompressed = sum(|s| s.uncompressed_size as u64);
    let data_offset = specs.get(1).map_or(0, |s| s.offset);
    let as_i64 = |v: u64| i64::try_from(v).map_err(|_| Error::invalid_input("chunk over 2^63"));
    let metadata = ColumnChunkMetaData::builder(descr.clone())
        .set_encodings(vec![
            Encoding::PLAIN,
            Encoding::RLE,
            Encoding::RLE_DICTIONARY,
        ])
        .set_compression(compression)
        .set_num_values(as_i64(rows)?)
        .set_total_compressed_size(as_i64(compressed)?)
        .set_total_uncompressed_size(as_i64(uncompressed)?)
        .set_dictionary_page_offset(Some(0))
        .set_data_page_offset(as_i64(data_offset)?);
    let metadata = match statistics {
        Some(s) => metadata.set_statistics(s),
        None => metadata,
    }
    .build()
    .map_err(parquet_err)?;
    Ok(EncodedChunk {
        bytes,
        close: ColumnCloseResult {
            bytes_written: compressed,
            rows_written: rows,
            metadata,
            bloom_filter: None,
            column_index: None,
            offset_index: None,
        },
    })
}

/// A [`ChunkReader`] over a borrowed one, so the dictionary pages can be read before the
/// input moves into arrow-rs's reader.
struct Borrowed<'a, R>(&'a R);

impl<R: Length> Length for Borrowed<'_, R> {
    fn len(&self) -> u64 {
        self.0.len()
    }
}

impl<R: ChunkReader> ChunkReader for Borrowed<'_, R> {
    type T = R::T;
    fn get_read(&self, start: u64) -> parquet::errors::Result<R::T> {
        self.0.get_read(start)
    }
    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.0.get_bytes(start, length)
    }
}

/// Decodes a PLAIN dictionary page into an Arrow array of `value_type`; `None` when the stored
/// representation does not map one to one onto it (another time unit, an unknown type).
fn decode_plain(
    buf: &[u8],
    n: usize,
    descr: &ColumnDescPtr,
    value_type: &DataType,
) -> Result<Option<ArrayRef>> {
    let short = || Error::truncated("dictionary page shorter than its values");
    let fixed = |width: usize| -> Result<Vec<&[u8]>> {
        let need = n.checked_mul(width).ok_or_else(short)?;
        let bytes = buf.get(..need).ok_or_else(short)?;
        Ok(bytes.chunks_exact(width).collect())
    };
    let physical: ArrayRef = match descr.physical_type() {
        PhysicalType::BYTE_ARRAY => {
            let mut values: Vec<&[u8]> = Vec::new();
            let mut rest = buf;
            for _ in 0..n {
                let (len, tail) = rest.split_at_checked(4).ok_or_else(short)?;
                let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
                let (v, tail) = tail.split_at_checked(len).ok_or_else(short)?;
                values.push(v);
                rest = tail;
            }
            Arc::new(BinaryArray::from_vec(values))
        }
        PhysicalType::INT32 => Arc::new(Int32Array::from_iter_values(
            fixed(4)?
                .into_iter()
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        )),
        PhysicalType::INT64 => {
            Arc::new(Int64Array::from_iter_values(fixed(8)?.into_iter().map(
                |b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            )))
        }
        PhysicalType::FLOAT => Arc::new(Float32Array::from_iter_values(
            fixed(4)?
                .into_iter()
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        )),
        PhysicalType::DOUBLE => {
            Arc::new(Float64Array::from_iter_values(fixed(8)?.into_iter().map(
                |b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            )))
        }
        _ => return Ok(None),
    };
    // time values are kept only when stored in the unit Arrow reads them in
    if let DataType::Timestamp(unit, _) = value_type {
        let stored = match descr.logical_type_ref() {
            Some(LogicalType::Timestamp(t)) => Some(t.unit),
            _ => None,
        };
        let same = matches!(
            (unit, stored),
            (
                TimeUnit::Millisecond,
                Some(parquet::basic::TimeUnit::MILLIS)
            ) | (
                TimeUnit::Microsecond,
                Some(parquet::basic::TimeUnit::MICROS)
            ) | (TimeUnit::Nanosecond, Some(parquet::basic::TimeUnit::NANOS))
        );
        if !same {
            return Ok(None);
        }
    }
    let array = match (physical.data_type(), value_type) {
        (DataType::Int32, DataType::UInt32) => Arc::new(
            physical
                .as_primitive::<Int32Type>()
                .unary::<_, UInt32Type>(|v| v as u32),
        ) as ArrayRef,
        (DataType::Int64, DataType::UInt64) => Arc::new(
            physical
                .as_primitive::<Int64Type>()
                .unary::<_, UInt64Type>(|v| v as u64),
        ),
        (_, DataType::Duration(_) | DataType::Time32(_) | DataType::Time64(_)) => return Ok(None),
        _ => {
            let strict = CastOptions {
                safe: false,
                ..Default::default()
            };
            match arrow_cast::cast_with_options(&physical, value_type, &strict) {
                Ok(a) => a,
                Err(_) => return Ok(None),
            }
        }
    };
    Ok(Some(array))
}

/// The categories of the categorical (dictionary) fields of a file, read from the dictionary
/// page of every row group and unified like pyarrow does, keyed by field position. Fields
/// whose pages cannot be mapped onto the Arrow type are left out (arrow-rs's reading stands).
pub(crate) fn read_categories<R: ChunkReader>(
    input: &R,
    meta: &ParquetMetaData,
    fields: &[(usize, usize, DataType)],
) -> Result<HashMap<usize, ArrayRef>> {
    let mut out = HashMap::new();
    let borrowed = Arc::new(Borrowed(input));
    'fields: for (field, leaf, value_type) in fields {
        let mut parts: Vec<ArrayRef> = Vec::new();
        for rg in meta.row_groups() {
            let Some(chunk) = rg.columns().get(*leaf) else {
                continue 'fields;
            };
            if chunk.dictionary_page_offset().is_none() && !has_dictionary_first(chunk) {
                continue;
            }
            let rows = usize::try_from(rg.num_rows()).unwrap_or(0);
            let mut pages = SerializedPageReader::new(borrowed.clone(), chunk, rows, None)
                .map_err(parquet_err)?;
            if let Some(Page::DictionaryPage {
                buf, num_values, ..
            }) = pages.get_next_page().map_err(parquet_err)?
            {
                match decode_plain(
                    &buf,
                    num_values as usize,
                    &chunk.column_descr_ptr(),
                    value_type,
                )? {
                    Some(a) => parts.push(a),
                    None => continue 'fields,
                }
            }
        }
        if parts.is_empty() {
            continue;
        }
        let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
        let all = arrow_select::concat::concat(&refs)
            .map_err(|e| Error::format(format!("categories: {e}")))?;
        out.insert(*field, unique_in_order(&all, chunk_physical(meta, *leaf))?);
    }
    Ok(out)
}

pub(crate) fn has_dictionary_first(chunk: &ColumnChunkMetaData) -> bool {
    chunk
        .encodings()
        .any(|e| matches!(e, Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY))
}

/// Whether every data page of the chunk is dictionary-encoded, as far as the footer tells:
/// by its page encoding statistics when it has them (a chunk whose dictionary overflowed has
/// PLAIN data pages too), else by a dictionary among its encodings.
pub(crate) fn all_pages_dictionary(chunk: &ColumnChunkMetaData) -> bool {
    let dictionary =
        |e: Encoding| matches!(e, Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY);
    if !has_dictionary_first(chunk) {
        return false;
    }
    if let Some(mask) = chunk.page_encoding_stats_mask() {
        return mask.is_only(Encoding::PLAIN_DICTIONARY) || mask.is_only(Encoding::RLE_DICTIONARY);
    }
    match chunk.page_encoding_stats() {
        Some(stats) => stats
            .iter()
            .filter(|s| matches!(s.page_type, PageType::DATA_PAGE | PageType::DATA_PAGE_V2))
            .all(|s| dictionary(s.encoding)),
        None => true,
    }
}

fn chunk_physical(meta: &ParquetMetaData, leaf: usize) -> PhysicalType {
    meta.file_metadata()
        .schema_descr()
        .column(leaf)
        .physical_type()
}

/// `values` without repeats, first occurrences in order.
fn unique_in_order(values: &ArrayRef, physical: PhysicalType) -> Result<ArrayRef> {
    let plain = plain_values(values.as_ref(), physical)
        .ok_or_else(|| Error::unsupported("categories of this type"))?;
    let mut seen = Categories::default();
    let mut keep = Vec::new();
    for (i, v) in plain.into_iter().enumerate() {
        if let Some(v) = v {
            let before = seen.plain.len();
            if seen.intern(v)? as usize == before {
                keep.push(i as u64);
            }
        }
    }
    if keep.len() == values.len() {
        return Ok(values.clone());
    }
    arrow_select::take::take(values.as_ref(), &arrow_array::UInt64Array::from(keep), None)
        .map_err(|e| Error::format(format!("categories: {e}")))
}

/// Gives the categorical columns of `batch` the file's categories (`categories`, by field
/// position): same values, codes into those categories. A column whose values are not all
/// among them is left as read.
pub(crate) fn restore_categories(
    batch: RecordBatch,
    categories: &HashMap<usize, ArrayRef>,
    physical: &HashMap<usize, PhysicalType>,
) -> Result<RecordBatch> {
    if physical.is_empty() {
        return Ok(batch);
    }
    let mut columns = batch.columns().to_vec();
    for (&pos, &phys) in physical {
        let Some(col) = columns.get(pos) else {
            continue;
        };
        let fixed = match categories.get(&pos) {
            Some(cats) => recode(col, cats, phys)?,
            // no dictionary pages: the categories are the values used, as pyarrow reads them
            None => drop_unreferenced(col)?,
        };
        if let Some(fixed) = fixed {
            columns[pos] = fixed;
        }
    }
    RecordBatch::try_new(batch.schema(), columns)
        .map_err(|e| Error::format(format!("categorical columns: {e}")))
}

/// A dictionary array without the values no row refers to (arrow-rs leaves one for nulls when
/// it dictionary-encodes plain pages); `None` when every value is used.
fn drop_unreferenced(col: &ArrayRef) -> Result<Option<ArrayRef>> {
    let Some(dict) = col.as_any_dictionary_opt() else {
        return Ok(None);
    };
    let keys = arrow_cast::cast(dict.keys(), &DataType::Int64)
        .map_err(|e| Error::mismatch(format!("dictionary keys: {e}")))?;
    let keys = keys.as_primitive::<Int64Type>();
    let mut used = vec![false; dict.values().len()];
    for k in keys.iter().flatten() {
        if let Some(u) = usize::try_from(k).ok().and_then(|k| used.get_mut(k)) {
            *u = true;
        }
    }
    if used.iter().all(|u| *u) {
        return Ok(None);
    }
    let mut new_code = Vec::with_capacity(used.len());
    let mut keep = Vec::new();
    for (i, u) in used.iter().enumerate() {
        new_code.push(keep.len() as i64);
        if *u {
            keep.push(i as u64);
        }
    }
    let values = arrow_select::take::take(
        dict.values().as_ref(),
        &arrow_array::UInt64Array::from(keep),
        None,
    )
    .map_err(|e| Error::format(format!("categories: {e}")))?;
    let new_keys: Int64Array = keys
        .iter()
        .map(|k| {
            k.and_then(|k| {
                usize::try_from(k)
                    .ok()
                    .and_then(|k| new_code.get(k).copied())
            })
        })
        .collect();
    let pruned = DictionaryArray::try_new(new_keys, values)
        .map_err(|e| Error::format(format!("categorical column: {e}")))?;
    arrow_cast::cast(&pruned, col.data_type())
        .map(Some)
        .map_err(|e| Error::mismatch(format!("categorical codes: {e}")))
}

fn recode(col: &ArrayRef, cats: &ArrayRef, physical: PhysicalType) -> Result<Option<ArrayRef>> {
    let Some(dict) = col.as_any_dictionary_opt() else {
        return Ok(None);
    };
    if Arc::ptr_eq(dict.values(), cats) {
        return Ok(None);
    }
    if dict.values().to_data() == cats.to_data() {
        // the same categories: share one array, so that concatenating batches keeps them
        return Ok(Some(dict.with_values(cats.clone())));
    }
    let (Some(old), Some(new)) = (
        plain_values(dict.values().as_ref(), physical),
        plain_values(cats.as_ref(), physical),
    ) else {
        return Ok(None);
    };
    let position: HashMap<Vec<u8>, i64> = new
        .into_iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (v, i as i64)))
        .collect();
    // per value of the batch's dictionary: Ok(code), Ok(None) for a null value, Err(()) for a
    // value the dictionary pages do not have (arrow-rs may leave unreferenced ones)
    let remap: Vec<std::result::Result<Option<i64>, ()>> = old
        .into_iter()
        .map(|v| match v {
            Some(v) => position.get(&v).copied().map(Some).ok_or(()),
            None => Ok(None),
        })
        .collect();
    // The keys arrow-rs gives for polars' and pyarrow's files, remapped in their own type.
    if let Some(d) = col.as_dictionary_opt::<UInt32Type>() {
        if let Some(done) = recode_keys(d, &remap, cats)? {
            return Ok(Some(done));
        }
    }
    if let Some(d) = col.as_dictionary_opt::<Int32Type>() {
        if let Some(done) = recode_keys(d, &remap, cats)? {
            return Ok(Some(done));
        }
    }
    let keys = arrow_cast::cast(dict.keys(), &DataType::Int64)
        .map_err(|e| Error::mismatch(format!("dictionary keys: {e}")))?;
    let keys = keys.as_primitive::<Int64Type>();
    let mut nulls = Vec::with_capacity(keys.len());
    let mut new_keys = Vec::with_capacity(keys.len());
    for (i, &k) in keys.values().iter().enumerate() {
        let code = if keys.is_valid(i) {
            match usize::try_from(k).ok().and_then(|k| remap.get(k).copied()) {
                Some(Ok(code)) => code,
                // a row whose value is not among the categories: leave the column as read
                Some(Err(())) => return Ok(None),
                None => None,
            }
        } else {
            None
        };
        nulls.push(code.is_some());
        new_keys.push(code.unwrap_or(0));
    }
    let keys = Int64Array::new(new_keys.into(), Some(NullBuffer::from(nulls)));
    let recoded = DictionaryArray::try_new(keys, cats.clone())
        .map_err(|e| Error::format(format!("categorical column: {e}")))?;
    let back = arrow_cast::cast(&recoded, col.data_type())
        .map_err(|e| Error::mismatch(format!("categorical codes: {e}")))?;
    Ok(Some(back))
}

/// [`recode`] for keys of type `K` when every value of the batch's dictionary is a category
/// (no null values) and every code fits `K`: new keys of the same type, the batch's nulls
/// kept, no widening to i64 and back. `None` when it does not apply (or a key is out of range:
/// the general path then decides).
fn recode_keys<K: arrow_array::types::ArrowDictionaryKeyType>(
    dict: &DictionaryArray<K>,
    remap: &[std::result::Result<Option<i64>, ()>],
    cats: &ArrayRef,
) -> Result<Option<ArrayRef>>
where
    K::Native: TryFrom<i64> + TryInto<usize>,
{
    if cats.data_type() != dict.values().data_type() {
        return Ok(None);
    }
    let Some(table) = remap
        .iter()
        .map(|r| match r {
            Ok(Some(code)) => K::Native::try_from(*code).ok(),
            _ => None,
        })
        .collect::<Option<Vec<K::Native>>>()
    else {
        return Ok(None);
    };
    let keys = dict.keys();
    let mut out = Vec::with_capacity(keys.len());
    for (i, &k) in keys.values().iter().enumerate() {
        let code = match k.try_into().ok().and_then(|k: usize| table.get(k)) {
            Some(&code) => code,
            // a null row's key may be anything
            None if keys.is_null(i) => K::Native::default(),
            None => return Ok(None),
        };
        out.push(code);
    }
    let keys = PrimitiveArray::<K>::new(out.into(), keys.nulls().cloned());
    DictionaryArray::try_new(keys, cats.clone())
        .map(|a| Some(Arc::new(a) as ArrayRef))
        .map_err(|e| Error::format(format!("categorical column: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_widths() {
        assert_eq!(bit_width(0), 1);
        assert_eq!(bit_width(1), 1);
        assert_eq!(bit_width(2), 1);
        assert_eq!(bit_width(3), 2);
        assert_eq!(bit_width(256), 8);
        assert_eq!(bit_width(257), 9);
    }

    #[test]
    fn unique_keeps_first_occurrences() {
        let a: ArrayRef = Arc::new(arrow_array::StringArray::from(vec![
            "b", "a", "b", "c", "a",
        ]));
        let u = unique_in_order(&a, PhysicalType::BYTE_ARRAY).unwrap();
        let u: Vec<_> = u.as_string::<i32>().iter().flatten().collect();
        assert_eq!(u, ["b", "a", "c"]);
    }

    #[test]
    fn truncated_dictionary_page_is_an_error() {
        let descr = parquet::schema::types::ColumnDescriptor::new(
            Arc::new(
                parquet::schema::types::Type::primitive_type_builder("c", PhysicalType::INT64)
                    .build()
                    .unwrap(),
            ),
            1,
            0,
            parquet::schema::types::ColumnPath::from("c"),
        );
        let descr = Arc::new(descr);
        let err = decode_plain(&[0; 12], 2, &descr, &DataType::Int64).unwrap_err();
        assert_eq!(err.kind(), sciio_core::ErrorKind::Truncated);
        let err = decode_plain(
            &[200, 0, 0, 0, 1],
            1,
            &{
                Arc::new(parquet::schema::types::ColumnDescriptor::new(
                    Arc::new(
                        parquet::schema::types::Type::primitive_type_builder(
                            "s",
                            PhysicalType::BYTE_ARRAY,
                        )
                        .build()
                        .unwrap(),
                    ),
                    1,
                    0,
                    parquet::schema::types::ColumnPath::from("s"),
                ))
            },
            &DataType::Utf8,
        )
        .unwrap_err();
        assert_eq!(err.kind(), sciio_core::ErrorKind::Truncated);
    }
}
