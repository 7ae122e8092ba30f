//! Level-5 `miMATRIX` elements into [`MatValue`]s: array flags, dimensions, name, then each
//! class's sub-elements, every one read through the bounds-checked [`Cursor`].

use sciio_core::{DType, Error, Limits, NdArray, Order, Result, ScalarKind};

use super::consts::{MX_CELL, MX_CHAR, MX_FUNCTION, MX_OBJECT, MX_OPAQUE, MX_SPARSE, MX_STRUCT};
use super::cursor::{
    storage_kind, type_name, Cursor, Element, Endian, MI_INT32, MI_INT8, MI_MATRIX, MI_UINT16,
    MI_UINT32, MI_UINT8, MI_UTF16, MI_UTF32, MI_UTF8,
};
use crate::value::{
    at_least_2d, CellArray, CharArray, MatValue, Opaque, SparseMatrix, StructArray,
};

/// Deepest nesting of cells/structs followed.
const MAX_DEPTH: usize = 128;

/// The note of an MCOS object before its decoding from the subsystem.
pub(crate) const MCOS_NOTE: &str = "MCOS object; its data lives in the file's subsystem";

const COMPLEX: u32 = 0x0800;
const LOGICAL: u32 = 0x0200;

/// The numpy kind of a numeric class (6 = double ... 15 = uint64).
pub(crate) fn class_kind(class: u32) -> Option<ScalarKind> {
    Some(match class {
        6 => ScalarKind::Float(8),
        7 => ScalarKind::Float(4),
        8 => ScalarKind::Int(1),
        9 => ScalarKind::UInt(1),
        10 => ScalarKind::Int(2),
        11 => ScalarKind::UInt(2),
        12 => ScalarKind::Int(4),
        13 => ScalarKind::UInt(4),
        14 => ScalarKind::Int(8),
        15 => ScalarKind::UInt(8),
        _ => return None,
    })
}

/// What the header of an `miMATRIX` says, before its data.
#[derive(Debug, Clone)]
pub(crate) struct Header {
    pub class: u32,
    pub flags: u32,
    pub dims: Vec<usize>,
    pub name: String,
    /// An old-style object's class name, or an opaque object's (`s2`), with its type system.
    pub class_name: Option<String>,
    pub type_system: Option<String>,
}

impl Header {
    pub(crate) fn complex(&self) -> bool {
        self.flags & COMPLEX != 0
    }
    pub(crate) fn logical(&self) -> bool {
        self.flags & LOGICAL != 0
    }
    pub(crate) fn count(&self) -> Result<usize> {
        self.dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| Error::format(format!("array of size {:?} overflows", self.dims)))
    }
}

/// The decoder of one variable.
pub(crate) struct Decoder<'l> {
    pub limits: &'l Limits,
}

/// Reads an ASCII name element (`miINT8`, or `miUTF8`/`miUINT8` holding ASCII).
fn ascii_name(el: &Element<'_>, what: &str) -> Result<String> {
    if !matches!(el.ty, MI_INT8 | MI_UTF8 | MI_UINT8) {
        return Err(Error::format(format!(
            "{what} stored as {}, not a string",
            type_name(el.ty)
        ))
        .with_offset(el.offset));
    }
    let text = el.data.split(|&b| b == 0).next().unwrap_or_default();
    if !text.is_ascii() {
        return Err(
            Error::format(format!("{what} is not ASCII text ({} bytes)", text.len()))
                .with_offset(el.offset),
        );
    }
    Ok(String::from_utf8_lossy(text).into_owned())
}

/// Reads the dimensions element: `miINT32`, or `miUINT32` without values of 2^31 or more.
fn dims_of(c: &Cursor<'_>, el: &Element<'_>) -> Result<Vec<usize>> {
    if !matches!(el.ty, MI_INT32 | MI_UINT32) || !el.data.len().is_multiple_of(4) {
        return Err(Error::format(format!(
            "array dimensions stored as {} of {} bytes, not miINT32",
            type_name(el.ty),
            el.data.len()
        ))
        .with_offset(el.offset));
    }
    let dims: Vec<i32> = el
        .data
        .chunks_exact(4)
        .map(|b| c.endian.i32([b[0], b[1], b[2], b[3]])) // ok: chunks of 4
        .collect();
    if let Some(bad) = dims.iter().find(|&&d| d < 0) {
        return Err(Error::format(format!(
            "negative array dimension {bad} (stored as {})",
            type_name(el.ty)
        ))
        .with_offset(el.offset));
    }
    Ok(at_least_2d(
        &dims.iter().map(|&d| d as usize).collect::<Vec<_>>(),
    ))
}

