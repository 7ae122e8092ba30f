//! Structured arrays (records) into MAT files batch of records by batch
//! ([`MatOut::write_records_streamed`]): a `.npy`, `.npz` member or HDF5 table read in batches
//! (`stream::for_each_batch`, once or twice: see `sciio_mat`'s `v5/write/records.rs`) rather than
//! whole, so that a struct array of millions of records is written in bounded memory (v7.3:
//! element by element as the records come, `sciio_mat`'s `write/records.rs`).

use sciio_core::{DType, Result};

use super::MatOut;
use crate::mat_pieces::{in_matlab_order, stage, staged_blocks, Prefetch, Sizes};
use crate::node::ArrayInfo;

/// Records read from the source per batch.
const BATCH_RECORDS_BYTES: usize = crate::stream::BATCH_BYTES;

impl MatOut {
    /// Writes the structured array at `path` of `src` as top-level variable `name` batch by
    /// batch ([`sciio_mat::MatWriter::write_records`]: the file [`MatOut::write`] makes of
    /// the whole array) when it is a `.npy`, `.npz` or HDF5 structured array; `false`, having
    /// written nothing, otherwise. The records are read as [`stream_records`] reads them
    /// (staged copies go beside the destination), `progress` told as it tells.
    pub(crate) fn write_records_streamed(
        &mut self,
        name: &str,
        src: &mut crate::file::File,
        path: &str,
        info: &ArrayInfo,
        progress: &mut dyn FnMut(u64),
    ) -> Result<bool> {
        self.write_records_streamed_with(name, src, path, info, progress, Sizes::DEFAULT)
    }

    /// [`MatOut::write_records_streamed`] with the sizes of the staged blocks (smaller in
    /// tests).
    fn write_records_streamed_with(
        &mut self,
        name: &str,
        src: &mut crate::file::File,
        path: &str,
        info: &ArrayInfo,
        progress: &mut dyn FnMut(u64),
        sizes: Sizes,
    ) -> Result<bool> {
        let name = name.trim_matches('/');
        if name.contains('/') || !streamable_records(src, info) {
            return Ok(false);
        }
        self.claim_variable(name)?;
        let folder = self.folder();
        let writer = &mut self.writer;
        stream_records(
            src,
            path,
            info,
            (sizes, &folder),
            progress,
            &mut |records| writer.write_records(name, records),
        )?;
        Ok(true)
    }
}

impl MatOut {
    /// For a structured array [`MatOut::write_records_streamed`] would write, named by a
    /// path (`a/b`, a field of struct `a`): notes it as array `id` of the struct to be
    /// ([`sciio_mat::TreeValue::Records`]), its records asked for when
    /// [`MatOut::finish_with`] writes the struct (through [`stream_records`]); `false`,
    /// having noted nothing, for other arrays.
    pub(super) fn defer_records(
        &mut self,
        name: &str,
        src: &crate::file::File,
        info: &ArrayInfo,
        id: usize,
    ) -> Result<bool> {
        if !streamable_records(src, info) {
            return Ok(false);
        }
        let tree = sciio_mat::TreeValue::Records {
            id,
            dtype: info.dtype.clone(),
            shape: info.shape.clone(),
        };
        self.defer_tree(name, tree)?;
        Ok(true)
    }
}

/// Gives the structured array at `path` of `src` (one [`streamable_records`] takes) to
/// `write` as [`sciio_mat::RecordPieces`], its records in MATLAB's order. Records in
/// MATLAB's order as stored (Fortran order, or at most one axis longer than 1) are read from
/// the source in batches at each pass; others are first staged in MATLAB's order into a
/// temporary file in `folder` (`mat_pieces.rs` [`stage`], as for numeric N-d arrays), which
/// counts as the first half of the bytes for `progress`. `progress` is told the bytes done:
/// each pass over the records (one, or two when text fields are measured first) counts as
/// half of them.
pub(crate) fn stream_records(
    src: &mut crate::file::File,
    path: &str,
    info: &ArrayInfo,
    (sizes, folder): (Sizes, &std::path::Path),
    progress: &mut dyn FnMut(u64),
    write: &mut dyn FnMut(sciio_mat::RecordPieces<'_>) -> Result<()>,
) -> Result<()> {
    if in_matlab_order(info) {
        let mut read = |put: &mut sciio_mat::PutBytes<'_>| {
            let item = info.dtype.itemsize();
            let per_batch = (BATCH_RECORDS_BYTES / item.max(1)).max(1);
            crate::stream::for_each_batch(src, path, item, per_batch, &mut |b| put(b))
        };
        let mut passes = Passes::new(info, 0, 2, progress);
        return give_records(info.dtype.clone(), info, &mut passes, &mut read, write);
    }
    // Several axes longer than 1 in C order: the records staged once in MATLAB's order
    // (blocks of rows in Fortran order in a temporary file, as numeric N-d arrays are),
    // then read from there, in native byte order, once or twice.
    let how = {
        let (block_rows, stored) = staged_blocks(info, sizes);
        (block_rows, stored, sizes.block_bytes)
    };
    let (staged, copied) = stage(src, path, info, how, folder, &mut |d| progress(d / 2))?;
    let (base, share) = match copied {
        true => (info.nbytes() / 2, 4),
        false => (0, 2),
    };
    let item = info.dtype.itemsize() as u64;
    let count = info.nbytes() / item.max(1);
    let native = info.dtype.to_native();
    Prefetch::run(&staged, count, |prefetch| {
        let per_piece = (BATCH_RECORDS_BYTES as u64 / item.max(1)).max(1);
        let mut read = |put: &mut sciio_mat::PutBytes<'_>| {
            let mut buf = Vec::new();
            let mut first = 0;
            while first < count {
                let end = (first + per_piece).min(count);
                buf.resize(((end - first) * item) as usize, 0);
                prefetch.fill(first, &mut buf)?;
                put(&buf)?;
                first = end;
            }
            Ok(())
        };
        let mut passes = Passes::new(info, base, share, progress);
        give_records(native, info, &mut passes, &mut read, write)
    })
}

