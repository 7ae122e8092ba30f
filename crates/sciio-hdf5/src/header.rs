//! Bounds-checked reading of HDF5 object headers (format spec, "Data Object Headers"), shared
//! by the in-memory small-dataset decoder (`small.rs`) and the vlen attribute guard
//! (`vlen_guard.rs`). Every read is checked against the bytes at hand; anything unexpected
//! gives `None`, and the caller leaves the object to libhdf5.

use std::borrow::Cow;

pub(crate) fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Object header message types used here.
pub(crate) mod msg {
    pub(crate) const ATTRIBUTE: u16 = 0x000C;
    pub(crate) const CONTINUATION: u16 = 0x0010;
}

/// Most header blocks (the first and its continuations) followed for one object.
pub(crate) const MAX_BLOCKS: usize = 64;

/// One message of an object header block.
pub(crate) struct Message<'a> {
    pub(crate) kind: u16,
    pub(crate) flags: u8,
    /// Offset of the body within its block.
    pub(crate) at: usize,
    pub(crate) body: &'a [u8],
}

/// The first block of a version-1 header at `prefix` (its 16-byte prefix): (message count,
/// address and length of the messages).
fn v1_first_block(addr: u64, prefix: &[u8]) -> Option<(usize, u64, usize)> {
    if *prefix.first()? != 1 {
        return None;
    }
    let total = usize::from(u16_at(prefix, 2)?);
    let size = u32_at(prefix, 8)? as usize;
    Some((total, addr.checked_add(16)?, size))
}

/// The two object header formats: version 1 (8-byte message headers, a message count) and
/// version 2 ("OHDR"/"OCHK" blocks, 4-byte message headers, 6 with creation order).
#[derive(Clone, Copy)]
enum Format {
    V1 { total: usize },
    V2 { order: bool },
}

impl Format {
    /// Bytes before each message body.
    fn message_header(self) -> usize {
        match self {
            Format::V1 { .. } => 8,
            Format::V2 { order } => 4 + 2 * usize::from(order),
        }
    }

    /// The message at `pos` of `block`: `None` when too few bytes remain for a header (the end,
    /// or a version-2 gap), `Some(None)` when its body runs past the block.
    fn message_at(self, block: &[u8], pos: usize) -> Option<Option<Message<'_>>> {
        let header = self.message_header();
        if pos + header > block.len() {
            return None;
        }
        let (kind, size, flags) = match self {
            Format::V1 { .. } => (u16_at(block, pos), u16_at(block, pos + 2), block[pos + 4]),
            Format::V2 { .. } => (
                Some(u16::from(block[pos])),
                u16_at(block, pos + 1),
                block[pos + 3],
            ),
        };
        let (Some(kind), Some(size)) = (kind, size) else {
            return Some(None);
        };
        let at = pos + header;
        Some(block.get(at..at + usize::from(size)).map(|body| Message {
            kind,
            flags,
            at,
            body,
        }))
    }

    /// Where a continuation message points: its messages' address and length.
    fn continuation(self, body: &[u8]) -> Option<(u64, usize)> {
        let (addr, len) = (u64_at(body, 0)?, usize::try_from(u64_at(body, 8)?).ok()?);
        match self {
            Format::V1 { .. } => Some((addr, len)),
            // "OCHK", the messages, a 4-byte checksum.
            Format::V2 { .. } => Some((addr.checked_add(4)?, len.checked_sub(8)?)),
        }
    }
}

/// The format of the header at `addr` and the address and length of its first messages.
fn first_block(read: &Reader<'_>, addr: u64) -> Option<(Format, u64, usize)> {
    let prefix = read(addr, 16)?;
    if !prefix.starts_with(b"OHDR") {
        let (total, start, size) = v1_first_block(addr, &prefix)?;
        return Some((Format::V1 { total }, start, size));
    }
    let head = read(addr, 6 + 16 + 4 + 8)?;
    let flags = *head.get(5).filter(|_| head[4] == 2)?;
    let mut at = 6;
    if flags & 0x20 != 0 {
        at += 16; // access, modification, change and birth times
    }
    if flags & 0x10 != 0 {
        at += 4; // attribute storage phase change values
    }
    let width = 1usize << (flags & 0x03);
    let mut size_bytes = [0u8; 8];
    size_bytes[..width].copy_from_slice(head.get(at..at + width)?);
    let size = usize::try_from(u64::from_le_bytes(size_bytes)).ok()?;
    let order = flags & 0x04 != 0;
    Some((
        Format::V2 { order },
        addr.checked_add((at + width) as u64)?,
        size,
    ))
}

/// Reads `len` bytes at an HDF5 address: borrowed from a file image or read from disk.
pub(crate) type Reader<'r> = dyn Fn(u64, usize) -> Option<Cow<'r, [u8]>> + 'r;

/// Walks every message of the object header at `addr` (version 1 or 2; libhdf5 verified a
/// version-2 header's checksums already), reading blocks with `read`; `visit` gets each
/// message with the file address of its body and stops the walk by returning `Some(true)`.
/// `None` when the header is not one this reads, or `visit` says so.
pub(crate) fn walk(
    read: &Reader<'_>,
    addr: u64,
    visit: &mut dyn FnMut(&Message<'_>, u64) -> Option<bool>,
) -> Option<()> {
    let (format, start, size) = first_block(read, addr)?;
    let mut blocks = vec![(start, size)];
    let mut seen = 0usize;
    let mut i = 0;
    while let Some(&(start, len)) = blocks.get(i) {
        i += 1;
        if i > MAX_BLOCKS {
            return None;
        }
        let block = read(start, len)?;
        let mut pos = 0;
        while let Some(m) = format.message_at(&block, pos) {
            if matches!(format, Format::V1 { total } if seen >= total) {
                break;
            }
            let m = m?;
            seen += 1;
            pos = m.at + m.body.len();
            if m.kind == msg::CONTINUATION {
                let (next, len) = format.continuation(m.body)?;
                blocks.push((next, len));
            } else if visit(&m, start.checked_add(m.at as u64)?)? {
                return Some(());
            }
        }
    }
    Some(())
}

/// The parts of an attribute message (versions 1–3): name, datatype, dataspace and data
/// bytes, with the data's offset in the body. `None` for shared datatypes or dataspaces.
pub(crate) struct AttributeParts<'a> {
    pub(crate) name: &'a [u8],
    pub(crate) datatype: &'a [u8],
    pub(crate) dataspace: &'a [u8],
    pub(crate) data_at: usize,
}

pub(crate) fn attribute_parts(b: &[u8]) -> Option<AttributeParts<'_>> {
    let version = *b.first()?;
    let name_len = usize::from(u16_at(b, 2)?);
    let type_len = usize::from(u16_at(b, 4)?);
    let space_len = usize::from(u16_at(b, 6)?);
    // Version 1 pads each part to 8 bytes; versions 2 and 3 do not, and 3 adds an encoding.
    let (pad, mut at): (fn(usize) -> usize, usize) = match version {
        1 => (|n| n.next_multiple_of(8), 8),
        2 if *b.get(1)? == 0 => (|n| n, 8),
        3 if *b.get(1)? == 0 => (|n| n, 9),
        _ => return None, // shared datatype or dataspace
    };
    let name = b.get(at..at + name_len)?;
    let name = name.strip_suffix(&[0]).unwrap_or(name);
    at += pad(name_len);
    let datatype = b.get(at..at + type_len)?;
    at += pad(type_len);
    let dataspace = b.get(at..at + space_len)?;
    at += pad(space_len);
    Some(AttributeParts {
        name,
        datatype,
        dataspace,
        data_at: at,
    })
}
