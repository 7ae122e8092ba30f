//! One compression syntax for every format: `--compress SPEC` on the command line, `CompressSpec`
//! in code. The facade parses it once; each format then checks what it supports and says clearly
//! what it does not.
//!
//! Syntax: a comma-separated list of filters applied in order, each `NAME[:CODEC][:LEVEL]`:
//!
//! | spec | meaning |
//! |---|---|
//! | `deflate:6` | deflate at level 6 (npz) |
//! | `shuffle,zlib:1` | byte shuffle, then zlib level 1 (HDF5) |
//! | `blosc2:lz4:5` | blosc2 with its lz4 codec at level 5 (HDF5) |
//! | `zstd:3` | zstd level 3 (Parquet) |
//! | `none` | explicitly uncompressed (an empty filter list) |

use std::fmt;
use std::str::FromStr;

use sciio_core::{Error, Result};

/// One filter of a [`CompressSpec`]: a name, an optional codec (for meta-compressors such as
/// blosc2) and an optional level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// The filter or compressor name, lower case (`deflate`, `zlib`, `shuffle`, `blosc2`, `zstd`).
    pub name: String,
    /// The inner codec of a meta-compressor (`lz4` in `blosc2:lz4:5`), if given.
    pub codec: Option<String>,
    /// The compression level, if given.
    pub level: Option<i32>,
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(codec) = &self.codec {
            write!(f, ":{codec}")?;
        }
        if let Some(level) = self.level {
            write!(f, ":{level}")?;
        }
        Ok(())
    }
}

/// A parsed compression request: the filters to apply, in order. An empty list means "store
/// uncompressed"; not giving a spec at all (an `Option::None` at the call site) means "the
/// format's usual default".
///
/// ```
/// use sciio::CompressSpec;
/// let spec: CompressSpec = "shuffle,blosc2:lz4:5".parse()?;
/// assert_eq!(spec.filters().len(), 2);
/// assert_eq!(spec.filters()[1].codec.as_deref(), Some("lz4"));
/// assert_eq!(spec.filters()[1].level, Some(5));
/// assert_eq!(spec.to_string(), "shuffle,blosc2:lz4:5");
/// assert!(CompressSpec::parse("none")?.is_uncompressed());
/// assert!(CompressSpec::parse("deflate:x:y:z").is_err());
/// # Ok::<(), sciio::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompressSpec {
    filters: Vec<Filter>,
}

impl CompressSpec {
    /// Parses `NAME[:CODEC][:LEVEL][,...]`, or `none`.
    pub fn parse(spec: &str) -> Result<Self> {
        let spec = spec.trim();
        if spec.eq_ignore_ascii_case("none") {
            return Ok(CompressSpec::default());
        }
        let filters = spec
            .split(',')
            .map(|part| parse_filter(part.trim(), spec))
            .collect::<Result<Vec<_>>>()?;
        Ok(CompressSpec { filters })
    }

    /// A spec of one filter.
    pub fn single(name: &str, level: Option<i32>) -> Self {
        CompressSpec {
            filters: vec![Filter {
                name: name.to_ascii_lowercase(),
                codec: None,
                level,
            }],
        }
    }

    /// The filters, in the order they apply when writing.
    pub fn filters(&self) -> &[Filter] {
        &self.filters
    }

    /// True for `none`: store without compression.
    pub fn is_uncompressed(&self) -> bool {
        self.filters.is_empty()
    }

    /// For formats that take at most one compressor without codec: returns it (or `None` for
    /// `none`), or an error naming `format` and the `supported` names otherwise. Levels are
    /// checked against `levels` (inclusive).
    ///
    /// ```
    /// use sciio::CompressSpec;
    /// let spec = CompressSpec::parse("deflate:6")?;
    /// let f = spec.only_one("npz", &["deflate"], 0..=9)?.unwrap();
    /// assert_eq!((f.name.as_str(), f.level), ("deflate", Some(6)));
    /// let err = CompressSpec::parse("zstd:3")?.only_one("npz", &["deflate"], 0..=9).unwrap_err();
    /// assert!(err.to_string().contains("npz cannot compress with 'zstd'"));
    /// # Ok::<(), sciio::Error>(())
    /// ```
    pub fn only_one(
        &self,
        format: &str,
        supported: &[&str],
        levels: std::ops::RangeInclusive<i32>,
    ) -> Result<Option<&Filter>> {
        let filter = match self.filters.as_slice() {
            [] => return Ok(None),
            [one] => one,
            _ => {
                return Err(Error::unsupported(format!(
                    "{format} takes one compressor, '{self}' lists {}; supported: {}",
                    self.filters.len(),
                    supported.join(", ")
                )))
            }
        };
        if !supported.contains(&filter.name.as_str()) {
            return Err(Error::unsupported(format!(
                "{format} cannot compress with '{}'; supported: {}",
                filter.name,
                supported.join(", ")
            )));
        }
        if let Some(codec) = &filter.codec {
            return Err(Error::unsupported(format!(
                "{format}: '{}' takes no codec, got '{codec}'",
                filter.name
            )));
        }
        if let Some(level) = filter.level {
            if !levels.contains(&level) {
                return Err(Error::invalid_input(format!(
                    "{format}: '{}' level {level} is out of range {}..={}",
                    filter.name,
                    levels.start(),
                    levels.end()
                )));
            }
        }
        Ok(Some(filter))
    }
}

