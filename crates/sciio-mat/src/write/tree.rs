//! A scalar struct whose large numeric fields come piece by piece and whose structured-array
//! fields come batch of records by batch ([`MatWriter::write_tree`]): v7.3, the group
//! `structure` makes, each field written into it in order (a large one through
//! `numeric_pieces`, chunk by chunk; records through `records_struct`, element by element as
//! they come; text through `text_in`, its codes converted chunk by chunk); v5/v7, the struct's `miMATRIX` element written as its bytes come
//! (`crate::v5::write`). Either way the file is the one the whole struct makes (v7.3 with
//! records: the same values, their elements in another order).

use sciio_core::Result;

use super::sink::Group;
use super::{
    check_name, numeric_python_metadata, python_attrs, scalar_struct_python_metadata, MatWriter,
    Obj, PYTHON_FIELDS_MAX,
};
use crate::array_pieces::{array_of, records_of, text_of, PiecesOf, TextGiven, TreeValue};
use crate::value::at_least_2d;

impl MatWriter {
    /// Writes `tree` as variable `name` (a top-level name), asking `pieces` for each
    /// [`TreeValue::Pieces`] array as it is written. The file is the same as when the whole
    /// value ([`TreeValue::gather`]) is written with its metadata.
    pub fn write_tree(
        &mut self,
        name: &str,
        tree: TreeValue,
        pieces: &mut PiecesOf<'_>,
    ) -> Result<()> {
        check_name(name)?;
        let whole = cfg!(target_endian = "big") || self.opts.libhdf5;
        match tree {
            TreeValue::Whole(value, meta) => self.write_with_meta(name, &value, meta.as_ref()),
            TreeValue::Pieces {
                id,
                kind,
                shape,
                meta,
            } if !whole => array_of(pieces, id, (kind, &shape), &mut |array| {
                self.write_pieces(name, array, meta.as_ref())
            }),
            TreeValue::Records { id, dtype, shape } => {
                records_of(pieces, id, (&dtype, &shape), &mut |records| {
                    self.write_records(name, records)
                })
            }
            TreeValue::Text {
                id,
                kind,
                shape,
                meta,
            } => text_of(pieces, id, (kind, &shape), &mut |given| match given {
                TextGiven::Codes(text) => self.write_text_pieces(name, text, meta.as_ref()),
                TextGiven::Strings(s) if !whole => {
                    self.write_byte_strings_pieces(name, s, meta.as_ref())
                }
                TextGiven::Strings(mut s) => {
                    let (value, meta) = crate::from_numpy(&s.gather()?)?;
                    self.write_with_meta(name, &value, Some(&meta))
                }
            }),
            TreeValue::Struct(fields) if !whole && !fields.is_empty() => {
                if let Some(w) = &mut self.level5 {
                    return w
                        .write_tree(name, TreeValue::Struct(fields), pieces)
                        .map_err(|e| e.with_node(format!("/{name}")).with_file(&self.path));
                }
                self.replace_variable(name, |w, root| {
                    w.tree_struct(root, name, &fields, pieces).map(|_| ())
                })
            }
            tree => {
                let (value, meta) = tree.gather(pieces)?;
                self.write_with_meta(name, &value, meta.as_ref())
            }
        }
    }

    /// Writes `tree` as `name` in group `loc`, as `value` writes the whole value.
    fn tree_value(
        &mut self,
        loc: &Group,
        name: &str,
        tree: &TreeValue,
        pieces: &mut PiecesOf<'_>,
    ) -> Result<Obj> {
        match tree {
            TreeValue::Whole(value, meta) => self.value(loc, name, value, meta.as_ref()),
            TreeValue::Pieces {
                id,
                kind,
                shape,
                meta,
            } => {
                let mut made = None;
                array_of(pieces, *id, (*kind, shape), &mut |mut array| {
                    made = Some(self.numeric_pieces(loc, name, &mut array)?);
                    Ok(())
                })?;
                let obj = made.ok_or_else(|| {
                    sciio_core::Error::invalid_input("an array's pieces were not given")
                })?;
                if loc.path() != "/" {
                    obj.str_attr("H5PATH", loc.path())?;
                }
                match meta.as_ref().and_then(|m| m.attrs.as_ref()) {
                    Some(attrs) => python_attrs(&obj, attrs)?,
                    None if self.opts.python_metadata => {
                        let shape: Vec<u64> =
                            at_least_2d(shape).iter().map(|&d| d as u64).collect();
                        numeric_python_metadata(&obj, *kind, &shape)?
                    }
                    None => {}
                }
                Ok(obj)
            }
            TreeValue::Records { id, dtype, shape } => {
                let mut made = None;
                records_of(pieces, *id, (dtype, shape), &mut |mut records| {
                    made = Some(self.records_in(loc, name, &mut records)?);
                    Ok(())
                })?;
                made.ok_or_else(|| {
                    sciio_core::Error::invalid_input("a structured array's records were not given")
                })
            }
            TreeValue::Text {
                id,
                kind,
                shape,
                meta,
            } => {
                let mut made = None;
                text_of(pieces, *id, (*kind, shape), &mut |given| {
                    made = Some(self.text_in(loc, name, given, meta.as_ref())?);
                    Ok(())
                })?;
                made.ok_or_else(|| {
                    sciio_core::Error::invalid_input("a text array's codes were not given")
                })
            }
            TreeValue::Struct(fields) if fields.is_empty() => {
                let value = crate::MatValue::Struct(crate::StructArray::scalar(Vec::new()));
                self.value(loc, name, &value, None)
            }
            TreeValue::Struct(fields) => self.tree_struct(loc, name, fields, pieces),
        }
    }

    /// A scalar struct of `fields` (at least one) as `structure` and `value` write it: the
    /// group, its fields in order, then its `H5PATH` and Python metadata.
    fn tree_struct(
        &mut self,
        loc: &Group,
        name: &str,
        fields: &[(String, TreeValue)],
        pieces: &mut PiecesOf<'_>,
    ) -> Result<Obj> {
        let names: Vec<String> = fields.iter().map(|(f, _)| f.clone()).collect();
        for f in &names {
            check_name(f)?;
        }
        let obj = self.struct_group(loc, name, &names)?;
        if let Obj::Group(g) = &obj {
            for (f, field) in fields {
                self.tree_value(g, f, field, pieces)?;
            }
        }
        if loc.path() != "/" {
            obj.str_attr("H5PATH", loc.path())?;
        }
        // A struct's own `Python.*` attributes are never given (those of a gathered struct
        // are `None`): written as `python_metadata` makes them.
        if self.opts.python_metadata && names.len() <= PYTHON_FIELDS_MAX {
            scalar_struct_python_metadata(&obj, &names)?;
        }
        Ok(obj)
    }
}
