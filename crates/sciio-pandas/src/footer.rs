//! Footers Arrow C++ reads and arrow-rs refuses: a field of a known id whose Thrift wire type is
//! not the one the Parquet spec gives it. Thrift's generated readers (Arrow C++, parquet-mr)
//! skip such a field; arrow-rs's own footer decoder fails ("Expected list element type of I64
//! but got I16" for parquet-testing's `dict-page-offset-zero.parquet`, written by a Dremio
//! build of parquet-mr that puts a list of page headers in `ColumnMetaData` field 15, which the
//! spec makes `bloom_filter_length: i32`).
//!
//! The same holds for the element type of an empty list: fastparquet writes the row groups of a
//! file without rows as an empty list of element type 0 ("Expected list element type of Struct
//! but got Byte"); Thrift's readers never look at it.
//!
//! [`sanitized`] re-encodes the footer (Thrift compact protocol) without those fields (and
//! empty lists with the spec's element type), in the
//! structs arrow-rs decodes for reading (`FileMetaData`, `RowGroup`, `ColumnChunk`,
//! `ColumnMetaData`); every other byte is copied as it is. It is only tried after arrow-rs
//! refused a footer.

use sciio_core::{Error, Result};

/// The structs whose field types are checked.
#[derive(Clone, Copy)]
enum Kind {
    FileMetaData,
    RowGroup,
    ColumnChunk,
    ColumnMetaData,
}

// Thrift compact protocol wire types.
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;

/// Nesting deeper than this is refused (no Parquet footer comes close).
const MAX_DEPTH: usize = 64;

/// The wire type the Parquet spec (parquet.thrift) gives field `id` of `kind`.
fn expected(kind: Kind, id: i16) -> Option<u8> {
    Some(match (kind, id) {
        (Kind::FileMetaData, 1) => I32,
        (Kind::FileMetaData, 2 | 4 | 5 | 7) => LIST,
        (Kind::FileMetaData, 3) => I64,
        (Kind::FileMetaData, 6 | 9) => BINARY,
        (Kind::FileMetaData, 8) => STRUCT,
        (Kind::RowGroup, 1 | 4) => LIST,
        (Kind::RowGroup, 2 | 3 | 5 | 6) => I64,
        (Kind::RowGroup, 7) => I16,
        (Kind::ColumnChunk, 1 | 9) => BINARY,
        (Kind::ColumnChunk, 2 | 4 | 6) => I64,
        (Kind::ColumnChunk, 3 | 8) => STRUCT,
        (Kind::ColumnChunk, 5 | 7) => I32,
        (Kind::ColumnMetaData, 1 | 4 | 15) => I32,
        (Kind::ColumnMetaData, 2 | 3 | 8 | 13) => LIST,
        (Kind::ColumnMetaData, 5 | 6 | 7 | 9 | 10 | 11 | 14) => I64,
        (Kind::ColumnMetaData, 12 | 16 | 17) => STRUCT,
        _ => return None,
    })
}

/// The struct kind of the elements of list field `id` of `kind`, or of struct field `id`.
fn child(kind: Kind, id: i16) -> Option<Kind> {
    match (kind, id) {
        (Kind::FileMetaData, 4) => Some(Kind::RowGroup),
        (Kind::RowGroup, 1) => Some(Kind::ColumnChunk),
        (Kind::ColumnChunk, 3) => Some(Kind::ColumnMetaData),
        _ => None,
    }
}

/// The element type the spec gives list field `id` of `kind`.
fn list_element(kind: Kind, id: i16) -> Option<u8> {
    match (kind, id) {
        (Kind::FileMetaData, 2 | 4 | 5 | 7)
        | (Kind::RowGroup, 1 | 4)
        | (Kind::ColumnMetaData, 8 | 13) => Some(STRUCT),
        (Kind::ColumnMetaData, 2) => Some(I32),
        (Kind::ColumnMetaData, 3) => Some(BINARY),
        _ => None,
    }
}

fn same_wire_type(a: u8, b: u8) -> bool {
    let bool_like = |t| t == BOOL_TRUE || t == BOOL_FALSE;
    a == b || (bool_like(a) && bool_like(b))
}

struct Walker<'a> {
    buf: &'a [u8],
    pos: usize,
    dropped: usize,
}

fn bad(what: &str, at: usize) -> Error {
    Error::format(format!("parquet footer: {what} at byte {at} of the footer"))
}

