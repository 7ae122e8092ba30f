//! Writing v7.3 MAT files with MATLAB's conventions (those hdf5storage's `matlab_compatible`
//! mode follows): 512-byte userblock with the MAT header, earliest HDF5 file format (superblock
//! 0, v1 B-trees, which MATLAB's `load` requires), `MATLAB_class` on every value, reversed
//! dimensions, at least two of them, complex as `real`/`imag` compounds, char as UTF-16,
//! logical as `uint8`, empties as their dimensions with `MATLAB_empty`, cells and struct arrays
//! through object references into `/#refs#`.

mod h5;

use std::io::{Seek, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5t as t;
use rayon::prelude::*;
use sciio_core::{Error, NdArray, Order, Result, ScalarKind};

use crate::header;
use crate::value::{at_least_2d, CharArray, MatValue, SparseMatrix, StructArray};
use h5::{check, cstr, locked, Hid};

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
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compression_level: Some(3),
            compress_threshold: 16 * 1024,
            python_metadata: false,
            platform: format!("sciio {}", env!("CARGO_PKG_VERSION")),
            chunk_bytes: 1 << 20,
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
    file: Option<Hid>,
    path: PathBuf,
    opts: WriteOptions,
    new_file: bool,
    refs: Option<Hid>,
    next_ref: u64,
}

impl MatWriter {
    /// Creates (truncates) `path`.
    pub fn create(path: impl AsRef<Path>, opts: WriteOptions) -> Result<MatWriter> {
        let path = path.as_ref().to_path_buf();
        let c = cstr(&path.to_string_lossy())?;
        let file = locked(|| -> Result<Hid> {
            // SAFETY: property lists and the file are owned handles; the C string is valid.
            unsafe {
                let fcpl = Hid::new(
                    hdf5_sys::h5p::H5Pcreate(*hdf5_sys::h5p::H5P_CLS_FILE_CREATE),
                    || "cannot create a property list".into(),
                )?;
                check(
                    hdf5_sys::h5p::H5Pset_userblock(fcpl.id(), header::USERBLOCK as hsize_t),
                    || "cannot reserve the userblock".into(),
                )?;
                let fapl = Hid::new(
                    hdf5_sys::h5p::H5Pcreate(*hdf5_sys::h5p::H5P_CLS_FILE_ACCESS),
                    || "cannot create a property list".into(),
                )?;
                // The earliest format: superblock 0 and v1 B-trees, which MATLAB requires.
                check(
                    hdf5_sys::h5p::H5Pset_libver_bounds(
                        fapl.id(),
                        hdf5_sys::h5f::H5F_libver_t::H5F_LIBVER_EARLIEST,
                        hdf5_sys::h5f::H5F_libver_t::H5F_LIBVER_V18,
                    ),
                    || "cannot select the earliest file format".into(),
                )?;
                Hid::new(
                    hdf5_sys::h5f::H5Fcreate(
                        c.as_ptr(),
                        hdf5_sys::h5f::H5F_ACC_TRUNC,
                        fcpl.id(),
                        fapl.id(),
                    ),
                    || "cannot create the file".into(),
                )
            }
        })
        .map_err(|e| e.with_file(&path))?;
        Ok(MatWriter {
            file: Some(file),
            path,
            opts,
            new_file: true,
            refs: None,
            next_ref: 0,
        })
    }

    /// Opens an existing v7.3 MAT file to add or replace variables; the others are untouched.
    pub fn open(path: impl AsRef<Path>, opts: WriteOptions) -> Result<MatWriter> {
        let path = path.as_ref().to_path_buf();
        let mut head = vec![0u8; header::USERBLOCK + 8];
        let n = std::fs::File::open(&path)
            .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
            .map_err(|e| Error::io("cannot read the file", e).with_file(&path))?;
        head.truncate(n);
        header::check_head(&head).map_err(|e| e.with_file(&path))?;
        let c = cstr(&path.to_string_lossy())?;
        let file = locked(|| {
            // SAFETY: valid C string, default property lists.
            Hid::new(
                unsafe {
                    hdf5_sys::h5f::H5Fopen(c.as_ptr(), hdf5_sys::h5f::H5F_ACC_RDWR, H5P_DEFAULT)
                },
                || "cannot open the file for writing".into(),
            )
        })
        .map_err(|e| e.with_file(&path))?;
        Ok(MatWriter {
            file: Some(file),
            path,
            opts,
            new_file: false,
            refs: None,
            next_ref: 0,
        })
    }

