//! Reading and writing whole arrays: streams, files, memory maps and in-place appends.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use sciio_core::ndarray::ArrayD;
use sciio_core::{DType, Element, Error, Limits, NdArray, Order, Result};

use crate::header::{header_bytes, header_bytes_fixed, read_header_from, Header, Version};

/// Reads one NPY array from a stream of unknown length (e.g. a pipe). The data is read in
/// bounded steps, so a header announcing more than the stream holds costs no more memory
/// than the stream really delivers; `limits` bound the total.
///
/// ```
/// let a = sciio_core::NdArray::from_vec(vec![1u16, 2, 3], &[3]).unwrap();
/// let mut file = Vec::new();
/// sciio_npy::write_array(&mut file, &a).unwrap();
/// let b = sciio_npy::read_array(&file[..], &sciio_core::Limits::default()).unwrap();
/// assert_eq!(b.view::<u16>().unwrap(), a.view::<u16>().unwrap());
/// ```
pub fn read_array<R: Read>(mut reader: R, limits: &Limits) -> Result<NdArray> {
    let header = read_header_from(&mut reader, limits, None)?;
    read_data(reader, &header, limits, None)
}

/// Reads one NPY array from a stream holding `input_len` bytes from the start of the NPY data
/// (a file's or zip member's size). Sizes are checked against it before any allocation and the
/// data is read straight into the array's buffer.
pub fn read_array_sized<R: Read>(
    mut reader: R,
    limits: &Limits,
    input_len: u64,
) -> Result<NdArray> {
    let header = read_header_from(&mut reader, limits, Some(input_len))?;
    read_data(reader, &header, limits, Some(input_len))
}

/// Checks the data size announced by `header` against `limits`; returns it.
fn check_sizes(header: &Header, limits: &Limits) -> Result<usize> {
    let n = limits.check_alloc(header.data_len()?, "NPY array data")?;
    // Zero-size elements (S0, V0, empty records) take no bytes, however many there are; bound
    // their number too, since code iterating over them allocates per element.
    let count: u64 = header.shape.iter().map(|d| *d as u64).product();
    limits.check_alloc(count, "NPY element count")?;
    Ok(n)
}

/// The zeroed array for the data `header` announces, after every check [`read_data`] makes
/// before allocating (object dtype, data length against `input_len`, limits).
pub(crate) fn allocate_for(
    header: &Header,
    limits: &Limits,
    input_len: Option<u64>,
) -> Result<NdArray> {
    header.refuse_objects()?;
    let data_len = header.data_len()?;
    let start = header.header_len as u64;
    if let Some(len) = input_len {
        let available = len.saturating_sub(start);
        if data_len > available {
            return Err(Error::truncated(format!(
                "header announces {data_len} bytes of data ({} of shape {:?}), only {available} follow",
                header.dtype, header.shape
            ))
            .with_offset(start));
        }
    }
    check_sizes(header, limits)?;
    NdArray::zeroed(header.dtype.clone(), &header.shape, header.order())
}

/// Reads the data following an already-read header.
pub fn read_data<R: Read>(
    mut reader: R,
    header: &Header,
    limits: &Limits,
    input_len: Option<u64>,
) -> Result<NdArray> {
    let start = header.header_len as u64;
    if input_len.is_some() {
        let mut array = allocate_for(header, limits, input_len)?;
        let buf = array.as_bytes_mut()?;
        fill(&mut reader, buf, start)?;
        return Ok(array);
    }
    header.refuse_objects()?;
    let data_len = header.data_len()?;
    let n = check_sizes(header, limits)?;
    // Unknown length: grow as the bytes arrive (at most 64 MiB ahead of them).
    let mut bytes = Vec::with_capacity(n.min(64 << 20));
    let got = (&mut reader)
        .take(data_len)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("reading NPY array data", e).with_offset(start))?;
    if (got as u64) < data_len {
        return Err(Error::truncated(format!(
            "header announces {data_len} bytes of data, the stream ends after {got}"
        ))
        .with_offset(start + got as u64));
    }
    NdArray::from_byte_vec(header.dtype.clone(), &header.shape, header.order(), bytes)
}

