//! HDF5 (PyTables, h5py) files in the neutral tree, read through `sciio-pytables`.
//!
//! HDF5 types map to numpy dtypes as PyTables' `node.read()` returns them: numbers in native
//! byte order (`File::read_array_as_stored` keeps the file's), 8-bit bitfields (PyTables'
//! bool) `|b1`, enums their base integer, `r`/`i` compounds complex, other compounds
//! structured dtypes with their fields in offset order (flat ones at the file's offsets,
//! nested ones packed, as PyTables lays them out), fixed strings `S<n>`, time32 `<i4`, time64
//! `<f8`, IEEE quad floats the native long double `<f16`. VLArrays of strings read as one
//! `S<n>`/`U<n>` array, VLArrays of numbers row by row (`File::read_rows`); references,
//! compounds with variable-length members and opaque types have no fixed numpy layout: their
//! nodes are [`NodeKind::Opaque`]. Soft links and groups reached again through another hard
//! link are [`NodeKind::Link`]s, followed by lookups.

use std::io::Write;
use std::path::Path;

use sciio_core::{ByteOrder, DType, Error, Limits, NdArray, Order, Result, ScalarKind, ScalarType};
use sciio_pytables::sciio_hdf5::{H5Type, Slice};
use sciio_pytables::{NodeClass, NodeInfo, PtAttrValue, PtFile, Rows, VlRow};

use crate::node::{ArrayInfo, AttrValue, Attribute, Node, NodeKind};

/// An opened HDF5 file.
#[derive(Debug)]
pub(crate) struct Hdf5 {
    file: PtFile,
}

/// A dataset's layout, chunk shape, chunks written, filters and bytes in the file.
pub(crate) type StorageFacts = (
    sciio_pytables::sciio_hdf5::Layout,
    Option<Vec<u64>>,
    Option<u64>,
    Vec<sciio_pytables::sciio_hdf5::Filter>,
    u64,
);

/// Rows per block when streaming a dataset (bounded memory: blocks of about 8 MiB).
const BLOCK_BYTES: u64 = 8 << 20;

impl Hdf5 {
    pub(crate) fn open(path: &Path, limits: &Limits) -> Result<(Node, Hdf5)> {
        let file = PtFile::open_with_limits(path, *limits).map_err(|e| e.with_file(path))?;
        let info = file.tree(true).map_err(|e| e.with_file(path))?;
        let root = to_node(&file, &info, "");
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
        Ok(node.render(attrs))
    }

    pub(crate) fn read_array(&self, path: &str) -> Result<NdArray> {
        let data = self.file.read(path)?;
        let raw = match data {
            sciio_pytables::LeafData::Array(raw) => raw,
            sciio_pytables::LeafData::VlArray(rows) => return self.vl_strings(path, rows),
            sciio_pytables::LeafData::Elements(_) => {
                return Err(Error::unsupported(
                    "variable-length members or references have no fixed numpy layout",
                ))
            }
        };
        raw.into_numpy()
    }

    /// The array at `path` in the file's own layout: stored byte order, compound offsets and
    /// item size (h5py's view), where [`Hdf5::read_array`] gives PyTables' `read()` layout.
    pub(crate) fn read_array_as_stored(&self, path: &str) -> Result<NdArray> {
        let stored = self.file.clone().with_file_layout();
        match stored.read(path)? {
            sciio_pytables::LeafData::Array(raw) => raw.into_numpy(),
            // Strings have no byte order or layout of their own.
            sciio_pytables::LeafData::VlArray(rows) => self.vl_strings(path, rows),
            sciio_pytables::LeafData::Elements(_) => Err(Error::unsupported(
                "variable-length members or references have no fixed numpy layout",
            )),
        }
    }

