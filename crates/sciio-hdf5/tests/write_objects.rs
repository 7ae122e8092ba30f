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

/// The native writer's sealed datasets (written whole with their header at once) and
/// reserved datasets (filled in place later): 3000 sealed links in name order (a run: its
/// symbol table nodes written as they fill, two B-tree levels) among links kept by name
/// that sort before and after it (datasets, a group, a sealed dataset out of order), a
/// chunked compressed sealed dataset, and a reserved dataset of references to every sealed
/// one written slab by slab out of order. h5py lists the group in name order and reads
/// every value, attribute and reference; libhdf5 (sciio's reader) finds names inside the
/// run.
#[test]
fn native_sealed_and_reserved_datasets_read_back_in_h5py() {
    use sciio_hdf5::write::native::NativeFile;
    let dir = tempdir();
    let path = dir.path().join("sealed.h5");
    let file = NativeFile::create(&path, 512).unwrap();
    let root = file.root();
    let g = root.create_group("g").unwrap();
    let scalar = DatasetSpec::contiguous(f8(), vec![1]);
    g.write_dataset("a", &scalar, &1.5f64.to_le_bytes())
        .unwrap();
    g.write_dataset("z", &scalar, &2.5f64.to_le_bytes())
        .unwrap();
    let n = 3000usize;
    let refs_spec = DatasetSpec::contiguous(H5Type::ObjectRef, vec![n as u64]);
    let refs = root.reserve_dataset("refs", &refs_spec).unwrap();
    let mut addrs = Vec::with_capacity(n);
    for k in 0..n {
        let class = AttrValue::Raw(RawData::bytes_string(b"double"));
        let index = AttrValue::Raw(RawData::scalar(
            H5Type::Int {
                size: 8,
                signed: false,
                order: ByteOrder::Little,
            },
            (k as u64).to_le_bytes().to_vec(),
        ));
        let value = (k as f64 * 0.5).to_le_bytes();
        let name = format!("n{k:05}");
        let attrs = [("MATLAB_class", &class), ("index", &index)];
        addrs.push(
            g.write_sealed_dataset(&name, &scalar, &value, &attrs)
                .unwrap(),
        );
        if k == 10 {
            // Kept names after the run so far, before and after it, and a group.
            g.write_dataset("m", &scalar, &3.5f64.to_le_bytes())
                .unwrap();
            let sub = g.create_group("zz").unwrap();
            sub.write_dataset("inner", &scalar, &4.5f64.to_le_bytes())
                .unwrap();
            // A sealed dataset out of the run's order is kept by name.
            g.write_sealed_dataset("b", &scalar, &5.5f64.to_le_bytes(), &[])
                .unwrap();
            // Names among the run's are refused, not silently lost.
            assert!(g.write_dataset("n00005", &scalar, &[0; 8]).is_err());
            assert!(g.contains("n00003").is_err());
            assert!(g.contains("n00010").unwrap() && !g.contains("c").unwrap());
        }
    }
    // A chunked, compressed sealed dataset.
    let big: Vec<u8> = (0..50_000u32)
        .flat_map(|i| f64::from(i).to_le_bytes())
        .collect();
    let chunked = DatasetSpec::chunked(f8(), vec![50_000], vec![Some(50_000)], vec![4096])
        .filters(vec![FilterStage::shuffle(8), FilterStage::deflate(3)]);
    g.write_sealed_dataset("zzz", &chunked, &big, &[]).unwrap();
    // The references, slab by slab, last slab first.
    let bytes: Vec<u8> = addrs.iter().flat_map(|a| a.to_le_bytes()).collect();
    for slab in (0..n).step_by(700).rev() {
        let end = (slab + 700).min(n);
        refs.write_at(slab as u64, &bytes[slab * 8..end * 8])
            .unwrap();
    }
    // A reference not written yet (a handle of an object in memory) is refused.
    let kept_ref = root.object_ref().unwrap();
    assert!(refs.write_at(0, &kept_ref.to_le_bytes()).is_err());
    file.close().unwrap();
    let out = run_python(
        r#"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
g = f['g']
names = list(g.keys())
run = [f'n{k:05}' for k in range(3000)]
assert names == ['a', 'b', 'm'] + run + ['z', 'zz', 'zzz'], names[:5] + names[-5:]
for k, name in enumerate(run):
    d = g[name]
    assert d[0] == k * 0.5 and d.attrs['MATLAB_class'] == b'double' and d.attrs['index'] == k
assert [g[x][0] for x in 'abmz'] == [1.5, 5.5, 3.5, 2.5] and g['zz/inner'][0] == 4.5
assert np.array_equal(g['zzz'][()], np.arange(50000.0)) and g['zzz'].compression == 'gzip'
refs = f['refs'][()]
assert [f[r].name for r in refs] == ['/g/' + x for x in run]
print(len(names))
"#,
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "3006");
    // The B-tree itself: keys, levels and the sibling chains the run's nodes were patched
    // into (375 + 2 symbol table nodes: 14 level-0 nodes under one root).
    let tree = sciio_testkit::run_python_script(
        "python/check_group_btree.py",
        &[path.to_str().unwrap(), "g"],
    );
    assert_eq!(tree.trim(), "{0: 14, 1: 1} 3006");
    let back = sciio_hdf5::File::open(&path).unwrap();
    let d = back.dataset("/g/n01234").unwrap().read().unwrap();
    assert_eq!(d.bytes, (1234.0f64 * 0.5).to_le_bytes());
}
