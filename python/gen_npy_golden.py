"""Writes golden .npy files with numpy (np.save) plus manifest.json describing their values.

Usage: python gen_npy_golden.py OUT_DIR
       python gen_npy_golden.py --describe FILE.npy...   (prints the manifest entries of files
       loaded with np.load, as JSON: how tests check that numpy reads what sciio writes)

One file per dtype numpy's descr can express: every scalar kind in both byte orders, every
datetime64/timedelta64 unit with multiples and the generic unit, S/U/V, long doubles, structured
dtypes (explicit offsets, aligned with padding, titles, nesting, subarray fields), C and Fortran
order, 0-d and empty arrays, header versions 1.0, 2.0 (a header over 64 KiB) and 3.0 (a
non-Latin-1 field name), and object arrays (which sciio must refuse).

The manifest lists, per file, the header fields and every element in C order, encoded so that
comparisons are exact: floats as the hex of their little-endian IEEE-754 float64 bytes, long
doubles as their 10 significant bytes plus the float64 rounding, strings and bytes as such.
Everything is deterministic, so re-running the script reproduces the files byte for byte.
"""

import json
import os
import struct
import sys
import warnings

import numpy as np

MANIFEST = []


def f64hex(x):
    return struct.pack("<d", float(x)).hex()


def longdouble(x):
    raw = np.array(x, dtype="<f16").tobytes()[:10]
    return {"bytes": raw.hex(), "f64": f64hex(x)}


def encode(dt, v):
    """One element as plain JSON, exactly."""
    if dt.names is not None:
        return [encode(dt.fields[n][0], v[n]) for n in dt.names]
    if dt.subdtype is not None:
        base, _ = dt.subdtype
        return [encode(base, e) for e in np.asarray(v).reshape(-1)]
    k = dt.kind
    if k == "b":
        return bool(v)
    if k in "iu":
        return int(v)
    if k == "f":
        return longdouble(v) if dt.itemsize > 8 else f64hex(v)
    if k == "c":
        if dt.itemsize > 16:
            return [longdouble(np.real(v)), longdouble(np.imag(v))]
        return [f64hex(np.real(v)), f64hex(np.imag(v))]
    if k == "S":
        return bytes(v).hex()
    if k == "U":
        return str(v)
    if k == "V":
        return bytes(v).hex()
    if k in "Mm":
        return int(np.array([v], dtype=dt).astype(dt.newbyteorder("=")).view(np.int64)[0])
    raise TypeError(dt)


def describe(name, a, major):
    entry = {
        "name": name + ".npy",
        "dtype": str(a.dtype.descr if a.dtype.names is not None else a.dtype.str),
        "shape": list(a.shape),
        "fortran_order": bool(a.flags.f_contiguous and not a.flags.c_contiguous),
        "version": major,
        "refused": bool(a.dtype.hasobject),
    }
    if not a.dtype.hasobject:
        entry["values"] = [encode(a.dtype, v) for v in a.reshape(-1, order="C")]
    return entry


def zero_long_double_padding(a, dt=None, raw=None, offset=0):
    """x86 long doubles use 10 of their 12/16 bytes; numpy leaves the rest uninitialised, so
    zero it to keep the golden files reproducible."""
    if dt is None:
        if a.dtype.hasobject:
            return
        dt, raw = a.dtype, a.reshape(-1, order="A").view(np.uint8).reshape(a.size, a.dtype.itemsize) if a.size else None
        if raw is None:
            return
    if dt.names is not None:
        for n in dt.names:
            fdt, foff = dt.fields[n][:2]
            zero_long_double_padding(a, fdt, raw, offset + foff)
    elif dt.subdtype is not None:
        base, shape = dt.subdtype
        for i in range(int(np.prod(shape))):
            zero_long_double_padding(a, base, raw, offset + i * base.itemsize)
    elif dt.kind in "fc" and dt.itemsize in (12, 16, 24, 32):
        part = dt.itemsize // (2 if dt.kind == "c" else 1)
        for start in range(offset, offset + dt.itemsize, part):
            pad = range(start, start + part - 10) if dt.byteorder == ">" else range(start + 10, start + part)
            for i in pad:
                raw[:, i] = 0


