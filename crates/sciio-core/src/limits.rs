//! Allocation limits for sizes that come from untrusted headers.

use crate::error::{Error, ErrorKind, Result};

/// Upper bounds on what a reader may allocate or decompress because a file said so.
///
/// Sizes announced by a header are always checked against the real file length first; these
/// limits additionally bound what cannot be checked that way (decompressed sizes, streams).
///
/// ```
/// use sciio_core::Limits;
/// let limits = Limits::default().max_alloc(1 << 20);
/// assert!(limits.check_alloc(1024, "array data").is_ok());
/// assert!(limits.check_alloc(2 << 20, "array data").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest single buffer a reader allocates from an untrusted size.
    /// Default: 16 GiB — larger arrays should be memory-mapped.
    pub max_alloc: u64,
    /// Largest decompressed/compressed ratio accepted for one compressed member or chunk
    /// before it is treated as a decompression bomb. Default: 1032 (deflate's maximum is
    /// about 1032:1, so honest data never exceeds it).
    pub max_ratio: u64,
    /// Largest header (NPY header, metadata JSON...) accepted. Default: 64 MiB.
    pub max_header: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_alloc: 16 << 30,
            max_ratio: 1032,
            max_header: 64 << 20,
        }
    }
}

impl Limits {
    /// No limits beyond what the input itself proves (use only on trusted input).
    pub fn unlimited() -> Self {
        Limits {
            max_alloc: u64::MAX,
            max_ratio: u64::MAX,
            max_header: u64::MAX,
        }
    }

    /// Sets [`Limits::max_alloc`].
    pub fn max_alloc(mut self, bytes: u64) -> Self {
        self.max_alloc = bytes;
        self
    }

    /// Sets [`Limits::max_ratio`].
    pub fn max_ratio(mut self, ratio: u64) -> Self {
        self.max_ratio = ratio;
        self
    }

    /// Sets [`Limits::max_header`].
    pub fn max_header(mut self, bytes: u64) -> Self {
        self.max_header = bytes;
        self
    }

    /// Checks that allocating `bytes` for `what` is within [`Limits::max_alloc`].
    pub fn check_alloc(&self, bytes: u64, what: &str) -> Result<usize> {
        if bytes > self.max_alloc {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!(
                    "{what} needs {bytes} bytes, over the limit of {} bytes",
                    self.max_alloc
                ),
            ));
        }
        usize::try_from(bytes).map_err(|_| {
            Error::new(
                ErrorKind::LimitExceeded,
                format!("{what} needs {bytes} bytes, more than this platform can address"),
            )
        })
    }

    /// Checks a declared decompressed size against the compressed size and the ratio limit.
    pub fn check_ratio(&self, compressed: u64, decompressed: u64, what: &str) -> Result<()> {
        let allowed = compressed.max(1).saturating_mul(self.max_ratio);
        if decompressed > allowed {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!(
                    "{what} expands {compressed} bytes to {decompressed} bytes, over the ratio limit of {}:1 (decompression bomb?)",
                    self.max_ratio
                ),
            ));
        }
        Ok(())
    }
}
