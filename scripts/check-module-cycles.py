#!/usr/bin/env python3
"""Fails when the modules of a crate import each other in a circle.

For each crate under crates/, every `src` file is a module; an edge A -> B is a path in A's
code (outside comments, strings not parsed) that names B through `crate::...` or `super::...`
(in `use` lines, `use crate::{a, b::c}` groups, or inline paths), an item the crate root
re-exports named through the root (`crate::File` with `pub use file::File` in lib.rs is an
edge to `file`), or an item of a child module named by a bare path (`child::item`). A module
declaring its children (`mod x;`) and re-exporting their items (`pub use x::Y`) is not an
edge. Strongly connected components of more than
one file are circles; the script lists each with the names that tie it and exits 1.

Usage: scripts/check-module-cycles.py [CRATE_DIR...]   (default: every crates/*)
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def module_files(src):
    """{module path tuple: file} for a crate's src folder."""
    mods = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, src)[:-3].split(os.sep)
            if rel[-1] in ("lib", "main"):
                rel = rel[:-1]
            elif rel[-1] == "mod":
                rel = rel[:-1]
            mods[tuple(rel)] = full
    return mods


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def expand_use_groups(text):
    """`crate::a::{b, c::{d}}` -> `crate::a::b`, `crate::a::c::d` (one level of nesting at a time)."""
    pattern = re.compile(r"((?:crate|super)(?:::\w+)*)::\{([^{}]*)\}")
    for _ in range(8):
        def repl(m):
            prefix, items = m.group(1), m.group(2)
            parts = [p.strip() for p in items.split(",") if p.strip()]
            return " ".join(f"{prefix}::{p.split(' as ')[0].strip()}" for p in parts)
        new = pattern.sub(repl, text)
        if new == text:
            break
        text = new
    # Groups whose items carry their own groups: expand the inner first, then the outer.
    return text


def resolve(path, here, mods):
    """The longest module prefix of `path` (a list of segments after crate/super)."""
    for n in range(len(path), 0, -1):
        if tuple(path[:n]) in mods:
            return tuple(path[:n])
    return None


def root_reexports(mods):
    """{name: module} for the crate root's `pub use module::{Name, ...}` / `pub use module::Name`."""
    root = mods.get(())
    if root is None:
        return {}
    text = strip_comments(open(root, encoding="utf-8").read())
    found = {}
    for m in re.finditer(r"pub(?:\(crate\))?\s+use\s+([\w:]+?)::(\{[^}]*\}|\w+(?:\s+as\s+\w+)?)\s*;", text):
        path = [p for p in m.group(1).split("::") if p not in ("crate", "self")]
        target = resolve(path, (), mods)
        if target is None:
            continue
        items = m.group(2).strip("{}").split(",")
        for item in items:
            item = item.strip()
            if not item or "::" in item:
                continue
            name = item.split(" as ")[-1].strip()
            found[name] = target
    return found


def edges_of(mod, file, mods, reexports):
    raw = strip_comments(open(file, encoding="utf-8").read())
    # An inline `mod tests { use super::... }` names its own file, not the parent: unit-test
    # modules (at the end of a file, by convention here) are left out.
    # A `pub(crate) mod tests` (test helpers other modules' tests share) is one too.
    raw = re.split(r"#\[cfg\(test\)\]\s*(?:pub(?:\(crate\))?\s+)?mod\s+\w+\s*\{", raw, maxsplit=1)[0]
    # Re-exports are structure: a parent naming what its children hold, not a use of them.
    raw = "\n".join(l for l in raw.splitlines() if not re.match(r"\s*pub(\(crate\))?\s+use\b", l))
    text = expand_use_groups(raw)
    out = {}
    children = {m[-1]: m for m in mods if len(m) == len(mod) + 1 and m[: len(mod)] == mod}
    for m in re.finditer(r"(?<![\w:])(\w+)::(\w+)", text):
        child = children.get(m.group(1))
        if child is not None:
            out.setdefault(child, set()).add(m.group(2))
    for m in re.finditer(r"\b(crate|super(?:::super)*)((?:::\w+)+)", text):
        head, rest = m.group(1), m.group(2).split("::")[1:]
        if head == "crate":
            base = []
        else:
            ups = head.count("super")
            # A file `a/b.rs` or `a/b/mod.rs` is module (a, b); super of it is (a,).
            base = list(mod[: len(mod) - ups])
        target = resolve(base + rest, mod, mods)
        if head == "crate" and target in (None, ()) and rest and rest[0] in reexports:
            target, base, rest = reexports[rest[0]], [], list(reexports[rest[0]]) + rest
        if target is None or target == mod:
            continue
        # Naming a child or a parent module (declaration, re-export) is structure, not use,
        # unless an item of it is named.
        names = rest[len(target) - len(base):] if len(target) >= len(base) else []
        if not names:
            continue
        out.setdefault(target, set()).add(names[0])
    return out


def sccs(graph):
    index, low, stack, on, result, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            result.append(comp)

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return result


def main(args):
    crates = args or sorted(
        os.path.join(ROOT, "crates", c) for c in os.listdir(os.path.join(ROOT, "crates"))
    )
    circles = 0
    for crate in crates:
        src = os.path.join(crate, "src")
        if not os.path.isdir(src):
            continue
        mods = module_files(src)
        reexports = root_reexports(mods)
        graph = {m: edges_of(m, f, mods, reexports) for m, f in mods.items()}
        for comp in sccs(graph):
            if len(comp) < 2:
                continue
            circles += 1
            names = sorted(os.path.relpath(mods[m], ROOT) for m in comp)
            print(f"circle in {os.path.relpath(crate, ROOT)}: {', '.join(names)}")
            for m in sorted(comp):
                for t, items in sorted(graph[m].items()):
                    if t in comp:
                        print(f"  {os.path.relpath(mods[m], ROOT)} -> "
                              f"{os.path.relpath(mods[t], ROOT)}: {', '.join(sorted(items))}")
    if circles:
        print(f"{circles} module circle(s): break each (move the shared piece down a layer)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
