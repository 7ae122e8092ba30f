//! The RLE/bit-packing hybrid encoding of dictionary codes and definition levels, the same
//! bytes as arrow-rs's `RleEncoder` writes, without its per-value work where it can be
//! skipped.
//!
//! `RleEncoder::put` buffers values eight at a time and decides per group between a
//! bit-packed and an RLE run: a dictionary chunk's codes took ~5 % of a Parquet copy's CPU
//! that way. Two shapes are common and encoded here directly:
//! - codes with no value repeated 8 times in a row (a string or categorical column whose
//!   rows vary): `RleEncoder` then never starts an RLE run in the middle, so the output is
//!   bit-packed runs of at most 63 groups, each group of 8 values packed LSB first, and
//!   only the tail is special (see [`bit_packed`]);
//! - a page's definition levels when every row has a value: one value repeated, which
//!   `RleEncoder` turns into one RLE run; after the first 8 values the run is extended at
//!   once ([`RleEncoder::extend_run`]).
//!
//! Anything else goes through `RleEncoder` value by value.

use parquet::encodings::rle::RleEncoder;

/// Values per bit-packed group.
const GROUP: usize = 8;
/// Groups after which `RleEncoder` closes a bit-packed run (its indicator byte holds 63).
const MAX_GROUPS_PER_RUN: usize = 63;

/// `values` (each below `2^bit_width`, `bit_width` at most 32) in the hybrid encoding.
pub(crate) fn encode(bit_width: u8, values: &[u32]) -> Vec<u8> {
    match bit_packed(bit_width, values) {
        Some(bytes) => bytes,
        None => by_value(
            bit_width,
            values.iter().map(|&v| u64::from(v)),
            values.len(),
        ),
    }
}

/// `rows` definition levels of 1 (every row has a value) in the hybrid encoding.
pub(crate) fn all_ones(rows: usize) -> Vec<u8> {
    let mut enc = RleEncoder::new(1, RleEncoder::max_buffer_size(1, rows.min(GROUP)));
    let first = rows.min(GROUP);
    for _ in 0..first {
        enc.put(1);
    }
    let rest = rows - first;
    if rest > 0 {
        if enc.is_accumulating_rle(1) {
            enc.extend_run(rest);
        } else {
            for _ in 0..rest {
                enc.put(1);
            }
        }
    }
    enc.consume()
}

/// `values` through `RleEncoder`, one by one.
pub(crate) fn by_value(bit_width: u8, values: impl Iterator<Item = u64>, n: usize) -> Vec<u8> {
    let mut enc = RleEncoder::new(bit_width, RleEncoder::max_buffer_size(bit_width, n));
    for v in values {
        enc.put(v);
    }
    enc.consume()
}

/// Whether some value repeats `GROUP` times in a row (where `RleEncoder` may start an RLE run).
fn has_long_run(values: &[u32]) -> bool {
    let mut run = 0usize;
    let mut last = None;
    for &v in values {
        run = if last == Some(v) { run + 1 } else { 1 };
        if run >= GROUP {
            return true;
        }
        last = Some(v);
    }
    false
}

