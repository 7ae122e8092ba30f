//! Writing a [`Frame`] as a key of a pandas HDFStore, laid out as pandas 3 writes it
//! (`df.to_hdf(path, key=key, format="table")`; the reference is `pandas/io/pytables.py`):
//!
//! * the group `key` with pandas' attributes: `pandas_type` `frame_table`, `table_type`
//!   (`appendable_frame`, `appendable_multiframe` for a MultiIndex), `encoding`, `errors`,
//!   `levels`, `nan_rep`, `data_col_nan_rep`, `mi_level_nan_rep`, and the pickled (protocol 0,
//!   as PyTables pickles them) `index_cols`, `values_cols`, `non_index_axes`, `data_columns`,
//!   `info`;
//! * one PyTables Table `key/table`: the `index` column, then `values_block_N` columns (the
//!   columns of one numpy dtype together, k values per row; strings, categoricals and
//!   tz-aware datetimes one block each), then the data columns; on the table the
//!   `{col}_kind` (pickled labels), `{col}_dtype`, `{col}_meta` (`str`, `category` or a pickled
//!   `None`), `{col}_nan_rep`, `index_kind`, `index_nan_rep`;
//! * strings as UTF-8 byte strings of the longest value's length, missing values as the
//!   column's own sentinel (pandas 3.1, GH#9604: `nan`, or `_nan_`, `__nan__`, ... when a value
//!   is `nan`; recorded in `{col}_nan_rep` when a value is missing, in `index_nan_rep` always,
//!   empty when none is), so that pandas reads a literal "nan" back as text;
//!   datetimes and timedeltas as int64 in their unit (UTC instants, the zone in `info`),
//!   categoricals as codes with the categories in a series table `key/meta/{col}/meta`;
//! * a MultiIndex as data columns (its level names, `level_N` when unnamed) over an integer
//!   index column;
//! * with [`WriteOptions::series`], the frame's one column as a Series: `pandas_type`
//!   `series_table`, `table_type` `appendable_series` (`appendable_multiseries` over a
//!   MultiIndex), the values a data column named by the column's label (`fixed`: `series`,
//!   arrays `index` and `values`, attribute `name`).
//!
//! PyTables' own search index (`_i_table`, built by pandas' default `index=True`) is not
//! written: `pd.read_hdf` and `HDFStore.select(key, where=...)` work without it (queries scan
//! the table in-kernel instead of using the index; python/hdfstore_write_cases.py checks that
//! `where` on string data columns and the index gives the rows it gives on pandas' own key).

mod attrs;
mod block_order;
mod fixed;
mod passes;
mod plan;

use std::collections::HashSet;
use std::path::Path;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch};
use sciio_core::{Error, Result};
use sciio_pandas::{Frame, FrameSchema, IndexLevel};
use sciio_pickle::Value;
use sciio_pytables::sciio_hdf5::{Field, H5Type};
use sciio_pytables::write::{Filters, PtGroup, PtTable, PtWriter};

use crate::table::StoredSentinel;
use attrs::{flag, i64_attr, pickled, text};
use block_order::BlockKind;
pub use passes::{field_needs, FramePasses, Survey};
use passes::{survey, SLICE_ROWS};
pub use plan::FieldNeed;
use plan::{encode, plan_column, plan_column_of, ColumnStats, Elem, Enc};

/// The layout of a key pandas writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StoreFormat {
    /// `format="table"`: one PyTables Table, appendable and queryable (the default here).
    #[default]
    Table,
    /// `format="fixed"`: the frame's blocks as arrays.
    Fixed,
}

impl std::str::FromStr for StoreFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<StoreFormat> {
        match s {
            "table" | "t" => Ok(StoreFormat::Table),
            "fixed" | "f" => Ok(StoreFormat::Fixed),
            other => Err(Error::invalid_input(format!(
                "unknown store format {other:?} (known: table, fixed)"
            ))),
        }
    }
}

/// Which columns become data columns (queryable columns of their own).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DataColumns {
    /// None (the columns go into `values_block_N`).
    #[default]
    None,
    /// Every column (`data_columns=True`).
    All,
    /// These columns.
    Some(Vec<String>),
}

impl std::str::FromStr for DataColumns {
    type Err = Error;
    /// `all`, or labels separated by commas.
    fn from_str(s: &str) -> Result<DataColumns> {
        Ok(match s {
            "all" => DataColumns::All,
            "" => DataColumns::None,
            list => DataColumns::Some(list.split(',').map(str::to_string).collect()),
        })
    }
}

/// How [`write`] writes a key.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// `table` (default) or `fixed`.
    pub format: StoreFormat,
    /// Data columns (`table` only).
    pub data_columns: DataColumns,
    /// Filters of the new table or arrays (`None`: uncompressed, pandas' default).
    pub filters: Option<Filters>,
    /// Append the rows to the existing `table` key (created when absent); otherwise an
    /// existing key is replaced, as `df.to_hdf(path, key=key)` replaces it.
    pub append: bool,
    /// Write the frame's one column as a pandas Series named by the column's label
    /// (`series.to_hdf(...)`: `pandas_type` `series_table` / `series`); `pd.read_hdf` then
    /// returns a Series. A frame of more or fewer columns is refused.
    pub series: bool,
}

/// What [`write`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The key's path.
    pub key: String,
    /// Rows written.
    pub rows: u64,
    /// Rows in the key afterwards.
    pub total_rows: u64,
}

