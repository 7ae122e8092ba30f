//! Reading MAT files made by the reference tools: hdf5storage (every type of its spec tables,
//! with and without Python metadata), MATLAB-layout files written with h5py, MATLAB's own files
//! shipped in the PyTables wheel, and broken files that must give clean errors.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use sciio_core::ErrorKind;
use sciio_mat::{MatClass, MatFile, MatValue};
use sciio_testkit::{run_python_script, tempdir, wheel_files};
use serde_json::Value as J;

/// Expected canonical values per file and variable.
type Expected = BTreeMap<String, BTreeMap<String, J>>;
/// Per broken file: [variable, words its error must contain...].
type Corrupt = BTreeMap<String, Vec<Vec<String>>>;

fn fixtures(dir: &Path) -> (Expected, Corrupt) {
    run_python_script("python/mat_fixtures.py", &[dir.to_str().unwrap()]);
    let expected =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let corrupt =
        serde_json::from_str(&std::fs::read_to_string(dir.join("corrupt.json")).unwrap()).unwrap();
    (expected, corrupt)
}

#[test]
fn reads_what_the_tools_wrote() {
    let dir = tempdir();
    let (expected, _) = fixtures(dir.path());
    assert!(expected.len() >= 3);
    for (file, vars) in &expected {
        let mat = MatFile::open(dir.path().join(file)).unwrap();
        let mut names = mat.names().unwrap();
        names.sort();
        let mut want: Vec<&String> = vars.keys().collect();
        want.sort();
        assert_eq!(
            names.iter().collect::<Vec<_>>(),
            want,
            "{file}: variable names"
        );
        for (name, want) in vars {
            let got = mat
                .read(name)
                .unwrap_or_else(|e| panic!("{file}:{name}: {e}"));
            common::assert_same(&format!("{file}:{name}"), &common::canon(&got), want);
            // The attribute-only summary agrees with the value.
            let info = mat.info(name).unwrap();
            assert_eq!(info.shape, got.matlab_shape(), "{file}:{name} info shape");
            assert_eq!(info.class, got.class(), "{file}:{name} info class");
        }
    }
}

#[test]
fn reads_matlab_files_from_the_pytables_wheel() {
    let files = wheel_files("tables/tests", ".mat");
    assert!(files.len() >= 3);
    for file in files {
        let mat = MatFile::open(&file).unwrap();
        assert!(mat
            .header_text()
            .unwrap()
            .starts_with("MATLAB 7.3 MAT-file, Platform: "));
        let want: BTreeMap<String, J> = serde_json::from_str(&run_python_script(
            "python/mat_dump.py",
            &[file.to_str().unwrap()],
        ))
        .unwrap();
        let got = mat.read_all().unwrap();
        assert_eq!(got.len(), want.len(), "{}", file.display());
        for (name, value) in got {
            common::assert_same(
                &format!("{}:{name}", file.display()),
                &common::canon(&value),
                &want[&name],
            );
        }
    }
}

#[test]
fn broken_files_give_clean_errors() {
    let dir = tempdir();
    let (_, corrupt) = fixtures(dir.path());
    assert!(corrupt.len() >= 4);
    for (file, cases) in &corrupt {
        let mat = MatFile::open(dir.path().join(file)).unwrap();
        for case in cases {
            let (var, words) = case.split_first().unwrap();
            let err = mat.read(var).expect_err(&format!("{file}:{var} must fail"));
            let text = err.to_string();
            for w in words {
                assert!(
                    text.contains(w.as_str()),
                    "{file}:{var}: {w:?} not in {text:?}"
                );
            }
            assert!(
                err.location().file.is_some(),
                "{file}:{var}: no file in {text}"
            );
        }
    }
}

#[test]
fn truncated_and_foreign_files_give_clean_errors() {
    let dir = tempdir();
    let (_, _) = fixtures(dir.path());
    let good = std::fs::read(dir.path().join("matlab_layout.mat")).unwrap();
    for cut in [
        0,
        10,
        127,
        128,
        512,
        600,
        2048,
        good.len() / 2,
        good.len() - 1,
    ] {
        let p = dir.path().join(format!("cut{cut}.mat"));
        std::fs::write(&p, &good[..cut]).unwrap();
        // Opening or reading fails with an error, never a panic; whatever opens reads cleanly.
        if let Ok(m) = MatFile::open(&p) {
            for name in m.names().unwrap_or_default() {
                let _ = m.read(&name);
            }
        }
    }
    // Flipped bytes in the middle of the file: errors or values, never a crash.
    for at in (600..good.len()).step_by(good.len() / 40 + 1) {
        let mut bad = good.clone();
        bad[at] ^= 0x5a;
        let p = dir.path().join("flip.mat");
        std::fs::write(&p, &bad).unwrap();
        if let Ok(m) = MatFile::open(&p) {
            for name in m.names().unwrap_or_default() {
                let _ = m.read(&name);
            }
        }
    }
    // A Level-5 header without variables is an empty MAT v5 file.
    let mut v5 = vec![b' '; 128];
    v5[..19].copy_from_slice(b"MATLAB 5.0 MAT-file");
    v5[116..124].fill(0);
    v5[124..].copy_from_slice(b"\x00\x01IM");
    let p = dir.path().join("v5.mat");
    std::fs::write(&p, &v5).unwrap();
    let m = MatFile::open(&p).unwrap();
    assert_eq!(m.version().name(), "5");
    assert_eq!(m.header_text(), Some("MATLAB 5.0 MAT-file"));
    assert!(m.names().unwrap().is_empty());
    let p = dir.path().join("junk.mat");
    std::fs::write(&p, b"not a mat file at all").unwrap();
    assert_eq!(MatFile::open(&p).unwrap_err().kind(), ErrorKind::Format);
}

#[test]
fn scipy_v5_file_is_read() {
    let dir = tempdir();
    let p = dir.path().join("v5.mat");
    sciio_testkit::run_python(
        "import scipy.io, sys; scipy.io.savemat(sys.argv[1], {'x': 1.0})",
        &[p.to_str().unwrap()],
    );
    let m = MatFile::open(&p).unwrap();
    assert_eq!(m.version().name(), "5");
    assert!(m.header_text().unwrap().starts_with("MATLAB 5.0 MAT-file"));
    assert_eq!(m.read("x").unwrap(), MatValue::from(1.0));
    assert!(matches!(MatValue::from(1.0).class(), MatClass::Double));
}
