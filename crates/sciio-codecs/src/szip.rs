//! szip (filter 4) read, as libhdf5's `H5Zszip.c` writes it through libaec's szlib layer:
//! the chunk starts with its decoded size (u32, little-endian), then a CCSDS 121.0-B
//! Adaptive Entropy Coding stream.
//!
//! sciio's bundled libhdf5 is built without szip (`hdf5-metno-src` has no switch for it, and
//! `libaec-sys` generates its bindings with bindgen, which needs libclang), so the filter is
//! registered by sciio like the others, and the decoder is written here, after libaec's
//! `decode.c` and `sz_compat.c`: the one pure-Rust AEC crate (`tensogram-szip` 0.24) decodes
//! second-extension blocks that carry an RSI's reference sample one sample out of step with
//! libaec (found on files written by h5py), so it cannot be used.
//!
//! What `SZ_BufftoBuffDecompress` adds on top of AEC is followed too: szip's options mapped to
//! AEC flags, 32/64-bit pixels coded as bytes and de-interleaved, scanlines padded to whole
//! blocks.

use sciio_core::{Error, ErrorKind, Result};

use super::MAX_CHUNK_BYTES;

/// szip option bits (`szlib.h`) that change decoding.
const SZ_MSB_OPTION_MASK: u32 = 16;
const SZ_NN_OPTION_MASK: u32 = 32;

/// Decodes one szip chunk. Client data: `[options mask, pixels per block, bits per pixel,
/// pixels per scanline]` (H5Zszip.c's `H5Z_SZIP_PARM_*`).
pub(super) fn decode(cd_values: &[u32], input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    let [mask, per_block, bits, per_line] = match cd_values {
        [a, b, c, d, ..] => [*a, *b, *c, *d],
        _ => return Err(corrupt("fewer than 4 client data values")),
    };
    let (size, stream) = input
        .split_first_chunk::<4>()
        .ok_or_else(|| corrupt("chunk shorter than its 4-byte size"))?;
    let n = u32::from_le_bytes(*size) as usize;
    if n > MAX_CHUNK_BYTES || expected.is_some_and(|e| e != n) {
        return Err(corrupt(&format!("announces {n} decoded bytes")));
    }
    if per_block == 0 || per_line == 0 {
        return Err(corrupt("zero pixels per block or per scanline"));
    }
    // 32- and 64-bit pixels are coded as bytes, each byte plane after the other.
    let interleaved = bits == 32 || bits == 64;
    let sample_bits = if interleaved { 8 } else { bits };
    let pixel = match sample_bits {
        0 => return Err(corrupt("0 bits per pixel")),
        1..=8 => 1,
        9..=16 => 2,
        _ => 4,
    };
    let blocks_per_line = per_line.div_ceil(per_block);
    if !(1..=32).contains(&sample_bits)
        || per_block % 2 != 0
        || per_block > 64
        || blocks_per_line > 4096
    {
        return Err(corrupt(&format!(
            "{sample_bits} bits per sample, {per_block} per block, {blocks_per_line} blocks per scanline"
        )));
    }
    let params = Aec {
        bits: sample_bits,
        block: per_block as usize,
        rsi_blocks: blocks_per_line as usize,
        msb: mask & SZ_MSB_OPTION_MASK != 0,
        preprocess: mask & SZ_NN_OPTION_MASK != 0,
    };
    let line = per_line as usize * pixel;
    let padded_line = (blocks_per_line as usize)
        .checked_mul(per_block as usize)
        .and_then(|p| p.checked_mul(pixel))
        .ok_or_else(|| corrupt("scanline size overflows"))?;
    let padded = padded_line != line;
    let coded_size = if padded {
        n.div_ceil(line)
            .checked_mul(padded_line)
            .filter(|&s| s <= MAX_CHUNK_BYTES.saturating_mul(2))
            .ok_or_else(|| corrupt("padded size overflows"))?
    } else {
        n
    };
    let coded = params.decode(stream, coded_size / pixel, pixel)?;
    let plain: Vec<u8> = if padded {
        coded
            .chunks(padded_line)
            .flat_map(|l| &l[..line.min(l.len())])
            .copied()
            .take(n)
            .collect()
    } else {
        coded
    };
    if plain.len() != n {
        return Err(corrupt(&format!(
            "decodes to {} bytes, {n} announced",
            plain.len()
        )));
    }
    Ok(if interleaved {
        deinterleave(&plain, bits as usize / 8)
    } else {
        plain
    })
}

