//! MATLAB `.mat` files (v7.3, v7/v6/v5 and v4) in the neutral tree, through `sciio-mat`.
//!
//! Every variable is a node carrying its MATLAB class and MATLAB size
//! ([`Node::native`](crate::Node)). Numeric, logical and char values are array leaves holding
//! what `hdf5storage.loadmat` returns ([`MatValue::to_numpy`]: same shape, row-major; char
//! rows as a `U` scalar, char matrices as a `U` column). Cells and structs are groups, so
//! their contents convert leaf by leaf: a scalar struct's fields are `var/field`, a struct
//! array's elements `var/0/field`..., a cell's items `var/0`, `var/1`... in MATLAB's
//! (column-major) linear order. Sparse matrices, function handles and objects have no numpy
//! array and are [`NodeKind::Opaque`]. `#refs#` and `#subsystem#` are MATLAB's bookkeeping and
//! never shown.
//!
//! Writing ([`MatOut`]) turns each numpy array into a MATLAB numeric or logical variable
//! (`MatValue::numeric`, the array's shape taken as MATLAB's, at least 2-d like
//! `hdf5storage.savemat` makes it) and a `U` scalar into a char row.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use sciio_core::{DType, Error, Limits, NdArray, Order, Result, ScalarKind};
use sciio_mat::{
    MatClass, MatFile, MatValue, MatVersion, MatWriter, PythonMeta, SparseKind, SparseMatrix,
    StructArray, VarInfo, WriteOptions,
};

use crate::compress::CompressSpec;
use crate::node::{ArrayInfo, NativeInfo, Node, NodeKind};
use crate::plan::LeftOut;

/// An opened MAT file, with the last variable read kept so that converting the leaves of one
/// cell or struct reads it once.
#[derive(Debug)]
pub(crate) struct Mat {
    file: MatFile,
    cached: Option<(String, MatValue)>,
}

impl Mat {
    pub(crate) fn open(path: &Path, limits: &Limits) -> Result<(Node, Mat)> {
        let file = MatFile::open_with_limits(path, *limits).map_err(|e| e.with_file(path))?;
        let mut children = Vec::new();
        // The last value read to describe it stays for the first leaves converted (a file
        // of one large cell or struct is then decoded once).
        let mut cached = None;
        for info in file.variables().map_err(|e| e.with_file(path))? {
            let node = match leaf_without_data(&info) {
                Some(node) => node,
                None => {
                    let value = file
                        .read(&info.name)
                        .map_err(|e| e.with_file(path).with_node(format!("/{}", info.name)))?;
                    let node = value_node(&info.name, &value);
                    cached = Some((info.name.clone(), value));
                    node
                }
            };
            children.push(node);
        }
        let root = Node::new("", NodeKind::Group(children));
        Ok((root, Mat { file, cached }))
    }

    /// `MAT-file version V: header text` (or `(no header text)` for v4 and plain HDF5).
    pub(crate) fn description(&self) -> String {
        format!(
            "MAT-file version {}: {}",
            self.file.version(),
            self.file.header_text().unwrap_or("(no header text)")
        )
    }

    /// The numpy array of the leaf at `path` (`/var`, `/var/field`, `/cell/3`...).
    pub(crate) fn read_array(&mut self, path: &str) -> Result<NdArray> {
        match self.leaf(path)? {
            At::Value(v) => v.to_numpy(),
            At::SparsePart(s, part) => sparse_part(s, part),
            At::Element(..) => Err(Error::mismatch("a struct element is a group, not an array")),
        }
    }

