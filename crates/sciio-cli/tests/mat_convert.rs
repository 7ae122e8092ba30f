//! `sciio convert` into MAT files (the `mat` feature): a MAT file's MATLAB values copied with
//! their classes (whole file or one value by path), npz members in folders written as nested
//! structs, and a `.npy` array under a chosen name — checked with hdf5storage, mat73 and h5py.
#![cfg(feature = "mat")]

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, tempdir};
/// A MAT file with what numpy leaves cannot carry: nested structs, cells of cells, empties,
/// logical and complex values (written by hdf5storage as MATLAB would see them).
const MAKE_RICH_MAT: &str = r#"
import sys, numpy as np, hdf5storage
cc = np.empty((1, 2), dtype=object)
inner = np.empty((1, 1), dtype=object)
inner[0, 0] = np.arange(4.0).reshape(2, 2)
cc[0, 0] = inner
cc[0, 1] = np.str_("deep")
d = {
    "s": {"a": np.float32([[1.5, 2.5]]), "t": {"u": np.int8([[7]]), "v": np.str_("in")}},
    "cc": cc,
    "e": np.zeros((0, 3)),
    "flag": np.array([[True, False]]),
    "z": np.array([[1 + 2j, 3j]]),
}
hdf5storage.savemat(sys.argv[1], d, format="7.3", store_python_metadata=False,
                    matlab_compatible=True)
"#;

