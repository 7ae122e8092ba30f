//! Writing many small objects quickly: datasets created and written in one call, attributes
//! created on objects known to be fresh, object references to written objects, and link tests
//! and removal. Formats such as MAT v7.3 store every cell element and struct field as its own
//! dataset with a few attributes, so the libhdf5 calls per object decide their speed: datatypes,
//! the scalar dataspace and the contiguous dataset-creation properties are built once per file
//! ([`Cache`]) instead of once per object.
//!
//! ```
//! use sciio_hdf5::write::{DatasetSpec, FileBuilder};
//! use sciio_hdf5::{AttrValue, ByteOrder, H5Type, RawData};
//! let path = std::env::temp_dir().join(format!("sciio-objects-doc-{}.h5", std::process::id()));
//! let file = FileBuilder::new().create(&path)?;
//! let root = file.root()?;
//! let f8 = H5Type::Float { size: 8, precision: 64, order: ByteOrder::Little };
//! let x = root.write_dataset("x", &DatasetSpec::contiguous(f8, vec![2]), &[0u8; 16])?;
//! x.add_attr("unit", &AttrValue::Raw(RawData::bytes_string(b"m")))?;
//! let r = x.object_ref()?;
//! let refs = DatasetSpec::contiguous(H5Type::ObjectRef, vec![1]);
//! root.write_dataset("to_x", &refs, &r.to_le_bytes())?;
//! assert!(root.contains("to_x")? && !root.contains("y")?);
//! root.unlink("to_x")?;
//! assert!(!root.contains("to_x")?);
//! file.close()?;
//! # std::fs::remove_file(&path).ok();
//! # Ok::<(), sciio_core::Error>(())
//! ```

use hdf5_sys::h5a::{H5Acreate2, H5Awrite};
use hdf5_sys::h5d::{H5Dcreate2, H5Dwrite};
use hdf5_sys::h5g::H5Gopen2;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5l::{H5Ldelete, H5Lexists};
use hdf5_sys::h5o::{H5O_info2_t, H5Oget_info3, H5O_INFO_BASIC};
use hdf5_sys::h5p::{H5Pcreate, H5Pset_obj_track_times, H5P_CLS_DATASET_CREATE, H5P_DEFAULT};
use hdf5_sys::h5s::{H5S_class_t, H5Screate, H5S_ALL};
use sciio_core::{Error, Result};

use sciio_h5native::DatasetSpec;

use super::append::ChunkAppender;
use super::common::{check_attr_value, dataspace, dcpl, elements_not_writable, VlenBuffer};
use super::types;
use super::writers::{Cache, DatasetWriter, GroupWriter, Inner};
use crate::file::AttrValue;
use crate::handle::{check, locked, Hid};
use crate::types::H5Type;

impl Inner {
    /// Runs `f` with the cache. Must run inside `locked` (the ids are libhdf5's).
    fn with_cache<T>(&self, f: impl FnOnce(&mut Cache) -> Result<T>) -> Result<T> {
        let mut cache = self
            .cache
            .lock()
            .map_err(|_| Error::invalid_input("the file's type cache is poisoned"))?;
        f(&mut cache)
    }

    /// The datatype id of `ty`, built on first use. Must run inside `locked`.
    fn type_id(&self, ty: &H5Type) -> Result<hid_t> {
        self.with_cache(|c| {
            if let Some((_, id)) = c.types.iter().find(|(t, _)| t == ty) {
                return Ok(id.id());
            }
            let id = types::to_hid(ty)?;
            let raw = id.id();
            c.types.push((ty.clone(), id));
            Ok(raw)
        })
    }

    /// The scalar dataspace. Must run inside `locked`.
    fn scalar_space(&self) -> Result<hid_t> {
        self.with_cache(|c| {
            if let Some(s) = &c.scalar {
                return Ok(s.id());
            }
            // SAFETY: creates a dataspace owned by the cache.
            let s = Hid::new(unsafe { H5Screate(H5S_class_t::H5S_SCALAR) }, || {
                "cannot create a dataspace".into()
            })?;
            let raw = s.id();
            c.scalar = Some(s);
            Ok(raw)
        })
    }

    /// Creation properties of a contiguous dataset. Must run inside `locked`.
    fn plain_dcpl(&self) -> Result<hid_t> {
        if self.track_times {
            // libhdf5's defaults (times tracked): its own default list is shared by the new
            // dataset, where any other list is copied and checked for filters, which costs
            // about a fifth of making a small dataset.
            return Ok(H5P_DEFAULT);
        }
        self.with_cache(|c| {
            if let Some(p) = &c.plain_dcpl {
                return Ok(p.id());
            }
            // SAFETY: property list owned by the cache.
            let p = Hid::new(unsafe { H5Pcreate(*H5P_CLS_DATASET_CREATE) }, || {
                "cannot create a dataset-creation property list".into()
            })?;
            check(
                unsafe { H5Pset_obj_track_times(p.id(), self.track_times.into()) },
                || "cannot set time tracking".into(),
            )?;
            let raw = p.id();
            c.plain_dcpl = Some(p);
            Ok(raw)
        })
    }
}

