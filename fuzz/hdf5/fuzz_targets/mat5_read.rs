//! Arbitrary bytes as a MAT v4 or Level-5 (v5/v6/v7) file: every variable listed and read
//! through the pure-Rust reader (no libhdf5 involved): values or errors, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sciio_mat::fuzz_mat5_read(data);
});
