//! Blosc and Blosc2 chunks as PyTables stores them (Blosc1 frames; Blosc2 super-chunk frames,
//! b2nd arrays for n-d chunks), mutated from real chunks (fuzz/seeds/blosc_chunks, written by
//! PyTables through fuzz/seeds/gen_blosc_seeds.py): sciio validates the frame, chunk and b2nd
//! headers before c-blosc2 sees them (it crashed on damaged b2nd metadata), so every input
//! decodes or gives a clean error. Byte 0 picks the filter (even: blosc, odd: blosc2), bytes
//! 1..5 the size the HDF5 chunk expects (below 16 MiB, as the fuzzer's memory allows), the
//! rest is the stored chunk.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_pytables::sciio_hdf5::filters::{decode, id};

fuzz_target!(|data: &[u8]| {
    let [pick, e0, e1, e2, e3, chunk @ ..] = data else {
        return;
    };
    let filter = if pick % 2 == 0 { id::BLOSC } else { id::BLOSC2 };
    let expected = u32::from_le_bytes([*e0, *e1, *e2, *e3]) as usize % (16 << 20);
    let _ = decode(filter, &[], chunk, Some(expected));
});
