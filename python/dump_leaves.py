"""What PyTables' `node.read()` gives for every leaf of an HDF5 file, as .npy files.

    dump_leaves.py dump FILE OUTDIR    -> OUTDIR/manifest.json + OUTDIR/ref_*.npy
    dump_leaves.py compare OUTDIR      -> compares OUTDIR/ref_* with OUTDIR/sciio_* (one line per leaf)

Leaves are read as PyTables reads them (numpy flavor); a leaf PyTables cannot read (an
`UnImplemented` node, or a read that raises) is read with h5py instead: its values are h5py's,
its dtype PyTables' when PyTables opens the node ("pt_dtype": PyTables packs nested compounds
with gaps, then fails to read them). Manifest entries:

- kind "array":   one array (`np.asarray(node.read())`; string VLArrays `np.array(rows)`)
- kind "rows":    a VLArray of numbers (PyTables) or an h5py variable-length dataset: one
                  .npy per row, in C order of the dataset's elements (sciio's rows: the
                  members NAME/row_000000... of OUTDIR/sciio_rows_<entry index>.npz)
- kind "objects": pickled Python objects (sciio must refuse them)
- kind "elements": h5py reads objects numpy cannot save (references, compounds with
                  variable-length members): sciio must read them element by element
- kind "unreadable": neither PyTables nor h5py reads the data (the error is kept; e.g. LZO
                  without liblzo in the wheels): "npy" holds an empty array of the dtype
                  PyTables gives the node and "shape" its shape, when PyTables opens the node
"""

import json
import os
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")


def save(outdir, name, arr):
    np.save(os.path.join(outdir, name), arr, allow_pickle=False)
    return name


def gapped_nested(node, stored):
    """A nested compound whose packed size differs from the file's: PyTables' read() of it
    writes past its buffer ("corrupted size vs. prev_size", a crash a moment later), so it is
    never called; h5py reads the values and PyTables' dtype is kept."""
    dt = getattr(node, "dtype", None)
    if dt is None or dt.names is None or stored.names is None:
        return False
    nested = any(dt[n].names is not None for n in dt.names)
    return nested and dt.itemsize != stored.itemsize


def pytables_entry(node, outdir, i, stored=None):
    import tables

    if isinstance(node, tables.UnImplemented):
        return None
    if stored is not None and gapped_nested(node, stored):
        raise RuntimeError("PyTables cannot read a nested compound with gaps (not called)")
    if isinstance(node, tables.VLArray):
        atom = node.atom
        rows = node.read()
        if atom.type == "object":
            return {"kind": "objects"}
        if atom.type in ("vlstring", "vlunicode"):
            return {"kind": "array", "npy": save(outdir, f"ref_{i}.npy", np.array(rows))}
        names = [save(outdir, f"ref_{i}_{j}.npy", np.asarray(r)) for j, r in enumerate(rows)]
        return {"kind": "rows", "rows": names}
    # The numpy flavor: what read() gives before PyTables converts to a list or scalar.
    node._flavor = "numpy"
    arr = np.asarray(node.read())
    return {"kind": "array", "npy": save(outdir, f"ref_{i}.npy", arr)}


def h5py_entry(f, path, outdir, i):
    ds = f[path]
    dt = ds.dtype
    if dt.kind != "O" and not dt.hasobject:
        return {"kind": "array", "npy": save(outdir, f"ref_{i}.npy", np.asarray(ds[()]))}
    import h5py

    data = ds[()]
    if h5py.check_string_dtype(dt) is not None:
        flat = [x if isinstance(x, bytes) else str(x).encode() for x in np.asarray(data).ravel()]
        arr = np.array(flat, dtype=bytes).reshape(np.shape(data)) if flat else np.zeros(np.shape(data), "S1")
        return {"kind": "array", "npy": save(outdir, f"ref_{i}.npy", arr)}
    if h5py.check_vlen_dtype(dt) is not None:
        names = [save(outdir, f"ref_{i}_{j}.npy", np.asarray(r)) for j, r in enumerate(np.asarray(data, dtype=object).ravel())]
        return {"kind": "rows", "rows": names}
    return {"kind": "elements"}


