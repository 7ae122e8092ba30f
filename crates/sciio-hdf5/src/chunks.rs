//! Parallel reads of datasets without libhdf5's single-threaded pipeline.
//!
//! - Chunked datasets: the chunk index is listed once with `H5Dchunk_iter`, then stored chunks
//!   are read with positioned reads and decoded on all cores with rayon through sciio's own
//!   filter decoders. When a chunk holds whole rows (every dimension but the first is one
//!   chunk wide: PyTables tables, EArrays, MAT matrices), each chunk owns one contiguous range
//!   of the output and is decoded straight into it ([`crate::chunk_decode`]); unfiltered
//!   chunks are read from the file straight into it. Other chunk shapes are decoded and then
//!   scattered.
//! - Unfiltered contiguous datasets: the range is read from the file in pieces on all cores.
//!
//! libhdf5's lock is held only to list the index. The output is one zeroed allocation (fresh
//! pages from the OS, so zeroing costs nothing) with transparent huge pages requested, as
//! numpy does; its pages are first touched by the workers, so page faults run in parallel.
//! A dataset whose chunks are missing (fill values), whose filters sciio does not decode, or
//! that needs a type conversion falls back to libhdf5's own read.

use hdf5_sys::h5::{hsize_t, HADDR_UNDEF};
use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};
use std::os::unix::fs::FileExt;

use hdf5_sys::h5d::{H5Dchunk_iter, H5Dget_offset, H5Dget_storage_size};
use hdf5_sys::h5p::H5P_DEFAULT;
use rayon::prelude::*;
use sciio_core::{Error, ErrorKind, Result};

use crate::chunk_decode::{decode_into, Scratch};
use crate::file::{ChunkIndex, Dataset, Filter, Layout, RawData, Slice};
use crate::filters;
use crate::handle::{check, locked};
use crate::types::H5Type;

/// Chunks fetched per batch by the scatter path: bounds the compressed bytes held at once.
const BATCH: usize = 256;

/// Bytes per positioned read when a contiguous dataset is read in parallel.
const PIECE: usize = 4 << 20;

impl Dataset {
    /// Bytes the dataset's data takes in the file (`H5Dget_storage_size`): chunks as stored
    /// (compressed), 0 when nothing was written yet. With the logical size, the compression
    /// ratio `sciio info` shows (`h5ls -v`).
    pub fn storage_size(&self) -> u64 {
        // SAFETY: valid dataset id; the call only reads the layout and the chunk index.
        locked(|| unsafe { H5Dget_storage_size(self.hid()) })
    }

    /// Number of chunks written (allocated) in a chunked dataset, from its chunk index.
    pub fn chunks_stored(&self) -> Result<usize> {
        Ok(self.chunk_index()?.len())
    }

    /// Reads rows `start..start+count` along the first dimension (all of the others),
    /// decoding chunks on all cores when the pipeline allows it. Same result as
    /// [`Dataset::read_slices`].
    ///
    /// ```no_run
    /// let file = sciio_hdf5::File::open("table.h5")?;
    /// let rows = file.dataset("/table")?.read_rows_parallel(1000, 500)?;
    /// assert_eq!(rows.shape[0], 500);
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn read_rows_parallel(&self, start: u64, count: u64) -> Result<RawData> {
        self.read_rows_parallel_into(start, count, Vec::new())
    }

