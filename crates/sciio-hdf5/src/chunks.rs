//! Parallel reads of chunked datasets (direct chunk reads): the chunk index is listed once with
//! `H5Dchunk_iter`, then raw chunks are read with positioned reads and decoded on all cores with
//! rayon through sciio's own filter decoders, and scattered into the output — libhdf5's lock
//! is held only to list the index.
//!
//! Used when every filter of the pipeline has a Rust decoder and every chunk in the range is
//! allocated; otherwise the read falls back to libhdf5's own (single-threaded) pipeline.

use hdf5_sys::h5::hsize_t;
use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};

use hdf5_sys::h5d::H5Dchunk_iter;
use hdf5_sys::h5p::H5P_DEFAULT;
use rayon::prelude::*;
use sciio_core::{Error, ErrorKind, Result};

use crate::file::{Dataset, Filter, Layout, RawData, Slice};
use crate::filters;
use crate::handle::{check, locked};

/// Chunk offset (element coordinates) -> (absolute file address, stored size, filter mask).
type ChunkIndex = HashMap<Vec<u64>, (u64, u64, u32)>;

/// Chunks fetched per batch: bounds the compressed bytes held at once.
const BATCH: usize = 256;

impl Dataset {
    /// Reads rows `start..start+count` along the first dimension (all of the others),
    /// decompressing chunks on all cores when the pipeline allows it. Same result as
    /// [`Dataset::read_slices`].
    pub fn read_rows_parallel(&self, start: u64, count: u64) -> Result<RawData> {
        let shape = self.shape()?;
        let (layout, chunk_shape, pipeline) = self.storage()?;
        let ty = self.dtype()?;
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
        // Without filters there is nothing to decompress: libhdf5's own read (no type
        // conversion) is a copy and beats fetching chunks one by one.
        let usable = layout == Layout::Chunked
            && !pipeline.is_empty()
            && !shape.is_empty()
            && !ty.has_vlen()
            && pipeline.iter().all(|f| filters::decodes_in_rust(f.id));
        let whole = start == 0 && shape.first() == Some(&count);
        let Some(chunk) =
            chunk_shape.filter(|c| usable && c.len() == shape.len() && c.iter().all(|&d| d > 0))
        else {
            // Selecting everything lets libhdf5 skip hyperslab bookkeeping.
            if whole {
                return self.read_slices(None);
            }
            return self.read_slices(Some(&slices(&shape)));
        };
        if start.checked_add(count).is_none_or(|end| end > shape[0]) {
            return Err(self.locate(Error::invalid_input(format!(
                "rows {start}..{} outside the {} rows",
                start.saturating_add(count),
                shape[0]
            ))));
        }
        match self.parallel(&shape, &chunk, &pipeline, start, count, ty.size())? {
            Some(bytes) => {
                let mut out_shape = vec![count as usize];
                out_shape.extend(shape.iter().skip(1).map(|&d| d as usize));
                Ok(RawData {
                    ty,
                    shape: out_shape,
                    bytes,
                })
            }
            None => self.read_slices(Some(&slices(&shape))),
        }
    }

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
        let row_elems: u64 = shape[1..].iter().product();
        let row_bytes = (row_elems as usize)
            .checked_mul(elem)
            .ok_or_else(|| Error::new(ErrorKind::LimitExceeded, "row size overflows"))?;
        let total = (count as usize)
            .checked_mul(row_bytes)
            .ok_or_else(|| Error::new(ErrorKind::LimitExceeded, "selection size overflows"))?;
        self.file()
            .limits()
            .check_alloc(total as u64, "dataset selection")?;
        let chunk_elems: u64 = chunk.iter().product();
        let chunk_bytes = (chunk_elems as usize)
            .checked_mul(elem)
            .ok_or_else(|| Error::new(ErrorKind::LimitExceeded, "chunk size overflows"))?;
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
        let inner: u64 = grid[1..].iter().product();
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
        let index = self.chunk_index()?;
        let mut located = Vec::with_capacity(coords.len());
        for c in &coords {
            match index.get(c) {
                Some(&at) => located.push(at),
                None => return Ok(None), // unallocated chunk: fill values, libhdf5 knows them
            }
        }
        let disk = std::fs::File::open(self.file().path())
            .map_err(|e| self.locate(Error::io("cannot reopen the file for chunk reads", e)))?;
        let file_len = disk.metadata().map(|m| m.len()).unwrap_or(0);
        let mut out = vec![0u8; total];
        for (batch, places) in coords.chunks(BATCH).zip(located.chunks(BATCH)) {
            let decoded: Vec<Result<Vec<u8>>> = places
                .par_iter()
                .map(|&(addr, size, mask)| {
                    let raw = read_at(&disk, file_len, addr, size)?;
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
    /// stored size, filter mask), from one pass over the chunk index (`H5Dchunk_iter`).
    fn chunk_index(&self) -> Result<ChunkIndex> {
        struct State {
            rank: usize,
            map: ChunkIndex,
        }
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

/// Reads a stored chunk straight from the file (no libhdf5 lock: plain positioned reads, so
/// chunks are fetched and decoded on all cores), checked against the file's real length.
fn read_at(disk: &std::fs::File, file_len: u64, addr: u64, size: u64) -> Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    if size > filters::MAX_CHUNK_BYTES as u64
        || addr.checked_add(size).is_none_or(|end| end > file_len)
    {
        return Err(Error::truncated(format!(
            "chunk of {size} bytes at {addr} lies beyond the {file_len}-byte file"
        ))
        .with_offset(addr));
    }
    let mut buf = vec![0u8; size as usize];
    disk.read_exact_at(&mut buf, addr)
        .map_err(|e| Error::io("cannot read a chunk", e).with_offset(addr))?;
    Ok(buf)
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
