//! Arbitrary bytes as an HDF5/PyTables file: opening, listing the tree with attributes and
//! reading every leaf must return data or an error, never panic. libhdf5 needs a path, so the
//! input is written to a temporary file first.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_core::Limits;
use sciio_pytables::{NodeInfo, PtFile};

fn leaves(node: &NodeInfo, out: &mut Vec<String>) {
    if node.dtype.is_some() {
        out.push(node.path.clone());
    }
    node.children.iter().for_each(|c| leaves(c, out));
}

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("input.h5");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    // Small budget: a fuzzed header must not make the target allocate gigabytes.
    let limits = Limits::default().max_alloc(64 << 20);
    let Ok(file) = PtFile::open_with_limits(&path, limits) else { return };
    let Ok(tree) = file.tree(true) else { return };
    let _ = tree.render(true);
    let mut paths = Vec::new();
    leaves(&tree, &mut paths);
    for p in paths {
        let _ = file.read(&p);
    }
});
