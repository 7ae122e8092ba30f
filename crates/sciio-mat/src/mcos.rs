//! MATLAB's object subsystem (MCOS) as stored in v7.3 MAT files: the `FileWrapper__`
//! metadata that names every class and lists every object's properties, object references,
//! and the decoding of the classes whose property layout is known.
//!
//! Layout (learned from the public descriptions of the format in the `mat-io` project and from
//! MATLAB-written files; no specification is published):
//! - An object variable is a `uint32` column with `MATLAB_object_decode = 3`:
//!   `[0xDD000000, ndims, dims..., object ids..., class id]`. Nested objects (in properties,
//!   cells, structs) are the same column stored as plain `uint32`.
//! - `/#subsystem#/MCOS` is a cell of references. Item 0 is a `uint8` blob (parsed here):
//!   version (2..=4), name count, eight region offsets, NUL-separated names, then regions of
//!   32-bit words: (1) classes as `[namespace name, class name, 0, 0]`, (2) "saveobj"
//!   property records, (3) objects as `[class id, 0, 0, saveobj id, object id, dependency]`,
//!   (4) property records, (5) dynamic properties (per object dependency id: a count and the
//!   ids of its `meta.DynamicProperty` objects, padded to even). A property record is a count
//!   followed by `[name index, kind, value]` triples, padded to an even number of words; kind 1 means
//!   "value is item `value + 2` of the MCOS cell". Item 1 is unused; the last item holds each
//!   class's default property values (a struct per class id).
//! - An enumeration array is not a reference but a struct (`EnumerationInstanceTag` =
//!   0xDD000000, `ClassName`, `ValueNames`, `ValueIndices`, `Values`, `BuiltinClassName`),
//!   as a variable or inside a property.
//!
//! No crate reads this format, so the few offsets are checked here by hand: every count and
//! offset is validated against the blob before use, and nothing is allocated from a count
//! that the blob cannot hold.

use sciio_core::{Error, Result};

use crate::value::{
    CalendarDuration, Categorical, CellArray, Datetime, Dictionary, Duration, Enumeration, MapData,
    MatObject, ObjectData, Properties, Table,
};
use crate::value::{MatValue, StructArray};

/// The first word of every object reference.
pub(crate) const OBJECT_MAGIC: u32 = 0xDD00_0000;

/// Versions of the `FileWrapper__` metadata whose layout is known.
const VERSIONS: std::ops::RangeInclusive<u32> = 2..=4;

/// An object reference: which objects of which class form an array of which shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObjectRef {
    pub shape: Vec<usize>,
    pub ids: Vec<u32>,
    pub class_id: u32,
}

impl ObjectRef {
    /// Parses `[0xDD000000, ndims, dims..., ids..., class id]`.
    pub(crate) fn parse(words: &[u32]) -> Result<ObjectRef> {
        let bad = |what: &str| Error::format(format!("MATLAB object reference {what}"));
        let (&magic, rest) = words.split_first().ok_or_else(|| bad("is empty"))?;
        if magic != OBJECT_MAGIC {
            return Err(bad(&format!("starts with {magic:#x}, not 0xdd000000")));
        }
        let (&ndims, rest) = rest.split_first().ok_or_else(|| bad("has no rank"))?;
        let ndims = ndims as usize;
        if ndims < 2 || ndims > rest.len() {
            return Err(bad(&format!("has rank {ndims} in {} words", words.len())));
        }
        let (dims, rest) = rest.split_at(ndims);
        let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
        let count = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .filter(|&n| n.checked_add(1) == Some(rest.len()))
            .ok_or_else(|| {
                bad(&format!(
                    "of shape {shape:?} has {} words for ids and class",
                    rest.len()
                ))
            })?;
        Ok(ObjectRef {
            shape,
            ids: rest[..count].to_vec(),
            class_id: rest[count],
        })
    }

    /// The reference held by a `uint32` MATLAB column (`n×1`), if it is one.
    pub(crate) fn from_value(value: &MatValue) -> Option<ObjectRef> {
        let MatValue::Numeric(a) = value else {
            return None;
        };
        let is_u32 = a.dtype().as_scalar().map(|s| s.kind) == Some(sciio_core::ScalarKind::UInt(4));
        if !is_u32 || a.shape().len() != 2 || a.shape()[1] != 1 || a.shape()[0] < 3 {
            return None;
        }
        let words: Vec<u32> = a
            .to_native()
            .as_bytes()
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if words.first() != Some(&OBJECT_MAGIC) {
            return None;
        }
        ObjectRef::parse(&words).ok()
    }
}

/// Where one property's value is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PropertyValue {
    /// Item `n + 2` of the MCOS cell.
    Cell(usize),
    /// An enumeration member, by name.
    Enumeration(String),
    /// A value kept in the metadata itself (MATLAB uses it for logical flags).
    Integer(u32),
}

/// One object's entry in the object table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ObjectEntry {
    class_id: u32,
    saveobj_id: u32,
    normal_id: u32,
    /// Index of the object's record in the dynamic-property region.
    dependency_id: u32,
}

/// The parsed `FileWrapper__` metadata blob.
#[derive(Debug, Clone)]
pub(crate) struct FileWrapper {
    pub version: u32,
    names: Vec<String>,
    /// `(namespace name index, class name index)` per class id (0 unused).
    classes: Vec<(u32, u32)>,
    objects: Vec<ObjectEntry>,
    saveobj: Records,
    normal: Records,
    /// Region 5: per object (by dependency id) a count and the ids of its dynamic property
    /// objects (`meta.DynamicProperty`), each record padded to an even number of words.
    dynamic: Vec<u32>,
}

/// A region of property records, with the word offset of each record.
#[derive(Debug, Clone, Default)]
struct Records {
    words: Vec<u32>,
    starts: Vec<usize>,
}

