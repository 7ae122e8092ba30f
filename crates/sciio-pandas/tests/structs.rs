//! Nested records and Parquet struct columns, both directions: a structured array with nested
//! records written as struct columns reads in pyarrow as structs (pandas: dicts), and struct
//! columns pyarrow wrote read back as nested records.

use sciio_core::{ByteOrder, DType, Limits, NdArray, Order, RecordType, ScalarKind, ScalarType};
use sciio_pandas::{
    array_to_ndarray, read_frame, write_frame, Frame, NestedFields, ParquetOptions,
};
use sciio_testkit::{run_python, tempdir};

fn scalar(kind: ScalarKind) -> DType {
    DType::Scalar(ScalarType::new(kind, ByteOrder::Little))
}

/// Records `(n: i32, pos: (x: f64, tag: (id: u16, ok: bool)))`, 4 rows.
fn nested_records() -> NdArray {
    let tag = RecordType::packed([
        ("id".to_string(), scalar(ScalarKind::UInt(2))),
        (
            "ok".to_string(),
            DType::Scalar(ScalarType::new(ScalarKind::Bool, ByteOrder::NotApplicable)),
        ),
    ]);
    let pos = RecordType::packed([
        ("x".to_string(), scalar(ScalarKind::Float(8))),
        ("tag".to_string(), DType::Record(tag)),
    ]);
    let rec = RecordType::packed([
        ("n".to_string(), scalar(ScalarKind::Int(4))),
        ("pos".to_string(), DType::Record(pos)),
    ]);
    let mut bytes = Vec::new();
    for i in 0..4i32 {
        bytes.extend_from_slice(&(i - 1).to_le_bytes());
        bytes.extend_from_slice(&(f64::from(i) * 0.25).to_le_bytes());
        bytes.extend_from_slice(&(i as u16 * 100).to_le_bytes());
        bytes.push(u8::from(i % 2 == 1));
    }
    NdArray::from_bytes(DType::Record(rec), &[4], Order::C, &bytes).unwrap()
}

#[test]
fn nested_records_become_struct_columns_pyarrow_reads() {
    let dir = tempdir();
    let records = nested_records();
    let structs = dir.path().join("structs.parquet");
    let frame = Frame::from_structured_with(&records, NestedFields::Structs).unwrap();
    write_frame(&structs, &frame, &ParquetOptions::default()).unwrap();
    let dotted = dir.path().join("dotted.parquet");
    let frame = Frame::from_structured(&records).unwrap();
    write_frame(&dotted, &frame, &ParquetOptions::default()).unwrap();
    let out = run_python(
        r#"
import sys, pyarrow as pa, pyarrow.parquet as pq, pandas as pd
t = pq.read_table(sys.argv[1])
assert t.schema.names == ['n', 'pos'], t.schema
assert t.schema.field('pos').type == pa.struct([('x', pa.float64()), ('tag', pa.struct([('id', pa.uint16()), ('ok', pa.bool_())]))]), t.schema
assert t.column('pos').to_pylist() == [{'x': i * 0.25, 'tag': {'id': i * 100, 'ok': i % 2 == 1}} for i in range(4)]
df = pd.read_parquet(sys.argv[1])
assert list(df['n']) == [-1, 0, 1, 2] and df['pos'][3] == {'x': 0.75, 'tag': {'id': 300, 'ok': True}}
assert isinstance(df.index, pd.RangeIndex)
d = pd.read_parquet(sys.argv[2])
assert list(d.columns) == ['n', 'pos.x', 'pos.tag.id', 'pos.tag.ok'], list(d.columns)
print('ok')
"#,
        &[structs.to_str().unwrap(), dotted.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "ok");
    // and back: the struct column is the nested records again
    let back = read_frame(&structs).unwrap();
    let pos = array_to_ndarray(back.column("pos").unwrap().as_ref(), &Limits::default()).unwrap();
    let DType::Record(want) = records.dtype() else {
        unreachable!()
    };
    assert_eq!(pos.dtype(), &want.fields[1].dtype);
    let itemsize = want.itemsize;
    let from: Vec<u8> = records
        .as_bytes()
        .chunks(itemsize)
        .flat_map(|r| r[4..].to_vec())
        .collect();
    assert_eq!(pos.as_bytes(), &from[..]);
}

#[test]
fn pyarrow_struct_columns_read_as_nested_records() {
    let dir = tempdir();
    let path = dir.path().join("p.parquet");
    run_python(
        r#"
import sys, pyarrow as pa, pyarrow.parquet as pq
s = pa.array([{'a': i, 'b': {'c': i * 1.5, 'd': 'xy'[: i % 3]}} for i in range(6)])
pq.write_table(pa.table({'s': s, 'k': pa.array(range(6), pa.int8())}), sys.argv[1], row_group_size=4)
"#,
        &[path.to_str().unwrap()],
    );
    let frame = read_frame(&path).unwrap();
    let arrays = frame.to_ndarrays(&Limits::default()).unwrap();
    let (name, s) = &arrays[1];
    assert_eq!(name, "s");
    let DType::Record(r) = s.dtype() else {
        panic!("{}", s.dtype())
    };
    let names: Vec<&str> = r.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    let DType::Record(b) = &r.fields[1].dtype else {
        panic!("{}", r.fields[1].dtype)
    };
    assert_eq!(b.fields.len(), 2);
    // row 4: a = 4, b.c = 6.0, b.d = 'x' (<U2 here: the longest value)
    let row = &s.as_bytes()[4 * r.itemsize..5 * r.itemsize];
    assert_eq!(i64::from_le_bytes(row[..8].try_into().unwrap()), 4);
    assert_eq!(f64::from_le_bytes(row[8..16].try_into().unwrap()), 6.0);
    assert_eq!(
        u32::from_le_bytes(row[16..20].try_into().unwrap()),
        u32::from('x')
    );
    assert_eq!(u32::from_le_bytes(row[20..24].try_into().unwrap()), 0);
}
