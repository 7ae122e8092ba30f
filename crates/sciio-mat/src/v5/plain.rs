//! Large compressed variables holding one numeric array stored in its class's own type (a
//! large double matrix from MATLAB or scipy): real ones in the machine's byte order have
//! their data inflated straight into the array ([`Mat5File::decode_plain`]); real or complex
//! ones in either byte order are streamed to a writer as they inflate, inflating on a second
//! thread ([`Mat5File::copy_plain`]; complex and big-endian ones: [`Mat5File::copy_parts`];
//! complex integers, which numpy has no kind for, made complex doubles as they pass):
//! no inflated copy of the whole element, no zero-filled array of its size. Logical variables
//! (class uint8 with the logical flag, data miUINT8, as MATLAB and scipy store them) go the
//! same ways, their bytes made numpy booleans (0 or 1) as they pass. A streamed
//! variable's element is read from the file as it inflates ([`super::source`]), a piece at a
//! time: neither the file nor the element is held whole.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::mpsc;

use flate2::read::ZlibDecoder;
use flate2::{Decompress, FlushDecompress, Status};
use sciio_core::{DType, Error, NdArray, Order, Result, ScalarKind};

use super::consts::PLAIN_FROM;
use super::cursor::{self, Cursor, MI_MATRIX};
use super::decode::{class_kind, integers_as_doubles, interleave, Decoder};
use super::{Mat5File, Stored, HEADER_PREFIX};
use crate::booleans::Booleans;
use crate::value::MatValue;

/// The pieces [`Mat5File::copy_plain`] inflates into and hands to the writer (small enough to
/// stay in the cores' caches between the two threads).
const PIECE: usize = 1 << 20;

/// Where a plain variable's parts are in its `miMATRIX` element, and what they hold.
struct Layout {
    /// Where the real part's data starts (in the buffer its header was read from).
    start: usize,
    /// The real part's length in bytes (the imaginary part's too).
    len: usize,
    /// The bytes between the data's end and the element's end (padding, at most 7).
    tail: usize,
    /// The kind of one number of a part (a complex variable's: of its real part).
    kind: ScalarKind,
    dims: Vec<usize>,
    /// The real part's data type (the imaginary part's must be the same).
    data_ty: u32,
    /// An imaginary part follows the real one (`tail` then counts after it).
    complex: bool,
    /// A logical: its bytes are made numpy booleans (0 or 1) as they pass.
    logical: bool,
    /// Numbers stored in the other byte order (a big-endian file).
    swap: bool,
}

impl Layout {
    /// The kind of the elements the stream gives (complex: numpy's real/imaginary pairs;
    /// complex integers, which numpy has no kind for: complex doubles, as scipy.io gives).
    fn out_kind(&self) -> ScalarKind {
        match (self.complex, self.kind) {
            _ if self.logical => ScalarKind::Bool,
            (true, ScalarKind::Float(n)) => ScalarKind::Complex(2 * n),
            (true, _) => ScalarKind::Complex(16),
            (_, kind) => kind,
        }
    }

    /// Bytes the stream gives.
    fn out_len(&self) -> u64 {
        let count = self.len / self.kind.itemsize().max(1);
        count as u64 * self.out_kind().itemsize() as u64
    }

    /// A piece of numbers as [`interleave`] puts them (native, real and imaginary ones in
    /// turn) made the stream's: complex integers made doubles (a 64-bit one beyond 2^53 is an
    /// error: the read, and the output written so far, stop there), anything else as it is.
    fn out_piece(&self, piece: Vec<u8>) -> Result<Vec<u8>> {
        if !self.complex || matches!(self.kind, ScalarKind::Float(_)) {
            return Ok(piece);
        }
        let doubles = integers_as_doubles(&piece, self.kind)?;
        Ok(doubles.iter().flat_map(|d| d.to_ne_bytes()).collect())
    }

    /// Whether [`Mat5File::copy_plain`] streams it as `dtype` and `dims`: of that kind and
    /// size, and of at least [`PLAIN_FROM`] bytes inflated (whatever its compressed size: a
    /// stream of few distinct values inflates up to a thousand times its size).
    fn streams(&self, dtype: &DType, dims: &[usize]) -> bool {
        DType::scalar(self.out_kind()) == *dtype && self.dims == dims && self.len >= PLAIN_FROM
    }

