//! Arbitrary bytes as an .npz archive: listing, headers, reading every member (stored and
//! deflate, zip64 records, bomb guards) must return values or errors, never panic or allocate
//! beyond the limits.
#![no_main]

use std::io::{Cursor, Read};

use libfuzzer_sys::fuzz_target;
use sciio_core::Limits;
use sciio_npy::npz::NpzReader;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default().max_alloc(64 << 20);
    let Ok(mut npz) = NpzReader::with_limits(Cursor::new(data), limits) else {
        return;
    };
    let names: Vec<String> = npz.names().into_iter().map(str::to_owned).collect();
    for name in names.iter().take(64) {
        let _ = npz.header(name);
        let _ = npz.read(name);
    }
    // The zip layer alone: stream every member to its end (size and CRC checks).
    let Ok(mut zip) = sciio_zip::ZipArchive::with_limits(Cursor::new(data), limits) else {
        return;
    };
    for i in 0..zip.len().min(64) {
        let _ = zip.data_offset(i);
        if let Ok(mut member) = zip.open_member(i) {
            let mut buf = [0u8; 4096];
            let mut total = 0usize;
            while let Ok(n) = member.read(&mut buf) {
                if n == 0 || total > 64 << 20 {
                    break;
                }
                total += n;
            }
        }
    }
});
