//! Datasets written piece by piece ([`NativeGroup::write_dataset_with`]): the caller fills
//! runs of elements in the dataset's C order on demand, so the data is never held whole.
//! Chunked datasets must have chunks that are each one run of that order (slabs along one
//! dimension, whole in the dimensions after it and 1 in those before: what MAT v7.3 writes),
//! so that a piece is a run of whole chunks; they are encoded on all cores a piece at a time
//! and appended in the grid's order, making the same file as [`NativeGroup::write_dataset`]
//! given the whole data.

use rayon::prelude::*;
use sciio_codecs::encode_chunk;
use sciio_core::{Error, Result};

use super::layout::ChunkGrid;
use super::model::{ChunkRecord, Dataset, Kind, Storage};
use super::{check_layout, locked, messages, NativeDataset, NativeGroup};
use crate::spec::DatasetSpec;
use crate::types::H5Type;

/// Bytes of data filled and encoded at a time (at least one chunk).
/// A piece and the source's blocks behind it (about three pieces in all) are most of a
/// streamed conversion's memory: 16 MiB keeps it flat from arrays of 16 MiB up (32 MiB
/// made a 1 GB data frame's conversion into MAT take 55 MiB more than a 128 MiB one's) and
/// costs no measurable time.
pub(super) const PIECE_BYTES: usize = 16 << 20;

/// Fills `buf` with the elements from `first` on (C order, as stored), `buf.len()` being a
/// whole number of elements.
pub type Fill<'a> = dyn FnMut(u64, &mut [u8]) -> Result<()> + 'a;

impl NativeGroup {
    /// Creates dataset `name` of `spec` (contiguous, or chunked in runs of C order) and
    /// writes its data now, piece by piece, asking `fill` for each run of elements in order:
    /// the same file as [`NativeGroup::write_dataset`] with the whole data, in bounded memory.
    pub fn write_dataset_with(
        &self,
        name: &str,
        spec: &DatasetSpec,
        fill: &mut Fill<'_>,
    ) -> Result<NativeDataset> {
        let path = self.child_path(name);
        let id = self
            .write_pieces(name, spec, fill)
            .map_err(|e| self.locate(e, &path))?;
        Ok(NativeDataset {
            state: self.state.clone(),
            id,
            path,
        })
    }

    fn write_pieces(&self, name: &str, spec: &DatasetSpec, fill: &mut Fill<'_>) -> Result<usize> {
        check_layout(spec)?;
        messages::datatype(&spec.ty)?;
        if spec.ty.has_vlen() || matches!(spec.ty, H5Type::ObjectRef) {
            return Err(Error::unsupported(
                "variable-length or reference data written piece by piece",
            ));
        }
        let elems = spec
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .ok_or_else(|| Error::invalid_input("the dataset's size overflows"))?;
        let storage = match &spec.chunk {
            None => self.contiguous(spec.ty.size(), elems, fill)?,
            Some(chunk) => Storage::Chunked {
                chunk: chunk.clone(),
                filters: spec.filters.clone(),
                chunks: self.chunks(spec, chunk, fill)?,
            },
        };
        let kind = Kind::Dataset(Dataset {
            ty: spec.ty.clone(),
            dims: spec.shape.clone(),
            storage,
        });
        locked(&self.state)?.add_object(self.id, name, kind)
    }

    /// Contiguous data appended piece by piece.
    fn contiguous(&self, elem: usize, elems: u64, fill: &mut Fill<'_>) -> Result<Storage> {
        let elem = elem.max(1);
        let per_piece = (PIECE_BYTES / elem).max(1) as u64;
        let mut buf = Vec::new();
        let mut addr = messages::UNDEF;
        let mut first = 0u64;
        while first < elems {
            let n = per_piece.min(elems - first);
            buf.clear();
            buf.resize(n as usize * elem, 0);
            fill(first, &mut buf)?;
            let at = locked(&self.state)?.append(&buf)?;
            if first == 0 {
                addr = at;
            }
            first += n;
        }
        Ok(Storage::Contiguous {
            addr,
            size: elems * elem as u64,
        })
    }

    /// Chunks filled a piece (a run of whole chunks) at a time, encoded on all cores and
    /// appended in the grid's order.
    fn chunks(
        &self,
        spec: &DatasetSpec,
        chunk: &[u64],
        fill: &mut Fill<'_>,
    ) -> Result<Vec<ChunkRecord>> {
        let elem = spec.ty.size();
        let grid = ChunkGrid::new(&spec.shape, chunk, elem)?;
        let runs = Runs::new(&spec.shape, chunk)?;
        let chunk_bytes = chunk.iter().product::<u64>() as usize * elem;
        let per_piece = (PIECE_BYTES / chunk_bytes.max(1)).max(1);
        let mut records = Vec::with_capacity(grid.count());
        let mut buf = Vec::new();
        let mut next = 0;
        while next < grid.count() {
            let end = (next + per_piece).min(grid.count());
            let spans: Vec<(Vec<u64>, u64, u64)> = (next..end)
                .map(|i| {
                    let offset = grid.offset(i);
                    let (start, len) = runs.span(&offset);
                    (offset, start, len)
                })
                .collect();
            let first = spans.first().map_or(0, |s| s.1);
            let total: u64 = spans.iter().map(|s| s.2).sum();
            buf.clear();
            buf.resize(total as usize * elem, 0);
            fill(first, &mut buf)?;
            let encoded: Vec<(Vec<u64>, Vec<u8>)> = spans
                .into_par_iter()
                .map(|(offset, start, len)| {
                    let at = (start - first) as usize * elem;
                    let mut tile = vec![0u8; chunk_bytes];
                    tile[..len as usize * elem].copy_from_slice(&buf[at..at + len as usize * elem]);
                    encode_chunk(&spec.filters, tile).map(|c| (offset, c))
                })
                .collect::<Result<_>>()?;
            locked(&self.state)?.append_chunks(encoded, &mut records)?;
            next = end;
        }
        Ok(records)
    }
}

