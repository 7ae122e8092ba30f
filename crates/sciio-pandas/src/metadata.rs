//! The `pandas` key of Parquet key-value metadata: parsing and printing, no I/O.
//!
//! The format is pandas' developer guide "Storing pandas DataFrame objects in Apache Parquet
//! format"; where pyarrow (`pyarrow/pandas_compat.py`, the reference writer and reader) or
//! fastparquet write something the guide does not mention, this module follows the tools:
//!
//! * metadata written by pyarrow < 0.8 (the `v0.7.1` files in pyarrow's test data) has no
//!   `field_name` and no `creator`, and sometimes no `column_indexes`;
//! * pyarrow adds `attributes` (`DataFrame.attrs`), fastparquet adds `partition_columns`; unknown
//!   keys are kept in [`PandasMetadata::extra`] so a round trip preserves them;
//! * fastparquet writes nullable types as `pandas_type` `"Int32"`/`"boolean"` and timedeltas as
//!   `"timedelta64"`; pyarrow writes `pandas_type` `"int32"` with `numpy_type` `"Int32"`.
//!
//! Labels (`name`) are JSON strings or `null` in every file the tools write; a number (pyarrow keeps
//! JSON-serialisable RangeIndex names) is kept as its JSON text.

use serde_json::{Map, Value};

use sciio_core::{Error, Result};

/// The key-value metadata key holding the pandas metadata JSON.
pub const PANDAS_KEY: &str = "pandas";

/// The logical pandas type of a column (`pandas_type`).
///
/// An open set: values this crate does not name (`"mixed-integer"`, `"list[int64]"`,
/// fastparquet's `"Int32"`) are kept verbatim in [`PandasType::Other`].
///
/// ```
/// use sciio_pandas::PandasType;
/// assert_eq!(PandasType::parse("datetimetz"), PandasType::DatetimeTz);
/// assert_eq!(PandasType::parse("int16").as_str(), "int16");
/// assert_eq!(PandasType::parse("Int32"), PandasType::Other("Int32".into()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PandasType {
    /// `bool`
    Bool,
    /// `int8` … `int64` (the width in bits)
    Int(u8),
    /// `uint8` … `uint64` (the width in bits)
    UInt(u8),
    /// `float16`, `float32`, `float64` (the width in bits)
    Float(u8),
    /// `datetime`: naive timestamps
    Datetime,
    /// `datetimetz`: timestamps with a time zone in the column metadata
    DatetimeTz,
    /// `timedelta`
    Timedelta,
    /// `date`
    Date,
    /// `time`
    Time,
    /// `unicode` (and `string`, which pyarrow < 0.8 wrote for column indexes)
    Unicode,
    /// `bytes`
    Bytes,
    /// `decimal`
    Decimal,
    /// `categorical`
    Categorical,
    /// `object`: Python objects, possibly with an `encoding` in the metadata
    Object,
    /// `empty`: an all-null column or an empty column index
    Empty,
    /// anything else, verbatim
    Other(String),
}

impl PandasType {
    /// Parses a `pandas_type` string; never fails (unknown names become [`PandasType::Other`]).
    pub fn parse(s: &str) -> PandasType {
        match s {
            "bool" => PandasType::Bool,
            "int8" => PandasType::Int(8),
            "int16" => PandasType::Int(16),
            "int32" => PandasType::Int(32),
            "int64" => PandasType::Int(64),
            "uint8" => PandasType::UInt(8),
            "uint16" => PandasType::UInt(16),
            "uint32" => PandasType::UInt(32),
            "uint64" => PandasType::UInt(64),
            "float16" => PandasType::Float(16),
            "float32" => PandasType::Float(32),
            "float64" => PandasType::Float(64),
            "datetime" => PandasType::Datetime,
            "datetimetz" => PandasType::DatetimeTz,
            "timedelta" => PandasType::Timedelta,
            "date" => PandasType::Date,
            "time" => PandasType::Time,
            "unicode" => PandasType::Unicode,
            "bytes" => PandasType::Bytes,
            "decimal" => PandasType::Decimal,
            "categorical" => PandasType::Categorical,
            "object" => PandasType::Object,
            "empty" => PandasType::Empty,
            other => PandasType::Other(other.to_string()),
        }
    }

