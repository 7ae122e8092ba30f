//! The HDF5 filters PyTables files use that libhdf5 itself lacks, registered with libhdf5 once,
//! when sciio first touches libhdf5 (`register.rs`: encoders too where sciio has them). The
//! codecs themselves (and the pure-Rust pipeline decoder the parallel direct-chunk reader uses,
//! [`crate::Dataset::read_parallel`]) live in `sciio-codecs`, usable without libhdf5; they are
//! re-exported here.

mod register;

pub(crate) use register::ensure_registered;
pub use sciio_codecs::{decode, decodes_in_rust, filter_name, id, unshuffle, MAX_CHUNK_BYTES};
