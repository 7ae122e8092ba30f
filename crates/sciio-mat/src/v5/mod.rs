//! MAT v4 and Level-5 MAT files (v5, v6 and v7 — MATLAB's default `save` format, and what
//! `scipy.io.savemat` writes), read in pure Rust into the same [`MatValue`] model as v7.3.
//!
//! A Level-5 file is a 128-byte header (116 bytes of text, the subsystem offset, version
//! `0x0100` and the endian indicator `IM`/`MI`) followed by data elements: one `miMATRIX` per
//! variable, or (v7) one `miCOMPRESSED` element holding a zlib-compressed `miMATRIX`. Every
//! tag and size is checked against its enclosing element ([`cursor::Cursor`]); inflated
//! sizes are bounded by [`Limits`]. A Level-5 file is read on demand ([`source::Source`]): at
//! open, the top-level tags and each variable's header (the first bytes of its element); a
//! variable's element when it is read; a streamed variable ([`plain`]) a piece at a time.
//! A v4 file is read on demand too ([`v4`]): at open, each matrix's header and name (its
//! data's length follows from its header); a matrix's data when it is read; a large numeric
//! one streamed a piece at a time.

use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};

use sciio_core::{Error, Limits, Result};

use crate::value::VarInfo;
use crate::value::{MatClass, MatValue};

mod consts;
pub(crate) mod cursor;
pub(crate) mod decode;
mod mcos;
mod plain;
mod source;
mod subsystem;
pub(crate) mod v4;
pub(crate) mod write;

use consts::PLAIN_FROM;
use cursor::{Cursor, Endian, MI_COMPRESSED, MI_MATRIX};
use source::Source;

use decode::{class_kind, Decoder, Header};

/// The version of a MAT file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatVersion {
    /// MAT v4 (no header; MATLAB 4, `save -v4`).
    V4,
    /// Level-5 MAT without compressed elements (`save -v6`, `scipy.io.savemat`): v5 and v6
    /// files are the same format.
    V5,
    /// Level-5 MAT with `miCOMPRESSED` elements (`save -v7`, MATLAB's default).
    V7,
    /// v7.3: HDF5 with a MATLAB userblock (`save -v7.3`).
    V73,
}

impl MatVersion {
    /// `4`, `5`, `7` or `7.3`.
    pub fn name(self) -> &'static str {
        match self {
            MatVersion::V4 => "4",
            MatVersion::V5 => "5",
            MatVersion::V7 => "7",
            MatVersion::V73 => "7.3",
        }
    }
}

impl std::fmt::Display for MatVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a variable's `miMATRIX` is.
#[derive(Debug)]
enum Stored {
    /// Level-5: the element's data range in the file, compressed or not.
    Level5 {
        start: u64,
        end: u64,
        compressed: bool,
    },
    /// v4: the matrix's header and where its data is.
    V4(v4::Matrix),
    /// A Level-5 element whose variable header cannot be decoded (the error's kind, why and
    /// where).
    Broken(sciio_core::ErrorKind, String, Option<u64>),
}

#[derive(Debug)]
struct Var {
    name: String,
    offset: u64,
    stored: Stored,
    header: Option<Header>,
}

/// A MAT v4 or Level-5 (v5/v6/v7) file.
#[derive(Debug)]
pub(crate) struct Mat5File {
    path: PathBuf,
    /// The file's bytes (read on demand, or in memory).
    source: Source,
    endian: Endian,
    text: Option<String>,
    version: MatVersion,
    limits: Limits,
    vars: Vec<Var>,
    /// The element at the header's subsystem offset (MATLAB's object metadata): data range,
    /// compressed, element offset.
    subsystem: Option<(u64, u64, bool, u64)>,
    /// The decoded subsystem (or why it cannot be), loaded at the first object.
    objects:
        std::sync::Mutex<Option<std::result::Result<std::sync::Arc<subsystem::Subsystem>, String>>>,
}

/// The header text of a Level-5 file, trailing spaces and NULs removed.
fn header_text(head: &[u8]) -> String {
    let text = head.get(..116).unwrap_or_default();
    String::from_utf8_lossy(text)
        .trim_end_matches([' ', '\0'])
        .to_string()
}