    /// The `pandas_type` string as written in the metadata.
    pub fn as_str(&self) -> &str {
        match self {
            PandasType::Bool => "bool",
            PandasType::Int(8) => "int8",
            PandasType::Int(16) => "int16",
            PandasType::Int(32) => "int32",
            PandasType::Int(_) => "int64",
            PandasType::UInt(8) => "uint8",
            PandasType::UInt(16) => "uint16",
            PandasType::UInt(32) => "uint32",
            PandasType::UInt(_) => "uint64",
            PandasType::Float(16) => "float16",
            PandasType::Float(32) => "float32",
            PandasType::Float(_) => "float64",
            PandasType::Datetime => "datetime",
            PandasType::DatetimeTz => "datetimetz",
            PandasType::Timedelta => "timedelta",
            PandasType::Date => "date",
            PandasType::Time => "time",
            PandasType::Unicode => "unicode",
            PandasType::Bytes => "bytes",
            PandasType::Decimal => "decimal",
            PandasType::Categorical => "categorical",
            PandasType::Object => "object",
            PandasType::Empty => "empty",
            PandasType::Other(s) => s,
        }
    }
}

impl std::fmt::Display for PandasType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How an `object` column's values are serialised (`metadata.encoding`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectEncoding {
    /// JSON text; sciio decodes it.
    Json,
    /// Python pickles; sciio refuses them (unpickling executes code).
    Pickle,
    /// BSON documents; sciio refuses them.
    Bson,
    /// Any other encoding name, verbatim.
    Other(String),
}

/// A RangeIndex stored as metadata only: `{"kind": "range", "name", "start", "stop", "step"}`.
///
/// ```
/// use sciio_pandas::RangeIndex;
/// let r = RangeIndex::new(0, 10, 2).with_name("r");
/// assert_eq!(r.len(), 5);
/// assert_eq!(RangeIndex::new(10, 0, -3).len(), 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeIndex {
    /// First value.
    pub start: i64,
    /// One past the last value (exclusive bound, as in Python's `range`).
    pub stop: i64,
    /// Step; never 0 in a valid descriptor.
    pub step: i64,
    /// The index name (`index.name`), `None` when unnamed.
    pub name: Option<String>,
}

impl RangeIndex {
    /// `range(start, stop, step)` without a name.
    pub fn new(start: i64, stop: i64, step: i64) -> Self {
        RangeIndex {
            start,
            stop,
            step,
            name: None,
        }
    }

    /// The default index of a frame of `rows` rows: `RangeIndex(0, rows, 1)`.
    pub fn default_for(rows: usize) -> Self {
        RangeIndex::new(0, i64::try_from(rows).unwrap_or(i64::MAX), 1)
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Number of values, computed like Python's `len(range(...))` (0 for a zero step).
    pub fn len(&self) -> u64 {
        let (start, stop, step) = (
            i128::from(self.start),
            i128::from(self.stop),
            i128::from(self.step),
        );
        let n = if step > 0 && start < stop {
            (stop - start - 1) / step + 1
        } else if step < 0 && start > stop {
            (start - stop - 1) / (-step) + 1
        } else {
            0
        };
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// True when the range holds no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th value (no bounds check; callers stay below [`RangeIndex::len`]).
    pub fn value(&self, i: u64) -> i64 {
        let v = i128::from(self.start) + i128::from(i) * i128::from(self.step);
        i64::try_from(v).unwrap_or(if self.step > 0 { i64::MAX } else { i64::MIN })
    }
}

/// One entry of `index_columns`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexDescriptor {
    /// The index level is stored as the data column with this field name.
    Column(String),
    /// The index level is a RangeIndex stored as metadata only.
    Range(RangeIndex),
}

/// One entry of `columns` (data and index columns) or of `column_indexes` (column label levels).
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnMeta {
    /// The pandas label (`name`): `None` for unnamed index levels and unnamed column levels.
    pub name: Option<String>,
    /// The Arrow/Parquet field name (`field_name`); absent in metadata of pyarrow < 0.8.
    pub field_name: Option<String>,
    /// The logical type.
    pub pandas_type: PandasType,
    /// `str(dtype)` of the pandas column (`"int64"`, `"datetime64[ns]"`, `"Int32"`, `"object"`).
    pub numpy_type: String,
    /// Type-specific details (`timezone`, `unit`, `num_categories`, `ordered`, `encoding`,
    /// `precision`, `scale`), or `None`.
    pub metadata: Option<Map<String, Value>>,
}

impl ColumnMeta {
    /// A column description without type-specific details.
    pub fn new(
        name: Option<String>,
        field_name: Option<String>,
        pandas_type: PandasType,
        numpy_type: impl Into<String>,
    ) -> Self {
        ColumnMeta {
            name,
            field_name,
            pandas_type,
            numpy_type: numpy_type.into(),
            metadata: None,
        }
    }

