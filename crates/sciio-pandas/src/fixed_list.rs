//! Fixed-size list columns (PyTables/numpy subarray fields, `FixedSizeList<primitive, n>`)
//! written as Parquet LIST column chunks by sciio itself.
//!
//! arrow-rs writes such a column through its general nested path: `compute_leaves` builds a
//! repetition level (i16) per value, and the column writer RLE-encodes them value by value;
//! at 20 GB of `(i8, f8[8], S12)` rows that is 1.9 G levels and most of sciio's time. Here the
//! levels of a page of `k` whole lists are the same bytes for every page of `k` lists (the
//! repetition levels are periodic, `0, 1, .., 1`; the definition levels are one run of the
//! maximum), so they are encoded once per page size and copied; the values are the child's
//! buffer, written PLAIN. What a reader sees is what arrow-rs writes: the same Parquet schema
//! and `ARROW:schema` (the writer's), the values, chunk statistics computed by arrow-rs's rules
//! (NaN left out, a zero minimum written as -0.0 and a zero maximum as +0.0, null count),
//! level histograms, the offset index and column index when the writer properties ask for
//! them, pages of about the configured data page size (whole lists, at most the properties'
//! row count limit), the configured codec.
//!
//! Dictionary encoding, when the writer properties enable it for the column, as arrow-rs does
//! it: values are interned (keyed by their bits, with a one-multiply hash) in batches of lists
//! as arrow-rs takes them until the dictionary outgrows the dictionary page limit; those pages
//! are RLE_DICTIONARY after a PLAIN dictionary page, the rest of the chunk PLAIN. So the file
//! size stays arrow-rs's whether values repeat or not. (A column whose dictionary would outgrow
//! its page early in the row group is written without one, see
//! `parquet_io::list_dictionary_overflows`.)
//!
//! Pages are encoded, compressed and serialized as they are cut (the codes' bit width as the
//! dictionary stands then, as arrow-rs does), so a chunk in the making holds what arrow-rs's
//! writer would: its compressed pages and the open page's values. A piece with a null list or
//! a null value (never from PyTables or numpy) turns the chunk over to arrow-rs's writer: the
//! pages cut so far are decoded back one at a time and fed to it first, then the rest.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, FixedSizeListArray, PrimitiveArray};
use arrow_buffer::{ScalarBuffer, ToByteSlice};
use arrow_schema::{DataType, FieldRef};
use bytes::Bytes;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowColumnWriter};
use parquet::basic::{BoundaryOrder, Compression, Encoding, PageType};
use parquet::column::page::{CompressedPage, Page, PageWriteSpec};
use parquet::column::writer::ColumnCloseResult;
use parquet::compression::{create_codec, Codec, CodecOptionsBuilder};
use parquet::encodings::rle::{RleDecoder, RleEncoder};
use parquet::file::metadata::{
    ColumnChunkMetaData, ColumnIndexBuilder, LevelHistogram, OffsetIndexBuilder, PageEncodingStats,
};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::schema::types::ColumnDescPtr;

use sciio_core::{Error, Result};

use crate::parquet_error::parquet_err;
use crate::spliced::{serialize_page, ChunkBytes, EncodedChunk, SerializedPage};

