//! Writing PyTables files: nodes PyTables opens as its own (system attributes, HDF5 string
//! types, chunk shapes and filter pipelines as PyTables 3.x writes them).
//!
//! A new file is written to a temporary file next to the destination and renamed over it by
//! [`PtWriter::finish`]: a failure (or a writer dropped without `finish`) leaves the
//! destination absent or as it was. [`PtWriter::open_append`] adds to an existing file in place.
//!
//! ```no_run
//! use sciio_hdf5::{ByteOrder, Field, H5Type};
//! use sciio_pytables::write::{Complib, Filters, PtWriter};
//! let i8 = H5Type::Int { size: 8, signed: true, order: ByteOrder::Little };
//! let f8 = H5Type::Float { size: 8, precision: 64, order: ByteOrder::Little };
//! let row = H5Type::Compound {
//!     size: 16,
//!     fields: vec![
//!         Field { name: "id".into(), offset: 0, ty: i8 },
//!         Field { name: "x".into(), offset: 8, ty: f8 },
//!     ],
//! };
//! let file = PtWriter::create("out.h5")?;
//! let mut table = file
//!     .root()?
//!     .create_table("t", row)
//!     .filters(Filters::new(5, Complib::Zlib))
//!     .expected_rows(1_000_000)
//!     .create()?;
//! table.append(&[0u8; 16 * 10])?; // ten rows in the compound's layout
//! file.finish()?;
//! # Ok::<(), sciio_core::Error>(())
//! ```

mod cpu_caches;
mod earray;
mod filters;
mod numpy;
mod repack;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sciio_core::{Error, ErrorKind, Result};
use sciio_hdf5::write::{
    ChunkAppender, DatasetSpec, DatasetWriter, FileBuilder, FileWriter, GroupWriter,
};
use sciio_hdf5::{AttrValue, ByteOrder, CharSet, H5Type, RawData};

pub use cpu_caches::CpuCaches;
pub use filters::{calc_chunkshape, calc_vl_chunkshape, Complib, Filters};
pub use numpy::{h5type_from_dtype, start_ndarray, write_ndarray, NodeFill, CARRAY_THRESHOLD};
pub use repack::{filters_from_pipeline, repack, repack_node};

/// PyTables object tags passed to the LZO/bzip2 filters (`tables.h`).
const TAG_TABLE: u32 = 0;
const TAG_EARRAY: u32 = 2;
const TAG_VLARRAY: u32 = 3;
const TAG_CARRAY: u32 = 4;

/// EArrays growing along a dimension other than 0, by path: `EXTDIM` and the rows of the
/// partial last chunk band (`None`: the length is a whole number of chunks).
type ExtdimTails = HashMap<String, (usize, Option<Vec<u8>>)>;

/// A PyTables file being written.
#[derive(Debug)]
pub struct PtWriter {
    h5: Option<FileWriter>,
    /// (temporary file, destination) for new files.
    rename: Option<(PathBuf, PathBuf)>,
    /// Removes the temporary file if a signal stops the process before `finish`.
    _registered: Option<sciio_temp::Registration>,
    /// Files opened for appending: the partial last chunk band of every EArray growing
    /// along a dimension other than 0, by path (see [`earray::read_tail`]).
    extdim_tails: ExtdimTails,
}

fn utf8(s: &str) -> AttrValue {
    string_attr(s, CharSet::Utf8)
}

fn ascii(s: &str) -> AttrValue {
    string_attr(s, CharSet::Ascii)
}

/// A string attribute as PyTables writes one: NUL-terminated fixed string of the text's
/// length; an empty string is a 1-byte string type over a null dataspace.
fn string_attr(s: &str, charset: CharSet) -> AttrValue {
    if s.is_empty() {
        return AttrValue::Empty(H5Type::FixedString { size: 1, charset });
    }
    AttrValue::Raw(RawData {
        ty: H5Type::FixedString {
            size: s.len(),
            charset,
        },
        shape: vec![],
        bytes: s.as_bytes().to_vec(),
    })
}

fn int_attr(v: i64, size: usize) -> AttrValue {
    AttrValue::Raw(RawData {
        ty: H5Type::Int {
            size,
            signed: true,
            order: ByteOrder::Little,
        },
        shape: vec![],
        bytes: v.to_le_bytes()[..size].to_vec(),
    })
}

impl PtWriter {
    /// Creates a PyTables file at `path` with an empty title.
    pub fn create(path: impl AsRef<Path>) -> Result<PtWriter> {
        Self::create_with_title(path, "")
    }

    /// Creates a PyTables file whose root group has `title`.
    pub fn create_with_title(path: impl AsRef<Path>, title: &str) -> Result<PtWriter> {
        let dest = path.as_ref().to_path_buf();
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dest.with_file_name(format!(".{name}.sciio-{}.tmp", std::process::id()));
        let registered = sciio_temp::register(&tmp);
        let h5 = FileBuilder::new()
            .create(&tmp)
            .map_err(|e| e.with_file(&dest))?;
        let w = PtWriter {
            h5: Some(h5),
            rename: Some((tmp, dest)),
            extdim_tails: HashMap::new(),
            _registered: Some(registered),
        };
        let root = w.root()?;
        root.g.set_attr("CLASS", &utf8("GROUP"))?;
        root.g.set_attr("PYTABLES_FORMAT_VERSION", &utf8("2.1"))?;
        root.g.set_attr("TITLE", &utf8(title))?;
        root.g.set_attr("VERSION", &utf8("1.0"))?;
        Ok(w)
    }

    /// Opens an existing PyTables (or HDF5) file to add nodes and append rows, in place.
    ///
    /// EArrays growing along a dimension other than 0 whose last chunk is partial have that
    /// chunk's rows read now (one chunk band each), as appends continue it.
    pub fn open_append(path: impl AsRef<Path>) -> Result<PtWriter> {
        let extdim_tails = read_extdim_tails(path.as_ref())?;
        Ok(PtWriter {
            h5: Some(FileBuilder::new().open_rw(path)?),
            rename: None,
            extdim_tails,
            _registered: None,
        })
    }

