//! `sciio ls` (one table view, `--json`), `sciio info` (storage, chunks, filters, ratios,
//! Parquet row groups) and `sciio cat --head/--slice`, each checked against the reference tools.
#![cfg(all(feature = "hdf5", feature = "parquet"))]

use std::path::Path;

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, tempdir};

const MAKE_H5: &str = r#"
import sys, numpy as np, tables
with tables.open_file(sys.argv[1], "w") as f:
    g = f.create_group("/", "grp", title="a group")
    a = f.create_array(g, "ints", np.arange(12, dtype=">i4").reshape(3, 4))
    a.attrs.units = "m"
    a.attrs.scale = np.float64(2.5)
    f.create_carray(g, "floats", obj=np.linspace(0, 1, 2000).reshape(40, 50),
                    filters=tables.Filters(complevel=5, complib="zlib", shuffle=True),
                    chunkshape=(7, 50))
    t = f.create_table("/", "table", {"id": tables.Int64Col(pos=0), "x": tables.Float64Col(pos=1)},
                       filters=tables.Filters(complevel=1, complib="blosc:lz4"), chunkshape=(16,))
    t.append([(i, i / 3) for i in range(100)])
    one = f.create_group("/", "one")
    f.create_array(one, "only", np.arange(3))
    v = f.create_vlarray("/", "ragged", tables.ObjectAtom())
    v.append({"a": 1})
    f.create_soft_link("/", "alias", "/grp/ints")
"#;

fn make_h5(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("t.h5");
    run_python(MAKE_H5, &[s(&path)]);
    path
}

#[test]
fn ls_is_one_table_with_numpy_dtypes_and_notes() {
    let dir = tempdir();
    let h5 = make_h5(dir.path());
    let out = ok(&["ls", s(&h5)]);
    // One view: the table, then notes; the ptdump listing only with --ptdump.
    assert_eq!(out.matches("── ints").count(), 1, "{out}");
    assert!(!out.contains("(Array("), "{out}");
    let row = |name: &str| {
        out.lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} not in\n{out}"))
            .to_string()
    };
    assert!(row("── one").contains("1 item "), "{out}");
    assert!(row("── grp").contains("2 items"), "{out}");
    assert!(row("── alias -> /grp/ints").contains("link"), "{out}");
    // The dtype column holds numpy dtypes or nothing: no prose, no Rust debug text.
    let ragged = row("── ragged");
    assert!(ragged.contains("VLArray"), "{ragged}");
    assert!(
        !ragged.contains("pickled") && !ragged.contains('{'),
        "{ragged}"
    );
    assert!(
        out.contains("notes:\n  /ragged (VLArray): "),
        "the reason under the table: {out}"
    );
    // A node of the file is labelled with its path.
    let sub = ok(&["ls", &format!("{}:/grp", s(&h5))]);
    assert!(sub.contains("│ /grp "), "{sub}");
}

const CHECK_LS_JSON: &str = r#"
import json, sys, numpy as np, tables
doc = json.loads(open(sys.argv[2]).read())
nodes = {n["path"]: n for n in doc["nodes"]}
assert doc["format"] == "hdf5", doc["format"]
with tables.open_file(sys.argv[1]) as f:
    for node in f.walk_nodes("/"):
        p = node._v_pathname
        got = nodes[p]
        if isinstance(node, tables.link.Link):
            assert got["kind"] == "link" and got["target"] == node.target, got
            continue
        if isinstance(node, tables.Group):
            assert got["kind"] == "group" and got["children"] == len(node._v_children), got
            continue
        if isinstance(node, tables.VLArray):
            assert got["kind"] == "VLArray" and got["reason"], got
            continue
        want = node.dtype if isinstance(node, tables.Table) else node.atom.dtype.base
        dt = np.dtype([tuple(e) for e in got["dtype"]]) if isinstance(got["dtype"], list) else np.dtype(got["dtype"])
        a = node.read()
        assert tuple(got["shape"]) == a.shape, (p, got["shape"], a.shape)
        assert dt.newbyteorder("=") == a.dtype.newbyteorder("="), (p, dt, a.dtype)
        assert got["nbytes"] == a.nbytes, (p, got["nbytes"], a.nbytes)
        user = {k: node._v_attrs[k] for k in node._v_attrs._f_list("user")}
        for k, v in user.items():
            assert got["attributes"][k] == (v.item() if hasattr(v, "item") else v), (p, k, got["attributes"])
