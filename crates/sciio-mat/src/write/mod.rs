//! Writing v7.3 MAT files with MATLAB's conventions (those hdf5storage's `matlab_compatible`
//! mode follows): 512-byte userblock with the MAT header, earliest HDF5 file format (superblock
//! 0, v1 B-trees, which MATLAB's `load` requires), `MATLAB_class` on every value, reversed
//! dimensions, at least two of them, complex as `real`/`imag` compounds, char as UTF-16,
//! logical as `uint8`, empties as their dimensions with `MATLAB_empty`, cells and struct arrays
//! through object references into `/#refs#`.
//!
//! One write path: sciio's native HDF5 writer (`sciio_hdf5::write::native`) writes every v7.3
//! file, new ones and existing ones alike — adding to an existing file rewrites it beside the
//! old one and renames it into place (copy.rs). Each MATLAB value is one dataset or group made
//! with [`Group::write_dataset`] and a few [`Group::add_attr`] calls (the objects are new, so
//! no attribute is looked up first).

use std::collections::HashSet;
use std::io::{Seek, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sciio_core::{Error, NdArray, Order, Result, ScalarKind};
use sciio_hdf5::write::native::NativeFile;
use sciio_hdf5::write::{DatasetSpec, FileBuilder, FilterStage, LibVersion};
use sciio_hdf5::{AttrValue, ByteOrder, CharSet, Field, H5Type, RawData, VlenData};

mod copy;
mod pieces;
mod records;
mod sink;
mod text;
mod tree;

use self::sink::{Dataset, Group, Sink};
use crate::header;
use crate::numpy::{PythonAttrs, PythonMeta};
use crate::v5::write::Level5Writer;
use crate::v5::MatVersion;
use crate::value::{at_least_2d, CharArray, MatValue, SparseMatrix, StructArray};

/// How a MAT file is written. Defaults: deflate level 3 with shuffle (MATLAB's default
/// `save -v7.3` compression) for datasets of 16 KiB or more (hdf5storage's threshold), no
/// Python metadata, platform `sciio <version>`.
///
/// ```
/// let opts = sciio_mat::WriteOptions::default().compression(Some(6)).python_metadata(true);
/// assert_eq!(opts.compression_level, Some(6));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// Deflate level 0..=9 with the shuffle filter, or `None` for no compression.
    pub compression_level: Option<u32>,
    /// Datasets smaller than this many bytes are not compressed.
    pub compress_threshold: usize,
    /// Also write hdf5storage's `Python.*` attributes so `hdf5storage.loadmat` restores the
    /// exact numpy types (as `store_python_metadata=True` does).
    pub python_metadata: bool,
    /// The `Platform:` part of the header.
    pub platform: String,
    /// Target size of one compressed chunk.
    pub chunk_bytes: usize,
    /// Write new files through libhdf5 instead of sciio's own HDF5 writer: the same layout,
    /// about ten times slower for many small values. A check of the native writer for its
    /// tests (which hold the two files side by side); files being added to
    /// ([`MatWriter::open`]) always go through the native writer.
    pub libhdf5: bool,
    /// The MAT version written: [`MatVersion::V73`] (default), [`MatVersion::V7`] (Level 5,
    /// each variable zlib-compressed at [`WriteOptions::compression_level`], uncompressed
    /// when that is `None`) or [`MatVersion::V5`] (Level 5 uncompressed, as
    /// `scipy.io.savemat` writes). Level-5 variables are limited to 2 GB.
    pub version: MatVersion,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compression_level: Some(3),
            compress_threshold: 16 * 1024,
            python_metadata: false,
            platform: format!("sciio {}", env!("CARGO_PKG_VERSION")),
            chunk_bytes: 1 << 20,
            libhdf5: false,
            version: MatVersion::V73,
        }
    }
}

impl WriteOptions {
    /// Sets [`WriteOptions::compression_level`].
    pub fn compression(mut self, level: Option<u32>) -> Self {
        self.compression_level = level.map(|l| l.min(9));
        self
    }

    /// Sets [`WriteOptions::python_metadata`].
    pub fn python_metadata(mut self, on: bool) -> Self {
        self.python_metadata = on;
        self
    }

    /// Sets [`WriteOptions::libhdf5`].
    pub fn libhdf5(mut self, on: bool) -> Self {
        self.libhdf5 = on;
        self
    }

    /// Sets [`WriteOptions::version`].
    ///
    /// ```
    /// use sciio_mat::{MatFile, MatValue, MatVersion, MatWriter, WriteOptions};
    /// let path = std::env::temp_dir().join(format!("sciio-v7-doc-{}.mat", std::process::id()));
    /// let mut w = MatWriter::create(&path, WriteOptions::default().version(MatVersion::V7))?;
    /// w.write("x", &MatValue::from(vec![1.0, 2.0]))?;
    /// w.finish()?;
    /// let back = MatFile::open(&path)?;
    /// assert_eq!(back.version(), MatVersion::V7);
    /// assert_eq!(back.read("x")?, MatValue::from(vec![1.0, 2.0]));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn version(mut self, version: MatVersion) -> Self {
        self.version = version;
        self
    }

    /// Sets [`WriteOptions::compress_threshold`].
    pub fn compress_threshold(mut self, bytes: usize) -> Self {
        self.compress_threshold = bytes;
        self
    }
}

