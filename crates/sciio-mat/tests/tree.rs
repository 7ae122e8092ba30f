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

/// A `U`/`S` array of `shape` (C order), strings `width` units wide cycling through `words`
/// (empty and NUL-padded ones among them).
fn text(kind: ScalarKind, shape: &[usize], words: &[&str]) -> NdArray {
    let (unit, width) = match kind {
        ScalarKind::Unicode(w) => (4, w),
        ScalarKind::Bytes(w) => (1, w),
        _ => unreachable!(),
    };
    let n: usize = shape.iter().product();
    let mut bytes = vec![0u8; n * width * unit];
    for (i, s) in bytes.chunks_exact_mut(width * unit).enumerate() {
        let word = words[(i * 7 + i / 5) % words.len()];
        for (k, c) in word.chars().take(width).enumerate() {
            match unit {
                4 => s[4 * k..4 * k + 4].copy_from_slice(&u32::from(c).to_le_bytes()),
                _ => s[k] = u32::from(c) as u8,
            }
        }
    }
    NdArray::from_bytes(DType::scalar(kind), shape, Order::C, &bytes).unwrap()
}

/// 0: large numeric (the Level-5 struct over the size from which it streams); 1: a large
/// 2-d `U` array (text beyond the BMP); 2: a 1-d `S` array with non-ASCII bytes (a v7.3
/// file keeps it as strings); 3: `U` of empty strings only; 4: one 1-unit string (Level 5's
/// short element); 5: a 3-d `U` array.
fn text_arrays() -> Vec<NdArray> {
    let words = [
        "",
        "a",
        "hello",
        "\u{e9}t\u{e9}",
        "\u{4e2d}\u{6587}",
        "\u{1F600}x",
    ];
    let bytes = ["", "a", "hello", "\u{e9}t\u{e9}", "\u{ff}"];
    vec![
        NdArray::from_vec((0..700 * 1000).map(f64::from).collect(), &[700, 1000]).unwrap(),
        text(ScalarKind::Unicode(6), &[300, 400], &words),
        text(ScalarKind::Bytes(7), &[50_000], &bytes),
        text(ScalarKind::Unicode(3), &[40, 5], &[""]),
        text(ScalarKind::Unicode(1), &[1], &["a"]),
        text(ScalarKind::Unicode(4), &[6, 5, 7], &words[1..]),
    ]
}

fn text_value(id: usize, a: &NdArray) -> TreeValue {
    let kind = a.dtype().as_scalar().unwrap().kind;
    TreeValue::Text {
        id,
        kind,
        shape: a.shape().to_vec(),
        meta: Some(sciio_mat::numeric_meta(kind, a.shape())),
    }
}

/// `s`: `a` numeric, `t` text, `b` bytes, `u` (a struct: `e` empty strings, `one`, `d` 3-d).
fn text_tree(arrays: &[NdArray]) -> TreeValue {
    let kind = arrays[0].dtype().as_scalar().unwrap().kind;
    let u = TreeValue::Struct(vec![
        ("e".into(), text_value(3, &arrays[3])),
        ("one".into(), text_value(4, &arrays[4])),
        ("d".into(), text_value(5, &arrays[5])),
    ]);
    TreeValue::Struct(vec![
        (
            "a".into(),
            TreeValue::Pieces {
                id: 0,
                kind,
                shape: arrays[0].shape().to_vec(),
                meta: Some(sciio_mat::numeric_meta(kind, arrays[0].shape())),
            },
        ),
        ("t".into(), text_value(1, &arrays[1])),
        ("b".into(), text_value(2, &arrays[2])),
        ("u".into(), u),
    ])
}

