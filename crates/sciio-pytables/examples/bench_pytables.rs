//! The sciio side of python/bench_pytables_read.py: reads one node of a PyTables file the way
//! `node.read()` does, several times, and prints the best time as JSON.
//!
//! usage: bench FILE NODE [REPEAT]
//!        bench write ... (python/bench_pytables_write.py; see support/bench_write.rs)
// A benchmark driver: a bad argument or failed run stops it with a message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use sciio_pytables::{LeafData, PtFile};

#[path = "support/bench_write.rs"]
mod bench_write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("write") {
        return bench_write::main(&args[2..]);
    }
    if args.len() < 3 {
        eprintln!("usage: bench FILE NODE [REPEAT]");
        std::process::exit(2);
    }
    let repeat: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(3);
    let mut best = f64::INFINITY;
    let mut bytes = 0usize;
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        let file = PtFile::open(&args[1])?;
        let data = file.read(&args[2])?;
        let secs = start.elapsed().as_secs_f64();
        bytes = match &data {
            LeafData::Array(d) => d.bytes.len(),
            LeafData::VlArray(rows) => rows.len(),
            // Not a case of this benchmark (element-wise decoded nodes).
            _ => 0,
        };
        drop(data);
        best = best.min(secs);
    }
    println!(
        "{{\"file\": {:?}, \"node\": {:?}, \"seconds\": {best:.6}, \"bytes\": {bytes}, \"threads\": {}}}",
        args[1],
        args[2],
        rayon::current_num_threads()
    );
    Ok(())
}
