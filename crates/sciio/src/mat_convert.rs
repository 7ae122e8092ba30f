//! The MAT routes of conversions ([`crate::route`]): MAT → MAT copies MATLAB values
//! ([`copy_values`]) rather than numpy leaves; a `scipy.sparse.save_npz` file → MAT makes one
//! sparse variable ([`save_npz_to_sparse`]). The writer is [`crate::mat_write::MatOut`].

use std::path::Path;

use sciio_core::{Error, Result};
use sciio_mat::{MatFile, MatValue, StructArray};

use crate::job::{Job, Written};
use crate::mat::{sparse_part, step, value_bytes, At};
use crate::mat_write::MatOut;
use crate::options::ConvertOptions;
use crate::plan::LeftOut;

/// The members of a `scipy.sparse.save_npz` file.
const SAVE_NPZ_MEMBERS: [&str; 8] = [
    "format",
    "shape",
    "data",
    "indices",
    "indptr",
    "row",
    "col",
    "_is_array",
];

/// For one source that is a `scipy.sparse.save_npz` file (or a selected group holding just
/// its members) going into a MAT file without `DST:NODE`: the variable name its members are
/// written under (the selected node's name, or the file's stem), so that they make one
/// MATLAB sparse variable (see `saved_sparse` in [`crate::mat_write`]).
fn save_npz_variable(
    sources: &[(&mut crate::file::File, Option<&str>)],
    options: &ConvertOptions,
) -> Option<String> {
    let [(src, node)] = sources else {
        return None;
    };
    if options.dst_node.is_some() {
        return None;
    }
    let selected = match node {
        Some(n) => src.node(n).ok()?,
        None => src.root(),
    };
    let names: Vec<&str> = selected
        .children()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let layout = names.iter().all(|n| SAVE_NPZ_MEMBERS.contains(n))
        && ["format", "shape", "data"]
            .iter()
            .all(|m| names.contains(m))
        && selected.children().iter().all(|c| c.array_info().is_some());
    if !layout {
        return None;
    }
    let name = match node.map(|n| n.trim_matches('/')).filter(|n| !n.is_empty()) {
        Some(n) => n.rsplit('/').next().unwrap_or(n).to_string(),
        None => src.path().file_stem()?.to_string_lossy().into_owned(),
    };
    Some(name)
}

/// A `scipy.sparse.save_npz` file into MAT: its members go under one name (the route of the
/// neutral tree with that `DST:NODE`), making one sparse variable. `None` for other sources.
pub(crate) fn save_npz_to_sparse(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let Some(name) = save_npz_variable(job.sources, job.options) else {
        return Ok(None);
    };
    let options = ConvertOptions {
        dst_node: Some(name),
        ..job.options.clone()
    };
    crate::leaves::convert_with(job, &options).map(Some)
}

/// `convert` into a MAT file from MAT files only: MATLAB values are copied as they are —
/// classes, cells, structs, struct arrays, sparse matrices, empties — instead of leaf by leaf
/// through numpy arrays. A whole file copies every variable; `SRC:NODE` copies the value at
/// that path (a variable, a struct field, a cell item) under its last name or `DST:NODE`.
/// A value holding a MATLAB object (which only MATLAB can create) is left out.
pub(crate) fn copy_values(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
    let (dst, options) = (job.dst, job.options);
    let (planned, left_out) = plan_values(job.sources, dst, options)?;
    job.plan.extend(left_out);
    job.plan.ready()?;
    let progress = &mut *job.progress;
    let mut out = MatOut::create(dst, options.compress.as_ref(), options.mat_version)?;
    let mut names = Vec::new();
    let mut bytes = 0u64;
    for (name, value) in planned {
        bytes += value_bytes(&value);
        out.write_value(&name, value)
            .map_err(|e| e.with_file(dst))?;
        names.push(name);
        progress(bytes, bytes);
    }
    out.finish(dst)?;
    Ok(Some(Written {
        arrays: names,
        data_bytes: bytes,
    }))
}

/// MATLAB values with their names in the destination.
type NamedValues = Vec<(String, MatValue)>;

/// The values a MAT → MAT copy writes, named in the destination, and those it leaves out.
fn plan_values(
    sources: &[(&mut crate::file::File, Option<&str>)],
    dst: &Path,
    options: &ConvertOptions,
) -> Result<(NamedValues, Vec<LeftOut>)> {
    let mut planned: NamedValues = Vec::new();
    let mut left_out = Vec::new();
    for (src, node) in sources {
        let file = MatFile::open_with_limits(src.path(), *src.limits())?;
        for (name, value) in selected_values(&file, *node, &mut left_out)? {
            let src_path = match node {
                Some(n) => crate::file::normalise(n),
                None => format!("/{name}"),
            };
            let value = drop_absent_fields(value, &src_path, &mut left_out);
            let mut notes = Vec::new();
            let plain = value.into_plain(&src_path, &mut notes);
            left_out.extend(notes.into_iter().map(|n| match n.dropped {
                true => LeftOut::node(n.path, n.what, n.reason),
                false => LeftOut::attribute(n.path, "MATLAB_class", n.reason),
            }));
            let Some(value) = plain else { continue };
            let name = match options.dst_node.as_deref().map(|d| d.trim_matches('/')) {
                Some(d) if node.is_some() => d.to_string(),
                Some(d) => format!("{d}/{name}"),
                None => name,
            };
            if planned.iter().any(|(n, _)| *n == name) {
                return Err(Error::invalid_input(format!(
                    "two values would be named '{name}'; rename one with DST:NODE"
                ))
                .with_file(dst));
            }
            planned.push((name, value));
        }
    }
    Ok((planned, left_out))
}

