//! Writing MAT files in conversions ([`MatOut`]): each numpy array becomes a MATLAB numeric or
//! logical variable (`MatValue::numeric`, the array's shape taken as MATLAB's, at least 2-d
//! like `hdf5storage.savemat` makes it) and a `U`/`S` array a char array (hdf5storage's
//! layout into v7.3, `scipy.io.savemat`'s into v7/v5); the members of a
//! `scipy.sparse.save_npz` file under one name make one sparse variable. Reading MAT files is
//! in `mat.rs`, the MAT routes of conversions in `mat_convert.rs`.

use std::collections::HashSet;
use std::path::Path;

use sciio_core::{DType, Error, NdArray, Order, Result, ScalarKind};
use sciio_mat::{
    MatValue, MatVersion, MatWriter, PiecesOf, PythonMeta, SparseMatrix, StructArray, TreeValue,
    WriteOptions,
};

use crate::compress::CompressSpec;
use crate::mat_pieces::{numeric_kind, route, Sizes};
use crate::mat_text::TextOut;
use crate::node::ArrayInfo;

pub(crate) mod records;

/// A MAT file being written: into a temporary file in the destination's folder, renamed into
/// place by [`MatOut::finish`] (dropped unfinished, the temporary file is removed).
pub(crate) struct MatOut {
    writer: MatWriter,
    temp: tempfile::TempPath,
    _registered: sciio_temp::Registration,
    /// Top-level variables written so far.
    written: HashSet<String>,
    /// Values named by a path (`a/b`), gathered into structs at [`MatOut::finish`].
    nested: Folder,
}

impl std::fmt::Debug for MatOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatOut").field("temp", &self.temp).finish()
    }
}

/// `--compress` for MAT files: `deflate[:N]` (v7.3: with shuffle, as MATLAB compresses; v7:
/// the zlib level of each variable) or `none`; otherwise MATLAB's default for v7.3 (deflate 3)
/// and level 3 for v7 too: MATLAB and `scipy.io.savemat` use zlib's default (6), but zlib-rs
/// at 3 compresses a large double matrix ~3 times as fast into a file within 0.5 % of theirs
/// (BENCHMARKS.md, mat5); variables under 64 KiB are compressed at 9 whatever the level
/// (see `sciio_mat`'s Level-5 writer). `--compress deflate:6` gives zlib's default.
pub(crate) fn mat_options(
    spec: Option<&CompressSpec>,
    version: crate::options::MatOutVersion,
) -> Result<WriteOptions> {
    let options = WriteOptions::default().version(match version {
        crate::options::MatOutVersion::V73 => MatVersion::V73,
        crate::options::MatOutVersion::V7 => MatVersion::V7,
        crate::options::MatOutVersion::V5 => MatVersion::V5,
    });
    let Some(spec) = spec else {
        return Ok(match version {
            crate::options::MatOutVersion::V7 => options.compression(Some(3)),
            _ => options,
        });
    };
    if version == crate::options::MatOutVersion::V5 {
        return Err(Error::invalid_input(
            "MAT v5 files are not compressed; use --mat-version 7 for compressed variables",
        ));
    }
    Ok(match spec.only_one("mat", &["deflate"], 0..=9)? {
        None => options.compression(None),
        Some(f) => options.compression(Some(f.level.map_or(3, |l| l.unsigned_abs()))),
    })
}

impl MatOut {
    pub(crate) fn create(
        dst: &Path,
        compress: Option<&CompressSpec>,
        version: crate::options::MatOutVersion,
    ) -> Result<MatOut> {
        let options = mat_options(compress, version).map_err(|e| e.with_file(dst))?;
        let (temp, registered) = crate::atomic::temp_file_beside(dst)?;
        let temp = temp.into_temp_path();
        let writer = MatWriter::create(&temp, options).map_err(|e| e.with_file(dst))?;
        Ok(MatOut {
            writer,
            temp,
            _registered: registered,
            written: HashSet::new(),
            nested: Folder::default(),
        })
    }

    /// Writes `array` as variable `name` as `hdf5storage.savemat` stores it (with its
    /// `Python.*` attributes, [`sciio_mat::from_numpy`]); a path (`a/b`) makes field `b` of
    /// struct `a`. Into a Level-5 file (v7, v5), which scipy.io and MATLAB read, `U`/`S`
    /// text is the char array `scipy.io.savemat` writes ([`sciio_mat::scipy_value`]).
    pub(crate) fn write(&mut self, name: &str, array: &NdArray) -> Result<()> {
        if self.writer.scipy_text() {
            let value =
                sciio_mat::scipy_value(array).map_err(|e| e.with_node(format!("/{name}")))?;
            return self.write_entry(name, value, None);
        }
        let (value, meta) =
            sciio_mat::from_numpy(array).map_err(|e| e.with_node(format!("/{name}")))?;
        self.write_entry(name, value, Some(meta))
    }

    /// Notes top-level variable `name` as written: an error when a struct of that name is
    /// being gathered from paths (`name/field`).
    fn claim_variable(&mut self, name: &str) -> Result<()> {
        if self.nested.contains(name) {
            return Err(both_value_and_struct(name).with_node(format!("/{name}")));
        }
        self.written.insert(name.to_string());
        Ok(())
    }

