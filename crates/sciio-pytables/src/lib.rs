//! PyTables files for sciio (read and write): the node tree (`Group`, `Table`, `Array`, `CArray`,
//! `EArray`, `VLArray`, soft and external links), attributes (pickles exposed as marked raw
//! bytes, never executed), and data — a Table reads as structured rows in the file's own layout
//! (names, offsets, nested fields and byte order preserved), columns by path (`a/b`), row
//! ranges with a step.
//!
//! Plain HDF5 files without PyTables attributes are read the way PyTables reads them:
//! contiguous → Array, chunked → CArray (EArray when a dimension is unlimited), 1-d compound →
//! Table, vlen → VLArray.
//!
//! ```no_run
//! use sciio_pytables::{PtFile, Rows};
//! let file = PtFile::open("data.h5")?;
//! println!("{}", file.tree(false)?.render(false));
//! let rows = file.read_table("/table", Rows::all())?;
//! let col = file.read_column("/table", "nested/x", Rows::range(0, 10, 2))?;
//! # Ok::<(), sciio_core::Error>(())
//! ```
// Input never reaches a panic: errors are returned (tests may unwrap).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable
    )
)]
#![forbid(unsafe_code)]

mod attrs;
mod ptdump;
mod time;
mod tree;
pub mod write;

use std::path::Path;

use sciio_core::{Error, ErrorKind, Limits, Result};
use sciio_hdf5::{Dataset, ElementData, File, H5Type, Packing, RawData, Relayout, Slice};

pub use attrs::{is_system_attr, PtAttr, PtAttrValue, PtFilters};
pub use sciio_hdf5;
pub use tree::{NodeClass, NodeInfo};

/// A row selection: `start..stop` by `step`, like Python's slice (`stop` = `None`: to the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rows {
    /// First row.
    pub start: u64,
    /// One past the last row (`None`: all rows).
    pub stop: Option<u64>,
    /// Step (≥ 1).
    pub step: u64,
}

impl Rows {
    /// Every row.
    pub fn all() -> Rows {
        Rows {
            start: 0,
            stop: None,
            step: 1,
        }
    }

    /// Rows `start..stop` by `step`.
    pub fn range(start: u64, stop: u64, step: u64) -> Rows {
        Rows {
            start,
            stop: Some(stop),
            step,
        }
    }

    /// The (start, count, step) of this selection over `n` rows (clamped like Python slices).
    fn resolve(&self, n: u64) -> Result<Slice> {
        if self.step == 0 {
            return Err(Error::invalid_input("row step must be at least 1"));
        }
        let stop = self.stop.unwrap_or(n).min(n);
        let start = self.start.min(stop);
        let count = (stop - start).div_ceil(self.step);
        Ok(Slice {
            start,
            count,
            step: self.step,
        })
    }
}

impl Default for Rows {
    fn default() -> Self {
        Rows::all()
    }
}

/// One row of a VLArray.
#[derive(Debug, Clone, PartialEq)]
pub enum VlRow {
    /// Elements of the atom (shape `[n]`, or `[n, ...]` for array atoms).
    Values(RawData),
    /// A `vlstring` row: bytes.
    Bytes(Vec<u8>),
    /// A `vlunicode` row, or a variable-length string element.
    Text(String),
}

/// What a leaf holds.
#[derive(Debug, Clone, PartialEq)]
pub enum LeafData {
    /// Table rows, or an Array/CArray/EArray's elements.
    Array(RawData),
    /// A VLArray's rows.
    VlArray(Vec<VlRow>),
    /// Elements decoded one by one: compounds with variable-length members, references
    /// (dereferenced to their targets' paths). PyTables shows such nodes as `UnImplemented`;
    /// this is h5py's view of them.
    Elements(ElementData),
}

/// A PyTables (or plain HDF5) file opened for reading.
///
/// Data reads the way PyTables' `node.read()` returns it: numbers in the machine's byte order
/// and compounds laid out as PyTables lays them out (see [`sciio_hdf5::Packing`]);
/// [`PtFile::with_file_layout`] keeps the file's own byte order and layout instead.
#[derive(Debug, Clone)]
pub struct PtFile {
    h5: File,
    file_layout: bool,
}

impl PtFile {
    /// Opens `path` with default [`Limits`].
    pub fn open(path: impl AsRef<Path>) -> Result<PtFile> {
        Ok(PtFile {
            h5: File::open(path)?,
            file_layout: false,
        })
    }

    /// Opens `path`; sizes announced by the file are bounded by `limits`.
    pub fn open_with_limits(path: impl AsRef<Path>, limits: Limits) -> Result<PtFile> {
        Ok(PtFile {
            h5: File::open_with_limits(path, limits)?,
            file_layout: false,
        })
    }

