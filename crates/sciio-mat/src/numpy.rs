//! numpy arrays as MATLAB values the way `hdf5storage.savemat` (`matlab_compatible=True`,
//! `store_python_metadata=True`) stores them, with its `Python.*` attributes so that
//! `hdf5storage.loadmat` gives the same numpy arrays back:
//!
//! - numeric, `bool` (logical) and complex arrays: the same values with numpy's shape taken as
//!   MATLAB's (at least 2-d, a 1-d array a row);
//! - `U` and `S` arrays: `char` (UTF-16 code units; `S` bytes one unit each), every string
//!   `n` units wide (NUL-padded) along the last axis: shape `(..., k)` of `U n` becomes
//!   `(..., k*n)`, a 1-d array one row;
//! - structured arrays: struct arrays of the same shape, one field per record field; each
//!   element's field value is the numpy scalar (`numpy.float64`, `numpy.str_`, trailing NULs
//!   dropped as numpy does) or, for subarray fields, an array.
//!
//! Other dtypes (objects, datetimes, float16, long doubles, nested records) have no MATLAB
//! class: [`no_class_reason`] says why, [`from_numpy`] refuses them.

use sciio_core::{DType, Error, NdArray, Order, RecordType, Result, ScalarKind};

use crate::value::{at_least_2d, CharArray, MatValue, StructArray};

/// hdf5storage's `Python.*` attributes of one stored value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonAttrs {
    /// `Python.Type`: `numpy.ndarray`, `numpy.float64`, `numpy.str_`, `numpy.bytes_`...
    pub type_name: String,
    /// `Python.numpy.UnderlyingType`: `float64`, `str96`, `bytes16`, `void112`...
    pub underlying: String,
    /// `Python.numpy.Container`: `ndarray` or `scalar`.
    pub container: String,
    /// `Python.Shape`: numpy's shape.
    pub shape: Vec<u64>,
    /// `Python.Fields` of a structured array.
    pub fields: Option<Vec<String>>,
}

impl PythonAttrs {
    /// Whether `Python.Empty` is set: the numpy value has no element, or is an empty
    /// `numpy.str_`/`numpy.bytes_` scalar (underlying type `str`/`bytes`, as hdf5storage
    /// writes it: without the flag it cannot read such a value back).
    pub fn empty(&self) -> bool {
        self.shape.contains(&0)
            || (self.container == "scalar" && matches!(self.underlying.as_str(), "str" | "bytes"))
    }
}

/// The `Python.*` attributes of a value and, for a struct, of each element's fields
/// (`elements[i][j]`: field `j` of element `i`, MATLAB's column-major element order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PythonMeta {
    /// The value's own attributes; `None` writes what
    /// [`crate::WriteOptions::python_metadata`] says.
    pub attrs: Option<PythonAttrs>,
    /// The struct elements' fields.
    pub elements: Vec<Vec<PythonMeta>>,
}

impl PythonMeta {
    pub(crate) fn field(&self, element: usize, field: usize) -> Option<&PythonMeta> {
        self.elements.get(element)?.get(field)
    }
}

/// Why a numpy dtype has no MATLAB class (as `hdf5storage` with `matlab_compatible=True`
/// stores numpy arrays), or `None` when [`from_numpy`] converts it.
pub fn no_class_reason(dtype: &DType) -> Option<String> {
    match dtype {
        DType::Scalar(s) => match s.kind {
            ScalarKind::Bool
            | ScalarKind::Int(_)
            | ScalarKind::UInt(_)
            | ScalarKind::Float(4 | 8)
            | ScalarKind::Complex(8 | 16)
            | ScalarKind::Unicode(_)
            | ScalarKind::Bytes(_) => None,
            _ => Some(format!("MATLAB has no class for {dtype} arrays")),
        },
        DType::Record(r) => r.fields.iter().find_map(|f| {
            let base = match &f.dtype {
                DType::SubArray(base, _) => &**base,
                other => other,
            };
            match base {
                DType::Scalar(_) => {
                    no_class_reason(base).map(|why| format!("record field '{}': {why}", f.name))
                }
                _ => Some(format!(
                    "record field '{}' is itself structured (MATLAB structs from nested \
                     records are not written)",
                    f.name
                )),
            }
        }),
        other => Some(format!("MATLAB has no class for {other} arrays")),
    }
}

