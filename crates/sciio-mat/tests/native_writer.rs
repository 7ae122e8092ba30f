//! New MAT files are written by sciio's own HDF5 writer (sciio_hdf5::write::native). These
//! tests hold it against libhdf5 writing the same values (`WriteOptions::libhdf5`): h5py must
//! see the same objects, attributes, types, chunking, filters and values in both files
//! (python/h5_same_objects.py), including groups big enough for multi-level B-trees and
//! datasets with more chunks than one B-tree node holds. Adding to a file goes through the
//! same native writer (the file is rewritten): values replaced and added, the others kept.

mod common;
mod values;

use sciio_mat::{CellArray, MatFile, MatValue, MatWriter, StructArray, WriteOptions};
use sciio_testkit::{run_python, run_python_script, tempdir};
use values::{arr, num};

/// The writer tests' values plus sizes that need multi-level trees.
fn big_values() -> Vec<(String, MatValue)> {
    let mut v = values::values();
    // 3000 cell elements: `/#refs#` holds > 8 x 32 entries, a B-tree of two levels.
    let cell = (0..3000)
        .map(|i| MatValue::from(vec![i as f64, -(i as f64)]))
        .collect();
    v.push(("big_cell".into(), MatValue::Cell(CellArray::row(cell))));
    let fields = (0..700)
        .map(|i| (format!("field_{i:04}"), MatValue::from(i as f64)))
        .collect();
    v.push((
        "wide_struct".into(),
        MatValue::Struct(StructArray::scalar(fields)),
    ));
    // 400 x 100 doubles in 4 KiB chunks: 80 chunks, more than one chunk B-tree node holds.
    let m: Vec<f64> = (0..40_000).map(|i| (i % 977) as f64 * 0.5).collect();
    v.push(("chunked".into(), num(arr(m, &[400, 100]))));
    let cube: Vec<i16> = (0..30_000).map(|i| (i % 3001) as i16 - 1500).collect();
    v.push(("cube".into(), num(arr(cube, &[30, 40, 25]))));
    v
}

fn options() -> WriteOptions {
    WriteOptions {
        chunk_bytes: 4096,
        compress_threshold: 4096,
        ..WriteOptions::default()
    }
    .python_metadata(true)
}

#[test]
fn native_files_hold_what_libhdf5_files_hold() {
    let dir = tempdir();
    let native = dir.path().join("native.mat");
    let lib = dir.path().join("libhdf5.mat");
    let vals = big_values();
    sciio_mat::write_mat(&native, &vals, &options()).unwrap();
    sciio_mat::write_mat(&lib, &vals, &options().libhdf5(true)).unwrap();
    let out = run_python_script(
        "python/h5_same_objects.py",
        &[native.to_str().unwrap(), lib.to_str().unwrap()],
    );
    assert!(out.starts_with("ok"), "{out}");
    // The MAT header is the same (apart from the creation time) and sciio reads it back.
    let head = |p: &std::path::Path| std::fs::read(p).unwrap()[..512].to_vec();
    assert_eq!(head(&native)[..20], head(&lib)[..20]);
    assert_eq!(head(&native)[116..512], head(&lib)[116..512]);
    let mat = MatFile::open(&native).unwrap();
    for (n, v) in &vals {
        assert_eq!(&mat.read(n).unwrap(), v, "{n}");
    }
}

#[test]
fn chunk_and_group_trees_have_several_levels() {
    let dir = tempdir();
    let file = dir.path().join("trees.mat");
    sciio_mat::write_mat(&file, &big_values(), &options()).unwrap();
    // Walk the B-trees as libhdf5 stores them (h5py's low-level chunk and link iteration).
    let out = run_python(
        "import sys, h5py; f = h5py.File(sys.argv[1], 'r'); d = f['chunked']; \
         n = d.id.get_num_chunks(); offs = sorted(d.id.get_chunk_info(i).chunk_offset for i in range(n)); \
         print(n, offs[0], offs[-1], len(f['#refs#']), len(f['wide_struct']))",
        &[file.to_str().unwrap()],
    );
    // MATLAB [400 100] is HDF5 (100, 400): rows of 3200 bytes, one per 4 KiB chunk.
    let fields: Vec<usize> = out
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(fields[0], 100, "{out}");
    assert_eq!(fields.last(), Some(&700), "{out}");
    assert!(fields[fields.len() - 2] > 3000, "{out}");
}

#[test]
fn the_native_writer_adds_to_and_replaces_in_a_file_it_rewrites() {
    let dir = tempdir();
    let file = dir.path().join("grow.mat");
    let vals = big_values();
    sciio_mat::write_mat(&file, &vals, &options()).unwrap();
    let mut w = MatWriter::open(&file, options()).unwrap();
    let more = MatValue::Cell(CellArray::row(
        (0..500)
            .map(|i| MatValue::from(format!("s{i}").as_str()))
            .collect(),
    ));
    w.write("big_cell", &more).unwrap();
    w.write("added", &MatValue::from(7.0)).unwrap();
    w.finish().unwrap();
    let mat = MatFile::open(&file).unwrap();
    for (n, v) in &vals {
        let want = if n == "big_cell" { &more } else { v };
        assert_eq!(&mat.read(n).unwrap(), want, "{n}");
    }
    assert_eq!(mat.read("added").unwrap(), MatValue::from(7.0));
    // (hdf5storage cannot read sparse matrices, so only these.)
    let out = run_python(
        "import sys, hdf5storage, numpy as np; d = hdf5storage.loadmat(sys.argv[1], \
         variable_names=['big_cell', 'added', 'wide_struct']); \
         c = d['big_cell']; print(c.size, str(np.squeeze(c.ravel()[499])), float(np.squeeze(d['added'])), \
         float(np.squeeze(d['wide_struct']['field_0699'])))",
        &[file.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "500 s499 7.0 699.0", "{out}");
    // The rewrite copies only what is still referenced: the replaced cell's 3000 items are
    // gone from `/#refs#` (500 strings, the struct's, the canonical empty remain).
    let out = run_python(
        "import sys, h5py; print(len(h5py.File(sys.argv[1], 'r')['#refs#']))",
        &[file.to_str().unwrap()],
    );
    let refs: usize = out.trim().parse().unwrap();
    assert!((501..1000).contains(&refs), "{out}");
}
