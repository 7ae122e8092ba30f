//! The Parquet census: every `.parquet` file of apache/parquet-testing's `data/` (committed
//! under `crates/sciio-pandas/tests/data/parquet-testing/`) and of pyarrow's own
//! `tests/data/parquet` (from the installed wheel). For each file pandas reads, `sciio ls` and
//! `sciio cat` succeed and `pd.read_parquet` of `sciio convert FILE copy.parquet` equals
//! `pd.read_parquet(FILE)` (`check_dtype=True`, exact values); each file pandas cannot read is
//! refused by sciio in one line, or is listed below with why sciio reads it. No file is
//! skipped: every outcome other than "equal in pandas" is named here with its reason.
#![cfg(feature = "parquet")]

mod common;
use common::{ok, s, sciio};

use std::path::{Path, PathBuf};

use sciio_testkit::{run_python_script, tempdir, wheel_files};

/// parquet-testing's files, as committed.
fn testing_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sciio-pandas/tests/data/parquet-testing")
}

/// Files pandas refuses that sciio reads, and why that is right.
const PANDAS_REFUSES_SCIIO_READS: &[(&str, &str)] = &[
    (
        "incorrect_map_schema.parquet",
        "a MAP whose key field is optional (the spec says required); pyarrow refuses it \
         (\"Map keys must be annotated as required\"), arrow-rs reads the map",
    ),
    (
        "nested_structs.rust.parquet",
        "pyarrow reads the table, pandas fails converting a timestamp of year 52951 to a Python \
         datetime; sciio keeps the microsecond value",
    ),
];

/// Files pandas reads whose round trip pandas reads with other values, and why.
const VALUES_DIFFER: &[(&str, &str, &str)] = &[(
    "int96_from_spark.parquet",
    "values are different (16.66667 %)",
    "one INT96 value of year 290000 (Spark) whose Julian day is stored beyond 2^31: neither \
     reading means anything in datetime64[ns]; pyarrow takes the day as unsigned, arrow-rs as \
     signed, and the two wrapped nanosecond counts differ. The five other values are equal.",
)];

/// Files pandas reads that sciio refuses, and why: pyarrow does not verify page checksums
/// unless asked (`page_checksum_verification=True`, then it refuses these too); sciio always
/// verifies a page's CRC when the page has one, so a damaged page is never read as data.
const CORRUPT_CHECKSUMS: &[&str] = &[
    "datapage_v1-corrupt-checksum.parquet",
    "rle-dict-uncompressed-corrupt-checksum.parquet",
];

fn parquet_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            parquet_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "parquet") {
            out.push(p);
        }
    }
}

/// One JSON object per line of a census script's output.
fn json_lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn name_of(p: &Path) -> &str {
    p.file_name().unwrap().to_str().unwrap()
}

