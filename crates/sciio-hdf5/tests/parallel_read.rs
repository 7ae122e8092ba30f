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

/// PyTables writes every storage the parallel reader has a path for; h5py (with hdf5plugin for
/// the Blosc filters) dumps the bytes of each row range in the file's layout.
const PYTABLES_NODES: &str = r#"
import sys, os, numpy as np, tables
path, out = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(7)
row = np.dtype([("i", "<i8"), ("f", "<f4"), ("s", "S5"), ("b", "?")])
def rows(n):
    r = np.zeros(n, dtype=row)
    r["i"] = np.arange(n); r["f"] = rng.standard_normal(n); r["s"] = b"ab"; r["b"] = r["i"] % 3 == 0
    return r
with tables.open_file(path, "w") as f:
    for name, filters in [("t_blosc2", tables.Filters(5, "blosc2:lz4", shuffle=True)),
                          ("t_blosc2_bit", tables.Filters(5, "blosc2:zstd", bitshuffle=True)),
                          ("t_blosc", tables.Filters(5, "blosc:zstd", shuffle=True)),
                          ("t_zlib", tables.Filters(1, "zlib", shuffle=True)),
                          ("t_bzip2", tables.Filters(3, "bzip2"))]:
        f.create_table("/", name, obj=rows(5003), filters=filters, chunkshape=(1000,))
    f.create_carray("/", "c_nd", obj=rng.standard_normal((300, 40)),
                    filters=tables.Filters(4, "zlib", shuffle=True), chunkshape=(7, 9))
    e = f.create_earray("/", "e_plain", tables.Float64Atom(), shape=(0, 5), chunkshape=(64, 5))
    e.append(rng.standard_normal((1000, 5)))
    f.create_array("/", "a_contig", obj=np.arange(1500, dtype=">i4").reshape(500, 3))
    c = f.create_carray("/", "c_sparse", tables.Int32Atom(), shape=(1000, 4),
                        filters=tables.Filters(1, "zlib"), chunkshape=(100, 4))
    c[0:100] = 1; c[500:600] = 2
import hdf5plugin, h5py
with h5py.File(path, "r") as h:
    for name in h:
        d = h[name]; n = d.shape[0]
        for a, c in [(0, n), (n // 3, n // 3), (n - 1, 1), (0, 0), (1, n - 2)]:
            with open(os.path.join(out, f"{name}_{a}_{c}.bin"), "wb") as o:
                o.write(d[a:a + c].tobytes())
            print(name, a, c)
"#;

#[test]
fn every_storage_path_reads_row_ranges_like_h5py() {
    let dir = tempdir();
    let path = dir.path().join("nodes.h5");
    let listing = run_python(
        PYTABLES_NODES,
        &[path.to_str().unwrap(), dir.path().to_str().unwrap()],
    );
    let file = File::open(&path).unwrap();
    let mut checked = 0;
    for line in listing.lines() {
        let (name, start, count, expected) = listed_rows(line, dir.path());
        let data = file
            .dataset(&format!("/{name}"))
            .unwrap()
            .read_rows_parallel(start, count)
            .unwrap_or_else(|e| panic!("{name} {start}+{count}: {e}"));
        assert_eq!(data.shape[0] as u64, count, "{name}");
        assert!(data.bytes == expected, "{name} rows {start}+{count} differ");
        checked += 1;
    }
    assert_eq!(checked, 9 * 5);
}

/// A line of the script's listing (`name start count`) and h5py's bytes of those rows.
fn listed_rows<'a>(line: &'a str, dir: &std::path::Path) -> (&'a str, u64, u64, Vec<u8>) {
    let parts: Vec<&str> = line.split_whitespace().collect();
    let (name, start, count) = (
        parts[0],
        parts[1].parse::<u64>().unwrap(),
        parts[2].parse::<u64>().unwrap(),
    );
    let expected = std::fs::read(dir.join(format!("{name}_{start}_{count}.bin"))).unwrap();
    (name, start, count, expected)
}

/// Reads into a reused buffer (`read_rows_parallel_into`, as a stream reads block after
/// block) give h5py's bytes: every byte of the buffer handed back is overwritten, whatever it
/// held (here a pattern, and before it the other datasets' rows: the file's kept chunk index
/// moves from dataset to dataset on the way), at every storage path.
#[test]
fn reads_into_a_reused_buffer_are_h5pys_rows_whatever_the_buffer_held() {
    let dir = tempdir();
    let path = dir.path().join("nodes.h5");
    let listing = run_python(
        PYTABLES_NODES,
        &[path.to_str().unwrap(), dir.path().to_str().unwrap()],
    );
    let file = File::open(&path).unwrap();
    let mut buffer = vec![0xAB_u8; 1 << 20];
    let mut checked = 0;
    // twice through the listing: the second pass finds every dataset's index listed before
    for line in listing.lines().chain(listing.lines()) {
        let (name, start, count, expected) = listed_rows(line, dir.path());
        let data = file
            .dataset(&format!("/{name}"))
            .unwrap()
            .read_rows_parallel_into(start, count, std::mem::take(&mut buffer))
            .unwrap_or_else(|e| panic!("{name} {start}+{count}: {e}"));
        assert!(data.bytes == expected, "{name} rows {start}+{count} differ");
        buffer = data.bytes;
        buffer.fill(0xAB);
        checked += 1;
    }
    assert_eq!(checked, 2 * 9 * 5);
}

#[test]
fn rows_outside_the_dataset_are_refused() {
    let dir = tempdir();
    let path = dir.path().join("m.h5");
    write_matrix(&path, 512, 100, 3, 16);
    let ds = File::open(&path).unwrap().dataset("/m").unwrap();
    for (start, count) in [(90, 11), (101, 0), (u64::MAX, 2)] {
        let err = ds.read_rows_parallel(start, count).unwrap_err();
        assert_eq!(err.kind(), sciio_core::ErrorKind::InvalidInput, "{err}");
    }
}

#[test]
fn a_chunk_cut_short_in_the_file_is_a_clean_error() {
    let dir = tempdir();
    let path = dir.path().join("cut.h5");
    write_matrix(&path, 512, 1000, 3, 64);
    // Where h5py says chunk 3 is stored: its deflate stream gets garbage in the middle.
    let info = run_python(
        "import sys, h5py\n\
         i = h5py.File(sys.argv[1], 'r')['m'].id.get_chunk_info(3)\n\
         print(i.byte_offset, i.size)",
        &[path.to_str().unwrap()],
    );
    let nums: Vec<usize> = info
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let (at, size) = (nums[0], nums[1]);
    let mut bad = std::fs::read(&path).unwrap();
    bad[at + size / 4..at + size / 2].fill(0xA5);
    let cut = dir.path().join("bad.h5");
    std::fs::write(&cut, &bad).unwrap();
    let ds = File::open(&cut).unwrap().dataset("/m").unwrap();
    let err = ds.read_rows_parallel(0, 1000).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            sciio_core::ErrorKind::Corrupt | sciio_core::ErrorKind::Truncated
        ),
        "{err}"
    );
    // Rows of other chunks still read.
    assert_eq!(parallel_values(&cut, 0, 64), values(64 * 3));
}
