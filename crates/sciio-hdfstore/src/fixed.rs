//! pandas' `fixed` format (`FrameFixed`, `SeriesFixed` in pandas/io/pytables.py): the axes
//! `axis0` (columns) and `axis1` (index), blocks `blockN_items` / `blockN_values`, and for a
//! series `index` and `values`.

use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, StringArray, UInt64Array};
use sciio_core::{Error, Result};
use sciio_pandas::Frame;
use sciio_pytables::sciio_hdf5::{H5Type, RawData};
use sciio_pytables::{PtFile, Rows};

use sciio_pickle::{StringBatches, Value};
use sciio_pytables::sciio_hdf5::VlenElementReader;

use crate::attrs::Attrs;
use crate::column::{self, Layout, Level, Meaning, Unit};
use crate::pyobj;
use crate::LeftOutColumn;

/// Reads a `fixed` frame (`pandas_type` = `frame`); columns the frame cannot hold go to
/// `left_out`.
pub(crate) fn read_frame(
    file: &PtFile,
    key: &str,
    attrs: &Attrs,
    left_out: &mut Vec<LeftOutColumn>,
) -> Result<Frame> {
    let ndim = attrs.int("ndim")?.unwrap_or(2);
    if ndim != 2 {
        return Err(Error::unsupported(format!(
            "a fixed frame of ndim {ndim} (only 2 is a DataFrame)"
        )));
    }
    let columns = read_index(file, key, "axis0", attrs)?;
    let (labels, level_names) = column_labels(&columns, key, "axis0")?;
    let level_dtypes: Vec<Option<&str>> = columns
        .iter()
        .map(|l| label_dtype(l.values.as_ref()))
        .collect();
    let index = read_index(file, key, "axis1", attrs)?;
    let rows = index.first().map(|l| l.values.len()).unwrap_or(0);
    let nblocks = attrs.required_int("nblocks")?;
    let mut found: Vec<Option<ColValues>> = (0..labels.len()).map(|_| None).collect();
    for i in 0..nblocks.max(0) {
        let items_key = format!("block{i}_items");
        let items = read_index(file, key, &items_key, attrs)?;
        let (items, _) = column_labels(&items, key, &items_key)?;
        let path = format!("{key}/block{i}_values");
        let cols = read_values(file, &path, items.len()).map_err(|e| e.with_node(path.clone()))?;
        for (item, values) in items.iter().zip(cols) {
            if let ColValues::Array(values, _) = &values {
                if values.len() != rows {
                    return Err(Error::format(format!(
                        "column {item:?} has {} values for an index of {rows}",
                        values.len()
                    ))
                    .with_node(path));
                }
            }
            let Some(slot) = labels.iter().position(|l| l == item) else {
                return Err(Error::format(format!(
                    "block item {item:?} is not among the columns (axis0)"
                ))
                .with_node(path));
            };
            found[slot] = Some(values);
        }
    }
    let mut builder = Frame::builder();
    for (label, values) in labels.iter().zip(found) {
        let values = values.ok_or_else(|| {
            Error::format(format!("column {label:?} is in no block")).with_node(key.to_string())
        })?;
        match values {
            ColValues::Array(values, dtype) => {
                builder = column::add_column(builder, Some(label.clone()), values, dtype);
            }
            ColValues::LeftOut(reason) => left_out.push(LeftOutColumn {
                column: label.clone(),
                reason,
            }),
        }
    }
    if let Some(names) = level_names {
        builder = builder.column_levels(&names);
    }
    builder = builder.column_level_dtypes(&level_dtypes);
    column::add_index(builder, index).build()
}

/// The names of the levels of a column MultiIndex.
type LevelNames = Vec<Option<String>>;

/// Column labels as text: one level as they print, several (a column MultiIndex) as the
/// Python repr of each label's tuple, with the level names.
fn column_labels(
    levels: &[Level],
    key: &str,
    node: &str,
) -> Result<(Vec<String>, Option<LevelNames>)> {
    let texts = levels
        .iter()
        .map(|l| label_strings(l.values.as_ref()))
        .collect::<Result<Vec<_>>>()
        .map_err(|e| e.with_node(format!("{key}/{node}")))?;
    match texts.as_slice() {
        [one] => Ok((one.clone(), None)),
        _ => {
            let n = texts.first().map_or(0, Vec::len);
            let labels = (0..n)
                .map(|i| {
                    let parts: Vec<&str> = texts
                        .iter()
                        .map(|t| t.get(i).map_or("", String::as_str))
                        .collect();
                    sciio_pandas::py_tuple_repr(&parts)
                })
                .collect();
            let names = levels.iter().map(|l| l.name.clone()).collect();
            Ok((labels, Some(names)))
        }
    }
}

/// Reads a `fixed` series (`pandas_type` = `series`) as a one-column frame labelled by the
/// series' name (pandas' `None` label when unnamed).
pub(crate) fn read_series(
    file: &PtFile,
    key: &str,
    attrs: &Attrs,
    left_out: &mut Vec<LeftOutColumn>,
) -> Result<Frame> {
    let name = index_name(attrs)?;
    let index = read_index(file, key, "index", attrs)?;
    let path = format!("{key}/values");
    let mut cols = read_values(file, &path, 1).map_err(|e| e.with_node(path.clone()))?;
    let values = cols
        .pop()
        .ok_or_else(|| Error::format("no values").with_node(path.clone()))?;
    let mut builder = Frame::builder();
    match values {
        ColValues::Array(values, dtype) => {
            builder = column::add_column(builder, name, values, dtype)
        }
        ColValues::LeftOut(reason) => left_out.push(LeftOutColumn {
            column: name.unwrap_or_else(|| "None".into()),
            reason,
        }),
    }
    column::add_index(builder, index).build()
}

/// The layouts of pandas before 0.10 (`pandas_type` `Series` / `TimeSeries`: `index` and
/// `values`; `DataFrame` / `DataMatrix`: `index`, `columns` and a rows × columns `values`).
/// Their `datetime` index kind (integers of an epoch unit the file does not record) is refused.
pub(crate) fn read_legacy(file: &PtFile, key: &str, attrs: &Attrs, frame: bool) -> Result<Frame> {
    let index = read_index_node(file, &format!("{key}/index"))?.values;
    let path = format!("{key}/values");
    let raw = file.read_array(&path, Rows::all())?;
    let mut builder = Frame::builder();
    if frame {
        let labels = read_index_node(file, &format!("{key}/columns"))?.values;
        let labels =
            label_strings(labels.as_ref()).map_err(|e| e.with_node(format!("{key}/columns")))?;
        let layout = Layout::of(&raw.shape, true).map_err(|e| e.with_node(path.clone()))?;
        check_cols(layout, labels.len()).map_err(|e| e.with_node(path.clone()))?;
        for (c, label) in labels.into_iter().enumerate() {
            let values = column::numeric((&raw).into(), layout, c, &Meaning::Plain)
                .map_err(|e| e.with_node(path.clone()))?;
            builder = builder.column(label, values);
        }
    } else {
        let layout = Layout::of(&raw.shape, true).map_err(|e| e.with_node(path.clone()))?;
        let values = column::numeric((&raw).into(), layout, 0, &Meaning::Plain)
            .map_err(|e| e.with_node(path.clone()))?;
        builder = builder.column("0", values);
    }
    let _ = attrs;
    builder.index_level(None, index).build()
}

