//! EArrays growing along a dimension other than 0 (`EXTDIM` ≠ 0): sciio writes the cases of
//! `check_pytables_write.py extdim-gen` from the same blocks PyTables appended to its twin, and
//! the script compares both files with PyTables and h5py; sciio appends along `EXTDIM` to
//! EArrays PyTables made, and PyTables reads every slice back.

use std::path::Path;

use sciio_hdf5::{ByteOrder, H5Type};
use sciio_pytables::write::{Filters, PtWriter};

/// libhdf5 locks files and child processes inherit descriptors: one test at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn atom(dtype: &str) -> H5Type {
    let order = ByteOrder::Little;
    match dtype {
        "f4" => H5Type::Float {
            size: 4,
            precision: 32,
            order,
        },
        "f8" => H5Type::Float {
            size: 8,
            precision: 64,
            order,
        },
        "i2" | "i4" | "i8" => H5Type::Int {
            size: dtype[1..].parse().unwrap(),
            signed: true,
            order,
        },
        "u1" => H5Type::Int {
            size: 1,
            signed: false,
            order,
        },
        other => panic!("no test atom for {other}"),
    }
}

fn numbers(s: &str) -> Vec<u64> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().unwrap())
        .collect()
}

fn block(dir: &Path, name: &str, i: usize) -> Vec<u8> {
    std::fs::read(dir.join(format!("{name}.{i}.bin"))).unwrap()
}

#[test]
fn pytables_reads_earrays_sciio_grew_along_a_dimension_other_than_0() {
    let _serial = serial();
    let dir = sciio_testkit::tempdir();
    let d = dir.path().to_str().unwrap();
    let cases =
        sciio_testkit::run_python_script("python/check_pytables_write.py", &["extdim-gen", d]);
    let file = PtWriter::create(dir.path().join("sciio.h5")).unwrap();
    let root = file.root().unwrap();
    let mut n = 0;
    for line in cases.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (name, dtype, shape, spec, chunk, blocks) = (f[0], f[1], f[2], f[3], f[4], f[5]);
        let mut b = root
            .create_earray_shaped(name, atom(dtype), numbers(shape))
            .unwrap()
            .filters(Filters::parse(spec).unwrap());
        if !chunk.is_empty() {
            b = b.chunk_shape(numbers(chunk));
        }
        let mut e = b.create().unwrap();
        let lengths = numbers(blocks);
        for i in 0..lengths.len() {
            e.append(&block(dir.path(), name, i)).unwrap();
        }
        assert_eq!(e.nrows(), lengths.iter().sum::<u64>());
        n += 1;
    }
    assert_eq!(n, 5);
    file.finish().unwrap();
    let out =
        sciio_testkit::run_python_script("python/check_pytables_write.py", &["extdim-check", d]);
    assert_eq!(out.trim(), "OK");
}

#[test]
fn repacking_keeps_earrays_growing_along_their_extdim() {
    let _serial = serial();
    let dir = sciio_testkit::tempdir();
    let d = dir.path().to_str().unwrap();
    sciio_testkit::run_python_script("python/check_pytables_write.py", &["extdim-gen", d]);
    sciio_pytables::write::repack(
        dir.path().join("ref.h5"),
        dir.path().join("repacked.h5"),
        None,
    )
    .unwrap();
    let out = sciio_testkit::run_python_script(
        "python/check_pytables_write.py",
        &["extdim-check-repacked", d],
    );
    assert_eq!(out.trim(), "OK");
}

#[test]
fn sciio_appends_along_extdim_to_earrays_pytables_made() {
    let _serial = serial();
    let dir = sciio_testkit::tempdir();
    let d = dir.path().to_str().unwrap();
    let cases = sciio_testkit::run_python_script(
        "python/check_pytables_write.py",
        &["append-extdim-gen", d],
    );
    let file = PtWriter::open_append(dir.path().join("append.h5")).unwrap();
    let mut n = 0;
    for line in cases.lines() {
        let (name, blocks) = line.split_once('\t').unwrap();
        let mut e = file.earray(&format!("/{name}")).unwrap();
        let before = e.nrows();
        let lengths = numbers(blocks);
        for i in 0..lengths.len() {
            e.append(&block(dir.path(), name, i)).unwrap();
        }
        assert_eq!(e.nrows(), before + lengths.iter().sum::<u64>());
        n += 1;
    }
    assert_eq!(n, 3);
    file.finish().unwrap();
    let out = sciio_testkit::run_python_script(
        "python/check_pytables_write.py",
        &["append-extdim-check", d],
    );
    assert_eq!(out.trim(), "OK");
}

#[test]
fn a_block_that_does_not_fit_the_other_dimensions_is_refused() {
    let _serial = serial();
    let dir = sciio_testkit::tempdir();
    let file = PtWriter::create(dir.path().join("bad.h5")).unwrap();
    let root = file.root().unwrap();
    let mut e = root
        .create_earray_shaped("e", atom("f4"), vec![3, 0, 4])
        .unwrap()
        .create()
        .unwrap();
    // 3 × 4 floats make one slice along dimension 1; 20 bytes are not a whole number of them.
    let err = e.append(&[0u8; 20]).unwrap_err();
    assert!(err.to_string().contains("whole number"), "{err}");
    assert_eq!(e.nrows(), 0);
    let err = root
        .create_earray_shaped("two", atom("f4"), vec![0, 0])
        .unwrap_err();
    assert!(err.to_string().contains("exactly one 0"), "{err}");
}
