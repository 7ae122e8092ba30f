//! Data frames into MAT files and pandas HDFStore keys into numpy records: a Parquet file, a
//! store key or a whole store → `.mat` (a variable, or a struct's field, per index level and
//! column; 1-d columns as MATLAB columns) read back by scipy.io, hdf5storage and h5py against
//! pandas; a store key → `.npy` / `.npz:NAME` (one structured array) against pandas'
//! `df.to_records()`. Streaming at scale is `scale_rss.rs`'s.
#![cfg(all(feature = "parquet", feature = "mat", feature = "hdfstore"))]

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, tempdir};

/// A frame with every kind of column a MAT file holds or cannot: ints, floats, bools,
/// masked ints, text, a categorical, a tz-aware datetime (no MATLAB class), a named string
/// index, a column name with a space; written as Parquet (argv[1]) and as a store with a
/// `table` key, a `fixed` key (without the categorical: `fixed` holds none) and a key in a
/// group (argv[2]).
const MAKE_FRAME: &str = r#"
import sys, numpy as np, pandas as pd
n = 9
df = pd.DataFrame({
    'i': np.arange(n, dtype=np.int32) * -3,
    'x': np.linspace(-1.0, 2.0, n),
    'ok': np.arange(n) % 3 == 0,
    'name': ['alpha', 'b', 'cé', 'dd', '', 'f', 'gamma', 'h', 'i'],
    'kind': pd.Categorical(list('abcabcabc')),
    'when': pd.date_range('2024-03-30', periods=n, freq='7h', tz='Europe/Paris'),
    'two words': np.arange(n, dtype=np.uint16),
}, index=pd.Index([f'r{k}' for k in range(n)], name='key'))
store = df.drop(columns=['when'])
df['count'] = pd.array([1, None, 3, 4, None, 6, 7, 8, 9], dtype='Int64')
df.to_parquet(sys.argv[1])
store.to_hdf(sys.argv[2], key='t', format='table', mode='w')
store.drop(columns=['kind']).to_hdf(sys.argv[2], key='f', format='fixed')
store.iloc[:4].to_hdf(sys.argv[2], key='run/part', format='table')
"#;

/// Checks a MAT file (argv[2], version argv[3], struct argv[4] or '' for variables) against
/// the frame (argv[1], Parquet, or `store.h5` and key with argv[5]).
const CHECK_MAT: &str = r#"
import sys, numpy as np, pandas as pd, scipy.io, hdf5storage, h5py
src, mat, version, struct = sys.argv[1:5]
df = pd.read_parquet(src) if len(sys.argv) < 6 else pd.read_hdf(src, sys.argv[5])
want = {df.index.name: df.index.to_numpy()}
want.update({c: df[c].to_numpy() for c in df.columns if c != 'when'})
if 'count' in want:
    want['count'] = df['count'].fillna(0).to_numpy(dtype=np.int64)
    want['count.mask'] = df['count'].isna().to_numpy()
if 'kind' in want:
    want['kind'] = np.asarray(df['kind'].astype(str))
if version == '7.3':
    got = hdf5storage.loadmat(mat)
    if struct:
        s = got[struct]
        got = {k: s[k][0] for k in s.dtype.names}
else:
    got = scipy.io.loadmat(mat, chars_as_strings=True)
    if struct:
        s = got[struct]
        got = {k: s[k][0, 0] for k in s.dtype.names}
got = {k: v for k, v in got.items() if not k.startswith('__')}
assert sorted(got) == sorted(want), (sorted(got), sorted(want))
for k, w in want.items():
    g = got[k]
    if w.dtype.kind in 'OUS':
        g = [str(v).rstrip() for v in np.ravel(g)]
        assert g == [str(v) for v in w], (k, g, w)
        continue
    # 1-d columns are MATLAB columns: n-by-1.
    assert g.shape == (len(df), 1), (k, g.shape)
    assert np.array_equal(g[:, 0].astype(w.dtype), w), (k, g, w)
    if version == '7.3' or w.dtype != bool:
        assert g.dtype == w.dtype, (k, g.dtype, w.dtype)
# MATLAB's view: every column n rows, text the n-by-width char matrix of its strings.
text = [k for k, w in want.items() if w.dtype.kind in 'OUS']
assert text, want
if version == '7.3':
    with h5py.File(mat, 'r') as f:
        node = f[struct] if struct else f
        assert node['x'].shape == (1, len(df)), node['x'].shape
        assert node['x'].attrs['MATLAB_class'] == b'double'
        for k in text:
            width = max(len(str(v)) for v in want[k])
            assert node[k].attrs['MATLAB_class'] == b'char', k
            assert node[k].shape == (width, len(df)), (k, node[k].shape)
            rows = np.asarray(node[k]).T
            got_rows = [''.join(map(chr, r)).rstrip('\0') for r in rows]
            assert got_rows == [str(v) for v in want[k]], (k, got_rows)
