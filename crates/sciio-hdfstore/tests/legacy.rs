//! The real old stores of `../shared/corpus/pandas-legacy-hdf/` (pandas 0.10–0.25, Python 2
//! pickles, plain PyTables tables): every key pandas reads gives an equal frame; every other
//! key gives a frame or a one-line reason, never a panic.

use sciio_hdfstore::HdfStore;
use sciio_pandas::{write_frame, ParquetOptions};
use sciio_testkit::{run_python, run_python_script, shared_corpus, tempdir};

const PANDAS_KEYS: &str = r#"
import sys, os, warnings, pandas as pd
warnings.simplefilter("ignore")
for name in sorted(os.listdir(sys.argv[1])):
    p = os.path.join(sys.argv[1], name)
    try:
        with pd.HDFStore(p, mode="r") as st:
            keys = st.keys()
    except Exception:
        continue
    for k in keys:
        try:
            pd.read_hdf(p, k)
            print(name, k, "pandas-reads")
        except Exception:
            print(name, k, "pandas-fails")
"#;

#[test]
fn legacy_stores_read_or_give_one_line_reasons() {
    let corpus = shared_corpus("pandas-legacy-hdf");
    let dir = tempdir();
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "h5"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for f in &files {
        std::fs::copy(f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    let d = dir.path().to_string_lossy().into_owned();
    let verdicts = run_python(PANDAS_KEYS, &[&d]);
    let (mut frames, mut reasons, mut pandas_reads) = (0, Vec::new(), 0);
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let store = match HdfStore::open(dir.path().join(&name)) {
            Ok(s) => s,
            Err(e) => {
                let line = e.to_string();
                assert_eq!(line.lines().count(), 1, "{line}");
                reasons.push(line);
                continue;
            }
        };
        let keys = match store.keys() {
            Ok(k) => k,
            Err(e) => {
                let line = e.to_string();
                assert_eq!(line.lines().count(), 1, "{line}");
                reasons.push(line);
                continue;
            }
        };
        for key in keys {
            let verdict = verdicts
                .lines()
                .find(|l| l.starts_with(&format!("{name} {} ", key.key)));
            let reads = verdict.is_some_and(|v| v.ends_with("pandas-reads"));
            match store.read(&key.key) {
                Ok(frame) => {
                    frames += 1;
                    let out = dir.path().join(format!(
                        "{name}~{}.parquet",
                        key.key.trim_start_matches('/').replace('/', "~")
                    ));
                    if reads {
                        pandas_reads += 1;
                        write_frame(&out, &frame, &ParquetOptions::default()).unwrap();
                    }
                }
                Err(e) => {
                    let line = e.to_string();
                    assert_eq!(line.lines().count(), 1, "{line}");
                    assert!(line.contains(&key.key), "{line}");
                    assert!(!reads, "pandas reads {name}:{}, sciio: {line}", key.key);
                    reasons.push(line);
                }
            }
        }
    }
    // Keys pandas reads: equal frames.
    let verdict = run_python_script("python/hdfstore_cases.py", &["check", &d]);
    let failures: Vec<&str> = verdict.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        pandas_reads >= 1 && verdict.contains(&format!("CHECKED {pandas_reads}")),
        "{verdict}"
    );
    // Keys today's pandas cannot open: some read, the others refused in one line.
    assert!(frames > pandas_reads, "{frames} frames");
    assert!(!reasons.is_empty());
    eprintln!("{frames} frames; reasons:\n{}", reasons.join("\n"));
}

/// Values of old keys today's pandas cannot open, checked against the raw PyTables data.
#[test]
fn legacy_python2_fixed_frame_values() {
    let corpus = shared_corpus("pandas-legacy-hdf");
    let store = HdfStore::open(corpus.join("legacy_table_fixed_py2.h5")).unwrap();
    let frame = store.read("/df").unwrap();
    let text = frame.to_text(10).unwrap();
    assert!(
        text.contains("INDEX_NAME") && text.contains("ABC"),
        "{text}"
    );
    let a = frame.strings("A").unwrap();
    let c = frame.strings("C").unwrap();
    assert_eq!((a[0].as_deref(), c[0].as_deref()), (Some("1"), Some("3")));

    let store = HdfStore::open(corpus.join("gh26443.h5")).unwrap();
    let frame = store.read("/key").unwrap();
    let raw = run_python(
        "import sys, tables\nh = tables.open_file(sys.argv[1])\nprint(h.root.key.axis1[0], h.root.key.axis1._v_attrs.tz.decode())",
        &[&corpus.join("gh26443.h5").to_string_lossy()],
    );
    let index = frame.index_arrays().unwrap();
    let ts = index[0]
        .1
        .as_any()
        .downcast_ref::<arrow_array::TimestampNanosecondArray>()
        .unwrap();
    assert_eq!(
        format!("{} {}", ts.value(0), ts.timezone().unwrap()),
        raw.trim()
    );

    // pandas before 0.10: a Series with a string index reads; a datetime index (epoch unit
    // not recorded) is refused naming the attribute.
    let store = HdfStore::open(corpus.join("legacy.h5")).unwrap();
    let frame = store.read("/a").unwrap();
    let raw = run_python(
        "import sys, tables\nh = tables.open_file(sys.argv[1])\nprint(h.root.a.index[0].decode(), repr(float(h.root.a.values[0])))",
        &[&corpus.join("legacy.h5").to_string_lossy()],
    );
    let first = frame.strings("0").unwrap()[0].clone().unwrap();
    let index = frame.index_arrays().unwrap();
    let idx = index[0]
        .1
        .as_any()
        .downcast_ref::<arrow_array::StringArray>()
        .unwrap();
    assert_eq!(format!("{} {}", idx.value(0), first), raw.trim());
    let e = store.read("/c").unwrap_err().to_string();
    assert!(
        e.contains("/c/index") && e.contains("attribute kind"),
        "{e}"
    );

    // A PeriodIndex (its frequency an offset pickled by Python 2 pandas): the ordinals as
    // PyTables stores them, the frequency of the pickled BusinessDay.
    let path = corpus.join("periodindex_0.20.1_x86_64_darwin_2.7.13.h5");
    let store = HdfStore::open(&path).unwrap();
    let frame = store.read("/p").unwrap();
    let raw = run_python(
        "import sys, tables\nh = tables.open_file(sys.argv[1])\nprint(' '.join(str(v) for v in h.root.p.axis1[:]))",
        &[&path.to_string_lossy()],
    );
    let index = frame.index_arrays().unwrap();
    let ordinals = index[0]
        .1
        .as_any()
        .downcast_ref::<arrow_array::Int64Array>()
        .unwrap();
    let got: Vec<String> = ordinals.values().iter().map(|v| v.to_string()).collect();
    assert_eq!(got.join(" "), raw.trim());
    let field = frame
        .schema()
        .arrow_schema()
        .fields()
        .iter()
        .find(|f| f.name().starts_with("__index"))
        .unwrap()
        .clone();
    assert_eq!(sciio_pandas::period_freq(&field).as_deref(), Some("B"));
}
