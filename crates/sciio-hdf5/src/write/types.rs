//! [`H5Type`] → libhdf5 datatype ids: the inverse of the reader's type model, built with the
//! same calls PyTables and h5py use (so a written type compares equal to theirs).

use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::*;
use sciio_core::{Error, Result};

use crate::handle::{c_name, check, Hid};
use crate::types::{ByteOrder, CharSet, H5Type};

const MAX_TYPE_DEPTH: usize = 32;

/// Builds a new datatype id for `ty`. Must run inside `locked`.
pub(crate) fn to_hid(ty: &H5Type) -> Result<Hid> {
    build(ty, 0)
}

fn copy(base: hid_t) -> Result<Hid> {
    // SAFETY: copying one of libhdf5's predefined types.
    Hid::new(unsafe { H5Tcopy(base) }, || {
        "cannot copy a predefined datatype".into()
    })
}

fn set_order(t: &Hid, order: ByteOrder) -> Result<()> {
    let o = match order {
        ByteOrder::Big => H5T_order_t::H5T_ORDER_BE,
        ByteOrder::Little | ByteOrder::NotApplicable => H5T_order_t::H5T_ORDER_LE,
    };
    // SAFETY: valid type id.
    check(unsafe { H5Tset_order(t.id(), o) }, || {
        "cannot set a byte order".into()
    })?;
    Ok(())
}

fn invalid(what: String) -> Error {
    Error::invalid_input(what)
}

