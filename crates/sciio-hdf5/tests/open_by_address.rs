//! `File::dataset_at`/`File::group_at`: objects opened by the address an object reference
//! holds (h5py writes the references), equal to the same objects opened by path.

use sciio_hdf5::{File, H5Type, Object};
use sciio_testkit::{run_python, tempdir};

const WRITE: &str = r#"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    g = f.create_group("refs/g")
    g.attrs["a"] = 7
    d = g.create_dataset("d", data=np.arange(12.0).reshape(3, 4))
    f.create_dataset("r", data=[d.ref, g.ref], dtype=h5py.ref_dtype)
"#;

fn addresses(file: &File) -> Vec<u64> {
    let raw = file.dataset("/r").unwrap().read().unwrap();
    assert_eq!(raw.ty, H5Type::ObjectRef);
    raw.bytes
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

#[test]
fn objects_opened_by_reference_address_equal_those_opened_by_path() {
    let dir = tempdir();
    let path = dir.path().join("refs.h5");
    run_python(WRITE, &[&path.to_string_lossy()]);
    let file = File::open(&path).unwrap();
    let addrs = addresses(&file);
    assert_eq!(addrs.len(), 2);

    let by_addr = file.dataset_at(addrs[0], "/refs/g/d").unwrap();
    let by_path = file.dataset("/refs/g/d").unwrap();
    assert_eq!(by_addr.path(), "/refs/g/d");
    assert_eq!(by_addr.shape().unwrap(), vec![3, 4]);
    assert_eq!(by_addr.read().unwrap(), by_path.read().unwrap());

    let group = file.group_at(addrs[1], "/refs/g").unwrap();
    let names: Vec<String> = group.links().unwrap().into_iter().map(|l| l.name).collect();
    assert_eq!(names, vec!["d".to_string()]);
    assert_eq!(
        group.attrs().unwrap(),
        file.group("/refs/g").unwrap().attrs().unwrap()
    );
}

#[test]
fn an_address_with_no_object_is_a_clean_error() {
    let dir = tempdir();
    let path = dir.path().join("refs.h5");
    run_python(WRITE, &[&path.to_string_lossy()]);
    let file = File::open(&path).unwrap();
    for addr in [0, 3, 1 << 40, u64::MAX] {
        let err = file.dataset_at(addr, "/nowhere").unwrap_err();
        assert!(err.to_string().contains("/nowhere"), "{err}");
        assert!(file.group_at(addr, "/nowhere").is_err());
    }
}

#[test]
fn object_opens_groups_and_datasets_by_path_whatever_their_kind() {
    let dir = tempdir();
    let path = dir.path().join("refs.h5");
    run_python(WRITE, &[&path.to_string_lossy()]);
    let file = File::open(&path).unwrap();
    match file.object("/refs/g/d").unwrap() {
        Object::Dataset(d) => {
            assert_eq!(
                d.read().unwrap(),
                file.dataset("/refs/g/d").unwrap().read().unwrap()
            )
        }
        other => panic!("expected a dataset, got {other:?}"),
    }
    match file.object("/refs/g").unwrap() {
        Object::Group(g) => assert_eq!(g.path(), "/refs/g"),
        other => panic!("expected a group, got {other:?}"),
    }
    let err = file.object("/refs/missing").unwrap_err();
    assert!(err.to_string().contains("/refs/missing"), "{err}");
}
