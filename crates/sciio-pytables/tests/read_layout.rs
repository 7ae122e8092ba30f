//! `PtFile` reads data in PyTables' `read()` layout (native byte order, compounds in offset
//! order) and, with `with_file_layout`, in the file's own layout (what h5py's raw bytes are).

use sciio_hdf5::{native_order, ByteOrder, H5Type};
use sciio_pytables::{PtFile, Rows};
use sciio_testkit::{run_python, tempdir};

#[test]
fn big_endian_reads_native_by_default_and_as_stored_with_file_layout() {
    let dir = tempdir();
    let path = dir.path().join("be.h5");
    run_python(
        r#"
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], "w") as f:
    f["x"] = np.array([1, 256, -2], dtype=">i4")
    f["t"] = np.array([(1, 0.5)], dtype=[("a", ">i2"), ("b", ">f8")])
"#,
        &[path.to_str().unwrap()],
    );
    let file = PtFile::open(&path).unwrap();
    let x = file.read_array("/x", Rows::all()).unwrap();
    assert!(matches!(x.ty, H5Type::Int { order, .. } if order == native_order()));
    let values: Vec<i32> = x
        .bytes
        .chunks_exact(4)
        .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(values, [1, 256, -2]);
    let t = file.read_table("/t", Rows::all()).unwrap();
    let mut want = 1i16.to_ne_bytes().to_vec();
    want.extend(0.5f64.to_ne_bytes());
    assert_eq!(t.bytes, want);

    let raw = PtFile::open(&path).unwrap().with_file_layout();
    assert!(raw.reads_file_layout());
    let x = raw.read_array("/x", Rows::all()).unwrap();
    assert!(matches!(
        x.ty,
        H5Type::Int {
            order: ByteOrder::Big,
            ..
        }
    ));
    assert_eq!(x.bytes, [0, 0, 0, 1, 0, 0, 1, 0, 255, 255, 255, 254]);
    let t = raw.read_table("/t", Rows::all()).unwrap();
    let mut want = 1i16.to_be_bytes().to_vec();
    want.extend(0.5f64.to_be_bytes());
    assert_eq!(t.bytes, want);
}
