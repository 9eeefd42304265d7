"""The Python binding lance_cpp beside pylance (the oracle), DuckDB and Polars.

lance_cpp comes from the build tree (`make` puts build/python on the .venv's
path); LANCE_CPP_PYTHON_DIR names another directory holding the package.
"""
import os
import sys

import pyarrow as pa
import pytest

_dir = os.environ.get("LANCE_CPP_PYTHON_DIR")
if _dir:
    sys.path.insert(0, _dir)


@pytest.fixture
def table():
    n = 1000
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "name": pa.array([f"name-{i}" for i in range(n)]),
            "score": pa.array([i * 0.5 for i in range(n)], pa.float64()),
            "tags": pa.array([[f"t{i % 3}", f"u{i % 5}"] for i in range(n)], pa.list_(pa.string())),
            "point": pa.array([{"x": i, "y": -i} for i in range(n)],
                              pa.struct([("x", pa.int32()), ("y", pa.int32())])),
        }
    )
