//! sciio's own writer of new HDF5 files in the earliest file format (superblock 0, version-1
//! object headers, symbol-table groups with v1 B-trees), for files made of many small objects
//! such as MAT v7.3 cells and structs.
//!
//! Why not libhdf5: creating one small dataset with two attributes costs libhdf5 about 25 µs
//! (property-list copies, metadata-cache protects, B-tree inserts one at a time), so a cell of
//! 20000 values takes half a second. Here every object is kept as a small in-memory record,
//! raw data is streamed to the file as it comes (large datasets compressed on all cores), and
//! all metadata is laid out once at [`NativeFile::close`]: object headers, local heaps, full
//! B-tree nodes and symbol table nodes, global heap collections. The structures and their
//! versions are those libhdf5 writes with `H5F_LIBVER_EARLIEST`, which MATLAB's `load` and
//! every HDF5 reader accept; files are checked against libhdf5 and h5py in the tests. For
//! millions of small objects (a MAT struct array of records), datasets whose attributes are
//! known at creation are written whole with their header at once and leave memory, their
//! links a run written as it comes (`sealed.rs`).
//!
//! Only what such files need: groups, datasets contiguous or chunked (row-major tiles, filters
//! shuffle/deflate/fletcher32), attributes of fixed-size, vlen and object reference types,
//! 1-D vlen datasets, object references to objects of the same file. A file is never
//! modified in place: sciio-mat adds to an existing MAT file by rewriting it with this writer.
//!
//! ```
//! use sciio_h5native::native::NativeFile;
//! use sciio_h5native::{AttrValue, ByteOrder, DatasetSpec, H5Type, RawData};
//! let path = std::env::temp_dir().join(format!("sciio-native-doc-{}.h5", std::process::id()));
//! let file = NativeFile::create(&path, 0)?;
//! let root = file.root();
//! let f8 = H5Type::Float { size: 8, precision: 64, order: ByteOrder::Little };
//! let x = root.write_dataset("x", &DatasetSpec::contiguous(f8, vec![2]), &[0u8; 16])?;
//! x.add_attr("unit", &AttrValue::Raw(RawData::bytes_string(b"m")))?;
//! let refs = DatasetSpec::contiguous(H5Type::ObjectRef, vec![1]);
//! root.write_dataset("to_x", &refs, &x.object_ref()?.to_le_bytes())?;
//! file.close()?;
//! assert!(std::fs::read(&path)?.starts_with(b"\x89HDF\r\n\x1a\n"));
//! # std::fs::remove_file(&path).ok();
//! # Ok::<(), sciio_core::Error>(())
//! ```

mod layout;
mod messages;
mod model;
mod sealed;
mod streamed;

pub use streamed::Fill;

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use rayon::prelude::*;
use sciio_core::{Error, Result};

use sciio_codecs::encode_chunk;

use crate::spec::DatasetSpec;
use crate::types::H5Type;
use crate::values::AttrValue;

use model::{
    Attr, AttrData, ChunkRecord, Dataset, Kind, Link, Links, Object, State, Storage, REF_TAG,
};

/// A new HDF5 file being written by sciio's own writer.
#[derive(Debug)]
pub struct NativeFile {
    state: Arc<Mutex<State>>,
}

/// A group of a [`NativeFile`].
#[derive(Debug, Clone)]
pub struct NativeGroup {
    state: Arc<Mutex<State>>,
    id: usize,
    path: String,
}

/// A dataset of a [`NativeFile`] (written whole at creation).
#[derive(Debug, Clone)]
pub struct NativeDataset {
    state: Arc<Mutex<State>>,
    id: usize,
    path: String,
}

fn locked(state: &Mutex<State>) -> Result<MutexGuard<'_, State>> {
    state
        .lock()
        .map_err(|_| Error::invalid_input("the native HDF5 writer is poisoned"))
}

