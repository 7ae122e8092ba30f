//! The pickle virtual machine, minus every effect: opcodes build nodes in an arena, containers
//! hold node indices (so a memoized list that is appended to later is the same list wherever
//! the memo hands it out), and the result is expanded into a [`Value`] tree at STOP.

use std::collections::HashMap;

use sciio_core::{Error, ErrorKind, Result};

use crate::Value;

pub(crate) mod stream;
pub(crate) mod strings;

use strings::{GiveUp, StringColumn};

/// Bounds on what a pickle may make the reader build.
///
/// Defaults: 16 Mi values (in the arena and in the expanded tree), a nesting depth of 1000.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseLimits {
    /// Most values built or expanded (shared values count once per place they appear).
    pub max_values: usize,
    /// Deepest nesting of containers and calls.
    pub max_depth: usize,
    /// Most bytes of text and binary data in the values built: a string the stream holds
    /// once may be referenced (memoised) millions of times, each place a copy.
    pub max_bytes: usize,
}

impl Default for ParseLimits {
    fn default() -> Self {
        ParseLimits {
            max_values: 16 << 20,
            max_depth: 1000,
            // sciio_core::Limits' default allocation budget
            max_bytes: 16 << 30,
        }
    }
}

/// One node of the arena; containers refer to other nodes by index.
#[derive(Debug, Clone)]
enum Node {
    /// A value of no parts (boxed: nodes stay small, a Value is large).
    Leaf(Box<Value>),
    /// Leaves common in large lists, unboxed.
    Scalar(Scalar),
    /// A `str` still in the stream: its bytes are `bytes[start..end]` (UTF-8, decoded when
    /// expanded), so reading a string allocates nothing.
    Text(usize, usize),
    List(Vec<usize>),
    Tuple(Vec<usize>),
    Dict(Vec<(usize, usize)>),
    Set(Vec<usize>),
    FrozenSet(Vec<usize>),
    Reduce(usize, usize),
    NewObj(Box<NewObjParts>),
    Build(usize, usize),
    Persistent(usize),
}

/// NEWOBJ's class, positional and keyword arguments (boxed in [`Node`]).
type NewObjParts = (usize, Vec<usize>, Vec<(usize, usize)>);

/// An unboxed leaf.
#[derive(Debug, Clone, Copy)]
enum Scalar {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
}

/// A leaf node for `value`.
fn leaf(value: Value) -> Node {
    match value {
        Value::None => Node::Scalar(Scalar::None),
        Value::Bool(b) => Node::Scalar(Scalar::Bool(b)),
        Value::Int(i) => Node::Scalar(Scalar::Int(i)),
        Value::Float(f) => Node::Scalar(Scalar::Float(f)),
        other => Node::Leaf(Box::new(other)),
    }
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Mark,
    Node(usize),
}

pub(crate) struct Machine<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Where the stream ends, counted from `bytes[0]`: beyond `bytes` when they are a window
    /// of a stream read in pieces ([`stream`]).
    end: usize,
    /// Set when a read ran past `bytes` but not past `end`: more of the stream is needed.
    short: bool,
    limits: ParseLimits,
    nodes: Vec<Node>,
    stack: Vec<Slot>,
    memo: Memo,
}

/// The memo: keys are dense from 0 in what Python writes (MEMOIZE uses the memo's length,
/// BINPUT counts up), so they live in a vector; any other key in a map. Disjoint: a key
/// moves from the map to the vector when the vector reaches it. Entries for the items of a
/// list read apart ([`item_ref`]) are kept as runs of consecutive keys for
/// consecutive items (Python memoizes every string): a million strings cost one run, not a
/// million entries. Disjoint from the vector and the map too.
#[derive(Default)]
struct Memo {
    dense: Vec<usize>,
    sparse: HashMap<u64, usize>,
    /// Runs sorted by key, none overlapping.
    items: Vec<ItemRun>,
    /// Entries in `items`.
    item_entries: usize,
}

/// Keys `key..key + len` refer to items `item..item + len` of a list read apart.
#[derive(Clone, Copy)]
struct ItemRun {
    key: u64,
    item: usize,
    len: usize,
}

impl Memo {
    fn len(&self) -> usize {
        self.dense.len() + self.sparse.len() + self.item_entries
    }

    fn get(&self, key: u64) -> Option<usize> {
        match usize::try_from(key) {
            Ok(k) if k < self.dense.len() => Some(self.dense[k]),
            _ => self
                .sparse
                .get(&key)
                .copied()
                .or_else(|| self.item_of(key).map(item_ref)),
        }
    }

    /// The item a key of the runs refers to.
    fn item_of(&self, key: u64) -> Option<usize> {
        let at = self
            .items
            .partition_point(|r| r.key <= key)
            .checked_sub(1)?;
        let run = self.items[at];
        let off = usize::try_from(key - run.key).ok()?;
        (off < run.len).then(|| run.item + off)
    }

