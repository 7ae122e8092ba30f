//! Writing HDF5: files (with a user block and libver bounds for formats such as MAT v7.3),
//! groups, attributes of every type the reader knows, datasets contiguous or chunked with
//! unlimited dimensions and filter pipelines, and direct chunk writes (`H5Dwrite_chunk`) of
//! chunks compressed on all cores by sciio's own encoders ([`FilterStage`]).
//!
//! ```no_run
//! use sciio_hdf5::write::{DatasetSpec, FileBuilder, FilterStage};
//! use sciio_hdf5::{AttrValue, ByteOrder, H5Type, RawData};
//! let file = FileBuilder::new().create("out.h5")?;
//! let root = file.root()?;
//! let f8 = H5Type::Float { size: 8, precision: 64, order: ByteOrder::Little };
//! let spec = DatasetSpec::chunked(f8.clone(), vec![0], vec![None], vec![1024])
//!     .filters(vec![FilterStage::shuffle(8), FilterStage::deflate(5)]);
//! let ds = root.create_dataset("x", &spec)?;
//! let data: Vec<u8> = (0..4096u32).flat_map(|i| f64::from(i).to_le_bytes()).collect();
//! ds.append_rows(&data)?; // sets the extent, compresses chunks in parallel, writes them
//! ds.set_attr("unit", &AttrValue::Raw(RawData::string("m")))?;
//! file.close()?;
//! # Ok::<(), sciio_core::Error>(())
//! ```

mod append;
mod common;
mod links;
mod objects;
mod types;
mod writers;

use std::ffi::{c_char, CString};
use std::path::Path;
use std::sync::{Arc, Mutex};

use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5a::{H5Acreate2, H5Adelete, H5Aexists, H5Awrite};
use hdf5_sys::h5d::{
    H5D_alloc_time_t, H5Dcreate2, H5Dget_create_plist, H5Dget_space, H5Dget_type, H5Dopen2,
    H5Dset_extent, H5Dwrite, H5Dwrite_chunk,
};
use hdf5_sys::h5f::{
    H5F_close_degree_t, H5F_libver_t, H5F_scope_t, H5Fclose, H5Fcreate, H5Fflush, H5Fopen,
    H5F_ACC_RDWR, H5F_ACC_TRUNC,
};
use hdf5_sys::h5g::{H5Gcreate2, H5Gopen2};
use hdf5_sys::h5p::{
    H5Pcreate, H5Pget_alloc_time, H5Pget_chunk, H5Pget_filter2, H5Pget_nfilters,
    H5Pset_fclose_degree, H5Pset_libver_bounds, H5Pset_userblock, H5P_CLS_FILE_ACCESS,
    H5P_CLS_FILE_CREATE, H5P_DEFAULT,
};
use hdf5_sys::h5s::{
    H5S_class_t, H5S_seloper_t, H5Screate, H5Screate_simple, H5Sselect_hyperslab, H5S_ALL,
};
use hdf5_sys::h5z::H5Z_FLAG_OPTIONAL;
use rayon::prelude::*;
use sciio_core::{Error, ErrorKind, Result};

pub use append::{copy_tile_into, ChunkAppender};
pub use sciio_codecs::{
    blosc2_blocksize, encode_chunk, encode_chunk_masked, fletcher32, shuffle, BloscCodec,
    FilterStage,
};
pub use sciio_h5native::{native, DatasetSpec};
pub use writers::{DatasetWriter, FileWriter, GroupWriter};

use common::{check_attr_value, dataspace, dcpl, elements_not_writable, VlenBuffer};
use writers::Inner;

use crate::file::AttrValue;
use crate::handle::{c_name, check, locked, Hid};
use crate::types::H5Type;

/// Versions of the HDF5 file format, for [`FileBuilder::libver_bounds`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibVersion {
    /// The oldest format able to hold each object (libhdf5's default low bound; what PyTables
    /// and h5py use).
    Earliest,
    /// HDF5 1.8.
    V18,
    /// HDF5 1.10.
    V110,
    /// HDF5 1.12.
    V112,
    /// HDF5 1.14.
    V114,
    /// The newest format this libhdf5 writes.
    Latest,
}

impl LibVersion {
    fn raw(self) -> H5F_libver_t {
        match self {
            LibVersion::Earliest => H5F_libver_t::H5F_LIBVER_EARLIEST,
            LibVersion::V18 => H5F_libver_t::H5F_LIBVER_V18,
            LibVersion::V110 => H5F_libver_t::H5F_LIBVER_V110,
            LibVersion::V112 => H5F_libver_t::H5F_LIBVER_V112,
            LibVersion::V114 | LibVersion::Latest => hdf5_sys::h5f::H5F_LIBVER_LATEST,
        }
    }
}

