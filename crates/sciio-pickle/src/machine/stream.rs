//! The string fast path ([`super::strings`]) over a stream read in pieces: a pickled numpy
//! object array of strings (pandas' string block, 30 MB for a million rows) is read through
//! a window of about [`PIECE`] bytes and its items handed out in batches of rows, so neither
//! the pickle nor the whole column is ever held.
//!
//! Reading is in two passes over the stream. The first ([`crate::scan_string_array`]) keeps
//! no text: it checks that the whole pickle is the shape the fast path reads (the same
//! checks as [`crate::parse_string_array`], so a pickle it does not recognise goes to the
//! whole path before any row is handed out), counts the items, notes whether any is missing,
//! and which items a later memo reference copies. The second ([`crate::StringBatches`])
//! hands out the batches, keeping a copy of just those items.

use std::collections::{HashMap, HashSet};
use std::io::Read;

use sciio_core::{Error, Result};

use super::strings::{GiveUp, ItemSink, ListState};
use super::{data_list, Expander, Machine, Memo, Node, Slot};
use crate::{ParseLimits, StringColumn, Value};

/// Bytes read at a time by default; an item longer than this widens the window to hold it.
pub const PIECE: usize = 1 << 20;

/// Most bytes before the data list read in pieces (pandas writes a few hundred).
const PREFIX: usize = 1 << 20;

/// The machine's state between windows (its bytes are the window's, which moves).
struct Parts {
    limits: ParseLimits,
    nodes: Vec<Node>,
    stack: Vec<Slot>,
    memo: Memo,
}

impl<'a> Machine<'a> {
    fn suspend(self) -> (Parts, usize) {
        let parts = Parts {
            limits: self.limits,
            nodes: self.nodes,
            stack: self.stack,
            memo: self.memo,
        };
        (parts, self.at)
    }

    fn resume(bytes: &'a [u8], at: usize, end: usize, parts: Parts) -> Self {
        Machine {
            bytes,
            at,
            end,
            short: false,
            limits: parts.limits,
            nodes: parts.nodes,
            stack: parts.stack,
            memo: parts.memo,
        }
    }

    /// Strings still in the window become values of their own (the window moves on).
    /// Invalid UTF-8 (lone surrogates) gives up: the whole path decides what it means.
    fn own_texts(&mut self) -> Apart<()> {
        for node in &mut self.nodes {
            if let Node::Text(start, end) = *node {
                let bytes = self.bytes.get(start..end).ok_or(GiveUp)?;
                let text = std::str::from_utf8(bytes).map_err(|_| GiveUp)?;
                *node = super::leaf(Value::Str(text.to_string()));
            }
        }
        Ok(())
    }
}

type Apart<T> = std::result::Result<T, GiveUp>;

/// Why a pass stopped: not the shape the fast path reads, or the stream could not be read.
enum Stop {
    GiveUp,
    Io(Error),
}

impl From<GiveUp> for Stop {
    fn from(_: GiveUp) -> Self {
        Stop::GiveUp
    }
}

/// What the first pass learnt of a pickled numpy object array of strings.
#[derive(Debug, Clone, PartialEq)]
pub struct StringArrayScan {
    /// The array's `_reconstruct` call with an empty data list (shape, dtype).
    pub value: Value,
    /// Items in the array.
    pub rows: usize,
    /// Whether an item is missing (`None` or `NaN`).
    pub has_missing: bool,
    /// Items copied by a later memo reference (kept by the second pass).
    needed: Vec<usize>,
}

/// The text and validity of the items later copies need, by item.
type Kept = HashMap<usize, (Vec<u8>, bool)>;

/// Where the items go: nowhere but counts (first pass), or batches of rows (second pass).
struct Sink {
    /// The batch being filled (second pass); its text only, offsets from 0.
    column: StringColumn,
    /// Items handed out before `column`.
    base: usize,
    list: ListState,
    max_items: usize,
    /// Second pass: items `needed` by later copies, and their text once read.
    keep: Option<(HashSet<usize>, Kept)>,
    /// First pass: items copied later, whether any item is missing, items seen.
    needed: Vec<usize>,
    missing: bool,
    count: usize,
}

