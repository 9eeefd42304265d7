"""BLOOMFILTER indices: pylance's used by lance-cpp, lance-cpp's built as
pylance builds them (`create-index --type BLOOMFILTER`, manifest entries,
transactions and decoded files equal) and used by pylance, optimized by
either side, and pylance's refusals."""
from __future__ import annotations

import datetime
import decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lance
from lance.indices import IndexConfig
# The manifest entries, transactions, inspect views and decoded files (the
# filters' bytes too) equal: the same sizes, hashes and bits as pylance's.
from test_list_zone_index_build import _assert_same_commits
from test_scalar_index_build import _ok, _run

pytestmark = pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")

ROWS = 700
ROWS_PER_FILE = 300
# column -> (lance-cpp flags, pylance's index type)
BUILDS = {
    "i": ([], "BLOOMFILTER"),
    "s": (["--number-of-items", "64"], IndexConfig("bloomfilter", {"number_of_items": 64})),
    "f": (["--number-of-items", "100", "--probability", "0.01"],
          IndexConfig("bloomfilter", {"number_of_items": 100, "probability": 0.01})),
    "d": (["--probability", "0.2"], IndexConfig("bloomfilter", {"probability": 0.2})),
    "ts": ([], "BLOOMFILTER"),
    "u8": (["--number-of-items", "50"], IndexConfig("bloomfilter", {"number_of_items": 50})),
    "ls": ([], "BLOOMFILTER"),
    "bin": ([], "BLOOMFILTER"),
}
FILTERS = ["i = 17", "i = 123456", "i IN (3, 5, 640)", "i IS NULL", "s = 'k7'", "s = 'nope'",
           "s = 'k3' OR i = 4", "s = 'k3' AND i = 4", "bin = X'02'", "bin IN (X'01', X'05')", "f = 0.0", "f = 0.5", "d = DATE '2020-01-05'",
           "ts = TIMESTAMP '2021-01-01 00:00:07'", "u8 = 3", "u8 IN (1, 2)", "ls = 'v1'",
           "bin IS NULL", "i = 17 AND s IS NULL"]


def _table(seed: int, start: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    null = lambda p: rng.random(n) < p  # noqa: E731
    f = rng.integers(0, 20, n) / 2
    f[rng.random(n) < 0.1] = -0.0  # equal to 0.0, hashed differently
    return pa.table({
        "id": pa.array(np.arange(start, start + n), pa.int64()),
        "i": pa.array(np.arange(start, start + n) % 650, pa.int64(), mask=null(0.1)),
        "s": pa.array([f"k{k}" for k in rng.integers(0, 40, n)], pa.string(), mask=null(0.1)),
        "f": pa.array(f, pa.float64(), mask=null(0.05)),
        "d": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=int(k)) for k in (np.arange(n) // 30)],
                      pa.date32(), mask=null(0.05)),
        "ts": pa.array([datetime.datetime(2021, 1, 1) + datetime.timedelta(seconds=int(k))
                        for k in rng.integers(0, 100, n)], pa.timestamp("us")),
        "u8": pa.array(rng.integers(0, 9, n), pa.uint8(), mask=null(0.2)),
        "ls": pa.array([f"v{k}" for k in rng.integers(0, 5, n)], pa.large_string()),
        "bin": pa.array([bytes([k]) for k in rng.integers(0, 7, n)], pa.binary(), mask=null(0.3)),
        "b": pa.array(rng.random(n) < 0.5),
        "fsb": pa.array([bytes([k, 1]) for k in rng.integers(0, 3, n)], pa.binary(2)),
        "dec": pa.array([decimal.Decimal(int(k)) for k in rng.integers(0, 9, n)], pa.decimal128(10, 2)),
        "l": pa.array([[int(k)] for k in rng.integers(0, 9, n)], pa.list_(pa.int64())),
    })


def _write(uri: Path, version: str, stable: bool) -> Path:
    lance.write_dataset(_table(1, 0, ROWS), uri, data_storage_version=version, max_rows_per_file=ROWS_PER_FILE,
                        enable_stable_row_ids=stable)
    return uri


def _build_ours(uri: Path):
    for col, (flags, _) in BUILDS.items():
        _ok("create-index", uri, col, "--type", "BLOOMFILTER", *flags)


def _build_theirs(uri: Path):
    for col, (_, kind) in BUILDS.items():
        lance.dataset(uri).create_scalar_index(col, kind)


def _assert_answers(uri: Path, filters=FILTERS):
    """Both sides use the indices where pylance does and answer as the full
    scan."""
    ds = lance.dataset(uri)
    for filt in filters:
        full = sorted(ds.to_table(columns=["id"], filter=filt, use_scalar_index=False)["id"].to_pylist())
        assert "ScalarIndexQuery" in ds.scanner(filter=filt).explain_plan(), filt
        assert sorted(ds.to_table(columns=["id"], filter=filt)["id"].to_pylist()) == full, filt
        explain = _ok("scan", uri, "--filter", filt, "--explain").stdout
        assert "(BloomFilter)" in explain, (filt, explain)
        assert int(_ok("count", uri, "--filter", filt).stdout) == len(full), filt


