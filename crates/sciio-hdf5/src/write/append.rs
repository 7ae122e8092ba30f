//! Appending rows to chunked datasets ([`ChunkAppender`]).

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use sciio_core::{Error, Result};

use super::writers::{AppendState, DatasetWriter, FileWriter};

/// Streams rows into a chunked dataset along its first dimension in constant memory: whole
/// bands of chunks are compressed (in parallel) and written as soon as they fill. The last
/// partial band stays in memory between appends, as PyTables' chunk cache keeps it, and is
/// written (padded) by [`ChunkAppender::flush_tail`], by [`FileWriter::flush`] and
/// [`FileWriter::close`], or when the appender is dropped: compressing and rewriting it after
/// every batch doubled the work when batches are about one chunk long. Chunks may split the
/// other dimensions too (tiles are cut from each band).
#[derive(Debug)]
pub struct ChunkAppender {
    /// Shared with the file ([`FileWriter::flush`] writes the pending tail).
    state: Arc<Mutex<AppendState>>,
}

impl ChunkAppender {
    /// Starts appending after the dataset's current rows, growing its first dimension. When
    /// the last chunk is partial, its rows are read back so appends continue it.
    pub fn new(ds: &DatasetWriter) -> Result<ChunkAppender> {
        let shape = ds.shape()?;
        let rows = shape.first().copied().unwrap_or(0);
        Self::start(ds, rows, true)
    }

    /// Fills a fixed-shape chunked dataset (a CArray) from row 0.
    pub fn fill(ds: &DatasetWriter) -> Result<ChunkAppender> {
        Self::start(ds, 0, false)
    }

    fn start(ds: &DatasetWriter, rows: u64, grow: bool) -> Result<ChunkAppender> {
        let Some(chunk) = ds.chunk() else {
            return Err(ds.locate(Error::invalid_input(
                "writing by chunks needs a chunked dataset",
            )));
        };
        let shape = ds.shape()?;
        if shape.is_empty() || chunk.len() != shape.len() {
            return Err(ds.locate(Error::invalid_input(
                "writing by chunks needs an array of rank ≥ 1",
            )));
        }
        let row_shape = shape[1..].to_vec();
        let elem = ds.ty.size();
        let row_bytes = row_shape.iter().product::<u64>() as usize * elem;
        let chunk = chunk.to_vec();
        let partial = rows % chunk[0];
        let tail = if partial > 0 {
            ds.read_rows_back(rows - partial, partial, &shape)?
        } else {
            Vec::new()
        };
        let state = Arc::new(Mutex::new(AppendState {
            ds: ds.try_clone()?,
            rows,
            chunk,
            row_shape,
            row_bytes,
            elem,
            grow,
            tail,
            tail_stored: true,
            part_at: 0,
            part: Vec::new(),
        }));
        ds.file.register_appender(Arc::downgrade(&state));
        Ok(ChunkAppender { state })
    }

