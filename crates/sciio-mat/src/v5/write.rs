//! Writing Level-5 MAT files: v7 (each variable one zlib-compressed `miCOMPRESSED` element,
//! MATLAB's default `save` format) and v5 (uncompressed, what `scipy.io.savemat` writes), in
//! the layout MATLAB and scipy use: little-endian, the small-element format for data of at
//! most four bytes, every element padded to eight bytes, numeric data in the class's own type.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use sciio_core::{Error, NdArray, Order, Result, ScalarKind};

use super::consts::{MX_CELL, MX_CHAR, MX_SPARSE, MX_STRUCT};
use super::cursor::{
    MI_COMPRESSED, MI_DOUBLE, MI_INT16, MI_INT32, MI_INT64, MI_INT8, MI_MATRIX, MI_SINGLE,
    MI_UINT16, MI_UINT32, MI_UINT64, MI_UINT8, MI_UTF16, MI_UTF8,
};
use crate::value::{at_least_2d, CharArray, MatValue, SparseMatrix, StructArray};

mod records;
mod text;
mod tree;

/// Largest variable a Level-5 file holds (MATLAB's limit: 2 GB; sizes are 32-bit).
pub(crate) const MAX_VARIABLE: u64 = (1 << 31) - 1;

/// A Level-5 MAT file being written.
#[derive(Debug)]
pub(crate) struct Level5Writer {
    out: Option<BufWriter<File>>,
    path: PathBuf,
    /// zlib level for v7; `None` writes v5 (uncompressed).
    level: Option<u32>,
}

impl Level5Writer {
    /// Creates `path` and writes the 128-byte header.
    pub(crate) fn create(path: &Path, level: Option<u32>, platform: &str) -> Result<Self> {
        let file = File::create(path).map_err(|e| Error::io("cannot create", e).with_file(path))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(&header(platform, crate::header::now()))
            .map_err(|e| Error::io("cannot write the MAT header", e).with_file(path))?;
        Ok(Level5Writer {
            out: Some(out),
            path: path.to_path_buf(),
            level,
        })
    }

    /// Appends variable `name`.
    pub(crate) fn write(&mut self, name: &str, value: &MatValue) -> Result<()> {
        check_name(name)?;
        let size = estimate(value);
        if size > MAX_VARIABLE {
            return Err(Error::unsupported(format!(
                "the variable needs about {size} bytes, over the 2 GB a MAT v5/v7 variable can \
                 hold: write MAT v7.3 instead (--mat-version 7.3)"
            )));
        }
        let mut body = Vec::with_capacity(size as usize + 64);
        matrix(&mut body, name, value)?;
        if body.len() as u64 > MAX_VARIABLE {
            return Err(Error::unsupported(
                "the variable is over the 2 GB a MAT v5/v7 variable can hold: write MAT v7.3 \
                 instead (--mat-version 7.3)",
            ));
        }
        self.put_whole(&body)
    }

    /// Writes a variable's whole `miMATRIX` element `body` (v7: deflated in one
    /// `miCOMPRESSED` element).
    pub(super) fn put_whole(&mut self, body: &[u8]) -> Result<()> {
        let level = self.level;
        let out = self.out()?;
        let io = |e| Error::io("cannot write", e);
        match level {
            None => out.write_all(body).map_err(io),
            Some(level) => {
                let packed = zlib(body, level)?;
                let len = u32::try_from(packed.len()).map_err(|_| {
                    Error::unsupported("the compressed variable is over 4 GB: write MAT v7.3")
                })?;
                out.write_all(&MI_COMPRESSED.to_le_bytes())
                    .and_then(|()| out.write_all(&len.to_le_bytes()))
                    .and_then(|()| out.write_all(&packed))
                    .map_err(io)
            }
        }
    }

    pub(super) fn out(&mut self) -> Result<&mut BufWriter<File>> {
        self.out
            .as_mut()
            .ok_or_else(|| Error::invalid_input("the writer is finished"))
    }

