//! .npz interop with numpy, both directions: np.savez / np.savez_compressed files read by
//! sciio; sciio's files read by np.load; numpy's own test archives.

use std::path::Path;

use sciio_core::{DType, ErrorKind, NdArray, Order};
use sciio_npy::npz::{Compression, NpzReader, NpzWriter};
use sciio_testkit::{run_python, tempdir, wheel_files};

/// Makes `dir/<kind>.npz` with numpy and, for each member, `dir/<key>.npy` with `np.save`.
/// Returns the keys numpy lists.
fn numpy_archive(dir: &Path, saver: &str) -> Vec<String> {
    let out = run_python(
        r#"
import sys, os, numpy as np
d, saver = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(5)
arrays = {
    'i1': np.arange(-50, 50, dtype=np.int8),
    'u2': np.arange(1000, dtype=np.uint16).reshape(10, 100),
    'i8be': np.arange(30, dtype='>i8'),
    'f2': np.linspace(-1, 1, 33).astype(np.float16),
    'f4': rng.standard_normal(1000).astype(np.float32),
    'f8_fortran': np.asfortranarray(rng.standard_normal((7, 9))),
    'c16': (np.arange(5) + 1j * np.arange(5)).astype(np.complex128),
    'b': np.arange(10) % 3 == 0,
    'scalar': np.float64(3.5),
    'empty': np.zeros((0, 4), dtype=np.int32),
    'bytes': np.array([b'ab', b'cde', b''], dtype='S3'),
    'text': np.array(['x', 'yz', 'ünï'], dtype='<U3'),
    'rec': np.array([(1, 2.5), (3, -1.0)], dtype=[('a', '<i4'), ('b', '<f8')]),
    'walk': np.cumsum(rng.integers(-3, 4, 200_000)).astype(np.int32),
    'obj': np.array([1, 'two', None], dtype=object),
}
getattr(np, saver)(os.path.join(d, saver + '.npz'), np.arange(4), np.eye(3), **arrays)
with np.load(os.path.join(d, saver + '.npz'), allow_pickle=True) as z:
    for k in z.files:
        if z[k].dtype != object:
            np.save(os.path.join(d, k + '.npy'), z[k])
    print('\n'.join(z.files))
"#,
        &[dir.to_str().unwrap(), saver],
    );
    out.lines().map(str::to_owned).collect()
}

#[test]
fn reads_every_member_numpy_savez_and_savez_compressed_write() {
    for saver in ["savez", "savez_compressed"] {
        let dir = tempdir();
        let keys = numpy_archive(dir.path(), saver);
        let path = dir.path().join(format!("{saver}.npz"));
        let mut npz = NpzReader::open(&path).unwrap();
        assert_eq!(npz.names(), keys, "{saver}: keys as np.load lists them");
        assert!(keys.contains(&"arr_0".to_owned()) && keys.contains(&"arr_1".to_owned()));
        for key in &keys {
            if key == "obj" {
                let err = npz.read(key).unwrap_err();
                assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
                assert_eq!(err.location().node.as_deref(), Some("obj.npy"));
                assert_eq!(err.location().file.as_deref(), Some(path.as_path()));
                continue;
            }
            let ours = npz.read(key).unwrap();
            // Written back by sciio as .npy, it must equal np.save's bytes of numpy's value.
            let mut bytes = Vec::new();
            sciio_npy::write_array(&mut bytes, &ours).unwrap();
            let theirs = std::fs::read(dir.path().join(format!("{key}.npy"))).unwrap();
            assert_eq!(bytes, theirs, "{saver}: member {key}");
            // The name with .npy finds the same member; lazily reading one header works too.
            assert_eq!(
                npz.header(&format!("{key}.npy")).unwrap().shape,
                ours.shape()
            );
            if saver == "savez" {
                // SAFETY: the archive is only read while mapped.
                let mapped = unsafe { npz.mmap(key) }.unwrap();
                assert!(mapped.is_mapped());
                assert_eq!(mapped.as_bytes(), ours.as_bytes(), "mmap of {key}");
                assert_eq!(mapped.shape(), ours.shape());
            } else {
                // SAFETY: as above (and nothing is mapped: the member is compressed).
                let err = unsafe { npz.mmap(key) }.unwrap_err();
                assert_eq!(err.kind(), ErrorKind::Unsupported);
            }
        }
        // read_all skips the object member and reads the rest.
        assert_eq!(npz.read_all().unwrap().len(), keys.len() - 1);
        let err = npz.read("missing").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
    }
}