std::thread_local! {
    /// Chunks encoded here by this thread (tests tell this encoder's files from arrow-rs's).
    static CHUNKS_ENCODED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Fixed-size list chunks this thread encoded with sciio's encoder (with one writer thread,
/// the writing thread): for tests.
#[doc(hidden)]
pub fn chunks_encoded_here() -> usize {
    CHUNKS_ENCODED.with(std::cell::Cell::get)
}

/// A fixed-size list column chunk's encoder (one per row group), for any supported child type.
pub(crate) trait ListChunkEncoder: Send {
    /// Appends the lists of one piece (a slice of the field's `FixedSizeListArray`).
    fn push(&mut self, array: &ArrayRef) -> Result<()>;
    /// The encoded chunk.
    fn finish(self: Box<Self>) -> Result<ListChunk>;
}

/// A closed fixed-size list chunk: encoded here, or by arrow-rs after a null turned it over.
pub(crate) enum ListChunk {
    Spliced(EncodedChunk),
    Arrow(ArrowColumnChunk),
}

/// Whether a field of this type, whose only leaf is `descr`, is written here: a top-level
/// non-empty fixed-size list of a supported primitive (booleans, bit-packed, and everything
/// else keep arrow-rs's path).
pub(crate) fn writes(data_type: &DataType, descr: &ColumnDescPtr) -> bool {
    match data_type {
        DataType::FixedSizeList(child, n) => {
            *n > 0
                && descr.max_rep_level() == 1
                && supported_child(child.data_type())
                && descr.physical_type() == expected_physical(child.data_type())
        }
        _ => false,
    }
}

fn supported_child(dt: &DataType) -> bool {
    dt.is_integer() || matches!(dt, DataType::Float32 | DataType::Float64)
}

fn expected_physical(dt: &DataType) -> parquet::basic::Type {
    use parquet::basic::Type as P;
    match dt {
        DataType::Float32 => P::FLOAT,
        DataType::Float64 => P::DOUBLE,
        DataType::Int64 | DataType::UInt64 => P::INT64,
        _ => P::INT32,
    }
}

/// The encoder of one chunk of the fixed-size list `field` (leaf `descr`), with the file's
/// writer properties; `arrow` is arrow-rs's writer for the same chunk, used after a null.
pub(crate) fn chunk_encoder(
    field: FieldRef,
    descr: ColumnDescPtr,
    props: &WriterProperties,
    arrow: Box<ArrowColumnWriter>,
) -> Result<Box<dyn ListChunkEncoder>> {
    let DataType::FixedSizeList(child, n) = field.data_type() else {
        return Err(Error::mismatch("internal: not a fixed-size list field"));
    };
    let n = usize::try_from(*n)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::mismatch("internal: an empty fixed-size list"))?;
    let path = descr.path().clone();
    let child = child.clone();
    let settings = Settings {
        child: child.clone(),
        n,
        compression: props.compression(&path),
        statistics: props.statistics_enabled(&path),
        offset_index: !props.offset_index_disabled(),
        page_bytes: props.column_data_page_size_limit(&path),
        page_rows: props.data_page_row_count_limit(),
        dictionary: props
            .dictionary_enabled(&path)
            .then(|| props.column_dictionary_page_size_limit(&path)),
        field,
        descr,
    };
    match child.data_type() {
        DataType::Float32 => FixedListChunk::<Float32Type>::boxed(settings, arrow),
        DataType::Float64 => FixedListChunk::<Float64Type>::boxed(settings, arrow),
        DataType::Int8 => FixedListChunk::<Int8Type>::boxed(settings, arrow),
        DataType::Int16 => FixedListChunk::<Int16Type>::boxed(settings, arrow),
        DataType::Int32 => FixedListChunk::<Int32Type>::boxed(settings, arrow),
        DataType::Int64 => FixedListChunk::<Int64Type>::boxed(settings, arrow),
        DataType::UInt8 => FixedListChunk::<UInt8Type>::boxed(settings, arrow),
        DataType::UInt16 => FixedListChunk::<UInt16Type>::boxed(settings, arrow),
        DataType::UInt32 => FixedListChunk::<UInt32Type>::boxed(settings, arrow),
        DataType::UInt64 => FixedListChunk::<UInt64Type>::boxed(settings, arrow),
        other => Err(Error::unsupported(format!(
            "internal: fixed-size lists of {other} are left to arrow-rs"
        ))),
    }
}

/// What a chunk is written with.
struct Settings {
    field: FieldRef,
    child: FieldRef,
    descr: ColumnDescPtr,
    /// Values per list.
    n: usize,
    compression: Compression,
    statistics: EnabledStatistics,
    offset_index: bool,
    page_bytes: usize,
    page_rows: usize,
    /// The dictionary page limit when a dictionary is tried: as arrow-rs, values are
    /// dictionary-encoded until the dictionary outgrows it, the rest PLAIN.
    dictionary: Option<usize>,
}

/// A child type as Parquet stores it: its physical value (8- and 16-bit integers widened to
/// INT32, unsigned ones in the signed type's bits) and the statistics of that type.
trait Child: ArrowPrimitiveType {
    /// The physical value type.
    type Physical: Copy;
    const WIDTH: usize;
    /// The PLAIN bytes of a value are its native bytes (not a widened 8- or 16-bit integer).
    const NATIVE_BYTES: bool;
    fn physical(v: Self::Native) -> Self::Physical;
    fn plain(v: Self::Physical, out: &mut Vec<u8>);
    /// The value of its PLAIN bytes (`WIDTH` of them).
    fn from_plain(bytes: &[u8]) -> Self::Native;
    /// Zero written as -0.0 (`negative`) or +0.0 for floats, as arrow-rs and the spec do.
    fn signed_zero(v: Self::Physical, _negative: bool) -> Self::Physical {
        v
    }
    fn statistics(s: ValueStatistics<Self::Physical>) -> Statistics;
    /// The value's bits, its dictionary key (-0.0 is not 0.0; NaN is a value).
    fn bits(v: Self::Native) -> u64;
}

