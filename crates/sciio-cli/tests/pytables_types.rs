//! PyTables' types as `node.read()` returns them, through `sciio cat` and `sciio convert`,
//! each checked against PyTables or h5py: bool, byte order, hard and soft links, long double
//! (`<f16`), LZF (h5py's filter 32000, read and written) and compounds stored with their
//! fields out of offset order.
#![cfg(feature = "hdf5")]

use std::path::Path;

mod common;
use common::{ok, s};

use sciio_testkit::{run_python, tempdir};

/// Runs `check` (Python) with `args`; it prints "ok" when sciio's output matches.
fn check(code: &str, args: &[&str]) {
    let out = run_python(code, args);
    assert_eq!(out.trim(), "ok", "{out}");
}

fn npy(dir: &Path, name: &str) -> String {
    s(&dir.join(name)).to_string()
}

#[test]
fn bools_read_and_round_trip_as_bool() {
    let dir = tempdir();
    let d = dir.path();
    let h5 = npy(d, "b.h5");
    run_python(
        r#"
import sys, numpy as np, tables
with tables.open_file(sys.argv[1], "w") as f:
    f.create_array("/", "a", np.array([True, False, True]))
    f.create_table("/", "t", np.array([(True, 1), (False, 2)], dtype=[("b", "?"), ("i", "<i4")]))
"#,
        &[&h5],
    );
    assert_eq!(ok(&["cat", &format!("{h5}:/a")]), "[ True False  True]\n");
    ok(&["convert", &format!("{h5}:/a"), &npy(d, "a.npy")]);
    ok(&["convert", &format!("{h5}:/t"), &npy(d, "t.npy")]);
    // bool.npy -> .h5 -> .npy stays bool; PyTables reads sciio's .h5 as bool too.
    ok(&["convert", &npy(d, "a.npy"), &npy(d, "back.h5")]);
    ok(&["convert", &npy(d, "back.h5"), &npy(d, "back.npy")]);
    check(
        r#"
import sys, numpy as np, tables
h5, a, t, back_h5, back = sys.argv[1:]
with tables.open_file(h5) as f:
    ra, rt = f.root.a.read(), f.root.t.read()
with tables.open_file(back_h5) as f:
    rb = [n for n in f.walk_nodes("/", "Leaf")][0].read()
for want, got in [(ra, np.load(a)), (rt, np.load(t)), (ra, np.load(back)), (ra, rb)]:
    assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)
assert np.load(a).dtype == np.bool_ and rt.dtype["b"] == np.bool_ and rb.dtype == np.bool_
print("ok")
"#,
        &[
            &h5,
            &npy(d, "a.npy"),
            &npy(d, "t.npy"),
            &npy(d, "back.h5"),
            &npy(d, "back.npy"),
        ],
    );
}

const H5PY_FILE: &str = r#"
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], "w") as f:
    f["be_f8"] = (np.arange(6).reshape(2, 3) / 4).astype(">f8")
    f["be_i4"] = (np.arange(5) - 2).astype(">i4")
    f["be_table"] = np.array([(1, 2.5), (-3, 4.0)], dtype=[("a", ">i4"), ("b", ">f8")])
    ooo = np.dtype({"names": ["b", "a"], "formats": ["<i4", "<f8"], "offsets": [8, 0], "itemsize": 16})
    d = np.zeros(3, ooo); d["a"] = [1.5, 2.5, 3.5]; d["b"] = [4, 5, 6]
    f["ooo"] = d
    f["ld"] = np.array([1, 2.5, -1e300], dtype=np.longdouble) / 3
    g = f.create_group("g")
    g["x"] = np.arange(4, dtype="<i2")
    f["g2"] = g                            # a second hard link to the group
    f["soft"] = h5py.SoftLink("/g/x")
    f["softg"] = h5py.SoftLink("/g")
    f["g"]["rel"] = h5py.SoftLink("x")     # relative to its group
    rng = np.random.default_rng(1)
    data = np.concatenate([np.repeat(np.arange(500, dtype="<i8"), 7), rng.integers(0, 2**62, 1500)])
    f.create_dataset("lzf", data=data, chunks=(1000,), compression="lzf")
"#;

