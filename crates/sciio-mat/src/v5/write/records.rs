//! A structured array written into a Level-5 file batch of records by batch
//! ([`Level5Writer::write_records`]): the struct array's `miMATRIX` element the whole array's
//! `MatValue::Struct` makes (`write.rs`), byte for byte, without holding its elements.
//!
//! The element's size comes before its elements (inside a v7 zlib stream it cannot be
//! patched afterwards), so it is computed first: numeric fields (scalars and subarrays) make
//! elements of one size whatever their values; byte and text fields make char rows whose
//! length depends on the data (trailing NULs dropped, UTF-8), measured in a first pass over
//! the records. The elements are then encoded batch by batch into the same stream as the
//! numeric `write_pieces` (v7: deflated pigz-style as they come).

use sciio_core::{DType, Error, Field, NdArray, Order, RecordType, Result, ScalarKind};

use super::super::consts::MX_STRUCT;
use super::{matrix, matrix_head, struct_field_names, Level5Writer, MAX_VARIABLE, PARALLEL_FROM};
use crate::array_pieces::{changed, PutBytes, RecordPieces};
use crate::numpy::scipy_field_value;

impl Level5Writer {
    /// Appends structured array `records` as struct array variable `name` (what
    /// [`Level5Writer::write`] makes of [`crate::scipy_value`]'s struct), reading the records
    /// once (numeric fields only) or twice (byte or text fields: their sizes first).
    pub(crate) fn write_records(
        &mut self,
        name: &str,
        mut records: RecordPieces<'_>,
    ) -> Result<()> {
        if !name.is_ascii() || name.len() > 63 {
            return Err(Error::unsupported(format!(
                "variable name {name:?}: MAT v5/v7 names are at most 63 ASCII characters"
            )));
        }
        let element = RecordsElement::plan(name, &mut records)?;
        if element.len() < PARALLEL_FROM as u64 {
            // Small: the whole element, as `write` compresses it (zlib levels by size).
            let mut body = Vec::new();
            element.put(&mut records, &mut |b| {
                body.extend_from_slice(b);
                Ok(())
            })?;
            return self.put_whole(&body);
        }
        self.put_streamed(&mut |put| element.put(&mut records, put))
    }
}

/// A structured array's `miMATRIX` element planned before any of it is written: its head
/// (the element's size, which comes first, known) and how its records are encoded.
pub(crate) struct RecordsElement {
    head: Vec<u8>,
    /// Bytes of the elements after the head.
    elements: u64,
    count: u64,
    encoder: Encoder,
}

impl RecordsElement {
    /// Plans the element named `name` (`""` for a struct's field) of `records`, passing over
    /// them once when a byte or text field's elements must be measured. Refuses a variable
    /// over 2 GB, or records of no MATLAB class.
    pub(crate) fn plan(name: &str, records: &mut RecordPieces<'_>) -> Result<RecordsElement> {
        if let Some(why) = crate::numpy::no_class_reason(&records.dtype) {
            return Err(Error::unsupported(why));
        }
        let count = records
            .len()
            .ok_or_else(|| Error::invalid_input("the array's size overflows"))?;
        let native = records.dtype.to_native();
        let DType::Record(record) = native else {
            return Err(Error::invalid_input("not a structured array"));
        };
        let coders = record
            .fields
            .iter()
            .map(FieldCoder::new)
            .collect::<Result<Vec<_>>>()?;
        let encoder = Encoder {
            dtype: records.dtype.clone(),
            record,
            coders,
        };
        // Refused before the measuring pass when even the smallest elements (text fields
        // empty) would not fit.
        let least = encoder.least_record_len().saturating_mul(count);
        struct_head(name, &records.shape, &encoder.record, least)?;
        let elements = match encoder.fixed_record_len() {
            Some(len) => len.checked_mul(count),
            None => Some(encoder.measure(records.pass, count)?),
        }
        .ok_or_else(|| Error::invalid_input("the array's size overflows"))?;
        let head = struct_head(name, &records.shape, &encoder.record, elements)?;
        Ok(RecordsElement {
            head,
            elements,
            count,
            encoder,
        })
    }

    /// The element's length, tag included.
    pub(crate) fn len(&self) -> u64 {
        self.head.len() as u64 + self.elements
    }

    /// Gives the element's bytes to `put`: its head, then the records (another pass over
    /// them) encoded, checked to be the bytes planned.
    pub(crate) fn put(&self, records: &mut RecordPieces<'_>, put: &mut PutBytes<'_>) -> Result<()> {
        put(&self.head)?;
        let mut written = 0u64;
        self.encoder.encode(records.pass, self.count, &mut |b| {
            written += b.len() as u64;
            if written > self.elements {
                return Err(changed());
            }
            put(b)
        })?;
        match written == self.elements {
            true => Ok(()),
            false => Err(changed()),
        }
    }
}

