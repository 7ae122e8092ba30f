//! The column chunks of the open row group, encoded as the batches come in.
//!
//! Each leaf column of the row group is a [`Lane`]: a queue of the pieces (leaf arrays of a
//! batch) not encoded yet and the column's encoder. Feeding a batch queues its pieces and asks
//! for a [`LaneJob::Feed`] per lane; whoever runs a feed job drains the lane's queue in order
//! while holding its encoder (a second feed job finding the encoder busy returns at once: the
//! holder drains what was queued). So both encoding threads work from the first batch on,
//! instead of waiting for the whole row group to be buffered, and each column still sees its
//! pieces in order: the same bytes as encoding the buffered row group. [`LaneJob::Close`]
//! drains what is left and closes the chunk.
//!
//! A piece that fails to encode makes the lane failed: its later pieces are skipped and the
//! close reports the error.
//!
//! The lanes of a writer share a [`Backlog`]: the bytes queued and not encoded yet. When the
//! batches come faster than the threads encode them, the writer waits for the backlog to
//! shrink instead of queueing the rest of the row group (and the next ones) in memory.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, TryLockError};

use arrow_array::ArrayRef;
use parquet::arrow::arrow_writer::{ArrowColumnChunk, ArrowColumnWriter, ArrowLeafColumn};

use sciio_core::{Error, Result};

use crate::categorical::DictionaryChunk;
use crate::fixed_list::{ListChunk, ListChunkEncoder};
use crate::parquet_error::parquet_err;
use crate::spliced::EncodedChunk;

/// A column chunk's encoder.
pub(crate) enum ColumnEncoder {
    /// By arrow-rs.
    Arrow(Box<ArrowColumnWriter>),
    /// Dictionary arrays written as their keys and values (categoricals, strings read as
    /// dictionaries), by [`DictionaryChunk`].
    Dictionary(Box<DictionaryChunk>),
    /// Fixed-size lists of primitives, by `fixed_list` (arrow-rs's after a null).
    FixedList(Box<dyn ListChunkEncoder>),
}

/// A part of a column's rows for its encoder.
pub(crate) enum Piece {
    /// A leaf column computed by arrow-rs (for its writer).
    Leaf(ArrowLeafColumn),
    /// The field's array as it is (for sciio's encoders).
    Array(ArrayRef),
}

/// An encoded column chunk.
pub(crate) enum Chunk {
    Arrow(ArrowColumnChunk),
    /// Encoded by sciio, spliced into the row group as bytes.
    Spliced(EncodedChunk),
}

/// Bytes of the pieces queued in a writer's lanes and not encoded yet.
#[derive(Default)]
pub(crate) struct Backlog {
    state: Mutex<BacklogState>,
    shrunk: Condvar,
}

#[derive(Default)]
struct BacklogState {
    bytes: usize,
    /// An encoder panicked: its lane's pieces may never be drained, so nobody waits (the
    /// panic is reported when the row group closes).
    broken: bool,
}

impl Backlog {
    fn add(&self, n: usize) {
        if let Ok(mut state) = self.state.lock() {
            state.bytes += n;
        }
    }

    fn done(&self, n: usize, panicked: bool) {
        if let Ok(mut state) = self.state.lock() {
            state.bytes = state.bytes.saturating_sub(n);
            state.broken |= panicked;
        }
        self.shrunk.notify_all();
    }

    /// Waits until at most `limit` bytes are queued (the encoders drain the queues on their
    /// own threads: each queued piece had a feed job submitted after it).
    pub(crate) fn wait_below(&self, limit: usize) -> Result<()> {
        let failed = || Error::invalid_input("internal: a Parquet encoding thread failed");
        let state = self.state.lock().map_err(|_| failed())?;
        let state = self
            .shrunk
            .wait_while(state, |s| s.bytes > limit && !s.broken)
            .map_err(|_| failed())?;
        drop(state);
        Ok(())
    }
}

/// Marks a piece's bytes done when dropped: after it is encoded, or while a panic in its
/// encoder unwinds (the backlog is then broken, so the writer does not wait for it).
struct Encoding<'a> {
    backlog: &'a Backlog,
    bytes: usize,
}

impl Drop for Encoding<'_> {
    fn drop(&mut self) {
        self.backlog.done(self.bytes, std::thread::panicking());
    }
}

/// One leaf column of the open row group.
pub(crate) struct Lane {
    /// The leaf column's path, for errors.
    column: String,
    /// The pieces not encoded yet, with their bytes.
    queue: Mutex<VecDeque<(Piece, usize)>>,
    backlog: Arc<Backlog>,
    /// The encoder; `None` once closed. The first error is kept in its place.
    encoder: Mutex<Option<Result<ColumnEncoder>>>,
}

/// Work for the encoding threads.
pub(crate) enum LaneJob {
    /// Encode what is queued for the lane (if no other thread is at it).
    Feed(Arc<Lane>),
    /// Encode what is left and close the chunk.
    Close(Arc<Lane>),
}

impl Lane {
    pub(crate) fn new(column: String, encoder: ColumnEncoder, backlog: Arc<Backlog>) -> Arc<Self> {
        Arc::new(Lane {
            column,
            queue: Mutex::new(VecDeque::new()),
            backlog,
            encoder: Mutex::new(Some(Ok(encoder))),
        })
    }

