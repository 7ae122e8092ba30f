//! Encoders of the HDF5 structures the native writer emits, in the versions libhdf5 writes
//! with the earliest format bounds (the only ones MATLAB's `load` accepts): version-1 object
//! headers, dataspace v1, datatype v1, fill value v2, layout v3, filter pipeline v1, attribute
//! v1, modification time, symbol table; local heaps, global heap collections, v1 B-tree nodes
//! and symbol table nodes. Offsets and lengths are 8 bytes, as libhdf5's defaults.

use sciio_core::{Error, Result};

use sciio_codecs::{id, FilterStage};

use crate::types::{ByteOrder, CharSet, H5Type};

/// libhdf5's "undefined address".
pub(super) const UNDEF: u64 = u64::MAX;

/// Message type codes (HDF5 spec, "Header Message Types").
pub(super) mod msg {
    pub const DATASPACE: u16 = 0x1;
    pub const DATATYPE: u16 = 0x3;
    pub const FILL_VALUE: u16 = 0x5;
    pub const LAYOUT: u16 = 0x8;
    pub const FILTER_PIPELINE: u16 = 0xB;
    pub const ATTRIBUTE: u16 = 0xC;
    pub const SYMBOL_TABLE: u16 = 0x11;
    pub const MTIME: u16 = 0x12;
}

/// Message flag: the message is constant (datatype, fill value, filter pipeline).
pub(super) const CONSTANT: u8 = 1;

/// Little-endian byte sink.
#[derive(Default)]
pub(super) struct Bytes(pub Vec<u8>);

impl Bytes {
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn raw(&mut self, v: &[u8]) -> &mut Self {
        self.0.extend_from_slice(v);
        self
    }
    /// Zero bytes up to a multiple of 8.
    pub fn pad8(&mut self) -> &mut Self {
        let n = self.0.len().next_multiple_of(8);
        self.0.resize(n, 0);
        self
    }
}

fn unsupported(what: String) -> Error {
    Error::unsupported(format!("sciio's native HDF5 writer: {what}"))
}

fn order_bit(order: ByteOrder) -> Result<u8> {
    match order {
        ByteOrder::Little => Ok(0),
        ByteOrder::Big => Ok(1),
        other => Err(unsupported(format!("byte order {other:?}"))),
    }
}

fn u32_of(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| unsupported(format!("{what} {v} too large")))
}

/// A datatype message body (version 1 encodings, as libhdf5 writes them).
pub(super) fn datatype(ty: &H5Type) -> Result<Vec<u8>> {
    let mut b = Bytes::default();
    encode_type(ty, &mut b)?;
    Ok(b.0)
}

fn encode_type(ty: &H5Type, b: &mut Bytes) -> Result<()> {
    match ty {
        H5Type::Int {
            size,
            signed,
            order,
        } => {
            let bits = order_bit(*order)? | if *signed { 0x08 } else { 0 };
            b.u8(0x10)
                .u8(bits)
                .u8(0)
                .u8(0)
                .u32(u32_of(*size, "integer size")?);
            b.u16(0).u16(u16::try_from(8 * size).unwrap_or(u16::MAX));
        }
        H5Type::Float {
            size,
            precision,
            order,
        } => {
            // (sign bit, exponent location, exponent size, mantissa size, bias) of IEEE types.
            let (sign, eloc, esize, msize, bias) = match (size, precision) {
                (4, 32) => (31u8, 23u8, 8u8, 23u8, 127u32),
                (8, 64) => (63, 52, 11, 52, 1023),
                _ => return Err(unsupported(format!("{size}-byte float"))),
            };
            // Mantissa normalisation 2 (implied leading 1) in bits 4-5.
            b.u8(0x11).u8(order_bit(*order)? | 0x20).u8(sign).u8(0);
            b.u32(*size as u32).u16(0).u16(*precision as u16);
            b.u8(eloc).u8(esize).u8(0).u8(msize).u32(bias);
        }
        H5Type::FixedString { size, charset } => {
            // Null-terminated padding, as libhdf5's C strings.
            b.u8(0x13).u8(charset_bits(*charset) << 4).u8(0).u8(0);
            b.u32(u32_of(*size, "string size")?);
        }
        H5Type::Compound { size, fields } => {
            let n = u16::try_from(fields.len())
                .map_err(|_| unsupported("more than 65535 compound members".into()))?;
            b.u8(0x16).u16(n).u8(0).u32(u32_of(*size, "compound size")?);
            for f in fields {
                // The name is padded to a multiple of 8 counted from its own start.
                let padded = (f.name.len() + 1).next_multiple_of(8);
                b.raw(f.name.as_bytes());
                b.raw(&vec![0u8; padded - f.name.len()]);
                b.u32(u32_of(f.offset, "member offset")?);
                // Dimensionality 0 (scalar member), reserved, permutation, reserved, sizes.
                b.u8(0).raw(&[0; 3]).u32(0).u32(0).raw(&[0; 16]);
                encode_type(&f.ty, b)?;
            }
        }
        H5Type::ObjectRef => {
            b.u8(0x17).u8(0).u8(0).u8(0).u32(8);
        }
        H5Type::VarLen { base } => {
            b.u8(0x19).u8(0).u8(0).u8(0).u32(16);
            encode_type(base, b)?;
        }
        H5Type::VarString { charset } => {
            // Type 1 (string), null-terminated; the base is an unsigned byte, as libhdf5 stores.
            b.u8(0x19).u8(0x01).u8(charset_bits(*charset)).u8(0).u32(16);
            b.u8(0x10).u8(0).u8(0).u8(0).u32(1).u16(0).u16(8);
        }
        other => return Err(unsupported(format!("datatype {other:?}"))),
    }
    Ok(())
}

