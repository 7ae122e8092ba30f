//! The NPY header: magic, version, length and the Python-literal dict, read and written exactly
//! like `numpy.lib.format` does (`_read_array_header`, `_write_array_header`, `_wrap_header`).

use std::io::Read;

use sciio_core::{DType, Error, ErrorKind, Limits, LiteralLimits, Order, PyLiteral, Result};

/// The magic string every NPY file starts with.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Headers are padded so the data starts at a multiple of this (numpy's `ARRAY_ALIGN`).
pub const ARRAY_ALIGN: usize = 64;

/// Spare spaces numpy leaves after the dict so `shape[0]` can grow in place
/// (`GROWTH_AXIS_MAX_DIGITS`).
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

/// An NPY format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// 1.0: 16-bit header length, Latin-1 header.
    V1,
    /// 2.0: 32-bit header length, Latin-1 header.
    V2,
    /// 3.0: 32-bit header length, UTF-8 header.
    V3,
}

impl Version {
    /// `(major, minor)`.
    pub fn number(self) -> (u8, u8) {
        match self {
            Version::V1 => (1, 0),
            Version::V2 => (2, 0),
            Version::V3 => (3, 0),
        }
    }

    /// Bytes of magic, version and length before the header text.
    pub fn prefix_len(self) -> usize {
        match self {
            Version::V1 => 10,
            Version::V2 | Version::V3 => 12,
        }
    }

    fn from_number(major: u8, minor: u8) -> Option<Version> {
        match (major, minor) {
            (1, 0) => Some(Version::V1),
            (2, 0) => Some(Version::V2),
            (3, 0) => Some(Version::V3),
            _ => None,
        }
    }
}

/// A parsed NPY header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The element type (`descr`).
    pub dtype: DType,
    /// The array shape (empty for 0-d).
    pub shape: Vec<usize>,
    /// Whether the data is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The format version.
    pub version: Version,
    /// Total bytes before the data: magic, version, length field and header text. The data
    /// starts at this offset.
    pub header_len: usize,
}

impl Header {
    /// Bytes of array data the header announces (overflow-checked).
    pub fn data_len(&self) -> Result<u64> {
        sciio_core::array::byte_len(&self.shape, self.dtype.itemsize())
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| {
                Error::format(format!(
                    "shape {:?} of {}-byte elements overflows",
                    self.shape,
                    self.dtype.itemsize()
                ))
            })
    }

    /// The memory order of the data.
    pub fn order(&self) -> Order {
        if self.fortran_order {
            Order::F
        } else {
            Order::C
        }
    }

    /// Fails with [`ErrorKind::Refused`] when the dtype holds Python objects.
    pub fn refuse_objects(&self) -> Result<()> {
        if self.dtype.has_object() {
            return Err(Error::new(
                ErrorKind::Refused,
                format!(
                    "dtype {} holds pickled Python objects; sciio never unpickles (numpy needs allow_pickle=True)",
                    self.dtype
                ),
            ));
        }
        Ok(())
    }
}

/// Reads and parses the header from the start of an NPY stream, leaving the reader at the
/// first data byte. `input_len`, when known, is the number of bytes available from the start
/// (file or member size); the header length is checked against it before allocating.
pub fn read_header_from<R: Read>(
    reader: &mut R,
    limits: &Limits,
    input_len: Option<u64>,
) -> Result<Header> {
    let mut prefix = [0u8; 12];
    read_exact_or(reader, &mut prefix[..8], 0, "the magic string and version")?;
    check_magic(&prefix[..8])?;
    let version = parse_version(prefix[6], prefix[7])?;
    let prefix_len = version.prefix_len();
    read_exact_or(
        reader,
        &mut prefix[8..prefix_len],
        8,
        "the header length field",
    )?;
    let hlen = header_text_len(&prefix[..prefix_len], version);
    check_header_len(hlen, prefix_len, limits, input_len)?;
    let hlen_usize = limits.check_alloc(hlen, "NPY header")?;
    // Grow with the bytes that really arrive: a stream may announce more than it holds.
    let mut text = Vec::with_capacity(hlen_usize.min(1 << 16));
    let got = (&mut *reader)
        .take(hlen)
        .read_to_end(&mut text)
        .map_err(|e| Error::io("reading the NPY header", e).with_offset(prefix_len as u64))?;
    if got < hlen_usize {
        return Err(Error::truncated(format!(
            "file ends after {} bytes, inside the header ({hlen} bytes expected)",
            prefix_len + got
        ))
        .with_offset((prefix_len + got) as u64));
    }
    parse_header_text(&text, version, prefix_len)
}