    pub(crate) fn finish(&mut self) -> Result<()> {
        if let Some(mut out) = self.out.take() {
            out.flush()
                .map_err(|e| Error::io("cannot write", e).with_file(&self.path))?;
        }
        Ok(())
    }
}

/// A variable name a Level-5 file holds: at most 63 ASCII characters.
fn check_name(name: &str) -> Result<()> {
    if !name.is_ascii() || name.len() > 63 {
        return Err(Error::unsupported(format!(
            "variable name {name:?}: MAT v5/v7 names are at most 63 ASCII characters"
        )));
    }
    Ok(())
}

/// Variables from this size on are deflated pigz-style on all cores ([`zlib`]).
pub(super) const PARALLEL_FROM: usize = 4 << 20;

impl Level5Writer {
    /// Appends numeric or logical variable `name` given piece by piece: the bytes
    /// [`Level5Writer::write`] makes of the whole array, written (v7: deflated) as they come.
    /// Small variables are gathered and written whole.
    pub(crate) fn write_pieces(
        &mut self,
        name: &str,
        mut array: crate::array_pieces::ArrayPieces<'_>,
    ) -> Result<()> {
        let (_, nbytes) = array
            .size()
            .ok_or_else(|| Error::invalid_input("the array's size overflows"))?;
        if nbytes < PARALLEL_FROM as u64 || !name.is_ascii() || name.len() > 63 {
            let value = MatValue::numeric(array.gather()?)?;
            return self.write(name, &value);
        }
        let size = 64 + nbytes;
        if size > MAX_VARIABLE {
            return Err(Error::unsupported(format!(
                "the variable needs about {size} bytes, over the 2 GB a MAT v5/v7 variable can \
                 hold: write MAT v7.3 instead (--mat-version 7.3)"
            )));
        }
        let (head, parts) = numeric_head(name, array.kind, &array.shape, nbytes)?;
        self.put_streamed(&mut |put| {
            put(&head)?;
            stream_data(&mut array, &parts, put)
        })
    }

    /// Writes a variable's `miMATRIX` element as `body` gives its bytes in order (v7:
    /// deflated pigz-style as they come into one `miCOMPRESSED` element, its size patched
    /// in at the end): the bytes [`Level5Writer::put_whole`] writes of the whole element,
    /// when it is at least [`PARALLEL_FROM`] long.
    pub(super) fn put_streamed(
        &mut self,
        body: &mut dyn FnMut(&mut crate::array_pieces::PutBytes<'_>) -> Result<()>,
    ) -> Result<()> {
        let level = self.level;
        let out = self.out()?;
        let io = |e| Error::io("cannot write", e);
        let Some(level) = level else {
            return body(&mut |b| out.write_all(b).map_err(io));
        };
        use std::io::Seek;
        out.write_all(&MI_COMPRESSED.to_le_bytes()).map_err(io)?;
        let at = out.stream_position().map_err(io)?;
        out.write_all(&0u32.to_le_bytes()).map_err(io)?;
        let mut z = sciio_zip::ZlibParallelWriter::new(
            Counted {
                out: &mut *out,
                n: 0,
            },
            level.min(9),
            sciio_zip::DEFAULT_BLOCK_SIZE,
        )?;
        body(&mut |b| z.write_all(b))?;
        let packed = z.finish()?.n;
        let len = u32::try_from(packed).map_err(|_| {
            Error::unsupported("the compressed variable is over 4 GB: write MAT v7.3")
        })?;
        out.seek(std::io::SeekFrom::Start(at)).map_err(io)?;
        out.write_all(&len.to_le_bytes()).map_err(io)?;
        out.seek(std::io::SeekFrom::End(0)).map_err(io)?;
        Ok(())
    }
}

/// A writer counting the bytes passed on.
struct Counted<'a, W: Write> {
    out: &'a mut W,
    n: u64,
}