/// The MATLAB value hdf5storage stores for a numpy array, with its `Python.*` attributes.
///
/// ```
/// use sciio_core::{DType, NdArray, Order, ScalarKind};
/// let words = NdArray::from_bytes(
///     DType::scalar(ScalarKind::Unicode(2)),
///     &[2],
///     Order::C,
///     &[104, 0, 0, 0, 105, 0, 0, 0, 111, 0, 0, 0, 0, 0, 0, 0],
/// )?;
/// let (value, meta) = sciio_mat::from_numpy(&words)?;
/// // 'hi', 'o' -> the 1x4 char "hio\0", restored by hdf5storage as a <U2 array of shape (2,).
/// assert_eq!(value.matlab_shape(), vec![1, 4]);
/// assert_eq!(meta.attrs.unwrap().underlying, "str64");
/// # Ok::<(), sciio_core::Error>(())
/// ```
pub fn from_numpy(array: &NdArray) -> Result<(MatValue, PythonMeta)> {
    if let Some(why) = no_class_reason(array.dtype()) {
        return Err(Error::unsupported(why));
    }
    let array = array.to_native();
    let shape: Vec<u64> = array.shape().iter().map(|&d| d as u64).collect();
    let attrs = |underlying: String| PythonAttrs {
        type_name: "numpy.ndarray".into(),
        underlying,
        container: "ndarray".into(),
        shape: shape.clone(),
        fields: None,
    };
    match array.dtype() {
        DType::Record(record) => {
            let (value, elements) = structure(&array, record)?;
            let own = record_attrs(record, array.shape());
            Ok((
                value,
                PythonMeta {
                    attrs: Some(own),
                    elements,
                },
            ))
        }
        // A 0-d string is numpy's str_/bytes_ scalar (hdf5storage cannot store 0-d `U`
        // arrays): a char row without the padding NULs.
        DType::Scalar(s)
            if array.shape().is_empty()
                && matches!(s.kind, ScalarKind::Unicode(_) | ScalarKind::Bytes(_)) =>
        {
            scalar(array.dtype().clone(), s.kind, array.as_bytes())
        }
        DType::Scalar(s) => {
            let value = match s.kind {
                ScalarKind::Unicode(n) => text(&array, n, 4)?,
                ScalarKind::Bytes(n) => text(&array, n, 1)?,
                _ => MatValue::numeric(array.to_order(Order::F))?,
            };
            let own = attrs(underlying_name(s.kind));
            Ok((value, PythonMeta::leaf(own)))
        }
        other => Err(Error::unsupported(format!(
            "MATLAB has no class for {other} arrays"
        ))),
    }
}

/// The `Python.*` attributes [`from_numpy`] gives a structured array of `record` and numpy
/// shape `shape` itself (its elements' fields have their own).
pub(crate) fn record_attrs(record: &RecordType, shape: &[usize]) -> PythonAttrs {
    PythonAttrs {
        type_name: "numpy.ndarray".into(),
        underlying: format!("void{}", 8 * record.itemsize),
        container: "ndarray".into(),
        shape: shape.iter().map(|&d| d as u64).collect(),
        fields: Some(record.fields.iter().map(|f| f.name.to_string()).collect()),
    }
}

/// The metadata [`from_numpy`] gives a numeric or logical array of `kind` and `shape`
/// (hdf5storage's `Python.*` attributes), for arrays written piece by piece
/// ([`crate::MatWriter::write_pieces`]).
pub fn numeric_meta(kind: ScalarKind, shape: &[usize]) -> PythonMeta {
    PythonMeta::leaf(PythonAttrs {
        type_name: "numpy.ndarray".into(),
        underlying: underlying_name(kind),
        container: "ndarray".into(),
        shape: shape.iter().map(|&d| d as u64).collect(),
        fields: None,
    })
}

impl PythonMeta {
    fn leaf(attrs: PythonAttrs) -> PythonMeta {
        PythonMeta {
            attrs: Some(attrs),
            elements: Vec::new(),
        }
    }
}

