//! The zip reader: parses the central directory once (zip64 aware, every field checked against
//! the file length), then opens members lazily, one at a time, as bounded `Read` streams that
//! verify size and CRC-32 when they end.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Take};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use flate2::bufread::DeflateDecoder;
use sciio_core::{Error, ErrorKind, Limits, Result};

use crate::bytes::Fields;
use crate::spec::*;

/// Buffer size between the file and the inflater (large reads bypass it for stored members).
const READ_BUFFER: usize = 256 << 10;

/// One member as the central directory describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    name: String,
    raw_name: Vec<u8>,
    method: CompressionMethod,
    flags: u16,
    crc32: u32,
    compressed_size: u64,
    size: u64,
    header_offset: u64,
    modified: DosDateTime,
}

impl Entry {
    /// The member name, decoded (UTF-8 when flagged, else CP437, as CPython decodes it).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How the member's data is compressed.
    pub fn method(&self) -> CompressionMethod {
        self.method
    }

    /// The CRC-32 of the uncompressed data, as declared.
    pub fn crc32(&self) -> u32 {
        self.crc32
    }

    /// The size of the data as stored in the archive, as declared.
    pub fn compressed_size(&self) -> u64 {
        self.compressed_size
    }

    /// The uncompressed size, as declared (reading checks it).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The absolute offset of the member's local header.
    pub fn header_offset(&self) -> u64 {
        self.header_offset
    }

    /// The modification time stored for the member.
    pub fn modified(&self) -> DosDateTime {
        self.modified
    }

    /// Whether the member is encrypted (such members are listed but not read).
    pub fn is_encrypted(&self) -> bool {
        self.flags & FLAG_ENCRYPTED != 0
    }

    /// Whether the member is a directory entry (its name ends with `/`).
    pub fn is_dir(&self) -> bool {
        self.name.ends_with('/')
    }
}

/// A zip archive opened for reading.
///
/// Opening parses only the end records and the central directory; member data is touched only
/// when a member is opened.
///
/// ```
/// use std::io::{Cursor, Read};
/// use sciio_zip::{Compression, ZipArchive, ZipWriter};
///
/// let mut writer = ZipWriter::new(Cursor::new(Vec::new())).compression(Compression::Deflate(6));
/// writer.add_member("a.txt", b"hello hello hello")?;
/// let bytes = writer.finish()?.into_inner();
///
/// let mut archive = ZipArchive::new(Cursor::new(bytes))?;
/// assert_eq!(archive.entries()[0].name(), "a.txt");
/// let mut text = String::new();
/// archive.open_member(0)?.read_to_string(&mut text)?;
/// assert_eq!(text, "hello hello hello");
/// # Ok::<(), sciio_core::Error>(())
/// ```
#[derive(Debug)]
pub struct ZipArchive<R> {
    reader: R,
    len: u64,
    cd_start: u64,
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
    file: Option<PathBuf>,
    limits: Limits,
    zip64: bool,
}

impl ZipArchive<File> {
    /// Opens the archive at `path` with default [`Limits`]. Errors name the file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with_limits(path, Limits::default())
    }

    /// Opens the archive at `path` with the given limits.
    pub fn open_with_limits(path: impl AsRef<Path>, limits: Limits) -> Result<Self> {
        let path = path.as_ref();
        let file = File::open(path)
            .map_err(|e| Error::io("cannot open zip archive", e).with_file(path))?;
        Self::parse(file, limits, Some(path.to_path_buf()))
    }
}

impl<R: Read + Seek> ZipArchive<R> {
    /// Reads the directory of the archive in `reader` with default [`Limits`].
    pub fn new(reader: R) -> Result<Self> {
        Self::with_limits(reader, Limits::default())
    }

    /// Reads the directory of the archive in `reader` with the given limits.
    pub fn with_limits(reader: R, limits: Limits) -> Result<Self> {
        Self::parse(reader, limits, None)
    }

    /// Names the archive in errors (for readers not opened with [`ZipArchive::open`]).
    pub fn with_file_name(mut self, path: impl AsRef<Path>) -> Self {
        self.file = Some(path.as_ref().to_path_buf());
        self
    }

