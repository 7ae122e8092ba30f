//! Owned HDF5 identifiers and the bridge from libhdf5's error stack to [`sciio_core::Error`].
//!
//! libhdf5 (built without its thread-safe option) must be entered by one thread at a time: every
//! call in this crate runs inside [`locked`], which takes the same re-entrant lock that the
//! `hdf5-metno` crate uses, so both layers can be mixed safely.

use std::ffi::{c_char, c_uint, c_void, CStr, CString};

use hdf5_sys::h5::{herr_t, hsize_t};
use hdf5_sys::h5e::{H5E_error2_t, H5Eclear2, H5Ewalk2, H5E_DEFAULT, H5E_WALK_DOWNWARD};
use hdf5_sys::h5i::{hid_t, H5I_type_t, H5Idec_ref, H5Iget_type, H5Iis_valid};
use hdf5_sys::h5o::H5O_token_t;
use hdf5_sys::h5s::{H5S_class_t, H5Screate_simple};
use sciio_core::{Error, ErrorKind, Result};

/// Runs `f` holding libhdf5's global lock, after the library and sciio's filters are set up.
pub(crate) fn locked<T>(f: impl FnOnce() -> T) -> T {
    crate::filters::ensure_registered();
    hdf5::sync::sync(f)
}

/// An owned HDF5 identifier (file, group, dataset, attribute, datatype, dataspace, property
/// list), released when dropped.
#[derive(Debug)]
pub(crate) struct Hid(hid_t);

impl Hid {
    /// Takes ownership of `id` as returned by an `H5*open`/`H5*create`/`H5*get_*` call, turning
    /// a negative id into an error that says what `what` was being done.
    pub(crate) fn new(id: hid_t, what: impl FnOnce() -> String) -> Result<Hid> {
        if id < 0 {
            Err(last_error(what()))
        } else {
            Ok(Hid(id))
        }
    }

    /// The raw identifier, valid while `self` lives.
    pub(crate) fn id(&self) -> hid_t {
        self.0
    }
}

impl Drop for Hid {
    fn drop(&mut self) {
        // SAFETY: the id is owned by this handle; H5Idec_ref releases it whatever its kind.
        locked(|| unsafe {
            // SAFETY: the id is owned by this handle; H5Idec_ref releases it whatever its kind.
            if H5Iis_valid(self.0) > 0 && H5Iget_type(self.0) != H5I_type_t::H5I_BADID {
                H5Idec_ref(self.0);
            }
            H5Eclear2(H5E_DEFAULT);
        })
    }
}

/// Checks the `herr_t`/`htri_t`/`int` result of a libhdf5 call: negative means failure.
pub(crate) fn check<T: Into<i64> + Copy>(ret: T, what: impl FnOnce() -> String) -> Result<T> {
    if ret.into() < 0 {
        Err(last_error(what()))
    } else {
        Ok(ret)
    }
}

/// A C string for a name passed to libhdf5; names with NUL bytes are refused.
pub(crate) fn c_name(name: &str) -> Result<CString> {
    CString::new(name)
        .map_err(|_| Error::invalid_input(format!("name {name:?} contains a NUL byte")))
}

