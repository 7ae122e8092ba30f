//! `File::batches`: PyTables tables, pandas HDFStore keys and Parquet files as streamed Arrow
//! record batches, checked against what PyTables and pandas read; `frames::write_pytables_table`
//! read back by PyTables.
#![cfg(all(feature = "hdf5", feature = "parquet", feature = "hdfstore"))]

use sciio_testkit::{run_python, tempdir};

use sciio::pandas::arrow_array::cast::AsArray;
use sciio::pandas::arrow_array::types::{Float32Type, Float64Type, Int64Type};

/// The batches of `node`: how many, and each column's values joined over them as text.
fn stream(file: &mut sciio::File, node: &str, batch_rows: usize) -> (usize, Vec<Vec<String>>) {
    let batches = file.batches(node, batch_rows).unwrap();
    let width = batches.schema().arrow_schema().fields().len();
    let mut columns = vec![Vec::new(); width];
    let mut count = 0;
    for batch in batches {
        let batch = batch.unwrap();
        assert!(
            batch.num_rows() <= batch_rows,
            "{node}: {} rows",
            batch.num_rows()
        );
        count += 1;
        for (column, out) in batch.columns().iter().zip(&mut columns) {
            let text: Vec<String> = match column.data_type() {
                sciio::pandas::arrow_schema::DataType::Int64 => column
                    .as_primitive::<Int64Type>()
                    .values()
                    .iter()
                    .map(|v| v.to_string())
                    .collect(),
                sciio::pandas::arrow_schema::DataType::Float32 => column
                    .as_primitive::<Float32Type>()
                    .values()
                    .iter()
                    .map(|v| format!("{:?}", f64::from(*v)))
                    .collect(),
                sciio::pandas::arrow_schema::DataType::Float64 => column
                    .as_primitive::<Float64Type>()
                    .values()
                    .iter()
                    .map(|v| format!("{v:?}"))
                    .collect(),
                sciio::pandas::arrow_schema::DataType::Boolean => column
                    .as_boolean()
                    .iter()
                    .map(|v| format!("{v:?}"))
                    .collect(),
                other => vec![format!("{other}"); batch.num_rows()],
            };
            out.extend(text);
        }
    }
    (count, columns)
}

#[test]
fn pytables_tables_stream_in_batches_with_pytables_values() {
    let dir = tempdir();
    let h5 = dir.path().join("t.h5");
    run_python(
        r#"
import sys, numpy as np, tables
class Row(tables.IsDescription):
    id = tables.Int64Col(pos=0)
    x = tables.Float32Col(pos=1)
    ok = tables.BoolCol(pos=2)
    tag = tables.StringCol(4, pos=3)
with tables.open_file(sys.argv[1], "w") as f:
    t = f.create_table("/", "t", Row, filters=tables.Filters(5, "blosc2"))
    r = t.row
    for i in range(1000):
        r["id"] = i * 3; r["x"] = i / 4; r["ok"] = i % 3 == 0; r["tag"] = b"t%d" % (i % 50)
        r.append()
    f.create_table("/", "empty", Row)
"#,
        &[h5.to_str().unwrap()],
    );
    let mut file = sciio::open(&h5).unwrap();
    let (count, columns) = stream(&mut file, "/t", 128);
    assert_eq!(count, 8);
    let want = run_python(
        r#"
import sys, tables
with tables.open_file(sys.argv[1]) as f:
    t = f.root.t.read()
print(" ".join(str(int(v)) for v in t["id"]))
print(" ".join(repr(float(v)) for v in t["x"]))
print(" ".join("Some(%s)" % ("true" if v else "false") for v in t["ok"]))
"#,
        &[h5.to_str().unwrap()],
    );
    let want: Vec<Vec<String>> = want
        .lines()
        .map(|l| l.split(' ').map(str::to_string).collect())
        .collect();
    assert_eq!(columns[..3], want[..]);
    assert_eq!(columns[3].len(), 1000);
    let (count, columns) = stream(&mut file, "/empty", 128);
    assert_eq!((count, columns[0].len()), (0, 0));
    let frame = file.batches("/t", 0).unwrap().into_frame().unwrap();
    assert_eq!(frame.num_rows(), 1000);
    assert_eq!(frame.schema().arrow_schema().fields().len(), 4);
}

