"""`mat-read` benchmark (issue 15, "many small variables"): a v7.3 MAT file -> .npz, whole
processes side by side in one run: `sciio convert f.mat f.npz` against a Python process doing
`hdf5storage.loadmat` + `np.savez` (start-up and imports included on both sides).

Cases (sizes overridable by environment variables), both files written by
`hdf5storage.savemat(format='7.3')` (MATLAB's layout) once and reused while they exist:
  vars   $SCIIO_BENCH_MAT_VARS (default 2000) variables, each a 3x3 double
  cell   one cell of $SCIIO_BENCH_MAT_CELLS (default 20000) 3x3 doubles; the Python side saves
         each element as its own member `cell/<i>` (what sciio writes) instead of pickling an
         object array
Times: each side run $SCIIO_BENCH_REPEAT times (default 5), alternately; best and median.
$SCIIO_BENCH_PROFILE picks the cargo profile of the sciio binary (default release).
Targets (issue 15): sciio / (hdf5storage + numpy) <= 0.05 for both.
"""
import json
import os
import statistics
import subprocess
import sys
import time

import hdf5storage
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILE = os.environ.get("SCIIO_BENCH_PROFILE", "release")
BIN = os.path.join(ROOT, "target", PROFILE, "sciio")

READ_PY = """
import sys, numpy as np, hdf5storage
d = hdf5storage.loadmat(sys.argv[1])
if sys.argv[3] == 'cell':
    np.savez(sys.argv[2], **{f"cell/{i}": x for i, x in enumerate(d['cell'].flatten(order='F'))})
else:
    np.savez(sys.argv[2], **d)
"""


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def source(out, case, n):
    path = os.path.join(out, f"{case}_{n}.mat")
    if os.path.exists(path):
        return path
    if case == "vars":
        data = {f"v{i:05d}": np.arange(9.0).reshape(3, 3) + i for i in range(n)}
    else:
        cell = np.empty((1, n), dtype=object)
        for i in range(n):
            cell[0, i] = np.arange(i * 9, i * 9 + 9, dtype=np.float64).reshape(3, 3, order="F")
        data = {"cell": cell}
    tmp = os.path.join(out, f"tmp_{case}_{n}.mat")  # hdf5storage appends .mat to other names
    if os.path.exists(tmp):
        os.remove(tmp)
    hdf5storage.savemat(tmp, data, format="7.3", store_python_metadata=False)
    os.replace(tmp, path)
    return path


def main():
    nvars = int(os.environ.get("SCIIO_BENCH_MAT_VARS", "2000"))
    ncells = int(os.environ.get("SCIIO_BENCH_MAT_CELLS", "20000"))
    repeat = int(os.environ.get("SCIIO_BENCH_REPEAT", "5"))
    out = os.path.join(os.environ.get("SCIIO_BENCH_DIR", os.path.join(ROOT, "bench-out")), "mat_read")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["cargo", "build", "-q", "--profile", PROFILE, "-p", "sciio-cli"], cwd=ROOT, check=True)
    py = sys.executable
    res = {"vars": nvars, "cells": ncells, "repeat": repeat, "cpus": os.cpu_count(), "profile": PROFILE,
           "load_before": os.getloadavg()[0]}
    for case, n in (("vars", nvars), ("cell", ncells)):
        src = source(out, case, n)
        py_dst, rs_dst = os.path.join(out, f"{case}_py.npz"), os.path.join(out, f"{case}_sciio.npz")
        peer, sciio = [], []
        for _ in range(repeat):
            peer.append(timed([py, "-c", READ_PY, src, py_dst, case]))
            sciio.append(timed([BIN, "convert", src, rs_dst]))
        with np.load(py_dst) as a, np.load(rs_dst) as b:
            assert sorted(a.files) == sorted(b.files), case
            for k in a.files:
                assert np.array_equal(a[k], b[k]), (case, k)
        ratios = sorted(s / p for s, p in zip(sciio, peer))
        res[case] = {
            "peer_best_s": min(peer), "peer_median_s": statistics.median(peer),
            "sciio_best_s": min(sciio), "sciio_median_s": statistics.median(sciio),
            "ratio_of_bests": min(sciio) / min(peer), "ratio_median": statistics.median(ratios),
        }
    res["load_after"] = os.getloadavg()[0]
    print(json.dumps(res, indent=1))
    for case in ("vars", "cell"):
        r = res[case]["ratio_of_bests"]
        print(f"mat-read {case}: sciio/(hdf5storage+np.savez) = {r:.3f} best, "
              f"{res[case]['ratio_median']:.3f} median (target <= 0.05) {'ok' if r <= 0.05 else 'MISSED'}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