/// Reads the header with default [`Limits`] and unknown input length.
pub fn read_header<R: Read>(reader: &mut R) -> Result<Header> {
    read_header_from(reader, &Limits::default(), None)
}

/// Parses the header at the start of an in-memory NPY file.
///
/// ```
/// let bytes = sciio_npy::header_bytes(&sciio_core::DType::from_typestr("<f8").unwrap(), &[3], false).unwrap();
/// let h = sciio_npy::parse_header(&bytes).unwrap();
/// assert_eq!((h.shape.as_slice(), h.header_len), (&[3usize][..], 128));
/// ```
pub fn parse_header(bytes: &[u8]) -> Result<Header> {
    let mut cursor = bytes;
    read_header_from(&mut cursor, &Limits::default(), Some(bytes.len() as u64))
}

fn read_exact_or<R: Read>(reader: &mut R, buf: &mut [u8], offset: u64, what: &str) -> Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => {
                return Err(Error::truncated(format!(
                    "file ends after {} bytes, inside {what} ({} bytes expected)",
                    offset + filled as u64,
                    buf.len()
                ))
                .with_offset(offset + filled as u64))
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(format!("reading {what}"), e).with_offset(offset)),
        }
    }
    Ok(())
}

fn check_magic(prefix: &[u8]) -> Result<()> {
    if &prefix[..6] != MAGIC {
        return Err(Error::format(format!(
            "not an NPY file: starts with {:?}, expected the magic string \"\\x93NUMPY\"",
            String::from_utf8_lossy(&prefix[..6])
        ))
        .with_offset(0));
    }
    Ok(())
}

fn parse_version(major: u8, minor: u8) -> Result<Version> {
    Version::from_number(major, minor).ok_or_else(|| {
        Error::unsupported(format!(
            "NPY format version {major}.{minor} (sciio reads 1.0, 2.0 and 3.0)"
        ))
        .with_offset(6)
    })
}

fn header_text_len(prefix: &[u8], version: Version) -> u64 {
    match version {
        Version::V1 => u64::from(u16::from_le_bytes([prefix[8], prefix[9]])),
        Version::V2 | Version::V3 => u64::from(u32::from_le_bytes([
            prefix[8], prefix[9], prefix[10], prefix[11],
        ])),
    }
}

fn check_header_len(
    hlen: u64,
    prefix_len: usize,
    limits: &Limits,
    input_len: Option<u64>,
) -> Result<()> {
    if hlen > limits.max_header {
        return Err(Error::new(
            ErrorKind::LimitExceeded,
            format!(
                "header of {hlen} bytes is over the limit of {} bytes",
                limits.max_header
            ),
        )
        .with_offset(8));
    }
    if let Some(len) = input_len {
        let available = len.saturating_sub(prefix_len as u64);
        if hlen > available {
            return Err(Error::truncated(format!(
                "header announces {hlen} bytes, only {available} follow"
            ))
            .with_offset(prefix_len as u64));
        }
    }
    Ok(())
}

