//! A whole small HDF5 file in memory and the object-header messages of the plain datasets in
//! it, decoded without libhdf5 ([`Image`]); `small.rs` offers it as
//! [`File::small_dataset_at`](crate::File::small_dataset_at), and `vlen_guard.rs` reads
//! attribute dataspaces with [`dataspace`].

use std::borrow::Cow;

use sciio_core::{Error, Limits, Result};

use crate::header::{attribute_parts, u16_at, u32_at, u64_at, walk, SIGNATURE};
use crate::types::{ByteOrder, CharSet, H5Type};
use sciio_h5native::{AttrValue, Attribute, RawData};

/// A whole HDF5 file in memory ([`File::open_in_memory`](crate::File::open_in_memory)), from
/// which [`File::small_dataset_at`](crate::File::small_dataset_at)
/// decodes small datasets without libhdf5.
///
/// Why hand-written: a MAT cell element or struct field costs libhdf5 ~120 000 instructions
/// (opening the dataset copies two property lists; every attribute access decodes all
/// attribute messages; closing frees it all again) for ~100 bytes of data. The plain cases —
/// version-1 object headers (what MATLAB, hdf5storage and sciio write), contiguous or compact
/// layout, no filters, attributes of fixed-size numbers and strings — are decoded here in a
/// few hundred instructions; anything else returns `None` and goes through libhdf5, which also
/// reports damaged files. No pure-Rust HDF5 crate reads this subset with bounds checks and no
/// allocation sized by the file.
#[derive(Debug)]
pub(crate) struct Image {
    bytes: Vec<u8>,
    /// Where the superblock is (after a user block): HDF5 addresses count from here.
    base: usize,
}

impl Image {
    /// Reads `path` whole; `None` when it is not an HDF5 file sciio can decode this way
    /// (superblock beyond 64 KiB, or addresses and lengths other than 8 bytes).
    pub(crate) fn read(path: &std::path::Path) -> Result<Option<Image>> {
        let bytes =
            std::fs::read(path).map_err(|e| Error::io("cannot read the file into memory", e))?;
        // The superblock is at 0 or after a user block of 512, 1024, 2048... bytes.
        let mut at = 0usize;
        let base = loop {
            match bytes.get(at..at + 8) {
                Some(sig) if sig == SIGNATURE => break at,
                Some(_) if at < 1 << 16 => at = if at == 0 { 512 } else { at * 2 },
                _ => return Ok(None),
            }
        };
        // Sizes of offsets and lengths: bytes 13-14 (superblock versions 0, 1), 9-10 (2, 3).
        let version = bytes.get(base + 8).copied();
        let sizes = match version {
            Some(0 | 1) => bytes.get(base + 13..base + 15),
            Some(2 | 3) => bytes.get(base + 9..base + 11),
            _ => None,
        };
        if sizes != Some(&[8, 8]) {
            return Ok(None);
        }
        Ok(Some(Image { bytes, base }))
    }

    /// `len` bytes at HDF5 address `addr`, if inside the file.
    pub(crate) fn at(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let start = usize::try_from(addr).ok()?.checked_add(self.base)?;
        self.bytes.get(start..start.checked_add(len)?)
    }

    /// Decodes the dataset whose version-1 object header is at `addr`: its attributes (name
    /// order) and data. `None` for anything but the plain cases (see [`Image`]).
    pub(crate) fn small_dataset(
        &self,
        addr: u64,
        limits: &Limits,
    ) -> Option<(Vec<Attribute>, RawData)> {
        if *self.at(addr, 1)?.first()? != 1 {
            return None; // version-2 headers ("OHDR") go through libhdf5
        }
        let mut parts = Parts::default();
        let read = |a: u64, n: usize| self.at(a, n).map(Cow::Borrowed);
        walk(&read, addr, &mut |m, _| {
            if m.flags & 0x02 != 0 {
                return None; // shared message: stored elsewhere
            }
            parts.message(m.kind, m.flags, m.body)?;
            Some(false)
        })?;
        parts.finish(self, limits)
    }
}

/// The messages of one object header that a small dataset is made of.
#[derive(Default)]
struct Parts {
    space: Option<Vec<usize>>,
    ty: Option<H5Type>,
    layout: Option<Layout>,
    attrs: Vec<Attribute>,
}

/// Where a dataset's data is.
enum Layout {
    Compact(Vec<u8>),
    Contiguous { addr: u64, size: u64 },
}

impl Parts {
    /// Takes in one message; `None` when it makes the object anything but a plain dataset.
    fn message(&mut self, kind: u16, flags: u8, body: &[u8]) -> Option<()> {
        match kind {
            0x0001 => self.space = Some(dataspace(body)?.0),
            0x0003 => self.ty = Some(datatype(body)?),
            0x0008 => self.layout = Some(layout(body)?),
            0x000C => self.attrs.push(attribute(body)?),
            // NIL, fill values, comments, modification times: not needed to read the data
            // (unless a message says it must be understood).
            0x0000 | 0x0004 | 0x0005 | 0x000D | 0x000E | 0x0012 if flags & 0x80 == 0 => {}
            // Filters, external files, group messages, dense attributes...: libhdf5's business.
            _ => return None,
        }
        Some(())
    }