impl Records {
    /// Splits `words` into records of a count and `count` triples, each padded to an even
    /// number of words. A truncated last record is an error.
    fn parse(words: Vec<u32>, region: &str) -> Result<Records> {
        let mut starts = Vec::new();
        let mut at = 0usize;
        while at < words.len() {
            let count = words[at] as usize;
            let len = count
                .checked_mul(3)
                .and_then(|n| n.checked_add(1))
                .filter(|&n| n <= words.len() - at)
                .ok_or_else(|| {
                    Error::format(format!(
                        "FileWrapper__ {region} record at word {at} announces {count} properties past the region's end"
                    ))
                })?;
            starts.push(at);
            at += len + len % 2;
        }
        Ok(Records { words, starts })
    }

    /// The `[name, kind, value]` triples of record `id`.
    fn record(&self, id: u32, region: &str) -> Result<&[u32]> {
        let at = *self.starts.get(id as usize).ok_or_else(|| {
            Error::format(format!(
                "object names {region} record {id}, the region has {}",
                self.starts.len()
            ))
        })?;
        let count = self.words[at] as usize;
        // ok: Records::parse checked that every record fits in `words`.
        Ok(&self.words[at + 1..at + 1 + 3 * count])
    }
}

/// Bounds-checked little/big-endian words of the blob.
struct Blob<'a> {
    bytes: &'a [u8],
    big_endian: bool,
}

impl Blob<'_> {
    fn word(&self, offset: usize) -> Result<u32> {
        let b = offset
            .checked_add(4)
            .and_then(|end| self.bytes.get(offset..end))
            .ok_or_else(|| {
                Error::format(format!(
                    "FileWrapper__ metadata of {} bytes cut at offset {offset}",
                    self.bytes.len()
                ))
                .with_offset(offset as u64)
            })?;
        let b = [b[0], b[1], b[2], b[3]];
        Ok(if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }

    /// The words of `[start, end)` (both checked against the blob, `end` rounded down to a
    /// whole word).
    fn words(&self, start: usize, end: usize, region: &str) -> Result<Vec<u32>> {
        if start > end || end > self.bytes.len() {
            return Err(Error::format(format!(
                "FileWrapper__ {region} region [{start}, {end}) outside the {} bytes of metadata",
                self.bytes.len()
            )));
        }
        (start..end - (end - start) % 4)
            .step_by(4)
            .map(|o| self.word(o))
            .collect()
    }
}

impl FileWrapper {
    /// Parses the metadata blob (item 0 of `/#subsystem#/MCOS`).
    pub(crate) fn parse(bytes: &[u8]) -> Result<FileWrapper> {
        let le = Blob {
            bytes,
            big_endian: false,
        };
        let be = Blob {
            bytes,
            big_endian: true,
        };
        // MATLAB writes the blob in the machine's byte order; every machine it runs on today is
        // little-endian, but a version that only makes sense big-endian says which it is.
        let (blob, version) = match (le.word(0)?, be.word(0)?) {
            (v, _) if VERSIONS.contains(&v) => (le, v),
            (_, v) if VERSIONS.contains(&v) => (be, v),
            (v, _) => {
                return Err(Error::unsupported(format!(
                    "FileWrapper__ metadata version {v} (known: 2 to 4)"
                )))
            }
        };
        let name_count = blob.word(4)? as usize;
        let offsets: Vec<usize> = (0..8)
            .map(|i| blob.word(8 + 4 * i).map(|w| w as usize))
            .collect::<Result<_>>()?;
        let names = parse_names(bytes.get(40..offsets[0]).ok_or_else(|| {
            Error::format(format!(
                "FileWrapper__ names end at {}, outside the {} bytes of metadata",
                offsets[0],
                bytes.len()
            ))
        })?);
        if names.len() < name_count {
            return Err(Error::format(format!(
                "FileWrapper__ announces {name_count} names and holds {}",
                names.len()
            )));
        }
        let class_words = blob.words(offsets[0], offsets[1], "class")?;
        let classes = class_words.chunks_exact(4).map(|c| (c[0], c[1])).collect();
        let saveobj = Records::parse(blob.words(offsets[1], offsets[2], "saveobj")?, "saveobj")?;
        let object_words = blob.words(offsets[2], offsets[3], "object")?;
        let objects = object_words
            .chunks_exact(6)
            .map(|o| ObjectEntry {
                class_id: o[0],
                saveobj_id: o[3],
                normal_id: o[4],
                dependency_id: o[5],
            })
            .collect();
        let normal = Records::parse(blob.words(offsets[3], offsets[4], "property")?, "property")?;
        let dynamic = blob.words(offsets[4], offsets[5], "dynamic property")?;
        Ok(FileWrapper {
            version,
            names,
            classes,
            objects,
            saveobj,
            normal,
            dynamic,
        })
    }

    /// Name `index` (1-based, as the metadata counts).
    pub(crate) fn name(&self, index: u32) -> Result<&str> {
        (index as usize)
            .checked_sub(1)
            .and_then(|i| self.names.get(i))
            .map(String::as_str)
            .ok_or_else(|| {
                Error::format(format!(
                    "FileWrapper__ name index {index} outside its {} names",
                    self.names.len()
                ))
            })
    }

    /// The class name with its namespace (`pkg.Class`).
    pub(crate) fn class_name(&self, class_id: u32) -> Result<String> {
        let &(namespace, name) = self
            .classes
            .get(class_id as usize)
            .filter(|_| class_id != 0)
            .ok_or_else(|| {
                Error::format(format!(
                    "class id {class_id} outside the {} classes of the FileWrapper__ metadata",
                    self.classes.len().saturating_sub(1)
                ))
            })?;
        let name = self.name(name)?;
        Ok(if namespace == 0 {
            name.to_string()
        } else {
            format!("{}.{name}", self.name(namespace)?)
        })
    }

