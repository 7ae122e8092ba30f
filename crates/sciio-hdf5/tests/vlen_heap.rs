//! A vlen dataset whose data lives in a global heap collection libhdf5 would parse forever (an
//! object whose index and size read 0): sciio checks the collection before libhdf5 reads the
//! rows and reports it. Alone in its test binary: without the check the read would spin
//! forever, holding libhdf5's lock.

use sciio_core::ErrorKind;
use sciio_hdf5::File;
use sciio_testkit::{run_python, tempdir, vlen_descriptor_offsets, within, zero_first_heap_object};

#[test]
fn vlen_rows_in_a_heap_libhdf5_would_parse_forever_are_refused() {
    let dir = tempdir();
    let path = dir.path().join("vlen.h5");
    run_python(
        "import sys, h5py, numpy as np\n\
         with h5py.File(sys.argv[1], 'w') as f:\n\
         \x20   d = f.create_dataset('v', (3,), dtype=h5py.vlen_dtype('<i4'), chunks=(3,))\n\
         \x20   d[0], d[1], d[2] = np.arange(7), np.arange(2), np.arange(5)\n",
        &[path.to_str().unwrap()],
    );
    assert_eq!(
        File::open(&path)
            .unwrap()
            .dataset("/v")
            .unwrap()
            .read_vlen(None)
            .unwrap()
            .items
            .len(),
        3
    );
    let mut bytes = std::fs::read(&path).unwrap();
    let found = vlen_descriptor_offsets(&bytes, 0, 7);
    assert_eq!(found.len(), 1, "{found:?}");
    let at = found[0];
    let heap = u64::from_le_bytes(bytes[at + 4..at + 12].try_into().unwrap()) as usize;
    let first = zero_first_heap_object(&mut bytes, heap);
    let bad = dir.path().join("bad.h5");
    std::fs::write(&bad, bytes).unwrap();

    let err = within(60, "reading the damaged rows", move || {
        let file = File::open(&bad).unwrap();
        file.dataset("/v").unwrap().read_vlen(None).unwrap_err()
    });
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    assert_eq!(err.location().offset, Some(first as u64), "{err}");
    assert!(
        err.to_string().contains("/v") && err.to_string().contains("global heap"),
        "{err}"
    );
}
