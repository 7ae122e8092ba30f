//! The pickled shapes pandas writes, interpreted by name: numpy object arrays
//! (`numpy.core.multiarray._reconstruct` + `BUILD` state) holding `str`, `None` and `float`.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, StringArray};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use sciio_core::{Error, Result};
use sciio_pickle::{StringColumn, TextColumn, Value};

/// A short description of a pickled value for error messages.
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(_) => "a bool".into(),
        Value::Int(_) | Value::BigInt(_) => "an int".into(),
        Value::Float(_) => "a float".into(),
        Value::Str(_) => "a str".into(),
        Value::Bytes(_) => "bytes".into(),
        Value::List(_) => "a list".into(),
        Value::Tuple(_) => "a tuple".into(),
        Value::Dict(_) => "a dict".into(),
        Value::Set(_) | Value::FrozenSet(_) => "a set".into(),
        Value::Global { module, name } => format!("the global {module}.{name}"),
        Value::Reduce { callable, .. } => format!("a call of {}", short(callable)),
        Value::NewObj { class, .. } => format!("an object of {}", short(class)),
        Value::Build { object, .. } => describe(object),
        Value::Persistent(_) => "a persistent id".into(),
        Value::Extension(_) => "an extension code".into(),
        Value::OutOfBandBuffer => "an out-of-band buffer".into(),
        Value::Recursive => "a recursive value".into(),
    }
}

fn short(v: &Value) -> String {
    v.global_name().unwrap_or_else(|| describe(v))
}

fn is_reconstruct(v: &Value) -> bool {
    matches!(
        v.global_name().as_deref(),
        Some("numpy.core.multiarray._reconstruct" | "numpy._core.multiarray._reconstruct")
    )
}

/// A numpy object array read from its pickle: shape and items in C order.
#[derive(Debug)]
pub(crate) struct ObjectArray {
    pub shape: Vec<usize>,
    pub items: Items,
}

/// The items of an object array.
#[derive(Debug)]
pub(crate) enum Items {
    /// As pickled values.
    Values(Vec<Value>),
    /// Read apart from the value tree (strings in one buffer).
    Text(TextColumn),
    /// Read straight into a string column: every item a string or missing.
    Strings(StringArray),
}

impl ObjectArray {
    /// Items in the array.
    pub(crate) fn len(&self) -> usize {
        match &self.items {
            Items::Values(v) => v.len(),
            Items::Text(t) => t.len(),
            Items::Strings(s) => s.len(),
        }
    }

    /// Every item, in order, as a string column (as [`ObjectArray::strings`]); the text read
    /// apart becomes the Arrow buffer without a copy when every other item is missing.
    pub(crate) fn into_strings(self) -> Result<ArrayRef> {
        if let Items::Strings(strings) = self.items {
            return Ok(Arc::new(strings));
        }
        let Items::Text(column) = &self.items else {
            return self.strings(0..self.len());
        };
        let mut valid = vec![true; column.len()];
        for (i, v) in &column.others {
            if string_item(v)?.is_some() {
                // Python 2 `bytes` among the strings: copied into place.
                return self.strings(0..self.len());
            }
            if let Some(slot) = valid.get_mut(*i) {
                *slot = false;
            }
        }
        let Items::Text(column) = self.items else {
            return Err(Error::format("object array items"));
        };
        let offsets = column
            .offsets
            .iter()
            .map(|&o| i32::try_from(o))
            .collect::<std::result::Result<Vec<i32>, _>>()
            .map_err(|_| Error::unsupported("a string column of over 2 GiB of text"))?;
        let nulls = NullBuffer::from(valid);
        let nulls = (nulls.null_count() > 0).then_some(nulls);
        let array = StringArray::try_new(
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            column.data.into(),
            nulls,
        )
        .map_err(|e| Error::format(format!("string column: {e}")))?;
        Ok(Arc::new(array))
    }

