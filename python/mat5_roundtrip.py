"""MAT v5/v7 round trips against scipy.io (for crates/sciio-mat/tests/mat5_write.rs).

usage:
  mat5_roundtrip.py make V5 V7      scipy.io.savemat writes the same data uncompressed (v5)
                                    and compressed (v7)
  mat5_roundtrip.py compare A B     scipy.io.loadmat reads both; prints "same" when every
                                    variable is equal (class, dtype, shape, values, field
                                    names, cells, sparse matrices), else fails naming the first
                                    difference
"""
import sys
import warnings

import numpy as np
import scipy.io
import scipy.sparse as sp


def data():
    c = np.empty((1, 3), dtype=object)
    c[0, 0] = np.arange(3.0)
    c[0, 1] = "hi"
    c[0, 2] = np.array([[1, 2]], dtype=np.int8)
    nested = np.empty((2, 1), dtype=object)
    nested[0, 0] = c
    nested[1, 0] = np.zeros((0, 0))
    sa = np.zeros((1, 2), dtype=[("a", "O"), ("b", "O")])
    sa[0, 0]["a"] = 1.0
    sa[0, 0]["b"] = "x"
    sa[0, 1]["a"] = np.arange(4.0).reshape(2, 2)
    sa[0, 1]["b"] = np.array([[True]])
    return {
        "f8": np.arange(12.0).reshape(3, 4) / 7,
        "f4": np.float32([[1.5, -2, np.nan]]),
        "i1": np.int8([[-128, 2]]),
        "u1": np.uint8([[255, 0]]),
        "i2": np.int16([[-300, 7]]),
        "u2": np.uint16([[65535]]),
        "i4": np.int32([[-(2**31), 5]]),
        "u4": np.uint32([[2**32 - 1]]),
        "i8": np.int64([[-(2**62), 5]]),
        "u8": np.uint64([[2**63 + 1]]),
        "c16": np.array([[1 + 2j, -3j, np.inf]]),
        "c8": np.complex64([[1 + 1j, 2]]),
        "b": np.array([[True, False], [False, True]]),
        "text": "hello",
        "chars": np.array(["abc", "def"]),
        "uni": "h\u00e9llo \u2603",
        "empty_s": "",
        "cube": np.arange(24, dtype=np.uint16).reshape(2, 3, 4),
        "cell": c,
        "nested": nested,
        "s": {"x": 1.0, "y": "why", "z": {"deep": np.arange(3.0)}},
        "sa": sa,
        "sp": sp.csc_matrix(np.array([[0, 1.5], [2, 0], [0, 0]])),
        "spc": sp.csc_matrix(np.array([[0, 1 + 1j], [2, 0]])),
        "spb": sp.csc_matrix(np.array([[True, False], [False, True]])),
        "e": np.zeros((0, 3)),
        "ecell": np.empty((0, 0), dtype=object),
    }


def same(a, b, path):
    if sp.issparse(a) or sp.issparse(b):
        assert sp.issparse(a) and sp.issparse(b), path
        assert a.dtype == b.dtype and a.shape == b.shape, (path, a.dtype, b.dtype)
        assert np.array_equal(a.toarray(), b.toarray(), equal_nan=True), path
        return
    assert type(a) is type(b), (path, type(a), type(b))
    if not isinstance(a, np.ndarray):
        assert a == b, (path, a, b)
        return
    assert a.dtype == b.dtype, (path, a.dtype, b.dtype)
    assert a.shape == b.shape, (path, a.shape, b.shape)
    if a.dtype.names:
        for i in range(a.size):
            for n in a.dtype.names:
                same(a.flat[i][n], b.flat[i][n], "%s[%d].%s" % (path, i, n))
    elif a.dtype.kind == "O":
        for i in range(a.size):
            same(a.flat[i], b.flat[i], "%s{%d}" % (path, i))
    else:
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), (path, a, b)


def main():
    warnings.simplefilter("ignore")
    cmd, x, y = sys.argv[1:4]
    if cmd == "make":
        scipy.io.savemat(x, data())
        scipy.io.savemat(y, data(), do_compression=True)
        return
    a, b = scipy.io.loadmat(x), scipy.io.loadmat(y)
    names = lambda d: sorted(k for k in d if not k.startswith("__"))  # noqa: E731
    assert names(a) == names(b), (names(a), names(b))
    for k in names(a):
        same(a[k], b[k], k)
    print("same")


if __name__ == "__main__":
    main()
