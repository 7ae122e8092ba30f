//! A numpy text array (`S` or `U`) given piece by piece ([`TextPieces`]) to
//! [`crate::MatWriter::write_text_pieces`]: its code units in MATLAB's order, converted as
//! they pass into what the whole array's char variable holds (v7.3: `uint16` codes, or
//! `uint32` when some code is beyond the BMP or a surrogate; Level-5: UTF-8, or UTF-16 when
//! some code is no character), so a text array larger than memory can be written. What to
//! convert into is decided by a first pass over the codes ([`TextSummary`]).

use sciio_core::{Error, Result};

use crate::value::CharArray;

/// Fills `buf` with the elements from `first` on in MATLAB's order (column-major), in native
/// byte order, `buf.len()` being a whole number of elements.
pub type FillElements<'a> = dyn FnMut(u64, &mut [u8]) -> Result<()> + 'a;

/// What a first pass over a text array's codes found: it decides how they are stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextSummary {
    /// The largest code.
    pub max: u32,
    /// Whether some code is a UTF-16 surrogate (`0xD800..=0xDFFF`).
    pub surrogate: bool,
    /// Bytes of the codes as UTF-8 (codes that are characters; see [`TextSummary::chars`]).
    pub utf8_bytes: u64,
    /// Codes seen.
    pub codes: u64,
}

impl TextSummary {
    /// Takes the next code units: `unit` bytes each (1 for `S`, 4 for `U`), big-endian
    /// when `big` (a `>U` array).
    pub fn add(&mut self, unit: usize, big: bool, units: &[u8]) {
        if unit == 1 {
            // Bytes: every one a character of one or two UTF-8 bytes, none a surrogate.
            let max = units.iter().copied().max().unwrap_or(0);
            let high = units.iter().filter(|&&b| b >= 0x80).count() as u64;
            self.max = self.max.max(u32::from(max));
            self.utf8_bytes += units.len() as u64 + high;
            self.codes += units.len() as u64;
            return;
        }
        for_each_code(unit, big, units, |code| self.add_code(code));
    }

    fn add_code(&mut self, code: u32) {
        self.max = self.max.max(code);
        self.surrogate |= (0xD800..=0xDFFF).contains(&code);
        self.utf8_bytes += char::from_u32(code).map_or(0, |c| c.len_utf8() as u64);
        self.codes += 1;
    }

    /// Whether every code is a Unicode scalar value (Level-5 files store them as UTF-8).
    pub fn chars(&self) -> bool {
        !self.surrogate && self.max <= 0x10FFFF
    }

    /// Whether every code is one UTF-16 unit (v7.3 stores them as `uint16`, else `uint32`).
    pub fn utf16(&self) -> bool {
        !self.surrogate && self.max <= 0xFFFF
    }
}

/// Calls `each` with every code of `units` (`unit` bytes each, big-endian when `big`).
fn for_each_code(unit: usize, big: bool, units: &[u8], mut each: impl FnMut(u32)) {
    match unit {
        4 => {
            for c in units.chunks_exact(4) {
                let b = [c[0], c[1], c[2], c[3]]; // ok: chunks of 4
                each(match big {
                    true => u32::from_be_bytes(b),
                    false => u32::from_le_bytes(b),
                });
            }
        }
        _ => units.iter().for_each(|&b| each(u32::from(b))),
    }
}

/// A numpy `S`/`U` array given piece by piece as a char array of `shape`, its codes in
/// MATLAB's order: for v7.3, hdf5storage's (numpy's shape with its last axis `width` times
/// longer, at least 2-d, [`crate::from_numpy`]); for Level-5 files, scipy.io's (numpy's
/// shape with `width` appended, [`crate::scipy_chars`]; see
/// [`crate::MatWriter::scipy_text`]).
pub struct TextPieces<'a> {
    /// Bytes of a code unit as `fill` gives them (native byte order): 1 (`S`) or 4 (`U`).
    pub unit: usize,
    /// The char array's shape.
    pub shape: Vec<usize>,
    /// What the first pass over the codes found.
    pub summary: TextSummary,
    /// Gives the code units from an index on, column-major over `shape`.
    pub fill: &'a mut FillElements<'a>,
}