macro_rules! int_child {
    ($arrow:ty, $phys:ty, $variant:ident) => {
        impl Child for $arrow {
            type Physical = $phys;
            const WIDTH: usize = std::mem::size_of::<$phys>();
            const NATIVE_BYTES: bool =
                std::mem::size_of::<<$arrow as ArrowPrimitiveType>::Native>() == Self::WIDTH;
            fn physical(v: Self::Native) -> $phys {
                // widening, or the same bits for an unsigned value (Parquet's unsigned ints)
                v as $phys
            }
            fn plain(v: $phys, out: &mut Vec<u8>) {
                out.extend_from_slice(&v.to_le_bytes());
            }
            fn from_plain(bytes: &[u8]) -> Self::Native {
                let mut le = [0; std::mem::size_of::<$phys>()];
                le.copy_from_slice(bytes);
                // narrowing undoes `physical`'s widening (or reinterprets the same bits)
                <$phys>::from_le_bytes(le) as Self::Native
            }
            fn statistics(s: ValueStatistics<$phys>) -> Statistics {
                Statistics::$variant(s)
            }
            fn bits(v: Self::Native) -> u64 {
                v as u64
            }
        }
    };
}

int_child!(Int8Type, i32, Int32);
int_child!(Int16Type, i32, Int32);
int_child!(Int32Type, i32, Int32);
int_child!(UInt8Type, i32, Int32);
int_child!(UInt16Type, i32, Int32);
int_child!(UInt32Type, i32, Int32);
int_child!(Int64Type, i64, Int64);
int_child!(UInt64Type, i64, Int64);

macro_rules! float_child {
    ($arrow:ty, $phys:ty, $variant:ident) => {
        impl Child for $arrow {
            type Physical = $phys;
            const WIDTH: usize = std::mem::size_of::<$phys>();
            const NATIVE_BYTES: bool = true;
            fn physical(v: $phys) -> $phys {
                v
            }
            fn plain(v: $phys, out: &mut Vec<u8>) {
                out.extend_from_slice(&v.to_le_bytes());
            }
            fn from_plain(bytes: &[u8]) -> Self::Native {
                let mut le = [0; std::mem::size_of::<$phys>()];
                le.copy_from_slice(bytes);
                // narrowing undoes `physical`'s widening (or reinterprets the same bits)
                <$phys>::from_le_bytes(le) as Self::Native
            }
            fn signed_zero(v: $phys, negative: bool) -> $phys {
                match (v == 0.0, negative) {
                    (true, true) => -0.0,
                    (true, false) => 0.0,
                    _ => v,
                }
            }
            fn statistics(s: ValueStatistics<$phys>) -> Statistics {
                Statistics::$variant(s)
            }
            fn bits(v: $phys) -> u64 {
                u64::from(v.to_bits())
            }
        }
    };
}

float_child!(Float32Type, f32, Float);
float_child!(Float64Type, f64, Double);

/// One chunk's lists: pages compressed and serialized as they are cut (the values of the open
/// page the only ones kept), or arrow-rs's writer after a null.
struct FixedListChunk<T: Child> {
    settings: Settings,
    /// Lists per page: as arrow-rs cuts them ([`lists_per_page`]).
    lists_per_page: usize,
    /// The data pages cut so far, as they go into the file.
    pages: Vec<SerializedPage>,
    /// The values of the page being filled.
    open: Vec<T::Native>,
    /// The dictionary while it is tried or was used.
    dictionary: Option<Dictionary<T>>,
    codec: Option<Box<dyn Codec>>,
    levels: Levels,
    index: PageIndex<T>,
    /// arrow-rs's writer for this chunk; it has the chunk once `fallen_back`.
    arrow: Box<ArrowColumnWriter>,
    fallen_back: bool,
}