/// Writes MATLAB variables into a new or existing v7.3 MAT file.
///
/// ```no_run
/// use sciio_mat::{MatValue, MatWriter, WriteOptions};
/// let mut w = MatWriter::create("out.mat", WriteOptions::default())?;
/// w.write("x", &MatValue::from(vec![1.0, 2.0, 3.0]))?;
/// w.write("name", &MatValue::from("hello"))?;
/// w.finish()?;
/// # Ok::<(), sciio_core::Error>(())
/// ```
#[derive(Debug)]
pub struct MatWriter {
    file: Option<Sink>,
    root: Option<Arc<Group>>,
    path: PathBuf,
    opts: WriteOptions,
    refs: Option<Arc<Group>>,
    next_ref: u64,
    /// A reference to `/#refs#/a`, MATLAB's canonical empty, once written.
    canonical_empty: Option<u64>,
    /// Struct elements written as they come so far (`records.rs`'s names in `/#refs#`).
    next_element: u64,
    /// The writer of a Level-5 (v5/v7) file; the HDF5 fields are unused then.
    level5: Option<Level5Writer>,
    /// An existing file being rewritten ([`MatWriter::open`]).
    rewrite: Option<Rewrite>,
}

/// An existing file being rewritten: the new file beside it, renamed over it by `finish`.
#[derive(Debug)]
struct Rewrite {
    /// The new file (removed unless renamed into place).
    temp: PathBuf,
    _registered: sciio_temp::Registration,
    /// The old file's userblock (its MAT header), kept as it was.
    head: Vec<u8>,
    /// Variables written so far: the old ones of these names are not copied.
    written: HashSet<String>,
    /// Renamed into place.
    done: bool,
}

impl Drop for Rewrite {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

impl Rewrite {
    /// Puts the old MAT header into the new file and renames it over `path`.
    fn replace(&mut self, path: &Path) -> Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.temp)
            .map_err(|e| Error::io("cannot reopen the file", e).with_file(&self.temp))?;
        f.seek(SeekFrom::Start(0))
            .and_then(|_| f.write_all(&self.head))
            .and_then(|_| f.sync_all())
            .map_err(|e| Error::io("cannot write the MAT header", e).with_file(&self.temp))?;
        drop(f);
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&self.temp, meta.permissions())
                .map_err(|e| Error::io("cannot set permissions", e).with_file(&self.temp))?;
        }
        std::fs::rename(&self.temp, path).map_err(|e| {
            Error::io("cannot rename the rewritten file into place", e).with_file(path)
        })?;
        self.done = true;
        Ok(())
    }
}

/// A new, empty file beside `path` for its rewrite (`.NAME.sciio-PID-N.tmp`).
fn temp_beside(path: &Path) -> Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for _ in 0..100 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temp = path.with_file_name(format!(".{name}.sciio-{}-{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
        {
            Ok(_) => return Ok(temp),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io("cannot create the file beside it", e).with_file(&temp)),
        }
    }
    Err(Error::invalid_input("no free temporary name beside the file").with_file(path))
}

/// The file format MATLAB's `load` requires: superblock 0, v1 B-trees, old-style messages.
fn builder() -> FileBuilder {
    FileBuilder::new().libver_bounds(LibVersion::Earliest, LibVersion::V18)
}

impl MatWriter {
    /// Creates (truncates) `path`.
    pub fn create(path: impl AsRef<Path>, opts: WriteOptions) -> Result<MatWriter> {
        let path = path.as_ref().to_path_buf();
        match opts.version {
            MatVersion::V73 => {}
            MatVersion::V4 => {
                return Err(Error::unsupported(
                    "writing MAT v4 files is not supported (write v5, v7 or v7.3)",
                )
                .with_file(&path))
            }
            v => {
                let level = match v {
                    MatVersion::V7 => opts.compression_level,
                    _ => None,
                };
                let w = Level5Writer::create(&path, level, &opts.platform)?;
                return Ok(MatWriter {
                    file: None,
                    root: None,
                    path,
                    opts,
                    refs: None,
                    next_ref: 0,
                    canonical_empty: None,
                    next_element: 0,
                    level5: Some(w),
                    rewrite: None,
                });
            }
        }
        let userblock = header::USERBLOCK as u64;
        let file = if opts.libhdf5 {
            Sink::Libhdf5(builder().userblock(userblock).create(&path)?)
        } else {
            Sink::Native(NativeFile::create(&path, userblock)?)
        };
        Self::with_file(file, path, opts)
    }

    /// Opens an existing v7.3 MAT file to add or replace variables; the others keep their
    /// values, attributes and storage. The file is rewritten by the same writer as new files:
    /// the new variables and a copy of the others go into a new file beside it, which
    /// [`MatWriter::finish`] renames over it (its MAT header kept); until then the old file
    /// is untouched.
    pub fn open(path: impl AsRef<Path>, opts: WriteOptions) -> Result<MatWriter> {
        let path = path.as_ref().to_path_buf();
        if opts.version != MatVersion::V73 {
            return Err(Error::unsupported(
                "adding variables to an existing file is supported for MAT v7.3 only",
            )
            .with_file(&path));
        }
        let mut head = vec![0u8; header::USERBLOCK + 8];
        let n = std::fs::File::open(&path)
            .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
            .map_err(|e| Error::io("cannot read the file", e).with_file(&path))?;
        head.truncate(n);
        header::check_head(&head).map_err(|e| e.with_file(&path))?;
        head.truncate(header::USERBLOCK);
        let temp = temp_beside(&path)?;
        let rewrite = Rewrite {
            _registered: sciio_temp::register(&temp),
            temp,
            head,
            written: HashSet::new(),
            done: false,
        };
        let file = Sink::Native(
            NativeFile::create(&rewrite.temp, header::USERBLOCK as u64)
                .map_err(|e| e.with_file(&path))?,
        );
        let mut writer = Self::with_file(file, path, opts)?;
        writer.rewrite = Some(rewrite);
        Ok(writer)
    }

