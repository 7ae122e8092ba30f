//! [`FrameSchema`]: an Arrow schema plus what pandas knows about it — the row index, the column
//! labels and their levels, and per-column pandas metadata. Built from a file's metadata
//! ([`FrameSchema::from_arrow`]) or from Arrow types alone ([`FrameSchema::infer`]); turned back
//! into the metadata pyarrow writes ([`FrameSchema::to_pandas_metadata`]). No I/O.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use serde_json::{Map, Value};

use crate::metadata::{
    ColumnMeta, Creator, IndexDescriptor, ObjectEncoding, PandasMetadata, PandasType, RangeIndex,
};
use sciio_core::{Error, ErrorKind, Result};

/// The pandas version sciio claims in the metadata it writes: the metadata layout is that of
/// pandas >= 1.0 / pyarrow >= 0.15, which every pandas since reads.
pub const WRITTEN_PANDAS_VERSION: &str = "2.2.0";

/// One level of the row index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexLevel {
    /// A RangeIndex stored as metadata only.
    Range(RangeIndex),
    /// A level stored as the Arrow field `field`; `name` is the pandas `index.name`.
    Column {
        /// The Arrow/Parquet field holding the values (`__index_level_0__`, or the name).
        field: String,
        /// The level's name, `None` when unnamed.
        name: Option<String>,
    },
}

impl IndexLevel {
    /// The level's name.
    pub fn name(&self) -> Option<&str> {
        match self {
            IndexLevel::Range(r) => r.name.as_deref(),
            IndexLevel::Column { name, .. } => name.as_deref(),
        }
    }
}

/// One Arrow field of a frame: a data column or a serialised index level.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameColumn {
    /// The Arrow/Parquet field name.
    pub field_name: String,
    /// The pandas metadata of the column (read from the file, or inferred from the Arrow type).
    pub meta: ColumnMeta,
    /// True when this field holds a level of the row index rather than a data column.
    pub is_index: bool,
}

impl FrameColumn {
    /// The pandas label: the metadata `name`, else the field name.
    pub fn label(&self) -> Option<&str> {
        self.meta.name.as_deref().or(if self.is_index {
            None
        } else {
            Some(self.field_name.as_str())
        })
    }

    /// The label split into its levels when the frame has a column MultiIndex (pyarrow stores
    /// `('a', 'b')`, the Python repr of the tuple); `None` when the label is not such a tuple.
    pub fn label_levels(&self) -> Option<Vec<String>> {
        parse_py_tuple(self.label()?)
    }

    /// `Err(Refused)` for columns of pickled or BSON-encoded Python objects, which sciio never
    /// decodes.
    pub fn check_decodable(&self) -> Result<()> {
        if self.meta.pandas_type != PandasType::Object {
            return Ok(());
        }
        match self.meta.object_encoding() {
            Some(ObjectEncoding::Pickle) => Err(Error::new(
                ErrorKind::Refused,
                "column holds pickled Python objects; sciio never unpickles (it can execute code)",
            )
            .with_node(self.field_name.clone())),
            Some(ObjectEncoding::Bson) => Err(Error::new(
                ErrorKind::Refused,
                "column holds BSON-encoded Python objects, which sciio does not decode",
            )
            .with_node(self.field_name.clone())),
            _ => Ok(()),
        }
    }
}

/// How a read batch column is adjusted to what the pandas metadata says (crate-private).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fix {
    /// Cast to the type of the fixed schema (time zone from the metadata, strings to
    /// categorical for fastparquet files, Time64 to Duration for fastparquet timedeltas).
    Cast(DataType),
}

/// The schema of a pandas DataFrame over Arrow.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameSchema {
    arrow: SchemaRef,
    columns: Vec<FrameColumn>,
    index: Vec<IndexLevel>,
    column_levels: Vec<ColumnMeta>,
    pandas_version: Option<String>,
    creator: Option<Creator>,
    attributes: Option<Map<String, Value>>,
    extra: Map<String, Value>,
    fixes: Vec<Option<Fix>>,
    warnings: Vec<String>,
    json_fields: Vec<String>,
}

