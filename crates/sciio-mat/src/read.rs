//! Reading v7.3 MAT files (MATLAB's, hdf5storage's, mat73/h5py's in MATLAB layout) into
//! [`MatValue`]s, over sciio-hdf5's read API.
//!
//! Object references (cells, struct arrays) are old-style `hobj_ref_t`s, which libhdf5's native
//! driver defines as the target's object-header address. sciio-hdf5 reports every object's
//! token, whose first eight bytes are that address, so references are resolved through an index
//! of the objects under `/#refs#` (and, only when a reference points elsewhere, of the whole
//! file) without a dereferencing call.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;

use sciio_core::{
    ByteOrder, DType, Error, ErrorKind, Limits, NdArray, Order, Result, ScalarKind, ScalarType,
};
use sciio_hdf5::{
    join_path, AttrValue, Attribute, Dataset, File, H5Type, Layout, LinkKind, ObjectKind, RawData,
};

use crate::booleans::Booleans;
use crate::header::{self, MatKind};
use crate::numpy::PythonAttrs;
use crate::value::{
    CellArray, CharArray, MatClass, MatValue, NumpyText, Opaque, SparseMatrix, StructArray, VarInfo,
};

pub(crate) mod objects;
mod subsystem;

/// Deepest nesting of cells/structs followed (MATLAB files are far shallower; the bound keeps a
/// hostile file from exhausting the stack).
const MAX_DEPTH: usize = 128;

/// Files up to this size are also read into memory whole when opened, so that cell elements
/// and struct fields (thousands of tiny datasets) are decoded from memory without libhdf5;
/// larger ones are read piece by piece as values are asked for.
const IN_MEMORY_MAX: u64 = 64 << 20;

/// The class of the [`Opaque`] value a struct field gets when the struct's `MATLAB_fields`
/// names it but the struct's group has no such member (a damaged or hand-edited file): the
/// other fields are read, and converting the struct leaves this one out with the reason.
pub const ABSENT_FIELD: &str = "struct field not stored";

/// The class of the marker an outlined array is while a value is outlined (never seen
/// outside this module: [`Outline::of`] replaces every marker).
const OUTLINED: &str = "\0outlined";

/// A variable as [`MatFile::outline`] describes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outline {
    /// Read in full (everything but large numeric and logical arrays in cells and structs).
    Value(MatValue),
    /// A numeric or logical array not read: its class, MATLAB size and complexity (`name`
    /// empty).
    Array(VarInfo),
    /// A cell array holding an outlined array somewhere.
    Cell {
        /// MATLAB dimensions.
        shape: Vec<usize>,
        /// Items, column-major.
        items: Vec<Outline>,
    },
    /// A struct (array) holding an outlined array somewhere.
    Struct {
        /// MATLAB dimensions.
        shape: Vec<usize>,
        /// Field names in order.
        fields: Vec<String>,
        /// `elements[i][j]`: field `j` of element `i`.
        elements: Vec<Vec<Outline>>,
    },
}

impl Outline {
    /// The outline of a value read with markers for the arrays not read (`skipped[i]` for
    /// the marker noting `i`).
    fn of(value: MatValue, skipped: &[VarInfo]) -> Outline {
        if !has_marker(&value) {
            return Outline::Value(value);
        }
        match value {
            MatValue::Opaque(o) if o.class == OUTLINED => {
                match o.note.parse::<usize>().ok().and_then(|i| skipped.get(i)) {
                    Some(info) => Outline::Array(info.clone()),
                    None => Outline::Value(MatValue::Opaque(o)),
                }
            }
            MatValue::Cell(c) => Outline::Cell {
                shape: c.shape,
                items: c
                    .items
                    .into_iter()
                    .map(|v| Outline::of(v, skipped))
                    .collect(),
            },
            MatValue::Struct(s) => Outline::Struct {
                shape: s.shape,
                fields: s.fields,
                elements: s
                    .elements
                    .into_iter()
                    .map(|e| e.into_iter().map(|v| Outline::of(v, skipped)).collect())
                    .collect(),
            },
            other => Outline::Value(other),
        }
    }
}

fn has_marker(value: &MatValue) -> bool {
    match value {
        MatValue::Opaque(o) => o.class == OUTLINED,
        MatValue::Cell(c) => c.items.iter().any(has_marker),
        MatValue::Struct(s) => s.elements.iter().flatten().any(has_marker),
        _ => false,
    }
}

/// Groups MATLAB keeps for itself, never variables.
const RESERVED: [&str; 2] = ["#refs#", "#subsystem#"];

/// A v7.3 MAT file opened for reading (behind [`MatFile`]).
#[derive(Debug)]
pub(crate) struct Mat73 {
    h5: File,
    header: Option<String>,
    refs: std::sync::Mutex<Option<HashMap<u64, String>>>,
    /// Object-header addresses of the objects whose links were listed (`#refs#` members,
    /// struct fields): reading one opens it by address, without looking its path up.
    addrs: std::sync::Mutex<HashMap<String, u64>>,
    /// MATLAB's object subsystem, loaded at the first object read.
    subsystem: std::sync::Mutex<Option<std::sync::Arc<subsystem::Subsystem>>>,
}

impl Mat73 {
    /// Opens `path`; sizes announced by the file are bounded by `limits`. A MAT v5/v7 file is
    /// refused with an error saying so. Files up to 64 MiB (and within `limits`) are read into
    /// memory whole: cells and structs are many tiny datasets, decoded from memory without
    /// libhdf5 where they are plain (see `sciio_hdf5::File::small_dataset_at`).
    pub fn open_with_limits(path: impl AsRef<Path>, limits: Limits) -> Result<Mat73> {
        let path = path.as_ref();
        let mut head = Vec::with_capacity(header::USERBLOCK + 8);
        std::fs::File::open(path)
            .and_then(|f| {
                f.take((header::USERBLOCK + 8) as u64)
                    .read_to_end(&mut head)
            })
            .map_err(|e| Error::io("cannot read the file", e).with_file(path))?;
        let kind = header::check_head(&head).map_err(|e| e.with_file(path))?;
        let header = match kind {
            MatKind::V73 { text } => Some(text),
            _ => None,
        };
        // In memory only when the limits allow the copy: tight limits still open any file.
        let small = std::fs::metadata(path)
            .map(|m| m.len() <= IN_MEMORY_MAX && limits.check_alloc(m.len(), "file").is_ok())
            .unwrap_or(false);
        let h5 = if small {
            File::open_in_memory(path, limits)?
        } else {
            File::open_with_limits(path, limits)?
        };
        Ok(Mat73 {
            h5,
            header,
            refs: std::sync::Mutex::new(None),
            addrs: std::sync::Mutex::new(HashMap::new()),
            subsystem: std::sync::Mutex::new(None),
        })
    }

    /// The file path.
    pub fn path(&self) -> &Path {
        self.h5.path()
    }

    /// The header text (`MATLAB 7.3 MAT-file, Platform: ...`), or `None` for a plain HDF5 file.
    pub fn header_text(&self) -> Option<&str> {
        self.header.as_deref()
    }

    /// The variable names, in the file's (alphabetical) order.
    pub fn names(&self) -> Result<Vec<String>> {
        let links = self.h5.root()?.links()?;
        // Variables are then opened by address, small ones decoded from memory.
        self.remember("/", &links);
        Ok(links
            .into_iter()
            .filter(|l| l.kind == LinkKind::Hard && !RESERVED.contains(&l.name.as_str()))
            .map(|l| l.name)
            .collect())
    }

    /// One variable's class and size.
    pub fn info(&self, name: &str) -> Result<VarInfo> {
        let path = join_path("/", name);
        if let Some(info) = self.small_info(name, &path)? {
            return Ok(info);
        }
        let node = self.node(&path)?;
        let attrs = node.attrs()?;
        let class_attr = string_attr(&attrs, "MATLAB_class").map_err(|e| self.locate(e, &path))?;
        let sparse = find(&attrs, "MATLAB_sparse").is_some();
        let mut complex = false;
        let (class, shape) = match &node {
            Node::Group(g) => {
                let class = class_attr
                    .map(|c| MatClass::from_name(&c))
                    .unwrap_or(MatClass::Struct);
                let shape = if sparse {
                    let nrows = uint_attr(&attrs, "MATLAB_sparse")
                        .map_err(|e| self.locate(e, &path))?
                        .unwrap_or(0);
                    let jc = self.h5.dataset(&join_path(g.path(), "jc"))?.shape()?;
                    complex = self
                        .h5
                        .dataset(&join_path(g.path(), "data"))
                        .and_then(|d| d.dtype())
                        .map(|t| is_complex(&t))
                        .unwrap_or(false);
                    vec![
                        nrows as usize,
                        jc.first()
                            .map(|&n| n.saturating_sub(1) as usize)
                            .unwrap_or(0),
                    ]
                } else {
                    self.struct_shape(g.path())?
                };
                (class, shape)
            }
            Node::Dataset(d) => {
                let ty = d.dtype()?;
                complex = is_complex(&ty);
                let class = match class_attr {
                    Some(c) => MatClass::from_name(&c),
                    None => infer_class(&ty),
                };
                let shape = if flag_attr(&attrs, "MATLAB_empty") {
                    let raw = d.read()?;
                    let fieldless = match class {
                        MatClass::Struct => fieldless_struct(&raw, &self.h5.limits())
                            .map_err(|e| self.locate(e, &path))?,
                        _ => None,
                    };
                    match fieldless {
                        Some(value) => value.matlab_shape(),
                        None => empty_dims(&raw).map_err(|e| self.locate(e, &path))?,
                    }
                } else {
                    matlab_dims(&d.shape()?)
                };
                (class, shape)
            }
        };
        // An object's dataset holds its MCOS reference, not data of the object's size: the
        // size is the decoded value's (objects are small; undecodable ones are 1x1).
        let shape = match &class {
            MatClass::Object(_)
                if matches!(uint_attr(&attrs, "MATLAB_object_decode"), Ok(Some(3))) =>
            {
                self.read(name)
                    .map(|v| v.matlab_shape())
                    .unwrap_or_else(|_| vec![1, 1])
            }
            MatClass::Object(_) | MatClass::FunctionHandle => vec![1, 1],
            _ => shape,
        };
        Ok(VarInfo {
            name: name.to_string(),
            class,
            shape,
            complex,
            sparse,
        })
    }

    /// [`Self::info`] of a small plain dataset decoded from the in-memory file (no libhdf5
    /// call); `None` for anything else (and anything special: empties, objects, sparse).
    fn small_info(&self, name: &str, path: &str) -> Result<Option<VarInfo>> {
        let Some((attrs, raw)) = self
            .addr_of(path)
            .and_then(|addr| self.h5.small_dataset_at(addr))
        else {
            return Ok(None);
        };
        let special = ["MATLAB_empty", "MATLAB_object_decode", "MATLAB_sparse"];
        if attrs.iter().any(|a| special.contains(&a.name.as_str())) {
            return Ok(None);
        }
        let class = match string_attr(&attrs, "MATLAB_class").map_err(|e| self.locate(e, path))? {
            Some(c) => MatClass::from_name(&c),
            None => infer_class(&raw.ty),
        };
        if matches!(
            class,
            MatClass::Struct | MatClass::Object(_) | MatClass::FunctionHandle
        ) {
            return Ok(None);
        }
        Ok(Some(VarInfo {
            name: name.to_string(),
            class,
            shape: matlab_dims(&raw.shape.iter().map(|&x| x as u64).collect::<Vec<_>>()),
            complex: is_complex(&raw.ty),
            sparse: false,
        }))
    }

    /// Reads variable `name`.
    pub fn read(&self, name: &str) -> Result<MatValue> {
        let path = self.variable_path(name)?;
        self.walk(None).value(&path)
    }