    fn put(&mut self, key: u64, node: usize) {
        self.forget_item(key);
        match usize::try_from(key) {
            Ok(k) if k < self.dense.len() => self.dense[k] = node,
            Ok(k) if k == self.dense.len() => {
                self.sparse.remove(&key);
                self.dense.push(node);
            }
            _ => {
                self.sparse.insert(key, node);
            }
        }
    }

    /// Stores item `item` of the list read apart at `key`: in a run when `key` is new and
    /// beyond every run, as any entry otherwise.
    fn put_item(&mut self, key: u64, item: usize) {
        let beyond = self
            .items
            .last()
            .is_none_or(|r| key >= r.key.saturating_add(r.len as u64));
        if !beyond || self.get(key).is_some() {
            self.put(key, item_ref(item));
            return;
        }
        self.item_entries += 1;
        if let Some(last) = self.items.last_mut() {
            if last.key + last.len as u64 == key && last.item + last.len == item {
                last.len += 1;
                return;
            }
        }
        self.items.push(ItemRun { key, item, len: 1 });
    }

    /// Takes `key` out of the runs (a later PUT replaces it).
    fn forget_item(&mut self, key: u64) {
        let Some(at) = self.items.partition_point(|r| r.key <= key).checked_sub(1) else {
            return;
        };
        let run = self.items[at];
        let off = key - run.key;
        if off >= run.len as u64 {
            return;
        }
        let off = off as usize;
        self.item_entries -= 1;
        let after = ItemRun {
            key: key + 1,
            item: run.item + off + 1,
            len: run.len - off - 1,
        };
        self.items[at].len = off;
        if after.len > 0 {
            self.items.insert(at + 1, after);
        }
        if off == 0 {
            self.items.remove(at);
        }
    }
}

/// A memo entry made for item `j` of the column, told apart from arena node indices (which
/// stay far below: the arena is bounded by [`crate::ParseLimits::max_values`]).
pub(crate) fn item_ref(j: usize) -> usize {
    usize::MAX - j
}

fn format_at(at: usize, what: impl Into<String>) -> Error {
    Error::format(format!("pickle: {}", what.into())).with_offset(at as u64)
}

impl<'a> Machine<'a> {
    pub(crate) fn new(bytes: &'a [u8], limits: &ParseLimits) -> Self {
        // About one node per 8 bytes of a large pickle of short strings: reserved so the
        // arena is not copied as it grows (pages untouched cost nothing), at most 4 Mi
        // nodes (128 MiB) up front.
        let nodes = (bytes.len() / 8).min(limits.max_values).min(1 << 22);
        Self::with_nodes(bytes, limits, nodes)
    }

    /// A machine whose arena is reserved for `nodes` nodes.
    fn with_nodes(bytes: &'a [u8], limits: &ParseLimits, nodes: usize) -> Self {
        Machine {
            bytes,
            at: 0,
            end: bytes.len(),
            short: false,
            limits: *limits,
            nodes: Vec::with_capacity(nodes),
            stack: Vec::new(),
            memo: Memo::default(),
        }
    }

