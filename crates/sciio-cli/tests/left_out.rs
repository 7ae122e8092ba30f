//! A conversion is a plan: what the destination cannot hold is left out with a reason, listed
//! on stderr after the conversion (exit status 0); `--strict` refuses it before anything is
//! written. Each kind of left-out item, and the mappings that replaced refusals (attributes as
//! Parquet metadata, subarray fields and n-d arrays as fixed-size list columns, frames as
//! structured .npy, empty .npz), checked with numpy, PyTables, pandas and pyarrow.
#![cfg(all(feature = "hdf5", feature = "parquet", feature = "mat"))]

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, tempdir};

/// Runs a conversion that must succeed; returns its stderr lines.
fn converts(args: &[&str]) -> Vec<String> {
    let out = sciio(args);
    assert_eq!(out.status.code(), Some(0), "sciio {args:?}: {out:?}");
    String::from_utf8(out.stderr)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs `args` plus `--strict` onto `dst`, which holds old bytes: the conversion fails in one
/// line naming `--strict` and `expect`, and `dst` keeps its old bytes.
fn strict_refuses(args: &[&str], dst: &Path, expect: &str) {
    std::fs::write(dst, b"old bytes").unwrap();
    let mut args = args.to_vec();
    args.push("--strict");
    let out: Output = sciio(&args);
    assert_eq!(out.status.code(), Some(1), "sciio {args:?}: {out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("sciio: error: ") && err.contains("--strict") && err.contains(expect),
        "{err}"
    );
    assert_eq!(std::fs::read(dst).unwrap(), b"old bytes");
}

/// An h5py file with a root attribute, a group attribute and two attributes on a dataset.
fn h5py_with_attributes(dir: &Path) -> PathBuf {
    let path = dir.join("attrs.h5");
    run_python(
        r#"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.attrs["creator"] = "lab"
    g = f.create_group("g")
    g.attrs["run"] = 7
    d = g.create_dataset("x", data=np.arange(6, dtype="<f8").reshape(2, 3))
    d.attrs["units"] = "m"
    d.attrs["scale"] = np.array([1.5, 2.5])
    f.create_dataset("y", data=np.arange(4, dtype="<i2"))
"#,
        &[s(&path)],
    );
    path
}

#[test]
fn whole_h5py_file_with_root_attribute_converts_and_lists_the_attributes() {
    let dir = tempdir();
    let h5 = h5py_with_attributes(dir.path());
    let npz = dir.path().join("all.npz");
    let said = converts(&["convert", s(&h5), s(&npz)]);
    assert_eq!(
        said,
        ["sciio: left out: 4 attributes on 3 nodes (npz holds no attributes)"]
    );
    let out = run_python(
        r#"
import sys, numpy as np, h5py
z = np.load(sys.argv[1])
with h5py.File(sys.argv[2]) as f:
    assert sorted(z.files) == ["g/x", "y"], z.files
    for name in z.files:
        a, b = z[name], f[name][()]
        assert a.dtype == b.dtype and a.shape == b.shape and (a == b).all(), name
print("ok")
"#,
        &[s(&npz), s(&h5)],
    );
    assert_eq!(out.trim(), "ok");
    strict_refuses(
        &["convert", s(&h5), s(&npz)],
        &npz,
        "attribute 'creator' of /",
    );

    // Into MAT: the same attributes left out for the same reason.
    let mat = dir.path().join("all.mat");
    let said = converts(&["convert", s(&h5), s(&mat)]);
    assert_eq!(
        said,
        ["sciio: left out: 4 attributes on 3 nodes (mat holds no attributes)"]
    );
    let out = run_python(
        "import sys, hdf5storage; d = hdf5storage.loadmat(sys.argv[1]); print(d['y'].ravel().tolist())",
        &[s(&mat)],
    );
    assert_eq!(out.trim(), "[0, 1, 2, 3]");
    strict_refuses(
        &["convert", s(&h5), s(&mat)],
        &mat,
        "mat holds no attributes",
    );
}

#[test]
fn a_node_with_attributes_gives_its_data_as_npy() {
    let dir = tempdir();
    let h5 = h5py_with_attributes(dir.path());
    let npy = dir.path().join("x.npy");
    let node = format!("{}:/g/x", s(&h5));
    let said = converts(&["convert", &node, s(&npy)]);
    assert_eq!(
        said,
        ["sciio: left out: 2 attributes on 1 node (npy holds no attributes)"]
    );
    let out = run_python(
        "import sys, numpy as np; a = np.load(sys.argv[1]); print(a.dtype, a.shape, a.sum())",
        &[s(&npy)],
    );
    assert_eq!(out.trim(), "float64 (2, 3) 15.0");
    strict_refuses(
        &["convert", &node, s(&npy)],
        &npy,
        "of /g/x (npy holds no attributes)",
    );
    // A node of its own without attributes converts without a word on stderr.
    let y = dir.path().join("y.npy");
    assert!(converts(&["convert", &format!("{}:/y", s(&h5)), s(&y)]).is_empty());
    // Several sources into one .h5 go array by array: the attributes are left out (only a
    // copy of one HDF5 file, like ptrepack, carries them).
    let both = dir.path().join("both.h5");
    let said = converts(&["convert", &node, s(&y), s(&both)]);
    assert_eq!(
        said,
        [
            "sciio: left out: 2 attributes on 1 node (attributes reach an .h5 file only in a copy \
          of one HDF5 file)"
        ]
    );
    let out = run_python(
        "import sys, tables; f = tables.open_file(sys.argv[1]); \
         print(f.root.g.x.read().sum(), f.root.y.read().tolist(), f.root.g.x.attrs._v_attrnamesuser)",
        &[s(&both)],
    );
    assert_eq!(out.trim(), "15.0 [0, 1, 2, 3] []");
}

/// PyTables file: a table with user attributes and a subarray column, a 2-D EArray, a
/// VLArray, a soft link and a VLArray of pickled objects (never unpickled).
fn pytables_file(dir: &Path) -> PathBuf {
    let path = dir.join("pt.h5");
    run_python(
        r#"
import sys, numpy as np, tables
with tables.open_file(sys.argv[1], "w") as f:
    t = f.create_table("/", "t", {"id": tables.Int32Col(pos=0),
                                  "m": tables.Float64Col(shape=(2, 3), pos=1),
                                  "tag": tables.StringCol(4, pos=2)})
    t.append([(i, np.arange(6.0).reshape(2, 3) * i, b"r%d" % i) for i in range(5)])
    t.attrs.units = "mV"
    t.attrs.gain = np.float64(2.5)
    t.attrs.channels = np.array([1, 2, 3], dtype="<i4")
    e = f.create_earray("/", "grid", atom=tables.Float32Atom(), shape=(0, 3))
    e.append(np.arange(12, dtype=np.float32).reshape(4, 3))
    v = f.create_vlarray("/", "ragged", tables.Int32Atom())
    v.append([1, 2, 3]); v.append([4])
    f.create_soft_link("/", "alias", "/grid")
    o = f.create_vlarray("/", "objects", tables.ObjectAtom())
    o.append({"pickled": 1})
"#,
        &[s(&path)],
    );
    path
}

#[test]
fn links_and_unreadable_nodes_are_left_out_of_npz() {
    let dir = tempdir();
    let h5 = pytables_file(dir.path());
    let npz = dir.path().join("all.npz");
    let said = converts(&["convert", s(&h5), s(&npz)]);
    assert!(
        said.contains(&"sciio: left out: 3 attributes on 1 node (npz holds no attributes)".into()),
        "{said:?}"
    );
    // The VLArray of numbers is carried one member per row; the link is left out naming its
    // target.
    let out = run_python(
        "import sys, numpy as np; print(' '.join(sorted(np.load(sys.argv[1]).files)))",
        &[s(&npz)],
    );
    let members: Vec<&str> = out.split_whitespace().collect();
    assert!(
        members.contains(&"ragged/row_000000") && members.contains(&"ragged/row_000001"),
        "{members:?}"
    );
    assert!(!said.iter().any(|l| l.contains("/ragged")), "{said:?}");
    assert!(said
        .iter()
        .any(|l| l.contains("/alias (a link to /grid; npz holds no links)")));
    assert!(
        members.contains(&"t") && members.contains(&"grid"),
        "{members:?}"
    );
    strict_refuses(&["convert", s(&h5), s(&npz)], &npz, "npz holds no");
    assert!(
        said.iter()
            .any(|l| l.starts_with("sciio: left out: /objects (")),
        "{said:?}"
    );
    // A node that is left out whole leaves nothing to convert: one line naming it.
    let one = dir.path().join("objects.npz");
    let out = sciio(&["convert", &format!("{}:/objects", s(&h5)), s(&one)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(":/objects: unsupported: nothing npz can hold there: left out /objects ("),
        "{err}"
    );
    assert!(!one.exists());
}

#[test]
fn h5_attributes_become_parquet_metadata_and_subarrays_fixed_size_lists() {
    let dir = tempdir();
    let h5 = pytables_file(dir.path());
    let table = dir.path().join("t.parquet");
    let grid = dir.path().join("grid.parquet");
    let node = format!("{}:/t", s(&h5));
    assert!(converts(&["convert", &node, s(&table)]).is_empty());
    assert!(converts(&["convert", &format!("{}:/grid", s(&h5)), s(&grid)]).is_empty());
    let out = run_python(
        r#"
import sys, json, numpy as np, tables, pyarrow as pa, pyarrow.parquet as pq
h5, table, grid = sys.argv[1:4]
with tables.open_file(h5) as f:
    rows = f.root.t.read()
    g = f.root.grid.read()
meta = pq.read_schema(table).metadata
attrs = json.loads(meta[b"sciio.attributes"])
assert attrs == {"/t": {"units": "mV", "gain": 2.5, "channels": [1, 2, 3]}}, attrs
t = pq.read_table(table)
assert t.column_names == ["id", "m", "tag"], t.column_names
mt = t.schema.field("m").type
assert pa.types.is_fixed_size_list(mt) and mt.list_size == 2, mt
assert pa.types.is_fixed_size_list(mt.value_type) and mt.value_type.list_size == 3, mt
assert mt.value_type.value_type == pa.float64(), mt
m = np.array(t.column("m").to_pylist())
assert m.shape == rows["m"].shape == (5, 2, 3) and (m == rows["m"]).all()
assert (t.column("id").to_numpy() == rows["id"]).all()
import pandas as pd
df = pd.read_parquet(table)
assert list(df.columns) == ["id", "m", "tag"], df.columns
assert (np.stack([np.stack(cell) for cell in df["m"]]) == rows["m"]).all()
assert pq.read_schema(grid).metadata.get(b"sciio.attributes") is None
gt = pq.read_table(grid)
gtype = gt.schema.field("grid").type
assert gt.column_names == ["grid"] and pa.types.is_fixed_size_list(gtype), gt.schema
assert gtype.list_size == 3 and gtype.value_type == pa.float32(), gtype
back = np.array(gt.column("grid").to_pylist(), dtype=np.float32)
assert back.shape == g.shape and (back == g).all()
print("ok")
"#,
        &[s(&h5), s(&table), s(&grid)],
    );
    assert_eq!(out.trim(), "ok");
}

#[test]
fn record_fields_parquet_cannot_hold_are_left_out_naming_the_node() {
    let dir = tempdir();
    let npz = dir.path().join("rec.npz");
    run_python(
        "import sys, numpy as np; np.savez(sys.argv[1], rec=np.array([(1, 2j), (3, 1+1j)], \
         dtype=[('n', '<i8'), ('z', '<c16')]))",
        &[s(&npz)],
    );
    let pq = dir.path().join("rec.parquet");
    let src = format!("{}:rec", s(&npz));
    let said = converts(&["convert", &src, s(&pq)]);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("sciio: left out: column 'z' of /rec (a record field; "),
        "{said:?}"
    );
    let out = run_python(
        "import sys, pandas as pd; df = pd.read_parquet(sys.argv[1]); print(list(df.columns), list(df['n']))",
        &[s(&pq)],
    );
    assert_eq!(out.trim(), "['n'] [1, 3]");
    strict_refuses(&["convert", &src, s(&pq)], &pq, "column 'z' of /rec");
}

#[test]
fn frames_become_structured_npy_like_to_records() {
    let dir = tempdir();
    let (ranged, keyed) = (dir.path().join("r.parquet"), dir.path().join("k.parquet"));
    run_python(
        r#"
import sys, pandas as pd, numpy as np
cols = {
    'when': pd.date_range('2024-03-30', periods=4, freq='7h', tz='Europe/Paris'),
    'kind': pd.Categorical(['a', 'b', 'a', 'c']),
    'temp': np.linspace(-1.5, 3.0, 4),
    'count': pd.array([1, None, 3, 4], dtype='Int64'),
    'city': ['Oslo', 'Rome', None, 'Zürich'],
}
pd.DataFrame(cols, index=pd.RangeIndex(10, 22, 3)).to_parquet(sys.argv[1])
pd.DataFrame(cols, index=pd.Index(list('qrst'), name='key')).to_parquet(sys.argv[2])
"#,
        &[s(&ranged), s(&keyed)],
    );
    let check = r#"
import sys, numpy as np, pandas as pd
df = pd.read_parquet(sys.argv[1])
a = np.load(sys.argv[2])
names = ['when', 'kind', 'temp', 'count', 'count.mask']
if sys.argv[3] == 'key':
    names = ['key'] + names
    assert list(a['key']) == list(df.index)
assert list(a.dtype.names) == names and a.shape == (4,), a.dtype
assert (a['when'] == df['when'].dt.tz_convert(None).to_numpy().astype(a['when'].dtype)).all()
assert list(a['kind']) == list(df['kind'].astype(str))
assert a['temp'].dtype == np.float64 and (a['temp'] == df['temp'].to_numpy()).all()
# a nullable integer column: its values and a mask, true where missing
assert a['count'].dtype == np.int64 and list(a['count.mask']) == list(df['count'].isna())
assert list(a['count'][~a['count.mask']]) == list(df['count'].dropna())
print("ok")
"#;
    // strings with a missing value: numpy's U cannot hold it, left out (never '')
    let city_left_out = |said: Vec<String>| {
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("sciio: left out: column 'city' of / (")
                && said[0].contains("missing"),
            "{said:?}"
        );
    };
    for (src, index) in [(&ranged, "range"), (&keyed, "key")] {
        let npy = dir.path().join(format!("{index}.npy"));
        city_left_out(converts(&["convert", s(src), s(&npy)]));
        assert_eq!(run_python(check, &[s(src), s(&npy), index]).trim(), "ok");
    }
    // DST:NAME makes the same records one member of an .npz.
    let npz = dir.path().join("records.npz");
    city_left_out(converts(&[
        "convert",
        s(&keyed),
        &format!("{}:frame", s(&npz)),
    ]));
    let member = dir.path().join("member.npy");
    run_python(
        "import sys, numpy as np; z = np.load(sys.argv[1]); assert z.files == ['frame'], z.files; \
         np.save(sys.argv[2], z['frame'])",
        &[s(&npz), s(&member)],
    );
    assert_eq!(
        run_python(check, &[s(&keyed), s(&member), "key"]).trim(),
        "ok"
    );

    // A column numpy has no type for (decimals) is left out.
    let masked = dir.path().join("m.parquet");
    run_python(
        "import sys, decimal, pandas as pd; pd.DataFrame({'ok': [1.5, 2.5], \
         'flag': [decimal.Decimal('1.5'), None]}).to_parquet(sys.argv[1])",
        &[s(&masked)],
    );
    let npy = dir.path().join("m.npy");
    let said = converts(&["convert", s(&masked), s(&npy)]);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("sciio: left out: column 'flag' of / (")
            && said[0].contains("numpy has no type for it"),
        "{said:?}"
    );
    let out = run_python(
        "import sys, numpy as np; a = np.load(sys.argv[1]); print(a.dtype.names, a['ok'].tolist())",
        &[s(&npy)],
    );
    assert_eq!(out.trim(), "('ok',) [1.5, 2.5]");
    strict_refuses(&["convert", s(&masked), s(&npy)], &npy, "column 'flag'");
    // The same column is left out of an .npz (one member per column) too.
    let npz = dir.path().join("m.npz");
    let said = converts(&["convert", s(&masked), s(&npz)]);
    assert!(said[0].contains("column 'flag' of /"), "{said:?}");
}

