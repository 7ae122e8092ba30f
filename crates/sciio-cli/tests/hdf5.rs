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
        ">i4",
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
# sciio keeps the file's byte order (>i4 stays >i4, as h5py reads it); PyTables' read()
# converts to native order. Same values, same type otherwise.
assert b.dtype.newbyteorder("=") == a.dtype.newbyteorder("="), (b.dtype, a.dtype)
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
    assert_eq!(out.trim(), "['floats', 'ints'] >i4");
}

#[test]
fn what_npz_cannot_hold_is_refused_by_name() {
    let dir = tempdir();
    let h5 = make_file(dir.path());
    let dst = dir.path().join("all.npz");
    let out = sciio(&["convert", s(&h5), s(&dst)]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/alias") || err.contains("/ragged"), "{err}");
    assert!(!dst.exists());
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
