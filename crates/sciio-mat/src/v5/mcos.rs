//! MATLAB objects (MCOS) in Level-5 files. An object variable is an `mxOPAQUE_CLASS` array
//! (type system `MCOS`) whose data is the same `uint32` object reference v7.3 files hold; the
//! file's subsystem (the element at the header's subsystem offset) is a `uint8` array holding
//! a small MAT stream (version, endian indicator, padding, then one struct whose `MCOS` field
//! is a `FileWrapper__` object over the same cell v7.3 keeps in `/#subsystem#/MCOS`). The
//! decoders of [`crate::mcos`] then apply unchanged.
//!
//! Whatever is wrong with one object's metadata makes that value [`MatValue::Opaque`] with
//! the reason; it never fails the file or the other variables.

use std::sync::Arc;

use sciio_core::{Error, Result, ScalarKind};

use super::cursor::{Cursor, Endian, MI_MATRIX};
use super::decode::{Decoder, MCOS_NOTE};
use super::subsystem::Subsystem;
use super::Mat5File;
use crate::mcos::{
    defaults_of, dynamic_property, enumeration, object_value, FileWrapper, ObjectRef, PropertyValue,
};
use crate::object_values::transposed_column;
use crate::value::opaque;
use crate::value::Properties;
use crate::value::{Contents, MatValue, Opaque};

/// Deepest nesting of objects followed.
const MAX_DEPTH: usize = 64;

impl Mat5File {
    /// Replaces MCOS objects (at any depth) by their decoded values.
    pub(super) fn resolve_objects(&self, value: MatValue) -> MatValue {
        if !contains_mcos(&value) {
            return value;
        }
        let sub = match self.subsystem_loaded() {
            Ok(sub) => sub,
            Err(e) => return mark_failed(value, e.message()),
        };
        let mut r = Resolver {
            sub: &sub,
            depth: 0,
            active: Vec::new(),
        };
        r.top(value)
    }

    fn subsystem_loaded(&self) -> Result<Arc<Subsystem>> {
        let mut slot = self
            .objects
            .lock()
            .map_err(|_| Error::format("subsystem cache poisoned"))?;
        if let Some(loaded) = &*slot {
            return loaded.clone().map_err(Error::format);
        }
        let loaded = self
            .load_subsystem()
            .map(Arc::new)
            .map_err(|e| e.message().to_string());
        *slot = Some(loaded.clone());
        loaded.map_err(Error::format)
    }

