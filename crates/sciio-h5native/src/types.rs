//! sciio's model of an HDF5 datatype ([`H5Type`]), read from a datatype id, and its numpy
//! spelling ([`H5Type::numpy_descr`]).
//!
//! Data is read in the file's own layout (memory type = file type), so every type numpy can
//! describe, big-endian ones included, arrives byte-exact with no conversion. The numpy
//! description keeps compound offsets and item sizes, so packed and gapped structs match.

use std::fmt::Write as _;

use sciio_core::{
    ByteOrder as CoreOrder, DType, Error, Field as CoreField, RecordType, Result, ScalarType,
};

/// libhdf5's `hvl_t` (a vlen sequence's memory descriptor: length, then pointer), for sizes.
#[repr(C)]
#[allow(dead_code)] // only its size is used
struct Hvl {
    len: usize,
    p: *mut std::ffi::c_void,
}

/// Byte order of an atomic type: numpy's, the one `ByteOrder` of the workspace.
pub use sciio_core::ByteOrder;

/// numpy's byte-order character for an item of `size` bytes in `order`.
fn numpy_char(order: ByteOrder, size: usize) -> char {
    match order {
        _ if size <= 1 => '|',
        ByteOrder::Little => '<',
        ByteOrder::Big => '>',
        ByteOrder::NotApplicable => '|',
    }
}

/// Character set of a string type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CharSet {
    /// ASCII (numpy `S`, PyTables `StringAtom`).
    Ascii,
    /// UTF-8.
    Utf8,
}

/// One member of a compound type.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Member name.
    pub name: String,
    /// Byte offset inside the compound element.
    pub offset: usize,
    /// Member type.
    pub ty: H5Type,
}

/// An HDF5 datatype as sciio understands it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum H5Type {
    /// Two's complement or unsigned integer.
    Int {
        /// Size in bytes.
        size: usize,
        /// Signed?
        signed: bool,
        /// Byte order.
        order: ByteOrder,
    },
    /// IEEE-like float (half, single, double, x87 extended padded to 12/16 bytes, quad).
    Float {
        /// Size in bytes.
        size: usize,
        /// Significant bits (80 for x87 extended, 128 for quad...).
        precision: usize,
        /// Byte order.
        order: ByteOrder,
    },
    /// HDF5 bitfield; PyTables' `bool` is an 8-bit bitfield (PyTables writes precision 8 and
    /// reads every bitfield as `bool`; sciio reads 8-bit ones as `bool`).
    Bitfield {
        /// Size in bytes.
        size: usize,
        /// Significant bits.
        precision: usize,
        /// Byte order.
        order: ByteOrder,
    },
    /// H5T_TIME: PyTables' time32 (4 bytes, integer seconds) and time64 (8 bytes, float seconds).
    Time {
        /// Size in bytes.
        size: usize,
        /// Byte order.
        order: ByteOrder,
    },
    /// Fixed-length string of `size` bytes.
    FixedString {
        /// Length in bytes.
        size: usize,
        /// Character set.
        charset: CharSet,
    },
    /// Variable-length string.
    VarString {
        /// Character set.
        charset: CharSet,
    },
    /// Opaque bytes with a tag.
    Opaque {
        /// Size in bytes.
        size: usize,
        /// The tag libhdf5 stores with the type.
        tag: String,
    },
    /// Compound (struct); complex numbers are compounds of two equal floats named r/i or real/imag.
    Compound {
        /// Element size in bytes.
        size: usize,
        /// Members in file order.
        fields: Vec<Field>,
    },
    /// Enumeration over an integer base type.
    Enum {
        /// The integer type of the values.
        base: Box<H5Type>,
        /// (name, value) pairs.
        members: Vec<(String, i64)>,
    },
    /// Fixed-size array of a base type (a numpy sub-array).
    Array {
        /// Element type.
        base: Box<H5Type>,
        /// Dimensions.
        dims: Vec<usize>,
    },
    /// Variable-length sequence of a base type.
    VarLen {
        /// Element type.
        base: Box<H5Type>,
    },
    /// Object reference (8 bytes, `hobj_ref_t`).
    ObjectRef,
    /// Dataset region reference (12 bytes).
    RegionRef,
    /// New-style (HDF5 1.12) reference.
    Reference {
        /// Size in bytes.
        size: usize,
    },
}