/// Copies a C string owned by libhdf5 (not freed here).
///
/// # Safety
/// `p` must be null or point to a NUL-terminated string.
pub(crate) unsafe fn string_from_c(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// Builds an error from libhdf5's current error stack (then clears it). The innermost
/// description says why ("bad symbol table", "can't open file"...); `what` says what we did.
pub(crate) fn last_error(what: String) -> Error {
    let mut messages: Vec<String> = Vec::new();
    // SAFETY: called by libhdf5's H5Ewalk2 only, with a valid record and our Vec as `data`.
    unsafe extern "C" fn collect(
        _n: c_uint,
        err: *const H5E_error2_t,
        data: *mut c_void,
    ) -> herr_t {
        // SAFETY: libhdf5 passes a valid record; `data` is the Vec we handed to H5Ewalk2.
        unsafe {
            let messages = &mut *(data as *mut Vec<String>);
            if let Some(err) = err.as_ref() {
                let desc = string_from_c(err.desc);
                let func = string_from_c(err.func_name);
                messages.push(if desc.is_empty() {
                    func
                } else {
                    format!("{desc} ({func})")
                });
            }
        }
        0
    }
    // SAFETY: walking the default stack with a callback that only reads the records.
    unsafe {
        // SAFETY: walking the default stack with a callback that only reads the records.
        H5Ewalk2(
            H5E_DEFAULT,
            H5E_WALK_DOWNWARD,
            Some(collect),
            &mut messages as *mut Vec<String> as *mut c_void,
        );
        H5Eclear2(H5E_DEFAULT);
    }
    let why = messages
        .iter()
        .rev()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(": ");
    let kind = classify(&messages);
    if why.is_empty() {
        Error::new(kind, what)
    } else {
        Error::new(kind, format!("{what}: {why}"))
    }
}

/// Maps libhdf5's error descriptions onto sciio's error kinds (best effort: libhdf5 reports
/// truncation and corruption with free-form text).
fn classify(messages: &[String]) -> ErrorKind {
    let all = messages.join(" ").to_ascii_lowercase();
    if all.contains("truncated") || all.contains("eof") || all.contains("end of file") {
        ErrorKind::Truncated
    } else if all.contains("filter") || all.contains("checksum") || all.contains("fletcher") {
        ErrorKind::Corrupt
    } else if all.contains("not found")
        || all.contains("doesn't exist")
        || all.contains("does not exist")
    {
        ErrorKind::NotFound
    } else {
        ErrorKind::Format
    }
}

/// The object-header address inside a native-VOL object token (little-endian, zero-padded).
pub(crate) fn token_address(token: &H5O_token_t) -> u64 {
    // SAFETY: H5O_token_t is a repr(C) wrapper of 16 bytes.
    let bytes = unsafe { std::mem::transmute::<H5O_token_t, [u8; 16]>(*token) };
    let mut addr = [0u8; 8];
    addr.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(addr)
}

/// A simple dataspace of `shape` (scalar when `shape` is empty), for memory selections.
pub(crate) fn simple_space(shape: &[usize]) -> Result<Hid> {
    let dims: Vec<hsize_t> = shape.iter().map(|&d| d as hsize_t).collect();
    if dims.is_empty() {
        // SAFETY: creating a scalar dataspace.
        return Hid::new(
            unsafe { hdf5_sys::h5s::H5Screate(H5S_class_t::H5S_SCALAR) },
            || "cannot create a dataspace".into(),
        );
    }
    // SAFETY: `dims` has `rank` entries.
    Hid::new(
        unsafe { H5Screate_simple(dims.len() as i32, dims.as_ptr(), std::ptr::null()) },
        || "cannot create a dataspace".into(),
    )
}

/// The version of the libhdf5 sciio is linked with (bundled and statically linked), as
/// `(major, minor, release)`.
///
/// ```
/// let (major, minor, release) = sciio_hdf5::libhdf5_version()?;
/// println!("libhdf5 {major}.{minor}.{release}");
/// # Ok::<(), sciio_core::Error>(())
/// ```
pub fn libhdf5_version() -> Result<(u32, u32, u32)> {
    let (mut major, mut minor, mut release) = (0, 0, 0);
    locked(|| {
        // SAFETY: three valid out-pointers.
        check(
            unsafe { hdf5_sys::h5::H5get_libversion(&mut major, &mut minor, &mut release) },
            || "cannot read libhdf5's version".into(),
        )
    })?;
    Ok((major, minor, release))
}

/// Marks the open file's descriptor close-on-exec. libhdf5's default (sec2) driver opens
/// files without `O_CLOEXEC`, so a child process spawned by another thread would inherit the
/// descriptor and, with it, the file's `flock`: the lock would then outlive the file's close
/// and the next open of the file would fail ("unable to lock file"). Every file sciio opens
/// uses the sec2 driver, whose handle is a pointer to the `int` descriptor. Runs inside
/// `locked`, right after the open.
#[cfg(unix)]
pub(crate) fn close_on_exec(file: hid_t) {
    let mut handle: *mut c_void = std::ptr::null_mut();
    // SAFETY: `file` is a file id just opened with the sec2 driver; libhdf5 writes the
    // driver's handle (a pointer to the descriptor, valid while the file is open) into the
    // local `handle`, which is checked for null before it is read.
    unsafe {
        let fapl = hdf5_sys::h5p::H5P_DEFAULT;
        if hdf5_sys::h5f::H5Fget_vfd_handle(file, fapl, &mut handle) < 0 || handle.is_null() {
            H5Eclear2(H5E_DEFAULT);
            return;
        }
        let fd = *handle.cast::<libc::c_int>();
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
        }
    }
}

/// Opens (or creates) a file with `open`, retrying for up to about half a second while the
/// file is locked by a descriptor that is about to go away. Close-on-exec is not enough: a
/// child spawned by another thread holds a copy of every descriptor from its spawn until its
/// exec, so a file closed in that window keeps its `flock` for those milliseconds and the next
/// open fails with EAGAIN. A lock held longer (another process really has the file open for
/// writing) is reported as before.
pub(crate) fn retry_while_briefly_locked<T>(mut open: impl FnMut() -> Result<T>) -> Result<T> {
    let mut pause = std::time::Duration::from_millis(2);
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    loop {
        match open() {
            Err(e) if is_transient_lock_failure(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(64));
            }
            result => return result,
        }
    }
}

/// libhdf5's words for a `flock` that would block (EAGAIN/EWOULDBLOCK).
fn is_transient_lock_failure(error: &Error) -> bool {
    let text = error.message();
    text.contains("unable to lock file") && text.contains(&format!("errno = {}", libc::EAGAIN))
}

/// Nothing to do where child processes do not inherit descriptors this way.
#[cfg(not(unix))]
pub(crate) fn close_on_exec(_file: hid_t) {}
