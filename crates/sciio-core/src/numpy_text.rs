//! numpy's text for arrays: what `print(np.load(f))` shows (numpy's `str(array)`, numpy 2
//! defaults: precision 8, `floatmode='maxprec'`, line width 75, arrays of more than 1000 elements
//! summarised with `...` keeping 3 items at each end of every axis).
//!
//! Written by hand because no Rust crate reproduces numpy's layout: it follows
//! `numpy/_core/arrayprint.py` (`_formatArray`, `FloatingFormat`, `IntegerFormat`, `BoolFormat`,
//! `ComplexFloatingFormat`, `StructuredVoidFormat`, `DatetimeFormat`). Known difference: long
//! doubles are shown at `f64` precision.

use crate::calendar::civil_from_days;
use crate::{DType, NdArray, Result, ScalarKind, TimeBase, TimeUnit, Value};

impl NdArray {
    /// numpy's `str(array)`: what `print(array)` shows ([`array_str`]).
    ///
    /// ```
    /// let a = sciio_core::NdArray::from_vec(vec![1.5f64, -2.0, 3.25], &[3])?;
    /// assert_eq!(a.to_numpy_string()?, "[ 1.5  -2.    3.25]");
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn to_numpy_string(&self) -> Result<String> {
        array_str(self)
    }
}

const LINE_WIDTH: usize = 75;
const THRESHOLD: usize = 1000;
const EDGE_ITEMS: usize = 3;
const PRECISION: usize = 8;

/// numpy's `str(array)` for `array`.
pub fn array_str(array: &NdArray) -> Result<String> {
    let shape = array.shape().to_vec();
    if shape.is_empty() {
        let value = array.get(&[])?;
        return Ok(scalar_str(array.dtype(), &value));
    }
    if shape.contains(&0) {
        return Ok("[]".to_string());
    }
    let summarise = array.len() > THRESHOLD;
    let axes: Vec<Vec<usize>> = shape.iter().map(|&n| shown_indices(n, summarise)).collect();
    // Formatting widths are computed over the shown elements only, as numpy does.
    let mut shown = Vec::new();
    let mut index = vec![0; shape.len()];
    collect_shown(array, &axes, &mut index, 0, &mut shown)?;
    let format = ElemFormat::new(array.dtype(), &shown);
    let mut texts = shown.iter().map(|v| format.apply(v));
    let layout = Layout {
        shape: &shape,
        summarise,
        sep: " ",
    };
    Ok(layout.render(&mut texts, " ", LINE_WIDTH))
}

/// numpy's `repr(array)` for a 1-d or n-d array (`array([1, 2], dtype=int32)`; the dtype is
/// left out for bool, int64, float64 and complex128 when the array is not empty, as numpy
/// does). Rows that fit on one line match numpy exactly; long rows wrap at numpy's width.
pub fn array_repr(array: &NdArray) -> Result<String> {
    let shape = array.shape().to_vec();
    let dtype = dtype_repr(array.dtype());
    if shape.is_empty() {
        let value = array.get(&[])?;
        let text = scalar_str(array.dtype(), &value);
        return Ok(match dtype {
            Some(d) => format!("array({text}, dtype={d})"),
            None => format!("array({text})"),
        });
    }
    let body = if shape.contains(&0) {
        if shape.len() == 1 {
            "[]".to_string()
        } else {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("[], shape=({})", dims.join(", "))
        }
    } else {
        let summarise = array.len() > THRESHOLD;
        let axes: Vec<Vec<usize>> = shape.iter().map(|&n| shown_indices(n, summarise)).collect();
        let mut shown = Vec::new();
        let mut index = vec![0; shape.len()];
        collect_shown(array, &axes, &mut index, 0, &mut shown)?;
        let format = ElemFormat::new(array.dtype(), &shown);
        let mut texts = shown.iter().map(|v| format.apply(v));
        let layout = Layout {
            shape: &shape,
            summarise,
            sep: ", ",
        };
        // "array(" shifts every continuation line; the suffix shortens the line.
        layout.render(&mut texts, "       ", LINE_WIDTH - 1)
    };
    let text = format!("array({body}");
    let dtype = match dtype {
        None if !array.is_empty() => return Ok(text + ")"),
        None => dtype_name(array.dtype()).unwrap_or_default(),
        Some(d) => d,
    };
    let last = text.len() - text.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let dtype = format!("dtype={dtype})");
    let spacer = if last + dtype.len() + 2 > LINE_WIDTH {
        "\n      ".to_string()
    } else {
        " ".to_string()
    };
    Ok(format!("{text},{spacer}{dtype}"))
}