    /// The HDF5 path of variable `name`; an error for names that are no variable.
    fn variable_path(&self, name: &str) -> Result<String> {
        if RESERVED.contains(&name) || name.contains('/') {
            return Err(
                Error::not_found(format!("{name:?} is not a variable")).with_file(self.path())
            );
        }
        Ok(join_path("/", name))
    }

    /// Copies the data of variable `name`, a real (or complex) numeric matrix of `dtype`
    /// (native byte order) and MATLAB size `dims`, to `out` as stored (column-major), a block of rows of
    /// the HDF5 dataset at a time: memory holds one block whatever the variable's size.
    /// `Ok(false)` (nothing written) for anything else, and for small variables, which the
    /// caller reads whole.
    pub(crate) fn copy_plain(
        &self,
        name: &str,
        dtype: &DType,
        dims: &[usize],
        out: &mut dyn std::io::Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<bool> {
        let path = self.variable_path(name)?;
        let Some((d, reading, recode)) = self.streamable(&path, dtype, dims)? else {
            return Ok(false);
        };
        let (mut swapped, mut booleans, mut doubles) = (None, None, None);
        // Bytes out per byte stored (parts of complex integers become doubles).
        let scale = match recode {
            Recode::Doubles(part) => 8 / part.size.clamp(1, 8) as u64,
            _ => 1,
        };
        let progress = &mut |done: u64| progress(done * scale);
        let out: &mut dyn std::io::Write = match recode {
            Recode::None => out,
            Recode::Swap(unit) => swapped.insert(Swapped {
                out,
                unit,
                carry: Vec::new(),
            }),
            Recode::Booleans => booleans.insert(Booleans::new(out)),
            Recode::Doubles(part) => doubles.insert(AsDoubles {
                out,
                part,
                carry: Vec::new(),
                failed: None,
            }),
        };
        let copied = copy_reading(&d, reading, out, progress);
        // A complex integer beyond 2^53 stops the copy with the whole read's error.
        let failed = doubles.and_then(|d: AsDoubles<'_>| d.failed);
        match (copied, failed) {
            (Err(_), Some(e)) | (Err(e), None) => Err(self.locate(e, &path)),
            (Ok(()), _) => Ok(true),
        }
    }

    /// Whether [`Mat73::copy_plain`] streams variable `name` (see
    /// [`MatFile::check_plain_data`]): its dataset, datatype and attributes as it takes them,
    /// and its first and last elements read (their chunks decoded through the filter
    /// pipeline; the last one where the storage ends).
    pub(crate) fn check_plain(&self, name: &str, dtype: &DType, dims: &[usize]) -> Result<bool> {
        let path = self.variable_path(name)?;
        let located = |e: Error| self.locate(e, &path);
        let Some((d, _, _)) = self.streamable(&path, dtype, dims).map_err(located)? else {
            return Ok(false);
        };
        let shape = d.shape().map_err(located)?;
        let one = |start| sciio_hdf5::Slice {
            start,
            count: 1,
            step: 1,
        };
        let first: Vec<_> = shape.iter().map(|_| one(0)).collect();
        let last: Vec<_> = shape.iter().map(|&n| one(n.saturating_sub(1))).collect();
        for slices in [first, last] {
            d.read_slices(Some(&slices)).map_err(located)?;
        }
        Ok(true)
    }

    /// The dataset of a plain numeric variable at `path` whose elements are `dtype`'s (stored
    /// in either byte order) and whose MATLAB size is `dims`, larger than one block, with the
    /// pieces that read it in stored order and the size of the units whose bytes are reversed
    /// into `dtype`'s order (0: none); `None` when it is anything else or its chunks do not
    /// suit such pieces.
    fn streamable(
        &self,
        path: &str,
        dtype: &DType,
        dims: &[usize],
    ) -> Result<Option<(Dataset, Reading, Recode)>> {
        let Ok(Node::Dataset(d)) = self.node(path) else {
            return Ok(None);
        };
        let attrs = d.attrs()?;
        let special = ["MATLAB_empty", "MATLAB_sparse", "MATLAB_object_decode"];
        if special.iter().any(|a| find(&attrs, a).is_some()) {
            return Ok(None);
        }
        let ty = d.dtype()?;
        let class = match string_attr(&attrs, "MATLAB_class").map_err(|e| self.locate(e, path))? {
            Some(c) => MatClass::from_name(&c),
            None => infer_class(&ty),
        };
        let recode = match integer_complex_parts(&ty) {
            // MATLAB's complex integers: compounds of the class's integers, made complex
            // doubles as they pass (as the whole read makes them).
            Some(part) => {
                let kind = scalar_of(part).map(|s| s.kind);
                let doubles = DType::scalar(ScalarKind::Complex(16));
                match IntPart::of(part) {
                    Some(part)
                        if kind.is_some() && kind == class.numeric_kind() && *dtype == doubles =>
                    {
                        Recode::Doubles(part)
                    }
                    _ => return Ok(None),
                }
            }
            None => {
                let (Some(scalar), DType::Scalar(want)) = (scalar_of(&ty), dtype) else {
                    return Ok(None);
                };
                match (class.numeric_kind(), scalar.kind) {
                    // Logical stored in bytes (MATLAB's and hdf5storage's uint8): numpy's bool, each
                    // byte made 0 or 1 as it passes (as the whole read does).
                    (None, ScalarKind::UInt(1) | ScalarKind::Int(1))
                        if class == MatClass::Logical && want.kind == ScalarKind::Bool =>
                    {
                        Recode::Booleans
                    }
                    (None, _) => return Ok(None),
                    (Some(kind), stored) => {
                        // Complex: a compound of the class's float as real and imaginary parts, packed
                        // (`complex_parts`): its bytes are numpy's complex layout.
                        let kind = match (kind, stored) {
                            (ScalarKind::Float(n), ScalarKind::Complex(c)) if c == 2 * n => stored,
                            _ => kind,
                        };
                        if stored != kind || want.kind != kind {
                            return Ok(None);
                        }
                        // The other byte order: each number (each part of a complex) reversed as it
                        // passes.
                        match (scalar.order, want.order) {
                            (a, b) if a == b || kind.itemsize() == 1 => Recode::None,
                            _ => Recode::Swap(match kind {
                                ScalarKind::Complex(c) => usize::from(c / 2),
                                _ => kind.itemsize(),
                            }),
                        }
                    }
                }
            }
        };
        let shape = d.shape()?;
        if shape.is_empty() || matlab_dims(&shape) != dims {
            return Ok(None);
        }
        let Some(pieces) = Pieces::plan(&shape, ty.size() as u64, STREAM_BLOCK_BYTES) else {
            return Ok(None);
        };
        let (layout, chunk, _) = d.storage()?;
        let item = ty.size() as u64;
        let reading = match (layout, chunk) {
            (Layout::Contiguous, _) => Some(Reading::Pieces(pieces)),
            (Layout::Chunked, Some(chunk)) if pieces.suits_chunks(&chunk) => {
                Some(Reading::Pieces(pieces))
            }
            // Chunks thicker than one index along the axes the plan takes one at a time:
            // runs of whole chunk rows instead, or bands of them through a file when a chunk
            // row is too large to hold.
            (Layout::Chunked, Some(chunk)) => {
                match Pieces::whole_chunk_rows(&shape, item, &chunk, STREAM_BLOCK_BYTES) {
                    Some(p) => Some(Reading::Pieces(p)),
                    None => {
                        Bands::plan(&shape, item, &chunk, STREAM_BLOCK_BYTES).map(Reading::Bands)
                    }
                }
            }
            _ => None,
        };
        Ok(reading.map(|r| (d, r, recode)))
    }

    /// A walk over this file's objects from a fresh start (`outline`: see [`Mat73::outline`]).
    fn walk(&self, outline: Option<(u64, Vec<VarInfo>)>) -> Walk<'_> {
        Walk {
            file: self,
            active: HashSet::new(),
            depth: 0,
            objects: Vec::new(),
            outline,
        }
    }

    /// Variable `name` described without reading its large numeric and logical arrays inside
    /// plain cells and structs (more than `min_bytes` each): see [`MatFile::outline`].
    pub fn outline(&self, name: &str, min_bytes: u64) -> Result<Outline> {
        let path = self.variable_path(name)?;
        let mut walk = self.walk(Some((min_bytes, Vec::new())));
        let value = walk.value(&path)?;
        let skipped = walk.outline.map(|(_, s)| s).unwrap_or_default();
        Ok(Outline::of(value, &skipped))
    }

    fn locate(&self, e: Error, node: &str) -> Error {
        e.with_node(node).with_file(self.path())
    }

    fn node(&self, path: &str) -> Result<Node> {
        let addr = self.addr_of(path);
        // Listed objects are opened by address: no link lookups in (large) groups. Others
        // (top-level variables) by path; one open whatever the kind either way.
        let object = match addr {
            Some(addr) => self.h5.object_at(addr, path)?,
            None => self.h5.object(path)?,
        };
        match object {
            sciio_hdf5::Object::Group(g) => Ok(Node::Group(g)),
            sciio_hdf5::Object::Dataset(d) => Ok(Node::Dataset(d)),
            sciio_hdf5::Object::Other(other) => Err(self.locate(
                Error::format(format!("a {other:?} where a MATLAB value was expected")),
                path,
            )),
        }
    }

    /// The object-header address of `path`, when its group's listing gave it.
    fn addr_of(&self, path: &str) -> Option<u64> {
        self.addrs.lock().ok()?.get(path).copied()
    }

    /// Remembers the addresses of `group`'s hard links (from its listing) for [`Self::node`].
    fn remember(&self, group: &str, links: &[sciio_hdf5::Link]) {
        if let Ok(mut addrs) = self.addrs.lock() {
            for link in links {
                if let (LinkKind::Hard, Some(addr)) = (&link.kind, link.addr) {
                    addrs.insert(join_path(group, &link.name), addr);
                }
            }
        }
    }

    /// A struct group's shape: a struct array's fields are reference datasets without
    /// MATLAB_class, whose shape is the array's; a scalar struct is 1×1.
    fn struct_shape(&self, path: &str) -> Result<Vec<usize>> {
        let group = self.h5.group(path)?;
        let first = group
            .links()?
            .into_iter()
            .find(|l| l.kind == LinkKind::Hard);
        if let Some(link) = first {
            if let Node::Dataset(d) = self.node(&join_path(path, &link.name))? {
                if d.dtype()? == H5Type::ObjectRef && find(&d.attrs()?, "MATLAB_class").is_none() {
                    return Ok(matlab_dims(&d.shape()?));
                }
            }
        }
        Ok(vec![1, 1])
    }

    /// Path of the object a reference points to.
    fn resolve(&self, addr: u64, from: &str) -> Result<String> {
        if addr == 0 || addr == u64::MAX {
            return Err(self.locate(Error::format("null object reference"), from));
        }
        let mut guard = self
            .refs
            .lock()
            .map_err(|_| Error::format("reference index poisoned"))?;
        if guard.is_none() {
            // MATLAB and hdf5storage reference only direct members of #refs#: their addresses
            // come with the group's listing.
            let mut index = HashMap::new();
            if let Ok(g) = self.h5.group("/#refs#") {
                self.index_group(&g, &mut index, None)?;
            }
            *guard = Some(index);
        }
        let index = guard.get_or_insert_with(HashMap::new);
        if let Some(p) = index.get(&addr) {
            return Ok(p.clone());
        }
        // Not in #refs#: index the whole file once (h5py-made files may point anywhere).
        if !index.contains_key(&u64::MAX) {
            let root = self.h5.root()?;
            self.index_group(&root, index, Some((&mut HashSet::new(), 0)))?;
            index.insert(u64::MAX, String::new());
        }
        index.get(&addr).cloned().ok_or_else(|| {
            self.locate(
                Error::format(format!("object reference to address {addr:#x}, where the file has no object (missing #refs# target)")),
                from,
            )
        })
    }

    /// Indexes `group`'s hard links by target address; with `walk` (groups seen, depth) also
    /// every group below it.
    fn index_group(
        &self,
        group: &sciio_hdf5::Group,
        index: &mut HashMap<u64, String>,
        walk: Option<(&mut HashSet<u64>, usize)>,
    ) -> Result<()> {
        let links = group.links()?;
        self.remember(group.path(), &links);
        let hard = links
            .iter()
            .filter_map(|l| Some((l.name.as_str(), l.addr?)).filter(|_| l.kind == LinkKind::Hard));
        for (name, addr) in hard.clone() {
            index
                .entry(addr)
                .or_insert_with(|| join_path(group.path(), name));
        }
        let Some((seen, depth)) = walk else {
            return Ok(());
        };
        if depth >= MAX_DEPTH {
            return Ok(());
        }
        for (name, addr) in hard {
            let path = join_path(group.path(), name);
            if self.h5.object_info(&path)?.kind == ObjectKind::Group && seen.insert(addr) {
                let g = self.h5.group(&path)?;
                self.index_group(&g, index, Some((&mut *seen, depth + 1)))?;
            }
        }
        Ok(())
    }
}

enum Node {
    Group(sciio_hdf5::Group),
    Dataset(Dataset),
}

/// The attributes the reader looks at; a dataset's others (`H5PATH`, `Python.*`) are not read.
const MATLAB_ATTRS: [&str; 5] = [
    "MATLAB_class",
    "MATLAB_empty",
    "MATLAB_fields",
    "MATLAB_object_decode",
    "MATLAB_sparse",
];

impl Node {
    fn attrs(&self) -> Result<Vec<Attribute>> {
        match self {
            Node::Group(g) => g.attrs(),
            Node::Dataset(d) => d.attrs_named(&MATLAB_ATTRS),
        }
    }
}

/// One read of a value tree: tracks the objects being read to refuse reference cycles.
struct Walk<'a> {
    file: &'a Mat73,
    active: HashSet<String>,
    depth: usize,
    /// Ids of the MCOS objects being read (to refuse object reference cycles).
    objects: Vec<u32>,
    /// Outlining ([`Mat73::outline`]): numeric and logical datasets of more than `.0` bytes
    /// in plain cells and structs are described, not read (`.1` collects them).
    outline: Option<(u64, Vec<VarInfo>)>,
}

