"""Compaction with defer_index_remap: the fragment reuse index.

The indices are left on the old row addresses and `__lance_frag_reuse`
records how the rows moved. For the same steps lance-cpp writes the entry
pylance 14 writes: the details bytes (digests and surviving row addresses of
every compaction, in order), dataset version, fragment bitmap and index
version equal, the other index entries untouched, the same versions
(ReserveFragments, then Rewrite). Each side extends the other's entry, and
both answer filters through the old indices as a full scan does."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lance
from manifest_wire import manifest_path, protoc, read_manifest_file
from test_scalar_index_read import _check, _ok, _run

pytestmark = [pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning"),
              pytest.mark.skipif(protoc() is None, reason="protoc is needed to decode manifests")]

FILTERS = ["i < 50", "s = 'b'", "s = 'b' AND i > 500", "NOT (s = 'a' OR i IS NULL)", "i > 100 AND x < 50"]


def _table(seed: int, start: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(start, start + n), pa.int64()),
        "i": pa.array(rng.integers(0, 1000, n), pa.int64(), mask=rng.random(n) < 0.1),
        "s": pa.array(rng.choice(["a", "b", "c", "d"], n), pa.string(), mask=rng.random(n) < 0.1),
        "x": pa.array(np.arange(start, start + n) % 100, pa.int64()),
    })


def _make(uri: Path, version: str) -> None:
    lance.write_dataset(_table(1, 0, 3000), uri, data_storage_version=version, max_rows_per_file=500)
    ds = lance.dataset(uri)
    ds.create_scalar_index("i", "BTREE")
    ds.create_scalar_index("s", "BITMAP")
    ds.delete("id % 5 = 0 OR (id >= 1200 AND id < 1300)")


def _compact(side: str, uri: Path, target: int) -> None:
    if side == "pylance":
        lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=target, defer_index_remap=True)
    else:
        _ok("compact", uri, "--target-rows-per-fragment", str(target), "--defer-index-remap")


def _entries(uri: Path) -> dict:
    """The latest manifest's index entries by name, uuid and time aside."""
    version = lance.dataset(uri).version
    section = read_manifest_file(manifest_path(uri, version))["index_section"]
    out = {}
    for entry in section["indices"]:
        e = {k: v for k, v in entry.items() if k not in ("uuid", "created_at")}
        out[entry["name"][0]] = e
    return out


@pytest.mark.parametrize("version", ["2.0", "2.1"])
@pytest.mark.parametrize("sides", [("lance-cpp", "lance-cpp"), ("pylance", "lance-cpp"), ("lance-cpp", "pylance")],
                         ids=lambda s: "-".join(s))
def test_deferred_remap_as_pylance(tmp_path, version, sides):
    ref, ours = tmp_path / "ref", tmp_path / "ours"
    _make(ref, version)
    shutil.copytree(ref, ours)
    before = _entries(ref)
    assert b"__lance_frag_reuse" not in before

    # One compaction: every old fragment rewritten into two.
    _compact("pylance", ref, 1500)
    _compact(sides[0], ours, 1500)
    assert len(lance.dataset(ours).versions()) == len(lance.dataset(ref).versions())
    got, want = _entries(ours), _entries(ref)
    assert got == want
    # The indices themselves are not touched.
    for name in before:
        assert got[name] == before[name], name
    for filt in FILTERS:
        _check(tmp_path, ours, filt)

    # A second compaction over new and compacted fragments extends the entry.
    for uri in (ref, ours):
        lance.write_dataset(_table(2, 3000, 700), uri, mode="append", max_rows_per_file=100)
        lance.dataset(uri).delete("id % 7 = 3")
    _compact("pylance", ref, 4000)
    _compact(sides[1], ours, 4000)
    assert len(lance.dataset(ours).versions()) == len(lance.dataset(ref).versions())
    got, want = _entries(ours), _entries(ref)
    assert got == want
    assert b"__lance_frag_reuse" in got
    for filt in FILTERS:
        _check(tmp_path, ours, filt)
        ds = lance.dataset(ours)
        assert sorted(ds.to_table(columns=["id"], filter=filt)["id"].to_pylist()) == \
            sorted(ds.to_table(columns=["id"], filter=filt, use_scalar_index=False)["id"].to_pylist()), filt


def test_refused_where_pylance_refuses_or_lance_cpp_cannot(tmp_path):
    # Stable row ids: pylance refuses a deferred remap, and so does lance-cpp.
    uri = tmp_path / "stable"
    lance.write_dataset(_table(1, 0, 1000), uri, max_rows_per_file=200, enable_stable_row_ids=True)
    lance.dataset(uri).delete("id % 3 = 0")
    with pytest.raises(Exception, match="stable row ID"):
        lance.dataset(uri).optimize.compact_files(defer_index_remap=True)
    proc = _run("compact", uri, "--defer-index-remap")
    assert proc.returncode != 0 and "stable row ids" in proc.stderr, proc.stderr
    # A remapping compaction after a deferred one over a BTREE still on the
    # old addresses: pylance 14 loses those rows, lance-cpp refuses
    # (test_frag_reuse_followups.py), nothing written.
    uri = tmp_path / "after"
    _make(uri, "2.1")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=1500, defer_index_remap=True)
    lance.write_dataset(_table(2, 3000, 300), uri, mode="append", max_rows_per_file=100)
    lance.dataset(uri).delete("id % 7 = 1")
    v = lance.dataset(uri).version
    proc = _run("compact", uri, "--materialize-deletions-threshold", "0.01")
    assert proc.returncode != 0 and "fragment reuse index" in proc.stderr and "'i_idx'" in proc.stderr, proc.stderr
    assert lance.dataset(uri).version == v
