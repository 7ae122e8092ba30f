//! A small parser and printer for the Python literals numpy stores in file headers.
//!
//! The NPY header is `repr()` of a dict and numpy reads it back with `ast.literal_eval`. No Rust
//! crate parses Python literals (and the input is untrusted), so this module hand-writes the tiny
//! subset that appears there: dicts, lists, tuples, strings, integers, `True`/`False`/`None`.
//! Nesting depth and item counts are bounded. [`PyLiteral::repr`] prints exactly what Python's
//! `repr()` prints, so headers written by sciio are byte-identical to numpy's.

use crate::error::{Error, Result};

mod unprintable;

/// A Python literal value: the subset of `ast.literal_eval` that file headers use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PyLiteral {
    /// `None`.
    None,
    /// `True` or `False`.
    Bool(bool),
    /// An integer (Python 2's `3L` suffix is accepted on input).
    Int(i128),
    /// A `str` (Python 2's `u'...'` prefix is accepted on input).
    Str(String),
    /// A tuple, `()`, `(x,)`, `(x, y)`.
    Tuple(Vec<PyLiteral>),
    /// A list, `[x, y]`.
    List(Vec<PyLiteral>),
    /// A dict with its items in source order (duplicate keys are rejected by the parser).
    Dict(Vec<(PyLiteral, PyLiteral)>),
}

/// Bounds for [`PyLiteral::parse_with`] on untrusted text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiteralLimits {
    /// Deepest nesting of containers accepted. Default: 64.
    pub max_depth: usize,
    /// Most items in all containers together. Default: 1,000,000.
    pub max_items: usize,
}

impl Default for LiteralLimits {
    fn default() -> Self {
        LiteralLimits {
            max_depth: 64,
            max_items: 1_000_000,
        }
    }
}

impl PyLiteral {
    /// Parses one Python literal (surrounding whitespace allowed) with default limits.
    ///
    /// ```
    /// use sciio_core::PyLiteral;
    /// let lit = PyLiteral::parse("{'descr': '<f8', 'fortran_order': False, 'shape': (3L,), }").unwrap();
    /// assert_eq!(lit.get("shape"), Some(&PyLiteral::Tuple(vec![PyLiteral::Int(3)])));
    /// ```
    pub fn parse(text: &str) -> Result<PyLiteral> {
        Self::parse_with(text, LiteralLimits::default())
    }

    /// Parses one Python literal with explicit limits. Errors carry the byte offset in `text`.
    pub fn parse_with(text: &str, limits: LiteralLimits) -> Result<PyLiteral> {
        let mut parser = Parser {
            text: text.as_bytes(),
            src: text,
            pos: 0,
            depth: 0,
            items: 0,
            limits,
        };
        parser.skip_ws();
        let value = parser.value()?;
        parser.skip_ws();
        if parser.pos != parser.text.len() {
            return Err(parser.error("unexpected text after the literal"));
        }
        Ok(value)
    }

    /// Python's `repr()` of this value.
    ///
    /// ```
    /// use sciio_core::PyLiteral;
    /// let t = PyLiteral::Tuple(vec![PyLiteral::Int(3)]);
    /// assert_eq!(t.repr(), "(3,)");
    /// assert_eq!(PyLiteral::Str("it's".into()).repr(), "\"it's\"");
    /// ```
    pub fn repr(&self) -> String {
        let mut out = String::new();
        self.write_repr(&mut out);
        out
    }

    /// Appends Python's `repr()` of this value to `out`.
    pub fn write_repr(&self, out: &mut String) {
        match self {
            PyLiteral::None => out.push_str("None"),
            PyLiteral::Bool(true) => out.push_str("True"),
            PyLiteral::Bool(false) => out.push_str("False"),
            PyLiteral::Int(i) => out.push_str(&i.to_string()),
            PyLiteral::Str(s) => write_str_repr(s, out),
            PyLiteral::Tuple(items) => {
                out.push('(');
                write_items(items, out);
                if items.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            PyLiteral::List(items) => {
                out.push('[');
                write_items(items, out);
                out.push(']');
            }
            PyLiteral::Dict(items) => {
                out.push('{');
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.write_repr(out);
                    out.push_str(": ");
                    v.write_repr(out);
                }
                out.push('}');
            }
        }
    }

