//! `.h5 → .h5` copies like `ptrepack`: every group, leaf and user attribute of a PyTables (or
//! plain HDF5) file rewritten by sciio's writer, optionally with new filters.

use std::path::Path;

use sciio_core::{Error, Result};
use sciio_hdf5::{filters::id, AttrValue, Filter, H5Type, Slice};

use super::{Complib, Filters, PtGroup, PtWriter, VlAtom};
use crate::{NodeClass, NodeInfo, PtAttrValue, PtFile, Rows, VlRow};

/// Rows copied per block (bounded memory: about 8 MiB of rows).
const BLOCK_BYTES: u64 = 8 << 20;

/// The `Filters` PyTables derives from a leaf's pipeline (`Filters._from_leaf`).
pub fn filters_from_pipeline(pipeline: &[Filter]) -> Filters {
    let mut f = Filters {
        shuffle: false,
        ..Filters::default()
    };
    for stage in pipeline {
        let cd = |i: usize| stage.cd_values.get(i).copied().unwrap_or(0);
        match stage.id {
            id::SHUFFLE => f.shuffle = true,
            id::FLETCHER32 => f.fletcher32 = true,
            id::DEFLATE => (f.complib, f.complevel) = (Complib::Zlib, cd(0) as u8),
            id::LZO => (f.complib, f.complevel) = (Complib::Lzo, cd(0) as u8),
            id::BZIP2 => (f.complib, f.complevel) = (Complib::Bzip2, cd(0) as u8),
            // h5py's LZF has no level; any level > 0 writes it.
            id::LZF => (f.complib, f.complevel) = (Complib::Lzf, 5),
            id::BLOSC | id::BLOSC2 => {
                let codec = (stage.cd_values.len() > 6)
                    .then(|| sciio_hdf5::write::BloscCodec::from_code(cd(6)))
                    .flatten();
                f.complib = if stage.id == id::BLOSC {
                    Complib::Blosc(codec)
                } else {
                    Complib::Blosc2(codec)
                };
                f.complevel = cd(4) as u8;
                f.shuffle = cd(5) == 1;
                f.bitshuffle = cd(5) == 2;
            }
            _ => {}
        }
    }
    f
}

/// Copies `src` to a new PyTables file `dst`; `filters`, when given, replace every leaf's and
/// group's filters (`None`: each keeps its own). Soft and external links are copied as links.
pub fn repack(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    filters: Option<Filters>,
) -> Result<()> {
    let input = PtFile::open(src.as_ref())?.with_file_layout();
    let tree = input.tree(true)?;
    let out = PtWriter::create_with_title(dst.as_ref(), tree.title.as_deref().unwrap_or(""))?;
    let root = out.root()?;
    copy_user_attrs(&tree, |n, v| root.set_attr(n, v))?;
    copy_children(&input, &tree, &root, filters, GroupFilters::Own)?;
    out.finish()
}

/// What the groups a copy makes record as `FILTERS`.
#[derive(Debug, Clone, Copy)]
enum GroupFilters {
    /// The source group's own (or the new filters), as a whole-file repack keeps them.
    Own,
    /// The filters of the copy (none: no compression), as `ptrepack` writes on every group
    /// it makes when copying one node.
    Copy(Filters),
}

