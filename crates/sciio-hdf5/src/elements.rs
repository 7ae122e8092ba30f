//! Data that cannot be handed out as flat bytes: compounds and arrays with variable-length
//! members (vlen strings, vlen sequences), and object or region references, which only mean
//! something once dereferenced. Such data is decoded element by element into [`Element`]
//! trees — h5py's view, where these members are Python objects.
//!
//! libhdf5 converts the file's vlen members into memory descriptors (`char *` for strings,
//! `hvl_t` for sequences) when a dataset is read with the type `H5Dget_type` returns (that type
//! is marked as "in memory", and its compound offsets are laid out for those descriptors);
//! [`H5Type`] read from that type describes exactly that layout. The decoder copies what the
//! descriptors point to, then lets libhdf5 free its heap copies with `H5Treclaim`.

use std::ffi::{c_char, CStr};

use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5a::{H5Aget_type, H5Aread};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5r::{H5R_type_t, H5Rget_name, H5Rget_region};
use hdf5_sys::h5s::{
    H5S_sel_type, H5Sget_select_elem_npoints, H5Sget_select_elem_pointlist,
    H5Sget_select_hyper_blocklist, H5Sget_select_hyper_nblocks, H5Sget_select_type,
    H5Sget_simple_extent_ndims,
};
use hdf5_sys::h5t::{hvl_t, H5Tget_size, H5Treclaim};
use sciio_core::{Error, ErrorKind, Limits, Result};

use crate::handle::{check, simple_space, Hid};
use crate::types::H5Type;
pub use sciio_h5native::{Element, ElementData, RefTarget, Selection};

/// Whether `ty` holds a new-style (`H5R_ref_t`) reference anywhere.
pub(crate) fn has_new_style_reference(ty: &H5Type) -> bool {
    match ty {
        H5Type::Reference { .. } => true,
        H5Type::Compound { fields, .. } => fields.iter().any(|f| has_new_style_reference(&f.ty)),
        H5Type::Array { base, .. } | H5Type::VarLen { base } => has_new_style_reference(base),
        _ => false,
    }
}

/// Longest object path accepted from `H5Rget_name`.
const MAX_PATH: usize = 1 << 16;

/// Reads an attribute whose type holds vlen members inside compounds or arrays, or
/// references (caller holds the libhdf5 lock): `n` elements of `ty`, shaped `shape`.
pub(crate) fn read_attribute(
    attr: hid_t,
    ty: &H5Type,
    shape: Vec<usize>,
    limits: Limits,
) -> Result<ElementData> {
    if has_new_style_reference(ty) {
        return Err(Error::unsupported(
            "HDF5 1.12-style references (H5T_STD_REF) in an attribute",
        ));
    }
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| Error::new(ErrorKind::LimitExceeded, "attribute size overflows"))?;
    // SAFETY: valid attribute id; the returned type is marked as in memory.
    let mtype = Hid::new(unsafe { H5Aget_type(attr) }, || {
        "cannot read the attribute's type".into()
    })?;
    let size = ty.size();
    // SAFETY: valid type id.
    if unsafe { H5Tget_size(mtype.id()) } != size {
        return Err(Error::unsupported(
            "attribute memory layout differs from sciio's",
        ));
    }
    let bytes = n
        .checked_mul(size)
        .ok_or_else(|| Error::new(ErrorKind::LimitExceeded, "attribute size overflows"))?;
    limits.check_alloc(bytes as u64, "attribute")?;
    let mut buf = vec![0u8; bytes];
    if bytes == 0 {
        return Ok(ElementData {
            ty: ty.clone(),
            shape,
            elements: Vec::new(),
        });
    }
    // SAFETY: `buf` holds `n` elements of the memory type's size.
    check(
        unsafe { H5Aread(attr, mtype.id(), buf.as_mut_ptr().cast()) },
        || "cannot read the attribute".into(),
    )?;
    let mut decoder = Decoder::new(attr, limits);
    let elements: Result<Vec<Element>> = buf
        .chunks_exact(size.max(1))
        .take(n)
        // SAFETY: libhdf5 filled the buffer with elements of the memory type `ty` describes;
        // heap pointers stay valid until H5Treclaim below.
        .map(|elem| unsafe { decoder.decode(ty, elem) })
        .collect();
    if ty.has_vlen() {
        let space = simple_space(&shape)?;
        // SAFETY: frees what libhdf5 allocated for exactly this buffer/type/space.
        unsafe { H5Treclaim(mtype.id(), space.id(), H5P_DEFAULT, buf.as_mut_ptr().cast()) };
    }
    Ok(ElementData {
        ty: ty.clone(),
        shape,
        elements: elements?,
    })
}

/// Walks elements in libhdf5's memory layout, counting what it copies against the limits.
pub(crate) struct Decoder {
    /// Any object of the file (references are resolved against it).
    loc: hid_t,
    limits: Limits,
    copied: u64,
}

