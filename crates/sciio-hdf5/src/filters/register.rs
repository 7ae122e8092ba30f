//! sciio's filters registered with libhdf5, once per process, at the first libhdf5 call
//! ([`crate::handle::locked`]), for reading and writing alike.
//!
//! Blosc, Blosc2, LZO, LZF and bzip2 are registered with encoders: libhdf5 refuses to create,
//! extend or write a dataset whose pipeline holds a filter without one ("encoding is
//! disabled") even when every chunk arrives already compressed through `H5Dwrite_chunk`.
//! Decoding goes through [`sciio_codecs::decode`], encoding through [`FilterStage::encode`].
//! Their class names are the ones PyTables registers: libhdf5 stores them in each pipeline,
//! and PyTables recognises its filters by them (`Filters._from_leaf`). Bitshuffle and szip are
//! read only (sciio has no encoder for them). libhdf5's built-in shuffle is replaced by a class
//! that creates pipelines as libhdf5 1.14 does ([`register_shuffle_like_pytables`]).

use std::ffi::{c_uint, c_void};
use std::sync::{Once, OnceLock};

use hdf5_sys::h5::{herr_t, H5allocate_memory, H5free_memory};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::{H5T_class_t, H5Tget_class, H5Tis_variable_str};
use hdf5_sys::h5z::{H5Z_class2_t, H5Z_filter_t, H5Zregister, H5Z_CLASS_T_VERS, H5Z_FLAG_REVERSE};
use sciio_codecs::{id, FilterStage};

/// Registers every class once per process (called by [`crate::handle::locked`] before any
/// libhdf5 call, so reads and writes see the same registrations from the start).
pub(crate) fn ensure_registered() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        sciio_codecs::init_blosc();
        hdf5::sync::sync(|| {
            for class in [&BLOSC, &BLOSC2, &LZO, &LZF, &BZIP2, &BITSHUFFLE] {
                // SAFETY: 'static class structs whose callbacks never unwind.
                unsafe { H5Zregister((&class.0 as *const H5Z_class2_t).cast()) };
            }
            // H5Zregister refuses ids below 256 ("predefined filters"), szip's 4 included, so
            // szip goes through the library-internal call H5Z_init uses for built-in filters
            // (a plain C symbol of the statically linked libhdf5; same class struct contract).
            // SAFETY: the class struct is 'static and its callback never unwinds.
            unsafe { H5Z_register(&SZIP.0) };
            register_shuffle_like_pytables();
            // SAFETY: clears the error stack of a failed registration (kept silent).
            unsafe { hdf5_sys::h5e::H5Eclear2(hdf5_sys::h5e::H5E_DEFAULT) };
        });
    });
}

// SAFETY: the declaration matches H5Zprivate.h's `herr_t H5Z_register(const H5Z_class2_t *)`
// of the statically linked libhdf5.
unsafe extern "C" {
    /// libhdf5's internal registration (H5Zprivate.h), without H5Zregister's id >= 256 rule.
    fn H5Z_register(cls: *const H5Z_class2_t) -> herr_t;
}

struct Class(H5Z_class2_t);

// SAFETY: H5Z_SHUFFLE is libhdf5's `const H5Z_class2_t H5Z_SHUFFLE[1]` (H5Zpkg.h), only read.
unsafe extern "C" {
    /// libhdf5's built-in shuffle class (H5Zpkg.h; a plain symbol of the static libhdf5).
    static H5Z_SHUFFLE: H5Z_class2_t;
}

/// The signature of a filter class's `set_local` callback.
type SetLocal = extern "C" fn(hid_t, hid_t, hid_t) -> herr_t;

/// The built-in shuffle's `set_local`, which the replacement class delegates to.
static BUILTIN_SHUFFLE_SET_LOCAL: OnceLock<Option<SetLocal>> = OnceLock::new();

