//! The zip writer: headers laid out as CPython's `zipfile` lays them out for numpy's `savez`
//! (`ZipFile.open(name, 'w', force_zip64=True)` on a seekable file: a local header with a zip64
//! extra field holding both sizes, patched after the data; a central directory with zip64 extras
//! only past 2 GiB; zip64 end records past 65535 members or 2 GiB), with deflate members
//! compressed in parallel (see `deflate.rs`) and streamed in bounded memory.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sciio_core::{Error, Result};

use crate::bytes::Put;
use crate::deflate::{compress_blocks, next_dict, Block, END_OF_STREAM};
use crate::spec::*;

/// How members are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// No compression (`zipfile.ZIP_STORED`, what `np.savez` writes). Stored members can be
    /// memory-mapped by readers.
    Stored,
    /// Raw deflate at a zlib level 0–9 (`zipfile.ZIP_DEFLATED`; `np.savez_compressed` uses
    /// zlib's default, level 6).
    Deflate(u32),
}

/// Default block size of parallel deflate (pigz uses 128 KiB; larger blocks lose less ratio to
/// the flush markers and give rayon coarser work).
pub const DEFAULT_BLOCK_SIZE: usize = 1 << 20;

/// Blocks per thread in one parallel batch: enough for rayon to balance uneven blocks (and
/// threads descheduled on a busy machine), few enough to keep memory at a few MiB.
const BLOCKS_PER_THREAD: usize = 8;

/// Extra-field id of zipalign's alignment padding.
const ALIGN_EXTRA_ID: u16 = 0xD935;
/// The smallest alignment field: id, length, the 2-byte alignment value.
const ALIGN_FIELD_MIN: u64 = 6;

/// One member already written, as the central directory will describe it.
#[derive(Debug)]
struct Written {
    name: Vec<u8>,
    flags: u16,
    method: CompressionMethod,
    crc32: u32,
    size: u64,
    compressed_size: u64,
    header_offset: u64,
    local_zip64: bool,
    /// Length of the alignment extra field in the local header (0: none).
    align_field: u16,
    /// The alignment that field achieves.
    align: u16,
}

/// Writes a zip archive member by member.
///
/// Defaults: [`Compression::Stored`], zip64 local headers on every member (as numpy writes
/// them), [`DEFAULT_BLOCK_SIZE`] deflate blocks on rayon's global thread pool, 1980-01-01 00:00
/// as modification time (as numpy's `savez` stores it). Call [`ZipWriter::finish`] to write the central directory; an archive
/// dropped unfinished is not a valid zip file.
///
/// ```
/// use std::io::{Cursor, Write};
/// use sciio_zip::{Compression, ZipWriter};
///
/// let mut zip = ZipWriter::new(Cursor::new(Vec::new())).compression(Compression::Deflate(6));
/// zip.add_member("small.txt", b"in one go")?;
/// let mut member = zip.start_member("big.bin")?; // streamed, compressed on all cores
/// for i in 0..1000u32 {
///     member.write_all(&(i % 7).to_le_bytes())?;
/// }
/// member.finish()?;
/// let bytes = zip.finish()?.into_inner();
/// assert_eq!(&bytes[..4], b"PK\x03\x04");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ZipWriter<W: Write + Seek> {
    out: W,
    pos: u64,
    written: Vec<Written>,
    names: HashSet<Vec<u8>>,
    compression: Compression,
    block_size: usize,
    force_zip64: bool,
    force_zip64_records: bool,
    modified: DosDateTime,
    align: u16,
    file: Option<PathBuf>,
    failed: bool,
}

impl ZipWriter<BufWriter<File>> {
    /// Creates (truncates) the file at `path` and writes an archive into it.
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let file = File::create(path)
            .map_err(|e| Error::io("cannot create zip archive", e).with_file(path))?;
        let mut w = ZipWriter::new(BufWriter::with_capacity(1 << 20, file));
        w.file = Some(path.to_path_buf());
        Ok(w)
    }
}

