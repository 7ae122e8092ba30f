//! New-style (HDF5 1.12, `H5T_STD_REF`) references: read into memory they become handles that
//! own library resources, and no reference tool sciio is tested against writes them, so
//! decoding them is refused cleanly (old-style object and region references are decoded; see
//! sciio-pytables' generated_cases tests against h5py).

use sciio_hdf5::write::{DatasetSpec, FileBuilder};
use sciio_hdf5::{File, H5Type};
use sciio_testkit::tempdir;

#[test]
fn new_style_references_are_refused_cleanly() {
    let dir = tempdir();
    let path = dir.path().join("refs2.h5");
    let out = FileBuilder::new().create(&path).unwrap();
    out.root()
        .unwrap()
        .create_dataset(
            "r",
            &DatasetSpec::contiguous(H5Type::Reference { size: 64 }, vec![3]),
        )
        .unwrap();
    out.close().unwrap();
    let file = File::open(&path).unwrap();
    let ds = file.dataset("/r").unwrap();
    assert!(matches!(ds.dtype().unwrap(), H5Type::Reference { .. }));
    let err = ds.read_elements(None).unwrap_err();
    assert_eq!(err.kind(), sciio_core::ErrorKind::Unsupported, "{err}");
    assert!(err.to_string().contains("/r"), "{err}");
}