    fn load_subsystem(&self) -> Result<Subsystem> {
        let (start, end, compressed, offset) = self
            .subsystem
            .ok_or_else(|| Error::format("MATLAB objects, but the file has no subsystem"))?;
        let blob = self.decode(start, end, compressed, offset)?;
        let bytes = match &blob {
            MatValue::Numeric(a)
                if a.dtype().as_scalar().map(|s| s.kind) == Some(ScalarKind::UInt(1)) =>
            {
                a.as_bytes()
            }
            other => {
                return Err(Error::format(format!(
                    "the subsystem is of class {}, not uint8",
                    other.class().name()
                )))
            }
        };
        let endian = match bytes.get(2..4) {
            Some(b"IM") => Endian::Little,
            Some(b"MI") => Endian::Big,
            _ => return Err(Error::format("the subsystem has no endian indicator")),
        };
        let mut c = Cursor::new(bytes.get(8..).unwrap_or_default(), offset, false, endian);
        let el = c.element("the subsystem's data")?;
        if el.ty != MI_MATRIX {
            return Err(Error::format("the subsystem's data is not an miMATRIX"));
        }
        let decoder = Decoder {
            limits: &self.limits,
        };
        let (_, value) = decoder.matrix(&mut c.inner(&el), 0, "/#subsystem#")?;
        let cell = match &value {
            MatValue::Struct(s) => match s.field(0, "MCOS") {
                Some(MatValue::Opaque(Opaque {
                    payload: Some(p), ..
                })) => match p.as_ref() {
                    MatValue::Cell(c) => c.items.clone(),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let meta = match cell.first() {
            Some(MatValue::Numeric(a))
                if a.dtype().as_scalar().map(|s| s.kind) == Some(ScalarKind::UInt(1)) =>
            {
                a.to_order(sciio_core::Order::F).as_bytes().to_vec()
            }
            _ => {
                return Err(Error::format(
                    "the subsystem has no MCOS FileWrapper__ metadata",
                ))
            }
        };
        let wrapper = FileWrapper::parse(&meta)?;
        // Version 2 ends with the defaults only; 3 adds class aliases; 4 one more cell.
        let tail = match wrapper.version {
            2 => 1,
            3 => 2,
            _ => 3,
        };
        let values_end = cell
            .len()
            .checked_sub(tail)
            .filter(|&e| e >= 2)
            .ok_or_else(|| {
                Error::format(format!(
                    "the MCOS cell has {} items, fewer than its version {} needs",
                    cell.len(),
                    wrapper.version
                ))
            })?;
        let defaults = match cell.last() {
            Some(MatValue::Cell(c)) => c.items.clone(),
            _ => Vec::new(),
        };
        Ok(Subsystem {
            wrapper,
            items: cell,
            defaults,
            values_end,
        })
    }
}

fn is_mcos(o: &Opaque) -> bool {
    o.note == MCOS_NOTE
}

fn contains_mcos(v: &MatValue) -> bool {
    match v {
        MatValue::Opaque(o) => is_mcos(o),
        MatValue::Cell(c) => c.items.iter().any(contains_mcos),
        MatValue::Struct(s) => s.elements.iter().flatten().any(contains_mcos),
        _ => false,
    }
}

/// Every MCOS object in `v` kept opaque, with the reason the subsystem could not be read.
fn mark_failed(v: MatValue, why: &str) -> MatValue {
    match v {
        MatValue::Opaque(mut o) if is_mcos(&o) => {
            o.note = format!("MATLAB object not decoded: {why}");
            MatValue::Opaque(o)
        }
        other => other.map_contents(|x| mark_failed(x, why)).value(),
    }
}

struct Resolver<'a> {
    sub: &'a Subsystem,
    depth: usize,
    /// Ids of the objects being read (to refuse cycles).
    active: Vec<u32>,
}

impl Resolver<'_> {
    /// Decodes the MCOS objects of a variable's value (opaque arrays at any depth).
    fn top(&mut self, v: MatValue) -> MatValue {
        match v {
            MatValue::Opaque(o) if is_mcos(&o) => {
                let class = o.class.clone();
                let Some(payload) = o.payload else {
                    return opaque_without(&class, "MATLAB object without data");
                };
                if let Some(decoded) = self.enumeration(&class, &payload) {
                    return decoded;
                }
                let Some(reference) = ObjectRef::from_value(&transposed_column(&payload)) else {
                    return opaque(
                        &class,
                        *payload,
                        "MATLAB object whose data is not an MCOS object reference".into(),
                    );
                };
                match self.object(&reference) {
                    Ok(MatValue::Object(obj)) if obj.class != class => opaque(
                        &class,
                        MatValue::Object(obj.clone()),
                        format!(
                            "the variable says class {class:?}, the object metadata {:?}",
                            obj.class
                        ),
                    ),
                    Ok(value) => value,
                    Err(e) => opaque(&class, *payload, e.message().to_string()),
                }
            }
            other => other.map_contents(|x| self.top(x)).value(),
        }
    }

    /// An enumeration instance stored as a struct: the decoded enumeration (opaque with the
    /// reason when its metadata is wrong); `None` when `value` is not one.
    fn enumeration(&mut self, class: &str, value: &MatValue) -> Option<MatValue> {
        Some(match enumeration(&self.sub.wrapper, value)? {
            Ok(object) => MatValue::Object(object),
            Err(e) => opaque(class, value.clone(), e.message().to_string()),
        })
    }

    /// An object array from its reference.
    fn object(&mut self, reference: &ObjectRef) -> Result<MatValue> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::format(format!(
                "objects nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let class = self.sub.wrapper.class_name(reference.class_id)?;
        let mut elements = Vec::with_capacity(reference.ids.len().min(1 << 16));
        self.depth += 1;
        let mut failed = None;
        for &id in &reference.ids {
            let checked = match id {
                0 => Ok(()),
                _ => self.sub.wrapper.class_of(id).and_then(|c| {
                    if c == reference.class_id {
                        Ok(())
                    } else {
                        Err(Error::format(format!(
                            "object {id} is of class id {c}, its reference says {}",
                            reference.class_id
                        )))
                    }
                }),
            };
            match checked.and_then(|()| self.properties(id)) {
                Ok(p) => elements.push(p),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        self.depth -= 1;
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(object_value(&class, &reference.shape, elements))
    }

    /// One object's properties: its class's defaults, replaced by the values it saved.
    fn properties(&mut self, id: u32) -> Result<Properties> {
        if id == 0 {
            // MATLAB saves a deleted handle as object 0.
            return Ok(Vec::new());
        }
        if self.active.contains(&id) {
            return Err(Error::format(format!(
                "object {id} contains itself (a cycle of object references)"
            )));
        }
        self.active.push(id);
        let out = self.properties_inner(id);
        self.active.pop();
        out
    }

    fn properties_inner(&mut self, id: u32) -> Result<Properties> {
        let sub = self.sub;
        let class_id = sub.wrapper.class_of(id)?;
        let mut properties = match sub.defaults.get(class_id as usize) {
            Some(value) => defaults_of(&self.nested(value.clone())),
            None => Vec::new(),
        };
        for (name, place) in sub.wrapper.properties(id)? {
            let value = match place {
                PropertyValue::Cell(n) => {
                    let item = n
                        .checked_add(2)
                        .filter(|&i| i < sub.values_end)
                        .and_then(|i| sub.items.get(i))
                        .ok_or_else(|| {
                            Error::format(format!(
                                "property value {n} outside the {} values of the subsystem",
                                sub.values_end.saturating_sub(2)
                            ))
                        })?;
                    self.nested(item.clone())
                }
                PropertyValue::Enumeration(member) => MatValue::from(member.as_str()),
                PropertyValue::Integer(k) => MatValue::from(f64::from(k)),
            };
            properties.retain(|(n, _)| *n != name);
            properties.push((name, value));
        }
        for dynamic in sub.wrapper.dynamic_properties(id)? {
            let (name, value) = dynamic_property(&self.properties(dynamic)?)?;
            properties.retain(|(n, _)| *n != name);
            properties.push((name, value));
        }
        Ok(properties)
    }

    /// Replaces object references (plain `uint32` columns starting with the MCOS marker)
    /// inside a property value, its cells and structs, by the objects.
    fn nested(&mut self, value: MatValue) -> MatValue {
        if let Some(decoded) = self.enumeration("enumeration", &value) {
            return decoded;
        }
        if let Some(reference) = ObjectRef::from_value(&value) {
            return match self.object(&reference) {
                Ok(object) => object,
                Err(e) => {
                    let class = self
                        .sub
                        .wrapper
                        .class_name(reference.class_id)
                        .unwrap_or_else(|_| "object".into());
                    opaque(&class, value, e.message().to_string())
                }
            };
        }
        match value.map_contents(|v| self.nested(v)) {
            Contents::Mapped(v) => v,
            Contents::NotContainer(other) => self.top(other),
        }
    }
}

fn opaque_without(class: &str, note: &str) -> MatValue {
    MatValue::Opaque(Opaque {
        class: class.to_string(),
        payload: None,
        note: note.to_string(),
    })
}