/// Options for creating or opening a file for writing.
///
/// Defaults: no user block, libhdf5's default format bounds (earliest, latest), object
/// modification times recorded (as PyTables and h5py do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileBuilder {
    userblock: u64,
    libver: Option<(LibVersion, LibVersion)>,
    track_times: bool,
}

impl Default for FileBuilder {
    fn default() -> Self {
        FileBuilder {
            userblock: 0,
            libver: None,
            track_times: true,
        }
    }
}

impl FileBuilder {
    /// The defaults.
    pub fn new() -> FileBuilder {
        FileBuilder::default()
    }

    /// Reserves `bytes` at the start of the file for a user block (0, or a power of two ≥ 512;
    /// MAT v7.3 uses 512).
    pub fn userblock(mut self, bytes: u64) -> FileBuilder {
        self.userblock = bytes;
        self
    }

    /// Bounds the file-format versions of the objects libhdf5 writes.
    pub fn libver_bounds(mut self, low: LibVersion, high: LibVersion) -> FileBuilder {
        self.libver = Some((low, high));
        self
    }

    /// Whether datasets record their modification times (default on).
    pub fn track_times(mut self, on: bool) -> FileBuilder {
        self.track_times = on;
        self
    }

    /// The file-access properties: libver bounds when set, and the strong close degree, so
    /// that [`FileWriter::close`] closes the file even while groups or datasets are alive.
    fn fapl(&self) -> Result<Hid> {
        // SAFETY: property list created and owned here.
        unsafe {
            let fapl = Hid::new(H5Pcreate(*H5P_CLS_FILE_ACCESS), || {
                "cannot create a file-access property list".into()
            })?;
            check(
                H5Pset_fclose_degree(fapl.id(), H5F_close_degree_t::H5F_CLOSE_STRONG),
                || "cannot set the close degree".into(),
            )?;
            if let Some((low, high)) = self.libver {
                check(
                    H5Pset_libver_bounds(fapl.id(), low.raw(), high.raw()),
                    || "invalid libver bounds".into(),
                )?;
            }
            Ok(fapl)
        }
    }

    /// Creates (or truncates) `path`.
    pub fn create(&self, path: impl AsRef<Path>) -> Result<FileWriter> {
        let path = path.as_ref();
        let c_path = c_name(&path.to_string_lossy()).map_err(|e| e.with_file(path))?;
        let hid = crate::handle::retry_while_briefly_locked(|| {
            locked(|| -> Result<Hid> {
                // SAFETY: property lists owned here; valid C string.
                unsafe {
                    let fcpl = Hid::new(H5Pcreate(*H5P_CLS_FILE_CREATE), || {
                        "cannot create a file-creation property list".into()
                    })?;
                    if self.userblock > 0 {
                        check(H5Pset_userblock(fcpl.id(), self.userblock), || {
                            format!(
                                "invalid user block size {} (a power of two ≥ 512)",
                                self.userblock
                            )
                        })?;
                    }
                    let fapl = self.fapl()?;
                    Hid::new(
                        H5Fcreate(c_path.as_ptr(), H5F_ACC_TRUNC, fcpl.id(), fapl.id()),
                        || "cannot create the file".into(),
                    )
                    .inspect(|hid| crate::handle::close_on_exec(hid.id()))
                }
            })
        })
        .map_err(|e| e.with_file(path))?;
        Ok(FileWriter {
            inner: Inner::new(hid, path, self.track_times),
        })
    }

    /// Opens an existing file to add to it.
    pub fn open_rw(&self, path: impl AsRef<Path>) -> Result<FileWriter> {
        let path = path.as_ref();
        let c_path = c_name(&path.to_string_lossy()).map_err(|e| e.with_file(path))?;
        std::fs::metadata(path)
            .map_err(|e| Error::io("cannot open the file", e).with_file(path))?;
        let hid = crate::handle::retry_while_briefly_locked(|| {
            locked(|| -> Result<Hid> {
                let fapl = self.fapl()?;
                // SAFETY: valid C string and property list.
                Hid::new(
                    unsafe { H5Fopen(c_path.as_ptr(), H5F_ACC_RDWR, fapl.id()) },
                    || "cannot open the file for writing (not HDF5, damaged, or locked)".into(),
                )
                .inspect(|hid| crate::handle::close_on_exec(hid.id()))
            })
        })
        .map_err(|e| e.with_file(path))?;
        Ok(FileWriter {
            inner: Inner::new(hid, path, self.track_times),
        })
    }
}

