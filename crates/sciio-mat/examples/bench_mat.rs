//! The sciio side of python/bench_mat.py: writes or reads the benchmark MAT files in-process
//! and prints the timings as JSON.
//!
//! usage: bench write DIR ROWS COLS FIELDS CELLS   (writes DIR/sciio_{matrix,struct,cell}.mat)
//!        bench read FILE...                        (reads every variable of each file)
//!
//! The data is the same formula python/bench_mat.py uses, so both sides write equal values.
// A benchmark driver: a bad argument or failed run stops it with a message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use sciio_core::{NdArray, Order};
use sciio_mat::{CellArray, MatFile, MatValue, StructArray, WriteOptions};

fn matrix(rows: usize, cols: usize) -> MatValue {
    // x[r, c] = ((r * cols + c) % 1000) * 0.001 + r, column-major for MATLAB's [rows, cols].
    let mut data = vec![0.0f64; rows * cols];
    for c in 0..cols {
        for r in 0..rows {
            data[c * rows + r] = ((r * cols + c) % 1000) as f64 * 0.001 + r as f64;
        }
    }
    let a = NdArray::from_vec(data, &[cols, rows]).expect("shape");
    let f = NdArray::from_bytes(a.dtype().clone(), &[rows, cols], Order::F, a.as_bytes())
        .expect("shape");
    MatValue::Numeric(f)
}

fn structure(fields: usize) -> MatValue {
    MatValue::Struct(StructArray::scalar(
        (0..fields)
            .map(|i| (format!("f{i}"), MatValue::from(i as f64)))
            .collect(),
    ))
}

fn cell(n: usize) -> MatValue {
    let items = (0..n)
        .map(|i| {
            let v: Vec<f64> = (0..9).map(|k| (i * 9 + k) as f64).collect();
            let a = NdArray::from_vec(v, &[3, 3]).expect("shape");
            MatValue::Numeric(
                NdArray::from_bytes(a.dtype().clone(), &[3, 3], Order::F, a.as_bytes())
                    .expect("shape"),
            )
        })
        .collect();
    MatValue::Cell(CellArray::row(items))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut out = serde_json::Map::new();
    match args.first().map(String::as_str) {
        Some("write") => {
            let dir = std::path::PathBuf::from(&args[1]);
            let n = |i: usize| args[i].parse::<usize>();
            let cases = [
                ("matrix", matrix(n(2)?, n(3)?)),
                ("struct", structure(n(4)?)),
                ("cell", cell(n(5)?)),
            ];
            for (name, value) in cases {
                let path = dir.join(format!("sciio_{name}.mat"));
                let t = Instant::now();
                sciio_mat::write_mat(
                    &path,
                    &[(name.to_string(), value)],
                    &WriteOptions::default(),
                )?;
                out.insert(format!("write_{name}"), t.elapsed().as_secs_f64().into());
            }
        }
        Some("read") => {
            for file in &args[1..] {
                let t = Instant::now();
                let vars = MatFile::open(file)?.read_all()?;
                std::hint::black_box(&vars);
                out.insert(file.clone(), t.elapsed().as_secs_f64().into());
            }
        }
        _ => {
            return Err("usage: bench write DIR ROWS COLS FIELDS CELLS | bench read FILE...".into())
        }
    }
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
