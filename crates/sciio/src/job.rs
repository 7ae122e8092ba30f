//! One conversion as the routes see it ([`Job`]): the sources, the destination and its format,
//! the options, the [`Plan`] every route reports into, and the progress callback; and what a
//! route wrote ([`Written`]). [`crate::route`] hands a job to the first route that takes it.

use std::path::Path;

use crate::file::File;
use crate::format::Format;
use crate::options::ConvertOptions;
use crate::plan::Plan;

/// One conversion: sources (each a file and an optional node) into `dst` as `format`.
pub(crate) struct Job<'j, 'f, 'n> {
    /// The sources, each a file and an optional node (`SRC:NODE`).
    pub(crate) sources: &'j mut [(&'f mut File, Option<&'n str>)],
    /// The destination path.
    pub(crate) dst: &'j Path,
    /// The destination's format.
    pub(crate) format: Format,
    /// What the caller asked for.
    pub(crate) options: &'j ConvertOptions,
    /// What is left out so far; a route adds to it and calls [`Plan::ready`] before writing.
    pub(crate) plan: Plan,
    /// `progress(done, total)`, in bytes of data.
    pub(crate) progress: &'j mut dyn FnMut(u64, u64),
}

impl Job<'_, '_, '_> {
    /// The one source and its node, when there is exactly one.
    #[cfg_attr(not(any(feature = "hdf5", feature = "parquet")), allow(dead_code))]
    pub(crate) fn single(&mut self) -> Option<(&mut File, Option<&str>)> {
        match self.sources {
            [(file, node)] => Some((&mut **file, *node)),
            _ => None,
        }
    }

    /// Whether every source passes `pred`.
    pub(crate) fn all_sources(&self, pred: impl Fn(&File) -> bool) -> bool {
        self.sources.iter().all(|(f, _)| pred(f))
    }
}

/// A route's function ([`crate::route`]): what it wrote, or `None` when it does not take
/// the job.
pub(crate) type Convert = fn(&mut Job<'_, '_, '_>) -> sciio_core::Result<Option<Written>>;

/// What a route wrote: the names of the arrays, members, variables or columns, and the bytes
/// of data moved. The left-out items are in the job's [`Plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Written {
    /// The names written (npz members without `.npy`; `/` for an npy file).
    pub(crate) arrays: Vec<String>,
    /// Bytes of data moved.
    pub(crate) data_bytes: u64,
}
