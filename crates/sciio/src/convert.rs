//! [`convert`]: reader -> neutral tree -> writer, streaming array data block by block, written
//! atomically, refusing by name whatever the target cannot hold.

use std::io::Write;
use std::path::Path;

use sciio_core::{Error, Result};
use sciio_zip::{Compression, ZipWriter};

use crate::atomic::write_atomically;
use crate::compress::CompressSpec;
use crate::file::{normalise, File};
use crate::format::Format;
use crate::node::{ArrayInfo, Node, NodeKind};

/// How [`convert`] writes. `Default` gives: format from the destination's extension, the
/// format's usual compression (npz: stored, like `np.savez`), member names from the source.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    /// The output format; `None` takes it from the destination's extension.
    pub to: Option<Format>,
    /// Compression; `None` is the format's default.
    pub compress: Option<CompressSpec>,
    /// The node/member to write in the destination (`DST:NODE`): for `.npz` the member name of
    /// a single array, or a prefix for several; not allowed for `.npy`.
    pub dst_node: Option<String>,
    /// The MAT version written to a `.mat` destination (`--mat-version`); default v7.3.
    pub mat_version: MatOutVersion,
}

/// The version of a MAT file [`convert`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MatOutVersion {
    /// v7.3 (HDF5; hdf5storage conventions): any size.
    #[default]
    V73,
    /// v7: Level 5 with each variable zlib-compressed (MATLAB's default `save` format);
    /// variables up to 2 GB.
    V7,
    /// v5: Level 5 uncompressed (what `scipy.io.savemat` writes); variables up to 2 GB.
    V5,
}

impl std::str::FromStr for MatOutVersion {
    type Err = Error;
    /// `7.3`, `7` or `5` (`v` prefix allowed; `6` is the same format as `5`).
    fn from_str(s: &str) -> Result<MatOutVersion> {
        match s.trim_start_matches(['v', 'V']) {
            "7.3" => Ok(MatOutVersion::V73),
            "7" => Ok(MatOutVersion::V7),
            "5" | "6" => Ok(MatOutVersion::V5),
            _ => Err(Error::invalid_input(format!(
                "unknown MAT version '{s}' (known: 7.3, 7, 5)"
            ))),
        }
    }
}

/// What [`convert`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertSummary {
    /// The format written.
    pub format: Format,
    /// The names of the arrays written (npz members without `.npy`; `/` for an npy file).
    pub arrays: Vec<String>,
    /// Bytes of array data moved.
    pub data_bytes: u64,
}

/// One array to write: where it is in the source, what it is, its name in the target.
struct Leaf {
    source: usize,
    src_path: String,
    info: ArrayInfo,
    name: String,
}

/// Converts `src` (or its node `src_node`) into the file `dst`.
///
/// A node → `.npy` is one array. A whole file → `.npz` holds every array leaf, each member
/// named by its path without the leading `/`; a `.npy` → `.npz` gives the member the name in
/// [`ConvertOptions::dst_node`] or the source file's stem. Anything the target cannot hold
/// (links, groups' attributes, frames, opaque nodes) is an error naming the node. The
/// destination is written to a temporary file and renamed into place only on success.
/// `progress(done, total)` receives bytes of array data.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// use sciio::{convert, ConvertOptions, File, NdArray};
/// let src = dir.path().join("weights.npy");
/// let mut bytes = Vec::new();
/// sciio::npy::write_array(&mut bytes, &NdArray::from_vec(vec![0.5f32, 1.5], &[2])?)?;
/// std::fs::write(&src, bytes)?;
///
/// let dst = dir.path().join("all.npz");
/// let options = ConvertOptions { compress: Some("deflate:6".parse()?), ..Default::default() };
/// let summary = convert(&mut File::open(&src)?, None, &dst, &options, &mut |_, _| {})?;
/// assert_eq!(summary.arrays, ["weights"]);
/// let mut npz = File::open(&dst)?;
/// assert_eq!(npz.read_array("weights")?.view::<f32>()?.as_slice(), Some(&[0.5f32, 1.5][..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn convert(
    src: &mut File,
    src_node: Option<&str>,
    dst: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ConvertSummary> {
    convert_many(&mut [(src, src_node)], dst, options, progress)
}

