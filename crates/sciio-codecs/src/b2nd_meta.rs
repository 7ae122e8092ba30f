//! The `b2nd` (formerly `caterva`) metalayer of a Blosc2 super-chunk, decoded and checked in Rust.
//!
//! c-blosc2's `b2nd_deserialize_meta` trusts every byte of this msgpack record (an `ndim` over 8
//! overruns its fixed arrays, a zero chunk or block extent divides by zero, a huge dtype length
//! reaches an unchecked `malloc`), and `b2nd_get_slice_cbuffer` sizes an index buffer by the
//! frame's chunk count while walking the chunk grid the metalayer claims. Damaged PyTables
//! blosc2 files crashed sciio there (SIGSEGV, SIGFPE), so the record is validated here first,
//! against itself, the super-chunk and the HDF5 chunk it must fill, before c-blosc2 sees it.

use sciio_core::{Error, ErrorKind, Result};

/// c-blosc2's `B2ND_MAX_DIM`.
const MAX_DIM: usize = 8;

/// The geometry a valid `b2nd` metalayer describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct B2ndMeta {
    pub shape: Vec<i64>,
    pub chunkshape: Vec<i32>,
    pub blockshape: Vec<i32>,
}

fn corrupt(what: impl Into<String>) -> Error {
    Error::new(ErrorKind::Corrupt, what.into())
}

/// A bounds-checked cursor over the metalayer bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                corrupt(format!(
                    "blosc2 b2nd metadata ends inside its {what} (byte {} of {})",
                    self.at,
                    self.bytes.len()
                ))
            })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn byte(&mut self, what: &str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    fn marker(&mut self, expected: u8, what: &str) -> Result<()> {
        let got = self.byte(what)?;
        if got != expected {
            return Err(corrupt(format!(
                "blosc2 b2nd metadata: {what} has marker {got:#04x}, expected {expected:#04x}"
            )));
        }
        Ok(())
    }

    fn be<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut word = [0u8; N];
        word.copy_from_slice(self.take(N, what)?);
        Ok(word)
    }
}

/// Decodes the metalayer as `b2nd_serialize_meta` writes it and checks every extent.
pub(crate) fn parse(content: &[u8]) -> Result<B2ndMeta> {
    let mut c = Cursor {
        bytes: content,
        at: 0,
    };
    let head = c.byte("array header")?;
    if !(0x90..=0x9f).contains(&head) {
        return Err(corrupt("blosc2 b2nd metadata is not a msgpack array"));
    }
    let _version = c.byte("version")?;
    let ndim = usize::from(c.byte("ndim")?);
    if ndim == 0 || ndim > MAX_DIM {
        return Err(corrupt(format!(
            "blosc2 b2nd metadata claims {ndim} dimensions (1 to {MAX_DIM} are possible)"
        )));
    }
    let array_marker = 0x90 + ndim as u8;
    c.marker(array_marker, "shape")?;
    let mut shape = Vec::with_capacity(ndim);
    for _ in 0..ndim {
        c.marker(0xd3, "shape")?;
        let d = i64::from_be_bytes(c.be::<8>("shape")?);
        if d < 0 {
            return Err(corrupt(format!(
                "blosc2 b2nd shape has a negative extent {d}"
            )));
        }
        shape.push(d);
    }
    let chunkshape = extents(&mut c, array_marker, ndim, "chunkshape")?;
    let blockshape = extents(&mut c, array_marker, ndim, "blockshape")?;
    if let Some(i) = (0..ndim).find(|&i| blockshape[i] > chunkshape[i]) {
        return Err(corrupt(format!(
            "blosc2 b2nd block extent {} exceeds the chunk extent {} in dimension {i}",
            blockshape[i], chunkshape[i]
        )));
    }
    if c.at < content.len() {
        // dtype: format byte, str32 marker, big-endian length, the text.
        let _format = c.byte("dtype format")?;
        c.marker(0xdb, "dtype")?;
        let len = u32::from_be_bytes(c.be::<4>("dtype length")?);
        c.take(len as usize, "dtype")?;
    }
    Ok(B2ndMeta {
        shape,
        chunkshape,
        blockshape,
    })
}

fn extents(c: &mut Cursor<'_>, marker: u8, ndim: usize, what: &str) -> Result<Vec<i32>> {
    c.marker(marker, what)?;
    let mut out = Vec::with_capacity(ndim);
    for _ in 0..ndim {
        c.marker(0xd2, what)?;
        let d = i32::from_be_bytes(c.be::<4>(what)?);
        if d < 1 {
            return Err(corrupt(format!("blosc2 b2nd {what} has an extent of {d}")));
        }
        out.push(d);
    }
    Ok(out)
}

