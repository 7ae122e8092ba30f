//! `HdfStore::read_batches`: a `table` key read in slices gives the frame `read` gives (and
//! pandas gives, `pd.read_hdf(start=, stop=)`), slice by slice, whatever the slice length.

use arrow_select::concat::concat_batches;
use sciio_hdfstore::HdfStore;
use sciio_testkit::{run_python, tempdir};

#[test]
fn table_keys_read_in_slices_equal_the_whole_key() {
    let dir = tempdir();
    let path = dir.path().join("s.h5");
    run_python(
        r#"
import sys, pandas as pd, numpy as np
n = 23
df = pd.DataFrame({
    'i': np.arange(n), 'x': np.linspace(0, 1, n),
    's': pd.array([None if k % 5 == 0 else 'w' * (k % 4) + str(k) for k in range(n)], dtype='str'),
    'c': pd.Categorical(['a', 'b', 'c'] * 7 + ['a', None], categories=['c', 'b', 'a']),
    't': pd.date_range('2024-03-30', periods=n, freq='5h', tz='Europe/Paris'),
}, index=pd.date_range('2000', periods=n, freq='D', name='when'))
df.to_hdf(sys.argv[1], key='flat', format='table', data_columns=['x'])
df.set_index(['s', 'i'], append=True).to_hdf(sys.argv[1], key='multi', format='table')
df['x'].to_hdf(sys.argv[1], key='series', format='table')
"#,
        &[path.to_str().unwrap()],
    );
    let store = HdfStore::open(&path).unwrap();
    for key in ["/flat", "/multi", "/series"] {
        slices_join_to_the_whole(&store, key, &[1, 4, 7, 23, 100], 23);
    }
}

/// `key` read in slices of each of `lengths` rows: as many slices as `rows` needs, each of
/// the whole read's schema, joined equal to the whole read.
fn slices_join_to_the_whole(store: &HdfStore, key: &str, lengths: &[usize], rows: usize) {
    let whole = store.read(key).unwrap();
    let whole_batch = concat_batches(whole.schema().arrow_schema(), whole.batches()).unwrap();
    for &slice in lengths {
        let parts: Vec<_> = store
            .read_batches(key, slice)
            .unwrap()
            .unwrap_or_else(|| panic!("{key} does not stream"))
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        assert_eq!(parts.len(), rows.div_ceil(slice), "{key} by {slice}");
        let mut batches = Vec::new();
        for p in &parts {
            assert_eq!(p.schema(), whole.schema(), "{key} by {slice}");
            batches.extend(p.batches().iter().cloned());
        }
        let joined = concat_batches(whole.schema().arrow_schema(), &batches).unwrap();
        assert_eq!(joined, whole_batch, "{key} by {slice}");
    }
}

