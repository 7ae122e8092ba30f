//! PyTables VLArrays: `sciio cat` prints them as Python prints `node.read()`; strings read
//! as one `S`/`U` array (`np.array(node.read())`), rows of numbers one array per row
//! (`File::read_rows`), written to .npz one member per row (`sciio::vlarray`); pickled rows
//! are refused.
#![cfg(feature = "hdf5")]

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, tempdir};

const MAKE: &str = r#"
import sys, numpy as np, tables
with tables.open_file(sys.argv[1], "w") as f:
    v = f.create_vlarray("/", "ints", tables.Int32Atom())
    v.append([1, 2, 3]); v.append([]); v.append([-7])
    v = f.create_vlarray("/", "floats", tables.Float64Atom())
    v.append([0.5, 1.25]); v.append([3.0])
    v = f.create_vlarray("/", "pairs", tables.Int16Atom(shape=(2,)))
    v.append([[1, 2], [3, 4]]); v.append(np.zeros((0, 2), "i2"))
    v = f.create_vlarray("/", "flags", tables.BoolAtom())
    v.append([True, False]); v.append([True])
    v = f.create_vlarray("/", "bytes", tables.VLStringAtom())
    v.append(b"abc"); v.append(b""); v.append(b"x'y")
    v = f.create_vlarray("/", "text", tables.VLUnicodeAtom())
    v.append("h\u00e9llo"); v.append("")
    v = f.create_vlarray("/", "big", tables.Int32Atom(), byteorder="big")
    v.append([1, 256])
    v = f.create_vlarray("/", "pickles", tables.ObjectAtom())
    v.append({"a": 1})
"#;

#[test]
fn cat_prints_vlarrays_as_python_prints_node_read() {
    let dir = tempdir();
    let h5 = dir.path().join("vl.h5");
    run_python(MAKE, &[s(&h5)]);
    for node in ["ints", "floats", "pairs", "flags", "bytes", "text", "big"] {
        let printed = ok(&["cat", &format!("{}:/{node}", s(&h5))]);
        let want = run_python(
            "import sys, tables\nwith tables.open_file(sys.argv[1]) as f: print(f.get_node(sys.argv[2]).read())",
            &[s(&h5), &format!("/{node}")],
        );
        assert_eq!(printed, want, "{node}");
    }
    let refused = sciio(&["cat", &format!("{}:/pickles", s(&h5))]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("never unpickles"));
    let json = ok(&["cat", &format!("{}:/ints", s(&h5)), "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["rows"].as_array().unwrap().len(), 3);
    assert_eq!(doc["rows"][0]["values"], serde_json::json!([1, 2, 3]));
}

#[test]
fn strings_read_as_one_array_and_rows_as_npz_members() {
    let dir = tempdir();
    let h5 = dir.path().join("vl.h5");
    run_python(MAKE, &[s(&h5)]);
    let mut file = sciio::File::open(&h5).unwrap();
    sciio::npy::write_file(
        dir.path().join("bytes.npy"),
        &file.read_array("/bytes").unwrap(),
    )
    .unwrap();
    sciio::npy::write_file(
        dir.path().join("text.npy"),
        &file.read_array("/text").unwrap(),
    )
    .unwrap();
    // Rows of numbers have no single shape: read_array refuses, read_rows reads them.
    assert!(file.read_array("/ints").is_err());
    let npz = dir.path().join("rows.npz");
    let mut out = sciio::npy::npz::NpzWriter::create(&npz).unwrap();
    for node in ["/ints", "/pairs", "/big"] {
        let rows = file.read_rows(node).unwrap();
        sciio::vlarray::write_npz_rows(&mut out, node, rows).unwrap();
    }
    out.finish().unwrap();
    assert_eq!(
        file.read_rows("/pickles").unwrap_err().kind(),
        sciio::ErrorKind::Refused
    );
    let out = run_python(
        r#"
import sys, numpy as np, tables
h5, d = sys.argv[1:]
z = np.load(d + "/rows.npz")
with tables.open_file(h5) as f:
    for node in ["bytes", "text"]:
        want = np.array(f.get_node("/" + node).read())
        got = np.load(f"{d}/{node}.npy")
        assert got.dtype == want.dtype and np.array_equal(got, want), (node, got, want)
    names = []
    for node in ["ints", "pairs", "big"]:
        rows = f.get_node("/" + node).read()
        for i, want in enumerate(rows):
            name = f"{node}/row_{i:06d}"
            names.append(name)
            got = z[name]
            assert got.dtype == want.dtype and got.shape == want.shape, (name, got, want)
            assert np.array_equal(got, want), (name, got, want)
    assert sorted(z.files) == sorted(names), (z.files, names)
print("ok")
"#,
        &[s(&h5), s(dir.path())],
    );
    assert_eq!(out.trim(), "ok");
}

#[test]
fn h5py_variable_length_datasets_print_as_h5py_reads_them() {
    let dir = tempdir();
    let h5 = dir.path().join("h5py_vl.h5");
    run_python(
        r#"
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], "w") as f:
    f["s"] = [b"a", b"bcd"]
    f.create_dataset("s2", data=np.array([[b"x", b"yy"], [b"z", b""]], dtype=object),
                     dtype=h5py.string_dtype("ascii"))
    d = f.create_dataset("vi", (3,), dtype=h5py.vlen_dtype("int32"))
    d[0] = [1, 2]; d[1] = []; d[2] = [3]
"#,
        &[s(&h5)],
    );
    for (node, how) in [
        ("s", "print(d[()])"),
        ("s2", "print(d[()])"),
        // rows of numbers: a list of arrays, as PyTables prints a VLArray's rows
        ("vi", "print(list(d[()]))"),
    ] {
        let printed = ok(&["cat", &format!("{}:/{node}", s(&h5))]);
        let code = format!(
            "import sys, h5py\nwith h5py.File(sys.argv[1]) as f:\n    d = f[sys.argv[2]]\n    {how}"
        );
        let want = run_python(&code, &[s(&h5), node]);
        assert_eq!(printed, want, "{node}");
    }
}

