//! Interop with CPython's `zipfile` (what numpy's savez/load use), both directions.

use std::io::{Cursor, Read};
use std::path::Path;

use sciio_core::ErrorKind;
use sciio_testkit::{run_python, tempdir};
use sciio_zip::{Compression, CompressionMethod, DosDateTime, ZipArchive, ZipWriter};

/// Compressible but not trivial data: a random walk of small steps, as int32 bytes.
fn walk(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = 0i32;
    let mut out = Vec::with_capacity(n * 4);
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v += (x % 7) as i32 - 3;
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// What Python's zipfile sees in `path`: "name size crc32(hex) method" per member, after
/// `testzip()` (which decompresses every member and checks its CRC) found no bad member.
fn python_listing(path: &Path) -> Vec<String> {
    let out = run_python(
        r#"
import sys, zipfile, zlib
with zipfile.ZipFile(sys.argv[1]) as z:
    bad = z.testzip()
    assert bad is None, bad
    for info in z.infolist():
        data = z.read(info)
        assert len(data) == info.file_size
        print(info.filename, len(data), format(zlib.crc32(data), '08x'), info.compress_type)
"#,
        &[path.to_str().unwrap()],
    );
    out.lines().map(str::to_owned).collect()
}

fn expected_line(name: &str, data: &[u8], method: u16) -> String {
    format!(
        "{name} {} {:08x} {method}",
        data.len(),
        crc32fast::hash(data)
    )
}

#[test]
fn python_reads_what_we_write_stored_and_deflate_levels() {
    let dir = tempdir();
    let big = walk(3_000_000, 7); // 12 MB: several parallel batches of 1 MiB blocks
    let small = b"tiny member".to_vec();
    for compression in [
        Compression::Stored,
        Compression::Deflate(0),
        Compression::Deflate(1),
        Compression::Deflate(6),
        Compression::Deflate(9),
    ] {
        let path = dir.path().join(format!("{compression:?}.zip"));
        let mut zip = ZipWriter::create(&path).unwrap().compression(compression);
        zip.add_member("big.npy", &big).unwrap();
        zip.add_member("small.npy", &small).unwrap();
        zip.add_member("empty.npy", b"").unwrap();
        let mut streamed = zip.start_member("streamed.npy").unwrap();
        for piece in big.chunks(77_777) {
            streamed.write_data(piece).unwrap();
        }
        streamed.finish().unwrap();
        zip.add_member("ünïcode.npy", &small).unwrap();
        zip.finish().unwrap();

        let method = CompressionMethod::from(compression).0;
        assert_eq!(
            python_listing(&path),
            vec![
                expected_line("big.npy", &big, method),
                expected_line("small.npy", &small, method),
                expected_line("empty.npy", b"", method),
                expected_line("streamed.npy", &big, method),
                expected_line("ünïcode.npy", &small, method),
            ],
            "{compression:?}"
        );
        // And we read it back ourselves.
        let mut archive = ZipArchive::open(&path).unwrap();
        assert_eq!(archive.read_member(0).unwrap(), big);
        assert_eq!(archive.read_member(3).unwrap(), big);
        assert_eq!(archive.index_of("ünïcode.npy"), Some(4));
    }
}

#[test]
fn small_blocks_split_one_member_into_many_parallel_blocks() {
    let dir = tempdir();
    let path = dir.path().join("blocks.zip");
    let data = walk(1_000_000, 3);
    let mut zip = ZipWriter::create(&path)
        .unwrap()
        .compression(Compression::Deflate(6))
        .block_size(64 << 10);
    zip.add_member("x.npy", &data).unwrap();
    // Many small members at once: compressed in parallel with each other.
    let names: Vec<String> = (0..50).map(|i| format!("m{i}.npy")).collect();
    let datas: Vec<Vec<u8>> = (0..50).map(|i| walk(1000 + i * 100, i as u32)).collect();
    let members: Vec<(&str, &[u8])> = names
        .iter()
        .map(String::as_str)
        .zip(datas.iter().map(Vec::as_slice))
        .collect();
    zip.add_members(&members).unwrap();
    zip.finish().unwrap();
    let listing = python_listing(&path);
    assert_eq!(listing[0], expected_line("x.npy", &data, 8));
    for (i, d) in datas.iter().enumerate() {
        assert_eq!(listing[i + 1], expected_line(&names[i], d, 8));
    }
}

#[test]
fn compressed_size_is_close_to_zlib_level_6() {
    let data = walk(2_000_000, 11);
    let mut zip = ZipWriter::new(Cursor::new(Vec::new())).compression(Compression::Deflate(6));
    zip.add_member("x", &data).unwrap();
    let ours = zip.finish().unwrap().into_inner();
    let mut archive = ZipArchive::new(Cursor::new(ours)).unwrap();
    let our_size = archive.entries()[0].compressed_size();
    assert_eq!(archive.read_member(0).unwrap(), data);
    let dir = tempdir();
    let raw = dir.path().join("raw");
    std::fs::write(&raw, &data).unwrap();
    let zlib_size: u64 = run_python(
        "import sys, zlib; d = open(sys.argv[1], 'rb').read(); c = zlib.compressobj(6, zlib.DEFLATED, -15); print(len(c.compress(d) + c.flush()))",
        &[raw.to_str().unwrap()],
    )
    .trim()
    .parse()
    .unwrap();
    let ratio = our_size as f64 / zlib_size as f64;
    assert!(ratio < 1.05, "ours {our_size} vs zlib {zlib_size}");
}

#[test]
fn we_read_what_python_writes_like_numpy_savez() {
    let dir = tempdir();
    for (file, compression) in [
        ("stored.zip", "ZIP_STORED"),
        ("deflated.zip", "ZIP_DEFLATED"),
    ] {
        let path = dir.path().join(file);
        // numpy's _savez: zipf.open(key + '.npy', 'w', force_zip64=True) per array.
        run_python(
            &format!(
                r#"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], mode='w', compression=zipfile.{compression}, allowZip64=True) as z:
    for i in range(5):
        with z.open(f'arr_{{i}}.npy', 'w', force_zip64=True) as f:
            f.write(bytes(range(256)) * (i * 1000 + 1))
    with z.open('empty.npy', 'w', force_zip64=True) as f:
        pass
"#
            ),
            &[path.to_str().unwrap()],
        );
        let mut archive = ZipArchive::open(&path).unwrap();
        assert_eq!(archive.len(), 6);
        for i in 0..5 {
            let expect: Vec<u8> = (0..=255u8).cycle().take(256 * (i * 1000 + 1)).collect();
            let idx = archive.index_of(&format!("arr_{i}.npy")).unwrap();
            let mut got = Vec::new();
            archive
                .open_member(idx)
                .unwrap()
                .read_to_end(&mut got)
                .unwrap();
            assert_eq!(got, expect, "{file} arr_{i}");
        }
        assert!(archive.read_member(5).unwrap().is_empty());
        if compression == "ZIP_STORED" {
            // The data offset points at the member's raw bytes (what the npz layer maps).
            let off = archive.data_offset(1).unwrap() as usize;
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(&bytes[off..off + 256], &(0..=255u8).collect::<Vec<_>>()[..]);
        }
    }
}

/// A seekable output that counts the seeks made on it.
struct CountingSeeks {
    inner: Cursor<Vec<u8>>,
    seeks: usize,
}

impl std::io::Write for CountingSeeks {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Seek for CountingSeeks {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.seeks += 1;
        self.inner.seek(to)
    }
}

#[test]
fn streamed_small_members_are_written_without_seeking_back_and_match_cpython() {
    // A small member streamed through start_member gets its final header up front (no seek
    // back, so a buffered output is not flushed per member); a large one is still patched.
    // Stored: byte-for-byte what CPython's zipfile writes (as numpy's savez streams members).
    use std::io::Write;
    let dir = tempdir();
    let small = walk(2_500, 3);
    let big = walk(600_000, 4); // 2.4 MiB: over the in-memory limit of a stored member
    let (small_raw, big_raw) = (dir.path().join("small"), dir.path().join("big"));
    std::fs::write(&small_raw, &small).unwrap();
    std::fs::write(&big_raw, &big).unwrap();
    let write = |compression: Compression, members: &[(&str, &[u8])]| {
        let out = CountingSeeks {
            inner: Cursor::new(Vec::new()),
            seeks: 0,
        };
        let mut zip = ZipWriter::new(out)
            .compression(compression)
            .modified(DosDateTime::new(2024, 5, 6, 7, 8, 10));
        for (name, data) in members {
            let mut m = zip.start_member(name).unwrap();
            for piece in data.chunks(4000) {
                m.write_all(piece).unwrap();
            }
            m.finish().unwrap();
        }
        let out = zip.finish().unwrap();
        (out.inner.into_inner(), out.seeks)
    };
    // ZipWriter::new asks the output for its position once.
    let (only_small, seeks) = write(Compression::Stored, &[("a.npy", &small), ("b.npy", &small)]);
    assert_eq!(seeks, 1, "no seek for small stored members");
    let (both, seeks) = write(Compression::Stored, &[("a.npy", &small), ("b.npy", &big)]);
    assert_eq!(
        seeks,
        1 + 2,
        "the large member's header is patched: seek there and back"
    );
    let (deflated, seeks) = write(Compression::Deflate(6), &[("a.npy", &small)]);
    assert_eq!(seeks, 1, "no seek for a small deflate member");
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()))
        .compression(Compression::Deflate(6))
        .modified(DosDateTime::new(2024, 5, 6, 7, 8, 10));
    zip.add_member("a.npy", &small).unwrap();
    assert_eq!(
        deflated,
        zip.finish().unwrap().into_inner(),
        "a streamed small deflate member is laid out as an in-memory one"
    );
    for (ours, second) in [(only_small, &small_raw), (both, &big_raw)] {
        let path = dir.path().join("ours.zip");
        std::fs::write(&path, &ours).unwrap();
        let theirs = dir.path().join("theirs.zip");
        run_python(
            r#"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], mode='w') as z:
    for name, src in (('a.npy', sys.argv[2]), ('b.npy', sys.argv[3])):
        info = zipfile.ZipInfo(name, date_time=(2024, 5, 6, 7, 8, 10))
        with z.open(info, 'w', force_zip64=True) as f:
            f.write(open(src, 'rb').read())
"#,
            &[
                theirs.to_str().unwrap(),
                small_raw.to_str().unwrap(),
                second.to_str().unwrap(),
            ],
        );
        assert_eq!(
            ours,
            std::fs::read(&theirs).unwrap(),
            "identical to CPython's"
        );
    }
}