/// One column of a block as read: its values with the pandas dtype name they need beyond
/// their Arrow type (`string` for pandas' masked strings, `period[M]`), or the reason it is
/// left out (the frame cannot hold it).
pub(crate) enum ColValues {
    Array(ArrayRef, Option<String>),
    LeftOut(String),
}

/// The values of a block (`ncols` columns), as pandas' `read_array` reads them, with the
/// pandas dtype name of pandas' masked `string` dtype (`value_type` = `string`: missing is
/// `pd.NA`) or of a Period dtype when the block holds it.
fn read_values(file: &PtFile, path: &str, ncols: usize) -> Result<Vec<ColValues>> {
    let attrs = Attrs::read(file, path)?;
    let transposed = attrs.flag("transposed")?;
    let value_type = attrs.str("value_type")?;
    if is_vlarray(file, path)? {
        return read_object_values(file, path, ncols, transposed, value_type.as_deref());
    }
    let meaning = meaning_of(value_type.as_deref(), crate::zone::tz_of(&attrs)?)?;
    let dtype = match &meaning {
        Meaning::Period { .. } => value_type.clone(),
        _ => None,
    };
    if attrs.has("shape") {
        // An empty block: PyTables holds a one-element placeholder, `shape` and `value_type`
        // the real ones (write_array_empty).
        let dt = value_type.as_deref().unwrap_or("float64");
        if dt.starts_with("complex") {
            return Ok(left_out_complex(dt, ncols));
        }
        let dt = if dtype.is_some() { "int64" } else { dt };
        return (0..ncols)
            .map(|_| {
                Ok(ColValues::Array(
                    column::empty(dt, &meaning)?,
                    dtype.clone(),
                ))
            })
            .collect();
    }
    if let Some(sciio_pytables::sciio_hdf5::H5Type::Compound { size, .. }) = file.node(path)?.dtype
    {
        // PyTables' complex64/complex128 (a compound of r, i): never read.
        return Ok(left_out_complex(&format!("complex{}", size * 8), ncols));
    }
    let raw = file.read_array(path, Rows::all())?;
    let layout = Layout::of(&raw.shape, transposed)?;
    check_cols(layout, ncols)?;
    (0..layout.cols)
        .map(|c| {
            Ok(ColValues::Array(
                column::numeric((&raw).into(), layout, c, &meaning)?,
                dtype.clone(),
            ))
        })
        .collect()
}

fn left_out_complex(dtype: &str, ncols: usize) -> Vec<ColValues> {
    let reason = format!(
        "{dtype} values: Arrow and Parquet have no complex type (pandas' to_parquet refuses \
         them too)"
    );
    (0..ncols)
        .map(|_| ColValues::LeftOut(reason.clone()))
        .collect()
}

/// An object block (a pickled numpy object array): each column as strings, or as dates
/// (`datetime.date` objects → date32); a column of other objects is left out.
fn read_object_values(
    file: &PtFile,
    path: &str,
    ncols: usize,
    transposed: bool,
    value_type: Option<&str>,
) -> Result<Vec<ColValues>> {
    let objects = read_objects(file, path)?;
    let layout = Layout::of(&objects.shape, transposed)?;
    check_cols(layout, ncols)?;
    let numpy_type = match value_type {
        None | Some("str") => None,
        Some("string") => Some("string".to_string()),
        Some(other) => {
            return Err(Error::unsupported(format!(
                "object values of dtype {other:?} (attribute value_type)"
            )))
        }
    };
    if layout.cols == 1 && objects.all_strings() {
        // The common case: one string column, its text read apart becomes the Arrow buffer.
        return Ok(vec![ColValues::Array(objects.into_strings()?, numpy_type)]);
    }
    (0..layout.cols)
        .map(|c| {
            let positions = || (0..layout.rows).map(move |r| layout.at(r, c));
            match objects.strings(positions()) {
                Ok(strings) => Ok(ColValues::Array(strings, numpy_type.clone())),
                Err(e) => match objects.dates(positions()) {
                    Some(dates) => Ok(ColValues::Array(dates, None)),
                    None if e.kind() == sciio_core::ErrorKind::Unsupported => {
                        Ok(ColValues::LeftOut(e.message().to_string()))
                    }
                    None => Err(e),
                },
            }
        })
        .collect()
}

fn check_cols(layout: Layout, ncols: usize) -> Result<()> {
    if layout.cols != ncols {
        return Err(Error::format(format!(
            "{} columns of values for {ncols} items",
            layout.cols
        )));
    }
    Ok(())
}

/// A `value_type` attribute (`datetime64[us]`, `timedelta64`...) with the `tz` attribute.
fn meaning_of(value_type: Option<&str>, tz: Option<String>) -> Result<Meaning> {
    if let Some(period) = value_type.and_then(Meaning::period_of) {
        return Ok(period);
    }
    Ok(match value_type {
        Some(t) if t.starts_with("datetime64") => Meaning::Datetime {
            unit: Unit::of_dtype(t)?,
            tz,
        },
        Some(t) if t.starts_with("timedelta64") => Meaning::Timedelta {
            unit: Unit::of_dtype(t)?,
        },
        _ => Meaning::Plain,
    })
}

fn is_vlarray(file: &PtFile, path: &str) -> Result<bool> {
    Ok(matches!(
        file.node(path)?.class,
        sciio_pytables::NodeClass::VLArray
    ))
}

/// The pickled numpy object array in the first row of an `ObjectAtom` VLArray.
fn read_objects(file: &PtFile, path: &str) -> Result<pyobj::ObjectArray> {
    let data = file.hdf5().dataset(path)?.read_vlen(None)?;
    let Some(first) = data.items.first() else {
        return Ok(pyobj::ObjectArray {
            shape: vec![0],
            items: pyobj::Items::Values(Vec::new()),
        });
    };
    if !matches!(data.ty, H5Type::VarLen { .. }) {
        return Err(Error::unsupported(
            "a VLArray that holds no pickled objects",
        ));
    }
    pyobj::parse_object_array(first)
}