    /// The value (or sparse matrix part) of the leaf at `path`, its variable read once (and
    /// kept for its siblings).
    fn leaf(&mut self, path: &str) -> Result<At<'_>> {
        let mut parts = path.trim_start_matches('/').split('/');
        let var = parts.next().unwrap_or_default();
        if self.cached.as_ref().map(|(n, _)| n.as_str()) != Some(var) {
            self.cached = None;
            let value = self.file.read(var)?;
            self.cached = Some((var.to_string(), value));
        }
        let Some((_, value)) = &self.cached else {
            return Err(Error::not_found(format!("no variable '{var}'")));
        };
        let mut at = At::Value(value);
        for part in parts {
            at = step(at, part)
                .ok_or_else(|| Error::not_found(format!("no element '{part}' in the variable")))?;
        }
        match at {
            At::Element(..) => Err(Error::mismatch("a struct element is a group, not an array")),
            leaf => Ok(leaf),
        }
    }

    /// Writes the leaf's numpy bytes (native, in the order the tree announced: MATLAB's own
    /// column-major data for matrices, as `np.savez` writes the arrays `scipy.io.loadmat`
    /// returns) after checking they are what the tree announced.
    pub(crate) fn copy_array_data(
        &mut self,
        path: &str,
        info: &ArrayInfo,
        out: &mut dyn Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        // A large plain v7 matrix (a variable, not read yet): streamed as it inflates, the
        // bytes the array read below would hold (column-major as stored).
        let var = path.trim_start_matches('/');
        let unread = self.cached.as_ref().map(|(n, _)| n.as_str()) != Some(var);
        if unread
            && !var.contains('/')
            && info.dtype.is_native()
            && (info.order == Order::F || memory_order(&info.shape) == Order::C)
            && self
                .file
                .copy_plain_data(var, &info.dtype, &info.shape, out, progress)?
        {
            return Ok(());
        }
        let converted;
        let array = match self.leaf(path)? {
            // Numeric data as stored: no reorder, and no copy when already native.
            At::Value(MatValue::Numeric(a) | MatValue::Logical(a))
                if (a.order() == info.order || memory_order(a.shape()) == Order::C)
                    && a.dtype().is_native() =>
            {
                a
            }
            At::Value(MatValue::Numeric(a) | MatValue::Logical(a)) => {
                converted = a.to_native().to_order(info.order);
                &converted
            }
            At::SparsePart(s, part) => {
                converted = sparse_part(s, part)?;
                &converted
            }
            At::Element(..) => {
                return Err(Error::mismatch("a struct element is a group, not an array"))
            }
            At::Value(other) => {
                let array = other.to_numpy()?;
                converted = match array.order() == info.order {
                    true => array,
                    false => array.to_order(info.order),
                };
                &converted
            }
        };
        if array.dtype() != &info.dtype || array.shape() != info.shape.as_slice() {
            return Err(Error::format(format!(
                "the variable holds {} {:?}, its attributes announced {} {:?}",
                array.dtype(),
                array.shape(),
                info.dtype,
                info.shape
            )));
        }
        out.write_all(array.as_bytes())
            .map_err(|e| Error::io("cannot write", e))?;
        progress(array.as_bytes().len() as u64);
        Ok(())
    }
}

/// A numeric or logical (non-sparse) variable's node from its attributes alone; `None` when
/// the value must be read to describe it.
fn leaf_without_data(info: &VarInfo) -> Option<Node> {
    if info.sparse {
        return None;
    }
    let kind = match (&info.class, info.class.numeric_kind()) {
        (MatClass::Logical, _) => ScalarKind::Bool,
        (_, Some(ScalarKind::Float(n))) if info.complex => ScalarKind::Complex(2 * n),
        (_, Some(kind)) if !info.complex => kind,
        _ => return None,
    };
    let array = ArrayInfo {
        dtype: DType::scalar(kind),
        shape: info.shape.clone(),
        order: memory_order(&info.shape),
    };
    Some(native(
        Node::new(info.name.as_str(), NodeKind::Array(array)),
        &info.class,
        &info.shape,
    ))
}

/// The memory order of a numeric or logical leaf: MATLAB's column-major order, which numpy
/// calls Fortran order, for arrays with more than one dimension over 1; C order for the
/// others (the same bytes either way, and what numpy's header says for them).
fn memory_order(shape: &[usize]) -> Order {
    match shape.iter().filter(|&&d| d > 1).count() > 1 {
        true => Order::F,
        false => Order::C,
    }
}

fn native(mut node: Node, class: &MatClass, shape: &[usize]) -> Node {
    node.native = Some(NativeInfo {
        class: class.name().to_string(),
        shape: shape.to_vec(),
    });
    node
}

/// The node of a value read from the file (children for cells and structs).
fn value_node(name: &str, value: &MatValue) -> Node {
    let kind = match value {
        MatValue::Numeric(a) | MatValue::Logical(a) => NodeKind::Array(ArrayInfo {
            dtype: a.dtype().to_native(),
            shape: a.shape().to_vec(),
            order: memory_order(a.shape()),
        }),
        MatValue::Char(_) => match value.to_numpy() {
            Ok(a) => NodeKind::Array(ArrayInfo::of(&a)),
            Err(e) => opaque("char", e.message()),
        },
        MatValue::Cell(c) => NodeKind::Group(
            c.items
                .iter()
                .enumerate()
                .map(|(i, v)| value_node(&i.to_string(), v))
                .collect(),
        ),
        MatValue::Struct(s) if s.elements.len() == 1 => NodeKind::Group(fields(s, 0)),
        MatValue::Struct(s) => NodeKind::Group(
            (0..s.elements.len())
                .map(|i| {
                    let element = Node::new(i.to_string(), NodeKind::Group(fields(s, i)));
                    native(element, &MatClass::Struct, &[1, 1])
                })
                .collect(),
        ),
        // scipy.sparse.save_npz's members: `SRC:var` → x.npz is a file load_npz reads.
        MatValue::Sparse(s) => {
            let parts = SPARSE_PARTS
                .iter()
                .map(|part| Node::new(*part, NodeKind::Array(sparse_part_info(s, part))))
                .collect();
            let node = Node::new(name, NodeKind::Group(parts));
            return native(node, &sparse_class(s), &value.matlab_shape());
        }
        MatValue::Opaque(o) => opaque(&o.class, &o.note),
        // string/datetime/duration/categorical have a numpy array; other classes do not.
        MatValue::Object(o) => match o.to_numpy() {
            Ok(a) => NodeKind::Array(ArrayInfo::of(&a)),
            Err(e) => opaque(&o.class, e.message()),
        },
    };
    native(Node::new(name, kind), &value.class(), &value.matlab_shape())
}

