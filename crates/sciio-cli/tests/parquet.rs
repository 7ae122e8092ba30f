//! `sciio` on Parquet files pandas writes (the `parquet` feature, on by default): ls, cat and
//! the conversions parquet → parquet, parquet → npz, structured npy / PyTables Table → parquet,
//! each checked by pandas, numpy, pyarrow or PyTables themselves.
#![cfg(feature = "parquet")]

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, tempdir};

/// Runs a refused command: exit status 1, one line on stderr, returned.
fn refused(args: &[&str]) -> String {
    let out = sciio(args);
    assert_eq!(out.status.code(), Some(1), "sciio {args:?}: {out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("sciio: error: "), "{err}");
    err
}

/// Frames covering the pandas metadata a copy must keep: a RangeIndex with a step and a name,
/// a named string index, a tz-aware datetime column, a categorical, masked ints, strings.
const MAKE_FRAMES: &str = r#"
import sys, pandas as pd, numpy as np
n = 7
cols = {
    'when': pd.date_range('2024-03-30', periods=n, freq='7h', tz='Europe/Paris'),
    # categories neither sorted nor in order of appearance, one unused: kept as they are
    'kind': pd.Categorical(['a', 'b', 'a', 'c', 'b', 'a', 'c'], categories=['c', 'unused', 'a', 'b'], ordered=True),
    'temp': np.linspace(-1.5, 3.0, n),
    'count': pd.array([1, None, 3, 4, None, 6, 7], dtype='Int64'),
    'city': ['Oslo', 'Rome', None, 'Lima', 'Pune', 'Kyiv', 'Nuuk'],
}
pd.DataFrame(cols, index=pd.RangeIndex(10, 10 + 3 * n, 3, name='r')).to_parquet(sys.argv[1])
pd.DataFrame(cols, index=pd.Index(list('qrstuvw'), name='key')).to_parquet(sys.argv[2])
"#;

const CHECK_COPY: &str = r#"
import sys, pandas as pd, pyarrow.parquet as pq
a, b = pd.read_parquet(sys.argv[1]), pd.read_parquet(sys.argv[2])
assert b.equals(a), (a, b)
assert type(b.index) is type(a.index), (type(a.index), type(b.index))
assert b.index.name == a.index.name and list(b.dtypes) == list(a.dtypes), (a.dtypes, b.dtypes)
if isinstance(a.index, pd.RangeIndex):
    assert (b.index.start, b.index.stop, b.index.step) == (10, 31, 3), b.index
assert b['kind'].cat.ordered and list(b['kind'].cat.categories) == ['c', 'unused', 'a', 'b']
assert str(b['when'].dt.tz) == 'Europe/Paris'
codecs = {pq.ParquetFile(sys.argv[2]).metadata.row_group(0).column(i).compression
          for i in range(pq.ParquetFile(sys.argv[2]).metadata.num_columns)}
print(','.join(sorted(codecs)))
"#;

#[test]
fn parquet_to_parquet_keeps_the_pandas_frame_and_takes_compress() {
    let dir = tempdir();
    let (ranged, keyed) = (dir.path().join("r.parquet"), dir.path().join("k.parquet"));
    run_python(MAKE_FRAMES, &[s(&ranged), s(&keyed)]);
    for (src, compress, codec) in [(&ranged, "zstd:3", "ZSTD"), (&keyed, "gzip", "GZIP")] {
        let dst = dir.path().join(format!("copy-{codec}.parquet"));
        let said = ok(&["convert", s(src), s(&dst), "--compress", compress]);
        assert!(said.contains("as parquet"), "{said}");
        let codecs = run_python(CHECK_COPY, &[s(src), s(&dst)]);
        assert_eq!(codecs.trim(), codec);
    }
    // Without --compress the copy is snappy, pandas' default.
    let dst = dir.path().join("plain.parquet");
    ok(&["convert", s(&ranged), s(&dst)]);
    assert_eq!(
        run_python(CHECK_COPY, &[s(&ranged), s(&dst)]).trim(),
        "SNAPPY"
    );
    // A codec Parquet does not have is refused by name, and nothing is written.
    let bad = dir.path().join("bad.parquet");
    let err = refused(&["convert", s(&ranged), s(&bad), "--compress", "blosc2:lz4:5"]);
    assert!(err.contains("blosc2"), "{err}");
    assert!(!bad.exists());
}

#[test]
fn parquet_to_npz_stores_one_array_per_column_and_the_index() {
    let dir = tempdir();
    let pq = dir.path().join("frame.parquet");
    let npz = dir.path().join("frame.npz");
    run_python(
        r#"
import sys, pandas as pd, numpy as np
rng = np.random.default_rng(5)
df = pd.DataFrame({'x': rng.normal(size=50), 'n': rng.integers(-9, 9, 50, dtype=np.int16),
                   'ok': rng.random(50) > 0.5, 'f32': rng.random(50).astype(np.float32)},
                  index=pd.Index(np.arange(100, 150, dtype=np.int64), name='id'))
df.to_parquet(sys.argv[1])
"#,
        &[s(&pq)],
    );
    let said = ok(&["convert", s(&pq), s(&npz), "--compress", "deflate"]);
    assert!(said.contains("5 arrays"), "{said}");
    run_python(
        r#"
import sys, pandas as pd, numpy as np, zipfile
df = pd.read_parquet(sys.argv[1])
z = np.load(sys.argv[2], allow_pickle=False)
assert sorted(z.files) == ['f32', 'id', 'n', 'ok', 'x'], z.files
for c in df.columns:
    assert z[c].dtype == df[c].dtype and np.array_equal(z[c], df[c].to_numpy()), c
assert np.array_equal(z['id'], df.index.to_numpy())
assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in zipfile.ZipFile(sys.argv[2]).infolist())
"#,
        &[s(&pq), s(&npz)],
    );
}

