//! MAT v4 and Level-5 MAT files (v5, v6 and v7 — MATLAB's default `save` format, and what
//! `scipy.io.savemat` writes), read in pure Rust into the same [`MatValue`] model as v7.3.
//!
//! A Level-5 file is a 128-byte header (116 bytes of text, the subsystem offset, version
//! `0x0100` and the endian indicator `IM`/`MI`) followed by data elements: one `miMATRIX` per
//! variable, or (v7) one `miCOMPRESSED` element holding a zlib-compressed `miMATRIX`. Every
//! tag and size is checked against its enclosing element ([`cursor::Cursor`]); inflated
//! sizes are bounded by [`Limits`]. The whole file is read into memory when opened.

use std::path::{Path, PathBuf};

use sciio_core::{Error, Limits, Result};

use crate::value::VarInfo;
use crate::value::{MatClass, MatValue};

mod consts;
pub(crate) mod cursor;
pub(crate) mod decode;
mod mcos;
mod plain;
mod subsystem;
pub(crate) mod v4;
pub(crate) mod write;

use consts::PLAIN_FROM;
use cursor::{Cursor, Endian, MI_COMPRESSED, MI_MATRIX};

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
        start: usize,
        end: usize,
        compressed: bool,
    },
    /// v4: decoded at open.
    V4(MatValue),
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

/// A MAT v4 or Level-5 (v5/v6/v7) file, read into memory.
#[derive(Debug)]
pub(crate) struct Mat5File {
    path: PathBuf,
    bytes: Vec<u8>,
    endian: Endian,
    text: Option<String>,
    version: MatVersion,
    limits: Limits,
    vars: Vec<Var>,
    /// The element at the header's subsystem offset (MATLAB's object metadata): data range,
    /// compressed, element offset.
    subsystem: Option<(usize, usize, bool, u64)>,
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
        let size = std::fs::metadata(path)
            .map_err(|e| Error::io("cannot open", e).with_file(path))?
            .len();
        limits
            .check_alloc(size, "the MAT file")
            .map_err(|e| e.with_file(path))?;
        let bytes = std::fs::read(path).map_err(|e| Error::io("cannot read", e).with_file(path))?;
        Self::from_bytes(path, bytes, limits).map_err(|e| e.with_file(path))
    }

    pub(crate) fn from_bytes(path: &Path, bytes: Vec<u8>, limits: Limits) -> Result<Mat5File> {
        if bytes.len() >= 128 && is_level5(&bytes) {
            Self::level5(path, bytes, limits)
        } else if is_v4(&bytes) {
            let vars = v4::read_all(&bytes, &limits)?
                .into_iter()
                .map(|(name, value, offset)| Var {
                    name,
                    offset,
                    stored: Stored::V4(value),
                    header: None,
                })
                .collect();
            Ok(Mat5File {
                path: path.to_path_buf(),
                bytes: Vec::new(),
                endian: Endian::Little,
                text: None,
                version: MatVersion::V4,
                limits,
                vars,
                subsystem: None,
                objects: std::sync::Mutex::new(None),
            })
        } else {
            Err(Error::format(
                "not a MAT file: neither a MATLAB Level-5 header, an HDF5 signature nor a \
                 MAT v4 matrix header",
            ))
        }
    }

    fn level5(path: &Path, bytes: Vec<u8>, limits: Limits) -> Result<Mat5File> {
        let endian = match bytes.get(126..128) {
            Some(b"IM") => Endian::Little,
            _ => Endian::Big,
        };
        let text = header_text(&bytes);
        let sub_offset = bytes.get(116..124).and_then(|b| {
            let raw: [u8; 8] = b.try_into().ok()?;
            let v = match endian {
                Endian::Little => u64::from_le_bytes(raw),
                Endian::Big => u64::from_be_bytes(raw),
            };
            // Unset: zeros or spaces.
            (v != 0 && raw != [b' '; 8]).then_some(v)
        });
        let mut c = Cursor::new(bytes.get(128..).unwrap_or_default(), 128, true, endian);
        let mut vars = Vec::new();
        let mut compressed_any = false;
        let mut subsystem = None;
        let decoder = Decoder { limits: &limits };
        while !c.at_end() {
            let el = c.element("a variable")?;
            let start = (el.offset as usize).saturating_add(8);
            let end = start.saturating_add(el.data.len());
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
            let header = match header_of(&decoder, el.data, compressed, endian, el.offset) {
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
        // The last of two variables of the same name wins (as MATLAB's load does).
        let mut seen = std::collections::HashSet::new();
        let mut kept: Vec<Var> = vars
            .into_iter()
            .rev()
            .filter(|v| seen.insert(v.name.clone()))
            .collect();
        kept.reverse();
        Ok(Mat5File {
            path: path.to_path_buf(),
            bytes,
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
            Stored::V4(v) => return Ok(v.clone()),
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
    fn decode(&self, start: usize, end: usize, compressed: bool, offset: u64) -> Result<MatValue> {
        let data = self.bytes.get(start..end).unwrap_or_default();
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

    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }
}

/// A variable's header, inflating only the first bytes of a compressed element (the whole
/// element when the header runs past them).
fn header_of(
    decoder: &Decoder<'_>,
    data: &[u8],
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
        return parse(data, true);
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
        Err(_) => parse(&cursor::inflate(data, decoder.limits, offset)?, false),
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
