"""Seeds for the blosc_chunks fuzz target: real Blosc / Blosc2 chunks as PyTables stores them.

Usage: python fuzz/seeds/gen_blosc_seeds.py  (writes fuzz/seeds/blosc_chunks/*)
Each seed is [filter pick][expected size, u32 little-endian][the stored chunk], read back raw
with h5py's read_direct_chunk from files PyTables wrote with each codec.
"""
import struct
import tempfile
from pathlib import Path

import h5py
import numpy as np
import tables

out = Path(__file__).parent / "blosc_chunks"
out.mkdir(exist_ok=True)
rng = np.random.default_rng(3)
data = {1: rng.integers(0, 50, size=2000).astype(np.int32),
        2: rng.normal(size=(40, 16)).round(1)}
with tempfile.TemporaryDirectory() as tmp:
    for pick, lib in [(0, "blosc:lz4"), (0, "blosc:zstd"), (0, "blosc:blosclz"),
                      (1, "blosc2:lz4"), (1, "blosc2:zstd"), (1, "blosc2:blosclz")]:
        for ndim, arr in data.items():
            path = Path(tmp) / "f.h5"
            with tables.open_file(path, "w") as f:
                chunk = (500,) if ndim == 1 else (20, 16)
                f.create_carray("/", "x", obj=arr, chunkshape=chunk,
                                filters=tables.Filters(complevel=5, complib=lib, shuffle=True))
            with h5py.File(path, "r") as f:
                ds = f["x"]
                _, stored = ds.id.read_direct_chunk((0,) * ndim)
                expected = int(np.prod(ds.chunks)) * ds.dtype.itemsize
            name = f"{lib.replace(':', '-')}-{ndim}d"
            (out / name).write_bytes(bytes([pick]) + struct.pack("<I", expected) + stored)
            print(name, len(stored))
