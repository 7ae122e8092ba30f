//! Logical bytes made numpy booleans on their way out of a streamed copy (v7.3 in `read.rs`,
//! Level 5 in `v5/plain.rs`): MATLAB stores a logical in bytes that may hold any value, numpy's
//! bool holds 0 or 1, and the whole read makes every nonzero byte 1.

use std::io::Write;

/// A writer passing on logical bytes as numpy booleans: any nonzero byte becomes 1.
pub(crate) struct Booleans<'a> {
    out: &'a mut dyn Write,
    /// The last write's booleans (kept from write to write: one allocation per copy).
    buf: Vec<u8>,
}

impl<'a> Booleans<'a> {
    pub(crate) fn new(out: &'a mut dyn Write) -> Self {
        Booleans {
            out,
            buf: Vec::new(),
        }
    }

    /// `out` itself, or (`logical`) `out` behind booleans held in `slot`.
    pub(crate) fn when(
        logical: bool,
        out: &'a mut dyn Write,
        slot: &'a mut Option<Booleans<'a>>,
    ) -> &'a mut dyn Write {
        match logical {
            false => out,
            true => slot.insert(Booleans::new(out)),
        }
    }
}

impl Write for Booleans<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buf.clear();
        self.buf.extend(buf.iter().map(|&b| u8::from(b != 0)));
        self.out.write_all(&self.buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::Booleans;

    /// Every nonzero byte becomes 1, zeros stay, over several writes (the buffer reused).
    #[test]
    fn nonzero_bytes_become_one() {
        let mut out = Vec::new();
        let mut slot = None;
        let w = Booleans::when(true, &mut out, &mut slot);
        w.write_all(&[0, 1, 2, 255]).unwrap();
        w.write_all(&[7, 0]).unwrap();
        assert_eq!(out, [0, 1, 1, 1, 1, 0]);
        let mut plain = Vec::new();
        let mut none = None;
        Booleans::when(false, &mut plain, &mut none)
            .write_all(&[0, 2])
            .unwrap();
        assert_eq!(plain, [0, 2]);
    }
}
