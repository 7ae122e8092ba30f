//! Decoding one stored chunk straight into its place in the output buffer, for the parallel
//! reader ([`crate::Dataset::read_rows_parallel`]).
//!
//! [`crate::filters::decode`] returns a fresh `Vec` per filter, which costs an allocation, a
//! copy and — for chunks of megabytes, which the allocator maps afresh — page faults on every
//! chunk. The pipelines PyTables and MATLAB write are one compressor, optionally after a byte
//! shuffle; those are decoded here into the caller's slice (zlib through zlib-rs, Blosc and
//! Blosc2 through one c-blosc2 decompression context per worker). Anything else goes through
//! the general decoder and is copied.

use std::ffi::c_void;

use blosc2_sys as b2;
use flate2::{Decompress, FlushDecompress, Status};
use sciio_core::{Error, ErrorKind, Result};

use crate::file::Filter;
use crate::filters::{self, id};

/// Blosc1 and Blosc2 chunk headers are 16 bytes at least (version, flags, typesize, nbytes,
/// blocksize, cbytes).
const BLOSC_HEADER: usize = 16;
/// Blosc1's format code for Snappy, which c-blosc2 cannot decode.
const BLOSC_SNAPPY: u8 = 2;

fn corrupt(what: impl Into<String>) -> Error {
    Error::new(ErrorKind::Corrupt, what.into())
}

/// Per-worker state reused across chunks: buffers and decompression contexts.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The stored (filtered) bytes of the chunk being decoded.
    pub(crate) raw: Vec<u8>,
    /// A whole decoded chunk, when only part of it is wanted.
    pub(crate) chunk: Vec<u8>,
    /// Output of the compressor stage when a shuffle stage follows.
    between: Vec<u8>,
    inflate: Option<Decompress>,
    blosc: Option<BloscContext>,
}

/// A c-blosc2 decompression context owned by one worker (contexts are not thread-safe).
struct BloscContext(*mut b2::blosc2_context);

impl BloscContext {
    fn new() -> Result<BloscContext> {
        let dparams = b2::blosc2_dparams {
            nthreads: 1,
            schunk: std::ptr::null_mut(),
            postfilter: None,
            postparams: std::ptr::null_mut(),
        };
        // SAFETY: plain constructor; the parameters hold no borrowed pointer.
        let ctx = unsafe { b2::blosc2_create_dctx(dparams) };
        if ctx.is_null() {
            return Err(corrupt("cannot create a blosc2 decompression context"));
        }
        Ok(BloscContext(ctx))
    }
}

impl Drop for BloscContext {
    fn drop(&mut self) {
        // SAFETY: created by blosc2_create_dctx, freed once.
        unsafe { b2::blosc2_free_ctx(self.0) };
    }
}

/// Undoes `pipeline` (skipping the filters masked off for this chunk) on `scratch.raw`,
/// writing exactly `out.len()` bytes — the whole chunk — into `out`.
pub(crate) fn decode_into(
    pipeline: &[Filter],
    mask: u32,
    elem: usize,
    scratch: &mut Scratch,
    out: &mut [u8],
) -> Result<()> {
    // Filters to undo, last applied first.
    let mut stages: Vec<&Filter> = pipeline
        .iter()
        .enumerate()
        .rev()
        .filter(|(i, _)| *i >= 32 || mask & (1 << i) == 0)
        .map(|(_, f)| f)
        .collect();
    if stages.first().is_some_and(|f| f.id == id::FLETCHER32) {
        strip_fletcher32(&mut scratch.raw)?;
        stages.remove(0);
    }
    let shuffle_size = |f: &Filter| f.cd_values.first().map_or(elem, |&s| s as usize);
    match stages.as_slice() {
        [] => copy_exact(&scratch.raw, out),
        [s] if s.id == id::SHUFFLE => {
            if scratch.raw.len() != out.len() {
                return Err(size_mismatch(scratch.raw.len(), out.len()));
            }
            sciio_codecs::shuffle::unshuffle_into(&scratch.raw, shuffle_size(s), out);
            Ok(())
        }
        [c] => {
            let Scratch {
                raw,
                inflate,
                blosc,
                ..
            } = scratch;
            decompress_into(c, raw, out, inflate, blosc)
        }
        [c, s] if s.id == id::SHUFFLE && c.id != id::SHUFFLE => {
            let Scratch {
                raw,
                between,
                inflate,
                blosc,
                ..
            } = scratch;
            between.resize(out.len(), 0);
            decompress_into(c, raw, between, inflate, blosc)?;
            sciio_codecs::shuffle::unshuffle_into(between, shuffle_size(s), out);
            Ok(())
        }
        _ => {
            let mut data = std::mem::take(&mut scratch.raw);
            for f in stages {
                data = if f.id == id::SHUFFLE {
                    filters::unshuffle(&data, shuffle_size(f))
                } else {
                    filters::decode(f.id, &f.cd_values, &data, None)?
                };
            }
            copy_exact(&data, out)
        }
    }
}