/// An index (`{key}_variety` regular or multi) as its levels.
pub(crate) fn read_index(
    file: &PtFile,
    group: &str,
    key: &str,
    group_attrs: &Attrs,
) -> Result<Vec<Level>> {
    let variety = group_attrs.str(&format!("{key}_variety"))?;
    match variety.as_deref() {
        None | Some("regular") => {
            let path = format!("{group}/{key}");
            if Attrs::read(file, &path)?.str("kind")?.as_deref() == Some("category") {
                return Ok(vec![read_categorical_index(file, group, key, group_attrs)?]);
            }
            Ok(vec![read_index_node(file, &path)?])
        }
        Some("multi") => {
            let n = group_attrs.required_int(&format!("{key}_nlevels"))?;
            (0..n.max(0))
                .map(|i| {
                    let level = read_index_node(file, &format!("{group}/{key}_level{i}"))?;
                    let path = format!("{group}/{key}_label{i}");
                    let codes = file.read_array(&path, Rows::all())?;
                    let layout = Layout::of(&codes.shape, true)?;
                    let codes = column::numeric((&codes).into(), layout, 0, &Meaning::Plain)
                        .map_err(|e| e.with_node(path.clone()))?;
                    let taken = take_codes(level.values.as_ref(), codes.as_ref())
                        .map_err(|e| e.with_node(path))?;
                    Ok(Level {
                        values: taken,
                        ..level
                    })
                })
                .collect()
        }
        Some(other) => Err(Error::unsupported(format!(
            "attribute {key}_variety = {other:?} (only regular and multi)"
        ))
        .with_node(group.to_string())),
    }
}

/// A CategoricalIndex (GH#33909): the codes at `key` (`kind` = category, `ordered`), the
/// categories an index at `{key}_categories`.
fn read_categorical_index(
    file: &PtFile,
    group: &str,
    key: &str,
    group_attrs: &Attrs,
) -> Result<Level> {
    let path = format!("{group}/{key}");
    let attrs = Attrs::read(file, &path)?;
    let name = index_name(&attrs)?;
    let ordered = attrs.has("ordered") && attrs.flag("ordered")?;
    let categories = read_index(file, group, &format!("{key}_categories"), group_attrs)?;
    let [categories] = categories.as_slice() else {
        return Err(Error::unsupported("categories of several levels").with_node(path));
    };
    let raw = file.read_array(&path, Rows::all())?;
    let layout = Layout::of(&raw.shape, true).map_err(|e| e.with_node(path.clone()))?;
    let codes = column::numeric((&raw).into(), layout, 0, &Meaning::Plain)
        .map_err(|e| e.with_node(path.clone()))?;
    let values = column::dictionary(codes.as_ref(), categories.values.clone())
        .map_err(|e| e.with_node(path))?;
    Ok(Level {
        ordered: Some(ordered),
        ..Level::new(name, values)
    })
}

/// `levels[codes]`, code -1 → missing.
fn take_codes(levels: &dyn Array, codes: &dyn Array) -> Result<ArrayRef> {
    let codes: Vec<i64> = (0..codes.len())
        .map(|i| int_at(codes, i))
        .collect::<Result<_>>()?;
    let n = levels.len() as i64;
    let idx: Vec<Option<u64>> = codes
        .iter()
        .map(|&c| match c {
            -1 => Ok(None),
            c if (0..n).contains(&c) => Ok(Some(c as u64)),
            c => Err(Error::format(format!(
                "MultiIndex code {c} outside the {n} level values"
            ))),
        })
        .collect::<Result<_>>()?;
    arrow_select::take::take(levels, &UInt64Array::from(idx), None)
        .map_err(|e| Error::format(format!("MultiIndex codes: {e}")))
}

fn int_at(a: &dyn Array, i: usize) -> Result<i64> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    let v = match a.data_type() {
        arrow_schema::DataType::Int8 => i64::from(a.as_primitive::<Int8Type>().value(i)),
        arrow_schema::DataType::Int16 => i64::from(a.as_primitive::<Int16Type>().value(i)),
        arrow_schema::DataType::Int32 => i64::from(a.as_primitive::<Int32Type>().value(i)),
        arrow_schema::DataType::Int64 => a.as_primitive::<Int64Type>().value(i),
        other => {
            return Err(Error::unsupported(format!(
                "MultiIndex codes of type {other}"
            )))
        }
    };
    Ok(v)
}

/// One regular index node: `kind`, `name`, `tz`, `index_class` attributes.
fn read_index_node(file: &PtFile, path: &str) -> Result<Level> {
    let attrs = Attrs::read(file, path)?;
    let kind = attrs.str("kind")?.unwrap_or_else(|| "object".into());
    let name = index_name(&attrs)?;
    let mut period = None;
    match attrs.str("index_class")?.as_deref() {
        None | Some("datetime") => {}
        // A PeriodIndex: int64 ordinals, the frequency a pickled pandas offset.
        Some("period") if kind == "integer" => {
            let freq = attrs.value("freq")?.unwrap_or(Value::None);
            period = Some(
                crate::offsets::freq_of_offset(&freq)
                    .ok_or_else(|| attrs.bad("freq", &freq, "a Period frequency"))
                    .map_err(|e| e.with_node(path.to_string()))?,
            );
        }
        Some(class) => {
            return Err(Error::unsupported(format!(
                "a {class} index of kind {kind:?} (attribute index_class)"
            ))
            .with_node(path.to_string()))
        }
    }
    let values = if is_vlarray(file, path)? {
        let objects = read_objects(file, path).map_err(|e| e.with_node(path.to_string()))?;
        objects
            .into_strings()
            .map_err(|e| e.with_node(path.to_string()))?
    } else {
        let raw = file.read_array(path, Rows::all())?;
        let layout = Layout::of(&raw.shape, true).map_err(|e| e.with_node(path.to_string()))?;
        let meaning = match kind.as_str() {
            _ if period.is_some() => Meaning::Period {
                freq: period.clone().unwrap_or_default(),
            },
            "integer" | "float" | "bool" | "string" => Meaning::Plain,
            "datetime" => {
                return Err(Error::unsupported(
                    "index kind \"datetime\" of pandas before 0.10 (attribute kind): the \
                     epoch unit of its integers is not recorded",
                )
                .with_node(path.to_string()))
            }
            k if k.starts_with("datetime64") => Meaning::Datetime {
                unit: Unit::of_dtype(k)?,
                tz: crate::zone::tz_of(&attrs)?,
            },
            k if k.starts_with("timedelta64") => Meaning::Timedelta {
                unit: Unit::of_dtype(k)?,
            },
            other => {
                return Err(
                    Error::unsupported(format!("index kind {other:?} (attribute kind)"))
                        .with_node(path.to_string()),
                )
            }
        };
        if attrs.has("shape") {
            let dtype = match kind.as_str() {
                "integer" => "int64",
                "float" => "float64",
                "bool" => "bool",
                "string" => "str",
                other => other,
            };
            column::empty(dtype, &meaning)?
        } else if let (H5Type::FixedString { size, .. }, "string") = (&raw.ty, kind.as_str()) {
            // pandas 3.1 (GH#9604): missing values stored as the node's `nan_rep`.
            let nan = crate::table::index_nan_rep(&attrs, "nan_rep")?;
            column::fixed_strings((&raw).into(), layout, 0, *size, nan.as_deref())
                .map_err(|e| e.with_node(path.to_string()))?
        } else {
            column::numeric((&raw).into(), layout, 0, &meaning)
                .map_err(|e| e.with_node(path.to_string()))?
        }
    };
    Ok(Level {
        period,
        ..Level::new(name, values)
    })
}