/// The parameters of one AEC stream.
struct Aec {
    /// Bits per sample (1–32).
    bits: u32,
    /// Samples per block (even).
    block: usize,
    /// Blocks per reference sample interval.
    rsi_blocks: usize,
    /// Samples stored most significant byte first.
    msb: bool,
    /// Nearest-neighbour preprocessing: each RSI starts with a reference sample, the others
    /// are mapped differences.
    preprocess: bool,
}

/// Zero-block count meaning "to the end of the segment or RSI" (CCSDS' ROS).
const ROS: u64 = 5;

impl Aec {
    /// Decodes `count` samples into `width`-byte words.
    fn decode(&self, stream: &[u8], count: usize, width: usize) -> Result<Vec<u8>> {
        let mut bits = BitReader::new(stream);
        let id_len = match self.bits {
            17.. => 5,
            9..=16 => 4,
            _ => 3,
        };
        let uncompressed = (1u64 << id_len) - 1;
        let per_rsi = self.block * self.rsi_blocks;
        let mut samples: Vec<u32> = Vec::with_capacity(count.min(per_rsi));
        while samples.len() < count {
            let rsi_start = samples.len();
            let rsi_end = (rsi_start + per_rsi).min(count);
            let mut has_ref = self.preprocess;
            while samples.len() < rsi_end {
                let used = samples.len() - rsi_start;
                let id = bits.read(id_len)?;
                let ref_count = usize::from(has_ref);
                if id == 0 {
                    let second_extension = bits.read(1)? == 1;
                    if has_ref {
                        samples.push(bits.read(self.bits)? as u32);
                    }
                    if second_extension {
                        self.second_extension(&mut bits, &mut samples, ref_count)?;
                    } else {
                        let mut zero_blocks = bits.read_fs()? + 1;
                        let block_index = (used / self.block) as u64;
                        if zero_blocks == ROS {
                            zero_blocks =
                                (self.rsi_blocks as u64 - block_index).min(64 - block_index % 64);
                        } else if zero_blocks > ROS {
                            zero_blocks -= 1;
                        }
                        let zeros = (zero_blocks as usize)
                            .saturating_mul(self.block)
                            .saturating_sub(ref_count);
                        if samples.len() + zeros > rsi_start + per_rsi {
                            return Err(corrupt("zero run past the end of its interval"));
                        }
                        samples.resize(samples.len() + zeros, 0);
                    }
                } else if id == uncompressed {
                    for _ in 0..self.block {
                        samples.push(bits.read(self.bits)? as u32);
                    }
                } else {
                    let k = (id - 1) as u32;
                    if has_ref {
                        samples.push(bits.read(self.bits)? as u32);
                    }
                    let start = samples.len();
                    for _ in ref_count..self.block {
                        // k < 31 (ids are at most 5 bits) and a fundamental sequence is
                        // under 2^33 bits: the shift cannot overflow; like libaec, a sample
                        // wider than 32 bits is truncated.
                        samples.push((bits.read_fs()? << k) as u32);
                    }
                    if k > 0 {
                        for s in &mut samples[start..] {
                            *s |= bits.read(k)? as u32;
                        }
                    }
                }
                has_ref = false;
            }
            samples.truncate(rsi_end);
            if self.preprocess {
                self.postprocess(&mut samples[rsi_start..]);
            }
        }
        samples.truncate(count);
        Ok(self.to_bytes(&samples, width))
    }

