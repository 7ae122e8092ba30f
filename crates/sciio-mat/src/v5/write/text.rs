//! A numpy text array written piece by piece into a Level-5 file: the `miMATRIX` element of
//! class char the whole array makes (`chars`: UTF-8, or UTF-16 when some code is no
//! character), its codes encoded as they pass. The codes come in `scipy.io.savemat`'s layout
//! (numpy's shape and the strings' width, [`crate::scipy_chars`]): NULs are written as
//! spaces, and a `U` array of empty strings only is scipy's empty char.

use sciio_core::{Error, Result};

use super::{matrix, matrix_head, Level5Writer, MAX_VARIABLE, PARALLEL_FROM};
use crate::array_pieces::PutBytes;
use crate::numpy::scipy_text;
use crate::text_pieces::{TextPieces, PART};
use crate::v5::consts::MX_CHAR;
use crate::v5::cursor::{MI_UTF16, MI_UTF8};
use crate::value::MatValue;

impl Level5Writer {
    /// Appends char variable `name` given piece by piece (`text.shape`: numpy's shape and the
    /// strings' width): the bytes [`Level5Writer::write`] makes of the whole array's
    /// [`crate::scipy_chars`], written (v7: deflated) as they come. Small variables, and
    /// `U` arrays of empty strings only, are written whole.
    pub(crate) fn write_text_pieces(&mut self, name: &str, mut text: TextPieces<'_>) -> Result<()> {
        let (ty, n, data_bytes) = encoding(&text)?;
        let unicode = text.unit == 4;
        if text.summary.max == 0 && unicode {
            // Only NULs: empty strings, which scipy writes as an empty char (nothing to read).
            let empty = scipy_text(text.shape, Vec::new(), unicode);
            return self.write(name, &MatValue::Char(empty));
        }
        if data_bytes < PARALLEL_FROM as u64 || !name.is_ascii() || name.len() > 63 {
            let whole = text.gather()?;
            let chars = scipy_text(whole.shape, whole.codes, unicode);
            return self.write(name, &MatValue::Char(chars));
        }
        let size = 64 + 2 * n;
        if size > MAX_VARIABLE {
            return Err(Error::unsupported(format!(
                "the variable needs about {size} bytes, over the 2 GB a MAT v5/v7 variable can \
                 hold: write MAT v7.3 instead (--mat-version 7.3)"
            )));
        }
        let element = TextElement::Streamed {
            head: char_head(name, &text.shape, ty, data_bytes)?,
            ty,
            n,
            data_bytes,
        };
        self.put_streamed(&mut |put| element.put(&mut text, put))
    }
}

/// A text array's char `miMATRIX` element planned before any of it is written (a struct
/// field's: its length comes before it): made whole (empty or tiny text), or its head and
/// how its codes are encoded as they come.
pub(crate) enum TextElement {
    Whole(Vec<u8>),
    Streamed {
        head: Vec<u8>,
        ty: u32,
        n: u64,
        data_bytes: u64,
    },
}

impl TextElement {
    /// Plans the element named `name` (`""` for a struct's field) of `text`, from its
    /// summary: the bytes `matrix` makes of [`crate::scipy_chars`]' value.
    pub(crate) fn plan(name: &str, text: &mut TextPieces<'_>) -> Result<TextElement> {
        let (ty, n, data_bytes) = encoding(text)?;
        let unicode = text.unit == 4;
        let whole = match (text.summary.max == 0 && unicode, data_bytes <= 4) {
            // Only NULs: scipy's empty char, nothing to read.
            (true, _) => Some(scipy_text(text.shape.clone(), Vec::new(), unicode)),
            // The short data element form: made from the few codes.
            (false, true) => {
                let whole = text.gather()?;
                Some(scipy_text(whole.shape, whole.codes, unicode))
            }
            (false, false) => None,
        };
        if let Some(chars) = whole {
            let mut bytes = Vec::new();
            matrix(&mut bytes, name, &MatValue::Char(chars))?;
            return Ok(TextElement::Whole(bytes));
        }
        Ok(TextElement::Streamed {
            head: char_head(name, &text.shape, ty, data_bytes)?,
            ty,
            n,
            data_bytes,
        })
    }

    /// The element's length, tag included.
    pub(crate) fn len(&self) -> u64 {
        match self {
            TextElement::Whole(bytes) => bytes.len() as u64,
            TextElement::Streamed {
                head, data_bytes, ..
            } => head.len() as u64 + data_bytes.div_ceil(8) * 8,
        }
    }