    fn h5(&self) -> Result<&FileWriter> {
        self.h5
            .as_ref()
            .ok_or_else(|| Error::invalid_input("the file is closed"))
    }

    /// The underlying HDF5 writer.
    pub fn hdf5(&self) -> Result<&FileWriter> {
        self.h5()
    }

    /// The root group.
    pub fn root(&self) -> Result<PtGroup> {
        self.group("/")
    }

    /// The group at absolute `path`; its `FILTERS` attribute, if any, becomes the default for
    /// leaves created in it.
    pub fn group(&self, path: &str) -> Result<PtGroup> {
        let g = self.h5()?.group(path)?;
        let filters = g
            .attr("FILTERS")?
            .and_then(|a| match a.value {
                AttrValue::Raw(d) if d.bytes.len() == 8 => {
                    Some(i64::from_le_bytes(d.bytes.try_into().ok()?))
                }
                _ => None,
            })
            .map(unpack_filters);
        Ok(PtGroup { g, filters })
    }

    /// A Table PyTables (or sciio) wrote, ready for [`PtTable::append`].
    pub fn table(&self, path: &str) -> Result<PtTable> {
        let ds = self.h5()?.dataset(path)?;
        if !matches!(ds.dtype(), H5Type::Compound { .. }) || ds.shape()?.len() != 1 {
            return Err(Error::mismatch("not a table (a 1-d compound dataset)")
                .with_node(path)
                .with_file(self.h5()?.path()));
        }
        let app = ChunkAppender::new(&ds)?;
        Ok(PtTable { ds, app })
    }

    /// An EArray PyTables (or sciio) wrote, ready for [`PtEArray::append`] along its
    /// extendable dimension (its `EXTDIM` attribute, read by [`PtWriter::open_append`]; an
    /// EArray created through this writer is appended to through the [`PtEArray`] its
    /// builder returned, or taken here as growing along dimension 0).
    pub fn earray(&self, path: &str) -> Result<PtEArray> {
        let ds = self.h5()?.dataset(path)?;
        let key = format!("/{}", path.trim_matches('/'));
        let app = match self.extdim_tails.get(&key) {
            Some((extdim, tail)) => {
                EArrayAppender::Along(earray::ExtAppender::new(&ds, *extdim, tail.as_deref())?)
            }
            None => EArrayAppender::Rows(ChunkAppender::new(&ds)?),
        };
        Ok(PtEArray { ds, app })
    }

    /// Flushes, closes and (for a new file) moves the file into place.
    pub fn finish(mut self) -> Result<()> {
        if let Some(h5) = self.h5.take() {
            h5.close()?;
        }
        if let Some((tmp, dest)) = self.rename.take() {
            std::fs::rename(&tmp, &dest).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                Error::io("cannot move the written file into place", e).with_file(&dest)
            })?;
        }
        Ok(())
    }
}

impl Drop for PtWriter {
    fn drop(&mut self) {
        // Not finished: the destination is left untouched and the partial file removed.
        self.h5 = None;
        if let Some((tmp, _)) = self.rename.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Every EArray of the file at `path` growing along a dimension other than 0: its `EXTDIM`
/// and the rows of its partial last chunk band, if any.
fn read_extdim_tails(path: &Path) -> Result<ExtdimTails> {
    let input = crate::PtFile::open(path)?.with_file_layout();
    let mut out = HashMap::new();
    let mut todo = vec![input.tree(false)?];
    while let Some(node) = todo.pop() {
        if node.class == crate::NodeClass::EArray {
            let extdim = extdim_of(input.hdf5(), &node.path)?;
            if extdim != 0 {
                let tail = earray::read_tail(input.hdf5(), &node.path, extdim)?;
                out.insert(node.path.clone(), (extdim, tail));
            }
        }
        todo.extend(node.children);
    }
    Ok(out)
}

/// The extendable dimension of the EArray at `path`: `EXTDIM`, else its unlimited dimension.
fn extdim_of(file: &sciio_hdf5::File, path: &str) -> Result<usize> {
    let ds = file.dataset(path)?;
    let rank = ds.shape()?.len();
    let recorded = ds.attr("EXTDIM")?.and_then(|a| match a.value {
        AttrValue::Raw(d) if d.bytes.len() == 4 => {
            Some(i32::from_le_bytes(d.bytes.try_into().ok()?))
        }
        AttrValue::Raw(d) if d.bytes.len() == 8 => {
            Some(i64::from_le_bytes(d.bytes.try_into().ok()?) as i32)
        }
        _ => None,
    });
    let extdim = match recorded {
        Some(e) => usize::try_from(e).ok(),
        None => ds
            .extent()?
            .and_then(|(_, max)| max.iter().position(Option::is_none)),
    };
    match extdim {
        Some(e) if e < rank => Ok(e),
        _ => Err(Error::mismatch(format!(
            "not an EArray: no extendable dimension among {rank}"
        ))
        .with_node(path)
        .with_file(file.path())),
    }
}

fn unpack_filters(packed: i64) -> Filters {
    let pt = crate::PtFilters::unpack(packed);
    let complib = pt
        .complib
        .as_deref()
        .and_then(|c| Complib::parse(c).ok())
        .unwrap_or(Complib::Zlib);
    Filters {
        complevel: pt.complevel,
        complib,
        shuffle: pt.shuffle,
        bitshuffle: pt.bitshuffle,
        fletcher32: pt.fletcher32,
    }
}

/// A group of a PyTables file being written.
#[derive(Debug)]
pub struct PtGroup {
    g: GroupWriter,
    filters: Option<Filters>,
}

impl PtGroup {
    /// The group's path.
    pub fn path(&self) -> &str {
        self.g.path()
    }

    /// Sets a user attribute (any HDF5 type sciio reads: numbers, strings, compounds, arrays,
    /// vlen strings...).
    pub fn set_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        self.g.set_attr(name, value)
    }

    /// Whether the group has a child (a link) called `name`.
    pub fn contains(&self, name: &str) -> Result<bool> {
        self.g.contains(name)
    }

    /// Removes the child `name` (its link; the object goes with its last link).
    pub fn unlink(&self, name: &str) -> Result<()> {
        self.g.unlink(name)
    }

    /// Records `filters` as the group's `FILTERS` attribute (the default of leaves made in
    /// it from now on).
    pub fn set_filters_attr(&mut self, filters: Filters) -> Result<()> {
        self.g.set_attr("FILTERS", &int_attr(filters.pack(), 8))?;
        self.filters = Some(filters);
        Ok(())
    }

    /// Creates a child group with `title` and, optionally, `filters` recorded as its
    /// `FILTERS` attribute (inherited by leaves created in it).
    pub fn create_group(
        &self,
        name: &str,
        title: &str,
        filters: Option<Filters>,
    ) -> Result<PtGroup> {
        let g = self.g.create_group(name)?;
        g.set_attr("CLASS", &utf8("GROUP"))?;
        g.set_attr("TITLE", &utf8(title))?;
        g.set_attr("VERSION", &utf8("1.0"))?;
        if let Some(f) = filters {
            g.set_attr("FILTERS", &int_attr(f.pack(), 8))?;
        }
        Ok(PtGroup {
            g,
            filters: filters.or(self.filters),
        })
    }

    /// Starts a Table of rows of compound type `row`.
    pub fn create_table(&self, name: &str, row: H5Type) -> TableBuilder<'_> {
        TableBuilder {
            group: self,
            name: name.to_string(),
            row,
            title: String::new(),
            filters: self.filters,
            expected_rows: 10_000,
            chunk_rows: None,
            early: false,
        }
    }