impl Inner {
    fn new(hid: Hid, path: &Path, track_times: bool) -> Arc<Inner> {
        Arc::new(Inner {
            hid: Mutex::new(Some(hid)),
            path: path.to_path_buf(),
            track_times,
            cache: Mutex::default(),
            appenders: Mutex::default(),
            deferred: Mutex::default(),
        })
    }

    /// The file id, or an error once the file is closed.
    fn id(&self) -> Result<hdf5_sys::h5i::hid_t> {
        let guard = self
            .hid
            .lock()
            .map_err(|_| Error::invalid_input("the file handle is poisoned"))?;
        guard
            .as_ref()
            .map(Hid::id)
            .ok_or_else(|| Error::invalid_input("the file is closed"))
    }
}

impl FileWriter {
    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    fn locate(&self, e: Error, node: &str) -> Error {
        e.with_node(node).with_file(&self.inner.path)
    }

    /// The root group.
    pub fn root(&self) -> Result<GroupWriter> {
        self.group("/")
    }

    /// The existing group at absolute `path`.
    pub fn group(&self, path: &str) -> Result<GroupWriter> {
        let c = c_name(path).map_err(|e| self.locate(e, path))?;
        let fid = self.inner.id().map_err(|e| self.locate(e, path))?;
        let hid = locked(|| {
            // SAFETY: valid ids and C string.
            Hid::new(unsafe { H5Gopen2(fid, c.as_ptr(), H5P_DEFAULT) }, || {
                "cannot open the group".into()
            })
        })
        .map_err(|e| self.locate(e, path))?;
        Ok(GroupWriter {
            file: self.clone(),
            hid,
            path: path.to_string(),
        })
    }

    /// The existing dataset at absolute `path`, ready for appends and attributes.
    pub fn dataset(&self, path: &str) -> Result<DatasetWriter> {
        let c = c_name(path).map_err(|e| self.locate(e, path))?;
        let fid = self.inner.id().map_err(|e| self.locate(e, path))?;
        locked(|| -> Result<DatasetWriter> {
            // SAFETY: valid ids and C string.
            let hid = Hid::new(unsafe { H5Dopen2(fid, c.as_ptr(), H5P_DEFAULT) }, || {
                "cannot open the dataset".into()
            })?;
            DatasetWriter::from_hid(self.clone(), hid, path.to_string())
        })
        .map_err(|e| self.locate(e, path))
    }

    /// Flushes everything written so far to disk, the partial last chunks that appenders
    /// hold in memory included.
    pub fn flush(&self) -> Result<()> {
        let fid = self.inner.id().map_err(|e| e.with_file(&self.inner.path))?;
        let tails = self.store_pending_tails();
        let flushed = locked(|| {
            // SAFETY: valid file id.
            check(
                unsafe { H5Fflush(fid, H5F_scope_t::H5F_SCOPE_GLOBAL) },
                || "cannot flush the file".into(),
            )
        })
        .map(|_| ())
        .map_err(|e| e.with_file(&self.inner.path));
        tails.and(flushed)
    }

    /// Flushes and closes the file; groups and datasets still alive become unusable (their
    /// calls fail cleanly).
    pub fn close(self) -> Result<()> {
        // A failed flush (disk full) still closes the file: libhdf5 releases its descriptor
        // even when the close's own flush fails; returning early would keep it open for as
        // long as any group or dataset handle lives.
        let flushed = self.flush();
        let taken = self
            .inner
            .hid
            .lock()
            .map_err(|_| Error::invalid_input("the file handle is poisoned"))?
            .take();
        let Some(hid) = taken else { return Ok(()) };
        let ret = locked(|| {
            // SAFETY: the id is valid and owned; with the strong close degree this closes
            // every object of the file too.
            check(unsafe { H5Fclose(hid.id()) }, || {
                "cannot close the file".into()
            })
        });
        // Closed above: the handle must not release the id a second time.
        std::mem::forget(hid);
        flushed?;
        ret.map(|_| ()).map_err(|e| e.with_file(&self.inner.path))
    }
}

impl GroupWriter {
    /// The group's absolute path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The file.
    pub fn file(&self) -> &FileWriter {
        &self.file
    }

    fn child_path(&self, name: &str) -> String {
        crate::file::join_path(&self.path, name)
    }

    fn check_name(&self, name: &str) -> Result<CString> {
        if name.is_empty() || name.contains('/') || name == "." {
            return Err(Error::invalid_input(format!("invalid node name {name:?}"))
                .with_node(self.child_path(name)));
        }
        c_name(name)
    }