    fn fid(&self) -> Result<hid_t> {
        self.file
            .as_ref()
            .map(|f| f.id())
            .ok_or_else(|| Error::invalid_input("the writer is finished"))
    }

    /// Writes variable `name`, replacing a variable of that name.
    pub fn write(&mut self, name: &str, value: &MatValue) -> Result<()> {
        check_name(name)?;
        let fid = self.fid()?;
        let path = self.path.clone();
        let mut run = || -> Result<()> {
            if h5::exists(fid, name)? {
                h5::delete(fid, name)?;
            }
            self.value(fid, "/", name, value)
        };
        run().map_err(|e| e.with_node(format!("/{name}")).with_file(&path))
    }

    /// Closes the file and, for a new file, writes the MAT header into the userblock.
    pub fn finish(mut self) -> Result<()> {
        self.close()
    }

    fn close(&mut self) -> Result<()> {
        self.refs = None;
        if let Some(f) = self.file.take() {
            let id = f.id();
            std::mem::forget(f);
            // SAFETY: closing the file id we own (forgotten above so it is closed once).
            locked(|| {
                check(unsafe { hdf5_sys::h5f::H5Fclose(id) }, || {
                    "cannot close the file".into()
                })
            })
            .map_err(|e| e.with_file(&self.path))?;
            if self.new_file {
                let head = header::build(&self.opts.platform, header::now());
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&self.path)
                    .map_err(|e| Error::io("cannot reopen the file", e).with_file(&self.path))?;
                f.seek(SeekFrom::Start(0))
                    .and_then(|_| f.write_all(&head))
                    .map_err(|e| {
                        Error::io("cannot write the MAT header", e).with_file(&self.path)
                    })?;
            }
        }
        Ok(())
    }

    /// `/#refs#`, created with MATLAB's canonical empty `a` on first use.
    fn refs_group(&mut self) -> Result<hid_t> {
        if let Some(g) = &self.refs {
            return Ok(g.id());
        }
        let fid = self.fid()?;
        let g = if h5::exists(fid, "#refs#")? {
            h5::open_group(fid, "#refs#")?
        } else {
            h5::create_group(fid, "#refs#")?
        };
        if !h5::exists(g.id(), "a")? {
            let d = plain_dataset(
                g.id(),
                "a",
                *t::H5T_STD_U64LE,
                &[2],
                [0u64, 0].as_ptr().cast(),
            )?;
            h5::put_str_attr(d.id(), "MATLAB_class", "canonical empty")?;
            h5::put_num_attr(d.id(), "MATLAB_empty", *t::H5T_STD_U8LE, &[1])?;
        }
        let id = g.id();
        self.refs = Some(g);
        Ok(id)
    }

    /// Writes `value` into `/#refs#` under a fresh name and returns a reference to it.
    fn write_ref(&mut self, value: &MatValue) -> Result<u64> {
        let refs = self.refs_group()?;
        // In a file this writer created, its own counter is the only source of names; in an
        // existing file, names already taken are skipped.
        let name = loop {
            self.next_ref += 1;
            let name = ref_name(self.next_ref);
            if self.new_file || !h5::exists(refs, &name)? {
                break name;
            }
        };
        self.value(refs, "/#refs#", &name, value)?;
        h5::object_ref(refs, &name)
    }

    /// Writes `value` as `name` in group `loc` (whose path is `loc_path`).
    fn value(&mut self, loc: hid_t, loc_path: &str, name: &str, value: &MatValue) -> Result<()> {
        let obj = match value {
            MatValue::Numeric(a) | MatValue::Logical(a) => self.numeric(loc, name, a)?,
            MatValue::Char(c) => self.char(loc, name, c)?,
            MatValue::Cell(c) => {
                if c.items.is_empty() {
                    self.empty(loc, name, "cell", &c.shape)?
                } else {
                    let refs: Vec<u64> = c
                        .items
                        .iter()
                        .map(|v| self.write_ref(v))
                        .collect::<Result<_>>()?;
                    let d = ref_dataset(loc, name, &c.shape, &refs)?;
                    h5::put_str_attr(d.id(), "MATLAB_class", "cell")?;
                    d
                }
            }
            MatValue::Struct(s) => self.structure(loc, loc_path, name, s)?,
            MatValue::Sparse(s) => self.sparse(loc, loc_path, name, s)?,
            MatValue::Opaque(o) => {
                return Err(Error::unsupported(format!(
                    "writing MATLAB objects ({}) is not supported; only MATLAB can create them",
                    o.class
                )))
            }
        };
        if loc_path != "/" {
            h5::put_str_attr(obj.id(), "H5PATH", loc_path)?;
        }
        if self.opts.python_metadata {
            python_metadata(obj.id(), value)?;
        }
        Ok(())
    }

    fn numeric(&mut self, loc: hid_t, name: &str, a: &NdArray) -> Result<Hid> {
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
                h5::put_num_attr(
                    obj.id(),
                    "MATLAB_int_decode",
                    *t::H5T_STD_I32LE,
                    &1i32.to_le_bytes(),
                )?;
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
        let (ty, _keep) = file_type(kind)?;
        let dims: Vec<u64> = shape.iter().rev().map(|&d| d as u64).collect();
        let d = self.data_dataset(loc, name, ty, kind.itemsize(), &dims, bytes)?;
        h5::put_str_attr(d.id(), "MATLAB_class", class.name())?;
        if kind == ScalarKind::Bool {
            h5::put_num_attr(
                d.id(),
                "MATLAB_int_decode",
                *t::H5T_STD_I32LE,
                &1i32.to_le_bytes(),
            )?;
        }
        Ok(d)
    }

    fn char(&mut self, loc: hid_t, name: &str, c: &CharArray) -> Result<Hid> {
        c.check()?;
        let shape = at_least_2d(&c.shape);
        if c.codes.is_empty() {
            let d = self.empty(loc, name, "char", &shape)?;
            h5::put_num_attr(
                d.id(),
                "MATLAB_int_decode",
                *t::H5T_STD_I32LE,
                &2i32.to_le_bytes(),
            )?;
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
            (
                self.data_dataset(loc, name, *t::H5T_STD_U16LE, 2, &dims, &units)?,
                2i32,
            )
        } else {
            let units: Vec<u8> = c.codes.iter().flat_map(|&u| u.to_le_bytes()).collect();
            (
                self.data_dataset(loc, name, *t::H5T_STD_U32LE, 4, &dims, &units)?,
                4i32,
            )
        };
        h5::put_str_attr(d.id(), "MATLAB_class", "char")?;
        h5::put_num_attr(
            d.id(),
            "MATLAB_int_decode",
            *t::H5T_STD_I32LE,
            &decode.to_le_bytes(),
        )?;
        Ok(d)
    }

    /// An empty value: its MATLAB dimensions as `uint64` data, `MATLAB_empty = 1`.
    fn empty(&mut self, loc: hid_t, name: &str, class: &str, shape: &[usize]) -> Result<Hid> {
        let dims: Vec<u64> = at_least_2d(shape).iter().map(|&d| d as u64).collect();
        let d = plain_dataset(
            loc,
            name,
            *t::H5T_STD_U64LE,
            &[dims.len() as u64],
            dims.as_ptr().cast(),
        )?;
        h5::put_str_attr(d.id(), "MATLAB_class", class)?;
        h5::put_num_attr(d.id(), "MATLAB_empty", *t::H5T_STD_U8LE, &[1])?;
        Ok(d)
    }

    fn structure(
        &mut self,
        loc: hid_t,
        loc_path: &str,
        name: &str,
        s: &StructArray,
    ) -> Result<Hid> {
        for f in &s.fields {
            check_name(f)?;
        }
        let n = s.shape.iter().product::<usize>();
        if n != s.elements.len() || s.elements.iter().any(|e| e.len() != s.fields.len()) {
            return Err(Error::invalid_input(
                "struct array elements do not match its shape and fields",
            ));
        }
        if n == 0 {
            let d = self.empty(loc, name, "struct", &s.shape)?;
            if !s.fields.is_empty() {
                h5::put_fields_attr(d.id(), &s.fields)?;
            }
            return Ok(d);
        }
        let g = h5::create_group(loc, name)?;
        let path = crate::join(loc_path, name);
        h5::put_str_attr(g.id(), "MATLAB_class", "struct")?;
        if !s.fields.is_empty() {
            h5::put_fields_attr(g.id(), &s.fields)?;
        }
        if n == 1 && at_least_2d(&s.shape) == [1, 1] {
            for (f, v) in s.fields.iter().zip(&s.elements[0]) {
                self.value(g.id(), &path, f, v)?;
            }
        } else {
            for (j, f) in s.fields.iter().enumerate() {
                let refs: Vec<u64> = s
                    .elements
                    .iter()
                    .map(|e| self.write_ref(&e[j]))
                    .collect::<Result<_>>()?;
                let d = ref_dataset(g.id(), f, &s.shape, &refs)?;
                h5::put_str_attr(d.id(), "H5PATH", &path)?;
            }
        }
        Ok(g)
    }

    fn sparse(&mut self, loc: hid_t, loc_path: &str, name: &str, s: &SparseMatrix) -> Result<Hid> {
        s.check()?;
        let g = h5::create_group(loc, name)?;
        let path = crate::join(loc_path, name);
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
        h5::put_str_attr(g.id(), "MATLAB_class", class)?;
        h5::put_num_attr(
            g.id(),
            "MATLAB_sparse",
            *t::H5T_STD_U64LE,
            &(s.nrows as u64).to_le_bytes(),
        )?;
        if kind == ScalarKind::Bool {
            h5::put_num_attr(
                g.id(),
                "MATLAB_int_decode",
                *t::H5T_STD_I32LE,
                &1i32.to_le_bytes(),
            )?;
        }
        let jc_bytes: Vec<u8> = s.jc.iter().flat_map(|v| v.to_le_bytes()).collect();
        let jc = self.data_dataset(
            g.id(),
            "jc",
            *t::H5T_STD_U64LE,
            8,
            &[s.jc.len() as u64],
            &jc_bytes,
        )?;
        h5::put_str_attr(jc.id(), "H5PATH", &path)?;
        if !s.ir.is_empty() {
            let ir_bytes: Vec<u8> = s.ir.iter().flat_map(|v| v.to_le_bytes()).collect();
            let ir = self.data_dataset(
                g.id(),
                "ir",
                *t::H5T_STD_U64LE,
                8,
                &[s.ir.len() as u64],
                &ir_bytes,
            )?;
            h5::put_str_attr(ir.id(), "H5PATH", &path)?;
            let data = s.data.to_native();
            let (ty, _keep) = file_type(kind)?;
            let d = self.data_dataset(
                g.id(),
                "data",
                ty,
                kind.itemsize(),
                &[s.ir.len() as u64],
                data.as_bytes(),
            )?;
            h5::put_str_attr(d.id(), "H5PATH", &path)?;
        }
        Ok(g)
    }

    /// A dataset holding `bytes` (C order over `dims`), compressed when large enough.
    fn data_dataset(
        &mut self,
        loc: hid_t,
        name: &str,
        ty: hid_t,
        item: usize,
        dims: &[u64],
        bytes: &[u8],
    ) -> Result<Hid> {
        match self.opts.compression_level {
            Some(level) if bytes.len() >= self.opts.compress_threshold && !dims.is_empty() => {
                compressed_dataset(
                    loc,
                    name,
                    ty,
                    item,
                    dims,
                    bytes,
                    level,
                    self.opts.chunk_bytes,
                )
            }
            _ => plain_dataset(loc, name, ty, dims, bytes.as_ptr().cast()),
        }
    }
}

