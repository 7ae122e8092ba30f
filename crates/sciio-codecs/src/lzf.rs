//! LZF (filter 32000), as h5py's `lzf_filter.c` stores it: each chunk one raw liblzf block
//! (no header); the client data is `[filter version 4, LZF version 0x0105, chunk bytes]`. A
//! chunk LZF cannot shrink is stored unfiltered (the filter is optional).
//!
//! The block format (liblzf `lzf_d.c`): a control byte `c` below 32 starts `c + 1` literal
//! bytes; otherwise `c >> 5` is a match length (7: plus the next byte) and the low 5 bits
//! with the next byte a distance: `len + 2` bytes are copied from `distance + 1` bytes back.

use sciio_core::{Error, ErrorKind, Result};

use super::MAX_CHUNK_BYTES;

/// h5py's filter version (`H5PY_FILTER_LZF_VERSION`) and liblzf's (`LZF_VERSION`), its first
/// two client data values.
pub(crate) const CD_VERSIONS: [u32; 2] = [4, 0x0105];

const MAX_LITERAL: usize = 32;
const MAX_OFFSET: usize = 1 << 13;
const MAX_MATCH: usize = 264;
const HASH_BITS: u32 = 14;

fn corrupt(what: &str) -> Error {
    Error::new(ErrorKind::Corrupt, format!("LZF stream is invalid: {what}"))
}

/// Decodes one LZF block. `expected` (or the chunk size in `cd_values[2]`) sizes the output;
/// output beyond it, or beyond 4 GiB without it, is corrupt.
pub(crate) fn decode(cd_values: &[u32], input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    let hint = expected.or_else(|| {
        cd_values
            .get(2)
            .copied()
            .filter(|&n| n > 0)
            .map(|n| n as usize)
    });
    let cap = expected.unwrap_or(MAX_CHUNK_BYTES);
    let mut out: Vec<u8> = Vec::with_capacity(hint.unwrap_or(input.len() * 2).min(cap));
    let mut i = 0;
    while i < input.len() {
        let ctrl = usize::from(input[i]);
        i += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            let lit = input
                .get(i..i + n)
                .ok_or_else(|| corrupt("a literal run passes the end of the block"))?;
            if out.len() + n > cap {
                return Err(corrupt("it decodes to more than the chunk holds"));
            }
            out.extend_from_slice(lit);
            i += n;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += usize::from(
                    *input
                        .get(i)
                        .ok_or_else(|| corrupt("a match passes the end of the block"))?,
                );
                i += 1;
            }
            let low = usize::from(
                *input
                    .get(i)
                    .ok_or_else(|| corrupt("a match passes the end of the block"))?,
            );
            i += 1;
            let back = ((ctrl & 0x1f) << 8) + low + 1;
            let n = len + 2;
            if back > out.len() {
                return Err(corrupt("a match points before the start of the chunk"));
            }
            if out.len() + n > cap {
                return Err(corrupt("it decodes to more than the chunk holds"));
            }
            let start = out.len() - back;
            // Overlapping copies repeat the last `back` bytes, byte by byte.
            for k in 0..n {
                let b = out[start + k];
                out.push(b);
            }
        }
    }
    Ok(out)
}

fn hash(b: &[u8]) -> usize {
    let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
    (v.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize
}

fn flush_literals(out: &mut Vec<u8>, lit: &[u8]) {
    for run in lit.chunks(MAX_LITERAL) {
        out.push((run.len() - 1) as u8);
        out.extend_from_slice(run);
    }
}

/// Encodes one chunk as an LZF block (greedy matching over a hash of 3-byte prefixes; any
/// valid block decodes with liblzf). `None` when the block would not be smaller than the
/// chunk: h5py then stores the chunk unfiltered, and so does sciio.
pub(crate) fn encode(input: &[u8]) -> Option<Vec<u8>> {
    let n = input.len();
    let mut out = Vec::with_capacity(n);
    let mut table = vec![usize::MAX; 1 << HASH_BITS];
    let mut lit_start = 0;
    let mut i = 0;
    while i + 2 < n {
        let h = hash(&input[i..i + 3]);
        let cand = table[h];
        table[h] = i;
        if cand != usize::MAX && i - cand <= MAX_OFFSET && input[cand..cand + 3] == input[i..i + 3]
        {
            let max = MAX_MATCH.min(n - i);
            let mut len = 3;
            while len < max && input[cand + len] == input[i + len] {
                len += 1;
            }
            flush_literals(&mut out, &input[lit_start..i]);
            let off = i - cand - 1;
            let l = len - 2;
            if l < 7 {
                out.push(((l << 5) | (off >> 8)) as u8);
            } else {
                out.push(((7 << 5) | (off >> 8)) as u8);
                out.push((l - 7) as u8);
            }
            out.push((off & 0xff) as u8);
            // Remember the positions inside the match too (better later matches).
            for k in i + 1..(i + len).min(n.saturating_sub(2)) {
                table[hash(&input[k..k + 3])] = k;
            }
            i += len;
            lit_start = i;
            if out.len() >= n {
                return None;
            }
        } else {
            i += 1;
        }
    }
    flush_literals(&mut out, &input[lit_start..]);
    (out.len() < n).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_gives_up_on_noise() {
        let mut data = Vec::new();
        for i in 0..20_000u32 {
            data.extend_from_slice(&(i / 7).to_le_bytes());
        }
        data.extend(std::iter::repeat_n(b'x', 1000));
        let block = encode(&data).unwrap();
        assert!(block.len() < data.len() / 2);
        assert_eq!(decode(&[], &block, Some(data.len())).unwrap(), data);
        assert_eq!(
            decode(&[4, 0x105, data.len() as u32], &block, None).unwrap(),
            data
        );
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        assert!(encode(&noise).is_none());
    }

    #[test]
    fn damaged_blocks_are_errors() {
        // A match before anything was written, a literal run past the end, and output larger
        // than the chunk.
        assert!(decode(&[], &[0x20, 0x00], None).is_err());
        assert!(decode(&[], &[0x05, 1, 2], None).is_err());
        assert!(decode(&[], &[0x01, 1, 2], Some(1)).is_err());
    }
}
