//! MAT v4 and Level-5 (v5/v6/v7) reading against scipy.io, on every `.mat` file of the
//! installed scipy's test data (MATLAB-written, both byte orders, cells, structs, objects,
//! sparse, unicode, function handles, damaged files): where `scipy.io.loadmat` reads a file,
//! sciio reads it too and holds every numeric, logical and char leaf scipy sees, with the
//! same dimensions and values (python/mat5_scipy_leaves.py dumps scipy's); where scipy
//! refuses a file, sciio gives a one-line error. No file is skipped.

mod leaves;

use leaves::{check_leaves, walk, Leaves};
use sciio_mat::MatFile;
use sciio_testkit::{run_python_script, wheel_files};
use serde_json::Value as J;

#[test]
fn every_scipy_test_file_reads_like_scipy() {
    let files = wheel_files("scipy/io/matlab/tests/data", ".mat");
    let args: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let dump: J =
        serde_json::from_str(&run_python_script("python/mat5_scipy_leaves.py", &args)).unwrap();
    let (mut read, mut refused, mut leaves_checked) = (0, 0, 0);
    let mut orders = std::collections::BTreeSet::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let entry = &dump[f.to_str().unwrap()];
        let ours = MatFile::open(f).and_then(|m| m.read_all().map(|all| (m, all)));
        if entry["ok"] != J::Bool(true) {
            let why = entry["error"].as_str().unwrap();
            if why.starts_with("NotImplementedError") && why.contains("v7.3") {
                // scipy leaves v7.3 (HDF5) files to h5py; sciio reads them.
                let (m, _) = ours.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(m.version().name(), "7.3", "{name}");
                continue;
            }
            let err = match ours {
                Ok(_) => panic!("{name}: scipy refuses it ({why}), sciio reads it"),
                Err(e) => e.to_string(),
            };
            assert_eq!(err.lines().count(), 1, "{name}: {err}");
            assert!(
                err.contains(&name),
                "{name}: the error names the file: {err}"
            );
            refused += 1;
            continue;
        }
        let (m, all) = ours.unwrap_or_else(|e| panic!("{name}: scipy reads it, sciio: {e}"));
        let head = std::fs::read(f).unwrap();
        if m.version().name() != "4" {
            orders.insert(head[126..128].to_vec());
        }
        let mut mine = Leaves::new();
        for (var, value) in &all {
            walk(value, &format!("/{var}"), &mut mine);
        }
        leaves_checked += check_leaves(&name, &entry["leaves"], &mine);
        read += 1;
    }
    assert!(read >= 90, "only {read} files read");
    assert!(refused >= 5, "only {refused} files refused");
    assert!(
        leaves_checked >= 200,
        "only {leaves_checked} leaves checked"
    );
    // Both byte orders were among the files read.
    assert!(orders.contains(b"IM".as_slice()) && orders.contains(b"MI".as_slice()));
}
