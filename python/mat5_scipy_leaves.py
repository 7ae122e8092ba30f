"""Dumps every numeric, logical and char leaf scipy.io.loadmat sees in MAT files, as JSON.

Usage: mat5_scipy_leaves.py FILE... -> {"file": {"ok": true, "leaves": {path: leaf}} or
{"ok": false, "error": "..."}}. Paths: /var, then /i for the i-th cell item or struct element
(column-major order, as MATLAB stores them) and /field for a field. A leaf is {"shape": dims,
"values": [...]} with values column-major as "i:<int>", "f:<float64 bits>" or
"c:<re bits>,<im bits>" (float32 widened exactly); chars are their code points; sparse
matrices are dense. Loaded with mat_dtype=True (MATLAB's class, not the storage type) and
chars_as_strings=False (char arrays keep MATLAB's dimensions); complex leaves from a load
without mat_dtype (which would drop their imaginary parts).
"""
import json
import sys
import warnings

import numpy as np
import scipy.io
import scipy.sparse
from scipy.io.matlab import MatlabOpaque

# scipy's own keys. `__function_workspace__` is MATLAB's subsystem (object metadata) which
# sciio, as for v7.3's #subsystem#, uses to decode objects instead of showing it.
SKIP = {"__header__", "__version__", "__globals__", "__function_workspace__"}


def bits(x):
    return str(int(np.array(x, dtype=np.float64).view(np.uint64)))


def values(a):
    flat = np.asarray(a).flatten(order="F")
    k = flat.dtype.kind
    if k in "biu":
        return ["i:%d" % int(v) for v in flat]
    if k == "f":
        return ["f:" + bits(v) for v in flat]
    if k == "c":
        return ["c:%s,%s" % (bits(v.real), bits(v.imag)) for v in flat]
    if k == "U":
        return ["i:%d" % (ord(v) if v else 0) for v in flat]
    raise TypeError(flat.dtype)


def walk(v, path, out):
    if scipy.sparse.issparse(v):
        dense = v.toarray()
        if dense.dtype.kind in "biu":
            # scipy keeps a sparse matrix's storage type even with mat_dtype (and reads some
            # logical ones as uint8): sparse values are compared as doubles.
            dense = dense.astype(np.float64)
        out[path] = {"shape": list(v.shape), "values": values(dense)}
        return
    if isinstance(v, MatlabOpaque):
        return  # an MCOS reference: sciio decodes the object from the subsystem
    if v is None:
        return  # scipy's element of a struct without fields: no leaf
    if not isinstance(v, np.ndarray):
        raise TypeError("%s: a %s" % (path, type(v).__name__))
    a = v
    if a.dtype.names:
        for i, el in enumerate(a.flatten(order="F")):
            for name in a.dtype.names:
                walk(el[name], "%s/%d/%s" % (path, i, name), out)
    elif a.dtype.kind == "O":
        for i, el in enumerate(a.flatten(order="F")):
            walk(el, "%s/%d" % (path, i), out)
    else:
        out[path] = {"shape": list(a.shape), "values": values(a)}


def main():
    warnings.simplefilter("ignore")
    result = {}
    for f in sys.argv[1:]:
        try:
            d = scipy.io.loadmat(f, mat_dtype=True, chars_as_strings=False)
        except Exception as e:  # noqa: BLE001 - any refusal is recorded
            result[f] = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
            continue
        # mat_dtype=True casts complex values to the (real) class dtype, dropping the
        # imaginary parts: complex leaves come from a second load without it.
        stored = scipy.io.loadmat(f, chars_as_strings=False)
        leaves, complex_leaves = {}, {}
        for k, v in d.items():
            if k not in SKIP:
                walk(v, "/" + k, leaves)
                walk(stored[k], "/" + k, complex_leaves)
        for path, leaf in complex_leaves.items():
            if any(x.startswith("c:") for x in leaf["values"]):
                leaves[path] = leaf
        result[f] = {"ok": True, "leaves": leaves}
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
