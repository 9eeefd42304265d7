"""Full-text search over INVERTED indices older than a compaction with
defer_index_remap: lance-cpp gives pylance 14's rows and scores.

What pylance 14 does (checked here against its own answers, and by hand
against BM25 computed from the texts): the index's documents keep their
old row addresses and are mapped through the fragment reuse index when
searched; documents of rows deleted before the compaction have no new
address and are never returned, but the index's statistics stay as built:
they still count in N, the average document length and each token's
document count (no doc ids shift: every returned row's score is its own
text's). An optimize-indices afterwards merges the mapped documents only
(the dropped ones leave the statistics then). A compaction without
defer_index_remap after a deferred one moves the index's fragment bitmap
but not its old addresses, and pylance then finds none of those rows:
lance-cpp refuses a query matching one of them rather than answer. An
index of the legacy layout (pylance 0.27) is another matter: past a
deferred compaction with deletions pylance 14 counts only the kept
documents in N but all in the token counts, and fails (negative weights)
or misses live rows; lance-cpp refuses it.

Steps: pylance builds the indices (with and without positions), deletes
(inside a fragment and a run in the middle of the partition), a deferred
compaction by one side, deletes and an append (searched flat) after it, a
second deferred compaction by the other side (chained), then the index
optimized by each side."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import lance
from lance.query import BooleanQuery, MultiMatchQuery, Occur

from conftest import FIXTURES_MISSING, FIXTURES_ROOT
from test_fts_queries import boost, m, mm, ours, ph, theirs
from test_fts_search import assert_same_hits, random_texts

pytestmark = pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")

FILTER = "id % 4 <> 1"


def _rows(start: int, n: int, seed: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "text": pa.array(random_texts(seed, n), pa.string()),
                     "ptext": pa.array(random_texts(seed + 1, n), pa.string())})


def _make(uri: Path) -> Path:
    lance.write_dataset(_rows(0, 300, 51), uri, max_rows_per_file=100)
    lance.dataset(uri).create_scalar_index("text", "INVERTED")
    lance.dataset(uri).create_scalar_index("ptext", "INVERTED", with_position=True)
    lance.dataset(uri).delete("id % 7 = 3 OR (id >= 40 AND id < 55) OR (id >= 130 AND id < 140)")
    return uri


def _compact(lance_cpp, side: str, uri: Path, target: int) -> None:
    before = lance.dataset(uri).version
    if side == "pylance":
        lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=target, defer_index_remap=True)
    else:
        lance_cpp.run_ok("compact", uri, "--target-rows-per-fragment", str(target), "--defer-index-remap")
    ds = lance.dataset(uri)
    assert ds.version > before
    assert "__lance_frag_reuse" in {i["name"] for i in ds.list_indices()}


def _queries(full: bool) -> dict:
    out = {
        "match": m("quick brown fox", "text"),
        "phrase": ph("quick brown", "ptext"),
        "sloppy phrase": ph("data run", "ptext", slop=6),
        "boolean": (BooleanQuery([(Occur.MUST, m("run", "ptext")[0]), (Occur.MUST_NOT, m("lake", "text")[0])]),
                    {"boolean": {"must": [m("run", "ptext")[1]], "must_not": [m("lake", "text")[1]],
                                 "should": []}}),
    }
    if full:
        out["multi"] = mm("data lake zebra", ["text", "ptext"], boosts=[1.5, 0.5])
        out["fuzzy"] = m("quik dgo", "text", fuzziness=1)
        out["boost"] = boost(m("search index", "text"), m("fast", "text"), 0.4)
    return out


def _same(lance_cpp, uri: Path, what: str, full: bool = True) -> None:
    """lance-cpp's answers on `uri` are pylance's: every query whole, and
    the first with a prefilter and with a postfilter over the best 12."""
    for name, (query, qj) in _queries(full).items():
        assert_same_hits(ours(lance_cpp, uri, "--fts-query-json", json.dumps(qj)), theirs(uri, query),
                         f"{what}: {name}")
    query, qj = _queries(False)["match"]
    assert_same_hits(ours(lance_cpp, uri, "--fts-query-json", json.dumps(qj), "--filter", FILTER),
                     theirs(uri, query, filter=FILTER, prefilter=True), f"{what}: prefiltered")
    everything = theirs(uri, query, filter=FILTER)
    assert_same_hits(ours(lance_cpp, uri, "--fts-query-json", json.dumps(qj), "--filter", FILTER, "--k", "12",
                          "--postfilter"),
                     theirs(uri, query, filter=FILTER, limit=12), f"{what}: postfiltered", everything=everything)


@pytest.mark.parametrize("first", ["pylance", "lance-cpp"])
def test_search_through_deferred_compactions(lance_cpp, tmp_path, first):
    second = "lance-cpp" if first == "pylance" else "pylance"
    uri = _make(tmp_path / "ds")
    before = {name: theirs(uri, q) for name, (q, _) in _queries(False).items()}
    _compact(lance_cpp, first, uri, 100)
    assert len(lance.dataset(uri).get_fragments()) == 2
    # The same rows and scores as before the compaction: the statistics
    # still count the rows it dropped.
    for name, (q, _) in _queries(False).items():
        assert_same_hits(theirs(uri, q), before[name], f"pylance before and after: {name}")
    _same(lance_cpp, uri, f"compacted by {first}")

    lance.dataset(uri).delete("id % 11 = 5")
    lance.write_dataset(_rows(300, 40, 61), uri, mode="append")  # no index covers it
    _same(lance_cpp, uri, "deleted and appended after", full=False)

    _compact(lance_cpp, second, uri, 1000)  # the two compacted fragments into one
    _same(lance_cpp, uri, f"then compacted by {second}")

    # Optimized by each side: the mapped documents merged with the appended
    # rows; both answer as pylance's.
    ours_uri = tmp_path / "ours"
    shutil.copytree(uri, ours_uri)
    lance.dataset(uri).optimize.optimize_indices()
    lance_cpp.run_ok("optimize-indices", ours_uri)
    _same(lance_cpp, uri, "optimized by pylance", full=False)
    for name, (q, _) in _queries(True).items():
        assert_same_hits(theirs(ours_uri, q), theirs(uri, q), f"pylance on lance-cpp's optimized index: {name}")
    _same(lance_cpp, ours_uri, "optimized by lance-cpp", full=False)


def test_refused_where_pylance_loses_rows(lance_cpp, tmp_path):
    uri = _make(tmp_path / "ds")
    lance.dataset(uri).create_scalar_index("id", "BTREE")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=100, defer_index_remap=True)
    lance.write_dataset(_rows(300, 40, 61), uri, mode="append")
    # The BTREE's old rows are merged through the fragment reuse index (as
    # pylance; test_frag_reuse_followups.py), the INVERTED ones stay old.
    lance_cpp.run_ok("optimize-indices", uri, "--index", "id_idx")

    # A compaction without defer_index_remap after the deferred one: pylance
    # moves the INVERTED index's bitmap to the new fragment but leaves its
    # old row addresses, which the fragment reuse index maps to a fragment
    # that is gone, so it finds no row of them. lance-cpp refuses to compact
    # so, naming the index, and to search after pylance did.
    lance.dataset(uri).delete("id % 13 = 0")
    v = lance.dataset(uri).version
    proc = lance_cpp.run("compact", uri, "--target-rows-per-fragment", "1000", "--materialize-deletions-threshold",
                         "0.01")
    assert proc.returncode != 0 and "index 'text_idx'" in proc.stderr and "fragment reuse index" in proc.stderr, \
        proc.stderr
    assert lance.dataset(uri).version == v
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=1000, materialize_deletions_threshold=0.01)
    ds = lance.dataset(uri)
    indexed = [r for r, t in zip(*ds.to_table(columns=["id", "text"]).to_pydict().values())
               if r < 300 and t and "quick" in t.split()]
    assert indexed, "rows the index held hold 'quick'"
    assert not [r for r, _ in theirs(uri, m("quick", "text")[0]) if r < 300], "pylance 14 finds none of them"
    proc = lance_cpp.run("search", uri, "--full-text", "quick", "--fts-columns", "text")
    assert proc.returncode != 0 and "defer_index_remap" in proc.stderr, proc.stderr


def test_compacted_fragment_deleted_whole(lance_cpp, tmp_path):
    # Rows mapped to a fragment since deleted whole are gone, as in pylance
    # (that fragment stays in the bitmap: not the refused case above).
    uri = _make(tmp_path / "ds")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=100, defer_index_remap=True)
    lance.dataset(uri).delete("id >= 150")
    assert len(lance.dataset(uri).get_fragments()) == 1
    query, qj = _queries(False)["match"]
    assert_same_hits(ours(lance_cpp, uri, "--fts-query-json", json.dumps(qj)), theirs(uri, query), "deleted whole")


def test_optimized_then_compacted_without_deferral(lance_cpp, tmp_path):
    # Optimized first, the index holds the new addresses (its dataset
    # version stays the old one): pylance's later compaction without
    # defer_index_remap remaps it, and lance-cpp answers as pylance.
    uri = _make(tmp_path / "ds")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=100, defer_index_remap=True)
    lance.write_dataset(_rows(300, 40, 61), uri, mode="append")
    lance.dataset(uri).optimize.optimize_indices()
    lance.dataset(uri).delete("id % 13 = 0")
    # lance-cpp compacts a copy so too (the documents are on today's rows).
    mine = tmp_path / "mine"
    shutil.copytree(uri, mine)
    lance_cpp.run_ok("compact", mine, "--target-rows-per-fragment", "1000", "--materialize-deletions-threshold", "0.01")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=1000, materialize_deletions_threshold=0.01)
    query, qj = _queries(False)["match"]
    want = theirs(uri, query)
    assert [r for r, _ in want if r < 300]
    assert_same_hits(ours(lance_cpp, uri, "--fts-query-json", json.dumps(qj)), want, "optimized, then compacted")
    assert_same_hits(theirs(mine, query), want, "optimized, then compacted by lance-cpp")
    assert_same_hits(ours(lance_cpp, mine, "--fts-query-json", json.dumps(qj)), want, "lance-cpp's, by lance-cpp")


@pytest.mark.skipif(not FIXTURES_ROOT.exists(), reason=FIXTURES_MISSING)
def test_legacy_layout_refused(lance_cpp, tmp_path):
    uri = tmp_path / "legacy"
    shutil.copytree(FIXTURES_ROOT / "0.27.0" / "legacy_fts_index", uri)
    lance_cpp.run_ok("delete", uri, "text = 'frodo was a happy puppy'")
    lance_cpp.run_ok("compact", uri, "--defer-index-remap", "--materialize-deletions-threshold", "0.01")
    # pylance 14: N = 2 kept documents, "frodo" in 3: a negative weight.
    with pytest.raises(Exception, match="must be finite"):
        lance.dataset(uri).to_table(full_text_query="frodo")
    assert "frodo was a puppy with a tail" in lance.dataset(uri).to_table()["text"].to_pylist()
    assert lance.dataset(uri).to_table(full_text_query="tail").num_rows == 0, "a live row missed"
    for q in ["frodo", "tail"]:
        proc = lance_cpp.run("search", uri, "--full-text", q)
        assert proc.returncode != 0 and "legacy layout" in proc.stderr, proc.stderr
