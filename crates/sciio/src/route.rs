//! The one path of every conversion: a registry of routes ([`ROUTES`]), each a pairing of a
//! kind of source and a destination format with the function that converts it. [`run`] hands
//! the [`Job`] to the first route, in the table's order, whose kinds match and which takes it;
//! a route reports what it leaves out into the job's [`Plan`](crate::plan::Plan) (refused
//! there before anything is written with `--strict`) and returns what it wrote, or `None` to
//! pass the job on (having written nothing; [`run`] removes whatever it added to the plan).
//! The last route, the neutral tree (array leaves through numpy), takes every job.
//!
//! A new pairing is one function in its own conversion module and one entry here, placed
//! before the more general routes it refines.

use sciio_core::{Error, Result};

use crate::file::File;
use crate::format::Format;
use crate::job::{Convert, Job, Written};
use crate::node::NodeKind;

/// The sources a route converts: every source must be of this kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum From {
    /// Any file.
    Any,
    /// A data frame (a Parquet file).
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    Frame,
    /// An HDF5 file (PyTables, h5py, a pandas HDFStore).
    #[cfg_attr(not(feature = "hdf5"), allow(dead_code))]
    Hdf5,
    /// A MAT file.
    #[cfg_attr(not(feature = "mat"), allow(dead_code))]
    Mat,
}

impl From {
    fn matches(self, file: &File) -> bool {
        match self {
            From::Any => true,
            From::Frame => matches!(file.root().kind, NodeKind::Frame { .. }),
            From::Hdf5 => file.format() == Format::Hdf5,
            From::Mat => file.format() == Format::Mat,
        }
    }
}

/// The destination formats a route writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum To {
    /// Any format.
    Any,
    /// This format only.
    #[cfg_attr(
        not(any(feature = "parquet", feature = "mat", feature = "hdf5")),
        allow(dead_code)
    )]
    Only(Format),
}

/// One pairing of the registry.
pub(crate) struct Route {
    /// What it does, in a few words (for the docs and internal errors).
    #[allow(dead_code)]
    pub(crate) what: &'static str,
    /// The kind of every source.
    pub(crate) from: From,
    /// The destination format.
    pub(crate) to: To,
    /// The conversion.
    pub(crate) convert: Convert,
}

impl Route {
    fn matches(&self, job: &Job<'_, '_, '_>) -> bool {
        let to = match self.to {
            To::Any => true,
            To::Only(format) => job.format == format,
        };
        to && job.all_sources(|f| self.from.matches(f))
    }
}