    /// The items at `positions` (C order) as a string column: `str` (or Python 2 `bytes`)
    /// values, missing for `None`, `NaN` and `pd.NA`; anything else is an error.
    pub(crate) fn strings(&self, positions: impl Iterator<Item = usize>) -> Result<ArrayRef> {
        if let Items::Strings(strings) = &self.items {
            return take_strings(strings, positions);
        }
        let (lower, _) = positions.size_hint();
        let mut offsets: Vec<i32> = Vec::with_capacity(lower + 1);
        let mut data: Vec<u8> = Vec::new();
        let mut valid: Vec<bool> = Vec::with_capacity(lower);
        offsets.push(0);
        let mut push = |text: Option<&[u8]>| -> Result<()> {
            valid.push(text.is_some());
            data.extend_from_slice(text.unwrap_or_default());
            offsets.push(
                i32::try_from(data.len())
                    .map_err(|_| Error::unsupported("a string column of over 2 GiB of text"))?,
            );
            Ok(())
        };
        for i in positions {
            match &self.items {
                Items::Values(values) => {
                    let v = values.get(i).map(string_item).transpose()?.flatten();
                    push(v.as_deref().map(str::as_bytes))?;
                }
                // Taken above; kept total.
                Items::Strings(strings) => {
                    let valid = i < strings.len() && strings.is_valid(i);
                    push(valid.then(|| strings.value(i).as_bytes()))?
                }
                Items::Text(column) => match column.text(i) {
                    Some(s) => push(Some(s.as_bytes()))?,
                    None => {
                        let other = column
                            .others
                            .binary_search_by_key(&i, |(j, _)| *j)
                            .ok()
                            .and_then(|k| column.others.get(k));
                        let v = other.map(|(_, v)| string_item(v)).transpose()?.flatten();
                        push(v.as_deref().map(str::as_bytes))?;
                    }
                },
            }
        }
        let nulls = NullBuffer::from(valid);
        let nulls = (nulls.null_count() > 0).then_some(nulls);
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        let array = StringArray::try_new(offsets, data.into(), nulls)
            .map_err(|e| Error::format(format!("string column: {e}")))?;
        Ok(Arc::new(array))
    }
}

/// The items at `positions` of a string column (a column of a 2-d block).
fn take_strings(strings: &StringArray, positions: impl Iterator<Item = usize>) -> Result<ArrayRef> {
    let positions = positions
        .map(|p| u64::try_from(p).ok().filter(|&p| p < strings.len() as u64))
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(|| Error::format("an item position outside the object array"))?;
    arrow_select::take::take(strings, &arrow_array::UInt64Array::from(positions), None)
        .map_err(|e| Error::format(format!("string column: {e}")))
}

/// Reads the pickle of a numpy `object` ndarray (what PyTables' `ObjectAtom` stores for a
/// pandas object block or index): an array of strings and missing values straight into a
/// string column ([`sciio_pickle::parse_string_array`]), any other with its items read apart
/// from the value tree ([`sciio_pickle::parse_text_column`]). A plain list is taken as a 1-d
/// array.
pub(crate) fn parse_object_array(bytes: &[u8]) -> Result<ObjectArray> {
    let limits = sciio_pickle::ParseLimits::default();
    if let Some((value, column)) = sciio_pickle::parse_string_array(bytes, &limits) {
        let mut array = object_array(value)?;
        array.items = Items::Strings(string_array(column)?);
        return checked_count(array);
    }
    parse_general(bytes, &limits)
}

/// A string column read straight from a pickle as Arrow's, its buffers taken over.
pub(crate) fn string_array(column: StringColumn) -> Result<StringArray> {
    let nulls = column.valid.map(NullBuffer::from);
    StringArray::try_new(
        OffsetBuffer::new(ScalarBuffer::from(column.offsets)),
        column.data.into(),
        nulls,
    )
    .map_err(|e| Error::format(format!("string column: {e}")))
}

/// The shape of a pickled numpy object array whose data list was read apart (empty).
pub(crate) fn shape_of(v: Value) -> Result<Vec<usize>> {
    Ok(object_array(v)?.shape)
}