    /// For a dict, the value of the string key `key`.
    pub fn get(&self, key: &str) -> Option<&PyLiteral> {
        match self {
            PyLiteral::Dict(items) => items
                .iter()
                .find(|(k, _)| matches!(k, PyLiteral::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The Python type name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            PyLiteral::None => "NoneType",
            PyLiteral::Bool(_) => "bool",
            PyLiteral::Int(_) => "int",
            PyLiteral::Str(_) => "str",
            PyLiteral::Tuple(_) => "tuple",
            PyLiteral::List(_) => "list",
            PyLiteral::Dict(_) => "dict",
        }
    }

    /// The string, if this is a `str`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            PyLiteral::Str(s) => Some(s),
            _ => None,
        }
    }
}

fn write_items(items: &[PyLiteral], out: &mut String) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        item.write_repr(out);
    }
}

/// Python's `repr(str)`: single quotes unless the text holds `'` and no `"`; escapes for the
/// backslash, the quote, `\t \n \r`, and `\x`/`\u`/`\U` for characters Python deems unprintable.
pub fn write_str_repr(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c => {
                let code = c as u32;
                let escaped = if code < 0x100 {
                    format!("\\x{code:02x}")
                } else if code < 0x10000 {
                    format!("\\u{code:04x}")
                } else {
                    format!("\\U{code:08x}")
                };
                out.push_str(&escaped);
            }
        }
    }
    out.push(quote);
}

