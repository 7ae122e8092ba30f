//! [`File`]: an opened file of any supported format, described as a [`Node`] tree, with its
//! arrays read whole ([`File::read_array`]) or streamed ([`File::copy_array_data`]).

use std::fs;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use sciio_core::{Error, Limits, NdArray, Order, Result};
use sciio_npy::Header;
use sciio_zip::ZipArchive;

use crate::format::Format;
pub(crate) use crate::node::normalise;
use crate::node::{ArrayInfo, Node, NodeKind};

/// Bytes moved per block when streaming array data (bounded memory for any array size).
pub(crate) const BLOCK: usize = 4 << 20;

/// An opened file: its format, its tree of nodes, and the means to read its arrays.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// use sciio::{File, NdArray};
/// let path = dir.path().join("x.npy");
/// let a = NdArray::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[2, 3])?;
/// let mut bytes = Vec::new();
/// sciio::npy::write_array(&mut bytes, &a)?;
/// std::fs::write(&path, bytes)?;
///
/// let mut file = File::open(&path)?;
/// assert_eq!(file.format(), sciio::Format::Npy);
/// let info = file.root().array_info().unwrap();
/// assert_eq!((info.dtype.to_string().as_str(), info.shape.as_slice()), ("<i4", &[2usize, 3][..]));
/// let back = file.read_array("/")?;
/// assert_eq!(back.view::<i32>()?, a.view::<i32>()?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct File {
    pub(crate) path: PathBuf,
    format: Format,
    size: u64,
    pub(crate) root: Node,
    pub(crate) limits: Limits,
    pub(crate) backend: Backend,
}

#[derive(Debug)]
pub(crate) enum Backend {
    Npy(Header),
    Npz {
        archive: ZipArchive<fs::File>,
        /// Node path (`/name`) -> zip member index.
        members: Vec<(String, usize)>,
    },
    #[cfg(feature = "hdf5")]
    Hdf5(crate::hdf5::Hdf5),
    #[cfg(feature = "mat")]
    // Boxed: the MAT backend (file handle plus the read caches) is several times larger.
    Mat(Box<crate::mat::Mat>),
    /// A Parquet file: listed as a frame, its values not readable as arrays yet.
    #[cfg(feature = "parquet")]
    Parquet,
}

impl File {
    /// Opens `path` with default [`Limits`], picking the format by extension and first bytes.
    pub fn open(path: impl AsRef<Path>) -> Result<File> {
        File::open_with_limits(path, Limits::default())
    }