    /// The class id of object `id`.
    pub(crate) fn class_of(&self, id: u32) -> Result<u32> {
        Ok(self.object(id)?.class_id)
    }

    fn object(&self, id: u32) -> Result<ObjectEntry> {
        self.objects
            .get(id as usize)
            .filter(|_| id != 0)
            .copied()
            .ok_or_else(|| {
                Error::format(format!(
                    "object id {id} outside the {} objects of the FileWrapper__ metadata",
                    self.objects.len().saturating_sub(1)
                ))
            })
    }

    /// The ids of the dynamic property objects (`meta.DynamicProperty`) of object `id`
    /// (none when the region is empty, as newer files have it for built-in classes).
    pub(crate) fn dynamic_properties(&self, id: u32) -> Result<Vec<u32>> {
        let entry = self.object(id)?;
        if self.dynamic.is_empty() {
            return Ok(Vec::new());
        }
        let bad = || {
            Error::format(format!(
                "FileWrapper__ dynamic property record {} outside its region of {} words",
                entry.dependency_id,
                self.dynamic.len()
            ))
        };
        let mut at = 0usize;
        for _ in 0..entry.dependency_id {
            let n = *self.dynamic.get(at).ok_or_else(bad)? as usize;
            at = at.checked_add(1 + n).ok_or_else(bad)?;
            at += at % 2;
        }
        let n = *self.dynamic.get(at).ok_or_else(bad)? as usize;
        let ids = self
            .dynamic
            .get(at + 1..at.saturating_add(1).saturating_add(n))
            .ok_or_else(bad)?;
        Ok(ids.to_vec())
    }

    /// The saved properties of object `id`, by name.
    pub(crate) fn properties(&self, id: u32) -> Result<Vec<(String, PropertyValue)>> {
        let entry = self.object(id)?;
        let triples = if entry.saveobj_id != 0 {
            self.saveobj.record(entry.saveobj_id, "saveobj")?
        } else {
            self.normal.record(entry.normal_id, "property")?
        };
        triples
            .chunks_exact(3)
            .map(|t| {
                let name = self.name(t[0])?.to_string();
                let value = match t[1] {
                    0 => PropertyValue::Enumeration(self.name(t[2])?.to_string()),
                    1 => PropertyValue::Cell(t[2] as usize),
                    2 => PropertyValue::Integer(t[2]),
                    other => {
                        return Err(Error::unsupported(format!(
                            "property {name:?} of unknown kind {other}"
                        )))
                    }
                };
                Ok((name, value))
            })
            .collect()
    }
}

/// A dynamic property (the properties of its `meta.DynamicProperty` object) as the property
/// MATLAB shows: its name (`DynamicName_`, else `Name`) and value (`DynamicValue_`).
pub(crate) fn dynamic_property(props: &Properties) -> Result<(String, MatValue)> {
    let name = match prop(props, "DynamicName_").or_else(|| prop(props, "Name")) {
        Some(MatValue::Char(c)) => c.to_string_lossy(),
        _ => return Err(Error::format("a dynamic property without a name")),
    };
    let value = prop(props, "DynamicValue_")
        .cloned()
        .ok_or_else(|| Error::format(format!("dynamic property {name:?} without a value")))?;
    Ok((name, value))
}

/// The NUL-separated names (ASCII in practice; anything else is replaced, never refused).
fn parse_names(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

/// The properties a class's defaults struct gives (empty for an empty or field-less struct).
pub(crate) fn defaults_of(value: &MatValue) -> Properties {
    match value {
        MatValue::Struct(StructArray {
            fields, elements, ..
        }) if elements.len() == 1 => fields.iter().cloned().zip(elements[0].clone()).collect(),
        _ => Vec::new(),
    }
}

/// The value of an object array whose elements' properties are read (MAT v7.3 and Level-5
/// alike): decoded when the class has a known layout, kept as properties otherwise, opaque
/// with the reason when a known class does not have its layout. An empty object array
/// (`MyClass.empty`) has no elements to decode.
pub(crate) fn object_value(class: &str, shape: &[usize], elements: Vec<Properties>) -> MatValue {
    let decoded = match elements.is_empty() {
        true => None,
        false => decode_known(class, shape, &elements),
    };
    let properties = |elements| {
        MatValue::Object(MatObject {
            class: class.to_string(),
            shape: shape.to_vec(),
            data: ObjectData::Properties(elements),
        })
    };
    match decoded {
        None => properties(elements),
        Some(Ok(object)) => MatValue::Object(object),
        Some(Err(e)) => crate::value::opaque(class, properties(elements), e.message().to_string()),
    }
}

/// Decodes an object array of a class with a known layout; `None` for other classes.
/// `Err` when the class is known but its properties do not have the known layout.
pub(crate) fn decode_known(
    class: &str,
    shape: &[usize],
    elements: &[Properties],
) -> Option<Result<MatObject>> {
    let decoded = match class {
        "string" => decode_string(elements),
        "datetime" => decode_datetime(elements),
        "duration" => decode_duration(elements),
        "categorical" => decode_categorical(elements),
        "table" => decode_table(elements),
        "timetable" => decode_timetable(elements),
        "containers.Map" => decode_map(elements),
        "dictionary" => decode_dictionary(elements),
        "calendarDuration" => decode_calendar_duration(elements),
        "missing" => Ok(MatObject {
            class: "missing".into(),
            shape: shape.to_vec(),
            data: ObjectData::Missing,
        }),
        _ => return None,
    };
    Some(decoded.map_err(|e| {
        Error::format(format!(
            "MATLAB {class} object of size {shape:?} without the known layout: {}",
            e.message()
        ))
    }))
}

/// The one element these classes always are (MATLAB stores a `string` array as one object).
fn single(elements: &[Properties]) -> Result<&Properties> {
    match elements {
        [one] => Ok(one),
        _ => Err(Error::format(format!(
            "{} objects where one holds the whole array",
            elements.len()
        ))),
    }
}

fn prop<'a>(props: &'a Properties, name: &str) -> Option<&'a MatValue> {
    // Saved values come after defaults: the last of a name wins.
    props.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v)
}

