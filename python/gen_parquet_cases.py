"""Writes pandas DataFrames to Parquet with pyarrow and fastparquet, covering every pandas_type and
index form of the pandas Parquet metadata, plus `cases.json` saying what each file holds (derived
from the DataFrame objects, not from the files) for sciio's tests to check against.

usage: gen_parquet_cases.py OUT_DIR
"""
import datetime as dt
import decimal
import json
import os
import sys

import fastparquet
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


def typed_frame(n=6):
    rng = np.random.default_rng(7)
    cats = ["lo", "mid", "hi", "unused"]
    df = pd.DataFrame(
        {
            "b": rng.integers(0, 2, n).astype(bool),
            "i8": np.arange(n, dtype="int8") - 3,
            "i16": np.arange(n, dtype="int16") * -300,
            "i32": np.arange(n, dtype="int32") * 70000,
            "i64": np.arange(n, dtype="int64") * (1 << 40),
            "u8": np.arange(n, dtype="uint8") + 250 - n,
            "u16": np.arange(n, dtype="uint16") * 1000,
            "u32": np.arange(n, dtype="uint32") * 4_000_000,
            "u64": np.arange(n, dtype="uint64") * (1 << 62),
            "f16": np.linspace(0, 1, n).astype("float16"),
            "f32": np.linspace(-1, 1, n).astype("float32"),
            "f64": np.where(np.arange(n) == 2, np.nan, np.linspace(0, 1e10, n)),
            "dt_ns": pd.date_range("2021-03-04 05:06:07.123456789", periods=n, freq="37h").as_unit("ns"),
            "dt_us": pd.date_range("1970-01-01", periods=n, freq="s").as_unit("us"),
            "dtz": pd.date_range("2022-10-30 00:30", periods=n, freq="30min", tz="Europe/Brussels").as_unit("ns"),
            "dtz_us": pd.date_range("2020-01-01", periods=n, freq="D", tz="UTC").as_unit("us"),
            "td": pd.to_timedelta(np.arange(n) * 1_500_000_007, unit="ns"),
            "date": [dt.date(2020, 1, 1) + dt.timedelta(days=int(i) * 40) for i in range(n)],
            "time": [dt.time(int(i) % 24, 30, 15, 500) for i in range(n)],
            "s": ["alpha", "bêta", None, "δ", "", "x" * 20][:n],
            "by": [b"\x00\x01", b"", None, b"xyz", b"\xff", b"q"][:n],
            "dec": [decimal.Decimal("1.25"), decimal.Decimal("-3.50"), None, decimal.Decimal("0.01"),
                    decimal.Decimal("100.00"), decimal.Decimal("7.77")][:n],
            "cat": pd.Categorical((cats[:3] * n)[:n], categories=cats, ordered=False),
            "ocat": pd.Categorical(["hi", "lo", None, "hi", "lo", "lo"][:n], categories=["lo", "hi", "never"], ordered=True),
            "Int64": pd.array([1, None, 3, -4, None, 6][:n], dtype="Int64"),
            "Int8": pd.array([1, -2, None, 4, 5, None][:n], dtype="Int8"),
            "UInt16": pd.array([None, 2, 3, 65535, 0, 1][:n], dtype="UInt16"),
            "boolean": pd.array([True, None, False, True, None, False][:n], dtype="boolean"),
            "Float64": pd.array([1.5, None, 2.5, 3.5, None, 0.0][:n], dtype="Float64"),
        }
    )
    return df


def categorical_frame(n=10):
    """Categoricals of every kind pandas makes: int8/int16/int32 codes, string, integer, float
    and (tz-aware) datetime categories in an order that is not sorted, unused categories,
    ordered and unordered, missing values; written in several row groups, not every one of
    which uses every category."""
    def cat(codes, categories, ordered):
        return pd.Categorical.from_codes(codes, categories=categories, ordered=ordered)
    some = [0, 1, -1, 1, 2, 0, 0, 1, 2, 0][:n]
    return pd.DataFrame({
        "c8": cat([1, 1, 1, 1, 0, 2, 2, -1, 0, 2][:n], ["z", "a", "m", "unused"], False),
        "c16": cat([299 - i * 7 for i in range(n)], [f"k{i:03d}" for i in range(300)][::-1], True),
        "c32": cat([i * 3000 for i in range(n)], np.arange(33000, dtype="int64") * -2, False),
        "cint": cat(some, pd.Index([30, 10, 20, 99], dtype="int64"), True),
        "ci8": cat(some, pd.Index([5, -3, 7, 1], dtype="int8"), False),
        "cf": cat(some, [2.5, -1.0, 0.25, 7.0], False),
        "cdt": cat(some, pd.DatetimeIndex(["2021-05-01", "1999-12-31 23:59:59.999999999", "2030-01-01",
                                           "2000-01-01"]).as_unit("ns"), True),
        "cdtz": cat(some, pd.DatetimeIndex(["2021-05-01 12:00", "2020-03-29 01:30", "1990-01-01"],
                                           tz="Europe/Paris").as_unit("ns"), False),
    })


