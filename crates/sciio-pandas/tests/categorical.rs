//! Categorical columns keep their categories exactly — in their order, unused ones included,
//! with the ordered flag — for every code width and category type, over several row groups,
//! checked with pyarrow/pandas and fastparquet, which read the dictionary pages.

use std::sync::Arc;

use arrow_array::types::{Int16Type, Int32Type, Int8Type};
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Float64Array, Int64Array, StringArray,
    TimestampNanosecondArray,
};
use arrow_buffer::ArrowNativeType;
use arrow_schema::DataType;
use serde_json::{json, Value};

use sciio_pandas::{
    read_frame, read_frame_with, write_frame, Compression, Frame, ParquetOptions, ReadOptions,
};
use sciio_testkit::{run_python, tempdir};

const ROWS: usize = 10;

fn dict<K: arrow_array::types::ArrowDictionaryKeyType>(
    codes: &[i64],
    values: ArrayRef,
) -> ArrayRef {
    let keys: arrow_array::PrimitiveArray<K> = codes
        .iter()
        .map(|&c| (c >= 0).then(|| K::Native::from_usize(c as usize).unwrap()))
        .collect();
    Arc::new(DictionaryArray::<K>::try_new(keys, values).unwrap())
}

/// (label, codes, categories as JSON, ordered, the column)
type Column = (&'static str, Vec<i64>, Vec<Value>, bool, ArrayRef);

fn columns() -> Vec<Column> {
    let some: Vec<i64> = vec![0, 1, -1, 1, 2, 0, 0, 1, 2, 0];
    let mut out = Vec::new();
    let c8 = vec![1, 1, 1, 1, 0, 2, 2, -1, 0, 2];
    let cats = vec!["z", "a", "m", "unused"];
    out.push((
        "c8",
        c8.clone(),
        cats.iter().map(|c| json!(c)).collect(),
        false,
        dict::<Int8Type>(&c8, Arc::new(StringArray::from(cats))),
    ));
    let c16: Vec<i64> = (0..ROWS as i64).map(|i| 299 - i * 7).collect();
    let cats: Vec<String> = (0..300).rev().map(|i| format!("k{i:03}")).collect();
    out.push((
        "c16",
        c16.clone(),
        cats.iter().map(|c| json!(c)).collect(),
        true,
        dict::<Int16Type>(&c16, Arc::new(StringArray::from(cats.clone()))),
    ));
    let c32: Vec<i64> = (0..ROWS as i64).map(|i| i * 3000).collect();
    let cats: Vec<String> = (0..33_000)
        .map(|i| format!("v{}", i * 7 % 33_000))
        .collect();
    out.push((
        "c32",
        c32.clone(),
        cats.iter().map(|c| json!(c)).collect(),
        false,
        dict::<Int32Type>(&c32, Arc::new(StringArray::from(cats.clone()))),
    ));
    let ints = vec![30i64, 10, 20, 99];
    out.push((
        "cint",
        some.clone(),
        ints.iter().map(|c| json!(c)).collect(),
        true,
        dict::<Int8Type>(&some, Arc::new(Int64Array::from(ints))),
    ));
    let floats = vec![2.5f64, -1.0, 0.25, 7.0];
    out.push((
        "cf",
        some.clone(),
        floats.iter().map(|c| json!(c)).collect(),
        false,
        dict::<Int8Type>(&some, Arc::new(Float64Array::from(floats))),
    ));
    let ns = vec![
        1_619_827_200_000_000_000i64,
        946_684_799_999_999_999,
        1_893_456_000_000_000_000,
        0,
    ];
    out.push((
        "cdt",
        some.clone(),
        ns.iter().map(|c| json!(c)).collect(),
        true,
        dict::<Int8Type>(&some, Arc::new(TimestampNanosecondArray::from(ns.clone()))),
    ));
    let tz = TimestampNanosecondArray::from(ns.clone()).with_timezone("Europe/Paris");
    out.push((
        "cdtz",
        some.clone(),
        ns.iter().map(|c| json!(c)).collect(),
        false,
        dict::<Int8Type>(&some, Arc::new(tz)),
    ));
    out
}

fn frame() -> Frame {
    let mut b = Frame::builder();
    for (label, _, _, ordered, col) in columns() {
        b = b.categorical(label, col, ordered);
    }
    b.build().unwrap()
}

fn categories_json(a: &ArrayRef) -> Vec<Value> {
    use arrow_array::cast::AsArray;
    match a.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 => {
            let s = arrow_cast::cast(a, &DataType::Utf8).unwrap();
            s.as_string::<i32>()
                .iter()
                .map(|v| json!(v.unwrap()))
                .collect()
        }
        DataType::Float64 => a
            .as_primitive::<arrow_array::types::Float64Type>()
            .iter()
            .map(|v| json!(v.unwrap()))
            .collect(),
        _ => {
            let i = arrow_cast::cast(a, &DataType::Int64).unwrap();
            i.as_primitive::<arrow_array::types::Int64Type>()
                .iter()
                .map(|v| json!(v.unwrap()))
                .collect()
        }
    }
}

