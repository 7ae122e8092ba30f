//! A [`Frame`] as one JSON document, in pandas' `to_json(orient="split")` layout, for scripts
//! (`sciio cat --json` of a Parquet file or an HDFStore key).
//!
//! ```json
//! {"columns": ["n", "s"], "index_names": ["key"], "dtypes": ["int64", "str"],
//!  "index": ["a", "b"], "data": [[1, "x"], [2, null]], "rows": 2}
//! ```
//!
//! - `index` holds one entry per row: the level's value, or a list of the levels' values for a
//!   MultiIndex. The default index is the row number.
//! - `dtypes` are the dtype names pandas 3 gives each column (`str(df.dtypes[c])`: `int64`,
//!   `str`, `category`, `datetime64[ns, Europe/Paris]`, `object` for bytes and lists).
//! - Values follow `sciio cat --json`'s rules for arrays: integers and finite floats are
//!   numbers, NaN is `"nan"`, infinities `"inf"`/`"-inf"`, a missing value is `null`. Strings
//!   are strings, bytes latin-1 strings, categoricals their category, lists JSON lists, structs
//!   objects, instants ISO 8601 text with their offset (`2024-03-31T04:00:00+02:00`),
//!   durations ISO 8601 durations, decimals their exact text.
//! - `rows` is the frame's row count; `data` may hold fewer rows when a slice was asked for.

use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::DataType;
use serde_json::{json, Map, Value as Json};

use crate::frame::Frame;
use crate::schema::numpy_type_of;
use sciio_core::json::{float_json, latin1};
use sciio_core::{Error, Result};

impl Frame {
    /// The rows `rows` of the frame (clamped to its length) as one JSON document in pandas'
    /// `orient="split"` layout; see the module documentation for the value rules.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::{Float64Array, StringArray};
    /// let frame = sciio_pandas::Frame::builder()
    ///     .column("x", Arc::new(Float64Array::from(vec![1.5, f64::NAN])))
    ///     .index_level(Some("key"), Arc::new(StringArray::from(vec!["a", "b"])))
    ///     .build()?;
    /// let doc = frame.to_json(0..usize::MAX)?;
    /// assert_eq!(doc["data"], serde_json::json!([[1.5], ["nan"]]));
    /// assert_eq!(doc["index"], serde_json::json!(["a", "b"]));
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn to_json(&self, rows: Range<usize>) -> Result<Json> {
        let n = self.num_rows();
        let rows = rows.start.min(n)..rows.end.min(n);
        let index = self.index_arrays()?;
        let mut labels = Vec::new();
        let mut dtypes = Vec::new();
        let mut columns = Vec::new();
        for c in self.schema().columns() {
            let label = c.label().unwrap_or("None").to_string();
            c.check_decodable()
                .map_err(|e| e.with_node(label.clone()))?;
            let array = self.column(&label)?;
            dtypes.push(Json::from(pandas_dtype(array.data_type())));
            labels.push(Json::from(label));
            columns.push(array);
        }
        let index_names: Vec<Json> = if self.schema().index().is_empty() {
            vec![Json::Null]
        } else {
            (0..self.schema().index().len())
                .map(|i| Json::from(self.schema().index_level_label(i)))
                .collect()
        };
        let mut index_rows = Vec::with_capacity(rows.len());
        let mut data = Vec::with_capacity(rows.len());
        for row in rows {
            let mut levels = index
                .iter()
                .map(|(_, a)| cell(a, row))
                .collect::<Result<Vec<_>>>()?;
            index_rows.push(if levels.len() == 1 {
                levels.pop().unwrap_or(Json::Null)
            } else {
                Json::Array(levels)
            });
            data.push(Json::Array(
                columns
                    .iter()
                    .map(|a| cell(a, row))
                    .collect::<Result<Vec<_>>>()?,
            ));
        }
        Ok(json!({
            "columns": labels,
            "index_names": index_names,
            "dtypes": dtypes,
            "index": index_rows,
            "data": data,
            "rows": n,
        }))
    }
}

/// The dtype name pandas 3 shows (`df.dtypes`): numpy's, `category`, `str`, or a zoned
/// datetime.
fn pandas_dtype(dt: &DataType) -> String {
    match dt {
        DataType::Dictionary(_, _) => "category".into(),
        // pandas 3 reads strings as its `str` dtype
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "str".into(),
        DataType::Timestamp(_, Some(tz)) => {
            let naive = numpy_type_of(dt);
            format!("{}, {tz}]", naive.trim_end_matches(']'))
        }
        _ => numpy_type_of(dt),
    }
}