impl NativeFile {
    /// Creates (truncates) `path`, leaving `userblock` bytes (0, or a power of two ≥ 512)
    /// of zeros before the HDF5 data for the caller to fill.
    pub fn create(path: impl AsRef<Path>, userblock: u64) -> Result<NativeFile> {
        let path = path.as_ref();
        if userblock != 0 && (userblock < 512 || !userblock.is_power_of_two()) {
            return Err(Error::invalid_input(format!(
                "invalid user block size {userblock} (a power of two ≥ 512)"
            ))
            .with_file(path));
        }
        let file = File::create(path)
            .map_err(|e| Error::io("cannot create the file", e).with_file(path))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        // The user block and the superblock's place; the superblock is written at close.
        let head = userblock + layout::SUPERBLOCK_SIZE;
        out.write_all(&vec![0u8; head as usize])
            .map_err(|e| Error::io("cannot write the file", e).with_file(path))?;
        // `SOURCE_DATE_EPOCH` (reproducible builds) stands for the time when it is set.
        let mtime = std::env::var("SOURCE_DATE_EPOCH")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs() as u32)
                    .unwrap_or(0)
            });
        let state = State {
            out: Some(out),
            path: path.to_path_buf(),
            base: userblock,
            eoa: layout::SUPERBLOCK_SIZE,
            objects: vec![Object {
                kind: Kind::Group(Links::default()),
                attrs: Vec::new(),
            }],
            mtime,
        };
        Ok(NativeFile {
            state: Arc::new(Mutex::new(state)),
        })
    }

    /// The root group.
    pub fn root(&self) -> NativeGroup {
        NativeGroup {
            state: self.state.clone(),
            id: 0,
            path: "/".into(),
        }
    }

    /// Lays out and writes all metadata and the superblock, then closes the file.
    pub fn close(self) -> Result<()> {
        let mut st = locked(&self.state)?;
        let path = st.path.clone();
        st.finish().map_err(|e| e.with_file(&path))
    }
}

impl State {
    fn out(&mut self) -> Result<&mut BufWriter<File>> {
        self.out
            .as_mut()
            .ok_or_else(|| Error::invalid_input("the file is closed"))
    }

    /// Appends raw bytes at the end of the file; returns their address.
    fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        let addr = self.eoa;
        let path = self.path.clone();
        self.out()?
            .write_all(bytes)
            .map_err(|e| Error::io("cannot write the file", e).with_file(&path))?;
        self.eoa += bytes.len() as u64;
        Ok(addr)
    }

    fn group_links(&mut self, id: usize) -> Result<&mut Links> {
        match self.objects.get_mut(id).map(|o| &mut o.kind) {
            Some(Kind::Group(links)) => Ok(links),
            _ => Err(Error::invalid_input("not a group of this file")),
        }
    }

    fn add_object(&mut self, parent: usize, name: &str, kind: Kind) -> Result<usize> {
        check_link_name(name)?;
        let id = self.objects.len();
        self.group_links(parent)?.insert(name, Link::Object(id))?;
        self.objects.push(Object {
            kind,
            attrs: Vec::new(),
        });
        Ok(id)
    }

    fn add_attr(&mut self, id: usize, name: &str, value: &AttrValue) -> Result<()> {
        let attr = attr_of(name, value)?;
        let obj = self
            .objects
            .get_mut(id)
            .ok_or_else(|| Error::invalid_input("not an object of this file"))?;
        if obj.attrs.iter().any(|a| a.name == name) {
            return Err(Error::invalid_input(format!(
                "attribute {name:?} exists already"
            )));
        }
        obj.attrs.push(attr);
        Ok(())
    }
}

/// An attribute's record, checked (its type encodable, its data its shape's size).
fn attr_of(name: &str, value: &AttrValue) -> Result<Attr> {
    let (ty, dims, data) = match value {
        AttrValue::Raw(d) => {
            let n: usize = d.shape.iter().product();
            if d.ty.has_vlen() || n.checked_mul(d.ty.size()) != Some(d.bytes.len()) {
                return Err(Error::invalid_input(format!(
                    "attribute {name:?}: {} bytes for shape {:?} of {}-byte elements",
                    d.bytes.len(),
                    d.shape,
                    d.ty.size()
                )));
            }
            if matches!(d.ty, H5Type::ObjectRef) {
                // References handed out by `object_ref`, resolved at close.
                let refs = d
                    .bytes
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                    .collect();
                (&d.ty, &d.shape, AttrData::References(refs))
            } else {
                (&d.ty, &d.shape, AttrData::Fixed(d.bytes.clone()))
            }
        }
        AttrValue::Vlen(d) => {
            if d.shape.iter().product::<usize>() != d.items.len() {
                return Err(Error::invalid_input(format!(
                    "attribute {name:?}: {} items for shape {:?}",
                    d.items.len(),
                    d.shape
                )));
            }
            (&d.ty, &d.shape, AttrData::Vlen(d.items.clone()))
        }
        _ => {
            return Err(Error::unsupported(format!(
                "attribute {name:?}: only fixed-size and vlen values (native writer)"
            )))
        }
    };
    // Encoded now so unsupported types fail at the call, not at close.
    messages::datatype(ty)?;
    Ok(Attr {
        name: name.to_string(),
        ty: ty.clone(),
        dims: dims.iter().map(|&d| d as u64).collect(),
        data,
    })
}

impl State {
    fn write_dataset(
        &mut self,
        parent: usize,
        name: &str,
        spec: &DatasetSpec,
        bytes: &[u8],
    ) -> Result<usize> {
        check_spec(spec, bytes)?;
        messages::datatype(&spec.ty)?;
        let storage = match &spec.chunk {
            None if matches!(spec.ty, H5Type::ObjectRef) => Storage::References(
                bytes
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                    .collect(),
            ),
            _ => self.store(spec, bytes)?,
        };
        let kind = Kind::Dataset(Dataset {
            ty: spec.ty.clone(),
            dims: spec.shape.clone(),
            storage,
        });
        self.add_object(parent, name, kind)
    }