    /// [`Dataset::read_rows_parallel`] into `reuse` when the rows are read straight from
    /// the file (unfiltered contiguous data, chunks of whole rows): a reader of block after
    /// block hands back the previous block's buffer, and its pages are neither zeroed nor
    /// faulted in again (a read of the same size overwrites every byte). Other reads
    /// allocate as before.
    pub fn read_rows_parallel_into(
        &self,
        start: u64,
        count: u64,
        reuse: Vec<u8>,
    ) -> Result<RawData> {
        let shape = self.shape()?;
        let (layout, chunk_shape, pipeline) = self.storage()?;
        let ty = self.dtype()?;
        self.check_fill_bound(&shape, layout, chunk_shape.as_deref(), ty.size())?;
        let slices = |shape: &[u64]| -> Vec<Slice> {
            let mut v = vec![Slice {
                start,
                count,
                step: 1,
            }];
            v.extend(shape.iter().skip(1).map(|&d| Slice {
                start: 0,
                count: d,
                step: 1,
            }));
            v
        };
        let whole = start == 0 && shape.first() == Some(&count);
        // The file's bytes are the result only for fixed-size types read without conversion
        // (libhdf5 converts IEEE quad floats to the native long double).
        let raw_bytes_ok = !shape.is_empty() && !ty.has_vlen() && !is_quad_float(&ty);
        if raw_bytes_ok && start.checked_add(count).is_none_or(|end| end > shape[0]) {
            return Err(self.locate(Error::invalid_input(format!(
                "rows {start}..{} outside the {} rows",
                start.saturating_add(count),
                shape[0]
            ))));
        }
        let elem = ty.size();
        let fast = match (layout, chunk_shape) {
            _ if !raw_bytes_ok => None,
            (Layout::Contiguous, _) if pipeline.is_empty() => {
                self.contiguous(&shape, start, count, elem, reuse)?
            }
            (Layout::Chunked, Some(chunk))
                if chunk.len() == shape.len()
                    && chunk.iter().all(|&d| d > 0)
                    && rust_decodes(&pipeline) =>
            {
                if chunk[1..] == shape[1..] {
                    self.slabs(&shape, chunk[0], &pipeline, (start, count), elem, reuse)?
                } else if !pipeline.is_empty() {
                    self.parallel(&shape, &chunk, &pipeline, start, count, elem)?
                } else {
                    None
                }
            }
            _ => None,
        };
        match fast {
            Some(bytes) => {
                let mut out_shape = vec![count as usize];
                out_shape.extend(shape.iter().skip(1).map(|&d| d as usize));
                Ok(RawData {
                    ty,
                    shape: out_shape,
                    bytes,
                })
            }
            // Selecting everything lets libhdf5 skip hyperslab bookkeeping.
            None if whole => self.read_slices(None),
            None => self.read_slices(Some(&slices(&shape))),
        }
    }

    /// Refuses a dataset whose unwritten part (what libhdf5 returns as fill values: missing
    /// chunks, unallocated storage) is larger than [`sciio_core::Limits::max_alloc`]: one
    /// damaged extent in a dataspace message makes a 1.8 KiB file claim petabytes, and a
    /// streamed conversion would then write fill values until the disk is full. Datasets
    /// within the limit return at once, without looking at the storage.
    pub(crate) fn check_fill_bound(
        &self,
        shape: &[u64],
        layout: Layout,
        chunk: Option<&[u64]>,
        elem: usize,
    ) -> Result<()> {
        let limit = self.file().limits().max_alloc;
        let logical = shape
            .iter()
            .try_fold(elem as u64, |a, &d| a.checked_mul(d))
            .unwrap_or(u64::MAX);
        if logical <= limit {
            return Ok(());
        }
        let stored = match (layout, chunk) {
            (Layout::Chunked, Some(chunk)) => {
                let chunk_bytes = chunk
                    .iter()
                    .try_fold(elem as u64, |a, &d| a.checked_mul(d))
                    .unwrap_or(u64::MAX);
                (self.chunk_index()?.len() as u64).saturating_mul(chunk_bytes)
            }
            // SAFETY: valid dataset id; the call only reads the layout message.
            _ => locked(|| unsafe { H5Dget_storage_size(self.hid()) }),
        };
        let unwritten = logical.saturating_sub(stored);
        if unwritten <= limit {
            return Ok(());
        }
        Err(self.locate(Error::new(
            ErrorKind::LimitExceeded,
            format!(
                "the dataset claims {logical} bytes, its storage holds at most {stored}:                  {unwritten} bytes would be fill values, over the {limit}-byte limit                  (a damaged extent?)"
            ),
        )))
    }

