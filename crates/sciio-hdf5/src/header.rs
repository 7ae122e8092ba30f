//! Bounds-checked reading of HDF5 object headers (format spec, "Data Object Headers"), shared
//! by the in-memory small-dataset decoder (`small.rs`) and the vlen attribute guard
//! (`vlen_guard.rs`). Every read is checked against the bytes at hand; anything unexpected
//! gives `None`, and the caller leaves the object to libhdf5.

use std::borrow::Cow;
use std::os::unix::fs::FileExt;
use std::path::Path;

use sciio_core::{Error, ErrorKind, Result};

/// A file read with positioned reads checked against its length (addresses count from
/// `base`, where the superblock is: after the user block).
pub(crate) struct Disk {
    pub(crate) file: std::fs::File,
    pub(crate) base: u64,
    pub(crate) len: u64,
    /// The superblock's size of lengths (8 almost always); local heaps are checked only at 8.
    pub(crate) length_size: u8,
}

impl Disk {
    /// `len` bytes at HDF5 address `addr`, if inside the file.
    pub(crate) fn read(&self, addr: u64, len: usize) -> Option<Cow<'static, [u8]>> {
        let start = addr.checked_add(self.base)?;
        if start.checked_add(len as u64)? > self.len {
            return None;
        }
        let mut buf = vec![0u8; len];
        self.file.read_exact_at(&mut buf, start).ok()?;
        Some(buf.into())
    }
}

/// HDF5's superblock signature.
pub(crate) const SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// Checks the root group's object header before libhdf5 opens the file: libhdf5 2.0 decodes
/// a message whose size runs past its header block from beyond the block's buffer (a heap
/// over-read found by fuzzing pytables_read, in `H5O__cont_decode`), and allocates header
/// blocks as large as the file says. Damage this finds is a Corrupt error; anything it does
/// not read (other superblocks, address sizes) is left to libhdf5. Returns the file for
/// checking other objects' headers the same way ([`check_object_header`]).
pub(crate) fn check_root_header(path: &Path) -> Result<Option<Disk>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io("cannot open the file", e))?;
    let len = file
        .metadata()
        .map_err(|e| Error::io("cannot read the file size", e))?
        .len();
    let mut disk = Disk {
        file,
        base: 0,
        len,
        length_size: 0,
    };
    // The superblock is at 0 or after a user block of 512, 1024, 2048... bytes.
    let mut at = 0u64;
    loop {
        disk.base = at;
        match disk.read(0, 8) {
            Some(sig) if sig.as_ref() == SIGNATURE => break,
            Some(_) => at = if at == 0 { 512 } else { at * 2 },
            None => return Ok(None),
        }
    }
    let Some(sb) = disk.read(0, 80) else {
        return Ok(None);
    };
    // Root object header address: in the root symbol table entry (superblock 0 and 1) or its
    // own field (2 and 3), when addresses take 8 bytes.
    // The end-of-file address and the root object header address: in the root symbol table
    // entry (superblock 0 and 1) or its own field (2 and 3), when addresses take 8 bytes.
    let (offset_size, eof, root) = match sb[8] {
        0 => (sb[13], u64_at(&sb, 40), u64_at(&sb, 64)),
        1 => (sb[13], u64_at(&sb, 44), u64_at(&sb, 68)),
        2 | 3 => (sb[9], u64_at(&sb, 28), u64_at(&sb, 36)),
        _ => return Ok(None),
    };
    disk.length_size = if sb[8] < 2 { sb[14] } else { sb[10] };
    let (8, Some(eof), Some(root)) = (offset_size, eof, root) else {
        return Ok(None);
    };
    check_not_truncated(&disk, eof)?;
    check_object_header(&disk, root, "root group")?;
    Ok(Some(disk))
}

/// A file shorter than its superblock's end-of-file address has lost its end (libhdf5 refuses
/// it too, with a message about its internals): say so plainly, with both sizes. Like
/// libhdf5 (`H5F__super_read`), the stored address is compared with the whole file's length,
/// user block included.
fn check_not_truncated(disk: &Disk, eof: u64) -> Result<()> {
    if eof == u64::MAX || disk.len >= eof {
        return Ok(());
    }
    Err(Error::truncated(format!(
        "the file is truncated: it ends at byte {}, its superblock says it is {eof} bytes long",
        disk.len,
    ))
    .with_offset(disk.len))
}

/// Checks the object header at `addr` before libhdf5 loads it (see [`check_root_header`]):
/// damage is a Corrupt error naming `what`, at the damaged byte.
pub(crate) fn check_object_header(disk: &Disk, addr: u64, what: &str) -> Result<()> {
    check_object_header_in(&|a, n| disk.read(a, n), disk, addr, what)
}

/// [`check_object_header`] reading through `read` (a file image, say) for the file `disk`
/// describes. An old-style group's local heap (the heap of its link names) is checked too.
pub(crate) fn check_object_header_in(
    read: &Reader<'_>,
    disk: &Disk,
    addr: u64,
    what: &str,
) -> Result<()> {
    let damaged = |why: String, at: u64| {
        Error::new(ErrorKind::Corrupt, format!("{what}: {why}"))
            .with_offset(at.saturating_add(disk.base))
    };
    let mut heaps = Vec::new();
    let walked = walk_checked(read, addr, &mut |m, _| {
        if m.kind == msg::SYMBOL_TABLE {
            heaps.extend(u64_at(m.body, 8));
        }
        Some(false)
    });
    if let Err(WalkEnd::Damaged(why, at)) = walked {
        return Err(damaged(why, at));
    }
    if disk.length_size == 8 {
        for heap in heaps {
            check_local_heap(read, heap).map_err(|(why, at)| damaged(why, at))?;
        }
    }
    Ok(())
}

