//! Frame ⇄ sciio-core NdArray: columns to numpy arrays (for `x.parquet → y.npz`) and a
//! structured array to a frame, checked against numpy/pandas.

use std::sync::Arc;

use arrow_array::{
    BooleanArray, DictionaryArray, Float64Array, Int64Array, Int8Array, StringArray,
    TimestampMicrosecondArray,
};
use sciio_core::{DType, Limits, NdArray, Order, RecordType, ScalarKind};
use sciio_pandas::{write_frame, Frame, ParquetOptions, RangeIndex};
use sciio_testkit::{run_python, tempdir};

#[test]
fn columns_become_numpy_arrays() {
    let cat = DictionaryArray::try_new(
        Int8Array::from(vec![1, 0, 1]),
        Arc::new(StringArray::from(vec!["lo", "high"])),
    )
    .unwrap();
    let frame = Frame::builder()
        .column("i", Arc::new(Int64Array::from(vec![1, 2, 3])))
        .column(
            "n",
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3)])),
        )
        .column(
            "f",
            Arc::new(Float64Array::from(vec![Some(0.5), None, Some(2.0)])),
        )
        .column(
            "s",
            Arc::new(StringArray::from(vec![Some("a"), Some("bcd"), Some("")])),
        )
        .column(
            "t",
            Arc::new(
                TimestampMicrosecondArray::from(vec![Some(1), None, Some(3)]).with_timezone("UTC"),
            ),
        )
        .column("b", Arc::new(BooleanArray::from(vec![true, false, true])))
        .categorical("c", Arc::new(cat), false)
        .range_index(RangeIndex::new(10, 13, 1).with_name("r"))
        .build()
        .unwrap();
    let arrays = frame.to_ndarrays(&Limits::default()).unwrap();
    let names: Vec<&str> = arrays.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["r", "i", "n", "f", "s", "t", "b", "c"]);
    let typestrs: Vec<String> = arrays.iter().map(|(_, a)| a.dtype().to_typestr()).collect();
    assert_eq!(
        typestrs,
        ["<i8", "<i8", "<f8", "<f8", "<U3", "<M8[us]", "|b1", "<U4"]
    );
    let view = |k: usize| {
        arrays[k]
            .1
            .to_ndarray::<i64>()
            .unwrap()
            .into_raw_vec_and_offset()
            .0
    };
    assert_eq!(view(0), vec![10, 11, 12]);
    assert_eq!(view(5), vec![1, i64::MIN, 3], "null timestamps become NaT");
    let n = arrays[2].1.to_ndarray::<f64>().unwrap();
    assert!(
        n[[1]].is_nan(),
        "ints with nulls become float64 with NaN, as in pandas"
    );
    // a pickled/refused or unrepresentable column is an error naming it
    let too_small = Limits::default().max_alloc(4);
    let err = frame.to_ndarrays(&too_small).unwrap_err();
    assert_eq!(err.location().node.as_deref(), Some("s"));
    // a missing string has no fixed-width numpy value: refused, never an empty string
    let missing = Frame::builder()
        .column("s", Arc::new(StringArray::from(vec![Some("a"), None])))
        .build()
        .unwrap();
    let err = missing.to_ndarrays(&Limits::default()).unwrap_err();
    assert_eq!(err.kind(), sciio_core::ErrorKind::Unsupported);
    assert!(err.message().contains("missing"), "{err}");
    assert_eq!(err.location().node.as_deref(), Some("s"));
}

#[test]
fn structured_array_becomes_a_frame_pandas_reads() {
    let inner = RecordType::packed([("c".to_string(), DType::scalar(ScalarKind::Float(8)))]);
    let rec = RecordType::packed([
        ("a".to_string(), DType::scalar(ScalarKind::Int(4))),
        ("b".to_string(), DType::Record(inner)),
        ("s".to_string(), DType::scalar(ScalarKind::Unicode(3))),
    ]);
    assert_eq!(rec.itemsize, 4 + 8 + 12);
    let mut bytes = Vec::new();
    for (a, c, s) in [(7i32, 1.5f64, "xy"), (-1, -2.25, "abc")] {
        bytes.extend_from_slice(&a.to_le_bytes());
        bytes.extend_from_slice(&c.to_le_bytes());
        let mut chars: Vec<u32> = s.chars().map(u32::from).collect();
        chars.resize(3, 0);
        for ch in chars {
            bytes.extend_from_slice(&ch.to_le_bytes());
        }
    }
    let arr = NdArray::from_bytes(DType::Record(rec), &[2], Order::C, &bytes).unwrap();
    let frame = Frame::from_structured(&arr).unwrap();
    let labels: Vec<&str> = frame
        .schema()
        .columns()
        .map(|c| c.label().unwrap())
        .collect();
    assert_eq!(labels, ["a", "b.c", "s"]);
    let dir = tempdir();
    let path = dir.path().join("s.parquet");
    write_frame(&path, &frame, &ParquetOptions::default()).unwrap();
    let code = r#"
import sys, numpy as np, pandas as pd
a = np.array([(7, (1.5,), "xy"), (-1, (-2.25,), "abc")],
             dtype=[("a", "<i4"), ("b", [("c", "<f8")]), ("s", "<U3")])
want = pd.DataFrame({"a": a["a"], "b.c": a["b"]["c"], "s": pd.Series(a["s"], dtype="str")})
got = pd.read_parquet(sys.argv[1])
pd.testing.assert_frame_equal(got, want, check_exact=True, check_index_type=True)
print("equal")
"#;
    assert_eq!(run_python(code, &[path.to_str().unwrap()]).trim(), "equal");
    let not_structured = NdArray::from_vec(vec![1i64, 2], &[2]).unwrap();
    assert!(Frame::from_structured(&not_structured).is_err());
}

/// A field without a column type is named in the message; the error's node stays free for
/// the path of the array the caller knows.
#[test]
fn field_errors_name_the_field_in_the_message_not_as_the_node() {
    let rec = RecordType::packed([
        ("n".to_string(), DType::scalar(ScalarKind::Int(4))),
        ("z".to_string(), DType::scalar(ScalarKind::Complex(16))),
    ]);
    let arr = NdArray::from_bytes(DType::Record(rec), &[1], Order::C, &[0u8; 20]).unwrap();
    let err = Frame::from_structured(&arr).unwrap_err();
    assert_eq!(err.location().node, None);
    assert!(err.message().starts_with("field 'z': "), "{err}");
    let (frame, left_out) = Frame::from_structured_partial(&arr).unwrap();
    assert_eq!(frame.num_rows(), 1);
    assert_eq!(left_out.len(), 1);
    assert_eq!(left_out[0].0, "z");
}

/// In a struct column, the field numpy has no type for is named in the message; the error's
/// node is the column.
#[test]
fn a_struct_field_numpy_cannot_hold_is_named_in_the_message() {
    use arrow_array::{ArrayRef, StructArray};
    use sciio_pandas::arrow_schema::{DataType, Field};
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
    let flags: ArrayRef = Arc::new(BooleanArray::from(vec![Some(true), None]));
    let s = StructArray::from(vec![
        (Arc::new(Field::new("id", DataType::Int64, false)), ids),
        (Arc::new(Field::new("flag", DataType::Boolean, true)), flags),
    ]);
    let frame = Frame::builder().column("s", Arc::new(s)).build().unwrap();
    let err = frame.to_ndarrays(&Limits::default()).unwrap_err();
    assert_eq!(err.location().node.as_deref(), Some("s"));
    assert!(err.message().starts_with("field 'flag': "), "{err}");
}
