//! The few libhdf5 write calls the MAT writer needs, as small safe functions over
//! `hdf5-metno-sys`.
//!
//! Why here and not in sciio-hdf5: sciio-hdf5's write layer (`crates/sciio-hdf5/src/write/`) was
//! being built at the same time as this crate. MAT writing needs a userblock, the earliest file
//! format, old-style object references, vlen-of-`S1` attributes and direct chunk writes for
//! parallel compression; once sciio-hdf5's write layer offers those, this module should go and
//! the writer should call it instead.
//!
//! Every call runs under `hdf5::sync::sync`, the re-entrant lock sciio-hdf5 also takes, so the
//! two layers can be used from any threads; it also keeps libhdf5 from printing its error stack.

use std::ffi::{c_char, c_uint, c_void, CStr, CString};

use hdf5_sys::h5::{herr_t, hsize_t};
use hdf5_sys::h5e::{H5E_error2_t, H5Eclear2, H5Ewalk2, H5E_DEFAULT, H5E_WALK_DOWNWARD};
use hdf5_sys::h5i::{hid_t, H5Idec_ref, H5Iis_valid};
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5t::{self as t};
use sciio_core::{Error, ErrorKind, Result};

/// Runs `f` holding libhdf5's global lock.
pub(crate) fn locked<T>(f: impl FnOnce() -> T) -> T {
    hdf5::sync::sync(f)
}

/// An owned HDF5 identifier, released when dropped.
#[derive(Debug)]
pub(crate) struct Hid(hid_t);

impl Hid {
    /// Takes ownership of `id`; a negative id becomes an error saying what was being done.
    pub(crate) fn new(id: hid_t, what: impl FnOnce() -> String) -> Result<Hid> {
        if id < 0 {
            Err(stack_error(what()))
        } else {
            Ok(Hid(id))
        }
    }

    pub(crate) fn id(&self) -> hid_t {
        self.0
    }
}

impl Drop for Hid {
    fn drop(&mut self) {
        locked(|| unsafe {
            // SAFETY: the id is owned by this handle.
            if H5Iis_valid(self.0) > 0 {
                H5Idec_ref(self.0);
            }
            H5Eclear2(H5E_DEFAULT);
        })
    }
}

/// Checks a libhdf5 return code (negative = failure).
pub(crate) fn check(ret: herr_t, what: impl FnOnce() -> String) -> Result<()> {
    if ret < 0 {
        Err(stack_error(what()))
    } else {
        Ok(())
    }
}

pub(crate) fn cstr(name: &str) -> Result<CString> {
    CString::new(name)
        .map_err(|_| Error::invalid_input(format!("name {name:?} contains a NUL byte")))
}

/// An error from libhdf5's current error stack (then cleared).
pub(crate) fn stack_error(what: String) -> Error {
    let mut messages: Vec<String> = Vec::new();
    unsafe extern "C" fn collect(
        _n: c_uint,
        err: *const H5E_error2_t,
        data: *mut c_void,
    ) -> herr_t {
        // SAFETY: libhdf5 passes a valid record; `data` is our Vec.
        unsafe {
            let messages = &mut *(data as *mut Vec<String>);
            if let Some(err) = err.as_ref() {
                if !err.desc.is_null() {
                    messages.push(CStr::from_ptr(err.desc).to_string_lossy().into_owned());
                }
            }
        }
        0
    }
    // SAFETY: walking the default stack with a callback that only reads.
    unsafe {
        H5Ewalk2(
            H5E_DEFAULT,
            H5E_WALK_DOWNWARD,
            Some(collect),
            &mut messages as *mut Vec<String> as *mut c_void,
        );
        H5Eclear2(H5E_DEFAULT);
    }
    let why: Vec<String> = messages.into_iter().rev().take(2).collect();
    if why.is_empty() {
        Error::new(ErrorKind::Io, what)
    } else {
        Error::new(ErrorKind::Io, format!("{what}: {}", why.join(": ")))
    }
}

/// A copy of a predefined type.
pub(crate) fn copy_type(ty: hid_t) -> Result<Hid> {
    // SAFETY: copying a valid predefined type id.
    Hid::new(unsafe { t::H5Tcopy(ty) }, || {
        "cannot copy a datatype".into()
    })
}

