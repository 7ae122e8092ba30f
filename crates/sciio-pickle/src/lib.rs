//! A Python pickle *reader* that never runs anything (and a minimal protocol-0 writer,
//! [`to_protocol0`], for the attributes pandas stores).
//!
//! pandas and PyTables keep some attributes and object columns as pickles. Python's
//! `pickle.loads` imports modules and calls whatever the stream names, so a damaged or hostile
//! file runs code. This crate only reads: [`parse`] turns a pickle (protocols 0 to 5) into a
//! tree of [`Value`]s in which a class or function the stream refers to stays a name
//! ([`Value::Global`]) and a call stays the callable with its arguments ([`Value::Reduce`],
//! [`Value::NewObj`], [`Value::Build`]). Interpreting those shapes (a `datetime.timezone`, a
//! numpy array reconstruction) is the caller's job, by name.
//!
//! Every size the stream states is checked against the bytes that remain, the number of values
//! it builds and the depth of the tree are bounded ([`ParseLimits`]), and shared or
//! self-referencing values (the memo) are expanded at most once per path: a reference cycle
//! becomes [`Value::Recursive`].
//!
//! ```
//! use sciio_pickle::{parse, Value};
//! // pickle.dumps({'a': [1, 2.5, None]}, protocol=2)
//! let bytes = b"\x80\x02}q\x00X\x01\x00\x00\x00aq\x01]q\x02(K\x01G@\x04\x00\x00\x00\x00\x00\x00Nes.";
//! let value = parse(bytes)?;
//! let Value::Dict(items) = &value else { panic!("a dict") };
//! assert_eq!(items[0].0, Value::Str("a".into()));
//! assert_eq!(items[0].1, Value::List(vec![Value::Int(1), Value::Float(2.5), Value::None]));
//! # Ok::<(), sciio_core::Error>(())
//! ```
// Input never reaches a panic: errors are returned (tests may unwrap).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable
    )
)]
#![forbid(unsafe_code)]

mod machine;
mod write;

use sciio_core::Result;

pub use machine::stream::{StringArrayScan, StringBatches, PIECE};
pub use machine::strings::StringColumn;
pub use machine::{ParseLimits, TextColumn};
pub use write::{to_protocol0, to_protocol3, write_protocol3_item};

/// A value read from a pickle. Containers hold their items in stream order.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An integer that fits in 64 bits.
    Int(i64),
    /// A larger integer: its two's-complement bytes, little-endian (as `LONG1`/`LONG4` store it).
    BigInt(Vec<u8>),
    /// A float.
    Float(f64),
    /// A `str`.
    Str(String),
    /// `bytes`, `bytearray`, or a protocol-2 `str` of Python 2 kept as bytes.
    Bytes(Vec<u8>),
    /// A `list`.
    List(Vec<Value>),
    /// A `tuple`.
    Tuple(Vec<Value>),
    /// A `dict`, its items in insertion order.
    Dict(Vec<(Value, Value)>),
    /// A `set`.
    Set(Vec<Value>),
    /// A `frozenset`.
    FrozenSet(Vec<Value>),
    /// A module attribute named by the stream (a class or a function), never imported.
    Global {
        /// The module, e.g. `numpy.core.multiarray`.
        module: String,
        /// The attribute, e.g. `_reconstruct`.
        name: String,
    },
    /// `callable(*args)` as the stream asks for it (REDUCE), never called.
    Reduce {
        /// What would be called.
        callable: Box<Value>,
        /// Its arguments (normally a tuple).
        args: Box<Value>,
    },
    /// `cls.__new__(cls, *args, **kwargs)` (NEWOBJ, NEWOBJ_EX, INST, OBJ), never called.
    NewObj {
        /// The class.
        class: Box<Value>,
        /// Positional arguments.
        args: Vec<Value>,
        /// Keyword arguments (NEWOBJ_EX only).
        kwargs: Vec<(Value, Value)>,
    },
    /// `obj.__setstate__(state)` or a `__dict__` update (BUILD), never applied.
    Build {
        /// The object.
        object: Box<Value>,
        /// Its state.
        state: Box<Value>,
    },
    /// A persistent id (PERSID, BINPERSID): a reference to something outside the pickle.
    Persistent(Box<Value>),
    /// An extension-registry code (EXT1/2/4): a global known only to the writer's registry.
    Extension(u32),
    /// An out-of-band buffer (protocol 5 NEXT_BUFFER): its data is not in the stream.
    OutOfBandBuffer,
    /// A container met again inside itself (a reference cycle through the memo).
    Recursive,
}

