//! `sciio` on MATLAB v7.3 files (the `mat` feature, on by default): files hdf5storage writes
//! listed and converted to what `hdf5storage.loadmat` returns, and numpy arrays written as
//! `.mat` files hdf5storage reads back.
#![cfg(feature = "mat")]

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, tempdir};

/// hdf5storage writes a MATLAB-compatible file (no Python metadata, as MATLAB would see it).
const MAKE_MAT: &str = r#"
import sys, numpy as np, hdf5storage
c = np.empty((1, 2), dtype=object)
c[0, 0] = np.arange(3.0)
c[0, 1] = np.str_("hi")
d = {
    "x": np.arange(12.0).reshape(3, 4) / 3,
    "n": np.int16([[1, -2, 3]]),
    "name": np.str_("hello"),
    "s": {"a": np.float32([[1.5, 2.5]]), "b": np.str_("txt")},
    "c": c,
    "z": np.array([[1 + 2j, 3j]]),
    "flag": np.array([[True, False, True]]),
    "cube": np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
}
hdf5storage.savemat(sys.argv[1], d, format="7.3", store_python_metadata=False,
                    matlab_compatible=True)
"#;

#[test]
fn hdf5storage_files_list_and_convert_like_loadmat() {
    let dir = tempdir();
    let mat = dir.path().join("made.mat");
    run_python(MAKE_MAT, &[s(&mat)]);

    let listed = ok(&["ls", s(&mat)]);
    for needle in [
        "mat",
        "x",
        "double",
        "(3, 4)",
        "n",
        "int16",
        "(1, 3)",
        "name",
        "char",
        "(1, 5)",
        "s",
        "struct",
        "(1, 1)",
        "a",
        "single",
        "(1, 2)",
        "c",
        "cell",
        "z",
        "flag",
        "logical",
        "cube",
        "uint8",
        "(2, 3, 4)",
    ] {
        assert!(listed.contains(needle), "{needle} not in\n{listed}");
    }
    assert!(!listed.contains("#refs#"), "{listed}");

    let check = r#"
import sys, numpy as np, hdf5storage
mat, out = sys.argv[1], sys.argv[2]
pairs = sys.argv[3:]
d = hdf5storage.loadmat(mat)
def at(path):
    parts = path.strip("/").split("/")
    v = d[parts[0]]
    if parts[0] == "s":
        return v[parts[1]][0]
    if parts[0] == "c":
        return v.flat[int(parts[1])]
    return v
for path, npy in zip(pairs[::2], pairs[1::2]):
    want, got = at(path), np.load(npy)
    if want.dtype.kind == "U":
        assert str(np.squeeze(want)) == str(got), (path, want, got)
    else:
        assert got.dtype == want.dtype and got.shape == want.shape, (path, got.dtype, want.dtype, got.shape, want.shape)
        assert np.array_equal(got, want), (path, got, want)
print("ok", len(pairs) // 2)
"#;
    let mut args = vec![s(&mat).to_string(), String::new()];
    for (i, var) in [
        "x", "n", "name", "z", "flag", "cube", "/s/a", "/s/b", "/c/0", "/c/1",
    ]
    .iter()
    .enumerate()
    {
        let npy = dir.path().join(format!("v{i}.npy"));
        ok(&["convert", &format!("{}:{var}", s(&mat)), s(&npy)]);
        args.push(var.to_string());
        args.push(s(&npy).to_string());
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_python(check, &argv);
    assert_eq!(out.trim(), "ok 10");

    // `cat` prints the variable like numpy prints what loadmat returns.
    let printed = ok(&["cat", &format!("{}:x", s(&mat))]);
    let expect = run_python(
        "import sys, hdf5storage; print(hdf5storage.loadmat(sys.argv[1])['x'])",
        &[s(&mat)],
    );
    assert_eq!(printed, expect);

    // The whole file into one npz: struct fields and cell items under their paths.
    let npz = dir.path().join("all.npz");
    ok(&["convert", s(&mat), s(&npz)]);
    let members = run_python(
        "import sys, numpy as np; print(sorted(np.load(sys.argv[1]).files))",
        &[s(&npz)],
    );
    assert_eq!(
        members.trim(),
        "['c/0', 'c/1', 'cube', 'flag', 'n', 'name', 's/a', 's/b', 'x', 'z']"
    );
}

const MAKE_NUMPY: &str = r#"
import sys, numpy as np
d = sys.argv[1]
np.save(d + "/weights.npy", np.arange(12.0).reshape(3, 4) / 7)
np.savez(d + "/many.npz",
         ints=np.arange(6, dtype="<i4").reshape(2, 3),
         row=np.linspace(0, 1, 5),
         flags=np.array([True, False]),
         z=np.array([1 + 1j, -2j], dtype="<c8"),
         big=np.arange(100 * 100, dtype=">f8").reshape(100, 100),
         cube=np.arange(24, dtype="u2").reshape(2, 3, 4),
         text=np.str_("héllo"))
np.savez(d + "/records.npz", r=np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")]))
"#;

#[test]
fn numpy_arrays_written_as_mat_load_in_hdf5storage() {
    let dir = tempdir();
    run_python(MAKE_NUMPY, &[s(dir.path())]);
    let weights = dir.path().join("weights.npy");
    let one = dir.path().join("one.mat");
    ok(&["convert", s(&weights), &format!("{}:w", s(&one))]);
    let many = dir.path().join("many.mat");
    ok(&[
        "convert",
        s(&dir.path().join("many.npz")),
        s(&many),
        "--compress",
        "deflate:6",
    ]);
    let check = r#"
import sys, numpy as np, hdf5storage, h5py
d, one, many = sys.argv[1:4]
w = hdf5storage.loadmat(one)
assert sorted(w) == ["w"], sorted(w)
assert np.array_equal(w["w"], np.load(d + "/weights.npy")) and w["w"].dtype == np.float64
m = hdf5storage.loadmat(many)
z = np.load(d + "/many.npz")
assert sorted(m) == sorted(z.files), (sorted(m), z.files)
for k in z.files:
    want, got = z[k], m[k]
    if want.dtype.kind == "U":
        assert str(np.squeeze(got)) == str(want), (k, got)
        continue
    # hdf5storage's Python.Shape restores numpy's own shape.
    assert got.shape == want.shape, (k, got.shape, want.shape)
    assert got.dtype == want.dtype.newbyteorder("="), (k, got.dtype, want.dtype)
    assert np.array_equal(got, want), (k, got, want)
with h5py.File(many, "r") as f:
    assert f["big"].compression == "gzip" and f["big"].compression_opts == 6, f["big"].compression
    assert f["big"].attrs["MATLAB_class"] == b"double"
with open(many, "rb") as f:
    assert f.read(19) == b"MATLAB 7.3 MAT-file"
print("ok")
"#;
    let out = run_python(check, &[s(dir.path()), s(&one), s(&many)]);
    assert_eq!(out.trim(), "ok");
}

#[test]
fn what_mat_cannot_hold_is_one_line_and_writes_nothing() {
    let dir = tempdir();
    run_python(MAKE_NUMPY, &[s(dir.path())]);
    let dst = dir.path().join("r.mat");
    // Datetimes MATLAB has no class for are left out (listed on stderr, exit 0); --strict
    // refuses them before writing. (Records are structs now, as hdf5storage writes them.)
    let records = dir.path().join("when.npz");
    run_python(
        "import sys, numpy as np; np.savez(sys.argv[1], t=np.zeros(2, dtype='M8[s]'))",
        &[s(&records)],
    );
    let out = sciio(&["convert", s(&records), s(&dst)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = String::from_utf8(out.stderr).unwrap();
    assert!(
        said.starts_with("sciio: left out: ") && said.contains("MATLAB has no class"),
        "{said}"
    );
    std::fs::remove_file(&dst).unwrap();
    for (src, extra) in [
        ("when.npz", "--strict"),
        ("weights.npy", "--compress=blosc2:lz4:5"),
    ] {
        let src = dir.path().join(src);
        let args = vec!["convert", s(&src), s(&dst), extra];
        let out = sciio(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("sciio: error: "), "{err}");
        assert!(err.contains("MATLAB") || err.contains("mat"), "{err}");
        assert!(!dst.exists());
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn truncated_mat_files_fail_in_one_line() {
    let dir = tempdir();
    let mat = dir.path().join("made.mat");
    run_python(MAKE_MAT, &[s(&mat)]);
    let bytes = std::fs::read(&mat).unwrap();
    for keep in [bytes.len() / 2, 600, 100] {
        let cut = dir.path().join(format!("cut{keep}.mat"));
        std::fs::write(&cut, &bytes[..keep]).unwrap();
        for args in [vec!["ls", s(&cut)], vec!["cat", &format!("{}:x", s(&cut))]] {
            let out = sciio(&args);
            let err = String::from_utf8(out.stderr).unwrap();
            if out.status.success() {
                // Without the HDF5 superblock and root group nothing can be read.
                assert!(keep > 600, "{args:?} read a file cut at {keep} bytes");
                // Variables stored before the cut may still read; the listing must then be real.
                assert!(!out.stdout.is_empty(), "{args:?}");
                continue;
            }
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.starts_with("sciio: error: "), "{err}");
        }
    }
}

/// MATLAB objects (files in MATLAB's layout from python/mat_mcos_fixtures.py): `ls` shows
/// class and decoded size, `cat` prints the decoded values, `convert` gives the numpy arrays
/// mat-io (the reference reader of MATLAB objects) returns for string and datetime.
#[test]
fn matlab_objects_list_print_and_convert() {
    let dir = tempdir();
    sciio_testkit::run_python_script("python/mat_mcos_fixtures.py", &[s(dir.path())]);
    let mat = dir.path().join("objects.mat");

    let listed = ok(&["ls", s(&mat)]);
    for (var, class, shape) in [
        ("s_matrix", "string", "(2, 3)"),
        ("s_row", "string", "(1, 3)"),
        ("dt_matrix", "datetime", "(2, 2)"),
        ("dur_s", "duration", "(2, 3)"),
        ("cat_row", "categorical", "(1, 4)"),
        ("obj_point", "geo.Point", "(1, 1)"),
    ] {
        let line = listed
            .lines()
            .find(|l| l.split_whitespace().any(|w| w.ends_with(var)))
            .unwrap_or_else(|| panic!("{var} not in\n{listed}"));
        assert!(
            line.contains(class) && line.contains(shape),
            "{var}: {line}"
        );
    }

    let printed = ok(&["cat", &format!("{}:s_row", s(&mat))]);
    let expect = run_python(
        "import numpy as np; print(np.array([['a', 'bc', 'déf']]))",
        &[],
    );
    assert_eq!(printed, expect);

    let strings = dir.path().join("s.npy");
    let times = dir.path().join("t.npy");
    ok(&["convert", &format!("{}:s_matrix", s(&mat)), s(&strings)]);
    ok(&["convert", &format!("{}:dt_matrix", s(&mat)), s(&times)]);
    let check = r#"
import sys, warnings, numpy as np, matio
warnings.simplefilter("ignore")
d = matio.load_from_mat(sys.argv[1])
s, t = np.load(sys.argv[2]), np.load(sys.argv[3])
want_s = np.array(d["s_matrix"].tolist(), dtype=str)
assert s.dtype.kind == "U" and s.shape == want_s.shape and (s == want_s).all(), (s, want_s)
want_t = d["dt_matrix"].astype("datetime64[ms]")
assert t.dtype == np.dtype("datetime64[ms]") and t.shape == want_t.shape, (t.dtype, t.shape)
assert np.array_equal(t, want_t, equal_nan=True), (t, want_t)
print("ok")
"#;
    let out = run_python(check, &[s(&mat), s(&strings), s(&times)]);
    assert_eq!(out.trim(), "ok");
}

/// A MATLAB-written file with MATLAB's `missing` object inside a struct (mat73's
/// testfile1.mat, `data.missing_ = missing`): `ls` lists it with its class, `cat` prints it
/// as NaN, and the whole file converts — to .npz with `data/missing_` a 1x1 NaN, to .mat with
/// it a 1x1 double NaN — every other value equal to what mat73 reads from the source
/// (mat73 gives `missing` as None, mat-io as an object of class `missing`).
#[test]
fn matlab_missing_object_in_a_struct_lists_prints_and_converts_as_nan() {
    let src = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sciio-mat/tests/data/matlab/mat73_testfile1.mat");
    let listed = ok(&["ls", s(&src)]);
    let line = listed
        .lines()
        .find(|l| l.contains("missing_"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        line.contains("missing") && line.contains("(1, 1)"),
        "{line}"
    );
    let printed = ok(&["cat", &format!("{}:/data/missing_", s(&src))]);
    assert_eq!(printed.trim(), "[[nan]]");

    let dir = tempdir();
    let npz = dir.path().join("all.npz");
    let mat = dir.path().join("all.mat");
    let said = sciio(&["convert", s(&src), s(&npz)]);
    assert!(said.status.success(), "{said:?}");
    let said = sciio(&["convert", s(&src), s(&mat)]);
    assert!(said.status.success(), "{said:?}");
    assert!(
        !String::from_utf8_lossy(&said.stderr).contains("left out"),
        "{said:?}"
    );
    let out = run_python(
        r#"
import sys, warnings, numpy as np, mat73, matio
warnings.simplefilter("ignore")
src, npz, mat = sys.argv[1:]
ref = mat73.loadmat(src)
assert ref['data']['missing_'] is None
assert matio.load_from_mat(src)['data'][0, 0]['missing_'].classname == 'missing'
z = np.load(npz)
back = mat73.loadmat(mat)
checked = in_npz = 0
def walk(p, v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from walk(f'{p}/{k}' if p else k, x)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from walk(f'{p}/{i}', x)
    else:
        yield p, v
def at(tree, p):
    for part in p.split('/'):
        tree = tree[int(part)] if isinstance(tree, list) else tree[part]
    return tree
for p, want in walk('', ref):
    got_mat = at(back, p)
    if want is None:
        # MATLAB's missing: NaN in both destinations.
        assert p == 'data/missing_', p
        assert z[p].dtype == np.float64 and z[p].shape == (1, 1) and np.isnan(z[p]).all(), z[p]
        assert np.isnan(got_mat), got_mat
        checked += 1
        continue
    if hasattr(want, 'toarray'):
        assert (want != got_mat).nnz == 0, p
        checked += 1
        continue
    w, g = np.asarray(want), np.asarray(got_mat)
    assert w.dtype == g.dtype and np.array_equal(w, g, equal_nan=w.dtype.kind in 'fc'), (p, w, g)
    checked += 1
    # mat73 nests a 2-D cell as lists of rows; the npz names cell items column-major.
    if p not in z.files:
        continue
    if w.dtype.kind == 'U':
        assert str(np.squeeze(z[p])) == str(w), (p, z[p], w)
    else:
        assert np.array_equal(np.squeeze(z[p]), np.squeeze(w), equal_nan=w.dtype.kind in 'fc'), (p, z[p], w)
    in_npz += 1
print(checked, in_npz)
"#,
        &[s(&src), s(&npz), s(&mat)],
    );
    // 54 values compared in the .mat copy, 40 of them (all but 2-D cells' items) in the .npz.
    assert_eq!(out.trim(), "54 40");
}

/// hdf5storage writes a struct and a cell holding large compressed arrays (2.3 MiB and
/// 1.5 MiB of data).
const MAKE_BIG_MEMBERS: &str = r#"
import sys, numpy as np, hdf5storage
c = np.empty((1, 2), dtype=object)
c[0, 0] = np.arange(400000, dtype=np.int32).reshape(400, 1000)
c[0, 1] = np.str_("x")
hdf5storage.savemat(sys.argv[1], {'s': {'big': np.arange(300000.0).reshape(600, 500),
                                        'small': np.float64(1.5)}, 'c': c},
                    format='7.3', matlab_compatible=True, store_python_metadata=False)
"#;

/// `ls` describes the large arrays inside v7.3 cells and structs from their headers without
/// reading them: with every chunk of those arrays overwritten (so reading them fails), the
/// listing still gives each one's class, dtype and shape. An intact copy converts to .npz as
/// hdf5storage.loadmat reads it (the arrays read then are what the listing announced).
#[test]
fn listing_describes_large_arrays_in_cells_and_structs_without_reading_them() {
    let dir = tempdir();
    let mat = dir.path().join("big.mat");
    run_python(MAKE_BIG_MEMBERS, &[s(&mat)]);
    let intact = ok(&["ls", s(&mat)]);

    let damaged = dir.path().join("damaged.mat");
    std::fs::copy(&mat, &damaged).unwrap();
    run_python(
        r#"
import sys, h5py
with h5py.File(sys.argv[1], 'r') as f:
    spans = []
    for name in ('s/big', '#refs#/b'):
        d = f[name]
        assert d.chunks and d.compression == 'gzip', name
        for i in range(d.id.get_num_chunks()):
            info = d.id.get_chunk_info(i)
            spans.append((info.byte_offset, info.size))
with open(sys.argv[1], 'r+b') as fh:
    for offset, size in spans:
        fh.seek(offset)
        fh.write(b'\xff' * size)
"#,
        &[s(&damaged)],
    );
    // Reading the data now fails...
    let said = sciio(&["cat", &format!("{}:/s/big", s(&damaged)), "--head", "1"]);
    assert!(!said.status.success(), "{said:?}");
    // ...yet the listing is the intact file's, line for line after the header.
    let listed = ok(&["ls", s(&damaged)]);
    let table = |text: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.starts_with('┌'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(table(&listed), table(&intact), "{listed}");
    assert!(
        listed.contains("(600, 500)") && listed.contains("(400, 1000)"),
        "{listed}"
    );

    let npz = dir.path().join("big.npz");
    ok(&["convert", s(&mat), s(&npz)]);
    let out = run_python(
        r#"
import sys, numpy as np, hdf5storage
d = hdf5storage.loadmat(sys.argv[1])
z = np.load(sys.argv[2])
assert np.array_equal(z['s/big'], d['s']['big'].reshape(600, 500)) and z['s/big'].dtype == np.float64
assert np.array_equal(z['c/0'], d['c'][0, 0]) and z['c/0'].dtype == np.int32
print('ok')
"#,
        &[s(&mat), s(&npz)],
    );
    assert_eq!(out.trim(), "ok");
}

/// numpy bytes of each kind: ASCII ones become MATLAB char codes, ones holding a non-ASCII
/// byte stay strings (hdf5storage's choice, so no byte is re-encoded on the way back).
const MAKE_BYTES: &str = r#"
import sys, numpy as np, hdf5storage
d = {
    "ascii": np.array([[b"x", b"yz"], [b"\x00a", b""]]),
    "scalar": np.bytes_(b"ab\xff"),
    "row": np.array([b"ab\xff", b"c"]),
    "grid": np.array([[b"\xe9t\xe9", b"a"], [b"\x80", b"zz"], [b"q", b"\xff\xfe"]]),
}
np.savez(sys.argv[1], **d)
hdf5storage.savemat(sys.argv[2], d, format="7.3")
"#;

#[test]
fn numpy_bytes_go_into_mat_as_hdf5storage_stores_them_and_come_back() {
    let dir = tempdir();
    let (npz, theirs) = (dir.path().join("b.npz"), dir.path().join("theirs.mat"));
    run_python(MAKE_BYTES, &[s(&npz), s(&theirs)]);
    let ours = dir.path().join("ours.mat");
    ok(&["convert", s(&npz), s(&ours)]);
    // hdf5storage's own file read by sciio (MATLAB's view of it) and written again.
    let copied = dir.path().join("copied.mat");
    ok(&["convert", s(&theirs), s(&copied)]);
    let from_copied = dir.path().join("c.npz");
    ok(&["convert", s(&copied), s(&from_copied)]);
    let listed = ok(&["ls", s(&theirs)]);
    assert!(
        listed.contains("grid") && listed.contains("char"),
        "{listed}"
    );
    let (from_ours, from_theirs) = (dir.path().join("o.npz"), dir.path().join("t.npz"));
    ok(&["convert", s(&ours), s(&from_ours)]);
    ok(&["convert", s(&theirs), s(&from_theirs)]);
    let check = r#"
import sys, numpy as np, hdf5storage, h5py
npz, theirs, ours, from_copied, from_ours, from_theirs, copied = sys.argv[1:8]
z = np.load(npz)
with h5py.File(theirs, "r") as t, h5py.File(ours, "r") as o:
    for k in z.files:
        assert t[k].dtype == o[k].dtype and t[k].shape == o[k].shape, (k, t[k], o[k])
        assert np.array_equal(t[k][()], o[k][()]), (k, t[k][()], o[k][()])
        assert o[k].attrs["MATLAB_class"] == b"char", k
back = hdf5storage.loadmat(ours)
for k in z.files:
    assert back[k].dtype == z[k].dtype and np.array_equal(back[k], z[k]), (k, back[k])
# Each file read by sciio as hdf5storage reads it (its Python attributes): the numpy bytes;
# sciio's MAT -> MAT copy of hdf5storage's file keeps them, and hdf5storage reads it so too.
a, b, c = np.load(from_ours), np.load(from_theirs), np.load(from_copied)
copy = hdf5storage.loadmat(copied)
for k in z.files:
    for got in (a[k], b[k], c[k], copy[k]):
        assert got.dtype == z[k].dtype and got.shape == z[k].shape, (k, got, z[k])
        assert np.array_equal(got, z[k]), (k, got, z[k])
print("ok")
"#;
    let args = [
        &npz,
        &theirs,
        &ours,
        &from_copied,
        &from_ours,
        &from_theirs,
        &copied,
    ]
    .map(|p| s(p));
    let out = run_python(check, &args);
    assert_eq!(out.trim(), "ok");
}

/// numpy text arrays hdf5storage writes into v7.3 files (char arrays with `Python.*`
/// attributes: each string's units one after another) are read as `hdf5storage.loadmat`
/// returns them, at top level and in a dict (struct); and sciio's own v7.3 file of the same
/// arrays reads back as they were.
#[test]
fn hdf5storage_text_arrays_read_as_hdf5storage_reads_them() {
    let dir = tempdir();
    let (npz, theirs) = (dir.path().join("t.npz"), dir.path().join("theirs.mat"));
    run_python(
        r#"
import sys, numpy as np, hdf5storage
d = {
    'u1': np.array(['ab', 'c']), 'one': np.array(['xyz']), 'e1': np.array(['', '']),
    'em': np.array([], dtype='U3'), 'u2': np.array([['ab', 'c', 'def'], ['g', 'hi', '']]),
    'uf': np.asfortranarray(np.array([['ab', 'c', 'def'], ['g', 'hi', '']])),
    'u3': np.array([[['a', 'bc'], ['d', 'e']], [['f', 'g'], ['h', 'ij']]]),
    'col': np.array([['a'], ['bb']]), 's2': np.array([[b'ab', b'c'], [b'd', b'']]),
    'hi': np.array([b'\x80\xff', b'a']), 'inner': np.array(['a\x00b', 'c']),
    'sc': np.str_('hello'), 'bs': np.bytes_(b'by'),
}
np.savez(sys.argv[1], **d)
d['d'] = {'t': np.array(['p', 'qr']), 'n': np.arange(3)}
hdf5storage.savemat(sys.argv[2], d, format='7.3')
"#,
        &[s(&npz), s(&theirs)],
    );
    let (from_theirs, ours, from_ours) = (
        dir.path().join("from_theirs.npz"),
        dir.path().join("ours.mat"),
        dir.path().join("from_ours.npz"),
    );
    ok(&["convert", s(&theirs), s(&from_theirs)]);
    ok(&["convert", s(&npz), s(&ours)]);
    ok(&["convert", s(&ours), s(&from_ours)]);
    // A MAT -> MAT copy keeps hdf5storage's attributes: hdf5storage reads it as the original.
    let copied = dir.path().join("copied.mat");
    ok(&["convert", s(&theirs), s(&copied)]);
    let check = r#"
import sys, numpy as np, hdf5storage
theirs, from_theirs, npz, from_ours, copied = sys.argv[1:6]
a, b = hdf5storage.loadmat(theirs), hdf5storage.loadmat(copied)
for k in a:
    if k == 'd':
        continue
    assert type(a[k]) == type(b[k]), (k, type(a[k]), type(b[k]))
    assert np.asarray(a[k]).dtype == np.asarray(b[k]).dtype, k
    assert np.asarray(a[k]).shape == np.asarray(b[k]).shape and np.array_equal(a[k], b[k]), k
want = hdf5storage.loadmat(theirs)
got = np.load(from_theirs)
names = [k for k in want if k != 'd'] + ['d/t']
assert sorted(got.files) == sorted(names + ['d/n']), got.files
for k in names:
    w = want['d']['t'] if k == 'd/t' else np.asarray(want[k])
    assert got[k].dtype == w.dtype and got[k].shape == w.shape, (k, got[k], w)
    assert np.array_equal(got[k], w), (k, got[k], w)
z, back = np.load(npz), np.load(from_ours)
for k in z.files:
    assert back[k].dtype == z[k].dtype and back[k].shape == z[k].shape, (k, back[k], z[k])
    assert np.array_equal(back[k], z[k]), (k, back[k], z[k])
print('ok')
"#;
    let args = [&theirs, &from_theirs, &npz, &from_ours, &copied].map(|p| s(p));
    let out = run_python(check, &args);
    assert_eq!(out.trim(), "ok");
}

/// numpy vectors and scalars hdf5storage stores as MATLAB 1×n and 1×1 (its `Python.Shape`
/// `(n,)`, `()`) read with numpy's shapes, as `hdf5storage.loadmat` returns them, at top
/// level, in a dict and streamed when large; without the attributes (MATLAB's view), 1×n
/// stays; sciio's own v7.3 file of 1-d arrays reads back 1-d.
#[test]
fn hdf5storage_vectors_and_scalars_read_with_numpys_shapes() {
    let dir = tempdir();
    let (npz, theirs, plain) = (
        dir.path().join("n.npz"),
        dir.path().join("theirs.mat"),
        dir.path().join("plain.mat"),
    );
    run_python(
        r#"
import sys, numpy as np, hdf5storage
d = {
    'v': np.arange(5.0), 'b': np.array([True, False]), 'c': np.array([1 + 2j, 3]),
    'sc': np.float32(2.5), 'row': np.arange(3).reshape(1, 3), 'col': np.arange(3).reshape(3, 1),
    'm': np.arange(6).reshape(2, 3), 'big': np.arange(3_000_000, dtype=np.int64),
}
np.savez(sys.argv[1], **d)
d['d'] = {'n': np.arange(3), 'x': np.int8(3)}
hdf5storage.savemat(sys.argv[2], d, format='7.3')
hdf5storage.savemat(sys.argv[3], {'v': np.arange(5.0)}, format='7.3', store_python_metadata=False)
"#,
        &[s(&npz), s(&theirs), s(&plain)],
    );
    let converted = |src: &std::path::Path, name: &str| {
        let out = dir.path().join(name);
        ok(&["convert", s(src), s(&out)]);
        out
    };
    let from_theirs = converted(&theirs, "from_theirs.npz");
    let from_plain = converted(&plain, "from_plain.npz");
    let ours = converted(&npz, "ours.mat");
    let from_ours = converted(&ours, "from_ours.npz");
    let big = dir.path().join("big.npy");
    ok(&["convert", &format!("{}:big", s(&theirs)), s(&big)]);
    // A MAT -> MAT copy (`big` streamed) keeps hdf5storage's attributes.
    let copied = converted(&theirs, "copied.mat");
    let check = r#"
import sys, numpy as np, hdf5storage
theirs, from_theirs, from_plain, npz, from_ours, big, copied = sys.argv[1:8]
a, c = hdf5storage.loadmat(theirs), hdf5storage.loadmat(copied)
for k in a:
    if k == 'd':
        continue
    assert type(a[k]) == type(c[k]) and np.asarray(a[k]).shape == np.asarray(c[k]).shape, k
    assert np.asarray(a[k]).dtype == np.asarray(c[k]).dtype and np.array_equal(a[k], c[k]), k
want = hdf5storage.loadmat(theirs)
got = np.load(from_theirs)
for k in got.files:
    w = np.asarray(want['d'][k[2:]] if k.startswith('d/') else want[k])
    assert got[k].shape == w.shape and got[k].dtype == w.dtype, (k, got[k].shape, w.shape)
    assert np.array_equal(got[k], w), k
assert got['v'].shape == (5,) and got['sc'].shape == () and got['d/n'].shape == (3,)
assert np.load(from_plain)['v'].shape == (1, 5)
z, back = np.load(npz), np.load(from_ours)
for k in z.files:
    assert back[k].shape == z[k].shape and np.array_equal(back[k], z[k]), (k, back[k].shape)
b = np.load(big, mmap_mode='r')
assert b.shape == (3_000_000,) and np.array_equal(b, want['big'])
print('ok')
"#;
    let args = [
        &theirs,
        &from_theirs,
        &from_plain,
        &npz,
        &from_ours,
        &big,
        &copied,
    ]
    .map(|p| s(p));
    assert_eq!(run_python(check, &args).trim(), "ok");
}