/// Copies the node `src_node` of `src` into a new PyTables file `dst`, as
/// `ptrepack src:src_node dst:dst_node` does:
///
/// - a group: the destination group `dst_node` (default `/`; made with an empty title, its
///   parents as needed) takes the source group's user attributes, and every node below the
///   source group is copied below it: groups with their titles and user attributes, leaves
///   with `TITLE`, `FLAVOR` and user attributes, soft and external links as links (never
///   followed);
/// - a leaf: copied to `dst_node` (default: its own path) with `TITLE`, `FLAVOR` and user
///   attributes.
///
/// Every leaf copied gets `filters` (`None`: no compression, the leaves' own filters are not
/// kept), and every group made records them as `FILTERS`, the root included, as `ptrepack`
/// does. The file's title is empty.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// # let src = dir.path().join("src.h5");
/// use sciio_hdf5::{ByteOrder, H5Type, RawData};
/// use sciio_pytables::write::{repack_node, PtWriter};
/// use sciio_pytables::PtFile;
/// let i4 = H5Type::Int { size: 4, signed: true, order: ByteOrder::Little };
/// let w = PtWriter::create(&src)?;
/// let g = w.root()?.create_group("grp", "a group", None)?;
/// let data = RawData { ty: i4, shape: vec![2], bytes: vec![1, 0, 0, 0, 2, 0, 0, 0] };
/// g.create_array("x", &data, "two ints")?;
/// w.finish()?;
///
/// let dst = dir.path().join("dst.h5");
/// repack_node(&src, "/grp", &dst, Some("/copy"), None)?;
/// let copy = PtFile::open(&dst)?;
/// assert_eq!(copy.node("/copy/x")?.title.as_deref(), Some("two ints"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn repack_node(
    src: impl AsRef<Path>,
    src_node: &str,
    dst: impl AsRef<Path>,
    dst_node: Option<&str>,
    filters: Option<Filters>,
) -> Result<()> {
    let input = PtFile::open(src.as_ref())?.with_file_layout();
    let tree = input.tree(true)?;
    let src_path = format!("/{}", src_node.trim_matches('/'));
    let node = find(&tree, &src_path).ok_or_else(|| {
        Error::not_found("no such node")
            .with_node(&src_path)
            .with_file(src.as_ref())
    })?;
    let group_filters = filters.unwrap_or(Filters {
        shuffle: false,
        ..Filters::default()
    });
    let mode = GroupFilters::Copy(group_filters);
    let out = PtWriter::create(dst.as_ref())?;
    let root = out.root()?;
    let is_group = node.class == NodeClass::Group;
    let dst_path = match dst_node {
        Some(d) => format!("/{}", d.trim_matches('/')),
        None if is_group => "/".to_string(),
        None => src_path.clone(),
    };
    let (parent, name) = match dst_path.rsplit_once('/') {
        Some((p, n)) if is_group || !n.is_empty() => (p, n),
        _ => ("", leaf_name(&src_path)),
    };
    let mut at = root;
    at.set_filters_attr(group_filters)?;
    for part in parent.split('/').filter(|p| !p.is_empty()) {
        at = at.create_group(part, "", Some(group_filters))?;
    }
    if is_group {
        let dst_group = if name.is_empty() {
            at
        } else {
            at.create_group(name, "", Some(group_filters))?
        };
        copy_user_attrs(node, |n, v| dst_group.set_attr(n, v))?;
        copy_children(&input, node, &dst_group, filters, mode)?;
    } else {
        copy_child(&input, node, name, &at, filters, mode)?;
    }
    out.finish()
}

fn find<'t>(tree: &'t NodeInfo, path: &str) -> Option<&'t NodeInfo> {
    if tree.path == path {
        return Some(tree);
    }
    tree.children
        .iter()
        .filter(|c| path.starts_with(c.path.as_str()))
        .find_map(|c| find(c, path))
}

fn user_attrs(node: &NodeInfo) -> impl Iterator<Item = (&str, AttrValue)> {
    node.attrs.iter().filter(|a| !a.system).filter_map(|a| {
        let v = match &a.value {
            PtAttrValue::Data(d) => AttrValue::Raw(d.clone()),
            PtAttrValue::Vlen(d) => AttrValue::Vlen(d.clone()),
            PtAttrValue::Empty(t) => AttrValue::Empty(t.clone()),
            // Pickles are copied as what they are not: skipped (sciio never unpickles).
            PtAttrValue::Pickle(_) => return None,
            // Decoded elements cannot be written back (and references hold addresses in the
            // source file: meaningless in the copy).
            PtAttrValue::Elements(_) => return None,
        };
        Some((a.name.as_str(), v))
    })
}

fn copy_user_attrs(
    node: &NodeInfo,
    mut set: impl FnMut(&str, &AttrValue) -> Result<()>,
) -> Result<()> {
    for (name, v) in user_attrs(node) {
        set(name, &v)?;
    }
    Ok(())
}

fn leaf_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn copy_children(
    input: &PtFile,
    group: &NodeInfo,
    out: &PtGroup,
    filters: Option<Filters>,
    mode: GroupFilters,
) -> Result<()> {
    for child in &group.children {
        copy_child(input, child, leaf_name(&child.path), out, filters, mode)?;
    }
    Ok(())
}