    /// Where the imaginary part's tag is: after the real part and its padding.
    fn imag_tag(&self) -> usize {
        self.start + self.len.div_ceil(8) * 8
    }
}

/// The start of a plain variable's stream: its first inflated bytes and where its data is.
struct PlainStart {
    d: Decompress,
    /// What was inflated to read the headers (the data's first bytes included).
    head: Vec<u8>,
    /// Where its parts are in `head`'s coordinates.
    at: Layout,
}

impl PlainStart {
    /// The data's first bytes, inflated with the headers.
    fn first(&self) -> &[u8] {
        let first = self.head.get(self.at.start..).unwrap_or_default();
        first
            .get(..self.at.len.min(first.len()))
            .unwrap_or_default()
    }
}

/// How much of a streamed element is read from the file at a time.
const READ_PIECE: usize = 1 << 16;

/// The compressed bytes of an element, read as they inflate (from the file or from memory).
type Input<'a> = dyn BufRead + Send + 'a;

/// Inflates the next bytes of `input` into `room`, the bytes it took consumed.
fn inflate_some(
    d: &mut Decompress,
    input: &mut Input<'_>,
    room: &mut [u8],
    flush: FlushDecompress,
) -> std::result::Result<Status, String> {
    let before = d.total_in();
    let buf = input.fill_buf().map_err(|e| e.to_string())?;
    let status = d.decompress(buf, room, flush).map_err(|e| e.to_string())?;
    input.consume((d.total_in() - before) as usize);
    Ok(status)
}

