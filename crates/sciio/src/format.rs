//! File formats sciio knows, picked from the file name and confirmed by the first bytes.

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::str::FromStr;

use sciio_core::{Error, Result};

/// A file format sciio reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// A numpy `.npy` file: one array.
    Npy,
    /// A numpy `.npz` file: a zip of `.npy` members.
    Npz,
    /// An HDF5 file (PyTables, h5py).
    Hdf5,
    /// A MATLAB `.mat` file: v7.3 (HDF5 with a MATLAB userblock), v7/v6/v5 (Level 5) or v4.
    Mat,
    /// An Apache Parquet file (pandas, pyarrow).
    Parquet,
}

const NPY_MAGIC: &[u8] = b"\x93NUMPY";
const ZIP_MAGICS: [&[u8]; 2] = [b"PK\x03\x04", b"PK\x05\x06"];
const HDF5_MAGIC: &[u8] = b"\x89HDF\r\n\x1a\n";
const PARQUET_MAGIC: &[u8] = b"PAR1";
const MAT73_TEXT: &[u8] = b"MATLAB 7.3 MAT-file";

impl Format {
    /// Every format, in the order `sciio --help` lists them.
    pub const ALL: [Format; 5] = [
        Format::Npy,
        Format::Npz,
        Format::Hdf5,
        Format::Mat,
        Format::Parquet,
    ];

    /// The short name used by `--to` and in messages (`npy`, `npz`, `hdf5`, `mat`, `parquet`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Npy => "npy",
            Format::Npz => "npz",
            Format::Hdf5 => "hdf5",
            Format::Mat => "mat",
            Format::Parquet => "parquet",
        }
    }

    /// The cargo feature of the `sciio` crate that reads and writes this format (`None`:
    /// always built).
    ///
    /// ```
    /// assert_eq!(sciio::Format::Mat.feature(), Some("mat"));
    /// assert_eq!(sciio::Format::Npy.feature(), None);
    /// ```
    pub fn feature(self) -> Option<&'static str> {
        match self {
            Format::Npy | Format::Npz => None,
            Format::Hdf5 => Some("hdf5"),
            Format::Mat => Some("mat"),
            Format::Parquet => Some("parquet"),
        }
    }

    /// The format a file name's extension stands for (case-insensitive).
    ///
    /// ```
    /// use sciio::Format;
    /// assert_eq!(Format::from_extension("data/x.NPZ".as_ref()), Some(Format::Npz));
    /// assert_eq!(Format::from_extension("t.h5".as_ref()), Some(Format::Hdf5));
    /// assert_eq!(Format::from_extension("notes.txt".as_ref()), None);
    /// ```
    pub fn from_extension(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "npy" => Format::Npy,
            "npz" => Format::Npz,
            "h5" | "hdf5" | "hdf" | "he5" => Format::Hdf5,
            "mat" => Format::Mat,
            "parquet" | "pq" => Format::Parquet,
            _ => return None,
        })
    }

    /// The format the first bytes of a file announce. HDF5 is looked for at offset 0 and at
    /// 512 (MAT v7.3 files put a 512-byte userblock before the HDF5 superblock).
    ///
    /// ```
    /// use sciio::Format;
    /// assert_eq!(Format::from_magic(b"\x93NUMPY\x01\x00"), Some(Format::Npy));
    /// assert_eq!(Format::from_magic(b"PK\x03\x04...."), Some(Format::Npz));
    /// assert_eq!(Format::from_magic(b"hello"), None);
    /// ```
    pub fn from_magic(head: &[u8]) -> Option<Format> {
        if head.starts_with(NPY_MAGIC) {
            Some(Format::Npy)
        } else if ZIP_MAGICS.iter().any(|m| head.starts_with(m)) {
            Some(Format::Npz)
        } else if head.starts_with(HDF5_MAGIC) {
            Some(Format::Hdf5)
        } else if head.starts_with(MAT73_TEXT)
            || head.get(512..).is_some_and(|h| h.starts_with(HDF5_MAGIC))
        {
            Some(Format::Mat)
        } else if head.starts_with(PARQUET_MAGIC) {
            Some(Format::Parquet)
        } else if is_level5_mat(head) {
            // MAT v5/v6/v7: version 0x0100 and the endian indicator at bytes 124..128.
            Some(Format::Mat)
        } else {
            None
        }
    }

    /// Whether `head` (a whole file) is the start of this format's signature, cut short.
    fn is_cut_signature(self, head: &[u8]) -> bool {
        let signatures: &[&[u8]] = match self {
            Format::Npy => &[NPY_MAGIC],
            Format::Npz => &ZIP_MAGICS,
            Format::Hdf5 => &[HDF5_MAGIC],
            Format::Mat => &[MAT73_TEXT],
            Format::Parquet => &[PARQUET_MAGIC],
        };
        signatures
            .iter()
            .any(|s| head.len() < s.len() && s.starts_with(head))
    }

    /// Picks the format of an existing file: the extension when it agrees with the first bytes
    /// (or the bytes say nothing), else what the bytes say; an error when neither helps.
    pub fn detect(path: &Path) -> Result<Format> {
        let by_name = Format::from_extension(path);
        let mut head = Vec::with_capacity(520);
        std::fs::File::open(path)
            .and_then(|f| f.take(520).read_to_end(&mut head))
            .map_err(|e| Error::io("cannot open", e).with_file(path))?;
        let by_magic = Format::from_magic(&head);
        match (by_name, by_magic) {
            // A .mat file may be v5 (not HDF5), which sciio does not read: trust the bytes.
            (Some(name), Some(magic)) if name == magic => Ok(name),
            (Some(Format::Hdf5), Some(Format::Mat)) => Ok(Format::Mat),
            // MAT v4 files have no signature: a plausible first matrix header will do.
            (Some(Format::Mat), None) if is_v4_mat(&head) => Ok(Format::Mat),
            (_, Some(magic)) => Ok(magic),
            (Some(name), None) if head.is_empty() => Err(Error::truncated(format!(
                "the file is empty, not a {} file",
                name.name()
            ))
            .with_file(path)),
            (Some(name), None) if name.is_cut_signature(&head) => Err(Error::truncated(format!(
                "the file is truncated: it ends at byte {} inside the {} signature",
                head.len(),
                name.name()
            ))
            .with_file(path)
            .with_offset(head.len() as u64)),
            (Some(name), None) => Err(Error::format(format!(
                "the file name says {} but the first bytes are not of that format",
                name.name()
            ))
            .with_file(path)),
            (None, None) => Err(Error::unsupported(format!(
                "cannot tell the format (extension and first bytes unknown; known: {})",
                Format::names()
            ))
            .with_file(path)),
        }
    }

    /// The format to write `path` as: `forced` if given, else from the extension.
    pub fn for_output(path: &Path, forced: Option<Format>) -> Result<Format> {
        forced
            .or_else(|| Format::from_extension(path))
            .ok_or_else(|| {
                Error::invalid_input(format!(
                    "cannot tell the output format from the file name; use --to ({})",
                    Format::names()
                ))
                .with_file(path)
            })
    }

    fn names() -> String {
        Format::ALL.map(Format::name).join(", ")
    }
}