impl Walk<'_> {
    fn value(&mut self, path: &str) -> Result<MatValue> {
        if self.depth >= MAX_DEPTH {
            return Err(self.file.locate(
                Error::format(format!("values nested deeper than {MAX_DEPTH} levels")),
                path,
            ));
        }
        if !self.active.insert(path.to_string()) {
            return Err(self.file.locate(
                Error::format("reference cycle: a value contains itself"),
                path,
            ));
        }
        self.depth += 1;
        let out = self.value_inner(path).map_err(|e| {
            if e.location().node.is_none() {
                self.file.locate(e, path)
            } else {
                e
            }
        });
        self.depth -= 1;
        self.active.remove(path);
        out
    }

    fn value_inner(&mut self, path: &str) -> Result<MatValue> {
        if let Some(v) = self.small_value(path)? {
            return Ok(v);
        }
        let node = self.file.node(path)?;
        let attrs = node.attrs()?;
        let class = string_attr(&attrs, "MATLAB_class")?;
        match node {
            Node::Group(g) => self.group(&g, class, &attrs),
            Node::Dataset(d) => self.dataset(&d, class, &attrs),
        }
    }

    fn group(
        &mut self,
        g: &sciio_hdf5::Group,
        class: Option<String>,
        attrs: &[Attribute],
    ) -> Result<MatValue> {
        if find(attrs, "MATLAB_sparse").is_some() {
            return self.sparse(g, class.as_deref(), attrs);
        }
        let class = class
            .map(|c| MatClass::from_name(&c))
            .unwrap_or(MatClass::Struct);
        // Function handles and enumerations are decoded from their data: read in full.
        if class != MatClass::Struct && self.outline.is_some() {
            let outline = self.outline.take();
            let value = self.group_value(g, class, attrs);
            self.outline = outline;
            return value;
        }
        self.group_value(g, class, attrs)
    }

    fn group_value(
        &mut self,
        g: &sciio_hdf5::Group,
        class: MatClass,
        attrs: &[Attribute],
    ) -> Result<MatValue> {
        let value = self.structure(g, attrs)?;
        match class {
            MatClass::Struct => Ok(value),
            MatClass::FunctionHandle => Ok(crate::object_values::function_handle(value)),
            other => match self.enumeration(other.name(), &value) {
                Some(decoded) => Ok(decoded),
                None => Ok(MatValue::Opaque(Opaque {
                    class: other.name().to_string(),
                    payload: Some(Box::new(value)),
                    note: "stored as a struct of its properties; kept as stored".into(),
                })),
            },
        }
    }

    fn structure(&mut self, g: &sciio_hdf5::Group, attrs: &[Attribute]) -> Result<MatValue> {
        let listed = g.links()?;
        // Fields are then opened by address.
        self.file.remember(g.path(), &listed);
        let links: Vec<String> = listed
            .into_iter()
            .filter(|l| l.kind == LinkKind::Hard)
            .map(|l| l.name)
            .collect();
        // Fields in MATLAB_fields' order; one it names but the group lacks is an absent value
        // (mat73 reads the rest); members it does not name are fields after those.
        let (fields, absent) = match self.field_names(attrs, g.path())? {
            Some(mut f) => {
                // Sets: structs may have thousands of fields.
                let present: HashSet<&String> = links.iter().collect();
                let absent: HashSet<String> =
                    f.iter().filter(|f| !present.contains(f)).cloned().collect();
                let named: HashSet<String> = f.iter().cloned().collect();
                f.extend(links.iter().filter(|l| !named.contains(*l)).cloned());
                (f, absent)
            }
            None => (links, HashSet::new()),
        };
        let absent_value = |f: &str| {
            MatValue::Opaque(Opaque {
                class: ABSENT_FIELD.to_string(),
                payload: None,
                note: format!(
                    "MATLAB_fields names the field {f:?}, which the struct group {} lacks",
                    g.path()
                ),
            })
        };
        // A struct array stores each field as a dataset of references without MATLAB_class;
        // the first field present tells which layout this is (the others must agree).
        let is_array = match fields.iter().find(|f| !absent.contains(*f)) {
            Some(f) => self.ref_column(&join_path(g.path(), f))?.is_some(),
            None => false,
        };
        if !is_array {
            let mut values = Vec::with_capacity(fields.len());
            for f in &fields {
                if absent.contains(f) {
                    values.push(absent_value(f));
                    continue;
                }
                values.push(self.value(&join_path(g.path(), f))?);
            }
            return Ok(MatValue::Struct(StructArray {
                shape: vec![1, 1],
                fields,
                elements: vec![values],
            }));
        }
        let mut cols: Vec<Option<(Vec<usize>, Vec<u64>)>> = Vec::with_capacity(fields.len());
        for f in &fields {
            if absent.contains(f) {
                cols.push(None);
                continue;
            }
            let col = self.ref_column(&join_path(g.path(), f))?;
            cols.push(Some(col.ok_or_else(|| {
                Error::format(format!(
                    "struct array field {f:?} is not a dataset of references"
                ))
            })?));
        }
        let present: Vec<&(Vec<usize>, Vec<u64>)> = cols.iter().flatten().collect();
        let Some(first) = present.first() else {
            return Err(Error::format("struct array without any field present"));
        };
        let shape = first.0.clone();
        if present.iter().any(|c| c.0 != shape) {
            return Err(Error::format("struct array fields have different shapes"));
        }
        let n = first.1.len();
        let mut elements = Vec::with_capacity(n);
        for i in 0..n {
            let mut row = Vec::with_capacity(fields.len());
            for (j, c) in cols.iter().enumerate() {
                let Some(c) = c else {
                    row.push(absent_value(&fields[j]));
                    continue;
                };
                let from = join_path(g.path(), &fields[j]);
                let target = self.file.resolve(c.1[i], &from)?;
                row.push(self.value(&target)?);
            }
            elements.push(row);
        }
        Ok(MatValue::Struct(StructArray {
            shape,
            fields,
            elements,
        }))
    }

    /// The struct's `MATLAB_fields`: the attribute itself, or — as MATLAB stores field lists of
    /// 4096 characters or more — an object reference to a dataset in `#refs#` holding the
    /// same vlen-of-characters list.
    fn field_names(&self, attrs: &[Attribute], from: &str) -> Result<Option<Vec<String>>> {
        let Some(r) = find(attrs, "MATLAB_fields").and_then(|a| match &a.value {
            AttrValue::Raw(r) if r.ty == H5Type::ObjectRef => Some(r),
            _ => None,
        }) else {
            return fields_attr(attrs);
        };
        let [target] = refs_of(r)[..] else {
            return Err(attr_error("MATLAB_fields", "holds more than one reference"));
        };
        let path = self.file.resolve(target, from)?;
        let names = self.file.h5.dataset(&path)?.read_vlen(None)?;
        Ok(Some(names_of(&names.items)))
    }

    /// A struct-array field: a dataset of references without MATLAB_class, as (MATLAB shape,
    /// references); `None` for anything else.
    fn ref_column(&self, path: &str) -> Result<Option<(Vec<usize>, Vec<u64>)>> {
        let Node::Dataset(d) = self.file.node(path)? else {
            return Ok(None);
        };
        if d.dtype()? != H5Type::ObjectRef || find(&d.attrs()?, "MATLAB_class").is_some() {
            return Ok(None);
        }
        let raw = d.read()?;
        Ok(Some((
            matlab_dims(&raw.shape.iter().map(|&x| x as u64).collect::<Vec<_>>()),
            refs_of(&raw),
        )))
    }

    fn sparse(
        &mut self,
        g: &sciio_hdf5::Group,
        class: Option<&str>,
        attrs: &[Attribute],
    ) -> Result<MatValue> {
        let nrows = uint_attr(attrs, "MATLAB_sparse")?
            .ok_or_else(|| Error::format("MATLAB_sparse is not an integer"))?;
        let f = &self.file.h5;
        let jc_raw = f.dataset(&join_path(g.path(), "jc"))?.read()?;
        let jc = uints(&jc_raw)
            .ok_or_else(|| Error::format("sparse jc is not an unsigned integer array"))?;
        let has_data = g.links()?.iter().any(|l| l.name == "data");
        let (ir, data) = if has_data {
            let ir_raw = f.dataset(&join_path(g.path(), "ir"))?.read()?;
            let ir = uints(&ir_raw)
                .ok_or_else(|| Error::format("sparse ir is not an unsigned integer array"))?;
            let d = f.dataset(&join_path(g.path(), "data"))?.read()?;
            let mut arr = to_ndarray(d)?;
            let n = arr.len();
            arr = arr.reshape(&[n])?;
            if class == Some("logical") {
                arr = to_bool(&arr)?;
            }
            (ir, arr)
        } else {
            let dtype = if class == Some("logical") {
                DType::scalar(ScalarKind::Bool)
            } else {
                DType::scalar(ScalarKind::Float(8))
            };
            (Vec::new(), NdArray::zeroed(dtype, &[0], Order::C)?)
        };
        let ncols = jc
            .len()
            .checked_sub(1)
            .ok_or_else(|| Error::format("sparse jc is empty"))?;
        let nrows = usize::try_from(nrows)
            .map_err(|_| Error::format("MATLAB_sparse row count too large"))?;
        let m = SparseMatrix {
            nrows,
            ncols,
            ir,
            jc,
            data,
        };
        m.check()?;
        Ok(MatValue::Sparse(m))
    }

    fn dataset(
        &mut self,
        d: &Dataset,
        class: Option<String>,
        attrs: &[Attribute],
    ) -> Result<MatValue> {
        let ty = d.dtype()?;
        let class = match class {
            Some(c) => MatClass::from_name(&c),
            None => infer_class(&ty),
        };
        if flag_attr(attrs, "MATLAB_empty") {
            let raw = d.read()?;
            if class == MatClass::Struct {
                if let Some(s) = fieldless_struct(&raw, &self.file.h5.limits())? {
                    return Ok(s);
                }
            }
            let dims = empty_dims(&raw)?;
            let value = empty_value(&class, dims, attrs)?;
            return match class {
                MatClass::Char => with_numpy_text(value, &d.attrs_named(&PYTHON_TEXT_ATTRS)?),
                _ => Ok(value),
            };
        }
        if find(attrs, "MATLAB_object_decode").is_some()
            || matches!(class, MatClass::Object(_) | MatClass::FunctionHandle)
        {
            let raw = d.read()?;
            let payload = to_ndarray(raw).ok().map(|a| Box::new(MatValue::Numeric(a)));
            // MATLAB_object_decode 3: an MCOS object reference, decoded through #subsystem#.
            if let (Ok(Some(3)), MatClass::Object(name), Some(stored)) =
                (uint_attr(attrs, "MATLAB_object_decode"), &class, &payload)
            {
                // Objects are decoded from their data: read in full.
                let outline = self.outline.take();
                let value = self.object_variable(name, (**stored).clone());
                self.outline = outline;
                return Ok(value);
            }
            return Ok(MatValue::Opaque(Opaque {
                class: class.name().to_string(),
                payload,
                note: "MATLAB object stored through the MCOS subsystem (#subsystem#); its properties are not decoded".into(),
            }));
        }
        match class {
            MatClass::Cell => {
                let raw = d.read()?;
                self.cell(raw, d.path())
            }
            MatClass::Struct => Err(Error::format(
                "a struct stored as a dataset without MATLAB_empty",
            )),
            MatClass::Char => {
                let value = data_value(MatClass::Char, read_data(d)?)?;
                with_numpy_text(value, &d.attrs_named(&PYTHON_TEXT_ATTRS)?)
            }
            other => match self.outlined(&other, &d.shape()?, &ty) {
                Some(mark) => Ok(mark),
                None => data_value(other, read_data(d)?),
            },
        }
    }

    /// When outlining, a large numeric or logical dataset described instead of read: its
    /// marker value (see [`Outline::of`]).
    fn outlined(&mut self, class: &MatClass, dims: &[u64], ty: &H5Type) -> Option<MatValue> {
        let (min_bytes, skipped) = self.outline.as_mut()?;
        if class.numeric_kind().is_none() && *class != MatClass::Logical {
            return None;
        }
        let count = dims.iter().fold(1u64, |a, &n| a.saturating_mul(n));
        if count.saturating_mul(ty.size() as u64) <= *min_bytes {
            return None;
        }
        skipped.push(VarInfo {
            name: String::new(),
            class: class.clone(),
            shape: matlab_dims(dims),
            complex: is_complex(ty),
            sparse: false,
        });
        Some(MatValue::Opaque(Opaque {
            class: OUTLINED.into(),
            payload: None,
            note: (skipped.len() - 1).to_string(),
        }))
    }

    /// A cell element or struct field decoded from the file's in-memory image without
    /// libhdf5 (see `File::small_dataset_at`): plain numeric, char, logical and cell
    /// datasets; `None` sends everything else down the libhdf5 path.
    fn small_value(&mut self, path: &str) -> Result<Option<MatValue>> {
        let Some(addr) = self.file.addr_of(path) else {
            return Ok(None);
        };
        let Some((attrs, raw)) = self.file.h5.small_dataset_at(addr) else {
            return Ok(None);
        };
        let special = ["MATLAB_empty", "MATLAB_object_decode", "MATLAB_sparse"];
        if attrs.iter().any(|a| special.contains(&a.name.as_str())) {
            return Ok(None);
        }
        let class = match string_attr(&attrs, "MATLAB_class")? {
            Some(c) => MatClass::from_name(&c),
            None => infer_class(&raw.ty),
        };
        match class {
            MatClass::Cell => self.cell(raw, path).map(Some),
            MatClass::Struct | MatClass::Object(_) | MatClass::FunctionHandle => Ok(None),
            other => {
                let dims: Vec<u64> = raw.shape.iter().map(|&x| x as u64).collect();
                match self.outlined(&other, &dims, &raw.ty) {
                    Some(mark) => Ok(Some(mark)),
                    None => with_numpy_text(data_value(other, raw)?, &attrs).map(Some),
                }
            }
        }
    }

    fn cell(&mut self, raw: RawData, from: &str) -> Result<MatValue> {
        if raw.ty != H5Type::ObjectRef {
            return Err(Error::format(format!(
                "cell data of type {:?}, not object references",
                raw.ty
            )));
        }
        let shape = matlab_dims(&raw.shape.iter().map(|&x| x as u64).collect::<Vec<_>>());
        let refs = refs_of(&raw);
        let mut items = Vec::with_capacity(refs.len());
        for r in refs {
            let target = self.file.resolve(r, from)?;
            items.push(self.value(&target)?);
        }
        Ok(MatValue::Cell(CellArray { shape, items }))
    }
}

