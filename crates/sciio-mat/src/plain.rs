//! MATLAB values without objects, for writing MAT files: sciio writes no MATLAB objects (only
//! MATLAB can create them), so a value read from a file is made plain first — what maps to
//! plain MATLAB data is carried, the rest is left out with its path and reason.

use sciio_core::{DType, NdArray, Order, ScalarKind};

use crate::value::{CellArray, MatObject, MatValue, ObjectData, StructArray};

/// One object [`MatValue::into_plain`] did not carry as itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainNote {
    /// Where it is: the path given, then cell indices and field names (`/v/c/2`, `/v/s/f`;
    /// `/v/s/1/f` in a struct array).
    pub path: String,
    /// What it is (`a MATLAB object of class string`).
    pub what: String,
    /// What became of it and why.
    pub reason: String,
    /// `true`: the value is left out (at the top, or `[]` in its place inside a cell or a
    /// struct); `false`: it is carried as a struct of its parts and only its class is lost.
    pub dropped: bool,
}

impl MatValue {
    /// The value with its MATLAB objects made plain MATLAB data, as far as they map:
    /// `missing` becomes NaN doubles of its size (MATLAB's missing double); an object that
    /// converts part by part ([`MatObject::has_parts`]: table, timetable, containers.Map,
    /// dictionary, calendarDuration, a scalar object of another class) becomes a scalar struct
    /// of its parts, as MATLAB's `struct(obj)` gives a user object's properties (its class is
    /// noted as not written); a `string` array without `<missing>` becomes a cell of char
    /// rows (MATLAB's `cellstr`); any other object (datetime, duration, categorical,
    /// enumerations, function handles, arrays of user objects, undecoded ones) is left out:
    /// `None` for the value itself, `[]` in its place inside a cell or a struct. Every such
    /// object is noted in `notes` under `path`.
    pub fn into_plain(self, path: &str, notes: &mut Vec<PlainNote>) -> Option<MatValue> {
        match self {
            MatValue::Cell(mut c) => {
                c.items = std::mem::take(&mut c.items)
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| {
                        v.into_plain(&format!("{path}/{i}"), notes)
                            .unwrap_or_else(empty_double)
                    })
                    .collect();
                Some(MatValue::Cell(c))
            }
            MatValue::Struct(s) => Some(MatValue::Struct(plain_struct(s, path, notes))),
            MatValue::Object(o) => plain_object(o, path, notes),
            MatValue::Opaque(o) => {
                let what = match o.class.as_str() {
                    "function_handle" => "a function handle".to_string(),
                    class => format!("a MATLAB object of class {class}"),
                };
                notes.push(left_out(path, what));
                None
            }
            other => Some(other),
        }
    }
}

fn plain_struct(mut s: StructArray, path: &str, notes: &mut Vec<PlainNote>) -> StructArray {
    let scalar = s.elements.len() == 1;
    let fields = s.fields.clone();
    s.elements = std::mem::take(&mut s.elements)
        .into_iter()
        .enumerate()
        .map(|(i, element)| {
            element
                .into_iter()
                .zip(&fields)
                .map(|(v, f)| {
                    let at = match scalar {
                        true => format!("{path}/{f}"),
                        false => format!("{path}/{i}/{f}"),
                    };
                    v.into_plain(&at, notes).unwrap_or_else(empty_double)
                })
                .collect()
        })
        .collect();
    s
}