/// Python's `str.isprintable()` for one character, which decides what `repr()` escapes
/// (exact for the Unicode version of the Python that generated the table, see
/// `pyliteral/unprintable.rs`).
///
/// ```
/// use sciio_core::pyliteral::is_printable;
/// assert!(is_printable('a') && is_printable('\u{e9}') && is_printable(' '));
/// assert!(!is_printable('\n') && !is_printable('\u{a0}') && !is_printable('\u{2028}'));
/// ```
pub fn is_printable(c: char) -> bool {
    let u = u32::from(c);
    unprintable::UNPRINTABLE
        .binary_search_by(|&(lo, hi)| {
            if hi < u {
                std::cmp::Ordering::Less
            } else if lo > u {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_err()
}

struct Parser<'a> {
    text: &'a [u8],
    src: &'a str,
    pos: usize,
    depth: usize,
    items: usize,
    limits: LiteralLimits,
}

impl Parser<'_> {
    fn error(&self, why: &str) -> Error {
        Error::format(format!(
            "Python literal: {why} (at character offset {})",
            self.pos
        ))
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'\x0b') = self.peek() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<PyLiteral> {
        match self.peek() {
            None => Err(self.error("unexpected end of text, expected a value")),
            Some(b'{') => self.container(b'}', Kind::Dict),
            Some(b'[') => self.container(b']', Kind::List),
            Some(b'(') => self.container(b')', Kind::Tuple),
            Some(b'\'' | b'"') => self.string().map(PyLiteral::Str),
            Some(b'u' | b'U') if matches!(self.text.get(self.pos + 1), Some(b'\'' | b'"')) => {
                self.pos += 1;
                self.string().map(PyLiteral::Str)
            }
            Some(b'-' | b'+' | b'0'..=b'9') => self.int(),
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => self.name(),
            Some(_) => Err(self.error("unexpected character, expected a value")),
        }
    }

    fn name(&mut self) -> Result<PyLiteral> {
        let start = self.pos;
        while let Some(b) = self.peek() {
            if b.is_ascii_alphanumeric() || b == b'_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        match &self.src[start..self.pos] {
            "True" => Ok(PyLiteral::Bool(true)),
            "False" => Ok(PyLiteral::Bool(false)),
            "None" => Ok(PyLiteral::None),
            other => {
                self.pos = start;
                Err(self.error(&format!(
                    "name {other:?} is not a literal (only True, False and None are)"
                )))
            }
        }
    }

    fn int(&mut self) -> Result<PyLiteral> {
        let start = self.pos;
        let negative = if self.eat(b'-') {
            true
        } else {
            self.eat(b'+');
            false
        };
        self.skip_ws();
        let digits_start = self.pos;
        let mut value: i128 = 0;
        let mut last_underscore = false;
        while let Some(b) = self.peek() {
            match b {
                b'0'..=b'9' => {
                    value = value
                        .checked_mul(10)
                        .and_then(|v| v.checked_add(i128::from(b - b'0')))
                        .ok_or_else(|| self.error("integer too large"))?;
                    last_underscore = false;
                }
                b'_' if self.pos > digits_start && !last_underscore => last_underscore = true,
                _ => break,
            }
            self.pos += 1;
        }
        let digits = &self.src[digits_start..self.pos];
        if digits.is_empty() || last_underscore {
            self.pos = start;
            return Err(self.error("malformed integer"));
        }
        if digits.len() > 1 && digits.starts_with('0') && value != 0 {
            self.pos = start;
            return Err(self.error("integer with leading zeros"));
        }
        // Python 2 wrote long integers with an `L` suffix.
        if !self.eat(b'L') {
            self.eat(b'l');
        }
        match self.peek() {
            Some(b'.' | b'e' | b'E' | b'j' | b'J' | b'x' | b'X' | b'o' | b'b') => {
                Err(self.error("only decimal integers are accepted here"))
            }
            Some(b) if b.is_ascii_alphanumeric() => Err(self.error("malformed integer")),
            _ => Ok(PyLiteral::Int(if negative { -value } else { value })),
        }
    }

    fn string(&mut self) -> Result<String> {
        let quote = self.peek().ok_or_else(|| self.error("expected a string"))?;
        let start = self.pos;
        self.pos += 1;
        if self.text.get(self.pos) == Some(&quote) && self.text.get(self.pos + 1) == Some(&quote) {
            return Err(self.error("triple-quoted strings are not accepted"));
        }
        let mut out = String::new();
        loop {
            let rest = &self.src[self.pos..];
            let Some(c) = rest.chars().next() else {
                self.pos = start;
                return Err(self.error("unterminated string"));
            };
            self.pos += c.len_utf8();
            match c {
                '\n' | '\r' => {
                    self.pos = start;
                    return Err(self.error("unterminated string (line break inside)"));
                }
                c if c as u32 == u32::from(quote) => return Ok(out),
                '\\' => self.escape(&mut out)?,
                c => out.push(c),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<()> {
        let Some(b) = self.peek() else {
            return Err(self.error("unterminated string"));
        };
        self.pos += 1;
        let simple = match b {
            b'\\' => Some('\\'),
            b'\'' => Some('\''),
            b'"' => Some('"'),
            b'n' => Some('\n'),
            b'r' => Some('\r'),
            b't' => Some('\t'),
            b'a' => Some('\x07'),
            b'b' => Some('\x08'),
            b'f' => Some('\x0c'),
            b'v' => Some('\x0b'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            return Ok(());
        }
        match b {
            b'\n' => Ok(()),
            b'0'..=b'7' => {
                let mut code = u32::from(b - b'0');
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ b'0'..=b'7') => {
                            code = code * 8 + u32::from(d - b'0');
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                self.push_code(code, out)
            }
            b'x' => self.hex_escape(2, out),
            b'u' => self.hex_escape(4, out),
            b'U' => self.hex_escape(8, out),
            b'N' => Err(self.error("named \\N{...} escapes are not accepted")),
            _ => {
                // Python keeps unknown escapes as they are, backslash included.
                out.push('\\');
                self.pos -= 1;
                Ok(())
            }
        }
    }

    fn hex_escape(&mut self, len: usize, out: &mut String) -> Result<()> {
        let digits = self
            .src
            .get(self.pos..self.pos + len)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.error("truncated \\x, \\u or \\U escape"))?;
        let code =
            u32::from_str_radix(digits, 16).map_err(|_| self.error("malformed hex escape"))?;
        self.pos += len;
        self.push_code(code, out)
    }

    fn push_code(&self, code: u32, out: &mut String) -> Result<()> {
        let c = char::from_u32(code).ok_or_else(|| {
            self.error(&format!(
                "escape \\U{code:08x} is not a Unicode scalar value"
            ))
        })?;
        out.push(c);
        Ok(())
    }

    fn container(&mut self, close: u8, kind: Kind) -> Result<PyLiteral> {
        self.depth += 1;
        if self.depth > self.limits.max_depth {
            return Err(self.error(&format!(
                "nested deeper than {} levels",
                self.limits.max_depth
            )));
        }
        self.pos += 1; // the opening bracket
        let mut items = Vec::new();
        let mut pairs = Vec::new();
        let mut trailing_comma = false;
        loop {
            self.skip_ws();
            if self.eat(close) {
                break;
            }
            if (!items.is_empty() || !pairs.is_empty()) && !trailing_comma {
                return Err(self.error("expected ',' or a closing bracket"));
            }
            self.items += 1;
            if self.items > self.limits.max_items {
                return Err(self.error(&format!(
                    "more than {} items in containers",
                    self.limits.max_items
                )));
            }
            let value = self.value()?;
            self.skip_ws();
            if kind == Kind::Dict {
                if !self.eat(b':') {
                    return Err(self.error("expected ':' after a dict key"));
                }
                self.skip_ws();
                let v = self.value()?;
                if !matches!(
                    value,
                    PyLiteral::Str(_) | PyLiteral::Int(_) | PyLiteral::Bool(_)
                ) {
                    return Err(self.error("dict keys must be strings or numbers"));
                }
                if pairs.iter().any(|(k, _)| k == &value) {
                    return Err(self.error(&format!("duplicate dict key {}", value.repr())));
                }
                pairs.push((value, v));
                self.skip_ws();
            } else {
                items.push(value);
            }
            trailing_comma = self.eat(b',');
        }
        self.depth -= 1;
        Ok(match kind {
            Kind::Dict => PyLiteral::Dict(pairs),
            Kind::List => PyLiteral::List(items),
            // `(x)` is just a parenthesised x; a tuple needs a comma.
            Kind::Tuple if items.len() == 1 && !trailing_comma => {
                items.pop().unwrap_or(PyLiteral::None) // ok: len is 1
            }
            Kind::Tuple => PyLiteral::Tuple(items),
        })
    }
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Kind {
    Dict,
    List,
    Tuple,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_numpy_headers() {
        let h = "{'descr': [('a', '<f8'), (('t', 'b'), '|u1', (2, 3))], 'fortran_order': True, 'shape': (), }   ";
        let lit = PyLiteral::parse(h).unwrap();
        assert_eq!(lit.get("fortran_order"), Some(&PyLiteral::Bool(true)));
        assert_eq!(lit.get("shape"), Some(&PyLiteral::Tuple(vec![])));
        assert_eq!(
            lit.repr(),
            "{'descr': [('a', '<f8'), (('t', 'b'), '|u1', (2, 3))], 'fortran_order': True, 'shape': ()}"
        );
    }

    #[test]
    fn python2_forms() {
        let lit = PyLiteral::parse("{u'shape': (3L, 4L), \"descr\": u'<f8'}").unwrap();
        assert_eq!(
            lit.get("shape"),
            Some(&PyLiteral::Tuple(vec![
                PyLiteral::Int(3),
                PyLiteral::Int(4)
            ]))
        );
        assert_eq!((PyLiteral::parse("(5)").unwrap()), PyLiteral::Int(5));
    }

    #[test]
    fn rejects_non_literals() {
        for bad in [
            "{'a': 1",
            "__import__('os')",
            "{'a': 1,, }",
            "(1 2)",
            "'abc",
            "1.5",
            "0x10",
            "{[1]: 2}",
            "{'a': 1, 'a': 2}",
            "007",
            "'\\N{DASH}'",
            "",
            "[[[[",
        ] {
            assert!(PyLiteral::parse(bad).is_err(), "{bad}");
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(PyLiteral::parse(&deep).is_err());
    }

    #[test]
    fn string_escapes_round_trip() {
        for s in [
            "plain",
            "it's",
            "say \"hi\"",
            "both ' and \"",
            "tab\there\n",
            "\u{e9}\u{263a}",
            "\x00\x7f\u{a0}\u{ad}\u{2028}",
        ] {
            let r = PyLiteral::Str(s.to_string()).repr();
            assert_eq!(
                PyLiteral::parse(&r).unwrap(),
                PyLiteral::Str(s.to_string()),
                "{r}"
            );
        }
        assert_eq!(
            PyLiteral::Str("\u{a0}\u{ad}\u{100}\u{2028}\u{e9}".into()).repr(),
            "'\\xa0\\xad\u{100}\\u2028\u{e9}'"
        );
    }
}
