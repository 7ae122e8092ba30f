"""Checks Parquet files written by sciio with pandas.read_parquet (pyarrow engine).

usage:
  check_parquet_pandas.py roundtrip ORIG COPY [ORIG COPY ...]
      pandas' frame from sciio's COPY equals() pandas' frame from ORIG: values, dtypes, index
      class and values (RangeIndex start/stop/step), column labels and their levels,
      categorical categories and ordered flag, time zones, attrs.
  check_parquet_pandas.py built DIR
      the frames sciio's tests build in Rust (DIR/<name>.parquet) equal the same frames built
      here in pandas.
Prints "ok N" with the number of files checked; any difference raises.
"""
import datetime as dt
import os
import sys

import numpy as np
import pandas as pd


def same_categories(a, b, what, where_a_is=False):
    """Categorical columns and index levels of a and b have the same categories, in the same
    order (unused ones included), and the same ordered flag (where_a_is: only those that are
    categorical in a: fastparquet's metadata calls some string index levels categorical, which
    sciio follows and pandas does not)."""
    def check(x, y, label):
        cx, cy = x.dtype, y.dtype
        if isinstance(cx, pd.CategoricalDtype) or (isinstance(cy, pd.CategoricalDtype) and not where_a_is):
            assert isinstance(cx, pd.CategoricalDtype) and isinstance(cy, pd.CategoricalDtype), \
                f"{what}: {label} is {cx} vs {cy}"
            assert list(cx.categories) == list(cy.categories), \
                f"{what}: categories of {label}: {list(cx.categories)} != {list(cy.categories)}"
            assert cx.ordered == cy.ordered, f"{what}: ordered flag of {label}"
    for c in a.columns:
        if c in b.columns:
            check(a[c], b[c], c)
    for i in range(min(a.index.nlevels, b.index.nlevels)):
        check(a.index.get_level_values(i), b.index.get_level_values(i), f"index level {i}")


def same(a, b, what):
    same_categories(a, b, what)
    assert type(a.index) is type(b.index), f"{what}: index class {type(a.index)} != {type(b.index)}"
    if isinstance(a.index, pd.RangeIndex):
        ra, rb = a.index, b.index
        assert (ra.start, ra.stop, ra.step, ra.name) == (rb.start, rb.stop, rb.step, rb.name), \
            f"{what}: RangeIndex {ra!r} != {rb!r}"
    assert a.index.names == b.index.names, f"{what}: index names {a.index.names} != {b.index.names}"
    assert type(a.columns) is type(b.columns), f"{what}: column index class differs"
    assert list(a.columns.names) == list(b.columns.names), f"{what}: column level names differ"
    assert list(a.columns) == list(b.columns), f"{what}: labels {list(a.columns)} != {list(b.columns)}"
    # each column's own dtype: DataFrame.dtypes of a frame fastparquet's engine built can show
    # a stale categorical dtype (categories range(0, n), before fastparquet set them)
    dtypes = [(a.columns[i], a.iloc[:, i].dtype, b.iloc[:, i].dtype) for i in range(a.shape[1])]
    diff = [(c, repr(x), repr(y)) for c, x, y in dtypes if x != y]
    assert not diff, f"{what}: dtypes differ: {diff}"
    for c in a.columns:
        if isinstance(a[c].dtype, pd.CategoricalDtype):
            assert list(a[c].cat.categories) == list(b[c].cat.categories), f"{what}: categories of {c}"
            assert a[c].cat.ordered == b[c].cat.ordered, f"{what}: ordered flag of {c}"
    for i in range(a.index.nlevels):
        la, lb = a.index.get_level_values(i), b.index.get_level_values(i)
        assert la.dtype == lb.dtype, f"{what}: index level {i} dtype {la.dtype} != {lb.dtype}"
    assert a.attrs == b.attrs, f"{what}: attrs {a.attrs} != {b.attrs}"
    pd.testing.assert_frame_equal(a, b, check_exact=True, check_index_type=True,
                                  check_column_type=True, check_categorical=True, check_freq=False)
    assert a.equals(b), f"{what}: equals() is False"