fn check_sciio_reads_back(path: &std::path::Path, threads: usize) {
    let back = read_frame_with(path, &ReadOptions::new().threads(threads).batch_size(3)).unwrap();
    for (label, codes, cats, ordered, col) in columns() {
        let (got_codes, got_cats, got_ordered) = back.categorical(label).unwrap();
        assert_eq!(got_codes, codes, "{label} codes");
        assert_eq!(categories_json(&got_cats), cats, "{label} categories");
        assert_eq!(got_ordered, ordered, "{label} ordered");
        assert_eq!(
            back.column(label).unwrap().data_type(),
            col.data_type(),
            "{label}"
        );
    }
}

/// pandas (pyarrow) and fastparquet read the categories from every row group's dictionary
/// page: pyarrow only keeps string dictionaries (others become plain values, as for its own
/// files), fastparquet keeps them all.
const CHECK: &str = r#"
import sys, json, numpy as np, pandas as pd, pyarrow.parquet as pq, fastparquet
path, want = sys.argv[1], json.load(open(sys.argv[2]))
groups = pq.ParquetFile(path).num_row_groups
assert groups == int(sys.argv[3]), groups
def jsonable(c):
    if isinstance(c, pd.Timestamp):
        return int(c.as_unit('ns').value)
    return c.item() if hasattr(c, 'item') else c
df = pd.read_parquet(path)
for label, (codes, cats, ordered) in want.items():
    col = df[label]
    values = [None if k < 0 else cats[k] for k in codes]
    if isinstance(cats[0], str):
        assert isinstance(col.dtype, pd.CategoricalDtype), (label, col.dtype)
        assert list(col.cat.categories) == cats, (label, list(col.cat.categories)[:5])
        assert col.cat.ordered == ordered, label
        assert list(col.cat.codes) == codes, label
    got = [None if pd.isna(v) else jsonable(pd.Timestamp(v) if isinstance(v, (np.datetime64, pd.Timestamp)) else v)
           for v in col.astype(object)]
    assert got == values, (label, got, values)
    # every row group: the whole dictionary, in order
    for i in range(groups):
        t = pq.ParquetFile(path).read_row_group(i, columns=[label])
        if isinstance(cats[0], str):
            assert t.column(0).chunk(0).dictionary.to_pylist() == cats, (label, i)
pf = fastparquet.ParquetFile(path)
for i, part in enumerate(pf.iter_row_groups(categories=list(want))):
    for label, (codes, cats, ordered) in want.items():
        got = [jsonable(c) for c in part[label].cat.categories]
        assert got == cats, (label, i, got[:5], cats[:5])
print('ok', groups)
"#;

fn want_json() -> String {
    let want: serde_json::Map<String, Value> = columns()
        .into_iter()
        .map(|(label, codes, cats, ordered, _)| (label.to_string(), json!([codes, cats, ordered])))
        .collect();
    Value::Object(want).to_string()
}

#[test]
fn categories_are_written_exactly_in_every_row_group() {
    let dir = tempdir();
    let frame = frame();
    for (name, options, groups) in [
        ("one.parquet", ParquetOptions::default(), 1),
        (
            "groups.parquet",
            ParquetOptions::new()
                .row_group_rows(4)
                .compression(Compression::Zstd(None)),
            3,
        ),
        (
            "nodict.parquet",
            ParquetOptions::new()
                .row_group_rows(3)
                .dictionary(false)
                .compression(Compression::Gzip(None))
                .data_page_bytes(1),
            4,
        ),
    ] {
        let path = dir.path().join(name);
        write_frame(&path, &frame, &options).unwrap();
        // the expectation is too long for a command line: a file
        let want = dir.path().join("want.json");
        std::fs::write(&want, want_json()).unwrap();
        let out = run_python(
            CHECK,
            &[
                path.to_str().unwrap(),
                want.to_str().unwrap(),
                &groups.to_string(),
            ],
        );
        assert_eq!(out.trim(), format!("ok {groups}"), "{name}");
        check_sciio_reads_back(&path, 1);
        check_sciio_reads_back(&path, 2);
    }
}