    /// Creates the child group `name`.
    pub fn create_group(&self, name: &str) -> Result<GroupWriter> {
        let path = self.child_path(name);
        let c = self.check_name(name)?;
        let hid = locked(|| {
            // SAFETY: valid ids and C string.
            Hid::new(
                unsafe {
                    H5Gcreate2(
                        self.hid.id(),
                        c.as_ptr(),
                        H5P_DEFAULT,
                        H5P_DEFAULT,
                        H5P_DEFAULT,
                    )
                },
                || "cannot create the group (does the name exist?)".into(),
            )
        })
        .map_err(|e| self.file.locate(e, &path))?;
        Ok(GroupWriter {
            file: self.file.clone(),
            hid,
            path,
        })
    }

    /// Sets (replacing) attribute `name`.
    pub fn set_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        write_attr(self.hid.id(), name, value)
            .map_err(|e| self.file.locate(e, &format!("{}/.{name}", self.path)))
    }

    /// Reads attribute `name` (`None` when absent) through the open writer (a second, read-only
    /// open of a file being written is refused by libhdf5).
    pub fn attr(&self, name: &str) -> Result<Option<crate::file::Attribute>> {
        crate::file::read_attr(self.hid.id(), name, &sciio_core::Limits::default())
            .map_err(|e| self.file.locate(e, &format!("{}/.{name}", self.path)))
    }

    /// Creates dataset `name`.
    pub fn create_dataset(&self, name: &str, spec: &DatasetSpec) -> Result<DatasetWriter> {
        let path = self.child_path(name);
        let c = self.check_name(name)?;
        locked(|| -> Result<DatasetWriter> {
            let ty = types::to_hid(&spec.ty)?;
            let space = dataspace(&spec.shape, spec.max_shape.as_deref())?;
            let dcpl = dcpl(spec, self.file.inner.track_times)?;
            // SAFETY: valid ids and C string.
            let hid = Hid::new(
                unsafe {
                    H5Dcreate2(
                        self.hid.id(),
                        c.as_ptr(),
                        ty.id(),
                        space.id(),
                        H5P_DEFAULT,
                        dcpl.id(),
                        H5P_DEFAULT,
                    )
                },
                || "cannot create the dataset (does the name exist?)".into(),
            )?;
            Ok(DatasetWriter {
                file: self.file.clone(),
                hid,
                path: path.clone(),
                ty: spec.ty.clone(),
                chunk: spec.chunk.clone(),
                pipeline: spec.filters.clone(),
            })
        })
        .map_err(|e| self.file.locate(e, &path))
    }
}

impl DatasetWriter {
    /// Reads type, chunking and pipeline of an existing dataset. Runs inside `locked`.
    fn from_hid(file: FileWriter, hid: Hid, path: String) -> Result<DatasetWriter> {
        // SAFETY: valid ids; arrays sized as libhdf5 documents.
        unsafe {
            let t = Hid::new(H5Dget_type(hid.id()), || "cannot read the datatype".into())?;
            let ty = crate::types::from_id(t.id())?;
            let dcpl = Hid::new(H5Dget_create_plist(hid.id()), || {
                "cannot read the creation properties".into()
            })?;
            let mut dims = [0 as hsize_t; 32];
            let rank = H5Pget_chunk(dcpl.id(), 32, dims.as_mut_ptr());
            hdf5_sys::h5e::H5Eclear2(hdf5_sys::h5e::H5E_DEFAULT);
            let chunk = (rank > 0).then(|| dims[..rank as usize].to_vec());
            let n = check(H5Pget_nfilters(dcpl.id()), || {
                "cannot read the filter pipeline".into()
            })?;
            let mut pipeline = Vec::with_capacity(n as usize);
            for i in 0..n as u32 {
                let mut flags = 0u32;
                let mut nelem: usize = 32;
                let mut cd = [0u32; 32];
                let mut name = [0 as c_char; 64];
                let mut config = 0u32;
                let fid = H5Pget_filter2(
                    dcpl.id(),
                    i,
                    &mut flags,
                    &mut nelem,
                    cd.as_mut_ptr(),
                    name.len(),
                    name.as_mut_ptr(),
                    &mut config,
                );
                if fid < 0 {
                    return Err(crate::handle::last_error("cannot read a filter".into()));
                }
                pipeline.push(FilterStage {
                    id: fid,
                    cd_values: cd[..nelem.min(32)].to_vec(),
                    optional: flags & H5Z_FLAG_OPTIONAL != 0,
                });
            }
            Ok(DatasetWriter {
                file,
                hid,
                path,
                ty,
                chunk,
                pipeline,
            })
        }
    }

    fn locate(&self, e: Error) -> Error {
        e.with_node(&self.path).with_file(self.file.path())
    }

