//! The HDF5 filters' codecs in Rust (and the C compressors Blosc needs), usable without
//! libhdf5: decoders for every filter PyTables, h5py and hdf5plugin files use, and encoders for
//! those sciio writes. `sciio-hdf5` registers these decoders with libhdf5 and runs the encoders
//! on all cores before direct chunk writes; the fuzz targets and anything that has a chunk's
//! bytes (e.g. from a file's chunk index) call them directly.
//!
//! | id    | filter     | decoder                                                            |
//! |-------|------------|--------------------------------------------------------------------|
//! | 1     | deflate    | `flate2` (zlib-rs)                                                 |
//! | 2     | shuffle    | hand-written (a byte transpose)                                    |
//! | 32001 | blosc      | c-blosc2 (reads Blosc1 frames, bounds-checked); c-blosc for snappy  |
//! | 32026 | blosc2     | c-blosc2 super-chunk frames, incl. b2nd (n-d) chunks               |
//! | 32000 | LZF        | hand-written (h5py's `lzf_filter.c` blocks); also written          |
//! | 305   | LZO        | `lzo` (safe LZO1X decoder), with or without PyTables' trailer      |
//! | 307   | bzip2      | `bzip2` (libbz2-rs)                                                 |
//! | 4     | szip       | hand-written AEC decoder + libaec's szlib framing                  |
//! | 32008 | bitshuffle | hand-written transpose; LZ4 blocks `lz4_flex`, zstd frames `zstd`  |
//!
//! Encoders ([`FilterStage`], [`encode_chunk`]): shuffle, deflate, LZF, LZO, bzip2, Blosc,
//! Blosc2 and Fletcher-32, producing what libhdf5's filters (and PyTables' H5Z plugins) decode.
//!
//! ```
//! use sciio_codecs::{decode, encode_chunk, id, FilterStage};
//! let data: Vec<u8> = (0..4096u32).flat_map(|i| i.to_le_bytes()).collect();
//! let stored = encode_chunk(&[FilterStage::shuffle(4), FilterStage::deflate(5)], data.clone())?;
//! let inflated = decode(id::DEFLATE, &[], &stored, Some(data.len()))?;
//! assert_eq!(decode(id::SHUFFLE, &[4], &inflated, None)?, data);
//! # Ok::<(), sciio_core::Error>(())
//! ```
// Input never reaches a panic: errors are returned (tests may unwrap).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable
    )
)]

mod b2nd_meta;
mod bitshuffle;
mod blosc;
mod encode;
mod lzf;
mod lzo;
pub mod shuffle;
mod szip;

pub use blosc::init as init_blosc;
pub use encode::{
    blosc2_blocksize, encode_chunk, encode_chunk_masked, fletcher32, shuffle, BloscCodec,
    FilterStage,
};

use std::io::Read;

use sciio_core::{Error, ErrorKind, Result};

/// Filter ids (the registered HDF5 filter numbers) sciio knows.
pub mod id {
    /// zlib deflate (built into libhdf5).
    pub const DEFLATE: i32 = 1;
    /// Byte shuffle (built into libhdf5).
    pub const SHUFFLE: i32 = 2;
    /// Fletcher-32 checksum (built into libhdf5).
    pub const FLETCHER32: i32 = 3;
    /// szip (read by sciio's own filter: libhdf5 is built without it).
    pub const SZIP: i32 = 4;
    /// N-bit packing (built into libhdf5).
    pub const NBIT: i32 = 5;
    /// Scale-offset (built into libhdf5).
    pub const SCALEOFFSET: i32 = 6;
    /// LZO as PyTables writes it.
    pub const LZO: i32 = 305;
    /// bzip2 as PyTables writes it.
    pub const BZIP2: i32 = 307;
    /// LZF (h5py).
    pub const LZF: i32 = 32000;
    /// Blosc 1.
    pub const BLOSC: i32 = 32001;
    /// Bitshuffle (+LZ4/zstd).
    pub const BITSHUFFLE: i32 = 32008;
    /// Blosc 2.
    pub const BLOSC2: i32 = 32026;
}