fn plain_object(o: MatObject, path: &str, notes: &mut Vec<PlainNote>) -> Option<MatValue> {
    if matches!(o.data, ObjectData::Missing) {
        return missing_as_nan(&o.shape).or_else(|| {
            notes.push(PlainNote {
                path: path.to_string(),
                what: "a MATLAB object of class missing".into(),
                reason: "too large to write as NaN doubles".into(),
                dropped: true,
            });
            None
        });
    }
    // A string array without <missing> elements: MATLAB's cellstr(s).
    if let ObjectData::String(items) = &o.data {
        if let Some(rows) = items
            .iter()
            .map(|s| s.as_deref())
            .collect::<Option<Vec<_>>>()
        {
            let cell = CellArray::new(
                o.shape.clone(),
                rows.into_iter().map(MatValue::from).collect(),
            );
            if let Ok(cell) = cell {
                notes.push(class_not_written(
                    path,
                    &o.class,
                    "a cell of char rows (cellstr)",
                ));
                return Some(MatValue::Cell(cell));
            }
        }
    }
    if !o.has_parts() {
        notes.push(left_out(
            path,
            format!("a MATLAB object of class {}", o.class),
        ));
        return None;
    }
    let mut fields = Vec::new();
    for (name, value) in o.parts() {
        let at = format!("{path}/{name}");
        let plain = value.clone().into_plain(&at, notes);
        fields.push((name.to_string(), plain.unwrap_or_else(empty_double)));
    }
    let kind = match o.data {
        ObjectData::Properties(_) => "a struct of its properties",
        _ => "a struct of its parts",
    };
    notes.push(class_not_written(path, &o.class, kind));
    Some(MatValue::Struct(StructArray::scalar(fields)))
}

fn class_not_written(path: &str, class: &str, carried_as: &str) -> PlainNote {
    PlainNote {
        path: path.to_string(),
        what: format!("a MATLAB object of class {class}"),
        reason: format!(
            "class {class} not written, the value is carried as {carried_as} (sciio writes no \
             MATLAB objects)"
        ),
        dropped: false,
    }
}

fn left_out(path: &str, what: String) -> PlainNote {
    PlainNote {
        path: path.to_string(),
        what,
        reason: "sciio writes no MATLAB objects (only MATLAB can create them)".into(),
        dropped: true,
    }
}

/// NaN doubles of MATLAB size `shape` (`None` when more than the default limits allow).
fn missing_as_nan(shape: &[usize]) -> Option<MatValue> {
    let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
    sciio_core::Limits::default()
        .check_alloc(count.saturating_mul(8) as u64, "missing array")
        .ok()?;
    let bytes: Vec<u8> = std::iter::repeat_n(f64::NAN.to_ne_bytes(), count)
        .flatten()
        .collect();
    NdArray::from_byte_vec(DType::scalar(ScalarKind::Float(8)), shape, Order::F, bytes)
        .ok()
        .map(MatValue::Numeric)
}

/// MATLAB's `[]`: a `0×0` double.
fn empty_double() -> MatValue {
    match NdArray::from_byte_vec(
        DType::scalar(ScalarKind::Float(8)),
        &[0, 0],
        Order::F,
        Vec::new(),
    ) {
        Ok(a) => MatValue::Numeric(a),
        // A 0×0 array always fits its (empty) bytes; a row of none is the same nothing.
        Err(_) => MatValue::from(Vec::<f64>::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_become_plain_values_or_are_noted() {
        let missing = MatValue::Object(MatObject {
            class: "missing".into(),
            shape: vec![1, 1],
            data: ObjectData::Missing,
        });
        let user = MatValue::Object(MatObject {
            class: "pkg.C".into(),
            shape: vec![1, 1],
            data: ObjectData::Properties(vec![vec![
                ("a".into(), MatValue::from(1.0)),
                ("b".into(), MatValue::from("x")),
                ("a".into(), MatValue::from(2.0)),
            ]]),
        });
        let text = MatValue::Object(MatObject::string(vec![1, 1], vec![None]));
        let cell = MatValue::Cell(CellArray::row(vec![missing, user, text]));
        let mut notes = Vec::new();
        let Some(MatValue::Cell(c)) = cell.into_plain("/v", &mut notes) else {
            panic!("a cell stays a cell");
        };
        let nan = c.items[0].to_numpy().unwrap();
        assert!(f64::from_ne_bytes(nan.as_bytes().try_into().unwrap()).is_nan());
        let MatValue::Struct(s) = &c.items[1] else {
            panic!("{:?}", c.items[1]);
        };
        assert_eq!(s.fields, ["a", "b"]);
        assert_eq!(s.field(0, "a"), Some(&MatValue::from(2.0)));
        assert!(c.items[2].is_empty());
        let paths: Vec<(&str, bool)> = notes.iter().map(|n| (&*n.path, n.dropped)).collect();
        assert_eq!(paths, [("/v/1", false), ("/v/2", true)]);
        assert!(notes[0].reason.contains("pkg.C"), "{:?}", notes[0]);
    }
}