    fn with_file(file: Sink, path: PathBuf, opts: WriteOptions) -> Result<MatWriter> {
        let root = Arc::new(file.root()?);
        Ok(MatWriter {
            file: Some(file),
            root: Some(root),
            path,
            opts,
            refs: None,
            next_ref: 0,
            canonical_empty: None,
            next_element: 0,
            level5: None,
            rewrite: None,
        })
    }

    fn root(&self) -> Result<Arc<Group>> {
        self.root
            .clone()
            .ok_or_else(|| Error::invalid_input("the writer is finished"))
    }

    /// Writes variable `name`, replacing a variable of that name.
    pub fn write(&mut self, name: &str, value: &MatValue) -> Result<()> {
        self.write_with_meta(name, value, None)
    }

    /// Writes `value` as `name` with hdf5storage's `Python.*` attributes given by `meta`
    /// (from [`crate::from_numpy`]) wherever it has them, so `hdf5storage.loadmat` restores
    /// the numpy arrays exactly; elsewhere as [`MatWriter::write`]. Level-5 files hold no
    /// such attributes: `meta` is ignored there.
    pub fn write_with_meta(
        &mut self,
        name: &str,
        value: &MatValue,
        meta: Option<&PythonMeta>,
    ) -> Result<()> {
        check_name(name)?;
        if let Some(w) = &mut self.level5 {
            return w
                .write(name, value)
                .map_err(|e| e.with_node(format!("/{name}")).with_file(&self.path));
        }
        self.replace_variable(name, |w, root| w.value(root, name, value, meta).map(|_| ()))
    }

    /// Writes variable `name` of a v7.3 file with `make` (given the root group), replacing
    /// one of that name; errors are located at the variable.
    fn replace_variable(
        &mut self,
        name: &str,
        make: impl FnOnce(&mut Self, &Group) -> Result<()>,
    ) -> Result<()> {
        if let Some(rewrite) = &mut self.rewrite {
            rewrite.written.insert(name.to_string());
        }
        let root = self.root()?;
        let path = self.path.clone();
        let cleared = match root.contains(name) {
            Ok(true) => root.unlink(name),
            Ok(false) => Ok(()),
            Err(e) => Err(e),
        };
        cleared
            .and_then(|()| make(self, &root))
            .map_err(|e| e.with_node(format!("/{name}")).with_file(&path))
    }

    /// Closes the file and, for a new file, writes the MAT header into the userblock.
    pub fn finish(mut self) -> Result<()> {
        self.close()
    }

    fn close(&mut self) -> Result<()> {
        if let Some(w) = &mut self.level5 {
            return w.finish();
        }
        if self.file.is_some() {
            if let Some(written) = self.rewrite.as_ref().map(|r| r.written.clone()) {
                let copied = self.copy_old(&written);
                if let Err(e) = copied {
                    // The old file stays as it was; the new one is removed.
                    self.refs = None;
                    self.root = None;
                    self.file = None;
                    self.rewrite = None;
                    return Err(e.with_file(&self.path));
                }
            }
        }
        self.refs = None;
        self.root = None;
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        file.close()?;
        if let Some(mut rewrite) = self.rewrite.take() {
            return rewrite.replace(&self.path);
        }
        {
            let head = header::build(&self.opts.platform, header::now());
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(&self.path)
                .map_err(|e| Error::io("cannot reopen the file", e).with_file(&self.path))?;
            f.seek(SeekFrom::Start(0))
                .and_then(|_| f.write_all(&head))
                .map_err(|e| Error::io("cannot write the MAT header", e).with_file(&self.path))?;
        }
        Ok(())
    }

    /// `/#refs#`, created with MATLAB's canonical empty `a` on first use.
    fn refs_group(&mut self) -> Result<Arc<Group>> {
        if let Some(g) = &self.refs {
            return Ok(g.clone());
        }
        let root = self.root()?;
        let g = root.create_group("#refs#")?;
        let d = g.write_dataset("a", &DatasetSpec::contiguous(uint(8), vec![2]), &[0u8; 16])?;
        let d = Obj::Dataset(d);
        d.str_attr("MATLAB_class", "canonical empty")?;
        d.u8_attr("MATLAB_empty", 1)?;
        self.canonical_empty = Some(d.object_ref()?);
        let g = Arc::new(g);
        self.refs = Some(g.clone());
        Ok(g)
    }

    /// A name in `/#refs#` not taken yet (the writer's own counter: the file is new).
    fn fresh_ref_name(&mut self, refs: &Group) -> Result<String> {
        loop {
            self.next_ref += 1;
            let name = ref_name(self.next_ref);
            if !refs.contains(&name)? {
                return Ok(name);
            }
        }
    }

    /// Writes `value` into `/#refs#` under a fresh name and returns a reference to it.
    fn write_ref(&mut self, value: &MatValue, meta: Option<&PythonMeta>) -> Result<u64> {
        let refs = self.refs_group()?;
        let name = self.fresh_ref_name(&refs)?;
        self.value(&refs, &name, value, meta)?.object_ref()
    }

    /// Writes a struct's field names into `/#refs#` (a 1-D dataset of vlen sequences of
    /// 1-character strings, as MATLAB stores them for large structs) and returns a reference.
    fn field_names_ref(&mut self, fields: &[String]) -> Result<u64> {
        let refs = self.refs_group()?;
        let name = self.fresh_ref_name(&refs)?;
        let ty = H5Type::VarLen {
            base: Box::new(H5Type::FixedString {
                size: 1,
                charset: CharSet::Ascii,
            }),
        };
        let items = fields.iter().map(|f| f.as_bytes().to_vec()).collect();
        let d = refs.write_vlen_dataset(&name, &ty, items)?;
        Obj::Dataset(d).object_ref()
    }

