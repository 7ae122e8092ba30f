//! pandas' `table` format (`frame_table` / `series_table`, table types `appendable_frame`,
//! `appendable_multiframe`, `appendable_series`, `appendable_multiseries`): one PyTables Table
//! `{key}/table` holding the `index` column, `values_block_N` columns (k values per row) and
//! data columns, described by the group's pickled attributes (`non_index_axes`, `info`,
//! `levels`, `nan_rep`) and the table's `{column}_kind` / `_dtype` / `_meta` attributes;
//! categories of a categorical column live beside the table, at `{key}/meta/{column}/meta`.

use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef};
use sciio_core::{Error, Result};
use sciio_pandas::Frame;
use sciio_pickle::Value;
use sciio_pytables::sciio_hdf5::{H5Type, RawData};
use sciio_pytables::{PtFile, Rows};

use crate::attrs::Attrs;
use crate::column::{self, Layout, Level, Meaning, Raw, Unit};
use crate::zone::tz_name;
use crate::LeftOutColumn;

/// A column of the frame being read: label, values, categorical `ordered` flag, the pandas
/// dtype name it needs beyond its Arrow type (`period[M]`), or why it is left out.
struct Col {
    label: String,
    values: ArrayRef,
    ordered: Option<bool>,
    dtype: Option<String>,
    left_out: Option<String>,
    /// A values block's text column with every value read missing ([`text_all_missing`]).
    missing_text: bool,
}

/// Rows of a `table` key read by [`read_rows`].
pub(crate) struct Slice {
    pub(crate) frame: Frame,
    /// Bytes of the table's rows read.
    pub(crate) bytes: u64,
    /// The values blocks' text columns with every value of these rows missing (pandas infers
    /// `object` for them, see [`TextDtype`]).
    pub(crate) missing_text: Vec<String>,
}

/// Reads a `table` key as `pd.read_hdf` does.
pub(crate) fn read(
    file: &PtFile,
    key: &str,
    attrs: &Attrs,
    series: bool,
    left_out: &mut Vec<LeftOutColumn>,
) -> Result<Frame> {
    read_rows(file, key, attrs, series, rows_all(), left_out).map(|slice| slice.frame)
}

fn rows_all() -> RowsOf<'static> {
    RowsOf {
        rows: Rows::all(),
        columns: None,
        text_dtype: TextDtype::Inferred,
    }
}

/// Which rows of a `table` key to read, which of its frame's columns (`reset_index()`'s
/// labels; `None`: all) and how text columns get their dtype.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowsOf<'a> {
    pub(crate) rows: Rows,
    pub(crate) columns: Option<&'a [String]>,
    pub(crate) text_dtype: TextDtype<'a>,
}

/// The pandas dtype of a text column of a values block (a data column, a series' values and
/// the index have their own `_meta` or kind and stay `str`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextDtype<'a> {
    /// As `pd.read_hdf` infers it from the rows read (`DataFrame` of the block's object
    /// array, pytables.py `read`): `str`, or `object` when every value read is missing (an
    /// object column of missing values is Arrow null, as `to_parquet` writes it).
    Inferred,
    /// `str` whatever the rows: slices of one stream share a schema.
    Str,
    /// `object` (Arrow null) for these columns, `str` for the others: the slices of a stream
    /// whose whole key was found to have no value in them.
    NullFor(&'a [String]),
}

impl TextDtype<'_> {
    /// Whether a text column read as `values` becomes an object column of missing values.
    fn is_null(self, label: &str, missing: bool) -> bool {
        match self {
            TextDtype::Inferred => missing,
            TextDtype::Str => false,
            TextDtype::NullFor(labels) => missing && labels.iter().any(|l| l == label),
        }
    }
}

