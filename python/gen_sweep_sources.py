"""Source files for the damage sweep (crates/sciio-cli/tests/damage_sweep.rs), written by the
reference tools: what a damaged copy must never crash sciio on.

Usage: python gen_sweep_sources.py OUT_DIR

Writes files whose compressed chunks and page headers go through every decoder sciio hands
damaged bytes to (c-blosc2 frames and b2nd arrays, c-blosc1 frames, zlib, bzip2, LZO-free
PyTables filters, Fletcher-32, Parquet dictionary / plain pages with page checksums), plus a
stored and a deflated .npz whose members' CRC-32 covers the data. Prints one line per file:
NAME START:END ..., the byte ranges a checksum covers (npz members' data under their CRC-32,
Fletcher-32 chunks): a copy damaged only there that still converts must give the original's
values.
"""
import sys
from pathlib import Path

import h5py
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import tables

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(7)
checked = {}

# PyTables: blosc2 (b2nd for the 2-d CArray), blosc lz4 / zstd, zlib, bzip2 tables/arrays.
for name, filters in [
    ("pt-blosc2-lz4", tables.Filters(complevel=5, complib="blosc2:lz4")),
    ("pt-blosc2-zstd", tables.Filters(complevel=5, complib="blosc2:zstd", shuffle=False, bitshuffle=True)),
    ("pt-blosc-lz4", tables.Filters(complevel=5, complib="blosc:lz4")),
    ("pt-blosc-zstd", tables.Filters(complevel=3, complib="blosc:zstd")),
    ("pt-zlib", tables.Filters(complevel=1, complib="zlib", shuffle=True)),
    ("pt-bzip2", tables.Filters(complevel=5, complib="bzip2")),
]:
    with tables.open_file(out / f"{name}.h5", "w") as f:
        f.create_carray("/", "carray", obj=rng.normal(size=(200, 30)).round(2), filters=filters,
                        chunkshape=(50, 15))
        e = f.create_earray("/", "earray", atom=tables.Int32Atom(), shape=(0, 4), filters=filters,
                            chunkshape=(64, 4))
        e.append(np.arange(2000, dtype=np.int32).reshape(-1, 4))
        t = f.create_table("/", "table", {"a": tables.Int64Col(), "b": tables.Float32Col(),
                                          "s": tables.StringCol(6)}, filters=filters,
                           chunkshape=(128,))
        t.append([(i, i / 3, b"x%d" % i) for i in range(1000)])
    checked[f"{name}.h5"] = []

# h5py: Fletcher-32 over gzip chunks (a checksum covers every stored chunk).
with h5py.File(out / "h5py-fletcher32.h5", "w") as f:
    f.create_dataset("data", data=rng.integers(0, 1000, size=(300, 40)), chunks=(30, 40),
                     compression="gzip", fletcher32=True)
with h5py.File(out / "h5py-fletcher32.h5", "r") as f:
    ds = f["data"]
    chunks = [ds.id.get_chunk_info(i) for i in range(ds.id.get_num_chunks())]
    checked["h5py-fletcher32.h5"] = [(c.byte_offset, c.byte_offset + c.size) for c in chunks]

# h5py metadata libhdf5 parses itself: dense attribute and link storage (fractal heaps, v2
# B-trees) in the latest format; many groups in the earliest (v1 B-trees, local heaps); vlen
# strings (global heaps).
with h5py.File(out / "h5py-latest-dense.h5", "w", libver="latest") as f:
    g = f.create_group("many", track_order=True)
    for i in range(40):
        g.attrs[f"attr{i:02d}"] = np.arange(i % 5 + 1)
        g.create_dataset(f"d{i:02d}", data=np.full(3, i))
    f.create_dataset("strings", data=np.array(["a", "bb", "ccc"] * 20, dtype=object),
                     dtype=h5py.string_dtype())
checked["h5py-latest-dense.h5"] = []
with h5py.File(out / "h5py-earliest-groups.h5", "w", libver="earliest") as f:
    for i in range(30):
        f.create_group(f"g{i:02d}").create_dataset("x", data=np.arange(i + 1))
    f.attrs["note"] = "old format"
checked["h5py-earliest-groups.h5"] = []

# Parquet: dictionary and plain pages, page checksums, snappy / zstd / gzip.
frame = pa.table({
    "i": pa.array(np.arange(3000, dtype=np.int64)),
    "f": pa.array(rng.normal(size=3000)),
    "s": pa.array([f"v{i % 17}" for i in range(3000)]),
    "n": pa.array([None if i % 5 == 0 else i for i in range(3000)], type=pa.int32()),
    "b": pa.array([i % 3 == 0 for i in range(3000)]),
})
for name, kwargs in [
    ("pq-dict-snappy", dict(compression="snappy", use_dictionary=True)),
    ("pq-plain-zstd", dict(compression="zstd", use_dictionary=False)),
    ("pq-gzip-v2", dict(compression="gzip", data_page_version="2.0")),
]:
    pq.write_table(frame, out / f"{name}.parquet", row_group_size=1000,
                   data_page_size=2048, write_page_checksum=True, **kwargs)
    checked[f"{name}.parquet"] = []

# npz: stored and deflated members, CRC-32 over each member's bytes.
arrays = dict(a=np.arange(500.0), b=rng.integers(0, 9, size=(20, 30)).astype(np.int16))
np.savez(out / "npz-stored.npz", **arrays)
np.savez_compressed(out / "npz-deflated.npz", **arrays)


def member_ranges(path):
    """The byte range of every member's stored data (after its local header)."""
    import struct
    import zipfile
    raw = path.read_bytes()
    ranges = []
    for info in zipfile.ZipFile(path).infolist():
        at = info.header_offset
        name_len, extra_len = struct.unpack("<HH", raw[at + 26:at + 30])
        start = at + 30 + name_len + extra_len
        ranges.append((start, start + info.compress_size))
    return ranges


checked["npz-stored.npz"] = member_ranges(out / "npz-stored.npz")
checked["npz-deflated.npz"] = member_ranges(out / "npz-deflated.npz")

for name, ranges in sorted(checked.items()):
    print(name, *(f"{a}:{b}" for a, b in ranges))
