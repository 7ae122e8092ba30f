"""numpy sources into MAT files, side by side in one run: `sciio convert x.npy out.mat` (the
release build of the CLI, whole process) against hdf5storage.savemat (v7.3) and scipy.io.savemat
(v7) of the same array loaded by numpy, on the same `.npy` files.

Cases (sizes overridable by environment variables):
  records  a structured array of $SCIIO_BENCH_MATCONV_RECORDS records (default 5000: hdf5storage
           takes about 4 ms a record) of fields i <i8, x <f8, y <f4, s S12 (a 1-by-N struct array:
           in v7.3 each element's field values are datasets in /#refs#)
  text     a 1-d |S16 array of $SCIIO_BENCH_MATCONV_STRINGS strings (default 8000000, 128 MiB): an N-by-16
           char matrix
  frame    a Parquet file of $SCIIO_BENCH_MATCONV_ROWS rows (default 4000000) of columns i int64,
           x float64, y float32, s string: `sciio convert f.parquet out.mat` (a variable per column,
           MATLAB columns) against pandas reading it and the peer writing the same columns
           (`df[c].to_numpy()` as n-by-1 columns, the strings as a `U` array)
Each written file is read back by the peer's reader and compared with the source. Times are the
best of $SCIIO_BENCH_REPEAT (default 1) runs; peak RSS of sciio's process is printed beside.
Targets (sciio / peer): records <= 0.05 (v7.3) and <= 0.1 (v7), text <= 0.5, frame <= 1.0. In v7 both
write text in scipy.io's layout (an N-by-width char matrix, rows padded with spaces); in v7.3 both
write hdf5storage's (one 1-by-(N*width) row of codes with its Python.* attributes).
"""
import json
import os
import subprocess
import time

import hdf5storage
import numpy as np
import scipy.io

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REC = np.dtype([("i", "<i8"), ("x", "<f8"), ("y", "<f4"), ("s", "S12")])


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def sources(out, records, strings):
    r = np.zeros(records, dtype=REC)
    r["i"] = np.arange(records)
    r["x"] = np.arange(records) * 0.5
    r["y"] = np.arange(records, dtype=np.float32) / 3
    r["s"] = np.char.add(b"rec", np.arange(records).astype("S9"))
    t = np.char.add(b"text", np.arange(strings).astype("S12")).astype("S16")
    paths = {}
    for case, a in (("records", r), ("text", t)):
        paths[case] = os.path.join(out, f"{case}.npy")
        np.save(paths[case], a)
    return paths