/// Whether a values block's text column read as `values` is one pandas infers `object` for:
/// every value read is missing and no `{label}_meta` attribute (a data column's) makes it
/// `str` again (pytables.py: `df[column].astype(dtype)` for meta `str`/`string`).
fn text_all_missing(values: &dyn Array, tattrs: &Attrs, label: &str) -> Result<bool> {
    if values.is_empty()
        || values.null_count() != values.len()
        || !matches!(values.data_type(), arrow_schema::DataType::Utf8)
    {
        return Ok(false);
    }
    let own = tattrs.str(&format!("{label}_meta"))?;
    Ok(!matches!(own.as_deref(), Some("str" | "string")))
}

/// Reads `rows` of a `table` key (`pd.read_hdf(..., start=, stop=)`), with the bytes of the
/// table's rows read. With `columns`, the frame holds the index and those columns only, and
/// only the table fields that hold them are read (a values block is one field: all of its
/// columns' bytes are read, only the wanted ones become columns).
pub(crate) fn read_rows(
    file: &PtFile,
    key: &str,
    attrs: &Attrs,
    series: bool,
    rows: RowsOf<'_>,
    left_out: &mut Vec<LeftOutColumn>,
) -> Result<Slice> {
    let table_type = attrs.str("table_type")?.unwrap_or_default();
    let known = [
        "appendable_frame",
        "appendable_multiframe",
        "appendable_series",
        "appendable_multiseries",
    ];
    if !known.contains(&table_type.as_str()) {
        return Err(Error::unsupported(format!(
            "table_type {table_type:?} is not read (attribute table_type)"
        )));
    }
    let levels = level_names(attrs)?;
    // A MultiIndex's levels are columns of the table: read whatever the projection. A
    // series' one column may be shown unnamed (not by its label): read it whole.
    let wanted: Option<Vec<String>> = rows
        .columns
        .filter(|_| !series)
        .map(|c| c.iter().chain(&levels).cloned().collect());
    let (index, cols, bytes) = read_columns(file, key, attrs, rows, wanted.as_deref())?;
    let (index, cols): (Vec<Level>, Vec<Col>) = if levels.is_empty() {
        (vec![index], cols)
    } else {
        // set_index(levels): the level columns become the index, `level_N` names of a frame
        // become None.
        let mut idx = Vec::new();
        let mut rest = cols;
        for name in &levels {
            let pos = rest.iter().position(|c| &c.label == name).ok_or_else(|| {
                Error::format(format!("MultiIndex level {name:?} is not a column"))
            })?;
            let col = rest.remove(pos);
            // pandas renames them for frames only (AppendableMultiFrameTable.read): a series
            // keeps `level_N`.
            let unnamed = !series
                && name
                    .strip_prefix("level_")
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            idx.push(Level::new((!unnamed).then(|| name.clone()), col.values));
        }
        (idx, rest)
    };
    // pandas reads a series table's `values` column as an unnamed Series (its name is None).
    let unnamed = series && matches!(cols.as_slice(), [only] if only.label == "values");
    let mut builder = Frame::builder();
    let mut missing_text = Vec::new();
    for c in cols {
        if c.missing_text {
            missing_text.push(c.label.clone());
        }
        if let Some(reason) = c.left_out {
            left_out.push(LeftOutColumn {
                column: c.label,
                reason,
            });
            continue;
        }
        builder = match c.ordered {
            Some(ordered) => builder.categorical(c.label, c.values, ordered),
            None => column::add_column(builder, (!unnamed).then_some(c.label), c.values, c.dtype),
        };
    }
    Ok(Slice {
        frame: column::add_index(builder, index).build()?,
        bytes,
        missing_text,
    })
}