fn generated_index_name(name: &str) -> bool {
    name.strip_prefix("__index_level_")
        .and_then(|rest| rest.strip_suffix("__"))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// What pyarrow's `get_logical_type` says for an Arrow type.
pub fn pandas_type_of(dt: &DataType) -> PandasType {
    match dt {
        DataType::Null => PandasType::Empty,
        DataType::Boolean => PandasType::Bool,
        DataType::Int8 => PandasType::Int(8),
        DataType::Int16 => PandasType::Int(16),
        DataType::Int32 => PandasType::Int(32),
        DataType::Int64 => PandasType::Int(64),
        DataType::UInt8 => PandasType::UInt(8),
        DataType::UInt16 => PandasType::UInt(16),
        DataType::UInt32 => PandasType::UInt(32),
        DataType::UInt64 => PandasType::UInt(64),
        DataType::Float16 => PandasType::Float(16),
        DataType::Float32 => PandasType::Float(32),
        DataType::Float64 => PandasType::Float(64),
        DataType::Date32 | DataType::Date64 => PandasType::Date,
        DataType::Time32(_) | DataType::Time64(_) => PandasType::Time,
        DataType::Binary | DataType::FixedSizeBinary(_) => PandasType::Bytes,
        DataType::Utf8 => PandasType::Unicode,
        DataType::Dictionary(..) => PandasType::Categorical,
        DataType::List(f) => PandasType::Other(format!("list[{}]", pandas_type_of(f.data_type()))),
        DataType::Timestamp(_, None) => PandasType::Datetime,
        DataType::Timestamp(_, Some(_)) => PandasType::DatetimeTz,
        DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => PandasType::Decimal,
        _ => PandasType::Object,
    }
}

fn unit_str(u: &TimeUnit) -> &'static str {
    match u {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}

/// An Arrow type as pyarrow names it (`str(pa_type)`: `int64`, `double`, `string`,
/// `timestamp[ns, tz=UTC]`, `dictionary<values=string, indices=int8>`, `list<element: int64>`,
/// `struct<a: int64, b: string>`), for listings; not Rust's debug text.
///
/// ```
/// use sciio_pandas::arrow_schema::{DataType, TimeUnit};
/// let t = DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()));
/// assert_eq!(sciio_pandas::pyarrow_type_name(&t), "timestamp[ns, tz=UTC]");
/// assert_eq!(sciio_pandas::pyarrow_type_name(&DataType::Float64), "double");
/// ```
pub fn pyarrow_type_name(dt: &DataType) -> String {
    let child =
        |f: &arrow_schema::FieldRef| format!("{}: {}", f.name(), pyarrow_type_name(f.data_type()));
    match dt {
        DataType::Null => "null".into(),
        DataType::Boolean => "bool".into(),
        DataType::Int8 => "int8".into(),
        DataType::Int16 => "int16".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::UInt8 => "uint8".into(),
        DataType::UInt16 => "uint16".into(),
        DataType::UInt32 => "uint32".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Float16 => "halffloat".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Utf8 => "string".into(),
        DataType::LargeUtf8 => "large_string".into(),
        DataType::Utf8View => "string_view".into(),
        DataType::Binary => "binary".into(),
        DataType::LargeBinary => "large_binary".into(),
        DataType::BinaryView => "binary_view".into(),
        DataType::FixedSizeBinary(n) => format!("fixed_size_binary[{n}]"),
        DataType::Date32 => "date32[day]".into(),
        DataType::Date64 => "date64[ms]".into(),
        DataType::Time32(u) => format!("time32[{}]", unit_str(u)),
        DataType::Time64(u) => format!("time64[{}]", unit_str(u)),
        DataType::Timestamp(u, None) => format!("timestamp[{}]", unit_str(u)),
        DataType::Timestamp(u, Some(tz)) => format!("timestamp[{}, tz={tz}]", unit_str(u)),
        DataType::Duration(u) => format!("duration[{}]", unit_str(u)),
        DataType::Decimal32(p, s) => format!("decimal32({p}, {s})"),
        DataType::Decimal64(p, s) => format!("decimal64({p}, {s})"),
        DataType::Decimal128(p, s) => format!("decimal128({p}, {s})"),
        DataType::Decimal256(p, s) => format!("decimal256({p}, {s})"),
        DataType::List(f) => format!("list<{}>", child(f)),
        DataType::LargeList(f) => format!("large_list<{}>", child(f)),
        DataType::FixedSizeList(f, n) => format!("fixed_size_list<{}>[{n}]", child(f)),
        DataType::Struct(fields) => {
            let inner: Vec<String> = fields.iter().map(child).collect();
            format!("struct<{}>", inner.join(", "))
        }
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => format!(
                "map<{}, {}>",
                pyarrow_type_name(kv[0].data_type()),
                pyarrow_type_name(kv[1].data_type())
            ),
            other => format!("map<{}>", pyarrow_type_name(other)),
        },
        DataType::Dictionary(k, v) => format!(
            "dictionary<values={}, indices={}>",
            pyarrow_type_name(v),
            pyarrow_type_name(k)
        ),
        other => other.to_string().to_lowercase(),
    }
}

