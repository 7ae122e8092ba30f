//! Bad input: truncated archives, corrupt CRC, bad offsets, zip bombs. Always a clean error.

use std::io::{Cursor, Read};

use sciio_core::{ErrorKind, Limits};
use sciio_zip::{error_from_io, Compression, ZipArchive, ZipWriter};

fn archive(compression: Compression, force_zip64_records: bool) -> Vec<u8> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()))
        .compression(compression)
        .force_zip64_records(force_zip64_records);
    zip.add_member("a.npy", &[7u8; 3000]).unwrap();
    zip.add_member("b.npy", b"hello world").unwrap();
    zip.finish().unwrap().into_inner()
}

/// Opens `bytes` and reads every member; the first error, if any.
fn read_all(bytes: &[u8], limits: Limits) -> Result<Vec<Vec<u8>>, sciio_core::Error> {
    let mut archive = ZipArchive::with_limits(Cursor::new(bytes), limits)
        .map_err(|e| e.with_file("t.zip"))?
        .with_file_name("t.zip");
    (0..archive.len()).map(|i| archive.read_member(i)).collect()
}

fn find(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap()
}

#[test]
fn every_prefix_is_an_error_not_a_panic() {
    for compression in [Compression::Stored, Compression::Deflate(6)] {
        for zip64 in [false, true] {
            let full = archive(compression, zip64);
            assert_eq!(read_all(&full, Limits::default()).unwrap().len(), 2);
            for len in 0..full.len() {
                let err = read_all(&full[..len], Limits::default()).unwrap_err();
                assert!(
                    matches!(err.kind(), ErrorKind::Format | ErrorKind::Truncated),
                    "prefix {len}: {err}"
                );
                assert_eq!(err.location().file.as_deref(), Some("t.zip".as_ref()));
            }
        }
    }
}

#[test]
fn corrupt_crc_is_detected() {
    for compression in [Compression::Stored, Compression::Deflate(6)] {
        let mut bytes = archive(compression, false);
        // The CRC field of b.npy's central record (16 bytes after its signature).
        let cd = find(&bytes, b"PK\x01\x02");
        let second = cd + 1 + find(&bytes[cd + 1..], b"PK\x01\x02");
        bytes[second + 16] ^= 0xFF;
        let mut archive = ZipArchive::new(Cursor::new(&bytes)).unwrap();
        assert!(archive.read_member(0).is_ok());
        let err = archive.read_member(1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
        assert_eq!(err.location().node.as_deref(), Some("b.npy"));
        assert!(err.location().offset.is_some());
    }
}

#[test]
fn corrupt_member_data_is_detected() {
    let mut bytes = archive(Compression::Stored, false);
    let at = find(&bytes, b"hello world");
    bytes[at] = b'j';
    let err = read_all(&bytes, Limits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt);
    // Deflate data garbled: an error (corrupt stream, wrong size or CRC), never a panic.
    let clean = archive(Compression::Deflate(6), false);
    for i in 30..clean.len() / 2 {
        let mut bytes = clean.clone();
        bytes[i] ^= 0x55;
        let _ = read_all(&bytes, Limits::default());
    }
}

#[test]
fn bad_offsets_are_format_errors() {
    let bytes = archive(Compression::Stored, false);
    let cd = find(&bytes, b"PK\x01\x02");
    // Local header offset of the first member (42 bytes into its central record) past the CD.
    let mut bad = bytes.clone();
    bad[cd + 42..cd + 46].copy_from_slice(&0x7FFF_0000u32.to_le_bytes());
    let err = read_all(&bad, Limits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Format, "{err}");
    // Points at a place with no local header.
    let mut bad = bytes.clone();
    bad[cd + 42..cd + 46].copy_from_slice(&5u32.to_le_bytes());
    let err = read_all(&bad, Limits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Format, "{err}");
    // Central directory offset in the end record pointing past the file.
    let mut bad = bytes.clone();
    let eocd = bad.len() - 22;
    bad[eocd + 16..eocd + 20].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = read_all(&bad, Limits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Format, "{err}");
    // A member count the directory cannot hold.
    let mut bad = bytes.clone();
    bad[eocd + 10..eocd + 12].copy_from_slice(&60_000u16.to_le_bytes());
    let err = read_all(&bad, Limits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Format, "{err}");
    // A compressed size running past the central directory.
    let mut bad = bytes.clone();
    bad[cd + 20..cd + 24].copy_from_slice(&1_000_000u32.to_le_bytes());
    bad[cd + 24..cd + 28].copy_from_slice(&1_000_000u32.to_le_bytes());
    let err = read_all(&bad, Limits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Format, "{err}");
    assert_eq!(err.location().node.as_deref(), Some("a.npy"));
    // Not a zip at all.
    let err = read_all(b"this is not a zip archive, just text", Limits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Format);
}

/// A deflate member whose central record claims `claimed` bytes but inflates to `data.len()`.
fn lying_archive(data: &[u8], claimed: u32) -> Vec<u8> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()))
        .compression(Compression::Deflate(9))
        .force_zip64(false);
    zip.add_member("bomb.npy", data).unwrap();
    let mut bytes = zip.finish().unwrap().into_inner();
    let cd = find(&bytes, b"PK\x01\x02");
    bytes[cd + 24..cd + 28].copy_from_slice(&claimed.to_le_bytes());
    bytes
}

