//! Streaming conversions run in bounded memory: the same conversion of a 64 MiB and a 512 MiB
//! source differs in the converting process's peak RSS (`ru_maxrss` of the child, from
//! `wait4`) by less than 64 MiB, and neither reaches 512 MiB (issue 17). Sources come from
//! python/scale_sources.py (numpy, PyTables, pyarrow); every output is checked against the
//! source by the Python tool at the small size. At most two cases run at once (each child's
//! `ru_maxrss` is its own) and they remove their files as they go, so the scratch disk holds at
//! most two sources and two outputs (about 2 GiB).

use std::path::Path;
use std::sync::{Condvar, Mutex};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const SMALL: u64 = 64 << 20;
const LARGE: u64 = 512 << 20;
/// The most the peak RSS may grow from the small to the large source.
const GROWTH: u64 = 64 << 20;
/// The bound on any streaming conversion's peak RSS, whatever the size.
const CEILING: u64 = 512 << 20;

/// How many cases may run at once: two keep both cores of CI busy (source generation is one
/// Python thread) while bounding the scratch disk.
const AT_ONCE: usize = 2;

static RUNNING: Mutex<usize> = Mutex::new(0);
static SLOT_FREED: Condvar = Condvar::new();

/// One of the [`AT_ONCE`] places to run a case, held until dropped.
struct Slot;

impl Slot {
    fn take() -> Slot {
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        while *running >= AT_ONCE {
            running = SLOT_FREED.wait(running).unwrap_or_else(|e| e.into_inner());
        }
        *running += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        SLOT_FREED.notify_one();
    }
}

/// Runs `sciio args...` and returns its peak RSS in bytes, failing the test when it fails.
fn peak_rss(args: &[&str]) -> u64 {
    sciio_testkit::peak_rss(env!("CARGO_BIN_EXE_sciio"), args)
}

fn generate(kind: &str, path: &Path, bytes: u64) {
    sciio_testkit::run_python_script(
        "python/scale_sources.py",
        &[kind, s(path), &bytes.to_string()],
    );
}

fn remove(path: &Path) {
    if path.is_dir() {
        std::fs::remove_dir_all(path).unwrap();
    } else if path.exists() {
        std::fs::remove_file(path).unwrap();
    }
}

/// Converts a `kind` source of each size with `sciio convert SRC[:node] DST extra...`, checks
/// the small output with `check` (Python code given the source and output paths as
/// sys.argv[1], sys.argv[2]), and compares the peak RSS of the two runs.
fn bounded(kind: &str, src_ext: &str, node: &str, dst: &str, extra: &[&str], check: &str) {
    bounded_after(kind, src_ext, node, (dst, ""), None, extra, check);
}