def frame_source(out, rows):
    """A Parquet file of `rows` rows (no stored index: a RangeIndex, which sciio writes as the
    `index` variable too)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    idx = np.arange(rows, dtype=np.int64)
    table = pa.table({"i": idx, "x": idx * 0.5, "y": (idx % 1000).astype(np.float32),
                      "s": np.char.add("row", (idx % 100000).astype("U6"))})
    path = os.path.join(out, "frame.parquet")
    pq.write_table(table, path)
    return path


def frame_columns(path):
    """What the peer writes of the frame: numpy columns, numbers n-by-1, strings `U`."""
    import pandas as pd
    df = pd.read_parquet(path)
    cols = {"index": df.index.to_numpy().reshape(-1, 1)}
    for c in df.columns:
        v = df[c].to_numpy()
        cols[c] = v.astype(str) if v.dtype == object else v.reshape(-1, 1)
    return cols


def peer_frame(version, path, cols):
    if os.path.exists(path):
        os.remove(path)
    if version == "7.3":
        hdf5storage.savemat(path, cols, format="7.3")
    else:
        scipy.io.savemat(path, cols, do_compression=True)


def same_frame(version, path, cols):
    back = hdf5storage.loadmat(path) if version == "7.3" else scipy.io.loadmat(path)
    for c, want in cols.items():
        got = np.asarray(back[c])
        if want.dtype.kind == "U":
            got = np.char.rstrip(got) if version == "7" else got
            assert np.array_equal(got.ravel(), want), f"{path}: column {c}"
        else:
            assert got.shape == want.shape and np.array_equal(got, want), f"{path}: column {c}"


def sciio(binary, src, dst, version):
    if os.path.exists(dst):
        os.remove(dst)
    # GNU time's %M: sciio's own peak RSS (a child forked from this process would count the
    # source arrays this process holds in its ru_maxrss).
    rss = dst + ".rss"
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss, binary, "convert", src, dst,
                    "--mat-version", version], check=True, capture_output=True)
    with open(rss) as f:
        return int(f.read().split()[-1]) / 1024


def peer_write(version, path, name, a):
    if os.path.exists(path):
        os.remove(path)
    if version == "7.3":
        hdf5storage.savemat(path, {name: a}, format="7.3")
    else:
        # MAT v7 is the compressed Level-5 file (scipy's default writes it uncompressed, v5).
        scipy.io.savemat(path, {name: a}, do_compression=True)


def same(version, path, name, a):
    """The file read back by the peer's reader holds the source's values (a struct array's text
    field comes back as objects from either reader; scipy gives char rows as str)."""
    back = (hdf5storage.loadmat(path) if version == "7.3" else scipy.io.loadmat(path))[name]
    if a.dtype.names:
        for f in a.dtype.names:
            got = np.array([np.asarray(e).ravel()[0] for e in back[f].ravel()])
            want = a[f] if version == "7.3" or a[f].dtype.kind != "S" else a[f].astype("U")
            assert np.array_equal(got.astype(want.dtype), want), f"{path}: field {f}"
    elif version == "7.3":
        assert back.dtype == a.dtype and np.array_equal(back, a), f"{path}: not the source"
    else:
        # scipy.io's layout (sciio's too): an N-by-width char matrix, rows padded with spaces.
        width = a.dtype.itemsize // (4 if a.dtype.kind == "U" else 1)
        want = np.char.ljust(a.astype("U"), width)
        assert np.array_equal(back, want), f"{path}: not the source"


def main():
    records = int(os.environ.get("SCIIO_BENCH_MATCONV_RECORDS", "5000"))
    strings = int(os.environ.get("SCIIO_BENCH_MATCONV_STRINGS", "8000000"))
    repeat = int(os.environ.get("SCIIO_BENCH_REPEAT", "1"))
    out = os.path.join(os.environ.get("SCIIO_BENCH_DIR", os.path.join(ROOT, "bench-out")), "mat_convert")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "sciio-cli"], cwd=ROOT, check=True)
    binary = os.path.join(ROOT, "target", "release", "sciio")
    paths = sources(out, records, strings)
    res = {"records": records, "strings": strings, "cpus": os.cpu_count(),
           "load": os.getloadavg()[0], "cases": []}
    targets = {("records", "7.3"): 0.05, ("records", "7"): 0.1, ("text", "7.3"): 0.5, ("text", "7"): 0.5}
    for case, src in paths.items():
        for version in ("7.3", "7"):
            name = os.path.basename(src)[:-4]
            a = np.load(src)
            mine = os.path.join(out, f"sciio_{case}_{version}.mat")
            theirs = os.path.join(out, f"peer_{case}_{version}.mat")
            rss = []
            sciio_s = best(lambda: rss.append(sciio(binary, src, mine, version)), repeat)
            peer_s = best(lambda: peer_write(version, theirs, name, np.load(src)), repeat)
            same(version, mine, name, a)
            same(version, theirs, name, a)
            peer = "hdf5storage" if version == "7.3" else "scipy.io"
            res["cases"].append({
                "case": f"{case} -> MAT v{version} (vs {peer})",
                "ratio": sciio_s / peer_s,
                "target": targets[(case, version)],
                "sciio_s": sciio_s,
                "peer_s": peer_s,
                "sciio_peak_rss_mib": max(rss),
            })
    rows = int(os.environ.get("SCIIO_BENCH_MATCONV_ROWS", "4000000"))
    res["rows"] = rows
    frame = frame_source(out, rows)
    targets[("frame", "7.3")] = targets[("frame", "7")] = 1.0
    for version in ("7.3", "7"):
        mine = os.path.join(out, f"sciio_frame_{version}.mat")
        theirs = os.path.join(out, f"peer_frame_{version}.mat")
        rss = []
        sciio_s = best(lambda: rss.append(sciio(binary, frame, mine, version)), repeat)
        peer_s = best(lambda: peer_frame(version, theirs, frame_columns(frame)), repeat)
        cols = frame_columns(frame)
        same_frame(version, mine, cols)
        same_frame(version, theirs, cols)
        peer = "pandas + hdf5storage" if version == "7.3" else "pandas + scipy.io"
        res["cases"].append({
            "case": f"frame -> MAT v{version} (vs {peer})",
            "ratio": sciio_s / peer_s,
            "target": targets[("frame", version)],
            "sciio_s": sciio_s,
            "peer_s": peer_s,
            "sciio_peak_rss_mib": max(rss),
        })
    print(json.dumps(res, indent=1))
    for c in res["cases"]:
        ok = "ok" if c["ratio"] <= c["target"] else "MISSED"
        print(f"{c['case']}: sciio/peer = {c['ratio']:.3f} (target <= {c['target']}) {ok}; "
              f"sciio {c['sciio_s']:.2f} s, {c['sciio_peak_rss_mib']:.0f} MiB")


if __name__ == "__main__":
    main()