/// The index column, the other columns in `non_index_axes` order (those in `wanted` only,
/// when given) and the bytes of the rows read.
fn read_columns(
    file: &PtFile,
    key: &str,
    attrs: &Attrs,
    rows: RowsOf<'_>,
    wanted: Option<&[String]>,
) -> Result<(Level, Vec<Col>, u64)> {
    let (text_dtype, rows) = (rows.text_dtype, rows.rows);
    let path = format!("{key}/table");
    let tattrs = Attrs::read(file, &path)?;
    let info = attrs.value("info")?.unwrap_or(Value::None);
    let is_wanted = |label: &String| wanted.is_none_or(|w| w.contains(label));
    let order: Vec<String> = non_index_labels(attrs)?
        .into_iter()
        .filter(is_wanted)
        .collect();
    let mut values_cols = Vec::new();
    for col in str_list(attrs, "values_cols")? {
        let labels = str_list(&tattrs, &format!("{col}_kind"))?;
        // Every column when all are read (a damaged `_kind` list is then checked below).
        if wanted.is_none() || labels.iter().any(is_wanted) {
            values_cols.push((col, labels));
        }
    }
    let sentinels = Sentinels::of(attrs)?;
    let table = read_fields(file, &path, rows, wanted.map(|_| &values_cols[..]))?;

    // The index column.
    let index_kind = tattrs
        .str("index_kind")?
        .unwrap_or_else(|| "integer".into());
    let index_info = dict_get(&info, "index");
    let (index_ty, _, index_layout) =
        field_view(&table, "index").map_err(|e| e.with_node(path.clone()))?;
    let meaning = kind_meaning(
        &index_kind,
        index_info.and_then(|d| dict_get(d, "tz")).and_then(tz_name),
    )
    .map_err(|e| e.with_node(format!("{path}:index_kind")))?;
    let index_raw = Raw {
        ty: &index_ty,
        bytes: &table.bytes,
    };
    let index_nan = if index_kind == "string" {
        index_nan_rep(&tattrs, "index_nan_rep")?
    } else {
        None
    };
    let index_values = one_column(index_raw, index_layout, 0, &meaning, index_nan.as_deref())
        .map_err(|e| e.with_node(format!("{path}/index")))?;
    let index_name = dict_str(index_info, "index_name");
    let mut index = Level::new(index_name, index_values);
    // pandas reads an int64 index with a `freq` as a PeriodIndex of that frequency.
    let freq = index_info.and_then(|d| dict_get(d, "freq"));
    if let (Some(freq), "integer") = (freq.filter(|f| **f != Value::None), index_kind.as_str()) {
        let period = crate::offsets::freq_of_offset(freq)
            .ok_or_else(|| attrs.bad("info", freq, "a Period frequency for the index"))?;
        index.values = column::time_array(
            index_values_i64(index.values.as_ref())?,
            &Meaning::Period {
                freq: period.clone(),
            },
        );
        index.period = Some(period);
    }

    let mut found: Vec<Col> = Vec::new();
    for (col, labels) in &values_cols {
        let labels = labels.clone();
        let dtype = tattrs.str(&format!("{col}_dtype"))?.unwrap_or_default();
        if dtype.starts_with("complex") {
            // PyTables' complex columns (a compound of r, i): the frame cannot hold them.
            let reason = format!(
                "{dtype} values: Arrow and Parquet have no complex type (pandas' to_parquet \
                 refuses them too)"
            );
            for label in labels.into_iter().filter(is_wanted) {
                found.push(Col {
                    label,
                    values: arrow_array::new_empty_array(&arrow_schema::DataType::Null),
                    ordered: None,
                    dtype: None,
                    left_out: Some(reason.clone()),
                    missing_text: false,
                });
            }
            continue;
        }
        // The field's values read in place from the rows (no copy of the column first).
        let (base, k, layout) = field_view(&table, col).map_err(|e| e.with_node(path.clone()))?;
        let meta = tattrs.str(&format!("{col}_meta"))?;
        let col_info = dict_get(&info, col);
        let meaning = dtype_meaning(
            &dtype,
            col_info.and_then(|d| dict_get(d, "tz")).and_then(tz_name),
        )
        .map_err(|e| e.with_node(format!("{path}:{col}_dtype")))?;
        let nan = match base {
            H5Type::FixedString { .. } => sentinels.of_column(&tattrs, col)?,
            _ => None,
        };
        let nan = nan.as_deref();
        if k != labels.len() {
            return Err(Error::format(format!(
                "{k} values per row for the {} labels of {col}_kind",
                labels.len()
            ))
            .with_node(path.clone()));
        }
        let raw = Raw {
            ty: &base,
            bytes: &table.bytes,
        };
        for (j, label) in labels.into_iter().enumerate() {
            if !is_wanted(&label) {
                continue;
            }
            let mut values = one_column(raw, layout, j, &meaning, nan)
                .map_err(|e| e.with_node(format!("{path}/{col}")))?;
            let mut ordered = None;
            if meta.as_deref() == Some("category") {
                let cats = categories(file, key, col)?;
                values = column::dictionary(values.as_ref(), cats)
                    .map_err(|e| e.with_node(format!("{path}/{col}")))?;
                ordered = Some(
                    col_info
                        .and_then(|d| dict_get(d, "ordered"))
                        .is_some_and(truthy),
                );
            }
            let missing_text = text_all_missing(values.as_ref(), &tattrs, &label)?;
            if text_dtype.is_null(&label, missing_text) {
                // pandas' object column of missing values, as `to_parquet` writes it: Arrow
                // null (pandas_type `empty`, numpy_type `object`).
                values = arrow_array::new_null_array(&arrow_schema::DataType::Null, values.len());
            }
            let period = matches!(meaning, Meaning::Period { .. }).then(|| dtype.clone());
            found.push(Col {
                label,
                values,
                ordered,
                dtype: period,
                left_out: None,
                missing_text,
            });
        }
    }
    let mut cols = Vec::new();
    for label in order {
        let pos = found.iter().position(|c| c.label == label).ok_or_else(|| {
            Error::format(format!(
                "column {label:?} of non_index_axes is in no values column"
            ))
            .with_node(path.clone())
        })?;
        cols.push(found.remove(pos));
    }
    Ok((index, cols, table.bytes.len() as u64))
}