/// [`bounded`] into `DST{dst_node}` (`out.mat` and `:/s/x`, say), the output first made
/// (unmeasured) by `sciio convert SRC[:node] DST first...` when `first` is given: the
/// measured conversion then changes an existing file.
fn bounded_after(
    kind: &str,
    src_ext: &str,
    node: &str,
    (dst, dst_node): (&str, &str),
    first: Option<&[&str]>,
    extra: &[&str],
    check: &str,
) {
    let command = |src: &str, out: &str| {
        let mut args = vec![
            "convert".to_string(),
            format!("{src}{node}"),
            format!("{out}{dst_node}"),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        args
    };
    bounded_command(kind, src_ext, node, (dst, dst_node), first, &command, check);
}

/// [`bounded_after`] measuring the `sciio` command `command(source, output)` gives.
fn bounded_command(
    kind: &str,
    src_ext: &str,
    node: &str,
    (dst, dst_node): (&str, &str),
    first: Option<&[&str]>,
    command: &dyn Fn(&str, &str) -> Vec<String>,
    check: &str,
) {
    let _slot = Slot::take();
    let dir = sciio_testkit::tempdir();
    let src = dir.path().join(format!("src.{src_ext}"));
    let out = dir.path().join(dst);
    let mut rss = Vec::new();
    for size in [SMALL, LARGE] {
        generate(kind, &src, size);
        let src_arg = format!("{}{node}", s(&src));
        let dst_arg = format!("{}{dst_node}", s(&out));
        if let Some(first) = first {
            let mut args = vec!["convert", src_arg.as_str(), dst_arg.as_str()];
            args.extend_from_slice(first);
            peak_rss(&args);
        }
        let args = command(s(&src), s(&out));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let started = std::time::Instant::now();
        rss.push(peak_rss(&args));
        eprintln!(
            "{kind} -> {dst}{dst_node} {:?}: {} MiB in {:.1} s, peak RSS {} MiB",
            &args[3.min(args.len())..],
            size >> 20,
            started.elapsed().as_secs_f64(),
            rss[rss.len() - 1] >> 20
        );
        if size == SMALL && !check.is_empty() {
            sciio_testkit::run_python(check, &[s(&src), s(&out)]);
        }
        remove(&out);
        remove(&src);
    }
    assert_bounded(&format!("{kind} -> {dst}"), &rss);
}

/// Peak RSS `rss` of a conversion at 64 MiB and at 512 MiB: under [`CEILING`] both, grown by
/// less than [`GROWTH`].
fn assert_bounded(what: &str, rss: &[u64]) {
    let [small, large] = rss else {
        panic!("{what}: {} measures, not 2", rss.len());
    };
    assert!(
        rss.iter().all(|&r| r < CEILING),
        "{what}: peak RSS {} MiB at 64 MiB, {} MiB at 512 MiB (over {} MiB)",
        small >> 20,
        large >> 20,
        CEILING >> 20
    );
    let growth = large.saturating_sub(*small);
    assert!(
        growth < GROWTH,
        "{what}: peak RSS {} MiB at 64 MiB, {} MiB at 512 MiB (grows by {} MiB)",
        small >> 20,
        large >> 20,
        growth >> 20
    );
}

const SAME_ARRAY: &str = "
import sys, numpy as np, tables
def load(p):
    if p.endswith('.npy'): return np.load(p, mmap_mode='r')
    if p.endswith('.npz'): return np.load(p)['x']
    with tables.open_file(p) as f:
        return f.get_node('/x' if '/x' in f else '/' + [n._v_name for n in f.root][0]).read()
a, b = load(sys.argv[1]), load(sys.argv[2])
assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
assert np.array_equal(a, b)
";

const SAME_TABLE_PARQUET: &str = "
import sys, numpy as np, tables, pyarrow.parquet as pq
with tables.open_file(sys.argv[1]) as f:
    t = f.root.t.read()
p = pq.read_table(sys.argv[2])
assert p.num_rows == len(t), (p.num_rows, len(t))
for name in t.dtype.names:
    col = p.column(name).to_numpy(zero_copy_only=False)
    want = t[name]
    if want.ndim > 1:
        col = np.stack(col)
    assert np.array_equal(col.astype(want.dtype), want), name
";

const SAME_PARQUET_TABLE: &str = "
import sys, numpy as np, tables, pyarrow.parquet as pq
p = pq.read_table(sys.argv[1])
with tables.open_file(sys.argv[2]) as f:
    t = f.root.src.read()
assert len(t) == p.num_rows, (len(t), p.num_rows)
for name in ('i', 'x', 'y'):
    assert np.array_equal(t[name], p.column(name).to_numpy()), name
assert [v.decode() for v in t['s'][:1000]] == p.column('s').to_pylist()[:1000]
assert t['s'][-1].decode() == p.column('s')[-1].as_py()
";

const SAME_RECORDS_TABLE: &str = "
import sys, numpy as np, tables
a = np.load(sys.argv[1], mmap_mode='r')
with tables.open_file(sys.argv[2]) as f:
    t = f.root.src
    assert t._c_classid == 'TABLE', t._c_classid
    t = t.read()
assert t.dtype == a.dtype, (t.dtype, a.dtype)
assert np.array_equal(t, a)
";

#[test]
fn h5_earray_to_npy_streams() {
    bounded("earray", "h5", ":/x", "out.npy", &[], SAME_ARRAY);
}

#[test]
fn npy_to_h5_array_streams() {
    bounded("npy", "npy", "", "out.h5", &[], SAME_ARRAY);
}

#[test]
fn npz_member_to_h5_array_streams() {
    bounded("npz", "npz", ":x", "out.h5", &[], SAME_ARRAY);
}

#[test]
fn structured_npy_to_h5_table_streams() {
    bounded("npy_rec", "npy", "", "out.h5", &[], SAME_RECORDS_TABLE);
}

#[test]
fn h5_table_to_parquet_streams() {
    bounded("table", "h5", ":/t", "out.parquet", &[], SAME_TABLE_PARQUET);
}

#[test]
fn h5_table_with_a_subarray_field_to_parquet_streams() {
    bounded(
        "table_sub",
        "h5",
        ":/t",
        "out.parquet",
        &[],
        SAME_TABLE_PARQUET,
    );
}

#[test]
fn parquet_to_h5_table_streams() {
    // A plain PyTables Table (a frame into .h5 is a pandas HDFStore key by default).
    bounded(
        "parquet",
        "parquet",
        "",
        "out.h5",
        &["--store-format", "pytables"],
        SAME_PARQUET_TABLE,
    );
}

#[test]
fn h5_table_to_partitioned_parquet_streams() {
    bounded(
        "table_sub",
        "h5",
        ":/t",
        "parts",
        &["--partition-rows", "1000000"],
        "
import sys, numpy as np, tables, pyarrow.dataset as ds
with tables.open_file(sys.argv[1]) as f:
    t = f.root.t.read()
p = ds.dataset(sys.argv[2], format='parquet').to_table()
assert p.num_rows == len(t)
assert np.array_equal(p.column('i').to_numpy(), t['i'])
assert np.array_equal(np.stack(p.column('v').to_numpy(zero_copy_only=False)), t['v'])
",
    );
}

#[test]
fn mat73_matrix_to_npy_streams() {
    // A MATLAB N-by-64 double (HDF5 (64, N)): the .npy is Fortran-ordered, its bytes the
    // dataset's as stored, read a block at a time.
    bounded(
        "mat73",
        "mat",
        ":x",
        "out.npy",
        &[],
        "
import sys, numpy as np, mat73
want = mat73.loadmat(sys.argv[1])['x']
got = np.load(sys.argv[2], mmap_mode='r')
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
assert np.isfortran(got)
assert np.array_equal(got, want)
",
    );
}

#[test]
fn mat73_matrix_to_npz_member_streams() {
    bounded(
        "mat73",
        "mat",
        ":x",
        "out.npz",
        &[],
        "
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], 'r') as f:
    want = f['x'][()].T
got = np.load(sys.argv[2])['x']
assert got.shape == want.shape, (got.shape, want.shape)
assert np.array_equal(got, want)
",
    );
}

