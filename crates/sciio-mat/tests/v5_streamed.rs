//! `MatFile::copy_plain_data` of Level-5 (v7 and v5) variables stored complex or big-endian: the
//! real and imaginary parts interleaved as numpy holds complex numbers, big-endian numbers
//! reversed as they pass — the bytes of `scipy.io.loadmat`'s array in Fortran order and the
//! machine's byte order. Sources: `scipy.io.savemat` (little-endian) and its big-endian copy
//! (`python/mat5_big_endian.py`).

use sciio_core::{DType, ScalarKind};
use sciio_mat::{MatFile, MatValue};
use sciio_testkit::{run_python, run_python_script, tempdir};

/// Variables compressed to over 1 MiB (random numbers), written by scipy.io (argv[1]: the
/// folder) as `le.mat` (v7) and `le5.mat` (v5, uncompressed); each variable's expected bytes
/// in `<name>.bin`.
const SOURCES: &str = r#"
import sys, numpy as np, scipy.io
d = sys.argv[1]
r = np.random.default_rng(3)
v = {"z": r.random((600, 400)) - 1j * r.random((600, 400)),
     "zs": (r.random((700, 501)) + 1j * r.random((700, 501))).astype(np.complex64),
     "x": r.random((500, 400)),
     "w": r.integers(-30000, 30000, (1001, 700)).astype(np.int16)}
scipy.io.savemat(d + "/le.mat", v, do_compression=True)
scipy.io.savemat(d + "/le5.mat", v)
for k, a in scipy.io.loadmat(d + "/le.mat").items():
    if not k.startswith("__"):
        open(f"{d}/{k}.bin", "wb").write(a.astype(a.dtype.newbyteorder("=")).tobytes(order="F"))
"#;

#[test]
fn complex_and_big_endian_v5_and_v7_variables_stream_as_scipy_reads_them() {
    let dir = tempdir();
    let d = dir.path();
    run_python(SOURCES, &[d.to_str().unwrap()]);
    let (le, be) = (d.join("le.mat"), d.join("be.mat"));
    let (le5, be5) = (d.join("le5.mat"), d.join("be5.mat"));
    for (src, dst) in [(&le, &be), (&le5, &be5)] {
        run_python_script(
            "python/mat5_big_endian.py",
            &[src.to_str().unwrap(), dst.to_str().unwrap()],
        );
    }
    let vars = [
        ("z", ScalarKind::Complex(16), [600, 400]),
        ("zs", ScalarKind::Complex(8), [700, 501]),
        ("x", ScalarKind::Float(8), [500, 400]),
        ("w", ScalarKind::Int(2), [1001, 700]),
    ];
    for path in [&le, &be, &le5, &be5] {
        let file = MatFile::open(path).unwrap();
        for (name, kind, dims) in vars {
            let dtype = DType::scalar(kind);
            let mut out = Vec::new();
            let mut last = 0;
            assert!(file.check_plain_data(name, &dtype, &dims).unwrap());
            let streamed = file
                .copy_plain_data(name, &dtype, &dims, &mut out, &mut |n| last = n)
                .unwrap();
            assert!(streamed, "{path:?} {name}: not streamed");
            let want = std::fs::read(d.join(format!("{name}.bin"))).unwrap();
            assert!(out == want, "{path:?} {name}: not scipy's bytes");
            assert_eq!(last, want.len() as u64, "{path:?} {name}");
        }
    }
    // A stream damaged inside the imaginary part: an error naming the variable.
    let mut bytes = std::fs::read(&le).unwrap();
    let file = MatFile::open(&le).unwrap();
    let (z, dims) = (DType::scalar(ScalarKind::Complex(16)), [600, 400]);
    assert!(file.check_plain_data("z", &z, &dims).unwrap());
    // `z` is the first variable: its element starts at byte 128; damage its last quarter.
    let size = u32::from_le_bytes(bytes[132..136].try_into().unwrap()) as usize;
    let at = 136 + size * 3 / 4;
    bytes[at..at + 32].fill(0);
    let cut = d.join("cut.mat");
    std::fs::write(&cut, &bytes).unwrap();
    let file = MatFile::open(&cut).unwrap();
    let e = file
        .copy_plain_data("z", &z, &dims, &mut std::io::sink(), &mut |_| {})
        .unwrap_err();
    assert!(e.to_string().contains("/z"), "{e}");
}

/// Each logical variable of argv[2] (a file of `python/mat5_logical.py`) as numpy booleans in
/// Fortran order, as scipy.io reads it (as uint8: MATLAB's true is any nonzero byte), in
/// argv[1]/<name>.bin.
const LOGICAL_BYTES: &str = r#"
import sys, numpy as np, scipy.io
for k, a in scipy.io.loadmat(sys.argv[2]).items():
    if not k.startswith("__"):
        open(f"{sys.argv[1]}/{k}.bin", "wb").write((a != 0).tobytes(order="F"))
"#;

#[test]
fn logical_v5_and_v7_variables_stream_as_numpy_booleans() {
    let dir = tempdir();
    let d = dir.path();
    run_python_script("python/mat5_logical.py", &[d.to_str().unwrap()]);
    run_python(
        LOGICAL_BYTES,
        &[d.to_str().unwrap(), d.join("l5.mat").to_str().unwrap()],
    );
    let bool_ = DType::scalar(ScalarKind::Bool);
    for v in ["l5", "b5", "l7", "b7"] {
        let path = d.join(format!("{v}.mat"));
        let file = MatFile::open(&path).unwrap();
        for (name, dims) in [("mask", [4000, 4500]), ("odd", [4200, 4100])] {
            let want = std::fs::read(d.join(format!("{name}.bin"))).unwrap();
            assert!(
                file.check_plain_data(name, &bool_, &dims).unwrap(),
                "{v} {name}"
            );
            let (mut out, mut last) = (Vec::new(), 0);
            let streamed = file
                .copy_plain_data(name, &bool_, &dims, &mut out, &mut |n| last = n)
                .unwrap();
            assert!(streamed, "{v} {name}: not streamed");
            assert!(out == want, "{v} {name}: not scipy's values as booleans");
            assert_eq!(last, want.len() as u64, "{v} {name}");
            // The whole read (a v7 one inflated straight into the array) holds the same.
            let MatValue::Logical(a) = file.read(name).unwrap() else {
                panic!("{v} {name}: not read as a logical");
            };
            assert!(a.as_bytes() == want, "{v} {name}: whole read");
            // Not streamed as anything else (its bytes as uint8, say).
            let u8_ = DType::scalar(ScalarKind::UInt(1));
            assert!(
                !file.check_plain_data(name, &u8_, &dims).unwrap(),
                "{v} {name}"
            );
        }
        // A logical of class double (data miDOUBLE): not streamed, read whole as booleans.
        let (want, dims) = (std::fs::read(d.join("wide.bin")).unwrap(), [500, 400]);
        assert!(
            !file.check_plain_data("wide", &bool_, &dims).unwrap(),
            "{v}"
        );
        let mut out = Vec::new();
        let streamed = file
            .copy_plain_data("wide", &bool_, &dims, &mut out, &mut |_| {})
            .unwrap();
        assert!(!streamed && out.is_empty(), "{v} wide: streamed");
        let MatValue::Logical(a) = file.read("wide").unwrap() else {
            panic!("{v} wide: not read as a logical");
        };
        assert!(a.as_bytes() == want, "{v} wide: whole read");
    }
}
