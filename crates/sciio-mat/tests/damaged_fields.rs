//! A struct whose `MATLAB_fields` attribute declares a field name of four billion characters
//! (one damaged length in the file): reading it is a Corrupt error naming the attribute, before
//! libhdf5 would allocate and zero that much for it (what fuzzing mat_read found). The same
//! file undamaged reads back.

use sciio_core::ErrorKind;
use sciio_mat::{MatFile, MatValue, StructArray, WriteOptions};
use sciio_testkit::{tempdir, vlen_descriptor_offsets};

#[test]
fn a_damaged_field_name_length_is_refused_before_libhdf5_allocates_it() {
    let dir = tempdir();
    let path = dir.path().join("s.mat");
    let s = MatValue::Struct(StructArray::scalar(vec![
        ("alpha".into(), MatValue::from(1.0)),
        ("beta_gamma".into(), MatValue::from(2.0)),
    ]));
    sciio_mat::write_mat(&path, &[("s".into(), s.clone())], &WriteOptions::default()).unwrap();
    assert_eq!(MatFile::open(&path).unwrap().read("s").unwrap(), s);

    // MAT files start with a 512-byte user block; "beta_gamma" is 10 one-character strings.
    let mut bytes = std::fs::read(&path).unwrap();
    let found = vlen_descriptor_offsets(&bytes, 512, 10);
    assert_eq!(
        found.len(),
        1,
        "MATLAB_fields element of beta_gamma: {found:?}"
    );
    bytes[found[0]..found[0] + 4].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    let bad = dir.path().join("bad.mat");
    std::fs::write(&bad, bytes).unwrap();

    let err = MatFile::open(&bad).and_then(|m| m.read("s")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    assert_eq!(err.location().offset, Some(found[0] as u64), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("bad.mat") && text.contains("MATLAB_fields") && !text.contains('\n'),
        "{text}"
    );
}
