//! The in-memory model of a native file being written: every object as a small record
//! (groups with their links, datasets with their storage, attributes), shared by the writer
//! (`mod.rs`) and the layout done at close (`layout.rs`).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use sciio_codecs::FilterStage;

use crate::types::H5Type;

/// Object references handed out before addresses exist: the object's index with this tag in
/// the high bits, replaced by its header address when the file is laid out.
pub(super) const REF_TAG: u64 = 0x5C10_0000_0000_0000;

#[derive(Debug)]
pub(super) struct State {
    pub(super) out: Option<BufWriter<File>>,
    pub(super) path: PathBuf,
    /// Absolute offset of the superblock (the user block's size).
    pub(super) base: u64,
    /// Next free address, relative to `base`.
    pub(super) eoa: u64,
    pub(super) objects: Vec<Object>,
    /// Seconds since the epoch recorded in modification-time messages.
    pub(super) mtime: u32,
}

#[derive(Debug)]
pub(super) struct Object {
    pub(super) kind: Kind,
    pub(super) attrs: Vec<Attr>,
}

#[derive(Debug)]
pub(super) enum Kind {
    /// Links by name; byte order is HDF5's (strcmp) name order.
    Group(BTreeMap<String, usize>),
    Dataset(Dataset),
}

#[derive(Debug)]
pub(super) struct Dataset {
    pub(super) ty: H5Type,
    pub(super) dims: Vec<u64>,
    pub(super) storage: Storage,
}

#[derive(Debug)]
pub(super) enum Storage {
    Contiguous {
        addr: u64,
        size: u64,
    },
    /// Object references, written with the metadata once the objects have addresses.
    References(Vec<u64>),
    /// Variable-length items (a 1-D dataset), stored in global heap collections and written
    /// with the metadata (16 bytes per element).
    Vlen(Vec<Vec<u8>>),
    Chunked {
        chunk: Vec<u64>,
        filters: Vec<FilterStage>,
        chunks: Vec<ChunkRecord>,
    },
}

#[derive(Debug)]
pub(super) struct ChunkRecord {
    pub(super) offset: Vec<u64>,
    pub(super) addr: u64,
    pub(super) size: u32,
}

#[derive(Debug)]
pub(super) struct Attr {
    pub(super) name: String,
    pub(super) ty: H5Type,
    pub(super) dims: Vec<u64>,
    pub(super) data: AttrData,
}

#[derive(Debug)]
pub(super) enum AttrData {
    Fixed(Vec<u8>),
    /// One item per element, stored in global heap collections.
    Vlen(Vec<Vec<u8>>),
    /// Object references (as `object_ref` hands them out), resolved at close.
    References(Vec<u64>),
}
