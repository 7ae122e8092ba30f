//! The column chunks of the open row group, encoded as the batches come in.
//!
//! Each leaf column of the row group is a [`Lane`]: a queue of the pieces (leaf arrays of a
//! batch) not encoded yet and the column's encoder. Feeding a batch queues its pieces and asks
//! for a [`LaneJob::Feed`] per lane; whoever runs a feed job drains the lane's queue in order
//! while holding its encoder (a second feed job finding the encoder busy returns at once: the
//! holder drains what was queued). So both encoding threads work from the first batch on,
//! instead of waiting for the whole row group to be buffered, and each column still sees its
//! pieces in order: the same bytes as encoding the buffered row group. [`LaneJob::Close`]
//! marks the lane to be closed: whoever holds the encoder once the queue is drained closes
//! the chunk and sends it to the row group's channel. A close job never waits for a feed
//! job at work on its lane (the thread would idle meanwhile, a core of two left unused while
//! the writer waits for that row group): the feed job closes the chunk when done.
//!
//! A piece that fails to encode makes the lane failed: its later pieces are skipped and the
//! close reports the error.
//!
//! The lanes of a writer share a [`Backlog`]: the bytes queued and not encoded yet. When the
//! batches come faster than the threads encode them, the writer waits for the backlog to
//! shrink instead of queueing the rest of the row group (and the next ones) in memory.

use std::collections::VecDeque;
use std::sync::mpsc::Sender;
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

/// Where a closed chunk goes: its position in the row group and the row group's channel.
pub(crate) type ChunkSink = (usize, Sender<(usize, Result<Chunk>)>);

/// One leaf column of the open row group.
pub(crate) struct Lane {
    /// The leaf column's path, for errors.
    column: String,
    /// The pieces not encoded yet (with their bytes), and whether to close after them.
    queue: Mutex<Queue>,
    backlog: Arc<Backlog>,
    /// The encoder; `None` once closed. The first error is kept in its place.
    encoder: Mutex<Option<Result<ColumnEncoder>>>,
    /// Where the chunk goes when closed by a [`LaneJob::Close`]; taken by whoever closes it
    /// (dropped unsent if that thread fails: the row group's channel then reports it).
    sink: Mutex<Option<ChunkSink>>,
}

/// The pieces of a lane not encoded yet, and whether the chunk is to be closed after them.
struct Queue {
    pieces: VecDeque<(Piece, usize)>,
    closing: bool,
}

/// Work for the encoding threads.
pub(crate) enum LaneJob {
    /// Encode what is queued for the lane (if no other thread is at it).
    Feed(Arc<Lane>),
    /// Close the chunk once what is queued is encoded (by the thread at it, if any).
    Close(Arc<Lane>),
}

impl Lane {
    /// A lane whose chunk, closed by a [`LaneJob::Close`], goes to `sink` (`None`: closed by
    /// [`Lane::close`] only); its queued bytes counted in `backlog`.
    pub(crate) fn new(
        column: String,
        encoder: ColumnEncoder,
        sink: Option<ChunkSink>,
        backlog: Arc<Backlog>,
    ) -> Arc<Self> {
        Arc::new(Lane {
            column,
            queue: Mutex::new(Queue {
                pieces: VecDeque::new(),
                closing: false,
            }),
            backlog,
            encoder: Mutex::new(Some(Ok(encoder))),
            sink: Mutex::new(sink),
        })
    }

