//! The items of a pickled numpy object array of strings read straight into one string column
//! (Arrow's layout: `i32` offsets into one buffer, a validity per item), without a node or a
//! [`Value`] per item: the shape pandas writes for a string block or index (PyTables'
//! `ObjectAtom` pickles `numpy.ndarray` of `str` / `None` / `NaN`).
//!
//! The general machine runs the stream up to the array's data list (the last item of the
//! `(version, shape, dtype, is_fortran, data)` state of a `_reconstruct` call); the list's items
//! are read here; the general machine runs the rest. Anything this reader does not know (an item
//! of another type, an opcode other than the ones Python writes for such a list, a later
//! reference to an item) makes it give up, and the caller reads the pickle with the general
//! machine, which stays the reference. Like the machine, it never imports or calls anything.

use super::{Machine, Node, Scalar, Slot};

/// A numpy object array of strings read apart ([`crate::parse_string_array`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StringColumn {
    /// `len() + 1` offsets into `data`: item `i` is `data[offsets[i]..offsets[i + 1]]` (empty
    /// for a missing item).
    pub offsets: Vec<i32>,
    /// The UTF-8 bytes of every item, in order.
    pub data: Vec<u8>,
    /// Whether each item is a string (`false`: `None` or `NaN`); `None` when all are.
    pub valid: Option<Vec<bool>>,
}

impl StringColumn {
    /// Items in the column.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the column has no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `i` (`None` when missing or out of range).
    pub fn get(&self, i: usize) -> Option<&str> {
        if self
            .valid
            .as_ref()
            .is_some_and(|v| !v.get(i).copied().unwrap_or(false))
        {
            return None;
        }
        let start = usize::try_from(*self.offsets.get(i)?).ok()?;
        let end = usize::try_from(*self.offsets.get(i + 1)?).ok()?;
        std::str::from_utf8(self.data.get(start..end)?).ok()
    }
}

/// The item a memo entry refers to, when it refers to one.
fn item_of(memo_value: usize, nodes: usize) -> Option<usize> {
    (memo_value >= nodes).then(|| usize::MAX - memo_value)
}

/// Why reading apart stopped short: the caller falls back to the general machine.
pub(crate) struct GiveUp;

type Apart<T> = std::result::Result<T, GiveUp>;

/// Where the items of the data list stand against the list opcodes around them.
#[derive(Default)]
pub(crate) struct ListState {
    /// Items pushed since the list's last APPEND / APPENDS (appended in order when it comes).
    pub(crate) pending: usize,
    /// Inside a MARK ... APPENDS.
    pub(crate) in_mark: bool,
}

impl ListState {
    /// Checks that item `n` (counted from 0) may be pushed now, and counts it.
    pub(crate) fn item(&mut self, n: usize, max_items: usize) -> Apart<()> {
        if n >= max_items || (self.pending > 0 && !self.in_mark) {
            return Err(GiveUp);
        }
        self.pending += 1;
        Ok(())
    }
}

/// What the items of the data list are read into: one column ([`Builder`]), or batches of
/// rows ([`super::stream`]).
pub(crate) trait ItemSink {
    fn push_text(&mut self, text: &[u8]) -> Apart<()>;
    fn push_missing(&mut self) -> Apart<()>;
    /// A copy of item `j` (a memo reference to an item already read).
    fn push_copy(&mut self, j: usize) -> Apart<()>;
    /// Items read so far.
    fn items(&self) -> usize;
    fn list(&mut self) -> &mut ListState;
}

/// The column being built, with the state of the list opcodes around its items.
struct Builder {
    column: StringColumn,
    list: ListState,
    /// Most items (the limits' value count).
    max_items: usize,
}

impl ItemSink for Builder {
    fn push_text(&mut self, text: &[u8]) -> Apart<()> {
        self.column.data.extend_from_slice(text);
        self.end_item(true)
    }

    fn push_missing(&mut self) -> Apart<()> {
        self.end_item(false)
    }

    fn push_copy(&mut self, j: usize) -> Apart<()> {
        let (range, valid) = self.column.item_range(j)?;
        self.column.data.extend_from_within(range);
        self.end_item(valid)
    }

    fn items(&self) -> usize {
        self.column.len()
    }

    fn list(&mut self) -> &mut ListState {
        &mut self.list
    }
}

impl StringColumn {
    /// The byte range and validity of item `j`.
    pub(crate) fn item_range(&self, j: usize) -> Apart<(std::ops::Range<usize>, bool)> {
        let (Some(&start), Some(&end)) = (self.offsets.get(j), self.offsets.get(j + 1)) else {
            return Err(GiveUp);
        };
        let valid = self.valid.as_ref().is_none_or(|v| v.get(j) == Some(&true));
        let range = usize::try_from(start).map_err(|_| GiveUp)?
            ..usize::try_from(end).map_err(|_| GiveUp)?;
        Ok((range, valid))
    }

