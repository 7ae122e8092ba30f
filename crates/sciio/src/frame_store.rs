//! Parquet into a pandas HDFStore key in bounded memory, record batch by record batch
//! (`x.parquet → store.h5:/key`, new keys and `--append` alike): `sciio_hdfstore::write_streamed`
//! passes over the file's batches twice, a first time to plan the table from what only the
//! whole frame decides (each string column's widest value, its missing values and the
//! sentinel avoiding its values, categories), a second to write the rows. The key is the one
//! the whole-frame path writes, byte for byte (the expected rows, which size the chunks, are
//! the footer's row count, as the whole frame's). A `fixed` key (`--store-format fixed`)
//! likewise: its number blocks and index filled slab by slab as the batches come (the
//! footer's row count sizes them), a string or date column's pickle (one object by the
//! format) gathered whole. Small frames (under 32 MiB on disk and in memory) are left to
//! the whole-frame path.

use std::path::Path;

use sciio_core::{Limits, Result};
use sciio_hdfstore::{FieldNeed, FramePasses, Survey, WriteOptions};
use sciio_pandas::arrow_array::RecordBatch;
use sciio_pandas::{ParquetReader, ReadOptions};

use crate::file::File;
use crate::frame_numpy::large_enough_to_stream;

/// Record batches decoded ahead of the planner or the writer.
const IN_FLIGHT: usize = 2;

/// Writes `src` as `key` of the store at `dst`, streamed; the bytes of the batches' arrays.
/// `None` (nothing written) for a frame too small to stream ([`large_enough_to_stream`]):
/// one pass instead of two.
pub(crate) fn write_key(
    src: &File,
    dst: &Path,
    key: &str,
    options: &WriteOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Option<u64>> {
    if !large_enough_to_stream(src)? {
        return Ok(None);
    }
    let reader = open(src.path(), src.limits())?;
    let schema = reader.schema().clone();
    let rows = reader.num_rows();
    drop(reader);
    let mut passes = ParquetPasses {
        file: src.path(),
        limits: *src.limits(),
        rows,
        file_bytes: src.size_on_disk(),
        passes: 0,
        array_bytes: 0,
        progress,
    };
    sciio_hdfstore::write_streamed(dst, key, &schema, rows, &mut passes, options)?;
    let total = passes.file_bytes.saturating_mul(2);
    (passes.progress)(total, total);
    Ok(Some(passes.array_bytes))
}

fn open(file: &Path, limits: &Limits) -> Result<ParquetReader> {
    ParquetReader::open_with(file, &ReadOptions::new().limits(*limits))
        .map_err(|e| e.with_file(file))
}

/// The Parquet file's record batches, once per pass. Progress counts the bytes of the file
/// read, twice over (the first pass reads it as the second does): the rows passed, as a
/// share of the file's size, plus the whole file once the first pass is over.
struct ParquetPasses<'a> {
    file: &'a Path,
    limits: Limits,
    rows: u64,
    file_bytes: u64,
    /// Passes started.
    passes: u64,
    /// The bytes of the arrays of the last pass's batches.
    array_bytes: u64,
    progress: &'a mut dyn FnMut(u64, u64),
}

impl FramePasses for ParquetPasses<'_> {
    fn pass(&mut self) -> Result<Box<dyn Iterator<Item = Result<RecordBatch>> + '_>> {
        let readers = if self.passes == 0 {
            // The first pass only gathers statistics: any order, every core decoding.
            part_readers(self.file, &ReadOptions::new().limits(self.limits))?
        } else {
            vec![open(self.file, &self.limits)?]
        };
        Ok(self.counted(readers))
    }

    /// Decodes only the fields whose values the plan needs, and those whose missing values
    /// it needs and the footer's statistics do not count.
    fn survey(&mut self, needs: &[FieldNeed]) -> Result<Survey<'_>> {
        let reader = open(self.file, &self.limits)?;
        let footer = reader.footer_null_counts().to_vec();
        let (fields, nulls) = survey_fields(needs, &footer);
        if fields.is_empty() {
            // Nothing to decode: the row groups' sizes count the rows.
            self.passes += 1;
            return Ok(Survey {
                fields,
                nulls,
                batches: Box::new(reader.group_rows().into_iter().map(rows_only)),
            });
        }
        drop(reader);
        let options = ReadOptions::new()
            .limits(self.limits)
            .fields(fields.clone());
        let readers = part_readers(self.file, &options)?;
        Ok(Survey {
            fields,
            nulls,
            batches: self.counted(readers),
        })
    }
}