    fn state(&self) -> Result<MutexGuard<'_, AppendState>> {
        self.state
            .lock()
            .map_err(|_| Error::invalid_input("an earlier append panicked"))
    }

    /// Rows written so far (including those of the pending tail).
    pub fn rows(&self) -> u64 {
        self.state().map_or(0, |s| s.rows)
    }

    /// Appends `bytes` (whole rows); complete bands of chunks are encoded and written now, the
    /// rest is kept for the next append.
    pub fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.state()?.append(bytes)
    }

    /// Appends `bytes`: elements in C order continuing where the last append stopped, whole
    /// rows or pieces of one (a row too large to hold comes in pieces), while filling a
    /// dataset of fixed shape ([`ChunkAppender::fill`]). When a band of chunks is one row
    /// (the chunk shapes PyTables gives wide rows), the chunks a piece completes are written
    /// at once: memory holds less than one slab of chunks across the row, whatever its size.
    /// Chunks several rows thick are written from whole rows, a row gathered first. A row left
    /// unfinished is not written.
    pub fn append_elements(&mut self, bytes: &[u8]) -> Result<()> {
        self.state()?.append_elements(bytes)
    }

    /// Writes the pending partial band (padded with zeros), keeping it for later appends.
    pub fn flush_tail(&self) -> Result<()> {
        self.state()?.store_tail()
    }

    /// Whether [`ChunkAppender::copy_from`] can take the next rows: an unfiltered dataset
    /// whose chunks hold whole rows and are allocated when it is created or extended
    /// ([`super::DatasetSpec::allocate_early`]), with no partial band pending.
    pub fn can_copy(&self) -> Result<bool> {
        let s = self.state()?;
        if !s.ds.pipeline.is_empty()
            || s.chunk[1..] != s.row_shape[..]
            || !s.tail.is_empty()
            || !s.rows.is_multiple_of(s.chunk[0])
        {
            return Ok(false);
        }
        s.ds.allocates_early()
    }

    /// Appends `len` bytes of whole rows (the file's layout) read from `src` at `at`, copied
    /// file to file into the chunks' storage (in blocks of [`COPY_BLOCK`] bytes), as [`ChunkAppender::append`] would have written them. Only
    /// when [`ChunkAppender::can_copy`] said so; `len` is whole bands of chunks unless these
    /// are the dataset's last rows (the last chunk is then padded with zeros).
    pub fn copy_from(&mut self, src: &std::fs::File, at: u64, len: u64) -> Result<()> {
        self.state()?.copy_from(src, at, len)
    }
}

impl Drop for ChunkAppender {
    fn drop(&mut self) {
        if let Ok(mut state) = self.state.lock() {
            if let Err(e) = state.store_tail() {
                // Reported by the file's next flush or close.
                state.ds.file.defer_error(e);
            }
        }
    }
}

/// Bytes read and written at a time by [`copy_range`]. Not `copy_file_range` (std's
/// `io::copy` between files): on ext4 it splices through a 64 KiB pipe, and copying 12 GB
/// took 31-34 s that way against 19-21 s in reads and writes of 16 MiB (`cp` vs `dd bs=16M`,
/// page cache and writeback busy; 20 GB .npy -> CArray 31 s against PyTables' 21 s).
const COPY_BLOCK: usize = 16 << 20;

/// Copies `n` bytes of `src` at `from` into `dst` at `to` through `block` (grown to at most
/// [`COPY_BLOCK`]); the bytes copied, fewer when `src` ends first.
fn copy_range(
    src: &std::fs::File,
    from: u64,
    dst: &std::fs::File,
    to: u64,
    n: u64,
    block: &mut Vec<u8>,
) -> std::io::Result<u64> {
    use std::os::unix::fs::FileExt;
    let size = usize::try_from(n).unwrap_or(COPY_BLOCK).min(COPY_BLOCK);
    if block.len() < size {
        block.resize(size, 0);
    }
    let mut done = 0u64;
    while done < n {
        let want = usize::try_from(n - done).unwrap_or(size).min(size);
        let Some(buf) = block.get_mut(..want) else {
            break;
        };
        let got = match src.read_at(buf, from + done) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => other?,
        };
        if got == 0 {
            break;
        }
        dst.write_all_at(buf.get(..got).unwrap_or_default(), to + done)?;
        done += got as u64;
    }
    Ok(done)
}