#[test]
fn member_inflating_past_its_declared_size_stops_there() {
    let data = vec![0u8; 50 << 20];
    let bytes = lying_archive(&data, 1000);
    let mut archive = ZipArchive::new(Cursor::new(&bytes)).unwrap();
    assert_eq!(archive.entries()[0].size(), 1000);
    // Streaming: the reader never hands out more than the declared size.
    let mut member = archive.open_member(0).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0;
    let err = loop {
        match member.read(&mut buf) {
            Ok(0) => panic!("bomb read to the end"),
            Ok(n) => total += n,
            Err(e) => break error_from_io(e),
        }
    };
    assert!(total <= 1000);
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    assert_eq!(err.location().node.as_deref(), Some("bomb.npy"));
    // A member claiming more than it holds: truncated.
    let bytes = lying_archive(b"short", 100);
    let err = read_all(&bytes, Limits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Truncated, "{err}");
}

#[test]
fn huge_declared_ratio_and_size_hit_the_limits() {
    // Honest 50 MB of zeros deflate about 1000:1 — just under deflate's maximum.
    let data = vec![0u8; 50 << 20];
    let bytes = lying_archive(&data, data.len() as u32);
    assert_eq!(
        read_all(&bytes, Limits::default()).unwrap()[0].len(),
        data.len()
    );
    let err = read_all(&bytes, Limits::default().max_ratio(100)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    let err = read_all(&bytes, Limits::default().max_alloc(1 << 20)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    // A declared size of 4 GB on a few bytes: refused before any allocation.
    let bytes = lying_archive(b"tiny", u32::MAX - 1);
    let err = read_all(&bytes, Limits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
}

/// 40 MiB of compressible bytes: large enough for the pipelined read (helper threads for the
/// CRC-32 and page faults).
fn big_member() -> Vec<u8> {
    (0..40u32 << 20).map(|i| (i / 997 % 251) as u8).collect()
}

fn big_archive(compression: Compression, data: &[u8]) -> Vec<u8> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new())).compression(compression);
    zip.add_member("big.npy", data).unwrap();
    zip.finish().unwrap().into_inner()
}

#[test]
fn large_members_read_pipelined_with_every_check() {
    let data = big_member();
    for compression in [Compression::Stored, Compression::Deflate(1)] {
        let clean = big_archive(compression, &data);
        let mut archive = ZipArchive::new(Cursor::new(&clean)).unwrap();
        assert!(archive.read_member(0).unwrap() == data);

        // In two steps (header-sized read, then the rest pipelined), as the npz reader does.
        let mut member = archive.open_member(0).unwrap();
        let mut head = [0u8; 128];
        member.read_exact(&mut head).unwrap();
        let mut rest = vec![0u8; data.len() - head.len()];
        member.read_exact_pipelined(&mut rest).unwrap();
        assert_eq!(member.read(&mut [0u8; 1]).unwrap(), 0);
        assert!(head[..] == data[..128] && rest[..] == data[128..]);

        // A wrong CRC-32 in the directory is found at the end of the pipelined read.
        let mut bad_crc = clean.clone();
        let cd = find(&bad_crc, b"PK\x01\x02");
        bad_crc[cd + 16] ^= 0x01;
        let mut archive = ZipArchive::new(Cursor::new(&bad_crc)).unwrap();
        let err = archive.read_member(0).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
        assert_eq!(err.location().node.as_deref(), Some("big.npy"));

        // Member data cut short: truncated, wherever the cut falls.
        let local_end = find(&clean, b"PK\x01\x02");
        for cut in [local_end / 3, local_end - 100] {
            let mut cut_bytes = clean[..cut].to_vec();
            cut_bytes.extend_from_slice(&clean[local_end..]);
            let err = match ZipArchive::new(Cursor::new(&cut_bytes)) {
                Ok(mut a) => a.read_member(0).unwrap_err(),
                Err(e) => e,
            };
            assert!(
                matches!(
                    err.kind(),
                    ErrorKind::Truncated | ErrorKind::Format | ErrorKind::Corrupt
                ),
                "cut at {cut}: {err}"
            );
        }
    }
    // Garbled deflate data in the middle of the stream: an error, never a panic or a hang.
    let clean = big_archive(Compression::Deflate(1), &data);
    for at in [clean.len() / 4, clean.len() / 2] {
        let mut bytes = clean.clone();
        bytes[at..at + 64].iter_mut().for_each(|b| *b ^= 0x5A);
        let mut archive = ZipArchive::new(Cursor::new(&bytes)).unwrap();
        assert!(archive.read_member(0).is_err());
    }
}

#[test]
fn pipelined_read_past_the_member_end_is_a_clean_error() {
    let data = big_member();
    let bytes = big_archive(Compression::Deflate(1), &data);
    let mut archive = ZipArchive::new(Cursor::new(&bytes)).unwrap();
    let mut member = archive.open_member(0).unwrap();
    let mut too_long = vec![0u8; data.len() + 1];
    let err = error_from_io(member.read_exact_pipelined(&mut too_long).unwrap_err());
    assert_eq!(err.kind(), ErrorKind::Truncated, "{err}");
}
