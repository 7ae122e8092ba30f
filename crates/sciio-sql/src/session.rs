//! [`SqlSession`]: SQL over files, their names used as tables (`FROM 'run.h5:/t'`).

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::datasource::file_format::options::ParquetReadOptions;
use datafusion::prelude::{SessionConfig, SessionContext};
use sciio::pandas::{FrameSchema, ParquetOptions, ParquetWriter};
use sciio::{Error, Format, Result, Target};

use crate::error::from_df;
use crate::table::FileTable;

/// A DataFusion session that reads sciio's formats: a table named like a file on the command
/// line (`'run.h5:/t'`, `'x.npy'`, `'store.h5:/df'`, `'f.parquet'`, single-quoted in the SQL)
/// is opened when a query names it; [`SqlSession::register`] gives one a short name.
/// Parquet files are read by DataFusion's own reader (row groups, projection and predicate
/// pushdown); the other formats through [`FileTable`]. Queries run on a runtime owned by the
/// session and return every result batch.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("m.parquet");
/// # let ids = sciio::pandas::arrow_array::Int64Array::from(vec![3, 1, 2]);
/// # let frame = sciio::pandas::Frame::builder().column("id", std::sync::Arc::new(ids)).build()?;
/// # sciio::pandas::write_frame(&path, &frame, &Default::default())?;
/// let session = sciio_sql::SqlSession::new()?;
/// let sql = format!("SELECT max(id) AS top FROM '{}'", path.display());
/// let batches = session.query(&sql)?;
/// assert_eq!(sciio_sql::format_table(&batches)?.lines().nth(3), Some("│   3 │"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SqlSession {
    ctx: SessionContext,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for SqlSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlSession")
            .field("session_id", &self.ctx.session_id())
            .finish_non_exhaustive()
    }
}

impl SqlSession {
    /// A session with DataFusion's defaults, except that Parquet strings and binaries are
    /// read as plain `Utf8`/`Binary` (no view types), as the rest of sciio holds them.
    pub fn new() -> Result<SqlSession> {
        let config = SessionConfig::new().set_bool(
            "datafusion.execution.parquet.schema_force_view_types",
            false,
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(|e| Error::io("cannot start the query runtime", e))?;
        Ok(SqlSession {
            ctx: SessionContext::new_with_config(config),
            runtime,
        })
    }

    /// The DataFusion context, for what this type does not wrap (UDFs, settings).
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// Makes the table `FILE[:NODE]` (as [`Target::parse`] reads it) known as `name`.
    pub fn register(&self, name: &str, target: &str) -> Result<()> {
        let target = Target::parse(target);
        if Format::detect(&target.file)? == Format::Parquet {
            return self.register_parquet(name, &target);
        }
        let table = FileTable::open_node(&target.file, target.node.as_deref())?;
        self.register_table(name, Arc::new(table))
    }

    /// Makes `table` known as `name`.
    pub fn register_table(&self, name: &str, table: Arc<dyn TableProvider>) -> Result<()> {
        // Bare: a file name's dots are no catalog or schema separators.
        self.ctx
            .register_table(TableReference::bare(name), table)
            .map_err(from_df)?;
        Ok(())
    }

    /// Runs `sql` (one statement); the tables it names that are files are opened first.
    pub fn query(&self, sql: &str) -> Result<Vec<RecordBatch>> {
        self.register_named_files(sql)?;
        let batches = self
            .runtime
            .block_on(async { self.ctx.sql(sql).await?.collect().await })
            .map_err(from_df)?;
        batches.into_iter().map(plain_types).collect()
    }

    /// Runs `sql` and writes its result to the Parquet file `out` (atomically, with pandas
    /// metadata: `pd.read_parquet(out)` gives the result with a RangeIndex); returns the rows.
    pub fn query_to_parquet(&self, sql: &str, out: &Path) -> Result<usize> {
        let batches = self.query(sql)?;
        let schema = match batches.first() {
            Some(b) => b.schema(),
            None => self.result_schema(sql)?,
        };
        let rows = batches.iter().map(RecordBatch::num_rows).sum();
        let frame_schema = FrameSchema::infer(&schema, Vec::new());
        sciio::write_atomically(out, |sink| {
            let mut writer = ParquetWriter::new(sink, &frame_schema, &ParquetOptions::default());
            for batch in &batches {
                writer.write(batch)?;
            }
            writer.finish()
        })?;
        Ok(rows)
    }

    /// The result schema of `sql`, with the types [`SqlSession::query`] returns.
    fn result_schema(&self, sql: &str) -> Result<Arc<Schema>> {
        let frame = self.runtime.block_on(self.ctx.sql(sql)).map_err(from_df)?;
        let fields: Vec<Field> = frame
            .schema()
            .fields()
            .iter()
            .map(|f| Field::new(f.name(), plain_type(f.data_type()), f.is_nullable()))
            .collect();
        Ok(Arc::new(Schema::new(fields)))
    }

    /// Registers every table `sql` names that is not known yet and names a file.
    fn register_named_files(&self, sql: &str) -> Result<()> {
        let state = self.ctx.state();
        let dialect = state.config().options().sql_parser.dialect;
        let statement = state.sql_to_statement(sql, &dialect).map_err(from_df)?;
        let references = state
            .resolve_table_references(&statement)
            .map_err(from_df)?;
        for reference in references {
            let name = reference.table();
            let known = self.ctx.table_exist(reference.clone()).map_err(from_df)?;
            if known || reference.schema().is_some() {
                continue;
            }
            if Path::new(&Target::parse(name).file).is_file() {
                self.register(name, name)?;
            }
        }
        Ok(())
    }

    /// A Parquet file through DataFusion's reader (whatever its file name's extension).
    fn register_parquet(&self, name: &str, target: &Target) -> Result<()> {
        if let Some(node) = target
            .node
            .as_deref()
            .filter(|n| !n.trim_matches('/').is_empty())
        {
            return Err(Error::not_found(format!(
                "a Parquet file is one table without nodes; drop ':{node}'"
            ))
            .with_file(&target.file));
        }
        let path = std::fs::canonicalize(&target.file)
            .map_err(|e| Error::io("cannot open", e).with_file(&target.file))?;
        let path_text = path.to_str().ok_or_else(|| {
            Error::invalid_input("a file name that is not UTF-8").with_file(&path)
        })?;
        let options = ParquetReadOptions {
            file_extension: "",
            ..Default::default()
        };
        self.runtime
            .block_on(
                self.ctx
                    .register_parquet(TableReference::bare(name), path_text, options),
            )
            .map_err(|e| from_df(e).with_file(&path))
    }
}

/// `batch` with view types (`Utf8View`, `BinaryView`) cast to the plain ones, which the
/// Parquet writer and the printer take.
fn plain_types(batch: RecordBatch) -> Result<RecordBatch> {
    if !batch
        .schema()
        .fields()
        .iter()
        .any(|f| plain_type(f.data_type()) != *f.data_type())
    {
        return Ok(batch);
    }
    let schema = batch.schema();
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let to = plain_type(field.data_type());
        columns.push(cast(column, &to).map_err(|e| Error::mismatch(e.to_string()))?);
        fields.push(Field::new(field.name(), to, field.is_nullable()));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| Error::mismatch(e.to_string()))
}

fn plain_type(t: &DataType) -> DataType {
    match t {
        DataType::Utf8View => DataType::Utf8,
        DataType::BinaryView => DataType::Binary,
        other => other.clone(),
    }
}
