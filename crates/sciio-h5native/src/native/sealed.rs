//! Objects that leave memory as soon as they are made, for files of millions of small
//! datasets (the elements of a MAT v7.3 struct array of records):
//!
//! - [`NativeGroup::write_sealed_dataset`]: a dataset whose attributes are all known at
//!   creation is written whole at once, header included, so its address (its object
//!   reference) is known at once; its group keeps no record of it. Given in strcmp order of
//!   their names, such links make a run whose symbol table nodes are written as they fill
//!   and whose names go to a spill file copied into the group's local heap at close: 16
//!   bytes of memory per node of eight links instead of an object and a map entry each.
//! - [`NativeGroup::reserve_dataset`] and [`NativeDataset::write_at`]: a contiguous dataset
//!   of known size whose data is written in place later, slab by slab (a struct field's
//!   references as its elements get addresses).

use std::io::{BufWriter, Read, Seek, SeekFrom, Write};

use sciio_core::{Error, Result};

use super::layout::{self, GROUP_LEAF_K, GROUP_NODE_K};
use super::messages::{self, heap_name_size, Entry, UNDEF};
use super::model::{AttrData, Dataset, Kind, Link, Object, Run, State, Storage, REF_TAG};
use super::{attr_of, check_layout, check_link_name, check_spec, locked};
use super::{NativeDataset, NativeGroup};
use crate::spec::DatasetSpec;
use crate::types::H5Type;
use crate::values::AttrValue;

/// Zeros written at a time when a dataset's place is reserved.
const ZEROS: usize = 1 << 20;

impl State {
    /// See [`NativeGroup::write_sealed_dataset`]; returns the header's address.
    fn write_sealed(
        &mut self,
        parent: usize,
        name: &str,
        spec: &DatasetSpec,
        bytes: &[u8],
        attrs: &[(&str, &AttrValue)],
    ) -> Result<u64> {
        check_link_name(name)?;
        check_spec(spec, bytes)?;
        messages::datatype(&spec.ty)?;
        if matches!(spec.ty, H5Type::ObjectRef) {
            return Err(Error::unsupported("object references in a sealed dataset"));
        }
        let mut record = Vec::with_capacity(attrs.len());
        for (n, v) in attrs {
            let attr = attr_of(n, v)?;
            if !matches!(attr.data, AttrData::Fixed(_)) {
                return Err(Error::unsupported(format!(
                    "attribute {n:?}: vlen and reference attributes of a sealed dataset"
                )));
            }
            if record.iter().any(|a: &super::model::Attr| a.name == *n) {
                return Err(Error::invalid_input(format!("attribute {n:?} given twice")));
            }
            record.push(attr);
        }
        // Where the link goes is settled before anything is written.
        let links = self.group_links(parent)?;
        let in_run = links.extends_run(name);
        if !in_run {
            links.check_new(name)?;
        }
        let storage = self.store(spec, bytes)?;
        let obj = Object {
            kind: Kind::Dataset(Dataset {
                ty: spec.ty.clone(),
                dims: spec.shape.clone(),
                storage,
            }),
            attrs: record,
        };
        let (meta, header) = layout::sealed(&obj, self.mtime, self.eoa)?;
        self.append(&meta)?;
        if in_run {
            self.run_link(parent, name, header)?;
        } else {
            self.group_links(parent)?
                .insert(name, Link::Written(header))?;
        }
        Ok(header)
    }

    /// Writes a dataset's data now (contiguous or chunked): its storage record.
    pub(super) fn store(&mut self, spec: &DatasetSpec, bytes: &[u8]) -> Result<Storage> {
        Ok(match &spec.chunk {
            None => {
                let addr = if bytes.is_empty() {
                    UNDEF
                } else {
                    self.append(bytes)?
                };
                Storage::Contiguous {
                    addr,
                    size: bytes.len() as u64,
                }
            }
            Some(chunk) => Storage::Chunked {
                chunk: chunk.clone(),
                filters: spec.filters.clone(),
                chunks: self.write_chunks(spec, chunk, bytes)?,
            },
        })
    }

    /// Adds link `name` to `header` at the end of `parent`'s run (started if there is none),
    /// writing the run's symbol table node when it is full.
    fn run_link(&mut self, parent: usize, name: &str, header: u64) -> Result<()> {
        let dir = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        let links = self.group_links(parent)?;
        if links.run.is_none() {
            let spill = tempfile::tempfile_in(&dir)
                .map_err(|e| Error::io("cannot create a spill file of link names", e))?;
            links.run = Some(Box::new(Run {
                first: name.to_string(),
                last: String::new(),
                pending: Vec::with_capacity(2 * GROUP_LEAF_K),
                leaves: Vec::with_capacity(2 * GROUP_NODE_K),
                leaves_left: 0,
                tree: Vec::new(),
                names: BufWriter::with_capacity(1 << 16, spill),
                names_len: 0,
                heap: None,
            }));
        }
        let Some(run) = links.run.as_deref_mut() else {
            return Err(Error::invalid_input("internal: no run of links"));
        };
        let size = heap_name_size(name);
        let mut padded = name.as_bytes().to_vec();
        padded.resize(size as usize, 0);
        run.names
            .write_all(&padded)
            .map_err(|e| Error::io("cannot write the spill file of link names", e))?;
        run.pending.push(Entry {
            name_offset: 8 + run.names_len,
            header,
            group: None,
        });
        run.names_len += size;
        run.last = name.to_string();
        if run.pending.len() == 2 * GROUP_LEAF_K {
            self.write_run_node(parent)?;
        }
        Ok(())
    }