def roundtrip(pairs):
    import pyarrow.parquet as pq
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_parquet_cases
    fp_sources = {f"{k}.parquet": v[0] for k, v in gen_parquet_cases.fastparquet_cases().items()}
    for orig, copy in zip(pairs[::2], pairs[1::2]):
        b = pd.read_parquet(copy, engine="pyarrow")
        name = os.path.basename(orig)
        if name == "fp_empty.parquet":
            # no row groups: fastparquet's engine makes up categories range(0, n) and object
            # strings; the file holds no categories, so compare the frame's shape and labels
            a = fp_sources[name]
            assert len(b) == 0 and list(b.columns) == list(a.columns), (a, b)
            assert list(b.index.names) == list(a.index.names), (a.index.names, b.index.names)
            continue
        if (pq.read_metadata(orig).created_by or "").startswith("fastparquet") \
                and name != "fp_json.parquet":
            # fastparquet's metadata flavour (categoricals, nullable types, timedeltas, int96
            # times) is restored by fastparquet's own engine: sciio's copy, read by pandas'
            # default engine, equals that, dtypes included
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a = pd.read_parquet(orig, engine="fastparquet")
            same(a, b, name)
            continue
        if name == "fp_json.parquet":
            # JSON-encoded objects (object_encoding='json'): compare with the frame fastparquet
            # was given, the JSON text decoded
            a = fp_sources[name]
            same_categories(a, b, name, where_a_is=True)
            for c in a.columns:
                if a[c].dtype == object and all(isinstance(v, (dict, list, str, float, type(None)))
                                                for v in a[c]) and name == "fp_json.parquet":
                    # JSON-encoded objects: pyarrow hands back the JSON text
                    import json
                    b[c] = pd.Series([json.loads(v) if isinstance(v, str) else None for v in b[c]],
                                     dtype=object, index=b.index)
            pd.testing.assert_frame_equal(a, b, check_dtype=False, check_index_type=False,
                                          check_categorical=False, check_exact=True)
            continue
        a = pd.read_parquet(orig, engine="pyarrow")
        same(a, b, name)
    return len(pairs) // 2


def built_frames():
    """The frames tests/interop.rs builds with FrameBuilder, built here with pandas."""
    frames = {}
    frames["range_step"] = pd.DataFrame(
        {"x": np.array([1.5, -2.0, np.nan], dtype="float64"), "n": np.array([7, 8, 9], dtype="int32")},
        index=pd.RangeIndex(4, 10, 2, name="r"))
    cats = pd.Categorical.from_codes([1, 0, -1, 1], categories=["lo", "hi", "unused"], ordered=True)
    frames["types"] = pd.DataFrame({
        "s": pd.Series(["a", None, "ccc", "d"], dtype="str"),
        "cat": cats,
        "ts": pd.to_datetime([0, 1_000_000, 2_000_000_000, 3], unit="us").as_unit("us").tz_localize("UTC")
              .tz_convert("Europe/Brussels"),
        "naive": pd.to_datetime([5, 6, 7, 8], unit="ns").as_unit("ns"),
        "td": pd.to_timedelta([1, 2, 3, 4], unit="ms").as_unit("ms"),
        "mask": pd.array([1, None, 3, 4], dtype="Int64"),
        "flag": np.array([True, False, True, True]),
        "by": [b"x", b"", None, b"\x00"],
        "date": [dt.date(1970, 1, 1), dt.date(2000, 2, 29), None, dt.date(2024, 12, 31)],
    })
    frames["named_index"] = pd.DataFrame({"v": np.array([1, 2, 3], dtype="int64")},
                                         index=pd.Index(["a", "b", "c"], name="key", dtype="str"))
    frames["collision"] = pd.DataFrame({"a": np.array([1, 2], dtype="int64")},
                                       index=pd.Index(np.array([5, 6], dtype="int64"), name="a"))
    mi = pd.MultiIndex.from_arrays([pd.Index(["x", "x", "y"], dtype="str"), np.array([1, 2, 1], dtype="int64")],
                                   names=["k", None])
    frames["multiindex"] = pd.DataFrame({"v": np.array([0.5, 1.5, 2.5])}, index=mi)
    cols = pd.MultiIndex.from_tuples([("a", "x"), ("a", "y"), ("b", "it's")], names=["l0", "l1"])
    frames["multicolumns"] = pd.DataFrame(np.array([[1, 2, 3], [4, 5, 6]], dtype="int64"), columns=cols)
    frames["empty"] = pd.DataFrame({"a": pd.Series([], dtype="float64"), "s": pd.Series([], dtype="str")})
    return frames


def built(directory):
    frames = built_frames()
    for name, expected in frames.items():
        got = pd.read_parquet(os.path.join(directory, f"{name}.parquet"), engine="pyarrow")
        same(expected, got, name)
    return len(frames)


def main():
    mode = sys.argv[1]
    if mode == "roundtrip":
        n = roundtrip(sys.argv[2:])
    elif mode == "built":
        n = built(sys.argv[2])
    else:
        raise SystemExit(f"unknown mode {mode}")
    assert n > 0, "nothing checked"
    print(f"ok {n}")


if __name__ == "__main__":
    main()
