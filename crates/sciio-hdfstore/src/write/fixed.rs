//! pandas' `fixed` format (`df.to_hdf(path, key=key, format="fixed")`): the frame's block
//! manager as arrays under the key's group: `axis0` (the column labels), `axis1` (the index),
//! and per block `blockN_items` (its labels) and `blockN_values` ((rows, k) values, numbers of
//! one dtype together; a string column a VLArray holding one pickled numpy object array).

use std::sync::Arc;

use arrow_array::cast::AsArray;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use sciio_core::{Error, Result};
use sciio_pandas::{ColumnMeta, Frame, IndexLevel};
use sciio_pickle::Value;
use sciio_pytables::sciio_hdf5::{AttrValue, RawData};
use sciio_pytables::write::{Filters, PtGroup, PtWriter, VlAtom};

use super::attrs::{flag, i64_attr, pickled, text, tz_attr};
use super::plan::{encode, plan_column, Elem, Enc};

/// A block: its columns (positions among the frame's labels), their Arrow field positions
/// and encodings, the element.
struct Block {
    labels: Vec<usize>,
    fields: Vec<(usize, Enc)>,
    elem: Elem,
}

/// Writes `frame` into the new group `group` (path `key`) in the fixed format; `series`: its
/// one column as a Series (`index` and `values` arrays, `pandas_type` `series`).
pub(super) fn write(
    writer: &PtWriter,
    group: &PtGroup,
    key: &str,
    frame: &Frame,
    filters: Option<Filters>,
    series: bool,
) -> Result<()> {
    let schema = frame.schema();
    let batches = frame.batches();
    let parts_of = |pos: usize| -> Vec<&dyn Array> {
        batches
            .iter()
            .filter_map(|b| b.columns().get(pos).map(|c| c.as_ref()))
            .collect()
    };
    let column_levels = schema.column_levels().len().max(1);
    let mut labels = Vec::new();
    // Each label's parts, one per column level (a column MultiIndex has several).
    let mut label_parts: Vec<Vec<String>> = Vec::new();
    let mut unnamed = false;
    let mut blocks: Vec<Block> = Vec::new();
    for c in schema.columns() {
        let label = c.label().unwrap_or("None").to_string();
        c.check_decodable()?;
        let pos = schema.field_position(&c.field_name)?;
        let dt = schema.arrow_schema().field(pos).data_type().clone();
        let elem = plan_column(&label, &dt, Some(&c.meta), &parts_of(pos))?;
        if elem.categories.is_some() {
            return Err(Error::unsupported(format!(
                "pandas cannot store column {label:?}: \"Cannot store a category dtype in an \
                 HDF5 dataset that uses format=\"fixed\". Use format=\"table\".\""
            )));
        }
        labels.push(label.clone());
        unnamed = c.meta.name.is_none();
        label_parts.push(if column_levels > 1 {
            c.label_levels()
                .filter(|p| p.len() == column_levels)
                .ok_or_else(|| {
                    Error::unsupported(format!(
                        "column {label:?} is not a tuple of {column_levels} labels (a column \
                         MultiIndex)"
                    ))
                })?
        } else {
            vec![label.clone()]
        });
        // Objects are pickled one column per block (an object block of several columns would
        // be a 2-d array): pandas reads the frame the same.
        let key = elem
            .block_key()
            .filter(|_| !matches!(elem.enc, Enc::Str { .. }));
        match blocks
            .iter_mut()
            .find(|b| key.is_some() && b.elem.block_key() == key)
        {
            Some(b) => {
                b.labels.push(labels.len() - 1);
                b.fields.push((pos, elem.enc));
            }
            None => blocks.push(Block {
                labels: vec![labels.len() - 1],
                fields: vec![(pos, elem.enc.clone())],
                elem,
            }),
        }
    }
    let rows = frame.num_rows();
    group.set_attr("encoding", &text("UTF-8"))?;
    group.set_attr("errors", &text("strict"))?;
    if series {
        let name = match labels.first() {
            Some(l) if !unnamed => text(l),
            _ => pickled(&Value::None)?,
        };
        group.set_attr("name", &name)?;
        group.set_attr("pandas_type", &text("series"))?;
    } else {
        group.set_attr("nblocks", &i64_attr(blocks.len() as i64))?;
        group.set_attr("ndim", &i64_attr(2))?;
        group.set_attr("pandas_type", &text("frame"))?;
    }

    let node = |name: &str| format!("{key}/{name}");
    let set = |name: &str, attr: &str, v: &AttrValue| -> Result<()> {
        writer.hdf5()?.dataset(&node(name))?.set_attr(attr, v)
    };
    let put_array = |name: &str, data: RawData| -> Result<()> {
        match filters.filter(|f| f.complevel > 0) {
            Some(f) => group
                .create_carray(
                    name,
                    data.ty.clone(),
                    data.shape.iter().map(|&d| d as u64).collect(),
                )
                .filters(f)
                .write(&data.bytes)?,
            None => group.create_array(name, &data, "")?,
        }
        set(name, "transposed", &flag(true))
    };
    let out = Out {
        group,
        put_array: &put_array,
        set: &set,
    };
    let level_names: Vec<Option<String>> = schema
        .column_levels()
        .iter()
        .map(|l| l.name.clone())
        .collect();
    let level_dtypes: Vec<String> = schema
        .column_levels()
        .iter()
        .map(|l| l.numpy_type.clone())
        .collect();
    // The column labels of the columns at `which`, one index level per column level, each
    // of the dtype pandas records for its level (integers stay integers).
    let label_index = |which: &[usize]| -> Result<Vec<IndexPart>> {
        (0..column_levels)
            .map(|l| {
                let parts = which.iter().map(|&c| label_parts[c][l].as_str());
                let dtype = level_dtypes.get(l).map_or("object", String::as_str);
                Ok(IndexPart {
                    name: level_names
                        .get(l)
                        .cloned()
                        .flatten()
                        .filter(|_| column_levels > 1),
                    values: typed_labels(parts, dtype)?,
                    meta: None,
                })
            })
            .collect()
    };

    // axis0: the column labels; axis1: the index (a series: `index`, and `values`).
    let index = frame_index(frame, rows)?;
    if series {
        write_index(&out, "index", index)?;
    } else {
        let all: Vec<usize> = (0..labels.len()).collect();
        write_index(&out, "axis0", label_index(&all)?)?;
        write_index(&out, "axis1", index)?;
    }

    for (i, b) in blocks.iter().enumerate() {
        let name = if series {
            "values".to_string()
        } else {
            write_index(&out, &format!("block{i}_items"), label_index(&b.labels)?)?;
            format!("block{i}_values")
        };
        if matches!(b.elem.enc, Enc::Str { .. } | Enc::Dates) {
            let (pos, _) = b.fields[0];
            let items = if b.elem.enc == Enc::Dates {
                date_items(batches, pos)?
            } else {
                string_items(batches, pos)?
            };
            let mut vl = group.create_vlarray(&name, VlAtom::VlString, "", filters)?;
            vl.append_bytes(&object_array_pickle(items)?)?;
            vl.set_attr("PSEUDOATOM", &text("object"))?;
            vl.set_attr("transposed", &flag(true))?;
            if b.elem.enc != Enc::Dates {
                vl.set_attr("value_type", &text("str"))?;
            }
            continue;
        }
        let k = b.fields.len();
        let esize = b.elem.ty.size();
        let mut bytes = vec![0u8; rows * k * esize];
        let mut at_row = 0;
        for batch in batches {
            let n = batch.num_rows();
            let out = &mut bytes[at_row * k * esize..(at_row + n) * k * esize];
            for (j, (pos, enc)) in b.fields.iter().enumerate() {
                encode(
                    enc,
                    batch.column(*pos).as_ref(),
                    0,
                    n,
                    out,
                    k * esize,
                    j * esize,
                )?;
            }
            at_row += n;
        }
        put_array(
            &name,
            RawData {
                ty: b.elem.ty.clone(),
                shape: if series { vec![rows] } else { vec![rows, k] },
                bytes,
            },
        )?;
        let typed = ["datetime64", "timedelta64", "period["];
        if typed.iter().any(|t| b.elem.dtype.starts_with(t)) {
            set(&name, "value_type", &text(&b.elem.dtype))?;
        }
        if let Some((_, tz)) = b
            .elem
            .info
            .iter()
            .find(|(k, _)| *k == Value::Str("tz".into()))
        {
            set(&name, "tz", &tz_attr(tz)?)?;
        }
    }
    Ok(())
}

