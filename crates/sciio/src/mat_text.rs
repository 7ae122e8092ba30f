//! numpy text arrays (`S`, `U`) of `.npy`/`.npz` files written into MAT files piece by piece
//! (`MatOut::write_streamed`), so a text array larger than memory converts in bounded
//! memory. A C-order array of shape `s` and strings `w` units wide is seen as the char
//! array its units make: into v7.3, hdf5storage's of shape `s[:-1] + (s[-1]*w,)`; into a
//! Level-5 file, scipy.io's of shape `s + (w,)` (`sciio_mat::scipy_chars`); either over the
//! same bytes read as code units (`uint8` for `S`, `uint32` for `U`), taken column-major by
//! the numeric routes of `mat_pieces.rs`, its units converted by
//! `sciio_mat::MatWriter::write_text_pieces` as they pass. How they are stored (`uint16` or
//! `uint32`, UTF-8 or UTF-16; bytes kept as strings) depends on every code: a first pass
//! reads them, streamed too ([`summarize`]).

use std::path::Path;

use sciio_core::{DType, Error, Result, ScalarKind, ScalarType};
use sciio_mat::{PythonMeta, TextPieces, TextSummary};

use crate::mat_pieces::{route, Sizes};
use crate::node::ArrayInfo;

/// A text array seen as its code units.
#[derive(Debug, Clone)]
pub(crate) struct TextView {
    /// The code units: `uint8`/`uint32` (the source's byte order), the char array's shape.
    units: ArrayInfo,
    /// The source's element kind (`S w`/`U w`) and shape, and the source itself.
    kind: ScalarKind,
    shape: Vec<usize>,
    source: ArrayInfo,
    /// Bytes of a unit (1 or 4), units of a string.
    unit: usize,
    width: usize,
    big: bool,
    /// scipy.io's layout (Level-5 files): the units' shape is `s + (w,)`, rows the strings'.
    scipy: bool,
}

/// The code-unit view of a large C-order (or 1-d) `S`/`U` array of a `.npy` or `.npz`
/// file that [`stream_text`] writes piece by piece (route as for numeric arrays), or `None`;
/// `scipy`: in scipy.io's layout (`sciio_mat::MatWriter::scipy_text`).
pub(crate) fn text_view(
    src: &crate::file::File,
    info: &ArrayInfo,
    sizes: Sizes,
    scipy: bool,
) -> Option<TextView> {
    if !matches!(
        src.format(),
        crate::format::Format::Npy | crate::format::Format::Npz
    ) {
        return None;
    }
    let s = info.dtype.as_scalar()?;
    let (unit, width) = match s.kind {
        ScalarKind::Unicode(w) => (4, w),
        ScalarKind::Bytes(w) => (1, w),
        _ => return None,
    };
    // Fortran order of several axes puts each string's units together, not the char
    // array's column-major order: read whole.
    let c_order = info.order == sciio_core::Order::C || info.shape.len() <= 1;
    if info.shape.is_empty() || width == 0 || !c_order {
        return None;
    }
    let mut shape = info.shape.clone();
    if scipy {
        shape.push(width);
    } else {
        let last = shape.last_mut()?;
        *last = last.checked_mul(width)?;
    }
    let units = ArrayInfo {
        dtype: DType::Scalar(ScalarType::new(ScalarKind::UInt(unit as u8), s.order)),
        shape,
        order: sciio_core::Order::C,
    };
    route(&units, sizes)?;
    Some(TextView {
        units,
        kind: s.kind,
        shape: info.shape.clone(),
        source: info.clone(),
        unit,
        width,
        big: s.order == sciio_core::ByteOrder::Big,
        scipy,
    })
}