    /// This file reading data in the file's own layout: byte order, compound offsets and
    /// element sizes as stored (what a repack copies), instead of PyTables' `read()` layout.
    pub fn with_file_layout(mut self) -> PtFile {
        self.file_layout = true;
        self
    }

    /// Whether data is read in the file's own layout ([`PtFile::with_file_layout`]).
    pub fn reads_file_layout(&self) -> bool {
        self.file_layout
    }

    /// The type data of a leaf with stored type `ty` has after reading: `ty` itself with
    /// [`PtFile::with_file_layout`], else PyTables' layout of it (native byte order, compounds
    /// packed as a `Table` when `table`, as an `Array` otherwise).
    pub fn read_type(&self, ty: &H5Type, table: bool) -> H5Type {
        // IEEE quad floats read as the machine's long double (`Dataset::read`), as PyTables
        // reads them (`<f16`).
        let quad = matches!(
            ty,
            H5Type::Float {
                size: 16,
                precision: 128,
                ..
            }
        );
        if let Some(native) = quad.then(sciio_hdf5::native_long_double).flatten() {
            if native.size() == 16 {
                return native;
            }
        }
        self.relayout(ty, table).target().clone()
    }

    fn relayout(&self, ty: &H5Type, table: bool) -> Relayout {
        let packing = match (self.file_layout, table) {
            (true, _) => Packing::File,
            (false, true) => Packing::Table,
            (false, false) => Packing::Array,
        };
        Relayout::new(ty, !self.file_layout, packing)
    }

    fn to_read_layout(&self, data: RawData, table: bool) -> RawData {
        if self.file_layout {
            return data;
        }
        self.relayout(&data.ty, table).apply(data)
    }

    /// The underlying HDF5 file.
    pub fn hdf5(&self) -> &File {
        &self.h5
    }

    /// The attributes of the node at `path` (group or leaf).
    pub fn attrs(&self, path: &str) -> Result<Vec<PtAttr>> {
        let info = self.h5.object_info(path)?;
        let raw = match info.kind {
            sciio_hdf5::ObjectKind::Group => self.h5.group(path)?.attrs()?,
            _ => self.h5.dataset(path)?.attrs()?,
        };
        attrs::from_hdf5(&self.h5, raw)
    }

    /// The node at `path` without children.
    pub fn node(&self, path: &str) -> Result<NodeInfo> {
        tree::describe(self, path, true)
    }

    /// The whole tree, links shown but never followed (ptdump's view); with `attrs`, every
    /// node carries its attributes.
    pub fn tree(&self, attrs: bool) -> Result<NodeInfo> {
        tree::walk(self, attrs)
    }

    /// Reads a whole leaf.
    pub fn read(&self, path: &str) -> Result<LeafData> {
        let node = self.node(path)?;
        if node.dtype.as_ref().is_some_and(needs_elements) {
            return Ok(LeafData::Elements(self.read_elements(path, Rows::all())?));
        }
        match node.class {
            NodeClass::VLArray => Ok(LeafData::VlArray(self.read_vlarray(path, Rows::all())?)),
            NodeClass::Table => Ok(LeafData::Array(self.read_table(path, Rows::all())?)),
            NodeClass::Array | NodeClass::CArray | NodeClass::EArray | NodeClass::Unknown(_) => {
                Ok(LeafData::Array(self.read_array(path, Rows::all())?))
            }
            other => Err(Error::mismatch(format!("{other:?} is not a leaf"))
                .with_node(path)
                .with_file(self.h5.path())),
        }
    }

    fn dataset(&self, path: &str) -> Result<Dataset> {
        self.h5.dataset(path)
    }

    /// Reads rows of a Table as structured records in the file's layout.
    pub fn read_table(&self, path: &str, rows: Rows) -> Result<RawData> {
        self.read_table_into(path, rows, Vec::new())
    }

    /// [`PtFile::read_table`] reading the rows into `reuse` where it can
    /// ([`sciio_hdf5::Dataset::read_rows_parallel_into`]): a reader of block after block
    /// hands back the buffer of the block before.
    pub fn read_table_into(&self, path: &str, rows: Rows, reuse: Vec<u8>) -> Result<RawData> {
        let ds = self.dataset(path)?;
        let shape = ds.shape()?;
        if shape.len() != 1 || !matches!(ds.dtype()?, H5Type::Compound { .. }) {
            return Err(Error::mismatch("not a table (a 1-d compound dataset)")
                .with_node(path)
                .with_file(self.h5.path()));
        }
        let sel = rows.resolve(shape[0]).map_err(|e| e.with_node(path))?;
        let mut data = if sel.step == 1 {
            ds.read_rows_parallel_into(sel.start, sel.count, reuse)?
        } else {
            ds.read_slices(Some(&[sel]))?
        };
        time::convert_time64(&mut data);
        Ok(self.to_read_layout(data, true))
    }