/// A `fixed` frame with string blocks is read in batches too, its pickles parsed as
/// streams: the batches joined are the frame `read` gives (the whole path, the reference),
/// under pickle protocols 2 to 5, with missing values, non-ASCII text, several string blocks
/// beside numeric ones, indexes read by row ranges (integer, float, zoned datetime) or
/// whole (MultiIndex), a 2-d object block and pandas' masked `string` (read whole and
/// sliced); number blocks (of one or several columns, every numpy number type, booleans, naive and zoned datetimes,
/// timedeltas, periods) are read by row ranges, with or without a string block beside.
#[test]
fn fixed_frames_with_string_blocks_read_in_batches_equal_the_whole_key() {
    let dir = tempdir();
    let path = dir.path().join("f.h5");
    run_python(
        r#"
import sys, pickle, pandas as pd, numpy as np
n = 29
words = ['alpha', 'ünïcødé ☃', '', '𝄞', None, float('nan')]
col = lambda k: [words[(i * k) % len(words)] for i in range(n)]
df = pd.DataFrame({
    'i': np.arange(n), 's': pd.Series(col(1), dtype='str'), 'x': np.linspace(0, 1, n),
    'o': pd.Series(col(5), dtype=object), 'p': pd.Series(col(7), dtype=object),
    'u': pd.Series([w if isinstance(w, str) else None for w in col(3)], dtype='str'),
    't': pd.Series(col(1), dtype='string'),
}, index=pd.MultiIndex.from_arrays([np.arange(n) % 3, [f'k{i}' for i in range(n)]], names=['a', 'b']))
for protocol in range(6):
    pickle.DEFAULT_PROTOCOL = protocol
    pickle.HIGHEST_PROTOCOL = max(protocol, 2)
    df.to_hdf(sys.argv[1], key=f'p{protocol}', format='fixed')
df[['s']].to_hdf(sys.argv[1], key='one', format='fixed')
flat = df.reset_index(drop=True)
flat.to_hdf(sys.argv[1], key='range', format='fixed')
flat.set_index(pd.date_range('2024-03-30', periods=n, freq='5h', tz='Europe/Paris', name='t')).to_hdf(
    sys.argv[1], key='zoned', format='fixed')
flat.set_index(pd.Index(np.linspace(0, 1, n), name='f'))[['o', 's']].to_hdf(sys.argv[1], key='floats', format='fixed')
df[['i', 'x']].to_hdf(sys.argv[1], key='numbers', format='fixed')
k = np.arange(n)
kinds = pd.DataFrame({
    'i1': (k - 9).astype('i1'), 'u2': (k * 999).astype('u2'), 'i4': (k * -70000).astype('i4'),
    'u8': (k.astype('u8') << np.uint64(60)), 'f4': (k / 7).astype('f4'), 'b': k % 3 == 0,
    'f8': np.where(k % 5 == 0, np.nan, k / 3), 'g8': -k / 9, 'h8': k * 1e300,
    'j8': k * 3, 'l8': -k,
    'd': pd.date_range('2001-02-03', periods=n, freq='37min'),
    'z': pd.date_range('2024-03-30', periods=n, freq='5h', tz='Europe/Paris'),
    'td': pd.to_timedelta(k * 1234567, unit='ms'),
    'p': pd.period_range('2020-01', periods=n, freq='M'),
}, index=pd.Index(k * 10, name='key'))
kinds.to_hdf(sys.argv[1], key='kinds', format='fixed')
kinds.assign(s=pd.Series(col(1), dtype='str')).to_hdf(sys.argv[1], key='kinds_s', format='fixed')
"#,
        &[path.to_str().unwrap()],
    );
    let store = HdfStore::open(&path).unwrap();
    for key in [
        "/p0", "/p2", "/p4", "/p5", "/one", "/range", "/zoned", "/floats", "/numbers", "/kinds",
        "/kinds_s",
    ] {
        slices_join_to_the_whole(&store, key, &[1, 4, 29, 100], 29);
    }
}

/// Every byte of the pickled string block of a `fixed` store (and of its heap object's
/// header) flipped: reading it in batches (the pickle parsed as a stream) gives frames or
/// errors, never a panic; and when the stream gives frames, the whole read gives the same
/// rows.
#[test]
fn damaged_fixed_stores_read_in_batches_give_errors_not_panics() {
    let dir = tempdir();
    let path = dir.path().join("d.h5");
    run_python(
        r#"
import sys, pandas as pd
pd.DataFrame({'s': pd.Series(['ab', None, 'ünï', ''] * 5, dtype='str')}).to_hdf(
    sys.argv[1], key='df', format='fixed')
"#,
        &[path.to_str().unwrap()],
    );
    let bytes = std::fs::read(&path).unwrap();
    let damaged = dir.path().join("damaged.h5");
    let mut streamed = 0;
    let pickle = bytes
        .windows(12)
        .position(|w| w == b"_reconstruct")
        .expect("the pickled block");
    for at in pickle.saturating_sub(96)..(pickle + 400).min(bytes.len()) {
        let mut copy = bytes.clone();
        copy[at] ^= 0xFF;
        std::fs::write(&damaged, &copy).unwrap();
        let Ok(store) = HdfStore::open(&damaged) else {
            continue;
        };
        let Ok(Some(batches)) = store.read_batches("/df", 3) else {
            continue;
        };
        let Ok(parts) = batches.collect::<Result<Vec<_>, _>>() else {
            continue;
        };
        streamed += 1;
        let rows: usize = parts.iter().map(|p| p.num_rows()).sum();
        if let Ok(whole) = store.read("/df") {
            assert_eq!(rows, whole.num_rows(), "flipped at {at}");
        }
    }
    assert!(streamed > 0);
}