    /// Writes `value` as variable `name`, or keeps it for the struct a path (`a/b/c`) names,
    /// as hdf5storage stores a path's groups: MATLAB sees struct `a` with a struct field `b`
    /// holding field `c`; with hdf5storage's `Python.*` attributes `meta` (of the value
    /// copied, MAT → MAT) where they are kept: in v7.3 files (Level-5 files hold none).
    pub(crate) fn write_value_with(
        &mut self,
        name: &str,
        value: MatValue,
        meta: Option<PythonMeta>,
    ) -> Result<()> {
        let meta = meta.filter(|_| !self.writer.scipy_text());
        self.write_entry(name, value, meta)
    }

    fn write_entry(&mut self, name: &str, value: MatValue, meta: Option<PythonMeta>) -> Result<()> {
        let name = name.trim_matches('/');
        let node = || format!("/{name}");
        let parts: Vec<&str> = name.split('/').collect();
        if parts.len() == 1 {
            self.claim_variable(name)?;
            return self.writer.write_with_meta(name, &value, meta.as_ref());
        }
        if self.written.contains(parts[0]) {
            return Err(both_value_and_struct(parts[0]).with_node(node()));
        }
        self.nested
            .insert(&parts, Entry::Value(Box::new((value, meta))))
            .map_err(|e| e.with_node(node()))
    }

    /// Writes a numeric array given piece by piece as top-level variable `name` (MATLAB's own
    /// value, with `meta` as [`MatOut::write_value_with`] keeps it: what it makes of the
    /// whole array).
    pub(crate) fn write_pieces(
        &mut self,
        name: &str,
        array: sciio_mat::ArrayPieces<'_>,
        meta: Option<&PythonMeta>,
    ) -> Result<()> {
        let name = name.trim_matches('/');
        self.claim_variable(name)?;
        let meta = meta.filter(|_| !self.writer.scipy_text());
        self.writer.write_pieces(name, array, meta)
    }

    /// Writes the array at `path` of `src` as top-level variable `name` piece by piece
    /// ([`sciio_mat::MatWriter::write_pieces`]: the same file as [`MatOut::write`] makes of
    /// the whole array) when it is a large numeric or logical array from a `.npy`, `.npz` or
    /// HDF5 file, of any number of dimensions, in C or Fortran order (the routes are in
    /// `mat_pieces.rs`); `false`, having written nothing, otherwise. `progress` is told the
    /// bytes done so far: an array staged through a temporary file (or an `.npz` member
    /// copied into one) counts its copy as the first half of its bytes and its writing as
    /// the second. A structured `.npy`/`.npz` array goes batch of records by batch
    /// (`mat_write/records.rs`).
    pub(crate) fn write_streamed(
        &mut self,
        name: &str,
        src: &mut crate::file::File,
        path: &str,
        info: &ArrayInfo,
        progress: &mut dyn FnMut(u64),
    ) -> Result<bool> {
        self.write_streamed_with(name, src, path, info, progress, Sizes::DEFAULT)
    }