    fn parse(mut reader: R, limits: Limits, file: Option<PathBuf>) -> Result<Self> {
        let located = |e: Error| match &file {
            Some(f) => e.with_file(f),
            None => e,
        };
        let len = reader
            .seek(SeekFrom::End(0))
            .map_err(|e| located(Error::io("cannot seek in zip archive", e)))?;
        let dir = read_directory(&mut reader, len, &limits).map_err(located)?;
        let mut by_name = HashMap::with_capacity(dir.entries.len());
        for (i, entry) in dir.entries.iter().enumerate() {
            // Like CPython's NameToInfo, a repeated name refers to the last member so named.
            by_name.insert(entry.name.clone(), i);
        }
        Ok(ZipArchive {
            reader,
            len,
            cd_start: dir.cd_start,
            entries: dir.entries,
            by_name,
            file,
            limits,
            zip64: dir.zip64,
        })
    }

    /// The members, in central-directory order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the archive has no members.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the archive has zip64 end records.
    pub fn is_zip64(&self) -> bool {
        self.zip64
    }

    /// The index of the member called `name` (the last one, if the name repeats).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The limits this archive was opened with.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The underlying reader (e.g. the `File`, to memory-map a stored member).
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// The name given to the archive in errors, if any.
    pub fn file_name(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Gives back the underlying reader.
    pub fn into_inner(self) -> R {
        self.reader
    }

    fn entry_checked(&self, index: usize) -> Result<&Entry> {
        self.entries.get(index).ok_or_else(|| {
            self.locate(Error::not_found(format!(
                "member index {index} out of range (archive has {} members)",
                self.entries.len()
            )))
        })
    }

    fn locate(&self, e: Error) -> Error {
        match &self.file {
            Some(f) => e.with_file(f),
            None => e,
        }
    }

    /// The absolute offset of member `index`'s data (after its local header). For a stored
    /// member this is where its bytes can be memory-mapped. Reads the local header and checks
    /// it against the central directory.
    pub fn data_offset(&mut self, index: usize) -> Result<u64> {
        let entry = self.entry_checked(index)?.clone();
        locate_data(&mut self.reader, &entry, self.cd_start)
            .map_err(|e| self.locate(e.with_node(entry.name.clone())))
    }

    /// Opens member `index` as a `Read` stream of its uncompressed bytes, touching no other
    /// member. The stream stops with an error as soon as the data exceeds the declared size
    /// and, at its end, checks the size and the CRC-32. Errors carry the file, member and
    /// offset; turn an `io::Error` from it back into sciio's with [`error_from_io`].
    pub fn open_member(&mut self, index: usize) -> Result<MemberReader<'_, R>> {
        let entry = self.entry_checked(index)?.clone();
        let locate = |e: Error| {
            let e = e.with_node(entry.name.clone());
            match &self.file {
                Some(f) => e.with_file(f),
                None => e,
            }
        };
        check_readable(&entry, &self.limits).map_err(locate)?;
        let data_offset = locate_data(&mut self.reader, &entry, self.cd_start).map_err(locate)?;
        let file = self.file.clone();
        self.reader
            .seek(SeekFrom::Start(data_offset))
            .map_err(|e| locate(Error::io("cannot seek to member data", e)))?;
        let raw = BufReader::with_capacity(
            READ_BUFFER.min(entry.compressed_size.max(1) as usize),
            (&mut self.reader).take(entry.compressed_size),
        );
        let source = if entry.method == CompressionMethod::DEFLATE {
            Source::Deflate(Box::new(DeflateDecoder::new(raw)))
        } else {
            Source::Stored(raw)
        };
        Ok(MemberReader {
            source,
            hasher: crc32fast::Hasher::new(),
            produced: 0,
            size: entry.size,
            crc32: entry.crc32,
            name: entry.name,
            file,
            data_offset,
            state: State::Reading,
        })
    }

