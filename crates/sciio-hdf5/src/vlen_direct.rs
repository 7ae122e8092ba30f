//! Variable-length sequences of bytes read straight from their global heap objects.
//!
//! libhdf5 reads a vlen element by loading its whole global heap collection into its cache
//! (allocated, zeroed, then read), copying the object into a conversion buffer and that into
//! the memory sequence it allocates, which sciio copied once more: a 30 MB pickled object
//! array (PyTables' `ObjectAtom`, pandas' string blocks) went through five buffers of its size.
//! Here each element is read by one positioned read into a buffer of exactly its size, from the
//! stored descriptors (4-byte length, 8-byte collection address, 4-byte object index) and the
//! collection's object headers; every size is checked against the collection and the file.
//! Only sequences of a 1-byte base type (no conversion to make) are read this way.

use std::collections::HashMap;
use std::os::unix::fs::FileExt;

use sciio_core::{Error, ErrorKind, Limits, Result};

use crate::header::{u16_at, u32_at, u64_at, Disk};
use crate::vlen_guard::DESCRIPTOR;

/// Collections read whole to list their objects up to this size; larger ones (a few large
/// objects) have their object headers read one by one.
const WHOLE_COLLECTION: u64 = 1 << 20;

/// Where an object's data lies: its file address and size.
#[derive(Clone, Copy)]
struct HeapObject {
    data: u64,
    size: u64,
}

/// The data of every element `descriptors` describe (base size 1: length = bytes).
pub(crate) fn read_elements(
    disk: &Disk,
    descriptors: &[u8],
    limits: &Limits,
) -> Result<Vec<Vec<u8>>> {
    let mut collections = HashMap::new();
    let mut items = Vec::with_capacity(descriptors.len() / DESCRIPTOR);
    let mut total: u64 = 0;
    for (i, d) in descriptors.chunks_exact(DESCRIPTOR).enumerate() {
        let Some((start, len)) = locate(disk, &mut collections, i, d, limits)? else {
            items.push(Vec::new());
            continue;
        };
        total = total.saturating_add(len);
        limits.check_alloc(total, "variable-length data")?;
        let len = usize::try_from(len).map_err(|_| too_large(i))?;
        // Zeroed pages of a fresh mapping for a large buffer: the read is the one write.
        let mut data = vec![0u8; len];
        disk.file
            .read_exact_at(&mut data, start)
            .map_err(|e| Error::io(format!("cannot read variable-length element {i}"), e))?;
        items.push(data);
    }
    Ok(items)
}

fn too_large(i: usize) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!("variable-length element {i}: too large"),
    )
}

/// The file offset and length of element `i`'s data (descriptor `d`), checked against its
/// heap object; `None` for an empty element.
fn locate(
    disk: &Disk,
    collections: &mut HashMap<u64, HashMap<u16, HeapObject>>,
    i: usize,
    d: &[u8],
    limits: &Limits,
) -> Result<Option<(u64, u64)>> {
    let length = u64::from(u32_at(d, 0).unwrap_or(0));
    let addr = u64_at(d, 4).unwrap_or(0);
    let index = u32_at(d, 12).unwrap_or(0);
    if length == 0 {
        return Ok(None);
    }
    let corrupt = |why: String| {
        Error::new(
            ErrorKind::Corrupt,
            format!("variable-length element {i}: {why}"),
        )
    };
    let table = match collections.entry(addr) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => e.insert(objects(disk, addr, limits)?),
    };
    let object = u16::try_from(index)
        .ok()
        .and_then(|k| table.get(&k).copied())
        .ok_or_else(|| {
            corrupt(format!(
                "object {index} is not in the global heap collection at byte {addr}"
            ))
        })?;
    if length > object.size {
        return Err(corrupt(format!(
            "it claims {length} bytes, its heap object holds {}",
            object.size
        )));
    }
    Ok(Some((object.data, length)))
}

/// One variable-length element read in pieces by positioned reads (a large pickle parsed as
/// a stream, [`crate::Dataset::vlen_element_reader`]): its place and length were checked
/// against its global heap object and the file.
pub struct VlenElementReader {
    file: std::fs::File,
    start: u64,
    len: u64,
    pos: u64,
}

