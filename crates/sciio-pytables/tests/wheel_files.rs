//! Every HDF5 file of PyTables' own test suite (shipped in the wheel) opens, and every leaf
//! reads with the values PyTables (or h5py, where PyTables cannot) reads.

mod common;

use sciio_testkit::{tempdir, wheel_files};

#[test]
fn every_pytables_test_file_reads_like_pytables() {
    let files = wheel_files("tables/tests", ".h5");
    assert_eq!(files.len(), 46, "PyTables 3.11 ships 46 test files");
    let mut report = String::new();
    let mut failures = Vec::new();
    let mut total = 0;
    for file in &files {
        let dir = tempdir();
        let (n, errors) = common::dump(file, dir.path());
        total += n;
        for e in &errors {
            let name = file.file_name().unwrap().to_string_lossy();
            // Refusals on purpose: pickled objects are never unpickled.
            if e.contains("[Refused]") {
                report.push_str(&format!("{name}: refused: {e}\n"));
            } else {
                failures.push(format!("{name}: {e}"));
            }
        }
        let out = common::check_with_pytables(file, dir.path());
        report.push_str(&out);
        for line in out.lines().filter(|l| l.starts_with("MISMATCH")) {
            failures.push(line.to_string());
        }
    }
    println!("{report}");
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(total > 100, "only {total} leaves read");
}