    fn write_vlen_dataset(
        &mut self,
        parent: usize,
        name: &str,
        ty: &H5Type,
        items: Vec<Vec<u8>>,
    ) -> Result<usize> {
        let H5Type::VarLen { base } = ty else {
            return Err(Error::invalid_input(format!(
                "a vlen dataset of type {ty:?} (a variable-length sequence type is needed)"
            )));
        };
        messages::datatype(ty)?;
        let base = base.size().max(1);
        if let Some(bad) = items.iter().position(|i| !i.len().is_multiple_of(base)) {
            return Err(Error::invalid_input(format!(
                "vlen item {bad} of {} bytes is not a whole number of {base}-byte elements",
                items[bad].len()
            )));
        }
        let kind = Kind::Dataset(Dataset {
            ty: ty.clone(),
            dims: vec![items.len() as u64],
            storage: Storage::Vlen(items),
        });
        self.add_object(parent, name, kind)
    }

    /// Cuts `bytes` into chunks (edge chunks padded with zeros), encodes them on all cores a
    /// batch at a time and appends them to the file.
    fn write_chunks(
        &mut self,
        spec: &DatasetSpec,
        chunk: &[u64],
        bytes: &[u8],
    ) -> Result<Vec<ChunkRecord>> {
        let elem = spec.ty.size();
        let grid = layout::ChunkGrid::new(&spec.shape, chunk, elem)?;
        let batch = rayon::current_num_threads().max(1) * 4;
        let mut records = Vec::with_capacity(grid.count());
        let mut next = 0;
        while next < grid.count() {
            let end = (next + batch).min(grid.count());
            let encoded: Vec<(Vec<u64>, Vec<u8>)> = (next..end)
                .into_par_iter()
                .map(|i| {
                    let offset = grid.offset(i);
                    let tile = grid.tile(bytes, &offset);
                    encode_chunk(&spec.filters, tile).map(|c| (offset, c))
                })
                .collect::<Result<_>>()?;
            self.append_chunks(encoded, &mut records)?;
            next = end;
        }
        Ok(records)
    }

    /// Appends encoded chunks at the end of the file, in order, recording where each went.
    fn append_chunks(
        &mut self,
        encoded: Vec<(Vec<u64>, Vec<u8>)>,
        records: &mut Vec<ChunkRecord>,
    ) -> Result<()> {
        for (offset, data) in encoded {
            let size = u32::try_from(data.len())
                .map_err(|_| Error::unsupported("a chunk of 4 GiB or more"))?;
            let addr = self.append(&data)?;
            records.push(ChunkRecord { offset, addr, size });
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        if self.out.is_none() {
            return Ok(());
        }
        self.write_run_heaps()?;
        let meta_start = self.eoa;
        let (metadata, superblock, patches) = layout::lay_out(self, meta_start)?;
        let path = self.path.clone();
        let io = |e| Error::io("cannot write the file", e).with_file(&path);
        let base = self.base;
        let mut out = self
            .out
            .take()
            .ok_or_else(|| Error::invalid_input("the file is closed"))?;
        out.write_all(&metadata).map_err(io)?;
        let mut file = out.into_inner().map_err(|e| io(e.into_error()))?;
        for (addr, value) in patches {
            file.seek(SeekFrom::Start(base + addr)).map_err(io)?;
            file.write_all(&value.to_le_bytes()).map_err(io)?;
        }
        file.seek(SeekFrom::Start(base)).map_err(io)?;
        file.write_all(&superblock).map_err(io)?;
        Ok(())
    }
}

fn check_link_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains('/') || name.contains('\0') || name == "." {
        return Err(Error::invalid_input(format!(
            "{name:?} is not a valid link name"
        )));
    }
    Ok(())
}

fn check_spec(spec: &DatasetSpec, bytes: &[u8]) -> Result<()> {
    let n = spec
        .shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .and_then(|n| n.checked_mul(spec.ty.size() as u64));
    if spec.ty.has_vlen() || n != Some(bytes.len() as u64) {
        return Err(Error::invalid_input(format!(
            "{} bytes given for shape {:?} of {}-byte elements",
            bytes.len(),
            spec.shape,
            spec.ty.size()
        )));
    }
    check_layout(spec)
}

