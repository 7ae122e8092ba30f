//! Checks the sequence lengths of a variable-length attribute before libhdf5 reads it.
//!
//! libhdf5's vlen conversion (`H5T__conv_vlen`) allocates and zeroes `length × base size`
//! bytes for each element, with the length taken from the file before the data is looked at:
//! one damaged length field makes it commit gigabytes (found by fuzzing mat_read, where every
//! struct's `MATLAB_fields` is such an attribute). libhdf5 has no call returning an
//! attribute's stored bytes, so the attribute message is found in the object header here
//! (version 1 and 2 headers, attributes stored in the header) and every element's length is
//! checked against the file's real size and the [`Limits`] first. Attributes this cannot find
//! (dense attribute storage, shared datatypes, files open for writing) are left to libhdf5.
//! Datasets get the same check from their stored descriptors (`Dataset::check_vlen_lengths`).

use std::ffi::c_uint;
use std::fs::File as StdFile;
use std::os::unix::ffi::OsStrExt;

use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5f::{H5Fget_create_plist, H5Fget_intent, H5Fget_name, H5F_ACC_RDONLY};
use hdf5_sys::h5i::{hid_t, H5Iget_file_id};
use hdf5_sys::h5o::{H5O_info2_t, H5Oget_info3, H5O_INFO_BASIC};
use hdf5_sys::h5p::{H5Pget_sizes, H5Pget_userblock};
use sciio_core::{Error, ErrorKind, Limits, Result};

use crate::handle::{check, last_error, locked, Hid};
use crate::header::{attribute_parts, msg, u32_at, walk, Disk};
use crate::image::dataspace;

/// Bytes of one variable-length element in the file: a 4-byte length and a global heap ID
/// (8-byte collection address, 4-byte index).
pub(crate) const DESCRIPTOR: usize = 16;

/// The file of `obj` when it is open read-only with 8-byte addresses and lengths.
pub(crate) fn disk_of(obj: hid_t) -> Result<Option<Disk>> {
    // libhdf5 is not thread-safe: every call is made under sciio's (reentrant) lock.
    locked(|| disk_of_locked(obj))
}

fn disk_of_locked(obj: hid_t) -> Result<Option<Disk>> {
    {
        // SAFETY: valid object id; the file and property list ids are owned by handles; the
        // name buffer is sized by the first call.
        unsafe {
            let fid = Hid::new(H5Iget_file_id(obj), || "cannot find the file".into())?;
            let mut intent: c_uint = 0;
            check(H5Fget_intent(fid.id(), &mut intent), || {
                "cannot read the file's access mode".into()
            })?;
            if intent != H5F_ACC_RDONLY {
                return Ok(None); // sciio's own writer: libhdf5's cache may be ahead of the disk
            }
            let fcpl = Hid::new(H5Fget_create_plist(fid.id()), || {
                "cannot read the file's creation properties".into()
            })?;
            let (mut base, mut addr_size, mut len_size): (hsize_t, usize, usize) = (0, 0, 0);
            check(H5Pget_userblock(fcpl.id(), &mut base), || {
                "cannot read the user block size".into()
            })?;
            check(
                H5Pget_sizes(fcpl.id(), &mut addr_size, &mut len_size),
                || "cannot read the file's address size".into(),
            )?;
            if (addr_size, len_size) != (8, 8) {
                return Ok(None);
            }
            let n = usize::try_from(H5Fget_name(obj, std::ptr::null_mut(), 0))
                .map_err(|_| last_error("cannot read the file name".into()))?;
            let mut name = vec![0u8; n + 1];
            if H5Fget_name(obj, name.as_mut_ptr().cast(), name.len()) < 0 {
                return Err(last_error("cannot read the file name".into()));
            }
            name.truncate(n);
            let path = std::ffi::OsStr::from_bytes(&name);
            let file = StdFile::open(path)
                .map_err(|e| Error::io("cannot reopen the file to check an attribute", e))?;
            let len = file
                .metadata()
                .map_err(|e| Error::io("cannot read the file size", e))?
                .len();
            Ok(Some(Disk {
                file,
                base,
                len,
                length_size: 8,
            }))
        }
    }
}

