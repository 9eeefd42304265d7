"""Compaction over fragments an IVF_FLAT / IVF_PQ / IVF_SQ index covers:
lance-cpp remaps the index as pylance 14 does (defer_index_remap false).
One dataset, copied, compacted once by each side: the same fragments, the
same index entries (a new uuid, the fragment bitmap swapped), index files
decoding to the same contents (each partition's rows in their old order,
row ids mapped, deleted rows out, PQ codes transposed per partition; the
centroids, codebook and SQ bounds unchanged), and the same nearest
neighbours from pylance and lance-cpp on both. Also the reverse (lance-cpp's
index, pylance's compaction), stable row ids (left alone), a deferred
compaction followed by a remapping one, and what stays refused."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lance
from conftest import assert_clean_failure
from test_list_zone_index_build import _assert_files_equal, _decoded_files
from test_scalar_index_build import _entries, _normalized
from test_vector_search import assert_identical, assert_overlap, ours, queries, theirs

pytestmark = pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")

DIM = 16


def _table(seed: int, start: int, n: int) -> pa.Table:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return pa.table({"id": pa.array(np.arange(start, start + n), pa.int64()),
                     "vec": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), DIM)})


def _make(uri: Path, version: str, *, stable: bool = False) -> Path:
    """Four small fragments and a large one (ids 800-1999) after them: the
    small ones compact into a fragment numbered after the large one, so a
    partition's remapped row ids are not ascending (pylance keeps the old
    order). Deletions in the small ones only; the large one stays."""
    lance.write_dataset(_table(1, 0, 800), uri, max_rows_per_file=200, data_storage_version=version,
                        enable_stable_row_ids=stable)
    lance.write_dataset(_table(2, 800, 1200), uri, mode="append", max_rows_per_file=1200)
    return uri


def _index(uri: Path, kind: str, metric: str, builder=None):
    """`builder`: pylance when None, else the lance_cpp fixture."""
    if builder is None:
        params = {"num_partitions": 4, "metric": metric}
        if kind == "IVF_PQ":
            params["num_sub_vectors"] = 4
        lance.dataset(uri).create_index("vec", kind, **params)
    else:
        builder.run_ok("create-index", uri, "vec", "--type", kind, "--num-partitions", "4", "--metric", metric)
    lance.dataset(uri).delete("(id % 7 = 0 AND id < 800) OR (id >= 300 AND id < 400)")


def _compact_both(cpp, tmp_path: Path, uri: Path) -> tuple[Path, Path]:
    ours_uri, theirs_uri = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(uri, ours_uri)
    shutil.copytree(uri, theirs_uri)
    cpp.run_ok("compact", ours_uri, "--target-rows-per-fragment", "1000")
    lance.dataset(theirs_uri).optimize.compact_files(target_rows_per_fragment=1000)
    return ours_uri, theirs_uri


def _fragments(ds) -> list:
    return [(f.fragment_id, f.count_rows(), f.metadata.physical_rows) for f in ds.get_fragments()]


def _assert_same_compaction(cpp, ours_uri: Path, theirs_uri: Path, before_uuid: str):
    a, b = lance.dataset(ours_uri), lance.dataset(theirs_uri)
    assert a.version == b.version
    assert _fragments(a) == _fragments(b)
    assert _entries(a) == _entries(b)
    views = [json.loads(cpp.run_ok("inspect", uri, "--json").stdout) for uri in (ours_uri, theirs_uri)]
    assert _normalized(views[0]) == _normalized(views[1])
    (ia,), (ib,) = a.list_indices(), b.list_indices()
    assert ia["uuid"] != before_uuid and ib["uuid"] != before_uuid
    _assert_files_equal(_decoded_files(ours_uri, a), _decoded_files(theirs_uri, b))


class _VectorIndices:
    """A dataset's list_indices without the fragment reuse index (its
    content is inline: no files to decode)."""

    def __init__(self, ds):
        self._indices = [i for i in ds.list_indices() if i["name"] != "__lance_frag_reuse"]

    def list_indices(self):
        return self._indices


def _assert_same_files(ours_uri: Path, theirs_uri: Path):
    _assert_files_equal(_decoded_files(ours_uri, _VectorIndices(lance.dataset(ours_uri))),
                        _decoded_files(theirs_uri, _VectorIndices(lance.dataset(theirs_uri))))


def _assert_same_answers(cpp, ours_uri: Path, theirs_uri: Path, kind: str, deleted=lambda i: False, prefilter=False):
    """`prefilter`: pylance searched with a prefilter (and lance-cpp with the
    same filter): over stable row ids after a compaction pylance drops the
    deleted rows only after its top k without one (it then returns fewer
    than k rows; lance-cpp returns k)."""
    check = assert_identical if kind == "IVF_FLAT" else assert_overlap
    extra = ["--filter", "id >= 0"] if prefilter else []
    pre = {"filter": "id >= 0", "prefilter": True} if prefilter else {}
    for qi, q in enumerate(queries(3, 6, DIM)):
        for args, kw in (([], {}), (["--nprobes", "1"], {"nprobes": 1}), (["--nprobes", "4"], {"nprobes": 4})):
            args, kw = args + extra, {**kw, **pre}
            want = theirs(theirs_uri, q, 10, **kw)
            assert not any(deleted(i) for i, _ in want)
            # pylance on our compaction: the very same answers.
            assert theirs(ours_uri, q, 10, **kw) == want, f"q{qi} {kw}"
            check(ours(cpp, ours_uri, q, 10, *args), want, f"q{qi} {args} lance-cpp on ours")
            check(ours(cpp, theirs_uri, q, 10, *args), want, f"q{qi} {args} lance-cpp on theirs")


def _gone(i: int) -> bool:
    return (i % 7 == 0 and i < 800) or 300 <= i < 400


CASES = [(kind, version, "l2") for kind in ("IVF_FLAT", "IVF_PQ", "IVF_SQ") for version in ("2.0", "2.1", "2.2")]
CASES += [(kind, "2.1", "cosine") for kind in ("IVF_FLAT", "IVF_PQ", "IVF_SQ")] + [("IVF_FLAT", "2.2", "dot")]


@pytest.mark.parametrize("kind,version,metric", CASES)
def test_compaction_remaps_vector_index_as_pylance(lance_cpp, tmp_path, kind, version, metric):
    uri = _make(tmp_path / "ds", version)
    _index(uri, kind, metric)
    (before,) = lance.dataset(uri).list_indices()
    ours_uri, theirs_uri = _compact_both(lance_cpp, tmp_path, uri)
    assert [f.fragment_id for f in lance.dataset(ours_uri).get_fragments()] == [4, 5]
    assert sorted(lance.dataset(ours_uri).list_indices()[0]["fragment_ids"]) == [4, 5]
    _assert_same_compaction(lance_cpp, ours_uri, theirs_uri, before["uuid"])
    _assert_same_answers(lance_cpp, ours_uri, theirs_uri, kind, _gone)


@pytest.mark.parametrize("kind", ["IVF_FLAT", "IVF_SQ"])
def test_lance_cpp_index_compacted_by_both(lance_cpp, tmp_path, kind):
    """lance-cpp's own index: remapped by lance-cpp as pylance remaps it, and
    searched by pylance after."""
    uri = _make(tmp_path / "ds", "2.1")
    _index(uri, kind, "l2", builder=lance_cpp)
    (before,) = lance.dataset(uri).list_indices()
    ours_uri, theirs_uri = _compact_both(lance_cpp, tmp_path, uri)
    _assert_same_compaction(lance_cpp, ours_uri, theirs_uri, before["uuid"])
    _assert_same_answers(lance_cpp, ours_uri, theirs_uri, kind, _gone)
    # A second round: more deletions, both compact again.
    for u in (ours_uri, theirs_uri):
        lance.dataset(u).delete("id % 3 = 1")
    lance_cpp.run_ok("compact", ours_uri, "--target-rows-per-fragment", "1000")
    lance.dataset(theirs_uri).optimize.compact_files(target_rows_per_fragment=1000)
    a, b = lance.dataset(ours_uri), lance.dataset(theirs_uri)
    assert _fragments(a) == _fragments(b) and _entries(a) == _entries(b)
    _assert_files_equal(_decoded_files(ours_uri, a), _decoded_files(theirs_uri, b))
    _assert_same_answers(lance_cpp, ours_uri, theirs_uri, kind, lambda i: _gone(i) or i % 3 == 1)


def test_stable_row_ids_leave_the_index_alone(lance_cpp, tmp_path):
    uri = _make(tmp_path / "ds", "2.1", stable=True)
    _index(uri, "IVF_PQ", "l2")
    (before,) = lance.dataset(uri).list_indices()
    ours_uri, theirs_uri = _compact_both(lance_cpp, tmp_path, uri)
    a, b = lance.dataset(ours_uri), lance.dataset(theirs_uri)
    assert _fragments(a) == _fragments(b)
    assert _entries(a) == _entries(b)
    assert [i["uuid"] for i in a.list_indices()] == [before["uuid"]]
    assert [i["uuid"] for i in b.list_indices()] == [before["uuid"]]
    _assert_same_answers(lance_cpp, ours_uri, theirs_uri, "IVF_PQ", _gone, prefilter=True)


@pytest.mark.parametrize("kind,deferrer", [("IVF_FLAT", "pylance"), ("IVF_PQ", "pylance"), ("IVF_PQ", "lance-cpp")])
def test_remap_after_deferred_compaction(lance_cpp, tmp_path, kind, deferrer):
    """An index older than a deferred compaction (by `deferrer`) holds the
    rows' addresses from before it: pylance 14 maps them through the
    fragment reuse index, then through the new compaction (all live rows
    stay indexed); so does lance-cpp."""
    uri = _make(tmp_path / "ds", "2.1")
    _index(uri, kind, "l2")
    if deferrer == "pylance":
        lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=400, defer_index_remap=True)
    else:
        lance_cpp.run_ok("compact", uri, "--target-rows-per-fragment", "400", "--defer-index-remap")
    lance.dataset(uri).delete("id % 5 = 1")
    (before,) = [i for i in lance.dataset(uri).list_indices() if i["name"] == "vec_idx"]
    ours_uri, theirs_uri = _compact_both(lance_cpp, tmp_path, uri)
    a, b = lance.dataset(ours_uri), lance.dataset(theirs_uri)
    assert _fragments(a) == _fragments(b)
    assert _entries(a) == _entries(b)
    _assert_same_files(ours_uri, theirs_uri)
    (after,) = [i for i in a.list_indices() if i["name"] == "vec_idx"]
    assert after["uuid"] != before["uuid"]
    rows = sum(f.count_rows() for f in a.get_fragments())
    assert json.loads(lance_cpp.run_ok("indices", ours_uri, "--json").stdout)[-1]["num_indexed_rows"] == rows
    _assert_same_answers(lance_cpp, ours_uri, theirs_uri, kind, lambda i: _gone(i) or i % 5 == 1)


@pytest.mark.parametrize("kind,what", [("IVF_HNSW_SQ", "HNSW"), ("IVF_RQ", "IVF_RQ")])
def test_unremappable_vector_index_refused_before_anything_is_written(lance_cpp, tmp_path, kind, what):
    uri = _make(tmp_path / "ds", "2.1")
    lance.dataset(uri).create_index("vec", kind, num_partitions=2, name="my_vec_idx")
    lance.dataset(uri).delete("id % 7 = 0 AND id < 800")
    version = lance.dataset(uri).version
    files = sorted(p.relative_to(uri) for p in Path(uri).rglob("*"))
    assert_clean_failure(lance_cpp.run("compact", uri, "--target-rows-per-fragment", "1000"), "my_vec_idx", what,
                         "remapped")
    assert lance.dataset(uri).version == version
    assert sorted(p.relative_to(uri) for p in Path(uri).rglob("*")) == files


def test_delta_segments_remapped_each(lance_cpp, tmp_path):
    """An index of two segments (pylance's optimize_indices made a delta over
    appended fragments): each segment covering compacted fragments is
    remapped on its own, as pylance does."""
    uri = _make(tmp_path / "ds", "2.2")
    _index(uri, "IVF_PQ", "l2")
    lance.write_dataset(_table(3, 2000, 400), uri, mode="append", max_rows_per_file=100)
    lance.dataset(uri).optimize.optimize_indices(num_indices_to_merge=0)
    assert len(lance.dataset(uri).list_indices()) == 2
    lance.dataset(uri).delete("id % 4 = 3 AND id >= 2000")
    before = {i["uuid"] for i in lance.dataset(uri).list_indices()}
    ours_uri, theirs_uri = _compact_both(lance_cpp, tmp_path, uri)
    a, b = lance.dataset(ours_uri), lance.dataset(theirs_uri)
    assert _fragments(a) == _fragments(b)
    assert len(a.list_indices()) == len(b.list_indices()) == 2
    assert sorted(sorted(i["fragment_ids"]) for i in a.list_indices()) == \
        sorted(sorted(i["fragment_ids"]) for i in b.list_indices())
    assert not before & {i["uuid"] for i in a.list_indices()}
    by_bitmap = lambda ds: sorted(ds.list_indices(), key=lambda i: sorted(i["fragment_ids"]))  # noqa: E731

    class _Ordered:
        def __init__(self, ds):
            self._indices = by_bitmap(ds)

        def list_indices(self):
            return self._indices

    _assert_files_equal(_decoded_files(ours_uri, _Ordered(a)), _decoded_files(theirs_uri, _Ordered(b)))
    _assert_same_answers(lance_cpp, ours_uri, theirs_uri, "IVF_PQ", lambda i: _gone(i) or (i % 4 == 3 and i >= 2000))


@pytest.mark.parametrize("kind", ["IVF_FLAT", "IVF_SQ"])
def test_partition_larger_than_a_window(lance_cpp, tmp_path, kind):
    """A partition of more rows than lance-cpp remaps at a time (65,536 of
    IVF_FLAT / IVF_SQ): the same files as pylance's."""
    n = 140_000
    v = np.random.default_rng(9).standard_normal((n, 4)).astype(np.float32)
    uri = tmp_path / "ds"
    lance.write_dataset(pa.table({"id": pa.array(np.arange(n), pa.int64()),
                                  "vec": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), 4)}),
                        uri, max_rows_per_file=20_000, data_storage_version="2.1")
    lance.dataset(uri).create_index("vec", kind, num_partitions=1)
    lance.dataset(uri).delete("id % 3 = 0 AND id < 100000")
    ours_uri, theirs_uri = _compact_both(lance_cpp, tmp_path, uri)
    a, b = lance.dataset(ours_uri), lance.dataset(theirs_uri)
    assert _fragments(a) == _fragments(b) and _entries(a) == _entries(b)
    assert a.list_indices()[0]["uuid"] != lance.dataset(uri).list_indices()[0]["uuid"]
    _assert_files_equal(_decoded_files(ours_uri, a), _decoded_files(theirs_uri, b))
