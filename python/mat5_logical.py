"""Level-5 MAT files of large logical variables, as scipy.io.savemat writes them (class uint8
with the logical flag, data miUINT8), for the streaming tests: usage mat5_logical.py DIR.

Writes DIR/l5.mat (v5, uncompressed) and DIR/l7.mat (v7: the same elements, each deflated
into an miCOMPRESSED element as MATLAB and scipy write them), both little-endian, and their
big-endian copies DIR/b5.mat and DIR/b7.mat (python/mat5_big_endian.py). Variables:
  mask  a bool array (4000, 4500) as scipy writes numpy bools (bytes 0 and 1)
  odd   (4200, 4100) bytes (k % 7) * 40 at column-major index k, saved by scipy as uint8 and
        then flagged logical: bytes other than 0 and 1, which MATLAB reads as true
  small a bool array (3, 4) (read whole)
  wide  (500, 400) doubles (k % 3) / 2, saved by scipy as double and then flagged logical: a
        logical of a wider class (no writer known makes one), which is not streamed but read
        whole (over 1 MiB: tried for streaming)
mask and odd are over 16 MiB each: MAT -> MAT and out-of-MAT conversions stream them.
"""
import os
import runpy
import struct
import sys
import zlib

import numpy as np
import scipy.io

MI_MATRIX, MI_COMPRESSED = 14, 15
MX_DOUBLE, MX_UINT8, LOGICAL = 6, 9, 0x200


def elements(b):
    """(offset, type, size) of the top-level elements of a little-endian Level-5 file."""
    at = 128
    while at < len(b):
        ty, n = struct.unpack_from("<2I", b, at)
        yield at, ty, n
        at += 8 + (n + 7) // 8 * 8


def flag_logical(b):
    """`b` with its uint8 and double variables not flagged logical flagged logical."""
    b = bytearray(b)
    flagged = 0
    for at, ty, _ in elements(b):
        # The array flags: the word after the miMATRIX tag and the flags' own tag.
        (flags,) = struct.unpack_from("<I", b, at + 16)
        if ty == MI_MATRIX and flags & 0xFF in (MX_UINT8, MX_DOUBLE) and not flags & LOGICAL:
            struct.pack_into("<I", b, at + 16, flags | LOGICAL)
            flagged += 1
    assert flagged == 2, flagged
    return bytes(b)


def deflated(b):
    """The v7 file of the v5 file `b`: each top-level element deflated whole."""
    out = bytearray(b[:128])
    for at, _, n in elements(b):
        z = zlib.compress(b[at:at + 8 + n])
        out += struct.pack("<2I", MI_COMPRESSED, len(z)) + z
    return bytes(out)


def main(d):
    k = np.arange(4200 * 4100, dtype=np.int64)
    values = {
        "mask": (np.arange(4000 * 4500) % 7 < 3).reshape(4000, 4500, order="F"),
        "odd": ((k % 7) * 40).astype(np.uint8).reshape(4200, 4100, order="F"),
        "small": np.array([[True, False, True, True]] * 3),
        "wide": (np.arange(500 * 400) % 3 / 2).reshape(500, 400, order="F"),
    }
    plain = os.path.join(d, "l5.mat")
    scipy.io.savemat(plain, values)
    b = flag_logical(open(plain, "rb").read())
    open(plain, "wb").write(b)
    open(os.path.join(d, "l7.mat"), "wb").write(deflated(b))
    big_endian = runpy.run_path(os.path.join(os.path.dirname(__file__), "mat5_big_endian.py"))
    for v in ("5", "7"):
        big_endian["main"](os.path.join(d, f"l{v}.mat"), os.path.join(d, f"b{v}.mat"))
    # Each file as scipy.io reads it: logicals as their class, the flagged values as they are.
    for v in ("l5", "l7", "b5", "b7"):
        got = scipy.io.loadmat(os.path.join(d, f"{v}.mat"))
        for name, want in values.items():
            stored = np.float64 if name == "wide" else np.uint8
            assert got[name].dtype.newbyteorder("=") == stored and np.array_equal(got[name], want), (v, name)


if __name__ == "__main__":
    main(sys.argv[1])
