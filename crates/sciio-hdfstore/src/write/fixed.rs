//! pandas' `fixed` format (`df.to_hdf(path, key=key, format="fixed")`): the frame's block
//! manager as arrays under the key's group: `axis0` (the column labels), `axis1` (the index),
//! and per block `blockN_items` (its labels) and `blockN_values` ((rows, k) values, numbers of
//! one dtype together; a string column a VLArray holding one pickled numpy object array).
//!
//! pandas writes a key whole; sciio writes it from the frame's record batches in one pass
//! ([`write`]), holding a slice of rows at a time: the number blocks and a plain index (a
//! RangeIndex, numbers, times, text) are created at their full size (the rows are known up
//! front) and filled slab by slab. What the format stores as one object is gathered whole:
//! a string or date column is one pickled numpy object array (the pickle's bytes are made
//! as the rows come, and held until the pass ends: about the column's text), and a
//! MultiIndex or CategoricalIndex (its levels are factorized over every row) is gathered
//! from the batches' index columns. The planning (integers with missing values become
//! float64, a text index's widest value and sentinel) takes what a first pass over the
//! batches says ([`FramePasses::survey`]), made only when a field needs it.

use std::collections::HashSet;
use std::sync::Arc;

use arrow_array::cast::AsArray;

use arrow_array::{Array, ArrayRef, Int64Array, StringArray};
use arrow_schema::DataType;
use sciio_core::{Error, Result};
use sciio_pandas::{ColumnMeta, FrameSchema, IndexLevel};
use sciio_pickle::Value;
use sciio_pytables::sciio_hdf5::{AttrValue, H5Type, RawData};
use sciio_pytables::write::{Filters, PtFill, PtGroup, PtVlArray, PtWriter, VlAtom};

use super::attrs::{flag, i64_attr, pickled, text, tz_attr};
use super::passes::{field_needs, survey, FramePasses, SLICE_ROWS};
use super::plan::{encode, plan_column, plan_column_of, ColumnStats, Elem, Enc, FieldNeed};

/// A block: its columns (positions among the frame's labels), their Arrow field positions
/// and encodings, the element.
struct Block {
    labels: Vec<usize>,
    fields: Vec<(usize, Enc)>,
    elem: Elem,
}

impl Block {
    /// Whether the block is one pickled object array (strings, dates).
    fn is_objects(&self) -> bool {
        matches!(self.elem.enc, Enc::Str { .. } | Enc::Dates)
    }
}

/// How the row index is written.
enum IndexPlan {
    /// A RangeIndex (the default one when the frame has none): its values computed.
    Range {
        name: Option<String>,
        start: i64,
        step: i64,
    },
    /// One level of numbers, times or text stored in field `pos`: written slab by slab.
    Streamed {
        name: Option<String>,
        pos: usize,
        elem: Elem,
    },
    /// Levels gathered whole from the batches (a MultiIndex, a CategoricalIndex, a level
    /// the slab writer does not take) and written once the pass is over.
    Gathered(Vec<GatheredLevel>),
}

/// A level of an index gathered whole.
struct GatheredLevel {
    name: Option<String>,
    source: LevelSource,
    meta: Option<ColumnMeta>,
}

enum LevelSource {
    Range { start: i64, step: i64 },
    Field(usize),
}

/// What [`write`] writes, decided before anything is: the refusals come first.
pub(super) struct FixedPlan {
    labels: Vec<String>,
    /// Each label's parts, one per column level (a column MultiIndex has several).
    label_parts: Vec<Vec<String>>,
    /// Whether the (last) column is unnamed (a Series' name).
    unnamed: bool,
    blocks: Vec<Block>,
    index: IndexPlan,
    level_names: Vec<Option<String>>,
    level_dtypes: Vec<String>,
    rows: usize,
    series: bool,
}

/// What a first pass needs to read for a fixed key: as for a table key (integers' missing
/// values, a text index's values), but nothing of the data columns of text, which become
/// pickled objects whatever their values.
fn fixed_needs(schema: &FrameSchema) -> Vec<FieldNeed> {
    let mut needs = field_needs(schema);
    for (need, (f, c)) in needs
        .iter_mut()
        .zip(schema.arrow_schema().fields().iter().zip(schema.fields()))
    {
        let object = matches!(
            f.data_type(),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
        ) || is_categorical(f.data_type());
        if object && !c.is_index {
            *need = FieldNeed::Nothing;
        }
    }
    needs
}

