//! Blosc (filter 32001) and Blosc2 (filter 32026) chunks, decoded with the C libraries.
//!
//! Blosc1 frames are decoded by c-blosc2, whose decoder takes the input length and checks every
//! offset against it (c-blosc1's `blosc_decompress` does not); only Snappy-compressed frames,
//! which c-blosc2 cannot decode, go to c-blosc1 after `blosc_cbuffer_validate`.
//! Blosc2 chunks are super-chunk frames (`blosc2_schunk_to_buffer`, as PyTables' and
//! hdf5-blosc2's filter write them), holding one chunk, or a b2nd array for n-d chunks.

use std::ffi::{c_int, c_void};

use blosc2_sys as b2;
use sciio_core::{Error, ErrorKind, Result};

use super::{b2nd_meta, MAX_CHUNK_BYTES};

const BLOSC1_HEADER: usize = 16;
const SNAPPY_FORMAT: u8 = 2;

/// Starts c-blosc2 once per process: before filters are registered, and before any direct
/// [`crate::decode`] call (a caller that never touched libhdf5, such as a fuzz target, would
/// otherwise hand frames to an uninitialised library).
pub fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: initialises c-blosc2's global tables, once.
    ONCE.call_once(|| unsafe { b2::blosc2_init() });
}

fn corrupt(what: &str) -> Error {
    Error::new(ErrorKind::Corrupt, what.to_string())
}

fn le_u32(b: &[u8], at: usize) -> usize {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w) as usize
}

/// Decodes one Blosc1 frame.
pub(super) fn decode_blosc1(input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    init();
    if input.len() < BLOSC1_HEADER {
        return Err(corrupt("blosc frame shorter than its 16-byte header"));
    }
    let nbytes = le_u32(input, 4);
    let cbytes = le_u32(input, 12);
    if cbytes > input.len() {
        return Err(Error::truncated(format!(
            "blosc frame announces {cbytes} bytes, {} present",
            input.len()
        )));
    }
    check_size(nbytes, expected, "blosc")?;
    let format = input[2] >> 5;
    let mut out = vec![0u8; nbytes];
    if nbytes == 0 {
        return Ok(out);
    }
    let n = if format == SNAPPY_FORMAT {
        let mut announced = 0usize;
        // SAFETY: validate reads at most `cbytes` bytes, which are in `input`.
        let ok = unsafe {
            blosc_src::blosc_cbuffer_validate(input.as_ptr().cast(), cbytes, &mut announced)
        };
        if ok < 0 || announced != nbytes {
            return Err(corrupt("blosc (snappy) frame fails validation"));
        }
        // SAFETY: the frame was validated against its length; `out` holds `nbytes`.
        unsafe {
            blosc_src::blosc_decompress_ctx(
                input.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                nbytes,
                1,
            )
        }
    } else {
        decompress_chunk(&input[..cbytes], &mut out)?
    };
    if n < 0 || n as usize != nbytes {
        return Err(corrupt("blosc frame does not decode"));
    }
    Ok(out)
}

fn check_size(n: usize, expected: Option<usize>, what: &str) -> Result<()> {
    match expected {
        Some(e) if e != n => Err(corrupt(&format!(
            "{what} frame holds {n} bytes, the chunk holds {e}"
        ))),
        _ if n > MAX_CHUNK_BYTES => Err(corrupt(&format!(
            "{what} frame announces {n} bytes, more than a chunk can hold"
        ))),
        _ => Ok(()),
    }
}

/// Decodes a Blosc1/Blosc2 chunk (not a frame) with a private decompression context.
fn decompress_chunk(chunk: &[u8], out: &mut [u8]) -> Result<i32> {
    let src_len = i32::try_from(chunk.len()).map_err(|_| corrupt("blosc chunk over 2 GiB"))?;
    let dst_len = i32::try_from(out.len()).map_err(|_| corrupt("blosc chunk over 2 GiB"))?;
    // SAFETY: the context is private to this call; c-blosc2 bounds reads by `src_len` and
    // writes by `dst_len`.
    unsafe {
        let dparams = b2::blosc2_dparams {
            nthreads: 1,
            schunk: std::ptr::null_mut(),
            postfilter: None,
            postparams: std::ptr::null_mut(),
        };
        let ctx = b2::blosc2_create_dctx(dparams);
        if ctx.is_null() {
            return Err(corrupt("cannot create a blosc2 decompression context"));
        }
        let n = b2::blosc2_decompress_ctx(
            ctx,
            chunk.as_ptr().cast(),
            src_len,
            out.as_mut_ptr().cast(),
            dst_len,
        );
        b2::blosc2_free_ctx(ctx);
        Ok(n)
    }
}