    fn lock_queue(&self) -> Result<MutexGuard<'_, Queue>> {
        self.queue.lock().map_err(|_| poisoned(&self.column))
    }

    /// Queues a piece of `bytes` bytes (encoded by the next feed or close of this lane).
    pub(crate) fn queue(&self, piece: Piece, bytes: usize) -> Result<()> {
        self.lock_queue()?.pieces.push_back((piece, bytes));
        self.backlog.add(bytes);
        Ok(())
    }

    fn next_piece(&self) -> Result<Option<(Piece, usize)>> {
        Ok(self.lock_queue()?.pieces.pop_front())
    }

    /// Whether the chunk is to be closed now: asked to, nothing left to encode, not closed.
    fn close_due(&self) -> bool {
        let asked = self
            .queue
            .lock()
            .map(|q| q.closing && q.pieces.is_empty())
            .unwrap_or(false);
        asked && self.sink.lock().map(|s| s.is_some()).unwrap_or(false)
    }

    /// Whether a feed has anything to do: pieces queued, or a close due.
    fn has_work(&self) -> bool {
        let queued = self
            .queue
            .lock()
            .map(|q| !q.pieces.is_empty())
            .unwrap_or(false);
        queued || self.close_due()
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
    /// this feed was for), and closes the chunk when a close is due; checks again after
    /// letting go, for a piece or a close queued meanwhile.
    pub(crate) fn feed(&self) -> Result<()> {
        loop {
            match self.encoder.try_lock() {
                Ok(mut encoder) => {
                    self.drain(&mut encoder)?;
                    if self.close_due() {
                        self.close_to_sink(&mut encoder);
                        return Ok(());
                    }
                }
                Err(TryLockError::WouldBlock) => return Ok(()),
                Err(TryLockError::Poisoned(_)) => {
                    let err = poisoned(&self.column);
                    self.send(Err(poisoned(&self.column)));
                    return Err(err);
                }
            }
            if !self.has_work() {
                return Ok(());
            }
        }
    }

    /// Asks for the chunk to be closed once its queued pieces are encoded, here if no other
    /// thread is at the lane.
    pub(crate) fn request_close(&self) -> Result<()> {
        self.lock_queue()?.closing = true;
        self.feed()
    }

    /// Closes the held encoder's chunk and sends it to the lane's sink (once).
    fn close_to_sink(&self, encoder: &mut MutexGuard<'_, Option<Result<ColumnEncoder>>>) {
        let Some((position, sink)) = self.sink.lock().ok().and_then(|mut s| s.take()) else {
            return;
        };
        let _ = sink.send((position, self.close_held(encoder)));
    }

    /// Sends `chunk` to the sink unless sent already.
    fn send(&self, chunk: Result<Chunk>) {
        if let Some((position, sink)) = self.sink.lock().ok().and_then(|mut s| s.take()) {
            let _ = sink.send((position, chunk));
        }
    }

    /// Encodes what is left and closes the chunk (waiting for a feed at work on it).
    pub(crate) fn close(&self) -> Result<Chunk> {
        let mut encoder = self.encoder.lock().map_err(|_| poisoned(&self.column))?;
        self.drain(&mut encoder)?;
        self.close_held(&mut encoder)
    }

    /// Closes the chunk of the held encoder (its queue drained).
    fn close_held(
        &self,
        encoder: &mut MutexGuard<'_, Option<Result<ColumnEncoder>>>,
    ) -> Result<Chunk> {
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

/// Runs one job (a closed chunk goes to its lane's sink).
pub(crate) fn run(job: LaneJob) -> Result<()> {
    match job {
        LaneJob::Feed(lane) => lane.feed(),
        LaneJob::Close(lane) => lane.request_close(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;

    use arrow_array::types::Int32Type;
    use arrow_array::DictionaryArray;
    use parquet::basic::{Compression, Repetition, Type as PhysicalType};
    use parquet::schema::types::{ColumnDescriptor, ColumnPath, Type};

    use super::*;

    fn string_lane(sink: Option<ChunkSink>) -> Arc<Lane> {
        let leaf = Type::primitive_type_builder("s", PhysicalType::BYTE_ARRAY)
            .with_repetition(Repetition::OPTIONAL)
            .build()
            .unwrap();
        let descr = ColumnDescriptor::new(Arc::new(leaf), 1, 0, ColumnPath::from("s"));
        let chunk =
            DictionaryChunk::strings(Arc::new(descr), Compression::UNCOMPRESSED, 1 << 20, false);
        Lane::new(
            "s".into(),
            ColumnEncoder::Dictionary(Box::new(chunk)),
            sink,
            Arc::default(),
        )
    }

    fn piece(values: &[&str]) -> Piece {
        let array: DictionaryArray<Int32Type> = values.iter().copied().collect();
        Piece::Array(Arc::new(array))
    }

    fn spliced_bytes(chunk: Chunk) -> Vec<u8> {
        match chunk {
            Chunk::Spliced(c) => {
                use parquet::file::reader::{ChunkReader, Length};
                c.bytes
                    .get_bytes(0, c.bytes.len() as usize)
                    .unwrap()
                    .to_vec()
            }
            Chunk::Arrow(_) => panic!("a dictionary lane gives spliced bytes"),
        }
    }

    #[test]
    fn a_close_asked_while_a_feed_holds_the_lane_is_done_by_that_feed() {
        let (sink, chunks) = channel();
        let lane = string_lane(Some((3, sink)));
        lane.queue(piece(&["a", "b", "a"]), 12).unwrap();
        {
            // another thread's feed at work on the lane: the close job returns at once
            let _held = lane.encoder.lock().unwrap();
            lane.request_close().unwrap();
            assert!(chunks.try_recv().is_err());
        }
        // that feed, after letting go, finds the close due
        lane.feed().unwrap();
        let (position, chunk) = chunks.try_recv().unwrap();
        assert_eq!(position, 3);
        // the same bytes as encoding and closing in one go
        let direct = string_lane(None);
        direct.queue(piece(&["a", "b", "a"]), 12).unwrap();
        assert_eq!(
            spliced_bytes(chunk.unwrap()),
            spliced_bytes(direct.close().unwrap())
        );
        // closed once: a later feed sends nothing
        lane.feed().unwrap();
        assert!(chunks.try_recv().is_err());
    }

    #[test]
    fn a_lane_gone_unclosed_ends_its_row_groups_channel() {
        let (sink, chunks) = channel();
        drop(string_lane(Some((0, sink))));
        assert!(chunks.recv().is_err());
    }

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