/// Checks and removes the Fletcher-32 checksum that libhdf5's filter appends to a chunk
/// (little-endian). Like H5Zfletcher32.c, the checksum with the bytes of each 16-bit half
/// swapped is accepted too: libhdf5 before 1.6.3 wrote that on little-endian machines.
pub(crate) fn strip_fletcher32(data: &mut Vec<u8>) -> Result<()> {
    let Some(body) = data.len().checked_sub(4) else {
        return Err(corrupt("chunk shorter than its Fletcher-32 checksum"));
    };
    let mut stored = [0u8; 4];
    stored.copy_from_slice(&data[body..]);
    let stored = u32::from_le_bytes(stored);
    let sum = crate::write::fletcher32(&data[..body]);
    let swapped = ((sum & 0x00ff_00ff) << 8) | ((sum >> 8) & 0x00ff_00ff);
    if stored != sum && stored != swapped {
        return Err(corrupt(
            "data error detected by the Fletcher-32 checksum (the chunk is damaged)",
        ));
    }
    data.truncate(body);
    Ok(())
}

fn size_mismatch(got: usize, want: usize) -> Error {
    corrupt(format!("chunk decodes to {got} bytes, {want} expected"))
}

fn copy_exact(data: &[u8], out: &mut [u8]) -> Result<()> {
    if data.len() != out.len() {
        return Err(size_mismatch(data.len(), out.len()));
    }
    out.copy_from_slice(data);
    Ok(())
}

/// One compressor stage into `out` (exactly the chunk's size).
fn decompress_into(
    f: &Filter,
    input: &mut [u8],
    out: &mut [u8],
    inflate: &mut Option<Decompress>,
    blosc: &mut Option<BloscContext>,
) -> Result<()> {
    match f.id {
        id::DEFLATE => inflate_into(input, out, inflate),
        id::BLOSC2 => {
            if blosc2_frame_into(input, out, blosc)? {
                Ok(())
            } else {
                general(f, input, out)
            }
        }
        id::BLOSC => {
            if input.len() >= BLOSC_HEADER && input[2] >> 5 != BLOSC_SNAPPY {
                blosc_chunk_into(input, out, blosc)
            } else {
                general(f, input, out)
            }
        }
        _ => general(f, input, out),
    }
}

fn general(f: &Filter, input: &[u8], out: &mut [u8]) -> Result<()> {
    let data = filters::decode(f.id, &f.cd_values, input, Some(out.len()))?;
    copy_exact(&data, out)
}

/// A zlib stream (HDF5's deflate filter) into exactly `out`.
fn inflate_into(input: &[u8], out: &mut [u8], state: &mut Option<Decompress>) -> Result<()> {
    let d = state.get_or_insert_with(|| Decompress::new(true));
    d.reset(true);
    let status = d
        .decompress(input, out, FlushDecompress::Finish)
        .map_err(|e| corrupt(format!("zlib stream is invalid: {e}")))?;
    let produced = d.total_out();
    match status {
        Status::StreamEnd if produced == out.len() as u64 => Ok(()),
        Status::StreamEnd => Err(size_mismatch(produced as usize, out.len())),
        // The output is full but the stream goes on, or the input ended early.
        _ if produced == out.len() as u64 => Err(corrupt(format!(
            "zlib stream decodes to more than the {} bytes of a chunk",
            out.len()
        ))),
        _ => Err(Error::truncated(format!(
            "zlib stream ends after {produced} of {} bytes",
            out.len()
        ))),
    }
}

/// A Blosc1 or Blosc2 chunk (not a frame) into exactly `out`; c-blosc2 bounds its reads by
/// the input length and its writes by the output length.
fn blosc_chunk_into(input: &[u8], out: &mut [u8], ctx: &mut Option<BloscContext>) -> Result<()> {
    if input.len() < BLOSC_HEADER {
        return Err(corrupt("blosc chunk shorter than its 16-byte header"));
    }
    let mut nbytes = 0i32;
    let mut cbytes = 0i32;
    // SAFETY: the header (16 bytes, checked above) is all that is read.
    unsafe {
        b2::blosc2_cbuffer_sizes(
            input.as_ptr().cast(),
            &mut nbytes,
            &mut cbytes,
            std::ptr::null_mut(),
        )
    };
    if usize::try_from(nbytes).ok() != Some(out.len()) {
        return Err(corrupt(format!(
            "blosc chunk holds {nbytes} bytes, the chunk holds {}",
            out.len()
        )));
    }
    let cbytes = usize::try_from(cbytes)
        .ok()
        .filter(|&c| c <= input.len())
        .ok_or_else(|| Error::truncated(format!("blosc chunk announces {cbytes} bytes")))?;
    if out.is_empty() {
        return Ok(());
    }
    let ctx = match ctx {
        Some(c) => c,
        None => ctx.insert(BloscContext::new()?),
    };
    let src_len = i32::try_from(cbytes).map_err(|_| corrupt("blosc chunk over 2 GiB"))?;
    let dst_len = i32::try_from(out.len()).map_err(|_| corrupt("blosc chunk over 2 GiB"))?;
    // SAFETY: `ctx` belongs to this worker; lengths are those of the two slices.
    let n = unsafe {
        b2::blosc2_decompress_ctx(
            ctx.0,
            input.as_ptr().cast::<c_void>(),
            src_len,
            out.as_mut_ptr().cast::<c_void>(),
            dst_len,
        )
    };
    if n != dst_len {
        return Err(corrupt("blosc chunk does not decode"));
    }
    Ok(())
}