    /// Writes an Array (contiguous) holding `data`, with PyTables' `FLAVOR` `numpy`.
    pub fn create_array(&self, name: &str, data: &RawData, title: &str) -> Result<()> {
        check_atom(&data.ty)?;
        let shape: Vec<u64> = data.shape.iter().map(|&d| d as u64).collect();
        let ds = self
            .g
            .create_dataset(name, &DatasetSpec::contiguous(data.ty.clone(), shape))?;
        ds.write_all(&data.bytes)?;
        ds.set_attr("CLASS", &utf8("ARRAY"))?;
        ds.set_attr("FLAVOR", &utf8("numpy"))?;
        ds.set_attr("TITLE", &utf8(title))?;
        ds.set_attr("VERSION", &utf8("2.4"))?;
        Ok(())
    }

    /// Creates an Array (contiguous) of `shape` to be filled row block by row block
    /// ([`PtFill::append`]), with the attributes [`PtGroup::create_array`] writes: data
    /// larger than memory never held whole.
    pub fn create_array_fill(&self, name: &str, ty: H5Type, shape: &[u64]) -> Result<PtFill> {
        check_atom(&ty)?;
        let ds = self
            .g
            .create_dataset(name, &DatasetSpec::contiguous(ty, shape.to_vec()))?;
        ds.set_attr("CLASS", &utf8("ARRAY"))?;
        ds.set_attr("FLAVOR", &utf8("numpy"))?;
        ds.set_attr("TITLE", &utf8(""))?;
        ds.set_attr("VERSION", &utf8("2.4"))?;
        PtFill::new(ds, None)
    }