def save(name, a):
    zero_long_double_padding(a)
    path = os.path.join(OUT, name + ".npy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.save(path, a, allow_pickle=a.dtype.hasobject)
    with open(path, "rb") as f:
        major = f.read(8)[6]
    MANIFEST.append(describe(name, a, major))


if len(sys.argv) > 1 and sys.argv[1] == "--describe":
    out = []
    for path in sys.argv[2:]:
        with open(path, "rb") as f:
            major = f.read(8)[6]
        a = np.load(path, allow_pickle=False, max_header_size=1 << 20)
        out.append(describe(os.path.splitext(os.path.basename(path))[0], a, major))
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.exit(0)

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(OUT, exist_ok=True)


rng = np.random.default_rng(20240601)

# --- plain scalars, both byte orders -------------------------------------------------------
save("b1", np.array([True, False, True, True]))
for code in ["i1", "u1"]:
    info = np.iinfo(code)
    save(code, np.array([info.min, -1 if code[0] == "i" else 1, 0, info.max], dtype=code))
for code in ["i2", "i4", "i8", "u2", "u4", "u8"]:
    info = np.iinfo(code)
    vals = [info.min, 0, 1, info.max, 12345 % (int(info.max) + 1)]
    for order in "<>":
        save(f"{code}_{'le' if order == '<' else 'be'}", np.array(vals, dtype=order + code))
specials = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-3, 65504.0 / 3]
for code in ["f2", "f4", "f8"]:
    for order in "<>":
        save(f"{code}_{'le' if order == '<' else 'be'}", np.array(specials, dtype=order + code))
ld = np.array([1, 3, -7, 0.1, np.inf, -0.0], dtype=np.longdouble)
ld[1] = np.longdouble(1) / np.longdouble(3)  # needs the extra precision
for order in "<>":
    save(f"f16_{'le' if order == '<' else 'be'}", ld.astype(order + "f16"))
cvals = [1 + 2j, -0.5 - 0j, complex(np.inf, np.nan), 1e-3j]
for code in ["c8", "c16", "c32"]:
    for order in "<>":
        a = np.array(cvals, dtype=order + code)
        if code == "c32":
            a[0] = np.clongdouble(1) / np.clongdouble(3) + 1j * (np.longdouble(2) / 3)
        save(f"{code}_{'le' if order == '<' else 'be'}", a)
save("S5", np.array([b"abc", b"", b"hello", b"a\x00b"], dtype="S5"))
save("S0", np.zeros(3, dtype="S0"))
for order in "<>":
    save(
        f"U4_{'le' if order == '<' else 'be'}",
        np.array(["abc", "", "\u00e9\u03c0\U0001f600x", "a'\""], dtype=order + "U4"),
    )
save("V3", np.array([b"\x01\x02\x03", b"\x00\x00\x00"], dtype="V3"))

# --- datetimes: every unit, multiples, generic, both orders --------------------------------
units = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"]
for kind in "Mm":
    for unit in units:
        save(f"{kind}8_{unit}", np.array([0, 1, -5, 1000, "NaT"], dtype=f"{kind}8[{unit}]"))
    save(f"{kind}8_25s", np.array([0, 3, "NaT"], dtype=f"{kind}8[25s]"))
    save(f"{kind}8_7D_be", np.array([0, 3, "NaT"], dtype=f">{kind}8[7D]"))
    save(f"{kind}8_ns_be", np.array([1, -2, "NaT"], dtype=f">{kind}8[ns]"))
save("M8_generic", np.array(["NaT", "NaT"], dtype="M8"))
save("m8_generic", np.array([1, 2, -3], dtype="m8"))

# --- structured ----------------------------------------------------------------------------
packed = np.dtype([("x", "<f8"), ("n", ">i4"), ("s", "S3"), ("u", "<U2"), ("b", "?")])
a = np.zeros(3, dtype=packed)
a["x"] = [1.5, -2, np.nan]
a["n"] = [1, -2, 2**31 - 1]
a["s"] = [b"ab", b"", b"xyz"]
a["u"] = ["\u00e9", "ok", ""]
a["b"] = [True, False, True]
save("rec_packed", a)

aligned = np.dtype([("a", "u1"), ("b", "<f8"), ("c", "<i2")], align=True)
a = np.zeros(2, dtype=aligned)
a["a"], a["b"], a["c"] = [1, 2], [0.5, -1], [7, -7]
save("rec_aligned", a)

offsets = np.dtype({"names": ["p", "q"], "formats": ["<i4", ">u2"], "offsets": [4, 12], "itemsize": 20})
a = np.zeros(2, dtype=offsets)
a["p"], a["q"] = [-1, 5], [65535, 2]
save("rec_offsets", a)