/// numpy's name for a native numeric dtype (`int32`, `float128`...), `None` otherwise.
fn dtype_name(dtype: &DType) -> Option<String> {
    let s = dtype.as_scalar()?;
    let native = matches!(
        s.order,
        crate::ByteOrder::Little | crate::ByteOrder::NotApplicable
    );
    if !native {
        return None;
    }
    Some(match s.kind {
        ScalarKind::Bool => "bool".to_string(),
        ScalarKind::Int(n) => format!("int{}", u32::from(n) * 8),
        ScalarKind::UInt(n) => format!("uint{}", u32::from(n) * 8),
        ScalarKind::Float(n) => format!("float{}", u32::from(n) * 8),
        ScalarKind::Complex(n) => format!("complex{}", u32::from(n) * 8),
        _ => return None,
    })
}

/// The `dtype=` part of numpy's repr: `None` when numpy implies it (bool, int64, float64,
/// complex128), a name for other numbers, the quoted descr otherwise.
fn dtype_repr(dtype: &DType) -> Option<String> {
    match dtype_name(dtype) {
        Some(n) if matches!(n.as_str(), "bool" | "int64" | "float64" | "complex128") => None,
        Some(n) => Some(n),
        None => Some(format!("'{dtype}'")),
    }
}

/// Python's `repr` of a list of arrays (what `print(vlarray.read())` shows): numeric rows as
/// `array(...)`, 0-d string rows as their Python value (`b'abc'`, `'text'`).
pub fn rows_repr(rows: &[NdArray]) -> Result<String> {
    let parts = rows
        .iter()
        .map(|row| {
            if row.shape().is_empty() {
                if let Some(ScalarKind::Bytes(_) | ScalarKind::Unicode(_)) =
                    row.dtype().as_scalar().map(|s| s.kind)
                {
                    return Ok(repr(&row.get(&[])?));
                }
            }
            array_repr(row)
        })
        .collect::<Result<Vec<String>>>()?;
    Ok(format!("[{}]", parts.join(", ")))
}

fn shown_indices(n: usize, summarise: bool) -> Vec<usize> {
    if summarise && n > 2 * EDGE_ITEMS {
        (0..EDGE_ITEMS).chain(n - EDGE_ITEMS..n).collect()
    } else {
        (0..n).collect()
    }
}

fn collect_shown(
    array: &NdArray,
    axes: &[Vec<usize>],
    index: &mut Vec<usize>,
    axis: usize,
    out: &mut Vec<Value>,
) -> Result<()> {
    if axis == axes.len() {
        out.push(array.get(index)?);
        return Ok(());
    }
    for &i in &axes[axis] {
        index[axis] = i;
        collect_shown(array, axes, index, axis + 1, out)?;
    }
    Ok(())
}

/// numpy's `_formatArray` with separator `' '` and no prefix (what `str()` uses).
struct Layout<'a> {
    shape: &'a [usize],
    summarise: bool,
    /// Between elements: `" "` for `str()`, `", "` for `repr()`.
    sep: &'a str,
}

