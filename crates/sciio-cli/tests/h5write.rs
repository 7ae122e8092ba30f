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

/// A PyTables file with a group holding user attributes of many HDF5 types, titled leaves of
/// both flavors, a nested group, a relative soft link and an external link. (`ptrepack`
/// itself fails on absolute soft links inside a copied group: it resolves them against the
/// copied group as root.)
const MAKE_NODES: &str = r#"
import sys, numpy as np, tables as tb
with tb.open_file(sys.argv[1], "w", title="src file") as f:
    f.root._v_attrs.rootattr = 1
    g = f.create_group("/", "grp", title="the group", filters=tb.Filters(3, "zlib"))
    a = g._v_attrs
    a.i = np.int32(3); a.f = 1.5; a.s = "h\u00e9llo"; a.b = b"xx"; a.arr = np.arange(3)
    a.c = np.complex64(1 + 2j); a.u8 = np.uint8(200); a.flag = np.bool_(True)
    a.sarr = np.array([b"ab", b"c"]); a.rec = np.array([(1, 2.5)], dtype=[("x", "i4"), ("y", "f8")])
    a.empty = np.array([], dtype="f4"); a.f2d = np.ones((2, 3), dtype="f2")
    t = f.create_table(g, "t", {"x": tb.Int32Col(), "y": tb.Float64Col()}, title="a table")
    t.append([(1, 2.0), (3, 4.0)]); t._v_attrs.unit = "m"
    arr = f.create_array(g, "pyarr", [1, 2, 3], title="python list")
    arr._v_attrs.note = np.float32(0.5)
    f.create_array(g, "nparr", np.arange(6.).reshape(2, 3), title="np")
    sub = f.create_group(g, "sub", title="sub group")
    sub._v_attrs.depth = 2
    e = f.create_earray(sub, "e", tb.Int16Atom(), (0, 2), title="grows")
    e.append(np.ones((5, 2), "i2"))
    e._v_attrs.when = np.array([1.5, 2.5])
    f.create_vlarray(sub, "v", tb.Int32Atom(), title="ragged").append([1, 2, 3])
    f.create_soft_link(g, "soft_rel", "sub/e")
    f.create_external_link(g, "ext", "other.h5:/x")
    f.create_array("/", "outside", np.arange(3))
"#;

/// Compares two HDF5 files node by node (h5py, links not followed): the same paths, link
/// kinds and targets, attributes (names, values, HDF5 type class/size/shape) and values;
/// prints the differences, or OK.
const SAME_AS_PTREPACK: &str = r#"
import sys, numpy as np, h5py, tables as tb
ref, ours = sys.argv[1], sys.argv[2]

def entries(path):
    out = {}
    with h5py.File(path) as f:
        def walk(g, prefix):
            for name in g:
                link = g.get(name, getlink=True)
                p = prefix + "/" + name
                if isinstance(link, h5py.SoftLink):
                    out[p] = ("soft", link.path)
                elif isinstance(link, h5py.ExternalLink):
                    out[p] = ("external", link.filename, link.path)
                else:
                    obj = g[name]
                    out[p] = ("group" if isinstance(obj, h5py.Group) else "dataset", attrs(obj))
                    if isinstance(obj, h5py.Group):
                        walk(obj, p)
        out["/"] = ("group", attrs(f))
        walk(f, "")
    return out

def attrs(obj):
    res = {}
    for name in obj.attrs:
        a = h5py.h5a.open(obj.id, name.encode())
        t = a.get_type()
        value = obj.attrs[name]
        res[name] = (repr(value), t.get_class(), t.get_size(), a.get_space().get_simple_extent_type(), a.shape)
    return res

problems = []
r, o = entries(ref), entries(ours)
if sorted(r) != sorted(o):
    problems.append(f"paths {sorted(o)} vs {sorted(r)}")
for p in r:
    if p in o and r[p] != o[p]:
        if r[p][0] == o[p][0] and isinstance(r[p][1], dict):
            for k in sorted(set(r[p][1]) | set(o[p][1])):
                if r[p][1].get(k) != o[p][1].get(k):
                    problems.append(f"{p}.{k}: {o[p][1].get(k)} vs {r[p][1].get(k)}")
        else:
            problems.append(f"{p}: {o[p]} vs {r[p]}")
with tb.open_file(ref) as a, tb.open_file(ours) as b:
    for leaf in a.walk_nodes("/", "Leaf"):
        other = b.get_node(leaf._v_pathname)
        if type(other) is not type(leaf) or other.title != leaf.title or other.flavor != leaf.flavor:
            problems.append(f"{leaf._v_pathname}: {type(other).__name__} {other.title!r} {other.flavor}")
        x, y = leaf.read(), other.read()
        if isinstance(leaf, tb.VLArray):
            same = len(x) == len(y) and all(np.array_equal(u, v) for u, v in zip(x, y))
        else:
            same = np.array_equal(np.asarray(x), np.asarray(y))
        if not same or repr(leaf.filters) != repr(other.filters):
            problems.append(f"{leaf._v_pathname}: values or filters {other.filters!r} vs {leaf.filters!r}")
