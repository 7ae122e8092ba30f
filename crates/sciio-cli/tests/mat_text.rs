//! numpy text arrays (`S`, `U`) into MAT files, written piece by piece when large (issue 17):
//! read back by hdf5storage.loadmat (v7.3: the numpy array itself) and scipy.io.loadmat
//! (v7: as it reads scipy.io.savemat's own file of the array) — non-ASCII bytes, text beyond
//! the BMP, big-endian, 1-d and 2-d, empty strings and trailing NULs —, and converted in
//! bounded memory: the peak RSS of `sciio convert` differs by less than 64 MiB between a 72
//! and a 160 MiB array. Small arrays of every shape and kind into MAT v5/v7 as scipy.io
//! writes them, and char arrays of scipy.io's files (3 or more dimensions among them) read
//! as scipy.io reads them, in v7 and, copied, v7.3 (`python/mat5_text.py`).
#![cfg(feature = "mat")]

mod common;
use common::{ok, s};

use sciio_testkit::{run_python, tempdir};

/// `sys.argv[2]`: the `.npy` of case `sys.argv[1]`, at least 17 MiB (arrays from 16 MiB on
/// are written piece by piece); every 5th string empty, the others 1 to `width` characters
/// (so most are NUL-padded).
const MAKE: &str = r#"
import sys, numpy as np
case, path = sys.argv[1], sys.argv[2]
kind, width, shape, order, alphabet = {
    "bytes2d": ("S", 8, (4352, 520), "|", b"ab\xe9\xff z"),
    "ascii1d": ("S", 5, (3_600_000,), "|", b"hello world"),
    "wide_be": ("U", 4, (1_150_000,), ">", "a\u00e9\u4e2d\U0001F600"),
    "bmp2d": ("U", 3, (1500, 1000), "<", "x\u03b1\u4e2d\ufffd"),
}[case]
n = int(np.prod(shape))
rng = np.random.default_rng(7)
lengths = rng.integers(1, width + 1, n)
lengths[::5] = 0
units = rng.integers(0, len(alphabet), (n, width))
if kind == "S":
    table = np.frombuffer(alphabet, np.uint8)
    codes = table[units].astype(np.uint8)
else:
    table = np.array([ord(c) for c in alphabet], np.uint32)
    codes = table[units]
codes[np.arange(width)[None, :] >= lengths[:, None]] = 0
a = np.ascontiguousarray(codes).view(np.dtype(f"{kind}{width}")).reshape(shape)
a = a.astype(np.dtype(f"{order}{kind}{width}"))
assert a.nbytes >= 17 << 20, a.nbytes
np.save(path, a)
"#;

/// hdf5storage.loadmat gives the array of `sys.argv[1]` back from the v7.3 file
/// `sys.argv[2]` — or, text beyond the BMP (which hdf5storage.loadmat cannot read, not even
/// from its own files: it decodes the `uint32` codes as UTF-32 of the wrong length), the
/// dataset and its attributes are those hdf5storage.savemat writes of the array
/// (little-endian: it writes a big-endian one's codes byte-swapped); scipy.io.loadmat reads
/// the v7 file `sys.argv[3]` as it reads scipy.io.savemat's own file of the array (bytes
/// from 0x80 as the characters U+0080..U+00FF: scipy writes them raw into UTF-8 data, a
/// file it cannot read back).
const SAME: &str = r#"
import sys, os, numpy as np, hdf5storage, scipy.io, h5py
# The same values in C order (scipy writes a Fortran-order text array's buffer as if it
# were C-ordered, scrambling the strings).
a = np.ascontiguousarray(np.load(sys.argv[1]))
wide = a.dtype.kind == "U" and a.astype(a.dtype.newbyteorder("<")).view(np.uint32).max() > 0xFFFF
if wide:
    ref = sys.argv[2] + ".ref.mat"
    little = a.astype(a.dtype.newbyteorder("<"))
    hdf5storage.savemat(ref, {"t": little}, matlab_compatible=True, store_python_metadata=True)
    with h5py.File(ref) as r, h5py.File(sys.argv[2]) as o:
        want, got = r["t"], o["t"]
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
        assert np.array_equal(got[()], want[()])
        attrs = lambda d: {k: np.asarray(v).tolist() for k, v in d.attrs.items()}
        assert attrs(got) == attrs(want), (attrs(got), attrs(want))
    os.remove(ref)