    /// [`MatOut::write_streamed`] with the sizes that choose the route (smaller in tests).
    pub(crate) fn write_streamed_with(
        &mut self,
        name: &str,
        src: &mut crate::file::File,
        path: &str,
        info: &ArrayInfo,
        progress: &mut dyn FnMut(u64),
        sizes: Sizes,
    ) -> Result<bool> {
        let name = name.trim_matches('/');
        if name.contains('/') {
            return Ok(false);
        }
        let scipy = self.writer.scipy_text();
        if let Some(text) = crate::mat_text::text_view(src, info, sizes, scipy) {
            self.claim_variable(name)?;
            let folder = self.folder();
            let writer = &mut self.writer;
            let how = (&text, writer.keeps_byte_strings(), &mut None);
            let write = &mut |t: TextOut<'_>, m: &sciio_mat::PythonMeta| match t {
                TextOut::Codes(t) => writer.write_text_pieces(name, t, Some(m)),
                TextOut::Strings(s) => writer.write_byte_strings_pieces(name, s, Some(m)),
            };
            crate::mat_text::stream_text(src, path, how, sizes, &folder, progress, write)?;
            return Ok(true);
        }
        if streamable(src, info, sizes).is_none() {
            return self.write_records_streamed(name, src, path, info, progress);
        }
        self.claim_variable(name)?;
        let folder = self.folder();
        let writer = &mut self.writer;
        stream_array(src, path, info, sizes, &folder, progress, &mut |array| {
            let meta = sciio_mat::numeric_meta(array.kind, &array.shape);
            writer.write_pieces(name, array, Some(&meta))
        })?;
        Ok(true)
    }

    /// The folder of the file being written (staged copies go beside it).
    fn folder(&self) -> std::path::PathBuf {
        match self.temp.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        }
    }

    /// For an array [`MatOut::write_streamed`] would write piece by piece but named by a path
    /// (`a/b`, a field of struct `a`): notes it as array `id` of the struct to be, whose
    /// elements [`MatOut::finish_with`] asks for when it writes the struct (through
    /// [`stream_array`]), so that the struct is never held. `false`, having noted nothing,
    /// for a top-level name or an array not streamed.
    pub(crate) fn defer_streamed(
        &mut self,
        name: &str,
        src: &crate::file::File,
        info: &ArrayInfo,
        id: usize,
    ) -> Result<bool> {
        self.defer_streamed_with(name, src, info, id, Sizes::DEFAULT)
    }

    fn defer_streamed_with(
        &mut self,
        name: &str,
        src: &crate::file::File,
        info: &ArrayInfo,
        id: usize,
        sizes: Sizes,
    ) -> Result<bool> {
        let name = name.trim_matches('/');
        if !name.contains('/') {
            return Ok(false);
        }
        if self.defer_text(name, src, info, id, sizes)?
            || self.defer_records(name, src, info, id)?
        {
            return Ok(true);
        }
        let Some(kind) = streamable(src, info, sizes) else {
            return Ok(false);
        };
        let meta = sciio_mat::numeric_meta(kind, &info.shape);
        self.defer(name, id, kind, info.shape.clone(), Some(meta))?;
        Ok(true)
    }

    /// For a text array [`MatOut::write_streamed`] would write piece by piece
    /// ([`crate::mat_text::text_view`]) but named by a path (`a/b`): notes it as text `id` of
    /// the struct to be ([`TreeValue::Text`], with the `Python.*` attributes the whole
    /// array's char has), its codes asked for when [`MatOut::finish_with`] writes the struct
    /// (through [`stream_deferred_text`]); `false`, having noted nothing, for other arrays.
    fn defer_text(
        &mut self,
        name: &str,
        src: &crate::file::File,
        info: &ArrayInfo,
        id: usize,
        sizes: Sizes,
    ) -> Result<bool> {
        let Some(text) = crate::mat_text::text_view(src, info, sizes, self.scipy_text()) else {
            return Ok(false);
        };
        let (kind, shape) = (text.kind(), text.shape().to_vec());
        let meta = sciio_mat::numeric_meta(kind, &shape);
        let tree = TreeValue::Text {
            id,
            kind,
            shape,
            meta: Some(meta),
        };
        self.defer_tree(name, tree)?;
        Ok(true)
    }

    /// Whether text takes scipy.io's layout in this file (a Level-5 one) rather than
    /// hdf5storage's: what [`stream_deferred_text`] is told.
    pub(crate) fn scipy_text(&self) -> bool {
        self.writer.scipy_text()
    }

    /// Notes array `id` of `kind` and MATLAB size `shape` as the value at path `name` (`a/b`),
    /// its elements asked for piece by piece by [`MatOut::finish_with`].
    pub(crate) fn defer(
        &mut self,
        name: &str,
        id: usize,
        kind: ScalarKind,
        shape: Vec<usize>,
        meta: Option<PythonMeta>,
    ) -> Result<()> {
        let tree = TreeValue::Pieces {
            id,
            kind,
            shape,
            meta,
        };
        self.defer_tree(name, tree)
    }

    /// Notes `tree` (a [`TreeValue::Pieces`] or [`TreeValue::Records`]) as the value at
    /// path `name` (`a/b`), its elements asked for by [`MatOut::finish_with`].
    fn defer_tree(&mut self, name: &str, tree: TreeValue) -> Result<()> {
        let name = name.trim_matches('/');
        let parts: Vec<&str> = name.split('/').collect();
        if parts.len() < 2 {
            return Err(Error::invalid_input("internal: only a field is deferred")
                .with_node(format!("/{name}")));
        }
        if self.written.contains(parts[0]) {
            return Err(both_value_and_struct(parts[0]).with_node(format!("/{name}")));
        }
        self.nested
            .insert(&parts, Entry::Deferred(Box::new(tree)))
            .map_err(|e| e.with_node(format!("/{name}")))
    }

    /// Writes the structs gathered from paths and finishes the file: see
    /// [`MatOut::finish_with`]; for a file without deferred arrays.
    #[cfg(test)]
    pub(crate) fn finish(self, dst: &Path) -> Result<()> {
        self.finish_with(dst, &mut |id, _| {
            Err(Error::invalid_input(format!(
                "internal: no source for deferred array {id}"
            )))
        })
    }

    /// Writes the structs gathered from paths (`a/b`), in the order their first values came,
    /// and renames the finished file into place. Deferred arrays ([`MatOut::defer`]) are asked
    /// from `pieces` by id as they are written: a struct holding one is written piece by
    /// piece ([`sciio_mat::MatWriter::write_tree`]), the same file as the whole struct makes.
    pub(crate) fn finish_with(mut self, dst: &Path, pieces: &mut PiecesOf<'_>) -> Result<()> {
        for (name, entry) in std::mem::take(&mut self.nested).entries {
            let written = match entry.into_tree(pieces) {
                Ok(tree) => self.writer.write_tree(&name, tree, pieces),
                Err(e) => Err(e),
            };
            written.map_err(|e| e.with_node(format!("/{name}")).with_file(dst))?;
        }
        self.writer.finish().map_err(|e| e.with_file(dst))?;
        set_mode(&self.temp, dst)?;
        self.temp.persist(dst).map_err(|e| {
            Error::io("cannot rename the finished file into place", e.error).with_file(dst)
        })
    }
}

/// The element kind of an array [`MatOut::write_streamed`] writes piece by piece (a large
/// numeric or logical array of a `.npy`, `.npz` or HDF5 file), or `None`.
fn streamable(src: &crate::file::File, info: &ArrayInfo, sizes: Sizes) -> Option<ScalarKind> {
    let source = matches!(
        src.format(),
        crate::format::Format::Npy | crate::format::Format::Npz
    );
    #[cfg(feature = "hdf5")]
    let source = source || src.format() == crate::format::Format::Hdf5;
    if !source {
        return None;
    }
    route(info, sizes)?;
    numeric_kind(info)
}

