"""Frames pandas writes to Parquet, for sciio to write into pandas HDFStore keys; then the check
that `pd.read_hdf(store, key)` equals `pd.read_parquet(frame)` (dtypes and index checked).

    hdfstore_write_cases.py gen DIR     -> writes DIR/<case>.parquet, prints "<case> <args...>"
                                           (the extra `sciio convert` arguments of the case)
    hdfstore_write_cases.py check DIR   -> compares DIR/<case>.h5:/df with DIR/<case>.parquet
                                           (and sciio's reading of it, DIR/<case>.back.parquet),
                                           prints "FAIL ..." lines and "CHECKED n"
    hdfstore_write_cases.py refused DIR -> writes DIR/bad_<case>.parquet frames pandas cannot
                                           store in a table, prints "<case> <pandas' reason>"
"""

import sys
import traceback
import warnings

import numpy as np
import pandas as pd

N = 7


def columns():
    s = pd.Series(["a", "bé", None, "", "long string ✓", "x", "nan?"], dtype="str")
    tz = pd.Series(pd.date_range("2021-03-27", periods=N, freq="6h", tz="Europe/Paris"))
    tz[1] = pd.NaT
    naive = pd.Series(pd.date_range("2020-01-01", periods=N, freq="D"))
    naive[2] = pd.NaT
    f64 = np.linspace(-1, 1, N)
    f64[3] = np.nan
    return {
        "i8": np.arange(N, dtype="int8") - 3,
        "i16": np.arange(N, dtype="int16") * -300,
        "i32": np.arange(N, dtype="int32") * 70000,
        "i64": np.arange(N, dtype="int64") * 2**40,
        "u8": np.arange(N, dtype="uint8") + 250 - N,
        "u16": np.arange(N, dtype="uint16") * 9000,
        "u32": np.arange(N, dtype="uint32") * 600000000,
        "u64": np.arange(N, dtype="uint64") * 2**61,
        "f32": np.linspace(0, 1, N, dtype="float32"),
        "f64": f64,
        "b": np.arange(N) % 3 == 0,
        "s": s,
        "dt": naive,
        "dtns": pd.Series(pd.date_range("2000-01-01", periods=N, freq="ns", unit="ns")),
        "dtz": tz,
        "utc": pd.Series(pd.date_range("2022-01-01", periods=N, freq="h", tz="UTC")),
        "off": pd.Series(pd.date_range("2022-01-01", periods=N, freq="h", tz="+05:30")),
        "td": pd.to_timedelta(np.arange(N) * 1.5, unit="s"),
        "cat": pd.Categorical(["x", "y", None, "x", "z", "y", "x"], categories=["z", "y", "x"]),
        "ocat": pd.Categorical(["lo", "hi", "lo", "hi", "lo", "mid", "mid"],
                               categories=["lo", "mid", "hi"], ordered=True),
        "icat": pd.Categorical([10, 20, 10, 30, 20, 10, 10]),
    }


def period_frame():
    pm = pd.Series(pd.period_range("2020-01", periods=N, freq="M"))
    pm[2] = pd.NaT
    return pd.DataFrame({
        "pm": pm,
        "pd": pd.period_range("1999-12-30", periods=N, freq="D"),
        "pq": pd.period_range("2001Q3", periods=N, freq="Q"),
        "ph": pd.period_range("2020-01-01 10:00", periods=N, freq="h"),
        "i": np.arange(N),
    })


def dates_frame():
    import datetime
    dates = [datetime.date(1999, 12, 31) + datetime.timedelta(days=400 * i) for i in range(N)]
    dates[3] = None
    return pd.DataFrame({"d": pd.Series(dates, dtype=object), "s": [f"s{i}" for i in range(N)]})