#[test]
fn header_layout_matches_cpython_zipfile() {
    // Same member, same time, stored and deflate: byte-for-byte identical local and central
    // headers (the deflate data itself may differ: ours is block-parallel).
    let dir = tempdir();
    let data = walk(10_000, 5);
    let raw = dir.path().join("raw");
    std::fs::write(&raw, &data).unwrap();
    for (compression, name) in [
        (Compression::Stored, "ZIP_STORED"),
        (Compression::Deflate(6), "ZIP_DEFLATED"),
    ] {
        let ours = dir.path().join("ours.zip");
        let theirs = dir.path().join("theirs.zip");
        let mut zip = ZipWriter::create(&ours)
            .unwrap()
            .compression(compression)
            .modified(DosDateTime::new(2024, 5, 6, 7, 8, 10));
        zip.add_member("a.npy", &data).unwrap();
        zip.finish().unwrap();
        let out = run_python(
            &format!(
                r#"
import sys, zipfile, struct
data = open(sys.argv[1], 'rb').read()
with zipfile.ZipFile(sys.argv[2], mode='w', compression=zipfile.{name}) as z:
    info = zipfile.ZipInfo('a.npy', date_time=(2024, 5, 6, 7, 8, 10))
    info.compress_type = zipfile.{name}
    with z.open(info, 'w', force_zip64=True) as f:
        f.write(data)
z = zipfile.ZipFile(sys.argv[3])
assert z.testzip() is None
"#
            ),
            &[
                raw.to_str().unwrap(),
                theirs.to_str().unwrap(),
                ours.to_str().unwrap(),
            ],
        );
        assert!(out.is_empty());
        let a = std::fs::read(&ours).unwrap();
        let b = std::fs::read(&theirs).unwrap();
        // Local header: 30 fixed bytes, the name, then the zip64 extra (id, len, size,
        // compressed size); the central header follows the data, 46 bytes + name before the
        // 22-byte end record.
        let local = 30 + 5 + 20;
        if compression == Compression::Stored {
            assert_eq!(a, b, "stored archives are identical");
        } else {
            assert_eq!(
                a[..local - 8],
                b[..local - 8],
                "local header up to the compressed size"
            );
            let (ca, cb) = (a.len() - 22 - 46 - 5, b.len() - 22 - 46 - 5);
            assert_eq!(
                a[ca..ca + 20],
                b[cb..cb + 20],
                "central header up to the compressed size"
            );
            assert_eq!(
                a[ca + 24..ca + 51],
                b[cb + 24..cb + 51],
                "central header after it"
            );
            assert_eq!(
                a[a.len() - 22..a.len() - 10],
                b[b.len() - 22..b.len() - 10],
                "end record"
            );
        }
    }
}