impl Decoder<'_> {
    /// The header of the `miMATRIX` whose data `c` covers; `None` for an empty `miMATRIX`
    /// (MATLAB writes those for empty cells items: an empty double).
    pub(crate) fn header(&self, c: &mut Cursor<'_>) -> Result<Option<Header>> {
        if c.at_end() {
            return Ok(None);
        }
        let flags_el = c.element("array flags")?;
        if flags_el.data.len() < 8 || !matches!(flags_el.ty, MI_UINT32 | MI_INT32) {
            return Err(Error::format(format!(
                "array flags stored as {} of {} bytes, not miUINT32 of 8",
                type_name(flags_el.ty),
                flags_el.data.len()
            ))
            .with_offset(flags_el.offset));
        }
        let word = |i: usize| {
            let b = flags_el.data.get(i * 4..i * 4 + 4).unwrap_or(&[0; 4]);
            c.endian.u32([b[0], b[1], b[2], b[3]]) // ok: 4 bytes (or the fallback)
        };
        let flags = word(0);
        let class = flags & 0xFF;
        if class == MX_OPAQUE {
            // Opaque objects: variable name, type system, class name, then the object's data.
            let name = ascii_name(&c.element("object name")?, "object name")?;
            let system = ascii_name(&c.element("type system")?, "object type system")?;
            let class_name = ascii_name(&c.element("class name")?, "object class name")?;
            return Ok(Some(Header {
                class,
                flags,
                dims: vec![1, 1],
                name,
                class_name: Some(class_name),
                type_system: Some(system),
            }));
        }
        let dims_el = c.element("array dimensions")?;
        let dims = dims_of(c, &dims_el)?;
        let name = ascii_name(&c.element("array name")?, "array name")?;
        let class_name = if class == MX_OBJECT {
            Some(ascii_name(
                &c.element("object class name")?,
                "object class name",
            )?)
        } else {
            None
        };
        Ok(Some(Header {
            class,
            flags,

            dims,
            name,
            class_name,
            type_system: None,
        }))
    }

    /// Decodes an `miMATRIX`'s data (the element's bytes): its name and value.
    pub(crate) fn matrix(
        &self,
        c: &mut Cursor<'_>,
        depth: usize,
        path: &str,
    ) -> Result<(String, MatValue)> {
        if depth >= MAX_DEPTH {
            return Err(c.error(format!("values nested deeper than {MAX_DEPTH} levels")));
        }
        let Some(h) = self.header(c)? else {
            let empty = NdArray::zeroed(DType::scalar(ScalarKind::Float(8)), &[0, 0], Order::F)?;
            return Ok((String::new(), MatValue::Numeric(empty)));
        };
        let here = match (path.is_empty(), h.name.is_empty()) {
            (true, _) => format!("/{}", h.name),
            (false, _) => path.to_string(),
        };
        let value = self
            .body(c, &h, depth, &here)
            .map_err(|e| match e.location().node {
                None => e.with_node(here.clone()),
                Some(_) => e,
            })?;
        Ok((h.name, value))
    }

    fn body(&self, c: &mut Cursor<'_>, h: &Header, depth: usize, path: &str) -> Result<MatValue> {
        match h.class {
            MX_CELL => {
                let n = self.count_within(c, h)?;
                let mut items = Vec::with_capacity(n);
                for i in 0..n {
                    items.push(self.sub_matrix(c, depth, &format!("{path}/{i}"))?);
                }
                Ok(MatValue::Cell(CellArray {
                    shape: h.dims.clone(),
                    items,
                }))
            }
            MX_STRUCT => self.structure(c, h, depth, path),
            MX_OBJECT => {
                let value = self.structure(c, h, depth, path)?;
                Ok(MatValue::Opaque(Opaque {
                    class: h.class_name.clone().unwrap_or_default(),
                    payload: Some(Box::new(value)),
                    note: "old-style MATLAB object stored as a struct of its properties; kept as \
                           stored"
                        .into(),
                }))
            }
            MX_CHAR => self.chars(c, h),
            MX_SPARSE => self.sparse(c, h),
            MX_FUNCTION => {
                let value = self.sub_matrix(c, depth, path)?;
                Ok(crate::object_values::function_handle(value))
            }
            MX_OPAQUE => {
                let value = self.sub_matrix(c, depth, path)?;
                let note = match h.type_system.as_deref() {
                    Some("MCOS") => MCOS_NOTE.to_string(),
                    other => format!(
                        "{} object (a type system sciio does not decode); kept as stored",
                        other.unwrap_or("opaque")
                    ),
                };
                Ok(MatValue::Opaque(Opaque {
                    class: h.class_name.clone().unwrap_or_default(),
                    payload: Some(Box::new(value)),
                    note,
                }))
            }
            class => {
                let Some(kind) = class_kind(class) else {
                    return Err(c.error(format!("unknown array class {class}")));
                };
                self.numeric(c, h, kind)
            }
        }
    }

    /// The next sub-element, which must be an `miMATRIX`, decoded.
    fn sub_matrix(&self, c: &mut Cursor<'_>, depth: usize, path: &str) -> Result<MatValue> {
        let el = c.element("array element")?;
        if el.ty != MI_MATRIX {
            return Err(Error::format(format!(
                "{} where an miMATRIX element was expected",
                type_name(el.ty)
            ))
            .with_offset(el.offset)
            .with_node(path.to_string()));
        }
        let mut inner = c.inner(&el);
        Ok(self.matrix(&mut inner, depth + 1, path)?.1)
    }

    /// The element count of a cell/struct, checked against the bytes left (each element
    /// takes at least an 8-byte tag).
    fn count_within(&self, c: &Cursor<'_>, h: &Header) -> Result<usize> {
        let n = h.count()?;
        if n > c.remaining() / 8 + 1 {
            return Err(c.error(format!(
                "{n} elements announced by size {:?}, but only {} bytes left",
                h.dims,
                c.remaining()
            )));
        }
        Ok(n)
    }

    fn structure(
        &self,
        c: &mut Cursor<'_>,
        h: &Header,
        depth: usize,
        path: &str,
    ) -> Result<MatValue> {
        let len_el = c.element("field name length")?;
        let len = match len_el.data {
            [a, b, cc, d, ..] if matches!(len_el.ty, MI_INT32 | MI_UINT32) => {
                c.endian.i32([*a, *b, *cc, *d])
            }
            _ => {
                return Err(Error::format(format!(
                    "field name length stored as {} of {} bytes",
                    type_name(len_el.ty),
                    len_el.data.len()
                ))
                .with_offset(len_el.offset))
            }
        };
        let names_el = c.element("field names")?;
        let names: Vec<String> = match len {
            l if l > 0 => names_el
                .data
                .chunks(l as usize)
                .map(|b| {
                    let t = b.split(|&x| x == 0).next().unwrap_or_default();
                    String::from_utf8_lossy(t).into_owned()
                })
                .collect(),
            0 if names_el.data.is_empty() => Vec::new(),
            _ => {
                return Err(
                    Error::format(format!("field name length {len}")).with_offset(len_el.offset)
                )
            }
        };
        let names = dedup_fields(names);
        let n = self.count_within(c, h)?;
        if !names.is_empty() && n > c.remaining() / (8 * names.len()) + 1 {
            return Err(c.error(format!(
                "{n} struct elements of {} fields, but only {} bytes left",
                names.len(),
                c.remaining()
            )));
        }
        let mut elements = Vec::with_capacity(n);
        for i in 0..n {
            let mut row = Vec::with_capacity(names.len());
            for f in &names {
                let at = if n == 1 {
                    format!("{path}/{f}")
                } else {
                    format!("{path}/{i}/{f}")
                };
                row.push(self.sub_matrix(c, depth, &at)?);
            }
            elements.push(row);
        }
        Ok(MatValue::Struct(StructArray {
            shape: h.dims.clone(),
            fields: names,
            elements,
        }))
    }

    fn numeric(&self, c: &mut Cursor<'_>, h: &Header, kind: ScalarKind) -> Result<MatValue> {
        let n = h.count()?;
        let real_el = c.element("real part")?;
        let real = self.values(c.endian, &real_el, kind, n)?;
        if h.logical() {
            let bools: Vec<u8> = match kind.itemsize() {
                0 => Vec::new(),
                size => real
                    .chunks(size)
                    .map(|v| u8::from(v.iter().any(|&b| b != 0)))
                    .collect(),
            };
            let a =
                NdArray::from_byte_vec(DType::scalar(ScalarKind::Bool), &h.dims, Order::F, bools)?;
            return Ok(MatValue::Logical(a));
        }
        if !h.complex() {
            let a = NdArray::from_byte_vec(DType::scalar(kind), &h.dims, Order::F, real)?;
            return Ok(MatValue::Numeric(a));
        }
        let imag_el = c.element("imaginary part")?;
        let imag = self.values(c.endian, &imag_el, kind, n)?;
        let (ckind, size) = match kind {
            ScalarKind::Float(s) => (ScalarKind::Complex(2 * s), usize::from(s)),
            other => {
                // Complex integers have no numpy kind: keep them as complex doubles (as
                // scipy.io does), which hold every value of up to 53 bits exactly.
                let re = integers_as_doubles(&real, other)?;
                let im = integers_as_doubles(&imag, other)?;
                return complex_of(&re, &im, &h.dims);
            }
        };
        let mut out = Vec::with_capacity(real.len() * 2);
        for (re, im) in real.chunks(size).zip(imag.chunks(size)) {
            out.extend_from_slice(re);
            out.extend_from_slice(im);
        }
        let a = NdArray::from_byte_vec(DType::scalar(ckind), &h.dims, Order::F, out)?;
        Ok(MatValue::Numeric(a))
    }

    /// An element's `n` values converted to `kind`, native byte order.
    fn values(
        &self,
        endian: Endian,
        el: &Element<'_>,
        kind: ScalarKind,
        n: usize,
    ) -> Result<Vec<u8>> {
        let src = storage_kind(el.ty).ok_or_else(|| {
            Error::format(format!("numeric data stored as {}", type_name(el.ty)))
                .with_offset(el.offset)
        })?;
        let size = src.itemsize();
        if !el.data.len().is_multiple_of(size) || el.data.len() / size != n {
            return Err(Error::format(format!(
                "{} values where the array's size needs {n} ({} of {} bytes)",
                el.data.len() / size,
                type_name(el.ty),
                el.data.len()
            ))
            .with_offset(el.offset));
        }
        self.limits.check_alloc(
            (n as u64).saturating_mul(kind.itemsize() as u64),
            "array data",
        )?;
        Ok(convert(el.data, src, endian, kind))
    }

    fn chars(&self, c: &mut Cursor<'_>, h: &Header) -> Result<MatValue> {
        let n = h.count()?;
        let el = c.element("char data")?;
        let codes: Vec<u32> = match el.ty {
            // Files in the wild store some chars with no bytes at all: blanks, as scipy reads
            // them.
            _ if el.data.is_empty() => {
                // The size comes from the dimensions alone: bounded before allocating.
                self.limits
                    .check_alloc((n as u64).saturating_mul(4), "char array")
                    .map_err(|e| e.with_offset(el.offset))?;
                vec![u32::from(b' '); n]
            }
            MI_UTF8 => String::from_utf8_lossy(el.data)
                .chars()
                .map(u32::from)
                .collect(),
            MI_UTF16 | MI_UINT16 | MI_UTF32 | MI_UINT32 | MI_INT8 | MI_UINT8 => {
                let kind = storage_kind(el.ty).unwrap_or(ScalarKind::UInt(1));
                let size = kind.itemsize();
                if !el.data.len().is_multiple_of(size) {
                    return Err(Error::format(format!(
                        "char data of {} bytes stored as {}",
                        el.data.len(),
                        type_name(el.ty)
                    ))
                    .with_offset(el.offset));
                }
                let native = convert(el.data, kind, c.endian, ScalarKind::UInt(4));
                native
                    .chunks_exact(4)
                    .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]])) // ok: chunks of 4
                    .map(|code| match el.ty {
                        MI_INT8 => code & 0xFF,
                        _ => code,
                    })
                    .collect()
            }
            _ => {
                // Chars stored as any other numeric type (doubles in some writers' files).
                let native = self.values(c.endian, &el, ScalarKind::UInt(4), n)?;
                native
                    .chunks_exact(4)
                    .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]])) // ok: chunks of 4
                    .collect()
            }
        };
        if codes.len() != n {
            return Err(Error::format(format!(
                "{} characters for a char array of size {:?}",
                codes.len(),
                h.dims
            ))
            .with_offset(el.offset));
        }
        Ok(MatValue::Char(CharArray {
            shape: h.dims.clone(),
            codes,
            numpy: None,
        }))
    }

    fn sparse(&self, c: &mut Cursor<'_>, h: &Header) -> Result<MatValue> {
        let [nrows, ncols] = h.dims[..] else {
            return Err(c.error(format!("sparse matrix of size {:?}, not 2-d", h.dims)));
        };
        let ir_el = c.element("sparse row indices (ir)")?;
        let jc_el = c.element("sparse column offsets (jc)")?;
        let ints = |el: &Element<'_>, what: &str| -> Result<Vec<u64>> {
            let kind = storage_kind(el.ty)
                .filter(|k| matches!(k, ScalarKind::Int(_) | ScalarKind::UInt(_)))
                .ok_or_else(|| {
                    Error::format(format!("{what} stored as {}", type_name(el.ty)))
                        .with_offset(el.offset)
                })?;
            if !el.data.len().is_multiple_of(kind.itemsize()) {
                return Err(Error::format(format!("{what} of {} bytes", el.data.len()))
                    .with_offset(el.offset));
            }
            let wide = convert(el.data, kind, c.endian, ScalarKind::Int(8));
            wide.chunks_exact(8)
                .map(|b| {
                    let v = i64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]); // ok: chunks of 8
                    u64::try_from(v).map_err(|_| {
                        Error::format(format!("negative value {v} in {what}"))
                            .with_offset(el.offset)
                    })
                })
                .collect()
        };
        let ir_all = ints(&ir_el, "sparse ir")?;
        let jc = ints(&jc_el, "sparse jc")?;
        if jc.len() != ncols.saturating_add(1) {
            return Err(Error::format(format!(
                "sparse jc has {} entries for {ncols} columns",
                jc.len()
            ))
            .with_offset(jc_el.offset));
        }
        let nnz = jc.last().copied().unwrap_or(0) as usize;
        let ir = ir_all.get(..nnz).map(<[u64]>::to_vec).ok_or_else(|| {
            Error::format(format!(
                "sparse ir has {} entries for {nnz} values",
                ir_all.len()
            ))
            .with_offset(ir_el.offset)
        })?;
        let pr_el = c.element("sparse values")?;
        let endian = c.endian;
        let take_nnz = |el: &Element<'_>, kind: ScalarKind| -> Result<Vec<u8>> {
            let src = storage_kind(el.ty).ok_or_else(|| {
                Error::format(format!("sparse values stored as {}", type_name(el.ty)))
                    .with_offset(el.offset)
            })?;
            let size = src.itemsize();
            let bytes = el.data.get(..nnz.saturating_mul(size)).ok_or_else(|| {
                Error::format(format!(
                    "sparse values: {} bytes for {nnz} values",
                    el.data.len()
                ))
                .with_offset(el.offset)
            })?;
            Ok(convert(bytes, src, endian, kind))
        };
        let f8 = ScalarKind::Float(8);
        let data = if h.logical() && pr_el.data.len() == nnz {
            // Logical values one byte each (whatever type the tag names, as scipy reads them).
            let bools: Vec<u8> = pr_el.data.iter().map(|&b| u8::from(b != 0)).collect();
            NdArray::from_byte_vec(DType::scalar(ScalarKind::Bool), &[nnz], Order::F, bools)?
        } else if h.logical() {
            let re = take_nnz(&pr_el, f8)?;
            let bools: Vec<u8> = to_f64(&re, f8)
                .iter()
                .map(|&v| u8::from(v != 0.0))
                .collect();
            NdArray::from_byte_vec(DType::scalar(ScalarKind::Bool), &[nnz], Order::F, bools)?
        } else if h.complex() {
            let pi_el = c.element("sparse imaginary values")?;
            let re = to_f64(&take_nnz(&pr_el, f8)?, f8);
            let im = to_f64(&take_nnz(&pi_el, f8)?, f8);
            match complex_of(&re, &im, &[nnz])? {
                MatValue::Numeric(a) => a,
                _ => return Err(c.error("complex sparse values")),
            }
        } else {
            NdArray::from_byte_vec(DType::scalar(f8), &[nnz], Order::F, take_nnz(&pr_el, f8)?)?
        };
        let m = SparseMatrix {
            nrows,
            ncols,
            ir,
            jc,
            data,
        };
        m.check().map_err(|e| e.with_offset(ir_el.offset))?;
        Ok(MatValue::Sparse(m))
    }
}

