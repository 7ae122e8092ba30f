//! A numpy text array written piece by piece ([`MatWriter::write_text_pieces`]): the file the
//! whole array's char variable makes ([`crate::from_numpy`]'s value and metadata), its codes
//! converted as they pass.

use sciio_core::{Result, ScalarKind};

use super::sink::Group;
use super::{python_attrs, MatWriter, Obj};
use crate::array_pieces::{ArrayPieces, TextGiven};
use crate::numpy::PythonMeta;
use crate::text_pieces::{TextPieces, TextSummary};
use crate::value::MatValue;

impl MatWriter {
    /// Writes the `S`/`U` array `text` as char variable `name` (a top-level name), asking
    /// for its codes a piece at a time; `meta` as in [`MatWriter::write_with_meta`]. The
    /// file is the same as when the whole array is written: v7.3, hdf5storage's char
    /// ([`crate::from_numpy`]); Level-5, scipy's ([`crate::scipy_chars`]; `text.shape` is
    /// then numpy's shape and the strings' width, see [`MatWriter::scipy_text`]). v7.3: `uint16` codes
    /// (`MATLAB_int_decode` 2), or `uint32` (4) when `text.summary` found a code beyond the
    /// BMP or a surrogate; a `bytes` array holding a non-ASCII byte (which hdf5storage keeps
    /// as fixed-length strings, `crate::byte_strings`) is gathered and written whole.
    pub fn write_text_pieces(
        &mut self,
        name: &str,
        mut text: TextPieces<'_>,
        meta: Option<&PythonMeta>,
    ) -> Result<()> {
        super::check_name(name)?;
        if let Some(w) = &mut self.level5 {
            return w
                .write_text_pieces(name, text)
                .map_err(|e| e.with_node(format!("/{name}")).with_file(&self.path));
        }
        if self.text_whole(&text, meta) {
            let value = MatValue::Char(text.gather()?);
            return self.write_with_meta(name, &value, meta);
        }
        self.replace_variable(name, |w, root| {
            let obj = w.codes_dataset(root, name, &mut text)?;
            match meta.and_then(|m| m.attrs.as_ref()) {
                Some(attrs) => python_attrs(&obj, attrs),
                None => Ok(()),
            }
        })
    }

    /// Whether text is gathered and written whole rather than piece by piece: on big-endian
    /// hosts, through libhdf5, when empty, when `value` must make the metadata of a value
    /// without, and for a `bytes` array hdf5storage keeps as strings.
    fn text_whole(&self, text: &TextPieces<'_>, meta: Option<&PythonMeta>) -> bool {
        cfg!(target_endian = "big")
            || self.opts.libhdf5
            || text.len().is_none_or(|n| n == 0)
            || (meta.is_none() && self.opts.python_metadata)
            || kept_as_strings(meta, &text.summary)
    }

    /// The char dataset of `text`'s codes (non-empty) in group `loc`, as `char` writes the
    /// whole array's: `uint16` codes (`MATLAB_int_decode` 2), or `uint32` (4) when the
    /// summary found a code beyond the BMP or a surrogate; filled piece by piece.
    fn codes_dataset(&mut self, loc: &Group, name: &str, text: &mut TextPieces<'_>) -> Result<Obj> {
        let to = if text.summary.utf16() { 2 } else { 4 };
        let shape = text.shape.clone();
        let mut fill = |first: u64, buf: &mut [u8]| text.fill_wide(first, buf, to);
        let mut array = ArrayPieces {
            kind: ScalarKind::UInt(to as u8),
            shape,
            fill: &mut fill,
        };
        let obj = self.pieces_dataset(loc, name, &mut array, "char")?;
        obj.int_decode(to as i32)?;
        Ok(obj)
    }