    // ---- reading the stream ----

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            self.short = self.at.checked_add(n).is_some_and(|e| e <= self.end);
            return Err(Error::truncated(format!(
                "pickle: the stream ends at byte {} inside an item of {n} bytes",
                self.bytes.len()
            ))
            .with_offset(self.bytes.len() as u64));
        };
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn le<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut word = [0u8; N];
        word.copy_from_slice(self.take(N)?);
        Ok(word)
    }

    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.le()?))
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.le()?))
    }

    fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.le()?))
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.le()?))
    }

    /// A length, checked against the bytes that remain before anything is allocated.
    fn sized(&mut self, n: u64) -> Result<&'a [u8]> {
        let n = usize::try_from(n)
            .map_err(|_| format_at(self.at, "a length over the address space"))?;
        self.take(n)
    }

    /// A text line of the protocol-0 opcodes, without its newline.
    fn line(&mut self) -> Result<&'a [u8]> {
        let rest = &self.bytes[self.at..];
        let Some(len) = rest.iter().position(|&b| b == b'\n') else {
            self.short = self.bytes.len() < self.end;
            return Err(Error::truncated(format!(
                "pickle: the stream ends at byte {} inside a text line",
                self.bytes.len()
            ))
            .with_offset(self.bytes.len() as u64));
        };
        let line = &rest[..len];
        self.at += len + 1;
        Ok(line)
    }

    fn text_line(&mut self, what: &str) -> Result<&'a str> {
        let start = self.at;
        let line = self.line()?;
        std::str::from_utf8(line).map_err(|_| format_at(start, format!("{what} is not text")))
    }

    // ---- the arena and the stack ----

    fn add(&mut self, node: Node) -> Result<usize> {
        if self.nodes.len() >= self.limits.max_values {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!("pickle builds more than {} values", self.limits.max_values),
            )
            .with_offset(self.at as u64));
        }
        self.nodes.push(node);
        Ok(self.nodes.len() - 1)
    }

    fn push(&mut self, node: Node) -> Result<()> {
        let i = self.add(node)?;
        self.stack.push(Slot::Node(i));
        Ok(())
    }

    fn push_leaf(&mut self, value: Value) -> Result<()> {
        self.push(leaf(value))
    }

    fn pop(&mut self, op: u8) -> Result<usize> {
        match self.stack.pop() {
            Some(Slot::Node(i)) => Ok(i),
            Some(Slot::Mark) => Err(format_at(self.at, format!("opcode {op:#04x} met a mark"))),
            None => Err(format_at(
                self.at,
                format!("opcode {op:#04x} on an empty stack"),
            )),
        }
    }

    fn top(&self, op: u8) -> Result<usize> {
        match self.stack.last() {
            Some(Slot::Node(i)) => Ok(*i),
            _ => Err(format_at(
                self.at,
                format!("opcode {op:#04x} needs a value on the stack"),
            )),
        }
    }

    /// Everything above the topmost mark, which is removed too.
    fn pop_mark(&mut self, op: u8) -> Result<Vec<usize>> {
        let Some(mark) = self.stack.iter().rposition(|s| matches!(s, Slot::Mark)) else {
            return Err(format_at(
                self.at,
                format!("opcode {op:#04x} without a mark"),
            ));
        };
        let items = self
            .stack
            .drain(mark..)
            .skip(1)
            .filter_map(|s| match s {
                Slot::Node(i) => Some(i),
                Slot::Mark => None,
            })
            .collect();
        Ok(items)
    }

    fn pairs(&self, items: &[usize], op: u8) -> Result<Vec<(usize, usize)>> {
        if !items.len().is_multiple_of(2) {
            return Err(format_at(
                self.at,
                format!("opcode {op:#04x} with an odd number of items"),
            ));
        }
        Ok(items.chunks_exact(2).map(|p| (p[0], p[1])).collect())
    }

    fn string_of(&self, i: usize, what: &str) -> Result<String> {
        match &self.nodes[i] {
            Node::Leaf(v) if matches!(**v, Value::Str(_) | Value::Bytes(_)) => match &**v {
                Value::Str(s) => Ok(s.clone()),
                Value::Bytes(b) => Ok(String::from_utf8_lossy(b).into_owned()),
                _ => Err(format_at(self.at, format!("{what} is not a string"))),
            },
            Node::Text(start, end) => Ok(text_at(self.bytes, *start, *end)),
            _ => Err(format_at(self.at, format!("{what} is not a string"))),
        }
    }

    fn tuple_items(&self, i: usize) -> Vec<usize> {
        match &self.nodes[i] {
            Node::Tuple(items) | Node::List(items) => items.clone(),
            _ => vec![i],
        }
    }

    fn memo_get(&mut self, key: u64) -> Result<()> {
        let Some(i) = self.memo.get(key) else {
            return Err(format_at(
                self.at,
                format!("memo entry {key} was never stored"),
            ));
        };
        if i >= self.nodes.len() {
            // An item of a list read apart ([`strings`]), which holds no node for it.
            return Err(Error::unsupported(
                "pickle: an item read apart is referred to again",
            ));
        }
        self.stack.push(Slot::Node(i));
        Ok(())
    }

    fn memo_put(&mut self, key: u64, op: u8) -> Result<()> {
        let i = self.top(op)?;
        if self.memo.len() >= self.limits.max_values {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                "pickle memo too large",
            ));
        }
        self.memo.put(key, i);
        Ok(())
    }

    // ---- container updates, in place (the memo shares them) ----

    fn extend_list(&mut self, target: usize, items: Vec<usize>, op: u8) -> Result<()> {
        match &mut self.nodes[target] {
            Node::List(list) => {
                list.extend(items);
                Ok(())
            }
            _ => Err(Error::unsupported(format!(
                "pickle: opcode {op:#04x} appends to an object that is not a list"
            ))
            .with_offset(self.at as u64)),
        }
    }

    fn extend_dict(&mut self, target: usize, items: Vec<(usize, usize)>, op: u8) -> Result<()> {
        match &mut self.nodes[target] {
            Node::Dict(dict) => {
                dict.extend(items);
                Ok(())
            }
            _ => Err(Error::unsupported(format!(
                "pickle: opcode {op:#04x} sets items of an object that is not a dict"
            ))
            .with_offset(self.at as u64)),
        }
    }

    // ---- running ----

    pub(crate) fn run(self) -> Result<Value> {
        Ok(self.run_with(false)?.0)
    }

    /// Runs the stream; with `text_column`, the data list ([`data_list`]) is read apart as a
    /// [`TextColumn`] and left empty in the tree.
    pub(crate) fn run_with(mut self, text_column: bool) -> Result<(Value, Option<TextColumn>)> {
        loop {
            let at = self.at;
            let op = self.u8()?;
            if op == b'.' {
                let result = self.pop(op)?;
                let apart = if text_column {
                    data_list(&self.nodes, result)
                } else {
                    None
                };
                let mut expander = Expander::new(self.bytes, &self.nodes, &self.limits, apart);
                let value = expander.expand(result)?;
                return Ok((value, expander.column));
            }
            self.step(op).map_err(|e| {
                if e.location().offset.is_some() {
                    e
                } else {
                    e.with_offset(at as u64)
                }
            })?;
        }
    }

    /// Runs a pickle of a numpy object array of strings with its data list read straight into
    /// a [`StringColumn`] ([`strings`]); `None` when the pickle is not that (or is damaged):
    /// the general machine reads it then.
    pub(crate) fn run_strings(
        bytes: &'a [u8],
        limits: &ParseLimits,
    ) -> Option<(Value, StringColumn)> {
        let mut machine = Machine::with_nodes(bytes, limits, 64);
        machine.strings().ok()
    }

    fn strings(&mut self) -> std::result::Result<(Value, StringColumn), GiveUp> {
        let mut apart: Option<(usize, StringColumn)> = None;
        loop {
            let op = self.u8().map_err(|_| GiveUp)?;
            if op == b'.' {
                break;
            }
            self.step(op).map_err(|_| GiveUp)?;
            if apart.is_none() && matches!(op, b']' | b'l') {
                if let Some(expected) = self.data_list_items() {
                    let list = self.top(op).map_err(|_| GiveUp)?;
                    apart = Some((list, self.read_string_items(expected)?));
                }
            }
        }
        let (list, column) = apart.ok_or(GiveUp)?;
        let root = self.pop(b'.').map_err(|_| GiveUp)?;
        // The list must be the array's data, left as it was read (nothing appended later).
        let is_array = matches!(self.nodes.get(root), Some(Node::Build(..)));
        let untouched = matches!(self.nodes.get(list), Some(Node::List(items)) if items.is_empty());
        if !is_array || !untouched || data_list(&self.nodes, root) != Some(list) {
            return Err(GiveUp);
        }
        let value = Expander::new(self.bytes, &self.nodes, &self.limits, None)
            .expand(root)
            .map_err(|_| GiveUp)?;
        Ok((value, column))
    }

    fn step(&mut self, op: u8) -> Result<()> {
        match op {
            0x80 => {
                let proto = self.u8()?;
                if proto > 5 {
                    return Err(Error::unsupported(format!(
                        "pickle protocol {proto} (0 to 5 are known)"
                    )));
                }
            }
            0x95 => {
                let n = self.u64()?;
                if n > self.end.saturating_sub(self.at) as u64 {
                    return Err(Error::truncated("pickle: a frame runs past the stream"));
                }
            }
            b'(' => self.stack.push(Slot::Mark),
            b'0' => {
                self.stack.pop();
            }
            b'1' => {
                self.pop_mark(op)?;
            }
            b'2' => {
                let i = self.top(op)?;
                self.stack.push(Slot::Node(i));
            }
            b'N' => self.push_leaf(Value::None)?,
            0x88 => self.push_leaf(Value::Bool(true))?,
            0x89 => self.push_leaf(Value::Bool(false))?,
            b'J' => {
                let v = self.i32()?;
                self.push_leaf(Value::Int(v.into()))?
            }
            b'K' => {
                let v = self.u8()?;
                self.push_leaf(Value::Int(v.into()))?
            }
            b'M' => {
                let v = self.u16()?;
                self.push_leaf(Value::Int(v.into()))?
            }
            0x8a => {
                let n = self.u8()?;
                let bytes = self.take(n.into())?;
                self.push_leaf(long_from_le(bytes))?
            }
            0x8b => {
                let n = self.i32()?;
                let n = u64::try_from(n).map_err(|_| format_at(self.at, "negative LONG4 size"))?;
                let bytes = self.sized(n)?;
                self.push_leaf(long_from_le(bytes))?
            }
            b'I' => {
                let text = self.text_line("INT")?;
                let value = match text {
                    "01" => Value::Bool(true),
                    "00" => Value::Bool(false),
                    t => {
                        parse_decimal(t).ok_or_else(|| format_at(self.at, "INT is not a number"))?
                    }
                };
                self.push_leaf(value)?
            }
            b'L' => {
                let text = self.text_line("LONG")?;
                let value = parse_decimal(text.trim_end_matches('L'))
                    .ok_or_else(|| format_at(self.at, "LONG is not a number"))?;
                self.push_leaf(value)?
            }
            b'F' => {
                let text = self.text_line("FLOAT")?;
                let v = text
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| format_at(self.at, "FLOAT is not a number"))?;
                self.push_leaf(Value::Float(v))?
            }
            b'G' => {
                let v = f64::from_be_bytes(self.le()?);
                self.push_leaf(Value::Float(v))?
            }
            b'S' => {
                let start = self.at;
                let line = self.line()?;
                let bytes =
                    unquote(line).ok_or_else(|| format_at(start, "STRING is not quoted"))?;
                self.push_leaf(Value::Bytes(bytes))?
            }
            b'T' => {
                let n = self.i32()?;
                let n =
                    u64::try_from(n).map_err(|_| format_at(self.at, "negative BINSTRING size"))?;
                let bytes = self.sized(n)?.to_vec();
                self.push_leaf(Value::Bytes(bytes))?
            }
            b'U' => {
                let n = self.u8()?;
                let bytes = self.take(n.into())?.to_vec();
                self.push_leaf(Value::Bytes(bytes))?
            }
            b'B' | b'C' | 0x8e | 0x96 => {
                let n = match op {
                    b'B' => self.u32()?.into(),
                    b'C' => self.u8()?.into(),
                    _ => self.u64()?,
                };
                let bytes = self.sized(n)?.to_vec();
                self.push_leaf(Value::Bytes(bytes))?
            }
            b'V' => {
                let line = self.line()?;
                self.push_leaf(Value::Str(raw_unicode_escape(line)))?
            }
            b'X' | 0x8c | 0x8d => {
                let n = match op {
                    b'X' => self.u32()?.into(),
                    0x8c => self.u8()?.into(),
                    _ => self.u64()?,
                };
                let len = self.sized(n)?.len();
                // Decoded when expanded (lone surrogates, written with "surrogatepass", are
                // kept readable there).
                self.push(Node::Text(self.at - len, self.at))?
            }
            b']' => self.push(Node::List(Vec::new()))?,
            b'}' => self.push(Node::Dict(Vec::new()))?,
            b')' => self.push(Node::Tuple(Vec::new()))?,
            0x8f => self.push(Node::Set(Vec::new()))?,
            b'l' => {
                let items = self.pop_mark(op)?;
                self.push(Node::List(items))?
            }
            b't' => {
                let items = self.pop_mark(op)?;
                self.push(Node::Tuple(items))?
            }
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.pop(op)?);
                }
                items.reverse();
                self.push(Node::Tuple(items))?
            }
            b'd' => {
                let items = self.pop_mark(op)?;
                let pairs = self.pairs(&items, op)?;
                self.push(Node::Dict(pairs))?
            }
            0x91 => {
                let items = self.pop_mark(op)?;
                self.push(Node::FrozenSet(items))?
            }
            b'a' => {
                let value = self.pop(op)?;
                let list = self.top(op)?;
                self.extend_list(list, vec![value], op)?
            }
            b'e' => {
                let items = self.pop_mark(op)?;
                let list = self.top(op)?;
                self.extend_list(list, items, op)?
            }
            b's' => {
                let value = self.pop(op)?;
                let key = self.pop(op)?;
                let dict = self.top(op)?;
                self.extend_dict(dict, vec![(key, value)], op)?
            }
            b'u' => {
                let items = self.pop_mark(op)?;
                let pairs = self.pairs(&items, op)?;
                let dict = self.top(op)?;
                self.extend_dict(dict, pairs, op)?
            }
            0x90 => {
                let items = self.pop_mark(op)?;
                let set = self.top(op)?;
                match &mut self.nodes[set] {
                    Node::Set(s) => s.extend(items),
                    _ => {
                        return Err(Error::unsupported(
                            "pickle: ADDITEMS to an object that is not a set",
                        ))
                    }
                }
            }
            b'g' => {
                let key = self.text_line("GET")?;
                let key = key
                    .trim()
                    .parse()
                    .map_err(|_| format_at(self.at, "GET index"))?;
                self.memo_get(key)?
            }
            b'h' => {
                let key = self.u8()?;
                self.memo_get(key.into())?
            }
            b'j' => {
                let key = self.u32()?;
                self.memo_get(key.into())?
            }
            b'p' => {
                let key = self.text_line("PUT")?;
                let key = key
                    .trim()
                    .parse()
                    .map_err(|_| format_at(self.at, "PUT index"))?;
                self.memo_put(key, op)?
            }
            b'q' => {
                let key = self.u8()?;
                self.memo_put(key.into(), op)?
            }
            b'r' => {
                let key = self.u32()?;
                self.memo_put(key.into(), op)?
            }
            0x94 => {
                let key = self.memo.len() as u64;
                self.memo_put(key, op)?
            }
            b'c' => {
                let module = self.text_line("GLOBAL module")?.to_string();
                let name = self.text_line("GLOBAL name")?.to_string();
                self.push_leaf(Value::Global { module, name })?
            }
            0x93 => {
                let name = self.pop(op)?;
                let module = self.pop(op)?;
                let module = self.string_of(module, "STACK_GLOBAL module")?;
                let name = self.string_of(name, "STACK_GLOBAL name")?;
                self.push_leaf(Value::Global { module, name })?
            }
            b'R' => {
                let args = self.pop(op)?;
                let callable = self.pop(op)?;
                self.push(Node::Reduce(callable, args))?
            }
            0x81 => {
                let args = self.pop(op)?;
                let class = self.pop(op)?;
                let args = self.tuple_items(args);
                self.push(Node::NewObj(Box::new((class, args, Vec::new()))))?
            }
            0x92 => {
                let kwargs = self.pop(op)?;
                let args = self.pop(op)?;
                let class = self.pop(op)?;
                let args = self.tuple_items(args);
                let kwargs = match &self.nodes[kwargs] {
                    Node::Dict(pairs) => pairs.clone(),
                    _ => return Err(format_at(self.at, "NEWOBJ_EX keywords are not a dict")),
                };
                self.push(Node::NewObj(Box::new((class, args, kwargs))))?
            }
            b'i' => {
                let module = self.text_line("INST module")?.to_string();
                let name = self.text_line("INST name")?.to_string();
                let args = self.pop_mark(op)?;
                let class = self.add(leaf(Value::Global { module, name }))?;
                self.push(Node::NewObj(Box::new((class, args, Vec::new()))))?
            }
            b'o' => {
                let mut items = self.pop_mark(op)?;
                if items.is_empty() {
                    return Err(format_at(self.at, "OBJ without a class"));
                }
                let class = items.remove(0);
                self.push(Node::NewObj(Box::new((class, items, Vec::new()))))?
            }
            b'b' => {
                let state = self.pop(op)?;
                let object = self.top(op)?;
                // The object keeps its identity (the memo may share it): its old node moves to
                // a new slot and its own slot becomes the BUILD.
                let old = std::mem::replace(&mut self.nodes[object], Node::Scalar(Scalar::None));
                let moved = self.add(old)?;
                self.nodes[object] = Node::Build(moved, state);
            }
            b'P' => {
                let id = self.text_line("PERSID")?.to_string();
                let id = self.add(leaf(Value::Str(id)))?;
                self.push(Node::Persistent(id))?
            }
            b'Q' => {
                let id = self.pop(op)?;
                self.push(Node::Persistent(id))?
            }
            0x82 => {
                let code = self.u8()?;
                self.push_leaf(Value::Extension(code.into()))?
            }
            0x83 => {
                let code = self.u16()?;
                self.push_leaf(Value::Extension(code.into()))?
            }
            0x84 => {
                let code = self.u32()?;
                self.push_leaf(Value::Extension(code))?
            }
            0x97 => self.push_leaf(Value::OutOfBandBuffer)?,
            0x98 => {
                self.top(op)?;
            }
            other => {
                return Err(format_at(
                    self.at.saturating_sub(1),
                    format!("unknown opcode {other:#04x}"),
                ))
            }
        }
        Ok(())
    }
}