fn parse_filter(part: &str, whole: &str) -> Result<Filter> {
    let bad = |why: &str| Error::invalid_input(format!("compression spec '{whole}': {why}"));
    let fields: Vec<&str> = part.split(':').map(str::trim).collect();
    let (name, rest) = match fields.split_first() {
        Some((name, rest)) if !name.is_empty() => (*name, rest),
        _ => return Err(bad("empty filter name (expected NAME[:CODEC][:LEVEL])")),
    };
    check_word(name).map_err(|()| bad(&format!("'{name}' is not a filter name")))?;
    let (codec, level) = match rest {
        [] => (None, None),
        [one] => match one.parse::<i32>() {
            Ok(level) => (None, Some(level)),
            Err(_) => (Some(*one), None),
        },
        [codec, level] => {
            let level = level
                .parse::<i32>()
                .map_err(|_| bad(&format!("level '{level}' is not an integer")))?;
            (Some(*codec), Some(level))
        }
        _ => return Err(bad("too many ':' (expected NAME[:CODEC][:LEVEL])")),
    };
    if let Some(codec) = codec {
        check_word(codec).map_err(|()| bad(&format!("'{codec}' is not a codec name")))?;
    }
    Ok(Filter {
        name: name.to_ascii_lowercase(),
        codec: codec.map(str::to_ascii_lowercase),
        level,
    })
}

/// Names are short ASCII words: letters, digits, `_`, `-`, starting with a letter.
fn check_word(word: &str) -> std::result::Result<(), ()> {
    let mut chars = word.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => {}
        _ => return Err(()),
    }
    if chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        Ok(())
    } else {
        Err(())
    }
}

impl FromStr for CompressSpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        CompressSpec::parse(s)
    }
}

impl fmt::Display for CompressSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.filters.is_empty() {
            return f.write_str("none");
        }
        for (i, filter) in self.filters.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{filter}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_documented_form() {
        let s = CompressSpec::parse("deflate:6").unwrap();
        assert_eq!(
            s.filters(),
            &[Filter {
                name: "deflate".into(),
                codec: None,
                level: Some(6)
            }]
        );
        let s = CompressSpec::parse("shuffle, zlib:1").unwrap();
        assert_eq!(s.filters()[0].name, "shuffle");
        assert_eq!(s.filters()[1].level, Some(1));
        let s = CompressSpec::parse("BLOSC2:LZ4").unwrap();
        assert_eq!(s.to_string(), "blosc2:lz4");
        assert!(CompressSpec::parse("None").unwrap().is_uncompressed());
    }

    #[test]
    fn rejects_malformed_specs() {
        for bad in [
            "",
            ",",
            "deflate:",
            "6",
            "a:b:c:d",
            "blosc2:lz4:x",
            "de flate",
            "zlib,,",
        ] {
            let err = CompressSpec::parse(bad).unwrap_err();
            assert_eq!(err.kind(), sciio_core::ErrorKind::InvalidInput, "{bad}");
        }
    }

    #[test]
    fn only_one_checks_names_codecs_and_levels() {
        let range = 0..=9;
        let ok = CompressSpec::parse("deflate").unwrap();
        assert!(ok
            .only_one("npz", &["deflate"], range.clone())
            .unwrap()
            .is_some());
        for bad in ["deflate:12", "deflate:zlib:1", "shuffle,deflate", "zstd"] {
            let spec = CompressSpec::parse(bad).unwrap();
            assert!(
                spec.only_one("npz", &["deflate"], range.clone()).is_err(),
                "{bad}"
            );
        }
    }
}
