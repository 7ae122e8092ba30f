//! MATLAB files from the wild (issue 15): sparse matrices from MATLAB-written v7.3 files into
//! `scipy.sparse.save_npz`'s layout and back, `save_npz` files (csc, csr, coo) into MATLAB
//! sparse variables, and numpy arrays (`U`, `S`, structured, bool, complex) written as
//! `hdf5storage.savemat` writes them — each checked with the real Python tools.
#![cfg(feature = "mat")]

use std::path::{Path, PathBuf};

use sciio::convert::{convert, ConvertOptions};
use sciio_mat::{MatFile, MatValue};
use sciio_testkit::{run_python, tempdir};

fn matlab_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sciio-mat/tests/data/matlab")
        .join(name)
}

fn convert_to(src: &Path, node: Option<&str>, dst: &Path) -> sciio::ConvertSummary {
    let mut file = sciio::File::open(src).unwrap();
    convert(
        &mut file,
        node,
        dst,
        &ConvertOptions::default(),
        &mut |_, _| {},
    )
    .unwrap_or_else(|e| panic!("{} -> {}: {e}", src.display(), dst.display()))
}

/// Every sparse variable MATLAB wrote in test_basic_v73.mat.
const SPARSE_VARS: [&str; 12] = [
    "sparse_all_zeros",
    "sparse_col",
    "sparse_complex",
    "sparse_diag",
    "sparse_empty",
    "sparse_logical",
    "sparse_neg",
    "sparse_nnz",
    "sparse_rec_col",
    "sparse_rec_row",
    "sparse_row",
    "sparse_symmetric",
];

/// pymatreader's value of a MATLAB sparse variable as a dense complex/bool/float array, next
/// to scipy's view of another file's matrix (pymatreader gives complex values as real/imag
/// records and logical ones as uint8).
const DENSE_OF_PYMATREADER: &str = r#"
import numpy as np
def dense(m):
    d = m.data
    if d.dtype.names:
        d = d['real'] + 1j * d['imag']
    out = np.zeros(m.shape, dtype=d.dtype)
    for j in range(m.shape[1]):
        for k in range(m.indptr[j], m.indptr[j + 1]):
            out[m.indices[k], j] = d[k]
    return out
"#;

#[test]
fn matlab_sparse_variables_become_save_npz_files_scipy_loads() {
    let dir = tempdir();
    let src = matlab_file("test_basic_v73.mat");
    let mut npz_files = Vec::new();
    for var in SPARSE_VARS {
        let dst = dir.path().join(format!("{var}.npz"));
        let summary = convert_to(&src, Some(var), &dst);
        assert_eq!(
            summary.arrays,
            ["indices", "indptr", "format", "shape", "data"],
            "{var}"
        );
        npz_files.push(dst);
    }
    let mut args = vec![src.to_str().unwrap()];
    args.extend(npz_files.iter().map(|p| p.to_str().unwrap()));
    let code = format!(
        "{DENSE_OF_PYMATREADER}\n{}",
        r#"
import sys, pymatreader, scipy.sparse as sp
ref = pymatreader.read_mat(sys.argv[1])
for path in sys.argv[2:]:
    var = path.rsplit('/', 1)[1][:-4]
    got = sp.load_npz(path)
    want = dense(ref[var])
    assert got.format == 'csc', (var, got.format)
    g = got.toarray()
    if want.dtype == np.uint8:
        want = want.astype(bool)
    assert g.shape == want.shape and g.dtype.kind == want.dtype.kind, (var, g.dtype, want.dtype, g.shape, want.shape)
    assert np.array_equal(g, want), (var, g, want)
    print(var, got.nnz)
"#
    );
    let out = run_python(&code, &args);
    assert_eq!(out.lines().count(), SPARSE_VARS.len(), "{out}");
    assert!(out.contains("sparse_complex 3"), "{out}");
}

#[test]
fn whole_mat_files_name_sparse_members_var_slash_part() {
    let dir = tempdir();
    let src = matlab_file("test_basic_v73.mat");
    let dst = dir.path().join("all.npz");
    let summary = convert_to(&src, None, &dst);
    for part in ["indices", "indptr", "format", "shape", "data"] {
        let name = format!("sparse_diag/{part}");
        assert!(summary.arrays.contains(&name), "{name}");
    }
    assert!(
        !summary
            .left_out
            .iter()
            .any(|l| l.path.starts_with("/sparse")),
        "{:?}",
        summary.left_out
    );
    let out = run_python(
        &format!(
            "{DENSE_OF_PYMATREADER}\n{}",
            r#"
import sys, pymatreader, scipy.sparse as sp
z = np.load(sys.argv[1]); ref = pymatreader.read_mat(sys.argv[2])
names = sorted({k.split('/')[0] for k in z.files if k.endswith('/format')})
for v in names:
    m = sp.csc_matrix((z[v + '/data'], z[v + '/indices'], z[v + '/indptr']), shape=tuple(z[v + '/shape']))
    want = dense(ref[v])
    assert np.array_equal(m.toarray(), want.astype(m.dtype)), v
print(len(names))
"#
        ),
        &[dst.to_str().unwrap(), src.to_str().unwrap()],
    );
    assert_eq!(out.trim(), SPARSE_VARS.len().to_string());
}

