//! numpy `.npy` files: read and write them exactly like `np.save` / `np.load` do.
//!
//! - Headers of versions 1.0, 2.0 and 3.0 ([`read_header`], [`parse_header`], [`header_bytes`]),
//!   including what old writers produced (Python 2 `3L` longs, any key order).
//! - Whole arrays from streams ([`read_array`], [`read_array_sized`]), files ([`read_file`],
//!   [`read`] for typed `ndarray` arrays) and memory maps ([`open_mmap`], [`open_mmap_mut`],
//!   [`create_mmap`]: `unsafe fn`s, with memmap2's contract that nothing else changes or
//!   truncates a mapped file); writing ([`write_array`], [`write_file`], [`write()`]) byte-identical to
//!   numpy; appending rows in place ([`append`]).
//! - Untrusted input: every size is checked against the input length and
//!   [`Limits`](sciio_core::Limits) before allocation; object (pickle) arrays are refused with
//!   [`ErrorKind::Refused`](sciio_core::ErrorKind::Refused).
//!
//! ```
//! use sciio_core::{ndarray::array, NdArray};
//! let a = array![[1.0f64, 2.0], [3.0, 4.0]];
//! let mut bytes = Vec::new();
//! sciio_npy::write_array(&mut bytes, &NdArray::from_ndarray(a.clone())).unwrap();
//! assert_eq!(&bytes[..10], b"\x93NUMPY\x01\x00v\x00");
//! let back = sciio_npy::read_array(&bytes[..], &Default::default()).unwrap();
//! assert_eq!(back.view::<f64>().unwrap(), a.into_dyn());
//! ```
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

pub mod header;
mod io;
pub mod npz;

pub use header::{
    header_bytes, header_bytes_version, header_text, parse_header, read_header, read_header_from,
    Header, Version,
};
pub use io::{
    append, create_mmap, open_mmap, open_mmap_mut, read, read_array, read_array_sized, read_data,
    read_dyn, read_file, read_file_with, write, write_array, write_array_version, write_file,
};