impl<W: Write> Write for Counted<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The data parts of a numeric element: the whole values, or the real then the imaginary
/// parts of complex ones (`Some(part size)`).
struct Parts {
    complex_part: Option<usize>,
    item: usize,
}

/// The `miMATRIX` element of a numeric or logical array of `nbytes` bytes up to its data:
/// tag, array flags, dimensions, name and the tag of the (first) data element.
fn numeric_head(
    name: &str,
    kind: ScalarKind,
    shape: &[usize],
    nbytes: u64,
) -> Result<(Vec<u8>, Parts)> {
    let (class, complex, logical) = match kind {
        ScalarKind::Bool => (9, false, true),
        k => {
            let (class, complex) = numeric_class(k)?;
            (class, complex, false)
        }
    };
    let ty = match kind {
        ScalarKind::Bool => MI_UINT8,
        k => data_type(k),
    };
    let flags = class | u32::from(complex) << 11 | u32::from(logical) << 9;
    let mut head = matrix_head(flags, shape, name)?;
    let part_bytes = if complex { nbytes / 2 } else { nbytes };
    let data_elements = if complex { 2 } else { 1 };
    let padded = part_bytes.div_ceil(8) * 8;
    let len = (head.len() as u64 - 8) + data_elements * (8 + padded);
    // The whole array's check (`Level5Writer::write`) of the whole element.
    if len + 8 > MAX_VARIABLE {
        return Err(Error::unsupported(
            "the variable is over the 2 GB a MAT v5/v7 variable can hold: write MAT v7.3 \
             instead (--mat-version 7.3)",
        ));
    }
    let len = u32::try_from(len).map_err(|_| {
        Error::unsupported("the variable is over 4 GB: write MAT v7.3 (--mat-version 7.3)")
    })?;
    head[4..8].copy_from_slice(&len.to_le_bytes());
    let item = kind.itemsize();
    let parts = Parts {
        complex_part: complex.then_some(item / 2),
        item,
    };
    head.extend_from_slice(&ty.to_le_bytes());
    head.extend_from_slice(&(part_bytes as u32).to_le_bytes());
    Ok((head, parts))
}

/// Bytes of elements filled at a time.
/// A piece and the source's blocks behind it (about three pieces in all) are most of a
/// streamed conversion's memory: 16 MiB keeps it flat from arrays of 16 MiB up (32 MiB
/// made a 1 GB data frame's conversion into MAT take 55 MiB more than a 128 MiB one's) and
/// costs no measurable time.
const PIECE_BYTES: usize = 16 << 20;

/// The data elements' bytes after [`numeric_head`]: the elements in pieces (complex: the real
/// parts, then the tag and the imaginary parts), each element padded to 8 bytes.
fn stream_data(
    array: &mut crate::array_pieces::ArrayPieces<'_>,
    parts: &Parts,
    put: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let (elems, nbytes) = array
        .size()
        .ok_or_else(|| Error::invalid_input("the array's size overflows"))?;
    let item = parts.item.max(1);
    let per_piece = (PIECE_BYTES / item).max(1) as u64;
    let mut buf = Vec::new();
    let mut pass =
        |take: Option<(usize, usize)>, put: &mut dyn FnMut(&[u8]) -> Result<()>| -> Result<()> {
            let mut first = 0u64;
            let mut part = Vec::new();
            while first < elems {
                let n = per_piece.min(elems - first);
                buf.clear();
                buf.resize(n as usize * item, 0);
                (array.fill)(first, &mut buf)?;
                match take {
                    None => put(&buf)?,
                    Some((at, size)) => {
                        part.clear();
                        part.extend(buf.chunks_exact(item).flat_map(|e| &e[at..at + size]));
                        put(&part)?;
                    }
                }
                first += n;
            }
            Ok(())
        };
    let pad = |bytes: u64| vec![0u8; ((8 - bytes % 8) % 8) as usize];
    match parts.complex_part {
        None => {
            pass(None, put)?;
            put(&pad(nbytes))
        }
        Some(size) => {
            pass(Some((0, size)), put)?;
            put(&pad(nbytes / 2))?;
            let ty = data_type(array.kind);
            let mut tag = ty.to_le_bytes().to_vec();
            tag.extend_from_slice(&((nbytes / 2) as u32).to_le_bytes());
            put(&tag)?;
            pass(Some((size, size)), put)?;
            put(&pad(nbytes / 2))
        }
    }
}