impl AppendState {
    fn copy_from(&mut self, src: &std::fs::File, at: u64, len: u64) -> Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        let ds = &self.ds;
        let chunk_rows = self.chunk[0];
        let row_bytes = self.row_bytes as u64;
        if row_bytes == 0 || !len.is_multiple_of(row_bytes) || !self.rows.is_multiple_of(chunk_rows)
        {
            return Err(ds.locate(Error::invalid_input(format!(
                "{len} bytes from row {} is not a copy of whole rows from a chunk's start",
                self.rows
            ))));
        }
        let rows = len / row_bytes;
        let end = self.rows.saturating_add(rows);
        if self.grow {
            // Early allocation gives the new chunks their storage now.
            let mut shape = vec![end];
            shape.extend_from_slice(&self.row_shape);
            ds.set_extent(&shape)?;
        }
        let total = ds.shape()?.first().copied().unwrap_or(0);
        if end > total || (end < total && !rows.is_multiple_of(chunk_rows)) {
            return Err(ds.locate(Error::invalid_input(format!(
                "rows {}..{end} are not whole chunks of the {total} rows",
                self.rows
            ))));
        }
        let band = chunk_rows * row_bytes;
        // Runs of chunks lying end to end in the file: (file address, source offset, bytes).
        let mut runs: Vec<(u64, u64, u64)> = Vec::new();
        let mut pad = None;
        let addresses = ds.chunk_addresses_from(self.rows)?;
        let mut row = self.rows;
        while row < end {
            let Some(&addr) = addresses.get(&row) else {
                return Err(ds.locate(Error::invalid_input(format!(
                    "the chunk at row {row} has no storage to copy into"
                ))));
            };
            let n = (end - row).min(chunk_rows) * row_bytes;
            let from = at + (row - self.rows) * row_bytes;
            match runs.last_mut() {
                Some(r) if r.0 + r.2 == addr && r.1 + r.2 == from => r.2 += n,
                _ => runs.push((addr, from, n)),
            }
            if n < band {
                pad = Some((addr + n, band - n));
            }
            row += chunk_rows;
        }
        let path = ds.file.path();
        let io = |what: &str, e: std::io::Error| ds.locate(Error::io(what.to_string(), e));
        let mut dst = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io("cannot open the file being written for the copy", e))?;
        let mut block = Vec::new();
        for (addr, from, n) in runs {
            let copied = copy_range(src, from, &dst, addr, n, &mut block)
                .map_err(|e| io("cannot copy the rows", e))?;
            if copied != n {
                return Err(ds.locate(Error::truncated(format!(
                    "the source ends {} bytes short of the rows to copy",
                    n - copied
                ))));
            }
        }
        if let Some((addr, n)) = pad {
            dst.seek(SeekFrom::Start(addr))
                .map_err(|e| io("cannot seek in the file being written", e))?;
            let zeros = vec![0u8; usize::try_from(n).unwrap_or(0)];
            dst.write_all(&zeros)
                .map_err(|e| io("cannot pad the last chunk", e))?;
        }
        self.rows = end;
        Ok(())
    }

    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        let ds = &self.ds;
        if self.row_bytes == 0 || !bytes.len().is_multiple_of(self.row_bytes) {
            return Err(ds.locate(Error::invalid_input(format!(
                "{} bytes is not a whole number of {}-byte rows",
                bytes.len(),
                self.row_bytes
            ))));
        }
        let new_rows = (bytes.len() / self.row_bytes) as u64;
        if new_rows == 0 {
            return Ok(());
        }
        let chunk_rows = self.chunk[0];
        let band_bytes = chunk_rows as usize * self.row_bytes;
        let total = self.rows + new_rows;
        if self.grow {
            let mut shape = vec![total];
            shape.extend_from_slice(&self.row_shape);
            ds.set_extent(&shape)?;
        }
        let mut at = (self.rows / chunk_rows) * chunk_rows;
        let mut rest = bytes;
        let mut chunks = Vec::new();
        if !self.tail.is_empty() {
            let take = (band_bytes - self.tail.len()).min(rest.len());
            self.tail.extend_from_slice(&rest[..take]);
            self.tail_stored = false;
            rest = &rest[take..];
            if self.tail.len() == band_bytes {
                let band = std::mem::take(&mut self.tail);
                self.cut(at, &band, &mut chunks);
                at += chunk_rows;
            }
        }
        if ds.pipeline.is_empty() && self.chunk[1..] == self.row_shape[..] {
            // Unfiltered whole-row chunks: written straight from the caller's buffer.
            let mut direct = Vec::new();
            while rest.len() >= band_bytes {
                direct.push((offset(at, self.chunk.len()), &rest[..band_bytes], 0));
                rest = &rest[band_bytes..];
                at += chunk_rows;
            }
            ds.write_chunks(std::mem::take(&mut chunks))?;
            ds.put_chunks(&direct)?;
        }
        while rest.len() >= band_bytes {
            self.cut(at, &rest[..band_bytes], &mut chunks);
            rest = &rest[band_bytes..];
            at += chunk_rows;
            if chunks.len() >= rayon::current_num_threads() * 4 {
                self.ds.write_chunks(std::mem::take(&mut chunks))?;
            }
        }
        if self.tail.is_empty() && !rest.is_empty() {
            self.tail.extend_from_slice(rest);
            self.tail_stored = false;
        }
        self.ds.write_chunks(chunks)?;
        self.rows = total;
        Ok(())
    }

    fn append_elements(&mut self, mut bytes: &[u8]) -> Result<()> {
        if self.grow || self.elem == 0 || !bytes.len().is_multiple_of(self.elem) {
            return Err(self.ds.locate(Error::invalid_input(format!(
                "{} bytes is not whole {}-byte elements of an array being filled",
                bytes.len(),
                self.elem
            ))));
        }
        let mut chunks = Vec::new();
        while !bytes.is_empty() {
            if self.part_at == 0 && self.part.is_empty() && bytes.len() >= self.row_bytes {
                let whole = bytes.len() / self.row_bytes * self.row_bytes;
                self.ds.write_chunks(std::mem::take(&mut chunks))?;
                self.append(&bytes[..whole])?;
                bytes = &bytes[whole..];
                continue;
            }
            let slab = self.next_slab();
            let take = (slab.bytes - self.part.len()).min(bytes.len());
            self.part.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.part.len() < slab.bytes {
                break;
            }
            let part = std::mem::take(&mut self.part);
            match slab.chunk_axis {
                Some(k) => self.cut_slab(&slab, k, part, &mut chunks),
                None => {
                    self.ds.write_chunks(std::mem::take(&mut chunks))?;
                    self.append(&part)?;
                    continue;
                }
            }
            self.part_at += slab.bytes as u64;
            if self.part_at == self.row_bytes as u64 {
                self.part_at = 0;
                self.rows += 1;
            }
            if chunks.len() >= rayon::current_num_threads() * 4 {
                self.ds.write_chunks(std::mem::take(&mut chunks))?;
            }
        }
        self.ds.write_chunks(chunks)
    }

    /// The next slab of whole chunks of the row being given in pieces, from `part_at`: when a
    /// band of chunks is one row, the run along the first axis `k` whose chunks are thicker
    /// than one (or the last axis) that one chunk covers, every axis after it whole, every
    /// axis before it one index; else the whole row.
    fn next_slab(&self) -> Slab {
        let n = self.row_shape.len();
        if self.chunk[0] != 1 || n == 0 {
            return Slab {
                chunk_axis: None,
                at: Vec::new(),
                bytes: self.row_bytes,
            };
        }
        // Axis j of the dataset is row_shape[j - 1].
        let k = (1..=n).find(|&j| self.chunk[j] > 1).unwrap_or(n);
        let inner = self.row_shape[k..].iter().product::<u64>() * self.elem as u64;
        let along = self.row_shape[k - 1];
        let (outer, within) = (
            self.part_at / (along * inner).max(1),
            self.part_at % (along * inner).max(1),
        );
        let ik = within / inner.max(1);
        // The indices of the axes before k, from the C-order index of the run.
        let mut at = vec![0u64; k + 1];
        let mut rest = outer;
        for j in (1..k).rev() {
            at[j] = rest % self.row_shape[j - 1].max(1);
            rest /= self.row_shape[j - 1].max(1);
        }
        at[0] = self.rows;
        at[k] = ik;
        let height = self.chunk[k].min(along - ik);
        Slab {
            chunk_axis: Some(k),
            at,
            bytes: (height * inner) as usize,
        }
    }

    /// Cuts a slab of [`AppendState::next_slab`] (`part`, padded with zeros to a chunk's
    /// thickness along axis `k`) into chunks.
    fn cut_slab(
        &self,
        slab: &Slab,
        k: usize,
        mut part: Vec<u8>,
        out: &mut Vec<(Vec<u64>, Vec<u8>)>,
    ) {
        let inner_shape = &self.row_shape[k..];
        let inner = inner_shape.iter().product::<u64>() as usize * self.elem;
        part.resize(self.chunk[k] as usize * inner, 0);
        cut_band(
            &self.chunk[k..],
            inner_shape,
            self.elem,
            &part,
            &slab.at,
            out,
        );
    }

    /// Writes the partial band padded with zeros, unless the file already holds it.
    pub(crate) fn store_tail(&mut self) -> Result<()> {
        if self.tail_stored || self.tail.is_empty() {
            return Ok(());
        }
        let mut band = self.tail.clone();
        band.resize(self.chunk[0] as usize * self.row_bytes, 0);
        let at = (self.rows / self.chunk[0]) * self.chunk[0];
        let mut chunks = Vec::new();
        self.cut(at, &band, &mut chunks);
        self.ds.write_chunks(chunks)?;
        self.tail_stored = true;
        Ok(())
    }

    /// Cuts one band (`chunk[0]` full rows) into chunks, padding edge tiles with zeros.
    fn cut(&self, row: u64, band: &[u8], out: &mut Vec<(Vec<u64>, Vec<u8>)>) {
        cut_band(&self.chunk, &self.row_shape, self.elem, band, &[row], out);
    }
}

