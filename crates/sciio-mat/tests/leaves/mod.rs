//! scipy's leaves (python/mat5_scipy_leaves.py) against sciio's values.
#![allow(dead_code)]

use std::collections::BTreeMap;

use sciio_core::{NdArray, Order, Value};
use sciio_mat::MatValue;
use serde_json::Value as J;

pub type Leaves = BTreeMap<String, (Vec<usize>, Vec<String>)>;

fn bits(x: f64) -> String {
    x.to_bits().to_string()
}

/// An array's elements in column-major order, written as the Python dumper writes them.
pub fn values(a: &NdArray) -> Vec<String> {
    let f = a.to_native().to_order(Order::F);
    let kind = f.dtype().as_scalar().unwrap().kind;
    let size = kind.itemsize();
    f.as_bytes()
        .chunks(size)
        .map(|b| {
            let one = NdArray::from_bytes(f.dtype().clone(), &[], Order::C, b).unwrap();
            match one.get(&[]).unwrap() {
                Value::Bool(b) => format!("i:{}", u8::from(b)),
                Value::Int(i) => format!("i:{i}"),
                Value::UInt(u) => format!("i:{u}"),
                Value::Float(x) => format!("f:{}", bits(x)),
                Value::Complex(c) => format!("c:{},{}", bits(c.re), bits(c.im)),
                other => panic!("unexpected element {other:?}"),
            }
        })
        .collect()
}

/// Our leaves, on the dumper's paths: `/i` for a cell item or struct element (column-major),
/// `/field` for a field; old-style objects and function handles by their stored struct.
pub fn walk(v: &MatValue, path: &str, out: &mut Leaves) {
    match v {
        MatValue::Numeric(a) | MatValue::Logical(a) => {
            out.insert(path.into(), (a.shape().to_vec(), values(a)));
        }
        MatValue::Char(c) => {
            let codes = c.codes.iter().map(|x| format!("i:{x}")).collect();
            out.insert(path.into(), (c.shape.clone(), codes));
        }
        MatValue::Sparse(s) => {
            // Sparse values compared as doubles (scipy reads some logical ones as uint8).
            let dense = s.to_dense().unwrap();
            let vals = values(&dense)
                .into_iter()
                .map(|v| match v.as_str() {
                    "i:0" => format!("f:{}", bits(0.0)),
                    "i:1" => format!("f:{}", bits(1.0)),
                    _ => v,
                })
                .collect();
            out.insert(path.into(), (vec![s.nrows, s.ncols], vals));
        }
        MatValue::Cell(c) => {
            for (i, item) in c.items.iter().enumerate() {
                walk(item, &format!("{path}/{i}"), out);
            }
        }
        MatValue::Struct(s) => {
            for (i, element) in s.elements.iter().enumerate() {
                for (f, value) in s.fields.iter().zip(element) {
                    walk(value, &format!("{path}/{i}/{f}"), out);
                }
            }
        }
        MatValue::Opaque(o) => {
            if let Some(p) = &o.payload {
                walk(p, path, out);
            }
        }
        MatValue::Object(_) => {}
    }
}

/// Checks every leaf scipy dumped (`{path: {shape, values}}`) is in `mine`, equal; returns how
/// many were checked.
pub fn check_leaves(name: &str, scipy: &J, mine: &Leaves) -> usize {
    let mut n = 0;
    for (path, leaf) in scipy.as_object().unwrap() {
        let shape: Vec<usize> = leaf["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        let vals: Vec<String> = leaf["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let Some((my_shape, my_vals)) = mine.get(path) else {
            panic!(
                "{name}: scipy's leaf {path} not found; sciio has {:?}",
                mine.keys()
            );
        };
        assert_eq!(my_shape, &shape, "{name}{path}: shape");
        assert_eq!(my_vals, &vals, "{name}{path}: values");
        n += 1;
    }
    n
}
