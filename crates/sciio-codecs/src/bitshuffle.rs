//! The standalone Bitshuffle filter (id 32008), as `bshuf_h5filter.c` writes it (h5py with
//! `hdf5plugin`, h5py's `bitshuffle` package, many beamline files). PyTables never writes it:
//! its `bitshuffle=True` is an option inside Blosc/Blosc2 frames (see `blosc.rs`).
//!
//! Client data: `[major, minor, element size, block size (elements, 0 = default),
//! compression (0 none, 2 LZ4, 3 zstd), zstd level]`. Uncompressed, the chunk is the
//! bit-transposed data. Compressed, it starts with the decoded size (u64, big-endian) and the
//! block size in bytes (u32, big-endian), then one record per block: the compressed length
//! (u32, big-endian) and an LZ4 block (`lz4_flex`) or a zstd frame (`zstd`).
//!
//! Either way the data is cut in blocks of `block size` elements, the last one shortened to a
//! multiple of 8 elements; each block is bit-transposed on its own, and the final `n % 8`
//! elements are stored as they are. The transpose is hand-written: no maintained crate
//! implements Bitshuffle's layout in pure Rust (the `bitshuffle` crates bind the C library).

use sciio_core::{Error, ErrorKind, Result};

use super::MAX_CHUNK_BYTES;

/// Compression codes of `cd_values[4]`.
const COMPRESS_LZ4: u32 = 2;
const COMPRESS_ZSTD: u32 = 3;

/// Bitshuffle's target block size in bytes (`BSHUF_TARGET_BLOCK_SIZE_B`).
const TARGET_BLOCK_BYTES: usize = 8192;
/// Smallest default block (`BSHUF_MIN_RECOMMEND_BLOCK`), in elements.
const MIN_DEFAULT_BLOCK: usize = 128;
/// Block sizes are multiples of 8 elements (`BSHUF_BLOCKED_MULT`).
const BLOCKED_MULT: usize = 8;

/// Decodes one chunk written by the Bitshuffle filter.
pub(super) fn decode(cd_values: &[u32], input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    let elem = cd_values.get(2).copied().unwrap_or(0) as usize;
    if elem == 0 {
        return Err(corrupt("element size 0 in the filter's client data"));
    }
    let compression = cd_values.get(4).copied().unwrap_or(0);
    let (total, block, body) = match compression {
        COMPRESS_LZ4 | COMPRESS_ZSTD => {
            let (header, body) = input
                .split_first_chunk::<12>()
                .ok_or_else(|| corrupt("chunk shorter than its 12-byte header"))?;
            let total = u64::from_be_bytes(header[..8].try_into().unwrap_or([0; 8]));
            let block_bytes = u32::from_be_bytes(header[8..].try_into().unwrap_or([0; 4]));
            let total = usize::try_from(total)
                .ok()
                .filter(|&t| t <= MAX_CHUNK_BYTES)
                .ok_or_else(|| corrupt(&format!("decoded size of {total} bytes")))?;
            (total, block_bytes as usize / elem, body)
        }
        0 => (
            input.len(),
            cd_values.get(3).copied().unwrap_or(0) as usize,
            input,
        ),
        other => {
            return Err(Error::unsupported(format!(
                "Bitshuffle compression code {other} (sciio reads none, LZ4 and zstd)"
            )))
        }
    };
    if expected.is_some_and(|n| n != total) {
        return Err(corrupt(&format!(
            "the header announces {total} bytes, the chunk holds {}",
            expected.unwrap_or(0)
        )));
    }
    if total % elem != 0 {
        return Err(corrupt(&format!(
            "{total} bytes is not a whole number of {elem}-byte elements"
        )));
    }
    let block = if block == 0 {
        default_block(elem)
    } else {
        block
    };
    if block % BLOCKED_MULT != 0 {
        return Err(corrupt(&format!(
            "block of {block} elements, not a multiple of 8"
        )));
    }
    // Every compressed block costs at least its 4-byte length, and uncompressed data is all
    // there: a header announcing more than the chunk can hold is refused before allocating.
    let blocks = (total / elem).div_ceil(block.max(1));
    let plausible = match compression {
        0 => body.len() >= total,
        _ => body.len() >= blocks.saturating_mul(4),
    };
    if !plausible {
        return Err(corrupt(&format!(
            "{} bytes cannot hold {total} decoded bytes",
            body.len()
        )));
    }
    let codec = match compression {
        COMPRESS_LZ4 => Codec::Lz4,
        COMPRESS_ZSTD => Codec::Zstd,
        _ => Codec::None,
    };
    unshuffle_blocks(body, total / elem, elem, block, codec)
}

/// `bshuf_default_block_size`: about 8 KiB of elements, a multiple of 8, at least 128.
fn default_block(elem: usize) -> usize {
    (TARGET_BLOCK_BYTES / elem / BLOCKED_MULT * BLOCKED_MULT).max(MIN_DEFAULT_BLOCK)
}

#[derive(Clone, Copy)]
enum Codec {
    None,
    Lz4,
    Zstd,
}

