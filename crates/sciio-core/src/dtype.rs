//! The numpy dtype model: everything numpy's `dtype.descr` can express, parsed from and printed
//! to the exact strings and Python literals numpy uses (`'<f8'`, `'<M8[25s]'`,
//! `[('x', '<f8'), ('', '|V4')]`...).
//!
//! ```
//! use sciio_core::{ByteOrder, DType, ScalarKind};
//! let dt = DType::from_typestr(">i4").unwrap();
//! assert_eq!(dt.itemsize(), 4);
//! assert_eq!(dt.to_typestr(), ">i4");
//! assert!(!dt.is_native());
//! assert_eq!(dt.to_native().to_typestr(), "<i4");
//! assert_eq!(DType::from_typestr("u1").unwrap().to_typestr(), "|u1");
//! ```

use std::collections::HashSet;
use std::fmt;

use crate::error::{Error, Result};
use crate::pyliteral::PyLiteral;

/// The byte order of a scalar type, as numpy's first typestr character says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// `<`
    Little,
    /// `>`
    Big,
    /// `|`: one-byte and non-orderable types (bool, int8, uint8, S, V, O).
    NotApplicable,
}

impl ByteOrder {
    /// The byte order of this machine (`=` in numpy).
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "big") {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };

    /// The typestr character: `<`, `>` or `|`.
    pub fn as_char(self) -> char {
        match self {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        }
    }
}

/// The base unit of a datetime64/timedelta64 type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeBase {
    /// No unit (`<M8`): numpy's generic unit.
    Generic,
    /// `Y`
    Years,
    /// `M`
    Months,
    /// `W`
    Weeks,
    /// `D`
    Days,
    /// `h`
    Hours,
    /// `m`
    Minutes,
    /// `s`
    Seconds,
    /// `ms`
    Millis,
    /// `us`
    Micros,
    /// `ns`
    Nanos,
    /// `ps`
    Picos,
    /// `fs`
    Femtos,
    /// `as`
    Attos,
}

impl TimeBase {
    /// Every unit numpy knows, generic first.
    pub const ALL: [TimeBase; 14] = [
        TimeBase::Generic,
        TimeBase::Years,
        TimeBase::Months,
        TimeBase::Weeks,
        TimeBase::Days,
        TimeBase::Hours,
        TimeBase::Minutes,
        TimeBase::Seconds,
        TimeBase::Millis,
        TimeBase::Micros,
        TimeBase::Nanos,
        TimeBase::Picos,
        TimeBase::Femtos,
        TimeBase::Attos,
    ];

    /// numpy's abbreviation (`""` for generic).
    pub fn symbol(self) -> &'static str {
        match self {
            TimeBase::Generic => "",
            TimeBase::Years => "Y",
            TimeBase::Months => "M",
            TimeBase::Weeks => "W",
            TimeBase::Days => "D",
            TimeBase::Hours => "h",
            TimeBase::Minutes => "m",
            TimeBase::Seconds => "s",
            TimeBase::Millis => "ms",
            TimeBase::Micros => "us",
            TimeBase::Nanos => "ns",
            TimeBase::Picos => "ps",
            TimeBase::Femtos => "fs",
            TimeBase::Attos => "as",
        }
    }

    fn from_symbol(s: &str) -> Option<TimeBase> {
        TimeBase::ALL
            .into_iter()
            .find(|b| *b != TimeBase::Generic && b.symbol() == s)
            .or(if s == "μs" {
                Some(TimeBase::Micros)
            } else {
                None
            })
    }
}

/// A datetime64/timedelta64 unit: a base and a multiple (`[25s]` is 25 × seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeUnit {
    /// The base unit.
    pub base: TimeBase,
    /// How many base units one tick is (1 for plain units; 1 for generic).
    pub multiple: u32,
}

impl TimeUnit {
    /// A plain unit (multiple 1).
    pub const fn new(base: TimeBase) -> Self {
        TimeUnit { base, multiple: 1 }
    }

    /// The generic unit (`<M8`).
    pub const GENERIC: TimeUnit = TimeUnit::new(TimeBase::Generic);

    /// The bracketed suffix numpy prints: `""`, `"[ns]"`, `"[25s]"`.
    pub fn suffix(&self) -> String {
        match (self.base, self.multiple) {
            (TimeBase::Generic, _) => String::new(),
            (base, 1) => format!("[{}]", base.symbol()),
            (base, n) => format!("[{n}{}]", base.symbol()),
        }
    }