#[test]
fn more_than_65535_members_use_zip64_end_records() {
    let dir = tempdir();
    let path = dir.path().join("many.zip");
    let mut zip = ZipWriter::create(&path).unwrap();
    let n = 70_000;
    for i in 0..n {
        zip.add_member(&format!("m{i}"), format!("{i}").as_bytes())
            .unwrap();
    }
    zip.finish().unwrap();
    let out = run_python(
        "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); names = z.namelist(); print(len(names), z.read('m69999').decode(), z.read('m123').decode())",
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "70000 69999 123");
    let mut archive = ZipArchive::open(&path).unwrap();
    assert!(archive.is_zip64());
    assert_eq!(archive.len(), n);
    let i = archive.index_of("m65600").unwrap();
    assert_eq!(archive.read_member(i).unwrap(), b"65600");
}

#[test]
fn forced_zip64_records_on_a_small_archive() {
    let dir = tempdir();
    let path = dir.path().join("z64.zip");
    let data = walk(100_000, 9);
    for compression in [Compression::Stored, Compression::Deflate(6)] {
        let mut zip = ZipWriter::create(&path)
            .unwrap()
            .compression(compression)
            .force_zip64_records(true);
        zip.add_member("a.npy", &data).unwrap();
        zip.add_member("b.npy", b"second").unwrap();
        zip.finish().unwrap();
        let method = CompressionMethod::from(compression).0;
        assert_eq!(
            python_listing(&path),
            vec![
                expected_line("a.npy", &data, method),
                expected_line("b.npy", b"second", method)
            ]
        );
        let mut archive = ZipArchive::open(&path).unwrap();
        assert!(archive.is_zip64());
        assert_eq!(archive.read_member(0).unwrap(), data);
        assert_eq!(archive.read_member(1).unwrap(), b"second");
        assert!(archive.entries()[1].header_offset() > 0);
    }
}

