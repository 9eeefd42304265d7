"""`lance-cpp file inspect --json` against pylance's LanceFileReader.metadata()
for files written by pylance's LanceFileWriter in every stable version."""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader, LanceFileWriter

from conftest import lance_cpp_binary

VERSIONS = ["2.0", "2.1", "2.2"]


def _table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ints = pa.array(rng.integers(-1000, 1000, n), pa.int64(), mask=rng.random(n) < 0.2)
    strs = pa.array([f"s{i}" * (i % 5) for i in range(n)], pa.string())
    vecs = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 8), pa.float32()), 8)
    lists = pa.array([[i, i + 1] if i % 3 else None for i in range(n)], pa.list_(pa.int32()))
    struct = pa.StructArray.from_arrays([pa.array(range(n), pa.int32()), strs], ["x", "y"])
    return pa.table({"i": ints, "s": strs, "v": vecs, "l": lists, "st": struct})


def _write(path, version: str, n: int, batches: int = 1, **kw):
    t = _table(n, 42)
    with LanceFileWriter(str(path), t.schema, version=version, **kw) as w:
        for b in t.to_batches(max_chunksize=max(1, n // batches)):
            w.write_batch(b)


def _inspect(path) -> dict:
    proc = subprocess.run([str(lance_cpp_binary()), "file", "inspect", str(path), "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _ranges(bufs) -> list[tuple[int, int]]:
    return [(b.position, b.size) for b in bufs]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("n,batches,kw", [(0, 1, {}), (1, 1, {}), (1000, 1, {}),
                                          (5000, 7, {"max_page_bytes": 4096})],
                         ids=["empty", "one-row", "1000-rows", "many-pages"])
def test_file_inspect_matches_pylance(tmp_path, version, n, batches, kw):
    path = tmp_path / "f.lance"
    _write(path, version, n, batches, **kw)
    ours = _inspect(path)
    meta = LanceFileReader(str(path)).metadata()
    assert ours["num_rows"] == meta.num_rows
    assert (ours["major_version"], ours["minor_version"]) == (meta.major_version, meta.minor_version)
    assert ours["version"] == version
    assert [(g["position"], g["size"]) for g in ours["global_buffers"]] == _ranges(meta.global_buffers)
    assert len(ours["columns"]) == len(meta.columns)
    for i, (oc, pc) in enumerate(zip(ours["columns"], meta.columns)):
        assert [(b["position"], b["size"]) for b in oc["buffers"]] == _ranges(pc.column_buffers), i
        assert len(oc["pages"]) == len(pc.pages), f"column {i}"
        for j, (op, pp) in enumerate(zip(oc["pages"], pc.pages)):
            assert [(b["position"], b["size"]) for b in op["buffers"]] == _ranges(pp.buffers), (i, j)
            kind = "PageLayout" if str(pp.encoding).startswith("PageLayout") else "ArrayEncoding"
            assert op["encoding"].endswith(kind), (i, j, op["encoding"])
    names = [f["name"] for f in ours["schema"] if f["parent_id"] == -1]
    assert names == meta.schema.names


def test_file_inspect_errors(tmp_path):
    path = tmp_path / "f.lance"
    _write(path, "2.1", 10)
    data = path.read_bytes()
    bad = tmp_path / "bad.lance"
    bad.write_bytes(data[:-1] + b"X")
    proc = subprocess.run([str(lance_cpp_binary()), "file", "inspect", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and str(bad) in proc.stderr and "magic" in proc.stderr
    proc = subprocess.run([str(lance_cpp_binary()), "file", "inspect", str(tmp_path / "missing.lance")],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.startswith("error: ")
    proc = subprocess.run([str(lance_cpp_binary()), "file", "frobnicate"], capture_output=True, text=True)
    assert proc.returncode == 2
