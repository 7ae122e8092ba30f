"""A big-endian copy of a little-endian MAT v4 file (as MATLAB 4 on a big-endian machine
writes it; scipy.io.savemat(format='4') writes only the machine's order): usage
mat4_big_endian.py SRC DST.

Each matrix's header (MOPT, rows, columns, imaginary flag, name length) is written big-endian
with MOPT's machine digit set to 1 (big-endian IEEE); its name is copied; every number of its
data (of the precision MOPT gives) is reversed. scipy.io.loadmat reads the copy as the same
values. The data is copied a column's worth at a time, so large files are fine.
"""
import struct
import sys

import numpy as np

# Bytes of one number of each v4 precision digit P (double, single, int32, int16, uint16, uint8).
SIZES = {0: 8, 1: 4, 2: 4, 3: 2, 4: 2, 5: 1}
PIECE = 1 << 24


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, "rb") as f, open(dst, "wb") as out:
        while True:
            head = f.read(20)
            if not head:
                break
            mopt, rows, cols, imag, namelen = struct.unpack("<5i", head)
            if mopt // 1000 != 0:
                raise SystemExit(f"{src}: not a little-endian v4 matrix (MOPT {mopt})")
            out.write(struct.pack(">5i", mopt + 1000, rows, cols, imag, namelen))
            out.write(f.read(namelen))
            size = SIZES[(mopt // 10) % 10]
            left = rows * cols * size * (2 if imag else 1)
            while left:
                n = min(left, PIECE - PIECE % size)
                data = f.read(n)
                if len(data) != n:
                    raise SystemExit(f"{src}: cut short")
                if size > 1:
                    data = np.frombuffer(data, f"<u{size}").astype(f">u{size}").tobytes()
                out.write(data)
                left -= n


if __name__ == "__main__":
    main()
