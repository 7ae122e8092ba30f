#!/usr/bin/env bash
# Side-by-side benchmarks: each python/bench_*.py runs the Python peer and sciio (a release build of
# the format crate's `bench` example) on the same data in one run and prints sciio/peer time ratios.
# Each run's ratios are appended to bench-results.jsonl, and BENCHMARKS.md's current tables are
# rewritten from the latest run of each benchmark (python/render_benchmarks.py).
# ./dev bench [NAME...]   e.g. ./dev bench npy
set -euo pipefail
cd "$(dirname "$0")/.."
export SCIIO_BENCH_DIR="${SCIIO_BENCH_DIR:-$PWD/bench-out}"
RESULTS="${SCIIO_BENCH_RESULTS:-$PWD/bench-results.jsonl}"
mkdir -p "$SCIIO_BENCH_DIR"
# `scale` (tens of GB of sources) runs only when named: ./dev bench scale
if [ $# -eq 0 ]; then set -- $(ls python/bench_*.py | sed 's#python/bench_##; s#\.py##' | grep -vx scale); fi
for name in "$@"; do
  echo "==> benchmark: $name" >&2
  log="$SCIIO_BENCH_DIR/$name.out"
  "$SCIIO_PYTHON" "python/bench_$name.py" | tee "$log"
  "$SCIIO_PYTHON" python/render_benchmarks.py record "$name" "$RESULTS" < "$log"
done
"$SCIIO_PYTHON" python/render_benchmarks.py render "$RESULTS" BENCHMARKS.md
echo "==> BENCHMARKS.md: current tables rewritten from $RESULTS" >&2