    /// Writes the run's pending symbol table node (if any entry is pending).
    fn write_run_node(&mut self, parent: usize) -> Result<()> {
        let Some(run) = self.group_links(parent)?.run.as_deref_mut() else {
            return Ok(());
        };
        let entries = std::mem::take(&mut run.pending);
        let Some(last) = entries.last().map(|e| e.name_offset) else {
            return Ok(());
        };
        let mut node = Vec::with_capacity(messages::snod_size(GROUP_LEAF_K) as usize);
        messages::snod(&entries, GROUP_LEAF_K, &mut node);
        let addr = self.append(&node)?;
        let full = match self.group_links(parent)?.run.as_deref_mut() {
            Some(run) => {
                run.leaves.push((addr, last));
                run.pending = entries;
                run.pending.clear();
                run.leaves.len() == 2 * GROUP_NODE_K
            }
            None => false,
        };
        if full {
            self.write_run_tree_node(parent)?;
        }
        Ok(())
    }

    /// Writes the level-0 B-tree node over the run's pending symbol table nodes (if any),
    /// linking the node before to it.
    fn write_run_tree_node(&mut self, parent: usize) -> Result<()> {
        let Some(run) = self.group_links(parent)?.run.as_deref_mut() else {
            return Ok(());
        };
        let leaves = std::mem::take(&mut run.leaves);
        let Some(&(_, last)) = leaves.last() else {
            return Ok(());
        };
        let left = run.leaves_left;
        let before = run.tree.last().map(|t| t.0);
        let node = layout::group_tree_node(0, before.unwrap_or(UNDEF), UNDEF, left, &leaves);
        let addr = self.append(&node)?;
        if let Some(before) = before {
            self.patch(before + layout::RIGHT_SIBLING, addr)?;
        }
        if let Some(run) = self.group_links(parent)?.run.as_deref_mut() {
            run.tree.push((addr, left));
            run.leaves_left = last;
            run.leaves = leaves;
            run.leaves.clear();
        }
        Ok(())
    }

    /// Writes `value` at `addr` (little-endian), over what was written there.
    fn patch(&mut self, addr: u64, value: u64) -> Result<()> {
        self.write_in_place(addr, &value.to_le_bytes())
    }

    /// Writes `bytes` at `addr`, over what was written there (the buffer flushed first, the
    /// end of the file the place of the next append again).
    fn write_in_place(&mut self, addr: u64, bytes: &[u8]) -> Result<()> {
        let (base, eoa, path) = (self.base, self.eoa, self.path.clone());
        let io = |e| Error::io("cannot write the file", e).with_file(&path);
        let out = self.out()?;
        out.flush().map_err(io)?;
        let file = out.get_mut();
        file.seek(SeekFrom::Start(base + addr)).map_err(io)?;
        file.write_all(bytes).map_err(io)?;
        file.seek(SeekFrom::Start(base + eoa)).map_err(io)?;
        Ok(())
    }

    /// At close, for each group with a run: its last node, then its local heap's data (the
    /// empty name, the run's names copied from the spill file, the names kept), whose
    /// place `layout::lay_out` then uses.
    pub(super) fn write_run_heaps(&mut self) -> Result<()> {
        for id in 0..self.objects.len() {
            let has_run = matches!(&self.objects[id].kind, Kind::Group(l) if l.run.is_some());
            if !has_run {
                continue;
            }
            self.write_run_node(id)?;
            self.write_run_tree_node(id)?;
            let Kind::Group(links) = &mut self.objects[id].kind else {
                continue;
            };
            let mut kept = Vec::new();
            for name in links.map.keys() {
                let at = kept.len();
                kept.extend_from_slice(name.as_bytes());
                kept.resize(at + heap_name_size(name) as usize, 0);
            }
            let Some(mut run) = links.run.take() else {
                continue;
            };
            let placed = self.copy_heap(&mut run, &kept);
            let size = 8 + run.names_len + kept.len() as u64;
            if let Kind::Group(links) = &mut self.objects[id].kind {
                run.heap = placed.as_ref().ok().map(|&addr| (addr, size));
                links.run = Some(run);
            }
            placed?;
        }
        Ok(())
    }

    /// Appends a run group's heap data; returns its address.
    fn copy_heap(&mut self, run: &mut Run, kept: &[u8]) -> Result<u64> {
        let spill_error = |e| Error::io("cannot read the spill file of link names", e);
        let addr = self.append(&[0u8; 8])?;
        run.names.flush().map_err(spill_error)?;
        let spill = run.names.get_mut();
        spill.seek(SeekFrom::Start(0)).map_err(spill_error)?;
        let mut buf = vec![0u8; ZEROS];
        let mut left = run.names_len;
        while left > 0 {
            let n = (left as usize).min(buf.len());
            spill.read_exact(&mut buf[..n]).map_err(spill_error)?;
            self.append(&buf[..n])?;
            left -= n as u64;
        }
        self.append(kept)?;
        Ok(addr)
    }

