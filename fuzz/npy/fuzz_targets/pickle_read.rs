//! Arbitrary bytes as a Python pickle: a tree of values or a clean error, never a panic, never
//! more values than the limits allow (the memo lets a few bytes share a list 2**40 times).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_pickle::{parse_with, ParseLimits};

fuzz_target!(|data: &[u8]| {
    let limits = ParseLimits {
        max_values: 1 << 16,
        max_depth: 200,
    };
    let _ = parse_with(data, &limits);
    let _ = sciio_pickle::parse_string_array(data, &limits);
});