    /// A second handle on the same dataset.
    fn try_clone(&self) -> Result<DatasetWriter> {
        let id = self.hid.id();
        // SAFETY: valid id; the new reference is owned (released) by the returned handle.
        locked(|| {
            check(unsafe { hdf5_sys::h5i::H5Iinc_ref(id) }, || {
                "cannot share the dataset".into()
            })
        })
        .map_err(|e| self.locate(e))?;
        Ok(DatasetWriter {
            file: self.file.clone(),
            hid: Hid::new(id, String::new)?,
            path: self.path.clone(),
            ty: self.ty.clone(),
            chunk: self.chunk.clone(),
            pipeline: self.pipeline.clone(),
        })
    }

    /// The dataset's absolute path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The element type.
    pub fn dtype(&self) -> &H5Type {
        &self.ty
    }

    /// The chunk shape (`None`: not chunked).
    pub fn chunk(&self) -> Option<&[u64]> {
        self.chunk.as_deref()
    }

    /// The filter pipeline.
    pub fn pipeline(&self) -> &[FilterStage] {
        &self.pipeline
    }

    /// The current shape.
    pub fn shape(&self) -> Result<Vec<u64>> {
        locked(|| -> Result<Vec<u64>> {
            // SAFETY: valid dataset id.
            let space = Hid::new(unsafe { H5Dget_space(self.hid.id()) }, || {
                "cannot read the dataspace".into()
            })?;
            let rank = check(
                unsafe { hdf5_sys::h5s::H5Sget_simple_extent_ndims(space.id()) },
                || "cannot read the rank".into(),
            )?;
            let mut dims = vec![0 as hsize_t; rank as usize];
            check(
                // SAFETY: valid dataspace id; `dims` holds `rank` entries; a null maxdims is
                // allowed.
                unsafe {
                    hdf5_sys::h5s::H5Sget_simple_extent_dims(
                        space.id(),
                        dims.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                },
                || "cannot read the shape".into(),
            )?;
            Ok(dims)
        })
        .map_err(|e| self.locate(e))
    }

    /// Sets (replacing) attribute `name`.
    pub fn set_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        write_attr(self.hid.id(), name, value)
            .map_err(|e| self.file.locate(e, &format!("{}/.{name}", self.path)))
    }

    /// Changes the current shape (within the maximum shape).
    pub fn set_extent(&self, shape: &[u64]) -> Result<()> {
        locked(|| {
            // SAFETY: `shape` has the dataset's rank (libhdf5 checks the rank itself).
            check(
                unsafe { H5Dset_extent(self.hid.id(), shape.as_ptr()) },
                || format!("cannot resize to {shape:?}"),
            )
        })
        .map(|_| ())
        .map_err(|e| self.locate(e))
    }

    /// Writes the whole dataset from `bytes` (elements in the file layout, C order).
    pub fn write_all(&self, bytes: &[u8]) -> Result<()> {
        let shape = self.shape()?;
        let n: u64 = shape.iter().product();
        if self.ty.has_vlen() || n.checked_mul(self.ty.size() as u64) != Some(bytes.len() as u64) {
            return Err(self.locate(Error::invalid_input(format!(
                "{} bytes given for {n} elements of {} bytes",
                bytes.len(),
                self.ty.size()
            ))));
        }
        if n == 0 {
            return Ok(());
        }
        locked(|| {
            let t = types::to_hid(&self.ty)?;
            // SAFETY: `bytes` holds exactly the dataset's elements in the memory type `t`.
            check(
                unsafe {
                    H5Dwrite(
                        self.hid.id(),
                        t.id(),
                        H5S_ALL,
                        H5S_ALL,
                        H5P_DEFAULT,
                        bytes.as_ptr().cast(),
                    )
                },
                || "cannot write the data".into(),
            )
        })
        .map(|_| ())
        .map_err(|e| self.locate(e))
    }

    /// Encodes `chunks` (each: element offset of the chunk's first element, and the chunk's
    /// full bytes, edge chunks padded) through the pipeline on all cores, then writes them with
    /// `H5Dwrite_chunk`. The extent must already cover them.
    pub fn write_chunks(&self, chunks: Vec<(Vec<u64>, Vec<u8>)>) -> Result<()> {
        let Some(chunk) = &self.chunk else {
            return Err(self.locate(Error::invalid_input("not a chunked dataset")));
        };
        let chunk_bytes = chunk.iter().product::<u64>() as usize * self.ty.size();
        if let Some((_, bad)) = chunks
            .iter()
            .find(|(o, c)| c.len() != chunk_bytes || o.len() != chunk.len())
        {
            return Err(self.locate(Error::invalid_input(format!(
                "chunk of {} bytes, the dataset's hold {chunk_bytes}",
                bad.len()
            ))));
        }
        // Fewer chunks than cores (a table appended in batches about one chunk long): the
        // spare cores work inside each chunk, through Blosc's own threads.
        let per_chunk = (rayon::current_num_threads() / chunks.len().max(1)).max(1);
        let encoded: Vec<(Vec<u64>, Vec<u8>, u32)> = chunks
            .into_par_iter()
            .map(|(offset, data)| {
                encode_chunk_masked(&self.pipeline, data, per_chunk)
                    .map(|(bytes, mask)| (offset, bytes, mask))
            })
            .collect::<Result<_>>()
            .map_err(|e| self.locate(e))?;
        let refs: Vec<(Vec<u64>, &[u8], u32)> = encoded
            .iter()
            .map(|(o, d, mask)| (o.clone(), d.as_slice(), *mask))
            .collect();
        self.put_chunks(&refs)
    }

