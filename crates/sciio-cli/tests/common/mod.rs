//! Helpers shared by the CLI test binaries: run the built `sciio` binary and read its output.

use std::path::Path;
use std::process::Output;

/// Runs the `sciio` binary built for this test with `args`.
pub fn sciio(args: &[&str]) -> Output {
    sciio_testkit::child_command(env!("CARGO_BIN_EXE_sciio"))
        .args(args)
        .output()
        .expect("cannot run the sciio binary")
}

/// Runs `sciio` and returns its stdout, failing the test with its stderr when it fails.
pub fn ok(args: &[&str]) -> String {
    let out = sciio(args);
    assert!(
        out.status.success(),
        "sciio {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A path as the `&str` argument the CLI takes.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
