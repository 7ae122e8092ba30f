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

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

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

/// One leaf column of the open row group.
pub(crate) struct Lane {
    /// The leaf column's path, for errors.
    column: String,
    queue: Mutex<VecDeque<Piece>>,
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
    pub(crate) fn new(column: String, encoder: ColumnEncoder) -> Arc<Self> {
        Arc::new(Lane {
            column,
            queue: Mutex::new(VecDeque::new()),
            encoder: Mutex::new(Some(Ok(encoder))),
        })
    }

    /// Queues a piece (encoded by the next feed or close of this lane).
    pub(crate) fn queue(&self, piece: Piece) -> Result<()> {
        self.queue
            .lock()
            .map_err(|_| poisoned(&self.column))?
            .push_back(piece);
        Ok(())
    }

    fn next_piece(&self) -> Result<Option<Piece>> {
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
        while let Some(piece) = self.next_piece()? {
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
