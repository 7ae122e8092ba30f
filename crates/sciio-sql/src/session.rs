//! [`SqlSession`]: SQL over files, their names used as tables (`FROM 'run.h5:/t'`).

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::datasource::file_format::options::ParquetReadOptions;
use datafusion::logical_expr::Expr;
use datafusion::prelude::{ident, SessionConfig, SessionContext};
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
    /// A session with DataFusion's defaults, except that:
    /// - Parquet strings and binaries are read as plain `Utf8`/`Binary` (no view types), as
    ///   the rest of sciio holds them;
    /// - plans have one partition, so a result without `ORDER BY` (a filter, a `LIMIT`) comes
    ///   in the file's row order, as pandas filtering the frame gives it (DuckDB's
    ///   `preserve_insertion_order`). Queries run on one thread, so more partitions would buy
    ///   no parallelism, only a merge of row ranges in whatever order they finish.
    pub fn new() -> Result<SqlSession> {
        let config = SessionConfig::new()
            .set_bool(
                "datafusion.execution.parquet.schema_force_view_types",
                false,
            )
            .with_target_partitions(1);
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

    /// Runs `sql` (one statement); the tables it names that are files are opened first. A
    /// result of no rows is one empty batch of the result's schema (its columns and types:
    /// what a zero-row source gives), never an empty list.
    pub fn query(&self, sql: &str) -> Result<Vec<RecordBatch>> {
        self.register_named_files(sql)?;
        let (schema, batches) = self
            .runtime
            .block_on(async {
                let frame = self.ctx.sql(sql).await?;
                let schema: Arc<Schema> = Arc::new(frame.schema().as_arrow().clone());
                Ok::<_, datafusion::error::DataFusionError>((schema, frame.collect().await?))
            })
            .map_err(from_df)?;
        if batches.is_empty() {
            return Ok(vec![plain_types(RecordBatch::new_empty(schema))?]);
        }
        batches.into_iter().map(plain_types).collect()
    }

    /// Runs `sql` and writes its result to the Parquet file `out` (atomically, with pandas
    /// metadata: `pd.read_parquet(out)` gives the result with a RangeIndex); returns the rows.
    /// The result's batches are written as the query gives them, never all held.
    pub fn query_to_parquet(&self, sql: &str, out: &Path) -> Result<usize> {
        use futures::StreamExt;
        self.register_named_files(sql)?;
        sciio::write_atomically(out, |sink| {
            self.runtime.block_on(async {
                let frame = self.ctx.sql(sql).await.map_err(from_df)?;
                let schema: Arc<Schema> = Arc::new(frame.schema().as_arrow().clone());
                let mut stream = frame.execute_stream().await.map_err(from_df)?;
                let (mut writer, mut sink) = (None, Some(sink));
                let mut rows = 0;
                while let Some(batch) = stream.next().await {
                    let batch = plain_types(batch.map_err(from_df)?)?;
                    rows += batch.num_rows();
                    result_writer(&mut writer, &mut sink, &batch)?.write(&batch)?;
                }
                if writer.is_none() {
                    // No batch: the result's (empty) frame, as `query` gives it.
                    let empty = plain_types(RecordBatch::new_empty(schema))?;
                    result_writer(&mut writer, &mut sink, &empty)?.write(&empty)?;
                }
                match writer {
                    Some(writer) => writer.finish().map(|()| rows),
                    None => Err(Error::mismatch("a query gave no result schema")),
                }
            })
        })
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
        let index = pandas_index_columns(&path);
        if index.is_empty() {
            return self
                .runtime
                .block_on(
                    self.ctx
                        .register_parquet(TableReference::bare(name), path_text, options),
                )
                .map_err(|e| from_df(e).with_file(&path));
        }
        // The index columns renamed and first, the data columns after them: a view over
        // DataFusion's reader (projection and filters still reach the Parquet scan).
        let frame = self
            .runtime
            .block_on(self.ctx.read_parquet(path_text, options))
            .map_err(|e| from_df(e).with_file(&path))?;
        let stored: Vec<String> = frame
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let mut columns: Vec<Expr> = Vec::new();
        for (field, shown) in index_names(&index, &stored) {
            columns.push(ident(field).alias(shown));
        }
        let index_fields: Vec<&String> = index.iter().flatten().map(|(f, _)| f).collect();
        for field in stored.iter().filter(|f| !index_fields.contains(f)) {
            columns.push(ident(field));
        }
        let view = frame
            .select(columns)
            .map_err(|e| from_df(e).with_file(&path))?
            .into_view();
        self.register_table(name, view)
    }
}

