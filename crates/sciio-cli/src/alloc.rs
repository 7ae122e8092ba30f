//! glibc's malloc tuned for conversions that allocate and free the same large buffers over and
//! over (Parquet pages, Arrow arrays, HDF5 slabs of a few MiB each, batch after batch).
//!
//! By default glibc serves allocations over 128 KiB (a threshold that adapts, up to 32 MiB)
//! with their own `mmap` and trims the heap's free top back to the kernel past 128 KiB, so
//! every row group's buffers were unmapped when freed and faulted in again, page by zeroed
//! page, when the next row group allocated them: a third of the CPU time of reading a
//! 10M-row Parquet file went to the kernel. Here blocks up to 4 MiB come from the heap and up
//! to 64 MiB of freed memory stays mapped for reuse; all threads share one heap
//! (tests/scale_rss.rs: with an arena per thread, buffers passed between reader and encoder
//! threads piled up and peak RSS grew with the data). Larger blocks (whole Arrow columns of a
//! row group, HDF5 slabs) keep their own mappings: served from the one heap (up to glibc's
//! 32 MiB maximum), their varying sizes fragmented it and peak RSS grew with the data again
//! (a table with a subarray field into Parquet: 180 MiB at 64 MiB, 323 MiB at 1 GiB; with
//! 4 MiB, 177 and 234 MiB).

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// Largest block served from the heap.
const MMAP_THRESHOLD: libc::c_int = 4 << 20;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// Free memory at the top of a heap kept mapped instead of trimmed.
const TRIM_THRESHOLD: libc::c_int = 64 << 20;

/// Sets the thresholds (glibc only; elsewhere the allocator is left as it is).
pub(crate) fn keep_freed_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets malloc's parameters; it is called first thing in main, before
    // any other thread exists, with options and values glibc documents.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        // one heap for every thread: buffers allocated by the reading threads and freed by
        // the encoding threads (and back) are reused instead of piling up in per-thread arenas
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
