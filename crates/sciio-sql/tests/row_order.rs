//! A result without `ORDER BY` comes in the file's row order, as pandas filtering the frame
//! gives it (and DuckDB's `preserve_insertion_order`): no plan splits a file's rows across
//! partitions that are merged in whatever order they finish.

use std::sync::Arc;

use sciio::core::{ByteOrder, DType, Order, RecordType, ScalarKind, ScalarType};
use sciio::NdArray;
use sciio_sql::datafusion::arrow::array::{Array, Int64Array, RecordBatch};
use sciio_sql::datafusion::arrow::datatypes::{DataType, Field, Schema};
use sciio_sql::datafusion::parquet::arrow::ArrowWriter;
use sciio_sql::datafusion::parquet::file::properties::WriterProperties;
use sciio_sql::SqlSession;

const ROWS: usize = 300_000;

/// A `.npy` of ROWS records (i: i8, y: i4) with i = row, y = row % 1000.
fn npy(dir: &std::path::Path) -> std::path::PathBuf {
    let scalar = |k| DType::Scalar(ScalarType::new(k, ByteOrder::Little));
    let record = RecordType::packed([
        ("i".to_string(), scalar(ScalarKind::Int(8))),
        ("y".to_string(), scalar(ScalarKind::Int(4))),
    ]);
    let mut bytes = Vec::with_capacity(ROWS * 12);
    for row in 0..ROWS {
        bytes.extend_from_slice(&(row as i64).to_le_bytes());
        bytes.extend_from_slice(&((row % 1000) as i32).to_le_bytes());
    }
    let array = NdArray::from_bytes(DType::Record(record), &[ROWS], Order::C, &bytes).unwrap();
    let path = dir.join("r.npy");
    let mut out = Vec::new();
    sciio::npy::write_array(&mut out, &array).unwrap();
    std::fs::write(&path, out).unwrap();
    path
}

/// A Parquet file of the same columns in row groups of 10,000 rows (over 2 MiB in all, so
/// DataFusion's default would split it into byte ranges read as separate partitions).
fn parquet(dir: &std::path::Path) -> std::path::PathBuf {
    let schema = Arc::new(Schema::new(vec![
        Field::new("i", DataType::Int64, false),
        Field::new("y", DataType::Int64, false),
    ]));
    let i = Int64Array::from_iter_values(0..ROWS as i64);
    let y = Int64Array::from_iter_values((0..ROWS as i64).map(|r| r % 1000));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(i), Arc::new(y)]).unwrap();
    let path = dir.join("r.parquet");
    let properties = WriterProperties::builder()
        .set_max_row_group_row_count(Some(10_000))
        .set_dictionary_enabled(false)
        .build();
    let mut writer = ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        schema,
        Some(properties),
    )
    .unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    path
}

/// The values of column `i` in the result, in the order the batches give them.
fn column_i(batches: &[RecordBatch]) -> Vec<i64> {
    let mut values = Vec::new();
    for batch in batches {
        let column = batch.column_by_name("i").unwrap();
        let column = column.as_any().downcast_ref::<Int64Array>().unwrap();
        values.extend((0..column.len()).map(|k| column.value(k)));
    }
    values
}

/// The physical plan of `sql`, as `EXPLAIN` prints it.
fn plan(session: &SqlSession, sql: &str) -> String {
    let batches = session.query(&format!("EXPLAIN {sql}")).unwrap();
    sciio_sql::format_table(&batches).unwrap()
}

#[test]
fn filtered_rows_of_npy_and_parquet_come_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let session = SqlSession::new().unwrap();
    for path in [npy(dir.path()), parquet(dir.path())] {
        let sql = format!("SELECT i, y FROM '{}' WHERE y < 900", path.display());
        let plan = plan(&session, &sql);
        // Row ranges read as partitions of their own are merged as they finish.
        for splitter in [
            "RepartitionExec",
            "CoalescePartitionsExec",
            "file_groups={2",
        ] {
            assert!(!plan.contains(splitter), "{}: {plan}", path.display());
        }
        let got = column_i(&session.query(&sql).unwrap());
        let want: Vec<i64> = (0..ROWS as i64).filter(|r| r % 1000 < 900).collect();
        assert!(got == want, "{}: rows out of file order", path.display());
        let limited = format!("SELECT i FROM '{}' LIMIT 7", path.display());
        assert_eq!(
            column_i(&session.query(&limited).unwrap()),
            [0, 1, 2, 3, 4, 5, 6]
        );
    }
}
