//! Interop with pandas / pyarrow / fastparquet, both directions: sciio reads what they wrote
//! (generated cases and pyarrow's shipped test files), and pandas reads what sciio wrote.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::Array;
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, DictionaryArray, DurationMillisecondArray,
    Float64Array, Int32Array, Int64Array, Int8Array, StringArray, TimestampMicrosecondArray,
    TimestampNanosecondArray,
};
use arrow_schema::{DataType, TimeUnit};
use serde_json::Value;

use sciio_core::ErrorKind;
use sciio_pandas::{
    copy_parquet, read_frame, write_frame, Compression, Frame, IndexLevel, ParquetOptions,
    ParquetReader, RangeIndex,
};
use sciio_testkit::{run_python, run_python_script, tempdir, wheel_files};

fn generate(dir: &Path) -> Vec<Value> {
    let out = run_python_script("python/gen_parquet_cases.py", &[dir.to_str().unwrap()]);
    let n: usize = out.trim().parse().unwrap();
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cases.json")).unwrap()).unwrap();
    assert_eq!(cases.len(), n);
    assert!(n >= 20, "generator wrote only {n} cases");
    cases
}

fn opt_str(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// Categories as the generator writes them to JSON: strings, numbers, datetimes as
/// nanoseconds since the epoch.
fn category_json(categories: &ArrayRef) -> Vec<Value> {
    let as_ns = |a: &ArrayRef| -> Vec<Value> {
        let a = arrow_cast::cast(a, &DataType::Timestamp(TimeUnit::Nanosecond, None)).unwrap();
        let a = arrow_cast::cast(&a, &DataType::Int64).unwrap();
        a.as_primitive::<Int64Type>()
            .iter()
            .map(|v| v.unwrap().into())
            .collect()
    };
    match categories.data_type() {
        DataType::Timestamp(..) => as_ns(categories),
        DataType::Float32 | DataType::Float64 => {
            let a = arrow_cast::cast(categories, &DataType::Float64).unwrap();
            a.as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.unwrap().into())
                .collect()
        }
        DataType::Utf8 | DataType::LargeUtf8 => {
            let a = arrow_cast::cast(categories, &DataType::Utf8).unwrap();
            a.as_string::<i32>()
                .iter()
                .map(|v| v.unwrap().into())
                .collect()
        }
        _ => {
            let a = arrow_cast::cast(categories, &DataType::Int64).unwrap();
            a.as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.unwrap().into())
                .collect()
        }
    }
}

