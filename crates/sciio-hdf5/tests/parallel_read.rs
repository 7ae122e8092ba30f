//! The parallel direct-chunk reader (`Dataset::read_rows_parallel`) against files whose chunks
//! sit after a user block (MAT v7.3 files have a 512-byte one): libhdf5's `H5Dchunk_iter`
//! already reports absolute addresses, so adding the user block again read the wrong bytes
//! ("corrupt deflate stream"). Each file is also read by h5py, so the data is what libhdf5
//! itself sees.

use sciio_hdf5::write::{DatasetSpec, FileBuilder, FilterStage};
use sciio_hdf5::{ByteOrder, File, H5Type};
use sciio_testkit::{run_python, tempdir};

fn f8() -> H5Type {
    H5Type::Float {
        size: 8,
        precision: 64,
        order: ByteOrder::Little,
    }
}

fn values(n: usize) -> Vec<f64> {
    (0..n).map(|i| (i as f64) * 0.5 - 7.0).collect()
}

fn le_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Writes a `rows` x `cols` float64 dataset, deflate + shuffle, chunks of `chunk_rows` rows
/// (the last one partial), into a file with a user block of `userblock` bytes.
fn write_matrix(path: &std::path::Path, userblock: u64, rows: u64, cols: u64, chunk_rows: u64) {
    let file = FileBuilder::new()
        .userblock(userblock)
        .create(path)
        .unwrap();
    let spec = DatasetSpec::chunked(
        f8(),
        vec![0, cols],
        vec![None, Some(cols)],
        vec![chunk_rows, cols],
    )
    .filters(vec![FilterStage::shuffle(8), FilterStage::deflate(3)]);
    let ds = file.root().unwrap().create_dataset("m", &spec).unwrap();
    ds.append_rows(&le_bytes(&values((rows * cols) as usize)))
        .unwrap();
    file.close().unwrap();
}

fn h5py_values(path: &std::path::Path, start: u64, count: u64) -> Vec<f64> {
    let out = run_python(
        "import sys, h5py\n\
         f = h5py.File(sys.argv[1], 'r')\n\
         a, n = int(sys.argv[2]), int(sys.argv[3])\n\
         print(' '.join(repr(float(x)) for x in f['m'][a:a + n].ravel()))",
        &[
            path.to_str().unwrap(),
            &start.to_string(),
            &count.to_string(),
        ],
    );
    out.split_whitespace().map(|s| s.parse().unwrap()).collect()
}

fn parallel_values(path: &std::path::Path, start: u64, count: u64) -> Vec<f64> {
    let data = File::open(path)
        .unwrap()
        .dataset("/m")
        .unwrap()
        .read_rows_parallel(start, count)
        .unwrap();
    data.bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

#[test]
fn chunks_after_a_user_block_read_in_parallel() {
    let dir = tempdir();
    for userblock in [512u64, 4096] {
        let path = dir.path().join(format!("ub{userblock}.h5"));
        write_matrix(&path, userblock, 1000, 3, 64);
        for (start, count) in [(0, 1000), (10, 500), (990, 10), (64, 64)] {
            let ours = parallel_values(&path, start, count);
            assert_eq!(
                ours,
                h5py_values(&path, start, count),
                "ub {userblock} rows {start}+{count}"
            );
            let expected: Vec<f64> =
                values(3000)[(start * 3) as usize..((start + count) * 3) as usize].to_vec();
            assert_eq!(ours, expected);
        }
    }
}

#[test]
fn chunks_without_a_user_block_still_read_in_parallel() {
    let dir = tempdir();
    let path = dir.path().join("plain.h5");
    write_matrix(&path, 0, 777, 5, 100);
    assert_eq!(parallel_values(&path, 0, 777), values(777 * 5));
    assert_eq!(parallel_values(&path, 700, 77), h5py_values(&path, 700, 77));
}