fn index_name(attrs: &Attrs) -> Result<Option<String>> {
    match attrs.value("name")? {
        None | Some(sciio_pickle::Value::None) => Ok(None),
        Some(sciio_pickle::Value::Str(s)) => Ok(Some(s)),
        Some(sciio_pickle::Value::Bytes(b)) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
        Some(sciio_pickle::Value::Int(i)) => Ok(Some(i.to_string())),
        Some(other) => Err(attrs.bad("name", &other, "a str")),
    }
}

/// The numpy dtype pandas gives column labels stored as `a` (`None`: text).
fn label_dtype(a: &dyn Array) -> Option<&'static str> {
    match a.data_type() {
        arrow_schema::DataType::Int64 => Some("int64"),
        arrow_schema::DataType::Float64 => Some("float64"),
        _ => None,
    }
}

/// Column labels as text (integer and float labels printed as pandas prints them).
fn label_strings(a: &dyn Array) -> Result<Vec<String>> {
    if let Some(s) = a.as_any().downcast_ref::<StringArray>() {
        return Ok((0..s.len())
            .map(|i| {
                if s.is_null(i) {
                    "None".to_string()
                } else {
                    s.value(i).to_string()
                }
            })
            .collect());
    }
    if let Some(s) = a.as_any().downcast_ref::<Int64Array>() {
        return Ok(s.values().iter().map(|v| v.to_string()).collect());
    }
    if let Some(s) = a.as_any().downcast_ref::<Float64Array>() {
        return Ok(s.values().iter().map(|v| format!("{v:?}")).collect());
    }
    Err(Error::unsupported(format!(
        "column labels of type {}",
        a.data_type()
    )))
}

/// Rows of a batch of a `fixed` key read as a stream: a batch of a million short strings
/// would be the whole column; 16 Ki rows of them are half a MiB. A conversion holds a few
/// batches at once (being read, queued, encoded): 64 Ki rows made that 20 MiB beside a 26
/// MiB column.
const FIXED_BATCH_ROWS: usize = 1 << 14;

/// A `fixed` key (frame or series) read in batches of rows ([`stream_key`]): its string
/// blocks are read from their pickles as streams ([`sciio_pickle::stream_string_array`]),
/// its number blocks stored a row per record (as pandas writes them) by row ranges, never
/// held whole; so is its index when it is a plain number, datetime or string level, or codes (a
/// MultiIndex's, a CategoricalIndex's) into values read whole. Other blocks and indexes
/// are read whole and sliced.
#[derive(Debug)]
pub(crate) struct FixedBatches {
    labels: ColumnLabels,
    index: Vec<IndexPart>,
    /// Read from for the index levels and number blocks read by row ranges.
    file: PtFile,
    /// Each column's values, in label order.
    columns: Vec<Source>,
    streams: Vec<StringBatches<VlenElementReader>>,
    /// The number blocks read by row ranges.
    ranged: Vec<RangedBlock>,
    pub(crate) rows: usize,
    next: usize,
    batch_rows: usize,
    pub(crate) left_out: Vec<LeftOutColumn>,
    /// Bytes of the number blocks and index read by row ranges so far.
    pub(crate) bytes_read: u64,
}

/// The column labels of a [`FixedBatches`] (those kept), as the whole read gives them.
#[derive(Debug)]
struct ColumnLabels {
    labels: Vec<String>,
    level_names: Option<LevelNames>,
    level_dtypes: Vec<Option<&'static str>>,
    /// A Series without a name: its one column is unnamed (pandas' `None` label).
    unnamed: bool,
}

/// An index level of a [`FixedBatches`]: read whole and sliced, or read batch by batch.
#[derive(Debug)]
enum IndexPart {
    Whole(Level),
    /// A plain number or datetime level by row ranges: the level's name and kind (its
    /// values empty), its node and what its numbers mean.
    Ranged(Level, String, Meaning),
    /// A level of codes read by row ranges into values read whole: the level (its values
    /// those the codes index), the codes' node and how they index.
    Coded(Level, String, Coding),
    /// A level of fixed-width strings by row ranges: the level's name and kind (its values
    /// empty), its node, the strings' width and the `nan_rep` missing values are stored as.
    RangedText(Level, String, usize, Option<String>),
}

/// How the codes of an [`IndexPart::Coded`] become the level's values.
#[derive(Debug, Clone, Copy)]
enum Coding {
    /// A MultiIndex level: the level values taken (code -1 missing).
    Take,
    /// A CategoricalIndex: a dictionary of the categories.
    Dictionary,
}

/// Where a column of a [`FixedBatches`] comes from.
#[derive(Debug)]
enum Source {
    Whole(ArrayRef, Option<String>),
    /// Stream `k`, with the pandas dtype name.
    Streamed(usize, Option<String>),
    /// Column `c` of ranged block `b`, with the pandas dtype name.
    Ranged(usize, usize, Option<String>),
    LeftOut(String),
}

/// A number block whose rows are records on disk (pandas' `transposed` blocks, and 1-d
/// ones): read by row ranges, batch by batch.
#[derive(Debug)]
struct RangedBlock {
    path: String,
    transposed: bool,
    meaning: Meaning,
}