#[test]
fn python_zip64_archive_with_large_offsets_is_read() {
    // CPython's own zip64 records (forced by > 65535 members).
    let dir = tempdir();
    let path = dir.path().join("py64.zip");
    run_python(
        r#"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    for i in range(65540):
        z.writestr(f'n{i}', str(i))
"#,
        &[path.to_str().unwrap()],
    );
    let mut archive = ZipArchive::open(&path).unwrap();
    assert!(archive.is_zip64());
    assert_eq!(archive.len(), 65540);
    let i = archive.index_of("n65539").unwrap();
    assert_eq!(archive.read_member(i).unwrap(), b"65539");
}

#[test]
fn duplicate_names_are_refused() {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    zip.add_member("a", b"1").unwrap();
    let err = zip.add_member("a", b"2").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[test]
fn aligned_stored_members_python_reads() {
    let dir = tempdir();
    let path = dir.path().join("aligned.zip");
    let data = walk(10_000, 1);
    let mut zip = ZipWriter::create(&path).unwrap().align(64);
    for i in 0..5 {
        zip.add_member(&format!("m{i}.npy"), &data[..1000 * (i + 1) + i])
            .unwrap();
    }
    let mut streamed = zip.start_member("streamed.npy").unwrap();
    streamed.write_data(&data).unwrap();
    streamed.finish().unwrap();
    zip.finish().unwrap();
    let listing = python_listing(&path);
    assert_eq!(listing.len(), 6);
    assert_eq!(listing[5], expected_line("streamed.npy", &data, 0));
    let mut archive = ZipArchive::open(&path).unwrap();
    for i in 0..archive.len() {
        assert_eq!(archive.data_offset(i).unwrap() % 64, 0, "member {i}");
    }
    assert_eq!(archive.read_member(5).unwrap(), data);
}

#[test]
fn python_streamed_archive_with_data_descriptors_is_read() {
    // zipfile on an unseekable stream writes sizes and CRC after the data (flag bit 3) and
    // zeros in the local headers: the reader must take them from the central directory.
    let dir = tempdir();
    let path = dir.path().join("streamed.zip");
    run_python(
        r#"
import sys, zipfile
class Unseekable:
    def __init__(self, f): self.f = f
    def write(self, b): return self.f.write(b)
    def flush(self): self.f.flush()
with open(sys.argv[1], 'wb') as raw:
    with zipfile.ZipFile(Unseekable(raw), 'w', compression=zipfile.ZIP_DEFLATED) as z:
        for i in range(3):
            with z.open(f'arr_{i}.npy', 'w', force_zip64=True) as f:
                f.write(bytes([i]) * 100_000)
    with zipfile.ZipFile(sys.argv[1]) as z:
        assert all(info.flag_bits & 8 for info in z.infolist())
"#,
        &[path.to_str().unwrap()],
    );
    let mut archive = ZipArchive::open(&path).unwrap();
    for i in 0..3u8 {
        assert_eq!(
            archive.read_member(usize::from(i)).unwrap(),
            vec![i; 100_000]
        );
    }
}

/// A file that stores runs of zeros written at its end as holes (a sparse file): a 4 GiB
/// member of zeros takes no disk space, while every byte of it is still written by sciio and
/// read back (by Python and sciio) through the same code as any data.
struct Sparse {
    file: std::fs::File,
    pos: u64,
    len: u64,
}

impl std::io::Write for Sparse {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use std::io::{Seek, SeekFrom};
        if self.pos >= self.len && buf.iter().all(|&b| b == 0) {
            // Past the end, unwritten bytes read as zeros: skip them (set_len at the end).
            self.pos += buf.len() as u64;
        } else {
            self.file.seek(SeekFrom::Start(self.pos))?;
            self.file.write_all(buf)?;
            self.pos += buf.len() as u64;
        }
        self.len = self.len.max(self.pos);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.file.metadata()?.len() < self.len {
            self.file.set_len(self.len)?;
        }
        self.file.flush()
    }
}