    /// See [`NativeGroup::reserve_dataset`].
    fn reserve(&mut self, parent: usize, name: &str, spec: &DatasetSpec) -> Result<usize> {
        check_link_name(name)?;
        check_layout(spec)?;
        messages::datatype(&spec.ty)?;
        if spec.chunk.is_some() || spec.ty.has_vlen() {
            return Err(Error::unsupported(
                "reserving a chunked or variable-length dataset (contiguous data only)",
            ));
        }
        let size = spec
            .shape
            .iter()
            .try_fold(spec.ty.size() as u64, |a, &d| a.checked_mul(d))
            .ok_or_else(|| Error::invalid_input("the dataset's size overflows"))?;
        self.group_links(parent)?.check_new(name)?;
        let addr = if size == 0 { UNDEF } else { self.eoa };
        let zeros = vec![0u8; (size as usize).min(ZEROS)];
        let mut left = size;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            self.append(&zeros[..n])?;
            left -= n as u64;
        }
        // Its data is written in place later: none of it may stay in the buffer (a later
        // flush would write the zeros over it).
        let path = self.path.clone();
        self.out()?
            .flush()
            .map_err(|e| Error::io("cannot write the file", e).with_file(&path))?;
        let kind = Kind::Dataset(Dataset {
            ty: spec.ty.clone(),
            dims: spec.shape.clone(),
            storage: Storage::Contiguous { addr, size },
        });
        self.add_object(parent, name, kind)
    }

    /// See [`NativeDataset::write_at`].
    pub(super) fn write_at(&mut self, id: usize, first: u64, bytes: &[u8]) -> Result<()> {
        let (addr, size, elem, refs) = match self.objects.get(id).map(|o| &o.kind) {
            Some(Kind::Dataset(Dataset {
                ty,
                storage: Storage::Contiguous { addr, size },
                ..
            })) => (
                *addr,
                *size,
                ty.size().max(1),
                matches!(ty, H5Type::ObjectRef),
            ),
            _ => {
                return Err(Error::invalid_input(
                    "data written in place into a dataset that is not contiguous",
                ))
            }
        };
        let from = first.checked_mul(elem as u64);
        let end = from.and_then(|f| f.checked_add(bytes.len() as u64));
        let (Some(from), Some(end)) = (from, end) else {
            return Err(Error::invalid_input("element index overflows"));
        };
        if end > size || !bytes.len().is_multiple_of(elem) {
            return Err(Error::invalid_input(format!(
                "{} bytes at element {first} do not fit the dataset's {size} bytes of \
                 {elem}-byte elements",
                bytes.len()
            )));
        }
        if refs {
            self.check_written_refs(bytes)?;
        }
        if bytes.is_empty() {
            return Ok(());
        }
        self.write_in_place(addr + from, bytes)
    }

    /// References written in place must be addresses of objects already written.
    fn check_written_refs(&self, bytes: &[u8]) -> Result<()> {
        for c in bytes.chunks_exact(8) {
            let r = u64::from_le_bytes(c.try_into().unwrap_or_default());
            if r & REF_TAG == REF_TAG || r >= self.eoa {
                return Err(Error::invalid_input(format!(
                    "object reference {r:#x} written in place is not that of an object \
                     already written (sealed)"
                )));
            }
        }
        Ok(())
    }
}

impl NativeGroup {
    /// Creates dataset `name` holding `bytes` (as [`NativeGroup::write_dataset`]) with
    /// attributes `attrs` (fixed-size values), writing all of it, header included, now; the
    /// dataset leaves memory and cannot be changed. Returns its object reference (its header
    /// address). Sealed datasets given in strcmp (byte) order of their names, none kept name
    /// lying between two of them, cost the group no memory per link; the others cost one
    /// map entry. Names among such a run cannot then be added, looked up or removed.
    pub fn write_sealed_dataset(
        &self,
        name: &str,
        spec: &DatasetSpec,
        bytes: &[u8],
        attrs: &[(&str, &AttrValue)],
    ) -> Result<u64> {
        let path = self.child_path(name);
        locked(&self.state)?
            .write_sealed(self.id, name, spec, bytes, attrs)
            .map_err(|e| self.locate(e, &path))
    }

    /// Creates contiguous dataset `name` of `spec`, its data zeros until written in place
    /// with [`NativeDataset::write_at`] (in any order, any number of times).
    pub fn reserve_dataset(&self, name: &str, spec: &DatasetSpec) -> Result<NativeDataset> {
        let path = self.child_path(name);
        let id = locked(&self.state)?
            .reserve(self.id, name, spec)
            .map_err(|e| self.locate(e, &path))?;
        Ok(NativeDataset {
            state: self.state.clone(),
            id,
            path,
        })
    }
}
