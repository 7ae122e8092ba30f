//! PyTables files as a destination, through `sciio_pytables::write`: each array becomes the
//! node PyTables itself would make of it (a 1-d structured array a `Table`; any other array an
//! `Array`, or a `CArray` when compressed or large), members named `a/b` go into groups, and
//! HDF5 copied to HDF5 (a whole file, a group or a leaf) is repacked like `ptrepack` (every
//! node, title, flavor, user attribute and link, with new filters when `--compress` is given).
//!
//! Filters come from the one `--compress` syntax, spelled as PyTables names them:
//! `shuffle,zlib:5`, `blosc2:lz4:5`, `fletcher32,bzip2:9`, `bitshuffle,blosc2:zstd:3`, `none`
//! (`deflate` is accepted as HDF5's name for zlib). The writer creates the file next to the
//! destination under a temporary name and renames it into place when finished.

use std::collections::HashMap;
use std::path::Path;

use sciio_core::{Error, NdArray, Result};
use sciio_pytables::write::{start_ndarray, write_ndarray, Filters, NodeFill, PtGroup, PtWriter};

use crate::compress::CompressSpec;

/// The PyTables filters of a `--compress` spec (`None`: PyTables' default, uncompressed).
pub(crate) fn filters(spec: Option<&CompressSpec>) -> Result<Option<Filters>> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    if spec.is_uncompressed() {
        return Ok(Some(Filters::default()));
    }
    let spelled: Vec<String> = spec
        .filters()
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if f.name == "deflate" {
                f.name = "zlib".to_string();
            }
            f.to_string()
        })
        .collect();
    Filters::parse(&spelled.join(",")).map(Some).map_err(|e| {
        Error::unsupported(format!(
            "hdf5 cannot compress with '{spec}': {}",
            e.message()
        ))
    })
}

/// A PyTables file being written, with the groups made so far by path.
#[derive(Debug)]
pub(crate) struct H5Out {
    writer: PtWriter,
    groups: HashMap<String, PtGroup>,
    filters: Option<Filters>,
}

impl H5Out {
    pub(crate) fn create(dst: &Path, compress: Option<&CompressSpec>) -> Result<H5Out> {
        let filters = filters(compress)?;
        if dst.is_dir() {
            return Err(Error::invalid_input("the destination is a folder").with_file(dst));
        }
        let writer = PtWriter::create(dst).map_err(|e| e.with_file(dst))?;
        let mut groups = HashMap::new();
        groups.insert(String::new(), writer.root()?);
        Ok(H5Out {
            writer,
            groups,
            filters,
        })
    }

    /// Writes `array` at `name` (`x`, `g/x`: groups are made as needed); returns the PyTables
    /// class written.
    pub(crate) fn write(&mut self, name: &str, array: &NdArray) -> Result<&'static str> {
        let name = name.trim_matches('/');
        let (folder, leaf) = name.rsplit_once('/').unwrap_or(("", name));
        self.ensure_group(folder)?;
        let group = self
            .groups
            .get(folder)
            .ok_or_else(|| Error::invalid_input(format!("no group '/{folder}'")))?;
        write_ndarray(group, leaf, array, self.filters).map_err(|e| e.with_node(format!("/{name}")))
    }

    /// Starts the node [`H5Out::write`] would make of an array described by `info` at
    /// `name`, to be filled row block by row block ([`crate::stream`]).
    pub(crate) fn start(&mut self, name: &str, info: &crate::node::ArrayInfo) -> Result<NodeFill> {
        let name = name.trim_matches('/');
        let (folder, leaf) = name.rsplit_once('/').unwrap_or(("", name));
        self.ensure_group(folder)?;
        let group = self
            .groups
            .get(folder)
            .ok_or_else(|| Error::invalid_input(format!("no group '/{folder}'")))?;
        start_ndarray(group, leaf, &info.dtype, &info.shape, self.filters)
            .map_err(|e| e.with_node(format!("/{name}")))
    }

    fn ensure_group(&mut self, path: &str) -> Result<()> {
        if self.groups.contains_key(path) {
            return Ok(());
        }
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        self.ensure_group(parent)?;
        let made = match self.groups.get(parent) {
            Some(p) => p
                .create_group(name, "", None)
                .map_err(|e| e.with_node(format!("/{path}")))?,
            None => return Err(Error::invalid_input(format!("no group '/{parent}'"))),
        };
        self.groups.insert(path.to_string(), made);
        Ok(())
    }

    pub(crate) fn finish(self, dst: &Path) -> Result<()> {
        drop(self.groups);
        self.writer.finish().map_err(|e| e.with_file(dst))
    }
}

/// `.h5 → .h5` of a whole file: `ptrepack`'s copy, with `--compress` replacing every leaf's
/// filters (each keeps its own without it).
pub(crate) fn repack(src: &Path, dst: &Path, compress: Option<&CompressSpec>) -> Result<()> {
    let filters = filters(compress)?;
    sciio_pytables::write::repack(src, dst, filters).map_err(|e| e.with_file(dst))
}

/// `.h5:NODE → .h5[:DST]`: `ptrepack src:NODE dst:DST`'s copy of one group (its user
/// attributes, every node below it with titles, flavors and attributes, links as links) or
/// one leaf.
pub(crate) fn repack_node(
    src: &Path,
    src_node: &str,
    dst: &Path,
    dst_node: Option<&str>,
    compress: Option<&CompressSpec>,
) -> Result<()> {
    let filters = filters(compress)?;
    sciio_pytables::write::repack_node(src, src_node, dst, dst_node, filters)
        .map_err(|e| e.with_file(dst))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sciio_pytables::write::Complib;

    #[test]
    fn compress_specs_map_to_pytables_filters() {
        let f = |s: &str| filters(Some(&CompressSpec::parse(s).unwrap()));
        assert_eq!(filters(None).unwrap(), None);
        let zlib = f("shuffle,zlib:5").unwrap().unwrap();
        assert_eq!(
            (zlib.complib, zlib.complevel, zlib.shuffle),
            (Complib::Zlib, 5, true)
        );
        let bz = f("fletcher32,bzip2:9").unwrap().unwrap();
        assert_eq!((bz.complib, bz.fletcher32), (Complib::Bzip2, true));
        let blosc2 = f("blosc2:lz4:5").unwrap().unwrap();
        assert_eq!(blosc2.complib.name(), "blosc2:lz4");
        assert_eq!(f("deflate:4").unwrap().unwrap().complib, Complib::Zlib);
        assert_eq!(f("none").unwrap().unwrap().complevel, 0);
        assert!(f("zstd:3").is_err());
    }
}
