//! Panics inside dependencies, turned into errors at the reader boundary.
//!
//! Some decoders sciio builds on (arrow-rs' Parquet reader among them) assert on damaged input
//! instead of returning an error. A reader wraps its calls into them in [`contain_panics`], so
//! a damaged file is a [`Corrupt`](crate::ErrorKind::Corrupt) error naming what was being read,
//! never a crash. While a contained call runs, [`panic_is_contained`] is true on that thread so
//! that a program's panic hook can stay quiet about a panic that will become an error.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::{Error, ErrorKind, Result};

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Whether the current thread is inside [`contain_panics`] (for panic hooks).
pub fn panic_is_contained() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Runs `f`; a panic inside it becomes a `Corrupt` error `"{what}: {panic message}"`.
///
/// Whatever `f` borrowed mutably may be left half-updated by the panic: callers drop or
/// poison such state after an error from here.
///
/// ```
/// use sciio_core::{contain::contain_panics, ErrorKind};
/// let e = contain_panics("reading page 3", || -> sciio_core::Result<()> {
///     panic!("offset + len out of bounds")
/// })
/// .unwrap_err();
/// assert_eq!(e.kind(), ErrorKind::Corrupt);
/// assert!(e.to_string().contains("reading page 3: offset + len out of bounds"));
/// ```
pub fn contain_panics<T>(what: impl std::fmt::Display, f: impl FnOnce() -> Result<T>) -> Result<T> {
    struct Enter;
    impl Drop for Enter {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
    DEPTH.with(|d| d.set(d.get() + 1));
    let entered = Enter;
    let outcome = catch_unwind(AssertUnwindSafe(f));
    drop(entered);
    outcome.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a decoder failed".to_string());
        Err(Error::new(ErrorKind::Corrupt, format!("{what}: {message}")))
    })
}