/// The text of `bytes[start..end]` (valid by construction of the node); invalid UTF-8 (lone
/// surrogates) with replacement characters.
fn text_at(bytes: &[u8], start: usize, end: usize) -> String {
    String::from_utf8_lossy(bytes.get(start..end).unwrap_or_default()).into_owned()
}

/// The list read apart by [`crate::parse_text_column`]: the root when it is a list, or the
/// last item of the root's BUILD state when that state is a tuple (numpy's
/// `ndarray.__setstate__((version, shape, dtype, is_fortran, data))`).
fn data_list(nodes: &[Node], root: usize) -> Option<usize> {
    let is_list = |i: usize| matches!(nodes.get(i), Some(Node::List(_)));
    match nodes.get(root)? {
        Node::List(_) => Some(root),
        Node::Build(_, state) => match nodes.get(*state)? {
            Node::Tuple(items) => items.last().copied().filter(|&i| is_list(i)),
            _ => None,
        },
        _ => None,
    }
}

/// The items of one list read apart from the value tree ([`crate::parse_text_column`]): its
/// `str` items as one buffer of UTF-8 bytes with offsets (no allocation per string), every
/// other item as a [`Value`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextColumn {
    /// `len() + 1` offsets into `data`: item `i` is `data[offsets[i]..offsets[i + 1]]` (an
    /// empty range for an item in `others`).
    pub offsets: Vec<usize>,
    /// The UTF-8 bytes of every `str` item, in order.
    pub data: Vec<u8>,
    /// The items that are not a `str`, with their position, in order.
    pub others: Vec<(usize, Value)>,
}

