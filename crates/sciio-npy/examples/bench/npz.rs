//! The `npz` mode of the sciio-npy benchmark (the sciio side of `python/bench_npz.py`).
//!
//! usage: bench npz --dir DIR [--repeat K] [--level L] [--block BYTES] [--write-only | --read-only]
//! Reads DIR/data.npy (the array numpy compressed), times writing it to DIR/sciio.npz with
//! parallel deflate, times reading numpy's DIR/numpy_compressed.npz and DIR/numpy_stored.npz
//! (member `a`, summing every element to touch the data) and mapping the stored one; prints
//! JSON. Times are the best of K runs. `--read-only` times only the compressed read (for
//! profiling it with perf or strace).

use std::time::Instant;

use sciio_core::NdArray;
use sciio_npy::npz::{Compression, NpzReader, NpzWriter};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn best<T>(repeat: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        let out = f();
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(out);
    }
    (best, last.expect("at least one run"))
}

/// Sums an int32 array: touches every element, like `.sum()` on the numpy side.
fn touch(a: &NdArray) -> i64 {
    let bytes = a.as_bytes();
    bytes
        .chunks_exact(4)
        .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .sum()
}

pub fn run(args: &[String]) {
    let dir = std::path::PathBuf::from(arg(args, "--dir").expect("--dir DIR"));
    let repeat: usize = arg(args, "--repeat").map_or(3, |s| s.parse().expect("--repeat N"));
    let level: u32 = arg(args, "--level").map_or(6, |s| s.parse().expect("--level L"));
    let block: Option<usize> = arg(args, "--block").map(|s| s.parse().expect("--block BYTES"));
    if args.iter().any(|a| a == "--read-only") {
        let path = dir.join("numpy_compressed.npz");
        let (read_compressed_s, sum) = best(repeat, || {
            let mut npz = NpzReader::open(&path).expect("open");
            touch(&npz.read("a").expect("read"))
        });
        println!("{{\"read_compressed_s\": {read_compressed_s}, \"sum\": {sum}}}");
        return;
    }
    let data = sciio_npy::read_file(dir.join("data.npy")).expect("read data.npy");
    let out = dir.join("sciio.npz");
    let (write_s, ()) = best(repeat, || {
        let mut npz = NpzWriter::create(&out)
            .expect("create")
            .compression(Compression::Deflate(level));
        if let Some(b) = block {
            npz = npz.block_size(b);
        }
        npz.add("a", &data).expect("add");
        npz.finish().expect("finish");
    });
    let size = std::fs::metadata(&out).expect("stat").len();
    if args.iter().any(|a| a == "--write-only") {
        println!("{{\"write_s\": {write_s}, \"size\": {size}, \"level\": {level}}}");
        return;
    }
    let read = |name: &str| {
        let path = dir.join(name);
        best(repeat, || {
            let mut npz = NpzReader::open(&path).expect("open");
            touch(&npz.read("a").expect("read"))
        })
    };
    let (read_compressed_s, sum_c) = read("numpy_compressed.npz");
    let (read_stored_s, sum_s) = read("numpy_stored.npz");
    let (mmap_stored_s, sum_m) = best(repeat, || {
        let mut npz = NpzReader::open(dir.join("numpy_stored.npz")).expect("open");
        // SAFETY: the benchmark input is only read while mapped.
        touch(&unsafe { npz.mmap("a") }.expect("mmap"))
    });
    assert!(sum_c == sum_s && sum_s == sum_m, "sums differ");
    println!(
        "{{\"write_s\": {write_s}, \"read_compressed_s\": {read_compressed_s}, \"read_stored_s\": {read_stored_s}, \"mmap_stored_s\": {mmap_stored_s}, \"sum\": {sum_c}, \"size\": {size}, \"threads\": {}}}",
        rayon_threads()
    );
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