impl Drop for MatWriter {
    fn drop(&mut self) {
        // Errors here cannot be reported; `finish` reports them.
        let _ = self.close();
    }
}

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

/// The little-endian file type of a numeric kind; the handle keeps a compound type alive.
fn file_type(kind: ScalarKind) -> Result<(hid_t, Option<Hid>)> {
    {
        Ok(match kind {
            ScalarKind::Float(8) => (*t::H5T_IEEE_F64LE, None),
            ScalarKind::Float(4) => (*t::H5T_IEEE_F32LE, None),
            ScalarKind::Int(1) => (*t::H5T_STD_I8LE, None),
            ScalarKind::Int(2) => (*t::H5T_STD_I16LE, None),
            ScalarKind::Int(4) => (*t::H5T_STD_I32LE, None),
            ScalarKind::Int(8) => (*t::H5T_STD_I64LE, None),
            ScalarKind::UInt(1) | ScalarKind::Bool => (*t::H5T_STD_U8LE, None),
            ScalarKind::UInt(2) => (*t::H5T_STD_U16LE, None),
            ScalarKind::UInt(4) => (*t::H5T_STD_U32LE, None),
            ScalarKind::UInt(8) => (*t::H5T_STD_U64LE, None),
            ScalarKind::Complex(16) => {
                let c = locked(|| h5::complex_type(*t::H5T_IEEE_F64LE, 8))?;
                (c.id(), Some(c))
            }
            ScalarKind::Complex(8) => {
                let c = locked(|| h5::complex_type(*t::H5T_IEEE_F32LE, 4))?;
                (c.id(), Some(c))
            }
            other => {
                return Err(Error::unsupported(format!(
                    "numpy kind {other:?} has no MATLAB class"
                )))
            }
        })
    }
}