/// A fixed-length ASCII string type of `len` bytes (`len ≥ 1`).
pub(crate) fn fixed_string(len: usize, nullterm: bool) -> Result<Hid> {
    let ty = copy_type(*t::H5T_C_S1)?;
    // SAFETY: valid type id.
    check(unsafe { t::H5Tset_size(ty.id(), len.max(1)) }, || {
        "cannot size a string type".into()
    })?;
    let pad = if nullterm {
        t::H5T_str_t::H5T_STR_NULLTERM
    } else {
        t::H5T_str_t::H5T_STR_NULLPAD
    };
    check(unsafe { t::H5Tset_strpad(ty.id(), pad) }, || {
        "cannot set string padding".into()
    })?;
    Ok(ty)
}

/// A variable-length UTF-8 string type.
pub(crate) fn vlen_utf8() -> Result<Hid> {
    let ty = copy_type(*t::H5T_C_S1)?;
    // SAFETY: valid type id.
    check(unsafe { t::H5Tset_size(ty.id(), t::H5T_VARIABLE) }, || {
        "cannot make a vlen string".into()
    })?;
    check(
        unsafe { t::H5Tset_cset(ty.id(), t::H5T_cset_t::H5T_CSET_UTF8) },
        || "cannot set the charset".into(),
    )?;
    Ok(ty)
}

/// `real`/`imag` compound of two `part` floats of `size` bytes each, as MATLAB writes complex.
pub(crate) fn complex_type(part: hid_t, size: usize) -> Result<Hid> {
    // SAFETY: creating and filling a compound type we own.
    unsafe {
        let ty = Hid::new(t::H5Tcreate(t::H5T_class_t::H5T_COMPOUND, 2 * size), || {
            "cannot create a compound type".into()
        })?;
        check(t::H5Tinsert(ty.id(), c"real".as_ptr(), 0, part), || {
            "cannot add the real part".into()
        })?;
        check(t::H5Tinsert(ty.id(), c"imag".as_ptr(), size, part), || {
            "cannot add the imaginary part".into()
        })?;
        Ok(ty)
    }
}

/// A simple dataspace (`dims` empty = scalar).
pub(crate) fn space(dims: &[u64]) -> Result<Hid> {
    // SAFETY: `dims` holds `rank` values.
    unsafe {
        if dims.is_empty() {
            return Hid::new(
                hdf5_sys::h5s::H5Screate(hdf5_sys::h5s::H5S_class_t::H5S_SCALAR),
                || "cannot create a dataspace".into(),
            );
        }
        let d: Vec<hsize_t> = dims.to_vec();
        Hid::new(
            hdf5_sys::h5s::H5Screate_simple(d.len() as i32, d.as_ptr(), std::ptr::null()),
            || "cannot create a dataspace".into(),
        )
    }
}

/// Writes attribute `name` on `obj` from `data`, which must hold the whole attribute in the
/// memory layout of `ty`. The writer only puts attributes on objects it has just created
/// (a replaced variable is deleted first), so there is no existing attribute to replace.
pub(crate) fn put_attr(
    obj: hid_t,
    name: &str,
    ty: hid_t,
    dims: &[u64],
    data: *const c_void,
) -> Result<()> {
    let c = cstr(name)?;
    locked(|| {
        // SAFETY: valid ids; `data` covers the dataspace (caller's contract).
        unsafe {
            let sp = space(dims)?;
            let a = Hid::new(
                hdf5_sys::h5a::H5Acreate2(obj, c.as_ptr(), ty, sp.id(), H5P_DEFAULT, H5P_DEFAULT),
                || format!("cannot create attribute {name}"),
            )?;
            check(hdf5_sys::h5a::H5Awrite(a.id(), ty, data), || {
                format!("cannot write attribute {name}")
            })
        }
    })
}

/// A fixed-length ASCII string attribute (MATLAB's `MATLAB_class`, `H5PATH`, hdf5storage's
/// `Python.*` names).
pub(crate) fn put_str_attr(obj: hid_t, name: &str, value: &str) -> Result<()> {
    locked(|| {
        let ty = fixed_string(value.len(), false)?;
        let mut bytes = value.as_bytes().to_vec();
        bytes.push(0);
        put_attr(obj, name, ty.id(), &[], bytes.as_ptr().cast())
    })
}

/// A scalar attribute of a predefined numeric type (`ty`) from its little-endian bytes.
pub(crate) fn put_num_attr(obj: hid_t, name: &str, ty: hid_t, bytes: &[u8]) -> Result<()> {
    put_attr(obj, name, ty, &[], bytes.as_ptr().cast())
}