/// Column labels of one level as pandas keeps them: integers for an `int64` level, floats for
/// a `float64` one (as the frame's metadata records them), text otherwise.
fn typed_labels<'a>(parts: impl Iterator<Item = &'a str>, dtype: &str) -> Result<ArrayRef> {
    let not = |p: &str, what: &str| {
        Error::format(format!(
            "column label {p:?} of a label level of dtype {dtype} is not {what}"
        ))
    };
    Ok(match dtype {
        "int64" => Arc::new(
            parts
                .map(|p| p.parse::<i64>().map_err(|_| not(p, "an integer")))
                .collect::<Result<Int64Array>>()?,
        ),
        "float64" => Arc::new(
            parts
                .map(|p| p.parse::<f64>().map_err(|_| not(p, "a number")))
                .collect::<Result<arrow_array::Float64Array>>()?,
        ),
        _ => Arc::new(StringArray::from_iter_values(parts)),
    })
}

/// Where the fixed writer puts arrays and attributes.
struct Out<'a> {
    group: &'a PtGroup,
    put_array: &'a dyn Fn(&str, RawData) -> Result<()>,
    set: &'a dyn Fn(&str, &str, &AttrValue) -> Result<()>,
}

/// One level of an index to write: its name, values, pandas metadata (column labels are
/// written as pandas writes an `Index` of labels).
struct IndexPart {
    name: Option<String>,
    values: ArrayRef,
    meta: Option<ColumnMeta>,
}

