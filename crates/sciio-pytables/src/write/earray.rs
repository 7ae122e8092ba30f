//! Appending to an EArray whose extendable dimension (`EXTDIM`) is not the first one, such as
//! PyTables' `create_earray(..., shape=(3, 0, 4))` growing along axis 1.
//!
//! sciio-hdf5's `ChunkAppender` streams rows along dimension 0, where a block of rows is one
//! contiguous run of bytes. Along another dimension a block `(outer, m, inner)` interleaves
//! with what is already stored, so the rows are gathered here into one *band*: every element
//! whose index along `EXTDIM` falls in one chunk's span. A full band is cut into chunks,
//! compressed on all cores and written; the last partial band is kept (memory: one band,
//! whatever the number of rows) and written zero-padded after every append, so the file
//! always holds every row, as PyTables' own appends leave it.

use sciio_core::{Error, Result};
use sciio_hdf5::write::DatasetWriter;
use sciio_hdf5::Slice;

/// Bands of chunks encoded per `write_chunks` call at most (bounds the encoded bytes held).
const CHUNKS_PER_WRITE: usize = 64;

/// Streams blocks into a chunked dataset along dimension `extdim`.
#[derive(Debug)]
pub(super) struct ExtAppender {
    extdim: usize,
    /// Current shape (`shape[extdim]` rows written, the partial band included).
    shape: Vec<u64>,
    chunk: Vec<u64>,
    elem: usize,
    /// Number of index combinations before `extdim` (product of `shape[..extdim]`).
    outer: usize,
    /// Bytes of one step along `extdim` for one outer index (product of `shape[extdim+1..]`).
    inner: usize,
    /// The open band: `outer × chunk[extdim] × inner` bytes in C order, zero past `filled`.
    band: Vec<u8>,
    /// Rows of the open band that hold data.
    filled: u64,
}

impl ExtAppender {
    /// Starts appending after the dataset's current extent. `tail` holds the rows of a
    /// partial last band as [`read_tail`] returns them, so appends continue it.
    pub(super) fn new(
        ds: &DatasetWriter,
        extdim: usize,
        tail: Option<&[u8]>,
    ) -> Result<ExtAppender> {
        let shape = ds.shape()?;
        let Some(chunk) = ds.chunk().map(<[u64]>::to_vec) else {
            return Err(Error::invalid_input("an EArray must be chunked").with_node(ds.path()));
        };
        check_layout(&shape, &chunk, extdim).map_err(|e| e.with_node(ds.path()))?;
        let elem = ds.dtype().size();
        let outer = count(&shape[..extdim])?;
        let inner = count(&shape[extdim + 1..])?
            .checked_mul(elem)
            .ok_or_else(too_large)?;
        let band_bytes = outer
            .checked_mul(chunk[extdim] as usize)
            .and_then(|n| n.checked_mul(inner))
            .ok_or_else(too_large)?;
        let filled = shape[extdim] % chunk[extdim];
        let mut app = ExtAppender {
            extdim,
            band: vec![0; band_bytes],
            filled,
            shape,
            chunk,
            elem,
            outer,
            inner,
        };
        if filled > 0 {
            let tail = tail.ok_or_else(|| {
                Error::invalid_input("the rows of the partial last chunk were not read back")
                    .with_node(ds.path())
            })?;
            app.load_tail(tail).map_err(|e| e.with_node(ds.path()))?;
        }
        Ok(app)
    }

    /// Rows along `extdim` so far.
    pub(super) fn rows(&self) -> u64 {
        self.shape[self.extdim]
    }

    fn band_rows(&self) -> u64 {
        self.chunk[self.extdim]
    }

    /// Loads the rows of the partial last band (`outer × filled × inner` bytes) into `band`.
    fn load_tail(&mut self, tail: &[u8]) -> Result<()> {
        let run = self.filled as usize * self.inner;
        if tail.len() != self.outer * run || run == 0 {
            return Err(Error::format("the last chunk read back has the wrong size"));
        }
        let band_stride = self.band_rows() as usize * self.inner;
        for (o, rows) in tail.chunks_exact(run).enumerate() {
            self.band[o * band_stride..o * band_stride + run].copy_from_slice(rows);
        }
        Ok(())
    }

    /// Appends `block`: `outer × m × inner` bytes (C order, file layout) for `m` new rows.
    pub(super) fn append(&mut self, ds: &DatasetWriter, block: &[u8]) -> Result<()> {
        let slab = self.outer * self.inner;
        if slab == 0 || !block.len().is_multiple_of(slab) {
            return Err(Error::invalid_input(format!(
                "{} bytes is not a whole number of {slab}-byte slices along dimension {}",
                block.len(),
                self.extdim
            ))
            .with_node(ds.path()));
        }
        let m = block.len() / slab;
        if m == 0 {
            return Ok(());
        }
        let mut grown = self.shape.clone();
        grown[self.extdim] += m as u64;
        ds.set_extent(&grown)?;
        let band_rows = self.band_rows() as usize;
        let band_stride = band_rows * self.inner;
        let mut band_start = self.rows() - self.filled;
        let mut done = 0usize;
        let mut chunks = Vec::new();
        while done < m {
            let take = (band_rows - self.filled as usize).min(m - done);
            let len = take * self.inner;
            for o in 0..self.outer {
                let src = (o * m + done) * self.inner;
                let dst = o * band_stride + self.filled as usize * self.inner;
                self.band[dst..dst + len].copy_from_slice(&block[src..src + len]);
            }
            done += take;
            self.filled += take as u64;
            if self.filled == band_rows as u64 {
                self.cut(band_start, &mut chunks);
                band_start += band_rows as u64;
                self.band.fill(0);
                self.filled = 0;
                if chunks.len() >= CHUNKS_PER_WRITE {
                    ds.write_chunks(std::mem::take(&mut chunks))?;
                }
            }
        }
        if self.filled > 0 {
            self.cut(band_start, &mut chunks);
        }
        ds.write_chunks(chunks)?;
        self.shape = grown;
        Ok(())
    }

