#!/usr/bin/env bash
# Runs every fuzz target for a bounded time each (default 60 s): ./dev fuzz [SECONDS] [TARGET...]
# The targets live in one cargo-fuzz package per format under fuzz/ (fuzz/Cargo.toml lists them), so
# the npy targets build without arrow or libhdf5. cargo-fuzz needs nightly features;
# RUSTC_BOOTSTRAP=1 enables them on the stable toolchain this machine has.
# Seeds: fuzz/seeds/<target> (committed); corpus: fuzz/corpus/<target>; crashes: fuzz/artifacts/<target>.
# An input running over 30 s is a failure (a hang: libFuzzer's default waits 20 minutes, silently).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-60}
shift || true
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz
fi
export RUSTC_BOOTSTRAP=1
# libhdf5 (C, not instrumented for coverage) mallocs sizes read from damaged files and handles a
# NULL return as an error; AddressSanitizer would report those as crashes instead. Rust code
# still aborts on a failed allocation, so the fuzzers keep catching sciio's own.
export ASAN_OPTIONS="allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
LSAN_OPTIONS_BASE="${LSAN_OPTIONS:-}"
failed=()
found=0
for pkg in fuzz/*/; do
  pkg=${pkg%/}
  [ -f "$pkg/Cargo.toml" ] || continue
  for t in $(cargo fuzz list --fuzz-dir "$pkg"); do
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$t"; then continue; fi
    found=$((found + 1))
    echo "==> fuzzing $t ($pkg) for ${seconds}s" >&2
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    dirs=("$root/fuzz/corpus/$t")
    [ -d "fuzz/seeds/$t" ] && dirs+=("$root/fuzz/seeds/$t")
    # A crash stops this target only: the others still run, and the script fails at the end.
    # libhdf5 mallocs metadata sizes read from the file (16 GiB object headers) before checking
    # them against the end of the file, then fails cleanly without touching the memory
    # (regression files under crates/*/tests/data/fuzz). For the HDF5 targets a single malloc
    # may be that large; memory actually used is still capped by the RSS limit, and sciio's own
    # allocations by the targets' Limits (64 MiB).
    malloc_limit=4096
    lsan="$LSAN_OPTIONS_BASE"
    asan="$ASAN_OPTIONS"
    if [ "$pkg" = fuzz/hdf5 ] || [ "$pkg" = fuzz/hdfstore ]; then
      malloc_limit=65536
      # libhdf5's own leaks on damaged datatypes (fuzz/lsan-libhdf5.supp); suppressions need
      # whole allocation stacks, hence the slow unwinder.
      lsan="suppressions=$root/fuzz/lsan-libhdf5.supp${lsan:+:$lsan}"
      asan="$asan:fast_unwind_on_malloc=0"
    fi
    if ! LSAN_OPTIONS="$lsan" ASAN_OPTIONS="$asan" cargo fuzz run --fuzz-dir "$pkg" "$t" "${dirs[@]}" -- \
      -max_total_time="$seconds" -rss_limit_mb=4096 -malloc_limit_mb="$malloc_limit" -timeout=30 \
      -artifact_prefix="$root/fuzz/artifacts/$t/"; then
      failed+=("$t")
    fi
  done
done
if [ "$found" -eq 0 ] && ! printf '%s\n' "$@" | grep -qx damage_sweep; then
  echo "no fuzz targets found under fuzz/" >&2
  exit 1
fi
# The damage sweep at scale (the test command runs a small sample): damaged copies of real and
# generated files through `sciio convert`, each under 10 s and 2 GiB (crates/sciio-cli/tests/
# damage_sweep.rs). SCIIO_SWEEP_VARIANTS and SCIIO_SWEEP_SEED choose the size and the seed.
if [ $# -eq 0 ] || printf '%s\n' "$@" | grep -qx damage_sweep; then
  echo "==> damage sweep: ${SCIIO_SWEEP_VARIANTS:-20000} damaged copies" >&2
  if ! SCIIO_SWEEP_VARIANTS="${SCIIO_SWEEP_VARIANTS:-20000}" \
    cargo test -q -p sciio-cli --test damage_sweep -- --nocapture; then
    failed+=("damage_sweep")
  fi
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz targets that crashed (inputs in fuzz/artifacts/<target>/): ${failed[*]}" >&2
  exit 1
fi
