"""`SELECT *` through sciio's SQL against pandas reading the same file: zero-row sources and
Parquet files whose pandas index is stored as columns.

    sql_frames.py make DIR     writes the sources into DIR and prints one line per case:
                               NAME TARGET (TARGET as `sciio sql` names it, relative to DIR)
    sql_frames.py check DIR    compares DIR/NAME.out.parquet (the result of `SELECT * FROM
                               'TARGET'` written by sciio) with pandas' frame of the source:
                               same column names, values and dtype kinds; prints
                               'N passed, N failed' and exits 1 on any difference

pandas' frame of a source: `pd.DataFrame(table.read())` for a PyTables Table, of
`np.load(f)` for a .npy, `pd.read_hdf(f, key).reset_index()` for a store key,
`pd.read_parquet(f).reset_index()` for a Parquet file whose index is stored as columns
(a RangeIndex kept in the metadata only is no column: `reset_index(drop=True)` then).
"""
import json
import os
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import tables

RECORD = [("id", "<i8"), ("x", "<f8"), ("name", "S6"), ("ok", "?")]

# name, the table as `sciio sql` names it (relative to DIR); make() writes them.
CASES = [
    ("table_zero_rows", "t0.h5:/t"),
    ("npy_zero_rows", "s0.npy"),
    ("store_zero_rows", "store0.h5:/df"),
    ("parquet_zero_rows", "p0.parquet"),
    ("parquet_named_index", "named.parquet"),
    ("parquet_named_index_zero_rows", "named0.parquet"),
    ("parquet_unnamed_index", "unnamed.parquet"),
    ("parquet_multiindex", "multi.parquet"),
    ("parquet_string_index", "strings.parquet"),
    ("parquet_index_name_taken", "taken.parquet"),
    # reset_index() of an unnamed Series calls its values 0, of a named one by its name
    ("store_unnamed_series_table", "series.h5:/s"),
    ("store_unnamed_series_fixed", "series.h5:/f"),
    ("store_named_series_table", "series.h5:/named"),
    # fixed Series read batch by batch: text (None, NaN) over a MultiIndex (a missing code),
    # zoned times over a CategoricalIndex
    ("store_named_series_fixed_multi", "series.h5:/fixed_multi"),
    ("store_unnamed_series_fixed_categorical", "series.h5:/fixed_cats"),
]


def zero_row_store(path):
    """A `table` key whose rows were all removed (pandas writes no table for an empty frame)."""
    df = pd.DataFrame({"id": np.arange(3, dtype=np.int64), "y": np.zeros(3),
                       "label": ["a", "b", "c"]},
                      index=pd.Index(np.arange(3, dtype=np.int64), name="row"))
    df.to_hdf(path, key="df", format="table", data_columns=["id"])
    with pd.HDFStore(path) as store:
        store.remove("df", where="index >= 0")


def make(d):
    empty = np.zeros(0, dtype=RECORD)
    with tables.open_file(os.path.join(d, "t0.h5"), "w") as f:
        f.create_table("/", "t", obj=empty)
    np.save(os.path.join(d, "s0.npy"), empty)
    zero_row_store(os.path.join(d, "store0.h5"))
    base = pd.DataFrame({"k": np.arange(6, dtype=np.int64) * 3, "w": np.linspace(0, 1, 6),
                         "tag": ["a", "b", "c", "d", "e", "f"]})
    base.iloc[:0].to_parquet(os.path.join(d, "p0.parquet"))
    # Index values in no arithmetic progression: pandas stores a range as metadata only.
    named = base.set_index(pd.Index([10, 13, 11, 20, 15, 16], name="when"))
    named.to_parquet(os.path.join(d, "named.parquet"))
    named.iloc[:0].to_parquet(os.path.join(d, "named0.parquet"))
    unnamed = base.set_index(pd.Index([100, 103, 101, 120, 105, 106]))
    unnamed.to_parquet(os.path.join(d, "unnamed.parquet"))
    multi = base.set_index(pd.MultiIndex.from_arrays(
        [np.arange(6) % 2, ["u", "v", "w", "x", "y", "z"]], names=["half", None]))
    multi.to_parquet(os.path.join(d, "multi.parquet"))
    strings = base.set_index(pd.Index(["r%d" % i for i in range(6)]))
    strings.to_parquet(os.path.join(d, "strings.parquet"))
    # An unnamed index beside a column named `index`: reset_index() calls it `level_0`.
    taken = base.assign(index=np.arange(6) * 2).set_index(pd.Index([7, 9, 8, 1, 2, 3]))
    taken.to_parquet(os.path.join(d, "taken.parquet"))
    values = pd.Series([1.5, np.nan, 3.5, 4.0], index=pd.Index([5, 6, 7, 8], name="at"))
    series = os.path.join(d, "series.h5")
    values.reset_index(drop=True).to_hdf(series, key="s", format="table", mode="w")
    values.to_hdf(series, key="f", format="fixed")
    values.rename("0").to_hdf(series, key="named", format="table")
    multi = pd.MultiIndex.from_arrays([[1, 1, 2, 2, 3, 3], ["x", "y", None, "y", "x", "z"]],
                                      names=["n", "tag"])
    words = pd.Series(["a", None, "ünï", np.nan, "", "b"], dtype="str", name="word", index=multi)
    words.to_hdf(series, key="fixed_multi", format="fixed")
    bands = pd.CategoricalIndex(["lo", "hi", None, "lo", "hi", "lo"], categories=["lo", "hi"],
                                name="band")
    times = pd.date_range("2024-03-30", periods=6, freq="7h", tz="Europe/Paris")
    pd.Series(times, index=bands).to_hdf(series, key="fixed_cats", format="fixed")
    for name, target in CASES:
        print(name, target)


def expected(d, target):
    path, _, node = target.partition(":")
    path = os.path.join(d, path)
    if path.endswith(".npy"):
        return pd.DataFrame(np.load(path))
    if path.endswith(".parquet"):
        meta = json.loads(pq.read_schema(path).metadata[b"pandas"])
        frame = pd.read_parquet(path)
        stored = any(isinstance(c, str) for c in meta["index_columns"])
        return frame.reset_index(drop=not stored)
    with tables.open_file(path) as f:
        is_store = "pandas_type" in f.get_node(node)._v_attrs
        if not is_store:
            return pd.DataFrame(f.get_node(node).read())
    return pd.read_hdf(path, node).reset_index()


def kinds(frame):
    """numpy dtype kinds; text and bytes alike 'O' (pandas' str dtype or object)."""
    return ["O" if not isinstance(t, np.dtype) or t.kind in "OSU" else t.kind
            for t in frame.dtypes]


def check(d):
    cases = CASES
    failed = []
    for name, target in cases:
        got = pd.read_parquet(os.path.join(d, name + ".out.parquet"))
        want = expected(d, target)
        # SQL names columns by text: reset_index() of an unnamed Series calls its values 0
        want.columns = [str(c) for c in want.columns]
        if list(got.columns) != list(want.columns):
            failed.append(f"{name}: columns {list(got.columns)} != {list(want.columns)}")
            continue
        if kinds(got) != kinds(want):
            failed.append(f"{name}: dtype kinds {kinds(got)} != {kinds(want)}")
            continue
        try:
            pd.testing.assert_frame_equal(got.astype(object), want.astype(object),
                                          check_dtype=False, check_index_type=False)
        except AssertionError as e:
            failed.append(f"{name}: {e}")
    for p in failed:
        print(p)
        print(p, file=sys.stderr)
    print(f"{len(cases) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "check":
        check(sys.argv[2])