/// A run of whole chunks of one row ([`AppendState::next_slab`]).
struct Slab {
    /// The axis along which the run goes; `None`: the whole row (thick chunks).
    chunk_axis: Option<usize>,
    /// The indices of the run's first element along the axes up to `chunk_axis`.
    at: Vec<u64>,
    bytes: usize,
}

/// Cuts `band` (`chunk[0]` rows of `row_shape`, elements of `elem` bytes) into chunks of
/// `chunk`, padding edge tiles with zeros; each chunk's offset is `at` (the band's place
/// along its axes up to the first of `chunk`) followed by the tile's along the others.
fn cut_band(
    chunk: &[u64],
    row_shape: &[u64],
    elem: usize,
    band: &[u8],
    at: &[u64],
    out: &mut Vec<(Vec<u64>, Vec<u8>)>,
) {
    let inner = &chunk[1..];
    if inner.iter().zip(row_shape).all(|(c, s)| c == s) {
        let mut o = at.to_vec();
        o.extend(std::iter::repeat_n(0, inner.len()));
        out.push((o, band.to_vec()));
        return;
    }
    let grid: Vec<u64> = row_shape
        .iter()
        .zip(inner)
        .map(|(s, c)| s.div_ceil(*c).max(1))
        .collect();
    let tiles: u64 = grid.iter().product();
    let tile_elems = chunk.iter().product::<u64>() as usize;
    for t in 0..tiles {
        // The tile's coordinates in the chunk grid (C order).
        let mut idx = vec![0u64; grid.len()];
        let mut r = t;
        for d in (0..grid.len()).rev() {
            idx[d] = r % grid[d];
            r /= grid[d];
        }
        let mut tile = vec![0u8; tile_elems * elem];
        copy_tile(chunk, row_shape, elem, band, &idx, &mut tile);
        let mut o = at.to_vec();
        o.extend(idx.iter().zip(inner).map(|(i, c)| i * c));
        out.push((o, tile));
    }
}

