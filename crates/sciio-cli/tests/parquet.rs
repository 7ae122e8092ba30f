//! `sciio` on Parquet files pandas writes (the `parquet` feature, on by default).
#![cfg(feature = "parquet")]

use std::path::Path;
use std::process::{Command, Output};

use sciio_testkit::{run_python, tempdir};

fn sciio(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sciio"))
        .args(args)
        .output()
        .expect("cannot run the sciio binary")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn ls_shows_a_pandas_frame_and_convert_refuses_it_by_name() {
    let dir = tempdir();
    let pq = dir.path().join("frame.parquet");
    run_python(
        "import sys, pandas as pd; pd.DataFrame({'city': ['a', 'b', 'c'], 'temp': [1.5, 2.5, 3.5], 'n': [1, 2, 3]}).to_parquet(sys.argv[1])",
        &[s(&pq)],
    );
    let out = sciio(&["ls", s(&pq)]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("parquet") && text.contains("frame"), "{text}");
    assert!(
        text.contains("3 columns") && text.contains("(3, 3)"),
        "{text}"
    );

    let dst = dir.path().join("x.npz");
    let out = sciio(&["convert", s(&pq), s(&dst)]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("data frame") && err.contains(s(&pq)), "{err}");
    assert!(!dst.exists());
    let out = sciio(&["cat", s(&pq)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("data frame"));
}