/// The rows of the table at `path`: whole, or (`values_cols` given) with only the `index`
/// field and the fields of those values columns, the others' bytes never converted.
fn read_fields(
    file: &PtFile,
    path: &str,
    rows: Rows,
    values_cols: Option<&[(String, Vec<String>)]>,
) -> Result<RawData> {
    let Some(values_cols) = values_cols else {
        return file.read_table(path, rows);
    };
    let fields: Vec<String> = std::iter::once("index".to_string())
        .chain(values_cols.iter().map(|(col, _)| col.clone()))
        .collect();
    file.read_table_fields(path, rows, &fields)
}

/// The sentinel of a missing string in stores written before pandas 3.1.
const NAN: &str = "nan";

/// How a table's string columns mark their missing values (pandas 3.1, GH#9604): each string
/// data column, values block and MultiIndex level its own sentinel (`{col}_nan_rep` on the
/// table, absent when the column had no missing value) where the group's markers say so;
/// otherwise the table-wide `nan_rep` (`"nan"` when unset), as every older store has it.
struct Sentinels {
    table_wide: String,
    /// `data_col_nan_rep`: every string column has its own sentinel.
    data_cols: bool,
    /// `mi_level_nan_rep`: the MultiIndex levels (the `levels` columns) have their own.
    mi_levels: bool,
    levels: Vec<String>,
}

impl Sentinels {
    fn of(attrs: &Attrs) -> Result<Sentinels> {
        Ok(Sentinels {
            table_wide: attrs.str("nan_rep")?.unwrap_or_else(|| NAN.into()),
            data_cols: attrs.flag("data_col_nan_rep")?,
            mi_levels: attrs.flag("mi_level_nan_rep")?,
            levels: level_names(attrs)?,
        })
    }

    /// Whether column `col` has a sentinel of its own.
    fn own(&self, col: &str) -> bool {
        self.data_cols || (self.mi_levels && self.levels.iter().any(|l| l == col))
    }