    /// Reads member `index` whole into memory (size checked against [`Limits::max_alloc`]).
    pub fn read_member(&mut self, index: usize) -> Result<Vec<u8>> {
        let entry = self.entry_checked(index)?;
        let what = format!("member {}", entry.name);
        let n = self
            .limits
            .check_alloc(entry.size, &what)
            .map_err(|e| self.locate(e.with_node(entry.name.clone())))?;
        let mut out = vec![0u8; n];
        let mut member = self.open_member(index)?;
        member
            .read_exact_pipelined(&mut out)
            .map_err(error_from_io)?;
        // One more read sees the end of the stream and runs the size and CRC checks.
        // (It returns 0 or an error: bytes past the declared size are an error.)
        member.read(&mut [0u8; 1]).map_err(error_from_io)?;
        Ok(out)
    }

    /// The total length of the archive in bytes.
    pub fn archive_len(&self) -> u64 {
        self.len
    }
}

/// Refuses members this reader cannot decode, and declared sizes over the limits.
fn check_readable(entry: &Entry, limits: &Limits) -> Result<()> {
    if entry.is_encrypted() {
        return Err(Error::unsupported("member is encrypted"));
    }
    match entry.method {
        CompressionMethod::STORED => {
            if entry.compressed_size != entry.size {
                return Err(Error::format(format!(
                    "stored member declares {} bytes stored but {} bytes uncompressed",
                    entry.compressed_size, entry.size
                )));
            }
            Ok(())
        }
        CompressionMethod::DEFLATE => limits.check_ratio(
            entry.compressed_size,
            entry.size,
            &format!("deflate member {}", entry.name),
        ),
        other => Err(Error::unsupported(format!(
            "compression {other} (only stored and deflate members are read)"
        ))),
    }
}

/// Reads and checks the local header of `entry`; returns the absolute data offset.
fn locate_data<R: Read + Seek>(reader: &mut R, entry: &Entry, cd_start: u64) -> Result<u64> {
    let at = entry.header_offset;
    let mut fixed = [0u8; LOCAL_LEN];
    read_at(reader, at, &mut fixed, "local header")?;
    let mut f = Fields::new(&fixed, at, "local header");
    if f.u32()? != LOCAL_SIG {
        return Err(
            Error::format("no local header signature where the directory points").with_offset(at),
        );
    }
    f.bytes(22)?; // version, flags, method, time, date, crc, sizes: the directory's copy rules
    let name_len = u64::from(f.u16()?);
    let extra_len = u64::from(f.u16()?);
    let name_at = at + LOCAL_LEN as u64;
    let data_offset = name_at + name_len + extra_len;
    let data_end = data_offset.checked_add(entry.compressed_size);
    match data_end {
        Some(end) if end <= cd_start => {}
        _ => {
            return Err(Error::format(format!(
                "member data ({} bytes from byte {data_offset}) runs past the central directory at byte {cd_start}",
                entry.compressed_size
            ))
            .with_offset(at))
        }
    }
    if name_len as usize != entry.raw_name.len() {
        return Err(
            Error::format("local header name differs from the directory's").with_offset(name_at),
        );
    }
    let mut name = vec![0u8; entry.raw_name.len()];
    read_at(reader, name_at, &mut name, "local header name")?;
    if name != entry.raw_name {
        return Err(
            Error::format("local header name differs from the directory's").with_offset(name_at),
        );
    }
    Ok(data_offset)
}

fn read_at<R: Read + Seek>(reader: &mut R, at: u64, buf: &mut [u8], what: &str) -> Result<()> {
    reader
        .seek(SeekFrom::Start(at))
        .and_then(|_| reader.read_exact(buf))
        .map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                Error::truncated(format!(
                    "{what} ({} bytes) ends past the end of the file",
                    buf.len()
                ))
            } else {
                Error::io(format!("cannot read {what}"), e)
            }
            .with_offset(at)
        })
}

struct Directory {
    entries: Vec<Entry>,
    cd_start: u64,
    zip64: bool,
}

/// Where the central directory is and how many members it lists.
struct EndRecord {
    count: u64,
    cd_size: u64,
    cd_offset: u64,
    /// The first byte after the directory that belongs to the end records.
    records_start: u64,
    zip64: bool,
}