/// Whether `head` is a Level-5 MAT header (`MATLAB 5.0 MAT-file`: version and endian
/// indicator at bytes 124..128).
fn is_level5_mat(head: &[u8]) -> bool {
    matches!(
        head.get(124..128),
        Some([0x00, 0x01, b'I', b'M']) | Some([0x01, 0x00, b'M', b'I'])
    )
}

/// Whether `head` starts with a plausible MAT v4 matrix header.
fn is_v4_mat(head: &[u8]) -> bool {
    #[cfg(feature = "mat")]
    {
        sciio_mat::is_v4(head)
    }
    #[cfg(not(feature = "mat"))]
    {
        let _ = head;
        false
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = Error;
    /// Parses a format name as `--to` takes it; extensions are accepted too (`h5`, `pq`).
    fn from_str(s: &str) -> Result<Format> {
        let lower = s.trim_start_matches('.').to_ascii_lowercase();
        Format::from_extension(Path::new(&format!("x.{lower}"))).ok_or_else(|| {
            Error::invalid_input(format!("unknown format '{s}' (known: {})", Format::names()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
        }
        assert_eq!(".H5".parse::<Format>().unwrap(), Format::Hdf5);
        assert!("csv".parse::<Format>().is_err());
    }

    #[test]
    fn level5_mat_header_is_recognised() {
        let mut head = vec![b' '; 128];
        head[..19].copy_from_slice(b"MATLAB 5.0 MAT-file");
        head[124..].copy_from_slice(b"\x00\x01IM");
        assert_eq!(Format::from_magic(&head), Some(Format::Mat));
        head[124..].copy_from_slice(b"\x01\x00MI");
        assert_eq!(Format::from_magic(&head), Some(Format::Mat));
    }

    #[test]
    fn mat_userblock_is_recognised() {
        let mut head = vec![0u8; 520];
        head[512..520].copy_from_slice(HDF5_MAGIC);
        assert_eq!(Format::from_magic(&head), Some(Format::Mat));
    }
}
