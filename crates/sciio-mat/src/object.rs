//! MATLAB objects (MCOS classes: `string`, `datetime`, `duration`, `categorical`, user
//! classes) as read from MAT files.
//!
//! MATLAB keeps an object's property values in the file's `#subsystem#`, not in the variable
//! (see `mcos.rs`). The classes whose property layout is public knowledge are decoded into
//! plain data ([`ObjectData`]: string, datetime, duration, categorical, table and timetable,
//! containers.Map, enumerations, calendarDuration, missing); any other class keeps its
//! properties by name ([`ObjectData::Properties`]). The types are in `value.rs`; this module
//! holds their numpy and display views.

use sciio_core::calendar::civil_from_days;
use sciio_core::{ByteOrder, DType, Error, NdArray, Order, Result, ScalarKind, TimeBase, TimeUnit};

use crate::value::{MatObject, MatValue, ObjectData};

impl MatObject {
    /// A `string` array of `shape` (column-major `items`, `None` = `<missing>`).
    pub fn string(shape: Vec<usize>, items: Vec<Option<String>>) -> MatObject {
        MatObject {
            class: "string".into(),
            shape,
            data: ObjectData::String(items),
        }
    }

    /// Number of elements `shape` announces.
    pub fn len(&self) -> usize {
        // Saturating: the shape comes from the file; a wrapped product would look small.
        self.shape.iter().fold(1usize, |a, &d| a.saturating_mul(d))
    }

    /// Whether the object array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The numpy array for the value (row-major, MATLAB's shape): `string`, `categorical` and
    /// enumerations (member names) as a `U` array (`<missing>`/`<undefined>` as `""`),
    /// `datetime` as `datetime64[ms]` (`NaT` for `NaN`; wall-clock or UTC as stored, see
    /// [`Datetime::millis`]), `duration` as `timedelta64[ms]` (both in `us` or `ns` when
    /// some time has a fraction of a millisecond), `missing` as NaN doubles. Other classes
    /// have no single array.
    pub fn to_numpy(&self) -> Result<NdArray> {
        let array = match &self.data {
            ObjectData::String(items) => {
                let texts: Vec<&str> = items.iter().map(|s| s.as_deref().unwrap_or("")).collect();
                unicode_array(&texts, &self.shape)?
            }
            ObjectData::Categorical(c) => {
                let texts: Vec<&str> = c
                    .codes
                    .iter()
                    .map(|&k| {
                        (k as usize)
                            .checked_sub(1)
                            .and_then(|i| c.categories.get(i))
                            .map_or("", String::as_str)
                    })
                    .collect();
                unicode_array(&texts, &self.shape)?
            }
            ObjectData::Datetime(d) => {
                let unit = time_unit(&d.millis);
                time_array(ScalarKind::DateTime(unit), &d.millis, &self.shape)?
            }
            ObjectData::Duration(d) => {
                let unit = time_unit(&d.millis);
                time_array(ScalarKind::TimeDelta(unit), &d.millis, &self.shape)?
            }
            ObjectData::Enumeration(e) => {
                let texts: Vec<&str> = e.members.iter().map(String::as_str).collect();
                unicode_array(&texts, &self.shape)?
            }
            // Every element missing: NaN, numpy's missing float.
            ObjectData::Missing => {
                let count = self.len();
                sciio_core::Limits::default()
                    .check_alloc(count.saturating_mul(8) as u64, "missing array")?;
                let bytes: Vec<u8> = std::iter::repeat_n(f64::NAN.to_ne_bytes(), count)
                    .flatten()
                    .collect();
                NdArray::from_byte_vec(
                    DType::scalar(ScalarKind::Float(8)),
                    &self.shape,
                    Order::F,
                    bytes,
                )?
            }
            ObjectData::Properties(_)
            | ObjectData::Table(_)
            | ObjectData::Map(_)
            | ObjectData::Dictionary(_)
            | ObjectData::CalendarDuration(_) => {
                return Err(Error::unsupported(format!(
                    "a MATLAB {} object has no single numpy array",
                    self.class
                )))
            }
        };
        Ok(array.to_order(Order::C))
    }

