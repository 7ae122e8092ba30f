//! Conversions in bounded memory: an array (or table) moves in batches of whole rows, read on
//! one thread and handed to the writer on another through a bounded channel, so reading and
//! writing overlap and memory holds a few batches whatever the data's size.
//!
//! - any array leaf (`.npy`, npz member, HDF5, MAT) → `.h5`: the node is created at its full
//!   size (sizes are known up front) and filled slab by slab ([`write_h5_leaf`]); a `.npy`
//!   into an uncompressed CArray or Table is copied file to file into chunks allocated up
//!   front (`copy_file_range`: the bytes do not pass through this process);
//! - a 1-d structured array or an n-d array → `.parquet`: batches become record batches,
//!   row groups of about [`ROW_GROUP_BYTES`] encoded on a third thread (columns in parallel),
//!   or a folder of Parquet files of `partition_rows` rows each ([`array_to_parquet`]);
//! - `.parquet` → `.h5`: row group by row group into a Table ([`frame_to_h5`]); into `.npy`
//!   and `.npz`, see `frame_numpy.rs`; MAT v7.3 numeric matrices into `.npy`/`.npz`, see
//!   `sciio_mat::MatFile::copy_plain_data`.
//!
//! Rows larger than a batch ([`BATCH_BYTES`]) move in pieces where the formats allow:
//! HDF5 sources hand them as hyperslabs of sub-rows (`hdf5.rs`), `.h5` nodes take them in
//! pieces (`NodeFill::append_elements`), MAT matrices and N-d arrays are gathered a piece of
//! a row at a time ([`for_each_transposed_piece`]; more than 8 rows transposed
//! as they are copied, [`row_major_copy`]); a Parquet row is one list value, whole.
//!
//! Arrays whose rows are not contiguous in the source (Fortran order) and 0-d arrays are read
//! whole, as before.

use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use sciio_core::{Error, Result};

use crate::file::File;
#[cfg(any(feature = "hdf5", feature = "parquet"))]
use crate::node::ArrayInfo;

/// Bytes of one batch of rows moved between the reader and the writer.
pub(crate) const BATCH_BYTES: usize = 8 << 20;

/// Batches in flight between the reader thread and the writer.
const IN_FLIGHT: usize = 2;

/// [`ArrayInfo::row_ordered`]: the array streams by rows.
#[cfg(any(feature = "hdf5", feature = "parquet"))]
pub(crate) fn row_ordered(info: &ArrayInfo) -> bool {
    info.row_ordered()
}

/// [`ArrayInfo::row_bytes`].
#[cfg(any(feature = "hdf5", feature = "parquet"))]
pub(crate) fn row_bytes(info: &ArrayInfo) -> usize {
    info.row_bytes()
}

/// Rows per batch for rows of `row_bytes` bytes.
#[cfg(any(feature = "hdf5", feature = "parquet"))]
pub(crate) fn batch_rows(row_bytes: usize) -> usize {
    (BATCH_BYTES / row_bytes.max(1)).max(1)
}

/// Reads the data of the array at `path` (its stored dtype, C order) on a thread of its own
/// and calls `consume` here with each batch of `batch_rows` whole rows (the last one shorter),
/// in order. At most [`IN_FLIGHT`] batches wait between the two; a failing `consume` stops the
/// reader. `row_bytes` of 0 (no data) calls nothing.
pub(crate) fn for_each_batch(
    src: &mut File,
    path: &str,
    row_bytes: usize,
    batch_rows: usize,
    consume: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    if row_bytes == 0 {
        return Ok(());
    }
    let batch_bytes = row_bytes.saturating_mul(batch_rows.max(1));
    let (full_tx, full_rx) = sync_channel::<Vec<u8>>(IN_FLIGHT);
    let (spare_tx, spare_rx) = sync_channel::<Vec<u8>>(IN_FLIGHT + 2);
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            // Sources that read into a given buffer hand each batch over as it was read.
            let mut stopped = false;
            // In blocks of about the batch's bytes: the source's rows need not be the
            // caller's (batches of elements).
            let direct = src.for_each_array_block(
                path,
                batch_bytes,
                &mut || spare_rx.try_recv().unwrap_or_default(),
                &mut |batch| {
                    full_tx.send(batch).map_err(|_| {
                        stopped = true;
                        Error::invalid_input("internal: the writer stopped")
                    })
                },
            );
            match direct {
                Ok(true) => return (Ok(()), false),
                Err(e) => return (Err(e), stopped),
                Ok(false) => {}
            }
            let mut sink = Batcher {
                full: full_tx,
                spare: spare_rx,
                buf: Vec::with_capacity(batch_bytes),
                batch_bytes,
                stopped: false,
            };
            let read = src.copy_array_data(path, &mut sink, &mut |_| {});
            let stopped = sink.stopped;
            let last = if read.is_ok() && !sink.buf.is_empty() {
                sink.send()
                    .map_err(|e| Error::io("cannot hand over the last rows", e))
            } else {
                Ok(())
            };
            (read.and(last), stopped)
        });
        let mut consumed = Ok(());
        for batch in full_rx.iter() {
            if consumed.is_ok() {
                consumed = consume(&batch);
            }
            if consumed.is_err() {
                // Dropping the receiver stops the reader at its next batch.
                break;
            }
            // Handed back with its bytes: a direct read overwrites them all (no zeroing);
            // the Batcher clears it before filling it.
            let _ = spare_tx.try_send(batch);
        }
        drop(full_rx);
        let (read, stopped) = reader
            .join()
            .map_err(|_| Error::invalid_input("internal: the reader thread panicked"))?;
        // The writer's error explains a reader stopped by it.
        consumed?;
        if stopped {
            return Err(Error::invalid_input("internal: the writer stopped"));
        }
        read
    })
}

/// The reader's end: gathers the bytes `copy_array_data` writes into batches of whole rows.
struct Batcher {
    full: SyncSender<Vec<u8>>,
    spare: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    batch_bytes: usize,
    /// The writer went away (it failed): reading stops.
    stopped: bool,
}

impl Batcher {
    fn send(&mut self) -> io::Result<()> {
        let next = match self.spare.try_recv() {
            Ok(mut spare) => {
                spare.clear();
                spare
            }
            Err(_) => Vec::with_capacity(self.batch_bytes),
        };
        let full = std::mem::replace(&mut self.buf, next);
        self.full.send(full).map_err(|_| {
            self.stopped = true;
            io::Error::other("the writer stopped")
        })
    }
}

