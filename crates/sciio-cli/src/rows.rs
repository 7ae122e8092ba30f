//! `sciio cat --head N` / `--slice START:STOP`: which rows (along the first axis) to print.
//! Only those rows are read (`sciio::File::read_array_rows`).

use std::str::FromStr;

/// A Python slice of rows without a step: `START:STOP`, either side optional, negative values
/// counting from the end (`-5:` the last five rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowSlice {
    start: Option<i64>,
    stop: Option<i64>,
}

impl FromStr for RowSlice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (a, b) = s
            .split_once(':')
            .ok_or_else(|| format!("{s:?} is not START:STOP (e.g. 10:20, -5:, :100)"))?;
        let num = |t: &str| -> Result<Option<i64>, String> {
            let t = t.trim();
            if t.is_empty() {
                return Ok(None);
            }
            t.parse()
                .map(Some)
                .map_err(|_| format!("{t:?} in {s:?} is not an integer"))
        };
        Ok(RowSlice {
            start: num(a)?,
            stop: num(b)?,
        })
    }
}

impl RowSlice {
    /// The first `n` rows.
    pub fn head(n: u64) -> RowSlice {
        RowSlice {
            start: None,
            stop: Some(i64::try_from(n).unwrap_or(i64::MAX)),
        }
    }

    /// `start..stop` within `len` rows, as Python resolves `a[start:stop]`.
    pub fn resolve(self, len: u64) -> (u64, u64) {
        let len_i = i128::from(len);
        let at = |v: Option<i64>, default: i128| -> u64 {
            let v = v.map_or(default, |v| {
                let v = i128::from(v);
                if v < 0 {
                    v + len_i
                } else {
                    v
                }
            });
            v.clamp(0, len_i) as u64
        };
        let start = at(self.start, 0);
        (start, at(self.stop, len_i).max(start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_resolve_like_python() {
        let r = |s: &str, n| s.parse::<RowSlice>().unwrap().resolve(n);
        assert_eq!(r("2:5", 10), (2, 5));
        assert_eq!(r("-3:", 10), (7, 10));
        assert_eq!(r(":-8", 10), (0, 2));
        assert_eq!(r("8:2", 10), (8, 8));
        assert_eq!(r("-20:20", 10), (0, 10));
        assert_eq!(r(":", 4), (0, 4));
        assert_eq!(RowSlice::head(3).resolve(2), (0, 2));
        assert!("5".parse::<RowSlice>().is_err());
        assert!("a:b".parse::<RowSlice>().is_err());
    }
}