/// The struct array's `miMATRIX` element up to its elements, for `elements` bytes of them:
/// tag, array flags, dimensions, name, field names. Refuses a variable over 2 GB.
fn struct_head(name: &str, shape: &[usize], record: &RecordType, elements: u64) -> Result<Vec<u8>> {
    let mut head = matrix_head(MX_STRUCT, shape, name)?;
    let names: Vec<String> = record.fields.iter().map(|f| f.name.clone()).collect();
    struct_field_names(&mut head, &names)?;
    let len = (head.len() as u64 - 8).saturating_add(elements);
    if len.saturating_add(8) > MAX_VARIABLE {
        return Err(Error::unsupported(format!(
            "the variable needs about {} bytes, over the 2 GB a MAT v5/v7 variable can \
             hold: write MAT v7.3 instead (--mat-version 7.3)",
            len.saturating_add(8)
        )));
    }
    let len = u32::try_from(len).map_err(|_| {
        Error::unsupported("the variable is over 4 GB: write MAT v7.3 (--mat-version 7.3)")
    })?;
    head[4..8].copy_from_slice(&len.to_le_bytes());
    Ok(head)
}

/// How one field's value element is made.
enum FieldCoder {
    /// A numeric or logical scalar (not complex) on a little-endian machine: the element of a
    /// zero value with the record's bytes put at `at`.
    Patch {
        template: Vec<u8>,
        at: usize,
        offset: usize,
        size: usize,
    },
    /// Anything else: the value made as the whole array's is, then encoded; `fixed` its
    /// element's length when that does not depend on the data (numeric subarrays).
    Value {
        field: Field,
        fixed: Option<u64>,
        least: u64,
    },
}

impl FieldCoder {
    /// The coder of `field` (native byte order).
    fn new(field: &Field) -> Result<FieldCoder> {
        let size = field.dtype.itemsize();
        let zero = vec![0u8; field.offset + size];
        let mut template = Vec::new();
        matrix(&mut template, "", &scipy_field_value(field, &zero)?)?;
        let base = match &field.dtype {
            DType::SubArray(base, _) => base,
            other => other,
        };
        let kind = base.as_scalar().map(|s| s.kind);
        let text = matches!(kind, Some(ScalarKind::Unicode(_) | ScalarKind::Bytes(_)));
        let patchable = cfg!(target_endian = "little")
            && matches!(field.dtype, DType::Scalar(_))
            && matches!(
                kind,
                Some(ScalarKind::Bool | ScalarKind::Int(_) | ScalarKind::UInt(_))
                    | Some(ScalarKind::Float(4 | 8))
            );
        // The data of a one-value element: small format (tag, then up to 4 bytes) or the
        // 8 bytes after the tag.
        let at = match size {
            1..=4 => template.len().checked_sub(4),
            8 => template.len().checked_sub(8),
            _ => None,
        };
        Ok(match (patchable, at) {
            (true, Some(at)) => FieldCoder::Patch {
                template,
                at,
                offset: field.offset,
                size,
            },
            _ => FieldCoder::Value {
                field: field.clone(),
                fixed: (!text).then_some(template.len() as u64),
                // A zero value's element: an empty text's, the shortest there is.
                least: template.len() as u64,
            },
        })
    }

    /// The shortest element's length.
    fn least(&self) -> u64 {
        match self {
            FieldCoder::Patch { template, .. } => template.len() as u64,
            FieldCoder::Value { least, .. } => *least,
        }
    }

    /// The element's length whatever the data, if it is so.
    fn fixed(&self) -> Option<u64> {
        match self {
            FieldCoder::Patch { template, .. } => Some(template.len() as u64),
            FieldCoder::Value { fixed, .. } => *fixed,
        }
    }

    /// Appends this field's element of `record` (native byte order) to `out`.
    fn encode(&self, record: &[u8], out: &mut Vec<u8>) -> Result<()> {
        match self {
            FieldCoder::Patch {
                template,
                at,
                offset,
                size,
            } => {
                let start = out.len();
                out.extend_from_slice(template);
                let value = record
                    .get(*offset..offset + size)
                    .ok_or_else(|| Error::format("record field beyond the record"))?;
                out[start + at..start + at + size].copy_from_slice(value);
                Ok(())
            }
            FieldCoder::Value { field, .. } => matrix(out, "", &scipy_field_value(field, record)?),
        }
    }
}