impl Walker<'_> {
    /// The bytes from `start` to the current position.
    fn since(&self, start: usize) -> &[u8] {
        self.buf.get(start..self.pos).unwrap_or_default()
    }

    fn byte(&mut self) -> Result<u8> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| bad("data ends", self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(bad("a varint over 10 bytes", self.pos))
    }

    fn advance(&mut self, n: u64) -> Result<()> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n))
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| bad("a value runs past the end", self.pos))?;
        self.pos = end;
        Ok(())
    }

    /// Moves past one value of wire type `t`.
    fn skip(&mut self, t: u8, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(bad("values nested too deep", self.pos));
        }
        match t {
            BOOL_TRUE | BOOL_FALSE => Ok(()),
            BYTE => self.advance(1),
            I16 | I32 | I64 => self.varint().map(|_| ()),
            DOUBLE => self.advance(8),
            BINARY => {
                let n = self.varint()?;
                self.advance(n)
            }
            LIST | SET => {
                let (n, elem) = self.list_header()?;
                for _ in 0..n {
                    self.skip_element(elem, depth + 1)?;
                }
                Ok(())
            }
            MAP => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                for _ in 0..n {
                    self.skip_element(kv >> 4, depth + 1)?;
                    self.skip_element(kv & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            STRUCT => loop {
                let h = self.byte()?;
                if h == 0 {
                    return Ok(());
                }
                if h >> 4 == 0 {
                    self.varint()?;
                }
                self.skip(h & 0x0f, depth + 1)?;
            },
            _ => Err(bad("an unknown Thrift type", self.pos)),
        }
    }

    /// A collection element: booleans take one byte there.
    fn skip_element(&mut self, t: u8, depth: usize) -> Result<()> {
        match t {
            BOOL_TRUE | BOOL_FALSE => self.advance(1),
            _ => self.skip(t, depth),
        }
    }

    fn list_header(&mut self) -> Result<(u64, u8)> {
        let h = self.byte()?;
        let n = match h >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        // every element takes at least one byte (except booleans packed in a struct, which
        // cannot be list elements): a count beyond the rest of the footer is damage
        if n > self.buf.len().saturating_sub(self.pos) as u64 {
            return Err(bad("a list longer than the footer", self.pos));
        }
        Ok((n, h & 0x0f))
    }

    /// Copies the struct at the current position into `out`, leaving out fields whose wire
    /// type is not the spec's.
    fn copy_struct(&mut self, kind: Kind, out: &mut Vec<u8>, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(bad("values nested too deep", self.pos));
        }
        let (mut last_read, mut last_written) = (0i16, 0i16);
        loop {
            let h = self.byte()?;
            if h == 0 {
                out.push(0);
                return Ok(());
            }
            let t = h & 0x0f;
            let id = match h >> 4 {
                0 => {
                    let z = self.varint()?;
                    let v = ((z >> 1) as i64) ^ -((z & 1) as i64);
                    i16::try_from(v).map_err(|_| bad("a field id out of range", self.pos))?
                }
                d => last_read.saturating_add(i16::from(d)),
            };
            last_read = id;
            if expected(kind, id).is_some_and(|e| !same_wire_type(e, t)) {
                self.skip(t, depth + 1)?;
                self.dropped += 1;
                continue;
            }
            let delta = i32::from(id) - i32::from(last_written);
            if (1..=15).contains(&delta) {
                out.push(((delta as u8) << 4) | t);
            } else {
                out.push(t);
                let z = ((i64::from(id) << 1) ^ (i64::from(id) >> 63)) as u64;
                write_varint(out, z);
            }
            last_written = id;
            let start = self.pos;
            match (t, child(kind, id)) {
                (STRUCT, Some(k)) => self.copy_struct(k, out, depth + 1)?,
                (LIST, child_kind) => {
                    let (n, elem) = self.list_header()?;
                    match list_element(kind, id) {
                        // an empty list of another element type (fastparquet writes the row
                        // groups of a file without rows as an empty list of type 0): Thrift's
                        // readers do not look at the type of an empty list, arrow-rs does
                        Some(want) if n == 0 && want != elem => {
                            out.push(want);
                            self.dropped += 1;
                            continue;
                        }
                        _ => out.extend_from_slice(self.since(start)),
                    }
                    for _ in 0..n {
                        match (elem, child_kind) {
                            (STRUCT, Some(k)) => self.copy_struct(k, out, depth + 1)?,
                            _ => {
                                let s = self.pos;
                                self.skip_element(elem, depth + 1)?;
                                out.extend_from_slice(self.since(s));
                            }
                        }
                    }
                }
                _ => {
                    self.skip(t, depth + 1)?;
                    out.extend_from_slice(self.since(start));
                }
            }
        }
    }
}

fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The footer `buf` (the Thrift `FileMetaData`) without the fields whose wire type differs from
/// the spec's, or `None` when it has none.
pub(crate) fn sanitized(buf: &[u8]) -> Result<Option<Vec<u8>>> {
    let mut w = Walker {
        buf,
        pos: 0,
        dropped: 0,
    };
    let mut out = Vec::with_capacity(buf.len());
    w.copy_struct(Kind::FileMetaData, &mut out, 0)?;
    Ok((w.dropped > 0).then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_of_the_wrong_type_is_left_out_and_the_next_field_renumbered() {
        // FileMetaData { 1: i32 1, 3: i64 7 } with field 2 as an i32 (the spec: a list)
        let footer = [0x15, 0x02, 0x15, 0x04, 0x16, 0x0e, 0x00];
        let fixed = sanitized(&footer).unwrap().unwrap();
        assert_eq!(fixed, [0x15, 0x02, 0x26, 0x0e, 0x00]);
        // nothing to leave out
        assert_eq!(sanitized(&fixed).unwrap(), None);
        // damage is an error, not a panic
        assert!(sanitized(&[0x19, 0xfc]).is_err());
        assert!(sanitized(&[]).is_err());
        // FileMetaData { 4: empty list of element type 0 }: the spec's element type, struct
        let footer = [0x49, 0x00, 0x00];
        assert_eq!(sanitized(&footer).unwrap().unwrap(), [0x49, 0x0c, 0x00]);
    }
}
