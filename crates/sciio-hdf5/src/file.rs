//! Files, groups, links, datasets and attributes over the raw libhdf5 calls.

use std::ffi::{c_char, c_void};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hdf5_sys::h5::{herr_t, hsize_t, H5_index_t, H5_iter_order_t};
use hdf5_sys::h5a::{
    H5A_info_t, H5Aget_space, H5Aget_storage_size, H5Aget_type, H5Aiterate2, H5Aopen, H5Aread,
};
use hdf5_sys::h5d::{
    H5D_layout_t, H5Dget_create_plist, H5Dget_space, H5Dget_type, H5Dopen2, H5Dread,
};
use hdf5_sys::h5f::{H5Fopen, H5F_ACC_RDONLY};
use hdf5_sys::h5g::H5Gopen2;
use hdf5_sys::h5i::{hid_t, H5I_type_t, H5Iget_type};
use hdf5_sys::h5l::{H5L_info2_t, H5L_type_t, H5Lget_val, H5Literate2, H5Lunpack_elink_val};
use hdf5_sys::h5o::{
    H5O_info2_t, H5O_token_t, H5O_type_t, H5Oget_info_by_name3, H5Oopen, H5Oopen_by_token,
    H5O_INFO_BASIC,
};
use hdf5_sys::h5p::{H5Pget_chunk, H5Pget_filter2, H5Pget_layout, H5Pget_nfilters, H5P_DEFAULT};
use hdf5_sys::h5s::{
    H5S_class_t, H5S_seloper_t, H5Sget_simple_extent_dims, H5Sget_simple_extent_ndims,
    H5Sget_simple_extent_type, H5Sselect_hyperslab,
};
use hdf5_sys::h5t::{
    H5T_cset_t, H5Tcopy, H5Tget_size, H5Treclaim, H5Tset_cset, H5Tset_size, H5Tvlen_create,
    H5T_C_S1, H5T_VARIABLE,
};
use sciio_core::{Error, ErrorKind, Limits, Result};

use crate::handle::{
    c_name, check, last_error, locked, simple_space, string_from_c, token_address, Hid,
};
use crate::types::{CharSet, H5Type};
pub use sciio_h5native::{AttrValue, Attribute, RawData, Slice, VlenData};

/// Chunk offset (element coordinates) -> (absolute file address, stored size, filter mask):
/// a chunked dataset's index, as `chunks.rs` lists it.
pub(crate) type ChunkIndex = std::collections::HashMap<Vec<u64>, (u64, u64, u32)>;

/// A dataset's path and its chunk index.
type LastChunkIndex = std::sync::Mutex<Option<(String, Arc<ChunkIndex>)>>;

struct FileInner {
    hid: Hid,
    path: PathBuf,
    /// The whole file, for files opened with [`File::open_in_memory`]: small datasets are
    /// decoded from it without libhdf5 (see `small.rs`).
    image: Option<crate::image::Image>,
    /// The file for checking object headers before libhdf5 loads them (`header.rs`), when its
    /// superblock is one sciio reads.
    disk: Option<crate::header::Disk>,
    /// The chunk index of the chunked dataset read last (its path and index): the file is
    /// read-only, and a dataset read a block of rows at a time needs it at every block.
    last_chunk_index: LastChunkIndex,
}

impl std::fmt::Debug for FileInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File").field("path", &self.path).finish()
    }
}

/// An HDF5 file opened read-only.
///
/// ```no_run
/// let file = sciio_hdf5::File::open("data.h5")?;
/// for link in file.root()?.links()? {
///     println!("{} {:?}", link.name, link.kind);
/// }
/// # Ok::<(), sciio_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct File {
    inner: Arc<FileInner>,
    limits: Limits,
}

impl File {
    /// Opens `path` for reading with default [`Limits`].
    pub fn open(path: impl AsRef<Path>) -> Result<File> {
        Self::open_with_limits(path, Limits::default())
    }

    /// Opens `path` for reading; sizes announced by the file are bounded by `limits`.
    pub fn open_with_limits(path: impl AsRef<Path>, limits: Limits) -> Result<File> {
        Self::open_via(path.as_ref(), limits, false)
    }

    /// Opens `path` for reading like [`File::open_with_limits`] and also reads the whole file
    /// into memory, from which [`File::small_dataset_at`] decodes small plain datasets
    /// without libhdf5 (MAT cells and structs are thousands of them); libhdf5 reads the rest
    /// from disk as usual. The file's size counts against `limits`; large files are better
    /// opened with [`File::open_with_limits`], which reads only what is asked for.
    ///
    /// ```no_run
    /// let file = sciio_hdf5::File::open_in_memory("cells.mat", sciio_core::Limits::default())?;
    /// println!("{} entries", file.root()?.links()?.len());
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn open_in_memory(path: impl AsRef<Path>, limits: Limits) -> Result<File> {
        Self::open_via(path.as_ref(), limits, true)
    }

    fn open_via(path: &Path, limits: Limits, in_memory: bool) -> Result<File> {
        let meta = std::fs::metadata(path)
            .map_err(|e| Error::io("cannot open the file", e).with_file(path))?;
        if !meta.is_file() {
            return Err(Error::invalid_input("not a regular file").with_file(path));
        }
        if in_memory {
            limits
                .check_alloc(meta.len(), "file image")
                .map_err(|e| e.with_file(path))?;
        }
        let image = if in_memory {
            crate::image::Image::read(path).map_err(|e| e.with_file(path))?
        } else {
            None
        };
        let disk = crate::header::check_root_header(path).map_err(|e| e.with_file(path))?;
        let c_path = c_name(&path.to_string_lossy()).map_err(|e| e.with_file(path))?;
        let hid = crate::handle::retry_while_briefly_locked(|| {
            locked(|| {
                // SAFETY: valid C string; read-only open with default property lists.
                Hid::new(
                    unsafe { H5Fopen(c_path.as_ptr(), H5F_ACC_RDONLY, H5P_DEFAULT) },
                    || "not an HDF5 file, or its superblock is damaged".to_string(),
                )
                .inspect(|hid| crate::handle::close_on_exec(hid.id()))
            })
        })
        .map_err(|e| e.with_file(path))?;
        Ok(File {
            inner: Arc::new(FileInner {
                hid,
                path: path.to_path_buf(),
                image,
                disk,
                last_chunk_index: std::sync::Mutex::new(None),
            }),
            limits,
        })
    }