    /// `rows` (a range of step 1) of a Table, or of any compound dataset along its first
    /// axis, with only the top-level fields named in `fields`, in the layout
    /// [`PtFile::read_table`] gives them (fields by offset, packed): libhdf5 converts only
    /// those fields' bytes (`Dataset::read_members`), so one column of a wide table costs
    /// its own bytes in memory, not the whole records'.
    pub fn read_table_fields(&self, path: &str, rows: Rows, fields: &[String]) -> Result<RawData> {
        let ds = self.dataset(path)?;
        let rows_in = ds.shape()?.first().copied().unwrap_or(0);
        let sel = rows.resolve(rows_in).map_err(|e| e.with_node(path))?;
        if sel.step != 1 {
            return Err(Error::invalid_input(
                "a read of some fields takes a range of rows of step 1",
            )
            .with_node(path)
            .with_file(self.h5.path()));
        }
        let table = self.node(path)?.class == NodeClass::Table;
        let mut data = ds.read_members(sel.start, sel.count, fields)?;
        time::convert_time64(&mut data);
        Ok(self.to_read_layout(data, table))
    }

    /// Reads one column of a Table; nested columns by path (`"outer/inner"`).
    pub fn read_column(&self, path: &str, column: &str, rows: Rows) -> Result<RawData> {
        let table = self.read_table(path, rows)?;
        extract_column(&table, column).map_err(|e| {
            e.with_node(format!("{path}/{column}"))
                .with_file(self.h5.path())
        })
    }

    /// Reads an Array/CArray/EArray, selecting `rows` along the first dimension (a 0-d array
    /// is read whole).
    pub fn read_array(&self, path: &str, rows: Rows) -> Result<RawData> {
        self.read_array_into(path, rows, Vec::new())
    }

    /// [`PtFile::read_array`] reading a range of rows into `reuse` where it can, as
    /// [`PtFile::read_table_into`].
    pub fn read_array_into(&self, path: &str, rows: Rows, reuse: Vec<u8>) -> Result<RawData> {
        let mut data = self.read_array_raw(path, rows, reuse)?;
        time::convert_time64(&mut data);
        Ok(self.to_read_layout(data, false))
    }

    /// A hyperslab of an Array/CArray/EArray (one [`Slice`] per dimension), in the layout
    /// [`PtFile::read_array`] gives: a piece of a row too large to read whole.
    pub fn read_array_slab(&self, path: &str, slab: &[Slice]) -> Result<RawData> {
        let ds = self.dataset(path)?;
        let mut data = ds.read_slices(Some(slab))?;
        time::convert_time64(&mut data);
        Ok(self.to_read_layout(data, false))
    }

    fn read_array_raw(&self, path: &str, rows: Rows, reuse: Vec<u8>) -> Result<RawData> {
        let ds = self.dataset(path)?;
        let shape = ds.shape()?;
        if shape.is_empty() || rows == Rows::all() {
            if shape.first().is_some_and(|&n| n > 0) {
                return ds.read_rows_parallel(0, shape[0]);
            }
            return ds.read();
        }
        let first = rows.resolve(shape[0]).map_err(|e| e.with_node(path))?;
        if first.step == 1 {
            return ds.read_rows_parallel_into(first.start, first.count, reuse);
        }
        let mut sel = vec![first];
        sel.extend(shape[1..].iter().map(|&d| Slice {
            start: 0,
            count: d,
            step: 1,
        }));
        ds.read_slices(Some(&sel))
    }

    /// Reads rows (along the first dimension) of a dataset whose elements hold
    /// variable-length members inside compounds or arrays, or references, decoding each
    /// element (see [`sciio_hdf5::ElementData`]); references become their targets' paths.
    pub fn read_elements(&self, path: &str, rows: Rows) -> Result<ElementData> {
        let ds = self.dataset(path)?;
        let shape = ds.shape()?;
        if shape.is_empty() || rows == Rows::all() {
            return ds.read_elements(None);
        }
        let mut sel = vec![rows.resolve(shape[0]).map_err(|e| e.with_node(path))?];
        sel.extend(shape[1..].iter().map(|&d| Slice {
            start: 0,
            count: d,
            step: 1,
        }));
        ds.read_elements(Some(&sel))
    }