/// The frame's row index as levels (a RangeIndex as its int64 values, as pandas writes it).
fn frame_index(frame: &Frame, rows: usize) -> Result<Vec<IndexPart>> {
    let schema = frame.schema();
    let levels = schema.index();
    let default = [IndexLevel::Range(sciio_pandas::RangeIndex::new(
        0,
        rows as i64,
        1,
    ))];
    let levels = if levels.is_empty() {
        &default[..]
    } else {
        levels
    };
    levels
        .iter()
        .map(|level| {
            let name = level.name().map(str::to_string);
            match level {
                IndexLevel::Range(r) => Ok(IndexPart {
                    name,
                    values: Arc::new(Int64Array::from_iter_values(
                        (0..rows as i64).map(|i| r.start + r.step * i),
                    )) as ArrayRef,
                    meta: None,
                }),
                IndexLevel::Column { field, .. } => {
                    let pos = schema.field_position(field)?;
                    let parts: Vec<&dyn Array> = frame
                        .batches()
                        .iter()
                        .filter_map(|b| b.columns().get(pos).map(|c| c.as_ref()))
                        .collect();
                    let values = arrow_select::concat::concat(&parts)
                        .map_err(|e| Error::mismatch(format!("index level {field}: {e}")))?;
                    Ok(IndexPart {
                        name,
                        values,
                        meta: schema.fields().get(pos).map(|f| f.meta.clone()),
                    })
                }
            }
        })
        .collect()
}

