//! pigz-style parallel deflate: the input is cut into blocks compressed independently on all
//! cores, each primed with the 32 KiB that precede it (so the ratio barely suffers) and ended
//! with a sync flush (so it stops on a byte boundary with no final-block bit). Concatenated in
//! order and followed by [`END_OF_STREAM`], the blocks form ONE valid raw deflate stream; their
//! CRC-32s combine into the member's.

use std::cell::RefCell;

use flate2::{Compress, FlushCompress};
use rayon::prelude::*;
use sciio_core::{Error, ErrorKind, Result};

/// Deflate's window: a block's back-references reach at most this far into the data before it.
pub(crate) const DICT_SIZE: usize = 32 << 10;

/// A final, empty, fixed-Huffman block (BFINAL=1, BTYPE=01, end-of-block code): it closes a
/// stream whose blocks all ended with a sync flush.
pub(crate) const END_OF_STREAM: [u8; 2] = [0x03, 0x00];

/// One compressed block with the CRC-32 and length of its uncompressed input.
#[derive(Debug)]
pub(crate) struct Block {
    pub(crate) deflated: Vec<u8>,
    pub(crate) crc32: u32,
    pub(crate) len: u64,
}

/// Compresses `input` as blocks of `block_size` bytes in parallel. `dict` is the (up to 32 KiB)
/// data that precedes `input` in the member, used as the first block's dictionary.
pub(crate) fn compress_blocks(
    input: &[u8],
    dict: &[u8],
    level: u32,
    block_size: usize,
) -> Result<Vec<Block>> {
    input
        .par_chunks(block_size.max(DICT_SIZE))
        .enumerate()
        .map(|(i, chunk)| {
            let start = i * block_size.max(DICT_SIZE);
            let dict = if i == 0 {
                dict
            } else {
                &input[start.saturating_sub(DICT_SIZE)..start]
            };
            compress_block(chunk, dict, level)
        })
        .collect()
}

/// Compresses one block, ending it with a sync flush.
pub(crate) fn compress_block(data: &[u8], dict: &[u8], level: u32) -> Result<Block> {
    if !dict.is_empty() {
        // A fresh state: zlib-rs's reset does not clear all that a dictionary set afterwards
        // meets, so a reused compressor's block depended on what the thread compressed before
        // (same data, other bytes from run to run). A block with a dictionary is a whole
        // block of a large stream, where a new state's cost does not show.
        let mut c = Compress::new(flate2::Compression::new(level.min(9)), false);
        return deflate_into(&mut c, data, dict);
    }
    thread_local! {
        // One compressor per thread, reset between blocks without a dictionary (output checked
        // the same as a fresh state's): a fresh zlib state costs ~300 KiB of allocation and
        // zeroing, which dominates when many small members are compressed.
        static COMPRESSOR: RefCell<Option<(u32, Compress)>> = const { RefCell::new(None) };
    }
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_some_and(|(l, _)| *l != level) {
            *slot = None;
        }
        let (_, c) = slot.get_or_insert_with(|| {
            (
                level,
                Compress::new(flate2::Compression::new(level.min(9)), false),
            )
        });
        c.reset();
        deflate_into(c, data, dict)
    })
}

fn deflate_into(c: &mut Compress, data: &[u8], dict: &[u8]) -> Result<Block> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        Error::new(ErrorKind::Io, format!("deflate {what} failed: {e}"))
    };
    let dict = &dict[dict.len().saturating_sub(DICT_SIZE)..];
    if !dict.is_empty() {
        c.set_dictionary(dict).map_err(|e| fail("dictionary", &e))?;
    }
    // Room for the deflate worst case (stored blocks: +5 bytes per 16 KiB) plus the flush marker.
    let mut out = Vec::with_capacity(data.len() + data.len() / 1000 + 64);
    let start_in = c.total_in();
    loop {
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity().max(4096));
        }
        let consumed = ((c.total_in() - start_in) as usize).min(data.len());
        c.compress_vec(&data[consumed..], &mut out, FlushCompress::Sync)
            .map_err(|e| fail("compression", &e))?;
        // zlib's rule: the flush is complete once all input is in and output room is left over.
        if (c.total_in() - start_in) as usize >= data.len() && out.len() < out.capacity() {
            break;
        }
    }
    Ok(Block {
        deflated: out,
        crc32: crc32fast::hash(data),
        len: data.len() as u64,
    })
}

/// The last `DICT_SIZE` bytes of `previous` followed by `data`.
pub(crate) fn next_dict(previous: &[u8], data: &[u8]) -> Vec<u8> {
    if data.len() >= DICT_SIZE {
        return data[data.len() - DICT_SIZE..].to_vec();
    }
    let keep = DICT_SIZE - data.len();
    let mut out = previous[previous.len().saturating_sub(keep)..].to_vec();
    out.extend_from_slice(data);
    out
}