impl std::io::Seek for Sparse {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        use std::io::SeekFrom;
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| std::io::Error::other("seek out of range"))?;
        Ok(self.pos)
    }
}

#[test]
fn member_over_4_gib_round_trips_through_python() {
    // A real zip64 member: 4 GiB + 16 MiB stored, streamed in bounded memory, followed by a
    // member whose header offset is past 4 GiB too. The member is zeros in a sparse file, so
    // that the test needs a few KiB of disk, not 4 GiB.
    let dir = tempdir();
    let path = dir.path().join("big.zip");
    let chunk = vec![0u8; 16 << 20];
    let chunks = 257u64;
    let out = Sparse {
        file: std::fs::File::create(&path).unwrap(),
        pos: 0,
        len: 0,
    };
    let mut zip = ZipWriter::new(out);
    let mut member = zip.start_member("big.npy").unwrap();
    for _ in 0..chunks {
        member.write_data(&chunk).unwrap();
    }
    member.finish().unwrap();
    zip.add_member("after.npy", b"after the big one").unwrap();
    let mut out = zip.finish().unwrap();
    std::io::Write::flush(&mut out).unwrap();
    let total = chunks * chunk.len() as u64;
    assert!(total > 1 << 32);
    // Sparse: far less disk than the archive's size.
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(&path).unwrap();
        assert!(meta.len() > total, "{}", meta.len());
        assert!(meta.blocks() * 512 < 64 << 20, "{} blocks", meta.blocks());
    }
    // zipfile checks the CRC when the member's stream ends.
    let out = run_python(
        r#"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    info = z.getinfo('big.npy')
    n = 0
    with z.open(info) as f:
        while True:
            b = f.read(1 << 24)
            if not b:
                break
            n += len(b)
    print(n, info.file_size, z.getinfo('after.npy').header_offset > 2**32, z.read('after.npy').decode())
"#,
        &[path.to_str().unwrap()],
    );
    assert_eq!(
        out.trim(),
        format!("{total} {total} True after the big one")
    );
    let mut archive = ZipArchive::open(&path).unwrap();
    assert!(archive.is_zip64());
    assert_eq!(archive.entries()[0].size(), total);
    assert_eq!(archive.read_member(1).unwrap(), b"after the big one");
    let mut member = archive.open_member(0).unwrap();
    let mut buf = vec![0u8; 16 << 20];
    let mut n = 0u64;
    loop {
        let k = member.read(&mut buf).unwrap();
        if k == 0 {
            break; // size and CRC verified
        }
        n += k as u64;
    }
    assert_eq!(n, total);
}