    /// Refuses to let libhdf5 read rows `start..start+count` of a variable-length dataset
    /// when a stored element claims more data than the file holds, or all of them more than
    /// the limits allow (libhdf5 allocates and zeroes each element's claimed size before
    /// reading it; see `vlen_guard.rs`). The stored descriptors are read like
    /// [`Dataset::read_rows_parallel`] reads rows; storage it does not decode (compact,
    /// unwritten chunks, filters sciio lacks, vlen of vlen) is left to libhdf5.
    pub(crate) fn check_vlen_lengths(&self, ty: &H5Type, start: u64, count: u64) -> Result<()> {
        self.checked_descriptors(ty, start, count, true).map(|_| ())
    }

    /// The stored descriptors of rows `start..start+count` with their lengths checked as
    /// [`Dataset::check_vlen_lengths`] does (`heaps`: and the global heap collections they
    /// point into, as libhdf5 will parse them); `None` for storage this does not decode.
    pub(crate) fn checked_descriptors(
        &self,
        ty: &H5Type,
        start: u64,
        count: u64,
        heaps: bool,
    ) -> Result<Option<Vec<u8>>> {
        let base_size = match ty {
            H5Type::VarString { .. } => 1,
            H5Type::VarLen { base } if !base.has_vlen() => base.size().max(1) as u64,
            _ => return Ok(None),
        };
        let shape = self.shape()?;
        if shape.is_empty() || count == 0 {
            return Ok(None);
        }
        let (layout, chunk_shape, pipeline) = self.storage()?;
        let elem = crate::vlen_guard::DESCRIPTOR;
        let stored = match (layout, chunk_shape) {
            (Layout::Contiguous, _) if pipeline.is_empty() => {
                self.contiguous(&shape, start, count, elem, Vec::new())?
            }
            (Layout::Chunked, Some(chunk))
                if chunk.len() == shape.len()
                    && chunk.iter().all(|&d| d > 0)
                    && chunk[1..] == shape[1..]
                    && rust_decodes(&pipeline) =>
            {
                self.slabs(
                    &shape,
                    chunk[0],
                    &pipeline,
                    (start, count),
                    elem,
                    Vec::new(),
                )?
            }
            _ => None,
        };
        let Some(stored) = stored else {
            return Ok(None);
        };
        let file_len = std::fs::metadata(self.file().path())
            .map_err(|e| self.locate(Error::io("cannot read the file size", e)))?
            .len();
        match crate::vlen_guard::scan_lengths(&stored, base_size, file_len) {
            Ok(total) => {
                let limits = self.file().limits();
                limits
                    .check_alloc(total, "variable-length data")
                    .map_err(|e| self.locate(e))?;
                if !heaps {
                    return Ok(Some(stored));
                }
                if let Some(disk) =
                    crate::vlen_guard::disk_of(self.hid()).map_err(|e| self.locate(e))?
                {
                    crate::vlen_guard::check_heaps(&disk, &stored, &limits, "variable-length data")
                        .map_err(|e| self.locate(e))?;
                }
                Ok(Some(stored))
            }
            Err(bad) => Err(self.locate(Error::new(
                ErrorKind::Corrupt,
                format!(
                    "row {}: {}",
                    start + (bad.index as u64 / shape[1..].iter().product::<u64>().max(1)),
                    bad.describe(file_len)
                ),
            ))),
        }
    }

    /// Bytes of one row (all dimensions but the first) and of `count` rows, checked against
    /// the allocation limits.
    fn row_sizes(&self, shape: &[u64], count: u64, elem: usize) -> Result<(usize, usize)> {
        let row_bytes = shape[1..]
            .iter()
            .try_fold(elem, |a, &d| usize::try_from(d).ok()?.checked_mul(a))
            .ok_or_else(|| Error::new(ErrorKind::LimitExceeded, "row size overflows"))?;
        let total = usize::try_from(count)
            .ok()
            .and_then(|c| c.checked_mul(row_bytes))
            .ok_or_else(|| Error::new(ErrorKind::LimitExceeded, "selection size overflows"))?;
        self.file()
            .limits()
            .check_alloc(total as u64, "dataset selection")?;
        Ok((row_bytes, total))
    }

    /// The dataset file, opened again for positioned reads, and its length.
    fn reopen(&self) -> Result<(std::fs::File, u64)> {
        let disk = std::fs::File::open(self.file().path())
            .map_err(|e| self.locate(Error::io("cannot reopen the file for direct reads", e)))?;
        let len = disk
            .metadata()
            .map_err(|e| self.locate(Error::io("cannot read the file's length", e)))?
            .len();
        Ok((disk, len))
    }