fn fill<R: Read>(reader: &mut R, buf: &mut [u8], start: u64) -> Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => {
                return Err(Error::truncated(format!(
                    "array data ends after {filled} of {} bytes",
                    buf.len()
                ))
                .with_offset(start + filled as u64))
            }
            Ok(k) => filled += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(
                    Error::io("reading NPY array data", e).with_offset(start + filled as u64)
                )
            }
        }
    }
    Ok(())
}

/// Reads a `.npy` file into memory with default [`Limits`].
pub fn read_file(path: impl AsRef<Path>) -> Result<NdArray> {
    read_file_with(path, &Limits::default())
}

/// Reads a `.npy` file into memory.
pub fn read_file_with(path: impl AsRef<Path>, limits: &Limits) -> Result<NdArray> {
    let path = path.as_ref();
    let run = || {
        let file = File::open(path).map_err(|e| Error::io("opening", e))?;
        let len = file
            .metadata()
            .map_err(|e| Error::io("reading the file size", e))?
            .len();
        let mut reader = &file;
        let header = read_header_from(&mut reader, limits, Some(len))?;
        read_file_data(&file, &header, limits, len)
    };
    run().map_err(|e| e.with_file(path))
}

/// Below this, one thread reads the data; above, several threads each read a part straight
/// into the array (page faults and copies then proceed in parallel).
const PARALLEL_READ_MIN: usize = 64 << 20;

fn read_file_data(file: &File, header: &Header, limits: &Limits, len: u64) -> Result<NdArray> {
    let data_len = header.data_len()?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if threads < 2 || data_len < PARALLEL_READ_MIN as u64 || header.dtype.has_object() {
        return read_data(file, header, limits, Some(len));
    }
    let start = header.header_len as u64;
    if data_len > len.saturating_sub(start) {
        // Same checks and errors as the sequential path.
        return read_data(file, header, limits, Some(len));
    }
    limits.check_alloc(data_len, "NPY array data")?;
    let mut array = NdArray::zeroed(header.dtype.clone(), &header.shape, header.order())?;
    let buf = array.as_bytes_mut()?;
    let part = buf.len().div_ceil(threads).next_multiple_of(2 << 20);
    std::thread::scope(|scope| {
        let jobs: Vec<_> = buf
            .chunks_mut(part)
            .enumerate()
            .map(|(i, chunk)| {
                let offset = start + (i * part) as u64;
                scope.spawn(move || read_exact_at(file, chunk, offset))
            })
            .collect();
        jobs.into_iter().try_for_each(|job| {
            job.join().unwrap_or_else(|_| {
                Err(Error::io(
                    "reading NPY array data",
                    std::io::Error::other("reader thread failed"),
                ))
            })
        })
    })?;
    Ok(array)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset).map_err(|e| {
        let kind = e.kind();
        let err = Error::io("reading NPY array data", e).with_offset(offset);
        if kind == std::io::ErrorKind::UnexpectedEof {
            Error::truncated("the file ended while reading the array data").with_offset(offset)
        } else {
            err
        }
    })
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> Result<()> {
    let mut reader = file;
    reader
        .seek(SeekFrom::Start(offset))
        .map_err(|e| Error::io("seeking", e))?;
    fill(&mut reader, buf, offset)
}

/// Reads a `.npy` file as any dtype: an alias of [`read_file`].
pub fn read_dyn(path: impl AsRef<Path>) -> Result<NdArray> {
    read_file(path)
}

/// Reads a `.npy` file of element type `T` into an `ndarray` array (byte-swapped to native
/// order if needed; Fortran-order files give Fortran-layout arrays).
///
/// ```no_run
/// let a: sciio_core::ndarray::ArrayD<f64> = sciio_npy::read("a.npy").unwrap();
/// ```
pub fn read<T: Element>(path: impl AsRef<Path>) -> Result<ArrayD<T>> {
    let path = path.as_ref();
    let array = read_file(path)?;
    into_ndarray(array).map_err(|e| e.with_file(path))
}

fn into_ndarray<T: Element>(array: NdArray) -> Result<ArrayD<T>> {
    let array = if array.dtype().is_native() {
        array
    } else {
        array.to_native()
    };
    Ok(array.view::<T>()?.to_owned())
}

/// Whether numpy would write `fortran_order: True`: only for arrays that are F-contiguous and
/// not also C-contiguous (1-d, empty and single-row arrays are both, and numpy says C).
fn writes_fortran(array: &NdArray) -> bool {
    array.order() == Order::F
        && !array.is_empty()
        && array.shape().iter().filter(|d| **d > 1).count() > 1
}

