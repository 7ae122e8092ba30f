//! Shared helpers for the NPY tests: the golden manifest and exact JSON encoding of values
//! (the same encoding python/gen_npy_golden.py uses).

use std::path::PathBuf;

use sciio_core::{NdArray, Value};
use serde_json::{json, Value as Json};

pub fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

pub fn manifest() -> Vec<Json> {
    let text = std::fs::read_to_string(golden_dir().join("manifest.json")).unwrap();
    let v: Json = serde_json::from_str(&text).unwrap();
    let entries = v.as_array().unwrap().clone();
    assert!(entries.len() > 80, "manifest too small");
    entries
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn f64hex(x: f64) -> Json {
    json!(hex(&x.to_le_bytes()))
}

pub fn value_json(v: &Value) -> Json {
    match v {
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::UInt(u) => json!(u),
        Value::Float(f) => f64hex(*f),
        Value::LongDouble(ld) => json!({"bytes": hex(&ld.bytes[..10]), "f64": f64hex(ld.to_f64())}),
        Value::Complex(c) => json!([f64hex(c.re), f64hex(c.im)]),
        Value::LongComplex(re, im) => json!([
            value_json(&Value::LongDouble(*re)),
            value_json(&Value::LongDouble(*im))
        ]),
        Value::Bytes(b) | Value::Void(b) => json!(hex(b)),
        Value::Str(s) => json!(s),
        Value::DateTime(t, _) | Value::TimeDelta(t, _) => json!(t),
        Value::Record(fields) => Json::Array(fields.iter().map(|(_, v)| value_json(v)).collect()),
        Value::Array(_, values) => Json::Array(values.iter().map(value_json).collect()),
    }
}

pub fn values_json(a: &NdArray) -> Json {
    Json::Array(a.values().unwrap().iter().map(value_json).collect())
}

/// Checks an array read by sciio against a manifest entry (descr, shape, order, values).
pub fn check_entry(a: &NdArray, header: &sciio_npy::Header, entry: &Json) {
    let name = entry["name"].as_str().unwrap();
    let descr = header.dtype.descr_literal().unwrap();
    let descr = match descr {
        sciio_core::PyLiteral::Str(s) => s,
        other => other.repr(),
    };
    assert_eq!(descr, entry["dtype"].as_str().unwrap(), "{name}: dtype");
    let shape: Vec<usize> = entry["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(a.shape(), &shape[..], "{name}: shape");
    assert_eq!(
        header.fortran_order,
        entry["fortran_order"].as_bool().unwrap(),
        "{name}: order"
    );
    let version = header.version.number().0 as u64;
    assert_eq!(
        version,
        entry["version"].as_u64().unwrap(),
        "{name}: version"
    );
    assert_eq!(values_json(a), entry["values"], "{name}: values");
}