    fn meta_str(&self, key: &str) -> Option<&str> {
        self.metadata.as_ref()?.get(key)?.as_str()
    }

    /// `metadata.timezone` of a `datetimetz` column.
    pub fn timezone(&self) -> Option<&str> {
        self.meta_str("timezone")
    }

    /// `metadata.unit` (`datetimetz`, `timedelta`), defaulting to `"ns"` as the spec says.
    pub fn unit(&self) -> &str {
        self.meta_str("unit").unwrap_or("ns")
    }

    /// `(num_categories, ordered)` of a `categorical` column.
    pub fn categorical(&self) -> Option<(u64, bool)> {
        let m = self.metadata.as_ref()?;
        let n = m.get("num_categories").and_then(Value::as_u64)?;
        let ordered = m.get("ordered").and_then(Value::as_bool).unwrap_or(false);
        Some((n, ordered))
    }

    /// `metadata.encoding` of an `object` (or `unicode`) column.
    pub fn object_encoding(&self) -> Option<ObjectEncoding> {
        let e = self.meta_str("encoding")?;
        Some(match e {
            "json" => ObjectEncoding::Json,
            "pickle" => ObjectEncoding::Pickle,
            "bson" => ObjectEncoding::Bson,
            other => ObjectEncoding::Other(other.to_string()),
        })
    }

    /// `(precision, scale)` of a `decimal` column.
    pub fn decimal(&self) -> Option<(u64, i64)> {
        let m = self.metadata.as_ref()?;
        Some((m.get("precision")?.as_u64()?, m.get("scale")?.as_i64()?))
    }

    /// True for pandas' masked (nullable) extension types: `Int8`…`UInt64`, `boolean`,
    /// `Float32`/`Float64`, whether pyarrow (in `numpy_type`) or fastparquet (in `pandas_type`)
    /// wrote it.
    pub fn is_masked(&self) -> bool {
        fn masked(s: &str) -> bool {
            s == "boolean"
                || s.strip_prefix("Int")
                    .or_else(|| s.strip_prefix("UInt"))
                    .or_else(|| s.strip_prefix("Float"))
                    .is_some_and(|bits| ["8", "16", "32", "64"].contains(&bits))
        }
        masked(&self.numpy_type) || masked(self.pandas_type.as_str())
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), opt_str(&self.name));
        m.insert("field_name".into(), opt_str(&self.field_name));
        m.insert("pandas_type".into(), self.pandas_type.as_str().into());
        m.insert("numpy_type".into(), self.numpy_type.clone().into());
        m.insert(
            "metadata".into(),
            self.metadata.clone().map_or(Value::Null, Value::Object),
        );
        Value::Object(m)
    }
}

/// `creator`: the library that wrote the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Creator {
    /// `"pyarrow"`, `"fastparquet"`, `"sciio"`…
    pub library: String,
    /// Its version.
    pub version: String,
}

/// The whole `pandas` metadata object.
///
/// ```
/// use sciio_pandas::{IndexDescriptor, PandasMetadata, PandasType};
/// let json = r#"{"index_columns": [{"kind": "range", "name": null, "start": 0, "stop": 3, "step": 1}],
///   "column_indexes": [], "pandas_version": "2.2.0",
///   "columns": [{"name": "a", "field_name": "a", "pandas_type": "int64", "numpy_type": "int64", "metadata": null}]}"#;
/// let meta = PandasMetadata::parse(json.as_bytes())?;
/// assert!(matches!(meta.index_columns[0], IndexDescriptor::Range(_)));
/// assert_eq!(meta.columns[0].pandas_type, PandasType::Int(64));
/// assert_eq!(PandasMetadata::parse(meta.to_json().as_bytes())?, meta);
/// # Ok::<(), sciio_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PandasMetadata {
    /// How to rebuild the row index, one descriptor per level.
    pub index_columns: Vec<IndexDescriptor>,
    /// The column label levels (one entry per level of a column MultiIndex).
    pub column_indexes: Vec<ColumnMeta>,
    /// Data columns, then serialised index columns.
    pub columns: Vec<ColumnMeta>,
    /// `pandas_version`.
    pub pandas_version: Option<String>,
    /// `creator`.
    pub creator: Option<Creator>,
    /// `attributes` (`DataFrame.attrs`), written by pyarrow >= 14.
    pub attributes: Option<Map<String, Value>>,
    /// Keys this crate does not interpret, kept for round trips.
    pub extra: Map<String, Value>,
}