    fn finish(mut self, image: &Image, limits: &Limits) -> Option<(Vec<Attribute>, RawData)> {
        let shape = self.space?;
        let ty = self.ty?;
        let bytes = shape.iter().try_fold(ty.size(), |a, &d| a.checked_mul(d))?;
        limits.check_alloc(bytes as u64, "dataset").ok()?;
        let data = match self.layout? {
            Layout::Compact(raw) if raw.len() == bytes => raw,
            Layout::Contiguous { addr, size } if size == bytes as u64 => {
                image.at(addr, bytes)?.to_vec()
            }
            // Unallocated (fill values) or sized unlike the shape: libhdf5 decides.
            _ => return None,
        };
        // libhdf5 lists attributes in name order.
        self.attrs.sort_by(|a, b| a.name.cmp(&b.name));
        Some((
            self.attrs,
            RawData {
                ty,
                shape,
                bytes: data,
            },
        ))
    }
}

/// A simple or scalar dataspace (versions 1 and 2) as (shape, encoded length); `None` for
/// null dataspaces and anything else.
pub(crate) fn dataspace(b: &[u8]) -> Option<(Vec<usize>, usize)> {
    let (version, rank, flags) = (*b.first()?, usize::from(*b.get(1)?), *b.get(2)?);
    let dims_at = match version {
        1 => 8,
        // Version 2 has a type byte: 0 scalar, 1 simple, 2 null.
        2 if *b.get(3)? <= 1 => 4,
        _ => return None,
    };
    if rank > 32 || flags & !0x01 != 0 {
        return None; // permutation indices were never implemented by libhdf5
    }
    let mut shape = Vec::with_capacity(rank);
    for d in 0..rank {
        shape.push(usize::try_from(u64_at(b, dims_at + 8 * d)?).ok()?);
    }
    let max = if flags & 1 != 0 { 8 * rank } else { 0 };
    let len = dims_at + 8 * rank + max;
    (len <= b.len()).then_some((shape, len))
}

/// Integers, IEEE floats, fixed-length strings and object references, as
/// [`H5Type::from_id`](crate::H5Type) models them; `None` for any other type.
fn datatype(b: &[u8]) -> Option<H5Type> {
    let class = b.first()? & 0x0f;
    let bits = [*b.get(1)?, *b.get(2)?, *b.get(3)?];
    let size = u32_at(b, 4)? as usize;
    let order = if bits[0] & 1 == 0 {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };
    match class {
        0 => {
            // Fixed point: every bit of the element holds the value.
            let (offset, precision) = (u16_at(b, 8)?, usize::from(u16_at(b, 10)?));
            let plain = matches!(size, 1 | 2 | 4 | 8) && offset == 0 && precision == 8 * size;
            plain.then_some(H5Type::Int {
                size,
                signed: bits[0] & 0x08 != 0,
                order,
            })
        }
        1 => {
            // IEEE binary32/binary64 only (no VAX order, no custom layouts).
            let ieee = match size {
                4 => [0, 0, 32, 0, 23, 8, 0, 23, 127, 0, 0, 0],
                8 => [0, 0, 64, 0, 52, 11, 0, 52, 0xff, 0x03, 0, 0],
                _ => return None,
            };
            let vax = bits[0] & 0x40 != 0;
            (!vax && b.get(8..20)? == ieee).then_some(H5Type::Float {
                size,
                precision: 8 * size,
                order,
            })
        }
        3 => {
            let charset = match bits[0] >> 4 {
                0 => CharSet::Ascii,
                1 => CharSet::Utf8,
                _ => return None,
            };
            (size > 0).then_some(H5Type::FixedString { size, charset })
        }
        7 if bits[0] & 0x0f == 0 && size == 8 => Some(H5Type::ObjectRef),
        _ => None,
    }
}

/// A version-3 layout message: compact or contiguous.
fn layout(b: &[u8]) -> Option<Layout> {
    if *b.first()? != 3 {
        return None;
    }
    match *b.get(1)? {
        0 => {
            let n = usize::from(u16_at(b, 2)?);
            Some(Layout::Compact(b.get(4..4 + n)?.to_vec()))
        }
        1 => Some(Layout::Contiguous {
            addr: u64_at(b, 2)?,
            size: u64_at(b, 10)?,
        }),
        _ => None,
    }
}

/// An attribute message (versions 1-3) of a fixed-size type and a simple or scalar space.
fn attribute(b: &[u8]) -> Option<Attribute> {
    let parts = attribute_parts(b)?;
    let name = std::str::from_utf8(parts.name).ok()?.to_string();
    let ty = datatype(parts.datatype)?;
    let (shape, _) = dataspace(parts.dataspace)?;
    let n = shape.iter().try_fold(ty.size(), |a, &d| a.checked_mul(d))?;
    let bytes = b
        .get(parts.data_at..parts.data_at.checked_add(n)?)?
        .to_vec();
    Some(Attribute {
        name,
        value: AttrValue::Raw(RawData { ty, shape, bytes }),
    })
}
