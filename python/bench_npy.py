"""Side-by-side benchmark of .npy I/O: numpy vs sciio on the same float64 data, same run.

Size: $SCIIO_BENCH_NPY_MB megabytes (default 1024). Files go to $SCIIO_BENCH_DIR (default ./bench-out).
Times (best of 3): write (np.save vs sciio_npy::write_file), read into memory touching every value
(np.load + sum vs sciio_npy::read_file + sum), memory-map + sum (np.load(mmap_mode='r') vs
sciio_npy::open_mmap). Prints JSON and sciio/numpy ratios (< 1 means sciio is faster).
"""

import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MB = int(os.environ.get("SCIIO_BENCH_NPY_MB", "1024"))
DIR = os.environ.get("SCIIO_BENCH_DIR", os.path.join(ROOT, "bench-out"))
os.makedirs(DIR, exist_ok=True)
REPEATS = 3


def best(f):
    times, out = [], None
    for _ in range(REPEATS):
        start = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - start)
    return min(times), out


n = MB * (1 << 20) // 8
data = np.arange(n, dtype="<f8") * 0.5
path = os.path.join(DIR, "numpy.npy")
numpy_write, _ = best(lambda: np.save(path, data))
del data
numpy_read, numpy_sum = best(lambda: float(np.load(path).sum()))
numpy_mmap, numpy_msum = best(lambda: float(np.load(path, mmap_mode="r").sum()))

# Build outside the timed region, then run the sciio side on the same file.
subprocess.run(
    ["cargo", "build", "--release", "-q", "-p", "sciio-npy", "--example", "bench_npy"], cwd=ROOT, check=True
)
out = subprocess.run(
    ["cargo", "run", "--release", "-q", "-p", "sciio-npy", "--example", "bench_npy", "--", DIR, str(MB)],
    cwd=ROOT,
    check=True,
    capture_output=True,
    text=True,
).stdout
sciio = json.loads(out)
assert sciio["read_sum"] == numpy_sum == sciio["mmap_sum"] == numpy_msum, (sciio, numpy_sum)
with open(os.path.join(DIR, "sciio.npy"), "rb") as a, open(path, "rb") as b:
    assert a.read() == b.read(), "sciio's file differs from numpy's"

result = {
    "size_mb": MB,
    "numpy": {"write_s": numpy_write, "read_s": numpy_read, "mmap_sum_s": numpy_mmap},
    "sciio": {k: sciio[k] for k in ("write_s", "read_s", "mmap_sum_s")},
    "ratio_sciio_over_numpy": {
        "write": sciio["write_s"] / numpy_write,
        "read": sciio["read_s"] / numpy_read,
        "mmap_sum": sciio["mmap_sum_s"] / numpy_mmap,
    },
}
print(json.dumps(result, indent=1))
for name in ("numpy.npy", "sciio.npy"):
    os.remove(os.path.join(DIR, name))
sys.exit(0)
