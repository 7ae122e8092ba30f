"""Large sources for the scale test (crates/sciio-cli/tests/scale_rss.rs) and `./dev bench scale`,
written slice by slice so that this script's own memory stays small whatever the size.

    scale_sources.py KIND PATH BYTES

KIND (BYTES is the size of the data, not of the file):
  earray     PyTables file, /x: EArray float64 (N, 64), uncompressed
  npy        .npy float64 (N, 64)
  npy3       .npy float64 (N, 64, 8), C order (a 3-d array)
  npy_f      .npy float64 (N, 64), Fortran order
  npy_wide   .npy float64 (N, 2Mi): rows of 16 MiB
  npy3_wide  .npy float64 (N, 2048, 1024), C order: rows of two axes, 16 MiB each
  h5_wide    PyTables file, /x: CArray float64 (2, M, 1024), zlib 1 + shuffle: two rows, each
             half the data (32 MiB at 64 MiB), so a reader of whole rows grows with the size
  npy_rec    .npy structured (i <i8, x <f8, y <f4, s S12) (what a PyTables Table of it holds)
  npy_rec2d  as npy_rec, shape (N, 64) in C order (MATLAB's order is another: staged into MAT)
  npz        .npz (stored) with one member `x`: float64 (N, 64)
  table      PyTables file, /t: Table (i int64, x float64, y float32, s S12), uncompressed
  table_sub  PyTables file, /t: Table (i int64, v float64 (8,), s S12) (a subarray field)
  table_group  PyTables file as PyTables users lay them out: /run/t the Table of `table`, and
             beside it /run/n, a small float64 array (64,), and /run/cal/gain, a float64 scalar
  parquet    .parquet (pyarrow, snappy): i int64, x float64, y float32, s string
  parquet_num  .parquet (pyarrow, snappy): i int64, x float64, y float32, t timestamp[ns]
             (numbers only: a pandas `fixed` key of it holds no pickled object; 28 bytes a row)
  store      pandas HDFStore, key /df in `table` format: i int64, x float64, y float32 (index
             0..N), appended a slice at a time
  store_fixed  as store, in `fixed` format (pandas writes a fixed key whole: this script then
             holds the frame)
  store_fixed_multi  as store_fixed over a MultiIndex (k // 1000, k % 1000: its codes a row
             each, its levels the distinct values)
  store_series  pandas HDFStore, key /s: a `fixed` Series named v, float64 k * 0.5 over an
             int64 index named k (0..N; 16 bytes a row; written whole by pandas, as store_fixed)
  mat73      v7.3 MAT file (h5py, as hdf5storage lays it out), x: a MATLAB N-by-64 double matrix
             (HDF5 dataset (64, N), h5py's automatic chunks)
  mat73_be   as mat73, x big-endian
  mat73_logical  v7.3 MAT file, x: a MATLAB N-by-64 logical matrix (HDF5 uint8 (64, N), class
             logical, as MATLAB and hdf5storage store it)
  mat73_complex  as mat73, x complex (a compound of real and imaginary doubles, as MATLAB)
  mat73_tall v7.3 MAT file, x: a MATLAB 4Mi-by-M double matrix (HDF5 (M, 4Mi), chunks (2, 65536):
             two columns thick, each column 32 MiB)
  mat73_wide v7.3 MAT file, x: a MATLAB 8Mi-by-M double matrix (HDF5 (M, 8Mi), chunks (2, 65536):
             two columns thick, each column 64 MiB, so a chunk row is 128 MiB)
  mat73_2row v7.3 MAT file, x: a MATLAB 2-by-N double matrix (HDF5 (N, 2), h5py's automatic
             chunks): two C-order rows, each half the data
  mat73_9row v7.3 MAT file, x: a MATLAB 9-by-N double matrix (HDF5 (N, 9)): nine C-order
             rows, each a ninth of the data
  mat73_2row_3d v7.3 MAT file, x: a MATLAB 2-by-64-by-N double array (HDF5 (N, 64, 2)):
             two C-order rows of shape (64, N), each half the data
  mat73_3d   v7.3 MAT file, x: a MATLAB N-by-64-by-8 double array (HDF5 dataset (8, 64, N))
  mat7_complex  v7 MAT file (one miCOMPRESSED variable, as scipy.io.savemat writes it), x: a
             complex MATLAB N-by-64 double matrix of few distinct values (real part (k % 1000)
             / 2, imaginary part -(k % 999) / 3 at column-major index k), so that the file is
             small
  mat7_logical  v7 MAT file (one miCOMPRESSED variable, as MATLAB and scipy.io store a logical:
             class uint8 with the logical flag, data miUINT8), x: a MATLAB N-by-64 logical matrix,
             byte (k % 7) * 40 at column-major index k (bytes other than 0 and 1, which MATLAB
             reads as true)
  mat7_random  v7 MAT file (one miCOMPRESSED variable), x: a MATLAB N-by-64 double matrix of
             random numbers in [0, 1) (seeded): barely compressible, so the file is nearly as large
             as the data (95% of it)
  mat4_random  MAT v4 file (as scipy.io.savemat(format='4') lays it out: a 20-byte header, the
             name, the column-major data), x: a MATLAB N-by-64 double matrix of random numbers in
             [0, 1) (seeded)
Prints the number of rows written.
"""
import sys

