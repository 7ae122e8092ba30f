//! Soft and external links, written as links (their targets are stored, never resolved), as
//! `ptrepack` copies them and PyTables' `create_soft_link`/`create_external_link` make them.

use hdf5_sys::h5l::{H5Lcreate_external, H5Lcreate_soft};
use hdf5_sys::h5p::H5P_DEFAULT;
use sciio_core::Result;

use super::writers::GroupWriter;
use crate::handle::{c_name, check, locked};

impl GroupWriter {
    /// Makes `name` a soft link to `target` (a path in the same file, absolute or relative
    /// to this group; it need not exist).
    ///
    /// ```no_run
    /// use sciio_hdf5::write::FileBuilder;
    /// let file = FileBuilder::new().create("l.h5")?;
    /// let root = file.root()?;
    /// root.create_soft_link("alias", "/somewhere/else")?;
    /// root.create_external_link("ext", "other.h5", "/x")?;
    /// file.close()?;
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn create_soft_link(&self, name: &str, target: &str) -> Result<()> {
        let c = self.check_name(name)?;
        let t = c_name(target)?;
        locked(|| {
            // SAFETY: valid group id and C strings.
            check(
                unsafe {
                    H5Lcreate_soft(
                        t.as_ptr(),
                        self.hid.id(),
                        c.as_ptr(),
                        H5P_DEFAULT,
                        H5P_DEFAULT,
                    )
                },
                || "cannot create the soft link (does the name exist?)".into(),
            )
        })
        .map(|_| ())
        .map_err(|e| self.file.locate(e, &self.child_path(name)))
    }

    /// Makes `name` an external link to the object `path` of the file `file` (stored as
    /// given; it need not exist).
    pub fn create_external_link(&self, name: &str, file: &str, path: &str) -> Result<()> {
        let c = self.check_name(name)?;
        let f = c_name(file)?;
        let p = c_name(path)?;
        locked(|| {
            // SAFETY: valid group id and C strings.
            check(
                unsafe {
                    H5Lcreate_external(
                        f.as_ptr(),
                        p.as_ptr(),
                        self.hid.id(),
                        c.as_ptr(),
                        H5P_DEFAULT,
                        H5P_DEFAULT,
                    )
                },
                || "cannot create the external link (does the name exist?)".into(),
            )
        })
        .map(|_| ())
        .map_err(|e| self.file.locate(e, &self.child_path(name)))
    }
}
