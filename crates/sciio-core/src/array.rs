//! [`NdArray`]: an n-dimensional array of any numpy dtype, owned or memory-mapped.

use std::fmt;
use std::sync::Arc;

use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, IxDyn, ShapeBuilder};

use crate::dtype::{to_native_in_place, DType, ScalarKind};
use crate::element::Element;
use crate::error::{Error, ErrorKind, Result};
use crate::value::Value;

/// Memory order of the elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// Row-major (C, numpy's default): the last index varies fastest.
    #[default]
    C,
    /// Column-major (Fortran): the first index varies fastest.
    F,
}

/// A byte buffer aligned to 8 bytes, so that typed views of any [`Element`] are possible.
#[derive(Clone, Default)]
struct AlignedBuf {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBuf {
    /// `len` zero bytes (allocated with calloc: untouched pages cost nothing).
    fn zeroed(len: usize) -> Self {
        AlignedBuf {
            words: vec![0u64; len.div_ceil(8)],
            len,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        // SAFETY: u64 has no padding and any u8 pattern is valid; len <= 8 * words.len().
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) }
    }

    fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above; the borrow is unique.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast::<u8>(), self.len) }
    }
}

/// Where an array's bytes live.
enum Storage {
    Owned(AlignedBuf),
    /// A byte vector that happens to be 8-byte aligned (checked when adopted).
    Bytes(Vec<u8>),
    /// Large buffers: anonymous memory with transparent huge pages requested, as numpy does
    /// for its own large allocations (page faults dominate reading a big file otherwise).
    Anon(memmap2::MmapMut),
    /// A read-only map shared by all arrays that view it (e.g. npz members), with the range.
    Mapped(Arc<memmap2::Mmap>, usize, usize),
    /// A writable map owned by this array.
    MappedMut(memmap2::MmapMut, usize, usize),
}

impl Clone for Storage {
    /// Clones share a read-only map; a writable map is copied into memory.
    fn clone(&self) -> Self {
        match self {
            Storage::Owned(b) => Storage::Owned(b.clone()),
            Storage::Bytes(v) => copy_of(v),
            Storage::Anon(m) => copy_of(m),
            Storage::Mapped(m, start, len) => Storage::Mapped(Arc::clone(m), *start, *len),
            Storage::MappedMut(m, start, len) => {
                copy_of(m.get(*start..*start + *len).unwrap_or(&[]))
            }
        }
    }
}

/// Buffers from this size on are anonymous maps with huge pages (under Miri from 4 KiB, so
/// that its small test arrays take this path too).
const HUGE_PAGE_THRESHOLD: usize = if cfg!(miri) { 4 << 10 } else { 4 << 20 };

/// Zeroed storage of `len` bytes.
/// Side of the square tiles [`transpose_matrix`] moves at a time: a tile of 8-byte items
/// (32 KiB read, 32 KiB written) stays in a core's L1/L2 cache.
const TILE: usize = 64;

/// Writes the `rows`-by-`cols` matrix `src` (row after row, items of `item` bytes) into
/// `dst` column after column, tile by tile, for items of 1, 2, 4, 8 or 16 bytes (a copy of
/// a fixed size per item, not a call); `false`, having written nothing, for other sizes
/// (the caller's general walk does those).
fn transpose_matrix(src: &[u8], dst: &mut [u8], (rows, cols): (usize, usize), item: usize) -> bool {
    fn tiles<const N: usize>(src: &[u8], dst: &mut [u8], rows: usize, cols: usize) {
        for r0 in (0..rows).step_by(TILE) {
            let r1 = (r0 + TILE).min(rows);
            for c0 in (0..cols).step_by(TILE) {
                let c1 = (c0 + TILE).min(cols);
                for c in c0..c1 {
                    // Column c's rows r0..r1: written in a run, read a row apart (the tile's
                    // rows stay in cache), with no index checked per item.
                    let to = &mut dst[(c * rows + r0) * N..(c * rows + r1) * N];
                    let from = src[(r0 * cols + c) * N..].chunks(cols * N);
                    for (item, row) in to.chunks_exact_mut(N).zip(from) {
                        item.copy_from_slice(&row[..N]);
                    }
                }
            }
        }
    }
    let len = rows.saturating_mul(cols).saturating_mul(item);
    if src.len() < len || dst.len() < len {
        return false;
    }
    match item {
        1 => tiles::<1>(src, dst, rows, cols),
        2 => tiles::<2>(src, dst, rows, cols),
        4 => tiles::<4>(src, dst, rows, cols),
        8 => tiles::<8>(src, dst, rows, cols),
        16 => tiles::<16>(src, dst, rows, cols),
        _ => return false,
    }
    true
}