/// A dataspace for `shape`: the cached scalar one, or a new simple one held by `keep`.
fn space_for(inner: &Inner, shape: &[u64], keep: &mut Option<Hid>) -> Result<hid_t> {
    if shape.is_empty() {
        return inner.scalar_space();
    }
    let s = dataspace(shape, None)?;
    let raw = s.id();
    *keep = Some(s);
    Ok(raw)
}

/// Creates attribute `name` on `obj` (which must not have one of that name) and writes it.
fn add_attr(inner: &Inner, obj: hid_t, name: &str, value: &AttrValue) -> Result<()> {
    let c = crate::handle::c_name(name)?;
    check_attr_value(name, value)?;
    let (ty, shape) = match value {
        AttrValue::Raw(d) => (&d.ty, &d.shape),
        AttrValue::Vlen(d) => (&d.ty, &d.shape),
        AttrValue::Empty(_) => {
            return Err(Error::invalid_input(
                "attributes with a null dataspace are written with set_attr",
            ))
        }
        AttrValue::Elements(_) => return Err(elements_not_writable(name)),
    };
    let shape: Vec<u64> = shape.iter().map(|&s| s as u64).collect();
    locked(|| -> Result<()> {
        let t = inner.type_id(ty)?;
        let mut keep = None;
        let space = space_for(inner, &shape, &mut keep)?;
        // SAFETY: valid ids and C string; the data buffers were checked against the shape.
        unsafe {
            let attr = Hid::new(
                H5Acreate2(obj, c.as_ptr(), t, space, H5P_DEFAULT, H5P_DEFAULT),
                || format!("cannot create attribute {name:?} (does it exist?)"),
            )?;
            match value {
                AttrValue::Raw(d) => {
                    check(H5Awrite(attr.id(), t, d.bytes.as_ptr().cast()), || {
                        format!("cannot write attribute {name:?}")
                    })?
                }
                AttrValue::Vlen(d) => {
                    let buf = VlenBuffer::new(ty, &d.items)?;
                    check(H5Awrite(attr.id(), t, buf.ptr()), || {
                        format!("cannot write attribute {name:?}")
                    })?
                }
                AttrValue::Empty(_) | AttrValue::Elements(_) => 0,
            };
        }
        Ok(())
    })
}

/// The old-style object reference (`hobj_ref_t`) to the open object `obj`: with libhdf5's
/// native file driver, the object header's address, which its token starts with.
fn object_ref(obj: hid_t) -> Result<u64> {
    locked(|| -> Result<u64> {
        // SAFETY: H5O_info2_t is plain data filled by libhdf5.
        let mut info: H5O_info2_t = unsafe { std::mem::zeroed() };
        check(
            unsafe { H5Oget_info3(obj, &mut info, H5O_INFO_BASIC) },
            || "cannot read the object's address".into(),
        )?;
        // SAFETY: H5O_token_t is a repr(C) wrapper of 16 bytes.
        let token =
            unsafe { std::mem::transmute::<hdf5_sys::h5o::H5O_token_t, [u8; 16]>(info.token) };
        let mut addr = [0u8; 8];
        addr.copy_from_slice(&token[..8]);
        Ok(u64::from_le_bytes(addr))
    })
}

impl GroupWriter {
    /// Whether the group has a link called `name`.
    pub fn contains(&self, name: &str) -> Result<bool> {
        let c = self.check_name(name)?;
        locked(|| {
            // SAFETY: valid group id and C string.
            check(
                unsafe { H5Lexists(self.hid.id(), c.as_ptr(), H5P_DEFAULT) },
                || "cannot look the name up".into(),
            )
        })
        .map(|r| r > 0)
        .map_err(|e| self.file.locate(e, &self.child_path(name)))
    }

    /// Removes the link `name`; the object goes with its last link.
    pub fn unlink(&self, name: &str) -> Result<()> {
        let c = self.check_name(name)?;
        locked(|| {
            // SAFETY: valid group id and C string.
            check(
                unsafe { H5Ldelete(self.hid.id(), c.as_ptr(), H5P_DEFAULT) },
                || "cannot remove the link".into(),
            )
        })
        .map(|_| ())
        .map_err(|e| self.file.locate(e, &self.child_path(name)))
    }