/// An Arrow type in words a pandas user reads (`category of str`, `list<int64>`,
/// `struct{a: int32, b: str}`, `datetime64[ns, UTC]`), for messages; not Rust's debug text.
///
/// ```
/// use sciio_pandas::arrow_schema::{DataType, Field};
/// let dict = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::LargeUtf8));
/// assert_eq!(sciio_pandas::arrow_type_text(&dict), "category of str");
/// let list = DataType::new_list(DataType::Int64, true);
/// assert_eq!(sciio_pandas::arrow_type_text(&list), "list<int64>");
/// ```
pub fn arrow_type_text(dt: &DataType) -> String {
    match dt {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "str".into(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "bytes".into(),
        DataType::FixedSizeBinary(n) => format!("bytes[{n}]"),
        DataType::Null => "null".into(),
        DataType::Date32 | DataType::Date64 => "date".into(),
        DataType::Time32(u) | DataType::Time64(u) => format!("time[{}]", unit_str(u)),
        DataType::Timestamp(_, Some(tz)) => {
            format!("{}, {tz}]", numpy_type_of(dt).trim_end_matches(']'))
        }
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s) => format!("decimal({p}, {s})"),
        DataType::Dictionary(_, values) => format!("category of {}", arrow_type_text(values)),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => {
            format!("list<{}>", arrow_type_text(f.data_type()))
        }
        DataType::FixedSizeList(f, n) => format!("list<{}>[{n}]", arrow_type_text(f.data_type())),
        DataType::Struct(fields) => {
            let inner: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: {}", f.name(), arrow_type_text(f.data_type())))
                .collect();
            format!("struct{{{}}}", inner.join(", "))
        }
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => format!(
                "map<{}, {}>",
                arrow_type_text(kv[0].data_type()),
                arrow_type_text(kv[1].data_type())
            ),
            _ => "map".into(),
        },
        other => match numpy_type_of(other).as_str() {
            "object" => other.to_string().to_lowercase(),
            numpy => numpy.to_string(),
        },
    }
}

/// The `numpy_type` pandas would hold an Arrow type in (pyarrow's `str(dtype)`).
pub fn numpy_type_of(dt: &DataType) -> String {
    match dt {
        DataType::Boolean => "bool".into(),
        dt if dt.is_integer() || dt.is_floating() => pandas_type_of(dt).as_str().to_string(),
        DataType::Timestamp(u, _) => format!("datetime64[{}]", unit_str(u)),
        DataType::Duration(u) => format!("timedelta64[{}]", unit_str(u)),
        DataType::Dictionary(k, _) => pandas_type_of(k).as_str().to_string(),
        _ => "object".into(),
    }
}

/// The metadata pyarrow writes for a column of Arrow type `field`; `num_categories` is the
/// dictionary length of a categorical column.
pub fn infer_column_meta(
    name: Option<String>,
    field: &Field,
    num_categories: Option<usize>,
) -> ColumnMeta {
    let dt = field.data_type();
    let mut meta = ColumnMeta::new(
        name,
        Some(field.name().clone()),
        pandas_type_of(dt),
        numpy_type_of(dt),
    );
    let mut m = Map::new();
    match dt {
        DataType::Timestamp(_, Some(tz)) => {
            m.insert("timezone".into(), tz.to_string().into());
        }
        DataType::Dictionary(..) => {
            m.insert("num_categories".into(), num_categories.unwrap_or(0).into());
            m.insert(
                "ordered".into(),
                field.dict_is_ordered().unwrap_or(false).into(),
            );
        }
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) => {
            m.insert("precision".into(), (*p).into());
            m.insert("scale".into(), (*s).into());
        }
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => {
            m.insert("precision".into(), (*p).into());
            m.insert("scale".into(), (*s).into());
        }
        _ => {}
    }
    if !m.is_empty() {
        meta.metadata = Some(m);
    }
    meta
}

/// The `column_indexes` entry pyarrow writes for one level of string column labels.
pub fn string_column_level(name: Option<String>) -> ColumnMeta {
    let mut meta = ColumnMeta::new(name.clone(), name, PandasType::Unicode, "object");
    let mut m = Map::new();
    m.insert("encoding".into(), "UTF-8".into());
    meta.metadata = Some(m);
    meta
}

fn dictionary_key_for(numpy_type: &str) -> DataType {
    match numpy_type {
        "int8" => DataType::Int8,
        "int16" => DataType::Int16,
        "int64" => DataType::Int64,
        _ => DataType::Int32,
    }
}

/// The type a column read from a file should have according to its pandas metadata, when that
/// differs from what the Parquet reader produced.
fn fixed_type(meta: &ColumnMeta, field: &Field) -> Option<DataType> {
    let dt = field.data_type();
    match (&meta.pandas_type, dt) {
        // pyarrow < 0.8 and fastparquet store timestamps as UTC and the zone only in pandas
        // metadata; pyarrow's `_add_any_metadata` applies it, converting to nanoseconds
        // (`pa.timestamp('ns', tz=metadata_tz)`, whatever the stored unit). Values are UTC.
        (PandasType::DatetimeTz, DataType::Timestamp(_, tz)) => {
            let want = meta.timezone()?;
            (tz.as_deref() != Some(want))
                .then(|| DataType::Timestamp(TimeUnit::Nanosecond, Some(want.into())))
        }
        // fastparquet writes categoricals as dictionary-encoded pages without an Arrow schema.
        (
            PandasType::Categorical,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary,
        ) => Some(DataType::Dictionary(
            Box::new(dictionary_key_for(&meta.numpy_type)),
            Box::new(dt.clone()),
        )),
        // fastparquet writes timedelta64 as TIME(MICROS/NANOS) with pandas_type "timedelta64".
        (PandasType::Other(t), DataType::Time64(u)) if t.starts_with("timedelta") => {
            Some(DataType::Duration(*u))
        }
        _ => None,
    }
}