const SAME_FRAME_NUMPY: &str = "
import sys, numpy as np, pandas as pd
df = pd.read_parquet(sys.argv[1])
out = np.load(sys.argv[2])
if sys.argv[2].endswith('.npz'):
    assert sorted(out.files) == sorted(['index'] + list(df.columns)), out.files
    get = lambda name: out[name]
    assert np.array_equal(out['index'], df.index.to_numpy())
else:
    assert out.dtype.names == tuple(df.columns), out.dtype
    get = lambda name: out[name]
for name in df.columns:
    want = df[name].to_numpy()
    assert np.array_equal(get(name), want.astype(get(name).dtype)), name
";

#[test]
fn parquet_to_npy_streams() {
    bounded("parquet", "parquet", "", "out.npy", &[], SAME_FRAME_NUMPY);
}

#[test]
fn parquet_to_npz_streams() {
    bounded("parquet", "parquet", "", "out.npz", &[], SAME_FRAME_NUMPY);
}

/// pandas reads the key (named by the source's stem) as the Parquet frame, `sys.argv[3]` times
/// over (1 when not given).
const SAME_FRAME_STORE: &str = "
import sys, pandas as pd
src = pd.read_parquet(sys.argv[1])
want = pd.concat([src] * int((sys.argv[3:] or [1])[0]))
got = pd.read_hdf(sys.argv[2], 'src')
pd.testing.assert_frame_equal(got, want, check_dtype=True)
";

#[test]
fn parquet_to_hdfstore_table_key_streams() {
    // A frame into .h5 is a pandas HDFStore `table` key by default.
    bounded("parquet", "parquet", "", "out.h5", &[], SAME_FRAME_STORE);
}

/// Each member of the `.npz` equals the store key's column (or index) as pandas reads it.
const SAME_STORE_NPZ: &str = "
import sys, numpy as np, pandas as pd
df = pd.read_hdf(sys.argv[1], 'df')
z = np.load(sys.argv[2])
assert sorted(z.files) == sorted(['df/index', 'df/i', 'df/x', 'df/y']), z.files
assert np.array_equal(z['df/index'], df.index.to_numpy())
for c in ('i', 'x', 'y'):
    assert z['df/' + c].dtype == df[c].dtype, c
    assert np.array_equal(z['df/' + c], df[c].to_numpy()), c
";

#[test]
fn hdfstore_table_key_to_npz_streams() {
    bounded("store", "h5", "", "out.npz", &[], SAME_STORE_NPZ);
}

/// The store key `df` (argv[1]) as pandas reads it equals the Parquet frame (argv[2]).
const SAME_STORE_PARQUET: &str = "
import sys, pandas as pd
a, b = pd.read_hdf(sys.argv[1], 'df'), pd.read_parquet(sys.argv[2])
pd.testing.assert_frame_equal(a, b, check_index_type=True)
";

#[test]
fn hdfstore_fixed_key_to_parquet_streams() {
    bounded(
        "store_fixed",
        "h5",
        ":/df",
        "out.parquet",
        &[],
        SAME_STORE_PARQUET,
    );
}

#[test]
fn hdfstore_fixed_series_key_to_parquet_streams() {
    // The Series' values and index read by row ranges, batch by batch.
    bounded(
        "store_series",
        "h5",
        ":/s",
        "out.parquet",
        &[],
        "
import sys, pandas as pd
s, b = pd.read_hdf(sys.argv[1], 's'), pd.read_parquet(sys.argv[2])
pd.testing.assert_frame_equal(s.to_frame(), b, check_index_type=True)
",
    );
}

#[test]
fn hdfstore_fixed_key_over_a_multiindex_to_parquet_streams() {
    // The MultiIndex's codes read by row ranges, its levels whole.
    bounded(
        "store_fixed_multi",
        "h5",
        ":/df",
        "out.parquet",
        &[],
        SAME_STORE_PARQUET,
    );
}

#[test]
fn hdfstore_fixed_series_key_to_npz_streams() {
    // Gathered into the members' temporary files slice by slice, as a frame key.
    bounded(
        "store_series",
        "h5",
        ":/s",
        "out.npz",
        &[],
        "
import sys, numpy as np, pandas as pd
s, z = pd.read_hdf(sys.argv[1], 's'), np.load(sys.argv[2])
assert sorted(z.files) == ['k', 'v'], z.files
assert np.array_equal(z['k'], s.index.to_numpy()) and z['k'].dtype == s.index.dtype
assert np.array_equal(z['v'], s.to_numpy()) and z['v'].dtype == s.dtype
",
    );
}

#[test]
fn sql_over_a_fixed_series_key_streams() {
    // A printed result over the whole Series: its batches read by row ranges as the query
    // asks for them.
    let query = |src: &str, _out: &str| {
        let select = format!(
            "SELECT count(*) AS n, sum(v) AS s, max(k) AS k FROM '{}:/s'",
            src.replace('\'', "''")
        );
        vec!["sql".to_string(), select]
    };
    bounded_command("store_series", "h5", "", ("unused", ""), None, &query, "");
}