impl<W: Write + Seek> ZipWriter<W> {
    /// Writes an archive into `out` from its current position (offsets recorded in the archive
    /// are absolute stream positions, as `zipfile` records them).
    pub fn new(mut out: W) -> Self {
        let pos = out.stream_position().unwrap_or(0);
        ZipWriter {
            out,
            pos,
            written: Vec::new(),
            names: HashSet::new(),
            compression: Compression::Stored,
            block_size: DEFAULT_BLOCK_SIZE,
            force_zip64: true,
            force_zip64_records: false,
            modified: DosDateTime::EPOCH,
            align: 1,
            file: None,
            failed: false,
        }
    }

    /// Sets the compression of the members added from now on. Default: [`Compression::Stored`].
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Sets the size of the blocks deflated in parallel (at least 64 KiB). Default:
    /// [`DEFAULT_BLOCK_SIZE`].
    pub fn block_size(mut self, bytes: usize) -> Self {
        self.block_size = bytes.max(64 << 10);
        self
    }

    /// Whether every local header carries a zip64 extra field, as numpy's `savez` forces (so a
    /// streamed member may grow past 4 GiB). Default: true. When false, a member whose size is
    /// not known up front and ends up over 2 GiB fails, like CPython's.
    pub fn force_zip64(mut self, force: bool) -> Self {
        self.force_zip64 = force;
        self
    }

    /// Writes zip64 end records and zip64 central-directory extras even for a small archive
    /// (to exercise readers' zip64 paths). Default: false (only when needed).
    pub fn force_zip64_records(mut self, force: bool) -> Self {
        self.force_zip64_records = force;
        self
    }

    /// Aligns the data of stored members to `bytes` (a power of two up to 4096) in the file, with
    /// padding in an extra field of the local header (id 0xD935, as Android's `zipalign` writes
    /// it; readers skip unknown extra fields), so that memory-mapped members can be viewed as
    /// typed arrays. Default: 1 (no padding: byte-identical to CPython's `zipfile`).
    pub fn align(mut self, bytes: u16) -> Self {
        self.align = if bytes.is_power_of_two() {
            bytes.min(4096)
        } else {
            1
        };
        self
    }

    /// Sets the modification time stored for members. Default: [`DosDateTime::EPOCH`]
    /// (1980-01-01 00:00), what `zipfile.ZipFile.open(name, 'w')` and so numpy's `savez` store,
    /// which also makes archives reproducible. [`DosDateTime::now`] gives the current time.
    pub fn modified(mut self, time: DosDateTime) -> Self {
        self.modified = time;
        self
    }

    fn locate(&self, e: Error) -> Error {
        match &self.file {
            Some(f) => e.with_file(f),
            None => e,
        }
    }

    fn io(&mut self, what: &str, e: io::Error) -> Error {
        self.failed = true;
        let e = Error::io(format!("cannot write {what}"), e).with_offset(self.pos);
        self.locate(e)
    }

    fn put(&mut self, bytes: &[u8], what: &str) -> Result<()> {
        match self.out.write_all(bytes) {
            Ok(()) => {
                self.pos += bytes.len() as u64;
                Ok(())
            }
            Err(e) => Err(self.io(what, e)),
        }
    }

    /// Member names often come from another file (HDF5 paths, MAT variables, Parquet
    /// columns): one that would land outside the extraction folder, or that holds control
    /// characters, is refused.
    fn check_name(&mut self, name: &str) -> Result<()> {
        if self.failed {
            return Err(self.locate(Error::invalid_input(
                "a previous write failed; the archive is unusable",
            )));
        }
        if name.is_empty() || name.len() > usize::from(u16::MAX) {
            return Err(self.locate(Error::invalid_input(format!(
                "member name must be 1 to 65535 bytes long, not {}",
                name.len()
            ))));
        }
        if let Some(why) = unsafe_member_name(name) {
            let shown: String = name.chars().flat_map(char::escape_default).collect();
            return Err(self.locate(Error::invalid_input(format!(
                "member name '{shown}' {why}: an unzip would write it outside its folder"
            ))));
        }
        if !self.names.insert(name.as_bytes().to_vec()) {
            return Err(self.locate(Error::invalid_input("duplicate member name").with_node(name)));
        }
        Ok(())
    }