impl FrameSchema {
    /// Interprets the pandas metadata of a file with Arrow schema `schema` and `num_rows` rows,
    /// the way pyarrow's `table_to_dataframe` does. Problems pyarrow tolerates (metadata naming
    /// missing columns, a RangeIndex whose length does not match) become
    /// [`FrameSchema::warnings`]; without metadata the frame gets a default RangeIndex.
    pub fn from_arrow(schema: &Schema, meta: Option<PandasMetadata>, num_rows: u64) -> Self {
        let Some(meta) = meta else {
            return Self::infer(schema, Vec::new());
        };
        let mut warnings = Vec::new();
        let field_names: HashSet<&str> =
            schema.fields().iter().map(|f| f.name().as_str()).collect();

        // Key each `columns` entry by its field name (pyarrow < 0.8: by name, with index
        // entries renamed to their `index_columns` descriptor, as pyarrow's `_add_any_metadata`).
        let stored_index: Vec<&str> = meta
            .index_columns
            .iter()
            .filter_map(|d| match d {
                IndexDescriptor::Column(s) => Some(s.as_str()),
                IndexDescriptor::Range(_) => None,
            })
            .collect();
        let n_data = meta.columns.len().saturating_sub(stored_index.len());
        let mut by_field: HashMap<String, ColumnMeta> = HashMap::new();
        for (i, c) in meta.columns.iter().enumerate() {
            let key = match &c.field_name {
                Some(f) if !f.is_empty() => f.clone(),
                _ if i >= n_data => stored_index
                    .get(i - n_data)
                    .map(|s| s.to_string())
                    .unwrap_or_default(),
                _ => c.name.clone().unwrap_or_else(|| "None".into()),
            };
            if !field_names.contains(key.as_str()) {
                warnings.push(format!(
                    "pandas metadata describes column {key:?}, which the file does not hold"
                ));
            }
            let mut c = c.clone();
            c.field_name = Some(key.clone());
            by_field.insert(key, c);
        }

        let mut index = Vec::new();
        let mut index_fields = HashSet::new();
        for d in &meta.index_columns {
            match d {
                IndexDescriptor::Column(field) => {
                    if !field_names.contains(field.as_str()) {
                        warnings.push(format!(
                            "index column {field:?} is missing from the file; index level dropped"
                        ));
                        continue;
                    }
                    let logical = by_field.get(field).and_then(|c| c.name.clone());
                    let name = match logical {
                        Some(n) if n == *field && generated_index_name(field) => None,
                        other => other,
                    };
                    index_fields.insert(field.clone());
                    index.push(IndexLevel::Column {
                        field: field.clone(),
                        name,
                    });
                }
                IndexDescriptor::Range(r) => {
                    if r.len() != num_rows {
                        warnings.push(format!(
                            "RangeIndex of {} values on {num_rows} rows; using a default index",
                            r.len()
                        ));
                        continue;
                    }
                    index.push(IndexLevel::Range(r.clone()));
                }
            }
        }

        // fastparquet calls every level of a MultiIndex categorical (with the type of its
        // codes) and reads them back as plain values, categorical or not in the frame it was
        // given; so does sciio.
        let plain_levels = stored_index.len() > 1
            && meta
                .creator
                .as_ref()
                .is_some_and(|c| c.library == "fastparquet");
        let mut columns = Vec::new();
        let mut fields = Vec::new();
        let mut fixes = Vec::new();
        for f in schema.fields() {
            let is_index = index_fields.contains(f.name());
            let meta = match by_field.remove(f.name()) {
                Some(m) if plain_levels && is_index && m.pandas_type == PandasType::Categorical => {
                    infer_column_meta(m.name.clone(), f, None)
                }
                Some(m) => m,
                None => {
                    let label = (!is_index).then(|| f.name().clone());
                    infer_column_meta(label, f, None)
                }
            };
            let fix = fixed_type(&meta, f);
            let field = match &fix {
                Some(dt) => {
                    let ordered = meta.categorical().is_some_and(|(_, o)| o);
                    Arc::new(
                        f.as_ref()
                            .clone()
                            .with_data_type(dt.clone())
                            .with_dict_is_ordered(ordered),
                    )
                }
                None => f.clone(),
            };
            fixes.push(fix.map(Fix::Cast));
            fields.push(field);
            columns.push(FrameColumn {
                field_name: f.name().clone(),
                meta,
                is_index,
            });
        }
        FrameSchema {
            arrow: Arc::new(Schema::new(fields)),
            columns,
            index,
            column_levels: meta.column_indexes,
            pandas_version: meta.pandas_version,
            creator: meta.creator,
            attributes: meta.attributes,
            extra: meta.extra,
            fixes,
            warnings,
            json_fields: Vec::new(),
        }
    }