fn charset_bits(c: CharSet) -> u8 {
    match c {
        CharSet::Ascii => 0,
        CharSet::Utf8 => 1,
    }
}

/// Dataspace message v1: scalar for an empty shape, else simple with maximum = current dims.
pub(super) fn dataspace(dims: &[u64]) -> Vec<u8> {
    let mut b = Bytes::default();
    let rank = dims.len() as u8;
    b.u8(1).u8(rank).u8(u8::from(rank > 0)).u8(0).u32(0);
    for &d in dims.iter().chain(dims) {
        b.u64(d);
    }
    b.0
}

/// Fill value message v2 with the library default (zeros), allocation `alloc_time`
/// (2 late: contiguous, 3 incremental: chunked), written only if set.
pub(super) fn fill_value(alloc_time: u8) -> Vec<u8> {
    let mut b = Bytes::default();
    b.u8(2).u8(alloc_time).u8(2).u8(1).u32(0);
    b.0
}

/// Layout message v3, contiguous.
pub(super) fn layout_contiguous(addr: u64, size: u64) -> Vec<u8> {
    let mut b = Bytes::default();
    b.u8(3).u8(1).u64(addr).u64(size);
    b.0
}

/// Layout message v3, chunked: `chunk` dims plus the element size as the last dimension.
pub(super) fn layout_chunked(btree: u64, chunk: &[u64], elem: u32) -> Result<Vec<u8>> {
    let mut b = Bytes::default();
    b.u8(3).u8(2).u8(chunk.len() as u8 + 1).u64(btree);
    for &c in chunk {
        b.u32(u32::try_from(c).map_err(|_| unsupported(format!("chunk dimension {c}")))?);
    }
    b.u32(elem);
    Ok(b.0)
}

/// Filter pipeline message v1 (with the filter names libhdf5 records).
pub(super) fn filter_pipeline(filters: &[FilterStage]) -> Result<Vec<u8>> {
    let mut b = Bytes::default();
    b.u8(1).u8(filters.len() as u8).raw(&[0; 6]);
    for f in filters {
        let name: &[u8] = match f.id {
            id::DEFLATE => b"deflate",
            id::SHUFFLE => b"shuffle",
            id::FLETCHER32 => b"fletcher32",
            other => return Err(unsupported(format!("filter {other}"))),
        };
        let name_len = (name.len() + 1).next_multiple_of(8);
        b.u16(f.id as u16)
            .u16(name_len as u16)
            .u16(u16::from(f.optional));
        b.u16(f.cd_values.len() as u16).raw(name).u8(0).pad8();
        for &v in &f.cd_values {
            b.u32(v);
        }
        if f.cd_values.len() % 2 == 1 {
            b.u32(0);
        }
    }
    Ok(b.0)
}

/// Modification time message (version 1, seconds since the epoch).
pub(super) fn mtime(seconds: u32) -> Vec<u8> {
    let mut b = Bytes::default();
    b.u8(1).raw(&[0; 3]).u32(seconds);
    b.0
}

/// Symbol table message: the group's B-tree and local heap.
pub(super) fn symbol_table(btree: u64, heap: u64) -> Vec<u8> {
    let mut b = Bytes::default();
    b.u64(btree).u64(heap);
    b.0
}