    /// The chunk index of the dataset at `path`: the one kept from the last call for the same
    /// path, else listed by `list` (and kept instead).
    pub(crate) fn last_chunk_index(
        &self,
        path: &str,
        list: impl FnOnce() -> Result<Arc<ChunkIndex>>,
    ) -> Result<Arc<ChunkIndex>> {
        let kept = self.inner.last_chunk_index.lock().ok().and_then(|last| {
            last.as_ref()
                .filter(|(p, _)| p == path)
                .map(|(_, index)| Arc::clone(index))
        });
        if let Some(index) = kept {
            return Ok(index);
        }
        let index = list()?;
        if let Ok(mut last) = self.inner.last_chunk_index.lock() {
            *last = Some((path.to_string(), Arc::clone(&index)));
        }
        Ok(index)
    }

    /// The path the file was opened from.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The file's libhdf5 id, valid while `self` lives.
    pub(crate) fn hid(&self) -> hid_t {
        self.inner.hid.id()
    }

    /// The in-memory image of the file, when opened with [`File::open_in_memory`].
    pub(crate) fn image(&self) -> Option<&crate::image::Image> {
        self.inner.image.as_ref()
    }

    /// The allocation limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    fn locate(&self, err: Error, node: &str) -> Error {
        err.with_node(node).with_file(&self.inner.path)
    }

    /// The root group `/`.
    pub fn root(&self) -> Result<Group> {
        self.group("/")
    }

    /// Opens the object at `path` with libhdf5's `open` call for its kind (H5Gopen2, H5Dopen2).
    fn open_object(
        &self,
        path: &str,
        open: unsafe extern "C" fn(hid_t, *const std::ffi::c_char, hid_t) -> hid_t,
        what: &str,
    ) -> Result<Hid> {
        let name = c_name(path).map_err(|e| self.locate(e, path))?;
        self.check_header_of(&name, what)
            .map_err(|e| self.locate(e, path))?;
        locked(|| {
            // SAFETY: valid ids and C string; `open` is one of libhdf5's open calls.
            Hid::new(
                unsafe { open(self.inner.hid.id(), name.as_ptr(), H5P_DEFAULT) },
                || format!("cannot open the {what}"),
            )
        })
        .map_err(|e| self.locate(e, path))
    }

    /// Checks the object header a hard link at `name` points to before libhdf5 loads it
    /// (`header::check_object_header`); other links, and files whose superblock sciio does
    /// not read, are left to libhdf5.
    fn check_header_of(&self, name: &std::ffi::CStr, what: &str) -> Result<()> {
        if self.inner.disk.is_none() || name.to_bytes() == b"/" {
            return Ok(()); // checked when the file was opened
        }
        let addr = locked(|| {
            // SAFETY: H5L_info2_t is a plain C struct (integers and a union of them): all-zero is a
            // valid value.
            let mut info: H5L_info2_t = unsafe { std::mem::zeroed() };
            // SAFETY: valid ids, C string and out-pointer; the union holds a token for hard
            // links.
            let found = unsafe {
                hdf5_sys::h5l::H5Lget_info2(
                    self.inner.hid.id(),
                    name.as_ptr(),
                    &mut info,
                    H5P_DEFAULT,
                )
            };
            (found >= 0 && info.type_ == H5L_type_t::H5L_TYPE_HARD)
                // SAFETY: `found >= 0` and a hard link: libhdf5 filled `info` and its union holds a
                // token.
                .then(|| token_address(unsafe { &*info.u.token() }))
        });
        match addr {
            Some(addr) => self.check_header_at(addr, what),
            // libhdf5 reports a missing or broken link when it opens it.
            None => Ok(()),
        }
    }

    /// Checks the object header at `addr` before libhdf5 loads it, from the in-memory image
    /// when there is one.
    fn check_header_at(&self, addr: u64, what: &str) -> Result<()> {
        let Some(disk) = &self.inner.disk else {
            return Ok(());
        };
        match self.image() {
            Some(image) => crate::header::check_object_header_in(
                &|a, n| image.at(a, n).map(std::borrow::Cow::Borrowed),
                disk,
                addr,
                what,
            ),
            None => crate::header::check_object_header(disk, addr, what),
        }
    }

    /// The group at absolute `path`.
    pub fn group(&self, path: &str) -> Result<Group> {
        let hid = self.open_object(path, H5Gopen2, "group")?;
        Ok(Group {
            file: self.clone(),
            hid,
            path: path.to_string(),
        })
    }

    /// The dataset at absolute `path`.
    pub fn dataset(&self, path: &str) -> Result<Dataset> {
        let hid = self.open_object(path, H5Dopen2, "dataset")?;
        Ok(Dataset {
            file: self.clone(),
            hid,
            path: path.to_string(),
        })
    }

    /// The object at absolute `path`, opened once whatever its kind (one H5Oopen instead of
    /// [`File::object_info`] followed by the kind's own open call).
    ///
    /// ```no_run
    /// use sciio_hdf5::{File, Object};
    /// let file = File::open("data.h5")?;
    /// if let Object::Dataset(d) = file.object("/x")? {
    ///     println!("{:?}", d.shape()?);
    /// }
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn object(&self, path: &str) -> Result<Object> {
        let hid = self.open_object(path, H5Oopen, "object")?;
        Ok(self.classify(hid, path))
    }

    /// The dataset whose object header is at file address `addr` (an object reference's
    /// target, as [`ObjectInfo::id`]'s token holds it), opened without looking its path up
    /// link by link; `path` only names it in errors and in [`Dataset::path`]. The caller
    /// knows the object is a dataset (e.g. from [`File::object_info`]); if it is not, the
    /// dataset calls on it return errors.
    ///
    /// ```no_run
    /// use sciio_hdf5::File;
    /// let file = File::open("refs.h5")?;
    /// // A dataset of object references: 8-byte little-endian addresses.
    /// let refs = file.dataset("/r")?.read()?;
    /// for addr in refs.bytes.chunks_exact(8) {
    ///     let addr = u64::from_le_bytes(addr.try_into().unwrap_or_default());
    ///     let target = file.dataset_at(addr, "/r[target]")?;
    ///     println!("{:?}", target.shape()?);
    /// }
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn dataset_at(&self, addr: u64, path: &str) -> Result<Dataset> {
        let hid = self.open_at(addr, path)?;
        Ok(Dataset {
            file: self.clone(),
            hid,
            path: path.to_string(),
        })
    }

    /// The group whose object header is at file address `addr`; see [`File::dataset_at`].
    pub fn group_at(&self, addr: u64, path: &str) -> Result<Group> {
        let hid = self.open_at(addr, path)?;
        Ok(Group {
            file: self.clone(),
            hid,
            path: path.to_string(),
        })
    }

    /// The object whose header is at file address `addr` ([`Link::addr`], an object
    /// reference's target), opened once whatever its kind: one H5Oopen_by_token, no path
    /// lookup and no object-info call. `path` only names it in errors and in the result.
    ///
    /// ```no_run
    /// use sciio_hdf5::{File, Object};
    /// let file = File::open("data.mat")?;
    /// for link in file.group("/#refs#")?.links()? {
    ///     if let (Some(addr), path) = (link.addr, format!("/#refs#/{}", link.name)) {
    ///         if let Object::Dataset(d) = file.object_at(addr, &path)? {
    ///             println!("{path}: {:?}", d.shape()?);
    ///         }
    ///     }
    /// }
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn object_at(&self, addr: u64, path: &str) -> Result<Object> {
        let hid = self.open_at(addr, path)?;
        Ok(self.classify(hid, path))
    }

    /// Wraps an object id just opened as the [`Object`] of its kind.
    fn classify(&self, hid: Hid, path: &str) -> Object {
        // SAFETY: a valid id just opened.
        let kind = locked(|| unsafe { H5Iget_type(hid.id()) });
        let path = path.to_string();
        match kind {
            H5I_type_t::H5I_GROUP => Object::Group(Group {
                file: self.clone(),
                hid,
                path,
            }),
            H5I_type_t::H5I_DATASET => Object::Dataset(Dataset {
                file: self.clone(),
                hid,
                path,
            }),
            H5I_type_t::H5I_DATATYPE => Object::Other(ObjectKind::NamedType),
            _ => Object::Other(ObjectKind::Other),
        }
    }

    /// Opens the object at `addr` with H5Oopen_by_token (a native-VOL token is the object
    /// header's address, little-endian, zero-padded).
    fn open_at(&self, addr: u64, path: &str) -> Result<Hid> {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&addr.to_le_bytes());
        // SAFETY: H5O_token_t is a repr(C) wrapper of 16 bytes.
        let token = unsafe { std::mem::transmute::<[u8; 16], H5O_token_t>(bytes) };
        self.check_header_at(addr, "object")
            .map_err(|e| self.locate(e, path))?;
        locked(|| {
            // SAFETY: valid file id; libhdf5 checks the token's address against the file.
            Hid::new(
                unsafe { H5Oopen_by_token(self.inner.hid.id(), token) },
                || format!("cannot open the object at address {addr:#x}"),
            )
        })
        .map_err(|e| self.locate(e, path))
    }

    /// What kind of object `path` names (following soft links), with its identity for cycle
    /// detection.
    pub fn object_info(&self, path: &str) -> Result<ObjectInfo> {
        let name = c_name(path).map_err(|e| self.locate(e, path))?;
        self.check_header_of(&name, "object")
            .map_err(|e| self.locate(e, path))?;
        locked(|| {
            // SAFETY: H5O_info2_t is a plain C struct of integers: all-zero is a valid value.
            let mut info: H5O_info2_t = unsafe { std::mem::zeroed() };
            // SAFETY: valid ids, C string and out-pointer.
            check(
                unsafe {
                    H5Oget_info_by_name3(
                        self.inner.hid.id(),
                        name.as_ptr(),
                        &mut info,
                        H5O_INFO_BASIC,
                        H5P_DEFAULT,
                    )
                },
                || "cannot read the object header".to_string(),
            )?;
            let kind = match info.type_ {
                H5O_type_t::H5O_TYPE_GROUP => ObjectKind::Group,
                H5O_type_t::H5O_TYPE_DATASET => ObjectKind::Dataset,
                H5O_type_t::H5O_TYPE_NAMED_DATATYPE => ObjectKind::NamedType,
                _ => ObjectKind::Other,
            };
            Ok(ObjectInfo {
                kind,
                // SAFETY: H5O_token_t is a repr(C) wrapper of 16 bytes.
                id: (info.fileno as u64, unsafe {
                    std::mem::transmute::<hdf5_sys::h5o::H5O_token_t, [u8; 16]>(info.token)
                }),
            })
        })
        .map_err(|e| self.locate(e, path))
    }
}

