//! HDF5 (PyTables, h5py) files in the neutral tree, read through `sciio-pytables`.
//!
//! HDF5 types map to numpy dtypes as PyTables reads them: integers and floats keep their byte
//! order, the 1-bit bitfield is `|b1`, enums are their base integer, `r`/`i` compounds are
//! complex, other compounds are structured dtypes at the file's offsets, fixed strings are
//! `S<n>`, time32 is `<i4` and time64 `<f8`. Variable-length data, references, opaque types
//! and quad floats have no fixed numpy layout: their nodes are [`NodeKind::Opaque`].

use std::io::Write;
use std::path::Path;

use sciio_core::{
    ByteOrder, DType, Error, Limits, NdArray, Order, RecordType, Result, ScalarKind, ScalarType,
};
use sciio_pytables::sciio_hdf5::{self, H5Type, RawData};
use sciio_pytables::{NodeClass, NodeInfo, PtAttrValue, PtFile, Rows};

use crate::node::{ArrayInfo, AttrValue, Attribute, Node, NodeKind};

mod ptdump;

/// An opened HDF5 file.
#[derive(Debug)]
pub(crate) struct Hdf5 {
    file: PtFile,
}

/// Rows per block when streaming a dataset (bounded memory: blocks of about 8 MiB).
const BLOCK_BYTES: u64 = 8 << 20;

impl Hdf5 {
    pub(crate) fn open(path: &Path, limits: &Limits) -> Result<(Node, Hdf5)> {
        let file = PtFile::open_with_limits(path, *limits).map_err(|e| e.with_file(path))?;
        let info = file.tree(true).map_err(|e| e.with_file(path))?;
        let root = to_node(&info, "");
        Ok((root, Hdf5 { file }))
    }

    /// The PyTables file.
    #[cfg(feature = "hdfstore")]
    pub(crate) fn pytables(&self) -> &PtFile {
        &self.file
    }

    /// The tree from `path` down as PyTables' `ptdump` lists it (`ptdump -a` with `attrs`).
    pub(crate) fn ptdump(&self, path: &str, attrs: bool) -> Result<String> {
        let root = self.file.tree(attrs)?;
        let node = find_info(&root, path)
            .ok_or_else(|| Error::not_found("no such node").with_node(path))?;
        Ok(ptdump::render(node, attrs))
    }

    pub(crate) fn read_array(&self, path: &str) -> Result<NdArray> {
        let data = self.file.read(path)?;
        let raw = match data {
            sciio_pytables::LeafData::Array(raw) => raw,
            sciio_pytables::LeafData::VlArray(_) => {
                return Err(Error::unsupported(
                    "a VLArray's rows have no fixed numpy layout",
                ))
            }
            sciio_pytables::LeafData::Elements(_) => {
                return Err(Error::unsupported(
                    "variable-length members or references have no fixed numpy layout",
                ))
            }
        };
        raw_to_ndarray(raw)
    }

    /// Streams the dataset's bytes in numpy C order, row block by row block.
    pub(crate) fn copy_array_data(
        &self,
        path: &str,
        info: &ArrayInfo,
        out: &mut dyn Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let rows = info.shape.first().copied().unwrap_or(1) as u64;
        let row_bytes = if info.shape.is_empty() {
            info.nbytes()
        } else {
            info.nbytes() / rows.max(1)
        };
        let per_block = (BLOCK_BYTES / row_bytes.max(1)).max(1);
        let is_table = self.file.node(path)?.class == NodeClass::Table;
        let mut done = 0u64;
        let mut start = 0u64;
        while start < rows || (info.shape.is_empty() && start == 0) {
            let stop = (start + per_block).min(rows);
            let raw = if info.shape.is_empty() {
                self.file.read_array(path, Rows::all())?
            } else if is_table {
                self.file.read_table(path, Rows::range(start, stop, 1))?
            } else {
                self.file.read_array(path, Rows::range(start, stop, 1))?
            };
            out.write_all(&raw.bytes)
                .map_err(|e| Error::io("cannot write", e))?;
            done += raw.bytes.len() as u64;
            progress(done);
            if info.shape.is_empty() {
                break;
            }
            start = stop;
        }
        Ok(())
    }
}

/// The node at `path` (`/`-separated, absolute or not) in a tree read with [`PtFile::tree`].
fn find_info<'a>(root: &'a NodeInfo, path: &str) -> Option<&'a NodeInfo> {
    let wanted = format!("/{}", path.trim_matches('/'));
    if wanted == "/" {
        return Some(root);
    }
    let mut node = root;
    while node.path != wanted {
        node = node.children.iter().find(|c| {
            wanted == c.path
                || wanted
                    .strip_prefix(c.path.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })?;
    }
    Some(node)
}

