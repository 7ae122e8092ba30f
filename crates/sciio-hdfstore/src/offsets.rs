//! pandas date offsets as a PeriodIndex's frequency: pandas keeps the `freq` of a PeriodIndex
//! as a pickled offset (`pandas._libs.tslibs.offsets.MonthEnd(1, False)`), read here as the
//! frequency string of its dtype (`period[M]`) and made back from it. Only the offsets a
//! Period frequency can be are known; anything else is `None` (the caller's error names it).

use sciio_core::{Error, Result};
use sciio_pickle::Value;

const MODULE: &str = "pandas._libs.tslibs.offsets";

/// Offsets whose frequency is their code alone (`n` as a prefix when not 1).
const PLAIN: [(&str, &str); 9] = [
    ("Day", "D"),
    ("Hour", "h"),
    ("Minute", "min"),
    ("Second", "s"),
    ("Milli", "ms"),
    ("Micro", "us"),
    ("Nano", "ns"),
    ("MonthEnd", "M"),
    ("BusinessDay", "B"),
];

/// Offsets anchored on a month (`Q-DEC`, `Y-JUN`: their third argument, 1-12) or a weekday
/// (`W-SUN`: 0 = Monday).
const ANCHORED: [(&str, &str); 3] = [("QuarterEnd", "Q"), ("YearEnd", "Y"), ("Week", "W")];

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"];

/// The Period frequency of a pickled offset: `MonthEnd(3, False)` → `3M`; pandas before 1.0
/// (Python 2) pickled offsets as `copy_reg._reconstructor(pandas.tseries.offsets.X, object)`
/// with their attributes as the state.
pub(crate) fn freq_of_offset(v: &Value) -> Option<String> {
    if let Value::Build { object, state } = v {
        return legacy_freq(object, state);
    }
    let Value::Reduce { callable, args } = v else {
        return None;
    };
    let name = callable.global_name()?;
    let class = name.strip_prefix(MODULE)?.strip_prefix('.')?;
    let Value::Tuple(args) = args.as_ref() else {
        return None;
    };
    freq_of(class, args.first()?, args.get(2))
}

/// An offset pickled by old pandas: its class, and `n` and the anchor in its state.
fn legacy_freq(object: &Value, state: &Value) -> Option<String> {
    let Value::Reduce { callable, args } = object else {
        return None;
    };
    if !callable.global_name()?.ends_with("_reconstructor") {
        return None;
    }
    let Value::Tuple(args) = args.as_ref() else {
        return None;
    };
    let name = args.first()?.global_name()?;
    let (module, class) = name.rsplit_once('.')?;
    if !(module.starts_with("pandas") && module.contains("offsets")) {
        return None;
    }
    let get = |d: &Value, key: &str| -> Option<Value> {
        let Value::Dict(items) = d else { return None };
        items.iter().find_map(|(k, v)| {
            let name = match k {
                Value::Str(s) => s.as_bytes(),
                Value::Bytes(b) => b.as_slice(),
                _ => return None,
            };
            (name == key.as_bytes()).then(|| v.clone())
        })
    };
    let n = get(state, "n")?;
    let anchor = ["startingMonth", "month", "weekday"]
        .iter()
        .find_map(|k| get(state, k).or_else(|| get(&get(state, "kwds")?, k)));
    freq_of(class, &n, anchor.as_ref())
}

/// The frequency of offset class `class` with multiple `n` and anchor `anchor`.
fn freq_of(class: &str, n: &Value, anchor: Option<&Value>) -> Option<String> {
    let n = match n {
        Value::Int(n) if *n >= 1 => *n,
        _ => return None,
    };
    let prefix = if n == 1 { String::new() } else { n.to_string() };
    if let Some((_, code)) = PLAIN.iter().find(|(c, _)| *c == class) {
        return Some(format!("{prefix}{code}"));
    }
    let (_, code) = ANCHORED.iter().find(|(c, _)| *c == class)?;
    let anchor = match anchor? {
        Value::Int(a) => *a,
        _ => return None,
    };
    let suffix = if *code == "W" {
        WEEKDAYS.get(usize::try_from(anchor).ok()?)?
    } else {
        MONTHS.get(usize::try_from(anchor).ok()?.checked_sub(1)?)?
    };
    Some(format!("{prefix}{code}-{suffix}"))
}

/// The pandas offset to store for a PeriodIndex of numpy-style dtype `dtype`
/// (`period[F]`), `None` when the dtype is not a period; an error for a frequency sciio
/// cannot write.
pub(crate) fn period_index_offset(dtype: &str) -> Result<Option<Value>> {
    let Some(freq) = dtype
        .strip_prefix("period[")
        .and_then(|f| f.strip_suffix(']'))
    else {
        return Ok(None);
    };
    offset_of_freq(freq).map(Some).ok_or_else(|| {
        Error::unsupported(format!(
            "writing a PeriodIndex of frequency {freq:?} is not implemented"
        ))
    })
}

/// The pickled offset of a Period frequency (`Q-DEC` → `QuarterEnd(1, False, 12)`), as pandas
/// keeps a PeriodIndex's `freq`; `None` for a frequency not known here.
pub(crate) fn offset_of_freq(freq: &str) -> Option<Value> {
    let digits = freq.bytes().take_while(u8::is_ascii_digit).count();
    let n: i64 = if digits == 0 {
        1
    } else {
        freq[..digits].parse().ok()?
    };
    let rest = &freq[digits..];
    let call = |class: &str, mut args: Vec<Value>| {
        let mut all = vec![Value::Int(n), Value::Bool(false)];
        all.append(&mut args);
        Value::Reduce {
            callable: Box::new(Value::Global {
                module: MODULE.into(),
                name: class.into(),
            }),
            args: Box::new(Value::Tuple(all)),
        }
    };
    if let Some((class, code)) = PLAIN.iter().find(|(_, c)| *c == rest) {
        if *code == "B" {
            // BusinessDay(n, normalize, offset=timedelta(0))
            let zero = Value::Reduce {
                callable: Box::new(Value::Global {
                    module: "datetime".into(),
                    name: "timedelta".into(),
                }),
                args: Box::new(Value::Tuple(vec![Value::Int(0); 3])),
            };
            return Some(call(class, vec![zero]));
        }
        return Some(call(class, Vec::new()));
    }
    let (code, suffix) = rest.split_once('-')?;
    let (class, _) = ANCHORED.iter().find(|(_, c)| *c == code)?;
    let anchor = if code == "W" {
        WEEKDAYS.iter().position(|d| *d == suffix)?
    } else {
        MONTHS.iter().position(|m| *m == suffix)? + 1
    };
    Some(call(class, vec![Value::Int(anchor as i64)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequencies_round_trip_through_offsets() {
        for f in [
            "D", "2D", "M", "3M", "h", "min", "s", "ms", "us", "ns", "B", "Q-DEC", "Q-NOV",
            "Y-JUN", "W-SUN", "W-MON",
        ] {
            let v = offset_of_freq(f).unwrap();
            assert_eq!(freq_of_offset(&v).as_deref(), Some(f), "{v:?}");
        }
        assert!(offset_of_freq("Q-XYZ").is_none());
        assert!(offset_of_freq("BQ").is_none());
    }
}
