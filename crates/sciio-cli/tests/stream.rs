//! Edges of the streaming conversions (crates/sciio/src/stream.rs), checked with the Python
//! tools: what does not stream falls back to reading whole and gives the same file as before.

mod common;

use common::{ok, s};

#[test]
fn parquet_whose_integer_column_gets_nulls_late_converts_with_one_mask_for_all_rows() {
    let dir = sciio_testkit::tempdir();
    let src = dir.path().join("late.parquet");
    sciio_testkit::run_python(
        "
import sys, pyarrow as pa, pyarrow.parquet as pq
n = 200_000
vals = list(range(n)); vals[150_000] = None
t = pa.table({'k': pa.array(vals, pa.int64()), 's': [('v%d' % (i % 77)) for i in range(n)]})
pq.write_table(t, sys.argv[1], row_group_size=50_000)
",
        &[s(&src)],
    );
    let out = dir.path().join("late.h5");
    ok(&["convert", s(&src), s(&out), "--store-format", "pytables"]);
    sciio_testkit::run_python(
        "
import sys, numpy as np, pandas as pd, tables
df = pd.read_parquet(sys.argv[1])
with tables.open_file(sys.argv[2]) as f:
    t = f.root.late.read()
# A nullable integer column is its values plus a mask (issue 16's mapping into numpy
# formats), the same for every row whichever batch holds the missing value.
assert t['k'].dtype == np.int64 and t['k.mask'].dtype == bool, t.dtype
assert np.array_equal(t['k.mask'], df['k'].isna().to_numpy())
assert np.array_equal(t['k'][~t['k.mask']], df['k'].dropna().to_numpy())
assert [v.decode() for v in t['s']] == list(df['s'])
assert list(t['index']) == list(range(len(df)))
",
        &[s(&src), s(&out)],
    );
}

#[test]
fn arrays_without_bytes_per_row_and_fortran_arrays_convert_whole() {
    let dir = sciio_testkit::tempdir();
    let empty = dir.path().join("e.npy");
    let fortran = dir.path().join("f.npy");
    sciio_testkit::run_python(
        "
import sys, numpy as np
np.save(sys.argv[1], np.zeros((5, 0)))
np.save(sys.argv[2], np.asfortranarray(np.arange(12.0).reshape(3, 4)))
",
        &[s(&empty), s(&fortran)],
    );
    for (src, name) in [(&empty, "e"), (&fortran, "f")] {
        let h5 = dir.path().join(format!("{name}.h5"));
        let pq = dir.path().join(format!("{name}.parquet"));
        ok(&["convert", s(src), s(&h5)]);
        if name == "e" {
            // Cells of no values have no Parquet column (refused, as before streaming).
            let out = common::sciio(&["convert", s(src), s(&pq)]);
            assert_eq!(out.status.code(), Some(1));
            std::fs::write(&pq, b"").unwrap();
        } else {
            ok(&["convert", s(src), s(&pq)]);
        }
        sciio_testkit::run_python(
            "
import sys, numpy as np, tables, pyarrow.parquet as pq
a = np.load(sys.argv[1])
with tables.open_file(sys.argv[2]) as f:
    b = f.get_node('/' + sys.argv[4]).read()
assert b.shape == a.shape and np.array_equal(a, b), (a, b)
if a.size:
    p = pq.read_table(sys.argv[3])
    assert p.num_rows == a.shape[0], p.num_rows
    assert np.array_equal(np.stack(p.column(sys.argv[4]).to_numpy(zero_copy_only=False)), a)
",
            &[s(src), s(&h5), s(&pq), name],
        );
    }
}

