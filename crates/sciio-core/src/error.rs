//! The one error type of sciio: what went wrong ([`ErrorKind`]), where (file, node path or
//! member, byte offset) and why (a message, and an optional source error).

use std::fmt;
use std::path::{Path, PathBuf};

/// A convenient alias for results with sciio's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What kind of failure an [`Error`] reports; match on it to react programmatically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing the underlying file or stream failed.
    Io,
    /// The input is not a valid file of the format (bad magic, bad header, inconsistent fields).
    Format,
    /// The input ends before the data its headers announce.
    Truncated,
    /// The file is valid but uses something sciio does not support.
    Unsupported,
    /// The data is of a kind sciio refuses to decode on purpose (pickled Python objects).
    Refused,
    /// An untrusted size exceeds the configured [`Limits`](crate::Limits).
    LimitExceeded,
    /// A requested dtype, shape, node or member does not match what the file holds.
    Mismatch,
    /// A named node, member, column or variable does not exist.
    NotFound,
    /// The caller passed an invalid argument (bad spec string, bad shape...).
    InvalidInput,
    /// A checksum or integrity check failed.
    Corrupt,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ErrorKind::Io => "I/O error",
            ErrorKind::Format => "invalid format",
            ErrorKind::Truncated => "truncated input",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Refused => "refused",
            ErrorKind::LimitExceeded => "limit exceeded",
            ErrorKind::Mismatch => "mismatch",
            ErrorKind::NotFound => "not found",
            ErrorKind::InvalidInput => "invalid input",
            ErrorKind::Corrupt => "corrupt data",
        };
        f.write_str(s)
    }
}

/// Where in the input an error happened. Every part is optional; the more the better.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// The file being read or written.
    pub file: Option<PathBuf>,
    /// The node path (HDF5), member name (NPZ), variable (MAT) or column (Parquet).
    pub node: Option<String>,
    /// The byte offset in the file or member.
    pub offset: Option<u64>,
}

impl Location {
    fn is_empty(&self) -> bool {
        self.file.is_none() && self.node.is_none() && self.offset.is_none()
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            sep = ":";
        }
        if let Some(node) = &self.node {
            write!(f, "{sep}{node}")?;
            sep = " ";
        }
        if let Some(offset) = self.offset {
            write!(f, "{sep}at byte {offset}")?;
        }
        Ok(())
    }
}

struct Inner {
    kind: ErrorKind,
    message: String,
    location: Location,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// sciio's error: boxed so that `Result<T>` stays one word wide.
///
/// ```
/// use sciio_core::{Error, ErrorKind};
/// let err = Error::new(ErrorKind::Truncated, "header announces 80 bytes, 12 remain")
///     .with_file("a.npy")
///     .with_offset(10);
/// assert_eq!(err.kind(), ErrorKind::Truncated);
/// assert_eq!(err.to_string(), "a.npy:at byte 10: truncated input: header announces 80 bytes, 12 remain");
/// ```
pub struct Error(Box<Inner>);

impl Error {
    /// A new error of `kind` with a message saying why.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            location: Location::default(),
            source: None,
        }))
    }

    /// Shorthand for [`ErrorKind::Format`].
    pub fn format(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Format, message)
    }

    /// Shorthand for [`ErrorKind::Truncated`].
    pub fn truncated(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Truncated, message)
    }

    /// Shorthand for [`ErrorKind::Unsupported`].
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, message)
    }

    /// Shorthand for [`ErrorKind::InvalidInput`].
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// Shorthand for [`ErrorKind::Mismatch`].
    pub fn mismatch(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Mismatch, message)
    }

    /// Shorthand for [`ErrorKind::NotFound`].
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// An I/O error with context.
    pub fn io(message: impl Into<String>, source: std::io::Error) -> Self {
        Self::new(ErrorKind::Io, message).with_source(source)
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// Why it failed, without the location.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// Where it failed.
    pub fn location(&self) -> &Location {
        &self.0.location
    }

    /// Sets the file, unless one is set already (the innermost layer knows best).
    pub fn with_file(mut self, file: impl AsRef<Path>) -> Self {
        if self.0.location.file.is_none() {
            self.0.location.file = Some(file.as_ref().to_path_buf());
        }
        self
    }

    /// Sets the node path / member / variable / column, unless one is set already.
    pub fn with_node(mut self, node: impl Into<String>) -> Self {
        if self.0.location.node.is_none() {
            self.0.location.node = Some(node.into());
        }
        self
    }

    /// Sets the byte offset, unless one is set already.
    pub fn with_offset(mut self, offset: u64) -> Self {
        if self.0.location.offset.is_none() {
            self.0.location.offset = Some(offset);
        }
        self
    }

    /// Attaches the underlying cause.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.0.source = Some(Box::new(source));
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.0.location.is_empty() {
            write!(f, "{}: ", self.0.location)?;
        }
        write!(f, "{}: {}", self.0.kind, self.0.message)?;
        if let Some(source) = &self.0.source {
            write!(f, ": {source}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("message", &self.0.message)
            .field("location", &self.0.location)
            .field("source", &self.0.source)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        let kind = if e.kind() == std::io::ErrorKind::UnexpectedEof {
            ErrorKind::Truncated
        } else {
            ErrorKind::Io
        };
        let message = e.to_string();
        Error::new(kind, message)
    }
}