/// The members `scipy.sparse.save_npz` writes for a CSC matrix, in its order: a MATLAB
/// sparse variable is a group of these (`S/indices`, `S/indptr`, `S/format`, `S/shape`,
/// `S/data`), so converting it alone to `.npz` gives a file `scipy.sparse.load_npz` reads.
pub(crate) const SPARSE_PARTS: [&str; 5] = ["indices", "indptr", "format", "shape", "data"];

/// `sparse double`, `sparse complex double`, `sparse logical` (what `sciio ls` shows).
fn sparse_class(s: &SparseMatrix) -> MatClass {
    MatClass::Object(match s.kind() {
        SparseKind::Double => "sparse double".to_string(),
        SparseKind::Complex => "sparse complex double".to_string(),
        SparseKind::Logical => "sparse logical".to_string(),
    })
}

/// scipy's index dtype: int32 while every index and offset fits, int64 beyond.
fn sparse_index_kind(s: &SparseMatrix) -> ScalarKind {
    let most = s.nrows.max(s.ncols).max(s.ir.len()) as u64;
    if most <= i32::MAX as u64 {
        ScalarKind::Int(4)
    } else {
        ScalarKind::Int(8)
    }
}

fn sparse_part_info(s: &SparseMatrix, part: &str) -> ArrayInfo {
    let (kind, shape) = match part {
        "indices" => (sparse_index_kind(s), vec![s.ir.len()]),
        "indptr" => (sparse_index_kind(s), vec![s.jc.len()]),
        "format" => (ScalarKind::Bytes(3), vec![]),
        "shape" => (ScalarKind::Int(8), vec![2]),
        _ => {
            return ArrayInfo {
                dtype: s.data.dtype().to_native(),
                shape: vec![s.data.len()],
                order: Order::C,
            }
        }
    };
    ArrayInfo {
        dtype: DType::scalar(kind),
        shape,
        order: Order::C,
    }
}

/// One member of [`SPARSE_PARTS`] as the array `save_npz` stores.
fn sparse_part(s: &SparseMatrix, part: &str) -> Result<NdArray> {
    let info = sparse_part_info(s, part);
    let ints = |values: &[u64]| -> Result<NdArray> {
        let bytes: Vec<u8> = match info.dtype.itemsize() {
            4 => values
                .iter()
                .flat_map(|&v| (v as i32).to_ne_bytes())
                .collect(),
            _ => values
                .iter()
                .flat_map(|&v| (v as i64).to_ne_bytes())
                .collect(),
        };
        NdArray::from_byte_vec(info.dtype.clone(), &info.shape, Order::C, bytes)
    };
    match part {
        "indices" => ints(&s.ir),
        "indptr" => ints(&s.jc),
        "format" => NdArray::from_bytes(info.dtype.clone(), &[], Order::C, b"csc"),
        "shape" => ints(&[s.nrows as u64, s.ncols as u64]),
        "data" => {
            let data = s.data.to_native().to_order(Order::C);
            data.reshape(&[s.data.len()])
        }
        other => Err(Error::not_found(format!(
            "a sparse matrix has no member '{other}' (it has {})",
            SPARSE_PARTS.join(", ")
        ))),
    }
}

fn fields(s: &StructArray, index: usize) -> Vec<Node> {
    s.fields
        .iter()
        .filter_map(|f| s.field(index, f).map(|v| value_node(f, v)))
        .collect()
}

fn opaque(kind: &str, reason: &str) -> NodeKind {
    NodeKind::Opaque {
        kind: kind.to_string(),
        reason: reason.to_string(),
    }
}

/// A place inside a variable: a value, one element of a struct array, or one
/// `save_npz` member of a sparse matrix.
enum At<'a> {
    Value(&'a MatValue),
    Element(&'a StructArray, usize),
    SparsePart(&'a SparseMatrix, &'a str),
}

/// One path step down: a cell item or struct array element by index, a field by name.
fn step<'a>(at: At<'a>, name: &str) -> Option<At<'a>> {
    match at {
        At::Value(MatValue::Cell(c)) => c.items.get(name.parse::<usize>().ok()?).map(At::Value),
        At::Value(MatValue::Struct(s)) if s.elements.len() == 1 => s.field(0, name).map(At::Value),
        At::Value(MatValue::Struct(s)) => {
            let index = name.parse::<usize>().ok()?;
            (index < s.elements.len()).then_some(At::Element(s, index))
        }
        At::Element(s, index) => s.field(index, name).map(At::Value),
        At::Value(MatValue::Sparse(s)) => SPARSE_PARTS
            .iter()
            .find(|p| **p == name)
            .map(|p| At::SparsePart(s, p)),
        At::Value(_) | At::SparsePart(..) => None,
    }
}

/// A MAT file being written: into a temporary file in the destination's folder, renamed into
/// place by [`MatOut::finish`] (dropped unfinished, the temporary file is removed).
pub(crate) struct MatOut {
    writer: MatWriter,
    temp: tempfile::TempPath,
    _registered: sciio_temp::Registration,
    /// Top-level variables written so far.
    written: HashSet<String>,
    /// Values named by a path (`a/b`), gathered into structs at [`MatOut::finish`].
    nested: Folder,
}