    /// Starts a CArray (chunked, fixed shape) of `atom` elements.
    pub fn create_carray(&self, name: &str, atom: H5Type, shape: Vec<u64>) -> ArrayBuilder<'_> {
        self.array_builder(name, atom, shape, None)
    }

    /// Starts an EArray of `atom` elements growing along dimension 0; `row_shape` is the shape
    /// of one row (`[]` for a 1-d EArray).
    pub fn create_earray(&self, name: &str, atom: H5Type, row_shape: Vec<u64>) -> ArrayBuilder<'_> {
        let mut shape = vec![0];
        shape.extend(row_shape);
        self.array_builder(name, atom, shape, Some(0))
    }

    /// Starts an EArray shaped as PyTables' `create_earray(..., shape=...)` takes it: exactly
    /// one dimension is 0, and the array grows along it (its `EXTDIM`).
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// use sciio_hdf5::{ByteOrder, H5Type};
    /// use sciio_pytables::write::PtWriter;
    /// let f4 = H5Type::Float { size: 4, precision: 32, order: ByteOrder::Little };
    /// let file = PtWriter::create(dir.path().join("e.h5"))?;
    /// let mut e = file.root()?.create_earray_shaped("e", f4, vec![2, 0])?.create()?;
    /// // Three columns of a (2, 3) block, C order: row 0 then row 1.
    /// let block: Vec<u8> = [1f32, 2., 3., 4., 5., 6.].iter().flat_map(|v| v.to_le_bytes()).collect();
    /// e.append(&block)?;
    /// assert_eq!(e.nrows(), 3);
    /// file.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create_earray_shaped(
        &self,
        name: &str,
        atom: H5Type,
        shape: Vec<u64>,
    ) -> Result<ArrayBuilder<'_>> {
        let zeros: Vec<usize> = (0..shape.len()).filter(|&i| shape[i] == 0).collect();
        let [extdim] = zeros[..] else {
            return Err(Error::invalid_input(format!(
                "an EArray's shape needs exactly one 0 (the extendable dimension), got {shape:?}"
            ))
            .with_node(child(self, name)));
        };
        Ok(self.array_builder(name, atom, shape, Some(extdim)))
    }

    fn array_builder(
        &self,
        name: &str,
        atom: H5Type,
        shape: Vec<u64>,
        extdim: Option<usize>,
    ) -> ArrayBuilder<'_> {
        ArrayBuilder {
            group: self,
            name: name.to_string(),
            atom,
            shape,
            title: String::new(),
            filters: self.filters,
            expected_rows: None,
            chunk: None,
            extdim,
            early: false,
        }
    }

    /// Creates a VLArray of `atom` rows (libhdf5 runs the filters over the chunks of row
    /// references, as for PyTables' own VLArrays).
    pub fn create_vlarray(
        &self,
        name: &str,
        atom: VlAtom,
        title: &str,
        filters: Option<Filters>,
    ) -> Result<PtVlArray> {
        let (base, pseudo) = match &atom {
            VlAtom::Values(t) => {
                check_atom(t)?;
                (t.clone(), None)
            }
            VlAtom::VlString => (
                H5Type::Int {
                    size: 1,
                    signed: false,
                    order: ByteOrder::Little,
                },
                Some("vlstring"),
            ),
            VlAtom::VlUnicode => (
                H5Type::Int {
                    size: 4,
                    signed: false,
                    order: ByteOrder::Little,
                },
                Some("vlunicode"),
            ),
        };
        let elem = match &base {
            H5Type::Array { base, .. } => base.size(),
            t => t.size(),
        };
        let chunk = calc_vl_chunkshape(1000, elem as u64);
        let filters = filters.or(self.filters).unwrap_or_default();
        let ty = H5Type::VarLen {
            base: Box::new(base),
        };
        let spec = DatasetSpec::chunked(ty.clone(), vec![0], vec![None], vec![chunk])
            .filters(filters.pipeline(&ty, &[chunk], TAG_VLARRAY, "1.4"));
        let ds = self.g.create_dataset(name, &spec)?;
        ds.set_attr("CLASS", &utf8("VLARRAY"))?;
        if let Some(p) = pseudo {
            ds.set_attr("PSEUDOATOM", &utf8(p))?;
        }
        ds.set_attr("TITLE", &utf8(title))?;
        ds.set_attr("VERSION", &utf8("1.4"))?;
        Ok(PtVlArray { ds, atom, rows: 0 })
    }
}

/// Refuses atoms PyTables cannot store in an Array/CArray/EArray/VLArray.
fn check_atom(ty: &H5Type) -> Result<()> {
    match ty {
        H5Type::Compound { .. } if ty.complex_parts().is_none() => Err(Error::unsupported(
            "compound elements belong in a Table, not an array node",
        )),
        H5Type::VarLen { .. } | H5Type::VarString { .. } => Err(Error::unsupported(
            "variable-length elements belong in a VLArray",
        )),
        _ => Ok(()),
    }
}

/// Options for a new Table. Defaults: empty title, the parent group's filters (none at the
/// root), 10 000 expected rows (PyTables' `EXPECTED_ROWS_TABLE`), chunk shape computed from
/// them as PyTables does.
#[derive(Debug)]
pub struct TableBuilder<'g> {
    group: &'g PtGroup,
    name: String,
    row: H5Type,
    title: String,
    filters: Option<Filters>,
    expected_rows: u64,
    chunk_rows: Option<u64>,
    /// Chunk storage allocated as the table grows ([`TableBuilder::allocate_early`]).
    early: bool,
}

impl TableBuilder<'_> {
    /// Allocates the chunks' storage as the table grows, so that uncompressed rows can be
    /// copied into it file to file ([`PtTable::copy_from`]). PyTables reads the table as any
    /// other; only its fill-value message records it.
    pub fn allocate_early(mut self) -> Self {
        self.early = true;
        self
    }

    /// Sets the title.
    pub fn title(mut self, title: &str) -> Self {
        self.title = title.to_string();
        self
    }

    /// Sets the filters.
    pub fn filters(mut self, filters: Filters) -> Self {
        self.filters = Some(filters);
        self
    }

    /// Sets the number of rows expected (sizes the chunks).
    pub fn expected_rows(mut self, n: u64) -> Self {
        self.expected_rows = n;
        self
    }

    /// Forces the rows per chunk.
    pub fn chunk_rows(mut self, n: u64) -> Self {
        self.chunk_rows = Some(n.max(1));
        self
    }

    /// Creates the table (empty).
    pub fn create(self) -> Result<PtTable> {
        let H5Type::Compound { fields, .. } = &self.row else {
            return Err(
                Error::invalid_input("a table's row type must be a compound")
                    .with_node(crate::write::child(self.group, &self.name)),
            );
        };
        let filters = self.filters.unwrap_or_default();
        let size = self.row.size() as u64;
        let blosc2 = filters.complevel > 0 && matches!(filters.complib, Complib::Blosc2(_));
        let chunk = match self.chunk_rows {
            Some(n) => vec![n],
            None => calc_chunkshape(
                &[0],
                0,
                self.expected_rows,
                size,
                size,
                blosc2_caches(blosc2),
            ),
        };
        let pipeline = filters.pipeline(&self.row, &chunk, TAG_TABLE, "2.7");
        // Compressed chunks are stored at their encoded size: nothing to allocate early.
        let early = self.early && pipeline.is_empty();
        let mut spec = DatasetSpec::chunked(self.row.clone(), vec![0], vec![None], chunk)
            .filters(pipeline)
            .fill(vec![0; size as usize]);
        if early {
            spec = spec.allocate_early();
        }
        let ds = self.group.g.create_dataset(&self.name, &spec)?;
        ds.set_attr("CLASS", &utf8("TABLE"))?;
        ds.set_attr("VERSION", &utf8("2.7"))?;
        ds.set_attr("TITLE", &utf8(&self.title))?;
        for (i, f) in fields.iter().enumerate() {
            ds.set_attr(&format!("FIELD_{i}_NAME"), &utf8(&f.name))?;
        }
        for (i, fill) in column_fills(&self.row).into_iter().enumerate() {
            ds.set_attr(&format!("FIELD_{i}_FILL"), &fill)?;
        }
        ds.set_attr("NROWS", &int_attr(0, 8))?;
        let app = ChunkAppender::new(&ds)?;
        Ok(PtTable { ds, app })
    }
}