/// Inflates into `out` until it is full or the stream ends; returns the bytes written and
/// whether the stream ended.
fn inflate_into(
    d: &mut Decompress,
    input: &mut Input<'_>,
    out: &mut [u8],
) -> std::result::Result<(usize, bool), String> {
    let mut filled = 0;
    while filled < out.len() {
        let (before_in, before_out) = (d.total_in(), d.total_out());
        let room = out.get_mut(filled..).unwrap_or_default();
        let status = inflate_some(d, input, room, FlushDecompress::None)?;
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
/// already), then the end of the stream (its checksum checked by zlib), and nothing after it
/// (the element's compressed bytes are `data_len`).
fn finish(
    d: &mut Decompress,
    input: &mut Input<'_>,
    data_len: u64,
    mut tail_seen: usize,
    tail: usize,
    mut ended: bool,
) -> std::result::Result<(), String> {
    let mut rest = [0u8; 16];
    while !ended {
        let (before_in, before_out) = (d.total_in(), d.total_out());
        let room = rest.get_mut(tail_seen.min(16)..).unwrap_or_default();
        let status = inflate_some(d, input, room, FlushDecompress::Finish)?;
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
    if d.total_in() != data_len {
        return Err(format!(
            "{} bytes after the end of the stream",
            data_len - d.total_in().min(data_len)
        ));
    }
    Ok(())
}

impl Mat5File {
    /// The headers of a plain variable's compressed element `data`: `Ok(None)` when it is not
    /// one (logicals wider than a byte, stored in another type, headers the general decoder
    /// reads differently: [`Mat5File::decode`] then reads it and reports what is wrong). An
    /// error, at the element's `offset`, when the stream's first bytes do not inflate, when its
    /// real part's length disagrees with its size, or when it is over the limits.
    fn plain_start(
        &self,
        input: &mut Input<'_>,
        data_len: u64,
        offset: u64,
    ) -> Result<Option<PlainStart>> {
        let mut d = Decompress::new(true);
        let mut head = Vec::with_capacity(4096);
        let corrupt = |e: String| {
            Error::format(format!(
                "corrupted zlib stream in an miCOMPRESSED element: {e}"
            ))
            .with_offset(offset)
        };
        // Its first 4096 inflated bytes (or fewer, when the stream ends before).
        while head.len() < head.capacity() {
            let (before_in, before_out) = (d.total_in(), d.total_out());
            let buf = input.fill_buf().map_err(|e| corrupt(e.to_string()))?;
            let status = d
                .decompress_vec(buf, &mut head, FlushDecompress::None)
                .map_err(|e| corrupt(e.to_string()))?;
            input.consume((d.total_in() - before_in) as usize);
            let stalled = d.total_in() == before_in && d.total_out() == before_out;
            if stalled || matches!(status, Status::StreamEnd) {
                break;
            }
        }
        // The miMATRIX tag, the array header, then the real part's tag.
        let mut c = Cursor::new(&head, offset, false, self.endian);
        let (Ok(ty), Ok(size)) = (c.u32(""), c.u32("")) else {
            return Ok(None);
        };
        if ty != MI_MATRIX {
            return Ok(None);
        }
        let size = size as usize;
        let Some(at) = self.layout(&mut c, size.saturating_add(8), offset)? else {
            return Ok(None);
        };
        // The bounds `cursor::inflate` applies to the whole element.
        let total = (size as u64).saturating_add(8);
        let bounded = |e: Error| e.with_offset(offset);
        self.limits
            .check_alloc(total, "an inflated miCOMPRESSED element")
            .map_err(bounded)?;
        self.limits
            .check_ratio(data_len, total, "an miCOMPRESSED element")
            .map_err(bounded)?;
        Ok(Some(PlainStart { d, head, at }))
    }

    /// The layout of a plain variable whose array header `c` is at, its `miMATRIX` element
    /// ending at `end` (in `c`'s coordinates): `Ok(None)` when it is not one; an error when
    /// its real part's length disagrees with its size or its parts run past `end`.
    fn layout(&self, c: &mut Cursor<'_>, end: usize, offset: u64) -> Result<Option<Layout>> {
        let decoder = Decoder {
            limits: &self.limits,
        };
        let Ok(Some(h)) = decoder.header(c) else {
            return Ok(None);
        };
        let Some(kind) = class_kind(h.class) else {
            return Ok(None);
        };
        // Complex: of any class (integers made complex doubles as they pass). Logical: real,
        // in bytes (MATLAB's and scipy's class uint8, data miUINT8, checked below with the
        // other classes' data types); a logical of a wider class is decoded whole.
        let (complex, logical) = (h.complex(), h.logical());
        if logical && (complex || kind.itemsize() != 1) {
            return Ok(None);
        }
        let (Ok(data_ty), Ok(len)) = (c.u32(""), c.u32("")) else {
            return Ok(None);
        };
        let len = len as usize;
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
        // The real part (or the imaginary part after it, of the same length) ends the element
        // (its padding inside the stream or not).
        let start = c.position();
        let parts = match complex {
            true => len.div_ceil(8) * 8 + 8 + len,
            false => len,
        };
        let Some(tail) = end.checked_sub(start).and_then(|t| t.checked_sub(parts)) else {
            return damaged(format!(
                "its parts of {len} bytes run past the end of its miMATRIX element"
            ));
        };
        if tail > 7 {
            return Ok(None);
        }
        Ok(Some(Layout {
            start,
            len,
            tail,
            kind,
            dims: h.dims,
            data_ty,
            complex,
            logical,
            swap: self.endian.swap(),
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
            compressed,
        } = var.stored
        else {
            return Ok(self.check_v4(var, dtype, dims));
        };
        let located = |e: Error| e.with_file(&self.path).with_node(format!("/{name}"));
        let layout = match compressed {
            true => {
                let mut input = self.input(start, end);
                self.plain_start(&mut input, end - start, var.offset)
                    .map(|p| p.map(|p| p.at))
            }
            false => self.raw_layout(start, end, var.offset),
        };
        let Some(at) = layout.map_err(located)? else {
            return Ok(false);
        };
        Ok(at.streams(dtype, dims))
    }

    /// A plain compressed variable's array, its data inflated straight into it. `None` for
    /// anything else, and for anything unexpected (a damaged stream included):
    /// [`Mat5File::decode`] then decodes the element the general way, and reports what is
    /// wrong with it.
    pub(super) fn decode_plain(&self, data: &[u8], offset: u64) -> Option<MatValue> {
        let data_len = data.len() as u64;
        let mut input = data;
        let mut p = self
            .plain_start(&mut input, data_len, offset)
            .ok()
            .flatten()?;
        if p.at.complex || p.at.swap {
            return None;
        }
        let mut array =
            NdArray::zeroed(DType::scalar(p.at.out_kind()), &p.at.dims, Order::F).ok()?;
        let out = array.as_bytes_mut().ok()?;
        let first = p.first();
        out.get_mut(..first.len())?.copy_from_slice(first);
        let filled = first.len();
        // Bytes inflated past the data already (padding) count toward the tail.
        let tail_seen = p.head.len().saturating_sub(p.at.start + p.at.len);
        let (more, ended) = inflate_into(&mut p.d, &mut input, out.get_mut(filled..)?).ok()?;
        if filled + more != p.at.len {
            return None;
        }
        finish(&mut p.d, &mut input, data_len, tail_seen, p.at.tail, ended).ok()?;
        if !p.at.logical {
            return Some(MatValue::Numeric(array));
        }
        // Logical bytes as the general decoder makes them: any nonzero byte is true.
        for b in array.as_bytes_mut().ok()? {
            *b = u8::from(*b != 0);
        }
        Some(MatValue::Logical(array))
    }

    /// Writes the data of variable `name` to `out` as it inflates — MATLAB's column-major
    /// bytes, native order, what [`MatValue::to_numpy`] holds in Fortran order — when it is a
    /// large variable (compressed or not) holding one numeric array of `dtype` and MATLAB
    /// size `dims` (complex ones interleaved, complex integers made complex doubles a piece
    /// at a time — a 64-bit part beyond 2^53 stops it with the whole read's error, the
    /// output incomplete —, big-endian ones reversed, logical bytes made numpy booleans, 0
    /// or 1, as the whole read makes them). Returns `Ok(false)`, having written nothing, for
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
            compressed,
        } = var.stored
        else {
            return self.copy_v4(var, dtype, dims, out, progress);
        };
        let offset = var.offset;
        let located = |e: Error| e.with_file(&self.path).with_node(format!("/{name}"));
        if !compressed {
            let Some(at) = self.raw_layout(start, end, offset).map_err(located)? else {
                return Ok(false);
            };
            if !at.streams(dtype, dims) {
                return Ok(false);
            }
            let mut booleans = None;
            let out = Booleans::when(at.logical, out, &mut booleans);
            self.copy_raw(start, &at, offset, &located, out, progress)?;
            return Ok(true);
        }
        let data_len = end - start;
        let mut input = self.input(start, end);
        let Some(mut p) = self
            .plain_start(&mut input, data_len, offset)
            .map_err(located)?
        else {
            return Ok(false);
        };
        if !p.at.streams(dtype, dims) {
            return Ok(false);
        }
        let mut booleans = None;
        let out = Booleans::when(p.at.logical, out, &mut booleans);
        if p.at.complex || p.at.swap {
            self.copy_parts((start, end), &p.at, offset, &located, out, progress)?;
            return Ok(true);
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
        let tail_seen = p.head.len().saturating_sub(p.at.start + p.at.len);
        let (len, tail) = (p.at.len, p.at.tail);
        let rest = len - first_len;
        std::thread::scope(|scope| -> Result<bool> {
            // Inflated pieces one way, emptied ones back: at most four pieces exist.
            let (full_tx, full_rx) = mpsc::sync_channel::<std::result::Result<Vec<u8>, String>>(2);
            let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
            let d = &mut p.d;
            let input = &mut input;
            scope.spawn(move || {
                let mut left = rest;
                let mut ended = false;
                while left > 0 {
                    let mut piece = empty_rx.try_recv().unwrap_or_default();
                    piece.resize(PIECE.min(left), 0);
                    let got = match inflate_into(d, input, &mut piece) {
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
                let last = finish(d, input, data_len, tail_seen, tail, ended).map(|()| Vec::new());
                let _ = full_tx.send(last);
            });
            write(
                out,
                p.head
                    .get(p.at.start..p.at.start + first_len)
                    .unwrap_or_default(),
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

/// Numbers of a part a piece of [`Mat5File::copy_parts`] takes (of each part: a complex
/// piece is twice this).
const PART_PIECE: usize = 1 << 17;

/// `n` bytes of `z` passed over.
fn skip<R: Read>(z: &mut ZlibDecoder<R>, n: usize) -> std::io::Result<()> {
    let skipped = std::io::copy(&mut z.by_ref().take(n as u64), &mut std::io::sink())?;
    match skipped == n as u64 {
        true => Ok(()),
        false => Err(std::io::ErrorKind::UnexpectedEof.into()),
    }
}

impl Mat5File {
    /// [`Mat5File::copy_plain`] of a complex or big-endian variable (`p`, its element's data
    /// at `range` of the file, the element at `offset`): its real part and, complex, its imaginary part — read by a second inflater
    /// over the same stream, which passes over the real part first — a piece at a time, each
    /// number reversed into the machine's order, real and imaginary numbers interleaved as
    /// numpy holds them. Inflated on a second thread while this one writes; the end of the
    /// stream (padding, checksum, nothing after it) checked after the last piece.
    fn copy_parts(
        &self,
        (data_at, data_end): (u64, u64),
        p: &Layout,
        offset: u64,
        located: &dyn Fn(Error) -> Error,
        out: &mut dyn Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let corrupt = |why: String| {
            located(
                Error::format(format!(
                    "corrupted zlib stream in an miCOMPRESSED element: {why}"
                ))
                .with_offset(offset),
            )
        };
        let item = p.kind.itemsize().max(1);
        let (len, tail, swap, endian) = (p.len, p.tail, p.swap, self.endian);
        let (start, imag_tag, data_ty, complex) = (p.start, p.imag_tag(), p.data_ty, p.complex);
        let source = &self.source;
        std::thread::scope(|scope| -> Result<()> {
            let (tx, rx) = mpsc::sync_channel::<std::result::Result<Vec<u8>, String>>(2);
            scope.spawn(move || {
                let io = |e: std::io::Error| match e.kind() {
                    std::io::ErrorKind::UnexpectedEof => "the stream ends early".to_string(),
                    _ => e.to_string(),
                };
                let produce = || -> std::result::Result<(), String> {
                    let data_len = data_end - data_at;
                    let reader =
                        || BufReader::with_capacity(READ_PIECE, source.reader(data_at, data_end));
                    let mut real = ZlibDecoder::new(reader());
                    skip(&mut real, start).map_err(io)?;
                    let mut imag = match complex {
                        false => None,
                        true => {
                            let mut z = ZlibDecoder::new(reader());
                            skip(&mut z, imag_tag).map_err(io)?;
                            let mut tag = [0u8; 8];
                            z.read_exact(&mut tag).map_err(io)?;
                            let word = |at: usize| {
                                let mut w = [0u8; 4];
                                w.copy_from_slice(&tag[at..at + 4]);
                                endian.u32(w)
                            };
                            if (word(0), word(4) as usize) != (data_ty, len) {
                                return Err(format!(
                                    "the imaginary part's tag (type {}, {} bytes) is not the \
                                     real part's (type {data_ty}, {len} bytes)",
                                    word(0),
                                    word(4)
                                ));
                            }
                            Some(z)
                        }
                    };
                    let (mut left, mut r, mut i) = (len, Vec::new(), Vec::new());
                    while left > 0 {
                        let n = (PART_PIECE * item).min(left);
                        r.resize(n, 0);
                        real.read_exact(&mut r).map_err(io)?;
                        if let Some(z) = imag.as_mut() {
                            i.resize(n, 0);
                            z.read_exact(&mut i).map_err(io)?;
                        }
                        let piece = interleave(&r, imag.as_ref().map(|_| &i[..]), item, swap);
                        if tx.send(Ok(piece)).is_err() {
                            // The writer stopped (its error is the one reported).
                            return Ok(());
                        }
                        left -= n;
                    }
                    // The padding, the end of the stream (its checksum checked), nothing after.
                    let last = imag.as_mut().unwrap_or(&mut real);
                    let mut rest = Vec::new();
                    last.by_ref().take(16).read_to_end(&mut rest).map_err(io)?;
                    if rest.len() != tail {
                        return Err(format!(
                            "{} bytes after the data, the element announces {tail}",
                            rest.len()
                        ));
                    }
                    if last.total_in() != data_len {
                        return Err(format!(
                            "{} bytes after the end of the stream",
                            data_len.saturating_sub(last.total_in())
                        ));
                    }
                    Ok(())
                };
                if let Err(why) = produce() {
                    let _ = tx.send(Err(why));
                }
            });
            let (mut inflated, mut done) = (0u64, 0u64);
            for piece in rx {
                let piece = piece.map_err(corrupt)?;
                inflated += piece.len() as u64;
                let piece = p.out_piece(piece).map_err(located)?;
                out.write_all(&piece)
                    .map_err(|e| located(Error::io("cannot write", e)))?;
                done += piece.len() as u64;
                progress(done);
            }
            let want = len as u64 * if complex { 2 } else { 1 };
            match inflated == want && done == p.out_len() {
                true => Ok(()),
                false => Err(corrupt(format!("{inflated} of {want} bytes inflated"))),
            }
        })
    }
}

impl Mat5File {
    /// The compressed data `start..end` of an element, read from the file a piece at a time.
    fn input(&self, start: u64, end: u64) -> BufReader<super::source::RangeReader<'_>> {
        BufReader::with_capacity(READ_PIECE, self.source.reader(start, end))
    }

    /// The layout of an uncompressed variable's `miMATRIX` data `start..end` (the element at
    /// file offset `offset`), as [`Mat5File::layout`], from its first bytes.
    fn raw_layout(&self, start: u64, end: u64, offset: u64) -> Result<Option<Layout>> {
        let head =
            self.element_bytes(start, end.min(start.saturating_add(HEADER_PREFIX)), offset)?;
        let mut c = Cursor::new(&head, offset.saturating_add(8), true, self.endian);
        self.layout(&mut c, (end - start) as usize, offset)
    }

    /// [`Mat5File::copy_plain`] of an uncompressed variable (`at` in its `miMATRIX` data, at
    /// `data_at` in the file): read and written a piece at a time, real and imaginary numbers
    /// interleaved, each number reversed into the machine's order.
    fn copy_raw(
        &self,
        data_at: u64,
        at: &Layout,
        offset: u64,
        located: &dyn Fn(Error) -> Error,
        out: &mut dyn Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let damaged = |why: &str| located(Error::format(why.to_string()).with_offset(offset));
        let cannot_read =
            |e: std::io::Error| located(Error::io("cannot read", e).with_offset(offset));
        // The parts are inside the element (checked by `layout`), the element inside the file.
        let at_file = |i: usize| data_at.saturating_add(i as u64);
        let part = |from: usize| {
            let from = at_file(from);
            self.source.reader(from, from.saturating_add(at.len as u64))
        };
        let mut real = part(at.start);
        let mut imag = match at.complex {
            false => None,
            true => {
                let t = at.imag_tag();
                let tag = self
                    .source
                    .range(at_file(t), at_file(t.saturating_add(8)))
                    .map_err(cannot_read)?;
                let word = |i: usize| {
                    let w: Option<[u8; 4]> = tag.get(i..i + 4).and_then(|w| w.try_into().ok());
                    w.map(|w| self.endian.u32(w))
                };
                let (Some(ty), Some(n)) = (word(0), word(4)) else {
                    return Err(damaged("its imaginary part runs past its element"));
                };
                if (ty, n as usize) != (at.data_ty, at.len) {
                    return Err(damaged(
                        "its imaginary part's tag is not its real part's (type and length)",
                    ));
                }
                Some(part(t.saturating_add(8)))
            }
        };
        let item = at.kind.itemsize().max(1);
        let step = PART_PIECE * item;
        let (mut r, mut i) = (Vec::new(), Vec::new());
        let mut left = at.len;
        let mut done = 0u64;
        while left > 0 {
            let n = step.min(left);
            r.resize(n, 0);
            real.read_exact(&mut r).map_err(cannot_read)?;
            if let Some(z) = imag.as_mut() {
                i.resize(n, 0);
                z.read_exact(&mut i).map_err(cannot_read)?;
            }
            let piece = interleave(&r, imag.as_ref().map(|_| &i[..]), item, at.swap);
            let piece = at.out_piece(piece).map_err(located)?;
            out.write_all(&piece)
                .map_err(|e| located(Error::io("cannot write", e)))?;
            done += piece.len() as u64;
            progress(done);
            left -= n;
        }
        Ok(())
    }
}
