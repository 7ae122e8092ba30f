//! Helpers shared by the writer's files, groups and datasets (`mod.rs`) and its fast small
//! objects (`objects.rs`): dataspaces, dataset-creation properties, attribute checks and
//! variable-length write buffers.

use std::ffi::{c_char, c_void, CString};

use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5d::{H5D_alloc_time_t, H5D_fill_time_t};
use hdf5_sys::h5p::{
    H5Pcreate, H5Pset_alloc_time, H5Pset_chunk, H5Pset_fill_time, H5Pset_fill_value, H5Pset_filter,
    H5Pset_obj_track_times, H5P_CLS_DATASET_CREATE,
};
use hdf5_sys::h5s::{H5S_class_t, H5Screate, H5Screate_simple, H5S_UNLIMITED};
use hdf5_sys::h5t::hvl_t;
use hdf5_sys::h5z::H5Z_FLAG_OPTIONAL;
use sciio_core::{Error, Result};
use sciio_h5native::DatasetSpec;

use super::types;
use crate::file::AttrValue;
use crate::handle::{check, Hid};
use crate::types::H5Type;

pub(super) fn dataspace(shape: &[u64], max: Option<&[Option<u64>]>) -> Result<Hid> {
    // SAFETY: arrays sized by the rank.
    unsafe {
        if shape.is_empty() {
            return Hid::new(H5Screate(H5S_class_t::H5S_SCALAR), || {
                "cannot create a dataspace".into()
            });
        }
        let max: Option<Vec<hsize_t>> =
            max.map(|m| m.iter().map(|d| d.unwrap_or(H5S_UNLIMITED)).collect());
        if max.as_ref().is_some_and(|m| m.len() != shape.len()) {
            return Err(Error::invalid_input(
                "maximum shape and shape differ in rank",
            ));
        }
        Hid::new(
            H5Screate_simple(
                shape.len() as i32,
                shape.as_ptr(),
                max.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()),
            ),
            || "cannot create a dataspace".into(),
        )
    }
}

/// Descriptors for writing variable-length data: `hvl_t` for sequences, `char*` for strings.
pub(super) struct VlenBuffer {
    descriptors: Vec<u8>,
    _strings: Vec<CString>,
}

impl VlenBuffer {
    pub(super) fn new(ty: &H5Type, items: &[Vec<u8>]) -> Result<VlenBuffer> {
        match ty {
            H5Type::VarString { .. } => {
                let strings: Vec<CString> = items
                    .iter()
                    .map(|s| {
                        CString::new(s.clone()).map_err(|_| {
                            Error::invalid_input("a variable-length string contains a NUL byte")
                        })
                    })
                    .collect::<Result<_>>()?;
                let ptrs: Vec<*const c_char> = strings.iter().map(|s| s.as_ptr()).collect();
                let descriptors = ptrs
                    .iter()
                    .flat_map(|p| (*p as usize).to_ne_bytes())
                    .collect();
                Ok(VlenBuffer {
                    descriptors,
                    _strings: strings,
                })
            }
            H5Type::VarLen { base } => {
                let elem = base.size().max(1);
                let mut descriptors =
                    Vec::with_capacity(items.len() * std::mem::size_of::<hvl_t>());
                for item in items {
                    if item.len() % elem != 0 {
                        return Err(Error::invalid_input(format!(
                            "a {}-byte row is not a whole number of {elem}-byte elements",
                            item.len()
                        )));
                    }
                    let v = hvl_t {
                        len: item.len() / elem,
                        p: item.as_ptr() as *mut c_void,
                    };
                    // SAFETY: hvl_t is plain old data; its bytes are copied.
                    let raw = unsafe {
                        std::slice::from_raw_parts(
                            &v as *const hvl_t as *const u8,
                            std::mem::size_of::<hvl_t>(),
                        )
                    };
                    descriptors.extend_from_slice(raw);
                }
                Ok(VlenBuffer {
                    descriptors,
                    _strings: Vec::new(),
                })
            }
            other => Err(Error::invalid_input(format!(
                "{other:?} is not a variable-length type"
            ))),
        }
    }