titled = np.dtype({"names": ["a", "b"], "formats": ["<i4", "<f4"], "titles": ["Alpha title", None]})
a = np.zeros(2, dtype=titled)
a["a"], a["b"] = [3, 4], [0.25, 8]
save("rec_titles", a)

inner = np.dtype([("lo", "<i2"), ("hi", ">i2")])
nested = np.dtype([("id", "<u4"), ("pt", [("x", "<f4"), ("y", "<f4"), ("tag", inner)]), ("t", "<M8[s]")])
a = np.zeros(2, dtype=nested)
a["id"] = [1, 2]
a["pt"]["x"], a["pt"]["y"] = [1, 2], [-1, -2]
a["pt"]["tag"]["lo"], a["pt"]["tag"]["hi"] = [5, 6], [-5, -6]
a["t"] = ["2024-01-01T00:00:01", "NaT"]
save("rec_nested", a)

sub = np.dtype([("f", "<f4", (2, 3)), ("v", ">i2", (4,)), ("m", [("a", "u1"), ("b", "<c8")], (2,)), ("z", "<i8")])
a = np.zeros(2, dtype=sub)
a["f"] = np.arange(12, dtype="f4").reshape(2, 2, 3)
a["v"] = np.arange(8).reshape(2, 4) - 3
a["m"]["a"] = [[1, 2], [3, 4]]
a["m"]["b"] = [[1j, 2], [3, -4j]]
a["z"] = [-9, 9]
save("rec_subarray", a)

odd = np.dtype([("it's", "<i2"), ('say "x"', "<i2"), ("back\\slash", "<i2"), ("caf\u00e9", "<i2")])
save("rec_odd_names", np.array([(1, 2, 3, 4)], dtype=odd))

with_time = np.dtype([("when", ">M8[ms]"), ("dt", "<m8[25s]"), ("c", "<c32"), ("g", ">f16")])
a = np.zeros(2, dtype=with_time)
a["when"] = ["1970-01-01T00:00:00.001", "NaT"]
a["dt"] = [4, -4]
a["c"] = [np.clongdouble(1) / 3, -2j]
a["g"] = [np.longdouble(2) / 3, -1]
save("rec_time_long", a)

save("rec_0d", np.array((1.0, 2), dtype=[("a", "<f8"), ("b", "<i4")]))
r2 = np.zeros((2, 3), dtype=packed)
r2["x"] = np.arange(6).reshape(2, 3)
r2["u"] = [["a", "b", "c"], ["d", "e", "f"]]
save("rec_2d_f", np.asfortranarray(r2))

# --- orders, 0-d, empty --------------------------------------------------------------------
base = np.arange(24, dtype="<f8").reshape(2, 3, 4) / 7
save("f8_3d_c", base)
save("f8_3d_f", np.asfortranarray(base))
save("i4_be_2d_f", np.asfortranarray(np.arange(6, dtype=">i4").reshape(2, 3)))
save("u1_2d_f_one_row", np.asfortranarray(np.arange(3, dtype="u1").reshape(1, 3)))
save("U3_2d_f", np.asfortranarray(np.array([["a", "bc"], ["def", ""]], dtype="<U3")))
save("f8_0d", np.array(3.25))
save("M8_0d", np.array("2001-02-03", dtype="M8[D]"))
save("f8_empty_0", np.zeros((0,), dtype="<f8"))
save("f8_empty_0x3", np.zeros((0, 3), dtype="<f8"))
save("f8_empty_3x0_f", np.asfortranarray(np.zeros((3, 0), dtype="<f8")))
save("i2_empty_2x0x2", np.zeros((2, 0, 2), dtype=">i2"))
save("f8_big_dim", np.zeros((1, 1, 1, 1, 1, 2), dtype="<f8"))

# --- header versions ------------------------------------------------------------------------
many = np.dtype([(f"field_{i:05d}", "<i1") for i in range(3000)])
save("v2_many_fields", np.zeros(2, dtype=many))
save("v3_unicode_name", np.array([(1.5, 2)], dtype=[("\u03c0", "<f8"), ("\u65e5\u672c", "<i2")]))

# --- objects (must be refused) -------------------------------------------------------------
save("object", np.array([1, "two", None], dtype=object))
save("rec_object", np.array([(1, "x")], dtype=[("a", "<i4"), ("o", "O")]))

with open(os.path.join(OUT, "manifest.json"), "w", encoding="utf-8") as f:
    json.dump(MANIFEST, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(f"wrote {len(MANIFEST)} golden files to {OUT}")