/// Owns a super-chunk view over a borrowed frame.
struct FrameView(*mut b2::blosc2_schunk);

impl Drop for FrameView {
    fn drop(&mut self) {
        // SAFETY: made by blosc2_schunk_from_buffer without copying; freed once (the frame
        // buffer itself is not freed: c-blosc2 does not own it).
        unsafe { b2::blosc2_schunk_free(self.0) };
    }
}

/// A Blosc2 filter chunk — a super-chunk frame holding one Blosc2 chunk, as PyTables and
/// hdf5-blosc2 write it — decoded into `out` without copying the frame or the chunk. `false`
/// when the frame is not that simple shape (metalayers such as b2nd, several chunks): the
/// caller then uses the general decoder.
fn blosc2_frame_into(
    frame: &mut [u8],
    out: &mut [u8],
    ctx: &mut Option<BloscContext>,
) -> Result<bool> {
    let len = i64::try_from(frame.len()).map_err(|_| corrupt("blosc2 frame too large"))?;
    // SAFETY: `frame` outlives the view (dropped at the end of this function); with
    // copy = false c-blosc2 reads the frame in place, bounded by `len`.
    let sc = unsafe { b2::blosc2_schunk_from_buffer(frame.as_mut_ptr(), len, false) };
    if sc.is_null() {
        return Err(corrupt("blosc2 chunk is not a valid super-chunk frame"));
    }
    let view = FrameView(sc);
    // SAFETY: a valid super-chunk.
    let (nchunks, nmeta) = unsafe { ((*sc).nchunks, (*sc).nmetalayers) };
    if nchunks != 1 || nmeta != 0 {
        return Ok(false);
    }
    let mut chunk: *mut u8 = std::ptr::null_mut();
    let mut needs_free = false;
    // SAFETY: valid super-chunk over an in-memory frame: the chunk pointer points into it.
    let cbytes = unsafe { b2::blosc2_schunk_get_lazychunk(view.0, 0, &mut chunk, &mut needs_free) };
    if cbytes < 0 || chunk.is_null() {
        return Err(corrupt("blosc2 frame holds no chunk"));
    }
    if needs_free {
        // Not the in-frame pointer this fast path relies on: let the general decoder do it.
        // SAFETY: malloc'ed by c-blosc2 for us.
        unsafe { libc::free(chunk.cast()) };
        return Ok(false);
    }
    // SAFETY: c-blosc2 reports `cbytes` readable bytes at `chunk`, inside `frame`.
    let bytes = unsafe { std::slice::from_raw_parts(chunk, cbytes as usize) };
    blosc_chunk_into(bytes, out, ctx)?;
    drop(view);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(id: i32, cd: &[u32]) -> Filter {
        Filter {
            id,
            name: filters::filter_name(id).to_string(),
            cd_values: cd.to_vec(),
            flags: 0,
        }
    }

    #[test]
    fn deflate_and_shuffle_decode_into_place() {
        let data: Vec<u8> = (0..4000u32).flat_map(|i| (i * 3).to_le_bytes()).collect();
        let stages = [
            crate::write::FilterStage::shuffle(4),
            crate::write::FilterStage::deflate(4),
        ];
        let stored = crate::write::encode_chunk(&stages, data.clone()).unwrap();
        let pipeline = [filter(id::SHUFFLE, &[4]), filter(id::DEFLATE, &[4])];
        let mut scratch = Scratch {
            raw: stored.clone(),
            ..Scratch::default()
        };
        let mut out = vec![0u8; data.len()];
        decode_into(&pipeline, 0, 4, &mut scratch, &mut out).unwrap();
        assert_eq!(out, data);
        // Too small an output: a clean error.
        scratch.raw = stored;
        let mut short = vec![0u8; data.len() - 4];
        let err = decode_into(&pipeline, 0, 4, &mut scratch, &mut short).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    }

    #[test]
    fn corrupt_and_truncated_streams_fail_cleanly() {
        let data = vec![5u8; 10_000];
        let stored =
            crate::write::encode_chunk(&[crate::write::FilterStage::deflate(6)], data.clone())
                .unwrap();
        let pipeline = [filter(id::DEFLATE, &[6])];
        let mut out = vec![0u8; data.len()];
        let mut scratch = Scratch {
            raw: stored[..stored.len() / 2].to_vec(),
            ..Scratch::default()
        };
        assert!(decode_into(&pipeline, 0, 1, &mut scratch, &mut out).is_err());
        scratch.raw = vec![0xFFu8; 64];
        assert!(decode_into(&pipeline, 0, 1, &mut scratch, &mut out).is_err());
        // A masked-off filter is skipped: the stored bytes are the chunk itself.
        scratch.raw = data.clone();
        decode_into(&pipeline, 1, 1, &mut scratch, &mut out).unwrap();
        assert_eq!(out, data);
    }
}