/// Field names made unique as scipy makes them: the k-th repeat of `name` becomes `_k_name`.
fn dedup_fields(names: Vec<String>) -> Vec<String> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    names
        .into_iter()
        .map(|name| {
            let count = seen.entry(name.clone()).or_insert(0);
            *count += 1;
            match *count {
                1 => name,
                k => format!("_{}_{name}", k - 1),
            }
        })
        .collect()
}

fn complex_of(re: &[f64], im: &[f64], dims: &[usize]) -> Result<MatValue> {
    let mut out = Vec::with_capacity(re.len() * 16);
    for (r, i) in re.iter().zip(im) {
        out.extend_from_slice(&r.to_ne_bytes());
        out.extend_from_slice(&i.to_ne_bytes());
    }
    let a = NdArray::from_byte_vec(DType::scalar(ScalarKind::Complex(16)), dims, Order::F, out)?;
    Ok(MatValue::Numeric(a))
}

/// Native values of `kind` as f64.
fn to_f64(bytes: &[u8], kind: ScalarKind) -> Vec<f64> {
    let wide = convert_native(bytes, kind, ScalarKind::Float(8));
    wide.chunks_exact(8)
        .map(|b| f64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])) // ok: chunks of 8
        .collect()
}

/// Native numbers of integer `kind` (parts of complex integers, which numpy has no kind for)
/// as the doubles scipy.io gives: an error, rather than a rounded value, for a 64-bit one
/// beyond 2^53.
pub(super) fn integers_as_doubles(bytes: &[u8], kind: ScalarKind) -> Result<Vec<f64>> {
    if !exact_in_f64(bytes, kind) {
        return Err(Error::unsupported(format!(
            "a complex {}-bit integer value beyond 2^53, which a complex double (numpy's \
             nearest type) cannot hold exactly",
            8 * kind.itemsize()
        )));
    }
    Ok(to_f64(bytes, kind))
}