fn opt_str(s: &Option<String>) -> Value {
    s.clone().map_or(Value::Null, Value::String)
}

fn err(path: &str, why: impl std::fmt::Display) -> Error {
    Error::format(format!("pandas metadata: {path}: {why}"))
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A label: a string, `null`, or (kept as its JSON text) a number or other JSON value.
fn label(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn as_array<'a>(v: &'a Value, path: &str) -> Result<&'a Vec<Value>> {
    v.as_array()
        .ok_or_else(|| err(path, format!("expected an array, found {}", kind_of(v))))
}

fn as_object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>> {
    v.as_object()
        .ok_or_else(|| err(path, format!("expected an object, found {}", kind_of(v))))
}

fn req_str(m: &Map<String, Value>, key: &str, path: &str) -> Result<String> {
    match m.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(err(
            &format!("{path}.{key}"),
            format!("expected a string, found {}", kind_of(v)),
        )),
        None => Err(err(path, format!("missing key {key:?}"))),
    }
}

fn opt_string(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(err(
            &format!("{path}.{key}"),
            format!("expected a string or null, found {}", kind_of(v)),
        )),
    }
}

fn req_i64(m: &Map<String, Value>, key: &str, path: &str) -> Result<i64> {
    match m.get(key) {
        Some(v) => v.as_i64().ok_or_else(|| {
            err(
                &format!("{path}.{key}"),
                format!("expected a 64-bit integer, found {v}"),
            )
        }),
        None => Err(err(path, format!("missing key {key:?}"))),
    }
}

fn parse_descriptor(v: &Value, path: &str) -> Result<IndexDescriptor> {
    match v {
        Value::String(s) => Ok(IndexDescriptor::Column(s.clone())),
        Value::Object(m) => {
            let kind = req_str(m, "kind", path)?;
            if kind != "range" {
                return Err(err(path, format!("unknown index kind {kind:?}")));
            }
            let step = req_i64(m, "step", path)?;
            if step == 0 {
                return Err(err(&format!("{path}.step"), "a RangeIndex step of 0"));
            }
            Ok(IndexDescriptor::Range(RangeIndex {
                start: req_i64(m, "start", path)?,
                stop: req_i64(m, "stop", path)?,
                step,
                name: label(m.get("name")),
            }))
        }
        other => Err(err(
            path,
            format!("expected a string or an object, found {}", kind_of(other)),
        )),
    }
}

fn parse_column(v: &Value, path: &str) -> Result<ColumnMeta> {
    let m = as_object(v, path)?;
    let pandas_type = match m.get("pandas_type") {
        Some(Value::String(s)) => PandasType::parse(s),
        // fastparquet and old pyarrow always write it; tolerate absence as "object" like pandas
        None | Some(Value::Null) => PandasType::Object,
        Some(v) => {
            return Err(err(
                &format!("{path}.pandas_type"),
                format!("expected a string, found {}", kind_of(v)),
            ))
        }
    };
    let numpy_type = opt_string(m, "numpy_type", path)?.unwrap_or_else(|| "object".into());
    let metadata = match m.get("metadata") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o.clone()),
        Some(v) => {
            return Err(err(
                &format!("{path}.metadata"),
                format!("expected an object or null, found {}", kind_of(v)),
            ))
        }
    };
    Ok(ColumnMeta {
        name: label(m.get("name")),
        field_name: match m.get("field_name") {
            None | Some(Value::Null) => None,
            Some(v) => label(Some(v)),
        },
        pandas_type,
        numpy_type,
        metadata,
    })
}

