//! Every leaf of every `.h5` file shipped in the PyTables and h5py wheels, and of the old
//! pandas stores in `shared/corpus/pandas-legacy-hdf`, converts through sciio's facade
//! (`sciio::convert` of `FILE:/leaf` to `.npy`, VLArrays of numbers to `.npz` one member per
//! row) with the dtype, shape and values PyTables' `node.read()` gives — h5py's where
//! PyTables cannot read the leaf — and `sciio cat` prints it; every file converts whole to
//! `.npz` (links and what npz cannot hold left out, never a failure). `python/dump_leaves.py`
//! writes the reference `.npy` files and compares them with numpy. No leaf is skipped: pickled
//! rows must be refused, h5py's object elements (references, compounds with variable-length
//! members) have no numpy layout and must be refused as unsupported by the facade
//! (sciio-pytables' `wheel_files` test checks their values against h5py), and data neither
//! PyTables nor h5py can decode (LZO without liblzo in the wheels) must convert with
//! PyTables' dtype and shape.
#![cfg(feature = "hdf5")]

use std::path::{Path, PathBuf};

use sciio::{convert, ConvertOptions, ErrorKind, File};
use sciio_testkit::{run_python_script, tempdir, wheel_files};

/// Problems with one file (empty: every leaf matches), and the number of leaves checked.
fn walk(file: &Path) -> (Vec<String>, usize) {
    let dir = tempdir();
    let d = dir.path();
    run_python_script(
        "python/dump_leaves.py",
        &["dump", file.to_str().unwrap(), d.to_str().unwrap()],
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).unwrap()).unwrap();
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let mut problems = Vec::new();
    let mut h5 = match File::open(file) {
        Ok(f) => f,
        Err(e) => return (vec![format!("{name}: cannot open: {e}")], 0),
    };
    let entries = manifest.as_array().unwrap();
    let mut cat_paths = Vec::new();
    let options = ConvertOptions::default();
    let to = |h5: &mut File, path: &str, dst: &Path| {
        convert(h5, Some(path), dst, &options, &mut |_, _| {})
    };
    for (index, e) in entries.iter().enumerate() {
        let path = e["path"].as_str().unwrap();
        let kind = e["kind"].as_str().unwrap();
        let mine =
            |n: &serde_json::Value| d.join(n.as_str().unwrap().replacen("ref_", "sciio_", 1));
        let mut fail = |what: String| problems.push(format!("{name}:{path} ({kind}): {what}"));
        match kind {
            // A VLArray of numbers neither reads (time atoms): its rows, PyTables' shape[0]
            // of them, go to .npz.
            "unreadable" if vl_rows(&h5, path) => {
                let dst = d.join(format!("sciio_rows_{index}.npz"));
                let want = e["shape"][0].as_u64().map(|n| n as usize);
                match to(&mut h5, path, &dst) {
                    Ok(summary) if Some(summary.arrays.len()) == want => {
                        cat_paths.push(path.to_string())
                    }
                    other => fail(format!("convert to .npz, {want:?} rows: {other:?}")),
                }
            }
            "array" | "unreadable" => {
                let dst = match e.get("npy") {
                    Some(n) => mine(n),
                    None => d.join(format!("sciio_nothing_{index}.npy")),
                };
                match to(&mut h5, path, &dst) {
                    Ok(_) => cat_paths.push(path.to_string()),
                    Err(err) => fail(format!("convert to .npy: {err}")),
                }
            }
            // One npz member per row (dump_leaves.py compare reads them by their names).
            "rows" => match to(&mut h5, path, &d.join(format!("sciio_rows_{index}.npz"))) {
                Ok(_) => cat_paths.push(path.to_string()),
                Err(err) => fail(format!("convert to .npz: {err}")),
            },
            "objects" => {
                match h5.read_rows(path).and(h5.read_array(path)) {
                    Err(err) if err.kind() == ErrorKind::Refused => {}
                    other => fail(format!("pickled rows not refused: {other:?}")),
                }
                let dst = d.join(format!("objects_{index}.npz"));
                match to(&mut h5, path, &dst) {
                    Err(err) if err.to_string().contains("never unpickled") => {}
                    other => fail(format!("pickled rows converted: {other:?}")),
                }
                if dst.exists() {
                    fail("pickled rows: a file was written".to_string());
                }
            }
            "elements" => {
                match h5.read_array(path) {
                    Err(err) if err.kind() == ErrorKind::Unsupported => {}
                    other => fail(format!("object elements not refused: {other:?}")),
                }
                match to(&mut h5, path, &d.join(format!("elements_{index}.npy"))) {
                    Err(err) if err.kind() == ErrorKind::Unsupported => {}
                    other => fail(format!("object elements converted: {other:?}")),
                }
            }
            other => fail(format!("unknown kind {other}")),
        }
    }
    // The whole file: what npz cannot hold is left out, never a failure.
    if let Err(err) = convert(
        &mut h5,
        None,
        &d.join("whole.npz"),
        &options,
        &mut |_, _| {},
    ) {
        problems.push(format!("{name}: whole file to .npz: {err}"));
    }
    let out = run_python_script("python/dump_leaves.py", &["compare", d.to_str().unwrap()]);
    for line in out.lines() {
        if line.starts_with("MISMATCH") || line.starts_with("MISSING") {
            problems.push(format!("{name}: {line}"));
        }
    }
    for path in &cat_paths {
        let run = sciio_testkit::child_command(env!("CARGO_BIN_EXE_sciio"))
            .arg("cat")
            .arg(format!("{}:{path}", file.display()))
            .output()
            .unwrap();
        if !run.status.success() {
            problems.push(format!(
                "{name}:{path}: sciio cat failed: {}",
                String::from_utf8_lossy(&run.stderr)
            ));
        }
    }
    (problems, entries.len())
}

/// True for a VLArray (PyTables' or h5py's variable-length dataset) of numbers: rows read
/// one by one, as `sciio ls` says.
fn vl_rows(h5: &File, path: &str) -> bool {
    matches!(
        h5.node(path).map(|n| &n.kind),
        Ok(sciio::NodeKind::Opaque { kind, reason }) if kind == "VLArray" && reason.contains("row by row")
    )
}

fn walk_all(files: &[PathBuf], min_leaves: usize) {
    let mut problems = Vec::new();
    let mut leaves = 0;
    for f in files {
        let (p, n) = walk(f);
        problems.extend(p);
        leaves += n;
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(leaves >= min_leaves, "only {leaves} leaves checked");
}

#[test]
fn every_leaf_of_pytables_wheel_files_converts_as_pytables_reads_it() {
    let files = wheel_files("tables/tests", ".h5");
    assert_eq!(files.len(), 46, "PyTables 3.11 ships 46 test files");
    walk_all(&files, 150);
}

#[test]
fn every_leaf_of_h5py_wheel_files_converts_as_pytables_or_h5py_reads_it() {
    let root = sciio_testkit::site_packages().join("h5py/tests");
    let mut files = Vec::new();
    let mut todo = vec![root];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|e| e == "h5") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 4, "h5py ships at least 4 .h5 test files");
    walk_all(&files, 4);
}

#[test]
fn old_pandas_stores_convert_leaf_by_leaf_as_pytables_reads_them() {
    let dir = sciio_testkit::repo_root().join("../shared/corpus/pandas-legacy-hdf");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "h5"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no pandas stores in {}", dir.display());
    walk_all(&files, 20);
}