impl Layout<'_> {
    fn render(
        &self,
        texts: &mut dyn Iterator<Item = String>,
        hanging: &str,
        width: usize,
    ) -> String {
        self.recurse(texts, 0, hanging, width)
    }

    fn recurse(
        &self,
        texts: &mut dyn Iterator<Item = String>,
        axis: usize,
        hanging: &str,
        width: usize,
    ) -> String {
        let n = self.shape[axis];
        let summary = self.summarise && n > 2 * EDGE_ITEMS;
        let (leading, trailing) = if summary {
            (EDGE_ITEMS, EDGE_ITEMS)
        } else {
            (0, n)
        };
        let next_hanging = format!("{hanging} ");
        let next_width = width.saturating_sub(1);
        let axes_left = self.shape.len() - axis;
        let mut s = String::new();
        if axes_left == 1 {
            let elem_width = width.saturating_sub(1);
            let mut line = hanging.to_string();
            let word = |texts: &mut dyn Iterator<Item = String>| texts.next().unwrap_or_default();
            for _ in 0..leading {
                let w = word(texts);
                extend_line(&mut s, &mut line, &w, elem_width, hanging);
                line.push_str(self.sep);
            }
            if summary {
                extend_line(&mut s, &mut line, "...", elem_width, hanging);
                line.push_str(self.sep);
            }
            for _ in 1..trailing {
                let w = word(texts);
                extend_line(&mut s, &mut line, &w, elem_width, hanging);
                line.push_str(self.sep);
            }
            let w = word(texts);
            extend_line(&mut s, &mut line, &w, elem_width, hanging);
            s.push_str(&line);
        } else {
            let line_sep = self.sep.trim_end().to_string() + &"\n".repeat(axes_left - 1);
            for _ in 0..leading {
                let nested = self.recurse(texts, axis + 1, &next_hanging, next_width);
                s.push_str(hanging);
                s.push_str(&nested);
                s.push_str(&line_sep);
            }
            if summary {
                s.push_str(hanging);
                s.push_str("...");
                s.push_str(&line_sep);
            }
            for _ in 1..trailing {
                let nested = self.recurse(texts, axis + 1, &next_hanging, next_width);
                s.push_str(hanging);
                s.push_str(&nested);
                s.push_str(&line_sep);
            }
            let nested = self.recurse(texts, axis + 1, &next_hanging, next_width);
            s.push_str(hanging);
            s.push_str(&nested);
        }
        format!("[{}]", &s[hanging.len()..])
    }
}

/// numpy's `_extendLine`: wraps before `word` when the line would get too long, unless the
/// line holds nothing but the indent (wrapping would not help).
fn extend_line(s: &mut String, line: &mut String, word: &str, width: usize, hanging: &str) {
    let needs_wrap = line.chars().count() + word.chars().count() > width
        && line.chars().count() > hanging.chars().count();
    if needs_wrap {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = hanging.to_string();
    }
    line.push_str(word);
}

/// How the elements of one array (or one record field) are turned into aligned text.
enum ElemFormat {
    Bool,
    Int {
        width: usize,
    },
    Timelike {
        width: usize,
    },
    Float(FloatFormat),
    Complex {
        real: FloatFormat,
        imag: FloatFormat,
    },
    Repr,
    Record(Vec<ElemFormat>),
    SubArray(Box<ElemFormat>),
}