    /// Opens `path` with the given limits on untrusted sizes.
    pub fn open_with_limits(path: impl AsRef<Path>, limits: Limits) -> Result<File> {
        let path = path.as_ref();
        let meta = fs::metadata(path).map_err(|e| Error::io("cannot open", e).with_file(path))?;
        if meta.is_dir() {
            return Err(Error::invalid_input("is a folder, not a file").with_file(path));
        }
        let format = Format::detect(path)?;
        let size = meta.len();
        let (root, backend) = match format {
            Format::Npy => open_npy(path, size, &limits)?,
            Format::Npz => open_npz(path, &limits)?,
            #[cfg(feature = "hdf5")]
            Format::Hdf5 => {
                let (root, h5) = crate::hdf5::Hdf5::open(path, &limits)?;
                (root, Backend::Hdf5(h5))
            }
            #[cfg(feature = "parquet")]
            Format::Parquet => (crate::parquet::open(path, &limits)?, Backend::Parquet),
            #[cfg(feature = "mat")]
            Format::Mat => {
                let (root, mat) = crate::mat::Mat::open(path, &limits)?;
                (root, Backend::Mat(Box::new(mat)))
            }
            #[allow(unreachable_patterns)] // reachable when a format's feature is off
            other => {
                return Err(Error::unsupported(format!(
                    "reading {other} files needs the `{}` feature of the sciio crate, which this \
                     build leaves out",
                    other.feature().unwrap_or("default")
                ))
                .with_file(path))
            }
        };
        Ok(File {
            path: path.to_path_buf(),
            format,
            size,
            root,
            limits,
            backend,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The file's size in bytes.
    pub fn size_on_disk(&self) -> u64 {
        self.size
    }

    /// The limits on untrusted sizes this file was opened with.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// For a data frame (a Parquet file): its schema described, one line per index level and
    /// column with its pandas, numpy and Arrow types (no data is read). `None` for files that
    /// hold no frame.
    pub fn frame_description(&self) -> Result<Option<String>> {
        #[cfg(feature = "hdfstore")]
        if let Some(store) = self.hdf_store() {
            return crate::store::describe(&store, &self.path);
        }
        #[cfg(feature = "parquet")]
        if let Backend::Parquet = self.backend {
            return crate::parquet::schema(&self.path, &self.limits).map(|s| Some(s.describe()));
        }
        Ok(None)
    }

    /// For a MAT file: its version and header text (`MAT-file version 7: MATLAB 5.0
    /// MAT-file, Platform: ...`). `None` for other formats.
    pub fn mat_description(&self) -> Option<String> {
        #[cfg(feature = "mat")]
        if let Backend::Mat(mat) = &self.backend {
            return Some(mat.description());
        }
        None
    }

    /// The tree from `node` (`None`: the root) down as the format's own tool lists it, one
    /// line per node: for HDF5 files PyTables' `ptdump` view (class, shape, dtype, chunk
    /// shape, filters, title) and, with `attrs`, every attribute (system and user, values
    /// shortened) under its node, like `ptdump -a`. `None` for formats without such a tool.
    ///
    /// ```no_run
    /// let file = sciio::File::open("data.h5")?;
    /// if let Some(text) = file.native_listing(None, false)? {
    ///     print!("{text}"); // "/table (Table(100,)shuffle, zlib(1)) 'rows'  dtype=..."
    /// }
    /// # Ok::<(), sciio::Error>(())
    /// ```
    pub fn native_listing(&self, node: Option<&str>, attrs: bool) -> Result<Option<String>> {
        #[cfg(feature = "hdf5")]
        if let Backend::Hdf5(h5) = &self.backend {
            return h5
                .ptdump(node.unwrap_or("/"), attrs)
                .map(Some)
                .map_err(|e| e.with_file(&self.path));
        }
        let _ = (node, attrs);
        Ok(None)
    }

    /// For a data frame (a Parquet file): the frame as text like pandas' `print(df)`, the first
    /// and last `max_rows / 2` rows when longer (the frame is read into memory). `None` for
    /// files that hold no frame.
    pub fn frame_text(&self, max_rows: usize) -> Result<Option<String>> {
        #[cfg(feature = "parquet")]
        if let Backend::Parquet = self.backend {
            return crate::parquet::read_frame(&self.path, &self.limits)?
                .to_text(max_rows)
                .map(Some)
                .map_err(|e| e.with_file(&self.path));
        }
        let _ = max_rows;
        Ok(None)
    }

    /// For a pandas HDFStore key (`/df`: a group with a `pandas_type` attribute): the frame
    /// as text like pandas' `print(pd.read_hdf(file, key))`, as [`File::frame_text`] prints
    /// a Parquet file. `None` when `node` is not such a key.
    ///
    /// ```no_run
    /// let file = sciio::File::open("store.h5")?;
    /// if let Some(text) = file.key_frame_text("/df", 60)? {
    ///     print!("{text}");
    /// }
    /// # Ok::<(), sciio::Error>(())
    /// ```
    pub fn key_frame_text(&self, node: &str, max_rows: usize) -> Result<Option<String>> {
        #[cfg(feature = "hdfstore")]
        if let Some(store) = self.hdf_store() {
            if crate::store::frame_key(&store, node, || self.is_group(node))?.is_some() {
                return store
                    .read(node)?
                    .to_text(max_rows)
                    .map(Some)
                    .map_err(|e| e.with_file(&self.path).with_node(node.to_string()));
            }
        }
        let _ = (node, max_rows);
        Ok(None)
    }

    /// The pandas HDFStore view of an HDF5 file.
    #[cfg(feature = "hdfstore")]
    pub(crate) fn hdf_store(&self) -> Option<sciio_hdfstore::HdfStore> {
        match &self.backend {
            Backend::Hdf5(h5) => Some(sciio_hdfstore::HdfStore::from_file(
                h5.pytables().clone(),
                &self.path,
            )),
            _ => None,
        }
    }

    /// The root of the tree: the array itself for `.npy`, a group of members for `.npz`.
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// The records `node` names (the whole file when `None`) are in, for progress shown in
    /// rows: a table's or a data frame's rows (a pandas `table` key's too), an array's first
    /// axis; `None` for anything else (a group of several things, a 0-d array, a `fixed` key).
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("x.npy");
    /// # sciio::npy::write_file(&path, &sciio::NdArray::from_vec(vec![0.0f64; 12], &[4, 3])?)?;
    /// let file = sciio::File::open(&path)?;
    /// assert_eq!(file.rows(None), Some(4));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rows(&self, node: Option<&str>) -> Option<u64> {
        let found = match node.map(|n| n.trim_matches('/')).filter(|n| !n.is_empty()) {
            Some(path) => self.root.find(path)?,
            None => &self.root,
        };
        match &found.kind {
            NodeKind::Array(info) | NodeKind::Table(info) => info.shape.first().map(|&d| d as u64),
            NodeKind::Frame { rows, .. } => Some(*rows),
            // A pandas `table` key: a group with `pandas_type` and its Table `table`.
            NodeKind::Group(children) if found.attrs.iter().any(|a| a.name == "pandas_type") => {
                children.iter().find_map(|c| match &c.kind {
                    NodeKind::Table(info) if c.name == "table" => {
                        info.shape.first().map(|&d| d as u64)
                    }
                    _ => None,
                })
            }
            _ => None,
        }
    }

    /// Whether `path` names a group of the tree (the store layer's question: a group holding
    /// a plain Table is a pandas `generic_table` key).
    #[cfg(feature = "hdfstore")]
    pub(crate) fn is_group(&self, path: &str) -> bool {
        self.root
            .find(path)
            .is_some_and(|n| matches!(n.kind, NodeKind::Group { .. }))
    }

    /// The node at `path` (`/x`, `x`, `/group/x`; `/` is the root), or a
    /// [`NotFound`](sciio_core::ErrorKind::NotFound) error naming it.
    pub fn node(&self, path: &str) -> Result<&Node> {
        self.root.find(path).ok_or_else(|| {
            let names: Vec<String> = self
                .root
                .walk("")
                .into_iter()
                .skip(1)
                .take(8)
                .map(|(p, _)| p)
                .collect();
            let hint = if names.is_empty() {
                String::new()
            } else {
                format!(" (it has {})", names.join(", "))
            };
            Error::not_found(format!("no node '{path}' in the file{hint}"))
                .with_file(&self.path)
                .with_node(path)
        })
    }

    /// The path of the one array `node` names, or of the file's only array when `node` is
    /// `None`; an error saying which arrays there are when that is ambiguous.
    pub fn single_array_path(&self, node: Option<&str>) -> Result<String> {
        if let Some(node) = node {
            let found = self.node(node)?;
            if found.array_info().is_none() {
                return Err(Error::mismatch(format!(
                    "'{node}' is a {}, not an array",
                    found.kind_name()
                ))
                .with_file(&self.path)
                .with_node(node));
            }
            return Ok(normalise(node));
        }
        let leaves = self.root.array_leaves("");
        match leaves.as_slice() {
            [(path, _)] => Ok(path.clone()),
            [] => {
                let frame = matches!(self.root.kind, NodeKind::Frame { .. });
                let why = if frame {
                    " (it is a data frame: convert it to .npz for one array per column)"
                } else {
                    ""
                };
                Err(Error::not_found(format!("the file holds no array{why}")).with_file(&self.path))
            }
            many => {
                let names: Vec<&str> = many.iter().take(8).map(|(p, _)| p.as_str()).collect();
                Err(Error::invalid_input(format!(
                    "the file holds {} arrays ({}{}); name one as FILE:NODE",
                    many.len(),
                    names.join(", "),
                    if many.len() > 8 { ", ..." } else { "" }
                ))
                .with_file(&self.path))
            }
        }
    }

    /// Reads the array at `path` whole into memory.
    pub fn read_array(&mut self, path: &str) -> Result<NdArray> {
        let path = normalise(path);
        let file = self.path.clone();
        let located = |e: Error| e.with_file(&file).with_node(path.clone());
        match &mut self.backend {
            Backend::Npy(_) => {
                expect_root(&path).map_err(located)?;
                sciio_npy::read_file_with(&self.path, &self.limits).map_err(located)
            }
            Backend::Npz { archive, members } => {
                let index = member_index(members, &path).map_err(located)?;
                let size = archive.entries()[index].size();
                let mut member = archive.open_member(index).map_err(located)?;
                let array = sciio_npy::read_array_sized(&mut member, &self.limits, size)
                    .map_err(located)?;
                // Drain what follows so the member's size and CRC-32 are checked.
                io::copy(&mut member, &mut io::sink())
                    .map_err(|e| located(sciio_zip::error_from_io(e)))?;
                Ok(array)
            }
            #[cfg(feature = "hdf5")]
            Backend::Hdf5(h5) => h5.read_array(&path).map_err(located),
            #[cfg(feature = "mat")]
            Backend::Mat(mat) => mat.read_array(&path).map_err(located),
            #[cfg(feature = "parquet")]
            Backend::Parquet => Err(located(frames_not_arrays())),
        }
    }

    /// Reads the array at `path` whole, in the file's own layout: for HDF5 files the stored
    /// byte order (`>f8` stays `>f8`) and compound offsets, field order and item size, as
    /// h5py reads them; [`File::read_array`] gives PyTables' `node.read()` layout instead
    /// (native byte order, compounds laid out as PyTables lays them out). Other formats have
    /// one layout: the same as [`File::read_array`].
    pub fn read_array_as_stored(&mut self, path: &str) -> Result<NdArray> {
        #[cfg(feature = "hdf5")]
        if let Backend::Hdf5(h5) = &self.backend {
            let path = normalise(path);
            return h5
                .read_array_as_stored(&path)
                .map_err(|e| e.with_file(&self.path).with_node(path.clone()));
        }
        self.read_array(path)
    }

    /// Reads the rows of the variable-length node at `path` (a PyTables VLArray, or an h5py
    /// variable-length dataset), one array per row as PyTables' `node.read()` returns them:
    /// rows of numbers as 1-d arrays (n-d for array atoms) in native byte order, `vlstring`
    /// rows as 0-d `S<n>` arrays, `vlunicode` rows as 0-d `U<n>` arrays. Rows of pickled
    /// objects are refused (never unpickled). [`File::read_array`] reads a VLArray of strings
    /// whole, as one `S`/`U` array (what `np.array(node.read())` gives), and refuses numbers;
    /// an h5py dataset of variable-length strings (any shape) only reads whole (this gives a
    /// [`Mismatch`](sciio_core::ErrorKind::Mismatch) error).
    /// [`crate::vlarray::npz_members`] names the rows as .npz members.
    pub fn read_rows(&mut self, path: &str) -> Result<Vec<NdArray>> {
        let path = normalise(path);
        let file = self.path.clone();
        let located = |e: Error| e.with_file(&file).with_node(path.clone());
        match &self.backend {
            #[cfg(feature = "hdf5")]
            Backend::Hdf5(h5) => h5.read_rows(&path).map_err(located),
            #[allow(unreachable_patterns)]
            _ => Err(located(Error::mismatch(format!(
                "{} files hold no rows of variable length",
                self.format
            )))),
        }
    }

    /// Rows `start..stop` of the HDF5 table or array at `path` (along its first axis).
    #[cfg(all(feature = "hdf5", feature = "parquet"))]
    pub(crate) fn read_row_range(&self, path: &str, start: usize, stop: usize) -> Result<NdArray> {
        let path = normalise(path);
        let located = |e: Error| e.with_file(&self.path).with_node(path.clone());
        match &self.backend {
            Backend::Hdf5(h5) => h5.read_row_range(&path, start, stop).map_err(located),
            _ => Err(located(Error::mismatch("not an HDF5 file"))),
        }
    }

    /// A row of no items typed as the rows at `path` read (numeric VLArrays), `None` where
    /// the node's type names no item type: what types a list column with no row.
    #[cfg(feature = "parquet")]
    // Only HDF5 files hold rows of variable length: other builds never look at `path`.
    #[cfg_attr(not(feature = "hdf5"), allow(unused_variables))]
    pub(crate) fn empty_row(&self, path: &str) -> Result<Option<NdArray>> {
        match &self.backend {
            #[cfg(feature = "hdf5")]
            Backend::Hdf5(h5) => {
                let path = normalise(path);
                h5.empty_row(&path)
                    .map_err(|e| e.with_file(&self.path).with_node(path.clone()))
            }
            #[allow(unreachable_patterns)]
            _ => Ok(None),
        }
    }

    /// How the node at `path` converts when it holds rows of variable length (a PyTables
    /// VLArray, an h5py variable-length dataset), or `None` for any other node.
    // Only HDF5 files hold rows of variable length: other builds never look at `path`.
    #[cfg_attr(not(feature = "hdf5"), allow(unused_variables))]
    pub(crate) fn vl_kind(&self, path: &str) -> Result<Option<crate::vlarray::VlKind>> {
        match &self.backend {
            #[cfg(feature = "hdf5")]
            Backend::Hdf5(h5) => {
                let path = normalise(path);
                h5.vl_kind(&path)
                    .map_err(|e| e.with_file(&self.path).with_node(path.clone()))
            }
            #[allow(unreachable_patterns)]
            _ => Ok(None),
        }
    }

    /// Streams the raw data bytes of the array at `path` (in its stored dtype and order, as
    /// an NPY header describes them) into `out`, block by block, calling `progress` with the
    /// bytes copied so far. Memory stays bounded whatever the array's size.
    pub fn copy_array_data(
        &mut self,
        path: &str,
        out: &mut dyn Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        self.copy_array_data_of(path, None, out, progress)
    }

    /// Hands the raw data bytes of the array at `path` (as [`File::copy_array_data`] gives
    /// them) to `take` in blocks of whole rows, about `block_bytes` each (at least one row;
    /// an array's rows over `block_bytes` in pieces of at most that),
    /// each block read into a buffer `spare` gives, when the source can read straight into it
    /// (HDF5 arrays and tables): `false` (nothing taken) for other sources and arrays, which
    /// [`File::copy_array_data`] streams.
    #[cfg(any(feature = "hdf5", feature = "parquet", feature = "mat"))]
    pub(crate) fn for_each_array_block(
        &mut self,
        path: &str,
        block_bytes: usize,
        spare: &mut dyn FnMut() -> Vec<u8>,
        take: &mut dyn FnMut(Vec<u8>) -> Result<()>,
    ) -> Result<bool> {
        #[cfg(not(feature = "hdf5"))]
        let _ = (path, block_bytes, spare, take);
        match &self.backend {
            #[cfg(feature = "hdf5")]
            Backend::Hdf5(h5) => {
                let path = normalise(path);
                let file = self.path.clone();
                let located = |e: Error| e.with_file(&file).with_node(path.clone());
                let info = array_info_at(&self.root, &path).map_err(located)?;
                h5.for_each_block(&path, &info, block_bytes, spare, take)
                    .map_err(located)
            }
            _ => Ok(false),
        }
    }

    /// The array data of a `.npy` file as a byte range of the file: the file opened again, the
    /// data's offset and its length (`None` for other formats: their data is decoded, or
    /// checked as it is read). Lets a writer copy the bytes file to file.
    #[cfg(any(feature = "hdf5", feature = "mat"))]
    pub(crate) fn raw_array_range(&self, path: &str) -> Result<Option<(fs::File, u64, u64)>> {
        let Backend::Npy(header) = &self.backend else {
            return Ok(None);
        };
        let path = normalise(path);
        let located = |e: Error| e.with_file(&self.path).with_node(path.clone());
        expect_root(&path).map_err(located)?;
        header.refuse_objects().map_err(located)?;
        let len = header.data_len().map_err(located)?;
        let f = fs::File::open(&self.path).map_err(|e| located(Error::io("cannot open", e)))?;
        Ok(Some((f, header.header_len as u64, len)))
    }

    /// [`File::copy_array_data`] of a leaf whose description the caller took from this
    /// file's tree already (a conversion's plan): HDF5 and MAT files then skip looking the
    /// path up again (thousands of leaves in one group made that quadratic).
    pub(crate) fn copy_array_data_of(
        &mut self,
        path: &str,
        known: Option<&ArrayInfo>,
        out: &mut dyn Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        #[cfg(not(any(feature = "hdf5", feature = "mat")))]
        let _ = known;
        let path = normalise(path);
        let file = self.path.clone();
        let located = |e: Error| e.with_file(&file).with_node(path.clone());
        match &mut self.backend {
            Backend::Npy(header) => {
                expect_root(&path).map_err(located)?;
                header.refuse_objects().map_err(located)?;
                let len = header.data_len().map_err(located)?;
                let mut f =
                    fs::File::open(&self.path).map_err(|e| located(Error::io("cannot open", e)))?;
                f.seek(SeekFrom::Start(header.header_len as u64))
                    .map_err(|e| located(Error::io("cannot seek", e)))?;
                copy_exact(&mut f, out, len, header.header_len as u64, progress).map_err(located)
            }
            Backend::Npz { archive, members } => {
                let index = member_index(members, &path).map_err(located)?;
                let size = archive.entries()[index].size();
                let limits = self.limits;
                let mut member = archive.open_member(index).map_err(located)?;
                let header = sciio_npy::read_header_from(&mut member, &limits, Some(size))
                    .map_err(located)?;
                header.refuse_objects().map_err(located)?;
                let len = header.data_len().map_err(located)?;
                copy_exact(&mut member, out, len, header.header_len as u64, progress)
                    .map_err(located)?;
                io::copy(&mut member, &mut io::sink())
                    .map_err(|e| located(sciio_zip::error_from_io(e)))?;
                Ok(())
            }
            #[cfg(feature = "hdf5")]
            Backend::Hdf5(h5) => {
                let info = match known {
                    Some(info) => info.clone(),
                    None => array_info_at(&self.root, &path).map_err(located)?,
                };
                h5.copy_array_data(&path, &info, out, progress)
                    .map_err(located)
            }
            #[cfg(feature = "mat")]
            Backend::Mat(mat) => {
                let info = match known {
                    Some(info) => info.clone(),
                    None => array_info_at(&self.root, &path).map_err(located)?,
                };
                mat.copy_array_data(&path, &info, out, progress)
                    .map_err(located)
            }
            #[cfg(feature = "parquet")]
            Backend::Parquet => Err(located(frames_not_arrays())),
        }
    }
}

#[cfg(feature = "parquet")]
fn frames_not_arrays() -> Error {
    Error::unsupported(
        "a Parquet file is a data frame, not arrays; convert it to .npz for one array per column",
    )
}

pub(crate) fn expect_root(path: &str) -> Result<()> {
    if path == "/" {
        Ok(())
    } else {
        Err(Error::not_found(
            "a .npy file holds one array and no nodes (use the file name alone)",
        ))
    }
}

pub(crate) fn member_index(members: &[(String, usize)], path: &str) -> Result<usize> {
    members
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, i)| *i)
        .ok_or_else(|| Error::not_found(format!("no array member '{path}'")))
}

