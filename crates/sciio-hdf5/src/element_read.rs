//! Element-by-element reads as methods of the high-level objects: [`Dataset::read_elements`]
//! and [`File::dereference`], over the decoder in `elements.rs`.

use hdf5_sys::h5d::H5Dget_type;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5t::{H5Tget_size, H5Treclaim};
use sciio_core::{Error, Result};

use crate::elements::{has_new_style_reference, Decoder, Element, ElementData, RefTarget};
use crate::file::{Dataset, File};
use crate::handle::{locked, simple_space, Hid};
use crate::types::H5Type;
use sciio_h5native::Slice;

impl Dataset {
    /// Reads (a hyperslab of) a dataset whose type holds vlen members or references, decoding
    /// every element (see [`ElementData`]); `None` reads everything. Works for any type, but
    /// fixed-layout data is cheaper through [`Dataset::read_slices`].
    ///
    /// ```no_run
    /// use sciio_hdf5::{Element, File, RefTarget};
    /// let file = File::open("refs.h5")?;
    /// let data = file.dataset("/refs")?.read_elements(None)?;
    /// for e in &data.elements {
    ///     if let Element::Reference(RefTarget::Object(path)) = e {
    ///         println!("points to {path}");
    ///     }
    /// }
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn read_elements(&self, slices: Option<&[Slice]>) -> Result<ElementData> {
        let ty = self.dtype()?;
        if has_new_style_reference(&ty) {
            // Read into memory they become H5R_ref_t handles that own library resources;
            // no reference tool sciio tests against writes them.
            return Err(self.locate(Error::unsupported(
                "HDF5 1.12-style references (H5T_STD_REF): sciio dereferences only object \
                 and region references (H5T_STD_REF_OBJ, H5T_STD_REF_DSETREG)",
            )));
        }
        self.check_filters_available()?;
        let file = self.file().clone();
        locked(|| {
            let (space, shape) = self.select(slices)?;
            // SAFETY: valid dataset id; the returned type is marked as in memory.
            let mtype = Hid::new(unsafe { H5Dget_type(self.hid()) }, || {
                "cannot read the datatype".into()
            })?;
            let size = ty.size();
            // SAFETY: valid type id.
            let msize = unsafe { H5Tget_size(mtype.id()) };
            if msize != size {
                return Err(Error::unsupported(format!(
                    "memory layout of {msize} bytes per element, sciio expected {size}"
                )));
            }
            let mut buf = self.read_selection(&mtype, &space, &shape)?;
            if buf.is_empty() {
                return Ok(ElementData {
                    ty: ty.clone(),
                    shape,
                    elements: Vec::new(),
                });
            }
            let mspace = simple_space(&shape)?;
            let mut decoder = Decoder::new(file.hid(), file.limits());
            let elements: Result<Vec<Element>> = buf
                .chunks_exact(size.max(1))
                // SAFETY: libhdf5 filled the buffer with elements of the memory type `ty`
                // describes; heap pointers stay valid until H5Treclaim below.
                .map(|elem| unsafe { decoder.decode(&ty, elem) })
                .collect();
            if ty.has_vlen() {
                // SAFETY: frees what libhdf5 allocated for exactly this buffer/type/space.
                unsafe {
                    H5Treclaim(
                        mtype.id(),
                        mspace.id(),
                        H5P_DEFAULT,
                        buf.as_mut_ptr().cast(),
                    )
                };
            }
            Ok(ElementData {
                ty: ty.clone(),
                shape,
                elements: elements?,
            })
        })
        .map_err(|e| self.locate(e))
    }
}

impl File {
    /// Dereferences one old-style reference of type `ty` ([`H5Type::ObjectRef`], 8 bytes, or
    /// [`H5Type::RegionRef`], 12 bytes) given in its stored bytes: the target's path (and, for
    /// a region, its selection). An all-zero reference is [`RefTarget::Null`].
    ///
    /// ```no_run
    /// use sciio_hdf5::{AttrValue, File};
    /// let file = File::open("refs.h5")?;
    /// if let Some(AttrValue::Raw(raw)) = file.root()?.attr("link")?.map(|a| a.value) {
    ///     println!("{:?}", file.dereference(&raw.ty, &raw.bytes)?);
    /// }
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn dereference(&self, ty: &H5Type, bytes: &[u8]) -> Result<RefTarget> {
        locked(|| Decoder::new(self.hid(), self.limits()).dereference(ty, bytes))
            .map_err(|e| e.with_file(self.path()))
    }
}
