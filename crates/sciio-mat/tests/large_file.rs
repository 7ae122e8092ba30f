//! Files above the in-memory threshold (64 MiB) are read through libhdf5 object by object;
//! smaller ones decode plain cell elements and struct fields from memory. Both paths give the
//! same values for the same cells and structs.

use sciio_core::{NdArray, Order};
use sciio_mat::{CellArray, MatFile, MatValue, StructArray, WriteOptions};
use sciio_testkit::tempdir;

fn values() -> Vec<(String, MatValue)> {
    let m = NdArray::from_vec((0..6).map(f64::from).collect::<Vec<_>>(), &[2, 3]).unwrap();
    let m = NdArray::from_bytes(m.dtype().clone(), &[2, 3], Order::F, m.as_bytes()).unwrap();
    let ints = NdArray::from_vec(vec![-3i8, 4, 5], &[1, 3]).unwrap();
    let inner = MatValue::Cell(CellArray::row(vec![
        MatValue::from("nested"),
        MatValue::from(2.0),
    ]));
    let cell = MatValue::Cell(CellArray::row(vec![
        MatValue::Numeric(m.clone()),
        MatValue::from("text"),
        MatValue::from(true),
        MatValue::Numeric(ints),
        MatValue::from(Vec::<f64>::new()),
        inner,
    ]));
    let st = MatValue::Struct(StructArray::scalar(vec![
        ("a".into(), MatValue::from(1.5)),
        ("b".into(), MatValue::Numeric(m)),
        ("c".into(), cell.clone()),
    ]));
    vec![("c".into(), cell), ("s".into(), st)]
}

#[test]
fn cells_and_structs_read_the_same_from_large_and_small_files() {
    let dir = tempdir();
    let vars = values();
    let small = dir.path().join("small.mat");
    sciio_mat::write_mat(&small, &vars, &WriteOptions::default()).unwrap();
    // ~72 MiB uncompressed: above the threshold.
    let large = dir.path().join("large.mat");
    let mut all = vars.clone();
    let big = NdArray::from_vec(vec![0.5f64; 9_500_000], &[9_500_000]).unwrap();
    all.push(("big".into(), MatValue::Numeric(big)));
    sciio_mat::write_mat(&large, &all, &WriteOptions::default().compression(None)).unwrap();
    assert!(std::fs::metadata(&large).unwrap().len() > 64 << 20);

    let from_small = MatFile::open(&small).unwrap();
    let from_large = MatFile::open(&large).unwrap();
    for (name, want) in &vars {
        let a = from_small.read(name).unwrap();
        let b = from_large.read(name).unwrap();
        assert_eq!(a, *want, "{name} (small file)");
        assert_eq!(b, *want, "{name} (large file)");
    }
}

#[test]
fn limits_below_the_file_size_still_open_and_read_small_values() {
    let dir = tempdir();
    let path = dir.path().join("small.mat");
    sciio_mat::write_mat(&path, &values(), &WriteOptions::default()).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    // Too tight for a copy of the file, enough for every value in it.
    let limits = sciio_core::Limits::default().max_alloc(len - 1);
    let mat = MatFile::open_with_limits(&path, limits).unwrap();
    for (name, want) in values() {
        assert_eq!(mat.read(&name).unwrap(), want, "{name}");
    }
}