fn read_directory<R: Read + Seek>(reader: &mut R, len: u64, limits: &Limits) -> Result<Directory> {
    let end = read_end_record(reader, len)?;
    let cd_end = end.cd_offset.checked_add(end.cd_size);
    if cd_end.is_none_or(|cd_end| cd_end > end.records_start) {
        return Err(Error::format(format!(
            "central directory ({} bytes at byte {}) overlaps the end records at byte {}",
            end.cd_size, end.cd_offset, end.records_start
        )));
    }
    // Each directory record is at least 46 bytes: this bounds the count before allocating.
    if end.count > end.cd_size / CENTRAL_LEN as u64 {
        return Err(Error::format(format!(
            "end record lists {} members but the {}-byte central directory holds at most {}",
            end.count,
            end.cd_size,
            end.cd_size / CENTRAL_LEN as u64
        )));
    }
    let n = limits.check_alloc(end.cd_size, "zip central directory")?;
    let mut cd = vec![0u8; n];
    read_at(reader, end.cd_offset, &mut cd, "central directory")?;
    let mut f = Fields::new(&cd, end.cd_offset, "central directory");
    let mut entries = Vec::with_capacity(end.count as usize);
    for _ in 0..end.count {
        entries.push(parse_central_record(&mut f, end.cd_offset)?);
    }
    Ok(Directory {
        entries,
        cd_start: end.cd_offset,
        zip64: end.zip64,
    })
}

fn read_end_record<R: Read + Seek>(reader: &mut R, len: u64) -> Result<EndRecord> {
    let tail_len = len.min((EOCD_LEN + MAX_COMMENT) as u64) as usize;
    let tail_start = len - tail_len as u64;
    let mut tail = vec![0u8; tail_len];
    read_at(reader, tail_start, &mut tail, "end of archive")?;
    let found = (0..tail_len.saturating_sub(EOCD_LEN - 1)).rev().find(|&i| {
        tail[i..i + 4] == EOCD_SIG.to_le_bytes() && {
            let comment = usize::from(u16::from_le_bytes([tail[i + 20], tail[i + 21]]));
            i + EOCD_LEN + comment <= tail_len
        }
    });
    let Some(i) = found else {
        return Err(Error::format(
            "no end-of-central-directory record: not a zip archive, or truncated",
        )
        .with_offset(len));
    };
    let eocd_at = tail_start + i as u64;
    let mut f = Fields::new(&tail[i..], eocd_at, "end-of-central-directory record");
    f.u32()?;
    let disk = f.u16()?;
    let cd_disk = f.u16()?;
    let _count_here = f.u16()?;
    let count = f.u16()?;
    let cd_size = f.u32()?;
    let cd_offset = f.u32()?;
    if disk != 0 || cd_disk != 0 {
        return Err(Error::unsupported("multi-volume zip archive").with_offset(eocd_at));
    }
    if let Some(end) = read_zip64_end(reader, eocd_at)? {
        return Ok(end);
    }
    Ok(EndRecord {
        count: u64::from(count),
        cd_size: u64::from(cd_size),
        cd_offset: u64::from(cd_offset),
        records_start: eocd_at,
        zip64: false,
    })
}

