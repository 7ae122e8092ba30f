"""`sciio sql` against pandas: the same queries over the same files, pandas doing each by hand.

    sql_cases.py make DIR     writes the sources into DIR (PyTables table and array, a pandas
                              HDFStore with a table and a fixed key, .npy, .npz, .parquet)
    sql_cases.py list         prints the cases as JSON: [[name, sql], ...]
    sql_cases.py check DIR    compares DIR/NAME.parquet (what `sciio sql SQL --out` wrote, run
                              in DIR) with pandas' result for every case; prints
                              'N passed, N failed' and exits 1 on any difference

Tables are named as `sciio sql` takes them, relative to DIR. A store key is the frame
`pd.read_hdf(f, key).reset_index()`; a plain array is one column named after its node.
"""
import json
import os
import sys

import numpy as np
import pandas as pd
import tables

ROWS = 3000


def make(d):
    rng = np.random.default_rng(17)
    ids = np.arange(ROWS, dtype=np.int64)
    t = np.empty(ROWS, dtype=[("id", "<i8"), ("grp", "<i4"), ("x", "<f8"), ("name", "S6"),
                              ("pos", "<f4", (3,))])
    t["id"] = ids
    t["grp"] = ids % 5
    t["x"] = rng.random(ROWS)
    t["name"] = [b"n%d" % (i % 7) for i in range(ROWS)]
    t["pos"] = rng.random((ROWS, 3))
    with tables.open_file(os.path.join(d, "run.h5"), "w") as f:
        f.create_table("/", "t", obj=t, filters=tables.Filters(5, "zlib"), chunkshape=(256,))
        f.create_array("/", "readings", obj=rng.normal(size=ROWS))
    df = pd.DataFrame({
        "id": ids[::2],
        "y": rng.normal(size=ROWS // 2),
        "label": [["alpha", "beta", "gamma"][i % 3] for i in range(ROWS // 2)],
    })
    df.to_hdf(os.path.join(d, "store.h5"), key="df", format="table")
    fx = pd.DataFrame({"k": np.arange(10, dtype=np.int64) * 7, "v": np.linspace(0, 1, 10),
                       "name": [f"n{i}" for i in range(10)]},
                      index=pd.Index(np.arange(10, 20), name="idx"))
    fx.to_hdf(os.path.join(d, "store.h5"), key="fx", format="fixed")
    s = np.empty(ROWS, dtype=[("id", "<i8"), ("z", "<f4"), ("ok", "?")])
    s["id"] = ids[::-1]
    s["z"] = rng.random(ROWS).astype(np.float32)
    s["ok"] = ids % 2 == 0
    np.save(os.path.join(d, "s.npy"), s)
    np.savez_compressed(os.path.join(d, "m.npz"), rec=s[:500], v=np.arange(100, dtype=np.int32))
    p = pd.DataFrame({
        "id": ids[::3],
        "w": rng.random(ROWS // 3) * 100,
        "tag": [["red", "green"][i % 2] for i in range(ROWS // 3)],
    })
    p.to_parquet(os.path.join(d, "p.parquet"), index=False)


def load(d):
    with tables.open_file(os.path.join(d, "run.h5")) as f:
        t = f.root.t.read()
        readings = f.root.readings.read()
    run = pd.DataFrame({n: t[n] for n in ("id", "grp", "x")})
    run["name"] = t["name"]
    return {
        "t": run,
        "readings": pd.DataFrame({"readings": readings}),
        "df": pd.read_hdf(os.path.join(d, "store.h5"), "df").reset_index(),
        "fx": pd.read_hdf(os.path.join(d, "store.h5"), "fx").reset_index(),
        "s": pd.DataFrame(np.load(os.path.join(d, "s.npy"))),
        "rec": pd.DataFrame(np.load(os.path.join(d, "m.npz"))["rec"]),
        "v": pd.DataFrame({"v": np.load(os.path.join(d, "m.npz"))["v"]}),
        "p": pd.read_parquet(os.path.join(d, "p.parquet")),
    }


def flat(df):
    return df.reset_index(drop=True)


# name, SQL, pandas doing the same on the frames of load()
CASES = [
    ("projection", "SELECT id, x FROM 'run.h5:/t' ORDER BY id",
     lambda f: flat(f["t"][["id", "x"]].sort_values("id"))),
    ("filter", "SELECT id, name FROM 'run.h5:/t' WHERE x > 0.5 AND grp = 2 ORDER BY id",
     lambda f: flat(f["t"][(f["t"].x > 0.5) & (f["t"].grp == 2)][["id", "name"]])),
    ("aggregate", "SELECT count(*) AS n, sum(z) AS s, min(id) AS lo, max(id) AS hi, "
                  "avg(z) AS m FROM 's.npy'",
     lambda f: pd.DataFrame({"n": [len(f["s"])], "s": [f["s"].z.astype("f8").sum()],
                             "lo": [f["s"].id.min()], "hi": [f["s"].id.max()],
                             "m": [f["s"].z.astype("f8").mean()]})),
    ("group_by", "SELECT grp, count(*) AS n, avg(x) AS mx FROM 'run.h5:/t' "
                 "GROUP BY grp ORDER BY grp",
     lambda f: flat(f["t"].groupby("grp").agg(n=("x", "size"), mx=("x", "mean")).reset_index())),
    ("join_h5_parquet", "SELECT t.id, t.x, p.w FROM 'run.h5:/t' t JOIN 'p.parquet' p "
                        "ON t.id = p.id WHERE p.tag = 'red' ORDER BY t.id",
     lambda f: flat(f["t"][["id", "x"]].merge(f["p"][f["p"].tag == "red"][["id", "w"]], on="id")
                    .sort_values("id"))),
    ("join_store_npy", "SELECT d.label, sum(s.z) AS total, count(*) AS n FROM 'store.h5:/df' d "
                       "JOIN 's.npy' s ON d.id = s.id GROUP BY d.label ORDER BY d.label",
     lambda f: flat(f["df"].merge(f["s"], on="id").assign(z=lambda m: m.z.astype("f8"))
                    .groupby("label").agg(total=("z", "sum"), n=("z", "size")).reset_index())),
    ("limit", "SELECT id, z, ok FROM 's.npy' LIMIT 7",
     lambda f: flat(f["s"][["id", "z", "ok"]].head(7))),
    ("order_by", "SELECT id, label, y FROM 'store.h5:/df' ORDER BY y DESC, id LIMIT 12",
     lambda f: flat(f["df"].sort_values(["y", "id"], ascending=[False, True])
                    [["id", "label", "y"]].head(12))),
    ("store_group", "SELECT label, count(*) AS n, sum(y) AS total FROM 'store.h5:/df' "
                    "WHERE y > -1 GROUP BY label ORDER BY label",
     lambda f: flat(f["df"][f["df"].y > -1].groupby("label")
                    .agg(n=("y", "size"), total=("y", "sum")).reset_index())),
    ("npz_member", "SELECT id, z * 2 AS z2 FROM 'm.npz:rec' WHERE id % 3 = 0 ORDER BY id",
     lambda f: flat(f["rec"][f["rec"].id % 3 == 0].sort_values("id")
                    .assign(z2=lambda r: r.z * np.float32(2))[["id", "z2"]])),
    ("plain_array", "SELECT count(*) AS n, max(readings) AS hi FROM 'run.h5:/readings' "
                    "WHERE readings > 0",
     lambda f: pd.DataFrame({"n": [int((f["readings"].readings > 0).sum())],
                             "hi": [f["readings"].readings.max()]})),
    ("npz_plain_limit", "SELECT v FROM 'm.npz:v' ORDER BY v DESC LIMIT 3",
     lambda f: flat(f["v"].sort_values("v", ascending=False).head(3))),
    ("parquet_group", "SELECT tag, max(w) AS hi, count(*) AS n FROM 'p.parquet' WHERE w < 50 "
                      "GROUP BY tag ORDER BY tag",
     lambda f: flat(f["p"][f["p"].w < 50].groupby("tag").agg(hi=("w", "max"), n=("w", "size"))
                    .reset_index())),
    ("fixed_key", "SELECT idx, k, v, name FROM 'store.h5:/fx' WHERE k > 20 ORDER BY idx",
     lambda f: flat(f["fx"][f["fx"].k > 20][["idx", "k", "v", "name"]])),
]


def same(name, got, want):
    """Column names, row count and values equal; integer widths and bytes vs str may differ
    (SQL counts are int64, `S` fields are binary in Arrow)."""
    if list(got.columns) != list(want.columns):
        return f"{name}: columns {list(got.columns)} != {list(want.columns)}"
    if len(got) != len(want):
        return f"{name}: {len(got)} rows != {len(want)}"
    for c in want.columns:
        g, w = got[c].to_numpy(), want[c].to_numpy()
        if w.dtype.kind in "fc" or g.dtype.kind in "fc":
            if not np.allclose(g.astype("f8"), w.astype("f8"), rtol=1e-6, equal_nan=True):
                return f"{name}: column {c}: {g[:5]} != {w[:5]}"
        else:
            g = [x.decode() if isinstance(x, bytes) else x for x in g]
            w = [x.decode() if isinstance(x, bytes) else x for x in w]
            if [str(x) for x in g] != [str(x) for x in w]:
                return f"{name}: column {c}: {g[:5]} != {w[:5]}"
    return None


def check(d):
    frames = load(d)
    failed = []
    for name, _, pandas in CASES:
        got = pd.read_parquet(os.path.join(d, name + ".parquet"))
        problem = same(name, got, pandas(frames))
        if problem:
            failed.append(problem)
    for p in failed:
        print(p)
    print(f"{len(CASES) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "list":
        print(json.dumps([[n, q] for n, q, _ in CASES]))
    elif sys.argv[1] == "check":
        check(sys.argv[2])