fn required<'a>(props: &'a Properties, name: &str) -> Result<&'a MatValue> {
    prop(props, name).ok_or_else(|| Error::format(format!("no property {name:?}")))
}

/// `string`: property `any` is a `uint64` row `[1, ndims, dims..., lengths..., UTF-16 data]`
/// (length `u64::MAX` = `<missing>`); MATLAB writes an empty `any` for `""`-free empties.
fn decode_string(elements: &[Properties]) -> Result<MatObject> {
    let props = single(elements)?;
    let any = required(props, "any")?;
    let words = u64_words(any)?;
    if words.is_empty() {
        return Ok(MatObject::string(vec![0, 0], Vec::new()));
    }
    let bad = |what: String| Error::format(format!("string data {what}"));
    let get = |i: usize| {
        words
            .get(i)
            .copied()
            .ok_or_else(|| bad(format!("cut at word {i} of {}", words.len())))
    };
    if get(0)? != 1 {
        return Err(bad(format!("of version {}, not 1", get(0)?)));
    }
    let ndims = usize::try_from(get(1)?).unwrap_or(usize::MAX);
    if ndims < 2 || ndims > words.len() {
        return Err(bad(format!("with rank {ndims}")));
    }
    let shape: Vec<usize> = (0..ndims)
        .map(|i| get(2 + i).map(|d| usize::try_from(d).unwrap_or(usize::MAX)))
        .collect::<Result<_>>()?;
    let count = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= words.len())
        .ok_or_else(|| bad(format!("of shape {shape:?} in {} words", words.len())))?;
    let lengths = &words[2 + ndims..]
        .get(..count)
        .ok_or_else(|| bad(format!("of shape {shape:?} in {} words", words.len())))?;
    let units: Vec<u16> = words[2 + ndims + count..]
        .iter()
        .flat_map(|w| {
            let b = w.to_le_bytes();
            [
                u16::from_le_bytes([b[0], b[1]]),
                u16::from_le_bytes([b[2], b[3]]),
                u16::from_le_bytes([b[4], b[5]]),
                u16::from_le_bytes([b[6], b[7]]),
            ]
        })
        .collect();
    let mut items = Vec::with_capacity(count);
    let mut at = 0usize;
    for &len in lengths.iter() {
        if len == u64::MAX {
            items.push(None);
            continue;
        }
        let end = usize::try_from(len)
            .ok()
            .and_then(|n| at.checked_add(n))
            .filter(|&e| e <= units.len())
            .ok_or_else(|| bad(format!("with a string of {len} characters past its end")))?;
        items.push(Some(String::from_utf16_lossy(&units[at..end])));
        at = end;
    }
    Ok(MatObject::string(shape, items))
}

fn decode_datetime(elements: &[Properties]) -> Result<MatObject> {
    let props = single(elements)?;
    let (shape, millis) = doubles(required(props, "data")?)?;
    Ok(MatObject {
        class: "datetime".into(),
        shape,
        data: ObjectData::Datetime(Datetime {
            millis,
            time_zone: text(prop(props, "tz"))?,
            format: text(prop(props, "fmt"))?,
        }),
    })
}

fn decode_duration(elements: &[Properties]) -> Result<MatObject> {
    let props = single(elements)?;
    let (shape, millis) = doubles(required(props, "millis")?)?;
    Ok(MatObject {
        class: "duration".into(),
        shape,
        data: ObjectData::Duration(Duration {
            millis,
            format: text(prop(props, "fmt"))?,
        }),
    })
}

fn decode_categorical(elements: &[Properties]) -> Result<MatObject> {
    let props = single(elements)?;
    let codes_value = required(props, "codes")?;
    let shape = codes_value.matlab_shape();
    let codes: Vec<u32> = match codes_value {
        MatValue::Numeric(a) => unsigned(a)?,
        other => {
            return Err(Error::format(format!(
                "categorical codes of class {}",
                other.class().name()
            )))
        }
    };
    let categories = match required(props, "categoryNames")? {
        MatValue::Cell(c) => c
            .items
            .iter()
            .map(|v| match v {
                MatValue::Char(c) => Ok(c.to_string_lossy()),
                other => Err(Error::format(format!(
                    "a category name of class {}",
                    other.class().name()
                ))),
            })
            .collect::<Result<Vec<_>>>()?,
        other => {
            return Err(Error::format(format!(
                "categoryNames of class {}",
                other.class().name()
            )))
        }
    };
    if let Some(bad) = codes.iter().find(|&&c| c as usize > categories.len()) {
        return Err(Error::format(format!(
            "categorical code {bad} for {} categories",
            categories.len()
        )));
    }
    Ok(MatObject {
        class: "categorical".into(),
        shape,
        data: ObjectData::Categorical(Categorical {
            codes,
            categories,
            ordered: flag(prop(props, "isOrdinal")),
            protected: flag(prop(props, "isProtected")),
        }),
    })
}