#[test]
fn matlab_sparse_stays_sparse_mat_to_mat_and_through_npz() {
    let dir = tempdir();
    let src = matlab_file("test_basic_v73.mat");
    let original = MatFile::open(&src).unwrap();
    for var in SPARSE_VARS {
        // .mat -> .mat copies the value.
        let dst = dir.path().join(format!("{var}.mat"));
        convert_to(&src, Some(var), &dst);
        let want = original.read(var).unwrap();
        assert!(matches!(want, MatValue::Sparse(_)), "{var}");
        assert_eq!(
            MatFile::open(&dst).unwrap().read(var).unwrap(),
            want,
            "{var}"
        );
        // .mat -> save_npz layout -> .mat comes back the same sparse matrix, named after the
        // npz file.
        let npz = dir.path().join(format!("{var}.npz"));
        convert_to(&src, Some(var), &npz);
        let again = dir.path().join(format!("{var}_again.mat"));
        convert_to(&npz, None, &again);
        assert_eq!(
            MatFile::open(&again).unwrap().read(var).unwrap(),
            want,
            "{var} through npz"
        );
    }
    // mat73 reads the copies as MATLAB's file.
    let out = run_python(
        r#"
import sys, mat73, numpy as np
d = sys.argv[1]; src = sys.argv[2]
for v in sys.argv[3:]:
    a = mat73.loadmat(src, only_include=v)[v]; b = mat73.loadmat(f'{d}/{v}.mat')[v]
    assert a.shape == b.shape and np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices), v
    assert a.data.tobytes() == b.data.tobytes(), v
print('ok')
"#,
        &[
            dir.path().to_str().unwrap(),
            src.to_str().unwrap(),
            "sparse_diag",
            "sparse_complex",
            "sparse_logical",
            "sparse_neg",
            "sparse_rec_row",
        ],
    );
    assert_eq!(out.trim(), "ok");
}

#[test]
fn save_npz_files_become_matlab_sparse_that_mat73_reads_equal() {
    let dir = tempdir();
    let d = dir.path().to_str().unwrap();
    // csc, csr and coo (with a duplicate entry and unsorted coordinates), float32, int,
    // bool and complex values; each saved by scipy.sparse.save_npz.
    run_python(
        r#"
import sys, numpy as np, scipy.sparse as sp
d = sys.argv[1]
a = np.array([[0, 1.5, 0, 0], [2, 0, 0, -3], [0, 0, 0, 4]])
sp.save_npz(f'{d}/csc.npz', sp.csc_matrix(a))
sp.save_npz(f'{d}/csr.npz', sp.csr_matrix(a))
sp.save_npz(f'{d}/coo.npz', sp.coo_matrix((np.array([5., 1., 2.]), (np.array([2, 0, 2]), np.array([1, 3, 1]))), shape=(3, 4)))
sp.save_npz(f'{d}/f32.npz', sp.csc_matrix(a.astype(np.float32)))
sp.save_npz(f'{d}/ints.npz', sp.csr_matrix(a.astype(np.int16)))
sp.save_npz(f'{d}/logical.npz', sp.csc_matrix(a != 0))
sp.save_npz(f'{d}/cplx.npz', sp.csc_matrix(a * (1 - 2j)))
sp.save_npz(f'{d}/arr.npz', sp.csr_array(a))
sp.save_npz(f'{d}/empty.npz', sp.csc_matrix((0, 3)))
"#,
        &[d],
    );
    let names = [
        "csc", "csr", "coo", "f32", "ints", "logical", "cplx", "arr", "empty",
    ];
    for name in names {
        let src = dir.path().join(format!("{name}.npz"));
        let dst = dir.path().join(format!("{name}.mat"));
        let summary = convert_to(&src, None, &dst);
        assert_eq!(summary.arrays.len(), summary.arrays.len());
        assert!(
            summary.left_out.is_empty(),
            "{name}: {:?}",
            summary.left_out
        );
        let value = MatFile::open(&dst).unwrap().read(name).unwrap();
        assert!(
            matches!(value, MatValue::Sparse(_)),
            "{name}: {:?}",
            value.class()
        );
    }
    let out = run_python(
        r#"
import sys, mat73, numpy as np, scipy.sparse as sp
d = sys.argv[1]
for name in sys.argv[2:]:
    want = sp.load_npz(f'{d}/{name}.npz').tocsc()
    got = mat73.loadmat(f'{d}/{name}.mat')[name]
    assert isinstance(got, sp.csc_matrix) or isinstance(got, sp.csc_array), (name, type(got))
    data = got.data
    if data.dtype.names:
        data = data['real'] + 1j * data['imag']
    got = sp.csc_matrix((data, got.indices, got.indptr), shape=got.shape)
    w = want.toarray()
    if w.dtype.kind in 'fiu':
        w = w.astype(np.float64)
    g = got.toarray()
    if w.dtype == bool:
        g = g.astype(bool)
    assert g.shape == w.shape and np.array_equal(g, w), (name, g, w)
    assert got.has_sorted_indices, name
print('ok')
"#,
        &[
            d, "csc", "csr", "coo", "f32", "ints", "logical", "cplx", "arr", "empty",
        ],
    );
    assert_eq!(out.trim(), "ok");
    // The coo duplicate (2, 1) is summed: 5 + 2.
    let MatValue::Sparse(coo) = MatFile::open(dir.path().join("coo.mat"))
        .unwrap()
        .read("coo")
        .unwrap()
    else {
        panic!("coo is not sparse")
    };
    assert_eq!(
        (coo.ir.clone(), coo.jc.clone()),
        (vec![2, 0], vec![0, 0, 1, 1, 2])
    );
}

