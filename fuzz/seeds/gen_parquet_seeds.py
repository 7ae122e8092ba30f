"""Writes the seeds of the parquet_read and pandas_metadata fuzz targets with pandas (pyarrow and
fastparquet engines): small frames covering the column kinds, index kinds and codecs sciio reads.
Run from this folder: ../../.venv/bin/python gen_parquet_seeds.py
"""
import numpy as np
import pandas as pd
import pyarrow.parquet as pq

P = "parquet_read/"
df = pd.DataFrame({"i": np.arange(5, dtype="i8"), "f": [0.5, np.nan, 2, 3, 4], "s": list("abcde"),
                   "c": pd.Categorical(list("xyxyx")), "t": pd.date_range("2020", periods=5, tz="UTC"),
                   "b": [True, False, None, True, False], "n": pd.array([1, None, 3, 4, 5], dtype="Int32")})
df.to_parquet(P + "mixed_snappy.parquet", compression="snappy")
df.to_parquet(P + "mixed_none.parquet", compression=None)
df.to_parquet(P + "mixed_zstd.parquet", compression="zstd")
df.set_index(["i", "s"]).to_parquet(P + "multiindex.parquet", compression=None)
pd.DataFrame({"x": np.arange(3.0)}, index=pd.RangeIndex(10, 16, 2, name="r")).to_parquet(
    P + "range_index.parquet", compression=None)
pd.DataFrame({"d": ["{'a': 1}", "None"]}).to_parquet(P + "strings_fp.parquet", engine="fastparquet")
cols = pd.MultiIndex.from_tuples([("a", 1), ("b", 2)])
pd.DataFrame([[1, 2]], columns=cols).to_parquet(P + "column_levels.parquet", compression=None)
for name in ("mixed_none", "multiindex", "range_index"):
    meta = pq.read_schema(f"{P}{name}.parquet").metadata[b"pandas"]
    with open(f"pandas_metadata/{name}.json", "wb") as f:
        f.write(meta)