/// Gives the array at `path` of `src` (one [`streamable`] takes) to `write` as
/// [`sciio_mat::ArrayPieces`], its column-major elements read piece by piece by the route
/// `mat_pieces.rs` chooses (staged copies go into `folder`). `progress` is told the bytes
/// done so far: an array staged through a temporary file (or an `.npz` member copied into
/// one) counts its copy as the first half of its bytes and its writing as the second.
pub(crate) fn stream_array(
    src: &mut crate::file::File,
    path: &str,
    info: &ArrayInfo,
    sizes: Sizes,
    folder: &Path,
    progress: &mut dyn FnMut(u64),
    write: &mut dyn FnMut(sciio_mat::ArrayPieces<'_>) -> Result<()>,
) -> Result<()> {
    crate::mat_pieces::stream_array_of(src, (path, None), info, sizes, folder, progress, write)
}

/// Gives a deferred text array (one [`MatOut::defer_text`] noted: the array at `path` of
/// `src`) to `give` as [`sciio_mat::Pieces::Text`] (or, a `bytes` array with a non-ASCII
/// byte into a v7.3 file, its strings as [`sciio_mat::Pieces::Array`]); `false`, having
/// given nothing, when it is no such array. `scipy` is [`MatOut::scipy_text`] of the file;
/// `known` keeps the codes' summary between the two calls a Level-5 file makes: the first
/// (`known` empty) gives only the summary (`mat_text::give_summary`), the second the codes.
pub(crate) fn stream_deferred_text(
    src: &mut crate::file::File,
    (path, info): (&str, &ArrayInfo),
    (scipy, known): (bool, &mut Option<sciio_mat::TextSummary>),
    (sizes, folder): (Sizes, &Path),
    progress: &mut dyn FnMut(u64),
    give: &mut dyn FnMut(sciio_mat::Pieces<'_>) -> Result<()>,
) -> Result<bool> {
    let Some(text) = crate::mat_text::text_view(src, info, sizes, scipy) else {
        return Ok(false);
    };
    // A Level-5 file's first ask plans the element from the summary alone.
    if scipy && known.is_none() {
        let plan = &mut |t: sciio_mat::TextPieces<'_>| give(sciio_mat::Pieces::Text(t));
        if crate::mat_text::give_summary(src, path, (&text, known), plan)? {
            return Ok(true);
        }
    }
    let write = &mut |t: TextOut<'_>, _: &PythonMeta| match t {
        TextOut::Codes(t) => give(sciio_mat::Pieces::Text(t)),
        TextOut::Strings(s) => give(sciio_mat::Pieces::Array(s)),
    };
    let how = (&text, !scipy, known);
    crate::mat_text::stream_text(src, path, how, sizes, folder, progress, write)?;
    Ok(true)
}

/// The members of a `scipy.sparse.save_npz` file.
pub(crate) const SAVE_NPZ_MEMBERS: [&str; 8] = [
    "format",
    "shape",
    "data",
    "indices",
    "indptr",
    "row",
    "col",
    "_is_array",
];

fn both_value_and_struct(name: &str) -> Error {
    Error::invalid_input(format!(
        "'{name}' would be both a variable and a struct of the arrays under '{name}/'"
    ))
}

/// Values gathered under a path prefix, in the order they came: a scalar struct to be.
#[derive(Debug, Default)]
struct Folder {
    entries: Vec<(String, Entry)>,
}

#[derive(Debug)]
enum Entry {
    Value(Box<(MatValue, Option<PythonMeta>)>),
    /// A large array ([`TreeValue::Pieces`]) or structured array ([`TreeValue::Records`])
    /// whose elements are asked for when its struct is written.
    Deferred(Box<TreeValue>),
    Folder(Folder),
}

impl Entry {
    /// The value: a folder is a scalar struct of its entries, or — holding exactly the
    /// members `scipy.sparse.save_npz` writes — a sparse matrix; deferred arrays are gathered
    /// from `pieces`.
    fn into_value(self, pieces: &mut PiecesOf<'_>) -> Result<(MatValue, Option<PythonMeta>)> {
        match self {
            Entry::Value(v) => Ok(*v),
            Entry::Deferred(d) => d.gather(pieces),
            Entry::Folder(f) => {
                let mut fields = Vec::with_capacity(f.entries.len());
                let mut metas = Vec::with_capacity(f.entries.len());
                for (name, e) in f.entries {
                    let (value, meta) = e.into_value(pieces)?;
                    fields.push((name, value));
                    metas.push(meta.unwrap_or_default());
                }
                if let Some(sparse) = saved_sparse(&fields) {
                    return Ok((MatValue::Sparse(sparse), None));
                }
                let meta = PythonMeta {
                    attrs: None,
                    elements: vec![metas],
                };
                Ok((MatValue::Struct(StructArray::scalar(fields)), Some(meta)))
            }
        }
    }

    /// The value as [`sciio_mat::MatWriter::write_tree`] takes it: what
    /// [`Entry::into_value`] makes, deferred arrays left to come piece by piece — but for a
    /// folder that may make a sparse matrix (`saved_sparse`), which is gathered.
    fn into_tree(self, pieces: &mut PiecesOf<'_>) -> Result<TreeValue> {
        match self {
            Entry::Deferred(d) => Ok(*d),
            Entry::Folder(f) if f.has_deferred() && !f.may_be_sparse() => Ok(TreeValue::Struct(
                f.entries
                    .into_iter()
                    .map(|(name, e)| Ok((name, e.into_tree(pieces)?)))
                    .collect::<Result<_>>()?,
            )),
            whole => {
                let (value, meta) = whole.into_value(pieces)?;
                Ok(TreeValue::Whole(value, meta))
            }
        }
    }
}

/// The sparse matrix of `scipy.sparse.save_npz`'s members (`format` csc/csr with
/// `indices`, `indptr`; coo with `row`, `col`; `shape`, `data`), as MATLAB stores it (CSC,
/// sorted, duplicates summed); `None` when the members are not that layout or its values
/// have no MATLAB sparse class (those stay a struct of the arrays).
fn saved_sparse(fields: &[(String, MatValue)]) -> Option<SparseMatrix> {
    let get = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let format = match get("format")? {
        MatValue::Char(c) => c.to_string_lossy(),
        _ => return None,
    };
    let members: &[&str] = match format.as_str() {
        "csc" | "csr" => &["format", "shape", "data", "indices", "indptr"],
        "coo" => &["format", "shape", "data", "row", "col"],
        _ => return None,
    };
    let allowed = |n: &str| members.contains(&n) || n == "_is_array";
    if fields.len() < members.len() || !fields.iter().all(|(n, _)| allowed(n)) {
        return None;
    }
    let ints = |name: &str| -> Option<Vec<u64>> {
        let MatValue::Numeric(a) = get(name)? else {
            return None;
        };
        int_values(a)?
            .into_iter()
            .map(|v| u64::try_from(v).ok())
            .collect()
    };
    let [nrows, ncols] = ints("shape")?[..] else {
        return None;
    };
    let (nrows, ncols) = (usize::try_from(nrows).ok()?, usize::try_from(ncols).ok()?);
    let data = match get("data")? {
        MatValue::Numeric(a) | MatValue::Logical(a) => sparse_values(a)?,
        _ => return None,
    };
    let (rows, cols) = match format.as_str() {
        "coo" => (ints("row")?, ints("col")?),
        compressed => {
            let indices = ints("indices")?;
            let indptr = ints("indptr")?;
            let major = if compressed == "csc" { ncols } else { nrows };
            if indptr.len() != major.checked_add(1)?
                || indptr.first() != Some(&0)
                || indptr.windows(2).any(|w| w[0] > w[1])
                || indptr.last() != Some(&(indices.len() as u64))
            {
                return None;
            }
            let mut outer = Vec::with_capacity(indices.len());
            for (i, w) in indptr.windows(2).enumerate() {
                outer.extend(std::iter::repeat_n(i as u64, (w[1] - w[0]) as usize));
            }
            match compressed {
                "csc" => (indices, outer),
                _ => (outer, indices),
            }
        }
    };
    SparseMatrix::from_triplets(nrows, ncols, &rows, &cols, &data).ok()
}

/// The values of an integer array of any width and byte order; `None` for other dtypes.
fn int_values(a: &NdArray) -> Option<Vec<i128>> {
    let (size, signed) = match a.dtype().as_scalar()?.kind {
        ScalarKind::Int(n) => (usize::from(n), true),
        ScalarKind::UInt(n) => (usize::from(n), false),
        _ => return None,
    };
    if !matches!(size, 1 | 2 | 4 | 8) {
        return None;
    }
    let a = a.to_native().to_order(Order::C);
    let values = a
        .as_bytes()
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            if cfg!(target_endian = "big") {
                for (i, &x) in c.iter().rev().enumerate() {
                    b[i] = x;
                }
            } else {
                b[..size].copy_from_slice(c);
            }
            let u = u64::from_le_bytes(b);
            let shift = 64 - 8 * size as u32;
            match signed {
                true => i128::from(((u << shift) as i64) >> shift),
                false => i128::from(u),
            }
        })
        .collect();
    Some(values)
}

