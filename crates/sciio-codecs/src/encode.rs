//! Filter pipelines on the write side: what goes in a dataset's creation property list
//! (filter id, flags, client data exactly as PyTables records them) and the Rust/C encoders
//! that compress whole chunks outside libhdf5, so chunks are compressed on every core and handed
//! to `H5Dwrite_chunk` already filtered.

use std::ffi::{c_int, c_void, CStr};
use std::io::Write as _;

use sciio_core::{Error, ErrorKind, Result};

use crate::id;

/// A Blosc/Blosc2 internal codec (the numbering both libraries and PyTables' filters share).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BloscCodec {
    /// BloscLZ (code 0, the default).
    BloscLz,
    /// LZ4 (code 1).
    Lz4,
    /// LZ4HC (code 2).
    Lz4Hc,
    /// Snappy (code 3; Blosc 1 only).
    Snappy,
    /// zlib (code 4).
    Zlib,
    /// Zstandard (code 5).
    Zstd,
}

impl BloscCodec {
    /// The codec's number in cd_values.
    pub fn code(self) -> u32 {
        match self {
            BloscCodec::BloscLz => 0,
            BloscCodec::Lz4 => 1,
            BloscCodec::Lz4Hc => 2,
            BloscCodec::Snappy => 3,
            BloscCodec::Zlib => 4,
            BloscCodec::Zstd => 5,
        }
    }

    /// The codec for a cd_values number.
    pub fn from_code(code: u32) -> Option<BloscCodec> {
        Some(match code {
            0 => BloscCodec::BloscLz,
            1 => BloscCodec::Lz4,
            2 => BloscCodec::Lz4Hc,
            3 => BloscCodec::Snappy,
            4 => BloscCodec::Zlib,
            5 => BloscCodec::Zstd,
            _ => return None,
        })
    }

    /// The codec's name (`blosclz`, `lz4`, `lz4hc`, `snappy`, `zlib`, `zstd`).
    pub fn name(self) -> &'static str {
        match self {
            BloscCodec::BloscLz => "blosclz",
            BloscCodec::Lz4 => "lz4",
            BloscCodec::Lz4Hc => "lz4hc",
            BloscCodec::Snappy => "snappy",
            BloscCodec::Zlib => "zlib",
            BloscCodec::Zstd => "zstd",
        }
    }

    /// The codec named `name`.
    pub fn from_name(name: &str) -> Option<BloscCodec> {
        [
            BloscCodec::BloscLz,
            BloscCodec::Lz4,
            BloscCodec::Lz4Hc,
            BloscCodec::Snappy,
            BloscCodec::Zlib,
            BloscCodec::Zstd,
        ]
        .into_iter()
        .find(|c| c.name() == name)
    }

    fn c_name(self) -> &'static CStr {
        match self {
            BloscCodec::BloscLz => c"blosclz",
            BloscCodec::Lz4 => c"lz4",
            BloscCodec::Lz4Hc => c"lz4hc",
            BloscCodec::Snappy => c"snappy",
            BloscCodec::Zlib => c"zlib",
            BloscCodec::Zstd => c"zstd",
        }
    }
}

/// One stage of a write pipeline, in pipeline order. `cd_values` are the filter's client data
/// as stored in the file (PyTables' layout for its own filters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterStage {
    /// Filter id ([`crate::id`]).
    pub id: i32,
    /// Client data values, as stored.
    pub cd_values: Vec<u32>,
    /// Optional (`H5Z_FLAG_OPTIONAL`) or mandatory.
    pub optional: bool,
}

impl FilterStage {
    /// HDF5's byte shuffle over elements of `elem_size` bytes.
    pub fn shuffle(elem_size: usize) -> FilterStage {
        FilterStage {
            id: id::SHUFFLE,
            cd_values: vec![elem_size as u32],
            optional: true,
        }
    }

    /// zlib deflate at `level` (0–9).
    pub fn deflate(level: u32) -> FilterStage {
        FilterStage {
            id: id::DEFLATE,
            cd_values: vec![level.min(9)],
            optional: true,
        }
    }

    /// LZF as h5py writes it (optional; client data `[4, 0x0105, chunk bytes]`).
    pub fn lzf(chunk_bytes: usize) -> FilterStage {
        let [filter, lib] = crate::lzf::CD_VERSIONS;
        FilterStage {
            id: id::LZF,
            cd_values: vec![filter, lib, u32::try_from(chunk_bytes).unwrap_or(0)],
            optional: true,
        }
    }

