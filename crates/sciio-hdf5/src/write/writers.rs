//! The handle types of the writer, defined together because they hold each other (a file's
//! shared state lists its appenders, an appender holds its dataset, a dataset its file); their
//! methods are in `mod.rs` (files, groups, datasets), `objects.rs` (small objects quickly) and
//! `append.rs` (appending rows).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use sciio_core::Error;

use crate::handle::Hid;
use crate::types::H5Type;
use sciio_codecs::FilterStage;

#[derive(Debug)]
pub(super) struct Inner {
    /// `None` once closed.
    pub(super) hid: Mutex<Option<Hid>>,
    pub(super) path: PathBuf,
    pub(super) track_times: bool,
    /// Datatypes and property lists reused by every object written (see `objects`).
    pub(super) cache: Mutex<Cache>,
    /// Appenders whose partial last chunk may still be only in memory.
    pub(super) appenders: Mutex<Vec<Weak<Mutex<AppendState>>>>,
    /// An error met where it could not be returned (an appender dropped), for the next flush.
    pub(super) deferred: Mutex<Option<Error>>,
}

/// An HDF5 file open for writing. libhdf5 closes it when this and every group and dataset
/// obtained from it are dropped; [`FileWriter::close`] flushes first and reports errors.
#[derive(Debug, Clone)]
pub struct FileWriter {
    pub(super) inner: Arc<Inner>,
}

/// A group open for writing.
#[derive(Debug)]
pub struct GroupWriter {
    pub(super) file: FileWriter,
    pub(super) hid: Hid,
    pub(super) path: String,
}

/// A dataset open for writing.
#[derive(Debug)]
pub struct DatasetWriter {
    pub(super) file: FileWriter,
    pub(super) hid: Hid,
    pub(super) path: String,
    pub(super) ty: H5Type,
    pub(super) chunk: Option<Vec<u64>>,
    pub(super) pipeline: Vec<FilterStage>,
}

/// What a `ChunkAppender` knows between appends.
#[derive(Debug)]
pub(crate) struct AppendState {
    /// The appender's own handle on the dataset (it outlives the caller's).
    pub(super) ds: DatasetWriter,
    pub(super) rows: u64,
    pub(super) chunk: Vec<u64>,
    /// Shape of one row (every dimension but the first).
    pub(super) row_shape: Vec<u64>,
    pub(super) row_bytes: usize,
    pub(super) elem: usize,
    pub(super) grow: bool,
    /// The rows of the last, partial chunk band.
    pub(super) tail: Vec<u8>,
    /// Whether the file holds `tail` as it is now.
    pub(super) tail_stored: bool,
    /// Bytes of the row being given in pieces already written as chunks
    /// (`ChunkAppender::append_elements`).
    pub(super) part_at: u64,
    /// Bytes of that row after `part_at` not yet written: less than one slab of chunks.
    pub(super) part: Vec<u8>,
}

/// libhdf5 objects built once per open file and reused by every object written.
#[derive(Debug, Default)]
pub(super) struct Cache {
    /// Datatype ids by type (few distinct types per file: a linear search is fastest).
    pub(super) types: Vec<(H5Type, Hid)>,
    pub(super) scalar: Option<Hid>,
    /// Creation properties of contiguous datasets without a fill value.
    pub(super) plain_dcpl: Option<Hid>,
}
