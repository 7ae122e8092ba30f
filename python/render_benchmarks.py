"""BENCHMARKS.md's current tables, from bench-results.jsonl (one JSON record per benchmark run).

  python render_benchmarks.py record NAME RESULTS < bench-output   # append the run's ratios
  python render_benchmarks.py render RESULTS BENCHMARKS.md         # rewrite the current tables

`record` reads what python/bench_NAME.py printed, takes the last JSON document in it and keeps
every ratio (sciio time / peer time, lower is better for sciio): keys holding "ratio", and list
entries with a "ratio" beside a "case"/"name". `render` rewrites BENCHMARKS.md below its title:
one table per benchmark with its latest run (by date), between the markers
<!-- current:begin --> and <!-- current:end -->, then each benchmark script's docstring (how it
is set up). Older runs stay in the results file and in git. What was written there by hand is
kept: a benchmark's section with no run in the results file, or marked `<!-- by hand -->`
(`scale`, whose 20 GB runs are gathered by hand), as it is; the notes below a table while the
table's run is the same one.
"""
import ast
import datetime
import json
import os
import subprocess
import sys

BEGIN, END = "<!-- current:begin -->", "<!-- current:end -->"
# A section holding this line is kept as written, whatever the results file holds.
BY_HAND = "<!-- by hand -->"


def last_json(text):
    dec, found, i = json.JSONDecoder(), None, 0
    while i < len(text):
        if text[i] in "{[" and (i == 0 or text[i - 1] == "\n"):
            try:
                value, end = dec.raw_decode(text, i)
                found, i = value, end
                continue
            except ValueError:
                pass
        i += 1
    return found


def ratios(doc, path=""):
    rows = []
    if isinstance(doc, dict):
        name = doc.get("case", doc.get("name"))
        if name is not None and isinstance(doc.get("ratio"), (int, float)):
            rows.append({"case": str(name), "ratio": doc["ratio"], "target": doc.get("target")})
            return rows
        for k, v in doc.items():
            sub = f"{path}.{k}" if path else k
            if isinstance(v, (int, float)) and not isinstance(v, bool) and "ratio" in sub:
                rows.append({"case": sub, "ratio": v, "target": None})
            elif isinstance(v, (dict, list)):
                rows.extend(ratios(v, sub))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            rows.extend(ratios(v, f"{path}[{i}]"))
    return rows


def record(name, results):
    doc = last_json(sys.stdin.read())
    if doc is None:
        sys.exit(f"bench {name}: no JSON document in its output")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or None
    rec = {"bench": name, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "commit": commit, "load": round(os.getloadavg()[0], 1), "cores": os.cpu_count(),
           "note": "", "rows": ratios(doc)}
    with open(results, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec) + "\n")


SETUP_INTRO = """
# How each benchmark is set up

Every benchmark runs the Python peer and sciio on the same data in one run and prints the
ratio sciio time / peer time (`./dev bench NAME`; `./dev bench` runs all but `scale`). The
figures above are the latest run of each (`bench-results.jsonl` keeps every run; the dated run
logs of earlier sessions, with their profiles and explanations, are in git history: `git log -p
BENCHMARKS.md`). The machine is a shared 2-core VM: each run records its load average; compare
ratios, not seconds. The sections below are the benchmark scripts' own descriptions.
"""


def setup_section():
    """One section per python/bench_*.py, its docstring: the description stays with the code."""
    here = os.path.dirname(os.path.abspath(__file__))
    parts = [SETUP_INTRO]
    for name in sorted(os.listdir(here)):
        if name.startswith("bench_") and name.endswith(".py"):
            with open(os.path.join(here, name), encoding="utf-8") as f:
                doc = ast.get_docstring(ast.parse(f.read())) or ""
            parts.append(f"## {name[6:-3]} (`python/{name}`)\n\n{doc.strip()}\n")
    return "\n".join(parts)


def hand_written(text):
    """The sections of the current block of `text` by benchmark name: all their lines, their
    run line (the first after the heading) and the notes after their table."""
    if BEGIN not in text or END not in text:
        return {}
    block = text.split(BEGIN, 1)[1].split(END, 1)[0].split("\n")
    sections, name = {}, None
    for line in block:
        if line.startswith("### "):
            name = line[4:].split(" ", 1)[0]
            sections[name] = {"lines": [], "run": None, "notes": [], "table": "before"}
        if name is None:
            continue
        section = sections[name]
        section["lines"].append(line)
        if line.startswith("### ") or not line.strip() and section["table"] == "before":
            continue
        if section["run"] is None:
            section["run"] = line
        elif line.startswith("|") and section["table"] != "after":
            section["table"] = "in"
        elif section["table"] == "in" or section["table"] == "after":
            section["table"] = "after"
            section["notes"].append(line)
    for section in sections.values():
        while section["notes"] and not section["notes"][0].strip():
            section["notes"].pop(0)
        while section["notes"] and not section["notes"][-1].strip():
            section["notes"].pop()
        if section["notes"]:
            section["notes"].append("")
    return sections


def render(results, md):
    latest = {}
    with open(results, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                # the newest by date (lines of several branches meet in any order in a merge)
                prev = latest.get(rec["bench"])
                if prev is None or rec["date"] >= prev["date"]:
                    latest[rec["bench"]] = rec
    out = [BEGIN, "", "## Current figures", "",
           "The latest run of each benchmark (`./dev bench [NAME]` reruns it, appends the run to "
           "`bench-results.jsonl` and rewrites these tables; earlier runs are in that file and in "
           "git). Ratio = sciio time / peer time: lower is better for sciio.", ""]
    text = open(md, encoding="utf-8").read()
    kept = hand_written(text)
    for name in sorted(set(latest) | set(kept)):
        if name not in latest or BY_HAND in "\n".join(kept.get(name, {}).get("lines", [])):
            out += kept[name]["lines"]
            continue
        rec = latest[name]
        where = ", ".join(x for x in [rec["date"], f"commit {rec['commit']}" if rec.get("commit") else "",
                                      f"load average {rec['load']} on {rec['cores']} cores"
                                      if rec.get("load") is not None else "", rec.get("note", "")] if x)
        out += [f"### {name} (`./dev bench {name}`)", "", where, "",
                "| case | sciio/peer | target |", "|---|---:|---|"]
        for row in rec["rows"]:
            t = row.get("target")
            target = "" if t is None else f"≤ {t} " + ("met" if row["ratio"] <= t else "**missed**")
            out.append(f"| {row['case']} | {row['ratio']:g} | {target} |")
        out.append("")
        if name in kept and kept[name]["run"] == where:
            out += kept[name]["notes"]
    out.append(END)
    block = "\n".join(out)
    head = text.split(BEGIN, 1)[0] if BEGIN in text else text.partition("\n")[0] + "\n\n"
    text = head + block + "\n" + setup_section()
    with open(md, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    if sys.argv[1:2] == ["record"] and len(sys.argv) == 4:
        record(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["render"] and len(sys.argv) == 4:
        render(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
