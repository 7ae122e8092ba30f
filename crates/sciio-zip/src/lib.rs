//! sciio's zip container: what `.npz` files are made of. It knows nothing of numpy.
//!
//! - [`ZipArchive`] reads: the end records and central directory (zip64 included: members over
//!   4 GiB, more than 65535 members), every header field checked against the file length; then
//!   members one at a time, lazily, as `Read` streams ([`ZipArchive::open_member`]) that check
//!   size and CRC-32 at their end and stop as soon as the data exceeds the declared size
//!   (zip-bomb guard, with the ratio and allocation limits of [`sciio_core::Limits`]).
//!   [`ZipArchive::data_offset`] gives where a stored member's bytes lie, for memory-mapping.
//! - [`ZipWriter`] writes stored and deflate members with the header layout of CPython's
//!   `zipfile` as numpy's `savez` uses it, zip64 when needed, and deflates pigz-style: blocks
//!   compressed on all cores into one valid raw deflate stream.
//!
//! Why hand-written over `flate2` rather than the `zip` crate: the writer must emit raw deflate
//! streams that we build in parallel from independently compressed blocks, with exactly the
//! headers CPython writes (zip64 extras in local headers, its 2 GiB zip64 threshold), which the
//! `zip` crate's writer does not expose; and the reader must hand out data offsets for mmap and
//! report errors as sciio errors with file, member and offset. The format subset numpy needs
//! (stored + deflate, zip64, no encryption, one volume) is small.
// Input never reaches a panic: errors are returned (tests may unwrap).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable
    )
)]
#![forbid(unsafe_code)]

mod bytes;
mod deflate;
mod read;
mod spec;
mod write;

pub use deflate::{zlib_parallel, ZlibParallelWriter};
pub use read::{error_from_io, Entry, MemberReader, ZipArchive};
pub use spec::{CompressionMethod, DosDateTime};
pub use write::{unsafe_member_name, Compression, MemberWriter, ZipWriter, DEFAULT_BLOCK_SIZE};
