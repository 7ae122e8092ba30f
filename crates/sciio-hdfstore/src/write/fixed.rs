//! pandas' `fixed` format (`df.to_hdf(path, key=key, format="fixed")`): the frame's block
//! manager as arrays under the key's group: `axis0` (the column labels), `axis1` (the index),
//! and per block `blockN_items` (its labels) and `blockN_values` ((rows, k) values, numbers of
//! one dtype together; a string column a VLArray holding one pickled numpy object array).

use arrow_array::{Array, RecordBatch};
use sciio_core::{Error, Result};
use sciio_pandas::{Frame, IndexLevel};
use sciio_pickle::Value;
use sciio_pytables::sciio_hdf5::{AttrValue, RawData};
use sciio_pytables::write::{Filters, PtGroup, PtWriter, VlAtom};

use super::attrs::{flag, i64_attr, pickled, text, tz_attr};
use super::plan::{encode, plan_column, string_type, Elem, Enc};

/// A block: its labels, their Arrow field positions and encodings, the element.
struct Block {
    labels: Vec<String>,
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
    if schema.column_levels().len() > 1 {
        return Err(Error::unsupported(
            "writing a column MultiIndex in the fixed format is not implemented",
        ));
    }
    let mut labels = Vec::new();
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
        let key = elem.block_key();
        match blocks
            .iter_mut()
            .find(|b| key.is_some() && b.elem.block_key() == key)
        {
            Some(b) => {
                b.labels.push(label);
                b.fields.push((pos, elem.enc));
            }
            None => blocks.push(Block {
                labels: vec![label],
                fields: vec![(pos, elem.enc.clone())],
                elem,
            }),
        }
    }
    let rows = frame.num_rows();
    group.set_attr("encoding", &text("UTF-8"))?;
    group.set_attr("errors", &text("strict"))?;
    if series {
        group.set_attr("index_variety", &text("regular"))?;
        let name = match labels.first() {
            Some(l) => text(l),
            None => pickled(&Value::None)?,
        };
        group.set_attr("name", &name)?;
        group.set_attr("pandas_type", &text("series"))?;
    } else {
        group.set_attr("axis0_variety", &text("regular"))?;
        group.set_attr("axis1_variety", &text("regular"))?;
        for i in 0..blocks.len() {
            group.set_attr(&format!("block{i}_items_variety"), &text("regular"))?;
        }
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
    let labels_array = |name: &str, labels: &[String]| -> Result<()> {
        put_array(name, strings_data(labels))?;
        set(name, "kind", &text("string"))?;
        set(name, "name", &pickled(&Value::None)?)?;
        set(name, "nan_rep", &text(""))
    };

    // axis0: the column labels; axis1: the index (a series: `index`, and `values`).
    if series {
        write_index(frame, rows, "index", &put_array, &set)?;
    } else {
        labels_array("axis0", &labels)?;
        write_index(frame, rows, "axis1", &put_array, &set)?;
    }

    for (i, b) in blocks.iter().enumerate() {
        let name = if series {
            "values".to_string()
        } else {
            labels_array(&format!("block{i}_items"), &b.labels)?;
            format!("block{i}_values")
        };
        if matches!(b.elem.enc, Enc::Str { .. }) {
            let (pos, _) = b.fields[0];
            let mut vl = group.create_vlarray(&name, VlAtom::VlString, "", filters)?;
            vl.append_bytes(&object_array_pickle(batches, pos)?)?;
            vl.set_attr("PSEUDOATOM", &text("object"))?;
            vl.set_attr("transposed", &flag(true))?;
            vl.set_attr("value_type", &text("str"))?;
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
        if b.elem.dtype.starts_with("datetime64") || b.elem.dtype.starts_with("timedelta64") {
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

/// `axis1`: a single index level's values with `kind`, `name` (and `index_class`, `freq`,
/// `tz` for datetimes).
fn write_index(
    frame: &Frame,
    rows: usize,
    node: &str,
    put_array: &dyn Fn(&str, RawData) -> Result<()>,
    set: &dyn Fn(&str, &str, &AttrValue) -> Result<()>,
) -> Result<()> {
    let schema = frame.schema();
    let levels = schema.index();
    if levels.len() > 1 {
        return Err(Error::unsupported(
            "writing a MultiIndex in the fixed format is not implemented (the table format \
             stores it)",
        ));
    }
    let level =
        levels
            .first()
            .cloned()
            .unwrap_or(IndexLevel::Range(sciio_pandas::RangeIndex::new(
                0,
                rows as i64,
                1,
            )));
    let name = match level.name() {
        Some(n) => text(n),
        None => pickled(&Value::None)?,
    };
    let (data, elem) = match &level {
        IndexLevel::Range(r) => {
            let bytes = (0..rows as i64)
                .flat_map(|i| (r.start + r.step * i).to_le_bytes())
                .collect();
            let elem = plan_column(
                "index",
                &arrow_schema::DataType::Int64,
                None,
                &[&arrow_array::Int64Array::from(Vec::<i64>::new())],
            )?;
            (
                RawData {
                    ty: elem.ty.clone(),
                    shape: vec![rows],
                    bytes,
                },
                elem,
            )
        }
        IndexLevel::Column { field, .. } => {
            let pos = schema.field_position(field)?;
            let parts: Vec<&dyn Array> = frame
                .batches()
                .iter()
                .filter_map(|b| b.columns().get(pos).map(|c| c.as_ref()))
                .collect();
            let dt = schema.arrow_schema().field(pos).data_type().clone();
            let meta = schema.fields().get(pos).map(|f| f.meta.clone());
            let elem = plan_column("index", &dt, meta.as_ref(), &parts)?;
            if elem.categories.is_some() {
                return Err(Error::unsupported(
                    "writing a CategoricalIndex is not implemented",
                ));
            }
            let esize = elem.ty.size();
            let mut bytes = vec![0u8; rows * esize];
            let mut at = 0;
            for batch in frame.batches() {
                let n = batch.num_rows();
                encode(
                    &elem.enc,
                    batch.column(pos).as_ref(),
                    0,
                    n,
                    &mut bytes[at * esize..(at + n) * esize],
                    esize,
                    0,
                )?;
                at += n;
            }
            (
                RawData {
                    ty: elem.ty.clone(),
                    shape: vec![rows],
                    bytes,
                },
                elem,
            )
        }
    };
    put_array(node, data)?;
    set(node, "kind", &text(&elem.index_kind))?;
    set(node, "name", &name)?;
    if matches!(elem.enc, Enc::Str { .. }) {
        set(node, "nan_rep", &text(super::plan::NAN_REP))?;
    }
    if elem.index_kind.starts_with("datetime64") {
        set(node, "index_class", &text("datetime"))?;
    }
    if elem.index_kind.starts_with("datetime64") || elem.index_kind.starts_with("timedelta64") {
        set(node, "freq", &pickled(&Value::None)?)?;
    }
    if let Some((_, tz)) = elem
        .info
        .iter()
        .find(|(k, _)| *k == Value::Str("tz".into()))
    {
        set(node, "tz", &tz_attr(tz)?)?;
    }
    Ok(())
}

/// Labels as a numpy `S` array (UTF-8, as long as the longest).
fn strings_data(labels: &[String]) -> RawData {
    let size = labels.iter().map(String::len).max().unwrap_or(0).max(1);
    let mut bytes = vec![0u8; labels.len() * size];
    for (i, l) in labels.iter().enumerate() {
        bytes[i * size..i * size + l.len()].copy_from_slice(l.as_bytes());
    }
    RawData {
        ty: string_type(size),
        shape: vec![labels.len()],
        bytes,
    }
}

/// The pickle of the 1-d numpy object array of a string column (missing values `nan`), as
/// `pickle.dumps(np.asarray(values, dtype=object))` reads back.
fn object_array_pickle(batches: &[RecordBatch], pos: usize) -> Result<Vec<u8>> {
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
            other => return Err(Error::mismatch(format!("{other} as strings"))),
        }
    }
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
