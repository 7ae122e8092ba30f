//! Bounds-checked little-endian field access over a byte slice (gimli/object style): every read
//! either returns the field or a [`ErrorKind::Truncated`] error naming the absolute file offset.

use sciio_core::{Error, Result};

/// A cursor over `data`, which starts at absolute file offset `base`.
#[derive(Debug, Clone)]
pub(crate) struct Fields<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    what: &'static str,
}

impl<'a> Fields<'a> {
    /// A cursor over `data` (a record called `what`) found at absolute offset `base`.
    pub(crate) fn new(data: &'a [u8], base: u64, what: &'static str) -> Self {
        Fields {
            data,
            pos: 0,
            base,
            what,
        }
    }

    /// The absolute file offset of the next field.
    pub(crate) fn offset(&self) -> u64 {
        self.base.saturating_add(self.pos as u64)
    }

    /// The next `n` bytes.
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.data.len());
        match end {
            Some(end) => {
                let out = &self.data[self.pos..end];
                self.pos = end;
                Ok(out)
            }
            None => Err(Error::truncated(format!(
                "{} needs {n} more bytes, {} remain",
                self.what,
                self.data.len() - self.pos
            ))
            .with_offset(self.offset())),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    pub(crate) fn u16(&mut self) -> Result<u16> {
        self.array().map(u16::from_le_bytes)
    }

    pub(crate) fn u32(&mut self) -> Result<u32> {
        self.array().map(u32::from_le_bytes)
    }

    pub(crate) fn u64(&mut self) -> Result<u64> {
        self.array().map(u64::from_le_bytes)
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
}

/// Little-endian field writer for headers.
#[derive(Debug, Default)]
pub(crate) struct Put(pub(crate) Vec<u8>);

impl Put {
    pub(crate) fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.0.extend_from_slice(v);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sciio_core::ErrorKind;

    #[test]
    fn reads_fields_and_reports_truncation_offset() {
        let data = [1u8, 0, 2, 0, 0, 0, 9];
        let mut f = Fields::new(&data, 100, "test record");
        assert_eq!(f.u16().unwrap(), 1);
        assert_eq!(f.u32().unwrap(), 2);
        let err = f.u16().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Truncated);
        assert_eq!(err.location().offset, Some(106));
    }
}