impl Write for Batcher {
    fn write(&mut self, mut data: &[u8]) -> io::Result<usize> {
        let n = data.len();
        while !data.is_empty() {
            let take = (self.batch_bytes - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buf.len() >= self.batch_bytes {
                self.send()?;
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes the array at `path` of `src` as node `name` of `out`, batch by batch; `false` (and
/// nothing written) when it does not stream by rows ([`row_ordered`]).
#[cfg(feature = "hdf5")]
pub(crate) fn write_h5_leaf(
    src: &mut File,
    path: &str,
    info: &ArrayInfo,
    out: &mut crate::h5write::H5Out,
    name: &str,
    progress: &mut dyn FnMut(u64),
) -> Result<bool> {
    // Rows of no bytes (a dimension of 0 past the first) have nothing to stream.
    if !row_ordered(info) || row_bytes(info) == 0 {
        return Ok(false);
    }
    let mut fill = out.start(name, info)?;
    let row = row_bytes(info);
    if copy_h5_leaf(src, path, info, &mut fill, progress)
        .map_err(|e| e.with_node(name.to_string()))?
    {
        fill.finish().map_err(|e| e.with_node(name.to_string()))?;
        return Ok(true);
    }
    let mut done = 0u64;
    // An array whose rows are over a batch moves in batches of elements, pieces of a row
    // (a table's row is one record: whole).
    let (unit, per_batch) = match info.shape.len() >= 2 && row > BATCH_BYTES {
        true => {
            let item = info.dtype.itemsize().max(1);
            (item, BATCH_BYTES / item)
        }
        false => (row, batch_rows(row)),
    };
    for_each_batch(src, path, unit, per_batch, &mut |batch| {
        fill.append_elements(batch)
            .map_err(|e| e.with_node(name.to_string()))?;
        done += batch.len() as u64;
        progress(done);
        Ok(())
    })?;
    fill.finish().map_err(|e| e.with_node(name.to_string()))?;
    Ok(true)
}

/// Fortran-order arrays from this size on stream through a temporary file
/// ([`for_each_transposed_batch`]); smaller ones are read whole.
#[cfg(any(feature = "hdf5", feature = "parquet"))]
const TRANSPOSE_FROM: u64 = 16 << 20;

/// Whether the array is a Fortran-order array of scalars of two or more dimensions (a MAT
/// matrix or N-d array, a Fortran-order `.npy`) large enough to stream by
/// [`for_each_transposed_batch`].
#[cfg(any(feature = "hdf5", feature = "parquet"))]
pub(crate) fn transposable(info: &ArrayInfo) -> bool {
    info.shape.len() >= 2
        && info.order == sciio_core::Order::F
        && !row_ordered(info)
        && info.dtype.as_scalar().is_some()
        && info.nbytes() >= TRANSPOSE_FROM
}

/// Calls `consume` with each block of `batch_rows` rows (C order, the last block shorter) of
/// the [`transposable`] array at `path` of `src`, in bounded memory: its stored column-major
/// bytes are first copied, as the source streams them, into an unnamed temporary file in
/// `folder` (`copied` gets the bytes copied so far), from which each block of rows is then
/// gathered column by column on a thread of its own while `consume` takes the one before.
/// Column `c` is the Fortran-order index of the trailing axes: its run of rows `a..b` is
/// one read, its place in a C-order row that index's C-order one.
#[cfg(any(feature = "hdf5", feature = "parquet"))]
pub(crate) fn for_each_transposed_batch(
    src: &mut File,
    path: &str,
    info: &ArrayInfo,
    folder: &std::path::Path,
    batch_rows: usize,
    copied: &mut dyn FnMut(u64),
    consume: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let temp = column_major_copy(src, path, info, folder, copied)?;
    let gather = Gather::new(&temp, info);
    let (full_tx, full_rx) = sync_channel::<Result<Vec<u8>>>(1);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut a = 0;
            while a < gather.rows {
                let b = (a + batch_rows.max(1) as u64).min(gather.rows);
                let block = gather.rows(a, b);
                let failed = block.is_err();
                if full_tx.send(block).is_err() || failed {
                    return;
                }
                a = b;
            }
        });
        let mut consumed = Ok(());
        for block in full_rx.iter() {
            consumed = block.and_then(|block| consume(&block));
            if consumed.is_err() {
                // Dropping the receiver stops the gathering thread at its next block.
                break;
            }
        }
        consumed
    })
}

/// The stored column-major bytes of the [`transposable`] array at `path` of `src`, copied
/// as the source streams them into an unnamed temporary file in `folder` (`copied` gets the
/// bytes copied so far).
#[cfg(any(feature = "hdf5", feature = "parquet"))]
fn column_major_copy(
    src: &mut File,
    path: &str,
    info: &ArrayInfo,
    folder: &std::path::Path,
    copied: &mut dyn FnMut(u64),
) -> Result<std::fs::File> {
    if info.shape.len() < 2 {
        return Err(Error::invalid_input("internal: not an array of rows"));
    }
    let io = |e| Error::io("cannot write the temporary file of the transposed array", e);
    let temp = tempfile::tempfile_in(folder)
        .map_err(io)
        .map_err(|e| e.with_file(folder))?;
    let mut w = io::BufWriter::with_capacity(1 << 20, temp);
    src.copy_array_data(path, &mut w, copied)?;
    let temp = w.into_inner().map_err(|e| io(e.into_error()))?;
    let length = temp.metadata().map_err(io)?.len();
    if length != info.nbytes() {
        return Err(Error::truncated(format!(
            "the array's data is {length} bytes, not the {} its shape and dtype make",
            info.nbytes()
        ))
        .with_node(path.to_string()));
    }
    Ok(temp)
}

/// Sizes that decide how [`for_each_transposed_piece`] gathers pieces of rows (the
/// constants in conversions, small ones in tests).
#[cfg(feature = "hdf5")]
#[derive(Clone, Copy, Debug)]
struct PieceSizes {
    /// Bytes of a piece of a row, at most.
    piece: usize,
    /// Bytes read at a time ([`GATHER_WINDOW`]); also the buffer of the transposing copy.
    window: u64,
    /// Rows up to which pieces are picked out of the columns read whole
    /// ([`PIECE_WHOLE_ROWS`]); more rows are transposed as they are copied.
    whole_rows: u64,
}

#[cfg(feature = "hdf5")]
impl PieceSizes {
    const CONVERT: PieceSizes = PieceSizes {
        piece: BATCH_BYTES,
        window: GATHER_WINDOW,
        whole_rows: PIECE_WHOLE_ROWS,
    };
}

/// Calls `consume` with the C-order rows of the [`transposable`] array (two or more axes)
/// at `path` of `src` in pieces of at most `sizes.piece` bytes (C-order runs of a row, the
/// rows in turn, [`RowCut`]): what [`for_each_transposed_batch`] gives in blocks of whole
/// rows, for rows too large to hold. The pieces are gathered on a thread of their own
/// while `consume` takes the one before, from a temporary file in `folder`:
/// - up to `sizes.whole_rows` rows, the stored column-major bytes ([`column_major_copy`]),
///   each piece picked out of runs of whole columns (the file read once per row);
/// - more rows, the rows one after the other, each in the Fortran order of its own axes
///   ([`row_major_copy`]: the columns transposed as they are copied), so that a piece of a
///   row is runs of that row alone (a read per element was about 1 µs: ~8 MB/s).
#[cfg(feature = "hdf5")]
fn for_each_transposed_piece(
    src: &mut File,
    path: &str,
    info: &ArrayInfo,
    folder: &std::path::Path,
    sizes: PieceSizes,
    copied: &mut dyn FnMut(u64),
    consume: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    if info.shape.len() < 2 {
        return Err(Error::invalid_input("internal: not an array of rows"));
    }
    let rows = info.shape[0] as u64;
    let by_rows = rows > sizes.whole_rows;
    let temp = match by_rows {
        true => row_major_copy(src, path, info, folder, sizes.window, copied)?,
        false => column_major_copy(src, path, info, folder, copied)?,
    };
    let (full_tx, full_rx) = sync_channel::<Result<Vec<u8>>>(1);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut run = Vec::new();
            for a in 0..rows {
                // A row of the row-major copy is an array of one row of its own.
                let (gather, row) = match by_rows {
                    true => (Gather::row_of(&temp, info, a), 0),
                    false => (Gather::new(&temp, info), a),
                };
                let gather = Gather {
                    window: sizes.window,
                    ..gather
                };
                let cut = gather.row_cut(sizes.piece);
                for piece in cut.pieces(&gather.trailing) {
                    let piece = gather.row_piece(row, cut, piece, &mut run);
                    let failed = piece.is_err();
                    if full_tx.send(piece).is_err() || failed {
                        return;
                    }
                }
            }
        });
        let mut consumed = Ok(());
        for piece in full_rx.iter() {
            consumed = piece.and_then(|piece| consume(&piece));
            if consumed.is_err() {
                // Dropping the receiver stops the gathering thread at its next piece.
                break;
            }
        }
        consumed
    })
}

/// The data of the [`transposable`] array at `path` of `src` as its rows one after the
/// other, each in the Fortran order of its own axes (for a matrix: C order), in an unnamed
/// temporary file in `folder` (`copied` gets the bytes copied so far): the stored
/// column-major bytes are taken about `window` bytes of whole columns at a time and each
/// row's part of them written where it goes, one write per row ([`RowMajor`]).
#[cfg(feature = "hdf5")]
fn row_major_copy(
    src: &mut File,
    path: &str,
    info: &ArrayInfo,
    folder: &std::path::Path,
    window: u64,
    copied: &mut dyn FnMut(u64),
) -> Result<std::fs::File> {
    if info.shape.len() < 2 {
        return Err(Error::invalid_input("internal: not an array of rows"));
    }
    let io = |e| Error::io("cannot write the temporary file of the transposed array", e);
    let temp = tempfile::tempfile_in(folder)
        .map_err(io)
        .map_err(|e| e.with_file(folder))?;
    let rows = info.shape[0] as u64;
    let columns = info.shape[1..].iter().map(|&d| d as u64).product::<u64>();
    let mut w = RowMajor::new(&temp, rows, columns, info.dtype.itemsize() as u64, window);
    src.copy_array_data(path, &mut w, copied)?;
    w.finish().map_err(io)?;
    if w.elements != rows * columns {
        return Err(Error::truncated(format!(
            "the array's data is {} bytes, not the {} its shape and dtype make",
            w.elements * w.item,
            info.nbytes()
        ))
        .with_node(path.to_string()));
    }
    Ok(temp)
}

