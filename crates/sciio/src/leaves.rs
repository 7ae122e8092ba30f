//! The neutral tree, the last route of every conversion ([`crate::route`]): the array leaves
//! of the sources (numpy arrays: `.npy`, npz members, HDF5 leaves, MAT variables as
//! hdf5storage reads them) written one by one into `.npy`, `.npz`, MAT or `.h5`, array data
//! streamed block by block. The source is walked once against what the target can hold:
//! whatever it cannot hold is left out with a reason into the job's plan.

use std::io::Write;
use std::path::Path;

use sciio_core::{Error, Result};
use sciio_zip::ZipWriter;

use crate::atomic::write_atomically;
use crate::file::File;
use crate::format::Format;
use crate::job::{Job, Written};
use crate::node::{join, normalise, ArrayInfo, Node, NodeKind};
use crate::options::{npz_compression, ConvertOptions};
use crate::plan::{no_attributes, no_links, LeftOut};

/// One array to write: where it is in the source, what it is, its name in the target.
struct Leaf {
    source: usize,
    src_path: String,
    info: ArrayInfo,
    name: String,
    /// A node of variable-length rows, still to be planned ([`plan_vlarrays`]).
    vl: bool,
    /// Row `i` of a VLArray (an npz member `NAME/row_00000i`, [`crate::vlarray`]).
    row: Option<usize>,
    /// The data, when the plan read it already (VLArrays: strings as one array, or one row).
    held: Option<sciio_core::NdArray>,
}

#[cfg(any(feature = "mat", feature = "hdf5"))]
impl Leaf {
    /// The leaf's data: what the plan holds, else read from `src` into `read`.
    fn array<'a>(
        &'a self,
        src: &mut crate::File,
        read: &'a mut Option<sciio_core::NdArray>,
    ) -> Result<&'a sciio_core::NdArray> {
        match &self.held {
            Some(held) => Ok(held),
            None => Ok(read.insert(src.read_array(&self.src_path)?)),
        }
    }
}

impl Leaf {
    /// A 1-d array seen as a column, shape `(n, 1)`: the same bytes in either order. Text
    /// too when `text_too` (v7.3: hdf5storage's char array of an `(n, 1)` array is the
    /// n-by-width matrix whose rows are the strings); in scipy.io's layout (Level-5 files) a
    /// 1-d text array is that matrix already.
    fn as_column(&mut self, text_too: bool) {
        let text = self.info.dtype.as_scalar().is_some_and(|s| {
            matches!(
                s.kind,
                sciio_core::ScalarKind::Unicode(_) | sciio_core::ScalarKind::Bytes(_)
            )
        });
        if self.info.shape.len() == 1 && (text_too || !text) && self.row.is_none() {
            self.info.shape.push(1);
        }
    }

    fn new(src_path: String, info: ArrayInfo) -> Leaf {
        Leaf {
            source: 0,
            src_path,
            info,
            name: String::new(),
            vl: false,
            row: None,
            held: None,
        }
    }
}

/// Converts the job's sources leaf by leaf (always takes the job).
pub(crate) fn convert(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let options = job.options;
    convert_with(job, options).map(Some)
}

/// [`convert`] with `options` in place of the job's own (the names a pairing gives).
pub(crate) fn convert_with(job: &mut Job<'_, '_, '_>, options: &ConvertOptions) -> Result<Written> {
    convert_leaves(job, options, false)
}

/// [`convert`] of a data frame's columns (`crate::frame_mat`): each 1-d array is written as a
/// column (shape `(n, 1)`), the rows of MATLAB's table; text as the n-by-width char matrix
/// whose rows are the strings (Level-5 files: the 1-d array as scipy.io writes it; v7.3: the
/// `(n, 1)` array as hdf5storage writes it).
#[cfg(all(feature = "parquet", feature = "mat"))]
pub(crate) fn convert_columns(job: &mut Job<'_, '_, '_>) -> Result<Written> {
    let options = job.options;
    convert_leaves(job, options, true)
}