/// Copies the node `child` of `input` into `out` as `name`.
fn copy_child(
    input: &PtFile,
    child: &NodeInfo,
    name: &str,
    out: &PtGroup,
    filters: Option<Filters>,
    mode: GroupFilters,
) -> Result<()> {
    let title = child.title.as_deref().unwrap_or("");
    // A whole-file repack keeps each leaf's filters; ptrepack's node copy gives every leaf
    // the copy's filters (none without --compress), as its destination groups record them.
    let (leaf_filters, vl_filters) = match mode {
        GroupFilters::Own => (
            filters.unwrap_or_else(|| filters_from_pipeline(&child.filters)),
            filters,
        ),
        GroupFilters::Copy(f) => (f, Some(f)),
    };
    match &child.class {
        NodeClass::Group => {
            let own = filters.or_else(|| {
                child.pt_filters.as_ref().map(|p| Filters {
                    complevel: p.complevel,
                    complib: p
                        .complib
                        .as_deref()
                        .and_then(|c| Complib::parse(c).ok())
                        .unwrap_or(Complib::Zlib),
                    shuffle: p.shuffle,
                    bitshuffle: p.bitshuffle,
                    fletcher32: p.fletcher32,
                })
            });
            let gf = match mode {
                GroupFilters::Own => own,
                GroupFilters::Copy(f) => Some(f),
            };
            let g = out.create_group(name, title, gf)?;
            copy_user_attrs(child, |n, v| g.set_attr(n, v))?;
            copy_children(input, child, &g, filters, mode)?;
        }
        NodeClass::Table => copy_table(input, child, out, name, title, leaf_filters)?,
        NodeClass::Array => {
            let data = input.read_array(&child.path, Rows::all())?;
            let ty = child.dtype.clone().unwrap_or(data.ty.clone());
            out.create_array(name, &sciio_hdf5::RawData { ty, ..data }, title)?;
            copy_leaf_attrs(child, out, name)?;
        }
        NodeClass::CArray => {
            let data = input.read_array(&child.path, Rows::all())?;
            let ty = child.dtype.clone().unwrap_or(data.ty.clone());
            let mut b = out
                .create_carray(name, ty, child.shape.clone())
                .title(title)
                .filters(leaf_filters);
            if filters.is_none() {
                if let Some(c) = &child.chunk_shape {
                    b = b.chunk_shape(c.clone());
                }
            }
            b.write(&data.bytes)?;
            copy_leaf_attrs(child, out, name)?;
        }
        NodeClass::EArray => copy_earray(input, child, out, name, title, leaf_filters)?,
        NodeClass::VLArray => copy_vlarray(input, child, out, name, title, vl_filters)?,
        // Copied as links: their targets are kept as written, never followed.
        NodeClass::SoftLink(target) => out.g.create_soft_link(name, target)?,
        NodeClass::ExternalLink(file, path) => out.g.create_external_link(name, file, path)?,
        // Foreign objects and groups met again through hard links are not copied.
        _ => return Ok(()),
    }
    copy_flavor(child, out, name)
}

/// PyTables' `FLAVOR` of a copied leaf, as the source has it (`python` for arrays made from
/// lists; none on most chunked leaves).
fn copy_flavor(node: &NodeInfo, out: &PtGroup, name: &str) -> Result<()> {
    let leaf = matches!(
        node.class,
        NodeClass::Table
            | NodeClass::Array
            | NodeClass::CArray
            | NodeClass::EArray
            | NodeClass::VLArray
    );
    let Some(flavor) = node
        .attrs
        .iter()
        .find(|a| a.name == "FLAVOR")
        .filter(|_| leaf)
    else {
        return Ok(());
    };
    let value = match &flavor.value {
        PtAttrValue::Data(d) => AttrValue::Raw(d.clone()),
        _ => return Ok(()),
    };
    let path = super::child(out, name);
    out.g.file().dataset(&path)?.set_attr("FLAVOR", &value)
}

fn copy_leaf_attrs(node: &NodeInfo, out: &PtGroup, name: &str) -> Result<()> {
    let path = super::child(out, name);
    let ds = out.g.file().dataset(&path)?;
    copy_user_attrs(node, |n, v| ds.set_attr(n, v))
}