/// An object opened by [`File::object`].
#[derive(Debug)]
pub enum Object {
    /// A group.
    Group(Group),
    /// A dataset.
    Dataset(Dataset),
    /// Anything else (closed again), with its kind.
    Other(ObjectKind),
}

/// A dataspace's current shape and maximum shape (`None` = unlimited).
pub type Extent = (Vec<u64>, Vec<Option<u64>>);

/// Kinds of HDF5 objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// A group.
    Group,
    /// A dataset.
    Dataset,
    /// A committed (named) datatype.
    NamedType,
    /// Anything else (maps...).
    Other,
}

/// What an object is, and a key identifying it within the process (file number + token), so
/// tree walkers can refuse to enter a group twice (hard-link cycles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObjectInfo {
    /// The object's kind.
    pub kind: ObjectKind,
    /// Identity key.
    pub id: (u64, [u8; 16]),
}

/// What a link in a group points to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkKind {
    /// A hard link (the object itself).
    Hard,
    /// A soft link to a path in the same file (never followed by tree walkers).
    Soft {
        /// Target path.
        target: String,
    },
    /// An external link to an object in another file (never followed).
    External {
        /// Target file name as stored.
        file: String,
        /// Target object path in that file.
        path: String,
    },
    /// A user-defined link class.
    Other,
}

/// One entry of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The entry name.
    pub name: String,
    /// Where it points.
    pub kind: LinkKind,
    /// For a hard link, the target's object-header address (the first eight bytes of its
    /// native-VOL token, what an old-style object reference holds), as the group listing
    /// reports it: objects can be opened with [`File::object_at`] and references resolved
    /// without one object-info call per link.
    pub addr: Option<u64>,
}

/// A group.
#[derive(Debug)]
pub struct Group {
    file: File,
    hid: Hid,
    path: String,
}

/// Joins a group path and a member name.
pub fn join_path(group: &str, name: &str) -> String {
    if group.ends_with('/') {
        format!("{group}{name}")
    } else {
        format!("{group}/{name}")
    }
}