impl VlenElementReader {
    /// The element's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the element is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::fmt::Debug for VlenElementReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VlenElementReader({} bytes at {})", self.len, self.start)
    }
}

impl std::io::Read for VlenElementReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.len.saturating_sub(self.pos);
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        if n == 0 {
            return Ok(0);
        }
        self.file
            .read_exact_at(&mut buf[..n], self.start + self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for VlenElementReader {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let pos = match to {
            std::io::SeekFrom::Start(p) => Some(p),
            std::io::SeekFrom::End(d) => self.len.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        let pos = pos.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        self.pos = pos;
        Ok(pos)
    }
}

/// A reader of the one element descriptor `d` describes (index `i` for errors).
pub(crate) fn element_reader(
    disk: Disk,
    i: usize,
    d: &[u8],
    limits: &Limits,
) -> Result<VlenElementReader> {
    let mut collections = HashMap::new();
    let (start, len) = locate(&disk, &mut collections, i, d, limits)?.unwrap_or((0, 0));
    Ok(VlenElementReader {
        file: disk.file,
        start,
        len,
        pos: 0,
    })
}

/// The objects of the global heap collection at `addr` ("GCOL", version, 3 reserved bytes,
/// size; then objects: index (2), reference count (2), reserved (4), size (8), data padded
/// to 8 bytes; object 0 is the free space), by index.
fn objects(disk: &Disk, addr: u64, limits: &Limits) -> Result<HashMap<u16, HeapObject>> {
    let at = addr.saturating_add(disk.base);
    let corrupt = |why: String| {
        Error::new(
            ErrorKind::Corrupt,
            format!("global heap collection at byte {at}: {why}"),
        )
        .with_offset(at)
    };
    let head = disk
        .read(addr, 16)
        .ok_or_else(|| corrupt("it lies past the end of the file".into()))?;
    if !head.starts_with(b"GCOL") {
        return Err(corrupt("no GCOL signature".into()));
    }
    let size = u64_at(&head, 8).unwrap_or(0);
    if size < 16 || at.checked_add(size).is_none_or(|end| end > disk.len) {
        return Err(corrupt(format!("its size {size} runs past the file")));
    }
    let whole = if size <= WHOLE_COLLECTION {
        limits.check_alloc(size, "global heap collection")?;
        let len = usize::try_from(size).map_err(|_| corrupt("too large".into()))?;
        Some(
            disk.read(addr, len)
                .ok_or_else(|| corrupt("cannot be read".into()))?,
        )
    } else {
        None
    };
    let header = |p: u64| -> Option<Vec<u8>> {
        match &whole {
            Some(bytes) => {
                let p = usize::try_from(p).ok()?;
                bytes.get(p..p.checked_add(16)?).map(<[u8]>::to_vec)
            }
            None => disk.read(addr.checked_add(p)?, 16).map(|b| b.to_vec()),
        }
    };
    let mut found = HashMap::new();
    let mut p: u64 = 16;
    while p + 16 <= size {
        let h = header(p).ok_or_else(|| corrupt(format!("object header at {p} unreadable")))?;
        let index = u16_at(&h, 0).unwrap_or(0);
        let object = u64_at(&h, 8).unwrap_or(0);
        // Object 0 is free space, its size counting its header, unpadded (as libhdf5 parses
        // it, `H5HG__cache_heap_deserialize`).
        let need = match index {
            0 if object == 0 => return Err(corrupt("its free-space object has size 0".into())),
            0 => Some(object),
            _ => object
                .checked_next_multiple_of(8)
                .and_then(|n| n.checked_add(16)),
        };
        let next = need
            .and_then(|n| n.checked_add(p))
            .filter(|&n| n <= size)
            .ok_or_else(|| {
                corrupt(format!(
                    "object {index} of {object} bytes runs past the collection"
                ))
            })?;
        if index == 0 {
            p = next;
            continue;
        }
        found.insert(
            index,
            HeapObject {
                data: at + p + 16,
                size: object,
            },
        );
        p = next;
    }
    Ok(found)
}