/// Converts several sources (each a file and an optional node) into one destination, such
/// as many `.npy` files into one `.npz`; each source's arrays are named as [`convert`] names
/// them, and two arrays of the same name are an error naming it.
pub fn convert_many(
    sources: &mut [(&mut File, Option<&str>)],
    dst: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ConvertSummary> {
    let format = Format::for_output(dst, options.to)?;
    if format == Format::Npy && sources.len() > 1 {
        return Err(Error::invalid_input(format!(
            "a .npy file holds one array, got {} sources; write .npz to combine them",
            sources.len()
        ))
        .with_file(dst));
    }
    // Frames (Parquet) are Arrow columns, not numpy blocks: they take their own path.
    #[cfg(feature = "parquet")]
    if let Some(summary) =
        crate::parquet::convert_frames(sources, dst, format, options, &mut *progress)?
    {
        return Ok(summary);
    }
    #[cfg(feature = "hdf5")]
    if let Some(summary) = repack_whole_hdf5(sources, dst, options, format)? {
        return Ok(summary);
    }
    // MAT into MAT copies MATLAB values (classes, cells, structs) rather than numpy leaves.
    #[cfg(feature = "mat")]
    if format == Format::Mat {
        if let Some(summary) = crate::mat::copy_values(sources, dst, options, &mut *progress)? {
            return Ok(summary);
        }
    }
    let mut leaves = Vec::new();
    for (index, (src, src_node)) in sources.iter().enumerate() {
        let selected = match src_node {
            Some(node) => src.node(node)?,
            None => src.root(),
        };
        let base = src_node.map(normalise).unwrap_or_else(|| "/".to_string());
        let mut found = collect_leaves(selected, &base, format, src)?;
        for leaf in &mut found {
            leaf.source = index;
        }
        leaves.extend(name_leaves(
            found,
            src,
            *src_node,
            options.dst_node.as_deref(),
            format,
        )?);
    }
    check_unique(&leaves, dst)?;
    let total: u64 = leaves.iter().map(|l| l.info.nbytes()).sum();
    let arrays: Vec<String> = leaves.iter().map(|l| l.name.clone()).collect();
    match format {
        Format::Npy => write_npy(sources, &leaves, dst, options, total, progress)?,
        Format::Npz => write_npz(sources, &leaves, dst, options, total, progress)?,
        #[cfg(feature = "mat")]
        Format::Mat => {
            let mut out =
                crate::mat::MatOut::create(dst, options.compress.as_ref(), options.mat_version)
                    .map_err(|e| e.with_file(dst))?;
            write_each(sources, &leaves, total, progress, |name, array| {
                out.write(name, array)
            })
            .map_err(|e| e.with_file(dst))?;
            out.finish(dst)?;
        }
        #[cfg(feature = "hdf5")]
        Format::Hdf5 => {
            let mut out = crate::h5write::H5Out::create(dst, options.compress.as_ref())
                .map_err(|e| e.with_file(dst))?;
            write_each(sources, &leaves, total, progress, |name, array| {
                out.write(name, array).map(|_| ())
            })
            .map_err(|e| e.with_file(dst))?;
            out.finish(dst)?;
        }
        other => {
            return Err(Error::unsupported(format!(
                "writing {other} files is not available in this build of sciio"
            ))
            .with_file(dst))
        }
    }
    Ok(ConvertSummary {
        format,
        arrays,
        data_bytes: total,
    })
}

/// HDF5 into a new HDF5 file is copied like `ptrepack`: the whole file, or the one group or
/// leaf named (`SRC:NODE`, `DST:NODE`), with every group, leaf, title, flavor, user attribute
/// and link, filters replaced by `--compress`.
#[cfg(feature = "hdf5")]
fn repack_whole_hdf5(
    sources: &[(&mut File, Option<&str>)],
    dst: &Path,
    options: &ConvertOptions,
    format: Format,
) -> Result<Option<ConvertSummary>> {
    let [(src, src_node)] = sources else {
        return Ok(None);
    };
    if format != Format::Hdf5 || src.format() != Format::Hdf5 {
        return Ok(None);
    }
    let compress = options.compress.as_ref();
    let leaves = match (*src_node, options.dst_node.as_deref()) {
        (None, None) => {
            crate::h5write::repack(src.path(), dst, compress).map_err(|e| e.with_file(dst))?;
            src.root().array_leaves("")
        }
        // One group or leaf: ptrepack's node copy (attributes, titles, flavors, links kept).
        (node, dst_node) => {
            let node = node.unwrap_or("/");
            let leaves = src.node(node)?.array_leaves("");
            crate::h5write::repack_node(src.path(), node, dst, dst_node, compress)
                .map_err(|e| e.with_file(dst))?;
            leaves
        }
    };
    Ok(Some(ConvertSummary {
        format,
        arrays: leaves.iter().map(|(p, _)| p.clone()).collect(),
        data_bytes: leaves
            .iter()
            .filter_map(|(_, n)| n.array_info())
            .map(ArrayInfo::nbytes)
            .sum(),
    }))
}

/// Reads each leaf whole and hands it to `put` under its target name (formats whose writers
/// take whole arrays: MAT, PyTables).
#[cfg(any(feature = "mat", feature = "hdf5"))]
fn write_each(
    sources: &mut [(&mut File, Option<&str>)],
    leaves: &[Leaf],
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
    mut put: impl FnMut(&str, &sciio_core::NdArray) -> Result<()>,
) -> Result<()> {
    let mut done = 0u64;
    for leaf in leaves {
        let src = source_of(sources, leaf)?;
        let array = src.read_array(&leaf.src_path)?;
        put(&leaf.name, &array).map_err(|e| e.with_node(leaf.name.clone()))?;
        done += leaf.info.nbytes();
        progress(done, total);
    }
    Ok(())
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

/// Every array below `node`; anything npy/npz cannot hold is refused by name.
fn collect_leaves(node: &Node, base: &str, format: Format, src: &File) -> Result<Vec<Leaf>> {
    let mut leaves = Vec::new();
    for (rel, n) in node.walk("") {
        let path = join(base, &rel);
        let refuse = |what: &str| {
            Err(Error::unsupported(format!(
                "{format} cannot hold {what}; convert the arrays one by one with SRC:NODE"
            ))
            .with_file(src.path())
            .with_node(path.clone()))
        };
        if !n.attrs.is_empty() {
            let names: Vec<&str> = n.attrs.iter().map(|a| a.name.as_str()).collect();
            return refuse(&format!("attributes ({})", names.join(", ")));
        }
        match &n.kind {
            NodeKind::Group(_) => {}
            NodeKind::Array(info) | NodeKind::Table(info) => leaves.push(Leaf {
                source: 0,
                src_path: path,
                info: info.clone(),
                name: String::new(),
            }),
            NodeKind::Link(target) => return refuse(&format!("a link (to {target})")),
            NodeKind::Frame { .. } => return refuse("a data frame"),
            NodeKind::Opaque { kind, reason } => return refuse(&format!("a {kind} ({reason})")),
        }
    }
    if leaves.is_empty() {
        return Err(Error::not_found("nothing to convert: no array there")
            .with_file(src.path())
            .with_node(base.to_string()));
    }
    Ok(leaves)
}

fn join(base: &str, rel: &str) -> String {
    match (base.trim_end_matches('/'), rel) {
        ("", "/") => "/".to_string(),
        (b, "/") => b.to_string(),
        (b, r) => format!("{b}{r}"),
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
            let single = leaves.len() == 1;
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

pub(crate) fn npz_compression(spec: Option<&CompressSpec>) -> Result<Compression> {
    let Some(spec) = spec else {
        return Ok(Compression::Stored);
    };
    Ok(match spec.only_one("npz", &["deflate"], 0..=9)? {
        None => Compression::Stored,
        Some(f) => Compression::Deflate(f.level.map_or(6, |l| l.unsigned_abs())),
    })
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
    let leaf = &leaves[0];
    write_atomically(dst, |out| {
        out.write_all(&header_for(&leaf.info)?)
            .map_err(|e| Error::io("cannot write", e))?;
        let src = source_of(sources, leaf)?;
        src.copy_array_data(&leaf.src_path, out, &mut |done| progress(done, total))
    })
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
            src.copy_array_data(&leaf.src_path, &mut member, &mut |done| {
                progress(before + done, total)
            })?;
            member
                .finish()
                .map_err(|e| e.with_node(member_name.clone()))?;
            before += leaf.info.nbytes();
        }
        zip.finish()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npz_compression_follows_the_spec() {
        assert_eq!(npz_compression(None).unwrap(), Compression::Stored);
        let spec = CompressSpec::parse("deflate").unwrap();
        assert_eq!(
            npz_compression(Some(&spec)).unwrap(),
            Compression::Deflate(6)
        );
        let spec = CompressSpec::parse("none").unwrap();
        assert_eq!(npz_compression(Some(&spec)).unwrap(), Compression::Stored);
        let spec = CompressSpec::parse("zstd:3").unwrap();
        assert!(npz_compression(Some(&spec)).is_err());
    }

    #[test]
    fn paths_join_below_the_selection() {
        assert_eq!(join("/", "/"), "/");
        assert_eq!(join("/", "/a"), "/a");
        assert_eq!(join("/g", "/"), "/g");
        assert_eq!(join("/g", "/a"), "/g/a");
    }
}
