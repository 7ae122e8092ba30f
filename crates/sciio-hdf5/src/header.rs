//! Bounds-checked reading of HDF5 object headers (format spec, "Data Object Headers"), shared
//! by the in-memory small-dataset decoder (`small.rs`) and the vlen attribute guard
//! (`vlen_guard.rs`). Every read is checked against the bytes at hand; anything unexpected
//! gives `None`, and the caller leaves the object to libhdf5.

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

/// The messages of one block of a version-1 object header (8-byte message headers, bodies
/// padded to 8 bytes). Yields `None` once for a message running past the block.
pub(crate) struct V1Messages<'a> {
    block: &'a [u8],
    pos: usize,
}

impl<'a> V1Messages<'a> {
    pub(crate) fn new(block: &'a [u8]) -> Self {
        V1Messages { block, pos: 0 }
    }
}

impl<'a> Iterator for V1Messages<'a> {
    type Item = Option<Message<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.block;
        let pos = self.pos;
        if pos + 8 > b.len() {
            return None;
        }
        let kind = u16::from_le_bytes([b[pos], b[pos + 1]]);
        let n = usize::from(u16::from_le_bytes([b[pos + 2], b[pos + 3]]));
        let flags = b[pos + 4];
        let Some(body) = b.get(pos + 8..pos + 8 + n) else {
            self.pos = b.len();
            return Some(None);
        };
        self.pos = pos + 8 + n;
        Some(Some(Message {
            kind,
            flags,
            at: pos + 8,
            body,
        }))
    }
}

/// The first block of a version-1 header at `prefix` (its 16-byte prefix): (message count,
/// address and length of the messages).
pub(crate) fn v1_first_block(addr: u64, prefix: &[u8]) -> Option<(usize, u64, usize)> {
    if *prefix.first()? != 1 {
        return None;
    }
    let total = usize::from(u16_at(prefix, 2)?);
    let size = u32_at(prefix, 8)? as usize;
    Some((total, addr.checked_add(16)?, size))
}

/// Walks every message of the object header at `addr` (version 1 or 2), reading blocks with
/// `read(addr, len)`; `visit` gets each message with the file address of its body and may stop
/// the walk by returning `Some(true)`. `None` when the header is not one this reads.
pub(crate) fn walk(
    read: &dyn Fn(u64, usize) -> Option<Vec<u8>>,
    addr: u64,
    visit: &mut dyn FnMut(&Message<'_>, u64) -> Option<bool>,
) -> Option<()> {
    let prefix = read(addr, 16)?;
    if prefix.starts_with(b"OHDR") {
        return walk_v2(read, addr, visit);
    }
    let (total, start, size) = v1_first_block(addr, &prefix)?;
    let mut blocks = vec![(start, size)];
    let mut seen = 0usize;
    let mut i = 0;
    while let Some(&(start, len)) = blocks.get(i) {
        i += 1;
        if i > MAX_BLOCKS {
            return None;
        }
        let block = read(start, len)?;
        for m in V1Messages::new(&block).take(total.saturating_sub(seen)) {
            let m = m?;
            seen += 1;
            if m.kind == msg::CONTINUATION {
                blocks.push(continuation(m.body)?);
            } else if visit(&m, start.checked_add(m.at as u64)?)? {
                return Some(());
            }
        }
    }
    Some(())
}

/// Address and length of a continuation block.
fn continuation(body: &[u8]) -> Option<(u64, usize)> {
    Some((u64_at(body, 0)?, usize::try_from(u64_at(body, 8)?).ok()?))
}

/// Version-2 headers: "OHDR" blocks and "OCHK" continuations, 4-byte message headers (6 with
/// creation order), a checksum at the end of each block (libhdf5 verified it already).
fn walk_v2(
    read: &dyn Fn(u64, usize) -> Option<Vec<u8>>,
    addr: u64,
    visit: &mut dyn FnMut(&Message<'_>, u64) -> Option<bool>,
) -> Option<()> {
    let head = read(addr, 6 + 16 + 4 + 8)?;
    if head[4] != 2 {
        return None;
    }
    let flags = head[5];
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
    let chunk0 = usize::try_from(u64::from_le_bytes(size_bytes)).ok()?;
    at += width;
    let order = flags & 0x04 != 0;
    // (start of the messages, their length) of each block.
    let mut blocks = vec![(addr.checked_add(at as u64)?, chunk0)];
    let mut i = 0;
    while let Some(&(start, len)) = blocks.get(i) {
        i += 1;
        if i > MAX_BLOCKS {
            return None;
        }
        let block = read(start, len)?;
        let header = if order { 6 } else { 4 };
        let mut pos = 0;
        // A gap shorter than a message header may end the block.
        while pos + header <= block.len() {
            let kind = u16::from(block[pos]);
            let n = usize::from(u16_at(&block, pos + 1)?);
            let m = Message {
                kind,
                flags: block[pos + 3],
                at: pos + header,
                body: block.get(pos + header..pos + header + n)?,
            };
            pos += header + n;
            if m.kind == msg::CONTINUATION {
                let (addr, len) = continuation(m.body)?;
                // "OCHK", the messages, a 4-byte checksum.
                blocks.push((addr.checked_add(4)?, len.checked_sub(8)?));
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
