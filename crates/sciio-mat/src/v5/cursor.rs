//! The one bounds-checked reader over Level-5 MAT bytes: every tag and size is checked against
//! the enclosing element before use, and nothing is indexed unchecked.

use sciio_core::{Error, Limits, Result, ScalarKind};

/// The byte order a file was written in (from its endian indicator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endian {
    Little,
    Big,
}

impl Endian {
    pub(crate) fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }

    pub(crate) fn i32(self, b: [u8; 4]) -> i32 {
        self.u32(b) as i32
    }

    /// Whether values of this order must be byte-swapped to be native.
    pub(crate) fn swap(self) -> bool {
        match self {
            Endian::Little => cfg!(target_endian = "big"),
            Endian::Big => cfg!(target_endian = "little"),
        }
    }
}

/// Level-5 data types.
pub(crate) const MI_INT8: u32 = 1;
pub(crate) const MI_UINT8: u32 = 2;
pub(crate) const MI_INT16: u32 = 3;
pub(crate) const MI_UINT16: u32 = 4;
pub(crate) const MI_INT32: u32 = 5;
pub(crate) const MI_UINT32: u32 = 6;
pub(crate) const MI_SINGLE: u32 = 7;
pub(crate) const MI_DOUBLE: u32 = 9;
pub(crate) const MI_INT64: u32 = 12;
pub(crate) const MI_UINT64: u32 = 13;
pub(crate) const MI_MATRIX: u32 = 14;
pub(crate) const MI_COMPRESSED: u32 = 15;
pub(crate) const MI_UTF8: u32 = 16;
pub(crate) const MI_UTF16: u32 = 17;
pub(crate) const MI_UTF32: u32 = 18;

/// The numpy kind of a numeric data type.
pub(crate) fn storage_kind(ty: u32) -> Option<ScalarKind> {
    Some(match ty {
        MI_INT8 => ScalarKind::Int(1),
        MI_UINT8 | MI_UTF8 => ScalarKind::UInt(1),
        MI_INT16 => ScalarKind::Int(2),
        MI_UINT16 | MI_UTF16 => ScalarKind::UInt(2),
        MI_INT32 => ScalarKind::Int(4),
        MI_UINT32 | MI_UTF32 => ScalarKind::UInt(4),
        MI_SINGLE => ScalarKind::Float(4),
        MI_DOUBLE => ScalarKind::Float(8),
        MI_INT64 => ScalarKind::Int(8),
        MI_UINT64 => ScalarKind::UInt(8),
        _ => return None,
    })
}

/// A data type's name for messages.
pub(crate) fn type_name(ty: u32) -> String {
    let name = match ty {
        MI_INT8 => "miINT8",
        MI_UINT8 => "miUINT8",
        MI_INT16 => "miINT16",
        MI_UINT16 => "miUINT16",
        MI_INT32 => "miINT32",
        MI_UINT32 => "miUINT32",
        MI_SINGLE => "miSINGLE",
        MI_DOUBLE => "miDOUBLE",
        MI_INT64 => "miINT64",
        MI_UINT64 => "miUINT64",
        MI_MATRIX => "miMATRIX",
        MI_COMPRESSED => "miCOMPRESSED",
        MI_UTF8 => "miUTF8",
        MI_UTF16 => "miUTF16",
        MI_UTF32 => "miUTF32",
        other => return format!("data type {other}"),
    };
    name.to_string()
}

/// One data element: its type and its bytes (padding excluded).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Element<'a> {
    pub ty: u32,
    pub data: &'a [u8],
    /// Where the element's tag starts (a file offset, or the variable's offset inside
    /// compressed data).
    pub offset: u64,
}

