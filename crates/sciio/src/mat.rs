//! MATLAB `.mat` files (v7.3, v7/v6/v5 and v4) in the neutral tree, through `sciio-mat`.
//!
//! Every variable is a node carrying its MATLAB class and MATLAB size
//! ([`Node::native`](crate::Node)). Numeric, logical and char values are array leaves holding
//! what `hdf5storage.loadmat` returns ([`MatValue::to_numpy`]: same shape, row-major; char
//! rows as a `U` scalar, char matrices as a `U` column; in files hdf5storage or sciio wrote,
//! the numpy text arrays and the `(n,)`/`()` shapes of vectors and scalars its `Python.*`
//! attributes record). Cells and structs are groups, so
//! their contents convert leaf by leaf: a scalar struct's fields are `var/field`, a struct
//! array's elements `var/0/field`..., a cell's items `var/0`, `var/1`... in MATLAB's
//! (column-major) linear order. MATLAB objects with a numpy array (`string`, `datetime`,
//! `duration`, `categorical`, enumerations by member name, `missing` as NaN) are leaves;
//! tables (columns by name, then a timetable's row times), `containers.Map` (`keys`,
//! `values` cells) and `calendarDuration` (`months`, `days`, `millis`) are groups of their
//! parts; function handles and other objects are [`NodeKind::Opaque`]. `#refs#` and
//! `#subsystem#` are MATLAB's bookkeeping and never shown. Writing MAT files is in
//! `mat_convert.rs`.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use sciio_core::{DType, Error, ErrorKind, Limits, NdArray, Order, Result, ScalarKind};
use sciio_mat::{
    MatClass, MatFile, MatValue, ObjectData, Outline, SparseKind, SparseMatrix, StructArray,
    VarInfo,
};

use crate::node::{ArrayInfo, AttrValue, Attribute, NativeInfo, Node, NodeKind};

/// An opened MAT file. The cells, structs and objects read to describe them when the file
/// was opened are kept (up to [`KEPT_MAX`] bytes of data in all), so converting their leaves
/// does not read them again; beyond that, the last variable read is kept so that converting
/// the leaves of one cell or struct reads it once.
#[derive(Debug)]
pub(crate) struct Mat {
    file: MatFile,
    kept: HashMap<String, MatValue>,
    cached: Option<(String, MatValue)>,
    /// Leaves whose numpy shape hdf5storage's `Python.Shape` gives ([`take_numpy_shapes`]),
    /// with the MATLAB shape the data is stored in.
    numpy_shapes: HashMap<String, NumpyShape>,
}

/// Bytes of array data of the values kept from opening a MAT file.
const KEPT_MAX: u64 = 256 << 20;

/// Numeric arrays of more bytes than this inside v7.3 cells and structs are described from
/// their headers when a file is opened (listed), and read only when converted.
const OUTLINE_MIN: u64 = 1 << 20;

