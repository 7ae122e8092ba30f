//! A process stopped by a signal removes its registered temporary files: the test re-runs this
//! binary as a child that registers a file and then raises the signal.

use std::path::PathBuf;
use std::process::Command;

const CHILD: &str = "SCIIO_TEMP_SIGNAL_CHILD";

/// In the child: register the file named by the environment, install the handlers, raise.
#[test]
fn child_registers_and_raises() {
    let Some(spec) = std::env::var_os(CHILD) else {
        return; // only meaningful as the child of `signal_removes_registered_files`
    };
    let spec = spec.to_string_lossy().into_owned();
    let (signal, path) = spec.split_once(':').expect("SIGNAL:PATH");
    let path = PathBuf::from(path);
    std::fs::write(&path, b"half-written").expect("write");
    let _registration = sciio_temp::register(&path);
    sciio_temp::remove_on_signals();
    let signal: i32 = signal.parse().expect("signal number");
    // SAFETY: raising a signal in a test child; the handler removes the file and re-raises.
    unsafe { libc::raise(signal) };
    unreachable!("the signal ends the process");
}

#[test]
fn signal_removes_registered_files() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    for signal in [
        libc::SIGTERM,
        libc::SIGINT,
        libc::SIGSEGV,
        libc::SIGFPE,
        libc::SIGABRT,
    ] {
        let path = dir.path().join(format!(".sciio-{signal}.tmp"));
        let status = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_registers_and_raises", "--nocapture"])
            .env(CHILD, format!("{signal}:{}", path.display()))
            .status()
            .unwrap();
        assert_eq!(
            status.signal(),
            Some(signal),
            "the child ends by signal {signal}"
        );
        assert!(
            !path.exists(),
            "signal {signal} left {} behind",
            path.display()
        );
    }
}