    /// An unfiltered contiguous dataset: the rows' bytes read from the file in pieces on all
    /// cores. `None` when the data has no address in this file (never written, or external).
    fn contiguous(
        &self,
        shape: &[u64],
        start: u64,
        count: u64,
        elem: usize,
        reuse: Vec<u8>,
    ) -> Result<Option<Vec<u8>>> {
        let (row_bytes, total) = self.row_sizes(shape, count, elem)?;
        // SAFETY: plain queries on a valid dataset id.
        let (addr, stored) = locked(|| unsafe {
            let addr = H5Dget_offset(self.hid());
            let stored = H5Dget_storage_size(self.hid());
            hdf5_sys::h5e::H5Eclear2(hdf5_sys::h5e::H5E_DEFAULT);
            (addr, stored)
        });
        let data_len = shape[0].checked_mul(row_bytes as u64);
        // Unallocated, external, or stored in a size that does not match the shape: libhdf5
        // knows what to do (fill values, other files, an error).
        if addr == HADDR_UNDEF || data_len != Some(stored) {
            return Ok(None);
        }
        let (disk, file_len) = self.reopen()?;
        if data_len
            .and_then(|n| addr.checked_add(n))
            .is_none_or(|end| end > file_len)
        {
            return Err(self.locate(
                Error::truncated(format!(
                    "the data at {addr} lies beyond the {file_len}-byte file"
                ))
                .with_offset(addr),
            ));
        }
        let first = addr + start * row_bytes as u64;
        let mut out = reused_buffer(reuse, total);
        out.par_chunks_mut(PIECE)
            .enumerate()
            .try_for_each(|(i, piece)| {
                let at = first + (i * PIECE) as u64;
                disk.read_exact_at(piece, at)
                    .map_err(|e| Error::io("cannot read the data", e).with_offset(at))
            })
            .map_err(|e| self.locate(e))?;
        Ok(Some(out))
    }

    /// Chunks holding whole rows: each decoded (or, unfiltered, read) straight into its range
    /// of the output. `None` when a chunk is missing (fill values): the caller falls back.
    fn slabs(
        &self,
        shape: &[u64],
        chunk_rows: u64,
        pipeline: &[Filter],
        (start, count): (u64, u64),
        elem: usize,
        reuse: Vec<u8>,
    ) -> Result<Option<Vec<u8>>> {
        let (row_bytes, total) = self.row_sizes(shape, count, elem)?;
        let chunk_bytes = usize::try_from(chunk_rows)
            .ok()
            .and_then(|r| r.checked_mul(row_bytes))
            .filter(|&n| n <= filters::MAX_CHUNK_BYTES)
            .ok_or_else(|| self.locate(Error::format("chunk larger than 4 GiB")))?;
        let mut tasks = Vec::new();
        if count > 0 {
            let keys: Vec<Vec<u64>> = (start / chunk_rows..=(start + count - 1) / chunk_rows)
                .map(|r| {
                    let mut key = vec![0u64; shape.len()];
                    key[0] = r * chunk_rows;
                    key
                })
                .collect();
            let index = self.chunk_index()?;
            let Some(located) = keys
                .iter()
                .map(|k| index.get(k).copied())
                .collect::<Option<Vec<_>>>()
            else {
                return Ok(None);
            };
            for (key, (addr, size, mask)) in keys.iter().zip(located) {
                let lo = key[0].max(start);
                let hi = (key[0] + chunk_rows).min(start + count);
                tasks.push(Slab {
                    addr,
                    size,
                    mask,
                    skip: (lo - key[0]) as usize * row_bytes,
                    len: (hi - lo) as usize * row_bytes,
                });
            }
        }
        let (disk, file_len) = self.reopen()?;
        let mut out = reused_buffer(reuse, total);
        let mut jobs = Vec::with_capacity(tasks.len());
        let mut rest: &mut [u8] = &mut out;
        for task in tasks {
            let (mine, tail) = rest.split_at_mut(task.len);
            jobs.push((task, mine));
            rest = tail;
        }
        jobs.into_par_iter()
            .try_for_each_init(Scratch::default, |scratch, (task, dst)| {
                task.read(&disk, file_len, pipeline, chunk_bytes, elem, scratch, dst)
            })
            .map_err(|e| self.locate(e))?;
        Ok(Some(out))
    }