    /// Whether the dataset's chunks are allocated when it is created or extended
    /// ([`DatasetSpec::allocate_early`]).
    pub fn allocates_early(&self) -> Result<bool> {
        locked(|| -> Result<bool> {
            // SAFETY: a valid dataset id; the property list is owned by the `Hid`; the
            // out-pointer is a local.
            unsafe {
                let dcpl = Hid::new(H5Dget_create_plist(self.hid.id()), || {
                    "cannot read the creation properties".into()
                })?;
                let mut when = H5D_alloc_time_t::H5D_ALLOC_TIME_DEFAULT;
                check(H5Pget_alloc_time(dcpl.id(), &mut when), || {
                    "cannot read the allocation time".into()
                })?;
                Ok(when == H5D_alloc_time_t::H5D_ALLOC_TIME_EARLY)
            }
        })
        .map_err(|e| self.locate(e))
    }

    /// The file addresses of the stored chunks whose first row is `from` or later, by first
    /// row, from one pass over the chunk index (`H5Dchunk_iter`): looking chunks up one by
    /// one (`H5Dget_chunk_info_by_coord`) lists the index for each, which made copying a
    /// 20 GB table quadratic. Chunks not at the start of the other dimensions are not listed.
    pub fn chunk_addresses_from(&self, from: u64) -> Result<std::collections::HashMap<u64, u64>> {
        struct State {
            rank: usize,
            from: u64,
            found: std::collections::HashMap<u64, u64>,
        }
        // SAFETY: called by libhdf5's H5Dchunk_iter only, with `rank` offsets and `data` our
        // State, as it documents.
        unsafe extern "C" fn visit(
            offset: *const hsize_t,
            _mask: std::ffi::c_uint,
            addr: u64,
            size: hsize_t,
            data: *mut std::ffi::c_void,
        ) -> std::ffi::c_int {
            // SAFETY: libhdf5 passes `rank` offsets; `data` is our State.
            unsafe {
                let state = &mut *(data as *mut State);
                let offset = std::slice::from_raw_parts(offset, state.rank);
                if let Some((&row, rest)) = offset.split_first() {
                    if row >= state.from && rest.iter().all(|&o| o == 0) && size > 0 {
                        state.found.insert(row, addr);
                    }
                }
            }
            0
        }
        let rank = self.chunk.as_ref().map_or(0, Vec::len);
        locked(|| {
            let mut state = State {
                rank,
                from,
                found: std::collections::HashMap::new(),
            };
            // SAFETY: a valid dataset id; the callback only fills `state`, which outlives
            // the call.
            check(
                unsafe {
                    hdf5_sys::h5d::H5Dchunk_iter(
                        self.hid.id(),
                        H5P_DEFAULT,
                        Some(visit),
                        &mut state as *mut State as *mut std::ffi::c_void,
                    )
                },
                || "cannot list the chunks".into(),
            )?;
            Ok(state.found)
        })
        .map_err(|e| self.locate(e))
    }

    /// Writes already-encoded chunks (offset, bytes, filter mask) with `H5Dwrite_chunk`, under
    /// one lock.
    fn put_chunks(&self, chunks: &[(Vec<u64>, &[u8], u32)]) -> Result<()> {
        locked(|| -> Result<()> {
            for (offset, data, mask) in chunks {
                if u32::try_from(data.len()).is_err() {
                    return Err(Error::new(
                        ErrorKind::LimitExceeded,
                        "an encoded chunk exceeds 4 GiB",
                    ));
                }
                // SAFETY: offset has the dataset's rank; `data` is one encoded chunk.
                check(
                    unsafe {
                        H5Dwrite_chunk(
                            self.hid.id(),
                            H5P_DEFAULT,
                            *mask,
                            offset.as_ptr(),
                            data.len(),
                            data.as_ptr().cast(),
                        )
                    },
                    || format!("cannot write the chunk at {offset:?}"),
                )?;
            }
            Ok(())
        })
        .map_err(|e| self.locate(e))
    }