fn zeroed_storage(len: usize) -> Storage {
    if len >= HUGE_PAGE_THRESHOLD {
        if let Ok(map) = memmap2::MmapMut::map_anon(len) {
            // (Miri has no madvise.)
            #[cfg(all(target_os = "linux", not(miri)))]
            {
                // Only a hint: without transparent huge pages it fails harmlessly.
                let _ = map.advise(memmap2::Advice::HugePage);
            }
            return Storage::Anon(map);
        }
    }
    Storage::Owned(AlignedBuf::zeroed(len))
}

fn copy_of(bytes: &[u8]) -> Storage {
    let mut storage = zeroed_storage(bytes.len());
    match &mut storage {
        Storage::Owned(b) => b.as_bytes_mut().copy_from_slice(bytes),
        Storage::Anon(m) => m.copy_from_slice(bytes),
        _ => {}
    }
    storage
}

/// An n-dimensional array of any numpy dtype: dtype + shape + order + bytes.
///
/// The bytes are owned (8-byte aligned), or a read-only or writable memory map. Typed
/// zero-copy views ([`NdArray::view`]) exist for native-order primitive dtypes; every element of
/// every dtype is reachable dynamically with [`NdArray::get`].
///
/// ```
/// use sciio_core::{NdArray, Order, Value};
/// let a = NdArray::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
/// assert_eq!(a.dtype().to_typestr(), "<f8");
/// assert_eq!(a.view::<f64>().unwrap()[[1, 0]], 4.0);
/// assert_eq!(a.get(&[1, 2]).unwrap(), Value::Float(6.0));
/// let f = NdArray::from_ndarray(a.view::<f64>().unwrap().t().to_owned());
/// assert_eq!(f.shape(), &[3, 2]);
/// ```
#[derive(Clone)]
pub struct NdArray {
    dtype: DType,
    shape: Vec<usize>,
    order: Order,
    storage: Storage,
}

impl fmt::Debug for NdArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let storage = match &self.storage {
            Storage::Owned(_) | Storage::Bytes(_) | Storage::Anon(_) => "owned",
            Storage::Mapped(..) => "mapped",
            Storage::MappedMut(..) => "mapped-mut",
        };
        f.debug_struct("NdArray")
            .field("dtype", &self.dtype.to_string())
            .field("shape", &self.shape)
            .field("order", &self.order)
            .field("storage", &storage)
            .finish()
    }
}

/// The number of elements of `shape` and their bytes, overflow-checked.
///
/// ```
/// assert_eq!(sciio_core::array::byte_len(&[2, 3], 8), Some(48));
/// assert_eq!(sciio_core::array::byte_len(&[usize::MAX, 2], 1), None);
/// ```
pub fn byte_len(shape: &[usize], itemsize: usize) -> Option<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, d| acc.checked_mul(*d))?
        .checked_mul(itemsize)
}

fn checked_len(dtype: &DType, shape: &[usize]) -> Result<usize> {
    byte_len(shape, dtype.itemsize()).ok_or_else(|| {
        Error::invalid_input(format!(
            "shape {shape:?} of {dtype} elements overflows the address space"
        ))
    })
}

fn elements_bytes<T: Element>(data: &[T]) -> &[u8] {
    // SAFETY: Element types are plain data without padding (the trait's contract).
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
}

impl NdArray {
    /// An array of zero bytes. Callers reading untrusted sizes check them first
    /// ([`crate::Limits::check_alloc`]).
    pub fn zeroed(dtype: DType, shape: &[usize], order: Order) -> Result<NdArray> {
        let len = checked_len(&dtype, shape)?;
        Ok(NdArray {
            dtype,
            shape: shape.to_vec(),
            order,
            storage: zeroed_storage(len),
        })
    }