/// Gives value `id` of `arrays`: numbers from their Fortran-order bytes, text as its code
/// units in the file's layout (`scipy`: numpy's shape and the width; else hdf5storage's),
/// column-major, with their summary; counts the asks.
fn give_text<'a>(
    arrays: &'a [NdArray],
    scipy: bool,
    asked: &'a mut Vec<usize>,
) -> Box<PiecesOf<'a>> {
    Box::new(move |id, write| {
        asked.push(id);
        let a = &arrays[id];
        let kind = a.dtype().as_scalar().unwrap().kind;
        let text = match kind {
            ScalarKind::Unicode(w) => Some((4, w)),
            ScalarKind::Bytes(w) => Some((1, w)),
            _ => None,
        };
        let Some((unit, width)) = text else {
            let f = a.to_order(Order::F);
            let bytes = f.as_bytes();
            let mut fill = |first: u64, buf: &mut [u8]| -> Result<()> {
                let at = first as usize * kind.itemsize();
                buf.copy_from_slice(&bytes[at..at + buf.len()]);
                Ok(())
            };
            return write(Pieces::Array(ArrayPieces {
                kind,
                shape: a.shape().to_vec(),
                fill: &mut fill,
            }));
        };
        let mut shape = a.shape().to_vec();
        match scipy {
            true => shape.push(width),
            false => *shape.last_mut().unwrap() *= width,
        }
        let units = NdArray::from_bytes(
            DType::scalar(ScalarKind::UInt(unit as u8)),
            &shape,
            Order::C,
            a.to_order(Order::C).as_bytes(),
        )
        .unwrap()
        .to_order(Order::F);
        let bytes = units.as_bytes();
        let mut summary = sciio_mat::TextSummary::default();
        summary.add(unit, false, bytes);
        if shape.len() == 1 {
            shape.insert(0, 1);
        }
        let mut fill = |first: u64, buf: &mut [u8]| -> Result<()> {
            let at = first as usize * unit;
            buf.copy_from_slice(&bytes[at..at + buf.len()]);
            Ok(())
        };
        write(Pieces::Text(sciio_mat::TextPieces {
            unit,
            shape,
            summary,
            fill: &mut fill,
        }))
    })
}

/// Writes `before`, struct `s` of text (in pieces or gathered whole) and `after`; the ids
/// asked.
fn write_text(
    path: &std::path::Path,
    opts: &WriteOptions,
    arrays: &[NdArray],
    in_pieces: bool,
) -> Vec<usize> {
    let mut asked = Vec::new();
    let mut w = MatWriter::create(path, opts.clone()).unwrap();
    w.write("before", &MatValue::from(1.0)).unwrap();
    let mut give = give_text(arrays, w.scipy_text(), &mut asked);
    if in_pieces {
        w.write_tree("s", text_tree(arrays), &mut *give).unwrap();
    } else {
        let (value, meta) = whole_text_struct(arrays, w.scipy_text());
        w.write_with_meta("s", &value, meta.as_ref()).unwrap();
    }
    w.write("after", &MatValue::from("x")).unwrap();
    w.finish().unwrap();
    drop(give);
    asked
}

/// The struct [`text_tree`] stands for, made of the whole arrays as `sciio convert` makes
/// them: `scipy_value` (Level 5) or `from_numpy` with its metadata (v7.3).
fn whole_text_struct(arrays: &[NdArray], scipy: bool) -> (MatValue, Option<sciio_mat::PythonMeta>) {
    let one = |a: &NdArray| match scipy {
        true => (sciio_mat::scipy_value(a).unwrap(), None),
        false => {
            let (v, m) = sciio_mat::from_numpy(a).unwrap();
            (v, Some(m))
        }
    };
    let scalar = |fields: Vec<(&str, (MatValue, Option<sciio_mat::PythonMeta>))>| {
        let metas = fields
            .iter()
            .map(|(_, (_, m))| m.clone().unwrap_or_default())
            .collect();
        let values = fields
            .into_iter()
            .map(|(n, (v, _))| (n.to_string(), v))
            .collect();
        let meta = sciio_mat::PythonMeta {
            attrs: None,
            elements: vec![metas],
        };
        (
            MatValue::Struct(sciio_mat::StructArray::scalar(values)),
            Some(meta),
        )
    };
    let u = scalar(vec![
        ("e", one(&arrays[3])),
        ("one", one(&arrays[4])),
        ("d", one(&arrays[5])),
    ]);
    let (a, t, b) = (one(&arrays[0]), one(&arrays[1]), one(&arrays[2]));
    scalar(vec![("a", a), ("t", t), ("b", b), ("u", u)])
}

