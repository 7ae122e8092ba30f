//! LZO (filter 305) as PyTables' `H5Zlzo.c` writes it: an LZO1X-1 stream followed, for every
//! object but Tables of format < 2.0, by the Adler-32 of the decoded bytes and their length
//! (both 32-bit, little-endian as written on x86).
//!
//! Decoding uses the `lzo1x` crate, a safe Rust port of LZO1X's decompressor.

use sciio_core::{Error, ErrorKind, Result};

use super::MAX_CHUNK_BYTES;

const TRAILER: usize = 8;

/// Decodes one LZO chunk; `expected` is needed only for the old trailer-less format.
pub(super) fn decode(_cd_values: &[u32], input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    // The trailer's presence depends on cd_values PyTables does not always fill in (its own
    // code reads an uninitialised object type for 2-value pipelines), so it is recognised by
    // its content: the announced length decodes and the checksum matches.
    if let Some(out) = decode_with_trailer(input, expected) {
        return Ok(out);
    }
    match expected {
        Some(n) if n <= MAX_CHUNK_BYTES && n <= max_decoded(input.len()) => {
            let mut out = vec![0u8; n];
            lzo1x::decompress(input, &mut out).map_err(|e| corrupt(&e.to_string()))?;
            Ok(out)
        }
        _ => Err(corrupt("no valid checksum trailer and no known chunk size")),
    }
}

fn decode_with_trailer(input: &[u8], expected: Option<usize>) -> Option<Vec<u8>> {
    let body_len = input.len().checked_sub(TRAILER)?;
    let word =
        |at: usize| u32::from_le_bytes([input[at], input[at + 1], input[at + 2], input[at + 3]]);
    let checksum = word(body_len);
    let n = word(body_len + 4) as usize;
    if expected.is_some_and(|e| e != n) || n > max_decoded(body_len) {
        return None;
    }
    let mut out = vec![0u8; n];
    lzo1x::decompress(&input[..body_len], &mut out).ok()?;
    (adler32(&out) == checksum).then_some(out)
}

/// LZO1X encodes a match of length L in at least L/255 bytes, so no valid stream decodes to
/// more than 255 times its size (plus a small constant): larger claims are corrupt.
fn max_decoded(compressed: usize) -> usize {
    compressed
        .saturating_mul(256)
        .saturating_add(64)
        .min(MAX_CHUNK_BYTES)
}

fn corrupt(why: &str) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!("LZO chunk does not decode: {why}"),
    )
}

/// Adler-32 (RFC 1950), as `lzo_adler32(1, ...)` computes it. Hand-written: ten lines, and
/// no crate needed for it.
pub(crate) fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 is the largest run whose sums cannot overflow u32 before the modulo.
    for block in data.chunks(5552) {
        for &byte in block {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    #[test]
    fn adler32_matches_rfc_example() {
        assert_eq!(super::adler32(b"Wikipedia"), 0x11E6_0398);
    }
}
