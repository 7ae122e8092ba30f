//! Byte sequences (PyTables' `ObjectAtom` rows, h5py's `vlen_dtype(uint8)`) read straight from
//! their global heap objects give what h5py reads and what libhdf5's own read gives (a
//! selection of every row still goes through libhdf5); a damaged heap is a clean error.

use sciio_core::ErrorKind;
use sciio_hdf5::{File, Slice};
use sciio_testkit::{run_python, tempdir, vlen_descriptor_offsets, zero_first_heap_object};

/// Rows of every size: empty, small ones sharing a collection, one over a megabyte (its own
/// collection, read header by header), in a chunked and compressed dataset and a PyTables
/// VLArray of pickles; h5py prints each row's length and hex (the large one's first bytes).
const WRITE: &str = r#"
import sys, h5py, numpy as np, tables
rng = np.random.default_rng(3)
rows = [b"", b"a", bytes(range(256)), b"", rng.integers(0, 256, 3_000_001, dtype=np.uint8).tobytes()]
rows += [bytes([i % 256]) * (i % 41) for i in range(700)]
with h5py.File(sys.argv[1], "w") as f:
    for name, compression in (("v", None), ("z", "gzip")):
        d = f.create_dataset(name, (len(rows),), dtype=h5py.vlen_dtype(np.uint8), chunks=(64,),
                             compression=compression)
        for i, r in enumerate(rows):
            d[i] = np.frombuffer(r, dtype=np.uint8)
with tables.open_file(sys.argv[2], "w") as t:
    v = t.create_vlarray("/", "objects", tables.ObjectAtom())
    v.append(np.array(["x" * 5, None, "ünï"] * 1000, dtype=object))
    v.append({"a": 1})
for path, node in ((sys.argv[1], "v"), (sys.argv[1], "z"), (sys.argv[2], "objects")):
    with h5py.File(path, "r") as f:
        for r in f[node][:]:
            b = bytes(r)
            print(path[-4:], len(b), b[:4096].hex())
"#;

fn rows(path: &std::path::Path, node: &str) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let file = File::open(path).unwrap();
    let dataset = file.dataset(node).unwrap();
    let direct = dataset.read_vlen(None).unwrap();
    let n = direct.items.len() as u64;
    let all = Slice {
        start: 0,
        count: n,
        step: 1,
    };
    let libhdf5 = dataset.read_vlen(Some(&[all])).unwrap();
    assert_eq!(direct.shape, libhdf5.shape);
    (direct.items, libhdf5.items)
}

#[test]
fn byte_sequences_read_from_the_heap_match_h5py_and_libhdf5() {
    let dir = tempdir();
    let (a, b) = (dir.path().join("seq_a.h5"), dir.path().join("obj_b.h5"));
    let out = run_python(WRITE, &[a.to_str().unwrap(), b.to_str().unwrap()]);
    let expected: Vec<(String, usize, String)> = out
        .lines()
        .map(|l| {
            let mut parts = l.split(' ');
            let file = parts.next().unwrap().to_string();
            let len = parts.next().unwrap().parse().unwrap();
            (file, len, parts.next().unwrap_or("").to_string())
        })
        .collect();
    let mut got = Vec::new();
    for (path, node) in [(&a, "/v"), (&a, "/z"), (&b, "/objects")] {
        let (direct, libhdf5) = rows(path, node);
        assert_eq!(direct, libhdf5, "{node}");
        let tag = &path.to_str().unwrap()[path.to_str().unwrap().len() - 4..];
        got.extend(direct.into_iter().map(|r| (tag.to_string(), r)));
    }
    assert_eq!(got.len(), expected.len());
    for ((tag, row), (file, len, hex)) in got.iter().zip(&expected) {
        assert_eq!((tag, row.len()), (file, *len));
        let head: String = row.iter().take(4096).map(|b| format!("{b:02x}")).collect();
        assert_eq!(&head, hex);
    }
    assert!(got.iter().any(|(_, r)| r.len() > 1 << 20));
}

#[test]
fn a_damaged_heap_is_an_error() {
    let dir = tempdir();
    let (a, b) = (dir.path().join("seq_a.h5"), dir.path().join("obj_b.h5"));
    run_python(WRITE, &[a.to_str().unwrap(), b.to_str().unwrap()]);
    let mut bytes = std::fs::read(&a).unwrap();
    // The 256-byte row's descriptor: its collection's first object zeroed.
    let found = vlen_descriptor_offsets(&bytes, 0, 256);
    assert!(!found.is_empty());
    let at = found[0];
    let heap = u64::from_le_bytes(bytes[at + 4..at + 12].try_into().unwrap()) as usize;
    zero_first_heap_object(&mut bytes, heap);
    let bad = dir.path().join("bad.h5");
    std::fs::write(&bad, &bytes).unwrap();
    let file = File::open(&bad).unwrap();
    let err = file.dataset("/v").unwrap().read_vlen(None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    assert!(err.to_string().contains("global heap"), "{err}");

    // An object index no collection holds.
    let mut bytes = std::fs::read(&a).unwrap();
    bytes[at + 12..at + 16].copy_from_slice(&999u32.to_le_bytes());
    std::fs::write(&bad, &bytes).unwrap();
    let file = File::open(&bad).unwrap();
    let err = file.dataset("/v").unwrap().read_vlen(None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    assert!(err.to_string().contains("object 999"), "{err}");
}
