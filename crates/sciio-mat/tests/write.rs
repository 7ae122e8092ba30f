//! sciio writes every kind of MATLAB value; hdf5storage, mat73 and pymatreader read back what
//! was meant and h5py sees MATLAB's layout (python/mat_check_sciio.py). sciio reads its own
//! files back identically. Replacing a variable in an existing file leaves the others alone.

mod common;
mod values;

use sciio_core::NdArray;
use sciio_mat::{CellArray, MatFile, MatValue, MatWriter, SparseMatrix, StructArray, WriteOptions};
use sciio_testkit::{run_python, run_python_script, tempdir};
use serde_json::{json, Map};
use values::{arr, num, values};

fn expected_json(vals: &[(String, MatValue)], path: &std::path::Path) {
    let mut m = Map::new();
    for (n, v) in vals {
        m.insert(n.clone(), common::canon(v));
    }
    std::fs::write(path, serde_json::to_string(&json!(m)).unwrap()).unwrap();
}

fn round_trip(python_metadata: bool) {
    let dir = tempdir();
    let file = dir.path().join("all.mat");
    let vals = values();
    let opts = WriteOptions::default().python_metadata(python_metadata);
    sciio_mat::write_mat(&file, &vals, &opts).unwrap();
    // sciio reads its own file back identically.
    let mat = MatFile::open(&file).unwrap();
    for (n, v) in &vals {
        let back = mat.read(n).unwrap();
        common::assert_same(n, &common::canon(&back), &common::canon(v));
    }
    let exp = dir.path().join("expected.json");
    expected_json(&vals, &exp);
    // hdf5storage has no sparse matrices (it reads MATLAB's sparse group as a struct of its
    // data/ir/jc arrays), so those are checked with mat73 and pymatreader only.
    let out = run_python_script(
        "python/mat_check_sciio.py",
        &[
            file.to_str().unwrap(),
            exp.to_str().unwrap(),
            "--skip-hdf5storage",
            "sp_double,sp_complex,sp_logical",
        ],
    );
    assert!(out.starts_with("ok"), "{out}");
}

#[test]
fn tools_read_what_sciio_wrote() {
    round_trip(false);
}

#[test]
fn tools_read_what_sciio_wrote_with_python_metadata() {
    round_trip(true);
}