fn convert_leaves(
    job: &mut Job<'_, '_, '_>,
    options: &ConvertOptions,
    as_columns: bool,
) -> Result<Written> {
    let (sources, dst, format) = (&mut *job.sources, job.dst, job.format);
    let progress = &mut *job.progress;
    let (mut leaves, left_out) = plan_leaves(sources, dst, options, format)?;
    if as_columns {
        let text_too = options.mat_version == crate::options::MatOutVersion::V73;
        leaves.iter_mut().for_each(|leaf| leaf.as_column(text_too));
    }
    job.plan.extend(left_out);
    job.plan.ready()?;
    // Saturating: a damaged header can claim sizes whose sum overflows (each is refused later,
    // when its data is read against the file's real size and the limits).
    let total = leaves
        .iter()
        .fold(0u64, |sum, l| sum.saturating_add(l.info.nbytes()));
    let arrays: Vec<String> = leaves.iter().map(|l| l.name.clone()).collect();
    match format {
        Format::Npy => write_npy(sources, &leaves, dst, options, total, progress)?,
        Format::Npz => write_npz(sources, &leaves, dst, options, total, progress)?,
        #[cfg(feature = "mat")]
        Format::Mat => {
            let mut out = crate::mat_write::MatOut::create(
                dst,
                options.compress.as_ref(),
                options.mat_version,
            )
            .map_err(|e| e.with_file(dst))?;
            // Large numeric matrices go piece by piece; the rest is read whole. Those that
            // are fields of structs to be (`a/b`) are written by `finish_with`, piece by
            // piece too, with their structs.
            let mut done = 0u64;
            for (id, leaf) in leaves.iter().enumerate() {
                let src = source_of(sources, leaf)?;
                if leaf.held.is_none()
                    && out
                        .defer_streamed(&leaf.name, src, &leaf.info, id)
                        .map_err(|e| e.with_node(leaf.name.clone()).with_file(dst))?
                {
                    continue;
                }
                let base = done;
                let streamed = leaf.held.is_none()
                    && out
                        .write_streamed(&leaf.name, src, &leaf.src_path, &leaf.info, &mut |d| {
                            progress(base + d, total)
                        })
                        .map_err(|e| e.with_node(leaf.name.clone()).with_file(dst))?;
                if !streamed {
                    let mut read = None;
                    let array = leaf.array(src, &mut read)?;
                    let column;
                    let array = match array.shape() == leaf.info.shape.as_slice() {
                        true => array,
                        false => {
                            column = array.clone().reshape(&leaf.info.shape)?;
                            &column
                        }
                    };
                    out.write(&leaf.name, array)
                        .map_err(|e| e.with_node(leaf.name.clone()).with_file(dst))?;
                }
                done = done.saturating_add(leaf.info.nbytes());
                progress(done, total);
            }
            let folder = folder_of(dst);
            // A deferred structured array may be asked for twice (a Level-5 file measures its
            // text fields first): its progress starts where its first call did and never
            // goes back.
            let mut bases = std::collections::HashMap::new();
            // A deferred text array's summary, measured at its first call (a Level-5 file
            // asks twice: to plan its element, then to write it).
            let mut summaries = std::collections::HashMap::new();
            let scipy = out.scipy_text();
            let mut shown = done;
            out.finish_with(dst, &mut |id, write| {
                let leaf = leaves
                    .get(id)
                    .ok_or_else(|| Error::invalid_input("internal: no such deferred array"))?;
                let src = source_of(sources, leaf)?;
                let base = *bases.entry(id).or_insert(done);
                let mut progress_of = |d: u64| {
                    shown = shown.max(base.saturating_add(d));
                    progress(shown, total)
                };
                let sizes = crate::mat_pieces::Sizes::DEFAULT;
                let known = summaries.entry(id).or_insert(None);
                let text = crate::mat_write::stream_deferred_text(
                    src,
                    (&leaf.src_path, &leaf.info),
                    (scipy, known),
                    (sizes, &folder),
                    &mut progress_of,
                    write,
                )
                .map_err(|e| e.with_node(leaf.name.clone()).with_file(dst))?;
                let given = match crate::mat_write::records::streamable_records(src, &leaf.info) {
                    _ if text => Ok(()),
                    true => crate::mat_write::records::stream_records(
                        src,
                        &leaf.src_path,
                        &leaf.info,
                        (sizes, &folder),
                        &mut progress_of,
                        &mut |records| write(sciio_mat::Pieces::Records(records)),
                    ),
                    false => crate::mat_write::stream_array(
                        src,
                        &leaf.src_path,
                        &leaf.info,
                        sizes,
                        &folder,
                        &mut progress_of,
                        &mut |array| write(sciio_mat::Pieces::Array(array)),
                    ),
                };
                given.map_err(|e| e.with_node(leaf.name.clone()).with_file(dst))?;
                done = done.max(base.saturating_add(leaf.info.nbytes()));
                shown = shown.max(done);
                progress(shown, total);
                Ok(())
            })?;
        }
        #[cfg(feature = "hdf5")]
        Format::Hdf5 => {
            let mut out = crate::h5write::H5Out::create(dst, options.compress.as_ref())
                .map_err(|e| e.with_file(dst))?;
            // Leaves stream batch by batch (crate::stream); the rest is read whole.
            let mut done = 0u64;
            for leaf in &leaves {
                let src = source_of(sources, leaf)?;
                let base = done;
                let streamed = leaf.held.is_none()
                    && (crate::stream::write_h5_leaf(
                        src,
                        &leaf.src_path,
                        &leaf.info,
                        &mut out,
                        &leaf.name,
                        &mut |d| progress(base + d, total),
                    )
                    .map_err(|e| e.with_file(dst))?
                        || crate::stream::write_h5_leaf_transposed(
                            src,
                            &leaf.src_path,
                            &leaf.info,
                            &mut out,
                            &leaf.name,
                            &folder_of(dst),
                            &mut |d| progress(base + d, total),
                        )
                        .map_err(|e| e.with_file(dst))?);
                if !streamed {
                    let mut read = None;
                    let array = leaf.array(src, &mut read)?;
                    out.write(&leaf.name, array)
                        .map_err(|e| e.with_node(leaf.name.clone()).with_file(dst))?;
                }
                done += leaf.info.nbytes();
                progress(done, total);
            }
            out.finish(dst)?;
        }
        other => {
            return Err(Error::unsupported(format!(
                "writing {other} files needs the `{}` feature of the sciio crate, which this \
                     build leaves out",
                other.feature().unwrap_or("default")
            ))
            .with_file(dst))
        }
    }
    Ok(Written {
        arrays,
        data_bytes: total,
    })
}

