//! Time zones as pandas stores them: a zone name, or a pickled `datetime.timezone` (UTC and
//! fixed offsets), `zoneinfo.ZoneInfo` or pytz zone. Shared by the `fixed` and `table` readers.

use sciio_core::Result;
use sciio_pickle::Value;

use crate::attrs::Attrs;

/// The `tz` attribute of a fixed-format node: a zone name, or a pickled zone (`UTC` and
/// fixed offsets are pickled `datetime.timezone`s).
pub(crate) fn tz_of(attrs: &Attrs) -> Result<Option<String>> {
    match attrs.value("tz")? {
        None | Some(Value::None) => Ok(None),
        Some(v) => tz_name(&v)
            .map(Some)
            .ok_or_else(|| attrs.bad("tz", &v, "a time zone")),
    }
}

/// A time zone as pandas keeps it in `info`: its name, or a pickled `zoneinfo.ZoneInfo` /
/// pytz zone (`ZoneInfo._unpickle('Europe/Paris', 1)`, `pytz._p('Europe/Paris')`).
pub(crate) fn tz_name(v: &Value) -> Option<String> {
    match v {
        Value::Str(s) => Some(s.clone()),
        Value::Reduce { callable, args }
            if callable.global_name().as_deref() == Some("datetime.timezone") =>
        {
            fixed_offset(args)
        }
        Value::Reduce { callable, args } => {
            let names_zone = |c: &Value| {
                let mut text = format!("{c:?}");
                text.make_ascii_lowercase();
                text.contains("zoneinfo") || text.contains("pytz")
            };
            if !names_zone(callable) {
                return None;
            }
            match args.as_ref() {
                Value::Tuple(items) => items.iter().find_map(|a| match a {
                    Value::Str(s) => Some(s.clone()),
                    _ => None,
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `datetime.timezone(datetime.timedelta(days, seconds, us))`: `UTC`, or `+HH:MM` (the
/// spelling Arrow and pandas give a fixed offset).
fn fixed_offset(args: &Value) -> Option<String> {
    let Value::Tuple(items) = args else {
        return None;
    };
    let Some(Value::Reduce { callable, args }) = items.first() else {
        return None;
    };
    if callable.global_name().as_deref() != Some("datetime.timedelta") {
        return None;
    }
    let Value::Tuple(parts) = args.as_ref() else {
        return None;
    };
    let int = |i: usize| match parts.get(i) {
        Some(Value::Int(v)) => Some(*v),
        None => Some(0),
        _ => None,
    };
    let seconds = int(0)?.checked_mul(86_400)?.checked_add(int(1)?)?;
    if seconds == 0 && int(2)? == 0 {
        return Some("UTC".into());
    }
    if int(2)? != 0 || seconds % 60 != 0 || seconds.abs() >= 86_400 {
        return None;
    }
    let sign = if seconds < 0 { '-' } else { '+' };
    let m = seconds.abs() / 60;
    Some(format!("{sign}{:02}:{:02}", m / 60, m % 60))
}