#[test]
fn structured_npy_becomes_a_frame_pandas_reads() {
    let dir = tempdir();
    let npy = dir.path().join("rec.npy");
    let pq = dir.path().join("rec.parquet");
    run_python(
        r#"
import sys, numpy as np
dt = np.dtype([('x', '<f8'), ('n', '<i4'), ('pos', [('a', '<u2'), ('b', '?')]), ('t', 'M8[ms]')])
a = np.zeros(9, dt)
a['x'] = np.arange(9) / 4; a['n'] = np.arange(9) - 4
a['pos']['a'] = np.arange(9) * 7; a['pos']['b'] = np.arange(9) % 2 == 0
a['t'] = np.datetime64('2020-01-01T00:00:00', 'ms') + np.arange(9) * 1500
np.save(sys.argv[1], a)
"#,
        &[s(&npy)],
    );
    let said = ok(&["convert", s(&npy), s(&pq), "--compress", "zstd"]);
    assert!(said.contains("wrote 5 columns"), "{said}");
    run_python(
        r#"
import sys, numpy as np, pandas as pd
a = np.load(sys.argv[1])
df = pd.read_parquet(sys.argv[2])
assert list(df.columns) == ['x', 'n', 'pos.a', 'pos.b', 't'], list(df.columns)
assert isinstance(df.index, pd.RangeIndex) and len(df) == 9
for c, v in [('x', a['x']), ('n', a['n']), ('pos.a', a['pos']['a']), ('pos.b', a['pos']['b'])]:
    assert df[c].dtype == v.dtype and np.array_equal(df[c].to_numpy(), v), c
assert np.array_equal(df['t'].to_numpy().astype('M8[ms]'), a['t'])
"#,
        &[s(&npy), s(&pq)],
    );
    // A plain 1-d array is one column, named after the file (the node for HDF5).
    let plain = dir.path().join("plain.npy");
    let h5 = dir.path().join("plain.h5");
    run_python(
        r#"
import sys, numpy as np, tables
np.save(sys.argv[1], np.arange(4.0))
with tables.open_file(sys.argv[2], "w") as f:
    f.create_array("/", "ticks", np.array([3, -1, 7], "i2"))
    f.create_array("/", "zero_d", np.float64(2.5))
"#,
        &[s(&plain), s(&h5)],
    );
    let dst = dir.path().join("plain.parquet");
    ok(&["convert", s(&plain), s(&dst)]);
    let ticks = dir.path().join("ticks.parquet");
    ok(&["convert", &format!("{}:/ticks", s(&h5)), s(&ticks)]);
    run_python(
        r#"
import sys, numpy as np, pyarrow.parquet as pq
for path, name, want in [(sys.argv[1], "plain", np.arange(4.0)), (sys.argv[2], "ticks", np.array([3, -1, 7], "i2"))]:
    t = pq.read_table(path)
    assert t.column_names == [name], t.column_names
    got = t.column(name).to_numpy()
    assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)
"#,
        &[s(&dst), s(&ticks)],
    );
    // A 0-d array has no rows: refused in one line, nothing written.
    let zero = dir.path().join("zero.parquet");
    let err = refused(&["convert", &format!("{}:/zero_d", s(&h5)), s(&zero)]);
    assert!(err.contains("0-d") && err.contains("zero_d"), "{err}");
    assert!(!zero.exists());
}