def sentinel_frame():
    """Strings with both missing values and the literal "nan": pandas 3.1 (GH#9604) gives each
    string column, index and MultiIndex level its own sentinel (`nan`, or `_nan_`, `__nan__`,
    ... when a value collides), so that pandas reads "nan" back as text."""
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
    df, multi = sentinel_frame(), sentinel_multi()
    fixed = ["--store-format", "fixed"]
    return {
        "sentinel": (df, []),
        "sentinel_dc": (df, ["--data-columns", "all"]),
        "sentinel_multi": (multi, []),
        "sentinel_multi_dc": (multi, ["--data-columns", "lit"]),
        "sentinel_fixed": (df, fixed),
        "sentinel_fixed_multi": (multi, fixed),
        "sentinel_series": (df[["coll"]], ["--series"]),
        "sentinel_series_fixed": (df[["coll"]], ["--series"] + fixed),
        "sentinel_noindexmiss": (df.set_axis(pd.Index(list("abcdefg"), dtype="str")), []),
    }


def nan_rep_attrs(path):
    """{(node below /df, attribute): value} of every attribute naming a NaN sentinel; a values
    block's by the labels it holds (pandas and sciio may order the blocks differently)."""
    import tables
    out = {}
    with tables.open_file(path, "r") as f:
        for node in f.walk_nodes("/df"):
            attrs = node._v_attrs
            names = attrs._f_list("user")
            for name in names:
                if "nan_rep" in name:
                    value = attrs[name]
                    col = name[: -len("_nan_rep")]
                    if col.startswith("values_block_") and f"{col}_kind" in names:
                        name = f"{list(attrs[col + '_kind'])}_nan_rep"
                    out[(node._v_pathname, name)] = None if value is None else str(value)
    return out


def same_sentinels_as_pandas(d, name, df, args):
    """sciio's key carries the sentinel attributes pandas writes for the same frame."""
    fmt = "fixed" if "fixed" in args else "table"
    kw = {}
    if "--data-columns" in args:
        dc = args[args.index("--data-columns") + 1]
        kw["data_columns"] = True if dc == "all" else dc.split(",")
    obj = df.iloc[:, 0] if "--series" in args else df
    ref = f"{d}/{name}.sentinels.h5"
    obj.to_hdf(ref, key="df", format=fmt, mode="w", **kw)
    want, got = nan_rep_attrs(ref), nan_rep_attrs(f"{d}/{name}.h5")
    # the nodes both stores have (pandas and sciio may number fixed blocks differently)
    common = {k for k in want if k[0] in {g[0] for g in got}}
    assert common, (want, got)
    assert {k: want[k] for k in common} == {k: got.get(k) for k in common}, (want, got)
    # a column's or the index's sentinel among them, not only the group's markers
    assert any(node != "/df" for node, _ in common), (want, got)
    if name == "sentinel_dc":
        # where queries on string data columns and the index (the stored bytes: literal
        # values and sentinels) answer as on pandas' own key, which has PyTables indexes
        # (_i_table) where sciio's has none
        for where in ['lit == "nan"', 'lit != "a"', 'index == "nan"', 'index == "_nan_"']:
            mine = pd.read_hdf(f"{d}/{name}.h5", "df", where=where)
            pd.testing.assert_frame_equal(mine, pd.read_hdf(ref, "df", where=where))


def indexes():
    return {
        "range": None,
        "range_step": pd.RangeIndex(10, 10 + 3 * N, 3, name="r"),
        "int": pd.Index(np.arange(N, dtype="int64")[::-1] * 5, name="key"),
        "float": pd.Index(np.linspace(0.5, 3.5, N)),
        "str": pd.Index(["a", "b", "c", "dd", "e", "ffff", "g"], name="name"),
        "dt": pd.DatetimeIndex(pd.date_range("2019-05-05", periods=N, freq="min"), freq=None),
        "dtz": pd.DatetimeIndex(pd.date_range("2019-05-05", periods=N, freq="min",
                                              tz="America/New_York"), freq=None),
        "td": pd.TimedeltaIndex(pd.to_timedelta(np.arange(N), unit="h"), freq=None),
        "period": pd.period_range("2001Q3", periods=N, freq="Q", name="q"),
        "multi2": pd.MultiIndex.from_arrays([list("aabbccd"), np.arange(N) * 2],
                                            names=["l1", None]),
        "multi3": pd.MultiIndex.from_arrays(
            [list("xxyyzzz"), np.arange(N) % 2,
             pd.date_range("2000", periods=N, freq="D")], names=["a1", "a2", "a3"]),
    }


