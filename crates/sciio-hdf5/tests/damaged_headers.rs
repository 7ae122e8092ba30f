//! Object headers whose first message runs past its block (the block size in the header's
//! prefix made too small, as a fuzzer did): libhdf5 2.0 decodes such a message from beyond the
//! block's buffer, so sciio checks the root group's header before opening the file and every
//! header it opens by path before libhdf5 loads it. Each is one Corrupt error at the damage.

use sciio_core::ErrorKind;
use sciio_hdf5::File;
use sciio_testkit::{run_python, tempdir};

/// A copy of `path` whose version-1 object header at `addr` declares a 23-byte first block.
fn shrink_first_block(path: &std::path::Path, addr: u64, out: &str) -> std::path::PathBuf {
    let mut bytes = std::fs::read(path).unwrap();
    let at = addr as usize;
    assert_eq!(bytes[at], 1, "a version-1 object header");
    bytes[at + 8..at + 12].copy_from_slice(&23u32.to_le_bytes());
    let bad = path.with_file_name(out);
    std::fs::write(&bad, bytes).unwrap();
    bad
}

#[test]
fn headers_whose_messages_run_past_their_block_are_refused() {
    let dir = tempdir();
    let path = dir.path().join("h.h5");
    run_python(
        "import sys, h5py, numpy as np\n\
         with h5py.File(sys.argv[1], 'w') as f:\n\
         \x20   f.create_group('g').create_dataset('d', data=np.arange(4.0))\n\
         \x20   f['x'] = 1.5\n",
        &[path.to_str().unwrap()],
    );
    let file = File::open(&path).unwrap();
    let addr_of = |group: &str, name: &str| {
        let links = file.group(group).unwrap().links().unwrap();
        links.iter().find(|l| l.name == name).unwrap().addr.unwrap()
    };
    let (g, d) = (addr_of("/", "g"), addr_of("/g", "d"));
    // The root group's header address, from the superblock's root symbol table entry.
    let bytes = std::fs::read(&path).unwrap();
    let root = u64::from_le_bytes(bytes[64..72].try_into().unwrap());
    drop(file);

    let bad_root = shrink_first_block(&path, root, "root.h5");
    let err = File::open(&bad_root).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    assert_eq!(err.location().offset, Some(root + 16), "{err}");
    assert!(err
        .to_string()
        .contains("root group: an object header message runs past"));

    let bad_d = shrink_first_block(&path, d, "d.h5");
    let file = File::open(&bad_d).unwrap();
    assert_eq!(
        file.dataset("/x").unwrap().read().unwrap().bytes,
        1.5f64.to_le_bytes()
    );
    let err = file.dataset("/g/d").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    assert_eq!(err.location().offset, Some(d + 16), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("/g/d") && text.contains("dataset: an object header"),
        "{text}"
    );

    let bad_g = shrink_first_block(&path, g, "g.h5");
    let err = File::open(&bad_g).unwrap().group("/g").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    assert!(err.to_string().contains("group: an object header"), "{err}");
}
