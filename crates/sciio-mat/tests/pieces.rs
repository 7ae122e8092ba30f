//! A numeric or logical variable written piece by piece (`MatWriter::write_pieces`) makes the
//! same file, byte for byte, as the whole array written with `from_numpy`'s value and
//! metadata, in every MAT version, compressed or not; and scipy / h5py read it as numpy holds
//! the array.

use sciio_core::{DType, NdArray, Order, Result, ScalarKind};
use sciio_mat::{ArrayPieces, MatVersion, MatWriter, WriteOptions};
use sciio_testkit::{run_python, tempdir};

/// Writes `a` as `x` whole (`pieces` false) or piece by piece into `path`.
fn write(path: &std::path::Path, opts: &WriteOptions, a: &NdArray, pieces: bool) {
    let mut w = MatWriter::create(path, opts.clone()).unwrap();
    if pieces {
        let kind = a.dtype().as_scalar().unwrap().kind;
        let f = a.to_order(Order::F);
        let bytes = f.as_bytes();
        let item = kind.itemsize();
        let mut calls = 0;
        let mut fill = |first: u64, buf: &mut [u8]| -> Result<()> {
            calls += 1;
            let at = first as usize * item;
            buf.copy_from_slice(&bytes[at..at + buf.len()]);
            Ok(())
        };
        let meta = sciio_mat::numeric_meta(kind, a.shape());
        let array = ArrayPieces {
            kind,
            shape: a.shape().to_vec(),
            fill: &mut fill,
        };
        w.write_pieces("x", array, Some(&meta)).unwrap();
        assert!(calls >= 1);
    } else {
        let (value, meta) = sciio_mat::from_numpy(a).unwrap();
        w.write_with_meta("x", &value, Some(&meta)).unwrap();
    }
    w.finish().unwrap();
}

/// Held while the environment is set or read (the writers read `SOURCE_DATE_EPOCH`): setting
/// a variable while another test thread reads one is a data race in libc.
static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The two files (at one `SOURCE_DATE_EPOCH`: the headers and HDF5 object headers hold the
/// time).
fn both(dir: &std::path::Path, opts: &WriteOptions, a: &NdArray) -> (Vec<u8>, Vec<u8>) {
    let _env = ENV.lock().unwrap_or_else(|e| e.into_inner());
    std::env::set_var("SOURCE_DATE_EPOCH", "1700000000");
    write(&dir.join("whole.mat"), opts, a, false);
    write(&dir.join("pieces.mat"), opts, a, true);
    let read = |n: &str| std::fs::read(dir.join(n)).unwrap();
    (read("whole.mat"), read("pieces.mat"))
}

fn arrays() -> Vec<NdArray> {
    let f64s: Vec<f64> = (0..2100 * 2100).map(|i| (i % 977) as f64 * 0.5).collect();
    let c128: Vec<f64> = (0..2 * 700 * 500).map(|i| (i % 313) as f64 - 7.0).collect();
    let c128 = NdArray::from_bytes(
        DType::scalar(ScalarKind::Complex(16)),
        &[700, 500],
        Order::C,
        &c128
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let bools: Vec<u8> = (0..2500 * 2000).map(|i| u8::from(i % 3 == 0)).collect();
    let bools = NdArray::from_bytes(
        DType::scalar(ScalarKind::Bool),
        &[2500, 2000],
        Order::C,
        &bools,
    )
    .unwrap();
    let i16s: Vec<i16> = (0..3_000_000)
        .map(|i| (i % 30_001) as i16 - 15_000)
        .collect();
    vec![
        NdArray::from_vec(f64s, &[2100, 2100]).unwrap(),
        c128,
        bools,
        NdArray::from_vec(i16s, &[3_000_000]).unwrap(),
        NdArray::from_vec(vec![1.5f32, 2.5, 3.5, 4.5, 5.5, 6.5], &[2, 3]).unwrap(),
    ]
}

#[test]
fn pieces_make_the_whole_arrays_file() {
    let dir = tempdir();
    let versions = [
        WriteOptions::default(),
        WriteOptions::default().compression(None),
        WriteOptions::default().python_metadata(true),
        WriteOptions::default()
            .version(MatVersion::V7)
            .compression(Some(3)),
        WriteOptions::default().version(MatVersion::V5),
    ];
    for a in arrays() {
        for opts in &versions {
            let (whole, pieces) = both(dir.path(), opts, &a);
            assert!(
                whole == pieces,
                "{:?} {:?} {:?}: {} bytes whole, {} in pieces",
                a.dtype(),
                a.shape(),
                opts.version,
                whole.len(),
                pieces.len()
            );
        }
    }
}

#[test]
fn scipy_and_h5py_read_pieces_as_numpy_holds_them() {
    let dir = tempdir();
    let a: Vec<f64> = (0..1500 * 900).map(|i| i as f64 * 0.25).collect();
    let a = NdArray::from_vec(a, &[1500, 900]).unwrap();
    for (name, opts) in [
        ("v73.mat", WriteOptions::default()),
        ("v7.mat", WriteOptions::default().version(MatVersion::V7)),
        ("v5.mat", WriteOptions::default().version(MatVersion::V5)),
    ] {
        let _env = ENV.lock().unwrap_or_else(|e| e.into_inner());
        write(&dir.path().join(name), &opts, &a, true);
    }
    run_python(
        "
import sys, numpy as np, h5py, scipy.io
d = sys.argv[1]
want = (np.arange(1500 * 900, dtype=np.float64) * 0.25).reshape(1500, 900)
for n in ('v7.mat', 'v5.mat'):
    got = scipy.io.loadmat(d + '/' + n)['x']
    assert got.shape == want.shape and np.array_equal(got, want), n
with h5py.File(d + '/v73.mat', 'r') as f:
    got = f['x'][()].T
    assert f['x'].attrs['MATLAB_class'] == b'double'
assert got.shape == want.shape and np.array_equal(got, want)
",
        &[dir.path().to_str().unwrap()],
    );
}
