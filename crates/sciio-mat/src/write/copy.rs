//! Adding to an existing v7.3 file ([`super::MatWriter::open`]) rewrites it through the one
//! writer, sciio's native HDF5 writer: the new variables are written into a new file beside
//! the old one, then every other top-level object of the old file (variables, `#subsystem#`)
//! is copied into it as it is — groups, datasets (their chunking and shuffle/deflate/
//! fletcher32 filters kept), attributes — following object references: what a copied
//! reference points to is copied too, into `/#refs#` under a fresh name (or to the top level
//! when it is a top-level object), so `#refs#` holds only what is still referenced. The old
//! MAT header is kept and the new file renamed over the old one.

use std::collections::{HashMap, HashSet};

use sciio_core::{Error, Result};
use sciio_hdf5::write::{DatasetSpec, FilterStage};
use sciio_hdf5::{AttrValue, Dataset, File, H5Type, Layout, LinkKind, Object, RawData};

use super::sink::Group;
use super::MatWriter;

/// What is copied so far.
#[derive(Debug, Default)]
pub(super) struct Copied {
    /// Old object address → reference to its copy.
    done: HashMap<u64, u64>,
    /// Datasets being copied (a reference back to one is a circle).
    busy: HashSet<u64>,
    /// Old top-level objects still to copy, by address: their names.
    top: HashMap<u64, String>,
    /// The old `/#refs#/a` (MATLAB's canonical empty), mapped to the new one.
    canonical_empty: Option<u64>,
}

impl MatWriter {
    /// Copies every top-level object of the old file at `self.path` into the file being
    /// written, except `/#refs#` (rebuilt from what is referenced) and the variables in
    /// `written` (replaced).
    pub(super) fn copy_old(&mut self, written: &HashSet<String>) -> Result<()> {
        let src = File::open(&self.path)?;
        let root = self.root()?;
        let links = src.root()?.links()?;
        let mut copied = Copied::default();
        let mut order = Vec::new();
        for link in links {
            if link.name == "#refs#" {
                if let Some(addr) = link.addr {
                    copied.canonical_empty = src
                        .group_at(addr, "/#refs#")?
                        .links()?
                        .into_iter()
                        .find(|l| l.name == "a")
                        .and_then(|l| l.addr);
                }
                continue;
            }
            if written.contains(&link.name) {
                continue;
            }
            let addr =
                match (&link.kind, link.addr) {
                    (LinkKind::Hard, Some(addr)) => addr,
                    _ => return Err(Error::unsupported(
                        "a link that is not a hard link cannot be copied into the rewritten file",
                    )
                    .with_node(format!("/{}", link.name))),
                };
            copied.top.insert(addr, link.name.clone());
            order.push((addr, link.name));
        }
        for (addr, name) in order {
            // Copied already when a reference reached it first.
            if copied.done.contains_key(&addr) {
                continue;
            }
            self.copy_object(&src, &mut copied, addr, &root, &name, &format!("/{name}"))?;
        }
        Ok(())
    }

    /// Copies the old object at `addr` (`path` in the old file) as `name` of `parent`, and
    /// returns a reference to the copy.
    fn copy_object(
        &mut self,
        src: &File,
        copied: &mut Copied,
        addr: u64,
        parent: &Group,
        name: &str,
        path: &str,
    ) -> Result<u64> {
        copied.top.remove(&addr);
        match src.object_at(addr, path)? {
            Object::Group(g) => {
                let new = parent.create_group(name)?;
                let reference = new.object_ref()?;
                copied.done.insert(addr, reference);
                for attr in g.attrs()? {
                    let value = self.copy_attr_value(src, copied, attr.value, path)?;
                    new.add_attr(&attr.name, &value)?;
                }
                for link in g.links()? {
                    let child = format!("{}/{}", path.trim_end_matches('/'), link.name);
                    let child_addr = match (&link.kind, link.addr) {
                        (LinkKind::Hard, Some(addr)) => addr,
                        _ => {
                            return Err(Error::unsupported(
                                "a link that is not a hard link cannot be copied into the \
                                 rewritten file",
                            )
                            .with_node(child))
                        }
                    };
                    if copied.busy.contains(&child_addr) || copied.done.contains_key(&child_addr) {
                        return Err(Error::unsupported(
                            "an object linked twice cannot be copied into the rewritten file",
                        )
                        .with_node(child));
                    }
                    self.copy_object(src, copied, child_addr, &new, &link.name, &child)?;
                }
                Ok(reference)
            }
            Object::Dataset(d) => {
                if !copied.busy.insert(addr) {
                    return Err(Error::format("references lead back to this dataset")
                        .with_node(path.to_string()));
                }
                let new = self.copy_dataset(src, copied, &d, parent, name, path)?;
                copied.busy.remove(&addr);
                let reference = new.object_ref()?;
                copied.done.insert(addr, reference);
                Ok(reference)
            }
            Object::Other(kind) => Err(Error::unsupported(format!(
                "a {kind:?} object cannot be copied into the rewritten file"
            ))
            .with_node(path.to_string())),
        }
    }

