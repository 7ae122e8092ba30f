//! The order of a frame's blocks as `pd.read_parquet` (pyarrow's `Table.to_pandas`) makes
//! them, which is the order `to_hdf` writes them as `values_block_N` (pandas'
//! `_get_blocks_and_items` takes `frame._mgr.blocks` as they are; `_consolidate` keeps a
//! consolidated frame's order).
//!
//! pyarrow's `ConsolidatedBlockCreator` (arrow_to_pandas.cc) gives the consolidating blocks
//! first, then the one-column blocks (categoricals, tz datetimes, strings and other extension
//! columns), each group in the iteration order of a libstdc++ `std::unordered_map<int, _>`:
//! the consolidating blocks keyed by their `PandasWriter::type`, inserted into a first map in
//! the order of their first column, then into a second in the first's iteration order; the
//! one-column blocks keyed by their column's position. That order is reproduced here by
//! simulating the map (checked against pandas on random frames of up to 600 columns by
//! crates/sciio-cli/tests/hdfstore_write.rs).

/// libstdc++'s `__prime_list` (hashtable-aux.cc), up to what a frame's columns can need.
const PRIMES: &[usize] = &[
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
    103, 109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293, 313,
    337, 359, 383, 409, 439, 467, 503, 541, 577, 619, 661, 709, 761, 823, 887, 953, 1031, 1109,
    1193, 1289, 1381, 1493, 1613, 1741, 1879, 2029, 2179, 2357, 2549, 2753, 2971, 3209, 3469, 3739,
    4027, 4349, 4703, 5087, 5503, 5953, 6427, 6949, 7517, 8123, 8783, 9497, 10273, 11113, 12011,
    12983, 14033, 15173, 16411, 17749, 19183, 20753, 22447, 24281, 26267, 28411, 30727, 33223,
    35933, 38873, 42043, 45481, 49201, 53201, 57557, 62233, 67307, 72817, 78779, 85229, 92203,
    99733,
];

/// libstdc++'s `_Prime_rehash_policy::__fast_bkt`: bucket counts asked for under 14.
const FAST_BUCKETS: [usize; 14] = [2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13];

/// A `std::unordered_map<int, _>` of libstdc++ (identity hash, maximum load factor 1), keys
/// only: the order its iterator gives them.
struct UnorderedKeys {
    buckets: usize,
    next_resize: usize,
    /// The keys in iteration order (the hashtable's singly linked list).
    list: Vec<usize>,
}

impl UnorderedKeys {
    fn new() -> Self {
        UnorderedKeys {
            buckets: 1,
            next_resize: 0,
            list: Vec::new(),
        }
    }

    /// `_M_next_bkt`: the bucket count for at least `n`, and the size that triggers the next
    /// rehash; `None` beyond the primes listed.
    fn next_buckets(n: usize) -> Option<(usize, usize)> {
        if let Some(&b) = FAST_BUCKETS.get(n) {
            return Some((b, b));
        }
        PRIMES.iter().find(|&&p| p >= n).map(|&p| (p, p))
    }

    /// `insert` of a new key (`_M_need_rehash`, `_M_rehash_aux`, `_M_insert_bucket_begin`).
    fn insert(&mut self, key: usize) -> Option<()> {
        if self.list.contains(&key) {
            return Some(());
        }
        let count = self.list.len() + 1;
        if count > self.next_resize {
            // The first insertion asks for 11 buckets at least.
            let min = count.max(if self.next_resize == 0 { 11 } else { 0 });
            if min >= self.buckets {
                let (buckets, resize) = Self::next_buckets((min + 1).max(self.buckets * 2))?;
                self.rehash(buckets);
                self.next_resize = resize;
            } else {
                self.next_resize = self.buckets;
            }
        }
        self.insert_node(key);
        Some(())
    }

    /// A key into its bucket: first of the bucket when the bucket has keys, else first of all.
    fn insert_node(&mut self, key: usize) {
        let bucket = key % self.buckets;
        let at = self
            .list
            .iter()
            .position(|k| k % self.buckets == bucket)
            .unwrap_or(0);
        self.list.insert(at, key);
    }

    fn rehash(&mut self, buckets: usize) {
        self.buckets = buckets;
        let old = std::mem::take(&mut self.list);
        for k in old {
            self.insert_node(k);
        }
    }
}

/// How pyarrow makes a block: consolidated by its writer type, or a column alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockKind {
    /// `PandasWriter::type` of a consolidating dtype.
    Consolidated(usize),
    /// A one-column block; its column's position among the frame's columns.
    Alone(usize),
}

/// The `PandasWriter::type` pyarrow converts to the numpy dtype `dtype` with (None for a
/// dtype pyarrow does not make a consolidated block of).
pub(crate) fn writer_type(dtype: &str) -> Option<usize> {
    Some(match dtype {
        "object" => 0,
        "uint8" => 1,
        "int8" => 2,
        "uint16" => 3,
        "int16" => 4,
        "uint32" => 5,
        "int32" => 6,
        "uint64" => 7,
        "int64" => 8,
        "float16" => 9,
        "float32" => 10,
        "float64" => 11,
        "bool" => 12,
        "datetime64[s]" => 14,
        "datetime64[ms]" => 15,
        "datetime64[us]" => 16,
        "datetime64[ns]" => 17,
        "timedelta64[s]" => 22,
        "timedelta64[ms]" => 23,
        "timedelta64[us]" => 24,
        "timedelta64[ns]" => 25,
        _ => return None,
    })
}

/// The blocks (by their index in `kinds`, which lists them in the order of their first
/// column) in pyarrow's order; `None` when the simulation does not reach that far.
pub(crate) fn pyarrow_order(kinds: &[BlockKind]) -> Option<Vec<usize>> {
    let mut first = UnorderedKeys::new();
    let mut alone = UnorderedKeys::new();
    for k in kinds {
        match *k {
            BlockKind::Consolidated(t) => first.insert(t)?,
            BlockKind::Alone(c) => alone.insert(c)?,
        }
    }
    let mut second = UnorderedKeys::new();
    for &t in &first.list {
        second.insert(t)?;
    }
    let find = |want: BlockKind| kinds.iter().position(|&k| k == want);
    let consolidated = second
        .list
        .iter()
        .map(|&t| find(BlockKind::Consolidated(t)));
    let singles = alone.list.iter().map(|&c| find(BlockKind::Alone(c)));
    consolidated.chain(singles).collect()
}

#[cfg(test)]
mod tests {
    use super::{pyarrow_order, BlockKind::*};

    #[test]
    fn colliding_writer_types_and_singles_come_in_hash_order() {
        // int8, timedelta64[us] (bucket 11 of 13), uint8: pyarrow gives them as inserted.
        let kinds = [Consolidated(2), Consolidated(24), Consolidated(1)];
        assert_eq!(pyarrow_order(&kinds), Some(vec![0, 1, 2]));
        // One-column blocks come after, the last column first.
        let kinds = [Alone(0), Consolidated(8), Alone(2), Consolidated(11)];
        assert_eq!(pyarrow_order(&kinds), Some(vec![1, 3, 2, 0]));
    }
}