import numpy as np

SLICE_ROWS = 1 << 18

REC = np.dtype([("i", "<i8"), ("x", "<f8"), ("y", "<f4"), ("s", "S12")])
SUB = np.dtype([("i", "<i8"), ("v", "<f8", (8,)), ("s", "S12")])


def records(dtype, start, stop):
    n = stop - start
    a = np.zeros(n, dtype=dtype)
    idx = np.arange(start, stop, dtype=np.int64)
    a["i"] = idx
    if "x" in dtype.names:
        a["x"] = idx * 0.5
        a["y"] = (idx % 1000).astype(np.float32)
    if "v" in dtype.names:
        a["v"] = idx[:, None] * 0.25 + np.arange(8)
    a["s"] = np.char.add(b"row", (idx % 100000).astype("S9"))
    return a


def block(start, stop):
    return (np.arange(start * 64, stop * 64, dtype=np.float64) * 0.5).reshape(-1, 64)


def block3(start, stop):
    return (np.arange(start * 512, stop * 512, dtype=np.float64) * 0.5).reshape(-1, 64, 8)


WIDE = 1 << 21


def text_block(start, stop, units):
    """Rows start..stop of `units` lowercase ASCII codes each (uint8), the same at any size."""
    first = start * units
    return (97 + (np.arange(first, first + (stop - start) * units, dtype=np.int64) * 7919)
            % 26).astype(np.uint8)


def slices(n):
    for start in range(0, n, SLICE_ROWS):
        yield start, min(n, start + SLICE_ROWS)


def write_mat73(path, n, dtype="<f8"):
    """MATLAB's x = block(0, n) (N-by-64): column-major, so HDF5 holds its transpose; with
    dtype "u1", the logical x = mod(block(0, n), 3) == 0.5 (class logical, stored in bytes)."""
    import h5py
    logical = dtype == "u1"
    with h5py.File(path, "w", userblock_size=512) as f:
        x = f.create_dataset("x", shape=(64, n), dtype=dtype, chunks=True)
        x.attrs["MATLAB_class"] = np.bytes_("logical" if logical else "double")
        for a, b in slices(n):
            values = block(a, b)
            x[:, a:b] = ((values % 3) == 0.5).T if logical else values.T
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: scale_sources.py HDF5 schema 1.00 ."
    with open(path, "r+b") as f:
        f.write(text.ljust(116) + bytes(8) + b"\x00\x02" + b"IM")