impl<T: Child> FixedListChunk<T>
where
    T::Native: PartialOrd,
{
    fn boxed(
        settings: Settings,
        arrow: Box<ArrowColumnWriter>,
    ) -> Result<Box<dyn ListChunkEncoder>> {
        let list_bytes = settings.n.saturating_mul(T::WIDTH).max(1);
        let lists_per_page = lists_per_page(
            settings.n,
            list_bytes,
            settings.page_bytes,
            settings.page_rows,
        );
        let codec = create_codec(
            settings.compression,
            &CodecOptionsBuilder::default().build(),
        )
        .map_err(parquet_err)?;
        Ok(Box::new(FixedListChunk::<T> {
            lists_per_page,
            pages: Vec::new(),
            open: Vec::new(),
            dictionary: settings
                .dictionary
                .map(|limit| Dictionary::new(&settings, limit)),
            codec,
            levels: Levels::new(&settings.descr, settings.n),
            index: PageIndex::new(&settings.descr, settings.statistics, settings.offset_index),
            settings,
            arrow,
            fallen_back: false,
        }))
    }

    /// Appends the values of lists with no null, cutting pages of whole lists; while a
    /// dictionary is tried, in batches of lists as arrow-rs takes them, the dictionary's size
    /// checked after each (its page ends where it outgrows its limit).
    fn keep(&mut self, mut values: &[T::Native]) -> Result<()> {
        while !values.is_empty() {
            let coding = self.coding();
            let per_page = match (&self.dictionary, coding) {
                (Some(d), true) => d.lists_per_page,
                _ => self.lists_per_page,
            }
            .saturating_mul(self.settings.n);
            if self.open.capacity() < per_page {
                self.open.reserve_exact(per_page - self.open.len());
            }
            let mut take = (per_page - self.open.len()).min(values.len());
            let mut outgrown = false;
            if let (Some(d), true) = (self.dictionary.as_mut(), coding) {
                take = take.min(d.batch_values);
                d.intern(values.get(..take).unwrap_or_default());
                outgrown = d.outgrown();
            }
            let (now, later) = values.split_at(take);
            self.open.extend_from_slice(now);
            values = later;
            if self.open.len() == per_page || outgrown {
                self.cut_page(outgrown)?;
            }
        }
        Ok(())
    }

    /// Whether the lists coming are dictionary-encoded.
    fn coding(&self) -> bool {
        self.dictionary.as_ref().is_some_and(|d| !d.full)
    }

    /// Encodes, compresses and serializes the open page (dictionary codes while the
    /// dictionary is tried, else PLAIN values); `last_coded`: the dictionary takes no more.
    fn cut_page(&mut self, last_coded: bool) -> Result<()> {
        if self.open.is_empty() {
            return Ok(());
        }
        let n = self.settings.n;
        let lists = self.open.len() / n;
        let coding = self.coding();
        let prefix = self.levels.of(lists)?;
        let mut raw = Vec::with_capacity(prefix.len() + self.open.len() * T::WIDTH);
        raw.extend_from_slice(prefix);
        let encoding = match self.dictionary.as_mut().filter(|_| coding) {
            Some(d) => {
                // the codes' width as the dictionary stands now, as arrow-rs writes each page
                let width = code_bits(d.values.len());
                let codes = d.take_page(last_coded);
                raw.push(width);
                let mut enc =
                    RleEncoder::new(width, RleEncoder::max_buffer_size(width, codes.len()));
                for code in codes {
                    enc.put(u64::from(code));
                }
                raw.extend_from_slice(&enc.consume());
                Encoding::RLE_DICTIONARY
            }
            None => {
                plain_values::<T>(&self.open, &mut raw);
                Encoding::PLAIN
            }
        };
        let uncompressed = raw.len();
        let page = CompressedPage::new(
            Page::DataPage {
                buf: compress(self.codec.as_mut(), raw)?,
                num_values: u32::try_from(self.open.len())
                    .map_err(|_| Error::invalid_input("page of over 2^32 values"))?,
                encoding,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            },
            uncompressed,
        );
        self.pages.push(serialize_page(page)?);
        self.index.page(&self.open, lists);
        self.open.clear();
        Ok(())
    }

    /// Hands the chunk to arrow-rs: the lists of the pages cut so far first (decoded back
    /// from their pages, one page at a time), then the open page's.
    fn fall_back(&mut self) -> Result<()> {
        self.fallen_back = true;
        for page in std::mem::take(&mut self.pages) {
            let values = self.page_values(&page)?;
            self.write_values(values)?;
        }
        let open = std::mem::take(&mut self.open);
        self.write_values(open)
    }

    /// The values of a page cut here.
    fn page_values(&mut self, page: &SerializedPage) -> Result<Vec<T::Native>> {
        let body = page.body();
        let raw = match self.codec.as_mut() {
            None => body.to_vec(),
            Some(codec) => {
                let mut raw = Vec::with_capacity(page.raw_body);
                codec
                    .decompress(&body, &mut raw, Some(page.raw_body))
                    .map_err(parquet_err)?;
                raw
            }
        };
        let count = page.spec.num_values as usize;
        let skip = self.levels.of(count / self.settings.n)?.len();
        let data = raw
            .get(skip..)
            .ok_or_else(|| Error::format("internal: a page shorter than its levels"))?;
        if page.encoding != Encoding::RLE_DICTIONARY {
            return Ok(data.chunks_exact(T::WIDTH).map(T::from_plain).collect());
        }
        let (Some(d), Some((&width, codes))) = (self.dictionary.as_ref(), data.split_first())
        else {
            return Err(Error::format(
                "internal: a dictionary page without dictionary",
            ));
        };
        let mut decoder = RleDecoder::new(width);
        decoder
            .set_data(Bytes::copy_from_slice(codes))
            .map_err(parquet_err)?;
        let mut values = vec![T::Native::default(); count];
        let got = decoder
            .get_batch_with_dict(&d.values, &mut values, count)
            .map_err(parquet_err)?;
        if got != count {
            return Err(Error::format("internal: a page's codes cut short"));
        }
        Ok(values)
    }

    /// Writes values of whole lists with arrow-rs's writer.
    fn write_values(&mut self, values: Vec<T::Native>) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        let n = i32::try_from(self.settings.n)
            .map_err(|_| Error::invalid_input("fixed-size list longer than 2^31"))?;
        let values = PrimitiveArray::<T>::new(ScalarBuffer::from(values), None)
            .with_data_type(self.settings.child.data_type().clone());
        let list =
            FixedSizeListArray::try_new(self.settings.child.clone(), n, Arc::new(values), None)
                .map_err(|e| Error::format(format!("fixed-size list: {e}")))?;
        self.write_arrow(&(Arc::new(list) as ArrayRef))
    }

    fn write_arrow(&mut self, array: &ArrayRef) -> Result<()> {
        for leaf in compute_leaves(&self.settings.field, array).map_err(parquet_err)? {
            self.arrow.write(&leaf).map_err(parquet_err)?;
        }
        Ok(())
    }

    /// The chunk: the dictionary page (when a page was dictionary-encoded), then the pages.
    fn encode(mut self) -> Result<EncodedChunk> {
        self.cut_page(false)?;
        let dictionary = match self.dictionary.take().filter(|d| d.coded_pages > 0) {
            Some(d) => Some(self.dictionary_page(&d.values)?),
            None => None,
        };
        let pages = dictionary.into_iter().chain(self.pages);
        splice(&self.settings, pages, self.index)
    }

    fn dictionary_page(&mut self, values: &[T::Native]) -> Result<SerializedPage> {
        let mut raw = Vec::with_capacity(values.len() * T::WIDTH);
        plain_values::<T>(values, &mut raw);
        let uncompressed = raw.len();
        serialize_page(CompressedPage::new(
            Page::DictionaryPage {
                buf: compress(self.codec.as_mut(), raw)?,
                num_values: u32::try_from(values.len())
                    .map_err(|_| Error::invalid_input("dictionary of over 2^32 values"))?,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            },
            uncompressed,
        ))
    }
}

