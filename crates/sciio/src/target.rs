//! `FILE[:NODE]` arguments, as the `sciio` command line takes them.
//!
//! The last `:` separates the file from the node only when that reading makes sense, so that
//! file names containing `:` and Windows paths keep working:
//!
//! 1. An argument ending in `:` names the whole file before it (`odd:name.npy:` is the file
//!    `odd:name.npy`) — the escape hatch for any ambiguous name.
//! 2. An argument that exists as a file names that whole file.
//! 3. Otherwise, with `FILE:NODE` split at the last `:`, the split is taken when `FILE` exists
//!    as a file, or `NODE` starts with `/`, or `NODE` looks like a member name (letters,
//!    digits, `_ . - /`, not starting with `.`) — except when `FILE` is a single letter, which
//!    is a Windows drive (`C:/data/x.npy`).
//! 4. Anything else is a whole file name.

use std::path::{Path, PathBuf};

/// A file and an optional node path or member name inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The file.
    pub file: PathBuf,
    /// The node (`/a/b`) or member (`x`); `None` for the whole file.
    pub node: Option<String>,
}

impl Target {
    /// Parses `FILE[:NODE]` by the rules of this module (it looks at the file system to see
    /// which files exist).
    ///
    /// ```
    /// use sciio::Target;
    /// let t = Target::parse("data.npz:weights");
    /// assert_eq!((t.file.to_str(), t.node.as_deref()), (Some("data.npz"), Some("weights")));
    /// assert_eq!(Target::parse("C:/x.npy").node, None);
    /// assert_eq!(Target::parse("odd:name.npy:").file.to_str(), Some("odd:name.npy"));
    /// ```
    pub fn parse(arg: &str) -> Target {
        let whole = |file: &str| Target {
            file: PathBuf::from(file),
            node: None,
        };
        if let Some(file) = arg.strip_suffix(':') {
            return whole(file);
        }
        if Path::new(arg).exists() {
            return whole(arg);
        }
        let Some((file, node)) = arg.rsplit_once(':') else {
            return whole(arg);
        };
        let drive_letter = file.len() == 1 && file.chars().all(|c| c.is_ascii_alphabetic());
        let splits = !file.is_empty()
            && !drive_letter
            && (Path::new(file).is_file() || node.starts_with('/') || is_member_name(node));
        if splits {
            Target {
                file: PathBuf::from(file),
                node: Some(node.to_string()),
            }
        } else {
            whole(arg)
        }
    }
}

fn is_member_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(file: &str, node: Option<&str>) -> Target {
        Target {
            file: file.into(),
            node: node.map(str::to_string),
        }
    }

    #[test]
    fn splits_at_the_last_colon_when_it_makes_sense() {
        assert_eq!(Target::parse("a.npz:x"), t("a.npz", Some("x")));
        assert_eq!(Target::parse("a.h5:/g/x"), t("a.h5", Some("/g/x")));
        assert_eq!(Target::parse("a:b.npz:x"), t("a:b.npz", Some("x")));
        assert_eq!(Target::parse("plain.npy"), t("plain.npy", None));
    }

    #[test]
    fn keeps_windows_paths_and_odd_names_whole() {
        assert_eq!(Target::parse(r"C:\data\x.npy"), t(r"C:\data\x.npy", None));
        assert_eq!(Target::parse("C:/data/x.npy"), t("C:/data/x.npy", None));
        assert_eq!(Target::parse("odd:name.npy:"), t("odd:name.npy", None));
        assert_eq!(Target::parse("x.npz:has space"), t("x.npz:has space", None));
    }

    #[test]
    fn an_existing_file_with_a_colon_is_taken_whole() {
        let dir = sciio_testkit::tempdir();
        let path = dir.path().join("a:b.npy");
        std::fs::write(&path, b"").unwrap();
        let arg = path.to_str().unwrap();
        assert_eq!(Target::parse(arg), t(arg, None));
    }
}
