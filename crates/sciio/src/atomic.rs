//! Atomic file creation: write into a temporary file in the destination's folder, rename it over
//! the destination only once everything succeeded. A failed write never leaves a partial file and
//! never destroys an existing destination.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use sciio_core::{Error, Result};

/// Runs `write` on a buffered temporary file created next to `dest`, then flushes and renames
/// it to `dest`. On any error (from `write` or from finishing the file) the temporary file is
/// removed and `dest` is left exactly as it was.
///
/// Atomic, not synced: another process sees the old `dest` or the whole new file, never a
/// part of it, and a failing or interrupted sciio leaves no partial file; but the data is
/// not forced to the disk before the rename (no `fsync`, as numpy's `np.save`/`np.savez`,
/// pandas and h5py write, and as sciio's libhdf5 and MAT writers always did). After an
/// operating-system crash or power loss soon after the write, `dest` may be the old file, or,
/// where the file system does not order the data before the rename, empty or incomplete.
/// (ext4's default `auto_da_alloc` writes the data of a file renamed over an existing one
/// first.) Run `sync` after sciio when the output must survive a power loss.
///
/// The new file gets the permissions of the file it replaces, or `0o644` on Unix when new
/// (temporary files are created private).
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// use std::io::Write;
/// let dest = dir.path().join("out.txt");
/// sciio::write_atomically(&dest, |w| Ok(w.write_all(b"hello")?))?;
/// assert_eq!(std::fs::read(&dest)?, b"hello");
///
/// // A failing writer leaves the old content and no temporary file behind.
/// let failed = sciio::write_atomically(&dest, |w| {
///     w.write_all(b"partial")?;
///     Err::<(), _>(sciio::Error::invalid_input("stop"))
/// });
/// assert!(failed.is_err());
/// assert_eq!(std::fs::read(&dest)?, b"hello");
/// assert_eq!(std::fs::read_dir(dir.path())?.count(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_atomically<T>(
    dest: &Path,
    write: impl FnOnce(&mut BufWriter<&File>) -> Result<T>,
) -> Result<T> {
    let (temp, _registered) = temp_file_beside(dest)?;
    let value = {
        let mut writer = BufWriter::with_capacity(1 << 20, temp.as_file());
        let value = write(&mut writer).map_err(|e| e.with_file(dest))?;
        writer
            .flush()
            .map_err(|e| Error::io("cannot write", e).with_file(dest))?;
        value
    };
    set_permissions(temp.as_file(), dest)?;
    temp.persist(dest).map_err(|e| {
        Error::io("cannot rename the finished file into place", e.error).with_file(dest)
    })?;
    Ok(value)
}

/// A new empty temporary file in `dest`'s folder (so the final rename stays on one file
/// system), for writers that must open their output by name, such as libhdf5's. It is
/// registered with [`sciio_temp`] while the registration lives, so that a signal stopping
/// the process removes it too.
pub(crate) fn temp_file_beside(
    dest: &Path,
) -> Result<(tempfile::NamedTempFile, sciio_temp::Registration)> {
    temp_file_named_beside(dest, ".sciio-", ".tmp")
}

/// [`temp_file_beside`] named `prefix…suffix` (a suffix that tells a file's format by its
/// extension, for a temporary file sciio reads back).
pub(crate) fn temp_file_named_beside(
    dest: &Path,
    prefix: &str,
    suffix: &str,
) -> Result<(tempfile::NamedTempFile, sciio_temp::Registration)> {
    if dest.is_dir() {
        return Err(Error::invalid_input("the destination is a folder").with_file(dest));
    }
    let folder = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(suffix)
        .tempfile_in(folder)
        .map(|file| {
            let registration = sciio_temp::register(file.path());
            (file, registration)
        })
        .map_err(|e| {
            Error::io(
                "cannot create a temporary file in the destination folder",
                e,
            )
            .with_file(folder)
        })
}

#[cfg(unix)]
fn set_permissions(file: &File, dest: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let perms = match std::fs::metadata(dest) {
        Ok(meta) => meta.permissions(),
        Err(_) => std::fs::Permissions::from_mode(0o644),
    };
    file.set_permissions(perms)
        .map_err(|e| Error::io("cannot set permissions", e).with_file(dest))
}

#[cfg(not(unix))]
fn set_permissions(_file: &File, _dest: &Path) -> Result<()> {
    Ok(())
}

/// Reads `buf.len()` bytes of `file` at `offset` (temporary files of transposed matrices).
#[cfg(all(unix, any(feature = "mat", feature = "hdf5", feature = "parquet")))]
pub(crate) fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(all(not(unix), any(feature = "mat", feature = "hdf5", feature = "parquet")))]
pub(crate) fn read_at(
    mut file: &std::fs::File,
    buf: &mut [u8],
    offset: u64,
) -> std::io::Result<()> {
    use std::io::{Read, Seek};
    file.seek(std::io::SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

/// Writes `buf` into `file` at `offset` (the temporary files of matrices transposed as they
/// are copied, and of Fortran-order text put in MATLAB's order).
#[cfg(all(unix, any(feature = "mat", feature = "hdf5")))]
pub(crate) fn write_at(file: &std::fs::File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

#[cfg(all(not(unix), any(feature = "mat", feature = "hdf5")))]
pub(crate) fn write_at(mut file: &std::fs::File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Seek, Write};
    file.seek(std::io::SeekFrom::Start(offset))?;
    file.write_all(buf)
}