    /// The string that stands for a missing value in column `col` (`None`: no value is
    /// missing, a stored `"nan"` is the text "nan").
    fn of_column(&self, tattrs: &Attrs, col: &str) -> Result<Option<String>> {
        if self.own(col) {
            tattrs.str(&format!("{col}_nan_rep"))
        } else {
            Ok(Some(self.table_wide.clone()))
        }
    }
}

/// The sentinel of a string index (pandas' `_read_index_nan_rep`): absent in stores written
/// before pandas 3.1, which stored a missing value as `"nan"`; empty when no value is missing.
pub(crate) fn index_nan_rep(attrs: &Attrs, name: &str) -> Result<Option<String>> {
    if !attrs.has(name) {
        return Ok(Some(NAN.into()));
    }
    Ok(attrs.str(name)?.filter(|s| !s.is_empty()))
}

/// The MultiIndex level names of a table (`levels`: a list; an integer for a flat index).
fn level_names(attrs: &Attrs) -> Result<Vec<String>> {
    match attrs.value("levels")?.map(unpickle_text) {
        Some(Value::List(names)) => names.iter().map(|n| label(n, attrs, "levels")).collect(),
        _ => Ok(Vec::new()),
    }
}

/// An int64 column's values, missing ones as NaT (`i64::MIN`), as pandas stores them.
fn index_values_i64(a: &dyn Array) -> Result<Vec<i64>> {
    use arrow_array::cast::AsArray;
    let a = a
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| Error::format(format!("a PeriodIndex of {} values", a.data_type())))?;
    Ok(a.values().to_vec())
}

/// The field `name` of a table's rows viewed in place: its element type, values per row, and
/// their layout over the row bytes.
fn field_view(table: &RawData, name: &str) -> Result<(H5Type, usize, Layout)> {
    let H5Type::Compound { fields, size } = &table.ty else {
        return Err(Error::format("the table's rows are not a compound"));
    };
    let f = fields
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| Error::not_found(format!("no column {name:?}")))?;
    let (base, k) = match &f.ty {
        H5Type::Array { base, dims } => {
            let k = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
            let k = k.ok_or_else(|| {
                Error::format(format!("column {name} of too many values per row"))
            })?;
            ((**base).clone(), k)
        }
        other => (other.clone(), 1),
    };
    let rows = table.shape.first().copied().unwrap_or(0);
    Ok((base, k, Layout::strided(rows, k, f.offset, *size)))
}

/// Column `j` of a (rows, k) raw block; strings equal to `nan_rep` become missing.
fn one_column(
    raw: Raw<'_>,
    layout: Layout,
    j: usize,
    meaning: &Meaning,
    nan_rep: Option<&str>,
) -> Result<ArrayRef> {
    match (raw.ty, meaning) {
        (H5Type::FixedString { size, .. }, Meaning::Plain) => {
            column::fixed_strings(raw, layout, j, *size, nan_rep)
        }
        _ => column::numeric(raw, layout, j, meaning),
    }
}

/// The values stored in the string column (or block) `col` of a table key that `keep` picks,
/// read as text without a sentinel (pandas' `_read_stored_column_values`): a sentinel chosen
/// for appended rows must differ from each (only candidate sentinels need keeping).
pub(crate) fn stored_strings(
    file: &PtFile,
    key: &str,
    col: &str,
    keep: &dyn Fn(&str) -> bool,
) -> Result<std::collections::HashSet<String>> {
    use arrow_array::cast::AsArray;
    let path = format!("{key}/table");
    // That column's field only (as pandas reads it), not every column's bytes.
    let table = file.read_table_fields(&path, Rows::all(), &[col.to_string()])?;
    let (base, k, layout) = field_view(&table, col).map_err(|e| e.with_node(path.clone()))?;
    let H5Type::FixedString { size, .. } = base else {
        return Err(Error::mismatch(format!("column {col} holds no strings")).with_node(path));
    };
    let raw = Raw {
        ty: &base,
        bytes: &table.bytes,
    };
    let mut out = std::collections::HashSet::new();
    for j in 0..k {
        let values = column::fixed_strings(raw, layout, j, size, None)
            .map_err(|e| e.with_node(format!("{path}/{col}")))?;
        let values = values
            .as_string_opt::<i32>()
            .ok_or_else(|| Error::mismatch("strings read as another type"))?;
        out.extend(
            values
                .iter()
                .flatten()
                .filter(|v| keep(v))
                .map(str::to_string),
        );
    }
    Ok(out)
}

