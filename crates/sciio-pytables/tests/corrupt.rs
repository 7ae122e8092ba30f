//! Truncated and corrupted copies of real PyTables files (the wheel's test files, szip
//! included, and files PyTables writes with zlib, Blosc and Blosc2) and of h5py files
//! (vlen compound members, references, standalone Bitshuffle): every open/list/read returns
//! data or a clean error that names the file — no panic, no crash.

use std::path::Path;

use sciio_core::Limits;
use sciio_pytables::{NodeInfo, PtFile};
use sciio_testkit::{run_python_script, tempdir, wheel_files};

fn leaves(node: &NodeInfo, out: &mut Vec<String>) {
    if node.dtype.is_some() {
        out.push(node.path.clone());
    }
    node.children.iter().for_each(|c| leaves(c, out));
}

/// Opens, lists and reads everything; returns how many operations failed (cleanly).
fn exercise(path: &Path) -> usize {
    let mut errors = 0;
    let file = match PtFile::open_with_limits(path, Limits::default().max_alloc(256 << 20)) {
        Ok(f) => f,
        Err(e) => {
            assert!(
                e.to_string().contains(&*path.to_string_lossy()),
                "error without the file: {e}"
            );
            return 1;
        }
    };
    let tree = match file.tree(true) {
        Ok(t) => t,
        Err(e) => {
            assert!(e.location().file.is_some(), "error without the file: {e}");
            return 1;
        }
    };
    let mut paths = Vec::new();
    leaves(&tree, &mut paths);
    for p in paths {
        if let Err(e) = file.read(&p) {
            assert!(e.location().file.is_some(), "error without the file: {e}");
            errors += 1;
        }
    }
    errors
}

/// A small deterministic generator (xorshift) for corruption positions.
fn positions(seed: u64, n: usize, len: usize) -> Vec<usize> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % len as u64) as usize
        })
        .collect()
}

fn sources(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = wheel_files("tables/tests", ".h5")
        .into_iter()
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            [
                "smpl_compound_chunked",
                "blosc_bigendian",
                "b2nd-no-chunkshape",
                "vlunicode_endian",
                "times-nested-be",
                "Tables_lzo2_shuffle",
                "slink",
                "nested-type-with-gaps",
                "scalar",
                "array_mdatom",
                "test_szip",
                "smpl_unsupptype",
            ]
            .iter()
            .any(|k| n.starts_with(k))
        })
        .collect();
    assert_eq!(files.len(), 12);
    let out = run_python_script("python/gen_pytables_cases.py", &[&dir.to_string_lossy()]);
    for line in out.lines() {
        if [
            "zlib_shuffle",
            "blosc_lz4",
            "blosc2_zstd",
            "bzip2",
            "fletcher32_only",
        ]
        .iter()
        .any(|k| line.contains(k))
        {
            files.push(line.into());
        }
    }
    // What h5py writes and PyTables cannot: vlen members in compounds, object and region
    // references (heap and reference data to damage), and the standalone Bitshuffle filter.
    for (flag, name) in [
        ("--h5py", "h5py_cases.h5"),
        ("--bitshuffle", "bitshuffle.h5"),
    ] {
        let path = dir.join(name);
        run_python_script(
            "python/gen_pytables_cases.py",
            &[flag, &path.to_string_lossy()],
        );
        files.push(path);
    }
    files
}

#[test]
fn truncated_files_give_clean_errors() {
    let tmp = tempdir();
    let mut failed = 0;
    let gen = tempdir();
    for src in sources(gen.path()) {
        let bytes = std::fs::read(&src).unwrap();
        let cuts = [
            0,
            7,
            8,
            100,
            512,
            2048,
            bytes.len() / 3,
            bytes.len() / 2,
            bytes.len() - 100,
            bytes.len() - 1,
        ];
        for &cut in cuts.iter().filter(|&&c| c < bytes.len()) {
            let path = tmp.path().join(format!(
                "cut{cut}-{}",
                src.file_name().unwrap().to_string_lossy()
            ));
            std::fs::write(&path, &bytes[..cut]).unwrap();
            failed += exercise(&path).min(1);
        }
    }
    // Every cut removes data the file needs somewhere: most copies must fail.
    assert!(failed > 50, "only {failed} truncated copies failed");
}

