//! `ReadOptions::fields`: a reader decoding some fields gives, batch by batch, the arrays the
//! whole reader gives for those fields (index columns included), with the whole frame's
//! schema; `footer_null_counts` are the null counts of pyarrow's row group statistics, `None`
//! for a file written without statistics.

use arrow_array::{Array, RecordBatch};
use sciio_pandas::{ParquetReader, ReadOptions};
use sciio_testkit::{run_python, tempdir};

const WRITE: &str = r#"
import sys, pandas as pd, numpy as np, pyarrow.parquet as pq
n = 1000
k = np.arange(n)
df = pd.DataFrame({
    'i': k,
    's': pd.array([None if v % 7 == 0 else 'v%d' % v for v in k], dtype='str'),
    'f': np.where(k % 5 == 0, np.nan, k / 3),
    'c': pd.Categorical(['a', 'b', None, 'c'] * (n // 4)),
    'td': pd.to_timedelta(k, unit='s'),
    'b': k % 2 == 0,
}, index=pd.Index(['r%d' % v for v in k], name='key'))
df.to_parquet(sys.argv[1], row_group_size=300)
df.to_parquet(sys.argv[2], row_group_size=300, write_statistics=False)
m = pq.ParquetFile(sys.argv[1]).metadata
for j in range(m.num_columns):
    name = m.schema.column(j).name
    print(name, sum(m.row_group(g).column(j).statistics.null_count
                    for g in range(m.num_row_groups)))
"#;

fn batches(reader: ParquetReader) -> Vec<RecordBatch> {
    reader.collect::<Result<Vec<_>, _>>().unwrap()
}

#[test]
fn selected_fields_are_the_whole_readers_and_footer_counts_pyarrows() {
    let dir = tempdir();
    let with = dir.path().join("with.parquet");
    let without = dir.path().join("without.parquet");
    let out = run_python(WRITE, &[with.to_str().unwrap(), without.to_str().unwrap()]);
    let whole = ParquetReader::open(&with).unwrap();
    let schema = whole.schema().clone();
    let arrow = schema.arrow_schema().clone();
    let pos = |name: &str| arrow.index_of(name).unwrap();

    // Footer counts, as pyarrow's statistics give them, by field name.
    let counts = whole.footer_null_counts().to_vec();
    assert_eq!(counts.len(), arrow.fields().len());
    for line in out.lines() {
        let (name, n) = line.split_once(' ').unwrap();
        assert_eq!(counts[pos(name)], Some(n.parse().unwrap()), "field {name}");
    }
    let full = batches(whole);

    // The index column (`key`), a categorical, a string: out of order, one twice.
    let wanted = vec![pos("c"), pos("key"), pos("s"), pos("key")];
    let mut sorted = wanted.clone();
    sorted.sort_unstable();
    sorted.dedup();
    let options = ReadOptions::new().fields(wanted);
    let projected = ParquetReader::open_with(&with, &options).unwrap();
    assert_eq!(projected.schema(), &schema);
    assert_eq!(projected.batch_fields(), sorted.as_slice());
    let part = batches(projected);
    assert_eq!(part.len(), full.len());
    for (p, f) in part.iter().zip(&full) {
        assert_eq!(p.num_columns(), sorted.len());
        assert_eq!(p.num_rows(), f.num_rows());
        for (col, &at) in p.columns().iter().zip(&sorted) {
            assert_eq!(
                p.schema()
                    .field(sorted.iter().position(|&x| x == at).unwrap()),
                arrow.field(at)
            );
            assert_eq!(
                col.to_data(),
                f.column(at).to_data(),
                "field {}",
                arrow.field(at).name()
            );
        }
    }
    // Every field's null count in the whole read is the footer's.
    for (at, n) in counts.iter().enumerate() {
        let read: usize = full.iter().map(|b| b.column(at).null_count()).sum();
        assert_eq!(*n, Some(read as u64), "field {}", arrow.field(at).name());
    }

    let bare = ParquetReader::open(&without).unwrap();
    assert!(bare.footer_null_counts().iter().all(Option::is_none));

    let e = ParquetReader::open_with(&with, &ReadOptions::new().fields(vec![99])).unwrap_err();
    assert!(e.to_string().contains("field 99"), "{e}");
}