    /// Chunks of any other shape: decoded on all cores, then scattered into the output.
    /// `None` when a chunk is missing (fill values): the caller falls back to libhdf5.
    fn parallel(
        &self,
        shape: &[u64],
        chunk: &[u64],
        pipeline: &[Filter],
        start: u64,
        count: u64,
        elem: usize,
    ) -> Result<Option<Vec<u8>>> {
        let rank = shape.len();
        let (_, total) = self.row_sizes(shape, count, elem)?;
        if total == 0 {
            // An empty selection, or an extent of 0 (a damaged dataspace, say): no chunk to read.
            return Ok(Some(Vec::new()));
        }
        let overflow = || Error::new(ErrorKind::LimitExceeded, "chunk size overflows");
        let chunk_bytes = chunk
            .iter()
            .try_fold(elem, |a, &d| usize::try_from(d).ok()?.checked_mul(a))
            .ok_or_else(overflow)?;
        if chunk_bytes > filters::MAX_CHUNK_BYTES {
            return Err(self.locate(Error::format("chunk larger than 4 GiB")));
        }
        // Every chunk of the grid overlapping the row range, in C order of their coordinates.
        let grid: Vec<u64> = shape
            .iter()
            .zip(chunk)
            .map(|(&s, &c)| s.div_ceil(c))
            .collect();
        let first = start / chunk[0];
        let last = if count == 0 {
            first
        } else {
            (start + count - 1) / chunk[0] + 1
        };
        let inner = grid[1..]
            .iter()
            .try_fold(1u64, |a, &g| a.checked_mul(g))
            .ok_or_else(overflow)?;
        let index = self.chunk_index()?;
        // More chunks wanted than stored: some are missing (fill values), which libhdf5 reads;
        // this also bounds the list below by what the file really holds.
        let wanted = (last - first).checked_mul(inner).ok_or_else(overflow)?;
        if wanted > index.len() as u64 {
            return Ok(None);
        }
        let mut coords: Vec<Vec<u64>> = Vec::new();
        for r in first..last {
            for k in 0..inner {
                let mut c = vec![0u64; rank];
                c[0] = r * chunk[0];
                let mut rest = k;
                for d in (1..rank).rev() {
                    c[d] = (rest % grid[d]) * chunk[d];
                    rest /= grid[d];
                }
                coords.push(c);
            }
        }
        let mut located = Vec::with_capacity(coords.len());
        for c in &coords {
            match index.get(c) {
                Some(&at) => located.push(at),
                None => return Ok(None), // unallocated chunk: fill values, libhdf5 knows them
            }
        }
        let (disk, file_len) = self.reopen()?;
        let mut out = output_buffer(total);
        let bands = (last - first) as usize;
        if count > 0 && bands >= 2 * rayon::current_num_threads() {
            // Enough rows of chunks to keep every core busy: each worker takes whole rows of
            // chunks, which own one contiguous range of the output, and decodes each chunk into
            // its reused scratch buffer and scatters it there. No allocation per chunk, and the
            // output's pages are first touched (zeroed by the kernel) on all cores.
            let row_bytes = total / count as usize;
            let per_band = inner as usize;
            let mut jobs = Vec::with_capacity(bands);
            let mut rest: &mut [u8] = &mut out;
            for (b, places) in located.chunks(per_band).enumerate() {
                let lo = ((first + b as u64) * chunk[0]).max(start);
                let hi = ((first + b as u64 + 1) * chunk[0]).min(start + count);
                let (mine, tail) = rest.split_at_mut((hi - lo) as usize * row_bytes);
                jobs.push((
                    lo,
                    hi,
                    &coords[b * per_band..(b + 1) * per_band],
                    places,
                    mine,
                ));
                rest = tail;
            }
            jobs.into_par_iter()
                .try_for_each_init(Scratch::default, |scratch, (lo, hi, band, places, dst)| {
                    for (coord, &(addr, size, mask)) in band.iter().zip(places) {
                        read_at(&disk, file_len, addr, size, &mut scratch.raw)?;
                        let mut whole = std::mem::take(&mut scratch.chunk);
                        whole.resize(chunk_bytes, 0);
                        let decoded = decode_into(pipeline, mask, elem, scratch, &mut whole)
                            .map_err(|e| e.with_offset(addr));
                        if decoded.is_ok() {
                            scatter(&whole, coord, chunk, shape, lo, hi - lo, elem, dst);
                        }
                        scratch.chunk = whole;
                        decoded?;
                    }
                    Ok(())
                })
                .map_err(|e| self.locate(e))?;
            return Ok(Some(out));
        }
        for (batch, places) in coords.chunks(BATCH).zip(located.chunks(BATCH)) {
            let decoded: Vec<Result<Vec<u8>>> = places
                .par_iter()
                .map(|&(addr, size, mask)| {
                    let mut raw = Vec::new();
                    read_at(&disk, file_len, addr, size, &mut raw)?;
                    decode_pipeline(pipeline, mask, raw, chunk_bytes, elem)
                })
                .collect();
            for (coord, data) in batch.iter().zip(decoded) {
                let data = data.map_err(|e| self.locate(e))?;
                scatter(&data, coord, chunk, shape, start, count, elem, &mut out);
            }
        }
        Ok(Some(out))
    }