/// The `fixed` key at `key` (`pandas_type` frame or series) whose string blocks or number
/// blocks can be read as streams, as [`FixedBatches`] of up to `batch_rows` rows, with only
/// the columns labelled in `wanted` (all when `None`; labels that are no column, such as the
/// index's, are passed over: the blocks holding none of them are not read at all, a string
/// block's pickle not even scanned; the index is read). `None` for other keys, and when
/// nothing streams and `wanted` is `None`, or a block is not what the stream reads: the
/// whole path reads it, and says what is wrong.
pub(crate) fn stream_key(
    file: &PtFile,
    key: &str,
    attrs: &Attrs,
    pandas_type: &str,
    batch_rows: usize,
    wanted: Option<&[String]>,
) -> Result<Option<FixedBatches>> {
    match pandas_type {
        "frame" => stream_frame_of(file, key, attrs, batch_rows, wanted),
        "series" => stream_series_of(file, key, attrs, batch_rows, wanted),
        _ => Ok(None),
    }
}

/// A `fixed` frame as [`stream_key`] reads it.
fn stream_frame_of(
    file: &PtFile,
    key: &str,
    attrs: &Attrs,
    batch_rows: usize,
    wanted: Option<&[String]>,
) -> Result<Option<FixedBatches>> {
    let keep = |label: &str| wanted.is_none_or(|w| w.iter().any(|x| x == label));
    if attrs.int("ndim")?.unwrap_or(2) != 2 {
        return Ok(None);
    }
    let columns = read_index(file, key, "axis0", attrs)?;
    let (labels, level_names) = column_labels(&columns, key, "axis0")?;
    let level_dtypes = columns
        .iter()
        .map(|l| label_dtype(l.values.as_ref()))
        .collect();
    let (index, rows) = stream_index(file, key, "axis1", attrs)?;
    if rows == 0 {
        return Ok(None);
    }
    let mut opened = Opened::new(batch_rows);
    let mut blocks = Vec::new();
    for i in 0..attrs.required_int("nblocks")?.max(0) {
        let items_key = format!("block{i}_items");
        let items = read_index(file, key, &items_key, attrs)?;
        let (items, _) = column_labels(&items, key, &items_key)?;
        let path = format!("{key}/block{i}_values");
        if !items.iter().any(|item| keep(item)) {
            continue;
        }
        let sources = opened.block(file, &path, items.len(), rows)?;
        blocks.push((items, path, sources));
    }
    if !opened.any() && wanted.is_none() {
        return Ok(None);
    }
    let mut found: Vec<Option<Source>> = (0..labels.len()).map(|_| None).collect();
    for (items, path, sources) in blocks {
        let sources = match sources {
            Some(sources) => sources,
            None => match whole_block(file, &path, items.len(), rows)? {
                Some(sources) => sources,
                None => return Ok(None),
            },
        };
        for (item, source) in items.iter().zip(sources) {
            let Some(slot) = labels.iter().position(|l| l == item) else {
                return Ok(None);
            };
            found[slot] = Some(source);
        }
    }
    // The columns asked for, each found in a block read.
    let mut kept = Vec::new();
    let mut columns = Vec::new();
    for (label, source) in labels.into_iter().zip(found) {
        if !keep(&label) {
            continue;
        }
        let Some(source) = source else {
            return Ok(None);
        };
        kept.push(label);
        columns.push(source);
    }
    let labels = ColumnLabels {
        labels: kept,
        level_names,
        level_dtypes,
        unnamed: false,
    };
    Ok(Some(opened.batches(file, labels, columns, index, rows)))
}

/// A `fixed` series (nodes `index` and `values`, pandas' `SeriesFixed`) as [`stream_key`]
/// reads it: one column labelled by the series' name (`None`, unnamed, when it has none, as
/// [`read_series`] reads it).
fn stream_series_of(
    file: &PtFile,
    key: &str,
    attrs: &Attrs,
    batch_rows: usize,
    wanted: Option<&[String]>,
) -> Result<Option<FixedBatches>> {
    let name = index_name(attrs)?;
    let unnamed = name.is_none();
    let label = name.unwrap_or_else(|| "None".into());
    let (index, rows) = stream_index(file, key, "index", attrs)?;
    if rows == 0 {
        return Ok(None);
    }
    let mut opened = Opened::new(batch_rows);
    let mut columns = Vec::new();
    let mut labels = Vec::new();
    if wanted.is_none_or(|w| w.contains(&label)) {
        let path = format!("{key}/values");
        let sources = match opened.block(file, &path, 1, rows)? {
            Some(sources) => sources,
            None if wanted.is_none() => return Ok(None),
            None => match whole_block(file, &path, 1, rows)? {
                Some(sources) => sources,
                None => return Ok(None),
            },
        };
        columns.extend(sources);
        labels.push(label);
    }
    let labels = ColumnLabels {
        labels,
        level_names: None,
        level_dtypes: Vec::new(),
        unnamed,
    };
    Ok(Some(opened.batches(file, labels, columns, index, rows)))
}

/// The blocks of a [`FixedBatches`] read as streams or by row ranges, as they are opened.
struct Opened {
    streams: Vec<StringBatches<VlenElementReader>>,
    ranged: Vec<RangedBlock>,
    /// Bytes of a row of the ranged blocks and the index (about).
    row_bytes: usize,
    /// Rows of a batch with a string stream.
    string_rows: usize,
    /// Rows of a batch asked for.
    asked: usize,
}

impl Opened {
    fn new(batch_rows: usize) -> Opened {
        Opened {
            streams: Vec::new(),
            ranged: Vec::new(),
            row_bytes: 8,
            string_rows: batch_rows.clamp(1, FIXED_BATCH_ROWS),
            asked: batch_rows,
        }
    }

    /// Whether a block was opened as a stream or by row ranges.
    fn any(&self) -> bool {
        !self.streams.is_empty() || !self.ranged.is_empty()
    }

    /// The block at `path` (`ncols` columns of `rows` rows) opened as a string stream or
    /// by row ranges: where each of its columns comes from; `None` when it is neither (to
    /// be read whole).
    fn block(
        &mut self,
        file: &PtFile,
        path: &str,
        ncols: usize,
        rows: usize,
    ) -> Result<Option<Vec<Source>>> {
        if let Some((s, dtype)) = stream_block(file, path, ncols, rows, self.string_rows)? {
            self.streams.push(s);
            return Ok(Some(vec![Source::Streamed(self.streams.len() - 1, dtype)]));
        }
        let Some((block, item, dtype)) = ranged_block(file, path, ncols, rows)? else {
            return Ok(None);
        };
        self.ranged.push(block);
        self.row_bytes = self.row_bytes.saturating_add(item.saturating_mul(ncols));
        let b = self.ranged.len() - 1;
        Ok(Some(
            (0..ncols)
                .map(|c| Source::Ranged(b, c, dtype.clone()))
                .collect(),
        ))
    }