/// Gives `write` the records `read` gives (in MATLAB's order, of `dtype`), each pass over
/// them counted by `passes`.
fn give_records(
    dtype: DType,
    info: &ArrayInfo,
    passes: &mut Passes<'_>,
    read: &mut dyn FnMut(&mut sciio_mat::PutBytes<'_>) -> Result<()>,
    write: &mut dyn FnMut(sciio_mat::RecordPieces<'_>) -> Result<()>,
) -> Result<()> {
    let mut pass = |put: &mut sciio_mat::PutBytes<'_>| -> Result<()> {
        read(&mut |batch: &[u8]| {
            put(batch)?;
            passes.done(batch.len() as u64);
            Ok(())
        })?;
        passes.next();
        Ok(())
    };
    write(sciio_mat::RecordPieces {
        dtype,
        shape: info.shape.clone(),
        pass: &mut pass,
    })
}

/// The progress of the passes over the records: from `base`, each pass counted as
/// `1 / share` of the bytes (a single pass leaves the rest to the caller's progress at the
/// end of the variable), so that progress never goes back.
struct Passes<'p> {
    base: u64,
    done: u64,
    share: u64,
    total: u64,
    progress: &'p mut dyn FnMut(u64),
}

impl<'p> Passes<'p> {
    fn new(info: &ArrayInfo, base: u64, share: u64, progress: &'p mut dyn FnMut(u64)) -> Self {
        let total = info.nbytes();
        Passes {
            base,
            done: 0,
            share,
            total,
            progress,
        }
    }

    fn done(&mut self, bytes: u64) {
        self.done += bytes;
        (self.progress)((self.base + self.done / self.share).min(self.total));
    }

    fn next(&mut self) {
        self.base = (self.base + self.done / self.share).min(self.total);
        self.done = 0;
    }
}

