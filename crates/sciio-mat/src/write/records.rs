//! A structured array written into a v7.3 file as its records come
//! ([`MatWriter::write_records`]), in bounded memory: the struct array's layout is the one
//! the whole array makes (a group with, per field, a dataset of one object reference per
//! element, each element's value a dataset in `/#refs#` with its `Python.*` attributes), but
//! each element's dataset is written whole at once by the native writer (sealed: it leaves
//! memory, its address known at once) under a name in `/#refs#`'s name order, and the
//! fields' reference datasets, reserved at their full size first, are filled in place a
//! batch of records at a time. Only the order of the objects in the file and the elements'
//! names differ from the whole array's file: the values read back are the same.

use sciio_core::{DType, Error, NdArray, Order, Result};
use sciio_hdf5::write::native::NativeDataset;
use sciio_hdf5::write::DatasetSpec;
use sciio_hdf5::{AttrValue, H5Type, RawData};

use super::sink::Group;
use super::{python_attrs, MatWriter, Obj};
use crate::array_pieces::{changed, RecordPieces};
use crate::numpy::{field_value, record_attrs};
use crate::value::at_least_2d;

impl MatWriter {
    /// Whether `records` go into this v7.3 file as they come: a new native file (libhdf5,
    /// the writer's check, takes whole values), more than one record (one record is a
    /// scalar struct, its fields in its group), at least one field.
    pub(super) fn records_as_they_come(&self, records: &RecordPieces<'_>) -> bool {
        let native = matches!(self.root.as_deref(), Some(Group::Native(_)));
        let fields = matches!(&records.dtype, DType::Record(r) if !r.fields.is_empty());
        native && fields && records.len().is_some_and(|n| n > 1)
    }

    /// Writes `records` as struct array `name` of group `loc`, element by element as they
    /// come; returns the struct's group.
    pub(super) fn records_struct(
        &mut self,
        loc: &Group,
        name: &str,
        records: &mut RecordPieces<'_>,
    ) -> Result<Obj> {
        let dtype = records.dtype.clone();
        let DType::Record(record) = &dtype else {
            return Err(Error::invalid_input("internal: records of a plain dtype"));
        };
        if let Some(why) = crate::no_class_reason(&dtype) {
            return Err(Error::unsupported(why));
        }
        let n = records
            .len()
            .ok_or_else(|| Error::invalid_input("the array's size overflows"))?;
        let fields: Vec<String> = record.fields.iter().map(|f| f.name.to_string()).collect();
        for f in &fields {
            super::check_name(f)?;
        }
        let obj = self.struct_group(loc, name, &fields)?;
        let columns = reference_columns(&obj, &fields, &records.shape)?;
        // As `value` writes a struct below the root: its location, then its metadata.
        if loc.path() != "/" {
            obj.str_attr("H5PATH", loc.path())?;
        }
        python_attrs(&obj, &record_attrs(record, &records.shape))?;
        let elements = match self.refs_group()?.as_ref() {
            Group::Native(g) => Group::Sealing(g.clone()),
            _ => {
                return Err(Error::invalid_input(
                    "internal: records into a libhdf5 file",
                ))
            }
        };
        let item = record.itemsize;
        let mut done = 0u64;
        let mut column_refs: Vec<Vec<u8>> = vec![Vec::new(); fields.len()];
        (records.pass)(&mut |batch: &[u8]| {
            if item == 0 || !batch.len().is_multiple_of(item) {
                return Err(changed());
            }
            let count = (batch.len() / item) as u64;
            if done + count > n {
                return Err(changed());
            }
            // Field values are made from native-order records (their fields' dtypes native
            // too), as `from_numpy` makes them.
            let native =
                NdArray::from_bytes(dtype.clone(), &[count as usize], Order::C, batch)?.to_native();
            let DType::Record(native_record) = native.dtype() else {
                return Err(Error::invalid_input("internal: records of a plain dtype"));
            };
            for rec in native.as_bytes().chunks_exact(item) {
                for (field, refs) in native_record.fields.iter().zip(&mut column_refs) {
                    let (value, meta) = field_value(field, rec)?;
                    let name = self.next_element_name()?;
                    let element = self.value(&elements, &name, &value, Some(&meta))?;
                    refs.extend_from_slice(&element.seal()?.to_le_bytes());
                }
            }
            for (column, refs) in columns.iter().zip(&mut column_refs) {
                column.write_at(done, refs)?;
                refs.clear();
            }
            done += count;
            Ok(())
        })?;
        if done != n {
            return Err(changed());
        }
        Ok(obj)
    }

    /// The next name of an element written as it comes ([`element_name`]).
    fn next_element_name(&mut self) -> Result<String> {
        let name = element_name(self.next_element)?;
        self.next_element += 1;
        Ok(name)
    }
}

