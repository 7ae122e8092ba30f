"""pandas HDFStore interop cases for sciio-hdfstore.

gen DIR FORMAT   writes DIR/{FORMAT}_{zlib,blosc,none}.h5 with every frame/series case as keys
                 (FORMAT: fixed or table) and prints the keys, one `file key` per line.
check DIR        for each DIR/*.parquet named `<store>~<key with / as ~>.parquet`, compares
                 pd.read_parquet(it) with pd.read_hdf(store, key) (a series: as .to_frame()),
                 check_dtype and check_index_type on; prints OK or FAIL lines.
"""
import os
import sys
import warnings

import numpy as np
import pandas as pd

warnings.simplefilter("ignore")
N = 7


def indexes():
    return {
        "range": pd.RangeIndex(N),
        "int": pd.Index(np.arange(N, dtype="int64") * 3 - 5, name="i"),
        "float": pd.Index(np.linspace(-1, 1, N), name="x"),
        "str": pd.Index([f"k{i}é" for i in range(N)], name="key"),
        "dt": pd.date_range("2021-03-01", periods=N, freq="h", name="when"),
        "dtz": pd.date_range("2021-03-27", periods=N, freq="6h", tz="Europe/Paris"),
        "td": pd.timedelta_range("1s", periods=N, freq="250ms", name="dt"),
        "period": pd.period_range("2021-03", periods=N, freq="M", name="p"),
        "multi2": pd.MultiIndex.from_arrays(
            [list("aabbccd"), np.arange(N) % 3], names=["l0", "l1"]),
        "multi3": pd.MultiIndex.from_arrays(
            [list("xxyyzzz"), np.arange(N, dtype="int64"), np.linspace(0, 1, N)],
            names=["a", None, "c"]),
    }


def columns():
    miss = [True, False, False, True, False, False, False]
    f = np.linspace(0, 10, N)
    f[[1, 4]] = np.nan
    s = [f"s{i}" for i in range(N)]
    s[2] = None
    t = pd.Series(pd.date_range("2020-01-01", periods=N, freq="D"))
    t[3] = pd.NaT
    tz = pd.Series(pd.date_range("2020-06-01", periods=N, freq="12h", tz="America/New_York"))
    tz[0] = pd.NaT
    td = pd.Series(pd.to_timedelta(np.arange(N), unit="s"))
    td[5] = pd.NaT
    return {
        "i8": np.arange(N, dtype="int8") - 3,
        "i16": np.arange(N, dtype="int16") * 1000,
        "i32": np.arange(N, dtype="int32") * -70000,
        "i64": np.arange(N, dtype="int64") * 2**40,
        "u8": np.arange(N, dtype="uint8") + 250 - N,
        "u16": np.arange(N, dtype="uint16"),
        "u32": np.arange(N, dtype="uint32") * 600000,
        "u64": np.arange(N, dtype="uint64") * 2**62,
        "f32": np.arange(N, dtype="float32") / 4,
        "f64": f,
        "b": np.array(miss),
        "s": s,
        "t": t.values,
        "tz": tz.values if False else tz.array,
        "td": td.values,
    }


def cases():
    """(key, object) pairs: frames of every dtype over every index kind, series of some."""
    cols = columns()
    out = []
    for iname, index in indexes().items():
        df = pd.DataFrame(cols, index=index)
        out.append((f"frame_{iname}", df))
    base = pd.DataFrame(cols)
    for c in ["f64", "s", "tz", "td", "i32", "b", "t"]:
        out.append((f"series_{c}", pd.Series(base[c].values, name=c, index=indexes()["str"])))
    out.append(("series_unnamed", pd.Series(np.arange(N, dtype="float64"))))
    # Series over every index kind (the frames above cover every dtype over them).
    for iname, index in indexes().items():
        out.append((f"series_ix_{iname}", pd.Series(base["f64"].values, name="v", index=index)))
    for c in ["i8", "u32", "f32", "u16"]:
        out.append((f"series_{c}", pd.Series(base[c].values, name=c, index=indexes()["dt"])))
    out.append(("a/b/nested", base[["i64", "s"]]))
    # pandas' masked string dtype (missing = pd.NA), python and pyarrow storage
    out.append(("string_dtype", pd.DataFrame({
        "sp": pd.array(["x", None, "zé", "", "w", None, "v"], dtype="string[python]"),
        "sa": pd.array(["x", None, "zé", "", "w", None, "v"], dtype="string[pyarrow]"),
    })))
    out.append(("empty", pd.DataFrame({"x": np.array([], dtype="float64")})))
    # Text columns with every value missing: pandas reads a table's values-block column back
    # as `object` (inferred from the values), a data column, a series and the fixed format's
    # blocks as `str`.
    out.append(("text_missing", text_missing_frame()))
    out.append(("series_text_missing", text_missing_frame()["sn"]))
    out.append(("period", period_frame()))
    out.append(("series_period", pd.Series(period_frame()["pm"].values, name="pm")))
    out.append(("series_period_unnamed", pd.Series(period_frame()["pd"].values)))
    # complex columns: stored by pandas in both formats, left out by sciio (Arrow has no
    # complex type) with the reason; the other columns convert.
    out.extend(sentinel_cases())
    out.append(("complex", pd.DataFrame({
        "c64": (np.arange(N) + 1j * np.arange(N)).astype("complex64"),
        "c128": np.arange(N) * (1 - 2j),
        "f": np.linspace(0, 1, N),
    })))
    return out


