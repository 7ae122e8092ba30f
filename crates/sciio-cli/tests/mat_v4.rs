//! `sciio convert` of MAT v4 files (`scipy.io.savemat(format='4')`, each precision it writes,
//! real and complex, and a big-endian copy made by `python/mat4_big_endian.py`), read on
//! demand: each matrix into `.npy` is the file `np.save` writes of `scipy.io.loadmat`'s array
//! in MATLAB's column-major order; the whole file into `.h5` holds the arrays h5py reads as
//! scipy's; into MAT v7.3 (hdf5storage) and v7 (scipy.io) the same values, of the same
//! classes. The large matrices (over 16 MiB) take the streamed paths (a piece at a time).
#![cfg(feature = "mat")]

mod common;
use common::{ok, s};

use sciio_testkit::{run_python, run_python_script, tempdir};

/// `le.mat` in argv[1]: small matrices of each precision and large ones (streamed).
const SOURCE: &str = r#"
import sys, numpy as np, scipy.io
r = np.random.default_rng(6)
v = {
    "d": r.random((3, 5)),
    "f": r.random((4, 3)).astype(np.float32),
    "i": r.integers(-2**31, 2**31, (3, 4)).astype(np.int32),
    "h": r.integers(-30000, 30000, (5, 2)).astype(np.int16),
    "H": r.integers(0, 65536, (2, 7)).astype(np.uint16),
    "B": r.integers(0, 256, (3, 3)).astype(np.uint8),
    "c": r.random((3, 4)) - 1j * r.random((3, 4)),
    "cf": (r.random((2, 5)) + 1j * r.random((2, 5))).astype(np.complex64),
    "row": np.arange(5.0)[None, :],
    "x": r.random((1500, 1500)),
    "z": r.random((1100, 1000)) - 1j * r.random((1100, 1000)),
    "w": r.integers(-30000, 30000, (3000, 3000)).astype(np.int16),
}
scipy.io.savemat(sys.argv[1] + "/le.mat", v, format="4")
"#;

/// argv[1]: the v4 source, argv[2]: the folder of `<name>.npy`: each the file np.save writes
/// of scipy's array in MATLAB's column-major order (scipy's v4 reader copies real matrices
/// into C order, complex ones stay column-major; the numbers are the same).
const SAME_NPY: &str = r#"
import io, sys, numpy as np, scipy.io
m = scipy.io.loadmat(sys.argv[1])
names = [k for k in m if not k.startswith("__")]
for k in names:
    want = io.BytesIO()
    np.save(want, np.asfortranarray(m[k]).astype(m[k].dtype.newbyteorder("=")))
    got = open(f"{sys.argv[2]}/{k}.npy", "rb").read()
    assert got == want.getvalue(), (k, got[:128], want.getvalue()[:128])
print(len(names))
"#;

/// argv[1]: the v4 source, argv[2]: its `.h5` copy, argv[3]: its v7.3 copy, argv[4]: its v7
/// copy: the arrays h5py, hdf5storage and scipy.io read are scipy's, of the same dtype (in
/// the machine's byte order).
const SAME_COPIES: &str = r#"
import sys, numpy as np, scipy.io, h5py, hdf5storage
# A big-endian source's arrays are big-endian: the copies hold them in the machine's order.
native = lambda a: a.astype(a.dtype.newbyteorder("="))
want = {k: native(a) for k, a in scipy.io.loadmat(sys.argv[1]).items() if not k.startswith("__")}
def same(got, where):
    assert sorted(got) == sorted(want), (where, sorted(got))
    for k, w in want.items():
        g = got[k]
        assert g.dtype == w.dtype and g.shape == w.shape, (where, k, g.dtype, w.dtype, g.shape)
        assert np.array_equal(g, w), (where, k)
with h5py.File(sys.argv[2], "r") as f:
    same({k: f[k][()] for k in f}, "h5")
h = hdf5storage.loadmat(sys.argv[3])
same({k: a for k, a in h.items() if not k.startswith("__")}, "v7.3")
m = scipy.io.loadmat(sys.argv[4])
same({k: a for k, a in m.items() if not k.startswith("__")}, "v7")
print("ok")
"#;

#[test]
fn v4_matrices_convert_as_scipy_reads_them() {
    let dir = tempdir();
    let d = dir.path();
    run_python(SOURCE, &[s(d)]);
    let (le, be) = (d.join("le.mat"), d.join("be.mat"));
    run_python_script("python/mat4_big_endian.py", &[s(&le), s(&be)]);
    for src in [&le, &be] {
        let npy = d.join("npy");
        std::fs::create_dir_all(&npy).unwrap();
        let names = [
            "d", "f", "i", "h", "H", "B", "c", "cf", "row", "x", "z", "w",
        ];
        for name in names {
            let out = npy.join(format!("{name}.npy"));
            ok(&["convert", &format!("{}:{name}", s(src)), s(&out)]);
        }
        let checked = run_python(SAME_NPY, &[s(src), s(&npy)]);
        assert_eq!(checked.trim(), names.len().to_string(), "{src:?}");
        let (h5, v73, v7) = (d.join("all.h5"), d.join("v73.mat"), d.join("v7.mat"));
        ok(&["convert", s(src), s(&h5)]);
        ok(&["convert", s(src), s(&v73), "--mat-version", "7.3"]);
        ok(&["convert", s(src), s(&v7), "--mat-version", "7"]);
        let same = run_python(SAME_COPIES, &[s(src), s(&h5), s(&v73), s(&v7)]);
        assert_eq!(same.trim(), "ok", "{src:?}");
        for f in [&h5, &v73, &v7] {
            std::fs::remove_file(f).unwrap();
        }
        std::fs::remove_dir_all(&npy).unwrap();
    }
}

/// A v4 file has no file header: two files one after the other are one file, here with `a`
/// twice (a double, then an int16 matrix of another size).
const TWICE: &str = r#"
import io, sys, numpy as np, scipy.io
parts = []
for v in ({"a": np.arange(3.0)[None, :], "b": np.eye(2)}, {"a": np.int16([[1, 2], [3, 4], [5, 6]])}):
    f = io.BytesIO()
    scipy.io.savemat(f, v, format="4")
    parts.append(f.getvalue())
open(sys.argv[1], "wb").write(b"".join(parts))
"#;

#[test]
fn the_last_v4_matrix_of_a_name_wins_as_scipy_reads_it() {
    let dir = tempdir();
    let (mat, npz) = (dir.path().join("twice.mat"), dir.path().join("out.npz"));
    run_python(TWICE, &[s(&mat)]);
    ok(&["convert", s(&mat), s(&npz)]);
    let check = r#"
import sys, numpy as np, scipy.io
m = scipy.io.loadmat(sys.argv[1])
z = np.load(sys.argv[2])
assert sorted(z.files) == ["a", "b"], z.files
for k in z.files:
    assert z[k].dtype == m[k].dtype and np.array_equal(z[k], m[k]), (k, z[k], m[k])
assert m["a"].dtype == np.int16
print("ok")
"#;
    assert_eq!(run_python(check, &[s(&mat), s(&npz)]).trim(), "ok");
}
