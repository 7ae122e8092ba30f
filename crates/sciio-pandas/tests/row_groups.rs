//! `ParquetReader::open_row_groups` reads the row groups asked for, as pyarrow's
//! `read_row_groups` gives them; `data_bytes` is the footer's uncompressed size of the row
//! groups read, as pyarrow reports it (`total_byte_size`).

use sciio_pandas::{ParquetReader, ReadOptions};
use sciio_testkit::{run_python, tempdir};

#[test]
fn row_groups_read_alone_are_pyarrows() {
    let dir = tempdir();
    let path = dir.path().join("g.parquet");
    let p = path.to_str().unwrap();
    let out = run_python(
        r#"
import sys, pandas as pd, numpy as np, pyarrow.parquet as pq
n = 1000
pd.DataFrame({'i': np.arange(n), 's': ['v%d' % k for k in range(n)]}).to_parquet(
    sys.argv[1], row_group_size=300)
f = pq.ParquetFile(sys.argv[1])
m = f.metadata
print(m.num_row_groups, sum(m.row_group(g).total_byte_size for g in range(m.num_row_groups)),
      m.row_group(1).total_byte_size + m.row_group(3).total_byte_size,
      ','.join(str(v) for v in f.read_row_groups([3, 1]).column('i').to_pylist()))
"#,
        &[p],
    );
    let fields: Vec<&str> = out.split_whitespace().collect();
    let [groups, all_bytes, some_bytes, values] = fields[..] else {
        panic!("pyarrow printed {out:?}");
    };
    let whole = ParquetReader::open(&path).unwrap();
    assert_eq!(whole.num_row_groups().to_string(), groups);
    assert_eq!(whole.data_bytes().to_string(), all_bytes);
    let part = ParquetReader::open_row_groups(&path, vec![3, 1], &ReadOptions::new()).unwrap();
    assert_eq!(part.num_row_groups(), 2);
    assert_eq!(part.data_bytes().to_string(), some_bytes);
    let mut got = Vec::new();
    for batch in part {
        let batch = batch.unwrap();
        let i = batch.column_by_name("i").unwrap();
        let i = i
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        got.extend(i.values().iter().map(i64::to_string));
    }
    assert_eq!(got.join(","), values);
    let e = ParquetReader::open_row_groups(&path, vec![9], &ReadOptions::new()).unwrap_err();
    assert!(e.to_string().contains("row group 9"), "{e}");
}