#[test]
fn convert_carries_vlarrays_to_npy_npz_and_parquet() {
    let dir = tempdir();
    let d = dir.path();
    let h5 = d.join("vl.h5");
    run_python(MAKE, &[s(&h5)]);
    let src = |node: &str| format!("{}:/{node}", s(&h5));
    // Strings: one S/U array in .npy and .npz.
    ok(&["convert", &src("bytes"), s(&d.join("bytes.npy"))]);
    ok(&["convert", &src("text"), s(&d.join("text.npz"))]);
    // Rows of numbers: one npz member per row, a Parquet list column.
    ok(&["convert", &src("ints"), s(&d.join("ints.npz"))]);
    for node in ["ints", "pairs", "big", "flags", "floats"] {
        ok(&["convert", &src(node), s(&d.join(format!("{node}.parquet")))]);
    }
    // The whole file: everything but the pickles, which are left out and said so.
    let whole = sciio(&["convert", s(&h5), s(&d.join("all.npz"))]);
    assert!(whole.status.success(), "{whole:?}");
    let stderr = String::from_utf8_lossy(&whole.stderr);
    assert!(
        stderr.contains("/pickles") && stderr.contains("never unpickled"),
        "{stderr}"
    );
    // Rows have no single array for .npy; pickled rows are never unpickled.
    for (node, dst, why) in [
        ("ints", "ints.npy", "holds no rows of variable length"),
        ("pickles", "p.npz", "never unpickled"),
        ("pickles", "p.parquet", "never unpickled"),
    ] {
        let out = sciio(&["convert", &src(node), s(&d.join(dst))]);
        assert!(!out.status.success(), "{node} -> {dst}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{node} -> {dst}: {err}");
        assert!(!d.join(dst).exists());
    }
    let out = run_python(
        r#"
import sys, numpy as np, pyarrow.parquet as pq, tables
h5, d = sys.argv[1:]
def same(got, want, what):
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got, want)
    assert np.array_equal(got, want), (what, got, want)
with tables.open_file(h5) as f:
    read = lambda n: f.get_node("/" + n).read()
    same(np.load(d + "/bytes.npy"), np.array(read("bytes")), "bytes.npy")
    same(np.load(d + "/text.npz")["text"], np.array(read("text")), "text.npz")
    z = np.load(d + "/ints.npz")
    assert z.files == [f"ints/row_{i:06d}" for i in range(3)], z.files
    for i, want in enumerate(read("ints")):
        same(z[f"ints/row_{i:06d}"], want, f"ints row {i}")
    for n in ["ints", "pairs", "big", "flags", "floats"]:
        t = pq.read_table(f"{d}/{n}.parquet")
        assert t.column_names == [n], t.column_names
        want = [r.tolist() for r in read(n)]
        assert t.column(n).to_pylist() == want, (n, t.column(n).to_pylist(), want)
    z = np.load(d + "/all.npz")
    names = []
    for n in ["ints", "floats", "pairs", "flags", "big"]:
        for i, want in enumerate(read(n)):
            names.append(f"{n}/row_{i:06d}")
            same(z[names[-1]], want, names[-1])
    for n in ["bytes", "text"]:
        names.append(n)
        same(z[n], np.array(read(n)), n)
    assert sorted(z.files) == sorted(names), (z.files, names)
print("ok")
"#,
        &[s(&h5), s(d)],
    );
    assert_eq!(out.trim(), "ok");
}

