//! `sciio` on pandas HDFStore files (`df.to_hdf`, written by pandas 3 + PyTables in the test
//! venv): `convert store.h5:/key out.parquet` gives what pandas reads with `pd.read_hdf`, `ls`
//! lists the keys as frames (and still the PyTables nodes), `cat` prints a key's frame, and a
//! whole store converts to a folder of Parquet files (key names never escape it) or one `.npz`.
#![cfg(feature = "hdfstore")]

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, run_python_script, tempdir};

const SCRIPT: &str = "python/hdfstore_cases.py";

#[test]
fn convert_fixed_keys_to_parquet_equals_read_hdf() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    let listing = run_python_script(SCRIPT, &["gen", &d, "fixed"]);
    let mut n = 0;
    for line in listing.lines() {
        let (store, key) = line.split_once(' ').unwrap();
        let name = std::path::Path::new(store)
            .file_name()
            .unwrap()
            .to_string_lossy();
        let out = dir.path().join(format!(
            "{name}~{}.parquet",
            key.trim_start_matches('/').replace('/', "~")
        ));
        ok(&["convert", &format!("{store}:{key}"), s(&out)]);
        n += 1;
    }
    let verdict = run_python_script(SCRIPT, &["check", &d]);
    let failures: Vec<&str> = verdict.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(verdict.contains(&format!("CHECKED {n}")), "{verdict}");
    assert!(n >= 132, "{n}");
}

const MAKE_STORE: &str = r#"
import sys, numpy as np, pandas as pd
p = sys.argv[1]
df = pd.DataFrame({'x': np.arange(3.0), 's': ['a', None, 'c']}, index=pd.Index([10, 20, 30], name='k'))
df.to_hdf(p, key='df', format='fixed')
df.to_hdf(p, key='g/inner', format='fixed')
df[['x']].to_hdf(p, key='evil\x1b[31m\n', format='fixed')
pd.Series([1.5, 2.5], name='v').to_hdf(p, key='ser', format='fixed')
df.to_hdf(sys.argv[2], key='df', format='fixed')
df.to_hdf(sys.argv[2], key='g/inner', format='fixed')
"#;

#[test]
fn ls_cat_and_whole_store_conversions() {
    let dir = tempdir();
    let store = dir.path().join("store.h5");
    let clean = dir.path().join("clean.h5");
    run_python(MAKE_STORE, &[s(&store), s(&clean)]);

    let ls = ok(&["ls", s(&store)]);
    assert!(ls.contains("pandas HDFStore: 4 key(s)"), "{ls}");
    assert!(ls.contains("/df (fixed frame, 3 rows × 2 columns)"), "{ls}");
    assert!(
        ls.contains("/g/inner (fixed frame, 3 rows × 2 columns)"),
        "{ls}"
    );
    assert!(
        ls.contains("/ser (fixed series, 2 rows × 1 columns)"),
        "{ls}"
    );
    // The raw PyTables nodes stay listed (in the tree table).
    assert!(ls.contains("block0_values"), "{ls}");

    let cat = ok(&["cat", &format!("{}:/df", s(&store))]);
    assert!(cat.contains("20") && cat.contains("c"), "{cat}");

    // Whole store → one Parquet file: refused in one line (several keys), nothing written.
    let one = dir.path().join("one.parquet");
    let out = sciio(&["convert", s(&store), s(&one)]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success() && err.lines().count() == 1, "{err}");
    assert!(err.contains("4 keys") && err.contains("folder"), "{err}");
    assert!(!one.exists());

    // Whole store → a folder: one Parquet file per key, every name inside the folder.
    let out = dir.path().join("out");
    ok(&[
        "convert",
        s(&store),
        &format!("{}/", s(&out)),
        "--to",
        "parquet",
    ]);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "df.parquet",
            "evil%1B%5B31m%0A.parquet",
            "g%2Finner.parquet",
            "ser.parquet"
        ]
    );
    let check = run_python(
        "import sys, pandas as pd\n\
         a = pd.read_parquet(sys.argv[1]); b = pd.read_hdf(sys.argv[2], 'g/inner')\n\
         pd.testing.assert_frame_equal(a, b, check_dtype=True, check_index_type=True); print('same')",
        &[s(&out.join("g%2Finner.parquet")), s(&store)],
    );
    assert_eq!(check.trim(), "same");
    let entries = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(entries, 3, "nothing written beside the folder");

    // Whole store → one .npz: `key/column` members, the index levels included; a key
    // with control characters cannot be a member name: refused in one line.
    let npz = dir.path().join("all.npz");
    let out = sciio(&["convert", s(&store), s(&npz)]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success() && err.contains("control character"),
        "{err}"
    );
    assert!(!npz.exists());
    ok(&["convert", s(&clean), s(&npz)]);
    let members = run_python(
        "import sys, numpy as np\nz = np.load(sys.argv[1], allow_pickle=False)\nprint(sorted(z.files)); print(z['df/x'].tolist())",
        &[s(&npz)],
    );
    assert!(
        members.contains("'df/k'") && members.contains("'g/inner/x'"),
        "{members}"
    );
    assert!(members.contains("[0.0, 1.0, 2.0]"), "{members}");

    // A node inside a key is still a PyTables node (its raw array).
    let raw = dir.path().join("raw.npy");
    ok(&[
        "convert",
        &format!("{}:/df/block0_values", s(&store)),
        s(&raw),
    ]);
    let _ = sciio(&["ls", s(&raw)]);
}

