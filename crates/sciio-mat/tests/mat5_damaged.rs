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

#[test]
fn large_compressed_matrices_read_equal_to_scipy_and_damage_in_them_is_an_error() {
    // Variables compressed to over 1 MiB holding one real array in their class's own type
    // are inflated straight into the array; others (complex) the general way. Both equal
    // to scipy's reading; a flipped byte or a cut inside the large stream stays an error.
    let dir = tempdir();
    let path = dir.path().join("large.mat");
    sciio_testkit::run_python(
        "import sys, numpy as np, scipy.io as sio\n\
         i, j = np.meshgrid(np.arange(700), np.arange(500), indexing='ij')\n\
         a = np.sin(i * 0.37 + j * 1.3) * 1e3 + i\n\
         b = ((i * 2654435761 + j * 40503) % 2147483647).astype(np.int32)\n\
         c = a + 1j * a[::-1]\n\
         sio.savemat(sys.argv[1], {'a': a, 'b': b, 'c': c}, do_compression=True)",
        &[path.to_str().unwrap()],
    );
    let m = MatFile::open(&path).unwrap();
    for name in ["a", "b", "c"] {
        let value = m.read(name).unwrap();
        let sciio_mat::MatValue::Numeric(array) = value else {
            panic!("{name}: {value:?}");
        };
        assert_eq!(array.shape(), &[700, 500]);
        let raw = dir.path().join(format!("{name}.raw"));
        std::fs::write(&raw, array.to_order(sciio_core::Order::F).as_bytes()).unwrap();
        let out = sciio_testkit::run_python(
            "import sys, numpy as np, scipy.io as sio\n\
             want = sio.loadmat(sys.argv[1])[sys.argv[3]]\n\
             got = np.frombuffer(open(sys.argv[2], 'rb').read(), want.dtype).reshape(want.shape, order='F')\n\
             print(want.dtype, np.array_equal(got, want))",
            &[path.to_str().unwrap(), raw.to_str().unwrap(), name],
        );
        assert!(out.trim().ends_with("True"), "{name}: {out}");
    }
    let good = std::fs::read(&path).unwrap();
    let bad_path = dir.path().join("bad.mat");
    // Inside the first variable's stream (a, over 2 MiB compressed), at several places.
    for at in [2_000usize, 500_000, 1_500_000] {
        let mut bad = good.clone();
        bad[at] ^= 0x55;
        std::fs::write(&bad_path, &bad).unwrap();
        let result = MatFile::open(&bad_path).and_then(|m| m.read("a"));
        let e = result.expect_err("a flipped byte in the compressed data");
        assert_eq!(e.to_string().lines().count(), 1, "{e}");
    }
    std::fs::write(&bad_path, &good[..1_000_000]).unwrap();
    assert!(MatFile::open(&bad_path).and_then(|m| m.read("a")).is_err());
}
