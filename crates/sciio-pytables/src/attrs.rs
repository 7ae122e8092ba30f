//! PyTables' view of HDF5 attributes: system attributes, `FILTERS`, and pickled values, which
//! are exposed as raw bytes marked as pickle and never executed.

use sciio_core::Result;
use sciio_hdf5::{AttrValue, Attribute, Element, ElementData, File, H5Type, RawData, VlenData};

/// An attribute's value as PyTables would present it (minus unpickling).
#[derive(Debug, Clone, PartialEq)]
pub enum PtAttrValue {
    /// Fixed-layout data in the file's byte layout (numbers, fixed strings, compounds...).
    Data(RawData),
    /// Variable-length strings or sequences.
    Vlen(VlenData),
    /// An attribute with a null dataspace.
    Empty(H5Type),
    /// A string PyTables would `pickle.loads()`: the pickle bytes, never executed.
    Pickle(Vec<u8>),
    /// Values decoded element by element: object or region references, dereferenced
    /// ([`Element::Reference`]), or compounds/arrays with variable-length members.
    Elements(ElementData),
}

/// One attribute of a PyTables node.
#[derive(Debug, Clone, PartialEq)]
pub struct PtAttr {
    /// Name.
    pub name: String,
    /// Value.
    pub value: PtAttrValue,
    /// Whether PyTables counts it as a system attribute (`CLASS`, `TITLE`, `FIELD_0_NAME`...).
    pub system: bool,
}

impl PtAttr {
    /// The value as text when it is a (scalar or 1-element) fixed or vlen string.
    pub fn as_str(&self) -> Option<String> {
        match &self.value {
            PtAttrValue::Data(d) => raw_string(d),
            PtAttrValue::Vlen(v)
                if matches!(v.ty, H5Type::VarString { .. }) && v.items.len() == 1 =>
            {
                Some(String::from_utf8_lossy(&v.items[0]).into_owned())
            }
            _ => None,
        }
    }

    /// The value as an integer when it is a scalar (or 1-element) integer.
    pub fn as_i64(&self) -> Option<i64> {
        let PtAttrValue::Data(d) = &self.value else {
            return None;
        };
        let H5Type::Int {
            size,
            signed,
            order,
        } = d.ty
        else {
            return None;
        };
        if d.bytes.len() != size || size > 8 {
            return None;
        }
        let mut b = d.bytes.clone();
        if order == sciio_hdf5::ByteOrder::Big {
            b.reverse();
        }
        let mut v: u64 = 0;
        for &x in b.iter().rev() {
            v = (v << 8) | u64::from(x);
        }
        let bits = size * 8;
        Some(if signed && bits < 64 && (v >> (bits - 1)) & 1 == 1 {
            (v | (!0u64 << bits)) as i64
        } else {
            v as i64
        })
    }
}

fn raw_string(d: &RawData) -> Option<String> {
    if !matches!(d.ty, H5Type::FixedString { .. }) || d.shape.iter().product::<usize>() != 1 {
        return None;
    }
    let end = d
        .bytes
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(d.bytes.len());
    Some(String::from_utf8_lossy(&d.bytes[..end]).into_owned())
}

/// Names PyTables treats as system attributes (attributeset.py's SYS_ATTRS and prefixes).
pub fn is_system_attr(name: &str) -> bool {
    const SYS: &[&str] = &[
        "CLASS",
        "VERSION",
        "TITLE",
        "NROWS",
        "EXTDIM",
        "ENCODING",
        "PYTABLES_FORMAT_VERSION",
        "FLAVOR",
        "FILTERS",
        "AUTO_INDEX",
        "DIRTY",
        "NODE_TYPE",
        "NODE_TYPE_VERSION",
        "PSEUDOATOM",
    ];
    SYS.contains(&name) || name.starts_with("FIELD_") || name.starts_with("COLUMN_")
}

/// Whether PyTables would try to unpickle this scalar string (attributeset.py: a bytes scalar
/// ending in `.`, except `0`/`0.`), narrowed to values that start like a pickle.
fn looks_pickled(bytes: &[u8]) -> bool {
    let trimmed = trim_nul(bytes);
    if trimmed.len() < 2 || !trimmed.ends_with(b".") || trimmed == b"0." {
        return false;
    }
    // Protocol 2+ starts with PROTO (0x80); protocol 0/1 with an opcode such as MARK '(',
    // GLOBAL 'c', INT 'I', FLOAT 'F', STRING 'S', UNICODE 'V', NONE 'N', LONG 'L', EMPTY_*.
    matches!(
        trimmed[0],
        0x80 | b'('
            | b'c'
            | b'I'
            | b'F'
            | b'S'
            | b'V'
            | b'N'
            | b'L'
            | b']'
            | b'}'
            | b')'
            | b'd'
            | b'l'
            | b'K'
            | b'J'
            | b'M'
            | b'U'
            | b'X'
            | b'G'
    )
}

