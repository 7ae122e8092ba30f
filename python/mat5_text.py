"""numpy text arrays (U, S) and MAT v5/v7 char arrays against scipy.io (for
crates/sciio-cli/tests/mat_text.rs).

usage:
  mat5_text.py make DIR     DIR/text.npz: the arrays; DIR/scipy.mat: scipy.io.savemat's file
                            of the same values (see `reference`)
  mat5_text.py written DIR OUT
                            scipy.io.loadmat reads sciio's file OUT of text.npz as it reads
                            scipy.mat: every variable the same values, dtype and shape
  mat5_text.py read DIR NPZ sciio's NPZ of scipy.mat holds what scipy.io.loadmat reads from
                            scipy.mat: for 3 or more MATLAB dimensions the same array, for a
                            char matrix its rows (sciio gives a row as a 0-d string, as
                            hdf5storage does, and an empty char as ''; a struct array is
                            left out of this check)
Prints "same" or fails naming the first difference.
"""
import os
import sys

import numpy as np
import scipy.io


def arrays():
    rng = np.random.default_rng(3)
    words = np.array(["", "a", "bc", "déf", "ghij"])
    out = {
        "one_d": np.array(["ab", "c", "xyz"]),
        "bytes": np.array([b"ab", b"c", b""]),
        "two_d": np.array([["ab", "c"], ["d", "ef"]]),
        "three_d": words[rng.integers(0, 5, (2, 3, 4))],
        "four_d": words[rng.integers(0, 5, (2, 1, 3, 2))],
        "scalar": np.array("ab", dtype="U3"),
        "scalar_bytes": np.array(b"xyz", dtype="S4"),
        "scalar_empty": np.array("", dtype="U3"),
        "some_empty": np.array(["", "a", ""]),
        "all_empty": np.array(["", ""]),
        "all_empty_bytes": np.array([b"", b""], dtype="S2"),
        "all_empty_3d": np.zeros((2, 2, 2), dtype="U2"),
        "non_ascii": np.array(["héllo", "αβγ", "中文", "a😀b", "\U0010FFFF"]),
        "inner_nul": np.array(["a\x00b", "c"]),
        "high_bytes": np.array([b"a\xe9", b"\xff\x80z", b"q"]),
        "big_endian": np.array([["ab", "c😀"], ["", "é"]], dtype=">U2"),
        "length_0": np.array([], dtype="U3"),
        "length_0_2d": np.zeros((0, 3), dtype="S3"),
        "fortran_2d": np.asfortranarray(np.array([["ab", "c", "d"], ["e", "fg", "h"]])),
        "fortran_3d": np.asfortranarray(np.arange(24).astype("U2").reshape(2, 3, 4)),
        "records": np.array(
            [("ab", [b"x", b"yz"], [["a", "bc"], ["", "d"]]), ("", [b"", b""], [["", ""], ["é", ""]])],
            dtype=[("s", "U3"), ("t", "S2", (2,)), ("u", "U2", (2, 2))],
        ),
    }
    return out


def reference(a):
    """The array whose scipy.io.savemat file sciio's is to read like: a C-order copy (scipy
    writes a Fortran-order array's buffer as if it were C-ordered, scrambling the strings),
    bytes >= 0x80 as the characters U+0080..U+00FF (sciio writes every byte as one
    character; scipy writes the raw bytes as UTF-8 data, a file it then cannot read:
    "buffer is too small for requested array")."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "S" and a.size and (a.view(np.uint8) >= 0x80).any():
        a = np.char.decode(a, "latin-1")
    return a


def same(got, want, name):
    if want.dtype.names:
        # A struct array: the same fields, each element's values the same.
        assert got.dtype.names == want.dtype.names, (name, got.dtype, want.dtype)
        assert got.shape == want.shape, (name, got.shape, want.shape)
        for f in want.dtype.names:
            for i, (g, w) in enumerate(zip(got[f].flat, want[f].flat)):
                same(g, w, f"{name}.{f}[{i}]")
        return
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert np.array_equal(got, want), (name, got, want)


def make(d):
    a = arrays()
    np.savez(os.path.join(d, "text.npz"), **a)
    scipy.io.savemat(os.path.join(d, "scipy.mat"), {k: reference(v) for k, v in a.items()})


def written(d, out):
    want = scipy.io.loadmat(os.path.join(d, "scipy.mat"))
    got = scipy.io.loadmat(out)
    for k in arrays():
        assert k in got, (k, sorted(got))
        same(got[k], want[k], k)


def read(d, npz):
    want = scipy.io.loadmat(os.path.join(d, "scipy.mat"))
    got = np.load(npz)
    for k, a in arrays().items():
        if a.dtype.names:
            continue  # a struct is a folder of members in .npz
        w, g = want[k], got[k]
        if w.ndim >= 2:
            same(g, w, k)
        elif w.size == 0:
            assert g.shape == () and g.item() == "", (k, g)
        else:
            same(np.atleast_1d(g), w, k)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "make":
        make(sys.argv[2])
    elif mode == "written":
        written(sys.argv[2], sys.argv[3])
    elif mode == "read":
        read(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(f"unknown mode {mode}")
    print("same")
