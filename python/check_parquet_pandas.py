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


LOSSY = []


def align_categories(a, b, what):
    """sciio writes categoricals with arrow-rs, whose Parquet dictionary holds the categories in
    order of first appearance and drops unused ones. Where that makes b's categories differ
    from a's, check the values and the ordered flag, record the column in LOSSY (the Rust test
    compares that list with the known one) and give b a's categories so every other check
    stays exact."""
    def fix(x, y, label):
        if not (isinstance(x.dtype, pd.CategoricalDtype) and isinstance(y.dtype, pd.CategoricalDtype)):
            return y
        cx = x.cat if isinstance(x, pd.Series) else x
        cy = y.cat if isinstance(y, pd.Series) else y
        if list(cx.categories) == list(cy.categories):
            return y
        assert cx.ordered == cy.ordered, f"{what}: ordered flag of {label}"
        assert set(cy.categories) <= set(cx.categories), f"{what}: categories of {label}"
        assert list(x.astype(object)) == list(y.astype(object)) or \
            pd.Series(x).astype(object).equals(pd.Series(y).astype(object)), f"{what}: values of {label}"
        LOSSY.append(f"{what}:{label}")
        return cy.set_categories(cx.categories)
    b = b.copy()
    for c in a.columns:
        if c in b.columns:
            b[c] = fix(a[c], b[c], c)
    if a.index.nlevels == 1 and b.index.nlevels == 1:
        b.index = pd.Index(fix(a.index, b.index, f"index={a.index.name}"), name=b.index.name)
    return b


def same(a, b, what):
    b = align_categories(a, b, what)
    assert type(a.index) is type(b.index), f"{what}: index class {type(a.index)} != {type(b.index)}"
    if isinstance(a.index, pd.RangeIndex):
        ra, rb = a.index, b.index
        assert (ra.start, ra.stop, ra.step, ra.name) == (rb.start, rb.stop, rb.step, rb.name), \
            f"{what}: RangeIndex {ra!r} != {rb!r}"
    assert a.index.names == b.index.names, f"{what}: index names {a.index.names} != {b.index.names}"
    assert type(a.columns) is type(b.columns), f"{what}: column index class differs"
    assert list(a.columns.names) == list(b.columns.names), f"{what}: column level names differ"
    assert list(a.columns) == list(b.columns), f"{what}: labels {list(a.columns)} != {list(b.columns)}"
    diff = [(c, repr(x), repr(y)) for c, x, y in zip(a.columns, a.dtypes, b.dtypes) if x != y]
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
        if (pq.read_metadata(orig).created_by or "").startswith("fastparquet"):
            # neither pandas engine reads fastparquet's categoricals, nullable types and
            # timedeltas back as written, so compare sciio's copy with the frame fastparquet
            # was given: labels, index and values exact, dtypes up to time units
            a = fp_sources[name]
            b = align_categories(a, b, name)
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
    print("lossy: " + " ".join(LOSSY))
    print(f"ok {n}")


if __name__ == "__main__":
    main()
