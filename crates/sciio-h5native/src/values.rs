//! The values sciio reads from HDF5 and writes to it, independent of where they come from:
//! fixed-layout data ([`RawData`]), variable-length data ([`VlenData`]), attributes
//! ([`Attribute`], [`AttrValue`]) and hyperslab selections ([`Slice`]). libhdf5 reads
//! (`file.rs`), the in-memory decoder (`image.rs`) and both writers produce or consume them.

use sciio_core::{DType, NdArray, Order, Result};

use crate::elements::ElementData;
use crate::types::{CharSet, H5Type};

/// Data read in the file's own byte layout: `bytes` holds `shape.product()` elements of `ty`
/// in C order, exactly as numpy would for `ty.numpy_descr()`.
#[derive(Debug, Clone, PartialEq)]
pub struct RawData {
    /// Element type.
    pub ty: H5Type,
    /// Shape (empty for scalars).
    pub shape: Vec<usize>,
    /// Element bytes.
    pub bytes: Vec<u8>,
}

impl RawData {
    /// The data as a C-order [`NdArray`] with the matching numpy dtype (see
    /// [`H5Type::to_dtype`]); an HDF5 array type becomes trailing dimensions, as numpy does.
    pub fn into_ndarray(self) -> Result<NdArray> {
        let (dtype, shape) = match self.ty.to_dtype()? {
            DType::SubArray(base, dims) => {
                let mut shape = self.shape.clone();
                shape.extend(dims);
                (*base, shape)
            }
            other => (other, self.shape.clone()),
        };
        NdArray::from_byte_vec(dtype, &shape, Order::C, self.bytes)
    }

    /// The data as numpy holds it once PyTables or h5py read it: like
    /// [`RawData::into_ndarray`], with [`H5Type::to_numpy_dtype`]'s refusals (odd-sized
    /// numbers, opaque types, references...).
    pub fn into_numpy(self) -> Result<NdArray> {
        let (dtype, dims) = self.ty.to_numpy_element()?;
        let mut shape = self.shape;
        shape.extend_from_slice(dims);
        NdArray::from_byte_vec(dtype, &shape, Order::C, self.bytes)
    }
}

/// Variable-length data: one byte string per element (a vlen string's bytes, or a vlen
/// sequence's elements in the base type's file layout).
#[derive(Debug, Clone, PartialEq)]
pub struct VlenData {
    /// The vlen type (`VarString` or `VarLen`).
    pub ty: H5Type,
    /// Shape (empty for scalars).
    pub shape: Vec<usize>,
    /// One entry per element, C order.
    pub items: Vec<Vec<u8>>,
}

/// A selection along one dimension: `count` indices from `start`, `step` apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    /// First index.
    pub start: u64,
    /// Number of indices.
    pub count: u64,
    /// Distance between indices (≥ 1).
    pub step: u64,
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// Fixed-layout data (numbers, fixed strings, compounds, enums, arrays...).
    Raw(RawData),
    /// Variable-length strings or sequences.
    Vlen(VlenData),
    /// An attribute with a null dataspace (PyTables writes these for `None`-like empties).
    Empty(H5Type),
    /// Compounds or arrays with variable-length members, decoded element by element (read
    /// only: writing them is refused).
    Elements(ElementData),
}

/// An attribute of a group or dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// Attribute name.
    pub name: String,
    /// Its value.
    pub value: AttrValue,
}

impl RawData {
    /// A scalar fixed-length string (UTF-8 charset, as PyTables stores Python `str` values).
    pub fn string(s: &str) -> RawData {
        RawData {
            ty: H5Type::FixedString {
                size: s.len().max(1),
                charset: CharSet::Utf8,
            },
            shape: vec![],
            bytes: pad(s.as_bytes()),
        }
    }

    /// A scalar fixed-length byte string (ASCII charset, as PyTables stores `bytes` values).
    pub fn bytes_string(s: &[u8]) -> RawData {
        RawData {
            ty: H5Type::FixedString {
                size: s.len().max(1),
                charset: CharSet::Ascii,
            },
            shape: vec![],
            bytes: pad(s),
        }
    }

    /// A scalar of a plain type from its file-layout bytes.
    pub fn scalar(ty: H5Type, bytes: Vec<u8>) -> RawData {
        RawData {
            ty,
            shape: vec![],
            bytes,
        }
    }
}

fn pad(s: &[u8]) -> Vec<u8> {
    if s.is_empty() {
        vec![0]
    } else {
        s.to_vec()
    }
}

impl VlenData {
    /// Variable-length UTF-8 strings (h5py's `str` attributes).
    pub fn strings(items: &[&str]) -> VlenData {
        VlenData {
            ty: H5Type::VarString {
                charset: CharSet::Utf8,
            },
            shape: vec![items.len()],
            items: items.iter().map(|s| s.as_bytes().to_vec()).collect(),
        }
    }
}