    fn parse_bracket(inner: &str) -> Option<TimeUnit> {
        let split = inner
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(inner.len());
        let (digits, symbol) = inner.split_at(split);
        let multiple = if digits.is_empty() {
            1
        } else {
            digits.parse::<u32>().ok().filter(|m| *m > 0)?
        };
        let base = TimeBase::from_symbol(symbol)?;
        Some(TimeUnit { base, multiple })
    }
}

/// What a scalar dtype is, with its size (bytes, or characters for `Unicode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    /// `b1`
    Bool,
    /// `i1`, `i2`, `i4`, `i8` (size in bytes).
    Int(u8),
    /// `u1`, `u2`, `u4`, `u8` (size in bytes).
    UInt(u8),
    /// `f2`, `f4`, `f8`, and the long doubles `f12`/`f16` (x86 80-bit extended, padded).
    Float(u8),
    /// `c8`, `c16`, and the long-double complexes `c24`/`c32` (size in bytes, both parts).
    Complex(u8),
    /// `S<n>`: n bytes, NUL-padded.
    Bytes(usize),
    /// `U<n>`: n UCS-4 characters (4n bytes), NUL-padded.
    Unicode(usize),
    /// `V<n>`: n raw bytes.
    Void(usize),
    /// `M8[unit]`: datetime64, 8 bytes.
    DateTime(TimeUnit),
    /// `m8[unit]`: timedelta64, 8 bytes.
    TimeDelta(TimeUnit),
    /// `O`: Python object pointers. Carried only so that its data can be refused.
    Object,
}

impl ScalarKind {
    /// Bytes of one element.
    pub fn itemsize(&self) -> usize {
        match *self {
            ScalarKind::Bool => 1,
            ScalarKind::Int(n) | ScalarKind::UInt(n) | ScalarKind::Float(n) => usize::from(n),
            ScalarKind::Complex(n) => usize::from(n),
            ScalarKind::Bytes(n) | ScalarKind::Void(n) => n,
            ScalarKind::Unicode(n) => n.saturating_mul(4),
            ScalarKind::DateTime(_) | ScalarKind::TimeDelta(_) | ScalarKind::Object => 8,
        }
    }

    /// Whether the type has a byte order (numpy prints `|` for those that do not).
    pub fn is_orderable(&self) -> bool {
        match self {
            ScalarKind::Bool | ScalarKind::Bytes(_) | ScalarKind::Void(_) | ScalarKind::Object => {
                false
            }
            ScalarKind::Int(n) | ScalarKind::UInt(n) => *n > 1,
            _ => true,
        }
    }

    /// The numpy kind character (`b i u f c S U V M m O`).
    pub fn kind_char(&self) -> char {
        match self {
            ScalarKind::Bool => 'b',
            ScalarKind::Int(_) => 'i',
            ScalarKind::UInt(_) => 'u',
            ScalarKind::Float(_) => 'f',
            ScalarKind::Complex(_) => 'c',
            ScalarKind::Bytes(_) => 'S',
            ScalarKind::Unicode(_) => 'U',
            ScalarKind::Void(_) => 'V',
            ScalarKind::DateTime(_) => 'M',
            ScalarKind::TimeDelta(_) => 'm',
            ScalarKind::Object => 'O',
        }
    }

    /// The size of the unit a byte swap reverses (0: nothing to swap).
    fn swap_unit(&self) -> usize {
        match *self {
            ScalarKind::Complex(n) => usize::from(n) / 2,
            ScalarKind::Unicode(_) => 4,
            ScalarKind::Bytes(_) | ScalarKind::Void(_) | ScalarKind::Bool | ScalarKind::Object => 0,
            ref k => k.itemsize(),
        }
    }
}

/// A scalar dtype: a kind and a byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScalarType {
    /// What it is.
    pub kind: ScalarKind,
    /// Its byte order; [`ByteOrder::NotApplicable`] exactly when the kind is not orderable
    /// ([`ScalarType::new`] keeps this invariant).
    pub order: ByteOrder,
}

