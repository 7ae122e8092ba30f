"""Parquet benchmark, side by side in one run: pandas/pyarrow, polars and sciio (the release build of
crates/sciio-pandas/examples/bench_parquet.rs) write the same frame and read the same file.

Frame: int64, float64, a 12-character string with 1000 distinct values, a categorical of 100,
datetime64[ns, UTC], bool; RangeIndex. Rows: $SCIIO_BENCH_PARQUET_ROWS (default 10 000 000).
Output in $SCIIO_BENCH_DIR (default ./bench-out). Times are the best of $SCIIO_BENCH_REPEAT (3).
Prints a JSON record and the sciio/peer ratios. Targets (whole processes, below): the round trip against
pyarrow <= 0.7 at snappy (both sides' defaults); against polars at the same codec and level
(zstd:3 both sides: polars' default codec) <= 0.8 with sciio's file within 5 % of polars' size.

Two measures of the round trip: in process (the frame written, then read, best of N each, the
Python peers timed inside one interpreter and sciio in its example), and as whole processes,
as the issue asks and as users run them: `sciio convert in.parquet out.parquet --compress C`
against `python -c "pd.read_parquet(in).to_parquet(out)"` (snappy) and `python -c
"pl.read_parquet(in).write_parquet(out, compression='zstd', compression_level=3)"`, each the
best of N runs of a fresh process (interpreter start and imports included for the peers, as
for sciio its start), reading the same input file.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(rows):
    i = np.arange(rows, dtype="int64")
    strings = np.array([f"str_{k:08d}" for k in range(1000)], dtype=object)
    cats = [f"cat_{k:02d}" for k in range(100)]
    return pd.DataFrame({
        "i": i,
        "f": i * 0.5,
        "s": pd.Series(strings[i % 1000], dtype="str"),
        "c": pd.Categorical.from_codes((i % 100).astype("int8"), categories=cats),
        "t": pd.to_datetime(1_600_000_000_000_000_000 + i * 1_000_000_000, unit="ns", utc=True),
        "b": i % 3 == 0,
    })


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    rows = int(os.environ.get("SCIIO_BENCH_PARQUET_ROWS", "10000000"))
    repeat = int(os.environ.get("SCIIO_BENCH_REPEAT", "3"))
    out = os.environ.get("SCIIO_BENCH_DIR", os.path.join(ROOT, "bench-out"))
    os.makedirs(out, exist_ok=True)
    df = build(rows)
    table = pa.Table.from_pandas(df)
    pa_path = os.path.join(out, "pyarrow.parquet")
    res = {"rows": rows, "cpus": os.cpu_count()}
    res["pyarrow_write_s"] = best(lambda: pq.write_table(table, pa_path), repeat)
    res["pyarrow_read_s"] = best(lambda: pq.read_table(pa_path), repeat)
    res["pandas_write_s"] = best(lambda: df.to_parquet(os.path.join(out, "pandas.parquet")), repeat)
    res["pandas_read_s"] = best(lambda: pd.read_parquet(pa_path), repeat)
    pldf = pl.from_arrow(table)
    res["polars_write_s"] = best(lambda: pldf.write_parquet(os.path.join(out, "polars.parquet")), repeat)
    res["polars_read_s"] = best(lambda: pl.read_parquet(pa_path), repeat)

    # the same race at zstd level 3 on both sides (polars writes zstd by default)
    pl_zstd = os.path.join(out, "polars-zstd3.parquet")
    res["polars_zstd3_write_s"] = best(
        lambda: pldf.write_parquet(pl_zstd, compression="zstd", compression_level=3), repeat)
    res["polars_zstd3_read_s"] = best(lambda: pl.read_parquet(pl_zstd), repeat)
    res["polars_zstd3_bytes"] = os.path.getsize(pl_zstd)

    subprocess.run(["cargo", "build", "-q", "--release", "-p", "sciio-pandas", "--example", "bench_parquet"],
                   cwd=ROOT, check=True)

    def run_sciio(*extra):
        proc = subprocess.run(
            ["cargo", "run", "-q", "--release", "-p", "sciio-pandas", "--example", "bench_parquet", "--",
             "--rows", str(rows), "--dir", out, "--repeat", str(repeat), *extra],
            cwd=ROOT, check=True, capture_output=True, text=True)
        return json.loads(proc.stdout)

    sciio = run_sciio()
    zstd = run_sciio("--compress", "zstd:3", "--input", "polars-zstd3.parquet",
                     "--output", "sciio-zstd3.parquet")
    assert zstd["read_rows"] == rows, zstd
    res["sciio_zstd3_write_s"] = zstd["write_s"]
    res["sciio_zstd3_read_s"] = zstd["read_s"]
    res["sciio_zstd3_bytes"] = zstd["bytes"]
    assert sciio["read_rows"] == rows, sciio
    res["sciio_write_s"] = sciio["write_s"]
    res["sciio_read_s"] = sciio["read_s"]
    # sciio's file must read back equal in pandas
    check = pd.read_parquet(os.path.join(out, "sciio.parquet"))
    assert check.equals(df), "sciio's benchmark file differs from the frame"
    check = pd.read_parquet(os.path.join(out, "sciio-zstd3.parquet"))
    assert check.equals(df), "sciio's zstd benchmark file differs from the frame"
    for op in ("write", "read"):
        res[f"ratio_{op}_sciio_over_pyarrow"] = res[f"sciio_{op}_s"] / res[f"pyarrow_{op}_s"]
        res[f"ratio_{op}_polars_over_pyarrow"] = res[f"polars_{op}_s"] / res[f"pyarrow_{op}_s"]
        res[f"ratio_{op}_sciio_over_polars"] = res[f"sciio_{op}_s"] / res[f"polars_{op}_s"]
    res["ratio_roundtrip_sciio_over_pyarrow"] = (
        (res["sciio_write_s"] + res["sciio_read_s"]) / (res["pyarrow_write_s"] + res["pyarrow_read_s"]))
    res["ratio_roundtrip_zstd3_sciio_over_polars"] = (
        (res["sciio_zstd3_write_s"] + res["sciio_zstd3_read_s"])
        / (res["polars_zstd3_write_s"] + res["polars_zstd3_read_s"]))
    res["ratio_bytes_zstd3_sciio_over_polars"] = res["sciio_zstd3_bytes"] / res["polars_zstd3_bytes"]
    whole_process(res, out, pa_path, pl_zstd, repeat, df)
    print(json.dumps(res, indent=1))
    # the targets are the whole processes' (below), as the issue measures them
    print(f"parquet round trip in process (snappy): sciio/pyarrow = "
          f"{res['ratio_roundtrip_sciio_over_pyarrow']:.2f}", file=sys.stderr)
    print(f"parquet round trip in process (zstd:3): sciio/polars = "
          f"{res['ratio_roundtrip_zstd3_sciio_over_polars']:.2f}, size sciio/polars = "
          f"{res['ratio_bytes_zstd3_sciio_over_polars']:.3f}", file=sys.stderr)
    print(f"parquet round trip, whole processes (snappy): sciio/pandas = "
          f"{res['ratio_process_snappy_sciio_over_pandas']:.2f} (target <= 0.7)", file=sys.stderr)
    print(f"parquet round trip, whole processes (zstd:3): sciio/polars = "
          f"{res['ratio_process_zstd3_sciio_over_polars']:.2f} (target <= 0.8), size sciio/polars = "
          f"{res['ratio_process_zstd3_bytes']:.3f}", file=sys.stderr)
    print(f"parquet write: sciio/pyarrow = {res['ratio_write_sciio_over_pyarrow']:.2f} (target <= 1.0), "
          f"polars/pyarrow = {res['ratio_write_polars_over_pyarrow']:.2f}", file=sys.stderr)
    print(f"parquet read:  sciio/pyarrow = {res['ratio_read_sciio_over_pyarrow']:.2f} (target <= 1.0), "
          f"polars/pyarrow = {res['ratio_read_polars_over_pyarrow']:.2f}", file=sys.stderr)


PANDAS_ROUND_TRIP = "import sys, pandas as pd; pd.read_parquet(sys.argv[1]).to_parquet(sys.argv[2])"
POLARS_ROUND_TRIP = ("import sys, polars as pl; pl.read_parquet(sys.argv[1]).write_parquet("
                     "sys.argv[2], compression='zstd', compression_level=3)")


def whole_process(res, out, pa_path, pl_zstd, repeat, df):
    """The round trip as whole processes (see the module docs), into `res`."""
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "sciio-cli"], cwd=ROOT, check=True)
    sciio = os.path.join(ROOT, "target", "release", "sciio")

    def timed(argv):
        return best(lambda: subprocess.run(argv, check=True, capture_output=True), repeat)

    cases = {
        "snappy": (pa_path, "snappy", [sys.executable, "-c", PANDAS_ROUND_TRIP], "pandas"),
        "zstd3": (pl_zstd, "zstd:3", [sys.executable, "-c", POLARS_ROUND_TRIP], "polars"),
    }
    for name, (src, codec, peer, who) in cases.items():
        mine, theirs = (os.path.join(out, f"process-{name}-{t}.parquet") for t in ("sciio", who))
        res[f"process_{name}_sciio_s"] = timed([sciio, "convert", src, mine, "--compress", codec])
        res[f"process_{name}_{who}_s"] = timed(peer + [src, theirs])
        res[f"ratio_process_{name}_sciio_over_{who}"] = (
            res[f"process_{name}_sciio_s"] / res[f"process_{name}_{who}_s"])
        got = pd.read_parquet(mine)
        assert got.equals(df), f"sciio's {name} round trip differs from the frame"
        if name == "zstd3":
            res["ratio_process_zstd3_bytes"] = os.path.getsize(mine) / os.path.getsize(theirs)


if __name__ == "__main__":
    main()