/// A zlib stream (RFC 1950) of `input` deflated pigz-style on all cores: blocks of
/// `block_size` compressed in parallel (each primed with the 32 KiB before it) into one raw
/// deflate stream, between the zlib header and the Adler-32 of the whole input (combined from
/// the blocks' own). Any zlib reader inflates it; the size is within a fraction of a percent of
/// a one-thread stream at the same level.
pub fn zlib_parallel(input: &[u8], level: u32, block_size: usize) -> Result<Vec<u8>> {
    let block = block_size.max(DICT_SIZE);
    let (blocks, sums) = rayon::join(
        || compress_blocks(input, &[], level, block),
        || {
            input
                .par_chunks(block)
                .map(|c| (adler32(c), c.len() as u64))
                .collect::<Vec<_>>()
        },
    );
    let blocks = blocks?;
    let total: usize = blocks.iter().map(|b| b.deflated.len()).sum();
    let mut out = Vec::with_capacity(total + 8);
    out.extend_from_slice(&[0x78, 0x9C]);
    for b in &blocks {
        out.extend_from_slice(&b.deflated);
    }
    out.extend_from_slice(&END_OF_STREAM);
    let adler = sums
        .into_iter()
        .fold(1u32, |acc, (sum, len)| adler32_combine(acc, sum, len));
    out.extend_from_slice(&adler.to_be_bytes());
    Ok(out)
}

/// [`zlib_parallel`] fed piece by piece: the same stream, written to `out` a batch of blocks
/// at a time, so only a batch (and the 32 KiB before it) is held whatever the input's size.
#[derive(Debug)]
pub struct ZlibParallelWriter<W: std::io::Write> {
    out: W,
    level: u32,
    block: usize,
    /// The dictionary (the last bytes already compressed) followed by input not yet compressed.
    pending: Vec<u8>,
    /// How many bytes at the front of `pending` are dictionary only.
    dict_len: usize,
    adler: u32,
}

impl<W: std::io::Write> ZlibParallelWriter<W> {
    /// Starts a stream into `out` (the zlib header is written now).
    pub fn new(mut out: W, level: u32, block_size: usize) -> Result<Self> {
        out.write_all(&[0x78, 0x9C]).map_err(write_error)?;
        Ok(ZlibParallelWriter {
            out,
            level,
            block: block_size.max(DICT_SIZE),
            pending: Vec::new(),
            dict_len: 0,
            adler: 1,
        })
    }

    /// Blocks compressed together: a few per core.
    fn batch_blocks(&self) -> usize {
        rayon::current_num_threads().max(1) * 4
    }

    /// Adds `data` to the stream, compressing every full batch of blocks.
    pub fn write_all(&mut self, mut data: &[u8]) -> Result<()> {
        let batch = self.batch_blocks() * self.block;
        while !data.is_empty() {
            let room = batch - (self.pending.len() - self.dict_len);
            let take = room.min(data.len());
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.pending.len() - self.dict_len == batch {
                self.compress_pending()?;
            }
        }
        Ok(())
    }

    /// Compresses the input held (whole blocks, the last one shorter only at the end) and
    /// keeps its last 32 KiB as the next dictionary.
    fn compress_pending(&mut self) -> Result<()> {
        let (dict, input) = self.pending.split_at(self.dict_len);
        let (blocks, sums) = rayon::join(
            || compress_blocks(input, dict, self.level, self.block),
            || {
                input
                    .par_chunks(self.block)
                    .map(|c| (adler32(c), c.len() as u64))
                    .collect::<Vec<_>>()
            },
        );
        for b in blocks? {
            self.out.write_all(&b.deflated).map_err(write_error)?;
        }
        self.adler = sums
            .into_iter()
            .fold(self.adler, |acc, (sum, len)| adler32_combine(acc, sum, len));
        let keep = self.pending.len().min(DICT_SIZE);
        self.pending.drain(..self.pending.len() - keep);
        self.dict_len = keep;
        Ok(())
    }

    /// Compresses what is left, ends the stream and returns `out`.
    pub fn finish(mut self) -> Result<W> {
        if self.pending.len() > self.dict_len {
            self.compress_pending()?;
        }
        self.out.write_all(&END_OF_STREAM).map_err(write_error)?;
        self.out
            .write_all(&self.adler.to_be_bytes())
            .map_err(write_error)?;
        Ok(self.out)
    }
}

fn write_error(e: std::io::Error) -> Error {
    Error::io("cannot write the compressed stream", e)
}

const ADLER_BASE: u32 = 65_521;

/// Adler-32 of `data` (RFC 1950).
pub(crate) fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    // 5552: the most bytes before the sums can overflow 32 bits.
    for chunk in data.chunks(5552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= ADLER_BASE;
        b %= ADLER_BASE;
    }
    (b << 16) | a
}