impl Sink {
    fn new(max_items: usize, keep: Option<&[usize]>) -> Self {
        Sink {
            column: fresh_column(),
            base: 0,
            list: ListState::default(),
            max_items,
            keep: keep.map(|k| (k.iter().copied().collect(), HashMap::new())),
            needed: Vec::new(),
            missing: false,
            count: 0,
        }
    }

    /// Ends item `count` (its text already in the batch on the second pass).
    fn end_item(&mut self, valid: bool) -> Apart<()> {
        self.list.item(self.count, self.max_items)?;
        self.missing |= !valid;
        if let Some((needed, kept)) = &mut self.keep {
            self.column.end_item(valid)?;
            if needed.contains(&self.count) {
                let (range, _) = self.column.item_range(self.column.len() - 1)?;
                let text = self.column.data.get(range).ok_or(GiveUp)?.to_vec();
                kept.insert(self.count, (text, valid));
            }
        }
        self.count += 1;
        Ok(())
    }
}

fn fresh_column() -> StringColumn {
    StringColumn {
        offsets: vec![0],
        data: Vec::new(),
        valid: None,
    }
}

impl ItemSink for Sink {
    fn push_text(&mut self, text: &[u8]) -> Apart<()> {
        if self.keep.is_some() {
            self.column.data.extend_from_slice(text);
        }
        self.end_item(true)
    }

    fn push_missing(&mut self) -> Apart<()> {
        self.end_item(false)
    }

    fn push_copy(&mut self, j: usize) -> Apart<()> {
        if j >= self.count {
            return Err(GiveUp);
        }
        let Some((_, kept)) = &self.keep else {
            self.needed.push(j);
            // A copy of a missing item is missing: that item already counted.
            return self.end_item(true);
        };
        let valid = if j >= self.base {
            let (range, valid) = self.column.item_range(j - self.base)?;
            self.column.data.extend_from_within(range);
            valid
        } else {
            let (text, valid) = kept.get(&j).ok_or(GiveUp)?;
            self.column.data.extend_from_slice(text);
            *valid
        };
        self.end_item(valid)
    }

    fn items(&self) -> usize {
        self.count
    }

    fn list(&mut self) -> &mut ListState {
        &mut self.list
    }
}

/// A pickled numpy object array of strings read from a stream in batches of rows
/// ([`crate::stream_string_array`]).
pub struct StringBatches<R> {
    reader: R,
    /// The stream's length.
    len: u64,
    /// Bytes of the stream from `window_at`.
    window: Vec<u8>,
    window_at: u64,
    /// The machine's place in the window.
    at: usize,
    parts: Option<Parts>,
    sink: Sink,
    /// Items the array's shape says, and the data list's node.
    expected: usize,
    list: usize,
    batch_rows: usize,
    /// Bytes read at a time.
    piece: usize,
    /// The tree once the stream is read to its end.
    value: Option<Value>,
    /// An error was handed out: the iterator ends.
    failed: bool,
}

impl<R> std::fmt::Debug for StringBatches<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "StringBatches({} of {} items, at byte {} of {})",
            self.sink.count,
            self.expected,
            self.window_at + self.at as u64,
            self.len
        )
    }
}

