"""MAT files of MATLAB complex integer variables, which scipy.io cannot write (numpy has no
complex integers), laid out as MATLAB writes them.

usage: mat_complex_ints.py PATH FORMAT ROWS [beyond]

FORMAT: v5 (Level-5, little-endian, uncompressed), v5be (Level-5 big-endian, uncompressed),
v7 (Level-5, each variable a zlib-compressed miCOMPRESSED element), v73 (HDF5: compounds of
`real` and `imag` integers with MATLAB_class, as MATLAB stores complex integers; h5py's
automatic chunks). Variables, each ROWS-by-3 (MATLAB's size): a int8, b int16, c uint32,
d int64 and e uint64 (values within 2^53), x a real double; with `beyond`, f int64 whose last
element's real part is 2^53 + 1 (no double holds it).

The Level-5 layout (the MAT-File Format, "Numeric array"): miMATRIX of array flags (class,
complex flag 0x0800), dimensions, name, the real part then the imaginary part, each in the
class's own type, column-major.
"""

import struct
import sys
import zlib

import numpy as np

CLASSES = {
    "int8": (8, 1, "i1"),
    "int16": (10, 3, "i2"),
    "uint32": (13, 6, "u4"),
    "int64": (14, 12, "i8"),
    "uint64": (15, 13, "u8"),
}


def values(rows):
    """The variables: name -> (class, real, imag), MATLAB-shaped (ROWS, 3)."""
    rng = np.random.default_rng(17)
    shape = (rows, 3)
    out = {}
    for name, cls in zip("abcde", CLASSES):
        dt = np.dtype(CLASSES[cls][2])
        info = np.iinfo(dt)
        lo, hi = max(info.min, -(2**53)), min(info.max, 2**53)
        re = rng.integers(lo, hi, shape, dtype=dt, endpoint=True)
        im = rng.integers(lo, hi, shape, dtype=dt, endpoint=True)
        out[name] = (cls, re, im)
    return out


def beyond(rows):
    re = np.arange(rows * 3, dtype="i8").reshape(rows, 3)
    re[-1, -1] = 2**53 + 1
    return ("int64", re, -re // 2)


def level5(path, fmt, variables, x):
    e = ">" if fmt == "v5be" else "<"

    def el(ty, data):
        return struct.pack(e + "2I", ty, len(data)) + data + bytes(-len(data) % 8)

    def matrix(flags, dims, name, *parts):
        body = el(6, struct.pack(e + "2I", flags, 0)) + el(5, struct.pack(e + "2i", *dims))
        body += el(1, name)
        return el(14, body + b"".join(el(ty, p) for ty, p in parts))

    def part(a):
        return a.astype(a.dtype.newbyteorder(e)).tobytes(order="F")

    head = b"MATLAB 5.0 MAT-file, Platform: GLNXA64, Created on: sciio test"
    marker = b"\x01\x00MI" if e == ">" else b"\x00\x01IM"
    with open(path, "wb") as f:
        f.write(head.ljust(116) + bytes(8) + marker)
        items = [(n, c, re, im) for n, (c, re, im) in variables.items()]
        for name, cls, re, im in items:
            mx, mi, _ = CLASSES[cls]
            m = matrix(mx | 0x800, re.shape, name.encode(), (mi, part(re)), (mi, part(im)))
            f.write(compressed(m, e) if fmt == "v7" else m)
        m = matrix(6, x.shape, b"x", (9, part(x)))
        f.write(compressed(m, e) if fmt == "v7" else m)


def compressed(element, e):
    data = zlib.compress(element, 6)
    return struct.pack(e + "2I", 15, len(data)) + data


def mat73(path, variables, x):
    import h5py

    with h5py.File(path, "w", userblock_size=512) as f:
        for name, (cls, re, im) in variables.items():
            dt = re.dtype
            pair = np.dtype([("real", dt), ("imag", dt)])
            a = np.empty(re.shape, dtype=pair)
            a["real"], a["imag"] = re, im
            # MATLAB's column-major array is HDF5's transpose.
            d = f.create_dataset(name, data=a.T, chunks=True)
            d.attrs["MATLAB_class"] = np.bytes_(cls)
        d = f.create_dataset("x", data=x.T)
        d.attrs["MATLAB_class"] = np.bytes_("double")
    head = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: sciio test HDF5 schema 1.00 ."
    with open(path, "r+b") as f:
        f.write(head.ljust(116) + bytes(8) + b"\x00\x02" + b"IM")


def main():
    path, fmt, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
    variables = values(rows)
    if "beyond" in sys.argv[4:]:
        variables["f"] = beyond(rows)
    x = np.linspace(-1, 1, rows * 3).reshape(rows, 3)
    if fmt == "v73":
        mat73(path, variables, x)
    elif fmt in ("v5", "v5be", "v7"):
        level5(path, fmt, variables, x)
    else:
        raise SystemExit(f"unknown format {fmt}")


if __name__ == "__main__":
    main()
