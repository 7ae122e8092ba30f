"""MAT v7.3 benchmark, side by side in one run: hdf5storage (savemat/loadmat, matlab_compatible),
mat73 (loadmat) and sciio (the release build of crates/sciio-mat/examples/bench_mat.rs) on the same
values.

Cases (sizes overridable by environment variables):
  matrix  a double matrix of $SCIIO_BENCH_MAT_MIB MiB (default 512), compressed
          (hdf5storage: its defaults, gzip 7 + shuffle + fletcher32; sciio: its defaults,
          deflate 3 + shuffle on all cores, MATLAB's own default level)
  struct  a scalar struct of $SCIIO_BENCH_MAT_FIELDS scalar fields (default 2000)
  cell    a cell of $SCIIO_BENCH_MAT_CELLS 3x3 doubles (default 20000)
Reads: every reader reads the same file (the one sciio wrote, and for the matrix also the one
hdf5storage wrote). Times are the best of $SCIIO_BENCH_REPEAT (default 1) runs.
$SCIIO_BENCH_PROFILE picks the cargo profile of the sciio side (default release; "dev-opt" =
dev profile with sciio's crates at opt-level 3).
Targets (sciio / hdf5storage): struct and cell write and read <= 0.05, matrix write <= 0.4,
read <= 0.5.
"""
import json
import os
import subprocess
import sys
import time

import hdf5storage
import mat73
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def values(rows, cols, fields, cells):
    # Same formula as examples/bench_mat.rs: x[r, c] = ((r * cols + c) % 1000) * 0.001 + r.
    idx = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    m = (idx % 1000) * 0.001 + np.arange(rows, dtype=np.float64)[:, None]
    st = {f"f{i}": float(i) for i in range(fields)}
    cell = np.empty((1, cells), dtype=object)
    for i in range(cells):
        cell[0, i] = np.arange(i * 9, i * 9 + 9, dtype=np.float64).reshape(3, 3, order="F")
    return {"matrix": m, "struct": st, "cell": cell}


PROFILE = os.environ.get("SCIIO_BENCH_PROFILE", "release")
# "dev-opt": the dev profile (dependencies at opt-level 2, libhdf5 built RelWithDebInfo) with
# sciio's own crates at opt-level 3, for machines where a release build of libhdf5 is too slow.
if PROFILE == "dev-opt":
    FLAGS = ["--profile", "dev"]
    for crate in ("sciio-core", "sciio-hdf5", "sciio-mat"):
        FLAGS += ["--config", f'profile.dev.package."{crate}".opt-level=3',
                  "--config", f'profile.dev.package."{crate}".debug-assertions=false',
                  "--config", f'profile.dev.package."{crate}".overflow-checks=false']
else:
    FLAGS = ["--profile", PROFILE]


def cargo(*args):
    proc = subprocess.run(["cargo", "run", "-q", *FLAGS, "-p", "sciio-mat", "--example", "bench_mat", "--", *args],
                          cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(proc.stdout)


def main():
    mib = float(os.environ.get("SCIIO_BENCH_MAT_MIB", "512"))
    fields = int(os.environ.get("SCIIO_BENCH_MAT_FIELDS", "2000"))
    cells = int(os.environ.get("SCIIO_BENCH_MAT_CELLS", "20000"))
    repeat = int(os.environ.get("SCIIO_BENCH_REPEAT", "1"))
    out = os.environ.get("SCIIO_BENCH_DIR", os.path.join(ROOT, "bench-out"))
    os.makedirs(out, exist_ok=True)
    n = int(mib * (1 << 20)) // 8
    cols = max(1, int(np.sqrt(n)))
    rows = max(1, n // cols)
    vals = values(rows, cols, fields, cells)
    res = {"matrix_mib": rows * cols * 8 / (1 << 20), "rows": rows, "cols": cols, "fields": fields,
           "cells": cells, "cpus": os.cpu_count()}

    subprocess.run(["cargo", "build", "-q", *FLAGS, "-p", "sciio-mat", "--example", "bench_mat"], cwd=ROOT, check=True)
    for case, v in vals.items():
        path = os.path.join(out, f"hdf5storage_{case}.mat")
        def save():
            if os.path.exists(path):
                os.remove(path)  # a fresh file each time, as sciio writes one
            hdf5storage.savemat(path, {case: v}, format="7.3", store_python_metadata=False)
        res[f"hdf5storage_write_{case}_s"] = best(save, repeat)
    sciio_w = min(({k: v for k, v in cargo("write", out, str(rows), str(cols), str(fields), str(cells)).items()}
                   for _ in range(repeat)), key=lambda d: sum(d.values()))
    for case in vals:
        res[f"sciio_write_{case}_s"] = sciio_w[f"write_{case}"]

    files = {case: os.path.join(out, f"sciio_{case}.mat") for case in vals}
    files["matrix_hdf5storage_file"] = os.path.join(out, "hdf5storage_matrix.mat")
    for case, path in files.items():
        res[f"hdf5storage_read_{case}_s"] = best(lambda: hdf5storage.loadmat(path), repeat)
        res[f"mat73_read_{case}_s"] = best(lambda: mat73.loadmat(path), repeat)
        res[f"sciio_read_{case}_s"] = min(cargo("read", path)[path] for _ in range(repeat))

    # sciio's files hold the same values as the Python ones.
    back = hdf5storage.loadmat(files["matrix"])["matrix"]
    assert np.array_equal(back, vals["matrix"]), "sciio matrix differs"
    s = hdf5storage.loadmat(files["struct"])["struct"]
    assert len(s.dtype.names) == fields and float(np.squeeze(s[f"f{fields - 1}"][0, 0])) == fields - 1
    c = hdf5storage.loadmat(files["cell"])["cell"]
    assert c.shape == (1, cells) and np.array_equal(c[0, -1], vals["cell"][0, -1]), "sciio cell differs"
    res["size_sciio_matrix_mib"] = os.path.getsize(files["matrix"]) / (1 << 20)
    res["size_hdf5storage_matrix_mib"] = os.path.getsize(os.path.join(out, "hdf5storage_matrix.mat")) / (1 << 20)

    ratios = {}
    for case in vals:
        ratios[f"write_{case}"] = res[f"sciio_write_{case}_s"] / res[f"hdf5storage_write_{case}_s"]
    for case in files:
        ratios[f"read_{case}"] = res[f"sciio_read_{case}_s"] / res[f"hdf5storage_read_{case}_s"]
        ratios[f"read_{case}_vs_mat73"] = res[f"sciio_read_{case}_s"] / res[f"mat73_read_{case}_s"]
    res["ratios_sciio_over_peer"] = ratios
    print(json.dumps(res, indent=1))
    targets = {"write_struct": 0.05, "write_cell": 0.05, "read_struct": 0.05, "read_cell": 0.05,
               "write_matrix": 0.4, "read_matrix": 0.5}
    for k, t in targets.items():
        print(f"{k}: sciio/hdf5storage = {ratios[k]:.3f} (target <= {t}) {'ok' if ratios[k] <= t else 'MISSED'}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