/// numpy's name of a scalar kind as hdf5storage writes it (`float64`, `str96`, `bytes16`).
fn underlying_name(kind: ScalarKind) -> String {
    match kind {
        ScalarKind::Bool => "bool".into(),
        ScalarKind::Int(n) => format!("int{}", 8 * u32::from(n)),
        ScalarKind::UInt(n) => format!("uint{}", 8 * u32::from(n)),
        ScalarKind::Float(n) => format!("float{}", 8 * u32::from(n)),
        ScalarKind::Complex(n) => format!("complex{}", 8 * u32::from(n)),
        ScalarKind::Unicode(n) => format!("str{}", 32 * n),
        ScalarKind::Bytes(n) => format!("bytes{}", 8 * n),
        other => format!("{other:?}"),
    }
}

/// A `U`/`S` array (native order) as hdf5storage's char: `width` units per string along the
/// last axis, `unit` bytes per character in the array.
fn text(array: &NdArray, width: usize, unit: usize) -> Result<MatValue> {
    let mut shape = array.shape().to_vec();
    match shape.last_mut() {
        Some(last) => *last *= width,
        None => shape.push(width),
    }
    let shape = at_least_2d(&shape);
    let c = array.to_order(Order::C);
    let codes: Vec<u32> = match unit {
        4 => c
            .as_bytes()
            .chunks_exact(4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]])) // ok: chunks of 4
            .collect(),
        _ => c.as_bytes().iter().map(|&b| u32::from(b)).collect(),
    };
    if codes.is_empty() {
        return Ok(MatValue::Char(CharArray {
            shape,
            codes: Vec::new(),
            numpy: None,
        }));
    }
    // The codes are in C order over `shape` (numpy's view of the strings as characters):
    // MATLAB keeps the same shape, column-major.
    let as_c = NdArray::from_byte_vec(
        DType::scalar(ScalarKind::UInt(4)),
        &shape,
        Order::C,
        codes.iter().flat_map(|c| c.to_ne_bytes()).collect(),
    )?;
    let f = as_c.to_order(Order::F);
    let codes = f
        .as_bytes()
        .chunks_exact(4)
        .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]])) // ok: chunks of 4
        .collect();
    Ok(MatValue::Char(CharArray {
        shape,
        codes,
        numpy: None,
    }))
}

/// The char array `scipy.io.savemat` writes for a numpy `U`/`S` array, which Level-5 files
/// (v7, v5) hold as scipy.io and MATLAB read them; `None` for other dtypes. MATLAB's size
/// is numpy's shape with the strings' width in characters appended (a 0-d string: `1×w`),
/// one character per code unit (`S`: one per byte), every NUL written as a space (scipy's
/// `arr_to_chars`); an array of no element, or a `U` array of empty strings only, is an
/// empty char of `max(ndim, 2)` zero dimensions (scipy's `write_char`: a char array cannot
/// hold an empty string; its test `arr == ''` never holds for a bytes array, whose empty
/// strings become spaces).
///
/// ```
/// use sciio_core::{DType, NdArray, Order, ScalarKind};
/// let words = NdArray::from_bytes(DType::scalar(ScalarKind::Bytes(2)), &[2], Order::C, b"hio\0")?;
/// let chars = sciio_mat::scipy_chars(&words).expect("a text array")?;
/// // 'hi', 'o' -> the 2x2 char ['hi'; 'o '].
/// assert_eq!(chars.shape, vec![2, 2]);
/// assert_eq!(chars.rows(), vec!["hi", "o "]);
/// # Ok::<(), sciio_core::Error>(())
/// ```
pub fn scipy_chars(array: &NdArray) -> Option<Result<CharArray>> {
    let (width, unit) = match array.dtype().as_scalar()?.kind {
        ScalarKind::Unicode(w) => (w, 4),
        ScalarKind::Bytes(w) => (w, 1),
        _ => return None,
    };
    let mut shape = array.shape().to_vec();
    if shape.is_empty() {
        shape.push(1);
    }
    shape.push(width);
    let unicode = unit == 4;
    Some(column_major_units(array, unit, &shape).map(|codes| scipy_text(shape, codes, unicode)))
}

