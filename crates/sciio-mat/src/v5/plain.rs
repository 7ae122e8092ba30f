//! Large compressed variables holding one real numeric array stored in its class's own type
//! and the machine's byte order (a large double matrix from MATLAB or scipy): their data is
//! inflated straight into the array ([`Mat5File::decode_plain`]), or streamed to a writer as
//! it inflates, inflating on a second thread ([`Mat5File::copy_plain`]): no inflated copy of
//! the whole element, no zero-filled array of its size.

use std::io::Write;
use std::sync::mpsc;

use flate2::{Decompress, FlushDecompress, Status};
use sciio_core::{DType, Error, NdArray, Order, Result, ScalarKind};

use super::consts::PLAIN_FROM;
use super::cursor::{self, Cursor, MI_MATRIX};
use super::decode::{class_kind, Decoder};
use super::{Mat5File, Stored};
use crate::value::MatValue;

/// The pieces [`Mat5File::copy_plain`] inflates into and hands to the writer (small enough to
/// stay in the cores' caches between the two threads).
const PIECE: usize = 1 << 20;

/// The start of a plain variable's stream: its first inflated bytes and where its data is.
struct PlainStart {
    d: Decompress,
    /// What was inflated to read the headers (the data's first bytes included).
    head: Vec<u8>,
    /// Where the data starts in `head`.
    start: usize,
    /// The data's length in bytes.
    len: usize,
    /// The bytes between the data's end and the element's end (padding, at most 7).
    tail: usize,
    kind: ScalarKind,
    dims: Vec<usize>,
}

impl PlainStart {
    /// The data's first bytes, inflated with the headers.
    fn first(&self) -> &[u8] {
        let first = self.head.get(self.start..).unwrap_or_default();
        first.get(..self.len.min(first.len())).unwrap_or_default()
    }
}

/// Inflates into `out` until it is full or the stream ends; returns the bytes written and
/// whether the stream ended.
fn inflate_into(
    d: &mut Decompress,
    data: &[u8],
    out: &mut [u8],
) -> std::result::Result<(usize, bool), String> {
    let mut filled = 0;
    while filled < out.len() {
        let (before_in, before_out) = (d.total_in(), d.total_out());
        let input = data.get(d.total_in() as usize..).unwrap_or_default();
        let room = out.get_mut(filled..).unwrap_or_default();
        let status = d
            .decompress(input, room, FlushDecompress::None)
            .map_err(|e| e.to_string())?;
        filled += (d.total_out() - before_out) as usize;
        if let Status::StreamEnd = status {
            return Ok((filled, true));
        }
        if d.total_in() == before_in && d.total_out() == before_out {
            return Err("the stream ends early".into());
        }
    }
    Ok((filled, false))
}

/// What follows the data: at most the padding (`tail` bytes, `tail_seen` of them inflated
/// already), then the end of the stream (its checksum checked by zlib), and nothing after it.
fn finish(
    d: &mut Decompress,
    data: &[u8],
    mut tail_seen: usize,
    tail: usize,
    mut ended: bool,
) -> std::result::Result<(), String> {
    let mut rest = [0u8; 16];
    while !ended {
        let (before_in, before_out) = (d.total_in(), d.total_out());
        let input = data.get(d.total_in() as usize..).unwrap_or_default();
        let room = rest.get_mut(tail_seen.min(16)..).unwrap_or_default();
        let status = d
            .decompress(input, room, FlushDecompress::Finish)
            .map_err(|e| e.to_string())?;
        tail_seen += (d.total_out() - before_out) as usize;
        ended = matches!(status, Status::StreamEnd);
        if !ended && d.total_in() == before_in && d.total_out() == before_out {
            return Err("the stream ends early".into());
        }
    }
    if tail_seen != tail {
        return Err(format!(
            "{tail_seen} bytes after the data, the element announces {tail}"
        ));
    }
    if d.total_in() != data.len() as u64 {
        return Err(format!(
            "{} bytes after the end of the stream",
            data.len() as u64 - d.total_in().min(data.len() as u64)
        ));
    }
    Ok(())
}

