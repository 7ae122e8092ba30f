"""Makes the MAT-file fixtures sciio-mat's tests read, with the reference tools, and the
canonical values (mat_canon.py) they must read as.

usage: mat_fixtures.py OUTDIR
writes OUTDIR/*.mat, OUTDIR/expected.json {file: {var: canonical}} and OUTDIR/corrupt.json
{file: [variable, words the error must contain]}.

- hdf5storage_meta.mat / hdf5storage_plain.mat: hdf5storage.savemat of every type in the
  storage-format spec's tables (with and without Python metadata).
- matlab_layout.mat: written with h5py exactly as MATLAB lays values out (struct without
  MATLAB_fields, struct arrays, empties of every kind, sparse, cells of cells, objects...).
- corrupt_*.mat: broken references, cycles, missing #refs# targets, wrong attribute types.
"""

import json
import os
import sys

import h5py
import hdf5storage
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mat_canon import canon, char  # noqa: E402

HEADER = (b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Fri Feb 07 02:29:00 2014 "
          b"HDF5 schema 1.00 .").ljust(116, b" ") + b"\x00" * 8 + b"\x00\x02IM"


def spec_values():
    """One value per row of the spec's type tables that MATLAB can hold."""
    rng = np.random.default_rng(5)
    sa = np.zeros((2, 3), dtype=[("a", np.float64), ("b", np.int16)])
    sa["a"] = rng.normal(size=(2, 3))
    sa["b"] = np.arange(6).reshape(2, 3)
    so = np.zeros((3,), dtype=[("f", object), ("g", object)])
    so["f"][0], so["f"][1], so["f"][2] = 1.0, "x", np.zeros((0,))
    so["g"][0], so["g"][1], so["g"][2] = np.int8(3), [1.5, "y"], {"k": np.uint16(9)}
    return {
        "py_bool": True,
        "py_none": None,
        "py_int": 123456789012,
        "py_float": 2.5,
        "py_complex": 1.5 - 2j,
        "py_str": "héllo wörld",
        "py_str_empty": "",
        "py_bytes": b"bytes here",
        "py_list": [1.0, "two", [3, 4.5]],
        "py_tuple": (np.int32(7), "t"),
        "py_dict": {"alpha": 1.0, "beta": "b", "gamma": {"deep": np.arange(4.0)}},
        "np_bool": np.bool_(False),
        "np_uint8": np.uint8(200), "np_uint16": np.uint16(60000), "np_uint32": np.uint32(4000000000),
        "np_uint64": np.uint64(2**63 + 5), "np_int8": np.int8(-100), "np_int16": np.int16(-30000),
        "np_int32": np.int32(-2000000000), "np_int64": np.int64(-2**62),
        "np_float32": np.float32(1.25), "np_float64": np.float64(-0.0),
        "np_complex64": np.complex64(1 + 2j), "np_complex128": np.complex128(-3.5 + 0.25j),
        "np_str": np.str_("numpy str"), "np_bytes": np.bytes_(b"numpy bytes"),
        "nd_f64": rng.normal(size=(3, 4)), "nd_f32_3d": rng.normal(size=(2, 3, 4)).astype(np.float32),
        "nd_i16": np.arange(-6, 6, dtype=np.int16).reshape(3, 4), "nd_u64": np.arange(5, dtype=np.uint64),
        "nd_c128": (rng.normal(size=(2, 2)) + 1j * rng.normal(size=(2, 2))),
        "nd_bool": np.array([[True, False, True], [False, False, True]]),
        "nd_nonfinite": np.array([np.nan, np.inf, -np.inf, 1.0]),
        "nd_empty_f64": np.zeros((0, 3)), "nd_empty_i8": np.zeros((4, 0), dtype=np.int8),
        "nd_empty_bool": np.zeros((0,), dtype=bool),
        "nd_object": np.array([[np.float64(1), "a"], [np.arange(3), np.array([1 + 1j])]], dtype=object),
        "nd_object_empty": np.zeros((0, 2), dtype=object),
        "nd_struct_array": sa,
        "nd_struct_objects": so,
        "big_compressed": rng.normal(size=(300, 200)),
    }


