//! MAT v4 (MATLAB 4 and earlier; `save -v4`): a sequence of matrices, each a 20-byte header
//! (`MOPT`, rows, columns, imaginary flag, name length), the name and column-major data.

use sciio_core::{DType, Error, NdArray, Order, Result, ScalarKind};

use super::cursor::{Cursor, Endian};
use super::decode::convert;
use crate::value::{CharArray, MatValue, SparseMatrix};

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

/// Reads every matrix of a v4 file (as `(name, value, offset)`).
pub(crate) fn read_all(
    bytes: &[u8],
    limits: &sciio_core::Limits,
) -> Result<Vec<(String, MatValue, u64)>> {
    let mut out = Vec::new();
    let mut c = Cursor::new(bytes, 0, true, Endian::Little);
    while !c.at_end() {
        let at = c.offset();
        let raw = c.take(20, "a MAT v4 matrix header")?;
        let h = head(raw).ok_or_else(|| {
            Error::format("not a MAT v4 matrix header (MOPT, sizes or name length implausible)")
                .with_offset(at)
        })?;
        let name_bytes = c.take(h.namelen, "a MAT v4 matrix name")?;
        let text = name_bytes.split(|&b| b == 0).next().unwrap_or_default();
        if !text.is_ascii() {
            return Err(Error::format("a MAT v4 matrix name is not ASCII").with_offset(at));
        }
        let name = String::from_utf8_lossy(text).into_owned();
        let value =
            matrix(&mut c, &h, &name, limits).map_err(|e| e.with_node(format!("/{name}")))?;
        out.push((name, value, at));
    }
    Ok(out)
}

fn matrix(
    c: &mut Cursor<'_>,
    h: &Head,
    name: &str,
    limits: &sciio_core::Limits,
) -> Result<MatValue> {
    let kind = kind_of(h.precision);
    let n = h
        .rows
        .checked_mul(h.cols)
        .ok_or_else(|| c.error("matrix size overflows"))?;
    let size = kind.itemsize();
    let part = |c: &mut Cursor<'_>| -> Result<Vec<f64>> {
        let len = n
            .checked_mul(size)
            .ok_or_else(|| c.error("matrix size overflows"))?;
        let bytes = c
            .take(len, &format!("the data of matrix '{name}'"))
            .map_err(|e| {
                Error::truncated(format!(
                    "not enough bytes to read matrix '{name}' ({} of {len})",
                    c.remaining()
                ))
                .with_offset(e.location().offset.unwrap_or(0))
            })?;
        let wide = convert(bytes, kind, h.endian, ScalarKind::Float(8));
        Ok(wide
            .chunks_exact(8)
            .map(|b| f64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])) // ok: chunks of 8
            .collect())
    };
    let re = part(c)?;
    let im = if h.imag { Some(part(c)?) } else { None };
    let dims = [h.rows, h.cols];
    match h.text_type {
        1 => Ok(MatValue::Char(CharArray {
            shape: dims.to_vec(),
            codes: re.iter().map(|&v| v as u32).collect(),
        })),
        2 => sparse(c, h, &re, im.as_deref(), limits),
        _ => {
            let (kind, bytes) = match &im {
                None => (
                    ScalarKind::Float(8),
                    re.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>(),
                ),
                Some(im) => (
                    ScalarKind::Complex(16),
                    re.iter()
                        .zip(im)
                        .flat_map(|(r, i)| [r.to_ne_bytes(), i.to_ne_bytes()])
                        .flatten()
                        .collect(),
                ),
            };
            Ok(MatValue::Numeric(NdArray::from_byte_vec(
                DType::scalar(kind),
                &dims,
                Order::F,
                bytes,
            )?))
        }
    }
}

/// A v4 sparse matrix: rows of `(i, j, re[, im])` (1-based), the last row `(m, n, ...)`.
fn sparse(
    c: &Cursor<'_>,
    h: &Head,
    re: &[f64],
    im: Option<&[f64]>,
    limits: &sciio_core::Limits,
) -> Result<MatValue> {
    let rows = h.rows;
    let col = |k: usize| -> Vec<f64> {
        (0..rows)
            .map(|r| re.get(k * rows + r).copied().unwrap_or(0.0))
            .collect()
    };
    if rows == 0 || !(3..=4).contains(&h.cols) {
        return Err(c.error(format!(
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
        return Err(c.error(format!("a MAT v4 sparse matrix of size {m}x{n}")));
    }
    let (m, n) = (m as usize, n as usize);
    limits.check_alloc((n as u64 + 1) * 8, "sparse column offsets")?;
    let mut entries: Vec<(usize, usize, f64, f64)> = Vec::with_capacity(nnz);
    for k in 0..nnz {
        let (i, j) = (is[k], js[k]);
        if !(i >= 1.0 && i <= m as f64 && j >= 1.0 && j <= n as f64) {
            return Err(c.error(format!(
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