/// A values block's text column with no value anywhere in the key is an object column of
/// missing values for `pd.read_hdf` (it infers the dtype from what it read): slices keep it
/// `str`, say which columns had no value in any slice, and read again with those columns null
/// give the whole key's frame; a column whose only value is in the last slice stays `str`.
#[test]
fn text_columns_missing_throughout_are_found_over_the_slices() {
    let dir = tempdir();
    let path = dir.path().join("t.h5");
    run_python(
        r#"
import sys, pandas as pd, numpy as np
n = 9
df = pd.DataFrame({
    'none': pd.Series([None] * n, dtype='str'),
    'late': pd.Series([None] * (n - 1) + ['z'], dtype='str'),
    'dc': pd.Series([None] * n, dtype='str'),
    'i': np.arange(n),
})
df.to_hdf(sys.argv[1], key='df', format='table', data_columns=['dc'])
assert str(pd.read_hdf(sys.argv[1], 'df').dtypes['none']) == 'object'
assert str(pd.read_hdf(sys.argv[1], 'df').dtypes['late']) == 'str'
assert str(pd.read_hdf(sys.argv[1], 'df').dtypes['dc']) == 'str'
"#,
        &[path.to_str().unwrap()],
    );
    let store = HdfStore::open(&path).unwrap();
    let whole = store.read("/df").unwrap();
    let types: Vec<String> = whole
        .schema()
        .arrow_schema()
        .fields()
        .iter()
        .map(|f| f.data_type().to_string())
        .collect();
    assert_eq!(types[..3], ["Null", "Utf8", "Utf8"], "{types:?}");
    let whole_batch = concat_batches(whole.schema().arrow_schema(), whole.batches()).unwrap();
    for slice in [1, 2, 4, 9] {
        let mut batches = store.read_batches("/df", slice).unwrap().unwrap();
        for part in batches.by_ref() {
            let part = part.unwrap();
            assert_eq!(
                part.schema()
                    .arrow_schema()
                    .field(0)
                    .data_type()
                    .to_string(),
                "Utf8"
            );
        }
        assert_eq!(batches.text_missing_throughout(), ["none"], "by {slice}");
        let again = store.read_batches("/df", slice).unwrap().unwrap();
        let parts: Vec<_> = again
            .missing_text_as_null(vec!["none".to_string()])
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let mut joined = Vec::new();
        for p in &parts {
            assert_eq!(p.schema(), whole.schema(), "by {slice}");
            joined.extend(p.batches().iter().cloned());
        }
        let joined = concat_batches(whole.schema().arrow_schema(), &joined).unwrap();
        assert_eq!(joined, whole_batch, "by {slice}");
    }
}

