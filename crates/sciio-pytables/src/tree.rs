//! The node tree as `ptdump` shows it: class, shape, dtype, chunk shape, filters, title, and
//! optionally attributes. Soft and external links are shown, never followed; a group reached
//! twice through hard links is shown once and then only named (cycles are never entered).

use std::collections::HashMap;
use std::fmt::Write as _;

use sciio_core::Result;
use sciio_hdf5::{join_path, Filter, H5Type, Layout, LinkKind, ObjectKind};

use crate::attrs::{self, PtAttr, PtFilters};
use crate::PtFile;

/// PyTables' node classes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeClass {
    /// A group (the root group included).
    Group,
    /// A table (1-d compound rows).
    Table,
    /// A contiguous array.
    Array,
    /// A chunked array of fixed shape.
    CArray,
    /// A chunked array extendible along `EXTDIM`.
    EArray,
    /// Rows of variable length.
    VLArray,
    /// A soft link (target path).
    SoftLink(String),
    /// An external link (file, path).
    ExternalLink(String, String),
    /// A group already shown elsewhere in the tree (hard-link cycle or alias): the path it
    /// was first shown at.
    HardLinkAgain(String),
    /// Anything else (the `CLASS` attribute's value, or the HDF5 object kind).
    Unknown(String),
}

/// One node of the tree with the properties `sciio ls` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInfo {
    /// Absolute path.
    pub path: String,
    /// Class.
    pub class: NodeClass,
    /// `TITLE` attribute.
    pub title: Option<String>,
    /// Shape (leaves).
    pub shape: Vec<u64>,
    /// Maximum shape (`None` = unlimited) for leaves.
    pub max_shape: Vec<Option<u64>>,
    /// Element type (leaves).
    pub dtype: Option<H5Type>,
    /// Chunk shape (chunked leaves).
    pub chunk_shape: Option<Vec<u64>>,
    /// The HDF5 filter pipeline (leaves).
    pub filters: Vec<Filter>,
    /// PyTables' `FILTERS` attribute (groups), unpacked.
    pub pt_filters: Option<PtFilters>,
    /// Attributes (filled when asked for).
    pub attrs: Vec<PtAttr>,
    /// Children in name order (groups).
    pub children: Vec<NodeInfo>,
}

impl NodeInfo {
    fn empty(path: &str, class: NodeClass) -> NodeInfo {
        NodeInfo {
            path: path.to_string(),
            class,
            title: None,
            shape: vec![],
            max_shape: vec![],
            dtype: None,
            chunk_shape: None,
            filters: vec![],
            pt_filters: None,
            attrs: vec![],
            children: vec![],
        }
    }

    /// A `ptdump`-like text rendering: one line per node, `-v`-style details indented below
    /// leaves, and attributes when `attrs` (and the tree was read with them).
    pub fn render(&self, attrs: bool) -> String {
        let mut out = String::new();
        self.render_into(&mut out, attrs);
        out
    }

    fn render_into(&self, out: &mut String, show_attrs: bool) {
        let class = match &self.class {
            NodeClass::Group if self.path == "/" => "RootGroup".to_string(),
            NodeClass::SoftLink(t) => format!("SoftLink) -> {t}"),
            NodeClass::ExternalLink(f, p) => format!("ExternalLink) -> {f}:{p}"),
            NodeClass::HardLinkAgain(first) => format!("HardLink) (shown above as {first}"),
            NodeClass::Unknown(c) => c.clone(),
            other => format!("{other:?}"),
        };
        let mut head = class;
        if matches!(
            self.class,
            NodeClass::Table
                | NodeClass::Array
                | NodeClass::CArray
                | NodeClass::EArray
                | NodeClass::VLArray
        ) {
            let dims: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
            let _ = write!(
                head,
                "({}{})",
                dims.join(", "),
                if dims.len() == 1 { "," } else { "" }
            );
            for f in &self.filters {
                let _ = write!(head, ", {}", f.name);
            }
        }
        let title = self
            .title
            .as_deref()
            .map(|t| format!(" '{t}'"))
            .unwrap_or_default();
        let _ = writeln!(out, "{} ({head}){title}", self.path);
        if let Some(t) = &self.dtype {
            let descr = t.numpy_descr().unwrap_or_else(|_| format!("{t:?}"));
            let _ = writeln!(out, "  dtype := {descr}");
        }
        if let Some(c) = &self.chunk_shape {
            let _ = writeln!(out, "  chunkshape := {c:?}");
        }
        if let Some(f) = &self.pt_filters {
            let _ = writeln!(out, "  filters := {f:?}");
        }
        if show_attrs {
            for a in &self.attrs {
                let _ = writeln!(out, "  {}.{} := {}", self.path, a.name, attr_text(a));
            }
        }
        for c in &self.children {
            c.render_into(out, show_attrs);
        }
    }
}

fn attr_text(a: &PtAttr) -> String {
    if let Some(s) = a.as_str() {
        return format!("{s:?}");
    }
    if let Some(i) = a.as_i64() {
        return i.to_string();
    }
    match &a.value {
        crate::PtAttrValue::Pickle(b) => format!("<pickle, {} bytes, not executed>", b.len()),
        crate::PtAttrValue::Data(d) => {
            format!("<{} {:?}>", d.ty.numpy_descr().unwrap_or_default(), d.shape)
        }
        crate::PtAttrValue::Vlen(v) => format!("<vlen {:?}>", v.shape),
        crate::PtAttrValue::Empty(_) => "<empty>".to_string(),
        crate::PtAttrValue::Elements(r) => {
            let items: Vec<String> = r
                .elements
                .iter()
                .map(|e| match e {
                    sciio_hdf5::Element::Reference(t) => reference_text(t),
                    other => format!("{other:?}"),
                })
                .collect();
            format!("<elements {:?}: {}>", r.shape, items.join(", "))
        }
    }
}