/// Every variable of `src` equals the one in `dst` as hdf5storage and mat73 load them, and
/// carries the same MATLAB_class.
const SAME_MAT: &str = r#"
import sys, numpy as np, hdf5storage, mat73, h5py
src, dst = sys.argv[1], sys.argv[2]
names = sys.argv[3].split(",")
def same(a, b, where):
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), (where, a, b)
        for k in a:
            same(a[k], b[k], where + "." + k)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), (where, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert b.dtype == object and a.shape == b.shape, (where, a, b)
        for i, (x, y) in enumerate(zip(a.flat, b.flat)):
            same(x, y, f"{where}{{{i}}}")
    elif isinstance(a, np.ndarray) and a.dtype.names:
        assert b.dtype.names == a.dtype.names and a.shape == b.shape, (where, a.dtype, b.dtype)
        for n in a.dtype.names:
            same(a[n], b[n], where + "." + n)
    elif hasattr(a, "toarray"):
        assert (a != b).nnz == 0, where
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, (where, a.dtype, b.dtype, a.shape, b.shape)
        assert np.array_equal(a, b), (where, a, b)
h_src, h_dst = hdf5storage.loadmat(src), hdf5storage.loadmat(dst)
m_src, m_dst = mat73.loadmat(src), mat73.loadmat(dst)
assert sorted(h_dst) == sorted(names) and sorted(m_dst) == sorted(names), (sorted(h_dst), sorted(m_dst))
for n in names:
    same(h_src[n], h_dst[n], "hdf5storage:" + n)
    same(m_src[n], m_dst[n], "mat73:" + n)
with h5py.File(src, "r") as a, h5py.File(dst, "r") as b:
    for n in names:
        assert a[n].attrs["MATLAB_class"] == b[n].attrs["MATLAB_class"], n
print("ok")
"#;

#[test]
fn mat_into_mat_keeps_matlab_values_and_classes() {
    let dir = tempdir();
    let src = dir.path().join("rich.mat");
    run_python(MAKE_RICH_MAT, &[s(&src)]);
    // Whole file: every variable, values and classes as they were.
    let out = dir.path().join("copy.mat");
    ok(&["convert", s(&src), s(&out)]);
    let checked = run_python(SAME_MAT, &[s(&src), s(&out), "cc,e,flag,s,z"]);
    assert_eq!(checked.trim(), "ok");

    // One value by its path: a nested struct and a cell, renamed with DST:NODE.
    let one = dir.path().join("one.mat");
    ok(&["convert", &format!("{}:s/t", s(&src)), s(&one)]);
    let cells = dir.path().join("cells.mat");
    ok(&[
        "convert",
        &format!("{}:cc", s(&src)),
        &format!("{}:cells", s(&cells)),
    ]);
    let check = r#"
import sys, numpy as np, mat73
d, c = mat73.loadmat(sys.argv[1]), mat73.loadmat(sys.argv[2])
assert sorted(d) == ["t"] and sorted(c) == ["cells"], (sorted(d), sorted(c))
assert d["t"]["u"] == 7 and d["t"]["v"] == "in", d["t"]
cells = c["cells"]
assert np.array_equal(cells[0][0], np.arange(4.0).reshape(2, 2)) and cells[1] == "deep", cells
print("ok")
"#;
    assert_eq!(run_python(check, &[s(&one), s(&cells)]).trim(), "ok");
}

#[test]
fn npz_folders_become_structs_and_npy_takes_a_name() {
    let dir = tempdir();
    let npz = dir.path().join("tree.npz");
    let npy = dir.path().join("w.npy");
    run_python(
        r#"
import sys, numpy as np
np.savez(sys.argv[1], **{"top": np.arange(3.0), "a/b": np.int32([[1, 2]]),
                        "a/c/d": np.str_("leaf"), "a/c/e": np.eye(2)})
np.save(sys.argv[2], np.arange(6.0).reshape(2, 3))
"#,
        &[s(&npz), s(&npy)],
    );
    let out = dir.path().join("tree.mat");
    ok(&["convert", s(&npz), s(&out)]);
    let named = dir.path().join("named.mat");
    ok(&["convert", s(&npy), &format!("{}:grp/w", s(&named))]);
    let check = r#"
import sys, numpy as np, hdf5storage, mat73, h5py
out, named = sys.argv[1], sys.argv[2]
m = mat73.loadmat(out)
assert sorted(m) == ["a", "top"], sorted(m)
assert np.array_equal(m["a"]["b"], [1, 2]) and m["a"]["c"]["d"] == "leaf", m["a"]
assert np.array_equal(m["a"]["c"]["e"], np.eye(2)), m["a"]["c"]
h = hdf5storage.loadmat(out)
a = h["a"]
assert a.dtype.names == ("b", "c"), a.dtype
assert np.array_equal(a["b"][0], np.int32([[1, 2]])) and a["b"].dtype == np.int32, a
assert str(np.squeeze(a["c"][0]["d"])) == "leaf" and np.array_equal(a["c"][0]["e"][0], np.eye(2)), a
# hdf5storage restores numpy's own shape from the Python.Shape attribute sciio writes.
assert h["top"].shape == (3,) and np.array_equal(h["top"], np.arange(3.0)), h["top"]
with h5py.File(out, "r") as f:
    assert f["a"].attrs["MATLAB_class"] == b"struct" and f["a/c"].attrs["MATLAB_class"] == b"struct"
g = hdf5storage.loadmat(named)["grp"]
assert g.dtype.names == ("w",) and np.array_equal(g["w"][0], np.arange(6.0).reshape(2, 3)), g
print("ok")
"#;
    assert_eq!(run_python(check, &[s(&out), s(&named)]).trim(), "ok");

    // A name that is both an array and a folder is refused in one line, nothing written.
    let clash = dir.path().join("clash.npz");
    run_python(
        "import sys, numpy as np; np.savez(sys.argv[1], **{'a': np.zeros(2), 'a/b': np.ones(2)})",
        &[s(&clash)],
    );
    let bad = dir.path().join("clash.mat");
    let res = sciio(&["convert", s(&clash), s(&bad)]);
    assert_eq!(res.status.code(), Some(1));
    let err = String::from_utf8(res.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("both a variable and a struct"), "{err}");
    assert!(!bad.exists());
}

/// `sciio convert SRC DST args...` at a fixed time (`SOURCE_DATE_EPOCH`), so that two files
/// written from the same data are byte for byte the same.
fn convert_at_fixed_time(args: &[&str]) {
    let out = sciio_testkit::child_command(env!("CARGO_BIN_EXE_sciio"))
        .arg("convert")
        .args(args)
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .output()
        .expect("cannot run the sciio binary");
    assert!(
        out.status.success(),
        "sciio convert {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Large numeric arrays from a `.npy`, an `.npz` member or an HDF5 file go into MAT files
/// piece by piece: matrices and 3-d arrays in C order transposed into MATLAB's column-major
/// order a run of columns at a time, Fortran-order ones as stored, a matrix whose rows are
/// over 8 MiB a row at a time, a 3-d array whose rows are over 8 MiB a row at a time, each
/// row put in Fortran order through a temporary file of its own. The C-order and Fortran-order sources make the same file byte
/// for byte (two different routes; each is the whole array's file in the unit tests of
/// `mat_write.rs`), and so do HDF5 and a deflated `.npz`, in every MAT version; scipy
/// (v5/v7) and h5py (v7.3) read the arrays numpy holds.
#[test]
fn large_matrices_into_mat_stream_the_whole_arrays_file() {
    let dir = tempdir();
    let d = dir.path();
    run_python(
        r#"
import os, sys, numpy as np, h5py
d = sys.argv[1]
arrays = {
    "x": (np.arange(2100 * 1300, dtype=np.float64) * 0.5).reshape(2100, 1300),
    "t": (np.arange(600_000 * 7, dtype=np.int32) % 100_003 - 50_000).reshape(600_000, 7),
    "b": (np.arange(4500 * 4000) % 7 == 0).reshape(4500, 4000),
    "z": (np.arange(1500 * 1500, dtype=np.float32) + 1j).astype(np.complex64).reshape(1500, 1500),
    "v": np.arange(2_200_000, dtype=np.float64),
    "n": (np.arange(130 * 120 * 140, dtype=np.float64) - 7.5).reshape(130, 120, 140),
    "w": (np.arange(2 * 1_200_000, dtype=np.float64) * 0.25).reshape(2, 1_200_000),
    "r": (np.arange(2 * 1100 * 1000, dtype=np.float64) * 0.75 - 3).reshape(2, 1100, 1000),
}
np.savez(d + "/all.npz", **arrays)
os.mkdir(d + "/c")
os.mkdir(d + "/f")
for k in "xtbznwr":
    # C order and Fortran order, both streamed (by different routes).
    np.save(d + f"/c/{k}.npy", arrays[k])
    np.save(d + f"/f/{k}.npy", np.asfortranarray(arrays[k]))
# h5py stores bool as an enum, which sciio reads as int8: no `b` in the HDF5 file. The
# variables in HDF5's (name) order, the order they are written in; the .npz deflated.
del arrays["b"]
np.savez_compressed(d + "/h5.npz", **dict(sorted(arrays.items())))
with h5py.File(d + "/all.h5", "w") as f:
    for k, a in arrays.items():
        f[k] = a
"#,
        &[s(d)],
    );
    for version in ["7.3", "7", "5"] {
        let path = |name: &str| d.join(format!("{name}-{version}.mat"));
        let v = ["--mat-version", version];
        let read = |p: &std::path::Path| std::fs::read(p).unwrap();
        let convert = |src: &str, out: &std::path::Path| {
            convert_at_fixed_time(&[&[src, s(out)], &v[..]].concat());
        };
        // One array: streamed from C order and from Fortran order.
        for name in ["x", "t", "b", "z", "n", "w", "r"] {
            let (c, f) = (path(&format!("c_{name}")), path(&format!("f_{name}")));
            convert(s(&d.join(format!("c/{name}.npy"))), &c);
            convert(s(&d.join(format!("f/{name}.npy"))), &f);
            assert!(
                read(&c) == read(&f),
                "v{version}: {name} from C and Fortran order differ"
            );
        }
        // Several from HDF5 and from a deflated .npz (a 1-d array too), both streamed.
        let (h5, npz) = (path("h5"), path("npz"));
        convert(s(&d.join("all.h5")), &h5);
        convert(s(&d.join("h5.npz")), &npz);
        assert!(
            read(&h5) == read(&npz),
            "v{version}: .h5 and .npz sources differ"
        );
        let check = r#"
import sys, numpy as np, h5py, scipy.io
d, version, h5, npy_b = sys.argv[1:5]
want = np.load(d + "/all.npz")
def load(path, names):
    if version != "7.3":
        m = scipy.io.loadmat(path)
        return {k: m[k] for k in names}
    got = {}
    with h5py.File(path, "r") as f:
        for k in names:
            a = f[k][()]
            if a.dtype.names:
                a = a["real"] + 1j * a["imag"]
            got[k] = a.T
            want_class = "logical" if k == "b" else str(want[k].real.dtype).replace("float64", "double").replace("float32", "single")
            assert f[k].attrs["MATLAB_class"] == want_class.encode(), (k, f[k].attrs["MATLAB_class"])
    return got
got = load(h5, ["n", "r", "t", "v", "w", "x", "z"])
got.update(load(npy_b, ["b"]))
for k, g in got.items():
    w = want[k] if want[k].ndim >= 2 else want[k][None, :]
    assert g.shape == w.shape and np.array_equal(g.astype(w.dtype), w), (k, g.shape, w.shape)
print("ok")
"#;
        let npy_b = path("c_b");
        assert_eq!(
            run_python(check, &[s(d), version, s(&h5), s(&npy_b)]).trim(),
            "ok"
        );
    }
}

/// Large MAT matrices and 3-d arrays (v7.3 from hdf5storage's layout, v7 from scipy) go into
/// `.h5` and `.parquet` through a temporary file of their column-major bytes, a block of rows
/// at a time;
/// PyTables and pyarrow read the arrays scipy and h5py see, and smaller matrices (read whole)
/// alike.
#[test]
fn large_mat_matrices_into_h5_stream() {
    let dir = tempdir();
    let d = dir.path();
    run_python(
        r#"
import sys, numpy as np, h5py, scipy.io
d = sys.argv[1]
x = (np.arange(3000 * 900, dtype=np.float64) * 0.5).reshape(3000, 900)
t = (np.arange(700_000 * 7, dtype=np.int32) % 1000 - 500).reshape(700_000, 7)
small = np.arange(12.0).reshape(3, 4)
n = (np.arange(130 * 120 * 140, dtype=np.float64) - 7.5).reshape(130, 120, 140)
np.save(d + "/n.npy", n)
scipy.io.savemat(d + "/v7.mat", {"x": x, "t": t, "small": small, "n": n}, do_compression=True)
with h5py.File(d + "/v73.mat", "w", userblock_size=512) as f:
    for k, a in (("x", x), ("t", t), ("small", small), ("n", n)):
        f.create_dataset(k, data=a.T, chunks=True, compression="gzip")
        f[k].attrs["MATLAB_class"] = np.bytes_("double" if a.dtype == np.float64 else "int32")
with open(d + "/v73.mat", "r+b") as f:
    f.write(b"MATLAB 7.3 MAT-file".ljust(116) + bytes(8) + b"\x00\x02IM")
"#,
        &[s(d)],
    );
    for src in ["v7.mat", "v73.mat"] {
        let out = d.join(format!("{src}.h5"));
        ok(&["convert", s(&d.join(src)), s(&out)]);
        let check = r#"
import sys, numpy as np, tables
with tables.open_file(sys.argv[1]) as f:
    got = {k: f.get_node("/" + k).read() for k in ("x", "t", "small", "n")}
want = {
    "n": (np.arange(130 * 120 * 140, dtype=np.float64) - 7.5).reshape(130, 120, 140),
    "x": (np.arange(3000 * 900, dtype=np.float64) * 0.5).reshape(3000, 900),
    "t": (np.arange(700_000 * 7, dtype=np.int32) % 1000 - 500).reshape(700_000, 7),
    "small": np.arange(12.0).reshape(3, 4),
}
for k, w in want.items():
    assert got[k].dtype == w.dtype and got[k].shape == w.shape, (k, got[k].dtype, got[k].shape)
    assert np.array_equal(got[k], w), k
print("ok")
"#;
        assert_eq!(run_python(check, &[s(&out)]).trim(), "ok", "{src}");
        // Into Parquet: one fixed-size list column, a row of the matrix per row.
        let parquet = d.join(format!("{src}.parquet"));
        ok(&["convert", &format!("{}:x", s(&d.join(src))), s(&parquet)]);
        let check = r#"
import sys, numpy as np, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
want = (np.arange(3000 * 900, dtype=np.float64) * 0.5).reshape(3000, 900)
got = t.column(0).combine_chunks().flatten().to_numpy().reshape(t.num_rows, -1)
assert got.shape == want.shape and np.array_equal(got, want), got.shape
print("ok")
"#;
        assert_eq!(run_python(check, &[s(&parquet)]).trim(), "ok", "{src}");
        // A 3-d array: the table the same array in C order makes (rows read as stored).
        let (from_mat, from_npy) = (d.join("n_mat.parquet"), d.join("n_npy.parquet"));
        ok(&["convert", &format!("{}:n", s(&d.join(src))), s(&from_mat)]);
        ok(&["convert", s(&d.join("n.npy")), s(&from_npy)]);
        let check = r#"
import sys, pyarrow.parquet as pq
a, b = pq.read_table(sys.argv[1]), pq.read_table(sys.argv[2])
assert a.num_rows == 130 and a.column(0).equals(b.column(0)), (a.schema, b.schema)
print("ok")
"#;
        assert_eq!(
            run_python(check, &[s(&from_mat), s(&from_npy)]).trim(),
            "ok",
            "{src}"
        );
    }
}

/// The good variables of argv[1] (original) and argv[2] (copy), loaded by scipy.io (v7) or
/// hdf5storage (v7.3), are equal; the copy has no `bad`.
const GOOD_COPIED: &str = r#"
import sys, numpy as np, scipy.io, hdf5storage, h5py
def load(p):
    if h5py.is_hdf5(p):
        return hdf5storage.loadmat(p)
    return scipy.io.loadmat(p)
a, b = load(sys.argv[1]), load(sys.argv[2])
for k in ("good", "small"):
    x, y = np.asarray(a[k]), np.asarray(b[k])
    assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), k
print(sorted(k for k in b if not k.startswith("__")))
"#;

/// A large variable that cannot be read (damage its headers or its first and last chunks
/// show) is left out of a MAT → MAT copy with the reason, the other variables copied as
/// scipy.io/hdf5storage read them; `--strict` refuses, writing nothing. Damage found only
/// after the first of the variable is written is a one-line error naming the source file,
/// the variable and why, and no output (nor temporary file) is left.
#[test]
fn damaged_large_mat_variables_are_left_out_or_stop_the_copy_cleanly() {
    let dir = tempdir();
    let d = dir.path();
    sciio_testkit::run_python_script("python/mat_damaged_large.py", &[s(d)]);
    for (version, out_version) in [("v7", "7"), ("v73", "7.3")] {
        let (good, cut) = (
            d.join(format!("{version}.mat")),
            d.join(format!("{version}_cut.mat")),
        );
        let copy = d.join(format!("{version}_copy.mat"));
        let args = ["convert", s(&cut), s(&copy), "--mat-version", out_version];
        let out = sciio(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{version}: {err}");
        let left: Vec<&str> = err.lines().filter(|l| l.contains("left out")).collect();
        assert!(
            left.len() == 1 && left[0].contains("/bad") && left[0].contains("cannot be read"),
            "{version}: {err}"
        );
        assert_eq!(
            run_python(GOOD_COPIED, &[s(&good), s(&copy)]).trim(),
            "['good', 'small']",
            "{version}"
        );
        // Under DST:NODE (fields of one struct, read whole): left out too.
        let nested = format!("{}:/top", s(&d.join(format!("{version}_nested.mat"))));
        let out = sciio(&["convert", s(&cut), &nested, "--mat-version", out_version]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{version}: {err}");
        assert!(err.contains("left out: /bad"), "{version}: {err}");
        let strict = d.join(format!("{version}_strict.mat"));
        let out = sciio(&[
            "convert",
            s(&cut),
            s(&strict),
            "--mat-version",
            out_version,
            "--strict",
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("/bad"),
            "{version}: {err}"
        );
        assert!(!strict.exists(), "{version}: --strict wrote {strict:?}");

        let deep = d.join(format!("{version}_deep.mat"));
        let fresh = d.join(format!("{version}_fresh.mat"));
        let out = sciio(&["convert", s(&deep), s(&fresh), "--mat-version", out_version]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{version}: a damaged stream copied");
        assert_eq!(err.trim().lines().count(), 1, "{version}: {err}");
        let named = format!("{version}_deep.mat");
        assert!(
            err.contains(&named) && err.contains("/bad"),
            "{version}: {err}"
        );
        assert!(!fresh.exists(), "{version}: {fresh:?} left behind");
    }
    let leftovers: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".mat"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
