//! numpy dtypes and arrays → PyTables nodes (what `sciio convert x.npy out.h5` needs): the
//! HDF5 types PyTables gives each numpy dtype, and the node kind it makes of each array.

use sciio_core::{
    ByteOrder as NpOrder, DType, Error, ErrorKind, NdArray, Order, Result, ScalarKind,
};
use sciio_hdf5::{ByteOrder, CharSet, Field, H5Type, RawData};

use super::{Filters, PtFill, PtGroup, PtTable};

fn order(o: NpOrder) -> ByteOrder {
    match o {
        NpOrder::Big => ByteOrder::Big,
        NpOrder::Little => ByteOrder::Little,
        NpOrder::NotApplicable => ByteOrder::NotApplicable,
    }
}

/// The HDF5 type PyTables stores for numpy dtype `dt`: bool as an 8-bit bitfield (what PyTables 3.x writes), integers and
/// floats in their byte order, `f16` as the x87 long double, complex as `{r, i}`, `S<n>` as a
/// fixed ASCII string, records as compounds at numpy's offsets, subarrays as HDF5 arrays.
/// Unicode, void, datetime and object dtypes have no PyTables column type and are refused.
pub fn h5type_from_dtype(dt: &DType) -> Result<H5Type> {
    Ok(match dt {
        DType::Scalar(s) => {
            let o = order(s.order);
            match s.kind {
                ScalarKind::Bool => H5Type::Bitfield {
                    size: 1,
                    precision: 8,
                    order: ByteOrder::Little,
                },
                ScalarKind::Int(n) => H5Type::Int {
                    size: n.into(),
                    signed: true,
                    order: o,
                },
                ScalarKind::UInt(n) => H5Type::Int {
                    size: n.into(),
                    signed: false,
                    order: o,
                },
                ScalarKind::Float(n) => {
                    let size = usize::from(n);
                    let precision = if size >= 12 { 80 } else { size * 8 };
                    H5Type::Float {
                        size,
                        precision,
                        order: o,
                    }
                }
                ScalarKind::Complex(n) => {
                    let half = usize::from(n) / 2;
                    let precision = if half >= 12 { 80 } else { half * 8 };
                    let f = H5Type::Float {
                        size: half,
                        precision,
                        order: o,
                    };
                    H5Type::Compound {
                        size: 2 * half,
                        fields: vec![
                            Field {
                                name: "r".into(),
                                offset: 0,
                                ty: f.clone(),
                            },
                            Field {
                                name: "i".into(),
                                offset: half,
                                ty: f,
                            },
                        ],
                    }
                }
                ScalarKind::Bytes(n) => H5Type::FixedString {
                    size: n.max(1),
                    charset: CharSet::Ascii,
                },
                ScalarKind::Object => {
                    return Err(Error::new(
                        ErrorKind::Refused,
                        "object arrays hold Python objects: sciio never pickles",
                    ))
                }
                _ => {
                    return Err(Error::unsupported(format!(
                        "numpy dtype {dt} has no PyTables type"
                    )))
                }
            }
        }
        DType::Record(r) => H5Type::Compound {
            size: r.itemsize,
            fields: r
                .fields
                .iter()
                .map(|f| {
                    Ok(Field {
                        name: f.name.clone(),
                        offset: f.offset,
                        ty: h5type_from_dtype(&f.dtype)?,
                    })
                })
                .collect::<Result<_>>()?,
        },
        DType::SubArray(base, dims) => H5Type::Array {
            base: Box::new(h5type_from_dtype(base)?),
            dims: dims.clone(),
        },
    })
}

/// Arrays above this many bytes become CArrays (chunked) even without compression.
pub const CARRAY_THRESHOLD: usize = 64 << 20;

/// Writes `array` as node `name` of `group` the way `sciio convert` does: a 1-d structured
/// array becomes a Table; any other array an Array, or a CArray when `filters` compress or it is
/// larger than [`CARRAY_THRESHOLD`]. Returns the PyTables class written. The array's bytes
/// are written from where they are (no copy) when it is in C order.
pub fn write_ndarray(
    group: &PtGroup,
    name: &str,
    array: &NdArray,
    filters: Option<Filters>,
) -> Result<&'static str> {
    if array.shape().is_empty() {
        let ty =
            h5type_from_dtype(array.dtype()).map_err(|e| e.with_node(super::child(group, name)))?;
        group.create_array(
            name,
            &RawData {
                ty,
                shape: Vec::new(),
                bytes: array.as_bytes().to_vec(),
            },
            "",
        )?;
        return Ok("Array");
    }
    let mut fill = start_ndarray(group, name, array.dtype(), array.shape(), filters)?;
    let class = fill.class();
    let converted;
    let bytes =
        if array.order() == Order::C || array.shape().iter().filter(|&&d| d > 1).count() <= 1 {
            array.as_bytes()
        } else {
            converted = array.to_order(Order::C);
            converted.as_bytes()
        };
    let step = ((8 << 20) / fill.row_bytes().max(1)).max(1) * fill.row_bytes().max(1);
    for block in bytes.chunks(step) {
        fill.append(block)?;
    }
    fill.finish()?;
    Ok(class)
}