    /// An array copied from raw bytes (exactly `product(shape) * itemsize` of them).
    pub fn from_bytes(dtype: DType, shape: &[usize], order: Order, bytes: &[u8]) -> Result<Self> {
        let mut a = Self::zeroed(dtype, shape, order)?;
        if bytes.len() != a.nbytes() {
            return Err(Error::invalid_input(format!(
                "{} bytes given for an array of {} bytes",
                bytes.len(),
                a.nbytes()
            )));
        }
        a.bytes_mut_unchecked().copy_from_slice(bytes);
        Ok(a)
    }

    /// An array adopting a byte vector (exactly `product(shape) * itemsize` bytes) without
    /// copying when it is 8-byte aligned (large allocations always are), copying otherwise.
    pub fn from_byte_vec(
        dtype: DType,
        shape: &[usize],
        order: Order,
        bytes: Vec<u8>,
    ) -> Result<Self> {
        let len = checked_len(&dtype, shape)?;
        if bytes.len() != len {
            return Err(Error::invalid_input(format!(
                "{} bytes given for an array of {len} bytes",
                bytes.len()
            )));
        }
        if bytes.as_ptr().align_offset(8) != 0 {
            return Self::from_bytes(dtype, shape, order, &bytes);
        }
        Ok(NdArray {
            dtype,
            shape: shape.to_vec(),
            order,
            storage: Storage::Bytes(bytes),
        })
    }

    /// A C-order array from a vector and a shape.
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Self> {
        Self::from_slice(&data, shape, Order::C)
    }

