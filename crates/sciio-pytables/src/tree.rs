//! The node tree as `ptdump` shows it: class, shape, dtype, chunk shape, filters, title, and
//! optionally attributes. Soft and external links are shown, never followed; a group reached
//! twice through hard links is shown once and then only named (cycles are never entered).

use std::collections::HashMap;

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