/// Parses the header text (after the length field) of the given version.
pub fn parse_header_text(text: &[u8], version: Version, prefix_len: usize) -> Result<Header> {
    let at = |e: Error| e.with_offset(prefix_len as u64);
    let decoded: String = match version {
        Version::V1 | Version::V2 => text.iter().map(|b| char::from(*b)).collect(),
        Version::V3 => String::from_utf8(text.to_vec()).map_err(|e| {
            at(Error::format(format!(
                "version 3.0 header is not UTF-8: {e}"
            )))
        })?,
    };
    let limits = LiteralLimits {
        max_depth: 32,
        max_items: 1 << 20,
    };
    let lit = PyLiteral::parse_with(&decoded, limits).map_err(|e| {
        at(Error::format(format!(
            "header is not a Python literal: {}",
            e.message()
        )))
    })?;
    let PyLiteral::Dict(items) = &lit else {
        return Err(at(Error::format(format!(
            "header is not a dictionary but a {}: {}",
            lit.type_name(),
            short(&decoded)
        ))));
    };
    let mut keys: Vec<&str> = items.iter().filter_map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    if keys != ["descr", "fortran_order", "shape"] || items.len() != 3 {
        return Err(at(Error::format(format!(
            "header does not contain exactly the keys 'descr', 'fortran_order', 'shape': {}",
            short(&decoded)
        ))));
    }
    let shape = match lit.get("shape") {
        Some(PyLiteral::Tuple(dims)) => dims
            .iter()
            .map(|d| match d {
                PyLiteral::Int(n) => usize::try_from(*n)
                    .ok()
                    .ok_or_else(|| Error::format(format!("shape holds the invalid dimension {n}"))),
                other => Err(Error::format(format!(
                    "shape holds a {}, not an int",
                    other.type_name()
                ))),
            })
            .collect::<Result<Vec<usize>>>()
            .map_err(at)?,
        Some(other) => {
            return Err(at(Error::format(format!(
                "shape is not a tuple of ints: {}",
                other.repr()
            ))))
        }
        None => return Err(at(Error::format("header has no 'shape'"))),
    };
    let fortran_order = match lit.get("fortran_order") {
        Some(PyLiteral::Bool(b)) => *b,
        other => {
            return Err(at(Error::format(format!(
                "fortran_order is not a bool: {}",
                other.map_or_else(String::new, PyLiteral::repr)
            ))))
        }
    };
    let descr = lit
        .get("descr")
        .ok_or_else(|| at(Error::format("header has no 'descr'")))?;
    let dtype = DType::parse_descr(descr).map_err(|e| {
        at(Error::format(format!(
            "descr {}: {}",
            short(&descr.repr()),
            e.message()
        )))
    })?;
    if let DType::SubArray(..) = dtype {
        // np.save never writes one (numpy folds subarrays into the shape) and np.load fails.
        return Err(at(Error::format(format!(
            "descr {} is a subarray type, which numpy cannot load either",
            short(&descr.repr())
        ))));
    }
    let header = Header {
        dtype,
        shape,
        fortran_order,
        version,
        header_len: prefix_len + text.len(),
    };
    header.data_len().map_err(at)?;
    Ok(header)
}

fn short(text: &str) -> String {
    let mut s: String = text.trim_end().chars().take(200).collect();
    if s.len() < text.trim_end().len() {
        s.push_str("...");
    }
    s
}

/// The header dict exactly as numpy's `_write_array_header` formats it, growth padding
/// included but not the alignment padding.
pub fn header_text(dtype: &DType, shape: &[usize], fortran_order: bool) -> Result<String> {
    if let DType::SubArray(..) = dtype {
        return Err(Error::invalid_input(
            "an array's dtype cannot be a subarray: fold its shape into the array's shape",
        ));
    }
    let descr = dtype.descr_literal()?.repr();
    let dims = PyLiteral::Tuple(shape.iter().map(|d| PyLiteral::Int(*d as i128)).collect());
    let mut text = format!(
        "{{'descr': {descr}, 'fortran_order': {}, 'shape': {}, }}",
        if fortran_order { "True" } else { "False" },
        dims.repr()
    );
    let growth_axis = if fortran_order {
        shape.last()
    } else {
        shape.first()
    };
    if let Some(d) = growth_axis {
        let digits = d.to_string().len();
        text.push_str(&" ".repeat(GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits)));
    }
    Ok(text)
}

/// The complete header (magic, version, length, padded dict, `\n`) numpy writes for an array
/// of this dtype and shape, choosing the version like `np.save` does: 1.0, else 2.0 when the
/// header exceeds 65535 bytes, else 3.0 when it is not Latin-1.
///
/// ```
/// use sciio_core::DType;
/// let h = sciio_npy::header_bytes(&DType::from_typestr("<f8")?, &[3], false)?;
/// assert_eq!(h.len(), 128); // data starts 64-byte aligned
/// let text = String::from_utf8_lossy(&h[10..]);
/// assert!(text.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"));
/// assert!(text.ends_with(" \n"));
/// # Ok::<(), sciio_core::Error>(())
/// ```
pub fn header_bytes(dtype: &DType, shape: &[usize], fortran_order: bool) -> Result<Vec<u8>> {
    let text = header_text(dtype, shape, fortran_order)?;
    wrap_header(&text, Version::V1)
        .or_else(|_| wrap_header(&text, Version::V2))
        .or_else(|_| wrap_header(&text, Version::V3))
}