    /// An array copied from a slice in the given order.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize], order: Order) -> Result<Self> {
        let dtype = T::dtype();
        let count = shape.iter().try_fold(1usize, |a, d| a.checked_mul(*d));
        if count != Some(data.len()) {
            return Err(Error::invalid_input(format!(
                "{} elements given for shape {shape:?}",
                data.len()
            )));
        }
        Self::from_bytes(dtype, shape, order, elements_bytes(data))
    }

    /// An array from an `ndarray` array: kept in C order, or F order when the array is in
    /// Fortran layout (any other layout is copied to C order).
    pub fn from_ndarray<T: Element, S, D>(a: ndarray::ArrayBase<S, D>) -> Self
    where
        S: ndarray::Data<Elem = T>,
        D: ndarray::Dimension,
    {
        Self::from_view(a.view().into_dyn())
    }

    /// Like [`NdArray::from_ndarray`], copying from a view.
    pub fn from_view<T: Element>(a: ArrayViewD<'_, T>) -> Self {
        let shape = a.shape().to_vec();
        let (order, owned);
        let slice = if let Some(s) = a.as_slice() {
            order = Order::C;
            s
        } else if let Some(s) = a
            .as_slice_memory_order()
            .filter(|_| a.t().is_standard_layout())
        {
            order = Order::F;
            s
        } else {
            order = Order::C;
            owned = a.iter().copied().collect::<Vec<T>>();
            &owned
        };
        NdArray {
            dtype: T::dtype(),
            shape,
            order,
            storage: copy_of(elements_bytes(slice)),
        }
    }

    /// An array over `len` bytes of a read-only memory map starting at `offset`. The map may be
    /// shared by several arrays (e.g. the members of an uncompressed npz).
    pub fn from_mmap(
        map: Arc<memmap2::Mmap>,
        offset: usize,
        dtype: DType,
        shape: &[usize],
        order: Order,
    ) -> Result<Self> {
        let len = checked_len(&dtype, shape)?;
        check_range(map.len(), offset, len)?;
        Ok(NdArray {
            dtype,
            shape: shape.to_vec(),
            order,
            storage: Storage::Mapped(map, offset, len),
        })
    }

    /// An array over a writable memory map starting at `offset`; writes go to the file.
    pub fn from_mmap_mut(
        map: memmap2::MmapMut,
        offset: usize,
        dtype: DType,
        shape: &[usize],
        order: Order,
    ) -> Result<Self> {
        let len = checked_len(&dtype, shape)?;
        check_range(map.len(), offset, len)?;
        Ok(NdArray {
            dtype,
            shape: shape.to_vec(),
            order,
            storage: Storage::MappedMut(map, offset, len),
        })
    }

    /// The element type.
    pub fn dtype(&self) -> &DType {
        &self.dtype
    }

    /// The dimensions (empty for a 0-d array).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The memory order of the bytes.
    pub fn order(&self) -> Order {
        self.order
    }

    /// The number of elements (1 for a 0-d array).
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The size of the data in bytes.
    pub fn nbytes(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether the bytes are a memory map.
    pub fn is_mapped(&self) -> bool {
        !matches!(
            self.storage,
            Storage::Owned(_) | Storage::Bytes(_) | Storage::Anon(_)
        )
    }

    /// Whether the bytes can be changed ([`NdArray::as_bytes_mut`]).
    pub fn is_writable(&self) -> bool {
        !matches!(self.storage, Storage::Mapped(..))
    }

    /// The raw bytes, in [`NdArray::order`], in the dtype's byte order.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.storage {
            Storage::Owned(b) => b.as_bytes(),
            Storage::Bytes(v) => v,
            Storage::Anon(m) => m,
            Storage::Mapped(m, start, len) => m.get(*start..*start + *len).unwrap_or(&[]),
            Storage::MappedMut(m, start, len) => m.get(*start..*start + *len).unwrap_or(&[]),
        }
    }

    /// The raw bytes, writable. Fails for a read-only map.
    pub fn as_bytes_mut(&mut self) -> Result<&mut [u8]> {
        if !self.is_writable() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "the array is a read-only memory map",
            ));
        }
        Ok(self.bytes_mut_unchecked())
    }

    fn bytes_mut_unchecked(&mut self) -> &mut [u8] {
        match &mut self.storage {
            Storage::Owned(b) => b.as_bytes_mut(),
            Storage::Bytes(v) => v,
            Storage::Anon(m) => m,
            Storage::Mapped(..) => &mut [],
            Storage::MappedMut(m, start, len) => {
                m.get_mut(*start..*start + *len).unwrap_or(&mut [])
            }
        }
    }

    /// Flushes a writable memory map to its file (no-op otherwise).
    pub fn flush(&self) -> Result<()> {
        if let Storage::MappedMut(m, ..) = &self.storage {
            m.flush()
                .map_err(|e| Error::io("flushing the memory map", e))?;
        }
        Ok(())
    }

    /// A copy in native byte order (the same array, cloned, when it already is).
    pub fn to_native(&self) -> NdArray {
        let mut out = NdArray {
            dtype: self.dtype.to_native(),
            shape: self.shape.clone(),
            order: self.order,
            storage: copy_of(self.as_bytes()),
        };
        // Field by field: a record may mix byte orders.
        to_native_in_place(&self.dtype, out.bytes_mut_unchecked());
        out
    }

    /// A copy with its bytes in the other memory order (shape and values unchanged).
    pub fn to_order(&self, order: Order) -> NdArray {
        if order == self.order || self.shape.iter().filter(|d| **d > 1).count() <= 1 {
            let mut a = self.clone();
            a.order = order;
            return a;
        }
        let n = self.dtype.itemsize();
        let mut out = NdArray {
            dtype: self.dtype.clone(),
            shape: self.shape.clone(),
            order,
            storage: zeroed_storage(self.nbytes()),
        };
        if let [rows, cols] = self.shape[..] {
            // A matrix: its rows in memory order are the other order's columns.
            let (rows, cols) = match self.order {
                Order::C => (rows, cols),
                Order::F => (cols, rows),
            };
            let src = self.as_bytes();
            if transpose_matrix(src, out.bytes_mut_unchecked(), (rows, cols), n) {
                return out;
            }
        }
        // Walk the source in memory order with an odometer (fastest axis first), tracking
        // the destination position incrementally: no per-element allocation or division.
        let ndim = self.shape.len();
        let axes: Vec<usize> = match self.order {
            Order::C => (0..ndim).rev().collect(),
            Order::F => (0..ndim).collect(),
        };
        let mut dst_strides = vec![0usize; ndim];
        let mut stride = 1;
        let dst_axes: Vec<usize> = match order {
            Order::C => (0..ndim).rev().collect(),
            Order::F => (0..ndim).collect(),
        };
        for k in dst_axes {
            dst_strides[k] = stride;
            stride *= self.shape[k];
        }
        let src = self.as_bytes();
        let dst = out.bytes_mut_unchecked();
        let mut index = vec![0usize; ndim];
        let mut j = 0usize;
        for item in src
            .chunks_exact(n.max(1))
            .take(if n == 0 { 0 } else { self.len() })
        {
            dst[j * n..(j + 1) * n].copy_from_slice(item);
            for &k in &axes {
                index[k] += 1;
                j += dst_strides[k];
                if index[k] < self.shape[k] {
                    break;
                }
                j -= dst_strides[k] * self.shape[k];
                index[k] = 0;
            }
        }
        out
    }

    fn check_element<T: Element>(&self) -> Result<()> {
        let want = T::dtype();
        let same = self.dtype == want
            || (want == i64::dtype()
                && matches!(
                    self.dtype.as_scalar(),
                    Some(s) if s.order == want.as_scalar().map_or(s.order, |w| w.order)
                        && matches!(s.kind, ScalarKind::DateTime(_) | ScalarKind::TimeDelta(_))
                ));
        if !same {
            return Err(Error::mismatch(format!(
                "array of dtype {} viewed as {} ({})",
                self.dtype,
                std::any::type_name::<T>(),
                want
            )));
        }
        Ok(())
    }

    fn typed_slice<T: Element>(&self) -> Result<&[T]> {
        self.check_element::<T>()?;
        let bytes = self.as_bytes();
        if bytes.as_ptr().align_offset(std::mem::align_of::<T>()) != 0 {
            return Err(Error::mismatch(
                "array data is not aligned for a typed view (copy it with to_native first)",
            ));
        }
        if !T::valid_bytes(bytes) {
            return Err(Error::format(format!(
                "{} data holds values that are not valid {}",
                self.dtype,
                std::any::type_name::<T>()
            )));
        }
        // SAFETY: dtype equality guarantees size; alignment and validity checked above.
        Ok(unsafe {
            std::slice::from_raw_parts(
                bytes.as_ptr().cast::<T>(),
                bytes.len() / std::mem::size_of::<T>().max(1),
            )
        })
    }

    fn ndarray_shape(&self) -> ndarray::Shape<IxDyn> {
        let s = IxDyn(&self.shape);
        match self.order {
            Order::C => s.into_shape_with_order(),
            Order::F => s.f(),
        }
    }

    /// A zero-copy typed view (honouring Fortran order). `T` must match the dtype exactly
    /// (native order; `i64` also views datetime64/timedelta64 ticks).
    pub fn view<T: Element>(&self) -> Result<ArrayViewD<'_, T>> {
        let slice = self.typed_slice::<T>()?;
        ArrayViewD::from_shape(self.ndarray_shape(), slice)
            .map_err(|e| Error::invalid_input(format!("shape does not match the data: {e}")))
    }

    /// A zero-copy mutable typed view; fails for a read-only map.
    pub fn view_mut<T: Element>(&mut self) -> Result<ArrayViewMutD<'_, T>> {
        self.typed_slice::<T>()?;
        let shape = self.ndarray_shape();
        let bytes = self.as_bytes_mut()?;
        // SAFETY: checked by typed_slice (same bytes: dtype, alignment, validity).
        let slice = unsafe {
            std::slice::from_raw_parts_mut(
                bytes.as_mut_ptr().cast::<T>(),
                bytes.len() / std::mem::size_of::<T>().max(1),
            )
        };
        ArrayViewMutD::from_shape(shape, slice)
            .map_err(|e| Error::invalid_input(format!("shape does not match the data: {e}")))
    }

    /// An owned `ndarray` array of `T`, byte-swapped first when the dtype is not native.
    pub fn to_ndarray<T: Element>(&self) -> Result<ArrayD<T>> {
        if self.dtype.is_native() {
            Ok(self.view::<T>()?.to_owned())
        } else {
            Ok(self.to_native().view::<T>()?.to_owned())
        }
    }

    /// The element at a multi-index, of any dtype.
    pub fn get(&self, index: &[usize]) -> Result<Value> {
        if index.len() != self.shape.len() || index.iter().zip(&self.shape).any(|(i, d)| i >= d) {
            return Err(Error::invalid_input(format!(
                "index {index:?} out of bounds for shape {:?}",
                self.shape
            )));
        }
        self.get_flat(flat_index(&self.shape, self.order, index))
    }

    /// The element at position `i` in memory order.
    pub fn get_flat(&self, i: usize) -> Result<Value> {
        let n = self.dtype.itemsize();
        let start = i.checked_mul(n).filter(|s| *s < self.nbytes() || n == 0);
        let bytes = start
            .and_then(|s| self.as_bytes().get(s..s + n))
            .ok_or_else(|| Error::invalid_input(format!("flat index {i} out of bounds")))?;
        Value::decode(&self.dtype, bytes)
    }

    /// Every element in C (logical) order.
    pub fn values(&self) -> Result<Vec<Value>> {
        indices(&self.shape, Order::C)
            .map(|idx| self.get_flat(flat_index(&self.shape, self.order, &idx)))
            .collect()
    }

    /// The same data with another shape of equal element count (memory order kept).
    pub fn reshape(mut self, shape: &[usize]) -> Result<Self> {
        if byte_len(shape, 1) != Some(self.len()) {
            return Err(Error::invalid_input(format!(
                "cannot reshape {:?} to {shape:?}",
                self.shape
            )));
        }
        self.shape = shape.to_vec();
        Ok(self)
    }
}