/// The leading fields of c-blosc2's `b2nd_array_t` (b2nd.h), read from arrays it allocates.
#[repr(C)]
pub(crate) struct B2ndArrayHead {
    sc: *mut b2::blosc2_schunk,
    shape: [i64; 8],
    chunkshape: [i32; 8],
    extshape: [i64; 8],
    blockshape: [i32; 8],
    extchunkshape: [i64; 8],
    nitems: i64,
    chunknitems: i32,
    extnitems: i64,
    blocknitems: i32,
    extchunknitems: i64,
    ndim: i8,
}

extern "C" {
    fn b2nd_from_schunk(schunk: *mut b2::blosc2_schunk, array: *mut *mut B2ndArrayHead) -> c_int;
    fn b2nd_get_slice_cbuffer(
        array: *const B2ndArrayHead,
        start: *const i64,
        stop: *const i64,
        buffer: *mut c_void,
        buffershape: *const i64,
        buffersize: i64,
    ) -> c_int;
    pub(crate) fn b2nd_free(array: *mut B2ndArrayHead) -> c_int;
}

/// The content of the super-chunk's metalayer called `name`, if it has one (c-blosc2's
/// `blosc2_meta_exists` is a header-only inline function, so the lookup is re-done here over
/// the same fields).
///
/// # Safety
/// `sc` must point to a valid super-chunk that outlives the returned slice.
unsafe fn metalayer<'a>(sc: *const b2::blosc2_schunk, name: &[u8]) -> Option<&'a [u8]> {
    // SAFETY: guaranteed by the caller; c-blosc2 keeps `nmetalayers` valid entries, each with
    // `content_len` bytes at `content`.
    unsafe {
        let n = usize::from((*sc).nmetalayers).min(16);
        let m = (&(*sc).metalayers)[..n].iter().copied().find(|&m| {
            !m.is_null()
                && !(*m).name.is_null()
                && std::ffi::CStr::from_ptr((*m).name).to_bytes() == name
        })?;
        let len = usize::try_from((*m).content_len).ok()?;
        if (*m).content.is_null() {
            return Some(&[]);
        }
        Some(std::slice::from_raw_parts((*m).content, len))
    }
}

/// Owns a super-chunk view over a borrowed frame.
struct Schunk(*mut b2::blosc2_schunk);

impl Drop for Schunk {
    fn drop(&mut self) {
        // SAFETY: created by blosc2_schunk_from_buffer without copying; freed once.
        unsafe { b2::blosc2_schunk_free(self.0) };
    }
}

/// Decodes one Blosc2 chunk as written by hdf5-blosc2 / PyTables (a super-chunk frame).
pub(super) fn decode_blosc2(input: &[u8], expected: Option<usize>) -> Result<Vec<u8>> {
    init();
    // c-blosc2 wants a mutable pointer but does not write through it when `copy` is false;
    // a private copy keeps that promise independent of the library.
    let mut frame = input.to_vec();
    // SAFETY: the frame lives until the Schunk is dropped at the end of this function.
    let sc =
        unsafe { b2::blosc2_schunk_from_buffer(frame.as_mut_ptr(), frame.len() as i64, false) };
    if sc.is_null() {
        return Err(corrupt("blosc2 chunk is not a valid super-chunk frame"));
    }
    let schunk = Schunk(sc);
    // SAFETY: `sc` is a valid super-chunk, alive while `meta` is used.
    let meta = unsafe { metalayer(sc, b"b2nd").or_else(|| metalayer(sc, b"caterva")) };
    let out = if let Some(meta) = meta {
        // c-blosc2 trusts the b2nd record; it must pass sciio's checks before c-blosc2 reads it.
        // SAFETY: `sc` is a valid super-chunk.
        let (typesize, nchunks) = unsafe { ((*sc).typesize, (*sc).nchunks) };
        b2nd_meta::parse(meta)?.check(typesize, nchunks, expected, MAX_CHUNK_BYTES)?;
        decode_b2nd(&schunk, expected)?
    } else {
        decode_first_chunk(&schunk, expected)?
    };
    drop(schunk);
    drop(frame);
    Ok(out)
}

