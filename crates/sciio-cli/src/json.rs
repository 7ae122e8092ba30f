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

use sciio::core::json::{array_json, BytesText};
use sciio::core::PyLiteral;
use sciio::{NdArray, Order, Result};

/// The JSON document for `array` found at `node`.
pub fn array_document(node: &str, array: &NdArray) -> Result<Json> {
    Ok(json!({
        "node": node,
        "dtype": literal_json(&array.dtype().descr_literal()?),
        "shape": array.shape(),
        "order": match array.order() { Order::C => "C", Order::F => "F" },
        "values": array_json(array, BytesText::Latin1)?,
    }))
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
    use sciio::core::json;
    use sciio::Value;

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
            json::value_json(&Value::Bytes(vec![b'a', 0xff]), BytesText::Latin1),
            json!("a\u{ff}")
        );
    }
}