/// Whether the array is a structured array of MATLAB classes from a `.npy`, `.npz` or HDF5
/// file (read batch of records by batch).
pub(crate) fn streamable_records(src: &crate::file::File, info: &ArrayInfo) -> bool {
    let source = matches!(
        src.format(),
        crate::format::Format::Npy | crate::format::Format::Npz
    );
    // PyTables Tables and HDF5 compound datasets: read in blocks as they are into `.npy`.
    #[cfg(feature = "hdf5")]
    let source = source || src.format() == crate::format::Format::Hdf5;
    source
        && matches!(info.dtype, DType::Record(_))
        && sciio_mat::no_class_reason(&info.dtype).is_none()
        && info.dtype.itemsize() > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mat_pieces::tests::whole_and_streamed;
    use crate::options::MatOutVersion;
    use sciio_core::{NdArray, Order};

    /// Records of `n` with every kind of field: integers, a big-endian double, a float, bytes
    /// and text of data-dependent lengths (empty, non-ASCII, inner NULs), a big-endian
    /// subarray, a bool, a complex, a text subarray (its strings all empty in some records).
    fn records(n: usize) -> NdArray {
        let descr = sciio_core::PyLiteral::parse(
            "[('i', '<i8'), ('x', '>f8'), ('y', '<f4'), ('s', '|S12'), ('u', '<U5'), \
             ('v', '>i2', (2, 3)), ('b', '|b1'), ('c', '<c16'), ('w', '<U2', (2,))]",
        )
        .unwrap();
        let dtype = DType::parse_descr(&descr).unwrap();
        let item = dtype.itemsize();
        let words: [&[u8]; 6] = [b"", b"a", b"hello", b"\xe9t\xe9", b"twelve_bytes", b"x\0y"];
        let texts = ["", "\u{e9}", "abc", "\u{4e2d}\u{6587}", "hello"];
        let mut bytes = vec![0u8; n * item];
        for (k, r) in bytes.chunks_exact_mut(item).enumerate() {
            r[..8].copy_from_slice(&(k as i64 * 7919 - 5000).to_le_bytes());
            r[8..16].copy_from_slice(&(k as f64 / 3.0).to_be_bytes());
            r[16..20].copy_from_slice(&(-(k as f32) * 0.25).to_le_bytes());
            let w = words[k % words.len()];
            r[20..20 + w.len()].copy_from_slice(w);
            for (j, c) in texts[k % texts.len()].chars().enumerate() {
                r[32 + 4 * j..36 + 4 * j].copy_from_slice(&u32::from(c).to_le_bytes());
            }
            for j in 0..6 {
                r[52 + 2 * j..54 + 2 * j].copy_from_slice(&((k + j) as i16 - 3).to_be_bytes());
            }
            r[64] = u8::from(k % 3 == 0);
            r[65..73].copy_from_slice(&(k as f64).to_le_bytes());
            r[73..81].copy_from_slice(&(-(k as f64)).to_le_bytes());
            for j in 0..2 {
                let text = texts[(k * 2 + j) % 3];
                for (i, c) in text.chars().take(2).enumerate() {
                    let at = 81 + 8 * j + 4 * i;
                    r[at..at + 4].copy_from_slice(&u32::from(c).to_le_bytes());
                }
            }
        }
        NdArray::from_bytes(dtype, &[n], Order::C, &bytes).unwrap()
    }

    /// A structured array written batch by batch is the file the whole array makes, byte for
    /// byte in MAT v5/v7, small (one element) and large (v7: the parallel deflate stream),
    /// from `.npy` and `.npz`; in v7.3 (elements written as they come, in another order under
    /// other names in `/#refs#`) the same values read back.
    #[test]
    fn streamed_records_make_the_whole_arrays_file() {
        static EPOCH: std::sync::Once = std::sync::Once::new();
        EPOCH.call_once(|| std::env::set_var("SOURCE_DATE_EPOCH", "1700000000"));
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for (n, versions) in [
            (
                40,
                &[MatOutVersion::V5, MatOutVersion::V7, MatOutVersion::V73][..],
            ),
            (12_000, &[MatOutVersion::V5, MatOutVersion::V7][..]),
        ] {
            let a = records(n);
            for &version in versions {
                for npz in [false, true] {
                    let (whole, batches, reported) =
                        whole_and_streamed(d, ("r", &a), version, npz, &mut |out, f, at, i, p| {
                            out.write_records_streamed("r", f, at, i, p)
                        });
                    assert!(reported.windows(2).all(|w| w[0] <= w[1]), "{reported:?}");
                    if version == MatOutVersion::V73 {
                        let read = |p| sciio_mat::MatFile::open(p).unwrap().read("r").unwrap();
                        let (a, b) = (read(&whole), read(&batches));
                        assert!(a == b, "{version:?} {n} records, npz {npz}");
                        continue;
                    }
                    let read = |p| std::fs::read(p).unwrap();
                    assert!(
                        read(&whole) == read(&batches),
                        "{version:?} {n} records, npz {npz}"
                    );
                }
            }
        }
    }

    /// Records of several axes longer than 1 (2-d and 3-d, C and Fortran order, from `.npy`
    /// and `.npz`) make the whole array's file byte for byte: staged in blocks of rows
    /// (block sizes of one record, a few rows, a whole row and over a row: rows of several
    /// axes staged one at a time) and read back in MATLAB's order, in each MAT version
    /// Level-5 writes.
    #[test]
    fn records_of_several_axes_make_the_whole_arrays_file() {
        use crate::mat_pieces::tests::sizes;
        static EPOCH: std::sync::Once = std::sync::Once::new();
        EPOCH.call_once(|| std::env::set_var("SOURCE_DATE_EPOCH", "1700000000"));
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let item = records(1).dtype().itemsize();
        let shapes: [&[usize]; 4] = [&[7, 11], &[3, 4, 5], &[60, 70], &[2, 1, 3, 1]];
        for shape in shapes {
            let n: usize = shape.iter().product();
            let flat = records(n);
            let c = NdArray::from_bytes(flat.dtype().clone(), shape, Order::C, flat.as_bytes())
                .unwrap();
            for a in [c.clone(), c.to_order(Order::F)] {
                let row = shape[1..].iter().product::<usize>() * item;
                for block in [item, 3 * row, row, row - 1] {
                    for (version, npz) in [(MatOutVersion::V7, false), (MatOutVersion::V5, true)] {
                        let sizes = sizes(block.max(1), 0);
                        let (whole, staged, reported) = whole_and_streamed(
                            d,
                            ("r", &a),
                            version,
                            npz,
                            &mut |out, f, at, i, p| {
                                out.write_records_streamed_with("r", f, at, i, p, sizes)
                            },
                        );
                        assert!(reported.windows(2).all(|w| w[0] <= w[1]), "{reported:?}");
                        let nbytes = a.nbytes() as u64;
                        assert!(reported.last() <= Some(&nbytes), "{reported:?}");
                        let read = |p| std::fs::read(p).unwrap();
                        assert!(
                            read(&whole) == read(&staged),
                            "{shape:?} {:?} block {block} {version:?} npz {npz}",
                            a.order()
                        );
                    }
                }
            }
        }
    }
}