print("\n".join(problems) or "OK")
"#;

/// Runs `ptrepack` from the venv (the reference) with `args`.
fn ptrepack(args: &[&str]) {
    let exe = sciio_testkit::python().with_file_name("ptrepack");
    let out = sciio_testkit::venv_command(&exe)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    assert!(
        out.status.success(),
        "ptrepack {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn h5_nodes_copy_attributes_titles_flavors_and_links_like_ptrepack() {
    let dir = tempdir();
    let src = dir.path().join("src.h5");
    run_python(MAKE_NODES, &[s(&src)]);
    let cases: [(&str, &str, &[&str]); 4] = [
        ("/grp", "/dst", &[]),
        // (ptrepack refuses blosc2 for the VLArray below, so zlib here.)
        ("/grp", "/a/b", &["--compress", "shuffle,zlib:1"]),
        ("/grp/pyarr", "/x", &[]),
        ("/grp/sub/e", "/y", &["--compress", "shuffle,zlib:5"]),
    ];
    for (i, (node, dst_node, compress)) in cases.iter().enumerate() {
        let reference = dir.path().join(format!("ref{i}.h5"));
        let ours = dir.path().join(format!("ours{i}.h5"));
        let mut pt = vec![
            format!("{}:{node}", s(&src)),
            format!("{}:{dst_node}", s(&reference)),
        ];
        if let ["--compress", spec] = compress {
            let (lib, level) = spec
                .trim_start_matches("shuffle,")
                .rsplit_once(':')
                .unwrap();
            pt.extend([
                "--complevel".into(),
                level.into(),
                "--complib".into(),
                lib.into(),
            ]);
        }
        ptrepack(&pt.iter().map(String::as_str).collect::<Vec<_>>());
        let dst_arg = format!("{}:{dst_node}", s(&ours));
        let mut args = vec!["convert", &pt[0], &dst_arg];
        args.extend_from_slice(compress);
        ok(&args);
        let out = run_python(SAME_AS_PTREPACK, &[s(&reference), s(&ours)]);
        assert_eq!(out.trim(), "OK", "{node} -> {dst_node} {compress:?}");
    }
}

#[test]
fn a_full_disk_is_one_line_and_leaves_the_destination_absent_or_intact() {
    let dir = tempdir();
    // 2 MiB of noise: more than the 512 KiB disk holds, compressed or not.
    let big = dir.path().join("big.npy");
    run_python(
        "import sys, numpy as np\nnp.save(sys.argv[1], np.random.default_rng(1).normal(size=(512, 512)))",
        &[s(&big)],
    );
    // The full disk: sciio runs with its files limited to 512 KiB (RLIMIT_FSIZE, SIGXFSZ
    // ignored), so a write past that fails with EFBIG as it would with ENOSPC. No root needed.
    let disk = tempdir();
    let sciio_on_small_disk = |args: &[&str]| {
        sciio_testkit::child_command("bash")
            .arg("-c")
            .arg("trap '' XFSZ; ulimit -f 512; exec \"$0\" \"$@\"")
            .arg(env!("CARGO_BIN_EXE_sciio"))
            .args(args)
            .output()
            .expect("cannot run sciio under bash")
    };
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(disk.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };

    let dst = disk.path().join("new.h5");
    for compress in [None, Some("shuffle,zlib:1")] {
        let mut args = vec!["convert", s(&big), s(&dst)];
        args.extend(compress.iter().flat_map(|c| ["--compress", c]));
        let out = sciio_on_small_disk(&args);
        assert_eq!(out.status.code(), Some(1), "{compress:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("sciio: error: ") && err.contains("new.h5"),
            "{err}"
        );
        assert!(!dst.exists());
        assert_eq!(listing(), Vec::<String>::new(), "partial files left");
    }

    let small = dir.path().join("small.npy");
    run_python(
        "import sys, numpy as np\nnp.save(sys.argv[1], np.arange(10))",
        &[s(&small)],
    );
    let old = disk.path().join("old.h5");
    ok(&["convert", s(&small), s(&old)]);
    let before = std::fs::read(&old).unwrap();
    let out = sciio_on_small_disk(&["convert", s(&big), s(&old)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
    assert_eq!(std::fs::read(&old).unwrap(), before);
    assert_eq!(listing(), ["old.h5"], "partial files left");
}