/// Attribute message v1.
pub(super) fn attribute(name: &str, ty: &[u8], space: &[u8], data: &[u8]) -> Vec<u8> {
    let mut b = Bytes::default();
    let name_len = name.len() + 1;
    b.u8(1)
        .u8(0)
        .u16(name_len as u16)
        .u16(ty.len() as u16)
        .u16(space.len() as u16);
    b.raw(name.as_bytes()).u8(0).pad8();
    b.raw(ty).pad8();
    b.raw(space).pad8();
    b.raw(data);
    b.0
}

/// One header message: its type, flags and body (padded to 8 bytes when written).
pub(super) struct Message {
    pub kind: u16,
    pub flags: u8,
    pub body: Vec<u8>,
}

/// The largest message body a v1 header message can hold.
const MAX_MESSAGE: usize = 0xFFF8;

/// Bytes of a version-1 object header holding `messages` in one chunk.
pub(super) fn object_header_size(messages: &[Message]) -> u64 {
    16 + messages
        .iter()
        .map(|m| 8 + m.body.len().next_multiple_of(8) as u64)
        .sum::<u64>()
}

/// A version-1 object header holding `messages` in one chunk.
pub(super) fn object_header(messages: &[Message], out: &mut Vec<u8>) -> Result<()> {
    let size = object_header_size(messages) - 16;
    let size = u32::try_from(size).map_err(|_| unsupported("object header over 4 GiB".into()))?;
    let mut b = Bytes(std::mem::take(out));
    b.u8(1)
        .u8(0)
        .u16(messages.len() as u16)
        .u32(1)
        .u32(size)
        .u32(0);
    for m in messages {
        if m.body.len() > MAX_MESSAGE {
            return Err(unsupported(format!(
                "a header message of {} bytes (attribute or compact data too large)",
                m.body.len()
            )));
        }
        let len = m.body.len().next_multiple_of(8);
        b.u16(m.kind).u16(len as u16).u8(m.flags).raw(&[0; 3]);
        b.raw(&m.body).pad8();
    }
    *out = b.0;
    Ok(())
}

/// Bytes a link name takes in a local heap (NUL-terminated, padded to 8).
pub(super) fn heap_name_size(name: &str) -> u64 {
    (name.len() + 1).next_multiple_of(8) as u64
}

/// Bytes of a symbol table node holding up to `2 * leaf_k` entries.
pub(super) const fn snod_size(leaf_k: usize) -> u64 {
    8 + 40 * 2 * leaf_k as u64
}

/// One symbol table entry (link name offset in the local heap, object header, and for groups
/// the cached B-tree and heap addresses, as libhdf5 caches them).
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub name_offset: u64,
    pub header: u64,
    pub group: Option<(u64, u64)>,
}

fn entry(e: &Entry, b: &mut Bytes) {
    b.u64(e.name_offset).u64(e.header);
    match e.group {
        Some((btree, heap)) => {
            b.u32(1).u32(0).u64(btree).u64(heap);
        }
        None => {
            b.u32(0).u32(0).raw(&[0; 16]);
        }
    }
}

/// The superblock's root entry.
pub(super) fn root_entry(e: &Entry) -> Vec<u8> {
    let mut b = Bytes::default();
    entry(e, &mut b);
    b.0
}

/// A symbol table node ("SNOD"), padded to its full size.
pub(super) fn snod(entries: &[Entry], leaf_k: usize, out: &mut Vec<u8>) {
    let mut b = Bytes(std::mem::take(out));
    let start = b.0.len();
    b.raw(b"SNOD").u8(1).u8(0).u16(entries.len() as u16);
    for e in entries {
        entry(e, &mut b);
    }
    b.0.resize(start + snod_size(leaf_k) as usize, 0);
    *out = b.0;
}

/// A version-1 B-tree node: `keys.len() == children.len() + 1`, each key already encoded,
/// padded to the node size for `2 * k` children with keys of `key_size` bytes.
pub(super) struct Node<'a> {
    pub node_type: u8,
    pub level: u8,
    pub left: u64,
    pub right: u64,
    pub keys: &'a [Vec<u8>],
    pub children: &'a [u64],
}

pub(super) const fn node_size(k: usize, key_size: usize) -> u64 {
    (24 + (2 * k + 1) * key_size + 2 * k * 8) as u64
}