/// [`parse_object_array`] by the general machine only: the reference for the string path.
pub(crate) fn parse_general(
    bytes: &[u8],
    limits: &sciio_pickle::ParseLimits,
) -> Result<ObjectArray> {
    let (value, column) = sciio_pickle::parse_text_column(bytes, limits)?;
    let mut array = object_array(value)?;
    // The data list was read apart when the tree holds it empty.
    let apart = matches!(&array.items, Items::Values(v) if v.is_empty());
    if let (true, Some(column)) = (apart, column) {
        array.items = Items::Text(column);
    }
    checked_count(array)
}

/// The array when its items are as many as its shape says.
fn checked_count(array: ObjectArray) -> Result<ObjectArray> {
    let n = array
        .shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d));
    if n != Some(array.len()) {
        return Err(Error::format(format!(
            "pickled numpy array of shape {:?} holds {} items",
            array.shape,
            array.len()
        )));
    }
    Ok(array)
}

/// Reads a pickled numpy `object` ndarray from its value tree. A plain list is taken as a
/// 1-d array. The item count is not checked against the shape here: the data list may have
/// been read apart ([`parse_object_array`] checks).
fn object_array(v: Value) -> Result<ObjectArray> {
    match v {
        Value::List(items) | Value::Tuple(items) => Ok(ObjectArray {
            shape: vec![items.len()],
            items: Items::Values(items),
        }),
        Value::Build { object, state } => {
            let Value::Reduce { callable, .. } = object.as_ref() else {
                return Err(not_array(&object));
            };
            if !is_reconstruct(callable) {
                return Err(not_array(&object));
            }
            let Value::Tuple(mut state) = *state else {
                return Err(Error::unsupported("numpy array state is not a tuple"));
            };
            // (version, shape, dtype, is_fortran, data): version 1 has all five.
            let (shape, data) = match state.as_mut_slice() {
                [_, shape, _, _, data] | [shape, _, _, data] => (shape, data),
                _ => return Err(Error::unsupported("numpy array state of unknown length")),
            };
            let Value::Tuple(dims) = shape else {
                return Err(Error::unsupported("numpy array shape is not a tuple"));
            };
            let shape = dims
                .iter()
                .map(|d| match d {
                    Value::Int(n) if *n >= 0 => Ok(*n as usize),
                    _ => Err(Error::format("numpy array shape holds a non-size")),
                })
                .collect::<Result<Vec<usize>>>()?;
            let Value::List(items) = data else {
                return Err(Error::unsupported(
                    "a pickled numpy array that is not of dtype object",
                ));
            };
            Ok(ObjectArray {
                shape,
                items: Items::Values(std::mem::take(items)),
            })
        }
        other => Err(not_array(&other)),
    }
}

fn not_array(v: &Value) -> Error {
    Error::unsupported(format!("pickle holds {}, not a numpy array", describe(v)))
}

/// One object of a string column: `str` (or Python 2 `bytes`), missing (`None`, `NaN`).
pub(crate) fn string_item(v: &Value) -> Result<Option<String>> {
    match v {
        Value::Str(s) => Ok(Some(s.clone())),
        Value::Bytes(b) => Ok(Some(String::from_utf8_lossy(b).into_owned())),
        Value::None => Ok(None),
        Value::Float(f) if f.is_nan() => Ok(None),
        // pandas' `pd.NA` singleton, pickled by reference to its module.
        Value::Global { module, name } if name == "NA" && module.starts_with("pandas") => Ok(None),
        other => Err(Error::unsupported(format!(
            "an object column holding {} (only str and missing values are read)",
            describe(other)
        ))),
    }
}

impl ObjectArray {
    /// Whether every item is a string or missing (the array reads as a string column).
    pub(crate) fn all_strings(&self) -> bool {
        match &self.items {
            Items::Values(values) => values.iter().all(|v| string_item(v).is_ok()),
            Items::Text(column) => column.others.iter().all(|(_, v)| string_item(v).is_ok()),
            Items::Strings(_) => true,
        }
    }