def text_missing_frame():
    return pd.DataFrame({
        "sn": pd.Series([None] * N, dtype="str"),
        "on": pd.Series([None] * N, dtype=object),
        "s": pd.Series(["a"] + [None] * (N - 1), dtype="str"),
        "i": np.arange(N),
    })


def sentinel_frame():
    """Strings with both missing values and the literal "nan" (pandas 3.1, GH#9604: each string
    column, index and MultiIndex level its own sentinel for missing values, `nan`, or `_nan_`,
    `__nan__`, ... when a value collides with it)."""
    ix = pd.Index(["nan", None, "k2", "k3", "_nan_", "k5", "k6"], dtype="str", name="key")
    return pd.DataFrame({
        "lit": pd.array(["nan", None, "a", "nan", "b", None, "c"], dtype="str"),
        "coll": pd.array(["nan", "_nan_", None, "__nan__", "__nan__x", "", None], dtype="str"),
        "nomiss": pd.array(["nan", "a", "nan", "b", "c", "d", "e"], dtype="str"),
        "miss": pd.array([None, "a", "b", "c", "d", "e", None], dtype="str"),
        "i": np.arange(N),
    }, index=ix)


def sentinel_multi():
    mi = pd.MultiIndex.from_arrays([
        pd.array(["nan", None, "a", "a", "nan", "b", None], dtype="str"),
        pd.array(["_nan_", "nan", None, "x", "x", "y", "y"], dtype="str"),
        np.arange(N)], names=["l0", "l1", "l2"])
    return pd.DataFrame({"lit": sentinel_frame()["lit"].array, "i": np.arange(N)}, index=mi)


def sentinel_cases():
    df = sentinel_frame()
    return [
        ("sentinel", df),
        ("sentinel_multi", sentinel_multi()),
        ("series_sentinel", df["coll"]),
        ("series_sentinel_lit", pd.Series(df["nomiss"].array, name="n",
                                          index=pd.Index(list("abcdefg"), dtype="str"))),
    ]


def period_frame():
    pm = pd.Series(pd.period_range("2020-01", periods=N, freq="M"))
    pm[2] = pd.NaT
    return pd.DataFrame({
        "pm": pm.array,
        "pd": pd.period_range("1999-12-30", periods=N, freq="D"),
        "pq": pd.period_range("2001Q3", periods=N, freq="Q"),
        "ph": pd.period_range("2020-01-01 10:00", periods=N, freq="h"),
        "i": np.arange(N),
    })


def fixed_cases():
    """What only the fixed format holds: date objects, mixed objects, column MultiIndex."""
    import datetime
    dates = [datetime.date(2020, 1, 1) + datetime.timedelta(days=40 * i) for i in range(N)]
    dates[1] = None
    mixed = pd.Series([1, "a", None, 2.5, "b", "c", "d"], dtype=object)
    cols = pd.MultiIndex.from_tuples([("a", "x"), ("a", "y"), ("b", "x")], names=["u", None])
    return [
        ("dates", pd.DataFrame({"d": pd.Series(dates, dtype=object), "s": [f"s{i}" for i in range(N)],
                                "i": np.arange(N)})),
        ("series_dates", pd.Series(dates, dtype=object, name="d")),
        ("mixed", pd.DataFrame({"m": mixed, "i": np.arange(N)})),
        ("colmulti", pd.DataFrame(np.arange(3.0 * N).reshape(N, 3), columns=cols)),
        # column labels pandas keeps as numbers (integer and float levels)
        ("intcols", pd.DataFrame(np.arange(2.0 * N).reshape(N, 2), columns=[3, -40])),
        ("colmulti_num", pd.DataFrame(np.arange(3.0 * N).reshape(N, 3), columns=pd.MultiIndex
                                      .from_tuples([(1, 0.5), (1, 2.0), (20, 0.5)],
                                                   names=["n", "x"]))),
        ("catindex", pd.DataFrame({"x": np.arange(N)}, index=pd.CategoricalIndex(
            list("abcabca"), categories=list("cbaz"), ordered=True, name="ci"))),
    ]