    /// Whether the object converts part by part ([`MatObject::parts`]) rather than as one
    /// array: tables and timetables, `containers.Map`, `dictionary`, `calendarDuration`, and a
    /// scalar object of any other class (kept as its properties, as MATLAB's `struct(obj)`
    /// gives them). An array of such objects does not.
    pub fn has_parts(&self) -> bool {
        match &self.data {
            ObjectData::Table(_)
            | ObjectData::Map(_)
            | ObjectData::Dictionary(_)
            | ObjectData::CalendarDuration(_) => true,
            ObjectData::Properties(elements) => elements.len() == 1,
            _ => false,
        }
    }

    /// The named values an object is made of, for the classes that convert part by part:
    /// a `table`'s columns by variable name (then a `timetable`'s row times under their name),
    /// a `containers.Map`'s `keys` and `values` cells, a `dictionary`'s `keys` and `values`
    /// arrays (none when unconfigured), a `calendarDuration`'s `months`, `days` and `millis`,
    /// a scalar object of another class its properties by name (a saved value replacing the
    /// class default of the same name, in the order MATLAB lists them). Empty for the others.
    pub fn parts(&self) -> Vec<(&str, &MatValue)> {
        match &self.data {
            ObjectData::Properties(elements) if elements.len() == 1 => {
                let props = &elements[0];
                let mut parts: Vec<(&str, &MatValue)> = Vec::with_capacity(props.len());
                for (name, value) in props {
                    match parts.iter_mut().find(|(n, _)| *n == name.as_str()) {
                        Some(part) => part.1 = value,
                        None => parts.push((name.as_str(), value)),
                    }
                }
                parts
            }
            ObjectData::Dictionary(d) => match (&d.keys, &d.values) {
                (Some(k), Some(v)) => vec![("keys", k.as_ref()), ("values", v.as_ref())],
                _ => Vec::new(),
            },
            ObjectData::Table(t) => {
                let mut parts: Vec<(&str, &MatValue)> = t
                    .variable_names
                    .iter()
                    .map(String::as_str)
                    .zip(&t.columns)
                    .collect();
                if let Some((name, times)) = &t.row_times {
                    parts.push((name.as_str(), times.as_ref()));
                }
                parts
            }
            ObjectData::Map(m) => vec![("keys", m.keys.as_ref()), ("values", m.values.as_ref())],
            ObjectData::CalendarDuration(c) => vec![
                ("months", c.months.as_ref()),
                ("days", c.days.as_ref()),
                ("millis", c.millis.as_ref()),
            ],
            _ => Vec::new(),
        }
    }

