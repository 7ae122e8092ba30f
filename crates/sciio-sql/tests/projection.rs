//! Projection pushdown into the reads of wide tables: a query naming one column of a
//! PyTables Table or of a pandas HDFStore `table` key reads only the bytes of the fields that
//! hold it (of a `fixed` frame or Series key: the index — its codes for a MultiIndex — and
//! the blocks that hold it) (`ReadStats::bytes_read`, sized from the file's own dtype as PyTables reports
//! it), and its result is what pandas computes on the same file.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use sciio_sql::datafusion::arrow::array::{Array, Float64Array, Int64Array, RecordBatch};
use sciio_sql::datafusion::arrow::compute::cast;
use sciio_sql::datafusion::arrow::datatypes::DataType;
use sciio_sql::{FileTable, SqlSession};

const ROWS: usize = 20_000;

/// Runs `code` (with `path` as argv[1]) and reads its `name=value` lines.
fn python_facts(code: &str, path: &Path) -> HashMap<String, String> {
    let out = sciio_testkit::run_python(code, &[path.to_str().unwrap()]);
    out.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn number(facts: &HashMap<String, String>, name: &str) -> f64 {
    facts[name].parse().unwrap()
}

fn ints(facts: &HashMap<String, String>, name: &str) -> Vec<i64> {
    facts[name]
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect()
}

/// Column `i` of every batch, cast to `to`.
fn column(batches: &[RecordBatch], i: usize, to: &DataType) -> Vec<Arc<dyn Array>> {
    batches
        .iter()
        .map(|b| cast(b.column(i), to).unwrap())
        .collect()
}

fn i64s(batches: &[RecordBatch], i: usize) -> Vec<i64> {
    column(batches, i, &DataType::Int64)
        .iter()
        .flat_map(|a| {
            let a = a.as_any().downcast_ref::<Int64Array>().unwrap();
            a.values().to_vec()
        })
        .collect()
}

fn one_f64(batches: &[RecordBatch]) -> f64 {
    let a = &column(batches, 0, &DataType::Float64)[0];
    a.as_any().downcast_ref::<Float64Array>().unwrap().value(0)
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

fn session_with(name: &str, target: &str) -> (SqlSession, Arc<FileTable>) {
    let table = Arc::new(FileTable::open(target).unwrap());
    let session = SqlSession::new().unwrap();
    session.register_table(name, table.clone()).unwrap();
    (session, table)
}

/// A PyTables Table of 45 fields (an int64 id, 40 float64, a string, an int32, a (2,)
/// float32 subarray, a nested record), zlib-compressed in chunks of 1000 rows, and a compound dataset of
/// big-endian members written by h5py; prints what pandas/numpy compute on them and the
/// fields' item sizes.
const WIDE_TABLE: &str = r#"
import sys
import numpy as np, pandas as pd, tables
path = sys.argv[1]
n = 20_000
rng = np.random.default_rng(4)
dt = [("id", "<i8")] + [(f"f{i}", "<f8") for i in range(40)] + [
    ("name", "S16"), ("be", "<i4"), ("pair", "<f4", (2,)),
    ("nest", [("a", "<i4"), ("b", "<f8")])]
t = np.zeros(n, dtype=dt)
t["id"] = np.arange(n)
for i in range(40):
    t[f"f{i}"] = rng.random(n)
t["name"] = [b"row%d" % i for i in range(n)]
t["be"] = (np.arange(n) * 7919) % 1000
t["pair"] = rng.random((n, 2))
t["nest"]["a"] = np.arange(n) % 11
t["nest"]["b"] = rng.random(n)
with tables.open_file(path, "w") as f:
    f.create_table("/", "wide", obj=t, filters=tables.Filters(5, "zlib"), chunkshape=(1000,))
with tables.open_file(path) as f:
    read = f.root.wide.read()
df = pd.DataFrame({n: read[n] for n in read.dtype.names if n not in ("pair", "nest")})
print("sum_nest_b=%r" % float(read["nest"]["b"].sum()))
print("nest_size=%d" % read.dtype["nest"].itemsize)
print("sum_f7=%r" % float(df.f7.sum()))
hits = df[df.be % 7 == 0].sort_values("id")
print("hit_ids=" + ",".join(str(i) for i in hits.id))
print("hit_be=" + ",".join(str(i) for i in hits.be))
print("itemsize=%d" % read.dtype.itemsize)
print("f7_size=%d" % read.dtype["f7"].itemsize)
print("id_be_size=%d" % (read.dtype["id"].itemsize + read.dtype["be"].itemsize))
# A compound dataset h5py writes (no PyTables attributes), big-endian members.
import h5py
be = np.zeros(n, dtype=[("a", ">f8"), ("b", ">i4"), ("c", "S4")])
be["a"] = rng.random(n)
be["b"] = np.arange(n) % 977
be["c"] = b"abc"
with h5py.File(path, "a") as f:
    f.create_dataset("be", data=be, chunks=(512,), compression="gzip")
print("be_sum_a=%r" % float(be["a"].sum()))
print("be_sum_b=%d" % int(be["b"].astype(np.int64).sum()))
print("be_ab_size=%d" % (be.dtype["a"].itemsize + be.dtype["b"].itemsize))
"#;

#[test]
fn one_column_of_a_wide_pytables_table_reads_only_its_bytes() {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("wide.h5");
    let facts = python_facts(WIDE_TABLE, &path);
    let target = format!("{}:/wide", path.display());

    let (session, table) = session_with("w", &target);
    let got = session.query("SELECT sum(f7) AS s FROM w").unwrap();
    assert!(close(one_f64(&got), number(&facts, "sum_f7")), "{got:?}");
    assert_eq!(table.stats().rows_read(), ROWS as u64);
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "f7_size") as u64
    );

    // A nested column (`outer.inner`): its top-level field only.
    let (session, table) = session_with("w", &target);
    let got = session.query("SELECT sum(\"nest.b\") AS s FROM w").unwrap();
    assert!(
        close(one_f64(&got), number(&facts, "sum_nest_b")),
        "{got:?}"
    );
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "nest_size") as u64
    );

    let (session, table) = session_with("w", &target);
    let got = session
        .query("SELECT id, be FROM w WHERE be % 7 = 0 ORDER BY id")
        .unwrap();
    assert_eq!(i64s(&got, 0), ints(&facts, "hit_ids"));
    assert_eq!(i64s(&got, 1), ints(&facts, "hit_be"));
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "id_be_size") as u64
    );

    // A compound dataset that is no PyTables Table, of big-endian members: two of three.
    let (session, table) = session_with("b", &format!("{}:/be", path.display()));
    let got = session
        .query("SELECT sum(a) AS a, sum(b) AS b FROM b")
        .unwrap();
    assert!(close(one_f64(&got), number(&facts, "be_sum_a")), "{got:?}");
    assert_eq!(i64s(&got, 1), vec![number(&facts, "be_sum_b") as i64]);
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "be_ab_size") as u64
    );

    // Every field: whole records, as stored.
    let (session, table) = session_with("w", &target);
    let got = session.query("SELECT * FROM w LIMIT 5").unwrap();
    assert_eq!(got.iter().map(RecordBatch::num_rows).sum::<usize>(), 5);
    assert_eq!(
        table.stats().bytes_read(),
        5 * number(&facts, "itemsize") as u64
    );
}