    /// Every allocated chunk: its offset (element coordinates) -> (absolute file address,
    /// stored size, filter mask), from one pass over the chunk index (`H5Dchunk_iter`). The
    /// file keeps the last dataset's (it is read-only: the index cannot change), so that a
    /// dataset read a block of rows at a time lists its index once, not at every block: that
    /// made a streamed read quadratic (a 20 GB table of 19 000 chunks listed it 2 400 times,
    /// twice). libhdf5's `H5Dget_chunk_info_by_coord` is no way out: it lists the index too.
    fn chunk_index(&self) -> Result<std::sync::Arc<ChunkIndex>> {
        self.file()
            .last_chunk_index(self.path(), || self.list_chunks().map(std::sync::Arc::new))
    }

    /// [`Dataset::chunk_index`] listed now.
    fn list_chunks(&self) -> Result<ChunkIndex> {
        struct State {
            rank: usize,
            map: ChunkIndex,
        }
        // SAFETY: called by libhdf5's H5Dchunk_iter only, with the pointers it documents; the body
        // checks them before use (see its own SAFETY comments).
        unsafe extern "C" fn visit(
            offset: *const hsize_t,
            mask: c_uint,
            addr: u64,
            size: hsize_t,
            data: *mut c_void,
        ) -> c_int {
            // SAFETY: libhdf5 passes `rank` offsets; `data` is our State.
            unsafe {
                let state = &mut *(data as *mut State);
                let key = std::slice::from_raw_parts(offset, state.rank).to_vec();
                state.map.insert(key, (addr, size, mask));
            }
            0
        }
        let rank = self.shape()?.len();
        locked(|| {
            let mut state = State {
                rank,
                map: HashMap::new(),
            };
            // SAFETY: valid id; the callback only fills `state`.
            unsafe {
                check(
                    H5Dchunk_iter(
                        self.hid(),
                        H5P_DEFAULT,
                        Some(visit),
                        &mut state as *mut State as *mut c_void,
                    ),
                    || "cannot list the chunks".into(),
                )?;
            }
            // The addresses are absolute already: libhdf5 adds the base address (the user
            // block, 512 bytes in MAT files) itself (H5D__chunk_iter_cb), so nothing is added.
            Ok(state.map)
        })
        .map_err(|e| self.locate(e))
    }
}

/// One chunk of the slab path: where it is stored and which bytes of it the output wants.
struct Slab {
    addr: u64,
    size: u64,
    mask: u32,
    /// Bytes of the decoded chunk before the wanted rows.
    skip: usize,
    /// Bytes wanted (the length of this chunk's range of the output).
    len: usize,
}