/// Copies exactly `len` bytes; a short input is a [`Truncated`](sciio_core::ErrorKind::Truncated) error
/// at the byte offset where the data ran out.
fn copy_exact(
    input: &mut dyn Read,
    out: &mut dyn Write,
    len: u64,
    start_offset: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let mut buf = vec![0u8; BLOCK.min(usize::try_from(len).unwrap_or(BLOCK)).max(1)];
    let mut done = 0u64;
    while done < len {
        let want = buf
            .len()
            .min(usize::try_from(len - done).unwrap_or(buf.len()));
        let n = match input.read(&mut buf[..want]) {
            Ok(0) => {
                return Err(Error::truncated(format!(
                    "the array data ends after {done} of {len} bytes"
                ))
                .with_offset(start_offset + done))
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(sciio_zip::error_from_io(e)),
        };
        out.write_all(&buf[..n])
            .map_err(|e| Error::io("cannot write", e))?;
        done += n as u64;
        progress(done);
    }
    Ok(())
}

/// The listing's description of the array leaf at `path` (the HDF5 and MAT backends copy
/// data by what the tree says about it).
#[cfg(any(feature = "hdf5", feature = "mat"))]
pub(crate) fn array_info_at(root: &Node, path: &str) -> Result<ArrayInfo> {
    root.find(path)
        .and_then(Node::array_info)
        .cloned()
        .ok_or_else(|| Error::not_found("no array there"))
}

fn info_of(header: &Header) -> ArrayInfo {
    ArrayInfo {
        dtype: header.dtype.clone(),
        shape: header.shape.clone(),
        order: if header.fortran_order {
            Order::F
        } else {
            Order::C
        },
    }
}

fn array_node(name: &str, header: &Header) -> Node {
    if header.dtype.has_object() {
        return Node::new(
            name,
            NodeKind::Opaque {
                kind: "object array".to_string(),
                reason: "pickled Python objects (refused: sciio never unpickles)".to_string(),
            },
        );
    }
    Node::new(name, NodeKind::Array(info_of(header)))
}

fn open_npy(path: &Path, size: u64, limits: &Limits) -> Result<(Node, Backend)> {
    let mut f = fs::File::open(path).map_err(|e| Error::io("cannot open", e).with_file(path))?;
    let header = sciio_npy::read_header_from(&mut io::BufReader::new(&mut f), limits, Some(size))
        .map_err(|e| e.with_file(path))?;
    let available = size.saturating_sub(header.header_len as u64);
    let len = header.data_len().map_err(|e| e.with_file(path))?;
    if len > available {
        return Err(Error::truncated(format!(
            "header announces {len} bytes of data, only {available} follow"
        ))
        .with_file(path)
        .with_offset(header.header_len as u64));
    }
    Ok((array_node("", &header), Backend::Npy(header)))
}

fn open_npz(path: &Path, limits: &Limits) -> Result<(Node, Backend)> {
    let mut archive = ZipArchive::open_with_limits(path, *limits)?;
    let mut children = Vec::new();
    let mut members = Vec::new();
    let entries: Vec<(String, u64, bool)> = archive
        .entries()
        .iter()
        .map(|e| (e.name().to_string(), e.size(), e.is_dir()))
        .collect();
    for (index, (member, size, is_dir)) in entries.into_iter().enumerate() {
        if is_dir {
            continue;
        }
        // np.load names members without their `.npy` suffix.
        let Some(name) = member.strip_suffix(".npy") else {
            children.push(Node::new(
                member.as_str(),
                NodeKind::Opaque {
                    kind: "file".to_string(),
                    reason: "not an .npy member".to_string(),
                },
            ));
            continue;
        };
        let mut reader = archive
            .open_member(index)
            .map_err(|e| e.with_file(path).with_node(member.clone()))?;
        let header = sciio_npy::read_header_from(&mut reader, limits, Some(size))
            .map_err(|e| e.with_file(path).with_node(member.clone()))?;
        members.push((normalise(name), index));
        children.push(array_node(name, &header));
    }
    let root = Node::new("", NodeKind::Group(children));
    Ok((root, Backend::Npz { archive, members }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_exact_reports_truncation_offset() {
        let mut input: &[u8] = b"abc";
        let mut out = Vec::new();
        let err = copy_exact(&mut input, &mut out, 10, 128, &mut |_| {}).unwrap_err();
        assert_eq!(err.kind(), sciio_core::ErrorKind::Truncated);
        assert_eq!(err.location().offset, Some(131));
        assert_eq!(out, b"abc");
    }
}