/// A failed `sciio` run in one line, for the census report.
fn failure(args: &[&str]) -> Option<String> {
    let out = sciio(args);
    if out.status.success() {
        return None;
    }
    Some(format!(
        "sciio {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}

/// Checks a file pandas refuses: sciio refuses it too, in one line, unless it is documented.
fn check_refused(file: &Path, pandas_error: &str, problems: &mut Vec<String>) {
    let name = name_of(file);
    let documented = PANDAS_REFUSES_SCIIO_READS.iter().any(|(n, _)| *n == name);
    let out = sciio(&["cat", s(file)]);
    let err = String::from_utf8_lossy(&out.stderr);
    match (out.status.success(), documented) {
        (true, true) => {}
        (true, false) => problems.push(format!(
            "{name}: pandas refuses it ({pandas_error}), sciio reads it: document why"
        )),
        (false, true) => problems.push(format!(
            "{name}: documented as read by sciio, but refused: {}",
            err.trim()
        )),
        (false, false) => {
            if out.status.code() != Some(1) || err.lines().count() != 1 {
                problems.push(format!("{name}: not a one-line refusal: {err}"));
            }
        }
    }
}

#[test]
fn every_parquet_testing_and_pyarrow_file_pandas_reads_round_trips_equal_in_pandas() {
    let mut files = Vec::new();
    parquet_files(&testing_dir(), &mut files);
    assert!(
        files.len() >= 70,
        "only {} parquet-testing files",
        files.len()
    );
    let shipped = wheel_files("pyarrow/tests/data/parquet", ".parquet");
    assert!(
        !shipped.is_empty(),
        "the pyarrow wheel ships no tests/data/parquet files"
    );
    files.extend(shipped);

    let mut argv = vec!["readable"];
    argv.extend(files.iter().map(|p| s(p)));
    let verdicts = json_lines(&run_python_script("python/parquet_census.py", &argv));
    assert_eq!(verdicts.len(), files.len());

    let dir = tempdir();
    let mut problems = Vec::new();
    let mut pairs: Vec<PathBuf> = Vec::new();
    let mut refused_by_pandas = Vec::new();
    for (i, (file, verdict)) in files.iter().zip(&verdicts).enumerate() {
        let name = name_of(file);
        if let Some(e) = verdict["error"].as_str() {
            refused_by_pandas.push(name.to_string());
            check_refused(file, e, &mut problems);
            continue;
        }
        if CORRUPT_CHECKSUMS.contains(&name) {
            if verdict["checksum_error"] != true {
                problems.push(format!("{name}: pyarrow does not see a bad checksum in it"));
            }
            let out = sciio(&["cat", s(file)]);
            let err = String::from_utf8_lossy(&out.stderr);
            if out.status.code() != Some(1)
                || err.lines().count() != 1
                || !err.contains("CRC checksum mismatch")
                || !err.contains("column")
            {
                problems.push(format!("{name}: not refused for its checksum: {err}"));
            }
            continue;
        }
        let copy = dir.path().join(format!("{i:03}-{name}"));
        let runs: [&[&str]; 3] = [
            &["ls", s(file)],
            &["cat", s(file)],
            &["convert", s(file), s(&copy)],
        ];
        match runs.iter().find_map(|args| failure(args)) {
            Some(f) => problems.push(format!("{name}: {f}")),
            None => {
                pairs.push(file.clone());
                pairs.push(copy);
            }
        }
    }
    let mut argv = vec!["compare"];
    argv.extend(pairs.iter().map(|p| s(p)));
    for verdict in json_lines(&run_python_script("python/parquet_census.py", &argv)) {
        let name = name_of(Path::new(verdict["file"].as_str().unwrap())).to_string();
        let documented = VALUES_DIFFER.iter().find(|(n, _, _)| *n == name);
        match (verdict["error"].as_str(), documented) {
            (None, None) => {}
            (Some(e), Some((_, said, _))) if e.contains(said) => {}
            (Some(e), _) => problems.push(format!("{name}: round trip differs in pandas: {e}")),
            (None, Some(_)) => problems.push(format!("{name}: documented to differ, but equal")),
        }
    }
    for (name, _) in PANDAS_REFUSES_SCIIO_READS {
        assert!(
            refused_by_pandas.iter().any(|n| n == name),
            "{name} is documented as refused by pandas, which reads it now"
        );
    }
    assert!(
        problems.is_empty(),
        "{} of {} files:\n{}",
        problems.len(),
        files.len(),
        problems.join("\n")
    );
    // the files arrow-rs refused before sciio repaired their footers
    let listed = ok(&[
        "ls",
        s(&testing_dir().join("dict-page-offset-zero.parquet")),
    ]);
    assert!(listed.contains("l_partkey"), "{listed}");
    let printed = ok(&[
        "cat",
        s(&testing_dir().join("nation.dict-malformed.parquet")),
    ]);
    assert!(printed.contains("25 rows"), "{printed}");
    // the census really compared most files
    assert!(
        pairs.len() / 2 + 5 >= files.len(),
        "{} compared",
        pairs.len() / 2
    );
}

/// Files of the matrix whose round trip pandas reads differently, and why.
const MATRIX_DIFFERS: &[(&str, &str, &str)] = &[
    (
        "fp_empty.parquet",
        "inferred_type",
        "a fastparquet file without rows (no row groups; arrow-rs refused its footer before \
         sciio re-read it): fastparquet's engine makes up categories range(0, n), object strings \
         and an index of inferred type 'empty'; sciio's copy keeps the column types, with no \
         categories since the file holds none",
    ),
    (
        "fp_json.parquet",
        "Attribute \"dtype\" are different",
        "fastparquet's object_encoding='json' column: pandas' default engine reads the \
         original's JSON logical type as object, sciio's copy (a string column) as str; the \
         text is the same",
    ),
];

/// The matrix of python/gen_parquet_cases.py: frames of every pandas dtype (tz-aware and
/// fixed-offset zones, nullable, categorical, timedelta, decimal, MultiIndex rows and columns)
/// written by pandas + pyarrow with every codec, and by fastparquet (its own metadata flavour,
/// `times='int96'`, its codecs). Each file is listed, printed and converted by `sciio`, the
/// copies with every codec in turn; `pd.read_parquet(copy)` equals pandas' reading of the
/// original (fastparquet's files read with fastparquet's engine, which restores its flavour).
#[test]
fn pandas_and_fastparquet_matrix_round_trips_equal_in_pandas() {
    let dir = tempdir();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    run_python_script("python/gen_parquet_cases.py", &[s(&src)]);
    let mut files = Vec::new();
    parquet_files(&src, &mut files);
    files.retain(|f| name_of(f) != "refused_objects.parquet");
    assert!(files.len() >= 40, "{} files", files.len());
    let codecs = ["snappy", "zstd:3", "gzip:9", "brotli:5", "lz4", "none"];
    let mut problems = Vec::new();
    let mut pairs = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let name = name_of(file);
        let copy = dir.path().join(name);
        let codec = codecs[i % codecs.len()];
        let runs: [&[&str]; 3] = [
            &["ls", s(file)],
            &["cat", s(file)],
            &["convert", s(file), s(&copy), "--compress", codec],
        ];
        match runs.iter().find_map(|args| failure(args)) {
            Some(f) => problems.push(format!("{name}: {f}")),
            None => {
                pairs.push(file.clone());
                pairs.push(copy);
            }
        }
    }
    let mut argv = vec!["compare"];
    argv.extend(pairs.iter().map(|p| s(p)));
    let verdicts = json_lines(&run_python_script("python/parquet_census.py", &argv));
    assert_eq!(verdicts.len(), pairs.len() / 2);
    for verdict in verdicts {
        let name = name_of(Path::new(verdict["file"].as_str().unwrap())).to_string();
        let documented = MATRIX_DIFFERS.iter().find(|(n, _, _)| *n == name);
        match (verdict["error"].as_str(), documented) {
            (None, None) => {}
            (Some(e), Some((_, said, _))) if e.contains(said) => {}
            (Some(e), _) => problems.push(format!("{name}: round trip differs in pandas: {e}")),
            (None, Some(_)) => problems.push(format!("{name}: documented to differ, but equal")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every parquet-testing and pyarrow file into MAT (v7 and v7.3) converts exactly when it
/// converts into `.npz` (the columns a frame → MAT writes): what MATLAB has no class for is
/// left out with a report, never the whole file; a file refused is refused in one line,
/// naming it; no panic, no temporary file left behind.
#[cfg(feature = "mat")]
#[test]
fn every_parquet_testing_and_pyarrow_file_goes_into_mat_as_into_npz() {
    let mut files = Vec::new();
    parquet_files(&testing_dir(), &mut files);
    files.extend(wheel_files("pyarrow/tests/data/parquet", ".parquet"));
    assert!(files.len() >= 70, "only {} Parquet files", files.len());
    let dir = tempdir();
    let mut problems = Vec::new();
    let (mut converted, mut reported) = (0, 0);
    for file in &files {
        let npz = sciio(&["convert", s(file), s(&dir.path().join("x.npz"))]);
        for version in ["7", "7.3"] {
            let mat = dir.path().join(format!("x{version}.mat"));
            let out = sciio(&["convert", s(file), s(&mat), "--mat-version", version]);
            let err = String::from_utf8_lossy(&out.stderr);
            let name = name_of(file);
            match (out.status.code(), npz.status.success()) {
                (Some(0), true) => {
                    converted += 1;
                    reported += usize::from(err.contains("left out"));
                    if err.lines().any(|l| !l.starts_with("sciio: left out")) {
                        problems.push(format!("{name} v{version}: stderr {err}"));
                    }
                }
                (Some(1), false) if err.lines().count() == 1 && err.contains(name) => {}
                (code, npz_ok) => problems.push(format!(
                    "{name} v{version}: exit {code:?} (into .npz ok: {npz_ok}): {err}"
                )),
            }
        }
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".sciio"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Most convert, and some leave columns out with a report (nested, binary, times...).
    assert!(converted >= 2 * 70, "{converted} conversions into MAT");
    assert!(reported > 0, "no file left anything out with a report");
}
