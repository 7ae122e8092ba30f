//! MAT v4 files (`scipy.io.savemat(format='4')` and their big-endian copies,
//! `python/mat4_big_endian.py`) read on demand: every matrix, of each precision scipy writes,
//! real and complex, read as `scipy.io.loadmat` reads it (same dtype, same numbers); large
//! numeric ones (over 1 MiB) streamed by `MatFile::copy_plain_data` as the bytes of scipy's
//! array in Fortran order and the machine's byte order (a complex one's real and imaginary
//! parts interleaved as numpy holds them); a file cut inside a matrix's data is an error at
//! open naming the matrix and the offset.

use sciio_core::{DType, ScalarKind};
use sciio_mat::{MatFile, MatValue};
use sciio_testkit::{run_python, run_python_script, tempdir};

/// A v4 file `le.mat` in argv[1] (scipy.io, format 4); each variable's expected bytes (scipy's
/// array in Fortran order, native byte order) in `<name>.bin` and its dtype in `<name>.dtype`.
const SOURCES: &str = r#"
import sys, numpy as np, scipy.io
d = sys.argv[1]
r = np.random.default_rng(5)
v = {
    "d": r.random((3, 5)),
    "f": r.random((4, 3)).astype(np.float32),
    "i": r.integers(-2**31, 2**31, (3, 4)).astype(np.int32),
    "h": r.integers(-30000, 30000, (5, 2)).astype(np.int16),
    "H": r.integers(0, 65536, (2, 7)).astype(np.uint16),
    "B": r.integers(0, 256, (3, 3)).astype(np.uint8),
    "c": r.random((3, 4)) - 1j * r.random((3, 4)),
    "cf": (r.random((2, 5)) + 1j * r.random((2, 5))).astype(np.complex64),
    # Large: streamed.
    "x": r.random((600, 400)),
    "z": r.random((500, 300)) - 1j * r.random((500, 300)),
    "zs": (r.random((700, 501)) + 1j * r.random((700, 501))).astype(np.complex64),
    "w": r.integers(-30000, 30000, (1001, 700)).astype(np.int16),
    "u": r.integers(0, 256, (1500, 900)).astype(np.uint8),
}
scipy.io.savemat(d + "/le.mat", v, format="4")
for k, a in scipy.io.loadmat(d + "/le.mat").items():
    if not k.startswith("__"):
        open(f"{d}/{k}.bin", "wb").write(a.astype(a.dtype.newbyteorder("=")).tobytes(order="F"))
        open(f"{d}/{k}.dtype", "w").write(a.dtype.newbyteorder("=").str)
"#;

/// The kind of numpy's dtype string (`<f8`...).
fn kind_of(numpy: &str) -> ScalarKind {
    DType::from_typestr(numpy)
        .unwrap()
        .as_scalar()
        .unwrap()
        .kind
}

#[test]
fn v4_matrices_read_and_stream_as_scipy_reads_them() {
    let dir = tempdir();
    let d = dir.path();
    run_python(SOURCES, &[d.to_str().unwrap()]);
    let (le, be) = (d.join("le.mat"), d.join("be.mat"));
    run_python_script(
        "python/mat4_big_endian.py",
        &[le.to_str().unwrap(), be.to_str().unwrap()],
    );
    let large = ["x", "z", "zs", "w", "u"];
    for path in [&le, &be] {
        let file = MatFile::open(path).unwrap();
        assert_eq!(file.version().name(), "4");
        for name in file.names().unwrap() {
            let want = std::fs::read(d.join(format!("{name}.bin"))).unwrap();
            let numpy = std::fs::read_to_string(d.join(format!("{name}.dtype"))).unwrap();
            let dtype = DType::scalar(kind_of(&numpy));
            let info = file.info(&name).unwrap();
            let dims = info.shape.clone();
            // Read whole: the array scipy reads.
            let MatValue::Numeric(a) = file.read(&name).unwrap() else {
                panic!("{path:?} {name}: not numeric");
            };
            assert_eq!(a.dtype(), &dtype, "{path:?} {name}");
            assert_eq!(a.shape(), dims.as_slice(), "{path:?} {name}");
            assert!(a.as_bytes() == want, "{path:?} {name}: not scipy's numbers");
            // Streamed: the same bytes, a piece at a time.
            let streams = file.check_plain_data(&name, &dtype, &dims).unwrap();
            assert_eq!(streams, large.contains(&name.as_str()), "{path:?} {name}");
            let mut out = Vec::new();
            let mut last = 0;
            let streamed = file
                .copy_plain_data(&name, &dtype, &dims, &mut out, &mut |n| last = n)
                .unwrap();
            assert_eq!(streamed, streams, "{path:?} {name}");
            if streamed {
                assert!(out == want, "{path:?} {name}: streamed bytes not scipy's");
                assert_eq!(last, want.len() as u64, "{path:?} {name}");
            }
            // Asked as another dtype: not streamed.
            let other = DType::scalar(match kind_of(&numpy) {
                ScalarKind::Float(8) => ScalarKind::Float(4),
                _ => ScalarKind::Float(8),
            });
            assert!(!file.check_plain_data(&name, &other, &dims).unwrap());
        }
    }
    // Cut inside `w`'s data: an error at open, naming it, at the offset where its data is.
    let bytes = std::fs::read(&le).unwrap();
    let cut = d.join("cut.mat");
    let file = MatFile::open(&le).unwrap();
    let names = file.names().unwrap();
    assert!(names.contains(&"w".to_string()));
    let w_len = 1001 * 700 * 2;
    let w_head = bytes
        .windows(22)
        .position(|h| h[12..20] == [0, 0, 0, 0, 2, 0, 0, 0] && &h[20..22] == b"w\0")
        .unwrap();
    std::fs::write(&cut, &bytes[..w_head + 22 + w_len - 1]).unwrap();
    let e = MatFile::open(&cut).unwrap_err().to_string();
    assert!(
        e.contains("/w") && e.contains(&format!("byte {}", w_head + 22)) && e.contains("cut.mat"),
        "{e}"
    );
}
