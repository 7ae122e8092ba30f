//! MAT v4 (MATLAB 4 and earlier; `save -v4`): a sequence of matrices, each a 20-byte header
//! (`MOPT`, rows, columns, imaginary flag, name length), the name and column-major data.
//!
//! Read on demand: at open, each header and name ([`walk`]: a matrix's data length follows
//! from its header, checked against the file's length); a matrix's data when it is read
//! ([`read`]); a large numeric one streamed a piece of each part at a time ([`copy`]).
//! Numbers keep their stored precision (double, single, int32, int16, uint16, uint8), as
//! `scipy.io.loadmat` reads them (a complex integer one is widened to complex doubles, as scipy
//! does: numpy has no complex integers).

use std::io::{Read, Write};

use sciio_core::{DType, Error, NdArray, Order, Result, ScalarKind};

use super::consts::PLAIN_FROM;
use super::cursor::Endian;
use super::decode::{convert, interleave};
use super::source::Source;
use crate::value::{CharArray, MatClass, MatValue, SparseMatrix};

/// What a v4 matrix header says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Head {
    pub endian: Endian,
    pub precision: u32,
    pub text_type: u32,
    pub rows: usize,
    pub cols: usize,
    pub imag: bool,
    pub namelen: usize,
}

/// Parses a v4 header from its 20 bytes, trying both byte orders: `None` when neither
/// gives a plausible header.
pub(crate) fn head(b: &[u8]) -> Option<Head> {
    let words = |e: Endian| -> Option<[i32; 5]> {
        let mut w = [0i32; 5];
        for (i, slot) in w.iter_mut().enumerate() {
            let c = b.get(i * 4..i * 4 + 4)?;
            *slot = e.i32([c[0], c[1], c[2], c[3]]); // ok: 4 bytes
        }
        Some(w)
    };
    [Endian::Little, Endian::Big].into_iter().find_map(|e| {
        let [mopt, rows, cols, imag, namelen] = words(e)?;
        let (m, rest) = (mopt / 1000, mopt % 1000);
        let (o, rest) = (rest / 100, rest % 100);
        let (p, t) = (rest / 10, rest % 10);
        let plausible = (0..=4).contains(&m)
            && o == 0
            && (0..=5).contains(&p)
            && (0..=2).contains(&t)
            && mopt >= 0
            && rows >= 0
            && cols >= 0
            && (imag == 0 || imag == 1)
            && (1..=4096).contains(&namelen);
        plausible.then_some(Head {
            endian: e,
            precision: p as u32,
            text_type: t as u32,
            rows: rows as usize,
            cols: cols as usize,
            imag: imag == 1,
            namelen: namelen as usize,
        })
    })
}

fn kind_of(precision: u32) -> ScalarKind {
    match precision {
        0 => ScalarKind::Float(8),
        1 => ScalarKind::Float(4),
        2 => ScalarKind::Int(4),
        3 => ScalarKind::Int(2),
        4 => ScalarKind::UInt(2),
        _ => ScalarKind::UInt(1),
    }
}

/// A v4 matrix found at open: its header and where its data is (read when the variable is).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Matrix {
    pub head: Head,
    /// Where its data starts in the file (after its name).
    pub data: u64,
    /// Its real part's length in bytes (an imaginary part of the same length follows it).
    pub part: u64,
}

impl Matrix {
    /// Its data's length in bytes (both parts).
    fn len(&self) -> u64 {
        // No overflow: checked against the file's length at open.
        self.part * if self.head.imag { 2 } else { 1 }
    }

    /// Where the next matrix's header is.
    pub(crate) fn end(&self) -> u64 {
        self.data + self.len()
    }

    /// The kind of one number of a part.
    fn kind(&self) -> ScalarKind {
        kind_of(self.head.precision)
    }