fn build(ty: &H5Type, depth: usize) -> Result<Hid> {
    if depth > MAX_TYPE_DEPTH {
        return Err(invalid("datatype nested more than 32 levels deep".into()));
    }
    // SAFETY: (whole function) every id passed to libhdf5 is valid and owned by a `Hid`.
    unsafe {
        match ty {
            H5Type::Int {
                size,
                signed,
                order,
            } => {
                let base = match (size, signed) {
                    (1, true) => *H5T_STD_I8LE,
                    (1, false) => *H5T_STD_U8LE,
                    (2, true) => *H5T_STD_I16LE,
                    (2, false) => *H5T_STD_U16LE,
                    (4, true) => *H5T_STD_I32LE,
                    (4, false) => *H5T_STD_U32LE,
                    (8, true) => *H5T_STD_I64LE,
                    (8, false) => *H5T_STD_U64LE,
                    _ => return Err(invalid(format!("integer of {size} bytes"))),
                };
                let t = copy(base)?;
                set_order(&t, *order)?;
                Ok(t)
            }
            H5Type::Float { size: 2, order, .. } => {
                // IEEE half, built the way PyTables (utils.c `create_ieee_float16`) does.
                let t = copy(*H5T_IEEE_F32LE)?;
                check(H5Tset_fields(t.id(), 15, 10, 5, 0, 10), || {
                    "cannot build a float16 type".into()
                })?;
                check(H5Tset_size(t.id(), 2), || {
                    "cannot build a float16 type".into()
                })?;
                check(H5Tset_ebias(t.id(), 15), || {
                    "cannot build a float16 type".into()
                })?;
                set_order(&t, *order)?;
                Ok(t)
            }
            H5Type::Float { size: 4, order, .. } => {
                let t = copy(*H5T_IEEE_F32LE)?;
                set_order(&t, *order)?;
                Ok(t)
            }
            H5Type::Float { size: 8, order, .. } => {
                let t = copy(*H5T_IEEE_F64LE)?;
                set_order(&t, *order)?;
                Ok(t)
            }
            H5Type::Float {
                size, precision, ..
            } => {
                // x87 long double (numpy float96/float128): only the platform's own layout.
                let t = copy(*H5T_NATIVE_LDOUBLE)?;
                if H5Tget_size(t.id()) != *size || H5Tget_precision(t.id()) != *precision {
                    return Err(Error::unsupported(format!(
                        "{size}-byte float with {precision} bits is not this platform's long double"
                    )));
                }
                Ok(t)
            }
            H5Type::Bitfield {
                size,
                precision,
                order,
            } => {
                let base = match size {
                    1 => *H5T_STD_B8LE,
                    2 => *H5T_STD_B16LE,
                    4 => *H5T_STD_B32LE,
                    8 => *H5T_STD_B64LE,
                    _ => return Err(invalid(format!("bitfield of {size} bytes"))),
                };
                let t = copy(base)?;
                set_order(&t, *order)?;
                check(H5Tset_precision(t.id(), *precision), || {
                    "cannot set a bitfield precision".into()
                })?;
                Ok(t)
            }
            H5Type::Time { size, order } => {
                let base = match size {
                    4 => *H5T_UNIX_D32LE,
                    8 => *H5T_UNIX_D64LE,
                    _ => return Err(invalid(format!("time type of {size} bytes"))),
                };
                let t = copy(base)?;
                set_order(&t, *order)?;
                Ok(t)
            }
            H5Type::FixedString { size, charset } => string_type(Some(*size), *charset),
            H5Type::VarString { charset } => string_type(None, *charset),
            H5Type::Opaque { size, tag } => {
                let t = Hid::new(H5Tcreate(H5T_class_t::H5T_OPAQUE, *size), || {
                    "cannot create an opaque type".into()
                })?;
                if !tag.is_empty() {
                    let c = c_name(tag)?;
                    check(H5Tset_tag(t.id(), c.as_ptr()), || {
                        "cannot tag an opaque type".into()
                    })?;
                }
                Ok(t)
            }
            H5Type::Compound { size, fields } => {
                let t = Hid::new(H5Tcreate(H5T_class_t::H5T_COMPOUND, *size), || {
                    "cannot create a compound type".into()
                })?;
                for f in fields {
                    if f.offset
                        .checked_add(f.ty.size())
                        .is_none_or(|end| end > *size)
                    {
                        return Err(invalid(format!(
                            "field {:?} overruns the {size}-byte record",
                            f.name
                        )));
                    }
                    let member = build(&f.ty, depth + 1)?;
                    let c = c_name(&f.name)?;
                    check(H5Tinsert(t.id(), c.as_ptr(), f.offset, member.id()), || {
                        format!("cannot insert field {:?}", f.name)
                    })?;
                }
                Ok(t)
            }
            H5Type::Enum { base, members } => {
                let H5Type::Int { size, order, .. } = **base else {
                    return Err(invalid("an enum's base must be an integer".into()));
                };
                let b = build(base, depth + 1)?;
                let t = Hid::new(H5Tenum_create(b.id()), || {
                    "cannot create an enum type".into()
                })?;
                for (name, value) in members {
                    let le = value.to_le_bytes();
                    let mut raw = le[..size.min(8)].to_vec();
                    if order == ByteOrder::Big {
                        raw.reverse();
                    }
                    let c = c_name(name)?;
                    check(
                        H5Tenum_insert(t.id(), c.as_ptr(), raw.as_ptr().cast()),
                        || format!("cannot insert enum member {name:?}"),
                    )?;
                }
                Ok(t)
            }
            H5Type::Array { base, dims } => {
                let b = build(base, depth + 1)?;
                let d: Vec<hsize_t> = dims.iter().map(|&d| d as hsize_t).collect();
                Hid::new(H5Tarray_create2(b.id(), d.len() as u32, d.as_ptr()), || {
                    "cannot create an array type".into()
                })
            }
            H5Type::VarLen { base } => {
                let b = build(base, depth + 1)?;
                Hid::new(H5Tvlen_create(b.id()), || {
                    "cannot create a vlen type".into()
                })
            }
            H5Type::ObjectRef => copy(*H5T_STD_REF_OBJ),
            H5Type::RegionRef => copy(*H5T_STD_REF_DSETREG),
            H5Type::Reference { .. } => copy(*H5T_STD_REF),
            // H5Type is non_exhaustive (sciio-h5native): a type added there is refused here
            // until this writer knows it.
            other => Err(invalid(format!("cannot write HDF5 type {other:?}"))),
        }
    }
}

/// A C string type: fixed (`Some(size)`, NUL-terminated like PyTables' attributes and numpy's
/// `S` columns) or variable length.
fn string_type(size: Option<usize>, charset: CharSet) -> Result<Hid> {
    let t = copy(*H5T_C_S1)?;
    // SAFETY: valid type id.
    unsafe {
        check(
            H5Tset_size(t.id(), size.unwrap_or(H5T_VARIABLE).max(1)),
            || "cannot size a string type".into(),
        )?;
        let cset = if charset == CharSet::Utf8 {
            H5T_cset_t::H5T_CSET_UTF8
        } else {
            H5T_cset_t::H5T_CSET_ASCII
        };
        check(H5Tset_cset(t.id(), cset), || {
            "cannot set a string charset".into()
        })?;
    }
    Ok(t)
}
