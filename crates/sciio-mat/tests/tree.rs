//! A struct whose numeric fields come piece by piece (`MatWriter::write_tree`) makes the same
//! file, byte for byte, as the whole struct (`TreeValue::gather`) written with its metadata,
//! in every MAT version and writer option: large real, complex and logical fields, a field of
//! at most 4 bytes (Level 5's short element), an empty one, whole values, a struct field;
//! scipy / h5py read the fields back.

use sciio_core::{DType, NdArray, Order, Result, ScalarKind};
use sciio_mat::{
    ArrayPieces, MatValue, MatVersion, MatWriter, Pieces, PiecesOf, TreeValue, WriteOptions,
};
use sciio_testkit::{run_python, tempdir};

/// Held while the environment is set or read (the writers read `SOURCE_DATE_EPOCH`).
static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn arrays() -> Vec<NdArray> {
    let f64s: Vec<f64> = (0..1500 * 1000).map(|i| (i % 977) as f64 * 0.5).collect();
    let c128: Vec<u8> = (0..2 * 700 * 500)
        .flat_map(|i| ((i % 313) as f64 - 7.0).to_le_bytes())
        .collect();
    let c128 = NdArray::from_bytes(
        DType::scalar(ScalarKind::Complex(16)),
        &[700, 500],
        Order::C,
        &c128,
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
    vec![
        NdArray::from_vec(f64s, &[1500, 1000]).unwrap(),
        c128,
        bools,
        NdArray::from_vec(vec![2.5f32], &[1, 1]).unwrap(),
        NdArray::from_vec(Vec::<f64>::new(), &[0, 3]).unwrap(),
    ]
}

fn pieces(id: usize, a: &NdArray) -> TreeValue {
    let kind = a.dtype().as_scalar().unwrap().kind;
    TreeValue::Pieces {
        id,
        kind,
        shape: a.shape().to_vec(),
        meta: Some(sciio_mat::numeric_meta(kind, a.shape())),
    }
}

/// `s`: `a` (large double), `t` (a struct: `m` logical, `tiny`, `w` text), `c` complex,
/// `e` empty.
fn tree(arrays: &[NdArray]) -> TreeValue {
    let t = TreeValue::Struct(vec![
        ("m".into(), pieces(2, &arrays[2])),
        ("tiny".into(), pieces(3, &arrays[3])),
        ("w".into(), TreeValue::Whole(MatValue::from("text"), None)),
    ]);
    TreeValue::Struct(vec![
        ("a".into(), pieces(0, &arrays[0])),
        ("t".into(), t),
        ("c".into(), pieces(1, &arrays[1])),
        ("e".into(), pieces(4, &arrays[4])),
    ])
}

/// Gives array `id` of `arrays` piece by piece from its Fortran-order bytes; counts the asks.
fn give<'a>(arrays: &'a [NdArray], asked: &'a mut Vec<usize>) -> Box<PiecesOf<'a>> {
    Box::new(move |id, write| {
        asked.push(id);
        let a = arrays[id].to_order(Order::F);
        let kind = a.dtype().as_scalar().unwrap().kind;
        let bytes = a.as_bytes();
        let mut fill = |first: u64, buf: &mut [u8]| -> Result<()> {
            let at = first as usize * kind.itemsize();
            buf.copy_from_slice(&bytes[at..at + buf.len()]);
            Ok(())
        };
        write(Pieces::Array(ArrayPieces {
            kind,
            shape: a.shape().to_vec(),
            fill: &mut fill,
        }))
    })
}

fn write(path: &std::path::Path, opts: &WriteOptions, arrays: &[NdArray], tree_pieces: bool) {
    let mut asked = Vec::new();
    let mut w = MatWriter::create(path, opts.clone()).unwrap();
    w.write("before", &MatValue::from(1.0)).unwrap();
    let mut give = give(arrays, &mut asked);
    if tree_pieces {
        w.write_tree("s", tree(arrays), &mut *give).unwrap();
    } else {
        let (value, meta) = tree(arrays).gather(&mut *give).unwrap();
        w.write_with_meta("s", &value, meta.as_ref()).unwrap();
    }
    w.write("after", &MatValue::from("x")).unwrap();
    w.finish().unwrap();
    drop(give);
    let mut sorted = asked.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        vec![0, 1, 2, 3, 4],
        "each array asked once: {asked:?}"
    );
}