#[test]
fn pytables_table_becomes_a_frame_pandas_reads() {
    let dir = tempdir();
    let h5 = dir.path().join("t.h5");
    let pq = dir.path().join("t.parquet");
    run_python(
        r#"
import sys, tables as tb, numpy as np
class Row(tb.IsDescription):
    name = tb.StringCol(8, pos=0)
    energy = tb.Float64Col(pos=1)
    hits = tb.Int32Col(pos=2)
with tb.open_file(sys.argv[1], 'w') as f:
    g = f.create_group('/', 'run')
    t = f.create_table(g, 'events', Row)
    t.append([(b'e%d' % i, i * 0.25, i * i) for i in range(1000)])
"#,
        &[s(&h5)],
    );
    let src = format!("{}:/run/events", s(&h5));
    ok(&["convert", &src, s(&pq)]);
    run_python(
        r#"
import sys, tables as tb, numpy as np, pandas as pd
with tb.open_file(sys.argv[1]) as f:
    rows = f.root.run.events.read()
df = pd.read_parquet(sys.argv[2])
assert list(df.columns) == ['name', 'energy', 'hits'], list(df.columns)
assert np.array_equal(df['energy'].to_numpy(), rows['energy'])
assert np.array_equal(df['hits'].to_numpy(), rows['hits'])
assert [v if isinstance(v, bytes) else v.encode() for v in df['name']] == list(rows['name'])
"#,
        &[s(&h5), s(&pq)],
    );
}