    fn method(&self) -> CompressionMethod {
        match self.compression {
            Compression::Stored => CompressionMethod::STORED,
            Compression::Deflate(_) => CompressionMethod::DEFLATE,
        }
    }

    /// Starts a member whose data is then written through the returned [`MemberWriter`]
    /// (deflate members are compressed block-parallel as data arrives, in bounded memory).
    pub fn start_member(&mut self, name: &str) -> Result<MemberWriter<'_, W>> {
        self.check_name(name)?;
        let header_offset = self.pos;
        let zip64 = self.force_zip64;
        let entry = Written {
            name: name.as_bytes().to_vec(),
            flags: name_flags(name),
            method: self.method(),
            crc32: 0,
            size: 0,
            compressed_size: 0,
            header_offset,
            local_zip64: zip64,
            align_field: 0,
            align: self.align,
        };
        let entry = Written {
            align_field: self.align_field(&entry),
            ..entry
        };
        // The header waits for the data: a member that ends while its data is still in
        // memory (small members, most of a MAT file's) gets its header with the final CRC-32
        // and sizes, then its data, without seeking back (a seek flushes a buffered output:
        // one write system call per member). A larger one gets a placeholder header, patched
        // once the data is in, as CPython does on a seekable file.
        let batch = self.block_size * rayon::current_num_threads().max(1) * BLOCKS_PER_THREAD;
        let level = match self.compression {
            Compression::Deflate(level) => Some(level),
            Compression::Stored => None,
        };
        Ok(MemberWriter {
            zip: self,
            entry,
            level,
            hasher: crc32fast::Hasher::new(),
            pending: Vec::new(),
            dict: Vec::new(),
            batch,
            header_written: false,
        })
    }

    /// Adds a member whose data is all in memory.
    pub fn add_member(&mut self, name: &str, data: &[u8]) -> Result<()> {
        self.add_members(&[(name, data)])
    }

    /// Adds several in-memory members; with deflate, small members are compressed in parallel
    /// with each other and large ones block-parallel, so all cores work either way.
    pub fn add_members(&mut self, members: &[(&str, &[u8])]) -> Result<()> {
        let Compression::Deflate(level) = self.compression else {
            for (name, data) in members {
                self.add_stored(name, data)?;
            }
            return Ok(());
        };
        let batch = self.block_size * rayon::current_num_threads().max(1) * BLOCKS_PER_THREAD;
        let mut group: Vec<(&str, &[u8])> = Vec::new();
        let mut group_bytes = 0usize;
        for &(name, data) in members {
            if data.len() > batch {
                self.add_deflated_group(&group, level)?;
                group.clear();
                group_bytes = 0;
                let mut m = self.start_member(name)?;
                m.write_data(data)?;
                m.finish()?;
                continue;
            }
            group.push((name, data));
            group_bytes += data.len();
            if group_bytes >= batch {
                self.add_deflated_group(&group, level)?;
                group.clear();
                group_bytes = 0;
            }
        }
        self.add_deflated_group(&group, level)
    }

    /// A stored member whose data is known: header written once with its final values (no seek
    /// back, which would flush a buffered output per member).
    fn add_stored(&mut self, name: &str, data: &[u8]) -> Result<()> {
        self.check_name(name)?;
        let size = data.len() as u64;
        let entry = Written {
            name: name.as_bytes().to_vec(),
            flags: name_flags(name),
            method: CompressionMethod::STORED,
            crc32: crc32fast::hash(data),
            size,
            compressed_size: size,
            header_offset: self.pos,
            local_zip64: self.force_zip64 || (size as f64) * 1.05 > ZIP64_LIMIT as f64,
            align_field: 0,
            align: self.align,
        };
        let entry = Written {
            align_field: self.align_field(&entry),
            ..entry
        };
        self.check_sizes(&entry)?;
        let header = local_header(&entry, self.modified);
        self.put(&header, "local header")?;
        self.put(data, "member data")?;
        self.written.push(entry);
        Ok(())
    }

    /// Compresses the blocks of several small members at once, then writes them in order.
    fn add_deflated_group(&mut self, group: &[(&str, &[u8])], level: u32) -> Result<()> {
        if group.is_empty() {
            return Ok(());
        }
        for (name, _) in group {
            self.check_name(name)?;
        }
        let block_size = self.block_size;
        let compressed: Vec<Vec<Block>> = group
            .par_iter()
            .map(|(_, data)| compress_blocks(data, &[], level, block_size))
            .collect::<Result<_>>()?;
        for ((name, data), blocks) in group.iter().zip(compressed) {
            let mut crc = crc32fast::Hasher::new();
            let mut compressed_size = END_OF_STREAM.len() as u64;
            for b in &blocks {
                crc.combine(&crc32fast::Hasher::new_with_initial_len(b.crc32, b.len));
                compressed_size += b.deflated.len() as u64;
            }
            let size = data.len() as u64;
            let entry = Written {
                name: name.as_bytes().to_vec(),
                flags: name_flags(name),
                method: CompressionMethod::DEFLATE,
                crc32: crc.finalize(),
                size,
                compressed_size,
                header_offset: self.pos,
                // CPython's rule for a size known up front: zip64 if it might pass 2 GiB.
                local_zip64: self.force_zip64 || (size as f64) * 1.05 > ZIP64_LIMIT as f64,
                align_field: 0,
                align: 1,
            };
            self.check_sizes(&entry)?;
            let header = local_header(&entry, self.modified);
            self.put(&header, "local header")?;
            for b in &blocks {
                self.put(&b.deflated, "member data")?;
            }
            self.put(&END_OF_STREAM, "member data")?;
            self.written.push(entry);
        }
        Ok(())
    }

    /// The length of the padding extra field that puts a stored member's data on an
    /// `align`-byte boundary (0 when not aligning).
    fn align_field(&self, e: &Written) -> u16 {
        if self.align <= 1 || e.method != CompressionMethod::STORED {
            return 0;
        }
        let align = u64::from(self.align);
        let zip64 = if e.local_zip64 { 20 } else { 0 };
        let base = e.header_offset + 30 + e.name.len() as u64 + zip64 + ALIGN_FIELD_MIN;
        (ALIGN_FIELD_MIN + (align - base % align) % align) as u16
    }

    fn check_sizes(&self, entry: &Written) -> Result<()> {
        if !entry.local_zip64 && (entry.size > ZIP64_LIMIT || entry.compressed_size > ZIP64_LIMIT) {
            return Err(self.locate(
                Error::invalid_input("member is over 2 GiB but force_zip64 is off")
                    .with_node(String::from_utf8_lossy(&entry.name)),
            ));
        }
        Ok(())
    }

    /// Writes the central directory and end records; gives back the output, flushed.
    pub fn finish(mut self) -> Result<W> {
        if self.failed {
            return Err(self.locate(Error::invalid_input(
                "a previous write failed; the archive is unusable",
            )));
        }
        let cd_offset = self.pos;
        let force = self.force_zip64_records;
        let written = std::mem::take(&mut self.written);
        let mut cd = Put::default();
        for (i, entry) in written.iter().enumerate() {
            central_header(&mut cd, entry, self.modified, force);
            if cd.0.len() >= 1 << 20 || i + 1 == written.len() {
                let chunk = std::mem::take(&mut cd.0);
                self.put(&chunk, "central directory")?;
            }
        }
        let cd_size = self.pos - cd_offset;
        let count = written.len() as u64;
        let mut end = Put::default();
        if force || count > FILECOUNT_LIMIT || cd_offset > ZIP64_LIMIT || cd_size > ZIP64_LIMIT {
            let zip64_end_at = self.pos;
            end.u32(ZIP64_EOCD_SIG)
                .u64(44)
                .u16(VERSION_ZIP64)
                .u16(VERSION_ZIP64)
                .u32(0)
                .u32(0)
                .u64(count)
                .u64(count)
                .u64(cd_size)
                .u64(cd_offset);
            end.u32(ZIP64_LOCATOR_SIG).u32(0).u64(zip64_end_at).u32(1);
        }
        end.u32(EOCD_SIG)
            .u16(0)
            .u16(0)
            .u16(count.min(0xFFFF) as u16)
            .u16(count.min(0xFFFF) as u16)
            .u32(cd_size.min(0xFFFF_FFFF) as u32)
            .u32(cd_offset.min(0xFFFF_FFFF) as u32)
            .u16(0);
        self.put(&end.0, "end records")?;
        if let Err(e) = self.out.flush() {
            return Err(self.io("archive", e));
        }
        Ok(self.out)
    }
}