def dump(path, outdir):
    import h5py
    import tables

    entries = []
    leaves = []
    with h5py.File(path, "r") as f:
        seen = set()

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                seen.add("/" + name)

        f.visititems(visit)
        leaves = sorted(seen)
    pt = None
    try:
        pt = tables.open_file(path, "r")
    except Exception as e:  # noqa: BLE001
        pt_error = repr(e)
    with h5py.File(path, "r") as f:
        for i, leaf in enumerate(leaves):
            entry = None
            via = "pytables"
            error = None
            if pt is not None:
                try:
                    entry = pytables_entry(pt.get_node(leaf), outdir, i, f[leaf].dtype)
                except Exception as e:  # noqa: BLE001
                    error = repr(e)[:300]
                    entry = None
            else:
                error = pt_error
            if entry is None:
                via = "h5py"
                try:
                    entry = h5py_entry(f, leaf, outdir, i)
                    # PyTables opens the node but cannot read it: its dtype is still the
                    # layout sciio follows (h5py gives the values).
                    try:
                        node = pt.get_node(leaf)
                        if not isinstance(node, tables.UnImplemented) and entry["kind"] == "array":
                            entry["pt_dtype"] = save(outdir, f"dtype_{i}.npy", np.empty((0,), node.dtype))
                    except Exception:  # noqa: BLE001
                        pass
                except Exception as e:  # noqa: BLE001
                    entry = {"kind": "unreadable", "error": (error or "") + " / h5py: " + repr(e)[:300]}
                    # What PyTables says the data is, without reading it.
                    try:
                        node = pt.get_node(leaf)
                        entry["npy"] = save(outdir, f"ref_{i}.npy", np.empty((0,), node.dtype))
                        entry["shape"] = [int(d) for d in node.shape]
                    except Exception:  # noqa: BLE001
                        pass
            entry["path"] = leaf
            entry["via"] = via
            if error:
                entry["pytables_error"] = error
            entries.append(entry)
    if pt is not None:
        pt.close()
    with open(os.path.join(outdir, "manifest.json"), "w") as out:
        json.dump(entries, out, indent=1)


def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.names:
        return all(same(a[n], b[n]) for n in a.dtype.names)
    if a.dtype.kind in "fc":
        return np.array_equal(a, b, equal_nan=True)
    if a.dtype.kind == "V":
        return a.tobytes() == b.tobytes()
    return np.array_equal(a, b)


def same_values(a, b):
    """Same shape, field names and values, whatever the layout (offsets, item size)."""
    if a.shape != b.shape or (a.dtype.names or ()) != (b.dtype.names or ()):
        return False
    if a.dtype.names:
        return all(same_values(a[n], b[n]) for n in a.dtype.names)
    return same(a, b)


def compare(outdir):
    with open(os.path.join(outdir, "manifest.json")) as f:
        entries = json.load(f)
    for index, e in enumerate(entries):
        pairs = []
        if e["kind"] == "array":
            pairs = [e["npy"]]
        elif e["kind"] == "rows":
            pairs = e["rows"]
        else:
            continue
        if e["kind"] == "unreadable" and "npy" in e:
            ref = np.load(os.path.join(outdir, e["npy"]))
            mine_path = os.path.join(outdir, e["npy"].replace("ref_", "sciio_", 1))
            if not os.path.exists(mine_path):
                print(f"MISSING {e['path']} {e['npy']}")
                continue
            mine = np.load(mine_path)
            if ref.dtype != mine.dtype or list(mine.shape) != e["shape"]:
                print(f"MISMATCH {e['path']} (unreadable by PyTables and h5py): {ref.dtype} {e['shape']} vs sciio {mine.dtype} {mine.shape}")
            else:
                print(f"OK {e['path']} dtype and shape (PyTables and h5py cannot read the data)")
            continue
        # Rows converted to .npz: one member per row, NAME/row_000000 (sciio::vlarray).
        rows_npz = os.path.join(outdir, f"sciio_rows_{index}.npz")
        members = None
        if e["kind"] == "rows" and os.path.exists(rows_npz):
            members = np.load(rows_npz)
            want = [f"{e['path'].lstrip('/')}/row_{j:06d}" for j in range(len(pairs))]
            if sorted(members.files) != want:
                print(f"MISMATCH {e['path']}: npz members {members.files[:4]}... vs {want[:4]}...")
                continue
        for j, name in enumerate(pairs):
            ref = np.load(os.path.join(outdir, name))
            mine_path = os.path.join(outdir, name.replace("ref_", "sciio_", 1))
            if members is not None:
                mine = members[f"{e['path'].lstrip('/')}/row_{j:06d}"]
            elif not os.path.exists(mine_path):
                print(f"MISSING {e['path']} {name}")
                continue
            else:
                mine = np.load(mine_path)
            if "pt_dtype" in e:
                want = np.load(os.path.join(outdir, e["pt_dtype"])).dtype
                if mine.dtype != want or not same_values(ref, mine):
                    print(f"MISMATCH {e['path']} via h5py, PyTables' dtype {want}: {ref.dtype} {ref.shape} vs sciio {mine.dtype} {mine.shape}")
                    break
                continue
            if not same(ref, mine):
                print(f"MISMATCH {e['path']} via {e['via']}: {ref.dtype} {ref.shape} vs sciio {mine.dtype} {mine.shape}")
                break
        else:
            print(f"OK {e['path']} via {e['via']} ({e['kind']})")


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(sys.argv[2], sys.argv[3])
        sys.stdout.flush()
        # PyTables and h5py both loaded can crash in their finalizers (a double free at
        # exit); everything is written by now.
        os._exit(0)
    elif sys.argv[1] == "compare":
        compare(sys.argv[2])
