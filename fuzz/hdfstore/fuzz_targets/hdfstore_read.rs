//! Arbitrary bytes as a pandas HDFStore: listing the keys and reading every key into a frame
//! (fixed and table layouts, pickled attributes and object arrays) must return a frame or an
//! error, never panic. Seeds: small stores pandas wrote (fuzz/seeds/hdfstore_read). libhdf5
//! needs a path, so the input is written to a temporary file first.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_hdfstore::HdfStore;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("input.h5");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let Ok(store) = HdfStore::open(&path) else { return };
    let Ok(keys) = store.keys() else { return };
    for key in keys {
        if let Ok(frame) = store.read(&key.key) {
            let _ = frame.to_text(20);
        }
    }
});