fn check_case(dir: &Path, case: &Value) {
    let name = case["name"].as_str().unwrap();
    let path = dir.join(case["file"].as_str().unwrap());
    let frame = read_frame(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let schema = frame.schema();
    assert!(
        schema.warnings().is_empty(),
        "{name}: {:?}",
        schema.warnings()
    );
    assert_eq!(
        frame.num_rows() as u64,
        case["rows"].as_u64().unwrap(),
        "{name}"
    );

    // index
    let idx = &case["index"];
    if idx["kind"] == "range" {
        let [IndexLevel::Range(r)] = schema.index() else {
            panic!("{name}: expected a RangeIndex, got {:?}", schema.index());
        };
        assert_eq!(r.start, idx["start"].as_i64().unwrap(), "{name}");
        assert_eq!(r.stop, idx["stop"].as_i64().unwrap(), "{name}");
        assert_eq!(r.step, idx["step"].as_i64().unwrap(), "{name}");
        assert_eq!(r.name, opt_str(&idx["name"]), "{name}");
    } else {
        let names: Vec<Option<String>> = idx["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(opt_str)
            .collect();
        let got: Vec<Option<String>> = schema
            .index()
            .iter()
            .map(|l| {
                assert!(matches!(l, IndexLevel::Column { .. }), "{name}: {l:?}");
                l.name().map(str::to_string)
            })
            .collect();
        assert_eq!(got, names, "{name}: index names");
        let arrays = frame.index_arrays().unwrap();
        assert_eq!(arrays.len(), names.len(), "{name}");
        for (_, a) in &arrays {
            assert_eq!(a.len(), frame.num_rows(), "{name}");
        }
    }

    // labels and levels
    let labels: Vec<Option<String>> = case["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(opt_str)
        .collect();
    let got: Vec<Option<String>> = schema
        .columns()
        .map(|c| c.label().map(str::to_string))
        .collect();
    assert_eq!(got, labels, "{name}: column labels");
    let level_names: Vec<Option<String>> = case["column_level_names"]
        .as_array()
        .unwrap()
        .iter()
        .map(opt_str)
        .collect();
    if case["writer"] == "pyarrow" {
        let got: Vec<Option<String>> = schema
            .column_levels()
            .iter()
            .map(|l| l.name.clone())
            .collect();
        assert_eq!(got, level_names, "{name}: column level names");
    }
    if level_names.len() > 1 {
        for c in schema.columns() {
            let levels = c
                .label_levels()
                .unwrap_or_else(|| panic!("{name}: {:?}", c.label()));
            assert_eq!(levels.len(), level_names.len(), "{name}");
        }
    }

    // categoricals, time zones
    for (label, cat) in case["categoricals"].as_object().unwrap() {
        let (codes, categories, ordered) = frame
            .categorical(label)
            .unwrap_or_else(|e| panic!("{name}.{label}: {e}"));
        assert_eq!(codes.len(), frame.num_rows());
        assert_eq!(
            ordered,
            cat["ordered"].as_bool().unwrap(),
            "{name}.{label} ordered"
        );
        let (_, col) = schema.column(label).unwrap();
        assert_eq!(
            col.meta.pandas_type.as_str(),
            "categorical",
            "{name}.{label}"
        );
        let want = cat["categories"].as_array().unwrap();
        let got = category_json(&categories);
        let rows = frame.num_rows();
        if case["writer"] == "pyarrow"
            && !name.contains("nodict")
            && want[0].is_string()
            && rows > 0
        {
            // pyarrow writes a string categorical's categories as the dictionary page of every
            // row group: read exactly, in order, unused ones included
            assert_eq!(&got, want, "{name}.{label} categories");
        } else {
            // without dictionary encoding, or for other value types (pyarrow re-encodes them
            // from the values), the file only holds the used values; a frame without rows
            // has no batches to hold categories
            assert!(
                got.iter().all(|c| want.contains(c)),
                "{name}.{label}: {got:?} not in {want:?}"
            );
        }
    }
    for (label, tz) in case["timezones"].as_object().unwrap() {
        let a = frame.column(label).unwrap();
        match a.data_type() {
            DataType::Timestamp(_, Some(got)) => {
                assert_eq!(got.as_ref(), tz.as_str().unwrap(), "{name}.{label}")
            }
            other => panic!("{name}.{label}: {other}"),
        }
    }
    if let Some(attrs) = case["attrs"].as_object().filter(|a| !a.is_empty()) {
        assert_eq!(schema.attributes(), Some(attrs), "{name}");
    }
    // every column is accessible and printable
    frame
        .column_arrays()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let text = frame.to_text(10).unwrap();
    assert!(
        text.contains(&format!("[{} rows x", frame.num_rows())),
        "{name}: {text}"
    );
    assert!(!schema.describe().is_empty());
}

#[test]
fn reads_generated_cases_with_their_metadata() {
    let dir = tempdir();
    let cases = generate(dir.path());
    for case in &cases {
        check_case(dir.path(), case);
    }
    // a few typed checks against values the generator wrote
    let frame = read_frame(dir.path().join("types.parquet")).unwrap();
    let (_, c) = frame.schema().column("Int64").unwrap();
    assert!(c.meta.is_masked());
    let i64s = frame.primitive::<Int64Type>("i64").unwrap();
    assert_eq!(
        i64s.values().to_vec(),
        (0..6).map(|i| i << 40).collect::<Vec<i64>>()
    );
    let f = frame.primitive::<Float64Type>("f64").unwrap();
    assert!(f.is_null(2), "pandas NaN is stored as null");
    assert_eq!(
        frame.primitive::<Float64Type>("i64").unwrap_err().kind(),
        ErrorKind::Mismatch
    );
    let s = frame.strings("s").unwrap();
    assert_eq!(s[0].as_deref(), Some("alpha"));
    assert_eq!(s[2], None);
    let (_, dtz) = frame.schema().column("dtz").unwrap();
    assert_eq!(dtz.meta.timezone(), Some("Europe/Brussels"));
    let (_, dec) = frame.schema().column("dec").unwrap();
    assert_eq!(
        dec.meta.decimal(),
        Some((5, 2)),
        "pyarrow infers precision 5 for 100.00"
    );
}

#[test]
fn fastparquet_json_objects_are_decoded() {
    let dir = tempdir();
    generate(dir.path());
    let frame = read_frame(dir.path().join("fp_json.parquet")).unwrap();
    let values = frame.json_values("j").unwrap();
    let want: Vec<Option<Value>> =
        serde_json::from_str(r#"[{"a": 1}, [1, 2, "x"], null, "str", 3.5]"#)
            .map(|v: Vec<Value>| v.into_iter().map(|v| (!v.is_null()).then_some(v)).collect())
            .unwrap();
    assert_eq!(values, want);
    // fastparquet's timedelta (TIME micros) and time zone are restored
    let fp = read_frame(dir.path().join("fp_types.parquet")).unwrap();
    assert!(matches!(
        fp.column("td").unwrap().data_type(),
        DataType::Duration(_)
    ));
    assert!(matches!(
        fp.column("dtz").unwrap().data_type(),
        DataType::Timestamp(_, Some(tz)) if tz.as_ref() == "Europe/Paris"
    ));
}

#[test]
fn pickled_and_bson_columns_are_refused_others_read() {
    let dir = tempdir();
    generate(dir.path());
    let path = dir.path().join("refused_objects.parquet");
    let frame = read_frame(&path).unwrap();
    for label in ["obj", "bs"] {
        let err = frame.column(label).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
        assert_eq!(err.location().node.as_deref(), Some(label));
    }
    assert_eq!(
        frame
            .primitive::<Int64Type>("ok")
            .unwrap()
            .values()
            .to_vec(),
        vec![1, 2]
    );
    assert_eq!(
        frame.column_arrays().unwrap_err().kind(),
        ErrorKind::Refused
    );
    assert!(frame.to_text(10).unwrap().contains("refused"));
}

#[test]
fn round_trips_are_equal_in_pandas() {
    let dir = tempdir();
    let cases = generate(dir.path());
    let out = dir.path().join("copies");
    std::fs::create_dir(&out).unwrap();
    let option_sets = [
        ParquetOptions::default(),
        ParquetOptions::new()
            .compression(Compression::Zstd(Some(3)))
            .row_group_rows(2),
        ParquetOptions::new()
            .compression(Compression::Gzip(None))
            .dictionary(false),
        ParquetOptions::new().compression(Compression::Lz4),
        ParquetOptions::new().compression(Compression::None),
        ParquetOptions::new().compression(Compression::Brotli(Some(5))),
    ];
    let mut args: Vec<PathBuf> = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let file = case["file"].as_str().unwrap();
        let src = dir.path().join(file);
        let dst = out.join(file);
        let opts = &option_sets[i % option_sets.len()];
        let rows = copy_parquet(&src, &dst, opts).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(rows, case["rows"].as_u64().unwrap());
        args.push(src);
        args.push(dst);
    }
    // row groups really are split
    let copy = out.join("types_zstd_rg.parquet");
    copy_parquet(
        dir.path().join("types.parquet"),
        &copy,
        &ParquetOptions::new().row_group_rows(2),
    )
    .unwrap();
    let groups = run_python(
        "import sys, pyarrow.parquet as pq; print(pq.ParquetFile(sys.argv[1]).num_row_groups)",
        &[copy.to_str().unwrap()],
    );
    assert_eq!(groups.trim(), "3");
    let mut argv: Vec<&str> = vec!["roundtrip"];
    argv.extend(args.iter().map(|p| p.to_str().unwrap()));
    let out = run_python_script("python/check_parquet_pandas.py", &argv);
    assert_eq!(out.trim(), format!("ok {}", cases.len()));
}

#[test]
fn round_trip_keeps_pandas_metadata() {
    let dir = tempdir();
    generate(dir.path());
    for name in [
        "types",
        "multiindex_rows",
        "multiindex_columns",
        "range_step_named",
        "attrs",
    ] {
        let src = dir.path().join(format!("{name}.parquet"));
        let dst = dir.path().join(format!("{name}.copy.parquet"));
        copy_parquet(&src, &dst, &ParquetOptions::default()).unwrap();
        let code = r#"
import sys, json, pyarrow.parquet as pq
def meta(p):
    md = pq.read_metadata(p).metadata
    m = json.loads(md[b'pandas'])
    m.pop('creator'); m.pop('pandas_version')
    assert b'ARROW:schema' in md, 'no ARROW:schema'
    return m
a, b = meta(sys.argv[1]), meta(sys.argv[2])
assert a == b, (a, b)
print('same')
"#;
        let out = run_python(code, &[src.to_str().unwrap(), dst.to_str().unwrap()]);
        assert_eq!(out.trim(), "same", "{name}");
    }
}

fn dict(keys: Vec<Option<i8>>, values: Vec<&str>, ordered: bool) -> (ArrayRef, bool) {
    let keys = Int8Array::from(keys);
    let values = Arc::new(StringArray::from(values));
    let d = DictionaryArray::try_new(keys, values).unwrap();
    (Arc::new(d), ordered)
}

fn built_frames() -> Vec<(&'static str, Frame)> {
    let mut frames = Vec::new();
    frames.push((
        "range_step",
        Frame::builder()
            .column("x", Arc::new(Float64Array::from(vec![1.5, -2.0, f64::NAN])))
            .column("n", Arc::new(Int32Array::from(vec![7, 8, 9])))
            .range_index(RangeIndex::new(4, 10, 2).with_name("r"))
            .build()
            .unwrap(),
    ));
    let (cat, _) = dict(
        vec![Some(1), Some(0), None, Some(1)],
        vec!["lo", "hi", "unused"],
        true,
    );
    let types = Frame::builder()
        .column(
            "s",
            Arc::new(StringArray::from(vec![
                Some("a"),
                None,
                Some("ccc"),
                Some("d"),
            ])),
        )
        .categorical("cat", cat, true)
        .column(
            "ts",
            Arc::new(
                TimestampMicrosecondArray::from(vec![0, 1_000_000, 2_000_000_000, 3])
                    .with_timezone("Europe/Brussels"),
            ),
        )
        .column(
            "naive",
            Arc::new(TimestampNanosecondArray::from(vec![5, 6, 7, 8])),
        )
        .column(
            "td",
            Arc::new(DurationMillisecondArray::from(vec![1, 2, 3, 4])),
        )
        .column_with_numpy_type(
            "mask",
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3), Some(4)])),
            "Int64",
        )
        .column(
            "flag",
            Arc::new(BooleanArray::from(vec![true, false, true, true])),
        )
        .column(
            "by",
            Arc::new(BinaryArray::from(vec![
                Some(&b"x"[..]),
                Some(&b""[..]),
                None,
                Some(&b"\x00"[..]),
            ])),
        )
        .column(
            "date",
            Arc::new(Date32Array::from(vec![
                Some(0),
                Some(11016),
                None,
                Some(20088),
            ])),
        )
        .build()
        .unwrap();
    frames.push(("types", types));
    frames.push((
        "named_index",
        Frame::builder()
            .column("v", Arc::new(Int64Array::from(vec![1, 2, 3])))
            .index_level(
                Some("key"),
                Arc::new(StringArray::from(vec!["a", "b", "c"])),
            )
            .build()
            .unwrap(),
    ));
    frames.push((
        "collision",
        Frame::builder()
            .column("a", Arc::new(Int64Array::from(vec![1, 2])))
            .index_level(Some("a"), Arc::new(Int64Array::from(vec![5, 6])))
            .build()
            .unwrap(),
    ));
    frames.push((
        "multiindex",
        Frame::builder()
            .column("v", Arc::new(Float64Array::from(vec![0.5, 1.5, 2.5])))
            .index_level(Some("k"), Arc::new(StringArray::from(vec!["x", "x", "y"])))
            .index_level(None, Arc::new(Int64Array::from(vec![1, 2, 1])))
            .build()
            .unwrap(),
    ));
    frames.push((
        "multicolumns",
        Frame::builder()
            .column_levels(&[Some("l0"), Some("l1")])
            .column_tuple(&["a", "x"], Arc::new(Int64Array::from(vec![1, 4])))
            .column_tuple(&["a", "y"], Arc::new(Int64Array::from(vec![2, 5])))
            .column_tuple(&["b", "it's"], Arc::new(Int64Array::from(vec![3, 6])))
            .build()
            .unwrap(),
    ));
    frames.push((
        "empty",
        Frame::builder()
            .column("a", Arc::new(Float64Array::from(Vec::<f64>::new())))
            .column("s", Arc::new(StringArray::from(Vec::<&str>::new())))
            .build()
            .unwrap(),
    ));
    frames
}

