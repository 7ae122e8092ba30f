//! sciio side of `python/bench_convert.py`: times `sciio::convert_many` on files the script
//! made, in process, and prints one JSON record.
//!
//! `cargo run --release -p sciio --example bench_convert -- OUT_DIR REPEAT SRC.npy...`
//! writes OUT_DIR/sciio_stored.npz, OUT_DIR/sciio_deflate6.npz (best of REPEAT runs each) and
//! OUT_DIR/sciio_back.npy (the first source's array extracted back from the stored npz).
// A benchmark driver: a bad argument or failed run stops it with a message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use sciio::{convert, convert_many, ConvertOptions, File};

fn best(repeat: usize, mut run: impl FnMut()) -> f64 {
    (0..repeat.max(1))
        .map(|_| {
            let t = Instant::now();
            run();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn to_npz(srcs: &[PathBuf], dst: &Path, compress: Option<&str>) {
    let mut files: Vec<File> = srcs.iter().map(|p| File::open(p).unwrap()).collect();
    let mut sources: Vec<(&mut File, Option<&str>)> = files.iter_mut().map(|f| (f, None)).collect();
    let options = ConvertOptions {
        compress: compress.map(|c| c.parse().unwrap()),
        ..Default::default()
    };
    convert_many(&mut sources, dst, &options, &mut |_, _| {}).unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [out, repeat, srcs @ ..] = args.as_slice() else {
        eprintln!("usage: bench OUT_DIR REPEAT SRC.npy...");
        std::process::exit(2);
    };
    let out = Path::new(out);
    let repeat: usize = repeat.parse().unwrap();
    let srcs: Vec<PathBuf> = srcs.iter().map(PathBuf::from).collect();
    let stored = out.join("sciio_stored.npz");
    let deflated = out.join("sciio_deflate6.npz");
    let back = out.join("sciio_back.npy");
    let t_stored = best(repeat, || to_npz(&srcs, &stored, None));
    let t_deflate = best(repeat, || to_npz(&srcs, &deflated, Some("deflate:6")));
    let stem = srcs[0].file_stem().unwrap().to_string_lossy().into_owned();
    let t_extract = best(repeat, || {
        let mut npz = File::open(&stored).unwrap();
        convert(
            &mut npz,
            Some(&stem),
            &back,
            &ConvertOptions::default(),
            &mut |_, _| {},
        )
        .unwrap();
    });
    println!(
        "{{\"npy_to_npz_stored_s\": {t_stored}, \"npy_to_npz_deflate6_s\": {t_deflate}, \
         \"npz_member_to_npy_s\": {t_extract}, \"deflate6_bytes\": {}}}",
        std::fs::metadata(&deflated).unwrap().len()
    );
}