impl Slab {
    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        disk: &std::fs::File,
        file_len: u64,
        pipeline: &[Filter],
        chunk_bytes: usize,
        elem: usize,
        scratch: &mut Scratch,
        dst: &mut [u8],
    ) -> Result<()> {
        if pipeline.is_empty() {
            // Stored as is: read just the wanted rows, straight into the output.
            if self.size != chunk_bytes as u64 {
                return Err(Error::new(
                    ErrorKind::Corrupt,
                    format!(
                        "unfiltered chunk stored in {} bytes, {chunk_bytes} expected",
                        self.size
                    ),
                )
                .with_offset(self.addr));
            }
            check_span(file_len, self.addr, self.size)?;
            let at = self.addr + self.skip as u64;
            return disk
                .read_exact_at(dst, at)
                .map_err(|e| Error::io("cannot read a chunk", e).with_offset(at));
        }
        read_at(disk, file_len, self.addr, self.size, &mut scratch.raw)?;
        if dst.len() == chunk_bytes {
            return decode_into(pipeline, self.mask, elem, scratch, dst)
                .map_err(|e| e.with_offset(self.addr));
        }
        // A chunk only partly in the range (or past the dataset's end): decode it whole aside.
        let mut whole = std::mem::take(&mut scratch.chunk);
        whole.resize(chunk_bytes, 0);
        let decoded = decode_into(pipeline, self.mask, elem, scratch, &mut whole);
        if decoded.is_ok() {
            dst.copy_from_slice(&whole[self.skip..self.skip + self.len]);
        }
        scratch.chunk = whole;
        decoded.map_err(|e| e.with_offset(self.addr))
    }
}

/// Whether sciio's decoders undo every filter of `pipeline`: the compressors and shuffles of
/// [`filters::decodes_in_rust`], and a Fletcher-32 checksum when it is the last filter (as
/// libhdf5's `H5Pset_fletcher32` and h5py put it: hdf5storage's MAT files have one).
fn rust_decodes(pipeline: &[Filter]) -> bool {
    let rest = match pipeline.split_last() {
        Some((last, rest)) if last.id == filters::id::FLETCHER32 => rest,
        _ => pipeline,
    };
    rest.iter().all(|f| filters::decodes_in_rust(f.id))
}

/// Whether `is_quad` holds: IEEE binary128, which libhdf5 reads as the native long double.
fn is_quad_float(ty: &H5Type) -> bool {
    matches!(
        ty,
        H5Type::Float {
            size: 16,
            precision: 128,
            ..
        }
    )
}

/// A zeroed output buffer of `len` bytes with transparent huge pages requested (Linux; only a
/// hint). Large `vec![0; n]` allocations are fresh anonymous maps (calloc skips the zeroing),
/// so the pages are only faulted in by whoever writes them first.
/// `reuse` made `len` bytes long when it can hold them without growing (bytes it had are
/// left as they are, for the caller to overwrite all of them), else a fresh [`output_buffer`].
fn reused_buffer(mut reuse: Vec<u8>, len: usize) -> Vec<u8> {
    if reuse.capacity() < len {
        return output_buffer(len);
    }
    reuse.truncate(len);
    reuse.resize(len, 0);
    reuse
}