/// A contiguous dataset written in one call from `data` (the whole dataset, memory = file type).
fn plain_dataset(
    loc: hid_t,
    name: &str,
    ty: hid_t,
    dims: &[u64],
    data: *const std::ffi::c_void,
) -> Result<Hid> {
    let c = cstr(name)?;
    locked(|| {
        let sp = h5::space(dims)?;
        // SAFETY: valid ids; `data` covers the dataspace in `ty`'s layout (caller's contract).
        unsafe {
            let d = Hid::new(
                hdf5_sys::h5d::H5Dcreate2(
                    loc,
                    c.as_ptr(),
                    ty,
                    sp.id(),
                    H5P_DEFAULT,
                    H5P_DEFAULT,
                    H5P_DEFAULT,
                ),
                || format!("cannot create dataset {name:?}"),
            )?;
            if dims.iter().all(|&d| d > 0) {
                check(
                    hdf5_sys::h5d::H5Dwrite(d.id(), ty, sp.id(), sp.id(), H5P_DEFAULT, data),
                    || format!("cannot write {name:?}"),
                )?;
            }
            Ok(d)
        }
    })
}

/// A dataset of object references (MATLAB dims reversed).
fn ref_dataset(loc: hid_t, name: &str, shape: &[usize], refs: &[u64]) -> Result<Hid> {
    let dims: Vec<u64> = at_least_2d(shape).iter().rev().map(|&d| d as u64).collect();
    plain_dataset(loc, name, *t::H5T_STD_REF_OBJ, &dims, refs.as_ptr().cast())
}

