//! sciio's MAT values in the canonical JSON form that python/mat_mcos_fixtures.py's `canon`
//! gives mat-io's values, and the comparison of the two (shared by the tests that check
//! sciio against mat-io).

use sciio_mat::{MatObject, MatValue, ObjectData};
use serde_json::{json, Value as J};

/// The values of a numeric or logical array as f64, column-major (MATLAB's element order).
fn numbers(a: &sciio_core::NdArray) -> Vec<f64> {
    use sciio_core::ScalarKind::{Bool, Float, Int, UInt};
    let a = a.to_native().to_order(sciio_core::Order::F);
    let kind = a.dtype().as_scalar().unwrap().kind;
    let size = a.dtype().itemsize();
    a.as_bytes()
        .chunks(size)
        .map(|c| match (kind, size) {
            (Float(8), _) => f64::from_ne_bytes(c.try_into().unwrap()),
            (Float(4), _) => f64::from(f32::from_ne_bytes(c.try_into().unwrap())),
            (Int(1), _) => f64::from(c[0] as i8),
            (Int(2), _) => f64::from(i16::from_ne_bytes(c.try_into().unwrap())),
            (Int(4), _) => f64::from(i32::from_ne_bytes(c.try_into().unwrap())),
            (Int(8), _) => i64::from_ne_bytes(c.try_into().unwrap()) as f64,
            (UInt(1), _) | (Bool, 1) => f64::from(c[0]),
            (UInt(2), _) => f64::from(u16::from_ne_bytes(c.try_into().unwrap())),
            (UInt(4), _) => f64::from(u32::from_ne_bytes(c.try_into().unwrap())),
            (UInt(8), _) => u64::from_ne_bytes(c.try_into().unwrap()) as f64,
            other => panic!("no numbers for {other:?}"),
        })
        .collect()
}

/// A char array's rows one after the other (mat-io returns a multi-row char array as its rows).
fn rows_text(c: &sciio_mat::CharArray) -> String {
    let rows = c.shape.first().copied().unwrap_or(1).max(1);
    let cols = c.codes.len() / rows;
    (0..rows)
        .flat_map(|r| (0..cols).map(move |j| r + j * rows))
        .map(|i| char::from_u32(c.codes[i]).unwrap_or('\u{fffd}'))
        .collect()
}

/// sciio's value in the JSON form python/mat_mcos_fixtures.py gives mat-io's values.
pub fn canon(v: &MatValue) -> J {
    match v {
        MatValue::Object(o) => canon_object(o),
        // mat-io's complex values have no canonical form (they compare as "other").
        MatValue::Numeric(_) if v.is_complex() => json!({"class": "other"}),
        MatValue::Numeric(a) | MatValue::Logical(a) => {
            json!({"class": "numeric", "shape": a.shape(), "values": numbers(a)})
        }
        MatValue::Char(c) => json!({"class": "char", "text": rows_text(c)}),
        MatValue::Cell(c) => {
            json!({"class": "cell", "shape": c.shape, "items": c.items.iter().map(canon).collect::<Vec<_>>()})
        }
        MatValue::Struct(s) => {
            let fields: serde_json::Map<String, J> = s
                .fields
                .iter()
                .map(|f| (f.clone(), canon(s.field(0, f).unwrap())))
                .collect();
            json!({"class": "struct", "fields": fields})
        }
        // mat-io keeps a function handle's stored struct, as sciio keeps it in the payload.
        MatValue::Opaque(o) if o.class == "function_handle" => match o.payload.as_deref() {
            Some(p) => canon(p),
            None => J::Null,
        },
        other => json!({"class": "unexpected", "value": format!("{other:?}")}),
    }
}