#[test]
fn numpy_test_archives_non_object_read_object_refused() {
    let files = wheel_files("numpy/lib/tests/data", ".npz");
    for file in files {
        // What numpy itself says about each member without unpickling.
        let listing = run_python(
            r#"
import sys, numpy as np
with np.load(sys.argv[1], allow_pickle=False) as z:
    for k in z.files:
        try:
            a = z[k]
            print(k, 'ok', a.dtype.str, a.shape)
        except ValueError:
            print(k, 'object')
"#,
            &[file.to_str().unwrap()],
        );
        let mut npz = NpzReader::open(&file).unwrap();
        let mut seen = 0;
        for line in listing.lines() {
            let mut parts = line.split_whitespace();
            let key = parts.next().unwrap();
            let status = parts.next().unwrap();
            seen += 1;
            match status {
                "object" => {
                    let err = npz.read(key).unwrap_err();
                    assert_eq!(err.kind(), ErrorKind::Refused, "{}: {err}", file.display());
                    // The header still reads: the dtype is an object one.
                    assert!(npz.header(key).unwrap().dtype.has_object());
                }
                _ => {
                    let a = npz.read(key).unwrap();
                    assert_eq!(a.dtype().to_string(), parts.next().unwrap());
                }
            }
        }
        assert_eq!(seen, npz.names().len());
    }
}

/// Arrays sciio writes; `EXPECT` rebuilds the same values in numpy.
fn sciio_arrays() -> Vec<(&'static str, NdArray)> {
    let n = 3_000_000usize; // 12 MB of int32: several parallel batches of blocks
    let walk: Vec<i32> = (0..n as i32).map(|i| i % 1000).collect();
    let f8: Vec<f64> = (0..1000).map(|i| i as f64 * 0.5).collect();
    let big_endian = NdArray::from_bytes(
        DType::from_typestr(">u4").unwrap(),
        &[4],
        Order::C,
        &[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 1, 0, 255, 255, 255, 255],
    )
    .unwrap();
    let fortran = NdArray::from_slice(&[1i16, 2, 3, 4, 5, 6], &[2, 3], Order::F).unwrap();
    vec![
        ("walk", NdArray::from_vec(walk, &[n]).unwrap()),
        ("f8", NdArray::from_vec(f8, &[10, 100]).unwrap()),
        ("be", big_endian),
        ("fortran", fortran),
        ("empty", NdArray::from_vec(Vec::<u8>::new(), &[0]).unwrap()),
        ("scalar", NdArray::from_vec(vec![7u64], &[]).unwrap()),
        (
            "flags",
            NdArray::from_vec(vec![true, false, true], &[3]).unwrap(),
        ),
    ]
}

const EXPECT: &str = r#"
import sys, numpy as np
expect = {
    'walk': (np.arange(3_000_000, dtype=np.int32) % 1000),
    'f8': (np.arange(1000) * 0.5).reshape(10, 100),
    'be': np.array([1, 2, 256, 2**32 - 1], dtype='>u4'),
    'fortran': np.asfortranarray(np.array([[1, 3, 5], [2, 4, 6]], dtype=np.int16)),
    'empty': np.zeros(0, dtype=np.uint8),
    'scalar': np.array(7, dtype=np.uint64),
    'flags': np.array([True, False, True]),
    'arr_0': np.array([1, 2, 3], dtype=np.int32),
}
path, method = sys.argv[1], int(sys.argv[2])
import zipfile
with zipfile.ZipFile(path) as zf:
    assert zf.testzip() is None
    assert all(i.compress_type == method for i in zf.infolist()), [i.compress_type for i in zf.infolist()]
with np.load(path, allow_pickle=False) as z:
    assert sorted(z.files) == sorted(expect), z.files
    for k, v in expect.items():
        got = z[k]
        assert got.dtype == v.dtype, (k, got.dtype, v.dtype)
        assert got.shape == v.shape, (k, got.shape, v.shape)
        assert np.array_equal(got, v), k
        assert got.flags.f_contiguous == v.flags.f_contiguous, k
