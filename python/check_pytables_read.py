"""Compares what sciio read from an HDF5 file (a manifest.json + .bin files written by the Rust
tests) with what PyTables reads -- or h5py, for nodes PyTables cannot read.

usage: check_pytables_read.py FILE.h5 MANIFEST.json
Prints one line per leaf: OK / MISMATCH / NOREF (no reference tool could read it), and exits 0;
the Rust test fails on any MISMATCH line.
"""
import json
import os
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")


def to_dtype(d):
    """The JSON descr written by sciio -> numpy dtype."""
    if isinstance(d, str):
        return np.dtype(d)
    if isinstance(d, list):  # [base, [dims]]
        return np.dtype((to_dtype(d[0]), tuple(d[1])))
    return np.dtype({
        "names": d["names"],
        "formats": [to_dtype(f) for f in d["formats"]],
        "offsets": d["offsets"],
        "itemsize": d["itemsize"],
    })


def same(ours, ref, where):
    """Value equality, field by field; returns a reason string or None."""
    ours = np.asarray(ours)
    ref = np.asarray(ref)
    if ours.shape != ref.shape:
        return f"{where}: shape {ours.shape} != {ref.shape}"
    if ref.dtype.names:
        if not ours.dtype.names:
            return f"{where}: not structured ({ours.dtype} vs {ref.dtype})"
        # Same fields; their order may differ (sciio keeps HDF5's member order, PyTables sorts
        # some tables' columns by offset).
        if sorted(ours.dtype.names) != sorted(ref.dtype.names):
            return f"{where}: fields {ours.dtype.names} != {ref.dtype.names}"
        for n in ref.dtype.names:
            r = same(ours[n], ref[n], f"{where}/{n}")
            if r:
                return r
        return None
    if ref.dtype.kind == "O":
        return f"{where}: reference is an object array"
    if ref.dtype.kind in "SUV" or ours.dtype.kind in "SV":
        ok = ours.tobytes() == ref.astype(ours.dtype).tobytes() if ref.dtype.kind != "U" else False
        if not ok and ref.dtype.kind in "SV" and ours.dtype.kind in "SV":
            ok = [bytes(x) for x in ours.ravel()] == [bytes(x) for x in ref.ravel()]
        return None if ok else f"{where}: bytes differ ({ours.dtype} vs {ref.dtype})"
    if ours.dtype.kind == "c" or ref.dtype.kind == "c":
        ok = np.array_equal(ours.astype(np.complex256), ref.astype(np.complex256), equal_nan=True)
    elif ours.dtype.kind == "f" or ref.dtype.kind == "f":
        ok = np.array_equal(ours.astype(np.longdouble), ref.astype(np.longdouble), equal_nan=True)
    else:
        ok = np.array_equal(ours, ref)
    return None if ok else f"{where}: values differ ({ours.dtype} vs {ref.dtype}): {ours.ravel()[:4]} vs {ref.ravel()[:4]}"


def read_tables(h5file, path):
    import tables
    with tables.open_file(h5file, "r") as f:
        node = f.get_node(path)
        return node.read(), type(node).__name__


def read_h5py(h5file, path):
    import h5py
    import hdf5plugin  # noqa: F401 - registers the Bitshuffle, LZ4, zstd... filters with h5py
    with h5py.File(h5file, "r") as f:
        ds = f[path]
        return ds[()], "h5py"


def reference(h5file, path):
    """The node's values as PyTables reads them, else as h5py does. Each tool runs in a forked
    worker: the reference libraries themselves abort on some test files."""
    import concurrent.futures as cf
    import multiprocessing as mp

    errors = []
    for reader in (read_tables, read_h5py):
        try:
            with cf.ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("fork")) as pool:
                return pool.submit(reader, h5file, path).result(timeout=300)
        except Exception as e:  # noqa: BLE001 - any failure means "try the next tool"
            errors.append(f"{reader.__name__}: {type(e).__name__}: {e}".replace("\n", " ")[:200])
    return None, "; ".join(errors)


def check_array(entry, base, h5file):
    dtype = to_dtype(entry["descr"])
    with open(os.path.join(base, entry["bin"]), "rb") as fh:
        raw = fh.read()
    # A sub-array dtype (HDF5 array type) expands into trailing dimensions, as numpy does.
    ours = np.frombuffer(raw, dtype=dtype).reshape(list(entry["shape"]) + list(dtype.shape))
    ref, how = reference(h5file, entry["path"])
    if ref is None:
        return "NOREF", how
    if isinstance(ref, list):  # flavor "python"
        ref = np.array(ref)
    return ("OK", how) if (r := same(ours, ref, entry["path"])) is None else ("MISMATCH", r)


def check_vlarray(entry, h5file):
    ref, how = reference(h5file, entry["path"])
    if ref is None:
        return "NOREF", how
    # A scalar vlen string reads as one str/bytes in PyTables.
    ref = [ref] if isinstance(ref, (str, bytes)) else list(ref)
    rows = entry["rows"]
    if len(rows) != len(ref):
        return "MISMATCH", f"{entry['path']}: {len(rows)} rows vs {len(ref)}"
    for i, (ours, theirs) in enumerate(zip(rows, ref)):
        where = f"{entry['path']}[{i}]"
        if "bytes" in ours:
            if bytes.fromhex(ours["bytes"]) != (theirs if isinstance(theirs, bytes) else bytes(theirs)):
                return "MISMATCH", f"{where}: bytes differ"
        elif "text" in ours:
            t = theirs.decode() if isinstance(theirs, bytes) else str(theirs)
            if ours["text"] != t:
                return "MISMATCH", f"{where}: {ours['text']!r} != {t!r}"
        else:
            dt = to_dtype(ours["descr"])
            arr = np.frombuffer(bytes.fromhex(ours["hex"]), dtype=dt).reshape(list(ours["shape"]) + list(dt.shape))
            r = same(arr, np.asarray(theirs), where)
            if r:
                return "MISMATCH", r
    return "OK", how


