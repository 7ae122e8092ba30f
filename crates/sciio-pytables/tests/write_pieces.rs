//! Arrays filled with rows given in pieces (`PtFill::append_elements`): a row too large to
//! hold is written as its pieces complete chunks. Whatever the chunk shape (runs along a
//! middle axis, tiles along the last, chunks several rows thick) or a contiguous Array, and
//! whatever the pieces' sizes, h5py reads the values written.

use sciio_hdf5::{ByteOrder, H5Type};
use sciio_pytables::write::{Filters, PtWriter};

fn i4le() -> H5Type {
    H5Type::Int {
        size: 4,
        signed: true,
        order: ByteOrder::Little,
    }
}

/// Values 0..n as little-endian int32 bytes.
fn values(n: usize) -> Vec<u8> {
    (0..n as i32).flat_map(|v| v.to_le_bytes()).collect()
}

/// An array's name, shape and chunk shape (`None`: a contiguous Array).
type Case = (&'static str, Vec<u64>, Option<Vec<u64>>);

/// Element counts of the pieces, in turn: under, across and over row and chunk boundaries.
const PIECES: [usize; 6] = [1, 7, 130, 13, 3333, 2];

#[test]
fn rows_given_in_pieces_reach_the_file_as_h5py_reads_them() {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("pieces.h5");
    let file = PtWriter::create(&path).unwrap();
    let root = file.root().unwrap();
    let zlib = Filters::parse("shuffle,zlib:1").unwrap();
    let cases: [Case; 6] = [
        ("runs", vec![3, 50, 70], Some(vec![1, 8, 70])),
        ("tiles", vec![3, 50, 70], Some(vec![1, 1, 16])),
        ("middle", vec![2, 9, 10, 11], Some(vec![1, 1, 4, 5])),
        ("matrix", vec![2, 1000], Some(vec![1, 128])),
        ("thick", vec![5, 30, 20], Some(vec![2, 7, 6])),
        ("contiguous", vec![3, 40, 9], None),
    ];
    for (name, shape, chunk) in &cases {
        let n = shape.iter().product::<u64>() as usize;
        let mut fill = match chunk {
            Some(chunk) => root
                .create_carray(name, i4le(), shape.clone())
                .chunk_shape(chunk.clone())
                .filters(zlib)
                .fill()
                .unwrap(),
            None => root.create_array_fill(name, i4le(), shape).unwrap(),
        };
        let data = values(n);
        let (mut at, mut k) = (0, 0);
        while at < data.len() {
            let take = (PIECES[k % PIECES.len()] * 4).min(data.len() - at);
            fill.append_elements(&data[at..at + take]).unwrap();
            at += take;
            k += 1;
        }
        // Nothing more than the array holds.
        assert!(fill.append_elements(&data[..4]).is_err(), "{name}");
        fill.finish().unwrap();
    }
    // A row left unfinished is reported.
    let mut short = root
        .create_carray("short", i4le(), vec![2, 100])
        .fill()
        .unwrap();
    short.append_elements(&values(150)).unwrap();
    assert!(short.finish().is_err());
    file.finish().unwrap();
    let mut args = vec![path.to_str().unwrap().to_string()];
    args.extend(cases.iter().map(|(name, _, _)| name.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sciio_testkit::run_python(
        "
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], 'r') as f:
    for name in sys.argv[2:]:
        x = f[name]
        want = np.arange(x.size, dtype='<i4').reshape(x.shape)
        assert x.dtype == want.dtype and np.array_equal(x[()], want), name
",
        &args,
    );
}