#[test]
fn an_empty_npz_converts_to_empty_containers() {
    let dir = tempdir();
    let empty = dir.path().join("empty.npz");
    run_python(
        "import sys, numpy as np; np.savez(sys.argv[1])",
        &[s(&empty)],
    );
    let npz = dir.path().join("copy.npz");
    let h5 = dir.path().join("copy.h5");
    let said = ok(&["convert", s(&empty), s(&npz)]);
    assert!(said.contains("wrote 0 arrays"), "{said}");
    assert!(converts(&["convert", s(&empty), s(&h5)]).is_empty());
    let mat = dir.path().join("copy.mat");
    assert!(converts(&["convert", s(&empty), s(&mat)]).is_empty());
    let out = run_python(
        "import sys, numpy as np, tables, hdf5storage; print(len(np.load(sys.argv[1]).files), \
         len(tables.open_file(sys.argv[2]).root._v_children), \
         len([k for k in hdf5storage.loadmat(sys.argv[3]) if not k.startswith('__')]))",
        &[s(&npz), s(&h5), s(&mat)],
    );
    assert_eq!(out.trim(), "0 0 0");
    // A .npy holds exactly one array: nothing to convert is still an error.
    let out = sciio(&["convert", s(&empty), s(&dir.path().join("x.npy"))]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn arrays_matlab_has_no_class_for_are_left_out_of_mat() {
    let dir = tempdir();
    let npz = dir.path().join("mixed.npz");
    // Records and text have MATLAB classes (struct, char: as hdf5storage stores them);
    // half floats and datetimes have none.
    run_python(
        "import sys, numpy as np; np.savez(sys.argv[1], x=np.arange(3.0), \
         rec=np.zeros(2, dtype=[('a', '<i4'), ('b', '<f8')]), words=np.array(['ab', 'c']), \
         half=np.zeros(2, dtype='f2'), when=np.zeros(2, dtype='M8[s]'))",
        &[s(&npz)],
    );
    let mat = dir.path().join("mixed.mat");
    let said = converts(&["convert", s(&npz), s(&mat)]);
    assert_eq!(
        said,
        [
            "sciio: left out: /half (an array of <f2, shape [2]; MATLAB has no class for <f2 \
             arrays)",
            "sciio: left out: /when (an array of <M8[s], shape [2]; MATLAB has no class for \
             <M8[s] arrays)",
        ]
    );
    let out = run_python(
        "import sys, hdf5storage; d = hdf5storage.loadmat(sys.argv[1]); \
         print(sorted(k for k in d if not k.startswith('__')), d['x'].ravel().tolist(), \
         d['words'].tolist(), d['rec']['b'].tolist())",
        &[s(&mat)],
    );
    assert_eq!(
        out.trim(),
        "['rec', 'words', 'x'] [0.0, 1.0, 2.0] ['ab', 'c'] [0.0, 0.0]"
    );
    strict_refuses(&["convert", s(&npz), s(&mat)], &mat, "/half");
}

/// PyTables has no type for text (`U`) or datetime64 arrays: an .npz holding them converts to
/// .h5 with its other members, those two left out and named; `--strict` refuses.
#[test]
fn npz_members_pytables_has_no_type_for_are_left_out_of_h5() {
    let dir = tempdir();
    let npz = dir.path().join("mixed.npz");
    run_python(
        "import sys, numpy as np\nnp.savez(sys.argv[1], a=np.arange(3), u=np.array(['ab', 'cde']), t=np.array(['2020-01-01'], dtype='M8[D]'))",
        &[s(&npz)],
    );
    let h5 = dir.path().join("mixed.h5");
    let lines = converts(&["convert", s(&npz), s(&h5)]);
    let said = lines.join("\n");
    assert!(
        said.contains("left out: /u") && said.contains("<U3 has no PyTables type"),
        "{said}"
    );
    assert!(
        said.contains("left out: /t") && said.contains("<M8[D]"),
        "{said}"
    );
    let out = run_python(
        "import sys, tables\nwith tables.open_file(sys.argv[1]) as f:\n    print(sorted(n._v_name for n in f.walk_nodes('/', 'Leaf')), f.root.a.read().tolist())",
        &[s(&h5)],
    );
    assert_eq!(out.trim(), "['a'] [0, 1, 2]");
    let strict = dir.path().join("strict.h5");
    strict_refuses(&["convert", s(&npz), s(&strict)], &strict, "/u");
}
