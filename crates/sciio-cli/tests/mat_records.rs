//! Structured arrays (records) into MAT files: read back by scipy.io.loadmat (v5/v7) and
//! hdf5storage.loadmat (v7.3) equal to the source — text and byte fields of every length
//! (empty, non-ASCII, inner NULs), a subarray field, big-endian fields; of one axis or of
//! several in C order, staged into MATLAB's —, and written in
//! bounded memory: the peak RSS of `sciio convert` differs by less than 64 MiB between 20k
//! and 200k records (issue 17).
#![cfg(feature = "mat")]

mod common;
use common::{ok, s};

use sciio_testkit::{run_python, tempdir};

/// `sys.argv[1]`: a structured `.npy` of `sys.argv[2]` records with every kind of field; bytes
/// fields ASCII only when `sys.argv[3]` is `ascii`; of shape `sys.argv[4]` (`6,7,8`; C order)
/// when given.
const MAKE: &str = r#"
import sys, numpy as np
n = int(sys.argv[2])
dt = np.dtype([("i", "<i8"), ("x", ">f8"), ("y", "<f4"), ("s", "S12"), ("u", "<U5"),
               ("v", ">i2", (2, 3)), ("b", "?"), ("c", "<c16")])
rng = np.random.default_rng(1)
a = np.zeros(n, dt)
a["i"] = rng.integers(-10**12, 10**12, n)
a["x"] = rng.normal(size=n)
a["y"] = rng.normal(size=n)
words = [b"", b"a", b"hello", b"\xe9t\xe9", b"twelve_bytes", b"x\x00y"]
if sys.argv[3] == "ascii":
    words[3] = b"ete"
a["s"] = [words[k % len(words)] for k in range(n)]
texts = ["", "\u00e9", "abc", "\u4e2d\u6587", "hello"]
a["u"] = [texts[k % len(texts)] for k in range(n)]
a["v"] = rng.integers(-100, 100, (n, 2, 3))
a["b"] = rng.integers(0, 2, n).astype(bool)
a["c"] = rng.normal(size=n) + 1j * rng.normal(size=n)
if len(sys.argv) > 4:
    a = a.reshape([int(d) for d in sys.argv[4].split(",")])
np.save(sys.argv[1], a)
"#;

/// scipy.io.loadmat reads variable `r` of `sys.argv[2]` as the struct array of the records in
/// `sys.argv[1]` (1-by-N for N records, else of their shape): each element's field values the
/// record's at the same index (bytes as their characters).
const SAME_SCIPY: &str = r#"
import sys, numpy as np, scipy.io
a = np.load(sys.argv[1])
m = scipy.io.loadmat(sys.argv[2], squeeze_me=False, struct_as_record=True)["r"]
if a.ndim == 1:
    a = a.reshape(1, -1)
assert m.shape == a.shape, (m.shape, a.shape)
assert m.dtype.names == a.dtype.names, m.dtype.names
def text(v):
    return "" if v.size == 0 else str(v[0])
for k in np.ndindex(a.shape):
    rec, e = a[k], m[k]
    for name in a.dtype.names:
        want, got, dt = rec[name], e[name], a.dtype[name]
        if dt.kind == "S":
            assert text(got) == want.decode("latin-1"), (k, name, got, want)
        elif dt.kind == "U":
            assert text(got) == want, (k, name, got, want)
        elif dt.shape:
            assert got.shape == dt.shape and np.array_equal(got, want), (k, name, got, want)
        else:
            assert got.shape == (1, 1) and got[0, 0] == want, (k, name, got, want)
"#;

/// hdf5storage.loadmat gives the structured array of `sys.argv[1]` back from `sys.argv[2]`.
const SAME_HDF5STORAGE: &str = r#"
import sys, numpy as np, hdf5storage
a = np.load(sys.argv[1])
b = hdf5storage.loadmat(sys.argv[2])["r"]
assert b.shape == a.shape and b.dtype.names == a.dtype.names, (b.shape, b.dtype)
for name in a.dtype.names:
    assert np.array_equal(b[name], a[name]), (name, b[name][:5], a[name][:5])
"#;