fn check_range(map_len: usize, offset: usize, len: usize) -> Result<()> {
    if offset.checked_add(len).is_none_or(|end| end > map_len) {
        return Err(Error::truncated(format!(
            "array of {len} bytes at offset {offset} does not fit in a map of {map_len} bytes"
        )));
    }
    Ok(())
}

/// The position in memory of a multi-index.
fn flat_index(shape: &[usize], order: Order, index: &[usize]) -> usize {
    let mut flat = 0;
    match order {
        Order::C => {
            for (i, d) in index.iter().zip(shape) {
                flat = flat * d + i;
            }
        }
        Order::F => {
            for (i, d) in index.iter().zip(shape).rev() {
                flat = flat * d + i;
            }
        }
    }
    flat
}

/// Iterates over all multi-indices in the given order.
fn indices(shape: &[usize], order: Order) -> impl Iterator<Item = Vec<usize>> + '_ {
    let total: usize = shape.iter().product();
    let mut current = vec![0usize; shape.len()];
    let mut first = true;
    (0..total).map(move |_| {
        if !first {
            let dims: Box<dyn Iterator<Item = usize>> = match order {
                Order::C => Box::new((0..shape.len()).rev()),
                Order::F => Box::new(0..shape.len()),
            };
            for k in dims {
                current[k] += 1;
                if current[k] < shape[k] {
                    break;
                }
                current[k] = 0;
            }
        }
        first = false;
        current.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Matrices change order item for item as index arithmetic says, through the tiles
    /// (items of 1..16 bytes; shapes under, at and across the tile's side) and through the
    /// general walk (3-byte items), both ways.
    #[test]
    fn matrices_change_order_item_for_item() {
        for typestr in ["|u1", "<u2", "|S3", "<f4", "<f8", "<c16"] {
            let dtype = DType::from_typestr(typestr).unwrap();
            let n = dtype.itemsize();
            for (rows, cols) in [(2, 3), (7, 64), (64, 64), (65, 130), (200, 3), (3, 200)] {
                let bytes: Vec<u8> = (0..rows * cols * n).map(|k| (k * 7 % 251) as u8).collect();
                for from in [Order::C, Order::F] {
                    let a =
                        NdArray::from_bytes(dtype.clone(), &[rows, cols], from, &bytes).unwrap();
                    let to = match from {
                        Order::C => Order::F,
                        Order::F => Order::C,
                    };
                    let b = a.to_order(to);
                    assert_eq!(b.order(), to);
                    for i in 0..rows {
                        for j in 0..cols {
                            let at = |order| match order {
                                Order::C => (i * cols + j) * n,
                                Order::F => (j * rows + i) * n,
                            };
                            assert_eq!(
                                b.as_bytes()[at(to)..at(to) + n],
                                bytes[at(from)..at(from) + n],
                                "{typestr} {rows}x{cols} {from:?} [{i}, {j}]"
                            );
                        }
                    }
                    assert!(b.to_order(from).as_bytes() == &bytes[..]);
                }
            }
        }
    }

    #[test]
    fn fortran_views_and_values() {
        let a = array![[1i32, 2, 3], [4, 5, 6]];
        let f = a.t().as_standard_layout().t().to_owned().into_dyn();
        let nd = NdArray::from_ndarray(f.clone());
        assert_eq!(nd.order(), Order::F);
        assert_eq!(nd.view::<i32>().unwrap(), f.view());
        assert_eq!(nd.get(&[1, 0]).unwrap(), Value::Int(4));
        let c = nd.to_order(Order::C);
        assert_eq!(c.as_bytes(), NdArray::from_ndarray(a.into_dyn()).as_bytes());
        let vals: Vec<Value> = (1..=6).map(Value::Int).collect();
        assert_eq!(c.values().unwrap(), vals);
        assert_eq!(nd.values().unwrap(), vals);
    }

    #[test]
    fn construction_paths() {
        // A strided (non-contiguous) view is copied in C order.
        let a = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| (i * 10 + j) as u8);
        let sliced = a.slice(ndarray::s![.., 1..3]).to_owned();
        let strided = NdArray::from_view(a.slice(ndarray::s![.., 1..3]).into_dyn());
        assert_eq!(strided.order(), Order::C);
        assert_eq!(strided.view::<u8>().unwrap(), sliced.into_dyn());
        // Big enough for the huge-page storage; equal bytes either way.
        let side: u64 = if cfg!(miri) { 64 } else { 1 << 10 };
        let big: Vec<u64> = (0..side * side).collect();
        let n = side as usize;
        let nd = NdArray::from_slice(&big, &[n, n], Order::F).unwrap();
        assert_eq!(nd.view::<u64>().unwrap()[[3, 2]], 2 * side + 3);
        assert_eq!(nd.clone().as_bytes(), nd.as_bytes());
        let c = nd.to_order(Order::C);
        assert_eq!(c.view::<u64>().unwrap()[[3, 2]], 2 * side + 3);
        assert_eq!(c.get(&[3, 2]).unwrap(), Value::UInt(2 * side + 3));
        // from_byte_vec adopts or copies, never misaligns.
        let mut v = [0u8; 17];
        v[1..9].copy_from_slice(&7.5f64.to_ne_bytes());
        let shifted: Vec<u8> = v[1..9].to_vec();
        let a = NdArray::from_byte_vec(f64::dtype(), &[1], Order::C, shifted).unwrap();
        assert_eq!(a.view::<f64>().unwrap()[[0]], 7.5);
        assert!(NdArray::from_byte_vec(f64::dtype(), &[2], Order::C, vec![0; 8]).is_err());
        assert!(NdArray::from_vec(vec![1i32, 2, 3], &[2, 2]).is_err());
        assert!(NdArray::zeroed(f64::dtype(), &[usize::MAX, 2], Order::C).is_err());
        // Reshape keeps the bytes; i64 views datetime ticks.
        let m = NdArray::from_bytes(
            DType::from_typestr("<M8[s]").unwrap(),
            &[2],
            Order::C,
            &[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0],
        )
        .unwrap();
        assert_eq!(m.view::<i64>().unwrap().as_slice().unwrap(), &[1, 2]);
        assert!(m.view::<u64>().is_err());
        let r = m.reshape(&[1, 2]).unwrap();
        assert_eq!(r.shape(), &[1, 2]);
        assert!(r.reshape(&[3]).is_err());
        // Index checks.
        let a = NdArray::from_vec(vec![1i8, 2], &[2]).unwrap();
        assert!(a.get(&[2]).is_err() && a.get(&[0, 0]).is_err() && a.get_flat(5).is_err());
    }

    #[test]
    fn swapped_and_mismatched() {
        let be = DType::from_typestr(">u2").unwrap();
        let a = NdArray::from_bytes(be, &[2], Order::C, &[0, 1, 1, 0]).unwrap();
        assert!(a.view::<u16>().is_err());
        assert_eq!(
            a.to_ndarray::<u16>().unwrap().into_raw_vec_and_offset().0,
            vec![1, 256]
        );
        let b = NdArray::from_bytes(bool::dtype(), &[2], Order::C, &[0, 2]).unwrap();
        assert!(b.view::<bool>().is_err());
    }
}