/// A 1-D `uint64` attribute.
pub(crate) fn put_u64s_attr(obj: hid_t, name: &str, values: &[u64]) -> Result<()> {
    let ty = *t::H5T_STD_U64LE;
    put_attr(
        obj,
        name,
        ty,
        &[values.len() as u64],
        values.as_ptr().cast(),
    )
}

/// `MATLAB_fields`: a 1-D array of vlen sequences of 1-character strings, one per field.
pub(crate) fn put_fields_attr(obj: hid_t, names: &[String]) -> Result<()> {
    locked(|| {
        let s1 = fixed_string(1, false)?;
        // SAFETY: vlen of a valid base type.
        let ty = Hid::new(unsafe { t::H5Tvlen_create(s1.id()) }, || {
            "cannot create a vlen type".into()
        })?;
        let hvl: Vec<t::hvl_t> = names
            .iter()
            .map(|n| t::hvl_t {
                len: n.len(),
                p: n.as_ptr() as *mut c_void,
            })
            .collect();
        put_attr(
            obj,
            "MATLAB_fields",
            ty.id(),
            &[names.len() as u64],
            hvl.as_ptr().cast(),
        )
    })
}

/// `Python.Fields`: a 1-D array of vlen UTF-8 strings.
pub(crate) fn put_vlen_strs_attr(obj: hid_t, name: &str, values: &[String]) -> Result<()> {
    let cs: Vec<CString> = values.iter().map(|v| cstr(v)).collect::<Result<_>>()?;
    let ptrs: Vec<*const c_char> = cs.iter().map(|c| c.as_ptr()).collect();
    locked(|| {
        let ty = vlen_utf8()?;
        put_attr(
            obj,
            name,
            ty.id(),
            &[values.len() as u64],
            ptrs.as_ptr().cast(),
        )
    })
}

/// Whether `loc` has a link `name`.
pub(crate) fn exists(loc: hid_t, name: &str) -> Result<bool> {
    let c = cstr(name)?;
    // SAFETY: valid ids and C string.
    let r = locked(|| unsafe { hdf5_sys::h5l::H5Lexists(loc, c.as_ptr(), H5P_DEFAULT) });
    if r < 0 {
        return Err(locked(|| stack_error(format!("cannot look up {name:?}"))));
    }
    Ok(r > 0)
}

/// Removes link `name` from `loc`.
pub(crate) fn delete(loc: hid_t, name: &str) -> Result<()> {
    let c = cstr(name)?;
    // SAFETY: valid ids and C string.
    locked(|| {
        check(
            unsafe { hdf5_sys::h5l::H5Ldelete(loc, c.as_ptr(), H5P_DEFAULT) },
            || format!("cannot delete {name:?}"),
        )
    })
}

/// Creates group `name` in `loc`.
pub(crate) fn create_group(loc: hid_t, name: &str) -> Result<Hid> {
    let c = cstr(name)?;
    locked(|| {
        // SAFETY: valid ids and C string.
        Hid::new(
            unsafe {
                hdf5_sys::h5g::H5Gcreate2(loc, c.as_ptr(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
            },
            || format!("cannot create group {name:?}"),
        )
    })
}

/// Opens group `name` in `loc`.
pub(crate) fn open_group(loc: hid_t, name: &str) -> Result<Hid> {
    let c = cstr(name)?;
    locked(|| {
        // SAFETY: valid ids and C string.
        Hid::new(
            unsafe { hdf5_sys::h5g::H5Gopen2(loc, c.as_ptr(), H5P_DEFAULT) },
            || format!("cannot open group {name:?}"),
        )
    })
}

/// An old-style object reference (`hobj_ref_t`) to `path` in the file of `loc`.
pub(crate) fn object_ref(loc: hid_t, path: &str) -> Result<u64> {
    let c = cstr(path)?;
    let mut r: u64 = 0;
    // SAFETY: `r` is an hobj_ref_t-sized out-buffer; -1 = no dataspace for object refs.
    locked(|| {
        check(
            unsafe {
                hdf5_sys::h5r::H5Rcreate(
                    (&mut r as *mut u64).cast(),
                    loc,
                    c.as_ptr(),
                    hdf5_sys::h5r::H5R_type_t::H5R_OBJECT1,
                    -1,
                )
            },
            || format!("cannot reference {path:?}"),
        )
    })?;
    Ok(r)
}