/// hdf5storage.loadmat and mat73.loadmat read the same values from sciio's v7.3 file
/// `sys.argv[2]` as from hdf5storage.savemat's own file (`sys.argv[3]`, written here) of the
/// structured array `sys.argv[1]` (sciio stores big-endian data little-endian, as MATLAB
/// does: byte order aside); h5py opens it.
const SAME_AS_HDF5STORAGE: &str = r##"
import sys, numpy as np, hdf5storage, mat73, h5py
a = np.load(sys.argv[1])
hdf5storage.savemat(sys.argv[3], {"r": a}, matlab_compatible=True)
def same(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return x.shape == y.shape and x.dtype.newbyteorder("=") == y.dtype.newbyteorder("=") \
        and np.array_equal(x, y)
ours, theirs = hdf5storage.loadmat(sys.argv[2])["r"], hdf5storage.loadmat(sys.argv[3])["r"]
assert ours.shape == theirs.shape and ours.dtype.names == theirs.dtype.names
for name in a.dtype.names:
    assert same(ours[name], theirs[name]), name
ours, theirs = mat73.loadmat(sys.argv[2])["r"], mat73.loadmat(sys.argv[3])["r"]
assert sorted(ours) == sorted(theirs) == sorted(a.dtype.names), (sorted(ours), sorted(theirs))
for name in a.dtype.names:
    assert len(ours[name]) == len(theirs[name]) == len(a), name
    for k, (x, y) in enumerate(zip(ours[name], theirs[name])):
        assert same(x, y), (name, k, x, y)
with h5py.File(sys.argv[2], "r") as f:
    assert f["r"].attrs["MATLAB_class"] == b"struct" and len(f["#refs#"]) > 8 * len(a)
"##;

#[test]
fn structured_arrays_read_back_by_scipy_and_hdf5storage() {
    let dir = tempdir();
    // 300 records: one compressed element; 20000: over 4 MiB, deflated as the records come.
    for n in [300, 20_000] {
        let src = dir.path().join("r.npy");
        run_python(MAKE, &[s(&src), &n.to_string(), "any"]);
        for version in ["5", "7"] {
            let out = dir.path().join(format!("r{version}.mat"));
            ok(&["convert", s(&src), s(&out), "--mat-version", version]);
            run_python(SAME_SCIPY, &[s(&src), s(&out)]);
        }
        if n == 300 {
            // v7.3 stores a bytes field's value as char codes (uint16), which hdf5storage
            // reads back UTF-8-encoded (hdf5storage itself stores numpy.bytes_ as bytes): the
            // check is of ASCII bytes until the layout follows it.
            run_python(MAKE, &[s(&src), &n.to_string(), "ascii"]);
            let out = dir.path().join("r73.mat");
            ok(&["convert", s(&src), s(&out)]);
            run_python(SAME_HDF5STORAGE, &[s(&src), s(&out)]);
            let theirs = dir.path().join("hdf5storage.mat");
            run_python(SAME_AS_HDF5STORAGE, &[s(&src), s(&out), s(&theirs)]);
        }
    }
}

#[test]
fn structured_arrays_of_several_axes_read_back_by_scipy() {
    // C-order records of two and three axes longer than 1 (MATLAB's order is another: they
    // are staged in it), small (one element) and past the parallel deflate stream.
    let dir = tempdir();
    for (n, shape) in [(600, "20,30"), (336, "6,7,8"), (30_000, "150,200")] {
        let src = dir.path().join("r.npy");
        run_python(MAKE, &[s(&src), &n.to_string(), "any", shape]);
        for version in ["5", "7"] {
            let out = dir.path().join(format!("r{version}.mat"));
            ok(&["convert", s(&src), s(&out), "--mat-version", version]);
            run_python(SAME_SCIPY, &[s(&src), s(&out)]);
        }
    }
}

/// Runs `sciio args...` and returns its peak RSS in bytes, failing the test when it fails.
fn peak_rss(args: &[&str]) -> u64 {
    sciio_testkit::peak_rss(env!("CARGO_BIN_EXE_sciio"), args)
}

/// The most the peak RSS may grow from 20k to 200k records.
const GROWTH: u64 = 64 << 20;

/// Converts python/scale_sources.py's `kind` source (`npy_rec`: a structured `.npy`;
/// `npy_rec2d`: one of shape (N, 64); `table`: a PyTables Table `/t`; all of 32-byte i8, f8,
/// f4, S12 records) of 20k and 200k records into
/// a MAT file of `version` and compares the peak RSS of the two runs; the small output is
/// checked by scipy.io.loadmat against the source.
fn records_in_bounded_memory(kind: &str, version: &str) {
    let (node, var) = match kind {
        "table" => (":/t", "t"),
        _ => ("", "src"),
    };
    records_into(kind, (node, ""), var, version);
}

/// [`records_in_bounded_memory`] of source node `src_node` (`:/t`, or `""`: the whole file)
/// into the destination node `dst_node` (`:/s/r`: field `r` of struct `s`, or `""`), the
/// records found at MATLAB path `var` (`s/r`) of the output.
fn records_into(kind: &str, (src_node, dst_node): (&str, &str), var: &str, version: &str) {
    let dir = tempdir();
    let src = match kind {
        "table" | "table_group" => dir.path().join("src.h5"),
        _ => dir.path().join("src.npy"),
    };
    let out = dir.path().join("out.mat");
    let mut rss = Vec::new();
    for records in [20_000u64, 200_000] {
        sciio_testkit::run_python_script(
            "python/scale_sources.py",
            &[kind, s(&src), &(records * 32).to_string()],
        );
        let started = std::time::Instant::now();
        let src_arg = format!("{}{src_node}", s(&src));
        let dst_arg = format!("{}{dst_node}", s(&out));
        rss.push(peak_rss(&[
            "convert",
            &src_arg,
            &dst_arg,
            "--mat-version",
            version,
        ]));
        eprintln!(
            "{kind}{src_node} -> MAT v{version}{dst_node}: {records} records in {:.1} s, peak \
             RSS {} MiB",
            started.elapsed().as_secs_f64(),
            rss[rss.len() - 1] >> 20
        );
        if records == 20_000 {
            let check = match version {
                "7.3" => CHECK_RECORDS_73,
                _ => CHECK_RECORDS,
            };
            run_python(&format!("{LOAD_SOURCE}{check}"), &[s(&src), s(&out), var]);
            if version == "7.3" {
                // `/#refs#`'s B-tree over the elements' links, written as they came.
                let tree = sciio_testkit::run_python_script(
                    "python/check_group_btree.py",
                    &[s(&out), "#refs#"],
                );
                assert!(tree.trim().ends_with(" 80001"), "{tree}");
            }
        }
    }
    let growth = rss[1].saturating_sub(rss[0]);
    assert!(
        growth < GROWTH,
        "{kind} -> MAT v{version}{dst_node}: peak RSS {} MiB at 20k records, {} MiB at 200k \
         (grows by {} MiB)",
        rss[0] >> 20,
        rss[1] >> 20,
        growth >> 20
    );
}

/// The records of `sys.argv[1]` (a `.npy`, or a PyTables file's `/t` or `/run/t`).
const LOAD_SOURCE: &str = r#"
import sys, numpy as np, tables
def source():
    if not sys.argv[1].endswith(".h5"):
        return np.load(sys.argv[1])
    with tables.open_file(sys.argv[1]) as f:
        return (f.root.t if "/t" in f else f.root.run.t).read()
"#;

/// scipy.io.loadmat reads the records of the source (`LOAD_SOURCE`) back from the v5/v7 file
/// `sys.argv[2]` at MATLAB path `sys.argv[3]` (`src`, `t` or `s/r`: field `r` of struct `s`);
/// a PyTables file's `/run` group is struct `run` with its other fields too.
const CHECK_RECORDS: &str = r#"
import scipy.io
a = source()
loaded = scipy.io.loadmat(sys.argv[2], squeeze_me=True)
parts = sys.argv[3].split("/")
m = loaded[parts[0]]
for p in parts[1:]:
    m = m[p]
    if m.dtype == object and m.ndim == 0:
        m = m.item()
assert m.shape == a.shape, m.shape
for name in ("i", "x", "y"):
    assert np.array_equal(m[name].astype(a.dtype[name]), a[name]), name
assert [str(v) for v in m["s"].ravel()] == [v.decode() for v in a["s"].ravel()]
if parts[0] == "run":
    run = loaded["run"]
    assert set(run.dtype.names) == {"t", "n", "cal"}, run.dtype.names
    assert np.array_equal(run["n"].item(), np.arange(64.0))
    assert run["cal"].item()["gain"].item() == 2.5
"#;

/// h5py reads every 7th record of the source (`LOAD_SOURCE`) back from the v7.3 file
/// `sys.argv[2]` at path `sys.argv[3]` (one reference per element and field; hdf5storage
/// would take minutes over 80000 elements), and the last.
const CHECK_RECORDS_73: &str = r#"
import h5py
a = source()
with h5py.File(sys.argv[2], "r") as f:
    g = f[sys.argv[3]]
    assert g.attrs["MATLAB_class"] == b"struct"
    if "/" in sys.argv[3]:
        assert g.attrs["H5PATH"] == ("/" + sys.argv[3].rsplit("/", 1)[0]).encode()
    for name in a.dtype.names:
        refs = g[name][()]
        assert refs.shape == (len(a), 1), refs.shape
        for k in list(range(0, len(a), 7)) + [len(a) - 1]:
            d = f[refs[k, 0]]
            if a.dtype[name].kind == "S":
                got = b"" if "MATLAB_empty" in d.attrs else bytes(d[()].ravel().astype(np.uint8))
                assert got == a[name][k], (name, k, got)
            else:
                assert d.shape == (1, 1) and d[0, 0] == a[name][k], (name, k, d[()])
    if sys.argv[3] == "run/t":
        assert np.array_equal(f["run/n"][()].ravel(), np.arange(64.0))
        assert f["run/cal/gain"][()].ravel()[0] == 2.5
"#;

#[test]
fn records_into_mat_v73_in_bounded_memory() {
    // Each element's dataset leaves memory as it is written (peak RSS 1.1 GB at 100k records
    // before: every object held until the file was closed).
    records_in_bounded_memory("npy_rec", "7.3");
}

#[test]
fn records_into_mat_v7_in_bounded_memory() {
    records_in_bounded_memory("npy_rec", "7");
}

#[test]
fn records_of_two_axes_into_mat_v7_in_bounded_memory() {
    // MATLAB's order is not the stored one: staged through a temporary file (they were read
    // whole).
    records_in_bounded_memory("npy_rec2d", "7");
}

#[test]
fn pytables_table_records_into_mat_v5_in_bounded_memory() {
    // A PyTables Table is read in blocks as a `.npy` is (it was read whole: 4.8 GB of peak RSS
    // for 2M records).
    records_in_bounded_memory("table", "5");
}

#[test]
fn records_into_a_struct_of_mat_v73_in_bounded_memory() {
    // A field of a struct (`out.mat:/s/r`): its elements written into `/#refs#` as they come,
    // as a variable's are (the struct was gathered whole: 1.5 GB at 200k records).
    records_into("npy_rec", ("", ":/s/r"), "s/r", "7.3");
}

#[test]
fn records_into_a_struct_of_mat_v7_in_bounded_memory() {
    // The struct's element streamed, the records' text fields measured in a first pass.
    records_into("npy_rec", ("", ":/s/r"), "s/r", "7");
}

#[test]
fn a_pytables_file_with_a_table_in_a_group_into_mat_v73_in_bounded_memory() {
    // The whole file: group /run is struct `run` whose field `t` is the Table (PyTables' usual
    // layout; a 128 MiB file of it was killed for lack of memory at 24 GB).
    records_into("table_group", ("", ""), "run/t", "7.3");
}

#[test]
fn a_pytables_file_with_a_table_in_a_group_into_mat_v7_in_bounded_memory() {
    records_into("table_group", ("", ""), "run/t", "7");
}

#[test]
fn a_pytables_table_makes_the_mat_file_its_npy_copy_makes() {
    // The Table read in blocks gives the records the whole read gives: the MAT file (v7, past
    // the parallel deflate threshold) is the one its `.npy` copy makes, byte for byte after
    // the header's creation time.
    let dir = tempdir();
    let table = dir.path().join("t.h5");
    sciio_testkit::run_python_script(
        "python/scale_sources.py",
        &["table", s(&table), &(30_000 * 32).to_string()],
    );
    let (npy, direct, copied) = (
        dir.path().join("t.npy"),
        dir.path().join("direct.mat"),
        dir.path().join("copied.mat"),
    );
    let src = format!("{}:/t", s(&table));
    ok(&["convert", &src, s(&npy)]);
    ok(&["convert", &src, s(&direct), "--mat-version", "7"]);
    let dst = format!("{}:t", s(&copied));
    ok(&["convert", s(&npy), &dst, "--mat-version", "7"]);
    let (a, b) = (
        std::fs::read(&direct).unwrap(),
        std::fs::read(&copied).unwrap(),
    );
    assert!(a[128..] == b[128..], "the two MAT files differ");
    run_python(
        &format!("{LOAD_SOURCE}{CHECK_RECORDS}"),
        &[s(&table), s(&direct), "t"],
    );
}