/// A char array of `shape` and its codes made what `scipy.io.savemat` writes (see
/// [`scipy_chars`]): NULs as spaces, or the empty char when there is no code or, for a `U`
/// array (`unicode`), every code is NUL. `shape` is numpy's shape (at least 1-d) with the
/// strings' width appended; `codes` column-major.
pub(crate) fn scipy_text(shape: Vec<usize>, mut codes: Vec<u32>, unicode: bool) -> CharArray {
    if codes.is_empty() || (unicode && codes.iter().all(|&c| c == 0)) {
        let ndim = shape.len().saturating_sub(1).max(2);
        return CharArray {
            shape: vec![0; ndim],
            codes: Vec::new(),
            numpy: None,
        };
    }
    for c in codes.iter_mut().filter(|c| **c == 0) {
        *c = u32::from(b' ');
    }
    CharArray {
        shape,
        codes,
        numpy: None,
    }
}

/// The code units of a `U`/`S` array (`unit` bytes each in the array) seen as an array of
/// `shape` over the same C-order units, in column-major order.
fn column_major_units(array: &NdArray, unit: usize, shape: &[usize]) -> Result<Vec<u32>> {
    let c = array.to_native().to_order(Order::C);
    let bytes: Vec<u8> = match unit {
        4 => c.as_bytes().to_vec(),
        _ => c
            .as_bytes()
            .iter()
            .flat_map(|&b| u32::from(b).to_ne_bytes())
            .collect(),
    };
    let as_c = NdArray::from_byte_vec(DType::scalar(ScalarKind::UInt(4)), shape, Order::C, bytes)?;
    let f = as_c.to_order(Order::F);
    Ok(f.as_bytes()
        .chunks_exact(4)
        .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]])) // ok: chunks of 4
        .collect())
}

/// The MATLAB value a Level-5 file (v7, v5) holds for a numpy array: [`from_numpy`]'s, but
/// text as `scipy.io.savemat` writes it ([`scipy_chars`]), in a structured array's subarray
/// fields too (its scalar strings are char rows in both).
pub fn scipy_value(array: &NdArray) -> Result<MatValue> {
    if let Some(chars) = scipy_chars(array) {
        return chars.map(MatValue::Char);
    }
    if !matches!(array.dtype(), DType::Record(_)) {
        return Ok(from_numpy(array)?.0);
    }
    if let Some(why) = no_class_reason(array.dtype()) {
        return Err(Error::unsupported(why));
    }
    // The fields' offsets and byte orders of the native copy (the values read from it).
    let native = array.to_native();
    let DType::Record(record) = native.dtype() else {
        return Err(Error::invalid_input(
            "a structured array's native copy is not structured",
        ));
    };
    let fields =
        |f: &sciio_core::Field, r: &[u8]| Ok((scipy_field_value(f, r)?, PythonMeta::default()));
    Ok(structure_with(&native, record, fields)?.0)
}

/// The value of `field` of one record (`record_bytes`, native byte order) in a Level-5
/// file: [`field_value`]'s, a text subarray as [`scipy_chars`].
pub(crate) fn scipy_field_value(
    field: &sciio_core::Field,
    record_bytes: &[u8],
) -> Result<MatValue> {
    if let DType::SubArray(base, sub_shape) = &field.dtype {
        let raw = record_bytes
            .get(field.offset..field.offset + field.dtype.itemsize())
            .ok_or_else(|| {
                Error::format(format!("record field '{}' beyond the record", field.name))
            })?;
        let a = NdArray::from_bytes((**base).clone(), sub_shape, Order::C, raw)?;
        if let Some(chars) = scipy_chars(&a) {
            return chars.map(MatValue::Char);
        }
    }
    Ok(field_value(field, record_bytes)?.0)
}

/// A structured array as a struct array of its shape; the elements' field values are the
/// numpy scalars (or subarrays) hdf5storage stores, each with its attributes.
fn structure(array: &NdArray, record: &RecordType) -> Result<(MatValue, Vec<Vec<PythonMeta>>)> {
    structure_with(array, record, field_value)
}