/// Copies the part of `band` under tile `idx` into `tile` (row by innermost row).
fn copy_tile(
    chunk: &[u64],
    row_shape: &[u64],
    elem: usize,
    band: &[u8],
    idx: &[u64],
    tile: &mut [u8],
) {
    let dims: Vec<usize> = std::iter::once(chunk[0])
        .chain(row_shape.iter().copied())
        .map(|d| d as usize)
        .collect();
    let cdims: Vec<usize> = chunk.iter().map(|&d| d as usize).collect();
    let start: Vec<usize> = std::iter::once(0)
        .chain(idx.iter().zip(&cdims[1..]).map(|(i, c)| *i as usize * c))
        .collect();
    copy_tile_into(band, &dims, &start, &cdims, elem, tile);
}

/// Copies the `cdims` tile at `origin` of a C-order array of `dims` elements of `elem` bytes
/// (`src`) into `tile`, innermost row by row; the tile's part past the array's edge is left as
/// it is (the caller's zeros).
///
/// ```
/// // the 2x2 tile at (0, 2) of a 2x3 byte array: its last column, zero-padded
/// let mut tile = [0u8; 4];
/// sciio_hdf5::write::copy_tile_into(b"abcdef", &[2, 3], &[0, 2], &[2, 2], 1, &mut tile);
/// assert_eq!(&tile, b"c\0f\0");
/// ```
pub fn copy_tile_into(
    src: &[u8],
    dims: &[usize],
    origin: &[usize],
    cdims: &[usize],
    elem: usize,
    tile: &mut [u8],
) {
    let Some(last) = dims.len().checked_sub(1) else {
        return;
    };
    let run = cdims[last].min(dims[last].saturating_sub(origin[last])) * elem;
    let lines: usize = cdims[..last].iter().product();
    let mut pos = vec![0usize; last];
    for line in 0..lines {
        // Position of this innermost line inside the tile.
        let mut r = line;
        for d in (0..last).rev() {
            pos[d] = r % cdims[d];
            r /= cdims[d];
        }
        if (0..last).any(|d| origin[d] + pos[d] >= dims[d]) {
            continue;
        }
        let mut s = 0usize;
        let mut t = 0usize;
        for d in 0..last {
            s = s * dims[d] + origin[d] + pos[d];
            t = t * cdims[d] + pos[d];
        }
        let s = (s * dims[last] + origin[last]) * elem;
        let t = t * cdims[last] * elem;
        tile[t..t + run].copy_from_slice(&src[s..s + run]);
    }
}

