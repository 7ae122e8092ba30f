//! Test helpers: the canonical JSON form of a MatValue (python/mat_canon.py describes it).
#![allow(dead_code)]

use sciio_core::{NdArray, Order, ScalarKind, Value};
use sciio_mat::{MatValue, SparseKind};
use serde_json::{json, Value as J};

fn num(v: Value) -> J {
    let f = |x: f64| {
        if x.is_nan() {
            json!("nan")
        } else if x.is_infinite() {
            json!(if x > 0.0 { "inf" } else { "-inf" })
        } else {
            json!(x)
        }
    };
    match v {
        Value::Bool(b) => json!(u8::from(b)),
        Value::Int(i) => json!(i),
        Value::UInt(u) => json!(u),
        Value::Float(x) => f(x),
        other => panic!("unexpected element {other:?}"),
    }
}

/// Elements of a MATLAB-shaped array in column-major order: (re, im).
fn columns(a: &NdArray) -> (Vec<J>, Option<Vec<J>>) {
    let f = a.to_order(Order::F);
    let complex = matches!(a.dtype().as_scalar().unwrap().kind, ScalarKind::Complex(_));
    let mut re = Vec::new();
    let mut im = Vec::new();
    // values() walks the logical C order; read the F-order bytes through a 1-D reshape instead.
    let flat = NdArray::from_bytes(f.dtype().clone(), &[f.len()], Order::C, f.as_bytes()).unwrap();
    for v in flat.values().unwrap() {
        match v {
            Value::Complex(c) => {
                re.push(num(Value::Float(c.re)));
                im.push(num(Value::Float(c.im)));
            }
            other => re.push(num(other)),
        }
    }
    (re, complex.then_some(im))
}

pub fn canon(v: &MatValue) -> J {
    match v {
        MatValue::Numeric(a) | MatValue::Logical(a) => {
            let (re, im) = columns(a);
            let mut o = json!({"class": v.class().name(), "shape": v.matlab_shape(), "re": re});
            if let Some(im) = im {
                o["im"] = json!(im);
            }
            o
        }
        MatValue::Char(c) => json!({"class": "char", "shape": c.shape, "codes": c.codes}),
        MatValue::Cell(c) => {
            json!({"class": "cell", "shape": c.shape, "items": c.items.iter().map(canon).collect::<Vec<_>>()})
        }
        MatValue::Struct(s) => json!({
            "class": "struct", "shape": s.shape, "fields": s.fields,
            "elements": s.elements.iter().map(|e| e.iter().map(canon).collect::<Vec<_>>()).collect::<Vec<_>>()
        }),
        MatValue::Sparse(s) => {
            let (re, im) = columns(&s.data);
            let kind = match s.kind() {
                SparseKind::Double => "double",
                SparseKind::Complex => "complex",
                SparseKind::Logical => "logical",
            };
            let mut o = json!({"class": "sparse", "kind": kind, "shape": [s.nrows, s.ncols], "ir": s.ir, "jc": s.jc, "re": re});
            if let Some(im) = im {
                o["im"] = json!(im);
            }
            o
        }
        MatValue::Opaque(o) => json!({"class": o.class, "opaque": true}),
        MatValue::Object(o) => {
            json!({"class": o.class, "shape": o.shape, "object": o.display_items()})
        }
    }
}

/// Compares two canonical values, floats within a relative 1e-12 (JSON round trips of f32).
pub fn same(a: &J, b: &J) -> bool {
    match (a, b) {
        (J::Number(x), J::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

pub fn assert_same(what: &str, got: &J, want: &J) {
    assert!(same(got, want), "{what}:\n sciio: {got}\n want:  {want}");
}
