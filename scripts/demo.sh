#!/usr/bin/env bash
# The README's main job: numpy and PyTables write example files; sciio converts them among the
# four formats (.npy/.npz, PyTables .h5, MATLAB .mat v7.3 and v7, Parquet), lists, inspects and
# prints them; the reference tools (numpy, PyTables, scipy, hdf5storage, pandas) check them.
#   bash scripts/demo.sh path/to/sciio      (./dev demo builds sciio and calls this)
set -euo pipefail
cd "$(dirname "$0")/.."
SCIIO="${1:?usage: scripts/demo.sh path/to/sciio}"
PY="${SCIIO_PYTHON:-.venv/bin/python}"
OUT="examples-out"
rm -rf "$OUT" && mkdir -p "$OUT"
step() { printf '\n\033[1m$ %s\033[0m\n' "$*" >&2; }

step "python python/make_examples.py $OUT    # numpy writes .npy files of many dtypes"
read -r -a names <<< "$("$PY" python/make_examples.py "$OUT")"
ls -l "$OUT"

srcs=()
for name in "${names[@]}"; do srcs+=("$OUT/$name.npy"); done
step "sciio convert $OUT/*.npy $OUT/examples.npz --compress deflate:6"
"$SCIIO" convert "${srcs[@]}" "$OUT/examples.npz" --compress deflate:6

step "sciio ls $OUT/examples.npz"
"$SCIIO" ls "$OUT/examples.npz"

step "sciio cat $OUT/examples.npz:temperatures"
"$SCIIO" cat "$OUT/examples.npz:temperatures"

step "sciio cat --json $OUT/examples.npz:records"
"$SCIIO" cat --json "$OUT/examples.npz:records"

step "sciio convert $OUT/examples.npz:counts $OUT/counts_back.npy"
"$SCIIO" convert "$OUT/examples.npz:counts" "$OUT/counts_back.npy"

step "sciio ls $OUT/station.h5    # a PyTables file"
"$SCIIO" ls "$OUT/station.h5"

step "sciio convert $OUT/station.h5:/readings/hourly $OUT/hourly.npy"
"$SCIIO" convert "$OUT/station.h5:/readings/hourly" "$OUT/hourly.npy"

step "sciio cat $OUT/hourly.npy"
"$SCIIO" cat "$OUT/hourly.npy"

step "sciio info $OUT/station.h5    # storage: chunks, filters, compression ratio"
"$SCIIO" info "$OUT/station.h5"

step "sciio cat --head 3 $OUT/station.h5:/readings/hourly    # reads only those rows"
"$SCIIO" cat --head 3 "$OUT/station.h5:/readings/hourly"

h5srcs=("$OUT/temperatures.npy" "$OUT/counts.npy" "$OUT/records.npy")
step "sciio convert ${h5srcs[*]} $OUT/examples.h5 --compress blosc2:lz4:5    # npy -> PyTables"
"$SCIIO" convert "${h5srcs[@]}" "$OUT/examples.h5" --compress blosc2:lz4:5

step "sciio ls $OUT/examples.h5"
"$SCIIO" ls "$OUT/examples.h5"

step "sciio convert $OUT/examples.npz $OUT/examples.mat    # npz -> MATLAB v7.3; what MATLAB cannot hold is left out"
"$SCIIO" convert "$OUT/examples.npz" "$OUT/examples.mat"

step "sciio convert $OUT/station.h5:/calibration $OUT/calibration.mat --mat-version 7"
"$SCIIO" convert "$OUT/station.h5:/calibration" "$OUT/calibration.mat" --mat-version 7

step "sciio ls $OUT/calibration.mat"
"$SCIIO" ls "$OUT/calibration.mat"

step "sciio convert $OUT/calibration.mat $OUT/calibration_back.npz    # MAT -> npz"
"$SCIIO" convert "$OUT/calibration.mat" "$OUT/calibration_back.npz"

step "sciio convert $OUT/station.h5:/readings/hourly $OUT/hourly.parquet    # PyTables -> Parquet"
"$SCIIO" convert "$OUT/station.h5:/readings/hourly" "$OUT/hourly.parquet"

step "sciio info $OUT/hourly.parquet    # row groups, codecs, column statistics"
"$SCIIO" info "$OUT/hourly.parquet"

step "sciio convert $OUT/hourly.parquet $OUT/hourly_from_parquet.npy    # Parquet -> npy"
"$SCIIO" convert "$OUT/hourly.parquet" "$OUT/hourly_from_parquet.npy"

step "python: does np.load agree?"
"$PY" - "$OUT" "${names[@]}" <<'PY'
import sys, zipfile
import numpy as np
out, names = sys.argv[1], sys.argv[2:]
z = np.load(f"{out}/examples.npz")
assert sorted(z.files) == sorted(names), (z.files, names)
for name in names:
    a, b = np.load(f"{out}/{name}.npy"), z[name]
    assert a.dtype == b.dtype and a.shape == b.shape, name
    assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), name
back = np.load(f"{out}/counts_back.npy")
assert back.dtype == z["counts"].dtype and np.array_equal(back, z["counts"])
methods = {i.compress_type for i in zipfile.ZipFile(f"{out}/examples.npz").infolist()}
assert methods == {zipfile.ZIP_DEFLATED}, methods
import tables
with tables.open_file(f"{out}/station.h5") as f:
    table = f.root.readings.hourly.read()
hourly = np.load(f"{out}/hourly.npy")
assert hourly.dtype.names == table.dtype.names and np.array_equal(hourly, table)
print(f"np.load agrees with PyTables on hourly.npy ({len(hourly)} rows of {hourly.dtype.names})")
with tables.open_file(f"{out}/examples.h5") as f:
    for name in ("temperatures", "counts", "records"):
        a = f.get_node("/" + name).read()
        assert np.array_equal(a, z[name]), name
print("PyTables agrees: examples.h5 (blosc2) holds the .npy files' arrays")
import hdf5storage, scipy.io
m = hdf5storage.loadmat(f"{out}/examples.mat")
for name in ("temperatures", "counts", "fortran"):
    assert np.array_equal(m[name], z[name]), name
with tables.open_file(f"{out}/station.h5") as f:
    cal = f.root.calibration.read()
assert np.array_equal(scipy.io.loadmat(f"{out}/calibration.mat")["calibration"], cal)
assert np.array_equal(np.load(f"{out}/calibration_back.npz")["calibration"], cal)
print("hdf5storage and scipy.io agree: examples.mat (v7.3) and calibration.mat (v7), and back")
import pandas as pd
df = pd.read_parquet(f"{out}/hourly.parquet")
assert list(df.columns) == list(table.dtype.names), df.columns
assert np.array_equal(df["temp"].to_numpy(), table["temp"]) and (df["sky"] == [s for s in table["sky"]]).all()
back = np.load(f"{out}/hourly_from_parquet.npy")
assert np.array_equal(back["hour"], table["hour"]) and np.array_equal(back["temp"], table["temp"])
print(f"pandas agrees: hourly.parquet holds the table's {len(df)} rows, and back to .npy")
print(f"np.load agrees: {len(names)} arrays in examples.npz (deflated) and counts_back.npy "
      f"are identical to what numpy wrote")
PY