/// A chunked dataset with shuffle + deflate, chunks compressed on all cores and stored with
/// direct chunk writes. Chunks are slabs along the first (slowest) HDF5 dimension, so each is
/// a contiguous run of `bytes`; the last one is zero-padded to a full chunk as libhdf5 does.
#[allow(clippy::too_many_arguments)]
fn compressed_dataset(
    loc: hid_t,
    name: &str,
    ty: hid_t,
    item: usize,
    dims: &[u64],
    bytes: &[u8],
    level: u32,
    chunk_bytes: usize,
) -> Result<Hid> {
    let row_elems: u64 = dims[1..].iter().product();
    let row_bytes = (row_elems as usize).saturating_mul(item).max(1);
    let rows_per = ((chunk_bytes / row_bytes).max(1) as u64).min(dims[0]);
    let mut chunk: Vec<u64> = dims.to_vec();
    chunk[0] = rows_per;
    // Rows too wide for one chunk would make chunks beyond libhdf5's 4 GiB limit: let libhdf5
    // chunk and filter those itself (single-threaded, rare in practice).
    let direct = row_bytes <= 64 << 20;
    if !direct {
        chunk = dims.iter().map(|_| 1).collect();
        let last = dims.len() - 1;
        chunk[last] = ((chunk_bytes / item).max(1) as u64).min(dims[last]);
    }
    let c = cstr(name)?;
    let d = locked(|| -> Result<Hid> {
        let sp = h5::space(dims)?;
        // SAFETY: owned property list and ids.
        unsafe {
            let dcpl = Hid::new(
                hdf5_sys::h5p::H5Pcreate(*hdf5_sys::h5p::H5P_CLS_DATASET_CREATE),
                || "cannot create a property list".into(),
            )?;
            let ch: Vec<hsize_t> = chunk.clone();
            check(
                hdf5_sys::h5p::H5Pset_chunk(dcpl.id(), ch.len() as i32, ch.as_ptr()),
                || "cannot set the chunk shape".into(),
            )?;
            check(hdf5_sys::h5p::H5Pset_shuffle(dcpl.id()), || {
                "cannot add the shuffle filter".into()
            })?;
            check(hdf5_sys::h5p::H5Pset_deflate(dcpl.id(), level), || {
                "cannot add the deflate filter".into()
            })?;
            Hid::new(
                hdf5_sys::h5d::H5Dcreate2(
                    loc,
                    c.as_ptr(),
                    ty,
                    sp.id(),
                    H5P_DEFAULT,
                    dcpl.id(),
                    H5P_DEFAULT,
                ),
                || format!("cannot create dataset {name:?}"),
            )
        }
    })?;
    if !direct {
        // SAFETY: `bytes` holds the whole dataset in `ty`'s layout.
        locked(|| {
            check(
                unsafe {
                    hdf5_sys::h5d::H5Dwrite(d.id(), ty, 0, 0, H5P_DEFAULT, bytes.as_ptr().cast())
                },
                || format!("cannot write {name:?}"),
            )
        })?;
        return Ok(d);
    }
    let chunk_len = rows_per as usize * row_bytes;
    let n_chunks = dims[0].div_ceil(rows_per) as usize;
    // Batches bound the compressed bytes held at once.
    let batch = (rayon::current_num_threads() * 4).max(4);
    for first in (0..n_chunks).step_by(batch) {
        let last = (first + batch).min(n_chunks);
        let compressed: Vec<Result<Vec<u8>>> = (first..last)
            .into_par_iter()
            .map(|i| {
                let start = i * chunk_len;
                let end = (start + chunk_len).min(bytes.len());
                encode_chunk(&bytes[start..end], chunk_len, item, level)
            })
            .collect();
        locked(|| -> Result<()> {
            for (k, z) in compressed.into_iter().enumerate() {
                let z = z?;
                let mut offset: Vec<hsize_t> = vec![0; dims.len()];
                offset[0] = ((first + k) as u64) * rows_per;
                // SAFETY: `z` is one filtered chunk; offsets are chunk-aligned in the dataspace.
                check(
                    unsafe {
                        hdf5_sys::h5d::H5Dwrite_chunk(
                            d.id(),
                            H5P_DEFAULT,
                            0,
                            offset.as_ptr(),
                            z.len(),
                            z.as_ptr().cast(),
                        )
                    },
                    || format!("cannot write a chunk of {name:?}"),
                )?;
            }
            Ok(())
        })?;
    }
    Ok(d)
}