/// Sparse values as MATLAB holds them: double, complex double or logical; other numeric
/// values converted when every value is exact in double (float32, integers up to 2^53).
fn sparse_values(a: &NdArray) -> Option<NdArray> {
    let a = a.to_native().to_order(Order::C);
    let n = a.len();
    let a = a.reshape(&[n]).ok()?;
    let kind = a.dtype().as_scalar()?.kind;
    let f64s = |values: Vec<f64>| NdArray::from_vec(values, &[n]).ok();
    let bytes = a.as_bytes();
    match kind {
        ScalarKind::Float(8) | ScalarKind::Complex(16) | ScalarKind::Bool => Some(a),
        ScalarKind::Float(4) => f64s(
            bytes
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))) // ok: chunks of 4
                .collect(),
        ),
        ScalarKind::Int(_) | ScalarKind::UInt(_) => {
            let limit = 1i128 << 53;
            let values = int_values(&a)?;
            values
                .iter()
                .all(|v| v.abs() <= limit)
                .then(|| f64s(values.iter().map(|&v| v as f64).collect()))?
        }
        _ => None,
    }
}

impl Folder {
    fn contains(&self, name: &str) -> bool {
        self.entries.iter().any(|(n, _)| n == name)
    }

    /// Whether a deferred array is in it, at any depth.
    fn has_deferred(&self) -> bool {
        self.entries.iter().any(|(_, e)| match e {
            Entry::Deferred(_) => true,
            Entry::Folder(f) => f.has_deferred(),
            Entry::Value(_) => false,
        })
    }

    /// Whether its entries are named as `scipy.sparse.save_npz`'s members, so that
    /// `saved_sparse` may make it a sparse matrix (its values decide).
    fn may_be_sparse(&self) -> bool {
        self.entries
            .iter()
            .all(|(n, _)| SAVE_NPZ_MEMBERS.contains(&n.as_str()))
            && ["format", "shape", "data"].iter().all(|m| self.contains(m))
    }