/// How a stored string column of a table key marks its missing values, for rows appended to
/// it (pandas 3.1's `create_axes`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StoredSentinel {
    /// The column's own sentinel (pandas 3.1), if one was chosen yet.
    Own(Option<String>),
    /// The table-wide `nan_rep` of a table written without per-column sentinels.
    TableWide(String),
}

/// The sentinel of each string column of a table key (`index` included), by field name.
pub(crate) fn stored_sentinels(
    file: &PtFile,
    key: &str,
    attrs: &Attrs,
) -> Result<Vec<(String, StoredSentinel)>> {
    let path = format!("{key}/table");
    let tattrs = Attrs::read(file, &path)?;
    let sentinels = Sentinels::of(attrs)?;
    let mut out = Vec::new();
    if tattrs.str("index_kind")?.as_deref() == Some("string") {
        let mut own = index_nan_rep(&tattrs, "index_nan_rep")?;
        let is_nan = |v: &str| v == NAN;
        if !tattrs.has("index_nan_rep") && stored_strings(file, key, "index", &is_nan)?.is_empty() {
            // Written before pandas 3.1 without a missing value: no sentinel to keep.
            own = None;
        }
        out.push(("index".to_string(), StoredSentinel::Own(own)));
    }
    for col in str_list(attrs, "values_cols")? {
        let dtype = tattrs.str(&format!("{col}_dtype"))?.unwrap_or_default();
        if !dtype.starts_with("bytes") && !dtype.starts_with("string") {
            continue;
        }
        let stored = if sentinels.own(&col) {
            StoredSentinel::Own(sentinels.of_column(&tattrs, &col)?)
        } else {
            StoredSentinel::TableWide(sentinels.table_wide.clone())
        };
        out.push((col, stored));
    }
    Ok(out)
}

/// The categories of a categorical column, stored as a series table beside the key.
pub(crate) fn categories(file: &PtFile, key: &str, col: &str) -> Result<ArrayRef> {
    let meta_key = format!("{key}/meta/{col}/meta");
    let attrs = Attrs::read(file, &meta_key)?;
    // Categories are values, not a frame: no dtype to infer.
    let rows = RowsOf {
        text_dtype: TextDtype::Str,
        ..rows_all()
    };
    let (_, cols, _) = read_columns(file, &meta_key, &attrs, rows, None)?;
    cols.into_iter()
        .next()
        .map(|c| c.values)
        .ok_or_else(|| Error::format("no categories").with_node(meta_key))
}

/// `index_kind` of the index column.
fn kind_meaning(kind: &str, tz: Option<String>) -> Result<Meaning> {
    Ok(match kind {
        k if k.starts_with("datetime64") => Meaning::Datetime {
            unit: Unit::of_dtype(k)?,
            tz,
        },
        k if k.starts_with("timedelta64") => Meaning::Timedelta {
            unit: Unit::of_dtype(k)?,
        },
        "integer" | "float" | "string" | "bool" => Meaning::Plain,
        other => return Err(Error::unsupported(format!("index kind {other:?}"))),
    })
}

/// `{column}_dtype` of a values column.
fn dtype_meaning(dtype: &str, tz: Option<String>) -> Result<Meaning> {
    if let Some(period) = Meaning::period_of(dtype) {
        return Ok(period);
    }
    Ok(match dtype {
        d if d.starts_with("datetime64") => Meaning::Datetime {
            unit: Unit::of_dtype(d)?,
            tz,
        },
        d if d.starts_with("timedelta64") => Meaning::Timedelta {
            unit: Unit::of_dtype(d)?,
        },
        _ => Meaning::Plain,
    })
}