impl ScalarType {
    /// A scalar type; the order is normalised like numpy does (`|` for non-orderable kinds,
    /// native for an orderable kind given `|`).
    pub fn new(kind: ScalarKind, order: ByteOrder) -> Self {
        let order = match (kind.is_orderable(), order) {
            (false, _) => ByteOrder::NotApplicable,
            (true, ByteOrder::NotApplicable) => ByteOrder::NATIVE,
            (true, o) => o,
        };
        ScalarType { kind, order }
    }

    /// A native-order scalar type.
    pub fn native(kind: ScalarKind) -> Self {
        Self::new(kind, ByteOrder::NATIVE)
    }

    /// numpy's `dtype.str`: `'<f8'`, `'|S5'`, `'<U3'`, `'<M8[25s]'`, `'|O'`.
    pub fn typestr(&self) -> String {
        let o = self.order.as_char();
        let k = self.kind.kind_char();
        match self.kind {
            ScalarKind::Object => format!("{o}O"),
            ScalarKind::Unicode(n) => format!("{o}U{n}"),
            ScalarKind::DateTime(u) | ScalarKind::TimeDelta(u) => {
                format!("{o}{k}8{}", u.suffix())
            }
            ref kind => format!("{o}{k}{}", kind.itemsize()),
        }
    }
}

/// One field of a structured dtype.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// The field name.
    pub name: String,
    /// numpy's optional title (an alias key; `(('title', 'name'), ...)` in the descr).
    pub title: Option<String>,
    /// Byte offset of the field inside the record.
    pub offset: usize,
    /// The field's type (a scalar, a nested record, or a subarray).
    pub dtype: DType,
}

impl Field {
    /// A field without title.
    pub fn new(name: impl Into<String>, offset: usize, dtype: DType) -> Self {
        Field {
            name: name.into(),
            title: None,
            offset,
            dtype,
        }
    }
}

/// A structured (record) dtype: fields at explicit offsets within `itemsize` bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordType {
    /// The fields in definition order.
    pub fields: Vec<Field>,
    /// Bytes of one record (at least the end of the last field; more means trailing padding).
    pub itemsize: usize,
}

impl RecordType {
    /// A packed record: fields one after another, no padding (numpy's list form).
    pub fn packed(fields: impl IntoIterator<Item = (String, DType)>) -> Self {
        let mut offset = 0;
        let fields: Vec<Field> = fields
            .into_iter()
            .map(|(name, dtype)| {
                let field = Field::new(name, offset, dtype);
                offset += field.dtype.itemsize();
                field
            })
            .collect();
        RecordType {
            fields,
            itemsize: offset,
        }
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A numpy dtype.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DType {
    /// A scalar.
    Scalar(ScalarType),
    /// A structured record.
    Record(RecordType),
    /// A fixed-shape subarray of a base type (only as a record field in files).
    SubArray(Box<DType>, Vec<usize>),
}

impl From<ScalarType> for DType {
    fn from(s: ScalarType) -> Self {
        DType::Scalar(s)
    }
}

impl From<RecordType> for DType {
    fn from(r: RecordType) -> Self {
        DType::Record(r)
    }
}

impl fmt::Display for DType {
    /// numpy's `descr`: the typestr for scalars, the Python literal for records.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DType::Scalar(s) => f.write_str(&s.typestr()),
            _ => match self.descr_literal() {
                Ok(lit) => f.write_str(&lit.repr()),
                Err(_) => write!(f, "{self:?}"),
            },
        }
    }
}

/// Largest itemsize accepted from a descr (numpy's own limit is `int` sized).
const MAX_ITEMSIZE: usize = i32::MAX as usize;

impl DType {
    /// A native-order scalar dtype.
    pub fn scalar(kind: ScalarKind) -> Self {
        DType::Scalar(ScalarType::native(kind))
    }

    /// Bytes of one element.
    pub fn itemsize(&self) -> usize {
        match self {
            DType::Scalar(s) => s.kind.itemsize(),
            DType::Record(r) => r.itemsize,
            DType::SubArray(base, shape) => shape
                .iter()
                .fold(base.itemsize(), |acc, d| acc.saturating_mul(*d)),
        }
    }