    /// The elements as display text (for `sciio cat`): strings quoted, `<missing>`,
    /// datetimes as ISO 8601 (`NaT`), durations in seconds, categories by name.
    pub fn display_items(&self) -> Vec<String> {
        match &self.data {
            ObjectData::String(items) => items
                .iter()
                .map(|s| match s {
                    Some(s) => format!("{s:?}"),
                    None => "<missing>".into(),
                })
                .collect(),
            ObjectData::Datetime(d) => d.millis.iter().map(|&m| iso_millis(m)).collect(),
            ObjectData::Duration(d) => d
                .millis
                .iter()
                .map(|&m| format!("{}s", m / 1000.0))
                .collect(),
            ObjectData::Categorical(c) => c
                .codes
                .iter()
                .map(|&k| {
                    (k as usize)
                        .checked_sub(1)
                        .and_then(|i| c.categories.get(i))
                        .cloned()
                        .unwrap_or_else(|| "<undefined>".into())
                })
                .collect(),
            ObjectData::Table(t) => t
                .variable_names
                .iter()
                .zip(&t.columns)
                .map(|(name, column)| {
                    let size: Vec<String> = column
                        .matlab_shape()
                        .iter()
                        .map(|d| d.to_string())
                        .collect();
                    format!("{name}: {} {}", column.class().name(), size.join("x"))
                })
                .collect(),
            ObjectData::Enumeration(e) => e
                .members
                .iter()
                .map(|m| format!("{}.{m}", self.class))
                .collect(),
            ObjectData::Missing => vec!["<missing>".to_string(); self.len().min(1 << 20)],
            ObjectData::Map(m) => {
                let items = |v: &MatValue| match v {
                    MatValue::Cell(c) => c.items.clone(),
                    _ => Vec::new(),
                };
                items(&m.keys)
                    .iter()
                    .zip(items(&m.values))
                    .map(|(k, v)| format!("{} -> {}", short(k), short(&v)))
                    .collect()
            }
            ObjectData::CalendarDuration(c) => {
                let numbers = |v: &MatValue| -> Vec<f64> {
                    match v {
                        MatValue::Numeric(a) => a
                            .to_native()
                            .to_order(Order::F)
                            .as_bytes()
                            .chunks_exact(8)
                            .map(|b| {
                                f64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
                            })
                            .collect(),
                        _ => Vec::new(),
                    }
                };
                let (mo, d, ms) = (numbers(&c.months), numbers(&c.days), numbers(&c.millis));
                mo.iter()
                    .zip(&d)
                    .zip(&ms)
                    .map(|((mo, d), ms)| format!("{mo}mo {d}d {}s", ms / 1000.0))
                    .collect()
            }
            ObjectData::Dictionary(d) => match (&d.keys, &d.values) {
                (Some(k), Some(v)) => vec![format!(
                    "{} entries: keys {} {}, values {} {}",
                    k.matlab_shape().iter().product::<usize>(),
                    k.class().name(),
                    size_text(k),
                    v.class().name(),
                    size_text(v)
                )],
                _ => vec!["unconfigured (no keys, no values)".to_string()],
            },
            ObjectData::Properties(elements) => elements
                .iter()
                .map(|p| {
                    let names: Vec<&str> = p.iter().map(|(n, _)| n.as_str()).collect();
                    format!("{} with properties {}", self.class, names.join(", "))
                })
                .collect(),
        }
    }
}

/// MATLAB's `3x1`.
fn size_text(v: &MatValue) -> String {
    let size: Vec<String> = v.matlab_shape().iter().map(|d| d.to_string()).collect();
    size.join("x")
}

/// A short display of a map key or value: text quoted, a scalar as its number, otherwise
/// its class and size.
fn short(v: &MatValue) -> String {
    match v {
        MatValue::Char(c) => format!("{:?}", c.to_string_lossy()),
        MatValue::Numeric(a) if a.len() == 1 && a.dtype().itemsize() == 8 => {
            let b = a.to_native();
            let b = b.as_bytes();
            match a.dtype().as_scalar().map(|s| s.kind) {
                Some(ScalarKind::Float(8)) => {
                    f64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]).to_string()
                }
                _ => format!("{} 1x1", v.class().name()),
            }
        }
        other => {
            let size: Vec<String> = other.matlab_shape().iter().map(|d| d.to_string()).collect();
            format!("{} {}", other.class().name(), size.join("x"))
        }
    }
}

fn millis_unit() -> TimeUnit {
    TimeUnit::new(TimeBase::Millis)
}

/// A MATLAB-shaped (column-major) `U` array of `texts`.
fn unicode_array(texts: &[&str], shape: &[usize]) -> Result<NdArray> {
    let width = texts.iter().map(|t| t.chars().count()).max().unwrap_or(0);
    // numpy has no U0: an array of empty strings is <U1.
    let width = width.max(1);
    let mut bytes = Vec::with_capacity(texts.len().saturating_mul(width * 4));
    for t in texts {
        let mut n = 0;
        for ch in t.chars() {
            bytes.extend_from_slice(&u32::from(ch).to_le_bytes());
            n += 1;
        }
        bytes.resize(bytes.len() + (width - n) * 4, 0);
    }
    NdArray::from_byte_vec(
        DType::scalar(ScalarKind::Unicode(width)).with_order(ByteOrder::Little),
        shape,
        Order::F,
        bytes,
    )
}

