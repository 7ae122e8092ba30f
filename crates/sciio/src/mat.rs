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
    MatClass, MatFile, MatValue, MatVersion, MatWriter, StructArray, VarInfo, WriteOptions,
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
        self.leaf(path)?.to_numpy()
    }

    /// The value of the leaf at `path`, its variable read once (and kept for its siblings).
    fn leaf(&mut self, path: &str) -> Result<&MatValue> {
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
            At::Value(v) => Ok(v),
            At::Element(..) => Err(Error::mismatch("a struct element is a group, not an array")),
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
        let converted;
        let array = match self.leaf(path)? {
            // Numeric data as stored: no reorder, and no copy when already native.
            MatValue::Numeric(a) | MatValue::Logical(a)
                if (a.order() == info.order || memory_order(a.shape()) == Order::C)
                    && a.dtype().is_native() =>
            {
                a
            }
            MatValue::Numeric(a) | MatValue::Logical(a) => {
                converted = a.to_native().to_order(info.order);
                &converted
            }
            other => {
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
        MatValue::Sparse(_) => opaque(
            "sparse",
            "a MATLAB sparse matrix has no dense numpy array (hdf5storage returns scipy.sparse)",
        ),
        MatValue::Opaque(o) => opaque(&o.class, &o.note),
        // string/datetime/duration/categorical have a numpy array; other classes do not.
        MatValue::Object(o) => match o.to_numpy() {
            Ok(a) => NodeKind::Array(ArrayInfo::of(&a)),
            Err(e) => opaque(&o.class, e.message()),
        },
    };
    native(Node::new(name, kind), &value.class(), &value.matlab_shape())
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

/// A place inside a variable: a value, or one element of a struct array.
enum At<'a> {
    Value(&'a MatValue),
    Element(&'a StructArray, usize),
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
        At::Value(_) => None,
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

    /// Writes `array` as variable `name`; a path (`a/b`) makes field `b` of struct `a`.
    pub(crate) fn write(&mut self, name: &str, array: &NdArray) -> Result<()> {
        let value = to_mat_value(array).map_err(|e| e.with_node(format!("/{name}")))?;
        self.write_value(name, value)
    }

    /// Writes `value` as variable `name`, or keeps it for the struct a path (`a/b/c`) names,
    /// as hdf5storage stores a path's groups: MATLAB sees struct `a` with a struct field `b`
    /// holding field `c`.
    pub(crate) fn write_value(&mut self, name: &str, value: MatValue) -> Result<()> {
        let name = name.trim_matches('/');
        let node = || format!("/{name}");
        let parts: Vec<&str> = name.split('/').collect();
        if parts.len() == 1 {
            if self.nested.contains(name) {
                return Err(both_value_and_struct(name).with_node(node()));
            }
            self.written.insert(name.to_string());
            return self.writer.write(name, &value);
        }
        if self.written.contains(parts[0]) {
            return Err(both_value_and_struct(parts[0]).with_node(node()));
        }
        self.nested
            .insert(&parts, value)
            .map_err(|e| e.with_node(node()))
    }

    pub(crate) fn finish(mut self, dst: &Path) -> Result<()> {
        for (name, entry) in std::mem::take(&mut self.nested).entries {
            let value = entry.into_value();
            self.writer
                .write(&name, &value)
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

/// Values gathered under a path prefix, in the order they came: a scalar struct to be.
#[derive(Debug, Default)]
struct Folder {
    entries: Vec<(String, Entry)>,
}

#[derive(Debug)]
enum Entry {
    Value(MatValue),
    Folder(Folder),
}

impl Entry {
    fn into_value(self) -> MatValue {
        match self {
            Entry::Value(v) => v,
            Entry::Folder(f) => MatValue::Struct(StructArray::scalar(
                f.entries
                    .into_iter()
                    .map(|(name, e)| (name, e.into_value()))
                    .collect(),
            )),
        }
    }
}

impl Folder {
    fn contains(&self, name: &str) -> bool {
        self.entries.iter().any(|(n, _)| n == name)
    }

    /// Puts `value` at `path` (at least one part), creating folders on the way.
    fn insert(&mut self, path: &[&str], value: MatValue) -> Result<()> {
        let Some((first, rest)) = path.split_first() else {
            return Err(Error::invalid_input("an empty name"));
        };
        let at = self.entries.iter().position(|(n, _)| n == first);
        match (at, rest.is_empty()) {
            (None, true) => self.entries.push((first.to_string(), Entry::Value(value))),
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

/// Why a MAT file cannot hold an array of this kind ([`to_mat_value`] would refuse it), or
/// `None` when it can: numeric, logical and complex arrays, and `U` scalars (char rows).
pub(crate) fn no_class_for(info: &ArrayInfo) -> Option<String> {
    let holds = match info.dtype.as_scalar().map(|s| s.kind) {
        Some(ScalarKind::Unicode(_)) => info.shape.is_empty(),
        Some(ScalarKind::Bool) => true,
        Some(kind) => MatClass::of_kind(kind).is_some(),
        None => false,
    };
    (!holds).then(|| format!("MATLAB has no class for {} arrays", describe(info)))
}

fn describe(info: &ArrayInfo) -> String {
    match (&info.dtype, info.shape.len()) {
        (DType::Scalar(s), n) if matches!(s.kind, ScalarKind::Unicode(_)) && n > 0 => {
            "text (non-scalar)".to_string()
        }
        (DType::Record(_), _) => "structured".to_string(),
        (dtype, _) => dtype.to_string(),
    }
}

/// The MATLAB value of a numpy array: numeric or logical with the same shape, or a char row
/// for a `U` scalar.
fn to_mat_value(array: &NdArray) -> Result<MatValue> {
    if let Some(ScalarKind::Unicode(_)) = array.dtype().as_scalar().map(|s| s.kind) {
        let texts: Vec<Vec<u32>> = array
            .to_native()
            .to_order(Order::C)
            .as_bytes()
            .chunks_exact(array.dtype().itemsize().max(4))
            .map(|item| {
                let mut codes: Vec<u32> = item
                    .chunks_exact(4)
                    .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])) // ok: chunks of 4
                    .collect();
                while codes.last() == Some(&0) {
                    codes.pop();
                }
                codes
            })
            .collect();
        match array.shape() {
            [] => {
                let text: String = texts
                    .first()
                    .map(|t| t.iter().map(|&c| char::from_u32(c).unwrap_or('\u{FFFD}')))
                    .into_iter()
                    .flatten()
                    .collect();
                return Ok(MatValue::from(text.as_str()));
            }
            // n strings: an n-row char matrix, rows padded with blanks (as scipy.io.savemat
            // writes them).
            [n] => {
                let width = texts.iter().map(Vec::len).max().unwrap_or(0);
                let mut codes = vec![u32::from(b' '); n * width];
                for (r, t) in texts.iter().enumerate() {
                    for (c, &code) in t.iter().enumerate() {
                        if let Some(slot) = codes.get_mut(r + c * n) {
                            *slot = code;
                        }
                    }
                }
                let shape = if n * width == 0 {
                    vec![0, 0]
                } else {
                    vec![*n, width]
                };
                return Ok(MatValue::Char(sciio_mat::CharArray { shape, codes }));
            }
            _ => {}
        }
    }
    // One copy of a native array (MATLAB's column-major order), not two.
    MatValue::numeric(match array.dtype().is_native() {
        true => array.to_order(Order::F),
        false => array.to_native().to_order(Order::F),
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
    fn unicode_scalars_become_char_rows() {
        let a = NdArray::from_bytes(
            DType::scalar(ScalarKind::Unicode(3)),
            &[],
            Order::C,
            &[104, 0, 0, 0, 105, 0, 0, 0, 0, 0, 0, 0],
        )
        .unwrap();
        assert_eq!(to_mat_value(&a).unwrap(), MatValue::from("hi"));
        let b = NdArray::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
        assert_eq!(to_mat_value(&b).unwrap().class(), MatClass::Double);
        // Two strings: a 2-row char matrix, the short one padded with a blank.
        let two = NdArray::from_bytes(
            DType::scalar(ScalarKind::Unicode(2)),
            &[2],
            Order::C,
            &[104, 0, 0, 0, 105, 0, 0, 0, 111, 0, 0, 0, 0, 0, 0, 0],
        )
        .unwrap();
        let MatValue::Char(c) = to_mat_value(&two).unwrap() else {
            panic!("char")
        };
        assert_eq!(
            (c.shape.clone(), c.rows()),
            (vec![2, 2], vec!["hi".into(), "o ".into()])
        );
    }
}
