"""Filtered scans and counts through pylance's LABEL_LIST indices.

pylance builds LABEL_LIST indices on a list<string> and a list<int64> column
(null lists, empty lists, null elements) of datasets of file version 2.0 and
2.1, with and without stable row ids. For every filter lance-cpp's indexed
scan must give exactly the rows of its own full scan (`--no-index`) and of
pylance, and use an index exactly where pylance's explain_plan does. Then
both sides append (unindexed fragments), delete and update, and the answers
must still agree."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from test_scalar_index_read import _check, _ok

pytestmark = pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")

ROWS = 1200
ROWS_PER_FILE = 400
VARIANTS = [("2.0", False), ("2.0", True), ("2.1", False), ("2.1", True)]

# Filters the index answers whole, negations included (the index records the
# null lists, which make every membership test null).
INDEXED = [
    "array_has_any(tags, ['a', 'c'])",
    "array_has_all(tags, ['a', 'b'])",
    "array_contains(tags, 'a')",
    "array_has(tags, 'e')",
    "array_has_any(tags, ['zz'])",
    "NOT array_has_any(tags, ['a'])",
    "NOT array_has_all(tags, ['a', 'b'])",
    "NOT array_contains(tags, 'd')",
    # A null in the needle matches null elements.
    "array_has_any(tags, ['a', NULL])",
    "array_has_all(tags, ['b', NULL])",
    "array_has_any(nums, [1, 4])",
    "array_has_all(nums, [2, 3])",
    "array_contains(nums, 5)",
    "array_has_any(tags, ['a']) AND array_has(nums, 3)",
    "NOT (array_has(tags, 'a') OR array_has(nums, 1))",
    "array_has_any(tags, ['b']) OR NOT array_has_all(nums, [0])",
]
# Filters the index answers in part (refine) or not at all.
PARTIAL = [
    "array_has_any(tags, ['a']) AND x < 50",
    "array_has_any(tags, ['a']) OR x < 50",
    "array_has_all(tags, [])",   # true for every row, null lists too: no index
    "array_has_any(tags, [])",
    "array_has(tags, NULL)",
    "array_has_any(nums, [1.5])",  # the column is cast: no index
    "tags IS NULL",
]
AFTER_CHANGES = ["array_has_any(tags, ['a', 'c'])", "NOT array_has(tags, 'b')", "array_has_all(nums, [2, 3])",
                 "array_has_any(tags, ['a']) AND x < 50", "array_has_any(tags, ['a', NULL])"]


def _table(seed: int, start: int, n: int) -> pa.Table:
    import numpy as np
    rng = np.random.default_rng(seed)

    def lists(pool, none):
        out = []
        for _ in range(n):
            r = rng.random()
            if r < 0.1:
                out.append(None)
            elif r < 0.15:
                out.append([])
            else:
                k = int(rng.integers(1, 4))
                out.append([none if rng.random() < 0.08 else pool[int(rng.integers(0, len(pool)))] for _ in range(k)])
        return out
    return pa.table({
        "id": pa.array(range(start, start + n), pa.int64()),
        "tags": pa.array(lists(["a", "b", "c", "d", "e"], None), pa.list_(pa.string())),
        "nums": pa.array(lists([0, 1, 2, 3, 4, 5], None), pa.list_(pa.int64())),
        "x": pa.array([v % 100 for v in range(start, start + n)], pa.int64()),
    })


def _make(tmp_path, version: str, stable: bool):
    uri = tmp_path / f"ll-{version}-{int(stable)}"
    lance.write_dataset(_table(1, 0, ROWS), uri, data_storage_version=version, max_rows_per_file=ROWS_PER_FILE,
                        enable_stable_row_ids=stable)
    ds = lance.dataset(uri)
    ds.create_scalar_index("tags", "LABEL_LIST")
    ds.create_scalar_index("nums", "LABEL_LIST")
    return uri


@pytest.fixture(scope="module", params=VARIANTS, ids=lambda v: f"v{v[0]}-stable{int(v[1])}")
def variant(request, tmp_path_factory):
    return _make(tmp_path_factory.mktemp("label_list"), *request.param)


def test_layout_as_read(variant):
    """The layout the reader expects, on pylance's files: index_version 1, a
    bitmap lookup over the elements, the list nulls in the global buffer the
    schema metadata names."""
    from lance.file import LanceFileReader
    ds = lance.dataset(variant)
    for idx in ds.list_indices():
        assert idx["type"] == "LabelList"
    shown = _ok("inspect", variant, "--json").stdout
    assert '"/lance.table.LabelListIndexDetails"' in shown and '"index_version": 1' in shown
    for path in (variant / "_indices").glob("*/bitmap_page_lookup.lance"):
        reader = LanceFileReader(str(path))
        table = reader.read_all().to_table()
        assert table.schema.names == ["keys", "bitmaps"]
        assert table.schema.metadata[b"lance:label_list_nulls"] == b"1"
        assert table["keys"].null_count == 1  # null elements have a key


@pytest.mark.parametrize("filt", INDEXED)
def test_indexed_filters(tmp_path, variant, filt):
    explain, pylance_plan = _check(tmp_path, variant, filt, expect_index=True)
    for col in ("tags", "nums"):
        if f"{col}_idx(LabelList)" in pylance_plan:
            assert f"{col}_idx (LabelList)" in explain, f"{filt}: plan\n{explain}"
    assert "Refine: --" in explain, f"{filt}: the index answers it whole\n{explain}"


@pytest.mark.parametrize("filt", PARTIAL)
def test_partly_indexed_filters(tmp_path, variant, filt):
    explain, _ = _check(tmp_path, variant, filt)
    if filt.endswith("AND x < 50"):
        assert "ScalarIndexQuery" in explain and "rechecked" in explain, explain
    else:
        assert "ScalarIndexQuery" not in explain, explain


@pytest.mark.parametrize("version,stable", VARIANTS, ids=lambda v: str(v))
def test_after_appends_deletes_updates(tmp_path, version, stable):
    uri = _make(tmp_path, version, stable)
    lance.write_dataset(_table(2, ROWS, 200), uri, mode="append")
    extra = tmp_path / "extra.arrow"
    more = _table(3, ROWS + 200, 200)
    with ipc.new_file(extra, more.schema) as w:
        w.write_table(more)
    _ok("write", uri, "--input", extra, "--mode", "append")
    lance.dataset(uri).delete("id % 7 = 0")
    _ok("delete", uri, "id % 11 = 0", "--quiet")
    lance.dataset(uri).update({"x": "x + 1"}, where="id < 100")
    # lance-cpp's update finds its rows through the index.
    _ok("update", uri, "--set", "x=x+2", "--where", "array_has(tags, 'e')", "--quiet")
    for filt in AFTER_CHANGES:
        _check(tmp_path, uri, filt)
    ds = lance.dataset(uri)
    for filt in ["array_has(tags, 'a')", "NOT array_has_any(nums, [1])"]:
        assert "ScalarIndexQuery" in ds.scanner(filter=filt).explain_plan(), filt
        used = ds.to_table(columns=["id"], filter=filt)["id"].to_pylist()
        scanned = ds.to_table(columns=["id"], filter=filt, use_scalar_index=False)["id"].to_pylist()
        assert sorted(used) == sorted(scanned), filt


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable"])
def test_after_optimize_and_compaction(tmp_path, stable):
    """pylance's optimize_indices (a delta segment over the appended
    fragments) and compaction (remapped index files)."""
    uri = _make(tmp_path, "2.1", stable)
    lance.write_dataset(_table(4, ROWS, 300), uri, mode="append")
    lance.dataset(uri).optimize.optimize_indices()
    for filt in AFTER_CHANGES:
        explain, _ = _check(tmp_path, uri, filt)
    lance.dataset(uri).delete("id % 5 = 0")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=5000)
    for filt in AFTER_CHANGES:
        _check(tmp_path, uri, filt)