def read_h5py_elements(h5file, path):
    """h5py's values of a dataset with vlen members or references, references replaced by
    {"ref": target path or None, "sel": selection} (h5py's `f[ref].name`)."""
    import h5py

    with h5py.File(h5file, "r") as f:
        data = f[path][()]

        def resolve(v):
            if isinstance(v, h5py.RegionReference):
                if not v:
                    return {"ref": None}
                return {"ref": f[v].name, "sel": selection(h5py.h5r.get_region(v, f.id))}
            if isinstance(v, h5py.Reference):
                return {"ref": f[v].name if v else None}
            if isinstance(v, np.ndarray) and v.dtype.kind == "O":
                return np.array([resolve(x) for x in v.ravel()] + [None], dtype=object)[:-1].reshape(v.shape)
            if isinstance(v, np.void) and v.dtype.names and v.dtype.hasobject:
                return {n: resolve(v[n]) for n in v.dtype.names}
            if isinstance(v, np.ndarray) and v.dtype.names and v.dtype.hasobject:
                return np.array([resolve(x) for x in v.ravel()] + [None], dtype=object)[:-1].reshape(v.shape)
            return v

        return resolve(data)


def selection(space):
    from h5py import h5s

    kind = space.get_select_type()
    if kind == h5s.SEL_ALL:
        return "all"
    if kind == h5s.SEL_NONE:
        return "none"
    if kind == h5s.SEL_POINTS:
        return {"points": space.get_select_elem_pointlist().tolist()}
    blocks = space.get_select_hyper_blocklist()  # (nblocks, 2, rank): start, end corners
    return {"blocks": [blocks[:, 0, :].tolist(), blocks[:, 1, :].tolist()]}


def same_element(ours, ref, where):
    """One decoded element (JSON from the Rust dump) against h5py's value."""
    if "ref" in ours:
        if not isinstance(ref, dict) or ours != ref:
            return f"{where}: reference {ours} != {ref}"
        return None
    if "str" in ours:
        theirs = ref.encode() if isinstance(ref, str) else bytes(ref)
        return None if bytes.fromhex(ours["str"]) == theirs else f"{where}: {ours['str']} != {theirs!r}"
    if "fields" in ours:
        names = list(ref.keys()) if isinstance(ref, dict) else list(ref.dtype.names)
        if sorted(ours["fields"]) != sorted(names):
            return f"{where}: fields {list(ours['fields'])} != {names}"
        for n, v in ours["fields"].items():
            r = same_element(v, ref[n], f"{where}/{n}")
            if r:
                return r
        return None
    if "arr" in ours:
        ref = np.asarray(ref, dtype=object) if not isinstance(ref, np.ndarray) else ref
        if list(ref.shape) != ours["dims"]:
            return f"{where}: array shape {ref.shape} != {ours['dims']}"
        for i, (o, t) in enumerate(zip(ours["arr"], ref.ravel())):
            r = same_element(o, t, f"{where}[{i}]")
            if r:
                return r
        return None
    if "seq" in ours:
        if len(ours["seq"]) != len(ref):
            return f"{where}: {len(ours['seq'])} items != {len(ref)}"
        for i, (o, t) in enumerate(zip(ours["seq"], ref)):
            r = same_element(o, t, f"{where}[{i}]")
            if r:
                return r
        return None
    if "seq_descr" in ours:
        arr = np.frombuffer(bytes.fromhex(ours["hex"]), dtype=to_dtype(ours["seq_descr"]))
        return same(arr, np.asarray(ref), where)
    dt = to_dtype(ours["descr"])
    arr = np.frombuffer(bytes.fromhex(ours["hex"]), dtype=dt).reshape(dt.shape)
    return same(arr, np.asarray(ref), where)


def check_elements(entry, h5file):
    import concurrent.futures as cf
    import multiprocessing as mp

    with cf.ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("fork")) as pool:
        ref = pool.submit(read_h5py_elements, h5file, entry["path"]).result(timeout=300)
    rows = entry["rows"]
    flat = [ref] if not entry["shape"] else list(np.asarray(ref, dtype=object).ravel()) \
        if not (isinstance(ref, np.ndarray) and ref.dtype.names) else list(ref.ravel())
    if len(rows) != len(flat):
        return "MISMATCH", f"{entry['path']}: {len(rows)} elements vs {len(flat)}"
    for i, (ours, theirs) in enumerate(zip(rows, flat)):
        r = same_element(ours, theirs, f"{entry['path']}[{i}]")
        if r:
            return "MISMATCH", r
    return "OK", "h5py"


def main():
    h5file, manifest = sys.argv[1], sys.argv[2]
    base = os.path.dirname(manifest)
    with open(manifest) as fh:
        entries = json.load(fh)
    name = os.path.basename(h5file)
    for entry in entries:
        try:
            if entry["kind"] == "array":
                status, how = check_array(entry, base, h5file)
            elif entry["kind"] == "elements":
                status, how = check_elements(entry, h5file)
            else:
                status, how = check_vlarray(entry, h5file)
        except Exception as e:  # noqa: BLE001 - report, never crash the comparison
            status, how = "MISMATCH", f"{type(e).__name__}: {e}"

        print(f"{status} {name} {entry['path']} ({how})")


if __name__ == "__main__":
    main()