/// `fixed` Series keys, and `fixed` frames over a MultiIndex or a CategoricalIndex, pandas
/// writes (every kind of values a Series' `values` node holds: numbers of each width,
/// booleans, naive and zoned datetimes, timedeltas, periods, strings with `None` and `NaN`
/// as `str` and `object` (pandas' masked `string`, `pd.NA` pickled, is read whole: no
/// stream); named and unnamed; over integer, float,
/// datetime, string, Multi and Categorical indexes, with missing codes) read in batches of
/// 1, 7 and 1000 rows join to the frame `read` gives.
const SERIES_AND_CODED: &str = r#"
import sys, pandas as pd, numpy as np
n = 29
k = np.arange(n)
words = ['alpha', 'ünïcødé ☃', '', None, '𝄞', float('nan')]
text = [words[(i * 5) % len(words)] for i in range(n)]
zoned = pd.date_range('2024-03-30', periods=n, freq='5h', tz='Europe/Paris')
multi = pd.MultiIndex.from_arrays(
    [k % 3, [None if i % 7 == 2 else f'k{i % 11}' for i in range(n)],
     pd.date_range('2001-02-03', periods=n, freq='D')], names=['a', None, 'd'])
cats = pd.CategoricalIndex([None if i % 6 == 4 else 'abc'[i % 3] for i in range(n)],
                           categories=['c', 'b', 'a'], ordered=True, name='cat')
series = {
    'f8': pd.Series(np.where(k % 5 == 0, np.nan, k / 3), index=pd.Index(k * 10, name='key'), name='v'),
    'i4': pd.Series((k * -70000).astype('i4'), index=pd.date_range('2001-02-03', periods=n, freq='37min')),
    'u1': pd.Series((k % 250).astype('u1'), index=pd.Index(k / 4, name='f'), name='u'),
    'b': pd.Series(k % 3 == 0, name='flag'),
    'zoned': pd.Series(zoned, index=pd.Index([f'r{i}' for i in range(n)], name='row')),
    'naive': pd.Series(pd.date_range('2001-02-03', periods=n, freq='37min'), name='t'),
    'td': pd.Series(pd.to_timedelta(k * 1234567, unit='ms'), name='d'),
    'period': pd.Series(pd.period_range('2020-01', periods=n, freq='M'), name='p'),
    'str': pd.Series(text, dtype='str', name='s'),
    'obj': pd.Series(text, dtype=object, index=multi),
    'on_multi': pd.Series(k * 1.5, index=multi, name='x'),
    'on_cats': pd.Series(text, dtype='str', index=cats),
    'on_text': pd.Series(k * 0.5, index=pd.Index([None if i % 5 == 1 else f'ü{i}' for i in range(n)], name='lbl')),
}
for key, s in series.items():
    s.to_hdf(sys.argv[1], key=key, format='fixed')
frame = pd.DataFrame({'i': k, 'x': k / 7, 's': pd.Series(text, dtype='str')})
frame.set_index(multi).to_hdf(sys.argv[1], key='frame_multi', format='fixed')
frame.set_index(cats).to_hdf(sys.argv[1], key='frame_cats', format='fixed')
frame[['i', 'x']].set_index(cats).to_hdf(sys.argv[1], key='numbers_cats', format='fixed')
print(' '.join(list(series) + ['frame_multi', 'frame_cats', 'numbers_cats']))
"#;

#[test]
fn fixed_series_and_coded_indexes_read_in_batches_equal_the_whole_key() {
    let dir = tempdir();
    let path = dir.path().join("s.h5");
    let keys = run_python(SERIES_AND_CODED, &[path.to_str().unwrap()]);
    let keys: Vec<&str> = keys.split_whitespace().collect();
    assert_eq!(keys.len(), 16, "{keys:?}");
    let store = HdfStore::open(&path).unwrap();
    for key in keys {
        slices_join_to_the_whole(&store, &format!("/{key}"), &[1, 7, 1000], 29);
    }
}