/// Where each chunk's elements lie in C order when every chunk is one run of it.
struct Runs {
    /// Element strides of the dataset's dimensions.
    strides: Vec<u64>,
    dims: Vec<u64>,
    chunk: Vec<u64>,
    /// The dimension the chunks cut (whole after it, 1 before it).
    cut: usize,
}

impl Runs {
    fn new(dims: &[u64], chunk: &[u64]) -> Result<Runs> {
        let rank = dims.len();
        let cut = chunk
            .iter()
            .position(|&c| c != 1)
            .unwrap_or(rank)
            .min(rank.saturating_sub(1));
        let linear = chunk.len() == rank
            && chunk[..cut].iter().all(|&c| c == 1)
            && chunk[cut + 1..] == dims[cut + 1..];
        if !linear {
            return Err(Error::unsupported(format!(
                "chunks {chunk:?} of shape {dims:?} written piece by piece (each chunk must be \
                 one run of the data: whole in the dimensions after the one it cuts)"
            )));
        }
        let mut strides = vec![1u64; rank];
        for d in (0..rank.saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * dims[d + 1];
        }
        Ok(Runs {
            strides,
            dims: dims.to_vec(),
            chunk: chunk.to_vec(),
            cut,
        })
    }

    /// The first element and the number of elements (edge chunks hold fewer) of the chunk at
    /// `offset`.
    fn span(&self, offset: &[u64]) -> (u64, u64) {
        let start = offset.iter().zip(&self.strides).map(|(o, s)| o * s).sum();
        let c = self.cut;
        let along = self.chunk[c].min(self.dims[c] - offset[c]);
        (start, along * self.strides[c])
    }
}

#[cfg(test)]
mod tests {
    use super::super::NativeFile;
    use super::*;
    use crate::types::ByteOrder;
    use sciio_codecs::FilterStage;

    /// The file made from `spec` and `data`, whole or piece by piece (same modification time).
    fn written(spec: &DatasetSpec, data: &[u8], pieces: bool) -> Vec<u8> {
        let dir = std::env::temp_dir().join(format!(
            "sciio-native-pieces-{}-{pieces}-{}",
            std::process::id(),
            data.len()
        ));
        let file = NativeFile::create(&dir, 512).unwrap();
        let root = file.root();
        if pieces {
            let elem = spec.ty.size();
            let mut calls = 0;
            let mut fill = |first: u64, buf: &mut [u8]| -> Result<()> {
                calls += 1;
                let at = first as usize * elem;
                buf.copy_from_slice(&data[at..at + buf.len()]);
                Ok(())
            };
            root.write_dataset_with("x", spec, &mut fill).unwrap();
            assert!(calls >= 1);
        } else {
            root.write_dataset("x", spec, data).unwrap();
        }
        locked(&file.state).unwrap().mtime = 1;
        file.close().unwrap();
        let bytes = std::fs::read(&dir).unwrap();
        std::fs::remove_file(&dir).unwrap();
        bytes
    }

    fn f8() -> H5Type {
        H5Type::Float {
            size: 8,
            precision: 64,
            order: ByteOrder::Little,
        }
    }

    #[test]
    fn pieces_make_the_same_file_as_the_whole_data() {
        // Slabs along the first dimension (an edge slab of 3 rows), slabs of one row cut along
        // the last (an edge chunk of 2), and contiguous data over several pieces.
        let dims = vec![7u64, 600_000];
        let data: Vec<u8> = (0..dims.iter().product::<u64>() * 8)
            .map(|i| (i % 251) as u8 ^ (i / 4096) as u8)
            .collect();
        let filters = vec![FilterStage::shuffle(8), FilterStage::deflate(1)];
        let max = |d: &[u64]| d.iter().map(|&x| Some(x)).collect();
        let slabs = DatasetSpec::chunked(f8(), dims.clone(), max(&dims), vec![4, 600_000])
            .filters(filters.clone());
        let cut =
            DatasetSpec::chunked(f8(), dims.clone(), max(&dims), vec![1, 199_999]).filters(filters);
        let plain = DatasetSpec::contiguous(f8(), dims.clone());
        for spec in [&slabs, &cut, &plain] {
            assert!(written(spec, &data, true) == written(spec, &data, false));
        }
    }

    #[test]
    fn chunks_across_the_order_are_refused() {
        let dims = vec![4u64, 4];
        let spec = DatasetSpec::chunked(f8(), dims.clone(), vec![Some(4), Some(4)], vec![2, 2]);
        let file = NativeFile::create(std::env::temp_dir().join("sciio-refused"), 0).unwrap();
        let mut fill = |_: u64, _: &mut [u8]| -> Result<()> { Ok(()) };
        let e = file
            .root()
            .write_dataset_with("x", &spec, &mut fill)
            .unwrap_err();
        assert!(e.to_string().contains("one run of the data"), "{e}");
        std::fs::remove_file(std::env::temp_dir().join("sciio-refused")).ok();
    }
}