    fn copy_dataset(
        &mut self,
        src: &File,
        copied: &mut Copied,
        d: &Dataset,
        parent: &Group,
        name: &str,
        path: &str,
    ) -> Result<super::sink::Dataset> {
        let ty = d.dtype()?;
        let new = if ty.has_vlen() {
            let data = d.read_vlen(None)?;
            if data.shape.len() != 1 || ty.has_reference() {
                return Err(Error::unsupported(
                    "only 1-D datasets of variable-length sequences (MATLAB's field names) can \
                     be copied into the rewritten file",
                )
                .with_node(path.to_string()));
            }
            parent.write_vlen_dataset(name, &ty, data.items)?
        } else {
            let raw = d.read()?;
            let raw = self.remap(src, copied, raw, path)?;
            parent.write_dataset(name, &spec_of(d, raw.ty.clone(), &raw.shape)?, &raw.bytes)?
        };
        for attr in d.attrs()? {
            let value = self.copy_attr_value(src, copied, attr.value, path)?;
            new.add_attr(&attr.name, &value)?;
        }
        Ok(new)
    }

    fn copy_attr_value(
        &mut self,
        src: &File,
        copied: &mut Copied,
        value: AttrValue,
        path: &str,
    ) -> Result<AttrValue> {
        match value {
            AttrValue::Raw(raw) => Ok(AttrValue::Raw(self.remap(src, copied, raw, path)?)),
            AttrValue::Elements(_) => Err(Error::unsupported(
                "an attribute of records with variable-length members cannot be copied into the \
                 rewritten file",
            )
            .with_node(path.to_string())),
            other => Ok(other),
        }
    }

    /// `raw` with every object reference pointing at the copy of its target (copied now when
    /// it is not yet).
    fn remap(
        &mut self,
        src: &File,
        copied: &mut Copied,
        mut raw: RawData,
        path: &str,
    ) -> Result<RawData> {
        if !raw.ty.has_reference() {
            return Ok(raw);
        }
        if raw.ty != H5Type::ObjectRef {
            return Err(Error::unsupported(
                "references inside records or region references cannot be copied into the \
                 rewritten file",
            )
            .with_node(path.to_string()));
        }
        for slot in raw.bytes.chunks_exact_mut(8) {
            let mut old = [0u8; 8];
            old.copy_from_slice(slot);
            let new = self.copy_target(src, copied, u64::from_le_bytes(old))?;
            slot.copy_from_slice(&new.to_le_bytes());
        }
        Ok(raw)
    }

    /// The reference to the copy of the old object at `addr`, copying it first: to the top
    /// level under its name when it is a top-level object, else into `/#refs#`.
    fn copy_target(&mut self, src: &File, copied: &mut Copied, addr: u64) -> Result<u64> {
        if addr == 0 {
            // A null reference stays null.
            return Ok(0);
        }
        if let Some(&done) = copied.done.get(&addr) {
            return Ok(done);
        }
        if copied.canonical_empty == Some(addr) {
            self.refs_group()?;
            if let Some(empty) = self.canonical_empty {
                copied.done.insert(addr, empty);
                return Ok(empty);
            }
        }
        if let Some(name) = copied.top.get(&addr).cloned() {
            let root = self.root()?;
            return self.copy_object(src, copied, addr, &root, &name, &format!("/{name}"));
        }
        let refs = self.refs_group()?;
        let name = self.fresh_ref_name(&refs)?;
        let path = format!("/#refs#/{name}");
        self.copy_object(src, copied, addr, &refs, &name, &path)
    }
}

/// The layout of the copy of `d`: its chunks and filters when the native writer has them
/// (shuffle, deflate, fletcher32), else contiguous.
fn spec_of(d: &Dataset, ty: H5Type, shape: &[usize]) -> Result<DatasetSpec> {
    let shape: Vec<u64> = shape.iter().map(|&n| n as u64).collect();
    let (layout, chunk, filters) = d.storage()?;
    use sciio_hdf5::filters::id;
    let known = filters
        .iter()
        .all(|f| matches!(f.id, id::SHUFFLE | id::DEFLATE | id::FLETCHER32));
    Ok(match (layout, chunk) {
        (Layout::Chunked, Some(chunk)) if known && !shape.is_empty() => {
            let max = shape.iter().map(|&n| Some(n)).collect();
            DatasetSpec::chunked(ty, shape, max, chunk).filters(
                filters
                    .into_iter()
                    .map(|f| FilterStage {
                        id: f.id,
                        cd_values: f.cd_values,
                        optional: f.flags & 1 != 0,
                    })
                    .collect(),
            )
        }
        _ => DatasetSpec::contiguous(ty, shape),
    })
}