#[test]
fn numpy_text_records_bool_complex_are_written_as_hdf5storage_writes_them() {
    let dir = tempdir();
    let d = dir.path().to_str().unwrap();
    let src = dir.path().join("arrays.npz");
    run_python(
        r#"
import sys, numpy as np
np.savez(sys.argv[1],
    u=np.array(['ab', 'cde', 'é€'], dtype='U3'),
    u2d=np.array([['a', 'bb'], ['ccc', 'd']]),
    us=np.array('hello'),
    s=np.array([b'xy', b'z']),
    ss=np.array(b'abc'),
    rec=np.array([(1, 2.5, b'a', 'xy', [1, 2], True), (3, 4.5, b'bc', 'z', [3, 4], False)],
                 dtype=[('i', '<i4'), ('f', '<f8'), ('b', 'S2'), ('t', 'U2'), ('v', '<i2', (2,)), ('k', '?')]),
    rec2d=np.zeros((2, 3), dtype=[('a', '>f8'), ('c', '<c16')]),
    rec0=np.array((1, 2.5), dtype=[('i', '<i4'), ('f', '<f8')]),
    recempty=np.zeros((0,), dtype=[('a', '<f8')]),
    b=np.array([[True, False, True]]),
    c=np.array([1 + 2j, 3 - 1j], dtype='c8'),
    e=np.array([], dtype='U3'),
    half=np.zeros(2, dtype='f2'),
    when=np.zeros(2, dtype='M8[s]'))
"#,
        &[src.to_str().unwrap()],
    );
    let dst = dir.path().join("arrays.mat");
    let summary = convert_to(&src, None, &dst);
    let left: Vec<&str> = summary.left_out.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(left, ["/half", "/when"], "{:?}", summary.left_out);
    assert!(
        summary.left_out[0].reason.contains("no class"),
        "{}",
        summary.left_out[0]
    );
    let out = run_python(
        r#"
import sys, numpy as np, hdf5storage, mat73
src, dst = sys.argv[1], sys.argv[2]
want = dict(np.load(src))
got = hdf5storage.loadmat(dst)
assert set(got) == set(want) - {'half', 'when'}, sorted(got)
for k, g in got.items():
    w = want[k]
    if w.dtype.names:
        assert g.shape == w.shape and g.dtype.names == w.dtype.names, (k, g.dtype, w.dtype)
        for n in w.dtype.names:
            gv = np.array([x for x in g[n].ravel()]).reshape(w[n].shape) if g[n].dtype == object else g[n]
            assert np.array_equal(gv.astype(w[n].dtype), w[n]), (k, n, gv, w[n])
    else:
        assert g.dtype == w.dtype.newbyteorder('=') and g.shape == w.shape and np.array_equal(g, w), (k, g, w)
# mat73 (MATLAB's view): logical, complex, struct fields, char.
m = mat73.loadmat(dst)
assert m['b'].dtype == bool and m['b'].tolist() == [True, False, True], m['b']  # mat73 squeezes
assert m['c'].dtype == np.complex64 and m['c'].tolist() == [1 + 2j, 3 - 1j], m['c']
assert m['rec']['t'] == ['xy', 'z'] and m['rec']['b'] == ['a', 'bc'], m['rec']
assert m['rec0']['f'] == 2.5 and m['us'] == 'hello' and m['ss'] == 'abc', m
assert m['u'] == 'ab\x00cde\xe9\u20ac\x00', repr(m['u'])
print('ok')
"#,
        &[src.to_str().unwrap(), dst.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "ok");
    let _ = d;
}

/// A copy of MATLAB's test_basic_v73.mat edited with h5py: `struct_scalar` loses its `value`
/// dataset (still named by MATLAB_fields) and gains an `extra` one MATLAB_fields does not
/// name; `struct_array` loses its `info` column.
fn damaged_structs(dir: &Path) -> PathBuf {
    let path = dir.join("damaged_structs.mat");
    std::fs::copy(matlab_file("test_basic_v73.mat"), &path).unwrap();
    run_python(
        r#"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'r+') as f:
    del f['struct_scalar/value']
    del f['struct_array/info']
    d = f['struct_scalar'].create_dataset('extra', data=np.array([[7.0, 8.0]]))
    d.attrs['MATLAB_class'] = np.bytes_(b'double')
"#,
        &[path.to_str().unwrap()],
    );
    path
}

#[test]
fn structs_missing_a_named_field_read_the_rest_in_matlab_fields_order() {
    let dir = tempdir();
    let src = damaged_structs(dir.path());
    let mat = MatFile::open(&src).unwrap();
    let MatValue::Struct(s) = mat.read("struct_scalar").unwrap() else {
        panic!("struct_scalar")
    };
    // MATLAB_fields' order (name, value, data), then the unnamed member.
    assert_eq!(s.fields, ["name", "value", "data", "extra"]);
    assert!(
        matches!(s.field(0, "value"), Some(MatValue::Opaque(o)) if o.class == sciio_mat::ABSENT_FIELD)
    );
    let MatValue::Struct(a) = mat.read("struct_array").unwrap() else {
        panic!("struct_array")
    };
    assert_eq!(a.fields, ["id", "info"]);

    // The whole file converts (the absent fields left out with the reason), as mat73 reads it.
    let npz = dir.path().join("all.npz");
    let summary = convert_to(&src, None, &npz);
    let absent: Vec<String> = summary
        .left_out
        .iter()
        .filter(|l| l.reason.contains("lacks"))
        .map(|l| l.path.clone())
        .collect();
    assert_eq!(
        absent,
        [
            "/struct_array/0/info",
            "/struct_array/1/info",
            "/struct_scalar/value"
        ],
        "{:?}",
        summary.left_out
    );
    // The struct alone, .mat -> .mat: the absent field left out, the others copied.
    let one = dir.path().join("one.mat");
    let summary = convert_to(&src, Some("struct_scalar"), &one);
    assert_eq!(summary.left_out.len(), 1, "{:?}", summary.left_out);
    assert_eq!(summary.left_out[0].path, "/struct_scalar/value");
    let out = run_python(
        r#"
import sys, mat73, numpy as np
src, npz, one = sys.argv[1:]
ref = mat73.loadmat(src, only_include=['struct_scalar', 'struct_array'])
z = np.load(npz)
s = ref['struct_scalar']
assert sorted(s) == ['data', 'extra', 'name'], sorted(s)
assert np.array_equal(z['struct_scalar/data'], s['data']), (z['struct_scalar/data'], s['data'])
assert str(z['struct_scalar/name']) == s['name'], (z['struct_scalar/name'], s['name'])
assert z['struct_scalar/extra'].tolist() == [[7.0], [8.0]], z['struct_scalar/extra']  # HDF5 (1, 2) is MATLAB 2x1
assert z['struct_array/0/id'].item() == np.asarray(ref['struct_array']['id'][0]).item(), (z['struct_array/0/id'], ref['struct_array'])
copied = mat73.loadmat(one)['struct_scalar']
assert sorted(copied) == ['data', 'extra', 'name'], copied
assert copied['name'] == s['name'] and np.array_equal(copied['data'], s['data'])
print('ok')
"#,
        &[
            src.to_str().unwrap(),
            npz.to_str().unwrap(),
            one.to_str().unwrap(),
        ],
    );
    assert_eq!(out.trim(), "ok");
}

/// MATLAB's whole test_basic_v73.mat copied .mat -> .mat: its structs of 526 and 4093 fields
/// keep their names in `#refs#` (an inline `MATLAB_fields` of 4093 names would not fit an HDF5
/// header message); mat73 reads every variable of the copy equal to the source's, and the
/// large structs' field lists come back in MATLAB's order.
#[test]
fn whole_matlab_file_with_huge_structs_copies_mat_to_mat() {
    let dir = tempdir();
    let src = matlab_file("test_basic_v73.mat");
    let dst = dir.path().join("copy.mat");
    let summary = convert_to(&src, None, &dst);
    assert!(summary.left_out.is_empty(), "{:?}", summary.left_out);
    let original = MatFile::open(&src).unwrap();
    let copy = MatFile::open(&dst).unwrap();
    for var in ["struct_large", "struct_even_larger", "struct_nested"] {
        assert_eq!(
            copy.read(var).unwrap(),
            original.read(var).unwrap(),
            "{var}"
        );
    }
    let out = run_python(
        r#"
import sys, mat73, numpy as np, h5py
a = mat73.loadmat(sys.argv[1]); b = mat73.loadmat(sys.argv[2])
def same(x, y, at):
    assert type(x) is type(y), (at, type(x), type(y))
    if isinstance(x, dict):
        assert list(x) == list(y), at
        for k in x: same(x[k], y[k], f'{at}/{k}')
    elif isinstance(x, list):
        assert len(x) == len(y), at
        for i, (p, q) in enumerate(zip(x, y)): same(p, q, f'{at}/{i}')
    elif hasattr(x, 'toarray'):
        assert x.shape == y.shape and np.array_equal(x.indptr, y.indptr) and np.array_equal(x.indices, y.indices) and x.data.tobytes() == y.data.tobytes(), at
    elif isinstance(x, np.ndarray):
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y, equal_nan=True), at
    else:
        assert x == y or (x != x and y != y), (at, x, y)
assert sorted(a) == sorted(b), (sorted(a), sorted(b))
for k in a: same(a[k], b[k], k)
f = h5py.File(sys.argv[2], 'r')
names = f[f['struct_even_larger'].attrs['MATLAB_fields']]
print(len(a), len(names), b''.join(names[0]).decode())
"#,
        &[src.to_str().unwrap(), dst.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "52 4093 s1", "{out}");
}

/// The opaque node `sciio` lists for a variable: (kind, reason).
fn opaque_of(file: &sciio::File, path: &str) -> (String, String) {
    match &file.node(path).unwrap().kind {
        sciio::NodeKind::Opaque { kind, reason } => (kind.clone(), reason.clone()),
        other => panic!("{path}: {other:?}"),
    }
}

/// One variable that cannot be read never stops a file: a copy of MATLAB's
/// test_basic_v73.mat edited with h5py (`cell_scalar`'s item deleted from `#refs#`,
/// `double_scalar`'s `MATLAB_class` made a number) lists both as opaque nodes saying why;
/// converting to .npz and to .mat leaves out just those two with the reason, and the copies
/// hold every other variable as mat73 reads the original.
#[test]
fn a_variable_that_cannot_be_read_is_left_out_not_the_file() {
    let dir = tempdir();
    let path = dir.path().join("broken.mat");
    std::fs::copy(matlab_file("test_basic_v73.mat"), &path).unwrap();
    run_python(
        r#"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'r+') as f:
    target = f[f['cell_scalar'][0, 0]].name
    del f[target]
    f['double_scalar'].attrs['MATLAB_class'] = np.int32(7)
"#,
        &[path.to_str().unwrap()],
    );
    let file = sciio::File::open(&path).unwrap();
    let (kind, reason) = opaque_of(&file, "/cell_scalar");
    assert_eq!(kind, "cell (unreadable)");
    assert!(
        reason.contains("cannot be read") && reason.contains("#refs#"),
        "{reason}"
    );
    let (kind, reason) = opaque_of(&file, "/double_scalar");
    assert_eq!(kind, "unreadable");
    assert!(reason.contains("MATLAB_class"), "{reason}");
    drop(file);

    let npz = dir.path().join("all.npz");
    let mat = dir.path().join("copy.mat");
    for dst in [&npz, &mat] {
        let summary = convert_to(&path, None, dst);
        let mut left: Vec<&str> = summary.left_out.iter().map(|l| l.path.as_str()).collect();
        left.sort();
        assert_eq!(
            left,
            ["/cell_scalar", "/double_scalar"],
            "{}",
            dst.display()
        );
        assert!(
            summary
                .left_out
                .iter()
                .all(|l| l.reason.contains("cannot be read")),
            "{:?}",
            summary.left_out
        );
    }
    let out = run_python(
        r#"
import sys, mat73, numpy as np
ref = mat73.loadmat(sys.argv[1])
z = np.load(sys.argv[2])
assert 'double_scalar' not in z.files and not any(k.startswith('cell_scalar') for k in z.files)
assert np.array_equal(z['double_array'], ref['double_array'])
copy = mat73.loadmat(sys.argv[3])
assert sorted(copy) == sorted(k for k in ref if k not in ('cell_scalar', 'double_scalar')), sorted(copy)
for k in ('double_array', 'int8_array', 'char_array', 'logical_array'):
    assert np.array_equal(np.asarray(copy[k]), np.asarray(ref[k])), k
print('ok', len(copy))
"#,
        &[
            matlab_file("test_basic_v73.mat").to_str().unwrap(),
            npz.to_str().unwrap(),
            mat.to_str().unwrap(),
        ],
    );
    assert_eq!(out.trim(), "ok 50", "{out}");
}

/// The same in a Level-5 file (scipy.io.savemat, v5): `b`'s array flags made undecodable
/// lists it as an opaque node, and `a` and `c` convert (compared with scipy.io.loadmat).
#[test]
fn a_level5_variable_that_cannot_be_decoded_is_left_out_not_the_file() {
    let dir = tempdir();
    let path = dir.path().join("v5.mat");
    run_python(
        r#"
import sys, struct, numpy as np, scipy.io as sio
p = sys.argv[1]
sio.savemat(p, {'a': np.arange(6.0).reshape(2, 3), 'b': np.ones(3), 'c': 'text'})
data = bytearray(open(p, 'rb').read())
at = 128
for i in range(2):
    ty, size = struct.unpack_from('<II', data, at)
    if i == 1:
        # b's first subelement (the array flags) gets an unknown type.
        struct.pack_into('<I', data, at + 8, 99)
    at += 8 + size + (-size % 8)
open(p, 'wb').write(bytes(data))
"#,
        &[path.to_str().unwrap()],
    );
    let file = sciio::File::open(&path).unwrap();
    let names: Vec<&str> = file
        .root()
        .children()
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(names, ["a", "(unreadable at byte 232)", "c"]);
    let (kind, reason) = opaque_of(&file, "/(unreadable at byte 232)");
    assert_eq!(kind, "unreadable");
    assert!(reason.contains("cannot be read"), "{reason}");
    drop(file);
    let npz = dir.path().join("out.npz");
    let summary = convert_to(&path, None, &npz);
    assert_eq!(summary.arrays, ["a", "c"]);
    assert_eq!(summary.left_out.len(), 1, "{:?}", summary.left_out);
    let out = run_python(
        r#"
import sys, numpy as np, scipy.io as sio
z = np.load(sys.argv[1])
assert np.array_equal(z['a'], np.arange(6.0).reshape(2, 3)), z['a']
assert str(z['c']) == 'text', z['c']
print('ok')
"#,
        &[npz.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "ok");
}

/// MATLAB objects decoded (MATLAB-written files from mat-io's test data, v7.3 and v7): each
/// converted to .npz and compared with what mat-io reads from the same file —
/// `containers.Map` as `keys`/`values` cells, enumerations as their member names,
/// `calendarDuration` as `months`/`days`/`millis`, a timetable as its columns plus its row
/// times (named as the time dimension, datetime64/timedelta64 in ms, or ns when a time has
/// a fraction of a millisecond; regular times computed) equal to mat-io's to the nanosecond.
/// Dictionaries and user objects: `matlab_dictionaries_and_user_objects_convert_as_mat_io_reads_them`.
#[test]
fn matlab_objects_convert_as_mat_io_reads_them() {
    let dir = tempdir();
    let mut args = Vec::new();
    for version in ["v73", "v7"] {
        for stem in ["maps", "enum", "time", "tables", "dynamic"] {
            let src = matlab_file(&format!("test_{stem}_{version}.mat"));
            let dst = dir.path().join(format!("{stem}_{version}.npz"));
            let summary = convert_to(&src, None, &dst);
            // Only the class of user objects (carried as their properties) is left out.
            for l in &summary.left_out {
                assert_eq!(
                    l.what,
                    sciio::plan::Item::Attribute("MATLAB_class".into()),
                    "{}: {l:?}",
                    src.display()
                );
            }
            args.push(src.to_str().unwrap().to_string());
            args.push(dst.to_str().unwrap().to_string());
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_python(
        r#"
import sys, warnings, numpy as np, pandas as pd, matio
from matio.utils.matclass import MatlabContainerMap, MatlabEnumerationArray
warnings.simplefilter("ignore")
checked = 0
paths = sys.argv[1:]
for src, npz in zip(paths[::2], paths[1::2]):
    ref = matio.load_from_mat(src)
    z = np.load(npz)
    for var, v in ref.items():
        if isinstance(v, MatlabContainerMap):
            keys = [k for k in z.files if k.startswith(var + '/keys/')]
            assert len(keys) == len(v), (src, var, keys)
            for i, (k, x) in enumerate(v.items()):
                got_k = z[f'{var}/keys/{i}']
                assert (str(got_k) == k) if isinstance(k, str) else float(got_k.ravel()[0]) == k, (var, got_k, k)
                got_v = z[f'{var}/values/{i}']
                assert np.array_equal(got_v.ravel(), np.asarray(x).ravel()), (var, got_v, x)
            checked += 1
        elif isinstance(v, MatlabEnumerationArray):
            want = np.array([m.name for m in np.asarray(v).ravel(order='F')]).reshape(v.shape, order='F')
            assert np.array_equal(z[var], want), (src, var, z[var], want)
            checked += 1
        elif isinstance(v, np.ndarray) and v.dtype.names == ('months', 'days', 'millis'):
            for f in v.dtype.names:
                assert np.array_equal(z[f'{var}/{f}'], v[f].astype(np.int64).astype(float)), (src, var, f)
            checked += 1
        elif isinstance(v, pd.DataFrame) and v.index.dtype.kind in 'mM':
            kind = 'datetime64[ns]' if v.index.dtype.kind == 'M' else 'timedelta64[ns]'
            times = z[f'{var}/{v.index.name}'].ravel()
            # ms, or ns when some time has a fraction of a millisecond (10 kHz sampling).
            assert times.dtype.kind == v.index.dtype.kind, (var, times.dtype)
            assert np.array_equal(times.astype(kind), np.asarray(v.index.values).astype(kind)), (src, var, times, v.index)
            for c in v.columns:
                base = c.rsplit('_', 1)[0] if f'{var}/{c}' not in z.files else c
                assert f'{var}/{base}' in z.files, (var, c, z.files)
            checked += 1
print(checked)
"#,
        &args,
    );
    // 4 maps, 3 enumerations, 8 calendarDurations, 11 timetables, in each version.
    assert_eq!(out.trim(), "52", "{out}");
}

/// MATLAB's `missing` as a variable too (the MATLAB-written mat73_testfile1.mat has one only
/// inside a struct: sciio-cli's `matlab_missing_object_in_a_struct_lists_prints_and_converts_as_nan`;
/// this one is built in MATLAB's object layout by python/mat_mcos_fixtures.py): a `missing` inside a struct and one
/// as a variable read as NaN (a 1x1 double missing value) next to their siblings; mat-io reads
/// the same objects as class `missing`.
#[test]
fn missing_objects_are_nan_and_never_stop_a_struct() {
    let dir = tempdir();
    let path = dir.path().join("missing.mat");
    let python_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python");
    run_python(
        r#"
import sys
sys.path.insert(0, sys.argv[2])
from mat_mcos_fixtures import MatFile, Objects, double, struct_
mat = MatFile(sys.argv[1])
o = Objects(mat)
a = o.obj("missing", [])
b = o.obj("missing", [])
struct_([("m", o.item("missing", [a])), ("x", double([[2.0]]))])(mat.f, "s")
o.variable(mat.f, "m", "missing", [b])
o.finish()
mat.close()
"#,
        &[path.to_str().unwrap(), python_dir.to_str().unwrap()],
    );
    let npz = dir.path().join("missing.npz");
    let summary = convert_to(&path, None, &npz);
    assert!(summary.left_out.is_empty(), "{:?}", summary.left_out);
    let out = run_python(
        r#"
import sys, warnings, numpy as np, matio
warnings.simplefilter("ignore")
ref = matio.load_from_mat(sys.argv[1])
assert ref['m'].classname == 'missing', ref['m']
assert ref['s'][0, 0]['m'].classname == 'missing'
z = np.load(sys.argv[2])
assert z['s/m'].dtype == np.float64 and z['s/m'].shape == (1, 1) and np.isnan(z['s/m']).all()
assert np.isnan(z['m']).all()
assert float(z['s/x'].ravel()[0]) == float(np.asarray(ref['s'][0, 0]['x']).ravel()[0]) == 2.0
print('ok')
"#,
        &[path.to_str().unwrap(), npz.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "ok");
}

/// Compares mat-io's value of each MATLAB object (dictionary, user objects) with the npz
/// members sciio wrote under its name; prints the number of leaves compared.
const SAME_AS_MAT_IO: &str = r#"
import sys, warnings, numpy as np, matio
from matio.utils.matclass import MatlabOpaque
warnings.simplefilter("ignore")

def same(z, p, v):
    if isinstance(v, MatlabOpaque) and v.classname == 'dictionary':
        # mat-io 1.0.2 keeps property `data`: Key and Value (or Unconfigured).
        data = v.properties['data']
        if 'Key' not in data.dtype.names:
            assert not any(f.startswith(p + '/') for f in z.files), p
            return 1
        return same(z, p + '/keys', data[0, 0]['Key']) + same(z, p + '/values', data[0, 0]['Value'])
    if isinstance(v, MatlabOpaque):
        n = 0
        for k, x in (v.properties or {}).items():
            if k.startswith('__dynamic_property__'):
                meta = x.properties
                k, x = str(np.asarray(meta['DynamicName_']).ravel()[0]), meta['DynamicValue_']
            n += same(z, f'{p}/{k}', x)
        return n
    v = np.asarray(v)
    if v.dtype.names:
        assert v.size == 1, p
        return sum(same(z, f'{p}/{f}', v.ravel()[0][f]) for f in v.dtype.names)
    if v.dtype == object:
        return sum(same(z, f'{p}/{i}', x) for i, x in enumerate(v.ravel(order='F')))
    got = z[p]
    if v.dtype.kind in 'TU':
        want = np.array([str(x) for x in v.ravel()]).reshape(v.shape)
        if v.dtype.kind == 'U' and want.size == 1:
            assert str(np.squeeze(got)) == str(want.ravel()[0]), (p, got, v)
        else:
            assert got.shape == want.shape and np.array_equal(got, want), (p, got, v)
        return 1
    assert got.size == v.size and np.array_equal(np.squeeze(got), np.squeeze(v)), (p, got, v)
    return 1

checked = 0
paths = sys.argv[1:]
for src, npz in zip(paths[::2], paths[1::2]):
    ref = matio.load_from_mat(src)
    z = np.load(npz)
    for var, v in ref.items():
        if isinstance(v, MatlabOpaque):
            checked += same(z, var, v)
print(checked)
"#;

/// MATLAB `dictionary` objects (R2022b+) convert as their `keys` and `values` (one array each,
/// string keys as `U` arrays, cells as their items; an unconfigured dictionary holds neither)
/// and a scalar object of any other class as a group of its properties (dynamic ones under
/// their name), its class reported as the attribute `MATLAB_class` npz cannot hold — all equal
/// to what mat-io reads from the same MATLAB-written files. An array of user objects stays
/// left out. To .mat they become structs (mat73 reads the properties back), their class
/// reported as not written.
#[test]
fn matlab_dictionaries_and_user_objects_convert_as_mat_io_reads_them() {
    let dir = tempdir();
    let mut args = Vec::new();
    for stem in [
        "maps_v73",
        "maps_v7",
        "dynamic_v73",
        "dynamic_v7",
        "user_defined_v73",
    ] {
        let src = matlab_file(&format!("test_{stem}.mat"));
        let dst = dir.path().join(format!("{stem}.npz"));
        let summary = convert_to(&src, None, &dst);
        for l in &summary.left_out {
            match &l.what {
                sciio::plan::Item::Attribute(a) => assert_eq!(a, "MATLAB_class", "{l:?}"),
                other => assert_eq!(
                    (
                        l.path.as_str(),
                        format!("{other:?}").contains("TestClasses.BasicClass")
                    ),
                    ("/obj_array", true),
                    "{stem}: {l:?}"
                ),
            }
        }
        args.push(src.to_str().unwrap().to_string());
        args.push(dst.to_str().unwrap().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_python(SAME_AS_MAT_IO, &args);
    // 6 dictionaries x 2 versions (22 leaves), the dynamic objects and the user objects.
    assert_eq!(out.trim(), "51", "{out}");

    let mat = dir.path().join("user_defined.mat");
    let summary = convert_to(&matlab_file("test_user_defined_v73.mat"), None, &mat);
    let classes: Vec<String> = summary
        .left_out
        .iter()
        .filter(|l| l.what == sciio::plan::Item::Attribute("MATLAB_class".into()))
        .map(|l| format!("{} {}", l.path, l.reason))
        .collect();
    assert!(
        classes
            .iter()
            .any(|c| c.starts_with("/obj_with_vals class TestClasses.BasicClass not written")),
        "{classes:?}"
    );
    let out = run_python(
        r#"
import sys, mat73
d = mat73.loadmat(sys.argv[1])
assert float(d['obj_with_vals']['a']) == 10.0, d
assert float(d['obj_with_nested_props']['c']['InnerProp']['a']) == 2.0, d
assert d['obj_with_nested_props']['a']['b'] == 'Obj1', d
assert float(d['obj_with_default_val']['b']) == 10.0, d
print(sorted(d))
"#,
        &[mat.to_str().unwrap()],
    );
    assert_eq!(
        out.trim(),
        "['obj_handle_1', 'obj_handle_2', 'obj_no_vals', 'obj_with_default_val', 'obj_with_nested_props', 'obj_with_vals']"
    );
}
