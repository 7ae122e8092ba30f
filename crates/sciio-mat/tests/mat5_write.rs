//! MAT v5 and v7 written by sciio against scipy.io, both ways, for every class (numeric of
//! each type, complex, logical, char rows/matrices/unicode/empty, cells, nested cells, structs,
//! nested structs, struct arrays, sparse real/complex/logical, empties):
//! - scipy.io.savemat writes the data (v5 and compressed v7); sciio reads every leaf scipy
//!   sees, equal;
//! - sciio writes what it read as v5 and as v7; `scipy.io.loadmat` reads back exactly what it
//!   reads from savemat's own file (python/mat5_roundtrip.py), and sciio reads its own files
//!   back equal;
//! - a variable over 2 GB is refused with a hint to write v7.3.

mod leaves;

use leaves::{check_leaves, walk, Leaves};
use sciio_core::{DType, ErrorKind, NdArray, Order, ScalarKind};
use sciio_mat::{MatFile, MatValue, MatVersion, MatWriter, WriteOptions};
use sciio_testkit::{run_python_script, tempdir};
use serde_json::Value as J;

fn write(path: &std::path::Path, version: MatVersion, vars: &[(String, MatValue)]) {
    let mut w = MatWriter::create(path, WriteOptions::default().version(version)).unwrap();
    for (name, value) in vars {
        w.write(name, value).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn round_trips_with_scipy_both_ways() {
    let dir = tempdir();
    let p = |n: &str| dir.path().join(n);
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let (s5, s7) = (p("scipy5.mat"), p("scipy7.mat"));
    run_python_script("python/mat5_roundtrip.py", &["make", &s(&s5), &s(&s7)]);

    // scipy -> sciio: every leaf scipy sees, by value.
    let dump: J = serde_json::from_str(&run_python_script(
        "python/mat5_scipy_leaves.py",
        &[&s(&s5), &s(&s7)],
    ))
    .unwrap();
    let from5 = MatFile::open(&s5).unwrap();
    let from7 = MatFile::open(&s7).unwrap();
    assert_eq!(from5.version(), MatVersion::V5);
    assert_eq!(from7.version(), MatVersion::V7);
    let vars = from5.read_all().unwrap();
    assert_eq!(vars, from7.read_all().unwrap());
    assert_eq!(vars.len(), 27);
    let mut mine = Leaves::new();
    for (name, value) in &vars {
        walk(value, &format!("/{name}"), &mut mine);
    }
    for f in [&s5, &s7] {
        let n = check_leaves("scipy-written", &dump[s(f)]["leaves"], &mine);
        assert!(n >= 35, "{n}");
    }

    // sciio -> scipy: loadmat reads sciio's v5 and v7 files as it reads savemat's.
    for (version, name) in [
        (MatVersion::V5, "sciio5.mat"),
        (MatVersion::V7, "sciio7.mat"),
    ] {
        let out = p(name);
        write(&out, version, &vars);
        let verdict =
            run_python_script("python/mat5_roundtrip.py", &["compare", &s(&s5), &s(&out)]);
        assert_eq!(verdict.trim(), "same", "{name}");
        let back = MatFile::open(&out).unwrap();
        assert_eq!(back.version(), version);
        assert!(back
            .header_text()
            .unwrap()
            .starts_with("MATLAB 5.0 MAT-file, Platform: sciio"));
        assert_eq!(back.read_all().unwrap(), vars, "{name}");
    }
    // v7 compresses: smaller than v5 for this data.
    let size = |n: &str| std::fs::metadata(p(n)).unwrap().len();
    assert!(size("sciio7.mat") < size("sciio5.mat"));
}

#[test]
fn variables_over_2_gb_are_refused_with_a_hint() {
    let dir = tempdir();
    let path = dir.path().join("big.mat");
    // Zeroed pages are not touched: the writer refuses from the size alone.
    let big = NdArray::zeroed(
        DType::scalar(ScalarKind::UInt(1)),
        &[1, (1 << 31) + 8],
        Order::F,
    )
    .unwrap();
    for version in [MatVersion::V5, MatVersion::V7] {
        let mut w = MatWriter::create(&path, WriteOptions::default().version(version)).unwrap();
        let err = w.write("big", &MatValue::Numeric(big.clone())).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
        assert!(err.to_string().contains("7.3"), "{err}");
        assert_eq!(err.location().node.as_deref(), Some("/big"));
        // The file stays valid for what was written.
        w.write("small", &MatValue::from(2.0)).unwrap();
        w.finish().unwrap();
        let back = MatFile::open(&path).unwrap();
        assert_eq!(back.names().unwrap(), vec!["small"]);
    }
    let err =
        MatWriter::create(&path, WriteOptions::default().version(MatVersion::V4)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported);
}

#[test]
fn large_v7_variables_are_compressed_on_all_cores_into_one_zlib_stream() {
    // Over 4 MiB: the variable is deflated pigz-style (blocks in parallel, one stream).
    let dir = tempdir();
    let path = dir.path().join("big.mat");
    let (rows, cols) = (1000usize, 800usize);
    let data: Vec<f64> = (0..rows * cols).map(|i| ((i % 997) as f64) * 0.5).collect();
    let a = NdArray::from_vec(data, &[rows, cols])
        .unwrap()
        .to_order(Order::F);
    let value = MatValue::Numeric(a);
    write(&path, MatVersion::V7, &[("big".into(), value.clone())]);
    assert_eq!(MatFile::open(&path).unwrap().read("big").unwrap(), value);
    assert!(std::fs::metadata(&path).unwrap().len() < 2 << 20);
    let out = sciio_testkit::run_python(
        "import sys, numpy as np, scipy.io as sio\n\
         m = sio.loadmat(sys.argv[1])['big']\n\
         want = ((np.arange(1000 * 800) % 997) * 0.5).reshape(1000, 800)\n\
         print(m.shape, np.array_equal(m, want))",
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "(1000, 800) True");
}
