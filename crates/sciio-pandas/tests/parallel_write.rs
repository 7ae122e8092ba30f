//! The background row-group encoders (`ParquetOptions::threads` > 1) write the same file as one
//! thread, byte for byte, over many row groups and every kind of column; pandas reads it as the
//! frame written; a column that cannot be encoded is an error of the write, never a hang.

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::types::Int8Type;
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, DictionaryArray, Float32Array, Float64Array, Int16Array,
    Int32Array, Int64Array, Int8Array, LargeStringArray, RecordBatch, StringArray, StructArray,
    TimestampNanosecondArray, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
};
use arrow_schema::{DataType, Field, Schema};

use sciio_pandas::{
    read_frame, Compression, Frame, FrameSchema, ParquetOptions, ParquetWriter, RangeIndex,
};
use sciio_testkit::{run_python, tempdir};

const ROWS: usize = 20_000;

/// Every kind of column the writer encodes, rows `start..start + n`: numbers of each width,
/// booleans and text with missing values, binary, time zones, a categorical (sciio's own
/// encoder), a list and a struct (nested: several leaves).
fn columns(start: usize, n: usize) -> Vec<(&'static str, ArrayRef)> {
    let r = start..start + n;
    let i = |k: usize| k as i64;
    let cats = Arc::new(StringArray::from(vec!["red", "green", "blue", "unused"]));
    let codes: Int8Array = r
        .clone()
        .map(|k| (k % 7 != 0).then_some((k % 3) as i8))
        .collect();
    let mut list = ListBuilder::new(StringBuilder::new());
    for k in r.clone() {
        for j in 0..k % 4 {
            list.values().append_value(format!("item{j}"));
        }
        list.append(k % 11 != 0);
    }
    let inner: Vec<(Arc<Field>, ArrayRef)> = vec![
        (
            Arc::new(Field::new("a", DataType::Int32, true)),
            Arc::new(Int32Array::from_iter(r.clone().map(|k| Some(k as i32 * 3)))),
        ),
        (
            Arc::new(Field::new("b", DataType::Float64, true)),
            Arc::new(Float64Array::from_iter(
                r.clone().map(|k| (k % 5 != 0).then_some(k as f64 / 8.0)),
            )),
        ),
    ];
    vec![
        (
            "i8",
            Arc::new(Int8Array::from_iter_values(r.clone().map(|k| k as i8))),
        ),
        (
            "i16",
            Arc::new(Int16Array::from_iter_values(r.clone().map(|k| k as i16))),
        ),
        (
            "i32",
            Arc::new(Int32Array::from_iter(
                r.clone().map(|k| (k % 13 != 0).then_some(k as i32)),
            )),
        ),
        (
            "i64",
            Arc::new(Int64Array::from_iter_values(
                r.clone().map(|k| i(k) * 1_000_003),
            )),
        ),
        (
            "u8",
            Arc::new(UInt8Array::from_iter_values(
                r.clone().map(|k| (k % 200) as u8),
            )),
        ),
        (
            "u16",
            Arc::new(UInt16Array::from_iter_values(r.clone().map(|k| k as u16))),
        ),
        (
            "u32",
            Arc::new(UInt32Array::from_iter_values(
                r.clone().map(|k| k as u32 * 7),
            )),
        ),
        (
            "u64",
            Arc::new(UInt64Array::from_iter_values(
                r.clone().map(|k| k as u64 % 50),
            )),
        ),
        (
            "f32",
            Arc::new(Float32Array::from_iter_values(
                r.clone().map(|k| k as f32 * 0.5),
            )),
        ),
        (
            "f64",
            Arc::new(Float64Array::from_iter(
                r.clone().map(|k| (k % 17 != 0).then_some(k as f64 / 3.0)),
            )),
        ),
        (
            "flag",
            Arc::new(BooleanArray::from_iter(
                r.clone().map(|k| (k % 9 != 0).then_some(k % 2 == 0)),
            )),
        ),
        (
            "text",
            Arc::new(StringArray::from_iter(
                r.clone()
                    .map(|k| (k % 19 != 0).then(|| format!("s{}", k % 500))),
            )),
        ),
        (
            "large",
            Arc::new(LargeStringArray::from_iter_values(
                r.clone().map(|k| format!("row {k}")),
            )),
        ),
        (
            "bin",
            Arc::new(BinaryArray::from_iter_values(
                r.clone().map(|k| vec![k as u8; k % 5]),
            )),
        ),
        (
            "when",
            Arc::new(
                TimestampNanosecondArray::from_iter_values(r.clone().map(|k| i(k) * 1_000_000_007))
                    .with_timezone("Europe/Paris"),
            ),
        ),
        (
            "cat",
            Arc::new(DictionaryArray::<Int8Type>::try_new(codes, cats).unwrap()),
        ),
        ("list", Arc::new(list.finish())),
        ("pair", Arc::new(StructArray::from(inner))),
    ]
}

