//! Arbitrary bytes through sciio's own HDF5 filter decoders (szip, Bitshuffle, LZO, bzip2,
//! Blosc, Blosc2, deflate, shuffle) as the parallel reader and libhdf5's pipeline call them:
//! a clean error or data, never a panic. Byte 0 picks the filter, bytes 1..25 are six client
//! data values, the rest is the chunk.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_pytables::sciio_hdf5::filters::{decode, id};

const FILTERS: [i32; 8] = [
    id::SZIP,
    id::BITSHUFFLE,
    id::LZO,
    id::BZIP2,
    id::BLOSC,
    id::BLOSC2,
    id::DEFLATE,
    id::SHUFFLE,
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    if rest.len() < 24 {
        return;
    }
    let (cd, chunk) = rest.split_at(24);
    let cd: Vec<u32> = cd
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) % (1 << 16))
        .collect();
    let filter = FILTERS[pick as usize % FILTERS.len()];
    let _ = decode(filter, &cd, chunk, None);
    let _ = decode(filter, &cd, chunk, Some(4096));
});