fn offset(row: u64, rank: usize) -> Vec<u64> {
    let mut o = vec![0; rank];
    o[0] = row;
    o
}

impl FileWriter {
    /// Lets [`FileWriter::flush`] write the appender's pending tail.
    fn register_appender(&self, state: Weak<Mutex<AppendState>>) {
        if let Ok(mut list) = self.inner.appenders.lock() {
            list.retain(|w| w.strong_count() > 0);
            list.push(state);
        }
    }

    /// Keeps an error met where it could not be returned (an appender dropped) for the next
    /// [`FileWriter::flush`] or [`FileWriter::close`].
    fn defer_error(&self, e: Error) {
        if let Ok(mut slot) = self.inner.deferred.lock() {
            slot.get_or_insert(e);
        }
    }

    /// Writes every live appender's pending tail; then reports an error kept by
    /// [`FileWriter::defer_error`], if any.
    pub(super) fn store_pending_tails(&self) -> Result<()> {
        let live: Vec<Arc<Mutex<AppendState>>> = match self.inner.appenders.lock() {
            Ok(list) => list.iter().filter_map(Weak::upgrade).collect(),
            Err(_) => return Err(Error::invalid_input("the appender list is poisoned")),
        };
        let mut first = Ok(());
        for state in live {
            let stored = match state.lock() {
                Ok(mut s) => s.store_tail(),
                Err(_) => Err(Error::invalid_input("an earlier append panicked")),
            };
            if first.is_ok() {
                first = stored;
            }
        }
        let deferred = self.inner.deferred.lock().ok().and_then(|mut d| d.take());
        match deferred {
            Some(e) if first.is_ok() => Err(e),
            _ => first,
        }
    }
}
