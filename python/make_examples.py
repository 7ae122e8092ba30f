"""Writes example .npy files of different dtypes with numpy, for ./dev demo.

Usage: python make_examples.py OUT_DIR
"""
import os
import sys

import numpy as np


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(42)
    examples = {
        "temperatures": rng.normal(15.0, 8.0, size=(24, 7)).round(2),          # <f8, 2-d
        "counts": np.arange(2000, dtype="<i4").reshape(40, 50) * 3,           # <i4, > 1000 items
        "weights_f32": rng.random(10).astype("<f4"),                          # <f4
        "flags": rng.random(12) > 0.5,                                        # |b1
        "labels": np.array(["alpha", "beta", "gamma", "delta"]),              # <U5
        "big_endian": np.arange(6, dtype=">u2").reshape(2, 3),                # >u2
        "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),          # F order
        "records": np.array([(1, 2.5, b"x"), (2, -1.0, b"yz")],
                            dtype=[("id", "<i8"), ("value", "<f8"), ("tag", "S2")]),
        "complex": np.array([1 + 2j, -0.5j, 3.0], dtype="<c16"),
        "specials": np.array([0.0, np.nan, np.inf, -np.inf, 1e-7, 1e10]),
    }
    for name, array in examples.items():
        np.save(os.path.join(out, name + ".npy"), array)
    write_pytables(os.path.join(out, "station.h5"), rng)
    print(" ".join(sorted(examples)))


def write_pytables(path, rng):
    """A PyTables file: a group with a compressed table of readings and a calibration array."""
    import tables

    with tables.open_file(path, "w", title="weather station") as f:
        g = f.create_group("/", "readings", "hourly readings")
        desc = {"hour": tables.Int32Col(pos=0), "temp": tables.Float64Col(pos=1),
                "wind": tables.Float32Col(pos=2), "sky": tables.StringCol(6, pos=3)}
        t = f.create_table(g, "hourly", desc, filters=tables.Filters(5, "zlib", shuffle=True))
        skies = [b"clear", b"cloudy", b"rain"]
        t.append([(h, 10 + 5 * np.sin(h / 4), rng.random() * 20, skies[h % 3]) for h in range(48)])
        f.create_array("/", "calibration", np.linspace(0.9, 1.1, 12).reshape(3, 4))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples-out")