/// Writes `frame` as `key` of the store at `path` (created when absent; otherwise the key is
/// added, replaced, or appended to with [`WriteOptions::append`]), so that
/// `pd.read_hdf(path, key)` returns the frame.
///
/// What pandas cannot store in the format is refused before anything is written, with
/// pandas' reason. A new file is written under a temporary name and moved into place; an
/// existing store is changed in place, as pandas changes it.
pub fn write(path: &Path, key: &str, frame: &Frame, options: &WriteOptions) -> Result<Written> {
    let key = check_key(key)?;
    if options.series {
        let n = frame.schema().columns().count();
        if n != 1 {
            return Err(Error::invalid_input(format!(
                "a Series key holds one column; the frame has {n}"
            )));
        }
    }
    let rows = frame.num_rows() as u64;
    if options.format == StoreFormat::Fixed {
        return write_fixed(
            path,
            key,
            frame.schema(),
            rows,
            &mut WholeFrame(frame),
            options,
        );
    }
    write_table(
        path,
        key,
        frame.schema(),
        rows,
        &mut WholeFrame(frame),
        options,
    )
}

/// A frame in memory, passed over as often as asked.
struct WholeFrame<'a>(&'a Frame);

impl FramePasses for WholeFrame<'_> {
    fn pass(&mut self) -> Result<Box<dyn Iterator<Item = Result<RecordBatch>> + '_>> {
        Ok(Box::new(self.0.batches().iter().cloned().map(Ok)))
    }
}

/// Writes the frame of `schema` and `rows` rows whose batches `frames` gives as a `table`
/// key, as [`write`] writes it (the same bytes), holding one record batch at a time: what
/// pandas decides from the whole frame is gathered by a first pass over the batches, then
/// the key is created (or appended to) and the batches written by a second.
///
/// A `fixed` key is written as [`write`] writes it, in one pass (a first one only when a
/// column's storage depends on its values: integers' missing values, a text index): its
/// number blocks and a plain index are created at their full size and filled slab by slab;
/// an object block (strings, dates) is one pickle by the format, gathered whole as the rows
/// come, and a MultiIndex or CategoricalIndex is gathered from the index columns.
pub fn write_streamed(
    path: &Path,
    key: &str,
    schema: &FrameSchema,
    rows: u64,
    frames: &mut dyn FramePasses,
    options: &WriteOptions,
) -> Result<Written> {
    let key = check_key(key)?;
    if options.series {
        let n = schema.columns().count();
        if n != 1 {
            return Err(Error::invalid_input(format!(
                "a Series key holds one column; the frame has {n}"
            )));
        }
    }
    if options.format == StoreFormat::Fixed {
        return write_fixed(path, key, schema, rows, frames, options);
    }
    write_table(path, key, schema, rows, frames, options)
}

/// The `fixed` format part of [`write`] and [`write_streamed`]: planned (and refused) before
/// the file is touched, then written in one pass over the batches.
fn write_fixed(
    path: &Path,
    key: String,
    schema: &FrameSchema,
    rows: u64,
    frames: &mut dyn FramePasses,
    options: &WriteOptions,
) -> Result<Written> {
    if options.append {
        return Err(Error::invalid_input(
            "pandas appends only to table-format keys: \"Can only append to Tables\"",
        ));
    }
    if options.data_columns != DataColumns::None {
        return Err(Error::invalid_input(
            "data columns belong to the table format (fixed keys have none)",
        ));
    }
    if rows == 0 || schema.columns().next().is_none() {
        return Err(Error::unsupported(
            "writing a frame without rows or columns in the fixed format is not implemented",
        ));
    }
    let n =
        usize::try_from(rows).map_err(|_| Error::unsupported(format!("a frame of {rows} rows")))?;
    let plan = fixed::plan(schema, n, frames, options.series)?;
    let writer = if path.exists() {
        PtWriter::open_append(path)
    } else {
        PtWriter::create(path)
    }
    .map_err(|e| e.with_file(path))?;
    let (parent, name) = parent_group(&writer, &key)?;
    if parent.contains(&name)? {
        parent.unlink(&name)?;
    }
    let group = parent.create_group(&name, "", None)?;
    fixed::write(&writer, &group, &key, &plan, frames, options.filters)?;
    writer.finish().map_err(|e| e.with_file(path))?;
    Ok(Written {
        key,
        rows,
        total_rows: rows,
    })
}

/// The `table` format part of [`write`] and [`write_streamed`].
fn write_table(
    path: &Path,
    key: String,
    schema: &FrameSchema,
    rows: u64,
    frames: &mut dyn FramePasses,
    options: &WriteOptions,
) -> Result<Written> {
    let empty = rows == 0 || schema.columns().next().is_none();
    if empty && !options.append {
        return Err(Error::invalid_input(
            "pandas writes no table for a frame without rows or columns (\"Writing an empty \
             DataFrame or Series with format='table' or append=True is a no-op\")",
        ));
    }
    let exists = path.exists();
    let mut layout = if options.append && exists {
        existing_layout(path, &key)?
    } else {
        None
    };
    let appending = layout.is_some();
    if empty {
        // pandas: appending nothing leaves the store as it is.
        let total = match &layout {
            Some(_) => crate::HdfStore::open(path)?
                .pytables()
                .node(&format!("{key}/table"))?
                .shape
                .first()
                .copied()
                .unwrap_or(0),
            None => 0,
        };
        return Ok(Written {
            key,
            rows: 0,
            total_rows: total,
        });
    }
    // pandas stores a Series' values as a data column (`data_columns=[name]`).
    let data_columns = if options.series {
        &DataColumns::All
    } else {
        &options.data_columns
    };
    let watch = layout
        .as_ref()
        .map(Existing::own_sentinels)
        .unwrap_or_default();
    let needs = field_needs(schema);
    let stats = survey(rows, &needs, frames.survey(&needs)?, &watch)?;
    let table = plan_table(
        schema,
        rows,
        &stats,
        data_columns,
        layout.as_mut(),
        options.series,
    )?;
    let writer = if exists {
        PtWriter::open_append(path)
    } else {
        PtWriter::create(path)
    }
    .map_err(|e| e.with_file(path))?;
    let total = if appending {
        let mut t = writer.table(&format!("{key}/table"))?;
        append_rows(&mut t, &table, frames.pass()?)?;
        let table_wide: Vec<String> = layout
            .iter()
            .flat_map(|e| &e.sentinels)
            .filter(|(_, s)| matches!(s, StoredSentinel::TableWide(_)))
            .map(|(n, _)| n.clone())
            .collect();
        set_sentinels(&t, &table, &table_wide)?;
        t.nrows()
    } else {
        let (parent, name) = parent_group(&writer, &key)?;
        if parent.contains(&name)? {
            parent.unlink(&name)?;
        }
        let group = parent.create_group(&name, "", None)?;
        write_new(
            &group,
            &table,
            frames,
            rows,
            options.filters,
            options.series,
        )?
    };
    writer.finish().map_err(|e| e.with_file(path))?;
    Ok(Written {
        key,
        rows,
        total_rows: total,
    })
}