fn child(g: &PtGroup, name: &str) -> String {
    sciio_hdf5::join_path(g.path(), name)
}

/// The `FIELD_N_FILL` values PyTables writes: one per leaf column, top-level columns first,
/// then nested ones (breadth-first, as `Description._f_walk`), each a zero of the column's
/// base type (strings: an empty 1-byte string; times as their numbers; enums as their base).
fn column_fills(row: &H5Type) -> Vec<AttrValue> {
    let mut out = Vec::new();
    let mut level: Vec<&H5Type> = vec![row];
    while !level.is_empty() {
        let mut next = Vec::new();
        for ty in level {
            let H5Type::Compound { fields, .. } = ty else {
                continue;
            };
            for f in fields {
                if matches!(f.ty, H5Type::Compound { .. }) && f.ty.complex_parts().is_none() {
                    next.push(&f.ty);
                } else {
                    out.push(zero_of(&f.ty));
                }
            }
        }
        level = next;
    }
    out
}

fn zero_of(ty: &H5Type) -> AttrValue {
    let ty = match ty {
        H5Type::Array { base, .. } => base.as_ref(),
        t => t,
    };
    let scalar = |t: H5Type| {
        AttrValue::Raw(RawData {
            bytes: vec![0; t.size()],
            ty: t,
            shape: vec![],
        })
    };
    match ty {
        H5Type::FixedString { .. } => AttrValue::Raw(RawData {
            ty: H5Type::FixedString {
                size: 1,
                charset: CharSet::Ascii,
            },
            shape: vec![],
            bytes: vec![0],
        }),
        H5Type::Time { size: 4, order } => scalar(H5Type::Int {
            size: 4,
            signed: true,
            order: *order,
        }),
        H5Type::Time { size, order } => scalar(H5Type::Float {
            size: *size,
            precision: size * 8,
            order: *order,
        }),
        H5Type::Enum { base, .. } => scalar((**base).clone()),
        other => scalar(other.clone()),
    }
}

/// A Table open for appending.
#[derive(Debug)]
pub struct PtTable {
    ds: DatasetWriter,
    app: ChunkAppender,
}

impl PtTable {
    /// Rows in the table.
    pub fn nrows(&self) -> u64 {
        self.app.rows()
    }

    /// The row type.
    pub fn row_type(&self) -> &H5Type {
        self.ds.dtype()
    }

    /// Appends rows (bytes in the row compound's layout); whole chunks are compressed on all
    /// cores, and `NROWS` is updated before returning.
    pub fn append(&mut self, rows: &[u8]) -> Result<()> {
        if has_time64(self.ds.dtype()) {
            let mut owned = rows.to_vec();
            time64_to_file(self.ds.dtype(), &mut owned);
            self.app.append(&owned)?;
        } else {
            self.app.append(rows)?;
        }
        self.ds
            .set_attr("NROWS", &int_attr(self.app.rows() as i64, 8))
    }

    /// Bytes of one chunk of rows.
    pub fn chunk_band_bytes(&self) -> Option<u64> {
        self.ds
            .chunk()
            .and_then(|c| c.first())
            .map(|&rows| rows.saturating_mul(self.ds.dtype().size() as u64))
    }

    /// Whether the next rows can be copied file to file ([`PtTable::copy_from`]): an
    /// uncompressed table made with [`TableBuilder::allocate_early`], continued at a chunk
    /// boundary, with no time column (those are converted on the way).
    pub fn can_copy(&self) -> Result<bool> {
        Ok(!has_time64(self.ds.dtype()) && self.app.can_copy()?)
    }

    /// Appends `len` bytes of rows (the row compound's layout) copied from `src` at byte
    /// `at` straight into the chunks' storage; `len` is whole chunks unless these are the
    /// last rows. Only after [`PtTable::can_copy`] said so. `NROWS` is updated.
    pub fn copy_from(&mut self, src: &std::fs::File, at: u64, len: u64) -> Result<()> {
        self.app.copy_from(src, at, len)?;
        self.ds
            .set_attr("NROWS", &int_attr(self.app.rows() as i64, 8))
    }

    /// Sets a user attribute.
    pub fn set_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        self.ds.set_attr(name, value)
    }
}

/// Options for a CArray or EArray. Defaults: empty title, the parent group's filters,
/// expected rows = the shape's first dimension (CArray) or 1000 along the extendable
/// dimension (EArray, PyTables' `EXPECTED_ROWS_EARRAY`), chunk shape computed from them as
/// PyTables does.
#[derive(Debug)]
pub struct ArrayBuilder<'g> {
    group: &'g PtGroup,
    name: String,
    atom: H5Type,
    shape: Vec<u64>,
    title: String,
    filters: Option<Filters>,
    expected_rows: Option<u64>,
    chunk: Option<Vec<u64>>,
    /// The extendable dimension (EArrays).
    extdim: Option<usize>,
    /// Chunk storage allocated at creation ([`ArrayBuilder::allocate_early`]).
    early: bool,
}