    /// Gives the element's bytes to `put`: its head, then the codes read from `text` piece
    /// by piece and encoded (NULs as spaces), then the padding.
    pub(crate) fn put(&self, text: &mut TextPieces<'_>, put: &mut PutBytes<'_>) -> Result<()> {
        let (head, ty, n, data_bytes) = match self {
            TextElement::Whole(bytes) => return put(bytes),
            TextElement::Streamed {
                head,
                ty,
                n,
                data_bytes,
            } => (head, *ty, *n, *data_bytes),
        };
        if text.len() != Some(n) {
            return Err(Error::format(
                "the text array's codes are not the ones planned (changed while read)",
            ));
        }
        put(head)?;
        let (mut first, mut codes, mut bytes) = (0u64, Vec::new(), Vec::new());
        let mut written = 0u64;
        // ASCII (what instruments and most data write): the stored bytes are the codes.
        let ascii = ty == MI_UTF8 && text.summary.max < 0x80;
        while first < n {
            let k = (PART as u64).min(n - first);
            match ascii {
                true => text.ascii(first, &mut bytes, k as usize)?,
                false => {
                    text.codes(first, &mut codes, k as usize)?;
                    encode(&codes, ty, &mut bytes)?;
                }
            }
            written += bytes.len() as u64;
            if written > data_bytes {
                return Err(changed_text());
            }
            put(&bytes)?;
            first += k;
        }
        if written != data_bytes {
            return Err(changed_text());
        }
        put(&vec![0u8; ((8 - data_bytes % 8) % 8) as usize])
    }
}

fn changed_text() -> Error {
    Error::format("the text array's codes changed between the passes over them")
}

/// The data type (UTF-8 or UTF-16), code count and data bytes of `text`'s char element,
/// from its summary (checked against its shape).
fn encoding(text: &TextPieces<'_>) -> Result<(u32, u64, u64)> {
    let summary = text.summary;
    let n = text
        .len()
        .ok_or_else(|| Error::invalid_input("the array's size overflows"))?;
    if summary.codes != n {
        return Err(Error::format(format!(
            "the text array's first pass saw {} codes, not the {n} of its shape",
            summary.codes
        )));
    }
    match summary.chars() {
        true => Ok((MI_UTF8, n, summary.utf8_bytes)),
        false if summary.max <= 0xFFFF => Ok((MI_UTF16, n, 2 * n)),
        false => Err(Error::unsupported(format!(
            "character code {:#x} is not a character",
            summary.max
        ))),
    }
}

/// The `miMATRIX` element of a char array up to its data: tag, array flags, dimensions,
/// name and the tag of the data element (`ty`, `data_bytes` long).
fn char_head(name: &str, shape: &[usize], ty: u32, data_bytes: u64) -> Result<Vec<u8>> {
    let mut head = matrix_head(MX_CHAR, shape, name)?;
    let len = (head.len() as u64 - 8) + 8 + data_bytes.div_ceil(8) * 8;
    // The whole array's checks (`Level5Writer::write`) of the whole element.
    if len + 8 > MAX_VARIABLE {
        return Err(Error::unsupported(
            "the variable is over the 2 GB a MAT v5/v7 variable can hold: write MAT v7.3 \
             instead (--mat-version 7.3)",
        ));
    }
    let (len, data) = match (u32::try_from(len), u32::try_from(data_bytes)) {
        (Ok(l), Ok(d)) => (l, d),
        _ => {
            return Err(Error::unsupported(
                "the variable is over 4 GB: write MAT v7.3 (--mat-version 7.3)",
            ))
        }
    };
    head[4..8].copy_from_slice(&len.to_le_bytes());
    head.extend_from_slice(&ty.to_le_bytes());
    head.extend_from_slice(&data.to_le_bytes());
    Ok(head)
}

/// Codes as the data of a char element of type `ty` (UTF-8 or UTF-16, little-endian), NULs
/// as spaces (as [`scipy_text`]).
fn encode(codes: &[u32], ty: u32, out: &mut Vec<u8>) -> Result<()> {
    out.clear();
    let not_char =
        |code: u32| Error::unsupported(format!("character code {code:#x} is not a character"));
    for &code in codes {
        let code = match code {
            0 => u32::from(b' '),
            c => c,
        };
        if ty == MI_UTF8 {
            let c = char::from_u32(code).ok_or_else(|| not_char(code))?;
            let mut b = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
        } else {
            let unit = u16::try_from(code).map_err(|_| not_char(code))?;
            out.extend_from_slice(&unit.to_le_bytes());
        }
    }
    Ok(())
}
