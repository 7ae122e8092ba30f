//! The HDF5 writer behind [`super::MatWriter`]: sciio's native writer (fast for thousands of
//! small values), for new files and rewritten ones alike; libhdf5 only as the check of it
//! that `WriteOptions::libhdf5` asks for (new files, in the writer's tests).

use std::cell::RefCell;

use sciio_core::{Error, Result};
use sciio_hdf5::write::native::{NativeDataset, NativeFile, NativeGroup};
use sciio_hdf5::write::{DatasetSpec, DatasetWriter, FileWriter, GroupWriter};
use sciio_hdf5::AttrValue;

/// The open file.
#[derive(Debug)]
pub(super) enum Sink {
    Libhdf5(FileWriter),
    Native(NativeFile),
}

impl Sink {
    pub fn root(&self) -> Result<Group> {
        match self {
            Sink::Libhdf5(f) => f.root().map(Group::Libhdf5),
            Sink::Native(f) => Ok(Group::Native(f.root())),
        }
    }

    pub fn close(self) -> Result<()> {
        match self {
            Sink::Libhdf5(f) => f.close(),
            Sink::Native(f) => f.close(),
        }
    }
}

/// A group of either writer.
#[derive(Debug)]
pub(super) enum Group {
    Libhdf5(GroupWriter),
    Native(NativeGroup),
    /// A native group whose new datasets are staged: their attributes gathered, then
    /// written whole at once by [`Dataset::seal`] (the elements of a struct array written
    /// record by record, `write/records.rs`).
    Sealing(NativeGroup),
}

/// A dataset of either writer.
#[derive(Debug)]
pub(super) enum Dataset {
    Libhdf5(DatasetWriter),
    Native(NativeDataset),
    Staged(Box<Staged>),
}

/// A dataset of a [`Group::Sealing`] not written yet.
#[derive(Debug)]
pub(super) struct Staged {
    group: NativeGroup,
    name: String,
    spec: DatasetSpec,
    bytes: Vec<u8>,
    attrs: RefCell<Vec<(String, AttrValue)>>,
}

impl Group {
    pub fn path(&self) -> &str {
        match self {
            Group::Libhdf5(g) => g.path(),
            Group::Native(g) | Group::Sealing(g) => g.path(),
        }
    }

    pub fn contains(&self, name: &str) -> Result<bool> {
        match self {
            Group::Libhdf5(g) => g.contains(name),
            Group::Native(g) | Group::Sealing(g) => g.contains(name),
        }
    }

    pub fn unlink(&self, name: &str) -> Result<()> {
        match self {
            Group::Libhdf5(g) => g.unlink(name),
            Group::Native(g) | Group::Sealing(g) => g.unlink(name),
        }
    }

    pub fn create_group(&self, name: &str) -> Result<Group> {
        match self {
            Group::Libhdf5(g) => g.create_group(name).map(Group::Libhdf5),
            Group::Native(g) | Group::Sealing(g) => g.create_group(name).map(Group::Native),
        }
    }

    pub fn write_dataset(&self, name: &str, spec: &DatasetSpec, bytes: &[u8]) -> Result<Dataset> {
        match self {
            Group::Libhdf5(g) => g.write_dataset(name, spec, bytes).map(Dataset::Libhdf5),
            Group::Native(g) => g.write_dataset(name, spec, bytes).map(Dataset::Native),
            Group::Sealing(g) => Ok(Dataset::Staged(Box::new(Staged {
                group: g.clone(),
                name: name.to_string(),
                spec: spec.clone(),
                bytes: bytes.to_vec(),
                attrs: RefCell::new(Vec::new()),
            }))),
        }
    }

    /// A 1-D dataset of vlen sequences of `ty` (a `VarLen` type), one per item.
    pub fn write_vlen_dataset(
        &self,
        name: &str,
        ty: &sciio_hdf5::H5Type,
        items: Vec<Vec<u8>>,
    ) -> Result<Dataset> {
        match self {
            Group::Libhdf5(g) => {
                let spec = DatasetSpec::contiguous(ty.clone(), vec![items.len() as u64]);
                let d = g.create_dataset(name, &spec)?;
                d.write_vlen_rows(0, &items)?;
                Ok(Dataset::Libhdf5(d))
            }
            Group::Native(g) | Group::Sealing(g) => {
                g.write_vlen_dataset(name, ty, items).map(Dataset::Native)
            }
        }
    }

    pub fn add_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        match self {
            Group::Libhdf5(g) => g.add_attr(name, value),
            Group::Native(g) | Group::Sealing(g) => g.add_attr(name, value),
        }
    }

    pub fn object_ref(&self) -> Result<u64> {
        match self {
            Group::Libhdf5(g) => g.object_ref(),
            Group::Native(g) | Group::Sealing(g) => g.object_ref(),
        }
    }
}

impl Dataset {
    pub fn add_attr(&self, name: &str, value: &AttrValue) -> Result<()> {
        match self {
            Dataset::Libhdf5(d) => d.add_attr(name, value),
            Dataset::Native(d) => d.add_attr(name, value),
            Dataset::Staged(d) => {
                let mut attrs = d.attrs.borrow_mut();
                if attrs.iter().any(|(n, _)| n == name) {
                    return Err(Error::invalid_input(format!(
                        "attribute {name:?} exists already"
                    )));
                }
                attrs.push((name.to_string(), value.clone()));
                Ok(())
            }
        }
    }

    pub fn object_ref(&self) -> Result<u64> {
        match self {
            Dataset::Libhdf5(d) => d.object_ref(),
            Dataset::Native(d) => d.object_ref(),
            Dataset::Staged(d) => Err(Error::invalid_input(format!(
                "internal: a reference to {:?} before it is written",
                d.name
            ))),
        }
    }

    /// Writes a staged dataset with its attributes (the others are written already);
    /// returns its object reference.
    pub fn seal(self) -> Result<u64> {
        match self {
            Dataset::Staged(d) => {
                let attrs = d.attrs.into_inner();
                let attrs: Vec<(&str, &AttrValue)> =
                    attrs.iter().map(|(n, v)| (n.as_str(), v)).collect();
                d.group
                    .write_sealed_dataset(&d.name, &d.spec, &d.bytes, &attrs)
            }
            other => other.object_ref(),
        }
    }
}
