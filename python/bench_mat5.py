"""MAT v7 (Level 5) benchmark, whole processes side by side in one run: `sciio convert` against
a Python process doing the same with scipy.io and numpy.

Cases (sizes overridable by environment variables):
  small   a v7 file of $SCIIO_BENCH_MAT5_VARS (default 2000) small variables (3x3 doubles,
          int32 rows, char rows, in turn)
  matrix  a v7 file holding one double matrix of $SCIIO_BENCH_MAT5_MIB MiB (default 256)
Both written by scipy.io.savemat(do_compression=True). Timed ($SCIIO_BENCH_REPEAT runs of each
side, default 1, alternating peer and sciio; best and median; each a whole process, start-up and
imports included):
  read   .mat -> .npz: `sciio convert f.mat f.npz` vs `scipy.io.loadmat` + `np.savez`
  write  .npz -> v7:   `sciio convert f.npz f.mat --mat-version 7` (its default level, 3) vs
                       `np.load` + `scipy.io.savemat(do_compression=True)` (zlib 6; sizes
                       compared too)
$SCIIO_BENCH_PROFILE picks the cargo profile of the sciio binary (default release; "dev-opt" =
dev profile with sciio's crates at opt-level 3).
Targets (issue 20): sciio/scipy <= 0.5 for every case, written sizes equal within 5 %.
"""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy.io

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILE = os.environ.get("SCIIO_BENCH_PROFILE", "release")
if PROFILE == "dev-opt":
    FLAGS = ["--profile", "dev"]
    for crate in ("sciio-core", "sciio-zip", "sciio-npy", "sciio-hdf5", "sciio-mat", "sciio", "sciio-cli"):
        FLAGS += ["--config", f'profile.dev.package."{crate}".opt-level=3',
                  "--config", f'profile.dev.package."{crate}".debug-assertions=false',
                  "--config", f'profile.dev.package."{crate}".overflow-checks=false']
    BIN = os.path.join(ROOT, "target", "debug", "sciio")
else:
    FLAGS = ["--profile", PROFILE]
    BIN = os.path.join(ROOT, "target", PROFILE, "sciio")

READ_PY = """
import sys, numpy as np, scipy.io
d = scipy.io.loadmat(sys.argv[1])
np.savez(sys.argv[2], **{k: v for k, v in d.items() if not k.startswith('__')})
"""
WRITE_PY = """
import sys, numpy as np, scipy.io
with np.load(sys.argv[1]) as z:
    d = {k: z[k] for k in z.files}
scipy.io.savemat(sys.argv[2], d, do_compression=True)
"""


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def alternate(peer, sciio, repeat, res, key):
    """Runs peer and sciio alternately; records best times and the median of the ratios."""
    p, s = [], []
    for _ in range(repeat):
        p.append(timed(peer))
        s.append(timed(sciio))
    res[f"scipy_{key}_s"], res[f"sciio_{key}_s"] = min(p), min(s)
    res[f"median_ratio_{key}"] = statistics.median(b / a for a, b in zip(p, s))


def small_vars(n):
    out = {}
    for i in range(n):
        if i % 3 == 0:
            out[f"v{i}"] = np.arange(9.0).reshape(3, 3) + i
        elif i % 3 == 1:
            out[f"v{i}"] = np.arange(i, i + 5, dtype=np.int32)[None, :]
        else:
            out[f"v{i}"] = f"text {i}"
    return out


def matrix(mib):
    n = int(mib * (1 << 20)) // 8
    cols = max(1, int(np.sqrt(n)))
    rows = max(1, n // cols)
    # Same formula as the v7.3 benchmark: x[r, c] = ((r * cols + c) % 1000) * 0.001 + r.
    idx = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    return {"matrix": (idx % 1000) * 0.001 + np.arange(rows, dtype=np.float64)[:, None]}


def main():
    nvars = int(os.environ.get("SCIIO_BENCH_MAT5_VARS", "2000"))
    mib = float(os.environ.get("SCIIO_BENCH_MAT5_MIB", "256"))
    repeat = int(os.environ.get("SCIIO_BENCH_REPEAT", "1"))
    out = os.path.join(os.environ.get("SCIIO_BENCH_DIR", os.path.join(ROOT, "bench-out")), "mat5")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["cargo", "build", "-q", *FLAGS, "-p", "sciio-cli"], cwd=ROOT, check=True)
    py = sys.executable
    res = {"vars": nvars, "matrix_mib": mib, "cpus": os.cpu_count(), "profile": PROFILE,
           "load_before": os.getloadavg()[0]}
    ratios = {}
    for case, data in (("small", small_vars(nvars)), ("matrix", matrix(mib))):
        src = os.path.join(out, f"{case}.mat")
        scipy.io.savemat(src, data, do_compression=True)
        del data
        p = lambda name: os.path.join(out, f"{case}_{name}")  # noqa: E731
        # read: .mat -> .npz
        alternate([py, "-c", READ_PY, src, p("scipy.npz")], [BIN, "convert", src, p("sciio.npz")],
                  repeat, res, f"read_{case}")
        with np.load(p("scipy.npz")) as a, np.load(p("sciio.npz")) as b:
            assert sorted(a.files) == sorted(b.files), case
            for k in a.files:
                if a[k].dtype.kind != "U":
                    assert np.array_equal(a[k], b[k]), (case, k)
        # write: .npz -> v7
        alternate([py, "-c", WRITE_PY, p("scipy.npz"), p("scipy7.mat")],
                  [BIN, "convert", p("scipy.npz"), p("sciio7.mat"), "--mat-version", "7"],
                  repeat, res, f"write_{case}")
        a, b = scipy.io.loadmat(p("scipy7.mat")), scipy.io.loadmat(p("sciio7.mat"))
        for k in a:
            if not k.startswith("__") and a[k].dtype.kind != "U":
                assert np.array_equal(a[k], b[k]), (case, k)
        res[f"size_scipy_{case}_mib"] = os.path.getsize(p("scipy7.mat")) / (1 << 20)
        res[f"size_sciio_{case}_mib"] = os.path.getsize(p("sciio7.mat")) / (1 << 20)
        for op in ("read", "write"):
            ratios[f"{op}_{case}"] = res[f"sciio_{op}_{case}_s"] / res[f"scipy_{op}_{case}_s"]
        ratios[f"size_{case}"] = res[f"size_sciio_{case}_mib"] / res[f"size_scipy_{case}_mib"]
    res["ratios_sciio_over_scipy"] = ratios
    res["load_after"] = os.getloadavg()[0]
    print(json.dumps(res, indent=1))
    for k, r in ratios.items():
        ok = abs(r - 1) <= 0.05 if k.startswith("size") else r <= 0.5
        target = "within 5 %" if k.startswith("size") else "<= 0.5"
        print(f"{k}: sciio/scipy = {r:.3f} (target {target}) {'ok' if ok else 'MISSED'}", file=sys.stderr)


if __name__ == "__main__":
    main()