/// The frame in batches of uneven sizes (so row groups are cut across batches).
fn frame() -> Frame {
    let mut b = Frame::builder().range_index(RangeIndex::default_for(ROWS));
    for (name, column) in columns(0, ROWS) {
        b = if name == "cat" {
            b.categorical(name, column, false)
        } else {
            b.column(name, column)
        };
    }
    let whole = b.build().unwrap();
    let mut parts = Vec::new();
    let mut start = 0;
    for n in [7_000, 333, 5_000, 1, 7_666] {
        parts.push(whole.batches()[0].slice(start, n));
        start += n;
    }
    assert_eq!(start, ROWS);
    Frame::new(whole.schema().clone(), parts).unwrap()
}

fn written(frame: &Frame, options: &ParquetOptions) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = ParquetWriter::new(&mut out, frame.schema(), options);
    for b in frame.batches() {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    out
}

#[test]
fn background_encoders_write_the_same_bytes_as_one_thread() {
    let frame = frame();
    for compression in [
        Compression::Snappy,
        Compression::Zstd(Some(3)),
        Compression::None,
    ] {
        let options = ParquetOptions::new()
            .compression(compression)
            .row_group_rows(700)
            .data_page_bytes(4096);
        let one = written(&frame, &options.clone().threads(1));
        for threads in [2, 3, 8] {
            let many = written(&frame, &options.clone().threads(threads));
            assert!(
                one == many,
                "{compression:?}, {threads} threads: the file differs from one thread's"
            );
        }
        // and it is the frame: read back by sciio and by pandas
        let dir = tempdir();
        let path = dir.path().join("parallel.parquet");
        std::fs::write(&path, &one).unwrap();
        let back = read_frame(&path).unwrap();
        assert_eq!(back.num_rows(), ROWS);
        let back =
            arrow_select::concat::concat_batches(&back.batches()[0].schema(), back.batches())
                .unwrap();
        let want =
            arrow_select::concat::concat_batches(&frame.batches()[0].schema(), frame.batches())
                .unwrap();
        for (name, col) in columns(0, ROWS) {
            let i = want.schema().index_of(name).unwrap();
            assert_eq!(col.data_type(), want.column(i).data_type(), "{name}");
            assert_eq!(back.column(i).to_data(), want.column(i).to_data(), "{name}");
        }
        let out = run_python(PANDAS_CHECK, &[path.to_str().unwrap(), &ROWS.to_string()]);
        assert_eq!(out.trim(), "ok 29", "{compression:?}: {out}");
    }
}

/// pandas reads the file: the row groups, rows and values of a few columns as the test wrote
/// them.
const PANDAS_CHECK: &str = r#"
import sys, pandas as pd, pyarrow.parquet as pq
path, rows = sys.argv[1], int(sys.argv[2])
df = pd.read_parquet(path)
assert len(df) == rows, len(df)
assert (df["i64"] == pd.Series(range(rows)) * 1_000_003).all()
assert list(df["cat"].cat.categories) == ["red", "green", "blue", "unused"], list(df["cat"].cat.categories)
assert df["cat"].isna().sum() == len(range(0, rows, 7))
assert df["text"][19 * 3] is None or pd.isna(df["text"][19 * 3])
assert df["large"][12345] == "row 12345"
assert str(df["when"].dt.tz) == "Europe/Paris"
assert df["pair"][5] == {"a": 15, "b": None}
print("ok", pq.ParquetFile(path).metadata.num_row_groups)
"#;