/// A dictionary of text: a pandas Categorical.
fn is_categorical(dt: &DataType) -> bool {
    matches!(dt, DataType::Dictionary(_, v)
        if matches!(**v, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View))
}

/// Plans the fixed key of a frame of `schema` and `rows` rows (`series`: its one column as a
/// Series): a first pass over `frames` when a field's storage depends on its values.
pub(super) fn plan(
    schema: &FrameSchema,
    rows: usize,
    frames: &mut dyn FramePasses,
    series: bool,
) -> Result<FixedPlan> {
    let needs = fixed_needs(schema);
    let stats = if needs.iter().all(|n| *n == FieldNeed::Nothing) {
        vec![ColumnStats::default(); needs.len()]
    } else {
        survey(rows as u64, &needs, frames.survey(&needs)?, &HashSet::new())?
    };
    let stats_of = |pos: usize| -> Result<&ColumnStats> {
        stats
            .get(pos)
            .ok_or_else(|| Error::mismatch(format!("no field {pos} in the record batches")))
    };
    let column_levels = schema.column_levels().len().max(1);
    let mut labels = Vec::new();
    let mut label_parts: Vec<Vec<String>> = Vec::new();
    let mut unnamed = false;
    let mut blocks: Vec<Block> = Vec::new();
    for c in schema.columns() {
        let label = c.label().unwrap_or("None").to_string();
        c.check_decodable()?;
        let pos = schema.field_position(&c.field_name)?;
        let dt = schema.arrow_schema().field(pos).data_type().clone();
        if is_categorical(&dt) {
            return Err(Error::unsupported(format!(
                "pandas cannot store column {label:?}: \"Cannot store a category dtype in an \
                 HDF5 dataset that uses format=\"fixed\". Use format=\"table\".\""
            )));
        }
        let elem = plan_column_of(&label, &dt, Some(&c.meta), stats_of(pos)?)?;
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
    Ok(FixedPlan {
        labels,
        label_parts,
        unnamed,
        blocks: in_pyarrow_order(blocks),
        index: plan_index(schema, rows, &stats_of)?,
        level_names: schema
            .column_levels()
            .iter()
            .map(|l| l.name.clone())
            .collect(),
        level_dtypes: schema
            .column_levels()
            .iter()
            .map(|l| l.numpy_type.clone())
            .collect(),
        rows,
        series,
    })
}

/// The blocks in the order of the blocks of the frame `pd.read_parquet` gives, which
/// `to_hdf` keeps ([`super::block_order`]); left in column order when a block's kind is
/// unknown. An object block (strings, dates) is pyarrow's object block when its dtype
/// consolidates, a block alone otherwise (a `str` column).
fn in_pyarrow_order(blocks: Vec<Block>) -> Vec<Block> {
    use super::block_order::{pyarrow_order, writer_type, BlockKind};
    let kinds: Option<Vec<BlockKind>> = blocks
        .iter()
        .map(|b| {
            let first = b.labels.first().copied().unwrap_or_default();
            if b.elem.consolidates || b.elem.enc == Enc::Dates {
                writer_type(b.elem.writer_dtype()).map(BlockKind::Consolidated)
            } else {
                Some(BlockKind::Alone(first))
            }
        })
        .collect();
    let Some(order) = kinds
        .and_then(|k| pyarrow_order(&k))
        .filter(|o| o.len() == blocks.len())
    else {
        return blocks;
    };
    let mut slots: Vec<Option<Block>> = blocks.into_iter().map(Some).collect();
    order
        .iter()
        .filter_map(|&i| slots.get_mut(i).and_then(Option::take))
        .collect()
}

/// How the frame's row index is written: a RangeIndex computed, one plain level streamed,
/// anything else gathered.
fn plan_index<'s>(
    schema: &FrameSchema,
    rows: usize,
    stats_of: &dyn Fn(usize) -> Result<&'s ColumnStats>,
) -> Result<IndexPlan> {
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
    if let [level] = levels {
        let name = level.name().map(str::to_string);
        match level {
            IndexLevel::Range(r) => {
                return Ok(IndexPlan::Range {
                    name,
                    start: r.start,
                    step: r.step,
                })
            }
            IndexLevel::Column { field, .. } => {
                let pos = schema.field_position(field)?;
                let dt = schema.arrow_schema().field(pos).data_type();
                let meta = schema.fields().get(pos).map(|f| &f.meta);
                if !matches!(dt, DataType::Dictionary(..)) {
                    let elem = plan_column_of("index", dt, meta, stats_of(pos)?)?;
                    let plain = matches!(
                        elem.enc,
                        Enc::Copy { .. } | Enc::IntAsF64 | Enc::Bool | Enc::Str { .. }
                    );
                    if plain && elem.categories.is_none() {
                        return Ok(IndexPlan::Streamed { name, pos, elem });
                    }
                }
            }
        }
    }
    let multi = levels.len() > 1;
    let gathered = levels
        .iter()
        .enumerate()
        .map(|(i, level)| {
            let name = level.name().map(str::to_string);
            Ok(match level {
                IndexLevel::Range(r) => GatheredLevel {
                    name,
                    source: LevelSource::Range {
                        start: r.start,
                        step: r.step,
                    },
                    meta: None,
                },
                IndexLevel::Column { field, .. } => {
                    let pos = schema.field_position(field)?;
                    let meta = schema.fields().get(pos).map(|f| f.meta.clone());
                    let dt = schema.arrow_schema().field(pos).data_type();
                    // Refused before anything is written.
                    if multi {
                        check_multi_level(i, dt, meta.as_ref())?;
                    } else if *dt == DataType::Date32 {
                        return Err(dates_index_refusal());
                    }
                    GatheredLevel {
                        name,
                        source: LevelSource::Field(pos),
                        meta,
                    }
                }
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(IndexPlan::Gathered(gathered))
}

/// Where the fixed writer puts arrays and attributes.
struct Out<'a> {
    writer: &'a PtWriter,
    group: &'a PtGroup,
    key: &'a str,
    filters: Option<Filters>,
}

impl Out<'_> {
    /// Sets attribute `attr` of node `name` of the key.
    fn set(&self, name: &str, attr: &str, v: &AttrValue) -> Result<()> {
        self.writer
            .hdf5()?
            .dataset(&format!("{}/{name}", self.key))?
            .set_attr(attr, v)
    }

    /// Creates the array `name` of `shape` (`transposed`, as pandas writes every array), to
    /// be filled rows first: a contiguous Array, or a CArray under the key's filters.
    fn start_array(&self, name: &str, ty: &H5Type, shape: &[u64]) -> Result<PtFill> {
        let fill = match self.filters.filter(|f| f.complevel > 0) {
            Some(f) => self
                .group
                .create_carray(name, ty.clone(), shape.to_vec())
                .filters(f)
                .fill()?,
            None => self.group.create_array_fill(name, ty.clone(), shape)?,
        };
        self.set(name, "transposed", &flag(true))?;
        Ok(fill)
    }

    /// Writes the array `name` holding `data`.
    fn put_array(&self, name: &str, data: RawData) -> Result<()> {
        let shape: Vec<u64> = data.shape.iter().map(|&d| d as u64).collect();
        let mut fill = self.start_array(name, &data.ty, &shape)?;
        fill.append(&data.bytes)?;
        fill.finish()
    }
}

/// What is being filled while the batches pass.
enum Filling {
    /// A number block (or a streamed index): the array and each source field's encoding.
    Array {
        fill: PtFill,
        fields: Vec<(usize, Enc)>,
        esize: usize,
    },
    /// A RangeIndex's array: its values computed, row `next` the next.
    Range {
        fill: PtFill,
        start: i64,
        step: i64,
        next: usize,
    },
    /// An object block: its VLArray and the pickle being made.
    Objects {
        vl: PtVlArray,
        pos: usize,
        dates: bool,
        pickle: ObjectPickle,
    },
}

/// Writes the planned key into the new group `group` (path `key`) from one pass over
/// `frames`.
pub(super) fn write(
    writer: &PtWriter,
    group: &PtGroup,
    key: &str,
    plan: &FixedPlan,
    frames: &mut dyn FramePasses,
    filters: Option<Filters>,
) -> Result<()> {
    let rows = plan.rows;
    let series = plan.series;
    key_attrs(group, plan)?;
    let out = Out {
        writer,
        group,
        key,
        filters,
    };

    // axis0: the column labels; axis1: the index (a series: `index`, and `values`).
    let index_key = if series { "index" } else { "axis1" };
    if !series {
        let all: Vec<usize> = (0..plan.labels.len()).collect();
        write_index(&out, "axis0", label_index(plan, &all)?)?;
    }
    let mut index = start_index(&out, index_key, &plan.index, rows)?;

    let mut filling = Vec::with_capacity(plan.blocks.len());
    for (i, b) in plan.blocks.iter().enumerate() {
        let name = if series {
            "values".to_string()
        } else {
            write_index(
                &out,
                &format!("block{i}_items"),
                label_index(plan, &b.labels)?,
            )?;
            format!("block{i}_values")
        };
        filling.push(start_block(&out, &name, b, rows, series)?);
    }

    let gathered = fill_from(frames, plan, &mut index, &mut filling)?;
    for f in index.into_iter().chain(filling) {
        f.finish()?;
    }
    if let IndexPlan::Gathered(levels) = &plan.index {
        write_index(&out, index_key, gathered_index(levels, gathered, rows)?)?;
    }
    Ok(())
}

/// The key's group attributes: a frame's or a Series' (`name`).
fn key_attrs(group: &PtGroup, plan: &FixedPlan) -> Result<()> {
    group.set_attr("encoding", &text("UTF-8"))?;
    group.set_attr("errors", &text("strict"))?;
    if plan.series {
        let name = match plan.labels.first() {
            Some(l) if !plan.unnamed => text(l),
            _ => pickled(&Value::None)?,
        };
        group.set_attr("name", &name)?;
        return group.set_attr("pandas_type", &text("series"));
    }
    group.set_attr("nblocks", &i64_attr(plan.blocks.len() as i64))?;
    group.set_attr("ndim", &i64_attr(2))?;
    group.set_attr("pandas_type", &text("frame"))
}

/// One pass over `frames`: each batch's rows into what is `filling`, a slice of rows at a
/// time; the index levels gathered whole when the plan gathers them.
fn fill_from(
    frames: &mut dyn FramePasses,
    plan: &FixedPlan,
    index: &mut Option<Filling>,
    filling: &mut [Filling],
) -> Result<Vec<Vec<ArrayRef>>> {
    let rows = plan.rows;
    let mut gathered: Vec<Vec<ArrayRef>> = Vec::new();
    let mut done = 0usize;
    let mut buf = Vec::new();
    for batch in frames.pass()? {
        let batch = batch?;
        let n = batch.num_rows();
        if done + n > rows {
            return Err(Error::mismatch(format!(
                "the record batches hold more rows than the frame's {rows}"
            )));
        }
        let mut from = 0;
        while from < n {
            let k = SLICE_ROWS.min(n - from);
            for f in index.iter_mut().chain(filling.iter_mut()) {
                f.put(&batch, from, k, &mut buf)?;
            }
            from += k;
        }
        if let IndexPlan::Gathered(levels) = &plan.index {
            gather(&mut gathered, levels, &batch)?;
        }
        done += n;
    }
    if done != rows {
        return Err(Error::mismatch(format!(
            "the record batches hold {done} rows where the frame has {rows}"
        )));
    }
    Ok(gathered)
}

/// The index node(s) made before the pass: a RangeIndex's or a plain level's array, filled
/// as the batches pass; nothing for a gathered index (written after).
fn start_index(out: &Out<'_>, key: &str, plan: &IndexPlan, rows: usize) -> Result<Option<Filling>> {
    let (name, elem) = match plan {
        IndexPlan::Gathered(_) => return Ok(None),
        IndexPlan::Range { name, .. } => (
            name,
            plan_column_of("index", &DataType::Int64, None, &ColumnStats::default())?,
        ),
        IndexPlan::Streamed { name, elem, .. } => (name, elem.clone()),
    };
    out.group
        .set_attr(&format!("{key}_variety"), &text("regular"))?;
    let fill = out.start_array(key, &elem.ty, &[rows as u64])?;
    value_attrs(out, key, &elem, name.as_deref())?;
    regular_attrs(out, key, &elem)?;
    Ok(match plan {
        IndexPlan::Range { start, step, .. } => Some(Filling::Range {
            fill,
            start: *start,
            step: *step,
            next: 0,
        }),
        IndexPlan::Streamed { pos, .. } => Some(Filling::Array {
            fill,
            fields: vec![(*pos, elem.enc.clone())],
            esize: elem.ty.size(),
        }),
        IndexPlan::Gathered(_) => None,
    })
}

/// Value `i` of the RangeIndex `start`, `step` (an error past int64, which pandas' int64
/// index cannot hold either).
fn range_value(start: i64, step: i64, i: usize) -> Result<i64> {
    i64::try_from(i)
        .ok()
        .and_then(|i| step.checked_mul(i))
        .and_then(|v| start.checked_add(v))
        .ok_or_else(|| {
            Error::invalid_input(format!(
                "row {i} of the RangeIndex from {start} by {step} is past int64"
            ))
        })
}

/// The array (or VLArray) of block `b` at `name`, with its attributes.
fn start_block(out: &Out<'_>, name: &str, b: &Block, rows: usize, series: bool) -> Result<Filling> {
    if b.is_objects() {
        let (pos, _) = b
            .fields
            .first()
            .ok_or_else(|| Error::mismatch("an object block without a column"))?;
        let dates = b.elem.enc == Enc::Dates;
        let vl = out
            .group
            .create_vlarray(name, VlAtom::VlString, "", out.filters)?;
        vl.set_attr("PSEUDOATOM", &text("object"))?;
        vl.set_attr("transposed", &flag(true))?;
        if !dates {
            vl.set_attr("value_type", &text("str"))?;
        }
        return Ok(Filling::Objects {
            vl,
            pos: *pos,
            dates,
            pickle: ObjectPickle::new(rows)?,
        });
    }
    let k = b.fields.len();
    let shape = if series {
        vec![rows as u64]
    } else {
        vec![rows as u64, k as u64]
    };
    let fill = out.start_array(name, &b.elem.ty, &shape)?;
    let typed = ["datetime64", "timedelta64", "period["];
    if typed.iter().any(|t| b.elem.dtype.starts_with(t)) {
        out.set(name, "value_type", &text(&b.elem.dtype))?;
    }
    if let Some((_, tz)) = b
        .elem
        .info
        .iter()
        .find(|(k, _)| *k == Value::Str("tz".into()))
    {
        out.set(name, "tz", &tz_attr(tz)?)?;
    }
    Ok(Filling::Array {
        fill,
        fields: b.fields.clone(),
        esize: b.elem.ty.size(),
    })
}

impl Filling {
    /// Rows `from..from + k` of `batch`.
    fn put(
        &mut self,
        batch: &arrow_array::RecordBatch,
        from: usize,
        k: usize,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let column = |pos: usize| {
            batch
                .columns()
                .get(pos)
                .ok_or_else(|| Error::mismatch(format!("a record batch without field {pos}")))
        };
        match self {
            Filling::Range {
                fill,
                start,
                step,
                next,
            } => {
                buf.clear();
                for i in *next..*next + k {
                    buf.extend_from_slice(&range_value(*start, *step, i)?.to_le_bytes());
                }
                *next += k;
                fill.append(buf)
            }
            Filling::Array {
                fill,
                fields,
                esize,
            } => {
                let width = fields.len() * *esize;
                buf.clear();
                buf.resize(k * width, 0);
                for (j, (pos, enc)) in fields.iter().enumerate() {
                    encode(enc, column(*pos)?.as_ref(), from, k, buf, width, j * *esize)?;
                }
                fill.append(buf)
            }
            Filling::Objects {
                pos, dates, pickle, ..
            } => {
                let a = column(*pos)?.slice(from, k);
                if *dates {
                    pickle.push_dates(a.as_ref())
                } else {
                    pickle.push_strings(a.as_ref())
                }
            }
        }
    }

    /// Checks every row was written; an object block's pickle written as its one row.
    fn finish(self) -> Result<()> {
        match self {
            Filling::Array { fill, .. } | Filling::Range { fill, .. } => fill.finish(),
            Filling::Objects { mut vl, pickle, .. } => vl.append_bytes(&pickle.finish()?),
        }
    }
}

/// Adds the batch's index columns to the gathered ones (one list per level).
fn gather(
    gathered: &mut Vec<Vec<ArrayRef>>,
    levels: &[GatheredLevel],
    batch: &arrow_array::RecordBatch,
) -> Result<()> {
    gathered.resize_with(levels.len(), Vec::new);
    for (parts, level) in gathered.iter_mut().zip(levels) {
        if let LevelSource::Field(pos) = level.source {
            let a = batch
                .columns()
                .get(pos)
                .ok_or_else(|| Error::mismatch(format!("a record batch without field {pos}")))?;
            parts.push(a.clone());
        }
    }
    Ok(())
}

/// The gathered index levels' values, whole.
fn gathered_index(
    levels: &[GatheredLevel],
    mut gathered: Vec<Vec<ArrayRef>>,
    rows: usize,
) -> Result<Vec<IndexPart>> {
    gathered.resize_with(levels.len(), Vec::new);
    levels
        .iter()
        .zip(gathered)
        .map(|(level, parts)| {
            let values: ArrayRef = match level.source {
                LevelSource::Range { start, step } => Arc::new(
                    (0..rows)
                        .map(|i| range_value(start, step, i))
                        .collect::<Result<Int64Array>>()?,
                ),
                LevelSource::Field(_) => {
                    let parts: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
                    arrow_select::concat::concat(&parts)
                        .map_err(|e| Error::mismatch(format!("an index level: {e}")))?
                }
            };
            Ok(IndexPart {
                name: level.name.clone(),
                values,
                meta: level.meta.clone(),
            })
        })
        .collect()
}

/// The column labels of the columns at `which`, one index level per column level, each of
/// the dtype pandas records for its level (integers stay integers).
fn label_index(plan: &FixedPlan, which: &[usize]) -> Result<Vec<IndexPart>> {
    let column_levels = plan.level_names.len().max(1);
    (0..column_levels)
        .map(|l| {
            let parts = which
                .iter()
                .map(|&c| plan.label_parts.get(c).and_then(|p| p.get(l)))
                .collect::<Option<Vec<&String>>>()
                .ok_or_else(|| Error::mismatch("a column label without its level"))?;
            let dtype = plan.level_dtypes.get(l).map_or("object", String::as_str);
            Ok(IndexPart {
                name: plan
                    .level_names
                    .get(l)
                    .cloned()
                    .flatten()
                    .filter(|_| column_levels > 1),
                values: typed_labels(parts.into_iter().map(String::as_str), dtype)?,
                meta: None,
            })
        })
        .collect()
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

/// One level of an index to write: its name, values, pandas metadata (column labels are
/// written as pandas writes an `Index` of labels).
struct IndexPart {
    name: Option<String>,
    values: ArrayRef,
    meta: Option<ColumnMeta>,
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
        out.put_array(key, codes)?;
        let cats = IndexPart {
            name: None,
            values: categories,
            meta: None,
        };
        write_index(out, &format!("{key}_categories"), vec![cats])?;
        out.set(key, "kind", &text("category"))?;
        out.set(key, "name", &name_attr(level.name.as_deref())?)?;
        return out.set(key, "ordered", &flag(ordered));
    }
    let elem = write_values(out, key, &level)?;
    regular_attrs(out, key, &elem)
}

/// The attributes of a regular index's node beyond its values' (`kind`, `name`): a
/// PeriodIndex's `index_class` and `freq`, a DatetimeIndex's `index_class`, `freq`, `tz`.
fn regular_attrs(out: &Out<'_>, key: &str, elem: &Elem) -> Result<()> {
    if let Some(offset) = crate::offsets::period_index_offset(&elem.dtype)? {
        // A PeriodIndex: its ordinals, `index_class` period, `freq` the pickled offset.
        out.set(key, "index_class", &text("period"))?;
        return out.set(key, "freq", &pickled(&offset)?);
    }
    let tz = elem
        .info
        .iter()
        .find(|(k, _)| *k == Value::Str("tz".into()));
    if elem.index_kind.starts_with("datetime64") {
        out.set(key, "index_class", &text("datetime"))?;
    }
    if elem.index_kind.starts_with("datetime64") || elem.index_kind.starts_with("timedelta64") {
        out.set(key, "freq", &pickled(&Value::None)?)?;
    }
    if let Some((_, tz)) = tz {
        out.set(key, "tz", &tz_attr(tz)?)?;
    }
    Ok(())
}

/// Level `i` of a MultiIndex at `key`: its unique values (first-seen order) and its codes
/// (-1 for missing), as pandas' `write_multi_index` writes them.
fn write_level(out: &Out<'_>, key: &str, i: usize, level: IndexPart) -> Result<()> {
    check_multi_level(i, level.values.data_type(), level.meta.as_ref())?;
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
    out.set(&level_key, &format!("{key}_name{shown}"), &name)?;
    out.put_array(
        &format!("{key}_label{i}"),
        coded_from(&codes, part.values.len()),
    )
}

/// pandas' refusal of MultiIndex level `i` of type `dt` when it is an extension dtype.
fn check_multi_level(i: usize, dt: &DataType, meta: Option<&ColumnMeta>) -> Result<()> {
    let extension = matches!(
        dt,
        DataType::Dictionary(..) | DataType::Timestamp(_, Some(_))
    ) || meta.is_some_and(|m| m.is_masked() || m.numpy_type.starts_with("period["));
    if extension {
        return Err(Error::unsupported(format!(
            "pandas cannot store the MultiIndex level {i} ({dt}) in the fixed format: \
             \"Saving a MultiIndex with an extension dtype is not supported.\""
        )));
    }
    Ok(())
}

fn dates_index_refusal() -> Error {
    Error::unsupported("writing an index of date values in the fixed format is not implemented")
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
    out.put_array(
        key,
        RawData {
            ty: elem.ty.clone(),
            shape: vec![rows],
            bytes,
        },
    )?;
    value_attrs(out, key, &elem, level.name.as_deref())?;
    Ok(elem)
}

/// The attributes of an array of index values: `kind`, `name` and, for strings, `nan_rep`.
fn value_attrs(out: &Out<'_>, key: &str, elem: &Elem, name: Option<&str>) -> Result<()> {
    // A PeriodIndex is stored as its int64 ordinals.
    let kind = match elem.index_kind.as_str() {
        "period" => "integer",
        k => k,
    };
    out.set(key, "kind", &text(kind))?;
    out.set(key, "name", &name_attr(name)?)?;
    if let Enc::Str { nan_rep, .. } = &elem.enc {
        // pandas 3.1 (GH#9604) records the index's sentinel, empty when no value is missing.
        out.set(
            key,
            "nan_rep",
            &text(nan_rep.as_deref().unwrap_or_default()),
        )?;
    }
    Ok(())
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

/// The pickle of a 1-d numpy object array of `rows` items, as
/// `pickle.dumps(np.asarray(values, dtype=object))` reads back, made as the items come: the
/// array's pickle up to its list of items, the items, then the rest. The format stores it as
/// one VLArray row: held whole until the last item.
struct ObjectPickle {
    bytes: Vec<u8>,
    rows: usize,
    items: usize,
}

/// What follows the items in an object array's pickle: the list's APPENDS `e`, the end of
/// the state tuple `t`, BUILD `b`, STOP `.`.
const OBJECT_PICKLE_TAIL: &[u8] = b"etb.";

impl ObjectPickle {
    fn new(rows: usize) -> Result<ObjectPickle> {
        let empty = object_array_pickle(rows as i64, Vec::new())?;
        // The empty list is `](` (EMPTY_LIST, MARK) then the tail.
        let head = empty
            .strip_suffix(OBJECT_PICKLE_TAIL)
            .filter(|h| h.ends_with(b"]("))
            .ok_or_else(|| Error::mismatch("an object array's pickle of an unexpected shape"))?;
        Ok(ObjectPickle {
            bytes: head.to_vec(),
            rows,
            items: 0,
        })
    }

    fn push(&mut self, v: &Value) -> Result<()> {
        if self.items >= self.rows {
            return Err(Error::mismatch(format!(
                "more than the {} items of an object array",
                self.rows
            )));
        }
        sciio_pickle::write_protocol3_item(v, &mut self.bytes)?;
        self.items += 1;
        Ok(())
    }

    /// The items of a string array as Python objects (missing values `nan`; `None` in an
    /// object column of missing values).
    fn push_strings(&mut self, a: &dyn Array) -> Result<()> {
        let mut put = |v: Option<&str>| {
            self.push(&v.map_or(Value::Float(f64::NAN), |s| Value::Str(s.to_string())))
        };
        match a.data_type() {
            DataType::Utf8 => a.as_string::<i32>().iter().try_for_each(&mut put),
            DataType::LargeUtf8 => a.as_string::<i64>().iter().try_for_each(&mut put),
            DataType::Utf8View => a.as_string_view().iter().try_for_each(&mut put),
            // pandas' object column of missing values holds None (pd.read_parquet of null).
            DataType::Null => (0..a.len()).try_for_each(|_| self.push(&Value::None)),
            other => Err(Error::mismatch(format!("{other} as strings"))),
        }
    }

    /// The items of a date32 array as pickled `datetime.date` objects (missing values
    /// `None`, as pandas keeps them in an object column).
    fn push_dates(&mut self, a: &dyn Array) -> Result<()> {
        use arrow_array::types::Date32Type;
        let global = Value::Global {
            module: "datetime".into(),
            name: "date".into(),
        };
        let days = a
            .as_primitive_opt::<Date32Type>()
            .ok_or_else(|| Error::mismatch(format!("{} as dates", a.data_type())))?;
        for d in days.iter() {
            let item = match d {
                None => Value::None,
                Some(d) => Value::Reduce {
                    callable: Box::new(global.clone()),
                    args: Box::new(Value::Tuple(vec![Value::Bytes(date_state(d)?)])),
                },
            };
            self.push(&item)?;
        }
        Ok(())
    }

    /// The whole pickle; every item must have come.
    fn finish(mut self) -> Result<Vec<u8>> {
        if self.items != self.rows {
            return Err(Error::mismatch(format!(
                "{} items of an object array of {}",
                self.items, self.rows
            )));
        }
        self.bytes.extend_from_slice(OBJECT_PICKLE_TAIL);
        Ok(self.bytes)
    }
}

/// The pickle of a 1-d numpy object array of `n` items holding `items` (`n` of them, or
/// none: [`ObjectPickle`] adds them), as `pickle.dumps(np.asarray(values, dtype=object))`
/// reads back.
fn object_array_pickle(n: i64, items: Vec<Value>) -> Result<Vec<u8>> {
    let global = |module: &str, name: &str| Value::Global {
        module: module.into(),
        name: name.into(),
    };
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

#[cfg(test)]
mod tests {
    use super::{range_value, ObjectPickle};

    #[test]
    fn a_range_index_past_int64_is_an_error_not_an_overflow() {
        assert_eq!(range_value(10, -3, 4).unwrap(), -2);
        let e = range_value(i64::MAX - 1, 1, 2).unwrap_err();
        assert!(e.to_string().contains("past int64"), "{e}");
        assert!(range_value(0, i64::MAX, 3).is_err());
    }

    #[test]
    fn an_object_pickle_takes_exactly_its_items() {
        use arrow_array::StringArray;
        let mut p = ObjectPickle::new(2).unwrap();
        p.push_strings(&StringArray::from(vec![Some("a")])).unwrap();
        // One item short.
        assert!(ObjectPickle::new(2).unwrap().finish().is_err());
        p.push_strings(&StringArray::from(vec![None::<&str>]))
            .unwrap();
        assert!(p.push_strings(&StringArray::from(vec![Some("c")])).is_err());
        let bytes = p.finish().unwrap();
        let v = sciio_pickle::parse(&bytes).unwrap();
        assert!(format!("{v:?}").contains("\"a\""), "{v:?}");
    }
}
