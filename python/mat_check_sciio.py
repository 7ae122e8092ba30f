"""Checks a MAT file written by sciio with the reference tools: hdf5storage.loadmat, mat73.loadmat
and pymatreader.read_mat must return the values sciio meant (EXPECTED.json: {var: canonical},
see mat_canon.py), and h5py must see MATLAB's attributes, the userblock header and the earliest
file format. Exits non-zero listing every mismatch.

usage: mat_check_sciio.py FILE.mat EXPECTED.json [--skip-hdf5storage VAR,...]
"""

import json
import math
import os
import sys

import h5py
import hdf5storage
import mat73
import numpy as np
import pymatreader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mat_canon import canon, loose, num  # noqa: E402

problems = []


def same(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return a == b or math.isclose(a, b, rel_tol=1e-6, abs_tol=0.0)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def flatten_singletons(x):
    """[[x]] -> x, and empties to [], on both sides: mat73/pymatreader squeeze dimensions."""
    if isinstance(x, list):
        x = [flatten_singletons(e) for e in x]
        if len(x) == 1:
            return x[0]
        return x
    if isinstance(x, dict):
        return {k: flatten_singletons(v) for k, v in x.items()}
    if x is None or (isinstance(x, str) and x == ""):
        return []
    return x


def loose_tool(v):
    """A mat73/pymatreader value in the loose form of mat_canon.loose."""
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return {k: loose_tool(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [loose_tool(x) for x in v]
    if v is None:
        return None
    if hasattr(v, "tocsc"):
        m = v.tocsc() if not hasattr(v, "data") or v.data.dtype.names is None else v
        m.sort_indices()
        out = {"ir": [int(x) for x in m.indices], "jc": [int(x) for x in m.indptr]}
        if m.data.dtype.names:
            # mat73/pymatreader keep MATLAB's real/imag compound as the sparse data type.
            out["re"], out["im"] = [num(x) for x in m.data["real"]], [num(x) for x in m.data["imag"]]
        elif m.dtype.kind == "c":
            out["re"], out["im"] = [num(x) for x in m.data.real], [num(x) for x in m.data.imag]
        else:
            out["re"], out["im"] = [num(x) for x in m.data], None
        return out
    a = np.asarray(v)
    if a.dtype == object and a.ndim == 0:
        raise TypeError(f"unexpected {type(v)}")
    if a.dtype == object:
        if a.ndim == 2 and min(a.shape) > 1:
            return [[loose_tool(x) for x in row] for row in a]
        return [loose_tool(x) for x in a.ravel(order="F")]
    if a.dtype.kind in "US":
        return str(a)
    flat = a.ravel(order="F")
    if a.dtype.kind == "c":
        vals = [[num(x.real), num(x.imag)] for x in flat]
    else:
        vals = [num(x) for x in flat]
    return vals[0] if len(vals) == 1 else vals


def loose_tool_form(c, tool):
    """mat_canon.loose, shaped the way each tool returns values: mat73 gives 2-D cells as lists
    of rows, pymatreader as flat column-major lists and char matrices as lists of rows; both
    give struct arrays as a dict of per-field lists."""
    cls = c.get("class")
    if cls == "cell" and len(c["shape"]) == 2 and min(c["shape"]) > 1 and tool == "mat73":
        m, n = c["shape"]
        return [[loose_tool_form(c["items"][r + k * m], tool) for k in range(n)] for r in range(m)]
    if cls == "cell":
        return [loose_tool_form(x, tool) for x in c["items"]]
    if cls == "char" and tool == "pymatreader" and len(c["shape"]) == 2 and c["shape"][0] > 1:
        m, n = c["shape"]
        return ["".join(chr(c["codes"][r + k * m]) for k in range(n)) for r in range(m)]
    if cls == "struct":
        els = [{f: loose_tool_form(v, tool) for f, v in zip(c["fields"], e)} for e in c["elements"]]
        if len(els) == 1:
            return els[0]
        return {f: [e[f] for e in els] for f in c["fields"]}
    return loose(c)


# Values a tool cannot read whatever the writer does (checked with hdf5storage-written files
# too): they are reported as present but not compared.
TOOL_LIMITS = {
    ("pymatreader", "cell_of_cells"): "pymatreader leaves a cell nested in a cell in a cell as an h5py Reference",
}


def check(tool, name, got, want):
    if not same(got, want):
        problems.append(f"{tool}: {name}:\n   got  {json.dumps(got)[:600]}\n   want {json.dumps(want)[:600]}")


def main():
    path, exp_path = sys.argv[1], sys.argv[2]
    skip = set()
    if len(sys.argv) > 4 and sys.argv[3] == "--skip-hdf5storage":
        skip = set(sys.argv[4].split(","))
    expected = json.load(open(exp_path))

    # h5py: header, userblock, earliest format, MATLAB attributes on every variable.
    head = open(path, "rb").read(128)
    if not head.startswith(b"MATLAB 7.3 MAT-file, Platform: ") or head[116:] != b"\x00" * 8 + b"\x00\x02IM":
        problems.append(f"h5py: bad header {head!r}")
    if b"HDF5 schema 1.00 ." not in head[:116]:
        problems.append(f"h5py: header text lacks the schema marker: {head[:116]!r}")
    with h5py.File(path, "r") as f:
        if f.userblock_size != 512:
            problems.append(f"h5py: userblock of {f.userblock_size} bytes")
        if f.id.get_create_plist().get_version()[0] != 0:
            problems.append(f"h5py: superblock version {f.id.get_create_plist().get_version()}")
        for name in expected:
            if "MATLAB_class" not in f[name].attrs:
                problems.append(f"h5py: {name} has no MATLAB_class")

        def compressed(n, o):
            if isinstance(o, h5py.Dataset) and o.nbytes >= 16384 and o.dtype != h5py.ref_dtype:
                if o.compression != "gzip" or not o.shuffle:
                    problems.append(f"h5py: {n} of {o.nbytes} bytes is not deflate+shuffle compressed")
        f.visititems(compressed)

    # hdf5storage: exact canonical values.
    data = hdf5storage.loadmat(path, variable_names=[n for n in expected if n not in skip])
    for name, want in expected.items():
        if name in skip:
            continue
        if name not in data:
            problems.append(f"hdf5storage: {name} missing")
            continue
        check("hdf5storage", name, canon(data[name]), want)

    # mat73 and pymatreader squeeze dimensions: compare loosely.
    for tool, load in (("mat73", mat73.loadmat), ("pymatreader", pymatreader.read_mat)):
        data = load(path)
        for name, want in expected.items():
            if name not in data:
                problems.append(f"{tool}: {name} missing")
                continue
            if (tool, name) in TOOL_LIMITS:
                continue
            try:
                got = flatten_singletons(loose_tool(data[name]))
            except (TypeError, ValueError) as e:
                problems.append(f"{tool}: {name}: cannot interpret {data[name]!r:.300}: {e}")
                continue
            if (tool, name) in TOOL_LIMITS:
                continue
            check(tool, name, got, flatten_singletons(loose_tool_form(want, tool)))

    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)
    print("ok", len(expected))


if __name__ == "__main__":
    main()
