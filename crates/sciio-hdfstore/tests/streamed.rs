//! `write_streamed` (two passes over a Parquet file's record batches) writes the `table` key
//! `write` writes from the whole frame, byte for byte, new keys and appends alike, whatever the
//! batch length; and pandas reads it back as the Parquet file's frame. The same for `fixed`
//! keys (number blocks and the index filled slab by slab, object blocks pickled as the rows
//! come).

use std::path::Path;

use sciio_core::Result;
use sciio_hdfstore::{write, write_streamed, FramePasses, WriteOptions};
use sciio_pandas::arrow_array::RecordBatch;
use sciio_pandas::{ParquetReader, ReadOptions};
use sciio_testkit::{run_python, tempdir};

/// A Parquet file read batch by batch, `batch` rows at a time, once per pass; the first pass
/// gives the batches last first (it may give them in any order).
struct Batches<'a> {
    file: &'a Path,
    batch: usize,
    passes: usize,
}

impl FramePasses for Batches<'_> {
    fn pass(&mut self) -> Result<Box<dyn Iterator<Item = Result<RecordBatch>> + '_>> {
        self.passes += 1;
        let reader =
            ParquetReader::open_with(self.file, &ReadOptions::new().batch_size(self.batch))?;
        if self.passes == 1 {
            let mut batches: Vec<_> = reader.collect();
            batches.reverse();
            return Ok(Box::new(batches.into_iter()));
        }
        Ok(Box::new(reader))
    }
}

/// pandas' frame in several row groups: the longest string in the last, a missing string in
/// a middle one, a literal "nan" (the sentinel becomes `_nan_`), a categorical with a missing
/// value, a tz-aware datetime, bool, int and float columns, a named index of strings.
const SOURCE: &str = r#"
import sys, pandas as pd, numpy as np
n = 200
s = ['v' + str(k % 13) for k in range(n)]
s[5] = 'nan'
s[97] = None
s[190] = 'the longest string, in the last row group ' + 'x' * 40
df = pd.DataFrame({
    'i': np.arange(n, dtype='int64') * 3,
    'b': np.arange(n) % 3 == 0,
    'f': np.linspace(0, 1, n),
    's': pd.array(s, dtype='str'),
    'c': pd.Categorical((['lo', 'mid', 'hi'] * n)[:n], categories=['hi', 'mid', 'lo']),
    't': pd.date_range('2024-03-30', periods=n, freq='7h', tz='Europe/Paris'),
    'u': pd.array(['w' * (k % 5) for k in range(n)], dtype='str'),
}, index=pd.Index(['r%d' % k for k in range(n)], name='row'))
df.loc[df.index[120], 'c'] = None
df.to_parquet(sys.argv[1], row_group_size=60)
"#;

/// pd.read_hdf(key) equals the Parquet frame (repeated `times`), dtypes included.
const CHECK: &str = r#"
import sys, pandas as pd
src = pd.read_parquet(sys.argv[1])
want = pd.concat([src] * int(sys.argv[4]))
got = pd.read_hdf(sys.argv[2], sys.argv[3])
pd.testing.assert_frame_equal(got, want, check_dtype=True)
print('ok')
"#;