fn parse_list<T>(
    m: &Map<String, Value>,
    key: &str,
    parse: impl Fn(&Value, &str) -> Result<T>,
) -> Result<Vec<T>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v) => as_array(v, key)?
            .iter()
            .enumerate()
            .map(|(i, item)| parse(item, &format!("{key}[{i}]")))
            .collect(),
    }
}

impl PandasMetadata {
    /// Parses the JSON value of the `pandas` key. Every structural problem (bad JSON, wrong
    /// types, a zero RangeIndex step, an unknown index kind) is an [`sciio_core::ErrorKind::Format`]
    /// error naming the JSON path.
    pub fn parse(json: &[u8]) -> Result<Self> {
        let value: Value = serde_json::from_slice(json).map_err(|e| {
            Error::format(format!(
                "pandas metadata is not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ))
        })?;
        Self::from_value(&value)
    }

    /// Interprets an already parsed JSON value.
    pub fn from_value(value: &Value) -> Result<Self> {
        let m = as_object(value, "top level")?;
        let creator = match m.get("creator") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let c = as_object(v, "creator")?;
                Some(Creator {
                    library: opt_string(c, "library", "creator")?.unwrap_or_default(),
                    version: opt_string(c, "version", "creator")?.unwrap_or_default(),
                })
            }
        };
        let attributes = match m.get("attributes") {
            None | Some(Value::Null) => None,
            Some(v) => Some(as_object(v, "attributes")?.clone()),
        };
        const KNOWN: [&str; 6] = [
            "index_columns",
            "column_indexes",
            "columns",
            "pandas_version",
            "creator",
            "attributes",
        ];
        let extra = m
            .iter()
            .filter(|(k, _)| !KNOWN.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(PandasMetadata {
            index_columns: parse_list(m, "index_columns", parse_descriptor)?,
            column_indexes: parse_list(m, "column_indexes", parse_column)?,
            columns: parse_list(m, "columns", parse_column)?,
            pandas_version: match m.get("pandas_version") {
                None | Some(Value::Null) => None,
                Some(v) => label(Some(v)),
            },
            creator,
            attributes,
            extra,
        })
    }

    /// The JSON value, with keys in pyarrow's order.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        let index: Vec<Value> = self
            .index_columns
            .iter()
            .map(|d| match d {
                IndexDescriptor::Column(s) => Value::String(s.clone()),
                IndexDescriptor::Range(r) => {
                    let mut o = Map::new();
                    o.insert("kind".into(), "range".into());
                    o.insert("name".into(), opt_str(&r.name));
                    o.insert("start".into(), r.start.into());
                    o.insert("stop".into(), r.stop.into());
                    o.insert("step".into(), r.step.into());
                    Value::Object(o)
                }
            })
            .collect();
        m.insert("index_columns".into(), Value::Array(index));
        m.insert(
            "column_indexes".into(),
            self.column_indexes
                .iter()
                .map(ColumnMeta::to_json)
                .collect(),
        );
        m.insert(
            "columns".into(),
            self.columns.iter().map(ColumnMeta::to_json).collect(),
        );
        if let Some(a) = &self.attributes {
            m.insert("attributes".into(), Value::Object(a.clone()));
        }
        if let Some(c) = &self.creator {
            let mut o = Map::new();
            o.insert("library".into(), c.library.clone().into());
            o.insert("version".into(), c.version.clone().into());
            m.insert("creator".into(), Value::Object(o));
        }
        m.insert("pandas_version".into(), opt_str(&self.pandas_version));
        for (k, v) in &self.extra {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// The JSON text written under the `pandas` key.
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A number pandas wrote (here in a key sciio keeps without interpreting it) comes back as
    /// the same float: serde_json's default parser may miss the last digit (found by the
    /// pandas_metadata fuzz target: this integer too large for i64 parsed to a float printed
    /// as ...491e+28 and read back as ...493e+28).
    #[test]
    fn numbers_print_back_as_the_floats_they_were() {
        let json = br#"{"indrUt": 11757080892158492222222221008}"#;
        let meta = PandasMetadata::parse(json).unwrap();
        let again = PandasMetadata::parse(meta.to_json().as_bytes()).unwrap();
        assert_eq!(again, meta);
        assert!(
            meta.to_json().contains("1.1757080892158491e+28"),
            "{}",
            meta.to_json()
        );
    }
}
