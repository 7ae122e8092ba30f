//! The HDF5 filters PyTables files use that libhdf5 itself lacks, registered with `H5Zregister`
//! when sciio first touches libhdf5, plus a pure-Rust pipeline decoder used by the parallel
//! direct-chunk reader ([`crate::Dataset::read_parallel`]).
//!
//! | id    | filter     | decoder                                                            |
//! |-------|------------|--------------------------------------------------------------------|
//! | 1     | deflate    | `flate2` (zlib-rs), parallel path only (libhdf5 has its own)        |
//! | 2     | shuffle    | hand-written (a byte transpose), parallel path only                 |
//! | 32001 | blosc      | c-blosc2 (reads Blosc1 frames, bounds-checked); c-blosc for snappy  |
//! | 32026 | blosc2     | c-blosc2 super-chunk frames, incl. b2nd (n-d) chunks               |
//! | 32000 | LZF        | hand-written (h5py's `lzf_filter.c` blocks); also written          |
//! | 305   | LZO        | `lzo` (safe LZO1X decoder), with or without PyTables' trailer      |
//! | 307   | bzip2      | `bzip2` (libbz2-rs)                                                 |
//! | 4     | szip       | `tensogram-szip` (pure Rust libaec) + libaec's szlib framing       |
//! | 32008 | bitshuffle | hand-written transpose; LZ4 blocks `lz4_flex`, zstd frames `zstd`  |
//!
//! sciio only reads with these filters here: their encode direction fails cleanly (the
//! writer registers encoder-capable classes, `write/register.rs`).

mod b2nd_meta;
mod bitshuffle;
pub(crate) mod blosc;
pub(crate) mod lzf;
mod lzo;
pub(crate) mod shuffle;
mod szip;

use std::ffi::{c_uint, c_void};
use std::io::Read;
use std::sync::Once;

use hdf5_sys::h5::{H5allocate_memory, H5free_memory};
use hdf5_sys::h5z::{H5Z_class2_t, H5Z_filter_t, H5Zregister, H5Z_CLASS_T_VERS, H5Z_FLAG_REVERSE};
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
pub(crate) const MAX_CHUNK_BYTES: usize = u32::MAX as usize;

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

/// Registers sciio's filters with libhdf5 (once per process).
pub(crate) fn ensure_registered() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        blosc::init();
        hdf5::sync::sync(|| {
            for class in [
                &BLOSC_CLASS,
                &BLOSC2_CLASS,
                &LZO_CLASS,
                &LZF_CLASS,
                &BZIP2_CLASS,
                &BITSHUFFLE_CLASS,
            ] {
                // SAFETY: the class structs are 'static and their callbacks never unwind.
                unsafe { H5Zregister((&class.0 as *const H5Z_class2_t).cast()) };
            }
            // H5Zregister refuses ids below 256 ("predefined filters"), szip's 4 included, so
            // szip goes through the library-internal call H5Z_init uses for built-in filters
            // (a plain C symbol of the statically linked libhdf5; same class struct contract).
            // SAFETY: the class struct is 'static and its callback never unwinds.
            unsafe { H5Z_register(&SZIP_CLASS.0) };
            // SAFETY: clearing the error stack of a failed registration (kept silent).
            unsafe { hdf5_sys::h5e::H5Eclear2(hdf5_sys::h5e::H5E_DEFAULT) };
        });
    });
}

unsafe extern "C" {
    /// libhdf5's internal registration (H5Zprivate.h), without H5Zregister's id >= 256 rule.
    pub(crate) fn H5Z_register(cls: *const H5Z_class2_t) -> hdf5_sys::h5::herr_t;
}

/// A filter class description; only read by libhdf5 (names are 'static literals).
struct FilterClass(H5Z_class2_t);

// SAFETY: the struct is immutable and its pointers point to 'static string literals.
unsafe impl Sync for FilterClass {}

macro_rules! filter_class {
    ($class:ident, $func:ident, $id:expr, $name:literal) => {
        static $class: FilterClass = FilterClass(H5Z_class2_t {
            version: H5Z_CLASS_T_VERS as _,
            id: $id as H5Z_filter_t,
            encoder_present: 0,
            decoder_present: 1,
            name: concat!($name, "\0").as_ptr().cast(),
            can_apply: None,
            set_local: None,
            filter: Some($func),
        });

        // SAFETY: libhdf5 calls the filter with its documented arguments (cd_values: cd_nelmts
        // values; *buf: buf_size bytes, allocated with H5allocate_memory); the body checks them
        // before use.
        unsafe extern "C" fn $func(
            flags: c_uint,
            cd_nelmts: usize,
            cd_values: *const c_uint,
            nbytes: usize,
            buf_size: *mut usize,
            buf: *mut *mut c_void,
        ) -> usize {
            // SAFETY: libhdf5 passes valid pointers per the H5Z_func_t contract.
            unsafe { run_filter($id, flags, cd_nelmts, cd_values, nbytes, buf_size, buf) }
        }
    };
}

filter_class!(BLOSC_CLASS, h5z_blosc, id::BLOSC, "blosc (sciio)");
filter_class!(BLOSC2_CLASS, h5z_blosc2, id::BLOSC2, "blosc2 (sciio)");
filter_class!(LZO_CLASS, h5z_lzo, id::LZO, "lzo (sciio)");
filter_class!(LZF_CLASS, h5z_lzf, id::LZF, "lzf (sciio)");
filter_class!(BZIP2_CLASS, h5z_bzip2, id::BZIP2, "bzip2 (sciio)");
filter_class!(SZIP_CLASS, h5z_szip, id::SZIP, "szip (sciio)");
filter_class!(
    BITSHUFFLE_CLASS,
    h5z_bitshuffle,
    id::BITSHUFFLE,
    "bitshuffle (sciio)"
);

/// The body shared by every registered filter: decode in Rust, hand the result back in a
/// buffer from libhdf5's allocator. Returns 0 (failure) on any error and for encoding.
///
/// # Safety
/// The pointers must follow libhdf5's H5Z_func_t contract.
unsafe fn run_filter(
    filter: i32,
    flags: c_uint,
    cd_nelmts: usize,
    cd_values: *const c_uint,
    nbytes: usize,
    buf_size: *mut usize,
    buf: *mut *mut c_void,
) -> usize {
    if flags & H5Z_FLAG_REVERSE == 0 || buf.is_null() || buf_size.is_null() {
        return 0; // sciio writes no data through these filters
    }
    let outcome = std::panic::catch_unwind(|| {
        // SAFETY: libhdf5 guarantees `cd_values[..cd_nelmts]` and `(*buf)[..nbytes]` are valid.
        let cd: &[u32] = if cd_values.is_null() || cd_nelmts == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(cd_values, cd_nelmts) }
        };
        let input = unsafe { std::slice::from_raw_parts(*buf as *const u8, nbytes) };
        decode(filter, cd, input, None)
    });
    let Ok(Ok(out)) = outcome else { return 0 };
    // SAFETY: the new buffer comes from libhdf5's allocator, which frees the old one and will
    // free this one; sizes match the copy.
    unsafe {
        let new = H5allocate_memory(out.len().max(1), 0);
        if new.is_null() {
            return 0;
        }
        std::ptr::copy_nonoverlapping(out.as_ptr(), new as *mut u8, out.len());
        H5free_memory(*buf);
        *buf = new;
        *buf_size = out.len().max(1);
    }
    out.len()
}
