"""pandas HDFStore conversions, `sciio convert` side by side in one run with pandas doing the
same, each timed as a whole process (`python -c ...` for pandas, the release `sciio` binary):

- table store -> Parquet: `pd.read_hdf(store, 'df').to_parquet(out)` against
  `sciio convert store.h5:/df out.parquet` (a $SCIIO_BENCH_HS_ROWS-row frame, default
  10_000_000, of int64, float64, string, categorical, tz-aware datetime and bool columns,
  written by pandas with format='table', complevel=1, complib='zlib');
- Parquet -> table store: `pd.read_parquet(frame).to_hdf(out, key='df', format='table',
  complevel=1, complib='zlib')` against `sciio convert frame.parquet out.h5:/df --compress zlib:1`;
- fixed store with a $SCIIO_BENCH_HS_STR_ROWS-row (default 1_000_000) string column ->
  Parquet, as the first case.

Peak RSS of every process is reported (os.wait4), with the Arrow size of the frame
(`pa.Table.from_pandas(df).nbytes`). Output in $SCIIO_BENCH_DIR/hdfstore. Each case runs
$SCIIO_BENCH_REPEAT times (default 3), pandas and sciio alternately (so both see the same load);
`ratio` is best sciio time / best pandas time, `median_ratio` the same with medians. Prints a JSON
record with the ratios and the load average before and after.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa

from benchkit import timed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def sciio_binary():
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "sciio-cli"], cwd=ROOT, check=True)
    return os.path.join(target, "release", "sciio")


def main():
    rows = int(os.environ.get("SCIIO_BENCH_HS_ROWS", "10000000"))
    str_rows = int(os.environ.get("SCIIO_BENCH_HS_STR_ROWS", "1000000"))
    repeat = int(os.environ.get("SCIIO_BENCH_REPEAT", "3"))
    out = os.path.join(os.environ.get("SCIIO_BENCH_DIR", os.path.join(ROOT, "bench-out")),
                       "hdfstore")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])
    df = pd.DataFrame({
        "n": rng.integers(0, 1 << 40, rows),
        "x": rng.normal(size=rows),
        "s": pd.Series(words[rng.integers(0, len(words), rows)], dtype="str"),
        "cat": pd.Categorical(words[rng.integers(0, 4, rows)]),
        "t": pd.date_range("2020-01-01", periods=rows, freq="s", tz="Europe/Paris"),
        "ok": rng.random(rows) > 0.5,
    })
    arrow_mib = pa.Table.from_pandas(df).nbytes / (1 << 20)
    store = os.path.join(out, "table.h5")
    frame = os.path.join(out, "frame.parquet")
    if not os.path.exists(store):
        df.to_hdf(store, key="df", format="table", complevel=1, complib="zlib", mode="w")
    df.to_parquet(frame)
    del df
    strings = pd.DataFrame({"s": pd.Series(
        [f"row {i} " + "x" * (i % 17) for i in range(str_rows)], dtype="str")})
    str_arrow_mib = pa.Table.from_pandas(strings).nbytes / (1 << 20)
    fixed = os.path.join(out, "fixed.h5")
    strings.to_hdf(fixed, key="df", format="fixed", mode="w")
    del strings
    sciio = sciio_binary()
    py = sys.executable
    pq_out = os.path.join(out, "out.parquet")
    h5_out = os.path.join(out, "out.h5")

    def pandas_to_h5():
        if os.path.exists(h5_out):
            os.remove(h5_out)
        return [py, "-c", "import pandas as pd, sys; pd.read_parquet(sys.argv[1]).to_hdf("
                "sys.argv[2], key='df', format='table', complevel=1, complib='zlib')",
                frame, h5_out]

    cases = {
        "table_store_to_parquet": (
            [py, "-c", "import pandas as pd, sys; pd.read_hdf(sys.argv[1], 'df')"
             ".to_parquet(sys.argv[2])", store, pq_out],
            [sciio, "convert", f"{store}:/df", pq_out], arrow_mib),
        "parquet_to_table_store": (
            None, [sciio, "convert", frame, f"{h5_out}:/df", "--compress", "zlib:1"], arrow_mib),
        "fixed_strings_to_parquet": (
            [py, "-c", "import pandas as pd, sys; pd.read_hdf(sys.argv[1], 'df')"
             ".to_parquet(sys.argv[2])", fixed, pq_out],
            [sciio, "convert", f"{fixed}:/df", pq_out], str_arrow_mib),
    }
    record = {"rows": rows, "string_rows": str_rows, "arrow_mib": round(arrow_mib, 1),
              "load_before": os.getloadavg()}
    for name, (peer, ours, mib) in cases.items():
        try:
            peer_runs, ours_runs = [], []
            for _ in range(repeat):
                peer_runs.append(timed(pandas_to_h5() if peer is None else peer))
                if os.path.exists(h5_out):
                    os.remove(h5_out)
                ours_runs.append(timed(ours))
            t_peer, rss_peer = min(r[0] for r in peer_runs), max(r[1] for r in peer_runs)
            t_ours, rss_ours = min(r[0] for r in ours_runs), max(r[1] for r in ours_runs)
            m_peer = median([r[0] for r in peer_runs])
            m_ours = median([r[0] for r in ours_runs])
            record[name] = {"pandas_s": round(t_peer, 2), "sciio_s": round(t_ours, 2),
                            "ratio": round(t_ours / t_peer, 3),
                            "pandas_median_s": round(m_peer, 2),
                            "sciio_median_s": round(m_ours, 2),
                            "median_ratio": round(m_ours / m_peer, 3),
                            "load": [round(x, 2) for x in os.getloadavg()],
                            "pandas_peak_rss_mib": round(rss_peer),
                            "sciio_peak_rss_mib": round(rss_ours),
                            "sciio_rss_over_arrow": round(rss_ours / mib, 2)}
        except subprocess.CalledProcessError as e:
            record[name] = {"error": str(e)}
    record["load_after"] = os.getloadavg()
    for name in cases:
        r = record[name]
        if "ratio" in r:
            print(f"{name}: sciio/pandas {r['ratio']} best ({r['sciio_s']} s / {r['pandas_s']} s), "
                  f"{r['median_ratio']} median; sciio peak RSS {r['sciio_peak_rss_mib']} MiB "
                  f"= {r['sciio_rss_over_arrow']}x Arrow; load {r['load']}")
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
