"""Pickles for sciio-pickle's tests, written by CPython's own pickle module.

Usage: python gen_pickle_cases.py OUT_DIR
Writes OUT_DIR/<n>.pkl and OUT_DIR/cases.json: for each pickle its protocol, the value it holds
in a tagged form the Rust test rebuilds from sciio's tree ("expect"), or, for objects that
pickle as calls (datetime zones, numpy arrays), the class/function names the tree must name
("globals").
"""
import datetime as dt
import json
import pickle
import sys
from pathlib import Path

import numpy as np


def tag(v, protocol):
    if v is None:
        return {"none": None}
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, str):
        return {"str": v}
    if isinstance(v, bytes):
        return {"bytes": v.hex()}
    if isinstance(v, list):
        return {"list": [tag(x, protocol) for x in v]}
    if isinstance(v, tuple):
        return {"tuple": [tag(x, protocol) for x in v]}
    if isinstance(v, dict):
        return {"dict": [[tag(k, protocol), tag(x, protocol)] for k, x in v.items()]}
    if isinstance(v, frozenset):
        return {"frozenset": [tag(x, protocol) for x in v]}
    if isinstance(v, set):
        return {"set": [tag(x, protocol) for x in v]}
    raise TypeError(type(v))


plain = [
    None, True, False, 0, 1, -1, 255, 256, 65535, 65536, 2**31 - 1, -2**31, 2**63 - 1, -2**63,
    2**64, -2**70, 10**40, 1.5, -0.0, float("inf"), 1e-300, "text", "ünïcødé ☃ 𝄞", "", "a\nb\\c'\"",
    [], (), {}, [1, [2, [3, [4]]]], (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4),
    {"a": 1, "b": [1, 2]}, {1: "x", (1, 2): None}, list(range(300)),
    {str(i): i for i in range(1200)},
]
shared = [1, 2]
plain.append([shared, shared, (shared,)])
bytes_values = [b"", b"\x00\xffabc", bytes(range(256)) * 2]
sets = [{1, 2, 3}, frozenset({"a"}), set()]

objects = [
    (dt.timezone(dt.timedelta(hours=5)), ["datetime.timezone"]),
    (dt.timedelta(days=1, seconds=3), ["datetime.timedelta"]),
    (np.array(["a", None, 1.5], dtype=object), ["numpy.ndarray", "numpy.dtype"]),
    (np.float64(2.5), ["numpy.dtype"]),
]

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
cases = []


def emit(value, protocol, expect=None, globals_=None):
    name = f"{len(cases)}.pkl"
    (out / name).write_bytes(pickle.dumps(value, protocol=protocol))
    cases.append({"file": name, "protocol": protocol, "expect": expect, "globals": globals_ or []})


for p in range(6):
    for v in plain:
        emit(v, p, tag(v, p))
    recursive = []
    recursive.append(recursive)
    emit(recursive, p, {"list": [{"recursive": None}]})
    for v in bytes_values:
        if p >= 3:
            emit(v, p, tag(v, p))
        else:
            emit(v, p, None, ["_codecs.encode"] if v else [])
    for v in sets:
        if p >= 4:
            emit(v, p, tag(v, p))
        else:
            emit(v, p, None, ["builtins.set" if isinstance(v, set) and not isinstance(v, frozenset)
                             else "builtins.frozenset"])
    for v, names in objects:
        emit(v, p, None, names)

(out / "cases.json").write_text(json.dumps(cases))
print(len(cases))