    /// Ends the item whose text was just appended to `data`.
    pub(crate) fn end_item(&mut self, valid: bool) -> Apart<()> {
        let n = self.len();
        // Arrow's i32 offsets: a larger column is the general path's (it says why).
        let end = i32::try_from(self.data.len()).map_err(|_| GiveUp)?;
        self.offsets.push(end);
        match (&mut self.valid, valid) {
            (Some(v), _) => v.push(valid),
            (None, true) => {}
            (None, false) => {
                let mut v = Vec::with_capacity(self.offsets.capacity());
                v.resize(n, true);
                v.push(false);
                self.valid = Some(v);
            }
        }
        Ok(())
    }
}

impl Builder {
    fn end_item(&mut self, valid: bool) -> Apart<()> {
        self.list.item(self.column.len(), self.max_items)?;
        self.column.end_item(valid)
    }
}

impl Machine<'_> {
    /// The number of items the array's data list must hold when the list just pushed (by
    /// EMPTY_LIST or an empty LIST) is the last item of a numpy array's state being built:
    /// the stack ends `_reconstruct(...)`, MARK, [version], shape, dtype, is_fortran, list.
    pub(crate) fn data_list_items(&self) -> Option<usize> {
        let node = |back: usize| match self.stack.len().checked_sub(back).map(|i| self.stack[i]) {
            Some(Slot::Node(i)) => self.nodes.get(i),
            _ => None,
        };
        let is_mark = |back: usize| {
            matches!(
                self.stack.len().checked_sub(back).map(|i| self.stack[i]),
                Some(Slot::Mark)
            )
        };
        if !matches!(node(1), Some(Node::List(items)) if items.is_empty())
            || !matches!(node(2), Some(Node::Scalar(Scalar::Bool(_))))
        {
            return None;
        }
        let call = match (is_mark(5), is_mark(6)) {
            (true, _) => node(6)?,
            (false, true) => node(7)?,
            _ => return None,
        };
        let Node::Reduce(callable, _) = call else {
            return None;
        };
        if !self.is_reconstruct(*callable) {
            return None;
        }
        let Node::Tuple(dims) = node(4)? else {
            return None;
        };
        dims.iter()
            .try_fold(1usize, |n, &d| match self.nodes.get(d)? {
                Node::Scalar(Scalar::Int(d)) => n.checked_mul(usize::try_from(*d).ok()?),
                _ => None,
            })
    }

    fn is_reconstruct(&self, i: usize) -> bool {
        let Some(Node::Leaf(v)) = self.nodes.get(i) else {
            return false;
        };
        let crate::Value::Global { module, name } = &**v else {
            return false;
        };
        name == "_reconstruct"
            && matches!(
                module.as_str(),
                "numpy.core.multiarray" | "numpy._core.multiarray"
            )
    }

    /// Reads the items of the data list just pushed (`expected` of them, as the shape says)
    /// up to the first opcode that is not about them, which is left for the general machine.
    /// Memo entries for items hold [`super::item_ref`]s: the general machine refuses to hand them out.
    pub(crate) fn read_string_items(&mut self, expected: usize) -> Apart<StringColumn> {
        let remaining = self.bytes.len() - self.at;
        // Each item takes a byte of the stream at least: a shape beyond that is not believed.
        let items = expected.min(remaining);
        let mut b = Builder {
            column: StringColumn {
                offsets: Vec::with_capacity(items + 1),
                // The text is in the stream: its rest bounds it (copies of items aside).
                data: Vec::with_capacity(remaining),
                valid: None,
            },
            list: ListState::default(),
            max_items: self.limits.max_values,
        };
        b.column.offsets.push(0);
        loop {
            let at = self.at;
            let op = self.u8().map_err(|_| GiveUp)?;
            if !self.string_item_op(op, &mut b)? {
                self.end_items(at, &mut b)?;
                break;
            }
        }
        if b.column.len() != expected {
            return Err(GiveUp);
        }
        Ok(b.column)
    }

    /// The items end at `at` (an opcode not about them, left for the general machine): none
    /// may be left outside the list.
    pub(crate) fn end_items(&mut self, at: usize, b: &mut impl ItemSink) -> Apart<()> {
        let list = b.list();
        if list.in_mark || list.pending > 0 {
            return Err(GiveUp);
        }
        self.at = at;
        Ok(())
    }

    /// Applies one opcode of the list's items; `false` when `op` is not one of them.
    pub(crate) fn string_item_op(&mut self, op: u8, b: &mut impl ItemSink) -> Apart<bool> {
        let ok = |r: sciio_core::Result<()>| r.map_err(|_| GiveUp);
        match op {
            0x8c | b'X' | 0x8d => {
                let n = match op {
                    0x8c => u64::from(self.u8().map_err(|_| GiveUp)?),
                    b'X' => u64::from(self.u32().map_err(|_| GiveUp)?),
                    _ => self.u64().map_err(|_| GiveUp)?,
                };
                let text = self.sized(n).map_err(|_| GiveUp)?;
                // Lone surrogates ("surrogatepass"): the general path decodes them.
                std::str::from_utf8(text).map_err(|_| GiveUp)?;
                b.push_text(text)?;
            }
            b'V' => {
                let line = self.line().map_err(|_| GiveUp)?;
                b.push_text(super::raw_unicode_escape(line).as_bytes())?;
            }
            // Python 2 `str` and `bytes`: text as their UTF-8, lossily (as the general path).
            b'U' | b'T' | b'C' | b'B' | 0x8e | 0x96 | b'S' => {
                let bytes = self.bytes_item(op)?;
                b.push_text(String::from_utf8_lossy(&bytes).as_bytes())?;
            }
            b'N' => b.push_missing()?,
            b'G' | b'F' => {
                let v = if op == b'G' {
                    f64::from_be_bytes(self.le().map_err(|_| GiveUp)?)
                } else {
                    let text = self.text_line("FLOAT").map_err(|_| GiveUp)?;
                    text.trim().parse::<f64>().map_err(|_| GiveUp)?
                };
                if !v.is_nan() {
                    return Err(GiveUp);
                }
                b.push_missing()?
            }
            b'h' | b'j' | b'g' => {
                let key = self.get_key(op)?;
                self.push_memo_item(key, b)?;
            }
            0x94 | b'q' | b'r' | b'p' => {
                let key = match op {
                    0x94 => self.memo.len() as u64,
                    _ => self.get_key(op)?,
                };
                let state = (b.list().pending, b.list().in_mark);
                match state {
                    // The list itself (protocol 0 and 1 memoize it after LIST).
                    (0, false) => ok(self.memo_put(key, op))?,
                    (0, true) => return Err(GiveUp),
                    _ => {
                        if self.memo.len() >= self.limits.max_values {
                            return Err(GiveUp);
                        }
                        self.memo.put_item(key, b.items().saturating_sub(1));
                    }
                }
            }
            0x95 => {
                let n = self.u64().map_err(|_| GiveUp)?;
                if n > self.end.saturating_sub(self.at) as u64 {
                    return Err(GiveUp);
                }
            }
            _ => return Ok(list_op(op, b.list())),
        }
        Ok(true)
    }

    /// The bytes of a bytes-like item opcode.
    fn bytes_item(&mut self, op: u8) -> Apart<Vec<u8>> {
        let n = match op {
            b'S' => {
                let line = self.line().map_err(|_| GiveUp)?;
                return super::unquote(line).ok_or(GiveUp);
            }
            b'U' | b'C' => u64::from(self.u8().map_err(|_| GiveUp)?),
            b'T' => u64::try_from(self.i32().map_err(|_| GiveUp)?).map_err(|_| GiveUp)?,
            b'B' => u64::from(self.u32().map_err(|_| GiveUp)?),
            _ => self.u64().map_err(|_| GiveUp)?,
        };
        Ok(self.sized(n).map_err(|_| GiveUp)?.to_vec())
    }

    /// The key of a GET or PUT opcode.
    fn get_key(&mut self, op: u8) -> Apart<u64> {
        match op {
            b'h' | b'q' => Ok(u64::from(self.u8().map_err(|_| GiveUp)?)),
            b'j' | b'r' => Ok(u64::from(self.u32().map_err(|_| GiveUp)?)),
            _ => {
                let line = self.text_line("memo key").map_err(|_| GiveUp)?;
                line.trim().parse().map_err(|_| GiveUp)
            }
        }
    }

    /// An item that is a memo reference: to an item read before, or to a string or missing
    /// value of the stream before the list (Python shares interned one-letter strings).
    fn push_memo_item(&mut self, key: u64, b: &mut impl ItemSink) -> Apart<()> {
        let i = self.memo.get(key).ok_or(GiveUp)?;
        if let Some(j) = item_of(i, self.nodes.len()) {
            return b.push_copy(j);
        }
        match self.nodes.get(i).ok_or(GiveUp)? {
            Node::Text(start, end) => {
                let text = self.bytes.get(*start..*end).ok_or(GiveUp)?;
                std::str::from_utf8(text).map_err(|_| GiveUp)?;
                b.push_text(text)
            }
            Node::Scalar(Scalar::None) => b.push_missing(),
            Node::Scalar(Scalar::Float(f)) if f.is_nan() => b.push_missing(),
            Node::Leaf(v) => match &**v {
                crate::Value::Str(s) => b.push_text(s.as_bytes()),
                crate::Value::Bytes(bytes) => {
                    b.push_text(String::from_utf8_lossy(bytes).as_bytes())
                }
                _ => Err(GiveUp),
            },
            _ => Err(GiveUp),
        }
    }
}

/// MARK, APPENDS and APPEND around the items; `false` for any other opcode (or one out of
/// place).
fn list_op(op: u8, list: &mut ListState) -> bool {
    match op {
        b'(' if !list.in_mark && list.pending == 0 => list.in_mark = true,
        b'e' if list.in_mark => {
            list.in_mark = false;
            list.pending = 0;
        }
        b'a' if !list.in_mark && list.pending == 1 => list.pending = 0,
        _ => return false,
    }
    true
}