/// The file's bytes but the times HDF5 keeps in its object headers (access, modification,
/// change, birth: PyTables tracks them, so two writes a second apart differ there) and the
/// headers' checksums over them, zeroed.
fn read(path: &Path) -> Vec<u8> {
    let mut b = std::fs::read(path).unwrap();
    let mut at = 0;
    while let Some(i) = find(&b[at..], b"OHDR\x02").map(|i| i + at) {
        let flags = b[i + 5];
        let mut p = i + 6;
        if flags & 0x20 != 0 {
            b[p..p + 16].fill(0);
            p += 16;
        }
        if flags & 0x10 != 0 {
            p += 4;
        }
        let width = 1usize << (flags & 3);
        let mut size = [0u8; 8];
        size[..width].copy_from_slice(&b[p..p + width]);
        let end = p + width + usize::try_from(u64::from_le_bytes(size)).unwrap();
        b[end..end + 4].fill(0);
        at = i + 4;
    }
    b
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn streamed_keys_are_the_whole_frame_keys() {
    let dir = tempdir();
    let src = dir.path().join("src.parquet");
    run_python(SOURCE, &[src.to_str().unwrap()]);
    let frame = sciio_pandas::read_frame(&src).unwrap();
    for data_columns in ["", "s,t"] {
        let options = WriteOptions {
            data_columns: data_columns.parse().unwrap(),
            ..WriteOptions::default()
        };
        let whole = dir.path().join(format!("whole{}.h5", data_columns.len()));
        write(&whole, "/df", &frame, &options).unwrap();
        for batch in [7, 60, 1000] {
            let streamed = dir
                .path()
                .join(format!("streamed{}-{batch}.h5", data_columns.len()));
            let mut passes = Batches {
                file: &src,
                batch,
                passes: 0,
            };
            let rows = frame.num_rows() as u64;
            let written = write_streamed(
                &streamed,
                "/df",
                frame.schema(),
                rows,
                &mut passes,
                &options,
            )
            .unwrap();
            assert_eq!((written.rows, written.total_rows), (rows, rows));
            assert_eq!(passes.passes, 2, "a first pass plans, a second writes");
            assert!(
                read(&whole) == read(&streamed),
                "data columns {data_columns:?}, batches of {batch}: the files differ"
            );
            let out = run_python(
                CHECK,
                &[
                    src.to_str().unwrap(),
                    streamed.to_str().unwrap(),
                    "/df",
                    "1",
                ],
            );
            assert_eq!(out.trim(), "ok");
        }
    }
}

#[test]
fn streamed_appends_are_the_whole_frame_appends() {
    let dir = tempdir();
    let src = dir.path().join("src.parquet");
    run_python(SOURCE, &[src.to_str().unwrap()]);
    let frame = sciio_pandas::read_frame(&src).unwrap();
    let first = dir.path().join("first.h5");
    write(&first, "/df", &frame, &WriteOptions::default()).unwrap();
    let append = WriteOptions {
        append: true,
        ..WriteOptions::default()
    };
    let whole = dir.path().join("whole.h5");
    std::fs::copy(&first, &whole).unwrap();
    write(&whole, "/df", &frame, &append).unwrap();
    let streamed = dir.path().join("streamed.h5");
    std::fs::copy(&first, &streamed).unwrap();
    let mut passes = Batches {
        file: &src,
        batch: 33,
        passes: 0,
    };
    let rows = frame.num_rows() as u64;
    let written =
        write_streamed(&streamed, "/df", frame.schema(), rows, &mut passes, &append).unwrap();
    assert_eq!((written.rows, written.total_rows), (rows, 2 * rows));
    assert!(read(&whole) == read(&streamed), "the appended files differ");
    let out = run_python(
        CHECK,
        &[
            src.to_str().unwrap(),
            streamed.to_str().unwrap(),
            "/df",
            "2",
        ],
    );
    assert_eq!(out.trim(), "ok");
}

/// A frame for the fixed format in several row groups: number blocks of several dtypes
/// (int64, int32 (with a missing value in the `nulls` variant: float64 for pandas), uint8, float32, float64, bool,
/// timedelta), a tz-aware datetime column (a block of its own), a string column with a
/// missing value and a literal "nan", a date column (pickled objects), a DatetimeIndex.
const FIXED_SOURCE: &str = r#"
import sys, datetime, pandas as pd, numpy as np
n = 230
s = ['w' + str(k % 11) for k in range(n)]
s[3] = 'nan'
s[150] = None
df = pd.DataFrame({
    'i': np.arange(n, dtype='int64') * 3,
    'j': np.arange(n, dtype='int32'),
    'u': (np.arange(n) % 250).astype('uint8'),
    'f': np.linspace(0, 1, n).astype('float32'),
    'g': np.linspace(-1, 1, n),
    'b': np.arange(n) % 3 == 0,
    'd': pd.to_timedelta(np.arange(n), unit='s'),
    'z': pd.date_range('2024-03-30', periods=n, freq='7h', tz='Europe/Paris'),
    's': pd.array(s, dtype='str'),
    'h': [datetime.date(2020, 1, 1) + datetime.timedelta(days=k) for k in range(n)],
    'k': np.arange(n, dtype='int64') * -2,
}, index=pd.date_range('2021-01-01', periods=n, freq='min', name='when'))
if sys.argv[2] == 'nulls':
    # An int32 column with a missing value (pandas reads it as float64).
    import pyarrow as pa, pyarrow.parquet as pq
    t = pa.Table.from_pandas(df)
    t = t.set_column(1, 'j', pa.array([None if k == 77 else k for k in range(n)], pa.int32()))
    pq.write_table(t, sys.argv[1], row_group_size=70)
else:
    df.to_parquet(sys.argv[1], row_group_size=70)
"#;

#[test]
fn streamed_fixed_keys_are_the_whole_frame_keys() {
    let dir = tempdir();
    // `nulls`: an int32 column with a missing value (float64 for pandas). Either way a first
    // pass finds whether the integer columns miss values, a second writes.
    for variant in ["plain", "nulls"] {
        let src = dir.path().join(format!("{variant}.parquet"));
        run_python(FIXED_SOURCE, &[src.to_str().unwrap(), variant]);
        let frame = sciio_pandas::read_frame(&src).unwrap();
        let options = WriteOptions {
            format: sciio_hdfstore::StoreFormat::Fixed,
            ..WriteOptions::default()
        };
        let whole = dir.path().join(format!("{variant}-whole.h5"));
        write(&whole, "/df", &frame, &options).unwrap();
        for batch in [7, 70, 1000] {
            let streamed = dir.path().join(format!("{variant}-streamed-{batch}.h5"));
            let mut passes = Batches {
                file: &src,
                batch,
                passes: 0,
            };
            let rows = frame.num_rows() as u64;
            let written = write_streamed(
                &streamed,
                "/df",
                frame.schema(),
                rows,
                &mut passes,
                &options,
            )
            .unwrap();
            assert_eq!((written.rows, written.total_rows), (rows, rows));
            assert_eq!(passes.passes, 2, "{variant}");
            assert!(
                read(&whole) == read(&streamed),
                "{variant}, batches of {batch}: the files differ"
            );
        }
        let streamed = dir.path().join(format!("{variant}-streamed-7.h5"));
        let out = run_python(
            CHECK,
            &[
                src.to_str().unwrap(),
                streamed.to_str().unwrap(),
                "/df",
                "1",
            ],
        );
        assert_eq!(out.trim(), "ok", "{variant}");
    }
}

#[test]
fn fixed_keys_pandas_cannot_store_are_refused_before_writing() {
    let dir = tempdir();
    let src = dir.path().join("src.parquet");
    run_python(SOURCE, &[src.to_str().unwrap()]);
    let frame = sciio_pandas::read_frame(&src).unwrap();
    let mut passes = Batches {
        file: &src,
        batch: 50,
        passes: 0,
    };
    let options = WriteOptions {
        format: sciio_hdfstore::StoreFormat::Fixed,
        ..WriteOptions::default()
    };
    let out = dir.path().join("fixed.h5");
    let rows = frame.num_rows() as u64;
    // SOURCE has a categorical column, which the fixed format cannot hold.
    let e = write_streamed(&out, "/df", frame.schema(), rows, &mut passes, &options).unwrap_err();
    assert!(
        e.to_string().contains("Cannot store a category dtype"),
        "{e}"
    );
    assert!(!out.exists());
}