    /// The item at `i`: a string item (`Ok(Some(Err(text)))`), another pickled value
    /// (`Ok(Some(Ok(value)))`), or nothing (out of range).
    fn item(&self, i: usize) -> Option<std::result::Result<&Value, &str>> {
        match &self.items {
            Items::Values(values) => values.get(i).map(Ok),
            Items::Strings(strings) if i >= strings.len() => None,
            Items::Strings(strings) => match strings.is_valid(i) {
                true => Some(Err(strings.value(i))),
                false => Some(Ok(&MISSING)),
            },
            Items::Text(column) => match column.text(i) {
                Some(s) => Some(Err(s)),
                None => column
                    .others
                    .binary_search_by_key(&i, |(j, _)| *j)
                    .ok()
                    .and_then(|k| column.others.get(k))
                    .map(|(_, v)| Ok(v)),
            },
        }
    }

    /// The items at `positions` as Arrow `date32` when every item is a `datetime.date`
    /// (missing: `None`, `NaN`, `NaT`) and at least one is a date; `None` otherwise (a string
    /// column, or mixed objects).
    pub(crate) fn dates(&self, positions: impl Iterator<Item = usize>) -> Option<ArrayRef> {
        let mut days: Vec<Option<i32>> = Vec::new();
        for i in positions {
            let day = match self.item(i)? {
                Err(_) => return None,
                Ok(v) if is_missing(v) => None,
                Ok(v) => Some(date_days(v)?),
            };
            days.push(day);
        }
        days.iter()
            .any(Option::is_some)
            .then(|| Arc::new(arrow_array::Date32Array::from(days)) as ArrayRef)
    }
}

/// The missing item of a string column, as a value.
static MISSING: Value = Value::None;

fn is_missing(v: &Value) -> bool {
    match v {
        Value::None => true,
        Value::Float(f) => f.is_nan(),
        Value::Global { module, name } => module.starts_with("pandas") && name == "NA",
        // pandas' NaT pickles as a call of `pandas._libs.tslibs.nattype.__nat_unpickle`.
        Value::Reduce { callable, .. } => callable
            .global_name()
            .is_some_and(|n| n.ends_with("__nat_unpickle")),
        _ => false,
    }
}

/// Days since 1970-01-01 of a pickled `datetime.date` (`date(b'\x07\xe4\x01\x02')`: year
/// big-endian, month, day), the state Python pickles a date as.
fn date_days(v: &Value) -> Option<i32> {
    let Value::Reduce { callable, args } = v else {
        return None;
    };
    if callable.global_name().as_deref() != Some("datetime.date") {
        return None;
    }
    let Value::Tuple(args) = args.as_ref() else {
        return None;
    };
    let state: &[u8] = match args.as_slice() {
        [Value::Bytes(b)] => b,
        // Protocol 0-2 pickles of Python 3 keep the bytes as a latin-1 str.
        [Value::Str(s)] if s.chars().count() == 4 => {
            let b: Vec<u8> = s.chars().filter_map(|c| u8::try_from(c).ok()).collect();
            return date_from_state(&b);
        }
        _ => return None,
    };
    date_from_state(state)
}