    /// Fletcher-32 checksum (must be last).
    pub fn fletcher32() -> FilterStage {
        FilterStage {
            id: id::FLETCHER32,
            cd_values: vec![],
            optional: false,
        }
    }

    /// Encodes one chunk through this stage.
    pub fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        self.encode_threaded(input, 1)
    }

    /// Encodes one chunk through this stage; Blosc and Blosc2 split it over `threads` threads
    /// of their own (their output does not depend on it). Used when there are fewer chunks than
    /// cores, as PyTables runs Blosc2 with its own threads on each chunk.
    pub fn encode_threaded(&self, input: Vec<u8>, threads: usize) -> Result<Vec<u8>> {
        let threads = threads.clamp(1, 64);
        let cd = &self.cd_values;
        let at = |i: usize, default: u32| cd.get(i).copied().unwrap_or(default);
        match self.id {
            id::SHUFFLE => Ok(shuffle(&input, at(0, 1) as usize)),
            id::DEFLATE => deflate(&input, at(0, 6)),
            id::FLETCHER32 => {
                let mut out = input;
                let sum = fletcher32(&out);
                out.extend_from_slice(&sum.to_le_bytes());
                Ok(out)
            }
            id::BZIP2 => bzip2(&input, at(0, 9)),
            id::BLOSC | id::LZO => self.compress(&input, threads),
            // Unmasked writers cannot skip the stage: a chunk LZF cannot shrink is an error
            // there (libhdf5 then stores it unfiltered, the filter being optional).
            id::LZF => crate::lzf::encode(&input)
                .ok_or_else(|| Error::unsupported("LZF cannot shrink this chunk")),
            id::BLOSC2 => {
                let params = Blosc2Params {
                    level: at(4, 5),
                    shuffle: at(5, 1),
                    typesize: at(2, 1) as usize,
                    codec: at(6, 0),
                    blocksize: at(1, 0),
                    threads,
                };
                match b2nd_chunk_shape(cd, input.len()) {
                    Some(chunk) => blosc2_b2nd(&input, &params, &chunk),
                    None => blosc2(&input, &params),
                }
            }
            other => Err(Error::unsupported(format!(
                "sciio cannot write with filter {other} ({})",
                crate::filter_name(other)
            ))),
        }
    }

    /// Blosc, LZO and LZF, which compress from a borrowed chunk (so that it can be stored without
    /// them when they cannot shrink it).
    fn compress(&self, input: &[u8], threads: usize) -> Result<Vec<u8>> {
        let at = |i: usize, default: u32| self.cd_values.get(i).copied().unwrap_or(default);
        match self.id {
            id::BLOSC => blosc1(
                input,
                at(4, 5),
                at(5, 1),
                at(2, 1) as usize,
                at(6, 0),
                threads.clamp(1, 64),
            ),
            // An LZO1X stream (lzokay's encoder, MIT) that liblzo2's lzo1x_decompress_safe, as
            // PyTables' H5Zlzo.c calls it, decodes; not byte-identical to lzo1x_1_compress.
            id::LZO => lzokay_native::compress(input)
                .map_err(|e| Error::format(format!("LZO compression failed: {e:?}"))),
            // h5py's filter compresses into a buffer of the chunk's size and fails (the chunk
            // is stored unfiltered) when LZF cannot shrink it: an empty block stands for that.
            id::LZF => Ok(crate::lzf::encode(input).unwrap_or_default()),
            other => Err(Error::unsupported(format!(
                "filter {other} is not Blosc, LZO or LZF"
            ))),
        }
    }

    /// Whether PyTables' filter gives up on a chunk it compressed to `output` bytes from
    /// `input`: hdf5-blosc compresses into a buffer of the chunk's size, H5Zlzo.c fails unless
    /// the output is smaller. Being optional, the filter is then skipped for that chunk
    /// (libhdf5 stores it as it came, with the filter's bit set in the chunk's filter mask).
    /// libhdf5's deflate, bzip2 and Blosc2 store larger output as it is.
    fn gives_up(&self, input: usize, output: usize) -> bool {
        self.optional
            && match self.id {
                id::BLOSC => output > input,
                id::LZO => output >= input,
                id::LZF => output == 0 || output >= input,
                _ => false,
            }
    }
}