/// The pandas index levels of a Parquet file stored as columns (`index_columns` of its
/// `pandas` metadata that name a field), in level order: `None` for a level kept as a
/// RangeIndex in the metadata only (no column holds it). A file without pandas metadata,
/// or whose metadata does not parse, has none (its columns keep their stored names; what
/// is wrong with the file DataFusion's reader then says).
fn pandas_index_columns(path: &Path) -> Vec<Option<(String, Option<String>)>> {
    use sciio::pandas::parquet::file::reader::{FileReader, SerializedFileReader};
    use sciio::pandas::{IndexDescriptor, PandasMetadata};
    let Some(meta) = std::fs::File::open(path)
        .ok()
        .and_then(|f| SerializedFileReader::new(f).ok())
        .and_then(|r| {
            let kv = r.metadata().file_metadata().key_value_metadata()?;
            let json = kv.iter().find(|k| k.key == "pandas")?.value.clone()?;
            PandasMetadata::parse(json.as_bytes()).ok()
        })
    else {
        return Vec::new();
    };
    let levels: Vec<Option<(String, Option<String>)>> = meta
        .index_columns
        .iter()
        .map(|d| match d {
            IndexDescriptor::Column(field) => {
                let name = meta
                    .columns
                    .iter()
                    .find(|c| c.field_name.as_deref() == Some(field.as_str()))
                    .and_then(|c| c.name.clone());
                Some((field.clone(), name))
            }
            IndexDescriptor::Range(_) => None,
        })
        .collect();
    if levels.iter().all(Option::is_none) {
        return Vec::new();
    }
    levels
}

/// `(stored field, shown name)` of the stored index levels, named as pandas'
/// `reset_index()` names them: the level's name, else `index` for a single level (`level_0`
/// when a column is already called `index`), `level_N` for level N of a MultiIndex.
fn index_names(
    levels: &[Option<(String, Option<String>)>],
    stored: &[String],
) -> Vec<(String, String)> {
    let single = levels.len() == 1;
    let taken = stored.iter().any(|f| f == "index");
    levels
        .iter()
        .enumerate()
        .filter_map(|(i, level)| {
            let (field, name) = level.as_ref()?;
            let shown = match name {
                Some(n) => n.clone(),
                None if single && !taken => "index".to_string(),
                None => format!("level_{i}"),
            };
            Some((field.clone(), shown))
        })
        .filter(|(field, _)| stored.contains(field))
        .collect()
}

/// `batch` with view types (`Utf8View`, `BinaryView`) cast to the plain ones, which the
/// Parquet writer and the printer take.
/// The Parquet writer of a query's result, made into `sink` for the first batch's schema.
fn result_writer<'w, W: std::io::Write + Send>(
    writer: &'w mut Option<ParquetWriter<W>>,
    sink: &mut Option<W>,
    first: &RecordBatch,
) -> Result<&'w mut ParquetWriter<W>> {
    if writer.is_none() {
        let out = sink
            .take()
            .ok_or_else(|| Error::mismatch("the result's writer is gone"))?;
        let frame_schema = FrameSchema::infer(&first.schema(), Vec::new());
        *writer = Some(ParquetWriter::new(
            out,
            &frame_schema,
            &ParquetOptions::default(),
        ));
    }
    writer
        .as_mut()
        .ok_or_else(|| Error::mismatch("the result's writer is gone"))
}

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
