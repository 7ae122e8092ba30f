#!/usr/bin/env bash
# The workspace's rust-version must not promise less than the locked dependencies need: it is
# at least the highest rust-version any resolved dependency declares (`cargo metadata`).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo metadata --format-version 1 --locked | python3 -c '
import json, re, sys
meta = json.load(sys.stdin)
members = set(meta["workspace_members"])
resolved = {n["id"] for n in meta["resolve"]["nodes"]}
def version(text):
    parts = [int(x) for x in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))
need = max(
    ((version(p["rust_version"]), p["name"]) for p in meta["packages"]
     if p["id"] in resolved and p["id"] not in members and p.get("rust_version")),
    default=((0,), "nothing"),
)
manifest = open("Cargo.toml").read()
found = re.search(r"^rust-version\s*=\s*\"([0-9.]+)\"", manifest, re.M)
if not found:
    sys.exit("Cargo.toml: [workspace.package] has no rust-version")
declared = version(found.group(1))
shown = ".".join(map(str, need[0]))
if declared < need[0]:
    sys.exit(f"rust-version {found.group(1)} is older than {shown}, which {need[1]} needs")
print(f"rust-version {found.group(1)} covers every dependency (highest: {need[1]} {shown})")
'
