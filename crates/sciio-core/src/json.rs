//! The JSON forms every sciio JSON output shares (`sciio cat --json` of arrays and of frames,
//! attributes in Parquet metadata): floats JSON cannot express as the strings Python's
//! `float()` reads, bytes as latin-1 text.

use serde_json::{Map, Value as Json};

use crate::{NdArray, Result, Value};

/// A float as JSON: a number with round-trip digits, or `"nan"`, `"inf"`, `"-inf"`.
///
/// ```
/// use sciio_core::json::float_json;
/// assert_eq!(float_json(0.5).to_string(), "0.5");
/// assert_eq!(float_json(f64::NEG_INFINITY), "-inf");
/// assert_eq!(float_json(f64::NAN), "nan");
/// ```
pub fn float_json(x: f64) -> Json {
    if x.is_nan() {
        Json::from("nan")
    } else if x.is_infinite() {
        Json::from(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        Json::from(x)
    }
}

/// Bytes as text, one character per byte (U+0000..U+00FF): `s.encode("latin-1")` in Python
/// gives the bytes back.
///
/// ```
/// assert_eq!(sciio_core::json::latin1(b"a\xe9"), "a\u{e9}");
/// ```
pub fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// How [`value_json`] writes bytes (`S` and `V` elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BytesText {
    /// Always latin-1, so that the bytes come back exactly (`sciio cat --json`).
    Latin1,
    /// UTF-8 text when the bytes are valid UTF-8, else latin-1 (attributes shown to people, as
    /// in Parquet key-value metadata).
    Utf8OrLatin1,
}

/// One element as JSON: numbers, booleans and text as themselves, floats by [`float_json`],
/// complex numbers as `[re, im]`, datetime64/timedelta64 as integer ticks (NaT as `null`),
/// records as objects in field order, subarrays as nested lists.
///
/// ```
/// use sciio_core::json::{value_json, BytesText};
/// use sciio_core::Value;
/// assert_eq!(value_json(&Value::Bytes(vec![b'a', 0xff]), BytesText::Latin1), "a\u{ff}");
/// assert_eq!(value_json(&Value::Float(f64::NAN), BytesText::Latin1), "nan");
/// ```
pub fn value_json(value: &Value, bytes: BytesText) -> Json {
    match value {
        Value::Bool(b) => Json::from(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(x) => float_json(*x),
        Value::LongDouble(x) => float_json(x.to_f64()),
        Value::Complex(c) => Json::Array(vec![float_json(c.re), float_json(c.im)]),
        Value::LongComplex(re, im) => {
            Json::Array(vec![float_json(re.to_f64()), float_json(im.to_f64())])
        }
        Value::Bytes(b) | Value::Void(b) => Json::from(bytes_text(b, bytes)),
        Value::Str(text) => Json::from(text.as_str()),
        Value::DateTime(i64::MIN, _) | Value::TimeDelta(i64::MIN, _) => Json::Null,
        Value::DateTime(t, _) | Value::TimeDelta(t, _) => Json::from(*t),
        Value::Record(fields) => {
            let mut map = Map::new();
            for (name, field) in fields {
                map.insert(name.clone(), value_json(field, bytes));
            }
            Json::Object(map)
        }
        Value::Array(shape, items) => nest(shape, &mut items.iter().map(|v| value_json(v, bytes))),
    }
}

/// Every element of `array` as JSON lists nested by its shape, in C (logical) order whatever
/// the stored order; a 0-d array gives a bare value.
///
/// ```
/// use sciio_core::json::{array_json, BytesText};
/// use sciio_core::NdArray;
/// let a = NdArray::from_vec(vec![1.5f64, 2.0, 3.0, f64::INFINITY], &[2, 2]).unwrap();
/// assert_eq!(array_json(&a, BytesText::Latin1).unwrap().to_string(), r#"[[1.5,2.0],[3.0,"inf"]]"#);
/// ```
pub fn array_json(array: &NdArray, bytes: BytesText) -> Result<Json> {
    let values = array.values()?;
    Ok(nest(
        array.shape(),
        &mut values.iter().map(|v| value_json(v, bytes)),
    ))
}

fn bytes_text(raw: &[u8], how: BytesText) -> String {
    match how {
        BytesText::Latin1 => latin1(raw),
        BytesText::Utf8OrLatin1 => match std::str::from_utf8(raw) {
            Ok(text) => text.to_string(),
            Err(_) => latin1(raw),
        },
    }
}

/// Lists nested by `shape`, filled from `items` in C order (`null` where items run out).
fn nest(shape: &[usize], items: &mut dyn Iterator<Item = Json>) -> Json {
    match shape.split_first() {
        None => items.next().unwrap_or(Json::Null),
        Some((&n, rest)) => Json::Array((0..n).map(|_| nest(rest, items)).collect()),
    }
}