/// Runs a chunk through `pipeline` as libhdf5 runs PyTables' filters: the bytes to store and
/// the chunk's filter mask (bit `i`: stage `i` gave up and was skipped). Blosc stages use
/// `threads` threads of their own ([`FilterStage::encode_threaded`]).
pub fn encode_chunk_masked(
    pipeline: &[FilterStage],
    chunk: Vec<u8>,
    threads: usize,
) -> Result<(Vec<u8>, u32)> {
    let mut mask = 0u32;
    let mut data = chunk;
    for (i, stage) in pipeline.iter().enumerate() {
        if matches!(stage.id, id::BLOSC | id::LZO | id::LZF) && i < 32 {
            let out = stage.compress(&data, threads)?;
            if stage.gives_up(data.len(), out.len()) {
                mask |= 1 << i;
            } else {
                data = out;
            }
        } else {
            data = stage.encode_threaded(data, threads)?;
        }
    }
    Ok((data, mask))
}

/// Runs a chunk through every stage of `pipeline` (none skipped: for writers that record no
/// filter mask; see [`encode_chunk_masked`]).
pub fn encode_chunk(pipeline: &[FilterStage], chunk: Vec<u8>) -> Result<Vec<u8>> {
    pipeline
        .iter()
        .try_fold(chunk, |data, stage| stage.encode(data))
}

/// HDF5's shuffle: byte 0 of every element, then byte 1...; a tail shorter than an element
/// stays in place (as H5Zshuffle.c leaves it).
pub fn shuffle(input: &[u8], elem: usize) -> Vec<u8> {
    if elem <= 1 || input.len() < elem {
        return input.to_vec();
    }
    let n = input.len() / elem;
    let mut out = vec![0u8; input.len()];
    for (byte, plane) in out[..n * elem].chunks_exact_mut(n).enumerate() {
        for (i, o) in plane.iter_mut().enumerate() {
            *o = input[i * elem + byte];
        }
    }
    out[n * elem..].copy_from_slice(&input[n * elem..]);
    out
}

/// zlib deflate with `flate2` (zlib-rs). zlib-rs numbers its levels like zlib-ng: its level 1
/// is `deflate_quick`, which compresses about 8 % worse than zlib's level 1, and its level 2 runs
/// `deflate_fast` with exactly zlib's level-1 parameters (lazy 4, good 4, nice 8, chain 4). So
/// level 1 is encoded at zlib-rs level 2: files come out the size PyTables' (zlib) files are.
/// (zlib's own `compress2` cannot be called here: c-blosc2 links a zlib-ng copy under the same
/// symbol names.)
fn deflate(input: &[u8], level: u32) -> Result<Vec<u8>> {
    let effort = if level == 1 { 2 } else { level.min(9) };
    let mut enc = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(input.len() / 2),
        flate2::Compression::new(effort),
    );
    enc.write_all(input)
        .map_err(|e| Error::io("zlib compression failed", e))?;
    enc.finish()
        .map_err(|e| Error::io("zlib compression failed", e))
}

fn bzip2(input: &[u8], level: u32) -> Result<Vec<u8>> {
    let mut enc = bzip2::write::BzEncoder::new(
        Vec::with_capacity(input.len() / 2),
        bzip2::Compression::new(level.clamp(1, 9)),
    );
    enc.write_all(input)
        .map_err(|e| Error::io("bzip2 compression failed", e))?;
    enc.finish()
        .map_err(|e| Error::io("bzip2 compression failed", e))
}

/// HDF5's Fletcher-32 (`H5_checksum_fletcher32`): big-endian 16-bit words, sums starting at
/// 0, an odd last byte as the high half of a word.
pub fn fletcher32(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let fold = |s: u32| (s & 0xffff) + (s >> 16);
    let words = data.len() / 2;
    // 360 words is the most that can be summed without overflowing (as in H5checksum.c).
    for block in data[..words * 2].chunks(720) {
        for w in block.chunks_exact(2) {
            sum1 += (u32::from(w[0]) << 8) | u32::from(w[1]);
            sum2 += sum1;
        }
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    if let Some(&last) = data.get(words * 2) {
        sum1 += u32::from(last) << 8;
        sum2 += sum1;
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
    (sum2 << 16) | sum1
}

/// Blosc 1 frame with c-blosc (the library PyTables' `blosc` filter uses).
fn blosc1(
    input: &[u8],
    level: u32,
    shuffle: u32,
    typesize: usize,
    codec: u32,
    threads: usize,
) -> Result<Vec<u8>> {
    let codec = BloscCodec::from_code(codec)
        .ok_or_else(|| Error::invalid_input(format!("unknown blosc codec {codec}")))?;
    // PyTables' blosc filter: types wider than Blosc's 255-byte limit are compressed as bytes.
    let typesize = if typesize > 255 { 1 } else { typesize.max(1) };
    let mut out = vec![0u8; input.len() + 16];
    // SAFETY: `out` has room for the input plus Blosc's 16-byte overhead, the most a frame takes.
    let n = unsafe {
        blosc_src::blosc_compress_ctx(
            level.min(9) as c_int,
            shuffle as c_int,
            typesize,
            input.len(),
            input.as_ptr().cast(),
            out.as_mut_ptr().cast(),
            out.len(),
            codec.c_name().as_ptr(),
            0,
            threads as c_int,
        )
    };
    if n <= 0 {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("blosc ({}) compression failed ({n})", codec.name()),
        ));
    }
    out.truncate(n as usize);
    Ok(out)
}

