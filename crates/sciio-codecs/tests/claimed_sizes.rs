//! A damaged chunk that claims a huge decoded size in a few bytes is refused without
//! allocating that size: every decoder's peak allocation stays small, whatever the chunk's
//! headers say. The process's allocations are counted by a global allocator; one test, so
//! nothing else runs alongside.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use sciio_codecs::{decode, id};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator with the same arguments; the
// counters are only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
        PEAK.fetch_max(live, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's pointer, layout and size, passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most any damaged chunk below may make a decoder allocate at once.
const BOUND: usize = 16 << 20;

/// A Bitshuffle chunk (LZ4 or zstd) whose header claims `total` decoded bytes in one block
/// of `total` bytes, followed by one short block of garbage.
fn bitshuffle_claiming(total: u64) -> Vec<u8> {
    let mut chunk = total.to_be_bytes().to_vec();
    chunk.extend(u32::try_from(total).unwrap_or(u32::MAX).to_be_bytes());
    chunk.extend(8u32.to_be_bytes());
    chunk.extend([0x1f, 0, 0, 0, 0, 0, 0, 0]);
    chunk
}

#[test]
fn damaged_chunks_claiming_gigabytes_are_refused_in_small_memory() {
    let three_gib = 3u64 << 30;
    let mut cases: Vec<(&str, i32, Vec<u32>, Vec<u8>)> = vec![
        (
            "bitshuffle+lz4",
            id::BITSHUFFLE,
            vec![0, 3, 4, 0, 2],
            bitshuffle_claiming(three_gib),
        ),
        (
            "bitshuffle+zstd",
            id::BITSHUFFLE,
            vec![0, 3, 4, 0, 3],
            bitshuffle_claiming(three_gib),
        ),
        // What the hdf5_filters fuzz target found: 3.9 GB claimed, one-byte elements, LZ4.
        (
            "bitshuffle fuzz find",
            id::BITSHUFFLE,
            vec![331, 14976, 1, 65280, 2, 0],
            vec![
                0x00, 0x00, 0x00, 0x00, 0xf7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x00, 0xff, 0x40, 0xff, 0xff, 0x2e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff, 0xff, 0x40, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x2a, 0xff,
                0xff, 0xff, 0xff, 0xff, 0x00, 0x4b, 0x01, 0x00, 0xff, 0x00,
            ],
        ),
    ];
    // Every other decoder, over runs of bytes that read as the largest sizes.
    for (name, filter) in [
        ("lzo", id::LZO),
        ("lzf", id::LZF),
        ("bzip2", id::BZIP2),
        ("blosc", id::BLOSC),
        ("blosc2", id::BLOSC2),
        ("szip", id::SZIP),
        ("deflate", id::DEFLATE),
    ] {
        for fill in [0xff_u8, 0x7f, 0x00] {
            let mut chunk = vec![fill; 64];
            chunk[0] = 2; // a plausible format version where there is one
            cases.push((name, filter, vec![0, 0, 4, 0, 0, 0, 0, 0], chunk));
        }
    }
    let mut over = Vec::new();
    for (name, filter, cd, chunk) in &cases {
        // `expected` is the caller's word (the chunk's size, which it has allocated itself):
        // without it the chunk's own claims are all a decoder has.
        for expected in [None, Some(4096)] {
            let before = LIVE.load(Ordering::Relaxed);
            PEAK.store(before, Ordering::Relaxed);
            let result = decode(*filter, cd, chunk, expected);
            let peak = PEAK.load(Ordering::Relaxed) - before;
            // Some fills are valid streams of the simpler formats (LZF, deflate): only the
            // Bitshuffle chunks, whose claims no block backs, must fail.
            if name.starts_with("bitshuffle") {
                assert!(
                    result.is_err(),
                    "{name} ({expected:?}): a damaged chunk decoded"
                );
            }
            if peak > BOUND {
                over.push(format!("{name} ({expected:?}): {} MiB", peak >> 20));
            }
        }
    }
    assert!(
        over.is_empty(),
        "allocated past {} MiB: {over:?}",
        BOUND >> 20
    );
}