impl ElemFormat {
    fn new(dtype: &DType, values: &[Value]) -> ElemFormat {
        match dtype {
            DType::Record(record) => ElemFormat::Record(
                record
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(i, field)| {
                        let column: Vec<Value> = values
                            .iter()
                            .filter_map(|v| match v {
                                Value::Record(fields) => fields.get(i).map(|(_, v)| v.clone()),
                                _ => None,
                            })
                            .collect();
                        ElemFormat::new(&field.dtype, &column)
                    })
                    .collect(),
            ),
            DType::SubArray(base, _) => {
                let items: Vec<Value> = values
                    .iter()
                    .flat_map(|v| match v {
                        Value::Array(_, items) => items.clone(),
                        other => vec![other.clone()],
                    })
                    .collect();
                ElemFormat::SubArray(Box::new(ElemFormat::new(base, &items)))
            }
            DType::Scalar(scalar) => match scalar.kind {
                ScalarKind::Bool => ElemFormat::Bool,
                ScalarKind::Int(_) | ScalarKind::UInt(_) => ElemFormat::Int {
                    width: values
                        .iter()
                        .map(|v| plain(v).chars().count())
                        .max()
                        .unwrap_or(0),
                },
                ScalarKind::DateTime(_) | ScalarKind::TimeDelta(_) => {
                    // numpy's `_TimelikeFormat`: right-aligned, `'NaT'` quoted, width >= 5
                    // when a NaT is present.
                    let has_nat = values.iter().any(is_nat);
                    let width = values
                        .iter()
                        .filter(|v| !is_nat(v))
                        .map(|v| timelike(v).chars().count())
                        .max()
                        .unwrap_or(0);
                    ElemFormat::Timelike {
                        width: if has_nat { width.max(5) } else { width },
                    }
                }
                ScalarKind::Float(size) => {
                    let xs: Vec<f64> = values.iter().filter_map(as_f64).collect();
                    ElemFormat::Float(FloatFormat::new(&xs, FloatWidth::of(size), false))
                }
                ScalarKind::Complex(size) => {
                    let (re, im): (Vec<f64>, Vec<f64>) =
                        values.iter().filter_map(as_complex).unzip();
                    let width = FloatWidth::of(size / 2);
                    ElemFormat::Complex {
                        real: FloatFormat::new(&re, width, false),
                        imag: FloatFormat::new(&im, width, true),
                    }
                }
                _ => ElemFormat::Repr,
            },
        }
    }

    fn apply(&self, value: &Value) -> String {
        match (self, value) {
            (ElemFormat::Bool, Value::Bool(true)) => " True".to_string(),
            (ElemFormat::Bool, Value::Bool(false)) => "False".to_string(),
            (ElemFormat::Int { width }, v) => format!("{:>width$}", plain(v)),
            (ElemFormat::Timelike { width }, v) if is_nat(v) => format!("{:>width$}", "'NaT'"),
            (ElemFormat::Timelike { width }, v) => format!("{:>width$}", timelike(v)),
            (ElemFormat::Float(f), v) => f.apply(as_f64(v).unwrap_or(f64::NAN)),
            (ElemFormat::Complex { real, imag }, v) => {
                let (re, im) = as_complex(v).unwrap_or((f64::NAN, f64::NAN));
                let r = real.apply(re);
                let i = imag.apply(im);
                // numpy puts the 'j' before the padding of the imaginary part.
                let end = i.trim_end().len();
                format!("{r}{}j{}", &i[..end], &i[end..])
            }
            (ElemFormat::Record(fields), Value::Record(values)) => {
                let parts: Vec<String> = fields
                    .iter()
                    .zip(values)
                    .map(|(f, (_, v))| f.apply(v))
                    .collect();
                if parts.len() == 1 {
                    format!("({},)", parts[0])
                } else {
                    format!("({})", parts.join(", "))
                }
            }
            (ElemFormat::SubArray(inner), Value::Array(shape, items)) => {
                let texts: Vec<String> = items.iter().map(|v| inner.apply(v)).collect();
                nest(shape, &texts)
            }
            (_, v) => repr(v),
        }
    }
}

/// numpy's `SubArrayFormat`: nested brackets with `, ` between items.
fn nest(shape: &[usize], texts: &[String]) -> String {
    match shape.split_first() {
        None => texts.first().cloned().unwrap_or_default(),
        Some((&n, rest)) => {
            let step = rest.iter().product::<usize>().max(1);
            let parts: Vec<String> = (0..n)
                .map(|i| nest(rest, texts.get(i * step..(i + 1) * step).unwrap_or(&[])))
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Float(x) => Some(*x),
        Value::LongDouble(x) => Some(x.to_f64()),
        _ => None,
    }
}

fn as_complex(v: &Value) -> Option<(f64, f64)> {
    match v {
        Value::Complex(c) => Some((c.re, c.im)),
        Value::LongComplex(re, im) => Some((re.to_f64(), im.to_f64())),
        _ => None,
    }
}

/// Integers, timedeltas and datetimes as plain numbers (`NaT` for the missing time).
fn plain(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::DateTime(i64::MIN, _) | Value::TimeDelta(i64::MIN, _) => "NaT".to_string(),
        Value::DateTime(t, _) | Value::TimeDelta(t, _) => t.to_string(),
        other => repr(other),
    }
}

