//! `sciio convert ... out.h5`: numpy arrays written as PyTables nodes (Table, Array, CArray)
//! that PyTables opens as its own, with the filters `--compress` names, and `.h5 → .h5`
//! repacks like `ptrepack`.
#![cfg(feature = "hdf5")]

use std::path::Path;

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, tempdir};

const MAKE: &str = r#"
import sys, numpy as np
d = sys.argv[1]
np.save(d + "/plain.npy", np.arange(60, dtype="<i4").reshape(3, 4, 5))
np.save(d + "/rows.npy", np.array([(i, i / 4, b"r%d" % i) for i in range(50)],
                                  dtype=[("id", "<i8"), ("x", "<f8"), ("tag", "S3")]))
np.savez(d + "/many.npz", **{"a": np.linspace(0, 1, 1000), "g/b": np.arange(6, dtype="u2"),
                             "g/h/c": np.array([[1 + 2j]])})
"#;

/// Prints, for every leaf of an HDF5 file PyTables opens: path, class, filters, and whether
/// its values equal the numpy array given as `path=file.npy[:member]`.
const CHECK: &str = r#"
import sys, numpy as np, tables
h5 = sys.argv[1]
with tables.open_file(h5) as f:
    for spec in sys.argv[2:]:
        path, src = spec.split("=", 1)
        if ":" in src:
            src, member = src.split(":")
            want = np.load(src)[member]
        else:
            want = np.load(src)
        node = f.get_node(path)
        got = node.read()
        same = got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
        fl = node.filters
        print(path, type(node).__name__, fl.complib if fl.complevel else "-", fl.complevel,
              fl.shuffle, fl.fletcher32, same)
"#;

fn check(h5: &Path, specs: &[String]) -> Vec<String> {
    let mut args = vec![s(h5)];
    args.extend(specs.iter().map(String::as_str));
    run_python(CHECK, &args)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn npy_and_npz_become_pytables_nodes_with_and_without_filters() {
    let dir = tempdir();
    run_python(MAKE, &[s(dir.path())]);
    let plain = dir.path().join("plain.npy");
    let rows = dir.path().join("rows.npy");
    let many = dir.path().join("many.npz");

    let out = dir.path().join("plain.h5");
    ok(&["convert", s(&plain), &format!("{}:/data/cube", s(&out))]);
    let spec = |path: &str, src: &Path| format!("{path}={}", s(src));
    assert_eq!(
        check(&out, &[spec("/data/cube", &plain)]),
        ["/data/cube Array - 0 False False True"]
    );

    let out = dir.path().join("packed.h5");
    ok(&[
        "convert",
        s(&plain),
        &format!("{}:/cube", s(&out)),
        "--compress",
        "shuffle,zlib:5",
    ]);
    assert_eq!(
        check(&out, &[spec("/cube", &plain)]),
        ["/cube CArray zlib 5 True False True"]
    );

    let out = dir.path().join("table.h5");
    ok(&[
        "convert",
        s(&rows),
        &format!("{}:/rows", s(&out)),
        "--compress",
        "fletcher32,bzip2:9",
    ]);
    assert_eq!(
        check(&out, &[spec("/rows", &rows)]),
        ["/rows Table bzip2 9 True True True"]
    );
    let out = dir.path().join("table_plain.h5");
    ok(&["convert", s(&rows), &format!("{}:/rows", s(&out))]);
    assert_eq!(
        check(&out, &[spec("/rows", &rows)]),
        ["/rows Table - 0 False False True"]
    );

    let out = dir.path().join("many.h5");
    ok(&["convert", s(&many), s(&out), "--compress", "blosc2:lz4:5"]);
    let member = |path: &str, name: &str| format!("{path}={}:{name}", s(&many));
    assert_eq!(
        check(
            &out,
            &[
                member("/a", "a"),
                member("/g/b", "g/b"),
                member("/g/h/c", "g/h/c")
            ]
        ),
        [
            "/a CArray blosc2:lz4 5 True False True",
            "/g/b CArray blosc2:lz4 5 True False True",
            "/g/h/c CArray blosc2:lz4 5 True False True",
        ]
    );
    let groups = run_python(
        "import sys, tables\nwith tables.open_file(sys.argv[1]) as f: print(sorted(g._v_pathname for g in f.walk_groups()))",
        &[s(&out)],
    );
    assert_eq!(groups.trim(), "['/', '/g', '/g/h']");
}

#[test]
fn h5_to_h5_repacks_with_new_filters() {
    let dir = tempdir();
    let src = dir.path().join("src.h5");
    run_python(
        r#"
import sys, numpy as np, tables
with tables.open_file(sys.argv[1], "w", title="made by pytables") as f:
    g = f.create_group("/", "grp", "a group")
    f.create_array(g, "ints", np.arange(12, dtype="<i4").reshape(3, 4))
    f.create_carray("/", "floats", obj=np.linspace(0, 1, 2000).reshape(40, 50),
                    filters=tables.Filters(complevel=1, complib="zlib"))
    t = f.create_table("/", "t", {"id": tables.Int64Col(pos=0), "x": tables.Float64Col(pos=1)})
    t.append([(i, i / 3) for i in range(100)])
    t.attrs.note = "kept"
"#,
        &[s(&src)],
    );
    let dst = dir.path().join("repacked.h5");
    ok(&["convert", s(&src), s(&dst), "--compress", "blosc2:lz4:5"]);
    let out = run_python(
        r#"
import sys, numpy as np, tables
with tables.open_file(sys.argv[1]) as a, tables.open_file(sys.argv[2]) as b:
    assert b.title == "made by pytables", b.title
    assert b.root.t.attrs.note == "kept"
    for path in ["/grp/ints", "/floats", "/t"]:
        x, y = a.get_node(path), b.get_node(path)
        assert np.array_equal(x.read(), y.read()), path
        print(path, type(y).__name__, y.filters.complib, y.filters.complevel)
"#,
        &[s(&src), s(&dst)],
    );
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "/grp/ints Array None 0",
            "/floats CArray blosc2:lz4 5",
            "/t Table blosc2:lz4 5",
        ]
    );
}

#[test]
fn unsupported_filters_are_one_line_and_write_nothing() {
    let dir = tempdir();
    run_python(MAKE, &[s(dir.path())]);
    let dst = dir.path().join("x.h5");
    let out = sciio(&[
        "convert",
        s(&dir.path().join("plain.npy")),
        s(&dst),
        "--compress",
        "zstd:3",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("sciio: error: ") && err.contains("zstd"),
        "{err}"
    );
    assert!(!dst.exists());
}
