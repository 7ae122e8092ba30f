#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ for a bounded time each (default 60 s). cargo-fuzz needs nightly
# features; RUSTC_BOOTSTRAP=1 enables them on the stable toolchain this machine has.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz
fi
export RUSTC_BOOTSTRAP=1
targets=$(cd fuzz && cargo fuzz list)
[ -n "$targets" ] || { echo "no fuzz targets in fuzz/" >&2; exit 1; }
for t in $targets; do
  echo "==> fuzzing $t for ${seconds}s" >&2
  mkdir -p "fuzz/corpus/$t"
  seeds="fuzz/seeds/$t"
  if [ -d "$seeds" ]; then
    (cd fuzz && cargo fuzz run "$t" "corpus/$t" "seeds/$t" -- -max_total_time="$seconds" -rss_limit_mb=4096)
  else
    (cd fuzz && cargo fuzz run "$t" "corpus/$t" -- -max_total_time="$seconds" -rss_limit_mb=4096)
  fi
done