/// [`structure`] with each record's field values made by `field_value`.
fn structure_with(
    array: &NdArray,
    record: &RecordType,
    field_value: impl Fn(&sciio_core::Field, &[u8]) -> Result<(MatValue, PythonMeta)>,
) -> Result<(MatValue, Vec<Vec<PythonMeta>>)> {
    let shape = at_least_2d(array.shape());
    let names: Vec<String> = record.fields.iter().map(|f| f.name.to_string()).collect();
    // Column-major element order: the F-ordered copy's records one after another.
    let f = array.to_order(Order::F);
    let bytes = f.as_bytes();
    let n = array.len();
    let mut elements = Vec::with_capacity(n);
    let mut metas = Vec::with_capacity(n);
    for i in 0..n {
        let record_bytes = bytes
            .get(i * record.itemsize..(i + 1) * record.itemsize)
            .ok_or_else(|| Error::format("structured array shorter than its shape"))?;
        let mut values = Vec::with_capacity(record.fields.len());
        let mut meta = Vec::with_capacity(record.fields.len());
        for field in &record.fields {
            let (v, m) = field_value(field, record_bytes)?;
            values.push(v);
            meta.push(m);
        }
        elements.push(values);
        metas.push(meta);
    }
    let value = MatValue::Struct(StructArray::new(shape, names, elements)?);
    Ok((value, metas))
}

/// The value hdf5storage stores for `field` of one record (`record_bytes`, native byte
/// order): the numpy scalar, or the array of a subarray field.
pub(crate) fn field_value(
    field: &sciio_core::Field,
    record_bytes: &[u8],
) -> Result<(MatValue, PythonMeta)> {
    let size = field.dtype.itemsize();
    let raw = record_bytes
        .get(field.offset..field.offset + size)
        .ok_or_else(|| Error::format(format!("record field '{}' beyond the record", field.name)))?;
    match &field.dtype {
        DType::SubArray(base, sub_shape) => {
            let a = NdArray::from_bytes((**base).clone(), sub_shape, Order::C, raw)?;
            from_numpy(&a)
        }
        DType::Scalar(s) => scalar(field.dtype.clone(), s.kind, raw),
        other => Err(Error::unsupported(format!(
            "record field '{}' of dtype {other}",
            field.name
        ))),
    }
}

