//! Fuzzes the pandas Parquet metadata parser and its interpretation against an Arrow schema:
//! any input must give `Ok` or a clean error, never a panic; what parses must print and re-parse
//! to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_pandas::arrow_schema::{DataType, Field, Schema, TimeUnit};
use sciio_pandas::{FrameSchema, PandasMetadata};

fuzz_target!(|data: &[u8]| {
    let Ok(meta) = PandasMetadata::parse(data) else {
        return;
    };
    let again = PandasMetadata::parse(meta.to_json().as_bytes()).expect("printed metadata parses");
    assert_eq!(again, meta);
    let schema = Schema::new(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("b", DataType::Utf8, true),
        Field::new("__index_level_0__", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("t", DataType::Time64(TimeUnit::Microsecond), true),
    ]);
    let frame = FrameSchema::from_arrow(&schema, Some(meta), 3);
    let _ = frame.describe();
    let _ = frame.to_pandas_metadata(&Default::default()).to_json();
});