assert nodes["/grp/ints"]["attributes"] == {"units": "m", "scale": 2.5}, nodes["/grp/ints"]
print(len(nodes))
"#;

#[test]
fn ls_json_describes_every_node_as_pytables_does() {
    let dir = tempdir();
    let h5 = make_h5(dir.path());
    let doc = ok(&["ls", "--json", s(&h5)]);
    assert_eq!(doc.lines().count(), 1, "{doc}");
    let saved = dir.path().join("ls.json");
    std::fs::write(&saved, &doc).unwrap();
    let n = run_python(CHECK_LS_JSON, &[s(&h5), s(&saved)]);
    assert_eq!(n.trim(), "9", "{doc}");
    // Every format: npz members too.
    let npz = dir.path().join("a.npz");
    run_python(
        "import sys, numpy as np; np.savez(sys.argv[1], x=np.arange(6).reshape(2, 3), y=np.float32(1))",
        &[s(&npz)],
    );
    let doc: serde_json::Value = serde_json::from_str(&ok(&["ls", "--json", s(&npz)])).unwrap();
    let x = &doc["nodes"][1];
    assert_eq!(
        (x["path"].as_str(), x["kind"].as_str(), x["dtype"].as_str()),
        (Some("/x"), Some("array"), Some("<i8"))
    );
    assert_eq!(x["shape"], serde_json::json!([2, 3]));
    assert_eq!(doc["nodes"][2]["shape"], serde_json::json!([]));
}

const CHECK_H5_INFO: &str = r#"
import sys, re, h5py
text = open(sys.argv[2]).read()
rows = {}
for line in text.splitlines():
    cells = [c.strip() for c in line.strip().strip("│").split("┆")]
    if len(cells) == 10 and cells[0].startswith("/"):
        rows[cells[0]] = cells
with h5py.File(sys.argv[1], "r") as f:
    for path in ["/grp/ints", "/grp/floats", "/table"]:
        ds = f[path]
        node, kind, dtype, shape, layout, chunks, filters, size, disk, ratio = rows[path]
        if ds.chunks is None:
            assert layout.startswith("contiguous") and chunks == "", (path, layout, chunks)
        else:
            n = ds.id.get_num_chunks()
            want = "%d chunk%s × %s" % (n, "" if n == 1 else "s", str(tuple(ds.chunks)).replace(",)", ",)"))
            assert layout == "chunked" and chunks == want, (path, layout, chunks, want)
        stored = ds.id.get_storage_size()
        logical = ds.size * ds.dtype.itemsize
        assert abs(float(ratio) - logical / stored) < 0.01, (path, ratio, logical / stored)
        plist = ds.id.get_create_plist()
        ids = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
        names = filters.split(",") if filters != "none" else []
        assert len(names) == len(ids), (path, filters, ids)
        if ids == [2, 1]:
            assert names == ["shuffle", "deflate:5"], names
print("ok")
"#;

#[test]
fn info_shows_hdf5_storage_as_h5py_reports_it() {
    let dir = tempdir();
    let h5 = make_h5(dir.path());
    let text = ok(&["info", s(&h5)]);
    let saved = dir.path().join("info.txt");
    std::fs::write(&saved, &text).unwrap();
    assert_eq!(
        run_python(CHECK_H5_INFO, &[s(&h5), s(&saved)]).trim(),
        "ok",
        "{text}"
    );
    assert!(text.contains("blosc:lz4:1"), "{text}");
    // Attributes are listed too; a node alone.
    assert!(text.contains("units := b'm'"), "{text}");
    let one = ok(&["info", &format!("{}:/grp/floats", s(&h5))]);
    assert!(
        one.contains("/grp/floats") && !one.contains("/table"),
        "{one}"
    );
}

#[test]
fn info_shows_npz_member_compression_as_zipfile_reports_it() {
    let dir = tempdir();
    let npz = dir.path().join("c.npz");
    let out = run_python(
        "import sys, zipfile, numpy as np\n\
         np.savez_compressed(sys.argv[1], z=np.zeros(10000), r=np.random.default_rng(0).random(100))\n\
         with zipfile.ZipFile(sys.argv[1]) as f:\n\
         \x20   print(' '.join('%s:%d:%d' % (i.filename, i.file_size, i.compress_size) for i in f.infolist()))",
        &[s(&npz)],
    );
    let text = ok(&["info", s(&npz)]);
    for member in out.split_whitespace() {
        let parts: Vec<&str> = member.split(':').collect();
        let (name, size, packed) = (
            parts[0].trim_end_matches(".npy"),
            parts[1].parse::<f64>().unwrap(),
            parts[2].parse::<f64>().unwrap(),
        );
        let line = text
            .lines()
            .find(|l| l.contains(&format!("/{name} ")))
            .unwrap_or_else(|| panic!("{name} not in\n{text}"));
        assert!(line.contains("deflated"), "{line}");
        assert!(
            line.contains(&format!("{:.2}", size / packed)),
            "{line}: {size}/{packed}"
        );
    }
}

