//! [`FileTable`]: a DataFusion [`TableProvider`] over a table-like node of a numpy, PyTables
//! or pandas HDFStore file, with projection and limit pushed into the reads.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::error::Result as DfResult;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::ExecutionPlan;
use sciio::{Result, Target};

use crate::error::to_df;
use crate::source::{ReadStats, Source};

/// A table-like node of a file as a DataFusion table: a `.npy` or `.npz` member (structured
/// or plain), a PyTables `Table` or array (rows along the first axis), or a pandas HDFStore
/// key (the columns of `pd.read_hdf(f, key).reset_index()`). Parquet files are read by
/// DataFusion's own reader ([`crate::SqlSession`] registers them so).
///
/// A scan reads only the rows up to the query's limit, in blocks of 65,536 rows, on a
/// blocking thread, and only the projected fields: of an HDF5 table only their bytes are
/// converted, of a store `table` key only the fields holding them are read, of a `.npy`/`.npz`
/// (records interleaved on disk) whole records are read and only the projected fields become
/// Arrow columns ([`FileTable::stats`] counts what was read).
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("run.h5");
/// # let ids = sciio::pandas::arrow_array::Int64Array::from_iter_values(0..100);
/// # let x = sciio::pandas::arrow_array::Float64Array::from_iter_values((0..100).map(f64::from));
/// # let frame = sciio::pandas::Frame::builder()
/// #     .column("id", std::sync::Arc::new(ids))
/// #     .column("x", std::sync::Arc::new(x))
/// #     .build()?;
/// # sciio::frames::write_pytables_table(&frame, &path, "/t", None)?;
/// use sciio_sql::{FileTable, SqlSession};
/// let table = std::sync::Arc::new(FileTable::open_node(&path, Some("/t"))?);
/// let session = SqlSession::new()?;
/// session.register_table("runs", table.clone())?;
/// let batches = session.query("SELECT x FROM runs LIMIT 5")?;
/// assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 5);
/// // Only the rows up to the limit were read, and only the field `x` became a column.
/// assert_eq!((table.stats().rows_read(), table.stats().columns_built()), (5, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FileTable {
    source: Source,
    stats: Arc<ReadStats>,
}

impl FileTable {
    /// The table named by `target`: `FILE` (a `.npy`, or a file holding one array) or
    /// `FILE:NODE` (an HDF5 node or store key, an `.npz` member), as the command line names
    /// them ([`Target::parse`]).
    pub fn open(target: &str) -> Result<FileTable> {
        let target = Target::parse(target);
        FileTable::open_node(&target.file, target.node.as_deref())
    }

    /// The table at `node` of `path` (`None`: the file's one array).
    pub fn open_node(path: &Path, node: Option<&str>) -> Result<FileTable> {
        Ok(FileTable {
            source: Source::open(path, node)?,
            stats: Arc::default(),
        })
    }

    /// What the scans of this table have read so far.
    pub fn stats(&self) -> &ReadStats {
        &self.stats
    }
}

#[async_trait]
impl TableProvider for FileTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.source.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let schema = match projection {
            Some(columns) => Arc::new(self.source.schema.project(columns)?),
            None => Arc::clone(&self.source.schema),
        };
        let partition: Arc<dyn PartitionStream> = Arc::new(Partition {
            source: self.source.clone(),
            projection: projection.cloned(),
            limit,
            schema: Arc::clone(&schema),
            stats: Arc::clone(&self.stats),
        });
        // The partition already projects: the scan node is told of no projection again.
        Ok(Arc::new(StreamingTableExec::try_new(
            schema,
            vec![partition],
            None,
            [],
            false,
            limit,
        )?))
    }
}

/// One scan of a [`FileTable`]: its projection and limit, read on a blocking thread.
#[derive(Debug)]
struct Partition {
    source: Source,
    projection: Option<Vec<usize>>,
    limit: Option<usize>,
    schema: SchemaRef,
    stats: Arc<ReadStats>,
}

impl PartitionStream for Partition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let mut builder = RecordBatchReceiverStream::builder(Arc::clone(&self.schema), 2);
        let tx = builder.tx();
        let batches =
            self.source
                .batches(self.projection.clone(), self.limit, Arc::clone(&self.stats));
        let schema = Arc::clone(&self.schema);
        builder.spawn_blocking(move || {
            for batch in batches {
                let batch = batch.map_err(to_df).and_then(|b| conform(b, &schema));
                let failed = batch.is_err();
                // A closed channel: the query needs no more rows (a limit was reached).
                if tx.blocking_send(batch).is_err() || failed {
                    break;
                }
            }
            Ok(())
        });
        builder.build()
    }
}

/// `batch` with the scan's schema (same names and types; an Arrow type that differs from the
/// first block's is an error naming it).
fn conform(batch: RecordBatch, schema: &SchemaRef) -> DfResult<RecordBatch> {
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        Arc::clone(schema),
        batch.columns().to_vec(),
        &options,
    )?)
}
