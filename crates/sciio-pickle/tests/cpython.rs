//! Pickles written by CPython's `pickle` module (protocols 0 to 5) read into the values Python
//! itself would rebuild, with calls kept as names; damaged and cut pickles give errors.

use serde_json::{json, Value as Json};

use sciio_pickle::{parse, Value};

/// A two's-complement little-endian integer in decimal.
fn big_to_decimal(bytes: &[u8]) -> String {
    let negative = bytes.last().is_some_and(|b| b & 0x80 != 0);
    let mut magnitude: Vec<u8> = bytes.to_vec();
    if negative {
        let mut carry = 1u16;
        for b in magnitude.iter_mut() {
            let v = u16::from(!*b) + carry;
            *b = (v & 0xFF) as u8;
            carry = v >> 8;
        }
    }
    let mut digits = Vec::new();
    while magnitude.iter().any(|&b| b != 0) {
        let mut rest = 0u32;
        for b in magnitude.iter_mut().rev() {
            let v = (rest << 8) | u32::from(*b);
            *b = (v / 10) as u8;
            rest = v % 10;
        }
        digits.push(char::from(b'0' + rest as u8));
    }
    if digits.is_empty() {
        digits.push('0');
    }
    let body: String = digits.iter().rev().collect();
    if negative {
        format!("-{body}")
    } else {
        body
    }
}

fn python_float_repr(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{v:?}");
    // Rust prints 1e-300 as "1e-300", Python too; 1.5 as "1.5", -0.0 as "-0.0".
    s
}

/// The value in the tagged form gen_pickle_cases.py writes.
fn tagged(v: &Value) -> Json {
    let all = |items: &[Value]| Json::Array(items.iter().map(tagged).collect());
    match v {
        Value::None => json!({ "none": null }),
        Value::Bool(b) => json!({ "bool": b }),
        Value::Int(i) => json!({ "int": i.to_string() }),
        Value::BigInt(b) => json!({ "int": big_to_decimal(b) }),
        Value::Float(f) => json!({ "float": python_float_repr(*f) }),
        Value::Str(s) => json!({ "str": s }),
        Value::Bytes(b) => {
            json!({ "bytes": b.iter().map(|x| format!("{x:02x}")).collect::<String>() })
        }
        Value::List(items) => json!({ "list": all(items) }),
        Value::Tuple(items) => json!({ "tuple": all(items) }),
        Value::Set(items) => json!({ "set": all(items) }),
        Value::FrozenSet(items) => json!({ "frozenset": all(items) }),
        Value::Dict(pairs) => json!({
            "dict": pairs.iter().map(|(k, x)| json!([tagged(k), tagged(x)])).collect::<Vec<_>>()
        }),
        Value::Recursive => json!({ "recursive": null }),
        other => json!({ "other": format!("{other:?}") }),
    }
}

fn globals_in(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Global { .. } => {
            let name = v.global_name().unwrap_or_default();
            out.push(name.replace("__builtin__.", "builtins."));
        }
        Value::List(items) | Value::Tuple(items) | Value::Set(items) | Value::FrozenSet(items) => {
            items.iter().for_each(|x| globals_in(x, out))
        }
        Value::Dict(pairs) => pairs.iter().for_each(|(k, x)| {
            globals_in(k, out);
            globals_in(x, out)
        }),
        Value::Reduce { callable, args } => {
            globals_in(callable, out);
            globals_in(args, out)
        }
        Value::NewObj {
            class,
            args,
            kwargs,
        } => {
            globals_in(class, out);
            args.iter().for_each(|x| globals_in(x, out));
            kwargs.iter().for_each(|(k, x)| {
                globals_in(k, out);
                globals_in(x, out)
            })
        }
        Value::Build { object, state } => {
            globals_in(object, out);
            globals_in(state, out)
        }
        Value::Persistent(x) => globals_in(x, out),
        _ => {}
    }
}

fn cases(dir: &std::path::Path) -> Vec<Json> {
    let n =
        sciio_testkit::run_python_script("python/gen_pickle_cases.py", &[dir.to_str().unwrap()]);
    let cases: Vec<Json> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cases.json")).unwrap()).unwrap();
    assert_eq!(cases.len().to_string(), n.trim());
    assert!(cases.len() > 200);
    cases
}