/// The streamed Parquet -> Table path maps missing values as the whole-frame path does:
/// integers keep their type with a mask, text with missing values is left out and said so
/// (it used to become float64 with NaN and empty strings, silently).
#[test]
fn parquet_with_missing_values_from_the_first_batch_streams_with_masks_and_says_what_it_left_out() {
    let dir = sciio_testkit::tempdir();
    let src = dir.path().join("gaps.parquet");
    sciio_testkit::run_python(
        "
import sys, pyarrow as pa, pyarrow.parquet as pq
n = 120_000
t = pa.table({'k': pa.array([None if i % 7 == 0 else i for i in range(n)], pa.int32()),
              'b': pa.array([None if i % 5 == 0 else i % 2 == 0 for i in range(n)], pa.bool_()),
              's': pa.array([None if i % 3 == 0 else 'v%d' % i for i in range(n)]),
              'f': pa.array([i / 2 for i in range(n)])})
pq.write_table(t, sys.argv[1], row_group_size=30_000)
",
        &[s(&src)],
    );
    let out = dir.path().join("gaps.h5");
    let run = common::sciio(&["convert", s(&src), s(&out), "--store-format", "pytables"]);
    assert!(run.status.success(), "{run:?}");
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(
        said.contains("left out: column 's'") && said.contains("missing"),
        "{said}"
    );
    sciio_testkit::run_python(
        "
import sys, numpy as np, pandas as pd, tables
df = pd.read_parquet(sys.argv[1])
with tables.open_file(sys.argv[2]) as f:
    t = f.root.gaps.read()
assert t.dtype.names == ('index', 'k', 'k.mask', 'b', 'b.mask', 'f'), t.dtype
assert t['k'].dtype == np.int32 and t['b'].dtype == bool, t.dtype
for c in ['k', 'b']:
    assert np.array_equal(t[c + '.mask'], df[c].isna().to_numpy()), c
    assert np.array_equal(t[c][~t[c + '.mask']], df[c].dropna().to_numpy().astype(t[c].dtype)), c
assert np.array_equal(t['f'], df['f'].to_numpy())
",
        &[s(&src), s(&out)],
    );
}
#[test]
fn large_npy_into_an_uncompressed_carray_is_copied_file_to_file_and_reads_back_in_pytables() {
    // Above 64 MiB an uncompressed array becomes a CArray; its chunks are allocated up front
    // and the .npy bytes copied into them (the last chunk partial and padded).
    let dir = sciio_testkit::tempdir();
    let le = dir.path().join("le.npy");
    let be = dir.path().join("be.npy");
    sciio_testkit::run_python(
        "
import sys, numpy as np
np.save(sys.argv[1], np.arange(70_001 * 128, dtype='<f8').reshape(70_001, 128) * 0.5)
np.save(sys.argv[2], (np.arange(140_003 * 128) % 100_003).astype('>i4').reshape(140_003, 128))
",
        &[s(&le), s(&be)],
    );
    for (src, name) in [(&le, "le"), (&be, "be")] {
        let h5 = dir.path().join(format!("{name}.h5"));
        ok(&["convert", s(src), s(&h5)]);
        sciio_testkit::run_python(
            "
import sys, numpy as np, tables, h5py
a = np.load(sys.argv[1], mmap_mode='r')
with tables.open_file(sys.argv[2]) as f:
    x = f.get_node('/' + sys.argv[3])
    assert type(x).__name__ == 'CArray', type(x)
    # PyTables reads in native order; the file keeps the source's.
    assert x.dtype == a.dtype.newbyteorder('=') and x.shape == a.shape, (x.dtype, x.shape)
    assert x.byteorder == ('big' if sys.argv[3] == 'be' else 'little'), x.byteorder
    assert x.filters.complevel == 0
    # PyTables' own chunk shape for this array.
    with tables.open_file(sys.argv[2] + '.pt.h5', 'w') as g:
        want = g.create_carray('/', 'x', tables.Atom.from_dtype(a.dtype), shape=a.shape).chunkshape
    assert x.chunkshape == want, (x.chunkshape, want)
    assert np.array_equal(x[:], a)
    assert np.array_equal(x[-3:], a[-3:])
with h5py.File(sys.argv[2]) as f:
    d = f[sys.argv[3]]
    assert d.id.get_create_plist().get_alloc_time() == h5py.h5d.ALLOC_TIME_EARLY
    assert np.array_equal(d[-1], a[-1])
",
            &[s(src), s(&h5), name],
        );
    }
}

