//! Arbitrary bytes as a Python pickle: a tree of values or a clean error, never a panic, never
//! more values than the limits allow (the memo lets a few bytes share a list 2**40 times).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_pickle::{parse_with, ParseLimits};

fuzz_target!(|data: &[u8]| {
    let limits = ParseLimits {
        max_values: 1 << 16,
        max_depth: 200,
        ..ParseLimits::default()
    };
    let _ = parse_with(data, &limits);
    let whole = sciio_pickle::parse_string_array(data, &limits);
    // Read in pieces of 7 bytes, a pickle read straight gives as many items, batch by batch.
    let len = data.len() as u64;
    let scan = sciio_pickle::scan_string_array(data, len, &limits, 7).ok().flatten();
    // Never read in pieces what the whole path does not read straight.
    assert!(scan.is_none() || whole.is_some());
    if let (Some(scan), Some((_, column))) = (scan, whole) {
        let batches = sciio_pickle::stream_string_array(data, len, &limits, &scan, 3, 7)
            .expect("the scan's stream reads again");
        let rows: usize = batches.map(|b| b.expect("a batch of a scanned stream").len()).sum();
        assert_eq!(rows, column.len());
    }
});
