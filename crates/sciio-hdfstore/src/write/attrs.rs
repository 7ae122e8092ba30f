//! Attribute values as PyTables stores the Python objects pandas sets: text, pickles, flags
//! and integers (used by the table and fixed writers alike).

use sciio_core::Result;
use sciio_pickle::Value;
use sciio_pytables::sciio_hdf5::{AttrValue, ByteOrder, CharSet, H5Type, RawData};

/// A text attribute, as PyTables stores a Python `str`: a UTF-8 fixed string.
pub(super) fn text(s: &str) -> AttrValue {
    string_attr(s.as_bytes(), CharSet::Utf8)
}

pub(super) fn string_attr(b: &[u8], charset: CharSet) -> AttrValue {
    if b.is_empty() {
        return AttrValue::Empty(H5Type::FixedString { size: 1, charset });
    }
    AttrValue::Raw(RawData {
        ty: H5Type::FixedString {
            size: b.len(),
            charset,
        },
        shape: vec![],
        bytes: b.to_vec(),
    })
}

/// A pickled attribute, as PyTables stores other Python objects: the protocol-0 pickle as an
/// ASCII string (PyTables unpickles byte strings ending in `.`).
pub(super) fn pickled(v: &Value) -> Result<AttrValue> {
    Ok(string_attr(&sciio_pickle::to_protocol0(v)?, CharSet::Ascii))
}

/// A `tz` attribute: a zone name as text, a `datetime.timezone` pickled.
pub(super) fn tz_attr(tz: &Value) -> Result<AttrValue> {
    match tz {
        Value::Str(s) => Ok(text(s)),
        other => pickled(other),
    }
}

pub(super) fn flag(b: bool) -> AttrValue {
    AttrValue::Raw(RawData {
        ty: H5Type::Bitfield {
            size: 1,
            precision: 8,
            order: ByteOrder::Little,
        },
        shape: vec![],
        bytes: vec![u8::from(b)],
    })
}

pub(super) fn i64_attr(v: i64) -> AttrValue {
    AttrValue::Raw(RawData {
        ty: H5Type::Int {
            size: 8,
            signed: true,
            order: ByteOrder::Little,
        },
        shape: vec![],
        bytes: v.to_le_bytes().to_vec(),
    })
}