def hdf5storage_files(out, expected):
    values = spec_values()
    for name, meta in (("hdf5storage_meta.mat", True), ("hdf5storage_plain.mat", False)):
        path = os.path.join(out, name)
        hdf5storage.savemat(path, values, format="7.3", store_python_metadata=meta)
        expected[name] = {k: canon(v) for k, v in values.items()}


def attr_str(obj, name, value):
    obj.attrs.create(name, np.bytes_(value))


def matlab_dataset(grp, name, data, cls, **extra):
    d = grp.create_dataset(name, data=data)
    attr_str(d, "MATLAB_class", cls)
    for k, v in extra.items():
        d.attrs[k] = v
    return d


def empty(grp, name, cls, dims):
    return matlab_dataset(grp, name, np.array(dims, dtype=np.uint64), cls, MATLAB_empty=np.uint8(1))


def fields_attr(obj, names):
    dt = h5py.vlen_dtype(np.dtype("S1"))
    fs = np.empty(len(names), dtype=dt)
    for i, s in enumerate(names):
        fs[i] = np.array([c.encode("ascii") for c in s], dtype="S1")
    obj.attrs.create("MATLAB_fields", fs, dtype=dt)


class Refs:
    """MATLAB's /#refs# group: canonical empty `a`, then b, c, ..."""

    def __init__(self, f):
        self.g = f.create_group("#refs#")
        empty(self.g, "a", "canonical empty", [0, 0])
        self.n = 1

    def put(self, write):
        name = "abcdefghijklmnopqrstuvwxyz"[self.n % 26] + ("" if self.n < 26 else str(self.n))
        self.n += 1
        write(self.g, name)
        return self.g[name].ref


def mcell(f, refs, grp, name, items, shape):
    """A cell of MATLAB dims `shape` whose items are writer functions (column-major)."""
    r = np.empty(len(items), dtype=h5py.ref_dtype)
    for i, w in enumerate(items):
        r[i] = refs.put(w)
    d = grp.create_dataset(name, data=r.reshape(shape[::-1]), dtype=h5py.ref_dtype)
    attr_str(d, "MATLAB_class", "cell")
    return d


def w_double(values, shape):
    a = np.asarray(values, dtype=np.float64)
    return lambda g, n: matlab_dataset(g, n, a.reshape(shape[::-1]), "double")


def w_char(text):
    a = np.array([ord(c) for c in text], dtype=np.uint16).reshape(-1, 1)
    return lambda g, n: matlab_dataset(g, n, a, "char", MATLAB_int_decode=np.int32(2))


