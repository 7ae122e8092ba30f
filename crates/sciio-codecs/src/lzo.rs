//! LZO (filter 305) as PyTables' `H5Zlzo.c` writes it: an LZO1X-1 stream alone since PyTables
//! 0.8 (2004, `#undef CHECKSUM`); PyTables 0.5-0.7 files follow the stream with the Adler-32 of
//! the decoded bytes and their length (both 32-bit, little-endian as written on x86). Both
//! read.
//!
//! Decoding uses the `lzo` crate: a safe (`forbid(unsafe_code)`), Apache-2.0 LZO1X decoder
//! that, like `lzo1x_decompress_safe`, reports how much it wrote, so chunks without the
//! trailer decode even when nobody tells the filter the chunk's size (libhdf5's pipeline never
//! does). (The write side's encoder is `lzokay-native`, MIT.)

use sciio_core::{Error, ErrorKind, Result};

use super::MAX_CHUNK_BYTES;

const TRAILER: usize = 8;

/// Decodes one LZO chunk, with or without PyTables' trailer; `expected` (the chunk's size, when
/// the caller knows it) is checked.
pub(super) fn decode(_cd_values: &[u32], input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    // The trailer's presence depends on cd_values PyTables does not always fill in (its own
    // code reads an uninitialised object type for 2-value pipelines), so it is recognised by
    // its content: the announced length decodes and the checksum matches.
    if let Some(out) = decode_with_trailer(input, expected) {
        return Ok(out);
    }
    let out = decode_growing(input, expected)?;
    match expected {
        Some(n) if n != out.len() => Err(corrupt(&format!(
            "decodes to {} bytes, the chunk holds {n}",
            out.len()
        ))),
        _ => Ok(out),
    }
}

/// Decodes a trailer-less stream whose decoded size may be unknown: into the expected size
/// when known, else into a buffer that doubles (as PyTables' H5Zlzo.c does) up to the
/// largest size the stream could encode.
fn decode_growing(input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    let limit = max_decoded(input.len());
    let mut size = expected
        .unwrap_or_else(|| input.len().saturating_mul(4).max(1 << 16))
        .min(limit);
    loop {
        let mut out = vec![0u8; size];
        match lzo::decompress_into(input, &mut out) {
            Ok(n) => {
                out.truncate(n);
                return Ok(out);
            }
            Err(lzo::Error::OutputOverrun) if size < limit && expected.is_none() => {
                size = size.saturating_mul(2).min(limit);
            }
            Err(e) => return Err(corrupt(&e.to_string())),
        }
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
    let written = lzo::decompress_into(&input[..body_len], &mut out).ok()?;
    (written == n && adler32(&out) == checksum).then_some(out)
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
    fn trailer_less_stream_of_unknown_size_grows_its_buffer() {
        // 1 MiB of a short pattern compresses ~250-fold: far past the first guess.
        let data: Vec<u8> = (0..1 << 20).map(|i| (i % 7) as u8).collect();
        let packed = lzokay_native::compress(&data).unwrap();
        assert!(packed.len() * 4 < data.len() / 4, "{} bytes", packed.len());
        assert_eq!(super::decode(&[], &packed, None).unwrap(), data);
        assert_eq!(super::decode(&[], &packed, Some(data.len())).unwrap(), data);
        assert!(super::decode(&[], &packed, Some(data.len() - 1)).is_err());
        assert!(super::decode(&[], &packed[..packed.len() / 2], None).is_err());
    }

    #[test]
    fn adler32_matches_rfc_example() {
        assert_eq!(super::adler32(b"Wikipedia"), 0x11E6_0398);
    }
}