/// `/a/b/df` with every part a plain name.
fn check_key(key: &str) -> Result<String> {
    let parts: Vec<&str> = key.split('/').filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return Err(Error::invalid_input(
            "a store key names a group below the root (such as /df)",
        ));
    }
    for p in &parts {
        if *p == "." || *p == ".." || p.contains('\0') {
            return Err(Error::invalid_input(format!(
                "{p:?} cannot name a store key's group"
            )));
        }
    }
    Ok(format!("/{}", parts.join("/")))
}

/// The parent group of `key` (created as PyTables groups where missing) and the key's name.
fn parent_group(writer: &PtWriter, key: &str) -> Result<(PtGroup, String)> {
    let mut parts: Vec<&str> = key.split('/').filter(|p| !p.is_empty()).collect();
    let name = parts.pop().unwrap_or_default().to_string();
    let mut group = writer.root()?;
    let mut path = String::new();
    for p in parts {
        path = format!("{path}/{p}");
        group = if group.contains(p)? {
            writer.group(&path)?
        } else {
            group.create_group(p, "", None)?
        };
    }
    Ok((group, name))
}

/// A column of the table: its field, the labels it holds and where their values come from.
#[derive(Debug)]
struct TableCol {
    /// Field name: `index`, `values_block_N`, a data column's label.
    name: String,
    /// Labels (`{name}_kind`).
    labels: Vec<String>,
    /// One source per label.
    sources: Vec<Source>,
    /// The encoding of each source (a block's members may differ: int64 and a decoded
    /// dictionary of int64).
    encs: Vec<Enc>,
    elem: Elem,
    /// A values block (an array of `labels.len()` per row) rather than a scalar column.
    block: bool,
}

#[derive(Debug, Clone)]
enum Source {
    /// The Arrow field at this position of the record batches.
    Field(usize),
    /// Row numbers `start + i * step` (a RangeIndex).
    Range { start: i64, step: i64 },
}

#[derive(Debug)]
struct TablePlan {
    index: TableCol,
    /// Values blocks, then data columns.
    cols: Vec<TableCol>,
    /// Column labels in frame order (MultiIndex level names first).
    order: Vec<String>,
    data_columns: Vec<String>,
    /// MultiIndex level names (empty for a flat index).
    levels: Vec<String>,
    index_name: Option<String>,
}

impl TablePlan {
    fn row_type(&self) -> H5Type {
        let mut fields = Vec::new();
        let mut offset = 0;
        for c in std::iter::once(&self.index).chain(&self.cols) {
            let ty = if c.block {
                H5Type::Array {
                    base: Box::new(c.elem.ty.clone()),
                    dims: vec![c.labels.len()],
                }
            } else {
                c.elem.ty.clone()
            };
            let size = ty.size();
            fields.push(Field {
                name: c.name.clone(),
                offset,
                ty,
            });
            offset += size;
        }
        H5Type::Compound {
            size: offset,
            fields,
        }
    }
}

/// The layout of an existing key that rows are appended to.
#[derive(Debug)]
struct Existing {
    row: H5Type,
    data_columns: Vec<String>,
    order: Vec<String>,
    /// Each values block (field name) and the labels of its columns, in the table's order.
    blocks: Vec<(String, Vec<String>)>,
    /// Categories of each categorical column, by field name.
    categories: Vec<(String, ArrayRef)>,
    /// How each string column (`index` included) marks missing values, by field name.
    sentinels: Vec<(String, StoredSentinel)>,
    /// The stored values of a string column that could be sentinels, by field name: read
    /// when a sentinel is first chosen for it (rows appended with its first missing value).
    stored: StoredValues,
}

/// The stored values of a key's string columns, read on demand.
#[derive(Debug)]
struct StoredValues {
    path: std::path::PathBuf,
    key: String,
}

impl StoredValues {
    fn of(&self, col: &str) -> Result<std::collections::HashSet<String>> {
        let store = crate::HdfStore::open(&self.path)?;
        let candidate = |v: &str| plan::sentinel_number(v).is_some();
        crate::table::stored_strings(store.pytables(), &self.key, col, &candidate)
    }
}