impl std::fmt::Debug for MatOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatOut").field("temp", &self.temp).finish()
    }
}

/// `--compress` for MAT files: `deflate[:N]` (v7.3: with shuffle, as MATLAB compresses; v7:
/// the zlib level of each variable) or `none`; otherwise MATLAB's default for v7.3 (deflate 3)
/// and level 3 for v7 too: MATLAB and `scipy.io.savemat` use zlib's default (6), but zlib-rs
/// at 3 compresses a large double matrix ~3 times as fast into a file within 0.5 % of theirs
/// (BENCHMARKS.md, mat5); variables under 64 KiB are compressed at 9 whatever the level
/// (see `sciio_mat`'s Level-5 writer). `--compress deflate:6` gives zlib's default.
pub(crate) fn mat_options(
    spec: Option<&CompressSpec>,
    version: crate::MatOutVersion,
) -> Result<WriteOptions> {
    let options = WriteOptions::default().version(match version {
        crate::MatOutVersion::V73 => MatVersion::V73,
        crate::MatOutVersion::V7 => MatVersion::V7,
        crate::MatOutVersion::V5 => MatVersion::V5,
    });
    let Some(spec) = spec else {
        return Ok(match version {
            crate::MatOutVersion::V7 => options.compression(Some(3)),
            _ => options,
        });
    };
    if version == crate::MatOutVersion::V5 {
        return Err(Error::invalid_input(
            "MAT v5 files are not compressed; use --mat-version 7 for compressed variables",
        ));
    }
    Ok(match spec.only_one("mat", &["deflate"], 0..=9)? {
        None => options.compression(None),
        Some(f) => options.compression(Some(f.level.map_or(3, |l| l.unsigned_abs()))),
    })
}

impl MatOut {
    pub(crate) fn create(
        dst: &Path,
        compress: Option<&CompressSpec>,
        version: crate::MatOutVersion,
    ) -> Result<MatOut> {
        let options = mat_options(compress, version).map_err(|e| e.with_file(dst))?;
        let (temp, registered) = crate::atomic::temp_file_beside(dst)?;
        let temp = temp.into_temp_path();
        let writer = MatWriter::create(&temp, options).map_err(|e| e.with_file(dst))?;
        Ok(MatOut {
            writer,
            temp,
            _registered: registered,
            written: HashSet::new(),
            nested: Folder::default(),
        })
    }

    /// Writes `array` as variable `name` as `hdf5storage.savemat` stores it (with its
    /// `Python.*` attributes, [`sciio_mat::from_numpy`]); a path (`a/b`) makes field `b` of
    /// struct `a`.
    pub(crate) fn write(&mut self, name: &str, array: &NdArray) -> Result<()> {
        let (value, meta) =
            sciio_mat::from_numpy(array).map_err(|e| e.with_node(format!("/{name}")))?;
        self.write_entry(name, value, Some(meta))
    }

    /// Writes `value` as variable `name`, or keeps it for the struct a path (`a/b/c`) names,
    /// as hdf5storage stores a path's groups: MATLAB sees struct `a` with a struct field `b`
    /// holding field `c`.
    pub(crate) fn write_value(&mut self, name: &str, value: MatValue) -> Result<()> {
        self.write_entry(name, value, None)
    }

    fn write_entry(&mut self, name: &str, value: MatValue, meta: Option<PythonMeta>) -> Result<()> {
        let name = name.trim_matches('/');
        let node = || format!("/{name}");
        let parts: Vec<&str> = name.split('/').collect();
        if parts.len() == 1 {
            if self.nested.contains(name) {
                return Err(both_value_and_struct(name).with_node(node()));
            }
            self.written.insert(name.to_string());
            return self.writer.write_with_meta(name, &value, meta.as_ref());
        }
        if self.written.contains(parts[0]) {
            return Err(both_value_and_struct(parts[0]).with_node(node()));
        }
        self.nested
            .insert(&parts, (value, meta))
            .map_err(|e| e.with_node(node()))
    }

    pub(crate) fn finish(mut self, dst: &Path) -> Result<()> {
        for (name, entry) in std::mem::take(&mut self.nested).entries {
            let (value, meta) = entry.into_value();
            self.writer
                .write_with_meta(&name, &value, meta.as_ref())
                .map_err(|e| e.with_node(format!("/{name}")).with_file(dst))?;
        }
        self.writer.finish().map_err(|e| e.with_file(dst))?;
        set_mode(&self.temp, dst)?;
        self.temp.persist(dst).map_err(|e| {
            Error::io("cannot rename the finished file into place", e.error).with_file(dst)
        })
    }
}

fn both_value_and_struct(name: &str) -> Error {
    Error::invalid_input(format!(
        "'{name}' would be both a variable and a struct of the arrays under '{name}/'"
    ))
}

/// The members of a `scipy.sparse.save_npz` file.
const SAVE_NPZ_MEMBERS: [&str; 8] = [
    "format",
    "shape",
    "data",
    "indices",
    "indptr",
    "row",
    "col",
    "_is_array",
];

