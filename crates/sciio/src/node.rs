//! The one neutral tree every format reads into and writes from.
//!
//! A [`Node`] describes what a file holds (names, dtypes, shapes, attributes) without holding
//! the data: the [`File`](crate::File) that produced the tree reads an array's data on request,
//! whole or block by block, so conversions of large files keep memory bounded.

use sciio_core::{DType, NdArray, Order};

/// Shape, dtype and memory order of an array or table, known without reading its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayInfo {
    /// The element type.
    pub dtype: DType,
    /// The shape (empty for a 0-d array).
    pub shape: Vec<usize>,
    /// The memory order of the stored data.
    pub order: Order,
}

impl ArrayInfo {
    /// Number of elements (saturating on absurd shapes).
    pub fn len(&self) -> u64 {
        self.shape
            .iter()
            .fold(1u64, |acc, d| acc.saturating_mul(*d as u64))
    }

    /// True when the array has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the data (saturating).
    pub fn nbytes(&self) -> u64 {
        self.len().saturating_mul(self.dtype.itemsize() as u64)
    }

    /// Whether the array's rows are contiguous in its stored order (C order, or at most one
    /// dimension longer than 1) and it has at least one dimension: it streams by rows.
    #[cfg(any(feature = "mat", feature = "hdf5", feature = "parquet"))]
    pub(crate) fn row_ordered(&self) -> bool {
        !self.shape.is_empty()
            && (self.order == sciio_core::Order::C
                || self.shape.iter().filter(|&&d| d > 1).count() <= 1)
    }

    /// Bytes of one row (every dimension but the first).
    #[cfg(any(feature = "mat", feature = "hdf5", feature = "parquet"))]
    pub(crate) fn row_bytes(&self) -> usize {
        self.shape.iter().skip(1).product::<usize>() * self.dtype.itemsize()
    }

    /// The info of an in-memory array.
    pub fn of(array: &NdArray) -> ArrayInfo {
        ArrayInfo {
            dtype: array.dtype().clone(),
            shape: array.shape().to_vec(),
            order: array.order(),
        }
    }
}

/// What a node is.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum NodeKind {
    /// A group of named children, in file order.
    Group(Vec<Node>),
    /// An n-d array (a `.npy` file, an npz member, an HDF5 dataset).
    Array(ArrayInfo),
    /// A table: a 1-d structured array whose rows are streamed in blocks (PyTables `Table`).
    Table(ArrayInfo),
    /// A data frame (pandas): its column names and row count.
    Frame {
        /// Column labels, in order.
        columns: Vec<String>,
        /// Number of rows.
        rows: u64,
    },
    /// A link to another node (HDF5 soft/external link), by path.
    Link(String),
    /// Something sciio recognises but cannot convert (yet), and why.
    Opaque {
        /// What it is (`"VLArray"`, `"object array"`, ...).
        kind: String,
        /// Why it is opaque.
        reason: String,
    },
}

/// The value of an [`Attribute`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AttrValue {
    /// A value with a numpy layout (a scalar is a 0-d array).
    Array(NdArray),
    /// A value sciio shows but cannot carry over (variable-length, pickled...): what it is.
    Other(String),
}

/// A named attribute of a node (HDF5 attributes, MAT class names...).
#[derive(Debug, Clone)]
pub struct Attribute {
    /// The name.
    pub name: String,
    /// The value.
    pub value: AttrValue,
}

/// How a node's own format describes it, when that says more than the neutral kind and shape:
/// a MATLAB variable's class and MATLAB size (`double`, `[3, 4]`). `sciio ls` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeInfo {
    /// The format's class name (`double`, `char`, `cell`, `struct`...).
    pub class: String,
    /// The format's own dimensions (MATLAB's `size()`).
    pub shape: Vec<usize>,
}

/// One node of the tree: a name, what it is, and its user attributes (format bookkeeping such
/// as PyTables' `CLASS`/`VERSION` is not listed).
#[derive(Debug, Clone)]
pub struct Node {
    /// The node's name inside its parent (`""` for the root).
    pub name: String,
    /// What it is.
    pub kind: NodeKind,
    /// User attributes, in file order.
    pub attrs: Vec<Attribute>,
    /// The format's own class and size of the node (MAT variables), if any.
    pub native: Option<NativeInfo>,
}

/// Links followed one after another before a lookup gives up (a cycle of soft links).
const MAX_LINK_HOPS: usize = 32;

impl Node {
    /// A node without attributes.
    pub fn new(name: impl Into<String>, kind: NodeKind) -> Node {
        Node {
            name: name.into(),
            kind,
            attrs: Vec::new(),
            native: None,
        }
    }

    /// The children of a group (empty for any other node).
    pub fn children(&self) -> &[Node] {
        match &self.kind {
            NodeKind::Group(children) => children,
            _ => &[],
        }
    }

