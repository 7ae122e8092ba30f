//! Damaged pages inside a valid Parquet file: the footer stays intact so that every input
//! reaches the page decoders (dictionary, plain, RLE, delta pages of v1 and v2, compressed with
//! snappy / zstd / gzip), where arrow-rs once panicked ("Decoder for dict should have been
//! set", "offset + len out of bounds"). The first byte picks a base file, the next four give
//! an offset into its pages, the rest overwrites the bytes there. Every batch must decode or
//! give a clean error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_core::Limits;
use sciio_pandas::{BadMetadata, ParquetReader, ReadOptions};

/// Base files (python fuzz/seeds/gen_parquet_seeds.py writes the seeds these are copies of).
const BASES: [&[u8]; 3] = [
    include_bytes!("../../seeds/parquet_read/mixed_snappy.parquet"),
    include_bytes!("../../seeds/parquet_read/mixed_zstd.parquet"),
    include_bytes!("../../seeds/parquet_read/strings_fp.parquet"),
];

mod contained_panics;
use contained_panics::abort_only_on_uncontained_panics;

fuzz_target!(|data: &[u8]| {
    abort_only_on_uncontained_panics();
    let [pick, o0, o1, o2, o3, patch @ ..] = data else {
        return;
    };
    let base = BASES[usize::from(*pick) % BASES.len()];
    // The pages lie between the leading magic and the footer (its length is in the last 8
    // bytes); the footer is kept so that the pages are what gets decoded.
    let Some(footer_len) = base
        .len()
        .checked_sub(8)
        .and_then(|at| base.get(at..at + 4))
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize)
    else {
        return;
    };
    let pages_end = base.len().saturating_sub(8 + footer_len);
    if pages_end <= 4 {
        return;
    }
    let offset = 4 + u32::from_le_bytes([*o0, *o1, *o2, *o3]) as usize % (pages_end - 4);
    let mut file = base.to_vec();
    let end = (offset + patch.len()).min(pages_end);
    file[offset..end].copy_from_slice(&patch[..end - offset]);
    let options = ReadOptions::new()
        .limits(Limits::default().max_alloc(64 << 20))
        .batch_size(1024)
        .bad_metadata(BadMetadata::Ignore)
        .threads(1);
    let Ok(reader) = ParquetReader::from_bytes(file, &options) else {
        return;
    };
    for batch in reader.take(64) {
        if batch.is_err() {
            return;
        }
    }
});