/// pandas reads the fixed key `/df` as the Parquet frame, and its layout is the fixed
/// format's: blocks (their dtypes and shapes), the index node and the key's attributes as
/// pandas' own `to_hdf(format='fixed')` of the frame lays them out.
const SAME_FIXED_KEY: &str = "
import sys, tables, pandas as pd
src, out = sys.argv[1], sys.argv[2]
want = pd.read_parquet(src)
pd.testing.assert_frame_equal(pd.read_hdf(out, 'df'), want, check_dtype=True)
theirs = out + '.pandas.h5'
want.to_hdf(theirs, key='df', format='fixed')
def layout(path):
    with tables.open_file(path) as h:
        return [(n._v_pathname, type(n).__name__, str(getattr(n, 'dtype', '')),
                 tuple(getattr(n, 'shape', ())),
                 {a: repr(n._v_attrs[a]) for a in n._v_attrs._f_list('user')})
                for n in h.walk_nodes('/df')]
assert layout(out) == layout(theirs), (layout(out), layout(theirs))
";

/// The SQL result equals pandas' same query over the fixed key.
const SAME_SQL_OVER_FIXED: &str = "
import sys, numpy as np, pandas as pd, pyarrow.parquet as pq
d = pd.read_hdf(sys.argv[1], 'df').reset_index()
want = d[d.y < 900][['index', 'i', 't']].reset_index(drop=True)
got = pq.read_table(sys.argv[2]).to_pandas()
assert len(got) == len(want), (len(got), len(want))
for c in want.columns:
    assert np.array_equal(got[c].to_numpy(), want[c].to_numpy()), c
";

#[test]
fn parquet_to_hdfstore_fixed_key_and_sql_over_it_stream() {
    // One source per size for both: the fixed key written (number blocks filled slab by slab)
    // is then queried (its blocks read by row ranges, only the projected ones).
    let _slot = Slot::take();
    let dir = sciio_testkit::tempdir();
    let src = dir.path().join("src.parquet");
    let out = dir.path().join("out.h5");
    let result = dir.path().join("result.parquet");
    let key = format!("{}:/df", s(&out));
    let select = format!(
        "SELECT \"index\", i, t FROM '{}' WHERE y < 900",
        key.replace('\'', "''")
    );
    let (mut written, mut queried) = (Vec::new(), Vec::new());
    for size in [SMALL, LARGE] {
        generate("parquet_num", &src, size);
        let started = std::time::Instant::now();
        written.push(peak_rss(&[
            "convert",
            s(&src),
            &key,
            "--store-format",
            "fixed",
        ]));
        eprintln!(
            "parquet_num -> fixed key: {} MiB in {:.1} s, peak RSS {} MiB",
            size >> 20,
            started.elapsed().as_secs_f64(),
            written[written.len() - 1] >> 20
        );
        if size == SMALL {
            sciio_testkit::run_python(SAME_FIXED_KEY, &[s(&src), s(&out)]);
        }
        remove(&src);
        let started = std::time::Instant::now();
        queried.push(peak_rss(&["sql", &select, "--out", s(&result)]));
        eprintln!(
            "sql over the fixed key: {} MiB in {:.1} s, peak RSS {} MiB",
            size >> 20,
            started.elapsed().as_secs_f64(),
            queried[queried.len() - 1] >> 20
        );
        if size == SMALL {
            sciio_testkit::run_python(SAME_SQL_OVER_FIXED, &[s(&out), s(&result)]);
        }
        remove(&out);
        remove(&result);
    }
    assert_bounded("parquet_num -> fixed key", &written);
    assert_bounded("sql over a fixed key", &queried);
}

#[test]
fn sql_result_to_parquet_streams() {
    // `sciio sql ... --out`: the result's batches written as the query gives them.
    let query = |src: &str, out: &str| {
        let select = format!("SELECT i, x, s FROM '{src}' WHERE y < 900");
        ["sql", &select, "--out", out].map(String::from).to_vec()
    };
    bounded_command(
        "npy_rec",
        "npy",
        "",
        ("out.parquet", ""),
        None,
        &query,
        "
import sys, numpy as np, pyarrow.parquet as pq
a = np.load(sys.argv[1], mmap_mode='r')
a = a[a['y'] < 900]
p = pq.read_table(sys.argv[2])
assert p.num_rows == len(a), (p.num_rows, len(a))
assert np.array_equal(p.column('i').to_numpy(), a['i'])
assert np.array_equal(p.column('x').to_numpy(), a['x'])
",
    );
}

#[test]
fn parquet_appended_to_hdfstore_table_key_streams() {
    // The key written first, then the same rows appended to it.
    let twice = SAME_FRAME_STORE.replace("(sys.argv[3:] or [1])[0]", "2");
    bounded_after(
        "parquet",
        "parquet",
        "",
        ("out.h5", ""),
        Some(&[]),
        &["--append"],
        &twice,
    );
}

/// The output's one variable equals the source array (h5py for v7.3: MATLAB's column-major
/// matrix is the dataset's transpose; scipy for v5/v7).
const SAME_MATRIX_MAT: &str = "
import sys, numpy as np, h5py, scipy.io
src, out = sys.argv[1], sys.argv[2]
if src.endswith('.npy'):
    want = np.load(src, mmap_mode='r')
elif src.endswith('.npz'):
    want = np.load(src)['x']
else:
    import tables
    with tables.open_file(src) as f:
        want = f.root.x.read()
if h5py.is_hdf5(out):
    with h5py.File(out, 'r') as f:
        names = [k for k in f if k != '#refs#']
        assert len(names) == 1, names
        assert f[names[0]].attrs['MATLAB_class'] == b'double'
        got = f[names[0]][()].T