#[test]
fn ls_and_cat_show_a_pandas_frame_and_refusals_are_one_line() {
    let dir = tempdir();
    let (ranged, keyed) = (dir.path().join("r.parquet"), dir.path().join("k.parquet"));
    run_python(MAKE_FRAMES, &[s(&ranged), s(&keyed)]);

    let text = ok(&["ls", s(&keyed)]);
    assert!(text.contains("parquet") && text.contains("frame"), "{text}");
    // The shape says rows and columns; the dtype column holds numpy dtypes only.
    assert!(
        text.contains("(7, 5)") && !text.contains("5 columns"),
        "{text}"
    );
    for want in [
        "key",
        "when",
        "datetimetz",
        "kind",
        "categorical",
        "temp",
        "float64",
    ] {
        assert!(text.contains(want), "{want} missing in:\n{text}");
    }
    let text = ok(&["ls", s(&ranged)]);
    assert!(
        text.contains("RangeIndex(start=10, stop=31, step=3"),
        "{text}"
    );

    let printed = ok(&["cat", s(&keyed)]);
    let expected = run_python(
        "import sys, pandas as pd; df = pd.read_parquet(sys.argv[1]); print('\\n'.join(map(str, [df.index[0], df['city'].iloc[3], df['temp'].iloc[6], df['kind'].iloc[3], df['when'].iloc[0], df['when'].iloc[6]])))",
        &[s(&keyed)],
    );
    for value in expected.lines() {
        assert!(printed.contains(value), "{value} missing in:\n{printed}");
    }
    assert!(printed.contains("[7 rows x 5 columns]"), "{printed}");
    // Europe/Paris instants (the first and the last above) print in local time, before and
    // after the DST change, as pandas prints them
    assert!(
        printed.contains("+01:00") && printed.contains("+02:00"),
        "{printed}"
    );

    // --json prints the frame as pandas' orient="split" (inspect.rs checks it with pandas).
    let doc = ok(&["cat", "--json", s(&keyed)]);
    assert!(
        doc.starts_with(r#"{"columns":["when","kind","temp","count","city"]"#),
        "{doc}"
    );
    // A frame into .npy is one structured array (tests/left_out.rs checks it with numpy);
    // into .mat its columns (tests/frame_mat.rs), but with --strict it is refused (the text
    // column with a missing value has no numpy type), nothing written.
    let npy = dir.path().join("x.npy");
    ok(&["convert", s(&keyed), s(&npy)]);
    assert!(npy.exists());
    let mat = dir.path().join("x.mat");
    let err = refused(&["convert", s(&keyed), s(&mat), "--strict"]);
    assert!(err.contains("city") && err.contains("--strict"), "{err}");
    assert!(!mat.exists());
    // A corrupt file: one line naming it, no panic.
    let broken = dir.path().join("broken.parquet");
    let bytes = std::fs::read(&keyed).unwrap();
    std::fs::write(&broken, &bytes[..bytes.len() / 2]).unwrap();
    let err = refused(&["ls", s(&broken)]);
    assert!(err.contains("broken.parquet"), "{err}");
}

#[test]
fn parquet_struct_columns_become_nested_records_in_npz() {
    let dir = tempdir();
    let pq = dir.path().join("structs.parquet");
    let npz = dir.path().join("structs.npz");
    run_python(
        r#"
import sys, pyarrow as pa, pyarrow.parquet as pq
pos = pa.array([{'x': i * 0.5, 'y': i - 2, 'tag': {'id': i * 3, 'ok': i % 2 == 0}} for i in range(5)])
pq.write_table(pa.table({'n': pa.array(range(5), pa.int16()), 'pos': pos}), sys.argv[1])
"#,
        &[s(&pq)],
    );
    let said = ok(&["convert", s(&pq), s(&npz)]);
    assert!(said.contains("3 arrays"), "{said}");
    run_python(
        r#"
import sys, numpy as np
z = np.load(sys.argv[1], allow_pickle=False)
p = z['pos']
assert p.dtype.names == ('x', 'y', 'tag'), p.dtype
assert p.dtype['tag'].names == ('id', 'ok'), p.dtype
assert np.array_equal(p['x'], np.arange(5) * 0.5) and np.array_equal(p['y'], np.arange(5) - 2)
assert np.array_equal(p['tag']['id'], np.arange(5) * 3)
assert np.array_equal(p['tag']['ok'], np.arange(5) % 2 == 0)
assert np.array_equal(z['n'], np.arange(5, dtype=np.int16))
"#,
        &[s(&npz)],
    );
}

/// A pandas frame → `.h5` with `--store-format pytables` (the default is a pandas HDFStore
/// key, tests/hdfstore_write.rs): one PyTables Table whose fields are the index levels then the
/// columns, text as UTF-8 byte strings, categoricals as their values; the node is the source's
/// file stem or the destination node. Columns PyTables has no type for are left out.
#[test]
fn parquet_to_h5_is_a_pytables_table_of_index_and_columns() {
    let dir = tempdir();
    let src = dir.path().join("prices.parquet");
    let dated = dir.path().join("dated.parquet");
    run_python(
        r#"
import sys, pandas as pd, numpy as np
df = pd.DataFrame({
    'i': np.arange(5, dtype='int64') * 7,
    'f': np.linspace(-1.0, 1.0, 5, dtype='float32'),
    'b': [True, False, True, True, False],
    'city': ['Oslo', 'Zürich', 'Lima', '', 'Kyiv'],
    'kind': pd.Categorical(['x', 'y', 'x', 'z', 'y'], categories=['z', 'y', 'x']),
}, index=pd.Index(['a', 'bb', 'c', 'dd', 'e'], name='key'))
df.to_parquet(sys.argv[1])
pd.DataFrame({'when': pd.date_range('2024-01-01', periods=3, freq='h')}).to_parquet(sys.argv[2])
"#,
        &[s(&src), s(&dated)],
    );
    let whole = dir.path().join("whole.h5");
    let named = dir.path().join("named.h5");
    ok(&["convert", s(&src), s(&whole), "--store-format", "pytables"]);
    ok(&[
        "convert",
        s(&src),
        &format!("{}:/g/t", s(&named)),
        "--compress",
        "shuffle,zlib:5",
        "--store-format",
        "pytables",
    ]);
    let check = r#"
import sys, tables as tb, pandas as pd, numpy as np
df = pd.read_parquet(sys.argv[1])
for path, node, complevel in [(sys.argv[2], '/prices', 0), (sys.argv[3], '/g/t', 5)]:
    with tb.open_file(path) as f:
        t = f.get_node(node)
        assert t._v_attrs.CLASS == 'TABLE', t._v_attrs.CLASS
        assert t.colnames == ['key', 'i', 'f', 'b', 'city', 'kind'], t.colnames
        assert t.filters.complevel == complevel, t.filters
        rows = t.read()
        assert [x.decode() for x in rows['key']] == list(df.index)
        assert rows['i'].dtype == np.int64 and (rows['i'] == df['i'].to_numpy()).all()
        assert rows['f'].dtype == np.float32 and (rows['f'] == df['f'].to_numpy()).all()
        assert rows['b'].dtype == np.bool_ and (rows['b'] == df['b'].to_numpy()).all()
        assert [x.decode('utf-8') for x in rows['city']] == list(df['city'])
        assert [x.decode() for x in rows['kind']] == list(df['kind'].astype(str))
print('ok')
"#;
    assert_eq!(
        run_python(check, &[s(&src), s(&whole), s(&named)]).trim(),
        "ok"
    );
    // A column PyTables has no type for is left out (listed on stderr); --strict refuses it
    // before anything is written.
    let d5 = dir.path().join("d.h5");
    let plain = ["--store-format", "pytables"];
    let err = refused(&["convert", s(&dated), s(&d5), "--strict", plain[0], plain[1]]);
    assert!(err.contains("'when'") && err.contains("PyTables"), "{err}");
    assert!(!d5.exists());
    let out = sciio(&["convert", s(&dated), s(&d5), plain[0], plain[1]]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = String::from_utf8(out.stderr).unwrap();
    // (pandas stores the datetimes in ns or us, as its version decides)
    assert!(
        said.starts_with("sciio: left out: column 'when' of / (<M8[")
            && said
                .ends_with("]; PyTables has no column type for it (.parquet and .npz hold it))\n"),
        "{said}"
    );
    let cols = run_python(
        "import sys, tables; f = tables.open_file(sys.argv[1]); print(f.root.dated.colnames)",
        &[s(&d5)],
    );
    assert_eq!(cols.trim(), "['index']");
}

/// Into numpy formats: what numpy holds maps losslessly (nullable integers and booleans as
/// values + `NAME.mask`, fixed-size binary as `S{n}`, strings as `U` when none is missing);
/// what numpy cannot hold (missing strings, decimals, lists, maps) is left out with a reason,
/// and `--strict` refuses.
#[test]
fn parquet_to_npz_masks_nullable_columns_and_leaves_out_what_numpy_cannot_hold() {
    let dir = tempdir();
    let pq = dir.path().join("nullable.parquet");
    run_python(
        r#"
import sys, decimal, pandas as pd, pyarrow as pa
df = pd.DataFrame({
    'Int64': pd.array([1, None, -(2**62)], dtype='Int64'),
    'UInt8': pd.array([None, 255, 0], dtype='UInt8'),
    'boolean': pd.array([True, None, False], dtype='boolean'),
    'full': pd.array([1, 2, 3], dtype='Int32'),
    's_none': ['a', None, 'c'],
    's_full': ['a', 'bb', 'é'],
    'dec': [decimal.Decimal('1.5'), None, decimal.Decimal('2.25')],
    'lst': [[1, 2], [], None],
    'cat_int': pd.Categorical([7, None, 9]),
})
t = pa.Table.from_pandas(df, preserve_index=False)
t = t.append_column('fsb', pa.array([b'ab', None, b'\x00z'], pa.binary(2)))
t = t.append_column('fsb_full', pa.array([b'ab', b'cd', b'ef'], pa.binary(2)))
t = t.append_column('mp', pa.array([[('a', 1)], [], None], pa.map_(pa.string(), pa.int64())))
inner = pa.struct([('u', pa.uint8()), ('f', pa.float32())])
t = t.append_column('st', pa.array([{'n': 1, 'in': {'u': 5, 'f': 0.5}}, {'n': None, 'in': None}, None],
                                   pa.struct([('n', pa.int32()), ('in', inner)])))
import pyarrow.parquet as pq
pq.write_table(t, sys.argv[1])
"#,
        &[s(&pq)],
    );
    let npz = dir.path().join("out.npz");
    let out = sciio(&["convert", s(&pq), s(&npz)]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    for column in ["s_none", "dec", "lst", "mp"] {
        assert!(
            err.contains(&format!("left out: column '{column}'")),
            "{column}: {err}"
        );
    }
    assert!(err.contains("missing"), "{err}");
    run_python(
        r#"
import sys, numpy as np, pandas as pd
z = np.load(sys.argv[2], allow_pickle=False)
assert sorted(z.files) == sorted(['index', 'Int64', 'Int64.mask', 'UInt8', 'UInt8.mask', 'boolean',
    'boolean.mask', 'full', 's_full', 'fsb', 'fsb.mask', 'fsb_full', 'cat_int', 'cat_int.mask', 'st', 'st.mask']), z.files
# a struct with missing values: its fields' types kept, a mask record array beside (numpy.ma)
assert z['st'].dtype == np.dtype([('n', '<i4'), ('in', [('u', 'u1'), ('f', '<f4')])]), z['st'].dtype
assert z['st.mask'].dtype == np.dtype([('n', '?'), ('in', [('u', '?'), ('f', '?')])])
st = np.ma.masked_array(z['st'], mask=z['st.mask'])
assert st['n'].tolist() == [1, None, None], st['n'].tolist()
assert st['in']['u'].tolist() == [5, None, None] and st['in']['f'].tolist() == [0.5, None, None]
# integer categories with a missing value: the categories' integers and a mask, not NaN floats
assert z['cat_int'].dtype == np.int64 and list(z['cat_int.mask']) == [False, True, False]
assert [v for v, m in zip(z['cat_int'], z['cat_int.mask']) if not m] == [7, 9]
df = pd.read_parquet(sys.argv[1])
for c in ['Int64', 'UInt8', 'boolean']:
    want = df[c]
    assert z[c].dtype == want.dtype.numpy_dtype, (c, z[c].dtype)
    assert z[c + '.mask'].dtype == bool and list(z[c + '.mask']) == list(want.isna()), c
    got = pd.array(np.ma.masked_array(z[c], mask=z[c + '.mask']).tolist(), dtype=want.dtype)
    assert got.equals(want.array), (c, got, want.array)
assert z['full'].dtype == np.int32 and list(z['full']) == [1, 2, 3]
assert z['s_full'].dtype == np.dtype('<U2') and list(z['s_full']) == ['a', 'bb', 'é']
assert z['fsb_full'].dtype == np.dtype('S2') and list(z['fsb_full']) == [b'ab', b'cd', b'ef']
assert z['fsb'].dtype == np.dtype('S2') and list(z['fsb.mask']) == [False, True, False]
assert z['fsb'].tobytes() == b'ab\x00\x00\x00z'
print('ok')
"#,
        &[s(&pq), s(&npz)],
    );
    // --strict refuses before writing anything
    let strict = dir.path().join("strict.npz");
    let out = sciio(&["convert", s(&pq), s(&strict), "--strict"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(!strict.exists());
}

/// A frame in 7 row groups (the copy decodes alternate row groups on two threads): a string
/// column dictionary-encoded in every row group or, with `mixed`, only in the even ones (the
/// odd ones hold distinct strings whose dictionary overflows into plain pages: small write
/// batches let pyarrow see the overflow inside a row group; the copy then reads with one
/// decoder), a categorical, numbers and missing values.
const MAKE_ROW_GROUPS: &str = r#"
import sys, pandas as pd, numpy as np, pyarrow as pa, pyarrow.parquet as pq
mixed = sys.argv[2] == "mixed"
rows, group = 7 * 500, 500
i = np.arange(rows)
few = np.array([f"w{k:03d}" for k in range(20)], dtype=object)[i % 20]
many = np.array([f"distinct-{k:08d}" for k in i], dtype=object)
odd = (i // group) % 2 == 1
df = pd.DataFrame({
    "i": i.astype("int64"),
    "f": np.where(i % 11 == 0, np.nan, i * 0.25),
    "s": pd.Series(np.where(odd & mixed, many, few), dtype=object).where(i % 13 != 0, None),
    "c": pd.Categorical.from_codes((i % 5).astype("int8"), categories=list("vwxyz")),
})
pq.write_table(pa.Table.from_pandas(df), sys.argv[1], row_group_size=group,
               dictionary_pagesize_limit=2000, write_batch_size=50, compression="zstd")
print(pq.ParquetFile(sys.argv[1]).metadata.num_row_groups)
"#;

const CHECK_SAME_FRAME: &str = r#"
import sys, pandas as pd, pyarrow.parquet as pq
a, b = pd.read_parquet(sys.argv[1]), pd.read_parquet(sys.argv[2])
assert b.equals(a), (a, b)
assert list(b.dtypes) == list(a.dtypes), (a.dtypes, b.dtypes)
assert list(b["c"].cat.categories) == list("vwxyz")
print(pq.ParquetFile(sys.argv[2]).metadata.num_rows)
"#;

#[test]
fn parquet_copy_of_many_row_groups_reads_as_the_source_in_pandas() {
    let dir = tempdir();
    for layout in ["dictionary", "mixed"] {
        let src = dir.path().join(format!("{layout}.parquet"));
        let made = run_python(MAKE_ROW_GROUPS, &[s(&src), layout]);
        assert_eq!(made.trim(), "7", "{layout}");
        let dst = dir.path().join(format!("{layout}-copy.parquet"));
        ok(&["convert", s(&src), s(&dst), "--compress", "zstd:3"]);
        assert_eq!(
            run_python(CHECK_SAME_FRAME, &[s(&src), s(&dst)]).trim(),
            "3500"
        );
    }
}