/// The checks of [`check_spec`] that do not need the data.
fn check_layout(spec: &DatasetSpec) -> Result<()> {
    if spec.fill.is_some() {
        return Err(Error::unsupported("fill values (native writer)"));
    }
    let fixed = spec
        .max_shape
        .as_ref()
        .is_none_or(|m| m.iter().zip(&spec.shape).all(|(m, s)| *m == Some(*s)));
    if !fixed {
        return Err(Error::unsupported(
            "growable datasets (native writer: the shape is fixed at creation)",
        ));
    }
    if spec.chunk.is_none() && !spec.filters.is_empty() {
        return Err(Error::invalid_input("filters need a chunked dataset"));
    }
    if spec.chunk.is_some() && spec.shape.is_empty() {
        return Err(Error::invalid_input("a scalar dataset has no chunks"));
    }
    Ok(())
}

impl NativeGroup {
    /// The group's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    fn child_path(&self, name: &str) -> String {
        if self.path == "/" {
            format!("/{name}")
        } else {
            format!("{}/{name}", self.path)
        }
    }

    fn locate(&self, e: Error, path: &str) -> Error {
        e.with_node(path.to_string())
    }

    /// Creates subgroup `name`.
    pub fn create_group(&self, name: &str) -> Result<NativeGroup> {
        let path = self.child_path(name);
        let id = locked(&self.state)?
            .add_object(self.id, name, Kind::Group(Links::default()))
            .map_err(|e| self.locate(e, &path))?;
        Ok(NativeGroup {
            state: self.state.clone(),
            id,
            path,
        })
    }

    /// Creates dataset `name` holding `bytes` (the whole dataset in the file layout, C
    /// order). Chunked datasets are cut, encoded on all cores and written now; contiguous
    /// data is written now; object references are resolved when the file is closed.
    pub fn write_dataset(
        &self,
        name: &str,
        spec: &DatasetSpec,
        bytes: &[u8],
    ) -> Result<NativeDataset> {
        let path = self.child_path(name);
        let id = locked(&self.state)?
            .write_dataset(self.id, name, spec, bytes)
            .map_err(|e| self.locate(e, &path))?;
        Ok(NativeDataset {
            state: self.state.clone(),
            id,
            path,
        })
    }

    /// Creates the 1-D dataset `name` of vlen type `ty` (a [`H5Type::VarLen`]) holding
    /// `items` (each the bytes of one sequence), stored in global heap collections as libhdf5
    /// stores vlen data.
    pub fn write_vlen_dataset(
        &self,
        name: &str,
        ty: &H5Type,
        items: Vec<Vec<u8>>,
    ) -> Result<NativeDataset> {
        let path = self.child_path(name);
        let id = locked(&self.state)?
            .write_vlen_dataset(self.id, name, ty, items)
            .map_err(|e| self.locate(e, &path))?;
        Ok(NativeDataset {
            state: self.state.clone(),
            id,
            path,
        })
    }

    /// Whether link `name` exists.
    pub fn contains(&self, name: &str) -> Result<bool> {
        locked(&self.state)?
            .group_links(self.id)?
            .contains(name)
            .map_err(|e| self.locate(e, &self.child_path(name)))
    }

    /// Removes link `name` (its object stays in the file, unreachable, as with libhdf5).
    pub fn unlink(&self, name: &str) -> Result<()> {
        let removed = locked(&self.state)?
            .group_links(self.id)?
            .remove(name)
            .map_err(|e| self.locate(e, &self.child_path(name)))?;
        match removed {
            Some(_) => Ok(()),
            None => Err(self.locate(
                Error::invalid_input(format!("no link {name:?}")),
                &self.child_path(name),
            )),
        }
    }

    /// Creates attribute `name`, which must not exist yet.
    pub fn add_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        locked(&self.state)?
            .add_attr(self.id, name, value)
            .map_err(|e| self.locate(e, &format!("{}/.{name}", self.path)))
    }

    /// An object reference to this group, valid in datasets of the same file.
    pub fn object_ref(&self) -> Result<u64> {
        Ok(REF_TAG | self.id as u64)
    }
}

impl NativeDataset {
    /// The dataset's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Creates attribute `name`, which must not exist yet.
    pub fn add_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        locked(&self.state)?
            .add_attr(self.id, name, value)
            .map_err(|e| e.with_node(format!("{}/.{name}", self.path)))
    }

    /// An object reference to this dataset, valid in datasets of the same file.
    pub fn object_ref(&self) -> Result<u64> {
        Ok(REF_TAG | self.id as u64)
    }

    /// Writes `bytes` (whole elements) over the data of this contiguous dataset from element
    /// `first` on, in place: for data that comes after the dataset is made
    /// ([`NativeGroup::reserve_dataset`]). Object references written so must be those of
    /// objects already in the file ([`NativeGroup::write_sealed_dataset`]).
    pub fn write_at(&self, first: u64, bytes: &[u8]) -> Result<()> {
        locked(&self.state)?
            .write_at(self.id, first, bytes)
            .map_err(|e| e.with_node(self.path.clone()))
    }
}