fn name_flags(name: &str) -> u16 {
    if name.is_ascii() {
        0
    } else {
        FLAG_UTF8
    }
}

/// The local header as CPython's `ZipInfo.FileHeader(zip64)` writes it.
fn local_header(e: &Written, t: DosDateTime) -> Vec<u8> {
    let mut h = Put::default();
    let version = if e.local_zip64 {
        VERSION_ZIP64
    } else {
        VERSION_DEFAULT
    };
    let (size32, compressed32) = if e.local_zip64 {
        (u32::MAX, u32::MAX)
    } else {
        (e.size as u32, e.compressed_size as u32)
    };
    h.u32(LOCAL_SIG)
        .u16(version)
        .u16(e.flags)
        .u16(e.method.0)
        .u16(t.time)
        .u16(t.date)
        .u32(e.crc32)
        .u32(compressed32)
        .u32(size32)
        .u16(e.name.len() as u16)
        .u16(if e.local_zip64 { 20 } else { 0 } + e.align_field)
        .bytes(&e.name);
    if e.local_zip64 {
        h.u16(ZIP64_EXTRA_ID)
            .u16(16)
            .u64(e.size)
            .u64(e.compressed_size);
    }
    if e.align_field > 0 {
        // zipalign's layout: id, length, the alignment, then zero padding.
        let pad = usize::from(e.align_field) - ALIGN_FIELD_MIN as usize;
        h.u16(ALIGN_EXTRA_ID)
            .u16(e.align_field - 4)
            .u16(e.align)
            .bytes(&vec![0u8; pad]);
    }
    h.0
}