    /// A VLArray of strings as one array, what `np.array(node.read())` gives: `vlstring`
    /// rows as `S<n>`, `vlunicode` rows as `U<n>` (n: the longest row, at least 1), a plain
    /// variable-length string dataset (h5py's) as `S<n>` of its own shape (h5py reads bytes).
    /// Rows of numbers are refused: [`Hdf5::read_rows`] reads them.
    fn vl_strings(&self, path: &str, rows: Vec<VlRow>) -> Result<NdArray> {
        let ds = self.file.hdf5().dataset(path)?;
        if matches!(ds.dtype()?, H5Type::VarString { .. }) {
            let data = ds.read_vlen(None)?;
            let items: Vec<&[u8]> = data.items.iter().map(|v| v.as_slice()).collect();
            return bytes_array(&items, &data.shape);
        }
        let n = rows.len();
        if rows.iter().all(|r| matches!(r, VlRow::Bytes(_))) && n > 0 {
            let items: Vec<&[u8]> = rows
                .iter()
                .filter_map(|r| match r {
                    VlRow::Bytes(b) => Some(b.as_slice()),
                    _ => None,
                })
                .collect();
            return bytes_array(&items, &[n]);
        }
        if rows.iter().all(|r| matches!(r, VlRow::Text(_))) && n > 0 {
            let items: Vec<&str> = rows
                .iter()
                .filter_map(|r| match r {
                    VlRow::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            return text_array(&items, &[n]);
        }
        match self.vl_atom(path)? {
            // No rows: `np.array([])` is an empty float64 array; an empty string VLArray
            // holds no string to say otherwise.
            VlAtom::Strings | VlAtom::Text if n == 0 => {
                NdArray::from_bytes(float64(), &[0], Order::C, &[])
            }
            _ => Err(Error::unsupported(
                "a VLArray's rows differ in length and have no single numpy shape \
                 (read them row by row: File::read_rows)",
            )),
        }
    }

    /// What a VLArray holds, by its `PSEUDOATOM` and type.
    fn vl_atom(&self, path: &str) -> Result<VlAtom> {
        let ds = self.file.hdf5().dataset(path)?;
        let pseudo = self
            .file
            .attrs(path)?
            .into_iter()
            .find(|a| a.name == "PSEUDOATOM")
            .and_then(|a| a.as_str());
        Ok(match (pseudo.as_deref(), ds.dtype()?) {
            (Some("object"), _) => VlAtom::Objects,
            (Some("vlstring"), _) | (_, H5Type::VarString { .. }) => VlAtom::Strings,
            (Some("vlunicode"), _) => VlAtom::Text,
            _ => VlAtom::Numbers,
        })
    }

    /// How the node at `path` converts when it holds rows of variable length, or `None`
    /// for any other node.
    pub(crate) fn vl_kind(&self, path: &str) -> Result<Option<crate::vlarray::VlKind>> {
        use crate::vlarray::VlKind;
        if self.file.node(path)?.class != NodeClass::VLArray {
            return Ok(None);
        }
        Ok(Some(match self.vl_atom(path)? {
            VlAtom::Strings | VlAtom::Text => VlKind::Strings,
            VlAtom::Numbers => VlKind::Rows,
            VlAtom::Objects => VlKind::Objects,
        }))
    }

    /// The rows of a VLArray as PyTables' `node.read()` returns them: one array per row
    /// (numbers: a 1-d array, or n-d for array atoms, in native byte order; `vlstring` rows a
    /// 0-d `S<n>`, `vlunicode` rows a 0-d `U<n>`). A plain variable-length dataset of h5py
    /// gives its elements in C order; one of variable-length strings has no rows (it reads
    /// whole, [`Hdf5::read_array`]). Pickled rows (`object` atoms) are refused, never
    /// unpickled.
    pub(crate) fn read_rows(&self, path: &str) -> Result<Vec<NdArray>> {
        let info = self.file.node(path)?;
        if info.class != NodeClass::VLArray {
            return Err(Error::mismatch("not a VLArray (rows of variable length)"));
        }
        if matches!(info.dtype, Some(H5Type::VarString { .. })) {
            return Err(Error::mismatch(
                "a dataset of variable-length strings has no rows: it reads whole as one S \
                 array of its shape (File::read_array), as h5py reads it",
            ));
        }
        self.file
            .read_vlarray(path, Rows::all())?
            .into_iter()
            .map(|row| match row {
                VlRow::Values(raw) => raw.into_numpy(),
                VlRow::Bytes(b) => bytes_array(&[b.as_slice()], &[]),
                VlRow::Text(t) => text_array(&[t.as_str()], &[]),
            })
            .collect()
    }

    /// A row of no items typed as the numeric VLArray's rows read (`None` for strings and
    /// pickled objects): the item type of a list column when the VLArray has no row.
    #[cfg(feature = "parquet")]
    pub(crate) fn empty_row(&self, path: &str) -> Result<Option<NdArray>> {
        self.file
            .vlarray_empty_row(path)?
            .map(sciio_pytables::sciio_hdf5::RawData::into_numpy)
            .transpose()
    }

    /// Rows `start..stop` of a Table or along the first axis of an array, in the layout
    /// [`Hdf5::read_array`] gives, read as a hyperslab: libhdf5 reads only the chunks those
    /// rows touch (`sciio cat --head/--slice` through `File::read_array_rows`, Parquet output).
    pub(crate) fn read_row_range(&self, path: &str, start: usize, stop: usize) -> Result<NdArray> {
        let rows = Rows::range(start as u64, stop as u64, 1);
        let raw = if self.file.node(path)?.class == NodeClass::Table {
            self.file.read_table(path, rows)?
        } else {
            self.file.read_array(path, rows)?
        };
        raw.into_numpy()
    }

    /// Rows `start..stop` of a compound dataset (a Table) with only the top-level `fields`,
    /// read with a memory type of those fields alone (`PtFile::read_table_fields`).
    pub(crate) fn read_row_fields(
        &self,
        path: &str,
        start: u64,
        stop: u64,
        fields: &[String],
    ) -> Result<NdArray> {
        self.file
            .read_table_fields(path, Rows::range(start, stop, 1), fields)?
            .into_numpy()
    }

    /// How the dataset at `path` is stored: layout, chunk shape, chunks written (chunked
    /// datasets), filter pipeline, bytes in the file.
    pub(crate) fn storage(&self, path: &str) -> Result<StorageFacts> {
        dataset_storage(&self.file.hdf5().dataset(path)?)
    }

    /// Hands the dataset's bytes in numpy C order to `take` in blocks of whole rows of about
    /// `block_bytes` (at least one row; the last block shorter), each block read into a
    /// buffer `spare` gives (one `take` had before, or an empty one): no copy of the bytes
    /// read, no buffer zeroed again. An array (not a table) whose rows are over `block_bytes`
    /// comes in hyperslabs of sub-rows of at most that ([`SubRows`]), never a whole row.
    /// Datasets with no rows axis (0-d) are not read here: `false`, nothing taken.
    pub(crate) fn for_each_block(
        &self,
        path: &str,
        info: &ArrayInfo,
        block_bytes: usize,
        spare: &mut dyn FnMut() -> Vec<u8>,
        take: &mut dyn FnMut(Vec<u8>) -> Result<()>,
    ) -> Result<bool> {
        let Some(&rows) = info.shape.first() else {
            return Ok(false);
        };
        let is_table = self.file.node(path)?.class == NodeClass::Table;
        if let Some(pieces) = SubRows::of(info, is_table, block_bytes as u64) {
            for slab in pieces {
                take(self.file.read_array_slab(path, &slab)?.bytes)?;
            }
            return Ok(true);
        }
        let block_rows = (block_bytes / info.row_bytes().max(1)).max(1);
        let (rows, per_block) = (rows as u64, block_rows as u64);
        let mut start = 0u64;
        while start < rows {
            let stop = (start + per_block).min(rows);
            let range = Rows::range(start, stop, 1);
            let raw = if is_table {
                self.file.read_table_into(path, range, spare())?
            } else {
                self.file.read_array_into(path, range, spare())?
            };
            take(raw.bytes)?;
            start = stop;
        }
        Ok(true)
    }

    /// Streams the dataset's bytes in numpy C order, row block by row block (rows over a
    /// block in hyperslabs of sub-rows, [`SubRows`]).
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
        if let Some(pieces) = SubRows::of(info, is_table, BLOCK_BYTES) {
            for slab in pieces {
                let raw = self.file.read_array_slab(path, &slab)?;
                out.write_all(&raw.bytes)
                    .map_err(|e| Error::io("cannot write", e))?;
                done += raw.bytes.len() as u64;
                progress(done);
            }
            return Ok(());
        }
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

/// The hyperslabs, about a block each, that make an array's rows in C order when one row is
/// larger than a block (a row read whole would hold memory growing with the row): each row is
/// cut along its first trailing axis whose sub-rows (the axes after it) fit a block, in runs
/// of as many of those as fit, the axes before it one index at a time.
#[derive(Debug)]
struct SubRows {
    shape: Vec<u64>,
    /// The axis cut into runs.
    axis: usize,
    /// Indices along the axes up to `axis` of the next slab; `None` past the last one.
    at: Option<Vec<u64>>,
    /// Indices of `axis` per slab.
    run: u64,
}

impl SubRows {
    /// The pieces of an array (not a table: its row is one record) of two or more
    /// dimensions whose rows are over `block_bytes`; `None` when rows are read whole.
    fn of(info: &ArrayInfo, is_table: bool, block_bytes: u64) -> Option<SubRows> {
        let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
        let row_bytes = info.row_bytes() as u64;
        if is_table || shape.len() < 2 || row_bytes <= block_bytes || shape.contains(&0) {
            return None;
        }
        Some(SubRows::new(
            shape,
            info.dtype.itemsize() as u64,
            block_bytes,
        ))
    }

    fn new(shape: Vec<u64>, item: u64, block_bytes: u64) -> SubRows {
        // Bytes of one index of each axis (the product of the axes after it).
        let mut inner = item.max(1);
        let mut axis = shape.len() - 1;
        while axis > 1 && inner.saturating_mul(shape[axis]) <= block_bytes {
            inner = inner.saturating_mul(shape[axis]);
            axis -= 1;
        }
        let run = (block_bytes / inner).clamp(1, shape[axis]);
        let at = (!shape.contains(&0)).then(|| vec![0; axis + 1]);
        SubRows {
            shape,
            axis,
            at,
            run,
        }
    }
}

impl Iterator for SubRows {
    type Item = Vec<Slice>;

    fn next(&mut self) -> Option<Vec<Slice>> {
        let at = self.at.as_mut()?;
        let k = self.axis;
        let slice = |start, count| Slice {
            start,
            count,
            step: 1,
        };
        let count = self.run.min(self.shape[k] - at[k]);
        let mut slab: Vec<Slice> = at[..k].iter().map(|&i| slice(i, 1)).collect();
        slab.push(slice(at[k], count));
        slab.extend(self.shape[k + 1..].iter().map(|&d| slice(0, d)));
        // The next slab: further along the cut axis, then the next index of the axes before.
        at[k] += count;
        let mut j = k;
        while j > 0 && at[j] >= self.shape[j] {
            at[j] = 0;
            j -= 1;
            at[j] += 1;
        }
        if at[0] >= self.shape[0] {
            self.at = None;
        }
        Some(slab)
    }
}

/// The node at `path` (`/`-separated, absolute or not) in a tree read with [`PtFile::tree`];
/// soft links and groups reached again through another hard link are followed on the way
/// (and at the end when their target is in the tree), as PyTables and h5py follow them.
fn find_info<'a>(root: &'a NodeInfo, path: &str) -> Option<&'a NodeInfo> {
    let mut wanted = format!("/{}", path.trim_matches('/'));
    for _ in 0..MAX_LINK_HOPS {
        if wanted == "/" {
            return Some(root);
        }
        let mut node = root;
        let mut link = None;
        while node.path != wanted {
            node = node.children.iter().find(|c| {
                wanted == c.path
                    || wanted
                        .strip_prefix(c.path.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })?;
            let target = match &node.class {
                NodeClass::SoftLink(t) if t.starts_with('/') => t.clone(),
                NodeClass::SoftLink(t) => {
                    let parent = node.path.rsplit_once('/').map_or("", |(p, _)| p);
                    format!("{parent}/{t}")
                }
                NodeClass::HardLinkAgain(first) => first.clone(),
                _ => continue,
            };
            link = Some((node, target));
            break;
        }
        let Some((at, target)) = link else {
            return Some(node);
        };
        let rest = &wanted[at.path.len()..];
        let next = format!("/{}{rest}", target.trim_matches('/'));
        if rest.is_empty() && find_info_plain(root, &next).is_none() {
            return Some(at); // a dangling or external link: the link itself
        }
        wanted = next;
    }
    None
}

/// [`find_info`] without following links.
fn find_info_plain<'a>(root: &'a NodeInfo, wanted: &str) -> Option<&'a NodeInfo> {
    let wanted = format!("/{}", wanted.trim_matches('/'));
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

/// Links followed one after another before a lookup gives up (a cycle of soft links).
const MAX_LINK_HOPS: usize = 32;

fn to_node(file: &PtFile, info: &NodeInfo, parent: &str) -> Node {
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
                .map(|c| to_node(file, c, &info.path))
                .collect(),
        ),
        NodeClass::SoftLink(target) => NodeKind::Link(target.clone()),
        NodeClass::ExternalLink(file, path) => NodeKind::Link(format!("{file}:{path}")),
        NodeClass::HardLinkAgain(first) => NodeKind::Link(first.clone()),
        NodeClass::VLArray => NodeKind::Opaque {
            kind: "VLArray".to_string(),
            reason: vlarray_reason(info),
        },
        NodeClass::Table => leaf_kind(file, info, true),
        _ => leaf_kind(file, info, false),
    };
    let mut node = Node::new(name, kind);
    node.attrs = info
        .attrs
        .iter()
        .filter(|a| !a.system)
        .map(|a| Attribute {
            name: a.name.clone(),
            value: match &a.value {
                PtAttrValue::Data(raw) => raw
                    .clone()
                    .into_numpy()
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

/// What a VLArray holds and how it reads (the reason of its [`NodeKind::Opaque`] node).
fn vlarray_reason(info: &NodeInfo) -> String {
    let pseudo = info
        .attrs
        .iter()
        .find(|a| a.name == "PSEUDOATOM")
        .and_then(|a| a.as_str());
    match (pseudo.as_deref(), &info.dtype) {
        (Some("object"), _) => "rows of pickled Python objects (never unpickled)".to_string(),
        (Some("vlstring"), _) | (_, Some(H5Type::VarString { .. })) => {
            "variable-length byte strings (read as one S array)".to_string()
        }
        (Some("vlunicode"), _) => {
            "variable-length unicode strings (read as one U array)".to_string()
        }
        (_, Some(H5Type::VarLen { base })) => match base.to_numpy_dtype() {
            Ok(d) => format!("rows of variable length of {d} (read row by row)"),
            Err(_) => "rows of variable length (read row by row)".to_string(),
        },
        _ => "rows of variable length".to_string(),
    }
}

fn leaf_kind(file: &PtFile, info: &NodeInfo, table: bool) -> NodeKind {
    // The type the data has once read: PyTables' layout (native byte order, packing).
    let Some(ty) = info.dtype.as_ref().map(|t| file.read_type(t, table)) else {
        return NodeKind::Opaque {
            kind: "unknown".to_string(),
            reason: "not a dataset sciio can read".to_string(),
        };
    };
    let mut shape: Vec<usize> = info.shape.iter().map(|&d| d as usize).collect();
    let dtype = match top_dtype(&ty, &mut shape) {
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
    let (dtype, dims) = ty.to_numpy_element()?;
    shape.extend_from_slice(dims);
    Ok(dtype)
}

/// What a VLArray's rows are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VlAtom {
    /// `vlstring` rows, or variable-length strings: bytes.
    Strings,
    /// `vlunicode` rows: text.
    Text,
    /// Pickled Python objects (never unpickled).
    Objects,
    /// Numbers (one array per row).
    Numbers,
}

fn float64() -> DType {
    DType::Scalar(ScalarType::new(ScalarKind::Float(8), ByteOrder::Little))
}

/// `S<n>` (n: the longest item, at least 1, as numpy sizes it) of `shape`.
fn bytes_array(items: &[&[u8]], shape: &[usize]) -> Result<NdArray> {
    let n = items.iter().map(|b| b.len()).max().unwrap_or(0).max(1);
    let mut bytes = vec![0u8; n * items.len()];
    for (cell, item) in bytes.chunks_exact_mut(n).zip(items) {
        cell[..item.len()].copy_from_slice(item);
    }
    let dtype = DType::Scalar(ScalarType::new(
        ScalarKind::Bytes(n),
        ByteOrder::NotApplicable,
    ));
    NdArray::from_bytes(dtype, shape, Order::C, &bytes)
}

/// `<U<n>` (n: the longest item in characters, at least 1) of `shape`.
fn text_array(items: &[&str], shape: &[usize]) -> Result<NdArray> {
    let n = items
        .iter()
        .map(|t| t.chars().count())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut bytes = vec![0u8; 4 * n * items.len()];
    for (cell, item) in bytes.chunks_exact_mut(4 * n).zip(items) {
        for (slot, c) in cell.chunks_exact_mut(4).zip(item.chars()) {
            slot.copy_from_slice(&u32::from(c).to_le_bytes());
        }
    }
    let dtype = DType::Scalar(ScalarType::new(ScalarKind::Unicode(n), ByteOrder::Little));
    NdArray::from_bytes(dtype, shape, Order::C, &bytes)
}

/// Layout, chunk shape, chunks written, filters and bytes on disk of a dataset.
pub(crate) fn dataset_storage(ds: &sciio_pytables::sciio_hdf5::Dataset) -> Result<StorageFacts> {
    use sciio_pytables::sciio_hdf5::Layout;
    let (layout, chunk_shape, filters) = ds.storage()?;
    let chunks_stored = match layout {
        Layout::Chunked => Some(ds.chunks_stored()? as u64),
        _ => None,
    };
    Ok((
        layout,
        chunk_shape,
        chunks_stored,
        filters,
        ds.storage_size(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C-order indices of the elements of `slab` in an array of `shape`.
    fn elements(shape: &[u64], slab: &[Slice]) -> Vec<u64> {
        let mut out = vec![0u64];
        for (s, &d) in slab.iter().zip(shape) {
            out = out
                .iter()
                .flat_map(|&base| (s.start..s.start + s.count).map(move |i| base * d + i))
                .collect();
        }
        out
    }

    #[test]
    fn sub_rows_cover_the_array_in_c_order_within_a_block() {
        let cases: [(&[u64], u64, u64); 6] = [
            (&[3, 10], 8, 24),
            (&[2, 7, 5], 4, 40),
            (&[2, 7, 5], 4, 21),
            (&[2, 3, 4, 5], 2, 30),
            (&[1, 100], 1, 7),
            (&[2, 9, 2], 8, 8),
        ];
        for (shape, item, block) in cases {
            let mut seen = Vec::new();
            for slab in SubRows::new(shape.to_vec(), item, block) {
                let n: u64 = slab.iter().map(|s| s.count).product();
                assert!(
                    n * item <= block.max(item),
                    "{shape:?} block {block}: {slab:?}"
                );
                assert_eq!(slab[0].count, 1, "one row at a time");
                seen.extend(elements(shape, &slab));
            }
            let all: Vec<u64> = (0..shape.iter().product()).collect();
            assert_eq!(seen, all, "{shape:?} item {item} block {block}");
        }
    }
}