impl H5Type {
    /// Size of one element in the file layout (vlen entries: the size of their in-memory
    /// descriptor, `char *` or `hvl_t`).
    pub fn size(&self) -> usize {
        match self {
            H5Type::Int { size, .. }
            | H5Type::Float { size, .. }
            | H5Type::Bitfield { size, .. }
            | H5Type::Time { size, .. }
            | H5Type::FixedString { size, .. }
            | H5Type::Opaque { size, .. }
            | H5Type::Compound { size, .. }
            | H5Type::Reference { size } => *size,
            H5Type::Enum { base, .. } => base.size(),
            H5Type::Array { base, dims } => {
                dims.iter().fold(base.size(), |a, &d| a.saturating_mul(d))
            }
            // What libhdf5 reads them into: `char *` and `hvl_t` (H5Dget_type/H5Aget_type
            // return types marked as in memory, so compound offsets are laid out for these).
            H5Type::VarString { .. } => std::mem::size_of::<*const std::ffi::c_char>(),
            H5Type::VarLen { .. } => std::mem::size_of::<Hvl>(),
            H5Type::ObjectRef => 8,
            H5Type::RegionRef => 12,
        }
    }

    /// Whether elements hold pointers to heap data (vlen, vlen strings, anywhere inside).
    pub fn has_vlen(&self) -> bool {
        match self {
            H5Type::VarLen { .. } | H5Type::VarString { .. } => true,
            H5Type::Compound { fields, .. } => fields.iter().any(|f| f.ty.has_vlen()),
            H5Type::Array { base, .. } | H5Type::Enum { base, .. } => base.has_vlen(),
            _ => false,
        }
    }

    /// Whether elements hold object or region references anywhere inside.
    pub fn has_reference(&self) -> bool {
        match self {
            H5Type::ObjectRef | H5Type::RegionRef | H5Type::Reference { .. } => true,
            H5Type::Compound { fields, .. } => fields.iter().any(|f| f.ty.has_reference()),
            H5Type::Array { base, .. } | H5Type::VarLen { base } => base.has_reference(),
            _ => false,
        }
    }

    /// The two float members of a complex number (PyTables `r`/`i`, h5py `r`/`i`, others
    /// `real`/`imag`), or `None`.
    pub fn complex_parts(&self) -> Option<&H5Type> {
        let H5Type::Compound { size, fields } = self else {
            return None;
        };
        let [re, im] = fields.as_slice() else {
            return None;
        };
        let names_ok = matches!(
            (re.name.as_str(), im.name.as_str()),
            ("r", "i") | ("real", "imag")
        );
        let is_float = matches!(
            re.ty,
            H5Type::Float {
                size: 4 | 8 | 16,
                ..
            }
        );
        let half = re.ty.size();
        (names_ok
            && is_float
            && re.ty == im.ty
            && re.offset == 0
            && im.offset == half
            && *size == 2 * half)
            .then_some(&re.ty)
    }

    /// The numpy dtype of this type, as a string numpy's `np.dtype()` accepts after
    /// `json.loads` (a descr string like `"<i4"`, or a dict with names/formats/offsets/itemsize
    /// for compounds, and `[base, [dims]]` pairs for sub-arrays). Enums are their base
    /// integer, 8-bit bitfields `|b1` (PyTables' bool, any precision), time32 `<i4`, time64 `<f8` (as PyTables reads them).
    pub fn numpy_descr(&self) -> Result<String> {
        let mut s = String::new();
        self.write_descr(&mut s)?;
        Ok(s)
    }