/// The Blosc2 filter's compression parameters (cd_values 4, 5, 2, 6 and 1).
struct Blosc2Params {
    level: u32,
    shuffle: u32,
    typesize: usize,
    codec: u32,
    blocksize: u32,
    /// c-blosc2's own threads for this chunk.
    threads: usize,
}

fn blosc2_fail(what: &str) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        format!("blosc2 compression failed: {what}"),
    )
}

/// c-blosc2's compression parameters for `p`.
fn blosc2_cparams(p: &Blosc2Params) -> blosc2_sys::blosc2_cparams {
    use blosc2_sys as b2;
    // SAFETY: returns a plain struct of defaults.
    let mut cparams = unsafe { b2::blosc2_get_blosc2_cparams_defaults() };
    cparams.compcode = p.codec as u8;
    cparams.clevel = p.level.min(9) as u8;
    cparams.typesize = p.typesize.clamp(1, 255) as i32;
    cparams.nthreads = p.threads.clamp(1, 64) as i16;
    cparams.blocksize = p.blocksize as i32;
    cparams.filters[b2::BLOSC_LAST_FILTER as usize] = p.shuffle as u8;
    cparams
}

/// A Blosc2 super-chunk frame holding the chunk, as PyTables' `blosc2` filter writes 1-d
/// chunks (`blosc2_schunk_append_buffer` + `blosc2_schunk_to_buffer`).
fn blosc2(input: &[u8], p: &Blosc2Params) -> Result<Vec<u8>> {
    use blosc2_sys as b2;
    let fail = blosc2_fail;
    if input.len() > i32::MAX as usize - 64 {
        return Err(fail("chunk larger than 2 GiB"));
    }
    // c-blosc2 must be initialised (done once, with the filters' registration).
    crate::blosc::init();
    // SAFETY: parameters built from c-blosc2's defaults; the schunk and its frame are freed on
    // every path below.
    unsafe {
        let mut cparams = blosc2_cparams(p);
        let mut storage = b2::blosc2_get_blosc2_storage_defaults();
        storage.contiguous = false;
        storage.cparams = &mut cparams;
        let schunk = b2::blosc2_schunk_new(&mut storage);
        if schunk.is_null() {
            return Err(fail("cannot create a super-chunk"));
        }
        let appended = b2::blosc2_schunk_append_buffer(
            schunk,
            input.as_ptr() as *const c_void,
            input.len() as i32,
        );
        let mut frame: *mut u8 = std::ptr::null_mut();
        let mut needs_free = false;
        let len = if appended < 0 {
            -1
        } else {
            b2::blosc2_schunk_to_buffer(schunk, &mut frame, &mut needs_free)
        };
        let out = if len > 0 && !frame.is_null() {
            Ok(std::slice::from_raw_parts(frame, len as usize).to_vec())
        } else {
            Err(fail("cannot serialise the super-chunk"))
        };
        if needs_free && !frame.is_null() {
            libc_free(frame.cast());
        }
        b2::blosc2_schunk_free(schunk);
        out
    }
}