/// A char, logical or numeric value from its dataset's data.
/// Bytes of one block of a streamed copy ([`Mat73::copy_plain`]).
const STREAM_BLOCK_BYTES: u64 = 16 << 20;

/// The largest run of whole chunk rows read as one piece ([`Pieces::whole_chunk_rows`]).
const MAX_CHUNK_ROW_BYTES: u64 = 64 << 20;

/// One piece of a streamed copy: decoded on all cores where sciio-hdf5 can (whole rows),
/// else by libhdf5's own pipeline (which reports real corruption itself).
fn read_piece(d: &Dataset, slices: &[sciio_hdf5::Slice]) -> Result<RawData> {
    let whole_rows = slices
        .iter()
        .skip(1)
        .zip(d.shape()?.iter().skip(1))
        .all(|(s, &n)| s.start == 0 && s.count == n);
    if let (true, Some(first)) = (whole_rows, slices.first()) {
        if let Ok(raw) = d.read_rows_parallel(first.start, first.count) {
            return Ok(raw);
        }
    }
    d.read_slices(Some(slices))
}

/// Copies dataset `d` to `out` in stored order as `reading` reads it; `progress` gets the
/// bytes read so far.
fn copy_reading(
    d: &Dataset,
    reading: Reading,
    out: &mut dyn std::io::Write,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let pieces = match reading {
        Reading::Pieces(pieces) => pieces,
        Reading::Bands(bands) => return bands.copy(d, out, progress),
    };
    let mut done = 0u64;
    for slices in pieces {
        let raw = read_piece(d, &slices)?;
        out.write_all(&raw.bytes)
            .map_err(|e| Error::io("cannot write", e))?;
        done += raw.bytes.len() as u64;
        progress(done);
    }
    Ok(())
}

/// What a streamed copy does to the stored bytes on their way out.
#[derive(Debug, Clone, Copy)]
enum Recode {
    /// Nothing: they are numpy's.
    None,
    /// Each number of this many bytes reversed (the other byte order).
    Swap(usize),
    /// Logical bytes made numpy booleans (0 or 1).
    Booleans,
    /// Parts of complex integers made doubles ([`AsDoubles`]).
    Doubles(IntPart),
}

/// A writer passing on parts of complex integers as doubles ([`IntPart::as_doubles`]), a
/// part split between two writes carried over to the next. A part beyond 2^53 fails the
/// write; its error is kept in `failed` for the caller to report (the io error says less).
struct AsDoubles<'a> {
    out: &'a mut dyn std::io::Write,
    part: IntPart,
    carry: Vec<u8>,
    failed: Option<Error>,
}

impl std::io::Write for AsDoubles<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let unit = self.part.size.max(1);
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(buf);
        let whole = bytes.len() - bytes.len() % unit;
        self.carry = bytes.split_off(whole);
        let doubles = self.part.as_doubles(&bytes).map_err(|e| {
            let io = std::io::Error::other(e.message().to_string());
            self.failed = Some(e);
            io
        })?;
        self.out.write_all(&doubles)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A writer passing on bytes with each `unit`-byte number reversed (the other byte order),
/// a number split between two writes carried over to the next.
struct Swapped<'a> {
    out: &'a mut dyn std::io::Write,
    unit: usize,
    carry: Vec<u8>,
}

impl std::io::Write for Swapped<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let unit = self.unit.max(1);
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(buf);
        let whole = bytes.len() - bytes.len() % unit;
        self.carry = bytes.split_off(whole);
        bytes.chunks_exact_mut(unit).for_each(|n| n.reverse());
        self.out.write_all(&bytes)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// How a streamed copy reads a dataset ([`Mat73::copy_plain`]).
#[derive(Debug)]
enum Reading {
    /// Hyperslabs in stored order.
    Pieces(Pieces),
    /// Bands of whole chunk rows too large to hold, through a temporary file.
    Bands(Bands),
}

/// A dataset whose chunk rows (a chunk's thickness along the first axis, whole along the
/// others) are larger than [`MAX_CHUNK_ROW_BYTES`], read a band of one chunk row at a time:
/// windows of whole chunks along the second axis (each chunk decoded once), the band's first
/// row written out as its windows come and the other rows put in place in an unnamed
/// temporary file, then copied out after it. Memory holds one window (about a block).
#[derive(Debug)]
struct Bands {
    shape: Vec<u64>,
    /// Rows of a band (the chunks' thickness along the first axis).
    thick: u64,
    /// Indices of a window along the second axis (a whole number of chunks).
    width: u64,
    /// Bytes of one index along the second axis (the later axes whole).
    inner: u64,
}

impl Bands {
    /// `None` when the data has one axis or a window of one chunk is over a block's 4 times.
    fn plan(shape: &[u64], itemsize: u64, chunk: &[u64], block: u64) -> Option<Bands> {
        if shape.len() < 2 || chunk.len() != shape.len() || chunk[0] == 0 || chunk[1] == 0 {
            return None;
        }
        let inner = shape[2..]
            .iter()
            .try_fold(itemsize, |a, &n| a.checked_mul(n))?;
        let thick = chunk[0].min(shape[0]).max(1);
        let one = thick.checked_mul(chunk[1])?.checked_mul(inner)?;
        if one > block.saturating_mul(4) {
            return None;
        }
        let width = (block / one.max(1)).max(1) * chunk[1];
        Some(Bands {
            shape: shape.to_vec(),
            thick,
            width: width.min(shape[1]),
            inner,
        })
    }

    /// Copies the dataset to `out` in stored order, band by band: the windows are read (and
    /// decoded) on a thread of its own, one ahead, while this one writes the one before.
    fn copy(
        &self,
        d: &Dataset,
        out: &mut dyn std::io::Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        // A rendezvous: the thread reads the next window while this one writes, no more.
        let (ready, windows) = std::sync::mpsc::sync_channel::<Result<Vec<u8>>>(0);
        std::thread::scope(|scope| {
            scope.spawn(move || {
                for (a, height, b, w) in self.windows() {
                    let raw = d.read_slices(Some(&self.window(a, height, b, w)));
                    let failed = raw.is_err();
                    // A dropped receiver (the writer failed) stops the reading.
                    if ready.send(raw.map(|r| r.bytes)).is_err() || failed {
                        return;
                    }
                }
            });
            let written = self.write_windows(&windows, out, progress);
            // Dropping the receiver ends the reading thread at its next window.
            drop(windows);
            written
        })
    }

