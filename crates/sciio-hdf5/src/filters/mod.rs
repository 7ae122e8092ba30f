//! The HDF5 filters PyTables files use that libhdf5 itself lacks, registered with `H5Zregister`
//! when sciio first touches libhdf5. The codecs themselves (and the pure-Rust pipeline decoder
//! the parallel direct-chunk reader uses, [`crate::Dataset::read_parallel`]) live in
//! `sciio-codecs`, usable without libhdf5; they are re-exported here.
//!
//! sciio only reads with the classes registered here: their encode direction fails cleanly (the
//! writer registers encoder-capable classes, `write/register.rs`).

use std::ffi::{c_uint, c_void};
use std::sync::Once;

use hdf5_sys::h5::{H5allocate_memory, H5free_memory};
use hdf5_sys::h5z::{H5Z_class2_t, H5Z_filter_t, H5Zregister, H5Z_CLASS_T_VERS, H5Z_FLAG_REVERSE};
pub use sciio_codecs::{decode, decodes_in_rust, filter_name, id, unshuffle, MAX_CHUNK_BYTES};

/// Registers sciio's filters with libhdf5 (once per process).
pub(crate) fn ensure_registered() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        sciio_codecs::init_blosc();
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
