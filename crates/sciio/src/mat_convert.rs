//! The MAT routes of conversions ([`crate::route`]): MAT → MAT copies MATLAB values
//! ([`copy_values`]) rather than numpy leaves; a `scipy.sparse.save_npz` file → MAT makes one
//! sparse variable ([`save_npz_to_sparse`]). The writer is [`crate::mat_write::MatOut`].

use std::path::Path;

use sciio_core::{DType, Error, Result, ScalarKind};
use sciio_mat::{MatClass, MatFile, MatValue, PythonMeta, StructArray, VarInfo};

use crate::job::{Job, Written};
use crate::mat::{sparse_part, step, value_bytes, At};
use crate::mat_write::{MatOut, SAVE_NPZ_MEMBERS};
use crate::options::ConvertOptions;
use crate::plan::LeftOut;

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
    let (files, planned, left_out) = plan_values(job.sources, dst, options)?;
    let (planned, mut metas): (Vec<_>, Vec<_>) = planned
        .into_iter()
        .map(|(name, value, meta)| ((name.clone(), value), (name, meta)))
        .unzip();
    let mut meta_of = |name: &str| {
        metas
            .iter_mut()
            .find(|(n, _)| n == name)
            .and_then(|(_, m)| m.take())
    };
    job.plan.extend(left_out);
    job.plan.ready()?;
    let (progress, plan) = (&mut *job.progress, &mut job.plan);
    let mut out = MatOut::create(dst, options.compress.as_ref(), options.mat_version)?;
    let mut names = Vec::new();
    let mut bytes = 0u64;
    // Large fields of structs to be (`DST:NODE` paths): written piece by piece by `finish_with`.
    let mut deferred: Vec<(usize, String, ScalarKind, Vec<usize>)> = Vec::new();
    for (name, value) in planned {
        let value = match value {
            Planned::Value(value) => value,
            Planned::Large {
                file,
                var,
                kind,
                dims,
            } if name.contains('/') => {
                out.defer(&name, deferred.len(), kind, dims.clone(), meta_of(&name))
                    .map_err(|e| e.with_file(dst))?;
                deferred.push((file, var, kind, dims));
                names.push(name);
                continue;
            }
            Planned::Large {
                file,
                var,
                kind,
                dims,
            } => {
                let large = Large {
                    file: &files[file],
                    var: &var,
                    kind,
                    dims: &dims,
                };
                let base = bytes;
                let meta = meta_of(&name);
                let streamed = write_large(
                    &large,
                    &mut |d| progress(base + d, base + d),
                    &mut |array| out.write_pieces(&name, array, meta.as_ref()),
                )
                .map_err(|e| e.with_file(dst))?;
                let whole = match streamed {
                    Streamed::Written(n) => {
                        bytes += n;
                        names.push(name);
                        continue;
                    }
                    // Not a plain native-order array after all: read whole, as before.
                    Streamed::Declined => files[file].read(&var),
                    Streamed::Unreadable(e) => Err(e),
                };
                match whole {
                    Ok(value) => value,
                    Err(e) if crate::mat::whole_file(&e) => return Err(e),
                    // Found unreadable before any of it was written: left out, as planning
                    // leaves out what it finds unreadable (`--strict` refuses).
                    Err(e) => {
                        plan.extend([unreadable(&files[file], &var, &e)]);
                        plan.ready()?;
                        continue;
                    }
                }
            }
        };
        bytes += value_bytes(&value);
        out.write_value_with(&name, value, meta_of(&name))
            .map_err(|e| e.with_file(dst))?;
        names.push(name);
        progress(bytes, bytes);
    }
    out.finish_with(dst, &mut |id, give| {
        let write = &mut |array: sciio_mat::ArrayPieces<'_>| give(sciio_mat::Pieces::Array(array));
        let (file, var, kind, dims) = deferred
            .get(id)
            .ok_or_else(|| Error::invalid_input("internal: no such deferred variable"))?;
        let large = Large {
            file: &files[*file],
            var,
            kind: *kind,
            dims,
        };
        let base = bytes;
        let streamed = write_large(&large, &mut |d| progress(base + d, base + d), write);
        let located = |e: Error| e.with_file(large.file.path()).with_node(format!("/{var}"));
        bytes += match streamed? {
            Streamed::Written(n) => n,
            // Not a plain native-order array after all: read whole, as before.
            Streamed::Declined => write_held(&large, write).map_err(located)?,
            // Planned as readable: its stream failing now fails the conversion.
            Streamed::Unreadable(e) => return Err(located(e)),
        };
        progress(bytes, bytes);
        Ok(())
    })?;
    Ok(Some(Written {
        arrays: names,
        data_bytes: bytes,
    }))
}