#[test]
fn corrupted_files_give_clean_errors() {
    let tmp = tempdir();
    let mut failed = 0;
    let gen = tempdir();
    for (i, src) in sources(gen.path()).into_iter().enumerate() {
        let bytes = std::fs::read(&src).unwrap();
        for (j, pos) in positions(i as u64 + 1, 12, bytes.len())
            .into_iter()
            .enumerate()
        {
            let mut copy = bytes.clone();
            // Flip a run of bytes: metadata, chunk index or compressed data, wherever it falls.
            for b in copy.iter_mut().skip(pos).take(16) {
                *b ^= 0x5A;
            }
            let path = tmp.path().join(format!(
                "flip{j}-{}",
                src.file_name().unwrap().to_string_lossy()
            ));
            std::fs::write(&path, &copy).unwrap();
            failed += exercise(&path).min(1);
        }
    }
    assert!(failed > 0, "no corruption was detected at all");
}

/// Inputs the pytables_read fuzz target found (tests/data/fuzz): an attribute whose stored
/// data is shorter than its type and shape (libhdf5 would read past its own buffer: refused
/// before), metadata that makes libhdf5 ask malloc for an absurd size (its error passed on),
/// and a local heap whose free list loops (refused before libhdf5 follows it).
#[test]
fn fuzz_found_files_give_clean_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz");
    for (name, what) in [
        ("attr_shorter_than_its_type.h5", "stores 3 bytes"),
        // Its root header claims a 1.8 TB block, which libhdf5 tried to allocate; sciio's
        // check of the root header now refuses the file before libhdf5 opens it.
        (
            "libhdf5_huge_alloc.h5",
            "root group: an object header block of 1855425871872 bytes runs past the end",
        ),
        // A header block of 16 GiB: libhdf5 allocated it (its size from the file) before
        // checking it against the end of the file; sciio now refuses it first.
        (
            "libhdf5_header_size_16gib.h5",
            "object: an object header block of 17179869432 bytes runs past the end of the file",
        ),
        // The root group's first header message runs past its 23-byte block: libhdf5 2.0
        // decoded it from beyond the block's buffer (ASan heap-buffer-overflow in
        // H5O__cont_decode); sciio checks the root header before libhdf5 opens the file.
        (
            "libhdf5_continuation_overread.h5",
            "root group: an object header message runs past its block",
        ),
        // The same damage in a child's header, reached through the tree walk's H5Oget_info.
        (
            "libhdf5_child_header_overread.h5",
            "/pep at byte 1048: corrupt data: object: an object header message runs past",
        ),
        // The root group's local heap (its link names) has a free list that loops back on
        // itself: libhdf5 followed it, allocating a node per step, until the kernel killed
        // the process (24 GiB in 48 s, from 1232 bytes); sciio checks the list first.
        (
            "libhdf5_local_heap_free_list_loop.h5",
            "root group: the free list of the group's local heap loops back to byte 8",
        ),
    ] {
        let path = dir.join(name);
        assert!(exercise(&path) > 0, "{name} read without error");
        let err = PtFile::open(&path)
            .and_then(|f| f.tree(true))
            .expect_err(name);
        let text = err.to_string();
        assert!(text.contains(name) && text.contains(what), "{text}");
    }
}

/// Found by the damage sweep: zeros over a blosc CArray's dataspace left it (200, 0) with its
/// chunks still listed, and the parallel chunk reader split its output into bands of zero
/// chunks (a panic in `chunks(0)`). An extent of 0 reads as an empty array, as in h5py.
#[test]
fn sweep_found_zero_extent_reads_as_an_empty_array() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/zero_extent_blosc_carray.h5");
    let file = PtFile::open(&path).unwrap();
    let sciio_pytables::LeafData::Array(raw) = file.read("/carray").unwrap() else {
        panic!("/carray is an array");
    };
    assert_eq!(raw.shape, [200, 0]);
    assert!(raw.bytes.is_empty());
    let h5py = sciio_testkit::run_python(
        "import h5py, sys; print(h5py.File(sys.argv[1])['carray'][()].shape)",
        &[path.to_str().unwrap()],
    );
    assert_eq!(h5py.trim(), "(200, 0)");
}