/// The numpy unit for times given in milliseconds: `ms` when every time is whole
/// milliseconds, else the finest of `ns`/`us` that holds them all (sub-millisecond times, as
/// a timetable sampled at 10 kHz has, are not rounded away).
fn time_unit(millis: &[f64]) -> TimeUnit {
    let finite = || millis.iter().filter(|m| m.is_finite());
    if finite().all(|m| m.fract() == 0.0) {
        return millis_unit();
    }
    let largest = finite().fold(0.0f64, |a, m| a.max(m.abs()));
    let base = if largest < 9.2e12 {
        TimeBase::Nanos
    } else if largest < 9.2e15 {
        TimeBase::Micros
    } else {
        TimeBase::Millis
    };
    TimeUnit::new(base)
}

/// A MATLAB-shaped (column-major) 8-byte time array in `kind`'s unit (ms, us or ns; `NaN` →
/// NaT).
fn time_array(kind: ScalarKind, millis: &[f64], shape: &[usize]) -> Result<NdArray> {
    let per_milli = match kind {
        ScalarKind::DateTime(u) | ScalarKind::TimeDelta(u) => match u.base {
            TimeBase::Nanos => 1e6,
            TimeBase::Micros => 1e3,
            _ => 1.0,
        },
        _ => 1.0,
    };
    let mut bytes = Vec::with_capacity(millis.len() * 8);
    for &m in millis {
        bytes.extend_from_slice(&millis_to_i64(m * per_milli).to_le_bytes());
    }
    NdArray::from_byte_vec(
        DType::scalar(kind).with_order(ByteOrder::Little),
        shape,
        Order::F,
        bytes,
    )
}

/// numpy's NaT is `i64::MIN`; non-finite or out-of-range values become NaT too.
fn millis_to_i64(m: f64) -> i64 {
    let r = m.round();
    if r.is_finite() && r > i64::MIN as f64 && r < i64::MAX as f64 {
        r as i64
    } else {
        i64::MIN
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmm` for milliseconds since the epoch (proleptic Gregorian).
fn iso_millis(m: f64) -> String {
    let ms = millis_to_i64(m);
    if ms == i64::MIN {
        return "NaT".into();
    }
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, mo, d) = civil_from_days(i128::from(days));
    let (h, mi, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Categorical, Datetime};

    #[test]
    fn iso_dates() {
        assert_eq!(iso_millis(0.0), "1970-01-01T00:00:00.000");
        assert_eq!(iso_millis(1_743_508_800_000.0), "2025-04-01T12:00:00.000");
        assert_eq!(iso_millis(-1.0), "1969-12-31T23:59:59.999");
        assert_eq!(iso_millis(f64::NAN), "NaT");
    }

    #[test]
    fn numpy_views() {
        let d = MatObject {
            class: "datetime".into(),
            shape: vec![1, 2],
            data: ObjectData::Datetime(Datetime {
                millis: vec![1.0, f64::NAN],
                time_zone: String::new(),
                format: String::new(),
            }),
        };
        let a = d.to_numpy().unwrap();
        assert_eq!(a.dtype().to_string(), "<M8[ms]");
        assert_eq!(&a.as_bytes()[8..], &i64::MIN.to_le_bytes());
        let c = MatObject {
            class: "categorical".into(),
            shape: vec![2, 1],
            data: ObjectData::Categorical(Categorical {
                codes: vec![2, 0],
                categories: vec!["a".into(), "bb".into()],
                ordered: false,
                protected: false,
            }),
        };
        assert_eq!(c.to_numpy().unwrap().dtype().to_string(), "<U2");
        assert_eq!(c.display_items(), vec!["bb", "<undefined>"]);
    }
}
