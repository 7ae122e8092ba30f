//! [`Frame`]: a pandas DataFrame held as Arrow record batches plus its [`FrameSchema`], and
//! [`FrameBuilder`] to describe one from Rust.

use std::fmt::Write as _;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{Array, ArrayRef, Int64Array, PrimitiveArray, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field, Schema};
use serde_json::Value;

use crate::metadata::{ColumnMeta, PandasType, RangeIndex};
use crate::schema::{
    infer_column_meta, py_tuple_repr, string_column_level, FrameColumn, FrameSchema, IndexLevel,
};
use sciio_core::{Error, ErrorKind, Result};

/// A pandas DataFrame over Arrow: record batches (data columns and stored index levels) and the
/// [`FrameSchema`] that says which is which, the index, the column labels and pandas metadata.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Float64Array, Int64Array};
/// use arrow_array::types::Float64Type;
/// use sciio_pandas::{Frame, RangeIndex};
///
/// let frame = Frame::builder()
///     .column("x", Arc::new(Float64Array::from(vec![1.5, 2.5])))
///     .column("n", Arc::new(Int64Array::from(vec![7, 8])))
///     .range_index(RangeIndex::new(10, 14, 2).with_name("r"))
///     .build()?;
/// assert_eq!(frame.num_rows(), 2);
/// assert_eq!(frame.primitive::<Float64Type>("x")?.values().to_vec(), vec![1.5, 2.5]);
/// let arrays = frame.column_arrays()?; // the index first, then the columns
/// assert_eq!(arrays[0].0, "r");
/// # Ok::<(), sciio_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Frame {
    schema: FrameSchema,
    batches: Vec<RecordBatch>,
}

impl Frame {
    /// A frame from a schema and batches of its Arrow schema.
    pub fn new(schema: FrameSchema, batches: Vec<RecordBatch>) -> Result<Self> {
        for b in &batches {
            if b.schema().fields() != schema.arrow_schema().fields() {
                return Err(Error::mismatch(
                    "record batch fields differ from the frame schema",
                ));
            }
        }
        Ok(Frame { schema, batches })
    }

    /// Starts describing a frame column by column.
    pub fn builder() -> FrameBuilder {
        FrameBuilder::default()
    }

    /// The schema: index, labels, pandas metadata.
    pub fn schema(&self) -> &FrameSchema {
        &self.schema
    }

    /// The record batches (data columns and stored index levels, in Arrow field order).
    pub fn batches(&self) -> &[RecordBatch] {
        &self.batches
    }

