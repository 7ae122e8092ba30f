"""Makes v7.3 MAT files holding MATLAB objects (MCOS) for sciio-mat's tests, and what the
reference reader `mat-io` (PyPI `mat-io`, module `matio`) reads from them.

usage: mat_mcos_fixtures.py OUTDIR
writes OUTDIR/objects.mat (string, datetime, duration, categorical, user classes, nested
objects, objects inside structs and cells, a function handle), OUTDIR/expected.json
{variable: canonical value read by mat-io}, OUTDIR/corrupt_*.mat (broken object metadata,
each with one good `ok` double beside), OUTDIR/trunc_*.mat (the FileWrapper__ metadata blob
cut at every 4th length), and OUTDIR/matio_written.mat with OUTDIR/expected_matio.json: objects
(string, datetime, categorical, a table) written by mat-io's own v7.3 writer, and what mat-io
reads back from them.

The files are written with h5py in the layout MATLAB itself writes (R2023b, FileWrapper__
version 4), compared field by field with MATLAB-written files in the mat-io repository
(tests/data/test_string_v73.mat, test_time_v73.mat, test_tables_v73.mat,
test_user_defined_v73.mat, test_function_handles_v73.mat): 512-byte header, object variables
as `uint32` columns `[0xDD000000, ndims, dims, ids, class id]` with MATLAB_class and
MATLAB_object_decode=3, `/#subsystem#/MCOS` a cell of references (MATLAB_class
FileWrapper__) to: the uint8 metadata blob, the canonical empty, each saved property value,
a cell of empty structs per class, the int32 class-alias column, and the cell of per-class
default property structs. `string` saves through the "saveobj" region as property `any`.
"""

import json
import os
import struct
import sys
import warnings

import h5py
import numpy as np

MAGIC = 0xDD000000
HEADER = (b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Sat Nov 21 10:00:00 2026 "
          b"HDF5 schema 1.00 .").ljust(116, b" ") + b"\x00" * 8 + b"\x00\x02IM"