#[test]
fn batches_with_different_dictionaries_are_unified_like_pyarrow() {
    // two batches of one row group whose dictionaries differ: the row group's dictionary is
    // the first one's categories then the new values (pyarrow's unify_dictionaries)
    let first = dict::<Int8Type>(&[1, 0, -1], Arc::new(StringArray::from(vec!["a", "b"])));
    let second = dict::<Int8Type>(&[0, 1, 0], Arc::new(StringArray::from(vec!["c", "a"])));
    let f1 = Frame::builder()
        .categorical("k", first, false)
        .build()
        .unwrap();
    let f2 = Frame::builder()
        .categorical("k", second, false)
        .build()
        .unwrap();
    let (schema, mut batches) = f1.into_parts();
    batches.extend(f2.into_parts().1);
    let frame = Frame::new(schema, batches).unwrap();
    let dir = tempdir();
    let path = dir.path().join("u.parquet");
    write_frame(&path, &frame, &ParquetOptions::default()).unwrap();
    let out = run_python(
        "import sys, pandas as pd; c = pd.read_parquet(sys.argv[1])['k']; \
         print(list(c.cat.categories), c.cat.codes.tolist())",
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "['a', 'b', 'c'] [1, 0, -1, 2, 0, 2]");
    let back = read_frame(&path).unwrap();
    let (codes, cats, _) = back.categorical("k").unwrap();
    assert_eq!(codes, vec![1, 0, -1, 2, 0, 2]);
    assert_eq!(
        categories_json(&cats),
        vec![json!("a"), json!("b"), json!("c")]
    );
}

#[test]
fn pyarrow_row_groups_keep_unused_categories_when_read() {
    // pyarrow writes the whole dictionary in every row group; rows of several row groups in
    // one batch still have every category, in order
    let dir = tempdir();
    let path = dir.path().join("p.parquet");
    run_python(
        r#"
import sys, pandas as pd
c = pd.Categorical.from_codes([2, 2, 0, -1, 2, 0, 2], categories=['q', 'unused', 'b'], ordered=True)
pd.DataFrame({'c': c}).to_parquet(sys.argv[1], row_group_size=2)
"#,
        &[path.to_str().unwrap()],
    );
    for threads in [1, 3] {
        let frame = read_frame_with(&path, &ReadOptions::new().threads(threads)).unwrap();
        let (codes, cats, ordered) = frame.categorical("c").unwrap();
        assert_eq!(codes, vec![2, 2, 0, -1, 2, 0, 2]);
        assert_eq!(
            categories_json(&cats),
            vec![json!("q"), json!("unused"), json!("b")]
        );
        assert!(ordered);
        assert!(frame.column("c").unwrap().null_count() == 1);
    }
}

#[test]
fn polars_categoricals_with_a_dictionary_per_row_group_read_as_pandas_reads_them() {
    // polars writes a dictionary page per row group, its values in the group's order of first
    // appearance (here rotating), with uint32 keys: every batch (one per row group) is
    // recoded to the file's categories. Values, missing ones and categories as pandas reads.
    let dir = tempdir();
    let path = dir.path().join("polars.parquet");
    let want = run_python(
        "import sys, json, polars as pl, pandas as pd\n\
         vals = [None if i % 17 == 5 else f'k{(i * 7 + i // 50) % 23:02d}' for i in range(1000)]\n\
         df = pl.DataFrame({'c': pl.Series(vals, dtype=pl.Categorical), 'i': list(range(1000))})\n\
         df.write_parquet(sys.argv[1], row_group_size=128)\n\
         c = pd.read_parquet(sys.argv[1])['c']\n\
         print(json.dumps([[None if pd.isna(v) else v for v in c], list(c.cat.categories)]))",
        &[path.to_str().unwrap()],
    );
    let want: Value = serde_json::from_str(want.trim()).unwrap();
    for threads in [1, 2] {
        let frame = read_frame_with(&path, &ReadOptions::new().threads(threads)).unwrap();
        assert!(frame.batches().len() >= 8, "{}", frame.batches().len());
        let (codes, cats, _) = frame.categorical("c").unwrap();
        use arrow_array::cast::AsArray;
        let cats: Vec<Value> = match cats.as_string_opt::<i32>() {
            Some(s) => s.iter().map(|c| json!(c.unwrap())).collect(),
            None => cats
                .as_string::<i64>()
                .iter()
                .map(|c| json!(c.unwrap()))
                .collect(),
        };
        assert_eq!(json!(cats), want[1], "categories, {threads} threads");
        let values: Vec<Value> = codes
            .iter()
            .map(|&c| match c {
                -1 => Value::Null,
                c => cats[c as usize].clone(),
            })
            .collect();
        assert_eq!(json!(values), want[0], "values, {threads} threads");
    }
}