/// The plan of a conversion through numpy arrays: the array leaves of every source, named
/// in the target, and what is left out. Nothing carried at all is an error for `.npy` and
/// for a selected node; a whole file that holds nothing the target can hold (an empty
/// `.npz`) gives an empty container.
fn plan_leaves(
    sources: &mut [(&mut File, Option<&str>)],
    dst: &Path,
    options: &ConvertOptions,
    format: Format,
) -> Result<(Vec<Leaf>, Vec<LeftOut>)> {
    let mut leaves = Vec::new();
    let mut left_out = Vec::new();
    for (index, (src, src_node)) in sources.iter_mut().enumerate() {
        let selected = match src_node {
            Some(node) => src.node(node)?,
            None => src.root(),
        };
        let base = src_node.map(normalise).unwrap_or_else(|| "/".to_string());
        let (found, mut left) = collect_leaves(selected, &base, format);
        let (mut found, vl_carried) = plan_vlarrays(src, found, format, &mut left)?;
        if found.is_empty() && !vl_carried && (src_node.is_some() || format == Format::Npy) {
            return Err(nothing_to_convert(&left, src, &base, format));
        }
        for leaf in &mut found {
            leaf.source = index;
        }
        left_out.extend(left);
        leaves.extend(name_leaves(
            found,
            src,
            *src_node,
            options.dst_node.as_deref(),
            format,
        )?);
    }
    check_unique(&leaves, dst)?;
    Ok((leaves, left_out))
}