/// The PLAIN encoding of the values, appended to `out`.
fn plain_values<T: Child>(values: &[T::Native], out: &mut Vec<u8>) {
    if T::NATIVE_BYTES && cfg!(target_endian = "little") {
        // little-endian native values are their PLAIN encoding: one copy
        out.extend_from_slice(values.to_byte_slice());
    } else {
        for &v in values {
            T::plain(T::physical(v), out);
        }
    }
}

impl<T: Child> ListChunkEncoder for FixedListChunk<T>
where
    T::Native: PartialOrd,
{
    fn push(&mut self, array: &ArrayRef) -> Result<()> {
        if self.fallen_back {
            return self.write_arrow(array);
        }
        let list = array
            .as_fixed_size_list_opt()
            .ok_or_else(|| Error::mismatch("fixed-size list column is not a list array"))?;
        let child = list.values();
        if list.null_count() > 0 || child.null_count() > 0 {
            self.fall_back()?;
            return self.write_arrow(array);
        }
        if child.len() != list.len().saturating_mul(self.settings.n) {
            return Err(Error::format(format!(
                "fixed-size list of {} lists has {} values, not {} per list",
                list.len(),
                child.len(),
                self.settings.n
            )));
        }
        let values = child.as_primitive_opt::<T>().ok_or_else(|| {
            Error::mismatch(format!(
                "fixed-size list values of type {}, not as the schema says",
                child.data_type()
            ))
        })?;
        self.keep(values.values())
    }

    fn finish(self: Box<Self>) -> Result<ListChunk> {
        if self.fallen_back {
            return self
                .arrow
                .close()
                .map(ListChunk::Arrow)
                .map_err(parquet_err);
        }
        CHUNKS_ENCODED.with(|c| c.set(c.get() + 1));
        self.encode().map(ListChunk::Spliced)
    }
}

/// Levels arrow-rs's column writer takes at a time (parquet's default write batch size).
const WRITE_BATCH_LEVELS: usize = parquet::file::properties::DEFAULT_WRITE_BATCH_SIZE;

/// The lists of a data page as arrow-rs cuts them, so pages weigh what arrow-rs's do (tiny
/// page sizes included): it takes whole lists of [`WRITE_BATCH_LEVELS`] values or just over
/// at a time (when those values fit in `page_bytes`; else as many as fit, at least one, or just
/// over to end a list) and closes the page after the batch that brings its values to
/// `page_bytes`, or its lists to `page_rows`.
fn lists_per_page(n: usize, list_bytes: usize, page_bytes: usize, page_rows: usize) -> usize {
    let n = n.max(1);
    let value_bytes = (list_bytes / n).max(1);
    let batch_values = match WRITE_BATCH_LEVELS.saturating_mul(value_bytes) <= page_bytes {
        true => WRITE_BATCH_LEVELS,
        false => (page_bytes / value_bytes).max(1),
    };
    let batch = batch_values.div_ceil(n).max(1);
    let batch_bytes = batch.saturating_mul(list_bytes).max(1);
    let batches = page_bytes
        .div_ceil(batch_bytes)
        .min(page_rows.div_ceil(batch))
        .max(1);
    batches.saturating_mul(batch)
}

