//! Values made from what MATLAB stores for object references and function handles, shared by
//! the v7.3 reader (`read/objects.rs`, `read.rs`) and the Level-5 reader (`v5/mcos.rs`,
//! `v5/decode.rs`).

use crate::value::{MatValue, Opaque};

/// MATLAB stores the reference as a `1×n` HDF5 dataset, read as an `n×1` MATLAB column;
/// h5py-made files may hold it as a row. Either way the words are the same.
pub(crate) fn transposed_column(stored: &MatValue) -> MatValue {
    match stored {
        MatValue::Numeric(a) if a.shape().len() == 2 && a.shape()[0] == 1 => {
            let n = a.shape()[1];
            match a.clone().reshape(&[n, 1]) {
                Ok(col) => MatValue::Numeric(col),
                Err(_) => stored.clone(),
            }
        }
        other => other.clone(),
    }
}

/// A function handle (a struct group with `MATLAB_object_decode = 1`) kept as stored, with
/// the function it names in the note (`@sin (simple)`, `@(x)x.^2+1 (anonymous)`).
pub(crate) fn function_handle(stored: MatValue) -> MatValue {
    let inner = match &stored {
        MatValue::Struct(s) => s.field(0, "function_handle"),
        _ => None,
    };
    let text = |name: &str| match inner {
        Some(MatValue::Struct(f)) => match f.field(0, name) {
            Some(MatValue::Char(c)) => Some(c.to_string_lossy()),
            _ => None,
        },
        _ => None,
    };
    let note = match (text("function"), text("type")) {
        (Some(function), kind) => {
            // Anonymous functions are stored with a workspace prefix before their `@(...)`.
            let shown = match function.find('@') {
                Some(at) => function[at..].to_string(),
                None => format!("@{function}"),
            };
            match kind {
                Some(kind) => format!("function handle {shown} ({kind}); kept as stored"),
                None => format!("function handle {shown}; kept as stored"),
            }
        }
        _ => "function handle without a function name; kept as stored".into(),
    };
    MatValue::Opaque(Opaque {
        class: "function_handle".into(),
        payload: Some(Box::new(stored)),
        note,
    })
}