impl B2ndMeta {
    /// Checks the geometry against the super-chunk holding it and the bytes the HDF5 chunk
    /// expects; returns the array's size in bytes.
    pub(crate) fn check(
        &self,
        typesize: i32,
        nchunks: i64,
        expected: Option<usize>,
        max_bytes: usize,
    ) -> Result<usize> {
        let typesize = usize::try_from(typesize)
            .ok()
            .filter(|&t| t > 0)
            .ok_or_else(|| corrupt(format!("blosc2 b2nd item size is {typesize}")))?;
        let overflow = || corrupt("blosc2 b2nd geometry overflows");
        let mut items = 1usize;
        let mut chunk_items = 1usize;
        let mut grid = 1usize;
        for ((&d, &c), &b) in self
            .shape
            .iter()
            .zip(&self.chunkshape)
            .zip(&self.blockshape)
        {
            let d = usize::try_from(d).map_err(|_| overflow())?;
            let (c, b) = (c as usize, b as usize);
            items = items.checked_mul(d).ok_or_else(overflow)?;
            // The chunk padded to whole blocks, as c-blosc2 stores it.
            let ext_chunk = c.div_ceil(b).checked_mul(b).ok_or_else(overflow)?;
            chunk_items = chunk_items.checked_mul(ext_chunk).ok_or_else(overflow)?;
            grid = grid.checked_mul(d.div_ceil(c)).ok_or_else(overflow)?;
        }
        let size = items.checked_mul(typesize).ok_or_else(overflow)?;
        let chunk_bytes = chunk_items.checked_mul(typesize).ok_or_else(overflow)?;
        if let Some(e) = expected.filter(|&e| e != size) {
            return Err(corrupt(format!(
                "blosc2 b2nd array holds {size} bytes, the HDF5 chunk holds {e}"
            )));
        }
        if size > max_bytes || chunk_bytes > max_bytes || i32::try_from(chunk_bytes).is_err() {
            return Err(corrupt(format!(
                "blosc2 b2nd array announces {size} bytes in chunks of {chunk_bytes}, more than a chunk can hold"
            )));
        }
        if i64::try_from(grid).ok() != Some(nchunks) {
            return Err(corrupt(format!(
                "blosc2 b2nd shape needs {grid} chunks, the frame holds {nchunks}"
            )));
        }
        Ok(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(ndim: u8, shape: &[i64], chunks: &[i32], blocks: &[i32]) -> Vec<u8> {
        let mut m = vec![0x97, 0, ndim, 0x90 + ndim];
        for &d in shape {
            m.push(0xd3);
            m.extend(d.to_be_bytes());
        }
        for set in [chunks, blocks] {
            m.push(0x90 + ndim);
            for &d in set {
                m.push(0xd2);
                m.extend(d.to_be_bytes());
            }
        }
        m.extend([0, 0xdb, 0, 0, 0, 3]);
        m.extend(b"<f8");
        m
    }

    #[test]
    fn reads_what_c_blosc2_writes() {
        let m = parse(&meta(2, &[10, 4], &[10, 4], &[5, 4])).unwrap();
        assert_eq!(m.shape, [10, 4]);
        assert_eq!(m.check(8, 1, Some(320), usize::MAX).unwrap(), 320);
    }

    #[test]
    fn refuses_damaged_geometry() {
        let ok = meta(2, &[10, 4], &[10, 4], &[5, 4]);
        assert!(parse(&meta(2, &[10, 4], &[0, 4], &[5, 4])).is_err());
        assert!(parse(&meta(2, &[10, 4], &[10, 4], &[11, 4])).is_err());
        assert!(parse(&meta(2, &[-1, 4], &[10, 4], &[5, 4])).is_err());
        let mut big_ndim = ok.clone();
        big_ndim[2] = 100;
        assert!(parse(&big_ndim).is_err());
        let without_dtype = ok.len() - 9;
        for cut in (0..ok.len()).filter(|&c| c != without_dtype) {
            assert!(parse(&ok[..cut]).is_err(), "cut at {cut}");
        }
        assert!(parse(&ok[..without_dtype]).is_ok());
        let mut long_dtype = ok.clone();
        let n = long_dtype.len();
        long_dtype[n - 5] = 0x7f;
        assert!(parse(&long_dtype).is_err());
        let m = parse(&ok).unwrap();
        assert!(m.check(8, 2, None, usize::MAX).is_err(), "chunk count");
        assert!(m.check(0, 1, None, usize::MAX).is_err(), "typesize");
        assert!(m.check(8, 1, Some(8), usize::MAX).is_err(), "expected size");
    }
}
