//! `sciio convert frame.parquet store.h5[:/key]` writes a pandas HDFStore key (table format):
//! for frames pandas wrote to Parquet (python/hdfstore_write_cases.py: every column dtype pandas
//! stores in a table × index kinds Range/int/float/str/datetime naive and tz/timedelta/MultiIndex
//! 2–3 levels, compression none/zlib/blosc, data columns; and the fixed format, `--store-format
//! fixed`), `pd.read_hdf` gives a frame equal to `pd.read_parquet` (dtypes checked) and sciio
//! reads the key back equal, `where` queries on data columns answer as pandas does,
//! `--append` equals `pd.concat`, a second key keeps the first, and what pandas cannot store is
//! refused with pandas' reason before anything is written. One-column frames written with
//! `--series` (table and fixed) read back in pandas as the Series pandas writes itself.
#![cfg(feature = "hdfstore")]

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, run_python_script, tempdir};

const SCRIPT: &str = "python/hdfstore_write_cases.py";

#[test]
fn parquet_frames_become_table_keys_pandas_reads_back_equal() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    let listing = run_python_script(SCRIPT, &["gen", &d]);
    let mut n = 0;
    for line in listing.lines() {
        let mut words = line.split(' ');
        let name = words.next().unwrap();
        let extra: Vec<&str> = words.collect();
        let src = format!("{d}/{name}.parquet");
        let dst = format!("{d}/{name}.h5:/df");
        let mut args = vec!["convert", &src, &dst];
        args.extend(extra);
        ok(&args);
        // sciio reads back what it wrote.
        ok(&["convert", &dst, &format!("{d}/{name}.back.parquet")]);
        n += 1;
    }
    let verdict = run_python_script(SCRIPT, &["check", &d]);
    let failures: Vec<&str> = verdict.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(verdict.contains(&format!("CHECKED {n}")), "{verdict}");
    assert!(n >= 31, "{n}");
}

/// The values blocks come in the order pandas' own `to_hdf` of `pd.read_parquet`'s frame
/// writes them (the order of the blocks pyarrow makes): table description and key attributes
/// (`values_block_N_kind`/`_dtype`/`_meta`, `values_cols`, `non_index_axes`) alike, for frames
/// mixing int, float, bool, string, categorical, tz and naive datetime, timedelta columns.
#[test]
fn values_blocks_come_in_the_order_pandas_writes_them() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    let listing = run_python_script(SCRIPT, &["layout_gen", &d]);
    let mut n = 0;
    for name in listing.lines() {
        ok(&[
            "convert",
            &format!("{d}/{name}.parquet"),
            &format!("{d}/{name}.h5:/df"),
        ]);
        n += 1;
    }
    let verdict = run_python_script(SCRIPT, &["layout_check", &d]);
    let failures: Vec<&str> = verdict.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(verdict.contains(&format!("CHECKED {n}")), "{verdict}");
    assert!(n >= 10, "{n}");
}

#[test]
fn what_pandas_cannot_store_is_refused_with_its_reason() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    let listing = run_python_script(SCRIPT, &["refused", &d]);
    let mut n = 0;
    for line in listing.lines() {
        let (name, reason) = line.split_once(' ').unwrap();
        let dst = dir.path().join(format!("bad_{name}.h5"));
        let out = sciio(&[
            "convert",
            &format!("{d}/bad_{name}.parquet"),
            &format!("{}:/df", s(&dst)),
        ]);
        assert_eq!(out.status.code(), Some(1), "{name}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(reason), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!dst.exists(), "{name}: a store was left behind");
        n += 1;
    }
    assert_eq!(n, 6);
}

