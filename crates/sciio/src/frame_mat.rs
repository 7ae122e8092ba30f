//! Data frames (a Parquet file, a pandas HDFStore key or a whole store) into MAT files, as
//! their numpy columns: `x.parquet → y.mat` holds one variable per index level and column,
//! `x.parquet → y.mat:df` one struct `df` with a field per index level and column (the
//! scalar struct of columns MATLAB's `table2struct(T, 'ToScalar', true)` makes and
//! `struct2table` takes back), and a whole store one struct per key.
//!
//! The columns are those `→ .npz` writes (`frame_numpy`, `store_convert`): gathered in bounded
//! memory into a stored archive beside the destination, which the neutral tree then writes
//! into the MAT file member by member, streamed as any `.npz` is. So a frame converts as a
//! Python user's `savemat('y.mat', {name: df[name].to_numpy() for name in df})` would, in
//! bounded memory whatever its size, for the disk cost of one temporary copy of its columns;
//! what MATLAB has no class for (a datetime column) is left out with its reason. Each 1-d
//! column is a MATLAB column (n-by-1) and text the n-by-width char matrix whose rows are the
//! strings, in every version (`leaves::convert_columns`).

use sciio_core::{Error, Result};

use crate::file::File;
use crate::format::Format;
use crate::job::{Convert, Job, Written};
use crate::options::ConvertOptions;
use crate::plan::Plan;

/// `x.parquet → y.mat` (the route of [`crate::route::ROUTES`]).
pub(crate) fn frame_to_mat(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    through_columns(job, parquet_columns).map(Some)
}

/// `x.parquet → columns.npz`: streamed when large, else read whole.
fn parquet_columns(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    match crate::frame_numpy::frame_to_npz(job)? {
        Some(written) => Ok(Some(written)),
        None => crate::parquet_convert::frame_to_npz(job),
    }
}

/// The job's frame (or store keys) written into the MAT destination through the archive of
/// its columns (see the module docs), which `columns` makes (the job's `→ .npz` route).
pub(crate) fn through_columns(job: &mut Job<'_, '_, '_>, columns: Convert) -> Result<Written> {
    // A name ending in `.npz`: the archive is opened again as one.
    let (archive, _registered) =
        crate::atomic::temp_file_named_beside(job.dst, ".sciio-columns-", ".npz")?;
    let npz_options = ConvertOptions {
        compress: None,
        dst_node: None,
        ..job.options.clone()
    };
    let progress = &mut *job.progress;
    // Each half of the work takes half of the bar; each reports its own totals.
    let mut gathering = |done: u64, total: u64| progress(done / 2, total);
    let mut gather = Job {
        sources: &mut *job.sources,
        dst: archive.path(),
        format: Format::Npz,
        options: &npz_options,
        plan: Plan::new(job.plan.strict(), job.dst),
        progress: &mut gathering,
    };
    if columns(&mut gather)?.is_none() {
        return Err(Error::invalid_input(
            "internal: the frame's columns were not gathered",
        ));
    }
    let left_out = gather.plan.left_out;
    job.plan.extend(left_out);

    let limits = match job.sources.first() {
        Some((src, _)) => *src.limits(),
        None => {
            return Err(Error::invalid_input(
                "internal: a frame job without a source",
            ))
        }
    };
    let mut gathered = File::open_with_limits(archive.path(), limits)?;
    let progress = &mut *job.progress;
    let mut writing = |done: u64, total: u64| progress(total / 2 + done / 2, total);
    let mut mat = Job {
        sources: &mut [(&mut gathered, None)],
        dst: job.dst,
        format: Format::Mat,
        options: job.options,
        plan: std::mem::replace(&mut job.plan, Plan::new(false, job.dst)),
        progress: &mut writing,
    };
    let written = crate::leaves::convert_columns(&mut mat);
    job.plan = mat.plan;
    written
}