/// The Adler-32 of two pieces from theirs (zlib's `adler32_combine`); `len2` is the second's
/// length.
pub(crate) fn adler32_combine(adler1: u32, adler2: u32, len2: u64) -> u32 {
    let base = u64::from(ADLER_BASE);
    let rem = len2 % base;
    let mut sum1 = u64::from(adler1 & 0xFFFF);
    let mut sum2 = (rem * sum1) % base;
    sum1 += u64::from(adler2 & 0xFFFF) + base - 1;
    sum2 += u64::from(adler1 >> 16) + u64::from(adler2 >> 16) + base - rem;
    if sum1 >= base {
        sum1 -= base;
    }
    if sum1 >= base {
        sum1 -= base;
    }
    if sum2 >= base << 1 {
        sum2 -= base << 1;
    }
    if sum2 >= base {
        sum2 -= base;
    }
    ((sum2 << 16) | sum1) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn parallel_zlib_streams_inflate_and_check() {
        let data: Vec<u8> = (0..300_000u32)
            .map(|i| (i * 7 % 251) as u8 ^ (i >> 9) as u8)
            .collect();
        for block in [DICT_SIZE, 100_000, 1 << 20] {
            let z = zlib_parallel(&data, 6, block).unwrap();
            let mut back = Vec::new();
            flate2::read::ZlibDecoder::new(&z[..])
                .read_to_end(&mut back)
                .unwrap();
            assert_eq!(back, data, "block {block}");
            let one = {
                use std::io::Write;
                let mut e =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
                e.write_all(&data).unwrap();
                e.finish().unwrap()
            };
            assert!(
                (z.len() as f64) < one.len() as f64 * 1.05,
                "{} {}",
                z.len(),
                one.len()
            );
        }
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        let (a, b) = data.split_at(12345);
        assert_eq!(
            adler32_combine(adler32(a), adler32(b), b.len() as u64),
            adler32(&data)
        );
    }

    #[test]
    fn the_same_input_makes_the_same_stream_whatever_came_before() {
        // doubles as MATLAB matrices hold them, and other data compressed in between on the
        // same threads
        let data: Vec<u8> = (0..600_000u32)
            .flat_map(|i| (f64::from(i) / 7.0).to_le_bytes())
            .collect();
        let noise: Vec<u8> = (0..3_000_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let first = zlib_parallel(&data, 3, 1 << 20).unwrap();
        for _ in 0..3 {
            zlib_parallel(&noise, 3, 1 << 20).unwrap();
            assert!(zlib_parallel(&data, 3, 1 << 20).unwrap() == first);
        }
    }

    #[test]
    fn a_stream_fed_in_pieces_is_the_parallel_stream() {
        let data: Vec<u8> = (0..1_500_000u32)
            .map(|i| (i * 7 % 251) as u8 ^ (i >> 11) as u8)
            .collect();
        for (block, piece) in [(DICT_SIZE, 1000), (100_000, 77_777), (1 << 20, 3 << 20)] {
            let mut w = ZlibParallelWriter::new(Vec::new(), 3, block).unwrap();
            for p in data.chunks(piece) {
                w.write_all(p).unwrap();
            }
            let z = w.finish().unwrap();
            assert!(
                z == zlib_parallel(&data, 3, block).unwrap(),
                "block {block}"
            );
        }
        let empty = ZlibParallelWriter::new(Vec::new(), 3, 1 << 20).unwrap();
        assert_eq!(
            empty.finish().unwrap(),
            zlib_parallel(&[], 3, 1 << 20).unwrap()
        );
    }

    fn inflate(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::DeflateDecoder::new(data)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn blocks_concatenate_into_one_stream() {
        let input: Vec<u8> = (0..1_000_000u32)
            .flat_map(|i| (i % 1000).to_le_bytes())
            .collect();
        let blocks = compress_blocks(&input, &[], 6, 64 << 10).unwrap();
        assert!(blocks.len() > 10);
        let mut stream: Vec<u8> = blocks.iter().flat_map(|b| b.deflated.clone()).collect();
        stream.extend_from_slice(&END_OF_STREAM);
        assert_eq!(inflate(&stream), input);
        let mut crc = crc32fast::Hasher::new();
        for b in &blocks {
            crc.combine(&crc32fast::Hasher::new_with_initial_len(b.crc32, b.len));
        }
        assert_eq!(crc.finalize(), crc32fast::hash(&input));
    }

    #[test]
    fn empty_and_incompressible_blocks() {
        assert_eq!(inflate(&END_OF_STREAM), Vec::<u8>::new());
        let mut x = 0x1234_5678u32;
        let noise: Vec<u8> = (0..300_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        for level in [0, 1, 9] {
            let blocks = compress_blocks(&noise, &[], level, 100_000).unwrap();
            let mut stream: Vec<u8> = blocks.iter().flat_map(|b| b.deflated.clone()).collect();
            stream.extend_from_slice(&END_OF_STREAM);
            assert_eq!(inflate(&stream), noise);
        }
    }
}
