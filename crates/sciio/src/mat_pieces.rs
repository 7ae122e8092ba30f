//! The elements of a numpy array in MATLAB's order (column-major), given piece by piece to
//! `sciio_mat::MatWriter::write_pieces` by `MatOut::write_streamed` (`mat_write.rs`), for
//! arrays of any number of dimensions in C or Fortran order.
//!
//! MATLAB's order of an array of shape `(d0, d1, …)` is numpy's Fortran order: element
//! `(i0, i1, …)` at `i0 + d0 * c`, `c` the Fortran-order index of `(i1, …)` among the trailing
//! axes. So the array is a matrix of `d0` rows and `c` columns, and a block of whole rows
//! put in Fortran order holds, for each column in turn, that column's run of rows. The
//! routes ([`Route`]):
//! - **stored**: one row or one column of at most two dimensions: the stored order is
//!   MATLAB's, rows read as asked;
//! - **scatter**: a small C-order array (under 64 MiB): each piece gathered from blocks of
//!   whole rows read again (in the page cache);
//! - **staged**: the data put once into a file of blocks of rows, each block in Fortran
//!   order, from which a run of columns is one read per block. A Fortran-order array (or
//!   one with at most one axis longer than 1) is one block: its stored bytes; a 2-d C-order
//!   matrix whose rows are over a block is blocks of one row: its stored bytes too. A native
//!   `.npy` of either is read where it is (no copy); otherwise the source is read on a thread
//!   of its own (`stream::for_each_batch`, in batches of elements) while this one transposes
//!   and writes the blocks into an unnamed temporary file beside the destination
//!   ([`Fortran`]). A C-order array of three or more dimensions whose rows are over a block
//!   is blocks of one row, each row put in Fortran order over its trailing axes the same way
//!   (the row staged in a temporary file of its own and read back in MATLAB order piece by
//!   piece; rows of rows over a block again so): memory holds about a block per axis
//!   whatever the row's size. While the writer takes a piece, a second thread reads the
//!   next one from that file ([`Prefetch`]).

use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use sciio_core::{DType, Error, NdArray, Order, Result, ScalarKind};

use crate::node::ArrayInfo;

/// The sizes that choose a route; [`Sizes::DEFAULT`] but in tests.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sizes {
    /// Arrays from this size on are written piece by piece.
    pub(crate) pieces_from: u64,
    /// Bytes of a block of rows.
    pub(crate) block_bytes: usize,
    /// C-order arrays from this size on are staged (smaller ones scattered).
    pub(crate) transpose_from: u64,
}

impl Sizes {
    pub(crate) const DEFAULT: Sizes = Sizes {
        pieces_from: 16 << 20,
        block_bytes: 8 << 20,
        transpose_from: 64 << 20,
    };
}

/// How an array's pieces are made (see the module's description).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    Stored,
    Scatter,
    /// Blocks of this many rows in the staged file; `stored`: the blocks are the stored
    /// bytes (Fortran order, or rows of one axis one at a time).
    Staged {
        block_rows: u64,
        stored: bool,
    },
}

/// The route of an array of `info` (any source: the caller checks the kind and format), or
/// `None` when it is read whole.
pub(crate) fn route(info: &ArrayInfo, sizes: Sizes) -> Option<Route> {
    let shape = &info.shape;
    if shape.is_empty() || info.nbytes() < sizes.pieces_from || info.dtype.as_scalar().is_none() {
        return None;
    }
    let row_bytes = info.row_bytes();
    if row_bytes == 0 {
        return None;
    }
    let (rows, cols) = matrix_of(shape);
    if shape.len() <= 2
        && info.row_ordered()
        && (cols == 1 || (rows == 1 && row_bytes <= sizes.block_bytes))
    {
        return Some(Route::Stored);
    }
    if !in_matlab_order(info)
        && row_bytes <= sizes.block_bytes
        && info.nbytes() < sizes.transpose_from
    {
        return Some(Route::Scatter);
    }
    let (block_rows, stored) = staged_blocks(info, sizes);
    Some(Route::Staged { block_rows, stored })
}

/// Whether the array's stored order is MATLAB's: Fortran order, or at most one axis longer
/// than 1.
pub(crate) fn in_matlab_order(info: &ArrayInfo) -> bool {
    info.order == Order::F || info.shape.iter().filter(|&&d| d > 1).count() <= 1
}

/// The blocks of rows an array is staged in ([`Route::Staged`], [`stage`]): rows per block
/// and whether the blocks are the stored bytes. Any element type (structured arrays too:
/// `mat_write/records.rs`).
pub(crate) fn staged_blocks(info: &ArrayInfo, sizes: Sizes) -> (u64, bool) {
    let (rows, _) = matrix_of(&info.shape);
    let row_bytes = info.row_bytes();
    if in_matlab_order(info) {
        return (rows, true);
    }
    if row_bytes > sizes.block_bytes {
        // Blocks of one row: the stored bytes when the row is one axis, else each row put
        // in Fortran order piece by piece ([`Fortran`]).
        return (1, info.shape.len() == 2);
    }
    ((sizes.block_bytes / row_bytes.max(1)).max(1) as u64, false)
}

/// Rows (the first axis) and columns (the product of the others) of `shape`.
fn matrix_of(shape: &[usize]) -> (u64, u64) {
    let rows = shape.first().map_or(1, |&r| r as u64);
    let cols = shape.iter().skip(1).map(|&d| d as u64).product();
    (rows, cols)
}

