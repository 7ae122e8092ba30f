//! A numeric or logical array given piece by piece ([`ArrayPieces`]), to the writers of
//! both MAT formats (`write/pieces.rs`, `v5/write.rs`); a structured array given batch of
//! records by batch ([`RecordPieces`], `v5/write/records.rs`, `write/records.rs`); both
//! handed over as [`Pieces`] for the values of a [`TreeValue`].

use sciio_core::{DType, Error, NdArray, Order, Result, ScalarKind};

/// Takes the next bytes of a stream.
pub type PutBytes<'a> = dyn FnMut(&[u8]) -> Result<()> + 'a;

/// One pass over a structured array's records in MATLAB's order (column-major), handing
/// them to the given function in batches of whole records, in the dtype's byte order.
pub type RecordPass<'a> = dyn FnMut(&mut PutBytes<'_>) -> Result<()> + 'a;

/// A structured (record) array given batch by batch to
/// [`crate::MatWriter::write_records`]: a MATLAB struct array of its shape, one field per
/// record field. `pass` may be called more than once (a Level-5 file's struct size is
/// written before its elements, so byte and text fields are measured in a first pass) and
/// must give the same records each time.
pub struct RecordPieces<'a> {
    /// The record dtype (any byte order; fields scalars or subarrays of MATLAB classes).
    pub dtype: DType,
    /// numpy's shape.
    pub shape: Vec<usize>,
    /// Gives the records.
    pub pass: &'a mut RecordPass<'a>,
}

impl std::fmt::Debug for RecordPieces<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordPieces")
            .field("dtype", &self.dtype)
            .field("shape", &self.shape)
            .finish()
    }
}

impl RecordPieces<'_> {
    /// Records in the array (`None` when the count overflows).
    pub(crate) fn len(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d as u64))
    }

    /// The whole array (Fortran order: the records as given), read in one pass: for the
    /// writers that take whole values.
    pub(crate) fn gather(&mut self) -> Result<NdArray> {
        let n = self
            .len()
            .ok_or_else(|| Error::invalid_input("the array's size overflows"))?;
        let item = self.dtype.itemsize() as u64;
        let bytes = n
            .checked_mul(item)
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(too_large)?;
        let mut buf = Vec::new();
        (self.pass)(&mut |batch: &[u8]| {
            if buf.len() + batch.len() > bytes {
                return Err(changed());
            }
            buf.extend_from_slice(batch);
            Ok(())
        })?;
        if buf.len() != bytes {
            return Err(changed());
        }
        NdArray::from_byte_vec(self.dtype.clone(), &self.shape, Order::F, buf)
    }
}

/// The records given are not the array's (more or fewer than its shape, or different in a
/// later pass).
pub(crate) fn changed() -> Error {
    Error::format(
        "the structured array's records are not what its shape says (or changed while read)",
    )
}

use crate::numpy::PythonMeta;
pub use crate::text_pieces::FillElements;
use crate::text_pieces::TextPieces;
use crate::value::{MatValue, StructArray};

/// A numeric or logical array given piece by piece to [`crate::MatWriter::write_pieces`].
pub struct ArrayPieces<'a> {
    /// The numpy kind of its elements (bool, integers, floats, complex).
    pub kind: ScalarKind,
    /// Its shape (numpy's, which is MATLAB's; made at least 2-d as for whole arrays).
    pub shape: Vec<usize>,
    /// Gives the elements.
    pub fill: &'a mut FillElements<'a>,
}

impl std::fmt::Debug for ArrayPieces<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrayPieces")
            .field("kind", &self.kind)
            .field("shape", &self.shape)
            .finish()
    }
}

impl ArrayPieces<'_> {
    /// Elements and bytes of the whole array (`None` when they overflow).
    pub(crate) fn size(&self) -> Option<(u64, u64)> {
        let n = self
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d as u64))?;
        Some((n, n.checked_mul(self.kind.itemsize() as u64)?))
    }

    /// The whole array, filled at once: for the writers that take whole values (small
    /// variables, big-endian machines, libhdf5).
    pub(crate) fn gather(&mut self) -> Result<NdArray> {
        let (_, bytes) = self
            .size()
            .ok_or_else(|| Error::invalid_input("the array's size overflows"))?;
        let mut buf = vec![0u8; usize::try_from(bytes).map_err(|_| too_large())?];
        (self.fill)(0, &mut buf)?;
        NdArray::from_bytes(
            sciio_core::DType::scalar(self.kind),
            &self.shape,
            Order::F,
            &buf,
        )
    }
}