impl Decoder {
    pub(crate) fn new(loc: hid_t, limits: Limits) -> Self {
        Decoder {
            loc,
            limits,
            copied: 0,
        }
    }

    /// Counts `bytes` more decoded bytes (element bookkeeping included) against the limits.
    fn charge(&mut self, bytes: usize) -> Result<()> {
        let overhead = std::mem::size_of::<Element>() as u64;
        self.copied = self
            .copied
            .saturating_add(bytes as u64)
            .saturating_add(overhead);
        self.limits.check_alloc(self.copied, "decoded data")?;
        Ok(())
    }

    /// # Safety
    /// `bytes` is one element of `ty` as libhdf5 wrote it into memory: vlen descriptors in it
    /// point to live libhdf5 allocations.
    pub(crate) unsafe fn decode(&mut self, ty: &H5Type, bytes: &[u8]) -> Result<Element> {
        let needs = |t: &H5Type| t.has_vlen() || t.has_reference();
        match ty {
            H5Type::VarString { .. } => {
                let p = read_pointer(bytes)? as *const c_char;
                let s = if p.is_null() {
                    Vec::new()
                } else {
                    // SAFETY: libhdf5 wrote a NUL-terminated string there.
                    unsafe { CStr::from_ptr(p) }.to_bytes().to_vec()
                };
                self.charge(s.len())?;
                Ok(Element::String(s))
            }
            H5Type::VarLen { base } => {
                let v = read_hvl(bytes)?;
                let elem = base.size();
                let len = v.len.checked_mul(elem).ok_or_else(|| {
                    Error::new(ErrorKind::LimitExceeded, "vlen sequence size overflows")
                })?;
                self.charge(len)?;
                let data: &[u8] = if v.p.is_null() || len == 0 {
                    &[]
                } else {
                    // SAFETY: libhdf5 allocated `v.len` elements of the base type there.
                    unsafe { std::slice::from_raw_parts(v.p as *const u8, len) }
                };
                if !needs(base) {
                    return Ok(Element::Values(data.to_vec()));
                }
                let items = data
                    .chunks_exact(elem.max(1))
                    // SAFETY: each chunk is one base element in memory layout.
                    .map(|e| unsafe { self.decode(base, e) })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Element::Sequence(items))
            }
            H5Type::Compound { fields, .. } if needs(ty) => {
                let mut members = Vec::with_capacity(fields.len());
                for f in fields {
                    let part = f
                        .offset
                        .checked_add(f.ty.size())
                        .and_then(|end| bytes.get(f.offset..end))
                        .ok_or_else(|| {
                            Error::format(format!("member {:?} outside its compound", f.name))
                        })?;
                    // SAFETY: a member of an element in memory layout.
                    members.push(unsafe { self.decode(&f.ty, part) }?);
                }
                self.charge(0)?;
                Ok(Element::Compound(members))
            }
            H5Type::Array { base, dims } if needs(ty) => {
                let n = dims.iter().fold(1usize, |a, &d| a.saturating_mul(d));
                let elem = base.size().max(1);
                if bytes.len() < n.saturating_mul(elem) {
                    return Err(Error::format("array element shorter than its dimensions"));
                }
                let items = bytes
                    .chunks_exact(elem)
                    .take(n)
                    // SAFETY: each chunk is one base element in memory layout.
                    .map(|e| unsafe { self.decode(base, e) })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Element::Array(items))
            }
            H5Type::ObjectRef | H5Type::RegionRef => {
                self.charge(0)?;
                Ok(Element::Reference(self.dereference(ty, bytes)?))
            }
            _ => {
                self.charge(bytes.len())?;
                Ok(Element::Fixed(bytes.to_vec()))
            }
        }
    }

    /// Resolves one old-style reference (caller holds the libhdf5 lock).
    pub(crate) fn dereference(&mut self, ty: &H5Type, bytes: &[u8]) -> Result<RefTarget> {
        let (kind, size) = match ty {
            H5Type::ObjectRef => (H5R_type_t::H5R_OBJECT1, 8),
            H5Type::RegionRef => (H5R_type_t::H5R_DATASET_REGION1, 12),
            other => {
                return Err(Error::unsupported(format!(
                    "dereferencing {other:?} (only old-style object and region references)"
                )))
            }
        };
        let Some(raw) = bytes.get(..size) else {
            return Err(Error::format(format!(
                "a reference of {} bytes, {size} expected",
                bytes.len()
            )));
        };
        // An object reference is the target's header address and a region reference a global
        // heap id: zero is never a valid one, and it is what unset references hold.
        if raw.iter().all(|&b| b == 0) {
            return Ok(RefTarget::Null);
        }
        // libhdf5 reads `size` bytes at the pointer: copy them into a buffer of that size.
        let mut r = [0u8; 12];
        r[..size].copy_from_slice(raw);
        let loc = self.loc;
        let path = reference_name(loc, kind, &r)?;
        if kind == H5R_type_t::H5R_OBJECT1 {
            return Ok(RefTarget::Object(path));
        }
        // SAFETY: valid file id and a 12-byte region reference.
        let space = Hid::new(
            unsafe { H5Rget_region(loc, kind, r.as_ptr().cast()) },
            || format!("cannot read the region of a reference into {path}"),
        )?;
        let selection = self.selection(space.id())?;
        Ok(RefTarget::Region { path, selection })
    }

    /// The selection of dataspace `space`, its size checked against the limits.
    fn selection(&mut self, space: hid_t) -> Result<Selection> {
        // SAFETY: valid dataspace id; list buffers sized from the counts libhdf5 reports.
        unsafe {
            let rank = check(H5Sget_simple_extent_ndims(space), || {
                "cannot read a region's rank".into()
            })? as usize;
            let fetch = |count: i64,
                         per_item: usize,
                         what: &str,
                         this: &mut Self,
                         get: &dyn Fn(hsize_t, *mut hsize_t) -> i32|
             -> Result<Vec<Vec<u64>>> {
                let count = check(count, || format!("cannot count a region's {what}"))? as usize;
                let words = count.saturating_mul(per_item);
                this.charge(words.saturating_mul(8))?;
                let mut buf = vec![0 as hsize_t; words];
                if words > 0 {
                    check(get(count as hsize_t, buf.as_mut_ptr()), || {
                        format!("cannot read a region's {what}")
                    })?;
                }
                Ok(buf.chunks(rank.max(1)).map(|c| c.to_vec()).collect())
            };
            match H5Sget_select_type(space) {
                H5S_sel_type::H5S_SEL_ALL => Ok(Selection::All),
                H5S_sel_type::H5S_SEL_NONE => Ok(Selection::None),
                H5S_sel_type::H5S_SEL_POINTS => {
                    let points = fetch(
                        H5Sget_select_elem_npoints(space),
                        rank,
                        "points",
                        self,
                        &|n, buf| H5Sget_select_elem_pointlist(space, 0, n, buf),
                    )?;
                    Ok(Selection::Points(points))
                }
                H5S_sel_type::H5S_SEL_HYPERSLABS => {
                    let corners = fetch(
                        H5Sget_select_hyper_nblocks(space),
                        2 * rank,
                        "blocks",
                        self,
                        &|n, buf| H5Sget_select_hyper_blocklist(space, 0, n, buf),
                    )?;
                    let blocks = corners
                        .chunks(2)
                        .filter_map(|pair| match pair {
                            [start, end] => Some((start.clone(), end.clone())),
                            _ => None,
                        })
                        .collect();
                    Ok(Selection::Blocks(blocks))
                }
                other => Err(Error::format(format!("region selection of kind {other:?}"))),
            }
        }
    }
}