def cases():
    out = {}
    cols = columns()
    full = pd.DataFrame(cols)
    for name, index in indexes().items():
        df = full.copy()
        if index is not None:
            df.index = index
        out[f"all_{name}"] = (df, [])
    fixed = full.drop(columns=["cat", "ocat"])
    for name, index in indexes().items():
        df = fixed.copy()
        if index is not None:
            df.index = index
        out[f"fixed_{name}"] = (df, ["--store-format", "fixed"])
    for comp in ["zlib:1", "blosc:5", "none"]:
        out[f"fixed_comp_{comp.replace(':', '_')}"] = (
            fixed, ["--store-format", "fixed", "--compress", comp])
    small = pd.DataFrame({k: cols[k] for k in ["i64", "f64", "s", "cat", "dtz"]})
    for comp in ["zlib:1", "blosc:5", "blosc", "shuffle,zlib:9", "none"]:
        out[f"comp_{comp.replace(':', '_').replace(',', '_')}"] = (small, ["--compress", comp])
    out["dc_some"] = (full, ["--data-columns", "i64,s,dtz,cat"])
    out["dc_all"] = (full, ["--data-columns", "all"])
    out["dc_multi"] = (full.set_index(indexes()["multi2"]), ["--data-columns", "f64"])
    out["one_row"] = (full.iloc[:1], [])
    out["long_str"] = (pd.DataFrame({"s": pd.Series(["x" * 1000, None, "é" * 300], dtype="str")}), [])
    # Object columns of missing values only (Arrow null in Parquet): pandas stores them as
    # text in an object block (the table format) or pickles their None (the fixed format).
    nones = pd.DataFrame({"on": pd.Series([None] * N, dtype=object), "i": np.arange(N),
                          "s": cols["s"], "on2": pd.Series([None] * N, dtype=object)})
    out["object_missing"] = (nones, [])
    out["object_missing_dc"] = (nones, ["--data-columns", "on"])
    out["object_missing_fixed"] = (nones, ["--store-format", "fixed"])
    # Period columns (pyarrow's pandas.period extension type) in both formats, as data
    # columns too; dates (datetime.date objects) in the fixed format, the only one holding them.
    out["period"] = (period_frame(), [])
    out["period_dc"] = (period_frame(), ["--data-columns", "pm,pq"])
    out["period_fixed"] = (period_frame(), ["--store-format", "fixed"])
    out["dates_fixed"] = (dates_frame(), ["--store-format", "fixed"])
    # The fixed format's indexes and labels pandas 3 writes: MultiIndex rows (above),
    # CategoricalIndex, column MultiIndex.
    catindex = pd.CategoricalIndex(list("abcabca"), categories=list("cbaz"), name="ci")
    out["fixed_catindex"] = (fixed.set_index(catindex), ["--store-format", "fixed"])
    ocatindex = pd.CategoricalIndex(list("abcabca"), categories=list("cba"), ordered=True)
    out["fixed_ocatindex"] = (pd.DataFrame({"x": np.arange(N)}, index=ocatindex),
                              ["--store-format", "fixed"])
    colmulti = pd.DataFrame(
        {("a", "x"): np.arange(N), ("a", "y"): np.linspace(0, 1, N), ("b", "x"): cols["s"],
         ("b", "z"): np.arange(N) * 2},
    )
    colmulti.columns.names = ["upper", None]
    out["fixed_colmulti"] = (colmulti, ["--store-format", "fixed"])
    # column labels pandas keeps as integers (and floats): written as numbers, not text
    out["fixed_intcols"] = (pd.DataFrame({3: np.arange(N), -40: cols["s"]}),
                            ["--store-format", "fixed"])
    colnum = pd.DataFrame(np.arange(3.0 * N).reshape(N, 3), columns=pd.MultiIndex.from_tuples(
        [(1, 0.5), (1, 2.0), (20, 0.5)], names=["n", "x"]))
    out["fixed_colmulti_num"] = (colnum, ["--store-format", "fixed"])
    out["fixed_colmulti_multi"] = (colmulti.set_index(indexes()["multi2"]),
                                   ["--store-format", "fixed", "--compress", "blosc:5"])
    # Series keys (--series): a one-column frame written as `series.to_hdf` writes it.
    idx = indexes()
    for fmt in ["table", "fixed"]:
        extra = ["--series", "--store-format", fmt]
        # An unnamed Series (a Parquet column labelled None) stays unnamed.
        out[f"series_unnamed_{fmt}"] = (pd.DataFrame({None: np.linspace(0, 1, N)}), extra)
        out[f"series_period_{fmt}"] = (period_frame()[["pm"]], extra)
        for comp in ["blosc:5", "zlib:1", "none"]:
            out[f"series_{fmt}_{comp.replace(':', '_')}"] = (
                pd.DataFrame({"s": cols["s"]}, index=idx["str"]), extra + ["--compress", comp])
    out.update(sentinel_cases())
    out["series_dates_fixed"] = (dates_frame()[["d"]], ["--series", "--store-format", "fixed"])
    for col in ["i64", "u8", "f32", "f64", "b", "s", "dt", "dtz", "utc", "td", "cat", "ocat"]:
        for iname in ["range", "str", "dtz", "multi2"]:
            df = pd.DataFrame({col: cols[col]})
            if idx[iname] is not None:
                df.index = idx[iname]
            out[f"series_{col}_{iname}"] = (df, ["--series"])
            if col not in ("cat", "ocat"):
                out[f"series_fixed_{col}_{iname}"] = (df, ["--series", "--store-format", "fixed"])
    return out