/// An index at node `key` as pandas' `write_index` writes it: one level a `regular` array
/// (a categorical one its codes, with the categories at `{key}_categories`), several a
/// `multi` index of `{key}_level{i}` (unique values) and `{key}_label{i}` (codes).
fn write_index(out: &Out<'_>, key: &str, mut levels: Vec<IndexPart>) -> Result<()> {
    if levels.len() > 1 {
        out.group
            .set_attr(&format!("{key}_variety"), &text("multi"))?;
        out.group
            .set_attr(&format!("{key}_nlevels"), &i64_attr(levels.len() as i64))?;
        for (i, level) in levels.into_iter().enumerate() {
            write_level(out, key, i, level)?;
        }
        return Ok(());
    }
    out.group
        .set_attr(&format!("{key}_variety"), &text("regular"))?;
    let Some(level) = levels.pop() else {
        return Err(Error::mismatch("an index without levels"));
    };
    if let Some(d) = level.values.as_any_dictionary_opt() {
        // GH#33909: a CategoricalIndex as its codes, the categories a sibling index.
        let ordered = level
            .meta
            .as_ref()
            .and_then(ColumnMeta::categorical)
            .is_some_and(|(_, o)| o);
        let categories = d.values().clone();
        if categories.null_count() > 0 {
            return Err(Error::unsupported(
                "a CategoricalIndex with a missing category",
            ));
        }
        let codes = coded(&level.values, categories.len())?;
        (out.put_array)(key, codes)?;
        let cats = IndexPart {
            name: None,
            values: categories,
            meta: None,
        };
        write_index(out, &format!("{key}_categories"), vec![cats])?;
        (out.set)(key, "kind", &text("category"))?;
        (out.set)(key, "name", &name_attr(level.name.as_deref())?)?;
        return (out.set)(key, "ordered", &flag(ordered));
    }
    let elem = write_values(out, key, &level)?;
    if let Some(offset) = crate::offsets::period_index_offset(&elem.dtype)? {
        // A PeriodIndex: its ordinals, `index_class` period, `freq` the pickled offset.
        (out.set)(key, "index_class", &text("period"))?;
        return (out.set)(key, "freq", &pickled(&offset)?);
    }
    let tz = elem
        .info
        .iter()
        .find(|(k, _)| *k == Value::Str("tz".into()));
    if elem.index_kind.starts_with("datetime64") {
        (out.set)(key, "index_class", &text("datetime"))?;
    }
    if elem.index_kind.starts_with("datetime64") || elem.index_kind.starts_with("timedelta64") {
        (out.set)(key, "freq", &pickled(&Value::None)?)?;
    }
    if let Some((_, tz)) = tz {
        (out.set)(key, "tz", &tz_attr(tz)?)?;
    }
    Ok(())
}

/// Level `i` of a MultiIndex at `key`: its unique values (first-seen order) and its codes
/// (-1 for missing), as pandas' `write_multi_index` writes them.
fn write_level(out: &Out<'_>, key: &str, i: usize, level: IndexPart) -> Result<()> {
    let dt = level.values.data_type();
    let extension = matches!(
        dt,
        arrow_schema::DataType::Dictionary(..) | arrow_schema::DataType::Timestamp(_, Some(_))
    ) || level
        .meta
        .as_ref()
        .is_some_and(|m| m.is_masked() || m.numpy_type.starts_with("period["));
    if extension {
        return Err(Error::unsupported(format!(
            "pandas cannot store the MultiIndex level {i} ({dt}) in the fixed format: \
             \"Saving a MultiIndex with an extension dtype is not supported.\""
        )));
    }
    let (uniques, codes) = factorize(level.values.as_ref())?;
    let level_key = format!("{key}_level{i}");
    let part = IndexPart {
        values: uniques,
        ..level
    };
    write_values(out, &level_key, &part)?;
    // pandas also records the name under `{key}_name{name}` on the level node.
    let name = name_attr(part.name.as_deref())?;
    let shown = part.name.as_deref().unwrap_or("None");
    (out.set)(&level_key, &format!("{key}_name{shown}"), &name)?;
    (out.put_array)(
        &format!("{key}_label{i}"),
        coded_from(&codes, part.values.len()),
    )
}

/// One array of index values at `key`, with `kind`, `name` and, for strings, `nan_rep`.
fn write_values(out: &Out<'_>, key: &str, level: &IndexPart) -> Result<Elem> {
    let rows = level.values.len();
    let elem = plan_column(
        "index",
        level.values.data_type(),
        level.meta.as_ref(),
        &[level.values.as_ref()],
    )?;
    if elem.categories.is_some() || elem.enc == Enc::Dates {
        return Err(Error::unsupported(format!(
            "writing an index of {} values in the fixed format is not implemented",
            elem.index_kind
        )));
    }
    let esize = elem.ty.size();
    let mut bytes = vec![0u8; rows * esize];
    encode(
        &elem.enc,
        level.values.as_ref(),
        0,
        rows,
        &mut bytes,
        esize,
        0,
    )?;
    (out.put_array)(
        key,
        RawData {
            ty: elem.ty.clone(),
            shape: vec![rows],
            bytes,
        },
    )?;
    // A PeriodIndex is stored as its int64 ordinals.
    let kind = match elem.index_kind.as_str() {
        "period" => "integer",
        k => k,
    };
    (out.set)(key, "kind", &text(kind))?;
    (out.set)(key, "name", &name_attr(level.name.as_deref())?)?;
    if let Enc::Str { nan_rep, .. } = &elem.enc {
        // pandas 3.1 (GH#9604) records the index's sentinel, empty when no value is missing.
        (out.set)(
            key,
            "nan_rep",
            &text(nan_rep.as_deref().unwrap_or_default()),
        )?;
    }
    Ok(elem)
}