    /// A schema for Arrow data without pandas metadata: every field is a data column labelled by
    /// its name, with metadata inferred from its type (`num_categories` from `dictionaries`,
    /// field name → dictionary length, when known); the index is a default RangeIndex.
    pub fn infer(schema: &Schema, dictionaries: Vec<(String, usize)>) -> Self {
        let dicts: HashMap<String, usize> = dictionaries.into_iter().collect();
        let columns = schema
            .fields()
            .iter()
            .map(|f| FrameColumn {
                field_name: f.name().clone(),
                meta: infer_column_meta(Some(f.name().clone()), f, dicts.get(f.name()).copied()),
                is_index: false,
            })
            .collect();
        FrameSchema {
            arrow: Arc::new(Schema::new(schema.fields().clone())),
            columns,
            index: Vec::new(),
            column_levels: vec![string_column_level(None)],
            pandas_version: None,
            creator: None,
            attributes: None,
            extra: Map::new(),
            fixes: vec![None; schema.fields().len()],
            warnings: Vec::new(),
            json_fields: Vec::new(),
        }
    }

    /// Assembles a schema from parts (used by [`crate::FrameBuilder`]); checks that every
    /// column has one Arrow field and every stored index level names a column.
    pub(crate) fn from_parts(
        arrow: SchemaRef,
        columns: Vec<FrameColumn>,
        index: Vec<IndexLevel>,
        column_levels: Vec<ColumnMeta>,
    ) -> Result<Self> {
        if columns.len() != arrow.fields().len() {
            return Err(Error::invalid_input(
                "frame columns and Arrow fields differ in number",
            ));
        }
        for level in &index {
            if let IndexLevel::Column { field, .. } = level {
                if !columns.iter().any(|c| c.is_index && c.field_name == *field) {
                    return Err(Error::invalid_input(format!(
                        "index level {field:?} has no column"
                    )));
                }
            }
        }
        let n = columns.len();
        Ok(FrameSchema {
            arrow,
            columns,
            index,
            column_levels,
            pandas_version: None,
            creator: None,
            attributes: None,
            extra: Map::new(),
            fixes: vec![None; n],
            warnings: Vec::new(),
            json_fields: Vec::new(),
        })
    }

    /// The Arrow schema of the batches (all fields: data columns and stored index levels, in file
    /// order), without the pandas metadata.
    pub fn arrow_schema(&self) -> &SchemaRef {
        &self.arrow
    }

    /// Every Arrow field's pandas view, in Arrow order (data columns and index levels).
    pub fn fields(&self) -> &[FrameColumn] {
        &self.columns
    }

    /// The data columns, in order.
    pub fn columns(&self) -> impl Iterator<Item = &FrameColumn> {
        self.columns.iter().filter(|c| !c.is_index)
    }

    /// The data column labelled `label`, with its position among the Arrow fields.
    pub fn column(&self, label: &str) -> Result<(usize, &FrameColumn)> {
        self.columns
            .iter()
            .enumerate()
            .find(|(_, c)| !c.is_index && c.label() == Some(label))
            .ok_or_else(|| Error::not_found(format!("no column labelled {label:?}")))
    }

    /// The Arrow field position of the stored index level in field `field`.
    pub fn field_position(&self, field: &str) -> Result<usize> {
        self.columns
            .iter()
            .position(|c| c.field_name == field)
            .ok_or_else(|| Error::not_found(format!("no field {field:?}")))
    }

    /// The schema of rows `offset..offset + rows` of this frame, for frames read or written
    /// batch by batch: each RangeIndex level (the default `RangeIndex(0, num_rows)` when there
    /// is no index) becomes the part of its range over those rows; stored index levels are
    /// data and stay as they are.
    ///
    /// ```
    /// use sciio_pandas::{IndexLevel, RangeIndex};
    /// let frame = sciio_pandas::Frame::builder().range_index(RangeIndex::new(10, 20, 2)).build()?;
    /// let part = frame.schema().rows_slice(2, 3);
    /// assert_eq!(part.index(), &[IndexLevel::Range(RangeIndex::new(14, 20, 2))]);
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn rows_slice(&self, offset: u64, rows: u64) -> FrameSchema {
        let mut out = self.clone();
        if out.index.is_empty() {
            out.index
                .push(IndexLevel::Range(RangeIndex::default_for(usize::MAX)));
        }
        let (offset, rows) = (
            i64::try_from(offset).unwrap_or(i64::MAX),
            i64::try_from(rows).unwrap_or(i64::MAX),
        );
        for level in &mut out.index {
            if let IndexLevel::Range(r) = level {
                let start = r.start.saturating_add(r.step.saturating_mul(offset));
                r.stop = start.saturating_add(r.step.saturating_mul(rows));
                r.start = start;
            }
        }
        out
    }