#[test]
fn frames_built_in_rust_read_equal_in_pandas() {
    let dir = tempdir();
    for (name, frame) in built_frames() {
        let path = dir.path().join(format!("{name}.parquet"));
        write_frame(&path, &frame, &ParquetOptions::default()).unwrap();
        // and sciio reads back what it wrote
        let back = read_frame(&path).unwrap();
        assert_eq!(back.schema().index(), frame.schema().index(), "{name}");
        assert_eq!(back.num_rows(), frame.num_rows(), "{name}");
    }
    let out = run_python_script(
        "python/check_parquet_pandas.py",
        &["built", dir.path().to_str().unwrap()],
    );
    // categories in their order, the unused category "unused" included
    assert_eq!(out.trim(), "ok 7");
}

#[test]
fn reads_pyarrow_shipped_test_files() {
    let files = wheel_files("pyarrow/tests/data/parquet", ".parquet");
    let code = r#"
import sys, json, pandas as pd
df = pd.read_parquet(sys.argv[1])
print(json.dumps({"rows": len(df), "index": [n for n in df.index.names],
                  "range": isinstance(df.index, pd.RangeIndex),
                  "labels": [str(c) for c in df.columns],
                  "tz": {str(c): str(df[c].dtype.tz) for c in df.columns if hasattr(df[c].dtype, 'tz')}}))
"#;
    for file in &files {
        let want: Value =
            serde_json::from_str(&run_python(code, &[file.to_str().unwrap()])).unwrap();
        let frame = read_frame(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let what = file.display();
        assert_eq!(
            frame.num_rows() as u64,
            want["rows"].as_u64().unwrap(),
            "{what}"
        );
        let labels: Vec<String> = frame
            .schema()
            .columns()
            .map(|c| c.label().unwrap().to_string())
            .collect();
        let want_labels: Vec<String> = want["labels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(labels, want_labels, "{what}");
        if want["range"].as_bool().unwrap() {
            assert!(
                frame.schema().index().is_empty()
                    || matches!(frame.schema().index(), [IndexLevel::Range(_)])
            );
        } else {
            let names: Vec<Option<String>> = want["index"]
                .as_array()
                .unwrap()
                .iter()
                .map(opt_str)
                .collect();
            let got: Vec<Option<String>> = frame
                .schema()
                .index()
                .iter()
                .map(|l| l.name().map(str::to_string))
                .collect();
            assert_eq!(got, names, "{what}");
        }
        for (label, tz) in want["tz"].as_object().unwrap() {
            let a = frame.column(label).unwrap();
            assert!(
                matches!(a.data_type(), DataType::Timestamp(_, Some(t)) if t.as_ref() == tz.as_str().unwrap()),
                "{what}: {label} is {}",
                a.data_type()
            );
        }
        frame.column_arrays().unwrap();
    }
    assert!(files.len() >= 4);
}

#[test]
fn streaming_reader_yields_bounded_batches() {
    let dir = tempdir();
    let path = dir.path().join("big.parquet");
    let n = 10_000i64;
    let frame = Frame::builder()
        .column("v", Arc::new(Int64Array::from_iter_values(0..n)))
        .build()
        .unwrap();
    write_frame(&path, &frame, &ParquetOptions::new().row_group_rows(1000)).unwrap();
    let reader =
        ParquetReader::open_with(&path, &sciio_pandas::ReadOptions::new().batch_size(300)).unwrap();
    assert_eq!(reader.num_rows(), n as u64);
    let mut total = 0;
    for b in reader {
        let b = b.unwrap();
        assert!(b.num_rows() <= 300);
        total += b.num_rows();
    }
    assert_eq!(total as i64, n);
}

/// Numeric columns of mostly distinct values are written plain (a dictionary of them only
/// fills up and falls back), repetitive ones dictionary-encoded; pandas reads both back equal.
#[test]
fn mostly_distinct_numeric_columns_are_written_plain() {
    let dir = tempdir();
    let path = dir.path().join("enc.parquet");
    let n = 100_000i64;
    let frame = Frame::builder()
        .column("uniq", Arc::new(Int64Array::from_iter_values(0..n)))
        .column(
            "rep",
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i % 7))),
        )
        .column(
            "f",
            Arc::new(Float64Array::from_iter_values(
                (0..n).map(|i| i as f64 * 0.25),
            )),
        )
        .build()
        .unwrap();
    write_frame(&path, &frame, &ParquetOptions::default()).unwrap();
    let out = run_python(
        r#"
import sys, pandas as pd, numpy as np, pyarrow.parquet as pq
rg = pq.ParquetFile(sys.argv[1]).metadata.row_group(0)
dict_encoded = {rg.column(i).path_in_schema: 'RLE_DICTIONARY' in rg.column(i).encodings
                for i in range(rg.num_columns)}
df = pd.read_parquet(sys.argv[1])
n = 100_000
assert (df['uniq'].to_numpy() == np.arange(n)).all() and (df['rep'].to_numpy() == np.arange(n) % 7).all()
assert (df['f'].to_numpy() == np.arange(n) * 0.25).all()
print(sorted(k for k, v in dict_encoded.items() if v))
"#,
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "['rep']");
}
