//! Fixed-size list columns (PyTables/numpy subarray fields) are written by sciio's own column
//! chunk encoder (`fixed_list.rs`) when no dictionary is used for them; the file it writes is,
//! to pyarrow and pandas, the file arrow-rs's path writes: the same schema (fixed_size_list in
//! the Arrow schema), the same table and frame, the same chunk statistics (NaN, -0.0 and
//! unsigned values included), the same page index presence, a size within a few %; every codec,
//! row groups and pages cut at several sizes, lists of 1 to 64 values of every numeric type.
//! Dictionary encoding as arrow-rs does it (tried until the dictionary outgrows its page, the
//! rest PLAIN); nulls hand the chunk back to arrow-rs's writer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BooleanArray, FixedSizeListArray, Int64Array,
    PrimitiveArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field};

use sciio_pandas::{
    fixed_list_chunks_encoded_here, Compression, Frame, ParquetOptions, ParquetWriter, RangeIndex,
};
use sciio_testkit::{run_python, tempdir};

/// Pseudo-random 64-bit words (splitmix64), so every bit pattern of a type shows up.
fn word(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How the list values are made.
#[derive(Clone, Copy, Debug)]
enum Values {
    /// Mostly distinct (dictionary would overflow).
    Random,
    /// Five distinct values.
    Few,
    /// NaN for the first 300 lists, then -0.0, 0.0 and numbers (floats; others random).
    NanAndZeros,
}

fn child<T: ArrowPrimitiveType>(
    len: usize,
    values: Values,
    n: usize,
    of: impl Fn(u64) -> T::Native,
    float: Option<fn(f64) -> T::Native>,
) -> ArrayRef {
    let v = (0..len).map(|i| match (values, float) {
        (Values::Few, _) => of(i as u64 % 5),
        (Values::NanAndZeros, Some(f)) if i < 300 * n => f(f64::NAN),
        (Values::NanAndZeros, Some(f)) => f([-0.0, 0.0, 1.5, -2.25][i % 4]),
        _ => of(word(i as u64)),
    });
    Arc::new(PrimitiveArray::<T>::from_iter_values(v))
}

fn child_values(dt: &DataType, len: usize, values: Values, n: usize) -> ArrayRef {
    let unit = |w: u64| (w >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
    match dt {
        DataType::Float64 => child::<Float64Type>(len, values, n, |w| unit(w) * 1e6, Some(|x| x)),
        DataType::Float32 => child::<Float32Type>(
            len,
            values,
            n,
            |w| (unit(w) * 1e4) as f32,
            Some(|x| x as f32),
        ),
        DataType::Int8 => child::<Int8Type>(len, values, n, |w| w as i8, None),
        DataType::Int16 => child::<Int16Type>(len, values, n, |w| w as i16, None),
        DataType::Int32 => child::<Int32Type>(len, values, n, |w| w as i32, None),
        DataType::Int64 => child::<Int64Type>(len, values, n, |w| w as i64, None),
        DataType::UInt8 => child::<UInt8Type>(len, values, n, |w| w as u8, None),
        DataType::UInt16 => child::<UInt16Type>(len, values, n, |w| w as u16, None),
        DataType::UInt32 => child::<UInt32Type>(len, values, n, |w| w as u32, None),
        DataType::UInt64 => child::<UInt64Type>(len, values, n, |w| w, None),
        DataType::Boolean => Arc::new(BooleanArray::from_iter(
            (0..len).map(|i| Some(word(i as u64) & 1 == 1)),
        )),
        other => panic!("no test values for {other}"),
    }
}

/// A case: the list's child type and size, its values, where nulls go.
#[derive(Clone, Debug)]
struct Case {
    child: DataType,
    n: usize,
    rows: usize,
    values: Values,
    /// A null list at this row.
    null_list: Option<usize>,
    /// A null value in the list at this row.
    null_value: Option<usize>,
}

impl Case {
    fn new(child: DataType, n: usize, rows: usize, values: Values) -> Self {
        Case {
            child,
            n,
            rows,
            values,
            null_list: None,
            null_value: None,
        }
    }
}

/// The frame of a case (an int64 column and the list column) in batches of uneven sizes, so
/// pages and row groups are cut across batches.
fn frame(case: &Case) -> Frame {
    let len = case.rows * case.n;
    let mut values = child_values(&case.child, len, case.values, case.n);
    if let Some(row) = case.null_value {
        let valid: Vec<bool> = (0..len).map(|i| i != row * case.n).collect();
        let data = values
            .to_data()
            .into_builder()
            .nulls(Some(NullBuffer::from(valid)))
            .build()
            .unwrap();
        values = arrow_array::make_array(data);
    }
    let item = Arc::new(Field::new_list_field(case.child.clone(), true));
    let nulls = case
        .null_list
        .map(|row| NullBuffer::from((0..case.rows).map(|r| r != row).collect::<Vec<_>>()));
    let list = FixedSizeListArray::try_new(item, case.n as i32, values, nulls).unwrap();
    let ids = Int64Array::from_iter_values(0..case.rows as i64);
    let whole = Frame::builder()
        .range_index(RangeIndex::default_for(case.rows))
        .column("i", Arc::new(ids))
        .column("v", Arc::new(list))
        .build()
        .unwrap();
    let batch = &whole.batches()[0];
    let mut parts = Vec::new();
    let mut start = 0;
    for (k, size) in [3_001, 1, 777, 5_000].iter().cycle().enumerate() {
        if start == case.rows || k > 1000 {
            break;
        }
        let take = (*size).min(case.rows - start);
        parts.push(batch.slice(start, take));
        start += take;
    }
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

/// Chunks of the list column sciio's encoder writes for `frame` with `options` (written on
/// this thread, where the encoder counts them).
fn chunks_by_sciio(frame: &Frame, options: &ParquetOptions) -> usize {
    let before = fixed_list_chunks_encoded_here();
    written(frame, &options.clone().threads(1));
    fixed_list_chunks_encoded_here() - before
}

/// Writes the case with sciio's encoder and with arrow-rs's into `dir`: the two paths, and
/// whether sciio's encoder wrote some chunk of the list column.
fn both(dir: &Path, name: &str, case: &Case, options: &ParquetOptions) -> (PathBuf, PathBuf, bool) {
    let frame = frame(case);
    let own_options = options.clone().fixed_list_encoder(true);
    let own = written(&frame, &own_options);
    let arrow = written(&frame, &options.clone().fixed_list_encoder(false));
    let engaged = chunks_by_sciio(&frame, &own_options) > 0;
    assert_eq!(
        chunks_by_sciio(&frame, &options.clone().fixed_list_encoder(false)),
        0,
        "{name}: encoder switched off yet used"
    );
    let (a, b) = (
        dir.join(format!("{name}-own.parquet")),
        dir.join(format!("{name}-arrow.parquet")),
    );
    std::fs::write(&a, &own).unwrap();
    std::fs::write(&b, &arrow).unwrap();
    (a, b, engaged)
}

/// For each pair of files (own, arrow-rs): pyarrow reads the same schema and table, pandas the
/// same frame; the column chunks have the same statistics (repr: -0.0 is not 0.0), codec,
/// encodings and page index presence; prints per pair the sizes and whether the list column
/// is dictionary-encoded.
const SAME_FILES: &str = r#"
import sys, os, numpy as np, pandas as pd, pyarrow as pa, pyarrow.parquet as pq

def same_lists(x, y):
    """Fixed-size list columns with the same nulls and the same value bits (NaN, -0.0)."""
    x, y = x.combine_chunks(), y.combine_chunks()
    if x.type != y.type or x.null_count != y.null_count or x.is_null() != y.is_null():
        return False
    fx, fy = x.flatten(), y.flatten()
    if fx.null_count or fy.null_count or not pa.types.is_floating(fx.type):
        return fx.equals(fy)
    nx, ny = fx.to_numpy(), fy.to_numpy()
    return np.array_equal(nx.view(np.uint8), ny.view(np.uint8))

for pair in sys.argv[1:]:
    a, b = pair.split("|")
    ta, tb = pq.read_table(a), pq.read_table(b)
    assert ta.schema.equals(tb.schema, check_metadata=True), (pair, ta.schema, tb.schema)
    assert "fixed_size_list" in str(ta.schema.field("v").type), ta.schema.field("v").type
    assert ta.column("i").equals(tb.column("i")), pair
    assert same_lists(ta.column("v"), tb.column("v")), pair
    fa, fb = pd.read_parquet(a), pd.read_parquet(b)
    assert fa.index.equals(fb.index) and list(fa.columns) == list(fb.columns), pair
    assert fa["i"].equals(fb["i"]), pair
    for x, y in zip(fa["v"], fb["v"]):
        assert (x is None) == (y is None) and (x is None or np.array_equal(x, y, equal_nan=True)), pair
    ma, mb = pq.ParquetFile(a).metadata, pq.ParquetFile(b).metadata
    assert ma.schema.equals(mb.schema), pair
    assert ma.num_row_groups == mb.num_row_groups, pair
    assert ma.num_rows == mb.num_rows, pair
    dictionary = False
    for g in range(ma.num_row_groups):
        for c in range(ma.num_columns):
            ca, cb = ma.row_group(g).column(c), mb.row_group(g).column(c)
            what = (pair, g, c)
            assert ca.num_values == cb.num_values, what
            assert ca.compression == cb.compression, what
            assert ca.has_offset_index == cb.has_offset_index, what
            assert ca.has_column_index == cb.has_column_index, (what, ca.has_column_index)
            sa, sb = ca.statistics, cb.statistics
            assert (sa is None) == (sb is None), what
            if sa is not None:
                assert repr(sa.to_dict()) == repr(sb.to_dict()), (what, sa.to_dict(), sb.to_dict())
            if c == 1:
                assert set(ca.encodings) == set(cb.encodings), (what, ca.encodings, cb.encodings)
                dictionary |= any("DICTIONARY" in e for e in ca.encodings)
    print(os.path.getsize(a), os.path.getsize(b), int(dictionary))
"#;

struct Checked {
    own_size: u64,
    arrow_size: u64,
    dictionary: bool,
}

fn check_same(pairs: &[(PathBuf, PathBuf)]) -> Vec<Checked> {
    let args: Vec<String> = pairs
        .iter()
        .map(|(a, b)| format!("{}|{}", a.display(), b.display()))
        .collect();
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_python(SAME_FILES, &refs);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), pairs.len(), "{out}");
    lines
        .iter()
        .map(|l| {
            let f: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            Checked {
                own_size: f[0],
                arrow_size: f[1],
                dictionary: f[2] == 1,
            }
        })
        .collect()
}

fn assert_size_near(c: &Checked, what: &str) {
    let ratio = c.own_size as f64 / c.arrow_size as f64;
    assert!(
        (0.97..=1.03).contains(&ratio),
        "{what}: {} bytes vs arrow-rs's {}",
        c.own_size,
        c.arrow_size
    );
}

#[test]
fn every_numeric_child_and_list_size_reads_as_arrow_rs_writes_it() {
    let dir = tempdir();
    let options = ParquetOptions::new()
        .row_group_rows(7_000)
        .data_page_bytes(16 << 10)
        .dictionary(false);
    let mut cases = Vec::new();
    for n in [1, 3, 8, 64] {
        cases.push(Case::new(DataType::Float64, n, 12_000, Values::Random));
    }
    for child in [
        DataType::Float32,
        DataType::Int8,
        DataType::Int16,
        DataType::Int32,
        DataType::Int64,
        DataType::UInt8,
        DataType::UInt16,
        DataType::UInt32,
        DataType::UInt64,
    ] {
        cases.push(Case::new(child, 3, 12_000, Values::Random));
    }
    let mut pairs = Vec::new();
    for (k, case) in cases.iter().enumerate() {
        let (a, b, engaged) = both(dir.path(), &format!("case{k}"), case, &options);
        assert!(
            engaged,
            "{case:?}: sciio's encoder did not write the column"
        );
        pairs.push((a, b));
    }
    for (c, case) in check_same(&pairs).iter().zip(&cases) {
        assert!(!c.dictionary, "{case:?}");
        assert_size_near(c, &format!("{case:?}"));
    }
}

#[test]
fn every_codec_and_page_and_row_group_size() {
    let dir = tempdir();
    let case = Case::new(DataType::Float64, 8, 20_000, Values::Random);
    let mut pairs = Vec::new();
    let mut k = 0;
    for compression in [
        Compression::None,
        Compression::Snappy,
        Compression::Gzip(None),
        Compression::Zstd(Some(3)),
        Compression::Lz4,
        Compression::Brotli(Some(1)),
    ] {
        for (rows, page) in [(1 << 20, 1 << 20), (5_000, 4096), (20_000, 100)] {
            for threads in [1, 2] {
                let options = ParquetOptions::new()
                    .compression(compression)
                    .row_group_rows(rows)
                    .data_page_bytes(page)
                    .dictionary(false)
                    .threads(threads);
                let (a, b, engaged) = both(dir.path(), &format!("codec{k}"), &case, &options);
                assert!(
                    engaged,
                    "{compression:?} {rows} {page}: not sciio's encoder"
                );
                k += 1;
                pairs.push((a, b));
            }
        }
    }
    for (k, c) in check_same(&pairs).iter().enumerate() {
        assert_size_near(c, &format!("codec case {k}"));
    }
}

#[test]
fn statistics_leave_out_nan_and_write_signed_zeros_as_arrow_rs() {
    let dir = tempdir();
    let mut pairs = Vec::new();
    for child in [DataType::Float64, DataType::Float32] {
        for (rows, group) in [(2_000, 300), (2_000, 1_000), (250, 1_000)] {
            let case = Case::new(child.clone(), 4, rows, Values::NanAndZeros);
            for statistics in [true, false] {
                let options = ParquetOptions::new()
                    .row_group_rows(group)
                    .data_page_bytes(1024)
                    .dictionary(false)
                    .statistics(statistics);
                let name = format!("nan-{child}-{rows}-{group}-{statistics}");
                let (a, b, engaged) = both(dir.path(), &name, &case, &options);
                assert!(engaged, "{name}: sciio's encoder did not write");
                pairs.push((a, b));
            }
        }
    }
    check_same(&pairs);
}

#[test]
fn a_dictionary_that_would_overflow_early_in_the_row_group_is_not_tried() {
    let dir = tempdir();
    // 100 000 lists of 8 distinct values in one row group: a dictionary of 6 MB, arrow-rs's
    // would stop at 1 MiB
    let case = Case::new(DataType::Float64, 8, 100_000, Values::Random);
    let (a, b, engaged) = both(dir.path(), "overflow", &case, &ParquetOptions::new());
    assert!(engaged, "sciio's encoder did not write the column");
    // a small row group: the dictionary fits, sciio's encoder writes it
    let small = ParquetOptions::new().row_group_rows(10_000);
    let (c, d, engaged) = both(dir.path(), "fits", &case, &small);
    assert!(engaged, "sciio's encoder did not write the column");
    // a dictionary that outgrows its page in the row group: dictionary pages, then PLAIN
    let mid = ParquetOptions::new().row_group_rows(40_000);
    let (e, f, engaged) = both(dir.path(), "outgrown", &case, &mid);
    assert!(engaged, "sciio's encoder did not write the column");
    let checked = check_same(&[(a, b), (c, d), (e, f)]);
    assert!(!checked[0].dictionary);
    assert!(checked[1].dictionary);
    assert!(checked[2].dictionary);
    for (c, what) in checked.iter().zip(["overflow", "fits", "outgrown"]) {
        assert_size_near(c, what);
    }
}

#[test]
fn values_that_repeat_are_dictionary_encoded_as_arrow_rs_does() {
    let dir = tempdir();
    let mut pairs = Vec::new();
    for (k, child) in [DataType::Float64, DataType::Int8, DataType::UInt32]
        .into_iter()
        .enumerate()
    {
        let case = Case::new(child, 8, 30_000, Values::Few);
        let (a, b, engaged) = both(
            dir.path(),
            &format!("few{k}"),
            &case,
            &ParquetOptions::new(),
        );
        assert!(
            engaged,
            "{case:?}: sciio's encoder did not write the column"
        );
        pairs.push((a, b));
    }
    // dictionary off: both plain, about the same size
    let case = Case::new(DataType::Float64, 8, 30_000, Values::Few);
    let off = ParquetOptions::new().dictionary(false);
    let (c, d, engaged) = both(dir.path(), "few-plain", &case, &off);
    assert!(engaged);
    pairs.push((c, d));
    let checked = check_same(&pairs);
    for (k, c) in checked.iter().enumerate() {
        assert_eq!(c.dictionary, k < 3, "case {k}");
        assert_size_near(c, &format!("few values, case {k}"));
    }
}

#[test]
fn nulls_and_booleans_are_written_by_arrow_rs_and_read_the_same() {
    let dir = tempdir();
    let options = ParquetOptions::new()
        .row_group_rows(7_000)
        .data_page_bytes(4096)
        .dictionary(false);
    let mut cases = Vec::new();
    for (list, value) in [(Some(5_000), None), (None, Some(9_000)), (Some(0), None)] {
        let mut case = Case::new(DataType::Float64, 8, 12_000, Values::Random);
        case.null_list = list;
        case.null_value = value;
        cases.push(case);
    }
    cases.push(Case::new(DataType::Boolean, 8, 12_000, Values::Random));
    let mut pairs = Vec::new();
    for (k, case) in cases.iter().enumerate() {
        let (a, b, engaged) = both(dir.path(), &format!("null{k}"), case, &options);
        // the row group without a null is sciio's; booleans are arrow-rs's
        assert_eq!(engaged, case.child != DataType::Boolean, "{case:?}");
        pairs.push((a, b));
    }
    for (c, case) in check_same(&pairs).iter().zip(&cases) {
        assert_size_near(c, &format!("{case:?}"));
    }
    // and the null is there, where it was written
    let out = run_python(
        r#"
import sys, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
v = t.column("v")
print(v.null_count, v[5000].is_valid, v[5001].is_valid)
"#,
        &[pairs[0].0.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "1 False True");
}

#[test]
fn a_null_after_pages_were_cut_hands_them_back_decoded() {
    // the encoder compresses pages as it cuts them; a null later in the row group makes it
    // decode those pages back (dictionary codes or PLAIN values, every codec) for arrow-rs
    let dir = tempdir();
    let cases = [
        // dictionary pages, then PLAIN ones once it outgrew its page, then the null
        (
            DataType::Float64,
            Values::Random,
            true,
            Compression::Zstd(Some(3)),
        ),
        (DataType::Int8, Values::Few, true, Compression::None),
        (
            DataType::Int16,
            Values::Random,
            true,
            Compression::Gzip(None),
        ),
        (DataType::UInt64, Values::Random, false, Compression::Snappy),
        (DataType::Int8, Values::Random, false, Compression::Lz4),
        (
            DataType::Float32,
            Values::NanAndZeros,
            false,
            Compression::Brotli(Some(1)),
        ),
    ];
    let mut pairs = Vec::new();
    for (k, (child, values, dictionary, compression)) in cases.iter().enumerate() {
        let mut case = Case::new(child.clone(), 8, 40_000, *values);
        match k % 2 {
            0 => case.null_value = Some(29_000),
            _ => case.null_list = Some(25_000),
        }
        let options = ParquetOptions::new()
            .row_group_rows(30_000)
            .data_page_bytes(8192)
            .dictionary(*dictionary)
            .compression(*compression);
        let (a, b, engaged) = both(dir.path(), &format!("late-null{k}"), &case, &options);
        // the second row group has no null: sciio's
        assert!(engaged, "{case:?}: sciio's encoder wrote no chunk");
        pairs.push((a, b));
    }
    let checked = check_same(&pairs);
    assert!(checked[0].dictionary && checked[1].dictionary && checked[2].dictionary);
    for (c, case) in checked.iter().zip(&cases) {
        assert_size_near(c, &format!("{case:?}"));
    }
}
