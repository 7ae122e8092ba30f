//! A numeric or logical array given piece by piece ([`ArrayPieces`]), to the writers of
//! both MAT formats (`write/pieces.rs`, `v5/write.rs`).

use sciio_core::{Error, NdArray, Order, Result, ScalarKind};

use crate::numpy::PythonMeta;
use crate::value::{MatValue, StructArray};

/// Fills `buf` with the elements from `first` on in MATLAB's order (column-major), in native
/// byte order, `buf.len()` being a whole number of elements.
pub type FillElements<'a> = dyn FnMut(u64, &mut [u8]) -> Result<()> + 'a;

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

/// Hands the array of a [`TreeValue::Pieces`] (its `id`) to `write`, which asks for its
/// elements piece by piece: what [`crate::MatWriter::write_tree`] calls at each such value,
/// in the order they are written.
pub type PiecesOf<'a> =
    dyn FnMut(usize, &mut dyn FnMut(ArrayPieces<'_>) -> Result<()>) -> Result<()> + 'a;

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
    /// A scalar struct of these fields, in this order.
    Struct(Vec<(String, TreeValue)>),
}

impl TreeValue {
    /// The whole value and its metadata, every array gathered: what the tree stands for (a
    /// struct's metadata holds its fields' own, as for values made whole).
    pub fn gather(self, pieces: &mut PiecesOf<'_>) -> Result<(MatValue, Option<PythonMeta>)> {
        match self {
            TreeValue::Whole(value, meta) => Ok((value, meta)),
            TreeValue::Pieces {
                id,
                kind,
                shape,
                meta,
            } => {
                let mut gathered = None;
                pieces(id, &mut |mut array| {
                    check_pieces(&array, kind, &shape)?;
                    gathered = Some(array.gather()?);
                    Ok(())
                })?;
                let array = gathered
                    .ok_or_else(|| Error::invalid_input("an array's pieces were not given"))?;
                Ok((MatValue::numeric(array)?, meta))
            }
            TreeValue::Struct(fields) => {
                let mut values = Vec::with_capacity(fields.len());
                let mut metas = Vec::with_capacity(fields.len());
                for (name, field) in fields {
                    let (value, meta) = field.gather(pieces)?;
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