/// A reference target as `ls -a` shows it: the path, and a region's selection.
fn reference_text(t: &sciio_hdf5::RefTarget) -> String {
    use sciio_hdf5::{RefTarget, Selection};
    match t {
        RefTarget::Null => "null".to_string(),
        RefTarget::Object(path) => path.clone(),
        RefTarget::Region { path, selection } => match selection {
            Selection::All => format!("{path}[all]"),
            Selection::None => format!("{path}[none]"),
            Selection::Blocks(b) => format!("{path}[{} blocks]", b.len()),
            Selection::Points(p) => format!("{path}[{} points]", p.len()),
        },
    }
}

/// Describes one object (group or leaf) without its children.
pub(crate) fn describe(file: &PtFile, path: &str, with_attrs: bool) -> Result<NodeInfo> {
    let h5 = file.hdf5();
    let info = h5.object_info(path)?;
    let raw_attrs = match info.kind {
        ObjectKind::Group => h5.group(path)?.attrs()?,
        ObjectKind::Dataset => h5.dataset(path)?.attrs()?,
        _ => vec![],
    };
    let attrs = attrs::from_hdf5(h5, raw_attrs)?;
    let find = |n: &str| attrs.iter().find(|a| a.name == n);
    let class_attr = find("CLASS").and_then(|a| a.as_str());
    let title = find("TITLE").and_then(|a| a.as_str());
    let mut node = match info.kind {
        ObjectKind::Group => {
            let mut n = NodeInfo::empty(path, NodeClass::Group);
            n.pt_filters = find("FILTERS")
                .and_then(|a| a.as_i64())
                .map(PtFilters::unpack);
            n
        }
        ObjectKind::Dataset => {
            let ds = h5.dataset(path)?;
            let (shape, max_shape) = ds.extent()?.unwrap_or_default();
            let ty = ds.dtype()?;
            let (layout, chunks, filters) = ds.storage()?;
            let class = match class_attr.as_deref() {
                Some("TABLE") => NodeClass::Table,
                Some("ARRAY") => NodeClass::Array,
                Some("CARRAY") => NodeClass::CArray,
                Some("EARRAY") => NodeClass::EArray,
                Some("VLARRAY") => NodeClass::VLArray,
                Some(other) => NodeClass::Unknown(other.to_string()),
                None => plain_class(&ty, &shape, &max_shape, layout),
            };
            let mut n = NodeInfo::empty(path, class);
            n.shape = shape;
            n.max_shape = max_shape;
            n.dtype = Some(ty);
            n.chunk_shape = chunks;
            n.filters = filters;
            n
        }
        ObjectKind::NamedType => NodeInfo::empty(path, NodeClass::Unknown("NamedType".into())),
        ObjectKind::Other => NodeInfo::empty(path, NodeClass::Unknown("Other".into())),
    };
    node.title = title;
    if with_attrs {
        node.attrs = attrs;
    }
    Ok(node)
}

/// How PyTables classifies a dataset without a `CLASS` attribute.
fn plain_class(ty: &H5Type, shape: &[u64], max: &[Option<u64>], layout: Layout) -> NodeClass {
    if matches!(ty, H5Type::VarLen { .. } | H5Type::VarString { .. }) {
        return NodeClass::VLArray;
    }
    if matches!(ty, H5Type::Compound { .. }) && ty.complex_parts().is_none() && shape.len() == 1 {
        return NodeClass::Table;
    }
    match layout {
        Layout::Chunked if max.iter().any(|m| m.is_none()) => NodeClass::EArray,
        Layout::Chunked => NodeClass::CArray,
        _ => NodeClass::Array,
    }
}

pub(crate) fn walk(file: &PtFile, with_attrs: bool) -> Result<NodeInfo> {
    let mut seen = HashMap::new();
    seen.insert(file.hdf5().object_info("/")?.id, "/".to_string());
    let mut root = describe(file, "/", with_attrs)?;
    fill_children(file, &mut root, with_attrs, &mut seen, 0)?;
    Ok(root)
}

const MAX_DEPTH: usize = 256;

fn fill_children(
    file: &PtFile,
    node: &mut NodeInfo,
    with_attrs: bool,
    seen: &mut HashMap<(u64, [u8; 16]), String>,
    depth: usize,
) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(
            sciio_core::Error::format("groups nested more than 256 levels deep")
                .with_node(&node.path),
        );
    }
    let group = file.hdf5().group(&node.path)?;
    for link in group.links()? {
        let path = join_path(&node.path, &link.name);
        let child = match link.kind {
            LinkKind::Soft { target } => NodeInfo::empty(&path, NodeClass::SoftLink(target)),
            LinkKind::External { file, path: p } => {
                NodeInfo::empty(&path, NodeClass::ExternalLink(file, p))
            }
            LinkKind::Other => NodeInfo::empty(&path, NodeClass::Unknown("UserLink".into())),
            LinkKind::Hard => {
                let info = file.hdf5().object_info(&path)?;
                let first = if info.kind == ObjectKind::Group {
                    seen.get(&info.id).cloned()
                } else {
                    None
                };
                if let Some(first) = first {
                    NodeInfo::empty(&path, NodeClass::HardLinkAgain(first))
                } else {
                    if info.kind == ObjectKind::Group {
                        seen.insert(info.id, path.clone());
                    }
                    let mut c = describe(file, &path, with_attrs)?;
                    if c.class == NodeClass::Group {
                        fill_children(file, &mut c, with_attrs, seen, depth + 1)?;
                    }
                    c
                }
            }
        };
        node.children.push(child);
    }
    Ok(())
}