/// Whether `head` (at least 128 bytes) is a Level-5 MAT header: version 0x0100 with the
/// endian indicator in either order.
pub fn is_level5(head: &[u8]) -> bool {
    matches!(
        head.get(124..128),
        Some([0x00, 0x01, b'I', b'M']) | Some([0x01, 0x00, b'M', b'I'])
    )
}

/// Whether `head` is a plausible MAT v4 matrix header (its 20 bytes and name length).
pub fn is_v4(head: &[u8]) -> bool {
    v4::head(head).is_some()
}

impl Mat5File {
    /// Opens a Level-5 or v4 file.
    pub(crate) fn open(path: &Path, limits: Limits) -> Result<Mat5File> {
        let cannot_open = |e| Error::io("cannot open", e).with_file(path);
        let file = std::fs::File::open(path).map_err(cannot_open)?;
        let size = file.metadata().map_err(cannot_open)?.len();
        let mut head = Vec::with_capacity(128);
        (&file)
            .take(128)
            .read_to_end(&mut head)
            .map_err(|e| Error::io("cannot read", e).with_file(path))?;
        if head.len() >= 128 && is_level5(&head) {
            let source = Source::File { file, len: size };
            return Self::level5(path, source, limits).map_err(|e| e.with_file(path));
        }
        if !is_v4(&head) {
            return Err(not_a_mat_file().with_file(path));
        }
        let source = Source::File { file, len: size };
        Self::v4(path, source, limits).map_err(|e| e.with_file(path))
    }

    pub(crate) fn from_bytes(path: &Path, bytes: Vec<u8>, limits: Limits) -> Result<Mat5File> {
        if bytes.len() >= 128 && is_level5(&bytes) {
            Self::level5(path, Source::Bytes(bytes), limits)
        } else if is_v4(&bytes) {
            Self::v4(path, Source::Bytes(bytes), limits)
        } else {
            Err(not_a_mat_file())
        }
    }

    /// A v4 file: its matrices' headers and names read ([`v4::walk`]), their data left for
    /// when they are read.
    fn v4(path: &Path, source: Source, limits: Limits) -> Result<Mat5File> {
        let vars: Vec<Var> = v4::walk(&source)?
            .into_iter()
            .map(|(name, matrix, offset)| Var {
                name,
                offset,
                stored: Stored::V4(matrix),
                header: None,
            })
            .collect();
        let vars = last_of_each_name(vars);
        Ok(Mat5File {
            path: path.to_path_buf(),
            source,
            endian: Endian::Little,
            text: None,
            version: MatVersion::V4,
            limits,
            vars,
            subsystem: None,
            objects: std::sync::Mutex::new(None),
        })
    }