print('ok')
"#;

fn write_sciio(
    path: &Path,
    compression: Compression,
    block_size: Option<usize>,
    all_at_once: bool,
) {
    let arrays = sciio_arrays();
    let mut npz = NpzWriter::create(path).unwrap().compression(compression);
    if let Some(b) = block_size {
        npz = npz.block_size(b);
    }
    if all_at_once {
        let refs: Vec<(&str, &NdArray)> = arrays.iter().map(|(n, a)| (*n, a)).collect();
        npz.add_all(&refs).unwrap();
    } else {
        for (name, array) in &arrays {
            npz.add(name, array).unwrap();
        }
    }
    npz.add_positional(&NdArray::from_vec(vec![1i32, 2, 3], &[3]).unwrap())
        .unwrap();
    npz.finish().unwrap();
}

#[test]
fn np_load_reads_what_sciio_writes() {
    let dir = tempdir();
    let cases = [
        (Compression::Stored, None, false, 0),
        (Compression::Deflate(6), None, false, 8),
        (Compression::Deflate(1), None, true, 8),
        (Compression::Deflate(9), Some(64 << 10), false, 8),
        (Compression::Deflate(6), Some(64 << 10), true, 8),
        (Compression::Deflate(0), None, true, 8),
    ];
    for (i, (compression, block, all, method)) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("case{i}.npz"));
        write_sciio(&path, compression, block, all);
        let out = run_python(EXPECT, &[path.to_str().unwrap(), &method.to_string()]);
        assert_eq!(out.trim(), "ok", "{compression:?} block {block:?}");
        // And back: sciio reads its own file; stored members are 64-byte aligned, so they map
        // as typed arrays.
        let mut npz = NpzReader::open(&path).unwrap();
        if compression == Compression::Stored {
            // SAFETY: the archive is only read while mapped.
            let (walk, f8) = unsafe { (npz.mmap("walk").unwrap(), npz.mmap("f8").unwrap()) };
            let view = walk.view::<i32>().unwrap();
            assert_eq!(view[[1999]], 999);
            assert_eq!(f8.view::<f64>().unwrap()[[1, 1]], 50.5);
        }
        for (name, array) in sciio_arrays() {
            let got = npz.read(name).unwrap();
            assert_eq!(got.as_bytes(), array.as_bytes(), "{name}");
            assert_eq!(got.shape(), array.shape(), "{name}");
        }
    }
}

#[test]
fn more_than_65535_members_np_load() {
    let dir = tempdir();
    let path = dir.path().join("many.npz");
    let mut npz = NpzWriter::create(&path)
        .unwrap()
        .compression(Compression::Deflate(6));
    let arrays: Vec<NdArray> = (0..66_000i64)
        .map(|i| NdArray::from_vec(vec![i], &[1]).unwrap())
        .collect();
    let names: Vec<String> = (0..arrays.len()).map(|i| format!("a{i}")).collect();
    let refs: Vec<(&str, &NdArray)> = names
        .iter()
        .map(String::as_str)
        .zip(arrays.iter())
        .collect();
    npz.add_all(&refs).unwrap();
    npz.finish().unwrap();
    let out = run_python(
        "import sys, numpy as np\nwith np.load(sys.argv[1]) as z: print(len(z.files), z['a65999'][0], z['a12345'][0])",
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "66000 65999 12345");
    let mut npz = NpzReader::open(&path).unwrap();
    assert!(npz.archive().is_zip64());
    assert_eq!(
        npz.read("a65537").unwrap().view::<i64>().unwrap()[[0]],
        65537
    );
}