const MAKE_PARQUET: &str = r#"
import sys, pandas as pd, pyarrow as pa, pyarrow.parquet as pq
df = pd.DataFrame({"a": range(10), "s": ["x%d" % i for i in range(10)], "f": [None] + [0.5] * 9})
pq.write_table(pa.Table.from_pandas(df), sys.argv[1], row_group_size=4, compression="zstd")
m = pq.ParquetFile(sys.argv[1]).metadata
print(m.num_row_groups)
for g in range(m.num_row_groups):
    rg = m.row_group(g)
    for c in range(rg.num_columns):
        col = rg.column(c)
        st = col.statistics
        print(g, col.path_in_schema, col.physical_type, col.compression, col.total_compressed_size,
              st.null_count, st.min, st.max)
"#;

#[test]
fn info_shows_parquet_row_groups_and_statistics_as_pyarrow_reports_them() {
    let dir = tempdir();
    let pq = dir.path().join("f.parquet");
    let want = run_python(MAKE_PARQUET, &[s(&pq)]);
    let text = ok(&["info", s(&pq)]);
    let mut lines = want.lines();
    let groups: usize = lines.next().unwrap().trim().parse().unwrap();
    assert_eq!(groups, 3);
    assert!(text.contains("10 rows, 3 row groups"), "{text}");
    assert!(text.contains("key-value metadata: pandas"), "{text}");
    for g in 0..groups {
        assert!(text.contains(&format!("row group {g}: ")), "{text}");
    }
    // Per column chunk: type, codec, null count and min/max as pyarrow reads them.
    let section = |g: usize| {
        let start = text.find(&format!("row group {g}: ")).unwrap();
        let rest = &text[start..];
        let end = rest[1..].find("row group ").map_or(rest.len(), |e| e + 1);
        rest[..end].to_string()
    };
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (g, col, ty, codec, nulls) = (f[0].parse().unwrap(), f[1], f[2], f[3], f[5]);
        let part = section(g);
        let row = part
            .lines()
            .find(|l| l.starts_with(&format!("│ {col} ")))
            .unwrap_or_else(|| panic!("{col} not in {part}"));
        assert!(row.contains(ty) && row.contains(codec), "{row} vs {line}");
        let cells: Vec<&str> = row
            .trim()
            .trim_matches('│')
            .split('┆')
            .map(str::trim)
            .collect();
        assert_eq!(cells[7], nulls, "{row} vs {line}");
        let (min, max) = (f[6], f[7]);
        let unquote = |c: &str| c.trim_matches('"').to_string();
        assert_eq!(
            (unquote(cells[8]), unquote(cells[9])),
            (min.into(), max.into()),
            "{row} vs {line}"
        );
    }
}

const CHECK_ROWS: &str = r#"
import sys, numpy as np, tables
kind, path, node, start, stop, printed = sys.argv[1:7]
s = slice(int(start) if start else None, int(stop) if stop else None)
if kind == "npy":
    a = np.load(path)
elif kind == "npz":
    a = np.load(path)[node]
else:
    with tables.open_file(path) as f:
        a = f.get_node(node).read()
assert printed == str(a[s]) + "\n", (printed, str(a[s]))
print("ok")
"#;