impl TextColumn {
    /// Items in the list.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the list was empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `i` when it is a `str`.
    pub fn text(&self, i: usize) -> Option<&str> {
        let (start, end) = (*self.offsets.get(i)?, *self.offsets.get(i + 1)?);
        if start == end && self.others.binary_search_by_key(&i, |(j, _)| *j).is_ok() {
            return None;
        }
        std::str::from_utf8(self.data.get(start..end)?).ok()
    }
}

/// Expands arena nodes into a [`Value`] tree, bounded in size and depth.
struct Expander<'n> {
    bytes: &'n [u8],
    nodes: &'n [Node],
    limits: &'n ParseLimits,
    emitted: usize,
    /// Bytes of text and binary data copied into the values so far.
    copied: usize,
    path: Vec<usize>,
    /// The list read apart as `column` (expanded as an empty list).
    apart: Option<usize>,
    column: Option<TextColumn>,
}

impl<'n> Expander<'n> {
    fn new(
        bytes: &'n [u8],
        nodes: &'n [Node],
        limits: &'n ParseLimits,
        apart: Option<usize>,
    ) -> Self {
        Expander {
            bytes,
            nodes,
            limits,
            emitted: 0,
            copied: 0,
            path: Vec::new(),
            apart,
            column: None,
        }
    }