/// zlib-compresses `data` (one stream, as MATLAB writes one per variable): large variables
/// pigz-style on all cores (one valid stream, about the same size).
fn zlib(data: &[u8], level: u32) -> Result<Vec<u8>> {
    // Small variables (most of a typical file) at level 9: as fast at this size, and zlib-rs's
    // lower levels make tiny streams ~10 % larger than zlib's (scipy's, MATLAB's).
    let level = if data.len() < 1 << 16 && level > 0 {
        9
    } else {
        level
    };
    if data.len() >= PARALLEL_FROM {
        return sciio_zip::zlib_parallel(data, level.min(9), sciio_zip::DEFAULT_BLOCK_SIZE);
    }
    let mut e = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(data.len() / 2 + 64),
        flate2::Compression::new(level.min(9)),
    );
    e.write_all(data)
        .and_then(|()| e.finish())
        .map_err(|e| Error::io("cannot compress", e))
}

/// The 128-byte Level-5 header (little-endian writer, no subsystem).
pub(crate) fn header(platform: &str, unix_seconds: u64) -> [u8; 128] {
    let platform: String = platform
        .chars()
        .filter(|c| c.is_ascii() && !c.is_ascii_control())
        .take(40)
        .collect();
    let text = format!(
        "MATLAB 5.0 MAT-file, Platform: {platform}, Created on: {}",
        crate::header::ctime(unix_seconds)
    );
    let mut out = [b' '; 128];
    let n = text.len().min(116);
    out[..n].copy_from_slice(&text.as_bytes()[..n]);
    out[116..124].fill(0);
    out[124..].copy_from_slice(b"\x00\x01IM");
    out
}

/// Bytes a value's data takes (to refuse what a Level-5 file cannot hold before encoding).
fn estimate(value: &MatValue) -> u64 {
    let overhead = 64u64;
    overhead
        + match value {
            MatValue::Numeric(a) | MatValue::Logical(a) => a.as_bytes().len() as u64,
            MatValue::Char(c) => 2 * c.codes.len() as u64,
            MatValue::Cell(c) => c.items.iter().map(estimate).sum(),
            MatValue::Struct(s) => {
                s.elements.iter().flatten().map(estimate).sum::<u64>() + 64 * s.fields.len() as u64
            }
            MatValue::Sparse(s) => {
                s.data.as_bytes().len() as u64 + 4 * (s.ir.len() + s.jc.len()) as u64
            }
            _ => 0,
        }
}

/// The `miMATRIX` element of a streamed array up to what follows its name: its tag (the
/// length left 0 for the caller), array flags (`flags`: class and flag bits), dimensions and
/// name.
pub(super) fn matrix_head(flags: u32, shape: &[usize], name: &str) -> Result<Vec<u8>> {
    let dims = at_least_2d(shape);
    let mut head = Vec::with_capacity(128);
    head.extend_from_slice(&MI_MATRIX.to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes());
    let mut fw = flags.to_le_bytes().to_vec();
    fw.extend_from_slice(&0u32.to_le_bytes());
    element(&mut head, MI_UINT32, &fw);
    element(
        &mut head,
        MI_INT32,
        &i32s(dims.iter().map(|&d| d as u64), "dimension")?,
    );
    element(&mut head, MI_INT8, name.as_bytes());
    Ok(head)
}