/// A numeric VLArray with no row still has a type (its atom's): it becomes a list column of
/// that type with no row; and a file whose one leaf is a VLArray converts whole to .parquet.
#[test]
fn vlarrays_with_no_row_and_files_of_one_vlarray_become_parquet() {
    let dir = tempdir();
    let d = dir.path();
    let h5 = d.join("empty.h5");
    let only = d.join("only.h5");
    run_python(
        r#"
import sys, numpy as np, tables
with tables.open_file(sys.argv[1], "w") as f:
    f.create_vlarray("/", "none", tables.Int32Atom())
    f.create_vlarray("/", "pairs", tables.Float32Atom(shape=(2,)), byteorder="big")
    f.create_vlarray("/", "flags", tables.BoolAtom())
with tables.open_file(sys.argv[2], "w") as f:
    g = f.create_group("/", "g")
    v = f.create_vlarray(g, "rows", tables.UInt16Atom())
    v.append([1, 2]); v.append([]); v.append([65535])
"#,
        &[s(&h5), s(&only)],
    );
    for node in ["none", "pairs", "flags"] {
        ok(&[
            "convert",
            &format!("{}:/{node}", s(&h5)),
            s(&d.join(format!("{node}.parquet"))),
        ]);
    }
    ok(&["convert", s(&only), s(&d.join("only.parquet"))]);
    let out = run_python(
        r#"
import sys, pyarrow as pa, pyarrow.parquet as pq, tables
d, only = sys.argv[1:]
want = {"none": pa.list_(pa.int32()), "pairs": pa.list_(pa.list_(pa.float32(), 2)),
        "flags": pa.list_(pa.bool_())}
for n, ty in want.items():
    t = pq.read_table(f"{d}/{n}.parquet")
    assert t.num_rows == 0 and t.column_names == [n], (n, t)
    got = t.schema.field(n).type
    assert got.equals(ty) or str(got).replace("element", "item") == str(ty), (n, got, ty)
t = pq.read_table(f"{d}/only.parquet")
with tables.open_file(only) as f:
    rows = [r.tolist() for r in f.root.g.rows.read()]
assert t.column_names == ["rows"] and t.column("rows").to_pylist() == rows, (t, rows)
assert t.schema.field("rows").type.value_type == pa.uint16(), t.schema
print("ok")
"#,
        &[s(d), s(&only)],
    );
    assert_eq!(out.trim(), "ok");
}