impl Group {
    /// The group's absolute path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The file the group belongs to.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The group's entries in name order (PyTables' order), without following any link.
    pub fn links(&self) -> Result<Vec<Link>> {
        struct State {
            /// Name, link type, value size (soft/external) or target address (hard).
            names: Vec<(String, H5L_type_t, u64)>,
        }
        // SAFETY: called by libhdf5's H5Literate2 only, with valid pointers and our State as
        // `data`.
        unsafe extern "C" fn visit(
            _group: hid_t,
            name: *const c_char,
            info: *const H5L_info2_t,
            data: *mut c_void,
        ) -> herr_t {
            // SAFETY: libhdf5 passes valid pointers; `data` is our State.
            unsafe {
                let state = &mut *(data as *mut State);
                let (kind, size) = match info.as_ref() {
                    Some(i) => {
                        let mut u = i.u;
                        (
                            i.type_,
                            if i.type_ == H5L_type_t::H5L_TYPE_HARD {
                                token_address(&*u.token())
                            } else {
                                *u.val_size() as u64
                            },
                        )
                    }
                    None => (H5L_type_t::H5L_TYPE_ERROR, 0),
                };
                state.names.push((string_from_c(name), kind, size));
            }
            0
        }
        let mut state = State { names: Vec::new() };
        let gid = self.hid.id();
        locked(|| -> Result<Vec<Link>> {
            let mut idx: hsize_t = 0;
            // SAFETY: valid group id and callback.
            check(
                unsafe {
                    H5Literate2(
                        gid,
                        H5_index_t::H5_INDEX_NAME,
                        H5_iter_order_t::H5_ITER_INC,
                        &mut idx,
                        Some(visit),
                        &mut state as *mut State as *mut c_void,
                    )
                },
                || "cannot list the group".to_string(),
            )?;
            let mut out = Vec::with_capacity(state.names.len());
            for (name, kind, size) in std::mem::take(&mut state.names) {
                let mut addr = None;
                let kind = match kind {
                    H5L_type_t::H5L_TYPE_HARD => {
                        addr = Some(size);
                        LinkKind::Hard
                    }
                    H5L_type_t::H5L_TYPE_SOFT | H5L_type_t::H5L_TYPE_EXTERNAL => link_value(
                        gid,
                        &name,
                        kind,
                        usize::try_from(size).unwrap_or(usize::MAX),
                    )?,
                    _ => LinkKind::Other,
                };
                out.push(Link { name, kind, addr });
            }
            Ok(out)
        })
        .map_err(|e| e.with_node(&self.path).with_file(self.file.path()))
    }

    /// The group's attributes.
    pub fn attrs(&self) -> Result<Vec<Attribute>> {
        read_attrs(self.hid.id(), &self.file.limits)
            .map_err(|e| e.with_node(&self.path).with_file(self.file.path()))
    }

    /// One attribute, or `None` when absent.
    pub fn attr(&self, name: &str) -> Result<Option<Attribute>> {
        read_attr(self.hid.id(), name, &self.file.limits).map_err(|e| {
            e.with_node(format!("{}/.{name}", self.path))
                .with_file(self.file.path())
        })
    }
}

fn link_value(gid: hid_t, name: &str, kind: H5L_type_t, size: usize) -> Result<LinkKind> {
    if size > 1 << 20 {
        return Err(Error::format(format!(
            "link {name:?} value of {size} bytes"
        )));
    }
    let c = c_name(name)?;
    let mut buf = vec![0u8; size.max(1)];
    // SAFETY: buffer of the size libhdf5 reported.
    check(
        unsafe {
            H5Lget_val(
                gid,
                c.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                H5P_DEFAULT,
            )
        },
        || format!("cannot read link {name:?}"),
    )?;
    if kind == H5L_type_t::H5L_TYPE_SOFT {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        return Ok(LinkKind::Soft {
            target: String::from_utf8_lossy(&buf[..end]).into_owned(),
        });
    }
    let mut flags = 0u32;
    let mut file: *const c_char = std::ptr::null();
    let mut path: *const c_char = std::ptr::null();
    // SAFETY: unpacks pointers into `buf`, which outlives their use here.
    check(
        unsafe {
            H5Lunpack_elink_val(
                buf.as_ptr().cast(),
                buf.len(),
                &mut flags,
                &mut file,
                &mut path,
            )
        },
        || format!("cannot decode external link {name:?}"),
    )?;
    // SAFETY: both point into `buf`, NUL-terminated per H5Lunpack_elink_val's contract.
    Ok(unsafe {
        LinkKind::External {
            file: string_from_c(file),
            path: string_from_c(path),
        }
    })
}

/// How a dataset's data is laid out in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// In the object header.
    Compact,
    /// One contiguous block.
    Contiguous,
    /// Chunked (possibly filtered, possibly extendible).
    Chunked,
    /// Virtual dataset or other.
    Other,
}

/// One filter of a dataset's pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// Registered filter id (see [`crate::filters::id`]).
    pub id: i32,
    /// Name stored in the file (or sciio's name for it).
    pub name: String,
    /// Client data values.
    pub cd_values: Vec<u32>,
    /// Filter flags (bit 0: optional).
    pub flags: u32,
}

/// A dataset.
#[derive(Debug)]
pub struct Dataset {
    file: File,
    hid: Hid,
    path: String,
}

impl Dataset {
    /// The dataset's absolute path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The file the dataset belongs to.
    pub fn file(&self) -> &File {
        &self.file
    }

    pub(crate) fn hid(&self) -> hid_t {
        self.hid.id()
    }

    pub(crate) fn locate(&self, e: Error) -> Error {
        e.with_node(&self.path).with_file(self.file.path())
    }

    /// Current shape (empty for a scalar) and maximum shape (`None` = unlimited); a null
    /// dataspace has shape `[0]`... reported as `None` here.
    pub fn extent(&self) -> Result<Option<Extent>> {
        locked(|| {
            // SAFETY: valid dataset id.
            let space = Hid::new(unsafe { H5Dget_space(self.hid.id()) }, || {
                "cannot read the dataspace".into()
            })?;
            space_extent(space.id())
        })
        .map_err(|e| self.locate(e))
    }

    /// Current shape (empty for scalars and null dataspaces).
    pub fn shape(&self) -> Result<Vec<u64>> {
        Ok(self.extent()?.map(|(s, _)| s).unwrap_or_default())
    }

    /// The element type.
    pub fn dtype(&self) -> Result<H5Type> {
        locked(|| {
            // SAFETY: valid dataset id.
            let t = Hid::new(unsafe { H5Dget_type(self.hid.id()) }, || {
                "cannot read the datatype".into()
            })?;
            crate::types::from_id(t.id())
        })
        .map_err(|e| self.locate(e))
    }

