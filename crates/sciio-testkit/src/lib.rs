//! Test support for sciio: runs the reference Python tools (numpy, PyTables, h5py, hdf5storage,
//! pandas, pyarrow...) installed by `./dev setup` into the project venv, and finds the test files
//! shipped inside their wheels.
//!
//! Interop tests never skip: when the venv or a tool is missing they fail and say what to run.
//! Panicking is how a test reports failure, so this crate panics freely.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SETUP_HINT: &str = "interop tests need the reference tools: run `./dev setup` \
(it creates .venv with numpy, PyTables, h5py, hdf5storage, pandas, pyarrow...)";

/// The repository root (the folder holding the workspace `Cargo.toml`).
pub fn repo_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .nth(2)
        .expect("crates/sciio-testkit lives two levels below the root")
        .to_path_buf()
}

/// A folder of the shared test corpus (`../shared/corpus/<sub>` beside the repository, where
/// CI and the developers' machines have it). Fails the test when it is missing.
pub fn shared_corpus(sub: &str) -> PathBuf {
    let path = repo_root()
        .parent()
        .map(|p| p.join("shared/corpus").join(sub))
        .expect("the repository has a parent folder");
    assert!(
        path.is_dir(),
        "the shared corpus {} is missing: it lives in shared/ beside the repository",
        path.display()
    );
    path
}

/// The venv's Python interpreter: `$SCIIO_PYTHON`, else `.venv/bin/python` under the root.
/// Panics (fails the test) with set-up instructions when it does not exist.
pub fn python() -> PathBuf {
    let path = std::env::var_os("SCIIO_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/python"));
    assert!(
        path.exists(),
        "{} ({} not found)",
        SETUP_HINT,
        path.display()
    );
    path
}

/// Runs `python -c code args...` and returns its stdout. Fails the test with the script's stderr
/// when it exits non-zero.
///
/// A process that imported both PyTables and pyarrow sometimes aborts while the interpreter
/// shuts down, after the script has run to its end ("terminate called without an active
/// exception", SIGABRT from a C++ thread left joinable; seen about once in a dozen runs of
/// pandas' own files on a loaded machine). Such a run is made once more; any other failure, or
/// the same abort twice, fails the test.
pub fn run_python(code: &str, args: &[&str]) -> String {
    let mut output = python_output(code, args);
    if aborted_in_teardown(&output) {
        output = python_output(code, args);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python failed ({}):\n{}\nif a module is missing: {}",
        output.status,
        stderr,
        SETUP_HINT
    );
    String::from_utf8(output.stdout).expect("python printed non-UTF-8")
}

fn python_output(code: &str, args: &[&str]) -> std::process::Output {
    venv_command(&python())
        .arg("-c")
        .arg(code)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("failed to start the venv's python")
}

/// A command running `program` as a child of a test that inherits no descriptor but its
/// standard streams.
///
/// Why: libhdf5 opens a file without `O_CLOEXEC` and `flock`s it, and sciio can mark the
/// descriptor close-on-exec only once the open returns. A child spawned by one test thread
/// while another thread is inside `H5Fopen`/`H5Fcreate` would inherit that descriptor, and
/// with it the lock, for as long as the child lives: CI saw h5py fail with "unable to lock
/// file, errno = 11" on a file sciio had just closed. Here every descriptor above 2 is made
/// close-on-exec in the child before its exec, so the child holds such a copy only for the
/// moment between its fork and its exec, which sciio's opens wait out.
pub fn child_command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(program);
    // SAFETY: the closure runs in the forked child before exec and only makes one system
    // call (async-signal-safe), touching no memory of the parent's.
    unsafe {
        command.pre_exec(|| {
            // Linux 5.11 and later; elsewhere the call fails, or is not made, and the child
            // inherits what std lets it (every descriptor without close-on-exec).
            #[cfg(target_os = "linux")]
            let _ = libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            Ok(())
        });
    }
    command
}

/// A [`child_command`] running `program`, a reference tool of the venv (python, ptrepack...),
/// with libhdf5's file locking off in it: the tests exchange files with these tools one after
/// the other, never concurrently, so the lock protects nothing there, and a lock some other
/// process still holds for a moment must not fail the tool's open. sciio's own opens keep
/// their locking (`file_lock.rs`).
pub fn venv_command(program: &Path) -> Command {
    let mut command = child_command(program);
    command.env("HDF5_USE_FILE_LOCKING", "FALSE");
    command
}