impl Mat5File {
    /// The headers of a plain variable's compressed element `data`: `Ok(None)` when it is not
    /// one (complex, logical, big-endian, stored in another type, headers the general decoder
    /// reads differently: [`Mat5File::decode`] then reads it and reports what is wrong). An
    /// error, at the element's `offset`, when the stream's first bytes do not inflate, when its
    /// real part's length disagrees with its size, or when it is over the limits.
    fn plain_start(&self, data: &[u8], offset: u64) -> Result<Option<PlainStart>> {
        let mut d = Decompress::new(true);
        let mut head = Vec::with_capacity(4096);
        d.decompress_vec(data, &mut head, FlushDecompress::None)
            .map_err(|e| {
                Error::format(format!(
                    "corrupted zlib stream in an miCOMPRESSED element: {e}"
                ))
                .with_offset(offset)
            })?;
        // The miMATRIX tag, the array header, then the real part's tag.
        let mut c = Cursor::new(&head, offset, false, self.endian);
        let (Ok(ty), Ok(size)) = (c.u32(""), c.u32("")) else {
            return Ok(None);
        };
        let decoder = Decoder {
            limits: &self.limits,
        };
        let Ok(Some(h)) = decoder.header(&mut c) else {
            return Ok(None);
        };
        let Some(kind) = class_kind(h.class) else {
            return Ok(None);
        };
        if ty != MI_MATRIX || h.complex() || h.logical() || self.endian.swap() {
            return Ok(None);
        }
        let (Ok(data_ty), Ok(len)) = (c.u32(""), c.u32("")) else {
            return Ok(None);
        };
        let (size, len) = (size as usize, len as usize);
        if data_ty >> 16 != 0 || cursor::storage_kind(data_ty) != Some(kind) {
            return Ok(None);
        }
        let Some(need) = h.count().ok().and_then(|n| n.checked_mul(kind.itemsize())) else {
            return Ok(None);
        };
        let damaged = |why: String| Err(Error::format(why).with_offset(offset));
        if need != len {
            return damaged(format!(
                "its real part holds {len} bytes where its {:?} elements of {} bytes take {need}",
                h.dims,
                kind.itemsize()
            ));
        }
        // The real part ends the element (its padding inside the stream or not).
        let start = c.position();
        let Some(tail) = size
            .saturating_add(8)
            .checked_sub(start)
            .and_then(|t| t.checked_sub(len))
        else {
            return damaged(format!(
                "its real part of {len} bytes runs past the end of its miMATRIX element \
                 ({size} bytes)"
            ));
        };
        if tail > 7 {
            return Ok(None);
        }
        // The bounds `cursor::inflate` applies to the whole element.
        let total = (size as u64).saturating_add(8);
        let bounded = |e: Error| e.with_offset(offset);
        self.limits
            .check_alloc(total, "an inflated miCOMPRESSED element")
            .map_err(bounded)?;
        self.limits
            .check_ratio(data.len() as u64, total, "an miCOMPRESSED element")
            .map_err(bounded)?;
        Ok(Some(PlainStart {
            d,
            head,
            start,
            len,
            tail,
            kind,
            dims: h.dims,
        }))
    }

    /// Whether [`Mat5File::copy_plain`] streams variable `name` as `dtype` and `dims`, from its
    /// headers and the first bytes of its stream ([`Mat5File::plain_start`]: an error when
    /// these show it damaged); see `MatFile::check_plain_data`.
    pub(crate) fn check_plain(&self, name: &str, dtype: &DType, dims: &[usize]) -> Result<bool> {
        let var = self.var(name)?;
        let Stored::Level5 {
            start,
            end,
            compressed: true,
        } = var.stored
        else {
            return Ok(false);
        };
        let data = self.bytes.get(start..end).unwrap_or_default();
        if data.len() < PLAIN_FROM {
            return Ok(false);
        }
        let located = |e: Error| e.with_file(&self.path).with_node(format!("/{name}"));
        let Some(p) = self.plain_start(data, var.offset).map_err(located)? else {
            return Ok(false);
        };
        Ok(DType::scalar(p.kind) == *dtype && p.dims == dims)
    }

    /// A plain compressed variable's array, its data inflated straight into it. `None` for
    /// anything else, and for anything unexpected (a damaged stream included):
    /// [`Mat5File::decode`] then decodes the element the general way, and reports what is
    /// wrong with it.
    pub(super) fn decode_plain(&self, data: &[u8], offset: u64) -> Option<MatValue> {
        let mut p = self.plain_start(data, offset).ok().flatten()?;
        let mut array = NdArray::zeroed(DType::scalar(p.kind), &p.dims, Order::F).ok()?;
        let out = array.as_bytes_mut().ok()?;
        let first = p.first();
        out.get_mut(..first.len())?.copy_from_slice(first);
        let filled = first.len();
        // Bytes inflated past the data already (padding) count toward the tail.
        let tail_seen = p.head.len().saturating_sub(p.start + p.len);
        let (more, ended) = inflate_into(&mut p.d, data, out.get_mut(filled..)?).ok()?;
        if filled + more != p.len {
            return None;
        }
        finish(&mut p.d, data, tail_seen, p.tail, ended).ok()?;
        Some(MatValue::Numeric(array))
    }