#[test]
fn python_metadata_restores_numpy_types() {
    let dir = tempdir();
    let file = dir.path().join("meta.mat");
    let vals = vec![
        ("s".to_string(), MatValue::from("text")),
        (
            "st".to_string(),
            MatValue::Struct(StructArray::scalar(vec![("k".into(), MatValue::from(1.0))])),
        ),
        (
            "c".to_string(),
            MatValue::Cell(CellArray::row(vec![MatValue::from(1.0)])),
        ),
        ("i".to_string(), num(arr(vec![1u16, 2], &[1, 2]))),
    ];
    sciio_mat::write_mat(&file, &vals, &WriteOptions::default().python_metadata(true)).unwrap();
    let out = run_python(
        "import sys, hdf5storage, numpy as np; d = hdf5storage.loadmat(sys.argv[1]); \
         print(type(d['s']).__name__, type(d['st']).__name__, d['c'].dtype, d['i'].dtype, d['i'].shape)",
        &[file.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "str dict object uint16 (1, 2)");
}

#[test]
fn replacing_a_variable_keeps_the_others() {
    let dir = tempdir();
    let file = dir.path().join("append.mat");
    let a = MatValue::Cell(CellArray::row(vec![
        MatValue::from("keep"),
        MatValue::from(1.0),
    ]));
    let b = MatValue::from(vec![1.0, 2.0]);
    sciio_mat::write_mat(
        &file,
        &[("a".into(), a.clone()), ("b".into(), b)],
        &WriteOptions::default(),
    )
    .unwrap();
    let header_before = std::fs::read(&file).unwrap()[..128].to_vec();
    let mut w = MatWriter::open(&file, WriteOptions::default()).unwrap();
    let b2 = MatValue::Cell(CellArray::row(vec![MatValue::from("new")]));
    w.write("b", &b2).unwrap();
    w.write("c", &MatValue::from(3.0)).unwrap();
    w.finish().unwrap();
    assert_eq!(std::fs::read(&file).unwrap()[..128], header_before[..]);
    let mat = MatFile::open(&file).unwrap();
    assert_eq!(mat.names().unwrap(), vec!["a", "b", "c"]);
    assert_eq!(mat.read("a").unwrap(), a);
    assert_eq!(mat.read("b").unwrap(), b2);
    let out = run_python(
        "import sys, hdf5storage, numpy as np; d = hdf5storage.loadmat(sys.argv[1]); print(sorted(d), str(np.squeeze(d['a'][0, 0])), str(np.squeeze(d['b'][0, 0])), d['c'][0, 0])",
        &[file.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "['a', 'b', 'c'] keep new 3.0");
}

#[test]
fn bad_values_are_refused() {
    let dir = tempdir();
    let file = dir.path().join("bad.mat");
    let mut w = MatWriter::create(&file, WriteOptions::default()).unwrap();
    assert!(w.write("a/b", &MatValue::from(1.0)).is_err());
    assert!(w.write("", &MatValue::from(1.0)).is_err());
    let bad_struct = MatValue::Struct(StructArray {
        shape: vec![1, 2],
        fields: vec!["x".into()],
        elements: vec![vec![]],
    });
    assert!(w.write("s", &bad_struct).is_err());
    let bad_sparse = MatValue::Sparse(SparseMatrix {
        nrows: 1,
        ncols: 1,
        ir: vec![5],
        jc: vec![0, 1],
        data: NdArray::from_vec(vec![1.0f64], &[1]).unwrap(),
    });
    assert!(w.write("sp", &bad_sparse).is_err());
    let bad_field = MatValue::Struct(StructArray::scalar(vec![(
        "x/y".into(),
        MatValue::from(1.0),
    )]));
    assert!(w.write("f", &bad_field).is_err());
    w.write("ok", &MatValue::from(1.0)).unwrap();
    w.finish().unwrap();
    assert_eq!(
        MatFile::open(&file).unwrap().read("ok").unwrap(),
        MatValue::from(1.0)
    );
}

/// Structs over 1024 fields written with Python metadata keep hdf5storage's layout up to 4000
/// fields: `Python.Fields` (a vlen string attribute) and `MATLAB_fields` as attributes, as
/// hdf5storage writes them (it reads field names only from the attribute); hdf5storage restores
/// them as dicts with every key in order, mat73 reads them too. hdf5storage cannot write a
/// struct with more fields itself (its attributes no longer fit a header message): sciio
/// writes those as MATLAB does (`MATLAB_fields` referencing `#refs#`, no Python metadata),
/// which mat73 reads (hdf5storage reads no MATLAB struct in that layout).
#[test]
fn structs_over_1024_fields_keep_python_fields_for_hdf5storage() {
    let dir = tempdir();
    let wide = |n: usize| {
        MatValue::Struct(StructArray::scalar(
            (0..n)
                .map(|i| (format!("f{i}"), MatValue::from(i as f64)))
                .collect(),
        ))
    };
    let opts = WriteOptions::default().python_metadata(true);
    let file = dir.path().join("wide.mat");
    let vals = vec![
        ("s1500".to_string(), wide(1500)),
        ("s4000".to_string(), wide(4000)),
    ];
    sciio_mat::write_mat(&file, &vals, &opts).unwrap();
    let wider = dir.path().join("wider.mat");
    sciio_mat::write_mat(&wider, &[("s5000".to_string(), wide(5000))], &opts).unwrap();
    let out = run_python(
        r#"
import sys, h5py, hdf5storage, mat73, numpy as np
f = h5py.File(sys.argv[1])
for n in (1500, 4000):
    names = [x.decode() if isinstance(x, bytes) else x for x in f[f's{n}'].attrs['Python.Fields']]
    assert names == [f'f{i}' for i in range(n)], n
d = hdf5storage.loadmat(sys.argv[1])
for n in (1500, 4000):
    s = d[f's{n}']
    assert type(s) is dict and list(s) == [f'f{i}' for i in range(n)], (n, type(s))
    assert all(np.asarray(s[f'f{i}']).item() == i for i in range(n)), n
assert 'Python.Fields' not in h5py.File(sys.argv[2])['s5000'].attrs
for path in sys.argv[1:]:
    m = mat73.loadmat(path)
    for k, s in m.items():
        # mat73 lists a group's members in HDF5's (name) order.
        assert sorted(s) == sorted(f'f{i}' for i in range(int(k[1:]))), k
        assert all(np.asarray(s[f'f{i}']).item() == i for i in range(int(k[1:]))), k
print('ok')
"#,
        &[file.to_str().unwrap(), wider.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "ok");
}
