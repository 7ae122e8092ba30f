"""`sciio convert` on Parquet, side by side in one run with pandas doing the same conversion:

- parquet -> parquet (zstd:3): pd.read_parquet + df.to_parquet(compression='zstd', level 3)
  against `sciio convert a.parquet b.parquet --compress zstd:3` (streams record batches);
- parquet -> npz: pd.read_parquet + np.savez of the index and each column against
  `sciio convert a.parquet b.npz`;
- structured npy -> parquet: np.load + pd.DataFrame(array).to_parquet against
  `sciio convert a.npy b.parquet`.

The sciio side is the release `sciio` binary (built with `--no-default-features --features
parquet` so no libhdf5 build is needed), timed from here as a whole command: process start-up
is included, which only disadvantages sciio. Data: a frame of float64, int64, int32, bool and
a categorical, $SCIIO_BENCH_PQ_ROWS rows (default 2_000_000). Output in $SCIIO_BENCH_DIR
(default ./bench-out/parquet_convert). Times are the best of $SCIIO_BENCH_REPEAT (default 3).
Prints a JSON record with sciio/pandas ratios (lower is better for sciio).
"""
import json
import os
import subprocess
import time

import numpy as np
import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def sciio_binary():
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "sciio-cli", "--no-default-features",
         "--features", "parquet"],
        cwd=ROOT, check=True)
    return os.path.join(target, "release", "sciio")


def main():
    rows = int(os.environ.get("SCIIO_BENCH_PQ_ROWS", "2000000"))
    repeat = int(os.environ.get("SCIIO_BENCH_REPEAT", "3"))
    out = os.path.join(os.environ.get("SCIIO_BENCH_DIR", os.path.join(ROOT, "bench-out")),
                       "parquet_convert")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)
    df = pd.DataFrame({
        "x": np.cumsum(rng.normal(size=rows)),
        "n": rng.integers(0, 1 << 40, rows),
        "k": (np.arange(rows, dtype=np.int32) // 7),
        "ok": rng.random(rows) > 0.3,
        "cat": pd.Categorical(rng.choice(["alpha", "beta", "gamma"], rows)),
    })
    src = os.path.join(out, "frame.parquet")
    df.to_parquet(src)
    rec = df[["x", "n", "k", "ok"]].to_records(index=False)
    npy = os.path.join(out, "records.npy")
    np.save(npy, rec)
    sciio = sciio_binary()

    def run(*args):
        subprocess.run([sciio, *args], check=True, stdout=subprocess.DEVNULL)

    pq2 = os.path.join(out, "copy.parquet")
    npz = os.path.join(out, "frame.npz")
    pq3 = os.path.join(out, "records.parquet")

    def pandas_pq():
        pd.read_parquet(src).to_parquet(pq2, compression="zstd", compression_level=3)

    def pandas_npz():
        d = pd.read_parquet(src)
        np.savez(npz, index=d.index.to_numpy(), **{c: d[c].to_numpy() for c in d.columns
                                                   if c != "cat"},
                 cat=d["cat"].to_numpy().astype(str))

    def pandas_rec():
        pd.DataFrame(np.load(npy)).to_parquet(pq3)

    cases = {
        "parquet_to_parquet_zstd3": (pandas_pq, lambda: run("convert", src, pq2, "--compress", "zstd:3")),
        "structured_npy_to_parquet": (pandas_rec, lambda: run("convert", npy, pq3)),
    }
    # The categorical column decodes to a string array: numpy needs 'U' (np.savez would pickle
    # object arrays); sciio's to_ndarrays does the same.
    cases["parquet_to_npz"] = (pandas_npz, lambda: run("convert", src, npz))
    record = {"rows": rows, "source_mib": round(os.path.getsize(src) / (1 << 20), 1)}
    for name, (peer, ours) in cases.items():
        try:
            t_peer, t_ours = best(peer, repeat), best(ours, repeat)
            record[name] = {"pandas_s": round(t_peer, 3), "sciio_s": round(t_ours, 3),
                            "ratio": round(t_ours / t_peer, 2)}
        except subprocess.CalledProcessError as e:
            record[name] = {"error": str(e)}
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