fn existing_layout(path: &Path, key: &str) -> Result<Option<Existing>> {
    let store = crate::HdfStore::open(path)?;
    let Some(info) = store.key(key)? else {
        return Ok(None);
    };
    if info.format() != "table" || !info.is_pandas() {
        return Err(Error::invalid_input(format!(
            "cannot append to {key}: it is a {} key, and pandas appends only to table-format \
             keys (\"Can only append to Tables\")",
            info.format()
        ))
        .with_file(path));
    }
    let file = store.pytables();
    let attrs = crate::attrs::Attrs::read(file, key)?;
    let data_columns = crate::table::str_list(&attrs, "data_columns")?;
    let order = crate::table::non_index_labels(&attrs)?;
    let row = file
        .node(&format!("{key}/table"))?
        .dtype
        .ok_or_else(|| Error::format("the key holds no table").with_node(key.to_string()))?;
    let mut categories = Vec::new();
    let mut blocks = Vec::new();
    let tattrs = crate::attrs::Attrs::read(file, &format!("{key}/table"))?;
    for name in crate::table::str_list(&attrs, "values_cols")? {
        // Labels that are not text leave the block unmatched: the plan's order then stands.
        let labels = crate::table::str_list(&tattrs, &format!("{name}_kind")).unwrap_or_default();
        blocks.push((name.clone(), labels));
        if tattrs.str(&format!("{name}_meta"))?.as_deref() == Some("category") {
            let cats = crate::table::categories(file, key, &name)?;
            categories.push((name, cats));
        }
    }
    let sentinels = crate::table::stored_sentinels(file, key, &attrs)?;
    Ok(Some(Existing {
        row,
        data_columns,
        order,
        blocks,
        categories,
        sentinels,
        stored: StoredValues {
            path: path.to_path_buf(),
            key: key.to_string(),
        },
    }))
}

impl Existing {
    /// The column sentinels stored in the key: the first pass notes where appended rows hold
    /// one (pandas refuses them).
    fn own_sentinels(&self) -> HashSet<String> {
        self.sentinels
            .iter()
            .filter_map(|(_, s)| match s {
                StoredSentinel::Own(Some(s)) => Some(s.clone()),
                _ => None,
            })
            .collect()
    }
}

/// The values blocks (in the order of their first column, of the `kinds` pyarrow makes them
/// of) in the order of the blocks of the frame `pd.read_parquet` gives, which `to_hdf` keeps
/// ([`block_order`]), renamed `values_block_N` in that order. Left in column order when a
/// block's kind is unknown. With data columns pandas reindexes the frame first
/// (`_get_blocks_and_items`): not reordered then.
fn in_pyarrow_order(blocks: Vec<TableCol>, kinds: &[Option<BlockKind>]) -> Vec<TableCol> {
    let order = kinds
        .iter()
        .copied()
        .collect::<Option<Vec<_>>>()
        .and_then(|k| block_order::pyarrow_order(&k));
    let Some(order) = order.filter(|o| o.len() == blocks.len()) else {
        return blocks;
    };
    let mut slots: Vec<Option<TableCol>> = blocks.into_iter().map(Some).collect();
    order
        .iter()
        .filter_map(|&i| slots.get_mut(i).and_then(Option::take))
        .enumerate()
        .map(|(n, mut b)| {
            b.name = format!("values_block_{n}");
            b
        })
        .collect()
}

