//! A numeric or logical variable written piece by piece ([`MatWriter::write_pieces`]): the
//! caller fills runs of its elements in MATLAB's (column-major) order on demand, so a variable
//! larger than memory can be written. v7.3: the dataset `numeric` writes, chunk by chunk
//! through the native writer; v5/v7: the `miMATRIX` element written (v7: deflated) as its
//! bytes come (`crate::v5::write`). Either way the file is the one the whole array makes.

use sciio_core::{Error, Result, ScalarKind};
use sciio_hdf5::write::{DatasetSpec, FilterStage};

use super::sink::{Dataset, Group};
use super::{chunk_shape, file_type, python_attrs, MatWriter, Obj};
use crate::array_pieces::{ArrayPieces, RecordPieces};
use crate::numpy::PythonMeta;
use crate::value::{at_least_2d, MatClass, MatValue};

impl MatWriter {
    /// Writes the numeric or logical array `array` as variable `name` (a top-level name),
    /// asking for its elements a piece at a time; `meta` as in
    /// [`MatWriter::write_with_meta`]. The file is the same as when the whole array is
    /// written (with [`crate::from_numpy`]'s value and metadata).
    pub fn write_pieces(
        &mut self,
        name: &str,
        mut array: ArrayPieces<'_>,
        meta: Option<&PythonMeta>,
    ) -> Result<()> {
        super::check_name(name)?;
        if MatClass::of_kind(array.kind).is_none() {
            return Err(Error::unsupported(format!(
                "numpy kind {:?} has no MATLAB numeric class",
                array.kind
            ))
            .with_node(format!("/{name}")));
        }
        let whole = cfg!(target_endian = "big") || self.opts.libhdf5;
        if whole {
            let value = MatValue::numeric(array.gather()?)?;
            return self.write_with_meta(name, &value, meta);
        }
        if let Some(w) = &mut self.level5 {
            return w
                .write_pieces(name, array)
                .map_err(|e| e.with_node(format!("/{name}")).with_file(&self.path));
        }
        self.replace_variable(name, |w, root| {
            let obj = w.numeric_pieces(root, name, &mut array)?;
            match meta.and_then(|m| m.attrs.as_ref()) {
                Some(attrs) => python_attrs(&obj, attrs),
                None if w.opts.python_metadata => {
                    let shape: Vec<u64> = at_least_2d(&array.shape)
                        .iter()
                        .map(|&d| d as u64)
                        .collect();
                    super::numeric_python_metadata(&obj, array.kind, &shape)
                }
                None => Ok(()),
            }
        })
    }

    /// Writes structured array `records` as struct array variable `name` (a top-level
    /// name): the file [`MatWriter::write_with_meta`] makes of [`crate::from_numpy`]'s value
    /// and metadata (v7.3: the same values, its objects in another order). Level-5 files take
    /// the records batch by batch (`v5/write/records.rs`), v7.3 files element by element as they
    /// come (`write/records.rs`); both in bounded memory.
    pub fn write_records(&mut self, name: &str, mut records: RecordPieces<'_>) -> Result<()> {
        super::check_name(name)?;
        if let Some(w) = &mut self.level5 {
            return w
                .write_records(name, records)
                .map_err(|e| e.with_node(format!("/{name}")).with_file(&self.path));
        }
        if self.records_as_they_come(&records) {
            return self.replace_variable(name, |w, root| {
                w.records_struct(root, name, &mut records).map(|_| ())
            });
        }
        let array = records.gather()?;
        let (value, meta) =
            crate::from_numpy(&array).map_err(|e| e.with_node(format!("/{name}")))?;
        self.write_with_meta(name, &value, Some(&meta))
    }

    /// Writes structured array `records` as struct array `name` in group `loc` (a field of a
    /// struct being written, [`MatWriter::write_tree`]): element by element as they come when
    /// it can be, else gathered and written as `value` writes the whole array.
    pub(super) fn records_in(
        &mut self,
        loc: &Group,
        name: &str,
        records: &mut RecordPieces<'_>,
    ) -> Result<Obj> {
        if self.records_as_they_come(records) {
            return self.records_struct(loc, name, records);
        }
        let array = records.gather()?;
        let (value, meta) = crate::from_numpy(&array)?;
        self.value(loc, name, &value, Some(&meta))
    }

    /// The dataset `numeric` makes of the whole array, its data filled piece by piece.
    pub(super) fn numeric_pieces(
        &mut self,
        loc: &Group,
        name: &str,
        array: &mut ArrayPieces<'_>,
    ) -> Result<Obj> {
        let kind = array.kind;
        let class = MatClass::of_kind(kind).ok_or_else(|| {
            Error::unsupported(format!("numpy kind {kind:?} has no MATLAB class"))
        })?;
        let class = class.name();
        let shape = at_least_2d(&array.shape);
        if shape.contains(&0) {
            let obj = self.empty(loc, name, class, &shape)?;
            if kind == ScalarKind::Bool {
                obj.int_decode(1)?;
            }
            return Ok(obj);
        }
        let d = self.pieces_dataset(loc, name, array, class)?;
        if kind == ScalarKind::Bool {
            d.int_decode(1)?;
        }
        Ok(d)
    }

    /// The dataset of a non-empty array given piece by piece, of MATLAB class `class` (as
    /// `data_dataset` makes it of the whole array's bytes).
    pub(super) fn pieces_dataset(
        &mut self,
        loc: &Group,
        name: &str,
        array: &mut ArrayPieces<'_>,
        class: &str,
    ) -> Result<Obj> {
        let kind = array.kind;
        let shape = at_least_2d(&array.shape);
        let (_, nbytes) = array
            .size()
            .ok_or_else(|| Error::invalid_input("the array's size overflows"))?;
        let ty = match kind {
            // A bytes array's fixed-length strings (`crate::byte_strings`).
            ScalarKind::Bytes(size) => sciio_hdf5::H5Type::FixedString {
                size,
                charset: sciio_hdf5::CharSet::Ascii,
            },
            _ => file_type(kind)?,
        };
        let dims: Vec<u64> = shape.iter().rev().map(|&d| d as u64).collect();
        let spec = match self.opts.compression_level {
            Some(level) if nbytes >= self.opts.compress_threshold as u64 => {
                let item = ty.size();
                let chunk = chunk_shape(&dims, item, self.opts.chunk_bytes);
                let max = dims.iter().map(|&d| Some(d)).collect();
                DatasetSpec::chunked(ty, dims, max, chunk).filters(vec![
                    FilterStage::shuffle(item),
                    FilterStage::deflate(level),
                ])
            }
            _ => DatasetSpec::contiguous(ty, dims),
        };
        let d = match loc {
            Group::Native(g) => Dataset::Native(g.write_dataset_with(name, &spec, array.fill)?),
            Group::Libhdf5(_) | Group::Sealing(_) => {
                let whole = array.gather()?;
                loc.write_dataset(name, &spec, whole.as_bytes())?
            }
        };
        let d = Obj::Dataset(d);
        d.str_attr("MATLAB_class", class)?;
        Ok(d)
    }
}