    /// Appends rows along the first dimension of a chunked dataset whose current length is a
    /// whole number of chunks (use [`ChunkAppender`] for arbitrary batch sizes).
    pub fn append_rows(&self, bytes: &[u8]) -> Result<()> {
        let mut app = ChunkAppender::new(self)?;
        app.append(bytes)?;
        app.flush_tail()
    }

    /// Writes variable-length items (vlen sequences: each item the base type's bytes; vlen
    /// strings: each item the string bytes) at rows `start..` of a 1-d vlen dataset, growing it.
    pub fn write_vlen_rows(&self, start: u64, items: &[Vec<u8>]) -> Result<()> {
        let end = start + items.len() as u64;
        if self.shape()?.first().is_none_or(|&n| n < end) {
            self.set_extent(&[end])?;
        }
        if items.is_empty() {
            return Ok(());
        }
        locked(|| -> Result<()> {
            let mem = types::to_hid(&self.ty)?;
            let (mspace, fspace) = row_spaces(self.hid.id(), start, items.len() as u64)?;
            let buf = VlenBuffer::new(&self.ty, items)?;
            // SAFETY: `buf` holds one descriptor per selected row, valid while it lives.
            check(
                unsafe {
                    H5Dwrite(
                        self.hid.id(),
                        mem.id(),
                        mspace.id(),
                        fspace.id(),
                        H5P_DEFAULT,
                        buf.ptr(),
                    )
                },
                || "cannot write the rows".into(),
            )?;
            Ok(())
        })
        .map_err(|e| self.locate(e))
    }
}

/// Memory and file dataspaces selecting rows `start..start+count` of a 1-d dataset.
fn row_spaces(dset: hdf5_sys::h5i::hid_t, start: u64, count: u64) -> Result<(Hid, Hid)> {
    // SAFETY: valid dataset id; 1-element arrays.
    unsafe {
        let fspace = Hid::new(H5Dget_space(dset), || "cannot read the dataspace".into())?;
        check(
            H5Sselect_hyperslab(
                fspace.id(),
                H5S_seloper_t::H5S_SELECT_SET,
                &start,
                std::ptr::null(),
                &count,
                std::ptr::null(),
            ),
            || "cannot select rows".into(),
        )?;
        let mspace = Hid::new(H5Screate_simple(1, &count, std::ptr::null()), || {
            "cannot create a dataspace".into()
        })?;
        Ok((mspace, fspace))
    }
}

impl DatasetWriter {
    /// Writes whole rows (elements in the file layout, C order) at rows `start..` along the
    /// first dimension, inside the current extent: a contiguous dataset filled slab by slab,
    /// without holding it whole.
    pub fn write_rows(&self, start: u64, bytes: &[u8]) -> Result<()> {
        let shape = self.shape()?;
        let row_bytes = shape.iter().skip(1).product::<u64>() as usize * self.ty.size();
        let Some(&rows) = shape.first() else {
            return Err(self.locate(Error::invalid_input("a scalar dataset has no rows")));
        };
        if self.ty.has_vlen() || row_bytes == 0 || !bytes.len().is_multiple_of(row_bytes) {
            return Err(self.locate(Error::invalid_input(format!(
                "{} bytes is not a whole number of {row_bytes}-byte rows",
                bytes.len()
            ))));
        }
        let count = (bytes.len() / row_bytes) as u64;
        if start.checked_add(count).is_none_or(|end| end > rows) {
            return Err(self.locate(Error::invalid_input(format!(
                "rows {start}..+{count} are outside the {rows} rows of the dataset"
            ))));
        }
        if count == 0 {
            return Ok(());
        }
        locked(|| -> Result<()> {
            let t = types::to_hid(&self.ty)?;
            let (fspace, mspace) = self.row_spaces(start, count, &shape)?;
            // SAFETY: valid ids (the dataset's, its type's, two dataspaces of the selection);
            // `bytes` holds exactly the selected rows (checked above).
            unsafe {
                check(
                    H5Dwrite(
                        self.hid.id(),
                        t.id(),
                        mspace.id(),
                        fspace.id(),
                        H5P_DEFAULT,
                        bytes.as_ptr().cast(),
                    ),
                    || format!("cannot write rows {start}..+{count}"),
                )?;
            }
            Ok(())
        })
        .map_err(|e| self.locate(e))
    }

