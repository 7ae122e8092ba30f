//! A struct whose numeric fields come piece by piece (`MatWriter::write_tree`) makes the same
//! file, byte for byte, as the whole struct (`TreeValue::gather`) written with its metadata,
//! in every MAT version and writer option: large real, complex and logical fields, a field of
//! at most 4 bytes (Level 5's short element), an empty one, whole values, a struct field;
//! scipy / h5py read the fields back. Structured-array fields given batch of records by batch
//! (`TreeValue::Records`): in MAT v5/v7 the same bytes (a large struct array streamed, its
//! text fields measured in a first pass; a small one written whole); in v7.3 (elements written
//! into `/#refs#` as they come, in another order under other names) the same values, and
//! hdf5storage / scipy read the fields as numpy's records.

use sciio_core::{DType, NdArray, Order, PyLiteral, Result, ScalarKind};
use sciio_mat::{
    ArrayPieces, MatValue, MatVersion, MatWriter, Pieces, PiecesOf, RecordPieces, TreeValue,
    WriteOptions,
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

/// Gives value `id` of `arrays` from its Fortran-order bytes: records in batches of 1000,
/// numbers piece by piece; counts the asks.
fn give<'a>(arrays: &'a [NdArray], asked: &'a mut Vec<usize>) -> Box<PiecesOf<'a>> {
    Box::new(move |id, write| {
        asked.push(id);
        let a = arrays[id].to_order(Order::F);
        let bytes = a.as_bytes();
        if let DType::Record(_) = a.dtype() {
            let item = a.dtype().itemsize();
            let mut pass = |put: &mut sciio_mat::PutBytes<'_>| -> Result<()> {
                bytes.chunks(1000 * item).try_for_each(&mut *put)
            };
            return write(Pieces::Records(RecordPieces {
                dtype: a.dtype().clone(),
                shape: a.shape().to_vec(),
                pass: &mut pass,
            }));
        }
        let kind = a.dtype().as_scalar().unwrap().kind;
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
    let asked = write_with(path, opts, (arrays, tree), tree_pieces);
    let mut sorted = asked.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        vec![0, 1, 2, 3, 4],
        "each array asked once: {asked:?}"
    );
}

/// Makes the tree of the arrays.
type MakeTree = fn(&[NdArray]) -> TreeValue;

/// Writes `before`, struct `s` (`tree` of `arrays`, in pieces or gathered whole) and `after`;
/// the ids asked.
fn write_with(
    path: &std::path::Path,
    opts: &WriteOptions,
    (arrays, tree): (&[NdArray], MakeTree),
    tree_pieces: bool,
) -> Vec<usize> {
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
    asked
}

/// The file written whole and the one written in pieces are the same bytes.
fn assert_same_bytes(whole: &std::path::Path, tree: &std::path::Path, opts: &WriteOptions) {
    let (a, b) = (std::fs::read(whole).unwrap(), std::fs::read(tree).unwrap());
    assert!(
        a == b,
        "{opts:?}: {} bytes whole, {} in pieces",
        a.len(),
        b.len()
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
        assert_same_bytes(&whole, &tree, opts);
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

/// Records of an integer, a big-endian double, bytes and text of data-dependent lengths
/// (empty and non-ASCII too) and a big-endian subarray.
fn records(shape: &[usize]) -> NdArray {
    let descr = PyLiteral::parse(
        "[('i', '<i8'), ('x', '>f8'), ('s', '|S12'), ('u', '<U5'), ('v', '>i2', (2, 3))]",
    )
    .unwrap();
    let dtype = DType::parse_descr(&descr).unwrap();
    let item = dtype.itemsize();
    let n: usize = shape.iter().product();
    let words: [&[u8]; 5] = [b"", b"a", b"hello", b"\xe9t\xe9", b"twelve_bytes"];
    let texts = ["", "\u{e9}", "abc", "\u{4e2d}\u{6587}", "hello"];
    let mut bytes = vec![0u8; n * item];
    for (k, r) in bytes.chunks_exact_mut(item).enumerate() {
        r[..8].copy_from_slice(&(k as i64 * 7919 - 5000).to_le_bytes());
        r[8..16].copy_from_slice(&(k as f64 / 3.0).to_be_bytes());
        let w = words[k % words.len()];
        r[16..16 + w.len()].copy_from_slice(w);
        for (j, c) in texts[k % texts.len()].chars().enumerate() {
            r[28 + 4 * j..32 + 4 * j].copy_from_slice(&u32::from(c).to_le_bytes());
        }
        for j in 0..6 {
            r[48 + 2 * j..50 + 2 * j].copy_from_slice(&((k + j) as i16 - 3).to_be_bytes());
        }
    }
    NdArray::from_bytes(dtype, shape, Order::C, &bytes).unwrap()
}

/// 0: a large 1-d struct array (over the size from which Level 5 streams); 1: a small
/// 2-d one; 2: a numeric array.
fn records_arrays() -> Vec<NdArray> {
    vec![
        records(&[16_000]),
        records(&[3, 4]),
        NdArray::from_vec((0..300 * 200).map(f64::from).collect(), &[300, 200]).unwrap(),
    ]
}

fn records_value(id: usize, a: &NdArray) -> TreeValue {
    TreeValue::Records {
        id,
        dtype: a.dtype().clone(),
        shape: a.shape().to_vec(),
    }
}

/// `s`: `r` (large records), `t` (a struct: `q` small records, `w` text), `a` numeric.
fn records_tree(arrays: &[NdArray]) -> TreeValue {
    let kind = arrays[2].dtype().as_scalar().unwrap().kind;
    let t = TreeValue::Struct(vec![
        ("q".into(), records_value(1, &arrays[1])),
        ("w".into(), TreeValue::Whole(MatValue::from("text"), None)),
    ]);
    TreeValue::Struct(vec![
        ("r".into(), records_value(0, &arrays[0])),
        ("t".into(), t),
        (
            "a".into(),
            TreeValue::Pieces {
                id: 2,
                kind,
                shape: arrays[2].shape().to_vec(),
                meta: Some(sciio_mat::numeric_meta(kind, arrays[2].shape())),
            },
        ),
    ])
}

#[test]
fn a_struct_of_records_written_in_pieces_is_the_whole_structs_file() {
    let dir = tempdir();
    let arrays = records_arrays();
    for opts in [
        WriteOptions::default()
            .version(MatVersion::V7)
            .compression(Some(3)),
        WriteOptions::default().version(MatVersion::V5),
        WriteOptions::default(),
        WriteOptions::default().python_metadata(true),
    ] {
        let _env = ENV.lock().unwrap_or_else(|e| e.into_inner());
        std::env::set_var("SOURCE_DATE_EPOCH", "1700000000");
        let (whole, tree) = (dir.path().join("whole.mat"), dir.path().join("tree.mat"));
        write_with(&whole, &opts, (&arrays, records_tree), false);
        let asked = write_with(&tree, &opts, (&arrays, records_tree), true);
        if opts.version == MatVersion::V73 {
            // Elements go into `/#refs#` as they come: the same values, not the same bytes.
            assert_eq!(asked, vec![0, 1, 2], "{opts:?}");
            let read = |p: &std::path::Path| {
                let f = sciio_mat::MatFile::open(p).unwrap();
                ["before", "s", "after"].map(|v| f.read(v).unwrap())
            };
            assert!(read(&whole) == read(&tree), "{opts:?}");
            continue;
        }
        // Level 5: records with text fields are asked for twice (measured, then written).
        assert_eq!(asked, vec![0, 1, 0, 1, 2], "{opts:?}");
        assert_same_bytes(&whole, &tree, &opts);
    }
}

/// Records given other than announced (fewer, or a different dtype) are an error, not a
/// struct of other values.
#[test]
fn records_other_than_announced_are_refused() {
    let dir = tempdir();
    let arrays = records_arrays();
    for version in [MatVersion::V7, MatVersion::V73] {
        let opts = WriteOptions::default().version(version);
        let mut w = MatWriter::create(dir.path().join("bad.mat"), opts).unwrap();
        let short = &arrays[0];
        let mut give = |_id: usize, write: &mut dyn FnMut(Pieces<'_>) -> Result<()>| {
            let bytes = short.as_bytes();
            let mut pass = |put: &mut sciio_mat::PutBytes<'_>| -> Result<()> {
                put(&bytes[..bytes.len() / 2])
            };
            write(Pieces::Records(RecordPieces {
                dtype: short.dtype().clone(),
                shape: short.shape().to_vec(),
                pass: &mut pass,
            }))
        };
        let tree = TreeValue::Struct(vec![("r".into(), records_value(0, short))]);
        let err = w.write_tree("s", tree, &mut give).unwrap_err();
        assert!(err.to_string().contains("records"), "{version:?}: {err}");
        let other = TreeValue::Struct(vec![("r".into(), records_value(0, &arrays[1]))]);
        let err = w.write_tree("t", other, &mut give).unwrap_err();
        assert!(err.to_string().contains("given"), "{version:?}: {err}");
    }
}

#[test]
fn hdf5storage_and_scipy_read_the_records_fields() {
    let dir = tempdir();
    let arrays = records_arrays();
    for (name, opts) in [
        // `Python.*` metadata on the structs too: hdf5storage reads them as dicts.
        ("v73.mat", WriteOptions::default().python_metadata(true)),
        ("v7.mat", WriteOptions::default().version(MatVersion::V7)),
    ] {
        let _env = ENV.lock().unwrap_or_else(|e| e.into_inner());
        write_with(&dir.path().join(name), &opts, (&arrays, records_tree), true);
    }
    let out = run_python(
        "
import sys, numpy as np, hdf5storage, scipy.io
d = sys.argv[1]
words = [b'', b'a', b'hello', b'\\xe9t\\xe9', b'twelve_bytes']
texts = ['', '\\u00e9', 'abc', '\\u4e2d\\u6587', 'hello']
def records(shape):
    n = int(np.prod(shape))
    k = np.arange(n)
    r = np.zeros(n, dtype=[('i', '<i8'), ('x', '>f8'), ('s', 'S12'), ('u', '<U5'), ('v', '>i2', (2, 3))])
    r['i'] = k * 7919 - 5000
    r['x'] = k / 3.0
    r['s'] = [words[j % 5] for j in k]
    r['u'] = [texts[j % 5] for j in k]
    r['v'] = (k[:, None] + np.arange(6) - 3).reshape(n, 2, 3)
    return r.reshape(shape)
big, small = records((16000,)), records((3, 4))
def one(v):
    return v.flat[0] if isinstance(v, np.ndarray) and v.dtype == object and v.size == 1 else v
s = one(hdf5storage.loadmat(d + '/v73.mat')['s'])
for got, want in ((one(s['r']), big), (one(one(s['t'])['q']), small)):
    assert got.shape == want.shape, (got.shape, want.shape)
    for f in want.dtype.names:
        assert np.array_equal(got[f], want[f]), f
assert np.array_equal(one(s['a']), np.arange(300 * 200.0).reshape(300, 200))
m = scipy.io.loadmat(d + '/v7.mat')['s'][0, 0]
r = m['r']
assert r.shape == (1, 16000), r.shape
for j in (0, 1, 3, 4, 15999):
    e = r[0, j]
    assert e['i'][0, 0] == big['i'][j] and e['x'][0, 0] == big['x'][j], j
    got_s = e['s'][0] if e['s'].size else ''
    # Bytes are characters of their byte values in a Level-5 char array (as scipy reads them).
    assert got_s == big['s'][j].decode('latin-1'), (j, got_s)
    got_u = e['u'][0] if e['u'].size else ''
    assert got_u == big['u'][j], (j, got_u)
    assert np.array_equal(e['v'], big['v'][j]), j
q = m['t'][0, 0]['q']
assert q.shape == (3, 4), q.shape
assert q[2, 1]['i'][0, 0] == small['i'][2, 1]
print('same')
",
        &[dir.path().to_str().unwrap()],
    );
    assert_eq!(out.trim(), "same");
}