impl ArrayBuilder<'_> {
    /// Sets the title.
    pub fn title(mut self, title: &str) -> Self {
        self.title = title.to_string();
        self
    }

    /// Sets the filters.
    pub fn filters(mut self, filters: Filters) -> Self {
        self.filters = Some(filters);
        self
    }

    /// Sets the number of rows expected along dimension 0 (an EArray's extendable one).
    pub fn expected_rows(mut self, n: u64) -> Self {
        self.expected_rows = Some(n);
        self
    }

    /// Forces the chunk shape.
    pub fn chunk_shape(mut self, chunk: Vec<u64>) -> Self {
        self.chunk = Some(chunk);
        self
    }

    /// Allocates every chunk's storage when the array is created, so that uncompressed rows
    /// can be copied into it file to file ([`PtFill::copy_from`]). PyTables and every HDF5
    /// reader read the array as any other; only its fill-value message records it.
    pub fn allocate_early(mut self) -> Self {
        self.early = true;
        self
    }

    fn make(&self) -> Result<DatasetWriter> {
        check_atom(&self.atom)?;
        if self.shape.is_empty() {
            return Err(Error::invalid_input(
                "a CArray/EArray needs at least one dimension",
            ));
        }
        let filters = self.filters.unwrap_or_default();
        let itemsize = self.atom.size() as u64;
        // Leaf.maindim: the extendable dimension, else the first.
        let maindim = self.extdim.unwrap_or(0);
        if maindim >= self.shape.len() {
            return Err(Error::invalid_input(
                "the extendable dimension is out of the shape",
            ));
        }
        // Array.rowsize: bytes of the dimensions orthogonal to maindim.
        let rowsize = (0..self.shape.len())
            .filter(|&i| i != maindim)
            .fold(itemsize, |a, i| a * self.shape[i]);
        let expected = self.expected_rows.unwrap_or(if self.extdim.is_some() {
            1000
        } else {
            self.shape[0]
        });
        let blosc2 = filters.complevel > 0 && matches!(filters.complib, Complib::Blosc2(_));
        let chunk = match &self.chunk {
            Some(c) if c.len() != self.shape.len() || c.contains(&0) => {
                return Err(Error::invalid_input(format!(
                    "chunk shape {c:?} does not fit shape {:?}",
                    self.shape
                )))
            }
            Some(c) => c.clone(),
            None => calc_chunkshape(
                &self.shape,
                maindim,
                expected,
                rowsize,
                itemsize,
                blosc2_caches(blosc2),
            ),
        };
        let (tag, version) = if self.extdim.is_some() {
            (TAG_EARRAY, "1.1")
        } else {
            (TAG_CARRAY, "1.1")
        };
        let pipeline = filters.pipeline(&self.atom, &chunk, tag, version);
        // H5ARRAYmake: fixed dimensions may grow up to the chunk (max(dim, chunk)).
        let max = self
            .shape
            .iter()
            .zip(&chunk)
            .enumerate()
            .map(|(i, (&d, &c))| {
                if self.extdim == Some(i) {
                    None
                } else {
                    Some(d.max(c))
                }
            })
            .collect();
        // Compressed chunks are stored at their encoded size: nothing to allocate early.
        let early = self.early && pipeline.is_empty();
        let mut spec = DatasetSpec::chunked(self.atom.clone(), self.shape.clone(), max, chunk)
            .filters(pipeline);
        if early {
            spec = spec.allocate_early();
        }
        let ds = self.group.g.create_dataset(&self.name, &spec)?;
        ds.set_attr(
            "CLASS",
            &ascii(if self.extdim.is_some() {
                "EARRAY"
            } else {
                "CARRAY"
            }),
        )?;
        if let Some(extdim) = self.extdim {
            ds.set_attr("EXTDIM", &int_attr(extdim as i64, 4))?;
        }
        ds.set_attr("TITLE", &ascii(&self.title))?;
        ds.set_attr("VERSION", &ascii(version))?;
        Ok(ds)
    }

    /// Creates a CArray and fills it with `data` (every element, C order, file layout),
    /// compressing chunks on all cores.
    pub fn write(self, data: &[u8]) -> Result<()> {
        let ds = self.make()?;
        let mut app = ChunkAppender::fill(&ds)?;
        let n: u64 = self.shape.iter().product();
        if n * self.atom.size() as u64 != data.len() as u64 {
            return Err(Error::invalid_input(format!(
                "{} bytes for {n} elements of {} bytes",
                data.len(),
                self.atom.size()
            ))
            .with_node(ds.path()));
        }
        app.append(data)?;
        app.flush_tail()
    }

    /// Creates a CArray to be filled row block by row block ([`PtFill::append`]), whole
    /// bands of chunks compressed on all cores as they fill.
    pub fn fill(self) -> Result<PtFill> {
        let ds = self.make()?;
        let app = ChunkAppender::fill(&ds)?;
        PtFill::new(ds, Some(app))
    }

    /// Creates an EArray (empty) for appending.
    pub fn create(self) -> Result<PtEArray> {
        let Some(extdim) = self.extdim else {
            return Err(Error::invalid_input(
                "create() makes an EArray: use write() for a CArray",
            ));
        };
        let ds = self.make()?;
        let app = if extdim == 0 {
            EArrayAppender::Rows(ChunkAppender::new(&ds)?)
        } else {
            // New and empty: no partial chunk to read back.
            EArrayAppender::Along(earray::ExtAppender::new(&ds, extdim, None)?)
        };
        Ok(PtEArray { ds, app })
    }
}

/// An Array or CArray of known shape being filled along its first dimension, in row blocks
/// of any size: [`PtFill::finish`] checks that every row was written.
#[derive(Debug)]
pub struct PtFill {
    ds: DatasetWriter,
    /// `None`: a contiguous Array, written slab by slab.
    app: Option<ChunkAppender>,
    rows: u64,
    total: u64,
    row_bytes: usize,
    /// Bytes given of the row being filled in pieces ([`PtFill::append_elements`]).
    part_bytes: usize,
    /// A contiguous Array's row being given in pieces (written when whole: such Arrays are
    /// under [`super::CARRAY_THRESHOLD`]).
    row_part: Vec<u8>,
}