    /// Writes text array `given` as `name` in group `loc` (a field of a struct being
    /// written, [`MatWriter::write_tree`]), with its `H5PATH` and `meta`'s attributes: the
    /// char array `value` writes of the whole array ([`crate::from_numpy`]'s value and
    /// metadata), its codes (or a `bytes` array's strings) filled piece by piece; gathered
    /// and written whole where [`MatWriter::write_text_pieces`] would be.
    pub(super) fn text_in(
        &mut self,
        loc: &Group,
        name: &str,
        given: TextGiven<'_>,
        meta: Option<&PythonMeta>,
    ) -> Result<Obj> {
        let obj = match given {
            TextGiven::Codes(mut text) => {
                if self.text_whole(&text, meta) {
                    let value = MatValue::Char(text.gather()?);
                    // `value` adds the `H5PATH` and metadata.
                    return self.value(loc, name, &value, meta);
                }
                self.codes_dataset(loc, name, &mut text)?
            }
            TextGiven::Strings(mut strings) => {
                if self.opts.libhdf5 || strings.size().is_none_or(|(n, _)| n == 0) {
                    let (value, meta) = crate::from_numpy(&strings.gather()?)?;
                    return self.value(loc, name, &value, Some(&meta));
                }
                let obj = self.pieces_dataset(loc, name, &mut strings, "char")?;
                obj.int_decode(1)?;
                obj
            }
        };
        if loc.path() != "/" {
            obj.str_attr("H5PATH", loc.path())?;
        }
        if let Some(attrs) = meta.and_then(|m| m.attrs.as_ref()) {
            python_attrs(&obj, attrs)?;
        }
        Ok(obj)
    }
}

impl MatWriter {
    /// Whether numpy text arrays take `scipy.io.savemat`'s char layout in this file
    /// ([`crate::scipy_chars`]: a Level-5 file, read by scipy.io and MATLAB) rather than
    /// hdf5storage's ([`crate::from_numpy`]: v7.3).
    pub fn scipy_text(&self) -> bool {
        self.level5.is_some()
    }

    /// Whether the file is a v7.3 (HDF5) one, where a bytes array holding a non-ASCII byte
    /// is kept as fixed-length strings ([`MatWriter::write_byte_strings_pieces`]).
    pub fn keeps_byte_strings(&self) -> bool {
        self.level5.is_none()
    }

    /// Writes a bytes array (`strings.kind` `Bytes(w)`, numpy's shape) holding a non-ASCII
    /// byte as variable `name` of a v7.3 file as hdf5storage stores it: its fixed-length
    /// strings, asked for in MATLAB's (column-major) order a piece at a time, in a dataset of
    /// class char (`crate::byte_strings`); the file the whole array makes.
    pub fn write_byte_strings_pieces(
        &mut self,
        name: &str,
        mut strings: ArrayPieces<'_>,
        meta: Option<&PythonMeta>,
    ) -> Result<()> {
        super::check_name(name)?;
        let sized = strings.size().is_some_and(|(n, _)| n > 0);
        let bytes = matches!(strings.kind, ScalarKind::Bytes(w) if w > 0);
        if !bytes || !sized || self.level5.is_some() || self.opts.libhdf5 {
            return Err(sciio_core::Error::invalid_input(
                "internal: byte strings written piece by piece are of a non-empty bytes array \
                 into a v7.3 file",
            ));
        }
        self.replace_variable(name, |w, root| {
            let obj = w.pieces_dataset(root, name, &mut strings, "char")?;
            obj.int_decode(1)?;
            match meta.and_then(|m| m.attrs.as_ref()) {
                Some(attrs) => python_attrs(&obj, attrs),
                None => Ok(()),
            }
        })
    }
}

/// Whether the whole path stores these codes as fixed-length byte strings: a `bytes` array
/// (so `meta` says) holding a non-ASCII byte.
fn kept_as_strings(meta: Option<&PythonMeta>, summary: &TextSummary) -> bool {
    let under = meta
        .and_then(|m| m.attrs.as_ref())
        .map(|a| a.underlying.as_str());
    under.and_then(crate::byte_strings::bytes_width).is_some() && summary.max >= 128
}