impl Mat {
    pub(crate) fn open(path: &Path, limits: &Limits) -> Result<(Node, Mat)> {
        let file = MatFile::open_with_limits(path, *limits).map_err(|e| e.with_file(path))?;
        let mut children = Vec::new();
        // Values read to describe them stay for the leaves converted (up to KEPT_MAX; past
        // it, the last one read does: a file of one large cell or struct is decoded once).
        let mut kept = HashMap::new();
        let mut cached = None;
        let mut kept_bytes = 0u64;
        // One variable that cannot be described or read is an opaque node saying why (left
        // out of conversions with that reason); its siblings are listed and converted. A cut
        // or unreadable file, or one where no variable reads, is an error.
        let located = |e: Error, name: &str| e.with_file(path).with_node(format!("/{name}"));
        let mut first_error = None;
        for name in file.names().map_err(|e| e.with_file(path))? {
            let info = match file.info(&name) {
                Ok(info) => info,
                Err(e) if whole_file(&e) => return Err(located(e, &name)),
                Err(e) => {
                    children.push(unreadable(&name, None, &e));
                    first_error.get_or_insert_with(|| located(e, &name));
                    continue;
                }
            };
            let node = match leaf_without_data(&info).filter(|_| described_exactly(&file, &info)) {
                Some(node) => node,
                None => match file.outline(&info.name, OUTLINE_MIN) {
                    // Arrays inside it left unread: read when converted.
                    Ok(
                        outline @ (Outline::Array(_)
                        | Outline::Cell { .. }
                        | Outline::Struct { .. }),
                    ) => outline_node(&info.name, &outline),
                    Ok(Outline::Value(value)) => {
                        let mut node = value_node(&info.name, &value);
                        // Read as complex doubles (numpy has no complex integers), listed
                        // as of MATLAB's class.
                        if let Some(native) =
                            node.native.as_mut().filter(|_| info.is_complex_integer())
                        {
                            native.class = info.class.name().to_string();
                        }
                        let bytes = value_bytes(&value);
                        if kept_bytes.saturating_add(bytes) <= KEPT_MAX {
                            kept_bytes += bytes;
                            kept.insert(info.name.clone(), value);
                        } else {
                            cached = Some((info.name.clone(), value));
                        }
                        node
                    }
                    Err(e) if whole_file(&e) => return Err(located(e, &name)),
                    Err(e) => {
                        let node = unreadable(&name, Some(&info), &e);
                        first_error.get_or_insert_with(|| located(e, &name));
                        node
                    }
                },
            };
            children.push(node);
        }
        if let Some(e) = first_error.filter(|_| children.iter().all(is_unreadable)) {
            return Err(e);
        }
        let mut root = Node::new("", NodeKind::Group(children));
        let mut numpy_shapes = HashMap::new();
        if by_python(&file) {
            take_numpy_shapes(&mut root, "", &file, &mut numpy_shapes);
        }
        let mat = Mat {
            file,
            kept,
            cached,
            numpy_shapes,
        };
        Ok((root, mat))
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
        let numpy_shape = self.numpy_shapes.get(path).map(|s| s.numpy.clone());
        match self.leaf(path)? {
            At::Value(v) => match numpy_shape {
                Some(shape) => v.to_numpy()?.reshape(&shape),
                None => v.to_numpy(),
            },
            At::SparsePart(s, part) => sparse_part(s, part),
            At::Element(..) => Err(Error::mismatch("a struct element is a group, not an array")),
        }
    }