    fn write_descr(&self, s: &mut String) -> Result<()> {
        let plain = |s: &mut String, order: ByteOrder, kind: char, size: usize| {
            let _ = write!(s, "\"{}{kind}{size}\"", numpy_char(order, size));
        };
        match self {
            H5Type::Int {
                size,
                signed,
                order,
            } => plain(s, *order, if *signed { 'i' } else { 'u' }, *size),
            H5Type::Float { size, order, .. } => plain(s, *order, 'f', *size),
            H5Type::Bitfield { size: 1, .. } => s.push_str("\"|b1\""),
            H5Type::Bitfield { size, order, .. } => plain(s, *order, 'u', *size),
            H5Type::Time { size: 4, order } => plain(s, *order, 'i', 4),
            H5Type::Time { size, order } => plain(s, *order, 'f', *size),
            H5Type::FixedString { size, .. } => {
                let _ = write!(s, "\"|S{size}\"");
            }
            H5Type::Opaque { size, .. } | H5Type::Reference { size } => {
                let _ = write!(s, "\"|V{size}\"");
            }
            H5Type::ObjectRef => s.push_str("\"|V8\""),
            H5Type::RegionRef => s.push_str("\"|V12\""),
            H5Type::Enum { base, .. } => base.write_descr(s)?,
            H5Type::Array { base, dims } => {
                s.push('[');
                base.write_descr(s)?;
                let dims: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
                let _ = write!(s, ", [{}]]", dims.join(", "));
            }
            H5Type::Compound { size, fields } => {
                if let Some(H5Type::Float {
                    size: half, order, ..
                }) = self.complex_parts()
                {
                    plain(s, *order, 'c', 2 * half);
                    return Ok(());
                }
                let names: Vec<String> = fields.iter().map(|f| json_string(&f.name)).collect();
                let mut formats = Vec::new();
                for f in fields {
                    let mut one = String::new();
                    f.ty.write_descr(&mut one)?;
                    formats.push(one);
                }
                let offsets: Vec<String> = fields.iter().map(|f| f.offset.to_string()).collect();
                let _ = write!(
                    s,
                    "{{\"names\": [{}], \"formats\": [{}], \"offsets\": [{}], \"itemsize\": {size}}}",
                    names.join(", "),
                    formats.join(", "),
                    offsets.join(", ")
                );
            }
            H5Type::VarLen { .. } | H5Type::VarString { .. } => {
                return Err(Error::unsupported(
                    "variable-length data has no fixed numpy layout (read it with read_vlen)",
                ))
            }
        }
        Ok(())
    }

    /// The sciio/numpy dtype of this type (the same mapping as [`H5Type::numpy_descr`]): enums
    /// are their base integer, 8-bit bitfields `b1` (PyTables' bool), time32 `i4`, time64 `f8`, complex
    /// compounds `c8`/`c16`, compounds records at their exact offsets, arrays sub-arrays;
    /// opaque types and references are raw bytes (`V<n>`).
    pub fn to_dtype(&self) -> Result<DType> {
        self.map_dtype(false)
    }

    /// The numpy dtype data of this type has once PyTables or h5py read it as an array: the
    /// mapping of [`H5Type::to_dtype`], refusing what numpy has no layout for — integers and
    /// bitfields of other than 1, 2, 4 or 8 bytes, floats of other than 2, 4 or 8 bytes (or an
    /// x87 long double in 12 or 16), H5T_TIME of other than 4 or 8 bytes, opaque types,
    /// references and variable-length data ("... has no fixed-size numpy dtype") — and
    /// compounds whose fields do not fit their record.
    ///
    /// ```
    /// use sciio_h5native::{ByteOrder, H5Type};
    /// let i3 = H5Type::Int { size: 3, signed: true, order: ByteOrder::Little };
    /// assert!(i3.to_dtype().is_ok()); // raw: a 3-byte integer
    /// assert!(i3.to_numpy_dtype().is_err()); // numpy has no such integer
    /// assert_eq!(H5Type::ObjectRef.to_numpy_dtype().unwrap_err().message(),
    ///            "an object reference has no fixed-size numpy dtype");
    /// ```
    pub fn to_numpy_dtype(&self) -> Result<DType> {
        self.map_dtype(true)
    }

    /// A dataset of this type as numpy reads it: the element dtype
    /// ([`H5Type::to_numpy_dtype`]) and the dimensions to append to the dataset's shape (an
    /// array type at the top becomes trailing dimensions).
    pub fn to_numpy_element(&self) -> Result<(DType, &[usize])> {
        match self {
            H5Type::Array { base, dims } => Ok((base.to_numpy_dtype()?, dims)),
            other => Ok((other.to_numpy_dtype()?, &[])),
        }
    }

