#!/usr/bin/env bash
# Fails when library or CLI code (not tests, benches, fuzz targets) calls unwrap/expect/panic/todo
# without a '// ok: why' proof that input cannot reach it. sciio-testkit is test support: a panic
# is how it fails a test.
set -euo pipefail
cd "$(dirname "$0")/.."
hits=$(grep -rEn --include='*.rs' '\.unwrap\(\)|\.expect\(|panic!\(|todo!\(|unimplemented!\(' crates \
  | grep -vE '^crates/sciio-testkit/|/tests?/|/benches/|/examples/|/fuzz/|_test\.rs|tests\.rs|^\S+:\s*//' \
  | grep -v '// ok:' || true)
# unit-test modules inside src files are allowed: drop hits below a '#[cfg(test)]' line.
filtered=""
while IFS= read -r hit; do
  [ -z "$hit" ] && continue
  file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}
  testline=$(grep -n '^#\[cfg(test)\]' "$file" | head -n1 | cut -d: -f1 || true)
  if [ -n "$testline" ] && [ "$line" -gt "$testline" ]; then continue; fi
  case "$hit" in *'///'*|*'//!'*) continue ;; esac
  filtered+="$hit"$'\n'
done <<< "$hits"
if [ -n "$filtered" ]; then
  printf 'unwrap/expect/panic in library code (return an error, or prove with "// ok: why"):\n%s' "$filtered" >&2
  exit 1
fi
