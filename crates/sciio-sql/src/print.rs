//! Query results as a box-drawn table, the style of `sciio ls`.

use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement, Table};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use sciio::{Error, Result};

/// `batches` as a table: a header row of column names, then one row per result row (numbers
/// right-aligned, missing values `NULL`). No batch gives the header alone; a result with no
/// column gives an empty string.
pub fn format_table(batches: &[RecordBatch]) -> Result<String> {
    let Some(first) = batches.first() else {
        return Ok(String::new());
    };
    let schema = first.schema();
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(schema.fields().iter().map(|f| f.name().clone()));
    let options = FormatOptions::default().with_null("NULL");
    for batch in batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| Error::unsupported(format!("a result column cannot be printed: {e}")))?;
        for row in 0..batch.num_rows() {
            table.add_row(formatters.iter().map(|f| f.value(row).to_string()));
        }
    }
    for (i, field) in schema.fields().iter().enumerate() {
        if field.data_type().is_numeric() {
            if let Some(col) = table.column_mut(i) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    Ok(table.to_string() + "\n")
}