fn name_attr(name: Option<&str>) -> Result<AttrValue> {
    match name {
        Some(n) => Ok(text(n)),
        None => pickled(&Value::None),
    }
}

/// The unique values of `a` in first-seen order (missing values not among them) and each
/// row's code into them (-1 for missing).
fn factorize(a: &dyn Array) -> Result<(ArrayRef, Vec<i64>)> {
    use std::collections::HashMap;
    let data = a.to_data();
    let key_of = |i: usize| -> Result<Vec<u8>> {
        use arrow_schema::DataType as D;
        Ok(match a.data_type() {
            D::Utf8 => a.as_string::<i32>().value(i).as_bytes().to_vec(),
            D::LargeUtf8 => a.as_string::<i64>().value(i).as_bytes().to_vec(),
            D::Utf8View => a.as_string_view().value(i).as_bytes().to_vec(),
            D::Boolean => vec![u8::from(a.as_boolean().value(i))],
            dt => {
                let width = dt.primitive_width().ok_or_else(|| {
                    Error::unsupported(format!("a MultiIndex level of {dt} values"))
                })?;
                let buf = data
                    .buffers()
                    .first()
                    .ok_or_else(|| Error::mismatch("a primitive array without values"))?;
                let at = (data.offset() + i) * width;
                buf.as_slice()
                    .get(at..at + width)
                    .ok_or_else(|| Error::mismatch("a primitive array shorter than its length"))?
                    .to_vec()
            }
        })
    };
    let mut seen: HashMap<Vec<u8>, i64> = HashMap::new();
    let mut first: Vec<u64> = Vec::new();
    let mut codes = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        if a.is_null(i) {
            codes.push(-1);
            continue;
        }
        let next = seen.len() as i64;
        let code = *seen.entry(key_of(i)?).or_insert_with(|| {
            first.push(i as u64);
            next
        });
        codes.push(code);
    }
    let uniques = arrow_select::take::take(a, &arrow_array::UInt64Array::from(first), None)
        .map_err(|e| Error::mismatch(format!("MultiIndex level values: {e}")))?;
    Ok((uniques, codes))
}

/// The codes of a dictionary array (-1 for missing) as pandas' smallest code dtype for
/// `n` categories.
fn coded(a: &ArrayRef, n: usize) -> Result<RawData> {
    let d = a
        .as_any_dictionary_opt()
        .ok_or_else(|| Error::mismatch("codes of a non-dictionary"))?;
    let keys = d.normalized_keys();
    let codes: Vec<i64> = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| if a.is_null(i) { -1 } else { k as i64 })
        .collect();
    Ok(coded_from(&codes, n))
}

/// Codes as pandas' `coerce_indexer_dtype` stores them for `n` values: int8 below 127, int16
/// below 32767, int32 below 2^31 - 1, else int64.
fn coded_from(codes: &[i64], n: usize) -> RawData {
    let size = if n < i8::MAX as usize {
        1
    } else if n < i16::MAX as usize {
        2
    } else if n < i32::MAX as usize {
        4
    } else {
        8
    };
    let mut bytes = Vec::with_capacity(codes.len() * size);
    for c in codes {
        bytes.extend_from_slice(&c.to_le_bytes()[..size]);
    }
    RawData {
        ty: sciio_pytables::sciio_hdf5::H5Type::Int {
            size,
            signed: true,
            order: sciio_pytables::sciio_hdf5::ByteOrder::Little,
        },
        shape: vec![codes.len()],
        bytes,
    }
}