    /// Every window in order: rows `a..a + height`, indices `b..b + w` along the second axis.
    fn windows(&self) -> impl Iterator<Item = (u64, u64, u64, u64)> + '_ {
        let (rows, cols) = (self.shape[0], self.shape[1]);
        let starts = |end: u64, step: u64| (0..end).step_by(step.max(1) as usize);
        starts(rows, self.thick).flat_map(move |a| {
            let height = self.thick.min(rows - a);
            starts(cols, self.width).map(move |b| (a, height, b, self.width.min(cols - b)))
        })
    }

    /// Writes the windows read by [`Bands::copy`]'s reading thread, as they come: each band's
    /// first row to `out`, its other rows into a temporary file copied out after the band.
    fn write_windows(
        &self,
        windows: &std::sync::mpsc::Receiver<Result<Vec<u8>>>,
        out: &mut dyn std::io::Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let io = |what: &'static str| move |e| Error::io(what, e);
        let temp = tempfile::tempfile().map_err(io("cannot create a temporary file"))?;
        let (rows, cols) = (self.shape[0], self.shape[1]);
        let row_bytes = cols * self.inner;
        let mut done = 0u64;
        let mut window = self.windows();
        let stopped = || Error::invalid_input("internal: the reading thread stopped");
        let mut a = 0;
        while a < rows {
            let height = self.thick.min(rows - a);
            let mut b = 0;
            while b < cols {
                let w = self.width.min(cols - b);
                if window.next() != Some((a, height, b, w)) {
                    return Err(Error::invalid_input("internal: windows out of order"));
                }
                let raw = windows.recv().map_err(|_| stopped())??;
                let segment = (w * self.inner) as usize;
                if raw.len() != segment * height as usize {
                    return Err(Error::truncated("a window of the dataset is short"));
                }
                for (r, part) in raw.chunks_exact(segment).enumerate() {
                    if r == 0 {
                        out.write_all(part).map_err(io("cannot write"))?;
                        done += part.len() as u64;
                        progress(done);
                    } else {
                        let at = (r as u64 - 1) * row_bytes + b * self.inner;
                        write_at(&temp, part, at).map_err(io("cannot write a temporary file"))?;
                    }
                }
                b += w;
            }
            // The band's other rows, from the temporary file.
            let rest = (height - 1) * row_bytes;
            let mut buf = vec![0u8; STREAM_BLOCK_BYTES.min(rest.max(1)) as usize];
            let mut at = 0;
            while at < rest {
                let n = (rest - at).min(buf.len() as u64) as usize;
                read_at(&temp, &mut buf[..n], at).map_err(io("cannot read a temporary file"))?;
                out.write_all(&buf[..n]).map_err(io("cannot write"))?;
                at += n as u64;
                done += n as u64;
                progress(done);
            }
            a += height;
        }
        Ok(())
    }

    /// The hyperslab of rows `a..a + height`, indices `b..b + w` along the second axis.
    fn window(&self, a: u64, height: u64, b: u64, w: u64) -> Vec<sciio_hdf5::Slice> {
        let slice = |start, count| sciio_hdf5::Slice {
            start,
            count,
            step: 1,
        };
        let mut slices = vec![slice(a, height), slice(b, w)];
        slices.extend(self.shape[2..].iter().map(|&n| slice(0, n)));
        slices
    }
}

#[cfg(unix)]
fn write_at(file: &std::fs::File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

#[cfg(unix)]
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn write_at(mut file: &std::fs::File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Seek, Write};
    file.seek(std::io::SeekFrom::Start(offset))?;
    file.write_all(buf)
}