    /// Storage layout, chunk shape (when chunked) and filter pipeline.
    pub fn storage(&self) -> Result<(Layout, Option<Vec<u64>>, Vec<Filter>)> {
        locked(|| {
            // SAFETY: valid ids; buffers sized as passed.
            let dcpl = Hid::new(unsafe { H5Dget_create_plist(self.hid.id()) }, || {
                "cannot read creation properties".into()
            })?;
            let layout = match unsafe { H5Pget_layout(dcpl.id()) } {
                H5D_layout_t::H5D_COMPACT => Layout::Compact,
                H5D_layout_t::H5D_CONTIGUOUS => Layout::Contiguous,
                H5D_layout_t::H5D_CHUNKED => Layout::Chunked,
                _ => Layout::Other,
            };
            let chunks = if layout == Layout::Chunked {
                let mut dims = [0 as hsize_t; 32];
                let n = check(
                    // SAFETY: valid property-list id; `dims` holds the 32 entries the call may
                    // write.
                    unsafe { H5Pget_chunk(dcpl.id(), 32, dims.as_mut_ptr()) },
                    || "cannot read chunk shape".into(),
                )?;
                Some(dims[..(n as usize).min(32)].to_vec())
            } else {
                None
            };
            // SAFETY: valid property-list id.
            let n = check(unsafe { H5Pget_nfilters(dcpl.id()) }, || {
                "cannot read the filter pipeline".into()
            })?;
            let mut filters = Vec::new();
            for i in 0..n as u32 {
                let mut flags = 0u32;
                let mut nelmts: usize = 32;
                let mut cd = [0u32; 32];
                let mut name = [0 as c_char; 64];
                let mut config = 0u32;
                // SAFETY: valid property-list id; every out-pointer is valid and sized as passed
                // (`nelmts` = cd's 32 entries, `name.len()` bytes).
                let id = unsafe {
                    H5Pget_filter2(
                        dcpl.id(),
                        i,
                        &mut flags,
                        &mut nelmts,
                        cd.as_mut_ptr(),
                        name.len(),
                        name.as_mut_ptr(),
                        &mut config,
                    )
                };
                check(id, || "cannot read a filter".into())?;
                // SAFETY: libhdf5 NUL-terminates `name` within its length (and it was zeroed).
                let stored = unsafe { string_from_c(name.as_ptr()) };
                filters.push(Filter {
                    id,
                    name: if stored.is_empty() {
                        crate::filters::filter_name(id).to_string()
                    } else {
                        stored
                    },
                    cd_values: cd[..nelmts.min(32)].to_vec(),
                    flags,
                });
            }
            Ok((layout, chunks, filters))
        })
        .map_err(|e| self.locate(e))
    }

    /// The dataset's attributes.
    pub fn attrs(&self) -> Result<Vec<Attribute>> {
        read_attrs(self.hid.id(), &self.file.limits).map_err(|e| self.locate(e))
    }

    /// One attribute, or `None` when absent.
    pub fn attr(&self, name: &str) -> Result<Option<Attribute>> {
        read_attr(self.hid.id(), name, &self.file.limits).map_err(|e| {
            e.with_node(format!("{}/.{name}", self.path))
                .with_file(self.file.path())
        })
    }

    /// Reads the whole dataset (fixed-layout types).
    pub fn read(&self) -> Result<RawData> {
        self.read_slices(None)
    }

    /// Reads a hyperslab (`None` = everything); one [`Slice`] per dimension.
    pub fn read_slices(&self, slices: Option<&[Slice]>) -> Result<RawData> {
        let ty = self.dtype()?;
        if ty.has_vlen() {
            return Err(self.locate(Error::unsupported(
                "the dataset holds variable-length data: use read_vlen",
            )));
        }
        self.check_filters_available()?;
        let (layout, chunk, _) = self.storage()?;
        self.check_fill_bound(&self.shape()?, layout, chunk.as_deref(), ty.size())?;
        locked(|| {
            let (space, shape) = self.select(slices)?;
            // Quad floats are converted to the native long double (as numpy/PyTables read
            // them): same 16-byte size.
            let (mtype, ty) = self.memory_type(&ty)?;
            let bytes = self.read_selection(&mtype, &space, &shape)?;
            Ok(RawData { ty, shape, bytes })
        })
        .map_err(|e| self.locate(e))
    }

    /// Reads the selection `space` (`shape` elements) in the memory type `mtype` into a buffer
    /// of exactly that many elements of the type's size, checked against the file's
    /// allocation limit before it is made (caller holds the library lock).
    pub(crate) fn read_selection(
        &self,
        mtype: &Hid,
        space: &Hid,
        shape: &[usize],
    ) -> Result<Vec<u8>> {
        // SAFETY: valid type id.
        let size = unsafe { H5Tget_size(mtype.id()) };
        let bytes = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .and_then(|n| n.checked_mul(size))
            .ok_or_else(|| Error::new(ErrorKind::LimitExceeded, "selection size overflows"))?;
        self.file
            .limits
            .check_alloc(bytes as u64, "dataset selection")?;
        let mut buf = vec![0u8; bytes];
        if bytes > 0 {
            let mspace = simple_space(shape)?;
            // SAFETY: the memory type is `size` bytes per element (asked of the type itself)
            // and `buf` holds `shape`'s elements of it: libhdf5 writes exactly `bytes` bytes.
            unsafe { self.read_into(mtype, &mspace, space, buf.as_mut_ptr().cast())? };
        }
        Ok(buf)
    }

    /// `H5Dread` of the file selection `space` into `buf`, laid out as `mspace` in `mtype`.
    ///
    /// # Safety
    /// `buf` must hold `mspace`'s elements of `mtype`, and the ids must be valid.
    unsafe fn read_into(
        &self,
        mtype: &Hid,
        mspace: &Hid,
        space: &Hid,
        buf: *mut c_void,
    ) -> Result<()> {
        check(
            // SAFETY: the caller's contract.
            unsafe {
                H5Dread(
                    self.hid.id(),
                    mtype.id(),
                    mspace.id(),
                    space.id(),
                    H5P_DEFAULT,
                    buf,
                )
            },
            || "cannot read the data".into(),
        )
        .map(|_| ())
    }