fn block_rows(ty: &H5Type, shape: &[u64]) -> u64 {
    let row = ty.size() as u64 * shape.iter().skip(1).product::<u64>();
    (BLOCK_BYTES / row.max(1)).max(1)
}

fn copy_table(
    input: &PtFile,
    node: &NodeInfo,
    out: &PtGroup,
    name: &str,
    title: &str,
    filters: Filters,
) -> Result<()> {
    let ty = node
        .dtype
        .clone()
        .ok_or_else(|| Error::format("a table without a type").with_node(&node.path))?;
    let n = node.shape.first().copied().unwrap_or(0);
    let mut t = out
        .create_table(name, ty.clone())
        .title(title)
        .filters(filters)
        .expected_rows(n.max(1))
        .create()?;
    let step = block_rows(&ty, &node.shape);
    let mut at = 0;
    while at < n {
        let end = (at + step).min(n);
        // The reader hands time64 back as float seconds; append() packs them again.
        let rows = input.read_table(&node.path, Rows::range(at, end, 1))?;
        t.append(&rows.bytes)?;
        at = end;
    }
    copy_user_attrs(node, |k, v| t.set_attr(k, v))
}

fn copy_earray(
    input: &PtFile,
    node: &NodeInfo,
    out: &PtGroup,
    name: &str,
    title: &str,
    filters: Filters,
) -> Result<()> {
    let ty = node
        .dtype
        .clone()
        .ok_or_else(|| Error::format("an EArray without a type").with_node(&node.path))?;
    let extdim = super::extdim_of(input.hdf5(), &node.path)?;
    let n = node.shape[extdim];
    let mut shape = node.shape.clone();
    shape[extdim] = 0;
    let mut e = out
        .create_earray_shaped(name, ty.clone(), shape)?
        .title(title)
        .filters(filters)
        .expected_rows(n.max(1))
        .create()?;
    let row = ty.size() as u64 * (node.shape.iter().product::<u64>() / n.max(1));
    let step = (BLOCK_BYTES / row.max(1)).max(1);
    let ds = input.hdf5().dataset(&node.path)?;
    let mut at = 0;
    while at < n {
        let end = (at + step).min(n);
        // Read in the file's layout (time64 stays packed) and appended as it is.
        let sel: Vec<Slice> = node
            .shape
            .iter()
            .enumerate()
            .map(|(d, &len)| {
                let (start, count) = if d == extdim {
                    (at, end - at)
                } else {
                    (0, len)
                };
                Slice {
                    start,
                    count,
                    step: 1,
                }
            })
            .collect();
        let block = ds.read_slices(Some(&sel))?;
        e.append_file_layout(&block.bytes)?;
        at = end;
    }
    copy_user_attrs(node, |k, v| e.set_attr(k, v))
}

fn copy_vlarray(
    input: &PtFile,
    node: &NodeInfo,
    out: &PtGroup,
    name: &str,
    title: &str,
    filters: Option<Filters>,
) -> Result<()> {
    let pseudo = node
        .attrs
        .iter()
        .find(|a| a.name == "PSEUDOATOM")
        .and_then(|a| match &a.value {
            PtAttrValue::Data(d) => Some(
                String::from_utf8_lossy(&d.bytes)
                    .trim_end_matches('\0')
                    .to_string(),
            ),
            _ => None,
        });
    let atom = match (pseudo.as_deref(), &node.dtype) {
        (Some("vlstring"), _) => VlAtom::VlString,
        (Some("vlunicode"), _) => VlAtom::VlUnicode,
        (_, Some(H5Type::VarLen { base })) => VlAtom::Values((**base).clone()),
        _ => {
            return Err(
                Error::unsupported("this VLArray's atom cannot be copied").with_node(&node.path)
            )
        }
    };
    let f = filters.or_else(|| Some(filters_from_pipeline(&node.filters)));
    let mut v = out.create_vlarray(name, atom, title, f)?;
    for row in input.read_vlarray(&node.path, Rows::all())? {
        match row {
            VlRow::Values(d) => v.append_bytes(&d.bytes)?,
            VlRow::Bytes(b) => v.append_bytes(&b)?,
            VlRow::Text(t) => v.append_text(&t)?,
        }
    }
    copy_user_attrs(node, |k, val| v.set_attr(k, val))
}