/// The central-directory record as CPython's `ZipFile._write_end_record` writes it.
fn central_header(cd: &mut Put, e: &Written, t: DosDateTime, force_zip64: bool) {
    let mut extra: Vec<u64> = Vec::new();
    let big_sizes = force_zip64 || e.size > ZIP64_LIMIT || e.compressed_size > ZIP64_LIMIT;
    let (size32, compressed32) = if big_sizes {
        extra.push(e.size);
        extra.push(e.compressed_size);
        (u32::MAX, u32::MAX)
    } else {
        (e.size as u32, e.compressed_size as u32)
    };
    let offset32 = if force_zip64 || e.header_offset > ZIP64_LIMIT {
        extra.push(e.header_offset);
        u32::MAX
    } else {
        e.header_offset as u32
    };
    let version = if e.local_zip64 || !extra.is_empty() {
        VERSION_ZIP64
    } else {
        VERSION_DEFAULT
    };
    let extra_len = if extra.is_empty() {
        0
    } else {
        4 + 8 * extra.len()
    };
    cd.u32(CENTRAL_SIG)
        .u16(SYSTEM_UNIX << 8 | version)
        .u16(version)
        .u16(e.flags)
        .u16(e.method.0)
        .u16(t.time)
        .u16(t.date)
        .u32(e.crc32)
        .u32(compressed32)
        .u32(size32)
        .u16(e.name.len() as u16)
        .u16(extra_len as u16)
        .u16(0)
        .u16(0)
        .u16(0)
        .u32(EXTERNAL_ATTR_RW)
        .u32(offset32)
        .bytes(&e.name);
    if !extra.is_empty() {
        cd.u16(ZIP64_EXTRA_ID).u16(8 * extra.len() as u16);
        for v in extra {
            cd.u64(v);
        }
    }
}