/// The table of a frame (its schema, rows and each field's statistics): index, values
/// blocks, data columns. When appending, the data
/// columns are the existing key's and the plan must match its layout.
fn plan_table(
    schema: &FrameSchema,
    rows: u64,
    stats: &[ColumnStats],
    data_columns: &DataColumns,
    existing: Option<&mut Existing>,
    series: bool,
) -> Result<TablePlan> {
    let stats_of = |pos: usize| -> Result<&ColumnStats> {
        stats
            .get(pos)
            .ok_or_else(|| Error::mismatch(format!("no field {pos} in the record batches")))
    };
    let field_of = |pos: usize| schema.arrow_schema().field(pos).clone();
    let meta_of = |pos: usize| schema.fields().get(pos).map(|f| f.meta.clone());

    // Column labels and their planned storage.
    let mut columns: Vec<(String, Source, Elem)> = Vec::new();
    for c in schema.columns() {
        // pandas stores an unnamed Series' values in the column `values` (and reads that
        // column back as an unnamed Series).
        let label = match c.label() {
            _ if series && c.meta.name.is_none() => "values".to_string(),
            l => l.unwrap_or("None").to_string(),
        };
        if schema.column_levels().len() > 1 {
            return Err(Error::unsupported(
                "pandas' table format cannot store a frame whose column labels have several \
                 levels (a column MultiIndex)",
            ));
        }
        c.check_decodable()?;
        let pos = schema.field_position(&c.field_name)?;
        let f = field_of(pos);
        let elem = plan_column_of(&label, f.data_type(), meta_of(pos).as_ref(), stats_of(pos)?)?;
        if elem.enc == Enc::Dates {
            return Err(plan::date_refusal(&label));
        }
        columns.push((label, Source::Field(pos), elem));
    }

    // The index: one level as the `index` column; several as data columns.
    let rows = i64::try_from(rows).map_err(|_| Error::invalid_input("over 2^63 rows"))?;
    let level_plan = |i: usize, level: &IndexLevel| -> Result<(Source, Elem)> {
        match level {
            IndexLevel::Range(r) => Ok((
                Source::Range {
                    start: r.start,
                    step: r.step,
                },
                plan_column(
                    "index",
                    &arrow_schema::DataType::Int64,
                    None,
                    &[&Int64Array::from(Vec::<i64>::new())],
                )?,
            )),
            IndexLevel::Column { field, .. } => {
                let pos = schema.field_position(field)?;
                let f = field_of(pos);
                if matches!(f.data_type(), arrow_schema::DataType::Dictionary(..)) {
                    return Err(Error::unsupported(format!(
                        "index level {i}: writing a CategoricalIndex is not implemented"
                    )));
                }
                let label = schema.index_level_label(i);
                let elem =
                    plan_column_of(&label, f.data_type(), meta_of(pos).as_ref(), stats_of(pos)?)?;
                if elem.enc == Enc::Dates {
                    return Err(plan::date_refusal(&label));
                }
                Ok((Source::Field(pos), elem))
            }
        }
    };
    let index_levels = schema.index();
    let mut levels = Vec::new();
    let mut index_name = None;
    let index = if index_levels.len() > 1 {
        let mut level_cols = Vec::new();
        for (i, level) in index_levels.iter().enumerate() {
            let name = level
                .name()
                .map_or_else(|| format!("level_{i}"), str::to_string);
            if columns.iter().any(|(l, ..)| *l == name) {
                return Err(Error::unsupported(format!(
                    "the MultiIndex level {name:?} has the name of a column (pandas stores the \
                     levels as columns of that name)"
                )));
            }
            let (source, elem) = level_plan(i, level)?;
            levels.push(name.clone());
            level_cols.push((name, source, elem));
        }
        level_cols.extend(columns);
        columns = level_cols;
        let (source, elem) = level_plan(
            0,
            &IndexLevel::Range(sciio_pandas::RangeIndex::new(0, rows, 1)),
        )?;
        (source, elem)
    } else {
        let level = index_levels
            .first()
            .cloned()
            .unwrap_or(IndexLevel::Range(sciio_pandas::RangeIndex::new(0, rows, 1)));
        index_name = level.name().map(str::to_string);
        level_plan(0, &level)?
    };
    let mut index_elem = index.1;
    if index_elem.categories.is_some() {
        return Err(Error::unsupported("a categorical index is not written"));
    }
    if let Some(offset) = crate::offsets::period_index_offset(&index_elem.dtype)? {
        // pandas reads an int64 index column with a `freq` in `info` as a PeriodIndex.
        index_elem.index_kind = "integer".into();
        index_elem.info = vec![(Value::Str("freq".into()), offset)];
    }
    if let Some(tz) = index_elem
        .info
        .iter()
        .find(|(k, _)| *k == Value::Str("tz".into()))
    {
        let tz = tz.clone();
        index_elem.info = vec![tz];
    }
    let order: Vec<String> = columns.iter().map(|(l, ..)| l.clone()).collect();
    {
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = order.iter().find(|l| !seen.insert(*l)) {
            return Err(Error::unsupported(format!(
                "pandas cannot store duplicate column labels ({dup:?} twice) in a table"
            )));
        }
    }

    // Data columns: the levels, then those asked for (or the existing key's).
    let mut dc: Vec<String> = levels.clone();
    match (&existing, data_columns) {
        (Some(e), _) => {
            dc = e.data_columns.clone();
        }
        (None, DataColumns::None) => {}
        (None, DataColumns::All) => {
            dc.extend(order.iter().filter(|l| !levels.contains(l)).cloned());
        }
        (None, DataColumns::Some(names)) => {
            for n in names {
                if !order.contains(n) {
                    return Err(Error::invalid_input(format!(
                        "data column {n:?} is not a column of the frame (columns: {})",
                        order.join(", ")
                    )));
                }
                if !dc.contains(n) {
                    dc.push(n.clone());
                }
            }
        }
    }

    // Values blocks: columns of one consolidating dtype together, in first-seen order (then
    // put in pyarrow's order, below).
    let mut blocks: Vec<TableCol> = Vec::new();
    let mut kinds: Vec<Option<BlockKind>> = Vec::new();
    let mut data: Vec<TableCol> = Vec::new();
    for (position, (label, source, elem)) in columns.into_iter().enumerate() {
        if dc.contains(&label) {
            data.push(TableCol {
                name: label.clone(),
                labels: vec![label],
                sources: vec![source],
                encs: vec![elem.enc.clone()],
                elem,
                block: false,
            });
            continue;
        }
        let key = elem.block_key();
        match blocks
            .iter_mut()
            .find(|b| key.is_some() && b.elem.block_key() == key)
        {
            Some(b) => {
                b.labels.push(label);
                b.sources.push(source);
                b.encs.push(elem.enc);
            }
            None => {
                kinds.push(match elem.consolidates {
                    true => {
                        block_order::writer_type(elem.writer_dtype()).map(BlockKind::Consolidated)
                    }
                    false => Some(BlockKind::Alone(position)),
                });
                blocks.push(TableCol {
                    name: format!("values_block_{}", blocks.len()),
                    labels: vec![label],
                    sources: vec![source],
                    encs: vec![elem.enc.clone()],
                    elem,
                    block: true,
                })
            }
        }
    }
    if data.is_empty() {
        blocks = in_pyarrow_order(blocks, &kinds);
    }
    // Data columns in data_columns order.
    data.sort_by_key(|c| dc.iter().position(|d| *d == c.name));
    blocks.extend(data);
    let mut plan = TablePlan {
        index: TableCol {
            name: "index".into(),
            labels: vec!["index".into()],
            sources: vec![index.0],
            encs: vec![index_elem.enc.clone()],
            elem: index_elem,
            block: false,
        },
        cols: blocks,
        order,
        data_columns: dc,
        levels,
        index_name,
    };
    if let Some(e) = existing {
        keep_sentinels(&mut plan, e, stats)?;
        match_existing(&mut plan, e)?;
    }
    Ok(plan)
}