#[cfg(not(unix))]
fn read_at(mut file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek};
    file.seek(std::io::SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

/// The hyperslabs that read a C-order dataset in stored order, each at most a block of bytes
/// (one element row at least) and each one contiguous run of the flat data: the dataset is
/// split along the outermost axis `split` whose inner rows fit a block; every axis before it
/// is taken one index at a time.
#[derive(Debug)]
struct Pieces {
    shape: Vec<u64>,
    split: usize,
    step: u64,
    /// The next piece's index along every axis up to `split` (the last one steps by `step`).
    next: Option<Vec<u64>>,
}

impl Pieces {
    /// `None` when the data fits one block (read it whole) or its size overflows.
    fn plan(shape: &[u64], itemsize: u64, block: u64) -> Option<Pieces> {
        let total = shape.iter().try_fold(itemsize, |a, &n| a.checked_mul(n))?;
        if shape.is_empty() || total <= block {
            return None;
        }
        // Bytes of one index along `axis` (the product of the axes after it).
        let mut row = itemsize;
        for axis in (0..shape.len()).rev() {
            let whole = row.checked_mul(shape[axis])?;
            if whole > block {
                return Some(Pieces {
                    shape: shape.to_vec(),
                    split: axis,
                    step: (block / row.max(1)).clamp(1, shape[axis]),
                    next: Some(vec![0; axis + 1]),
                });
            }
            row = whole;
        }
        None
    }

    /// Pieces of whole chunk rows: runs along the first axis of a multiple of its chunk
    /// size, whole along every other axis (so each is one contiguous run of the flat data
    /// and decodes each of its chunks once), about a block each; `None` when one chunk row
    /// is over [`MAX_CHUNK_ROW_BYTES`] (the data is read whole then).
    fn whole_chunk_rows(shape: &[u64], itemsize: u64, chunk: &[u64], block: u64) -> Option<Pieces> {
        let (&first, &thick) = (shape.first()?, chunk.first()?);
        if chunk.len() != shape.len() || thick == 0 {
            return None;
        }
        let row = shape[1..]
            .iter()
            .try_fold(itemsize, |a, &n| a.checked_mul(n))?;
        let chunk_row = row.checked_mul(thick)?;
        if chunk_row > MAX_CHUNK_ROW_BYTES {
            return None;
        }
        let rows = (block / chunk_row.max(1)).max(1) * thick;
        Some(Pieces {
            shape: shape.to_vec(),
            split: 0,
            step: rows.min(first).max(1),
            next: Some(vec![0]),
        })
    }

    /// Whether reading these pieces decodes each chunk at most twice: every axis before the
    /// split is one chunk thick and a piece spans at least a chunk along the split (only the
    /// chunks at a piece's two ends are shared with its neighbours).
    fn suits_chunks(&self, chunk: &[u64]) -> bool {
        chunk.len() == self.shape.len()
            && chunk[..self.split].iter().all(|&c| c == 1)
            && chunk[self.split] <= self.step
    }
}

impl Iterator for Pieces {
    type Item = Vec<sciio_hdf5::Slice>;

    fn next(&mut self) -> Option<Vec<sciio_hdf5::Slice>> {
        let at = self.next.take()?;
        let slice = |start, count| sciio_hdf5::Slice {
            start,
            count,
            step: 1,
        };
        let mut slices: Vec<_> = at[..self.split].iter().map(|&i| slice(i, 1)).collect();
        let start = at[self.split];
        let count = self.step.min(self.shape[self.split] - start);
        slices.push(slice(start, count));
        slices.extend(self.shape[self.split + 1..].iter().map(|&n| slice(0, n)));
        // Advance like an odometer: the split axis by `step`, the ones before it by one.
        let mut following = at;
        following[self.split] = start + count;
        let mut axis = self.split;
        while following[axis] >= self.shape[axis] {
            following[axis] = 0;
            if axis == 0 {
                return Some(slices);
            }
            axis -= 1;
            following[axis] += 1;
        }
        self.next = Some(following);
        Some(slices)
    }
}

impl Mat73 {
    /// See [`MatFile::python_attrs`].
    fn python_attrs(&self, path: &str) -> Result<Option<PythonAttrs>> {
        let Node::Dataset(d) = self.node(path)? else {
            return Ok(None);
        };
        let attrs = d.attrs_named(&PYTHON_ATTRS)?;
        let Some(type_name) = string_attr(&attrs, "Python.Type")? else {
            return Ok(None);
        };
        let shape = match find(&attrs, "Python.Shape").map(|a| &a.value) {
            Some(AttrValue::Raw(r)) => uints(r),
            _ => None,
        };
        let Some(shape) = shape else {
            return Ok(None);
        };
        Ok(Some(PythonAttrs {
            type_name,
            underlying: string_attr(&attrs, "Python.numpy.UnderlyingType")?.unwrap_or_default(),
            container: string_attr(&attrs, "Python.numpy.Container")?.unwrap_or_default(),
            shape,
            fields: None,
        }))
    }
}

/// hdf5storage's attributes of a leaf value.
const PYTHON_ATTRS: [&str; 4] = [
    "Python.Type",
    "Python.numpy.UnderlyingType",
    "Python.numpy.Container",
    "Python.Shape",
];

/// hdf5storage's attributes that say which numpy text array a char array holds.
const PYTHON_TEXT_ATTRS: [&str; 3] = ["Python.Type", "Python.numpy.UnderlyingType", "Python.Shape"];

/// `value` with the numpy text array hdf5storage's `Python.*` attributes (among `attrs`)
/// say a char array holds ([`CharArray::numpy`]); other values as they are.
fn with_numpy_text(value: MatValue, attrs: &[Attribute]) -> Result<MatValue> {
    let MatValue::Char(mut chars) = value else {
        return Ok(value);
    };
    chars.numpy = numpy_text(attrs, chars.codes.len())?;
    Ok(MatValue::Char(chars))
}

/// The numpy `U`/`S` array of `codes` code units hdf5storage's attributes describe: `None`
/// without them, for other Python types, and when the units are not exactly the strings'
/// (text beyond the BMP stored as UTF-16 pairs: read as MATLAB chars).
fn numpy_text(attrs: &[Attribute], codes: usize) -> Result<Option<NumpyText>> {
    let Some(type_name) = string_attr(attrs, "Python.Type")? else {
        return Ok(None);
    };
    if !matches!(
        type_name.as_str(),
        "numpy.ndarray" | "numpy.str_" | "numpy.bytes_"
    ) {
        return Ok(None);
    }
    let Some(underlying) = string_attr(attrs, "Python.numpy.UnderlyingType")? else {
        return Ok(None);
    };
    let (bytes, bits) = match (
        underlying.strip_prefix("str"),
        underlying.strip_prefix("bytes"),
    ) {
        (Some(bits), _) => (false, bits),
        (_, Some(bits)) => (true, bits),
        _ => return Ok(None),
    };
    let Ok(bits) = bits.parse::<usize>() else {
        return Ok(None);
    };
    let width = if bytes { bits / 8 } else { bits / 32 };
    let shape = match find(attrs, "Python.Shape").map(|a| &a.value) {
        Some(AttrValue::Raw(r)) => {
            uints(r).ok_or_else(|| attr_error("Python.Shape", "is not unsigned integers"))?
        }
        _ => return Ok(None),
    };
    let shape: Vec<usize> = match shape.iter().map(|&d| usize::try_from(d)).collect() {
        Ok(shape) => shape,
        Err(_) => return Ok(None),
    };
    let units = shape.iter().try_fold(width, |a, &d| a.checked_mul(d));
    if width == 0 || units != Some(codes) {
        return Ok(None);
    }
    Ok(Some(NumpyText {
        bytes,
        width,
        shape,
    }))
}

fn data_value(class: MatClass, raw: RawData) -> Result<MatValue> {
    match class {
        MatClass::Char => {
            let shape = matlab_dims(&raw.shape.iter().map(|&x| x as u64).collect::<Vec<_>>());
            if let H5Type::FixedString { size, .. } = raw.ty {
                let chars = crate::byte_strings::chars_of_strings(&shape, size, &raw.bytes)?;
                return Ok(MatValue::Char(chars));
            }
            let codes = uints(&raw).ok_or_else(|| {
                Error::format(format!(
                    "char data of type {:?}, not unsigned integers",
                    raw.ty
                ))
            })?;
            let codes = codes
                .into_iter()
                .map(|c| u32::try_from(c).unwrap_or(0xFFFD))
                .collect();
            Ok(MatValue::Char(CharArray {
                shape,
                codes,
                numpy: None,
            }))
        }
        MatClass::Logical => {
            let arr = to_ndarray(raw)?;
            Ok(MatValue::Logical(to_bool(&arr)?))
        }
        MatClass::Struct => Err(Error::format(
            "a struct stored as a dataset without MATLAB_empty",
        )),
        numeric => {
            // Complex integers come as complex doubles: their parts' type is the class's.
            let parts = integer_complex_parts(&raw.ty)
                .and_then(scalar_of)
                .map(|s| s.kind);
            let arr = to_ndarray(raw)?;
            let kind = arr.dtype().as_scalar().map(|s| s.kind);
            let want = numeric.numeric_kind();
            let ok = match (parts, kind, want) {
                (Some(part), _, Some(w)) => part == w,
                (None, Some(ScalarKind::Complex(n)), Some(ScalarKind::Float(m))) => n == 2 * m,
                (None, Some(k), Some(w)) => k == w,
                _ => false,
            };
            if !ok {
                let stored = kind
                    .and_then(MatClass::of_kind)
                    .map(|c| c.name().to_string())
                    .unwrap_or_else(|| arr.dtype().to_string());
                return Err(Error::format(format!(
                    "MATLAB_class {:?} on {stored} data ({})",
                    numeric.name(),
                    arr.dtype()
                )));
            }
            Ok(MatValue::Numeric(arr))
        }
    }
}

/// Reads a dataset, decompressing chunks on all cores when its filters allow it.
fn read_data(d: &Dataset) -> Result<RawData> {
    // Small data (cell elements, struct fields) is read in one call: asking for the storage
    // layout would cost more libhdf5 calls than the read itself.
    let elems = d
        .shape()?
        .iter()
        .try_fold(1u64, |a, &n| a.checked_mul(n))
        .unwrap_or(u64::MAX);
    if elems <= 1 << 16 {
        return d.read_direct();
    }
    let (layout, _, filters) = d.storage()?;
    if layout == Layout::Chunked && !filters.is_empty() {
        if let Some(&rows) = d.shape()?.first() {
            // sciio-hdf5's parallel chunk decoding is new; when it refuses a chunk, libhdf5's own
            // pipeline decides (and reports real corruption itself).
            if let Ok(raw) = d.read_rows_parallel(0, rows) {
                return Ok(raw);
            }
        }
    }
    d.read()
}

fn empty_value(class: &MatClass, dims: Vec<usize>, attrs: &[Attribute]) -> Result<MatValue> {
    Ok(match class {
        MatClass::Cell => MatValue::Cell(CellArray {
            shape: dims,
            items: Vec::new(),
        }),
        MatClass::Struct => MatValue::Struct(StructArray {
            shape: dims,
            fields: fields_attr(attrs)?.unwrap_or_default(),
            elements: Vec::new(),
        }),
        MatClass::Char => MatValue::Char(CharArray {
            shape: dims,
            codes: Vec::new(),
            numpy: None,
        }),
        MatClass::Logical => MatValue::Logical(NdArray::zeroed(
            DType::scalar(ScalarKind::Bool),
            &dims,
            Order::F,
        )?),
        MatClass::Object(name) if name == "canonical empty" => MatValue::Numeric(NdArray::zeroed(
            DType::scalar(ScalarKind::Float(8)),
            &[0, 0],
            Order::F,
        )?),
        other => match other.numeric_kind() {
            Some(kind) => MatValue::Numeric(NdArray::zeroed(DType::scalar(kind), &dims, Order::F)?),
            None => MatValue::Opaque(Opaque {
                class: other.name().to_string(),
                payload: None,
                note: "empty object".into(),
            }),
        },
    })
}

/// The dimensions stored as the data of an empty value (MATLAB order, as MATLAB and
/// hdf5storage 0.2 write them).
fn empty_dims(raw: &RawData) -> Result<Vec<usize>> {
    let dims = uints(raw).ok_or_else(|| {
        Error::format("MATLAB_empty value whose data is not unsigned integer dimensions")
    })?;
    if dims.len() > 64 {
        return Err(Error::format(format!(
            "MATLAB_empty value with {} dimensions",
            dims.len()
        )));
    }
    let dims: Vec<usize> = dims
        .into_iter()
        .map(|d| usize::try_from(d).unwrap_or(usize::MAX))
        .collect();
    if !dims.contains(&0) {
        // An "empty" with no zero dimension would claim elements it does not hold.
        return Err(Error::format(format!(
            "MATLAB_empty value with non-empty dimensions {dims:?}"
        )));
    }
    Ok(crate::value::at_least_2d(&dims))
}

/// MATLAB dims of an HDF5 shape: reversed (HDF5/C order is MATLAB's transposed).
fn matlab_dims(h5: &[u64]) -> Vec<usize> {
    let dims: Vec<usize> = h5.iter().rev().map(|&d| d as usize).collect();
    crate::value::at_least_2d(&dims)
}

fn infer_class(ty: &H5Type) -> MatClass {
    match ty {
        H5Type::ObjectRef => MatClass::Cell,
        H5Type::FixedString { .. } | H5Type::VarString { .. } => MatClass::Object("string".into()),
        other => match scalar_of(other) {
            Some(s) => MatClass::of_kind(s.kind).unwrap_or(MatClass::Object("unknown".into())),
            None => MatClass::Object("unknown".into()),
        },
    }
}

/// The numpy scalar type of an HDF5 atom (integers, floats, real/imag compounds).
fn scalar_of(ty: &H5Type) -> Option<ScalarType> {
    let order = |o: &sciio_hdf5::ByteOrder| match o {
        sciio_hdf5::ByteOrder::Big => ByteOrder::Big,
        _ => ByteOrder::Little,
    };
    match ty {
        H5Type::Int {
            size,
            signed,
            order: o,
        } if matches!(size, 1 | 2 | 4 | 8) => {
            let kind = if *signed {
                ScalarKind::Int(*size as u8)
            } else {
                ScalarKind::UInt(*size as u8)
            };
            Some(ScalarType::new(
                kind,
                if *size == 1 {
                    ByteOrder::NotApplicable
                } else {
                    order(o)
                },
            ))
        }
        H5Type::Float {
            size: size @ (4 | 8),
            order: o,
            ..
        } => Some(ScalarType::new(ScalarKind::Float(*size as u8), order(o))),
        H5Type::Enum { base, .. } => scalar_of(base),
        other => match other.complex_parts() {
            Some(H5Type::Float {
                size: size @ (4 | 8),
                order: o,
                ..
            }) => Some(ScalarType::new(
                ScalarKind::Complex(2 * *size as u8),
                order(o),
            )),
            _ => None,
        },
    }
}

/// Whether data of HDF5 type `ty` is complex: a compound of a real and an imaginary part
/// (`real`/`imag` as MATLAB writes it, `r`/`i` as h5py does) of floats or, as MATLAB stores
/// its complex integer classes, of integers.
fn is_complex(ty: &H5Type) -> bool {
    ty.complex_parts().is_some() || integer_complex_parts(ty).is_some()
}

/// The integer type of both parts of a complex integer compound (MATLAB's complex int8 ..
/// uint64 in v7.3 files).
fn integer_complex_parts(ty: &H5Type) -> Option<&H5Type> {
    let H5Type::Compound { size, fields } = ty else {
        return None;
    };
    let [re, im] = fields.as_slice() else {
        return None;
    };
    let names = matches!(
        (re.name.as_str(), im.name.as_str()),
        ("real", "imag") | ("r", "i")
    );
    let part = re.ty.size();
    let laid_out = re.offset == 0 && im.offset == part && *size == 2 * part;
    let integer = matches!(
        re.ty,
        H5Type::Int {
            size: 1 | 2 | 4 | 8,
            ..
        }
    );
    (names && laid_out && integer && re.ty == im.ty).then_some(&re.ty)
}

/// The integer type of a part of MATLAB's complex integers in a v7.3 file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IntPart {
    size: usize,
    signed: bool,
    big: bool,
}

impl IntPart {
    /// `part` ([`integer_complex_parts`]) when it is an integer type.
    fn of(part: &H5Type) -> Option<IntPart> {
        let H5Type::Int {
            size,
            signed,
            order,
        } = *part
        else {
            return None;
        };
        let big = matches!(order, sciio_hdf5::ByteOrder::Big);
        Some(IntPart { size, signed, big })
    }

    /// Stored parts (whole ones) as native doubles, as the Level-5 reader and scipy.io give
    /// MATLAB's complex integers (numpy has none): exact up to 32-bit parts; a 64-bit part
    /// beyond 2^53 (not a double exactly) is an error rather than rounded.
    fn as_doubles(self, bytes: &[u8]) -> Result<Vec<u8>> {
        let size = self.size.clamp(1, 8);
        let mut out = Vec::with_capacity(bytes.len() / size * 8);
        for bytes in bytes.chunks_exact(size) {
            let mut word = [0u8; 8];
            match self.big {
                true => {
                    word[8 - size..].copy_from_slice(bytes);
                    word.reverse();
                }
                false => word[..size].copy_from_slice(bytes),
            }
            const LIMIT: u64 = 1 << 53;
            // Sign-extended from its `size` bytes; checked before it is made a double.
            let (value, exact) = match self.signed {
                true => {
                    let shift = 64 - 8 * size as u32;
                    let v = (i64::from_le_bytes(word) << shift) >> shift;
                    (v as f64, v.unsigned_abs() <= LIMIT)
                }
                false => {
                    let v = u64::from_le_bytes(word);
                    (v as f64, v <= LIMIT)
                }
            };
            if !exact {
                return Err(Error::unsupported(format!(
                    "a complex {}-bit integer value beyond 2^53, which a complex double \
                     (numpy's nearest type) cannot hold exactly",
                    8 * size
                )));
            }
            out.extend_from_slice(&value.to_ne_bytes());
        }
        Ok(out)
    }
}

/// Complex integer data (HDF5 shape, C order) as complex doubles ([`IntPart::as_doubles`]).
fn complex_integers_as_doubles(raw: &RawData, part: &H5Type) -> Result<Vec<u8>> {
    let part =
        IntPart::of(part).ok_or_else(|| Error::format("complex integers of a non-integer type"))?;
    part.as_doubles(&raw.bytes)
}

/// Raw HDF5 data (C order, HDF5 shape) as a MATLAB-shaped column-major array, native order.
fn to_ndarray(raw: RawData) -> Result<NdArray> {
    if let Some(part) = integer_complex_parts(&raw.ty) {
        let dims = matlab_dims(&raw.shape.iter().map(|&x| x as u64).collect::<Vec<_>>());
        let bytes = complex_integers_as_doubles(&raw, part)?;
        let dtype = DType::scalar(ScalarKind::Complex(16));
        return NdArray::from_byte_vec(dtype, &dims, Order::F, bytes);
    }
    let scalar = scalar_of(&raw.ty).ok_or_else(|| {
        Error::format(format!(
            "data of HDF5 type {:?}, which no MATLAB class stores",
            raw.ty
        ))
    })?;
    let dims = matlab_dims(&raw.shape.iter().map(|&x| x as u64).collect::<Vec<_>>());
    let arr = NdArray::from_byte_vec(DType::from(scalar), &dims, Order::F, raw.bytes)?;
    Ok(if arr.dtype().is_native() {
        arr
    } else {
        arr.to_native()
    })
}