/// One value of `array` as JSON, by the module's rules.
fn cell(array: &ArrayRef, row: usize) -> Result<Json> {
    if array.is_null(row) {
        return Ok(Json::Null);
    }
    let a = array.as_ref();
    Ok(match a.data_type() {
        DataType::Boolean => Json::from(a.as_boolean().value(row)),
        DataType::Int8 => Json::from(a.as_primitive::<Int8Type>().value(row)),
        DataType::Int16 => Json::from(a.as_primitive::<Int16Type>().value(row)),
        DataType::Int32 => Json::from(a.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => Json::from(a.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => Json::from(a.as_primitive::<UInt8Type>().value(row)),
        DataType::UInt16 => Json::from(a.as_primitive::<UInt16Type>().value(row)),
        DataType::UInt32 => Json::from(a.as_primitive::<UInt32Type>().value(row)),
        DataType::UInt64 => Json::from(a.as_primitive::<UInt64Type>().value(row)),
        DataType::Float16 => float_json(a.as_primitive::<Float16Type>().value(row).to_f64()),
        DataType::Float32 => {
            // the shortest digits of the f32 (1.1, as pandas prints it), not of its f64 widening
            let x = a.as_primitive::<Float32Type>().value(row);
            float_json(x.to_string().parse::<f64>().unwrap_or(f64::from(x)))
        }
        DataType::Float64 => float_json(a.as_primitive::<Float64Type>().value(row)),
        DataType::Utf8 => Json::from(a.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => Json::from(a.as_string::<i64>().value(row)),
        DataType::Utf8View => Json::from(a.as_string_view().value(row)),
        DataType::Binary => Json::from(latin1(a.as_binary::<i32>().value(row))),
        DataType::LargeBinary => Json::from(latin1(a.as_binary::<i64>().value(row))),
        DataType::BinaryView => Json::from(latin1(a.as_binary_view().value(row))),
        DataType::FixedSizeBinary(_) => Json::from(latin1(a.as_fixed_size_binary().value(row))),
        DataType::Dictionary(_, _) => {
            let dict = a.as_any_dictionary();
            let key = dict.normalized_keys().get(row).copied().unwrap_or(0);
            cell(dict.values(), key)?
        }
        DataType::List(_) => list(a.as_list::<i32>().value(row))?,
        DataType::LargeList(_) => list(a.as_list::<i64>().value(row))?,
        DataType::FixedSizeList(_, _) => list(a.as_fixed_size_list().value(row))?,
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let mut map = Map::new();
            for (field, child) in fields.iter().zip(s.columns()) {
                map.insert(field.name().clone(), cell(child, row)?);
            }
            Json::Object(map)
        }
        _ => Json::from(text(array, row)?),
    })
}

fn list(values: ArrayRef) -> Result<Json> {
    (0..values.len())
        .map(|i| cell(&values, i))
        .collect::<Result<Vec<_>>>()
        .map(Json::Array)
}

/// Arrow's display text (ISO 8601 for instants and durations, exact decimals); a zone name
/// chrono-tz does not know is shown in UTC rather than refused.
fn text(array: &ArrayRef, row: usize) -> Result<String> {
    let opts = FormatOptions::default();
    let (shown, _) =
        crate::frame::displayable(array, &opts).map_err(|e| Error::unsupported(e.to_string()))?;
    let fmt = ArrayFormatter::try_new(shown.as_ref(), &opts).map_err(|e| {
        Error::unsupported(format!(
            "cannot write a {} value as JSON: {e}",
            array.data_type()
        ))
    })?;
    Ok(fmt.value(row).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{DictionaryArray, Int64Array, StringArray, TimestampNanosecondArray};
    use std::sync::Arc;

    #[test]
    fn values_follow_the_array_rules_and_a_multiindex_gives_lists() {
        let cats: DictionaryArray<Int8Type> =
            vec![Some("lo"), None, Some("hi")].into_iter().collect();
        let frame = Frame::builder()
            .column(
                "x",
                Arc::new(arrow_array::Float64Array::from(vec![
                    f64::INFINITY,
                    0.5,
                    f64::NAN,
                ])),
            )
            .column(
                "s",
                Arc::new(StringArray::from(vec![Some("a"), None, Some("é")])),
            )
            .column("c", Arc::new(cats))
            .column(
                "t",
                Arc::new(
                    TimestampNanosecondArray::from(vec![Some(0), None, Some(1_500_000_000)])
                        .with_timezone("+02:00"),
                ),
            )
            .index_level(Some("k"), Arc::new(Int64Array::from(vec![7, 8, 9])))
            .index_level(Some("l"), Arc::new(StringArray::from(vec!["u", "v", "w"])))
            .build()
            .unwrap();
        let doc = frame.to_json(1..10).unwrap();
        assert_eq!(doc["columns"], json!(["x", "s", "c", "t"]));
        assert_eq!(doc["index_names"], json!(["k", "l"]));
        assert_eq!(
            doc["dtypes"],
            json!(["float64", "str", "category", "datetime64[ns, +02:00]"])
        );
        assert_eq!(doc["index"], json!([[8, "v"], [9, "w"]]));
        assert_eq!(
            doc["data"],
            json!([
                [0.5, null, null, null],
                ["nan", "é", "hi", "1970-01-01T02:00:01.500+02:00"]
            ])
        );
        assert_eq!(doc["rows"], json!(3));
        let all = frame.to_json(0..usize::MAX).unwrap();
        assert_eq!(all["data"][0][0], json!("inf"));
        assert_eq!(all["data"][0][2], json!("lo"));
    }
}