    /// Writes `value` as `name` in group `loc`.
    fn value(
        &mut self,
        loc: &Group,
        name: &str,
        value: &MatValue,
        meta: Option<&PythonMeta>,
    ) -> Result<Obj> {
        let obj = match value {
            MatValue::Numeric(a) | MatValue::Logical(a) => self.numeric(loc, name, a)?,
            MatValue::Char(c) => match byte_strings(c, meta) {
                Some((width, dims, data)) => self.byte_strings(loc, name, width, dims, &data)?,
                None => self.char(loc, name, c)?,
            },
            MatValue::Cell(c) => {
                if c.items.is_empty() {
                    self.empty(loc, name, "cell", &c.shape)?
                } else {
                    let refs: Vec<u64> = c
                        .items
                        .iter()
                        .map(|v| self.write_ref(v, None))
                        .collect::<Result<_>>()?;
                    let d = ref_dataset(loc, name, &c.shape, &refs)?;
                    d.str_attr("MATLAB_class", "cell")?;
                    d
                }
            }
            MatValue::Struct(s) => self.structure(loc, name, s, meta)?,
            MatValue::Sparse(s) => self.sparse(loc, name, s)?,
            MatValue::Opaque(_) | MatValue::Object(_) => {
                return Err(Error::unsupported(format!(
                    "writing MATLAB objects ({}) is not supported; only MATLAB can create them",
                    value.class().name()
                )))
            }
        };
        if loc.path() != "/" {
            obj.str_attr("H5PATH", loc.path())?;
        }
        match meta.and_then(|m| m.attrs.as_ref()) {
            Some(attrs) => python_attrs(&obj, attrs)?,
            None if self.opts.python_metadata => python_metadata(&obj, value)?,
            None => {}
        }
        Ok(obj)
    }

    fn numeric(&mut self, loc: &Group, name: &str, a: &NdArray) -> Result<Obj> {
        let kind = a
            .dtype()
            .as_scalar()
            .map(|s| s.kind)
            .ok_or_else(|| Error::unsupported("structured dtypes have no MATLAB class"))?;
        let class = crate::value::MatClass::of_kind(kind).ok_or_else(|| {
            Error::unsupported(format!("dtype {} has no MATLAB class", a.dtype()))
        })?;
        let shape = at_least_2d(a.shape());
        if shape.contains(&0) {
            let obj = self.empty(loc, name, class.name(), &shape)?;
            if kind == ScalarKind::Bool {
                obj.int_decode(1)?;
            }
            return Ok(obj);
        }
        let native = if a.dtype().is_native() {
            None
        } else {
            Some(a.to_native())
        };
        let a = native.as_ref().unwrap_or(a);
        let f_order = if a.order() == Order::F || a.ndim() <= 1 {
            None
        } else {
            Some(a.to_order(Order::F))
        };
        let bytes = f_order
            .as_ref()
            .map(|x| x.as_bytes())
            .unwrap_or_else(|| a.as_bytes());
        let dims: Vec<u64> = shape.iter().rev().map(|&d| d as u64).collect();
        let d = self.data_dataset(loc, name, file_type(kind)?, dims, bytes)?;
        d.str_attr("MATLAB_class", class.name())?;
        if kind == ScalarKind::Bool {
            d.int_decode(1)?;
        }
        Ok(d)
    }

    fn char(&mut self, loc: &Group, name: &str, c: &CharArray) -> Result<Obj> {
        c.check()?;
        let shape = at_least_2d(&c.shape);
        if c.codes.is_empty() {
            let d = self.empty(loc, name, "char", &shape)?;
            d.int_decode(2)?;
            return Ok(d);
        }
        let dims: Vec<u64> = shape.iter().rev().map(|&d| d as u64).collect();
        // MATLAB's char is UTF-16 without surrogate pairs: text beyond the BMP (or holding
        // surrogate codes) is stored as UTF-32 (`uint32`, MATLAB_int_decode 4) like hdf5storage
        // does; hdf5storage and mat73 read it back, MATLAB shows the code points as numbers.
        let utf16 = c
            .codes
            .iter()
            .all(|&u| u < 0xD800 || (0xE000..=0xFFFF).contains(&u));
        let (d, decode) = if utf16 {
            let units: Vec<u8> = c
                .codes
                .iter()
                .flat_map(|&u| (u as u16).to_le_bytes())
                .collect();
            (self.data_dataset(loc, name, uint(2), dims, &units)?, 2)
        } else {
            let units: Vec<u8> = c.codes.iter().flat_map(|&u| u.to_le_bytes()).collect();
            (self.data_dataset(loc, name, uint(4), dims, &units)?, 4)
        };
        d.str_attr("MATLAB_class", "char")?;
        d.int_decode(decode)?;
        Ok(d)
    }

    /// A `numpy.bytes_` value holding a non-ASCII byte, as hdf5storage stores it: its
    /// fixed-length strings themselves (see `crate::byte_strings`).
    fn byte_strings(
        &mut self,
        loc: &Group,
        name: &str,
        width: usize,
        dims: Vec<u64>,
        data: &[u8],
    ) -> Result<Obj> {
        let ty = H5Type::FixedString {
            size: width,
            charset: CharSet::Ascii,
        };
        let d = self.data_dataset(loc, name, ty, dims, data)?;
        d.str_attr("MATLAB_class", "char")?;
        d.int_decode(1)?;
        Ok(d)
    }