def pyarrow_cases():
    """name -> (DataFrame, to_parquet keyword arguments)."""
    t = typed_frame()
    cases = {}
    cases["types"] = (t, {})
    cases["types_zstd_rg"] = (t, {"compression": "zstd", "row_group_size": 2})
    cases["types_gzip"] = (t, {"compression": "gzip"})
    cases["types_lz4_nodict"] = (t, {"compression": "lz4", "use_dictionary": False})
    cases["types_none"] = (t, {"compression": None})
    cases["types_brotli"] = (t, {"compression": "brotli"})

    r = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": list("wxyz")},
                     index=pd.RangeIndex(5, 17, 3, name="r"))
    cases["range_step_named"] = (r, {})
    cases["range_unnamed"] = (pd.DataFrame({"a": [1, 2, 3]}, index=pd.RangeIndex(10, 7, -1)), {})
    cases["named_index"] = (pd.DataFrame({"v": [1, 2, 3]}, index=pd.Index(["k", "j", "i"], name="key")), {})
    cases["unnamed_index"] = (pd.DataFrame({"v": [1.5, 2.5, 3.5]}, index=pd.Index([10, 3, 7])), {})
    cases["index_name_collision"] = (pd.DataFrame({"a": [1, 2], "__index_level_0__": [3, 4]},
                                                  index=pd.Index([7, 8], name="a")), {})
    cases["range_index_as_column"] = (pd.DataFrame({"a": [1, 2, 3]}, index=pd.RangeIndex(0, 3, name="rr")),
                                      {"index": True})
    mi = pd.MultiIndex.from_arrays(
        [["a", "a", "b", "b"], [1, 2, 1, 2], pd.date_range("2020", periods=4, tz="Asia/Tokyo")],
        names=["k1", None, "when"])
    cases["multiindex_rows"] = (pd.DataFrame({"x": [1, 2, 3, 4], "y": list("pqrs")}, index=mi), {})
    mc = pd.DataFrame(np.arange(8).reshape(2, 4).astype("int64"),
                      columns=pd.MultiIndex.from_tuples(
                          [("a", "x"), ("a", "y"), ("b", "x"), ("b", "it's")], names=["l0", "l1"]))
    cases["multiindex_columns"] = (mc, {})
    mc2 = mc.copy()
    mc2.columns = mc.columns.set_names([None, None])
    mc2.index = pd.Index(["r0", "r1"], name="row")
    cases["multiindex_columns_unnamed"] = (mc2, {})
    named_cols = pd.DataFrame({"a": [1, 2]})
    named_cols.columns.name = "colname"
    cases["column_index_named"] = (named_cols, {})
    cases["tz_index"] = (pd.DataFrame({"v": [1, 2, 3]},
                                      index=pd.date_range("2021-01-01", periods=3, freq="h",
                                                          tz="America/New_York", name="t").as_unit("ns")), {})
    cases["categorical_index"] = (pd.DataFrame({"v": [1, 2, 3]},
                                               index=pd.CategoricalIndex(["b", "a", "b"], categories=["a", "b", "c"],
                                                                         ordered=True, name="ci")), {})
    cases["categoricals"] = (categorical_frame(), {"row_group_size": 4})
    cases["categoricals_zstd"] = (categorical_frame(), {"compression": "zstd"})
    cases["empty_rows"] = (t.iloc[:0], {})
    cases["empty_rows_named_index"] = (pd.DataFrame({"a": pd.Series([], dtype="float64")},
                                                    index=pd.Index([], dtype="int64", name="i")), {})
    attrs = pd.DataFrame({"a": [1, 2]})
    attrs.attrs = {"source": "sciio test", "n": 2}
    cases["attrs"] = (attrs, {})
    # fixed-offset zones stay fixed offsets (pyarrow writes "+05:00", not a named zone), in
    # columns and index levels; tz-aware index levels keep their unit (ns and us)
    plus5 = dt.timezone(dt.timedelta(hours=5))
    minus0330 = dt.timezone(-dt.timedelta(hours=3, minutes=30))
    fixed = pd.DataFrame(
        {"p5": pd.date_range("2021-06-01 12:00", periods=4, freq="90min", tz=plus5).as_unit("ns"),
         "m0330_us": pd.date_range("1999-12-31 23:00", periods=4, freq="h", tz=minus0330).as_unit("us"),
         "v": [1, 2, 3, 4]},
        index=pd.MultiIndex.from_arrays(
            [pd.date_range("2020-03-29 00:30", periods=4, freq="h", tz="Europe/Paris").as_unit("ns"),
             pd.date_range("2020-01-01", periods=4, freq="D", tz=plus5).as_unit("us"),
             pd.date_range("2020-01-01", periods=4, freq="s", tz="UTC").as_unit("ms")],
            names=["paris_ns", "plus5_us", "utc_ms"]))
    cases["fixed_offsets"] = (fixed, {})
    cases["tz_index_us"] = (pd.DataFrame({"v": [1, 2]}, index=pd.DatetimeIndex(
        ["2021-01-01 00:00:00.000001", "2022-01-01"], tz="America/New_York", name="t").as_unit("us")), {})
    cases["fixed_offset_index"] = (pd.DataFrame({"v": [1, 2]}, index=pd.DatetimeIndex(
        ["2021-01-01 00:00:00.000000001", "2022-01-01"]).tz_localize(plus5).rename("t")), {})
    return cases