/// The chunk shape of an n-d chunk the Blosc2 filter stores as a B2ND array: cd_values 7
/// (rank, 2..=8) and 8.. (shape), when `input_len` is exactly one chunk (hdf5-blosc2 falls back
/// to a plain frame otherwise, e.g. after a checksum filter).
fn b2nd_chunk_shape(cd: &[u32], input_len: usize) -> Option<Vec<i32>> {
    let ndim = *cd.get(7)? as usize;
    if !(2..=8).contains(&ndim) {
        return None;
    }
    let shape: Vec<i32> = cd
        .get(8..8 + ndim)?
        .iter()
        .map(|&d| i32::try_from(d).ok().filter(|&d| d > 0))
        .collect::<Option<_>>()?;
    let typesize = *cd.get(2)? as usize;
    let bytes = shape
        .iter()
        .try_fold(typesize, |a, &d| a.checked_mul(d as usize))?;
    (bytes == input_len).then_some(shape)
}

/// hdf5-blosc2's `compute_b2nd_block_shape`: block dimensions start at 2 (1 where the chunk
/// has 1) and double from the innermost outwards, bounded by the chunk, while the block holds
/// at most `block_size` bytes. Returns the block shape and its size in bytes.
fn b2nd_block_shape(block_size: usize, typesize: usize, chunk: &[i32]) -> (Vec<i32>, usize) {
    let nitems = block_size / typesize.max(1);
    let mut block: Vec<i32> = chunk.iter().map(|&c| if c == 1 { 1 } else { 2 }).collect();
    let mut n: usize = block.iter().map(|&b| b as usize).product();
    if n >= nitems {
        return (block, n * typesize);
    }
    while n < nitems {
        let before = n;
        for i in (0..chunk.len()).rev() {
            if block[i] * 2 <= chunk[i] {
                if n * 2 <= nitems {
                    n *= 2;
                    block[i] *= 2;
                }
            } else if block[i] < chunk[i] {
                let extended = (n / block[i] as usize) * chunk[i] as usize;
                if extended <= nitems {
                    n = extended;
                    block[i] = chunk[i];
                }
            }
        }
        if n == before {
            break;
        }
    }
    (block, n * typesize)
}

/// A Blosc2 frame holding the chunk as a B2ND array (shape = chunk shape, block shape as
/// hdf5-blosc2 derives it from cd_values[1]), as PyTables' `blosc2` filter writes n-d chunks
/// (`b2nd_create_ctx` + `b2nd_from_cbuffer` + `b2nd_to_cframe`). c-blosc2 has these in the
/// static library blosc2-sys links, without bindings, hence the declarations here.
fn blosc2_b2nd(input: &[u8], p: &Blosc2Params, chunk: &[i32]) -> Result<Vec<u8>> {
    use crate::blosc::{b2nd_free, B2ndArrayHead};
    use std::ffi::c_char;
    extern "C" {
        fn b2nd_create_ctx(
            storage: *const blosc2_sys::blosc2_storage,
            ndim: i8,
            shape: *const i64,
            chunkshape: *const i32,
            blockshape: *const i32,
            dtype: *const c_char,
            dtype_format: i8,
            metalayers: *const c_void,
            nmetalayers: i32,
        ) -> *mut c_void;
        fn b2nd_free_ctx(ctx: *mut c_void) -> c_int;
        fn b2nd_from_cbuffer(
            ctx: *mut c_void,
            array: *mut *mut B2ndArrayHead,
            buffer: *const c_void,
            buffersize: i64,
        ) -> c_int;
        fn b2nd_to_cframe(
            array: *const B2ndArrayHead,
            cframe: *mut *mut u8,
            cframe_len: *mut i64,
            needs_free: *mut bool,
        ) -> c_int;
    }
    if input.len() > i32::MAX as usize - 64 {
        return Err(blosc2_fail("chunk larger than 2 GiB"));
    }
    crate::blosc::init();
    let blocksize = match p.blocksize {
        0 => {
            let codec = BloscCodec::from_code(p.codec);
            blosc2_blocksize(input.len(), p.typesize, p.level, codec) as usize
        }
        b => b as usize,
    };
    let (block, block_bytes) = b2nd_block_shape(blocksize, p.typesize, chunk);
    let shape: Vec<i64> = chunk.iter().map(|&c| i64::from(c)).collect();
    // numpy's opaque dtype of the element size, as hdf5-blosc2 records it ("|V8").
    let dtype = std::ffi::CString::new(format!("|V{}", p.typesize))
        .map_err(|_| blosc2_fail("dtype name"))?;
    // SAFETY: every pointer is valid for the call; ctx, array and frame are freed on all paths.
    unsafe {
        let mut cparams = blosc2_cparams(p);
        cparams.blocksize = block_bytes as i32;
        let mut storage = blosc2_sys::blosc2_get_blosc2_storage_defaults();
        storage.contiguous = false;
        storage.cparams = &mut cparams;
        let ctx = b2nd_create_ctx(
            &storage,
            chunk.len() as i8,
            shape.as_ptr(),
            chunk.as_ptr(),
            block.as_ptr(),
            dtype.as_ptr(),
            0,
            std::ptr::null(),
            0,
        );
        if ctx.is_null() {
            return Err(blosc2_fail("cannot create a B2ND context"));
        }
        let mut array: *mut B2ndArrayHead = std::ptr::null_mut();
        let made = b2nd_from_cbuffer(ctx, &mut array, input.as_ptr().cast(), input.len() as i64);
        let mut frame: *mut u8 = std::ptr::null_mut();
        let mut len = 0i64;
        let mut needs_free = false;
        let framed = made >= 0
            && !array.is_null()
            && b2nd_to_cframe(array, &mut frame, &mut len, &mut needs_free) >= 0;
        let out = if framed && len > 0 && !frame.is_null() {
            Ok(std::slice::from_raw_parts(frame, len as usize).to_vec())
        } else {
            Err(blosc2_fail("cannot compress the chunk as a B2ND array"))
        };
        if needs_free && !frame.is_null() {
            libc_free(frame.cast());
        }
        if !array.is_null() {
            b2nd_free(array);
        }
        b2nd_free_ctx(ctx);
        out
    }
}