/// A record batch of no field and `rows` rows.
fn rows_only(rows: u64) -> Result<RecordBatch> {
    use sciio_pandas::arrow_array::RecordBatchOptions;
    let rows = usize::try_from(rows)
        .map_err(|_| sciio_core::Error::unsupported(format!("a row group of {rows} rows")))?;
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    let schema = std::sync::Arc::new(sciio_pandas::arrow_schema::Schema::empty());
    RecordBatch::try_new_with_options(schema, Vec::new(), &options)
        .map_err(|e| sciio_core::Error::mismatch(format!("a batch of {rows} rows: {e}")))
}

/// The fields the first pass decodes (positions, in order), and the missing values of the
/// others it needs, counted by the footer. None when the footer tells all the plan needs
/// (the row groups' sizes then count the rows).
fn survey_fields(needs: &[FieldNeed], footer: &[Option<u64>]) -> (Vec<usize>, Vec<(usize, bool)>) {
    let mut fields = Vec::new();
    let mut nulls = Vec::new();
    for (pos, need) in needs.iter().enumerate() {
        match (need, footer.get(pos).copied().flatten()) {
            (FieldNeed::Nothing, _) => {}
            (FieldNeed::Nulls, Some(n)) => nulls.push((pos, n > 0)),
            _ => fields.push(pos),
        }
    }
    (fields, nulls)
}

impl<'a> ParquetPasses<'a> {
    /// The readers' batches, decoded ahead, counted for the progress and the memory figure.
    fn counted(
        &mut self,
        readers: Vec<ParquetReader>,
    ) -> Box<dyn Iterator<Item = Result<RecordBatch>> + '_> {
        let batches = decoded_ahead(readers);
        let file = self.file;
        let before = self.passes.min(1).saturating_mul(self.file_bytes);
        let total = self.file_bytes.saturating_mul(2);
        self.passes += 1;
        self.array_bytes = 0;
        let mut rows_done = 0u64;
        Box::new(batches.map(move |batch| {
            let batch = batch.map_err(|e| e.with_file(file))?;
            rows_done += batch.num_rows() as u64;
            self.array_bytes += batch.get_array_memory_size() as u64;
            let share = share_of(self.file_bytes, rows_done, self.rows);
            (self.progress)((before + share).min(total), total);
            Ok(batch)
        }))
    }
}

/// `bytes × done / all`, without overflow.
fn share_of(bytes: u64, done: u64, all: u64) -> u64 {
    if all == 0 {
        return bytes;
    }
    u64::try_from(u128::from(bytes) * u128::from(done.min(all)) / u128::from(all)).unwrap_or(bytes)
}

/// Readers of contiguous runs of the file's row groups, one per core (at most one per group).
fn part_readers(file: &Path, options: &ReadOptions) -> Result<Vec<ParquetReader>> {
    let whole = || ParquetReader::open_with(file, options).map_err(|e| e.with_file(file));
    let groups = whole()?.num_row_groups();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let parts = cores.min(groups).max(1);
    if parts == 1 {
        return Ok(vec![whole()?]);
    }
    let per = groups.div_ceil(parts);
    (0..groups)
        .step_by(per)
        .map(|start| {
            let run = (start..(start + per).min(groups)).collect();
            ParquetReader::open_row_groups(file, run, options)
        })
        .collect()
}

/// The readers' batches decoded on threads of their own (one per reader), [`IN_FLIGHT`] per
/// reader ahead of the caller: one reader's in order, several interleaved as they come (the
/// threads end when the receiver is dropped).
fn decoded_ahead(readers: Vec<ParquetReader>) -> impl Iterator<Item = Result<RecordBatch>> {
    let (tx, rx) = std::sync::mpsc::sync_channel(IN_FLIGHT * readers.len());
    for reader in readers {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for batch in reader {
                if tx.send(batch).is_err() {
                    break;
                }
            }
        });
    }
    rx.into_iter()
}

#[cfg(test)]
mod tests {
    use super::{share_of, survey_fields};
    use sciio_hdfstore::FieldNeed::{Nothing, Nulls, Values};

    #[test]
    fn the_first_pass_reads_what_the_footer_does_not_tell() {
        // text read; an integer counted by the footer not read, one without a count read;
        // a float not read.
        let needs = [Values, Nulls, Nulls, Nothing];
        let footer = [Some(0), Some(3), None, Some(2)];
        assert_eq!(
            survey_fields(&needs, &footer),
            (vec![0, 2], vec![(1, true)])
        );
        // Nothing to read: the row groups count the rows.
        assert_eq!(
            survey_fields(&[Nothing, Nulls], &[None, Some(0)]),
            (vec![], vec![(1, false)])
        );
    }

    #[test]
    fn progress_shares_stay_within_the_file() {
        assert_eq!(share_of(1000, 0, 10), 0);
        assert_eq!(share_of(1000, 5, 10), 500);
        assert_eq!(share_of(1000, 20, 10), 1000);
        assert_eq!(share_of(1000, 0, 0), 1000);
        assert_eq!(share_of(u64::MAX, u64::MAX - 1, u64::MAX), u64::MAX - 1);
    }
}