/// For one source that is a `scipy.sparse.save_npz` file (or a selected group holding just
/// its members) going into a MAT file without `DST:NODE`: the variable name its members are
/// written under (the selected node's name, or the file's stem), so that they make one
/// MATLAB sparse variable (see [`saved_sparse`]).
pub(crate) fn save_npz_variable(
    sources: &[(&mut crate::File, Option<&str>)],
    options: &crate::ConvertOptions,
) -> Option<String> {
    let [(src, node)] = sources else {
        return None;
    };
    if options.dst_node.is_some() {
        return None;
    }
    let selected = match node {
        Some(n) => src.node(n).ok()?,
        None => src.root(),
    };
    let names: Vec<&str> = selected
        .children()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let layout = names.iter().all(|n| SAVE_NPZ_MEMBERS.contains(n))
        && ["format", "shape", "data"]
            .iter()
            .all(|m| names.contains(m))
        && selected.children().iter().all(|c| c.array_info().is_some());
    if !layout {
        return None;
    }
    let name = match node.map(|n| n.trim_matches('/')).filter(|n| !n.is_empty()) {
        Some(n) => n.rsplit('/').next().unwrap_or(n).to_string(),
        None => src.path().file_stem()?.to_string_lossy().into_owned(),
    };
    Some(name)
}

/// Values gathered under a path prefix, in the order they came: a scalar struct to be.
#[derive(Debug, Default)]
struct Folder {
    entries: Vec<(String, Entry)>,
}

#[derive(Debug)]
enum Entry {
    Value(Box<(MatValue, Option<PythonMeta>)>),
    Folder(Folder),
}

impl Entry {
    /// The value: a folder is a scalar struct of its entries, or — holding exactly the
    /// members `scipy.sparse.save_npz` writes — a sparse matrix.
    fn into_value(self) -> (MatValue, Option<PythonMeta>) {
        match self {
            Entry::Value(v) => *v,
            Entry::Folder(f) => {
                let (fields, metas): (Vec<(String, MatValue)>, Vec<PythonMeta>) = f
                    .entries
                    .into_iter()
                    .map(|(name, e)| {
                        let (value, meta) = e.into_value();
                        ((name, value), meta.unwrap_or_default())
                    })
                    .unzip();
                if let Some(sparse) = saved_sparse(&fields) {
                    return (MatValue::Sparse(sparse), None);
                }
                let meta = PythonMeta {
                    attrs: None,
                    elements: vec![metas],
                };
                (MatValue::Struct(StructArray::scalar(fields)), Some(meta))
            }
        }
    }
}

/// The sparse matrix of `scipy.sparse.save_npz`'s members (`format` csc/csr with
/// `indices`, `indptr`; coo with `row`, `col`; `shape`, `data`), as MATLAB stores it (CSC,
/// sorted, duplicates summed); `None` when the members are not that layout or its values
/// have no MATLAB sparse class (those stay a struct of the arrays).
fn saved_sparse(fields: &[(String, MatValue)]) -> Option<SparseMatrix> {
    let get = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let format = match get("format")? {
        MatValue::Char(c) => c.to_string_lossy(),
        _ => return None,
    };
    let members: &[&str] = match format.as_str() {
        "csc" | "csr" => &["format", "shape", "data", "indices", "indptr"],
        "coo" => &["format", "shape", "data", "row", "col"],
        _ => return None,
    };
    let allowed = |n: &str| members.contains(&n) || n == "_is_array";
    if fields.len() < members.len() || !fields.iter().all(|(n, _)| allowed(n)) {
        return None;
    }
    let ints = |name: &str| -> Option<Vec<u64>> {
        let MatValue::Numeric(a) = get(name)? else {
            return None;
        };
        int_values(a)?
            .into_iter()
            .map(|v| u64::try_from(v).ok())
            .collect()
    };
    let [nrows, ncols] = ints("shape")?[..] else {
        return None;
    };
    let (nrows, ncols) = (usize::try_from(nrows).ok()?, usize::try_from(ncols).ok()?);
    let data = match get("data")? {
        MatValue::Numeric(a) | MatValue::Logical(a) => sparse_values(a)?,
        _ => return None,
    };
    let (rows, cols) = match format.as_str() {
        "coo" => (ints("row")?, ints("col")?),
        compressed => {
            let indices = ints("indices")?;
            let indptr = ints("indptr")?;
            let major = if compressed == "csc" { ncols } else { nrows };
            if indptr.len() != major.checked_add(1)?
                || indptr.first() != Some(&0)
                || indptr.windows(2).any(|w| w[0] > w[1])
                || indptr.last() != Some(&(indices.len() as u64))
            {
                return None;
            }
            let mut outer = Vec::with_capacity(indices.len());
            for (i, w) in indptr.windows(2).enumerate() {
                outer.extend(std::iter::repeat_n(i as u64, (w[1] - w[0]) as usize));
            }
            match compressed {
                "csc" => (indices, outer),
                _ => (outer, indices),
            }
        }
    };
    SparseMatrix::from_triplets(nrows, ncols, &rows, &cols, &data).ok()
}

