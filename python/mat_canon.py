"""Canonical JSON form of MATLAB values, shared by sciio-mat's tests and the Python tools.

The Rust tests turn a sciio_mat::MatValue into the same form (tests/common/mod.rs), so a
value read by sciio and a value made/read by hdf5storage, mat73 or pymatreader compare as JSON.

Form (data always in MATLAB's column-major order, shapes in MATLAB's order, at least 2-D):
  numeric/logical {"class", "shape", "re": [...], "im": [...] (complex only)}
  char            {"class": "char", "shape", "codes": [...]}
  cell            {"class": "cell", "shape", "items": [...]}
  struct          {"class": "struct", "shape", "fields": [...], "elements": [[...], ...]}
  sparse          {"class": "sparse", "kind", "shape", "ir", "jc", "re", "im"?}
  opaque          {"class": <name>, "opaque": true}
Non-finite floats are the strings "nan", "inf", "-inf".
"""

import math

import numpy as np

CLASSES = {
    "float64": "double", "float32": "single", "int8": "int8", "int16": "int16", "int32": "int32",
    "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "complex128": "double", "complex64": "single", "bool": "logical",
}


def num(x):
    if isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def shape2d(shape):
    shape = list(shape)
    if len(shape) == 0:
        return [1, 1]
    if len(shape) == 1:
        return [1, shape[0]]
    return shape


def char(text, shape=None):
    codes = [ord(c) for c in text]
    if shape is None:
        shape = [1, len(codes)]
    return {"class": "char", "shape": shape, "codes": codes}


def array(a):
    """A numpy array as hdf5storage maps it (numpy shape made at least 2-D = MATLAB shape)."""
    a = np.asarray(a)
    shape = shape2d(a.shape)
    a2 = a.reshape(shape)
    if a.dtype.names:
        fields = list(a.dtype.names)
        elements = [[canon(e[f]) for f in fields] for e in a2.ravel(order="F")]
        return {"class": "struct", "shape": shape, "fields": fields, "elements": elements}
    if a.dtype == object:
        return {"class": "cell", "shape": shape, "items": [canon(e) for e in a2.ravel(order="F")]}
    if a.dtype.kind in "US":
        rows = [s.decode("ascii") if isinstance(s, bytes) else str(s) for s in a.ravel()]
        if a.ndim == 0:
            return char(rows[0])
        if a.size == 0:
            return {"class": "char", "shape": shape, "codes": []}
        # hdf5storage returns a MATLAB char matrix as a column of its rows.
        m, n = len(rows), len(rows[0])
        if any(len(r) != n for r in rows):
            raise ValueError("ragged string arrays are not canonicalised")
        return {"class": "char", "shape": [m, n],
                "codes": [ord(rows[r][c]) for c in range(n) for r in range(m)]}
    flat = a2.ravel(order="F")
    out = {"class": CLASSES[a.dtype.name], "shape": shape}
    if a.dtype.kind == "c":
        out["re"] = [num(x) for x in flat.real]
        out["im"] = [num(x) for x in flat.imag]
    else:
        out["re"] = [num(x) for x in flat]
    return out


def canon(v):
    """A Python value as hdf5storage stores it with matlab_compatible=True."""
    if v is None:
        # hdf5storage stores None as np.float64([]), made 2-D: 1x0.
        return {"class": "double", "shape": [1, 0], "re": []}
    if isinstance(v, (str, np.str_)):
        return char(str(v))
    if isinstance(v, (bytes, np.bytes_, bytearray)):
        return char(bytes(v).decode("ascii"))
    if isinstance(v, bool):
        return array(np.bool_(v))
    if isinstance(v, int):
        return array(np.int64(v))
    if isinstance(v, float):
        return array(np.float64(v))
    if isinstance(v, complex):
        return array(np.complex128(v))
    if isinstance(v, dict):
        fields = list(v.keys())
        return {"class": "struct", "shape": [1, 1], "fields": fields,
                "elements": [[canon(v[f]) for f in fields]]}
    if isinstance(v, (list, tuple)):
        a = np.empty(len(v), dtype=object)
        for i, e in enumerate(v):
            a[i] = e
        return array(a)
    if isinstance(v, (np.generic, np.ndarray)):
        return array(v)
    if hasattr(v, "tocsc"):
        m = v.tocsc()
        m.sort_indices()
        kind = "logical" if m.dtype == bool else ("complex" if m.dtype.kind == "c" else "double")
        out = {"class": "sparse", "kind": kind, "shape": list(m.shape),
               "ir": [int(x) for x in m.indices], "jc": [int(x) for x in m.indptr]}
        if kind == "complex":
            out["re"] = [num(x) for x in m.data.real]
            out["im"] = [num(x) for x in m.data.imag]
        else:
            out["re"] = [num(x) for x in m.data]
        return out
    raise TypeError(f"no canonical form for {type(v)}")


def loose(c):
    """A canonical value with shapes dropped and singletons unwrapped, for tools (mat73,
    pymatreader) that squeeze MATLAB's dimensions and return lists for cells."""
    cls = c.get("class")
    if cls == "char":
        return "".join(chr(x) for x in c["codes"])
    if cls == "cell":
        return [loose(x) for x in c["items"]]
    if cls == "struct":
        els = [{f: loose(v) for f, v in zip(c["fields"], e)} for e in c["elements"]]
        return els[0] if len(els) == 1 else els
    if cls == "sparse":
        return {"ir": c["ir"], "jc": c["jc"], "re": c["re"], "im": c.get("im")}
    if c.get("opaque"):
        return {"opaque": cls}
    vals = c["re"] if "im" not in c else [[r, i] for r, i in zip(c["re"], c["im"])]
    return vals[0] if len(vals) == 1 else vals