    /// An empty value: its MATLAB dimensions as `uint64` data, `MATLAB_empty = 1`.
    fn empty(&mut self, loc: &Group, name: &str, class: &str, shape: &[usize]) -> Result<Obj> {
        let dims: Vec<u64> = at_least_2d(shape).iter().map(|&d| d as u64).collect();
        let d = plain_dataset(
            loc,
            name,
            uint(8),
            vec![dims.len() as u64],
            &le_bytes(&dims),
        )?;
        d.str_attr("MATLAB_class", class)?;
        d.u8_attr("MATLAB_empty", 1)?;
        Ok(d)
    }

    fn structure(
        &mut self,
        loc: &Group,
        name: &str,
        s: &StructArray,
        meta: Option<&PythonMeta>,
    ) -> Result<Obj> {
        for f in &s.fields {
            check_name(f)?;
        }
        let n = s.shape.iter().product::<usize>();
        if n != s.elements.len() || s.elements.iter().any(|e| e.len() != s.fields.len()) {
            return Err(Error::invalid_input(
                "struct array elements do not match its shape and fields",
            ));
        }
        // A struct without fields (`struct()`, `repmat(struct(), 2, 3)`) is stored as MATLAB
        // stores it: its dimensions with MATLAB_empty, like an empty.
        if n == 0 || s.fields.is_empty() {
            let d = self.empty(loc, name, "struct", &s.shape)?;
            if !s.fields.is_empty() {
                d.fields_attr(&s.fields)?;
            }
            return Ok(d);
        }
        let obj = self.struct_group(loc, name, &s.fields)?;
        let Obj::Group(g) = &obj else {
            return Ok(obj);
        };
        if n == 1 && at_least_2d(&s.shape) == [1, 1] {
            for (j, (f, v)) in s.fields.iter().zip(&s.elements[0]).enumerate() {
                self.value(g, f, v, meta.and_then(|m| m.field(0, j)))?;
            }
        } else {
            for (j, f) in s.fields.iter().enumerate() {
                let refs: Vec<u64> = s
                    .elements
                    .iter()
                    .enumerate()
                    .map(|(i, e)| self.write_ref(&e[j], meta.and_then(|m| m.field(i, j))))
                    .collect::<Result<_>>()?;
                let d = ref_dataset(g, f, &s.shape, &refs)?;
                d.str_attr("H5PATH", g.path())?;
            }
        }
        Ok(obj)
    }

    /// The group of a struct with `fields` (at least one), its `MATLAB_class` and
    /// `MATLAB_fields` written, its fields still to come.
    fn struct_group(&mut self, loc: &Group, name: &str, fields: &[String]) -> Result<Obj> {
        let g = loc.create_group(name)?;
        let obj = Obj::Group(g);
        obj.str_attr("MATLAB_class", "struct")?;
        // hdf5storage reads only names in the attribute: with Python metadata they stay there
        // as long as Python.Fields is written too (hdf5storage's own limit).
        let inline_max = match self.opts.python_metadata {
            true => PYTHON_FIELDS_MAX,
            false => INLINE_FIELDS_MAX,
        };
        if fields.len() > inline_max {
            // Too many names for one header message: MATLAB's own layout for large structs,
            // the names in a `#refs#` dataset that `MATLAB_fields` references.
            let names = self.field_names_ref(fields)?;
            obj.attr(
                "MATLAB_fields",
                RawData::scalar(H5Type::ObjectRef, names.to_le_bytes().to_vec()),
            )?;
        } else if !fields.is_empty() {
            obj.fields_attr(fields)?;
        }
        Ok(obj)
    }

    fn sparse(&mut self, loc: &Group, name: &str, s: &SparseMatrix) -> Result<Obj> {
        s.check()?;
        let g = loc.create_group(name)?;
        let kind = s
            .data
            .dtype()
            .as_scalar()
            .map(|x| x.kind)
            .unwrap_or(ScalarKind::Float(8));
        let class = if kind == ScalarKind::Bool {
            "logical"
        } else {
            "double"
        };
        let obj = Obj::Group(g);
        obj.str_attr("MATLAB_class", class)?;
        obj.attr(
            "MATLAB_sparse",
            RawData::scalar(uint(8), (s.nrows as u64).to_le_bytes().to_vec()),
        )?;
        if kind == ScalarKind::Bool {
            obj.int_decode(1)?;
        }
        let Obj::Group(g) = &obj else {
            return Ok(obj);
        };
        let jc = self.data_dataset(g, "jc", uint(8), vec![s.jc.len() as u64], &le_bytes(&s.jc))?;
        jc.str_attr("H5PATH", g.path())?;
        if !s.ir.is_empty() {
            let ir =
                self.data_dataset(g, "ir", uint(8), vec![s.ir.len() as u64], &le_bytes(&s.ir))?;
            ir.str_attr("H5PATH", g.path())?;
            let data = s.data.to_native();
            let d = self.data_dataset(
                g,
                "data",
                file_type(kind)?,
                vec![s.ir.len() as u64],
                data.as_bytes(),
            )?;
            d.str_attr("H5PATH", g.path())?;
        }
        Ok(obj)
    }