/// Text fields given as their codes (`TreeValue::Text`) make the file the whole struct
/// makes: Level 5 byte for byte (each text asked twice: planned from its summary, then
/// written), v7.3 the same values; scipy and hdf5storage read numpy's text back.
#[test]
fn a_struct_of_text_written_in_pieces_is_the_whole_structs_file() {
    let dir = tempdir();
    let arrays = text_arrays();
    let versions = [
        WriteOptions::default().version(MatVersion::V5),
        WriteOptions::default()
            .version(MatVersion::V7)
            .compression(Some(3)),
        WriteOptions::default(),
        WriteOptions::default().compression(None),
    ];
    for opts in &versions {
        let _env = ENV.lock().unwrap_or_else(|e| e.into_inner());
        std::env::set_var("SOURCE_DATE_EPOCH", "1700000000");
        let (whole, tree) = (dir.path().join("whole.mat"), dir.path().join("tree.mat"));
        write_text(&whole, opts, &arrays, false);
        let asked = write_text(&tree, opts, &arrays, true);
        if opts.version == MatVersion::V73 {
            assert_eq!(asked, vec![0, 1, 2, 3, 4, 5], "{opts:?}");
            let read = |p: &std::path::Path| {
                let f = sciio_mat::MatFile::open(p).unwrap();
                ["before", "s", "after"].map(|v| f.read(v).unwrap())
            };
            assert!(read(&whole) == read(&tree), "{opts:?}");
        } else {
            // The texts asked to plan their elements, then every value as written.
            assert_eq!(asked, vec![1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5], "{opts:?}");
            assert_same_bytes(&whole, &tree, opts);
        }
    }
    for (name, opts) in [
        ("v73.mat", WriteOptions::default()),
        ("v7.mat", WriteOptions::default().version(MatVersion::V7)),
    ] {
        let _env = ENV.lock().unwrap_or_else(|e| e.into_inner());
        write_text(&dir.path().join(name), &opts, &arrays, true);
    }
    let out = run_python(
        "
import sys, numpy as np, hdf5storage, scipy.io, h5py
d = sys.argv[1]
def text(dt, shape, words):
    n = int(np.prod(shape))
    return np.array([words[(i * 7 + i // 5) % len(words)] for i in range(n)], dtype=dt).reshape(shape)
words = ['', 'a', 'hello', '\\u00e9t\\u00e9', '\\u4e2d\\u6587', '\\U0001F600x']
t = text('U6', (300, 400), words)
b = text('S7', (50000,), [w.encode('latin-1') for w in ['', 'a', 'hello', '\\u00e9t\\u00e9', '\\u00ff']])
e = text('U3', (40, 5), [''])
one = np.array(['a'], dtype='U1')
dd = text('U4', (6, 5, 7), words[1:])
m = hdf5storage.loadmat(d + '/v73.mat')['s']
def one_(v):
    return v.flat[0] if isinstance(v, np.ndarray) and v.dtype == object and v.size == 1 else v
s = one_(m)
for key, want in (('t', t), ('b', b)):
    # A struct's fields read as MATLAB values (a leading axis, the widest string's width).
    got = one_(s[key])
    assert got.dtype.kind == want.dtype.kind and np.array_equal(got.reshape(want.shape), want), key
u = one_(s['u'])
for key, want in (('e', e), ('one', one), ('d', dd)):
    got = one_(u[key])
    assert got.dtype.kind == want.dtype.kind and np.array_equal(got.reshape(want.shape), want), (key, got)
with h5py.File(d + '/v73.mat', 'r') as f:
    assert f['s/t'].attrs['H5PATH'] == b'/s' and f['s/u/d'].attrs['H5PATH'] == b'/s/u'
mine = scipy.io.loadmat(d + '/v7.mat')['s'][0, 0]
# scipy writes non-ASCII bytes as replacement characters: its file of them as latin-1 text.
scipy.io.savemat(d + '/ref.mat', {'s': {'a': np.arange(700 * 1000.0).reshape(700, 1000), 't': t,
    'b': np.char.decode(b, 'latin-1').astype('U7'),
    'u': {'e': e, 'one': one, 'd': dd}}})
ref = scipy.io.loadmat(d + '/ref.mat')['s'][0, 0]
for key in ('t', 'b'):
    assert mine[key].dtype == ref[key].dtype and np.array_equal(mine[key], ref[key]), key
mu, ru = mine['u'][0, 0], ref['u'][0, 0]
for key in ('e', 'one', 'd'):
    assert mu[key].shape == ru[key].shape and np.array_equal(mu[key], ru[key]), key
print('same')
",
        &[dir.path().to_str().unwrap()],
    );
    assert_eq!(out.trim(), "same");
}