def fastparquet_cases():
    n = 5
    df = pd.DataFrame(
        {
            "i64": np.arange(n, dtype="int64"),
            "i16": np.arange(n, dtype="int16"),
            "u32": np.arange(n, dtype="uint32"),
            "f32": np.linspace(0, 1, n).astype("float32"),
            "f64": np.linspace(0, 1, n),
            "b": np.array([True, False] * 3)[:n],
            "s": ["a", "b", None, "d", "e"],
            "by": [b"a", b"bb", b"", b"\x00", b"z"],
            "cat": pd.Categorical(["x", "y", "x", "x", "y"], categories=["x", "y", "z"], ordered=True),
            "dt": pd.date_range("2020-02-02", periods=n, freq="h").as_unit("ns"),
            "dtz": pd.date_range("2020-02-02", periods=n, freq="h", tz="Europe/Paris").as_unit("ns"),
            "td": pd.to_timedelta(np.arange(n), unit="s"),
            "Int32": pd.array([1, None, 3, 4, 5], dtype="Int32"),
            "boolean": pd.array([True, None, False, True, True], dtype="boolean"),
        },
        index=pd.Index([10, 20, 30, 40, 50], name="idx"),
    )
    cases = {}
    cases["fp_types"] = (df, {})
    cases["fp_range"] = (df.reset_index(drop=True), {})
    mi = df.set_index(["s", "i16"], append=True)
    cases["fp_multiindex"] = (mi[["i64", "f64"]], {})
    js = pd.DataFrame({"j": [{"a": 1}, [1, 2, "x"], None, "str", 3.5]})
    cases["fp_json"] = (js, {"object_encoding": {"j": "json"}})
    # the dtypes of fastparquet's own metadata flavour: categoricals (also as a MultiIndex
    # level), timedelta, nullable Int64 and boolean, int96 times, with its codecs
    flavour = pd.DataFrame(
        {
            "cat": pd.Categorical(["b", "a", None, "b", "c"], categories=["c", "b", "a", "never"]),
            "ocat": pd.Categorical(["x", "y", "x", "x", "y"], categories=["y", "x"], ordered=True),
            "td": pd.to_timedelta([0, 1, None, 3, 4], unit="ms"),
            "Int64": pd.array([1, None, 3, -4, 5], dtype="Int64"),
            "boolean": pd.array([True, None, False, True, None], dtype="boolean"),
            "dt": pd.date_range("1969-12-31 23:59:58", periods=n, freq="1001ms").as_unit("ns"),
            "dtz": pd.date_range("2020-10-25 01:30", periods=n, freq="30min", tz="Europe/Paris").as_unit("ns"),
            "s": ["a", None, "ccc", "", "é"],
        },
        index=pd.MultiIndex.from_arrays(
            [pd.Categorical(["k", "j", "k", "j", "k"], categories=["k", "j"]), [5, 4, 3, 2, 1]],
            names=["level_cat", "level_int"]),
    )
    cases["fp_flavour"] = (flavour, {})
    cases["fp_flavour_int96"] = (flavour, {"times": "int96"})
    cases["fp_flavour_int96_gzip"] = (flavour.reset_index(), {"times": "int96", "compression": "GZIP"})
    for codec in ["SNAPPY", "ZSTD", "BROTLI", "LZ4", "LZ4_RAW", None]:
        cases[f"fp_codec_{str(codec).lower()}"] = (df, {"compression": codec})
    cases["fp_rowgroups"] = (flavour, {"row_group_offsets": 2, "times": "int96"})
    cases["fp_empty"] = (flavour.iloc[:0], {})
    return cases