/// The VLArrays among `found`, planned: strings become one `S`/`U` array (read now), rows of
/// numbers one npz member per row (read now; [`crate::vlarray`] names them) — other formats
/// leave them out (`.parquet` takes one as a list column on its own path) — and pickled rows
/// are left out, never unpickled. Also true when a VLArray was carried with no row at all.
fn plan_vlarrays(
    src: &mut File,
    found: Vec<Leaf>,
    format: Format,
    left_out: &mut Vec<LeftOut>,
) -> Result<(Vec<Leaf>, bool)> {
    use crate::vlarray::VlKind;
    let mut out = Vec::with_capacity(found.len());
    let mut carried = false;
    for leaf in found {
        if !leaf.vl {
            out.push(leaf);
            continue;
        }
        let path = leaf.src_path;
        match src.vl_kind(&path)? {
            Some(VlKind::Strings) => {
                let array = src.read_array(&path)?;
                let info = ArrayInfo::of(&array);
                match unheld(format, &info) {
                    Some(reason) => left_out.push(LeftOut::node(
                        path,
                        format!("a VLArray of strings, read as {}", dtype_words(&info.dtype)),
                        reason,
                    )),
                    None => {
                        let mut leaf = Leaf::new(path, info);
                        leaf.held = Some(array);
                        out.push(leaf);
                    }
                }
            }
            Some(VlKind::Rows) if format == Format::Npz => {
                carried = true;
                for (i, row) in src.read_rows(&path)?.into_iter().enumerate() {
                    let info = ArrayInfo::of(&row);
                    if let Some(reason) = unheld(format, &info) {
                        return Err(Error::unsupported(format!("row {i}: {reason}"))
                            .with_file(src.path())
                            .with_node(path));
                    }
                    let mut leaf = Leaf::new(path.clone(), info);
                    leaf.row = Some(i);
                    leaf.held = Some(row);
                    out.push(leaf);
                }
            }
            Some(VlKind::Rows) => left_out.push(LeftOut::node(
                path,
                "a VLArray of rows of variable length",
                format!(
                    "{format} holds no rows of variable length (.npz holds one member per \
                     row, .parquet a list column)"
                ),
            )),
            Some(VlKind::Objects) => left_out.push(LeftOut::node(
                path,
                "a VLArray",
                "rows of pickled Python objects (never unpickled)",
            )),
            None => left_out.push(LeftOut::node(
                path,
                "a VLArray",
                format!("{format} holds no rows of variable length"),
            )),
        }
    }
    Ok((out, carried))
}

/// The error when a selection holds nothing the target can hold: what was left out of it, or
/// that it holds no array at all.
fn nothing_to_convert(left_out: &[LeftOut], src: &File, base: &str, format: Format) -> Error {
    // The nodes left out say more than their attributes: name a node first.
    let mut left_out: Vec<&LeftOut> = left_out.iter().collect();
    left_out.sort_by_key(|l| !matches!(l.what, crate::plan::Item::Node(_)));
    let error = match left_out.as_slice() {
        [] => Error::not_found("nothing to convert: no array there"),
        [one] => Error::unsupported(format!("nothing {format} can hold there: left out {one}")),
        [first, rest @ ..] => Error::unsupported(format!(
            "nothing {format} can hold there: left out {first} and {} more",
            rest.len()
        )),
    };
    error.with_file(src.path()).with_node(base.to_string())
}

/// The folder of `dst` (where temporary files go).
#[cfg(any(feature = "hdf5", feature = "mat"))]
fn folder_of(dst: &Path) -> std::path::PathBuf {
    match dst.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    }
}

fn check_unique(leaves: &[Leaf], dst: &Path) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for leaf in leaves {
        if !seen.insert(leaf.name.as_str()) {
            return Err(Error::invalid_input(format!(
                "two arrays would be named '{}'; rename one with DST:NODE or convert separately",
                leaf.name
            ))
            .with_file(dst)
            .with_node(leaf.name.clone()));
        }
    }
    Ok(())
}

/// Every array below `node`, and what `format` cannot hold: attributes (npy, npz, MAT and the
/// `.h5` files written leaf by leaf hold none), links, frames and opaque nodes.
fn collect_leaves(node: &Node, base: &str, format: Format) -> (Vec<Leaf>, Vec<LeftOut>) {
    let mut leaves = Vec::new();
    let mut left_out = Vec::new();
    for (rel, n) in node.walk("") {
        let path = join(base, &rel);
        for attr in &n.attrs {
            left_out.push(LeftOut::attribute(
                path.clone(),
                attr.name.clone(),
                no_attributes(format),
            ));
        }
        match &n.kind {
            NodeKind::Group(_) => {}
            NodeKind::Array(info) | NodeKind::Table(info) => match unheld(format, info) {
                Some(reason) => left_out.push(LeftOut::node(path, described(n, info), reason)),
                None => leaves.push(Leaf::new(path, info.clone())),
            },
            // Planned with the file at hand (plan_vlarrays): what it holds decides.
            NodeKind::Opaque { kind, .. } if kind == "VLArray" => {
                let placeholder = ArrayInfo {
                    dtype: sciio_core::DType::scalar(sciio_core::ScalarKind::Float(8)),
                    shape: vec![0],
                    order: sciio_core::Order::C,
                };
                let mut leaf = Leaf::new(path, placeholder);
                leaf.vl = true;
                leaves.push(leaf);
            }
            NodeKind::Link(target) => left_out.push(LeftOut::node(
                path,
                format!("a link to {target}"),
                no_links(format),
            )),
            NodeKind::Frame { .. } => left_out.push(LeftOut::node(
                path,
                "a data frame",
                format!("{format} holds no data frames"),
            )),
            NodeKind::Opaque { kind, reason } => {
                left_out.push(LeftOut::node(path, format!("a {kind}"), reason.clone()))
            }
        }
    }
    (leaves, left_out)
}

