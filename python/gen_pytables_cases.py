"""Writes, with PyTables itself, one HDF5 file per filter configuration holding every node kind
(Table, Array, CArray, EArray, VLArray, groups, soft and external links) and every column type
PyTables supports, plus attributes of many kinds. sciio's tests read these files and compare
each leaf with what PyTables reads (python/check_pytables_read.py).

usage: gen_pytables_cases.py OUTDIR   -> prints the names of the files written, one per line
Also writes OUTDIR/attrs.json: the attributes of /attrs as PyTables reads them back.
       gen_pytables_cases.py --h5py OUT.h5 -> writes, with h5py, what PyTables cannot (compounds
with vlen members, object/region references) and prints the attributes' targets as JSON.
       gen_pytables_cases.py --bitshuffle OUT.h5 -> the standalone Bitshuffle filter (hdf5plugin)
"""
import json
import os
import sys
import warnings

import numpy as np
import tables as tb

warnings.simplefilter("ignore")

FILTERS = {
    "none": tb.Filters(0),
    "zlib_shuffle": tb.Filters(5, "zlib", shuffle=True),
    "zlib_fletcher32": tb.Filters(1, "zlib", shuffle=False, fletcher32=True),
    "fletcher32_only": tb.Filters(0, fletcher32=True),
    "bzip2": tb.Filters(5, "bzip2", shuffle=True),
    "blosc_blosclz": tb.Filters(5, "blosc:blosclz"),
    "blosc_lz4": tb.Filters(5, "blosc:lz4"),
    "blosc_lz4hc": tb.Filters(5, "blosc:lz4hc"),
    "blosc_zlib": tb.Filters(5, "blosc:zlib"),
    "blosc_zstd": tb.Filters(5, "blosc:zstd"),
    "blosc_bitshuffle": tb.Filters(5, "blosc:lz4", shuffle=False, bitshuffle=True),
    "blosc2": tb.Filters(5, "blosc2"),
    "blosc2_blosclz": tb.Filters(5, "blosc2:blosclz"),
    "blosc2_lz4": tb.Filters(5, "blosc2:lz4"),
    "blosc2_lz4hc": tb.Filters(5, "blosc2:lz4hc"),
    "blosc2_zlib": tb.Filters(5, "blosc2:zlib"),
    "blosc2_zstd": tb.Filters(5, "blosc2:zstd"),
    "blosc2_bitshuffle": tb.Filters(5, "blosc2:zstd", shuffle=False, bitshuffle=True),
}


class Inner(tb.IsDescription):
    x = tb.Int16Col(pos=0)
    s = tb.StringCol(3, pos=1)

    class deeper(tb.IsDescription):
        _v_pos = 2
        d = tb.Float64Col(pos=0)


COLORS = tb.Enum(["red", "green", "blue"])


def row_description():
    return {
        "b": tb.BoolCol(pos=0),
        "i1": tb.Int8Col(pos=1),
        "i2": tb.Int16Col(pos=2),
        "i4": tb.Int32Col(pos=3),
        "i8": tb.Int64Col(pos=4),
        "u1": tb.UInt8Col(pos=5),
        "u2": tb.UInt16Col(pos=6),
        "u4": tb.UInt32Col(pos=7),
        "u8": tb.UInt64Col(pos=8),
        "f2": tb.Float16Col(pos=9),
        "f4": tb.Float32Col(pos=10),
        "f8": tb.Float64Col(pos=11),
        "f16": tb.Float128Col(pos=12) if hasattr(tb, "Float128Col") else tb.Float64Col(pos=12),
        "c8": tb.ComplexCol(8, pos=13),
        "c16": tb.ComplexCol(16, pos=14),
        "s": tb.StringCol(8, pos=15),
        "t32": tb.Time32Col(pos=16),
        "t64": tb.Time64Col(pos=17),
        "e": tb.EnumCol(COLORS, "red", base="uint8", pos=18),
        "arr": tb.Float32Col(shape=(2, 3), pos=19),
        "nested": Inner(),
        "be": tb.Int32Col(pos=21),
    }