else:
    raw = scipy.io.loadmat(mat, chars_as_strings=False)
    if struct:
        raw = {k: raw[struct][k][0, 0] for k in raw[struct].dtype.names}
    for k in text:
        width = max(len(str(v)) for v in want[k])
        assert raw[k].shape == (len(df), width), (k, raw[k].shape)
print('ok')
"#;

fn convert_frame(args: &[&str]) -> String {
    let out = sciio(args);
    assert!(out.status.success(), "sciio {args:?}: {out:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn parquet_frames_into_mat_are_columns_scipy_and_hdf5storage_read() {
    let dir = tempdir();
    let (pq, store) = (dir.path().join("f.parquet"), dir.path().join("s.h5"));
    run_python(MAKE_FRAME, &[s(&pq), s(&store)]);
    for (version, node) in [
        ("7", ""),
        ("7", "df"),
        ("5", "df"),
        ("7.3", ""),
        ("7.3", "df"),
    ] {
        let mat = dir.path().join(format!("v{version}-{node}.mat"));
        let dst = match node {
            "" => s(&mat).to_string(),
            node => format!("{}:{node}", s(&mat)),
        };
        let report = convert_frame(&["convert", s(&pq), &dst, "--mat-version", version]);
        // The tz-aware column is left out, said once, naming it and why.
        assert_eq!(report.lines().count(), 1, "{report}");
        assert!(
            report.contains("left out") && report.contains("when") && report.contains("M8"),
            "{report}"
        );
        let checked = run_python(CHECK_MAT, &[s(&pq), s(&mat), version, node]);
        assert_eq!(checked.trim(), "ok");
        // No temporary archive is left beside the output.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.starts_with(".sciio")), "{names:?}");
    }
    // --strict refuses the column MATLAB has no class for, and writes nothing.
    let strict = dir.path().join("strict.mat");
    let out = sciio(&["convert", s(&pq), s(&strict), "--strict"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--strict") && err.contains("when"), "{err}");
    assert!(!strict.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 7);
}

#[test]
fn store_keys_and_whole_stores_into_mat_are_their_frames_columns() {
    let dir = tempdir();
    let (pq, store) = (dir.path().join("f.parquet"), dir.path().join("s.h5"));
    run_python(MAKE_FRAME, &[s(&pq), s(&store)]);
    for (key, version, node) in [
        ("t", "7", ""),
        ("f", "7.3", "frame"),
        ("run/part", "7", "p"),
    ] {
        let mat = dir
            .path()
            .join(format!("{}-{version}.mat", key.replace('/', "_")));
        let dst = match node {
            "" => s(&mat).to_string(),
            node => format!("{}:{node}", s(&mat)),
        };
        let src = format!("{}:/{key}", s(&store));
        ok(&["convert", &src, &dst, "--mat-version", version]);
        let checked = run_python(CHECK_MAT, &[s(&store), s(&mat), version, node, key]);
        assert_eq!(checked.trim(), "ok");
    }
    // A whole store: a struct per key (a key in a group: a struct in a struct), the frames'
    // columns, not PyTables' nodes.
    for version in ["7", "7.3"] {
        let mat = dir.path().join(format!("whole-{version}.mat"));
        ok(&["convert", s(&store), s(&mat), "--mat-version", version]);
        let fields = run_python(
            r#"
import sys, numpy as np, pandas as pd, scipy.io, h5py
mat, version = sys.argv[1], sys.argv[2]
if version == '7.3':
    with h5py.File(mat, 'r') as f:
        names = sorted(k for k in f if not k.startswith('#'))
        part = sorted(f['run']['part'])
        x = f['t']['x'][0]
else:
    m = scipy.io.loadmat(mat)
    names = sorted(k for k in m if not k.startswith('__'))
    part = sorted(m['run']['part'][0, 0].dtype.names)
    x = m['t']['x'][0, 0][:, 0]
assert np.array_equal(x, pd.read_hdf(sys.argv[3], 't')['x'].to_numpy())
print(names, part)
"#,
            &[s(&mat), version, s(&store)],
        );
        assert_eq!(
            fields.trim(),
            "['f', 'run', 't'] ['i', 'key', 'kind', 'name', 'ok', 'two words', 'x']",
            "{version}"
        );
    }
}

/// Checks records (argv[2]: `.npy`, or `.npz` and member argv[4]) against the key argv[3] of
/// store argv[1] as `df.to_records()`.
const CHECK_RECORDS: &str = r#"
import sys, numpy as np, pandas as pd
store, out, key = sys.argv[1:4]
got = np.load(out) if len(sys.argv) < 5 else np.load(out)[sys.argv[4]]
want = pd.read_hdf(store, key).to_records()
assert got.shape == want.shape and got.dtype.names == want.dtype.names, (got.dtype, want.dtype)
for name in want.dtype.names:
    w = want[name]
    if w.dtype == object:
        assert [str(v) for v in got[name]] == [str(v) for v in w], name
    else:
        assert got[name].dtype == w.dtype and np.array_equal(got[name], w), name
print('ok')
"#;

#[test]
fn store_keys_into_npy_and_an_npz_member_are_their_records() {
    let dir = tempdir();
    let (pq, store) = (dir.path().join("f.parquet"), dir.path().join("s.h5"));
    run_python(MAKE_FRAME, &[s(&pq), s(&store)]);
    for key in ["t", "f", "run/part"] {
        let src = format!("{}:/{key}", s(&store));
        let npy = dir.path().join(format!("{}.npy", key.replace('/', "_")));
        ok(&["convert", &src, s(&npy)]);
        let checked = run_python(CHECK_RECORDS, &[s(&store), s(&npy), key]);
        assert_eq!(checked.trim(), "ok");
        let npz = dir.path().join(format!("{}.npz", key.replace('/', "_")));
        ok(&["convert", &src, &format!("{}:rec", s(&npz))]);
        let checked = run_python(CHECK_RECORDS, &[s(&store), s(&npz), key, "rec"]);
        assert_eq!(checked.trim(), "ok");
    }
    // A name where a destination takes none is refused, not dropped.
    for (src, dst, says) in [
        (
            s(&store).to_string(),
            format!("{}:rec", s(&dir.path().join("all.npz"))),
            "name a key",
        ),
        (
            format!("{}:/t", s(&store)),
            format!("{}:x", s(&dir.path().join("t.parquet"))),
            "drop ':x'",
        ),
    ] {
        let out = sciio(&["convert", &src, &dst]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(says) && err.lines().count() == 1, "{err}");
    }
    // .npy holds no compression.
    let out = sciio(&[
        "convert",
        &format!("{}:/t", s(&store)),
        s(&dir.path().join("z.npy")),
        "--compress",
        "zlib",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

/// Every old pandas store of `shared/corpus/pandas-legacy-hdf` (pandas 0.10-0.25, Python 2
/// pickles, keys sciio cannot read) goes whole into MAT v7 and v7.3 as into `.npz`: the same
/// keys, a struct each; keys and columns that cannot be carried are left out with a report,
/// never the whole file.
#[test]
fn old_pandas_stores_go_into_mat_key_by_key_as_into_npz() {
    let corpus = sciio_testkit::shared_corpus("pandas-legacy-hdf");
    let mut stores: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "h5"))
        .collect();
    stores.sort();
    assert!(
        stores.len() >= 10,
        "{} stores in {}",
        stores.len(),
        corpus.display()
    );
    let dir = tempdir();
    let mut problems = Vec::new();
    for store in &stores {
        let npz = dir.path().join("x.npz");
        let zipped = sciio(&["convert", s(store), s(&npz)]);
        assert!(zipped.status.success(), "{}: {zipped:?}", store.display());
        for version in ["7", "7.3"] {
            let mat = dir.path().join(format!("x{version}.mat"));
            let out = sciio(&["convert", s(store), s(&mat), "--mat-version", version]);
            let err = String::from_utf8_lossy(&out.stderr);
            if !out.status.success() || err.lines().any(|l| !l.starts_with("sciio: left out")) {
                problems.push(format!("{} v{version}: {out:?}", store.display()));
                continue;
            }
            let same = run_python(
                r#"
import sys, numpy as np, scipy.io, h5py
npz, mat, version = sys.argv[1:4]
keys = sorted({m.split('/')[0] for m in np.load(npz).files})
if version == '7.3':
    with h5py.File(mat, 'r') as f:
        names = sorted(k for k in f if not k.startswith('#'))
else:
    names = sorted(k for k in scipy.io.loadmat(mat) if not k.startswith('__'))
print('same' if names == keys else f'{names} != {keys}')
"#,
                &[s(&npz), s(&mat), version],
            );
            if same.trim() != "same" {
                problems.push(format!("{} v{version}: {same}", store.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