    fn count(&mut self) -> Result<()> {
        self.emitted += 1;
        if self.emitted > self.limits.max_values || self.path.len() >= self.limits.max_depth {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!(
                    "pickle expands to more than {} values or {} levels",
                    self.limits.max_values, self.limits.max_depth
                ),
            ));
        }
        Ok(())
    }

    /// Counts `n` more bytes copied out of the stream, within [`ParseLimits::max_bytes`].
    fn copy(&mut self, n: usize) -> Result<()> {
        self.copied = self.copied.saturating_add(n);
        if self.copied > self.limits.max_bytes {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!(
                    "pickle expands to more than {} bytes of text and data",
                    self.limits.max_bytes
                ),
            ));
        }
        Ok(())
    }

    /// The items of the list read apart, once (a second reference finds it empty).
    fn text_column(&mut self, items: &[usize]) -> Result<()> {
        let mut column = TextColumn {
            offsets: Vec::with_capacity(items.len() + 1),
            data: Vec::new(),
            others: Vec::new(),
        };
        column.offsets.push(0);
        for (j, &i) in items.iter().enumerate() {
            if let Node::Text(start, end) = self.nodes[i] {
                self.count()?;
                self.copy(end.saturating_sub(start))?;
                let bytes = self.bytes.get(start..end).unwrap_or_default();
                match std::str::from_utf8(bytes) {
                    Ok(_) => column.data.extend_from_slice(bytes),
                    Err(_) => column
                        .data
                        .extend_from_slice(String::from_utf8_lossy(bytes).as_bytes()),
                }
            } else {
                let value = self.expand(i)?;
                column.others.push((j, value));
            }
            column.offsets.push(column.data.len());
        }
        self.column = Some(column);
        Ok(())
    }

    fn expand(&mut self, i: usize) -> Result<Value> {
        if self.path.contains(&i) {
            return Ok(Value::Recursive);
        }
        self.count()?;
        self.path.push(i);
        let value = self.expand_node(i);
        self.path.pop();
        value
    }

    fn all(&mut self, items: &[usize]) -> Result<Vec<Value>> {
        items.iter().map(|&i| self.expand(i)).collect()
    }

    fn all_pairs(&mut self, pairs: &[(usize, usize)]) -> Result<Vec<(Value, Value)>> {
        pairs
            .iter()
            .map(|&(k, v)| Ok((self.expand(k)?, self.expand(v)?)))
            .collect()
    }

    fn expand_node(&mut self, i: usize) -> Result<Value> {
        let nodes = self.nodes;
        Ok(match &nodes[i] {
            Node::Leaf(v) => {
                self.copy(data_bytes(v))?;
                (**v).clone()
            }
            Node::Scalar(s) => match *s {
                Scalar::None => Value::None,
                Scalar::Bool(b) => Value::Bool(b),
                Scalar::Int(i) => Value::Int(i),
                Scalar::Float(f) => Value::Float(f),
            },
            Node::Text(start, end) => {
                self.copy(end.saturating_sub(*start))?;
                Value::Str(text_at(self.bytes, *start, *end))
            }
            Node::List(items) if self.apart == Some(i) => {
                self.apart = None;
                self.text_column(items)?;
                Value::List(Vec::new())
            }
            Node::List(items) => Value::List(self.all(items)?),
            Node::Tuple(items) => Value::Tuple(self.all(items)?),
            Node::Set(items) => Value::Set(self.all(items)?),
            Node::FrozenSet(items) => Value::FrozenSet(self.all(items)?),
            Node::Dict(pairs) => Value::Dict(self.all_pairs(pairs)?),
            Node::Reduce(callable, args) => Value::Reduce {
                callable: Box::new(self.expand(*callable)?),
                args: Box::new(self.expand(*args)?),
            },
            Node::NewObj(parts) => {
                let (class, args, kwargs) = &**parts;
                Value::NewObj {
                    class: Box::new(self.expand(*class)?),
                    args: self.all(args)?,
                    kwargs: self.all_pairs(kwargs)?,
                }
            }
            Node::Build(object, state) => Value::Build {
                object: Box::new(self.expand(*object)?),
                state: Box::new(self.expand(*state)?),
            },
            Node::Persistent(id) => Value::Persistent(Box::new(self.expand(*id)?)),
        })
    }
}

