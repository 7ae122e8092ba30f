//! The record batches of a frame passed over by the writers ([`FramePasses`]) and the first
//! pass's statistics ([`survey`]), which the `table` writer (mod.rs) and the `fixed` one
//! (fixed.rs) share.

use std::collections::HashSet;

use arrow_array::RecordBatch;
use sciio_core::{Error, Result};
use sciio_pandas::FrameSchema;

use super::plan::{self, ColumnStats, FieldNeed};

/// Rows per slice encoded at once (bounded memory whatever the frame's size).
pub(super) const SLICE_ROWS: usize = 1 << 16;

/// The record batches of a frame, read twice by [`super::write_streamed`]: a first pass
/// plans the table from what only the whole frame decides (the widest string of each
/// column, its missing values and the sentinel avoiding its values, categories), a second
/// writes it.
pub trait FramePasses {
    /// One pass over the frame's record batches (of the frame's schema, as `Frame::batches`
    /// holds them), in order: the second pass, and the first unless [`Self::survey`] says
    /// otherwise.
    fn pass(&mut self) -> Result<Box<dyn Iterator<Item = Result<RecordBatch>> + '_>>;

    /// The first pass, which only gathers statistics: `needs` says, field by field (positions
    /// in the frame's Arrow schema), what the plan needs of its values; the batches may come
    /// in any order (parts of the frame decoded on several threads) and hold only some fields
    /// ([`Survey`]). By default every field of every batch of [`Self::pass`].
    fn survey(&mut self, needs: &[FieldNeed]) -> Result<Survey<'_>> {
        Ok(Survey {
            fields: (0..needs.len()).collect(),
            nulls: Vec::new(),
            batches: self.pass()?,
        })
    }
}

/// What each field of a frame's Arrow schema (by position) needs read by the first pass.
pub fn field_needs(schema: &FrameSchema) -> Vec<FieldNeed> {
    schema
        .arrow_schema()
        .fields()
        .iter()
        .map(|f| plan::field_need(f.data_type()))
        .collect()
}

/// The first pass's batches and what is known without them ([`FramePasses::survey`]).
pub struct Survey<'a> {
    /// The fields the batches hold (positions in the frame's Arrow schema), in order.
    pub fields: Vec<usize>,
    /// Fields not read whose missing values are known (whether there is one).
    pub nulls: Vec<(usize, bool)>,
    /// Every row of the frame, in any order.
    pub batches: Box<dyn Iterator<Item = Result<RecordBatch>> + 'a>,
}

impl std::fmt::Debug for Survey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Survey")
            .field("fields", &self.fields)
            .field("nulls", &self.nulls)
            .finish_non_exhaustive()
    }
}

/// The first pass: the statistics of every Arrow field of the frame (by position; `needs`
/// has one entry per field) from the survey's batches and known missing values, the present
/// text values in `watch` noted. The batches must hold `rows` rows, and every field the plan
/// needs to know something of must be read or its missing values known.
pub(super) fn survey(
    rows: u64,
    needs: &[FieldNeed],
    survey: Survey<'_>,
    watch: &HashSet<String>,
) -> Result<Vec<ColumnStats>> {
    let mut stats = vec![ColumnStats::default(); needs.len()];
    check_survey_covers(needs, &survey)?;
    for &(pos, nulls) in &survey.nulls {
        if let Some(s) = stats.get_mut(pos) {
            s.note_nulls(nulls);
        }
    }
    let fields = survey.fields.len();
    let mut seen = 0u64;
    for batch in survey.batches {
        let batch = batch?;
        if batch.num_columns() != fields {
            return Err(Error::mismatch(format!(
                "a record batch of {} fields where {fields} were selected",
                batch.num_columns()
            )));
        }
        for (&pos, a) in survey.fields.iter().zip(batch.columns()) {
            if let Some(s) = stats.get_mut(pos) {
                s.add(a.as_ref(), watch)?;
            }
        }
        seen += batch.num_rows() as u64;
    }
    if seen != rows {
        return Err(Error::mismatch(format!(
            "the record batches hold {seen} rows where the frame has {rows}"
        )));
    }
    Ok(stats)
}

/// Refuses a survey that leaves out a field the plan needs, or names one the frame lacks.
fn check_survey_covers(needs: &[FieldNeed], survey: &Survey<'_>) -> Result<()> {
    let n = needs.len();
    let known = survey.nulls.iter().map(|&(p, _)| p);
    if let Some(bad) = survey.fields.iter().copied().chain(known).find(|&p| p >= n) {
        return Err(Error::mismatch(format!(
            "the first pass gives field {bad} of a frame of {n} fields"
        )));
    }
    let read = |p: usize| survey.fields.contains(&p);
    let nulls_known = |p: usize| survey.nulls.iter().any(|&(q, _)| q == p);
    let missing = needs.iter().enumerate().find(|&(p, need)| match need {
        FieldNeed::Nothing => false,
        FieldNeed::Nulls => !read(p) && !nulls_known(p),
        FieldNeed::Values => !read(p),
    });
    match missing {
        Some((p, need)) => Err(Error::mismatch(format!(
            "the first pass leaves out field {p}, whose {} the plan needs",
            match need {
                FieldNeed::Values => "values",
                _ => "missing values",
            }
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod survey_tests {
    use super::{check_survey_covers, FieldNeed, Survey};

    fn survey(fields: Vec<usize>, nulls: Vec<(usize, bool)>) -> Survey<'static> {
        Survey {
            fields,
            nulls,
            batches: Box::new(std::iter::empty()),
        }
    }

    #[test]
    fn a_first_pass_leaving_out_what_the_plan_needs_is_refused() {
        let needs = [FieldNeed::Values, FieldNeed::Nulls, FieldNeed::Nothing];
        assert!(check_survey_covers(&needs, &survey(vec![0], vec![(1, false)])).is_ok());
        assert!(check_survey_covers(&needs, &survey(vec![0, 1], vec![])).is_ok());
        let e = check_survey_covers(&needs, &survey(vec![0], vec![])).unwrap_err();
        assert!(
            e.to_string().contains("field 1, whose missing values"),
            "{e}"
        );
        // Known missing values do not stand for the values.
        let e = check_survey_covers(&needs, &survey(vec![1], vec![(0, false)])).unwrap_err();
        assert!(e.to_string().contains("field 0, whose values"), "{e}");
        let e = check_survey_covers(&needs, &survey(vec![0, 1, 7], vec![])).unwrap_err();
        assert!(e.to_string().contains("field 7"), "{e}");
    }
}
