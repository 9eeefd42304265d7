"""Deletes that find their rows through scalar indices.

pylance's delete plans its scan as any filtered scan: fragments an index
covers are answered by the index (and rechecked where part of the predicate
is unindexed), the others scanned. lance-cpp's delete does the same. For
each predicate, on copies of one dataset (pylance's BTREE and BITMAP
indices, an unindexed appended fragment, rows already deleted), lance-cpp's
delete and pylance's must leave exactly the same rows, and each side must
read the other's result the same way."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lance
from conftest import lance_cpp_binary

ROWS = 1200

PREDICATES = [
    "i = 5",
    "i IN (1, 5, 7, 400)",
    "i < 40",
    "i BETWEEN 100 AND 160",
    "i IS NULL",
    "s = 'b'",
    "s IN ('a', 'c') AND i > 500",
    "i > 300 AND x < 20",       # indexed part plus a recheck
    "i > 900 OR x = 3",         # not answerable by the index: scanned
    "NOT (i > 30)",
    "i = -1",                   # matches nothing: no new version
]


def _table(seed: int, start: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(start, start + n), pa.int64()),
        "i": pa.array(rng.integers(0, 1000, n), pa.int64(), mask=rng.random(n) < 0.1),
        "s": pa.array(rng.choice(["a", "b", "c", "d"], n), pa.string(), mask=rng.random(n) < 0.1),
        "x": pa.array(np.arange(start, start + n) % 50, pa.int64()),
    })


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(lance_cpp_binary())] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module", params=[("2.0", False), ("2.1", True)], ids=["v2.0", "v2.1-stable"])
def base(request, tmp_path_factory):
    version, stable = request.param
    uri = tmp_path_factory.mktemp("delete_index") / "base"
    lance.write_dataset(_table(1, 0, ROWS), uri, data_storage_version=version, max_rows_per_file=400,
                        enable_stable_row_ids=stable)
    ds = lance.dataset(uri)
    ds.create_scalar_index("i", "BTREE")
    ds.create_scalar_index("s", "BITMAP")
    lance.write_dataset(_table(2, ROWS, 300), uri, mode="append")  # unindexed
    lance.dataset(uri).delete("id % 9 = 0")
    return uri


def _ids(uri: Path) -> list[int]:
    return sorted(lance.dataset(uri).to_table(columns=["id"])["id"].to_pylist())


@pytest.mark.parametrize("pred", PREDICATES)
def test_delete_through_indices_matches_pylance(tmp_path, base, pred):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    before = lance.dataset(base)
    expected = sorted(set(_ids(base)) - set(before.to_table(columns=["id"], filter=pred,
                                                               use_scalar_index=False)["id"].to_pylist()))
    proc = _run("delete", ours, pred, "--quiet")
    assert proc.returncode == 0, proc.stderr
    lance.dataset(theirs).delete(pred)
    assert _ids(ours) == _ids(theirs) == expected, pred
    assert lance.dataset(ours).version == lance.dataset(theirs).version, pred
    # Each side reads the other's deletion files the same, indexed or not.
    for filt in ["i < 100", "s = 'c'"]:
        want = sorted(lance.dataset(ours).to_table(columns=["id"], filter=filt,
                                                   use_scalar_index=False)["id"].to_pylist())
        assert sorted(lance.dataset(ours).to_table(columns=["id"], filter=filt)["id"].to_pylist()) == want
        proc = _run("count", theirs, "--filter", filt)
        assert proc.returncode == 0 and int(proc.stdout) == len(want), (filt, proc.stderr)


def test_delete_reads_the_index(tmp_path, base):
    """The index, not a scan, answers an indexed predicate: with its files
    gone the delete fails naming them, and commits nothing, while an
    unindexed predicate still deletes."""
    uri = tmp_path / "ds"
    shutil.copytree(base, uri)
    ds = lance.dataset(uri)
    index = next(i for i in ds.describe_indices() if i.name == "i_idx")
    for seg in index.segments:
        shutil.rmtree(uri / "_indices" / str(seg.uuid))
    version = ds.version
    proc = _run("delete", uri, "i = 5", "--quiet")
    assert proc.returncode != 0
    assert "_indices" in proc.stderr, proc.stderr
    assert lance.dataset(uri).version == version
    proc = _run("delete", uri, "x = 7", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert lance.dataset(uri).version == version + 1