/// Every pairing, most specific first: the first that matches and takes a job converts it.
pub(crate) const ROUTES: &[Route] = &[
    // A pandas HDFStore key (or a whole store into .npz or Parquet) as the frame pandas reads.
    #[cfg(feature = "hdfstore")]
    Route {
        what: "pandas HDFStore keys as data frames",
        from: From::Hdf5,
        to: To::Any,
        convert: crate::store_convert::store_keys,
    },
    // Frames and Parquet destinations: one source, no nodes inside a frame (refusals only).
    #[cfg(feature = "parquet")]
    Route {
        what: "the checks of a data frame conversion",
        from: From::Any,
        to: To::Any,
        convert: crate::parquet_convert::check_frame_job,
    },
    #[cfg(feature = "parquet")]
    Route {
        what: "Parquet -> Parquet, record batch by record batch",
        from: From::Frame,
        to: To::Only(Format::Parquet),
        convert: crate::parquet_convert::frame_to_parquet,
    },
    #[cfg(feature = "parquet")]
    Route {
        what: "Parquet -> .npz, record batch by record batch",
        from: From::Frame,
        to: To::Only(Format::Npz),
        convert: crate::frame_numpy::frame_to_npz,
    },
    #[cfg(feature = "parquet")]
    Route {
        what: "Parquet -> .npz, a member per index level and column",
        from: From::Frame,
        to: To::Only(Format::Npz),
        convert: crate::parquet_convert::frame_to_npz,
    },
    #[cfg(feature = "parquet")]
    Route {
        what: "Parquet -> .npy, record batch by record batch",
        from: From::Frame,
        to: To::Only(Format::Npy),
        convert: crate::frame_numpy::frame_to_npy,
    },
    #[cfg(feature = "parquet")]
    Route {
        what: "Parquet -> .npy, one structured array",
        from: From::Frame,
        to: To::Only(Format::Npy),
        convert: crate::parquet_convert::frame_to_npy,
    },
    #[cfg(feature = "hdfstore")]
    Route {
        what: "Parquet -> .h5, a pandas HDFStore key",
        from: From::Frame,
        to: To::Only(Format::Hdf5),
        convert: crate::store_convert::frame_to_store,
    },
    #[cfg(all(feature = "parquet", feature = "hdf5"))]
    Route {
        what: "Parquet -> .h5, a PyTables Table row group by row group",
        from: From::Frame,
        to: To::Only(Format::Hdf5),
        convert: crate::stream::frame_to_h5,
    },
    #[cfg(all(feature = "parquet", feature = "hdf5"))]
    Route {
        what: "Parquet -> .h5, a PyTables Table of the whole frame",
        from: From::Frame,
        to: To::Only(Format::Hdf5),
        convert: crate::parquet_convert::frame_to_h5,
    },
    #[cfg(all(feature = "parquet", feature = "mat"))]
    Route {
        what: "Parquet -> MAT, a variable (or a struct's field) per index level and column",
        from: From::Frame,
        to: To::Only(Format::Mat),
        convert: crate::frame_mat::frame_to_mat,
    },
    #[cfg(feature = "parquet")]
    Route {
        what: "a data frame into a format whose route this build leaves out (refused)",
        from: From::Frame,
        to: To::Any,
        convert: crate::parquet_convert::no_frame_destination,
    },
    #[cfg(feature = "parquet")]
    Route {
        what: "an array or table -> Parquet (streamed when its rows are contiguous)",
        from: From::Any,
        to: To::Only(Format::Parquet),
        convert: crate::parquet_convert::array_to_parquet,
    },
    #[cfg(feature = "hdf5")]
    Route {
        what: "HDF5 -> HDF5, copied like ptrepack",
        from: From::Hdf5,
        to: To::Only(Format::Hdf5),
        convert: crate::h5_convert::repack,
    },
    #[cfg(feature = "mat")]
    Route {
        what: "MAT -> MAT, MATLAB values copied",
        from: From::Mat,
        to: To::Only(Format::Mat),
        convert: crate::mat_convert::copy_values,
    },
    #[cfg(feature = "mat")]
    Route {
        what: "a scipy.sparse.save_npz file -> one MAT sparse variable",
        from: From::Any,
        to: To::Only(Format::Mat),
        convert: crate::mat_convert::save_npz_to_sparse,
    },
    Route {
        what: "the neutral tree: array leaves through numpy",
        from: From::Any,
        to: To::Any,
        convert: crate::leaves::convert,
    },
];

/// Converts `job` by the first route of [`ROUTES`] that takes it.
pub(crate) fn run(job: &mut Job<'_, '_, '_>) -> Result<Written> {
    for route in ROUTES {
        if !route.matches(job) {
            continue;
        }
        let planned = job.plan.left_out.len();
        if let Some(written) = (route.convert)(job)? {
            return Ok(written);
        }
        // A route that passes leaves the plan as it found it.
        job.plan.left_out.truncate(planned);
    }
    Err(Error::invalid_input("internal: no conversion route took the job").with_file(job.dst))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_neutral_tree_is_the_last_route_and_takes_everything() {
        let last = ROUTES.last().map(|r| (r.from, r.to));
        assert_eq!(last, Some((From::Any, To::Any)));
    }
}