    fn level5(path: &Path, source: Source, limits: Limits) -> Result<Mat5File> {
        let head = source
            .range(0, 128)
            .map_err(|e| Error::io("cannot read", e))?;
        let endian = match head.get(126..128) {
            Some(b"IM") => Endian::Little,
            _ => Endian::Big,
        };
        let text = header_text(&head);
        let sub_offset = head.get(116..124).and_then(|b| {
            let raw: [u8; 8] = b.try_into().ok()?;
            let v = match endian {
                Endian::Little => u64::from_le_bytes(raw),
                Endian::Big => u64::from_be_bytes(raw),
            };
            // Unset: zeros or spaces.
            (v != 0 && raw != [b' '; 8]).then_some(v)
        });
        let mut vars = Vec::new();
        let mut compressed_any = false;
        let mut subsystem = None;
        let decoder = Decoder { limits: &limits };
        let mut pos = 128u64;
        while pos < source.len() {
            let el = top_element(&source, pos, endian)?;
            pos = el.next;
            let start = el.offset.saturating_add(8);
            let end = start.saturating_add(el.data_len);
            let compressed = match el.ty {
                MI_COMPRESSED => true,
                MI_MATRIX => false,
                other => {
                    return Err(Error::format(format!(
                        "{} at the top level, where variables are miMATRIX or miCOMPRESSED",
                        cursor::type_name(other)
                    ))
                    .with_offset(el.offset))
                }
            };
            compressed_any |= compressed;
            if sub_offset == Some(el.offset) {
                // MATLAB's subsystem (function workspaces, object metadata): not a variable.
                subsystem = Some((start, end, compressed, el.offset));
                continue;
            }
            let stored = Stored::Level5 {
                start,
                end,
                compressed,
            };
            // A variable whose header cannot be decoded is listed (under a name no MATLAB
            // variable can have) and fails alone when described or read.
            let header = match el.header(&source, &decoder, compressed, endian) {
                Ok(header) => header,
                Err(e) => {
                    vars.push(Var {
                        name: format!("(unreadable at byte {})", el.offset),
                        offset: el.offset,
                        stored: Stored::Broken(
                            e.kind(),
                            e.message().to_string(),
                            e.location().offset,
                        ),
                        header: None,
                    });
                    continue;
                }
            };
            let name = match header.as_ref().map(|h| h.name.as_str()) {
                Some("") | None => "__function_workspace__".to_string(),
                Some(n) => n.to_string(),
            };
            vars.push(Var {
                name,
                offset: el.offset,
                stored,
                header,
            });
        }
        let kept = last_of_each_name(vars);
        Ok(Mat5File {
            path: path.to_path_buf(),
            source,
            endian,
            text: Some(text),
            version: if compressed_any {
                MatVersion::V7
            } else {
                MatVersion::V5
            },
            limits,
            vars: kept,
            subsystem,
            objects: std::sync::Mutex::new(None),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn header_text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    pub(crate) fn version(&self) -> MatVersion {
        self.version
    }

    pub(crate) fn names(&self) -> Vec<String> {
        self.vars.iter().map(|v| v.name.clone()).collect()
    }

    fn var(&self, name: &str) -> Result<&Var> {
        self.vars
            .iter()
            .find(|v| v.name == name)
            .ok_or_else(|| Error::not_found(format!("no variable {name:?}")).with_file(&self.path))
    }

    pub(crate) fn info(&self, name: &str) -> Result<VarInfo> {
        let var = self.var(name)?;
        if let Stored::V4(m) = &var.stored {
            if let Some((class, shape, complex)) = m.describe() {
                return Ok(VarInfo {
                    name: name.to_string(),
                    class,
                    shape,
                    complex,
                    sparse: false,
                });
            }
        }
        let Some(h) = &var.header else {
            let value = self.read(name)?;
            return Ok(VarInfo {
                name: name.to_string(),
                class: value.class(),
                shape: value.matlab_shape(),
                complex: value.is_complex(),
                sparse: matches!(value, MatValue::Sparse(_)),
            });
        };
        let class = match h.class {
            consts::MX_CELL => MatClass::Cell,
            consts::MX_STRUCT => MatClass::Struct,
            consts::MX_CHAR => MatClass::Char,
            consts::MX_FUNCTION => MatClass::FunctionHandle,
            consts::MX_SPARSE if h.logical() => MatClass::Logical,
            consts::MX_SPARSE => MatClass::Double,
            consts::MX_OBJECT | consts::MX_OPAQUE => {
                MatClass::Object(h.class_name.clone().unwrap_or_default())
            }
            _ if h.logical() => MatClass::Logical,
            c => class_kind(c)
                .and_then(MatClass::of_kind)
                .unwrap_or(MatClass::Double),
        };
        let shape = match h.class {
            // An object's size is its decoded value's.
            consts::MX_OPAQUE => self
                .read(name)
                .map(|v| v.matlab_shape())
                .unwrap_or_else(|_| vec![1, 1]),
            consts::MX_FUNCTION | consts::MX_OBJECT => vec![1, 1],
            _ => h.dims.clone(),
        };
        Ok(VarInfo {
            name: name.to_string(),
            class,
            shape,
            complex: h.complex(),
            sparse: h.class == consts::MX_SPARSE,
        })
    }

    pub(crate) fn read(&self, name: &str) -> Result<MatValue> {
        let var = self.var(name)?;
        let node = format!("/{name}");
        let value = match &var.stored {
            Stored::V4(m) => {
                return v4::read(&self.source, m, &self.limits)
                    .map_err(|e| e.with_node(node).with_file(&self.path))
            }
            Stored::Broken(kind, why, at) => {
                let e = Error::new(
                    *kind,
                    format!(
                        "the variable header at byte {} cannot be decoded: {why}",
                        var.offset
                    ),
                );
                let e = match at {
                    Some(at) => e.with_offset(*at),
                    None => e,
                };
                return Err(e.with_node(node).with_file(&self.path));
            }
            Stored::Level5 {
                start,
                end,
                compressed,
            } => self
                .decode(*start, *end, *compressed, var.offset)
                .map_err(|e| {
                    let e = match e.location().node {
                        None => e.with_node(node.clone()),
                        Some(_) => e,
                    };
                    e.with_file(&self.path)
                })?,
        };
        Ok(self.resolve_objects(value))
    }

    /// Decodes the `miMATRIX` stored at `start..end` (inflated first when compressed).
    fn decode(&self, start: u64, end: u64, compressed: bool, offset: u64) -> Result<MatValue> {
        let data = self.element_bytes(start, end, offset)?;
        let data = &data[..];
        let decoder = Decoder {
            limits: &self.limits,
        };
        if !compressed {
            let mut c = Cursor::new(data, offset.saturating_add(8), true, self.endian);
            return Ok(decoder.matrix(&mut c, 0, "")?.1);
        }
        if data.len() >= PLAIN_FROM {
            if let Some(value) = self.decode_plain(data, offset) {
                return Ok(value);
            }
        }
        let inflated = cursor::inflate(data, &self.limits, offset)?;
        let mut outer = Cursor::new(&inflated, offset, false, self.endian);
        let el = outer.element("the compressed variable")?;
        if el.ty != MI_MATRIX {
            return Err(Error::format(format!(
                "an miCOMPRESSED element holding {}, not miMATRIX",
                cursor::type_name(el.ty)
            ))
            .with_offset(offset));
        }
        let mut c = outer.inner(&el);
        Ok(decoder.matrix(&mut c, 0, "")?.1)
    }

    /// The bytes `start..end` of the element at `offset` (within the file: checked at open),
    /// read into memory within the limits.
    fn element_bytes(&self, start: u64, end: u64, offset: u64) -> Result<Cow<'_, [u8]>> {
        self.limits
            .check_alloc(end.saturating_sub(start), "a variable's element")
            .map_err(|e| e.with_offset(offset))?;
        self.source
            .range(start, end)
            .map_err(|e| Error::io("cannot read", e).with_offset(offset))
    }

    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// `check_plain` of a variable not stored as a Level-5 element: a v4 one streams when
    /// [`v4::Matrix::streams`] says so (its size was checked against the file at open).
    fn check_v4(&self, var: &Var, dtype: &sciio_core::DType, dims: &[usize]) -> bool {
        matches!(&var.stored, Stored::V4(m) if m.streams(dtype, dims))
    }

    /// `copy_plain` of a variable not stored as a Level-5 element: a v4 one that streams
    /// is copied a piece at a time ([`v4::copy`]).
    fn copy_v4(
        &self,
        var: &Var,
        dtype: &sciio_core::DType,
        dims: &[usize],
        out: &mut dyn std::io::Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<bool> {
        let Stored::V4(m) = &var.stored else {
            return Ok(false);
        };
        if !m.streams(dtype, dims) {
            return Ok(false);
        }
        v4::copy(&self.source, m, out, progress)
            .map_err(|e| e.with_node(format!("/{}", var.name)).with_file(&self.path))?;
        Ok(true)
    }
}

/// The error for a file that is none of the MAT versions.
fn not_a_mat_file() -> Error {
    Error::format(
        "not a MAT file: neither a MATLAB Level-5 header, an HDF5 signature nor a MAT v4 \
         matrix header",
    )
}

/// How much of a variable's element is read at open for its header: its array flags,
/// dimensions and name (an object's class name too) are in the first bytes, compressed or
/// not (a compressed header's 4096 inflated bytes need at most this much of its stream).
const HEADER_PREFIX: u64 = 64 << 10;

/// A top-level element's tag (its data not read).
struct TopElement {
    ty: u32,
    /// Where its tag is.
    offset: u64,
    /// Where its data is, and its length (in the tag's second word for a small element).
    data_at: u64,
    data_len: u64,
    /// Where the next element is (after the padding).
    next: u64,
}

impl TopElement {
    /// The variable's header, from the element's first bytes (the whole element when these
    /// do not hold it).
    fn header(
        &self,
        source: &Source,
        decoder: &Decoder<'_>,
        compressed: bool,
        endian: Endian,
    ) -> Result<Option<Header>> {
        let read = |len: u64| {
            decoder
                .limits
                .check_alloc(len, "a variable's element")
                .map_err(|e| e.with_offset(self.offset))?;
            source
                .range(self.data_at, self.data_at.saturating_add(len))
                .map_err(|e| Error::io("cannot read", e).with_offset(self.offset))
        };
        let prefix = read(self.data_len.min(HEADER_PREFIX))?;
        let whole = || read(self.data_len);
        let complete = self.data_len <= HEADER_PREFIX;
        header_of(
            decoder,
            &prefix,
            complete,
            &whole,
            compressed,
            endian,
            self.offset,
        )
    }
}

/// The top-level element whose tag is at `pos`, read from `source`: the checks and messages
/// of [`Cursor::element`] over the file's elements, its data left unread.
fn top_element(source: &Source, pos: u64, endian: Endian) -> Result<TopElement> {
    const WHAT: &str = "a variable";
    let tag = source
        .range(pos, pos.saturating_add(8))
        .map_err(|e| Error::io("cannot read", e).with_offset(pos))?;
    let mut c = Cursor::new(&tag, pos, true, endian);
    let first = c.u32(WHAT)?;
    if first >> 16 != 0 {
        // Small data element: size in the upper 16 bits, data in the tag's second word.
        let n = u64::from(first >> 16);
        c.take(4, WHAT)?;
        if n > 4 {
            return Err(Error::format(format!(
                "{WHAT}: small data element claims {n} bytes (at most 4)"
            ))
            .with_offset(pos));
        }
        return Ok(TopElement {
            ty: first & 0xFFFF,
            offset: pos,
            data_at: pos + 4,
            data_len: n,
            next: pos + 8,
        });
    }
    let n = u64::from(c.u32(WHAT)?);
    let data_at = pos + 8;
    let left = source.len().saturating_sub(data_at);
    if n > left {
        return Err(Error::truncated(format!(
            "{WHAT} ({}) needs {n} bytes, its enclosing element has {left} left",
            cursor::type_name(first)
        ))
        .with_offset(data_at));
    }
    let mut next = data_at + n;
    if first != MI_COMPRESSED {
        let pad = (8 - n % 8) % 8;
        next += pad.min(source.len() - next);
    }
    Ok(TopElement {
        ty: first,
        offset: pos,
        data_at,
        data_len: n,
        next,
    })
}

/// A variable's header from the first bytes `data` of its element (all of it when
/// `complete`), inflating only the first bytes of a compressed element (the `whole` element
/// when the header runs past them).
fn header_of<'a>(
    decoder: &Decoder<'_>,
    data: &[u8],
    complete: bool,
    whole: &dyn Fn() -> Result<Cow<'a, [u8]>>,
    compressed: bool,
    endian: Endian,
    offset: u64,
) -> Result<Option<Header>> {
    let parse = |bytes: &[u8], exact: bool| -> Result<Option<Header>> {
        let origin = if exact {
            offset.saturating_add(8)
        } else {
            offset
        };
        if !compressed {
            let mut c = Cursor::new(bytes, origin, true, endian);
            return decoder.header(&mut c);
        }
        let mut outer = Cursor::new(bytes, offset, false, endian);
        let el = outer.element("the compressed variable")?;
        if el.ty != MI_MATRIX {
            return Err(Error::format(format!(
                "an miCOMPRESSED element holding {}, not miMATRIX",
                cursor::type_name(el.ty)
            ))
            .with_offset(offset));
        }
        decoder.header(&mut outer.inner(&el))
    };
    if !compressed {
        return match parse(data, true) {
            Err(_) if !complete => parse(&whole()?, true),
            parsed => parsed,
        };
    }
    let prefix = cursor::inflate_prefix(data, decoder.limits, offset, Some(4096))?;
    // The element's tag announces more than the prefix holds: parse the header from a
    // cursor limited to what was inflated.
    let fits = prefix.len() < 4096;
    let attempt = if fits {
        parse(&prefix, false)
    } else {
        parse_prefix(decoder, &prefix, endian, offset)
    };
    match attempt {
        Ok(h) => Ok(h),
        Err(_) if complete => parse(&cursor::inflate(data, decoder.limits, offset)?, false),
        Err(_) => parse(&cursor::inflate(&whole()?, decoder.limits, offset)?, false),
    }
}

/// The header of an `miMATRIX` whose tag is at the start of `prefix`, cut short.
fn parse_prefix(
    decoder: &Decoder<'_>,
    prefix: &[u8],
    endian: Endian,
    offset: u64,
) -> Result<Option<Header>> {
    let mut c = Cursor::new(prefix, offset, false, endian);
    let ty = c.u32("the compressed variable")?;
    let _size = c.u32("the compressed variable")?;
    if ty != MI_MATRIX {
        return Err(Error::format("not an miMATRIX"));
    }
    let rest = prefix.get(8..).unwrap_or_default();
    decoder.header(&mut Cursor::new(rest, offset, false, endian))
}

/// Fuzzing entry: arbitrary bytes as a v4 or Level-5 MAT file (allocations bounded to
/// 64 MiB), every variable listed and read; errors are fine, panics are not.
pub fn fuzz_read(bytes: &[u8]) {
    let limits = Limits::default().max_alloc(64 << 20);
    if let Ok(file) = Mat5File::from_bytes(Path::new("fuzz.mat"), bytes.to_vec(), limits) {
        for name in file.names() {
            let _ = file.info(&name);
            let _ = file.read(&name);
        }
    }
}

/// The variables, the last of any two of the same name kept in its place (as MATLAB's `load`
/// and scipy.io's `loadmat` do: each overwrites the one read before it).
fn last_of_each_name(vars: Vec<Var>) -> Vec<Var> {
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<Var> = vars
        .into_iter()
        .rev()
        .filter(|v| seen.insert(v.name.clone()))
        .collect();
    kept.reverse();
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v5 file of one variable `x` whose header (its dimensions element: `ndims` ones) is
    /// longer than [`HEADER_PREFIX`], holding the double 2.5.
    fn many_dims_file(ndims: usize) -> Vec<u8> {
        let words = |ws: &[u32]| ws.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
        let mut el = words(&[6, 8, 6, 0]); // array flags: double, real
        el.extend(words(&[5, (ndims * 4) as u32]));
        el.extend(words(&vec![1; ndims]));
        el.extend(words(&[1 << 16 | 1]));
        el.extend(*b"x\0\0\0"); // name: a small miINT8 element
        el.extend(words(&[9, 8]));
        el.extend(2.5f64.to_le_bytes());
        let mut bytes = b"MATLAB 5.0 MAT-file, sciio test".to_vec();
        bytes.resize(116, b' ');
        bytes.extend([0u8; 8]);
        bytes.extend([0, 1, b'I', b'M']);
        bytes.extend(words(&[14, el.len() as u32]));
        bytes.extend(el);
        bytes
    }

    #[test]
    fn a_header_longer_than_the_prefix_read_at_open_is_read_from_the_whole_element() {
        let ndims = 20_000;
        let bytes = many_dims_file(ndims);
        assert!(bytes.len() as u64 > HEADER_PREFIX + 128);
        let dir = sciio_testkit::tempdir();
        let path = dir.path().join("dims.mat");
        std::fs::write(&path, &bytes).unwrap();
        let limits = Limits::default();
        let in_memory = Mat5File::from_bytes(&path, bytes, limits).unwrap();
        let on_demand = Mat5File::open(&path, limits).unwrap();
        for file in [&in_memory, &on_demand] {
            assert_eq!(file.names(), vec!["x".to_string()]);
            assert_eq!(file.info("x").unwrap().shape, vec![1; ndims]);
        }
        let (a, b) = (in_memory.read("x"), on_demand.read("x"));
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
}