/// Whether every native value of integer `kind` in `bytes` is a double exactly (up to 2^53).
fn exact_in_f64(bytes: &[u8], kind: ScalarKind) -> bool {
    const LIMIT: u64 = 1 << 53;
    if kind.itemsize() < 8 {
        return true;
    }
    bytes
        .chunks_exact(kind.itemsize())
        .all(|b| match get(b, kind) {
            Num::I(v) => v.unsigned_abs() <= LIMIT,
            Num::U(v) => v <= LIMIT,
            Num::F(_) => true,
        })
}

#[derive(Clone, Copy)]
enum Num {
    I(i64),
    U(u64),
    F(f64),
}

fn get(b: &[u8], kind: ScalarKind) -> Num {
    let mut buf = [0u8; 8];
    let n = b.len().min(8);
    buf[..n].copy_from_slice(&b[..n]);
    match kind {
        ScalarKind::Int(1) => Num::I(i64::from(buf[0] as i8)),
        ScalarKind::Int(2) => Num::I(i64::from(i16::from_ne_bytes([buf[0], buf[1]]))),
        ScalarKind::Int(4) => Num::I(i64::from(i32::from_ne_bytes([
            buf[0], buf[1], buf[2], buf[3],
        ]))),
        ScalarKind::Int(_) => Num::I(i64::from_ne_bytes(buf)),
        ScalarKind::UInt(1) => Num::U(u64::from(buf[0])),
        ScalarKind::UInt(2) => Num::U(u64::from(u16::from_ne_bytes([buf[0], buf[1]]))),
        ScalarKind::UInt(4) => Num::U(u64::from(u32::from_ne_bytes([
            buf[0], buf[1], buf[2], buf[3],
        ]))),
        ScalarKind::UInt(_) => Num::U(u64::from_ne_bytes(buf)),
        ScalarKind::Float(4) => Num::F(f64::from(f32::from_ne_bytes([
            buf[0], buf[1], buf[2], buf[3],
        ]))),
        _ => Num::F(f64::from_ne_bytes(buf)),
    }
}