#[test]
fn cat_head_and_slice_print_what_numpy_prints_for_the_slice() {
    let dir = tempdir();
    let (c, f, z) = (
        dir.path().join("c.npy"),
        dir.path().join("f.npy"),
        dir.path().join("z.npz"),
    );
    run_python(
        "import sys, numpy as np\n\
         a = np.arange(60.0).reshape(20, 3)\n\
         np.save(sys.argv[1], a)\n\
         np.save(sys.argv[2], np.asfortranarray(a))\n\
         np.savez_compressed(sys.argv[3], a=a.astype('<i2'))",
        &[s(&c), s(&f), s(&z)],
    );
    let h5 = make_h5(dir.path());
    let cases: Vec<(&str, &Path, &str)> = vec![
        ("npy", &c, ""),
        ("npy", &f, ""),
        ("npz", &z, "a"),
        ("h5", &h5, "/grp/floats"),
        ("h5", &h5, "/table"),
    ];
    for (kind, path, node) in cases {
        let target = if node.is_empty() {
            s(path).to_string()
        } else {
            format!("{}:{node}", s(path))
        };
        for (args, start, stop) in [
            (vec!["--head", "3"], "", "3"),
            (vec!["--slice", "5:9"], "5", "9"),
            (vec!["--slice", "-4:"], "-4", ""),
            (vec!["--slice", "18:100"], "18", "100"),
        ] {
            let mut argv = vec!["cat", target.as_str()];
            argv.extend(args.iter().copied());
            let printed = ok(&argv);
            let verdict = run_python(CHECK_ROWS, &[kind, s(path), node, start, stop, &printed]);
            assert_eq!(verdict.trim(), "ok", "{target} {args:?}");
        }
    }
}

#[test]
fn cat_head_reads_only_the_rows_it_prints() {
    // A 32 GiB .npy (sparse): read whole it is refused by the default 16 GiB limit; its first
    // and last rows print at once. An HDF5 dataset whose last chunk is damaged: read whole it
    // fails, its first rows print.
    let dir = tempdir();
    let (npy, h5) = (dir.path().join("big.npy"), dir.path().join("damaged.h5"));
    run_python(
        "import sys, numpy as np, h5py\n\
         with open(sys.argv[1], 'wb') as f:\n\
         \x20   np.lib.format.write_array_header_1_0(f, {'descr': '<f8', 'fortran_order': False, 'shape': (1 << 31, 2)})\n\
         \x20   f.seek((1 << 31) * 16 - 1, 1); f.write(b'\\0')\n\
         with h5py.File(sys.argv[2], 'w') as f:\n\
         \x20   d = f.create_dataset('x', data=np.zeros((1000, 2)), chunks=(100, 2), compression='gzip')\n\
         \x20   last = d.id.get_chunk_info(9)\n\
         with open(sys.argv[2], 'r+b') as f:\n\
         \x20   f.seek(last.byte_offset); f.write(b'\\xff' * last.size)",
        &[s(&npy), s(&h5)],
    );
    assert!(std::fs::metadata(&npy).unwrap().len() > 32 << 30);
    for (target, why) in [
        (s(&npy).to_string(), "limit"),
        (format!("{}:/x", s(&h5)), "corrupt"),
    ] {
        let whole = sciio(&["cat", &target]);
        assert_eq!(whole.status.code(), Some(1), "{target}");
        let err = String::from_utf8_lossy(&whole.stderr);
        assert!(err.contains(why), "{target}: {err}");
        assert_eq!(
            ok(&["cat", &target, "--head", "2"]),
            "[[0. 0.]\n [0. 0.]]\n"
        );
    }
    assert_eq!(ok(&["cat", s(&npy), "--slice", "-1:"]), "[[0. 0.]]\n");
    // With --json too; --slice conflicts with --head.
    let two = dir.path().join("two.npy");
    run_python(
        "import sys, numpy as np; np.save(sys.argv[1], np.arange(10))",
        &[s(&two)],
    );
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["cat", s(&two), "--json", "--slice", "2:4"])).unwrap();
    assert_eq!(doc["values"], serde_json::json!([2, 3]));
    assert_eq!(
        sciio(&["cat", s(&two), "--head", "1", "--slice", "2:4"])
            .status
            .code(),
        Some(2)
    );
}