/// Shuffle (bytes of equal significance together) then zlib-deflate one chunk, padded to
/// `full` bytes.
fn encode_chunk(data: &[u8], full: usize, item: usize, level: u32) -> Result<Vec<u8>> {
    let mut padded;
    let src = if data.len() < full {
        padded = data.to_vec();
        padded.resize(full, 0);
        &padded[..]
    } else {
        data
    };
    let shuffled;
    let input = if item > 1 {
        let n = full / item;
        let mut out = vec![0u8; full];
        for (j, plane) in out.chunks_exact_mut(n).enumerate().take(item) {
            for (i, b) in plane.iter_mut().enumerate() {
                *b = src[i * item + j];
            }
        }
        shuffled = out;
        &shuffled[..]
    } else {
        src
    };
    let mut enc = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(full / 2),
        flate2::Compression::new(level),
    );
    enc.write_all(input)
        .map_err(|e| Error::io("deflate failed", e))?;
    let out = enc.finish().map_err(|e| Error::io("deflate failed", e))?;
    Ok(out)
}

/// hdf5storage's `Python.*` attributes for `value`, so `hdf5storage.loadmat` restores numpy
/// types exactly (as its `store_python_metadata=True` writes them).
fn python_metadata(obj: hid_t, value: &MatValue) -> Result<()> {
    let shape: Vec<u64> = value.matlab_shape().iter().map(|&d| d as u64).collect();
    let ndarray = |under: &str| -> Result<()> {
        h5::put_str_attr(obj, "Python.Type", "numpy.ndarray")?;
        h5::put_str_attr(obj, "Python.numpy.UnderlyingType", under)?;
        h5::put_str_attr(obj, "Python.numpy.Container", "ndarray")?;
        h5::put_u64s_attr(obj, "Python.Shape", &shape)?;
        if shape.contains(&0) {
            h5::put_num_attr(obj, "Python.Empty", *t::H5T_STD_U8LE, &[1])?;
        }
        Ok(())
    };
    match value {
        MatValue::Numeric(a) | MatValue::Logical(a) => {
            let under = match a.dtype().as_scalar().map(|s| s.kind) {
                Some(ScalarKind::Bool) => "bool".to_string(),
                Some(ScalarKind::Float(n)) => format!("float{}", 8 * n),
                Some(ScalarKind::Complex(n)) => format!("complex{}", 8 * n),
                Some(ScalarKind::Int(n)) => format!("int{}", 8 * n),
                Some(ScalarKind::UInt(n)) => format!("uint{}", 8 * n),
                _ => return Ok(()),
            };
            ndarray(&under)
        }
        // Only a 1×n row is a Python str (a 0×0 char would come back 1×0).
        MatValue::Char(c) if c.shape.len() == 2 && c.shape[0] == 1 => {
            h5::put_str_attr(obj, "Python.Type", "str")?;
            h5::put_str_attr(
                obj,
                "Python.numpy.UnderlyingType",
                &format!("str{}", 32 * c.codes.len()),
            )?;
            h5::put_str_attr(obj, "Python.numpy.Container", "scalar")?;
            h5::put_u64s_attr(obj, "Python.Shape", &[])?;
            if c.codes.is_empty() {
                h5::put_num_attr(obj, "Python.Empty", *t::H5T_STD_U8LE, &[1])?;
            }
            Ok(())
        }
        MatValue::Cell(_) => ndarray("object"),
        MatValue::Struct(s) if s.elements.len() == 1 && at_least_2d(&s.shape) == [1, 1] => {
            h5::put_str_attr(obj, "Python.Type", "dict")?;
            h5::put_vlen_strs_attr(obj, "Python.Fields", &s.fields)?;
            h5::put_str_attr(obj, "Python.dict.StoredAs", "individually")?;
            h5::put_str_attr(
                obj,
                "Python.dict.key_str_types",
                &"t".repeat(s.fields.len().max(1)),
            )
        }
        MatValue::Struct(s) if !s.elements.is_empty() && !s.fields.is_empty() => {
            ndarray(&format!("void{}", 64 * s.fields.len()))?;
            h5::put_vlen_strs_attr(obj, "Python.Fields", &s.fields)
        }
        _ => Ok(()),
    }
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
    fn shuffle_then_deflate_round_trips() {
        let data: Vec<u8> = (0..1000u32).flat_map(|v| v.to_le_bytes()).collect();
        let z = encode_chunk(&data[..3000], 4000, 4, 3).unwrap();
        let mut dec = flate2::read::ZlibDecoder::new(&z[..]);
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut dec, &mut out).unwrap();
        assert_eq!(out.len(), 4000);
        // Unshuffle and compare with the padded input.
        let n = 1000;
        for i in 0..750 {
            for j in 0..4 {
                assert_eq!(out[j * n + i], data[i * 4 + j]);
            }
        }
    }
}