    /// Writes the data of variable `name` to `out` as it inflates — MATLAB's column-major
    /// bytes, native order, what [`MatValue::to_numpy`] holds in Fortran order — when it is a
    /// large compressed variable holding one real numeric array of `dtype` and MATLAB size
    /// `dims` in the machine's byte order. Returns `Ok(false)`, having written nothing, for
    /// any other variable ([`Mat5File::read`] then reads it). The stream is inflated on a
    /// second thread while this one writes; a damaged stream found after the first bytes
    /// are written is an error (the caller's output is then incomplete).
    /// `progress` gets the bytes written so far.
    pub(crate) fn copy_plain(
        &self,
        name: &str,
        dtype: &DType,
        dims: &[usize],
        out: &mut dyn Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<bool> {
        let var = self.var(name)?;
        let Stored::Level5 {
            start,
            end,
            compressed: true,
        } = var.stored
        else {
            return Ok(false);
        };
        let data = self.bytes.get(start..end).unwrap_or_default();
        if data.len() < PLAIN_FROM {
            return Ok(false);
        }
        let offset = var.offset;
        let located = |e: Error| e.with_file(&self.path).with_node(format!("/{name}"));
        let Some(mut p) = self.plain_start(data, offset).map_err(located)? else {
            return Ok(false);
        };
        if DType::scalar(p.kind) != *dtype || p.dims != dims {
            return Ok(false);
        }
        let corrupt = |why: String| {
            located(
                Error::format(format!(
                    "corrupted zlib stream in an miCOMPRESSED element: {why}"
                ))
                .with_offset(offset),
            )
        };
        let write = |out: &mut dyn Write, bytes: &[u8]| {
            out.write_all(bytes)
                .map_err(|e| located(Error::io("cannot write", e)))
        };
        let first_len = p.first().len();
        let tail_seen = p.head.len().saturating_sub(p.start + p.len);
        let (len, tail) = (p.len, p.tail);
        let rest = len - first_len;
        std::thread::scope(|scope| -> Result<bool> {
            // Inflated pieces one way, emptied ones back: at most four pieces exist.
            let (full_tx, full_rx) = mpsc::sync_channel::<std::result::Result<Vec<u8>, String>>(2);
            let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
            let d = &mut p.d;
            scope.spawn(move || {
                let mut left = rest;
                let mut ended = false;
                while left > 0 {
                    let mut piece = empty_rx.try_recv().unwrap_or_default();
                    piece.resize(PIECE.min(left), 0);
                    let got = match inflate_into(d, data, &mut piece) {
                        Ok((n, end)) if n == piece.len() => {
                            ended = end;
                            n
                        }
                        Ok((n, _)) => {
                            let e =
                                format!("the data ends after {} of {len} bytes", len - left + n);
                            let _ = full_tx.send(Err(e));
                            return;
                        }
                        Err(e) => {
                            let _ = full_tx.send(Err(e));
                            return;
                        }
                    };
                    piece.truncate(got);
                    left -= got;
                    if full_tx.send(Ok(piece)).is_err() {
                        // The writer stopped (its error is the one reported).
                        return;
                    }
                }
                let last = finish(d, data, tail_seen, tail, ended).map(|()| Vec::new());
                let _ = full_tx.send(last);
            });
            write(
                out,
                p.head.get(p.start..p.start + first_len).unwrap_or_default(),
            )?;
            let mut done = first_len as u64;
            progress(done);
            loop {
                match full_rx.recv() {
                    Ok(Ok(piece)) if piece.is_empty() => break,
                    Ok(Ok(piece)) => {
                        write(out, &piece)?;
                        done += piece.len() as u64;
                        progress(done);
                        let _ = empty_tx.send(piece);
                    }
                    Ok(Err(why)) => return Err(corrupt(why)),
                    Err(_) => return Err(corrupt("the inflating thread stopped".into())),
                }
            }
            Ok(true)
        })
    }
}