    /// Puts `entry` at `path` (at least one part), creating folders on the way.
    fn insert(&mut self, path: &[&str], entry: Entry) -> Result<()> {
        let Some((first, rest)) = path.split_first() else {
            return Err(Error::invalid_input("an empty name"));
        };
        let at = self.entries.iter().position(|(n, _)| n == first);
        match (at, rest.is_empty()) {
            (None, true) => self.entries.push((first.to_string(), entry)),
            (None, false) => {
                let mut folder = Folder::default();
                folder.insert(rest, entry)?;
                self.entries
                    .push((first.to_string(), Entry::Folder(folder)));
            }
            (Some(i), false) => match &mut self.entries[i].1 {
                Entry::Folder(folder) => folder.insert(rest, entry)?,
                Entry::Value(_) | Entry::Deferred(_) => return Err(both_value_and_struct(first)),
            },
            (Some(_), true) => return Err(both_value_and_struct(first)),
        }
        Ok(())
    }
}

#[cfg(unix)]
fn set_mode(temp: &Path, dst: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let perms = std::fs::metadata(dst)
        .map(|m| m.permissions())
        .unwrap_or_else(|_| std::fs::Permissions::from_mode(0o644));
    std::fs::set_permissions(temp, perms)
        .map_err(|e| Error::io("cannot set permissions", e).with_file(dst))
}

#[cfg(not(unix))]
fn set_mode(_temp: &Path, _dst: &Path) -> Result<()> {
    Ok(())
}

