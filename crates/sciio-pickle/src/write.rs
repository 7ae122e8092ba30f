//! A minimal pickle *writer*: protocol 0, as PyTables pickles the attributes pandas gives it
//! (`pickle.dumps(value, 0)` for lists, tuples, dicts and `None`).
//!
//! Only the shapes pandas stores are written: `None`, bools, ints, floats, `str`, lists,
//! tuples, dicts, and a call of a module attribute (`Reduce` of a `Global`, e.g.
//! `datetime.timezone(datetime.timedelta(0, 3600))`). Every container and string is
//! memoised (`p0\n`, `p1\n`...) as CPython's pickler does; a value is never shared through the
//! memo (no `g` references), which `pickle.loads` reads the same.

use sciio_core::{Error, Result};

use crate::Value;

/// `pickle.dumps(value, protocol=0)` for the shapes pandas stores.
///
/// ```
/// use sciio_pickle::{parse, to_protocol0, Value};
/// let v = Value::List(vec![Value::Tuple(vec![Value::Int(0), Value::Str("index".into())])]);
/// let bytes = to_protocol0(&v)?;
/// assert_eq!(bytes, b"(lp0\n(I0\nVindex\np1\ntp2\na.");
/// assert_eq!(parse(&bytes)?, v);
/// # Ok::<(), sciio_core::Error>(())
/// ```
pub fn to_protocol0(value: &Value) -> Result<Vec<u8>> {
    let mut w = Writer {
        out: Vec::new(),
        memo: 0,
    };
    w.value(value)?;
    w.out.push(b'.');
    Ok(w.out)
}

/// `pickle.dumps(value, protocol=3)` for the same shapes, plus `bytes` and `BUILD`
/// (`obj.__setstate__(state)`): what a numpy object array's pickle needs (PyTables stores
/// the object arrays of pandas' `fixed` format so, in an `ObjectAtom` VLArray). Nothing is
/// memoised.
///
/// ```
/// use sciio_pickle::{parse, to_protocol3, Value};
/// let v = Value::Tuple(vec![Value::Bytes(b"b".to_vec()), Value::Str("é".into()), Value::None]);
/// assert_eq!(parse(&to_protocol3(&v)?)?, v);
/// # Ok::<(), sciio_core::Error>(())
/// ```
pub fn to_protocol3(value: &Value) -> Result<Vec<u8>> {
    let mut out = vec![0x80, 3];
    binary(value, &mut out)?;
    out.push(b'.');
    Ok(out)
}

/// Appends `value` to `out` as [`to_protocol3`] writes it inside a pickle (no protocol
/// header, no STOP): the items of a list too large to hold as values, written as they come
/// between the list's opening and the rest of the pickle.
///
/// ```
/// use sciio_pickle::{parse, to_protocol3, write_protocol3_item, Value};
/// let whole = to_protocol3(&Value::List(vec![Value::Str("a".into()), Value::None]))?;
/// let empty = to_protocol3(&Value::List(Vec::new()))?;
/// // `](` opens the list, `e` appends the items, `.` stops.
/// let (head, tail) = empty.split_at(empty.len() - 2);
/// let mut pieces = head.to_vec();
/// write_protocol3_item(&Value::Str("a".into()), &mut pieces)?;
/// write_protocol3_item(&Value::None, &mut pieces)?;
/// pieces.extend_from_slice(tail);
/// assert_eq!(pieces, whole);
/// # Ok::<(), sciio_core::Error>(())
/// ```
pub fn write_protocol3_item(value: &Value, out: &mut Vec<u8>) -> Result<()> {
    binary(value, out)
}

fn binary(v: &Value, out: &mut Vec<u8>) -> Result<()> {
    let len32 = |n: usize| {
        u32::try_from(n)
            .map(u32::to_le_bytes)
            .map_err(|_| Error::unsupported("a pickled item of 4 GiB or more"))
    };
    match v {
        Value::None => out.push(b'N'),
        Value::Bool(true) => out.push(0x88),
        Value::Bool(false) => out.push(0x89),
        Value::Int(i) => match i32::try_from(*i) {
            Ok(small) => {
                out.push(b'J');
                out.extend_from_slice(&small.to_le_bytes());
            }
            Err(_) => {
                // LONG1: 8 two's-complement bytes.
                out.extend_from_slice(&[0x8a, 8]);
                out.extend_from_slice(&i.to_le_bytes());
            }
        },
        Value::Float(f) => {
            out.push(b'G');
            out.extend_from_slice(&f.to_be_bytes());
        }
        Value::Str(s) => {
            out.push(b'X');
            out.extend_from_slice(&len32(s.len())?);
            out.extend_from_slice(s.as_bytes());
        }
        Value::Bytes(b) => {
            out.push(b'B');
            out.extend_from_slice(&len32(b.len())?);
            out.extend_from_slice(b);
        }
        Value::List(items) => {
            out.extend_from_slice(b"](");
            for item in items {
                binary(item, out)?;
            }
            out.push(b'e');
        }
        Value::Tuple(items) => {
            out.push(b'(');
            for item in items {
                binary(item, out)?;
            }
            out.push(b't');
        }
        Value::Dict(items) => {
            out.extend_from_slice(b"}(");
            for (k, v) in items {
                binary(k, out)?;
                binary(v, out)?;
            }
            out.push(b'u');
        }
        Value::Global { module, name } => {
            let plain = |s: &str| !s.is_empty() && !s.contains(['\n', '\r']);
            if !plain(module) || !plain(name) {
                return Err(Error::invalid_input(format!(
                    "cannot pickle the global {module:?}.{name:?}"
                )));
            }
            out.extend_from_slice(format!("c{module}\n{name}\n").as_bytes());
        }
        Value::Reduce { callable, args } => {
            binary(callable, out)?;
            binary(args, out)?;
            out.push(b'R');
        }
        Value::Build { object, state } => {
            binary(object, out)?;
            binary(state, out)?;
            out.push(b'b');
        }
        other => {
            return Err(Error::unsupported(format!(
                "the pickle writer does not write {other:?}"
            )))
        }
    }
    Ok(())
}