/// Per field of struct group `obj`, its dataset of one reference per element (MATLAB
/// dimensions reversed, as `ref_dataset` makes it), reserved whole to be filled in place.
fn reference_columns(obj: &Obj, fields: &[String], shape: &[usize]) -> Result<Vec<NativeDataset>> {
    let Obj::Group(Group::Native(g)) = obj else {
        return Err(Error::invalid_input(
            "internal: a struct group of another writer",
        ));
    };
    let dims: Vec<u64> = at_least_2d(shape).iter().rev().map(|&d| d as u64).collect();
    let spec = DatasetSpec::contiguous(H5Type::ObjectRef, dims);
    let path = AttrValue::Raw(RawData::bytes_string(g.path().as_bytes()));
    fields
        .iter()
        .map(|f| {
            let d = g.reserve_dataset(f, &spec)?;
            d.add_attr("H5PATH", &path)?;
            Ok(d)
        })
        .collect()
}

/// Digits of [`element_name`]: `0-9A-Za-z`, in ASCII (strcmp) order.
const NAME_DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The name in `/#refs#` of the `n`-th element written as it comes: a decimal digit, then
/// five of [`NAME_DIGITS`] (10 × 62⁵, 9.2 billion names). Fixed-width, they come in strcmp
/// order, so the native writer writes `/#refs#`'s links as they come (a run of sealed
/// links); starting with a digit, they are never `ref_name`'s (letters only).
fn element_name(mut n: u64) -> Result<String> {
    let mut out = [0u8; 6];
    for slot in out[1..].iter_mut().rev() {
        *slot = NAME_DIGITS[(n % 62) as usize];
        n /= 62;
    }
    if n >= 10 {
        return Err(Error::unsupported(
            "more than 9.2 billion struct elements in one MAT file",
        ));
    }
    out[0] = NAME_DIGITS[n as usize];
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MatFile, MatValue, WriteOptions};

    /// 20 records of a big-endian double, text of several lengths (empty too) and a
    /// big-endian subarray, given in batches of 3 (the reference datasets filled slab by
    /// slab), read back equal to the whole array's file; beside a variable written whole
    /// before and after (their `#refs#` names kept around the run).
    #[test]
    fn records_in_small_batches_read_back_as_the_whole_array() {
        let descr =
            sciio_core::PyLiteral::parse("[('x', '>f8'), ('s', '|S5'), ('v', '>i2', (2,))]")
                .unwrap();
        let dtype = DType::parse_descr(&descr).unwrap();
        let words: [&[u8]; 4] = [b"", b"a", b"hello", b"xy"];
        let mut bytes = Vec::new();
        for k in 0..20u16 {
            bytes.extend_from_slice(&(f64::from(k) / 3.0).to_be_bytes());
            let mut w = words[usize::from(k) % 4].to_vec();
            w.resize(5, 0);
            bytes.extend_from_slice(&w);
            bytes.extend_from_slice(&(k as i16 - 7).to_be_bytes());
            bytes.extend_from_slice(&(k as i16 * 100).to_be_bytes());
        }
        let array = NdArray::from_bytes(dtype.clone(), &[20], Order::C, &bytes).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cell = MatValue::Cell(crate::CellArray::row(vec![MatValue::from(1.0)]));
        let write = |path: &std::path::Path, batches: bool| {
            let mut w = MatWriter::create(path, WriteOptions::default()).unwrap();
            w.write("before", &cell).unwrap();
            if batches {
                let mut pass = |put: &mut crate::PutBytes<'_>| -> Result<()> {
                    bytes.chunks(3 * dtype.itemsize()).try_for_each(&mut *put)
                };
                let records = RecordPieces {
                    dtype: dtype.clone(),
                    shape: vec![20],
                    pass: &mut pass,
                };
                w.write_records("r", records).unwrap();
            } else {
                let (value, meta) = crate::from_numpy(&array).unwrap();
                w.write_with_meta("r", &value, Some(&meta)).unwrap();
            }
            w.write("after", &cell).unwrap();
            w.finish().unwrap();
            let back = MatFile::open(path).unwrap();
            ["before", "r", "after"].map(|v| back.read(v).unwrap())
        };
        let whole = write(&dir.path().join("whole.mat"), false);
        let streamed = write(&dir.path().join("streamed.mat"), true);
        assert!(whole == streamed);
        let MatValue::Struct(s) = &streamed[1] else {
            panic!("not a struct");
        };
        assert_eq!((s.shape.as_slice(), s.elements.len()), (&[1, 20][..], 20));
    }

    #[test]
    fn element_names_come_in_strcmp_order() {
        let names: Vec<String> = [
            0,
            1,
            61,
            62,
            62u64.pow(5) - 1,
            62u64.pow(5),
            10 * 62u64.pow(5) - 1,
        ]
        .into_iter()
        .map(|n| element_name(n).unwrap())
        .collect();
        assert_eq!(names[0], "000000");
        assert_eq!(names[3], "000010");
        assert_eq!(names[6], "9zzzzz");
        assert!(names.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()));
        assert!(element_name(10 * 62u64.pow(5)).is_err());
    }
}