#[test]
fn a_struct_written_in_pieces_is_the_whole_structs_file() {
    let dir = tempdir();
    let arrays = arrays();
    let versions = [
        WriteOptions::default(),
        WriteOptions::default().compression(None),
        WriteOptions::default().python_metadata(true),
        WriteOptions::default()
            .version(MatVersion::V7)
            .compression(Some(3)),
        WriteOptions::default().version(MatVersion::V5),
    ];
    for opts in &versions {
        let _env = ENV.lock().unwrap_or_else(|e| e.into_inner());
        std::env::set_var("SOURCE_DATE_EPOCH", "1700000000");
        let (whole, tree) = (dir.path().join("whole.mat"), dir.path().join("tree.mat"));
        write(&whole, opts, &arrays, false);
        write(&tree, opts, &arrays, true);
        let (a, b) = (
            std::fs::read(&whole).unwrap(),
            std::fs::read(&tree).unwrap(),
        );
        assert!(
            a == b,
            "{opts:?}: {} bytes whole, {} in pieces",
            a.len(),
            b.len()
        );
    }
}

/// Through libhdf5 (whose files are not the same bytes twice) the struct is gathered whole:
/// the same values as the whole struct's.
#[test]
fn through_libhdf5_the_struct_is_the_whole_structs_value() {
    let dir = tempdir();
    let arrays = arrays();
    let opts = WriteOptions::default().libhdf5(true);
    let (whole, tree) = (dir.path().join("whole.mat"), dir.path().join("tree.mat"));
    write(&whole, &opts, &arrays, false);
    write(&tree, &opts, &arrays, true);
    let read = |p: &std::path::Path| sciio_mat::MatFile::open(p).unwrap().read("s").unwrap();
    assert_eq!(read(&whole), read(&tree));
}

#[test]
fn scipy_and_h5py_read_the_struct_fields() {
    let dir = tempdir();
    let arrays = arrays();
    for (name, opts) in [
        ("v73.mat", WriteOptions::default()),
        ("v7.mat", WriteOptions::default().version(MatVersion::V7)),
        ("v5.mat", WriteOptions::default().version(MatVersion::V5)),
    ] {
        let _env = ENV.lock().unwrap_or_else(|e| e.into_inner());
        write(&dir.path().join(name), &opts, &arrays, true);
    }
    let out = run_python(
        "
import sys, numpy as np, h5py, scipy.io
d = sys.argv[1]
a = (np.arange(1500 * 1000) % 977 * 0.5).reshape(1500, 1000)
c = ((np.arange(2 * 700 * 500) % 313) - 7.0).view(np.complex128).reshape(700, 500)
m = (np.arange(2500 * 2000) % 3 == 0).reshape(2500, 2000)
for n in ('v7.mat', 'v5.mat'):
    s = scipy.io.loadmat(d + '/' + n)['s'][0, 0]
    assert s.dtype.names == ('a', 't', 'c', 'e'), s.dtype.names
    assert np.array_equal(s['a'], a) and np.array_equal(s['c'], c), n
    t = s['t'][0, 0]
    assert np.array_equal(t['m'].astype(bool), m) and t['tiny'][0, 0] == 2.5 and t['w'][0] == 'text'
    assert s['e'].shape == (0, 3), s['e'].shape
with h5py.File(d + '/v73.mat', 'r') as f:
    g = f['s']
    assert g.attrs['MATLAB_class'] == b'struct'
    assert [bytes(n).decode() for n in g.attrs['MATLAB_fields']] == ['a', 't', 'c', 'e']
    assert np.array_equal(g['a'][()].T, a)
    z = g['c'][()]
    assert np.array_equal((z['real'] + 1j * z['imag']).T, c)
    assert np.array_equal(g['t/m'][()].T.astype(bool), m)
    assert g['t/m'].attrs['MATLAB_class'] == b'logical'
print('same')
",
        &[dir.path().to_str().unwrap()],
    );
    assert_eq!(out.trim(), "same");
}