/// pandas writes a frame (Parquet) and an HDFStore key; `cat --json` of each, read back in
/// Python by the documented rules, equals the frame pandas reads, row slice included.
#[test]
fn cat_json_of_a_frame_equals_what_pandas_reads() {
    let dir = tempdir();
    let pq = dir.path().join("f.parquet");
    let h5 = dir.path().join("store.h5");
    run_python(
        r#"
import sys, numpy as np, pandas as pd
df = pd.DataFrame({
    "i": np.arange(5, dtype="int16"),
    "x": [0.5, np.nan, np.inf, -1.25, 1e300],
    "f": np.array([1.1, 2.2, 3.3, 4.4, 5.5], dtype="float32"),
    "s": ["a", None, "é", "d", "e"],
    "c": pd.Categorical(["lo", "hi", None, "lo", "hi"]),
    "t": pd.date_range("2024-03-31 01:00", periods=5, freq="h", tz="Europe/Paris"),
    "b": [True, False, True, True, False],
}, index=pd.MultiIndex.from_arrays([[1, 1, 2, 2, 3], list("uvwxy")], names=["k", "l"]))
df.to_parquet(sys.argv[1])
df.drop(columns=["c", "s"]).to_hdf(sys.argv[2], key="/grp/df", format="table")
"#,
        &[s(&pq), s(&h5)],
    );
    let check = r#"
import sys, json, math, numpy as np, pandas as pd
doc = json.loads(sys.argv[1])
if sys.argv[2].endswith(".parquet"):
    df = pd.read_parquet(sys.argv[2])
else:
    df = pd.read_hdf(sys.argv[2], sys.argv[3])
start, stop = int(sys.argv[4]), int(sys.argv[5])
df = df.iloc[start:stop]
assert doc["rows"] == len(pd.read_parquet(sys.argv[2]) if sys.argv[2].endswith(".parquet") else pd.read_hdf(sys.argv[2], sys.argv[3])), doc["rows"]
assert doc["columns"] == list(df.columns), doc["columns"]
assert doc["index_names"] == list(df.index.names), doc["index_names"]
assert doc["dtypes"] == [str(d) for d in df.dtypes], (doc["dtypes"], list(df.dtypes))
assert [tuple(i) for i in doc["index"]] == list(df.index), doc["index"]
def back(v, ref, dtype):
    if v is None:
        return pd.isna(ref)
    if isinstance(ref, pd.Timestamp):
        return pd.Timestamp(v) == ref
    if getattr(dtype, "kind", "") == "f":
        # NaN/inf as strings; float32 values as the f32's shortest digits
        return (v == "nan" and math.isnan(ref)) or dtype.type(float(v)) == dtype.type(ref)
    return v == ref
for r, row in enumerate(doc["data"]):
    for j, v in enumerate(row):
        assert back(v, df.iloc[r, j], df.dtypes.iloc[j]), (r, j, v, df.iloc[r, j])
print("ok", len(doc["data"]))
"#;
    let pq_doc = ok(&["cat", "--json", "--slice", "1:4", s(&pq)]);
    let out = run_python(check, &[pq_doc.trim(), s(&pq), "", "1", "4"]);
    assert_eq!(out.trim(), "ok 3");
    let key_doc = ok(&["cat", "--json", &format!("{}:/grp/df", s(&h5))]);
    let out = run_python(check, &[key_doc.trim(), s(&h5), "/grp/df", "0", "5"]);
    assert_eq!(out.trim(), "ok 5");
}

/// `info` on a v7.3 MAT file (HDF5 inside) shows each variable's storage as h5py sees it.
#[test]
fn info_of_a_v73_mat_file_shows_the_storage_of_its_variables() {
    let dir = tempdir();
    let mat = dir.path().join("h.mat");
    let facts = run_python(
        r#"
import sys, h5py, hdf5storage, numpy as np
hdf5storage.savemat(sys.argv[1], {'big': np.arange(10000.).reshape(100, 100), 'small': np.arange(3.)},
                    format='7.3')
with h5py.File(sys.argv[1]) as f:
    d = f['big']
    print(d.chunks[0], d.chunks[1], d.compression, d.compression_opts, d.id.get_storage_size())
"#,
        &[s(&mat)],
    );
    let f: Vec<&str> = facts.split_whitespace().collect();
    let out = ok(&["info", s(&mat)]);
    let row = |name: &str| {
        out.lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} not in\n{out}"))
            .to_string()
    };
    let big = row("/big ");
    assert!(big.contains("chunked"), "{big}");
    // h5py's chunks are in its (row-major) order of MATLAB's transposed matrix
    assert!(
        big.contains(&format!("({}, {})", f[0], f[1])),
        "{big}\n{facts}"
    );
    assert_eq!(f[2], "gzip");
    assert!(big.contains(&format!("deflate:{}", f[3])), "{big}");
    let on_disk: u64 = f[4].parse().unwrap();
    assert!(
        big.contains(&format!("{:.1} KiB", on_disk as f64 / 1024.0)),
        "{big}\n{facts}"
    );
    assert!(row("/small ").contains("contiguous"), "{out}");
}