else:
    b = hdf5storage.loadmat(sys.argv[2])["t"]
    assert b.shape == a.shape and b.dtype.kind == a.dtype.kind, (b.shape, b.dtype, a.dtype)
    assert np.array_equal(a, b), (a[:5], b[:5])
ref = sys.argv[3] + ".scipy.mat"
scipy.io.savemat(ref, {"t": np.char.decode(a, "latin-1") if a.dtype.kind == "S" else a})
want = scipy.io.loadmat(ref)["t"]
os.remove(ref)
got = scipy.io.loadmat(sys.argv[3])["t"]
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.dtype)
assert np.array_equal(got, want), (got[:5], want[:5])
"#;

#[test]
fn large_text_arrays_read_back_by_hdf5storage_and_scipy() {
    let dir = tempdir();
    let src = dir.path().join("t.npy");
    let (v73, v7) = (dir.path().join("t73.mat"), dir.path().join("t7.mat"));
    for case in ["bytes2d", "ascii1d", "wide_be", "bmp2d"] {
        run_python(MAKE, &[case, s(&src)]);
        ok(&["convert", s(&src), s(&v73)]);
        ok(&["convert", s(&src), s(&v7), "--mat-version", "7"]);
        run_python(SAME, &[s(&src), s(&v73), s(&v7)]);
    }
}

/// Small text arrays of every kind into MAT v7 and v5 (`python/mat5_text.py`: 0-d to 4-d,
/// empty strings, all empty, no element, NULs inside, beyond the BMP, bytes from 0x80,
/// big-endian, Fortran order): scipy.io.loadmat reads sciio's file as scipy.io.savemat's.
/// And sciio reads scipy.io.savemat's file of them (and that file copied into v7.3 by
/// sciio) as scipy.io.loadmat does.
#[test]
fn text_arrays_into_mat_v5_v7_as_scipy_writes_them_and_back() {
    let dir = tempdir();
    let d = dir.path();
    let script = |args: &[&str]| {
        let said = sciio_testkit::run_python_script("python/mat5_text.py", args);
        assert_eq!(said.trim(), "same", "{args:?}");
    };
    script(&["make", s(d)]);
    let npz = d.join("text.npz");
    for version in ["7", "5"] {
        let out = d.join(format!("sciio{version}.mat"));
        ok(&["convert", s(&npz), s(&out), "--mat-version", version]);
        script(&["written", s(d), s(&out)]);
    }
    let (scipy, v73) = (d.join("scipy.mat"), d.join("copy73.mat"));
    ok(&["convert", s(&scipy), s(&v73)]);
    for (i, mat) in [&scipy, &v73].into_iter().enumerate() {
        let back = d.join(format!("back{i}.npz"));
        ok(&["convert", s(mat), s(&back)]);
        script(&["read", s(d), s(&back)]);
    }
}

/// `sys.argv[1]`: a `(n, 4)` `|S16` array of `sys.argv[2]` MiB, lowercase ASCII, or with
/// non-ASCII bytes (`é`, 0xE9) when `sys.argv[3]` is `latin`.
const MAKE_LARGE: &str = r#"
import sys, numpy as np
n = (int(sys.argv[2]) << 20) // 64
top = 124 if sys.argv[3] == "latin" else 123
a = np.random.default_rng(1).integers(97, top, n * 64, dtype=np.uint8)
a[a == 123] = 0xE9
np.save(sys.argv[1], a.view("S16").reshape(n, 4))
"#;