impl<R: Read> StringBatches<R> {
    /// Reads the pickle up to its data list; `Ok(None)` when it is not the array the fast
    /// path reads.
    fn open(
        reader: R,
        len: u64,
        limits: &ParseLimits,
        (batch_rows, piece): (usize, usize),
        keep: Option<&[usize]>,
    ) -> Result<Option<Self>> {
        let mut stream = StringBatches {
            reader,
            len,
            window: Vec::new(),
            window_at: 0,
            at: 0,
            parts: None,
            sink: Sink::new(limits.max_values, keep),
            expected: 0,
            list: 0,
            batch_rows: batch_rows.max(1),
            piece: piece.max(1),
            value: None,
            failed: false,
        };
        if usize::try_from(len).is_err() || !stream.refill()? {
            return Ok(None);
        }
        // The stream before the data list (a few hundred bytes) is read again from its start
        // while the window is too short for it.
        let (expected, list, m) = loop {
            let mut m = Machine::with_nodes(&stream.window, limits, 64);
            m.end = usize::try_from(len).unwrap_or(usize::MAX);
            match to_data_list(&mut m) {
                Ok((expected, list)) => break (expected, list, m),
                Err(GiveUp) if m.short && stream.window.len() < PREFIX => {}
                Err(GiveUp) => return Ok(None),
            }
            if !stream.refill()? {
                return Ok(None);
            }
        };
        let mut m = m;
        if m.own_texts().is_err() {
            return Ok(None);
        }
        let (parts, at) = m.suspend();
        stream.parts = Some(parts);
        stream.at = at;
        stream.expected = expected;
        stream.list = list;
        Ok(Some(stream))
    }

    /// The stream's end counted from the window's start.
    fn end(&self) -> usize {
        usize::try_from(self.len - self.window_at).unwrap_or(usize::MAX)
    }

    /// Drops the bytes read and reads a piece more; `false` at the end of the stream.
    fn refill(&mut self) -> Result<bool> {
        self.window.drain(..self.at.min(self.window.len()));
        self.window_at += self.at as u64;
        self.at = 0;
        let held = self.window_at + self.window.len() as u64;
        let left = self.len.saturating_sub(held);
        if left == 0 {
            return Ok(false);
        }
        let n = usize::try_from(left).unwrap_or(self.piece).min(self.piece);
        let old = self.window.len();
        self.window.resize(old + n, 0);
        self.reader
            .read_exact(&mut self.window[old..])
            .map_err(|e| Error::io("cannot read the pickle", e))?;
        Ok(true)
    }

    /// The next batch of rows; `None` after the last.
    fn next_batch(&mut self) -> std::result::Result<Option<StringColumn>, Stop> {
        while self.value.is_none() {
            let parts = self.parts.take().ok_or(Stop::GiveUp)?;
            let end = self.end();
            let mut m = Machine::resume(&self.window, self.at, end, parts);
            let step = items(&mut m, &mut self.sink, self.batch_rows);
            let short = m.short;
            let (parts, at) = m.suspend();
            self.parts = Some(parts);
            self.at = at;
            match step {
                Ok(Some(true)) => return Ok(Some(self.take_batch())),
                Ok(Some(false)) => {
                    if !self.refill().map_err(Stop::Io)? {
                        return Err(Stop::GiveUp);
                    }
                }
                Ok(None) => self.finish()?,
                Err(GiveUp) if short => {
                    if !self.refill().map_err(Stop::Io)? {
                        return Err(Stop::GiveUp);
                    }
                }
                Err(GiveUp) => return Err(Stop::GiveUp),
            }
        }
        let last = self.take_batch();
        Ok((!last.is_empty()).then_some(last))
    }

    fn take_batch(&mut self) -> StringColumn {
        let batch = std::mem::replace(&mut self.sink.column, fresh_column());
        self.sink.base += batch.len();
        batch
    }

    /// Reads the rest of the stream after the items (a few bytes: BUILD, STOP) and checks
    /// the array as the whole path does.
    fn finish(&mut self) -> std::result::Result<(), Stop> {
        if self.sink.count != self.expected {
            return Err(Stop::GiveUp);
        }
        let rest = self.len - self.window_at - self.at as u64;
        if rest > PIECE.max(self.piece) as u64 {
            return Err(Stop::GiveUp);
        }
        while self.window.len() - self.at < rest as usize {
            if !self.refill().map_err(Stop::Io)? {
                return Err(Stop::GiveUp);
            }
        }
        let parts = self.parts.take().ok_or(Stop::GiveUp)?;
        let mut m = Machine::resume(&self.window, self.at, self.end(), parts);
        let root = loop {
            let op = m.u8().map_err(|_| GiveUp)?;
            if op == b'.' {
                break m.pop(op).map_err(|_| GiveUp)?;
            }
            m.step(op).map_err(|_| GiveUp)?;
        };
        let is_array = matches!(m.nodes.get(root), Some(Node::Build(..)));
        let untouched =
            matches!(m.nodes.get(self.list), Some(Node::List(items)) if items.is_empty());
        if !is_array || !untouched || data_list(&m.nodes, root) != Some(self.list) {
            return Err(Stop::GiveUp);
        }
        let value = Expander::new(m.bytes, &m.nodes, &m.limits, None)
            .expand(root)
            .map_err(|_| GiveUp)?;
        self.value = Some(value);
        Ok(())
    }
}