/// A node being written row block by row block ([`start_ndarray`]).
#[derive(Debug)]
pub enum NodeFill {
    /// A Table of a 1-d structured array.
    Table(PtTable),
    /// An Array or CArray (the class written).
    Array(PtFill, &'static str),
}

impl NodeFill {
    /// The PyTables class being written.
    pub fn class(&self) -> &'static str {
        match self {
            NodeFill::Table(_) => "Table",
            NodeFill::Array(_, class) => class,
        }
    }

    /// Bytes of one row (a record; an array's every dimension but the first).
    pub fn row_bytes(&self) -> usize {
        match self {
            NodeFill::Table(t) => t.row_type().size(),
            NodeFill::Array(f, _) => f.row_bytes(),
        }
    }

    /// Writes the next whole rows (C order, numpy's layout of the dtype given).
    pub fn append(&mut self, rows: &[u8]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        match self {
            NodeFill::Table(t) => t.append(rows),
            NodeFill::Array(f, _) => f.append(rows),
        }
    }

    /// Writes the next elements (C order, numpy's layout of the dtype given) of an array,
    /// whole rows or pieces of one ([`PtFill::append_elements`]); a Table takes whole rows
    /// only (its row is one record).
    pub fn append_elements(&mut self, bytes: &[u8]) -> Result<()> {
        match self {
            NodeFill::Table(t) => t.append(bytes),
            NodeFill::Array(f, _) => f.append_elements(bytes),
        }
    }

    /// Bytes of one band of chunks (`None`: a contiguous Array).
    pub fn chunk_band_bytes(&self) -> Option<u64> {
        match self {
            NodeFill::Table(t) => t.chunk_band_bytes(),
            NodeFill::Array(f, _) => f.chunk_band_bytes(),
        }
    }

    /// Whether the next rows can be copied file to file ([`NodeFill::copy_from`]).
    pub fn can_copy(&self) -> Result<bool> {
        match self {
            NodeFill::Table(t) => t.can_copy(),
            NodeFill::Array(f, _) => f.can_copy(),
        }
    }

    /// Writes the next `len` bytes of whole rows (C order, numpy's layout of the dtype given)
    /// by copying them from `src` at byte `at` into the file ([`PtFill::copy_from`]).
    pub fn copy_from(&mut self, src: &std::fs::File, at: u64, len: u64) -> Result<()> {
        match self {
            NodeFill::Table(t) => t.copy_from(src, at, len),
            NodeFill::Array(f, _) => f.copy_from(src, at, len),
        }
    }

    /// Finishes the node (an array checks every row was written).
    pub fn finish(self) -> Result<()> {
        match self {
            NodeFill::Table(_) => Ok(()),
            NodeFill::Array(f, _) => f.finish(),
        }
    }
}

/// Starts the node [`write_ndarray`] makes of an array of `dtype` and `shape` (at least one
/// dimension), to be filled row block by row block along the first dimension: sizes are known
/// up front, so the dataset is created at its full size (a Table's chunks sized for its rows).
pub fn start_ndarray(
    group: &PtGroup,
    name: &str,
    dtype: &DType,
    shape: &[usize],
    filters: Option<Filters>,
) -> Result<NodeFill> {
    let node = || super::child(group, name);
    let ty = h5type_from_dtype(dtype).map_err(|e| e.with_node(node()))?;
    let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    if shape.is_empty() {
        return Err(Error::invalid_input("a scalar is written whole").with_node(node()));
    }
    let nbytes = shape.iter().product::<u64>() as usize * dtype.itemsize();
    let active = filters.is_some_and(|f| f.is_active());
    if matches!(ty, H5Type::Compound { .. }) && ty.complex_parts().is_none() {
        if shape.len() != 1 {
            return Err(
                Error::unsupported("only 1-d structured arrays become Tables").with_node(node()),
            );
        }
        let mut b = group.create_table(name, ty).expected_rows(shape[0].max(1));
        if let Some(f) = filters {
            b = b.filters(f);
        }
        if !active {
            // Uncompressed rows can then be copied file to file (NodeFill::copy_from).
            b = b.allocate_early();
        }
        return Ok(NodeFill::Table(b.create()?));
    }
    if (active || nbytes > CARRAY_THRESHOLD) && !shape.contains(&0) {
        let mut b = group.create_carray(name, ty, shape);
        if let Some(f) = filters {
            b = b.filters(f);
        }
        if !active {
            // Uncompressed rows can then be copied file to file (NodeFill::copy_from).
            b = b.allocate_early();
        }
        return Ok(NodeFill::Array(b.fill()?, "CArray"));
    }
    Ok(NodeFill::Array(
        group.create_array_fill(name, ty, &shape)?,
        "Array",
    ))
}
