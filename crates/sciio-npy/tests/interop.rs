//! Interop with the real numpy: numpy's own test files, sciio writes -> np.load reads, in-place
//! append and memory maps checked by numpy.

mod common;

use std::path::Path;

use common::{check_entry, golden_dir, manifest, values_json};
use sciio_core::ndarray::{Array2, ArrayD, IxDyn, ShapeBuilder};
use sciio_core::{DType, ErrorKind, NdArray, Order};
use sciio_npy::Version;
use serde_json::Value as Json;

/// numpy's view (via python/gen_npy_golden.py --describe) of the given files.
fn numpy_describe(paths: &[&Path]) -> Vec<Json> {
    let args: Vec<&str> = std::iter::once("--describe")
        .chain(paths.iter().map(|p| p.to_str().unwrap()))
        .collect();
    let out = sciio_testkit::run_python_script("python/gen_npy_golden.py", &args);
    serde_json::from_str::<Json>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn numpy_test_data_files() {
    let files = sciio_testkit::wheel_files("numpy/lib/tests/data", ".npy");
    let (mut read, mut refused) = (0, 0);
    for path in &files {
        // numpy's own verdict without pickle: loads, or raises.
        let verdict = sciio_testkit::run_python(
            "import sys, numpy as np\ntry:\n    np.load(sys.argv[1], allow_pickle=False); print('ok')\nexcept ValueError: print('refused')",
            &[path.to_str().unwrap()],
        );
        match (verdict.trim(), sciio_npy::read_file(path)) {
            ("ok", Ok(a)) => {
                let bytes = std::fs::read(path).unwrap();
                let header = sciio_npy::parse_header(&bytes).unwrap();
                let expected = &numpy_describe(&[path])[0];
                let mut entry = expected.clone();
                entry["name"] = Json::from(path.display().to_string());
                check_entry(&a, &header, &entry);
                read += 1;
            }
            ("refused", Err(e)) => {
                assert_eq!(e.kind(), ErrorKind::Refused, "{}: {e}", path.display());
                assert!(e.to_string().contains("|O"), "{e}");
                refused += 1;
            }
            (verdict, result) => panic!("{}: numpy {verdict}, sciio {result:?}", path.display()),
        }
    }
    assert!(read >= 2 && refused >= 3, "read {read}, refused {refused}");
}

#[test]
fn numpy_reads_what_sciio_writes() {
    let dir = sciio_testkit::tempdir();
    let mut paths = Vec::new();
    let mut expected = Vec::new();
    for entry in manifest() {
        if entry["refused"].as_bool().unwrap() {
            continue;
        }
        let name = entry["name"].as_str().unwrap();
        let a = sciio_npy::read_file(golden_dir().join(name)).unwrap();
        // Rebuild from plain bytes so nothing of the original file is reused.
        let a = NdArray::from_bytes(a.dtype().clone(), a.shape(), a.order(), a.as_bytes()).unwrap();
        let path = dir.path().join(name);
        sciio_npy::write_file(&path, &a).unwrap();
        paths.push(path);
        expected.push(entry);
    }
    let refs: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    let seen = numpy_describe(&refs);
    assert_eq!(seen.len(), expected.len());
    for (numpy, entry) in seen.iter().zip(&expected) {
        let mut numpy = numpy.clone();
        numpy["name"] = entry["name"].clone();
        assert_eq!(&numpy, entry, "numpy reads {} differently", entry["name"]);
    }
}

#[test]
fn numpy_reads_every_header_version() {
    let dir = sciio_testkit::tempdir();
    let a = NdArray::from_ndarray(
        Array2::from_shape_vec((2, 3).f(), vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap(),
    );
    for version in [Version::V1, Version::V2, Version::V3] {
        let path = dir.path().join(format!("v{}.npy", version.number().0));
        let mut bytes = Vec::new();
        sciio_npy::write_array_version(&mut bytes, &a, version).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        let out = sciio_testkit::run_python(
            "import sys, numpy as np\nf = open(sys.argv[1], 'rb'); v = np.lib.format.read_magic(f)\na = np.load(sys.argv[1])\nprint(v, a.flags.f_contiguous, a.tolist())",
            &[path.to_str().unwrap()],
        );
        let want = format!(
            "({}, 0) True [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]",
            version.number().0
        );
        assert_eq!(out.trim(), want);
        let back = sciio_npy::read_file(&path).unwrap();
        assert_eq!(back.view::<f64>().unwrap(), a.view::<f64>().unwrap());
    }
    // Latin-1 cannot hold this name: 1.0 and 2.0 refuse it, the automatic choice is 3.0.
    let dt =
        DType::parse_descr(&sciio_core::PyLiteral::parse("[('\u{3c0}', '<f8')]").unwrap()).unwrap();
    let a = NdArray::zeroed(dt, &[1], Order::C).unwrap();
    assert!(sciio_npy::write_array_version(Vec::new(), &a, Version::V2).is_err());
    let mut bytes = Vec::new();
    sciio_npy::write_array(&mut bytes, &a).unwrap();
    assert_eq!(bytes[6], 3);
}

#[test]
fn append_rows_in_place_matches_numpy() {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("grow.npy");
    let both = dir.path().join("both.npy");
    sciio_testkit::run_python(
        "import sys, numpy as np\na = np.arange(12, dtype='>i4').reshape(3, 4)\nnp.save(sys.argv[1], a)\nnp.save(sys.argv[2], np.concatenate([a, -np.arange(8, dtype='>i4').reshape(2, 4), [[7, 7, 7, 7]]]).astype('>i4'))",
        &[path.to_str().unwrap(), both.to_str().unwrap()],
    );
    let be = DType::from_typestr(">i4").unwrap();
    let rows: Vec<u8> = (0..8i32).flat_map(|v| (-v).to_be_bytes()).collect();
    let rows = NdArray::from_bytes(be.clone(), &[2, 4], Order::C, &rows).unwrap();
    sciio_npy::append(&path, &rows).unwrap();
    let one: Vec<u8> = [7i32; 4].iter().flat_map(|v| v.to_be_bytes()).collect();
    let one = NdArray::from_bytes(be, &[4], Order::C, &one).unwrap();
    sciio_npy::append(&path, &one).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), std::fs::read(&both).unwrap());
    let out = sciio_testkit::run_python(
        "import sys, numpy as np\nprint(np.load(sys.argv[1]).shape)",
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "(6, 4)");
    // Wrong dtype or row shape: refused, file untouched.
    let before = std::fs::read(&path).unwrap();
    let wrong = NdArray::from_vec(vec![1i32; 4], &[1, 4]).unwrap();
    assert_eq!(
        sciio_npy::append(&path, &wrong).unwrap_err().kind(),
        ErrorKind::Mismatch
    );
    let wrong = NdArray::from_vec(vec![1u8; 3], &[3]).unwrap();
    assert!(sciio_npy::append(&path, &wrong).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn append_fails_when_the_header_has_no_room() {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("tight.npy");
    // A header as an old writer made it: no growth padding, the dict fills the 128-byte block
    // exactly (a field name tunes its length), so shape (10,) cannot replace (9,).
    let text = |k: usize| {
        format!(
            "{{'descr': [('{}', '|u1')], 'fortran_order': False, 'shape': (9,), }}",
            "a".repeat(k)
        )
    };
    let k = 128 - 10 - 1 - text(0).len();
    let text = text(k);
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&((text.len() + 1) as u16).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.push(b'\n');
    assert_eq!(bytes.len(), 128);
    bytes.extend_from_slice(&[1; 9]);
    std::fs::write(&path, &bytes).unwrap();
    let file = sciio_npy::read_file(&path).unwrap();
    assert_eq!(file.shape(), &[9]);
    let row = NdArray::zeroed(file.dtype().clone(), &[1], Order::C).unwrap();
    let err = sciio_npy::append(&path, &row).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    assert!(err.to_string().contains("does not fit"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn memory_maps_read_write_and_create() {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("m.npy");
    sciio_testkit::run_python(
        "import sys, numpy as np\nnp.save(sys.argv[1], np.asfortranarray(np.arange(6.0).reshape(2, 3)))",
        &[path.to_str().unwrap()],
    );
    // SAFETY: nothing writes the file while `ro` lives (dropped before the writable map).
    let ro = unsafe { sciio_npy::open_mmap(&path) }.unwrap();
    assert!(ro.is_mapped() && !ro.is_writable());
    assert_eq!(ro.view::<f64>().unwrap()[[1, 2]], 5.0);
    drop(ro);
    // SAFETY: the only map of the file; Python reads it after `rw` is dropped.
    let mut rw = unsafe { sciio_npy::open_mmap_mut(&path) }.unwrap();
    rw.view_mut::<f64>().unwrap()[[0, 1]] = -1.5;
    rw.flush().unwrap();
    drop(rw);
    let out = sciio_testkit::run_python(
        "import sys, numpy as np\nprint(np.load(sys.argv[1]).tolist())",
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "[[0.0, -1.5, 2.0], [3.0, 4.0, 5.0]]");

    let created = dir.path().join("new.npy");
    // SAFETY: nothing else touches the new file while `a` lives.
    let mut a = unsafe {
        sciio_npy::create_mmap(
            &created,
            DType::from_typestr("<u2").unwrap(),
            &[3, 2],
            Order::F,
        )
    }
    .unwrap();
    for (i, v) in a.view_mut::<u16>().unwrap().iter_mut().enumerate() {
        *v = i as u16 * 10;
    }
    a.flush().unwrap();
    drop(a);
    let out = sciio_testkit::run_python(
        "import sys, numpy as np\na = np.load(sys.argv[1])\nprint(a.dtype.str, a.flags.f_contiguous, a.tolist())",
        &[created.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "<u2 True [[0, 10], [20, 30], [40, 50]]");
    // A new map of the same array is byte-identical to np.save's file.
    let numpy_file = dir.path().join("numpy.npy");
    sciio_testkit::run_python(
        "import sys, numpy as np\nnp.save(sys.argv[2], np.load(sys.argv[1]))",
        &[created.to_str().unwrap(), numpy_file.to_str().unwrap()],
    );
    assert_eq!(
        std::fs::read(&created).unwrap(),
        std::fs::read(&numpy_file).unwrap()
    );
}

#[test]
fn typed_read_and_write_helpers() {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("t.npy");
    let a: ArrayD<i16> = ArrayD::from_shape_fn(IxDyn(&[2, 3, 2]), |i| {
        (i[0] * 100 + i[1] * 10 + i[2]) as i16
    });
    sciio_npy::write(&path, &a).unwrap();
    let back: ArrayD<i16> = sciio_npy::read(&path).unwrap();
    assert_eq!(back, a);
    let err = sciio_npy::read::<f32>(&path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Mismatch);
    // A big-endian file read as native values.
    let be = golden_dir().join("i4_be_2d_f.npy");
    let v: ArrayD<i32> = sciio_npy::read(&be).unwrap();
    assert_eq!(
        v,
        sciio_core::ndarray::array![[0, 1, 2], [3, 4, 5]].into_dyn()
    );
    let arr = sciio_npy::read_file(&be).unwrap();
    assert_eq!(values_json(&arr), values_json(&arr.to_native()));
}

#[test]
fn large_files_are_read_in_parallel_exactly() {
    // Over the 64 MiB threshold, read_file reads parts on several threads.
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("large.npy");
    sciio_testkit::run_python(
        "import sys, numpy as np\nnp.save(sys.argv[1], np.asfortranarray((np.arange(9_000_000, dtype='<f8') * 3).reshape(3, 3_000_000)))",
        &[path.to_str().unwrap()],
    );
    let bytes = std::fs::read(&path).unwrap();
    let parallel = sciio_npy::read_file(&path).unwrap();
    let sequential = sciio_npy::read_array(&bytes[..], &sciio_core::Limits::default()).unwrap();
    assert_eq!(parallel.shape(), &[3, 3_000_000]);
    assert_eq!(parallel.order(), Order::F);
    assert!(parallel.as_bytes() == sequential.as_bytes());
    let header = sciio_npy::parse_header(&bytes).unwrap();
    assert!(parallel.as_bytes() == &bytes[header.header_len..]);
    // Cut one byte: the parallel path reports the truncation like the sequential one.
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let err = sciio_npy::read_file(&path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Truncated, "{err}");
}
