//! Reading MATLAB objects (MCOS) while walking a value: the `#subsystem#` is loaded at the
//! first object, each object's properties are read from it (class defaults, then saved
//! values), nested object references inside properties, cells and structs are followed, and
//! the classes with a known layout are decoded (see [`crate::mcos`]).
//!
//! Whatever is wrong with one object's metadata makes that value [`MatValue::Opaque`] with
//! the reason; it never fails the file or the other variables.

use std::sync::Arc;

use sciio_core::{Error, Result};
use sciio_hdf5::H5Type;

use super::subsystem::{Subsystem, SUBSYSTEM};
use super::{refs_of, Mat73, Walk, MAX_DEPTH};
use crate::mcos::{
    defaults_of, dynamic_property, enumeration, object_value, FileWrapper, ObjectRef, PropertyValue,
};
use crate::value::MatValue;
use crate::value::Properties;

impl Mat73 {
    fn subsystem_cached(&self) -> Option<Arc<Subsystem>> {
        self.subsystem.lock().ok().and_then(|s| s.clone())
    }

    fn cache_subsystem(&self, sub: Arc<Subsystem>) {
        if let Ok(mut slot) = self.subsystem.lock() {
            *slot = Some(sub);
        }
    }
}

impl Walk<'_> {
    /// The value of a dataset with `MATLAB_object_decode = 3` of class `class`: the decoded
    /// object, or an [`Opaque`] saying why not.
    pub(super) fn object_variable(&mut self, class: &str, stored: MatValue) -> MatValue {
        let Some(reference) = ObjectRef::from_value(&transposed_column(&stored)) else {
            return opaque(
                class,
                stored,
                "MATLAB object whose data is not an MCOS object reference".into(),
            );
        };
        match self.object(&reference) {
            Ok(MatValue::Object(o)) if o.class != class => opaque(
                class,
                MatValue::Object(o.clone()),
                format!(
                    "MATLAB_class says {class:?}, the object metadata {:?}",
                    o.class
                ),
            ),
            Ok(value) => value,
            Err(e) => opaque(class, stored, e.message().to_string()),
        }
    }

    /// An object array from its reference.
    fn object(&mut self, reference: &ObjectRef) -> Result<MatValue> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::format(format!(
                "objects nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let sub = self.subsystem()?;
        let class = sub.wrapper.class_name(reference.class_id)?;
        let mut elements = Vec::with_capacity(reference.ids.len());
        self.depth += 1;
        let mut failed = None;
        for &id in &reference.ids {
            let checked = match id {
                0 => Ok(()),
                _ => sub
                    .wrapper
                    .class_of(id)
                    .and_then(|c| match c == reference.class_id {
                        true => Ok(()),
                        false => Err(Error::format(format!(
                            "object {id} is of class id {c}, its reference says {}",
                            reference.class_id
                        ))),
                    }),
            };
            match checked.and_then(|()| self.object_properties(&sub, id)) {
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
    fn object_properties(&mut self, sub: &Subsystem, id: u32) -> Result<Properties> {
        if id == 0 {
            // MATLAB saves a deleted handle as object 0.
            return Ok(Vec::new());
        }
        if self.objects.contains(&id) {
            return Err(Error::format(format!(
                "object {id} contains itself (a cycle of object references)"
            )));
        }
        self.objects.push(id);
        let out = self.object_properties_inner(sub, id);
        self.objects.pop();
        out
    }

    fn object_properties_inner(&mut self, sub: &Subsystem, id: u32) -> Result<Properties> {
        let class_id = sub.wrapper.class_of(id)?;
        let mut properties = match sub.defaults.get(class_id as usize) {
            Some(path) => {
                let value = self.value(path)?;
                defaults_of(&self.resolve_nested(value))
            }
            None => Vec::new(),
        };
        for (name, place) in sub.wrapper.properties(id)? {
            let value = match place {
                PropertyValue::Cell(n) => {
                    let value = self.value(sub.value_path(n)?)?;
                    self.resolve_nested(value)
                }
                PropertyValue::Enumeration(member) => MatValue::from(member.as_str()),
                PropertyValue::Integer(k) => MatValue::from(f64::from(k)),
            };
            properties.retain(|(n, _)| *n != name);
            properties.push((name, value));
        }
        for dynamic in sub.wrapper.dynamic_properties(id)? {
            let (name, value) = dynamic_property(&self.object_properties(sub, dynamic)?)?;
            properties.retain(|(n, _)| *n != name);
            properties.push((name, value));
        }
        Ok(properties)
    }

    /// Replaces object references (plain `uint32` columns starting with the MCOS marker)
    /// inside a property value, its cells and structs, by the objects.
    fn resolve_nested(&mut self, value: MatValue) -> MatValue {
        if let Some(decoded) = self.enumeration("enumeration", &value) {
            return decoded;
        }
        if let Some(reference) = ObjectRef::from_value(&value) {
            return match self.object(&reference) {
                Ok(object) => object,
                Err(e) => {
                    let class = self
                        .subsystem()
                        .and_then(|s| s.wrapper.class_name(reference.class_id))
                        .unwrap_or_else(|_| "object".into());
                    opaque(&class, value, e.message().to_string())
                }
            };
        }
        value.map_contents(|v| self.resolve_nested(v)).value()
    }

    /// An enumeration instance stored as a struct (a variable of an enumeration class, or a
    /// property value): the decoded enumeration (opaque with the reason when its metadata is
    /// wrong); `None` when `value` is not one.
    pub(super) fn enumeration(&mut self, class: &str, value: &MatValue) -> Option<MatValue> {
        match value {
            MatValue::Struct(s) if s.fields.iter().any(|f| f == "EnumerationInstanceTag") => {}
            _ => return None,
        }
        let decoded = match self.subsystem() {
            Ok(sub) => enumeration(&sub.wrapper, value)?,
            Err(e) => Err(e),
        };
        Some(match decoded {
            Ok(object) => MatValue::Object(object),
            Err(e) => opaque(class, value.clone(), e.message().to_string()),
        })
    }

    /// The file's subsystem, loaded once.
    fn subsystem(&mut self) -> Result<Arc<Subsystem>> {
        if let Some(sub) = self.file.subsystem_cached() {
            return Ok(sub);
        }
        // Loaded in full, never outlined: it is decoded and cached for the whole file.
        let outline = self.outline.take();
        let sub = self.load_subsystem();
        self.outline = outline;
        let sub = Arc::new(sub?);
        self.file.cache_subsystem(Arc::clone(&sub));
        Ok(sub)
    }

    fn load_subsystem(&mut self) -> Result<Subsystem> {
        let items = self.ref_paths(SUBSYSTEM)?;
        let blob = match items.first() {
            Some(path) => self.value(path)?,
            None => return Err(Error::format(format!("{SUBSYSTEM} is empty"))),
        };
        let bytes = match &blob {
            MatValue::Numeric(a)
                if a.dtype().as_scalar().map(|s| s.kind)
                    == Some(sciio_core::ScalarKind::UInt(1)) =>
            {
                a.as_bytes().to_vec()
            }
            other => {
                return Err(Error::format(format!(
                    "{SUBSYSTEM} metadata of class {}, not uint8",
                    other.class().name()
                )))
            }
        };
        let wrapper = FileWrapper::parse(&bytes)?;
        // Version 2 ends with the defaults only; 3 adds class aliases; 4 one more cell.
        let tail = match wrapper.version {
            2 => 1,
            3 => 2,
            _ => 3,
        };
        let values_end = items
            .len()
            .checked_sub(tail)
            .filter(|&e| e >= 2)
            .ok_or_else(|| {
                Error::format(format!(
                    "{SUBSYSTEM} has {} items, fewer than its version {} needs",
                    items.len(),
                    wrapper.version
                ))
            })?;
        let defaults = match items.last() {
            Some(path) => self.ref_paths(path)?,
            None => Vec::new(),
        };
        Ok(Subsystem {
            wrapper,
            items,
            defaults,
            values_end,
        })
    }

    /// The paths a cell dataset of references points to.
    fn ref_paths(&mut self, path: &str) -> Result<Vec<String>> {
        let raw = self.file.h5.dataset(path)?.read()?;
        if raw.ty != H5Type::ObjectRef {
            return Err(Error::format(format!(
                "{path} holds {:?}, not object references",
                raw.ty
            )));
        }
        refs_of(&raw)
            .into_iter()
            .map(|r| self.file.resolve(r, path))
            .collect()
    }
}

use crate::object_values::transposed_column;
use crate::value::opaque;