#[test]
fn append_adds_rows_and_keys_sit_side_by_side() {
    let dir = tempdir();
    let p = |n: &str| dir.path().join(n);
    run_python(
        r#"
import sys, pandas as pd, numpy as np
d = sys.argv[1]
def part(start, n, words):
    return pd.DataFrame({
        'i': np.arange(start, start + n, dtype='int64'),
        'x': np.linspace(0, 1, n),
        's': pd.array(words[:n], dtype='str'),
        'c': pd.Categorical(['a', 'b'] * (n // 2) + ['a'] * (n % 2), categories=['a', 'b']),
        't': pd.date_range('2024-01-01', periods=n, freq='h', tz='Asia/Tokyo'),
    }, index=pd.RangeIndex(start, start + n))
part(0, 5, ['aaaa', 'b', None, 'dd', 'e']).to_parquet(f'{d}/p1.parquet')
part(5, 4, ['x', 'yy', 'zzz', None]).to_parquet(f'{d}/p2.parquet')
part(9, 2, ['much longer', 'y']).to_parquet(f'{d}/p3.parquet')
pd.DataFrame({'other': [1.5, 2.5]}).to_parquet(f'{d}/o.parquet')
"#,
        &[s(dir.path())],
    );
    let store = p("s.h5");
    let key = format!("{}:/grp/df", s(&store));
    ok(&["convert", s(&p("p1.parquet")), &key, "--data-columns", "i"]);
    ok(&["convert", s(&p("p2.parquet")), &key, "--append"]);
    ok(&["convert", s(&p("o.parquet")), &format!("{}:/o", s(&store))]);
    // A longer string than the column holds is refused, as pandas refuses it.
    let out = sciio(&["convert", s(&p("p3.parquet")), &key, "--append"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("min_itemsize"), "{err}");
    // The fixed format holds no categorical and takes no appended rows, as in pandas.
    let fixed = format!("{}:/f", s(&store));
    let out = sciio(&[
        "convert",
        s(&p("p1.parquet")),
        &fixed,
        "--store-format",
        "fixed",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Cannot store a category dtype"), "{err}");
    let out = sciio(&[
        "convert",
        s(&p("o.parquet")),
        &fixed,
        "--store-format",
        "fixed",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = sciio(&["convert", s(&p("o.parquet")), &fixed, "--append"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Can only append to Tables"), "{err}");
    // Other columns are refused too.
    let out = sciio(&["convert", s(&p("o.parquet")), &key, "--append"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let check = r#"
import sys, pandas as pd
d = sys.argv[1]
want = pd.concat([pd.read_parquet(f'{d}/p1.parquet'), pd.read_parquet(f'{d}/p2.parquet')])
got = pd.read_hdf(f'{d}/s.h5', 'grp/df')
pd.testing.assert_frame_equal(got, want, check_dtype=True)
pd.testing.assert_frame_equal(pd.read_hdf(f'{d}/s.h5', 'o'), pd.read_parquet(f'{d}/o.parquet'))
with pd.HDFStore(f'{d}/s.h5', mode='r') as st:
    # (pandas lists the categories' series table too, as for the stores it writes)
    assert [k for k in st.keys() if '/meta/' not in k] == ['/f', '/o', '/grp/df'], st.keys()
    pd.testing.assert_frame_equal(st.select('grp/df', where='i >= 4'), want[want.i >= 4])
# pandas appends to what sciio wrote, and sciio's rows read back after pandas' own.
more = pd.read_parquet(f'{d}/p2.parquet')
more.index = more.index + 4
with pd.HDFStore(f'{d}/s.h5', mode='a') as st:
    st.append('grp/df', more)
got = pd.read_hdf(f'{d}/s.h5', 'grp/df')
pd.testing.assert_frame_equal(got, pd.concat([want, more]), check_dtype=True)
print('ok')
"#;
    assert_eq!(run_python(check, &[s(dir.path())]).trim(), "ok");
    // sciio reads back the key it wrote (and pandas appended to).
    let back = p("back.parquet");
    ok(&["convert", &key, s(&back)]);
    let check = r#"
import sys, pandas as pd
d = sys.argv[1]
pd.testing.assert_frame_equal(pd.read_parquet(f'{d}/back.parquet'), pd.read_hdf(f'{d}/s.h5', 'grp/df'))
print('ok')
"#;
    assert_eq!(run_python(check, &[s(dir.path())]).trim(), "ok");
}

#[test]
fn a_key_pandas_wrote_takes_appended_rows_from_parquet() {
    let dir = tempdir();
    run_python(
        r#"
import sys, pandas as pd, numpy as np
d = sys.argv[1]
df = pd.DataFrame({'a': np.arange(4), 'b': pd.Series(['x', 'yy', None, 'zzz'], dtype='str'),
                   'when': pd.date_range('2020', periods=4, freq='D')})
df.to_hdf(f'{d}/p.h5', key='df', format='table', data_columns=['a'], min_itemsize={'b': 10})
df2 = df.copy()
df2.index = df2.index + 4
df2['b'] = pd.Series(['longer one', 'q', 'r', None], dtype='str', index=df2.index)
df2.to_parquet(f'{d}/more.parquet')
"#,
        &[s(dir.path())],
    );
    let store = dir.path().join("p.h5");
    ok(&[
        "convert",
        s(&dir.path().join("more.parquet")),
        &format!("{}:/df", s(&store)),
        "--append",
    ]);
    let check = r#"
import sys, pandas as pd, numpy as np
d = sys.argv[1]
df = pd.DataFrame({'a': np.arange(4), 'b': pd.Series(['x', 'yy', None, 'zzz'], dtype='str'),
                   'when': pd.date_range('2020', periods=4, freq='D')})
want = pd.concat([df, pd.read_parquet(f'{d}/more.parquet')])
pd.testing.assert_frame_equal(pd.read_hdf(f'{d}/p.h5', 'df'), want, check_dtype=True)
print('ok')
"#;
    assert_eq!(run_python(check, &[s(dir.path())]).trim(), "ok");
}

#[test]
fn a_series_key_needs_a_frame_of_one_column() {
    let dir = tempdir();
    run_python(
        "import sys, pandas as pd\npd.DataFrame({'a': [1, 2], 'b': [3.0, 4.0]}).to_parquet(sys.argv[1])",
        &[s(&dir.path().join("two.parquet"))],
    );
    let dst = dir.path().join("s.h5");
    for format in ["table", "fixed"] {
        let out = sciio(&[
            "convert",
            s(&dir.path().join("two.parquet")),
            &format!("{}:/s", s(&dst)),
            "--series",
            "--store-format",
            format,
        ]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("a Series key holds one column; the frame has 2"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!dst.exists());
    }
}

/// `--series`, `--data-columns` and `--append` describe a pandas key: with
/// `--store-format pytables` (a plain PyTables Table) they are refused in one line, not
/// ignored, and nothing is written.
#[test]
fn pandas_key_options_are_refused_with_a_plain_pytables_table() {
    let dir = tempdir();
    let src = dir.path().join("one.parquet");
    run_python(
        "import sys, pandas as pd\npd.DataFrame({'a': [1, 2]}).to_parquet(sys.argv[1])",
        &[s(&src)],
    );
    let dst = dir.path().join("t.h5");
    for extra in [
        &["--series"][..],
        &["--data-columns", "a"][..],
        &["--append"][..],
    ] {
        let mut args = vec!["convert", s(&src), s(&dst), "--store-format", "pytables"];
        args.extend(extra);
        let out = sciio(&args);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(extra[0]), "{err}");
        assert!(err.contains("--store-format pytables"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!dst.exists());
    }
}

/// An unnamed Series key written by pandas goes to Parquet (its column labelled None) and back
/// into a store with `--series`: pandas reads an unnamed Series equal to the first, in both
/// formats (it used to come back named "0").
#[test]
fn an_unnamed_series_round_trips_unnamed() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    run_python(
        r#"
import sys, numpy as np, pandas as pd
d = sys.argv[1]
s = pd.Series(np.linspace(0, 1, 5), index=pd.Index(list('abcde'), name='k'))
s.to_hdf(f'{d}/src.h5', key='fixed', format='fixed')
s.to_hdf(f'{d}/src.h5', key='table', format='table')
"#,
        &[&d],
    );
    for fmt in ["fixed", "table"] {
        let pq = format!("{d}/{fmt}.parquet");
        ok(&["convert", &format!("{d}/src.h5:/{fmt}"), &pq]);
        ok(&[
            "convert",
            &pq,
            &format!("{d}/back.h5:/{fmt}"),
            "--series",
            "--store-format",
            fmt,
        ]);
    }
    let check = r#"
import sys, pandas as pd
d = sys.argv[1]
for fmt in ['fixed', 'table']:
    want = pd.read_hdf(f'{d}/src.h5', fmt)
    got = pd.read_hdf(f'{d}/back.h5', fmt)
    assert want.name is None and got.name is None, (want.name, got.name)
    pd.testing.assert_series_equal(got, want, check_dtype=True, check_index_type=True)
    assert list(pd.read_parquet(f'{d}/{fmt}.parquet').columns) == [None]
print('ok')
"#;
    assert_eq!(run_python(check, &[&d]).trim(), "ok");
}

/// The fixed format's MultiIndex rows, CategoricalIndex, column MultiIndex and PeriodIndex
/// are laid out as pandas 3 lays them out: the same nodes, dtypes, shapes and attributes as
/// `df.to_hdf(format='fixed')` of the frame pandas reads from the Parquet file.
#[test]
fn fixed_indexes_are_laid_out_as_pandas_writes_them() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    run_python(
        r#"
import sys, numpy as np, pandas as pd
d = sys.argv[1]
mi = pd.MultiIndex.from_arrays([list('aab'), [1, 2, 1], [0.5, 0.5, 1.5]], names=['l0', None, 'l2'])
cols = pd.MultiIndex.from_tuples([('a', 'x'), ('a', 'y'), ('b', 'x')], names=['u', 'v'])
frames = {
    'mi': pd.DataFrame({'x': [1.0, 2.0, 3.0], 's': ['p', None, 'q']}, index=mi),
    'ci': pd.DataFrame({'x': [1.0, 2.0, 3.0]},
                       index=pd.CategoricalIndex(['a', 'b', 'a'], categories=['b', 'a', 'z'], name='c')),
    'cm': pd.DataFrame(np.arange(9.0).reshape(3, 3), columns=cols),
    'pi': pd.DataFrame({'x': [1, 2, 3]}, index=pd.period_range('2020-01', periods=3, freq='M', name='p')),
}
for name, df in frames.items():
    df.to_parquet(f'{d}/{name}.parquet')
    pd.read_parquet(f'{d}/{name}.parquet').to_hdf(f'{d}/{name}.pandas.h5', key='df', format='fixed')
"#,
        &[&d],
    );
    for name in ["mi", "ci", "cm", "pi"] {
        ok(&[
            "convert",
            &format!("{d}/{name}.parquet"),
            &format!("{d}/{name}.h5:/df"),
            "--store-format",
            "fixed",
        ]);
    }
    let check = r#"
import sys, tables, pandas as pd
d = sys.argv[1]
def layout(path):
    out = []
    with tables.open_file(path) as h:
        for n in h.walk_nodes('/df'):
            attrs = {a: repr(n._v_attrs[a]) for a in n._v_attrs._f_list('user')}
            out.append((n._v_pathname, type(n).__name__, str(getattr(n, 'dtype', '')),
                        tuple(getattr(n, 'shape', ())), attrs))
    return out
for name in ['mi', 'ci', 'cm', 'pi']:
    ours, theirs = layout(f'{d}/{name}.h5'), layout(f'{d}/{name}.pandas.h5')
    assert ours == theirs, (name, [x for x in ours if x not in theirs], [x for x in theirs if x not in ours])
    pd.testing.assert_frame_equal(pd.read_hdf(f'{d}/{name}.h5', 'df'),
                                  pd.read_parquet(f'{d}/{name}.parquet'), check_dtype=True)
print('ok')
"#;
    assert_eq!(run_python(check, &[&d]).trim(), "ok");
}

/// pandas 3.1 (GH#9604): rows appended to a table key keep each string column's sentinel for
/// missing values, refuse a value equal to it, and get one (avoiding the stored values) when
/// they bring the column's first missing value; a table written before pandas 3.1 keeps its
/// table-wide `nan_rep`. sciio's appends give the frame and the sentinel attributes pandas'
/// own appends of the same rows give, and the refusal pandas gives.
#[test]
fn appended_rows_keep_the_string_sentinels_as_pandas_does() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    let refusals = run_python(
        r#"
import sys, warnings, numpy as np, pandas as pd, tables
warnings.simplefilter('ignore')
d = sys.argv[1]
S = lambda v: pd.array(v, dtype='str')
def part(ix, s, t, start):
    return pd.DataFrame({'s': S(s), 't': S(t), 'i': np.arange(start, start + len(s))},
                        index=pd.Index(ix, dtype='str', name='k'))
# 1: no missing index value, a literal "nan" in s, t missing (sentinel "nan");
# 2: the first missing index value and s value (sentinels avoiding what is stored too);
# 3: a literal "nan" in t, whose sentinel it is: refused;
# 4: an index value equal to the index's sentinel: refused.
parts = [part(['aaaaaaaa', 'b'], ['nan', 'a longer value'], [None, 'y'], 0),
         part([None, 'nan'], [None, '_nan_'], ['x', None], 2),
         part(['c', 'd'], ['e', 'f'], ['nan', 'z'], 4),
         part(['_nan_', 'e'], ['e', 'f'], ['g', 'h'], 4)]
for n, p in enumerate(parts):
    p.to_parquet(f'{d}/a{n + 1}.parquet')
# pandas' own keys are of the frames pd.read_parquet gives (their blocks in pyarrow's order:
# the int column first); the `old` key is of the frame built here (the strings first), so
# that appending to it reorders the appended blocks as pandas does.
built = parts
parts = [pd.read_parquet(f'{d}/a{n + 1}.parquet') for n in range(len(built))]
def before_3_1(path, key):
    # what pandas 3.1 adds (markers and sentinels) stripped: a table as older pandas wrote it
    with tables.open_file(path, 'a') as f:
        g = f.get_node(key)
        for name in ['data_col_nan_rep', 'mi_level_nan_rep']:
            g._v_attrs.__delattr__(name)
        for name in list(g.table._v_attrs._f_list('user')):
            if name.endswith('_nan_rep'):
                g.table._v_attrs.__delattr__(name)
for store in ['s.h5', 'pandas.h5']:
    built[0].to_hdf(f'{d}/{store}', key='old', format='table', nan_rep='nan')
    before_3_1(f'{d}/{store}', '/old')
for key, dc in [('df', None), ('dc', True)]:
    parts[0].to_hdf(f'{d}/pandas.h5', key=key, format='table', data_columns=dc)
    parts[1].to_hdf(f'{d}/pandas.h5', key=key, format='table', append=True)
    for n in [3, 4]:
        try:
            parts[n - 1].to_hdf(f'{d}/pandas.h5', key=key, format='table', append=True)
            print(f'{key}/{n}', 'ACCEPTED')
        except ValueError as e:
            print(f'{key}/{n}', e)
for p in parts[1:3]:
    p.to_hdf(f'{d}/pandas.h5', key='old', format='table', append=True)
"#,
        &[&d],
    );
    for (key, extra) in [("df", vec![]), ("dc", vec!["--data-columns", "all"])] {
        let dst = format!("{d}/s.h5:/{key}");
        let first = format!("{d}/a1.parquet");
        let mut args = vec!["convert", first.as_str(), dst.as_str()];
        args.extend(extra);
        ok(&args);
        ok(&["convert", &format!("{d}/a2.parquet"), &dst, "--append"]);
        for (n, what) in [
            (3, "'nan' in column [t]"),
            (4, "'_nan_' in Index column [index]"),
        ] {
            let out = sciio(&["convert", &format!("{d}/a{n}.parquet"), &dst, "--append"]);
            assert_eq!(out.status.code(), Some(1), "{key}: {out:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            let pandas = refusals
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{key}/{n} ")))
                .unwrap();
            assert!(
                pandas.starts_with(&format!("Cannot store the string {what}")),
                "{pandas}"
            );
            assert!(err.contains(pandas), "{key}: {err} (pandas: {pandas})");
        }
    }
    let old = format!("{d}/s.h5:/old");
    for n in [2, 3] {
        ok(&["convert", &format!("{d}/a{n}.parquet"), &old, "--append"]);
    }
    let check = r#"
import sys, pandas as pd, tables
d = sys.argv[1]
def sentinels(path, key):
    with tables.open_file(path) as f:
        out = {}
        for node in [f.get_node(key), f.get_node(key + '/table')]:
            for n in node._v_attrs._f_list('user'):
                if 'nan_rep' in n:
                    v = node._v_attrs[n]
                    out[n] = None if v is None else str(v)
        return out
for key in ['df', 'dc', 'old']:
    want = pd.read_hdf(f'{d}/pandas.h5', key)
    got = pd.read_hdf(f'{d}/s.h5', key)
    pd.testing.assert_frame_equal(got, want, check_dtype=True, check_index_type=True)
    assert sentinels(f'{d}/s.h5', '/' + key) == sentinels(f'{d}/pandas.h5', '/' + key), (
        key, sentinels(f'{d}/s.h5', '/' + key), sentinels(f'{d}/pandas.h5', '/' + key))
    if key != 'old':  # missing values and the literal "nan" both read back
        assert got['s'].isna().any() and (got['s'] == 'nan').any(), got
print('ok')
"#;
    assert_eq!(run_python(check, &[&d]).trim(), "ok");
}

/// A frame of over 32 MiB in memory is streamed (two passes over its record batches, the
/// first on every core): the key holds what pandas' own `df.to_hdf` key holds — each column's
/// type in the table (the longest string, in the last row group, sizing its column), its
/// `_dtype`, `_meta` and sentinel (a literal "nan" moving it to `_nan_`), the categories —
/// and `pd.read_hdf` gives the Parquet frame; appending the file again gives `pd.concat` of
/// it twice.
#[test]
fn a_large_frame_streams_into_the_key_pandas_writes() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    let src = format!("{d}/big.parquet");
    let out = format!("{d}/big.h5");
    run_python(
        r#"
import sys, pandas as pd, numpy as np, pyarrow.parquet as pq
n = 1_300_000
s = pd.Series(['v%d' % (k % 977) for k in range(n)], dtype='str')
s[5] = 'nan'
s[n // 2] = None
s[n - 3] = 'the longest string, in the last row group ' + 'x' * 40
df = pd.DataFrame({
    'i': np.arange(n, dtype='int64') * 3,
    'b': np.arange(n) % 3 == 0,
    'f': np.linspace(0, 1, n),
    's': s,
    'c': pd.Categorical((['lo', 'mid', 'hi'] * n)[:n], categories=['hi', 'mid', 'lo']),
    't': pd.date_range('2024-03-30', periods=n, freq='7s', tz='Europe/Paris'),
})
df.loc[n // 3, 'c'] = None
df.to_parquet(sys.argv[1], row_group_size=200_000)
m = pq.ParquetFile(sys.argv[1]).metadata
data = sum(m.row_group(g).total_byte_size for g in range(m.num_row_groups))
assert data >= 32 << 20, f'{data} bytes: under the streaming threshold'
"#,
        &[&src],
    );
    ok(&["convert", &src, &format!("{out}:/df")]);
    let check = r#"
import sys, pandas as pd, tables
src, out, times = sys.argv[1], sys.argv[2], int(sys.argv[3])
want = pd.read_parquet(src)
pd.testing.assert_frame_equal(pd.read_hdf(out, '/df'), pd.concat([want] * times), check_dtype=True)
theirs = out + '.pandas.h5'
want.to_hdf(theirs, key='df', format='table')
def columns(path):
    # by column label: pandas orders the values blocks as its block manager holds them
    with tables.open_file(path) as f:
        t = f.get_node('/df/table')
        a = t.attrs
        dtype = t.description._v_dtype
        cols = {'index': (str(dtype['index']), a.index_kind)}
        for name in dtype.names[1:]:
            cats = f'/df/meta/{name}/meta/table'
            cols[tuple(a[name + '_kind'])] = (
                str(dtype[name]), a[name + '_dtype'], str(a[name + '_meta']),
                a[name + '_nan_rep'] if name + '_nan_rep' in a._v_attrnames else None,
                f.get_node(cats).read().tolist() if cats in f else None)
        return cols
ours, pandas = columns(out), columns(theirs)
assert ours == pandas, (ours, pandas)
print('ok')
"#;
    let verdict = run_python(check, &[&src, &out, "1"]);
    assert_eq!(verdict.trim(), "ok", "{verdict}");
    ok(&["convert", &src, &format!("{out}:/df"), "--append"]);
    let verdict = run_python(check, &[&src, &out, "2"]);
    assert_eq!(verdict.trim(), "ok", "{verdict}");
}

/// A Parquet file over the streaming threshold into a `fixed` key (`--store-format fixed`,
/// written from the record batches: number blocks and the index filled slab by slab, the
/// string column's pickle made as the rows come): number blocks of several dtypes, a
/// tz-aware datetime column, a timedelta, a string column with a missing value and a literal
/// "nan", over a DatetimeIndex. pandas reads the key equal to the Parquet frame, and its
/// nodes, dtypes, shapes and attributes are those of pandas' own `to_hdf(format='fixed')`.
#[test]
fn a_large_frame_streams_into_the_fixed_key_pandas_writes() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    let src = format!("{d}/big.parquet");
    let out = format!("{d}/big.h5");
    run_python(
        r#"
import sys, pandas as pd, numpy as np, pyarrow.parquet as pq
n = 450_000
rng = np.random.default_rng(9)
s = pd.Series(['v%d' % (k % 977) for k in range(n)], dtype='str')
s[5] = 'nan'
s[n // 2] = None
df = pd.DataFrame({
    'i': np.arange(n, dtype='int64') * 3,
    'j': (np.arange(n) % 70000).astype('int32'),
    'u': (np.arange(n) % 250).astype('uint8'),
    'f': rng.random(n).astype('float32'),
    'b': np.arange(n) % 3 == 0,
    'd': pd.to_timedelta(np.arange(n), unit='ms'),
    'z': pd.date_range('2024-03-30', periods=n, freq='7s', tz='Europe/Paris'),
    's': s,
    **{f'r{k}': rng.random(n) for k in range(8)},
}, index=pd.date_range('2021-01-01', periods=n, freq='s', name='when'))
df.to_parquet(sys.argv[1], row_group_size=100_000)
m = pq.ParquetFile(sys.argv[1]).metadata
data = sum(m.row_group(g).total_byte_size for g in range(m.num_row_groups))
assert data >= 32 << 20, f'{data} bytes: under the streaming threshold'
"#,
        &[&src],
    );
    ok(&[
        "convert",
        &src,
        &format!("{out}:/df"),
        "--store-format",
        "fixed",
    ]);
    let check = r#"
import sys, tables, pandas as pd
src, out = sys.argv[1], sys.argv[2]
want = pd.read_parquet(src)
pd.testing.assert_frame_equal(pd.read_hdf(out, 'df'), want, check_dtype=True)
theirs = out + '.pandas.h5'
want.to_hdf(theirs, key='df', format='fixed')
def layout(path):
    with tables.open_file(path) as h:
        return [(n._v_pathname, type(n).__name__, str(getattr(n, 'dtype', '')),
                 tuple(getattr(n, 'shape', ())),
                 {a: repr(n._v_attrs[a]) for a in n._v_attrs._f_list('user')})
                for n in h.walk_nodes('/df')]
ours, pandas = layout(out), layout(theirs)
assert ours == pandas, ([x for x in ours if x not in pandas], [x for x in pandas if x not in ours])
print('ok')
"#;
    let verdict = run_python(check, &[&src, &out]);
    assert_eq!(verdict.trim(), "ok", "{verdict}");
}