/// Refuses the vlen attribute `name` of `obj` when an element claims more data than the file
/// holds, or all of them more than `limits` allow.
pub(crate) fn check_attribute(obj: hid_t, name: &str, limits: &Limits) -> Result<()> {
    let Some(disk) = disk_of(obj)? else {
        return Ok(());
    };
    // SAFETY: H5O_info2_t is a plain C struct of integers: all-zero is a valid value.
    let mut info: H5O_info2_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid object id and out-pointer; under the lock like every libhdf5 call.
    locked(|| {
        check(
            unsafe { H5Oget_info3(obj, &mut info, H5O_INFO_BASIC) },
            || "cannot read the object header".into(),
        )
    })?;
    let header = crate::handle::token_address(&info.token);
    let mut found: Option<Result<()>> = None;
    // A header this cannot walk is left to libhdf5, which reports damage itself.
    let _ = walk(&|a, n| disk.read(a, n), header, &mut |m, body_addr| {
        if m.kind != msg::ATTRIBUTE {
            return Some(false);
        }
        let parts = attribute_parts(m.body)?;
        if parts.name != name.as_bytes() {
            return Some(false);
        }
        let body_offset = body_addr.saturating_add(disk.base);
        found = Some(check_lengths(
            &disk,
            m.body,
            &parts,
            body_offset,
            name,
            limits,
        ));
        Some(true)
    });
    found.unwrap_or(Ok(()))
}

/// Checks each element's length × base size against the file size, their sum against
/// `limits`, and the global heap collections holding the data ([`check_heaps`]); errors give
/// the file offset of the element (`body_offset`: the message body's). Attributes of other types (compounds holding vlen members, vlen of vlen) pass.
fn check_lengths(
    disk: &Disk,
    body: &[u8],
    parts: &crate::header::AttributeParts<'_>,
    body_offset: u64,
    name: &str,
    limits: &Limits,
) -> Result<()> {
    let file_len = disk.len;
    let Some(base_size) = vlen_base_size(parts.datatype) else {
        return Ok(());
    };
    let Some((shape, _)) = dataspace(parts.dataspace) else {
        return Ok(());
    };
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .unwrap_or(usize::MAX);
    let corrupt = |what: String, offset: u64| {
        Error::new(ErrorKind::Corrupt, format!("attribute {name:?}: {what}")).with_offset(offset)
    };
    let data = n
        .checked_mul(DESCRIPTOR)
        .and_then(|len| body.get(parts.data_at..parts.data_at.checked_add(len)?))
        .ok_or_else(|| {
            corrupt(
                format!("{n} variable-length elements do not fit in the attribute message"),
                body_offset,
            )
        })?;
    match scan_lengths(data, base_size, file_len) {
        Ok(total) => {
            limits.check_alloc(total, "variable-length attribute data")?;
            check_heaps(disk, data, limits, &format!("attribute {name:?}"))
        }
        Err(bad) => Err(corrupt(
            bad.describe(file_len),
            body_offset + (parts.data_at + bad.index * DESCRIPTOR) as u64,
        )),
    }
}

/// An element whose stored length cannot be right.
pub(crate) struct BadLength {
    pub(crate) index: usize,
    length: u64,
    base_size: u64,
}

impl BadLength {
    pub(crate) fn describe(&self, file_len: u64) -> String {
        format!(
            "element {} claims {} values of {} bytes, more than the file's {file_len} bytes",
            self.index, self.length, self.base_size
        )
    }
}

/// Scans stored vlen descriptors: the total bytes they claim, or the first element claiming
/// more than the whole file (its data must be somewhere in the file).
pub(crate) fn scan_lengths(
    descriptors: &[u8],
    base_size: u64,
    file_len: u64,
) -> std::result::Result<u64, BadLength> {
    let mut total: u64 = 0;
    for (index, descriptor) in descriptors.chunks_exact(DESCRIPTOR).enumerate() {
        let length = u64::from(u32_at(descriptor, 0).unwrap_or(0));
        let bytes = length.saturating_mul(base_size);
        if bytes > file_len {
            return Err(BadLength {
                index,
                length,
                base_size,
            });
        }
        total = total.saturating_add(bytes);
    }
    Ok(total)
}

