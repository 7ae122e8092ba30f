//! numpy `.npz` files: zip archives of `.npy` members, as `np.savez` (stored) and
//! `np.savez_compressed` (deflate) write them and `np.load` reads them.
//!
//! - [`NpzReader`] lists the keys numpy shows (member names with `.npy` stripped), reads members
//!   lazily one at a time, memory-maps members of uncompressed archives (numpy cannot), and
//!   refuses object (pickled) members with [`ErrorKind::Refused`] while the others stay
//!   readable.
//! - [`NpzWriter`] writes members named `<key>.npy` with `zipfile`'s header layout, stored or
//!   deflated on all cores (see [`sciio_zip::ZipWriter`]).
//!
//! ```
//! use std::io::Cursor;
//! use sciio_core::NdArray;
//! use sciio_npy::npz::{Compression, NpzReader, NpzWriter};
//!
//! let a = NdArray::from_vec(vec![1i32, 2, 3], &[3])?;
//! let mut npz = NpzWriter::new(Cursor::new(Vec::new())).compression(Compression::Deflate(6));
//! npz.add("a", &a)?;
//! npz.add_positional(&a)?; // "arr_0", as np.savez names positional arrays
//! let bytes = npz.finish()?.into_inner();
//!
//! let mut npz = NpzReader::new(Cursor::new(bytes))?;
//! assert_eq!(npz.names(), ["a", "arr_0"]);
//! assert_eq!(npz.read("arr_0")?.view::<i32>()?, a.view::<i32>()?);
//! # Ok::<(), sciio_core::Error>(())
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, Write};
use std::path::Path;
use std::sync::Arc;

use sciio_core::{Error, ErrorKind, Limits, NdArray, Result};
pub use sciio_zip::Compression;
use sciio_zip::{CompressionMethod, ZipArchive, ZipWriter};

use crate::header::{read_header_from, Header};
use crate::io::{allocate_for, write_array};

/// Reads `.npz` archives.
#[derive(Debug)]
pub struct NpzReader<R> {
    zip: ZipArchive<R>,
}

impl NpzReader<File> {
    /// Opens the `.npz` file at `path` with default [`Limits`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with_limits(path, Limits::default())
    }

    /// Opens the `.npz` file at `path` with the given limits.
    pub fn open_with_limits(path: impl AsRef<Path>, limits: Limits) -> Result<Self> {
        Ok(NpzReader {
            zip: ZipArchive::open_with_limits(path, limits)?,
        })
    }

    /// Memory-maps the member `name` of an uncompressed (`np.savez`) archive: the array's data
    /// stays in the file and is never copied. Compressed members fail with
    /// [`ErrorKind::Unsupported`] (read them with [`NpzReader::read`]).
    ///
    /// # Safety
    ///
    /// The contract of [`crate::open_mmap`] (and of [`memmap2::Mmap::map`]): for as long as
    /// the array (or a clone of it) lives, the archive file must not be modified or truncated,
    /// by another process or by this one.
    pub unsafe fn mmap(&mut self, name: &str) -> Result<NdArray> {
        let index = self.index(name)?;
        let entry = self.zip.entries()[index].clone();
        let file = self.zip.file_name().map(Path::to_path_buf);
        let located = |e: Error| {
            let e = lift_member_error(e).with_node(entry.name());
            match &file {
                Some(f) => e.with_file(f),
                None => e,
            }
        };
        if entry.method() != CompressionMethod::STORED {
            return Err(located(Error::unsupported(format!(
                "member is compressed ({}); only members of uncompressed archives (np.savez) can be memory-mapped",
                entry.method()
            ))));
        }
        let header = self.header_at(index)?;
        let data_offset = self.zip.data_offset(index)?;
        let data_len = header.data_len().map_err(located)?;
        let available = entry.size().saturating_sub(header.header_len as u64);
        if data_len > available {
            return Err(located(
                Error::truncated(format!(
                    "header announces {data_len} bytes of data, the member holds {available}"
                ))
                .with_offset(data_offset + header.header_len as u64),
            ));
        }
        let map_len = usize::try_from(entry.size()).map_err(|_| {
            located(Error::unsupported(
                "member too large to map on this platform",
            ))
        })?;
        // SAFETY: the caller keeps the file unmodified and untruncated while the map lives
        // (this function's contract); a read-only map of a range checked against the file
        // length when the directory was parsed.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(data_offset)
                .len(map_len)
                .map(self.zip.get_ref())
        }
        .map_err(|e| located(Error::io("cannot memory-map the member", e)))?;
        NdArray::from_mmap(
            Arc::new(map),
            header.header_len,
            header.dtype.clone(),
            &header.shape,
            header.order(),
        )
        .map_err(located)
    }
}

impl<R: Read + Seek> NpzReader<R> {
    /// Reads the directory of the `.npz` archive in `reader` with default [`Limits`].
    pub fn new(reader: R) -> Result<Self> {
        Self::with_limits(reader, Limits::default())
    }