/// Writes `array` as an NPY file, byte-identical to `np.save`.
///
/// The header version is chosen like numpy: 1.0, or 2.0 for headers over 64 KiB, or 3.0 for
/// non-Latin-1 field names. Object arrays are refused.
pub fn write_array<W: Write>(mut writer: W, array: &NdArray) -> Result<()> {
    if array.dtype().has_object() {
        return Err(Error::new(
            sciio_core::ErrorKind::Refused,
            format!(
                "dtype {} holds Python objects, which sciio does not write",
                array.dtype()
            ),
        ));
    }
    array.dtype().validate()?;
    let header = header_bytes(array.dtype(), array.shape(), writes_fortran(array))?;
    writer
        .write_all(&header)
        .map_err(|e| Error::io("writing the NPY header", e))?;
    writer
        .write_all(array.as_bytes())
        .map_err(|e| Error::io("writing NPY array data", e))?;
    Ok(())
}

/// Writes `array` to a `.npy` file (created or truncated).
pub fn write_file(path: impl AsRef<Path>, array: &NdArray) -> Result<()> {
    let path = path.as_ref();
    let run = || {
        let mut file = File::create(path).map_err(|e| Error::io("creating", e))?;
        preallocate(&file, array.nbytes() as u64 + 4096);
        write_array(&mut file, array)?;
        file.flush().map_err(|e| Error::io("flushing", e))
    };
    run().map_err(|e| e.with_file(path))
}

/// Reserves disk blocks before a large write, as numpy's `tofile` does: the file system then
/// allocates one extent up front instead of block by block during the write. Only a hint.
fn preallocate(file: &File, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(len) = libc::off_t::try_from(len) {
            // SAFETY: fallocate only reads its integer arguments; the fd is open for writing.
            let _ = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, 0, len) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, len);
}

/// Writes an `ndarray` array to a `.npy` file.
pub fn write<T: Element, S, D>(
    path: impl AsRef<Path>,
    array: &sciio_core::ndarray::ArrayBase<S, D>,
) -> Result<()>
where
    S: sciio_core::ndarray::Data<Elem = T>,
    D: sciio_core::ndarray::Dimension,
{
    write_file(path, &NdArray::from_view(array.view().into_dyn()))
}

fn open_header(path: &Path, writable: bool) -> Result<(File, Header, u64)> {
    let file = OpenOptions::new()
        .read(true)
        .write(writable)
        .open(path)
        .map_err(|e| Error::io("opening", e))?;
    let len = file
        .metadata()
        .map_err(|e| Error::io("reading the file size", e))?
        .len();
    let mut reader = &file;
    let header = read_header_from(&mut reader, &Limits::default(), Some(len))?;
    header.refuse_objects()?;
    let data_len = header.data_len()?;
    let available = len.saturating_sub(header.header_len as u64);
    if data_len > available {
        return Err(Error::truncated(format!(
            "header announces {data_len} bytes of data, only {available} follow"
        ))
        .with_offset(header.header_len as u64));
    }
    Ok((file, header, data_len))
}

fn map_len(header: &Header, data_len: u64) -> Result<usize> {
    usize::try_from(header.header_len as u64 + data_len)
        .map_err(|_| Error::unsupported("file too large to map on this platform"))
}

/// Memory-maps a `.npy` file read-only. The data is never copied; typed views read the file.
///
/// # Safety
///
/// The array reads the file's pages in place, as [`memmap2::Mmap::map`] does, and the same
/// contract holds: for as long as the array (or a clone of it) lives, the mapped file must not
/// be modified or truncated — by another process, or by this one (through [`append`], a
/// writable map from [`open_mmap_mut`] or [`create_mmap`], any write to the file). A change
/// alters data behind a shared reference (undefined behaviour); a truncation makes reads of
/// the lost pages fault (SIGBUS). Copying readers ([`read_file`]) have no such contract.
///
/// ```
/// use sciio_core::NdArray;
/// let path = std::env::temp_dir().join(format!("sciio-mmap-{}.npy", std::process::id()));
/// sciio_npy::write_file(&path, &NdArray::from_vec(vec![0.5f32; 6], &[3, 2])?)?;
/// // SAFETY: nothing modifies or truncates the file while `a` lives.
/// let a = unsafe { sciio_npy::open_mmap(&path)? };
/// assert!(a.is_mapped() && !a.is_writable());
/// assert_eq!(a.view::<f32>()?.sum(), 3.0);
/// # drop(a);
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), sciio_core::Error>(())
/// ```
pub unsafe fn open_mmap(path: impl AsRef<Path>) -> Result<NdArray> {
    let path = path.as_ref();
    let run = || {
        let (file, header, data_len) = open_header(path, false)?;
        // SAFETY: the caller keeps the file unmodified and untruncated while the map lives
        // (this function's contract, which is memmap2's); the map is read-only.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .len(map_len(&header, data_len)?)
                .map(&file)
        }
        .map_err(|e| Error::io("memory-mapping", e))?;
        NdArray::from_mmap(
            Arc::new(map),
            header.header_len,
            header.dtype.clone(),
            &header.shape,
            header.order(),
        )
    };
    run().map_err(|e| e.with_file(path))
}

