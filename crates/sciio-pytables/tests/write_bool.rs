//! Bool columns and arrays: sciio stores them with the HDF5 type PyTables 3.11 writes.
//!
//! The format spec (`pytables-file-format.rst`) describes bools as a 1-bit bitfield, but
//! PyTables 3.11 writes an 8-bit bitfield of precision 8 (`H5Tcopy(H5T_NATIVE_B8)`), and a file
//! PyTables opens "as its own" must match what PyTables does, not what the spec says. The
//! script compares the type h5py reports (class, size, precision, offset, order) and the values
//! with a PyTables-written twin, and fails if PyTables ever changes it.

use sciio_hdf5::{ByteOrder, Field, H5Type, RawData};
use sciio_pytables::write::PtWriter;

/// The bool type PyTables 3.11 writes (see the module comment for why not precision 1).
fn pytables_bool() -> H5Type {
    H5Type::Bitfield {
        size: 1,
        precision: 8,
        order: ByteOrder::Little,
    }
}

#[test]
fn bools_have_the_hdf5_type_pytables_writes() {
    let dir = sciio_testkit::tempdir();
    let d = dir.path().to_str().unwrap();
    sciio_testkit::run_python_script("python/check_pytables_write.py", &["bool-gen", d]);
    let file = PtWriter::create(dir.path().join("bool_sciio.h5")).unwrap();
    let root = file.root().unwrap();
    let i2 = H5Type::Int {
        size: 2,
        signed: true,
        order: ByteOrder::Little,
    };
    let row = H5Type::Compound {
        size: 3,
        fields: vec![
            Field {
                name: "flag".into(),
                offset: 0,
                ty: pytables_bool(),
            },
            Field {
                name: "x".into(),
                offset: 1,
                ty: i2,
            },
        ],
    };
    let mut t = root.create_table("t", row).create().unwrap();
    let rows: Vec<u8> = (0..10i16)
        .flat_map(|i| {
            let mut r = vec![u8::from(i % 3 == 0)];
            r.extend(i.to_le_bytes());
            r
        })
        .collect();
    t.append(&rows).unwrap();
    let a = RawData {
        ty: pytables_bool(),
        shape: vec![3],
        bytes: vec![1, 0, 1],
    };
    root.create_array("a", &a, "").unwrap();
    file.finish().unwrap();
    let out =
        sciio_testkit::run_python_script("python/check_pytables_write.py", &["bool-check", d]);
    assert_eq!(out.trim(), "OK");
}