/// The zip64 end record, when a zip64 locator sits right before the end record.
fn read_zip64_end<R: Read + Seek>(reader: &mut R, eocd_at: u64) -> Result<Option<EndRecord>> {
    let Some(locator_at) = eocd_at.checked_sub(ZIP64_LOCATOR_LEN as u64) else {
        return Ok(None);
    };
    let mut locator = [0u8; ZIP64_LOCATOR_LEN];
    read_at(reader, locator_at, &mut locator, "zip64 locator")?;
    let mut f = Fields::new(
        &locator,
        locator_at,
        "zip64 end-of-central-directory locator",
    );
    if f.u32()? != ZIP64_LOCATOR_SIG {
        return Ok(None);
    }
    let disk = f.u32()?;
    let record_at = f.u64()?;
    if disk != 0 {
        return Err(Error::unsupported("multi-volume zip64 archive").with_offset(locator_at));
    }
    if record_at
        .checked_add(ZIP64_EOCD_LEN as u64)
        .is_none_or(|end| end > locator_at)
    {
        return Err(Error::format(format!(
            "zip64 locator points to byte {record_at}, past where its record can be"
        ))
        .with_offset(locator_at + 8));
    }
    let mut record = [0u8; ZIP64_EOCD_LEN];
    read_at(reader, record_at, &mut record, "zip64 end record")?;
    let mut f = Fields::new(&record, record_at, "zip64 end-of-central-directory record");
    if f.u32()? != ZIP64_EOCD_SIG {
        return Err(
            Error::format("no zip64 end record where the locator points").with_offset(record_at),
        );
    }
    f.bytes(8 + 2 + 2)?; // record size, version made by, version needed
    let disk = f.u32()?;
    let cd_disk = f.u32()?;
    let _count_here = f.u64()?;
    let count = f.u64()?;
    let cd_size = f.u64()?;
    let cd_offset = f.u64()?;
    if disk != 0 || cd_disk != 0 {
        return Err(Error::unsupported("multi-volume zip64 archive").with_offset(record_at));
    }
    Ok(Some(EndRecord {
        count,
        cd_size,
        cd_offset,
        records_start: record_at,
        zip64: true,
    }))
}

fn parse_central_record(f: &mut Fields<'_>, cd_start: u64) -> Result<Entry> {
    let at = f.offset();
    if f.u32()? != CENTRAL_SIG {
        return Err(Error::format("bad central directory record signature").with_offset(at));
    }
    let _made_by = f.u16()?;
    let _needed = f.u16()?;
    let flags = f.u16()?;
    let method = CompressionMethod(f.u16()?);
    let time = f.u16()?;
    let date = f.u16()?;
    let crc32 = f.u32()?;
    let compressed32 = f.u32()?;
    let size32 = f.u32()?;
    let name_len = usize::from(f.u16()?);
    let extra_len = usize::from(f.u16()?);
    let comment_len = usize::from(f.u16()?);
    let disk16 = f.u16()?;
    let _internal = f.u16()?;
    let _external = f.u32()?;
    let offset32 = f.u32()?;
    let raw_name = f.bytes(name_len)?.to_vec();
    let extra_at = f.offset();
    let extra = f.bytes(extra_len)?;
    f.bytes(comment_len)?;

    let name = decode_name(&raw_name, flags & FLAG_UTF8 != 0);
    let mut wide = Zip64Fields {
        size: u64::from(size32),
        compressed_size: u64::from(compressed32),
        header_offset: u64::from(offset32),
    };
    let needs = [
        size32 == u32::MAX,
        compressed32 == u32::MAX,
        offset32 == u32::MAX,
        disk16 == u16::MAX,
    ];
    if needs.iter().any(|&n| n) {
        apply_zip64_extra(extra, extra_at, needs, &mut wide)
            .map_err(|e| e.with_node(name.clone()))?;
    }
    if wide.header_offset >= cd_start {
        return Err(Error::format(format!(
            "local header offset {} is not before the central directory at byte {cd_start}",
            wide.header_offset
        ))
        .with_node(name)
        .with_offset(at));
    }
    Ok(Entry {
        name,
        raw_name,
        method,
        flags,
        crc32,
        compressed_size: wide.compressed_size,
        size: wide.size,
        header_offset: wide.header_offset,
        modified: DosDateTime { date, time },
    })
}

struct Zip64Fields {
    size: u64,
    compressed_size: u64,
    header_offset: u64,
}

/// Replaces the 0xFFFFFFFF placeholders by the zip64 extra field's values, which appear in the
/// fixed order size, compressed size, offset, disk — only those whose 32-bit field overflowed.
fn apply_zip64_extra(
    extra: &[u8],
    extra_at: u64,
    needs: [bool; 4],
    out: &mut Zip64Fields,
) -> Result<()> {
    let mut f = Fields::new(extra, extra_at, "extra field");
    while f.remaining() >= 4 {
        let id = f.u16()?;
        let len = usize::from(f.u16()?);
        let body_at = f.offset();
        let body = f.bytes(len)?;
        if id != ZIP64_EXTRA_ID {
            continue;
        }
        let mut z = Fields::new(body, body_at, "zip64 extra field");
        if needs[0] {
            out.size = z.u64()?;
        }
        if needs[1] {
            out.compressed_size = z.u64()?;
        }
        if needs[2] {
            out.header_offset = z.u64()?;
        }
        if needs[3] && z.u32()? != 0 {
            return Err(Error::unsupported(
                "member on another volume of a multi-volume archive",
            ));
        }
        return Ok(());
    }
    Err(
        Error::format("sizes or offset overflow 32 bits but there is no zip64 extra field")
            .with_offset(extra_at),
    )
}

