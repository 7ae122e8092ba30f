//! The in-memory model of a native file being written: every object as a small record
//! (groups with their links, datasets with their storage, attributes), shared by the writer
//! (`mod.rs`) and the layout done at close (`layout.rs`).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::ops::Bound;
use std::path::PathBuf;

use sciio_core::{Error, Result};

use super::messages::Entry;

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
    Group(Links),
    Dataset(Dataset),
}

/// A group's links: those kept by name until close, and the run of links written in name
/// order as they came (`NativeGroup::write_sealed_dataset`), which no longer costs memory.
#[derive(Debug, Default)]
pub(super) struct Links {
    /// Byte order is HDF5's (strcmp) name order. None lies within the run's names.
    pub(super) map: BTreeMap<String, Link>,
    pub(super) run: Option<Box<Run>>,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Link {
    /// An object still in memory (its index), laid out at close.
    Object(usize),
    /// A dataset already written: its header address.
    Written(u64),
}

/// Links given in strcmp order of their names, each to a dataset already written: symbol
/// table nodes and the level-0 B-tree nodes above them are written as they fill and the
/// names go to a spill file, so that a group of millions of links (`/#refs#`) keeps only 16
/// bytes per 256 links (the level-0 nodes, for the levels above, laid out at close).
#[derive(Debug)]
pub(super) struct Run {
    /// The first and last names of the run.
    pub(super) first: String,
    pub(super) last: String,
    /// The entries of the symbol table node being filled.
    pub(super) pending: Vec<Entry>,
    /// Symbol table nodes written whose level-0 B-tree node is not: address and local heap
    /// offset of their last name.
    pub(super) leaves: Vec<(u64, u64)>,
    /// The key before the first of `leaves`: the last name of the node before it (0, the
    /// empty name, for the run's first: set at close to the name kept before the run).
    pub(super) leaves_left: u64,
    /// Level-0 B-tree nodes written: address and left key.
    pub(super) tree: Vec<(u64, u64)>,
    /// The run's names as they go into the local heap (NUL-terminated, padded to 8), after
    /// its first 8 bytes (the empty name).
    pub(super) names: BufWriter<File>,
    pub(super) names_len: u64,
    /// Where the heap data went (address, size) once written at close.
    pub(super) heap: Option<(u64, u64)>,
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

impl Links {
    /// Whether `name` lies among the run's names (which are not kept).
    fn in_run(&self, name: &str) -> bool {
        self.run
            .as_ref()
            .is_some_and(|r| r.first.as_str() <= name && name <= r.last.as_str())
    }

    fn run_conflict(&self, name: &str) -> Error {
        let (first, last) = self
            .run
            .as_ref()
            .map(|r| (r.first.as_str(), r.last.as_str()))
            .unwrap_or_default();
        Error::invalid_input(format!(
            "{name:?} falls among the links written in name order ({first:?} to {last:?}), \
             which are not kept"
        ))
    }

    /// Whether `name` can be a new link kept by name.
    pub(super) fn check_new(&self, name: &str) -> Result<()> {
        if self.map.contains_key(name) {
            return Err(Error::invalid_input(format!("{name:?} exists already")));
        }
        if self.in_run(name) {
            return Err(self.run_conflict(name));
        }
        Ok(())
    }

    pub(super) fn insert(&mut self, name: &str, link: Link) -> Result<()> {
        self.check_new(name)?;
        self.map.insert(name.to_string(), link);
        Ok(())
    }

    /// Whether link `name` exists; an error for a name among the run's (not kept) other
    /// than its first and last.
    pub(super) fn contains(&self, name: &str) -> Result<bool> {
        if self.map.contains_key(name) {
            return Ok(true);
        }
        match &self.run {
            Some(r) if name == r.first || name == r.last => Ok(true),
            _ if self.in_run(name) => Err(self.run_conflict(name)),
            _ => Ok(false),
        }
    }

    pub(super) fn remove(&mut self, name: &str) -> Result<Option<Link>> {
        if self.in_run(name) {
            return Err(self.run_conflict(name));
        }
        Ok(self.map.remove(name))
    }

    /// Whether link `name` can extend the run: it sorts after the run's last name and no
    /// name kept lies between them (so the run stays one stretch of the name order).
    pub(super) fn extends_run(&self, name: &str) -> bool {
        match &self.run {
            None => !self.map.contains_key(name),
            Some(r) => {
                name > r.last.as_str()
                    && self
                        .map
                        .range::<str, _>((Bound::Excluded(r.last.as_str()), Bound::Included(name)))
                        .next()
                        .is_none()
            }
        }
    }

    /// Links kept by name that sort before the run (the others sort after it).
    pub(super) fn before_run(&self) -> usize {
        match &self.run {
            Some(r) => self
                .map
                .range::<str, _>((Bound::Unbounded, Bound::Excluded(r.first.as_str())))
                .count(),
            None => self.map.len(),
        }
    }
}