/// `table`: `data` (a cell with one column value per variable), `varnames`, `rownames`
/// (cells of char), `nrows` and `nvars` (doubles); `props` (descriptions, units...) is not
/// decoded.
fn decode_table(elements: &[Properties]) -> Result<MatObject> {
    let props = single(elements)?;
    let columns = match required(props, "data")? {
        MatValue::Cell(c) => c.items.clone(),
        other => {
            return Err(Error::format(format!(
                "table data of class {}",
                other.class().name()
            )))
        }
    };
    let variable_names = texts(required(props, "varnames")?, "varnames")?;
    let row_names = match prop(props, "rownames") {
        Some(v) => texts(v, "rownames")?,
        None => Vec::new(),
    };
    let count = |name: &str| -> Result<usize> {
        match prop(props, name).map(doubles) {
            Some(Ok((_, v))) if v.len() == 1 && v[0] >= 0.0 && v[0].fract() == 0.0 => {
                Ok(v[0] as usize)
            }
            _ => Err(Error::format(format!("no whole number {name}"))),
        }
    };
    let (nrows, nvars) = (count("nrows")?, count("nvars")?);
    if columns.len() != nvars || variable_names.len() != nvars {
        return Err(Error::format(format!(
            "table of {nvars} variables with {} columns and {} names",
            columns.len(),
            variable_names.len()
        )));
    }
    Ok(MatObject {
        class: "table".into(),
        shape: vec![nrows, nvars],
        data: ObjectData::Table(Table {
            variable_names,
            columns,
            row_names,
            row_times: None,
        }),
    })
}

/// `containers.Map`: property `serialization`, a struct of `keys` and `values` (`1×n` cells),
/// `keyType` and `valueType` (char) and `uniformity`.
fn decode_map(elements: &[Properties]) -> Result<MatObject> {
    let props = single(elements)?;
    let MatValue::Struct(s) = required(props, "serialization")? else {
        return Err(Error::format("serialization is not a struct"));
    };
    let part = |name: &str| -> Result<Vec<MatValue>> {
        match s.field(0, name) {
            Some(MatValue::Cell(c)) => Ok(c.items.clone()),
            Some(v) if v.is_empty() => Ok(Vec::new()),
            Some(v) => Err(Error::format(format!(
                "map {name} of class {}, not a cell",
                v.class().name()
            ))),
            None => Err(Error::format(format!("no {name} in the serialization"))),
        }
    };
    let (keys, values) = (part("keys")?, part("values")?);
    if keys.len() != values.len() {
        return Err(Error::format(format!(
            "{} keys for {} values",
            keys.len(),
            values.len()
        )));
    }
    Ok(MatObject {
        class: "containers.Map".into(),
        shape: vec![1, 1],
        data: ObjectData::Map(MapData {
            keys: Box::new(MatValue::Cell(CellArray::row(keys))),
            values: Box::new(MatValue::Cell(CellArray::row(values))),
            key_type: text(s.field(0, "keyType"))?,
            value_type: text(s.field(0, "valueType"))?,
        }),
    })
}

/// The `dictionary` layout version this decoder knows (mat-io's `MAT_DICT_VERSION`).
const DICTIONARY_VERSION: u64 = 1;

/// `dictionary` (R2022b+): property `data`, a struct of `Version` (uint64 1) and either
/// `Unconfigured` (true, no types yet) or `IsKeyCombined`, `IsValueCombined` and `Key`,
/// `Value`: all keys as one array and all values as one array (mat-io's layout notes).
fn decode_dictionary(elements: &[Properties]) -> Result<MatObject> {
    let props = single(elements)?;
    let MatValue::Struct(s) = required(props, "data")? else {
        return Err(Error::format("data is not a struct"));
    };
    let version = match s.field(0, "Version") {
        Some(v) => u64_words(v).ok().and_then(|w| w.first().copied()),
        None => None,
    };
    if version != Some(DICTIONARY_VERSION) {
        return Err(Error::format(format!(
            "dictionary layout version {version:?} (only {DICTIONARY_VERSION} is known)"
        )));
    }
    let dictionary = if flag(s.field(0, "Unconfigured")) {
        Dictionary {
            keys: None,
            values: None,
        }
    } else {
        let part = |name: &str| {
            s.field(0, name)
                .cloned()
                .ok_or_else(|| Error::format(format!("no {name} in the dictionary data")))
        };
        let (keys, values) = (part("Key")?, part("Value")?);
        let count = |v: &MatValue| v.matlab_shape().iter().product::<usize>();
        // One element per entry in each (a scalar value given for many keys is stored
        // repeated: `dictionary([1 2 3], 'a')` holds a 3x1 char).
        if count(&keys) != count(&values) {
            return Err(Error::format(format!(
                "{} keys for {} values",
                count(&keys),
                count(&values)
            )));
        }
        Dictionary {
            keys: Some(Box::new(keys)),
            values: Some(Box::new(values)),
        }
    };
    Ok(MatObject {
        class: "dictionary".into(),
        shape: vec![1, 1],
        data: ObjectData::Dictionary(dictionary),
    })
}

/// `calendarDuration`: property `components`, a struct of `months`, `days` and `millis`
/// (doubles, each either of the array's size or a scalar shared by every element), and `fmt`.
fn decode_calendar_duration(elements: &[Properties]) -> Result<MatObject> {
    let props = single(elements)?;
    let MatValue::Struct(s) = required(props, "components")? else {
        return Err(Error::format("components is not a struct"));
    };
    let mut parts = Vec::with_capacity(3);
    for name in ["months", "days", "millis"] {
        let value = s
            .field(0, name)
            .ok_or_else(|| Error::format(format!("no {name} in the components")))?;
        let (shape, values) = match value {
            MatValue::Numeric(a) if a.is_empty() => (value.matlab_shape(), Vec::new()),
            _ => doubles(value)?,
        };
        parts.push((shape, values));
    }
    // The array's size is that of the largest component; scalars are spread over it.
    let shape = parts
        .iter()
        .filter(|(_, v)| v.len() != 1)
        .map(|(s, _)| s.clone())
        .next()
        .unwrap_or_else(|| vec![1, 1]);
    let count: usize = shape.iter().product();
    let mut arrays = Vec::with_capacity(3);
    for (name, (_, values)) in ["months", "days", "millis"].iter().zip(parts) {
        let values = match values.len() {
            1 => vec![values[0]; count],
            n if n == count => values,
            n => {
                return Err(Error::format(format!(
                    "calendarDuration {name} has {n} values for size {shape:?}"
                )))
            }
        };
        arrays.push(double_array(&shape, values)?);
    }
    let millis = arrays.pop().unwrap_or_else(|| MatValue::from(0.0));
    let days = arrays.pop().unwrap_or_else(|| MatValue::from(0.0));
    let months = arrays.pop().unwrap_or_else(|| MatValue::from(0.0));
    Ok(MatObject {
        class: "calendarDuration".into(),
        shape,
        data: ObjectData::CalendarDuration(CalendarDuration {
            months: Box::new(months),
            days: Box::new(days),
            millis: Box::new(millis),
            format: text(prop(props, "fmt"))?,
        }),
    })
}

