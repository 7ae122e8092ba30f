//! `sciio cat --json`: one JSON document per array, for scripts.
//!
//! ```json
//! {"node": "/x", "dtype": "<f8", "shape": [2, 2], "order": "C", "values": [[1.0, "nan"], [2.5, "-inf"]]}
//! ```
//!
//! - `dtype` is numpy's `descr`: a typestr (`"<f8"`), or for structured arrays the list of
//!   `[name, descr]` / `[name, descr, shape]` entries (`np.dtype([tuple(e) for e in d])` rebuilds it).
//! - `values` nests lists by `shape` in C (row-major) order whatever the stored order; a 0-d
//!   array gives a bare value.
//! - Floats are JSON numbers with round-trip digits, except the values JSON cannot express:
//!   NaN is the string `"nan"`, infinities are `"inf"` and `"-inf"` (Python's `float()` reads all
//!   three). Long doubles are rounded to `f64`.
//! - Complex numbers are `[real, imag]`.
//! - Bytes (`S`, `V`) are strings decoded as latin-1 (one character per byte, U+0000..U+00FF);
//!   `s.encode("latin-1")` gives the bytes back. Unicode strings are plain strings.
//! - datetime64/timedelta64 are integer ticks of the unit in the dtype; NaT is `null`.
//! - Structured records are objects in field order.

use serde_json::{json, Map, Value as Json};

use sciio::core::json::{float_json, latin1};
use sciio::core::PyLiteral;
use sciio::{NdArray, Order, Result, Value};

/// The JSON document for `array` found at `node`.
pub fn array_document(node: &str, array: &NdArray) -> Result<Json> {
    let values = array.values()?;
    let mut items = values.iter().map(value_json);
    let nested = nest(array.shape(), &mut items);
    Ok(json!({
        "node": node,
        "dtype": literal_json(&array.dtype().descr_literal()?),
        "shape": array.shape(),
        "order": match array.order() { Order::C => "C", Order::F => "F" },
        "values": nested,
    }))
}

fn nest(shape: &[usize], items: &mut dyn Iterator<Item = Json>) -> Json {
    match shape.split_first() {
        None => items.next().unwrap_or(Json::Null),
        Some((&n, rest)) => Json::Array((0..n).map(|_| nest(rest, items)).collect()),
    }
}

/// One element as JSON, by the rules in the module documentation.
pub fn value_json(v: &Value) -> Json {
    match v {
        Value::Bool(b) => Json::from(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(x) => float_json(*x),
        Value::LongDouble(x) => float_json(x.to_f64()),
        Value::Complex(c) => Json::Array(vec![float_json(c.re), float_json(c.im)]),
        Value::LongComplex(re, im) => {
            Json::Array(vec![float_json(re.to_f64()), float_json(im.to_f64())])
        }
        Value::Bytes(b) | Value::Void(b) => Json::from(latin1(b)),
        Value::Str(s) => Json::from(s.as_str()),
        Value::DateTime(i64::MIN, _) | Value::TimeDelta(i64::MIN, _) => Json::Null,
        Value::DateTime(t, _) | Value::TimeDelta(t, _) => Json::from(*t),
        Value::Record(fields) => {
            let mut map = Map::new();
            for (name, value) in fields {
                map.insert(name.clone(), value_json(value));
            }
            Json::Object(map)
        }
        Value::Array(shape, items) => {
            let mut it = items.iter().map(value_json);
            nest(shape, &mut it)
        }
    }
}

pub fn literal_json(lit: &PyLiteral) -> Json {
    match lit {
        PyLiteral::None => Json::Null,
        PyLiteral::Bool(b) => Json::from(*b),
        PyLiteral::Int(i) => i64::try_from(*i)
            .map(Json::from)
            .unwrap_or_else(|_| Json::from(i.to_string())),
        PyLiteral::Str(s) => Json::from(s.as_str()),
        PyLiteral::Tuple(items) | PyLiteral::List(items) => {
            Json::Array(items.iter().map(literal_json).collect())
        }
        PyLiteral::Dict(items) => {
            let mut map = Map::new();
            for (k, v) in items {
                let key = k.as_str().map(str::to_string).unwrap_or_else(|| k.repr());
                map.insert(key, literal_json(v));
            }
            Json::Object(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_floats_become_strings() {
        let a = NdArray::from_vec(vec![1.5f64, f64::NAN, f64::NEG_INFINITY, 2.0], &[2, 2]).unwrap();
        let doc = array_document("/a", &a).unwrap();
        assert_eq!(doc["values"], json!([[1.5, "nan"], ["-inf", 2.0]]));
        assert_eq!(doc["dtype"], json!("<f8"));
        assert_eq!(doc["shape"], json!([2, 2]));
    }

    #[test]
    fn bytes_are_latin1() {
        assert_eq!(
            value_json(&Value::Bytes(vec![b'a', 0xff])),
            json!("a\u{ff}")
        );
    }
}