#[test]
fn convert_table_keys_and_refuse_unreadable_keys_in_one_line() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    let listing = run_python_script(SCRIPT, &["gen", &d, "table"]);
    let mut n = 0;
    for line in listing.lines().filter(|l| l.contains("table_zlib.h5")) {
        let (store, key) = line.split_once(' ').unwrap();
        let out = dir.path().join(format!(
            "table_zlib.h5~{}.parquet",
            key.trim_start_matches('/').replace('/', "~")
        ));
        ok(&["convert", &format!("{store}:{key}"), s(&out)]);
        n += 1;
    }
    let verdict = run_python_script(SCRIPT, &["check", &d]);
    let failures: Vec<&str> = verdict.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        verdict.contains(&format!("CHECKED {n}")) && n >= 23,
        "{verdict}"
    );
    let cat = ok(&["cat", &format!("{d}/table_zlib.h5:/cat")]);
    assert!(cat.contains("cat") && cat.contains("k0é"), "{cat}");

    // A key sciio cannot read (a Series of pandas before 0.10 whose datetime index does not
    // record its epoch unit): one line naming key and attribute, nothing written.
    let corpus = sciio_testkit::shared_corpus("pandas-legacy-hdf");
    let src = corpus.join("legacy.h5");
    let out = sciio(&[
        "convert",
        &format!("{}:/c", s(&src)),
        s(&dir.path().join("c.parquet")),
    ]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("/c/index") && err.contains("attribute kind"),
        "{err}"
    );
    assert!(!dir.path().join("c.parquet").exists());

    // A PeriodIndex of pandas 0.20 (Python 2 pickled offset), which pandas 3 itself no longer
    // opens, converts: pyarrow reads the PeriodIndex back.
    let src = corpus.join("periodindex_0.20.1_x86_64_darwin_2.7.13.h5");
    let out = dir.path().join("p.parquet");
    ok(&["convert", &format!("{}:/p", s(&src)), s(&out)]);
    let freq = run_python(
        "import sys, pandas as pd\nprint(pd.read_parquet(sys.argv[1]).index.dtype)",
        &[s(&out)],
    );
    assert_eq!(freq.trim(), "period[B]");

    // A group holding a plain PyTables table pandas reads (generic_table) converts like pandas.
    let native = corpus.join("pytables_native2.h5");
    let out = dir.path().join("det.parquet");
    ok(&["convert", &format!("{}:/detector", s(&native)), s(&out)]);
    let same = run_python(
        "import sys, pandas as pd\n\
         pd.testing.assert_frame_equal(pd.read_parquet(sys.argv[1]), pd.read_hdf(sys.argv[2], '/detector'), check_dtype=True, check_index_type=True); print('same')",
        &[s(&out), s(&native)],
    );
    assert_eq!(same.trim(), "same");
}

