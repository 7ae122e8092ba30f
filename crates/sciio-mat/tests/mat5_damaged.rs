//! Damaged MAT v4 / Level-5 files: every cut and many byte flips of scipy's MATLAB-written
//! test files are read to a value or an error (with file and offset), never a panic; inflated
//! sizes are bounded by `Limits`; a corrupted zlib stream is an error.

use sciio_core::{ErrorKind, Limits};
use sciio_mat::MatFile;
use sciio_testkit::{tempdir, wheel_files};

fn read_everything(path: &std::path::Path, limits: Limits) -> Result<usize, sciio_core::Error> {
    let m = MatFile::open_with_limits(path, limits)?;
    let vars = m.variables()?;
    Ok(m.read_all()?.len() + vars.len())
}

#[test]
fn cuts_and_flips_never_panic() {
    let dir = tempdir();
    let p = dir.path().join("damaged.mat");
    let limits = Limits::default().max_alloc(64 << 20);
    let mut errors = 0;
    for f in wheel_files("scipy/io/matlab/tests/data", ".mat") {
        let good = std::fs::read(&f).unwrap();
        if good.len() > 4096 || good.get(512..520) == Some(b"\x89HDF\r\n\x1a\n".as_slice()) {
            continue; // large files and v7.3 (libhdf5) files: covered elsewhere
        }
        for cut in (0..good.len()).step_by(13) {
            std::fs::write(&p, &good[..cut]).unwrap();
            if let Err(e) = read_everything(&p, limits) {
                assert!(e.location().file.is_some(), "{f:?} cut at {cut}: {e}");
                assert_eq!(e.to_string().lines().count(), 1);
                errors += 1;
            }
        }
        for at in (0..good.len()).step_by(11) {
            for x in [0xFF, 0x80] {
                let mut bad = good.clone();
                bad[at] ^= x;
                std::fs::write(&p, &bad).unwrap();
                if read_everything(&p, limits).is_err() {
                    errors += 1;
                }
            }
        }
    }
    assert!(errors > 500, "{errors}");
}

/// A Level-5 file of one miCOMPRESSED element holding `payload`.
fn compressed_file(payload_stream: &[u8]) -> Vec<u8> {
    let mut bytes = b"MATLAB 5.0 MAT-file".to_vec();
    bytes.resize(116, b' ');
    bytes.extend_from_slice(&[0; 8]);
    bytes.extend_from_slice(b"\x00\x01IM");
    bytes.extend_from_slice(&15u32.to_le_bytes());
    bytes.extend_from_slice(&(payload_stream.len() as u32).to_le_bytes());
    bytes.extend_from_slice(payload_stream);
    bytes
}

fn zlib(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn zlib_bombs_and_corrupt_streams_are_errors() {
    let dir = tempdir();
    let p = dir.path().join("z.mat");
    // A 64 MiB miMATRIX of zeros compresses ~1000:1: over a 1 MiB limit, refused.
    let mut big = Vec::new();
    big.extend_from_slice(&14u32.to_le_bytes());
    big.extend_from_slice(&(64u32 << 20).to_le_bytes());
    big.resize(8 + (64 << 20), 0);
    std::fs::write(&p, compressed_file(&zlib(&big))).unwrap();
    let err = MatFile::open_with_limits(&p, Limits::default().max_alloc(1 << 20))
        .and_then(|m| m.read_all())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    // A stream cut short, a stream with a wrong checksum, and data after the stream's end.
    let stream = zlib(b"\x0e\x00\x00\x00\x00\x00\x00\x00");
    let n = stream.len();
    let mut bad_sum = stream.clone();
    bad_sum[n - 1] ^= 1;
    let mut trailing = stream.clone();
    trailing.extend_from_slice(b"junk");
    for (what, s) in [
        ("cut", stream[..n - 3].to_vec()),
        ("checksum", bad_sum),
        ("trailing", trailing),
    ] {
        std::fs::write(&p, compressed_file(&s)).unwrap();
        let err = MatFile::open(&p).and_then(|m| m.read_all()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Format, "{what}: {err}");
        assert!(err.to_string().contains("zlib"), "{what}: {err}");
        assert_eq!(err.location().offset, Some(128), "{what}: {err}");
    }
}

#[test]
fn sizes_from_dimensions_alone_are_bounded() {
    // A char array of 100000 x 100000 blanks stored with no bytes (files in the wild store
    // empty char data): its size comes from the dimensions only, and is checked by Limits.
    let mut bytes = b"MATLAB 5.0 MAT-file".to_vec();
    bytes.resize(116, b' ');
    bytes.extend_from_slice(&[0; 8]);
    bytes.extend_from_slice(b"\x00\x01IM");
    let words = |w: &[u32]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    bytes.extend(words(&[14, 48]));
    bytes.extend(words(&[6, 8, 4, 0])); // array flags: char
    bytes.extend(words(&[5, 8, 100_000, 100_000]));
    bytes.extend(words(&[1 | 1 << 16]));
    bytes.extend_from_slice(b"c\0\0\0");
    bytes.extend(words(&[4, 0])); // miUINT16, no bytes
    let dir = tempdir();
    let p = dir.path().join("blanks.mat");
    std::fs::write(&p, &bytes).unwrap();
    let m = MatFile::open_with_limits(&p, Limits::default().max_alloc(64 << 20)).unwrap();
    assert_eq!(m.info("c").unwrap().shape, vec![100_000, 100_000]);
    let err = m.read("c").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    assert_eq!(err.location().node.as_deref(), Some("/c"));
}
