//! MAT v4 and Level-5 (v5/v6/v7) reading against scipy.io, on every `.mat` file of the
//! installed scipy's test data (MATLAB-written, both byte orders, cells, structs, objects,
//! sparse, unicode, function handles, damaged files): where `scipy.io.loadmat` reads a file,
//! sciio reads it too and holds every numeric, logical and char leaf scipy sees, with the
//! same dimensions and values (python/mat5_scipy_leaves.py dumps scipy's); where scipy
//! refuses a file, sciio gives a one-line error. No file is skipped.

use std::collections::BTreeMap;

use sciio_core::{NdArray, Order, Value};
use sciio_mat::{MatFile, MatValue};
use sciio_testkit::{run_python_script, wheel_files};
use serde_json::Value as J;

type Leaves = BTreeMap<String, (Vec<usize>, Vec<String>)>;

fn bits(x: f64) -> String {
    x.to_bits().to_string()
}

/// An array's elements in column-major order, written as the Python dumper writes them.
fn values(a: &NdArray) -> Vec<String> {
    let f = a.to_native().to_order(Order::F);
    let kind = f.dtype().as_scalar().unwrap().kind;
    let size = kind.itemsize();
    f.as_bytes()
        .chunks(size)
        .map(|b| {
            let one = NdArray::from_bytes(f.dtype().clone(), &[], Order::C, b).unwrap();
            match one.get(&[]).unwrap() {
                Value::Bool(b) => format!("i:{}", u8::from(b)),
                Value::Int(i) => format!("i:{i}"),
                Value::UInt(u) => format!("i:{u}"),
                Value::Float(x) => format!("f:{}", bits(x)),
                Value::Complex(c) => format!("c:{},{}", bits(c.re), bits(c.im)),
                other => panic!("unexpected element {other:?}"),
            }
        })
        .collect()
}

/// Our leaves, on the dumper's paths: `/i` for a cell item or struct element (column-major),
/// `/field` for a field; old-style objects and function handles by their stored struct.
fn walk(v: &MatValue, path: &str, out: &mut Leaves) {
    match v {
        MatValue::Numeric(a) | MatValue::Logical(a) => {
            out.insert(path.into(), (a.shape().to_vec(), values(a)));
        }
        MatValue::Char(c) => {
            let codes = c.codes.iter().map(|x| format!("i:{x}")).collect();
            out.insert(path.into(), (c.shape.clone(), codes));
        }
        MatValue::Sparse(s) => {
            out.insert(
                path.into(),
                (vec![s.nrows, s.ncols], values(&s.to_dense().unwrap())),
            );
        }
        MatValue::Cell(c) => {
            for (i, item) in c.items.iter().enumerate() {
                walk(item, &format!("{path}/{i}"), out);
            }
        }
        MatValue::Struct(s) => {
            for (i, element) in s.elements.iter().enumerate() {
                for (f, value) in s.fields.iter().zip(element) {
                    walk(value, &format!("{path}/{i}/{f}"), out);
                }
            }
        }
        MatValue::Opaque(o) => {
            if let Some(p) = &o.payload {
                walk(p, path, out);
            }
        }
        MatValue::Object(_) => {}
    }
}

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
        for (path, leaf) in entry["leaves"].as_object().unwrap() {
            let shape: Vec<usize> = leaf["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            let vals: Vec<String> = leaf["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let Some((my_shape, my_vals)) = mine.get(path) else {
                panic!(
                    "{name}: scipy's leaf {path} not found; sciio has {:?}",
                    mine.keys()
                );
            };
            assert_eq!(my_shape, &shape, "{name}{path}: shape");
            assert_eq!(my_vals, &vals, "{name}{path}: values");
            leaves_checked += 1;
        }
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