/// One numpy scalar (a record's field value) as hdf5storage stores it: `numpy.float64` as a
/// 1×1 double, `numpy.str_` / `numpy.bytes_` (trailing NULs dropped, as numpy's scalars drop
/// them) as a char row.
fn scalar(dtype: DType, kind: ScalarKind, raw: &[u8]) -> Result<(MatValue, PythonMeta)> {
    let attrs = |type_name: &str, underlying: String| PythonAttrs {
        type_name: type_name.into(),
        underlying,
        container: "scalar".into(),
        shape: Vec::new(),
        fields: None,
    };
    let a = NdArray::from_bytes(dtype, &[], Order::C, raw)?;
    match kind {
        ScalarKind::Unicode(_) | ScalarKind::Bytes(_) => {
            let unit = if matches!(kind, ScalarKind::Unicode(_)) {
                4
            } else {
                1
            };
            let mut end = raw.len() / unit;
            while end > 0 && raw[(end - 1) * unit..end * unit].iter().all(|&b| b == 0) {
                end -= 1;
            }
            // numpy names a zero-width string type `str`/`bytes` (hdf5storage's
            // UnderlyingType of an empty string), not `str0`/`bytes0`.
            let (type_name, under) = match (unit, end) {
                (4, 0) => ("numpy.str_", "str".to_string()),
                (4, _) => ("numpy.str_", underlying_name(ScalarKind::Unicode(end))),
                (_, 0) => ("numpy.bytes_", "bytes".to_string()),
                _ => ("numpy.bytes_", underlying_name(ScalarKind::Bytes(end))),
            };
            let trimmed = NdArray::from_bytes(
                DType::scalar(match unit {
                    4 => ScalarKind::Unicode(end),
                    _ => ScalarKind::Bytes(end),
                }),
                &[],
                Order::C,
                &raw[..end * unit],
            )?;
            let value = text(&trimmed.to_native(), end, unit)?;
            Ok((value, PythonMeta::leaf(attrs(type_name, under))))
        }
        _ => {
            let under = underlying_name(kind);
            let type_name = match kind {
                ScalarKind::Bool => "numpy.bool_".to_string(),
                _ => format!("numpy.{under}"),
            };
            let value = MatValue::numeric(a.to_native().reshape(&[1, 1])?)?;
            Ok((value, PythonMeta::leaf(attrs(&type_name, under))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(width: usize, shape: &[usize], text: &str) -> NdArray {
        let bytes: Vec<u8> = text
            .chars()
            .flat_map(|c| u32::from(c).to_le_bytes())
            .collect();
        NdArray::from_bytes(
            DType::scalar(ScalarKind::Unicode(width)).with_order(sciio_core::ByteOrder::Little),
            shape,
            Order::C,
            &bytes,
        )
        .unwrap()
    }

    #[test]
    fn text_arrays_stretch_the_last_axis() {
        // [['a', 'bb'], ['ccc', 'd']] as U3: MATLAB 2x6, row r = the strings of row r.
        let a = u(3, &[2, 2], "a\0\0bb\0cccd\0\0");
        let (v, meta) = from_numpy(&a).unwrap();
        let MatValue::Char(c) = v else { panic!() };
        assert_eq!(c.shape, vec![2, 6]);
        assert_eq!(c.rows(), vec!["a\0\0bb\0", "cccd\0\0"]);
        let attrs = meta.attrs.unwrap();
        assert_eq!(
            (attrs.underlying.as_str(), attrs.shape),
            ("str96", vec![2, 2])
        );
    }

    #[test]
    fn scipy_chars_append_the_width() {
        // [['a', 'bb'], ['ccc', 'd']] as U3: MATLAB 2x2x3, NULs as spaces.
        let a = u(3, &[2, 2], "a\0\0bb\0cccd\0\0");
        let c = scipy_chars(&a).unwrap().unwrap();
        assert_eq!(c.shape, vec![2, 2, 3]);
        let at = |i: usize, j: usize, k: usize| char::from_u32(c.codes[i + 2 * j + 4 * k]);
        let strings: Vec<String> = [(0, 0), (0, 1), (1, 0), (1, 1)]
            .iter()
            .map(|&(i, j)| (0..3).filter_map(|k| at(i, j, k)).collect())
            .collect();
        assert_eq!(strings, ["a  ", "bb ", "ccc", "d  "]);
        // A 0-d string is 1-by-width; empty strings only, an empty char of >= 2 dimensions.
        let scalar = scipy_chars(&u(3, &[], "ab\0")).unwrap().unwrap();
        assert_eq!(scalar.to_string_lossy(), "ab ");
        assert_eq!(scalar.shape, vec![1, 3]);
        let empty = scipy_chars(&u(2, &[2, 1, 3], &"\0".repeat(12)))
            .unwrap()
            .unwrap();
        assert_eq!((empty.shape, empty.codes.len()), (vec![0, 0, 0], 0));
        // Empty bytes strings only: spaces (scipy's `arr == ''` is false for bytes).
        let b = NdArray::from_bytes(DType::scalar(ScalarKind::Bytes(1)), &[2], Order::C, &[0, 0]);
        let spaces = scipy_chars(&b.unwrap()).unwrap().unwrap();
        assert_eq!((spaces.shape, spaces.codes), (vec![2, 1], vec![32, 32]));
        let none = scipy_chars(&u(2, &[0], "")).unwrap().unwrap();
        assert_eq!(none.shape, vec![0, 0]);
        let numbers = NdArray::from_bytes(DType::scalar(ScalarKind::UInt(1)), &[1], Order::C, &[1]);
        assert!(scipy_chars(&numbers.unwrap()).is_none());
    }

    #[test]
    fn nested_records_and_objects_have_no_class() {
        assert!(no_class_reason(&DType::from_typestr("|O").unwrap()).is_some());
        assert!(no_class_reason(&DType::from_typestr("<M8[s]").unwrap()).is_some());
        assert!(no_class_reason(&DType::from_typestr("<U3").unwrap()).is_none());
    }
}