/// A pandas HDFStore `table` key: 20 float columns (one values block), an int64 column and
/// a string column (a block each) and an int32 data column `c`; prints pandas' answers and
/// the table's field sizes as PyTables reports them.
const WIDE_STORE: &str = r#"
import sys
import numpy as np, pandas as pd, tables
path = sys.argv[1]
n = 20_000
rng = np.random.default_rng(5)
cols = {f"x{i}": rng.random(n) for i in range(20)}
cols["k"] = np.arange(n, dtype=np.int64) * 3
cols["s"] = ["s%d" % (i % 13) for i in range(n)]
cols["c"] = (np.arange(n) % 1000).astype(np.int32)
df = pd.DataFrame(cols, index=pd.RangeIndex(100, 100 + n, name="row"))
df.to_hdf(path, key="df", format="table", data_columns=["c"], complevel=5, complib="zlib")
back = pd.read_hdf(path, "df").reset_index()
print("sum_k=%d" % back.k.sum())
hits = back[back.c < 10].sort_values("row")
print("hit_rows=" + ",".join(str(i) for i in hits.row))
print("hit_c=" + ",".join(str(i) for i in hits.c))
with tables.open_file(path) as f:
    dt = f.get_node("/df/table").dtype
block = next(name for name in dt.names
             if name.startswith("values_block") and dt[name].base == np.dtype("int64"))
print("k_bytes=%d" % (dt["index"].itemsize + dt[block].itemsize))
print("c_bytes=%d" % (dt["index"].itemsize + dt["c"].itemsize))
print("itemsize=%d" % dt.itemsize)
"#;

#[test]
fn one_column_of_a_wide_store_key_reads_only_its_values_block() {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("store.h5");
    let facts = python_facts(WIDE_STORE, &path);
    let target = format!("{}:/df", path.display());

    let (session, table) = session_with("d", &target);
    let got = session.query("SELECT sum(k) AS s FROM d").unwrap();
    assert_eq!(i64s(&got, 0), vec![number(&facts, "sum_k") as i64]);
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "k_bytes") as u64
    );

    let (session, table) = session_with("d", &target);
    let got = session
        .query("SELECT \"row\", c FROM d WHERE c < 10 ORDER BY \"row\"")
        .unwrap();
    assert_eq!(i64s(&got, 0), ints(&facts, "hit_rows"));
    assert_eq!(i64s(&got, 1), ints(&facts, "hit_c"));
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "c_bytes") as u64
    );

    let (session, table) = session_with("d", &target);
    session.query("SELECT * FROM d").unwrap();
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "itemsize") as u64
    );
}