    /// Takes the schema and batches apart.
    pub fn into_parts(self) -> (FrameSchema, Vec<RecordBatch>) {
        (self.schema, self.batches)
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// The Arrow field at `pos`, all batches concatenated.
    fn field_array(&self, pos: usize) -> Result<ArrayRef> {
        let parts: Vec<&dyn Array> = self
            .batches
            .iter()
            .filter_map(|b| b.columns().get(pos).map(|c| c.as_ref()))
            .collect();
        if parts.is_empty() {
            let dt = self.schema.arrow_schema().field(pos).data_type().clone();
            return Ok(arrow_array::new_empty_array(&dt));
        }
        let shared = shared_dictionary(&parts);
        let parts: Vec<&dyn Array> = match &shared {
            Some(same) => same.iter().map(|a| a.as_ref()).collect(),
            None => parts,
        };
        arrow_select::concat::concat(&parts)
            .map_err(|e| Error::new(ErrorKind::LimitExceeded, format!("concatenating: {e}")))
    }

    /// The data column labelled `label` as one Arrow array. Pickled/BSON object columns are
    /// refused ([`ErrorKind::Refused`]); other columns stay readable.
    pub fn column(&self, label: &str) -> Result<ArrayRef> {
        let (pos, c) = self.schema.column(label)?;
        c.check_decodable()?;
        self.field_array(pos)
    }

    /// Typed access: the column as a primitive array of `T` (`Int64Type`, `Float64Type`,
    /// `TimestampNanosecondType`...); [`ErrorKind::Mismatch`] when the column is another type.
    pub fn primitive<T: ArrowPrimitiveType>(&self, label: &str) -> Result<PrimitiveArray<T>> {
        let a = self.column(label)?;
        a.as_primitive_opt::<T>().cloned().ok_or_else(|| {
            Error::mismatch(format!("column is {}, not {}", a.data_type(), T::DATA_TYPE))
                .with_node(label)
        })
    }

    /// Typed access to a string column (`unicode`, or a categorical decoded to its values).
    pub fn strings(&self, label: &str) -> Result<Vec<Option<String>>> {
        let a = self.column(label)?;
        let a = match a.data_type() {
            DataType::Dictionary(_, v) => arrow_cast::cast(a.as_ref(), v)
                .map_err(|e| Error::mismatch(e.to_string()).with_node(label))?,
            _ => a,
        };
        let a = arrow_cast::cast(a.as_ref(), &DataType::Utf8).map_err(|_| {
            Error::mismatch(format!("column is {}, not strings", a.data_type())).with_node(label)
        })?;
        let s = a.as_string::<i32>();
        Ok(s.iter().map(|v| v.map(str::to_string)).collect())
    }

    /// A categorical column: (codes, categories, ordered). Codes are -1 for missing values,
    /// as in pandas.
    pub fn categorical(&self, label: &str) -> Result<(Vec<i64>, ArrayRef, bool)> {
        let (pos, _) = self.schema.column(label)?;
        let ordered = self
            .schema
            .arrow_schema()
            .field(pos)
            .dict_is_ordered()
            .ok_or_else(|| Error::mismatch("column is not categorical").with_node(label))?;
        let a = self.column(label)?;
        let dict = a
            .as_any_dictionary_opt()
            .ok_or_else(|| Error::mismatch("column is not categorical").with_node(label))?;
        let keys = arrow_cast::cast(dict.keys(), &DataType::Int64)
            .map_err(|e| Error::mismatch(e.to_string()).with_node(label))?;
        let keys = keys.as_primitive::<arrow_array::types::Int64Type>();
        let codes = keys.iter().map(|k| k.unwrap_or(-1)).collect();
        Ok((codes, dict.values().clone(), ordered))
    }

    /// Decodes an `object` column with `json` encoding into JSON values (`None` for nulls).
    pub fn json_values(&self, label: &str) -> Result<Vec<Option<Value>>> {
        let (_, c) = self.schema.column(label)?;
        if !self.schema.is_json(c) {
            return Err(Error::mismatch("column is not JSON-encoded objects").with_node(label));
        }
        let a = self.column(label)?;
        let a = arrow_cast::cast(a.as_ref(), &DataType::Binary)
            .map_err(|e| Error::mismatch(e.to_string()).with_node(label))?;
        a.as_binary::<i32>()
            .iter()
            .enumerate()
            .map(|(row, v)| {
                v.map(|bytes| {
                    serde_json::from_slice(bytes).map_err(|e| {
                        Error::format(format!("row {row}: invalid JSON: {e}")).with_node(label)
                    })
                })
                .transpose()
            })
            .collect()
    }

    /// The row index levels as arrays with their labels: stored levels as read, a RangeIndex
    /// materialised as int64 (the default index too).
    pub fn index_arrays(&self) -> Result<Vec<(String, ArrayRef)>> {
        let rows = self.num_rows();
        if self.schema.index().is_empty() {
            let r = RangeIndex::default_for(rows);
            return Ok(vec![("index".into(), range_array(&r, rows)?)]);
        }
        self.schema
            .index()
            .iter()
            .enumerate()
            .map(|(i, level)| {
                let label = self.schema.index_level_label(i);
                let array = match level {
                    IndexLevel::Range(r) => range_array(r, rows)?,
                    IndexLevel::Column { field, .. } => {
                        self.field_array(self.schema.field_position(field)?)?
                    }
                };
                Ok((label, array))
            })
            .collect()
    }

    /// One array per index level, then one per data column, with names — what `x.parquet →
    /// y.npz` stores. Fails on pickled/BSON object columns (never decoded).
    pub fn column_arrays(&self) -> Result<Vec<(String, ArrayRef)>> {
        let mut out = self.index_arrays()?;
        for c in self.schema.columns() {
            let label = c.label().unwrap_or("None").to_string();
            out.push((label.clone(), self.column(&label)?));
        }
        Ok(out)
    }

    /// A text rendering like `print(df)`: index columns then data columns, the first and last
    /// `max_rows / 2` rows when longer.
    pub fn to_text(&self, max_rows: usize) -> Result<String> {
        render(self, max_rows)
    }
}

/// Dictionary arrays whose dictionaries are equal, given one shared dictionary: Arrow's
/// concatenation keeps a shared dictionary as it is, but merges distinct ones, dropping unused
/// values (categories) and reordering. `None` when not dictionaries or the dictionaries differ.
fn shared_dictionary(parts: &[&dyn Array]) -> Option<Vec<ArrayRef>> {
    let first = parts.first()?.as_any_dictionary_opt()?.values().clone();
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        let d = p.as_any_dictionary_opt()?;
        if !Arc::ptr_eq(d.values(), &first) && d.values().to_data() != first.to_data() {
            return None;
        }
        out.push(d.with_values(first.clone()));
    }
    Some(out)
}