#[test]
fn hdfstore_keys_and_parquet_files_read_as_pandas_reads_them() {
    let dir = tempdir();
    let h5 = dir.path().join("s.h5");
    let pq = dir.path().join("f.parquet");
    run_python(
        r#"
import sys, numpy as np, pandas as pd
df = pd.DataFrame({"a": np.arange(300, dtype="int64"), "b": np.linspace(0, 1, 300)},
                  index=pd.Index([f"r{i}" for i in range(300)], name="name"))
df.to_hdf(sys.argv[1], key="df", format="table")
df.to_parquet(sys.argv[2], row_group_size=100)
"#,
        &[h5.to_str().unwrap(), pq.to_str().unwrap()],
    );
    for (path, node) in [(&h5, "/df"), (&pq, "/")] {
        let mut file = sciio::open(path).unwrap();
        let batches = file.batches(node, 64).unwrap();
        let index = batches.schema().index().len();
        let frame = batches.into_frame().unwrap();
        assert_eq!((frame.num_rows(), index), (300, 1), "{path:?}");
        let (count, columns) = stream(&mut file, node, 64);
        // 300 rows in 64-row batches; a Parquet batch never spans its 100-row row groups
        // (64 + 36 per group), so the Parquet file gives 6 batches, the store 5.
        let batches = if path == &pq { 6 } else { 5 };
        assert_eq!(count, batches, "{path:?}");
        let b = columns
            .iter()
            .find(|c| c.last().map(String::as_str) == Some("1.0"));
        assert!(b.is_some_and(|b| b.len() == 300), "{path:?}: {columns:?}");
    }
}

#[test]
fn pytables_reads_the_tables_written_from_frames() {
    use sciio::pandas::arrow_array::{BooleanArray, Float64Array, Int32Array};
    use std::sync::Arc;
    let dir = tempdir();
    let h5 = dir.path().join("w.h5");
    let frame = sciio::pandas::Frame::builder()
        .column("n", Arc::new(Int32Array::from(vec![1, -2, 3])))
        .column("v", Arc::new(Float64Array::from(vec![0.5, 1.5, -2.25])))
        .column("ok", Arc::new(BooleanArray::from(vec![true, false, true])))
        .build()
        .unwrap();
    sciio::frames::write_pytables_table(&frame, &h5, "/g/readings", Some("zlib:3")).unwrap();
    let out = run_python(
        r#"
import sys, tables
with tables.open_file(sys.argv[1]) as f:
    t = f.get_node("/g/readings")
    assert isinstance(t, tables.Table), t
    assert t.filters.complib == "zlib" and t.filters.complevel == 3, t.filters
    r = t.read()
    assert r.dtype.names == ("n", "v", "ok"), r.dtype
    assert str(r.dtype["ok"]) == "bool", r.dtype
    assert r["n"].tolist() == [1, -2, 3] and r["v"].tolist() == [0.5, 1.5, -2.25], r
    assert r["ok"].tolist() == [True, False, True], r
print("ok")
"#,
        &[h5.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "ok");
}

/// `File::rows`: the records progress is shown in, for tables, frames, a pandas `table` key,
/// arrays; none for groups of several things, `fixed` keys and 0-d arrays.
#[test]
fn rows_are_those_of_tables_frames_table_keys_and_arrays() {
    let dir = tempdir();
    let (h5, pq, store) = (
        dir.path().join("t.h5"),
        dir.path().join("f.parquet"),
        dir.path().join("s.h5"),
    );
    run_python(
        r#"
import sys, numpy as np, pandas as pd, tables
with tables.open_file(sys.argv[1], 'w') as f:
    f.create_table('/', 't', np.zeros(37, dtype=[('a', '<i4'), ('b', '<f8')]))
    f.create_array('/', 'm', np.zeros((5, 3)))
    f.create_array('/', 'z', np.float64(1.0))
df = pd.DataFrame({'x': np.arange(11.0)})
df.to_parquet(sys.argv[2])
df.to_hdf(sys.argv[3], key='tab', format='table', mode='w')
df.to_hdf(sys.argv[3], key='fix', format='fixed')
"#,
        &[
            h5.to_str().unwrap(),
            pq.to_str().unwrap(),
            store.to_str().unwrap(),
        ],
    );
    let h5 = sciio::File::open(&h5).unwrap();
    assert_eq!(h5.rows(Some("/t")), Some(37));
    assert_eq!(h5.rows(Some("m")), Some(5));
    assert_eq!(h5.rows(Some("/z")), None);
    assert_eq!(h5.rows(None), None);
    assert_eq!(h5.rows(Some("/nothing")), None);
    assert_eq!(sciio::File::open(&pq).unwrap().rows(None), Some(11));
    let store = sciio::File::open(&store).unwrap();
    assert_eq!(store.rows(Some("/tab")), Some(11));
    assert_eq!(store.rows(Some("/fix")), None);
}