/// Column-major bytes (`rows` elements per column) in, written to `file` as rows: element
/// `(a, j)` at `(a * columns + j) * item`. Whole columns are held up to a window's bytes
/// (a piece of one column if a column is larger); each row's elements among them are one
/// run, one write.
#[cfg(feature = "hdf5")]
struct RowMajor<'f> {
    file: &'f std::fs::File,
    rows: u64,
    columns: u64,
    item: u64,
    /// The column-major bytes held, from element `elements` on.
    held: Vec<u8>,
    /// Bytes held before they are written out.
    hold: usize,
    /// Elements written out so far.
    elements: u64,
    /// One row's run, gathered from the held bytes.
    run: Vec<u8>,
}

#[cfg(feature = "hdf5")]
impl<'f> RowMajor<'f> {
    fn new(file: &'f std::fs::File, rows: u64, columns: u64, item: u64, window: u64) -> Self {
        let item = item.max(1);
        let column = rows.saturating_mul(item).max(1);
        // Whole columns while one fits the window, else a window's elements of one.
        let hold = match column <= window {
            true => (window / column) * column,
            false => (window / item).max(1) * item,
        };
        let hold = usize::try_from(hold).unwrap_or(usize::MAX);
        RowMajor {
            file,
            rows,
            columns,
            item,
            held: Vec::with_capacity(hold),
            hold,
            elements: 0,
            run: Vec::new(),
        }
    }

    /// Writes the held elements where their rows go.
    fn write_out(&mut self) -> io::Result<()> {
        let item = self.item as usize;
        let n = (self.held.len() / item) as u64;
        if n == 0 {
            return Ok(());
        }
        if self.elements + n > self.rows.saturating_mul(self.columns) {
            return Err(io::Error::other("more data than the array's shape holds"));
        }
        // Element e (column-major) is row e % rows of column e / rows: the held elements
        // of one row are every `rows`-th one from its first.
        let rows = self.rows as usize;
        for r in 0..rows.min(n as usize) {
            let e = self.elements + r as u64;
            let (a, j) = (e % self.rows, e / self.rows);
            self.run.clear();
            for value in self.held[r * item..].chunks(item).step_by(rows) {
                self.run.extend_from_slice(value);
            }
            crate::atomic::write_at(self.file, &self.run, (a * self.columns + j) * self.item)?;
        }
        self.elements += n;
        self.held.clear();
        Ok(())
    }

    /// Writes out what is held; a part of an element left over is an error.
    fn finish(&mut self) -> io::Result<()> {
        if !self.held.len().is_multiple_of(self.item as usize) {
            return Err(io::Error::other("the data ends inside an element"));
        }
        self.write_out()
    }
}