fn put(out: &mut Vec<u8>, v: Num, kind: ScalarKind) {
    macro_rules! cast {
        ($t:ty) => {
            match v {
                Num::I(x) => out.extend_from_slice(&(x as $t).to_ne_bytes()),
                Num::U(x) => out.extend_from_slice(&(x as $t).to_ne_bytes()),
                Num::F(x) => out.extend_from_slice(&(x as $t).to_ne_bytes()),
            }
        };
    }
    match kind {
        ScalarKind::Int(1) => cast!(i8),
        ScalarKind::Int(2) => cast!(i16),
        ScalarKind::Int(4) => cast!(i32),
        ScalarKind::Int(_) => cast!(i64),
        ScalarKind::UInt(1) => cast!(u8),
        ScalarKind::UInt(2) => cast!(u16),
        ScalarKind::UInt(4) => cast!(u32),
        ScalarKind::UInt(_) => cast!(u64),
        ScalarKind::Float(4) => cast!(f32),
        _ => cast!(f64),
    }
}

/// Values of `src` kind in `endian` order converted to `dst` kind, native order (a copy, with
/// byte swaps when needed, for the same kind).
pub(crate) fn convert(bytes: &[u8], src: ScalarKind, endian: Endian, dst: ScalarKind) -> Vec<u8> {
    let size = src.itemsize().max(1);
    if endian.swap() && size > 1 {
        let mut swapped = bytes.to_vec();
        for chunk in swapped.chunks_exact_mut(size) {
            chunk.reverse();
        }
        return convert_native(&swapped, src, dst);
    }
    convert_native(bytes, src, dst)
}

