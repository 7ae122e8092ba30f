//! `sciio` on HDF5 files PyTables writes (the `hdf5` feature, on by default).
#![cfg(feature = "hdf5")]

use std::path::Path;

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, tempdir, wheel_files};

const MAKE: &str = r#"
import sys, numpy as np, tables
with tables.open_file(sys.argv[1], "w") as f:
    g = f.create_group("/", "grp")
    f.create_array(g, "ints", np.arange(12, dtype=">i4").reshape(3, 4))
    f.create_carray(g, "floats", obj=np.linspace(0, 1, 2000).reshape(40, 50),
                    filters=tables.Filters(complevel=5, complib="zlib", shuffle=True),
                    chunkshape=(7, 50))
    e = f.create_earray("/", "grow", atom=tables.Float32Atom(), shape=(0, 3))
    e.append(np.ones((5, 3), dtype=np.float32))
    t = f.create_table("/", "table", {"id": tables.Int64Col(pos=0), "x": tables.Float64Col(pos=1),
                                      "name": tables.StringCol(8, pos=2)})
    t.append([(i, i / 3, b"n%d" % i) for i in range(100)])
    v = f.create_vlarray("/", "ragged", tables.Int32Atom())
    v.append([1, 2, 3]); v.append([4])
    f.create_soft_link("/", "alias", "/grp/ints")
"#;

fn make_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("pt.h5");
    run_python(MAKE, &[s(&path)]);
    path
}

#[test]
fn ls_shows_pytables_nodes() {
    let dir = tempdir();
    let h5 = make_file(dir.path());
    let out = ok(&["ls", s(&h5)]);
    for needle in [
        "hdf5",
        "grp",
        "ints",
        // The dtype PyTables' read() gives (native byte order); the file's `>i4` is in
        // `ls --ptdump` and `info`.
        "<i4",
        "(3, 4)",
        "floats",
        "(40, 50)",
        "grow",
        "(5, 3)",
        "table",
        "('id', '<i8')",
        "(100,)",
        "ragged",
        "VLArray",
        "alias",
        "-> /grp/ints",
    ] {
        assert!(out.contains(needle), "{needle} not in\n{out}");
    }
}

#[test]
fn cat_and_convert_agree_with_pytables() {
    let dir = tempdir();
    let h5 = make_file(dir.path());
    let check = r#"
import sys, numpy as np, tables
h5, node, printed, npy = sys.argv[1:5]
with tables.open_file(h5) as f:
    a = f.get_node(node).read()
assert printed == str(a) + "\n", (printed, str(a))
b = np.load(npy)
# Native byte order, as PyTables' read() gives it (>i4 in the file reads as <i4).
assert b.dtype == a.dtype, (b.dtype, a.dtype)
assert b.shape == a.shape and np.array_equal(a, b), (a, b)
print("ok")
"#;
    for (i, node) in ["/grp/ints", "/grp/floats", "/grow", "/table"]
        .iter()
        .enumerate()
    {
        let target = format!("{}:{node}", s(&h5));
        let printed = ok(&["cat", &target]);
        let npy = dir.path().join(format!("n{i}.npy"));
        ok(&["convert", &target, s(&npy)]);
        let out = run_python(check, &[s(&h5), node, &printed, s(&npy)]);
        assert_eq!(out.trim(), "ok", "{node}");
    }
    // A group into one npz: members named by their path below it.
    let npz = dir.path().join("grp.npz");
    ok(&[
        "convert",
        &format!("{}:/grp", s(&h5)),
        s(&npz),
        "--compress",
        "deflate:1",
    ]);
    let out = run_python(
        "import sys, numpy as np; z = np.load(sys.argv[1]); print(sorted(z.files), z['ints'].dtype)",
        &[s(&npz)],
    );
    // Native byte order, as PyTables' `read()` gives it (issue 13).
    assert_eq!(out.trim(), "['floats', 'ints'] int32");
}