/// The Blosc2 block size PyTables records in cd_values[1] (`compute_blosc2_blocksize` in
/// hdf5-blosc2: the block size c-blosc2 picks for a zero chunk of that size and type).
pub fn blosc2_blocksize(
    chunk_bytes: usize,
    typesize: usize,
    level: u32,
    codec: Option<BloscCodec>,
) -> u32 {
    use blosc2_sys as b2;
    let Ok(nbytes) = i32::try_from(chunk_bytes) else {
        return 0;
    };
    // SAFETY: `dest` has room for the 32-byte header c-blosc2 writes for a zero chunk.
    unsafe {
        let mut cparams = b2::blosc2_get_blosc2_cparams_defaults();
        if let Some(c) = codec {
            cparams.compcode = c.code() as u8;
        }
        cparams.clevel = level.min(9) as u8;
        cparams.typesize = typesize.clamp(1, 255) as i32;
        let mut dest = [0u8; b2::BLOSC2_MAX_OVERHEAD as usize];
        if b2::blosc2_chunk_zeros(cparams, nbytes, dest.as_mut_ptr().cast(), dest.len() as i32) < 0
        {
            return 0;
        }
        let mut blocksize = 0i32;
        if b2::blosc2_cbuffer_sizes(
            dest.as_ptr().cast(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut blocksize,
        ) < 0
        {
            return 0;
        }
        blocksize.max(0) as u32
    }
}

extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut c_void);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_round_trips_with_the_reader() {
        let data: Vec<u8> = (0..103u8).collect();
        assert_eq!(crate::unshuffle(&shuffle(&data, 4), 4), data);
    }

    #[test]
    fn every_codec_decodes_with_the_reader() {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i / 7).to_le_bytes())
            .collect();
        let stages = vec![
            FilterStage::deflate(5),
            FilterStage {
                id: id::BZIP2,
                cd_values: vec![9],
                optional: true,
            },
            FilterStage {
                id: id::LZO,
                cd_values: vec![1, 20, 0],
                optional: true,
            },
            FilterStage {
                id: id::BLOSC,
                cd_values: vec![2, 2, 4, 400_000, 5, 1, 1],
                optional: true,
            },
            FilterStage {
                id: id::BLOSC,
                cd_values: vec![2, 2, 4, 400_000, 5, 2, 5],
                optional: true,
            },
            FilterStage {
                id: id::BLOSC2,
                cd_values: vec![1, 0, 4, 400_000, 5, 1, 1],
                optional: true,
            },
            FilterStage {
                id: id::BLOSC2,
                cd_values: vec![1, 0, 4, 400_000, 9, 2, 5],
                optional: true,
            },
        ];
        for s in stages {
            let enc = s.encode(data.clone()).unwrap();
            assert!(enc.len() < data.len(), "filter {} did not compress", s.id);
            let dec = crate::decode(s.id, &s.cd_values, &enc, Some(data.len())).unwrap();
            assert_eq!(dec, data, "filter {}", s.id);
        }
    }
}