/// Bits of dictionary codes `0..n` (at least 1: readers differ on bit width 0).
fn code_bits(n: usize) -> u8 {
    let max = n.saturating_sub(1) as u64;
    (64 - max.leading_zeros()).max(1) as u8
}

/// A hasher for 64-bit keys (the dictionary's value bits): one multiply, where std's SipHash
/// would be most of the dictionary's time.
#[derive(Default)]
struct WordHasher(u64);

impl std::hash::Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        let x = (self.0 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 29);
    }
}

/// A chunk's dictionary while tried: its values in order of first appearance and the codes of
/// the dictionary-encoded pages.
struct Dictionary<T: Child> {
    limit: usize,
    full: bool,
    position: HashMap<u64, u32, std::hash::BuildHasherDefault<WordHasher>>,
    values: Vec<T::Native>,
    /// Dictionary-encoded pages cut.
    coded_pages: usize,
    /// Codes of the open page.
    open: Vec<u32>,
    /// Values interned at a time before checking the dictionary's size (arrow-rs's batch).
    batch_values: usize,
    /// Lists per dictionary-encoded page (codes weigh 4 bytes at most).
    lists_per_page: usize,
}

impl<T: Child> Dictionary<T> {
    fn new(s: &Settings, limit: usize) -> Self {
        let batch = WRITE_BATCH_LEVELS.div_ceil(s.n.max(1)).max(1);
        Dictionary {
            limit,
            full: false,
            position: HashMap::default(),
            values: Vec::new(),
            coded_pages: 0,
            open: Vec::new(),
            batch_values: batch.saturating_mul(s.n),
            lists_per_page: lists_per_page(s.n, s.n.saturating_mul(4), s.page_bytes, s.page_rows),
        }
    }

    fn intern(&mut self, values: &[T::Native]) {
        self.open.reserve(values.len());
        for &v in values {
            let next = self.values.len() as u32;
            let code = *self.position.entry(T::bits(v)).or_insert(next);
            if code == next {
                self.values.push(v);
            }
            self.open.push(code);
        }
    }

    /// Whether the dictionary page has outgrown its limit (PLAIN values).
    fn outgrown(&self) -> bool {
        self.values.len().saturating_mul(T::WIDTH) > self.limit
    }

    /// The codes of the open dictionary-encoded page, which ends; `last`: no more values are
    /// interned (the hash table is dropped).
    fn take_page(&mut self, last: bool) -> Vec<u32> {
        self.coded_pages += 1;
        if last {
            self.full = true;
            self.position = HashMap::default();
        }
        std::mem::take(&mut self.open)
    }
}

fn compress(codec: Option<&mut Box<dyn Codec>>, raw: Vec<u8>) -> Result<Bytes> {
    match codec {
        None => Ok(Bytes::from(raw)),
        Some(c) => {
            let mut out = Vec::with_capacity(raw.len());
            c.compress(&raw, &mut out).map_err(parquet_err)?;
            Ok(Bytes::from(out))
        }
    }
}

/// The repetition and definition levels of a data page of whole lists with no null (v1
/// pages: each RLE-encoded with its 4-byte length), encoded once per number of lists.
struct Levels {
    n: usize,
    max_rep: i16,
    max_def: i16,
    encoded: HashMap<usize, Vec<u8>>,
}

impl Levels {
    fn new(descr: &ColumnDescPtr, n: usize) -> Self {
        Levels {
            n,
            max_rep: descr.max_rep_level(),
            max_def: descr.max_def_level(),
            encoded: HashMap::new(),
        }
    }

    /// The level bytes of a page of `lists` lists.
    fn of(&mut self, lists: usize) -> Result<&[u8]> {
        if !self.encoded.contains_key(&lists) {
            let bytes = self.encode(lists)?;
            self.encoded.insert(lists, bytes);
        }
        self.encoded
            .get(&lists)
            .map(Vec::as_slice)
            .ok_or_else(|| Error::format("internal: levels not encoded"))
    }

    fn encode(&self, lists: usize) -> Result<Vec<u8>> {
        let values = lists.saturating_mul(self.n);
        let n = self.n;
        let mut out = Vec::new();
        if self.max_rep > 0 {
            // 0 starts each list, 1 continues it
            let reps = (0..values).map(|i| u64::from(i % n != 0));
            rle_with_length(self.max_rep, reps, values, &mut out)?;
        }
        if self.max_def > 0 {
            let defs = std::iter::repeat_n(self.max_def as u64, values);
            rle_with_length(self.max_def, defs, values, &mut out)?;
        }
        Ok(out)
    }
}