/// A value a MAT → MAT copy writes: read whole, or a large numeric variable (real or
/// complex) copied piece by piece from `files[file]` ([`write_large`]).
enum Planned {
    Value(MatValue),
    Large {
        file: usize,
        var: String,
        kind: ScalarKind,
        dims: Vec<usize>,
    },
}

/// Variables of at least this many bytes are copied piece by piece (one block of the
/// readers' streams: smaller ones are read whole by them anyway).
const LARGE_BYTES: u64 = 16 << 20;

/// The element kind of a top-level variable worth streaming: numeric or logical (not sparse;
/// complex of a float class) and of at least [`LARGE_BYTES`].
fn large_kind(info: &VarInfo) -> Option<ScalarKind> {
    let kind = match (&info.class, info.class.numeric_kind(), info.complex) {
        (MatClass::Logical, _, false) => ScalarKind::Bool,
        (_, Some(ScalarKind::Float(n)), true) => ScalarKind::Complex(2 * n),
        // Complex integers: complex doubles (a 64-bit part beyond 2^53 stops the copy).
        (_, Some(_), true) => ScalarKind::Complex(16),
        (_, Some(kind), false) => kind,
        _ => return None,
    };
    if info.sparse {
        return None;
    }
    let bytes = info
        .shape
        .iter()
        .try_fold(kind.itemsize() as u64, |a, &d| a.checked_mul(d as u64))?;
    (bytes >= LARGE_BYTES).then_some(kind)
}

/// A large variable of a source MAT file to copy piece by piece.
struct Large<'a> {
    file: &'a MatFile,
    var: &'a str,
    kind: ScalarKind,
    dims: &'a [usize],
}

/// What [`write_large`] did with a large variable.
enum Streamed {
    /// Written, this many bytes of data.
    Written(u64),
    /// Nothing written: not stored as a plain array it streams; the caller reads it whole.
    Declined,
    /// Nothing written: its stream failed before its first bytes.
    Unreadable(Error),
}

/// Gives `large` to `write` (a MAT writer's pieces) without holding it: its stored
/// column-major bytes ([`MatFile::copy_plain_data`], on a thread of its own) are handed over
/// block by block as the writer asks for them, in order. Nothing is written
/// before the stream's first bytes have come ([`Streamed`]); a stream failing after that is
/// an error naming the source file, the variable and why (the destination, written into a
/// temporary file, is then removed by the caller's error).
fn write_large(
    large: &Large<'_>,
    progress: &mut dyn FnMut(u64),
    write: &mut dyn FnMut(sciio_mat::ArrayPieces<'_>) -> Result<()>,
) -> Result<Streamed> {
    let item = large.kind.itemsize().max(1);
    std::thread::scope(|scope| {
        // Owned here: dropped when this returns (a write failed, say), so that the reading
        // thread's next hand-over fails and it ends rather than wait for ever.
        let mut rx = start_pass(scope, large);
        // Nothing sent before the thread ended: `copy_plain_data` declined the variable.
        let mut pending = match rx.recv() {
            Ok(Ok(first)) => first,
            Ok(Err(e)) => return Ok(Streamed::Unreadable(e)),
            Err(_) => return Ok(Streamed::Declined),
        };
        let (mut used, mut next, mut reported) = (0usize, 0u64, 0u64);
        let mut fill = |first: u64, buf: &mut [u8]| -> Result<()> {
            if first == 0 && next != 0 {
                // Asked again from the start (a complex variable into MAT v5/v7: its real
                // parts, then its imaginary ones): the variable streamed once more.
                end_of_pass(&rx, large)?;
                rx = start_pass(scope, large);
                (pending, used, next) = (Vec::new(), 0, 0);
            }
            if first != next {
                return Err(Error::format(format!(
                    "elements asked from {first} while the stream is at {next}"
                )));
            }
            let mut at = 0;
            while at < buf.len() {
                if used == pending.len() {
                    pending = rx.recv().map_err(|_| {
                        Error::format("the variable's data ended before its size")
                    })??;
                    used = 0;
                }
                let n = (buf.len() - at).min(pending.len() - used);
                buf[at..at + n].copy_from_slice(&pending[used..used + n]);
                (at, used) = (at + n, used + n);
            }
            next = first + (buf.len() / item) as u64;
            // Over a second pass, shown once it goes past the first.
            reported = reported.max(next * item as u64);
            progress(reported);
            Ok(())
        };
        let fill = &mut fill;
        write(sciio_mat::ArrayPieces {
            kind: large.kind,
            shape: large.dims.to_vec(),
            fill,
        })?;
        end_of_pass(&rx, large)?;
        Ok(Streamed::Written(reported))
    })
}

/// Gives `large`, read whole (a variable [`write_large`] declined), to `write`: its bytes.
fn write_held(
    large: &Large<'_>,
    write: &mut dyn FnMut(sciio_mat::ArrayPieces<'_>) -> Result<()>,
) -> Result<u64> {
    let array = match large.file.read(large.var)? {
        MatValue::Numeric(a) | MatValue::Logical(a) => a,
        other => {
            return Err(Error::format(format!(
                "a {} variable where a numeric one was planned",
                other.class().name()
            )))
        }
    };
    if array.dtype().as_scalar().map(|s| s.kind) != Some(large.kind) {
        return Err(Error::format(
            "the variable's class changed since it was planned",
        ));
    }
    let array = array.to_native().to_order(sciio_core::Order::F);
    let bytes = array.as_bytes();
    let mut fill = |first: u64, buf: &mut [u8]| -> Result<()> {
        let at = usize::try_from(first)
            .ok()
            .and_then(|f| f.checked_mul(large.kind.itemsize()))
            .filter(|&at| at.saturating_add(buf.len()) <= bytes.len())
            .ok_or_else(|| Error::format("elements asked past the variable's size"))?;
        buf.copy_from_slice(&bytes[at..at + buf.len()]);
        Ok(())
    };
    let fill = &mut fill;
    write(sciio_mat::ArrayPieces {
        kind: large.kind,
        shape: large.dims.to_vec(),
        fill,
    })?;
    Ok(bytes.len() as u64)
}

/// The receiving end of a thread streaming `large`'s data ([`MatFile::copy_plain_data`]):
/// its blocks as they come, then its error if it fails (nothing at all when it declines).
fn start_pass<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    large: &'env Large<'env>,
) -> std::sync::mpsc::Receiver<Result<Vec<u8>>> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<u8>>>(1);
    scope.spawn(move || {
        let dtype = DType::scalar(large.kind);
        let mut sink = Handover { tx: &tx };
        let copied =
            large
                .file
                .copy_plain_data(large.var, &dtype, large.dims, &mut sink, &mut |_| {});
        if let Err(e) = copied {
            // The receiver may be gone already (the writer failed first): nothing to tell.
            let _ = tx.send(Err(e));
        }
    });
    rx
}