/// The values of an integer array of any width and byte order; `None` for other dtypes.
fn int_values(a: &NdArray) -> Option<Vec<i128>> {
    let (size, signed) = match a.dtype().as_scalar()?.kind {
        ScalarKind::Int(n) => (usize::from(n), true),
        ScalarKind::UInt(n) => (usize::from(n), false),
        _ => return None,
    };
    if !matches!(size, 1 | 2 | 4 | 8) {
        return None;
    }
    let a = a.to_native().to_order(Order::C);
    let values = a
        .as_bytes()
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            if cfg!(target_endian = "big") {
                for (i, &x) in c.iter().rev().enumerate() {
                    b[i] = x;
                }
            } else {
                b[..size].copy_from_slice(c);
            }
            let u = u64::from_le_bytes(b);
            let shift = 64 - 8 * size as u32;
            match signed {
                true => i128::from(((u << shift) as i64) >> shift),
                false => i128::from(u),
            }
        })
        .collect();
    Some(values)
}

/// Sparse values as MATLAB holds them: double, complex double or logical; other numeric
/// values converted when every value is exact in double (float32, integers up to 2^53).
fn sparse_values(a: &NdArray) -> Option<NdArray> {
    let a = a.to_native().to_order(Order::C);
    let n = a.len();
    let a = a.reshape(&[n]).ok()?;
    let kind = a.dtype().as_scalar()?.kind;
    let f64s = |values: Vec<f64>| NdArray::from_vec(values, &[n]).ok();
    let bytes = a.as_bytes();
    match kind {
        ScalarKind::Float(8) | ScalarKind::Complex(16) | ScalarKind::Bool => Some(a),
        ScalarKind::Float(4) => f64s(
            bytes
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))) // ok: chunks of 4
                .collect(),
        ),
        ScalarKind::Int(_) | ScalarKind::UInt(_) => {
            let limit = 1i128 << 53;
            let values = int_values(&a)?;
            values
                .iter()
                .all(|v| v.abs() <= limit)
                .then(|| f64s(values.iter().map(|&v| v as f64).collect()))?
        }
        _ => None,
    }
}

impl Folder {
    fn contains(&self, name: &str) -> bool {
        self.entries.iter().any(|(n, _)| n == name)
    }

    /// Puts `value` at `path` (at least one part), creating folders on the way.
    fn insert(&mut self, path: &[&str], value: (MatValue, Option<PythonMeta>)) -> Result<()> {
        let Some((first, rest)) = path.split_first() else {
            return Err(Error::invalid_input("an empty name"));
        };
        let at = self.entries.iter().position(|(n, _)| n == first);
        match (at, rest.is_empty()) {
            (None, true) => self
                .entries
                .push((first.to_string(), Entry::Value(Box::new(value)))),
            (None, false) => {
                let mut folder = Folder::default();
                folder.insert(rest, value)?;
                self.entries
                    .push((first.to_string(), Entry::Folder(folder)));
            }
            (Some(i), false) => match &mut self.entries[i].1 {
                Entry::Folder(folder) => folder.insert(rest, value)?,
                Entry::Value(_) => return Err(both_value_and_struct(first)),
            },
            (Some(_), true) => return Err(both_value_and_struct(first)),
        }
        Ok(())
    }
}