/// The bytes of text or binary data a leaf value holds (what cloning it copies).
fn data_bytes(v: &Value) -> usize {
    match v {
        Value::Str(s) => s.len(),
        Value::Bytes(b) | Value::BigInt(b) => b.len(),
        _ => 0,
    }
}

/// A two's-complement little-endian integer (LONG1/LONG4): `Int` when it fits 64 bits.
fn long_from_le(bytes: &[u8]) -> Value {
    if bytes.is_empty() {
        return Value::Int(0);
    }
    if bytes.len() <= 8 {
        let negative = bytes[bytes.len() - 1] & 0x80 != 0;
        let mut word = if negative { [0xFF; 8] } else { [0; 8] };
        word[..bytes.len()].copy_from_slice(bytes);
        return Value::Int(i64::from_le_bytes(word));
    }
    Value::BigInt(bytes.to_vec())
}

/// A decimal integer of the text opcodes: `Int`, or `BigInt` beyond 64 bits.
fn parse_decimal(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(v) = text.parse::<i64>() {
        return Some(Value::Int(v));
    }
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Magnitude in little-endian base 256, then two's complement.
    let mut magnitude: Vec<u8> = vec![0];
    for d in digits.bytes() {
        let mut carry = u32::from(d - b'0');
        for byte in magnitude.iter_mut() {
            let v = u32::from(*byte) * 10 + carry;
            *byte = (v & 0xFF) as u8;
            carry = v >> 8;
        }
        while carry > 0 {
            magnitude.push((carry & 0xFF) as u8);
            carry >>= 8;
        }
    }
    magnitude.push(0); // room for the sign bit
    if negative {
        let mut carry = 1u16;
        for byte in magnitude.iter_mut() {
            let v = u16::from(!*byte) + carry;
            *byte = (v & 0xFF) as u8;
            carry = v >> 8;
        }
    }
    Some(Value::BigInt(magnitude))
}

