//! A struct whose `MATLAB_fields` names live in a damaged global heap collection (an object
//! whose index and size read 0): libhdf5 never finishes parsing such a collection (found by
//! fuzzing mat_read), so sciio checks the collection first and reports it. Alone in its test
//! binary: without the check the read would spin forever, holding libhdf5's lock.

use sciio_core::ErrorKind;
use sciio_mat::{MatFile, MatValue, StructArray, WriteOptions};
use sciio_testkit::{tempdir, vlen_descriptor_offsets, within, zero_first_heap_object};

#[test]
fn a_global_heap_libhdf5_would_parse_forever_is_refused() {
    let dir = tempdir();
    let path = dir.path().join("s.mat");
    let s = MatValue::Struct(StructArray::scalar(vec![
        ("alpha".into(), MatValue::from(1.0)),
        ("beta_gamma".into(), MatValue::from(2.0)),
    ]));
    sciio_mat::write_mat(&path, &[("s".into(), s)], &WriteOptions::default()).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    // The collection holding "beta_gamma" (MAT files have a 512-byte user block); its first
    // object (at byte 16 of the collection) becomes object 0 of size 0.
    let found = vlen_descriptor_offsets(&bytes, 512, 10);
    assert_eq!(found.len(), 1, "{found:?}");
    let at = found[0];
    let heap = 512 + u64::from_le_bytes(bytes[at + 4..at + 12].try_into().unwrap()) as usize;
    let first = zero_first_heap_object(&mut bytes, heap);
    let bad = dir.path().join("bad.mat");
    std::fs::write(&bad, bytes).unwrap();

    let err = within(60, "reading the damaged struct", move || {
        MatFile::open(&bad).and_then(|m| m.read("s")).unwrap_err()
    });
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    assert_eq!(err.location().offset, Some(first as u64), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("MATLAB_fields") && text.contains("global heap") && !text.contains('\n'),
        "{text}"
    );
}
