//! Damaged Blosc2 chunks on which c-blosc2 2.15.2 (bundled by blosc2-sys 0.4) crashed: stored
//! chunks cut from the damaged PyTables files of shared/corpus/damaged (h5py's
//! `read_direct_chunk`), ready for an upstream report (docs/upstream-reports.md). sciio checks
//! the b2nd metadata itself before c-blosc2 reads it, so each is a clean Corrupt error.

use sciio_core::ErrorKind;
use sciio_hdf5::filters::{decode, id};

#[test]
fn damaged_b2nd_chunks_are_corrupt_errors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/upstream");
    for (name, expected, why) in [
        // ndim 0x7f: b2nd_deserialize_meta writes 127 extents into arrays of 8 (SIGSEGV).
        ("b2nd_ndim_0x7f.blosc2", 16, "chunks, the frame holds"),
        // A chunk extent of 0: update_shape divides by it (SIGFPE).
        (
            "b2nd_zero_chunkshape.blosc2",
            16,
            "chunkshape has an extent of 0",
        ),
        // The frame's chunk count damaged: b2nd_get_slice_cbuffer indexes a buffer sized by it
        // while walking the chunk grid (SIGSEGV).
        (
            "b2nd_nchunks_flipped.blosc2",
            8192,
            "chunks, the frame holds",
        ),
    ] {
        let chunk = std::fs::read(dir.join(name)).unwrap();
        let e = decode(id::BLOSC2, &[], &chunk, Some(expected)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt, "{name}: {e}");
        assert!(e.to_string().contains(why), "{name}: {e}");
    }
}
