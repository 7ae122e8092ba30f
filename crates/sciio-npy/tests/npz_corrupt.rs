//! Bad .npz input: truncated archives, corrupt CRC, zip bombs, members lying about their
//! array. Always a clean error, never a panic.

use std::io::Cursor;

use sciio_core::{ErrorKind, Limits, NdArray};
use sciio_npy::npz::{Compression, NpzReader, NpzWriter};

fn small_npz(compression: Compression) -> Vec<u8> {
    let mut npz = NpzWriter::new(Cursor::new(Vec::new())).compression(compression);
    npz.add(
        "a",
        &NdArray::from_vec((0..200i32).collect::<Vec<_>>(), &[20, 10]).unwrap(),
    )
    .unwrap();
    npz.add_positional(&NdArray::from_vec(vec![1.5f64, 2.5], &[2]).unwrap())
        .unwrap();
    npz.finish().unwrap().into_inner()
}

fn read_everything(bytes: &[u8], limits: Limits) -> sciio_core::Result<usize> {
    let mut npz = NpzReader::with_limits(Cursor::new(bytes), limits)?;
    let names: Vec<String> = npz.names().into_iter().map(str::to_owned).collect();
    for name in &names {
        npz.read(name)?;
    }
    Ok(names.len())
}

fn find(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap()
}

#[test]
fn every_prefix_of_a_small_npz_is_an_error() {
    for compression in [Compression::Stored, Compression::Deflate(6)] {
        let full = small_npz(compression);
        assert_eq!(read_everything(&full, Limits::default()).unwrap(), 2);
        for len in 0..full.len() {
            let err = read_everything(&full[..len], Limits::default()).unwrap_err();
            assert!(
                matches!(err.kind(), ErrorKind::Format | ErrorKind::Truncated),
                "prefix {len}: {err}"
            );
        }
    }
}

#[test]
fn corrupt_crc_names_the_member() {
    for compression in [Compression::Stored, Compression::Deflate(6)] {
        let mut bytes = small_npz(compression);
        let cd = find(&bytes, b"PK\x01\x02");
        bytes[cd + 16] ^= 1; // CRC of a.npy
        let mut npz = NpzReader::new(Cursor::new(&bytes)).unwrap();
        let err = npz.read("a").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
        assert_eq!(err.location().node.as_deref(), Some("a.npy"));
        // The other member is still fine.
        assert_eq!(npz.read("arr_0").unwrap().len(), 2);
    }
}

#[test]
fn garbled_bytes_never_panic() {
    for compression in [Compression::Stored, Compression::Deflate(6)] {
        let clean = small_npz(compression);
        for i in 0..clean.len() {
            for flip in [0x01u8, 0x80, 0xFF] {
                let mut bytes = clean.clone();
                bytes[i] ^= flip;
                let _ = read_everything(&bytes, Limits::default());
            }
        }
    }
}

#[test]
fn bomb_member_is_stopped() {
    // A member holding 64 MB of zeros (a valid .npy) whose directory entry claims 1000 bytes.
    let zeros = NdArray::from_vec(vec![0u8; 64 << 20], &[64 << 20]).unwrap();
    let mut npz = NpzWriter::from_zip(
        sciio_zip::ZipWriter::new(Cursor::new(Vec::new()))
            .compression(Compression::Deflate(9))
            .force_zip64(false),
    );
    npz.add("z", &zeros).unwrap();
    let mut bytes = npz.finish().unwrap().into_inner();
    let cd = find(&bytes, b"PK\x01\x02");
    bytes[cd + 24..cd + 28].copy_from_slice(&1000u32.to_le_bytes());
    let err = read_everything(&bytes, Limits::default()).unwrap_err();
    // The .npy header inside announces 64 MB but the member declares 1000 bytes.
    assert_eq!(err.kind(), ErrorKind::Truncated, "{err}");
    // Declaring the true size but a tight ratio limit: refused before inflating.
    bytes[cd + 24..cd + 28].copy_from_slice(&((64u32 << 20) + 128).to_le_bytes());
    assert_eq!(read_everything(&bytes, Limits::default()).unwrap(), 1);
    let err = read_everything(&bytes, Limits::default().max_ratio(50)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    let err = read_everything(&bytes, Limits::default().max_alloc(1 << 20)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
}

#[test]
fn npy_header_larger_than_member_is_truncated() {
    // A stored member whose .npy header announces more data than the member holds.
    let mut bytes = small_npz(Compression::Stored);
    let at = find(&bytes, b"(20, 10)");
    bytes[at..at + 8].copy_from_slice(b"(90, 10)");
    // (The size check comes before any data is read, so the stale CRC is never reached.)
    let mut npz = NpzReader::new(Cursor::new(&bytes)).unwrap();
    let err = npz.read("a").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Truncated, "{err}");
}
