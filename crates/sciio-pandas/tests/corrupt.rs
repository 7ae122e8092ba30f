//! Bad input: corrupt metadata JSON, metadata naming missing columns, wrong types, truncated and
//! garbage files. Every case is a clean `sciio_core::Error` (or a warning where pyarrow tolerates
//! the problem), never a panic, and the data stays readable where possible.

use std::path::Path;
use std::sync::Arc;

use arrow_array::types::Int64Type;
use arrow_array::{Float64Array, Int64Array, StringArray};
use sciio_core::ErrorKind;
use sciio_pandas::{
    read_frame, write_frame, BadMetadata, Frame, IndexLevel, PandasMetadata, ParquetOptions,
    ParquetReader, ReadOptions,
};
use sciio_testkit::{run_python, tempdir};

/// Writes a two-column table (a: int64, b: string) with `pandas` metadata `meta` using pyarrow.
fn write_with_metadata(path: &Path, meta: &str) {
    let code = r#"
import sys, pyarrow as pa, pyarrow.parquet as pq
t = pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]})
t = t.replace_schema_metadata({"pandas": sys.argv[2]})
pq.write_table(t, sys.argv[1])
"#;
    run_python(code, &[path.to_str().unwrap(), meta]);
}

const GOOD_COLUMNS: &str = r#"[{"name": "a", "field_name": "a", "pandas_type": "int64", "numpy_type": "int64", "metadata": null},
 {"name": "b", "field_name": "b", "pandas_type": "unicode", "numpy_type": "object", "metadata": null}]"#;

#[test]
fn corrupt_json_is_a_format_error_or_ignored_on_request() {
    let dir = tempdir();
    let path = dir.path().join("bad.parquet");
    write_with_metadata(&path, r#"{"index_columns": [, "columns": "#);
    let err = ParquetReader::open(&path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Format, "{err}");
    assert_eq!(err.location().node.as_deref(), Some("pandas"));
    assert_eq!(err.location().file.as_deref(), Some(path.as_path()));
    assert!(err.to_string().contains("not valid JSON"), "{err}");

    let reader =
        ParquetReader::open_with(&path, &ReadOptions::new().bad_metadata(BadMetadata::Ignore))
            .unwrap();
    assert_eq!(reader.schema().warnings().len(), 1);
    let frame = reader.read_all().unwrap();
    assert!(frame.schema().index().is_empty(), "default RangeIndex");
    assert_eq!(
        frame.primitive::<Int64Type>("a").unwrap().values().to_vec(),
        vec![1, 2, 3]
    );
}

#[test]
fn wrong_types_in_metadata_are_format_errors() {
    let dir = tempdir();
    let cases = [
        (r#"[1, 2]"#, "top level"),
        (r#"{"index_columns": "a", "columns": []}"#, "index_columns"),
        (
            r#"{"index_columns": [7], "columns": []}"#,
            "index_columns[0]",
        ),
        (
            r#"{"index_columns": [{"kind": "range", "start": "0", "stop": 3, "step": 1}], "columns": []}"#,
            "start",
        ),
        (
            r#"{"index_columns": [{"kind": "range", "start": 0, "stop": 3, "step": 0}], "columns": []}"#,
            "step",
        ),
        (
            r#"{"index_columns": [{"kind": "hash"}], "columns": []}"#,
            "unknown index kind",
        ),
        (
            r#"{"index_columns": [], "columns": [{"name": "a", "pandas_type": 5}]}"#,
            "columns[0].pandas_type",
        ),
        (
            r#"{"index_columns": [], "columns": [{"name": "a", "pandas_type": "int64", "metadata": [1]}]}"#,
            "columns[0].metadata",
        ),
        (
            r#"{"index_columns": [], "columns": [], "creator": 3}"#,
            "creator",
        ),
    ];
    for (i, (meta, what)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("w{i}.parquet"));
        write_with_metadata(&path, meta);
        let err = ParquetReader::open(&path).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Format, "{meta}: {err}");
        assert!(err.to_string().contains(what), "{meta}: {err}");
        // the data is still readable when asked to ignore the metadata
        let frame =
            ParquetReader::open_with(&path, &ReadOptions::new().bad_metadata(BadMetadata::Ignore))
                .unwrap()
                .read_all()
                .unwrap();
        assert_eq!(frame.strings("b").unwrap().len(), 3);
    }
}

#[test]
fn metadata_naming_missing_columns_warns_and_reads() {
    let dir = tempdir();
    let path = dir.path().join("missing.parquet");
    let meta = format!(
        r#"{{"index_columns": ["__index_level_0__", {{"kind": "range", "name": null, "start": 0, "stop": 99, "step": 1}}],
            "column_indexes": [], "columns": {}, "pandas_version": "2.2.0"}}"#,
        GOOD_COLUMNS.replace(
            "]",
            r#", {"name": "gone", "field_name": "gone", "pandas_type": "float64", "numpy_type": "float64", "metadata": null},
                 {"name": null, "field_name": "__index_level_0__", "pandas_type": "int64", "numpy_type": "int64", "metadata": null}]"#
        )
    );
    write_with_metadata(&path, &meta);
    let frame = read_frame(&path).unwrap();
    let w = frame.schema().warnings();
    assert!(w.iter().any(|w| w.contains("\"gone\"")), "{w:?}");
    assert!(w.iter().any(|w| w.contains("__index_level_0__")), "{w:?}");
    assert!(w.iter().any(|w| w.contains("RangeIndex of 99")), "{w:?}");
    assert!(frame.schema().index().is_empty());
    assert_eq!(frame.strings("b").unwrap()[2].as_deref(), Some("z"));
    // pandas agrees: default index, both columns
    let out = run_python(
        "import sys, pandas as pd; df = pd.read_parquet(sys.argv[1]); print(list(df.columns), type(df.index).__name__)",
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "['a', 'b'] RangeIndex");
}

