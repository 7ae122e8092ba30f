//! Projection and limit pushdown: a scan of a structured `.npy` builds only the columns the
//! query uses and reads no row past its limit (counted by `FileTable::stats`). A result
//! without `ORDER BY` comes in the file's row order, as pandas filtering the frame gives it
//! (and DuckDB's `preserve_insertion_order`): no plan splits a file's rows across partitions
//! that are merged in whatever order they finish.

use std::sync::Arc;

use sciio::core::{ByteOrder, DType, Order, RecordType, ScalarKind, ScalarType};
use sciio::NdArray;
use sciio_sql::datafusion::arrow::array::{Array, Int64Array, RecordBatch};
use sciio_sql::datafusion::arrow::datatypes::{DataType, Field, Schema};
use sciio_sql::datafusion::parquet::arrow::ArrowWriter;
use sciio_sql::datafusion::parquet::file::properties::WriterProperties;
use sciio_sql::{FileTable, SqlSession};

const ROWS: usize = 200_000;

/// A `.npy` of ROWS records (a: i8, b: f8, c: i4) with a = i, b = i / 2, c = i % 10.
fn records(dir: &std::path::Path) -> std::path::PathBuf {
    let scalar = |k| DType::Scalar(ScalarType::new(k, ByteOrder::Little));
    let record = RecordType::packed([
        ("a".to_string(), scalar(ScalarKind::Int(8))),
        ("b".to_string(), scalar(ScalarKind::Float(8))),
        ("c".to_string(), scalar(ScalarKind::Int(4))),
    ]);
    let mut bytes = Vec::with_capacity(ROWS * 20);
    for i in 0..ROWS {
        bytes.extend_from_slice(&(i as i64).to_le_bytes());
        bytes.extend_from_slice(&(i as f64 / 2.0).to_le_bytes());
        bytes.extend_from_slice(&((i % 10) as i32).to_le_bytes());
    }
    let array = NdArray::from_bytes(DType::Record(record), &[ROWS], Order::C, &bytes).unwrap();
    let path = dir.join("r.npy");
    let mut out = Vec::new();
    sciio::npy::write_array(&mut out, &array).unwrap();
    std::fs::write(&path, out).unwrap();
    path
}

fn session_with(path: &std::path::Path) -> (SqlSession, Arc<FileTable>) {
    let table = Arc::new(FileTable::open_node(path, None).unwrap());
    let session = SqlSession::new().unwrap();
    session.register_table("r", table.clone()).unwrap();
    (session, table)
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(|b| b.num_rows()).sum()
}

#[test]
fn a_limit_reads_only_its_rows_and_a_projection_only_its_fields() {
    let dir = tempfile::tempdir().unwrap();
    let (session, table) = session_with(&records(dir.path()));
    let got = session.query("SELECT b FROM r LIMIT 10").unwrap();
    assert_eq!(rows(&got), 10);
    assert_eq!(table.stats().rows_read(), 10);
    assert_eq!(table.stats().columns_built(), 1);
}

#[test]
fn a_filter_reads_every_row_but_only_the_fields_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let (session, table) = session_with(&records(dir.path()));
    let got = session
        .query("SELECT sum(a) AS s FROM r WHERE c = 3")
        .unwrap();
    let s = got[0]
        .column(0)
        .as_any()
        .downcast_ref::<sciio_sql::datafusion::arrow::array::Int64Array>()
        .unwrap()
        .value(0);
    let want: i64 = (0..ROWS as i64).filter(|i| i % 10 == 3).sum();
    assert_eq!(s, want);
    assert_eq!(table.stats().rows_read(), ROWS as u64);
    // Two fields (a, c) per block of 65,536 rows, never b.
    let blocks = ROWS.div_ceil(65_536) as u64;
    assert_eq!(table.stats().columns_built(), 2 * blocks);
    // A .npy stores its records interleaved: whole records (20 bytes) are read.
    assert_eq!(table.stats().bytes_read(), ROWS as u64 * 20);
}

#[test]
fn count_star_builds_no_column() {
    let dir = tempfile::tempdir().unwrap();
    let (session, table) = session_with(&records(dir.path()));
    let got = session.query("SELECT count(*) AS n FROM r").unwrap();
    assert_eq!(rows(&got), 1);
    assert_eq!(table.stats().columns_built(), 0);
    assert_eq!(table.stats().rows_read(), ROWS as u64);
    // No field is needed: nothing is read from the file.
    assert_eq!(table.stats().bytes_read(), 0);
}

#[test]
fn a_structured_array_of_two_dimensions_is_refused_naming_its_shape() {
    let dir = tempfile::tempdir().unwrap();
    let scalar = DType::Scalar(ScalarType::new(ScalarKind::Int(4), ByteOrder::Little));
    let record = RecordType::packed([("a".to_string(), scalar)]);
    let array = NdArray::from_bytes(DType::Record(record), &[2, 3], Order::C, &[0u8; 24]).unwrap();
    let path = dir.path().join("two.npy");
    let mut out = Vec::new();
    sciio::npy::write_array(&mut out, &array).unwrap();
    std::fs::write(&path, out).unwrap();
    let e = FileTable::open_node(&path, None).unwrap_err().to_string();
    assert!(e.contains("two.npy") && e.contains("[2, 3]"), "{e}");
}

/// A Parquet file of columns a = i and c = i % 10 (int64) in row groups of 10,000 rows (over
/// 2 MiB in all, so DataFusion's default would split it into byte ranges read as partitions of
/// their own).
fn parquet(dir: &std::path::Path) -> std::path::PathBuf {
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("c", DataType::Int64, false),
    ]));
    let a = Int64Array::from_iter_values(0..ROWS as i64);
    let c = Int64Array::from_iter_values((0..ROWS as i64).map(|r| r % 10));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(a), Arc::new(c)]).unwrap();
    let path = dir.join("r.parquet");
    let properties = WriterProperties::builder()
        .set_max_row_group_row_count(Some(10_000))
        .set_dictionary_enabled(false)
        .build();
    let file = std::fs::File::create(&path).unwrap();
    let mut writer = ArrowWriter::try_new(file, schema, Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    path
}

/// The values of column `a` in the result, in the order the batches give them.
fn column_a(batches: &[RecordBatch]) -> Vec<i64> {
    let mut values = Vec::new();
    for batch in batches {
        let column = batch.column_by_name("a").unwrap();
        let column = column.as_any().downcast_ref::<Int64Array>().unwrap();
        values.extend((0..column.len()).map(|k| column.value(k)));
    }
    values
}

#[test]
fn filtered_rows_of_npy_and_parquet_come_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let session = SqlSession::new().unwrap();
    for path in [records(dir.path()), parquet(dir.path())] {
        let sql = format!("SELECT a, c FROM '{}' WHERE c < 9", path.display());
        let explained = session.query(&format!("EXPLAIN {sql}")).unwrap();
        let plan = sciio_sql::format_table(&explained).unwrap();
        // Row ranges read as partitions of their own are merged as they finish.
        for splitter in [
            "RepartitionExec",
            "CoalescePartitionsExec",
            "file_groups={2",
        ] {
            assert!(!plan.contains(splitter), "{}: {plan}", path.display());
        }
        let got = column_a(&session.query(&sql).unwrap());
        let want: Vec<i64> = (0..ROWS as i64).filter(|r| r % 10 < 9).collect();
        assert!(got == want, "{}: rows out of file order", path.display());
        let limited = format!("SELECT a FROM '{}' LIMIT 7", path.display());
        assert_eq!(
            column_a(&session.query(&limited).unwrap()),
            [0, 1, 2, 3, 4, 5, 6]
        );
    }
}