/// Appends a data element (small format for at most 4 bytes), padded to 8 bytes.
pub(super) fn element(out: &mut Vec<u8>, ty: u32, data: &[u8]) {
    if data.len() <= 4 {
        out.extend_from_slice(&(ty | (data.len() as u32) << 16).to_le_bytes());
        out.extend_from_slice(data);
        out.resize(out.len() + 4 - data.len(), 0);
        return;
    }
    out.extend_from_slice(&ty.to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
    out.resize(out.len() + (8 - data.len() % 8) % 8, 0);
}

pub(super) fn i32s(values: impl IntoIterator<Item = u64>, what: &str) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for v in values {
        let v = i32::try_from(v).map_err(|_| {
            Error::unsupported(format!(
                "{what} {v} is over what MAT v5/v7 can hold: write MAT v7.3 (--mat-version 7.3)"
            ))
        })?;
        out.extend_from_slice(&v.to_le_bytes());
    }
    Ok(out)
}

/// Writes one `miMATRIX` element: tag, array flags, dimensions, name, then the class's data.
pub(super) fn matrix(out: &mut Vec<u8>, name: &str, value: &MatValue) -> Result<()> {
    let start = out.len();
    out.extend_from_slice(&MI_MATRIX.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    let dims = at_least_2d(&value.matlab_shape());
    let (class, complex, logical, nzmax) = match value {
        MatValue::Numeric(a) => {
            let kind = scalar_kind(a)?;
            let (class, complex) = numeric_class(kind)?;
            (class, complex, false, 0)
        }
        MatValue::Logical(_) => (9, false, true, 0),
        MatValue::Char(_) => (MX_CHAR, false, false, 0),
        MatValue::Cell(_) => (MX_CELL, false, false, 0),
        MatValue::Struct(_) => (MX_STRUCT, false, false, 0),
        MatValue::Sparse(s) => (
            MX_SPARSE,
            s.kind() == crate::value::SparseKind::Complex,
            s.kind() == crate::value::SparseKind::Logical,
            s.ir.len().max(1) as u32,
        ),
        MatValue::Opaque(_) | MatValue::Object(_) => {
            return Err(Error::unsupported(format!(
                "writing MATLAB objects ({}) is not supported; only MATLAB can create them",
                value.class().name()
            )))
        }
    };
    let flags = class | u32::from(complex) << 11 | u32::from(logical) << 9;
    let mut fw = flags.to_le_bytes().to_vec();
    fw.extend_from_slice(&nzmax.to_le_bytes());
    element(out, MI_UINT32, &fw);
    element(
        out,
        MI_INT32,
        &i32s(dims.iter().map(|&d| d as u64), "dimension")?,
    );
    element(out, MI_INT8, name.as_bytes());
    match value {
        MatValue::Numeric(a) => numeric(out, a)?,
        MatValue::Logical(a) => element(out, MI_UINT8, native_f(a).as_bytes()),
        MatValue::Char(c) => chars(out, c)?,
        MatValue::Cell(c) => {
            for item in &c.items {
                matrix(out, "", item)?;
            }
        }
        MatValue::Struct(s) => structure(out, s)?,
        MatValue::Sparse(s) => sparse(out, s)?,
        MatValue::Opaque(_) | MatValue::Object(_) => {}
    }
    let len = out.len() - start - 8;
    let len = u32::try_from(len).map_err(|_| {
        Error::unsupported("the variable is over 4 GB: write MAT v7.3 (--mat-version 7.3)")
    })?;
    if let Some(slot) = out.get_mut(start + 4..start + 8) {
        slot.copy_from_slice(&len.to_le_bytes());
    }
    Ok(())
}

fn scalar_kind(a: &NdArray) -> Result<ScalarKind> {
    a.dtype()
        .as_scalar()
        .map(|s| s.kind)
        .ok_or_else(|| Error::unsupported("structured dtypes have no MATLAB class"))
}

/// The array class of a numeric kind and whether it is complex.
fn numeric_class(kind: ScalarKind) -> Result<(u32, bool)> {
    Ok(match kind {
        ScalarKind::Float(8) => (6, false),
        ScalarKind::Complex(16) => (6, true),
        ScalarKind::Float(4) => (7, false),
        ScalarKind::Complex(8) => (7, true),
        ScalarKind::Int(1) => (8, false),
        ScalarKind::UInt(1) => (9, false),
        ScalarKind::Int(2) => (10, false),
        ScalarKind::UInt(2) => (11, false),
        ScalarKind::Int(4) => (12, false),
        ScalarKind::UInt(4) => (13, false),
        ScalarKind::Int(8) => (14, false),
        ScalarKind::UInt(8) => (15, false),
        other => {
            return Err(Error::unsupported(format!(
                "numpy kind {other:?} has no MATLAB class"
            )))
        }
    })
}

fn data_type(kind: ScalarKind) -> u32 {
    match kind {
        ScalarKind::Float(4) | ScalarKind::Complex(8) => MI_SINGLE,
        ScalarKind::Int(1) => MI_INT8,
        ScalarKind::UInt(1) => MI_UINT8,
        ScalarKind::Int(2) => MI_INT16,
        ScalarKind::UInt(2) => MI_UINT16,
        ScalarKind::Int(4) => MI_INT32,
        ScalarKind::UInt(4) => MI_UINT32,
        ScalarKind::Int(8) => MI_INT64,
        ScalarKind::UInt(8) => MI_UINT64,
        _ => MI_DOUBLE,
    }
}

/// Numeric data in column-major order, little-endian; complex as real then imaginary parts.
fn numeric(out: &mut Vec<u8>, a: &NdArray) -> Result<()> {
    let kind = scalar_kind(a)?;
    let mut f = native_f(a);
    if cfg!(target_endian = "big") {
        f = Cow::Owned(NdArray::from_bytes(
            f.dtype().clone(),
            f.shape(),
            Order::F,
            &swap(&f),
        )?);
    }
    let bytes = f.as_bytes();
    match kind {
        ScalarKind::Complex(n) => {
            let part = usize::from(n / 2);
            let (mut re, mut im) = (Vec::with_capacity(bytes.len() / 2), Vec::new());
            im.reserve(bytes.len() / 2);
            for pair in bytes.chunks_exact(2 * part) {
                let (r, i) = pair.split_at(part);
                re.extend_from_slice(r);
                im.extend_from_slice(i);
            }
            element(out, data_type(kind), &re);
            element(out, data_type(kind), &im);
        }
        _ => element(out, data_type(kind), bytes),
    }
    Ok(())
}

/// `a` in native byte order and column-major order: `a` itself when it already is (a large
/// array is not copied before it is encoded).
fn native_f(a: &NdArray) -> Cow<'_, NdArray> {
    let column_major = a.order() == Order::F || a.shape().iter().filter(|&&d| d > 1).count() <= 1;
    match (a.dtype().is_native(), column_major) {
        (true, true) => Cow::Borrowed(a),
        (true, false) => Cow::Owned(a.to_order(Order::F)),
        (false, true) => Cow::Owned(a.to_native()),
        (false, false) => Cow::Owned(a.to_native().to_order(Order::F)),
    }
}

