"""BENCHMARKS.md's current tables, from bench-results.jsonl (one JSON record per benchmark run).

  python render_benchmarks.py record NAME RESULTS < bench-output   # append the run's ratios
  python render_benchmarks.py render RESULTS BENCHMARKS.md         # rewrite the current tables

`record` reads what python/bench_NAME.py printed, takes the last JSON document in it and keeps
every ratio (sciio time / peer time, lower is better for sciio): keys holding "ratio", and list
entries with a "ratio" beside a "case"/"name". `render` writes, between the markers
<!-- current:begin --> and <!-- current:end --> at the top of BENCHMARKS.md, one table per
benchmark with its latest run. Older runs stay in the results file and in git.
"""
import datetime
import json
import os
import subprocess
import sys

BEGIN, END = "<!-- current:begin -->", "<!-- current:end -->"


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


def render(results, md):
    latest = {}
    with open(results, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                latest[rec["bench"]] = rec
    out = [BEGIN, "", "## Current figures", "",
           "The latest run of each benchmark (`./dev bench [NAME]` reruns it, appends the run to "
           "`bench-results.jsonl` and rewrites these tables; earlier runs are in that file and in "
           "git). Ratio = sciio time / peer time: lower is better for sciio.", ""]
    for name in sorted(latest):
        rec = latest[name]
        where = ", ".join(x for x in [rec["date"], f"commit {rec['commit']}" if rec.get("commit") else "",
                                      f"load average {rec['load']} on {rec['cores']} cores"
                                      if rec.get("load") is not None else "", rec.get("note", "")] if x)
        out += [f"### {name} (`./dev bench {name}`)", "", where, "",
                "| case | sciio/peer | target |", "|---|---:|---|"]
        for row in rec["rows"]:
            target = "" if row.get("target") is None else f"≤ {row['target']}"
            out.append(f"| {row['case']} | {row['ratio']:g} | {target} |")
        out.append("")
    out.append(END)
    block = "\n".join(out)
    text = open(md, encoding="utf-8").read()
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + block + tail
    else:
        first, _, body = text.partition("\n")
        text = first + "\n\n" + block + "\n" + body
    with open(md, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    if sys.argv[1:2] == ["record"] and len(sys.argv) == 4:
        record(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["render"] and len(sys.argv) == 4:
        render(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
