//! Record signatures, sizes and small codes of the zip format (PKWARE APPNOTE 6.3), and the
//! conventions of CPython's `zipfile` that numpy's `savez` inherits.

use std::fmt;

use sciio_core::calendar::civil_from_days;

pub(crate) const LOCAL_SIG: u32 = 0x0403_4b50;
pub(crate) const CENTRAL_SIG: u32 = 0x0201_4b50;
pub(crate) const EOCD_SIG: u32 = 0x0605_4b50;
pub(crate) const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
pub(crate) const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;

pub(crate) const LOCAL_LEN: usize = 30;
pub(crate) const CENTRAL_LEN: usize = 46;
pub(crate) const EOCD_LEN: usize = 22;
pub(crate) const ZIP64_EOCD_LEN: usize = 56;
pub(crate) const ZIP64_LOCATOR_LEN: usize = 20;
pub(crate) const MAX_COMMENT: usize = 0xFFFF;

/// Extra-field id of the zip64 extended information.
pub(crate) const ZIP64_EXTRA_ID: u16 = 0x0001;

/// CPython's `zipfile.ZIP64_LIMIT`: sizes and offsets above 2 GiB - 1 (not 4 GiB - 1) get zip64
/// records. We copy it so that archives we write are laid out like the ones numpy writes.
pub(crate) const ZIP64_LIMIT: u64 = (1 << 31) - 1;
/// CPython's `zipfile.ZIP_FILECOUNT_LIMIT`.
pub(crate) const FILECOUNT_LIMIT: u64 = 0xFFFF;

/// "Version needed to extract" of plain deflate/stored members and of zip64 ones.
pub(crate) const VERSION_DEFAULT: u16 = 20;
pub(crate) const VERSION_ZIP64: u16 = 45;
/// "Version made by" high byte: 3 = UNIX, what CPython writes on Linux and macOS.
pub(crate) const SYSTEM_UNIX: u16 = 3;
/// CPython's default external attributes for `ZipFile.open(name, 'w')`: `?rw-------`.
pub(crate) const EXTERNAL_ATTR_RW: u32 = 0o600 << 16;

pub(crate) const FLAG_ENCRYPTED: u16 = 1 << 0;
pub(crate) const FLAG_UTF8: u16 = 1 << 11;

/// The compression method of a member (an open newtype: unknown codes are kept, not rejected,
/// so that an archive with, say, a bzip2 member still lists and its other members still read).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CompressionMethod(pub u16);

impl CompressionMethod {
    /// Stored without compression (`zipfile.ZIP_STORED`, what `np.savez` writes).
    pub const STORED: CompressionMethod = CompressionMethod(0);
    /// Raw deflate (`zipfile.ZIP_DEFLATED`, what `np.savez_compressed` writes).
    pub const DEFLATE: CompressionMethod = CompressionMethod(8);
}

impl fmt::Debug for CompressionMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            CompressionMethod::STORED => f.write_str("STORED"),
            CompressionMethod::DEFLATE => f.write_str("DEFLATE"),
            CompressionMethod(code) => write!(f, "CompressionMethod({code})"),
        }
    }
}

impl fmt::Display for CompressionMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            CompressionMethod::STORED => f.write_str("stored"),
            CompressionMethod::DEFLATE => f.write_str("deflate"),
            CompressionMethod(code) => write!(f, "method {code}"),
        }
    }
}

/// An MS-DOS date and time as zip headers store them (local time, 2-second resolution).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DosDateTime {
    /// The packed date: `(year - 1980) << 9 | month << 5 | day`.
    pub date: u16,
    /// The packed time: `hour << 11 | minute << 5 | second / 2`.
    pub time: u16,
}

impl DosDateTime {
    /// 1980-01-01 00:00:00, the earliest representable time (what reproducible archives use).
    pub const EPOCH: DosDateTime = DosDateTime {
        date: 1 << 5 | 1,
        time: 0,
    };

    /// Packs a calendar date and time; out-of-range parts are clamped into the DOS range.
    pub fn new(year: u16, month: u8, day: u8, hour: u8, minute: u8, second: u8) -> Self {
        let year = year.clamp(1980, 2107) - 1980;
        DosDateTime {
            date: year << 9 | u16::from(month.clamp(1, 12)) << 5 | u16::from(day.clamp(1, 31)),
            time: u16::from(hour.min(23)) << 11
                | u16::from(minute.min(59)) << 5
                | u16::from(second.min(59) / 2),
        }
    }

    /// The current time (UTC, since the standard library knows no time zones; numpy writes local
    /// time, and nothing reads it back).
    pub fn now() -> Self {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let days = (secs / 86_400) as i64;
        let rem = secs % 86_400;
        let (y, m, d) = civil_from_days(i128::from(days));
        DosDateTime::new(
            y.clamp(1980, 2107) as u16,
            m as u8,
            d as u8,
            (rem / 3600) as u8,
            (rem / 60 % 60) as u8,
            (rem % 60) as u8,
        )
    }
}

/// Code page 437 for bytes 0x80..=0xFF: names without the UTF-8 flag are CP437 (as CPython
/// decodes them).
const CP437_HIGH: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}";

/// Decodes a member name: UTF-8 when the flag says so (lossy on invalid bytes), CP437 otherwise.
pub(crate) fn decode_name(raw: &[u8], utf8: bool) -> String {
    if utf8 || raw.is_ascii() {
        return String::from_utf8_lossy(raw).into_owned();
    }
    raw.iter()
        .map(|&b| {
            if b < 0x80 {
                char::from(b)
            } else {
                CP437_HIGH
                    .chars()
                    .nth(usize::from(b - 0x80))
                    .unwrap_or(char::REPLACEMENT_CHARACTER)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cp437_table_is_complete() {
        assert_eq!(CP437_HIGH.chars().count(), 128);
        assert_eq!(decode_name(&[b'a', 0x81], false), "aü");
        assert_eq!(decode_name("é".as_bytes(), true), "é");
    }

    #[test]
    fn dos_time_packs_like_cpython() {
        // 2015-03-07 00:09:00, as in numpy's py2-objarr.npz
        let t = DosDateTime::new(2015, 3, 7, 0, 9, 0);
        assert_eq!(t.date, (35 << 9) | (3 << 5) | 7);
        assert_eq!(t.time, 9 << 5);
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
    }
}