/// Complex columns (pandas stores them in both formats; Arrow and Parquet have no complex
/// type, and pandas' own `to_parquet` refuses them) and object columns of mixed kinds are left
/// out of the Parquet file with the reason on stderr, the other columns converted equal to
/// pandas' frame; `--strict` refuses before writing anything; `ls` names them.
#[test]
fn complex_and_mixed_columns_are_left_out_with_the_reason() {
    let dir = tempdir();
    let store = dir.path().join("c.h5");
    run_python(
        r#"
import sys, numpy as np, pandas as pd
p = sys.argv[1]
df = pd.DataFrame({'c': np.array([1 + 2j, 3, np.nan], dtype='complex128'), 'x': [1.0, 2.0, 3.0],
                   'm': pd.Series([1, 'a', None], dtype=object)})
df.to_hdf(p, key='fixed', format='fixed')
df[['c', 'x']].to_hdf(p, key='table', format='table')
"#,
        &[s(&store)],
    );
    for key in ["fixed", "table"] {
        let out = dir.path().join(format!("{key}.parquet"));
        let run = sciio(&["convert", &format!("{}:/{key}", s(&store)), s(&out)]);
        assert!(run.status.success(), "{run:?}");
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(err.contains("no complex type"), "{key}: {err}");
        if key == "fixed" {
            assert!(err.contains("only str and missing values"), "{key}: {err}");
        }
        let check = run_python(
            "import sys, pandas as pd\n\
             got = pd.read_parquet(sys.argv[1]); want = pd.read_hdf(sys.argv[2], sys.argv[3])[['x']]\n\
             pd.testing.assert_frame_equal(got, want, check_dtype=True, check_index_type=True)\n\
             print('same')",
            &[s(&out), s(&store), key],
        );
        assert_eq!(check.trim(), "same");
        let strict = dir.path().join(format!("{key}.strict.parquet"));
        let run = sciio(&[
            "convert",
            &format!("{}:/{key}", s(&store)),
            s(&strict),
            "--strict",
        ]);
        assert_eq!(run.status.code(), Some(1), "{run:?}");
        assert!(!strict.exists(), "--strict wrote {}", s(&strict));
    }
    let ls = ok(&["ls", s(&store)]);
    assert!(ls.contains("\"c\": left out (complex128 values"), "{ls}");
}

/// `fixed` frames of more rows than one batch (16 Ki) whose string blocks are read from
/// their pickles as streams: one string column, several, with missing values and non-ASCII
/// text, beside numeric blocks, a 2-d object block (read whole), pandas' masked `string`
/// (`pd.NA`: read whole), under every pickle protocol pandas may meet.
const MAKE_LONG_FIXED: &str = r#"
import sys, pickle, numpy as np, pandas as pd
d, rows = sys.argv[1], 150_001
words = np.array(["alpha", "ünïcødé ☃", "", "𝄞 x", "row"], dtype=object)
rng = np.random.default_rng(3)
def pick():
    return words[rng.integers(0, len(words), rows)]
s = pd.Series(pick(), dtype="str")
s[::7] = None
frames = {
    "one": pd.DataFrame({"s": pd.Series([f"row {i} " + "x" * (i % 17) for i in range(rows)], dtype="str")}),
    "mixed": pd.DataFrame({"n": np.arange(rows), "s": s, "x": rng.normal(size=rows),
                           "u": pd.Series(pick(), dtype="str")},
                          index=pd.date_range("2020-01-01", periods=rows, freq="min", tz="UTC")),
    "objects": pd.DataFrame({"a": pd.Series(pick(), dtype=object), "b": pd.Series(pick(), dtype=object),
                             "t": pd.Series(pick(), dtype="string")}),
}
frames["objects"].loc[3, "t"] = pd.NA
for name, df in frames.items():
    df.to_hdf(f"{d}/{name}.h5", key="df", format="fixed", mode="w")
    print(name)
"#;

/// sciio's Parquet file against what `pd.read_hdf(store, key).to_parquet(out)` writes (an
/// index's `freq` is not kept by Parquet).
const CHECK_PARQUET: &str = r#"
import sys, pandas as pd
got = pd.read_parquet(sys.argv[2])
pd.read_hdf(sys.argv[1], "df").to_parquet(sys.argv[2] + ".pandas.parquet")
want = pd.read_parquet(sys.argv[2] + ".pandas.parquet")
pd.testing.assert_frame_equal(got, want, check_dtype=True, check_index_type=True)
print("EQUAL", len(got))
"#;