    /// A dataset holding `bytes` (C order over `dims`), compressed when large enough.
    fn data_dataset(
        &mut self,
        loc: &Group,
        name: &str,
        ty: H5Type,
        dims: Vec<u64>,
        bytes: &[u8],
    ) -> Result<Obj> {
        match self.opts.compression_level {
            Some(level) if bytes.len() >= self.opts.compress_threshold && !dims.is_empty() => {
                let item = ty.size();
                let chunk = chunk_shape(&dims, item, self.opts.chunk_bytes);
                let max = dims.iter().map(|&d| Some(d)).collect();
                let spec = DatasetSpec::chunked(ty, dims, max, chunk).filters(vec![
                    FilterStage::shuffle(item),
                    FilterStage::deflate(level),
                ]);
                Ok(Obj::Dataset(loc.write_dataset(name, &spec, bytes)?))
            }
            _ => plain_dataset(loc, name, ty, dims, bytes),
        }
    }
}

impl Drop for MatWriter {
    fn drop(&mut self) {
        // Errors here cannot be reported; `finish` reports them.
        let _ = self.close();
    }
}

/// A value just written: a dataset or a group (structs, sparse matrices).
enum Obj {
    Dataset(Dataset),
    Group(Group),
}

impl Obj {
    fn attr(&self, name: &str, value: RawData) -> Result<()> {
        let value = AttrValue::Raw(value);
        match self {
            Obj::Dataset(d) => d.add_attr(name, &value),
            Obj::Group(g) => g.add_attr(name, &value),
        }
    }

    /// A fixed-length ASCII string attribute (`MATLAB_class`, `H5PATH`, `Python.*` names),
    /// NUL-terminated type as MATLAB writes them.
    fn str_attr(&self, name: &str, value: &str) -> Result<()> {
        self.attr(name, RawData::bytes_string(value.as_bytes()))
    }

    fn u8_attr(&self, name: &str, value: u8) -> Result<()> {
        self.attr(name, RawData::scalar(uint(1), vec![value]))
    }

    /// `MATLAB_int_decode` (int32): 1 for logical, 2 for UTF-16 char, 4 for UTF-32 char.
    fn int_decode(&self, value: i32) -> Result<()> {
        let ty = H5Type::Int {
            size: 4,
            signed: true,
            order: ByteOrder::Little,
        };
        self.attr(
            "MATLAB_int_decode",
            RawData::scalar(ty, value.to_le_bytes().to_vec()),
        )
    }

    /// A 1-D `uint64` attribute.
    fn u64s_attr(&self, name: &str, values: &[u64]) -> Result<()> {
        self.attr(
            name,
            RawData {
                ty: uint(8),
                shape: vec![values.len()],
                bytes: le_bytes(values),
            },
        )
    }

    fn vlen_attr(&self, name: &str, value: VlenData) -> Result<()> {
        let value = AttrValue::Vlen(value);
        match self {
            Obj::Dataset(d) => d.add_attr(name, &value),
            Obj::Group(g) => g.add_attr(name, &value),
        }
    }

    /// `MATLAB_fields`: a 1-D array of vlen sequences of 1-character strings, one per field.
    fn fields_attr(&self, names: &[String]) -> Result<()> {
        let s1 = H5Type::FixedString {
            size: 1,
            charset: CharSet::Ascii,
        };
        self.vlen_attr(
            "MATLAB_fields",
            VlenData {
                ty: H5Type::VarLen { base: Box::new(s1) },
                shape: vec![names.len()],
                items: names.iter().map(|n| n.as_bytes().to_vec()).collect(),
            },
        )
    }

    fn object_ref(&self) -> Result<u64> {
        match self {
            Obj::Dataset(d) => d.object_ref(),
            Obj::Group(g) => g.object_ref(),
        }
    }

    /// Writes a staged dataset (`sink::Group::Sealing`) with its attributes; the object's
    /// reference.
    fn seal(self) -> Result<u64> {
        match self {
            Obj::Dataset(d) => d.seal(),
            Obj::Group(g) => g.object_ref(),
        }
    }
}

/// Structs with more fields than this keep their `MATLAB_fields` in `/#refs#` (as MATLAB does
/// for large structs): an attribute of 16 bytes per name would not fit an HDF5 header message
/// (64 KiB) from about 4000 fields on.
const INLINE_FIELDS_MAX: usize = 1024;

/// Structs with at most this many fields get hdf5storage's `Python.Fields` (and
/// `Python.dict.key_str_types`), as hdf5storage writes them: a variable-length string attribute
/// of 16 bytes per name (length and global heap ID), which fits one header message (64 KiB)
/// up to about 4090 names. hdf5storage itself cannot write a struct with more (h5py: "object
/// header message is too large"); sciio writes those without Python metadata, as MATLAB would.
const PYTHON_FIELDS_MAX: usize = 4000;

/// Writes all `vars` into a new MAT file at `path`.
///
/// ```no_run
/// use sciio_mat::{write_mat, MatValue, WriteOptions};
/// write_mat("out.mat", &[("x".to_string(), MatValue::from(2.5))], &WriteOptions::default())?;
/// # Ok::<(), sciio_core::Error>(())
/// ```
pub fn write_mat(
    path: impl AsRef<Path>,
    vars: &[(String, MatValue)],
    opts: &WriteOptions,
) -> Result<()> {
    let mut w = MatWriter::create(path, opts.clone())?;
    for (name, v) in vars {
        w.write(name, v)?;
    }
    w.finish()
}

fn check_name(name: &str) -> Result<()> {
    if name.is_empty()
        || name.contains('/')
        || name.contains('\0')
        || name == "#refs#"
        || name == "#subsystem#"
    {
        return Err(Error::invalid_input(format!(
            "{name:?} cannot be a MATLAB variable or field name"
        )));
    }
    Ok(())
}

