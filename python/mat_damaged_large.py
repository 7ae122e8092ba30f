"""Damaged MAT sources for the MAT -> MAT copy tests (crates/sciio-cli/tests/mat_convert.rs,
crates/sciio-mat/tests/check_plain.rs)."""
# MAT files (v7 by scipy.io, v7.3 by hdf5storage) of two good variables, one of them over
# 16 MiB, and one damaged variable over 16 MiB, `bad` (sys.argv[1]: the folder):
# - `v7_cut.mat`: `bad`'s real part cut to half its bytes (the miMATRIX's size made to
#   match: its dimensions say twice as many), found from its headers;
# - `v73_cut.mat`: the zlib header of `bad`'s chunk holding its first element overwritten,
#   found when its first element is read (its Fletcher32 checksum fails);
# - `v7_deep.mat`, `v73_deep.mat`: bytes overwritten in the middle of `bad`'s zlib stream
#   (v7) or in a chunk of its last chunk row not holding its last element (v7.3), found only
#   after the first of it is written.
import sys, struct, zlib, numpy as np, scipy.io, hdf5storage, h5py
d = sys.argv[1]
r = np.random.default_rng(5)
vals = {"good": r.random((1500, 1500)), "bad": r.random((1500, 1500)),
        "small": np.arange(12, dtype=np.int32).reshape(3, 4)}
scipy.io.savemat(d + "/v7.mat", vals, do_compression=True)
hdf5storage.savemat(d + "/v73.mat", vals, format="7.3", matlab_compatible=True,
                    store_python_metadata=False)

def elements(b):
    at = 128
    while at < len(b):
        ty, size = struct.unpack_from("<2I", b, at)
        yield ty, b[at + 8:at + 8 + size]
        at += 8 + size

def sub_len(m, at):
    w = struct.unpack_from("<I", m, at)[0]
    if w >> 16:
        return 8
    return 8 + (struct.unpack_from("<I", m, at + 4)[0] + 7) // 8 * 8

def cut(stream):
    m = zlib.decompress(stream)
    at = 8
    for _ in range(3):  # array flags, dimensions, name
        at += sub_len(m, at)
    ty, n = struct.unpack_from("<2I", m, at)
    body = m[8:at] + struct.pack("<2I", ty, n // 2) + m[at + 8:at + 8 + n // 2]
    return zlib.compress(struct.pack("<2I", 14, len(body)) + body)

def flip(stream):
    b = bytearray(stream)
    b[len(b) // 2:len(b) // 2 + 16] = bytes(16)
    return bytes(b)

src = open(d + "/v7.mat", "rb").read()
els = list(elements(src))
assert len(els) == 3 and all(ty == 15 for ty, _ in els)
for name, damage in [("cut", cut), ("deep", flip)]:
    out = bytearray(src[:128])
    for ty, data in els:
        if zlib.decompressobj().decompress(data, 64).find(b"bad") >= 0:
            data = damage(data)
        out += struct.pack("<2I", ty, len(data)) + data
    open(f"{d}/v7_{name}.mat", "wb").write(bytes(out))

with h5py.File(d + "/v73.mat", "r") as f:
    ds = f["bad"]
    (n0, n1), (c0, c1) = ds.shape, ds.chunks
    assert c1 < n1, ds.chunks
    first = ds.id.get_chunk_info_by_coord((0, 0))
    deep = ds.id.get_chunk_info_by_coord(((n0 - 1) // c0 * c0, 0))
src = open(d + "/v73.mat", "rb").read()
for name, chunk in [("cut", first), ("deep", deep)]:
    b = bytearray(src)
    b[chunk.byte_offset:chunk.byte_offset + 2] = b"\x00\x00"
    open(f"{d}/v73_{name}.mat", "wb").write(bytes(b))