struct Writer {
    out: Vec<u8>,
    memo: u32,
}

impl Writer {
    fn put(&mut self) {
        self.out
            .extend_from_slice(format!("p{}\n", self.memo).as_bytes());
        self.memo += 1;
    }

    fn value(&mut self, v: &Value) -> Result<()> {
        match v {
            Value::None => self.out.push(b'N'),
            Value::Bool(b) => self
                .out
                .extend_from_slice(if *b { b"I01\n" } else { b"I00\n" }),
            Value::Int(i) => {
                let text = if i32::try_from(*i).is_ok() {
                    format!("I{i}\n")
                } else {
                    format!("L{i}L\n")
                };
                self.out.extend_from_slice(text.as_bytes());
            }
            Value::Float(f) => {
                self.out
                    .extend_from_slice(format!("F{}\n", py_float_repr(*f)).as_bytes());
            }
            Value::Str(s) => {
                self.out.push(b'V');
                self.out.extend_from_slice(&raw_unicode_escape(s));
                self.out.push(b'\n');
                self.put();
            }
            Value::List(items) => {
                self.out.extend_from_slice(b"(l");
                self.put();
                for item in items {
                    self.value(item)?;
                    self.out.push(b'a');
                }
            }
            Value::Tuple(items) => {
                self.out.push(b'(');
                for item in items {
                    self.value(item)?;
                }
                self.out.push(b't');
                self.put();
            }
            Value::Dict(items) => {
                self.out.extend_from_slice(b"(d");
                self.put();
                for (k, v) in items {
                    self.value(k)?;
                    self.value(v)?;
                    self.out.push(b's');
                }
            }
            Value::Global { module, name } => {
                let plain = |s: &str| !s.is_empty() && !s.contains(['\n', '\r']);
                if !plain(module) || !plain(name) {
                    return Err(Error::invalid_input(format!(
                        "cannot pickle the global {module:?}.{name:?}"
                    )));
                }
                self.out
                    .extend_from_slice(format!("c{module}\n{name}\n").as_bytes());
                self.put();
            }
            Value::Reduce { callable, args } => {
                self.value(callable)?;
                self.value(args)?;
                self.out.push(b'R');
                self.put();
            }
            other => {
                return Err(Error::unsupported(format!(
                    "the pickle writer does not write {other:?}"
                )))
            }
        }
        Ok(())
    }
}

/// `repr(float)`: the shortest text that reads back, with `inf`/`nan` as Python spells them.
fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{f:?}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// Python's `raw-unicode-escape` as the protocol-0 pickler applies it: `\`, NUL, `\n`, `\r`
/// and `\x1a` as `\uXXXX`; other code points below 256 as one byte; the rest as `\uXXXX` /
/// `\UXXXXXXXX`.
fn raw_unicode_escape(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        let cp = c as u32;
        if cp >= 0x10000 {
            out.extend_from_slice(format!("\\U{cp:08x}").as_bytes());
        } else if cp >= 256 || matches!(cp, 0x5c | 0 | 0x0a | 0x0d | 0x1a) {
            out.extend_from_slice(format!("\\u{cp:04x}").as_bytes());
        } else {
            out.push(cp as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    #[test]
    fn writes_what_it_reads() {
        let v = Value::Dict(vec![
            (
                Value::Int(1),
                Value::Dict(vec![
                    (Value::Str("names".into()), Value::List(vec![Value::None])),
                    (Value::Str("type".into()), Value::Str("Index".into())),
                ]),
            ),
            (
                Value::Str("é\\\n€𝄞".into()),
                Value::List(vec![
                    Value::Bool(true),
                    Value::Float(0.5),
                    Value::Int(1 << 40),
                ]),
            ),
        ]);
        let bytes = to_protocol0(&v).unwrap();
        assert_eq!(parse(&bytes).unwrap(), v);
        assert_eq!(to_protocol0(&Value::None).unwrap(), b"N.");
        assert_eq!(
            to_protocol0(&Value::List(vec![])).unwrap(),
            b"(lp0\n.".to_vec()
        );
    }
}