/// The bytes of a protocol-0 STRING: a quoted Python 2 `repr` with backslash escapes.
fn unquote(line: &[u8]) -> Option<Vec<u8>> {
    let (&first, rest) = line.split_first()?;
    let (&last, inner) = rest.split_last()?;
    if first != last || !(first == b'\'' || first == b'"') {
        return None;
    }
    let mut out = Vec::with_capacity(inner.len());
    let mut bytes = inner.iter().copied();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next()? {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'x' => {
                let hi = hex_digit(bytes.next()?)?;
                let lo = hex_digit(bytes.next()?)?;
                out.push(hi * 16 + lo);
            }
            d @ b'0'..=b'7' => {
                let mut v = u32::from(d - b'0');
                let mut more = bytes.clone();
                for _ in 0..2 {
                    match more.next() {
                        Some(o @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(o - b'0');
                            bytes.next();
                        }
                        _ => break,
                    }
                }
                out.push((v & 0xFF) as u8);
            }
            other => out.push(other),
        }
    }
    Some(out)
}

fn hex_digit(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Python's `raw-unicode-escape`: `\uXXXX` and `\UXXXXXXXX` escapes, other bytes Latin-1.
fn raw_unicode_escape(line: &[u8]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        if b == b'\\' && i + 1 < line.len() && (line[i + 1] == b'u' || line[i + 1] == b'U') {
            let width = if line[i + 1] == b'u' { 4 } else { 8 };
            let digits = line.get(i + 2..i + 2 + width);
            let code = digits
                .and_then(|d| std::str::from_utf8(d).ok())
                .and_then(|d| u32::from_str_radix(d, 16).ok());
            if let Some(code) = code {
                out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
                i += 2 + width;
                continue;
            }
        }
        out.push(char::from(b));
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_decimals_become_twos_complement_bytes() {
        assert_eq!(parse_decimal("12"), Some(Value::Int(12)));
        // 2**64 = 0x1_0000_0000_0000_0000
        assert_eq!(
            parse_decimal("18446744073709551616"),
            Some(Value::BigInt(vec![0, 0, 0, 0, 0, 0, 0, 0, 1, 0]))
        );
        // -(2**64): ...FF FF 00 x8
        let Some(Value::BigInt(b)) = parse_decimal("-18446744073709551616") else {
            panic!("big");
        };
        assert_eq!(&b[..9], &[0, 0, 0, 0, 0, 0, 0, 0, 0xFF]);
        assert_eq!(parse_decimal("1x"), None);
    }

    #[test]
    fn longs_read_from_le_bytes() {
        assert_eq!(long_from_le(&[0xFF]), Value::Int(-1));
        assert_eq!(long_from_le(&[0x00, 0x01]), Value::Int(256));
        assert_eq!(long_from_le(&[]), Value::Int(0));
    }

    /// `[s, s, ...]` of one memoised 5-byte str referenced `n` times (protocol 2).
    fn shared_string_list(n: usize) -> Vec<u8> {
        let mut p = b"\x80\x02]q\x00(X\x05\x00\x00\x00helloq\x01".to_vec();
        for _ in 1..n {
            p.extend_from_slice(b"h\x01");
        }
        p.extend_from_slice(b"e.");
        p
    }

    #[test]
    fn copies_of_a_shared_string_count_against_the_byte_budget() {
        let limits = ParseLimits {
            max_bytes: 20,
            ..ParseLimits::default()
        };
        let four = crate::parse_with(&shared_string_list(4), &limits).unwrap();
        assert_eq!(four, Value::List(vec![Value::Str("hello".into()); 4]));
        let e = crate::parse_with(&shared_string_list(5), &limits).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
        assert!(e.to_string().contains("20 bytes"), "{e}");
    }

    #[test]
    fn quoted_strings_unescape() {
        assert_eq!(unquote(br"'a\nb\x41\101'"), Some(b"a\nbAA".to_vec()));
        assert_eq!(unquote(b"'unterminated"), None);
    }
}