fn to_bool(arr: &NdArray) -> Result<NdArray> {
    let item = arr.dtype().itemsize();
    let bytes: Vec<u8> = arr
        .as_bytes()
        .chunks(item.max(1))
        .map(|c| u8::from(c.iter().any(|&b| b != 0)))
        .collect();
    NdArray::from_byte_vec(
        DType::scalar(ScalarKind::Bool),
        arr.shape(),
        arr.order(),
        bytes,
    )
}

fn refs_of(raw: &RawData) -> Vec<u64> {
    raw.bytes
        .chunks_exact(8)
        .map(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            u64::from_le_bytes(a)
        })
        .collect()
}

/// Unsigned (or non-negative signed) integers of any width, or `None`.
fn uints(raw: &RawData) -> Option<Vec<u64>> {
    let H5Type::Int {
        size,
        signed,
        order,
    } = &raw.ty
    else {
        return None;
    };
    let big = *order == sciio_hdf5::ByteOrder::Big;
    let mut out = Vec::with_capacity(raw.bytes.len() / (*size).max(1));
    for c in raw.bytes.chunks_exact(*size) {
        let mut b = [0u8; 8];
        let v = match size {
            1 | 2 | 4 | 8 => {
                if big {
                    for (i, &x) in c.iter().rev().enumerate() {
                        b[i] = x;
                    }
                } else {
                    b[..*size].copy_from_slice(c);
                }
                let u = u64::from_le_bytes(b);
                if *signed && (u >> (size * 8 - 1)) & 1 == 1 {
                    return None;
                }
                u
            }
            _ => return None,
        };
        out.push(v);
    }
    Some(out)
}

/// A struct array without fields (`struct()`, MATLAB's `1×1` "empty" struct): MATLAB stores
/// it with `MATLAB_empty` and its non-zero dimensions as data. `None` when some dimension is 0
/// (a true empty, handled with the other empties).
fn fieldless_struct(
    raw: &sciio_hdf5::RawData,
    limits: &sciio_core::Limits,
) -> Result<Option<MatValue>> {
    let Some(dims) = uints(raw) else {
        return Ok(None);
    };
    if dims.is_empty() || dims.len() > 64 || dims.contains(&0) {
        return Ok(None);
    }
    let count = dims
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| Error::format(format!("field-less struct of size {dims:?}")))?;
    let bytes = count.saturating_mul(std::mem::size_of::<Vec<MatValue>>() as u64);
    let count = limits.check_alloc(bytes, "field-less struct array")?
        / std::mem::size_of::<Vec<MatValue>>().max(1);
    let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    Ok(Some(MatValue::Struct(StructArray {
        shape: crate::value::at_least_2d(&shape),
        fields: Vec::new(),
        elements: vec![Vec::new(); count],
    })))
}

fn find<'a>(attrs: &'a [Attribute], name: &str) -> Option<&'a Attribute> {
    attrs.iter().find(|a| a.name == name)
}

fn attr_error(name: &str, what: &str) -> Error {
    Error::new(ErrorKind::Format, format!("attribute {name} {what}"))
}

/// A string attribute (fixed or variable length), `None` when absent.
fn string_attr(attrs: &[Attribute], name: &str) -> Result<Option<String>> {
    let Some(a) = find(attrs, name) else {
        return Ok(None);
    };
    let bytes: Vec<u8> = match &a.value {
        AttrValue::Raw(r) if matches!(r.ty, H5Type::FixedString { .. }) => r.bytes.clone(),
        AttrValue::Vlen(v) if matches!(v.ty, H5Type::VarString { .. }) && v.items.len() == 1 => {
            v.items[0].clone()
        }
        _ => return Err(attr_error(name, "is not a string")),
    };
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Ok(Some(String::from_utf8_lossy(&bytes[..end]).into_owned()))
}

/// An unsigned integer scalar attribute, `None` when absent.
fn uint_attr(attrs: &[Attribute], name: &str) -> Result<Option<u64>> {
    let Some(a) = find(attrs, name) else {
        return Ok(None);
    };
    match &a.value {
        AttrValue::Raw(r) => match uints(r).as_deref() {
            Some([v]) => Ok(Some(*v)),
            _ => Err(attr_error(name, "is not one non-negative integer")),
        },
        _ => Err(attr_error(name, "is not an integer")),
    }
}

fn flag_attr(attrs: &[Attribute], name: &str) -> bool {
    matches!(uint_attr(attrs, name), Ok(Some(v)) if v != 0)
}

/// `MATLAB_fields` (vlen of 1-char strings per field), `None` when absent.
fn fields_attr(attrs: &[Attribute]) -> Result<Option<Vec<String>>> {
    let Some(a) = find(attrs, "MATLAB_fields") else {
        return Ok(None);
    };
    match &a.value {
        AttrValue::Vlen(v) => Ok(Some(names_of(&v.items))),
        AttrValue::Raw(r) if matches!(r.ty, H5Type::FixedString { .. }) => {
            let size = r.ty.size().max(1);
            Ok(Some(
                r.bytes
                    .chunks(size)
                    .map(|c| {
                        String::from_utf8_lossy(c)
                            .trim_end_matches('\0')
                            .to_string()
                    })
                    .collect(),
            ))
        }
        _ => Err(attr_error("MATLAB_fields", "is not a list of field names")),
    }
}

/// Field names from vlen sequences of 1-byte characters.
fn names_of(items: &[Vec<u8>]) -> Vec<String> {
    items
        .iter()
        .map(|b| {
            String::from_utf8_lossy(b)
                .trim_end_matches('\0')
                .to_string()
        })
        .collect()
}

/// Reads every variable of `path` (convenience for [`MatFile::read_all`]).
pub fn read_mat(path: impl AsRef<Path>) -> Result<Vec<(String, MatValue)>> {
    MatFile::open(path)?.read_all()
}

/// A MAT file opened for reading: v7.3 (HDF5), Level 5 (v5, v6, v7) or v4, whichever the
/// first bytes say; every version gives the same [`MatValue`]s.
///
/// ```no_run
/// let mat = sciio_mat::MatFile::open("data.mat")?;
/// println!("MAT {} {:?}", mat.version(), mat.header_text());
/// for v in mat.variables()? {
///     println!("{} {} {:?}", v.name, v.class.name(), v.shape);
/// }
/// let x = mat.read("x")?;
/// # Ok::<(), sciio_core::Error>(())
/// ```
#[derive(Debug)]
pub struct MatFile {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    V73(Box<Mat73>),
    Level5(Box<crate::v5::Mat5File>),
}

impl MatFile {
    /// Opens `path` with default [`Limits`].
    pub fn open(path: impl AsRef<Path>) -> Result<MatFile> {
        Self::open_with_limits(path, Limits::default())
    }

    /// Opens `path`; sizes announced by the file are bounded by `limits`. v7.3 files (and
    /// plain HDF5 files) are read through libhdf5 (files up to 64 MiB in memory); v4 and
    /// Level-5 files are read into memory whole and decoded in pure Rust.
    pub fn open_with_limits(path: impl AsRef<Path>, limits: Limits) -> Result<MatFile> {
        let path = path.as_ref();
        let mut head = Vec::with_capacity(header::USERBLOCK + 8);
        std::fs::File::open(path)
            .and_then(|f| {
                f.take((header::USERBLOCK + 8) as u64)
                    .read_to_end(&mut head)
            })
            .map_err(|e| Error::io("cannot read the file", e).with_file(path))?;
        let inner = match header::classify(&head) {
            MatKind::V73 { .. } | MatKind::PlainHdf5 => {
                Inner::V73(Box::new(Mat73::open_with_limits(path, limits)?))
            }
            _ => Inner::Level5(Box::new(crate::v5::Mat5File::open(path, limits)?)),
        };
        Ok(MatFile { inner })
    }

    /// hdf5storage's `Python.Shape` of the dataset at `path` (`/x`, a dict's `/d/x`): the
    /// numpy shape it stored there, which may drop MATLAB's ones (`(3,)` for a 1×3 row, `()`
    /// for a scalar). `None` for Level-5 and v4 files, groups and datasets without it.
    pub fn python_shape(&self, path: &str) -> Result<Option<Vec<u64>>> {
        Ok(self.python_attrs(path)?.map(|a| a.shape))
    }

    /// hdf5storage's `Python.*` attributes (type, underlying type, container, shape) of the
    /// dataset at `path`, as [`crate::MatWriter::write_with_meta`] takes them: a copy then
    /// reads in hdf5storage as the original did. `None` for Level-5 and v4 files, groups
    /// and datasets without `Python.Type`.
    pub fn python_attrs(&self, path: &str) -> Result<Option<PythonAttrs>> {
        match &self.inner {
            Inner::V73(f) => f.python_attrs(path),
            Inner::Level5(_) => Ok(None),
        }
    }

    /// The file path.
    pub fn path(&self) -> &Path {
        match &self.inner {
            Inner::V73(f) => f.path(),
            Inner::Level5(f) => f.path(),
        }
    }

