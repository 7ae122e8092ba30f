//! Where a Level-5 or v4 file's bytes come from: the file itself, read at positions on demand (so a
//! file larger than memory is never held whole: only the element being decoded, or a piece
//! of a streamed one), or bytes already in memory ([`super::Mat5File::from_bytes`]: fuzzing,
//! in-memory use). Positioned reads need no shared seek position, so two readers of one
//! file (a complex variable's real and imaginary parts) and the inflating thread can read at
//! once.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read};

#[derive(Debug)]
pub(crate) enum Source {
    Bytes(Vec<u8>),
    File { file: File, len: u64 },
}

impl Source {
    /// The source's length in bytes.
    pub(crate) fn len(&self) -> u64 {
        match self {
            Source::Bytes(b) => b.len() as u64,
            Source::File { len, .. } => *len,
        }
    }

    /// Bytes `start..end`, clamped to the source's end (the caller checks the range against
    /// the length and its limits before asking for it: this allocates `end - start` bytes).
    pub(crate) fn range(&self, start: u64, end: u64) -> io::Result<Cow<'_, [u8]>> {
        let end = end.min(self.len());
        let start = start.min(end);
        match self {
            Source::Bytes(b) => Ok(Cow::Borrowed(
                b.get(start as usize..end as usize).unwrap_or_default(),
            )),
            Source::File { file, .. } => {
                let mut buf = vec![0u8; (end - start) as usize];
                read_exact_at(file, &mut buf, start)?;
                Ok(Cow::Owned(buf))
            }
        }
    }

    /// A reader of bytes `start..end` (ending early at the source's end).
    pub(crate) fn reader(&self, start: u64, end: u64) -> RangeReader<'_> {
        RangeReader {
            source: self,
            pos: start,
            end: end.min(self.len()),
        }
    }
}

/// A [`Read`] over a range of a [`Source`], by positioned reads.
#[derive(Debug)]
pub(crate) struct RangeReader<'a> {
    source: &'a Source,
    pos: u64,
    end: u64,
}

impl Read for RangeReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = self.end.saturating_sub(self.pos).min(buf.len() as u64) as usize;
        let Some(buf) = buf.get_mut(..want).filter(|b| !b.is_empty()) else {
            return Ok(0);
        };
        let n = match self.source {
            Source::Bytes(b) => {
                let from = b.get(self.pos as usize..).unwrap_or_default();
                let n = from.len().min(buf.len());
                buf.get_mut(..n)
                    .unwrap_or_default()
                    .copy_from_slice(from.get(..n).unwrap_or_default());
                n
            }
            Source::File { file, .. } => read_at(file, buf, self.pos)?,
        };
        self.pos += n as u64;
        Ok(n)
    }
}

fn read_exact_at(file: &File, mut buf: &mut [u8], mut at: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, at) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = buf.get_mut(n..).unwrap_or_default();
                at += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

#[cfg(not(any(unix, windows)))]
fn read_at(_file: &File, _buf: &mut [u8], _at: u64) -> io::Result<usize> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "positioned reads are not available on this platform",
    ))
}