/// Memory-maps an existing `.npy` file read-write: changes to the array go to the file.
///
/// # Safety
///
/// As for [`open_mmap`], and more (the contract of [`memmap2::MmapMut::map_mut`]): for as long
/// as the array lives, nothing else may read or write the mapped part of the file — no other
/// map of it (from this process or another), no [`append`] or other write, no truncation — as
/// the array hands out `&mut` views of those bytes.
pub unsafe fn open_mmap_mut(path: impl AsRef<Path>) -> Result<NdArray> {
    let path = path.as_ref();
    let run = || {
        let (file, header, data_len) = open_header(path, true)?;
        // SAFETY: the caller gives the returned array sole access to the mapped bytes while it
        // lives (this function's contract, which is memmap2's); the map is owned by the array.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .len(map_len(&header, data_len)?)
                .map_mut(&file)
        }
        .map_err(|e| Error::io("memory-mapping", e))?;
        NdArray::from_mmap_mut(
            map,
            header.header_len,
            header.dtype.clone(),
            &header.shape,
            header.order(),
        )
    };
    run().map_err(|e| e.with_file(path))
}

/// Creates a new `.npy` file of the given dtype and shape (zero-filled) and maps it
/// read-write, for filling through [`NdArray::view_mut`] or [`NdArray::as_bytes_mut`].
///
/// # Safety
///
/// As for [`open_mmap_mut`]: while the array lives, nothing else may map, write, append to or
/// truncate the new file (from this process or another).
///
/// ```
/// let dir = std::env::temp_dir().join(format!("sciio-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("m.npy");
/// let dt = sciio_core::DType::from_typestr("<i4").unwrap();
/// // SAFETY: nothing else touches m.npy while `a` lives.
/// let mut a = unsafe { sciio_npy::create_mmap(&path, dt, &[2, 2], sciio_core::Order::C) }.unwrap();
/// a.view_mut::<i32>().unwrap().fill(7);
/// a.flush().unwrap();
/// drop(a);
/// let b: sciio_core::ndarray::ArrayD<i32> = sciio_npy::read(&path).unwrap();
/// assert!(b.iter().all(|v| *v == 7));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub unsafe fn create_mmap(
    path: impl AsRef<Path>,
    dtype: DType,
    shape: &[usize],
    order: Order,
) -> Result<NdArray> {
    let path = path.as_ref();
    let run = || {
        if dtype.has_object() {
            return Err(Error::invalid_input(
                "object arrays cannot be memory-mapped",
            ));
        }
        dtype.validate()?;
        let data_len = sciio_core::array::byte_len(shape, dtype.itemsize())
            .ok_or_else(|| Error::invalid_input("shape overflows"))?;
        let fortran =
            order == Order::F && data_len > 0 && shape.iter().filter(|d| **d > 1).count() > 1;
        let header = header_bytes(&dtype, shape, fortran)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io("creating", e))?;
        file.write_all(&header)
            .map_err(|e| Error::io("writing the header", e))?;
        let total = header.len() as u64 + data_len as u64;
        file.set_len(total)
            .map_err(|e| Error::io("sizing the file", e))?;
        // SAFETY: the file was just created and sized to the map's length; the caller gives
        // the returned array sole access to it while it lives (this function's contract).
        let map = unsafe {
            memmap2::MmapOptions::new()
                .len(header.len() + data_len)
                .map_mut(&file)
        }
        .map_err(|e| Error::io("memory-mapping", e))?;
        NdArray::from_mmap_mut(map, header.len(), dtype.clone(), shape, order)
    };
    run().map_err(|e| e.with_file(path))
}