/// The C++ runtime's abort at interpreter shutdown described at [`run_python`].
fn aborted_in_teardown(output: &std::process::Output) -> bool {
    use std::os::unix::process::ExitStatusExt;
    output.status.signal() == Some(6)
        && String::from_utf8_lossy(&output.stderr)
            .trim_end()
            .ends_with("terminate called without an active exception")
}

/// Runs a Python script file under the root (e.g. `python/gen_npy_golden.py`) with arguments.
pub fn run_python_script(script: &str, args: &[&str]) -> String {
    let path = repo_root().join(script);
    assert!(path.exists(), "missing script {}", path.display());
    let code = format!(
        "import runpy, sys; sys.argv = [{:?}] + sys.argv[1:]; runpy.run_path({:?}, run_name='__main__')",
        path.display().to_string(),
        path.display().to_string()
    );
    run_python(&code, args)
}

/// The venv's site-packages folder (where wheels ship their test data).
pub fn site_packages() -> PathBuf {
    let out = run_python(
        "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        &[],
    );
    PathBuf::from(out.trim())
}

/// Files in `site-packages/<sub>` whose names end with `ext`, sorted. Fails when there are none,
/// so a test over wheel data can never pass vacuously.
pub fn wheel_files(sub: &str, ext: &str) -> Vec<PathBuf> {
    let dir = site_packages().join(sub);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}; {SETUP_HINT}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no *{ext} files in {}", dir.display());
    files
}

/// A fresh temporary folder, removed when dropped.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("cannot create a temporary folder")
}

/// File offsets of the HDF5 variable-length descriptors in `bytes` whose length field is
/// `len`: a 4-byte length followed by the 8-byte address of a global heap collection ("GCOL";
/// addresses count from `base`, the end of the user block). For tests that damage lengths.
pub fn vlen_descriptor_offsets(bytes: &[u8], base: usize, len: u32) -> Vec<usize> {
    let u32_at =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    (0..bytes.len().saturating_sub(16))
        .filter(|&at| {
            let mut addr = [0u8; 8];
            addr.copy_from_slice(&bytes[at + 4..at + 12]);
            let addr = u64::from_le_bytes(addr) as usize;
            u32_at(at) == len
                && addr > 0
                && bytes
                    .get(base.saturating_add(addr)..base.saturating_add(addr).saturating_add(4))
                    .is_some_and(|s| s == b"GCOL")
        })
        .collect()
}

/// Runs `f` on its own thread and returns its result; fails the test when `f` has not
/// returned within `secs` seconds (for code a bug could make loop forever: the thread is left
/// behind, so such a test should be alone in its test binary).
pub fn within<T: Send + 'static>(
    secs: u64,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(value) => value,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} did not finish within {secs} s")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

/// Damages the global heap collection at file offset `heap` the way libhdf5 never finishes
/// parsing: its first object's index and size become 0. Returns that object's file offset.
pub fn zero_first_heap_object(bytes: &mut [u8], heap: usize) -> usize {
    assert_eq!(
        &bytes[heap..heap + 4],
        b"GCOL",
        "no global heap collection at {heap}"
    );
    let first = heap + 16;
    bytes[first..first + 2].copy_from_slice(&0u16.to_le_bytes());
    bytes[first + 8..first + 16].copy_from_slice(&0u64.to_le_bytes());
    first
}

/// How a program run by [`run_limited`] ended.
#[derive(Debug)]
pub struct LimitedRun {
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did (a crash, or the kill after the time limit).
    pub signal: Option<i32>,
    /// Killed for running past the time limit.
    pub timed_out: bool,
    /// Its standard error.
    pub stderr: String,
    /// How long it ran.
    pub elapsed: std::time::Duration,
}

/// Runs `program args...` with its address space limited to `address_space_kib` KiB (`ulimit
/// -v`), killed after `time_limit`; stdout is discarded, stderr kept. For tests that feed
/// damaged files to the CLI and must tell a clean error from a crash, a hang or a memory blow-up.
pub fn run_limited(
    program: &Path,
    args: &[&std::ffi::OsStr],
    time_limit: std::time::Duration,
    address_space_kib: u64,
) -> LimitedRun {
    use std::os::unix::process::ExitStatusExt;
    let script = format!("ulimit -v {address_space_kib}; exec \"$0\" \"$@\"");
    let started = std::time::Instant::now();
    let mut child = child_command("bash")
        .arg("-c")
        .arg(script)
        .arg(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot run the program under bash");
    // Read stderr on a thread so that a chatty child never blocks on a full pipe.
    let mut err = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut text);
        text
    });
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > time_limit {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    LimitedRun {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        stderr: reader.join().unwrap_or_default(),
        elapsed: started.elapsed(),
    }
}