/// The array's data as blocks of rows, each in Fortran order, in a file.
#[derive(Debug)]
pub(crate) struct Staged {
    file: std::fs::File,
    /// Where the first block starts in `file`.
    offset: u64,
    block_rows: u64,
    rows: u64,
    cols: u64,
    item: u64,
}

impl Staged {
    /// A file holding `elements` of `item` bytes in MATLAB's order itself (one block), as
    /// `mat_text.rs` stages a Fortran-order text array's code units.
    pub(crate) fn in_order(file: std::fs::File, elements: u64, item: u64) -> Staged {
        Staged {
            file,
            offset: 0,
            block_rows: elements,
            rows: elements,
            cols: 1,
            item,
        }
    }

    /// Elements `first..end` (MATLAB's order) into `buf`: one read per block holding some of
    /// them (a run of columns is contiguous in each; a single column's rows are read into
    /// place), then each column's rows put in place.
    pub(crate) fn read(&self, first: u64, end: u64, buf: &mut [u8]) -> Result<()> {
        let (rows, item) = (self.rows, self.item);
        let read = |buf: &mut [u8], at: u64| {
            crate::atomic::read_at(&self.file, buf, self.offset + at)
                .map_err(|e| Error::io("cannot read the staged data of the array", e))
        };
        if self.block_rows >= rows {
            // One block: MATLAB's order itself.
            return read(buf, first * item);
        }
        let (j0, j1) = (first / rows, (end - 1) / rows + 1);
        // The rows of column j inside first..end, and inside the block of rows a..b.
        let span = |j: u64, a: u64, b: u64| {
            let lo = if j == j0 { first % rows } else { 0 }.max(a);
            let hi = if j == j1 - 1 {
                (end - 1) % rows + 1
            } else {
                rows
            }
            .min(b);
            (lo, hi)
        };
        let mut scratch = Vec::new();
        let mut a = 0;
        while a < rows {
            let b = (a + self.block_rows).min(rows);
            let height = b - a;
            // This block's column j holds rows a..b at block start + j * height. Only the
            // columns with rows here are read: a piece within one column touches few blocks.
            let here: Vec<(u64, u64, u64)> = (j0..j1)
                .map(|j| (j, span(j, a, b)))
                .filter(|(_, (lo, hi))| lo < hi)
                .map(|(j, (lo, hi))| (j, lo, hi))
                .collect();
            let block = a * self.cols;
            match here[..] {
                [] => {}
                // One column: its rows read straight into place.
                [(j, lo, hi)] => {
                    let to = ((j * rows + lo - first) * item) as usize;
                    let len = ((hi - lo) * item) as usize;
                    read(&mut buf[to..to + len], (block + j * height + lo - a) * item)?;
                }
                [(ja, ..), .., (jb, ..)] => {
                    scratch.resize(((jb + 1 - ja) * height * item) as usize, 0);
                    read(&mut scratch, (block + ja * height) * item)?;
                    for &(j, lo, hi) in &here {
                        let from = (((j - ja) * height + (lo - a)) * item) as usize;
                        let to = ((j * rows + lo - first) * item) as usize;
                        let len = ((hi - lo) * item) as usize;
                        buf[to..to + len].copy_from_slice(&scratch[from..from + len]);
                    }
                }
            }
            a = b;
        }
        Ok(())
    }
}