/// Makes the string columns of an appended plan mark missing values as the stored rows do
/// (pandas 3.1's `create_axes`, GH#9604): a column's own sentinel is kept, a literal value
/// equal to it refused; a column without one yet gets one avoiding the stored values too, when
/// the appended rows bring its first missing value; a table written without per-column
/// sentinels keeps its table-wide one.
fn keep_sentinels(plan: &mut TablePlan, e: &Existing, stats: &[ColumnStats]) -> Result<()> {
    for c in std::iter::once(&mut plan.index).chain(plan.cols.iter_mut()) {
        let (Enc::Str { itemsize, nan_rep }, [Source::Field(pos)]) =
            (&mut c.elem.enc, c.sources.as_slice())
        else {
            continue;
        };
        let Some((_, stored)) = e.sentinels.iter().find(|(n, _)| *n == c.name) else {
            continue;
        };
        let values = stats
            .get(*pos)
            .ok_or_else(|| Error::mismatch(format!("no field {pos} in the record batches")))?;
        let missing = values.nulls();
        *nan_rep = match stored {
            StoredSentinel::TableWide(s) => Some(s.clone()),
            StoredSentinel::Own(Some(s)) => {
                if values.has_text(s) {
                    let label = c.labels.first().unwrap_or(&c.name);
                    return Err(sentinel_collision(label, s, c.name == "index"));
                }
                Some(s.clone())
            }
            StoredSentinel::Own(None) if missing => {
                let taken = e.stored.of(&c.name)?;
                Some(values.choose_sentinel(&taken))
            }
            StoredSentinel::Own(None) => None,
        };
        if let Some(s) = nan_rep.as_deref().filter(|_| missing) {
            *itemsize = (*itemsize).max(s.len());
        }
        c.encs = vec![c.elem.enc.clone(); c.sources.len()];
    }
    Ok(())
}

/// pandas' refusal of a value equal to the sentinel of the column it is appended to.
fn sentinel_collision(col: &str, sentinel: &str, index: bool) -> Error {
    let (what, end) = if index {
        ("Index column", "in this column")
    } else {
        ("column", "on disk")
    };
    Error::invalid_input(format!(
        "cannot append: pandas: \"Cannot store the string '{sentinel}' in {what} [{col}]: it \
         collides with the sentinel used to encode missing values {end}\""
    ))
}

/// Makes an appended plan take the existing table's layout: same fields and types (strings
/// up to the stored size), same labels, same categories.
/// The plan's values blocks in the order and under the names of the table's blocks of the
/// same columns, as pandas reorders the appended frame's blocks (`_get_blocks_and_items`
/// when the table exists); blocks matching none follow (the layout check refuses them).
fn in_existing_order(cols: &mut Vec<TableCol>, blocks: &[(String, Vec<String>)]) {
    let (mut mine, data): (Vec<TableCol>, Vec<TableCol>) =
        std::mem::take(cols).into_iter().partition(|c| c.block);
    let mut ordered = Vec::with_capacity(mine.len() + data.len());
    for (name, labels) in blocks {
        if let Some(i) = mine.iter().position(|c| &c.labels == labels) {
            let mut c = mine.remove(i);
            c.name = name.clone();
            ordered.push(c);
        }
    }
    ordered.extend(mine);
    ordered.extend(data);
    *cols = ordered;
}

fn match_existing(plan: &mut TablePlan, e: &Existing) -> Result<()> {
    let mismatch = |what: String| {
        Error::invalid_input(format!(
            "cannot append: {what} (pandas: \"invalid combination of [values_axes] on \
             appending data vs current table\")"
        ))
    };
    if plan.order != e.order {
        return Err(mismatch(format!(
            "the columns [{}] differ from the table's [{}]",
            plan.order.join(", "),
            e.order.join(", ")
        )));
    }
    in_existing_order(&mut plan.cols, &e.blocks);
    let H5Type::Compound { fields, .. } = &e.row else {
        return Err(Error::format("the key's table is not a compound"));
    };
    let cols: Vec<&mut TableCol> = std::iter::once(&mut plan.index)
        .chain(plan.cols.iter_mut())
        .collect();
    if cols.len() != fields.len() {
        return Err(mismatch(format!(
            "{} table columns where the table has {}",
            cols.len(),
            fields.len()
        )));
    }
    for (c, f) in cols.into_iter().zip(fields) {
        let base = match &f.ty {
            H5Type::Array { base, dims } if c.block => {
                if dims.as_slice() != [c.labels.len()] {
                    return Err(mismatch(format!("column {} holds other labels", f.name)));
                }
                (**base).clone()
            }
            t => t.clone(),
        };
        if c.name != f.name {
            return Err(mismatch(format!(
                "column {} where the table has {}",
                c.name, f.name
            )));
        }
        match (&mut c.elem.enc, &base) {
            (Enc::Str { itemsize, .. }, H5Type::FixedString { size, .. }) => {
                if *itemsize > *size {
                    return Err(Error::invalid_input(format!(
                        "cannot append: a string of {itemsize} bytes in column [{}], which \
                         holds at most {size} (pandas: \"Trying to store a string with len \
                         [{itemsize}] in [{}] column but this column has a limit of [{size}]! \
                         Consider using min_itemsize to preset the sizes on these columns\")",
                        c.name, c.name
                    )));
                }
                *itemsize = *size;
                c.elem.ty = base.clone();
                c.encs = vec![c.elem.enc.clone(); c.sources.len()];
            }
            _ if c.elem.ty.size() == base.size() && same_kind(&c.elem.ty, &base) => {}
            _ => {
                return Err(mismatch(format!(
                    "column {} is {} where the table holds {}",
                    c.name,
                    c.elem.dtype,
                    describe_type(&base)
                )))
            }
        }
        if let Some(new) = &c.elem.categories {
            let old = e
                .categories
                .iter()
                .find(|(n, _)| *n == c.name)
                .map(|(_, a)| a);
            let same = old.is_some_and(|o| same_values(o.as_ref(), new.as_ref()));
            if !same {
                return Err(Error::invalid_input(format!(
                    "cannot append: the categories of column [{}] differ from the stored ones \
                     (pandas: \"cannot append a categorical with different categories to the \
                     existing\")",
                    c.name
                )));
            }
        }
    }
    Ok(())
}

