//! The JSON forms every sciio JSON output shares (`sciio cat --json` of arrays and of frames,
//! attributes in Parquet metadata): floats JSON cannot express as the strings Python's
//! `float()` reads, bytes as latin-1 text.

use serde_json::Value as Json;

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
