#!/usr/bin/env bash
# Every `unsafe` block, fn, impl, trait or extern block in the workspace's Rust code carries its
# justification: a `// SAFETY:` comment (blocks, impls) or a `# Safety` doc section (fns,
# traits) on the line itself or within the 8 lines above it. Prints the sites without one and
# fails; prints the count of sites otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
files=$(git ls-files 'crates/*.rs' 'fuzz/*.rs')
# shellcheck disable=SC2086
awk '
  FNR == 1 { n = 0 }
  {
    line = $0
    code = line
    sub(/\/\/.*/, "", code)              # drop line comments
    gsub(/"([^"\\]|\\.)*"/, "\"\"", code) # drop string literals
    hist[FNR % 9] = line
    # A doc comment or attribute block: where an item'"'"'s `# Safety` section is.
    if (line ~ /^[ \t]*(\/\/\/|#\[)/) { if (!indoc) doc = ""; indoc = 1; doc = doc line "\n" }
    else if (line !~ /^[ \t]*\/\//) { lastdoc = indoc ? doc : ""; indoc = 0; doc = "" }
    if (code ~ /unsafe[ \t]+extern[ \t]+""[ \t]+fn[ \t]*\(/) next   # a fn pointer type
    if (code ~ /(^|[^A-Za-z0-9_])unsafe[ \t]*(\{|fn[ \t]|impl[ \t<]|trait[ \t]|extern[ \t]|$)/) {
      sites++
      ok = (lastdoc ~ /# Safety/)
      for (k = 0; !ok && k <= 8 && k < FNR; k++) {
        if (hist[(FNR - k) % 9] ~ /SAFETY:|# Safety/) { ok = 1; break }
      }
      if (!ok) { missing++; printf "%s:%d: unsafe without a SAFETY comment: %s\n", FILENAME, FNR, line }
    }
  }
  END {
    printf "%d unsafe sites, %d without a SAFETY comment\n", sites, missing > "/dev/stderr"
    exit missing > 0
  }
' $files