def write_mat73_complex(path, n):
    """MATLAB's complex x = block(0, n) - 1i * block(0, n) / 3 (N-by-64), stored as MATLAB
    does: a compound of real and imaginary doubles."""
    import h5py
    pair = np.dtype([("real", "<f8"), ("imag", "<f8")])
    with h5py.File(path, "w", userblock_size=512) as f:
        x = f.create_dataset("x", shape=(64, n), dtype=pair, chunks=True)
        x.attrs["MATLAB_class"] = np.bytes_("double")
        for a, b in slices(n):
            part = np.empty((64, b - a), dtype=pair)
            part["real"] = block(a, b).T
            part["imag"] = -block(a, b).T / 3
            x[:, a:b] = part
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: scale_sources.py HDF5 schema 1.00 ."
    with open(path, "r+b") as f:
        f.write(text.ljust(116) + bytes(8) + b"\x00\x02" + b"IM")


def write_mat7_complex(path, n):
    """See mat7_complex above: the element written and deflated a slice at a time."""
    import struct
    import zlib
    part = n * 64 * 8
    head = struct.pack("<2I", 6, 8) + struct.pack("<2I", 6 | 0x800, 0)  # double, complex
    head += struct.pack("<2I", 5, 8) + struct.pack("<2i", n, 64)  # dimensions
    head += struct.pack("<I", 1 << 16 | 1) + b"x\0\0\0"  # name: a small miINT8 element
    size = len(head) + 2 * (8 + part)
    z = zlib.compressobj(6)
    text = b"MATLAB 5.0 MAT-file, Platform: GLNXA64, Created on: scale_sources.py"
    with open(path, "wb") as f:
        f.write(text.ljust(116) + bytes(8) + b"\x00\x01IM")
        f.write(struct.pack("<2I", 15, 0))
        packed = f.write(z.compress(struct.pack("<2I", 14, size) + head))
        for sign, period, scale in ((1, 1000, 2), (-1, 999, 3)):
            packed += f.write(z.compress(struct.pack("<2I", 9, part)))
            for a, b in slices(n * 64):
                k = np.arange(a, b, dtype=np.int64)
                packed += f.write(z.compress((sign * (k % period) / scale).tobytes()))
        packed += f.write(z.flush())
        f.seek(128 + 4)
        f.write(struct.pack("<I", packed))


def write_mat7_logical(path, n):
    """See mat7_logical above: the element written and deflated a slice at a time."""
    import struct
    import zlib
    part = n * 64
    head = struct.pack("<2I", 6, 8) + struct.pack("<2I", 9 | 0x200, 0)  # uint8, logical
    head += struct.pack("<2I", 5, 8) + struct.pack("<2i", n, 64)  # dimensions
    head += struct.pack("<I", 1 << 16 | 1) + b"x\0\0\0"  # name: a small miINT8 element
    padded = (part + 7) // 8 * 8
    size = len(head) + 8 + padded
    z = zlib.compressobj(6)
    text = b"MATLAB 5.0 MAT-file, Platform: GLNXA64, Created on: scale_sources.py"
    with open(path, "wb") as f:
        f.write(text.ljust(116) + bytes(8) + b"\x00\x01IM")
        f.write(struct.pack("<2I", 15, 0))
        packed = f.write(z.compress(struct.pack("<2I", 14, size) + head))
        packed += f.write(z.compress(struct.pack("<2I", 2, part)))  # miUINT8
        for a, b in slices(part):
            k = np.arange(a, b, dtype=np.int64)
            packed += f.write(z.compress(((k % 7) * 40).astype(np.uint8).tobytes()))
        packed += f.write(z.compress(bytes(padded - part)))
        packed += f.write(z.flush())
        f.seek(128 + 4)
        f.write(struct.pack("<I", packed))