def gen(d, fmt):
    for comp, lib in [("zlib", "zlib"), ("blosc", "blosc"), ("none", None)]:
        path = os.path.join(d, f"{fmt}_{comp}.h5")
        for key, obj in cases():
            if fmt == "table" and len(obj) == 0:
                continue  # pandas writes no table for an empty frame
            kw = dict(complevel=5, complib=lib) if lib else {}
            obj.to_hdf(path, key=key, format=fmt, **kw)
            print(f"{path} /{key}")
        if fmt == "fixed":
            for key, obj in fixed_cases():
                kw = dict(complevel=5, complib=lib) if lib else {}
                obj.to_hdf(path, key=key, format=fmt, **kw)
                print(f"{path} /{key}")
        if fmt == "table":
            for key, obj, extra in table_cases():
                kw = dict(complevel=5, complib=lib) if lib else {}
                obj.to_hdf(path, key=key, format=fmt, **kw, **extra)
                if key.endswith("_pre31"):
                    as_before_pandas_3_1(path, key)
                print(f"{path} /{key}")


def table_cases():
    """What only the table format holds: categoricals, data columns, appended rows."""
    cols = columns()
    cat = pd.Categorical(["b", None, "a", "b", "c", "a", None], categories=["c", "b", "a", "z"])
    df = pd.DataFrame(cols, index=indexes()["str"]).assign(cat=cat)
    ocat = pd.Categorical(list("xyzxyzx"), categories=list("zyx"), ordered=True)
    # PyTables cannot index uint64 columns: every data column but that one
    all_dc = {"data_columns": [c for c in df.columns if c != "u64"]}
    return [
        ("cat", df, {}),
        ("cat_dc", df, all_dc),
        ("dc_some", df, {"data_columns": ["s", "f64", "tz"]}),
        ("ocat_series", pd.Series(ocat, name="o", index=indexes()["int"]), {}),
        ("multi_dc", pd.DataFrame(cols, index=indexes()["multi3"]).drop(columns="u64"),
         {"data_columns": True}),
        # per-column sentinels of data columns; a caller's table-wide nan_rep (the data
        # columns then keep a literal "nan" while "zz" is missing); a store as pandas before
        # 3.1 wrote it (the table-wide "nan", no sentinel markers: "nan" reads as missing).
        ("sentinel_dc", sentinel_frame(), {"data_columns": True}),
        ("sentinel_multi_dc", sentinel_multi(), {"data_columns": True}),
        ("sentinel_user", sentinel_frame(), {"nan_rep": "zz"}),
        ("sentinel_pre31", sentinel_frame(), {"nan_rep": "nan", "data_columns": ["lit"]}),
        ("text_missing_dc", text_missing_frame(), {"data_columns": ["sn"]}),
    ]


def as_before_pandas_3_1(path, key):
    """Strips what pandas 3.1 adds (GH#9604) from a table key: the markers and sentinels."""
    import tables
    with tables.open_file(path, "a") as f:
        group = f.get_node("/" + key)
        for name in ["data_col_nan_rep", "mi_level_nan_rep"]:
            if name in group._v_attrs:
                group._v_attrs.__delattr__(name)
        t = group.table
        for name in list(t._v_attrs._f_list("user")):
            if name.endswith("_nan_rep"):
                t._v_attrs.__delattr__(name)


# Columns sciio leaves out (with the reason): complex numbers, objects of mixed kinds.
LEFT_OUT = {"c64", "c128", "m"}


def expected(store, key):
    obj = pd.read_hdf(store, key)
    if isinstance(obj, pd.Series):
        # An unnamed Series stays unnamed: the frame's one column is labelled None.
        obj = obj.to_frame(name=obj.name)
    obj = obj.drop(columns=[c for c in obj.columns if c in LEFT_OUT])
    # Parquet holds no index frequency: pd.read_parquet never gives one.
    if isinstance(obj.index, (pd.DatetimeIndex, pd.TimedeltaIndex)) and obj.index.freq is not None:
        obj.index = obj.index._with_freq(None)
    # An object column of missing values only is Arrow null in Parquet (pandas' to_parquet
    # writes it so): pd.read_parquet gives None where pd.read_hdf gave NaN.
    for c in obj.columns:
        if obj[c].dtype == object and len(obj) and obj[c].isna().all():
            obj[c] = pd.Series([None] * len(obj), dtype=object, index=obj.index)
    return obj


def check(d):
    n = 0
    for name in sorted(os.listdir(d)):
        if not name.endswith(".parquet"):
            continue
        store, key = name[: -len(".parquet")].split("~", 1)
        key = "/" + key.replace("~", "/")
        n += 1
        try:
            want = expected(os.path.join(d, store), key)
            got = pd.read_parquet(os.path.join(d, name))
            if list(want.columns) == [None]:
                # An unnamed Series: compared as the Series pandas reads.
                pd.testing.assert_series_equal(got.iloc[:, 0], want.iloc[:, 0], check_dtype=True,
                                               check_index_type=True)
                assert got.columns[0] is None, got.columns
            else:
                pd.testing.assert_frame_equal(got, want, check_dtype=True, check_index_type=True)
            print(f"OK {store}:{key}")
        except Exception as e:  # one line per failure
            msg = " ".join(str(e).split())[:400]
            print(f"FAIL {store}:{key}: {type(e).__name__}: {msg}")
    print(f"CHECKED {n}")


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], sys.argv[3])
    else:
        check(sys.argv[2])