/// Python's `repr` of strings and bytes, and a readable form of everything else.
pub fn repr(v: &Value) -> String {
    match v {
        Value::Str(s) => {
            let mut out = String::new();
            crate::pyliteral::write_str_repr(s, &mut out);
            out
        }
        Value::Bytes(b) => bytes_repr(b),
        Value::Void(b) => {
            // numpy shows void bytes all escaped: b'\x61\x62'.
            let hex: String = b.iter().map(|c| format!("\\x{c:02x}")).collect();
            format!("b'{hex}'")
        }
        Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Value::Int(_) | Value::UInt(_) | Value::DateTime(..) | Value::TimeDelta(..) => plain(v),
        Value::Float(x) => float_scalar_str(*x, FloatWidth::F64),
        Value::LongDouble(x) => float_scalar_str(x.to_f64(), FloatWidth::F64),
        Value::Complex(_) | Value::LongComplex(..) => {
            let (re, im) = as_complex(v).unwrap_or((f64::NAN, f64::NAN));
            complex_scalar_str(re, im, FloatWidth::F64)
        }
        Value::Record(fields) => {
            let parts: Vec<String> = fields.iter().map(|(_, v)| repr(v)).collect();
            if parts.len() == 1 {
                format!("({},)", parts[0])
            } else {
                format!("({})", parts.join(", "))
            }
        }
        Value::Array(shape, items) => {
            let texts: Vec<String> = items.iter().map(repr).collect();
            nest(shape, &texts)
        }
    }
}

/// numpy's `str()` of a 0-d array: the scalar's `str`.
fn scalar_str(dtype: &DType, v: &Value) -> String {
    match (dtype.as_scalar().map(|s| s.kind), v) {
        (Some(ScalarKind::Float(size)), Value::Float(x)) => {
            float_scalar_str(*x, FloatWidth::of(size))
        }
        (Some(ScalarKind::Complex(size)), Value::Complex(c)) => {
            complex_scalar_str(c.re, c.im, FloatWidth::of(size / 2))
        }
        (_, Value::Str(s)) => s.clone(),
        (_, Value::Record(_)) => ElemFormat::new(dtype, std::slice::from_ref(v)).apply(v),
        _ => repr(v),
    }
}

fn bytes_repr(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    let mut out = String::with_capacity(b.len() + 3);
    out.push('b');
    out.push(quote as char);
    for &c in b {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c as char);
            }
            0x20..=0x7e => out.push(c as char),
            c => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push(quote as char);
    out
}

/// The storage width of a float, which decides its shortest round-trip digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FloatWidth {
    F16,
    F32,
    F64,
}

impl FloatWidth {
    fn of(size: u8) -> FloatWidth {
        match size {
            2 => FloatWidth::F16,
            4 => FloatWidth::F32,
            _ => FloatWidth::F64,
        }
    }
}

/// A finite float's shortest round-trip decimal digits: value = `d.ddd × 10^exp`.
struct Digits {
    negative: bool,
    digits: String,
    exp: i32,
}

/// Splits Rust's `{:e}` output (`-1.25e-7`) into sign, digits and exponent.
fn parse_sci(text: &str) -> Digits {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exp) = body.split_once('e').unwrap_or((body, "0"));
    let mut digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    Digits {
        negative,
        digits,
        exp: exp.parse().unwrap_or(0),
    }
}