    /// The row index levels; empty means a default `RangeIndex(0, num_rows)`.
    pub fn index(&self) -> &[IndexLevel] {
        &self.index
    }

    /// The column label levels (`column_indexes`); more than one means a column MultiIndex.
    pub fn column_levels(&self) -> &[ColumnMeta] {
        &self.column_levels
    }

    /// `creator` of the file read (`None` for frames built in Rust).
    pub fn creator(&self) -> Option<&Creator> {
        self.creator.as_ref()
    }

    /// `pandas_version` of the file read.
    pub fn pandas_version(&self) -> Option<&str> {
        self.pandas_version.as_deref()
    }

    /// `attributes` (`DataFrame.attrs`) of the file read.
    pub fn attributes(&self) -> Option<&Map<String, Value>> {
        self.attributes.as_ref()
    }

    /// Problems in the file's metadata that were worked around (as pyarrow does).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    pub(crate) fn add_warning(&mut self, w: String) {
        self.warnings.push(w);
    }

    /// Marks a field whose Parquet logical type is JSON (fastparquet's `object_encoding='json'`).
    pub(crate) fn mark_json(&mut self, field: String) {
        self.json_fields.push(field);
    }

    /// True when the data column holds JSON text: `metadata.encoding` is `json` (pandas spec) or
    /// the Parquet logical type is JSON (what fastparquet writes).
    pub fn is_json(&self, column: &FrameColumn) -> bool {
        column.meta.object_encoding() == Some(ObjectEncoding::Json)
            || self.json_fields.contains(&column.field_name)
    }

    /// The metadata to write for this frame: pyarrow's layout, with the column metadata kept
    /// from the file read (so round trips preserve it) and `creator` set to sciio.
    pub fn to_pandas_metadata(&self, num_categories: &HashMap<String, usize>) -> PandasMetadata {
        let mut data = Vec::new();
        let mut index_cols = Vec::new();
        for (c, f) in self.columns.iter().zip(self.arrow.fields()) {
            let mut meta = c.meta.clone();
            meta.field_name = Some(c.field_name.clone());
            // fastparquet's own type names ("Int32", "boolean", "timedelta64") are not
            // understood by pyarrow: write pyarrow's (`int32` + numpy_type `Int32`...)
            if let PandasType::Other(name) = &meta.pandas_type {
                let masked = meta.is_masked().then(|| name.clone());
                meta.pandas_type = pandas_type_of(f.data_type());
                meta.numpy_type = masked.unwrap_or_else(|| numpy_type_of(f.data_type()));
            }
            if let Some(n) = num_categories.get(&c.field_name) {
                if let Some(m) = meta.metadata.as_mut() {
                    m.insert("num_categories".into(), (*n).into());
                }
            }
            if meta.pandas_type == PandasType::Categorical {
                if let (Some(m), Some(o)) = (meta.metadata.as_mut(), f.dict_is_ordered()) {
                    m.insert("ordered".into(), o.into());
                }
            }
            if c.is_index {
                index_cols.push((c.field_name.clone(), meta));
            } else {
                data.push(meta);
            }
        }
        // index entries follow the data columns, in index level order
        for level in &self.index {
            if let IndexLevel::Column { field, .. } = level {
                if let Some(pos) = index_cols.iter().position(|(f, _)| f == field) {
                    data.push(index_cols.remove(pos).1);
                }
            }
        }
        data.extend(index_cols.into_iter().map(|(_, m)| m));
        let index_columns = self
            .index
            .iter()
            .map(|l| match l {
                IndexLevel::Range(r) => IndexDescriptor::Range(r.clone()),
                IndexLevel::Column { field, .. } => IndexDescriptor::Column(field.clone()),
            })
            .collect();
        PandasMetadata {
            index_columns,
            column_indexes: self.column_levels.clone(),
            columns: data,
            pandas_version: Some(
                self.pandas_version
                    .clone()
                    .unwrap_or_else(|| WRITTEN_PANDAS_VERSION.into()),
            ),
            creator: Some(Creator {
                library: "sciio".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            }),
            attributes: Some(self.attributes.clone().unwrap_or_default()),
            extra: self.extra.clone(),
        }
    }

    /// Adjusts a batch read from the file to this schema (time zones from the metadata,
    /// fastparquet categoricals and timedeltas).
    pub(crate) fn apply_fixes(&self, batch: RecordBatch) -> Result<RecordBatch> {
        self.apply_fixes_as(batch, &self.arrow)
    }

    /// Whether the field at `position` is read as arrow-rs reads it (no fix applies) and is
    /// not JSON text.
    pub(crate) fn read_as_is(&self, position: usize) -> bool {
        matches!(self.fixes.get(position), Some(None))
            && self.columns.get(position).is_some_and(|c| !self.is_json(c))
    }

    /// [`Self::apply_fixes`] into `target`: this schema with some fields read otherwise
    /// (string columns read as dictionaries, see `ReadOptions::dictionary_strings`).
    pub(crate) fn apply_fixes_as(
        &self,
        batch: RecordBatch,
        target: &SchemaRef,
    ) -> Result<RecordBatch> {
        if self.fixes.iter().all(Option::is_none) {
            return Ok(batch);
        }
        let columns = batch
            .columns()
            .iter()
            .zip(&self.fixes)
            .zip(&self.columns)
            .map(|((col, fix), c)| match fix {
                None => Ok(col.clone()),
                Some(Fix::Cast(dt)) => {
                    cast_column(col, dt).map_err(|e| e.with_node(c.field_name.clone()))
                }
            })
            .collect::<Result<Vec<ArrayRef>>>()?;
        RecordBatch::try_new(target.clone(), columns)
            .map_err(|e| Error::format(format!("batch does not match the frame schema: {e}")))
    }

    /// [`Self::apply_fixes`] for a batch of the fields at `positions` only (sorted, in range):
    /// the batch takes the schema's types of those fields.
    pub(crate) fn apply_fixes_at(
        &self,
        batch: RecordBatch,
        positions: &[usize],
    ) -> Result<RecordBatch> {
        let arrow = self
            .arrow
            .project(positions)
            .map_err(|e| Error::format(format!("selecting fields of the frame schema: {e}")))?;
        let columns = batch
            .columns()
            .iter()
            .zip(positions)
            .map(
                |(col, &pos)| match (self.fixes.get(pos), self.columns.get(pos)) {
                    (Some(Some(Fix::Cast(dt))), Some(c)) => {
                        cast_column(col, dt).map_err(|e| e.with_node(c.field_name.clone()))
                    }
                    _ => Ok(col.clone()),
                },
            )
            .collect::<Result<Vec<ArrayRef>>>()?;
        RecordBatch::try_new(Arc::new(arrow), columns)
            .map_err(|e| Error::format(format!("batch does not match the frame schema: {e}")))
    }

    /// The name a stored or range index level gets as an array (`npz` member, print header):
    /// its name, else its field name, else `index` / `level_N` like `DataFrame.reset_index`.
    pub fn index_level_label(&self, i: usize) -> String {
        match self.index.get(i) {
            Some(IndexLevel::Column { name: Some(n), .. })
            | Some(IndexLevel::Range(RangeIndex { name: Some(n), .. })) => n.clone(),
            _ if self.index.len() <= 1 => "index".into(),
            _ => format!("level_{i}"),
        }
    }

    /// A multi-line description for `sciio ls`: index, column levels, then one line per column
    /// with its pandas type, numpy type and Arrow type.
    pub fn describe(&self) -> String {
        self.to_string()
    }
}