fn too_large() -> Error {
    Error::unsupported("an array larger than this machine's address space")
}

/// What a [`PiecesOf`] callback hands over for a value of a tree: the array of a
/// [`TreeValue::Pieces`], the records of a [`TreeValue::Records`], or the text of a
/// [`TreeValue::Text`] (its codes; or, a `bytes` array holding a non-ASCII byte into a v7.3
/// file, its strings as an [`ArrayPieces`] of kind `Bytes`, as
/// [`crate::MatWriter::write_byte_strings_pieces`] takes them).
#[derive(Debug)]
pub enum Pieces<'a> {
    /// A numeric or logical array (or a text array's strings), its elements asked for piece
    /// by piece.
    Array(ArrayPieces<'a>),
    /// A structured array, its records given batch by batch (in one pass or more).
    Records(RecordPieces<'a>),
    /// A text array's code units, asked for piece by piece.
    Text(TextPieces<'a>),
}

/// Hands the value of a [`TreeValue::Pieces`] or [`TreeValue::Records`] (its `id`) to
/// `write`, which asks for its elements piece by piece: what
/// [`crate::MatWriter::write_tree`] calls at each such value, in the order they are written
/// (a Level-5 file's records with text fields are asked for twice: measured, then written).
pub type PiecesOf<'a> =
    dyn FnMut(usize, &mut dyn FnMut(Pieces<'_>) -> Result<()>) -> Result<()> + 'a;

/// Asks `pieces` for array `id` of `kind` and `shape` and hands it to `write`; an error when
/// none, or another value, is given.
pub(crate) fn array_of(
    pieces: &mut PiecesOf<'_>,
    id: usize,
    (kind, shape): (ScalarKind, &[usize]),
    write: &mut dyn FnMut(ArrayPieces<'_>) -> Result<()>,
) -> Result<()> {
    let mut given = false;
    pieces(id, &mut |p| match p {
        Pieces::Array(array) => {
            check_pieces(&array, kind, shape)?;
            given = true;
            write(array)
        }
        Pieces::Records(r) => Err(other_value(format!("records of {}", r.dtype))),
        Pieces::Text(t) => Err(other_value(format!("text of {:?}", t.shape))),
    })?;
    match given {
        true => Ok(()),
        false => Err(Error::invalid_input("an array's pieces were not given")),
    }
}

/// Asks `pieces` for structured array `id` of `dtype` and `shape` and hands it to `write`;
/// an error when none, or another value, is given.
pub(crate) fn records_of(
    pieces: &mut PiecesOf<'_>,
    id: usize,
    (dtype, shape): (&DType, &[usize]),
    write: &mut dyn FnMut(RecordPieces<'_>) -> Result<()>,
) -> Result<()> {
    let mut given = false;
    pieces(id, &mut |p| match p {
        Pieces::Records(records) => {
            if records.dtype != *dtype || records.shape != shape {
                return Err(other_value(format!(
                    "records of {} {:?} for records of {dtype} {shape:?}",
                    records.dtype, records.shape
                )));
            }
            given = true;
            write(records)
        }
        Pieces::Array(a) => Err(other_value(format!("an array of {:?}", a.kind))),
        Pieces::Text(t) => Err(other_value(format!("text of {:?}", t.shape))),
    })?;
    match given {
        true => Ok(()),
        false => Err(Error::invalid_input(
            "a structured array's records were not given",
        )),
    }
}

/// A text array as a [`PiecesOf`] callback gives it ([`text_of`]).
pub(crate) enum TextGiven<'a> {
    /// Its code units.
    Codes(TextPieces<'a>),
    /// Its strings (a `bytes` array kept as strings in a v7.3 file).
    Strings(ArrayPieces<'a>),
}

/// Asks `pieces` for text array `id` (numpy kind `kind`, `Bytes(w)` or `Unicode(w)`, of
/// numpy's `shape`) and hands it to `write`; an error when none, or another value (other
/// units, another count of codes or strings), is given.
pub(crate) fn text_of(
    pieces: &mut PiecesOf<'_>,
    id: usize,
    (kind, shape): (ScalarKind, &[usize]),
    write: &mut dyn FnMut(TextGiven<'_>) -> Result<()>,
) -> Result<()> {
    let (unit, width) = text_units(kind)?;
    let strings = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d as u64))
        .ok_or_else(|| Error::invalid_input("the array's size overflows"))?;
    let mut given = false;
    pieces(id, &mut |p| match p {
        Pieces::Text(text) => {
            let codes = strings.checked_mul(width as u64);
            if text.unit != unit || text.len() != codes {
                return Err(other_value(format!(
                    "text of {:?} ({} bytes a unit)",
                    text.shape, text.unit
                )));
            }
            given = true;
            write(TextGiven::Codes(text))
        }
        Pieces::Array(array) => {
            check_pieces(&array, kind, shape)?;
            if !matches!(kind, ScalarKind::Bytes(_)) {
                return Err(other_value(format!("an array of {:?}", array.kind)));
            }
            given = true;
            write(TextGiven::Strings(array))
        }
        Pieces::Records(r) => Err(other_value(format!("records of {}", r.dtype))),
    })?;
    match given {
        true => Ok(()),
        false => Err(Error::invalid_input("a text array's codes were not given")),
    }
}

/// Bytes of a code unit and units of a string of a text kind (`S w`: 1, `U w`: 4).
pub(crate) fn text_units(kind: ScalarKind) -> Result<(usize, usize)> {
    match kind {
        ScalarKind::Bytes(w) => Ok((1, w)),
        ScalarKind::Unicode(w) => Ok((4, w)),
        other => Err(Error::invalid_input(format!(
            "internal: {other:?} is not a text kind"
        ))),
    }
}

fn other_value(given: String) -> Error {
    Error::invalid_input(format!("internal: {given} was given for another value"))
}

/// A value [`crate::MatWriter::write_tree`] writes: a scalar struct (of any depth) whose large
/// numeric fields come piece by piece, so that a struct larger than memory can be written.
#[derive(Debug)]
pub enum TreeValue {
    /// A value held whole, with its `Python.*` metadata (as [`crate::MatWriter::write_with_meta`]).
    Whole(MatValue, Option<PythonMeta>),
    /// A numeric or logical array of `kind` and `shape` (numpy's, which is MATLAB's), given
    /// piece by piece when written: `id` is what the [`PiecesOf`] callback is given.
    Pieces {
        id: usize,
        kind: ScalarKind,
        shape: Vec<usize>,
        meta: Option<PythonMeta>,
    },
    /// A structured array of `dtype` (records of MATLAB classes) and `shape` (numpy's), a
    /// struct array with its `Python.*` metadata as [`crate::from_numpy`] makes it, given
    /// batch of records by batch when written: `id` is what the [`PiecesOf`] callback is
    /// given.
    Records {
        id: usize,
        dtype: DType,
        shape: Vec<usize>,
    },
    /// A text array (numpy `kind` `Bytes(w)` or `Unicode(w)`, numpy's `shape`) with its
    /// `Python.*` metadata, the char array [`crate::from_numpy`] (v7.3) or
    /// [`crate::scipy_value`] (Level-5) makes of it, given as its codes ([`Pieces::Text`],
    /// in the file's layout: [`crate::MatWriter::scipy_text`]) when written: `id` is what the
    /// [`PiecesOf`] callback is given. A Level-5 file asks for it twice: first to plan its
    /// element from the codes' summary and shape (reading the codes only of text of at most
    /// 4 codes, the short element form: the caller may refuse to give more then), then
    /// to write it.
    Text {
        id: usize,
        kind: ScalarKind,
        shape: Vec<usize>,
        meta: Option<PythonMeta>,
    },
    /// A scalar struct of these fields, in this order.
    Struct(Vec<(String, TreeValue)>),
}

impl TreeValue {
    /// The whole value and its metadata, every array gathered: what the tree stands for (a
    /// struct's metadata holds its fields' own, as for values made whole).
    pub fn gather(self, pieces: &mut PiecesOf<'_>) -> Result<(MatValue, Option<PythonMeta>)> {
        self.gather_as(pieces, false)
    }

    /// [`TreeValue::gather`] for a Level-5 file when `scipy`: structured arrays as
    /// [`crate::scipy_value`] makes them (their text subarrays in scipy.io's layout).
    pub(crate) fn gather_as(
        self,
        pieces: &mut PiecesOf<'_>,
        scipy: bool,
    ) -> Result<(MatValue, Option<PythonMeta>)> {
        match self {
            TreeValue::Whole(value, meta) => Ok((value, meta)),
            TreeValue::Pieces {
                id,
                kind,
                shape,
                meta,
            } => {
                let mut gathered = None;
                array_of(pieces, id, (kind, &shape), &mut |mut array| {
                    gathered = Some(array.gather()?);
                    Ok(())
                })?;
                let array = gathered
                    .ok_or_else(|| Error::invalid_input("an array's pieces were not given"))?;
                Ok((MatValue::numeric(array)?, meta))
            }
            TreeValue::Records { id, dtype, shape } => {
                let mut gathered = None;
                records_of(pieces, id, (&dtype, &shape), &mut |mut records| {
                    gathered = Some(records.gather()?);
                    Ok(())
                })?;
                let array = gathered.ok_or_else(|| {
                    Error::invalid_input("a structured array's records were not given")
                })?;
                if scipy {
                    return Ok((crate::scipy_value(&array)?, None));
                }
                let (value, meta) = crate::from_numpy(&array)?;
                Ok((value, Some(meta)))
            }
            TreeValue::Text {
                id,
                kind,
                shape,
                meta,
            } => gather_text(pieces, id, (kind, &shape), meta, scipy),
            TreeValue::Struct(fields) => {
                let mut values = Vec::with_capacity(fields.len());
                let mut metas = Vec::with_capacity(fields.len());
                for (name, field) in fields {
                    let (value, meta) = field.gather_as(pieces, scipy)?;
                    values.push((name, value));
                    metas.push(meta.unwrap_or_default());
                }
                let meta = PythonMeta {
                    attrs: None,
                    elements: vec![metas],
                };
                Ok((MatValue::Struct(StructArray::scalar(values)), Some(meta)))
            }
        }
    }

    /// The tree with every array of at most `bytes` bytes gathered (a Level-5 element of at
    /// most 4 bytes has a short form the pieces writer does not make).
    pub(crate) fn gather_small(self, bytes: u64, pieces: &mut PiecesOf<'_>) -> Result<TreeValue> {
        match self {
            TreeValue::Pieces {
                ref kind,
                ref shape,
                ..
            } if pieces_bytes(*kind, shape)? <= bytes => {
                let (value, meta) = self.gather(pieces)?;
                Ok(TreeValue::Whole(value, meta))
            }
            TreeValue::Struct(fields) => Ok(TreeValue::Struct(
                fields
                    .into_iter()
                    .map(|(n, f)| Ok((n, f.gather_small(bytes, pieces)?)))
                    .collect::<Result<_>>()?,
            )),
            other => Ok(other),
        }
    }
}

/// The whole value of a [`TreeValue::Text`]: its char array (Level-5, `scipy`: as
/// [`crate::scipy_value`] makes it, without metadata) or its strings as
/// [`crate::from_numpy`] makes them.
fn gather_text(
    pieces: &mut PiecesOf<'_>,
    id: usize,
    (kind, shape): (ScalarKind, &[usize]),
    meta: Option<PythonMeta>,
    scipy: bool,
) -> Result<(MatValue, Option<PythonMeta>)> {
    let mut gathered = None;
    text_of(pieces, id, (kind, shape), &mut |given| {
        gathered = Some(match given {
            TextGiven::Codes(mut text) => {
                let chars = text.gather()?;
                match scipy {
                    true => {
                        let unicode = text.unit == 4;
                        let c = crate::numpy::scipy_text(chars.shape, chars.codes, unicode);
                        (MatValue::Char(c), None)
                    }
                    false => (MatValue::Char(chars), meta.clone()),
                }
            }
            TextGiven::Strings(mut strings) => {
                let (value, meta) = crate::from_numpy(&strings.gather()?)?;
                (value, Some(meta))
            }
        });
        Ok(())
    })?;
    gathered.ok_or_else(|| Error::invalid_input("a text array's codes were not given"))
}

/// The bytes of an array of `kind` and `shape`.
pub(crate) fn pieces_bytes(kind: ScalarKind, shape: &[usize]) -> Result<u64> {
    shape
        .iter()
        .try_fold(kind.itemsize() as u64, |a, &d| a.checked_mul(d as u64))
        .ok_or_else(|| Error::invalid_input("the array's size overflows"))
}

/// The array given for a [`TreeValue::Pieces`] is the one it announced.
pub(crate) fn check_pieces(
    array: &ArrayPieces<'_>,
    kind: ScalarKind,
    shape: &[usize],
) -> Result<()> {
    if array.kind != kind || array.shape != shape {
        return Err(Error::invalid_input(format!(
            "an array of {:?} {:?} was given for one of {kind:?} {shape:?}",
            array.kind, array.shape
        )));
    }
    Ok(())
}