#[test]
fn byte_order_compound_order_long_double_and_links_read_as_pytables_reads_them() {
    let dir = tempdir();
    let d = dir.path();
    let h5 = npy(d, "f.h5");
    run_python(H5PY_FILE, &[&h5]);
    let nodes = [
        "/be_f8",
        "/be_i4",
        "/be_table",
        "/ooo",
        "/ld",
        "/g2/x",
        "/soft",
        "/softg/x",
        "/g/rel",
    ];
    let mut args = vec![h5.clone()];
    for (i, node) in nodes.iter().enumerate() {
        let out = npy(d, &format!("n{i}.npy"));
        ok(&["convert", &format!("{h5}:{node}"), &out]);
        let printed = ok(&["cat", &format!("{h5}:{node}")]);
        assert!(!printed.trim().is_empty(), "{node}");
        args.push(node.to_string());
        args.push(out);
    }
    // The file's own layout stays available through the library.
    let mut file = sciio::File::open(&h5).unwrap();
    for (node, stored, native) in [
        ("/be_f8", ">f8", "<f8"),
        ("/be_i4", ">i4", "<i4"),
        (
            "/be_table",
            "[('a', '>i4'), ('b', '>f8')]",
            "[('a', '<i4'), ('b', '<f8')]",
        ),
    ] {
        let as_stored = file.read_array_as_stored(node).unwrap();
        assert_eq!(as_stored.dtype().to_string(), stored, "{node}");
        assert_eq!(
            file.read_array(node).unwrap().dtype().to_string(),
            native,
            "{node}"
        );
    }
    // The out-of-order compound as stored: b at 8, a at 0 (numpy has no descr for it).
    let sciio::DType::Record(stored) = file.read_array_as_stored("/ooo").unwrap().dtype().clone()
    else {
        panic!("/ooo is not a record");
    };
    let fields: Vec<(&str, usize)> = stored
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.offset))
        .collect();
    assert_eq!((fields, stored.itemsize), (vec![("b", 8), ("a", 0)], 16));
    assert_eq!(
        file.read_array("/ooo").unwrap().dtype().to_string(),
        "[('a', '<f8'), ('b', '<i4'), ('', '|V4')]"
    );
    let listed = ok(&["ls", &format!("{h5}:/softg")]);
    assert!(listed.contains('x'), "{listed}");
    // ls follows links too, in its tree and in its ptdump listing.
    for node in ["/g2/x", "/softg/x", "/g/rel", "/soft"] {
        let listed = ok(&["ls", "--ptdump", &format!("{h5}:{node}")]);
        assert!(listed.contains("/g/x (Array(4,))"), "{node}: {listed}");
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check(
        r#"
import sys, numpy as np, tables
h5 = sys.argv[1]
pairs = list(zip(sys.argv[2::2], sys.argv[3::2]))
with tables.open_file(h5) as f:
    for node, path in pairs:
        want = f.get_node(node)
        want = want().read() if hasattr(want, "target") else want.read()
        got = np.load(path)
        assert got.dtype == want.dtype, (node, got.dtype, want.dtype)
        assert got.dtype.isnative or got.dtype.names, (node, got.dtype)
        assert got.shape == want.shape and got.tobytes() == np.ascontiguousarray(want).tobytes(), (node, got, want)
        if node == "/ld":
            assert got.dtype == np.longdouble, got.dtype
        if node == "/ooo":
            assert got.dtype.names == ("a", "b"), got.dtype  # offset order, as PyTables reads it
print("ok")
"#,
        &args,
    );
}

#[test]
fn lzf_reads_what_h5py_writes_and_h5py_reads_what_sciio_writes() {
    let dir = tempdir();
    let d = dir.path();
    let h5 = npy(d, "f.h5");
    run_python(H5PY_FILE, &[&h5]);
    ok(&["convert", &format!("{h5}:/lzf"), &npy(d, "lzf.npy")]);
    assert!(ok(&["ls", &h5]).contains("lzf"));
    // sciio writes LZF (h5py's filter 32000, with and without shuffle).
    ok(&[
        "convert",
        &npy(d, "lzf.npy"),
        &npy(d, "out.h5"),
        "--compress",
        "lzf",
    ]);
    ok(&[
        "convert",
        &npy(d, "lzf.npy"),
        &npy(d, "out2.h5"),
        "--compress",
        "noshuffle,lzf",
    ]);
    // Data LZF cannot shrink (16384 random int64: two whole chunks of 8192): each chunk is
    // stored unfiltered (its filter-mask bit set), as h5py's filter leaves it.
    run_python(
        "import sys, numpy as np; np.save(sys.argv[1], np.random.default_rng(2).integers(0, 2**63, 16384))",
        &[&npy(d, "noise.npy")],
    );
    ok(&[
        "convert",
        &npy(d, "noise.npy"),
        &npy(d, "noise.h5"),
        "--compress",
        "noshuffle,lzf",
    ]);
    check(
        r#"
import sys, numpy as np, h5py
with h5py.File(sys.argv[1]) as f:
    (name,) = list(f)
    ds = f[name]
    masks = {ds.id.get_chunk_info(i).filter_mask for i in range(ds.id.get_num_chunks())}
    assert ds.compression == "lzf" and masks == {1}, (ds.compression, masks)
    assert np.array_equal(ds[()], np.load(sys.argv[2]))
print("ok")
"#,
        &[&npy(d, "noise.h5"), &npy(d, "noise.npy")],
    );
    ok(&["convert", &npy(d, "noise.h5"), &npy(d, "noise_back.npy")]);
    check(
        "import sys, numpy as np; assert np.array_equal(np.load(sys.argv[1]), np.load(sys.argv[2])); print('ok')",
        &[&npy(d, "noise.npy"), &npy(d, "noise_back.npy")],
    );
    // sciio reads its own LZF files back.
    ok(&["convert", &npy(d, "out.h5"), &npy(d, "back.npy")]);
    ok(&["convert", &npy(d, "out2.h5"), &npy(d, "back2.npy")]);
    check(
        r#"
import sys, numpy as np, h5py
h5, got, out, out2, back, back2 = sys.argv[1:]
with h5py.File(h5) as f:
    want = f["lzf"][()]
for path in (got, back, back2):
    assert np.array_equal(np.load(path), want) and np.load(path).dtype == want.dtype, path
for path, shuffled in [(out, True), (out2, False)]:
    with h5py.File(path) as f:
        (name,) = list(f)
        ds = f[name]
        assert ds.compression == "lzf", ds.compression
        assert ds.shuffle == shuffled, ds.shuffle
        assert np.array_equal(ds[()], want) and ds.dtype == want.dtype
        # the compressible chunks are smaller on disk; the random ones are stored unfiltered
        assert ds.id.get_storage_size() < want.nbytes, (ds.id.get_storage_size(), want.nbytes)
print("ok")
"#,
        &[
            &h5,
            &npy(d, "lzf.npy"),
            &npy(d, "out.h5"),
            &npy(d, "out2.h5"),
            &npy(d, "back.npy"),
            &npy(d, "back2.npy"),
        ],
    );
}