    /// A second-extension block: pairs coded as one index into CCSDS' triangle of (sum, ms);
    /// a block holding the reference sample starts mid-pair (libaec's `m_se_decode`).
    fn second_extension(
        &self,
        bits: &mut BitReader<'_>,
        samples: &mut Vec<u32>,
        mut i: usize,
    ) -> Result<()> {
        while i < self.block {
            let m = bits.read_fs()?;
            let (sum, first) =
                se_pair(m).ok_or_else(|| corrupt("second-extension code out of range"))?;
            let d1 = m - first;
            if i.is_multiple_of(2) {
                samples.push((sum - d1) as u32);
                i += 1;
            }
            if i < self.block {
                samples.push(d1 as u32);
                i += 1;
            }
        }
        Ok(())
    }

    /// Undoes the unsigned nearest-neighbour mapping of one interval, in place (libaec's
    /// `flush_kind` for unsigned data): the first sample is the reference.
    fn postprocess(&self, rsi: &mut [u32]) {
        let xmax: u64 = (1u64 << self.bits) - 1;
        let med = xmax / 2 + 1;
        let Some((first, rest)) = rsi.split_first_mut() else {
            return;
        };
        let mut x = u64::from(*first) & xmax;
        for d in rest {
            let d64 = u64::from(*d);
            let half = (d64 >> 1) + (d64 & 1);
            let mask = if x & med != 0 { xmax } else { 0 };
            if half <= (mask ^ x) {
                x = if d64 & 1 == 0 {
                    x + (d64 >> 1)
                } else {
                    x.wrapping_sub(half)
                };
            } else {
                x = mask ^ d64;
            }
            x &= xmax;
            *d = x as u32;
        }
    }

    fn to_bytes(&self, samples: &[u32], width: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(samples.len() * width);
        for &s in samples {
            let le = s.to_le_bytes();
            if self.msb {
                out.extend(le[..width].iter().rev());
            } else {
                out.extend(&le[..width]);
            }
        }
        out
    }
}

/// The (pair sum, first code of that sum) of second-extension code `m`: codes run through the
/// triangle sum 0 (1 code), sum 1 (2 codes)... up to sum 12.
fn se_pair(m: u64) -> Option<(u64, u64)> {
    let mut first = 0;
    for sum in 0..13 {
        if m < first + sum + 1 {
            return Some((sum, first));
        }
        first += sum + 1;
    }
    None
}

/// Reads an AEC stream most significant bit first.
struct BitReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> BitReader<'a> {
    fn new(data: &'a [u8]) -> Self {
        BitReader { data, pos: 0 }
    }

    /// The next `n` (at most 57) bits as a number.
    fn read(&mut self, n: u32) -> Result<u64> {
        if n == 0 {
            return Ok(0);
        }
        let end = self.pos + n as usize;
        if end > self.data.len() * 8 {
            return Err(corrupt("stream cut short"));
        }
        // Load the (at most 8) bytes covering the bits, big-endian, then cut them out.
        let first = self.pos / 8;
        let last = (end - 1) / 8;
        let mut word = 0u64;
        for &b in &self.data[first..=last] {
            word = (word << 8) | u64::from(b);
        }
        let spare = (last + 1) * 8 - end;
        self.pos = end;
        Ok((word >> spare) & ((1u64 << n) - 1))
    }

    /// A fundamental sequence: the number of 0 bits before the next 1.
    fn read_fs(&mut self) -> Result<u64> {
        let start = self.pos;
        loop {
            let byte = *self
                .data
                .get(self.pos / 8)
                .ok_or_else(|| corrupt("stream cut short"))?;
            let rest = byte << (self.pos % 8);
            if rest != 0 {
                self.pos += rest.leading_zeros() as usize + 1;
                return Ok((self.pos - 1 - start) as u64);
            }
            self.pos += 8 - self.pos % 8;
        }
    }
}

/// Undoes libaec's byte interleave of `width`-byte pixels: byte `j` of every pixel is stored
/// in plane `j`.
fn deinterleave(planes: &[u8], width: usize) -> Vec<u8> {
    let count = planes.len() / width;
    let mut out = vec![0u8; planes.len()];
    for (j, plane) in planes.chunks_exact(count.max(1)).take(width).enumerate() {
        for (i, &b) in plane.iter().enumerate() {
            out[i * width + j] = b;
        }
    }
    out
}

fn corrupt(why: &str) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!("szip chunk does not decode: {why}"),
    )
}