def category_value(c):
    """A category as JSON: datetimes as nanoseconds since the epoch, numbers as numbers."""
    if isinstance(c, pd.Timestamp):
        return int(c.as_unit("ns").value)
    if isinstance(c, (int, np.integer)):
        return int(c)
    if isinstance(c, (float, np.floating)):
        return float(c)
    return str(c)


def expectation(name, df, writer, kwargs):
    index = df.index
    if isinstance(index, pd.RangeIndex) and not kwargs.get("index", False):
        idx = {"kind": "range", "start": index.start, "stop": index.stop, "step": index.step,
               "name": index.name}
    else:
        idx = {"kind": "levels", "names": [None if n is None else str(n) for n in index.names]}
    labels = [str(c) if isinstance(c, tuple) else c for c in df.columns]
    cats = {}
    tzs = {}
    for label, col in zip(labels, df.columns):
        dtype = df[col].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            cats[label] = {"ordered": bool(dtype.ordered),
                           "categories": [category_value(c) for c in dtype.categories]}
        if isinstance(dtype, pd.DatetimeTZDtype):
            tzs[label] = pa.lib.tzinfo_to_string(dtype.tz)
    return {
        "name": name,
        "file": f"{name}.parquet",
        "writer": writer,
        "rows": len(df),
        "index": idx,
        "labels": labels,
        "column_level_names": [None if n is None else str(n) for n in df.columns.names],
        "categoricals": cats,
        "timezones": tzs,
        "attrs": df.attrs,
    }


def refused_case(out):
    """A file whose 'obj' column is marked as pickled objects (as pandas < 0.23 with
    fastparquet's object_encoding='pickle' wrote), and one marked bson; other columns are plain."""
    import pickle
    table = pa.table({"ok": [1, 2], "obj": [pickle.dumps({"a": 1}), pickle.dumps([2])],
                      "bs": [b"\x05\x00\x00\x00\x00", b"\x05\x00\x00\x00\x00"]})
    meta = {
        "index_columns": [{"kind": "range", "name": None, "start": 0, "stop": 2, "step": 1}],
        "column_indexes": [],
        "columns": [
            {"name": "ok", "field_name": "ok", "pandas_type": "int64", "numpy_type": "int64", "metadata": None},
            {"name": "obj", "field_name": "obj", "pandas_type": "object", "numpy_type": "object",
             "metadata": {"encoding": "pickle"}},
            {"name": "bs", "field_name": "bs", "pandas_type": "object", "numpy_type": "object",
             "metadata": {"encoding": "bson"}},
        ],
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": pd.__version__,
    }
    table = table.replace_schema_metadata({"pandas": json.dumps(meta)})
    pq.write_table(table, os.path.join(out, "refused_objects.parquet"))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    expected = []
    for name, (df, kwargs) in pyarrow_cases().items():
        df.to_parquet(os.path.join(out, f"{name}.parquet"), engine="pyarrow", **kwargs)
        expected.append(expectation(name, df, "pyarrow", kwargs))
    for name, (df, kwargs) in fastparquet_cases().items():
        fastparquet.write(os.path.join(out, f"{name}.parquet"), df, **kwargs)
        expected.append(expectation(name, df, "fastparquet", kwargs))
    refused_case(out)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(expected, f, indent=1, default=str)
    print(len(expected))


if __name__ == "__main__":
    main()
