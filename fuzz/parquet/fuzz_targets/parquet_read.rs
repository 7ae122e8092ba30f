//! Arbitrary bytes as a pandas Parquet file: footer, schema, pandas metadata and every record
//! batch must decode or give a clean error, never panic or allocate beyond the limits; what
//! decodes must also convert to numpy-style arrays and print.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_core::Limits;
use sciio_pandas::{BadMetadata, Frame, ParquetReader, ReadOptions};

mod contained_panics;
use contained_panics::abort_only_on_uncontained_panics;

fuzz_target!(|data: &[u8]| {
    abort_only_on_uncontained_panics();
    let limits = Limits::default().max_alloc(64 << 20);
    // Small batches so that a fuzzed row count cannot make one batch huge.
    let options = ReadOptions::new()
        .limits(limits)
        .batch_size(1024)
        .bad_metadata(BadMetadata::Ignore)
        .threads(1);
    let Ok(reader) = ParquetReader::from_bytes(data.to_vec(), &options) else {
        return;
    };
    let schema = reader.schema().clone();
    let _ = schema.to_string();
    let mut batches = Vec::new();
    for batch in reader.take(64) {
        match batch {
            Ok(b) => batches.push(b),
            Err(_) => return,
        }
    }
    let Ok(frame) = Frame::new(schema, batches) else {
        return;
    };
    let _ = frame.to_text(20);
    let _ = frame.to_ndarrays(&limits);
});