def refused():
    return {
        "nullable_int": (pd.DataFrame({"c": pd.array([1, None], dtype="Int64")}),
                         "Cannot store a column with dtype Int64"),
        "bool_missing": (pd.DataFrame({"c": pd.Series([True, None], dtype=object)}),
                         "data contents are not [string]"),
        "bytes": (pd.DataFrame({"c": pd.Series([b"a", b"b"], dtype=object)}),
                  "data contents are not [string] but [bytes]"),
        "dates": (pd.DataFrame({"c": [pd.Timestamp("2020-01-01").date()] * 2}),
                  "[date] is not implemented as a table column"),
        "no_columns": (pd.DataFrame(index=pd.RangeIndex(N)), "is a no-op"),
        "no_rows": (pd.DataFrame({"c": np.arange(0)}), "is a no-op"),
    }


def gen(d):
    for name, (df, args) in cases().items():
        df.to_parquet(f"{d}/{name}.parquet")
        print(name, *args)


def gen_refused(d):
    for name, (df, reason) in refused().items():
        df.to_parquet(f"{d}/bad_{name}.parquet")
        print(name, reason)


def pandas_round_trip(d, name, df, args):
    """What pd.read_hdf gives of pandas' own to_hdf of `df` with sciio's arguments `args`."""
    fmt = "fixed" if "fixed" in args else "table"
    kw = {}
    if "--data-columns" in args:
        kw["data_columns"] = args[args.index("--data-columns") + 1].split(",")
    path = f"{d}/{name}.pandas.h5"
    df.to_hdf(path, key="df", format=fmt, mode="w", **kw)
    return pd.read_hdf(path, "df")


def as_parquet_gives(df):
    """`df` as pd.read_parquet gives it back: an object column of missing values only is
    Arrow null in Parquet, read as None where pd.read_hdf gave NaN."""
    df = df.copy()
    for c in df.columns:
        if df[c].dtype == object and len(df) and df[c].isna().all():
            df[c] = pd.Series([None] * len(df), dtype=object, index=df.index)
    return df