/// A position in a byte slice that knows where the slice lies in the file.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    /// The file offset of `data[0]`.
    origin: u64,
    /// Whether offsets inside `data` are file offsets (false inside inflated data: errors
    /// then point at the compressed element).
    exact: bool,
    pub endian: Endian,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8], origin: u64, exact: bool, endian: Endian) -> Cursor<'a> {
        Cursor {
            data,
            pos: 0,
            origin,
            exact,
            endian,
        }
    }

    /// A cursor over an element's data, at the same place in the file.
    pub(crate) fn inner(&self, el: &Element<'a>) -> Cursor<'a> {
        Cursor {
            data: el.data,
            pos: 0,
            origin: if self.exact {
                el.offset.saturating_add(8)
            } else {
                self.origin
            },
            exact: self.exact,
            endian: self.endian,
        }
    }

    /// The file offset of the current position.
    pub(crate) fn offset(&self) -> u64 {
        if self.exact {
            self.origin.saturating_add(self.pos as u64)
        } else {
            self.origin
        }
    }

    /// Bytes read so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    pub(crate) fn at_end(&self) -> bool {
        self.remaining() == 0
    }

    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        match end.and_then(|e| self.data.get(self.pos..e)) {
            Some(bytes) => {
                self.pos += n;
                Ok(bytes)
            }
            None => Err(Error::truncated(format!(
                "{what} needs {n} bytes, its enclosing element has {} left",
                self.remaining()
            ))
            .with_offset(self.offset())),
        }
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(self.endian.u32([b[0], b[1], b[2], b[3]])) // ok: take returned 4 bytes
    }

    /// The next data element (small-element format included); the padding after it to an
    /// 8-byte boundary is skipped (a padding cut short by the enclosing end is tolerated).
    pub(crate) fn element(&mut self, what: &str) -> Result<Element<'a>> {
        let offset = self.offset();
        let first = self.u32(what)?;
        if first >> 16 != 0 {
            // Small data element: size in the upper 16 bits, data in the tag's second word.
            let n = (first >> 16) as usize;
            let ty = first & 0xFFFF;
            let word = self.take(4, what)?;
            let data = word.get(..n).ok_or_else(|| {
                Error::format(format!(
                    "{what}: small data element claims {n} bytes (at most 4)"
                ))
                .with_offset(offset)
            })?;
            return Ok(Element { ty, data, offset });
        }
        let n = self.u32(what)? as usize;
        let data = self.take(n, &format!("{what} ({})", type_name(first)))?;
        if first != MI_COMPRESSED {
            let pad = (8 - n % 8) % 8;
            self.pos += pad.min(self.remaining());
        }
        Ok(Element {
            ty: first,
            data,
            offset,
        })
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> Error {
        Error::format(message).with_offset(self.offset())
    }
}

/// Inflates a zlib stream whole, bounded by `limits` (size and ratio); a corrupted stream, a
/// stream cut short or data after its end are errors.
pub(crate) fn inflate(data: &[u8], limits: &Limits, offset: u64) -> Result<Vec<u8>> {
    inflate_prefix(data, limits, offset, None)
}

/// Inflates at most `prefix` bytes when given (no end checks then).
pub(crate) fn inflate_prefix(
    data: &[u8],
    limits: &Limits,
    offset: u64,
    prefix: Option<usize>,
) -> Result<Vec<u8>> {
    use flate2::{Decompress, FlushDecompress, Status};
    let by_ratio = (data.len() as u64).saturating_mul(limits.max_ratio.max(1));
    let max = limits.max_alloc.min(by_ratio).max(64);
    let want = match prefix {
        Some(p) => (p as u64).min(max),
        None => max,
    };
    let corrupt = |e: &dyn std::fmt::Display| {
        Error::format(format!(
            "corrupted zlib stream in an miCOMPRESSED element: {e}"
        ))
        .with_offset(offset)
    };
    let mut d = Decompress::new(true);
    let guess = (data.len() as u64).saturating_mul(4).min(want).min(1 << 30);
    let mut out: Vec<u8> = Vec::with_capacity(guess as usize);
    let ended = loop {
        if out.len() == out.capacity() {
            let room = want.saturating_sub(out.len() as u64);
            if room == 0 {
                break false;
            }
            out.reserve(room.min(out.capacity().max(4096) as u64) as usize);
        }
        let (in_before, out_before) = (d.total_in(), d.total_out());
        let input = data.get(d.total_in() as usize..).unwrap_or_default();
        let status = d
            .decompress_vec(input, &mut out, FlushDecompress::None)
            .map_err(|e| corrupt(&e))?;
        if let Status::StreamEnd = status {
            break true;
        }
        if d.total_in() == in_before && d.total_out() == out_before {
            break false;
        }
    };
    if prefix.is_some() {
        out.truncate(want as usize);
        return Ok(out);
    }
    if !ended {
        if out.len() as u64 >= max {
            let big = (out.len() as u64).saturating_add(1);
            let e = limits
                .check_alloc(big, "an inflated miCOMPRESSED element")
                .and_then(|_| limits.check_ratio(data.len() as u64, big, "an miCOMPRESSED element"))
                .err()
                .unwrap_or_else(|| {
                    Error::format("an miCOMPRESSED element inflates beyond the limits")
                });
            return Err(e.with_offset(offset));
        }
        return Err(corrupt(&format!(
            "the stream is cut short after {} of {} bytes",
            d.total_in(),
            data.len()
        )));
    }
    if d.total_in() != data.len() as u64 {
        return Err(corrupt(&format!(
            "the stream ends after {} of its {} bytes",
            d.total_in(),
            data.len()
        )));
    }
    Ok(out)
}
