#!/usr/bin/env bash
# The sciio crate builds, without warnings, with each format feature alone and with none:
# "features only to slim it" must hold for a user who turns the others off.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for features in "" hdf5 mat parquet "mat,parquet" hdfstore; do
  out=$(cargo check -q -p sciio --no-default-features --features "$features" --message-format short 2>&1) || {
    echo "sciio with features [$features] does not build:"; echo "$out"; status=1; continue; }
  if grep -E '(warning|error)' <<<"$out" >/dev/null; then
    echo "sciio with features [$features] builds with warnings:"; echo "$out"; status=1
  fi
done
exit $status