/// Walks the blocks of `n` elements, undoing compression and the bit transpose of each.
///
/// The output grows block by block, as blocks decode, and a compressed block is decoded
/// without first allocating the size its header claims: sizes come from the chunk (and a
/// damaged one claims gigabytes in a few bytes), so memory follows the data actually decoded.
fn unshuffle_blocks(
    mut input: &[u8],
    n: usize,
    elem: usize,
    block: usize,
    codec: Codec,
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(plausible_size(codec, input.len(), n * elem));
    let mut done = 0;
    let mut scratch = Vec::new();
    while n - done >= BLOCKED_MULT {
        let count = block.min((n - done) / BLOCKED_MULT * BLOCKED_MULT);
        let bytes = count * elem;
        let shuffled: &[u8] = match codec {
            Codec::None => take(&mut input, bytes)?,
            Codec::Lz4 | Codec::Zstd => {
                let len = take(&mut input, 4)?;
                let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
                let packed = take(&mut input, len)?;
                decode_block(codec, packed, bytes, &mut scratch)?;
                &scratch
            }
        };
        out.resize((done + count) * elem, 0);
        untranspose_block(shuffled, &mut out[done * elem..], elem);
        done += count;
    }
    // The last `n % 8` elements are stored as they are.
    let rest = take(&mut input, (n - done) * elem)?;
    out.extend_from_slice(rest);
    Ok(out)
}

/// The most an LZ4 block expands: each byte of a match length adds at most 255 bytes.
const LZ4_MAX_RATIO: usize = 255;

/// How much output to reserve up front: all of it when the chunk holds it as it is, else no
/// more than the compressed bytes can plausibly give (the output grows past that as needed).
fn plausible_size(codec: Codec, input: usize, total: usize) -> usize {
    let ratio = match codec {
        Codec::None => 1,
        Codec::Lz4 => LZ4_MAX_RATIO,
        Codec::Zstd => 16,
    };
    total.min(input.saturating_mul(ratio))
}

/// Decodes one compressed block, which must give exactly `bytes` bytes, into `scratch`.
fn decode_block(codec: Codec, packed: &[u8], bytes: usize, scratch: &mut Vec<u8>) -> Result<()> {
    scratch.clear();
    let got = match codec {
        Codec::Lz4 => {
            if bytes
                > packed
                    .len()
                    .saturating_mul(LZ4_MAX_RATIO)
                    .saturating_add(64)
            {
                return Err(corrupt(&format!(
                    "an LZ4 block of {} bytes cannot decode to {bytes} bytes",
                    packed.len()
                )));
            }
            scratch.resize(bytes, 0);
            lz4_flex::block::decompress_into(packed, scratch)
                .map_err(|e| corrupt(&format!("LZ4 block: {e}")))?
        }
        // zstd expands far more than LZ4 (a few bytes can say "a megabyte of zeros"), and a
        // frame's stated size is the damaged file's word: read it as a stream, at most one
        // byte past the block, so memory is what really decodes.
        _ => {
            let decoder = zstd::stream::read::Decoder::with_buffer(packed)
                .map_err(|e| corrupt(&format!("zstd block: {e}")))?;
            std::io::Read::read_to_end(&mut std::io::Read::take(decoder, bytes as u64 + 1), scratch)
                .map_err(|e| corrupt(&format!("zstd block: {e}")))?
        }
    };
    if got != bytes {
        return Err(corrupt(&format!(
            "a block decodes to {got} bytes, {bytes} expected"
        )));
    }
    Ok(())
}

/// Splits `len` bytes off the front of `input`.
fn take<'a>(input: &mut &'a [u8], len: usize) -> Result<&'a [u8]> {
    if input.len() < len {
        return Err(corrupt("chunk cut short"));
    }
    let (head, tail) = input.split_at(len);
    *input = tail;
    Ok(head)
}

/// Undoes Bitshuffle's transpose of one block of `out.len() / elem` elements (a multiple of 8):
/// row `8 * b + k` of the input holds bit `k` of byte `b` of every element, element `i` at bit
/// `i % 8` of the row's byte `i / 8`.
fn untranspose_block(input: &[u8], out: &mut [u8], elem: usize) {
    let n = out.len() / elem;
    let row = n / 8;
    for b in 0..elem {
        for k in 0..8 {
            let r = &input[(8 * b + k) * row..(8 * b + k + 1) * row];
            for (group, &bits) in r.iter().enumerate() {
                if bits == 0 {
                    continue;
                }
                for j in 0..8 {
                    out[(8 * group + j) * elem + b] |= ((bits >> j) & 1) << k;
                }
            }
        }
    }
}

fn corrupt(why: &str) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!("Bitshuffle chunk does not decode: {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bitshuffle's forward transpose, written from its definition, for round trips.
    fn transpose(data: &[u8], elem: usize) -> Vec<u8> {
        let n = data.len() / elem;
        let row = n / 8;
        let mut out = vec![0u8; data.len()];
        for i in 0..n {
            for b in 0..elem {
                for k in 0..8 {
                    if data[i * elem + b] >> k & 1 == 1 {
                        out[(8 * b + k) * row + i / 8] |= 1 << (i % 8);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn uncompressed_blocks_and_tail_round_trip() {
        let elem = 4;
        let n = 300; // two blocks of 128 (default for 4 bytes is 2048: use cd block 128), 40, tail 4
        let data: Vec<u8> = (0..n * elem).map(|i| (i * 37 % 251) as u8).collect();
        let mut enc = Vec::new();
        for (start, count) in [(0, 128), (128, 128), (256, 40)] {
            enc.extend(transpose(&data[start * elem..(start + count) * elem], elem));
        }
        enc.extend(&data[296 * elem..]);
        let out = decode(&[0, 0, elem as u32, 128, 0], &enc, Some(data.len())).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn damaged_chunks_fail_cleanly() {
        assert!(decode(&[0, 0, 4, 0, 2], &[0; 5], None).is_err());
        let mut header = 1000u64.to_be_bytes().to_vec();
        header.extend(512u32.to_be_bytes());
        header.extend(9999u32.to_be_bytes());
        assert!(decode(&[0, 0, 4, 0, 2], &header, None).is_err());
        assert!(decode(&[0, 0, 0, 0, 0], &[1, 2, 3], None).is_err());
        assert!(decode(&[0, 0, 3, 0, 0], &[1, 2, 3, 4], None).is_err());
    }
}