/// libhdf5's "no free block" (`H5HL_FREE_NULL`).
const HEAP_FREE_NULL: u64 = 1;
/// Most entries of a local heap's free list followed (libhdf5 makes one per freed name).
const MAX_FREE_BLOCKS: usize = 1 << 16;

/// Checks the free list of the local heap at `addr` (8-byte lengths) before libhdf5 loads
/// it. libhdf5 (`H5HL__fl_deserialize`) follows the list to its end, allocating a node per
/// entry, so a list that loops back commits memory until the process is killed (found by
/// fuzzing pytables_read: a 1.2 KB file); it also reads each entry's two lengths without
/// checking that they lie inside the heap. Other damage is left to libhdf5, which reports it.
fn check_local_heap(read: &Reader<'_>, addr: u64) -> std::result::Result<(), (String, u64)> {
    let Some(prefix) = read(addr, 32) else {
        return Err((
            "the group's local heap lies past the end of the file".into(),
            addr,
        ));
    };
    if prefix.get(..5) != Some(b"HEAP\0".as_slice()) {
        return Ok(());
    }
    let (Some(size), Some(mut free), Some(data)) =
        (u64_at(&prefix, 8), u64_at(&prefix, 16), u64_at(&prefix, 24))
    else {
        return Ok(());
    };
    let mut seen = std::collections::HashSet::new();
    while free != HEAP_FREE_NULL {
        let at = data.saturating_add(free);
        if free.checked_add(16).is_none_or(|end| end > size) {
            return Err((
                format!("a free block at byte {free} of the group's {size}-byte local heap does not fit in it"),
                at,
            ));
        }
        if !seen.insert(free) || seen.len() > MAX_FREE_BLOCKS {
            return Err((
                format!("the free list of the group's local heap loops back to byte {free}"),
                at,
            ));
        }
        let Some(entry) = read(at, 16) else {
            return Err((
                "the group's local heap runs past the end of the file".into(),
                at,
            ));
        };
        match u64_at(&entry, 0) {
            Some(next) => free = next,
            None => return Ok(()),
        }
    }
    Ok(())
}

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
    /// An old-style group's v1 B-tree and local heap addresses.
    pub(crate) const SYMBOL_TABLE: u16 = 0x0011;
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

/// Why a header walk ended early.
pub(crate) enum WalkEnd {
    /// The header is damaged in a way libhdf5 does not always catch: what, and the address.
    Damaged(String, u64),
    /// Not a header this reads (or too many blocks), or the visitor stopped it.
    Other,
}

/// Walks every message of the object header at `addr` (version 1 or 2), reading blocks with
/// `read`; `visit` gets each message with the file address of its body and stops the walk by
/// returning `Some(true)`. `None` when the header is not one this reads, is damaged, or `visit`
/// says so.
pub(crate) fn walk(
    read: &Reader<'_>,
    addr: u64,
    visit: &mut dyn FnMut(&Message<'_>, u64) -> Option<bool>,
) -> Option<()> {
    walk_checked(read, addr, visit).ok()
}

/// [`walk`], telling damage (a block past the end of the file, a message running past its
/// block, a continuation message too short for its address and length) from the rest.
pub(crate) fn walk_checked(
    read: &Reader<'_>,
    addr: u64,
    visit: &mut dyn FnMut(&Message<'_>, u64) -> Option<bool>,
) -> Result<(), WalkEnd> {
    let damaged = |what: String, at: u64| WalkEnd::Damaged(what, at);
    if read(addr, 16).is_none() {
        return Err(damaged(
            "the object header lies past the end of the file".into(),
            addr,
        ));
    }
    let (format, start, size) = first_block(read, addr).ok_or(WalkEnd::Other)?;
    let mut blocks = vec![(start, size)];
    let mut seen = 0usize;
    let mut i = 0;
    while let Some(&(start, len)) = blocks.get(i) {
        i += 1;
        if i > MAX_BLOCKS {
            return Err(WalkEnd::Other);
        }
        let block = read(start, len).ok_or_else(|| {
            damaged(
                format!("an object header block of {len} bytes runs past the end of the file"),
                start,
            )
        })?;
        let mut pos = 0;
        while let Some(m) = format.message_at(&block, pos) {
            if matches!(format, Format::V1 { total } if seen >= total) {
                break;
            }
            let at = start.saturating_add(pos as u64);
            let m = m.ok_or_else(|| {
                damaged("an object header message runs past its block".into(), at)
            })?;
            seen += 1;
            pos = m.at + m.body.len();
            let body_addr = start.saturating_add(m.at as u64);
            if m.kind == msg::CONTINUATION {
                let next = format.continuation(m.body).ok_or_else(|| {
                    damaged(
                        format!(
                            "a continuation message of {} bytes (16 needed)",
                            m.body.len()
                        ),
                        body_addr,
                    )
                })?;
                blocks.push(next);
            } else if visit(&m, body_addr).ok_or(WalkEnd::Other)? {
                return Ok(());
            }
        }
    }
    Ok(())
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
