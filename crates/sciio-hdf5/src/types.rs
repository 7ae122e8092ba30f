//! [`H5Type`]s read from libhdf5 datatype ids (the model itself is `sciio-h5native`'s).

use hdf5_sys::h5::H5free_memory;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::*;
use sciio_core::{Error, Result};

use crate::handle::{check, string_from_c, Hid};
pub use sciio_h5native::{ByteOrder, CharSet, Field, H5Type};

/// Reads the type behind a datatype id (caller holds the libhdf5 lock).
pub(crate) fn from_id(tid: hid_t) -> Result<H5Type> {
    // SAFETY: `tid` is a valid datatype id for the duration of this call (caller's lock).
    unsafe { read_type(tid, 0) }
}

const MAX_TYPE_DEPTH: usize = 32;

fn order_of(tid: hid_t) -> ByteOrder {
    // SAFETY: valid id.
    match unsafe { H5Tget_order(tid) } {
        H5T_order_t::H5T_ORDER_BE => ByteOrder::Big,
        H5T_order_t::H5T_ORDER_LE => ByteOrder::Little,
        _ => ByteOrder::NotApplicable,
    }
}

fn charset_of(tid: hid_t) -> CharSet {
    // SAFETY: valid id.
    match unsafe { H5Tget_cset(tid) } {
        H5T_cset_t::H5T_CSET_UTF8 => CharSet::Utf8,
        _ => CharSet::Ascii,
    }
}

/// # Safety
/// `tid` must be a valid datatype id and the libhdf5 lock held.
unsafe fn read_type(tid: hid_t, depth: usize) -> Result<H5Type> {
    if depth > MAX_TYPE_DEPTH {
        return Err(Error::unsupported(
            "datatype nested more than 32 levels deep",
        ));
    }
    // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
    let size = unsafe { H5Tget_size(tid) };
    if size == 0 {
        return Err(crate::handle::last_error("cannot read a datatype".into()));
    }
    // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
    let class = unsafe { H5Tget_class(tid) };
    // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
    let precision = || unsafe { H5Tget_precision(tid) };
    Ok(match class {
        H5T_class_t::H5T_INTEGER => H5Type::Int {
            size,
            // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
            signed: unsafe { H5Tget_sign(tid) } == H5T_sign_t::H5T_SGN_2,
            order: order_of(tid),
        },
        H5T_class_t::H5T_FLOAT => H5Type::Float {
            size,
            precision: precision(),
            order: order_of(tid),
        },
        H5T_class_t::H5T_BITFIELD => H5Type::Bitfield {
            size,
            precision: precision(),
            order: order_of(tid),
        },
        H5T_class_t::H5T_TIME => H5Type::Time {
            size,
            order: order_of(tid),
        },
        H5T_class_t::H5T_STRING => {
            let charset = charset_of(tid);
            // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
            if unsafe { H5Tis_variable_str(tid) } > 0 {
                H5Type::VarString { charset }
            } else {
                H5Type::FixedString { size, charset }
            }
        }
        H5T_class_t::H5T_OPAQUE => {
            // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
            let p = unsafe { H5Tget_tag(tid) };
            // SAFETY: `p` is null or a NUL-terminated string libhdf5 allocated.
            let tag = unsafe { string_from_c(p) };
            if !p.is_null() {
                // SAFETY: `p` was allocated by libhdf5 and is freed once, here.
                unsafe { H5free_memory(p.cast()) };
            }
            H5Type::Opaque { size, tag }
        }
        H5T_class_t::H5T_COMPOUND => {
            // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
            let n = check(unsafe { H5Tget_nmembers(tid) }, || {
                "cannot count compound members".into()
            })?;
            let mut fields = Vec::with_capacity(n as usize);
            for i in 0..n as u32 {
                // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
                let p = unsafe { H5Tget_member_name(tid, i) };
                // SAFETY: `p` is null or a NUL-terminated string libhdf5 allocated.
                let name = unsafe { string_from_c(p) };
                if !p.is_null() {
                    // SAFETY: `p` was allocated by libhdf5 and is freed once, here.
                    unsafe { H5free_memory(p.cast()) };
                }
                // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
                let offset = unsafe { H5Tget_member_offset(tid, i) };
                // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
                let member = Hid::new(unsafe { H5Tget_member_type(tid, i) }, || {
                    format!("cannot read the type of member {name:?}")
                })?;
                // SAFETY: a valid datatype id owned by a Hid, under the lock held by our caller.
                let ty = unsafe { read_type(member.id(), depth + 1) }?;
                if offset.checked_add(ty.size()).is_none_or(|end| end > size) {
                    return Err(Error::format(format!(
                        "compound member {name:?} at offset {offset} overruns the {size}-byte element"
                    )));
                }
                fields.push(Field { name, offset, ty });
            }
            H5Type::Compound { size, fields }
        }
        H5T_class_t::H5T_ENUM => {
            // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
            let base_id = Hid::new(unsafe { H5Tget_super(tid) }, || {
                "cannot read an enum's base type".into()
            })?;
            // SAFETY: a valid datatype id owned by a Hid, under the lock held by our caller.
            let base = unsafe { read_type(base_id.id(), depth + 1) }?;
            // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
            let n = check(unsafe { H5Tget_nmembers(tid) }, || {
                "cannot count enum members".into()
            })?;
            let mut members = Vec::with_capacity(n as usize);
            for i in 0..n as u32 {
                // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
                let p = unsafe { H5Tget_member_name(tid, i) };
                // SAFETY: `p` is null or a NUL-terminated string libhdf5 allocated.
                let name = unsafe { string_from_c(p) };
                if !p.is_null() {
                    // SAFETY: `p` was allocated by libhdf5 and is freed once, here.
                    unsafe { H5free_memory(p.cast()) };
                }
                let mut raw = [0u8; 8];
                if size > 8 {
                    return Err(Error::unsupported("enum wider than 64 bits"));
                }
                check(
                    // SAFETY: valid id (this fn's contract); `raw` holds 8 bytes and the value is
                    // `size` <= 8 bytes.
                    unsafe { H5Tget_member_value(tid, i, raw.as_mut_ptr().cast()) },
                    || format!("cannot read the value of enum member {name:?}"),
                )?;
                members.push((name, enum_value(&raw[..size], &base)));
            }
            H5Type::Enum {
                base: Box::new(base),
                members,
            }
        }
        H5T_class_t::H5T_ARRAY => {
            // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
            let ndims = check(unsafe { H5Tget_array_ndims(tid) }, || {
                "cannot read array rank".into()
            })?;
            let mut dims = vec![0u64; ndims as usize];
            check(
                // SAFETY: valid id (this fn's contract); `dims` holds `ndims` entries.
                unsafe { H5Tget_array_dims2(tid, dims.as_mut_ptr()) },
                || "cannot read array dims".into(),
            )?;
            // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
            let base_id = Hid::new(unsafe { H5Tget_super(tid) }, || {
                "cannot read an array's base type".into()
            })?;
            // SAFETY: a valid datatype id owned by a Hid, under the lock held by our caller.
            let base = unsafe { read_type(base_id.id(), depth + 1) }?;
            H5Type::Array {
                base: Box::new(base),
                dims: dims.iter().map(|&d| d as usize).collect(),
            }
        }
        H5T_class_t::H5T_VLEN => {
            // SAFETY: `tid` is a valid datatype id and the lock is held (this fn's contract).
            let base_id = Hid::new(unsafe { H5Tget_super(tid) }, || {
                "cannot read a vlen's base type".into()
            })?;
            // SAFETY: a valid datatype id owned by a Hid, under the lock held by our caller.
            let base = unsafe { read_type(base_id.id(), depth + 1) }?;
            H5Type::VarLen {
                base: Box::new(base),
            }
        }
        H5T_class_t::H5T_REFERENCE => {
            // SAFETY: valid id (this fn's contract) and a predefined libhdf5 type.
            if unsafe { H5Tequal(tid, *H5T_STD_REF_OBJ) } > 0 {
                H5Type::ObjectRef
            // SAFETY: valid id (this fn's contract) and a predefined libhdf5 type.
            } else if unsafe { H5Tequal(tid, *H5T_STD_REF_DSETREG) } > 0 {
                H5Type::RegionRef
            } else {
                H5Type::Reference { size }
            }
        }
        _ => return Err(Error::unsupported(format!("HDF5 datatype class {class:?}"))),
    })
}