/// The most the peak RSS may grow from 16 to 160 MiB of text.
const GROWTH: u64 = 64 << 20;

#[test]
fn text_arrays_convert_in_bounded_memory() {
    let dir = tempdir();
    let src = dir.path().join("s16.npy");
    let out = dir.path().join("out.mat");
    // v7.3: uint16 codes; v7: UTF-8 of one and two bytes. (v7.3 of non-ASCII bytes, kept
    // as fixed-length strings, goes the same numeric routes: 135 -> 145 MiB, left out to
    // keep the test under a minute in debug.)
    for (version, text) in [("7.3", "ascii"), ("7", "latin")] {
        let args = ["convert", s(&src), s(&out), "--mat-version", version];
        assert_rss_bounded(&format!("{text} |S16 -> MAT v{version}"), &args, &|mib| {
            run_python(MAKE_LARGE, &[s(&src), &mib.to_string(), text]);
        });
    }
}

/// Runs `sciio args...` on the source `make(mib)` writes at 72 and at 160 MiB (both over the
/// size, 64 MiB, from which a C-order array is staged: a smaller one is scattered, another
/// route without the staged one's read-ahead) and asserts its peak RSS grew by less than
/// [`GROWTH`].
fn assert_rss_bounded(what: &str, args: &[&str], make: &dyn Fn(u32)) {
    let mut rss = Vec::new();
    for mib in [72, 160] {
        make(mib);
        let started = std::time::Instant::now();
        rss.push(sciio_testkit::peak_rss(env!("CARGO_BIN_EXE_sciio"), args));
        eprintln!(
            "{mib} MiB {what}: {:.1} s, peak RSS {} MiB",
            started.elapsed().as_secs_f64(),
            rss[rss.len() - 1] >> 20
        );
    }
    let growth = rss[1].saturating_sub(rss[0]);
    assert!(
        growth < GROWTH,
        "{what}: peak RSS {} MiB at 72 MiB, {} MiB at 160 MiB",
        rss[0] >> 20,
        rss[1] >> 20
    );
}

/// `sys.argv[2]`: a source of text of `sys.argv[3]` MiB, kind `sys.argv[1]`: `fortran`, a
/// `.npy` of a Fortran-order 3-d `<U6` array (text within and beyond the BMP); `h5py`, an
/// HDF5 file of `S16` datasets `/run/names` (2-d, chunked) and `/top` (1-d, contiguous) and
/// a small `/run/x`; `pytables`, a PyTables file of a `StringAtom(16)` CArray `/g/c` and
/// EArray `/e` (non-ASCII bytes among them). Every 5th string empty, most NUL-padded.
const MAKE_SOURCES: &str = r#"
import sys, numpy as np
kind, path, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(5)
def strings(n, width, alphabet, dtype):
    lengths = rng.integers(1, width + 1, n)
    lengths[::5] = 0
    units = rng.integers(0, len(alphabet), (n, width))
    if dtype == "S":
        codes = np.frombuffer(alphabet, np.uint8)[units]
    else:
        codes = np.array([ord(c) for c in alphabet], np.uint32)[units]
    codes[np.arange(width)[None, :] >= lengths[:, None]] = 0
    return np.ascontiguousarray(codes).view(f"{dtype}{width}").reshape(n)