    /// A numeric matrix's kind as read: a complex one's real and imaginary parts of a float
    /// kind paired as numpy's complex of twice its size, of an integer kind widened to
    /// complex doubles (numpy has no complex integers; scipy.io.loadmat widens them too).
    fn value_kind(&self) -> ScalarKind {
        match (self.head.imag, self.kind()) {
            (false, kind) => kind,
            (true, ScalarKind::Float(n)) => ScalarKind::Complex(2 * n),
            (true, _) => ScalarKind::Complex(16),
        }
    }

    /// Its class, MATLAB size and complexity, from its header: `None` for a sparse matrix
    /// (whose size is in its data).
    pub(crate) fn describe(&self) -> Option<(MatClass, Vec<usize>, bool)> {
        let dims = vec![self.head.rows, self.head.cols];
        match self.head.text_type {
            1 => Some((MatClass::Char, dims, false)),
            2 => None,
            _ => {
                let class = MatClass::of_kind(self.value_kind()).unwrap_or(MatClass::Double);
                Some((class, dims, self.head.imag))
            }
        }
    }

    /// Whether [`copy`] streams it as `dtype` and `dims`: a numeric matrix of that kind and
    /// size whose data is at least [`PLAIN_FROM`] bytes (complex integers, widened, are not).
    pub(crate) fn streams(&self, dtype: &DType, dims: &[usize]) -> bool {
        let numeric = self.head.text_type == 0;
        let paired = !self.head.imag || matches!(self.kind(), ScalarKind::Float(_));
        numeric
            && paired
            && DType::scalar(self.value_kind()) == *dtype
            && dims == [self.head.rows, self.head.cols]
            && self.len() >= PLAIN_FROM as u64
    }
}

/// Finds every matrix of a v4 file (as `(name, matrix, offset)`) by reading its headers and
/// names at their positions: each matrix's data length follows from its header, checked
/// against the file's length, so no data is read (nor allocated) at open.
pub(crate) fn walk(source: &Source) -> Result<Vec<(String, Matrix, u64)>> {
    let mut out = Vec::new();
    let mut at = 0u64;
    while at < source.len() {
        let (name, m) = matrix_at(source, at)?;
        out.push((name, m, at));
        at = m.end();
    }
    Ok(out)
}

/// `n` bytes of `source` at `from`, an error when the file ends before.
fn bytes_at<'a>(
    source: &'a Source,
    from: u64,
    n: u64,
    what: &str,
) -> Result<std::borrow::Cow<'a, [u8]>> {
    let bytes = source
        .range(from, from.saturating_add(n))
        .map_err(|e| Error::io("cannot read", e).with_offset(from))?;
    if (bytes.len() as u64) < n {
        return Err(Error::truncated(format!(
            "{what} needs {n} bytes, the file has {} left",
            bytes.len()
        ))
        .with_offset(from));
    }
    Ok(bytes)
}

/// The header and name of the matrix at `at`, its data's range checked against the file.
fn matrix_at(source: &Source, at: u64) -> Result<(String, Matrix)> {
    let raw = bytes_at(source, at, 20, "a MAT v4 matrix header")?;
    let h = head(&raw).ok_or_else(|| {
        Error::format("not a MAT v4 matrix header (MOPT, sizes or name length implausible)")
            .with_offset(at)
    })?;
    let name_bytes = bytes_at(source, at + 20, h.namelen as u64, "a MAT v4 matrix name")?;
    let text = name_bytes.split(|&b| b == 0).next().unwrap_or_default();
    if !text.is_ascii() {
        return Err(Error::format("a MAT v4 matrix name is not ASCII").with_offset(at));
    }
    let name = String::from_utf8_lossy(text).into_owned();
    let data = at + 20 + h.namelen as u64;
    let part = (h.rows as u64)
        .checked_mul(h.cols as u64)
        .and_then(|n| n.checked_mul(kind_of(h.precision).itemsize() as u64));
    let len = part.and_then(|p| p.checked_mul(if h.imag { 2 } else { 1 }));
    let (Some(part), Some(len)) = (part, len) else {
        return Err(Error::format(format!(
            "matrix '{name}' of {}x{} overflows",
            h.rows, h.cols
        ))
        .with_offset(at)
        .with_node(format!("/{name}")));
    };
    let left = source.len().saturating_sub(data);
    if len > left {
        return Err(Error::truncated(format!(
            "not enough bytes to read matrix '{name}' ({left} of {len})"
        ))
        .with_offset(data)
        .with_node(format!("/{name}")));
    }
    let m = Matrix {
        head: h,
        data,
        part,
    };
    Ok((name, m))
}