    /// Cuts the open band (starting at row `start` along `extdim`) into chunks, edge chunks
    /// padded with zeros.
    fn cut(&self, start: u64, out: &mut Vec<(Vec<u64>, Vec<u8>)>) {
        let mut band_dims: Vec<usize> = self.shape.iter().map(|&d| d as usize).collect();
        band_dims[self.extdim] = self.band_rows() as usize;
        let cdims: Vec<usize> = self.chunk.iter().map(|&d| d as usize).collect();
        if band_dims == cdims {
            let mut offset = vec![0; cdims.len()];
            offset[self.extdim] = start;
            out.push((offset, self.band.clone()));
            return;
        }
        let grid: Vec<usize> = band_dims
            .iter()
            .zip(&cdims)
            .map(|(d, c)| d.div_ceil(*c).max(1))
            .collect();
        let tiles: usize = grid.iter().product();
        for t in 0..tiles {
            let mut idx = vec![0usize; grid.len()];
            let mut r = t;
            for d in (0..grid.len()).rev() {
                idx[d] = r % grid[d];
                r /= grid[d];
            }
            let origin: Vec<usize> = idx.iter().zip(&cdims).map(|(i, c)| i * c).collect();
            let tile = copy_tile(&self.band, &band_dims, &origin, &cdims, self.elem);
            let mut offset: Vec<u64> = origin.iter().map(|&o| o as u64).collect();
            offset[self.extdim] += start;
            out.push((offset, tile));
        }
    }
}

fn check_layout(shape: &[u64], chunk: &[u64], extdim: usize) -> Result<()> {
    if extdim >= shape.len() || chunk.len() != shape.len() || chunk.contains(&0) {
        return Err(Error::format(format!(
            "EXTDIM {extdim} does not fit a {}-d array chunked as {chunk:?}",
            shape.len()
        )));
    }
    Ok(())
}

/// The rows of the partial last band of the EArray at `path` growing along `extdim`
/// (`None` when its length is a whole number of chunks), in the file's layout.
///
/// It is read before the file is opened for writing: libhdf5 refuses a second, read-only
/// handle on a file sciio's writer holds (their file close degrees differ).
pub(super) fn read_tail(
    file: &sciio_hdf5::File,
    path: &str,
    extdim: usize,
) -> Result<Option<Vec<u8>>> {
    let ds = file.dataset(path)?;
    let shape = ds.shape()?;
    let (_, chunk, _) = ds.storage()?;
    let Some(chunk) = chunk else {
        return Ok(None);
    };
    check_layout(&shape, &chunk, extdim).map_err(|e| e.with_node(path))?;
    let filled = shape[extdim] % chunk[extdim];
    if filled == 0 {
        return Ok(None);
    }
    let sel: Vec<Slice> = shape
        .iter()
        .enumerate()
        .map(|(d, &n)| {
            let (start, count) = if d == extdim {
                (n - filled, filled)
            } else {
                (0, n)
            };
            Slice {
                start,
                count,
                step: 1,
            }
        })
        .collect();
    Ok(Some(ds.read_slices(Some(&sel))?.bytes))
}

fn too_large() -> Error {
    Error::new(
        sciio_core::ErrorKind::LimitExceeded,
        "the EArray's rows are too large to address",
    )
}

fn count(dims: &[u64]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(usize::try_from(d).ok()?))
        .ok_or_else(too_large)
}

/// The `cdims` tile at `origin` of a C-order array of `dims` elements of `elem` bytes; the
/// part past the array's edge is zero.
fn copy_tile(
    src: &[u8],
    dims: &[usize],
    origin: &[usize],
    cdims: &[usize],
    elem: usize,
) -> Vec<u8> {
    let mut tile = vec![0u8; cdims.iter().product::<usize>() * elem];
    sciio_hdf5::write::copy_tile_into(src, dims, origin, cdims, elem, &mut tile);
    tile
}

#[cfg(test)]
mod tests {
    use super::copy_tile;

    #[test]
    fn tiles_are_cut_in_c_order_and_padded_at_edges() {
        // A 3x5 array of bytes 0..15, tiles of 2x2.
        let a: Vec<u8> = (0..15).collect();
        assert_eq!(copy_tile(&a, &[3, 5], &[0, 0], &[2, 2], 1), [0, 1, 5, 6]);
        assert_eq!(copy_tile(&a, &[3, 5], &[2, 4], &[2, 2], 1), [14, 0, 0, 0]);
        assert_eq!(copy_tile(&a, &[3, 5], &[0, 4], &[2, 2], 1), [4, 0, 9, 0]);
    }
}