impl PtFill {
    fn new(ds: DatasetWriter, app: Option<ChunkAppender>) -> Result<PtFill> {
        let shape = ds.shape()?;
        let total = shape.first().copied().unwrap_or(1);
        let row_bytes = shape.iter().skip(1).product::<u64>() as usize * ds.dtype().size();
        Ok(PtFill {
            ds,
            app,
            // Rows of no bytes are all there already.
            rows: if row_bytes == 0 { total } else { 0 },
            total,
            row_bytes,
            part_bytes: 0,
            row_part: Vec::new(),
        })
    }

    /// Bytes of one row (every dimension but the first).
    pub fn row_bytes(&self) -> usize {
        self.row_bytes
    }

    /// Writes the next elements (C order, the file's layout), whole rows or not: a row
    /// larger than memory should hold may come in pieces, whose chunks are written as the
    /// pieces complete them ([`ChunkAppender::append_elements`]).
    pub fn append_elements(&mut self, bytes: &[u8]) -> Result<()> {
        let elem = self.ds.dtype().size();
        let left = (self.total - self.rows) as u128 * self.row_bytes as u128;
        let left = left - self.part_bytes as u128;
        if self.row_bytes == 0 || !bytes.len().is_multiple_of(elem) || bytes.len() as u128 > left {
            return Err(Error::invalid_input(format!(
                "{} bytes is not whole {elem}-byte elements of the {left} bytes left",
                bytes.len()
            ))
            .with_node(self.ds.path()));
        }
        match &mut self.app {
            Some(app) => app.append_elements(bytes)?,
            None => self.append_contiguous(bytes)?,
        }
        let done = self.part_bytes + bytes.len();
        self.rows += (done / self.row_bytes) as u64;
        self.part_bytes = done % self.row_bytes;
        Ok(())
    }

    /// [`PtFill::append_elements`] into a contiguous Array: whole rows written at once, a
    /// row's pieces gathered until it is whole.
    fn append_contiguous(&mut self, mut bytes: &[u8]) -> Result<()> {
        let mut row = self.rows;
        if !self.row_part.is_empty() || bytes.len() < self.row_bytes {
            let take = (self.row_bytes - self.row_part.len()).min(bytes.len());
            self.row_part.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.row_part.len() < self.row_bytes {
                return Ok(());
            }
            self.ds.write_rows(row, &self.row_part)?;
            self.row_part.clear();
            row += 1;
        }
        let whole = bytes.len() / self.row_bytes * self.row_bytes;
        self.ds.write_rows(row, &bytes[..whole])?;
        self.row_part.extend_from_slice(&bytes[whole..]);
        Ok(())
    }

    /// Writes the next rows (elements in C order, the file's layout).
    pub fn append(&mut self, rows: &[u8]) -> Result<()> {
        if self.part_bytes != 0 {
            return self.append_elements(rows);
        }
        if self.row_bytes == 0 || !rows.len().is_multiple_of(self.row_bytes) {
            return Err(Error::invalid_input(format!(
                "{} bytes is not a whole number of {}-byte rows",
                rows.len(),
                self.row_bytes
            ))
            .with_node(self.ds.path()));
        }
        let n = (rows.len() / self.row_bytes) as u64;
        if self.rows + n > self.total {
            return Err(Error::invalid_input(format!(
                "{} rows given for an array of {}",
                self.rows + n,
                self.total
            ))
            .with_node(self.ds.path()));
        }
        match &mut self.app {
            Some(app) => app.append(rows)?,
            None => self.ds.write_rows(self.rows, rows)?,
        }
        self.rows += n;
        Ok(())
    }

    /// Bytes of one band of chunks (the rows of one chunk along dimension 0, every column);
    /// `None` for a contiguous Array.
    pub fn chunk_band_bytes(&self) -> Option<u64> {
        self.ds
            .chunk()
            .and_then(|c| c.first())
            .map(|&rows| rows.saturating_mul(self.row_bytes as u64))
    }

    /// Whether the next rows can be copied file to file ([`PtFill::copy_from`]): an
    /// uncompressed CArray made with [`ArrayBuilder::allocate_early`] whose chunks hold whole
    /// rows, continued at a chunk boundary.
    pub fn can_copy(&self) -> Result<bool> {
        match &self.app {
            Some(app) if self.row_bytes > 0 => app.can_copy(),
            _ => Ok(false),
        }
    }

    /// Writes the next `len` bytes of rows (C order, the file's layout) by copying them from
    /// `src` at byte `at` straight into the chunks' storage; `len` is whole bands of chunks
    /// unless these are the last rows. Only after [`PtFill::can_copy`] said so.
    pub fn copy_from(&mut self, src: &std::fs::File, at: u64, len: u64) -> Result<()> {
        let row_bytes = self.row_bytes as u64;
        let n = if row_bytes == 0 || !len.is_multiple_of(row_bytes) {
            None
        } else {
            Some(len / row_bytes)
        };
        let Some(n) = n.filter(|n| self.rows + n <= self.total) else {
            return Err(Error::invalid_input(format!(
                "{len} bytes is not whole rows of the {} left",
                self.total - self.rows
            ))
            .with_node(self.ds.path()));
        };
        let Some(app) = &mut self.app else {
            return Err(
                Error::invalid_input("a contiguous Array is written row by row")
                    .with_node(self.ds.path()),
            );
        };
        app.copy_from(src, at, len)?;
        self.rows += n;
        Ok(())
    }

    /// Writes what is pending; every row must have been written.
    pub fn finish(self) -> Result<()> {
        if self.rows != self.total || self.part_bytes != 0 {
            return Err(Error::truncated(format!(
                "{} of the {} rows were written",
                self.rows, self.total
            ))
            .with_node(self.ds.path()));
        }
        match &self.app {
            Some(app) => app.flush_tail(),
            None => Ok(()),
        }
    }
}