/// Bits of levels `0..=max` (as parquet's level encoder counts them).
fn level_bits(max: i16) -> u8 {
    (16 - (max as u16).leading_zeros()) as u8
}

fn rle_with_length(
    max: i16,
    levels: impl Iterator<Item = u64>,
    n: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    let bits = level_bits(max);
    let mut enc = RleEncoder::new(bits, RleEncoder::max_buffer_size(bits, n));
    for l in levels {
        enc.put(l);
    }
    let bytes = enc.consume();
    let len = u32::try_from(bytes.len())
        .map_err(|_| Error::invalid_input("levels of a page over 4 GiB"))?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&bytes);
    Ok(())
}

/// Statistics, level histograms and page index entries gathered page by page, as arrow-rs's
/// column writer does.
struct PageIndex<T: Child> {
    max_rep: i16,
    max_def: i16,
    statistics: EnabledStatistics,
    /// Chunk min and max (native order: the Parquet order of the type, unsigned included).
    min: Option<T::Native>,
    max: Option<T::Native>,
    column_index: ColumnIndexBuilder,
    offset_index: Option<OffsetIndexBuilder>,
    ascending: bool,
    descending: bool,
    last: Option<(T::Native, T::Native)>,
    rep_histogram: Option<LevelHistogram>,
    def_histogram: Option<LevelHistogram>,
    lists: u64,
}

impl<T: Child> PageIndex<T>
where
    T::Native: PartialOrd,
{
    fn new(descr: &ColumnDescPtr, statistics: EnabledStatistics, offset_index: bool) -> Self {
        let mut column_index = ColumnIndexBuilder::new(descr.physical_type());
        if statistics != EnabledStatistics::Page {
            column_index.to_invalid();
        }
        let histograms = statistics != EnabledStatistics::None;
        PageIndex {
            max_rep: descr.max_rep_level(),
            max_def: descr.max_def_level(),
            statistics,
            min: None,
            max: None,
            column_index,
            offset_index: offset_index.then(OffsetIndexBuilder::new),
            ascending: true,
            descending: true,
            last: None,
            rep_histogram: histograms
                .then(|| LevelHistogram::try_new(descr.max_rep_level()))
                .flatten(),
            def_histogram: histograms
                .then(|| LevelHistogram::try_new(descr.max_def_level()))
                .flatten(),
            lists: 0,
        }
    }

    /// The level histograms of a page of `lists` lists of `values` values.
    fn page_histograms(&self, lists: usize, values: usize) -> [Option<LevelHistogram>; 2] {
        let rep = LevelHistogram::try_new(self.max_rep).map(|mut h| {
            h.increment_by(0, lists as i64);
            h.increment_by(1, (values - lists) as i64);
            h
        });
        let def = LevelHistogram::try_new(self.max_def).map(|mut h| {
            h.increment_by(self.max_def, values as i64);
            h
        });
        [rep, def]
    }

    fn page(&mut self, values: &[T::Native], lists: usize) {
        self.lists += lists as u64;
        if let Some(o) = self.offset_index.as_mut() {
            o.append_row_count(lists as i64);
        }
        if self.statistics == EnabledStatistics::None {
            return;
        }
        let [rep, def] = self.page_histograms(lists, values.len());
        for (chunk, page) in [
            (&mut self.rep_histogram, &rep),
            (&mut self.def_histogram, &def),
        ] {
            if let (Some(c), Some(p)) = (chunk.as_mut(), page.as_ref()) {
                c.add(p);
            }
        }
        let Some((lo, hi)) = min_max(values) else {
            // only NaN: no page statistics, so arrow-rs writes no column index
            self.column_index.to_invalid();
            return;
        };
        if self.min.is_none_or(|m| m > lo) {
            self.min = Some(lo);
        }
        if self.max.is_none_or(|m| m < hi) {
            self.max = Some(hi);
        }
        if !self.column_index.valid() {
            return;
        }
        if let Some((last_lo, last_hi)) = self.last {
            if last_lo > lo || last_hi > hi {
                self.ascending = false;
            }
            if lo > last_lo || hi > last_hi {
                self.descending = false;
            }
        }
        self.last = Some((lo, hi));
        let (lo, hi) = physical_min_max::<T>(lo, hi);
        let bytes = |v: T::Physical| {
            let mut out = Vec::with_capacity(T::WIDTH);
            T::plain(v, &mut out);
            out
        };
        self.column_index.append(false, bytes(lo), bytes(hi), 0);
        self.column_index.append_histograms(&rep, &def);
    }

    fn chunk_statistics(&self, descr: &ColumnDescPtr) -> Option<Statistics> {
        if self.statistics == EnabledStatistics::None {
            return None;
        }
        let (min, max) = match (self.min, self.max) {
            (Some(lo), Some(hi)) => {
                let (lo, hi) = physical_min_max::<T>(lo, hi);
                (Some(lo), Some(hi))
            }
            _ => (None, None),
        };
        let stats = ValueStatistics::new(min, max, None, Some(0), false)
            .with_backwards_compatible_min_max(descr.sort_order().is_signed());
        Some(T::statistics(stats))
    }
}