/// The base element size of a variable-length sequence or string datatype message (class 9);
/// `None` for other classes and for sequences of variable-length data.
fn vlen_base_size(datatype: &[u8]) -> Option<u64> {
    if datatype.first()? & 0x0f != 9 {
        return None;
    }
    // The base type's own message follows the 8-byte class header.
    let base = datatype.get(8..)?;
    if base.first()? & 0x0f == 9 {
        return None;
    }
    Some(u64::from(u32_at(base, 4)?).max(1))
}

/// Checks every global heap collection that `descriptors` point into as libhdf5 will parse it
/// (`H5HG__cache_heap_deserialize`), before it does: libhdf5 never leaves an object 0 (free
/// space) whose size is 0 — it loops forever on such a damaged collection (found by fuzzing
/// mat_read). Each distinct collection is read once; collections are bounded by the file.
pub(crate) fn check_heaps(
    disk: &Disk,
    descriptors: &[u8],
    limits: &Limits,
    what: &str,
) -> Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    for descriptor in descriptors.chunks_exact(DESCRIPTOR) {
        let length = u32_at(descriptor, 0).unwrap_or(0);
        let addr = crate::header::u64_at(descriptor, 4).unwrap_or(0);
        if length > 0 && addr != 0 && seen.insert(addr) {
            check_collection(disk, addr, limits, what)?;
        }
    }
    Ok(())
}

/// A global heap collection: "GCOL", version, 3 reserved bytes, its size (8 bytes), then
/// objects — index (2), reference count (2), reserved (4), size (8), data padded to 8 bytes —
/// with object 0 the free space (its size includes its header, unpadded).
fn check_collection(disk: &Disk, addr: u64, limits: &Limits, what: &str) -> Result<()> {
    let at = addr.saturating_add(disk.base);
    let corrupt = |why: String, offset: u64| {
        Error::new(
            ErrorKind::Corrupt,
            format!("{what}: global heap collection at byte {at}: {why}"),
        )
        .with_offset(offset)
    };
    let head = disk
        .read(addr, 16)
        .ok_or_else(|| corrupt("it lies past the end of the file".into(), at))?;
    if !head.starts_with(b"GCOL") {
        return Err(corrupt("no GCOL signature".into(), at));
    }
    let size = crate::header::u64_at(&head, 8).unwrap_or(0);
    let len = usize::try_from(size)
        .ok()
        .filter(|&n| n >= 16)
        .ok_or_else(|| corrupt(format!("its size {size} is impossible"), at))?;
    limits.check_alloc(size, "global heap collection")?;
    let bytes = disk
        .read(addr, len)
        .ok_or_else(|| corrupt(format!("its {size} bytes run past the end of the file"), at))?;
    let mut p = 16usize;
    while p < len {
        if p + 16 > len {
            break; // the rest is free space
        }
        let index = crate::header::u16_at(&bytes, p).unwrap_or(0);
        let object = crate::header::u64_at(&bytes, p + 8).unwrap_or(0);
        let need = if index > 0 {
            object
                .checked_next_multiple_of(8)
                .and_then(|n| n.checked_add(16))
        } else {
            Some(object)
        };
        let offset = at + p as u64;
        match need.and_then(|n| usize::try_from(n).ok()) {
            Some(0) => {
                return Err(corrupt(
                    "its free-space object has size 0 (libhdf5 would loop forever)".into(),
                    offset,
                ))
            }
            Some(n) if n <= len - p => p += n,
            _ => {
                return Err(corrupt(
                    format!("object {index} of {object} bytes runs past the collection"),
                    offset,
                ))
            }
        }
    }
    Ok(())
}