#[cfg(feature = "hdf5")]
impl Write for RowMajor<'_> {
    fn write(&mut self, mut data: &[u8]) -> io::Result<usize> {
        let n = data.len();
        while !data.is_empty() {
            let take = (self.hold - self.held.len()).min(data.len());
            self.held.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.held.len() >= self.hold {
                self.write_out()?;
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Bytes of whole columns [`Gather::rows`] reads at a time.
#[cfg(any(feature = "hdf5", feature = "parquet"))]
const GATHER_WINDOW: u64 = 8 << 20;

/// Up to this many rows, a piece of a row is picked out of its columns read whole
/// ([`Gather::row_piece`]): the file read once per row. With more rows, reading every row
/// of the columns for each row costs more than transposing the columns once as they are
/// copied ([`row_major_copy`]): MATLAB 12-by-1.1M double -> .h5 in 1.4-1.9 s transposed vs
/// 2.3 s from the columns, 70-by-1.1M in 2.5 vs 5.0 s (release, load 5-8).
#[cfg(feature = "hdf5")]
const PIECE_WHOLE_ROWS: u64 = 8;

/// About what one positioned read of a temporary file costs (page cache), in nanoseconds,
/// and the bytes it copies per nanosecond: what [`Gather::row_cut`] weighs.
#[cfg(feature = "hdf5")]
const READ_NS: f64 = 1000.0;
#[cfg(feature = "hdf5")]
const COPY_BYTES_PER_NS: f64 = 4.0;

/// How a C-order row of the trailing axes is cut into pieces: each piece is the indices
/// `p..q` (at most `step` of them) of axis `axis` of the row, the axes before it fixed and
/// the axes after it whole, so a C-order run of the row. For each index of the axes after
/// `axis` the piece's elements are columns `stride` apart; `group` such indices (their
/// runs `stride * dims[axis]` columns apart) are one read.
#[cfg(feature = "hdf5")]
#[derive(Clone, Copy, Debug)]
struct RowCut {
    axis: usize,
    step: u64,
    group: u64,
}

/// One piece of a row ([`RowCut`]): `prefix`, the C-order index of the axes before the cut
/// axis, and `p..q` along it.
#[cfg(feature = "hdf5")]
#[derive(Clone, Copy, Debug)]
struct Piece {
    prefix: u64,
    p: u64,
    q: u64,
}

#[cfg(feature = "hdf5")]
impl RowCut {
    /// The pieces of a row of shape `dims`, in C order.
    fn pieces(self, dims: &[u64]) -> impl Iterator<Item = Piece> {
        let prefixes = dims[..self.axis].iter().product::<u64>();
        let length = dims.get(self.axis).copied().unwrap_or(0);
        let step = self.step.max(1);
        (0..prefixes).flat_map(move |prefix| {
            (0..length.div_ceil(step)).map(move |k| Piece {
                prefix,
                p: k * step,
                q: ((k + 1) * step).min(length),
            })
        })
    }
}

/// Blocks of C-order rows, or pieces of one, gathered from the Fortran-order bytes of an
/// array in a file.
#[cfg(any(feature = "hdf5", feature = "parquet"))]
struct Gather<'f> {
    file: &'f std::fs::File,
    /// Where the array starts in the file.
    base: u64,
    rows: u64,
    /// The trailing axes (a row's shape).
    trailing: Vec<u64>,
    item: u64,
    /// Bytes of whole columns read at a time ([`GATHER_WINDOW`], smaller in tests).
    window: u64,
}

#[cfg(any(feature = "hdf5", feature = "parquet"))]
impl<'f> Gather<'f> {
    fn new(file: &'f std::fs::File, info: &ArrayInfo) -> Gather<'f> {
        Gather {
            file,
            base: 0,
            rows: info.shape[0] as u64,
            trailing: info.shape[1..].iter().map(|&d| d as u64).collect(),
            item: info.dtype.itemsize() as u64,
            window: GATHER_WINDOW,
        }
    }

    /// Row `a` of a [`row_major_copy`] of the array: an array of that one row.
    #[cfg(feature = "hdf5")]
    fn row_of(file: &'f std::fs::File, info: &ArrayInfo, a: u64) -> Gather<'f> {
        let gather = Gather::new(file, info);
        let row = gather.trailing.iter().product::<u64>() * gather.item;
        Gather {
            base: a * row,
            rows: 1,
            ..gather
        }
    }

    /// How a row is cut into pieces of at most `piece_bytes` ([`RowCut`]): along the axis
    /// whose pieces cost least to gather ([`Gather::cut_along`]), among those one index of
    /// which fits a piece.
    #[cfg(feature = "hdf5")]
    fn row_cut(&self, piece_bytes: usize) -> RowCut {
        let last = self.trailing.len().saturating_sub(1);
        (0..self.trailing.len())
            .filter_map(|m| self.cut_along(m, piece_bytes))
            .min_by(|x, y| x.1.total_cmp(&y.1))
            .map_or(
                RowCut {
                    axis: last,
                    step: 1,
                    group: 1,
                },
                |(cut, _)| cut,
            )
    }

    /// The cut along axis `m` and its cost in nanoseconds per element (a read, about
    /// [`READ_NS`], for each `group * step` elements, plus the bytes read for them, every
    /// row of each column from the first to the last, at about [`COPY_BYTES_PER_NS`]);
    /// `None` when one index of `m` does not fit a piece. The columns one read covers are
    /// at most a window where they can be: the indices after `m` read one at a time or as
    /// many as a window holds, whichever costs less.
    #[cfg(feature = "hdf5")]
    fn cut_along(&self, m: usize, piece_bytes: usize) -> Option<(RowCut, f64)> {
        let dims = &self.trailing;
        let item = self.item.max(1);
        let after = dims[m + 1..].iter().product::<u64>();
        let per_piece = piece_bytes as u64 / (after * item).max(1);
        if per_piece == 0 {
            return None;
        }
        let column = self.rows * item;
        let window = (self.window / column.max(1)).max(1);
        // The indices of `m` one run covers, `stride` columns apart; runs `next` apart.
        let stride = dims[..m].iter().product::<u64>().max(1);
        let step = per_piece.min((window - 1) / stride + 1).min(dims[m]).max(1);
        let (one, next) = ((step - 1) * stride + 1, stride * dims[m]);
        let cost = |group: u64| {
            let elements = (group * step) as f64;
            let columns = (group - 1) * next + one;
            READ_NS / elements + (columns * column) as f64 / elements / COPY_BYTES_PER_NS
        };
        let most = (window.saturating_sub(one) / next + 1).clamp(1, after.max(1));
        let group = match cost(most) < cost(1) {
            true => most,
            false => 1,
        };
        Some((
            RowCut {
                axis: m,
                step,
                group,
            },
            cost(group),
        ))
    }

    /// Row `a`'s piece `piece` of the cut `cut` ([`Gather::row_cut`]), C order. For each
    /// index of the axes after the cut one, its elements are columns `stride` apart: one
    /// read of the columns from the first to the last (every row of each), row `a` picked
    /// out. `run` is kept from piece to piece: resized, not zeroed again.
    #[cfg(feature = "hdf5")]
    fn row_piece(&self, a: u64, cut: RowCut, piece: Piece, run: &mut Vec<u8>) -> Result<Vec<u8>> {
        let dims = &self.trailing;
        let (m, item) = (cut.axis, self.item as usize);
        let (Some(&length), true) = (dims.get(m), piece.p < piece.q) else {
            return Err(Error::invalid_input("internal: no such piece of a row"));
        };
        // Fortran strides of the axes before the cut one: the prefix's first column.
        let mut first = 0u64;
        let (mut rest, mut stride) = (piece.prefix, 1u64);
        let mut strides = Vec::with_capacity(m);
        for &n in &dims[..m] {
            strides.push(stride);
            stride *= n;
        }
        for (&n, s) in dims[..m].iter().zip(strides).rev() {
            first += (rest % n) * s;
            rest /= n;
        }
        let next = stride * length;
        let after = dims[m + 1..].iter().product::<u64>();
        let count = piece.q - piece.p;
        let column_bytes = self.rows as usize * item;
        let size = (count * after) as usize * item;
        // The last axis cut (nothing after it): the piece's elements come in order.
        let in_order = after == 1;
        let mut out = match in_order {
            true => Vec::with_capacity(size),
            false => vec![0u8; size],
        };
        let mut places = CPlaces::new(&dims[m + 1..]);
        let from = a as usize * item;
        // Columns of one index's run; `group` runs, `next` columns apart, per read.
        let one = (count - 1) * stride + 1;
        let (next_bytes, stride_bytes) =
            (next as usize * column_bytes, stride as usize * column_bytes);
        let mut rest = 0;
        let mut group_places = Vec::new();
        while rest < after {
            let group = cut.group.clamp(1, after - rest);
            run.resize(
                (group - 1) as usize * next_bytes + one as usize * column_bytes,
                0,
            );
            let column = first + stride * piece.p + next * rest;
            crate::atomic::read_at(self.file, run, self.base + column * self.rows * self.item)
                .map_err(|e| Error::io("cannot read the temporary file of the array", e))?;
            group_places.clear();
            for _ in 0..group {
                let Some(place) = places.next_place() else {
                    return Err(Error::invalid_input("internal: more columns than places"));
                };
                group_places.push(place as usize * item);
            }
            // Index by index of the cut axis: the piece is then written in runs of the
            // group's places (consecutive in C order), not an element a row's width apart.
            for t in 0..count as usize {
                let (from, to) = (t * stride_bytes + from, t * after as usize * item);
                for (k, &place) in group_places.iter().enumerate() {
                    let at = k * next_bytes + from;
                    let value = &run[at..at + item];
                    match in_order {
                        true => out.extend_from_slice(value),
                        false => out[to + place..to + place + item].copy_from_slice(value),
                    }
                }
            }
            rest += group;
        }
        Ok(out)
    }

    /// Rows `a..b` in C order, the columns in Fortran order of the trailing axes, each put
    /// at its C-order place in the rows. When the rows asked are at least a sixteenth of
    /// all, a run of whole columns (up to a window) is one read; else each column's rows
    /// asked are one read (wide rows of few rows were one read per element).
    fn rows(&self, a: u64, b: u64) -> Result<Vec<u8>> {
        let (item, height) = (self.item as usize, (b - a) as usize);
        let width = self.trailing.iter().product::<u64>() as usize * item;
        let cols = self.trailing.iter().product::<u64>();
        let mut block = vec![0u8; height * width];
        let whole = self.rows <= 16 * (b - a);
        let (span, per_read) = match whole {
            true => (
                self.rows,
                (self.window / (self.rows * self.item).max(1)).max(1),
            ),
            false => (b - a, 1),
        };
        let column_bytes = (span * self.item) as usize;
        let mut run = vec![0u8; (per_read.min(cols) * span * self.item) as usize];
        let mut places = CPlaces::new(&self.trailing);
        let mut c = 0u64;
        while c < cols {
            let k = per_read.min(cols - c);
            let run = &mut run[..k as usize * column_bytes];
            let first = match whole {
                true => c * self.rows,
                false => c * self.rows + a,
            };
            crate::atomic::read_at(self.file, run, self.base + first * self.item)
                .map_err(|e| Error::io("cannot read the temporary file of the array", e))?;
            for column in run.chunks_exact(column_bytes) {
                let Some(place) = places.next_place() else {
                    return Err(Error::invalid_input("internal: more columns than places"));
                };
                let column = match whole {
                    true => &column[a as usize * item..b as usize * item],
                    false => column,
                };
                let place = place as usize * item;
                for (i, value) in column.chunks_exact(item).enumerate() {
                    let to = i * width + place;
                    block[to..to + item].copy_from_slice(value);
                }
            }
            c += k;
        }
        Ok(block)
    }
}

/// The C-order index of each index of an array of shape `dims`, taken in Fortran order.
#[cfg(any(feature = "hdf5", feature = "parquet"))]
struct CPlaces {
    dims: Vec<u64>,
    /// C-order strides, in elements.
    strides: Vec<u64>,
    at: Option<Vec<u64>>,
}

#[cfg(any(feature = "hdf5", feature = "parquet"))]
impl CPlaces {
    fn new(dims: &[u64]) -> CPlaces {
        let mut strides = vec![1u64; dims.len()];
        for k in (0..dims.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * dims[k + 1];
        }
        let empty = dims.contains(&0);
        CPlaces {
            dims: dims.to_vec(),
            strides,
            at: (!empty).then(|| vec![0; dims.len()]),
        }
    }

    fn next_place(&mut self) -> Option<u64> {
        let at = self.at.as_mut()?;
        let place = at.iter().zip(&self.strides).map(|(i, s)| i * s).sum();
        // Advance the first axis fastest (Fortran order); past the last index, done.
        let mut carried = true;
        for (k, i) in at.iter_mut().enumerate() {
            *i += 1;
            if *i < self.dims[k] {
                carried = false;
                break;
            }
            *i = 0;
        }
        if carried {
            self.at = None;
        }
        Some(place)
    }
}

/// Writes the [`transposable`] array (a matrix or N-d array) at `path` of `src` as node
/// `name` of `out` (C order, as [`crate::h5write::H5Out::write`] makes it), a block of rows
/// at a time ([`for_each_transposed_batch`], its temporary file in `folder`), or rows over
/// a batch a piece at a time ([`for_each_transposed_piece`]). `false` (nothing written) for
/// any other array.
#[cfg(feature = "hdf5")]
pub(crate) fn write_h5_leaf_transposed(
    src: &mut File,
    path: &str,
    info: &ArrayInfo,
    out: &mut crate::h5write::H5Out,
    name: &str,
    folder: &std::path::Path,
    progress: &mut dyn FnMut(u64),
) -> Result<bool> {
    if !transposable(info) {
        return Ok(false);
    }
    let mut fill = out.start(name, info)?;
    let row = row_bytes(info);
    // The copy into the temporary file is the first half of the bytes, the writing the second.
    let progress = std::cell::RefCell::new(progress);
    let half = info.nbytes() / 2;
    let mut done = 0u64;
    let mut copied = |d: u64| (progress.borrow_mut())(d / 2);
    let mut write = |block: &[u8]| {
        fill.append_elements(block)
            .map_err(|e| e.with_node(name.to_string()))?;
        done += block.len() as u64;
        (progress.borrow_mut())(half + done / 2);
        Ok(())
    };
    if row > BATCH_BYTES {
        // Rows over a batch: pieces of a row, never a whole one.
        for_each_transposed_piece(
            src,
            path,
            info,
            folder,
            PieceSizes::CONVERT,
            &mut copied,
            &mut write,
        )?;
    } else {
        let per_batch = batch_rows(row);
        for_each_transposed_batch(src, path, info, folder, per_batch, &mut copied, &mut write)?;
    }
    fill.finish().map_err(|e| e.with_node(name.to_string()))?;
    Ok(true)
}

/// Bytes copied file to file between two progress reports.
#[cfg(feature = "hdf5")]
const COPY_STEP: u64 = 256 << 20;

/// Fills `fill` by copying the source's bytes file to file (`copy_file_range`: the data does
/// not pass through this process) when the source is a `.npy` file and the node an
/// uncompressed CArray of whole-row chunks allocated up front: the bytes are the same, as
/// numpy's dtype gives the HDF5 type. `false` (nothing written) otherwise.
#[cfg(feature = "hdf5")]
fn copy_h5_leaf(
    src: &File,
    path: &str,
    info: &ArrayInfo,
    fill: &mut sciio_pytables::write::NodeFill,
    progress: &mut dyn FnMut(u64),
) -> Result<bool> {
    let Some((file, at, len)) = src.raw_array_range(path)? else {
        return Ok(false);
    };
    if len != info.nbytes() || !fill.can_copy()? {
        return Ok(false);
    }
    let row = row_bytes(info) as u64;
    // Pieces of whole bands of chunks, about COPY_STEP bytes each.
    let band = fill.chunk_band_bytes().unwrap_or(row).max(row);
    let step = (COPY_STEP / band).max(1) * band;
    let mut done = 0u64;
    while done < len {
        let n = step.min(len - done);
        fill.copy_from(&file, at + done, n)
            .map_err(|e| e.with_file(src.path()))?;
        done += n;
        progress(done);
    }
    Ok(true)
}

#[cfg(feature = "parquet")]
pub(crate) use self::parquet::*;

#[cfg(feature = "parquet")]
mod parquet {
    use std::path::Path;
    use std::sync::mpsc::sync_channel;

    use sciio_core::{DType, Error, NdArray, Order, Result};
    use sciio_pandas::arrow_array::RecordBatch;
    use sciio_pandas::{FrameSchema, ParquetOptions, ParquetWriter};

    use super::{batch_rows, for_each_batch, row_bytes, row_ordered, IN_FLIGHT};
    use crate::atomic::write_atomically;
    use crate::file::File;
    use crate::plan::{LeftOut, Plan};

    /// Hands one record batch to the Parquet writer.
    type SendBatch<'a> = dyn FnMut(RecordBatch) -> Result<()> + 'a;

    /// Makes the record batches of a conversion, handing each to the Parquet writer.
    type Produce<'a> = dyn FnMut(&mut SendBatch<'_>) -> Result<()> + 'a;

    /// Bytes of array data per Parquet row group written by the streaming paths (pyarrow's
    /// default of 1 Mi rows is kept for narrow rows).
    pub(crate) const ROW_GROUP_BYTES: usize = 16 << 20;

    /// Rows per row group for rows of `row_bytes` bytes.
    fn row_group_rows(row_bytes: usize) -> usize {
        (ROW_GROUP_BYTES / row_bytes.max(1)).clamp(1, 1 << 20)
    }

    /// What [`array_to_parquet`] wrote: the column labels and the bytes of data moved.
    pub(crate) type Written = (Vec<String>, u64);

    /// A 1-d structured array or an n-d array (`path` in `src`) → `dst.parquet` batch by
    /// batch, or with `partition_rows` a folder `dst/` of `part-00000.parquet`, ... of that
    /// many rows each (one dataset for pyarrow.dataset, DuckDB, Spark). Fields without a column
    /// type are left out into `plan` (and refused before writing with `--strict`). `None` when the array
    /// does not stream ([`row_ordered`]): the caller reads it whole.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn array_to_parquet(
        src: &mut File,
        path: &str,
        label: &str,
        dst: &Path,
        options: ParquetOptions,
        partition_rows: Option<u64>,
        plan: &mut Plan,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Option<Written>> {
        let Some(info) = src.node(path)?.array_info().cloned() else {
            return Ok(None);
        };
        // Rows in stored order, or a Fortran-order matrix gathered a block of rows at a time.
        let transposed = super::transposable(&info);
        if !(row_ordered(&info) || transposed) || row_bytes(&info) == 0 || partition_rows == Some(0)
        {
            return Ok(None);
        }
        if matches!(info.dtype, DType::Record(_)) && info.shape.len() != 1 {
            return Ok(None);
        }
        let rows = info.shape[0] as u64;
        let row = row_bytes(&info);
        let mut empty_shape = info.shape.clone();
        empty_shape[0] = 0;
        let empty = NdArray::from_bytes(info.dtype.clone(), &empty_shape, Order::C, &[])?;
        let (template, fields_left) = crate::parquet::array_frame(&empty, label)?;
        plan.extend(fields_left.into_iter().map(|(field, e)| {
            LeftOut::column(path.to_string(), field, "a record field", e.message())
        }));
        plan.ready()?;
        let schema = template.schema().clone();
        let labels: Vec<String> = schema
            .columns()
            .map(|c| c.label().unwrap_or("None").to_string())
            .collect();
        let options = options.row_group_rows(row_group_rows(row));
        let total = info.nbytes();
        let mut done = 0u64;
        let per_batch = batch_rows(row);
        let folder = match dst.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        // A transposed array's copy into its temporary file is the first half of the bytes.
        let (base, share) = match transposed {
            true => (total / 2, 2),
            false => (0, 1),
        };
        let progress = std::cell::RefCell::new(progress);
        let mut convert = |src: &mut File, send: &mut SendBatch<'_>| {
            let batches =
                |src: &mut File, consume: &mut dyn FnMut(&[u8]) -> Result<()>| match transposed {
                    true => super::for_each_transposed_batch(
                        src,
                        path,
                        &info,
                        &folder,
                        per_batch,
                        &mut |d| (progress.borrow_mut())(d / 2, total),
                        consume,
                    ),
                    false => for_each_batch(src, path, row, per_batch, consume),
                };
            batches(src, &mut |bytes| {
                let (frame, _) = if matches!(info.dtype, DType::Record(_)) {
                    // records become columns read where they are in the batch
                    sciio_pandas::Frame::from_record_bytes_partial(&info.dtype, bytes)?
                } else {
                    let mut shape = info.shape.clone();
                    shape[0] = bytes.len() / row.max(1);
                    let array = NdArray::from_bytes(info.dtype.clone(), &shape, Order::C, bytes)?;
                    crate::parquet::array_frame(&array, label)?
                };
                for batch in frame.batches() {
                    send(batch.clone())?;
                }
                done += bytes.len() as u64;
                (progress.borrow_mut())(base + done / share, total);
                Ok(())
            })
        };
        match partition_rows {
            None => {
                let schema = schema.rows_slice(0, rows);
                write_atomically(dst, |out| {
                    write_batches(out, &schema, &options, &mut |send| convert(src, send))
                })?;
            }
            Some(part_rows) => {
                write_partitions(dst, &schema, &options, rows, part_rows, &mut |send| {
                    convert(src, send)
                })?
            }
        }
        Ok(Some((labels, total)))
    }

    /// Runs `produce` here and a [`ParquetWriter`] on `out` on another thread, the record
    /// batches `produce` sends going through a bounded channel.
    pub(crate) fn write_batches<W: std::io::Write + Send>(
        out: W,
        schema: &FrameSchema,
        options: &ParquetOptions,
        produce: &mut Produce<'_>,
    ) -> Result<()> {
        let (tx, rx) = sync_channel::<RecordBatch>(IN_FLIGHT);
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || -> Result<()> {
                let mut writer = ParquetWriter::new(out, schema, options);
                for batch in rx.iter() {
                    writer.write(&batch)?;
                }
                writer.finish()
            });
            let (produced, writer_gone) = produce_into(&tx, produce);
            drop(tx);
            let written = writer
                .join()
                .map_err(|_| Error::invalid_input("internal: the Parquet writer panicked"))?;
            first_cause(produced, written, writer_gone)
        })
    }

    /// Runs `produce`, sending its batches into `tx`; also says whether the writer went away.
    fn produce_into(
        tx: &std::sync::mpsc::SyncSender<RecordBatch>,
        produce: &mut Produce<'_>,
    ) -> (Result<()>, bool) {
        let mut gone = false;
        let produced = produce(&mut |batch| {
            tx.send(batch).map_err(|_| {
                gone = true;
                Error::invalid_input("the Parquet writer stopped")
            })
        });
        (produced, gone)
    }

    /// The error that caused the other: the writer's when it stopped first, else the producer's.
    fn first_cause(produced: Result<()>, written: Result<()>, writer_gone: bool) -> Result<()> {
        if writer_gone {
            written.and(produced)
        } else {
            produced.and(written)
        }
    }

    /// The name of partition `i` in a partitioned output folder.
    pub(crate) fn part_name(i: u64) -> String {
        format!("part-{i:05}.parquet")
    }

    /// Writes the batches `produce` sends into `dir/part-00000.parquet`, ... of `part_rows`
    /// rows each (the last one shorter), each file written atomically and its RangeIndex
    /// the part's rows of the whole. The folder is created; Parquet files left in it by an
    /// earlier run with more parts are an error (they would join the dataset).
    fn write_partitions(
        dir: &Path,
        schema: &FrameSchema,
        options: &ParquetOptions,
        rows: u64,
        part_rows: u64,
        produce: &mut Produce<'_>,
    ) -> Result<()> {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io("cannot create the folder", e).with_file(dir))?;
        let parts = rows.div_ceil(part_rows).max(1);
        let stale = std::fs::read_dir(dir)
            .map_err(|e| Error::io("cannot list the folder", e).with_file(dir))?
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".parquet"))
            .collect::<Vec<_>>();
        // Parts of an earlier run are replaced; other Parquet files would join the dataset.
        let earlier_part = |name: &str| {
            name.strip_prefix("part-")
                .and_then(|n| n.strip_suffix(".parquet"))
                .and_then(|n| n.parse::<u64>().ok())
        };
        if let Some(name) = stale.iter().find(|n| earlier_part(n).is_none()) {
            return Err(Error::invalid_input(format!(
                "the folder holds '{name}', which is no part of this output; \
                 write into an empty folder"
            ))
            .with_file(dir));
        }
        let extra: Vec<&String> = stale
            .iter()
            .filter(|n| earlier_part(n).is_some_and(|i| i >= parts))
            .collect();
        let (tx, rx) = sync_channel::<RecordBatch>(IN_FLIGHT);
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || -> Result<()> {
                let mut batches = rx.iter().peekable();
                let mut carry: Option<RecordBatch> = None;
                for part in 0..parts {
                    let start = part * part_rows;
                    let n = part_rows.min(rows - start);
                    let schema = schema.rows_slice(start, n);
                    let path = dir.join(part_name(part));
                    write_atomically(&path, |out| {
                        let mut writer = ParquetWriter::new(out, &schema, options);
                        let mut left = n as usize;
                        while left > 0 {
                            let batch = match carry.take() {
                                Some(b) => b,
                                None => match batches.next() {
                                    Some(b) => b,
                                    None => break,
                                },
                            };
                            let take = left.min(batch.num_rows());
                            writer.write(&batch.slice(0, take))?;
                            if take < batch.num_rows() {
                                carry = Some(batch.slice(take, batch.num_rows() - take));
                            }
                            left -= take;
                        }
                        if left > 0 {
                            return Err(Error::truncated(format!(
                                "the source ended {left} rows short of part {part}"
                            )));
                        }
                        writer.finish()
                    })?;
                }
                Ok(())
            });
            let (produced, writer_gone) = produce_into(&tx, produce);
            drop(tx);
            let written = writer
                .join()
                .map_err(|_| Error::invalid_input("internal: the Parquet writer panicked"))?;
            let result = first_cause(produced, written, writer_gone);
            if result.is_ok() {
                for name in &extra {
                    std::fs::remove_file(dir.join(name)).map_err(|e| {
                        Error::io("cannot remove an earlier part", e).with_file(dir.join(name))
                    })?;
                }
            } else {
                // No part of a failed run stays behind to join the dataset.
                for i in 0..parts {
                    let _ = std::fs::remove_file(dir.join(part_name(i)));
                }
            }
            result
        })
    }
}