else:
    m = scipy.io.loadmat(out)
    names = [k for k in m if not k.startswith('__')]
    assert len(names) == 1, names
    got = m[names[0]]
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype)
assert np.array_equal(got, want)
";

#[test]
fn npy_to_mat73_streams() {
    bounded("npy", "npy", "", "out.mat", &[], SAME_MATRIX_MAT);
}

#[test]
fn npy_to_mat7_streams() {
    bounded(
        "npy",
        "npy",
        "",
        "out.mat",
        &["--mat-version", "7"],
        SAME_MATRIX_MAT,
    );
}

/// The Parquet frame's columns (argv[1]) as MAT variables (argv[2], v7.3): numeric columns
/// as MATLAB columns (h5py sees them transposed), the text column as hdf5storage reads it.
const SAME_FRAME_MAT73: &str = "
import sys, numpy as np, pyarrow.parquet as pq, h5py, hdf5storage
t = pq.read_table(sys.argv[1])
with h5py.File(sys.argv[2], 'r') as f:
    assert sorted(k for k in f if not k.startswith('#')) == ['i', 'index', 's', 'x', 'y'], list(f)
    for name in ('i', 'x', 'y'):
        got = f[name][()]
        assert got.shape == (1, t.num_rows), (name, got.shape)
        assert np.array_equal(got[0], t.column(name).to_numpy()), name
s = hdf5storage.loadmat(sys.argv[2], variable_names=['s'])['s']
assert list(s[:1000]) == t.column('s').to_pylist()[:1000]
assert s[-1] == t.column('s')[-1].as_py() and len(s) == t.num_rows
";

#[test]
fn parquet_to_mat73_streams() {
    bounded("parquet", "parquet", "", "out.mat", &[], SAME_FRAME_MAT73);
}

/// The frame's columns (argv[1]) as the fields of struct `df` of a MAT v7 file (argv[2]):
/// numbers n-by-1, the text an n-by-width char matrix (scipy: its rows, space-padded).
const SAME_FRAME_MAT7_STRUCT: &str = "
import sys, numpy as np, pyarrow.parquet as pq, scipy.io
t = pq.read_table(sys.argv[1])
df = scipy.io.loadmat(sys.argv[2])['df']
assert sorted(df.dtype.names) == ['i', 'index', 's', 'x', 'y'], df.dtype.names
for name in ('i', 'x', 'y'):
    got = df[name][0, 0]
    assert got.shape == (t.num_rows, 1), (name, got.shape)
    assert np.array_equal(got[:, 0], t.column(name).to_numpy()), name
s = df['s'][0, 0]
assert len(s) == t.num_rows, len(s)
assert [x.rstrip() for x in s[:1000]] == t.column('s').to_pylist()[:1000]
assert s[-1].rstrip() == t.column('s')[-1].as_py()
";

#[test]
fn parquet_into_a_struct_to_mat7_streams() {
    bounded_after(
        "parquet",
        "parquet",
        "",
        ("out.mat", ":df"),
        None,
        &["--mat-version", "7"],
        SAME_FRAME_MAT7_STRUCT,
    );
}

/// The store key's frame (argv[1], key `df`) as MAT v7 variables (argv[2]).
const SAME_STORE_MAT7: &str = "
import sys, numpy as np, pandas as pd, scipy.io
df = pd.read_hdf(sys.argv[1], 'df')
m = scipy.io.loadmat(sys.argv[2])
assert sorted(k for k in m if not k.startswith('__')) == ['i', 'index', 'x', 'y'], list(m)
assert np.array_equal(m['index'][:, 0], df.index.to_numpy())
for name in ('i', 'x', 'y'):
    assert m[name].dtype == df[name].dtype, name
    assert np.array_equal(m[name][:, 0], df[name].to_numpy()), name
";

#[test]
fn hdfstore_table_key_to_mat7_streams() {
    bounded(
        "store",
        "h5",
        ":/df",
        "out.mat",
        &["--mat-version", "7"],
        SAME_STORE_MAT7,
    );
}

/// The store key's frame (argv[1], key `df`) as the records of a `.npy` (argv[2]).
const SAME_STORE_RECORDS: &str = "
import sys, numpy as np, pandas as pd
want = pd.read_hdf(sys.argv[1], 'df').to_records()
got = np.load(sys.argv[2], mmap_mode='r')
assert got.dtype == want.dtype, (got.dtype, want.dtype)
assert np.array_equal(got, want)
";

#[test]
fn hdfstore_table_key_to_npy_streams() {
    bounded("store", "h5", ":/df", "out.npy", &[], SAME_STORE_RECORDS);
}

#[test]
fn npz_member_to_mat73_streams() {
    bounded("npz", "npz", ":x", "out.mat", &[], SAME_MATRIX_MAT);
}

#[test]
fn h5_carray_of_two_rows_each_half_the_data_to_npy_streams() {
    // Rows of 32 MiB at 64 MiB, 256 MiB at 512 MiB: each read as hyperslabs of a block.
    bounded("h5_wide", "h5", ":/x", "out.npy", &[], SAME_ARRAY);
}

#[test]
fn h5_earray_to_mat73_streams() {
    bounded("earray", "h5", ":/x", "out.mat", &[], SAME_MATRIX_MAT);
}

/// The output `.npy` holds the MAT source's `x` as numpy sees it (h5py: the dataset's
/// transpose).
const MAT_X_AS_NPY: &str = "
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], 'r') as f:
    want = f['x'][()].T
