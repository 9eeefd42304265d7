"""Filtered scans and counts through pylance's ZONEMAP indices.

pylance builds ZONEMAP indices (zones of 500 rows) on int, string, date and
float columns with nulls, on datasets of file version 2.0 and 2.1, with and
without stable row ids. A zone map only prunes zones: lance-cpp rechecks its
candidates, and its rows must be exactly its own full scan's (`--no-index`)
and pylance's, with an index used where pylance's explain_plan uses one
(float comparisons aside: lance-cpp does not prune by float bounds). Then
both sides append (unindexed fragments), delete and update."""
from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from lance.indices import IndexConfig
from test_scalar_index_read import _check, _ok

pytestmark = pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")

ROWS = 3000
ROWS_PER_FILE = 1300
ZONE = 500
VARIANTS = [("2.0", False), ("2.0", True), ("2.1", False), ("2.1", True)]

# Filters a zone map answers (candidates rechecked, or exact for IS [NOT] NULL).
INDEXED = [
    "i = 500",
    "i < 40",
    "i >= 2900",
    "i BETWEEN 1000 AND 1020",
    "i IN (3, 1500, 2999)",
    "i IS NULL",
    "i IS NOT NULL",
    "i > 100 AND i < 130",
    "i < 10 OR i > 2990",
    "s = 'k01234'",
    "s > 'k02900'",
    "d = DATE '2021-03-01'",
    "d < DATE '2020-01-20'",
    "f IS NULL",
    "i = 500 OR s = 'k00007'",
]
# Filters it answers in part (refine) or not at all.
PARTIAL = [
    "i < 100 AND x < 50",
    "i < 100 OR x < 50",
    "i != 5",
    "NOT (i < 2000)",
    "NOT (i IS NULL)",
    "x = 7",
]
AFTER_CHANGES = ["i < 40", "i >= 2900", "s = 'k01234'", "i IS NULL", "i IS NOT NULL", "i < 100 AND x < 50",
                 "d < DATE '2020-01-20'"]
# pylance uses its zone map there; lance-cpp scans (no float bounds).
FLOAT_COMPARISONS = ["f > 0.5", "f < 0.001"]


def _table(seed: int, start: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(start, start + n)
    f = rng.random(n)
    f[rng.random(n) < 0.02] = np.nan
    null = lambda: rng.random(n) < 0.05  # noqa: E731
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        # Roughly sorted, so zones have narrow bounds.
        "i": pa.array(ids + rng.integers(-20, 20, n), pa.int64(), mask=null()),
        "s": pa.array([f"k{v:05d}" for v in ids], pa.string(), mask=null()),
        "d": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=int(v) // 3) for v in ids], pa.date32(),
                      mask=null()),
        "f": pa.array(f, pa.float64(), mask=null()),
        "x": pa.array(ids % 100, pa.int64()),
    })


def _make(tmp_path, version: str, stable: bool):
    uri = tmp_path / f"zm-{version}-{int(stable)}"
    lance.write_dataset(_table(1, 0, ROWS), uri, data_storage_version=version, max_rows_per_file=ROWS_PER_FILE,
                        enable_stable_row_ids=stable)
    ds = lance.dataset(uri)
    for col in ("i", "s", "d", "f"):
        ds.create_scalar_index(col, IndexConfig(index_type="zonemap", parameters={"rows_per_zone": ZONE}))
    return uri


@pytest.fixture(scope="module", params=VARIANTS, ids=lambda v: f"v{v[0]}-stable{int(v[1])}")
def variant(request, tmp_path_factory):
    return _make(tmp_path_factory.mktemp("zonemap"), *request.param)


@pytest.mark.parametrize("filt", INDEXED)
def test_indexed_filters(tmp_path, variant, filt):
    explain, pylance_plan = _check(tmp_path, variant, filt, expect_index=True)
    for col in ("i", "s", "d", "f"):
        if f"{col}_idx(ZoneMap)" in pylance_plan:
            assert f"{col}_idx (ZoneMap)" in explain, f"{filt}: plan\n{explain}"
    exact = filt in ("i IS NULL", "i IS NOT NULL", "f IS NULL")
    assert ("Refine: --" in explain) == exact, f"{filt}: plan\n{explain}"


@pytest.mark.parametrize("filt", PARTIAL)
def test_partly_indexed_filters(tmp_path, variant, filt):
    explain, _ = _check(tmp_path, variant, filt)
    if filt == "i < 100 AND x < 50":
        assert "ScalarIndexQuery" in explain and "rechecked" in explain, explain


@pytest.mark.parametrize("filt", FLOAT_COMPARISONS)
def test_float_comparisons_are_scanned(tmp_path, variant, filt):
    explain, pylance_plan = _check(tmp_path, variant, filt, same_use=False)
    assert "ScalarIndexQuery" not in explain, explain
    assert "ScalarIndexQuery" in pylance_plan, pylance_plan


@pytest.mark.parametrize("version,stable", VARIANTS, ids=lambda v: str(v))
def test_after_appends_deletes_updates(tmp_path, version, stable):
    uri = _make(tmp_path, version, stable)
    lance.write_dataset(_table(2, ROWS, 400), uri, mode="append")
    extra = tmp_path / "extra.arrow"
    more = _table(3, ROWS + 400, 400)
    with ipc.new_file(extra, more.schema) as w:
        w.write_table(more)
    _ok("write", uri, "--input", extra, "--mode", "append")
    lance.dataset(uri).delete("id % 7 = 0")
    _ok("delete", uri, "id % 11 = 0", "--quiet")
    lance.dataset(uri).update({"i": "i + 1"}, where="id < 100")
    # lance-cpp's update finds its rows through the zone map.
    _ok("update", uri, "--set", "x=x+2", "--where", "i BETWEEN 2000 AND 2100", "--quiet")
    for filt in AFTER_CHANGES:
        _check(tmp_path, uri, filt)
    ds = lance.dataset(uri)
    for filt in ["i < 40", "s = 'k01234'"]:
        assert "ScalarIndexQuery" in ds.scanner(filter=filt).explain_plan(), filt
        used = ds.to_table(columns=["id"], filter=filt)["id"].to_pylist()
        scanned = ds.to_table(columns=["id"], filter=filt, use_scalar_index=False)["id"].to_pylist()
        assert sorted(used) == sorted(scanned), filt


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable"])
def test_after_optimize_and_compaction(tmp_path, stable):
    """pylance's optimize_indices (the appended fragments' zones) and
    compaction (a zone map is not remapped)."""
    uri = _make(tmp_path, "2.1", stable)
    lance.write_dataset(_table(4, ROWS, 700), uri, mode="append")
    lance.dataset(uri).optimize.optimize_indices()
    for filt in AFTER_CHANGES:
        _check(tmp_path, uri, filt)
    lance.dataset(uri).delete("id % 5 = 0")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=5000)
    for filt in AFTER_CHANGES:
        _check(tmp_path, uri, filt)