/// A `double` array of MATLAB shape `shape` from column-major `values`.
fn double_array(shape: &[usize], values: Vec<f64>) -> Result<MatValue> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let a = sciio_core::NdArray::from_byte_vec(
        sciio_core::DType::scalar(sciio_core::ScalarKind::Float(8)),
        shape,
        sciio_core::Order::F,
        bytes,
    )?;
    Ok(MatValue::Numeric(a))
}

/// `timetable`: property `any`, a struct of `data` (a cell of columns), `varNames`,
/// `numVars`, `numRows`, `dimNames` and `rowTimes` — a `datetime` or `duration` column, or
/// (for regular times) a struct of `origin`, `specifiedAsRate`, `stepSize` and `sampleRate`.
fn decode_timetable(elements: &[Properties]) -> Result<MatObject> {
    let props = single(elements)?;
    let MatValue::Struct(s) = required(props, "any")? else {
        return Err(Error::format("any is not a struct"));
    };
    let field = |name: &str| {
        s.field(0, name)
            .ok_or_else(|| Error::format(format!("no {name}")))
    };
    let columns = match field("data")? {
        MatValue::Cell(c) => c.items.clone(),
        other => {
            return Err(Error::format(format!(
                "timetable data of class {}",
                other.class().name()
            )))
        }
    };
    let variable_names = texts(field("varNames")?, "varNames")?;
    let count = |name: &str| -> Result<usize> {
        match doubles(field(name)?) {
            Ok((_, v)) if v.len() == 1 && v[0] >= 0.0 && v[0].fract() == 0.0 => Ok(v[0] as usize),
            _ => Err(Error::format(format!("no whole number {name}"))),
        }
    };
    let (nrows, nvars) = (count("numRows")?, count("numVars")?);
    if columns.len() != nvars || variable_names.len() != nvars {
        return Err(Error::format(format!(
            "timetable of {nvars} variables with {} columns and {} names",
            columns.len(),
            variable_names.len()
        )));
    }
    // Every column has one row per table row; the count is checked before row times are
    // made from it.
    if let Some(bad) = columns
        .iter()
        .find(|c| c.matlab_shape().first() != Some(&nrows))
    {
        return Err(Error::format(format!(
            "timetable of {nrows} rows with a column of size {:?}",
            bad.matlab_shape()
        )));
    }
    sciio_core::Limits::default()
        .check_alloc((nrows as u64).saturating_mul(8), "timetable row times")?;
    let dim_names = texts(field("dimNames")?, "dimNames")?;
    let time_name = dim_names
        .first()
        .cloned()
        .unwrap_or_else(|| "Time".to_string());
    let times = row_times(field("rowTimes")?, nrows)?;
    Ok(MatObject {
        class: "timetable".into(),
        shape: vec![nrows, nvars],
        data: ObjectData::Table(Table {
            variable_names,
            columns,
            row_names: Vec::new(),
            row_times: Some((time_name, Box::new(times))),
        }),
    })
}

/// A timetable's row times as a `datetime` or `duration` column of `nrows`.
fn row_times(value: &MatValue, nrows: usize) -> Result<MatValue> {
    let column = |o: &MatObject, millis: Vec<f64>| -> MatValue {
        let data = match &o.data {
            ObjectData::Datetime(d) => ObjectData::Datetime(Datetime {
                millis,
                time_zone: d.time_zone.clone(),
                format: d.format.clone(),
            }),
            ObjectData::Duration(d) => ObjectData::Duration(Duration {
                millis,
                format: d.format.clone(),
            }),
            other => other.clone(),
        };
        MatValue::Object(MatObject {
            class: o.class.clone(),
            shape: vec![nrows, 1],
            data,
        })
    };
    let millis_of = |o: &MatObject| match &o.data {
        ObjectData::Datetime(d) => Some(d.millis.clone()),
        ObjectData::Duration(d) => Some(d.millis.clone()),
        _ => None,
    };
    match value {
        MatValue::Object(o) => match millis_of(o) {
            Some(m) if m.len() == nrows => Ok(column(o, m)),
            Some(m) => Err(Error::format(format!(
                "{} row times for {nrows} rows",
                m.len()
            ))),
            None => Err(Error::format(format!("row times of class {}", o.class))),
        },
        MatValue::Struct(s) => {
            let Some(MatValue::Object(origin)) = s.field(0, "origin") else {
                return Err(Error::format("regular row times without an origin"));
            };
            let start = match millis_of(origin).as_deref() {
                Some([m]) => *m,
                _ => {
                    return Err(Error::format(
                        "regular row times whose origin is not one time",
                    ))
                }
            };
            // A calendar step (months, then days, then milliseconds) from the origin.
            if let Some(MatValue::Object(MatObject {
                data: ObjectData::CalendarDuration(c),
                ..
            })) = s
                .field(0, "stepSize")
                .filter(|_| !flag(s.field(0, "specifiedAsRate")))
            {
                let one = |v: &MatValue| doubles(v).ok().and_then(|(_, v)| v.first().copied());
                let (Some(months), Some(days), Some(ms)) =
                    (one(&c.months), one(&c.days), one(&c.millis))
                else {
                    return Err(Error::format(
                        "regular row times with an empty calendar step",
                    ));
                };
                let millis = (0..nrows)
                    .map(|i| {
                        let k = i as f64;
                        add_months(start, k * months) + k * (days * 86_400_000.0 + ms)
                    })
                    .collect();
                return Ok(column(origin, millis));
            }
            let step = if flag(s.field(0, "specifiedAsRate")) {
                match s.field(0, "sampleRate").map(doubles) {
                    Some(Ok((_, v))) if v.len() == 1 && v[0] > 0.0 => 1000.0 / v[0],
                    _ => return Err(Error::format("regular row times without a sample rate")),
                }
            } else {
                match s.field(0, "stepSize") {
                    Some(MatValue::Object(MatObject {
                        data: ObjectData::Duration(d),
                        ..
                    })) if d.millis.len() == 1 => d.millis[0],
                    _ => return Err(Error::format("regular row times without a step")),
                }
            };
            let millis = (0..nrows).map(|i| start + i as f64 * step).collect();
            Ok(column(origin, millis))
        }
        other => Err(Error::format(format!(
            "row times of class {}",
            other.class().name()
        ))),
    }
}

