//! Arbitrary bytes as MATLAB's FileWrapper__ object metadata (the blob of `/#subsystem#/MCOS`)
//! and as a `string` object's data words: every lookup returns a value or an error, never a
//! panic (no libhdf5 involved, so this target explores the byte parser directly).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sciio_mat::fuzz_mcos_metadata(data);
});