    /// Queues a piece of `bytes` bytes (encoded by the next feed or close of this lane).
    pub(crate) fn queue(&self, piece: Piece, bytes: usize) -> Result<()> {
        self.queue
            .lock()
            .map_err(|_| poisoned(&self.column))?
            .push_back((piece, bytes));
        self.backlog.add(bytes);
        Ok(())
    }

    fn next_piece(&self) -> Result<Option<(Piece, usize)>> {
        Ok(self
            .queue
            .lock()
            .map_err(|_| poisoned(&self.column))?
            .pop_front())
    }

    fn is_drained(&self) -> bool {
        self.queue.lock().map(|q| q.is_empty()).unwrap_or(true)
    }

    /// Encodes the queued pieces in order with the held encoder; a failure takes the
    /// encoder's place.
    fn drain(&self, encoder: &mut MutexGuard<'_, Option<Result<ColumnEncoder>>>) -> Result<()> {
        while let Some((piece, bytes)) = self.next_piece()? {
            let _done = Encoding {
                backlog: &self.backlog,
                bytes,
            };
            if let Some(Ok(e)) = encoder.as_mut() {
                if let Err(err) = encode(e, piece) {
                    **encoder = Some(Err(err.with_node(self.column.clone())));
                }
            }
        }
        Ok(())
    }

    /// Encodes what is queued unless another thread holds the encoder (it then drains what
    /// this feed was for); checks again after letting go, for a piece queued meanwhile.
    pub(crate) fn feed(&self) -> Result<()> {
        loop {
            match self.encoder.try_lock() {
                Ok(mut encoder) => self.drain(&mut encoder)?,
                Err(TryLockError::WouldBlock) => return Ok(()),
                Err(TryLockError::Poisoned(_)) => return Err(poisoned(&self.column)),
            }
            if self.is_drained() {
                return Ok(());
            }
        }
    }

    /// Encodes what is left and closes the chunk (waiting for a feed at work on it).
    pub(crate) fn close(&self) -> Result<Chunk> {
        let mut encoder = self.encoder.lock().map_err(|_| poisoned(&self.column))?;
        self.drain(&mut encoder)?;
        match encoder.take() {
            Some(Ok(ColumnEncoder::Arrow(writer))) => writer
                .close()
                .map(Chunk::Arrow)
                .map_err(|e| parquet_err(e).with_node(self.column.clone())),
            Some(Ok(ColumnEncoder::Dictionary(chunk))) => chunk
                .finish()
                .map(Chunk::Spliced)
                .map_err(|e| e.with_node(self.column.clone())),
            Some(Ok(ColumnEncoder::FixedList(chunk))) => match chunk.finish() {
                Ok(ListChunk::Spliced(c)) => Ok(Chunk::Spliced(c)),
                Ok(ListChunk::Arrow(c)) => Ok(Chunk::Arrow(c)),
                Err(e) => Err(e.with_node(self.column.clone())),
            },
            Some(Err(e)) => Err(e),
            None => Err(Error::invalid_input(format!(
                "internal: column {} closed twice",
                self.column
            ))),
        }
    }
}

fn encode(encoder: &mut ColumnEncoder, piece: Piece) -> Result<()> {
    match (encoder, piece) {
        (ColumnEncoder::Arrow(w), Piece::Leaf(leaf)) => w.write(&leaf).map_err(parquet_err),
        (ColumnEncoder::Dictionary(d), Piece::Array(array)) => d.push(&array),
        (ColumnEncoder::FixedList(l), Piece::Array(array)) => l.push(&array),
        _ => Err(Error::mismatch(
            "internal: a column's piece does not suit its encoder",
        )),
    }
}

fn poisoned(column: &str) -> Error {
    Error::invalid_input(format!(
        "column {column}: an encoding thread failed while holding it"
    ))
}

/// Runs one job: `None` for a feed, the chunk for a close.
pub(crate) fn run(job: LaneJob) -> Result<Option<Chunk>> {
    match job {
        LaneJob::Feed(lane) => lane.feed().map(|()| None),
        LaneJob::Close(lane) => lane.close().map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_waits_until_the_encoders_catch_up() {
        let backlog = Arc::new(Backlog::default());
        backlog.add(100);
        let encoder = {
            let backlog = Arc::clone(&backlog);
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                backlog.done(60, false);
            })
        };
        let started = std::time::Instant::now();
        backlog.wait_below(40).unwrap();
        assert!(started.elapsed() >= std::time::Duration::from_millis(40));
        assert_eq!(backlog.state.lock().unwrap().bytes, 40);
        encoder.join().unwrap();
    }

    #[test]
    fn a_panicking_encoder_does_not_leave_the_writer_waiting() {
        let backlog = Arc::new(Backlog::default());
        backlog.add(100);
        let encoder = {
            let backlog = Arc::clone(&backlog);
            std::thread::spawn(move || {
                let _done = Encoding {
                    backlog: &backlog,
                    bytes: 10,
                };
                panic!("an encoder failed");
            })
        };
        assert!(encoder.join().is_err());
        // 90 bytes are still queued, yet the wait returns
        backlog.wait_below(0).unwrap();
        assert!(backlog.state.lock().unwrap().broken);
    }
}