#[test]
fn forced_zip64_records_np_load() {
    let dir = tempdir();
    for (compression, method) in [(Compression::Stored, 0), (Compression::Deflate(6), 8)] {
        let path = dir.path().join("z64.npz");
        let zip = sciio_zip::ZipWriter::create(&path)
            .unwrap()
            .compression(compression)
            .force_zip64_records(true)
            .align(64);
        let mut npz = NpzWriter::from_zip(zip);
        for (name, array) in sciio_arrays() {
            npz.add(name, &array).unwrap();
        }
        npz.add_positional(&NdArray::from_vec(vec![1i32, 2, 3], &[3]).unwrap())
            .unwrap();
        npz.finish().unwrap();
        let out = run_python(EXPECT, &[path.to_str().unwrap(), &method.to_string()]);
        assert_eq!(out.trim(), "ok");
        let mut npz = NpzReader::open(&path).unwrap();
        assert!(npz.archive().is_zip64());
        assert_eq!(npz.read("walk").unwrap().len(), 3_000_000);
        if compression == Compression::Stored {
            // Aligned stored members map as typed arrays.
            // SAFETY: the archive is only read while mapped.
            let mapped = unsafe { npz.mmap("f8") }.unwrap();
            assert_eq!(mapped.view::<f64>().unwrap()[[1, 1]], 50.5);
        }
    }
}

#[test]
fn member_names_with_and_without_npy_and_non_npy_members() {
    // numpy lists `x.npy` as `x` and a member without the suffix as is; np.load returns the raw
    // bytes of a member that is not an .npy file.
    let dir = tempdir();
    let path = dir.path().join("mixed.npz");
    let out = run_python(
        r#"
import sys, io, zipfile, numpy as np
def npy(a):
    b = io.BytesIO(); np.save(b, a); return b.getvalue()
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    z.writestr('plain', npy(np.arange(5, dtype=np.int16)))
    z.writestr('suffixed.npy', npy(np.ones(3)))
    z.writestr('notes.txt', b'not an array')
with np.load(sys.argv[1]) as f:
    print(' '.join(f.files), bytes(f['notes.txt']).decode())
"#,
        &[path.to_str().unwrap()],
    );
    let mut npz = NpzReader::open(&path).unwrap();
    assert_eq!(
        out.trim(),
        format!("{} not an array", npz.names().join(" "))
    );
    assert_eq!(npz.names(), ["plain", "suffixed", "notes.txt"]);
    assert_eq!(npz.member_names(), ["plain", "suffixed.npy", "notes.txt"]);
    assert_eq!(npz.read("plain").unwrap().view::<i16>().unwrap().len(), 5);
    assert_eq!(
        npz.read("suffixed").unwrap().view::<f64>().unwrap().sum(),
        3.0
    );
    assert_eq!(npz.read("suffixed.npy").unwrap().len(), 3);
    assert!(npz.contains("plain") && !npz.contains("plain.npy"));
    let err = npz.read("notes.txt").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Format, "{err}");
    assert_eq!(err.location().node.as_deref(), Some("notes.txt"));
    assert_eq!(npz.read_bytes("notes.txt").unwrap(), b"not an array");
}

#[test]
fn stored_npz_is_byte_identical_to_np_savez() {
    // With alignment off, a stored archive is np.savez's file byte for byte: same member
    // names and order, local headers with zip64 extras, 1980-01-01 timestamps, directory.
    let dir = tempdir();
    let theirs = dir.path().join("numpy.npz");
    let ours = dir.path().join("sciio.npz");
    run_python(
        r#"
import sys, numpy as np
np.savez(sys.argv[1], np.arange(3, dtype=np.int32), f8=(np.arange(1000) * 0.5).reshape(10, 100),
         flags=np.array([True, False, True]))
"#,
        &[theirs.to_str().unwrap()],
    );
    let arrays = sciio_arrays();
    let get = |name: &str| arrays.iter().find(|(n, _)| *n == name).unwrap().1.clone();
    // numpy writes keyword arrays first, then the positional ones.
    let mut npz = NpzWriter::create(&ours).unwrap().align(1);
    npz.add("f8", &get("f8")).unwrap();
    npz.add("flags", &get("flags")).unwrap();
    npz.add_positional(&NdArray::from_vec(vec![0i32, 1, 2], &[3]).unwrap())
        .unwrap();
    npz.finish().unwrap();
    let (a, b) = (
        std::fs::read(&ours).unwrap(),
        std::fs::read(&theirs).unwrap(),
    );
    let first_difference = a.iter().zip(&b).position(|(x, y)| x != y);
    assert!(
        a.len() == b.len() && first_difference.is_none(),
        "sizes {} vs {}, first difference at byte {first_difference:?}",
        a.len(),
        b.len()
    );
}