    /// Reads the directory of the `.npz` archive in `reader` with the given limits.
    pub fn with_limits(reader: R, limits: Limits) -> Result<Self> {
        Ok(NpzReader {
            zip: ZipArchive::with_limits(reader, limits)?,
        })
    }

    /// The keys as `np.load(...).files` lists them: member names with a trailing `.npy` removed,
    /// in archive order.
    pub fn names(&self) -> Vec<&str> {
        self.zip
            .entries()
            .iter()
            .map(|e| e.name().strip_suffix(".npy").unwrap_or(e.name()))
            .collect()
    }

    /// The member names as stored in the archive.
    pub fn member_names(&self) -> Vec<&str> {
        self.zip.entries().iter().map(|e| e.name()).collect()
    }

    /// Whether the archive has a member `name` (with or without `.npy`).
    pub fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// The underlying zip archive (sizes, compression, offsets of members).
    pub fn archive(&self) -> &ZipArchive<R> {
        &self.zip
    }

    /// Like numpy's `NpzFile.__getitem__`: the member named exactly `name`, else `name.npy`.
    fn find(&self, name: &str) -> Option<usize> {
        self.zip
            .index_of(name)
            .or_else(|| self.zip.index_of(&format!("{name}.npy")))
    }

    fn index(&self, name: &str) -> Result<usize> {
        self.find(name).ok_or_else(|| {
            let e = Error::not_found(format!(
                "no member {name:?} (keys: {})",
                self.names().join(", ")
            ));
            match self.zip.file_name() {
                Some(f) => e.with_file(f),
                None => e,
            }
        })
    }

    fn locate(&self, e: Error, member: &str) -> Error {
        let e = lift_member_error(e).with_node(member);
        match self.zip.file_name() {
            Some(f) => e.with_file(f),
            None => e,
        }
    }

    /// The `.npy` header of member `name` (dtype, shape, order), reading nothing else.
    pub fn header(&mut self, name: &str) -> Result<Header> {
        let index = self.index(name)?;
        self.header_at(index)
    }

    fn header_at(&mut self, index: usize) -> Result<Header> {
        let limits = *self.zip.limits();
        let member_name = self.zip.entries()[index].name().to_owned();
        let result = self.zip.open_member(index).and_then(|mut member| {
            let size = member.size();
            read_header_from(&mut member, &limits, Some(size))
        });
        result.map_err(|e| self.locate(e, &member_name))
    }

    /// Reads member `name` (with or without `.npy`) into memory, checking its CRC-32. Object
    /// (pickle) members fail with [`ErrorKind::Refused`]; the other members stay readable.
    pub fn read(&mut self, name: &str) -> Result<NdArray> {
        let index = self.index(name)?;
        let limits = *self.zip.limits();
        let member_name = self.zip.entries()[index].name().to_owned();
        let result = self.zip.open_member(index).and_then(|mut member| {
            let size = member.size();
            let header = read_header_from(&mut member, &limits, Some(size))?;
            let mut array = allocate_for(&header, &limits, Some(size))?;
            // Inflating is the work; the CRC-32 and the fresh pages' faults go to other cores.
            member
                .read_exact_pipelined(array.as_bytes_mut()?)
                .map_err(|e| {
                    Error::io("reading NPY array data", e).with_offset(header.header_len as u64)
                })?;
            // Read to the end of the member: this runs the size and CRC-32 checks.
            io::copy(&mut member, &mut io::sink()).map_err(sciio_zip::error_from_io)?;
            Ok(array)
        });
        result.map_err(|e| self.locate(e, &member_name))
    }

    /// The raw bytes of member `name` (what numpy returns for members that are not `.npy`).
    pub fn read_bytes(&mut self, name: &str) -> Result<Vec<u8>> {
        let index = self.index(name)?;
        self.zip.read_member(index)
    }