fn output_buffer(len: usize) -> Vec<u8> {
    let buf = vec![0u8; len];
    advise_huge_pages(&buf);
    buf
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(buf: &[u8]) {
    const HUGE: usize = 2 << 20;
    let begin = (buf.as_ptr() as usize).next_multiple_of(HUGE);
    let end = (buf.as_ptr() as usize + buf.len()) / HUGE * HUGE;
    if end > begin {
        // SAFETY: advice on whole pages inside the buffer we own; it never changes contents.
        unsafe { libc::madvise(begin as *mut c_void, end - begin, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_: &[u8]) {}

/// Checks that `size` bytes at `addr` lie inside the file.
fn check_span(file_len: u64, addr: u64, size: u64) -> Result<()> {
    if size > filters::MAX_CHUNK_BYTES as u64
        || addr.checked_add(size).is_none_or(|end| end > file_len)
    {
        return Err(Error::truncated(format!(
            "chunk of {size} bytes at {addr} lies beyond the {file_len}-byte file"
        ))
        .with_offset(addr));
    }
    Ok(())
}

/// Reads a stored chunk into `buf` straight from the file (no libhdf5 lock: plain positioned
/// reads, so chunks are fetched and decoded on all cores), checked against the file's length.
fn read_at(
    disk: &std::fs::File,
    file_len: u64,
    addr: u64,
    size: u64,
    buf: &mut Vec<u8>,
) -> Result<()> {
    check_span(file_len, addr, size)?;
    buf.resize(size as usize, 0);
    disk.read_exact_at(buf, addr)
        .map_err(|e| Error::io("cannot read a chunk", e).with_offset(addr))
}

/// Undoes the pipeline (last filter first), skipping filters whose bit is set in `mask`.
fn decode_pipeline(
    pipeline: &[Filter],
    mask: u32,
    mut data: Vec<u8>,
    chunk_bytes: usize,
    elem: usize,
) -> Result<Vec<u8>> {
    for (i, f) in pipeline.iter().enumerate().rev() {
        if i < 32 && mask & (1 << i) != 0 {
            continue;
        }
        if f.id == filters::id::FLETCHER32 {
            crate::chunk_decode::strip_fletcher32(&mut data)?;
            continue;
        }
        let expected = (f.id != filters::id::SHUFFLE).then_some(chunk_bytes);
        data = if f.id == filters::id::SHUFFLE {
            let size = f.cd_values.first().map(|&s| s as usize).unwrap_or(elem);
            filters::unshuffle(&data, size)
        } else {
            filters::decode(f.id, &f.cd_values, &data, expected)?
        };
    }
    if data.len() != chunk_bytes {
        return Err(Error::new(
            ErrorKind::Corrupt,
            format!(
                "chunk decodes to {} bytes, {chunk_bytes} expected",
                data.len()
            ),
        ));
    }
    Ok(data)
}

/// Copies the part of a decoded chunk at `coord` that falls in rows `start..start+count`
/// into `out` (C order, all columns). Edge chunks are stored full-size: only their valid
/// extent is copied.
#[allow(clippy::too_many_arguments)]
fn scatter(
    data: &[u8],
    coord: &[u64],
    chunk: &[u64],
    shape: &[u64],
    start: u64,
    count: u64,
    elem: usize,
    out: &mut [u8],
) {
    let rank = shape.len();
    let row_lo = coord[0].max(start);
    let row_hi = (coord[0] + chunk[0]).min(start + count).min(shape[0]);
    if row_lo >= row_hi {
        return;
    }
    if rank == 1 {
        let src = (row_lo - coord[0]) as usize * elem;
        let dst = (row_lo - start) as usize * elem;
        let len = (row_hi - row_lo) as usize * elem;
        out[dst..dst + len].copy_from_slice(&data[src..src + len]);
        return;
    }
    // Valid extent of the chunk in every dimension, and the run length of the last one.
    let valid: Vec<u64> = (0..rank)
        .map(|d| chunk[d].min(shape[d] - coord[d]))
        .collect();
    let run = valid[rank - 1] as usize * elem;
    // Odometer over the middle dimensions 1..rank-1 (the last is copied as one run).
    let mut idx = vec![0u64; rank];
    for r in row_lo..row_hi {
        idx[0] = r;
        idx[1..].iter_mut().for_each(|i| *i = 0);
        loop {
            let mut src = (idx[0] - coord[0]) as usize;
            let mut dst = (idx[0] - start) as usize;
            for d in 1..rank {
                src = src * chunk[d] as usize + idx[d] as usize;
                dst = dst * shape[d] as usize + (coord[d] + idx[d]) as usize;
            }
            let (src, dst) = (src * elem, dst * elem);
            out[dst..dst + run].copy_from_slice(&data[src..src + run]);
            // Next middle index; done with this row when every middle dimension wrapped.
            let mut d = rank - 1;
            loop {
                d -= 1;
                if d == 0 {
                    break;
                }
                idx[d] += 1;
                if idx[d] < valid[d] {
                    break;
                }
                idx[d] = 0;
            }
            if d == 0 {
                break;
            }
        }
    }
}