/// What `RleEncoder` writes for `values` when no value repeats 8 times in a row: bit-packed
/// runs of 63 groups, then the rest. Its tail rule is kept: a last partial group after a
/// closed run (or alone) whose values are all equal becomes an RLE run; otherwise it is padded
/// with zeros into the open bit-packed run. `None` when a long run exists or the width is
/// over 32 bits.
fn bit_packed(bit_width: u8, values: &[u32]) -> Option<Vec<u8>> {
    let width = usize::from(bit_width);
    if width == 0 || width > 32 || has_long_run(values) {
        return None;
    }
    let groups = values.len() / GROUP;
    let mut out =
        Vec::with_capacity(values.len() * width / GROUP + groups / MAX_GROUPS_PER_RUN + 16);
    let full = values.get(..groups * GROUP).unwrap_or_default();
    let tail = values.get(groups * GROUP..).unwrap_or_default();
    let mut runs = full.chunks(GROUP * MAX_GROUPS_PER_RUN).peekable();
    let open_groups = groups % MAX_GROUPS_PER_RUN;
    let tail_is_repeat = !tail.is_empty() && tail.iter().all(|&v| Some(&v) == tail.first());
    while let Some(run) = runs.next() {
        let last = runs.peek().is_none();
        let mut run_groups = run.len() / GROUP;
        let takes_tail = last && open_groups != 0 && !tail.is_empty();
        if takes_tail {
            run_groups += 1;
        }
        out.push(((run_groups << 1) | 1) as u8);
        pack_groups(width, run, &mut out);
        if takes_tail {
            pack_tail(width, tail, &mut out);
        }
    }
    if open_groups == 0 && !tail.is_empty() {
        // no open bit-packed run: an all-equal tail is an RLE run, else a run of one group
        if tail_is_repeat {
            put_vlq(&mut out, (tail.len() as u64) << 1);
            let value = tail.first().copied().unwrap_or(0).to_le_bytes();
            out.extend_from_slice(value.get(..width.div_ceil(8)).unwrap_or_default());
        } else {
            out.push((1 << 1) | 1);
            pack_tail(width, tail, &mut out);
        }
    }
    Some(out)
}

/// Groups of 8 values (`values.len()` a multiple of 8), each packed LSB first into `width`
/// bytes.
fn pack_groups(width: usize, values: &[u32], out: &mut Vec<u8>) {
    let mut acc = 0u64;
    let mut bits = 0usize;
    for &v in values {
        acc |= u64::from(v) << bits;
        bits += width;
        if bits >= 32 {
            out.extend_from_slice(&(acc as u32).to_le_bytes());
            acc >>= 32;
            bits -= 32;
        }
    }
    // 8 values of `width` bits are whole bytes: what is left is whole bytes too
    out.extend_from_slice(acc.to_le_bytes().get(..bits / 8).unwrap_or_default());
}

/// The last partial group, padded with zeros to 8 values.
fn pack_tail(width: usize, tail: &[u32], out: &mut Vec<u8>) {
    let mut group = [0u32; GROUP];
    for (slot, &v) in group.iter_mut().zip(tail) {
        *slot = v;
    }
    pack_groups(width, &group, out);
}

/// An unsigned LEB128 integer, as the RLE run header is written.
fn put_vlq(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small deterministic pseudo-random values.
    fn noise(n: usize, modulo: u32, seed: u64) -> Vec<u32> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 33) as u32) % modulo
            })
            .collect()
    }

    fn reference(width: u8, values: &[u32]) -> Vec<u8> {
        by_value(width, values.iter().map(|&v| u64::from(v)), values.len())
    }

    #[test]
    fn same_bytes_as_rle_encoder() {
        let mut cases: Vec<(u8, Vec<u32>)> = Vec::new();
        for n in [
            0, 1, 2, 7, 8, 9, 15, 16, 17, 503, 504, 505, 511, 512, 1007, 1008, 1009, 5000,
        ] {
            for width in [1u8, 3, 7, 8, 10, 13, 16, 17, 31, 32] {
                let modulo = if width == 32 { u32::MAX } else { 1u32 << width };
                cases.push((width, noise(n, modulo, n as u64 + u64::from(width))));
                // cycling codes, as a column repeating its categories
                cases.push((width, (0..n as u32).map(|i| i % modulo.min(100)).collect()));
                // an all-equal tail after full groups
                let mut v = noise(n, modulo, 7);
                let len = v.len();
                for x in v.iter_mut().skip(len - len % 8) {
                    *x = 1 % modulo;
                }
                cases.push((width, v));
                // runs long enough for RLE (the fallback)
                cases.push((
                    width,
                    (0..n as u32).map(|i| (i / 9) % modulo.min(50)).collect(),
                ));
            }
        }
        for (width, values) in cases {
            assert_eq!(
                encode(width, &values),
                reference(width, &values),
                "width {width}, {} values",
                values.len()
            );
        }
    }

    #[test]
    fn all_ones_as_rle_encoder() {
        for rows in [0, 1, 7, 8, 9, 100, 20_000, 1 << 20] {
            assert_eq!(
                all_ones(rows),
                by_value(1, std::iter::repeat_n(1, rows), rows),
                "{rows} rows"
            );
        }
    }
}