fn same_kind(a: &H5Type, b: &H5Type) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
        && match (a, b) {
            (H5Type::Int { signed: x, .. }, H5Type::Int { signed: y, .. }) => x == y,
            _ => true,
        }
}

fn describe_type(t: &H5Type) -> String {
    format!("{t:?}")
}

/// Equal values, whatever the Arrow string flavour.
fn same_values(a: &dyn Array, b: &dyn Array) -> bool {
    use arrow_cast_lite::display;
    a.len() == b.len() && (0..a.len()).all(|i| display(a, i) == display(b, i))
}

mod arrow_cast_lite {
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    use arrow_schema::DataType;

    /// A value as text (strings) or its Arrow data (anything else), for equality.
    pub(super) fn display(a: &dyn Array, i: usize) -> String {
        match a.data_type() {
            DataType::Utf8 => a.as_string::<i32>().value(i).to_string(),
            DataType::LargeUtf8 => a.as_string::<i64>().value(i).to_string(),
            DataType::Utf8View => a.as_string_view().value(i).to_string(),
            _ => format!("{:?}", a.slice(i, 1).to_data().buffers()),
        }
    }
}

/// Encodes the rows of the record batches into the table's layout and appends them.
fn append_rows(
    table: &mut PtTable,
    plan: &TablePlan,
    batches: Box<dyn Iterator<Item = Result<RecordBatch>> + '_>,
) -> Result<()> {
    let row_type = plan.row_type();
    let row_size = row_type.size();
    let H5Type::Compound { fields, .. } = &row_type else {
        return Err(Error::format("row type"));
    };
    let mut global = 0usize;
    let mut buf = Vec::new();
    for batch in batches {
        let batch = batch?;
        let n = batch.num_rows();
        let mut from = 0;
        while from < n {
            let k = SLICE_ROWS.min(n - from);
            buf.clear();
            buf.resize(k * row_size, 0);
            for (c, f) in std::iter::once(&plan.index).chain(&plan.cols).zip(fields) {
                let esize = c.elem.ty.size();
                for (j, (src, enc)) in c.sources.iter().zip(&c.encs).enumerate() {
                    let at = f.offset + j * esize;
                    match src {
                        Source::Field(pos) => {
                            let a = batch.column(*pos);
                            encode(enc, a.as_ref(), from, k, &mut buf, row_size, at)?;
                        }
                        Source::Range { start, step } => {
                            for i in 0..k {
                                let v = start + step * (global + i) as i64;
                                buf[i * row_size + at..i * row_size + at + 8]
                                    .copy_from_slice(&v.to_le_bytes());
                            }
                        }
                    }
                }
            }
            table.append(&buf)?;
            from += k;
            global += k;
        }
    }
    Ok(())
}

fn str_list(items: &[String]) -> Value {
    Value::List(items.iter().map(|s| Value::Str(s.clone())).collect())
}

/// Writes a new key into `group`: attributes, table, categories. Returns the rows.
fn write_new(
    group: &PtGroup,
    plan: &TablePlan,
    frames: &mut dyn FramePasses,
    rows: u64,
    filters: Option<Filters>,
    series: bool,
) -> Result<u64> {
    let multi = !plan.levels.is_empty();
    let (pandas_type, table_type) = match (series, multi) {
        (false, false) => ("frame_table", "appendable_frame"),
        (false, true) => ("frame_table", "appendable_multiframe"),
        (true, false) => ("series_table", "appendable_series"),
        (true, true) => ("series_table", "appendable_multiseries"),
    };
    let mut info = vec![(
        Value::Int(1),
        Value::Dict(vec![
            (Value::Str("names".into()), Value::List(vec![Value::None])),
            (Value::Str("type".into()), Value::Str("Index".into())),
        ]),
    )];
    let mut index_info = plan.index.elem.info.clone();
    if let Some(name) = &plan.index_name {
        index_info.push((Value::Str("index_name".into()), Value::Str(name.clone())));
    }
    info.push((Value::Str("index".into()), Value::Dict(index_info)));
    for c in &plan.cols {
        info.push((Value::Str(c.name.clone()), Value::Dict(c.elem.info.clone())));
    }
    let values_cols: Vec<String> = plan.cols.iter().map(|c| c.name.clone()).collect();
    let mut table = write_table_node(
        group,
        plan,
        &TableAttrs {
            pandas_type,
            table_type,
            multi,
            info: Value::Dict(info),
            values_cols: &values_cols,
        },
        filters,
        rows,
    )?;
    append_rows(&mut table, plan, frames.pass()?)?;
    // Categories beside the table, as series tables `meta/{col}/meta`.
    if plan.cols.iter().any(|c| c.elem.categories.is_some()) {
        let meta = group.create_group("meta", "", None)?;
        for c in &plan.cols {
            if let Some(cats) = &c.elem.categories {
                write_categories(&meta, &c.name, cats, filters)?;
            }
        }
    }
    Ok(table.nrows())
}