/// The end of a pass over `large` whose elements were all taken: the stream's end (a v7
/// stream's checksum, say) may still fail, or hold more than its size.
fn end_of_pass(rx: &std::sync::mpsc::Receiver<Result<Vec<u8>>>, large: &Large<'_>) -> Result<()> {
    loop {
        match rx.recv() {
            Err(_) => return Ok(()),
            Ok(Err(e)) => return Err(e),
            Ok(Ok(more)) if more.is_empty() => continue,
            Ok(Ok(_)) => {
                return Err(Error::format("the variable's data runs past its size")
                    .with_file(large.file.path())
                    .with_node(format!("/{}", large.var)))
            }
        }
    }
}

/// The writing end of [`write_large`]'s hand-over: each block written is sent as it is.
struct Handover<'a> {
    tx: &'a std::sync::mpsc::SyncSender<Result<Vec<u8>>>,
}

impl std::io::Write for Handover<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tx
            .send(Ok(buf.to_vec()))
            .map_err(|_| std::io::Error::other("the MAT writer stopped"))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The values to write by name, each with hdf5storage's `Python.*` attributes of its source
/// ([`python_meta`]).
type NamedValues = Vec<(String, Planned, Option<PythonMeta>)>;

/// hdf5storage's attributes of the numeric, logical or char value at `src_path` of `file`, so
/// that a copy reads in hdf5storage as the original did (its numpy text, shapes and scalar
/// types); `None` for other values and files without them (MATLAB's own).
fn python_meta(file: &MatFile, src_path: &str, value: &Planned) -> Option<PythonMeta> {
    let leaf = match value {
        Planned::Large { .. } => true,
        Planned::Value(v) => matches!(
            v,
            MatValue::Numeric(_) | MatValue::Logical(_) | MatValue::Char(_)
        ),
    };
    let attrs = file
        .python_attrs(src_path)
        .ok()
        .flatten()
        .filter(|_| leaf)?;
    Some(PythonMeta {
        attrs: Some(attrs),
        elements: Vec::new(),
    })
}