    /// The memory type for reading `ty`: the file type itself (no conversion), except IEEE
    /// quad floats, which numpy cannot hold and which are read as the native long double.
    fn memory_type(&self, ty: &H5Type) -> Result<(Hid, H5Type)> {
        // SAFETY: valid ids; type ids owned by the returned handle.
        unsafe {
            if matches!(
                ty,
                H5Type::Float {
                    size: 16,
                    precision: 128,
                    ..
                }
            ) {
                let t = Hid::new(H5Tcopy(*hdf5_sys::h5t::H5T_NATIVE_LDOUBLE), || {
                    "cannot copy the long double type".into()
                })?;
                let native = crate::types::from_id(t.id())?;
                if native.size() == 16 {
                    return Ok((t, native));
                }
            }
            let t = Hid::new(H5Dget_type(self.hid.id()), || {
                "cannot read the datatype".into()
            })?;
            Ok((t, ty.clone()))
        }
    }

    /// Whether libhdf5 can undo every filter of the pipeline (szip, for one, is not built in);
    /// an error naming the first missing filter otherwise.
    pub fn check_filters_available(&self) -> Result<()> {
        let (_, _, pipeline) = self.storage()?;
        for f in pipeline {
            // SAFETY: plain query.
            let avail = locked(|| unsafe { hdf5_sys::h5z::H5Zfilter_avail(f.id) });
            if avail <= 0 {
                locked(|| unsafe { hdf5_sys::h5e::H5Eclear2(hdf5_sys::h5e::H5E_DEFAULT) });
                return Err(self.locate(Error::unsupported(format!(
                    "the data is compressed with filter {} ({}), which sciio cannot decode",
                    f.id, f.name
                ))));
            }
        }
        Ok(())
    }

    /// Reads a dataset of variable-length strings or sequences (whole, or a hyperslab).
    pub fn read_vlen(&self, slices: Option<&[Slice]>) -> Result<VlenData> {
        let ty = self.dtype()?;
        if let Some(data) = self.read_vlen_direct(&ty, slices)? {
            return Ok(data);
        }
        let (start, count) = self.rows_spanned(slices)?;
        self.check_vlen_lengths(&ty, start, count)?;
        locked(|| {
            let (space, shape) = self.select(slices)?;
            let n = shape
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .unwrap_or(usize::MAX);
            let mtype = vlen_mem_type(&ty, self.hid.id(), true)?;
            let items = read_vlen_items(
                n,
                &self.file.limits,
                |buf| {
                    let mspace = simple_space(&shape)?;
                    // SAFETY: `buf` holds `n` descriptors of the memory type, `n` the
                    // elements of `shape`.
                    unsafe { self.read_into(&mtype, &mspace, &space, buf)? };
                    Ok(mspace)
                },
                &ty,
                mtype.id(),
            )?;
            Ok(VlenData {
                ty: ty.clone(),
                shape,
                items,
            })
        })
        .map_err(|e| self.locate(e))
    }

    /// A whole dataset of byte sequences (PyTables' `ObjectAtom`: a pickle per row) read
    /// from its global heap objects without libhdf5 ([`crate::vlen_direct`]); `None` when it
    /// is not that, or its file or storage is not one this reads (libhdf5 reads it then).
    fn read_vlen_direct(&self, ty: &H5Type, slices: Option<&[Slice]>) -> Result<Option<VlenData>> {
        let H5Type::VarLen { base } = ty else {
            return Ok(None);
        };
        if slices.is_some() || !matches!(**base, H5Type::Int { size: 1, .. }) {
            return Ok(None);
        }
        let shape = self.shape()?;
        let Some(&rows) = shape.first() else {
            return Ok(None);
        };
        let Some(disk) = crate::vlen_guard::disk_of(self.hid()).map_err(|e| self.locate(e))? else {
            return Ok(None);
        };
        let Some(stored) = self.checked_descriptors(ty, 0, rows, false)? else {
            return Ok(None);
        };
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(usize::try_from(d).ok()?));
        if n.and_then(|n| n.checked_mul(crate::vlen_guard::DESCRIPTOR)) != Some(stored.len()) {
            return Ok(None);
        }
        let items = crate::vlen_direct::read_elements(&disk, &stored, &self.file.limits)
            .map_err(|e| self.locate(e))?;
        Ok(Some(VlenData {
            ty: ty.clone(),
            shape: shape.iter().map(|&d| d as usize).collect(),
            items,
        }))
    }

    /// Row `row` of a dataset of byte sequences (PyTables' `ObjectAtom`: a pickle per row) as
    /// a reader of positioned reads from its global heap object, checked as
    /// [`Dataset::read_vlen`] checks it: a large pickle parsed as a stream, never held whole.
    /// `None` when the dataset is not that or its storage is not one this reads.
    pub fn vlen_element_reader(
        &self,
        row: u64,
    ) -> Result<Option<crate::vlen_direct::VlenElementReader>> {
        let ty = self.dtype()?;
        let H5Type::VarLen { base } = &ty else {
            return Ok(None);
        };
        if !matches!(**base, H5Type::Int { size: 1, .. }) || self.shape()?.len() != 1 {
            return Ok(None);
        }
        let Some(disk) = crate::vlen_guard::disk_of(self.hid()).map_err(|e| self.locate(e))? else {
            return Ok(None);
        };
        let Some(stored) = self.checked_descriptors(&ty, row, 1, false)? else {
            return Ok(None);
        };
        let Some(d) = stored.get(..crate::vlen_guard::DESCRIPTOR) else {
            return Ok(None);
        };
        let index = usize::try_from(row).unwrap_or(usize::MAX);
        crate::vlen_direct::element_reader(disk, index, d, &self.file.limits)
            .map(Some)
            .map_err(|e| self.locate(e))
    }

    /// The rows (first dimension) a selection touches, as (start, count); all rows for
    /// `None`, none for an empty selection.
    fn rows_spanned(&self, slices: Option<&[Slice]>) -> Result<(u64, u64)> {
        let rows = self.shape()?.first().copied().unwrap_or(0);
        let Some(first) = slices.and_then(|s| s.first()) else {
            return Ok((0, rows));
        };
        if first.count == 0 || first.start >= rows {
            return Ok((0, 0));
        }
        let last = (first.count - 1)
            .saturating_mul(first.step.max(1))
            .saturating_add(first.start)
            .min(rows - 1);
        Ok((first.start, last - first.start + 1))
    }

    /// A file dataspace with `slices` selected, and the selection's shape.
    pub(crate) fn select(&self, slices: Option<&[Slice]>) -> Result<(Hid, Vec<usize>)> {
        // SAFETY: valid dataset id; arrays sized by the rank.
        let space = Hid::new(unsafe { H5Dget_space(self.hid.id()) }, || {
            "cannot read the dataspace".into()
        })?;
        let Some((dims, _)) = space_extent(space.id())? else {
            return Ok((space, vec![0]));
        };
        let Some(slices) = slices else {
            let shape = dims.iter().map(|&d| d as usize).collect();
            return Ok((space, shape));
        };
        if slices.len() != dims.len() {
            return Err(Error::invalid_input(format!(
                "{} slices given for a {}-dimensional dataset",
                slices.len(),
                dims.len()
            )));
        }
        for (s, &d) in slices.iter().zip(&dims) {
            let last = s
                .count
                .checked_sub(1)
                .map(|c| s.start + c.saturating_mul(s.step.max(1)));
            if s.step == 0 || last.is_some_and(|l| l >= d) {
                return Err(Error::invalid_input(format!(
                    "selection {}..+{} step {} outside dimension of {d}",
                    s.start, s.count, s.step
                )));
            }
        }
        let start: Vec<hsize_t> = slices.iter().map(|s| s.start).collect();
        let stride: Vec<hsize_t> = slices.iter().map(|s| s.step).collect();
        let count: Vec<hsize_t> = slices.iter().map(|s| s.count).collect();
        if count.iter().all(|&c| c > 0) {
            // SAFETY: arrays of the dataspace's rank.
            check(
                unsafe {
                    H5Sselect_hyperslab(
                        space.id(),
                        H5S_seloper_t::H5S_SELECT_SET,
                        start.as_ptr(),
                        stride.as_ptr(),
                        count.as_ptr(),
                        std::ptr::null(),
                    )
                },
                || "cannot select the hyperslab".into(),
            )?;
        }
        Ok((space, count.iter().map(|&c| c as usize).collect()))
    }
}