fn to_node(info: &NodeInfo, parent: &str) -> Node {
    let name = info
        .path
        .strip_prefix(parent)
        .unwrap_or(&info.path)
        .trim_start_matches('/')
        .to_string();
    let kind = match &info.class {
        NodeClass::Group => NodeKind::Group(
            info.children
                .iter()
                .map(|c| to_node(c, &info.path))
                .collect(),
        ),
        NodeClass::SoftLink(target) => NodeKind::Link(target.clone()),
        NodeClass::ExternalLink(file, path) => NodeKind::Link(format!("{file}:{path}")),
        NodeClass::HardLinkAgain => NodeKind::Link(info.path.clone()),
        NodeClass::VLArray => NodeKind::Opaque {
            kind: "VLArray".to_string(),
            reason: "rows of variable length".to_string(),
        },
        NodeClass::Table => leaf_kind(info, true),
        _ => leaf_kind(info, false),
    };
    let mut node = Node::new(name, kind);
    node.attrs = info
        .attrs
        .iter()
        .filter(|a| !a.system)
        .map(|a| Attribute {
            name: a.name.clone(),
            value: match &a.value {
                PtAttrValue::Data(raw) => raw_to_ndarray(raw.clone())
                    .map(AttrValue::Array)
                    .unwrap_or_else(|e| AttrValue::Other(e.message().to_string())),
                PtAttrValue::Vlen(_) => AttrValue::Other("variable-length value".to_string()),
                PtAttrValue::Empty(_) => AttrValue::Other("empty (null dataspace)".to_string()),
                PtAttrValue::Pickle(_) => {
                    AttrValue::Other("pickled Python object (never unpickled)".to_string())
                }
                PtAttrValue::Elements(r) => {
                    AttrValue::Other(format!("decoded elements {:?}", r.elements))
                }
            },
        })
        .collect();
    node
}

fn leaf_kind(info: &NodeInfo, table: bool) -> NodeKind {
    let Some(ty) = &info.dtype else {
        return NodeKind::Opaque {
            kind: "unknown".to_string(),
            reason: "not a dataset sciio can read".to_string(),
        };
    };
    let mut shape: Vec<usize> = info.shape.iter().map(|&d| d as usize).collect();
    let dtype = match top_dtype(ty, &mut shape) {
        Ok(dtype) => dtype,
        Err(e) => {
            return NodeKind::Opaque {
                kind: "dataset".to_string(),
                reason: e.message().to_string(),
            }
        }
    };
    let info = ArrayInfo {
        dtype,
        shape,
        order: Order::C,
    };
    if table {
        NodeKind::Table(info)
    } else {
        NodeKind::Array(info)
    }
}

/// A dataset's element type; an array type at the top folds its dims into the shape, as
/// numpy does.
fn top_dtype(ty: &H5Type, shape: &mut Vec<usize>) -> Result<DType> {
    match ty {
        H5Type::Array { base, dims } => {
            shape.extend(dims.iter().copied());
            to_dtype(base)
        }
        other => to_dtype(other),
    }
}

fn order(o: sciio_hdf5::ByteOrder) -> ByteOrder {
    match o {
        sciio_hdf5::ByteOrder::Little => ByteOrder::Little,
        sciio_hdf5::ByteOrder::Big => ByteOrder::Big,
        _ => ByteOrder::NotApplicable,
    }
}

/// The numpy dtype of an HDF5 type (see the module documentation).
pub(crate) fn to_dtype(ty: &H5Type) -> Result<DType> {
    let scalar = |kind, o| Ok(DType::Scalar(ScalarType::new(kind, o)));
    let size8 = |size: usize| u8::try_from(size).map_err(|_| Error::unsupported("type too large"));
    match ty {
        H5Type::Int {
            size: size @ (1 | 2 | 4 | 8),
            signed,
            order: o,
        } => {
            let n = size8(*size)?;
            let kind = if *signed {
                ScalarKind::Int(n)
            } else {
                ScalarKind::UInt(n)
            };
            scalar(kind, order(*o))
        }
        H5Type::Float {
            size: size @ (2 | 4 | 8),
            order: o,
            ..
        }
        | H5Type::Float {
            size: size @ (12 | 16),
            precision: 80 | 64,
            order: o,
        } => scalar(ScalarKind::Float(size8(*size)?), order(*o)),
        H5Type::Bitfield {
            size: 1,
            precision: 1,
            ..
        } => scalar(ScalarKind::Bool, ByteOrder::NotApplicable),
        H5Type::Bitfield {
            size: size @ (1 | 2 | 4 | 8),
            order: o,
            ..
        } => scalar(ScalarKind::UInt(size8(*size)?), order(*o)),
        H5Type::Time { size: 4, order: o } => scalar(ScalarKind::Int(4), order(*o)),
        H5Type::Time { size: 8, order: o } => scalar(ScalarKind::Float(8), order(*o)),
        H5Type::FixedString { size, .. } => {
            scalar(ScalarKind::Bytes(*size), ByteOrder::NotApplicable)
        }
        H5Type::Enum { base, .. } => to_dtype(base),
        H5Type::Compound { size, fields } => {
            if let Some(part) = ty.complex_parts() {
                let o = match part {
                    H5Type::Float { order: o, .. } => order(*o),
                    _ => ByteOrder::NotApplicable,
                };
                return scalar(ScalarKind::Complex(size8(*size)?), o);
            }
            let fields = fields
                .iter()
                .map(|f| {
                    let dtype = match &f.ty {
                        H5Type::Array { base, dims } => {
                            DType::SubArray(Box::new(to_dtype(base)?), dims.clone())
                        }
                        other => to_dtype(other)?,
                    };
                    Ok(sciio_core::Field::new(f.name.clone(), f.offset, dtype))
                })
                .collect::<Result<Vec<_>>>()?;
            let dtype = DType::Record(RecordType {
                fields,
                itemsize: *size,
            });
            dtype.validate()?;
            Ok(dtype)
        }
        H5Type::Array { base, dims } => {
            Ok(DType::SubArray(Box::new(to_dtype(base)?), dims.clone()))
        }
        other => Err(Error::unsupported(format!(
            "HDF5 type {other:?} has no fixed-size numpy dtype"
        ))),
    }
}

fn raw_to_ndarray(raw: RawData) -> Result<NdArray> {
    let mut shape = raw.shape.clone();
    let dtype = top_dtype(&raw.ty, &mut shape)?;
    NdArray::from_bytes(dtype, &shape, Order::C, &raw.bytes)
}