fn canon_object(o: &MatObject) -> J {
    let props = |p: &sciio_mat::Properties| {
        let m: serde_json::Map<String, J> = p.iter().map(|(n, v)| (n.clone(), canon(v))).collect();
        json!({"class": o.class, "props": m})
    };
    match &o.data {
        ObjectData::String(items) => json!({"class": "string", "shape": o.shape, "items": items}),
        ObjectData::Datetime(d) => json!({"class": "datetime", "shape": o.shape,
            "millis": d.millis.iter().map(|m| if m.is_nan() { J::Null } else { json!(*m as i64) }).collect::<Vec<_>>()}),
        ObjectData::Duration(d) => json!({"class": "duration", "shape": o.shape,
            "millis": d.millis.iter().map(|&m| m as i64).collect::<Vec<_>>()}),
        ObjectData::Categorical(c) => json!({"class": "categorical", "shape": o.shape,
            "codes": c.codes, "categories": c.categories, "ordered": c.ordered}),
        ObjectData::Table(t) if t.row_times.is_some() => {
            let (name, times) = t.row_times.as_ref().unwrap();
            let millis = match times.as_ref() {
                MatValue::Object(MatObject {
                    data: ObjectData::Datetime(d),
                    ..
                }) => d.millis.clone(),
                MatValue::Object(MatObject {
                    data: ObjectData::Duration(d),
                    ..
                }) => d.millis.clone(),
                other => panic!("row times {other:?}"),
            };
            json!({"class": "timetable", "names": t.variable_names, "rows": o.shape[0],
                "time_name": name, "times": millis.iter().map(|&m| m as i64).collect::<Vec<_>>()})
        }
        ObjectData::Map(m) => {
            let items = |v: &MatValue| match v {
                MatValue::Cell(c) => c.items.iter().map(canon).collect::<Vec<_>>(),
                other => panic!("map part {other:?}"),
            };
            json!({"class": "containers.Map", "keys": items(&m.keys), "values": items(&m.values)})
        }
        ObjectData::Enumeration(e) => {
            json!({"class": o.class, "shape": o.shape, "members": e.members})
        }
        ObjectData::CalendarDuration(c) => {
            let ints = |v: &MatValue| match v {
                MatValue::Numeric(a) => numbers(a).iter().map(|&x| x as i64).collect::<Vec<_>>(),
                other => panic!("calendarDuration part {other:?}"),
            };
            json!({"class": "calendarDuration", "shape": o.shape, "months": ints(&c.months),
                "days": ints(&c.days), "millis": ints(&c.millis)})
        }
        ObjectData::Missing => json!({"class": "missing", "shape": o.shape}),
        ObjectData::Dictionary(d) => match (&d.keys, &d.values) {
            (Some(k), Some(v)) => {
                json!({"class": "dictionary", "keys": canon(k), "values": canon(v)})
            }
            _ => json!({"class": "dictionary"}),
        },
        ObjectData::Table(t) => {
            let columns: serde_json::Map<String, J> = t
                .variable_names
                .iter()
                .zip(&t.columns)
                .map(|(n, c)| match c {
                    MatValue::Numeric(a) => (n.clone(), json!(numbers(a))),
                    other => (n.clone(), canon(other)),
                })
                .collect();
            json!({"class": "table", "shape": o.shape, "names": t.variable_names, "columns": columns})
        }
        ObjectData::Properties(elements) if o.shape == [1, 1] => props(&elements[0]),
        ObjectData::Properties(elements) => json!({"class": o.class, "shape": o.shape,
            "elements": elements.iter().map(props).collect::<Vec<_>>()}),
    }
}

/// Equal, taking mat-io's 0-d integer properties as MATLAB's 1x1.
pub fn same(got: &J, want: &J) -> bool {
    match (got, want) {
        // What mat-io gives without a canonical form (complex, sparse, struct arrays inside a
        // struct) is not compared.
        (_, J::Object(w)) if w.get("class") == Some(&json!("other")) => true,
        (J::Object(g), J::Object(w)) => {
            g.len() == w.len()
                && w.iter().all(|(k, wv)| {
                    let gv = g.get(k);
                    match (k.as_str(), gv) {
                        ("shape", Some(gv)) if wv == &json!([]) => gv == &json!([1, 1]),
                        (_, Some(gv)) => same(gv, wv),
                        _ => false,
                    }
                })
        }
        (J::Array(g), J::Array(w)) => {
            g.len() == w.len() && g.iter().zip(w).all(|(a, b)| same(a, b))
        }
        (J::Number(g), J::Number(w)) => g.as_f64() == w.as_f64(),
        _ => got == want,
    }
}