/// The header with an explicit version (numpy's `_wrap_header`). Fails when the text does not
/// fit the version (too long for 1.0, not Latin-1 for 1.0/2.0).
pub fn header_bytes_version(
    dtype: &DType,
    shape: &[usize],
    fortran_order: bool,
    version: Version,
) -> Result<Vec<u8>> {
    wrap_header(&header_text(dtype, shape, fortran_order)?, version)
}

fn encode(text: &str, version: Version) -> Result<Vec<u8>> {
    match version {
        Version::V3 => Ok(text.as_bytes().to_vec()),
        Version::V1 | Version::V2 => text
            .chars()
            .map(|c| u8::try_from(u32::from(c)).ok())
            .collect::<Option<Vec<u8>>>()
            .ok_or_else(|| {
                Error::invalid_input(format!(
                    "header is not Latin-1, so version {}.0 cannot hold it",
                    version.number().0
                ))
            }),
    }
}

/// Pads `text` to the 64-byte boundary and adds the prefix: numpy's `_wrap_header`.
fn wrap_header(text: &str, version: Version) -> Result<Vec<u8>> {
    let encoded = encode(text, version)?;
    let prefix_len = version.prefix_len();
    let hlen = encoded.len() + 1;
    let padlen = ARRAY_ALIGN - ((prefix_len + hlen) % ARRAY_ALIGN);
    let total = hlen + padlen;
    let mut out = Vec::with_capacity(prefix_len + total);
    out.extend_from_slice(MAGIC);
    let (major, minor) = version.number();
    out.extend_from_slice(&[major, minor]);
    match version {
        Version::V1 => {
            let n = u16::try_from(total).map_err(|_| {
                Error::invalid_input(format!("header length {hlen} too big for version 1.0"))
            })?;
            out.extend_from_slice(&n.to_le_bytes());
        }
        Version::V2 | Version::V3 => {
            let n = u32::try_from(total).map_err(|_| {
                Error::invalid_input(format!("header length {hlen} too big for version 2.0"))
            })?;
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
    out.extend_from_slice(&encoded);
    out.resize(out.len() + padlen, b' ');
    out.push(b'\n');
    Ok(out)
}

/// The header for `shape` padded to exactly `header_len` total bytes with the given version:
/// used to rewrite a header in place. Fails when it does not fit.
pub fn header_bytes_fixed(
    dtype: &DType,
    shape: &[usize],
    fortran_order: bool,
    version: Version,
    header_len: usize,
) -> Result<Vec<u8>> {
    let dims = PyLiteral::Tuple(shape.iter().map(|d| PyLiteral::Int(*d as i128)).collect());
    let text = format!(
        "{{'descr': {}, 'fortran_order': {}, 'shape': {}, }}",
        dtype.descr_literal()?.repr(),
        if fortran_order { "True" } else { "False" },
        dims.repr()
    );
    let encoded = encode(&text, version)?;
    let prefix_len = version.prefix_len();
    let room = header_len.saturating_sub(prefix_len + 1);
    if encoded.len() > room || header_len < prefix_len + 1 {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "the new header ({} bytes) does not fit in the existing one ({header_len} bytes)",
                encoded.len() + prefix_len + 1
            ),
        ));
    }
    let mut out = Vec::with_capacity(header_len);
    out.extend_from_slice(MAGIC);
    let (major, minor) = version.number();
    out.extend_from_slice(&[major, minor]);
    let total = header_len - prefix_len;
    match version {
        Version::V1 => out.extend_from_slice(
            &u16::try_from(total)
                .map_err(|_| Error::invalid_input("header too long for version 1.0"))?
                .to_le_bytes(),
        ),
        _ => out.extend_from_slice(
            &u32::try_from(total)
                .map_err(|_| Error::invalid_input("header too long"))?
                .to_le_bytes(),
        ),
    }
    out.extend_from_slice(&encoded);
    out.resize(header_len - 1, b' ');
    out.push(b'\n');
    Ok(out)
}
