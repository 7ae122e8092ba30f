//! `SELECT *` equals pandas reading the same file (python/sql_frames.py): zero-row PyTables
//! tables, `.npy` files, HDFStore table keys and Parquet files give their columns and types
//! and no row, without error; a Parquet file whose pandas index is stored as columns shows
//! them as `pd.read_parquet(f).reset_index()` does (first, named after the index, `index` or
//! `level_N` when unnamed), not as `__index_level_0__`.

use sciio_sql::datafusion::arrow::array::{Array, RecordBatch};
use sciio_sql::datafusion::arrow::compute::concat;
use sciio_sql::SqlSession;

#[test]
fn select_star_gives_the_frame_pandas_reads() {
    let dir = sciio_testkit::tempdir();
    let d = dir.path().to_str().unwrap();
    let listed = sciio_testkit::run_python_script("python/sql_frames.py", &["make", d]);
    let cases: Vec<(&str, &str)> = listed.lines().filter_map(|l| l.split_once(' ')).collect();
    assert!(cases.len() >= 9, "{listed}");
    for (name, target) in &cases {
        let session = SqlSession::new().unwrap();
        let table = format!("{d}/{target}");
        let out = dir.path().join(format!("{name}.out.parquet"));
        session
            .query_to_parquet(&format!("SELECT * FROM '{table}'"), &out)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // The rows counted agree with what the file holds (0 for the zero-row sources).
        let counted = session
            .query(&format!("SELECT count(*) AS n FROM '{table}'"))
            .unwrap();
        let n = sciio_sql::format_table(&counted).unwrap();
        let zero = name.ends_with("zero_rows");
        assert_eq!(n.contains("│ 0 │"), zero, "{name}: {n}");
        // No row still prints the header: the result's column names.
        if zero {
            let all = session.query(&format!("SELECT * FROM '{table}'")).unwrap();
            let text = sciio_sql::format_table(&all).unwrap();
            let names = all[0].schema();
            assert!(
                names
                    .fields()
                    .iter()
                    .all(|f| text.contains(f.name().as_str())),
                "{name}: {text}"
            );
        }
    }
    // A projection of an unnamed Series' values (`0`, as reset_index() calls them) reads the
    // same values as `SELECT *`, which the check below compares with pandas.
    for target in ["series.h5:/s", "series.h5:/f"] {
        let session = SqlSession::new().unwrap();
        let star = session
            .query(&format!("SELECT * FROM '{d}/{target}'"))
            .unwrap();
        let projected = session
            .query(&format!("SELECT \"0\" FROM '{d}/{target}'"))
            .unwrap();
        let values = |batches: &[RecordBatch]| {
            let parts: Vec<&dyn Array> = batches
                .iter()
                .map(|b| b.column_by_name("0").expect("a column 0").as_ref())
                .collect();
            concat(&parts).unwrap()
        };
        assert_eq!(&values(&projected), &values(&star), "{target}");
    }
    let checked = sciio_testkit::run_python_script("python/sql_frames.py", &["check", d]);
    assert!(
        checked.contains(&format!("{} passed, 0 failed", cases.len())),
        "{checked}"
    );
}
