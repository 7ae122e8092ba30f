//! The write layer's small-object API (`GroupWriter::write_dataset`, `add_attr`,
//! `object_ref`, `contains`/`unlink`/`open_group`) checked with h5py: data, attributes of
//! every kind used by MAT files (fixed strings, numbers, 1-D arrays, vlen of 1-char strings,
//! vlen UTF-8 strings), and object references that dereference to the objects they were
//! taken from, in a file with a user block and the earliest format.

use sciio_hdf5::write::{DatasetSpec, FileBuilder, FilterStage, LibVersion};
use sciio_hdf5::{AttrValue, ByteOrder, CharSet, H5Type, RawData, VlenData};
use sciio_testkit::{run_python, tempdir};

fn f8() -> H5Type {
    H5Type::Float {
        size: 8,
        precision: 64,
        order: ByteOrder::Little,
    }
}

#[test]
fn datasets_attributes_and_references_read_back_in_h5py() {
    let dir = tempdir();
    let path = dir.path().join("objects.h5");
    let file = FileBuilder::new()
        .userblock(512)
        .libver_bounds(LibVersion::Earliest, LibVersion::V18)
        .create(&path)
        .unwrap();
    let root = file.root().unwrap();
    let refs_group = root.create_group("#refs#").unwrap();
    let mut refs = Vec::new();
    for i in 0..50u32 {
        let data: Vec<u8> = (0..4)
            .flat_map(|k| f64::from(i * 4 + k).to_le_bytes())
            .collect();
        let d = refs_group
            .write_dataset(
                &format!("e{i}"),
                &DatasetSpec::contiguous(f8(), vec![2, 2]),
                &data,
            )
            .unwrap();
        d.add_attr(
            "MATLAB_class",
            &AttrValue::Raw(RawData::bytes_string(b"double")),
        )
        .unwrap();
        refs.push(d.object_ref().unwrap());
    }
    let g = root.create_group("s").unwrap();
    let s1 = H5Type::FixedString {
        size: 1,
        charset: CharSet::Ascii,
    };
    g.add_attr(
        "MATLAB_fields",
        &AttrValue::Vlen(VlenData {
            ty: H5Type::VarLen { base: Box::new(s1) },
            shape: vec![2],
            items: vec![b"ab".to_vec(), b"xyz".to_vec()],
        }),
    )
    .unwrap();
    g.add_attr(
        "Python.Fields",
        &AttrValue::Vlen(VlenData::strings(&["ab", "xyz"])),
    )
    .unwrap();
    let u64s = H5Type::Int {
        size: 8,
        signed: false,
        order: ByteOrder::Little,
    };
    g.add_attr(
        "dims",
        &AttrValue::Raw(RawData {
            ty: u64s.clone(),
            shape: vec![3],
            bytes: [1u64, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect(),
        }),
    )
    .unwrap();
    refs.push(g.object_ref().unwrap());
    let ref_bytes: Vec<u8> = refs.iter().flat_map(|r| r.to_le_bytes()).collect();
    root.write_dataset(
        "cell",
        &DatasetSpec::contiguous(H5Type::ObjectRef, vec![refs.len() as u64]),
        &ref_bytes,
    )
    .unwrap();
    // A compressed dataset filled chunk by chunk (last chunk partial).
    let big: Vec<u8> = (0..10_000u32)
        .flat_map(|v| f64::from(v).to_le_bytes())
        .collect();
    let spec = DatasetSpec::chunked(
        f8(),
        vec![100, 100],
        vec![Some(100), Some(100)],
        vec![30, 100],
    )
    .filters(vec![FilterStage::shuffle(8), FilterStage::deflate(4)]);
    root.write_dataset("big", &spec, &big).unwrap();
    // An attribute that exists already is refused by add_attr (it never replaces).
    assert!(g
        .add_attr("dims", &AttrValue::Raw(RawData::scalar(u64s, vec![0; 8])))
        .is_err());
    // Wrong byte counts are refused before anything is created.
    assert!(root
        .write_dataset("bad", &DatasetSpec::contiguous(f8(), vec![3]), &[0u8; 8])
        .is_err());
    assert!(!root.contains("bad").unwrap());
    root.write_dataset("gone", &DatasetSpec::contiguous(f8(), vec![]), &[0u8; 8])
        .unwrap();
    assert!(root.contains("gone").unwrap());
    root.unlink("gone").unwrap();
    assert!(!root.contains("gone").unwrap());
    assert_eq!(root.open_group("s").unwrap().path(), "/s");
    drop((g, refs_group, root));
    file.close().unwrap();

    let check = r#"
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], "r") as f:
    assert f.userblock_size == 512 and "gone" not in f and "bad" not in f
    cell = f["cell"][()]
    for i, r in enumerate(cell[:50]):
        d = f[r]
        assert d.name == f"/#refs#/e{i}", d.name
        assert np.array_equal(d[()], np.arange(i * 4, i * 4 + 4, dtype=float).reshape(2, 2))
        assert d.attrs["MATLAB_class"] == b"double"
    s = f[cell[50]]
    assert s.name == "/s", s.name
    assert [x.tobytes() for x in s.attrs["MATLAB_fields"]] == [b"ab", b"xyz"], s.attrs["MATLAB_fields"]
    assert list(s.attrs["Python.Fields"]) == ["ab", "xyz"]
    assert s.attrs["dims"].tolist() == [1, 2, 3]
    big = f["big"]
    assert big.chunks == (30, 100) and big.compression == "gzip" and big.shuffle
    assert np.array_equal(big[()], np.arange(10000.0).reshape(100, 100))