#[cfg(all(feature = "parquet", feature = "hdf5"))]
pub(crate) use self::frame_h5::frame_to_h5;

#[cfg(all(feature = "parquet", feature = "hdf5"))]
mod frame_h5 {
    use std::path::Path;

    use sciio_core::{DType, Error, ErrorKind, NdArray, Order, Result, ScalarKind, ScalarType};
    use sciio_pandas::arrow_array::{Array, ArrayRef, LargeStringArray, StringArray};
    use sciio_pandas::arrow_schema::DataType;
    use sciio_pandas::{Frame, ParquetReader, ReadOptions};

    use crate::job::{Job, Written};
    use crate::node::ArrayInfo;
    use crate::plan::LeftOut;

    /// `x.parquet → y.h5` row group by row group into one Table, when every column (and
    /// stored index level) is a number, a boolean or text: text columns become `S<n>` of the
    /// longest value's UTF-8 bytes (found by a first pass over the file), nulls as numpy has
    /// them. `None` for other frames, and for frames whose numpy types change from batch to
    /// batch (integers with nulls in some): the caller reads them whole.
    pub(crate) fn frame_to_h5(job: &mut Job<'_, '_, '_>) -> Result<Option<Written>> {
        let (dst, options) = (job.dst, job.options);
        let progress = &mut *job.progress;
        let plan = &mut job.plan;
        let [(src, _)] = &*job.sources else {
            return Ok(None);
        };
        let file = src.path();
        let open = || {
            ParquetReader::open_with(file, &ReadOptions::new().limits(*src.limits()))
                .map_err(|e| e.with_file(file))
        };
        // First pass: every column streams, and the width of each text column.
        let reader = open()?;
        let schema = reader.schema().clone();
        let total_rows = reader.num_rows();
        let fields = schema.arrow_schema().fields().clone();
        let mut widths = vec![1usize; fields.len()];
        let text: Vec<bool> = fields
            .iter()
            .map(|f| matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8))
            .collect();
        let simple = fields.iter().all(|f| {
            let t = f.data_type();
            t.is_numeric() || matches!(t, DataType::Boolean | DataType::Utf8 | DataType::LargeUtf8)
        });
        if !simple {
            return Ok(None);
        }
        if text.iter().any(|&t| t) {
            for batch in reader {
                let batch = batch.map_err(|e| e.with_file(file))?;
                for (i, column) in batch.columns().iter().enumerate() {
                    if text[i] {
                        widths[i] = widths[i].max(longest(column.as_ref()));
                    }
                }
            }
        }
        // Second pass: batch → columns → packed records → Table rows.
        let name = crate::parquet::table_name(options.dst_node.as_deref(), file);
        let mut out: Option<(crate::h5write::H5Out, sciio_pytables::write::NodeFill)> = None;
        let mut record: Option<DType> = None;
        let mut offset = 0u64;
        let mut bytes = 0u64;
        let total_bytes = src.size_on_disk();
        // Row groups are decoded on a thread of their own, a few batches ahead.
        let reader = open()?;
        let complete = std::thread::scope(|scope| -> Result<bool> {
            let (tx, batches) = std::sync::mpsc::sync_channel(super::IN_FLIGHT);
            scope.spawn(move || {
                for batch in reader {
                    if tx.send(batch).is_err() {
                        break;
                    }
                }
            });
            for batch in batches.iter() {
                let batch = batch.map_err(|e| e.with_file(file))?;
                let rows = batch.num_rows();
                let part = schema.rows_slice(offset, rows as u64);
                let frame = Frame::new(part, vec![batch]).map_err(|e| e.with_file(file))?;
                let (columns, left) = columns_of(&frame, &widths, file, src.limits())?;
                let (table, no_type) =
                    crate::parquet::frame_table(&columns).map_err(|e| e.with_file(file))?;
                if table.dtype() != record.get_or_insert_with(|| table.dtype().clone()) {
                    // A column's numpy type depends on its values here (integers with nulls
                    // become float64, as in pandas): the whole frame decides it.
                    return Ok(false);
                }
                if out.is_none() {
                    plan.extend(left);
                    plan.extend(no_type);
                    plan.ready()?;
                    let mut h5 = crate::h5write::H5Out::create(dst, options.compress.as_ref())?;
                    let info = ArrayInfo {
                        dtype: table.dtype().clone(),
                        shape: vec![usize::try_from(total_rows).unwrap_or(usize::MAX)],
                        order: Order::C,
                    };
                    let fill = h5.start(&name, &info).map_err(|e| e.with_file(dst))?;
                    out = Some((h5, fill));
                }
                if let Some((_, fill)) = out.as_mut() {
                    fill.append(table.as_bytes())
                        .map_err(|e| e.with_file(dst))?;
                }
                offset += rows as u64;
                bytes += table.as_bytes().len() as u64;
                progress(bytes.min(total_bytes), total_bytes);
            }
            Ok(true)
        })?;
        if !complete {
            // Dropped unfinished (the node, then the file): the temporary file goes away.
            if let Some((h5, fill)) = out {
                drop(fill);
                drop(h5);
            }
            return Ok(None);
        }
        let Some((h5, fill)) = out else {
            // No rows: the whole-frame path makes the empty table.
            return Ok(None);
        };
        fill.finish().map_err(|e| e.with_file(dst))?;
        h5.finish(dst)?;
        progress(total_bytes, total_bytes);
        Ok(Some(Written {
            arrays: vec![name],
            data_bytes: bytes,
        }))
    }

    /// The longest value's bytes in a text column.
    fn longest(column: &dyn Array) -> usize {
        let any = column.as_any();
        let lengths: Box<dyn Iterator<Item = usize>> =
            if let Some(s) = any.downcast_ref::<StringArray>() {
                Box::new(
                    s.offsets()
                        .windows(2)
                        .map(|w| (w[1] - w[0]).max(0) as usize),
                )
            } else if let Some(s) = any.downcast_ref::<LargeStringArray>() {
                Box::new(
                    s.offsets()
                        .windows(2)
                        .map(|w| (w[1] - w[0]).max(0) as usize),
                )
            } else {
                Box::new(std::iter::empty())
            };
        lengths.max().unwrap_or(0)
    }

    /// Arrays with their names (record fields).
    type NamedArrays = Vec<(String, NdArray)>;

    /// The batch's index levels and columns as numpy arrays (as [`crate::parquet::numpy_columns`]
    /// names them), text as `S<width>` of the column's width over the whole file (`widths` by
    /// Arrow field position).
    fn columns_of(
        frame: &Frame,
        widths: &[usize],
        file: &Path,
        limits: &sciio_core::Limits,
    ) -> Result<(NamedArrays, Vec<LeftOut>)> {
        let schema = frame.schema();
        let index_fields = schema.index().iter().map(|level| match level {
            sciio_pandas::IndexLevel::Column { field, .. } => schema.field_position(field).ok(),
            sciio_pandas::IndexLevel::Range(_) => None,
        });
        let index = frame
            .index_arrays()
            .map_err(|e| e.with_file(file))?
            .into_iter()
            .zip(index_fields)
            .map(|((name, a), pos)| (name, Ok(a), pos));
        let columns = schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.is_index)
            .map(|(pos, c)| {
                let label = c.label().unwrap_or("None").to_string();
                let column = frame.column(&label);
                (label, column, Some(pos))
            });
        let mut arrays = Vec::new();
        let mut left_out = Vec::new();
        for (name, column, pos) in index.chain(columns) {
            let column: ArrayRef = column.map_err(|e| e.with_file(file).with_node(name.clone()))?;
            let width = pos.and_then(|p| widths.get(p).copied());
            // As the whole-frame path maps them (`parquet::numpy_columns`): nullable integers
            // and booleans with a mask, missing text left out; a batch whose columns differ
            // from the first one's makes the caller read the frame whole.
            let array = match (column.data_type(), width) {
                (DataType::Utf8 | DataType::LargeUtf8, Some(width)) => {
                    fixed_text(&column, width).map(|a| (a, None))
                }
                _ => sciio_pandas::array_to_masked_ndarray(column.as_ref(), limits),
            };
            match array {
                Ok((array, mask)) => {
                    if let Some(mask) = mask {
                        let mask_name = format!("{name}{}", sciio_pandas::MASK_SUFFIX);
                        arrays.push((name, array));
                        arrays.push((mask_name, mask));
                    } else {
                        arrays.push((name, array));
                    }
                }
                Err(e) if e.kind() == ErrorKind::Unsupported => {
                    left_out.push(crate::parquet::no_numpy_type(
                        name,
                        sciio_pandas::arrow_type_text(column.data_type()),
                        &e,
                    ))
                }
                Err(e) => return Err(e.with_file(file).with_node(name)),
            }
        }
        crate::parquet::check_distinct(&arrays, file)?;
        Ok((arrays, left_out))
    }

    /// A text column as `S<width>`: each value's UTF-8 bytes, zero-padded; a column with
    /// missing values is refused (numpy's fixed-width strings cannot hold them).
    fn fixed_text(column: &ArrayRef, width: usize) -> Result<NdArray> {
        let rows = column.len();
        if column.null_count() > 0 {
            return Err(Error::unsupported(
                "values are missing, which numpy's fixed-width strings cannot hold \
                 (pandas holds them as objects)",
            ));
        }
        let mut bytes = vec![0u8; rows * width];
        let any = column.as_any();
        let values: Box<dyn Iterator<Item = Option<&str>>> =
            if let Some(s) = any.downcast_ref::<StringArray>() {
                Box::new(s.iter())
            } else if let Some(s) = any.downcast_ref::<LargeStringArray>() {
                Box::new(s.iter())
            } else {
                return Err(Error::unsupported("not a text column"));
            };
        for (slot, value) in bytes.chunks_exact_mut(width.max(1)).zip(values) {
            let value = value.unwrap_or("").as_bytes();
            let n = value.len().min(slot.len());
            slot[..n].copy_from_slice(&value[..n]);
        }
        let dtype = DType::Scalar(ScalarType::native(ScalarKind::Bytes(width)));
        NdArray::from_bytes(dtype, &[rows], Order::C, &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(dir: &std::path::Path, rows: usize) -> File {
        let path = dir.join("x.npy");
        let values: Vec<i64> = (0..rows as i64 * 3).collect();
        let array = sciio_core::NdArray::from_vec(values, &[rows, 3]).unwrap();
        let mut bytes = Vec::new();
        sciio_npy::write_array(&mut bytes, &array).unwrap();
        std::fs::write(&path, bytes).unwrap();
        File::open(&path).unwrap()
    }

    /// Fortran-order arrays of two or more dimensions come out as blocks of C-order rows,
    /// the copy into the temporary file reported as it goes.
    #[cfg(any(feature = "hdf5", feature = "parquet"))]
    #[test]
    fn fortran_order_arrays_come_out_in_c_order_rows() {
        let dir = tempfile::tempdir().unwrap();
        for shape in [vec![9, 4], vec![7, 5, 6], vec![5, 3, 2, 4], vec![4, 1, 3]] {
            let n: usize = shape.iter().product();
            let values: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
            let a = sciio_core::NdArray::from_vec(values, &shape).unwrap();
            let f = a.to_order(sciio_core::Order::F);
            let path = dir.path().join("f.npy");
            let mut bytes = Vec::new();
            sciio_npy::write_array(&mut bytes, &f).unwrap();
            std::fs::write(&path, bytes).unwrap();
            let mut file = File::open(&path).unwrap();
            let info = ArrayInfo::of(&f);
            let (mut got, mut copied) = (Vec::new(), Vec::new());
            for_each_transposed_batch(
                &mut file,
                "/",
                &info,
                dir.path(),
                2,
                &mut |d| copied.push(d),
                &mut |block| {
                    got.extend_from_slice(block);
                    Ok(())
                },
            )
            .unwrap();
            assert!(got == a.as_bytes(), "{shape:?}");
            assert_eq!(copied.last(), Some(&info.nbytes()), "{shape:?}");
        }
    }

    /// Rows gathered from a Fortran-order file are the C-order rows, whatever the rows asked
    /// (a few of many: a read per column; else runs of whole columns) and the window.
    #[cfg(any(feature = "hdf5", feature = "parquet"))]
    #[test]
    fn gathered_rows_are_the_c_order_rows() {
        let dir = tempfile::tempdir().unwrap();
        for shape in [vec![40, 3, 5], vec![5, 70], vec![3, 2, 4, 6]] {
            let n: usize = shape.iter().product();
            let values: Vec<i32> = (0..n as i32).map(|i| i * 5 - 11).collect();
            let a = sciio_core::NdArray::from_vec(values, &shape).unwrap();
            let f = a.to_order(sciio_core::Order::F);
            let path = dir.path().join("f.bin");
            std::fs::write(&path, f.as_bytes()).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            let row = a.as_bytes().len() / shape[0];
            for window in [4, 3 * shape[0] as u64 * 4, 1 << 20] {
                let mut gather = Gather::new(&file, &ArrayInfo::of(&f));
                gather.window = window;
                for height in [1, 2, 3, shape[0]] {
                    let mut got = Vec::new();
                    let mut lo = 0;
                    while lo < shape[0] {
                        let hi = (lo + height).min(shape[0]);
                        got.extend(gather.rows(lo as u64, hi as u64).unwrap());
                        lo = hi;
                    }
                    assert!(got == a.as_bytes(), "{shape:?} window {window} by {height}");
                    let some = gather.rows(1, 2).unwrap();
                    assert!(some == a.as_bytes()[row..2 * row], "{shape:?}");
                }
            }
        }
    }

    /// Shapes of matrices and N-d arrays whose rows the piece tests cut: few rows and many,
    /// rows of one long axis, of a short first axis, of several.
    #[cfg(feature = "hdf5")]
    const PIECE_SHAPES: [&[usize]; 9] = [
        &[300, 7],
        &[5, 70],
        &[2, 1000],
        &[2, 30, 40],
        &[3, 4, 5, 6],
        &[2, 2, 50],
        &[7, 3, 1, 9],
        &[40, 6, 5],
        &[1, 9, 11],
    ];

    /// An array of shape `shape` (int32, C order) and a file of its Fortran-order bytes.
    #[cfg(feature = "hdf5")]
    fn fortran_file(
        dir: &std::path::Path,
        shape: &[usize],
    ) -> (sciio_core::NdArray, std::fs::File) {
        let n: usize = shape.iter().product();
        let values: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
        let a = sciio_core::NdArray::from_vec(values, shape).unwrap();
        let f = a.to_order(sciio_core::Order::F);
        let path = dir.join("f.bin");
        std::fs::write(&path, f.as_bytes()).unwrap();
        (a, std::fs::File::open(&path).unwrap())
    }

    /// Pieces of rows gathered from the Fortran-order bytes (the columns read whole) are the
    /// C-order rows in order, each at most the piece's bytes, whatever the window (one column
    /// up) and the piece (one element up).
    #[cfg(feature = "hdf5")]
    #[test]
    fn pieces_of_rows_are_the_c_order_rows() {
        let dir = tempfile::tempdir().unwrap();
        for shape in PIECE_SHAPES {
            let (a, file) = fortran_file(dir.path(), shape);
            let info = ArrayInfo::of(&a);
            for window in [4, 4000, 1 << 20] {
                let gather = Gather {
                    window,
                    ..Gather::new(&file, &info)
                };
                for piece_bytes in [4, 12, 400, 1 << 20] {
                    // Every axis a piece can be cut along, not only the cheapest.
                    let cuts = (0..shape.len() - 1)
                        .filter_map(|m| gather.cut_along(m, piece_bytes))
                        .map(|(cut, _)| cut);
                    for cut in cuts.chain([gather.row_cut(piece_bytes)]) {
                        let (mut got, mut run) = (Vec::new(), Vec::new());
                        for row in 0..shape[0] as u64 {
                            for piece in cut.pieces(&gather.trailing) {
                                let piece = gather.row_piece(row, cut, piece, &mut run).unwrap();
                                assert!(piece.len() <= piece_bytes, "{shape:?} {cut:?}");
                                got.extend(piece);
                            }
                        }
                        assert!(
                            got == a.as_bytes(),
                            "{shape:?} window {window} piece {piece_bytes} {cut:?}"
                        );
                    }
                }
            }
        }
    }

    /// Rows are cut where one read gives many elements of a piece, not one: a row of a
    /// short first axis (one index of it fits a piece, but is an element per column) or of
    /// a short second axis (an index of the first axis is short runs of columns, each read
    /// alone a read per 16 elements).
    #[cfg(feature = "hdf5")]
    #[test]
    fn rows_are_cut_where_a_read_gives_many_elements() {
        let file = tempfile::tempfile().unwrap();
        let dtype = sciio_core::DType::scalar(sciio_core::ScalarKind::Float(8));
        let per_read = |shape: &[usize]| {
            let info = ArrayInfo {
                dtype: dtype.clone(),
                shape: shape.to_vec(),
                order: sciio_core::Order::F,
            };
            let cut = Gather::new(&file, &info).row_cut(BATCH_BYTES);
            cut.step * cut.group
        };
        assert!(per_read(&[2, 2, 600_000]) >= 1 << 18);
        assert!(per_read(&[2, 64, 65_536]) >= 1 << 16);
        assert!(per_read(&[2, 1100, 1100]) >= 953);
        assert_eq!(per_read(&[2, 4 << 20]), 1 << 19);
    }

    /// The transposing copy holds each row in the Fortran order of its own axes, whatever
    /// the window (whole columns, one column, less than a column) and the sizes written.
    #[cfg(feature = "hdf5")]
    #[test]
    fn the_row_major_copy_holds_each_row_in_its_own_fortran_order() {
        for shape in PIECE_SHAPES {
            let (a, _) = fortran_file(tempfile::tempdir().unwrap().path(), shape);
            let f = a.to_order(sciio_core::Order::F);
            let row = a.as_bytes().len() / shape[0];
            let mut want = Vec::new();
            for r in 0..shape[0] {
                let values: Vec<i32> = a.as_bytes()[r * row..(r + 1) * row]
                    .chunks(4)
                    .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
                    .collect();
                let one = sciio_core::NdArray::from_vec(values, &shape[1..]).unwrap();
                want.extend_from_slice(one.to_order(sciio_core::Order::F).as_bytes());
            }
            let columns: usize = shape[1..].iter().product();
            for window in [4, 12, shape[0] as u64 * 4, 1000, 1 << 20] {
                for write in [1, 7, 4096] {
                    let temp = tempfile::tempfile().unwrap();
                    let mut w = RowMajor::new(&temp, shape[0] as u64, columns as u64, 4, window);
                    for bytes in f.as_bytes().chunks(write) {
                        w.write_all(bytes).unwrap();
                    }
                    w.finish().unwrap();
                    let mut got = vec![0u8; want.len()];
                    crate::atomic::read_at(&temp, &mut got, 0).unwrap();
                    assert!(got == want, "{shape:?} window {window} writes of {write}");
                }
            }
        }
    }

    /// Rows over a piece come out of a Fortran-order array as its C-order bytes, in pieces
    /// of at most the piece's bytes, from the stored columns (few rows) or from the
    /// transposing copy (many rows).
    #[cfg(feature = "hdf5")]
    #[test]
    fn transposed_pieces_are_the_c_order_rows() {
        let dir = tempfile::tempdir().unwrap();
        for shape in PIECE_SHAPES {
            let (a, _) = fortran_file(dir.path(), shape);
            let f = a.to_order(sciio_core::Order::F);
            let path = dir.path().join("f.npy");
            let mut bytes = Vec::new();
            sciio_npy::write_array(&mut bytes, &f).unwrap();
            std::fs::write(&path, bytes).unwrap();
            let info = ArrayInfo::of(&f);
            for (whole_rows, window, piece) in [
                (0, 4, 4),
                (0, 100, 400),
                (1000, 100, 64),
                (1000, 1 << 20, 1 << 20),
            ] {
                let mut file = File::open(&path).unwrap();
                let sizes = PieceSizes {
                    piece,
                    window,
                    whole_rows,
                };
                let mut got = Vec::new();
                for_each_transposed_piece(
                    &mut file,
                    "/",
                    &info,
                    dir.path(),
                    sizes,
                    &mut |_| {},
                    &mut |p| {
                        assert!(p.len() <= piece, "{shape:?} {sizes:?}");
                        got.extend_from_slice(p);
                        Ok(())
                    },
                )
                .unwrap();
                assert!(got == a.as_bytes(), "{shape:?} {sizes:?}");
            }
        }
    }

    #[test]
    fn batches_hold_whole_rows_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = npy(dir.path(), 1000);
        let mut seen = Vec::new();
        let mut sizes = Vec::new();
        for_each_batch(&mut file, "/", 24, 7, &mut |b| {
            sizes.push(b.len());
            seen.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        assert!(sizes[..sizes.len() - 1].iter().all(|&n| n == 7 * 24));
        assert_eq!(sizes.last(), Some(&((1000 % 7) * 24)));
        let want: Vec<u8> = (0..3000i64).flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn a_failing_writer_stops_the_reader_with_its_own_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = npy(dir.path(), 100_000);
        let mut calls = 0;
        let err = for_each_batch(&mut file, "/", 24, 10, &mut |_| {
            calls += 1;
            Err(Error::invalid_input("disk full"))
        })
        .unwrap_err();
        assert_eq!(calls, 1);
        assert!(err.to_string().contains("disk full"), "{err}");
    }
}
