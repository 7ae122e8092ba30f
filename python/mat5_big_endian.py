"""A big-endian copy of a little-endian Level-5 MAT file (as MATLAB on a big-endian machine
writes it): usage mat5_big_endian.py SRC DST.

The header's version and endian indicator, every tag and every number are written in the
other byte order; miCOMPRESSED variables are inflated, converted and deflated again. Only
what numeric, char, logical and cell/struct variables hold is converted (no MATLAB objects).
scipy.io.loadmat reads the copy as the same values.
"""
import struct
import sys
import zlib

import numpy as np

# Bytes of one number of each Level-5 data type.
SIZES = {1: 1, 2: 1, 3: 2, 4: 2, 5: 4, 6: 4, 7: 4, 9: 8, 12: 8, 13: 8, 16: 1, 17: 2, 18: 4}
MI_MATRIX, MI_COMPRESSED = 14, 15


def swap_numbers(ty, data):
    n = SIZES[ty]
    if n == 1:
        return data
    return np.frombuffer(data, f"<u{n}").astype(f">u{n}").tobytes()


def convert(b):
    """The elements of `b` (little-endian) in big-endian order."""
    out = bytearray()
    at = 0
    while at < len(b):
        word = struct.unpack_from("<I", b, at)[0]
        if word >> 16:  # a small element: type and size in one word, data in the next four
            ty, n = word & 0xFFFF, word >> 16
            out += struct.pack(">I", word) + swap_numbers(ty, b[at + 4:at + 4 + n])
            out += b[at + 4 + n:at + 8]
            at += 8
            continue
        ty, n = struct.unpack_from("<2I", b, at)
        body = b[at + 8:at + 8 + n]
        if ty == MI_COMPRESSED:
            body = zlib.compress(convert(zlib.decompress(body)))
            out += struct.pack(">2I", ty, len(body)) + body
            at += 8 + n
            continue
        body = convert(body) if ty == MI_MATRIX else swap_numbers(ty, body)
        padded = (n + 7) // 8 * 8
        out += struct.pack(">2I", ty, n) + body + b[at + 8 + n:at + 8 + padded]
        at += 8 + padded
    return bytes(out)


def main(src, dst):
    b = open(src, "rb").read()
    assert b[124:128] == b"\x00\x01IM", "not a little-endian Level-5 MAT file"
    head = b[:124] + b"\x01\x00MI"
    open(dst, "wb").write(head + convert(b[128:]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