def check(d):
    checked = 0
    for name, (df, args) in cases().items():
        try:
            want = pd.read_parquet(f"{d}/{name}.parquet")
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                got = pd.read_hdf(f"{d}/{name}.h5", "df")
            if "--series" in args:
                assert isinstance(got, pd.Series), type(got)
                # What pandas gives for the same Series written by pandas itself (an unnamed
                # MultiIndex level comes back as `level_N` from a series table, in pandas too).
                fmt = "fixed" if "fixed" in args else "table"
                ref_path = f"{d}/{name}.pandas.h5"
                want.iloc[:, 0].to_hdf(ref_path, key="df", format=fmt, mode="w")
                ref = pd.read_hdf(ref_path, "df")
                pd.testing.assert_series_equal(got, ref, check_dtype=True)
                pd.testing.assert_series_equal(got, want.iloc[:, 0], check_dtype=True,
                                               check_index=not isinstance(got.index,
                                                                          pd.MultiIndex))
                back = pd.read_parquet(f"{d}/{name}.back.parquet")
                pd.testing.assert_series_equal(back.iloc[:, 0], got, check_dtype=True)
                if name.startswith("sentinel"):
                    same_sentinels_as_pandas(d, name, want, args)
                with pd.HDFStore(f"{d}/{name}.h5", mode="r") as store:
                    wanted_format = "fixed" if "fixed" in args else "table"
                    assert store.get_storer("df").format_type == wanted_format
                checked += 1
                continue
            if name.startswith("object_missing"):
                # pandas' own round trip changes these columns (NaN for None in the table
                # format, `str` in the fixed one): compare with what pandas reads of its own key.
                want = pandas_round_trip(d, name, want, args)
            pd.testing.assert_frame_equal(got, want, check_dtype=True, check_index_type=(
                True if name.startswith("sentinel") else "equiv"))
            if name.startswith("sentinel"):
                same_sentinels_as_pandas(d, name, want, args)
            with pd.HDFStore(f"{d}/{name}.h5", mode="r") as store:
                storer = store.get_storer("df")
                wanted_format = "fixed" if "fixed" in args else "table"
                assert storer.format_type == wanted_format, storer.format_type
                if "--data-columns" in args:
                    dc = args[args.index("--data-columns") + 1]
                    wanted = list(df.columns) if dc == "all" else dc.split(",")
                    for c in wanted:
                        assert c in storer.data_columns, (c, storer.data_columns)
                # A where query on a data column (and on the index) as pandas answers it.
                if name in ("dc_some", "dc_all"):
                    sel = store.select("df", where="i64 > 2199023255552")
                    pd.testing.assert_frame_equal(sel, want[want.i64 > 2**41])
                    sel = store.select("df", where="s == 'x'")
                    pd.testing.assert_frame_equal(sel, want[want.s == "x"])
                if name == "all_int":
                    sel = store.select("df", where="index >= 15")
                    pd.testing.assert_frame_equal(sel, want[want.index >= 15],
                                                  check_index_type=False)
                if "--compress" in args:
                    comp = args[args.index("--compress") + 1]
                    t = store.get_node("df/table" if wanted_format == "table"
                                       else "df/block0_values")
                    if comp == "none":
                        assert t.filters.complevel == 0, t.filters
                    else:
                        lib = comp.split(",")[-1].split(":")[0]
                        assert t.filters.complib == lib, (t.filters, lib)
            # sciio's own reading of the key it wrote (DIR/<case>.back.parquet).
            back = pd.read_parquet(f"{d}/{name}.back.parquet")
            pd.testing.assert_frame_equal(back, as_parquet_gives(got), check_dtype=True)
            checked += 1
        except Exception:
            print(f"FAIL {name}: " + traceback.format_exc().replace("\n", " | "))
    print("CHECKED", checked)


LAYOUT_KINDS = ["i64", "i32", "u8", "f64", "f32", "bool", "str", "cat", "tz", "tz_paris",
                "naive", "naive_ns", "td", "td_ns", "int_nulls"]


def layout_column(kind, n, k):
    """One column of `kind` (n rows, seeded by k)."""
    r = np.arange(n) + k
    return {
        "i64": lambda: r.astype("int64"),
        "i32": lambda: r.astype("int32"),
        "u8": lambda: (r % 200).astype("uint8"),
        "f64": lambda: r / 4,
        "f32": lambda: (r / 4).astype("float32"),
        "bool": lambda: r % 3 == 0,
        "str": lambda: pd.array([f"s{v}" for v in r], dtype="str"),
        "cat": lambda: pd.Categorical([f"c{v % 3}" for v in r]),
        "tz": lambda: pd.date_range("2021-01-01", periods=n, freq="h", tz="UTC"),
        "tz_paris": lambda: pd.date_range("2021-01-01", periods=n, freq="h", tz="Europe/Paris"),
        "naive": lambda: pd.date_range("2021-01-01", periods=n, freq="D").as_unit("us"),
        "naive_ns": lambda: pd.date_range("2021-01-01", periods=n, freq="D").as_unit("ns"),
        "td": lambda: pd.to_timedelta(r, unit="s").as_unit("us"),
        "td_ns": lambda: pd.to_timedelta(r, unit="s").as_unit("ns"),
        "int_nulls": lambda: pd.array([None if v % 4 == 0 else v for v in r], dtype="Int64"),
        "none": lambda: pd.Series([None] * n, dtype=object),
    }[kind]()