fn range_array(r: &RangeIndex, rows: usize) -> Result<ArrayRef> {
    let n = usize::try_from(r.len()).unwrap_or(usize::MAX).min(rows);
    Ok(Arc::new(Int64Array::from_iter_values(
        (0..n as u64).map(|i| r.value(i)),
    )))
}

/// `array` as Arrow can display it with `opts`: unchanged, or — a zoned timestamp column whose
/// zone name chrono-tz does not know — cast to UTC, with that zone's name (shown in UTC rather
/// than refused; `cat` says so in its header, `cat --json` writes UTC offsets).
pub(crate) fn displayable(
    array: &ArrayRef,
    opts: &FormatOptions,
) -> std::result::Result<(ArrayRef, Option<Arc<str>>), arrow_schema::ArrowError> {
    match array.data_type() {
        DataType::Timestamp(u, Some(tz)) if ArrayFormatter::try_new(array, opts).is_err() => {
            let utc = DataType::Timestamp(*u, Some("+00:00".into()));
            Ok((arrow_cast::cast(array, &utc)?, Some(tz.clone())))
        }
        _ => Ok((array.clone(), None)),
    }
}

fn render(frame: &Frame, max_rows: usize) -> Result<String> {
    let rows = frame.num_rows();
    let mut cols: Vec<(String, ArrayRef)> = frame.index_arrays()?;
    for c in frame.schema().columns() {
        let label = c.label().unwrap_or("None").to_string();
        let array = match c.check_decodable() {
            Ok(()) => frame.column(&label)?,
            Err(_) => {
                let enc = c.meta.object_encoding();
                let text = format!("<refused: {enc:?}>");
                Arc::new(arrow_array::StringArray::from(vec![text; rows]))
            }
        };
        cols.push((label, array));
    }
    // instants as pandas prints them: `2024-03-31 04:00:00+02:00`, fractions only when set
    let opts = FormatOptions::default()
        .with_null("NaN")
        .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f"))
        .with_timestamp_tz_format(Some("%Y-%m-%d %H:%M:%S%.f%:z"));
    let shown: Vec<usize> = if rows <= max_rows {
        (0..rows).collect()
    } else {
        let half = max_rows / 2;
        (0..half).chain(rows - half..rows).collect()
    };
    let mut table: Vec<Vec<String>> = Vec::new();
    for (label, array) in &mut cols {
        // named zones print in local time with their offset, as pandas prints them; a zone
        // name chrono-tz does not know prints in UTC, saying so in the header
        let (display, zone) = displayable(array, &opts)
            .map_err(|e| Error::unsupported(format!("cannot print {label}: {e}")))?;
        *array = display;
        if let Some(tz) = zone {
            *label = format!("{label} ({tz} shown as UTC)");
        }
        let fmt = ArrayFormatter::try_new(array.as_ref(), &opts)
            .map_err(|e| Error::unsupported(format!("cannot print {label}: {e}")))?;
        let mut cells = vec![label.clone()];
        for &i in &shown {
            cells.push(fmt.value(i).to_string());
        }
        table.push(cells);
    }
    let widths: Vec<usize> = table
        .iter()
        .map(|c| c.iter().map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let n_index = frame.schema().index().len().max(1);
    for line in 0..=shown.len() {
        if line > 0 && rows > max_rows && line == max_rows / 2 + 1 {
            out.push_str("...\n");
        }
        for (j, col) in table.iter().enumerate() {
            let sep = if j == n_index { " | " } else { " " };
            if j > 0 {
                out.push_str(sep);
            }
            let _ = write!(out, "{:>w$}", col[line], w = widths[j]);
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "[{rows} rows x {} columns]",
        frame.schema().columns().count()
    );
    Ok(out)
}

/// Describes a [`Frame`] from Rust: columns, the index (a RangeIndex, or stored levels) and the
/// column label levels. The metadata written for it is what pyarrow writes for the same pandas
/// frame.
///
/// Defaults: a default RangeIndex, one unnamed level of string column labels.
#[derive(Debug)]
struct BuilderColumn {
    label: String,
    values: ArrayRef,
    numpy_type: Option<String>,
    ordered: bool,
    /// A pandas Period column of this frequency (`M`, `D`, `Q-DEC`...).
    period: Option<String>,
    /// Labelled `None` in pandas (an unnamed Series as a frame).
    unnamed: bool,
}

impl BuilderColumn {
    fn new(label: String, values: ArrayRef) -> Self {
        BuilderColumn {
            label,
            values,
            numpy_type: None,
            ordered: false,
            period: None,
            unnamed: false,
        }
    }
}

/// The Arrow field metadata pyarrow gives a pandas Period column: the `pandas.period`
/// extension type over int64 ordinals (pandas registers it, so `pd.read_parquet` gives
/// `period[freq]` back).
pub const PERIOD_EXTENSION: &str = "pandas.period";

fn period_field_metadata(freq: &str) -> std::collections::HashMap<String, String> {
    // As pyarrow serialises it: `{"freq": "M"}`.
    let json = format!("{{\"freq\": {}}}", serde_json::Value::from(freq));
    [
        (
            "ARROW:extension:name".to_string(),
            PERIOD_EXTENSION.to_string(),
        ),
        ("ARROW:extension:metadata".to_string(), json),
    ]
    .into_iter()
    .collect()
}

/// The frequency of a pandas Period column (`Some("M")` for `period[M]`): its Arrow field
/// carries the `pandas.period` extension type, as pyarrow writes it.
pub fn period_freq(field: &Field) -> Option<String> {
    let md = field.metadata();
    if md.get("ARROW:extension:name").map(String::as_str) != Some(PERIOD_EXTENSION) {
        return None;
    }
    let json: serde_json::Value = serde_json::from_str(md.get("ARROW:extension:metadata")?).ok()?;
    json.get("freq")?.as_str().map(str::to_string)
}

/// A stored index level: name, values, Period frequency, categorical `ordered` flag.
#[derive(Debug)]
struct BuilderLevel {
    name: Option<String>,
    values: ArrayRef,
    period: Option<String>,
    ordered: bool,
}

#[derive(Debug, Default)]
pub struct FrameBuilder {
    columns: Vec<BuilderColumn>,
    index: Vec<BuilderLevel>,
    range: Option<RangeIndex>,
    level_names: Option<Vec<Option<String>>>,
    /// numpy dtypes of the column label levels that are not text (`int64`, `float64`).
    level_dtypes: Vec<Option<String>>,
}

impl FrameBuilder {
    /// Adds a data column labelled `label`.
    pub fn column(mut self, label: impl Into<String>, values: ArrayRef) -> Self {
        self.columns.push(BuilderColumn::new(label.into(), values));
        self
    }

    /// Adds a data column pandas labels `None` (an unnamed Series as a frame; pyarrow names
    /// its field `None`).
    pub fn unnamed_column(self, values: ArrayRef) -> Self {
        self.column("None", values).unnamed()
    }

    /// Labels the column added last `None` in pandas (its field stays named as added, as
    /// pyarrow names such a field `None`).
    pub fn unnamed(mut self) -> Self {
        if let Some(c) = self.columns.last_mut() {
            c.unnamed = true;
        }
        self
    }

    /// Adds a pandas Period column (`period[freq]`): `ordinals` are int64 period ordinals
    /// (missing: null), kept as pyarrow keeps them (the `pandas.period` extension type).
    pub fn period(mut self, label: impl Into<String>, ordinals: ArrayRef, freq: &str) -> Self {
        let mut c = BuilderColumn::new(label.into(), ordinals);
        c.period = Some(freq.to_string());
        self.columns.push(c);
        self
    }

    /// Adds a stored index level of pandas Periods (a PeriodIndex when alone).
    pub fn period_index_level(
        mut self,
        name: Option<&str>,
        ordinals: ArrayRef,
        freq: &str,
    ) -> Self {
        self.index.push(BuilderLevel {
            name: name.map(str::to_string),
            values: ordinals,
            period: Some(freq.to_string()),
            ordered: false,
        });
        self
    }

    /// Adds a stored index level of categories (`values` a dictionary array; a
    /// CategoricalIndex when alone), `ordered` as pandas' flag.
    pub fn categorical_index_level(
        mut self,
        name: Option<&str>,
        values: ArrayRef,
        ordered: bool,
    ) -> Self {
        self.index.push(BuilderLevel {
            name: name.map(str::to_string),
            values,
            period: None,
            ordered,
        });
        self
    }

    /// Adds a categorical column: `values` is an Arrow dictionary array (codes and categories,
    /// unused categories included); `ordered` is pandas' ordered flag.
    pub fn categorical(
        mut self,
        label: impl Into<String>,
        values: ArrayRef,
        ordered: bool,
    ) -> Self {
        let mut c = BuilderColumn::new(label.into(), values);
        c.ordered = ordered;
        self.columns.push(c);
        self
    }

    /// Adds a data column with a given pandas `numpy_type`, e.g. `"Int64"` or `"boolean"` for
    /// pandas' masked (nullable) dtypes.
    pub fn column_with_numpy_type(
        mut self,
        label: impl Into<String>,
        values: ArrayRef,
        numpy_type: impl Into<String>,
    ) -> Self {
        let mut c = BuilderColumn::new(label.into(), values);
        c.numpy_type = Some(numpy_type.into());
        self.columns.push(c);
        self
    }

    /// Adds a data column labelled by a tuple (a column MultiIndex; set the level names with
    /// [`FrameBuilder::column_levels`]).
    pub fn column_tuple<S: AsRef<str>>(self, label: &[S], values: ArrayRef) -> Self {
        self.column(py_tuple_repr(label), values)
    }

    /// Names of the column label levels (more than one: a column MultiIndex).
    pub fn column_levels<S: AsRef<str>>(mut self, names: &[Option<S>]) -> Self {
        self.level_names = Some(
            names
                .iter()
                .map(|n| n.as_ref().map(|s| s.as_ref().to_string()))
                .collect(),
        );
        self
    }

    /// The numpy dtype of each column label level (`None`: text, the default), such as
    /// `int64` for labels pandas keeps as integers: the labels stay text in the schema, and
    /// the metadata (`column_indexes`) records the dtype pandas restores them to.
    pub fn column_level_dtypes<S: AsRef<str>>(mut self, dtypes: &[Option<S>]) -> Self {
        self.level_dtypes = dtypes
            .iter()
            .map(|d| d.as_ref().map(|s| s.as_ref().to_string()))
            .collect();
        self
    }

    /// Uses a RangeIndex (stored as metadata only).
    pub fn range_index(mut self, range: RangeIndex) -> Self {
        self.range = Some(range);
        self
    }

    /// Adds a stored index level (several make a MultiIndex), named or not.
    pub fn index_level(mut self, name: Option<&str>, values: ArrayRef) -> Self {
        self.index.push(BuilderLevel {
            name: name.map(str::to_string),
            values,
            period: None,
            ordered: false,
        });
        self
    }

    /// Checks lengths and names and builds the frame (one record batch).
    pub fn build(self) -> Result<Frame> {
        let rows = self
            .columns
            .first()
            .map(|c| c.values.len())
            .or_else(|| self.index.first().map(|c| c.values.len()))
            .or_else(|| self.range.as_ref().map(|r| r.len() as usize))
            .unwrap_or(0);
        let labels: Vec<&String> = self.columns.iter().map(|c| &c.label).collect();
        for (i, label) in labels.iter().enumerate() {
            if labels[..i].contains(label) {
                return Err(Error::invalid_input(format!(
                    "duplicate column label {label:?}"
                )));
            }
        }
        if self.range.is_some() && !self.index.is_empty() {
            return Err(Error::invalid_input(
                "a frame has either a RangeIndex or stored index levels",
            ));
        }
        if let Some(r) = &self.range {
            if r.step == 0 || r.len() != rows as u64 {
                return Err(Error::invalid_input(format!(
                    "RangeIndex of {} values for {rows} rows",
                    r.len()
                )));
            }
        }
        let mut fields = Vec::new();
        let mut arrays = Vec::new();
        let mut columns = Vec::new();
        for BuilderColumn {
            label,
            values,
            numpy_type,
            ordered,
            period,
            unnamed,
        } in &self.columns
        {
            check_len(label, values, rows)?;
            let mut field =
                Field::new(label, values.data_type().clone(), true).with_dict_is_ordered(*ordered);
            if let Some(freq) = period {
                field = field.with_metadata(period_field_metadata(freq));
            }
            let name = (!*unnamed).then(|| label.clone());
            let mut meta = infer_column_meta(name, &field, dict_len(values));
            if let Some(t) = numpy_type {
                meta.numpy_type = t.clone();
            }
            if let Some(freq) = period {
                meta.pandas_type = PandasType::Object;
                meta.numpy_type = format!("period[{freq}]");
            }
            columns.push(FrameColumn {
                field_name: label.clone(),
                meta,
                is_index: false,
            });
            fields.push(field);
            arrays.push(values.clone());
        }
        // pyarrow's `_index_level_name`: the name unless unnamed or colliding with a column
        let mut taken: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        let mut index = Vec::new();
        for (
            i,
            BuilderLevel {
                name,
                values,
                period,
                ordered,
            },
        ) in self.index.iter().enumerate()
        {
            let field_name = match name {
                Some(n) if !taken.contains(n) => n.clone(),
                _ => {
                    let mut j = i;
                    while taken.contains(&format!("__index_level_{j}__")) {
                        j += 1;
                    }
                    format!("__index_level_{j}__")
                }
            };
            check_len(&field_name, values, rows)?;
            taken.push(field_name.clone());
            let mut field = Field::new(&field_name, values.data_type().clone(), true)
                .with_dict_is_ordered(*ordered);
            if let Some(freq) = period {
                field = field.with_metadata(period_field_metadata(freq));
            }
            let mut meta = infer_column_meta(name.clone(), &field, dict_len(values));
            meta.field_name = Some(field_name.clone());
            if let Some(freq) = period {
                meta.pandas_type = PandasType::Object;
                meta.numpy_type = format!("period[{freq}]");
            }
            columns.push(FrameColumn {
                field_name: field_name.clone(),
                meta,
                is_index: true,
            });
            index.push(IndexLevel::Column {
                field: field_name,
                name: name.clone(),
            });
            fields.push(field);
            arrays.push(values.clone());
        }
        if let Some(r) = self.range {
            index.push(IndexLevel::Range(r));
        } else if self.index.is_empty() {
            index.push(IndexLevel::Range(RangeIndex::default_for(rows)));
        }
        let column_levels = match self.level_names {
            Some(names) => names.into_iter().map(string_column_level).collect(),
            // Labels that are not all strings (`None` among them): pandas' `mixed`, as
            // pyarrow records them (pandas then keeps `None` rather than reading NaN).
            None if self.columns.iter().any(|c| c.unnamed) => {
                let mut level = string_column_level(None);
                level.pandas_type = PandasType::parse("mixed");
                level.numpy_type = "object".into();
                level.metadata = None;
                vec![level]
            }
            None => vec![string_column_level(None)],
        };
        let mut column_levels = column_levels;
        for (level, dtype) in column_levels.iter_mut().zip(&self.level_dtypes) {
            if let Some(dtype) = dtype {
                level.pandas_type = PandasType::parse(dtype);
                level.numpy_type = dtype.clone();
                level.metadata = None;
            }
        }
        let column_levels = if self.columns.is_empty() {
            // pandas infers an empty column index as 'empty'
            let mut c: Vec<ColumnMeta> = column_levels;
            for l in &mut c {
                l.pandas_type = PandasType::Empty;
                l.metadata = None;
            }
            c
        } else {
            column_levels
        };
        let arrow = Arc::new(Schema::new(fields));
        let schema = FrameSchema::from_parts(arrow.clone(), columns, index, column_levels)?;
        let batch = RecordBatch::try_new_with_options(
            arrow,
            arrays,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| Error::invalid_input(format!("building the frame: {e}")))?;
        Frame::new(schema, vec![batch])
    }
}

fn check_len(label: &str, values: &ArrayRef, rows: usize) -> Result<()> {
    if values.len() != rows {
        return Err(Error::invalid_input(format!(
            "column {label:?} has {} rows, the frame {rows}",
            values.len()
        )));
    }
    Ok(())
}

fn dict_len(values: &ArrayRef) -> Option<usize> {
    values.as_any_dictionary_opt().map(|d| d.values().len())
}