    /// The scalar type, if this is a scalar.
    pub fn as_scalar(&self) -> Option<&ScalarType> {
        match self {
            DType::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The record type, if this is structured.
    pub fn as_record(&self) -> Option<&RecordType> {
        match self {
            DType::Record(r) => Some(r),
            _ => None,
        }
    }

    /// Whether this type or any field within holds Python objects (whose data sciio refuses).
    pub fn has_object(&self) -> bool {
        match self {
            DType::Scalar(s) => s.kind == ScalarKind::Object,
            DType::Record(r) => r.fields.iter().any(|f| f.dtype.has_object()),
            DType::SubArray(base, _) => base.has_object(),
        }
    }

    /// Whether every scalar within is in native order (or has no order).
    pub fn is_native(&self) -> bool {
        match self {
            DType::Scalar(s) => s.order != ByteOrder::opposite(ByteOrder::NATIVE),
            DType::Record(r) => r.fields.iter().all(|f| f.dtype.is_native()),
            DType::SubArray(base, _) => base.is_native(),
        }
    }

    /// The same type with every orderable scalar set to `order` (`|` means native).
    pub fn with_order(&self, order: ByteOrder) -> DType {
        match self {
            DType::Scalar(s) => DType::Scalar(ScalarType::new(s.kind, order)),
            DType::Record(r) => DType::Record(RecordType {
                fields: r
                    .fields
                    .iter()
                    .map(|f| Field {
                        dtype: f.dtype.with_order(order),
                        ..f.clone()
                    })
                    .collect(),
                itemsize: r.itemsize,
            }),
            DType::SubArray(base, shape) => {
                DType::SubArray(Box::new(base.with_order(order)), shape.clone())
            }
        }
    }

    /// The same type in native byte order.
    pub fn to_native(&self) -> DType {
        self.with_order(ByteOrder::NATIVE)
    }

    /// Parses a numpy typestr: `'<f8'`, `'|b1'`, `'>U3'`, `'<M8[ns]'`, `'|V16'`, `'|O'`, and
    /// the one-character codes (`'d'`, `'?'`, `'<i'`...). Orders `=`/absent mean native.
    pub fn from_typestr(s: &str) -> Result<DType> {
        parse_typestr(s)
            .map(DType::Scalar)
            .ok_or_else(|| Error::format(format!("data type {s:?} not understood")))
    }

    /// numpy's `dtype.str`: the typestr for scalars, `'|V<itemsize>'` for records/subarrays.
    pub fn to_typestr(&self) -> String {
        match self {
            DType::Scalar(s) => s.typestr(),
            _ => format!("|V{}", self.itemsize()),
        }
    }

    /// The descr numpy stores in an NPY header (`dtype_to_descr`): the typestr for a
    /// non-structured dtype, `dtype.descr` (a list of field tuples with `('', '|V<n>')` padding
    /// entries) for a structured one. Fails for overlapping or out-of-order fields, which numpy
    /// cannot describe either.
    ///
    /// ```
    /// use sciio_core::{DType, PyLiteral};
    /// let descr = "[('a', '<f8'), (('T', 'b'), '|u1', (2,)), ('', '|V5')]";
    /// let dt = DType::parse_descr(&PyLiteral::parse(descr).unwrap()).unwrap();
    /// assert_eq!(dt.itemsize(), 15);
    /// assert_eq!(dt.descr_literal().unwrap().repr(), descr);
    /// ```
    pub fn descr_literal(&self) -> Result<PyLiteral> {
        match self {
            DType::Scalar(s) => Ok(PyLiteral::Str(s.typestr())),
            DType::Record(r) => array_descr(r),
            DType::SubArray(base, shape) => Ok(PyLiteral::Tuple(vec![
                base.descr_literal()?,
                shape_literal(shape),
            ])),
        }
    }

    /// Parses the descr of an NPY header (`descr_to_dtype`): a typestr, a `(descr, shape)`
    /// subarray, or a list of fields where `('', '|V<n>')` entries are padding.
    pub fn parse_descr(descr: &PyLiteral) -> Result<DType> {
        let dt = parse_descr_inner(descr)?;
        if dt.itemsize() > MAX_ITEMSIZE {
            return Err(Error::format(format!(
                "dtype itemsize {} is larger than numpy allows",
                dt.itemsize()
            )));
        }
        Ok(dt)
    }

    /// Checks the invariants numpy guarantees: fields inside the record, unique names,
    /// sizes that fit. Types built by hand should pass this before being written.
    pub fn validate(&self) -> Result<()> {
        match self {
            DType::Scalar(s) => {
                let ok = match s.kind {
                    ScalarKind::Int(n) | ScalarKind::UInt(n) => matches!(n, 1 | 2 | 4 | 8),
                    ScalarKind::Float(n) => matches!(n, 2 | 4 | 8 | 12 | 16),
                    ScalarKind::Complex(n) => matches!(n, 8 | 16 | 24 | 32),
                    ScalarKind::Unicode(n) => n <= MAX_ITEMSIZE / 4,
                    _ => true,
                };
                if !ok || s.order != ScalarType::new(s.kind, s.order).order {
                    return Err(Error::invalid_input(format!("invalid scalar type {s:?}")));
                }
                Ok(())
            }
            DType::Record(r) => {
                let mut seen = HashSet::new();
                for f in &r.fields {
                    f.dtype.validate()?;
                    let end = f.offset.checked_add(f.dtype.itemsize());
                    if end.is_none_or(|e| e > r.itemsize) {
                        return Err(Error::invalid_input(format!(
                            "field {:?} at offset {} does not fit in a record of {} bytes",
                            f.name, f.offset, r.itemsize
                        )));
                    }
                    if !seen.insert(f.name.as_str()) {
                        return Err(Error::invalid_input(format!(
                            "duplicate field name {:?}",
                            f.name
                        )));
                    }
                }
                Ok(())
            }
            DType::SubArray(base, shape) => {
                base.validate()?;
                shape
                    .iter()
                    .try_fold(base.itemsize(), |acc, d| acc.checked_mul(*d))
                    .filter(|n| *n <= MAX_ITEMSIZE)
                    .map(|_| ())
                    .ok_or_else(|| Error::invalid_input("subarray too large"))
            }
        }
    }
}

impl ByteOrder {
    fn opposite(self) -> ByteOrder {
        match self {
            ByteOrder::Little => ByteOrder::Big,
            ByteOrder::Big => ByteOrder::Little,
            ByteOrder::NotApplicable => ByteOrder::NotApplicable,
        }
    }
}

/// Reverses the byte order of `count` elements of `dtype` stored contiguously in `bytes`
/// (every orderable scalar within, records and subarrays included).
pub fn byteswap_in_place(dtype: &DType, bytes: &mut [u8]) {
    let itemsize = dtype.itemsize();
    if itemsize == 0 {
        return;
    }
    for item in bytes.chunks_exact_mut(itemsize) {
        swap_one(dtype, item);
    }
}

fn swap_one(dtype: &DType, item: &mut [u8]) {
    match dtype {
        DType::Scalar(s) => {
            let unit = s.kind.swap_unit();
            if unit > 1 {
                for part in item.chunks_exact_mut(unit) {
                    part.reverse();
                }
            }
        }
        DType::Record(r) => {
            for f in &r.fields {
                let size = f.dtype.itemsize();
                if let Some(part) = item.get_mut(f.offset..f.offset.saturating_add(size)) {
                    swap_one(&f.dtype, part);
                }
            }
        }
        DType::SubArray(base, _) => byteswap_in_place(base, item),
    }
}

/// Puts `bytes` (whole items of `dtype`) into native byte order in place: only the scalars
/// not native already are swapped, for a record may mix byte orders (`[('a', '<f8'),
/// ('b', '>f8')]`) where [`byteswap_in_place`] swaps every field.
pub fn to_native_in_place(dtype: &DType, bytes: &mut [u8]) {
    let itemsize = dtype.itemsize();
    if itemsize == 0 || dtype.is_native() {
        return;
    }
    for item in bytes.chunks_exact_mut(itemsize) {
        native_one(dtype, item);
    }
}

fn native_one(dtype: &DType, item: &mut [u8]) {
    match dtype {
        DType::Scalar(_) if dtype.is_native() => {}
        DType::Scalar(_) => swap_one(dtype, item),
        DType::Record(r) => {
            for f in &r.fields {
                let size = f.dtype.itemsize();
                if let Some(part) = item.get_mut(f.offset..f.offset.saturating_add(size)) {
                    native_one(&f.dtype, part);
                }
            }
        }
        DType::SubArray(base, _) => to_native_in_place(base, item),
    }
}

fn shape_literal(shape: &[usize]) -> PyLiteral {
    PyLiteral::Tuple(shape.iter().map(|d| PyLiteral::Int(*d as i128)).collect())
}

/// numpy's `_array_descr` for a structured dtype.
fn array_descr(r: &RecordType) -> Result<PyLiteral> {
    let mut out = Vec::new();
    let mut offset = 0usize;
    let pad = |n: usize| {
        PyLiteral::Tuple(vec![
            PyLiteral::Str(String::new()),
            PyLiteral::Str(format!("|V{n}")),
        ])
    };
    for f in &r.fields {
        if f.offset > offset {
            out.push(pad(f.offset - offset));
            offset = f.offset;
        } else if f.offset < offset {
            return Err(Error::unsupported(format!(
                "dtype.descr is not defined for types with overlapping or out-of-order fields (field {:?})",
                f.name
            )));
        }
        let name = match &f.title {
            Some(t) => PyLiteral::Tuple(vec![
                PyLiteral::Str(t.clone()),
                PyLiteral::Str(f.name.clone()),
            ]),
            None => PyLiteral::Str(f.name.clone()),
        };
        let entry = match &f.dtype {
            DType::SubArray(base, shape) => {
                vec![name, base.descr_literal()?, shape_literal(shape)]
            }
            dt => vec![name, dt.descr_literal()?],
        };
        out.push(PyLiteral::Tuple(entry));
        offset += f.dtype.itemsize();
    }
    if r.itemsize > offset {
        out.push(pad(r.itemsize - offset));
    }
    Ok(PyLiteral::List(out))
}

fn parse_descr_inner(descr: &PyLiteral) -> Result<DType> {
    match descr {
        PyLiteral::Str(s) => DType::from_typestr(s),
        PyLiteral::Tuple(items) if items.len() == 2 => {
            let base = parse_descr_inner(&items[0])?;
            subarray(base, &items[1])
        }
        PyLiteral::List(fields) => parse_fields(fields),
        other => Err(Error::format(format!(
            "descr must be a str, a list of fields or a (descr, shape) tuple, not {}: {}",
            other.type_name(),
            other.repr()
        ))),
    }
}

/// `np.dtype((base, shape))`: an int or a tuple of ints; `()` or `1`-less shapes give the base.
fn subarray(base: DType, shape: &PyLiteral) -> Result<DType> {
    let dims: Vec<usize> = match shape {
        PyLiteral::Int(n) => vec![dim(*n)?],
        PyLiteral::Tuple(items) => items
            .iter()
            .map(|i| match i {
                PyLiteral::Int(n) => dim(*n),
                other => Err(Error::format(format!(
                    "subarray shape holds a {}, not an int",
                    other.type_name()
                ))),
            })
            .collect::<Result<_>>()?,
        other => Err(Error::format(format!(
            "subarray shape must be an int or a tuple, not {}",
            other.type_name()
        )))?,
    };
    if dims.is_empty() {
        return Ok(base);
    }
    if let DType::Scalar(ScalarType {
        kind: ScalarKind::Bytes(0) | ScalarKind::Unicode(0) | ScalarKind::Void(0),
        ..
    }) = base
    {
        // numpy: "invalid itemsize in generic type tuple".
        return Err(Error::format(format!(
            "a subarray of the unsized type {} is invalid",
            base.to_typestr()
        )));
    }
    let size = dims
        .iter()
        .try_fold(base.itemsize(), |acc, d| acc.checked_mul(*d))
        .filter(|n| *n <= MAX_ITEMSIZE);
    if size.is_none() {
        return Err(Error::format(format!(
            "subarray shape {dims:?} is too large"
        )));
    }
    Ok(DType::SubArray(Box::new(base), dims))
}

fn dim(n: i128) -> Result<usize> {
    usize::try_from(n)
        .ok()
        .filter(|d| *d <= MAX_ITEMSIZE)
        .ok_or_else(|| Error::format(format!("invalid dimension {n}")))
}

fn parse_fields(fields: &[PyLiteral]) -> Result<DType> {
    let mut out: Vec<Field> = Vec::with_capacity(fields.len().min(4096));
    let mut seen: HashSet<String> = HashSet::new();
    let mut offset = 0usize;
    for entry in fields {
        let items = match entry {
            PyLiteral::Tuple(items) | PyLiteral::List(items) => items,
            other => {
                return Err(Error::format(format!(
                    "a structured descr entry must be a tuple, not {}",
                    other.type_name()
                )))
            }
        };
        let (name, dtype) = match items.as_slice() {
            [name, descr] => (name, parse_descr_inner(descr)?),
            [name, descr, shape] => (name, subarray(parse_descr_inner(descr)?, shape)?),
            _ => {
                return Err(Error::format(format!(
                    "a structured descr entry needs 2 or 3 items, found {}",
                    items.len()
                )))
            }
        };
        let (title, name) = match name {
            PyLiteral::Str(n) => (None, n.clone()),
            PyLiteral::Tuple(pair) => match pair.as_slice() {
                [PyLiteral::Str(t), PyLiteral::Str(n)] => (Some(t.clone()), n.clone()),
                _ => {
                    return Err(Error::format(
                        "a field title must be a ('title', 'name') pair",
                    ))
                }
            },
            other => {
                return Err(Error::format(format!(
                    "a field name must be a str, not {}",
                    other.type_name()
                )))
            }
        };
        let size = dtype.itemsize();
        // numpy's rule: an unnamed void that is not a record is padding (a subarray's type
        // is void too).
        let is_pad = name.is_empty()
            && title.is_none()
            && matches!(
                &dtype,
                DType::SubArray(..)
                    | DType::Scalar(ScalarType {
                        kind: ScalarKind::Void(_),
                        ..
                    })
            );
        if !is_pad {
            if name.is_empty() {
                return Err(Error::format("a structured dtype field has an empty name"));
            }
            // numpy keys fields by name and by title: all must be distinct.
            if !seen.insert(name.clone()) || title.as_ref().is_some_and(|t| !seen.insert(t.clone()))
            {
                return Err(Error::format(format!(
                    "duplicate field name or title {name:?}"
                )));
            }
            out.push(Field {
                name,
                title,
                offset,
                dtype,
            });
        }
        offset = offset
            .checked_add(size)
            .filter(|n| *n <= MAX_ITEMSIZE)
            .ok_or_else(|| Error::format("structured dtype is too large"))?;
    }
    Ok(DType::Record(RecordType {
        fields: out,
        itemsize: offset,
    }))
}

fn parse_typestr(s: &str) -> Option<ScalarType> {
    let (order, rest) = match s.as_bytes().first()? {
        b'<' => (ByteOrder::Little, &s[1..]),
        b'>' => (ByteOrder::Big, &s[1..]),
        b'|' => (ByteOrder::NotApplicable, &s[1..]),
        b'=' => (ByteOrder::NATIVE, &s[1..]),
        _ => (ByteOrder::NATIVE, s),
    };
    let mut chars = rest.chars();
    let kind_char = chars.next()?;
    let tail = chars.as_str();
    if tail.is_empty() {
        if let Some(kind) = char_code(kind_char) {
            return Some(ScalarType::new(kind, order));
        }
    }
    let (digits, unit) = match tail.find('[') {
        Some(i) => (
            &tail[..i],
            Some(tail[i..].strip_prefix('[')?.strip_suffix(']')?),
        ),
        None => (tail, None),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let size: usize = digits.parse().ok()?;
    let small = u8::try_from(size).ok();
    let kind = match (kind_char, unit) {
        ('b', None) if size == 1 => ScalarKind::Bool,
        ('i', None) if matches!(size, 1 | 2 | 4 | 8) => ScalarKind::Int(small?),
        ('u', None) if matches!(size, 1 | 2 | 4 | 8) => ScalarKind::UInt(small?),
        ('f', None) if matches!(size, 2 | 4 | 8 | 12 | 16) => ScalarKind::Float(small?),
        ('c', None) if matches!(size, 8 | 16 | 24 | 32) => ScalarKind::Complex(small?),
        ('S' | 'a', None) if size <= MAX_ITEMSIZE => ScalarKind::Bytes(size),
        ('U', None) if size <= MAX_ITEMSIZE / 4 => ScalarKind::Unicode(size),
        ('V', None) if size <= MAX_ITEMSIZE => ScalarKind::Void(size),
        ('O', None) if size == 8 => ScalarKind::Object,
        ('M', None) if size == 8 => ScalarKind::DateTime(TimeUnit::GENERIC),
        ('m', None) if size == 8 => ScalarKind::TimeDelta(TimeUnit::GENERIC),
        ('M', Some(u)) if size == 8 => ScalarKind::DateTime(TimeUnit::parse_bracket(u)?),
        ('m', Some(u)) if size == 8 => ScalarKind::TimeDelta(TimeUnit::parse_bracket(u)?),
        _ => return None,
    };
    Some(ScalarType::new(kind, order))
}

/// numpy's one-character type codes (`np.dtype('d')`), for typestrs without a size.
fn char_code(c: char) -> Option<ScalarKind> {
    Some(match c {
        '?' => ScalarKind::Bool,
        'b' => ScalarKind::Int(1),
        'B' => ScalarKind::UInt(1),
        'h' => ScalarKind::Int(2),
        'H' => ScalarKind::UInt(2),
        'i' => ScalarKind::Int(4),
        'I' => ScalarKind::UInt(4),
        'l' | 'q' | 'p' => ScalarKind::Int(8),
        'L' | 'Q' | 'P' => ScalarKind::UInt(8),
        'e' => ScalarKind::Float(2),
        'f' => ScalarKind::Float(4),
        'd' => ScalarKind::Float(8),
        'g' => ScalarKind::Float(16),
        'F' => ScalarKind::Complex(8),
        'D' => ScalarKind::Complex(16),
        'G' => ScalarKind::Complex(32),
        'S' | 'a' => ScalarKind::Bytes(0),
        'U' => ScalarKind::Unicode(0),
        'V' => ScalarKind::Void(0),
        'O' => ScalarKind::Object,
        'M' => ScalarKind::DateTime(TimeUnit::GENERIC),
        'm' => ScalarKind::TimeDelta(TimeUnit::GENERIC),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_order_records_go_native_field_by_field() {
        let le = DType::from_typestr("<f8").unwrap();
        let be = DType::from_typestr(">f8").unwrap();
        let rec = DType::Record(RecordType::packed([
            ("a".to_string(), le),
            ("b".to_string(), be),
        ]));
        let mut bytes = [1.5f64.to_le_bytes(), 2.5f64.to_be_bytes()].concat();
        to_native_in_place(&rec, &mut bytes);
        let (a, b) = bytes.split_at(8);
        assert_eq!(f64::from_ne_bytes(a.try_into().unwrap()), 1.5);
        assert_eq!(f64::from_ne_bytes(b.try_into().unwrap()), 2.5);
    }

    #[test]
    fn typestrs_round_trip() {
        for s in [
            "|b1", "|i1", "<i2", ">i4", "<i8", "|u1", ">u2", "<u4", "<u8", "<f2", ">f4", "<f8",
            "<f16", "<f12", ">c8", "<c16", "<c32", "|S0", "|S7", "<U3", ">U1", "|V16", "|O", "<M8",
            "<M8[ns]", ">m8[25s]", "<M8[Y]", "<m8[as]",
        ] {
            assert_eq!(DType::from_typestr(s).unwrap().to_typestr(), s);
        }
        assert_eq!(DType::from_typestr("=f8").unwrap().to_typestr(), "<f8");
        assert_eq!(DType::from_typestr("|i4").unwrap().to_typestr(), "<i4");
        assert_eq!(DType::from_typestr(">b1").unwrap().to_typestr(), "|b1");
        assert_eq!(DType::from_typestr("d").unwrap().to_typestr(), "<f8");
        assert_eq!(DType::from_typestr("<S3").unwrap().to_typestr(), "|S3");
        for bad in [
            "", "<", "<f3", "<i16", "<M8[xs]", "<M8[0s]", "<M4", "f8 ", "<f8[s]",
        ] {
            assert!(DType::from_typestr(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn padding_and_offsets() {
        let d = "[('', '|V4'), (('T', 'a'), '<i4'), ('', '|V4')]";
        let dt = DType::parse_descr(&PyLiteral::parse(d).unwrap()).unwrap();
        let r = dt.as_record().unwrap();
        assert_eq!(r.itemsize, 12);
        assert_eq!(r.fields[0].offset, 4);
        assert_eq!(dt.descr_literal().unwrap().repr(), d);
    }

    #[test]
    fn swap() {
        let dt = DType::from_typestr(">c8").unwrap();
        let mut b = [1, 2, 3, 4, 5, 6, 7, 8];
        byteswap_in_place(&dt, &mut b);
        assert_eq!(b, [4, 3, 2, 1, 8, 7, 6, 5]);
    }
}
