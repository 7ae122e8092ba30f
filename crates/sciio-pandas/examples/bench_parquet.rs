//! The sciio side of `python/bench_parquet.py`: builds the benchmark frame (the same values the
//! Python script builds), times writing it to Parquet and reading the file pyarrow wrote, and
//! prints JSON timings.
//!
//! usage: bench --rows N --dir DIR [--repeat K] [--compress C] [--input NAME] [--output NAME]
//! (reads DIR/NAME, default pyarrow.parquet, writes DIR/NAME, default sciio.parquet, with the
//! codec C, default snappy; times are the best of K runs; `--only read` or `--only write` times
//! one side alone, for profiling; `--threads N` encodes on N threads; `--keep-freed` keeps
//! freed memory mapped between repeats, see [`keep_freed_memory`]; to weigh the writer's
//! settings: `--statistics off`, `--dictionary off`, `--page-bytes N`, `--row-group-rows N`)
// A benchmark driver: a bad argument or failed run stops it with a message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Instant;

use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int64Array, Int8Array, StringArray,
    TimestampNanosecondArray,
};
use sciio_pandas::{read_frame, write_frame, Frame, ParquetOptions, RangeIndex};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The benchmark frame: int64, float64, a 12-character string of 1000 distinct values, a
/// categorical of 100, datetime64[ns, UTC], bool; RangeIndex.
fn build(rows: usize) -> Frame {
    let n = rows as i64;
    let strings: Vec<String> = (0..1000).map(|k| format!("str_{k:08}")).collect();
    let cats: Vec<String> = (0..100).map(|k| format!("cat_{k:02}")).collect();
    let s = StringArray::from_iter_values((0..n).map(|i| strings[(i % 1000) as usize].as_str()));
    let keys = Int8Array::from_iter_values((0..n).map(|i| (i % 100) as i8));
    let cat = DictionaryArray::try_new(keys, Arc::new(StringArray::from_iter_values(&cats)))
        .expect("valid dictionary");
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("i", Arc::new(Int64Array::from_iter_values(0..n))),
        (
            "f",
            Arc::new(Float64Array::from_iter_values(
                (0..n).map(|i| i as f64 * 0.5),
            )),
        ),
        ("s", Arc::new(s)),
        ("c", Arc::new(cat)),
        (
            "t",
            Arc::new(
                TimestampNanosecondArray::from_iter_values(
                    (0..n).map(|i| 1_600_000_000_000_000_000 + i * 1_000_000_000),
                )
                .with_timezone("UTC"),
            ),
        ),
        (
            "b",
            Arc::new(BooleanArray::from_iter((0..n).map(|i| Some(i % 3 == 0)))),
        ),
    ];
    let mut b = Frame::builder().range_index(RangeIndex::default_for(rows));
    for (name, a) in columns {
        b = b.column(name, a);
    }
    b.build().expect("valid frame")
}

/// Keeps the memory of a dropped frame mapped for the next repeat, as jemalloc (polars'
/// allocator, which keeps freed pages for 10 s) does for polars' repeats in the Python run.
/// With the `sciio` binary's tuning glibc unmaps a dropped frame's heaps (each thread's 64 MiB
/// heaps are deleted once empty, whatever M_TRIM_THRESHOLD says; only M_TOP_PAD keeps them),
/// so every repeat faults in the whole frame again, page by zeroed page: with the 10M-row
/// frame, about a third of the read's CPU time went to the kernel. A one-shot run pays those
/// faults on both sides; a best-of-K in one process only on sciio's side without this.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets malloc's parameters, first thing in main, before other threads.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 1 << 30);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // glibc's malloc tuned as the `sciio` binary tunes it (crates/sciio-cli/src/alloc.rs):
    // large freed buffers stay mapped for the next row group instead of being faulted in again.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets malloc's parameters, first thing in main, before other threads.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--keep-freed") {
        keep_freed_memory();
    }
    let rows: usize = arg(&args, "--rows").unwrap_or("10000000".into()).parse()?;
    let dir = std::path::PathBuf::from(arg(&args, "--dir").ok_or("--dir is required")?);
    let repeat: usize = arg(&args, "--repeat").unwrap_or("3".into()).parse()?;
    let compression: sciio_pandas::Compression = arg(&args, "--compress")
        .unwrap_or("snappy".into())
        .parse()?;
    let mut options = ParquetOptions::new().compression(compression);
    if let Some(n) = arg(&args, "--threads") {
        options = options.threads(n.parse()?);
    }
    if let Some(v) = arg(&args, "--statistics") {
        options = options.statistics(v != "off");
    }
    if let Some(v) = arg(&args, "--dictionary") {
        options = options.dictionary(v != "off");
    }
    if let Some(n) = arg(&args, "--page-bytes") {
        options = options.data_page_bytes(n.parse()?);
    }
    if let Some(n) = arg(&args, "--row-group-rows") {
        options = options.row_group_rows(n.parse()?);
    }
    let only = arg(&args, "--only");
    let frame = (only.as_deref() != Some("read")).then(|| build(rows));
    let out = dir.join(arg(&args, "--output").unwrap_or("sciio.parquet".into()));
    let input = dir.join(arg(&args, "--input").unwrap_or("pyarrow.parquet".into()));
    let mut write = f64::MAX;
    let mut read = f64::MAX;
    let mut read_rows = 0;
    for _ in 0..repeat {
        if let Some(frame) = &frame {
            let t = Instant::now();
            write_frame(&out, frame, &options)?;
            write = write.min(t.elapsed().as_secs_f64());
        }
        if only.as_deref() != Some("write") {
            let t = Instant::now();
            let f = read_frame(&input)?;
            read = read.min(t.elapsed().as_secs_f64());
            read_rows = f.num_rows();
        }
    }
    println!(
        "{{\"rows\": {rows}, \"write_s\": {write:.4}, \"read_s\": {read:.4}, \"read_rows\": {read_rows}, \"bytes\": {}}}",
        std::fs::metadata(&out).map_or(0, |m| m.len())
    );
    Ok(())
}
