"""`sciio convert` benchmark, side by side in one run: numpy (np.load of .npy files + np.savez /
np.savez_compressed, and np.load of one member + np.save) against sciio's conversion
(crates/sciio/examples/bench_convert.rs, release build, timed in process) on the same files.

Data: 4 arrays (float64 random walk, int32 counters, float32 noise, uint8 image-like), about
$SCIIO_BENCH_CONVERT_MIB MiB in all (default 128). Output in $SCIIO_BENCH_DIR (default
./bench-out/convert). Times are the best of $SCIIO_BENCH_REPEAT (default 3).
Prints a JSON record with sciio/numpy ratios (lower is better for sciio).
"""
import json
import os
import subprocess
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    mib = float(os.environ.get("SCIIO_BENCH_CONVERT_MIB", "128"))
    repeat = int(os.environ.get("SCIIO_BENCH_REPEAT", "3"))
    out = os.path.join(os.environ.get("SCIIO_BENCH_DIR", os.path.join(ROOT, "bench-out")), "convert")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1)
    quarter = int(mib * (1 << 20) / 4)
    arrays = {
        "walk_f8": np.cumsum(rng.normal(size=quarter // 8)),
        "count_i4": (np.arange(quarter // 4, dtype=np.int32) // 7),
        "noise_f4": rng.normal(size=quarter // 4).astype(np.float32),
        "image_u1": (np.indices((quarter // 1024, 1024)).sum(axis=0) % 251).astype(np.uint8),
    }
    srcs = []
    for name, a in arrays.items():
        path = os.path.join(out, name + ".npy")
        np.save(path, a)
        srcs.append(path)

    def numpy_to_npz(dst, save):
        save(dst, **{os.path.basename(p)[:-4]: np.load(p) for p in srcs})

    def numpy_extract():
        with np.load(os.path.join(out, "numpy_stored.npz")) as z:
            np.save(os.path.join(out, "numpy_back.npy"), z["walk_f8"])

    res = {"mib": mib, "cpus": os.cpu_count()}
    res["numpy_npy_to_npz_stored_s"] = best(
        lambda: numpy_to_npz(os.path.join(out, "numpy_stored.npz"), np.savez), repeat)
    res["numpy_npy_to_npz_deflate6_s"] = best(
        lambda: numpy_to_npz(os.path.join(out, "numpy_deflate6.npz"), np.savez_compressed), repeat)
    res["numpy_npz_member_to_npy_s"] = best(numpy_extract, repeat)
    res["numpy_deflate6_bytes"] = os.path.getsize(os.path.join(out, "numpy_deflate6.npz"))

    subprocess.run(["cargo", "build", "-q", "--release", "-p", "sciio", "--example", "bench_convert"],
                   cwd=ROOT, check=True)
    proc = subprocess.run(
        ["cargo", "run", "-q", "--release", "-p", "sciio", "--example", "bench_convert", "--",
         out, str(repeat)] + srcs,
        cwd=ROOT, check=True, capture_output=True, text=True)
    sciio = json.loads(proc.stdout)
    # Same content as numpy's, or the timing means nothing.
    for kind in ("stored", "deflate6"):
        with np.load(os.path.join(out, f"sciio_{kind}.npz")) as z:
            for name, a in arrays.items():
                assert np.array_equal(z[name], a), (kind, name)
    assert np.array_equal(np.load(os.path.join(out, "sciio_back.npy")), arrays["walk_f8"])
    for k, v in sciio.items():
        res["sciio_" + k] = v
    for k in ("npy_to_npz_stored_s", "npy_to_npz_deflate6_s", "npz_member_to_npy_s"):
        res["ratio_" + k[:-2]] = res["sciio_" + k] / res["numpy_" + k]
    res["ratio_deflate6_size"] = res["sciio_deflate6_bytes"] / res["numpy_deflate6_bytes"]
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