#[test]
fn index_of_the_right_length_is_kept() {
    let dir = tempdir();
    let path = dir.path().join("ok.parquet");
    let meta = format!(
        r#"{{"index_columns": [{{"kind": "range", "name": "r", "start": 0, "stop": 6, "step": 2}}], "columns": {GOOD_COLUMNS}}}"#
    );
    write_with_metadata(&path, &meta);
    let frame = read_frame(&path).unwrap();
    assert!(frame.schema().warnings().is_empty());
    assert!(
        matches!(frame.schema().index(), [IndexLevel::Range(r)] if r.name.as_deref() == Some("r"))
    );
}

fn sample_file_bytes() -> Vec<u8> {
    let dir = tempdir();
    let path = dir.path().join("s.parquet");
    let frame = Frame::builder()
        .column(
            "x",
            Arc::new(Float64Array::from_iter_values((0..500).map(f64::from))),
        )
        .column(
            "s",
            Arc::new(StringArray::from_iter_values(
                (0..500).map(|i| format!("v{}", i % 7)),
            )),
        )
        // a categorical: its dictionary pages are read by sciio itself (the categories)
        .categorical(
            "c",
            Arc::new(
                arrow_array::DictionaryArray::try_new(
                    arrow_array::Int8Array::from_iter_values((0..500).map(|i| (i % 3) as i8)),
                    Arc::new(StringArray::from(vec!["p", "q", "r", "unused"])),
                )
                .unwrap(),
            ),
            true,
        )
        .index_level(Some("k"), Arc::new(Int64Array::from_iter_values(0..500)))
        .build()
        .unwrap();
    write_frame(&path, &frame, &ParquetOptions::new().row_group_rows(128)).unwrap();
    std::fs::read(&path).unwrap()
}

fn read_everything(bytes: Vec<u8>) -> sciio_core::Result<usize> {
    let reader = ParquetReader::from_bytes(bytes, &ReadOptions::new().batch_size(100))?;
    let frame = reader.read_all()?;
    frame.column_arrays()?;
    Ok(frame.num_rows())
}

#[test]
fn truncated_files_are_clean_errors() {
    let bytes = sample_file_bytes();
    assert_eq!(read_everything(bytes.clone()).unwrap(), 500);
    let step = (bytes.len() / 300).max(1);
    let mut cut = 0;
    while cut < bytes.len() {
        let err = read_everything(bytes[..cut].to_vec()).unwrap_err();
        assert!(
            matches!(
                err.kind(),
                ErrorKind::Format | ErrorKind::Truncated | ErrorKind::Corrupt
            ),
            "cut at {cut}: {err}"
        );
        cut += step;
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    let bytes = sample_file_bytes();
    // flip bytes across the data pages and the footer; any outcome but a panic is fine, and an
    // error must be one of sciio's kinds with a message
    let step = (bytes.len() / 400).max(1);
    let mut errors = 0;
    for pos in (4..bytes.len() - 8).step_by(step) {
        let mut b = bytes.clone();
        b[pos] ^= 0x5a;
        if let Err(e) = read_everything(b) {
            assert!(!e.message().is_empty());
            errors += 1;
        }
    }
    assert!(errors > 0, "no corruption was detected at all");
    let garbage = b"PAR1 this is not a parquet file at all PAR1".to_vec();
    let err = read_everything(garbage).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Format | ErrorKind::Truncated),
        "{err}"
    );
    assert!(read_everything(Vec::new()).is_err());
}