/// Writes the data of one member (see [`ZipWriter::start_member`]); call
/// [`MemberWriter::finish`] at the end, which patches the header with the sizes and CRC-32.
#[derive(Debug)]
pub struct MemberWriter<'a, W: Write + Seek> {
    zip: &'a mut ZipWriter<W>,
    entry: Written,
    level: Option<u32>,
    hasher: crc32fast::Hasher,
    /// Input waiting to fill a batch of blocks.
    pending: Vec<u8>,
    /// The last 32 KiB of input already compressed: the next block's dictionary.
    dict: Vec<u8>,
    batch: usize,
    /// Whether the (placeholder) local header is out; until then a stored member's data
    /// waits in `pending` too (up to [`SMALL_MEMBER`]).
    header_written: bool,
}

/// Stored members up to this size are kept in memory until they end, then written with their
/// final header in one go (no placeholder to patch, no seek).
const SMALL_MEMBER: usize = 1 << 20;

impl<W: Write + Seek> MemberWriter<'_, W> {
    /// Appends `data` to the member (the `Write` impl does the same with `io::Error`s).
    pub fn write_data(&mut self, mut data: &[u8]) -> Result<()> {
        let Some(level) = self.level else {
            self.hasher.update(data);
            self.entry.size += data.len() as u64;
            self.entry.compressed_size += data.len() as u64;
            if !self.header_written {
                if self.pending.len() + data.len() <= SMALL_MEMBER {
                    self.pending.extend_from_slice(data);
                    return Ok(());
                }
                self.write_header()?;
                let pending = std::mem::take(&mut self.pending);
                self.zip.put(&pending, "member data")?;
            }
            return self.zip.put(data, "member data");
        };
        while !data.is_empty() {
            if self.pending.is_empty() && data.len() >= self.batch {
                // Compress straight from the caller's buffer: no copy.
                let (now, rest) = data.split_at(self.batch);
                self.deflate(now, level)?;
                data = rest;
                continue;
            }
            let take = data.len().min(self.batch - self.pending.len());
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.pending.len() == self.batch {
                let pending = std::mem::take(&mut self.pending);
                self.deflate(&pending, level)?;
                self.pending = pending;
                self.pending.clear();
            }
        }
        Ok(())
    }

    /// Writes the local header as it stands (a placeholder until [`Self::finish`] patches it).
    fn write_header(&mut self) -> Result<()> {
        if !self.header_written {
            let header = local_header(&self.entry, self.zip.modified);
            self.zip.put(&header, "local header")?;
            self.header_written = true;
        }
        Ok(())
    }

    fn deflate(&mut self, data: &[u8], level: u32) -> Result<()> {
        let blocks = compress_blocks(data, &self.dict, level, self.zip.block_size)?;
        self.write_header()?;
        for b in &blocks {
            self.hasher
                .combine(&crc32fast::Hasher::new_with_initial_len(b.crc32, b.len));
            self.entry.compressed_size += b.deflated.len() as u64;
            self.zip.put(&b.deflated, "member data")?;
        }
        self.entry.size += data.len() as u64;
        self.dict = next_dict(&self.dict, data);
        Ok(())
    }

    /// Ends the member: compresses what is pending, closes the deflate stream and patches the
    /// local header with the CRC-32 and sizes.
    pub fn finish(mut self) -> Result<()> {
        if !self.header_written {
            return self.finish_in_memory();
        }
        if let Some(level) = self.level {
            let pending = std::mem::take(&mut self.pending);
            if !pending.is_empty() {
                self.deflate(&pending, level)?;
            }
            self.zip.put(&END_OF_STREAM, "member data")?;
            self.entry.compressed_size += END_OF_STREAM.len() as u64;
        }
        self.entry.crc32 = self.hasher.clone().finalize();
        self.zip.check_sizes(&self.entry)?;
        let header = local_header(&self.entry, self.zip.modified);
        let end = self.zip.pos;
        let patched = self
            .zip
            .out
            .seek(SeekFrom::Start(self.entry.header_offset))
            .and_then(|_| self.zip.out.write_all(&header))
            .and_then(|_| self.zip.out.seek(SeekFrom::Start(end)));
        if let Err(e) = patched {
            return Err(self.zip.io("local header", e));
        }
        self.record();
        Ok(())
    }

    /// Ends a member whose data is all in `pending`: the header with its final values, then
    /// the (compressed) data, in order, with no seek.
    fn finish_in_memory(mut self) -> Result<()> {
        let pending = std::mem::take(&mut self.pending);
        let blocks = match self.level {
            Some(level) if !pending.is_empty() => {
                compress_blocks(&pending, &self.dict, level, self.zip.block_size)?
            }
            _ => Vec::new(),
        };
        if self.level.is_some() {
            self.entry.size += pending.len() as u64;
            for b in &blocks {
                self.hasher
                    .combine(&crc32fast::Hasher::new_with_initial_len(b.crc32, b.len));
                self.entry.compressed_size += b.deflated.len() as u64;
            }
            self.entry.compressed_size += END_OF_STREAM.len() as u64;
        }
        self.entry.crc32 = self.hasher.clone().finalize();
        self.zip.check_sizes(&self.entry)?;
        let header = local_header(&self.entry, self.zip.modified);
        self.zip.put(&header, "local header")?;
        self.header_written = true;
        if self.level.is_some() {
            for b in &blocks {
                self.zip.put(&b.deflated, "member data")?;
            }
            self.zip.put(&END_OF_STREAM, "member data")?;
        } else {
            self.zip.put(&pending, "member data")?;
        }
        self.record();
        Ok(())
    }

    /// Hands the finished member's entry to the central directory.
    fn record(&mut self) {
        let entry = std::mem::replace(
            &mut self.entry,
            Written {
                name: Vec::new(),
                flags: 0,
                method: CompressionMethod::STORED,
                crc32: 0,
                size: 0,
                compressed_size: 0,
                header_offset: 0,
                local_zip64: false,
                align_field: 0,
                align: 1,
            },
        );
        self.zip.written.push(entry);
    }
}

