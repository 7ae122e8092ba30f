//! Golden files written by numpy (python/gen_npy_golden.py): sciio reads each one exactly,
//! writes the same array byte for byte, and the committed files still match what the venv's
//! numpy writes today.

mod common;

use common::{check_entry, golden_dir, manifest};
use sciio_core::{ErrorKind, Limits};

#[test]
fn reads_every_golden_file() {
    for entry in manifest() {
        let name = entry["name"].as_str().unwrap();
        let path = golden_dir().join(name);
        let bytes = std::fs::read(&path).unwrap();
        let header = sciio_npy::parse_header(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        if entry["refused"].as_bool().unwrap() {
            let err = sciio_npy::read_file(&path).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Refused, "{name}: {err}");
            assert!(
                err.to_string().contains("|O"),
                "{name}: error names the dtype: {err}"
            );
            assert_eq!(err.location().file.as_deref(), Some(path.as_path()));
            continue;
        }
        let a = sciio_npy::read_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_entry(&a, &header, &entry);
        // The same through a non-seekable stream of unknown length, and through a map.
        let streamed = sciio_npy::read_array(Trickle(&bytes[..]), &Limits::default()).unwrap();
        assert_eq!(streamed.as_bytes(), a.as_bytes(), "{name}: streamed");
        // SAFETY: the golden file is only read while mapped.
        let mapped = unsafe { sciio_npy::open_mmap(&path) }.unwrap();
        assert_eq!(mapped.as_bytes(), a.as_bytes(), "{name}: mapped");
        check_entry(&mapped, &header, &entry);
    }
}

#[test]
fn writes_every_golden_file_byte_identically() {
    let mut checked = 0;
    for entry in manifest() {
        if entry["refused"].as_bool().unwrap() {
            continue;
        }
        let name = entry["name"].as_str().unwrap();
        let golden = std::fs::read(golden_dir().join(name)).unwrap();
        let a = sciio_npy::read_array(&golden[..], &Limits::default()).unwrap();
        let mut written = Vec::new();
        sciio_npy::write_array(&mut written, &a).unwrap();
        assert!(
            written == golden,
            "{name}: sciio's bytes differ from numpy's"
        );
        // Also when the array was built in the other memory order (numpy writes C order for
        // an array that is both C- and F-contiguous, and F for a true Fortran array).
        let header = sciio_npy::parse_header(&golden).unwrap();
        let native_order = a.to_order(header.order());
        written.clear();
        sciio_npy::write_array(&mut written, &native_order).unwrap();
        assert!(
            written == golden,
            "{name}: reordered array written differently"
        );
        checked += 1;
    }
    assert!(checked > 80);
}

#[test]
fn generator_reproduces_committed_goldens() {
    let dir = sciio_testkit::tempdir();
    let out = sciio_testkit::run_python_script(
        "python/gen_npy_golden.py",
        &[dir.path().to_str().unwrap()],
    );
    assert!(out.contains("golden files"), "{out}");
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    let mut committed: Vec<_> = std::fs::read_dir(golden_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    committed.sort();
    assert_eq!(
        names, committed,
        "the generator makes a different set of files"
    );
    for name in names {
        let fresh = std::fs::read(dir.path().join(&name)).unwrap();
        let old = std::fs::read(golden_dir().join(&name)).unwrap();
        assert!(
            fresh == old,
            "{name:?} differs from what numpy writes now; re-run the generator"
        );
    }
}

#[test]
fn every_prefix_of_every_golden_file_is_an_error() {
    for entry in manifest() {
        let name = entry["name"].as_str().unwrap();
        let bytes = std::fs::read(golden_dir().join(name)).unwrap();
        let header_len = sciio_npy::parse_header(&bytes).unwrap().header_len;
        // Every prefix inside the header; in the data every byte of the first 256, then a
        // stride (each prefix re-parses the whole header, which is 78 KB for one file).
        let data_prefixes = (header_len..bytes.len()).filter(|n| {
            n - header_len < 256 || (n - header_len).is_multiple_of(97) || *n == bytes.len() - 1
        });
        for n in (0..header_len).chain(data_prefixes) {
            let prefix = &bytes[..n];
            let sized = sciio_npy::read_array_sized(prefix, &Limits::default(), n as u64);
            let kind = sized.map(|_| ()).unwrap_err().kind();
            assert!(
                matches!(kind, ErrorKind::Truncated | ErrorKind::Refused),
                "{name}[..{n}]: {kind:?}"
            );
            if n.is_multiple_of(7) || n < 16 {
                let streamed = sciio_npy::read_array(prefix, &Limits::default());
                assert!(streamed.is_err(), "{name}[..{n}] read from a stream");
            }
        }
    }
}

/// A reader that hands out at most 7 bytes per call, like a pipe.
struct Trickle<'a>(&'a [u8]);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(7).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}
