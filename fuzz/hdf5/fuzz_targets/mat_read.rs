//! Arbitrary bytes as a v7.3 MAT file: header check, variable listing and reading every
//! variable (references, cells, structs, sparse, empties) must return values or errors, never
//! panic or allocate beyond the limits. libhdf5 reads from a path, so the bytes go to a
//! temporary file first.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_core::Limits;
use sciio_mat::MatFile;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("f.mat");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let Ok(mat) = MatFile::open_with_limits(&path, Limits::default().max_alloc(64 << 20)) else {
        return;
    };
    let _ = mat.variables();
    for name in mat.names().unwrap_or_default().iter().take(64) {
        let _ = mat.read(name);
    }
});