/// Runs the general machine to the array's data list: the items it must hold, its node.
fn to_data_list(m: &mut Machine<'_>) -> Apart<(usize, usize)> {
    loop {
        let op = m.u8().map_err(|_| GiveUp)?;
        if op == b'.' {
            return Err(GiveUp);
        }
        m.step(op).map_err(|_| GiveUp)?;
        if matches!(op, b']' | b'l') {
            if let Some(expected) = m.data_list_items() {
                return Ok((expected, m.top(op).map_err(|_| GiveUp)?));
            }
        }
    }
}

/// Reads items to a full batch (`Some(true)`), the window's end (`Some(false)`) or the
/// end of the items (`None`, the machine left at the opcode after them).
fn items(m: &mut Machine<'_>, sink: &mut Sink, batch_rows: usize) -> Apart<Option<bool>> {
    loop {
        let at = m.at;
        if at == m.bytes.len() && at < m.end {
            return Ok(Some(false));
        }
        let op = m.u8().inspect_err(|_| m.at = at).map_err(|_| GiveUp)?;
        match m.string_item_op(op, sink) {
            Ok(true) => {
                if sink.keep.is_some() && sink.column.len() >= batch_rows {
                    return Ok(Some(true));
                }
            }
            Ok(false) => {
                m.end_items(at, sink)?;
                return Ok(None);
            }
            Err(GiveUp) => {
                m.at = at;
                return Err(GiveUp);
            }
        }
    }
}

/// The first pass ([`crate::scan_string_array`]).
pub(crate) fn scan<R: Read>(
    reader: R,
    len: u64,
    limits: &ParseLimits,
    piece: usize,
) -> Result<Option<StringArrayScan>> {
    let Some(mut stream) = StringBatches::open(reader, len, limits, (usize::MAX, piece), None)?
    else {
        return Ok(None);
    };
    match stream.next_batch() {
        Ok(_) => {}
        Err(Stop::GiveUp) => return Ok(None),
        Err(Stop::Io(e)) => return Err(e),
    }
    let Some(value) = stream.value.take() else {
        return Ok(None);
    };
    let mut needed = std::mem::take(&mut stream.sink.needed);
    needed.sort_unstable();
    needed.dedup();
    Ok(Some(StringArrayScan {
        value,
        rows: stream.sink.count,
        has_missing: stream.sink.missing,
        needed,
    }))
}

impl<R: Read> StringBatches<R> {
    /// The second pass: the items of the array `scan` describes, `batch_rows` at a time.
    pub(crate) fn start(
        reader: R,
        len: u64,
        limits: &ParseLimits,
        scan: &StringArrayScan,
        rows_and_piece: (usize, usize),
    ) -> Result<Self> {
        StringBatches::open(reader, len, limits, rows_and_piece, Some(&scan.needed))?
            .ok_or_else(changed)
    }
}

/// The second pass met what the first did not.
fn changed() -> Error {
    Error::format("pickle: the stream changed between its two readings")
}

impl<R: Read> Iterator for StringBatches<R> {
    type Item = Result<StringColumn>;

    fn next(&mut self) -> Option<Result<StringColumn>> {
        if self.failed {
            return None;
        }
        let batch = self.next_batch();
        self.failed = batch.is_err();
        match batch {
            Ok(batch) => batch.map(Ok),
            Err(Stop::GiveUp) => Some(Err(changed())),
            Err(Stop::Io(e)) => Some(Err(e)),
        }
    }
}