    /// The array info of an `Array` or `Table` node.
    pub fn array_info(&self) -> Option<&ArrayInfo> {
        match &self.kind {
            NodeKind::Array(info) | NodeKind::Table(info) => Some(info),
            _ => None,
        }
    }

    /// A short word for the kind of node (`group`, `array`, `table`, `frame`, `link`, or the
    /// opaque kind).
    pub fn kind_name(&self) -> &str {
        match &self.kind {
            NodeKind::Group(_) => "group",
            NodeKind::Array(_) => "array",
            NodeKind::Table(_) => "table",
            NodeKind::Frame { .. } => "frame",
            NodeKind::Link(_) => "link",
            NodeKind::Opaque { kind, .. } => kind,
        }
    }

    /// Finds a descendant by path: `/a/b`, `a/b` (relative to this node), `/` or `""` for
    /// this node itself. A child whose own name contains `/` (an npz member `g/x`) is found
    /// by its whole name first. Links inside the tree are followed (the path is taken from
    /// this node as the root); a link that leads nowhere in the tree is found as itself.
    ///
    /// ```
    /// use sciio::{Node, NodeKind};
    /// let leaf = Node::new("x", NodeKind::Link("/y".into()));
    /// let group = Node::new("g", NodeKind::Group(vec![leaf]));
    /// let root = Node::new("", NodeKind::Group(vec![group]));
    /// assert_eq!(root.find("/g/x").map(|n| n.name.as_str()), Some("x"));
    /// assert!(root.find("/g/nope").is_none());
    /// ```
    pub fn find(&self, path: &str) -> Option<&Node> {
        self.lookup(self, "", path, 0)
    }

    /// `rest` below `self` (at absolute path `here` under `root`). A link on the way (an HDF5
    /// soft link, or a group reached again through another hard link) is followed to its
    /// target inside the tree, as PyTables and h5py follow them; a link whose target is not
    /// in the tree (external, dangling) is returned itself when it is the last component.
    fn lookup<'a>(
        &'a self,
        root: &'a Node,
        here: &str,
        rest: &str,
        hops: usize,
    ) -> Option<&'a Node> {
        let rest = rest.trim_start_matches('/');
        if rest.is_empty() {
            return Some(self);
        }
        let children = self.children();
        // Children named by their index (MAT cell items, struct array elements: thousands of
        // them, each looked up once) are found at that index, not by a scan.
        let named = |name: &str| {
            name.parse::<usize>()
                .ok()
                .and_then(|i| children.get(i))
                .filter(|c| c.name == name)
                .or_else(|| children.iter().find(|c| c.name == name))
        };
        let (child, remaining) = match named(rest) {
            Some(c) => (c, ""),
            None => {
                let (head, tail) = rest.split_once('/')?;
                (named(head)?, tail)
            }
        };
        if let NodeKind::Link(target) = &child.kind {
            if hops < MAX_LINK_HOPS {
                let abs = if target.starts_with('/') {
                    target.clone()
                } else {
                    format!("{here}/{target}")
                };
                let next = format!("{}/{remaining}", abs.trim_end_matches('/'));
                if let Some(found) = root.lookup(root, "", &next, hops + 1) {
                    return Some(found);
                }
            }
            return remaining.trim_matches('/').is_empty().then_some(child);
        }
        let path = format!("{here}/{}", child.name);
        child.lookup(root, &path, remaining, hops)
    }

    /// Every node below this one with its absolute path (`/a/b`), depth first, in file order;
    /// this node itself comes first as `prefix` (use `""` for the root, which prints as `/`).
    pub fn walk(&self, prefix: &str) -> Vec<(String, &Node)> {
        let mut out = Vec::new();
        self.walk_into(prefix, &mut out);
        out
    }

    fn walk_into<'a>(&'a self, path: &str, out: &mut Vec<(String, &'a Node)>) {
        let shown = if path.is_empty() { "/" } else { path };
        out.push((shown.to_string(), self));
        for child in self.children() {
            let child_path = format!("{path}/{}", child.name);
            child.walk_into(&child_path, out);
        }
    }

    /// The array leaves (arrays and tables) below this node, with absolute paths.
    pub fn array_leaves(&self, prefix: &str) -> Vec<(String, &Node)> {
        self.walk(prefix)
            .into_iter()
            .filter(|(_, n)| n.array_info().is_some())
            .collect()
    }
}

/// `x` and `/x` name the same node; the root is `/`.
pub(crate) fn normalise(path: &str) -> String {
    format!("/{}", path.trim_start_matches('/'))
}

/// `rel` (a node path below `base`, or `/` for `base` itself) as a path of the whole tree.
pub(crate) fn join(base: &str, rel: &str) -> String {
    match (base.trim_end_matches('/'), rel) {
        ("", "/") => "/".to_string(),
        (b, "/") => b.to_string(),
        (b, r) => format!("{b}{r}"),
    }
}