/// `convert` into a MAT file from MAT files only: MATLAB values are copied as they are —
/// classes, cells, structs, struct arrays, sparse matrices, empties — instead of leaf by leaf
/// through numpy arrays. A whole file copies every variable; `SRC:NODE` copies the value at
/// that path (a variable, a struct field, a cell item) under its last name or `DST:NODE`.
/// A value holding a MATLAB object (which only MATLAB can create) is left out. `None` when a
/// source is not a MAT file (those go leaf by leaf).
pub(crate) fn copy_values(
    sources: &[(&mut crate::File, Option<&str>)],
    dst: &Path,
    options: &crate::ConvertOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Option<crate::ConvertSummary>> {
    if sources
        .iter()
        .any(|(src, _)| src.format() != crate::Format::Mat)
    {
        return Ok(None);
    }
    let (planned, left_out) = plan_values(sources, dst, options)?;
    crate::plan::refuse_if_strict(&left_out, options.strict, dst)?;
    let mut out = MatOut::create(dst, options.compress.as_ref(), options.mat_version)?;
    let mut names = Vec::new();
    let mut bytes = 0u64;
    for (name, value) in planned {
        bytes += value_bytes(&value);
        out.write_value(&name, value)
            .map_err(|e| e.with_file(dst))?;
        names.push(name);
        progress(bytes, bytes);
    }
    out.finish(dst)?;
    Ok(Some(crate::ConvertSummary {
        format: crate::Format::Mat,
        arrays: names,
        data_bytes: bytes,
        left_out,
    }))
}

/// MATLAB values with their names in the destination.
type NamedValues = Vec<(String, MatValue)>;

/// The values a MAT → MAT copy writes, named in the destination, and those it leaves out.
fn plan_values(
    sources: &[(&mut crate::File, Option<&str>)],
    dst: &Path,
    options: &crate::ConvertOptions,
) -> Result<(NamedValues, Vec<LeftOut>)> {
    let mut planned: NamedValues = Vec::new();
    let mut left_out = Vec::new();
    for (src, node) in sources {
        let file = MatFile::open_with_limits(src.path(), *src.limits())?;
        for (name, value) in selected_values(&file, *node)? {
            let src_path = match node {
                Some(n) => crate::file::normalise(n),
                None => format!("/{name}"),
            };
            let value = drop_absent_fields(value, &src_path, &mut left_out);
            if let Some(class) = object_class(&value) {
                left_out.push(object_left_out(src_path, &value, &class));
                continue;
            }
            let name = match options.dst_node.as_deref().map(|d| d.trim_matches('/')) {
                Some(d) if node.is_some() => d.to_string(),
                Some(d) => format!("{d}/{name}"),
                None => name,
            };
            if planned.iter().any(|(n, _)| *n == name) {
                return Err(Error::invalid_input(format!(
                    "two values would be named '{name}'; rename one with DST:NODE"
                ))
                .with_file(dst));
            }
            planned.push((name, value));
        }
    }
    Ok((planned, left_out))
}

/// `value` without the struct fields a damaged file's `MATLAB_fields` names but does not hold
/// ([`sciio_mat::ABSENT_FIELD`]), each left out with its reason.
fn drop_absent_fields(value: MatValue, path: &str, left_out: &mut Vec<LeftOut>) -> MatValue {
    let absent =
        |v: &MatValue| matches!(v, MatValue::Opaque(o) if o.class == sciio_mat::ABSENT_FIELD);
    match value {
        MatValue::Struct(mut s) => {
            let mut keep = Vec::with_capacity(s.fields.len());
            for (j, field) in s.fields.iter().enumerate() {
                let gone = s
                    .elements
                    .iter()
                    .filter_map(|e| e.get(j))
                    .find(|v| absent(v));
                match gone {
                    Some(MatValue::Opaque(o)) => {
                        left_out.push(LeftOut::node(
                            format!("{}/{field}", path.trim_end_matches('/')),
                            "an absent struct field",
                            o.note.clone(),
                        ));
                        keep.push(false);
                    }
                    _ => keep.push(true),
                }
            }
            let scalar = s.elements.len() == 1;
            let base = path.trim_end_matches('/').to_string();
            let names = std::mem::take(&mut s.fields);
            s.elements = std::mem::take(&mut s.elements)
                .into_iter()
                .enumerate()
                .map(|(i, e)| {
                    e.into_iter()
                        .zip(names.iter().zip(&keep))
                        .filter(|(_, (_, &k))| k)
                        .map(|(v, (f, _))| {
                            let at = match scalar {
                                true => format!("{base}/{f}"),
                                false => format!("{base}/{i}/{f}"),
                            };
                            drop_absent_fields(v, &at, left_out)
                        })
                        .collect()
                })
                .collect();
            s.fields = names
                .into_iter()
                .zip(&keep)
                .filter_map(|(f, &k)| k.then_some(f))
                .collect();
            MatValue::Struct(s)
        }
        other => other,
    }
}

/// The class of the first MATLAB object in `value` (itself, or inside its cells and structs):
/// MAT files are written without objects.
fn object_class(value: &MatValue) -> Option<String> {
    match value {
        MatValue::Opaque(_) | MatValue::Object(_) => Some(value.class().name().to_string()),
        MatValue::Cell(c) => c.items.iter().find_map(object_class),
        MatValue::Struct(s) => s.elements.iter().flatten().find_map(object_class),
        _ => None,
    }
}

fn object_left_out(path: String, value: &MatValue, class: &str) -> LeftOut {
    let own = value.class().name().to_string();
    let description = if own == class {
        format!("a MATLAB object of class {class}")
    } else {
        format!("a {own} holding a MATLAB object of class {class}")
    };
    LeftOut::node(
        path,
        description,
        "sciio writes no MATLAB objects (only MATLAB can create them)",
    )
}

/// Every variable (`node` = `None`), or the value at `node`, with its name.
fn selected_values(file: &MatFile, node: Option<&str>) -> Result<Vec<(String, MatValue)>> {
    let Some(node) = node.map(|n| n.trim_matches('/')).filter(|n| !n.is_empty()) else {
        return file.read_all();
    };
    let mut parts = node.split('/');
    let var = parts.next().unwrap_or_default();
    let value = file.read(var)?;
    let mut at = At::Value(&value);
    let mut last = var;
    for part in parts {
        at = step(at, part).ok_or_else(|| {
            Error::not_found(format!("no element '{part}' in the variable"))
                .with_node(format!("/{node}"))
        })?;
        last = part;
    }
    let picked = match at {
        At::Value(v) => v.clone(),
        At::SparsePart(s, part) => MatValue::numeric(sparse_part(s, part)?)?,
        // One element of a struct array: a scalar struct of its fields.
        At::Element(s, index) => MatValue::Struct(StructArray::scalar(
            s.fields
                .iter()
                .zip(&s.elements[index])
                .map(|(f, v)| (f.clone(), v.clone()))
                .collect(),
        )),
    };
    Ok(vec![(last.to_string(), picked)])
}

/// Bytes of array data inside a value (for the conversion summary).
fn value_bytes(value: &MatValue) -> u64 {
    match value {
        MatValue::Numeric(a) | MatValue::Logical(a) => a.as_bytes().len() as u64,
        MatValue::Char(c) => 2 * c.codes.len() as u64,
        MatValue::Cell(c) => c.items.iter().map(value_bytes).sum(),
        MatValue::Struct(s) => s.elements.iter().flatten().map(value_bytes).sum(),
        MatValue::Sparse(s) => {
            s.data.as_bytes().len() as u64 + 8 * (s.ir.len() + s.jc.len()) as u64
        }
        _ => 0,
    }
}

#[cfg(unix)]
fn set_mode(temp: &Path, dst: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let perms = std::fs::metadata(dst)
        .map(|m| m.permissions())
        .unwrap_or_else(|_| std::fs::Permissions::from_mode(0o644));
    std::fs::set_permissions(temp, perms)
        .map_err(|e| Error::io("cannot set permissions", e).with_file(dst))
}

#[cfg(not(unix))]
fn set_mode(_temp: &Path, _dst: &Path) -> Result<()> {
    Ok(())
}

/// Why a MAT file cannot hold an array of this kind ([`sciio_mat::from_numpy`] would refuse
/// it), or `None` when it can: numeric, logical, complex, `U`/`S` text and structured arrays
/// of those, as hdf5storage stores them.
pub(crate) fn no_class_for(info: &ArrayInfo) -> Option<String> {
    sciio_mat::no_class_reason(&info.dtype).map(|why| match &info.dtype {
        DType::Record(_) => format!("structured array: {why}"),
        _ => why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_maps_to_deflate_levels() {
        let v73 = crate::MatOutVersion::V73;
        assert_eq!(mat_options(None, v73).unwrap().compression_level, Some(3));
        let spec = CompressSpec::parse("deflate:7").unwrap();
        assert_eq!(
            mat_options(Some(&spec), v73).unwrap().compression_level,
            Some(7)
        );
        let spec = CompressSpec::parse("none").unwrap();
        assert_eq!(
            mat_options(Some(&spec), v73).unwrap().compression_level,
            None
        );
        let spec = CompressSpec::parse("blosc2:lz4:5").unwrap();
        assert!(mat_options(Some(&spec), v73).is_err());
        let v7 = mat_options(None, crate::MatOutVersion::V7).unwrap();
        assert_eq!(
            (v7.version, v7.compression_level),
            (MatVersion::V7, Some(3))
        );
        let spec = CompressSpec::parse("deflate:1").unwrap();
        assert!(mat_options(Some(&spec), crate::MatOutVersion::V5).is_err());
    }

    #[test]
    fn text_is_stored_as_hdf5storage_stores_it() {
        let a = NdArray::from_bytes(
            DType::scalar(ScalarKind::Unicode(3)),
            &[],
            Order::C,
            &[104, 0, 0, 0, 105, 0, 0, 0, 0, 0, 0, 0],
        )
        .unwrap();
        assert_eq!(sciio_mat::from_numpy(&a).unwrap().0, MatValue::from("hi"));
        // Two strings: one 1x4 char row, each string 2 units wide (NUL-padded).
        let two = NdArray::from_bytes(
            DType::scalar(ScalarKind::Unicode(2)),
            &[2],
            Order::C,
            &[104, 0, 0, 0, 105, 0, 0, 0, 111, 0, 0, 0, 0, 0, 0, 0],
        )
        .unwrap();
        let MatValue::Char(c) = sciio_mat::from_numpy(&two).unwrap().0 else {
            panic!("char")
        };
        assert_eq!(
            (c.shape.clone(), c.to_string_lossy()),
            (vec![1, 4], "hio\0".into())
        );
    }

    #[test]
    fn save_npz_members_become_a_sparse_matrix() {
        let i32s =
            |v: Vec<i32>| MatValue::Numeric(NdArray::from_vec(v.clone(), &[v.len()]).unwrap());
        let fields = vec![
            ("indices".to_string(), i32s(vec![1, 0, 2])),
            ("indptr".to_string(), i32s(vec![0, 1, 3])),
            ("format".to_string(), MatValue::from("csr")),
            (
                "shape".to_string(),
                MatValue::Numeric(NdArray::from_vec(vec![2i64, 3], &[2]).unwrap()),
            ),
            (
                "data".to_string(),
                MatValue::Numeric(NdArray::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap()),
            ),
        ];
        // [[0 1 0], [2 0 3]] in CSC: column 0 row 1 (2), column 1 row 0 (1), column 2 row 1 (3).
        let m = saved_sparse(&fields).unwrap();
        assert_eq!((m.nrows, m.ncols), (2, 3));
        assert_eq!(
            (m.ir.clone(), m.jc.clone()),
            (vec![1, 0, 1], vec![0, 1, 2, 3])
        );
        assert!(saved_sparse(&fields[..4]).is_none());
    }
}
