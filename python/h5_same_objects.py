"""Compares two HDF5 files object by object with h5py: the same paths, kinds, attributes
(names, dtypes, values), dataset dtypes, shapes, chunk shapes, filters and values, object
references compared by the path they point to. Used to check sciio's native HDF5 writer
against libhdf5 writing the same content.

usage: h5_same_objects.py A.h5 B.h5        prints "ok N objects" or the differences
"""
import sys

import h5py
import numpy as np


def deref(f, v):
    """Object references replaced by the path of their target."""
    if isinstance(v, np.ndarray) and v.dtype == object:
        return np.vectorize(lambda r: f[r].name if isinstance(r, h5py.Reference) and r else repr(r),
                            otypes=[object])(v)
    return v


def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype == object:
            return all(same(x, y) for x, y in zip(a.ravel(), b.ravel()))
        return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    return type(a) is type(b) and (a == b if not isinstance(a, float) else (a == b or a != a and b != b))


def describe(f):
    out = {}

    def visit(name, obj):
        attrs = {k: deref(f, obj.attrs[k]) for k in obj.attrs}
        types = {k: obj.attrs.get_id(k).dtype for k in obj.attrs}
        if isinstance(obj, h5py.Group):
            out[name] = ("group", attrs, types, None)
        else:
            dcpl = obj.id.get_create_plist()
            filters = [dcpl.get_filter(i)[:3] for i in range(dcpl.get_nfilters())]
            meta = (obj.dtype, obj.shape, obj.chunks, filters, dcpl.get_layout() == h5py.h5d.CHUNKED)
            out[name] = ("dataset", attrs, types, (meta, deref(f, obj[()])))

    visit("/", f)
    f.visititems(visit)
    return out


def main():
    a, b = (describe(h5py.File(p, "r")) for p in sys.argv[1:3])
    problems = []
    if sorted(a) != sorted(b):
        problems.append(f"paths differ: {sorted(set(a) ^ set(b))[:10]}")
    for name in sorted(set(a) & set(b)):
        ka, attrs_a, types_a, data_a = a[name]
        kb, attrs_b, types_b, data_b = b[name]
        if ka != kb:
            problems.append(f"{name}: {ka} vs {kb}")
            continue
        if sorted(attrs_a) != sorted(attrs_b):
            problems.append(f"{name}: attributes {sorted(attrs_a)} vs {sorted(attrs_b)}")
        for k in set(attrs_a) & set(attrs_b):
            if types_a[k] != types_b[k] or not same(attrs_a[k], attrs_b[k]):
                problems.append(f"{name}.{k}: {types_a[k]} {attrs_a[k]!r} vs {types_b[k]} {attrs_b[k]!r}")
        if data_a is not None:
            (meta_a, va), (meta_b, vb) = data_a, data_b
            if meta_a != meta_b:
                problems.append(f"{name}: {meta_a} vs {meta_b}")
            elif not same(va, vb):
                problems.append(f"{name}: values differ")
    if problems:
        print("\n".join(problems[:40]))
    else:
        print(f"ok {len(a)} objects")


if __name__ == "__main__":
    main()
