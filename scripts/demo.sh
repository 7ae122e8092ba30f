#!/usr/bin/env bash
# The README's main job: numpy writes example files, sciio converts them into one compressed
# .npz, lists it, prints a member, converts a member back to .npy, and numpy checks the result.
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
print(f"np.load agrees: {len(names)} arrays in examples.npz (deflated) and counts_back.npy "
      f"are identical to what numpy wrote")
PY