/// Shortest digits that read back as the same value at the float's own width (what numpy's
/// Dragon4 prints in `unique` mode).
fn shortest(x: f64, width: FloatWidth) -> Digits {
    match width {
        FloatWidth::F64 => parse_sci(&format!("{x:e}")),
        FloatWidth::F32 => parse_sci(&format!("{:e}", x as f32)),
        FloatWidth::F16 => {
            let target = crate::half::f16::from_f64(x);
            for precision in 0..5 {
                let text = format!("{x:.precision$e}");
                let back: f64 = text.parse().unwrap_or(f64::NAN);
                if crate::half::f16::from_f64(back) == target {
                    return parse_sci(&text);
                }
            }
            parse_sci(&format!("{x:e}"))
        }
    }
}

/// Positional text with unique digits, at most `precision` after the point, `.` kept
/// (Dragon4 with `trim='.'`): returns (integer part with sign, fraction digits).
fn positional(x: f64, width: FloatWidth, precision: usize, plus: bool) -> (String, String) {
    let d = shortest(x, width);
    let (mut int, mut frac) = if d.digits == "0" {
        ("0".to_string(), String::new())
    } else if d.exp >= 0 {
        let split = d.exp as usize + 1;
        if d.digits.len() > split {
            (d.digits[..split].to_string(), d.digits[split..].to_string())
        } else {
            let zeros = "0".repeat(split - d.digits.len());
            (format!("{}{zeros}", d.digits), String::new())
        }
    } else {
        let zeros = "0".repeat((-d.exp - 1) as usize);
        ("0".to_string(), format!("{zeros}{}", d.digits))
    };
    if frac.len() > precision {
        // Too many digits: round the exact value at `precision` places, then trim zeros.
        let text = format!("{:.precision$}", x.abs());
        let (i, f) = text.split_once('.').unwrap_or((&text, ""));
        int = i.to_string();
        frac = f.trim_end_matches('0').to_string();
    }
    let sign = sign_of(d.negative, plus);
    (format!("{sign}{int}"), frac)
}

/// Scientific text with unique digits, at most `precision` after the point: returns
/// (integer digit with sign, fraction digits, exponent).
fn scientific(x: f64, width: FloatWidth, precision: usize, plus: bool) -> (String, String, i32) {
    let mut d = shortest(x, width);
    if d.digits.len() > precision.saturating_add(1) {
        let negative = d.negative;
        d = parse_sci(&format!("{:.precision$e}", x.abs()));
        d.negative = negative;
    }
    let sign = sign_of(d.negative, plus);
    let (first, rest) = d.digits.split_at(1);
    (format!("{sign}{first}"), rest.to_string(), d.exp)
}

fn sign_of(negative: bool, plus: bool) -> &'static str {
    if negative {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    }
}

fn exp_text(exp: i32, digits: usize) -> String {
    let sign = if exp < 0 { '-' } else { '+' };
    format!("e{sign}{:0digits$}", exp.unsigned_abs())
}

/// numpy's `FloatingFormat` in `maxprec` mode: one layout (positional or scientific, padding)
/// chosen for the whole array so that columns align.
struct FloatFormat {
    width: FloatWidth,
    plus: bool,
    exp_format: bool,
    precision: usize,
    exp_size: usize,
    pad_left: usize,
    pad_right: usize,
}