/// Reads and decodes matrix `m` (its data within the limits).
pub(crate) fn read(source: &Source, m: &Matrix, limits: &sciio_core::Limits) -> Result<MatValue> {
    limits
        .check_alloc(m.len(), "a MAT v4 matrix")
        .map_err(|e| e.with_offset(m.data))?;
    let bytes = bytes_at(source, m.data, m.len(), "a MAT v4 matrix's data")?;
    if !matches!(m.head.text_type, 1 | 2) {
        return numeric(m, bytes);
    }
    let (re, im) = bytes.split_at(m.part as usize); // ok: part <= len, held in memory
    let dims = [m.head.rows, m.head.cols];
    // Text and sparse matrices are small in practice: read through doubles, whole.
    if m.head.text_type == 1 {
        return Ok(MatValue::Char(CharArray {
            shape: dims.to_vec(),
            codes: doubles(re, m).iter().map(|&v| v as u32).collect(),
            numpy: None,
        }));
    }
    let im = m.head.imag.then(|| doubles(im, m));
    sparse(m, &doubles(re, m), im.as_deref(), limits)
}

/// A part's numbers as doubles.
fn doubles(part: &[u8], m: &Matrix) -> Vec<f64> {
    convert(part, m.kind(), m.head.endian, ScalarKind::Float(8))
        .chunks_exact(8)
        .map(|b| f64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])) // ok: chunks of 8
        .collect()
}

/// A numeric matrix from its data `bytes` (the real part, then the imaginary one when it is
/// complex), in its own kind (as scipy.io.loadmat reads it), in the machine's byte order.
fn numeric(m: &Matrix, bytes: std::borrow::Cow<'_, [u8]>) -> Result<MatValue> {
    let (kind, item) = (m.kind(), m.kind().itemsize().max(1));
    let swap = m.head.endian.swap();
    let (re, im) = bytes.split_at(m.part as usize); // ok: part <= len
    let data = match (m.head.imag, kind) {
        (false, _) if !swap || item == 1 => bytes.into_owned(),
        (false, _) => interleave(re, None, item, swap),
        (true, ScalarKind::Float(_)) => interleave(re, Some(im), item, swap),
        (true, _) => {
            let wide = |part| convert(part, kind, m.head.endian, ScalarKind::Float(8));
            interleave(&wide(re), Some(&wide(im)), 8, false)
        }
    };
    let dims = [m.head.rows, m.head.cols];
    Ok(MatValue::Numeric(NdArray::from_byte_vec(
        DType::scalar(m.value_kind()),
        &dims,
        Order::F,
        data,
    )?))
}

/// How many numbers of a part [`copy`] reads at a time.
const PIECE: usize = 1 << 17;

