//! The 128-byte MAT-file header MATLAB puts in the 512-byte HDF5 userblock of a v7.3 file, and
//! the recognition of older (v4, v5/v7) MAT files. No I/O.

use std::time::{SystemTime, UNIX_EPOCH};

use sciio_core::calendar::civil_from_days;
use sciio_core::{Error, Result};

/// Size of the HDF5 userblock a v7.3 MAT file starts with.
pub const USERBLOCK: usize = 512;
/// Size of the header text, padded with spaces.
pub const TEXT_LEN: usize = 116;
/// Size of the whole header: text, 8-byte subsystem offset, version, endian indicator.
pub const HEADER_LEN: usize = 128;

/// What the first bytes of a `.mat` file say it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatKind {
    /// A v7.3 MAT file (HDF5 inside) with MATLAB's header text.
    V73 {
        /// The 116-byte header text, trailing spaces removed.
        text: String,
    },
    /// A v5/v6/v7 MAT file (MATLAB's own binary format, not HDF5).
    V5,
    /// An HDF5 file without a MAT header (h5py files; hdf5storage reads them too).
    PlainHdf5,
    /// Something else.
    Unknown,
}

/// HDF5's signature, found at offset 0, 512, 1024... of an HDF5 file.
const HDF5_SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// Classifies a file from its first bytes (at least [`USERBLOCK`] + 8 for a v7.3 file).
pub fn classify(head: &[u8]) -> MatKind {
    if head.starts_with(HDF5_SIGNATURE) {
        return MatKind::PlainHdf5;
    }
    if head.len() >= HEADER_LEN && head.starts_with(b"MATLAB ") {
        let version = [head[124], head[125]];
        let endian = [head[126], head[127]];
        let v73 = (version == [0x00, 0x02] && endian == *b"IM")
            || (version == [0x02, 0x00] && endian == *b"MI");
        let hdf5_at_512 = head.get(USERBLOCK..USERBLOCK + 8) == Some(&HDF5_SIGNATURE[..]);
        if v73 || hdf5_at_512 {
            let text = String::from_utf8_lossy(&head[..TEXT_LEN])
                .trim_end_matches([' ', '\0'])
                .to_string();
            return MatKind::V73 { text };
        }
        return MatKind::V5;
    }
    MatKind::Unknown
}

/// The error for a file that is a MAT file but not v7.3.
pub fn not_v73_error() -> Error {
    Error::unsupported(
        "this is a MAT v5/v7 file (MATLAB's binary format, not HDF5): sciio reads v7.3 MAT files \
         only (save with -v7.3, or load it with scipy.io.loadmat)",
    )
}

/// Checks that `head` starts a v7.3 MAT file (or a plain HDF5 file, which MAT readers accept).
pub fn check_head(head: &[u8]) -> Result<MatKind> {
    match classify(head) {
        MatKind::V5 => Err(not_v73_error()),
        MatKind::Unknown => Err(Error::format(
            "not a MAT file: neither a MATLAB header nor an HDF5 signature",
        )),
        kind => Ok(kind),
    }
}

/// Builds the 128-byte header: `MATLAB 7.3 MAT-file, Platform: <platform>, Created on: <date>
/// HDF5 schema 1.00 .` padded with spaces to 116 bytes, eight zero bytes (no subsystem
/// data), version `0x0200` and the endian indicator `IM` (little-endian writer).
///
/// ```
/// let h = sciio_mat::header::build("sciio 0.1.0", 0);
/// assert_eq!(&h[..20], b"MATLAB 7.3 MAT-file,");
/// assert_eq!(&h[116..], b"\0\0\0\0\0\0\0\0\x00\x02IM");
/// assert!(std::str::from_utf8(&h[..116]).unwrap().contains("Thu Jan 01 00:00:00 1970"));
/// ```
pub fn build(platform: &str, unix_seconds: u64) -> [u8; HEADER_LEN] {
    let platform: String = platform
        .chars()
        .filter(|c| c.is_ascii() && !c.is_ascii_control())
        .take(40)
        .collect();
    let text = format!(
        "MATLAB 7.3 MAT-file, Platform: {platform}, Created on: {} HDF5 schema 1.00 .",
        ctime(unix_seconds)
    );
    let mut out = [b' '; HEADER_LEN];
    let n = text.len().min(TEXT_LEN);
    out[..n].copy_from_slice(&text.as_bytes()[..n]);
    out[TEXT_LEN..TEXT_LEN + 8].fill(0);
    out[124..].copy_from_slice(b"\x00\x02IM");
    out
}

/// The current time in seconds since 1970, or `SOURCE_DATE_EPOCH` when it is set (the
/// reproducible-builds convention: files written twice are then identical).
pub fn now() -> u64 {
    if let Some(secs) = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse().ok())
    {
        return secs;
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `Www Mmm dd hh:mm:ss yyyy` (C's `ctime`, UTC), as MATLAB writes it.
pub(crate) fn ctime(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(i128::from(days));
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} {y}",
        DAYS[(days % 7) as usize],
        MONTHS[(m - 1) as usize],
        d,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_matches_known_dates() {
        assert_eq!(ctime(0), "Thu Jan 01 00:00:00 1970");
        // 2014-02-07 02:29:00 UTC, the date in the spec's example header.
        assert_eq!(ctime(1_391_740_140), "Fri Feb 07 02:29:00 2014");
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn classify_kinds() {
        let mut v5 = vec![b' '; 128];
        v5[..19].copy_from_slice(b"MATLAB 5.0 MAT-file");
        v5[124..].copy_from_slice(b"\x00\x01IM");
        assert_eq!(classify(&v5), MatKind::V5);
        assert!(check_head(&v5).unwrap_err().message().contains("v5/v7"));
        let h = build("x", 0);
        assert!(matches!(classify(&h), MatKind::V73 { .. }));
        assert_eq!(classify(b"\x89HDF\r\n\x1a\nxxxx"), MatKind::PlainHdf5);
        assert_eq!(classify(b"hello"), MatKind::Unknown);
    }
}