#[test]
fn structured_npy_into_an_uncompressed_table_is_copied_file_to_file_and_reads_back_in_pytables() {
    // The Table's chunks are allocated as it grows and the records copied into them; the
    // last chunk is partial.
    let dir = sciio_testkit::tempdir();
    let src = dir.path().join("rec.npy");
    sciio_testkit::run_python(
        "
import sys, numpy as np
n = 100_003
dt = np.dtype([('i', '<i8'), ('x', '<f8'), ('y', '<f4'), ('s', 'S12'), ('b', '?'), ('v', '<f4', (3,))])
a = np.zeros(n, dt)
a['i'] = np.arange(n); a['x'] = np.arange(n) * 0.5; a['y'] = np.arange(n) % 1000
a['s'] = np.char.add(b'row', (np.arange(n) % 997).astype('S9')); a['b'] = np.arange(n) % 3 == 0
a['v'] = np.arange(3 * n, dtype='<f4').reshape(n, 3)
np.save(sys.argv[1], a)
",
        &[s(&src)],
    );
    let h5 = dir.path().join("rec.h5");
    ok(&["convert", s(&src), s(&h5)]);
    sciio_testkit::run_python(
        "
import sys, numpy as np, tables, h5py
a = np.load(sys.argv[1])
with tables.open_file(sys.argv[2]) as f:
    t = f.root.rec
    assert type(t).__name__ == 'Table' and t.nrows == len(a), (type(t), t.nrows)
    assert t.filters.complevel == 0
    with tables.open_file(sys.argv[2] + '.pt.h5', 'w') as g:
        want = g.create_table('/', 't', a.dtype, expectedrows=len(a)).chunkshape
    assert t.chunkshape == want, (t.chunkshape, want)
    r = t.read()
    for name in a.dtype.names:
        assert np.array_equal(r[name], a[name]), name
    assert np.array_equal(t.read(len(a) - 2, len(a))['i'], a['i'][-2:])
with h5py.File(sys.argv[2]) as f:
    assert f['rec'].id.get_create_plist().get_alloc_time() == h5py.h5d.ALLOC_TIME_EARLY
",
        &[s(&src), s(&h5)],
    );
}

#[test]
fn hdf5_arrays_whose_rows_are_over_a_block_convert_to_npy_and_mat_as_h5py_reads_them() {
    // Rows of 9-32 MiB are read as hyperslabs of a block each (sub-rows along the next axes):
    // chunked and contiguous, compressed and not, chunks aligned with the pieces or not.
    let dir = sciio_testkit::tempdir();
    let d = dir.path();
    sciio_testkit::run_python(
        "
import sys, numpy as np, tables, h5py
d = sys.argv[1]
cube = (np.arange(3 * 2048 * 2048, dtype=np.float64) * 0.25).reshape(3, 2048, 2048)
with tables.open_file(d + '/carray.h5', 'w') as f:
    f.create_carray('/', 'x', obj=cube, filters=tables.Filters(complevel=1, complib='zlib', shuffle=True))
with tables.open_file(d + '/earray.h5', 'w') as f:
    e = f.create_earray('/', 'x', tables.Float32Atom(), shape=(0, 1200, 2000))
    e.append((np.arange(2 * 1200 * 2000) % 9973).astype(np.float32).reshape(2, 1200, 2000) - 7.5)
with h5py.File(d + '/contiguous.h5', 'w') as f:
    f.create_dataset('x', data=cube[:, ::-1])
with h5py.File(d + '/be.h5', 'w') as f:
    f.create_dataset('x', data=(np.arange(2 * 2_200_000) % 100_003 - 50_000).astype('>i4').reshape(2, -1),
                     chunks=(1, 300_001), compression='gzip', compression_opts=1)
with h5py.File(d + '/thick.h5', 'w') as f:
    f.create_dataset('x', data=(np.arange(3 * 1100 * 2048) % 65_521).astype('<f4').reshape(3, 1100, 2048),
                     chunks=(2, 100, 2048), compression='gzip', compression_opts=1)
",
        &[s(d)],
    );
    for name in ["carray", "earray", "contiguous", "be", "thick"] {
        let src = format!("{}/{name}.h5:/x", s(d));
        let npy = d.join(format!("{name}.npy"));
        let mat = d.join(format!("{name}.mat"));
        ok(&["convert", &src, s(&npy)]);
        ok(&["convert", &src, s(&mat)]);
        sciio_testkit::run_python(
            "
import io, sys, numpy as np, h5py
src, npy, mat = sys.argv[1:4]
with h5py.File(src, 'r') as f:
    want = f['x'][()]
# Numbers come in native byte order, as PyTables reads them.
want = want.astype(want.dtype.newbyteorder('='))
saved = io.BytesIO()
np.save(saved, want)
with open(npy, 'rb') as f:
    assert f.read() == saved.getvalue(), src
with h5py.File(mat, 'r') as f:
    got = f['x'][()].T
assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
assert np.array_equal(got, want), src
",
            &[&format!("{}/{name}.h5", s(d)), s(&npy), s(&mat)],
        );
        std::fs::remove_file(&npy).unwrap();
        std::fs::remove_file(&mat).unwrap();
    }
}