/// libhdf5 caps a chunk at 4 GiB, so no honest filter output is larger: this bounds what a
/// decoder may allocate when the compressed stream itself announces (or hides) the size.
pub const MAX_CHUNK_BYTES: usize = u32::MAX as usize;

/// A human name for a filter id, as `ptdump` prints them.
pub fn filter_name(id: i32) -> &'static str {
    match id {
        id::DEFLATE => "zlib",
        id::SHUFFLE => "shuffle",
        id::FLETCHER32 => "fletcher32",
        id::SZIP => "szip",
        id::NBIT => "nbit",
        id::SCALEOFFSET => "scaleoffset",
        id::LZO => "lzo",
        id::BZIP2 => "bzip2",
        id::LZF => "lzf",
        id::BLOSC => "blosc",
        id::BITSHUFFLE => "bitshuffle",
        id::BLOSC2 => "blosc2",
        _ => "unknown",
    }
}

/// Whether [`decode`] implements filter `id` (the parallel reader falls back to libhdf5's own
/// pipeline when a dataset uses any other).
pub fn decodes_in_rust(filter: i32) -> bool {
    matches!(
        filter,
        id::DEFLATE
            | id::SHUFFLE
            | id::LZO
            | id::LZF
            | id::BZIP2
            | id::BLOSC
            | id::BLOSC2
            | id::BITSHUFFLE
            | id::SZIP
    )
}

/// Undoes one filter: `input` is what the filter produced when writing, `cd_values` its client
/// data as stored in the dataset's pipeline, `expected` the decoded size when the caller knows
/// it (a full chunk). Thread-safe; never enters libhdf5.
pub fn decode(
    filter: i32,
    cd_values: &[u32],
    input: &[u8],
    expected: Option<usize>,
) -> Result<Vec<u8>> {
    let out = match filter {
        id::DEFLATE => inflate(input, expected),
        id::SHUFFLE => Ok(unshuffle(
            input,
            cd_values.first().copied().unwrap_or(1) as usize,
        )),
        id::LZO => lzo::decode(cd_values, input, expected),
        id::LZF => lzf::decode(cd_values, input, expected),
        id::BZIP2 => bunzip2(input, expected),
        id::BLOSC => blosc::decode_blosc1(input, expected),
        id::BLOSC2 => blosc::decode_blosc2(input, expected),
        id::BITSHUFFLE => bitshuffle::decode(cd_values, input, expected),
        id::SZIP => szip::decode(cd_values, input, expected),
        other => Err(Error::unsupported(format!(
            "filter {other} ({}) is not decoded by sciio",
            filter_name(other)
        ))),
    }?;
    if let Some(n) = expected {
        if out.len() != n && filter != id::SHUFFLE {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!(
                    "{} filter produced {} bytes, the chunk holds {n}",
                    filter_name(filter),
                    out.len()
                ),
            ));
        }
    }
    Ok(out)
}

/// Reads a decoder's output up to `cap` bytes, failing (as corrupt) beyond it.
fn read_bounded(mut reader: impl Read, expected: Option<usize>, what: &str) -> Result<Vec<u8>> {
    let cap = expected.unwrap_or(MAX_CHUNK_BYTES);
    let mut out = Vec::with_capacity(expected.unwrap_or(0));
    let n = (&mut reader)
        .take(cap as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error::new(ErrorKind::Corrupt, format!("{what} stream is invalid: {e}")))?;
    if n > cap {
        return Err(Error::new(
            ErrorKind::Corrupt,
            format!("{what} stream decodes to more than the {cap} bytes of a chunk"),
        ));
    }
    Ok(out)
}

fn inflate(input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    read_bounded(flate2::read::ZlibDecoder::new(input), expected, "zlib")
}

fn bunzip2(input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    // PyTables' H5Zbzip2.c writes one bzip2 stream per chunk, no header of its own.
    read_bounded(bzip2::read::BzDecoder::new(input), expected, "bzip2")
}

/// Reverses HDF5's shuffle filter: the encoder wrote byte 0 of every element, then byte 1...;
/// a tail shorter than one element was left as is.
pub fn unshuffle(input: &[u8], elem_size: usize) -> Vec<u8> {
    let mut out = vec![0u8; input.len()];
    shuffle::unshuffle_into(input, elem_size, &mut out);
    out
}