/// `an array of <U2, shape [2]`, `a table of [...], shape [5]`.
fn described(node: &Node, info: &ArrayInfo) -> String {
    let kind = node.kind_name();
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!(
        "{article} {kind} of {}, shape {:?}",
        dtype_words(&info.dtype),
        info.shape
    )
}

/// A dtype in a few words: its typestr, or `records (a, b, c, ...)` by field names (a record
/// type whose descr cannot be printed still names its fields).
fn dtype_words(dtype: &sciio_core::DType) -> String {
    match dtype {
        sciio_core::DType::Record(record) => {
            let mut names: Vec<&str> = record.fields.iter().take(4).map(|f| &*f.name).collect();
            if record.fields.len() > 4 {
                names.push("...");
            }
            format!("records ({})", names.join(", "))
        }
        other => other.to_string(),
    }
}

/// Why `format` cannot hold an array of this kind (npy/npz: a dtype an NPY header cannot
/// describe, such as overlapping fields; MAT: anything but MATLAB's classes; HDF5: what
/// PyTables has no type for), or `None`.
fn unheld(format: Format, info: &ArrayInfo) -> Option<String> {
    match format {
        Format::Npy | Format::Npz => header_for(info).err().map(|e| e.message().to_string()),
        #[cfg(feature = "mat")]
        Format::Mat => crate::mat_write::no_class_for(info),
        // PyTables has no type for text (`U`), object or datetime arrays.
        #[cfg(feature = "hdf5")]
        Format::Hdf5 => sciio_pytables::write::h5type_from_dtype(&info.dtype)
            .err()
            .map(|e| e.message().to_string()),
        _ => None,
    }
}

fn name_leaves(
    mut leaves: Vec<Leaf>,
    src: &File,
    src_node: Option<&str>,
    dst_node: Option<&str>,
    format: Format,
) -> Result<Vec<Leaf>> {
    match format {
        Format::Npy => {
            if let Some(node) = dst_node {
                return Err(Error::invalid_input(format!(
                    "a .npy file holds one array and no nodes; drop ':{node}' from the destination"
                )));
            }
            if leaves.len() != 1 {
                let names: Vec<&str> = leaves.iter().take(8).map(|l| l.src_path.as_str()).collect();
                return Err(Error::invalid_input(format!(
                    "a .npy file holds one array, the source has {} ({}); pick one with SRC:NODE",
                    leaves.len(),
                    names.join(", ")
                ))
                .with_file(src.path()));
            }
            leaves[0].name = "/".to_string();
        }
        _ => {
            let stem = src
                .path()
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "arr_0".to_string());
            // One node selected (a VLArray's rows are one node).
            let single = leaves.iter().all(|l| l.src_path == leaves[0].src_path);
            let selected_base = src_node.map(normalise).unwrap_or_else(|| "/".to_string());
            for leaf in &mut leaves {
                // The path below the selection (the selection's own path when it is the array).
                let own = if leaf.src_path == "/" {
                    stem.clone()
                } else if single && src_node.is_some() && dst_node.is_none() {
                    leaf.src_path.trim_start_matches('/').to_string()
                } else {
                    leaf.src_path
                        .strip_prefix(selected_base.trim_end_matches('/'))
                        .unwrap_or(&leaf.src_path)
                        .trim_start_matches('/')
                        .to_string()
                };
                leaf.name = match dst_node.map(|d| d.trim_matches('/')) {
                    Some(d) if single => d.to_string(),
                    Some(d) => format!("{d}/{own}"),
                    None => own,
                };
                if leaf.name.is_empty() {
                    leaf.name = stem.clone();
                }
                if let Some(i) = leaf.row {
                    leaf.name = crate::vlarray::row_member_name(&leaf.name, i);
                }
            }
        }
    }
    Ok(leaves)
}

fn source_of<'a>(
    sources: &'a mut [(&mut File, Option<&str>)],
    leaf: &Leaf,
) -> Result<&'a mut File> {
    sources
        .get_mut(leaf.source)
        .map(|(file, _)| &mut **file)
        .ok_or_else(|| Error::invalid_input("internal: array source out of range"))
}