/// Dims and max dims of a dataspace; `None` for a null dataspace.
fn space_extent(space: hid_t) -> Result<Option<Extent>> {
    // SAFETY: valid dataspace id; arrays sized by the rank.
    unsafe {
        match H5Sget_simple_extent_type(space) {
            H5S_class_t::H5S_NULL => return Ok(None),
            H5S_class_t::H5S_SCALAR => return Ok(Some((vec![], vec![]))),
            _ => {}
        }
        let rank = check(H5Sget_simple_extent_ndims(space), || {
            "cannot read the rank".into()
        })?;
        let mut dims = vec![0 as hsize_t; rank as usize];
        let mut max = vec![0 as hsize_t; rank as usize];
        check(
            H5Sget_simple_extent_dims(space, dims.as_mut_ptr(), max.as_mut_ptr()),
            || "cannot read the shape".into(),
        )?;
        let max = max
            .iter()
            .map(|&m| if m == hsize_t::MAX { None } else { Some(m) })
            .collect();
        Ok(Some((dims, max)))
    }
}

/// The memory type for reading vlen data: C strings for vlen strings, `hvl_t` over the base
/// type in its file layout for sequences. `obj` is a dataset or attribute id.
fn vlen_mem_type(ty: &H5Type, obj: hid_t, is_dataset: bool) -> Result<Hid> {
    // SAFETY: type ids created and owned here.
    unsafe {
        match ty {
            H5Type::VarString { charset } => {
                let t = Hid::new(H5Tcopy(*H5T_C_S1), || "cannot create a string type".into())?;
                check(H5Tset_size(t.id(), H5T_VARIABLE), || {
                    "cannot make a vlen string type".into()
                })?;
                let cset = if *charset == CharSet::Utf8 {
                    H5T_cset_t::H5T_CSET_UTF8
                } else {
                    H5T_cset_t::H5T_CSET_ASCII
                };
                check(H5Tset_cset(t.id(), cset), || {
                    "cannot set the charset".into()
                })?;
                Ok(t)
            }
            H5Type::VarLen { base } if !base.has_vlen() => {
                let ftype = Hid::new(
                    if is_dataset {
                        H5Dget_type(obj)
                    } else {
                        H5Aget_type(obj)
                    },
                    || "cannot read the datatype".into(),
                )?;
                let super_ = Hid::new(hdf5_sys::h5t::H5Tget_super(ftype.id()), || {
                    "cannot read the base type".into()
                })?;
                Hid::new(H5Tvlen_create(super_.id()), || {
                    "cannot create a vlen type".into()
                })
            }
            other => Err(Error::unsupported(format!(
                "variable-length data of type {other:?}"
            ))),
        }
    }
}

/// Reads `n` vlen descriptors with `read` and copies each element's bytes out, then lets
/// libhdf5 free its heap copies.
fn read_vlen_items(
    n: usize,
    limits: &Limits,
    read: impl FnOnce(*mut c_void) -> Result<Hid>,
    ty: &H5Type,
    mtype: hid_t,
) -> Result<Vec<Vec<u8>>> {
    let slot = if matches!(ty, H5Type::VarString { .. }) {
        std::mem::size_of::<*const c_char>()
    } else {
        std::mem::size_of::<hdf5_sys::h5t::hvl_t>()
    };
    let bytes = n
        .checked_mul(slot)
        .ok_or_else(|| Error::new(ErrorKind::LimitExceeded, "selection size overflows"))?;
    limits.check_alloc(bytes as u64, "vlen descriptors")?;
    let mut buf = vec![0u8; bytes];
    if n == 0 {
        return Ok(Vec::new());
    }
    let mspace = read(buf.as_mut_ptr().cast())?;
    let elem = match ty {
        H5Type::VarLen { base } => base.size(),
        _ => 1,
    };
    let mut items = Vec::with_capacity(n);
    let mut total: u64 = 0;
    let mut result = Ok(());
    for i in 0..n {
        // SAFETY: libhdf5 filled `n` descriptors; pointers stay valid until H5Treclaim.
        let item = unsafe {
            if slot == std::mem::size_of::<*const c_char>()
                && matches!(ty, H5Type::VarString { .. })
            {
                let p =
                    std::ptr::read_unaligned(buf.as_ptr().add(i * slot) as *const *const c_char);
                if p.is_null() {
                    Vec::new()
                } else {
                    std::ffi::CStr::from_ptr(p).to_bytes().to_vec()
                }
            } else {
                let v = std::ptr::read_unaligned(
                    buf.as_ptr().add(i * slot) as *const hdf5_sys::h5t::hvl_t
                );
                let len = v.len.saturating_mul(elem);
                total = total.saturating_add(len as u64);
                if let Err(e) = limits.check_alloc(total, "vlen data") {
                    result = Err(e);
                    break;
                }
                if v.p.is_null() || len == 0 {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(v.p as *const u8, len).to_vec()
                }
            }
        };
        items.push(item);
    }
    // SAFETY: frees what libhdf5 allocated for exactly this buffer/type/space.
    unsafe { H5Treclaim(mtype, mspace.id(), H5P_DEFAULT, buf.as_mut_ptr().cast()) };
    result.map(|_| items)
}