/// Why a MAT file cannot hold an array of this kind ([`sciio_mat::from_numpy`] would refuse
/// it), or `None` when it can: numeric, logical, complex, `U`/`S` text and structured arrays
/// of those, as hdf5storage stores them.
pub(crate) fn no_class_for(info: &ArrayInfo) -> Option<String> {
    sciio_mat::no_class_reason(&info.dtype).map(|why| match &info.dtype {
        DType::Record(_) => format!("structured array: {why}"),
        _ => why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_maps_to_deflate_levels() {
        let v73 = crate::options::MatOutVersion::V73;
        assert_eq!(mat_options(None, v73).unwrap().compression_level, Some(3));
        let spec = CompressSpec::parse("deflate:7").unwrap();
        assert_eq!(
            mat_options(Some(&spec), v73).unwrap().compression_level,
            Some(7)
        );
        let spec = CompressSpec::parse("none").unwrap();
        assert_eq!(
            mat_options(Some(&spec), v73).unwrap().compression_level,
            None
        );
        let spec = CompressSpec::parse("blosc2:lz4:5").unwrap();
        assert!(mat_options(Some(&spec), v73).is_err());
        let v7 = mat_options(None, crate::options::MatOutVersion::V7).unwrap();
        assert_eq!(
            (v7.version, v7.compression_level),
            (MatVersion::V7, Some(3))
        );
        let spec = CompressSpec::parse("deflate:1").unwrap();
        assert!(mat_options(Some(&spec), crate::options::MatOutVersion::V5).is_err());
    }

    #[test]
    fn text_is_stored_as_hdf5storage_stores_it() {
        let a = NdArray::from_bytes(
            DType::scalar(ScalarKind::Unicode(3)),
            &[],
            Order::C,
            &[104, 0, 0, 0, 105, 0, 0, 0, 0, 0, 0, 0],
        )
        .unwrap();
        assert_eq!(sciio_mat::from_numpy(&a).unwrap().0, MatValue::from("hi"));
        // Two strings: one 1x4 char row, each string 2 units wide (NUL-padded).
        let two = NdArray::from_bytes(
            DType::scalar(ScalarKind::Unicode(2)),
            &[2],
            Order::C,
            &[104, 0, 0, 0, 105, 0, 0, 0, 111, 0, 0, 0, 0, 0, 0, 0],
        )
        .unwrap();
        let MatValue::Char(c) = sciio_mat::from_numpy(&two).unwrap().0 else {
            panic!("char")
        };
        assert_eq!(
            (c.shape.clone(), c.to_string_lossy()),
            (vec![1, 4], "hio\0".into())
        );
    }

    #[test]
    fn save_npz_members_become_a_sparse_matrix() {
        let i32s =
            |v: Vec<i32>| MatValue::Numeric(NdArray::from_vec(v.clone(), &[v.len()]).unwrap());
        let fields = vec![
            ("indices".to_string(), i32s(vec![1, 0, 2])),
            ("indptr".to_string(), i32s(vec![0, 1, 3])),
            ("format".to_string(), MatValue::from("csr")),
            (
                "shape".to_string(),
                MatValue::Numeric(NdArray::from_vec(vec![2i64, 3], &[2]).unwrap()),
            ),
            (
                "data".to_string(),
                MatValue::Numeric(NdArray::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap()),
            ),
        ];
        // [[0 1 0], [2 0 3]] in CSC: column 0 row 1 (2), column 1 row 0 (1), column 2 row 1 (3).
        let m = saved_sparse(&fields).unwrap();
        assert_eq!((m.nrows, m.ncols), (2, 3));
        assert_eq!(
            (m.ir.clone(), m.jc.clone()),
            (vec![1, 0, 1], vec![0, 1, 2, 3])
        );
        assert!(saved_sparse(&fields[..4]).is_none());
    }

    /// A variable written piece by piece by each route is the file the whole array makes,
    /// byte for byte, in every MAT version (at one `SOURCE_DATE_EPOCH`).
    #[test]
    fn streamed_variables_make_the_whole_arrays_file() {
        use crate::mat_pieces::tests::{array, sizes, whole_and_streamed};
        use crate::options::MatOutVersion;
        static EPOCH: std::sync::Once = std::sync::Once::new();
        EPOCH.call_once(|| std::env::set_var("SOURCE_DATE_EPOCH", "1700000000"));
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let cases = [
            (vec![40, 30, 20], Order::C, false, sizes(2 * 600 * 8, 0)),
            (
                vec![40, 30, 20],
                Order::C,
                true,
                sizes(2 * 600 * 8, u64::MAX),
            ),
            (vec![40, 30, 20], Order::F, false, sizes(4096, 0)),
            (vec![40, 30, 20], Order::F, true, sizes(4096, 0)),
            (vec![6, 5000], Order::C, false, sizes(4096, 0)),
            (vec![6, 5000], Order::C, true, sizes(4096, 0)),
            // Rows of two axes over a block: each row put in Fortran order piece by piece.
            (vec![6, 40, 30], Order::C, false, sizes(4096, 0)),
            (vec![6, 40, 30], Order::C, true, sizes(4096, 0)),
        ];
        for version in [MatOutVersion::V73, MatOutVersion::V7, MatOutVersion::V5] {
            for (shape, order, npz, sizes) in &cases {
                let a = array(shape, *order);
                let (whole, pieces, reported) =
                    whole_and_streamed(d, ("x", &a), version, *npz, &mut |out, f, at, i, p| {
                        out.write_streamed_with("x", f, at, i, p, *sizes)
                    });
                // Progress moves on through a staged copy and ends at the array's bytes.
                assert!(reported.windows(2).all(|w| w[0] <= w[1]), "{reported:?}");
                assert_eq!(
                    reported.last(),
                    Some(&(a.nbytes() as u64)),
                    "{shape:?} {order:?}"
                );
                let read = |p| std::fs::read(p).unwrap();
                assert!(
                    read(&whole) == read(&pieces),
                    "{version:?} {shape:?} {order:?} npz {npz}"
                );
            }
        }
    }
}

#[cfg(test)]
mod struct_tests {
    use super::*;
    use crate::mat_pieces::tests::{array, saved, sizes};
    use crate::options::MatOutVersion;

    /// Large arrays under paths (`s/x`, `s/t/y`: fields of a struct, two levels down) beside
    /// small ones, written piece by piece when the file is finished, make the file the whole
    /// arrays make, byte for byte, in every MAT version (at one `SOURCE_DATE_EPOCH`); the
    /// Level-5 struct is over the size (4 MiB) below which it is gathered.
    #[test]
    fn streamed_struct_fields_make_the_whole_structs_file() {
        static EPOCH: std::sync::Once = std::sync::Once::new();
        EPOCH.call_once(|| std::env::set_var("SOURCE_DATE_EPOCH", "1700000000"));
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let x = array(&[6, 100_000], Order::C);
        let y = array(&[40, 30, 20], Order::F);
        let small = array(&[3, 4], Order::C);
        for version in [MatOutVersion::V73, MatOutVersion::V7, MatOutVersion::V5] {
            for npz in [false, true] {
                let whole = d.join("whole.mat");
                let mut out = MatOut::create(&whole, None, version).unwrap();
                out.write("s/w", &small).unwrap();
                out.write("s/x", &x).unwrap();
                out.write("v", &small).unwrap();
                out.write("s/t/y", &y).unwrap();
                out.write("s/t/u", &small).unwrap();
                out.finish(&whole).unwrap();

                let mut sources = Vec::new();
                for (name, a) in [("x", &x), ("y", &y)] {
                    let sub = d.join(name);
                    std::fs::create_dir_all(&sub).unwrap();
                    let (file, at) = saved(&sub, a, npz);
                    sources.push((file, at, ArrayInfo::of(a)));
                }
                let sizes = sizes(4096, 0);
                let pieces = d.join("pieces.mat");
                let mut out = MatOut::create(&pieces, None, version).unwrap();
                out.write("s/w", &small).unwrap();
                let (file, _, info) = &sources[0];
                assert!(out
                    .defer_streamed_with("s/x", file, info, 0, sizes)
                    .unwrap());
                out.write("v", &small).unwrap();
                let (file, _, info) = &sources[1];
                assert!(out
                    .defer_streamed_with("s/t/y", file, info, 1, sizes)
                    .unwrap());
                out.write("s/t/u", &small).unwrap();
                let mut asked = Vec::new();
                out.finish_with(&pieces, &mut |id, give| {
                    asked.push(id);
                    let (file, at, info) = &mut sources[id];
                    let write =
                        &mut |a: sciio_mat::ArrayPieces<'_>| give(sciio_mat::Pieces::Array(a));
                    stream_array(file, at, info, sizes, d, &mut |_| {}, write)
                })
                .unwrap();
                // Each array once (a complex one would be asked twice by v5/v7: not here).
                assert_eq!(asked, vec![0, 1], "{version:?}");
                let read = |p| std::fs::read(p).unwrap();
                assert!(
                    read(&whole) == read(&pieces),
                    "{version:?} npz {npz}: the struct differs from the whole arrays' one"
                );
            }
        }
    }

    /// An array under a top-level name is not deferred; a name both a field path and a
    /// variable is refused either way round.
    #[test]
    fn only_fields_are_deferred_and_names_stay_unique() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let x = array(&[40, 30], Order::C);
        let (file, _) = saved(d, &x, false);
        let info = ArrayInfo::of(&x);
        let sizes = sizes(4096, 0);
        let dst = d.join("out.mat");
        let mut out = MatOut::create(&dst, None, MatOutVersion::V7).unwrap();
        assert!(!out
            .defer_streamed_with("x", &file, &info, 0, sizes)
            .unwrap());
        out.write("v", &x).unwrap();
        assert!(out
            .defer_streamed_with("v/x", &file, &info, 0, sizes)
            .is_err());
        assert!(out
            .defer_streamed_with("s/x", &file, &info, 0, sizes)
            .unwrap());
        assert!(out.write("s/x/y", &x).is_err());
        assert!(out.write("s", &x).is_err());
    }

    /// Text arrays under paths (`s/t`, `s/u/f`: fields of a struct, C and Fortran order,
    /// bytes with non-ASCII ones, empty strings only) beside a large numeric one, given as
    /// their codes when the file is finished (`stream_deferred_text`), make the file the
    /// whole arrays make: Level 5 byte for byte (each text asked twice: planned, then
    /// written; its summary measured once), v7.3 the same values.
    #[test]
    fn streamed_struct_text_makes_the_whole_structs_file() {
        use sciio_core::{DType, ScalarKind, ScalarType};
        static EPOCH: std::sync::Once = std::sync::Once::new();
        EPOCH.call_once(|| std::env::set_var("SOURCE_DATE_EPOCH", "1700000000"));
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let text = |kind: ScalarKind, shape: &[usize], words: &[&[u8]]| {
            let (unit, width) = match kind {
                ScalarKind::Unicode(w) => (4, w),
                ScalarKind::Bytes(w) => (1, w),
                _ => unreachable!(),
            };
            let n: usize = shape.iter().product();
            let mut bytes = vec![0u8; n * unit * width];
            for (i, s) in bytes.chunks_exact_mut(unit * width).enumerate() {
                for (k, &c) in words[i % words.len()].iter().take(width).enumerate() {
                    s[k * unit] = c;
                }
            }
            let order = match unit {
                1 => sciio_core::ByteOrder::NotApplicable,
                _ => sciio_core::ByteOrder::Little,
            };
            let dtype = DType::Scalar(ScalarType::new(kind, order));
            NdArray::from_bytes(dtype, shape, Order::C, &bytes).unwrap()
        };
        let words: [&[u8]; 4] = [b"", b"ab", b"hello", b"z\xe9"];
        let arrays = [
            array(&[6, 100_000], Order::C),
            text(ScalarKind::Unicode(5), &[300, 40], &words),
            text(ScalarKind::Unicode(4), &[30, 20, 6], &words).to_order(Order::F),
            text(ScalarKind::Bytes(5), &[4000], &words),
            text(ScalarKind::Unicode(3), &[70, 8], &[b""]),
        ];
        let names = ["s/x", "s/t", "s/u/f", "s/b", "s/u/e"];
        let small = array(&[3, 4], Order::C);
        for version in [MatOutVersion::V7, MatOutVersion::V5, MatOutVersion::V73] {
            let whole = d.join("whole.mat");
            let mut out = MatOut::create(&whole, None, version).unwrap();
            out.write("v", &small).unwrap();
            for (name, a) in names.iter().zip(&arrays) {
                out.write(name, a).unwrap();
            }
            out.finish(&whole).unwrap();

            let mut sources = Vec::new();
            for (i, a) in arrays.iter().enumerate() {
                let sub = d.join(i.to_string());
                std::fs::create_dir_all(&sub).unwrap();
                let (file, at) = saved(&sub, a, i % 2 == 1);
                sources.push((file, at, ArrayInfo::of(a), None));
            }
            let sizes = sizes(4096, 0);
            let pieces = d.join("pieces.mat");
            let mut out = MatOut::create(&pieces, None, version).unwrap();
            out.write("v", &small).unwrap();
            for (id, name) in names.iter().enumerate() {
                let (file, _, info, _) = &sources[id];
                assert!(out
                    .defer_streamed_with(name, file, info, id, sizes)
                    .unwrap());
            }
            let scipy = out.scipy_text();
            let mut asked = Vec::new();
            out.finish_with(&pieces, &mut |id, give| {
                asked.push(id);
                let (file, at, info, known) = &mut sources[id];
                let how = (scipy, &mut *known);
                let progress = &mut |_| {};
                if stream_deferred_text(file, (at, info), how, (sizes, d), progress, give)? {
                    return Ok(());
                }
                let write = &mut |a: sciio_mat::ArrayPieces<'_>| give(sciio_mat::Pieces::Array(a));
                stream_array(file, at, info, sizes, d, &mut |_| {}, write)
            })
            .unwrap();
            if version == MatOutVersion::V73 {
                // In the struct's order: x, t, u (f, e), b.
                assert_eq!(asked, vec![0, 1, 2, 4, 3]);
                let read = |p| sciio_mat::read_mat(p).unwrap();
                assert!(read(&whole) == read(&pieces), "v7.3: other values");
                continue;
            }
            assert_eq!(asked, vec![1, 2, 4, 3, 0, 1, 2, 4, 3], "{version:?}");
            let read = |p| std::fs::read(p).unwrap();
            assert!(
                read(&whole) == read(&pieces),
                "{version:?}: the struct differs from the whole arrays' one"
            );
        }
    }
}