/// The items of a string column as Python objects (missing values `nan`; `None` in an object
/// column of missing values).
fn string_items(batches: &[RecordBatch], pos: usize) -> Result<Vec<Value>> {
    use arrow_array::cast::AsArray;
    use arrow_schema::DataType;
    let mut items = Vec::new();
    for b in batches {
        let a = b.column(pos);
        let mut push = |v: Option<&str>| {
            items.push(v.map_or(Value::Float(f64::NAN), |s| Value::Str(s.to_string())))
        };
        match a.data_type() {
            DataType::Utf8 => a.as_string::<i32>().iter().for_each(&mut push),
            DataType::LargeUtf8 => a.as_string::<i64>().iter().for_each(&mut push),
            DataType::Utf8View => a.as_string_view().iter().for_each(&mut push),
            // pandas' object column of missing values holds None (pd.read_parquet of null).
            DataType::Null => items.extend((0..a.len()).map(|_| Value::None)),
            other => return Err(Error::mismatch(format!("{other} as strings"))),
        }
    }
    Ok(items)
}

/// The items of a date32 column as pickled `datetime.date` objects (missing values `None`,
/// as pandas keeps them in an object column).
fn date_items(batches: &[RecordBatch], pos: usize) -> Result<Vec<Value>> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Date32Type;
    let global = Value::Global {
        module: "datetime".into(),
        name: "date".into(),
    };
    let mut items = Vec::new();
    for b in batches {
        let a = b.column(pos);
        let days = a
            .as_primitive_opt::<Date32Type>()
            .ok_or_else(|| Error::mismatch(format!("{} as dates", a.data_type())))?;
        for d in days.iter() {
            items.push(match d {
                None => Value::None,
                Some(d) => Value::Reduce {
                    callable: Box::new(global.clone()),
                    args: Box::new(Value::Tuple(vec![Value::Bytes(date_state(d)?)])),
                },
            });
        }
    }
    Ok(items)
}

/// Python's pickled state of a `datetime.date`: year (big-endian), month, day.
fn date_state(days: i32) -> Result<Vec<u8>> {
    let (y, m, d) = civil_from_days(i64::from(days));
    if !(1..=9999).contains(&y) {
        return Err(Error::unsupported(format!(
            "the date of day {days} is outside Python's years 1-9999"
        )));
    }
    Ok(vec![(y >> 8) as u8, (y & 0xff) as u8, m as u8, d as u8])
}

/// Year, month, day of a day count from 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The pickle of the 1-d numpy object array of `items`, as
/// `pickle.dumps(np.asarray(values, dtype=object))` reads back.
fn object_array_pickle(items: Vec<Value>) -> Result<Vec<u8>> {
    let global = |module: &str, name: &str| Value::Global {
        module: module.into(),
        name: name.into(),
    };
    let n = items.len() as i64;
    let dtype = Value::Build {
        object: Box::new(Value::Reduce {
            callable: Box::new(global("numpy", "dtype")),
            args: Box::new(Value::Tuple(vec![
                Value::Str("O8".into()),
                Value::Bool(false),
                Value::Bool(true),
            ])),
        }),
        state: Box::new(Value::Tuple(vec![
            Value::Int(3),
            Value::Str("|".into()),
            Value::None,
            Value::None,
            Value::None,
            Value::Int(-1),
            Value::Int(-1),
            Value::Int(63),
        ])),
    };
    let array = Value::Build {
        object: Box::new(Value::Reduce {
            callable: Box::new(global("numpy._core.multiarray", "_reconstruct")),
            args: Box::new(Value::Tuple(vec![
                global("numpy", "ndarray"),
                Value::Tuple(vec![Value::Int(0)]),
                Value::Bytes(b"b".to_vec()),
            ])),
        }),
        state: Box::new(Value::Tuple(vec![
            Value::Int(1),
            Value::Tuple(vec![Value::Int(n)]),
            dtype,
            Value::Bool(false),
            Value::List(items),
        ])),
    };
    sciio_pickle::to_protocol3(&array)
}