if kind == "fortran":
    n = (mib << 20) // 24 // 60 * 60
    a = strings(n, 6, "ab\u00e9\u4e2d\U0001F600 ", "U").reshape(n // 60, 12, 5)
    np.save(path, np.asfortranarray(a))
elif kind == "h5py":
    import h5py
    n = (mib << 20) // 16 // 8 * 8
    a = strings(n, 16, b"abcdef xyz", "S")
    with h5py.File(path, "w") as f:
        f.create_dataset("run/names", data=a[: n // 2].reshape(-1, 8), chunks=(2048, 8))
        f.create_dataset("top", data=a[n // 2 :])
        f["run/x"] = np.arange(5.0)
else:
    import tables
    n = (mib << 20) // 16 // 8 * 8
    a = strings(n, 16, b"ab\xe9\xff z", "S")
    with tables.open_file(path, "w") as f:
        f.create_carray("/g", "c", obj=a[: n // 2].reshape(-1, 8), createparents=True)
        e = f.create_earray("/", "e", atom=tables.StringAtom(16), shape=(0, 4))
        rest = a[n // 2 :].reshape(-1, 4)
        for i in range(0, len(rest), 1 << 17):
            e.append(rest[i : i + (1 << 17)])
"#;

/// The arrays of source `sys.argv[1]` (a `.npy`, its array named by the path `sys.argv[4]`,
/// or an HDF5 file, its datasets by their paths) read back from sciio's v7.3 file
/// `sys.argv[2]` by hdf5storage.loadmat (struct fields as MATLAB values: a leading axis,
/// the widest string's width; text beyond the BMP, which it cannot read, as h5py reads its
/// `uint32` codes) with h5py's `H5PATH` of each field, and from its v7 file
/// `sys.argv[3]` by scipy.io.loadmat as scipy.io.loadmat reads scipy.io.savemat's own file
/// of the same arrays in the same structs (bytes as latin-1 text, as scipy writes them;
/// C-order copies, as scipy scrambles Fortran-order text).
const SAME_TREE: &str = r#"
import sys, os, numpy as np, hdf5storage, scipy.io, h5py
src, v73, v7 = sys.argv[1:4]
if src.endswith(".npy"):
    arrays = {sys.argv[4].strip("/"): np.load(src)}
else:
    arrays = {}
    with h5py.File(src, "r") as f:
        f.visititems(lambda p, o: arrays.__setitem__(p, o[()]) if isinstance(o, h5py.Dataset) else None)
def one(v):
    while isinstance(v, np.ndarray) and v.dtype == object and v.size == 1:
        v = v.flat[0]
    return v
def at(m, path, field):
    parts = path.split("/")
    v = m[parts[0]]
    for p in parts[1:]:
        v = field(v, p)
    return v
def wide(a):
    return a.dtype.kind == "U" and np.ascontiguousarray(a).view(np.uint32).max() > 0xFFFF
# hdf5storage.loadmat cannot read a file holding text beyond the BMP at all.
m73 = None if any(wide(a) for a in arrays.values()) else hdf5storage.loadmat(v73)
with h5py.File(v73, "r") as f:
    for path, a in arrays.items():
        parent = "/" + path.rsplit("/", 1)[0] if "/" in path else None
        if parent is not None:
            assert f[path].attrs["H5PATH"].decode() == parent, (path, f[path].attrs["H5PATH"])
        if wide(a):
            # hdf5storage cannot read text beyond the BMP back: the uint32 codes themselves.
            got = f[path][()].T
            want = np.ascontiguousarray(a).view(np.uint32).reshape(a.shape[:-1] + (-1,))
            assert np.array_equal(got.reshape(want.shape), want), path
            continue
        got = one(at(m73, path, lambda v, p: one(one(v)[p])))
        assert got.dtype.kind == a.dtype.kind and np.array_equal(got.reshape(a.shape), a), path
def latin(a):
    # scipy writes a Fortran-order array's buffer as if it were C-ordered: a C-order copy.
    a = np.ascontiguousarray(a)
    return np.char.decode(a, "latin-1").astype(f"U{a.dtype.itemsize}") if a.dtype.kind == "S" else a
tree = {}
for path, a in arrays.items():
    d = tree
    *parents, name = path.split("/")
    for p in parents:
        d = d.setdefault(p, {})
    d[name] = latin(a)
ref = v7 + ".scipy.mat"
scipy.io.savemat(ref, tree)
want, got = scipy.io.loadmat(ref), scipy.io.loadmat(v7)
os.remove(ref)
field = lambda v, p: v[0, 0][p]
for path in arrays:
    w, g = at(want, path, field), at(got, path, field)
    assert g.shape == w.shape and g.dtype == w.dtype, (path, g.shape, w.shape, g.dtype, w.dtype)
    assert np.array_equal(g, w), path
print("same")
"#;

/// Large text arrays by the routes added for issue 17 read back as the whole arrays' files
/// are: below a struct path (`out.mat:/s/t`, C and Fortran order), Fortran order of three
/// axes (top level), HDF5 string datasets written by h5py and PyTables (top level and in
/// groups, which become structs) — v7.3 by hdf5storage (and h5py), v7 by scipy.io.
#[test]
fn text_in_structs_hdf5_and_fortran_order_read_back() {
    let dir = tempdir();
    let d = dir.path();
    let (v73, v7) = (d.join("t73.mat"), d.join("t7.mat"));
    let check = |src: &std::path::Path, node: &str| {
        let said = run_python(SAME_TREE, &[s(src), s(&v73), s(&v7), node]);
        assert_eq!(said.trim(), "same", "{src:?}");
    };
    // Below a struct path: C order (`bmp2d`, 2-d) and Fortran order (3-d).
    let npy = d.join("t.npy");
    run_python(MAKE, &["bmp2d", s(&npy)]);
    let (at73, at7) = (format!("{}:/s/t", s(&v73)), format!("{}:/s/t", s(&v7)));
    ok(&["convert", s(&npy), &at73]);
    ok(&["convert", s(&npy), &at7, "--mat-version", "7"]);
    check(&npy, "s/t");
    run_python(MAKE_SOURCES, &["fortran", s(&npy), "20"]);
    ok(&["convert", s(&npy), &at73]);
    ok(&["convert", s(&npy), &at7, "--mat-version", "7"]);
    check(&npy, "s/t");
    // Top level: the scipy and hdf5storage comparisons of the C-order cases.
    ok(&["convert", s(&npy), s(&v73)]);
    ok(&["convert", s(&npy), s(&v7), "--mat-version", "7"]);
    run_python(SAME, &[s(&npy), s(&v73), s(&v7)]);
    for kind in ["h5py", "pytables"] {
        let h5 = d.join(format!("{kind}.h5"));
        run_python(MAKE_SOURCES, &[kind, s(&h5), "40"]);
        ok(&["convert", s(&h5), s(&v73)]);
        ok(&["convert", s(&h5), s(&v7), "--mat-version", "7"]);
        check(&h5, "");
    }
}

/// Peak RSS of the new routes does not grow with the data (72 vs 160 MiB sources): text
/// below a struct path (v7: each text field planned from a first pass, then streamed),
/// Fortran-order text (staged), HDF5 string datasets in groups (h5py) and PyTables arrays.
#[test]
fn text_in_structs_hdf5_and_fortran_order_convert_in_bounded_memory() {
    let dir = tempdir();
    let d = dir.path();
    let out = d.join("out.mat");
    let at = format!("{}:/s/t", s(&out));
    let cases: [(&str, &str, &str, &str); 5] = [
        ("npy", "s16.npy", "7", at.as_str()),
        ("npy", "s16.npy", "7.3", at.as_str()),
        ("fortran", "f.npy", "7", s(&out)),
        ("h5py", "h.h5", "7", s(&out)),
        ("pytables", "p.h5", "7.3", s(&out)),
    ];
    for (kind, name, version, dst) in cases {
        let src = d.join(name);
        let args = ["convert", s(&src), dst, "--mat-version", version];
        assert_rss_bounded(&format!("{kind} -> {dst} v{version}"), &args, &|mib| {
            match kind {
                "npy" => run_python(MAKE_LARGE, &[s(&src), &mib.to_string(), "latin"]),
                _ => run_python(MAKE_SOURCES, &[kind, s(&src), &mib.to_string()]),
            };
        });
        std::fs::remove_file(&src).unwrap();
    }
}
