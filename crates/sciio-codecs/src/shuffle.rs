//! HDF5's shuffle filter, reversed: the one home of unshuffling for every read path (libhdf5
//! callbacks, the parallel chunk reader, direct chunk reads).

/// Reverses HDF5's shuffle into `out` (same length as `input`): byte `b` of element `i` was
/// stored at `b * n + i`; a tail shorter than one element was left in place.
pub fn unshuffle_into(input: &[u8], elem: usize, out: &mut [u8]) {
    let n = if elem > 1 { input.len() / elem } else { 0 };
    if n == 0 {
        out.copy_from_slice(input);
        return;
    }
    let body = n * elem;
    if elem == 8 {
        unshuffle8(&input[..body], n, &mut out[..body]);
        out[body..].copy_from_slice(&input[body..]);
        return;
    }
    for (b, plane) in input[..body].chunks_exact(n).enumerate() {
        for (dst, &src) in out[b..body].iter_mut().step_by(elem).zip(plane) {
            *dst = src;
        }
    }
    out[body..].copy_from_slice(&input[body..]);
}

/// Unshuffles `n` 8-byte elements (doubles, int64: MAT matrices), eight at a time: eight
/// bytes of each of the eight byte planes form an 8×8 byte matrix, transposed in registers
/// with three rounds of block swaps, so every load and store moves eight bytes (the generic
/// loop moves one byte per store, a third of the time of reading a shuffled matrix).
fn unshuffle8(input: &[u8], n: usize, out: &mut [u8]) {
    let blocks = n / 8;
    for k in 0..blocks {
        let mut a = [0u64; 8];
        for (b, row) in a.iter_mut().enumerate() {
            let at = b * n + 8 * k;
            let mut word = [0u8; 8];
            word.copy_from_slice(&input[at..at + 8]);
            *row = u64::from_le_bytes(word);
        }
        // a[b] byte j = byte b of element 8k+j; swap 4×4, then 2×2, then 1×1 blocks. Constant
        // indices only, so the eight words stay in registers.
        const M4: u64 = 0x0000_0000_ffff_ffff;
        const M2: u64 = 0x0000_ffff_0000_ffff;
        const M1: u64 = 0x00ff_00ff_00ff_00ff;
        #[inline(always)]
        fn swap(x: &mut u64, y: &mut u64, bytes: u32, mask: u64) {
            let t = ((*x >> (8 * bytes)) ^ *y) & mask;
            *x ^= t << (8 * bytes);
            *y ^= t;
        }
        let [a0, a1, a2, a3, a4, a5, a6, a7] = &mut a;
        swap(a0, a4, 4, M4);
        swap(a1, a5, 4, M4);
        swap(a2, a6, 4, M4);
        swap(a3, a7, 4, M4);
        swap(a0, a2, 2, M2);
        swap(a1, a3, 2, M2);
        swap(a4, a6, 2, M2);
        swap(a5, a7, 2, M2);
        swap(a0, a1, 1, M1);
        swap(a2, a3, 1, M1);
        swap(a4, a5, 1, M1);
        swap(a6, a7, 1, M1);
        for (j, word) in a.iter().enumerate() {
            let at = (8 * k + j) * 8;
            out[at..at + 8].copy_from_slice(&word.to_le_bytes());
        }
    }
    for i in 8 * blocks..n {
        for b in 0..8 {
            out[i * 8 + b] = input[b * n + i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter's definition, byte by byte.
    fn reference(input: &[u8], elem: usize) -> Vec<u8> {
        if elem <= 1 || input.len() < elem {
            return input.to_vec();
        }
        let n = input.len() / elem;
        let mut out = input.to_vec();
        for i in 0..n {
            for b in 0..elem {
                out[i * elem + b] = input[b * n + i];
            }
        }
        out
    }

    #[test]
    fn unshuffle_into_matches_the_definition() {
        for (len, elem) in [
            (0, 4),
            (37 * 11 + 5, 37),
            (64, 8),
            (10, 1),
            (3, 4),
            (8 * 8 * 13 + 8 * 5 + 3, 8),
            (7, 8),
            (8 * 1000, 8),
        ] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let mut out = vec![0u8; len];
            unshuffle_into(&data, elem, &mut out);
            assert_eq!(out, reference(&data, elem), "len {len} elem {elem}");
        }
    }
}