    /// The batches over what was opened.
    fn batches(
        self,
        file: &PtFile,
        labels: ColumnLabels,
        columns: Vec<Source>,
        index: Vec<IndexPart>,
        rows: usize,
    ) -> FixedBatches {
        // Batches of short strings are kept small (a million of them would be the whole
        // column); number rows come a block's worth at a time.
        let batch_rows = match self.streams.is_empty() {
            true => self
                .asked
                .clamp(1, (NUMBER_BATCH_BYTES / self.row_bytes.max(1)).max(1)),
            false => self.string_rows,
        };
        let left_out = labels
            .labels
            .iter()
            .zip(&columns)
            .filter_map(|(label, source)| match source {
                Source::LeftOut(reason) => Some(LeftOutColumn {
                    column: label.clone(),
                    reason: reason.clone(),
                }),
                _ => None,
            })
            .collect();
        FixedBatches {
            labels,
            index,
            file: file.clone(),
            columns,
            streams: self.streams,
            ranged: self.ranged,
            rows,
            next: 0,
            batch_rows,
            left_out,
            bytes_read: 0,
        }
    }
}

/// The columns of the block at `path` read whole (sliced batch by batch); `None` when a
/// column's length is not the index's `rows` (the whole path says what is wrong).
fn whole_block(
    file: &PtFile,
    path: &str,
    ncols: usize,
    rows: usize,
) -> Result<Option<Vec<Source>>> {
    let cols = read_values(file, path, ncols).map_err(|e| e.with_node(path.to_string()))?;
    let mut sources = Vec::with_capacity(cols.len());
    for values in cols {
        sources.push(match values {
            ColValues::Array(values, _) if values.len() != rows => return Ok(None),
            ColValues::Array(values, dtype) => Source::Whole(values, dtype),
            ColValues::LeftOut(reason) => Source::LeftOut(reason),
        });
    }
    Ok(Some(sources))
}

/// Bytes of number rows a batch of a `fixed` key without string blocks holds (about).
const NUMBER_BATCH_BYTES: usize = 16 << 20;

/// A number block of `ncols` columns stored a row per record with `rows` rows (what
/// [`read_values`] reads by `column::numeric`), to be read by row ranges: the block, its
/// element size and the pandas dtype name. `None` for any other block (read whole).
fn ranged_block(
    file: &PtFile,
    path: &str,
    ncols: usize,
    rows: usize,
) -> Result<Option<(RangedBlock, usize, Option<String>)>> {
    if is_vlarray(file, path)? {
        return Ok(None);
    }
    let attrs = Attrs::read(file, path)?;
    if attrs.has("shape") {
        return Ok(None);
    }
    let transposed = attrs.flag("transposed")?;
    let value_type = attrs.str("value_type")?;
    let meaning = meaning_of(value_type.as_deref(), crate::zone::tz_of(&attrs)?)?;
    let dtype = match &meaning {
        Meaning::Period { .. } => value_type,
        _ => None,
    };
    let node = file.node(path)?;
    // The fixed-size types `column::numeric` reads (complex compounds are left out whole).
    let item = match &node.dtype {
        Some(
            H5Type::Int { size, .. }
            | H5Type::Float { size, .. }
            | H5Type::Bitfield { size, .. }
            | H5Type::FixedString { size, .. },
        ) => *size,
        Some(t @ H5Type::Enum { .. }) => t.size(),
        _ => return Ok(None),
    };
    let shape: Vec<usize> = node.shape.iter().map(|&d| d as usize).collect();
    let Ok(layout) = Layout::of(&shape, transposed) else {
        return Ok(None);
    };
    // Rows along the first axis (a record a row), as many as the index's.
    if !layout.row_major || layout.rows != rows || layout.cols != ncols {
        return Ok(None);
    }
    let block = RangedBlock {
        path: path.to_string(),
        transposed,
        meaning,
    };
    Ok(Some((block, item, dtype)))
}

/// An object block of one column read as a stream of string batches, with the pandas dtype
/// name of its values; `None` when it is not one the stream reads.
fn stream_block(
    file: &PtFile,
    path: &str,
    ncols: usize,
    rows: usize,
    batch_rows: usize,
) -> Result<Option<(StringBatches<VlenElementReader>, Option<String>)>> {
    if ncols != 1 || !is_vlarray(file, path)? {
        return Ok(None);
    }
    let attrs = Attrs::read(file, path)?;
    let dtype = match attrs.str("value_type")?.as_deref() {
        None | Some("str") => None,
        Some("string") => Some("string".to_string()),
        Some(_) => return Ok(None),
    };
    let transposed = attrs.flag("transposed")?;
    let dataset = file.hdf5().dataset(path)?;
    let reader = || dataset.vlen_element_reader(0);
    let Some(first) = reader()? else {
        return Ok(None);
    };
    let limits = sciio_pickle::ParseLimits::default();
    let len = first.len();
    let Some(scan) = sciio_pickle::scan_string_array(first, len, &limits, sciio_pickle::PIECE)?
    else {
        return Ok(None);
    };
    let Ok(shape) = pyobj::shape_of(scan.value.clone()) else {
        return Ok(None);
    };
    let fits = Layout::of(&shape, transposed).is_ok_and(|l| l.cols == 1 && l.rows == rows);
    if !fits || scan.rows != rows {
        return Ok(None);
    }
    let Some(again) = reader()? else {
        return Ok(None);
    };
    let stream = sciio_pickle::stream_string_array(
        again,
        len,
        &limits,
        &scan,
        batch_rows,
        sciio_pickle::PIECE,
    )?;
    Ok(Some((stream, dtype)))
}

impl Iterator for FixedBatches {
    type Item = Result<Frame>;

    fn next(&mut self) -> Option<Result<Frame>> {
        if self.next >= self.rows {
            return None;
        }
        let start = self.next;
        let n = self.batch_rows.min(self.rows - start);
        self.next += n;
        Some(self.batch(start, n))
    }
}

impl FixedBatches {
    /// Rows of each batch (the last one shorter).
    pub(crate) fn batch_rows(&self) -> usize {
        self.batch_rows
    }