    /// Reads every member that is not an object array, in archive order, with its key. A member
    /// that is not an `.npy` file is an error (read it with [`NpzReader::read_bytes`]).
    pub fn read_all(&mut self) -> Result<Vec<(String, NdArray)>> {
        let names: Vec<String> = self.names().into_iter().map(str::to_owned).collect();
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            match self.read(&name) {
                Ok(array) => out.push((name, array)),
                Err(e) if e.kind() == ErrorKind::Refused => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

/// Errors from a zip member travel through `io::Error` inside the npy reader; bring back the
/// zip layer's kind (corrupt CRC, bomb guard...) and location.
fn lift_member_error(e: Error) -> Error {
    use std::error::Error as _;
    let inner = e
        .source()
        .and_then(|s| s.downcast_ref::<io::Error>())
        .and_then(|io| io.get_ref())
        .and_then(|i| i.downcast_ref::<Error>());
    let Some(zip) = inner else {
        return e;
    };
    let mut lifted = Error::new(zip.kind(), format!("{}: {}", e.message(), zip.message()));
    let loc = zip.location();
    if let Some(f) = &loc.file {
        lifted = lifted.with_file(f);
    }
    if let Some(n) = &loc.node {
        lifted = lifted.with_node(n.clone());
    }
    if let Some(o) = loc.offset {
        lifted = lifted.with_offset(o);
    }
    lifted
}

/// Arrays at most this large are serialised in memory and compressed in parallel with each
/// other; larger ones are streamed and compressed block-parallel.
const SMALL_ARRAY: usize = 4 << 20;

/// Default alignment of stored members' data: numpy aligns array data to 64 bytes in `.npy`
/// headers, so 64 in the archive keeps every element aligned when mapped.
const DATA_ALIGN: u16 = 64;

/// Writes `.npz` archives like `np.savez` / `np.savez_compressed`.
///
/// Defaults: [`Compression::Stored`] (like `np.savez`; use `Compression::Deflate(6)` for what
/// `np.savez_compressed` writes), 1 MiB deflate blocks compressed on rayon's global pool, and
/// stored members' data aligned to 64 bytes in the file (padding in a local-header extra field
/// that numpy and every zip reader skip) so that [`NpzReader::mmap`] gives typed views; numpy's
/// own archives are not aligned.
#[derive(Debug)]
pub struct NpzWriter<W: Write + Seek> {
    zip: ZipWriter<W>,
    positional: usize,
}

impl NpzWriter<BufWriter<File>> {
    /// Creates (truncates) the `.npz` file at `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        Ok(NpzWriter {
            zip: ZipWriter::create(path)?.align(DATA_ALIGN),
            positional: 0,
        })
    }
}

impl<W: Write + Seek> NpzWriter<W> {
    /// Writes an archive into `out`.
    pub fn new(out: W) -> Self {
        NpzWriter {
            zip: ZipWriter::new(out).align(DATA_ALIGN),
            positional: 0,
        }
    }

    /// Writes into an already configured zip writer (zip64 records, modification time...).
    pub fn from_zip(zip: ZipWriter<W>) -> Self {
        NpzWriter { zip, positional: 0 }
    }

    /// Sets the compression of the arrays added from now on. Default: [`Compression::Stored`].
    pub fn compression(mut self, compression: Compression) -> Self {
        self.zip = self.zip.compression(compression);
        self
    }

    /// Sets the alignment of stored members' data (1: none, byte-identical to `zipfile`'s
    /// layout). Default: 64.
    pub fn align(mut self, bytes: u16) -> Self {
        self.zip = self.zip.align(bytes);
        self
    }

    /// Sets the parallel deflate block size (see [`ZipWriter::block_size`]).
    pub fn block_size(mut self, bytes: usize) -> Self {
        self.zip = self.zip.block_size(bytes);
        self
    }

    /// Adds `array` as member `<name>.npy`, so `np.load(...)[name]` finds it.
    pub fn add(&mut self, name: &str, array: &NdArray) -> Result<&mut Self> {
        let member = format!("{name}.npy");
        let mut writer = self.zip.start_member(&member)?;
        write_array(&mut writer, array)
            .map_err(|e| lift_member_error(e).with_node(member.clone()))?;
        writer.finish()?;
        Ok(self)
    }

    /// Adds `array` under the next positional name, `arr_0`, `arr_1`... as `np.savez(file, a, b)`
    /// names its positional arguments.
    pub fn add_positional(&mut self, array: &NdArray) -> Result<&mut Self> {
        let name = format!("arr_{}", self.positional);
        self.positional += 1;
        self.add(&name, array)
    }

    /// Adds several arrays; small ones are compressed in parallel with each other.
    pub fn add_all(&mut self, arrays: &[(&str, &NdArray)]) -> Result<&mut Self> {
        let mut small: Vec<(String, Vec<u8>)> = Vec::new();
        let mut small_bytes = 0usize;
        for (name, array) in arrays {
            if array.nbytes() > SMALL_ARRAY {
                self.flush_small(&mut small)?;
                small_bytes = 0;
                self.add(name, array)?;
                continue;
            }
            let mut bytes = Vec::with_capacity(array.nbytes() + 128);
            write_array(&mut bytes, array).map_err(|e| e.with_node(format!("{name}.npy")))?;
            small_bytes += bytes.len();
            small.push((format!("{name}.npy"), bytes));
            if small_bytes > SMALL_ARRAY * 4 {
                self.flush_small(&mut small)?;
                small_bytes = 0;
            }
        }
        self.flush_small(&mut small)?;
        Ok(self)
    }

    fn flush_small(&mut self, small: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
        let members: Vec<(&str, &[u8])> = small
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        self.zip.add_members(&members)?;
        small.clear();
        Ok(())
    }

    /// Writes the zip directory; gives back the output, flushed.
    pub fn finish(self) -> Result<W> {
        self.zip.finish()
    }
}
