//! Reading small datasets in as few libhdf5 calls as possible. MAT files keep every cell
//! element and struct field in its own tiny dataset; for those, [`Dataset::read`]'s
//! preparations — asking for the creation properties to check every filter is available,
//! building a selection and a memory dataspace — cost more than the read itself.

use hdf5_sys::h5d::{H5Dget_space, H5Dget_type, H5Dread};
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s::{
    H5S_class_t, H5Sget_simple_extent_dims, H5Sget_simple_extent_ndims, H5Sget_simple_extent_type,
    H5S_ALL,
};

use sciio_core::{Error, ErrorKind, Result};

use crate::file::{Dataset, File};
use crate::handle::{check, locked, Hid};
use crate::types::H5Type;
use sciio_h5native::{Attribute, RawData};

impl Dataset {
    /// Reads the whole dataset like [`Dataset::read`], with one libhdf5 read in the file's
    /// own type and no filter check first (a filter libhdf5 lacks then fails the read with
    /// libhdf5's own error). Meant for the many tiny datasets of MAT cells and structs;
    /// types read through a conversion (quad floats) and null dataspaces go through
    /// [`Dataset::read`].
    ///
    /// ```no_run
    /// let file = sciio_hdf5::File::open("data.mat")?;
    /// let x = file.dataset("/x")?.read_direct()?;
    /// println!("{:?} {} bytes", x.shape, x.bytes.len());
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn read_direct(&self) -> Result<RawData> {
        let raw = locked(|| -> Result<Option<RawData>> {
            // SAFETY: valid dataset id; the type and dataspace ids are owned by handles; the
            // buffer holds every element of the file type read.
            unsafe {
                let tid = Hid::new(H5Dget_type(self.hid()), || {
                    "cannot read the datatype".into()
                })?;
                let ty = crate::types::from_id(tid.id())?;
                if ty.has_vlen() {
                    return Err(Error::unsupported(
                        "the dataset holds variable-length data: use read_vlen",
                    ));
                }
                if matches!(ty, H5Type::Float { size, .. } if size > 8) {
                    return Ok(None);
                }
                let space = Hid::new(H5Dget_space(self.hid()), || {
                    "cannot read the dataspace".into()
                })?;
                let class = H5Sget_simple_extent_type(space.id());
                if !matches!(class, H5S_class_t::H5S_SIMPLE | H5S_class_t::H5S_SCALAR) {
                    return Ok(None);
                }
                let rank = check(H5Sget_simple_extent_ndims(space.id()), || {
                    "cannot read the rank".into()
                })?;
                let mut dims = vec![0u64; rank as usize];
                check(
                    H5Sget_simple_extent_dims(space.id(), dims.as_mut_ptr(), std::ptr::null_mut()),
                    || "cannot read the shape".into(),
                )?;
                let shape: Vec<usize> = dims
                    .iter()
                    .map(|&d| usize::try_from(d))
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|_| Error::new(ErrorKind::LimitExceeded, "dataset too large"))?;
                let bytes = shape
                    .iter()
                    .try_fold(1usize, |a, &d| a.checked_mul(d))
                    .and_then(|n| n.checked_mul(ty.size()))
                    .ok_or_else(|| {
                        Error::new(ErrorKind::LimitExceeded, "dataset size overflows")
                    })?;
                self.file().limits().check_alloc(bytes as u64, "dataset")?;
                let mut buf = vec![0u8; bytes];
                if bytes > 0 {
                    check(
                        H5Dread(
                            self.hid(),
                            tid.id(),
                            H5S_ALL,
                            H5S_ALL,
                            H5P_DEFAULT,
                            buf.as_mut_ptr().cast(),
                        ),
                        || "cannot read the data".into(),
                    )?;
                }
                Ok(Some(RawData {
                    ty,
                    shape,
                    bytes: buf,
                }))
            }
        })
        .map_err(|e| self.locate(e))?;
        match raw {
            Some(raw) => Ok(raw),
            None => self.read(),
        }
    }

    /// The attributes among `names` the dataset has, in the file's (name) order; the others
    /// are listed but not read. Formats that read a few known attributes of many small
    /// datasets (MAT: `MATLAB_class`, `MATLAB_empty`...) skip the values of the rest
    /// (`H5PATH`, `Python.*`).
    ///
    /// ```no_run
    /// let file = sciio_hdf5::File::open("data.mat")?;
    /// let attrs = file.dataset("/x")?.attrs_named(&["MATLAB_class"])?;
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn attrs_named(&self, names: &[&str]) -> Result<Vec<Attribute>> {
        let wanted = crate::file::attr_names(self.hid())
            .map(|present| {
                present
                    .into_iter()
                    .filter(|n| names.contains(&n.as_str()))
                    .collect()
            })
            .map_err(|e| self.locate(e))?;
        crate::file::read_listed_attrs(self.hid(), wanted, &self.file().limits())
            .map_err(|e| self.locate(e))
    }
}

impl File {
    /// The dataset whose object header is at `addr` ([`crate::Link::addr`], an object
    /// reference), decoded straight from the in-memory image of a file opened with
    /// [`File::open_in_memory`]: its attributes (name order) and all its data, as
    /// [`Dataset::attrs`] and [`Dataset::read`] give them. `None` when the file is not in
    /// memory or the object is anything but a small plain dataset (version-1 object header,
    /// contiguous or compact layout, no filters, fixed-size attributes, numbers, fixed
    /// strings or object references): open it with [`File::object_at`] then. A damaged
    /// header also gives `None`, so that libhdf5 reports it.
    ///
    /// ```no_run
    /// use sciio_hdf5::File;
    /// let file = File::open_in_memory("cells.mat", sciio_core::Limits::default())?;
    /// for link in file.group("/#refs#")?.links()? {
    ///     if let Some((attrs, data)) = link.addr.and_then(|a| file.small_dataset_at(a)) {
    ///         println!("{}: {} attributes, {:?}", link.name, attrs.len(), data.shape);
    ///     }
    /// }
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn small_dataset_at(&self, addr: u64) -> Option<(Vec<Attribute>, RawData)> {
        self.image()?.small_dataset(addr, &self.limits())
    }
}