impl FloatFormat {
    fn new(values: &[f64], width: FloatWidth, plus: bool) -> FloatFormat {
        let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let abs_nonzero: Vec<f64> = finite
            .iter()
            .filter(|x| **x != 0.0)
            .map(|x| x.abs())
            .collect();
        let mut exp_format = false;
        if !abs_nonzero.is_empty() {
            let max = abs_nonzero.iter().copied().fold(f64::MIN, f64::max);
            let min = abs_nonzero.iter().copied().fold(f64::MAX, f64::min);
            exp_format = max >= 1e8 || min < 0.0001 || max / min > 1000.0;
        }
        let mut f = FloatFormat {
            width,
            plus,
            exp_format,
            precision: PRECISION,
            exp_size: 0,
            pad_left: 0,
            pad_right: 0,
        };
        if finite.is_empty() {
            f.exp_format = false;
        } else if exp_format {
            let parts: Vec<_> = finite
                .iter()
                .map(|x| scientific(*x, width, PRECISION, plus))
                .collect();
            f.precision = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
            f.exp_size = parts
                .iter()
                .map(|p| p.2.unsigned_abs().to_string().len().max(2))
                .max()
                .unwrap_or(2);
            f.pad_left = parts.iter().map(|p| p.0.len()).max().unwrap_or(0);
            f.pad_right = f.exp_size + 2 + f.precision;
        } else {
            let parts: Vec<_> = finite
                .iter()
                .map(|x| positional(*x, width, PRECISION, plus))
                .collect();
            f.pad_left = parts.iter().map(|p| p.0.len()).max().unwrap_or(0);
            f.pad_right = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
        }
        if finite.len() != values.len() {
            let neg_inf = plus || values.iter().any(|x| x.is_infinite() && *x < 0.0);
            let offset = f.pad_right + 1;
            f.pad_left = f
                .pad_left
                .max(3usize.saturating_sub(offset))
                .max((3 + usize::from(neg_inf)).saturating_sub(offset));
        }
        f
    }

    fn apply(&self, x: f64) -> String {
        if !x.is_finite() {
            let text = if x.is_nan() {
                format!("{}nan", if self.plus { "+" } else { "" })
            } else {
                format!("{}inf", sign_of(x < 0.0, self.plus))
            };
            let width = self.pad_left + self.pad_right + 1;
            return format!("{text:>width$}");
        }
        if self.exp_format {
            let (int, mut frac, exp) = scientific(x, self.width, self.precision, self.plus);
            while frac.len() < self.precision {
                frac.push('0');
            }
            format!(
                "{int:>pad$}.{frac}{}",
                exp_text(exp, self.exp_size),
                pad = self.pad_left
            )
        } else {
            let (int, frac) = positional(x, self.width, self.precision, self.plus);
            format!(
                "{int:>left$}.{frac:<right$}",
                left = self.pad_left,
                right = self.pad_right
            )
        }
    }
}

/// numpy's `str()` of a float scalar: shortest digits, positional between 1e-4 and 1e16,
/// scientific outside (`1e+16`, `1.5e-05`), `.0` for whole numbers.
fn float_scalar_str(x: f64, width: FloatWidth) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let a = x.abs();
    if a == 0.0 || (1e-4..1e16).contains(&a) {
        let (int, frac) = positional(x, width, usize::MAX, false);
        let frac = if frac.is_empty() {
            "0".to_string()
        } else {
            frac
        };
        format!("{int}.{frac}")
    } else {
        let (int, frac, exp) = scientific(x, width, usize::MAX, false);
        let dot = if frac.is_empty() { "" } else { "." };
        format!("{int}{dot}{frac}{}", exp_text(exp, 2))
    }
}

/// Python's complex repr as numpy's scalar `str` prints it: `(1+2j)`, `(1.5-0.5j)`.
fn complex_scalar_str(re: f64, im: f64, width: FloatWidth) -> String {
    let part = |x: f64| {
        let s = float_scalar_str(x, width);
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    };
    let im_text = part(im);
    if re == 0.0 && re.is_sign_positive() {
        return format!("{im_text}j");
    }
    let sign = if im_text.starts_with('-') { "" } else { "+" };
    format!("({}{sign}{im_text}j)", part(re))
}

fn is_nat(v: &Value) -> bool {
    matches!(
        v,
        Value::DateTime(i64::MIN, _) | Value::TimeDelta(i64::MIN, _)
    )
}

/// A datetime as numpy's `datetime_as_string` in quotes (`'2020-01-01T12:00'`), a timedelta
/// as its tick count.
fn timelike(v: &Value) -> String {
    match v {
        Value::DateTime(t, unit) => match iso_datetime(*t, unit) {
            Some(text) => format!("'{text}'"),
            None => t.to_string(),
        },
        other => plain(other),
    }
}