/// Shuffle as libhdf5 1.14 (PyTables' wheels) creates it: on variable-length datatypes its
/// `set_local` is skipped (1.14's `H5Z_ignore_filters` tested the type class; 2.x, bundled
/// here, only tests the dataspace), so a VLArray's pipeline records shuffle without the
/// element size, exactly as in PyTables' files. Writes then skip the optional stage, as 1.14's
/// do. Everything else delegates to the built-in class.
fn register_shuffle_like_pytables() {
    static CLASS: OnceLock<Class> = OnceLock::new();
    // SAFETY: reads a constant struct of the statically linked libhdf5.
    let builtin = unsafe { H5Z_SHUFFLE };
    BUILTIN_SHUFFLE_SET_LOCAL.get_or_init(|| builtin.set_local);
    let class = CLASS.get_or_init(|| {
        Class(H5Z_class2_t {
            set_local: Some(shuffle_set_local),
            ..builtin
        })
    });
    // SAFETY: a 'static class struct (libhdf5's own callbacks, and ours, never unwind); the
    // internal call replaces the built-in registration of id 2, which H5Zregister refuses.
    unsafe { H5Z_register(&class.0) };
}

extern "C" fn shuffle_set_local(dcpl: hid_t, type_id: hid_t, space: hid_t) -> herr_t {
    // SAFETY: libhdf5 passes valid ids to set_local.
    let variable = unsafe {
        match H5Tget_class(type_id) {
            H5T_class_t::H5T_VLEN => true,
            H5T_class_t::H5T_STRING => H5Tis_variable_str(type_id) > 0,
            _ => false,
        }
    };
    if variable {
        return 0;
    }
    match BUILTIN_SHUFFLE_SET_LOCAL.get() {
        Some(Some(builtin)) => builtin(dcpl, type_id, space),
        _ => -1,
    }
}

// SAFETY: immutable; its pointers point to 'static string literals.
unsafe impl Sync for Class {}
// SAFETY: as above; nothing in it is tied to a thread.
unsafe impl Send for Class {}

macro_rules! class {
    ($class:ident, $func:ident, $id:expr, $name:literal, encoder: $encoder:literal) => {
        static $class: Class = Class(H5Z_class2_t {
            version: H5Z_CLASS_T_VERS as _,
            id: $id as H5Z_filter_t,
            encoder_present: $encoder,
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
            unsafe { run($id, flags, cd_nelmts, cd_values, nbytes, buf_size, buf) }
        }
    };
}

class!(BLOSC, sciio_blosc, id::BLOSC, "blosc", encoder: 1);
class!(BLOSC2, sciio_blosc2, id::BLOSC2, "blosc2", encoder: 1);
class!(LZO, sciio_lzo, id::LZO, "lzo", encoder: 1);
// h5py registers LZF under this name (`lzf_filter.c`).
class!(LZF, sciio_lzf, id::LZF, "lzf", encoder: 1);
class!(BZIP2, sciio_bzip2, id::BZIP2, "bzip2", encoder: 1);
class!(BITSHUFFLE, sciio_bitshuffle, id::BITSHUFFLE, "bitshuffle (sciio)", encoder: 0);
class!(SZIP, sciio_szip, id::SZIP, "szip (sciio)", encoder: 0);

/// Encodes or decodes one buffer in Rust and hands the result back in libhdf5's allocator.
/// Returns 0 (failure) on any error, and for encoding with a filter sciio only reads.
///
/// # Safety
/// The pointers must follow libhdf5's H5Z_func_t contract.
unsafe fn run(
    filter: i32,
    flags: c_uint,
    cd_nelmts: usize,
    cd_values: *const c_uint,
    nbytes: usize,
    buf_size: *mut usize,
    buf: *mut *mut c_void,
) -> usize {
    if buf.is_null() || buf_size.is_null() {
        return 0;
    }
    let outcome = std::panic::catch_unwind(|| {
        // SAFETY: libhdf5 guarantees `cd_values[..cd_nelmts]` and `(*buf)[..nbytes]` are valid.
        let cd: &[u32] = if cd_values.is_null() || cd_nelmts == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(cd_values, cd_nelmts) }
        };
        let input = unsafe { std::slice::from_raw_parts(*buf as *const u8, nbytes) };
        if flags & H5Z_FLAG_REVERSE != 0 {
            sciio_codecs::decode(filter, cd, input, None)
        } else {
            FilterStage {
                id: filter,
                cd_values: cd.to_vec(),
                optional: true,
            }
            .encode(input.to_vec())
        }
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