impl<W: Write + Seek> Write for MemberWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_data(buf).map_err(io::Error::other)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl From<Compression> for CompressionMethod {
    fn from(c: Compression) -> Self {
        match c {
            Compression::Stored => CompressionMethod::STORED,
            Compression::Deflate(_) => CompressionMethod::DEFLATE,
        }
    }
}

/// Why `name` is not a safe member name (`None` when it is): an absolute path, a `..`
/// component, a backslash (a separator on Windows) or a control character (NUL included).
pub fn unsafe_member_name(name: &str) -> Option<&'static str> {
    if name.starts_with('/') {
        Some("is an absolute path")
    } else if name.split('/').any(|part| part == "..") {
        Some("climbs out with '..'")
    } else if name.contains('\\') {
        Some("holds a backslash")
    } else if name.chars().any(char::is_control) {
        Some("holds a control character")
    } else {
        None
    }
}

#[cfg(test)]
mod member_name_tests {
    use super::unsafe_member_name;

    #[test]
    fn names_that_would_leave_the_folder_are_refused() {
        for bad in [
            "/etc/x.npy",
            "../x.npy",
            "a/../../x.npy",
            "a\\b.npy",
            "a\u{0}b",
            "x\u{1b}[31m",
        ] {
            assert!(unsafe_member_name(bad).is_some(), "{bad:?}");
        }
        for good in ["x.npy", "a/b.npy", "a..b.npy", "ü/β.npy", "t:1.npy"] {
            assert_eq!(unsafe_member_name(good), None, "{good:?}");
        }
    }
}