pub(super) fn btree_node(n: &Node<'_>, k: usize, key_size: usize, out: &mut Vec<u8>) {
    let mut b = Bytes(std::mem::take(out));
    let start = b.0.len();
    b.raw(b"TREE")
        .u8(n.node_type)
        .u8(n.level)
        .u16(n.children.len() as u16);
    b.u64(n.left).u64(n.right);
    for (i, key) in n.keys.iter().enumerate() {
        b.raw(key);
        if let Some(&c) = n.children.get(i) {
            b.u64(c);
        }
    }
    b.0.resize(start + node_size(k, key_size) as usize, 0);
    *out = b.0;
}

/// A local heap header ("HEAP") for a data segment of `size` bytes at `data`, with no free
/// block (libhdf5's `H5HL_FREE_NULL` is 1).
pub(super) fn local_heap(size: u64, data: u64) -> Vec<u8> {
    let mut b = Bytes::default();
    b.raw(b"HEAP").u8(0).raw(&[0; 3]).u64(size).u64(1).u64(data);
    b.0
}

/// Smallest global heap collection libhdf5 accepts.
pub(super) const GCOL_MIN: u64 = 4096;

/// A global heap collection ("GCOL") holding `objects` (indices 1..), at least 4 KiB, the
/// rest described by the free-space object 0 as libhdf5 writes it.
pub(super) fn global_heap(objects: &[&[u8]], out: &mut Vec<u8>) {
    let size = gcol_size(objects.iter().map(|o| o.len()));
    let mut b = Bytes(std::mem::take(out));
    let start = b.0.len();
    b.raw(b"GCOL").u8(1).raw(&[0; 3]).u64(size);
    for (i, o) in objects.iter().enumerate() {
        // Reference count 0, as libhdf5 leaves it for vlen data.
        b.u16(i as u16 + 1)
            .u16(0)
            .u32(0)
            .u64(o.len() as u64)
            .raw(o)
            .pad8();
    }
    let used = (b.0.len() - start) as u64;
    if size - used >= 16 {
        b.u16(0).u16(0).u32(0).u64(size - used);
    }
    b.0.resize(start + size as usize, 0);
    *out = b.0;
}

/// The size of a collection holding objects of these lengths.
pub(super) fn gcol_size(lens: impl Iterator<Item = usize>) -> u64 {
    let used: u64 = 16 + lens.map(|l| 16 + l.next_multiple_of(8) as u64).sum::<u64>();
    // Room for the free-space object's header when there is free space at all.
    if used >= GCOL_MIN {
        used
    } else {
        GCOL_MIN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float64_type_is_libhdf5s_encoding() {
        let t = H5Type::Float {
            size: 8,
            precision: 64,
            order: ByteOrder::Little,
        };
        // As libhdf5 1.14/2.0 writes H5T_IEEE_F64LE (dumped from an h5py file).
        let want = "11203f000800000000004000340b0034ff030000";
        let got: String = datatype(&t)
            .unwrap()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn complex_compound_is_libhdf5s_encoding() {
        let f = H5Type::Float {
            size: 8,
            precision: 64,
            order: ByteOrder::Little,
        };
        let member = |name: &str, offset| crate::types::Field {
            name: name.into(),
            offset,
            ty: f.clone(),
        };
        let t = H5Type::Compound {
            size: 16,
            fields: vec![member("real", 0), member("imag", 8)],
        };
        let got = datatype(&t).unwrap();
        // 8-byte header, then per member 8 (name) + 32 (offset, dims) + 20 (float) bytes.
        assert_eq!(got.len(), 128);
        assert_eq!(&got[68..76], b"imag\0\0\0\0");
    }

    #[test]
    fn vlen_string_type_is_libhdf5s_encoding() {
        let t = H5Type::VarString {
            charset: CharSet::Utf8,
        };
        let want = "190101001000000010000000010000000000080";
        let got: String = datatype(&t)
            .unwrap()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(&got[..want.len()], want);
        assert_eq!(got.len(), 40);
    }

    #[test]
    fn global_heap_free_object_covers_the_rest() {
        let mut out = Vec::new();
        global_heap(&[b"cde", b"ab"], &mut out);
        assert_eq!(out.len(), 4096);
        // Free object after two 24-byte objects: 4096 - 16 - 48 = 4032 bytes.
        assert_eq!(&out[64..66], &[0, 0]);
        assert_eq!(u64::from_le_bytes(out[72..80].try_into().unwrap()), 4032);
    }
}