#[test]
fn what_npz_cannot_hold_is_left_out_by_name() {
    let dir = tempdir();
    let h5 = make_file(dir.path());
    let dst = dir.path().join("all.npz");
    let out = sciio(&["convert", s(&h5), s(&dst)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("sciio: left out: /alias (a link to /grp/ints; npz holds no links)"),
        "{err}"
    );
    assert!(dst.exists());
    // --strict: refused before anything is written.
    let strict = dir.path().join("strict.npz");
    let out = sciio(&["convert", s(&h5), s(&strict), "--strict"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/alias") || err.contains("/ragged"), "{err}");
    assert!(!strict.exists());
}

#[test]
fn every_pytables_wheel_file_lists_or_fails_in_one_line() {
    for file in wheel_files("tables/tests", ".h5") {
        let out = sciio(&["ls", s(&file)]);
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => assert!(!out.stdout.is_empty()),
            Some(1) => assert!(
                err.lines().count() == 1 && err.starts_with("sciio: error: "),
                "{}: {err}",
                file.display()
            ),
            other => panic!("{}: exit {other:?}: {err}", file.display()),
        }
    }
}

/// Parses `sciio ls --ptdump -a` output (PyTables' ptdump listing) and compares every
/// node with what PyTables reports for it: class, shape, chunkshape, filters, title, and the
/// names of all attributes (system and user).
const CHECK_PTDUMP: &str = r#"
import ast, re, sys, warnings, tables
warnings.simplefilter("ignore")
h5, listing = sys.argv[1], open(sys.argv[2], encoding="utf-8").read()
lines = listing.splitlines()
# The listing is all there is (no table before it).
assert not any(l.startswith("\u2514") for l in lines), "a table before the listing"
start = 0
STR = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
node_re = re.compile(r"^(?P<path>/\S*) \((?P<cls>[A-Za-z]+)(?P<shape>\([0-9, ]*\))?(?P<short>.*?)\) "
                     r"(?P<title>" + STR + r")(?P<rest>.*)$")
link_re = re.compile(r"^(?P<path>/\S*) \((?P<cls>SoftLink|ExternalLink)\) -> (?P<target>.*)$")
attr_re = re.compile(r"^ {3}[\[ ](?P<name>\S+) := ")
nodes, current = {}, None
for line in lines[start:]:
    if not line.strip():
        continue
    m = link_re.match(line) or node_re.match(line)
    if m:
        current = nodes[m["path"]] = dict(m.groupdict(), attrs=[])
        continue
    if line.startswith("  ") and "._v_attrs (AttributeSet)" in line:
        continue
    a = attr_re.match(line)
    assert a and current is not None, f"unparsed line: {line!r}"
    current["attrs"].append(a["name"])
seen = set()
with tables.open_file(h5) as f:
    for node in f.walk_nodes("/"):
        path = node._v_pathname
        seen.add(path)
        assert path in nodes, f"{path} not listed"
        got = nodes[path]
        cls = type(node).__name__
        assert got["cls"] == cls, (path, got["cls"], cls)
        if isinstance(node, tables.link.Link):
            continue
        assert ast.literal_eval(got["title"]) == node._v_title, (path, got["title"], node._v_title)
        names = set(node._v_attrs._f_list("all"))
        assert set(got["attrs"]) == names, (path, sorted(got["attrs"]), sorted(names))
        rest = got["rest"]
        filters = re.search(r"  filters=(Filters\(.*?\))(  |$)", rest)
        if isinstance(node, tables.Leaf):
            assert ast.literal_eval(got["shape"]) == tuple(node.shape), (path, got["shape"], node.shape)
            chunks = re.search(r"  chunkshape=(\([0-9, ]*\)|None)", rest)
            assert chunks, (path, rest)
            want = None if node.chunkshape is None else tuple(int(c) for c in node.chunkshape)
            assert ast.literal_eval(chunks[1]) == want, (path, chunks[1], want)
            assert filters, (path, rest)
            assert eval(filters[1], {"Filters": tables.Filters}) == node.filters, (path, filters[1], node.filters)
        elif "FILTERS" in node._v_attrs:
            assert filters, (path, rest)
            assert eval(filters[1], {"Filters": tables.Filters}) == node._v_filters, (path, filters[1])
assert set(nodes) == seen, sorted(set(nodes) ^ seen)
print(len(seen))
"#;

#[test]
fn ls_lists_every_node_as_pytables_reports_it() {
    let dir = tempdir();
    let out = sciio_testkit::run_python_script("python/gen_pytables_cases.py", &[s(dir.path())]);
    let mut files: Vec<std::path::PathBuf> = out
        .lines()
        .map(|l| dir.path().join(l.trim()))
        .filter(|p| p.extension().is_some_and(|e| e == "h5"))
        .collect();
    files.push(make_file(dir.path()));
    assert!(files.len() > 10, "{out}");
    for file in &files {
        let listing = ok(&["ls", "--ptdump", "-a", s(file)]);
        let saved = dir.path().join("listing.txt");
        std::fs::write(&saved, &listing).unwrap();
        let checked = run_python(CHECK_PTDUMP, &[s(file), s(&saved)]);
        assert!(
            checked.trim().parse::<usize>().unwrap() > 1,
            "{}",
            file.display()
        );
    }
}

#[test]
fn ls_ptdump_without_a_shows_the_ptdump_lines_without_attributes() {
    let dir = tempdir();
    let h5 = make_file(dir.path());
    // One view by default: the table, not a second listing of the same nodes.
    let table = ok(&["ls", s(&h5)]);
    assert!(table.contains("└── "), "{table}");
    assert!(!table.contains("(CArray("), "{table}");
    let out = ok(&["ls", "--ptdump", s(&h5)]);
    assert!(
        out.contains("/grp/floats (CArray(40, 50)shuffle, zlib(5)) ''"),
        "{out}"
    );
    assert!(out.contains("chunkshape=(7, 50)"), "{out}");
    assert!(!out.contains("_v_attrs"), "{out}");
    // A node of the file: only its subtree.
    let sub = ok(&["ls", "--ptdump", "-a", &format!("{}:/grp", s(&h5))]);
    assert!(sub.contains("/grp/ints (Array(3, 4)) ''"), "{sub}");
    assert!(!sub.contains("/table ("), "{sub}");
    assert!(sub.contains("CLASS := 'ARRAY'"), "{sub}");
}

#[test]
fn ls_a_is_accepted_for_every_format() {
    let dir = tempdir();
    let npy = dir.path().join("a.npy");
    let npz = dir.path().join("a.npz");
    run_python(
        "import sys, numpy as np\n\
         np.save(sys.argv[1], np.arange(3))\n\
         np.savez(sys.argv[2], x=np.arange(2))",
        &[s(&npy), s(&npz)],
    );
    for f in [&npy, &npz] {
        let plain = ok(&["ls", s(f)]);
        let with_attrs = ok(&["ls", "-a", s(f)]);
        assert!(with_attrs.starts_with(&plain), "{with_attrs}");
        assert!(with_attrs.ends_with("no attributes\n"), "{with_attrs}");
    }
}
