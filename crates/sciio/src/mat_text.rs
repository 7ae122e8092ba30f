//! numpy text arrays (`S`, `U`) of `.npy`/`.npz` files written into MAT files piece by piece
//! (`MatOut::write_streamed`), so a text array larger than memory converts in bounded
//! memory. A C-order array of shape `s` and strings `w` units wide is seen as the char
//! array its units make: into v7.3, hdf5storage's of shape `s[:-1] + (s[-1]*w,)`; into a
//! Level-5 file, scipy.io's of shape `s + (w,)` (`sciio_mat::scipy_chars`); either over the
//! same bytes read as code units (`uint8` for `S`, `uint32` for `U`), taken column-major by
//! the numeric routes of `mat_pieces.rs`, its units converted by
//! `sciio_mat::MatWriter::write_text_pieces` as they pass. How they are stored (`uint16` or
//! `uint32`, UTF-8 or UTF-16; bytes kept as strings) depends on every code: a first pass
//! reads them, streamed too ([`summarize`]). HDF5 fixed-length string datasets (PyTables'
//! `StringAtom` arrays, h5py's `S` datasets) are read the same way, by hyperslabs. A
//! Fortran-order array of several axes holds each string's units together, not the char
//! array's column-major order: its units are first put in MATLAB's order in a temporary
//! file beside the destination ([`FortranText`], a batch of strings at a time), then read
//! from there piece by piece. A text array below a struct path (`out.mat:/s/t`, or inside a
//! group of a converted HDF5 file) is a `sciio_mat::TreeValue::Text`, streamed the same way
//! when its struct is written (`MatOut::defer_text`).

use std::path::Path;

use sciio_core::{DType, Error, Result, ScalarKind, ScalarType};
use sciio_mat::{PythonMeta, TextPieces, TextSummary};

use crate::mat_pieces::{route, Prefetch, Sizes, Staged};
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
    /// Fortran order of several axes longer than 1: staged ([`FortranText`]).
    fortran: bool,
}

impl TextView {
    /// The numpy kind of the strings (`S w` or `U w`).
    pub(crate) fn kind(&self) -> ScalarKind {
        self.kind
    }

    /// numpy's shape of the array.
    pub(crate) fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The char array's shape: the units' shape, at least 2-d as the whole array's char
    /// value is (hdf5storage's 1-d array is one row).
    fn char_shape(&self) -> Vec<usize> {
        match self.units.shape[..] {
            [n] => vec![1, n],
            _ => self.units.shape.clone(),
        }
    }
}