/// Appends rows (along axis 0) to an existing C-order `.npy` file in place: the data goes at
/// the end and `shape[0]` is rewritten inside the existing header, which numpy's growth
/// padding leaves room for. The rows must have the file's dtype and trailing dimensions.
///
/// Fails (leaving the file unchanged) when the file is Fortran-ordered, has trailing bytes,
/// or when the new header would not fit.
///
/// ```
/// use sciio_core::NdArray;
/// let path = std::env::temp_dir().join(format!("sciio-append-{}.npy", std::process::id()));
/// sciio_npy::write_file(&path, &NdArray::from_vec(vec![1i64, 2, 3, 4], &[2, 2])?)?;
/// sciio_npy::append(&path, &NdArray::from_vec(vec![5i64, 6], &[1, 2])?)?;
/// let a = sciio_npy::read_file(&path)?;
/// assert_eq!(a.shape(), &[3, 2]);
/// assert_eq!(a.view::<i64>()?[[2, 1]], 6);
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), sciio_core::Error>(())
/// ```
pub fn append(path: impl AsRef<Path>, rows: &NdArray) -> Result<()> {
    let path = path.as_ref();
    let run = || {
        let (mut file, header, data_len) = open_header(path, true)?;
        let len = file
            .metadata()
            .map_err(|e| Error::io("reading the file size", e))?
            .len();
        if len != header.header_len as u64 + data_len {
            return Err(Error::unsupported(format!(
                "the file holds {} bytes after the announced data; appending would hide them",
                len - header.header_len as u64 - data_len
            )));
        }
        if header.shape.is_empty() {
            return Err(Error::invalid_input("cannot append rows to a 0-d array"));
        }
        if header.fortran_order && header.shape.iter().filter(|d| **d > 1).count() > 1 {
            return Err(Error::unsupported(
                "cannot append rows to a Fortran-order array in place",
            ));
        }
        if rows.dtype() != &header.dtype {
            return Err(Error::mismatch(format!(
                "rows of dtype {} appended to a file of dtype {}",
                rows.dtype(),
                header.dtype
            )));
        }
        let row_shape = &header.shape[1..];
        let (count, trailing) = if rows.shape().len() == header.shape.len() {
            (rows.shape()[0], &rows.shape()[1..])
        } else if rows.shape() == row_shape {
            (1, rows.shape())
        } else {
            (0, rows.shape())
        };
        if trailing != row_shape {
            return Err(Error::mismatch(format!(
                "rows of shape {:?} appended to an array of shape {:?}",
                rows.shape(),
                header.shape
            )));
        }
        let mut shape = header.shape.clone();
        shape[0] = shape[0]
            .checked_add(count)
            .ok_or_else(|| Error::invalid_input("shape overflows"))?;
        let new_header = header_bytes_fixed(
            &header.dtype,
            &shape,
            false,
            header.version,
            header.header_len,
        )?;
        let rows = rows.to_order(Order::C);
        file.seek(SeekFrom::End(0))
            .map_err(|e| Error::io("seeking to the end", e))?;
        file.write_all(rows.as_bytes())
            .map_err(|e| Error::io("appending rows", e))?;
        file.seek(SeekFrom::Start(0))
            .map_err(|e| Error::io("seeking to the header", e))?;
        file.write_all(&new_header)
            .map_err(|e| Error::io("rewriting the header", e))?;
        file.flush().map_err(|e| Error::io("flushing", e))
    };
    run().map_err(|e| e.with_file(path))
}

/// The header numpy writes with `np.lib.format.write_array(version=...)` (see
/// [`crate::header_bytes_version`]); for writing with an explicit version.
pub fn write_array_version<W: Write>(
    mut writer: W,
    array: &NdArray,
    version: Version,
) -> Result<()> {
    if array.dtype().has_object() {
        return Err(Error::new(
            sciio_core::ErrorKind::Refused,
            "object arrays are not written",
        ));
    }
    let header = crate::header::header_bytes_version(
        array.dtype(),
        array.shape(),
        writes_fortran(array),
        version,
    )?;
    writer
        .write_all(&header)
        .and_then(|_| writer.write_all(array.as_bytes()))
        .map_err(|e| Error::io("writing the NPY file", e))
}