def fill_table(table, n):
    rng = np.random.default_rng(7)
    rows = np.zeros(n, dtype=table.dtype)
    rows["b"] = rng.integers(0, 2, n).astype(bool)
    for name, dt in [("i1", np.int8), ("i2", np.int16), ("i4", np.int32), ("i8", np.int64),
                     ("u1", np.uint8), ("u2", np.uint16), ("u4", np.uint32), ("u8", np.uint64)]:
        info = np.iinfo(dt)
        rows[name] = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    for name in ["f2", "f4", "f8", "f16"]:
        rows[name] = rng.standard_normal(n) * 1000
    rows["c8"] = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    rows["c16"] = rng.standard_normal(n) - 1j * rng.standard_normal(n)
    rows["s"] = [f"row{i}".encode()[:8] for i in range(n)]
    rows["t32"] = 1_700_000_000 + np.arange(n)
    # Times before 1970 with fractions: PyTables packs negative seconds and microseconds.
    rows["t64"] = 1_700_000_000.25 + np.arange(n) * 0.5
    rows["t64"][::3] = -1_000_000.375 - np.arange(0, n, 3) * 86_400.125
    rows["e"] = np.arange(n) % 3
    rows["arr"] = rng.standard_normal((n, 2, 3))
    rows["nested"]["x"] = np.arange(n) - 50
    rows["nested"]["s"] = [b"ab", b"xyz", b""] * (n // 3) + [b"q"] * (n % 3)
    rows["nested"]["deeper"]["d"] = np.arange(n) / 7
    rows["be"] = np.arange(n) * -3
    table.append(rows)
    table.flush()


def write_file(path, filters):
    with tb.open_file(path, "w", title="sciio cases") as f:
        f.root._v_attrs.user_int = 42
        # Table (chunked, filtered), with a small chunk so reads span many chunks.
        t = f.create_table("/", "table", row_description(), "all column types", filters=filters,
                           chunkshape=(64,), expectedrows=1000)
        fill_table(t, 1000)
        # Arrays: contiguous (Array), 0-d, empty, big-endian, string.
        f.create_array("/", "arr_f8", np.linspace(0, 1, 24).reshape(2, 3, 4), "array")
        f.create_array("/", "arr_0d", np.int32(7))
        f.create_array("/", "arr_empty", np.zeros((0, 3), dtype=np.float32))
        f.create_array("/", "arr_be", np.arange(10, dtype=">i4"))
        f.create_array("/", "arr_str", np.array([b"a", b"bc", b"def"]))
        f.create_array("/", "arr_bool", np.array([True, False, True]))
        f.create_array("/", "arr_c16", np.array([1 + 2j, 3 - 4j]))
        # CArray and EArray (chunked, filtered).
        g = f.create_group("/", "chunked", "chunked arrays", filters=filters)
        c = f.create_carray(g, "carray", tb.Float64Atom(), shape=(50, 7), chunkshape=(8, 3))
        c[:] = np.arange(350, dtype=np.float64).reshape(50, 7)
        e = f.create_earray(g, "earray", tb.Int16Atom(), shape=(0, 5), chunkshape=(16, 5))
        for i in range(10):
            e.append(np.full((13, 5), i, dtype=np.int16) + np.arange(5, dtype=np.int16))
        e2 = f.create_earray(g, "earray_ext1", tb.Float32Atom(), shape=(4, 0), chunkshape=(4, 32))
        e2.append(np.arange(400, dtype=np.float32).reshape(4, 100))
        f.create_earray(g, "earray_empty", tb.Float64Atom(), shape=(0,))
        et = f.create_earray(g, "earray_time64", tb.Time64Atom(), shape=(0,))
        et.append(np.array([1.5, 1_700_000_000.75, -1.5, -0.25, -1e-6, -2_000_000_000.999999]))
        # VLArrays: libhdf5 refuses Fletcher-32 on variable-length data and PyTables refuses
        # Blosc there, so they keep only zlib/bzip2.
        if filters.complib in ("zlib", "bzip2"):
            filters = tb.Filters(filters.complevel, filters.complib, shuffle=filters.shuffle)
        else:
            filters = tb.Filters(0)
        v = f.create_vlarray("/", "vl_int", tb.Int32Atom(), "ints", filters=filters)
        for i in range(20):
            v.append(np.arange(i, dtype=np.int32))
        vs = f.create_vlarray("/", "vl_str", tb.VLStringAtom(), filters=filters)
        for s in [b"", b"hello", b"\x00bin\xff"]:
            vs.append(s)
        vu = f.create_vlarray("/", "vl_unicode", tb.VLUnicodeAtom(), filters=filters)
        for s in ["", "héllo", "日本語 ✓"]:
            vu.append(s)
        va = f.create_vlarray("/", "vl_arr", tb.Float64Atom(shape=(2,)), filters=filters)
        va.append(np.ones((3, 2)))
        va.append(np.zeros((0, 2)))
        vo = f.create_vlarray("/", "vl_object", tb.ObjectAtom())
        vo.append({"pickled": True})
        # Links.
        f.create_soft_link("/", "soft", "/chunked/carray")
        f.create_soft_link("/", "dangling", "/nowhere")
        f.create_external_link("/", "external", "other.h5:/x")
        # Attributes of many kinds.
        a = f.create_group("/", "attrs")._v_attrs
        a.i = np.int64(-5)
        a.u8 = np.uint8(200)
        a.f = 2.5
        a.s = "text"
        a.b = b"bytes"
        a.arr = np.arange(6, dtype=">f4").reshape(2, 3)
        a.boolean = np.bool_(True)
        a.obj = {"a": [1, 2]}  # pickled by PyTables
        a.cplx = np.complex128(1 - 2j)


def write_h5py_file(path):
    """What PyTables cannot write: compounds with variable-length members (strings, sequences,
    nested), object and region references in datasets, compounds and attributes. Returns the
    attributes' reference targets as h5py resolves them (`f[ref].name`)."""
    import h5py

    s_utf8, s_ascii = h5py.string_dtype("utf-8"), h5py.string_dtype("ascii")
    inner = np.dtype([("k", "<i2"), ("words", s_utf8, (2,))])
    dt = np.dtype([("id", "<i4"), ("name", s_utf8), ("tag", s_ascii),
                   # Little-endian: h5py 3.16 reads a big-endian vlen member unswapped.
                   ("seq", h5py.vlen_dtype(np.dtype("<f8"))), ("nested", inner),
                   ("fixed", "<f4", (3,))])
    rows = np.zeros(5, dtype=dt)
    for i in range(5):
        rows[i] = (i - 2, "naïve ✓" * i, b"t%d" % i, np.arange(i, dtype="<f8") / 3,
                   (i * 7, ["", "wörd" * i]), np.arange(3) + i)
    with h5py.File(path, "w") as f:
        f.create_dataset("vlen_compound", data=rows, chunks=(2,), compression="gzip")
        f.create_dataset("vlen_compound_0d", data=rows[3])
        data = f.create_dataset("data", data=np.arange(20.0).reshape(4, 5))
        g = f.create_group("group/sub")
        refs = f.create_dataset("refs", (5,), dtype=h5py.ref_dtype)
        refs[0], refs[1], refs[2], refs[3] = data.ref, g.ref, f.ref, f["group"].ref
        f.create_dataset("refs_2d", data=np.array([[data.ref, g.ref], [g.ref, data.ref]],
                                                    dtype=h5py.ref_dtype))
        reg = f.create_dataset("regrefs", (4,), dtype=h5py.regionref_dtype)
        reg[0] = data.regionref[1:3, 0:2]
        reg[1] = data.regionref[0, ::2]
        reg[2] = data.regionref[...]
        with_ref = np.dtype([("target", h5py.ref_dtype), ("w", "<f8")])
        f.create_dataset("compound_ref", data=np.array([(data.ref, 1.5), (g.ref, -2.0)],
                                                         dtype=with_ref))
        f.attrs["link"] = data.ref
        f.attrs.create("links", np.array([g.ref, data.ref], dtype=h5py.ref_dtype))
        data.attrs["region"] = data.regionref[2:4, 1:5]
        meta_dt = np.dtype([("k", "<i4"), ("name", s_utf8), ("seq", h5py.vlen_dtype(np.dtype("<i2")))])
        meta = np.array([(1, "α", np.array([1, -2], "<i2")), (-7, "beta", np.array([], "<i2"))],
                        dtype=meta_dt)
        data.attrs["meta"] = meta
        back = data.attrs["meta"]
        expect = {
            "meta": [[int(r["k"]), r["name"].decode() if isinstance(r["name"], bytes) else r["name"],
                      [int(x) for x in r["seq"]]] for r in back],
            "link": f[f.attrs["link"]].name,
            "links": [f[r].name for r in f.attrs["links"]],
            "region": f[data.attrs["region"]].name,
        }
    return expect


def write_bitshuffle_file(path):
    """The standalone Bitshuffle filter (32008) as h5py + hdf5plugin write it: no compression,
    LZ4 and zstd; element sizes 1 to 16 (compound rows); chunks whose element count is not a
    multiple of 8 or of the block size, so every tail path is used."""
    import h5py
    import hdf5plugin

    rng = np.random.default_rng(11)
    row = np.dtype([("a", "<i8"), ("b", "<f4"), ("c", "S4")])
    table = np.zeros(1003, dtype=row)
    table["a"] = rng.integers(-1 << 60, 1 << 60, 1003)
    table["b"] = rng.standard_normal(1003)
    table["c"] = [b"r%d" % (i % 97) for i in range(1003)]
    data = {
        "u1": rng.integers(0, 255, 5000, dtype=np.uint8),
        "i2": (np.arange(3001) * 7 - 9000).astype(np.int16),
        "f4_2d": rng.standard_normal((301, 13)).astype(np.float32),
        "f8": np.cumsum(rng.standard_normal(20011)),
        "be_i4": np.arange(777, dtype=">i4") * -3,
        "rows": table,
    }
    with h5py.File(path, "w") as f:
        for cname in ("none", "lz4", "zstd"):
            for nelems in (0, 256):
                g = f.create_group(f"{cname}_{nelems}")
                for name, arr in data.items():
                    chunks = (min(999, len(arr)),) if arr.ndim == 1 else (37, 13)
                    g.create_dataset(name, data=arr, chunks=chunks,
                                     **hdf5plugin.Bitshuffle(nelems=nelems, cname=cname))


def main():
    if sys.argv[1] == "--bitshuffle":  # gen_pytables_cases.py --bitshuffle OUT.h5
        write_bitshuffle_file(sys.argv[2])
        return
    if sys.argv[1] == "--h5py":  # gen_pytables_cases.py --h5py OUT.h5 -> JSON of attr targets
        print(json.dumps(write_h5py_file(sys.argv[2])))
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, filters in FILTERS.items():
        path = os.path.join(out, f"case_{name}.h5")
        write_file(path, filters)
        print(path)
    with tb.open_file(os.path.join(out, "case_none.h5")) as f:
        attrs = f.root.attrs._v_attrs
        expect = {
            "i": int(attrs.i), "u8": int(attrs.u8), "f": float(attrs.f), "s": str(attrs.s),
            "b": attrs.b.decode(), "boolean": bool(attrs.boolean),
            # PyTables 3.11 returns big-endian float attributes with their bytes unswapped, so
            # the expected values come from what was written.
            "arr": [float(x) for x in np.arange(6)],
            "obj": attrs.obj,
            "links": {
                "soft": ["soft", f.root.soft.target],
                "dangling": ["soft", f.root.dangling.target],
                "external": ["external", f.root.external.target],
            },
        }
    for name in FILTERS:
        with tb.open_file(os.path.join(out, f"case_{name}.h5")) as f:
            fl = f.root.chunked._v_filters
            expect.setdefault("group_filters", {})[name] = {
                "complevel": int(fl.complevel),
                "complib": fl.complib if fl.complevel else None,
                "shuffle": bool(fl.shuffle), "bitshuffle": bool(fl.bitshuffle),
                "fletcher32": bool(fl.fletcher32),
            }
    with open(os.path.join(out, "attrs.json"), "w") as fh:
        json.dump(expect, fh)


if __name__ == "__main__":
    main()