print("ok")
"#;
    let out = run_python(check, &[path.to_str().unwrap()]);
    assert_eq!(out.trim(), "ok");

    // read_direct (no filter check, one read) gives what read gives, compressed or not.
    let file = sciio_hdf5::File::open(&path).unwrap();
    for name in ["/cell", "/big", "/#refs#/e3"] {
        let d = file.dataset(name).unwrap();
        assert_eq!(d.read_direct().unwrap(), d.read().unwrap(), "{name}");
    }
    // attrs_named reads only the attributes asked for that exist.
    let e3 = file.dataset("/#refs#/e3").unwrap();
    let named = e3.attrs_named(&["MATLAB_class", "absent"]).unwrap();
    assert_eq!(named, e3.attrs().unwrap());
    assert_eq!(named.len(), 1);
    assert!(e3.attrs_named(&["absent"]).unwrap().is_empty());
}

/// The native writer's 1-D vlen datasets and object-reference attributes (what MATLAB uses
/// for a large struct's field names: `MATLAB_fields` referencing a `#refs#` dataset of vlen
/// 1-character strings), checked with h5py; enough items to fill several global heap
/// collections, and an empty item.
#[test]
fn native_vlen_datasets_and_reference_attributes_read_back_in_h5py() {
    use sciio_hdf5::write::native::NativeFile;
    let dir = tempdir();
    let path = dir.path().join("native.h5");
    let file = NativeFile::create(&path, 512).unwrap();
    let root = file.root();
    let refs = root.create_group("#refs#").unwrap();
    let s1 = H5Type::VarLen {
        base: Box::new(H5Type::FixedString {
            size: 1,
            charset: CharSet::Ascii,
        }),
    };
    let mut items: Vec<Vec<u8>> = (0..70_000)
        .map(|i| format!("field{i}").into_bytes())
        .collect();
    items[3] = Vec::new();
    let names = refs.write_vlen_dataset("a", &s1, items.clone()).unwrap();
    let g = root.create_group("s").unwrap();
    g.add_attr(
        "MATLAB_fields",
        &AttrValue::Raw(RawData::scalar(
            H5Type::ObjectRef,
            names.object_ref().unwrap().to_le_bytes().to_vec(),
        )),
    )
    .unwrap();
    file.close().unwrap();
    let out = run_python(
        r#"
import sys, h5py
f = h5py.File(sys.argv[1], 'r')
d = f[f['s'].attrs['MATLAB_fields']]
assert d.name == '/#refs#/a', d.name
items = [b''.join(x).decode() for x in d[()]]
assert items[3] == '' and items[0] == 'field0' and items[-1] == 'field69999', items[:5]
assert all(items[i] == f'field{i}' for i in range(len(items)) if i != 3)
print(len(items))
"#,
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "70000");
    // libhdf5 itself (sciio's reader) reads the same items.
    let back = sciio_hdf5::File::open(&path).unwrap();
    let v = back.dataset("/#refs#/a").unwrap().read_vlen(None).unwrap();
    assert_eq!(v.items, items);
}
