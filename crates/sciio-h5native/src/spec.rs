//! What a dataset to create is: type, shape, chunking, filters, fill value — the same for
//! libhdf5's writer (`sciio_hdf5::write`) and the native one ([`crate::native`]).

use sciio_codecs::FilterStage;

use crate::types::H5Type;

/// How to create a dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetSpec {
    /// Element type.
    pub ty: H5Type,
    /// Initial shape (empty: scalar).
    pub shape: Vec<u64>,
    /// Maximum shape (`None` entries: unlimited); `None`: same as `shape`.
    pub max_shape: Option<Vec<Option<u64>>>,
    /// Chunk shape (`None`: contiguous).
    pub chunk: Option<Vec<u64>>,
    /// Filter pipeline, in order (chunked only).
    pub filters: Vec<FilterStage>,
    /// Fill value, one element in the file layout (`None`: libhdf5's zeros).
    pub fill: Option<Vec<u8>>,
    /// Chunks allocated when the dataset is created (or extended) and never filled: their
    /// addresses are known before any data is written ([`DatasetSpec::allocate_early`]).
    pub early: bool,
}

impl DatasetSpec {
    /// A contiguous dataset of `shape`.
    pub fn contiguous(ty: H5Type, shape: Vec<u64>) -> DatasetSpec {
        DatasetSpec {
            ty,
            shape,
            max_shape: None,
            chunk: None,
            filters: Vec::new(),
            fill: None,
            early: false,
        }
    }

    /// A chunked dataset of `shape`, growable up to `max_shape` (`None`: unlimited).
    pub fn chunked(
        ty: H5Type,
        shape: Vec<u64>,
        max_shape: Vec<Option<u64>>,
        chunk: Vec<u64>,
    ) -> DatasetSpec {
        DatasetSpec {
            ty,
            shape,
            max_shape: Some(max_shape),
            chunk: Some(chunk),
            filters: Vec::new(),
            fill: None,
            early: false,
        }
    }

    /// Sets the filter pipeline.
    pub fn filters(mut self, filters: Vec<FilterStage>) -> DatasetSpec {
        self.filters = filters;
        self
    }

    /// Sets the fill value (one element, file layout).
    pub fn fill(mut self, fill: Vec<u8>) -> DatasetSpec {
        self.fill = Some(fill);
        self
    }

    /// Allocates the storage of every chunk when the dataset is created or extended, and
    /// never writes fill values into it (`H5D_ALLOC_TIME_EARLY`, `H5D_FILL_TIME_NEVER`): the
    /// chunks' file addresses are known before any data is written, so uncompressed data can
    /// be copied into them file to file (sciio-hdf5's `ChunkAppender::copy_from`). Readers see
    /// no difference; only the fill-value message records the two settings.
    pub fn allocate_early(mut self) -> DatasetSpec {
        self.early = true;
        self
    }
}