/// Stages the array at `path` of `src` (route [`Route::Staged`] with `block_rows` and
/// `as_stored`, chosen for `block_bytes`): a native `.npy` whose blocks are its stored bytes is
/// used where it is; anything else is read on a thread of its own and written, each block of
/// rows in Fortran order, into an unnamed temporary file in `folder`. `progress` gets the
/// bytes staged so far; `Ok((staged, copied))`, `copied` false when nothing was copied.
pub(crate) fn stage(
    src: &mut crate::file::File,
    path: &str,
    info: &ArrayInfo,
    (block_rows, as_stored, block_bytes): (u64, bool, usize),
    folder: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<(Staged, bool)> {
    let (rows, cols) = matrix_of(&info.shape);
    let item = info.dtype.itemsize() as u64;
    let staged = |file, offset| Staged {
        file,
        offset,
        block_rows,
        rows,
        cols,
        item,
    };
    if as_stored && info.dtype.is_native() {
        if let Some((file, offset, len)) = raw_npy(src, path)? {
            if len != info.nbytes() {
                return Err(short(len, info.nbytes(), path));
            }
            return Ok((staged(file, offset), false));
        }
    }
    let blocks = match as_stored {
        true => None,
        false => {
            let fortran = Fortran::new(&info.dtype, &info.shape, block_bytes, folder)?;
            if fortran.block_rows() != block_rows {
                return Err(Error::invalid_input(format!(
                    "internal: blocks of {} rows staged, not the {block_rows} asked",
                    fortran.block_rows()
                )));
            }
            Some(fortran)
        }
    };
    let file = write_blocks(src, path, info, blocks, folder, progress)?;
    Ok((staged(file, 0), true))
}

/// The data of a `.npy` source where it lies: the file, the offset and length of its data.
fn raw_npy(src: &crate::file::File, path: &str) -> Result<Option<(std::fs::File, u64, u64)>> {
    src.raw_array_range(path)
}

fn short(got: u64, want: u64, path: &str) -> Error {
    Error::truncated(format!(
        "the array's data is {got} bytes, not the {want} its shape and dtype make"
    ))
    .with_node(path.to_string())
}

fn temp_write_error(e: std::io::Error) -> Error {
    Error::io("cannot write the temporary file of the array", e)
}

/// Writes the staged blocks into a temporary file in `folder`, the source read on a thread of
/// its own in batches of elements: the stored bytes in native byte order (`blocks` `None`), or
/// blocks of rows put in Fortran order by `blocks`.
fn write_blocks(
    src: &mut crate::file::File,
    path: &str,
    info: &ArrayInfo,
    mut blocks: Option<Fortran>,
    folder: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<std::fs::File> {
    let file = tempfile::tempfile_in(folder)
        .map_err(temp_write_error)
        .map_err(|e| e.with_file(folder))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let item = info.dtype.itemsize();
    let mut done = 0u64;
    let per_batch = crate::stream::BATCH_BYTES / item.max(1);
    crate::stream::for_each_batch(src, path, item, per_batch, &mut |batch| {
        match &mut blocks {
            Some(fortran) => fortran.put(batch, &mut out)?,
            None => write_native(&info.dtype, batch, &mut out)?,
        }
        done += batch.len() as u64;
        progress(done);
        Ok(())
    })?;
    if let Some(fortran) = &mut blocks {
        fortran.finish(&mut out)?;
    }
    let file = out
        .into_inner()
        .map_err(|e| temp_write_error(e.into_error()))?;
    let len = file.metadata().map_err(temp_write_error)?.len();
    if len != info.nbytes() {
        return Err(short(len, info.nbytes(), path));
    }
    Ok(file)
}

/// Writes elements of `dtype` (whole ones, in order) in native byte order.
fn write_native(dtype: &DType, bytes: &[u8], out: &mut dyn std::io::Write) -> Result<()> {
    if dtype.is_native() {
        return out.write_all(bytes).map_err(temp_write_error);
    }
    let n = bytes.len() / dtype.itemsize().max(1);
    let native = NdArray::from_bytes(dtype.clone(), &[n], Order::C, bytes)?.to_native();
    out.write_all(native.as_bytes()).map_err(temp_write_error)
}

/// Writes whole C-order rows of `trailing` axes (`bytes`, elements of `dtype`) as one block
/// in Fortran order, native byte order.
fn write_block(
    dtype: &DType,
    trailing: &[usize],
    bytes: &[u8],
    out: &mut dyn std::io::Write,
) -> Result<()> {
    let row_bytes = trailing.iter().product::<usize>() * dtype.itemsize();
    let n = bytes.len() / row_bytes.max(1);
    let shape: Vec<usize> = std::iter::once(n).chain(trailing.iter().copied()).collect();
    let block = NdArray::from_bytes(dtype.clone(), &shape, Order::C, bytes)?;
    let block = match dtype.is_native() {
        true => block,
        false => block.to_native(),
    };
    out.write_all(block.to_order(Order::F).as_bytes())
        .map_err(temp_write_error)
}

/// A C-order array's bytes, taken in order in batches of whole elements of any length, written
/// as [`Staged`] reads them (native byte order) in memory bounded by about a block per axis.
struct Fortran {
    dtype: DType,
    /// The array's shape (C order), at least one axis.
    shape: Vec<usize>,
    row_bytes: usize,
    /// Bytes taken so far.
    taken: u64,
    layout: Layout,
}

enum Layout {
    /// One axis, or rows of one axis over a block (blocks of one row): the stored bytes.
    Stored,
    /// Rows within a block: `block_rows` rows gathered in `pending`, then put in Fortran order.
    Blocks { block_rows: usize, pending: Vec<u8> },
    /// Rows of several axes over a block: blocks of one row, each put in Fortran order.
    Rows(Box<RowStage>),
}

/// One row at a time of a [`Layout::Rows`] array, staged by `row` (a [`Fortran`] of the
/// row's shape) into a temporary file and read back from it in MATLAB order.
struct RowStage {
    row: Fortran,
    file: std::io::BufWriter<std::fs::File>,
    back: Staged,
    piece_bytes: usize,
}

impl Fortran {
    fn new(dtype: &DType, shape: &[usize], block_bytes: usize, folder: &Path) -> Result<Fortran> {
        let row_bytes = shape.iter().skip(1).product::<usize>() * dtype.itemsize();
        let layout = if shape.len() <= 1 || (shape.len() == 2 && row_bytes > block_bytes) {
            Layout::Stored
        } else if row_bytes <= block_bytes {
            let block_rows = (block_bytes / row_bytes.max(1)).max(1);
            let pending = Vec::new();
            Layout::Blocks {
                block_rows,
                pending,
            }
        } else {
            Layout::Rows(Box::new(RowStage::new(
                dtype,
                &shape[1..],
                block_bytes,
                folder,
            )?))
        };
        Ok(Fortran {
            dtype: dtype.clone(),
            shape: shape.to_vec(),
            row_bytes,
            taken: 0,
            layout,
        })
    }

    /// Rows of each block in the staged layout.
    fn block_rows(&self) -> u64 {
        match &self.layout {
            Layout::Stored if self.shape.len() <= 1 => matrix_of(&self.shape).0,
            Layout::Blocks { block_rows, .. } => *block_rows as u64,
            Layout::Stored | Layout::Rows(_) => 1,
        }
    }

    /// Takes the next `bytes` of the array (whole elements), writing what is complete to `out`.
    fn put(&mut self, mut bytes: &[u8], out: &mut dyn std::io::Write) -> Result<()> {
        let row_bytes = self.row_bytes.max(1);
        match &mut self.layout {
            Layout::Stored => {
                self.taken += bytes.len() as u64;
                write_native(&self.dtype, bytes, out)
            }
            Layout::Blocks {
                block_rows,
                pending,
            } => {
                self.taken += bytes.len() as u64;
                let block = *block_rows * row_bytes;
                while !bytes.is_empty() {
                    if pending.is_empty() && bytes.len() >= block {
                        // A whole block in the batch: put in order from where it is.
                        write_block(&self.dtype, &self.shape[1..], &bytes[..block], out)?;
                        bytes = &bytes[block..];
                        continue;
                    }
                    let take = (block - pending.len()).min(bytes.len());
                    pending.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    if pending.len() == block {
                        write_block(&self.dtype, &self.shape[1..], pending, out)?;
                        pending.clear();
                    }
                }
                Ok(())
            }
            Layout::Rows(stage) => {
                let stage = &mut **stage;
                while !bytes.is_empty() {
                    let at = (self.taken % row_bytes as u64) as usize;
                    let take = (row_bytes - at).min(bytes.len());
                    stage.row.put(&bytes[..take], &mut stage.file)?;
                    self.taken += take as u64;
                    bytes = &bytes[take..];
                    if at + take == row_bytes {
                        stage.drain(out)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Writes the last block, shorter than the others.
    fn finish(&mut self, out: &mut dyn std::io::Write) -> Result<()> {
        if let Layout::Blocks { pending, .. } = &mut self.layout {
            if !pending.is_empty() {
                write_block(&self.dtype, &self.shape[1..], pending, out)?;
                pending.clear();
            }
        }
        Ok(())
    }
}

impl RowStage {
    fn new(dtype: &DType, row_shape: &[usize], block_bytes: usize, folder: &Path) -> Result<Self> {
        let row = Fortran::new(dtype, row_shape, block_bytes, folder)?;
        let file = tempfile::tempfile_in(folder)
            .map_err(temp_write_error)
            .map_err(|e| e.with_file(folder))?;
        let (rows, cols) = matrix_of(row_shape);
        let back = Staged {
            file: file.try_clone().map_err(temp_write_error)?,
            offset: 0,
            block_rows: row.block_rows(),
            rows,
            cols,
            item: dtype.itemsize() as u64,
        };
        Ok(RowStage {
            row,
            file: std::io::BufWriter::with_capacity(1 << 20, file),
            back,
            piece_bytes: block_bytes,
        })
    }

    /// The row staged whole: writes it to `out` in MATLAB order (Fortran order over its axes)
    /// piece by piece, then starts the file again for the next row.
    fn drain(&mut self, out: &mut dyn std::io::Write) -> Result<()> {
        use std::io::{Seek as _, Write as _};
        self.row.finish(&mut self.file)?;
        self.file.flush().map_err(temp_write_error)?;
        let item = self.back.item.max(1);
        let elements = self.back.rows * self.back.cols;
        let per_piece = (self.piece_bytes as u64 / item).max(1);
        let mut buf = Vec::new();
        let mut first = 0;
        while first < elements {
            let end = (first + per_piece).min(elements);
            buf.resize(((end - first) * item) as usize, 0);
            self.back.read(first, end, &mut buf)?;
            out.write_all(&buf).map_err(temp_write_error)?;
            first = end;
        }
        self.file
            .seek(std::io::SeekFrom::Start(0))
            .map_err(temp_write_error)?;
        self.row.taken = 0;
        Ok(())
    }
}

/// Reads the next piece of a [`Staged`] array on a thread of its own while the writer takes
/// the current one: each [`Prefetch::fill`] asks for the run that follows it.
pub(crate) struct Prefetch<'s> {
    staged: &'s Staged,
    ask: SyncSender<(u64, usize)>,
    got: Receiver<Result<Vec<u8>>>,
    /// The piece asked for and not taken yet (first element, bytes).
    pending: Option<(u64, usize)>,
    elements: u64,
}

impl<'s> Prefetch<'s> {
    /// Runs `write` with a [`Prefetch`] over `staged` (the reading thread lives as long).
    pub(crate) fn run<T>(
        staged: &'s Staged,
        elements: u64,
        write: impl FnOnce(&mut Prefetch<'s>) -> Result<T>,
    ) -> Result<T> {
        let (ask, asked) = sync_channel::<(u64, usize)>(1);
        let (give, got) = sync_channel::<Result<Vec<u8>>>(1);
        std::thread::scope(|scope| {
            scope.spawn(move || {
                for (first, len) in asked {
                    let mut buf = vec![0u8; len];
                    let end = first + len as u64 / staged.item.max(1);
                    let read = staged.read(first, end, &mut buf).map(|()| buf);
                    if give.send(read).is_err() {
                        break;
                    }
                }
            });
            let mut prefetch = Prefetch {
                staged,
                ask,
                got,
                pending: None,
                elements,
            };
            // Dropping the prefetch (its sender) ends the reading thread.
            write(&mut prefetch)
        })
    }

    /// Fills `buf` with the elements from `first` on (MATLAB's order): the piece read ahead
    /// when it is this one, else read now; then asks for the run that follows.
    pub(crate) fn fill(&mut self, first: u64, buf: &mut [u8]) -> Result<()> {
        let item = self.staged.item.max(1);
        let n = buf.len() as u64 / item;
        let mut ready = None;
        if let Some(asked) = self.pending.take() {
            let read = self
                .got
                .recv()
                .map_err(|_| Error::invalid_input("internal: the reading thread stopped"))?;
            // A piece read ahead but not asked for is dropped (its error too).
            if asked == (first, buf.len()) {
                ready = Some(read?);
            }
        }
        match ready {
            Some(piece) => buf.copy_from_slice(&piece),
            None => self.staged.read(first, first + n, buf)?,
        }
        let next = first + n;
        if next < self.elements && n > 0 {
            let len = ((self.elements - next).min(n) * item) as usize;
            if self.ask.send((next, len)).is_ok() {
                self.pending = Some((next, len));
            }
        }
        Ok(())
    }
}

/// The elements of a C-order array of one or two dimensions in MATLAB's order read from the
/// source for each piece (routes [`Route::Stored`] and [`Route::Scatter`]); a scattered
/// array may have more dimensions (each block of rows is put in Fortran order).
pub(crate) struct Columns<'a> {
    src: &'a mut crate::file::File,
    path: &'a str,
    shape: Vec<usize>,
    rows: u64,
    cols: u64,
    item: usize,
    block_bytes: usize,
    /// Where the temporary copy of an `.npz` member goes (the destination's folder).
    folder: &'a Path,
    /// The stored element type.
    dtype: DType,
    /// An `.npz` member's data copied into a temporary file (members are read from their
    /// start: reading rows from the member itself would inflate it again for every block).
    copy: Option<Option<std::fs::File>>,
    /// A text array read as its code units (`mat_text.rs`): the strings' width in units,
    /// and whether the source is 1-d (its rows are strings, not rows of units).
    text: Option<(u64, bool)>,
}

impl<'a> Columns<'a> {
    pub(crate) fn new(
        src: &'a mut crate::file::File,
        path: &'a str,
        info: &ArrayInfo,
        folder: &'a Path,
        sizes: Sizes,
    ) -> Columns<'a> {
        let (rows, cols) = matrix_of(&info.shape);
        Columns {
            path,
            shape: info.shape.clone(),
            rows,
            cols,
            item: info.dtype.itemsize(),
            block_bytes: sizes.block_bytes,
            folder,
            dtype: info.dtype.clone(),
            copy: match src.format() {
                crate::format::Format::Npz => Some(None),
                _ => None,
            },
            src,
            text: None,
        }
    }

    /// The same, the source being a text array of strings `width` units wide read as its
    /// code units (`info` then describes the units: see `mat_text.rs`).
    pub(crate) fn of_text(mut self, width: u64, one_d: bool) -> Columns<'a> {
        self.text = Some((width, one_d));
        self
    }

    /// Rows `lo..hi` of the code units of a text source (stored dtype and C order).
    fn text_rows(&mut self, lo: u64, hi: u64, (width, one_d): (u64, bool)) -> Result<NdArray> {
        let (a, b) = match one_d {
            true => (lo / width.max(1), hi.div_ceil(width.max(1))),
            false => (lo, hi),
        };
        let strings = self
            .src
            .read_array_rows(self.path, a, b)?
            .to_order(Order::C);
        let skip = match one_d {
            true => (lo - a * width) as usize * self.item,
            false => 0,
        };
        let want = (hi - lo) as usize * self.cols as usize * self.item;
        let units = strings.as_bytes().get(skip..skip + want).ok_or_else(|| {
            Error::truncated(format!("the strings of rows {a}..{b} are short"))
                .with_node(self.path.to_string())
        })?;
        let shape: Vec<usize> = std::iter::once((hi - lo) as usize)
            .chain(self.shape[1..].iter().copied())
            .collect();
        NdArray::from_bytes(self.dtype.clone(), &shape, Order::C, units)
    }

    /// Rows `lo..hi` in native byte order and Fortran order (rows of one axis: also C order).
    fn rows(&mut self, lo: u64, hi: u64) -> Result<NdArray> {
        let block = match (self.copy.is_some(), self.text) {
            (true, _) => self.copied_rows(lo, hi)?,
            (false, Some(text)) => self.text_rows(lo, hi, text)?,
            (false, None) => self.src.read_array_rows(self.path, lo, hi)?,
        };
        let want = (hi - lo) as usize * self.cols as usize * self.item;
        if block.nbytes() != want {
            return Err(Error::truncated(format!(
                "rows {lo}..{hi} hold {} bytes, not {want}",
                block.nbytes()
            ))
            .with_node(self.path.to_string()));
        }
        Ok(match block.dtype().is_native() {
            true => block.to_order(Order::F),
            false => block.to_native().to_order(Order::F),
        })
    }

    /// Makes the temporary copy of an `.npz` member's data (`progress` gets the bytes copied
    /// so far) when it is one and not copied yet: `true` when it copied.
    pub(crate) fn copy_member(&mut self, progress: &mut dyn FnMut(u64)) -> Result<bool> {
        use std::io::Write as _;
        let Some(None) = self.copy else {
            return Ok(false);
        };
        let row = self.cols * self.item as u64;
        let io = |e| Error::io("cannot write the temporary copy of the array", e);
        let file = tempfile::tempfile_in(self.folder)
            .map_err(io)
            .map_err(|e| e.with_file(self.folder))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        self.src.copy_array_data(self.path, &mut w, progress)?;
        w.flush().map_err(io)?;
        let file = w.into_inner().map_err(|e| io(e.into_error()))?;
        if file.metadata().map_err(io)?.len() != self.rows * row {
            return Err(
                Error::truncated("the member's data is shorter than its shape")
                    .with_node(self.path.to_string()),
            );
        }
        self.copy = Some(Some(file));
        Ok(true)
    }

    /// Rows `lo..hi` (stored dtype) from the copy of the data, made at the first call.
    fn copied_rows(&mut self, lo: u64, hi: u64) -> Result<NdArray> {
        let row = self.cols * self.item as u64;
        self.copy_member(&mut |_| {})?;
        let Some(Some(file)) = &self.copy else {
            return Err(Error::invalid_input("internal: no copy of the array"));
        };
        let mut bytes = vec![0u8; ((hi - lo) * row) as usize];
        crate::atomic::read_at(file, &mut bytes, lo * row)
            .map_err(|e| Error::io("cannot read the temporary copy of the array", e))?;
        let shape: Vec<usize> = std::iter::once((hi - lo) as usize)
            .chain(self.shape[1..].iter().copied())
            .collect();
        NdArray::from_bytes(self.dtype.clone(), &shape, Order::C, &bytes)
    }

    /// Rows per block read at a time.
    fn block_rows(&self) -> u64 {
        let row_bytes = self.cols as usize * self.item;
        ((self.block_bytes / row_bytes.max(1)).max(1)) as u64
    }

    /// Fills `buf` with the elements from `first` on in MATLAB's order.
    pub(crate) fn fill(&mut self, first: u64, buf: &mut [u8], route: Route) -> Result<()> {
        let item = self.item.max(1);
        let n = (buf.len() / item) as u64;
        let end = first + n;
        if n == 0 {
            return Ok(());
        }
        if route != Route::Stored {
            return self.scatter(first, end, buf);
        }
        // One row or one column: MATLAB's order is the stored order.
        let (lo, hi) = match self.cols {
            1 => (first, end),
            _ => (0, 1),
        };
        let block = self.rows(lo, hi)?;
        let at = match self.cols {
            1 => 0,
            _ => first as usize * item,
        };
        buf.copy_from_slice(&block.as_bytes()[at..at + buf.len()]);
        Ok(())
    }

    /// Elements `first..end` (MATLAB's order), read by blocks of whole rows.
    fn scatter(&mut self, first: u64, end: u64, buf: &mut [u8]) -> Result<()> {
        let (rows, item) = (self.rows, self.item);
        let (j0, j1) = (first / rows, (end - 1) / rows + 1);
        let (lo, hi) = match j1 - j0 {
            1 => (first % rows, (end - 1) % rows + 1),
            _ => (0, rows),
        };
        let per_block = self.block_rows();
        let mut a = lo;
        while a < hi {
            let b = (a + per_block).min(hi);
            // Fortran order: column j of this block holds its rows at j * height.
            let block = self.rows(a, b)?;
            let (bytes, height) = (block.as_bytes(), b - a);
            for j in j0..j1 {
                let from_row = (j * rows).max(first).max(j * rows + a) - j * rows;
                let to_row = ((j + 1) * rows).min(end).min(j * rows + b) - j * rows;
                if from_row >= to_row {
                    continue;
                }
                let from = ((j * height + from_row - a) as usize) * item;
                let to = ((j * rows + from_row - first) as usize) * item;
                let len = ((to_row - from_row) as usize) * item;
                buf[to..to + len].copy_from_slice(&bytes[from..from + len]);
            }
            a = b;
        }
        Ok(())
    }
}

/// `mat_write::stream_array` (here for `mat_text.rs` too), `text` (the strings' width in code units, and whether the source is
/// 1-d) when the source is a text array `info` describes as its code units (`mat_text.rs`).
pub(crate) fn stream_array_of(
    src: &mut crate::file::File,
    (path, text): (&str, Option<(u64, bool)>),
    info: &ArrayInfo,
    sizes: Sizes,
    folder: &Path,
    progress: &mut dyn FnMut(u64),
    write: &mut dyn FnMut(sciio_mat::ArrayPieces<'_>) -> Result<()>,
) -> Result<()> {
    // A bytes array's strings (`mat_text.rs`) go as a numeric array's elements do.
    let kind = numeric_kind(info).or_else(|| {
        let kind = info.dtype.as_scalar()?.kind;
        matches!(kind, ScalarKind::Bytes(_)).then_some(kind)
    });
    let (Some(kind), Some(route)) = (kind, route(info, sizes)) else {
        return Err(Error::invalid_input(
            "internal: an array streamed into MAT without its route",
        ));
    };
    let shape = info.shape.clone();
    let mut done = 0u64;
    let Route::Staged { block_rows, stored } = route else {
        let mut columns = Columns::new(src, path, info, folder, sizes);
        if let Some((width, one_d)) = text {
            columns = columns.of_text(width, one_d);
        }
        // An `.npz` member's copy into its temporary file is the first half of the bytes.
        let (base, share) = match columns.copy_member(&mut |d| progress(d / 2))? {
            true => (info.nbytes() / 2, 2),
            false => (0, 1),
        };
        let mut fill = |first: u64, buf: &mut [u8]| {
            columns.fill(first, buf, route)?;
            done += buf.len() as u64;
            progress(base + done / share);
            Ok(())
        };
        let fill = &mut fill;
        return write(sciio_mat::ArrayPieces { kind, shape, fill });
    };
    let how = (block_rows, stored, sizes.block_bytes);
    let (staged, copied) = stage(src, path, info, how, folder, &mut |d| progress(d / 2))?;
    let (base, share) = match copied {
        true => (info.nbytes() / 2, 2),
        false => (0, 1),
    };
    let elements = info.nbytes() / info.dtype.itemsize().max(1) as u64;
    Prefetch::run(&staged, elements, |prefetch| {
        let mut fill = |first: u64, buf: &mut [u8]| {
            prefetch.fill(first, buf)?;
            done += buf.len() as u64;
            progress(base + done / share);
            Ok(())
        };
        let fill = &mut fill;
        write(sciio_mat::ArrayPieces { kind, shape, fill })
    })
}

/// The element kind of `info` when it is one MATLAB numeric classes hold, else `None`.
pub(crate) fn numeric_kind(info: &ArrayInfo) -> Option<ScalarKind> {
    let kind = info.dtype.as_scalar()?.kind;
    (sciio_mat::MatClass::of_kind(kind).is_some()
        && sciio_mat::no_class_reason(&info.dtype).is_none())
    .then_some(kind)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write as _;

    /// An array of `shape` (values that tell every element apart) in `order`.
    pub(crate) fn array(shape: &[usize], order: Order) -> NdArray {
        let n: usize = shape.iter().product();
        let values: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 3.0).collect();
        NdArray::from_vec(values, shape).unwrap().to_order(order)
    }

    /// How a test streams an array into an open MAT output (`write_streamed_with`,
    /// `write_records_streamed`...): given the source, the array's path and info and the
    /// progress callback, `Ok(true)` when it streamed.
    pub(crate) type StreamInto<'a> = dyn FnMut(
            &mut crate::mat_write::MatOut,
            &mut crate::file::File,
            &str,
            &ArrayInfo,
            &mut dyn FnMut(u64),
        ) -> Result<bool>
        + 'a;

    /// `a` written as variable `name` in MAT `version` whole (`d/whole.mat`) and by `stream`
    /// from its `.npy` (or deflated `.npz` member, `npz`) (`d/streamed.mat`), and the
    /// progress the streamed write reported; fails when it did not stream.
    pub(crate) fn whole_and_streamed(
        d: &Path,
        (name, a): (&str, &NdArray),
        version: crate::options::MatOutVersion,
        npz: bool,
        stream: &mut StreamInto<'_>,
    ) -> (std::path::PathBuf, std::path::PathBuf, Vec<u64>) {
        use crate::mat_write::MatOut;
        let whole = d.join("whole.mat");
        let mut out = MatOut::create(&whole, None, version).unwrap();
        out.write(name, a).unwrap();
        out.finish(&whole).unwrap();
        let (mut file, at) = saved(d, a, npz);
        let info = ArrayInfo::of(a);
        let streamed = d.join("streamed.mat");
        let mut out = MatOut::create(&streamed, None, version).unwrap();
        let mut reported = Vec::new();
        let done = stream(&mut out, &mut file, &at, &info, &mut |n| reported.push(n)).unwrap();
        assert!(done, "{version:?} npz {npz}: not streamed");
        out.finish(&streamed).unwrap();
        (whole, streamed, reported)
    }

    /// `a` saved as `x.npy`, or as member `x` of a deflated `x.npz` (`npz`), opened.
    pub(crate) fn saved(dir: &Path, a: &NdArray, npz: bool) -> (crate::file::File, String) {
        let mut npy = Vec::new();
        sciio_npy::write_array(&mut npy, a).unwrap();
        let path = match npz {
            false => {
                let p = dir.join("x.npy");
                std::fs::write(&p, &npy).unwrap();
                p
            }
            true => {
                let p = dir.join("x.npz");
                let mut zip = sciio_zip::ZipWriter::create(&p).unwrap();
                let mut member = zip.start_member("x.npy").unwrap();
                member.write_all(&npy).unwrap();
                member.finish().unwrap();
                zip.finish().unwrap();
                p
            }
        };
        let file = crate::file::File::open(&path).unwrap();
        let at = file.single_array_path(None).unwrap();
        (file, at)
    }

    /// The elements in MATLAB's order the array's route gives, asked in pieces of `piece`
    /// elements (the last shorter), in order; and the route.
    fn pieces(dir: &Path, a: &NdArray, npz: bool, sizes: Sizes, piece: u64) -> (Vec<u8>, Route) {
        let (mut file, at) = saved(dir, a, npz);
        let info = ArrayInfo::of(a);
        let route = route(&info, sizes).expect("a route");
        let item = a.dtype().itemsize() as u64;
        let n = a.len() as u64;
        let mut out = vec![0u8; (n * item) as usize];
        let mut staged_progress = Vec::new();
        let mut each = |fill: &mut dyn FnMut(u64, &mut [u8]) -> Result<()>| {
            let mut first = 0;
            while first < n {
                let end = (first + piece).min(n);
                fill(
                    first,
                    &mut out[(first * item) as usize..(end * item) as usize],
                )
                .unwrap();
                first = end;
            }
        };
        match route {
            Route::Staged { block_rows, stored } => {
                let how = (block_rows, stored, sizes.block_bytes);
                let (staged, _) = stage(&mut file, &at, &info, how, dir, &mut |d| {
                    staged_progress.push(d)
                })
                .unwrap();
                Prefetch::run(&staged, n, |p| {
                    each(&mut |first, buf| p.fill(first, buf));
                    // A piece out of order (not the one read ahead) is read as asked.
                    let mut again = vec![0u8; item as usize];
                    p.fill(n / 3, &mut again)?;
                    let want = a.to_native().to_order(Order::F);
                    let at = (n / 3 * item) as usize;
                    assert_eq!(again, want.as_bytes()[at..at + item as usize]);
                    Ok(())
                })
                .unwrap();
            }
            _ => {
                let mut columns = Columns::new(&mut file, &at, &info, dir, sizes);
                each(&mut |first, buf| columns.fill(first, buf, route));
            }
        }
        assert!(staged_progress.windows(2).all(|w| w[0] <= w[1]));
        (out, route)
    }

    pub(crate) fn sizes(block_bytes: usize, transpose_from: u64) -> Sizes {
        Sizes {
            pieces_from: 0,
            block_bytes,
            transpose_from,
        }
    }

    /// Every route gives the array's Fortran-order bytes (what the whole array's MAT variable
    /// holds), whatever the pieces, in any number of dimensions, from `.npy` and `.npz`.
    #[test]
    fn every_route_gives_matlab_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let staged = |block_rows, stored| Route::Staged { block_rows, stored };
        let cases: Vec<(Vec<usize>, Order, Sizes, Route)> = vec![
            // C order, 3-d and 4-d: blocks of two rows transposed; or scattered when small.
            (
                vec![7, 5, 6],
                Order::C,
                sizes(2 * 30 * 8, 0),
                staged(2, false),
            ),
            (
                vec![4, 3, 2, 5],
                Order::C,
                sizes(30 * 8, 0),
                staged(1, false),
            ),
            (
                vec![7, 5, 6],
                Order::C,
                sizes(2 * 30 * 8, u64::MAX),
                Route::Scatter,
            ),
            (
                vec![9, 4],
                Order::C,
                sizes(3 * 4 * 8, u64::MAX),
                Route::Scatter,
            ),
            // Fortran order, any dimensions: the stored bytes.
            (vec![7, 5, 6], Order::F, sizes(8, 0), staged(7, true)),
            (vec![6, 11], Order::F, sizes(1 << 20, 0), staged(6, true)),
            // Rows over a block, 2-d: one row a block, as stored.
            (vec![3, 40], Order::C, sizes(100, 0), staged(1, true)),
            // Rows of several axes over a block: one row a block, each staged on its own as
            // blocks of its rows (one, or four then two), or of rows of one axis as stored,
            // or rows of rows over a block again (4-d).
            (vec![3, 4, 5], Order::C, sizes(6 * 8, 0), staged(1, false)),
            (
                vec![5, 6, 7],
                Order::C,
                sizes(4 * 7 * 8, 0),
                staged(1, false),
            ),
            (vec![3, 4, 50], Order::C, sizes(100, 0), staged(1, false)),
            (
                vec![3, 4, 5, 6],
                Order::C,
                sizes(7 * 8, 0),
                staged(1, false),
            ),
            (
                vec![2, 3, 4, 5, 2],
                Order::C,
                sizes(3 * 8, 0),
                staged(1, false),
            ),
            // One column, one row, 1-d: read as stored.
            (vec![50], Order::C, sizes(16, 0), Route::Stored),
            (vec![1, 50], Order::C, sizes(1 << 20, 0), Route::Stored),
        ];
        for (shape, order, sizes, want_route) in cases {
            let a = array(&shape, order);
            let want = a.to_order(Order::F);
            for npz in [false, true] {
                for piece in [1, 7, 64, 1000] {
                    let (got, route) = pieces(d, &a, npz, sizes, piece);
                    assert_eq!(route, want_route, "{shape:?} {order:?}");
                    assert!(
                        got == want.as_bytes(),
                        "{shape:?} {order:?} npz {npz} pieces of {piece}"
                    );
                }
            }
        }
    }

    /// Big-endian data is staged in native byte order.
    #[test]
    fn big_endian_data_is_staged_native() {
        let dir = tempfile::tempdir().unwrap();
        let a = array(&[6, 5, 4], Order::F);
        let be = NdArray::from_bytes(
            DType::scalar(ScalarKind::Float(8)).with_order(sciio_core::ByteOrder::Big),
            a.shape(),
            Order::F,
            &a.as_bytes()
                .chunks_exact(8)
                .flat_map(|c| c.iter().rev().copied())
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let (got, route) = pieces(dir.path(), &be, false, sizes(8, 0), 13);
        assert_eq!(
            route,
            Route::Staged {
                block_rows: 6,
                stored: true
            }
        );
        assert!(got == a.as_bytes());
        // C order, rows of several axes over a block: each row put in Fortran order, native.
        let c = be.to_order(Order::C);
        let (got, route) = pieces(dir.path(), &c, true, sizes(4 * 8, 0), 13);
        assert_eq!(
            route,
            Route::Staged {
                block_rows: 1,
                stored: false
            }
        );
        assert!(got == a.as_bytes());
    }

    /// C-order arrays of three or more dimensions whose rows are over a block are blocks of
    /// one row put in Fortran order (not read whole); of two, blocks of one row as stored.
    #[test]
    fn wide_rows_of_several_axes_are_staged_a_row_a_block() {
        let info = ArrayInfo::of(&array(&[3, 4, 5], Order::C));
        assert_eq!(
            route(&info, sizes(8, 0)),
            Some(Route::Staged {
                block_rows: 1,
                stored: false
            })
        );
        let info = ArrayInfo::of(&array(&[3, 20], Order::C));
        assert_eq!(
            route(&info, sizes(8, 0)),
            Some(Route::Staged {
                block_rows: 1,
                stored: true
            })
        );
    }
}