def write_mat7_random(path, n):
    """See mat7_random above: the element written and deflated a slice at a time."""
    import struct
    import zlib
    part = n * 64 * 8
    head = struct.pack("<2I", 6, 8) + struct.pack("<2I", 6, 0)  # double, real
    head += struct.pack("<2I", 5, 8) + struct.pack("<2i", n, 64)  # dimensions
    head += struct.pack("<I", 1 << 16 | 1) + b"x\0\0\0"  # name: a small miINT8 element
    size = len(head) + 8 + part
    z = zlib.compressobj(1)
    rng = np.random.default_rng(17)
    text = b"MATLAB 5.0 MAT-file, Platform: GLNXA64, Created on: scale_sources.py"
    with open(path, "wb") as f:
        f.write(text.ljust(116) + bytes(8) + b"\x00\x01IM")
        f.write(struct.pack("<2I", 15, 0))
        packed = f.write(z.compress(struct.pack("<2I", 14, size) + head))
        packed += f.write(z.compress(struct.pack("<2I", 9, part)))
        for a, b in slices(n * 64):
            packed += f.write(z.compress(rng.random(b - a).tobytes()))
        packed += f.write(z.flush())
        f.seek(128 + 4)
        f.write(struct.pack("<I", packed))


def write_mat4_random(path, n):
    """See mat4_random above: the data written a slice at a time."""
    import struct
    rng = np.random.default_rng(17)
    with open(path, "wb") as f:
        # MOPT 0 (little-endian IEEE, double, full matrix), rows, columns, real, name length.
        f.write(struct.pack("<5i", 0, n, 64, 0, 2) + b"x\0")
        for a, b in slices(n * 64):
            f.write(rng.random(b - a).tobytes())


def write_mat73_3d(path, n):
    """MATLAB's x = block3(0, n) (N-by-64-by-8): HDF5 holds it with its axes reversed."""
    import h5py
    with h5py.File(path, "w", userblock_size=512) as f:
        x = f.create_dataset("x", shape=(8, 64, n), dtype="<f8", chunks=True)
        x.attrs["MATLAB_class"] = np.bytes_("double")
        for a, b in slices(n):
            x[:, :, a:b] = block3(a, b).T
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: scale_sources.py HDF5 schema 1.00 ."
    with open(path, "r+b") as f:
        f.write(text.ljust(116) + bytes(8) + b"\x00\x02" + b"IM")


TALL_ROWS = 1 << 22


def write_mat73_tall(path, m, rows=TALL_ROWS):
    """MATLAB's x (rows-by-m): column j holds j * rows + arange(rows), times 0.5."""
    import h5py
    with h5py.File(path, "w", userblock_size=512) as f:
        x = f.create_dataset("x", shape=(m, rows), dtype="<f8", chunks=(2, 65536))
        x.attrs["MATLAB_class"] = np.bytes_("double")
        for j in range(m):
            for a in range(0, rows, TALL_ROWS):
                b = min(rows, a + TALL_ROWS)
                x[j, a:b] = (np.arange(a, b, dtype=np.float64) + j * rows) * 0.5
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: scale_sources.py HDF5 schema 1.00 ."
    with open(path, "r+b") as f:
        f.write(text.ljust(116) + bytes(8) + b"\x00\x02" + b"IM")


def write_mat73_2row(path, n):
    """MATLAB's x (2-by-n): row r holds (r * n + arange(n)) * 0.5."""
    import h5py
    with h5py.File(path, "w", userblock_size=512) as f:
        x = f.create_dataset("x", shape=(n, 2), dtype="<f8", chunks=True)
        x.attrs["MATLAB_class"] = np.bytes_("double")
        for a, b in slices(n):
            x[a:b, :] = np.stack([np.arange(a, b) + r * n for r in range(2)], axis=1) * 0.5
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: scale_sources.py HDF5 schema 1.00 ."
    with open(path, "r+b") as f:
        f.write(text.ljust(116) + bytes(8) + b"\x00\x02" + b"IM")