#[test]
fn arrays_whose_rows_are_over_a_block_convert_to_h5_in_pieces_of_rows() {
    // A MATLAB 2-by-4M double (HDF5 (4M, 2)): its C-order rows are 32 MiB, written into the
    // .h5 in pieces of a row, each gathered from the transposed columns. So are a MATLAB
    // 3-by-2.4M int32, a C-order .npy and a PyTables CArray of wide rows, compressed or not.
    let dir = sciio_testkit::tempdir();
    let d = dir.path();
    sciio_testkit::run_python(
        "
import sys, numpy as np, h5py, tables
d = sys.argv[1]
def mat73(path, x, cls):
    # MATLAB's x: HDF5 holds its transpose (h5py, as hdf5storage lays it out).
    with h5py.File(path, 'w', userblock_size=512) as f:
        v = f.create_dataset('x', data=x.T, chunks=True)
        v.attrs['MATLAB_class'] = np.bytes_(cls)
    text = b'MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: stream.rs HDF5 schema 1.00 .'
    with open(path, 'r+b') as f:
        f.write(text.ljust(116) + bytes(8) + b'\\x00\\x02' + b'IM')
mat73(d + '/wide.mat', (np.arange(2 * 4 * 2**20, dtype=np.float64) * 0.5).reshape(2, -1), 'double')
mat73(d + '/three.mat', (np.arange(3 * 2_400_000) % 65_537).astype(np.int32).reshape(3, -1), 'int32')
np.save(d + '/wide.npy', (np.arange(2 * 1500 * 1000, dtype=np.float64) / 7).reshape(2, 1500, 1000))
with tables.open_file(d + '/wide.h5', 'w') as f:
    f.create_carray('/', 'x', obj=(np.arange(3 * 2100 * 1000) % 251).astype(np.float32).reshape(3, 2100, 1000),
                    filters=tables.Filters(complevel=1, complib='blosc:lz4'))
",
        &[s(d)],
    );
    let check = "
import sys, numpy as np, h5py, tables
src, out = sys.argv[1], sys.argv[2]
if src.endswith('.mat'):
    with h5py.File(src, 'r') as f:
        want = f['x'][()].T
elif src.endswith('.npy'):
    want = np.load(src)
else:
    with tables.open_file(src) as f:
        want = f.root.x.read()
with tables.open_file(out) as f:
    leaves = list(f.walk_nodes('/', 'Leaf'))
    assert len(leaves) == 1, leaves
    x = leaves[0]
    assert x._c_classid in ('CARRAY', 'ARRAY'), x._c_classid
    got = x.read()
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype)
assert np.array_equal(got, want), src
";
    let cases: [(&str, &[&str]); 6] = [
        ("wide.mat:x", &[]),
        ("wide.mat:x", &["--compress", "zlib:1"]),
        ("three.mat:x", &["--compress", "blosc:lz4:5"]),
        ("wide.npy", &["--compress", "zlib:1"]),
        ("wide.h5:/x", &[]),
        ("wide.h5:/x", &["--compress", "zlib:1"]),
    ];
    for (src, extra) in cases {
        let out = d.join("out.h5");
        let src_arg = format!("{}/{src}", s(d));
        let mut args = vec!["convert", src_arg.as_str(), s(&out)];
        args.extend_from_slice(extra);
        ok(&args);
        let file = src_arg.split(':').next().unwrap();
        sciio_testkit::run_python(check, &[file, s(&out)]);
        std::fs::remove_file(&out).unwrap();
    }
}