    /// Reads rows of a VLArray. `object` atoms (pickles) are refused.
    pub fn read_vlarray(&self, path: &str, rows: Rows) -> Result<Vec<VlRow>> {
        let ds = self.dataset(path)?;
        let locate = |e: Error| e.with_node(path).with_file(self.h5.path());
        let pseudo = ds
            .attr("PSEUDOATOM")?
            .map(attrs::convert)
            .and_then(|a| a.as_str());
        if pseudo.as_deref() == Some("object") {
            return Err(locate(Error::new(
                ErrorKind::Refused,
                "VLArray of pickled Python objects: sciio never unpickles",
            )));
        }
        let shape = ds.shape()?;
        let sel = if shape.len() == 1 {
            Some(vec![rows.resolve(shape[0]).map_err(locate)?])
        } else {
            None
        };
        let data = ds.read_vlen(sel.as_deref())?;
        let base = match &data.ty {
            H5Type::VarLen { base } => Some((**base).clone()),
            _ => None,
        };
        data.items
            .into_iter()
            .map(|item| match (&base, pseudo.as_deref()) {
                (None, _) => Ok(VlRow::Text(String::from_utf8_lossy(&item).into_owned())),
                (Some(_), Some("vlstring")) => Ok(VlRow::Bytes(item)),
                (Some(H5Type::Int { size: 4, order, .. }), Some("vlunicode")) => {
                    ucs4(&item, *order).map(VlRow::Text).map_err(locate)
                }
                (Some(b), _) => Ok(VlRow::Values(self.values_row(b, item))),
            })
            .collect()
    }

    /// A row of no items of the numeric VLArray at `path`, typed as its rows read: what
    /// gives a list column its item type when the VLArray has no row. `None` for VLArrays
    /// of strings or pickled objects.
    pub fn vlarray_empty_row(&self, path: &str) -> Result<Option<RawData>> {
        let ds = self.dataset(path)?;
        let pseudo = ds
            .attr("PSEUDOATOM")?
            .map(attrs::convert)
            .and_then(|a| a.as_str());
        if pseudo.is_some() {
            return Ok(None);
        }
        Ok(match ds.dtype()? {
            H5Type::VarLen { base } => Some(self.values_row(&base, Vec::new())),
            _ => None,
        })
    }

    /// One numeric VLArray row (`item`: its raw bytes, items of the atom `atom`) in the
    /// layout `node.read()` gives: an array atom adds its dimensions after the row length.
    fn values_row(&self, atom: &H5Type, item: Vec<u8>) -> RawData {
        let elem = atom.size().max(1);
        let (ty, shape) = match atom {
            H5Type::Array { base, dims } => {
                let mut s = vec![item.len() / elem];
                s.extend(dims.iter().copied());
                ((**base).clone(), s)
            }
            other => (other.clone(), vec![item.len() / elem]),
        };
        let mut data = RawData {
            ty,
            shape,
            bytes: item,
        };
        time::convert_time64(&mut data);
        self.to_read_layout(data, false)
    }
}

/// Whether a leaf of type `ty` reads as [`LeafData::Elements`]: references anywhere, or
/// variable-length members inside a compound or array (a plain vlen type is a VLArray).
fn needs_elements(ty: &H5Type) -> bool {
    let plain_vlen = match ty {
        H5Type::VarString { .. } => true,
        H5Type::VarLen { base } => !base.has_vlen(),
        _ => false,
    };
    ty.has_reference() || (ty.has_vlen() && !plain_vlen)
}

/// Decodes PyTables' `vlunicode` rows: UCS-4 code points in the file's byte order.
fn ucs4(bytes: &[u8], order: sciio_hdf5::ByteOrder) -> Result<String> {
    bytes
        .chunks_exact(4)
        .map(|c| {
            let w = [c[0], c[1], c[2], c[3]];
            let cp = if order == sciio_hdf5::ByteOrder::Big {
                u32::from_be_bytes(w)
            } else {
                u32::from_le_bytes(w)
            };
            char::from_u32(cp).ok_or_else(|| {
                Error::format(format!("invalid code point {cp:#x} in vlunicode row"))
            })
        })
        .collect()
}

/// Gathers one (possibly nested, `a/b`) field of structured rows into its own array.
pub fn extract_column(table: &RawData, column: &str) -> Result<RawData> {
    let mut ty = &table.ty;
    let mut offset = 0usize;
    for part in column.split('/').filter(|p| !p.is_empty()) {
        let H5Type::Compound { fields, .. } = ty else {
            return Err(Error::not_found(format!(
                "column {column:?}: {part:?} is inside a non-compound"
            )));
        };
        let f = fields
            .iter()
            .find(|f| f.name == part)
            .ok_or_else(|| Error::not_found(format!("no column {part:?}")))?;
        offset += f.offset;
        ty = &f.ty;
    }
    let row = table.ty.size();
    let width = ty.size();
    let n = table.shape.iter().product::<usize>();
    let mut bytes = Vec::with_capacity(n * width);
    for r in table.bytes.chunks_exact(row.max(1)).take(n) {
        bytes.extend_from_slice(&r[offset..offset + width]);
    }
    Ok(RawData {
        ty: ty.clone(),
        shape: table.shape.clone(),
        bytes,
    })
}