/// `a`'s bytes with every scalar (or complex part) byte-swapped.
fn swap(a: &NdArray) -> Vec<u8> {
    let size = match a.dtype().as_scalar().map(|s| s.kind) {
        Some(ScalarKind::Complex(n)) => usize::from(n / 2),
        Some(k) => k.itemsize(),
        None => 1,
    }
    .max(1);
    let mut bytes = a.as_bytes().to_vec();
    for c in bytes.chunks_exact_mut(size) {
        c.reverse();
    }
    bytes
}

/// Char data as UTF-8 (`miUTF8`, as `scipy.io.savemat` writes it; scipy misreads non-ASCII
/// `miUINT16` char data); codes that are no Unicode scalar value (lone surrogates) as UTF-16.
fn chars(out: &mut Vec<u8>, c: &CharArray) -> Result<()> {
    c.check()?;
    if let Some(text) = c
        .codes
        .iter()
        .map(|&code| char::from_u32(code))
        .collect::<Option<String>>()
    {
        element(out, MI_UTF8, text.as_bytes());
        return Ok(());
    }
    let mut data = Vec::with_capacity(c.codes.len() * 2);
    for &code in &c.codes {
        let unit = u16::try_from(code).map_err(|_| {
            Error::unsupported(format!("character code {code:#x} is not a character"))
        })?;
        data.extend_from_slice(&unit.to_le_bytes());
    }
    element(out, MI_UTF16, &data);
    Ok(())
}

