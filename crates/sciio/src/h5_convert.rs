//! The HDF5 route of conversions ([`crate::route`]): HDF5 into a new HDF5 file is copied like
//! `ptrepack` ([`repack`]) rather than leaf by leaf, so nothing is left out.

use sciio_core::Result;

use crate::job::{Job, Written};
use crate::node::ArrayInfo;

/// HDF5 into a new HDF5 file is copied like `ptrepack`: the whole file, or the one group or
/// leaf named (`SRC:NODE`, `DST:NODE`), with every group, leaf, title, flavor, user attribute
/// and link, filters replaced by `--compress`. `None` for several sources.
pub(crate) fn repack(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let (dst, options) = (job.dst, job.options);
    let Some((src, src_node)) = job.single() else {
        return Ok(None);
    };
    let compress = options.compress.as_ref();
    let leaves = match (src_node, options.dst_node.as_deref()) {
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
    // ptrepack's copy carries every node, attribute and link: nothing goes into the plan.
    Ok(Some(Written {
        arrays: leaves.iter().map(|(p, _)| p.clone()).collect(),
        data_bytes: leaves
            .iter()
            .filter_map(|(_, n)| n.array_info())
            .map(ArrayInfo::nbytes)
            .sum(),
    }))
}