    /// Opens the existing child group `name`.
    pub fn open_group(&self, name: &str) -> Result<GroupWriter> {
        let path = self.child_path(name);
        let c = self.check_name(name)?;
        let hid = locked(|| {
            // SAFETY: valid ids and C string.
            Hid::new(
                unsafe { H5Gopen2(self.hid.id(), c.as_ptr(), H5P_DEFAULT) },
                || "cannot open the group".into(),
            )
        })
        .map_err(|e| self.file.locate(e, &path))?;
        Ok(GroupWriter {
            file: self.file.clone(),
            hid,
            path,
        })
    }

    /// Creates attribute `name`, which must not exist yet: one create and one write, for
    /// objects just made (use [`GroupWriter::set_attr`] to replace).
    pub fn add_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        add_attr(&self.file.inner, self.hid.id(), name, value)
            .map_err(|e| self.file.locate(e, &format!("{}/.{name}", self.path)))
    }

    /// The old-style object reference (`hobj_ref_t`, [`H5Type::ObjectRef`]) to this group.
    pub fn object_ref(&self) -> Result<u64> {
        object_ref(self.hid.id()).map_err(|e| self.file.locate(e, &self.path))
    }

    /// Creates dataset `name` and writes all of it from `bytes` (elements in the file layout,
    /// C order). Contiguous datasets take one create and one write; chunked ones are filled
    /// chunk by chunk, compressed on all cores and written with direct chunk writes.
    pub fn write_dataset(
        &self,
        name: &str,
        spec: &DatasetSpec,
        bytes: &[u8],
    ) -> Result<DatasetWriter> {
        let path = self.child_path(name);
        let n = spec
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .and_then(|n| n.checked_mul(spec.ty.size() as u64));
        if spec.ty.has_vlen() || n != Some(bytes.len() as u64) {
            return Err(self.file.locate(
                Error::invalid_input(format!(
                    "{} bytes given for shape {:?} of {}-byte elements",
                    bytes.len(),
                    spec.shape,
                    spec.ty.size()
                )),
                &path,
            ));
        }
        if spec.chunk.is_some() {
            let ds = self.create_dataset(name, spec)?;
            if !bytes.is_empty() {
                let mut fill = ChunkAppender::fill(&ds)?;
                fill.append(bytes)?;
                fill.flush_tail()?;
            }
            return Ok(ds);
        }
        let c = self.check_name(name)?;
        let inner = &self.file.inner;
        locked(|| -> Result<DatasetWriter> {
            let t = inner.type_id(&spec.ty)?;
            let mut keep = None;
            let space = space_for(inner, &spec.shape, &mut keep)?;
            let mut own_dcpl = None;
            let dcpl = if spec.fill.is_none() {
                inner.plain_dcpl()?
            } else {
                let p = dcpl(spec, inner.track_times)?;
                let raw = p.id();
                own_dcpl = Some(p);
                raw
            };
            // SAFETY: valid ids and C string; `bytes` holds the whole dataset in type `t`.
            let hid = unsafe {
                let hid = Hid::new(
                    H5Dcreate2(
                        self.hid.id(),
                        c.as_ptr(),
                        t,
                        space,
                        H5P_DEFAULT,
                        dcpl,
                        H5P_DEFAULT,
                    ),
                    || "cannot create the dataset (does the name exist?)".into(),
                )?;
                if !bytes.is_empty() {
                    check(
                        H5Dwrite(
                            hid.id(),
                            t,
                            H5S_ALL,
                            H5S_ALL,
                            H5P_DEFAULT,
                            bytes.as_ptr().cast(),
                        ),
                        || "cannot write the data".into(),
                    )?;
                }
                hid
            };
            drop(own_dcpl);
            Ok(DatasetWriter {
                file: self.file.clone(),
                hid,
                path: path.clone(),
                ty: spec.ty.clone(),
                chunk: None,
                pipeline: Vec::new(),
            })
        })
        .map_err(|e| self.file.locate(e, &path))
    }
}

impl DatasetWriter {
    /// Creates attribute `name`, which must not exist yet: one create and one write, for
    /// datasets just made (use [`DatasetWriter::set_attr`] to replace).
    pub fn add_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        add_attr(&self.file.inner, self.hid.id(), name, value)
            .map_err(|e| self.file.locate(e, &format!("{}/.{name}", self.path)))
    }

    /// The old-style object reference (`hobj_ref_t`, [`H5Type::ObjectRef`]) to this dataset.
    pub fn object_ref(&self) -> Result<u64> {
        object_ref(self.hid.id()).map_err(|e| self.locate(e))
    }
}