#[test]
fn long_fixed_frames_stream_their_string_blocks_and_equal_read_hdf() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    let names = run_python(MAKE_LONG_FIXED, &[&d]);
    assert_eq!(names.lines().count(), 3, "{names}");
    for name in names.lines() {
        let store = format!("{d}/{name}.h5");
        let out = format!("{d}/{name}.parquet");
        ok(&["convert", &format!("{store}:/df"), &out]);
        let verdict = run_python(CHECK_PARQUET, &[&store, &out]);
        assert!(verdict.contains("EQUAL 150001"), "{name}: {verdict}");
        let ls = ok(&["ls", &store]);
        assert!(ls.contains("150001 rows"), "{name}: {ls}");
    }
}

/// A store over the size from which its keys are gathered slice by slice into `.npz` members
/// (32 MiB): a `table` key (data columns, text whose widest value comes last, NaN, booleans,
/// zoned datetimes, a complex column left out) and a `fixed` key of number blocks and a string
/// block.
const MAKE_LARGE_STORE: &str = r#"
import sys, numpy as np, pandas as pd
n = 400_000
k = np.arange(n)
df = pd.DataFrame({
    'i': k * 3,
    'x': np.where(k % 7 == 0, np.nan, k / 3),
    'y': (k % 11).astype('f4'),
    'b': k % 2 == 0,
    's': ['w' * 40 if v == n - 1 else 'v%d' % (v % 1000) for v in k],
    't': pd.date_range('2020-01-01', periods=n, freq='s', tz='Europe/Paris'),
}, index=pd.Index(k * 2, name='key'))
df.to_hdf(sys.argv[1], key='tab', format='table', data_columns=['i', 's'])
df.drop(columns=['t']).assign(c=k * 1j).to_hdf(sys.argv[1], key='fix', format='fixed')
"#;

/// Every member of the `.npz` (argv 2) equals its key's column or index level as
/// `pd.read_hdf` reads it from the store (argv 1); members named `key/column` when argv 3 is
/// `whole`, else the one key `tab`'s columns.
const CHECK_LARGE_STORE_NPZ: &str = r#"
import sys, numpy as np, pandas as pd
z = np.load(sys.argv[2], allow_pickle=False)
whole = sys.argv[3] == 'whole'
keys = ['tab', 'fix'] if whole else ['tab']
names = []
for key in keys:
    df = pd.read_hdf(sys.argv[1], key)
    prefix = key + '/' if whole else ''
    cols = {'key': df.index.to_series()}
    cols.update({c: df[c] for c in df.columns if c != 'c'})
    for name, v in cols.items():
        m = z[prefix + name]
        names.append(prefix + name)
        if name == 't':
            want = v.dt.tz_convert('UTC').dt.tz_localize(None).to_numpy().astype(m.dtype)
        elif name == 's':
            want = v.to_numpy().astype(str)
        else:
            want = v.to_numpy()
        assert m.dtype == want.dtype, (key, name, m.dtype, want.dtype)
        assert m.shape == want.shape, (key, name)
        assert np.array_equal(m, want, equal_nan=m.dtype.kind == 'f'), (key, name)
assert sorted(z.files) == sorted(names), (z.files, names)
print('EQUAL', len(names))
"#;