/// `non_index_axes`: `[(1, [labels])]`.
pub(crate) fn non_index_labels(attrs: &Attrs) -> Result<Vec<String>> {
    let v = attrs.value("non_index_axes")?.unwrap_or(Value::None);
    if let Value::List(axes) = &v {
        if let [Value::Tuple(pair)] = axes.as_slice() {
            if let [Value::Int(1), Value::List(labels)] = pair.as_slice() {
                return labels
                    .iter()
                    .map(|l| label(l, attrs, "non_index_axes"))
                    .collect();
            }
        }
    }
    Err(attrs.bad("non_index_axes", &v, "[(1, [column labels])]"))
}

fn label(v: &Value, attrs: &Attrs, name: &str) -> Result<String> {
    match v {
        Value::Str(s) => Ok(s.clone()),
        Value::Bytes(b) => Ok(String::from_utf8_lossy(b).into_owned()),
        Value::Int(i) => Ok(i.to_string()),
        other => Err(attrs.bad(name, other, "a str label")),
    }
}

/// A pickled list of labels.
pub(crate) fn str_list(attrs: &Attrs, name: &str) -> Result<Vec<String>> {
    match attrs.value(name)?.map(unpickle_text) {
        Some(Value::List(items)) | Some(Value::Tuple(items)) => {
            items.iter().map(|l| label(l, attrs, name)).collect()
        }
        None => Ok(Vec::new()),
        Some(other) => Err(attrs.bad(name, &other, "a list")),
    }
}

/// Old PyTables files keep some pickles as plain strings (PyTables tries to unpickle every
/// string attribute ending in `.`): such a string that reads as a pickle is that pickle.
fn unpickle_text(v: Value) -> Value {
    let bytes = match &v {
        Value::Str(s) => s.as_bytes(),
        Value::Bytes(b) => b.as_slice(),
        _ => return v,
    };
    if !bytes.ends_with(b".") {
        return v;
    }
    match sciio_pickle::parse(bytes) {
        Ok(parsed @ (Value::List(_) | Value::Tuple(_))) => parsed,
        _ => v,
    }
}

fn dict_get<'a>(d: &'a Value, key: &str) -> Option<&'a Value> {
    let Value::Dict(items) = d else {
        return None;
    };
    items
        .iter()
        .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
        .map(|(_, v)| v)
}

fn dict_str(d: Option<&Value>, key: &str) -> Option<String> {
    match d.and_then(|d| dict_get(d, key)) {
        Some(Value::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

fn truthy(v: &Value) -> bool {
    matches!(v, Value::Bool(true)) || matches!(v, Value::Int(i) if *i != 0)
}

/// A PyTables Table pandas did not write (pandas' `GenericTable`): one column per field, a
/// RangeIndex; strings equal to `"nan"` are missing, as pandas reads them.
pub(crate) fn read_generic(file: &PtFile, path: &str) -> Result<Frame> {
    let table = file.read_table(path, Rows::all())?;
    let H5Type::Compound { fields, .. } = &table.ty else {
        return Err(Error::mismatch("not a table").with_node(path.to_string()));
    };
    let rows = table.shape.first().copied().unwrap_or(0);
    let mut builder = Frame::builder();
    for f in fields {
        let size = table.ty.size();
        let layout = Layout::strided(rows, 1, f.offset, size);
        let raw = Raw {
            ty: &f.ty,
            bytes: &table.bytes,
        };
        let nan = matches!(f.ty, H5Type::FixedString { .. }).then_some("nan");
        let values = one_column(raw, layout, 0, &Meaning::Plain, nan)
            .map_err(|e| e.with_node(format!("{path}/{}", f.name)))?;
        builder = builder.column(f.name.clone(), values);
    }
    builder
        .range_index(sciio_pandas::RangeIndex::new(0, rows as i64, 1))
        .build()
}