fn header_for(info: &ArrayInfo) -> Result<Vec<u8>> {
    sciio_npy::header_bytes(
        &info.dtype,
        &info.shape,
        info.order == sciio_core::Order::F && info.shape.len() > 1,
    )
}

fn write_npy(
    sources: &mut [(&mut File, Option<&str>)],
    leaves: &[Leaf],
    dst: &Path,
    options: &ConvertOptions,
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<()> {
    if let Some(spec) = options.compress.as_ref().filter(|s| !s.is_uncompressed()) {
        return Err(Error::unsupported(format!(
            "npy files are never compressed (got '{spec}'); write .npz to compress"
        )));
    }
    let Some(leaf) = leaves.first() else {
        return Err(Error::not_found("nothing to convert: no array there"));
    };
    write_atomically(dst, |out| {
        out.write_all(&header_for(&leaf.info)?)
            .map_err(|e| Error::io("cannot write", e))?;
        let src = source_of(sources, leaf)?;
        copy_leaf(src, leaf, out, &mut |done| progress(done, total))
    })
}

/// The data bytes of `leaf` (as its NPY header describes them): the data the plan holds, or
/// streamed from the source.
fn copy_leaf(
    src: &mut File,
    leaf: &Leaf,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    match &leaf.held {
        Some(array) => {
            let array = array.to_order(leaf.info.order);
            out.write_all(array.as_bytes())
                .map_err(|e| Error::io("cannot write", e).with_node(leaf.src_path.clone()))?;
            progress(array.as_bytes().len() as u64);
            Ok(())
        }
        None => src.copy_array_data_of(&leaf.src_path, Some(&leaf.info), out, progress),
    }
}

fn write_npz(
    sources: &mut [(&mut File, Option<&str>)],
    leaves: &[Leaf],
    dst: &Path,
    options: &ConvertOptions,
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<()> {
    let compression = npz_compression(options.compress.as_ref())?;
    write_atomically(dst, |out| {
        let mut zip = ZipWriter::new(out).compression(compression);
        let mut before = 0u64;
        for leaf in leaves {
            let member_name = format!("{}.npy", leaf.name);
            let mut member = zip
                .start_member(&member_name)
                .map_err(|e| e.with_node(member_name.clone()))?;
            member
                .write_all(&header_for(&leaf.info)?)
                .map_err(|e| Error::io("cannot write", e).with_node(member_name.clone()))?;
            let src = source_of(sources, leaf)?;
            copy_leaf(src, leaf, &mut member, &mut |done| {
                progress(before.saturating_add(done), total)
            })?;
            member
                .finish()
                .map_err(|e| e.with_node(member_name.clone()))?;
            before = before.saturating_add(leaf.info.nbytes());
        }
        zip.finish()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dtype_no_npy_header_describes_is_left_out_of_npy_and_npz() {
        use sciio_core::{DType, Field, Order, RecordType, ScalarKind};
        let field = |name: &str, offset| Field {
            name: name.to_string(),
            title: None,
            offset,
            dtype: DType::scalar(ScalarKind::Int(4)),
        };
        let overlapping = RecordType {
            fields: vec![field("a", 0), field("b", 2)],
            itemsize: 8,
        };
        let table = Node::new(
            "t",
            NodeKind::Table(ArrayInfo {
                dtype: DType::Record(overlapping),
                shape: vec![3],
                order: Order::C,
            }),
        );
        let plain = Node::new(
            "x",
            NodeKind::Array(ArrayInfo {
                dtype: DType::scalar(ScalarKind::Float(8)),
                shape: vec![2],
                order: Order::C,
            }),
        );
        let root = Node::new("", NodeKind::Group(vec![table, plain]));
        for format in [Format::Npy, Format::Npz] {
            let (leaves, left_out) = collect_leaves(&root, "/", format);
            let paths: Vec<&str> = leaves.iter().map(|l| l.src_path.as_str()).collect();
            assert_eq!(paths, ["/x"]);
            assert_eq!(left_out.len(), 1);
            assert_eq!(left_out[0].path, "/t");
            assert!(
                left_out[0].to_string().starts_with("/t (a table of "),
                "{}",
                left_out[0]
            );
        }
    }

    #[test]
    fn paths_join_below_the_selection() {
        assert_eq!(join("/", "/"), "/");
        assert_eq!(join("/", "/a"), "/a");
        assert_eq!(join("/g", "/"), "/g");
        assert_eq!(join("/g", "/a"), "/g/a");
    }
}