got = np.load(sys.argv[2], mmap_mode='r')
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
assert np.array_equal(got, want)
";

/// The output `.h5`'s PyTables array `/x` holds the MAT source's `x` as numpy sees it.
const MAT_X_AS_H5: &str = "
import sys, numpy as np, h5py, tables
with h5py.File(sys.argv[1], 'r') as f:
    want = f['x'][()].T
with tables.open_file(sys.argv[2]) as f:
    got = f.root.x.read()
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
assert np.array_equal(got, want)
";

/// The output MAT file holds the source's text (`text_*` kinds: full-width lowercase
/// strings) at `s/t` (a `.npy` converted into `out.mat:/s/t`), `g/t` (the HDF5 file's
/// `/g/t`) or as its one variable: scipy.io reads the v7 file's char array as numpy's
/// strings, h5py the v7.3 file's `uint16` codes in hdf5storage's layout.
const SAME_TEXT_MAT: &str = "
import sys, numpy as np, h5py, scipy.io
src, out = sys.argv[1], sys.argv[2]
if h5py.is_hdf5(src):
    import tables
    with tables.open_file(src) as f:
        want, path = f.root.g.t.read(), 'g/t'
else:
    want, path = np.load(src, mmap_mode='r'), 's/t'
if h5py.is_hdf5(out):
    with h5py.File(out, 'r') as f:
        path = path if path.split('/')[0] in f else [k for k in f if k != '#refs#'][0]
        d = f[path]
        assert d.attrs['MATLAB_class'] == b'char' and d.dtype == np.uint16, (d.attrs, d.dtype)
        got = d[()].T
    unit = np.uint8 if want.dtype.kind == 'S' else np.uint32
    codes = np.ascontiguousarray(want).view(unit).reshape(want.shape[:-1] + (-1,))
    assert got.shape == codes.shape and np.array_equal(got, codes), (got.shape, codes.shape)
else:
    m = scipy.io.loadmat(out)
    top, *rest = path.split('/')
    got = m[top] if top in m else m[[k for k in m if not k.startswith('__')][0]]
    for p in (rest if top in m else []):
        got = got[0, 0][p]
    want = np.char.decode(want, 'ascii') if want.dtype.kind == 'S' else want
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.array_equal(got, want)
";

#[test]
fn text_npy_below_a_struct_path_to_mat7_streams() {
    // The struct's element planned from a first pass over the codes, then written.
    let extra = ["--mat-version", "7"];
    let dst = ("out.mat", ":/s/t");
    bounded_after("text_npy", "npy", "", dst, None, &extra, SAME_TEXT_MAT);
}

#[test]
fn fortran_order_text_npy_to_mat73_streams() {
    // Each string's units together: staged in MATLAB's order through a temporary file.
    bounded("text_npy_f", "npy", "", "out.mat", &[], SAME_TEXT_MAT);
}

#[test]
fn h5_string_earray_in_a_group_to_mat7_streams() {
    // A PyTables StringAtom EArray `/g/t`: field `t` of struct `g`, read by hyperslabs.
    let extra = ["--mat-version", "7"];
    bounded("text_h5", "h5", "", "out.mat", &extra, SAME_TEXT_MAT);
}

#[test]
fn npy_3d_to_mat73_streams() {
    // A C-order N-by-64-by-8 array: blocks of rows put in Fortran order through a temporary
    // file, read on a thread of its own.
    bounded("npy3", "npy", "", "out.mat", &[], SAME_MATRIX_MAT);
}

#[test]
fn fortran_order_npy_to_mat5_streams() {
    // Its stored bytes are MATLAB's order: read where they are, a piece ahead.
    bounded(
        "npy_f",
        "npy",
        "",
        "out.mat",
        &["--mat-version", "5"],
        SAME_MATRIX_MAT,
    );
}

#[test]
fn npy_with_16_mib_rows_to_mat73_streams() {
    // Rows over a block: a run of columns is one read per row of the .npy itself.
    bounded("npy_wide", "npy", "", "out.mat", &[], SAME_MATRIX_MAT);
}

#[test]
fn npy_with_16_mib_rows_of_two_axes_to_mat73_streams() {
    // Rows of two axes over a block: each row put in Fortran order through a temporary file
    // of its own, a block of its rows at a time, then read back piece by piece.
    bounded("npy3_wide", "npy", "", "out.mat", &[], SAME_MATRIX_MAT);
}

#[test]
fn mat73_3d_array_to_h5_array_streams() {
    // MATLAB's N-by-64-by-8 array becomes a C-order PyTables array of the same shape.
    bounded("mat73_3d", "mat", ":x", "out.h5", &[], MAT_X_AS_H5);
}

#[test]
fn mat73_matrix_in_thick_chunks_to_npy_streams() {
    // A MATLAB 4Mi-by-M double whose HDF5 chunks are two columns thick, each column 32 MiB:
    // read in runs of whole chunk rows (two columns at a time).
    bounded("mat73_tall", "mat", ":x", "out.npy", &[], MAT_X_AS_NPY);
}

#[test]
fn mat73_matrix_in_thick_wide_chunks_to_npy_streams() {
    // Chunks two columns thick, each column 64 MiB: a chunk row (128 MiB) is read in bands,
    // windows of whole chunks, the second column through a temporary file.
    bounded("mat73_wide", "mat", ":x", "out.npy", &[], MAT_X_AS_NPY);
}