@pytest.mark.parametrize("version,stable", [("2.0", False), ("2.1", True), ("2.2", False)])
def test_built_as_pylance_builds_and_used_both_ways(tmp_path, version, stable):
    ours, theirs = _write(tmp_path / "ours", version, stable), _write(tmp_path / "theirs", version, stable)
    for uri in (ours, theirs):
        lance.dataset(uri).delete("id % 9 = 4 OR (id >= 300 AND id < 340)")
    _build_ours(ours)
    _build_theirs(theirs)
    _assert_same_commits(ours, theirs, len(BUILDS))
    types = {i["name"]: i["type"] for i in lance.dataset(ours).list_indices()}
    assert types == {f"{c}_idx": "BloomFilter" for c in BUILDS}
    _assert_answers(ours)
    _assert_answers(theirs)


def test_filters_pylance_does_not_ask_of_it(tmp_path):
    uri = _write(tmp_path / "ds", "2.1", False)
    _build_ours(uri)
    ds = lance.dataset(uri)
    for filt in ["i != 17", "NOT (i = 17)", "i > 600", "i IS NOT NULL", "s LIKE 'k1%'", "i = 3 OR u8 > 4"]:
        full = sorted(ds.to_table(columns=["id"], filter=filt, use_scalar_index=False)["id"].to_pylist())
        assert "ScalarIndexQuery" not in ds.scanner(filter=filt).explain_plan(), filt
        assert "ScalarIndexQuery" not in _ok("scan", uri, "--filter", filt, "--explain").stdout, filt
        assert int(_ok("count", uri, "--filter", filt).stdout) == len(full), filt


def _changes(uri: Path, seed: int):
    """Appends two fragments, deletes rows of old and new fragments and one
    old fragment whole."""
    lance.write_dataset(_table(seed, ROWS, 300), uri, mode="append", max_rows_per_file=200)
    lance.dataset(uri).delete("id % 11 = 3 OR (id >= 300 AND id < 600)")


@pytest.mark.parametrize("stable", [False, True])
def test_optimize_commits_as_pylance(tmp_path, stable):
    ours, theirs = _write(tmp_path / "ours", "2.2", stable), _write(tmp_path / "theirs", "2.2", stable)
    for uri in (ours, theirs):
        _build_theirs(uri)
        _changes(uri, 2)
    before = lance.dataset(ours).version
    _ok("optimize-indices", ours)
    lance.dataset(theirs).optimize.optimize_indices()
    assert lance.dataset(ours).version == before + 1
    _assert_same_commits(ours, theirs, 1)
    ds = lance.dataset(ours)
    for i in ds.list_indices():
        assert ds.stats.index_stats(i["name"])["num_unindexed_rows"] == 0, i["name"]
    _assert_answers(ours)


def test_pylance_optimizes_lance_cpp_indices_and_back(tmp_path):
    uri = _write(tmp_path / "ds", "2.1", False)
    _build_ours(uri)
    _changes(uri, 5)
    lance.dataset(uri).optimize.optimize_indices()
    _assert_answers(uri)
    extra = tmp_path / "extra.arrow"
    with pa.ipc.new_file(extra, _table(6, 2000, 120).schema) as w:
        w.write_table(_table(6, 2000, 120))
    _ok("write", uri, "--input", extra, "--mode", "append")
    _ok("optimize-indices", uri, "--index", "i_idx,s_idx")
    ds = lance.dataset(uri)
    stats = {i["name"]: ds.stats.index_stats(i["name"])["num_unindexed_rows"] for i in ds.list_indices()}
    assert stats == {f"{c}_idx": 0 if c in ("i", "s") else 120 for c in BUILDS}
    _assert_answers(uri)


def test_refusals(tmp_path):
    uri = _write(tmp_path / "ds", "2.1", False)
    ds = lance.dataset(uri)
    for col, what in [("b", "Boolean"), ("fsb", "FixedSizeBinary"), ("dec", "Decimal128")]:
        with pytest.raises(ValueError, match="Bloom filter index does not support data type: " + what):
            ds.create_scalar_index(col, "BLOOMFILTER")
        proc = _run("create-index", uri, col, "--type", "BLOOMFILTER")
        assert proc.returncode == 1 and "Bloom filter index does not support data type" in proc.stderr, proc.stderr
    with pytest.raises(ValueError, match="non-nested field"):
        ds.create_scalar_index("l", "BLOOMFILTER")
    proc = _run("create-index", uri, "l", "--type", "BLOOMFILTER")
    assert proc.returncode == 1 and "can only be created on a non-nested field" in proc.stderr, proc.stderr
    for flags in (["--number-of-items", "0"], ["--number-of-items", "x"], ["--probability", "1"],
                  ["--probability", "-0.5"], ["--probability", "abc"]):
        proc = _run("create-index", uri, "i", "--type", "BLOOMFILTER", *flags)
        assert proc.returncode == 2, (flags, proc.stderr)
    for flag in (["--number-of-items", "10"], ["--probability", "0.1"]):
        proc = _run("create-index", uri, "i", "--type", "BTREE", *flag)
        assert proc.returncode == 2 and f"{flag[0]} does not apply to a BTREE index" in proc.stderr
    proc = _run("create-index", uri, "i", "--type", "BLOOMFILTER", "--rows-per-zone", "10")
    assert proc.returncode == 2 and "--rows-per-zone does not apply to a BLOOMFILTER index" in proc.stderr
    assert lance.dataset(uri).version == 1
    assert not (uri / "_indices").exists()
