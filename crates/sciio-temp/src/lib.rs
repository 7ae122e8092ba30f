//! Temporary output files that never outlive the process.
//!
//! sciio writes every output under a temporary name beside the destination and renames it into
//! place when it is complete. Errors and panics remove the temporary file through `Drop`; a
//! signal does not run destructors. A writer therefore [`register`]s its temporary path while
//! the file exists, and a program calls [`remove_on_signals`] once: on SIGINT, SIGTERM,
//! SIGHUP, SIGQUIT and on crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, as a C library
//! could raise on damaged input) every registered file is unlinked before the signal's default
//! action ends the process.
//!
//! The registry is a fixed table of C strings read by the handler without locks or
//! allocation (only `unlink`, `signal` and `raise`, which are async-signal-safe); a path
//! registered beyond its capacity is still removed by `Drop`, just not on a signal.
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! let temp = dir.path().join(".out.tmp");
//! std::fs::write(&temp, b"partial")?;
//! let registration = sciio_temp::register(&temp);
//! assert!(sciio_temp::is_registered(&temp));
//! drop(registration); // the writer finished (renamed or removed the file) itself
//! assert!(!sciio_temp::is_registered(&temp));
//! # Ok::<(), std::io::Error>(())
//! ```
// Input never reaches a panic: errors are returned (tests may unwrap).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable
    )
)]

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Once;

/// How many temporary files can be registered at once.
const SLOTS: usize = 256;

static REGISTERED: [AtomicPtr<c_char>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// Keeps a temporary path registered; dropping it unregisters the path (the file itself is
/// the writer's to rename or remove).
#[derive(Debug)]
pub struct Registration {
    slot: Option<usize>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            // The C string is deliberately leaked: a signal handler on another thread may
            // still be reading it (a few bytes per output file).
            REGISTERED[slot].store(std::ptr::null_mut(), Ordering::SeqCst);
        }
    }
}

/// Registers `path` for removal if the process is stopped by a signal while it exists.
pub fn register(path: &Path) -> Registration {
    let Some(c_path) = c_string(path) else {
        return Registration { slot: None };
    };
    let raw = c_path.into_raw();
    for (slot, cell) in REGISTERED.iter().enumerate() {
        if cell
            .compare_exchange(
                std::ptr::null_mut(),
                raw,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok()
        {
            return Registration { slot: Some(slot) };
        }
    }
    // SAFETY: `raw` came from `CString::into_raw` above and was not stored anywhere.
    drop(unsafe { CString::from_raw(raw) });
    Registration { slot: None }
}

/// Whether `path` is registered now.
pub fn is_registered(path: &Path) -> bool {
    let Some(wanted) = c_string(path) else {
        return false;
    };
    REGISTERED.iter().any(|cell| {
        let p = cell.load(Ordering::SeqCst);
        // SAFETY: registered pointers come from `CString::into_raw` and are never freed.
        !p.is_null() && unsafe { CStr::from_ptr(p) } == wanted.as_c_str()
    })
}

#[cfg(unix)]
fn c_string(path: &Path) -> Option<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).ok()
}

#[cfg(not(unix))]
fn c_string(path: &Path) -> Option<CString> {
    CString::new(path.to_str()?).ok()
}

/// The signals after which registered files are removed.
#[cfg(unix)]
const SIGNALS: [c_int; 9] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
];

/// Installs the handlers (once per process; later calls do nothing). Signals whose
/// disposition is "ignore" (a shell's `nohup`, for example) stay ignored.
pub fn remove_on_signals() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(install);
}

#[cfg(unix)]
fn install() {
    for signal in SIGNALS {
        // SAFETY: sigaction with a zeroed struct, an empty mask and a handler that only calls
        // async-signal-safe functions; the previous action is read first so that an ignored
        // signal stays ignored.
        unsafe {
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut previous) != 0
                || previous.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            // One shot: the handler re-raises with the default action.
            action.sa_flags = libc::SA_RESETHAND;
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

#[cfg(not(unix))]
fn install() {}

#[cfg(unix)]
extern "C" fn on_signal(signal: c_int) {
    for cell in &REGISTERED {
        let p = cell.load(Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: a NUL-terminated path that is never freed; unlink is async-signal-safe.
            unsafe { libc::unlink(p) };
        }
    }
    // SAFETY: SA_RESETHAND restored the default action; raising the signal again ends the
    // process as the signal would have (exit status, core dump).
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrations_come_and_go() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.tmp");
        let b = dir.path().join("b.tmp");
        let ra = register(&a);
        let rb = register(&b);
        assert!(is_registered(&a) && is_registered(&b));
        drop(ra);
        assert!(!is_registered(&a) && is_registered(&b));
        drop(rb);
        assert!(!is_registered(&b));
    }
}