/// What [`stream_text`] gives its writer: the char array's codes, or (a bytes array holding
/// a non-ASCII byte, into a file that keeps such arrays as strings) the strings themselves
/// in MATLAB's order ([`sciio_mat::MatWriter::write_byte_strings_pieces`]).
pub(crate) enum TextOut<'a> {
    Codes(TextPieces<'a>),
    Strings(sciio_mat::ArrayPieces<'a>),
}

/// Gives the text array at `path` of `src` ([`text_view`]'s `text`) to `write` as
/// [`TextOut`] with the `Python.*` attributes the whole array has: a first pass finds what
/// its codes need, then the units (or, `strings` and a non-ASCII byte, the strings) are
/// read piece by piece as for a numeric array ([`crate::mat_write::stream_array`];
/// `progress` as there).
pub(crate) fn stream_text(
    src: &mut crate::file::File,
    path: &str,
    (text, strings): (&TextView, bool),
    sizes: Sizes,
    folder: &Path,
    progress: &mut dyn FnMut(u64),
    write: &mut dyn FnMut(TextOut<'_>, &PythonMeta) -> Result<()>,
) -> Result<()> {
    let summary = summarize(src, path, text)?;
    let meta = sciio_mat::numeric_meta(text.kind, &text.shape);
    if strings && text.unit == 1 && summary.max >= 128 {
        let how = (path, None);
        return crate::mat_pieces::stream_array_of(
            src,
            how,
            &text.source,
            sizes,
            folder,
            progress,
            &mut |a| write(TextOut::Strings(a), &meta),
        );
    }
    // At least 2-d, as the whole array's char value is (hdf5storage's 1-d array is one row).
    let shape = match text.units.shape[..] {
        [n] => vec![1, n],
        _ => text.units.shape.clone(),
    };
    let unit = text.unit;
    // A 1-d array's units are one row in hdf5storage's layout; in scipy's, a row a string.
    let one_d = text.shape.len() == 1 && !text.scipy;
    let how = (path, Some((text.width as u64, one_d)));
    crate::mat_pieces::stream_array_of(src, how, &text.units, sizes, folder, progress, &mut |a| {
        let pieces = TextPieces {
            unit,
            shape: shape.clone(),
            summary,
            fill: a.fill,
        };
        write(TextOut::Codes(pieces), &meta)
    })
}

/// The first pass: every code of the array, read in batches.
fn summarize(src: &mut crate::file::File, path: &str, text: &TextView) -> Result<TextSummary> {
    let mut summary = TextSummary::default();
    let per_batch = crate::stream::BATCH_BYTES / text.unit;
    crate::stream::for_each_batch(src, path, text.unit, per_batch, &mut |batch| {
        summary.add(text.unit, text.big, batch);
        Ok(())
    })?;
    let want = text.units.len();
    if summary.codes != want {
        return Err(Error::truncated(format!(
            "the text array holds {} code units, not the {want} its shape makes",
            summary.codes
        ))
        .with_node(path.to_string()));
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mat_pieces::tests::{saved, sizes, whole_and_streamed};
    use crate::options::MatOutVersion;
    use sciio_core::{ByteOrder, NdArray, Order};

    /// A `U`/`S` array of `shape`, strings `width` units wide made of `alphabet` (an empty
    /// string and trailing NULs among them), big-endian when `big`.
    fn text(kind: ScalarKind, shape: &[usize], alphabet: &[u32], big: bool) -> NdArray {
        let (unit, width) = match kind {
            ScalarKind::Unicode(w) => (4, w),
            ScalarKind::Bytes(w) => (1, w),
            _ => unreachable!(),
        };
        let n: usize = shape.iter().product();
        let mut bytes = Vec::with_capacity(n * width * unit);
        for i in 0..n {
            // String i holds i % (width + 1) characters: some empty, most NUL-padded.
            for k in 0..width {
                let code = match k < i % (width + 1) {
                    true => alphabet[(i * 7 + k) % alphabet.len()],
                    false => 0,
                };
                match (unit, big) {
                    (4, true) => bytes.extend_from_slice(&code.to_be_bytes()),
                    (4, false) => bytes.extend_from_slice(&code.to_le_bytes()),
                    _ => bytes.push(code as u8),
                }
            }
        }
        let order = match (unit, big) {
            (1, _) => ByteOrder::NotApplicable,
            (_, true) => ByteOrder::Big,
            _ => ByteOrder::Little,
        };
        let dtype = DType::Scalar(ScalarType::new(kind, order));
        NdArray::from_bytes(dtype, shape, Order::C, &bytes).unwrap()
    }

    /// Text arrays written piece by piece by each route make the file the whole array
    /// makes, byte for byte, in every MAT version (at one `SOURCE_DATE_EPOCH`): ASCII and
    /// non-ASCII bytes, text within and beyond the BMP, big-endian, 1-d to 3-d, empty
    /// strings only, from `.npy` and `.npz`; the Level-5 element over the size (4 MiB) from
    /// which it is streamed. A Level-5 file holds scipy.io's char array of the text
    /// ([`sciio_mat::scipy_chars`]: numpy's shape and the width, NULs as spaces).
    #[test]
    fn streamed_text_makes_the_whole_arrays_file() {
        static EPOCH: std::sync::Once = std::sync::Once::new();
        EPOCH.call_once(|| std::env::set_var("SOURCE_DATE_EPOCH", "1700000000"));
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let ascii: Vec<u32> = (32..127).collect();
        let latin: Vec<u32> = vec![0x41, 0xE9, 0xFF, 0x7A];
        let wide: Vec<u32> = vec![0x41, 0x3B1, 0x1F600, 0x4E2D];
        let bmp: Vec<u32> = vec![0x41, 0x3B1, 0x4E2D, 0xFFFD];
        let nul: Vec<u32> = vec![0];
        let (staged, scatter) = (sizes(4096, 0), sizes(4096, u64::MAX));
        let cases = [
            (ScalarKind::Bytes(8), vec![1024, 520], &ascii, false, staged),
            (ScalarKind::Bytes(5), vec![40, 3, 7], &latin, false, scatter),
            (ScalarKind::Bytes(3), vec![1 << 21], &latin, false, staged),
            (ScalarKind::Unicode(4), vec![1 << 20], &bmp, false, staged),
            (ScalarKind::Unicode(3), vec![30, 20], &wide, true, staged),
            (ScalarKind::Unicode(6), vec![9, 4, 11], &bmp, true, scatter),
            (
                ScalarKind::Unicode(2),
                vec![2, 600_000],
                &wide,
                false,
                staged,
            ),
            (ScalarKind::Unicode(3), vec![50, 40], &nul, false, staged),
        ];
        for version in [MatOutVersion::V73, MatOutVersion::V7, MatOutVersion::V5] {
            for (i, (kind, shape, alphabet, big, sizes)) in cases.iter().enumerate() {
                let a = text(*kind, shape, alphabet, *big);
                let npz = i % 2 == 1;
                let (whole, pieces, reported) =
                    whole_and_streamed(d, ("x", &a), version, npz, &mut |out, f, at, i, p| {
                        out.write_streamed_with("x", f, at, i, p, *sizes)
                    });
                let nbytes = a.nbytes() as u64;
                let empty = alphabet.iter().all(|&c| c == 0);
                if !empty || version == MatOutVersion::V73 {
                    assert_eq!(reported.last(), Some(&nbytes), "{kind:?} {shape:?}");
                }
                let read = |p| std::fs::read(p).unwrap();
                assert!(
                    read(&whole) == read(&pieces),
                    "{version:?} {kind:?} {shape:?} npz {npz}: not the whole array's file"
                );
                if version != MatOutVersion::V73 {
                    let vars = sciio_mat::read_mat(&pieces).unwrap();
                    let want = sciio_mat::scipy_chars(&a).unwrap().unwrap();
                    assert_eq!(vars[0].1, sciio_mat::MatValue::Char(want), "{kind:?}");
                }
            }
        }
    }

    /// A Fortran-order text array of several axes, a 0-d string and a small one (under the
    /// size from which arrays stream) are left to the whole path.
    #[test]
    fn only_large_c_order_text_is_streamed() {
        let dir = tempfile::tempdir().unwrap();
        let a = text(ScalarKind::Unicode(3), &[20, 30], &[0x41], false);
        let (file, _) = saved(dir.path(), &a, false);
        let staged = sizes(4096, 0);
        assert!(text_view(&file, &ArrayInfo::of(&a), staged, false).is_some());
        let f = ArrayInfo::of(&a.to_order(Order::F));
        assert!(text_view(&file, &f, staged, false).is_none());
        let scalar = ArrayInfo::of(&text(ScalarKind::Unicode(3), &[], &[0x41], false));
        assert!(text_view(&file, &scalar, staged, false).is_none());
        assert!(text_view(&file, &ArrayInfo::of(&a), Sizes::DEFAULT, false).is_none());
    }
}