def matlab_layout(out, expected):
    """Values laid out as MATLAB's save -v7.3 writes them (from the spec and public
    descriptions of MATLAB's files), with h5py, and their canonical MATLAB values."""
    path = os.path.join(out, "matlab_layout.mat")
    exp = {}
    with h5py.File(path, "w", userblock_size=512, libver="earliest") as f:
        refs = Refs(f)
        # Numerics of every class, 2x3 (HDF5 3x2), real and complex.
        for cls, dt in (("double", "<f8"), ("single", "<f4"), ("int8", "i1"), ("uint8", "u1"), ("int16", "<i2"),
                        ("uint16", "<u2"), ("int32", "<i4"), ("uint32", "<u4"), ("int64", "<i8"), ("uint64", "<u8")):
            m = np.arange(6).reshape(2, 3).astype(dt)
            matlab_dataset(f, f"n_{cls}", m.T, cls)
            exp[f"n_{cls}"] = canon(m)
        z = (np.arange(6) - 1j * np.arange(6)).reshape(3, 2)
        ct = np.dtype([("real", "<f8"), ("imag", "<f8")])
        zd = np.empty(z.T.shape, dtype=ct)
        zd["real"], zd["imag"] = z.T.real, z.T.imag
        matlab_dataset(f, "z_double", zd, "double")
        exp["z_double"] = canon(z)
        # Big-endian data is read too.
        matlab_dataset(f, "n_bigendian", np.arange(4, dtype=">f8").reshape(1, 4), "double")
        exp["n_bigendian"] = canon(np.arange(4.0).reshape(4, 1))
        # logical, char (2-D), char as UTF-32 (hdf5storage's non-BMP fallback).
        lg = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.uint8)
        matlab_dataset(f, "logical", lg.T, "logical", MATLAB_int_decode=np.int32(1))
        exp["logical"] = canon(lg.astype(bool))
        rows = ["abc", "def"]
        cm = np.array([[ord(c) for c in r] for r in rows], dtype=np.uint16)  # 2x3 MATLAB
        matlab_dataset(f, "char2d", cm.T, "char", MATLAB_int_decode=np.int32(2))
        exp["char2d"] = {"class": "char", "shape": [2, 3], "codes": [int(x) for x in cm.ravel(order="F")]}
        emoji = "a\U0001F600"
        matlab_dataset(f, "char32", np.array([[ord(c)] for c in emoji], dtype=np.uint32), "char",
                       MATLAB_int_decode=np.int32(4))
        exp["char32"] = char(emoji)
        # Empties of every kind and shape.
        for name, cls, dims in (("e_double", "double", [0, 0]), ("e_int8", "int8", [0, 5]),
                                ("e_char", "char", [1, 0]), ("e_cell", "cell", [0, 3]),
                                ("e_logical", "logical", [3, 0]), ("e_single3d", "single", [2, 0, 4])):
            empty(f, name, cls, dims)
            if cls == "cell":
                exp[name] = {"class": "cell", "shape": dims, "items": []}
            elif cls == "char":
                exp[name] = {"class": "char", "shape": dims, "codes": []}
            else:
                exp[name] = {"class": cls, "shape": dims, "re": []}
        es = empty(f, "e_struct", "struct", [0, 1])
        fields_attr(es, ["p", "q"])
        exp["e_struct"] = {"class": "struct", "shape": [0, 1], "fields": ["p", "q"], "elements": []}
        # Scalar struct WITHOUT MATLAB_fields (as in PyTables' test_ref_array1.mat), nested.
        s = f.create_group("s_nofields")
        attr_str(s, "MATLAB_class", "struct")
        matlab_dataset(s, "x", np.array([[2.0]]), "double")
        inner = s.create_group("inner")
        attr_str(inner, "MATLAB_class", "struct")
        fields_attr(inner, ["w", "v"])
        matlab_dataset(inner, "v", np.array([[1], [2]], dtype=np.uint16), "char", MATLAB_int_decode=np.int32(2))
        matlab_dataset(inner, "w", np.array([[7]], dtype=np.int32), "int32")
        exp["s_nofields"] = {"class": "struct", "shape": [1, 1], "fields": ["inner", "x"], "elements": [[
            {"class": "struct", "shape": [1, 1], "fields": ["w", "v"],
             "elements": [[canon(np.array([[7]], dtype=np.int32)),
                           {"class": "char", "shape": [1, 2], "codes": [1, 2]}]]},
            canon(np.array([[2.0]]))]]}
        # Struct with a cell field (struct of cells).
        sc = f.create_group("s_cells")
        attr_str(sc, "MATLAB_class", "struct")
        fields_attr(sc, ["c"])
        mcell(f, refs, sc, "c", [w_char("one"), w_double([1, 2], [1, 2])], [2, 1])
        exp["s_cells"] = {"class": "struct", "shape": [1, 1], "fields": ["c"], "elements": [[
            {"class": "cell", "shape": [2, 1], "items": [char("one"), canon(np.array([[1.0, 2.0]]))]}]]}
        # Struct array 1x2: each field a dataset of references without MATLAB_class.
        st = f.create_group("s_array")
        attr_str(st, "MATLAB_class", "struct")
        fields_attr(st, ["a", "b"])
        for fld, items in (("a", [w_double([1], [1, 1]), w_double([2, 3], [1, 2])]),
                           ("b", [w_char("x"), w_char("yz")])):
            r = np.array([refs.put(w) for w in items], dtype=h5py.ref_dtype).reshape(2, 1)
            st.create_dataset(fld, data=r, dtype=h5py.ref_dtype)
        exp["s_array"] = {"class": "struct", "shape": [1, 2], "fields": ["a", "b"], "elements": [
            [canon(np.array([[1.0]])), char("x")], [canon(np.array([[2.0, 3.0]])), char("yz")]]}
        # Cell of cells, 2x2, with an empty char and a canonical-empty reference.
        def inner_cell(g, n):
            d = g.create_dataset(n, data=np.array([[refs.put(w_char("in"))], [refs.g["a"].ref]], dtype=h5py.ref_dtype).reshape(2, 1), dtype=h5py.ref_dtype)
            attr_str(d, "MATLAB_class", "cell")
        mcell(f, refs, f, "cell_of_cells",
              [inner_cell, w_double([5], [1, 1]), lambda g, n: empty(g, n, "char", [0, 0]), w_char("z")], [2, 2])
        exp["cell_of_cells"] = {"class": "cell", "shape": [2, 2], "items": [
            {"class": "cell", "shape": [1, 2], "items": [char("in"), {"class": "double", "shape": [0, 0], "re": []}]},
            canon(np.array([[5.0]])), {"class": "char", "shape": [0, 0], "codes": []}, char("z")]}
        # Sparse matrices: double, complex, logical, all-zero.
        import scipy.sparse as sp
        dense = np.array([[0, 1.5, 0], [2.0, 0, 0], [0, 0, 3.0], [0, 4.0, 0]])
        for name, m, cls in (("sp_double", sp.csc_matrix(dense), "double"),
                             ("sp_complex", sp.csc_matrix(dense * (1 + 1j)), "double"),
                             ("sp_logical", sp.csc_matrix(dense != 0), "logical"),
                             ("sp_zero", sp.csc_matrix((5, 2)), "double")):
            g = f.create_group(name)
            attr_str(g, "MATLAB_class", cls)
            g.attrs["MATLAB_sparse"] = np.uint64(m.shape[0])
            if m.nnz:
                if m.dtype.kind == "c":
                    d = np.empty(m.nnz, dtype=ct)
                    d["real"], d["imag"] = m.data.real, m.data.imag
                else:
                    d = m.data.astype(np.uint8) if cls == "logical" else m.data
                g.create_dataset("data", data=d)
                g.create_dataset("ir", data=m.indices.astype(np.uint64))
            g.create_dataset("jc", data=m.indptr.astype(np.uint64))
            exp[name] = canon(m)
        # Objects: a string object (MCOS reference data) and a function handle: opaque, named.
        matlab_dataset(f, "obj_string", np.array([[3707764736], [2], [1], [1], [1], [1]], dtype=np.uint32),
                       "string", MATLAB_object_decode=np.int32(3))
        exp["obj_string"] = {"class": "string", "opaque": True}
        fh = f.create_group("fhandle")
        attr_str(fh, "MATLAB_class", "function_handle")
        matlab_dataset(fh, "function_handle", np.array([[ord(c)] for c in "sin"], dtype=np.uint16), "char",
                       MATLAB_int_decode=np.int32(2))
        exp["fhandle"] = {"class": "function_handle", "opaque": True}
    with open(path, "r+b") as fh_:
        fh_.write(HEADER)
    expected["matlab_layout.mat"] = exp