impl Value {
    /// The `module.name` of a [`Value::Global`].
    pub fn global_name(&self) -> Option<String> {
        match self {
            Value::Global { module, name } => Some(format!("{module}.{name}")),
            _ => None,
        }
    }
}

/// Reads one pickle with the default [`ParseLimits`].
pub fn parse(bytes: &[u8]) -> Result<Value> {
    parse_with(bytes, &ParseLimits::default())
}

/// Reads one pickle; the stream must end with STOP (trailing bytes are ignored, as
/// `pickle.loads` ignores them).
pub fn parse_with(bytes: &[u8], limits: &ParseLimits) -> Result<Value> {
    machine::Machine::new(bytes, limits).run()
}

/// Reads one pickle with its data list apart: the pickle's root when that is a list, or the
/// last item of the state tuple the root is BUILT with (a numpy array's
/// `(version, shape, dtype, is_fortran, data)`). That list's `str` items come back as one
/// [`TextColumn`] (offsets into one buffer, no allocation per string), its other items as
/// values, and the list is left empty in the tree. This is how a large numpy object array of
/// strings (pandas' string blocks) is read without a value per item. The column is `None`
/// when the pickle has no such list.
pub fn parse_text_column(
    bytes: &[u8],
    limits: &ParseLimits,
) -> Result<(Value, Option<TextColumn>)> {
    machine::Machine::new(bytes, limits).run_with(true)
}

/// Reads the pickle of a numpy object array of strings (what PyTables' `ObjectAtom` stores
/// for a pandas string block or index) with its items straight into one [`StringColumn`]: no
/// value per item. The tree holds the array's `_reconstruct` call with an empty data list.
/// `None` when the pickle is anything else (an item that is neither `str`, `bytes`, `None`
/// nor `NaN`, another layout, a damaged stream): read it with [`parse_text_column`] or
/// [`parse`], which say what is wrong.
pub fn parse_string_array(bytes: &[u8], limits: &ParseLimits) -> Option<(Value, StringColumn)> {
    machine::Machine::run_strings(bytes, limits)
}

/// The first of the two passes that read a pickled numpy object array of strings from a
/// stream of `len` bytes in pieces, never holding the pickle nor the whole column: checks
/// that the pickle is what [`parse_string_array`] reads (the same checks), keeping no text,
/// and tells the items' count and whether any is missing (what a listing needs). `Ok(None)`
/// when it is not: read it whole. Errors are the reader's only. The stream is read `piece`
/// bytes at a time ([`PIECE`]; an item longer than that is read whole).
pub fn scan_string_array<R: std::io::Read>(
    reader: R,
    len: u64,
    limits: &ParseLimits,
    piece: usize,
) -> Result<Option<StringArrayScan>> {
    machine::stream::scan(reader, len, limits, piece)
}

/// The second pass: the items of the array `scan` describes (read from the same stream,
/// from its start) as columns of `batch_rows` items (the last one shorter), equal to the
/// column [`parse_string_array`] gives cut into pieces. A stream that no longer matches the
/// scan is an error.
pub fn stream_string_array<R: std::io::Read>(
    reader: R,
    len: u64,
    limits: &ParseLimits,
    scan: &StringArrayScan,
    batch_rows: usize,
    piece: usize,
) -> Result<StringBatches<R>> {
    StringBatches::start(reader, len, limits, scan, (batch_rows, piece))
}