def layout_frames():
    """Frames mixing every table dtype in interleaved orders: a fixed one, then seeded random
    ones (up to 40 columns: pyarrow's hash maps rehash past 13 keys)."""
    rng = np.random.default_rng(17)
    orders = [["i64", "str", "f64", "cat", "tz", "naive", "bool", "td", "i64", "str",
               "tz_paris", "f64", "cat", "naive", "td", "bool"],
              # object columns of missing values: pyarrow's object block (its type 0)
              ["none", "i64", "str", "none", "f64", "bool", "i32", "cat", "tz"]]
    for size in [1, 2, 3, 5, 8, 13, 14, 20, 40]:
        orders.append(list(rng.choice(LAYOUT_KINDS, size)))
    frames = {}
    for j, kinds in enumerate(orders):
        n = 7
        cols = {f"{kind}_{i}": layout_column(kind, n, i) for i, kind in enumerate(kinds)}
        df = pd.DataFrame(cols)
        # Integers with missing values: float64 with NaN, as a numpy column.
        for c in df.columns:
            if str(c).startswith("int_nulls"):
                df[c] = df[c].astype("float64").to_numpy()
        frames[f"layout_{j}"] = df
    return frames


def layout_gen(d):
    for name, df in layout_frames().items():
        df.to_parquet(f"{d}/{name}.parquet")
        print(name)


def user_attrs(node):
    """A node's attributes, as reprs; a zone in `info` by its name: sciio pickles UTC as
    `datetime.timezone.utc`, pandas as the `zoneinfo.ZoneInfo('UTC')` pyarrow gives it (the
    same zone read back; a difference of the pickle, not of the layout checked here)."""
    attrs = {a: node._v_attrs[a] for a in node._v_attrs._f_list("user")}
    if isinstance(attrs.get("info"), dict):
        attrs["info"] = {k: {kk: (str(vv) if kk == "tz" else vv) for kk, vv in v.items()}
                         if isinstance(v, dict) else v for k, v in attrs["info"].items()}
    return {a: repr(v) for a, v in attrs.items()}


def layout_check(d):
    """The key sciio wrote has the table description (field names, types, shapes, in order)
    and the group and table attributes pandas gives its own `to_hdf` of the frame
    `pd.read_parquet` reads."""
    import tables
    checked = 0
    for name in layout_frames():
        try:
            ref = f"{d}/{name}.pandas.h5"
            pd.read_parquet(f"{d}/{name}.parquet").to_hdf(ref, key="df", format="table",
                                                            mode="w")
            with tables.open_file(ref) as want, tables.open_file(f"{d}/{name}.h5") as got:
                wt, gt = want.get_node("/df/table"), got.get_node("/df/table")
                wd = [(c, str(wt.coldtypes[c])) for c in wt.colnames]
                gd = [(c, str(gt.coldtypes[c])) for c in gt.colnames]
                assert gd == wd, (gd, wd)
                assert user_attrs(gt) == user_attrs(wt), (user_attrs(gt), user_attrs(wt))
                gg, wg = got.get_node("/df"), want.get_node("/df")
                assert user_attrs(gg) == user_attrs(wg), (user_attrs(gg), user_attrs(wg))
            checked += 1
        except Exception:
            print(f"FAIL {name}: " + traceback.format_exc().replace("\n", " | "))
    print("CHECKED", checked)


if __name__ == "__main__":
    {"gen": gen, "check": check, "refused": gen_refused, "layout_gen": layout_gen,
     "layout_check": layout_check}[sys.argv[1]](sys.argv[2])