    /// The one HDF5 type -> dtype mapping; `numpy`: refuse what numpy has no layout for.
    fn map_dtype(&self, numpy: bool) -> Result<DType> {
        use sciio_core::ScalarKind as K;
        let order = |o: &ByteOrder| match o {
            ByteOrder::Little => CoreOrder::Little,
            ByteOrder::Big => CoreOrder::Big,
            ByteOrder::NotApplicable => CoreOrder::NotApplicable,
        };
        let small =
            |n: usize| u8::try_from(n).map_err(|_| Error::unsupported(format!("{n}-byte number")));
        let scalar = |kind: K, o: &ByteOrder| Ok(DType::Scalar(ScalarType::new(kind, order(o))));
        let numbered = |size: usize| matches!(size, 1 | 2 | 4 | 8);
        if numpy {
            let held = match self {
                H5Type::Int { size, .. } => numbered(*size),
                H5Type::Float {
                    size, precision, ..
                } => matches!(size, 2 | 4 | 8) || matches!((size, precision), (12 | 16, 64 | 80)),
                H5Type::Bitfield { size, .. } => numbered(*size),
                H5Type::Time { size, .. } => matches!(size, 4 | 8),
                H5Type::Opaque { .. }
                | H5Type::Reference { .. }
                | H5Type::ObjectRef
                | H5Type::RegionRef
                | H5Type::VarLen { .. }
                | H5Type::VarString { .. } => false,
                _ => true,
            };
            if !held {
                return Err(Error::unsupported(format!(
                    "{} {} no fixed-size numpy dtype",
                    self.words(),
                    if matches!(self, H5Type::VarLen { .. }) {
                        "have"
                    } else {
                        "has"
                    }
                )));
            }
        }
        match self {
            H5Type::Int {
                size,
                signed: true,
                order: o,
            } => scalar(K::Int(small(*size)?), o),
            H5Type::Int { size, order: o, .. } => scalar(K::UInt(small(*size)?), o),
            H5Type::Float { size, order: o, .. } => scalar(K::Float(small(*size)?), o),
            H5Type::Bitfield { size: 1, .. } => scalar(K::Bool, &ByteOrder::NotApplicable),
            H5Type::Bitfield { size, order: o, .. } => scalar(K::UInt(small(*size)?), o),
            H5Type::Time { size: 4, order: o } => scalar(K::Int(4), o),
            H5Type::Time { size, order: o } => scalar(K::Float(small(*size)?), o),
            H5Type::FixedString { size, .. } => scalar(K::Bytes(*size), &ByteOrder::NotApplicable),
            H5Type::Opaque { size, .. } | H5Type::Reference { size } => {
                scalar(K::Void(*size), &ByteOrder::NotApplicable)
            }
            H5Type::ObjectRef => scalar(K::Void(8), &ByteOrder::NotApplicable),
            H5Type::RegionRef => scalar(K::Void(12), &ByteOrder::NotApplicable),
            H5Type::Enum { base, .. } => base.map_dtype(numpy),
            H5Type::Array { base, dims } => Ok(DType::SubArray(
                Box::new(base.map_dtype(numpy)?),
                dims.clone(),
            )),
            H5Type::Compound { size, fields } => {
                if let Some(H5Type::Float {
                    size: half,
                    order: o,
                    ..
                }) = self.complex_parts()
                {
                    return scalar(K::Complex(small(2 * half)?), o);
                }
                let fields = fields
                    .iter()
                    .map(|f| {
                        Ok(CoreField::new(
                            f.name.clone(),
                            f.offset,
                            f.ty.map_dtype(numpy)?,
                        ))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let dtype = DType::Record(RecordType {
                    fields,
                    itemsize: *size,
                });
                if numpy {
                    dtype.validate()?;
                }
                Ok(dtype)
            }
            H5Type::VarLen { .. } | H5Type::VarString { .. } => Err(Error::unsupported(
                "variable-length data has no fixed numpy layout (read it with read_vlen)",
            )),
        }
    }

    /// The type in words, for messages about what it cannot be.
    fn words(&self) -> &'static str {
        match self {
            H5Type::VarString { .. } => "a variable-length string",
            H5Type::VarLen { .. } => "variable-length sequences",
            H5Type::ObjectRef => "an object reference",
            H5Type::RegionRef => "a region reference",
            H5Type::Reference { .. } => "a reference",
            H5Type::Opaque { .. } => "an opaque type",
            _ => "this HDF5 type",
        }
    }
}

/// Writes `s` as a JSON string literal.
pub(crate) fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