fn convert_native(bytes: &[u8], src: ScalarKind, dst: ScalarKind) -> Vec<u8> {
    if src == dst {
        return bytes.to_vec();
    }
    let size = src.itemsize().max(1);
    let mut out = Vec::with_capacity(bytes.len() / size * dst.itemsize());
    for b in bytes.chunks_exact(size) {
        put(&mut out, get(b, src), dst);
    }
    out
}

/// A piece of a streamed variable's elements (`plain.rs`, `v4.rs`) from the bytes of `real`
/// (and `imag`) parts: numbers of `item` bytes reversed when `swap`, a real number followed
/// by its imaginary one.
pub(crate) fn interleave(real: &[u8], imag: Option<&[u8]>, item: usize, swap: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(real.len() * if imag.is_some() { 2 } else { 1 });
    match imag {
        None => out.extend_from_slice(real),
        Some(imag) => {
            for (r, i) in real.chunks_exact(item).zip(imag.chunks_exact(item)) {
                out.extend_from_slice(r);
                out.extend_from_slice(i);
            }
        }
    }
    if swap && item > 1 {
        out.chunks_exact_mut(item).for_each(<[u8]>::reverse);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex_integers_become_doubles_only_when_exact() {
        let ints = |v: &[i64]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let limit = 1i64 << 53;
        assert!(exact_in_f64(&ints(&[0, limit, -limit]), ScalarKind::Int(8)));
        assert!(!exact_in_f64(&ints(&[0, limit + 1]), ScalarKind::Int(8)));
        assert!(!exact_in_f64(&ints(&[-limit - 1]), ScalarKind::Int(8)));
        let big = ((1u64 << 53) + 1).to_ne_bytes();
        assert!(!exact_in_f64(&big, ScalarKind::UInt(8)));
        assert!(exact_in_f64(&i32::MIN.to_ne_bytes(), ScalarKind::Int(4)));
    }
}