fn trim_nul(b: &[u8]) -> &[u8] {
    let end = b.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
    &b[..end]
}

/// Converts libhdf5-level attributes of an object of `file` to PyTables attributes;
/// references are dereferenced to their targets' paths.
pub(crate) fn from_hdf5(file: &File, attrs: Vec<Attribute>) -> Result<Vec<PtAttr>> {
    attrs
        .into_iter()
        .map(|a| {
            let mut a = convert(a);
            if let PtAttrValue::Data(d) = &mut a.value {
                if matches!(d.ty, H5Type::ObjectRef | H5Type::RegionRef) {
                    a.value = PtAttrValue::Elements(dereference_all(file, d)?);
                } else {
                    // PyTables itself refuses H5T_TIME attributes; sciio reads time64 ones as
                    // its columns read (float seconds), which their `f8` dtype promises.
                    crate::time::convert_time64(d);
                }
            }
            Ok(a)
        })
        .collect()
}

/// Dereferences every reference of `refs` (an array of object or region references).
fn dereference_all(file: &File, refs: &RawData) -> Result<ElementData> {
    let elements = refs
        .bytes
        .chunks_exact(refs.ty.size().max(1))
        .map(|r| file.dereference(&refs.ty, r).map(Element::Reference))
        .collect::<Result<Vec<_>>>()?;
    Ok(ElementData {
        ty: refs.ty.clone(),
        shape: refs.shape.clone(),
        elements,
    })
}

pub(crate) fn convert(a: Attribute) -> PtAttr {
    let system = is_system_attr(&a.name);
    let value = match a.value {
        AttrValue::Raw(d)
            if matches!(d.ty, H5Type::FixedString { .. })
                && d.shape.is_empty()
                && looks_pickled(&d.bytes) =>
        {
            PtAttrValue::Pickle(trim_nul(&d.bytes).to_vec())
        }
        AttrValue::Raw(d) => PtAttrValue::Data(d),
        AttrValue::Vlen(v) => PtAttrValue::Vlen(v),
        AttrValue::Empty(t) => PtAttrValue::Empty(t),
        AttrValue::Elements(e) => PtAttrValue::Elements(e),
    };
    PtAttr {
        name: a.name,
        value,
        system,
    }
}

/// PyTables' `Filters`, unpacked from the `FILTERS` attribute (a packed 64-bit integer:
/// byte 0 complevel, byte 1 complib id, byte 2 flags shuffle=1 fletcher32=2 rounding=4
/// bitshuffle=8, byte 3 least significant digit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtFilters {
    /// Compression level 0–9.
    pub complevel: u8,
    /// Compression library (`zlib`, `lzo`, `bzip2`, `blosc`, `blosc2`, `blosc:lz4`...), if any.
    pub complib: Option<String>,
    /// Byte shuffle.
    pub shuffle: bool,
    /// Bit shuffle.
    pub bitshuffle: bool,
    /// Fletcher-32 checksum.
    pub fletcher32: bool,
    /// Least significant digit for lossy rounding, if enabled.
    pub least_significant_digit: Option<i8>,
}

/// PyTables' `all_complibs`, in id order (id = index + 1).
const COMPLIBS: &[&str] = &[
    "zlib",
    "lzo",
    "bzip2",
    "blosc",
    "blosc2",
    "blosc:blosclz",
    "blosc:lz4",
    "blosc:lz4hc",
    "blosc:zlib",
    "blosc:zstd",
    "blosc2:blosclz",
    "blosc2:lz4",
    "blosc2:lz4hc",
    "blosc2:zlib",
    "blosc2:zstd",
];

impl PtFilters {
    /// Unpacks the `FILTERS` value.
    ///
    /// ```
    /// let f = sciio_pytables::PtFilters::unpack(0x30109);
    /// assert_eq!((f.complevel, f.complib.as_deref(), f.shuffle, f.fletcher32), (9, Some("zlib"), true, true));
    /// ```
    pub fn unpack(packed: i64) -> PtFilters {
        let byte = |i: u32| ((packed >> (8 * i)) & 0xFF) as u8;
        let complevel = byte(0);
        let complib = (complevel > 0).then(|| {
            let id = byte(1) as usize;
            COMPLIBS
                .get(id.wrapping_sub(1))
                .map_or_else(|| format!("unknown({id})"), |s| s.to_string())
        });
        let flags = byte(2);
        PtFilters {
            complevel,
            complib,
            shuffle: flags & 1 != 0,
            fletcher32: flags & 2 != 0,
            bitshuffle: flags & 8 != 0,
            least_significant_digit: (flags & 4 != 0).then_some(byte(3) as i8),
        }
    }
}