fn decode_first_chunk(schunk: &Schunk, expected: Option<usize>) -> Result<Vec<u8>> {
    let mut chunk: *mut u8 = std::ptr::null_mut();
    let mut needs_free = false;
    // SAFETY: valid super-chunk; the returned pointer is either inside the frame or malloc'ed.
    let cbytes =
        unsafe { b2::blosc2_schunk_get_lazychunk(schunk.0, 0, &mut chunk, &mut needs_free) };
    if cbytes < 0 || chunk.is_null() {
        return Err(corrupt("blosc2 frame holds no chunk"));
    }
    // SAFETY: c-blosc2 reports `cbytes` readable bytes at `chunk`.
    let bytes = unsafe { std::slice::from_raw_parts(chunk, cbytes as usize) }.to_vec();
    if needs_free {
        // SAFETY: malloc'ed by c-blosc2 for us.
        unsafe { libc_free(chunk.cast()) };
    }
    let mut nbytes = 0i32;
    if bytes.len() < BLOSC1_HEADER {
        return Err(corrupt("blosc2 chunk shorter than its header"));
    }
    // SAFETY: header is at least 16 bytes long (checked above).
    unsafe {
        b2::blosc2_cbuffer_sizes(
            bytes.as_ptr().cast(),
            &mut nbytes,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    let nbytes = usize::try_from(nbytes).map_err(|_| corrupt("blosc2 chunk size is negative"))?;
    check_size(nbytes, expected, "blosc2")?;
    let mut out = vec![0u8; nbytes];
    if nbytes == 0 {
        return Ok(out);
    }
    let n = decompress_chunk(&bytes, &mut out)?;
    if n < 0 || n as usize != nbytes {
        return Err(corrupt("blosc2 chunk does not decode"));
    }
    Ok(out)
}

extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut c_void);
}

fn decode_b2nd(schunk: &Schunk, expected: Option<usize>) -> Result<Vec<u8>> {
    let mut array: *mut B2ndArrayHead = std::ptr::null_mut();
    // SAFETY: valid super-chunk; b2nd_from_schunk borrows it.
    if unsafe { b2nd_from_schunk(schunk.0, &mut array) } < 0 || array.is_null() {
        return Err(corrupt("blosc2 b2nd chunk has invalid metadata"));
    }
    struct Array(*mut B2ndArrayHead);
    impl Drop for Array {
        fn drop(&mut self) {
            // SAFETY: allocated by b2nd_from_schunk; frees the array, not the borrowed schunk.
            unsafe {
                (*self.0).sc = std::ptr::null_mut();
                b2nd_free(self.0)
            };
        }
    }
    let array = Array(array);
    // SAFETY: c-blosc2 filled the head fields.
    let head = unsafe { &*array.0 };
    let ndim = usize::try_from(head.ndim).unwrap_or(0).min(8);
    let typesize = usize::try_from(unsafe { (*schunk.0).typesize }).unwrap_or(0);
    let mut items: usize = 1;
    for &d in &head.shape[..ndim] {
        let d = usize::try_from(d).map_err(|_| corrupt("b2nd shape is negative"))?;
        items = items
            .checked_mul(d)
            .ok_or_else(|| corrupt("b2nd shape overflows"))?;
    }
    let size = items
        .checked_mul(typesize)
        .ok_or_else(|| corrupt("b2nd size overflows"))?;
    check_size(size, expected, "blosc2 b2nd")?;
    let mut out = vec![0u8; size];
    let start = [0i64; 8];
    let stop = head.shape;
    // SAFETY: `out` holds exactly shape × typesize bytes, the size we pass.
    let rc = unsafe {
        b2nd_get_slice_cbuffer(
            array.0,
            start.as_ptr(),
            stop.as_ptr(),
            out.as_mut_ptr().cast(),
            stop.as_ptr(),
            size as i64,
        )
    };
    if rc < 0 {
        return Err(corrupt("blosc2 b2nd chunk does not decode"));
    }
    Ok(out)
}