    /// Rows `start..start + n`: the next batch of every stream, slices of the rest.
    fn batch(&mut self, start: usize, n: usize) -> Result<Frame> {
        let streamed = self.next_streamed(n)?;
        let ranged = self.read_ranged(start, n)?;
        let mut builder = Frame::builder();
        let unnamed = self.labels.unnamed;
        for (label, source) in self.labels.labels.iter().zip(&self.columns) {
            let (values, dtype): (ArrayRef, _) = match source {
                Source::Whole(values, dtype) => (values.slice(start, n), dtype.clone()),
                Source::Streamed(k, dtype) => match streamed.get(*k) {
                    Some(a) => (std::sync::Arc::new(a.clone()), dtype.clone()),
                    None => return Err(Error::format("a string block was not read")),
                },
                Source::Ranged(b, c, dtype) => {
                    let (Some((raw, layout)), Some(block)) = (ranged.get(*b), self.ranged.get(*b))
                    else {
                        return Err(Error::format("a number block was not read"));
                    };
                    let values = column::numeric(raw.into(), *layout, *c, &block.meaning)
                        .map_err(|e| e.with_node(block.path.clone()))?;
                    (values, dtype.clone())
                }
                Source::LeftOut(_) => continue,
            };
            let label = (!unnamed).then(|| label.clone());
            builder = column::add_column(builder, label, values, dtype);
        }
        if let Some(names) = &self.labels.level_names {
            builder = builder.column_levels(names);
        }
        if !self.labels.level_dtypes.is_empty() {
            builder = builder.column_level_dtypes(&self.labels.level_dtypes);
        }
        let index = self.index_batch(start, n)?;
        column::add_index(builder, index).build()
    }

    /// The next batch of each string stream, `n` rows each.
    fn next_streamed(&mut self, n: usize) -> Result<Vec<StringArray>> {
        let mut streamed = Vec::with_capacity(self.streams.len());
        for stream in &mut self.streams {
            let column = stream
                .next()
                .transpose()?
                .ok_or_else(|| Error::format("a string block ends before the index"))?;
            let array = pyobj::string_array(column)?;
            if array.len() != n {
                return Err(Error::format(format!(
                    "a string block gives {} rows where the index has {n}",
                    array.len()
                )));
            }
            streamed.push(array);
        }
        Ok(streamed)
    }

    /// Rows `start..start + n` of each number block read by row ranges.
    fn read_ranged(&mut self, start: usize, n: usize) -> Result<Vec<(RawData, Layout)>> {
        let rows = Rows::range(start as u64, (start + n) as u64, 1);
        let mut ranged = Vec::with_capacity(self.ranged.len());
        for block in &self.ranged {
            let raw = self
                .file
                .read_array(&block.path, rows)
                .map_err(|e| e.with_node(block.path.clone()))?;
            let layout = Layout::of(&raw.shape, block.transposed)?;
            if layout.rows != n {
                return Err(
                    Error::format("a block ends before the index").with_node(block.path.clone())
                );
            }
            self.bytes_read += raw.bytes.len() as u64;
            ranged.push((raw, layout));
        }
        Ok(ranged)
    }

    /// Rows `start..start + n` of the index levels.
    fn index_batch(&mut self, start: usize, n: usize) -> Result<Vec<Level>> {
        let mut index = Vec::with_capacity(self.index.len());
        let mut bytes = 0u64;
        for part in &self.index {
            index.push(match part {
                IndexPart::Whole(l) => Level {
                    values: l.values.slice(start, n),
                    ..l.clone()
                },
                IndexPart::Ranged(l, path, meaning) => Level {
                    values: self.read_level(path, start, n, meaning, &mut bytes)?,
                    ..l.clone()
                },
                IndexPart::RangedText(l, path, size, nan) => Level {
                    values: self.read_text_level(path, (start, n), *size, nan, &mut bytes)?,
                    ..l.clone()
                },
                IndexPart::Coded(l, path, coding) => {
                    let codes = self.read_level(path, start, n, &Meaning::Plain, &mut bytes)?;
                    let values = match coding {
                        Coding::Take => take_codes(l.values.as_ref(), codes.as_ref()),
                        Coding::Dictionary => column::dictionary(codes.as_ref(), l.values.clone()),
                    }
                    .map_err(|e| e.with_node(path.clone()))?;
                    Level {
                        values,
                        ..l.clone()
                    }
                }
            });
        }
        self.bytes_read += bytes;
        Ok(index)
    }

    /// Rows `start..start + n` of the 1-d node of fixed-width strings at `path` (an index
    /// level, as pandas writes a string index), the bytes read added to `bytes`.
    fn read_text_level(
        &self,
        path: &str,
        (start, n): (usize, usize),
        size: usize,
        nan: &Option<String>,
        bytes: &mut u64,
    ) -> Result<ArrayRef> {
        self.read_rows_of(path, (start, n), bytes, |raw, layout| {
            column::fixed_strings(raw.into(), layout, 0, size, nan.as_deref())
        })
    }

    /// Rows `start..start + n` of the 1-d number node at `path` (an index level, codes), the
    /// bytes read added to `bytes`.
    fn read_level(
        &self,
        path: &str,
        start: usize,
        n: usize,
        meaning: &Meaning,
        bytes: &mut u64,
    ) -> Result<ArrayRef> {
        self.read_rows_of(path, (start, n), bytes, |raw, layout| {
            column::numeric(raw.into(), layout, 0, meaning)
        })
    }

    /// Rows `start..start + n` of the 1-d node at `path` made values by `decode`, which must
    /// give `n` of them; the bytes read added to `bytes`.
    fn read_rows_of(
        &self,
        path: &str,
        (start, n): (usize, usize),
        bytes: &mut u64,
        decode: impl FnOnce(&RawData, Layout) -> Result<ArrayRef>,
    ) -> Result<ArrayRef> {
        let located = |e: Error| e.with_node(path.to_string());
        let rows = Rows::range(start as u64, (start + n) as u64, 1);
        let raw = self.file.read_array(path, rows).map_err(located)?;
        *bytes += raw.bytes.len() as u64;
        let layout = Layout::of(&raw.shape, true).map_err(located)?;
        let values = decode(&raw, layout).map_err(located)?;
        if values.len() != n {
            return Err(located(Error::format("the index ends before the blocks")));
        }
        Ok(values)
    }
}

/// The index at `node` (`axis1`, a series' `index`) of the key at `group` as the parts of a
/// [`FixedBatches`], with its rows: a plain number, datetime or string level, and the codes of a
/// MultiIndex or a CategoricalIndex, are read by row ranges; any other index whole.
fn stream_index(
    file: &PtFile,
    group: &str,
    node: &str,
    attrs: &Attrs,
) -> Result<(Vec<IndexPart>, usize)> {
    if let Some((part, rows)) = ranged_index(file, group, node, attrs)? {
        return Ok((vec![part], rows));
    }
    if let Some(coded) = coded_index(file, group, node, attrs)? {
        return Ok(coded);
    }
    let index = read_index(file, group, node, attrs)?;
    let rows = index.first().map(|l| l.values.len()).unwrap_or(0);
    Ok((index.into_iter().map(IndexPart::Whole).collect(), rows))
}

