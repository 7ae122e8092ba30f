//! String columns read as dictionaries (`ReadOptions::dictionary_strings`) and written back by
//! `ParquetWriter` from their keys and values: pandas reads the same frame as when the strings
//! are read and written one by one, pyarrow the same schema (pandas metadata included), and
//! each chunk's statistics are those of the values its rows use. The source files are written
//! by pyarrow: row groups smaller than the copy's (a copied row group joins several source
//! dictionaries), missing strings, a column whose dictionary overflows into plain pages, a
//! categorical, a plain-encoded string column, with and without a categorical in the file.

use std::path::Path;

use arrow_schema::DataType;
use sciio_pandas::{ParquetOptions, ParquetReader, ParquetWriter, ReadOptions};
use sciio_testkit::{run_python, tempdir};

/// Writes the source file: `argv[1]` path, `argv[2]` "cat" to add a categorical column.
const SOURCE: &str = r#"
import sys, numpy as np, pandas as pd, pyarrow as pa, pyarrow.parquet as pq
path, with_cat = sys.argv[1], sys.argv[2] == "cat"
n = 50_000
k = np.arange(n)
words = np.array([f"word_{i:05d}" for i in range(1500)], dtype=object)
s = pd.Series(words[(k * 7919) % 1000], dtype=object)
s[k % 23 == 0] = None
cols = {
    "i": k,
    # dictionary-encoded, some rows missing, each source row group its own dictionary
    "s": s,
    # pandas' str dtype (large_string in Arrow)
    "t": pd.Series(words[(k // 3) % 500], dtype="str"),
    # many distinct values: the dictionary page overflows, later pages are plain
    "u": pd.Series([f"unique value {i}" for i in k], dtype=object),
    # plain-encoded (use_dictionary below leaves it out)
    "p": pd.Series(words[k % 700], dtype=object),
    # long strings: statistics are truncated by writers, left out by sciio's dictionary chunks
    "long": pd.Series(["x" * 70 + str(i % 50) for i in k], dtype=object),
}
if with_cat:
    cols["c"] = pd.Categorical.from_codes(k % 5, categories=list("abcdef"))
df = pd.DataFrame(cols)
table = pa.Table.from_pandas(df, preserve_index=False)
dictionary = [c for c in df.columns if c != "p"]
pq.write_table(table, path, row_group_size=7_000, use_dictionary=dictionary,
               dictionary_pagesize_limit=20_000, compression="zstd")
print("ok")
"#;

/// Compares the two copies: `argv[1]` dictionary pass-through, `argv[2]` plain path.
const COMPARE: &str = r#"
import sys, pandas as pd, pyarrow.parquet as pq
a, b = sys.argv[1], sys.argv[2]
pd.testing.assert_frame_equal(pd.read_parquet(a), pd.read_parquet(b), check_dtype=True)
sa, sb = pq.read_schema(a), pq.read_schema(b)
assert sa.equals(sb, check_metadata=True), (sa, sb)
ma, mb = pq.ParquetFile(a).metadata, pq.ParquetFile(b).metadata
assert ma.num_row_groups == mb.num_row_groups
checked = 0
for g in range(ma.num_row_groups):
    ga, gb = ma.row_group(g), mb.row_group(g)
    assert ga.num_rows == gb.num_rows
    for c in range(ga.num_columns):
        ca, cb = ga.column(c), gb.column(c)
        if ca.physical_type != "BYTE_ARRAY":
            continue
        sa, sb = ca.statistics, cb.statistics
        if ca.path_in_schema == "c":
            # the categorical: its categories as they are, no statistics on either path
            assert sa is None and sb is None, (g, sa, sb)
            continue
        assert sa is not None and sb is not None, (g, ca.path_in_schema, sa, sb)
        assert sa.null_count == sb.null_count, (g, ca.path_in_schema, sa, sb)
        if sa.has_min_max:
            assert (sa.min, sa.max) == (sb.min, sb.max), (g, ca.path_in_schema, sa, sb)
            checked += 1
        else:
            # left out only where the plain path's writer truncated them
            assert len(sb.min) >= 64 or len(sb.max) >= 64, (g, ca.path_in_schema, sb)
print("ok", ma.num_row_groups, checked)
"#;

/// Copies `src` to `dst` as `sciio convert` does, string columns read as dictionaries or not;
/// returns the fields the batches held as dictionaries.
fn copy(src: &Path, dst: &Path, dictionaries: bool) -> Vec<String> {
    let read = ReadOptions::new().dictionary_strings(dictionaries);
    let reader = ParquetReader::open_with(src, &read).unwrap();
    let schema = reader.schema().clone();
    let options = ParquetOptions::new().row_group_rows(20_000).threads(2);
    let mut writer = ParquetWriter::create(dst, &schema, &options).unwrap();
    let mut as_dictionary = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        for (field, frame_field) in batch
            .schema()
            .fields()
            .iter()
            .zip(schema.arrow_schema().fields())
        {
            let dictionary = matches!(field.data_type(), DataType::Dictionary(..))
                && !matches!(frame_field.data_type(), DataType::Dictionary(..));
            if dictionary && !as_dictionary.contains(field.name()) {
                as_dictionary.push(field.name().clone());
            }
        }
        writer.write(&batch).unwrap();
    }
    writer.finish().unwrap();
    as_dictionary
}

#[test]
fn strings_passed_through_as_dictionaries_read_as_the_plain_copy() {
    let dir = tempdir();
    for with_cat in ["cat", "no-cat"] {
        let src = dir.path().join(format!("source-{with_cat}.parquet"));
        let out = run_python(SOURCE, &[src.to_str().unwrap(), with_cat]);
        assert_eq!(out.trim(), "ok");
        let passed = dir.path().join(format!("dictionary-{with_cat}.parquet"));
        let plain = dir.path().join(format!("plain-{with_cat}.parquet"));
        let mut as_dictionary = copy(&src, &passed, true);
        as_dictionary.sort();
        // the plain-encoded column and the one whose dictionary overflowed into plain pages
        // are read as strings; the others as the file's dictionaries
        assert_eq!(as_dictionary, ["long", "s", "t"], "{with_cat}");
        assert!(copy(&src, &plain, false).is_empty());
        let out = run_python(
            COMPARE,
            &[passed.to_str().unwrap(), plain.to_str().unwrap()],
        );
        // 3 row groups, min/max compared for s, t, u, p in each (long's are left out)
        assert_eq!(out.trim(), "ok 3 12", "{with_cat}: {out}");
    }
}
