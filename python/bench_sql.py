"""`sciio sql` against pandas doing the same query by hand, each timed as a whole process (the
release `sciio` binary; `python -c ...` for pandas), on the same $SCIIO_BENCH_SQL_ROWS-row
(default 10_000_000) data in four formats: a PyTables table (`run.h5:/t`), a structured `.npy`,
a pandas HDFStore `table` key (`store.h5:/df`) and a Parquet file. Columns: id int64, grp int32
(id % 16), x float64, name S8.

Queries (each over each source):
  filter     SELECT id, x FROM SRC WHERE grp = 3 AND x > 0.5, written with `--out f.parquet`;
             pandas reads the three columns it needs, filters and writes the frame to Parquet
  aggregate  SELECT grp, count(*), avg(x), max(id) FROM SRC GROUP BY grp ORDER BY grp,
             printed; pandas reads the columns, groups and prints

pandas reads only the columns a query needs, as a user would: `pq.read_table(columns=)`,
`pd.read_hdf(columns=)`, PyTables' `Table.col`, numpy's memory map. Each case runs
$SCIIO_BENCH_REPEAT times (default 3), pandas and sciio alternately; `ratio` is best sciio time /
best pandas time. No issue names a target for SQL yet: 1.0 (no slower than pandas) is shown.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import tables

from benchkit import timed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DTYPE = np.dtype([("id", "<i8"), ("grp", "<i4"), ("x", "<f8"), ("name", "S8")])

# How pandas reads COLUMNS (a list literal) of each source into a frame `df`.
READ = {
    "h5": "import tables; f = tables.open_file(SRC); t = f.root.t; "
          "df = pd.DataFrame({c: t.col(c) for c in COLUMNS}); f.close()",
    "npy": "a = np.load(SRC, mmap_mode='r'); df = pd.DataFrame({c: a[c] for c in COLUMNS})",
    "store": "df = pd.read_hdf(SRC, 'df', columns=[c for c in COLUMNS])",
    "parquet": "import pyarrow.parquet as pq; "
               "df = pq.read_table(SRC, columns=COLUMNS).to_pandas()",
}

QUERIES = {
    "filter": (
        "SELECT id, x FROM '{src}' WHERE grp = 3 AND x > 0.5",
        ["id", "grp", "x"],
        "df[(df.grp == 3) & (df.x > 0.5)][['id', 'x']].reset_index(drop=True)"
        ".to_parquet(OUT)",
    ),
    "aggregate": (
        "SELECT grp, count(*) AS n, avg(x) AS mx, max(id) AS hi FROM '{src}' "
        "GROUP BY grp ORDER BY grp",
        ["grp", "x", "id"],
        "print(df.groupby('grp').agg(n=('x', 'size'), mx=('x', 'mean'), hi=('id', 'max')))",
    ),
}


def sources(out, rows):
    """The four sources of the same rows (made once; reused while the row count holds)."""
    paths = {"h5": os.path.join(out, "run.h5"), "npy": os.path.join(out, "run.npy"),
             "store": os.path.join(out, "store.h5"), "parquet": os.path.join(out, "run.parquet")}
    stamp = os.path.join(out, "rows")
    if os.path.exists(stamp) and open(stamp).read() == str(rows) and all(
            os.path.exists(p) for p in paths.values()):
        return paths
    rng = np.random.default_rng(5)
    a = np.zeros(rows, dtype=DTYPE)
    a["id"] = np.arange(rows)
    a["grp"] = a["id"] % 16
    a["x"] = rng.random(rows)
    a["name"] = np.char.add(b"n", (a["id"] % 100000).astype("S7"))
    np.save(paths["npy"], a)
    with tables.open_file(paths["h5"], "w") as f:
        f.create_table("/", "t", obj=a, expectedrows=rows)
    df = pd.DataFrame({c: a[c] for c in ("id", "grp", "x")})
    df["name"] = a["name"].astype(str)
    df.to_hdf(paths["store"], key="df", format="table", mode="w")
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), paths["parquet"])
    with open(stamp, "w") as f:
        f.write(str(rows))
    return paths


def target_of(src, node):
    return f"{src}:/{node}" if node else src


def main():
    rows = int(os.environ.get("SCIIO_BENCH_SQL_ROWS", "10000000"))
    repeat = int(os.environ.get("SCIIO_BENCH_REPEAT", "3"))
    out = os.path.join(os.environ.get("SCIIO_BENCH_DIR", os.path.join(ROOT, "bench-out")), "sql")
    os.makedirs(out, exist_ok=True)
    paths = sources(out, rows)
    nodes = {"h5": "t", "npy": "", "store": "df", "parquet": ""}
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "sciio-cli"], cwd=ROOT, check=True)
    sciio = os.path.join(target, "release", "sciio")
    result = os.path.join(out, "result.parquet")
    record = {"rows": rows, "cpus": os.cpu_count(), "load_before": os.getloadavg(), "cases": []}
    for query, (sql, columns, pandas_step) in QUERIES.items():
        for kind, path in paths.items():
            src = target_of(path, nodes[kind])
            ours = [sciio, "sql", sql.format(src=src)]
            if query == "filter":
                ours += ["--out", result]
            read = READ[kind].replace("SRC", repr(path)).replace("COLUMNS", repr(columns))
            code = (f"import numpy as np, pandas as pd; {read}; "
                    f"{pandas_step.replace('OUT', repr(result))}")
            peer = [sys.executable, "-c", code]
            peer_runs, ours_runs = [], []
            for _ in range(repeat):
                peer_runs.append(timed(peer))
                want = pd.read_parquet(result) if query == "filter" else None
                ours_runs.append(timed(ours))
                if want is not None:
                    got = pd.read_parquet(result)
                    assert got.equals(want), f"{query} over {kind}: not pandas' rows"
            t_peer, t_ours = min(r[0] for r in peer_runs), min(r[0] for r in ours_runs)
            record["cases"].append({
                "case": f"{query} over {kind}",
                "ratio": t_ours / t_peer,
                "target": 1.0,
                "sciio_s": round(t_ours, 3),
                "pandas_s": round(t_peer, 3),
                "sciio_peak_rss_mib": round(max(r[1] for r in ours_runs)),
                "pandas_peak_rss_mib": round(max(r[1] for r in peer_runs)),
            })
    record["load_after"] = os.getloadavg()
    print(json.dumps(record, indent=1))
    for c in record["cases"]:
        print(f"{c['case']}: sciio/pandas = {c['ratio']:.3f} ({c['sciio_s']} s / "
              f"{c['pandas_s']} s); peak RSS {c['sciio_peak_rss_mib']} / "
              f"{c['pandas_peak_rss_mib']} MiB")


if __name__ == "__main__":
    main()