def write_mat73_rows(path, rows, n):
    """MATLAB's x (rows-by-n): row r holds (r * n + arange(n)) * 0.5."""
    import h5py
    with h5py.File(path, "w", userblock_size=512) as f:
        x = f.create_dataset("x", shape=(n, rows), dtype="<f8", chunks=True)
        x.attrs["MATLAB_class"] = np.bytes_("double")
        for a, b in slices(n):
            x[a:b, :] = np.stack([np.arange(a, b) + r * n for r in range(rows)], axis=1) * 0.5
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: scale_sources.py HDF5 schema 1.00 ."
    with open(path, "r+b") as f:
        f.write(text.ljust(116) + bytes(8) + b"\x00\x02" + b"IM")


def write_mat73_2row_3d(path, n):
    """MATLAB's x (2-by-64-by-n): x[r, i, j] = ((r * 64 + i) * n + j) * 0.5 (C-order arange)."""
    import h5py
    with h5py.File(path, "w", userblock_size=512) as f:
        x = f.create_dataset("x", shape=(n, 64, 2), dtype="<f8", chunks=True)
        x.attrs["MATLAB_class"] = np.bytes_("double")
        lead = (np.arange(2)[:, None] * 64 + np.arange(64)[None, :]) * n
        for a, b in slices(n):
            x[a:b, :, :] = ((lead[:, :, None] + np.arange(a, b)[None, None, :]) * 0.5).T
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: scale_sources.py HDF5 schema 1.00 ."
    with open(path, "r+b") as f:
        f.write(text.ljust(116) + bytes(8) + b"\x00\x02" + b"IM")