/// Gives `write` the text array at `path` of `src` as a Level-5 file plans a struct's text
/// field: its codes' summary (measured here, kept in `known`) and its shape, its codes not
/// to be read (`TextPieces::fill` refuses) — so that a staged array is not staged for the
/// plan too. For arrays of more than 4 codes (a Level-5 plan reads the codes of the short
/// element form, at most 4 of them); `false`, having given nothing, for others.
pub(crate) fn give_summary(
    src: &mut crate::file::File,
    path: &str,
    (text, known): (&TextView, &mut Option<TextSummary>),
    write: &mut dyn FnMut(TextPieces<'_>) -> Result<()>,
) -> Result<bool> {
    if text.units.len() <= 4 {
        return Ok(false);
    }
    let summary = match *known {
        Some(summary) => summary,
        None => summarize(src, path, text)?,
    };
    *known = Some(summary);
    let mut fill = |_: u64, _: &mut [u8]| -> Result<()> {
        Err(Error::invalid_input(
            "internal: a text array's codes were asked for while its element was planned",
        ))
    };
    write(TextPieces {
        unit: text.unit,
        shape: text.char_shape(),
        summary,
        fill: &mut fill,
    })?;
    Ok(true)
}

/// The code-unit view of a large `S`/`U` array of a `.npy` or `.npz` file (any order) or
/// an HDF5 fixed-length string dataset that [`stream_text`] writes piece by piece (route as
/// for numeric arrays; Fortran order of several axes staged), or `None`; `scipy`: in
/// scipy.io's layout (`sciio_mat::MatWriter::scipy_text`).
pub(crate) fn text_view(
    src: &crate::file::File,
    info: &ArrayInfo,
    sizes: Sizes,
    scipy: bool,
) -> Option<TextView> {
    let source = matches!(
        src.format(),
        crate::format::Format::Npy | crate::format::Format::Npz
    );
    #[cfg(feature = "hdf5")]
    let source = source || src.format() == crate::format::Format::Hdf5;
    if !source {
        return None;
    }
    let s = info.dtype.as_scalar()?;
    let (unit, width) = match s.kind {
        ScalarKind::Unicode(w) => (4, w),
        ScalarKind::Bytes(w) => (1, w),
        _ => return None,
    };
    // Fortran order of several axes puts each string's units together, not the char
    // array's column-major order: staged. With at most one axis longer than 1 the stored
    // bytes are those of C order.
    let fortran =
        info.order == sciio_core::Order::F && info.shape.iter().filter(|&&d| d > 1).count() > 1;
    if info.shape.is_empty() || width == 0 {
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
        fortran,
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
/// its codes need (unless `known` holds it already: a struct's field is asked for twice by
/// a Level-5 file; it is kept there), then the units (or, `strings` and a non-ASCII byte, the
/// strings) are read piece by piece as for a numeric array
/// ([`crate::mat_write::stream_array`]; `progress` as there), a Fortran-order array's from
/// its staged copy.
pub(crate) fn stream_text(
    src: &mut crate::file::File,
    path: &str,
    (text, strings, known): (&TextView, bool, &mut Option<TextSummary>),
    sizes: Sizes,
    folder: &Path,
    progress: &mut dyn FnMut(u64),
    write: &mut dyn FnMut(TextOut<'_>, &PythonMeta) -> Result<()>,
) -> Result<()> {
    let summary = match *known {
        Some(summary) => summary,
        None => summarize(src, path, text)?,
    };
    *known = Some(summary);
    let meta = sciio_mat::numeric_meta(text.kind, &text.shape);
    // Scattering reads blocks of rows again for every piece: cheap from a `.npy` in the page
    // cache, slow through libhdf5's hyperslabs (a 36 MiB dataset: 9 s; staged: 1.5 s). HDF5
    // sources are staged whatever their size.
    let sizes = match src.format() {
        crate::format::Format::Npy | crate::format::Format::Npz => sizes,
        _ => Sizes {
            transpose_from: 0,
            ..sizes
        },
    };
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
    let shape = text.char_shape();
    let unit = text.unit;
    if text.fortran {
        let how = (text, summary, shape);
        return stream_fortran(src, path, how, folder, progress, &mut |t| write(t, &meta));
    }
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

/// [`stream_text`] for a Fortran-order array of several axes: its units staged in MATLAB's
/// order ([`FortranText`]; the first half of the bytes for `progress`), then given to
/// `write` read from there piece by piece (the next piece read ahead, [`Prefetch`]).
fn stream_fortran(
    src: &mut crate::file::File,
    path: &str,
    (text, summary, shape): (&TextView, TextSummary, Vec<usize>),
    folder: &Path,
    progress: &mut dyn FnMut(u64),
    write: &mut dyn FnMut(TextOut<'_>) -> Result<()>,
) -> Result<()> {
    let file = FortranText::stage(src, path, text, folder, &mut |d| progress(d / 2))?;
    let units = text.units.len();
    let staged = Staged::in_order(file, units, text.unit as u64);
    let (base, mut done) = (text.units.nbytes() / 2, 0u64);
    Prefetch::run(&staged, units, |prefetch| {
        let mut fill = |first: u64, buf: &mut [u8]| {
            prefetch.fill(first, buf)?;
            done += buf.len() as u64;
            progress(base + done / 2);
            Ok(())
        };
        let pieces = TextPieces {
            unit: text.unit,
            shape,
            summary,
            fill: &mut fill,
        };
        write(TextOut::Codes(pieces))
    })
}

/// A Fortran-order text array's code units put into a temporary file in the char array's
/// MATLAB order, native byte order, as its strings come in stored order. String `e` (its
/// Fortran-order index) lies in slab `e / m` at `e % m`, `m` the strings of a slab: all of
/// them in scipy's layout (the char array `s + (w,)`), those of one index of the last axis
/// in hdf5storage's (`s[:-1] + (s[-1] * w,)`). Unit `k` of it goes to
/// `(slab * w + k) * m + e % m`: a run of whole slabs is one contiguous write, a part of a
/// slab one write per unit of the strings.
struct FortranText {
    file: std::fs::File,
    unit: usize,
    width: usize,
    /// Strings of a slab.
    slab: u64,
    /// The source's units are big-endian (swapped into native order).
    swap: bool,
    /// The next string's index.
    next: u64,
    /// The start of a string split between batches.
    carry: Vec<u8>,
    out: Vec<u8>,
}

impl FortranText {
    /// Stages the text array at `path` of `src` into an unnamed temporary file in `folder`
    /// (`progress` gets the bytes read so far).
    fn stage(
        src: &mut crate::file::File,
        path: &str,
        text: &TextView,
        folder: &Path,
        progress: &mut dyn FnMut(u64),
    ) -> Result<std::fs::File> {
        let strings: u64 = text.shape.iter().map(|&d| d as u64).product();
        let file = tempfile::tempfile_in(folder)
            .map_err(|e| Error::io("cannot create the temporary file of the text array", e))
            .map_err(|e| e.with_file(folder))?;
        let mut stage = FortranText::new(file, text);
        let string_bytes = text.unit * text.width;
        let per_batch = (crate::stream::BATCH_BYTES / string_bytes).max(1);
        let mut done = 0u64;
        crate::stream::for_each_batch(src, path, string_bytes, per_batch, &mut |batch| {
            stage.put(batch)?;
            done += batch.len() as u64;
            progress(done);
            Ok(())
        })?;
        if stage.next != strings || !stage.carry.is_empty() {
            return Err(Error::truncated(format!(
                "the text array holds {} strings, not the {strings} its shape makes",
                stage.next
            ))
            .with_node(path.to_string()));
        }
        Ok(stage.file)
    }

    /// Stages `text`'s units into `file` (empty).
    fn new(file: std::fs::File, text: &TextView) -> FortranText {
        let strings: u64 = text.shape.iter().map(|&d| d as u64).product();
        let last = text.shape.last().map_or(1, |&d| d as u64).max(1);
        FortranText {
            file,
            unit: text.unit,
            width: text.width,
            slab: match text.scipy {
                true => strings,
                false => strings / last,
            }
            .max(1),
            swap: text.big != cfg!(target_endian = "big") && text.unit > 1,
            next: 0,
            carry: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Takes the next bytes of the strings (not necessarily whole ones).
    fn put(&mut self, mut batch: &[u8]) -> Result<()> {
        let string_bytes = self.unit * self.width;
        if !self.carry.is_empty() {
            let take = (string_bytes - self.carry.len()).min(batch.len());
            self.carry.extend_from_slice(&batch[..take]);
            batch = &batch[take..];
            if self.carry.len() < string_bytes {
                return Ok(());
            }
            let carry = std::mem::take(&mut self.carry);
            self.strings(&carry)?;
        }
        let whole = batch.len() / string_bytes * string_bytes;
        self.strings(&batch[..whole])?;
        self.carry.extend_from_slice(&batch[whole..]);
        Ok(())
    }

    /// Puts whole strings (the next ones) in place.
    fn strings(&mut self, bytes: &[u8]) -> Result<()> {
        let (unit, width, m) = (self.unit, self.width as u64, self.slab);
        let first = self.next;
        let end = first + (bytes.len() / (unit * self.width)) as u64;
        let mut e = first;
        while e < end {
            let (slab, at) = (e / m, e % m);
            // Whole slabs: one run of the file; else the part of one slab, a run per unit.
            let whole = at == 0 && end - e >= m;
            let count = match whole {
                true => (end - e) / m * m,
                false => end.min((slab + 1) * m) - e,
            };
            let from = &bytes[(e - first) as usize * unit * width as usize..];
            self.out.clear();
            self.out.resize(count as usize * unit * width as usize, 0);
            match whole {
                true => self.transpose_slabs(from, count / m),
                false => self.transpose_part(from, count),
            }
            let write = |buf: &[u8], unit_at: u64| {
                crate::atomic::write_at(&self.file, buf, unit_at * unit as u64)
                    .map_err(|e| Error::io("cannot write the temporary file of the text array", e))
            };
            if whole {
                write(&self.out, slab * m * width)?;
            } else {
                let run = count as usize * unit;
                for (k, part) in self.out.chunks_exact(run).enumerate() {
                    write(part, (slab * width + k as u64) * m + at)?;
                }
            }
            e += count;
        }
        self.next = end;
        Ok(())
    }

    /// `slabs` whole slabs of strings (`from`) into `out`, each slab's units by unit index.
    fn transpose_slabs(&mut self, from: &[u8], slabs: u64) {
        let (unit, width, m) = (self.unit, self.width, self.slab as usize);
        let slab_bytes = m * width * unit;
        for s in 0..slabs as usize {
            let at = s * slab_bytes;
            let src = &from[at..at + slab_bytes];
            let dst = &mut self.out[at..at + slab_bytes];
            transpose_units(src, dst, (m, width, unit), self.swap);
        }
    }

    /// `count` strings (`from`) of one slab into `out` by unit index: run `k` holds unit
    /// `k` of each.
    fn transpose_part(&mut self, from: &[u8], count: u64) {
        let (unit, width) = (self.unit, self.width);
        let bytes = count as usize * width * unit;
        let out = &mut self.out[..bytes];
        transpose_units(
            &from[..bytes],
            out,
            (count as usize, width, unit),
            self.swap,
        );
    }
}

/// `n` strings of `width` units of `unit` bytes (`src`) into `dst` by unit index (unit `k`
/// of string `i` at `k * n + i`), each unit's bytes reversed when `swap`.
fn transpose_units(
    src: &[u8],
    dst: &mut [u8],
    (n, width, unit): (usize, usize, usize),
    swap: bool,
) {
    for (i, string) in src.chunks_exact(width * unit).take(n).enumerate() {
        for (k, u) in string.chunks_exact(unit).enumerate() {
            let to = (k * n + i) * unit;
            let d = &mut dst[to..to + unit];
            d.copy_from_slice(u);
            if swap {
                d.reverse();
            }
        }
    }
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
    /// strings only, Fortran order of 2 and 3 axes, ASCII `U`, from `.npy` and `.npz`; the
    /// Level-5 element over the size (4 MiB) from which it is streamed. A Level-5 file holds scipy.io's char array of the text
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
            // Fortran order of several axes: staged by slabs (shape[-1] of them into v7.3).
            (
                ScalarKind::Unicode(5),
                vec![300, 70, 4],
                &wide,
                true,
                staged,
            ),
            (ScalarKind::Bytes(6), vec![700, 900], &latin, false, staged),
            (
                ScalarKind::Unicode(2),
                vec![3, 5, 40_000],
                &bmp,
                false,
                staged,
            ),
            // ASCII `U` (1-d: its Fortran order is its C order): a Level-5 file's UTF-8
            // bytes narrowed from the units with no code widened.
            (ScalarKind::Unicode(4), vec![1 << 20], &ascii, true, staged),
        ];
        for version in [MatOutVersion::V73, MatOutVersion::V7, MatOutVersion::V5] {
            for (i, (kind, shape, alphabet, big, sizes)) in cases.iter().enumerate() {
                let a = text(*kind, shape, alphabet, *big);
                let a = match i >= 8 {
                    true => a.to_order(Order::F),
                    false => a,
                };
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

    /// A 0-d string and a small array (under the size from which arrays stream) are left to
    /// the whole path; a Fortran-order one of several axes is staged.
    #[test]
    fn only_large_text_is_streamed() {
        let dir = tempfile::tempdir().unwrap();
        let a = text(ScalarKind::Unicode(3), &[20, 30], &[0x41], false);
        let (file, _) = saved(dir.path(), &a, false);
        let staged = sizes(4096, 0);
        let c = text_view(&file, &ArrayInfo::of(&a), staged, false).unwrap();
        let f = ArrayInfo::of(&a.to_order(Order::F));
        assert!(text_view(&file, &f, staged, false).unwrap().fortran && !c.fortran);
        let scalar = ArrayInfo::of(&text(ScalarKind::Unicode(3), &[], &[0x41], false));
        assert!(text_view(&file, &scalar, staged, false).is_none());
        assert!(text_view(&file, &ArrayInfo::of(&a), Sizes::DEFAULT, false).is_none());
    }

    /// The staged units of a Fortran-order array are the char array's MATLAB order (what
    /// index arithmetic over numpy's C-order array gives) in either layout, whatever bytes
    /// the batches hold (strings split between batches, parts of slabs, whole slabs),
    /// big-endian units made native.
    #[test]
    fn fortran_text_is_staged_in_matlab_order() {
        let dir = tempfile::tempdir().unwrap();
        let wide: Vec<u32> = vec![0x41, 0x3B1, 0x1F600, 0x4E2D];
        for (kind, shape, big) in [
            (ScalarKind::Unicode(3), vec![5, 4, 6], true),
            (ScalarKind::Bytes(4), vec![7, 9], false),
            (ScalarKind::Unicode(2), vec![2, 3, 2, 5], false),
            // One unit a string: parts of slabs are runs of the file as they are.
            (ScalarKind::Unicode(1), vec![4, 6], true),
        ] {
            let a = text(kind, &shape, &wide, big);
            let (unit, width) = match kind {
                ScalarKind::Unicode(w) => (4, w),
                ScalarKind::Bytes(w) => (1, w),
                _ => unreachable!(),
            };
            let n: usize = shape.iter().product();
            let c = a.as_bytes();
            let f = a.to_order(Order::F);
            for scipy in [true, false] {
                // Unit k of the string at C-order index i, native order.
                let unit_of = |i: usize, k: usize| -> Vec<u8> {
                    let mut u = c[(i * width + k) * unit..(i * width + k + 1) * unit].to_vec();
                    if big {
                        u.reverse();
                    }
                    u
                };
                // MATLAB's order over the char array: index -> (numpy index, k).
                let mut want = Vec::new();
                let last = *shape.last().unwrap();
                let m = n / last;
                for idx in 0..n * width {
                    let (e, k) = match scipy {
                        true => (idx % n, idx / n),
                        false => {
                            let (j, mm) = (idx / m, idx % m);
                            (mm + m * (j / width), j % width)
                        }
                    };
                    // Fortran index e -> C index.
                    let (mut rest, mut i, mut stride) = (e, 0, 1);
                    let mut strides = vec![0; shape.len()];
                    for ax in (0..shape.len()).rev() {
                        strides[ax] = stride;
                        stride *= shape[ax];
                    }
                    for (ax, &d) in shape.iter().enumerate() {
                        i += (rest % d) * strides[ax];
                        rest /= d;
                    }
                    want.extend(unit_of(i, k));
                }
                for batch in [1, 5, 13, 64, 1 << 20] {
                    let file = tempfile::tempfile_in(dir.path()).unwrap();
                    let view = TextView {
                        units: ArrayInfo::of(&a),
                        kind,
                        shape: shape.clone(),
                        source: ArrayInfo::of(&f),
                        unit,
                        width,
                        big,
                        scipy,
                        fortran: true,
                    };
                    let mut stage = FortranText::new(file, &view);
                    for b in f.as_bytes().chunks(batch) {
                        stage.put(b).unwrap();
                    }
                    assert_eq!(stage.next, n as u64);
                    let mut got = vec![0u8; want.len()];
                    crate::atomic::read_at(&stage.file, &mut got, 0).unwrap();
                    assert!(
                        got == want,
                        "{kind:?} {shape:?} scipy {scipy} batch {batch}"
                    );
                }
            }
        }
    }
}