/// ISO 8601 text of `ticks` of `unit` since 1970-01-01, at the unit's precision.
fn iso_datetime(ticks: i64, unit: &TimeUnit) -> Option<String> {
    let t = i128::from(ticks) * i128::from(unit.multiple);
    let (days, sub, per_day, digits): (i128, i128, i128, usize) = match unit.base {
        TimeBase::Years => return Some(year_text(1970 + t)),
        TimeBase::Months => {
            let year = 1970 + t.div_euclid(12);
            return Some(format!("{}-{:02}", year_text(year), t.rem_euclid(12) + 1));
        }
        TimeBase::Weeks => (t * 7, 0, 1, 0),
        TimeBase::Days => (t, 0, 1, 0),
        TimeBase::Hours => (t.div_euclid(24), t.rem_euclid(24), 24, 0),
        TimeBase::Minutes => (t.div_euclid(1440), t.rem_euclid(1440), 1440, 0),
        base => {
            let (per_second, digits) = match base {
                TimeBase::Seconds => (1i128, 0),
                TimeBase::Millis => (1_000, 3),
                TimeBase::Micros => (1_000_000, 6),
                TimeBase::Nanos => (1_000_000_000, 9),
                TimeBase::Picos => (1_000_000_000_000, 12),
                TimeBase::Femtos => (1_000_000_000_000_000, 15),
                TimeBase::Attos => (1_000_000_000_000_000_000, 18),
                _ => return None,
            };
            let per_day = 86_400 * per_second;
            (
                t.div_euclid(per_day),
                t.rem_euclid(per_day),
                per_day,
                digits,
            )
        }
    };
    let (y, m, d) = civil_from_days(days);
    let date = format!("{}-{m:02}-{d:02}", year_text(y));
    Some(match (unit.base, per_day) {
        (_, 1) => date,
        (TimeBase::Hours, _) => format!("{date}T{sub:02}"),
        (TimeBase::Minutes, _) => format!("{date}T{:02}:{:02}", sub / 60, sub % 60),
        _ => {
            let per_second = per_day / 86_400;
            let secs = sub / per_second;
            let frac = sub % per_second;
            let hms = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
            if digits == 0 {
                format!("{date}T{hms}")
            } else {
                format!("{date}T{hms}.{frac:0digits$}")
            }
        }
    })
}

fn year_text(year: i128) -> String {
    if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else {
        year.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NdArray, Order};

    fn show(values: Vec<f64>, shape: &[usize]) -> String {
        array_str(&NdArray::from_vec(values, shape).unwrap()).unwrap()
    }

    #[test]
    fn floats_align_like_numpy() {
        assert_eq!(show(vec![1.0, 2.5], &[2]), "[1.  2.5]");
        assert_eq!(show(vec![0.1 + 0.2, 1.0], &[2]), "[0.3 1. ]");
        assert_eq!(show(vec![1e-5, 1.0], &[2]), "[1.e-05 1.e+00]");
        assert_eq!(
            show(vec![f64::NAN, -f64::INFINITY, 1.5], &[3]),
            "[ nan -inf  1.5]"
        );
        assert_eq!(
            show(vec![0.0, 1.0, 2.0, 3.0], &[2, 2]),
            "[[0. 1.]\n [2. 3.]]"
        );
    }

    #[test]
    fn long_arrays_are_summarised() {
        let a: Vec<f64> = (0..2000).map(f64::from).collect();
        assert_eq!(
            show(a, &[2000]),
            "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]"
        );
    }

    #[test]
    fn scalars_print_like_python() {
        assert_eq!(float_scalar_str(1.0, FloatWidth::F64), "1.0");
        assert_eq!(float_scalar_str(1e16, FloatWidth::F64), "1e+16");
        assert_eq!(float_scalar_str(0.1, FloatWidth::F32), "0.1");
        assert_eq!(complex_scalar_str(1.0, -2.5, FloatWidth::F64), "(1-2.5j)");
        let a = NdArray::from_slice(&[true, false], &[2], Order::C).unwrap();
        assert_eq!(array_str(&a).unwrap(), "[ True False]");
    }
}