/// Writes numeric matrix `m`'s data to `out` a piece at a time (see [`Matrix::streams`]):
/// column-major as stored, each number in the machine's byte order, a complex matrix's real
/// and imaginary numbers interleaved as numpy holds them (its two parts read side by side).
/// `progress` gets the bytes written so far.
pub(crate) fn copy(
    source: &Source,
    m: &Matrix,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let item = m.kind().itemsize().max(1);
    let swap = m.head.endian.swap();
    let cannot_read = |e: std::io::Error| Error::io("cannot read", e).with_offset(m.data);
    // Both parts are inside the file (checked at open).
    let mut real = source.reader(m.data, m.data + m.part);
    let mut imag = m
        .head
        .imag
        .then(|| source.reader(m.data + m.part, m.data + 2 * m.part));
    let (mut r, mut i) = (Vec::new(), Vec::new());
    let mut left = m.part;
    let mut done = 0u64;
    while left > 0 {
        let n = ((PIECE * item) as u64).min(left) as usize;
        r.resize(n, 0);
        real.read_exact(&mut r).map_err(cannot_read)?;
        if let Some(imag) = imag.as_mut() {
            i.resize(n, 0);
            imag.read_exact(&mut i).map_err(cannot_read)?;
        }
        let piece = interleave(&r, imag.as_ref().map(|_| &i[..]), item, swap);
        out.write_all(&piece)
            .map_err(|e| Error::io("cannot write", e))?;
        done += piece.len() as u64;
        progress(done);
        left -= n as u64;
    }
    Ok(())
}

