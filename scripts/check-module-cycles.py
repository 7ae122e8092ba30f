#!/usr/bin/env python3
"""Fails when the modules of a crate import each other in a circle.

For each crate under crates/, every `src` file is a module; an edge A -> B is a path in A's
code (outside comments, strings not parsed) that names B through `crate::...` or `super::...`
(in `use` lines, `use crate::{a, b::c}` groups, or inline paths). A module and the modules it
declares (`mod x;` in a parent) are not an edge. Strongly connected components of more than
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


def edges_of(mod, file, mods):
    text = expand_use_groups(strip_comments(open(file, encoding="utf-8").read()))
    out = {}
    for m in re.finditer(r"\b(crate|super(?:::super)*)((?:::\w+)+)", text):
        head, rest = m.group(1), m.group(2).split("::")[1:]
        if head == "crate":
            base = []
        else:
            ups = head.count("super")
            # A file `a/b.rs` or `a/b/mod.rs` is module (a, b); super of it is (a,).
            base = list(mod[: len(mod) - ups])
        target = resolve(base + rest, mod, mods)
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
        graph = {m: edges_of(m, f, mods) for m, f in mods.items()}
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