    pub(super) fn ptr(&self) -> *const c_void {
        self.descriptors.as_ptr().cast()
    }
}

/// Checks that an attribute's data fits its type and shape before anything is written (a bad
/// value must not replace a good attribute).
pub(super) fn check_attr_value(name: &str, value: &AttrValue) -> Result<()> {
    match value {
        AttrValue::Raw(d) => {
            let n = d.shape.iter().try_fold(1usize, |a, &x| a.checked_mul(x));
            if d.ty.has_vlen() || n.and_then(|n| n.checked_mul(d.ty.size())) != Some(d.bytes.len())
            {
                return Err(Error::invalid_input(format!(
                    "attribute {name:?}: {} bytes do not make shape {:?} of {}-byte elements",
                    d.bytes.len(),
                    d.shape,
                    d.ty.size()
                )));
            }
        }
        AttrValue::Vlen(d) => {
            let n = d.shape.iter().try_fold(1usize, |a, &x| a.checked_mul(x));
            if n != Some(d.items.len()) {
                return Err(Error::invalid_input(format!(
                    "attribute {name:?}: {} items for shape {:?}",
                    d.items.len(),
                    d.shape
                )));
            }
        }
        AttrValue::Empty(_) => {}
        AttrValue::Elements(_) => return Err(elements_not_writable(name)),
    }
    Ok(())
}

/// Decoded elements (vlen members inside compounds, references) are read-only.
pub(super) fn elements_not_writable(name: &str) -> Error {
    Error::unsupported(format!(
        "attribute {name:?}: decoded elements (vlen compound members, references) cannot be written"
    ))
}

pub(super) fn dcpl(spec: &DatasetSpec, track_times: bool) -> Result<Hid> {
    // SAFETY: property list owned here; arrays sized by the rank.
    unsafe {
        let dcpl = Hid::new(H5Pcreate(*H5P_CLS_DATASET_CREATE), || {
            "cannot create a dataset-creation property list".into()
        })?;
        check(
            H5Pset_obj_track_times(dcpl.id(), track_times.into()),
            || "cannot set time tracking".into(),
        )?;
        if let Some(chunk) = &spec.chunk {
            if chunk.len() != spec.shape.len() || chunk.contains(&0) {
                return Err(Error::invalid_input(format!(
                    "chunk shape {chunk:?} does not fit shape {:?}",
                    spec.shape
                )));
            }
            check(
                H5Pset_chunk(dcpl.id(), chunk.len() as i32, chunk.as_ptr()),
                || "cannot set the chunk shape".into(),
            )?;
            for f in &spec.filters {
                let flags = if f.optional { H5Z_FLAG_OPTIONAL } else { 0 };
                // Shuffle's element size is filled in by libhdf5 (`set_local`), as for
                // H5Pset_shuffle: vlen data then records none, like PyTables' files.
                let cd: &[u32] = if f.id == crate::filters::id::SHUFFLE {
                    &[]
                } else {
                    &f.cd_values
                };
                check(
                    H5Pset_filter(dcpl.id(), f.id, flags, cd.len(), cd.as_ptr()),
                    || format!("cannot add filter {}", f.id),
                )?;
            }
        } else if !spec.filters.is_empty() {
            return Err(Error::invalid_input("filters need a chunked dataset"));
        }
        if spec.early {
            check(
                H5Pset_alloc_time(dcpl.id(), H5D_alloc_time_t::H5D_ALLOC_TIME_EARLY),
                || "cannot set the allocation time".into(),
            )?;
            check(
                H5Pset_fill_time(dcpl.id(), H5D_fill_time_t::H5D_FILL_TIME_NEVER),
                || "cannot set the fill time".into(),
            )?;
        }
        if let Some(fill) = &spec.fill {
            if fill.len() != spec.ty.size() {
                return Err(Error::invalid_input(format!(
                    "fill value of {} bytes for {}-byte elements",
                    fill.len(),
                    spec.ty.size()
                )));
            }
            let t = types::to_hid(&spec.ty)?;
            check(
                H5Pset_fill_value(dcpl.id(), t.id(), fill.as_ptr().cast()),
                || "cannot set the fill value".into(),
            )?;
        }
        Ok(dcpl)
    }
}