fn structure(out: &mut Vec<u8>, s: &StructArray) -> Result<()> {
    struct_field_names(out, &s.fields)?;
    for e in &s.elements {
        if e.len() != s.fields.len() {
            return Err(Error::invalid_input(format!(
                "struct element has {} values for {} fields",
                e.len(),
                s.fields.len()
            )));
        }
        for v in e {
            matrix(out, "", v)?;
        }
    }
    Ok(())
}

/// A struct's field names, checked: the name length and names elements before its values.
pub(super) fn struct_field_names(out: &mut Vec<u8>, fields: &[String]) -> Result<()> {
    for f in fields {
        if f.is_empty() || f.len() > 63 || !f.is_ascii() || f.contains('\0') {
            return Err(Error::unsupported(format!(
                "field name {f:?}: MAT v5/v7 field names are 1 to 63 ASCII characters"
            )));
        }
    }
    let width = fields.iter().map(String::len).max().unwrap_or(0) + 1;
    element(out, MI_INT32, &(width as u32).to_le_bytes());
    let mut names = vec![0u8; width * fields.len()];
    for (slot, f) in names.chunks_mut(width).zip(fields) {
        slot[..f.len()].copy_from_slice(f.as_bytes());
    }
    element(out, MI_INT8, &names);
    Ok(())
}

fn sparse(out: &mut Vec<u8>, s: &SparseMatrix) -> Result<()> {
    s.check()?;
    element(
        out,
        MI_INT32,
        &i32s(s.ir.iter().copied(), "sparse row index")?,
    );
    element(
        out,
        MI_INT32,
        &i32s(s.jc.iter().copied(), "sparse column offset")?,
    );
    let data = s.data.to_native();
    let bytes = data.as_bytes();
    match s.kind() {
        crate::value::SparseKind::Logical => {
            // One byte per value, as MATLAB and scipy store logical sparse values.
            let ones: Vec<u8> = bytes.iter().map(|&b| u8::from(b != 0)).collect();
            element(out, MI_UINT8, &ones);
        }
        crate::value::SparseKind::Complex => {
            let (mut re, mut im) = (Vec::new(), Vec::new());
            for pair in bytes.chunks_exact(16) {
                let (r, i) = pair.split_at(8);
                re.extend_from_slice(&le_f64(r));
                im.extend_from_slice(&le_f64(i));
            }
            element(out, MI_DOUBLE, &re);
            element(out, MI_DOUBLE, &im);
        }
        crate::value::SparseKind::Double => {
            let re: Vec<u8> = bytes.chunks_exact(8).flat_map(le_f64).collect();
            element(out, MI_DOUBLE, &re);
        }
    }
    Ok(())
}

/// A native f64's bytes as little-endian.
fn le_f64(b: &[u8]) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(b.get(..8).unwrap_or(&[0; 8]));
    f64::from_ne_bytes(a).to_le_bytes()
}