    /// The value (or sparse matrix part) of the leaf at `path`, its variable read once (and
    /// kept for its siblings).
    fn leaf(&mut self, path: &str) -> Result<At<'_>> {
        let mut parts = path.trim_start_matches('/').split('/');
        let var = parts.next().unwrap_or_default();
        let known = self.kept.contains_key(var)
            || self.cached.as_ref().map(|(n, _)| n.as_str()) == Some(var);
        if !known {
            self.cached = None;
            let value = self.file.read(var)?;
            self.cached = Some((var.to_string(), value));
        }
        let value = match (self.kept.get(var), &self.cached) {
            (Some(v), _) => v,
            (None, Some((n, v))) if n == var => v,
            _ => return Err(Error::not_found(format!("no variable '{var}'"))),
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
        // A vector hdf5storage stored 1×n is n values in either order: copied as MATLAB's.
        let numpy_shape = self.numpy_shapes.get(path).cloned();
        let matlab = match &numpy_shape {
            Some(shapes) => ArrayInfo {
                shape: shapes.matlab.clone(),
                ..info.clone()
            },
            None => info.clone(),
        };
        let numpy_shape = numpy_shape.map(|s| s.numpy);
        if unread
            && !var.contains('/')
            && matlab.dtype.is_native()
            && (matlab.order == Order::F || memory_order(&matlab.shape) == Order::C)
            && self
                .file
                .copy_plain_data(var, &matlab.dtype, &matlab.shape, out, progress)?
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
        let reshaped;
        let array = match numpy_shape {
            Some(shape) if array.shape() != shape.as_slice() => {
                reshaped = array.clone().reshape(&shape)?;
                &reshaped
            }
            _ => array,
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

/// Whether the file was written by hdf5storage or sciio (its header says so), whose
/// `Python.*` attributes give numpy's shapes.
fn by_python(file: &MatFile) -> bool {
    file.version() == sciio_mat::MatVersion::V73
        && file
            .header_text()
            .is_some_and(|h| h.contains("hdf5storage") || h.contains("sciio"))
}

/// The numpy shapes hdf5storage gave the numeric and logical vectors and scalars below
/// `node` (at `path`): `Python.Shape` `(n,)` or `()` where MATLAB holds 1×n or 1×1 (the
/// values are the same in either order). The leaves take them, as `hdf5storage.loadmat`
/// returns them, and `shapes` notes them by path. Leaves without the attribute, or not at
/// an HDF5 path of their own (cell items, struct array elements), keep MATLAB's shape.
/// A leaf's numpy shape ([`take_numpy_shapes`]) and the MATLAB shape its data is stored in.
#[derive(Debug, Clone)]
struct NumpyShape {
    numpy: Vec<usize>,
    matlab: Vec<usize>,
}

fn take_numpy_shapes(
    node: &mut Node,
    path: &str,
    file: &MatFile,
    shapes: &mut HashMap<String, NumpyShape>,
) {
    let numeric = node.native.as_ref().is_some_and(|n| {
        let class = MatClass::from_name(&n.class);
        class == MatClass::Logical || class.numeric_kind().is_some()
    });
    match &mut node.kind {
        NodeKind::Group(children) => {
            for child in children {
                let child_path = format!("{path}/{}", child.name);
                take_numpy_shapes(child, &child_path, file, shapes);
            }
        }
        NodeKind::Array(info) if numeric && info.shape.len() == 2 && info.shape[0] == 1 => {
            let Some(shape) = file.python_shape(path).ok().flatten() else {
                return;
            };
            let Ok(shape) = shape
                .iter()
                .map(|&d| usize::try_from(d))
                .collect::<std::result::Result<Vec<usize>, _>>()
            else {
                return;
            };
            let count: usize = info.shape.iter().product();
            if shape.len() <= 1 && shape.iter().product::<usize>() == count {
                let matlab = std::mem::replace(&mut info.shape, shape.clone());
                info.order = Order::C;
                let numpy = shape;
                shapes.insert(path.to_string(), NumpyShape { numpy, matlab });
            }
        }
        _ => {}
    }
}

/// Whether an error is about the whole file (cut short, or failing to read) rather than one
/// variable's content.
pub(crate) fn whole_file(e: &Error) -> bool {
    matches!(e.kind(), ErrorKind::Truncated | ErrorKind::Io)
}

fn is_unreadable(node: &Node) -> bool {
    matches!(&node.kind, NodeKind::Opaque { kind, .. } if kind.ends_with("unreadable") || kind.ends_with("(unreadable)"))
}

/// The node of a variable that cannot be described (`info` `None`) or read: opaque, of its
/// class when known (`unreadable` otherwise), with the error as the reason.
fn unreadable(name: &str, info: Option<&VarInfo>, error: &Error) -> Node {
    let kind = match info {
        Some(info) => format!("{} (unreadable)", info.class.name()),
        None => "unreadable".to_string(),
    };
    let node = Node::new(
        name,
        opaque(&kind, &format!("cannot be read: {}", error.message())),
    );
    match info {
        Some(info) => native(node, &info.class, &info.shape),
        None => node,
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
        // Complex integers (numpy has none): complex doubles, as scipy.io reads them.
        (_, Some(_)) if info.complex => ScalarKind::Complex(16),
        (_, Some(kind)) => kind,
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

/// Whether the variable's values are the doubles [`leaf_without_data`] announces without
/// reading them. Only complex 64-bit integers may not be (a part beyond 2^53 is an error, not
/// a rounded double): a large one the file streams ([`MatFile::check_plain_data`]: checked a
/// piece at a time as it is converted, the conversion stopping at such a part) is described
/// unread; any other is read now, so that one beyond 2^53 is left out with the reason.
fn described_exactly(file: &MatFile, info: &VarInfo) -> bool {
    let wide = matches!(
        info.class.numeric_kind(),
        Some(ScalarKind::Int(8) | ScalarKind::UInt(8))
    );
    if !(wide && info.complex) {
        return true;
    }
    let doubles = DType::scalar(ScalarKind::Complex(16));
    matches!(
        file.check_plain_data(&info.name, &doubles, &info.shape),
        Ok(true)
    )
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

/// The node of a variable outlined when the file was opened: what was read as
/// [`value_node`] makes it, arrays not read from their headers (the same dtype, shape and
/// order reading them gives).
fn outline_node(name: &str, outline: &Outline) -> Node {
    match outline {
        Outline::Value(value) => value_node(name, value),
        Outline::Array(info) => {
            let info = VarInfo {
                name: name.to_string(),
                ..info.clone()
            };
            leaf_without_data(&info).unwrap_or_else(|| {
                let node = Node::new(name, opaque(info.class.name(), "not described"));
                native(node, &info.class, &info.shape)
            })
        }
        Outline::Cell { shape, items } => {
            let items = items
                .iter()
                .enumerate()
                .map(|(i, item)| outline_node(&i.to_string(), item));
            native(
                Node::new(name, NodeKind::Group(items.collect())),
                &MatClass::Cell,
                &sciio_mat::at_least_2d(shape),
            )
        }
        Outline::Struct {
            shape,
            fields,
            elements,
        } => {
            let element = |e: &[Outline]| -> Vec<Node> {
                fields
                    .iter()
                    .zip(e)
                    .map(|(f, o)| outline_node(f, o))
                    .collect()
            };
            let kind = match elements.as_slice() {
                [one] => NodeKind::Group(element(one)),
                many => NodeKind::Group(
                    many.iter()
                        .enumerate()
                        .map(|(i, e)| {
                            let node = Node::new(i.to_string(), NodeKind::Group(element(e)));
                            native(node, &MatClass::Struct, &[1, 1])
                        })
                        .collect(),
                ),
            };
            native(
                Node::new(name, kind),
                &MatClass::Struct,
                &sciio_mat::at_least_2d(shape),
            )
        }
    }
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
        // Tables (columns, a timetable's row times), containers.Map and dictionary (keys,
        // values), calendarDuration (months, days, millis) and a scalar object of another
        // class (its properties, with its class as attribute MATLAB_class) are groups of
        // their parts.
        MatValue::Object(o) if o.has_parts() => {
            let parts = o.parts().into_iter().map(|(part, v)| value_node(part, v));
            let mut node = Node::new(name, NodeKind::Group(parts.collect()));
            if matches!(o.data, ObjectData::Properties(_)) {
                node.attrs.push(class_attribute(&o.class));
            }
            return native(node, &value.class(), &value.matlab_shape());
        }
        // string/datetime/duration/categorical/enumerations/missing have a numpy array;
        // other classes do not.
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
pub(crate) fn sparse_part(s: &SparseMatrix, part: &str) -> Result<NdArray> {
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

/// `MATLAB_class`, the class of an object carried as its properties (an `S` scalar).
fn class_attribute(class: &str) -> Attribute {
    let value = NdArray::from_bytes(
        DType::scalar(ScalarKind::Bytes(class.len().max(1))),
        &[],
        Order::C,
        class.as_bytes(),
    );
    Attribute {
        name: "MATLAB_class".into(),
        value: match value {
            Ok(a) => AttrValue::Array(a),
            Err(_) => AttrValue::Other(class.to_string()),
        },
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
pub(crate) enum At<'a> {
    Value(&'a MatValue),
    Element(&'a StructArray, usize),
    SparsePart(&'a SparseMatrix, &'a str),
}

/// One path step down: a cell item or struct array element by index, a field by name.
pub(crate) fn step<'a>(at: At<'a>, name: &str) -> Option<At<'a>> {
    match at {
        At::Value(MatValue::Cell(c)) => c.items.get(name.parse::<usize>().ok()?).map(At::Value),
        At::Value(MatValue::Struct(s)) if s.elements.len() == 1 => s.field(0, name).map(At::Value),
        At::Value(MatValue::Struct(s)) => {
            let index = name.parse::<usize>().ok()?;
            (index < s.elements.len()).then_some(At::Element(s, index))
        }
        At::Element(s, index) => s.field(index, name).map(At::Value),
        At::Value(MatValue::Object(o)) => o
            .parts()
            .into_iter()
            .find(|(part, _)| *part == name)
            .map(|(_, v)| At::Value(v)),
        At::Value(MatValue::Sparse(s)) => SPARSE_PARTS
            .iter()
            .find(|p| **p == name)
            .map(|p| At::SparsePart(s, p)),
        At::Value(_) | At::SparsePart(..) => None,
    }
}

/// Bytes of array data inside a value (for the conversion summary).
pub(crate) fn value_bytes(value: &MatValue) -> u64 {
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