/// The names of `obj`'s attributes, in name order.
pub(crate) fn attr_names(obj: hid_t) -> Result<Vec<String>> {
    // SAFETY: called by libhdf5's H5Aiterate2 only, with valid pointers and our Vec as `data`.
    unsafe extern "C" fn visit(
        _loc: hid_t,
        name: *const c_char,
        _info: *const H5A_info_t,
        data: *mut c_void,
    ) -> herr_t {
        // SAFETY: `data` is our Vec; `name` a valid C string.
        unsafe { (*(data as *mut Vec<String>)).push(string_from_c(name)) };
        0
    }
    let mut names: Vec<String> = Vec::new();
    locked(|| {
        let mut idx: hsize_t = 0;
        // SAFETY: valid object id and callback.
        check(
            unsafe {
                H5Aiterate2(
                    obj,
                    H5_index_t::H5_INDEX_NAME,
                    H5_iter_order_t::H5_ITER_INC,
                    &mut idx,
                    Some(visit),
                    &mut names as *mut Vec<String> as *mut c_void,
                )
            },
            || "cannot list attributes".into(),
        )
    })?;
    Ok(names)
}

fn read_attrs(obj: hid_t, limits: &Limits) -> Result<Vec<Attribute>> {
    read_listed_attrs(obj, attr_names(obj)?, limits)
}

/// Reads the attributes `names` that [`attr_names`] just listed (so each exists: no
/// H5Aexists lookup before its H5Aopen).
pub(crate) fn read_listed_attrs(
    obj: hid_t,
    names: Vec<String>,
    limits: &Limits,
) -> Result<Vec<Attribute>> {
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let c = c_name(&name)?;
        out.push(locked(|| read_open_attr(obj, &c, &name, limits))?);
    }
    Ok(out)
}

pub(crate) fn read_attr(obj: hid_t, name: &str, limits: &Limits) -> Result<Option<Attribute>> {
    let c = c_name(name)?;
    locked(|| {
        // SAFETY: valid ids and C strings.
        let exists = unsafe { hdf5_sys::h5a::H5Aexists(obj, c.as_ptr()) };
        if exists <= 0 {
            if exists < 0 {
                return Err(last_error(format!("cannot look up attribute {name:?}")));
            }
            return Ok(None);
        }
        read_open_attr(obj, &c, name, limits).map(Some)
    })
}

/// Refuses an attribute whose stored data is smaller than its type and shape say: libhdf5
/// 2.0 would copy past the end of its own buffer reading it (found by fuzzing pytables_read).
/// Stored sizes are never below `n` × the type's size: vlen elements take 16 bytes on disk,
/// at least their in-memory size.
fn check_attr_storage(attr: hid_t, ftype: hid_t, n: usize, name: &str) -> Result<()> {
    // SAFETY: valid attribute and type ids.
    let (stored, size) = unsafe { (H5Aget_storage_size(attr), H5Tget_size(ftype)) };
    let needed = (n as u64).saturating_mul(size as u64);
    if n > 0 && stored < needed {
        return Err(Error::new(
            ErrorKind::Corrupt,
            format!("attribute {name:?} stores {stored} bytes, its type and shape need {needed}"),
        ));
    }
    Ok(())
}

/// Opens and reads attribute `name` (`c` is its C string), which exists. Runs under the lock.
fn read_open_attr(
    obj: hid_t,
    c: &std::ffi::CStr,
    name: &str,
    limits: &Limits,
) -> Result<Attribute> {
    // SAFETY: valid ids and C strings.
    let attr = Hid::new(unsafe { H5Aopen(obj, c.as_ptr(), H5P_DEFAULT) }, || {
        format!("cannot open attribute {name:?}")
    })?;
    let ftype = Hid::new(unsafe { H5Aget_type(attr.id()) }, || {
        format!("cannot read the type of attribute {name:?}")
    })?;
    let ty = crate::types::from_id(ftype.id())?;
    let space = Hid::new(unsafe { H5Aget_space(attr.id()) }, || {
        format!("cannot read the shape of attribute {name:?}")
    })?;
    let Some((dims, _)) = space_extent(space.id())? else {
        return Ok(Attribute {
            name: name.to_string(),
            value: AttrValue::Empty(ty),
        });
    };
    let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .unwrap_or(usize::MAX);
    check_attr_storage(attr.id(), ftype.id(), n, name)?;
    if ty.has_vlen() {
        crate::vlen_guard::check_attribute(obj, name, limits)?;
    }
    let plain_vlen = match &ty {
        H5Type::VarString { .. } => true,
        H5Type::VarLen { base } => !base.has_vlen(),
        _ => false,
    };
    let value = if ty.has_vlen() && !plain_vlen {
        AttrValue::Elements(crate::elements::read_attribute(
            attr.id(),
            &ty,
            shape,
            *limits,
        )?)
    } else if ty.has_vlen() {
        let mtype = vlen_mem_type(&ty, attr.id(), false)?;
        let items = read_vlen_items(
            n,
            limits,
            |buf| {
                // SAFETY: valid attribute and memory type ids; `buf` is sized for `n` elements of
                // `mtype` by read_vlen_items.
                check(unsafe { H5Aread(attr.id(), mtype.id(), buf) }, || {
                    format!("cannot read attribute {name:?}")
                })?;
                simple_space(&shape)
            },
            &ty,
            mtype.id(),
        )?;
        AttrValue::Vlen(VlenData { ty, shape, items })
    } else {
        let bytes = n
            .checked_mul(ty.size())
            .ok_or_else(|| Error::new(ErrorKind::LimitExceeded, "attribute size overflows"))?;
        limits.check_alloc(bytes as u64, "attribute")?;
        let mut buf = vec![0u8; bytes];
        if bytes > 0 {
            check(
                // SAFETY: valid attribute and type ids; `buf` holds `n` elements of `ftype` (bytes
                // = n * size).
                unsafe { H5Aread(attr.id(), ftype.id(), buf.as_mut_ptr().cast()) },
                || format!("cannot read attribute {name:?}"),
            )?;
        }
        AttrValue::Raw(RawData {
            ty,
            shape,
            bytes: buf,
        })
    };
    Ok(Attribute {
        name: name.to_string(),
        value,
    })
}