/// Environment variable naming the one test a child process runs ([`in_child_process`]).
const CHILD_TEST: &str = "SCIIO_TEST_CHILD";

/// Runs the test `test` (its name in this test binary) with `body` in a child process: this
/// test binary run again with only that test, SIGXFSZ ignored. Inside it, [`limit_file_size`]
/// makes writes past a size fail with EFBIG as they fail on a full disk (ENOSPC): no root, no
/// mount, nothing limited for the tests running alongside. The parent fails when the child
/// fails, or did not run the test.
///
/// ```no_run
/// #[test]
/// fn a_full_disk_is_reported() {
///     sciio_testkit::in_child_process("a_full_disk_is_reported", || {
///         sciio_testkit::limit_file_size(Some(512 << 10));
///         // ... write more than 512 KiB to one file and expect an error
///     });
/// }
/// ```
pub fn in_child_process(test: &str, body: impl FnOnce()) {
    if std::env::var(CHILD_TEST).as_deref() == Ok(test) {
        body();
        return;
    }
    let exe = std::env::current_exe().expect("no path to the test binary");
    // `trap '' XFSZ` ignores the signal a write past RLIMIT_FSIZE raises (it would kill the
    // child), so the write fails with EFBIG instead; an ignored signal stays ignored in exec.
    let out = child_command("bash")
        .arg("-c")
        .arg("trap '' XFSZ; exec \"$0\" \"$@\"")
        .arg(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_TEST, test)
        .output()
        .expect("cannot run the test binary again under bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "the child process running {test} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

/// Limits the size of every file this process writes to `bytes` (`None`: no limit) —
/// RLIMIT_FSIZE's soft limit; the hard limit is left alone, so the limit can be lifted again.
/// Only inside [`in_child_process`]: the limit would otherwise hit every test of the binary.
pub fn limit_file_size(bytes: Option<u64>) {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    assert!(
        std::env::var_os(CHILD_TEST).is_some(),
        "limit_file_size outside in_child_process would limit every test of this binary"
    );
    let hard = getrlimit(Resource::Fsize).maximum;
    let current = match (bytes, hard) {
        (Some(b), Some(h)) => Some(b.min(h)),
        (Some(b), None) => Some(b),
        (None, h) => h,
    };
    setrlimit(
        Resource::Fsize,
        Rlimit {
            current,
            maximum: hard,
        },
    )
    .expect("setrlimit(RLIMIT_FSIZE) failed");
}

/// Runs `program args...` and returns its peak RSS in bytes (`ru_maxrss` from `wait4`),
/// failing the test when it fails.
// The child is reaped by wait4 below, which std's Child does not know about.
#[allow(clippy::zombie_processes)]
pub fn peak_rss(program: impl AsRef<Path>, args: &[&str]) -> u64 {
    let child = child_command(program.as_ref())
        .args(args)
        .stdout(Stdio::null())
        .spawn()
        .expect("cannot run the program");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: plain FFI call with valid out-pointers; `rusage` is plain old data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet reaped; both pointers are to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{} {args:?} failed (status {status})",
        program.as_ref().display()
    );
    // Linux reports ru_maxrss in KiB.
    usage.ru_maxrss as u64 * 1024
}

#[cfg(test)]
mod tests {
    /// A descriptor left without close-on-exec (as libhdf5 leaves one for a moment) does not
    /// reach a [`super::child_command`]'s program.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_inherits_no_descriptor_but_its_streams() {
        use std::os::fd::AsRawFd;
        let file = std::fs::File::open(super::repo_root().join("Cargo.toml")).unwrap();
        const LEAKED: i32 = 200;
        // SAFETY: plain FFI calls on a descriptor this test owns; `LEAKED` is closed below.
        unsafe {
            assert_eq!(libc::dup2(file.as_raw_fd(), LEAKED), LEAKED);
            assert_eq!(libc::fcntl(LEAKED, libc::F_SETFD, 0), 0);
        }
        let probe = |mut command: std::process::Command| {
            command
                .args([
                    "-c",
                    "test -e /proc/self/fd/200 && echo inherited || echo clean",
                ])
                .output()
                .unwrap()
        };
        let plain = probe(std::process::Command::new("sh"));
        let child = probe(super::child_command("sh"));
        // SAFETY: closes the descriptor duplicated above.
        unsafe { libc::close(LEAKED) };
        // The plain command shows that the probe can see a leak.
        assert_eq!(String::from_utf8_lossy(&plain.stdout).trim(), "inherited");
        assert_eq!(String::from_utf8_lossy(&child.stdout).trim(), "clean");
    }
}