#[test]
fn an_array_row_over_what_a_parquet_list_holds_is_refused_before_writing_with_why() {
    // A row is one fixed-size list value of the column; 2^31 values along an axis are more
    // than Arrow's lists hold (pyarrow cannot make that type either). The .npy is sparse.
    let dir = sciio_testkit::tempdir();
    let src = dir.path().join("long.npy");
    sciio_testkit::run_python(
        "
import sys, numpy as np, pyarrow as pa
a = np.lib.format.open_memmap(sys.argv[1], mode='w+', dtype='i1', shape=(1, 2**31))
del a
try:
    pa.list_(pa.int8(), 2**31)
except (OverflowError, ValueError, pa.ArrowInvalid):
    pass
else:
    raise SystemExit('pyarrow made a fixed-size list of 2^31 values')
",
        &[s(&src)],
    );
    let out = dir.path().join("long.parquet");
    let run = common::sciio(&["convert", s(&src), s(&out)]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{err}");
    assert!(err.contains("long.npy"), "{err}");
    assert!(err.contains("2147483648 values"), "{err}");
    assert!(err.contains("fixed-size list holds"), "{err}");
    assert!(!out.exists());
}

#[test]
fn mat_nd_arrays_whose_rows_are_over_a_block_convert_to_h5_and_npy_as_the_tools_read_them() {
    // MATLAB N-d arrays whose C-order rows are over a block (8 MiB): a 2-by-1100-by-1100
    // double (rows of 9.7 MB, cut along their first axis), a 2-by-2-by-600000 double (cut
    // along the last axis, the first fixed) and a 3-by-2-by-1500-by-1500 int16, saved by
    // hdf5storage (v7.3) and by scipy.io (v7, zlib): each row goes into the .h5 in pieces
    // gathered from the column-major data; a 9-by-1100-by-1000 double, more rows than are
    // read from the stored columns, goes through a copy transposed into rows. The .h5 and
    // the .npy hold what the tool that wrote the file reads back.
    let dir = sciio_testkit::tempdir();
    let d = dir.path();
    sciio_testkit::run_python(
        "
import sys, numpy as np, hdf5storage, scipy.io
d = sys.argv[1]
arrays = {
    'cube': (np.arange(2 * 1100 * 1100, dtype=np.float64) * 0.25 - 3).reshape(2, 1100, 1100),
    'long': (np.arange(2 * 2 * 600_000, dtype=np.float64) / 3).reshape(2, 2, 600_000),
    'four': (np.arange(3 * 2 * 1500 * 1500) % 30_011 - 15_000).astype(np.int16).reshape(3, 2, 1500, 1500),
    # More rows than are read from the stored columns: transposed into rows as copied.
    'many': (np.arange(9 * 1100 * 1000, dtype=np.float64) * 0.125 + 1).reshape(9, 1100, 1000),
}
for name, x in arrays.items():
    hdf5storage.savemat(d + '/' + name + '73.mat', {'x': x}, format='7.3', matlab_compatible=True)
    scipy.io.savemat(d + '/' + name + '7.mat', {'x': x}, do_compression=True)
",
        &[s(d)],
    );
    let check = "
import sys, numpy as np, hdf5storage, scipy.io, tables
src, out = sys.argv[1], sys.argv[2]
if src.endswith('73.mat'):
    want = hdf5storage.loadmat(src)['x']
else:
    want = scipy.io.loadmat(src)['x']
if out.endswith('.npy'):
    got = np.load(out)
else:
    with tables.open_file(out) as f:
        leaves = list(f.walk_nodes('/', 'Leaf'))
        assert len(leaves) == 1, leaves
        assert leaves[0]._c_classid in ('CARRAY', 'ARRAY'), leaves[0]._c_classid
        got = leaves[0].read()
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
assert np.array_equal(got, want), src
";
    let names = [
        "cube73", "cube7", "long73", "long7", "four73", "four7", "many73", "many7",
    ];
    for name in names {
        for (out, extra) in [
            ("out.h5", &[][..]),
            ("out.h5", &["--compress", "zlib:1"][..]),
            ("out.npy", &[][..]),
        ] {
            if (out == "out.npy" || !extra.is_empty()) && name.starts_with("many")
                || out == "out.npy" && name.starts_with("four")
            {
                continue;
            }
            let out = d.join(out);
            let src = format!("{}/{name}.mat:x", s(d));
            let mut args = vec!["convert", src.as_str(), s(&out)];
            args.extend_from_slice(extra);
            ok(&args);
            sciio_testkit::run_python(check, &[&format!("{}/{name}.mat", s(d)), s(&out)]);
            std::fs::remove_file(&out).unwrap();
        }
    }
}