#[test]
fn large_stores_go_into_npz_key_by_key_and_equal_read_hdf() {
    let dir = tempdir();
    let store = dir.path().join("large.h5");
    run_python(MAKE_LARGE_STORE, &[s(&store)]);
    assert!(std::fs::metadata(&store).unwrap().len() > 32 << 20);
    // The whole store: both keys, the complex column left out with its reason.
    let npz = dir.path().join("all.npz");
    let out = sciio(&["convert", s(&store), s(&npz)]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    assert!(err.contains("left out") && err.contains("complex"), "{err}");
    let verdict = run_python(CHECK_LARGE_STORE_NPZ, &[s(&store), s(&npz), "whole"]);
    assert!(verdict.contains("EQUAL 13"), "{verdict}");
    // --strict refuses before writing.
    let strict = dir.path().join("strict.npz");
    let out = sciio(&["convert", s(&store), s(&strict), "--strict"]);
    assert!(!out.status.success() && !strict.exists());
    // One key.
    let one = dir.path().join("tab.npz");
    ok(&["convert", &format!("{}:/tab", s(&store)), s(&one)]);
    let verdict = run_python(CHECK_LARGE_STORE_NPZ, &[s(&store), s(&one), "key"]);
    assert!(verdict.contains("EQUAL 7"), "{verdict}");
}

/// `fixed` Series keys of more rows than one batch, read batch by batch: numbers over an
/// integer index (two batches of 16 MiB of rows), zoned times, text with `None` and `NaN`
/// (`str` and `object`) over a DatetimeIndex and a MultiIndex, numbers over a
/// CategoricalIndex with missing values; named and unnamed.
const MAKE_LONG_SERIES: &str = r#"
import sys, numpy as np, pandas as pd
d, rows, big = sys.argv[1], 150_001, 1_100_001
rng = np.random.default_rng(5)
words = np.array(["alpha", "ünïcødé ☃", "", "𝄞 x", "row"], dtype=object)
def pick():
    return words[rng.integers(0, len(words), rows)]
text = pd.Series(pick(), dtype="str", name="s",
                 index=pd.date_range("2020-01-01", periods=rows, freq="min", tz="UTC"))
text[::7] = None
objects = pd.Series(pick(), dtype=object, index=pd.MultiIndex.from_arrays(
    [np.arange(rows) % 5, pick()], names=["five", "word"]))
objects[::5] = None
objects[1::5] = np.nan
series = {
    "numbers": pd.Series(rng.normal(size=big), index=pd.Index(np.arange(big) * 3, name="k"), name="x"),
    "zoned": pd.Series(pd.date_range("2020-01-01", periods=rows, freq="min", tz="Europe/Paris")),
    "text": text,
    "objects": objects,
    "cats": pd.Series(np.arange(rows, dtype="i4"), name="c", index=pd.CategoricalIndex(
        [None if i % 9 == 0 else "abc"[i % 3] for i in range(rows)], categories=["c", "a", "b"])),
}
for name, s in series.items():
    s.to_hdf(f"{d}/{name}.h5", key="s", format="fixed", mode="w")
    print(name, len(s))
"#;

/// sciio's Parquet file of a Series key against what pandas writes of the Series read as a
/// one-column frame named after it: `pd.read_hdf(store, key).to_frame(name=...).to_parquet()`.
const CHECK_SERIES_PARQUET: &str = r#"
import sys, pandas as pd
got = pd.read_parquet(sys.argv[2])
s = pd.read_hdf(sys.argv[1], "s")
assert isinstance(s, pd.Series), type(s)
s.to_frame(name=s.name).to_parquet(sys.argv[2] + ".pandas.parquet")
want = pd.read_parquet(sys.argv[2] + ".pandas.parquet")
pd.testing.assert_frame_equal(got, want, check_dtype=True, check_index_type=True)
print("EQUAL", len(got))
"#;

#[test]
fn long_fixed_series_stream_into_parquet_and_equal_read_hdf() {
    let dir = tempdir();
    let d = s(dir.path()).to_string();
    let made = run_python(MAKE_LONG_SERIES, &[&d]);
    assert_eq!(made.lines().count(), 5, "{made}");
    for line in made.lines() {
        let (name, rows) = line.split_once(' ').unwrap();
        let store = format!("{d}/{name}.h5");
        let out = format!("{d}/{name}.parquet");
        ok(&["convert", &format!("{store}:/s"), &out]);
        let verdict = run_python(CHECK_SERIES_PARQUET, &[&store, &out]);
        assert!(
            verdict.contains(&format!("EQUAL {rows}")),
            "{name}: {verdict}"
        );
        let ls = ok(&["ls", &store]);
        assert!(
            ls.contains(&format!("fixed series, {rows} rows")),
            "{name}: {ls}"
        );
    }
}
