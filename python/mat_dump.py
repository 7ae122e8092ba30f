"""Prints {variable: canonical value} (mat_canon.py) of a MAT file as hdf5storage.loadmat reads
it, for sciio-mat's tests of MATLAB-written files.

usage: mat_dump.py FILE.mat
"""

import json
import os
import sys

import hdf5storage

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mat_canon import canon  # noqa: E402

data = hdf5storage.loadmat(sys.argv[1])
print(json.dumps({k: canon(v) for k, v in data.items() if not k.startswith("#")}))
