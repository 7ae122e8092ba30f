//! [`convert`]: one source or several into one destination, written atomically, through the
//! one path of [`crate::route`]: the registry of pairings (a Parquet copy, a ptrepack-style
//! HDF5 copy, MAT values, a pandas key, ...) ends with the neutral tree (reader -> array
//! leaves -> writer, [`crate::leaves`]). Whatever the destination cannot hold is left out
//! with a reason ([`LeftOut`](crate::LeftOut), listed in [`ConvertSummary::left_out`]), or refused before
//! anything is written with [`ConvertOptions::strict`].

use std::path::Path;

use sciio_core::{Error, Result};

use crate::file::File;
use crate::format::Format;
use crate::job::Job;
use crate::node::NodeKind;
pub use crate::options::{
    ConvertOptions, ConvertSummary, MatOutVersion, StoreOptions, PARQUET_ATTRIBUTES_KEY,
};
use crate::plan::Plan;

/// Converts `src` (or its node `src_node`) into the file `dst`.
///
/// A node → `.npy` is one array. A whole file → `.npz` holds every array leaf, each member
/// named by its path without the leading `/`; a `.npy` → `.npz` gives the member the name in
/// [`ConvertOptions::dst_node`] or the source file's stem. A VLArray of strings is one `S`/`U`
/// array (what `np.array(node.read())` gives); a VLArray of numbers is one `.npz` member per
/// row, named as [`crate::vlarray`] documents (`NAME/row_000000`), or one `.parquet` list
/// column; either is read whole while planning. Anything the target cannot hold
/// (attributes in npy/npz/MAT, links, frames, opaque nodes) is left out and listed in
/// [`ConvertSummary::left_out`] — or, with [`ConvertOptions::strict`], refused before anything
/// is written. A whole file with nothing the target can hold (an empty `.npz`) gives an empty
/// container. The destination is written to a temporary file and renamed into place only on
/// success.
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
    options.store.check()?;
    if options.partition_rows == Some(0) {
        return Err(Error::invalid_input(
            "--partition-rows takes at least 1 row per file",
        ));
    }
    if options.partition_rows.is_some()
        && (format != Format::Parquet
            || sources.len() != 1
            || matches!(sources[0].0.root().kind, NodeKind::Frame { .. }))
    {
        return Err(Error::invalid_input(
            "--partition-rows writes one table or array of a non-Parquet source into a folder \
             of Parquet files (--to parquet)",
        )
        .with_file(dst));
    }
    let mut job = Job {
        sources,
        dst,
        format,
        options,
        plan: Plan::new(options.strict, dst),
        progress,
    };
    let written = crate::route::run(&mut job)?;
    Ok(ConvertSummary {
        format,
        arrays: written.arrays,
        data_bytes: written.data_bytes,
        left_out: job.plan.left_out,
    })
}