#[test]
fn reads_what_cpython_pickles_with_every_protocol() {
    let dir = sciio_testkit::tempdir();
    let mut checked = [0usize; 6];
    for case in cases(dir.path()) {
        let file = case["file"].as_str().unwrap();
        let bytes = std::fs::read(dir.path().join(file)).unwrap();
        let value = parse(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        if !case["expect"].is_null() {
            assert_eq!(
                tagged(&value),
                case["expect"],
                "{file} (protocol {})",
                case["protocol"]
            );
        }
        let mut names = Vec::new();
        globals_in(&value, &mut names);
        for wanted in case["globals"].as_array().unwrap() {
            let wanted = wanted.as_str().unwrap();
            assert!(
                names.iter().any(|n| n == wanted),
                "{file}: {wanted} not in {names:?}"
            );
        }
        checked[case["protocol"].as_u64().unwrap() as usize] += 1;
    }
    assert!(checked.iter().all(|&n| n > 40), "{checked:?}");
}

#[test]
fn cut_and_damaged_pickles_are_errors_never_panics() {
    let dir = sciio_testkit::tempdir();
    for case in cases(dir.path()).iter().step_by(7) {
        let bytes = std::fs::read(dir.path().join(case["file"].as_str().unwrap())).unwrap();
        let limits = sciio_pickle::ParseLimits::default();
        for cut in 0..bytes.len() {
            assert!(parse(&bytes[..cut]).is_err(), "{case} cut at {cut}");
            let apart = sciio_pickle::parse_text_column(&bytes[..cut], &limits);
            assert!(apart.is_err(), "{case} cut at {cut}");
        }
        for at in 0..bytes.len() {
            for flip in [0x01u8, 0x80, 0xFF] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                let _ = parse(&damaged);
                let _ = sciio_pickle::parse_text_column(&damaged, &limits);
            }
        }
    }
}

#[test]
fn sizes_beyond_the_stream_and_huge_expansions_are_refused() {
    // BINBYTES8 claiming 2**62 bytes.
    let claim = [&[0x80, 4, 0x8e][..], &(1u64 << 62).to_le_bytes(), b"."].concat();
    assert!(parse(&claim).is_err());
    // memo[k] = (memo[k-1], memo[k-1]): 40 rounds share one list 2**40 times; expanding the
    // tree is bounded by the limits instead of running out of memory.
    let mut bomb = vec![0x80, 4, b']', 0x94];
    for k in 1u8..=40 {
        bomb.extend([b'h', k - 1, b'2', 0x86, 0x94, b'0']);
    }
    bomb.extend([b'h', 40, b'.']);
    let limits = sciio_pickle::ParseLimits {
        max_values: 1 << 16,
        max_depth: 1000,
        ..sciio_pickle::ParseLimits::default()
    };
    let e = sciio_pickle::parse_with(&bomb, &limits).unwrap_err();
    assert_eq!(e.kind(), sciio_core::ErrorKind::LimitExceeded, "{e}");
    // Three rounds expand fine: ((x, x), (x, x)) twice over.
    let mut small = vec![0x80, 4, b']', 0x94];
    for k in 1u8..=3 {
        small.extend([b'h', k - 1, b'2', 0x86, 0x94, b'0']);
    }
    small.extend([b'h', 3, b'.']);
    let Value::Tuple(top) = parse(&small).unwrap() else {
        panic!("a tuple");
    };
    assert_eq!(top.len(), 2);
}

/// Puts the items of a [`sciio_pickle::TextColumn`] back into the list it was read from (the
/// root, or the last item of the root's BUILD state).
fn restore(value: Value, column: Option<sciio_pickle::TextColumn>) -> Value {
    let Some(column) = column else {
        return value;
    };
    let items: Vec<Value> = (0..column.len())
        .map(|i| match column.text(i) {
            Some(s) => Value::Str(s.to_string()),
            None => {
                let k = column.others.binary_search_by_key(&i, |(j, _)| *j).unwrap();
                column.others[k].1.clone()
            }
        })
        .collect();
    match value {
        Value::List(empty) => {
            assert!(empty.is_empty());
            Value::List(items)
        }
        Value::Build { object, state } => {
            let Value::Tuple(mut state) = *state else {
                panic!("a tuple state")
            };
            assert_eq!(state.pop(), Some(Value::List(Vec::new())));
            state.push(Value::List(items));
            Value::Build {
                object,
                state: Box::new(Value::Tuple(state)),
            }
        }
        other => panic!("a column read apart from {other:?}"),
    }
}

#[test]
fn a_data_list_read_apart_holds_the_same_items_as_the_tree() {
    let dir = sciio_testkit::tempdir();
    let mut apart = 0;
    for case in cases(dir.path()) {
        let file = case["file"].as_str().unwrap();
        let bytes = std::fs::read(dir.path().join(file)).unwrap();
        let whole = parse(&bytes).unwrap();
        let (value, column) =
            sciio_pickle::parse_text_column(&bytes, &sciio_pickle::ParseLimits::default()).unwrap();
        apart += usize::from(column.is_some());
        assert_eq!(restore(value, column), whole, "{file}");
    }
    // Lists and numpy object arrays of every protocol were read apart.
    assert!(apart > 30, "{apart}");
}
