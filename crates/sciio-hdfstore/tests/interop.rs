//! Stores written by pandas 3 + PyTables in the test venv (python/hdfstore_cases.py): every key
//! read by sciio and written as Parquet reads back in pandas equal to `pd.read_hdf`
//! (`assert_frame_equal`, dtypes and index types checked). Complex columns and object columns of
//! mixed kinds are left out, each with its reason (the script drops them from pandas' frame).

use std::path::Path;

use sciio_hdfstore::HdfStore;
use sciio_pandas::{write_frame, ParquetOptions};
use sciio_testkit::{run_python_script, tempdir};

const SCRIPT: &str = "python/hdfstore_cases.py";

/// Generates the `format` stores, converts every key, and returns pandas' verdicts.
fn roundtrip(format: &str) -> (usize, Vec<String>) {
    let dir = tempdir();
    let d = dir.path().to_string_lossy().into_owned();
    let listing = run_python_script(SCRIPT, &["gen", &d, format]);
    let mut errors = Vec::new();
    let mut keys = 0;
    for line in listing.lines() {
        let Some((store, key)) = line.split_once(' ') else {
            continue;
        };
        keys += 1;
        let name = Path::new(store).file_name().unwrap().to_string_lossy();
        let out = dir.path().join(format!(
            "{name}~{}.parquet",
            key.trim_start_matches('/').replace('/', "~")
        ));
        let result = HdfStore::open(store)
            .and_then(|s| s.read_leaving_out(key))
            .and_then(|(frame, left_out)| {
                for c in &left_out {
                    let why = if c.column.starts_with('c') {
                        "no complex type"
                    } else {
                        "only str and missing values"
                    };
                    assert!(
                        ["c64", "c128", "m"].contains(&c.column.as_str()) && c.reason.contains(why),
                        "{name}:{key}: {c:?}"
                    );
                }
                if key.contains("complex") {
                    assert_eq!(left_out.len(), 2, "{name}:{key}: {left_out:?}");
                }
                if key.ends_with("/mixed") {
                    assert_eq!(left_out.len(), 1, "{name}:{key}: {left_out:?}");
                }
                write_frame(&out, &frame, &ParquetOptions::default())
            });
        if let Err(e) = result {
            errors.push(format!("{name}:{key}: {e}"));
        }
    }
    let verdict = run_python_script(SCRIPT, &["check", &d]);
    errors.extend(
        verdict
            .lines()
            .filter(|l| l.starts_with("FAIL"))
            .map(String::from),
    );
    let checked = verdict
        .lines()
        .find_map(|l| l.strip_prefix("CHECKED "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert_eq!(
        checked + errors.iter().filter(|e| !e.starts_with("FAIL")).count(),
        keys
    );
    (checked, errors)
}

#[test]
fn fixed_stores_read_as_pandas_reads_them() {
    let (checked, errors) = roundtrip("fixed");
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // 43 cases of both formats (frames and series over every index kind, strings with
    // pandas 3.1's sentinels) + 7 fixed-only (dates, mixed objects, column MultiIndex,
    // CategoricalIndex, numeric column labels).
    assert!(checked >= 3 * 50, "only {checked} keys checked");
}

#[test]
fn table_stores_read_as_pandas_reads_them() {
    let (checked, errors) = roundtrip("table");
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // 42 cases of both formats (pandas writes no table for an empty frame) + 9 table-only
    // (categoricals, data columns, sentinels of data columns, a caller's and a pre-3.1 nan_rep).
    assert!(checked >= 3 * 51, "only {checked} keys checked");
}