fn date_from_state(b: &[u8]) -> Option<i32> {
    let [hi, lo, month, day] = *b else {
        return None;
    };
    let year = i64::from(hi) * 256 + i64::from(lo);
    let (month, day) = (i64::from(month), i64::from(day));
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    i32::try_from(days_from_civil(year, month, day)).ok()
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::days_from_civil;
    use super::{parse_general, parse_object_array, Items};

    /// Pickles of numpy object arrays as PyTables stores them for pandas (read back raw with
    /// h5py from stores pandas wrote) and as every pickle protocol writes them, each with
    /// whether it holds only strings and missing values (the straight path's arrays).
    fn object_array_pickles() -> Vec<(String, Vec<u8>, bool)> {
        let code = r#"
import pickle, sys, os, json, tempfile
import numpy as np, pandas as pd, h5py
one = "x"
cases = {
    "plain": (["alpha", "beta", "", "gamma"], True),
    "missing": ([None, "a", float("nan"), "b", None], True),
    "all missing": ([None, float("nan")], True),
    "non-ascii": (["ünïcødé ☃", "𝄞", "日本語", "a\nb"], True),
    "bytes": ([b"raw", "text", b"\xff\xfe", None], True),
    "shared objects": ([one, one, "|", "O", one, None, "|"] * 3, True),
    "long": (["row %d " % i + "x" * (i % 300) for i in range(3000)], True),
    "empty": ([], True),
    "mixed": (["a", 1, None], False),
    "floats": (["a", 1.5], False),
}
for name, (items, strings) in cases.items():
    a = np.empty(len(items), dtype=object)
    a[:] = items
    for p in range(6):
        # Python 3 bytes under protocols 0-2 pickle as calls of _codecs.encode: general path.
        straight = strings and not (name == "bytes" and p < 3)
        print(f"{name} protocol {p}", pickle.dumps(a, protocol=p).hex(), int(straight), sep="\t")
    if name in ("plain", "non-ascii"):
        b = np.empty((2, 2), dtype=object)
        b[:] = np.array(items, dtype=object).reshape(2, 2)
        print(f"{name} 2-d", pickle.dumps(b, protocol=5).hex(), 1, sep="\t")
d = tempfile.mkdtemp()
frames = {
    "frame": pd.DataFrame({"s": pd.Series(["a", None, "ünï", "", "b"] * 50, dtype="str"),
                           "o": pd.Series(["x", None, float("nan"), "y", ""] * 50, dtype=object),
                           "t": pd.Series(["p", "q", "r", "s", None] * 50, dtype="string")}),
}
for name, df in frames.items():
    path = os.path.join(d, name + ".h5")
    df.to_hdf(path, key="df", format="fixed", mode="w")
    with h5py.File(path, "r") as f:
        for node in ("block0_values", "block1_values", "block2_values", "axis0"):
            if "df/" + node in f and h5py.check_vlen_dtype(f["df/" + node].dtype) is not None:
                raw = f["df/" + node][0]
                # pd.NA (the masked "string" dtype's missing value) is a global: general path.
                items = pickle.loads(bytes(raw)).ravel()
                straight = all(isinstance(x, str) or x is None or (isinstance(x, float) and x != x) for x in items)
                print(f"pandas {name} {node}", bytes(raw).hex(), int(straight), sep="\t")
"#;
        sciio_testkit::run_python(code, &[])
            .lines()
            .map(|line| {
                let [name, hex, strings] = line.split('\t').collect::<Vec<_>>()[..] else {
                    panic!("case line {line:?}");
                };
                (name.to_string(), hex_bytes(hex), strings == "1")
            })
            .collect()
    }

    fn hex_bytes(hex: &str) -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    }

    /// The string column of an object array (`None`: not one).
    fn column(array: super::ObjectArray) -> Option<arrow_array::ArrayRef> {
        array.all_strings().then(|| array.into_strings().unwrap())
    }

    #[test]
    fn straight_string_path_gives_the_general_paths_column() {
        let limits = sciio_pickle::ParseLimits::default();
        let cases = object_array_pickles();
        assert!(cases.len() > 60, "{}", cases.len());
        for (name, bytes, strings) in cases {
            let straight = sciio_pickle::parse_string_array(&bytes, &limits);
            assert_eq!(straight.is_some(), strings, "{name}: straight path taken");
            let fast = parse_object_array(&bytes).unwrap();
            assert_eq!(matches!(fast.items, Items::Strings(_)), strings, "{name}");
            let general = parse_general(&bytes, &limits).unwrap();
            assert_eq!(fast.shape, general.shape, "{name}");
            let (fast, general) = (column(fast), column(general));
            assert!(fast.is_some() || !strings, "{name}: a string column");
            assert_eq!(fast, general, "{name}");
        }
    }

    #[test]
    fn cut_and_damaged_string_pickles_fall_back_or_agree() {
        let limits = sciio_pickle::ParseLimits::default();
        for (name, bytes, _) in object_array_pickles().iter().step_by(3) {
            if bytes.len() > 4000 {
                continue;
            }
            for cut in 0..bytes.len() {
                let cut = &bytes[..cut];
                assert!(
                    sciio_pickle::parse_string_array(cut, &limits).is_none(),
                    "{name}"
                );
            }
            for at in 0..bytes.len() {
                for flip in [0x01u8, 0x80, 0xFF] {
                    let mut damaged = bytes.clone();
                    damaged[at] ^= flip;
                    if sciio_pickle::parse_string_array(&damaged, &limits).is_none() {
                        continue;
                    }
                    // Read straight, the general machine must read the same.
                    let fast = parse_object_array(&damaged).map(column);
                    let general = parse_general(&damaged, &limits).map(column);
                    match (fast, general) {
                        (Ok(f), Ok(g)) => assert_eq!(f, g, "{name} flipped at {at}"),
                        (f, g) => assert!(f.is_err() && g.is_err(), "{name} at {at}: {f:?} {g:?}"),
                    }
                }
            }
        }
    }

    /// Every item of a string column (`None`: missing).
    fn items_of(columns: &[sciio_pickle::StringColumn]) -> Vec<Option<String>> {
        columns
            .iter()
            .flat_map(|c| (0..c.len()).map(|i| c.get(i).map(str::to_string)))
            .collect()
    }

    /// The pickle read in pieces of `piece` bytes and batches of `rows` (`None`: the scan
    /// gave up).
    fn streamed(
        bytes: &[u8],
        piece: usize,
        rows: usize,
    ) -> Option<Vec<sciio_pickle::StringColumn>> {
        let limits = sciio_pickle::ParseLimits::default();
        let len = bytes.len() as u64;
        let scan = sciio_pickle::scan_string_array(bytes, len, &limits, piece).unwrap()?;
        let batches: Vec<_> =
            sciio_pickle::stream_string_array(bytes, len, &limits, &scan, rows, piece)
                .unwrap()
                .collect::<sciio_core::Result<_>>()
                .unwrap();
        assert_eq!(batches.iter().map(|b| b.len()).sum::<usize>(), scan.rows);
        assert!(batches.iter().all(|b| b.len() <= rows && !b.is_empty()));
        let missing = batches.iter().any(|b| b.valid.is_some());
        assert_eq!(missing, scan.has_missing);
        Some(batches)
    }

    #[test]
    fn string_pickles_read_in_pieces_give_the_straight_column() {
        let limits = sciio_pickle::ParseLimits::default();
        for (name, bytes, _) in object_array_pickles() {
            let straight = sciio_pickle::parse_string_array(&bytes, &limits);
            for (piece, rows) in [(1, 1), (7, 3), (64, 1000), (sciio_pickle::PIECE, 1 << 20)] {
                let streamed = streamed(&bytes, piece, rows);
                assert_eq!(
                    streamed.is_some(),
                    straight.is_some(),
                    "{name} {piece} {rows}"
                );
                if let (Some(s), Some((_, whole))) = (&streamed, &straight) {
                    assert_eq!(items_of(s), items_of(std::slice::from_ref(whole)), "{name}");
                }
            }
        }
    }

    #[test]
    fn cut_and_damaged_string_pickles_read_in_pieces_fall_back_or_agree() {
        let limits = sciio_pickle::ParseLimits::default();
        for (name, bytes, _) in object_array_pickles().iter().step_by(3) {
            if bytes.len() > 4000 {
                continue;
            }
            for cut in 0..bytes.len() {
                assert!(
                    streamed(&bytes[..cut], 5, 2).is_none(),
                    "{name} cut at {cut}"
                );
            }
            for at in 0..bytes.len() {
                for flip in [0x01u8, 0x80, 0xFF] {
                    let mut damaged = bytes.clone();
                    damaged[at] ^= flip;
                    let Some(pieces) = streamed(&damaged, 5, 2) else {
                        continue;
                    };
                    let whole = sciio_pickle::parse_string_array(&damaged, &limits);
                    let whole = whole.unwrap_or_else(|| panic!("{name} flipped at {at}"));
                    assert_eq!(items_of(&pieces), items_of(&[whole.1]), "{name} at {at}");
                }
            }
        }
    }

    #[test]
    fn civil_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
    }
}