impl std::fmt::Debug for TextPieces<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextPieces")
            .field("unit", &self.unit)
            .field("shape", &self.shape)
            .field("summary", &self.summary)
            .finish()
    }
}

impl TextPieces<'_> {
    /// Codes in the array (`None` when the count overflows).
    pub(crate) fn len(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d as u64))
    }

    /// Codes `first..first + n` into `out`.
    pub(crate) fn codes(&mut self, first: u64, out: &mut Vec<u32>, n: usize) -> Result<()> {
        let mut scratch = vec![0u8; n * self.unit];
        (self.fill)(first, &mut scratch)?;
        out.clear();
        for_each_code(self.unit, cfg!(target_endian = "big"), &scratch, |c| {
            out.push(c)
        });
        Ok(())
    }

    /// Codes `first..first + n` as bytes into `out`, NULs as spaces, for text whose codes
    /// are all ASCII (`summary.max < 0x80`): their UTF-8, with no code widened on the way.
    pub(crate) fn ascii(&mut self, first: u64, out: &mut Vec<u8>, n: usize) -> Result<()> {
        out.clear();
        out.resize(n * self.unit, 0);
        (self.fill)(first, out)?;
        if self.unit == 4 {
            // Native-order units: the code is the unit's value, under 0x80 when ASCII.
            for k in 0..n {
                let c = &out[4 * k..4 * k + 4];
                let code = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]); // ok: 4 bytes
                out[k] = u8::try_from(code).unwrap_or(0x80);
            }
            out.truncate(n);
        }
        // One pass: NULs made spaces, every byte's high bit gathered.
        let mut high = 0u8;
        for b in out.iter_mut() {
            high |= *b;
            *b = if *b == 0 { b' ' } else { *b };
        }
        if high >= 0x80 {
            return Err(Error::format(
                "the text array's codes changed between the passes over them",
            ));
        }
        Ok(())
    }

    /// Codes from `first` on into `buf` as stored units of `to` bytes ([`widen`]), read
    /// [`PART`] codes at a time (the writer's pieces are large: no copy of a piece as codes).
    pub(crate) fn fill_wide(&mut self, first: u64, buf: &mut [u8], to: usize) -> Result<()> {
        let mut codes = Vec::new();
        for (i, out) in buf.chunks_mut(PART * to).enumerate() {
            let at = first + (i * PART) as u64;
            self.codes(at, &mut codes, out.len() / to)?;
            widen(&codes, to, out);
        }
        Ok(())
    }

    /// The whole char array, read at once: for small arrays and the writers that take
    /// whole values.
    pub(crate) fn gather(&mut self) -> Result<CharArray> {
        let n = self
            .len()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| Error::unsupported("an array larger than this address space"))?;
        let mut codes = Vec::with_capacity(n);
        self.codes(0, &mut codes, n)?;
        Ok(CharArray {
            shape: self.shape.clone(),
            codes,
            numpy: None,
        })
    }
}

/// Codes converted at a time (the source's pieces are read in parts of this many).
pub(crate) const PART: usize = 1 << 20;

/// Codes written into bytes of the stored type, native byte order: `uint16` (`to` 2, codes
/// checked by [`TextSummary::utf16`]) or `uint32` (`to` 4).
pub(crate) fn widen(codes: &[u32], to: usize, buf: &mut [u8]) {
    match to {
        2 => {
            for (c, b) in codes.iter().zip(buf.chunks_exact_mut(2)) {
                b.copy_from_slice(&(*c as u16).to_ne_bytes());
            }
        }
        _ => {
            for (c, b) in codes.iter().zip(buf.chunks_exact_mut(4)) {
                b.copy_from_slice(&c.to_ne_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_decides_the_storage() {
        let mut s = TextSummary::default();
        s.add(1, false, b"ab\xff");
        assert_eq!((s.max, s.utf8_bytes, s.codes), (255, 4, 3));
        assert!(s.utf16() && s.chars());
        let mut u = TextSummary::default();
        u.add(4, true, &[0, 1, 0xF6, 0x00, 0, 0, 0xD8, 0]);
        assert_eq!(u.max, 0x1F600);
        assert!(u.surrogate && !u.utf16() && !u.chars());
    }
}