#[test]
fn mat73_matrix_to_h5_array_streams() {
    // MATLAB's column-major matrix becomes a C-order PyTables array: transposed through a
    // temporary file, a block of rows at a time.
    bounded("mat73", "mat", ":x", "out.h5", &[], MAT_X_AS_H5);
}

#[test]
fn mat73_matrix_of_two_rows_each_half_the_data_to_h5_streams() {
    // MATLAB's 2-by-N double: C-order rows of 32 MiB at 64 MiB, 256 MiB at 512 MiB, each
    // written into the .h5 in pieces gathered from the transposed columns.
    bounded("mat73_2row", "mat", ":x", "out.h5", &[], MAT_X_AS_H5);
}

#[test]
fn mat73_matrix_of_nine_rows_each_a_ninth_of_the_data_to_h5_streams() {
    // MATLAB's 9-by-N double: C-order rows of 7 MiB at 64 MiB (blocks of one row from the
    // stored columns), 57 MiB at 512 MiB: more rows than are read from the stored columns,
    // so the columns are transposed into rows as they are copied and each row written into
    // the .h5 in pieces.
    bounded("mat73_9row", "mat", ":x", "out.h5", &[], MAT_X_AS_H5);
}

#[test]
fn mat73_nd_array_of_two_rows_each_half_the_data_to_h5_streams() {
    // MATLAB's 2-by-64-by-N double: C-order rows of shape (64, N), 32 MiB at 64 MiB, 256 MiB
    // at 512 MiB, each written into the .h5 in pieces (runs of its first axis) gathered
    // from the column-major data.
    bounded("mat73_2row_3d", "mat", ":x", "out.h5", &[], MAT_X_AS_H5);
}

#[test]
fn mat73_matrix_to_parquet_streams() {
    // MATLAB's column-major matrix becomes one fixed-size list column, a list per row:
    // gathered a block of rows at a time from a temporary file of the stored bytes.
    bounded(
        "mat73",
        "mat",
        ":x",
        "out.parquet",
        &[],
        "
import sys, numpy as np, h5py, pyarrow.parquet as pq
with h5py.File(sys.argv[1], 'r') as f:
    want = f['x'][()].T
t = pq.read_table(sys.argv[2])
assert t.num_columns == 1 and t.num_rows == want.shape[0], (t.schema, t.num_rows)
col = t.column(0).combine_chunks()
got = col.flatten().to_numpy().reshape(t.num_rows, -1)
assert got.shape == want.shape and np.array_equal(got, want)
",
    );
}

/// The copy's variable `x` equals the v7.3 source's (mat73; the copy read with h5py for v7.3,
/// scipy for v7).
const SAME_MAT_COPY: &str = "
import sys, numpy as np, h5py, scipy.io, mat73
want = mat73.loadmat(sys.argv[1])['x']
if h5py.is_hdf5(sys.argv[2]):
    with h5py.File(sys.argv[2], 'r') as f:
        assert f['x'].attrs['MATLAB_class'] == b'double'
        got = f['x'][()].T
else:
    got = scipy.io.loadmat(sys.argv[2])['x']
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype)
assert np.array_equal(got, want)
";

#[test]
fn mat73_file_to_mat73_streams() {
    // MAT -> MAT copies MATLAB values; a large numeric variable goes piece by piece.
    bounded("mat73", "mat", "", "out.mat", &[], SAME_MAT_COPY);
}

#[test]
fn mat73_variable_to_mat7_streams() {
    // one variable picked with SRC:NODE streams as in a whole-file copy
    bounded(
        "mat73",
        "mat",
        ":x",
        "out.mat",
        &["--mat-version", "7"],
        SAME_MAT_COPY,
    );
}

/// Variable x of the source (mat73, argv[1]) equals field x of struct s of the output
/// (argv[2]): h5py for v7.3 (the struct a group of class "struct" listing x in MATLAB_fields),
/// scipy for v5/v7.
const SAME_MAT_FIELD: &str = "
import sys, numpy as np, h5py, scipy.io, mat73
want = mat73.loadmat(sys.argv[1])['x']
if h5py.is_hdf5(sys.argv[2]):
    with h5py.File(sys.argv[2], 'r') as f:
        assert f['s'].attrs['MATLAB_class'] == b'struct'
        assert [bytes(n).decode() for n in f['s'].attrs['MATLAB_fields']] == ['x']
        assert f['s/x'].attrs['MATLAB_class'] == b'double'
        got = f['s/x'][()].T
else:
    s = scipy.io.loadmat(sys.argv[2])['s']
    assert s.dtype.names == ('x',), s.dtype.names
    got = s[0, 0]['x']
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype)
assert np.array_equal(got, want)
";

#[test]
fn mat73_variable_into_a_struct_to_mat7_streams() {
    // DST:NODE /s/x: the variable is field x of struct s, written piece by piece with the
    // struct when the file is finished (was: the struct held whole until then).
    bounded_after(
        "mat73",
        "mat",
        ":x",
        ("out.mat", ":/s/x"),
        None,
        &["--mat-version", "7"],
        SAME_MAT_FIELD,
    );
}

#[test]
fn mat73_file_into_a_struct_to_mat73_streams() {
    // DST:NODE /s: each variable a field of struct s (a group its datasets go into).
    bounded_after(
        "mat73",
        "mat",
        "",
        ("out.mat", ":/s"),
        None,
        &[],
        SAME_MAT_FIELD,
    );
}

