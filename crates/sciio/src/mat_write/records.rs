//! Structured arrays (records) into MAT files batch of records by batch
//! ([`MatOut::write_records_streamed`]): a `.npy` or `.npz` member read in batches
//! (`stream::for_each_batch`, once or twice: see `sciio_mat`'s `v5/records.rs`) rather than
//! whole, so that a Level-5 struct array of millions of records is written in bounded memory.

use sciio_core::{DType, Result};

use super::{both_value_and_struct, MatOut};
use crate::node::ArrayInfo;

/// Records read from the source per batch.
const BATCH_RECORDS_BYTES: usize = crate::stream::BATCH_BYTES;

impl MatOut {
    /// Writes the structured array at `path` of `src` as top-level variable `name` batch by
    /// batch ([`sciio_mat::MatWriter::write_records`]: the file [`MatOut::write`] makes of
    /// the whole array) when it is a `.npy` or `.npz` structured array whose stored order is
    /// MATLAB's (at most one axis longer than 1); `false`, having written nothing, otherwise.
    /// `progress` is told the bytes done: each pass over the records (one, or two when
    /// text fields are measured first) counts as half of them.
    pub(crate) fn write_records_streamed(
        &mut self,
        name: &str,
        src: &mut crate::file::File,
        path: &str,
        info: &ArrayInfo,
        progress: &mut dyn FnMut(u64),
    ) -> Result<bool> {
        let name = name.trim_matches('/');
        if !streamable_records(src, info, name) {
            return Ok(false);
        }
        if self.nested.contains(name) {
            return Err(both_value_and_struct(name).with_node(format!("/{name}")));
        }
        self.written.insert(name.to_string());
        let item = info.dtype.itemsize();
        let per_batch = (BATCH_RECORDS_BYTES / item.max(1)).max(1);
        let total = info.nbytes();
        // Each pass reported as half the bytes (a single pass leaves the second half to the
        // caller's progress at the end of the variable): progress never goes back.
        let mut base = 0u64;
        let mut pass = |put: &mut sciio_mat::PutBytes<'_>| -> Result<()> {
            let mut done = 0u64;
            crate::stream::for_each_batch(src, path, item, per_batch, &mut |batch| {
                put(batch)?;
                done += batch.len() as u64;
                progress(base + done / 2);
                Ok(())
            })?;
            base = (base + done / 2).min(total);
            Ok(())
        };
        let records = sciio_mat::RecordPieces {
            dtype: info.dtype.clone(),
            shape: info.shape.clone(),
            pass: &mut pass,
        };
        self.writer.write_records(name, records)?;
        Ok(true)
    }
}

/// Whether the array is a structured array of MATLAB classes from a `.npy` or `.npz` whose
/// stored order is MATLAB's element order, under a top-level name.
fn streamable_records(src: &crate::file::File, info: &ArrayInfo, name: &str) -> bool {
    let source = matches!(
        src.format(),
        crate::format::Format::Npy | crate::format::Format::Npz
    );
    source
        && !name.contains('/')
        && matches!(info.dtype, DType::Record(_))
        && sciio_mat::no_class_reason(&info.dtype).is_none()
        && info.shape.iter().filter(|&&d| d > 1).count() <= 1
        && info.dtype.itemsize() > 0
}