def main():
    kind, path, nbytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if kind in ("earray", "npy", "npy_f", "npz", "mat73", "mat73_be", "mat7_random",
                "mat4_random"):
        n = max(1, nbytes // (64 * 8))
    elif kind in ("mat73_logical", "mat7_logical"):
        n = max(1, nbytes // 64)
    elif kind in ("mat73_complex", "mat7_complex"):
        n = max(1, nbytes // (64 * 16))
    elif kind in ("npy3", "mat73_3d"):
        n = max(1, nbytes // (512 * 8))
    elif kind in ("npy_wide", "npy3_wide"):
        n = max(2, nbytes // (WIDE * 8))
    elif kind == "h5_wide":
        n = max(1, nbytes // (2 * 1024 * 8))
    elif kind in ("npy_rec", "table", "table_group", "parquet"):
        n = max(1, nbytes // REC.itemsize)
    elif kind == "npy_rec2d":
        n = max(1, nbytes // (64 * REC.itemsize))
    elif kind == "table_sub":
        n = max(1, nbytes // SUB.itemsize)
    elif kind in ("store", "store_fixed", "store_fixed_multi", "parquet_num"):
        n = max(1, nbytes // 28)
    elif kind == "store_series":
        n = max(1, nbytes // 16)
    elif kind == "mat73_tall":
        n = max(2, nbytes // (TALL_ROWS * 8))
    elif kind == "mat73_2row":
        n = max(1, nbytes // (2 * 8))
    elif kind == "mat73_2row_3d":
        n = max(1, nbytes // (2 * 64 * 8))
    elif kind == "mat73_9row":
        n = max(1, nbytes // (9 * 8))
    elif kind == "mat73_wide":
        n = max(2, nbytes // (2 * TALL_ROWS * 8))
    elif kind in ("text_npy", "text_h5"):
        n = max(1, nbytes // (4 * 16))
    elif kind == "text_npy_f":
        n = max(1, nbytes // (16 * 8 * 16))
    else:
        raise SystemExit(f"unknown kind {kind}")
    if kind == "earray":
        import tables
        with tables.open_file(path, "w") as f:
            x = f.create_earray("/", "x", tables.Float64Atom(), shape=(0, 64), expectedrows=n)
            for a, b in slices(n):
                x.append(block(a, b))
    elif kind == "h5_wide":
        import tables
        with tables.open_file(path, "w") as f:
            x = f.create_carray("/", "x", tables.Float64Atom(), shape=(2, n, 1024),
                                filters=tables.Filters(complevel=1, complib="zlib", shuffle=True))
            for r in range(2):
                for a, b in slices(n):
                    first = (r * n + a) * 1024
                    x[r, a:b] = (np.arange(first, first + (b - a) * 1024, dtype=np.float64)
                                 * 0.5).reshape(-1, 1024)
    elif kind in ("text_npy", "text_npy_f", "text_h5"):
        # Text: `S16` (n, 4) in C order (`text_npy`; `text_h5` as a PyTables StringAtom
        # EArray `/g/t`, inside a group), or `<U4` (n, 16, 8) in Fortran order: every string
        # full width, lowercase ASCII (text_block).
        if kind == "text_h5":
            import tables
            with tables.open_file(path, "w") as f:
                t = f.create_earray("/g", "t", tables.StringAtom(16), shape=(0, 4),
                                    expectedrows=n, createparents=True)
                for a, b in slices(n):
                    t.append(text_block(a, b, 64).view("S16").reshape(-1, 4))
        elif kind == "text_npy":
            out = np.lib.format.open_memmap(path, mode="w+", dtype="S16", shape=(n, 4))
            for a, b in slices(n):
                out[a:b] = text_block(a, b, 64).view("S16").reshape(-1, 4)
            out.flush()
            del out
        else:
            out = np.lib.format.open_memmap(path, mode="w+", dtype="<U4", shape=(n, 16, 8),
                                            fortran_order=True)
            for a, b in slices(n):
                codes = text_block(a, b, 16 * 8 * 4).astype("<u4")
                out[a:b] = codes.view("<U4").reshape(-1, 16, 8)
            out.flush()
            del out
    elif kind == "npy":
        out = np.lib.format.open_memmap(path, mode="w+", dtype="<f8", shape=(n, 64))
        for a, b in slices(n):
            out[a:b] = block(a, b)
        out.flush()
        del out
    elif kind in ("npy3", "npy_f", "npy_wide", "npy3_wide"):
        shape, make, step = {
            "npy3": ((n, 64, 8), block3, SLICE_ROWS),
            "npy_f": ((n, 64), block, SLICE_ROWS),
            "npy_wide": ((n, WIDE), lambda a, b: (np.arange(a * WIDE, b * WIDE, dtype=np.float64)
                                                  * 0.5).reshape(-1, WIDE), 1),
            "npy3_wide": ((n, 2048, WIDE // 2048),
                          lambda a, b: (np.arange(a * WIDE, b * WIDE, dtype=np.float64)
                                        * 0.5).reshape(-1, 2048, WIDE // 2048), 1),
        }[kind]
        out = np.lib.format.open_memmap(path, mode="w+", dtype="<f8", shape=shape,
                                        fortran_order=kind == "npy_f")
        for a in range(0, n, step):
            b = min(n, a + step)
            out[a:b] = make(a, b)
        out.flush()
        del out
    elif kind == "npy_rec":
        out = np.lib.format.open_memmap(path, mode="w+", dtype=REC, shape=(n,))
        for a, b in slices(n):
            out[a:b] = records(REC, a, b)
        out.flush()
        del out
    elif kind == "npy_rec2d":
        out = np.lib.format.open_memmap(path, mode="w+", dtype=REC, shape=(n, 64))
        flat = out.reshape(-1)
        for a, b in slices(n * 64):
            flat[a:b] = records(REC, a, b)
        out.flush()
        del out, flat
    elif kind == "npz":
        import zipfile
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
            with z.open("x.npy", "w", force_zip64=True) as m:
                np.lib.format.write_array_header_1_0(
                    m, {"descr": "<f8", "fortran_order": False, "shape": (n, 64)})
                for a, b in slices(n):
                    m.write(block(a, b).tobytes())
    elif kind in ("table", "table_sub"):
        import tables
        dtype = REC if kind == "table" else SUB
        with tables.open_file(path, "w") as f:
            t = f.create_table("/", "t", dtype, expectedrows=n)
            for a, b in slices(n):
                t.append(records(dtype, a, b))
    elif kind == "table_group":
        import tables
        with tables.open_file(path, "w") as f:
            run = f.create_group("/", "run")
            t = f.create_table(run, "t", REC, expectedrows=n)
            for a, b in slices(n):
                t.append(records(REC, a, b))
            f.create_array(run, "n", np.arange(64.0))
            cal = f.create_group(run, "cal")
            f.create_array(cal, "gain", np.float64(2.5))
    elif kind == "mat73":
        write_mat73(path, n)
    elif kind == "mat73_be":
        write_mat73(path, n, ">f8")
    elif kind == "mat73_logical":
        write_mat73(path, n, "u1")
    elif kind == "mat73_complex":
        write_mat73_complex(path, n)
    elif kind == "mat7_complex":
        write_mat7_complex(path, n)
    elif kind == "mat7_random":
        write_mat7_random(path, n)
    elif kind == "mat4_random":
        write_mat4_random(path, n)
    elif kind == "mat7_logical":
        write_mat7_logical(path, n)
    elif kind == "mat73_tall":
        write_mat73_tall(path, n)
    elif kind == "mat73_wide":
        write_mat73_tall(path, n, 2 * TALL_ROWS)
    elif kind == "mat73_3d":
        write_mat73_3d(path, n)
    elif kind == "mat73_2row":
        write_mat73_2row(path, n)
    elif kind == "mat73_2row_3d":
        write_mat73_2row_3d(path, n)
    elif kind == "mat73_9row":
        write_mat73_rows(path, 9, n)
    elif kind == "parquet":
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
        writer = None
        for a, b in slices(n):
            # The columns of records(REC, a, b), built column by column (the text by Arrow:
            # pa.array of a numpy U12 array is 15x slower; the values are equal).
            idx = np.arange(a, b, dtype=np.int64)
            text = pc.binary_join_element_wise("row", pc.cast(pa.array(idx % 100000), pa.string()), "")
            t = pa.table({"i": idx, "x": idx * 0.5, "y": (idx % 1000).astype(np.float32), "s": text})
            if writer is None:
                writer = pq.ParquetWriter(path, t.schema)
            writer.write_table(t)
        writer.close()
    elif kind == "parquet_num":
        import pyarrow as pa
        import pyarrow.parquet as pq
        writer = None
        for a, b in slices(n):
            idx = np.arange(a, b, dtype=np.int64)
            t = pa.table({"i": idx, "x": idx * 0.5, "y": (idx % 1000).astype(np.float32),
                          "t": pa.array(idx * 1_000_000_000 + 1_600_000_000 * 10**9,
                                        pa.timestamp("ns"))})
            if writer is None:
                writer = pq.ParquetWriter(path, t.schema)
            writer.write_table(t)
        writer.close()
    elif kind in ("store", "store_fixed"):
        write_store(path, n, kind == "store")
    elif kind == "store_fixed_multi":
        import pandas as pd
        frame = store_frame(0, n)
        k = frame.index.to_numpy()
        frame.index = pd.MultiIndex.from_arrays([k // 1000, k % 1000], names=["hi", "lo"])
        frame.to_hdf(path, key="df", format="fixed", mode="w")
    elif kind == "store_series":
        import pandas as pd
        idx = np.arange(n, dtype=np.int64)
        pd.Series(idx * 0.5, index=pd.Index(idx, name="k"), name="v").to_hdf(
            path, key="s", format="fixed", mode="w")
    print(n)


def store_frame(a, b):
    import pandas as pd
    idx = np.arange(a, b, dtype=np.int64)
    frame = {"i": idx, "x": idx * 0.5, "y": (idx % 1000).astype(np.float32)}
    return pd.DataFrame(frame, index=idx)


def write_store(path, n, table):
    import pandas as pd
    if not table:
        store_frame(0, n).to_hdf(path, key="df", format="fixed", mode="w")
        return
    with pd.HDFStore(path, mode="w") as store:
        for a, b in slices(n):
            store.append("df", store_frame(a, b), format="table", index=False)


if __name__ == "__main__":
    main()