/// The values a MAT → MAT copy writes, named in the destination, and those it leaves out,
/// with the source files the large ones are copied from.
fn plan_values(
    sources: &[(&mut crate::file::File, Option<&str>)],
    dst: &Path,
    options: &ConvertOptions,
) -> Result<(Vec<MatFile>, NamedValues, Vec<LeftOut>)> {
    let mut files = Vec::new();
    let mut planned: NamedValues = Vec::new();
    let mut left_out = Vec::new();
    for (src, node) in sources {
        let file = MatFile::open_with_limits(src.path(), *src.limits())?;
        for (name, value) in selected_values(&file, files.len(), *node, &mut left_out)? {
            let src_path = match node {
                Some(n) => crate::file::normalise(n),
                None => format!("/{name}"),
            };
            let name = match options.dst_node.as_deref().map(|d| d.trim_matches('/')) {
                Some(d) if node.is_some() => d.to_string(),
                Some(d) => format!("{d}/{name}"),
                None => name,
            };
            if planned.iter().any(|(n, _, _)| *n == name) {
                return Err(Error::invalid_input(format!(
                    "two values would be named '{name}'; rename one with DST:NODE"
                ))
                .with_file(dst));
            }
            let value = match value {
                // Large ones stream, top-level or into a struct (`MatOut::defer`).
                Planned::Large { .. } => value,
                Planned::Value(value) => match plain_value(value, &src_path, &mut left_out) {
                    Some(value) => Planned::Value(value),
                    None => continue,
                },
            };
            let meta = python_meta(&file, &src_path, &value);
            planned.push((name, value, meta));
        }
        files.push(file);
    }
    Ok((files, planned, left_out))
}

/// `value` as a MAT file can hold it: absent struct fields and MATLAB objects left out (and
/// noted in `left_out`); `None` when nothing is left.
fn plain_value(value: MatValue, src_path: &str, left_out: &mut Vec<LeftOut>) -> Option<MatValue> {
    let value = drop_absent_fields(value, src_path, left_out);
    let mut notes = Vec::new();
    let plain = value.into_plain(src_path, &mut notes);
    left_out.extend(notes.into_iter().map(|n| match n.dropped {
        true => LeftOut::node(n.path, n.what, n.reason),
        false => LeftOut::attribute(n.path, "MATLAB_class", n.reason),
    }));
    plain
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

/// Variable `name` of `file`, which cannot be read (`e`), left out with the reason.
fn unreadable(file: &MatFile, name: &str, e: &Error) -> LeftOut {
    let what = match file.info(name) {
        Ok(info) => format!("a {} variable", info.class.name()),
        Err(_) => "a variable".to_string(),
    };
    LeftOut::node(
        format!("/{name}"),
        what,
        format!("cannot be read: {}", e.message()),
    )
}

/// The top-level variable `name` of `files[index]`: read whole, or when large (numeric, at
/// least [`LARGE_BYTES`]) not read but checked ([`MatFile::check_plain_data`]: its headers
/// and, v7.3, its first and last chunks tell whether it can be, as reading it all would).
fn plan_variable(
    file: &MatFile,
    index: usize,
    name: &str,
    left_out: &mut Vec<LeftOut>,
) -> Result<Planned> {
    let info = file.info(name).ok();
    let large = info.as_ref().and_then(|info| {
        let kind = large_kind(info)?;
        Some((kind, info.shape.clone()))
    });
    let planned = match large {
        Some((kind, dims)) => file
            .check_plain_data(name, &DType::scalar(kind), &dims)
            .map(|_| Planned::Large {
                file: index,
                var: name.to_string(),
                kind,
                dims,
            }),
        None => file.read(name).map(Planned::Value),
    }?;
    left_out.extend(info.as_ref().and_then(complex_integer_note));
    Ok(planned)
}

/// The note for a complex integer variable (MATLAB's complex int8..uint64: numpy has no such
/// kind, so the Level-5 reader gives its values as complex doubles, and the copy is of class
/// double): the class change is not silent, `--strict` refuses it.
fn complex_integer_note(info: &VarInfo) -> Option<LeftOut> {
    info.is_complex_integer().then(|| {
        LeftOut::attribute(
            format!("/{}", info.name),
            "MATLAB_class",
            format!(
                "complex {} is written as complex double (numpy has no complex integers)",
                info.class.name()
            ),
        )
    })
}

/// Every variable (`node` = `None`; one that cannot be read is left out with the reason;
/// a large numeric one is not read but checked ([`MatFile::check_plain_data`]) and noted as
/// [`Planned::Large`] of `files[index]`), or the value at `node`, with its name.
fn selected_values(
    file: &MatFile,
    index: usize,
    node: Option<&str>,
    left_out: &mut Vec<LeftOut>,
) -> Result<Vec<(String, Planned)>> {
    let Some(node) = node.map(|n| n.trim_matches('/')).filter(|n| !n.is_empty()) else {
        let mut values = Vec::new();
        let mut first_error = None;
        for name in file.names()? {
            match plan_variable(file, index, &name, left_out) {
                Ok(planned) => values.push((name, planned)),
                Err(e) if crate::mat::whole_file(&e) => return Err(e),
                Err(e) => {
                    left_out.push(unreadable(file, &name, &e));
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
    let mut parts = node.split('/').peekable();
    let var = parts.next().unwrap_or_default();
    if parts.peek().is_none() {
        // a whole variable: a large one streams as in a whole-file copy
        return Ok(vec![(
            var.to_string(),
            plan_variable(file, index, var, left_out)?,
        )]);
    }
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
    Ok(vec![(last.to_string(), Planned::Value(picked))])
}