    /// The file and memory dataspaces selecting rows `start..start + count` (every column)
    /// of a dataset of `shape`. Must run inside `locked`.
    fn row_spaces(&self, start: u64, count: u64, shape: &[u64]) -> Result<(Hid, Hid)> {
        let mut st = vec![0 as hsize_t; shape.len()];
        if let Some(first) = st.first_mut() {
            *first = start;
        }
        let mut cnt = shape.to_vec();
        if let Some(first) = cnt.first_mut() {
            *first = count;
        }
        // SAFETY: a valid dataset id; `st` and `cnt` have the dataset's rank.
        unsafe {
            let fspace = Hid::new(H5Dget_space(self.hid.id()), || {
                "cannot read the dataspace".into()
            })?;
            check(
                H5Sselect_hyperslab(
                    fspace.id(),
                    H5S_seloper_t::H5S_SELECT_SET,
                    st.as_ptr(),
                    std::ptr::null(),
                    cnt.as_ptr(),
                    std::ptr::null(),
                ),
                || "cannot select rows".into(),
            )?;
            let mspace = Hid::new(
                H5Screate_simple(cnt.len() as i32, cnt.as_ptr(), std::ptr::null()),
                || "cannot create a dataspace".into(),
            )?;
            Ok((fspace, mspace))
        }
    }

    /// Reads back `count` rows from `start` in the file layout (to continue a partial chunk).
    fn read_rows_back(&self, start: u64, count: u64, shape: &[u64]) -> Result<Vec<u8>> {
        let bytes = (count * shape[1..].iter().product::<u64>()) as usize * self.ty.size();
        let mut buf = vec![0u8; bytes];
        locked(|| -> Result<()> {
            let t = types::to_hid(&self.ty)?;
            let (fspace, mspace) = self.row_spaces(start, count, shape)?;
            // SAFETY: valid ids; `buf` holds exactly the selected rows.
            unsafe {
                check(
                    hdf5_sys::h5d::H5Dread(
                        self.hid.id(),
                        t.id(),
                        mspace.id(),
                        fspace.id(),
                        H5P_DEFAULT,
                        buf.as_mut_ptr().cast(),
                    ),
                    || "cannot read back the last partial chunk".into(),
                )?;
            }
            Ok(())
        })
        .map_err(|e| self.locate(e))?;
        Ok(buf)
    }
}

/// Writes one attribute (replacing an existing one). Runs libhdf5 under the lock.
fn write_attr(obj: hdf5_sys::h5i::hid_t, name: &str, value: &AttrValue) -> Result<()> {
    let c = c_name(name)?;
    check_attr_value(name, value)?;
    locked(|| -> Result<()> {
        // SAFETY: valid ids and C strings; buffers sized by the checks below.
        unsafe {
            if H5Aexists(obj, c.as_ptr()) > 0 {
                check(H5Adelete(obj, c.as_ptr()), || {
                    format!("cannot replace attribute {name:?}")
                })?;
            }
            let (ty, space) = match value {
                AttrValue::Raw(d) => (
                    &d.ty,
                    dataspace(&d.shape.iter().map(|&s| s as u64).collect::<Vec<_>>(), None)?,
                ),
                AttrValue::Vlen(d) => (
                    &d.ty,
                    dataspace(&d.shape.iter().map(|&s| s as u64).collect::<Vec<_>>(), None)?,
                ),
                AttrValue::Empty(ty) => (
                    ty,
                    Hid::new(H5Screate(H5S_class_t::H5S_NULL), || {
                        "cannot create a null dataspace".into()
                    })?,
                ),
                AttrValue::Elements(_) => return Err(elements_not_writable(name)),
            };
            let t = types::to_hid(ty)?;
            let attr = Hid::new(
                H5Acreate2(
                    obj,
                    c.as_ptr(),
                    t.id(),
                    space.id(),
                    H5P_DEFAULT,
                    H5P_DEFAULT,
                ),
                || format!("cannot create attribute {name:?}"),
            )?;
            match value {
                AttrValue::Raw(d) => {
                    let n: usize = d.shape.iter().product();
                    if ty.has_vlen() || n * ty.size() != d.bytes.len() {
                        return Err(Error::invalid_input(format!(
                            "attribute {name:?}: {} bytes for {n} elements of {}",
                            d.bytes.len(),
                            ty.size()
                        )));
                    }
                    check(H5Awrite(attr.id(), t.id(), d.bytes.as_ptr().cast()), || {
                        format!("cannot write attribute {name:?}")
                    })?;
                }
                AttrValue::Vlen(d) => {
                    let n: usize = d.shape.iter().product();
                    if n != d.items.len() {
                        return Err(Error::invalid_input(format!(
                            "attribute {name:?}: {} items for {n} elements",
                            d.items.len()
                        )));
                    }
                    let buf = VlenBuffer::new(ty, &d.items)?;
                    check(H5Awrite(attr.id(), t.id(), buf.ptr()), || {
                        format!("cannot write attribute {name:?}")
                    })?;
                }
                AttrValue::Empty(_) => {}
                AttrValue::Elements(_) => return Err(elements_not_writable(name)),
            }
            Ok(())
        }
    })
}