    /// The MAT version: `7.3`, `7` (Level 5 with compressed variables), `5` (Level 5
    /// uncompressed: v5 and v6) or `4`.
    ///
    /// ```
    /// use sciio_mat::{MatFile, MatValue, MatVersion};
    /// // A Level-5 file by hand: the 128-byte header, then one miMATRIX `x = 1.5`.
    /// let mut bytes = b"MATLAB 5.0 MAT-file".to_vec();
    /// bytes.resize(116, b' ');
    /// bytes.extend_from_slice(&[0; 8]); // no subsystem
    /// bytes.extend_from_slice(b"\x00\x01IM"); // version 0x0100, little-endian writer
    /// let words = |w: &[u32]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    /// bytes.extend(words(&[14, 56])); // miMATRIX of 56 bytes
    /// bytes.extend(words(&[6, 8, 6, 0])); // array flags: class double
    /// bytes.extend(words(&[5, 8, 1, 1])); // dimensions 1x1
    /// bytes.extend(words(&[1 | 1 << 16])); // name "x" (small element)
    /// bytes.extend_from_slice(b"x\0\0\0");
    /// bytes.extend(words(&[9, 8])); // miDOUBLE, 8 bytes
    /// bytes.extend_from_slice(&1.5f64.to_le_bytes());
    /// let path = std::env::temp_dir().join(format!("sciio-v5-doc-{}.mat", std::process::id()));
    /// std::fs::write(&path, &bytes)?;
    /// let mat = MatFile::open(&path)?;
    /// assert_eq!(mat.version(), MatVersion::V5);
    /// assert_eq!(mat.header_text(), Some("MATLAB 5.0 MAT-file"));
    /// assert_eq!(mat.read("x")?, MatValue::from(1.5));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn version(&self) -> crate::MatVersion {
        match &self.inner {
            Inner::V73(_) => crate::MatVersion::V73,
            Inner::Level5(f) => f.version(),
        }
    }

    /// The header text (`MATLAB 7.3 MAT-file, Platform: ...`, `MATLAB 5.0 MAT-file, ...`), or
    /// `None` for a plain HDF5 file or a v4 file (which have none).
    pub fn header_text(&self) -> Option<&str> {
        match &self.inner {
            Inner::V73(f) => f.header_text(),
            Inner::Level5(f) => f.header_text(),
        }
    }

    /// The variable names: v7.3 in the file's (alphabetical) order, older versions in the
    /// order they are stored.
    pub fn names(&self) -> Result<Vec<String>> {
        match &self.inner {
            Inner::V73(f) => f.names(),
            Inner::Level5(f) => Ok(f.names()),
        }
    }

    /// Every variable's class and size (from headers, without reading the data where the
    /// format allows).
    pub fn variables(&self) -> Result<Vec<VarInfo>> {
        self.names()?.into_iter().map(|n| self.info(&n)).collect()
    }

    /// One variable's class and size.
    pub fn info(&self, name: &str) -> Result<VarInfo> {
        match &self.inner {
            Inner::V73(f) => f.info(name),
            Inner::Level5(f) => f.info(name),
        }
    }

    /// Reads variable `name`.
    pub fn read(&self, name: &str) -> Result<MatValue> {
        match &self.inner {
            Inner::V73(f) => f.read(name),
            Inner::Level5(f) => f.read(name),
        }
    }

    /// Variable `name` described for a listing: v7.3 numeric and logical arrays of more
    /// than `min_bytes` inside plain cells and structs are not read (their class, size and
    /// complexity come from their headers, [`Outline::Array`]); everything else is read
    /// ([`Outline::Value`] when nothing was left unread). Level-5 and v4 variables are read
    /// whole (their elements are compressed or packed together).
    pub fn outline(&self, name: &str, min_bytes: u64) -> Result<Outline> {
        match &self.inner {
            Inner::V73(f) => f.outline(name, min_bytes),
            Inner::Level5(f) => f.read(name).map(Outline::Value),
        }
    }

    /// Streams variable `name`'s data to `out` without holding the array, when it is a large
    /// variable holding one numeric array of `dtype` (in the machine's byte order) and MATLAB
    /// size `dims`, real or complex (real and imaginary parts interleaved as numpy holds
    /// them; complex integers, which numpy has none of, as complex doubles — `dtype`
    /// complex128 —, converted a piece at a time), stored in either byte order (each number
    /// reversed as it passes), or a logical one stored in bytes (`dtype` bool: each byte made
    /// 0 or 1 as it passes): MATLAB's column-major bytes, what [`MatFile::read`]'s array
    /// holds in Fortran order. A compressed v7 variable inflates on a second thread while
    /// this one writes (a complex one through two inflaters over its stream, one at its real
    /// part, one at its imaginary part); a v7.3 variable is read a block of its dataset at a
    /// time (16 MiB, chunks decoded on all cores); an uncompressed Level-5 or a v4 one is
    /// read a piece of each part at a time. `Ok(false)`, with nothing written, for any other
    /// variable (logicals of a wider class, numbers stored in a smaller type): read it with
    /// [`MatFile::read`]. A damaged stream found after the first bytes were written is an
    /// error, with `out` incomplete; so is a complex 64-bit integer part beyond 2^53 (the
    /// error [`MatFile::read`] gives: a double cannot hold it exactly), found in the piece
    /// that holds it.
    /// `progress` gets the number of bytes written so far.
    pub fn copy_plain_data(
        &self,
        name: &str,
        dtype: &sciio_core::DType,
        dims: &[usize],
        out: &mut dyn std::io::Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<bool> {
        match &self.inner {
            Inner::V73(f) => f.copy_plain(name, dtype, dims, out, progress),
            Inner::Level5(f) => f.copy_plain(name, dtype, dims, out, progress),
        }
    }

    /// Whether [`MatFile::copy_plain_data`] streams variable `name` as `dtype` and `dims`,
    /// found by cheap checks that read none of its data but a few elements: its header, its
    /// dataset's datatype and attributes (v7.3: its first and last elements read, their
    /// chunks decoded through the filter pipeline), the sizes its headers announce (Level 5:
    /// the real part's length against its size, the zlib stream's first bytes). `Ok(false)`:
    /// not a variable it streams ([`MatFile::read`] reads it); an error, with the file and
    /// the variable: it cannot be read, and why. Damage further inside the data is found
    /// only by reading it.
    pub fn check_plain_data(
        &self,
        name: &str,
        dtype: &sciio_core::DType,
        dims: &[usize],
    ) -> Result<bool> {
        match &self.inner {
            Inner::V73(f) => f.check_plain(name, dtype, dims),
            Inner::Level5(f) => f.check_plain(name, dtype, dims),
        }
    }

    /// Reads every variable, in [`MatFile::names`] order.
    pub fn read_all(&self) -> Result<Vec<(String, MatValue)>> {
        self.names()?
            .into_iter()
            .map(|n| self.read(&n).map(|v| (n, v)))
            .collect()
    }

    /// The limits the file was opened with.
    pub fn limits(&self) -> Limits {
        match &self.inner {
            Inner::V73(f) => f.h5.limits(),
            Inner::Level5(f) => *f.limits(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{AsDoubles, Bands, IntPart, Pieces};

    /// Parts of complex integers written in pieces that split a part (big-endian int16 and
    /// little-endian uint64) come out as the doubles of the whole; a 64-bit part beyond 2^53
    /// fails the write and leaves the reason for the caller.
    #[test]
    fn parts_split_between_writes_become_the_wholes_doubles() {
        use std::io::Write as _;
        let cases: [(IntPart, Vec<u8>, Vec<f64>); 2] = [
            (
                IntPart {
                    size: 2,
                    signed: true,
                    big: true,
                },
                [-300i16, 7, 32767, -32768]
                    .iter()
                    .flat_map(|v| v.to_be_bytes())
                    .collect(),
                vec![-300.0, 7.0, 32767.0, -32768.0],
            ),
            (
                IntPart {
                    size: 8,
                    signed: false,
                    big: false,
                },
                [1u64 << 53, 5]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
                vec![9007199254740992.0, 5.0],
            ),
        ];
        for (part, stored, want) in cases {
            let mut out = Vec::new();
            let mut w = AsDoubles {
                out: &mut out,
                part,
                carry: Vec::new(),
                failed: None,
            };
            for piece in stored.chunks(3) {
                w.write_all(piece).unwrap();
            }
            assert!(w.carry.is_empty() && w.failed.is_none());
            let want: Vec<u8> = want.iter().flat_map(|d| d.to_ne_bytes()).collect();
            assert_eq!(out, want);
        }
        let part = IntPart {
            size: 8,
            signed: true,
            big: false,
        };
        let mut out = Vec::new();
        let mut w = AsDoubles {
            out: &mut out,
            part,
            carry: Vec::new(),
            failed: None,
        };
        let beyond = ((1i64 << 53) + 1).to_le_bytes();
        assert!(w.write_all(&beyond).is_err());
        let reason = w.failed.take().map(|e| e.to_string()).unwrap_or_default();
        assert!(reason.contains("2^53"), "{reason}");
    }

    /// A dataset in chunks two rows thick read band by band (blocks small enough that a
    /// band takes several windows and a short last band) gives the whole read's bytes.
    #[test]
    fn bands_of_thick_chunks_give_the_whole_reads_bytes() {
        let dir = sciio_testkit::tempdir();
        let path = dir.path().join("thick.h5");
        sciio_testkit::run_python(
            "
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('x', data=np.arange(5 * 1000, dtype='<f8').reshape(5, 1000) * 0.5,
                     chunks=(2, 64), compression='gzip')
    f.create_dataset('y', data=np.arange(3 * 300 * 4, dtype='<i4').reshape(3, 300, 4),
                     chunks=(2, 32, 4))
",
            &[path.to_str().unwrap()],
        );
        let file = sciio_hdf5::File::open(&path).unwrap();
        for (name, item, block) in [("x", 8, 2 * 64 * 8 * 3), ("y", 4, 2 * 32 * 16)] {
            let d = file.dataset(name).unwrap();
            let shape = d.shape().unwrap();
            let (_, chunk, _) = d.storage().unwrap();
            let bands = Bands::plan(&shape, item, &chunk.unwrap(), block).expect("bands");
            assert!(bands.width < shape[1], "{name}: one window per band");
            let mut out = Vec::new();
            let mut reported = 0;
            bands.copy(&d, &mut out, &mut |d| reported = d).unwrap();
            let whole = d.read_slices(None).unwrap().bytes;
            assert!(out == whole, "{name}");
            assert_eq!(reported, whole.len() as u64, "{name}");
        }
    }

    /// The flat (C-order) element indices the pieces of `shape` read, in order.
    fn flat_order(shape: &[u64], block: u64) -> Vec<u64> {
        let pieces = Pieces::plan(shape, 8, block).expect("a plan");
        let mut seen = Vec::new();
        for slices in pieces {
            assert!(slices.iter().map(|s| s.count).product::<u64>() * 8 <= block.max(8));
            let mut index = vec![0u64; shape.len()];
            'piece: loop {
                let flat = index
                    .iter()
                    .zip(&slices)
                    .zip(shape)
                    .fold(0, |acc, ((&i, s), &n)| acc * n + s.start + i);
                seen.push(flat);
                for axis in (0..shape.len()).rev() {
                    index[axis] += 1;
                    if index[axis] < slices[axis].count {
                        continue 'piece;
                    }
                    index[axis] = 0;
                }
                break;
            }
        }
        seen
    }

    #[test]
    fn pieces_read_every_element_once_in_stored_order() {
        for (shape, block) in [
            (vec![3u64, 10], 32u64),
            (vec![5, 4, 3], 64),
            (vec![7, 2], 24),
            (vec![2, 3, 5], 8),
            (vec![100], 800 - 8),
        ] {
            let n: u64 = shape.iter().product();
            assert_eq!(
                flat_order(&shape, block),
                (0..n).collect::<Vec<_>>(),
                "{shape:?}"
            );
        }
    }

    #[test]
    fn data_within_a_block_is_not_split() {
        assert!(Pieces::plan(&[4, 4], 8, 128).is_none());
        assert!(Pieces::plan(&[4, 0], 8, 1).is_none());
    }

    #[test]
    fn thick_chunks_are_read_in_runs_of_whole_chunk_rows() {
        // Rows of 32 MiB in chunks two rows thick: pieces of two rows, every element once.
        let shape = [5u64, 1 << 22];
        let pieces = Pieces::whole_chunk_rows(&shape, 8, &[2, 65536], 16 << 20).unwrap();
        let all: Vec<_> = pieces.collect();
        assert_eq!(all.len(), 3);
        for (i, slices) in all.iter().enumerate() {
            assert_eq!(
                (slices[0].start, slices[0].count),
                (2 * i as u64, (5 - 2 * i as u64).min(2))
            );
            assert_eq!((slices[1].start, slices[1].count), (0, 1 << 22));
        }
        // Small rows: as many whole chunk rows as a block holds.
        let small = Pieces::whole_chunk_rows(&[1000, 512], 8, &[3, 64], 1 << 20).unwrap();
        assert_eq!(small.step, 255);
        // One chunk row over the limit: read whole.
        assert!(Pieces::whole_chunk_rows(&[4, 1 << 24], 8, &[2, 1 << 20], 16 << 20).is_none());
    }

    #[test]
    fn chunks_suit_when_outer_axes_are_one_chunk_thick() {
        // Rows of 32 MiB: split along the second axis, 16 MiB (2 Mi elements) at a time.
        let pieces = Pieces::plan(&[64, 1 << 22], 8, 16 << 20).expect("a plan");
        assert_eq!((pieces.split, pieces.step), (1, 1 << 21));
        assert!(pieces.suits_chunks(&[1, 1 << 16]));
        assert!(!pieces.suits_chunks(&[2, 1 << 16]));
        let rows = Pieces::plan(&[1 << 20, 64], 8, 16 << 20).expect("a plan");
        assert_eq!((rows.split, rows.step), (0, 1 << 15));
        assert!(rows.suits_chunks(&[1024, 64]));
    }
}