/// The codes of a MultiIndex and of a CategoricalIndex, a Series' number values and a
/// plain or string index are read by row ranges, batch by batch: the bytes read for the index alone
/// (no column asked) and for the index and the values are those of the nodes holding them,
/// as PyTables sizes them.
#[test]
fn codes_and_series_values_are_read_by_row_ranges() {
    let dir = tempdir();
    let path = dir.path().join("c.h5");
    let sizes = run_python(
        r#"
import sys, pandas as pd, numpy as np, tables
n = 1000
k = np.arange(n)
multi = pd.MultiIndex.from_arrays([k % 3, ['k%d' % (i % 11) for i in range(n)]], names=['a', 'b'])
cats = pd.CategoricalIndex(['abc'[i % 3] for i in range(n)], name='cat')
pd.Series(k * 1.5, index=multi, name='x').to_hdf(sys.argv[1], key='multi', format='fixed')
pd.Series((k % 7).astype('i2'), index=cats, name='y').to_hdf(sys.argv[1], key='cats', format='fixed')
pd.Series(k / 3).to_hdf(sys.argv[1], key='plain', format='fixed')
pd.Series(k / 3, index=pd.Index(['row%d' % i for i in k], name='r')).to_hdf(sys.argv[1], key='text', format='fixed')
with tables.open_file(sys.argv[1]) as f:
    size = lambda p: f.get_node(p).size_in_memory
    print('multi', size('/multi/index_label0') + size('/multi/index_label1'), size('/multi/values'))
    print('cats', size('/cats/index'), size('/cats/values'))
    print('plain', size('/plain/index'), size('/plain/values'))
    print('text', size('/text/index'), size('/text/values'))
"#,
        &[path.to_str().unwrap()],
    );
    let store = HdfStore::open(&path).unwrap();
    for line in sizes.lines() {
        let [key, index, values] = line.split_whitespace().collect::<Vec<_>>()[..] else {
            panic!("{sizes}");
        };
        let (index, values): (u64, u64) = (index.parse().unwrap(), values.parse().unwrap());
        let key = format!("/{key}");
        let read = |columns: Option<&[String]>| {
            let mut batches = store.fixed_batches(&key, 64, columns).unwrap().unwrap();
            let rows: usize = batches.by_ref().map(|b| b.unwrap().num_rows()).sum();
            assert_eq!(rows, 1000, "{key}");
            batches.bytes_read()
        };
        assert_eq!(read(Some(&[])), index, "{key}: the index alone");
        assert_eq!(
            read(None),
            index + values,
            "{key}: the index and the values"
        );
    }
}

/// Codes outside their levels or categories (a damaged file), met batch by batch: an error
/// naming the codes' node, as the whole read gives one, never a panic.
#[test]
fn codes_outside_their_levels_are_errors_naming_the_node() {
    let dir = tempdir();
    let path = dir.path().join("bad.h5");
    run_python(
        r#"
import sys, pandas as pd, numpy as np, tables
n = 20
k = np.arange(n)
multi = pd.MultiIndex.from_arrays([k % 3, k % 2], names=['a', 'b'])
pd.Series(k * 1.0, index=multi, name='x').to_hdf(sys.argv[1], key='multi', format='fixed')
cats = pd.CategoricalIndex(['abc'[i % 3] for i in range(n)], name='c')
pd.Series(k * 1.0, index=cats, name='y').to_hdf(sys.argv[1], key='cats', format='fixed')
with tables.open_file(sys.argv[1], 'a') as f:
    f.get_node('/multi/index_label1')[13] = 7
    f.get_node('/cats/index')[17] = -2
"#,
        &[path.to_str().unwrap()],
    );
    let store = HdfStore::open(&path).unwrap();
    for (key, node) in [("/multi", "/multi/index_label1"), ("/cats", "/cats/index")] {
        let whole = store.read(key).unwrap_err().to_string();
        assert!(whole.contains(node), "{key}: {whole}");
        let batches = store.read_batches(key, 4).unwrap().unwrap();
        let results: Vec<_> = batches.collect();
        assert_eq!(results.len(), 5, "{key}");
        let failed: Vec<String> = results
            .iter()
            .filter_map(|r| r.as_ref().err().map(ToString::to_string))
            .collect();
        // Only the batch holding the bad code (rows 12..16, 16..20) fails.
        assert_eq!(failed.len(), 1, "{key}: {failed:?}");
        assert!(failed[0].contains(node), "{key}: {}", failed[0]);
    }
}
