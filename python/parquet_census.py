"""pandas' side of the Parquet census (crates/sciio-cli/tests/parquet_census.rs).

usage:
  parquet_census.py readable FILE...
      one JSON line per file: {"file", "error"}: error is null when pd.read_parquet reads the
      file, else pandas' error in one line; "checksum_error" says whether pyarrow refuses the
      file when it verifies page checksums (page_checksum_verification=True).
  parquet_census.py compare ORIG COPY [ORIG COPY ...]
      pd.read_parquet(COPY) equals pd.read_parquet(ORIG): assert_frame_equal with
      check_dtype=True, exact values, index and column types, categories; files fastparquet
      wrote are read with engine="fastparquet" (the metadata flavour only fastparquet itself
      restores: categoricals, timedeltas, nullable types), sciio's copies with pandas' default
      engine. One JSON line per pair: {"file", "error"}; error null when equal.
"""
import json
import math
import sys
import warnings

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

warnings.simplefilter("ignore")


def one_line(e):
    return f"{type(e).__name__}: {e}".replace("\n", " | ")[:500]


def readable(files):
    for f in files:
        try:
            pd.read_parquet(f)
            error = None
        except Exception as e:  # noqa: BLE001 - any refusal is what is being recorded
            error = one_line(e)
        try:
            pq.read_table(f, page_checksum_verification=True)
            checksum_error = False
        except Exception as e:  # noqa: BLE001
            checksum_error = "checksum" in str(e).lower() or "crc" in str(e).lower()
        print(json.dumps({"file": f, "error": error, "checksum_error": checksum_error}), flush=True)


def written_by_fastparquet(path):
    return (pq.read_metadata(path).created_by or "").startswith("fastparquet")


def has_json_columns(path):
    schema = pq.read_schema(path)
    return any(str(f.type) in ("extension<arrow.json>", "json") for f in schema) or any(
        "JSON" in str(c.logical_type) for c in pq.ParquetFile(path).schema)


def pandas_frame(path):
    """What pandas reads: fastparquet's files with fastparquet's engine, except those with
    JSON-encoded object columns (object_encoding='json'), which pandas' default engine reads
    as their JSON text, as sciio does."""
    if written_by_fastparquet(path) and not has_json_columns(path):
        return pd.read_parquet(path, engine="fastparquet")
    return pd.read_parquet(path)


def canon(v):
    """A nested value (lists as numpy arrays, structs as dicts, maps as lists of tuples) as plain
    Python values that compare with ==, missing values and NaN included."""
    if isinstance(v, np.ndarray):
        return [canon(x) for x in v.tolist()] if v.dtype != object else [canon(x) for x in v]
    if isinstance(v, (list, tuple)):
        return [canon(x) for x in v]
    if isinstance(v, dict):
        return {k: canon(x) for k, x in v.items()}
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v


def nested_columns(a):
    """Positions of the object columns holding lists, structs or maps."""
    return [i for i in range(a.shape[1])
            if a.dtypes.iloc[i] == object
            and any(isinstance(v, (np.ndarray, list, dict, tuple)) for v in a.iloc[:, i])]


def compare(pairs):
    for orig, copy in zip(pairs[::2], pairs[1::2]):
        try:
            a = pandas_frame(orig)
            b = pd.read_parquet(copy)
            assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
            nested = nested_columns(a)
            for i in nested:
                label = a.columns[i]
                assert b.dtypes.iloc[i] == object, f"{label}: dtype {b.dtypes.iloc[i]}"
                assert b.columns[i] == label, f"label {b.columns[i]!r} != {label!r}"
                va = [canon(v) for v in a.iloc[:, i]]
                vb = [canon(v) for v in b.iloc[:, i]]
                assert va == vb, f"{label}: {va[:5]} != {vb[:5]}"
            keep = [i for i in range(a.shape[1]) if i not in nested]
            a, b = a.iloc[:, keep], b.iloc[:, keep]
            pd.testing.assert_frame_equal(a, b, check_dtype=True, check_exact=True,
                                          check_index_type=True, check_column_type=True,
                                          check_categorical=True, check_freq=False)
            assert a.attrs == b.attrs, f"attrs {a.attrs} != {b.attrs}"
            for i in range(a.index.nlevels):
                la, lb = a.index.get_level_values(i), b.index.get_level_values(i)
                assert la.dtype == lb.dtype, f"index level {i}: {la.dtype} != {lb.dtype}"
            error = None
        except Exception as e:  # noqa: BLE001 - reported per file by the Rust test
            error = one_line(e)
        print(json.dumps({"file": orig, "error": error}), flush=True)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "readable":
        readable(args)
    elif mode == "compare":
        compare(args)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