#[test]
fn a_column_that_cannot_be_encoded_is_an_error_of_the_write() {
    // a required (non-nullable) categorical whose categories include a missing value: its
    // keys have no nulls, so Arrow accepts the batch; the column's encoder refuses it
    let values = Arc::new(StringArray::from(vec![Some("a"), None]));
    let schema = Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, true),
        Field::new(
            "c",
            DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
            false,
        ),
    ]));
    let batch = |start: i64, bad: bool| {
        let keys = Int8Array::from_iter_values((0..1000).map(|k| i8::from(bad && k == 500)));
        let c = DictionaryArray::<Int8Type>::try_new(keys, values.clone()).unwrap();
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(start..start + 1000)),
                Arc::new(c),
            ],
        )
        .unwrap()
    };
    let frame_schema = FrameSchema::from_arrow(&schema, None, 20_000);
    for threads in [1, 2, 4] {
        let options = ParquetOptions::new().row_group_rows(1000).threads(threads);
        let mut out = Vec::new();
        let mut w = ParquetWriter::new(&mut out, &frame_schema, &options);
        let mut outcome = Ok(());
        for b in 0..20 {
            outcome = w.write(&batch(b * 1000, b == 13));
            if outcome.is_err() {
                break;
            }
        }
        let e = outcome.and_then(|()| w.finish()).unwrap_err();
        assert!(
            e.to_string()
                .contains("not nullable but has missing values"),
            "{threads} threads: {e}"
        );
    }
}

/// The frame as one batch per row group: what an encoder buffering whole row groups is
/// handed at once.
fn row_group_batches(frame: &Frame, rows_per_group: usize) -> Frame {
    let whole = arrow_select::concat::concat_batches(&frame.batches()[0].schema(), frame.batches())
        .unwrap();
    let parts = (0..ROWS)
        .step_by(rows_per_group)
        .map(|start| whole.slice(start, rows_per_group.min(ROWS - start)))
        .collect();
    Frame::new(frame.schema().clone(), parts).unwrap()
}

#[test]
fn batches_encoded_as_they_come_read_as_whole_row_groups() {
    // Each batch goes to the column encoders as it arrives (as the buffered encoder of
    // earlier versions wrote each buffered batch: the same calls, the same bytes for the same
    // batches; `background_encoders_write_the_same_bytes_as_one_thread` checks the order
    // under threads). Cut into other batches, arrow-rs ends its data pages at other rows (it
    // checks the page size between the rows of a write call), so the bytes may differ: pandas
    // must read the same frame, in the same row groups.
    let frame = frame();
    let dir = tempdir();
    for (compression, threads) in [(Compression::Snappy, 1), (Compression::Zstd(Some(3)), 2)] {
        let options = ParquetOptions::new()
            .compression(compression)
            .row_group_rows(7_000)
            .data_page_bytes(4096)
            .threads(threads);
        let whole = dir.path().join("whole.parquet");
        let streamed = dir.path().join("streamed.parquet");
        std::fs::write(&whole, written(&row_group_batches(&frame, 7_000), &options)).unwrap();
        std::fs::write(&streamed, written(&frame, &options)).unwrap();
        let out = run_python(
            SAME_FRAME_AND_ROW_GROUPS,
            &[whole.to_str().unwrap(), streamed.to_str().unwrap()],
        );
        assert_eq!(
            out.trim(),
            "ok 7000 7000 6000",
            "{compression:?}, {threads} threads"
        );
    }
}

const SAME_FRAME_AND_ROW_GROUPS: &str = r#"
import sys, pandas as pd, pyarrow.parquet as pq
a, b = sys.argv[1], sys.argv[2]
pd.testing.assert_frame_equal(pd.read_parquet(a), pd.read_parquet(b), check_dtype=True)
ma, mb = pq.ParquetFile(a).metadata, pq.ParquetFile(b).metadata
rows = [ma.row_group(g).num_rows for g in range(ma.num_row_groups)]
assert rows == [mb.row_group(g).num_rows for g in range(mb.num_row_groups)]
print("ok", *rows)
"#;