fn cast_column(col: &ArrayRef, dt: &DataType) -> Result<ArrayRef> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    match (col.data_type(), dt) {
        (DataType::Time64(TimeUnit::Microsecond), DataType::Duration(TimeUnit::Microsecond)) => {
            let a = col.as_primitive::<Time64MicrosecondType>();
            Ok(Arc::new(a.reinterpret_cast::<DurationMicrosecondType>()))
        }
        (DataType::Time64(TimeUnit::Nanosecond), DataType::Duration(TimeUnit::Nanosecond)) => {
            let a = col.as_primitive::<Time64NanosecondType>();
            Ok(Arc::new(a.reinterpret_cast::<DurationNanosecondType>()))
        }
        // A naive timestamp given the zone of the metadata holds UTC values, as pyarrow and
        // fastparquet read it (INT96 times, pyarrow < 0.8); arrow-rs's cast would take it for
        // local time in the zone. Cast the unit without a zone, then attach the zone.
        (DataType::Timestamp(_, None), DataType::Timestamp(unit, Some(tz))) => {
            let naive =
                arrow_cast::cast(col.as_ref(), &DataType::Timestamp(*unit, None)).map_err(|e| {
                    Error::new(
                        ErrorKind::Mismatch,
                        format!("cannot convert {} to {dt}: {e}", col.data_type()),
                    )
                })?;
            Ok(match unit {
                TimeUnit::Second => Arc::new(
                    naive
                        .as_primitive::<TimestampSecondType>()
                        .clone()
                        .with_timezone(tz.clone()),
                ),
                TimeUnit::Millisecond => Arc::new(
                    naive
                        .as_primitive::<TimestampMillisecondType>()
                        .clone()
                        .with_timezone(tz.clone()),
                ),
                TimeUnit::Microsecond => Arc::new(
                    naive
                        .as_primitive::<TimestampMicrosecondType>()
                        .clone()
                        .with_timezone(tz.clone()),
                ),
                TimeUnit::Nanosecond => Arc::new(
                    naive
                        .as_primitive::<TimestampNanosecondType>()
                        .clone()
                        .with_timezone(tz.clone()),
                ),
            })
        }
        _ => arrow_cast::cast(col.as_ref(), dt).map_err(|e| {
            Error::new(
                ErrorKind::Mismatch,
                format!("cannot convert {} to {dt}: {e}", col.data_type()),
            )
        }),
    }
}

