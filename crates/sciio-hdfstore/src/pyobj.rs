//! The pickled shapes pandas writes, interpreted by name: numpy object arrays
//! (`numpy.core.multiarray._reconstruct` + `BUILD` state) holding `str`, `None` and `float`.

use sciio_core::{Error, Result};
use sciio_pickle::Value;

/// A short description of a pickled value for error messages.
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(_) => "a bool".into(),
        Value::Int(_) | Value::BigInt(_) => "an int".into(),
        Value::Float(_) => "a float".into(),
        Value::Str(_) => "a str".into(),
        Value::Bytes(_) => "bytes".into(),
        Value::List(_) => "a list".into(),
        Value::Tuple(_) => "a tuple".into(),
        Value::Dict(_) => "a dict".into(),
        Value::Set(_) | Value::FrozenSet(_) => "a set".into(),
        Value::Global { module, name } => format!("the global {module}.{name}"),
        Value::Reduce { callable, .. } => format!("a call of {}", short(callable)),
        Value::NewObj { class, .. } => format!("an object of {}", short(class)),
        Value::Build { object, .. } => describe(object),
        Value::Persistent(_) => "a persistent id".into(),
        Value::Extension(_) => "an extension code".into(),
        Value::OutOfBandBuffer => "an out-of-band buffer".into(),
        Value::Recursive => "a recursive value".into(),
    }
}

fn short(v: &Value) -> String {
    v.global_name().unwrap_or_else(|| describe(v))
}

fn is_reconstruct(v: &Value) -> bool {
    matches!(
        v.global_name().as_deref(),
        Some("numpy.core.multiarray._reconstruct" | "numpy._core.multiarray._reconstruct")
    )
}

/// A numpy object array read from its pickle: shape and items in C order.
#[derive(Debug)]
pub(crate) struct ObjectArray {
    pub shape: Vec<usize>,
    pub items: Vec<Value>,
}

/// Reads the pickle of a numpy `object` ndarray (what PyTables' `ObjectAtom` stores for a
/// pandas object block or index). A plain list is taken as a 1-d array.
pub(crate) fn object_array(v: Value) -> Result<ObjectArray> {
    match v {
        Value::List(items) | Value::Tuple(items) => Ok(ObjectArray {
            shape: vec![items.len()],
            items,
        }),
        Value::Build { object, state } => {
            let Value::Reduce { callable, .. } = object.as_ref() else {
                return Err(not_array(&object));
            };
            if !is_reconstruct(callable) {
                return Err(not_array(&object));
            }
            let Value::Tuple(state) = *state else {
                return Err(Error::unsupported("numpy array state is not a tuple"));
            };
            // (version, shape, dtype, is_fortran, data): version 1 has all five.
            let (shape, data) = match state.as_slice() {
                [_, shape, _, _, data] | [shape, _, _, data] => (shape, data),
                _ => return Err(Error::unsupported("numpy array state of unknown length")),
            };
            let Value::Tuple(dims) = shape else {
                return Err(Error::unsupported("numpy array shape is not a tuple"));
            };
            let shape = dims
                .iter()
                .map(|d| match d {
                    Value::Int(n) if *n >= 0 => Ok(*n as usize),
                    _ => Err(Error::format("numpy array shape holds a non-size")),
                })
                .collect::<Result<Vec<usize>>>()?;
            let Value::List(items) = data else {
                return Err(Error::unsupported(
                    "a pickled numpy array that is not of dtype object",
                ));
            };
            let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
            if n != Some(items.len()) {
                return Err(Error::format(format!(
                    "pickled numpy array of shape {shape:?} holds {} items",
                    items.len()
                )));
            }
            Ok(ObjectArray {
                shape,
                items: items.clone(),
            })
        }
        other => Err(not_array(&other)),
    }
}

fn not_array(v: &Value) -> Error {
    Error::unsupported(format!("pickle holds {}, not a numpy array", describe(v)))
}

/// One object of a string column: `str` (or Python 2 `bytes`), missing (`None`, `NaN`).
pub(crate) fn string_item(v: &Value) -> Result<Option<String>> {
    match v {
        Value::Str(s) => Ok(Some(s.clone())),
        Value::Bytes(b) => Ok(Some(String::from_utf8_lossy(b).into_owned())),
        Value::None => Ok(None),
        Value::Float(f) if f.is_nan() => Ok(None),
        // pandas' `pd.NA` singleton, pickled by reference to its module.
        Value::Global { module, name } if name == "NA" && module.starts_with("pandas") => Ok(None),
        other => Err(Error::unsupported(format!(
            "an object column holding {} (only str and missing values are read)",
            describe(other)
        ))),
    }
}
