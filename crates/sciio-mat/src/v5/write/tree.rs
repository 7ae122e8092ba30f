//! A scalar struct whose large numeric fields come piece by piece, into a Level-5 file
//! ([`Level5Writer::write_tree`]): the `miMATRIX` element `matrix` makes of the whole struct
//! (v7: deflated as one stream), its sizes known up front, each large field's data written as
//! it comes (`stream_data`), each structured-array field's element planned first (its text
//! fields measured: `RecordsElement`) and its records encoded as they come, each text field's
//! planned from its codes' summary (`TextElement`) and its codes encoded as they come, so the
//! struct is never held.

use sciio_core::{DType, Error, Result, ScalarKind};

use super::records::RecordsElement;
use super::text::TextElement;
use super::{
    check_name, estimate, matrix, numeric_head, stream_data, Level5Writer, Parts, MAX_VARIABLE,
    PARALLEL_FROM,
};
use crate::array_pieces::{
    array_of, pieces_bytes, records_of, text_of, text_units, PiecesOf, TextGiven, TreeValue,
};
use crate::value::{MatValue, StructArray};

/// A part of the element: bytes made up front, or a large field's data (after its head).
enum Segment {
    Bytes(Vec<u8>),
    Data {
        id: usize,
        kind: ScalarKind,
        shape: Vec<usize>,
        parts: Parts,
    },
    /// A structured array's whole element (head and records), planned.
    Records {
        id: usize,
        dtype: DType,
        shape: Vec<usize>,
        element: RecordsElement,
    },
    /// A text array's char element (head and codes), planned from its summary.
    Text {
        id: usize,
        kind: ScalarKind,
        shape: Vec<usize>,
        element: TextElement,
    },
}

impl Level5Writer {
    /// Appends variable `name` holding `tree` (a struct): the bytes [`Level5Writer::write`]
    /// makes of the whole value ([`TreeValue::gather`]), the large fields' data asked from
    /// `pieces` as they are written. Small structs are gathered and written whole.
    pub(crate) fn write_tree(
        &mut self,
        name: &str,
        tree: TreeValue,
        pieces: &mut PiecesOf<'_>,
    ) -> Result<()> {
        check_name(name)?;
        // An array of at most 4 bytes takes the short element form: made whole.
        let tree = tree.gather_small(4, pieces)?;
        let size = tree_estimate(&tree)?;
        if size > MAX_VARIABLE {
            return Err(Error::unsupported(format!(
                "the variable needs about {size} bytes, over the 2 GB a MAT v5/v7 variable can \
                 hold: write MAT v7.3 instead (--mat-version 7.3)"
            )));
        }
        let mut segments = Vec::new();
        let len = segments_of(&mut segments, name, &tree, pieces)?;
        if len > MAX_VARIABLE {
            return Err(Error::unsupported(
                "the variable is over the 2 GB a MAT v5/v7 variable can hold: write MAT v7.3 \
                 instead (--mat-version 7.3)",
            ));
        }
        // As `write_pieces`: below this, the whole element is compressed in one go.
        if len < PARALLEL_FROM as u64 {
            return self.write_gathered(name, tree, pieces);
        }
        self.put_streamed(&mut |put| put_segments(&segments, pieces, put))
    }

    fn write_gathered(
        &mut self,
        name: &str,
        tree: TreeValue,
        pieces: &mut PiecesOf<'_>,
    ) -> Result<()> {
        let (value, _) = tree.gather_as(pieces, true)?;
        self.write(name, &value)
    }
}

/// [`estimate`] of the whole value `tree` stands for.
fn tree_estimate(tree: &TreeValue) -> Result<u64> {
    Ok(match tree {
        TreeValue::Whole(value, _) => estimate(value),
        TreeValue::Pieces { kind, shape, .. } => 64u64.saturating_add(pieces_bytes(*kind, shape)?),
        // At least the smallest element per field and record (tag, flags, dimensions, name,
        // data tag): never over the variable when the records are not.
        TreeValue::Records { dtype, shape, .. } => {
            let fields = match dtype {
                DType::Record(r) => r.fields.len() as u64,
                _ => 0,
            };
            shape
                .iter()
                .try_fold(fields.saturating_mul(56), |a, &d| a.checked_mul(d as u64))
                .ok_or_else(|| Error::invalid_input("the array's size overflows"))?
                .saturating_add(64)
        }
        // At least a byte per code (UTF-8).
        TreeValue::Text { kind, shape, .. } => {
            let (_, width) = text_units(*kind)?;
            shape
                .iter()
                .try_fold(width as u64, |a, &d| a.checked_mul(d as u64))
                .ok_or_else(|| Error::invalid_input("the array's size overflows"))?
                .saturating_add(64)
        }
        TreeValue::Struct(fields) => {
            let mut sum = 64u64.saturating_add(64 * fields.len() as u64);
            for (_, field) in fields {
                sum = sum.saturating_add(tree_estimate(field)?);
            }
            sum
        }
    })
}