impl fmt::Display for FrameSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |n: Option<&str>| n.map_or("None".to_string(), |n| format!("{n:?}"));
        if self.index.is_empty() {
            writeln!(f, "index: RangeIndex (default)")?;
        }
        for (i, level) in self.index.iter().enumerate() {
            match level {
                IndexLevel::Range(r) => writeln!(
                    f,
                    "index[{i}]: RangeIndex(start={}, stop={}, step={}, name={})",
                    r.start,
                    r.stop,
                    r.step,
                    quoted(r.name.as_deref())
                )?,
                IndexLevel::Column { field, name } => {
                    let c = self.columns.iter().find(|c| &c.field_name == field);
                    let (pt, nt, at) = c
                        .zip(self.arrow.field_with_name(field).ok())
                        .map(|(c, fl)| {
                            (
                                c.meta.pandas_type.to_string(),
                                c.meta.numpy_type.clone(),
                                pyarrow_type_name(fl.data_type()),
                            )
                        })
                        .unwrap_or_default();
                    writeln!(
                        f,
                        "index[{i}]: name={} field={field:?} pandas={pt} numpy={nt} arrow={at}",
                        quoted(name.as_deref())
                    )?
                }
            }
        }
        let names: Vec<String> = self
            .column_levels
            .iter()
            .map(|l| quoted(l.name.as_deref()))
            .collect();
        writeln!(f, "column levels: [{}]", names.join(", "))?;
        for (c, fl) in self.columns.iter().zip(self.arrow.fields()) {
            if c.is_index {
                continue;
            }
            writeln!(
                f,
                "column {}: pandas={} numpy={} arrow={}{}",
                quoted(c.label()),
                c.meta.pandas_type,
                c.meta.numpy_type,
                pyarrow_type_name(fl.data_type()),
                c.meta
                    .metadata
                    .as_ref()
                    .map(|m| format!(" {}", Value::Object(m.clone())))
                    .unwrap_or_default()
            )?;
        }
        Ok(())
    }
}

/// Parses the Python repr of a tuple of strings, `('a', "b'c")`, as pyarrow writes column
/// MultiIndex labels. Returns `None` for anything else.
pub fn parse_py_tuple(s: &str) -> Option<Vec<String>> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut out = Vec::new();
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(quote) = chars.next() else { break };
        if quote != '\'' && quote != '"' {
            return None;
        }
        let mut item = String::new();
        loop {
            match chars.next()? {
                '\\' => match chars.next()? {
                    'n' => item.push('\n'),
                    't' => item.push('\t'),
                    'r' => item.push('\r'),
                    other => item.push(other),
                },
                c if c == quote => break,
                c => item.push(c),
            }
        }
        out.push(item);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            Some(',') => continue,
            None => break,
            Some(_) => return None,
        }
    }
    Some(out)
}

/// The Python repr of a tuple of strings, as pyarrow's `_column_name_to_strings` writes a
/// column MultiIndex label: `('a', 'b')`.
///
/// ```
/// use sciio_pandas::{parse_py_tuple, py_tuple_repr};
/// let s = py_tuple_repr(&["x", "it's"]);
/// assert_eq!(s, r#"('x', "it's")"#);
/// assert_eq!(parse_py_tuple(&s).unwrap(), ["x", "it's"]);
/// ```
pub fn py_tuple_repr<S: AsRef<str>>(items: &[S]) -> String {
    let parts: Vec<String> = items
        .iter()
        .map(|s| {
            let mut out = String::new();
            sciio_core::pyliteral::write_str_repr(s.as_ref(), &mut out);
            out
        })
        .collect();
    if parts.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names() {
        assert!(generated_index_name("__index_level_0__"));
        assert!(generated_index_name("__index_level_12__"));
        assert!(!generated_index_name("__index_level__"));
        assert!(!generated_index_name("idx"));
    }

    #[test]
    fn tuple_round_trip() {
        for items in [vec!["a", "b"], vec!["x"], vec!["q'\"\\", "\n"]] {
            let s = py_tuple_repr(&items);
            assert_eq!(parse_py_tuple(&s).unwrap(), items, "{s}");
        }
        assert_eq!(parse_py_tuple("abc"), None);
    }
}