/// `millis` (since 1970) plus `months` calendar months, the day of month kept (clamped to
/// the month's length, as MATLAB's calendar arithmetic does) and the time of day kept.
fn add_months(millis: f64, months: f64) -> f64 {
    // Beyond ±3 million years (or ±1 million months) is no calendar date: NaT.
    if !millis.is_finite() || millis.abs() > 1e17 || !months.is_finite() || months.abs() > 1e6 {
        return f64::NAN;
    }
    let day = (millis / 86_400_000.0).floor();
    let time_of_day = millis - day * 86_400_000.0;
    let (y, m, d) = sciio_core::calendar::civil_from_days(day as i128);
    let total = y * 12 + i128::from(m) - 1 + months as i128;
    let (y2, m2) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
    let d2 = d.min(days_in_month(y2, m2));
    days_from_civil(y2, m2, d2) as f64 * 86_400_000.0 + time_of_day
}

fn days_in_month(y: i128, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i128, m: u32, d: u32) -> i128 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i128::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i128::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An enumeration instance: MATLAB stores an enumeration array (as a variable, or inside a
/// property) as a struct of `EnumerationInstanceTag` (0xDD000000), `ClassName` (a class id),
/// `ValueNames` (name indices of the members), `ValueIndices` (each element's 0-based index
/// into `ValueNames`, in the array's shape), `Values` and `BuiltinClassName`. `None` when the
/// struct is not one.
pub(crate) fn enumeration(wrapper: &FileWrapper, value: &MatValue) -> Option<Result<MatObject>> {
    let MatValue::Struct(s) = value else {
        return None;
    };
    let words = |name: &str| -> Result<(Vec<usize>, Vec<u32>)> {
        match s.field(0, name) {
            Some(v @ MatValue::Numeric(a)) => Ok((v.matlab_shape(), unsigned(a)?)),
            _ => Err(Error::format(format!(
                "enumeration instance without a uint32 {name}"
            ))),
        }
    };
    match words("EnumerationInstanceTag") {
        Ok((_, tag)) if tag == [OBJECT_MAGIC] && s.elements.len() == 1 => {}
        _ => return None,
    }
    let decode = || -> Result<MatObject> {
        let class = match words("ClassName")?.1.as_slice() {
            [id] => wrapper.class_name(*id)?,
            _ => return Err(Error::format("enumeration ClassName is not one class id")),
        };
        let builtin_class = match words("BuiltinClassName")?.1.as_slice() {
            [0] | [] => String::new(),
            [id] => wrapper.class_name(*id)?,
            _ => return Err(Error::format("enumeration BuiltinClassName is not one id")),
        };
        let names: Vec<String> = words("ValueNames")?
            .1
            .iter()
            .map(|&i| wrapper.name(i).map(str::to_string))
            .collect::<Result<_>>()?;
        let (shape, indices) = words("ValueIndices")?;
        let members = indices
            .iter()
            .map(|&i| {
                names.get(i as usize).cloned().ok_or_else(|| {
                    Error::format(format!(
                        "enumeration value index {i} outside its {} members",
                        names.len()
                    ))
                })
            })
            .collect::<Result<_>>()?;
        Ok(MatObject {
            class,
            shape,
            data: ObjectData::Enumeration(Enumeration {
                members,
                builtin_class,
            }),
        })
    };
    Some(decode().map_err(|e| {
        Error::format(format!(
            "MATLAB enumeration without the known layout: {}",
            e.message()
        ))
    }))
}

/// The texts of a cell of char rows (an empty value gives none).
fn texts(value: &MatValue, what: &str) -> Result<Vec<String>> {
    match value {
        MatValue::Cell(c) => c
            .items
            .iter()
            .map(|v| match v {
                MatValue::Char(c) => Ok(c.to_string_lossy()),
                other => Err(Error::format(format!(
                    "{what} holds a {}, not text",
                    other.class().name()
                ))),
            })
            .collect(),
        other if other.is_empty() => Ok(Vec::new()),
        other => Err(Error::format(format!(
            "{what} of class {}, not a cell of text",
            other.class().name()
        ))),
    }
}

/// The MATLAB shape and values of a double array; a complex array's imaginary part (MATLAB's
/// sub-millisecond refinement of datetimes) is added to the real part.
fn doubles(value: &MatValue) -> Result<(Vec<usize>, Vec<f64>)> {
    let MatValue::Numeric(a) = value else {
        return Err(Error::format(format!(
            "time data of class {}",
            value.class().name()
        )));
    };
    let a = a.to_native();
    let f8 = |c: &[u8]| f64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    let values = match a.dtype().as_scalar().map(|s| s.kind) {
        Some(sciio_core::ScalarKind::Float(8)) => a.as_bytes().chunks_exact(8).map(f8).collect(),
        Some(sciio_core::ScalarKind::Complex(16)) => a
            .as_bytes()
            .chunks_exact(16)
            .map(|c| f8(&c[..8]) + f8(&c[8..]))
            .collect(),
        _ => {
            return Err(Error::format(format!(
                "time data of type {}, not double",
                a.dtype()
            )))
        }
    };
    Ok((value.matlab_shape(), values))
}

/// The words of a `uint64` array (column-major).
fn u64_words(value: &MatValue) -> Result<Vec<u64>> {
    match value {
        MatValue::Numeric(a)
            if a.dtype().as_scalar().map(|s| s.kind) == Some(sciio_core::ScalarKind::UInt(8)) =>
        {
            Ok(a.to_native()
                .as_bytes()
                .chunks_exact(8)
                .map(|c| u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                .collect())
        }
        other => Err(Error::format(format!(
            "string data of class {}, not uint64",
            other.class().name()
        ))),
    }
}

/// Unsigned integer codes of any width.
fn unsigned(a: &sciio_core::NdArray) -> Result<Vec<u32>> {
    let a = a.to_native();
    let b = a.as_bytes();
    Ok(match a.dtype().as_scalar().map(|s| s.kind) {
        Some(sciio_core::ScalarKind::UInt(1)) => b.iter().map(|&x| u32::from(x)).collect(),
        Some(sciio_core::ScalarKind::UInt(2)) => b
            .chunks_exact(2)
            .map(|c| u32::from(u16::from_ne_bytes([c[0], c[1]])))
            .collect(),
        Some(sciio_core::ScalarKind::UInt(4)) => b
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        _ => {
            return Err(Error::format(format!(
                "codes of type {}, not unsigned",
                a.dtype()
            )))
        }
    })
}

/// A char property's text (`""` when absent or empty).
fn text(value: Option<&MatValue>) -> Result<String> {
    match value {
        None => Ok(String::new()),
        Some(MatValue::Char(c)) => Ok(c.to_string_lossy()),
        Some(MatValue::Numeric(a)) if a.is_empty() => Ok(String::new()),
        Some(other) => Err(Error::format(format!(
            "a text property of class {}",
            other.class().name()
        ))),
    }
}

/// A logical (or numeric) flag; absent or empty is false.
fn flag(value: Option<&MatValue>) -> bool {
    match value {
        Some(MatValue::Logical(a)) | Some(MatValue::Numeric(a)) => {
            a.as_bytes().iter().any(|&b| b != 0)
        }
        _ => false,
    }
}

/// Fuzzing entry (not API): parses `bytes` as `FileWrapper__` metadata and looks up every
/// class, object and property it announces; also decodes `bytes` as a `string`'s data words.
/// Must return, never panic, whatever the bytes.
#[doc(hidden)]
pub fn fuzz_metadata(bytes: &[u8]) {
    if let Ok(fw) = FileWrapper::parse(bytes) {
        for id in 0..fw.classes.len().min(1 << 12) as u32 {
            let _ = fw.class_name(id);
        }
        for id in 0..fw.objects.len().min(1 << 12) as u32 {
            let _ = fw.class_of(id).and_then(|c| fw.class_name(c));
            let _ = fw.properties(id);
            let _ = fw.dynamic_properties(id);
        }
    }
    let words: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect();
    let n = words.len();
    if let Ok(a) = sciio_core::NdArray::from_vec(words, &[1, n]) {
        let props = vec![("any".to_string(), MatValue::Numeric(a))];
        let _ = decode_known("string", &[1, 1], &[props]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blob of version 4 with one class `C` (property `p`) and one object.
    fn blob() -> Vec<u8> {
        let mut b = Vec::new();
        let names = b"p\0C\0\0\0\0\0"; // 8 bytes
        let regions: [Vec<u32>; 5] = [
            vec![0, 0, 0, 0, 0, 2, 0, 0],
            vec![],
            vec![0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0],
            vec![0, 0, 1, 1, 1, 0],
            vec![0, 0, 0, 0],
        ];
        let mut offsets = vec![40 + names.len()];
        for r in &regions {
            offsets.push(offsets.last().unwrap() + 4 * r.len());
        }
        offsets.push(*offsets.last().unwrap());
        offsets.push(offsets.last().unwrap() + 8);
        b.extend(4u32.to_le_bytes());
        b.extend(2u32.to_le_bytes());
        for o in &offsets[..8] {
            b.extend((*o as u32).to_le_bytes());
        }
        b.extend(names);
        for r in &regions {
            for w in r {
                b.extend(w.to_le_bytes());
            }
        }
        b.extend([0u8; 8]);
        b
    }

    #[test]
    fn parses_a_minimal_wrapper() {
        let fw = FileWrapper::parse(&blob()).unwrap();
        assert_eq!(fw.class_name(1).unwrap(), "C");
        assert_eq!(fw.class_of(1).unwrap(), 1);
        assert_eq!(
            fw.properties(1).unwrap(),
            vec![("p".to_string(), PropertyValue::Cell(0))]
        );
        assert!(fw.properties(2).is_err());
        assert!(fw.class_name(0).is_err());
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let b = blob();
        for n in 0..b.len() {
            let _ = FileWrapper::parse(&b[..n]).and_then(|fw| fw.properties(1));
        }
    }

    #[test]
    fn object_refs() {
        let r = ObjectRef::parse(&[OBJECT_MAGIC, 2, 1, 2, 5, 6, 3]).unwrap();
        assert_eq!(r.shape, vec![1, 2]);
        assert_eq!(r.ids, vec![5, 6]);
        assert_eq!(r.class_id, 3);
        assert!(ObjectRef::parse(&[OBJECT_MAGIC, 2, 1, 2, 5, 3]).is_err());
        assert!(ObjectRef::parse(&[OBJECT_MAGIC, 200]).is_err());
        assert!(ObjectRef::parse(&[OBJECT_MAGIC, 2, u32::MAX, u32::MAX, 1]).is_err());
    }
}
