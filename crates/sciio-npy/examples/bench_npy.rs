//! The sciio side of python/bench_npy.py: times writing, reading (into memory, touching every
//! value) and memory-mapping + summing a float64 .npy, and prints the timings as JSON.
//!
//! Usage: bench DIR MEGABYTES
//! Reads DIR/numpy.npy (written by numpy) and writes DIR/sciio.npy.
// A benchmark driver: a bad argument or failed run stops it with a message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

// `bench npz ...`: the npz benchmark (python/bench_npz.py), in bench/npz.rs.
#[path = "bench/npz.rs"]
mod npz;

use sciio_core::{DType, NdArray, Order};

fn best<T>(repeats: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..repeats {
        let start = Instant::now();
        let value = f();
        best = best.min(start.elapsed().as_secs_f64());
        out = Some(value);
    }
    (best, out.expect("at least one repeat"))
}

fn sum(a: &NdArray) -> f64 {
    // ndarray's sum is unrolled (vectorisable); the values are exact in f64 in any order.
    a.view::<f64>().expect("float64 data").sum()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("npz") {
        npz::run(&args[2..]);
        return Ok(());
    }
    let dir = std::path::PathBuf::from(args.get(1).ok_or("usage: bench DIR MEGABYTES")?);
    let mb: usize = args.get(2).ok_or("usage: bench DIR MEGABYTES")?.parse()?;
    let repeats = 3;
    let n = mb * (1 << 20) / 8;
    // Built in sciio's own array memory (huge pages for large arrays), as `np.arange(n) * 0.5`
    // is in numpy's: the kernel copies a page-cache write from it with fewer TLB misses than
    // from a plain Vec, and numpy's side has that advantage too.
    let mut array = NdArray::zeroed(DType::from_typestr("<f8")?, &[n], Order::C)?;
    for (i, x) in array.view_mut::<f64>()?.iter_mut().enumerate() {
        *x = i as f64 * 0.5;
    }
    let out = dir.join("sciio.npy");
    let (write_s, ()) = best(repeats, || {
        sciio_npy::write_file(&out, &array).expect("write");
    });
    drop(array);
    let input = dir.join("numpy.npy");
    let (read_s, read_sum) = best(repeats, || {
        let a = sciio_npy::read_file(&input).expect("read");
        sum(&a)
    });
    let (mmap_s, mmap_sum) = best(repeats, || {
        // SAFETY: the benchmark input is only read while mapped.
        let a = unsafe { sciio_npy::open_mmap(&input) }.expect("mmap");
        sum(&a)
    });
    println!(
        "{{\"write_s\": {write_s}, \"read_s\": {read_s}, \"mmap_sum_s\": {mmap_s}, \"read_sum\": {read_sum}, \"mmap_sum\": {mmap_sum}}}"
    );
    Ok(())
}