/// Min and max of the values, NaN left out (`None`: no value but NaN).
fn min_max<V: Copy + PartialOrd>(values: &[V]) -> Option<(V, V)> {
    // NaN is the one value unordered with itself
    let mut iter = values
        .iter()
        .copied()
        .filter(|v| v.partial_cmp(v).is_some());
    let first = iter.next()?;
    Some(iter.fold((first, first), |(lo, hi), v| {
        (if v < lo { v } else { lo }, if v > hi { v } else { hi })
    }))
}

fn physical_min_max<T: Child>(lo: T::Native, hi: T::Native) -> (T::Physical, T::Physical) {
    (
        T::signed_zero(T::physical(lo), true),
        T::signed_zero(T::physical(hi), false),
    )
}

/// The pages serialized as one column chunk, with its metadata and page index.
fn splice<T: Child>(
    s: &Settings,
    pages: impl Iterator<Item = SerializedPage>,
    mut index: PageIndex<T>,
) -> Result<EncodedChunk>
where
    T::Native: PartialOrd,
{
    // (page type, encoding) runs, in order, as arrow-rs counts them
    let mut encoding_stats: Vec<PageEncodingStats> = Vec::new();
    let pages = pages.inspect(|p| {
        let page_type = p.spec.page_type;
        match encoding_stats.last_mut() {
            Some(last) if last.page_type == page_type && last.encoding == p.encoding => {
                last.count += 1
            }
            _ => encoding_stats.push(PageEncodingStats {
                page_type,
                encoding: p.encoding,
                count: 1,
            }),
        }
    });
    let (bytes, specs) = ChunkBytes::of_pages(pages);
    let dictionary = encoding_stats
        .first()
        .is_some_and(|e| e.page_type == PageType::DICTIONARY_PAGE);
    let as_i64 = |v: u64| i64::try_from(v).map_err(|_| Error::invalid_input("chunk over 2^63"));
    if let Some(o) = index.offset_index.as_mut() {
        for spec in specs
            .iter()
            .filter(|s| s.page_type != PageType::DICTIONARY_PAGE)
        {
            let size = i32::try_from(spec.compressed_size)
                .map_err(|_| Error::invalid_input("page over 2 GiB"))?;
            o.append_offset_and_size(as_i64(spec.offset)?, size);
        }
    }
    let sum = |f: fn(&PageWriteSpec) -> u64| specs.iter().map(f).sum::<u64>();
    let compressed = sum(|s| s.compressed_size as u64);
    let uncompressed = sum(|s| s.uncompressed_size as u64);
    let data_pages = || {
        specs
            .iter()
            .filter(|s| s.page_type != PageType::DICTIONARY_PAGE)
    };
    let values = data_pages().map(|s| u64::from(s.num_values)).sum::<u64>();
    let data_offset = data_pages().next().map_or(0, |s| s.offset);
    let mut encodings = vec![Encoding::PLAIN, Encoding::RLE];
    if dictionary {
        encodings.push(Encoding::RLE_DICTIONARY);
    }
    let mut metadata = ColumnChunkMetaData::builder(s.descr.clone())
        .set_encodings(encodings)
        .set_page_encoding_stats(encoding_stats)
        .set_compression(s.compression)
        .set_num_values(as_i64(values)?)
        .set_total_compressed_size(as_i64(compressed)?)
        .set_total_uncompressed_size(as_i64(uncompressed)?)
        .set_dictionary_page_offset(dictionary.then_some(0))
        .set_data_page_offset(as_i64(data_offset)?);
    if let Some(stats) = index.chunk_statistics(&s.descr) {
        metadata = metadata
            .set_statistics(stats)
            .set_repetition_level_histogram(index.rep_histogram.take())
            .set_definition_level_histogram(index.def_histogram.take());
    }
    let metadata = metadata.build().map_err(parquet_err)?;
    let column_index = match index.column_index.valid() {
        true => {
            let order = match (index.ascending, index.descending) {
                (true, _) => BoundaryOrder::ASCENDING,
                (false, true) => BoundaryOrder::DESCENDING,
                (false, false) => BoundaryOrder::UNORDERED,
            };
            index.column_index.set_boundary_order(order);
            Some(index.column_index.build().map_err(parquet_err)?)
        }
        false => None,
    };
    Ok(EncodedChunk {
        bytes,
        close: ColumnCloseResult {
            bytes_written: compressed,
            rows_written: index.lists,
            metadata,
            bloom_filter: None,
            column_index,
            offset_index: index.offset_index.map(OffsetIndexBuilder::build),
        },
    })
}