/// A v4 sparse matrix: rows of `(i, j, re[, im])` (1-based), the last row `(m, n, ...)`.
fn sparse(
    mat: &Matrix,
    re: &[f64],
    im: Option<&[f64]>,
    limits: &sciio_core::Limits,
) -> Result<MatValue> {
    let h = &mat.head;
    let damaged = |why: String| Error::format(why).with_offset(mat.data);
    let rows = h.rows;
    let col = |k: usize| -> Vec<f64> {
        (0..rows)
            .map(|r| re.get(k * rows + r).copied().unwrap_or(0.0))
            .collect()
    };
    if rows == 0 || !(3..=4).contains(&h.cols) {
        return Err(damaged(format!(
            "a MAT v4 sparse matrix stored as {rows}x{}, not (nnz+1)x3 or x4",
            h.cols
        )));
    }
    let (is, js, vs) = (col(0), col(1), col(2));
    let ws = if h.cols == 4 {
        Some(col(3))
    } else {
        im.map(|_| vec![0.0; rows])
    };
    let nnz = rows - 1;
    let (m, n) = (is[nnz], js[nnz]);
    if !(0.0..=1e12).contains(&m) || !(0.0..=1e12).contains(&n) {
        return Err(damaged(format!("a MAT v4 sparse matrix of size {m}x{n}")));
    }
    let (m, n) = (m as usize, n as usize);
    limits.check_alloc((n as u64 + 1) * 8, "sparse column offsets")?;
    let mut entries: Vec<(usize, usize, f64, f64)> = Vec::with_capacity(nnz);
    for k in 0..nnz {
        let (i, j) = (is[k], js[k]);
        if !(i >= 1.0 && i <= m as f64 && j >= 1.0 && j <= n as f64) {
            return Err(damaged(format!(
                "a MAT v4 sparse entry at ({i}, {j}) outside {m}x{n}"
            )));
        }
        let w = ws.as_ref().map_or(0.0, |w| w[k]);
        entries.push((j as usize - 1, i as usize - 1, vs[k], w));
    }
    entries.sort_by_key(|e| (e.0, e.1));
    // Duplicates are summed, as scipy's COO -> CSC conversion does.
    let mut merged: Vec<(usize, usize, f64, f64)> = Vec::with_capacity(entries.len());
    for e in entries {
        match merged.last_mut() {
            Some(last) if last.0 == e.0 && last.1 == e.1 => {
                last.2 += e.2;
                last.3 += e.3;
            }
            _ => merged.push(e),
        }
    }
    let mut jc = vec![0u64; n + 1];
    for e in &merged {
        jc[e.0 + 1] += 1;
    }
    for k in 0..n {
        jc[k + 1] += jc[k];
    }
    let ir: Vec<u64> = merged.iter().map(|e| e.1 as u64).collect();
    let count = merged.len();
    let data = match ws {
        Some(_) => NdArray::from_byte_vec(
            DType::scalar(ScalarKind::Complex(16)),
            &[count],
            Order::F,
            merged
                .iter()
                .flat_map(|e| [e.2.to_ne_bytes(), e.3.to_ne_bytes()])
                .flatten()
                .collect(),
        )?,
        None => NdArray::from_byte_vec(
            DType::scalar(ScalarKind::Float(8)),
            &[count],
            Order::F,
            merged.iter().flat_map(|e| e.2.to_ne_bytes()).collect(),
        )?,
    };
    let s = SparseMatrix {
        nrows: m,
        ncols: n,
        ir,
        jc,
        data,
    };
    s.check()?;
    Ok(MatValue::Sparse(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v4 matrix of `rows` x `cols` big-endian `int16` (precision 3), real and imaginary
    /// parts `re` and `im` (column-major), named `z`.
    fn be_int16_complex(rows: i32, cols: i32, re: &[i16], im: &[i16]) -> Vec<u8> {
        let mut b: Vec<u8> = [1030, rows, cols, 1, 2]
            .iter()
            .flat_map(|w: &i32| w.to_be_bytes())
            .collect();
        b.extend(b"z\0");
        b.extend(re.iter().chain(im).flat_map(|v| v.to_be_bytes()));
        b
    }

    #[test]
    fn a_complex_integer_matrix_reads_as_complex_doubles_from_memory_and_from_the_file() {
        let bytes = be_int16_complex(2, 2, &[1, -2, 3, 300], &[-5, 6, 0, 7]);
        let dir = sciio_testkit::tempdir();
        let path = dir.path().join("z.mat");
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let sources = [
            Source::Bytes(bytes.clone()),
            Source::File {
                file,
                len: bytes.len() as u64,
            },
        ];
        let limits = sciio_core::Limits::default();
        for source in &sources {
            let [(name, m, 0)] = &walk(source).unwrap()[..] else {
                panic!("not one matrix");
            };
            assert_eq!(name, "z");
            assert_eq!(m.describe(), Some((MatClass::Double, vec![2, 2], true)));
            let MatValue::Numeric(a) = read(source, m, &limits).unwrap() else {
                panic!("not numeric");
            };
            let want: Vec<u8> = [1.0, -5.0, -2.0, 6.0, 3.0, 0.0, 300.0, 7.0]
                .iter()
                .flat_map(|v: &f64| v.to_ne_bytes())
                .collect();
            assert_eq!(a.dtype(), &DType::scalar(ScalarKind::Complex(16)));
            assert_eq!(a.as_bytes(), &want[..]);
            // Widened: not streamed (copied as the array read).
            let c16 = DType::scalar(ScalarKind::Complex(16));
            assert!(!m.streams(&c16, &[2, 2]));
        }
    }

    #[test]
    fn sizes_past_the_file_or_overflowing_are_errors_at_open_without_allocating() {
        let cut = be_int16_complex(2, 2, &[1, 2, 3, 4], &[5, 6, 7]);
        let e = walk(&Source::Bytes(cut)).unwrap_err();
        assert_eq!(e.location().offset, Some(22), "{e}");
        assert!(e.message().contains("(14 of 16)"), "{e}");
        for (rows, cols) in [(60_000, 60_000), (i32::MAX, i32::MAX)] {
            let huge = be_int16_complex(rows, cols, &[1, 2], &[3, 4]);
            let e = walk(&Source::Bytes(huge)).unwrap_err();
            assert_eq!(e.location().node.as_deref(), Some("/z"), "{e}");
            assert!(e.message().contains("not enough bytes"), "{e}");
        }
        // Doubles (MOPT 1000): 2^62 numbers of 8 bytes overflow.
        let mut overflowing = be_int16_complex(i32::MAX, i32::MAX, &[1], &[2]);
        overflowing[..4].copy_from_slice(&1000i32.to_be_bytes());
        let e = walk(&Source::Bytes(overflowing)).unwrap_err();
        assert!(e.message().contains("overflows"), "{e}");
    }
}