#[test]
fn oversized_metadata_hits_the_header_limit() {
    let dir = tempdir();
    let path = dir.path().join("big-meta.parquet");
    let meta = format!(
        r#"{{"index_columns": [], "columns": {GOOD_COLUMNS}, "pad": "{}"}}"#,
        "x".repeat(4096)
    );
    write_with_metadata(&path, &meta);
    let limits = sciio_core::Limits::default().max_header(1024);
    let err = ParquetReader::open_with(&path, &ReadOptions::new().limits(limits)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded);
    // and with default limits it reads, keeping the unknown key for round trips
    let frame = read_frame(&path).unwrap();
    let m = frame.schema().to_pandas_metadata(&Default::default());
    assert!(m.extra.contains_key("pad"));
}

#[test]
fn metadata_parser_rejects_garbage_without_panicking() {
    for input in [
        &b""[..],
        b"null",
        b"{",
        b"{\"columns\": [{}]}",
        b"{\"index_columns\": [{\"kind\": \"range\", \"start\": 9223372036854775807, \"stop\": -9223372036854775808, \"step\": -1}]}",
        b"\xff\xfe",
    ] {
        let _ = PandasMetadata::parse(input);
    }
    let m = PandasMetadata::parse(
        br#"{"index_columns": [{"kind": "range", "start": 9223372036854775807, "stop": -9223372036854775808, "step": -1}]}"#,
    )
    .unwrap();
    let sciio_pandas::IndexDescriptor::Range(r) = &m.index_columns[0] else {
        panic!()
    };
    assert_eq!(r.len(), u64::MAX);
}

/// A fuzzer-found footer whose column chunk starts at a negative offset: the parquet crate
/// asserts on it when opening the pages; sciio refuses the file first.
#[test]
fn negative_column_chunk_offset_is_a_format_error() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/negative_chunk_offset.parquet");
    let err = read_everything(std::fs::read(path).unwrap()).expect_err("must not read");
    assert_eq!(err.kind(), ErrorKind::Format, "{err}");
    assert!(err.to_string().contains("outside the"), "{err}");
}

/// parquet-testing's repeated_no_annotation.parquet: its footer says 0 rows, its one row group
/// 6. pyarrow reads the row groups' 6 rows; so does sciio (arrow-rs alone returned none,
/// silently), with a warning about the footer. The spec-minded reading (an error) would lose
/// data pandas users get: the tool is followed.
#[test]
fn a_footer_row_count_that_disagrees_with_the_row_groups_reads_the_row_groups() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/parquet-testing/repeated_no_annotation.parquet");
    let reader = sciio_pandas::ParquetReader::open(&path).unwrap();
    assert_eq!(reader.num_rows(), 6);
    assert!(
        reader
            .schema()
            .warnings()
            .iter()
            .any(|w| w.contains("the footer announces 0 rows, its row groups 6")),
        "{:?}",
        reader.schema().warnings()
    );
    let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 6);
    let pyarrow = sciio_testkit::run_python(
        "import sys, pyarrow.parquet as pq; print(pq.read_table(sys.argv[1]).num_rows)",
        &[path.to_str().unwrap()],
    );
    assert_eq!(pyarrow.trim(), "6");
}

/// Damaged pages on which arrow-rs 60.1 panicked (reproducers in tests/data/upstream, see
/// docs/upstream-reports.md): each read ends in a Corrupt error naming the row group and the
/// column, never a panic.
#[test]
fn arrow_rs_panics_on_damaged_pages_become_located_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/upstream");
    for (name, column, panic) in [
        (
            "dict_decoder_not_set.parquet",
            "I8",
            "Decoder for dict should have been set",
        ),
        (
            "offset_len_out_of_bounds.parquet",
            "b",
            "offset + len out of bounds",
        ),
    ] {
        let path = dir.join(name);
        let outcome = sciio_pandas::ParquetReader::open(&path)
            .and_then(|reader| reader.collect::<sciio_core::Result<Vec<_>>>());
        let e = outcome.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt, "{name}: {e}");
        let text = e.to_string();
        assert!(
            text.contains(&format!("row group 0, column '{column}'")) && text.contains(panic),
            "{name}: {text}"
        );
    }
}

/// parquet-testing's large_string_map.brotli.parquet: 3 KiB of brotli whose column chunk
/// announces 2 GiB of pages. Its schema lists; reading it is refused from the footer's sizes
/// before a page is inflated (it took 28 s and 4 GB before failing in arrow-rs). pandas
/// refuses it too (the census in sciio-cli/tests/parquet_census.rs checks that).
#[test]
fn a_chunk_announcing_far_more_pages_than_its_bytes_can_hold_is_refused_before_inflating() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/parquet-testing/large_string_map.brotli.parquet");
    let mut reader = sciio_pandas::ParquetReader::open(&path).unwrap();
    assert_eq!(reader.num_rows(), 2);
    let err = reader.next().unwrap().unwrap_err();
    assert!(
        err.to_string()
            .contains("row group 0, column 'arr.key_value.key': 3346 compressed bytes announce")
            && err.to_string().contains("decompression bomb"),
        "{err}"
    );
    assert!(reader.next().is_none());
}
