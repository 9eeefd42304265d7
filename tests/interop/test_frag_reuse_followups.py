"""After a compaction with defer_index_remap: optimize-indices and a later
compaction without it (issue 13).

pylance 14's optimize_indices() merges the old rows of a BTREE, BITMAP,
LABEL_LIST or NGRAM index mapped through the fragment reuse index (the rows
the compaction dropped go) with the new fragments' rows; the new segment
keeps the old one's dataset version (NGRAM: today's), its bitmap is the old
(already remapped) one plus the new fragments. ZONEMAP and BLOOMFILTER keep
their old zones (naming the fragments gone) and add the new fragments'.
`__lance_frag_reuse` stays as it was (pylance 14 trims none of its
versions). lance-cpp writes the same entries and files (decoded).

A compaction without defer_index_remap after a deferred one: pylance keeps
the fragment reuse index as it is and remaps the indices over the compacted
fragments. BITMAP and LABEL_LIST it reads through the reuse index, so their
remapped rows are right, and lance-cpp writes the same. A BTREE, NGRAM or
INVERTED index still holding the old addresses has its bitmap moved but not
those addresses: pylance then finds none of those rows. lance-cpp refuses
that case, naming the index; once optimize-indices has caught the index up
it compacts as pylance (INVERTED: test_fts_deferred_remap.py)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lance
from manifest_wire import protoc
from test_frag_reuse_index import _entries
from test_list_zone_index_build import _assert_files_equal, _decoded_files
from test_scalar_index_read import _ok, _run

pytestmark = [pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning"),
              pytest.mark.skipif(protoc() is None, reason="protoc is needed to decode manifests")]

FILTERS = ["i < 10", "i = 7 OR i > 45", "s = 'b'", "s IS NULL", "array_has_any(l, ['2'])", "contains(t, 'ab')",
           "id < 100", "id = 7 OR id > 330", "x = 3", "x IN (1, 40)"]


def _table(seed: int, start: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(start, start + n), pa.int64()),
        "i": pa.array(rng.integers(0, 50, n), pa.int64()),
        "s": pa.array(rng.choice(["a", "b", "c"], n), pa.string(), mask=rng.random(n) < 0.1),
        "l": pa.array([[str(x), str(x + 1)] for x in rng.integers(0, 5, n)], pa.list_(pa.string())),
        "t": pa.array(["".join(rng.choice(list("abcd"), 4)) for _ in range(n)], pa.string()),
        "x": pa.array(rng.integers(0, 50, n), pa.int64()),
    })


ALL = ("BTREE", "BITMAP", "LABEL_LIST", "NGRAM", "ZONEMAP", "BLOOMFILTER")


def _make(uri: Path, version: str, compactor: str, kinds=ALL) -> None:
    lance.write_dataset(_table(1, 0, 300), uri, data_storage_version=version, max_rows_per_file=100)
    ds = lance.dataset(uri)
    for kind, column in zip(ALL, ["i", "s", "l", "t", "id", "x"]):
        if kind in kinds:
            ds.create_scalar_index(column, kind)
    lance.dataset(uri).delete("id % 5 = 0")
    if compactor == "pylance":
        lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=1000, defer_index_remap=True)
    else:
        _ok("compact", uri, "--target-rows-per-fragment", "1000", "--defer-index-remap")
    lance.write_dataset(_table(2, 300, 60), uri, mode="append", max_rows_per_file=30)


def _assert_answers(uri: Path) -> None:
    ds = lance.dataset(uri)
    for filt in FILTERS:
        full = sorted(ds.to_table(columns=["id"], filter=filt, use_scalar_index=False)["id"].to_pylist())
        assert sorted(ds.to_table(columns=["id"], filter=filt)["id"].to_pylist()) == full, filt
        assert int(_ok("count", uri, "--filter", filt).stdout) == len(full), filt


class _Indices:
    """A dataset's indices but the fragment reuse index (its details are
    compared in the manifest entry)."""

    def __init__(self, ds):
        self.ds = ds

    def list_indices(self):
        return [i for i in self.ds.list_indices() if i["name"] != "__lance_frag_reuse"]


def _assert_same(ours: Path, theirs: Path) -> None:
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert a.version == b.version
    assert _entries(ours) == _entries(theirs)
    _assert_files_equal(_decoded_files(ours, _Indices(a)), _decoded_files(theirs, _Indices(b)))
    _assert_answers(ours)
    _assert_answers(theirs)


@pytest.mark.parametrize("version", ["2.0", "2.1"])
@pytest.mark.parametrize("compactor", ["pylance", "lance-cpp"])
def test_optimize_then_compact_as_pylance(tmp_path, version, compactor):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    _make(ours, version, compactor)
    shutil.copytree(ours, theirs)
    reuse = _entries(ours)[b"__lance_frag_reuse"]

    _ok("optimize-indices", ours)
    lance.dataset(theirs).optimize.optimize_indices()
    _assert_same(ours, theirs)
    got = _entries(ours)
    assert got[b"__lance_frag_reuse"] == reuse, "the fragment reuse index stays as it was"
    for n, name in enumerate([b"i_idx", b"s_idx", b"l_idx"]):
        assert got[name]["dataset_version"] == [1 + n], name

    # A compaction without defer_index_remap over the caught-up indices.
    for uri in (ours, theirs):
        lance.dataset(uri).delete("id % 7 = 1")
    _ok("compact", ours, "--materialize-deletions-threshold", "0.01")
    lance.dataset(theirs).optimize.compact_files(materialize_deletions_threshold=0.01)
    _assert_same(ours, theirs)
    assert _entries(ours)[b"__lance_frag_reuse"] == reuse

    # And the other way: each side optimizes what the other compacted.
    for uri in (ours, theirs):
        lance.write_dataset(_table(3, 400, 40), uri, mode="append")
    lance.dataset(ours).optimize.optimize_indices()
    _ok("optimize-indices", theirs)
    _assert_same(ours, theirs)


@pytest.mark.parametrize("compactor", ["pylance", "lance-cpp"])
def test_compact_without_optimize(tmp_path, compactor):
    # BITMAP and LABEL_LIST: remapped through the reuse index, as pylance.
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    _make(ours, "2.1", compactor, kinds=("BITMAP", "LABEL_LIST", "ZONEMAP", "BLOOMFILTER"))
    shutil.copytree(ours, theirs)
    reuse = _entries(ours)[b"__lance_frag_reuse"]
    for uri in (ours, theirs):
        lance.dataset(uri).delete("id % 7 = 1")
    _ok("compact", ours, "--materialize-deletions-threshold", "0.01")
    lance.dataset(theirs).optimize.compact_files(materialize_deletions_threshold=0.01)
    _assert_same(ours, theirs)
    assert _entries(ours)[b"__lance_frag_reuse"] == reuse

    # A BTREE still on the old addresses: pylance loses those rows,
    # lance-cpp refuses by name and writes nothing.
    uri = tmp_path / "btree"
    _make(uri, "2.1", compactor, kinds=("BTREE",))
    lance.dataset(uri).delete("id % 7 = 1")
    shutil.copytree(uri, tmp_path / "pylance")
    v = lance.dataset(uri).version
    files = sorted(p.relative_to(uri) for p in uri.rglob("*"))
    proc = _run("compact", uri, "--materialize-deletions-threshold", "0.01")
    assert proc.returncode != 0 and "index 'i_idx'" in proc.stderr and "fragment reuse index" in proc.stderr, \
        proc.stderr
    assert lance.dataset(uri).version == v
    assert sorted(p.relative_to(uri) for p in uri.rglob("*")) == files
    lance.dataset(tmp_path / "pylance").optimize.compact_files(materialize_deletions_threshold=0.01)
    ds = lance.dataset(tmp_path / "pylance")
    full = ds.to_table(columns=["id"], filter="i < 10", use_scalar_index=False).num_rows
    assert ds.to_table(columns=["id"], filter="i < 10").num_rows < full, "pylance 14 loses the old rows"


def test_reuse_index_kept_when_every_index_caught_up(tmp_path):
    # pylance 14 trims no version of __lance_frag_reuse in optimize_indices()
    # nor in a later compaction, even when every index is newer than it
    # (NGRAM segments merged through it take today's version): lance-cpp
    # neither.
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    _make(ours, "2.1", "lance-cpp", kinds=("NGRAM",))
    shutil.copytree(ours, theirs)
    reuse = _entries(ours)[b"__lance_frag_reuse"]
    _ok("optimize-indices", ours)
    lance.dataset(theirs).optimize.optimize_indices()
    _assert_same(ours, theirs)
    got = _entries(ours)
    assert got[b"t_idx"]["dataset_version"][0] > reuse["dataset_version"][0]
    assert got[b"__lance_frag_reuse"] == reuse