enum Source<'a, R> {
    Stored(BufReader<Take<&'a mut R>>),
    Deflate(Box<DeflateDecoder<BufReader<Take<&'a mut R>>>>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Reading,
    Done,
    Failed,
}

/// The uncompressed bytes of one member, read lazily (see [`ZipArchive::open_member`]).
pub struct MemberReader<'a, R> {
    source: Source<'a, R>,
    hasher: crc32fast::Hasher,
    produced: u64,
    size: u64,
    crc32: u32,
    name: String,
    file: Option<PathBuf>,
    data_offset: u64,
    state: State,
}

impl<R> std::fmt::Debug for MemberReader<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberReader")
            .field("name", &self.name)
            .field("produced", &self.produced)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl<R> MemberReader<'_, R> {
    /// The declared uncompressed size of the member.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The member's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The absolute offset of the member's data in the archive.
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    fn fail(&mut self, kind: ErrorKind, message: String) -> io::Error {
        self.state = State::Failed;
        let mut e = Error::new(kind, message)
            .with_node(self.name.clone())
            .with_offset(self.data_offset);
        if let Some(f) = &self.file {
            e = e.with_file(f);
        }
        io::Error::other(e)
    }

    fn finish(&mut self) -> io::Result<usize> {
        if self.produced != self.size {
            return Err(self.fail(
                ErrorKind::Truncated,
                format!(
                    "member data ends after {} of its declared {} bytes",
                    self.produced, self.size
                ),
            ));
        }
        let crc = std::mem::take(&mut self.hasher).finalize();
        if crc != self.crc32 {
            return Err(self.fail(
                ErrorKind::Corrupt,
                format!(
                    "CRC-32 is {crc:#010x}, the directory declares {:#010x}",
                    self.crc32
                ),
            ));
        }
        self.state = State::Done;
        Ok(0)
    }
}

/// Below this size, [`MemberReader::read_exact_pipelined`] is a plain `read_exact`: threads
/// would cost more than they save.
const PIPELINE_MIN: usize = 16 << 20;

/// The unit handed between the threads of a pipelined read.
const PIPELINE_CHUNK: usize = 4 << 20;

/// Touching one byte per page of this size faults every page in (huge pages are larger).
const PAGE: usize = 4096;

