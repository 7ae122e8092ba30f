//! szip (filter 4): sciio's bundled libhdf5 has no szip, so sciio registers its own decoder.
//! h5py's wheel (libhdf5 with libaec) writes the fixtures: every pixel width libaec treats
//! differently (8/16-bit samples, 32/64-bit pixels coded as byte planes), both byte orders,
//! nearest-neighbour and entropy coding, scanlines that are and are not whole blocks. sciio
//! must read them like h5py, through libhdf5's pipeline and through the parallel reader.

use sciio_hdf5::{File, Slice};
use sciio_testkit::{run_python, tempdir};

const WRITE: &str = r#"
import sys, h5py, numpy as np
rng = np.random.default_rng(5)
cases = {
    'i4_nn8': (np.arange(800, dtype='<i4').reshape(40, 20), (20, 10), ('nn', 8)),
    'u1_nn32': (rng.integers(0, 255, 5000, dtype=np.uint8), (1000,), ('nn', 32)),
    'be_i2_ec16': ((np.arange(3000) * 37 % 4001 - 2000).astype('>i2'), (1024,), ('ec', 16)),
    'u2_ec8': ((np.arange(2999) * 5 % 60000).astype('<u2'), (600,), ('ec', 8)),
    'f4_nn32': (rng.standard_normal((64, 50)).astype('<f4'), (16, 50), ('nn', 32)),
    'f8_ec8': (np.cumsum(rng.standard_normal(4321)), (1000,), ('ec', 8)),
    'be_f8_nn16': (np.linspace(-5, 5, 2048).astype('>f8'), (512,), ('nn', 16)),
}
with h5py.File(sys.argv[1], 'w') as f:
    for name, (data, chunks, opts) in cases.items():
        f.create_dataset(name, data=data, chunks=chunks, compression='szip', compression_opts=opts)
        print(name, data.tobytes().hex())
"#;

/// Equal hex strings, or a failure naming the first differing byte.
fn same(ours: &str, theirs: &str, what: &str) {
    if ours != theirs {
        let at = ours
            .bytes()
            .zip(theirs.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(ours.len().min(theirs.len()));
        panic!(
            "{what}: {} vs {} hex digits, first difference at byte {}: {} vs {}",
            ours.len(),
            theirs.len(),
            at / 2,
            &ours[at.saturating_sub(8)..(at + 24).min(ours.len())],
            &theirs[at.saturating_sub(8)..(at + 24).min(theirs.len())]
        );
    }
}

#[test]
fn szip_written_by_h5py_reads_back() {
    let dir = tempdir();
    let path = dir.path().join("szip.h5");
    let out = run_python(WRITE, &[&path.to_string_lossy()]);
    let file = File::open(&path).unwrap();
    let mut seen = 0;
    for line in out.lines() {
        let (name, hex) = line.split_once(' ').unwrap();
        let node = format!("/{name}");
        let ds = file.dataset(&node).unwrap();
        let (_, _, filters) = ds.storage().unwrap();
        assert!(
            filters.iter().any(|f| f.id == 4),
            "{node} is szip-compressed"
        );
        let to_hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        same(
            &to_hex(&ds.read().unwrap().bytes),
            hex,
            &format!("{node} via libhdf5"),
        );
        let rows = ds.shape().unwrap()[0];
        same(
            &to_hex(&ds.read_rows_parallel(0, rows).unwrap().bytes),
            hex,
            &format!("{node} via the parallel reader"),
        );
        let shape = ds.shape().unwrap();
        let mut sel = vec![Slice {
            start: 3,
            count: (shape[0] - 3).div_ceil(7),
            step: 7,
        }];
        sel.extend(shape[1..].iter().map(|&d| Slice {
            start: 0,
            count: d,
            step: 1,
        }));
        let stepped = ds.read_slices(Some(&sel)).unwrap();
        let row = hex.len() / shape[0] as usize;
        let expect: String = (0..sel[0].count as usize)
            .map(|i| &hex[(3 + 7 * i) * row..(4 + 7 * i) * row])
            .collect();
        same(&to_hex(&stepped.bytes), &expect, &format!("{node}[3::7]"));
        seen += 1;
    }
    assert_eq!(seen, 7);
}

#[test]
fn damaged_szip_chunks_fail_cleanly() {
    let cd = [141u32, 32, 8, 1000];
    let mut chunk = 1000u32.to_le_bytes().to_vec();
    chunk.extend([0xA5; 40]);
    for input in [&chunk[..], &chunk[..3], &[0xFF, 0xFF, 0xFF, 0xFF, 1, 2][..]] {
        let err = sciio_hdf5::filters::decode(4, &cd, input, None).unwrap_err();
        assert_eq!(err.kind(), sciio_core::ErrorKind::Corrupt, "{err}");
    }
    let err = sciio_hdf5::filters::decode(4, &cd[..2], &chunk, None).unwrap_err();
    assert_eq!(err.kind(), sciio_core::ErrorKind::Corrupt, "{err}");
}