#[test]
fn npy_into_a_struct_to_mat5_streams() {
    // A .npy as field x of struct s of a v5 file (the neutral tree's route).
    bounded_after(
        "npy",
        "npy",
        "",
        ("out.mat", ":/s/x"),
        None,
        &["--mat-version", "5"],
        "
import sys, numpy as np, scipy.io
want = np.load(sys.argv[1], mmap_mode='r')
s = scipy.io.loadmat(sys.argv[2])['s']
assert s.dtype.names == ('x',), s.dtype.names
got = s[0, 0]['x']
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype)
assert np.array_equal(got, want)
",
    );
}

#[test]
fn mat73_complex_matrix_to_npy_streams() {
    // A complex MATLAB N-by-64 double: the .npy's complex128 elements are the compound's
    // (real, imag) pairs as stored, read a block at a time (was: the whole variable).
    bounded(
        "mat73_complex",
        "mat",
        ":x",
        "out.npy",
        &[],
        "
import sys, numpy as np, hdf5storage
want = hdf5storage.loadmat(sys.argv[1])['x']
got = np.load(sys.argv[2], mmap_mode='r')
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype)
assert np.isfortran(got)
assert np.array_equal(got, want)
",
    );
}

#[test]
fn mat73_big_endian_matrix_to_npy_streams() {
    // Each double's bytes reversed as the blocks pass (was: the whole variable read).
    bounded(
        "mat73_be",
        "mat",
        ":x",
        "out.npy",
        &[],
        "
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], 'r') as f:
    want = f['x'][()].T
assert want.dtype == np.dtype('>f8'), want.dtype
got = np.load(sys.argv[2], mmap_mode='r')
assert got.shape == want.shape and got.dtype == np.dtype('=f8'), (got.shape, got.dtype)
assert np.array_equal(got, want)
",
    );
}

#[test]
fn mat73_logical_matrix_to_npy_streams() {
    // MATLAB's logical bytes made numpy booleans as the blocks pass (was: read whole), the
    // .npy byte for byte np.save of hdf5storage's value.
    bounded(
        "mat73_logical",
        "mat",
        ":x",
        "out.npy",
        &[],
        "
import sys, io, numpy as np, hdf5storage
want = hdf5storage.loadmat(sys.argv[1])['x']
assert want.dtype == np.bool_, want.dtype
buf = io.BytesIO()
np.save(buf, np.asfortranarray(want))
assert open(sys.argv[2], 'rb').read() == buf.getvalue()
",
    );
}

/// A complex v7 variable (its file small: few distinct values) and its copy, as scipy.io
/// loads them: equal, the `.npy` Fortran-ordered.
const SAME_MAT7_COMPLEX: &str = "
import sys, numpy as np, scipy.io
want = scipy.io.loadmat(sys.argv[1])['x']
out = sys.argv[2]
got = np.load(out, mmap_mode='r') if out.endswith('.npy') else scipy.io.loadmat(out)['x']
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype)
assert not out.endswith('.npy') or np.isfortran(got)
assert np.array_equal(got, want)
";

#[test]
fn mat7_complex_matrix_to_npy_streams() {
    // The real and imaginary parts, stored one after the other in the zlib stream, inflated
    // side by side and interleaved a piece at a time (was: the whole variable read).
    bounded(
        "mat7_complex",
        "mat",
        ":x",
        "out.npy",
        &[],
        SAME_MAT7_COMPLEX,
    );
}

#[test]
fn mat7_complex_matrix_to_mat7_streams() {
    // MAT -> MAT v7: the writer takes the real parts, then the imaginary ones: the source
    // streamed twice (was: the whole variable read).
    bounded(
        "mat7_complex",
        "mat",
        "",
        "out.mat",
        &["--mat-version", "7"],
        SAME_MAT7_COMPLEX,
    );
}

#[test]
fn mat7_logical_matrix_to_npy_streams() {
    // A v7 logical (class uint8 with the logical flag, data miUINT8, as MATLAB and scipy.io
    // store it), its bytes made numpy booleans as they inflate (was: read whole), the .npy
    // byte for byte np.save of scipy.io's value != 0 (scipy gives logicals as uint8).
    bounded(
        "mat7_logical",
        "mat",
        ":x",
        "out.npy",
        &[],
        "
import sys, io, numpy as np, scipy.io
want = scipy.io.loadmat(sys.argv[1])['x']
assert want.dtype == np.uint8 and want.max() > 1, (want.dtype, want.max())
buf = io.BytesIO()
np.save(buf, np.asfortranarray(want != 0))
assert open(sys.argv[2], 'rb').read() == buf.getvalue()
",
    );
}

#[test]
fn mat7_random_matrix_to_npy_streams() {
    // Barely compressible: the v7 file is 95% of its data. Read from the file a piece at a
    // time as it inflates (was: the whole file read into memory at open).
    bounded(
        "mat7_random",
        "mat",
        ":x",
        "out.npy",
        &[],
        SAME_MAT7_COMPLEX,
    );
}

#[test]
fn mat4_random_matrix_to_npy_streams() {
    // A MAT v4 matrix: its header walked at open, its data read from the file a piece at a
    // time (was: the whole file read into memory and decoded at open).
    bounded(
        "mat4_random",
        "mat",
        ":x",
        "out.npy",
        &[],
        SAME_MAT7_COMPLEX,
    );
}