/// An enum member's value, decoded from the base type's native (memory) bytes.
fn enum_value(raw: &[u8], base: &H5Type) -> i64 {
    // H5Tget_member_value returns the value in the enum's own (file) byte order.
    let big = matches!(
        base,
        H5Type::Int {
            order: ByteOrder::Big,
            ..
        }
    );
    let signed = matches!(base, H5Type::Int { signed: true, .. });
    let mut v: u64 = 0;
    let bytes: Vec<u8> = if big {
        raw.to_vec()
    } else {
        raw.iter().rev().copied().collect()
    };
    for b in &bytes {
        v = (v << 8) | u64::from(*b);
    }
    let bits = raw.len() * 8;
    if signed && bits < 64 && bits > 0 && v >> (bits - 1) & 1 == 1 {
        (v | (!0u64 << bits)) as i64
    } else {
        v as i64
    }
}

/// The machine's long double as libhdf5 describes it (`H5T_NATIVE_LDOUBLE`; `<f16` with 64
/// significant bits on x86-64): IEEE quad floats are read as it (`Dataset::read`), as PyTables
/// reads them. `None` if libhdf5 cannot describe it.
pub fn native_long_double() -> Option<H5Type> {
    crate::handle::locked(|| {
        // SAFETY: H5T_NATIVE_LDOUBLE is a valid predefined type once libhdf5 is initialised
        // (the lazy static does it); the copy is owned by `t` and closed when it drops; the
        // global lock is held.
        let t = Hid::new(unsafe { H5Tcopy(*H5T_NATIVE_LDOUBLE) }, || {
            "cannot copy the long double type".into()
        })
        .ok()?;
        from_id(t.id()).ok()
    })
}
