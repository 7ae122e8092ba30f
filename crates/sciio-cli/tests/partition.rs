//! `sciio convert SRC:NODE DIR --partition-rows N`: a folder of Parquet files
//! (`part-00000.parquet`, ...) that pyarrow.dataset reads as one table equal to the source.

mod common;

use common::{ok, s, sciio};

/// Checks with pyarrow.dataset that the folder sys.argv[2] holds the PyTables table
/// sys.argv[1]:/t, row for row and field for field, in files of at most sys.argv[3] rows.
const SAME_AS_TABLE: &str = "
import sys, os, numpy as np, tables, pyarrow.dataset as ds, pyarrow.parquet as pq
with tables.open_file(sys.argv[1]) as f:
    t = f.root.t.read()
n = int(sys.argv[3])
names = sorted(os.listdir(sys.argv[2]))
want = ['part-%05d.parquet' % i for i in range((len(t) + n - 1) // n)]
assert names == want, (names, want)
for name in names[:-1]:
    assert pq.read_metadata(os.path.join(sys.argv[2], name)).num_rows == n
p = ds.dataset(sys.argv[2], format='parquet').to_table()
assert p.num_rows == len(t), (p.num_rows, len(t))
for name in t.dtype.names:
    col = p.column(name).to_numpy(zero_copy_only=False)
    want = t[name]
    if want.ndim > 1:
        col = np.stack(col)
    assert np.array_equal(col.astype(want.dtype), want), name
# Each part is also a pandas frame of its own rows (RangeIndex of the part's rows).
df = pq.read_table(os.path.join(sys.argv[2], names[1])).to_pandas()
assert list(df.index[:2]) == [n, n + 1], df.index[:2]
";

#[test]
fn a_table_with_subarray_and_string_fields_becomes_one_pyarrow_dataset() {
    let dir = sciio_testkit::tempdir();
    let src = dir.path().join("run.h5");
    sciio_testkit::run_python_script(
        "python/scale_sources.py",
        &["table_sub", s(&src), &(10_007 * 84).to_string()],
    );
    let out = dir.path().join("parts");
    let src_node = format!("{}:/t", s(&src));
    ok(&["convert", &src_node, s(&out), "--partition-rows", "3000"]);
    sciio_testkit::run_python(SAME_AS_TABLE, &[s(&src), s(&out), "3000"]);
    // Again into the same folder, fewer rows per part: the old parts are replaced or refused.
    let again = sciio(&["convert", &src_node, s(&out), "--partition-rows", "5000"]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    sciio_testkit::run_python(SAME_AS_TABLE, &[s(&src), s(&out), "5000"]);
}

#[test]
fn an_array_of_rows_is_partitioned_too() {
    let dir = sciio_testkit::tempdir();
    let src = dir.path().join("x.npy");
    sciio_testkit::run_python(
        "import sys, numpy as np; np.save(sys.argv[1], np.arange(7000 * 3.0).reshape(7000, 3))",
        &[s(&src)],
    );
    let out = dir.path().join("x_parts");
    ok(&["convert", s(&src), s(&out), "--partition-rows", "2000"]);
    sciio_testkit::run_python(
        "
import sys, numpy as np, pyarrow.dataset as ds
p = ds.dataset(sys.argv[2], format='parquet').to_table()
assert np.array_equal(np.stack(p.column('x').to_numpy(zero_copy_only=False)), np.load(sys.argv[1]))
",
        &[s(&src), s(&out)],
    );
}

#[test]
fn partitioning_is_refused_where_it_does_not_apply() {
    let dir = sciio_testkit::tempdir();
    let src = dir.path().join("x.npy");
    sciio_testkit::run_python(
        "import sys, numpy as np; np.save(sys.argv[1], np.arange(10.0))",
        &[s(&src)],
    );
    let npz = dir.path().join("x.npz");
    let out = sciio(&["convert", s(&src), s(&npz), "--partition-rows", "2"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--partition-rows"), "{err}");
    assert!(!npz.exists());
    // A folder holding other Parquet files is not mixed into.
    let folder = dir.path().join("mixed");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("other.parquet"), b"x").unwrap();
    let out = sciio(&["convert", s(&src), s(&folder), "--partition-rows", "2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("other.parquet"));
}