/// How an EArray grows: rows along dimension 0 (contiguous blocks), or slices along another.
#[derive(Debug)]
enum EArrayAppender {
    Rows(ChunkAppender),
    Along(earray::ExtAppender),
}

/// An EArray open for appending along its extendable dimension.
#[derive(Debug)]
pub struct PtEArray {
    ds: DatasetWriter,
    app: EArrayAppender,
}

impl PtEArray {
    /// Length of the extendable dimension so far.
    pub fn nrows(&self) -> u64 {
        match &self.app {
            EArrayAppender::Rows(a) => a.rows(),
            EArrayAppender::Along(a) => a.rows(),
        }
    }

    /// Appends a block: elements in C order, file layout, of the array's shape with any
    /// length along the extendable dimension (a whole number of rows for dimension 0). Only
    /// one partial chunk band is held between appends; chunks are compressed on all cores.
    pub fn append(&mut self, block: &[u8]) -> Result<()> {
        if has_time64(self.ds.dtype()) {
            let mut owned = block.to_vec();
            time64_to_file(self.ds.dtype(), &mut owned);
            return self.append_file_layout(&owned);
        }
        self.append_file_layout(block)
    }

    /// Appends a block already in the file's layout (time64 as packed `timeval`s).
    fn append_file_layout(&mut self, block: &[u8]) -> Result<()> {
        match &mut self.app {
            EArrayAppender::Rows(a) => a.append(block),
            EArrayAppender::Along(a) => a.append(&self.ds, block),
        }
    }

    /// Sets a user attribute.
    pub fn set_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        self.ds.set_attr(name, value)
    }
}

/// What a VLArray's rows hold.
#[derive(Debug, Clone, PartialEq)]
pub enum VlAtom {
    /// Sequences of elements of a type (an array type for multidimensional atoms).
    Values(H5Type),
    /// `VLStringAtom`: byte strings.
    VlString,
    /// `VLUnicodeAtom`: text, stored as UCS-4 code points.
    VlUnicode,
}

/// A VLArray open for appending.
#[derive(Debug)]
pub struct PtVlArray {
    ds: DatasetWriter,
    atom: VlAtom,
    rows: u64,
}

impl PtVlArray {
    /// Appends one row: the elements' bytes (`Values`), the bytes (`VlString`).
    pub fn append_bytes(&mut self, row: &[u8]) -> Result<()> {
        if self.atom == VlAtom::VlUnicode {
            return Err(Error::invalid_input(
                "a vlunicode VLArray takes text: use append_text",
            ));
        }
        self.ds.write_vlen_rows(self.rows, &[row.to_vec()])?;
        self.rows += 1;
        Ok(())
    }

    /// Appends one row of text (`VlUnicode`, or `VlString` as UTF-8 bytes).
    pub fn append_text(&mut self, text: &str) -> Result<()> {
        match self.atom {
            VlAtom::VlUnicode => {
                let ucs4: Vec<u8> = text
                    .chars()
                    .flat_map(|c| (c as u32).to_le_bytes())
                    .collect();
                self.ds.write_vlen_rows(self.rows, &[ucs4])?;
                self.rows += 1;
                Ok(())
            }
            VlAtom::VlString => self.append_bytes(text.as_bytes()),
            VlAtom::Values(_) => Err(Error::new(
                ErrorKind::InvalidInput,
                "a VLArray of values takes bytes: use append_bytes",
            )),
        }
    }

    /// Sets a user attribute.
    pub fn set_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        self.ds.set_attr(name, value)
    }
}

fn has_time64(ty: &H5Type) -> bool {
    let mut v = Vec::new();
    time64_offsets(ty, 0, &mut v);
    !v.is_empty()
}

/// Byte offsets (and order) of every time64 value inside one element of `ty`.
fn time64_offsets(ty: &H5Type, base: usize, out: &mut Vec<(usize, ByteOrder)>) {
    match ty {
        H5Type::Time { size: 8, order } => out.push((base, *order)),
        H5Type::Compound { fields, .. } => fields
            .iter()
            .for_each(|f| time64_offsets(&f.ty, base + f.offset, out)),
        H5Type::Array { base: b, dims } => {
            let n: usize = dims.iter().product();
            for i in 0..n {
                time64_offsets(b, base + i * b.size(), out);
            }
        }
        _ => {}
    }
}

/// PyTables stores time64 values (float seconds in numpy) as a packed `timeval`: seconds in
/// the high 32 bits, rounded microseconds in the low ones (`conv_float64_timeval32`).
fn time64_to_file(ty: &H5Type, bytes: &mut [u8]) {
    let mut offsets = Vec::new();
    time64_offsets(ty, 0, &mut offsets);
    for elem in bytes.chunks_exact_mut(ty.size().max(1)) {
        for &(at, order) in &offsets {
            let Some(cell) = elem.get_mut(at..at + 8) else {
                continue;
            };
            let mut w = [0u8; 8];
            w.copy_from_slice(cell);
            let secs = if order == ByteOrder::Big {
                f64::from_be_bytes(w)
            } else {
                f64::from_le_bytes(w)
            };
            let whole = secs.trunc();
            let usec = ((secs - whole) * 1e6).round() as i64;
            let packed = ((whole as i64) << 32) | (usec & 0xffff_ffff);
            cell.copy_from_slice(&if order == ByteOrder::Big {
                packed.to_be_bytes()
            } else {
                packed.to_le_bytes()
            });
        }
    }
}

/// The cache sizes that size a Blosc2 leaf's chunks, `None` for other filters.
fn blosc2_caches(blosc2: bool) -> Option<CpuCaches> {
    blosc2.then(CpuCaches::of_this_machine)
}