struct TableAttrs<'a> {
    pandas_type: &'a str,
    table_type: &'a str,
    multi: bool,
    info: Value,
    values_cols: &'a [String],
}

/// The group's attributes and the empty table with its own.
fn write_table_node(
    group: &PtGroup,
    plan: &TablePlan,
    a: &TableAttrs<'_>,
    filters: Option<Filters>,
    rows: u64,
) -> Result<PtTable> {
    group.set_attr("data_col_nan_rep", &flag(true))?;
    group.set_attr("data_columns", &pickled(&str_list(&plan.data_columns))?)?;
    group.set_attr("encoding", &text("UTF-8"))?;
    group.set_attr("errors", &text("strict"))?;
    group.set_attr(
        "index_cols",
        &pickled(&Value::List(vec![Value::Tuple(vec![
            Value::Int(0),
            Value::Str("index".into()),
        ])]))?,
    )?;
    group.set_attr("info", &pickled(&a.info)?)?;
    if a.multi {
        group.set_attr("levels", &pickled(&str_list(&plan.levels))?)?;
    } else {
        group.set_attr("levels", &i64_attr(1))?;
    }
    group.set_attr("mi_level_nan_rep", &flag(a.multi))?;
    group.set_attr("nan_rep", &pickled(&Value::None)?)?;
    group.set_attr(
        "non_index_axes",
        &pickled(&Value::List(vec![Value::Tuple(vec![
            Value::Int(1),
            str_list(&plan.order),
        ])]))?,
    )?;
    group.set_attr("pandas_type", &text(a.pandas_type))?;
    group.set_attr("table_type", &text(a.table_type))?;
    group.set_attr("values_cols", &pickled(&str_list(a.values_cols))?)?;

    let mut builder = group
        .create_table("table", plan.row_type())
        .expected_rows(rows.max(10_000));
    if let Some(f) = filters {
        builder = builder.filters(f);
    }
    let table = builder.create()?;
    table.set_attr("index_kind", &text(&plan.index.elem.index_kind))?;
    for c in &plan.cols {
        table.set_attr(&format!("{}_dtype", c.name), &text(&c.elem.dtype))?;
        table.set_attr(&format!("{}_kind", c.name), &pickled(&str_list(&c.labels))?)?;
        match c.elem.meta {
            Some(m) => table.set_attr(&format!("{}_meta", c.name), &text(m))?,
            None => table.set_attr(&format!("{}_meta", c.name), &pickled(&Value::None)?)?,
        }
    }
    set_sentinels(&table, plan, &[])?;
    Ok(table)
}

/// The string columns' sentinels on the table (pandas 3.1, GH#9604): `index_nan_rep` for a
/// string index (empty when no value is missing), `{col}_nan_rep` for a column with one but
/// those of `table_wide` (columns of an older table, which keep the table-wide `nan_rep`).
fn set_sentinels(table: &PtTable, plan: &TablePlan, table_wide: &[String]) -> Result<()> {
    if let Enc::Str { nan_rep, .. } = &plan.index.elem.enc {
        table.set_attr(
            "index_nan_rep",
            &text(nan_rep.as_deref().unwrap_or_default()),
        )?;
    }
    for c in plan.cols.iter().filter(|c| !table_wide.contains(&c.name)) {
        if let Enc::Str {
            nan_rep: Some(n), ..
        } = &c.elem.enc
        {
            table.set_attr(&format!("{}_nan_rep", c.name), &text(n))?;
        }
    }
    Ok(())
}

/// The categories of column `col` as the series table `meta/{col}/meta`.
fn write_categories(
    meta: &PtGroup,
    col: &str,
    categories: &ArrayRef,
    filters: Option<Filters>,
) -> Result<()> {
    let holder = meta.create_group(col, "", None)?;
    let group = holder.create_group("meta", "", None)?;
    let elem = plan_column(
        "values",
        categories.data_type(),
        None,
        &[categories.as_ref()],
    )?;
    let n = categories.len();
    let plan = TablePlan {
        index: TableCol {
            name: "index".into(),
            labels: vec!["index".into()],
            sources: vec![Source::Range { start: 0, step: 1 }],
            encs: vec![Enc::IntAsF64],
            elem: plan_column(
                "index",
                &arrow_schema::DataType::Int64,
                None,
                &[&Int64Array::from(Vec::<i64>::new())],
            )?,
            block: false,
        },
        cols: vec![TableCol {
            name: "values".into(),
            labels: vec!["values".into()],
            sources: vec![Source::Field(0)],
            encs: vec![elem.enc.clone()],
            elem: elem.clone(),
            block: false,
        }],
        order: vec!["values".into()],
        data_columns: vec!["values".into()],
        levels: Vec::new(),
        index_name: None,
    };
    let info = Value::Dict(vec![
        (
            Value::Int(1),
            Value::Dict(vec![
                (Value::Str("names".into()), Value::List(vec![Value::None])),
                (Value::Str("type".into()), Value::Str("Index".into())),
            ]),
        ),
        (Value::Str("index".into()), Value::Dict(Vec::new())),
        (Value::Str("values".into()), Value::Dict(elem.info.clone())),
    ]);
    let values_cols = vec!["values".to_string()];
    let mut table = write_table_node(
        &group,
        &plan,
        &TableAttrs {
            pandas_type: "series_table",
            table_type: "appendable_series",
            multi: false,
            info,
            values_cols: &values_cols,
        },
        filters,
        n as u64,
    )?;
    let frame = Frame::builder()
        .column("values", categories.clone())
        .build()?;
    let batches = Box::new(frame.batches().iter().cloned().map(Ok));
    append_rows(&mut table, &plan, batches)
}