/// Appends the segments of `tree`'s `miMATRIX` element named `name` (fields are unnamed) and
/// returns the element's length, tag included. Records are planned here: those with byte or
/// text fields are read once from `pieces` to measure them.
fn segments_of(
    segments: &mut Vec<Segment>,
    name: &str,
    tree: &TreeValue,
    pieces: &mut PiecesOf<'_>,
) -> Result<u64> {
    match tree {
        TreeValue::Whole(value, _) => {
            let mut bytes = Vec::new();
            matrix(&mut bytes, name, value)?;
            let len = bytes.len() as u64;
            segments.push(Segment::Bytes(bytes));
            Ok(len)
        }
        TreeValue::Pieces {
            id, kind, shape, ..
        } => {
            let nbytes = pieces_bytes(*kind, shape)?;
            let (head, parts) = numeric_head(name, *kind, shape, nbytes)?;
            let len = head
                .get(4..8)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map(|b| u64::from(u32::from_le_bytes(b)) + 8)
                .ok_or_else(|| Error::invalid_input("an element head without its length"))?;
            segments.push(Segment::Bytes(head));
            segments.push(Segment::Data {
                id: *id,
                kind: *kind,
                shape: shape.clone(),
                parts,
            });
            Ok(len)
        }
        TreeValue::Records { id, dtype, shape } => {
            let mut planned = None;
            records_of(pieces, *id, (dtype, shape), &mut |mut records| {
                planned = Some(RecordsElement::plan(name, &mut records)?);
                Ok(())
            })?;
            let element = planned.ok_or_else(|| {
                Error::invalid_input("a structured array's records were not given")
            })?;
            let len = element.len();
            segments.push(Segment::Records {
                id: *id,
                dtype: dtype.clone(),
                shape: shape.clone(),
                element,
            });
            Ok(len)
        }
        TreeValue::Text {
            id, kind, shape, ..
        } => {
            let mut planned = None;
            text_of(pieces, *id, (*kind, shape), &mut |given| match given {
                TextGiven::Codes(mut text) => {
                    planned = Some(TextElement::plan(name, &mut text)?);
                    Ok(())
                }
                TextGiven::Strings(_) => Err(strings_given()),
            })?;
            let element = planned
                .ok_or_else(|| Error::invalid_input("a text array's codes were not given"))?;
            let len = element.len();
            segments.push(Segment::Text {
                id: *id,
                kind: *kind,
                shape: shape.clone(),
                element,
            });
            Ok(len)
        }
        TreeValue::Struct(fields) => {
            // The head `matrix` makes of the struct: flags, dimensions, name, field names.
            let head_only = StructArray {
                shape: vec![1, 1],
                fields: fields.iter().map(|(f, _)| f.clone()).collect(),
                elements: Vec::new(),
            };
            let mut head = Vec::new();
            matrix(&mut head, name, &MatValue::Struct(head_only))?;
            let at = segments.len();
            let mut len = head.len() as u64;
            segments.push(Segment::Bytes(head));
            for (_, field) in fields {
                len = len.saturating_add(segments_of(segments, "", field, pieces)?);
            }
            let body = u32::try_from(len - 8).map_err(|_| {
                Error::unsupported("the variable is over 4 GB: write MAT v7.3 (--mat-version 7.3)")
            })?;
            if let Some(Segment::Bytes(head)) = segments.get_mut(at) {
                if let Some(slot) = head.get_mut(4..8) {
                    slot.copy_from_slice(&body.to_le_bytes());
                }
            }
            Ok(len)
        }
    }
}

/// Gives the element's bytes to `put` in order, each large field's data from `pieces`.
fn put_segments(
    segments: &[Segment],
    pieces: &mut PiecesOf<'_>,
    put: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    for segment in segments {
        match segment {
            Segment::Bytes(bytes) => put(bytes)?,
            Segment::Data {
                id,
                kind,
                shape,
                parts,
            } => array_of(pieces, *id, (*kind, shape), &mut |mut array| {
                stream_data(&mut array, parts, put)
            })?,
            Segment::Records {
                id,
                dtype,
                shape,
                element,
            } => records_of(pieces, *id, (dtype, shape), &mut |mut records| {
                element.put(&mut records, put)
            })?,
            Segment::Text {
                id,
                kind,
                shape,
                element,
            } => text_of(pieces, *id, (*kind, shape), &mut |given| match given {
                TextGiven::Codes(mut text) => element.put(&mut text, put),
                TextGiven::Strings(_) => Err(strings_given()),
            })?,
        }
    }
    Ok(())
}

/// A Level-5 file takes text as its codes, never as byte strings (a v7.3 file's form).
fn strings_given() -> Error {
    Error::invalid_input("internal: byte strings were given for a MAT v5/v7 char array")
}
