//! Chunks a filter cannot shrink are stored as PyTables stores them: hdf5-blosc and H5Zlzo.c
//! give up on such a chunk, and libhdf5 then stores it without that (optional) filter, with the
//! filter's bit set in the chunk's filter mask; libhdf5's deflate, bzip2 and Blosc2 keep their
//! larger output. The same EArray (random chunks, then compressible ones) is written by
//! PyTables and by sciio for each filter; every chunk's filter mask (and, where the filter was
//! skipped, its size) must be PyTables', and PyTables must read sciio's values.

use sciio_hdf5::{ByteOrder, H5Type};
use sciio_pytables::write::{Filters, PtWriter};

const CHUNK: usize = 8192;

/// Three chunks of random int64 values, then three and a half of a counter.
fn values() -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let random = (0..3 * CHUNK).map(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as i64
    });
    let counter = (0..(3 * CHUNK + CHUNK / 2) as i64).map(|i| i / 3);
    random
        .chain(counter)
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

const CHECK: &str = r#"
import sys, tables as tb, numpy as np, h5py
d, specs = sys.argv[1], sys.argv[2:]
data = np.fromfile(f"{d}/values.bin", dtype="<i8")
for spec in specs:
    name, pt = spec.split("=")
    complevel, complib = pt.split(",")
    ref = f"{d}/pt_{name}.h5"
    with tb.open_file(ref, "w") as f:
        e = f.create_earray("/", "e", tb.Int64Atom(), (0,), chunkshape=(8192,),
                            filters=tb.Filters(int(complevel), complib))
        e.append(data)
    with tb.open_file(f"{d}/sciio_{name}.h5") as f:
        assert (f.root.e.read() == data).all(), name
    chunks = {}
    for which in ("pt", "sciio"):
        with h5py.File(f"{d}/{which}_{name}.h5") as f:
            ds = f["e"].id
            chunks[which] = [ds.get_chunk_info(i) for i in range(ds.get_num_chunks())]
    masks = [[c.filter_mask for c in chunks[w]] for w in ("pt", "sciio")]
    raw = [[c.size for c in chunks[w] if c.filter_mask] for w in ("pt", "sciio")]
    print(name, masks[0] == masks[1] and raw[0] == raw[1], masks[1], raw[1])
"#;

#[test]
fn chunks_a_filter_cannot_shrink_are_stored_as_pytables_stores_them() {
    let dir = sciio_testkit::tempdir();
    let d = dir.path().to_str().unwrap();
    let bytes = values();
    std::fs::write(dir.path().join("values.bin"), &bytes).unwrap();
    let i8le = H5Type::Int {
        size: 8,
        signed: true,
        order: ByteOrder::Little,
    };
    // (name, sciio's --compress spec, PyTables' complevel,complib)
    let cases = [
        ("blosc_lz4", "blosc:lz4:5", "5,blosc:lz4"),
        ("blosc_zstd", "blosc:zstd:5", "5,blosc:zstd"),
        ("blosc2_lz4", "blosc2:lz4:5", "5,blosc2:lz4"),
        ("zlib", "zlib:1", "1,zlib"),
        ("bzip2", "bzip2:9", "9,bzip2"),
        ("lzo", "lzo:1", ""),
    ];
    for (name, spec, _) in cases {
        let file = PtWriter::create(dir.path().join(format!("sciio_{name}.h5"))).unwrap();
        let mut e = file
            .root()
            .unwrap()
            .create_earray("e", i8le.clone(), vec![])
            .filters(Filters::parse(spec).unwrap())
            .chunk_shape(vec![CHUNK as u64])
            .create()
            .unwrap();
        e.append(&bytes).unwrap();
        file.finish().unwrap();
    }
    let specs: Vec<String> = cases
        .iter()
        .filter(|c| !c.2.is_empty())
        .map(|(name, _, pt)| format!("{name}={pt}"))
        .collect();
    let mut args = vec![d];
    args.extend(specs.iter().map(String::as_str));
    let out = sciio_testkit::run_python(CHECK, &args);
    let skipped = "[1, 1, 1, 0, 0, 0, 0] [65536, 65536, 65536]";
    let kept = "[0, 0, 0, 0, 0, 0, 0] []";
    assert_eq!(
        out.trim(),
        [
            format!("blosc_lz4 True {skipped}"),
            format!("blosc_zstd True {skipped}"),
            format!("blosc2_lz4 True {kept}"),
            format!("zlib True {kept}"),
            format!("bzip2 True {kept}"),
        ]
        .join("\n")
    );

    // LZO (no LZO in PyTables' wheel): H5Zlzo.c's rule, checked through h5py, and sciio reads
    // every value back.
    let lzo = dir.path().join("sciio_lzo.h5");
    let masks = sciio_testkit::run_python(
        "import sys, h5py\nwith h5py.File(sys.argv[1]) as f:\n    ds = f['e'].id\n    \
         print([ds.get_chunk_info(i).filter_mask for i in range(ds.get_num_chunks())])",
        &[lzo.to_str().unwrap()],
    );
    // Stage 0 is shuffle (on by default with compression, as in PyTables), stage 1 LZO.
    assert_eq!(masks.trim(), "[2, 2, 2, 0, 0, 0, 0]");
    let back = sciio_pytables::PtFile::open(&lzo)
        .unwrap()
        .read_array("/e", sciio_pytables::Rows::all())
        .unwrap();
    assert_eq!(back.bytes, bytes);
}