/// `a`..`z`, `A`..`Z`, then two letters and so on (MATLAB's own `#refs#` naming style).
fn ref_name(mut n: u64) -> String {
    const LETTERS: &[u8; 52] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut out = Vec::new();
    loop {
        out.push(LETTERS[(n % 52) as usize]);
        n /= 52;
        if n == 0 {
            break;
        }
        n -= 1;
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

fn uint(size: usize) -> H5Type {
    H5Type::Int {
        size,
        signed: false,
        order: ByteOrder::Little,
    }
}

fn float(size: usize) -> H5Type {
    H5Type::Float {
        size,
        precision: 8 * size,
        order: ByteOrder::Little,
    }
}

fn le_bytes(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The little-endian file type of a numeric kind; complex is MATLAB's `real`/`imag` compound.
fn file_type(kind: ScalarKind) -> Result<H5Type> {
    let int = |size: u8, signed: bool| H5Type::Int {
        size: size as usize,
        signed,
        order: ByteOrder::Little,
    };
    Ok(match kind {
        ScalarKind::Float(n @ (4 | 8)) => float(n as usize),
        ScalarKind::Int(n @ (1 | 2 | 4 | 8)) => int(n, true),
        ScalarKind::UInt(n @ (1 | 2 | 4 | 8)) => int(n, false),
        ScalarKind::Bool => uint(1),
        ScalarKind::Complex(n @ (8 | 16)) => {
            let part = n as usize / 2;
            H5Type::Compound {
                size: n as usize,
                fields: vec![
                    Field {
                        name: "real".into(),
                        offset: 0,
                        ty: float(part),
                    },
                    Field {
                        name: "imag".into(),
                        offset: part,
                        ty: float(part),
                    },
                ],
            }
        }
        other => {
            return Err(Error::unsupported(format!(
                "numpy kind {other:?} has no MATLAB class"
            )))
        }
    })
}

/// A contiguous dataset written in one call from `bytes` (the whole dataset, C order).
fn plain_dataset(loc: &Group, name: &str, ty: H5Type, dims: Vec<u64>, bytes: &[u8]) -> Result<Obj> {
    let spec = DatasetSpec::contiguous(ty, dims);
    Ok(Obj::Dataset(loc.write_dataset(name, &spec, bytes)?))
}

/// A dataset of object references (MATLAB dims reversed).
fn ref_dataset(loc: &Group, name: &str, shape: &[usize], refs: &[u64]) -> Result<Obj> {
    let dims: Vec<u64> = at_least_2d(shape).iter().rev().map(|&d| d as u64).collect();
    plain_dataset(loc, name, H5Type::ObjectRef, dims, &le_bytes(refs))
}

/// Rows (HDF5's first dimension) wider than this are cut into chunks ([`chunk_shape`]).
const WIDE_ROW_BYTES: usize = 4 << 20;

/// Chunks are slabs along the first (slowest) HDF5 dimension, about `chunk_bytes` each, so
/// each is a contiguous run of the data; rows wider than [`WIDE_ROW_BYTES`] are cut into
/// contiguous runs of about `chunk_bytes` instead (whole inner dimensions and part of one):
/// a chunk of a whole wide row would make every reader and writer hold rows of the data's
/// size (a 3-d array's page, a long column), so memory would grow with the data.
fn chunk_shape(dims: &[u64], item: usize, chunk_bytes: usize) -> Vec<u64> {
    let row_elems: u64 = dims[1..].iter().product();
    let row_bytes = (row_elems as usize).saturating_mul(item).max(1);
    if row_bytes > WIDE_ROW_BYTES.max(chunk_bytes) {
        let mut chunk: Vec<u64> = dims.iter().map(|_| 1).collect();
        let mut inner = item.max(1) as u64;
        for k in (1..dims.len()).rev() {
            let fit = (chunk_bytes as u64 / inner).max(1);
            if fit < dims[k] {
                chunk[k] = fit;
                break;
            }
            chunk[k] = dims[k];
            inner *= dims[k];
        }
        return chunk;
    }
    let rows_per = ((chunk_bytes / row_bytes).max(1) as u64).min(dims[0]);
    let mut chunk = dims.to_vec();
    chunk[0] = rows_per.max(1);
    chunk
}

/// hdf5storage's `Python.*` attributes for `value`, so `hdf5storage.loadmat` restores numpy
/// types exactly (as its `store_python_metadata=True` writes them).
/// The string width, HDF5 dimensions and strings of a char array that is a `numpy.bytes_` value (so its
/// Python attributes say) holding a non-ASCII byte, which hdf5storage keeps as strings.
fn byte_strings(
    chars: &CharArray,
    meta: Option<&PythonMeta>,
) -> Option<(usize, Vec<u64>, Vec<u8>)> {
    let width = crate::byte_strings::bytes_width(&meta?.attrs.as_ref()?.underlying)?;
    if !crate::byte_strings::needs_strings(chars) {
        return None;
    }
    let (dims, data) = crate::byte_strings::strings_of_chars(chars, width)?;
    Some((width, dims, data))
}

fn python_metadata(obj: &Obj, value: &MatValue) -> Result<()> {
    let shape: Vec<u64> = value.matlab_shape().iter().map(|&d| d as u64).collect();
    let ndarray = |under: &str| -> Result<()> {
        obj.str_attr("Python.Type", "numpy.ndarray")?;
        obj.str_attr("Python.numpy.UnderlyingType", under)?;
        obj.str_attr("Python.numpy.Container", "ndarray")?;
        obj.u64s_attr("Python.Shape", &shape)?;
        if shape.contains(&0) {
            obj.u8_attr("Python.Empty", 1)?;
        }
        Ok(())
    };
    match value {
        MatValue::Numeric(a) | MatValue::Logical(a) => match a.dtype().as_scalar() {
            Some(s) => numeric_python_metadata(obj, s.kind, &shape),
            None => Ok(()),
        },
        // Only a 1×n row is a Python str (a 0×0 char would come back 1×0).
        MatValue::Char(c) if c.shape.len() == 2 && c.shape[0] == 1 => {
            obj.str_attr("Python.Type", "str")?;
            obj.str_attr(
                "Python.numpy.UnderlyingType",
                &format!("str{}", 32 * c.codes.len()),
            )?;
            obj.str_attr("Python.numpy.Container", "scalar")?;
            obj.u64s_attr("Python.Shape", &[])?;
            if c.codes.is_empty() {
                obj.u8_attr("Python.Empty", 1)?;
            }
            Ok(())
        }
        MatValue::Cell(_) => ndarray("object"),
        // Their names would not fit a header message: left to MATLAB_fields.
        MatValue::Struct(s) if s.fields.len() > PYTHON_FIELDS_MAX => Ok(()),
        MatValue::Struct(s) if s.elements.len() == 1 && at_least_2d(&s.shape) == [1, 1] => {
            scalar_struct_python_metadata(obj, &s.fields)
        }
        MatValue::Struct(s) if !s.elements.is_empty() && !s.fields.is_empty() => {
            ndarray(&format!("void{}", 64 * s.fields.len()))?;
            obj.vlen_attr("Python.Fields", python_fields(&s.fields))
        }
        _ => Ok(()),
    }
}

/// [`python_metadata`] of a scalar struct of `fields` (at most [`PYTHON_FIELDS_MAX`]): a dict.
fn scalar_struct_python_metadata(obj: &Obj, fields: &[String]) -> Result<()> {
    obj.str_attr("Python.Type", "dict")?;
    obj.vlen_attr("Python.Fields", python_fields(fields))?;
    obj.str_attr("Python.dict.StoredAs", "individually")?;
    obj.str_attr(
        "Python.dict.key_str_types",
        &"t".repeat(fields.len().max(1)),
    )
}

/// [`python_metadata`] of a numeric or logical array of `kind` and MATLAB shape `shape`.
fn numeric_python_metadata(obj: &Obj, kind: ScalarKind, shape: &[u64]) -> Result<()> {
    let under = match kind {
        ScalarKind::Bool => "bool".to_string(),
        ScalarKind::Float(n) => format!("float{}", 8 * n),
        ScalarKind::Complex(n) => format!("complex{}", 8 * n),
        ScalarKind::Int(n) => format!("int{}", 8 * n),
        ScalarKind::UInt(n) => format!("uint{}", 8 * n),
        _ => return Ok(()),
    };
    obj.str_attr("Python.Type", "numpy.ndarray")?;
    obj.str_attr("Python.numpy.UnderlyingType", &under)?;
    obj.str_attr("Python.numpy.Container", "ndarray")?;
    obj.u64s_attr("Python.Shape", shape)?;
    if shape.contains(&0) {
        obj.u8_attr("Python.Empty", 1)?;
    }
    Ok(())
}

/// Writes hdf5storage's `Python.*` attributes as given.
fn python_attrs(obj: &Obj, attrs: &PythonAttrs) -> Result<()> {
    obj.str_attr("Python.Type", &attrs.type_name)?;
    obj.str_attr("Python.numpy.UnderlyingType", &attrs.underlying)?;
    obj.str_attr("Python.numpy.Container", &attrs.container)?;
    obj.u64s_attr("Python.Shape", &attrs.shape)?;
    if attrs.empty() {
        obj.u8_attr("Python.Empty", 1)?;
    }
    if let Some(fields) = attrs
        .fields
        .as_ref()
        .filter(|f| f.len() <= PYTHON_FIELDS_MAX)
    {
        obj.vlen_attr("Python.Fields", python_fields(fields))?;
    }
    Ok(())
}

/// `Python.Fields`: the field names as variable-length UTF-8 strings.
fn python_fields(fields: &[String]) -> VlenData {
    let names: Vec<&str> = fields.iter().map(String::as_str).collect();
    VlenData::strings(&names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_names_are_unique_and_short() {
        assert_eq!(ref_name(0), "a");
        assert_eq!(ref_name(1), "b");
        assert_eq!(ref_name(51), "Z");
        assert_eq!(ref_name(52), "aa");
        let names: std::collections::HashSet<String> = (0..10_000).map(ref_name).collect();
        assert_eq!(names.len(), 10_000);
    }

    #[test]
    fn chunks_are_row_slabs_unless_rows_are_huge() {
        assert_eq!(chunk_shape(&[100, 1000], 8, 1 << 20), vec![100, 1000]);
        assert_eq!(chunk_shape(&[1000, 1000], 8, 1 << 20), vec![131, 1000]);
        assert_eq!(chunk_shape(&[10, 1 << 24], 8, 1 << 20), vec![1, 1 << 17]);
        assert_eq!(chunk_shape(&[3, 1 << 19], 8, 1 << 20), vec![1, 1 << 19]);
        // Rows over 4 MiB: runs of about a chunk, whole inner dimensions first.
        assert_eq!(chunk_shape(&[3, 1 << 20], 8, 1 << 20), vec![1, 1 << 17]);
        assert_eq!(
            chunk_shape(&[8, 1 << 17, 64], 8, 1 << 20),
            vec![1, 2048, 64]
        );
        assert_eq!(
            chunk_shape(&[8, 64, 1 << 17], 8, 1 << 20),
            vec![1, 1, 1 << 17]
        );
    }
}