/// The path of a reference's target (`H5Rget_name`).
fn reference_name(loc: hid_t, kind: H5R_type_t, r: &[u8; 12]) -> Result<String> {
    // SAFETY: valid file id; `r` holds a reference of `kind` (8 or 12 bytes used).
    let len = check(
        unsafe { H5Rget_name(loc, kind, r.as_ptr().cast(), std::ptr::null_mut(), 0) } as i64,
        || "cannot dereference a reference (dangling or damaged)".into(),
    )? as usize;
    if len > MAX_PATH {
        return Err(Error::format(format!(
            "a reference target path of {len} bytes"
        )));
    }
    let mut name = vec![0u8; len + 1];
    // SAFETY: `name` has room for `len` bytes and the NUL.
    check(
        unsafe {
            H5Rget_name(
                loc,
                kind,
                r.as_ptr().cast(),
                name.as_mut_ptr().cast(),
                len + 1,
            )
        } as i64,
        || "cannot read a reference's target name".into(),
    )?;
    name.truncate(len);
    Ok(String::from_utf8_lossy(&name).into_owned())
}

fn read_pointer(bytes: &[u8]) -> Result<*const u8> {
    let w = bytes
        .get(..std::mem::size_of::<usize>())
        .ok_or_else(|| Error::format("vlen string descriptor cut short"))?;
    // SAFETY: reads a pointer-sized value from a slice at least that long.
    Ok(unsafe { std::ptr::read_unaligned(w.as_ptr() as *const *const u8) })
}

fn read_hvl(bytes: &[u8]) -> Result<hvl_t> {
    let w = bytes
        .get(..std::mem::size_of::<hvl_t>())
        .ok_or_else(|| Error::format("vlen sequence descriptor cut short"))?;
    // SAFETY: reads an hvl_t from a slice at least that long.
    Ok(unsafe { std::ptr::read_unaligned(w.as_ptr() as *const hvl_t) })
}
