//! `sciio sql`: the same queries as pandas does them by hand (python/sql_cases.py), over a
//! PyTables table and array, HDFStore table and fixed keys, .npy, .npz members and Parquet,
//! results written with `--out`; the printed table; errors.
#![cfg(feature = "sql")]

mod common;

use common::{ok, s, sciio};

/// Runs `sciio` in `dir` (the cases name their files relative to it).
fn sciio_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    sciio_testkit::child_command(env!("CARGO_BIN_EXE_sciio"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("cannot run the sciio binary")
}

/// Writes the cases' sources into `dir`.
fn make_sources(dir: &std::path::Path) {
    sciio_testkit::run_python_script("python/sql_cases.py", &["make", s(dir)]);
}

#[test]
fn every_query_shape_gives_what_pandas_gives() {
    let dir = sciio_testkit::tempdir();
    make_sources(dir.path());
    let listed = sciio_testkit::run_python_script("python/sql_cases.py", &["list"]);
    let cases: Vec<(String, String)> = serde_json::from_str(&listed).unwrap();
    assert!(cases.len() >= 10, "{} cases", cases.len());
    for (name, sql) in &cases {
        let out = format!("{name}.parquet");
        let run = sciio_in(dir.path(), &["sql", sql, "--out", &out]);
        assert!(
            run.status.success(),
            "{name}: sciio sql {sql:?} failed: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let said = String::from_utf8_lossy(&run.stdout);
        assert!(said.starts_with(&format!("{out}: wrote ")), "{said}");
    }
    let checked =
        sciio_testkit::run_python_script("python/sql_cases.py", &["check", s(dir.path())]);
    assert!(
        checked.contains(&format!("{} passed, 0 failed", cases.len())),
        "{checked}"
    );
}

#[test]
fn a_result_prints_as_a_table_with_named_tables() {
    let dir = sciio_testkit::tempdir();
    make_sources(dir.path());
    // A named table given by an absolute path: the query runs from anywhere.
    let runs = format!("runs={}:/t", s(&dir.path().join("run.h5")));
    let text = ok(&[
        "sql",
        "SELECT grp, count(*) AS n FROM runs WHERE grp < 2 GROUP BY grp ORDER BY grp",
        "--table",
        &runs,
    ]);
    let rows: Vec<&str> = text.lines().collect();
    // Header, rule, two rows inside the box: 3000 rows, grp = id % 5.
    assert_eq!(rows.len(), 6, "{text}");
    assert!(rows[1].contains("grp") && rows[1].contains(" n "), "{text}");
    assert_eq!(rows[3], "│   0 ┆ 600 │", "{text}");
    assert_eq!(rows[4], "│   1 ┆ 600 │", "{text}");
}

#[test]
fn bad_queries_are_one_line_errors() {
    let dir = sciio_testkit::tempdir();
    make_sources(dir.path());
    for (sql, says) in [
        ("SELECT nope FROM 's.npy'", "nope"),
        ("SELECT * FROM 'missing.npy'", "missing.npy"),
        ("SELEC 1", "SELEC"),
        ("SELECT * FROM 'run.h5:/nothing'", "nothing"),
    ] {
        let run = sciio_in(dir.path(), &["sql", sql]);
        assert_eq!(run.status.code(), Some(1), "{sql}");
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(
            err.starts_with("sciio: error: ") && err.contains(says),
            "{sql}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let no_query = sciio(&["sql"]);
    assert_eq!(no_query.status.code(), Some(2));
    let bad_name = sciio(&["sql", "SELECT 1", "--table", "no-equals-sign"]);
    assert_eq!(bad_name.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad_name.stderr).contains("NAME=FILE[:NODE]"));
}