/// A pandas HDFStore `fixed` key: 20 float columns (one float64 block), an int64 column `k`
/// and an int32 column `c` (a block each), a string column (a pickled object block), over a
/// DatetimeIndex `when`; prints pandas' answers and the blocks' item sizes as PyTables
/// reports them.
const WIDE_FIXED: &str = r#"
import sys
import numpy as np, pandas as pd, tables
path = sys.argv[1]
n = 20_000
rng = np.random.default_rng(6)
cols = {f"x{i}": rng.random(n) for i in range(20)}
cols["k"] = np.arange(n, dtype=np.int64) * 3
cols["s"] = ["s%d" % (i % 13) for i in range(n)]
cols["c"] = (np.arange(n) % 1000).astype(np.int32)
when = pd.date_range("2022-05-01", periods=n, freq="s", name="when")
pd.DataFrame(cols, index=when).to_hdf(path, key="df", format="fixed")
back = pd.read_hdf(path, "df").reset_index()
print("sum_k=%d" % back.k.sum())
hits = back[back.c < 10].sort_values("when")
print("hit_when=" + ",".join(str(i) for i in hits.when.astype("int64")))
print("hit_c=" + ",".join(str(i) for i in hits.c))
sizes = {}
with tables.open_file(path) as f:
    for i in range(f.get_node("/df")._v_attrs.nblocks):
        node = f.get_node(f"/df/block{i}_values")
        items = [x.decode() if isinstance(x, bytes) else str(x)
                 for x in f.get_node(f"/df/block{i}_items").read()]
        if isinstance(node, tables.VLArray):
            continue
        width = node.dtype.itemsize * node.shape[1]
        sizes.update({item: width for item in items})
    index = f.get_node("/df/axis1").dtype.itemsize
print("k_bytes=%d" % (index + sizes["k"]))
print("c_bytes=%d" % (index + sizes["c"]))
print("numbers_bytes=%d" % (index + sizes["x0"] + sizes["k"] + sizes["c"]))
"#;

#[test]
fn one_column_of_a_wide_fixed_key_reads_only_its_block() {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("fixed.h5");
    let facts = python_facts(WIDE_FIXED, &path);
    let target = format!("{}:/df", path.display());

    // The int64 block and the index, read by row ranges: not the float block nor the
    // strings' pickle.
    let (session, table) = session_with("d", &target);
    let got = session.query("SELECT sum(k) AS s FROM d").unwrap();
    assert_eq!(i64s(&got, 0), vec![number(&facts, "sum_k") as i64]);
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "k_bytes") as u64
    );

    let (session, table) = session_with("d", &target);
    let got = session
        .query("SELECT \"when\", c FROM d WHERE c < 10 ORDER BY \"when\"")
        .unwrap();
    assert_eq!(i64s(&got, 0), ints(&facts, "hit_when"));
    assert_eq!(i64s(&got, 1), ints(&facts, "hit_c"));
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "c_bytes") as u64
    );

    // Every column: every number block (the strings' pickle is parsed, not counted).
    let (session, table) = session_with("d", &target);
    let got = session.query("SELECT * FROM d").unwrap();
    assert_eq!(got.iter().map(RecordBatch::num_rows).sum::<usize>(), ROWS);
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "numbers_bytes") as u64
    );
}

/// A pandas HDFStore `fixed` Series `v` (float64) over a MultiIndex (`a` integers, `b`
/// strings: their codes a row each); prints pandas' answers and the item sizes of the codes
/// and the values as PyTables reports them.
const FIXED_SERIES: &str = r#"
import sys
import numpy as np, pandas as pd, tables
path = sys.argv[1]
n = 20_000
k = np.arange(n)
index = pd.MultiIndex.from_arrays([k % 7, ["w%d" % (i % 13) for i in range(n)]], names=["a", "b"])
pd.Series(k / 3, index=index, name="v").to_hdf(path, key="s", format="fixed")
back = pd.read_hdf(path, "s").reset_index()
print("sum_v=%r" % float(back.v.sum()))
print("count_b=%d" % (back.b == "w5").sum())
with tables.open_file(path) as f:
    codes = sum(f.get_node(f"/s/index_label{i}").dtype.itemsize for i in range(2))
    values = f.get_node("/s/values").dtype.itemsize
print("index_bytes=%d" % codes)
print("all_bytes=%d" % (codes + values))
"#;

#[test]
fn a_fixed_series_reads_its_codes_and_values_by_row_ranges() {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("series.h5");
    let facts = python_facts(FIXED_SERIES, &path);
    let target = format!("{}:/s", path.display());

    // The values and the MultiIndex's codes, read by row ranges (its levels read whole are
    // not counted).
    let (session, table) = session_with("s", &target);
    let got = session.query("SELECT sum(v) AS s FROM s").unwrap();
    assert!(close(one_f64(&got), number(&facts, "sum_v")));
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "all_bytes") as u64
    );

    // An index level alone: the codes, not the values.
    let (session, table) = session_with("s", &target);
    let got = session
        .query("SELECT count(*) AS n FROM s WHERE b = 'w5'")
        .unwrap();
    assert_eq!(i64s(&got, 0), vec![number(&facts, "count_b") as i64]);
    assert_eq!(
        table.stats().bytes_read(),
        ROWS as u64 * number(&facts, "index_bytes") as u64
    );
}
