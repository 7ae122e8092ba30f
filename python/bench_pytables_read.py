"""Benchmark: reading PyTables files with PyTables vs sciio (same files, same run).

Cases (sizes overridable by environment variables):
  * a table of SCIIO_BENCH_ROWS rows (default 10,000,000) with int64, float64, float32, S16 and
    bool columns, compressed with zlib level 1 + shuffle, and with blosc2:lz4;
  * a float32 EArray of SCIIO_BENCH_EARRAY_MB MiB (default 1024), uncompressed.
Each is timed as `node.read()` in PyTables and `PtFile::read` in sciio (examples/bench_pytables.rs, best of
SCIIO_BENCH_REPEAT runs, default 3) and the ratio sciio/PyTables is printed (lower is better).
Files go to $SCIIO_BENCH_DIR (default: a temporary folder).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import tables as tb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS = int(os.environ.get("SCIIO_BENCH_ROWS", 10_000_000))
EARRAY_MB = int(os.environ.get("SCIIO_BENCH_EARRAY_MB", 1024))
REPEAT = int(os.environ.get("SCIIO_BENCH_REPEAT", 3))
# Comma-separated subset of the cases to run (default: all).
ONLY = [c for c in os.environ.get("SCIIO_BENCH_CASES", "").split(",") if c]
TARGETS = {"table_zlib1_shuffle": 0.4, "table_blosc2_lz4": 1.0, "earray_f32": 1.0}


class Row(tb.IsDescription):
    i8 = tb.Int64Col(pos=0)
    f8 = tb.Float64Col(pos=1)
    f4 = tb.Float32Col(pos=2)
    s16 = tb.StringCol(16, pos=3)
    b = tb.BoolCol(pos=4)


def make_table(path, filters):
    if os.path.exists(path):
        return
    rng = np.random.default_rng(1)
    block = 1_000_000
    with tb.open_file(path, "w") as f:
        t = f.create_table("/", "table", Row, filters=filters, expectedrows=ROWS)
        for start in range(0, ROWS, block):
            n = min(block, ROWS - start)
            rows = np.empty(n, dtype=t.dtype)
            rows["i8"] = np.arange(start, start + n)
            rows["f8"] = rng.standard_normal(n)
            rows["f4"] = rng.standard_normal(n).astype(np.float32)
            rows["s16"] = np.char.add(b"name-", (np.arange(start, start + n) % 5000).astype("S10"))
            rows["b"] = rng.integers(0, 2, n).astype(bool)
            t.append(rows)


def make_earray(path):
    if os.path.exists(path):
        return
    n = EARRAY_MB * (1 << 20) // 4
    cols = 1024
    with tb.open_file(path, "w") as f:
        e = f.create_earray("/", "earray", tb.Float32Atom(), shape=(0, cols))
        block = (64 << 20) // 4 // cols
        rows = n // cols
        for start in range(0, rows, block):
            m = min(block, rows - start)
            e.append(np.arange(start * cols, (start + m) * cols, dtype=np.float32).reshape(m, cols))


def time_pytables(path, node):
    best = float("inf")
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        with tb.open_file(path) as f:
            data = f.get_node(node).read()
        best = min(best, time.perf_counter() - t0)
        del data
    return best


def time_sciio(path, node):
    cmd = ["cargo", "run", "--release", "-q", "-p", "sciio-pytables", "--example", "bench_pytables", "--",
           path, node, str(REPEAT)]
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    base = os.environ.get("SCIIO_BENCH_DIR") or tempfile.mkdtemp(prefix="sciio-bench-")
    os.makedirs(base, exist_ok=True)
    cases = [
        ("table_zlib1_shuffle", f"table_zlib1_{ROWS}.h5", "/table",
         lambda p: make_table(p, tb.Filters(1, "zlib", shuffle=True))),
        ("table_blosc2_lz4", f"table_blosc2lz4_{ROWS}.h5", "/table",
         lambda p: make_table(p, tb.Filters(5, "blosc2:lz4", shuffle=True))),
        ("earray_f32", f"earray_{EARRAY_MB}MiB.h5", "/earray", make_earray),
    ]
    results = []
    for name, fname, node, make in cases:
        if ONLY and name not in ONLY:
            continue
        path = os.path.join(base, fname)
        make(path)
        peer = time_pytables(path, node)
        ours = time_sciio(path, node)
        ratio = ours["seconds"] / peer
        results.append({"case": name, "pytables_s": round(peer, 4), "sciio_s": round(ours["seconds"], 4),
                        "ratio": round(ratio, 3), "target": TARGETS[name], "threads": ours["threads"]})
        print(f"{name:22s} PyTables {peer:8.3f} s  sciio {ours['seconds']:8.3f} s  "
              f"sciio/PyTables {ratio:6.3f}  (target <= {TARGETS[name]})", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    sys.exit(main())