/// `value` without the struct fields a damaged file's `MATLAB_fields` names but does not hold
/// ([`sciio_mat::ABSENT_FIELD`]), each left out with its reason.
fn drop_absent_fields(value: MatValue, path: &str, left_out: &mut Vec<LeftOut>) -> MatValue {
    let absent =
        |v: &MatValue| matches!(v, MatValue::Opaque(o) if o.class == sciio_mat::ABSENT_FIELD);
    match value {
        MatValue::Struct(mut s) => {
            let mut keep = Vec::with_capacity(s.fields.len());
            for (j, field) in s.fields.iter().enumerate() {
                let gone = s
                    .elements
                    .iter()
                    .filter_map(|e| e.get(j))
                    .find(|v| absent(v));
                match gone {
                    Some(MatValue::Opaque(o)) => {
                        left_out.push(LeftOut::node(
                            format!("{}/{field}", path.trim_end_matches('/')),
                            "an absent struct field",
                            o.note.clone(),
                        ));
                        keep.push(false);
                    }
                    _ => keep.push(true),
                }
            }
            let scalar = s.elements.len() == 1;
            let base = path.trim_end_matches('/').to_string();
            let names = std::mem::take(&mut s.fields);
            s.elements = std::mem::take(&mut s.elements)
                .into_iter()
                .enumerate()
                .map(|(i, e)| {
                    e.into_iter()
                        .zip(names.iter().zip(&keep))
                        .filter(|(_, (_, &k))| k)
                        .map(|(v, (f, _))| {
                            let at = match scalar {
                                true => format!("{base}/{f}"),
                                false => format!("{base}/{i}/{f}"),
                            };
                            drop_absent_fields(v, &at, left_out)
                        })
                        .collect()
                })
                .collect();
            s.fields = names
                .into_iter()
                .zip(&keep)
                .filter_map(|(f, &k)| k.then_some(f))
                .collect();
            MatValue::Struct(s)
        }
        other => other,
    }
}

/// Every variable (`node` = `None`; one that cannot be read is left out with the reason), or
/// the value at `node`, with its name.
fn selected_values(
    file: &MatFile,
    node: Option<&str>,
    left_out: &mut Vec<LeftOut>,
) -> Result<Vec<(String, MatValue)>> {
    let Some(node) = node.map(|n| n.trim_matches('/')).filter(|n| !n.is_empty()) else {
        let mut values = Vec::new();
        let mut first_error = None;
        for name in file.names()? {
            match file.read(&name) {
                Ok(value) => values.push((name, value)),
                Err(e) if crate::mat::whole_file(&e) => return Err(e),
                Err(e) => {
                    let what = match file.info(&name) {
                        Ok(info) => format!("a {} variable", info.class.name()),
                        Err(_) => "a variable".to_string(),
                    };
                    left_out.push(LeftOut::node(
                        format!("/{name}"),
                        what,
                        format!("cannot be read: {}", e.message()),
                    ));
                    first_error.get_or_insert(e);
                }
            }
        }
        // A file where no variable reads is an error, not an empty copy.
        if let Some(e) = first_error.filter(|_| values.is_empty()) {
            return Err(e);
        }
        return Ok(values);
    };
    let mut parts = node.split('/');
    let var = parts.next().unwrap_or_default();
    let value = file.read(var)?;
    let mut at = At::Value(&value);
    let mut last = var;
    for part in parts {
        at = step(at, part).ok_or_else(|| {
            Error::not_found(format!("no element '{part}' in the variable"))
                .with_node(format!("/{node}"))
        })?;
        last = part;
    }
    let picked = match at {
        At::Value(v) => v.clone(),
        At::SparsePart(s, part) => MatValue::numeric(sparse_part(s, part)?)?,
        // One element of a struct array: a scalar struct of its fields.
        At::Element(s, index) => MatValue::Struct(StructArray::scalar(
            s.fields
                .iter()
                .zip(&s.elements[index])
                .map(|(f, v)| (f.clone(), v.clone()))
                .collect(),
        )),
    };
    Ok(vec![(last.to_string(), picked)])
}