def refnames():
    """MATLAB's #refs# member names: a..z, A..Z, then two letters."""
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)] + \
        [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    yield from letters
    for a in letters:
        for b in letters:
            yield a + b


class MatFile:
    """A v7.3 file being written in MATLAB's layout."""

    def __init__(self, path):
        self.path = path
        self.f = h5py.File(path, "w", userblock_size=512, libver="earliest")
        self.refs = self.f.create_group("#refs#")
        self.names = refnames()
        # MATLAB's canonical empty is always the first #refs# member.
        self.canonical_empty = self.put(lambda g, n: empty(g, n, "canonical empty", [0, 0]))

    def put(self, write):
        """Writes a value under #refs# (write(group, name)), returns its reference."""
        name = next(self.names)
        obj = write(self.refs, name)
        if name != "a":
            attr(obj, "H5PATH", "/#refs#/" + name)
        return obj.ref

    def close(self):
        self.f.close()
        with open(self.path, "r+b") as fh:
            fh.write(HEADER)


def attr(obj, name, text):
    obj.attrs.create(name, np.bytes_(text))


def empty(g, name, cls, dims):
    d = g.create_dataset(name, data=np.array(dims, dtype=np.uint64))
    attr(d, "MATLAB_class", cls)
    d.attrs.create("MATLAB_empty", np.uint8(1))
    return d


def numeric(values, cls, dtype):
    """A MATLAB numeric/logical array (values given in MATLAB's shape, any order)."""
    a = np.asarray(values, dtype=dtype)
    if a.ndim < 2:
        a = a.reshape(1, -1)

    def write(g, name):
        if a.size == 0:
            return empty(g, name, cls, list(a.shape))
        d = g.create_dataset(name, data=a.T)
        attr(d, "MATLAB_class", cls)
        if cls == "logical":
            d.attrs.create("MATLAB_int_decode", np.int32(1))
        return d
    return write


def double(values):
    return numeric(values, "double", np.float64)


def logical(value):
    return numeric([[value]], "logical", np.uint8)


def char(text):
    def write(g, name):
        if text == "":
            return empty(g, name, "char", [0, 0])
        d = g.create_dataset(name, data=np.frombuffer(text.encode("utf-16-le"), "<u2").reshape(-1, 1))
        attr(d, "MATLAB_class", "char")
        d.attrs.create("MATLAB_int_decode", np.int32(2))
        return d
    return write


def fields_attr(obj, names):
    vl = h5py.vlen_dtype(np.dtype("S1"))
    a = np.empty(len(names), dtype=object)
    for i, n in enumerate(names):
        a[i] = np.array([c.encode() for c in n], dtype="S1")
    obj.attrs.create("MATLAB_fields", a, dtype=vl)


def struct_(fields, cls="struct", decode=None):
    """A scalar struct group (fields: list of (name, writer)); `struct_([])` is MATLAB's
    1x0 field-less empty struct."""
    def write(g, name):
        if not fields:
            return empty(g, name, "struct", [1, 0])
        grp = g.create_group(name)
        attr(grp, "MATLAB_class", cls)
        if decode is not None:
            grp.attrs.create("MATLAB_object_decode", np.int32(decode))
        fields_attr(grp, [n for n, _ in fields])
        for n, w in fields:
            obj = w(grp, n)
            attr(obj, "H5PATH", grp.name)
        return grp
    return write


class Objects:
    """The MCOS subsystem being built: names, classes, objects and their saved properties."""

    def __init__(self, mat):
        self.mat = mat
        self.names = []
        self.classes = []          # (namespace index, name index)
        self.defaults = []         # per class: list of (name, writer)
        self.objects = []          # (class id, saveobj id, normal id)
        self.saveobj = []          # records: list of (name index, kind, value)
        self.normal = []
        self.values = []           # references of saved property values, in order

    def name(self, text):
        if text not in self.names:
            self.names.append(text)
        return self.names.index(text) + 1

    def cls(self, qualified, defaults=()):
        namespace, _, short = qualified.rpartition(".")
        key = (self.name(namespace) if namespace else 0, self.name(short))
        if key not in self.classes:
            self.classes.append(key)
            self.defaults.append(list(defaults))
        return self.classes.index(key) + 1

    def obj(self, qualified, props, saveobj=False, defaults=()):
        """A new object with saved properties (name, writer | ("int", k)); returns its id."""
        class_id = self.cls(qualified, defaults)
        record = []
        for pname, value in props:
            if isinstance(value, tuple) and value[0] == "int":
                record.append((self.name(pname), 2, value[1]))
            else:
                record.append((self.name(pname), 1, len(self.values)))
                self.values.append(self.mat.put(value))
        region = self.saveobj if saveobj else self.normal
        region.append(record)
        rid = len(region)
        self.objects.append((class_id, rid if saveobj else 0, 0 if saveobj else rid))
        return len(self.objects)

    def ref_words(self, qualified, ids, dims):
        return [MAGIC, len(dims)] + list(dims) + list(ids) + [self.cls(qualified)]

    def variable(self, g, name, qualified, ids, dims=(1, 1)):
        """Writes an object variable (or struct field, or cell item) referring to `ids`."""
        d = g.create_dataset(name, data=np.array(self.ref_words(qualified, ids, dims), "<u4").reshape(1, -1))
        attr(d, "MATLAB_class", qualified)
        d.attrs.create("MATLAB_object_decode", np.int32(3))
        return d

    def item(self, qualified, ids, dims=(1, 1)):
        """An object as a writer (for cells outside the subsystem)."""
        return lambda g, name: self.variable(g, name, qualified, ids, dims)

    def nested(self, qualified, ids, dims=(1, 1)):
        """A property value / cell item referring to objects: a plain uint32 column."""
        words = self.ref_words(qualified, ids, dims)

        def write(g, name):
            d = g.create_dataset(name, data=np.array(words, "<u4").reshape(1, -1))
            attr(d, "MATLAB_class", "uint32")
            return d
        return write

    def blob(self):
        def records(region):
            words = [0, 0]
            for rec in region:
                words.append(len(rec))
                for t in rec:
                    words.extend(t)
                if len(words) % 2:
                    words.append(0)
            return words
        names = b"".join(n.encode("ascii") + b"\0" for n in self.names)
        names += b"\0" * ((-len(names)) % 8)
        regions = [
            [0, 0, 0, 0] + [w for c in self.classes for w in (c[0], c[1], 0, 0)],
            records(self.saveobj) if self.saveobj else [],
            [0] * 6 + [w for i, (c, s, n) in enumerate(self.objects) for w in (c, 0, 0, s, n, i + 1)],
            records(self.normal),
            [0, 0] * (len(self.objects) + 1),
        ]
        offsets = [40 + len(names)]
        for r in regions:
            offsets.append(offsets[-1] + 4 * len(r))
        offsets.append(offsets[-1])          # region 6: empty
        offsets.append(offsets[-1] + 8)      # region 7: 8 zero bytes
        out = struct.pack("<II", 4, len(self.names)) + struct.pack("<8I", *offsets) + names
        for r in regions:
            out += struct.pack(f"<{len(r)}I", *r)
        return out + b"\0" * 8

    def finish(self, blob=None):
        mat = self.mat
        blob = self.blob() if blob is None else blob
        items = [mat.put(numeric(np.frombuffer(blob, np.uint8).reshape(-1, 1), "uint8", np.uint8)),
                 mat.canonical_empty]
        items += self.values
        n = len(self.classes) + 1
        items.append(mat.put(cell([struct_([]) for _ in range(n)], mat, (n, 1))))
        items.append(mat.put(numeric(np.zeros((n, 1)), "int32", np.int32)))
        items.append(mat.put(cell([struct_([])] + [struct_(d) for d in self.defaults], mat, (n, 1))))
        grp = mat.f.create_group("#subsystem#")
        d = grp.create_dataset("MCOS", data=np.array(items, dtype=h5py.ref_dtype).reshape(1, -1))
        attr(d, "MATLAB_class", "FileWrapper__")
        d.attrs.create("MATLAB_object_decode", np.int32(3))


def cell(items, mat, shape=None):
    """A cell of writers; shape in MATLAB order (default a 1 x n row)."""
    shape = shape or (1, len(items))

    def write(g, name):
        refs = [mat.put(w) for w in items]
        a = np.array(refs, dtype=h5py.ref_dtype).reshape(shape[::-1])
        d = g.create_dataset(name, data=a)
        attr(d, "MATLAB_class", "cell")
        return d
    return write


def string_any(strings, shape):
    """MATLAB's `string` property `any`: [1, ndims, dims, lengths, UTF-16 code units]."""
    lengths, units = [], []
    for s in strings:
        if s is None:
            lengths.append(2**64 - 1)
            continue
        u = np.frombuffer(s.encode("utf-16-le"), "<u2")
        lengths.append(len(u))
        units.extend(u.tolist())
    units += [0] * ((-len(units)) % 4)
    words = [1, len(shape)] + list(shape) + lengths
    words += np.array(units, "<u2").view("<u8").tolist() if units else []
    return numeric(np.array(words, dtype=np.uint64).reshape(1, -1), "uint64", np.uint64)


DT_DEFAULTS = [("fmt", char("")), ("tz", char(""))]
DUR_DEFAULTS = [("millis", double([[0.0]])), ("fmt", char("hh:mm:ss"))]


def colmajor(values, shape):
    """MATLAB-shaped array from column-major values."""
    return np.array(values, dtype=np.float64).reshape(shape[::-1]).T


def build_objects(path):
    mat = MatFile(path)
    o = Objects(mat)
    f = mat.f

    def string_var(name, strings, shape):
        i = o.obj("string", [("any", string_any(strings, shape))], saveobj=True)
        o.variable(f, name, "string", [i])

    string_var("s_scalar", ["Hello"], (1, 1))
    string_var("s_row", ["a", "bc", "déf"], (1, 3))
    string_var("s_matrix", ["Apple", "Date", "Banana", "Fig", "Cherry", "Grapes"], (2, 3))
    string_var("s_empty_text", [""], (1, 1))
    string_var("s_missing", ["x", None, ""], (1, 3))
    string_var("s_zero", [], (0, 0))

    def datetime_var(name, millis, shape, tz=None, fmt=None):
        props = [("data", double(colmajor(millis, shape) if millis else np.zeros(shape)))]
        if fmt is not None:
            props.append(("fmt", char(fmt)))
        if tz is not None:
            props.append(("tz", char(tz)))
        i = o.obj("datetime", props, defaults=DT_DEFAULTS)
        o.variable(f, name, "datetime", [i])

    datetime_var("dt_scalar", [1743508800000.0], (1, 1))
    datetime_var("dt_matrix", [1743465600000.0, float("nan"), 0.0, -86400000.0], (2, 2))
    datetime_var("dt_tz", [1743523200000.0], (1, 1), tz="America/New_York")
    datetime_var("dt_fmt", [1743508800123.0], (1, 1), fmt="yyyy-MM-dd HH:mm:ss.SSS")
    datetime_var("dt_empty", [], (0, 0))

    def duration_var(name, millis, shape, fmt=None):
        props = [("millis", double(colmajor(millis, shape)))]
        if fmt is not None:
            props.append(("fmt", char(fmt)))
        i = o.obj("duration", props, defaults=DUR_DEFAULTS)
        o.variable(f, name, "duration", [i])

    duration_var("dur_s", [10000.0, 40000.0, 20000.0, 50000.0, 30000.0, 60000.0], (2, 3), fmt="s")
    duration_var("dur_hms", [3723000.0], (1, 1))

    def categorical_var(name, codes, shape, categories, ordered=False):
        props = [
            ("categoryNames", cell([char(c) for c in categories], mat, (len(categories), 1))),
            ("codes", numeric(np.array(codes, np.uint8).reshape(shape[::-1]).T, "uint8", np.uint8)),
            ("isProtected", logical(ordered)),
            ("isOrdinal", logical(ordered)),
        ]
        i = o.obj("categorical", props)
        o.variable(f, name, "categorical", [i])

    # "purple" is a category no element uses; code 0 is <undefined>.
    categorical_var("cat_row", [3, 2, 0, 3], (1, 4), ["blue", "green", "red", "purple"])
    categorical_var("cat_ordinal", [1, 2, 3], (1, 3), ["small", "medium", "large"], ordered=True)
    categorical_var("cat_matrix", [2, 1, 3, 2], (2, 2), ["high", "low", "medium"])

    # User classes: a namespaced class with defaults, an object array, nested objects.
    point_defaults = [("x", double([[0.0]])), ("label", char("origin"))]
    p1 = o.obj("geo.Point", [("x", double([[1.5]])), ("y", double([[2.0, 3.0]]))], defaults=point_defaults)
    o.variable(f, "obj_point", "geo.Point", [p1])
    p2 = o.obj("geo.Point", [("x", double([[-1.0]]))], defaults=point_defaults)
    p3 = o.obj("geo.Point", [("y", double([[7.0]]))], defaults=point_defaults)
    o.variable(f, "obj_array", "geo.Point", [p1, p2, p3, p1], dims=(2, 2))
    inner = o.obj("geo.Point", [("x", double([[9.0]]))], defaults=point_defaults)
    when = o.obj("datetime", [("data", double([[0.0]]))], defaults=DT_DEFAULTS)
    outer = o.obj("Holder", [
        ("child", o.nested("geo.Point", [inner])),
        ("items", cell([o.nested("datetime", [when]), char("text")], mat)),
        ("flag", ("int", 1)),
    ])
    o.variable(f, "obj_nested", "Holder", [outer])

    # Objects inside a struct and a cell.
    s_in = o.obj("string", [("any", string_any(["in a struct"], (1, 1)))], saveobj=True)
    grp = f.create_group("st")
    attr(grp, "MATLAB_class", "struct")
    fields_attr(grp, ["name", "n"])
    o.variable(grp, "name", "string", [s_in])
    double([[4.0]])(grp, "n")
    d_in = o.obj("duration", [("millis", double([[1500.0]]))], defaults=DUR_DEFAULTS)
    # Outside the subsystem a cell holds objects as variables do (class + decode 3).
    cell([o.item("duration", [d_in]), double([[1.0]])], mat)(f, "c")
    for name in ("name", "n"):
        attr(grp[name], "H5PATH", "/st")

    # A function handle (@sin), as MATLAB stores it: a struct group, MATLAB_object_decode 1.
    struct_([
        ("matlabroot", char("/usr/local/MATLAB/R2023b")),
        ("separator", char("/")),
        ("sentinel", char("@")),
        ("function_handle", struct_([("function", char("sin")), ("type", char("simple")), ("file", char(""))])),
    ], cls="function_handle", decode=1)(f, "fh")

    double([[42.0]])(f, "ok")
    o.finish()
    mat.close()
    return o


def canon(v):
    """mat-io's value as JSON (objects by class and properties; arrays column-major)."""
    import pandas as pd
    from matio.utils.matclass import EmptyMatStruct, MatlabOpaque, MatlabOpaqueArray
    from matio.utils.matclass import MatlabContainerMap, MatlabEnumerationArray
    if isinstance(v, EmptyMatStruct):
        return {"class": "struct", "fields": {}}  # a struct without fields, any size
    if isinstance(v, MatlabContainerMap):
        def key(k):
            if isinstance(k, str):
                return {"class": "char", "text": k}
            return {"class": "numeric", "shape": [1, 1], "values": [float(k)]}
        return {"class": "containers.Map", "keys": [key(k) for k in v.keys()],
                "values": [canon(x) for x in v.values()]}
    if isinstance(v, MatlabEnumerationArray):
        return {"class": v.classname, "shape": list(v.shape),
                "members": [m.name for m in np.asarray(v).ravel(order="F")]}
    if isinstance(v, pd.DataFrame) and v.index.dtype.kind in "mM":
        kind = "datetime64[ms]" if v.index.dtype.kind == "M" else "timedelta64[ms]"
        times = np.asarray(v.index.values).astype(kind).astype(np.int64)
        return {"class": "timetable", "names": [str(c) for c in v.columns], "rows": len(v),
                "time_name": str(v.index.name), "times": [int(t) for t in times]}
    if isinstance(v, np.ndarray) and v.dtype.names == ("months", "days", "millis"):
        return {"class": "calendarDuration", "shape": list(v.shape),
                **{f: [int(x) for x in v[f].astype(np.int64).ravel(order="F")]
                   for f in ("months", "days", "millis")}}
    if isinstance(v, MatlabOpaqueArray):
        return {"class": v.classname, "shape": list(v.shape),
                "elements": [canon(x) for x in v.ravel(order="F")]}
    if isinstance(v, MatlabOpaque) and v.classname == "missing":
        return {"class": "missing", "shape": [1, 1]}
    if isinstance(v, MatlabOpaque) and v.classname == "dictionary":
        # mat-io 1.0.2 keeps a dictionary's property `data` (Version, IsKeyCombined,
        # IsValueCombined, Key, Value, or Unconfigured); its keys and values are Key and Value.
        data = v.properties["data"]
        if "Key" not in data.dtype.names:
            return {"class": "dictionary"}
        return {"class": "dictionary", "keys": canon(data[0, 0]["Key"]),
                "values": canon(data[0, 0]["Value"])}
    if isinstance(v, MatlabOpaque):
        props = dict(v.properties or {})
        # A dynamic property as MATLAB shows it: its name and value (mat-io keeps the whole
        # meta.DynamicProperty object under a generated key).
        for k in [k for k in props if k.startswith("__dynamic_property__")]:
            meta = props.pop(k).properties
            props[str(np.asarray(meta["DynamicName_"]).ravel()[0])] = meta["DynamicValue_"]
        return {"class": v.classname, "props": {k: canon(x) for k, x in props.items()}}
    if isinstance(v, pd.Categorical):
        codes = np.asarray(v.codes)
        return {"class": "categorical", "shape": list(codes.shape),
                "codes": [int(c) + 1 for c in codes.ravel(order="F")],
                "categories": [str(c) for c in v.categories], "ordered": bool(v.ordered)}
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "T":
            return {"class": "string", "shape": list(v.shape),
                    "items": [x if isinstance(x, str) else None for x in v.ravel(order="F")]}
        if v.dtype.kind == "M":
            ms = v.astype("datetime64[ms]")
            return {"class": "datetime", "shape": list(v.shape),
                    "millis": [None if np.isnat(x) else int(x.astype(np.int64)) for x in ms.ravel(order="F")]}
        if v.dtype.kind == "m":
            ms = v.astype("timedelta64[ms]").astype(np.int64)
            return {"class": "duration", "shape": list(v.shape), "millis": [int(x) for x in ms.ravel(order="F")]}
        if v.dtype.kind in "U":
            return {"class": "char", "text": "".join(v.ravel().tolist())}
        if v.dtype.names and v.size == 1:
            return {"class": "struct", "fields": {n: canon(v.ravel()[0][n]) for n in v.dtype.names}}
        if v.dtype == object:
            return {"class": "cell", "shape": list(v.shape), "items": [canon(x) for x in v.ravel(order="F")]}
        if v.dtype.kind in "biuf":
            return {"class": "numeric", "shape": list(v.shape),
                    "values": [float(x) for x in v.ravel(order="F")]}
    if isinstance(v, str):
        return {"class": "char", "text": v}
    return {"class": "other", "repr": repr(v)[:80]}


def expected(path):
    import matio
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = matio.load_from_mat(path)
    return {k: canon(v) for k, v in data.items() if not k.startswith("__")}


def simple_objects(path, blob_edit=None, refs_edit=None):
    """A small file with a datetime `d`, a user object `u` and a plain double `ok`;
    blob_edit(bytes) -> bytes corrupts the metadata."""
    mat = MatFile(path)
    o = Objects(mat)
    i = o.obj("datetime", [("data", double([[1000.0]]))], defaults=DT_DEFAULTS)
    o.variable(mat.f, "d", "datetime", [i])
    j = o.obj("User", [("v", double([[2.0]]))])
    o.variable(mat.f, "u", "User", [j])
    if refs_edit:
        refs_edit(o, mat)
    double([[42.0]])(mat.f, "ok")
    blob = o.blob()
    o.finish(blob_edit(blob) if blob_edit else blob)
    mat.close()
    return len(blob)


def corrupt(out):
    def words(b):
        return list(struct.unpack(f"<{len(b) // 4}I", b[: len(b) // 4 * 4]))

    def patch_word(b, index, value):
        b = bytearray(b)
        b[4 * index: 4 * index + 4] = struct.pack("<I", value)
        return bytes(b)

    cases = {
        "version": lambda b: patch_word(b, 0, 99),
        "names_past_end": lambda b: patch_word(b, 2, 1 << 20),
        "region_reversed": lambda b: patch_word(b, 4, 8),
        "region_past_end": lambda b: patch_word(b, 6, len(b) + 400),
        "property_count_huge": None,
        "class_id_huge": None,
        "garbage": lambda b: bytes((i * 37 + 11) % 256 for i in range(len(b))),
    }
    # Records of the property region: patch the first record's count (after the 2-word pad).
    def huge_count(b):
        w = words(b)
        start = w[2 + 3] // 4
        return patch_word(b, start + 2, 0x7FFFFFFF)
    cases["property_count_huge"] = huge_count

    def class_huge(b):
        w = words(b)
        start = w[2 + 2] // 4  # object region
        return patch_word(b, start + 6, 0xFFFF)
    cases["class_id_huge"] = class_huge
    for name, edit in cases.items():
        simple_objects(os.path.join(out, f"corrupt_{name}.mat"), blob_edit=edit)

    # An object whose property refers to itself (a cycle), and a reference to object 99.
    def cyclic(o, mat):
        k = o.obj("Loop", [("self", o.nested("Loop", [len(o.objects) + 1]))])
        o.variable(mat.f, "loop", "Loop", [k])
        o.variable(mat.f, "missing", "User", [99])
        mat.f.create_dataset("not_a_ref", data=np.array([[1, 2, 3]], "<u4"))
        attr(mat.f["not_a_ref"], "MATLAB_class", "Thing")
        mat.f["not_a_ref"].attrs.create("MATLAB_object_decode", np.int32(3))
    simple_objects(os.path.join(out, "corrupt_cycle.mat"), refs_edit=cyclic)

    # The truncation sweep over the metadata blob.
    n = simple_objects(os.path.join(out, "trunc_full.mat"))
    for cut in range(0, n, 4):
        simple_objects(os.path.join(out, f"trunc_{cut:04}.mat"), blob_edit=lambda b, c=cut: b[:c])


def matio_written(out):
    """Objects written by mat-io's writer (the other Python implementation of the layout)."""
    import matio
    import pandas as pd
    values = {
        "s": np.array([["p", "qq"], ["", "rst"]], dtype=np.dtypes.StringDType()),
        "dt": np.array([["2024-01-02T03:04:05.006", "NaT"]], dtype="datetime64[ms]"),
        "cat": pd.Categorical(["a", "b", "a"], categories=["b", "a", "z"]),
        "t": pd.DataFrame({"x": [1.5, 2.5, 3.5], "n": np.array([1, 2, 3], dtype=np.int32)}),
    }
    path = os.path.join(out, "matio_written.mat")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        matio.save_to_mat(path, values, version="v7.3")
        back = matio.load_from_mat(path)
    want = {k: canon(v) for k, v in back.items() if k in ("s", "dt", "cat")}
    t = back["t"]
    want["t"] = {"class": "table", "shape": list(t.shape), "names": [str(c) for c in t.columns],
                 "columns": {str(c): [float(x) for x in t[c]] for c in t.columns}}
    with open(os.path.join(out, "expected_matio.json"), "w") as fh:
        json.dump(want, fh, indent=1)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "objects.mat")
    build_objects(path)
    with open(os.path.join(out, "expected.json"), "w") as fh:
        json.dump(expected(path), fh, indent=1)
    corrupt(out)
    matio_written(out)


if __name__ == "__main__":
    main()