impl<R: Read> MemberReader<'_, R> {
    /// Fills `buf` with the member's next `buf.len()` bytes, like [`Read::read_exact`], with
    /// the same size and bomb checks, and faster for large buffers: while this thread inflates,
    /// one helper thread touches the pages of `buf` ahead of it (so that the kernel zeroes fresh
    /// pages of a new allocation on another core, which otherwise costs a sixth of a
    /// single-threaded read), and another computes the CRC-32 of what is done. The contents of
    /// `buf` are unspecified after an error.
    ///
    /// ```
    /// # use std::io::{Cursor, Read};
    /// # use sciio_zip::{Compression, ZipArchive, ZipWriter};
    /// let data: Vec<u8> = (0..40u32 << 20).map(|i| (i / 1000) as u8).collect();
    /// let mut zip = ZipWriter::new(Cursor::new(Vec::new())).compression(Compression::Deflate(1));
    /// zip.add_member("big", &data)?;
    /// let mut zip = ZipArchive::new(Cursor::new(zip.finish()?.into_inner()))?;
    /// let mut member = zip.open_member(0)?;
    /// let mut out = vec![0u8; data.len()];
    /// member.read_exact_pipelined(&mut out)?;
    /// assert_eq!(member.read(&mut [0u8; 1])?, 0); // the end: size and CRC-32 checked
    /// assert!(out == data);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_exact_pipelined(&mut self, buf: &mut [u8]) -> io::Result<()> {
        let remaining = self.size - self.produced;
        if buf.len() < PIPELINE_MIN || buf.len() as u64 > remaining || self.state != State::Reading
        {
            // Small, or longer than the member: the plain path gives the usual errors.
            return self.read_exact(buf);
        }
        let crc = std::thread::scope(|scope| {
            let (ready_tx, ready_rx) = mpsc::channel::<&mut [u8]>();
            let (done_tx, done_rx) = mpsc::channel::<&[u8]>();
            let chunks: Vec<&mut [u8]> = buf.chunks_mut(PIPELINE_CHUNK).collect();
            scope.spawn(move || {
                for chunk in chunks {
                    chunk.iter_mut().step_by(PAGE).for_each(|b| *b = 0);
                    if ready_tx.send(chunk).is_err() {
                        break; // the reader stopped on an error
                    }
                }
            });
            let hasher = scope.spawn(move || {
                let mut hasher = crc32fast::Hasher::new();
                done_rx.iter().for_each(|chunk| hasher.update(chunk));
                hasher
            });
            for chunk in ready_rx {
                self.fill_unhashed(chunk)?;
                let done: &[u8] = chunk;
                // The hasher lives until done_tx is dropped: the send cannot fail.
                let _ = done_tx.send(done);
            }
            drop(done_tx);
            hasher
                .join()
                .map_err(|_| io::Error::other("CRC-32 thread failed"))
        })?;
        self.hasher.combine(&crc);
        Ok(())
    }

    /// Fills `buf` without feeding the CRC-32 hasher.
    fn fill_unhashed(&mut self, mut buf: &mut [u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_unhashed(buf) {
                Ok(0) => {
                    return Err(self.fail(
                        ErrorKind::Truncated,
                        format!(
                            "member data ends after {} of its declared {} bytes",
                            self.produced, self.size
                        ),
                    ))
                }
                Ok(n) => buf = &mut buf[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// One read with every check but the CRC-32, whose hasher the caller feeds.
    fn read_unhashed(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.state {
            State::Done => return Ok(0),
            State::Failed => {
                return Err(self.fail(ErrorKind::Format, "member read after an error".into()))
            }
            State::Reading => {}
        }
        if buf.is_empty() {
            return Ok(0);
        }
        // Ask for at most one byte past the declared size: getting it proves a lie (zip bomb
        // guard) without ever inflating more than that.
        let remaining = self.size - self.produced;
        let want = (buf.len() as u64).min(remaining.saturating_add(1)) as usize;
        let got = match &mut self.source {
            Source::Stored(r) => r.read(&mut buf[..want]),
            Source::Deflate(r) => r.read(&mut buf[..want]),
        };
        let n = match got {
            Ok(n) => n,
            Err(e) => {
                let kind = match e.kind() {
                    io::ErrorKind::UnexpectedEof => ErrorKind::Truncated,
                    io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => ErrorKind::Corrupt,
                    _ => ErrorKind::Io,
                };
                return Err(self.fail(
                    kind,
                    format!("after {} bytes of member data: {e}", self.produced),
                ));
            }
        };
        if n == 0 {
            return self.finish();
        }
        if n as u64 > remaining {
            return Err(self.fail(
                ErrorKind::LimitExceeded,
                format!(
                    "member data exceeds its declared size of {} bytes (decompression bomb?)",
                    self.size
                ),
            ));
        }
        self.produced += n as u64;
        Ok(n)
    }
}

impl<R: Read> Read for MemberReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.read_unhashed(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// Turns an `io::Error` from a [`MemberReader`] back into the sciio [`Error`] it carries (kind,
/// file, member, offset); other I/O errors become [`ErrorKind::Io`] / [`ErrorKind::Truncated`].
pub fn error_from_io(e: io::Error) -> Error {
    if e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
        if let Some(inner) = e.into_inner() {
            if let Ok(err) = inner.downcast::<Error>() {
                return *err;
            }
        }
        return Error::new(ErrorKind::Io, "member read failed");
    }
    Error::from(e)
}
