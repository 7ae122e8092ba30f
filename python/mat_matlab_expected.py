"""What the reference reader mat-io (PyPI `mat-io`, module `matio`) reads from MATLAB-written
v7.3 files, in the canonical JSON form of python/mat_mcos_fixtures.py's `canon`.

usage: mat_matlab_expected.py OUT.json FILE.mat...
writes {file name: {variable: canonical value}} to OUT.json.
"""

import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mat_mcos_fixtures import canon  # noqa: E402


def canon_or_error(v):
    """canon(v), or a marker for what canon cannot express (handle objects that contain
    themselves recurse forever; object arrays whose properties are arrays)."""
    try:
        return canon(v)
    except RecursionError:
        return {"class": "other", "repr": "self-referencing object"}
    except ValueError as e:  # e.g. properties held as an array of per-element dicts
        return {"class": "other", "repr": f"no canonical form: {e}"[:80]}


def expected(path):
    import warnings
    import matio
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = matio.load_from_mat(path)
    return {k: canon_or_error(v) for k, v in data.items() if not k.startswith("__")}


def finite(v):
    """`v` with NaN and infinities as null, as serde_json writes them."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [finite(x) for x in v]
    return v


def main():
    out, files = sys.argv[1], sys.argv[2:]
    result = {os.path.basename(f): finite(expected(f)) for f in files}
    with open(out, "w") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