/// The index at `node` when it is one plain level of numbers or datetimes (what
/// [`read_index_node`] reads by `column::numeric`), to be read batch by batch: its part and
/// rows. `None` for any other index.
fn ranged_index(
    file: &PtFile,
    group: &str,
    node: &str,
    attrs: &Attrs,
) -> Result<Option<(IndexPart, usize)>> {
    if !matches!(
        attrs.str(&format!("{node}_variety"))?.as_deref(),
        None | Some("regular")
    ) {
        return Ok(None);
    }
    let path = format!("{group}/{node}");
    if is_vlarray(file, &path)? {
        return Ok(None);
    }
    let node_attrs = Attrs::read(file, &path)?;
    // A DatetimeIndex carries `index_class` datetime (its values are those of `kind`); a
    // PeriodIndex (`index_class` period) is read whole.
    let class = node_attrs.str("index_class")?;
    if node_attrs.has("shape") || !matches!(class.as_deref(), None | Some("datetime")) {
        return Ok(None);
    }
    let kind = node_attrs.str("kind")?.unwrap_or_default();
    if kind == "string" {
        return ranged_text_index(file, &path, &node_attrs);
    }
    let meaning = match kind.as_str() {
        "integer" | "float" => Meaning::Plain,
        k if k.starts_with("datetime64") => Meaning::Datetime {
            unit: Unit::of_dtype(k)?,
            tz: crate::zone::tz_of(&node_attrs)?,
        },
        _ => return Ok(None),
    };
    let info = file.node(&path)?;
    let ([rows], Some(H5Type::Int { .. } | H5Type::Float { .. })) =
        (info.shape.as_slice(), &info.dtype)
    else {
        return Ok(None);
    };
    let Ok(rows) = usize::try_from(*rows) else {
        return Ok(None);
    };
    let name = index_name(&node_attrs)?;
    let empty = arrow_array::new_empty_array(&arrow_schema::DataType::Null);
    Ok(Some((
        IndexPart::Ranged(Level::new(name, empty), path, meaning),
        rows,
    )))
}

/// A string index stored as pandas writes it (a 1-d node of fixed-width strings, missing
/// values as the node's `nan_rep`), to be read batch by batch; `None` for strings stored
/// otherwise (pickled objects: read whole).
fn ranged_text_index(
    file: &PtFile,
    path: &str,
    node_attrs: &Attrs,
) -> Result<Option<(IndexPart, usize)>> {
    let info = file.node(path)?;
    let ([rows], Some(H5Type::FixedString { size, .. })) = (info.shape.as_slice(), &info.dtype)
    else {
        return Ok(None);
    };
    let Ok(rows) = usize::try_from(*rows) else {
        return Ok(None);
    };
    let nan = crate::table::index_nan_rep(node_attrs, "nan_rep")?;
    let name = index_name(node_attrs)?;
    let empty = arrow_array::new_empty_array(&arrow_schema::DataType::Null);
    Ok(Some((
        IndexPart::RangedText(Level::new(name, empty), path.to_string(), *size, nan),
        rows,
    )))
}

/// The index at `node` when it is given by codes (pandas' `write_multi_index`: each level's
/// distinct values at `{node}_level{i}`, a code a row at `{node}_label{i}`; a
/// CategoricalIndex, GH#33909: the codes at `node`, the categories an index at
/// `{node}_categories`): the values read whole, the codes to be read by row ranges. `None`
/// for any other index, or codes not stored as the stream reads them.
fn coded_index(
    file: &PtFile,
    group: &str,
    node: &str,
    attrs: &Attrs,
) -> Result<Option<(Vec<IndexPart>, usize)>> {
    match attrs.str(&format!("{node}_variety"))?.as_deref() {
        Some("multi") => multi_index(file, group, node, attrs),
        None | Some("regular") => categorical_index(file, group, node, attrs),
        Some(_) => Ok(None),
    }
}

/// A MultiIndex's levels read whole, their codes to be read by row ranges ([`coded_index`]).
fn multi_index(
    file: &PtFile,
    group: &str,
    node: &str,
    attrs: &Attrs,
) -> Result<Option<(Vec<IndexPart>, usize)>> {
    let nlevels = attrs.required_int(&format!("{node}_nlevels"))?;
    let mut parts = Vec::new();
    let mut rows = None;
    for i in 0..nlevels.max(0) {
        let path = format!("{group}/{node}_label{i}");
        let Some(len) = codes_rows(file, &path)? else {
            return Ok(None);
        };
        if rows.is_some_and(|r| r != len) {
            return Ok(None);
        }
        rows = Some(len);
        let level = read_index_node(file, &format!("{group}/{node}_level{i}"))?;
        parts.push(IndexPart::Coded(level, path, Coding::Take));
    }
    Ok(rows.map(|rows| (parts, rows)))
}

/// A CategoricalIndex's categories read whole, its codes to be read by row ranges
/// ([`coded_index`]; what [`read_categorical_index`] reads whole).
fn categorical_index(
    file: &PtFile,
    group: &str,
    node: &str,
    attrs: &Attrs,
) -> Result<Option<(Vec<IndexPart>, usize)>> {
    let path = format!("{group}/{node}");
    let node_attrs = Attrs::read(file, &path)?;
    if node_attrs.str("kind")?.as_deref() != Some("category") {
        return Ok(None);
    }
    let Some(rows) = codes_rows(file, &path)? else {
        return Ok(None);
    };
    let categories = read_index(file, group, &format!("{node}_categories"), attrs)?;
    let [categories] = categories.as_slice() else {
        return Ok(None);
    };
    let ordered = node_attrs.has("ordered") && node_attrs.flag("ordered")?;
    let level = Level {
        ordered: Some(ordered),
        ..Level::new(index_name(&node_attrs)?, categories.values.clone())
    };
    Ok(Some((
        vec![IndexPart::Coded(level, path, Coding::Dictionary)],
        rows,
    )))
}

/// The rows of the codes at `path` when they are what the stream reads by row ranges: a
/// 1-d array of integers (not pandas' placeholder of an empty array).
fn codes_rows(file: &PtFile, path: &str) -> Result<Option<usize>> {
    if is_vlarray(file, path)? || Attrs::read(file, path)?.has("shape") {
        return Ok(None);
    }
    let info = file.node(path)?;
    let ([rows], Some(H5Type::Int { .. })) = (info.shape.as_slice(), &info.dtype) else {
        return Ok(None);
    };
    Ok(usize::try_from(*rows).ok())
}