def corrupt(out):
    """Broken files and the words their errors must contain."""
    cases = {}

    def new(name):
        f = h5py.File(os.path.join(out, name), "w", userblock_size=512, libver="earliest")
        return f

    def header(name):
        with open(os.path.join(out, name), "r+b") as fh:
            fh.write(HEADER)

    # A reference to an address holding no object.
    with new("corrupt_badref.mat") as f:
        refs = Refs(f)
        d = mcell(f, refs, f, "c", [w_double([1], [1, 1])], [1, 1])
        offset = d.id.get_offset()
    with open(os.path.join(out, "corrupt_badref.mat"), "r+b") as fh:
        fh.seek(offset)
        fh.write(np.uint64(0x7777).tobytes())
    header("corrupt_badref.mat")
    cases["corrupt_badref.mat"] = ["c", "reference"]
    # A cell that contains itself.
    with new("corrupt_cycle.mat") as f:
        refs = Refs(f)
        d = refs.g.create_dataset("b", shape=(1, 1), dtype=h5py.ref_dtype)
        attr_str(d, "MATLAB_class", "cell")
        d[0, 0] = d.ref
        top = f.create_dataset("c", data=np.array([[d.ref]], dtype=h5py.ref_dtype), dtype=h5py.ref_dtype)
        attr_str(top, "MATLAB_class", "cell")
    header("corrupt_cycle.mat")
    cases["corrupt_cycle.mat"] = ["c", "cycle"]
    # A reference whose #refs# target was unlinked.
    with new("corrupt_missing.mat") as f:
        refs = Refs(f)
        mcell(f, refs, f, "c", [w_double([1], [1, 1])], [1, 1])
        del refs.g["b"]
    header("corrupt_missing.mat")
    cases["corrupt_missing.mat"] = ["c", "reference"]
    # Wrong attribute types.
    with new("corrupt_attrs.mat") as f:
        d = f.create_dataset("class_int", data=np.ones((1, 1)))
        d.attrs["MATLAB_class"] = np.int32(5)
        g = f.create_group("fields_int")
        attr_str(g, "MATLAB_class", "struct")
        g.attrs["MATLAB_fields"] = np.arange(3)
        e = f.create_dataset("empty_float", data=np.array([0.0, 1.5]))
        attr_str(e, "MATLAB_class", "double")
        e.attrs["MATLAB_empty"] = np.uint8(1)
        s = f.create_group("sparse_str")
        attr_str(s, "MATLAB_class", "double")
        attr_str(s, "MATLAB_sparse", "lots")
        s.create_dataset("jc", data=np.zeros(2, dtype=np.uint64))
        m = f.create_dataset("class_mismatch", data=np.ones((1, 1), dtype=np.int8))
        attr_str(m, "MATLAB_class", "double")
        j = f.create_group("sparse_badjc")
        attr_str(j, "MATLAB_class", "double")
        j.attrs["MATLAB_sparse"] = np.uint64(2)
        j.create_dataset("data", data=np.ones(2))
        j.create_dataset("ir", data=np.array([0, 5], dtype=np.uint64))
        j.create_dataset("jc", data=np.array([0, 2], dtype=np.uint64))
    header("corrupt_attrs.mat")
    for var, words in (("class_int", ["MATLAB_class", "string"]), ("fields_int", ["MATLAB_fields"]),
                       ("empty_float", ["MATLAB_empty"]), ("sparse_str", ["MATLAB_sparse"]),
                       ("class_mismatch", ["MATLAB_class", "int8"]), ("sparse_badjc", ["row index"])):
        cases.setdefault("corrupt_attrs.mat", []).append([var] + words)
    cases["corrupt_badref.mat"] = [cases["corrupt_badref.mat"]]
    cases["corrupt_cycle.mat"] = [cases["corrupt_cycle.mat"]]
    cases["corrupt_missing.mat"] = [cases["corrupt_missing.mat"]]
    return cases


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    expected = {}
    hdf5storage_files(out, expected)
    matlab_layout(out, expected)
    cases = corrupt(out)
    with open(os.path.join(out, "expected.json"), "w") as fh:
        json.dump(expected, fh)
    with open(os.path.join(out, "corrupt.json"), "w") as fh:
        json.dump(cases, fh)


if __name__ == "__main__":
    main()