/// Records of a structured array made into struct elements.
struct Encoder {
    /// The records' dtype as given (any byte order).
    dtype: DType,
    /// Its native-order record type.
    record: RecordType,
    coders: Vec<FieldCoder>,
}

/// Bytes of elements encoded before they are passed on.
const OUT_BYTES: usize = 4 << 20;

impl Encoder {
    /// Bytes of one record's elements when no field's depends on the data.
    fn fixed_record_len(&self) -> Option<u64> {
        self.coders.iter().map(FieldCoder::fixed).sum()
    }

    /// Bytes of one record's elements at the least (text fields empty).
    fn least_record_len(&self) -> u64 {
        self.coders.iter().map(FieldCoder::least).sum()
    }

    /// Calls `each` with every record in native byte order, checking their count.
    fn for_each_record(
        &self,
        pass: &mut crate::array_pieces::RecordPass<'_>,
        count: u64,
        each: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let item = self.record.itemsize;
        if item == 0 {
            return Err(Error::unsupported("records of no bytes"));
        }
        let native = self.dtype.is_native();
        let mut seen = 0u64;
        pass(&mut |batch: &[u8]| {
            if !batch.len().is_multiple_of(item) {
                return Err(changed());
            }
            let n = batch.len() / item;
            seen += n as u64;
            if seen > count {
                return Err(changed());
            }
            let swapped;
            let bytes = match native {
                true => batch,
                false => {
                    swapped =
                        NdArray::from_bytes(self.dtype.clone(), &[n], Order::C, batch)?.to_native();
                    swapped.as_bytes()
                }
            };
            bytes.chunks_exact(item).try_for_each(&mut *each)
        })?;
        match seen == count {
            true => Ok(()),
            false => Err(changed()),
        }
    }

    /// The bytes of all the records' elements (a pass over the records).
    fn measure(&self, pass: &mut crate::array_pieces::RecordPass<'_>, count: u64) -> Result<u64> {
        let fixed: u64 = self.coders.iter().filter_map(FieldCoder::fixed).sum();
        let mut total = 0u64;
        let mut scratch = Vec::new();
        self.for_each_record(pass, count, &mut |record| {
            total = total.saturating_add(fixed);
            for coder in self.coders.iter().filter(|c| c.fixed().is_none()) {
                scratch.clear();
                coder.encode(record, &mut scratch)?;
                total = total.saturating_add(scratch.len() as u64);
            }
            Ok(())
        })?;
        Ok(total)
    }

    /// The records' elements, passed to `put` a few MiB at a time.
    fn encode(
        &self,
        pass: &mut crate::array_pieces::RecordPass<'_>,
        count: u64,
        put: &mut PutBytes<'_>,
    ) -> Result<()> {
        let mut buf = Vec::with_capacity(OUT_BYTES + 4096);
        self.for_each_record(pass, count, &mut |record| {
            for coder in &self.coders {
                coder.encode(record, &mut buf)?;
            }
            if buf.len() >= OUT_BYTES {
                put(&buf)?;
                buf.clear();
            }
            Ok(())
        })?;
        put(&buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A struct array whose elements would take the variable over 2 GB is refused with the
    /// whole path's message before anything is written.
    #[test]
    fn struct_arrays_over_2_gb_are_refused_before_writing() {
        let f8 = DType::from_typestr("<f8").unwrap();
        let record = RecordType::packed([("x".to_string(), f8)]);
        let ok = struct_head("r", &[10], &record, 1000).unwrap();
        let len = u32::from_le_bytes(ok[4..8].try_into().unwrap());
        assert_eq!(u64::from(len), ok.len() as u64 - 8 + 1000);
        let err = struct_head("r", &[10], &record, 3 << 30).unwrap_err();
        assert!(err.to_string().contains("over the 2 GB"), "{err}");
    }

    /// Records whose text fields are measured in a first pass are refused before it when
    /// even their empty texts would take the variable over 2 GB: nothing is read.
    #[test]
    fn records_too_large_even_with_empty_texts_are_refused_before_reading() {
        let descr = sciio_core::PyLiteral::parse("[('s', '|S4'), ('x', '<f8')]").unwrap();
        let dtype = DType::parse_descr(&descr).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut w = Level5Writer::create(&dir.path().join("big.mat"), None, "test").unwrap();
        let mut read = 0;
        let mut pass = |_: &mut PutBytes<'_>| -> Result<()> {
            read += 1;
            Err(Error::invalid_input("read"))
        };
        let records = RecordPieces {
            dtype,
            shape: vec![40_000_000],
            pass: &mut pass,
        };
        let err = w.write_records("r", records).unwrap_err();
        assert!(err.to_string().contains("over the 2 GB"), "{err}");
        assert_eq!(read, 0);
    }
}
