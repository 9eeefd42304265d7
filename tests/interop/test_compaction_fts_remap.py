"""Compaction over fragments an INVERTED (full-text) index covers: lance-cpp
remaps it as pylance 14 does (InvertedIndexBuilder::remap). Each partition
stays under its id, its documents keep their order with the deleted rows
left out and the others' row addresses mapped, tokens no kept document has
are dropped, BM25 scores are recomputed; an emptied partition is still
written. The same dataset compacted by each side gives the same index
entries, Rewrite rewritten_indices and index files (decoded; bytes too,
as test_fts_index_build compares them), and the same full-text answers by
pylance and lance-cpp. Also the reverse: pylance compacts over lance-cpp's
index."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import lance
from lance.query import MatchQuery, PhraseQuery
from conftest import FIXTURES_MISSING, FIXTURES_ROOT
from test_compaction_index_remap import _rewritten_indices
from test_fts_index_build import _assert_files_equal as _assert_index_files_equal, _index_files
from test_fts_search import assert_same_hits, random_texts
from test_scalar_index_build import _entries, _normalized, _ok, _run

pytestmark = pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")

QUERIES = ["run", "quick brown fox", "café naive zebra", "nothingmatches"]
PHRASES = ["quick brown", "the quick"]


def _rows(start: int, texts: list, ptexts: list) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + len(texts)), pa.int64()),
                     "text": pa.array(texts, pa.string()), "ptext": pa.array(ptexts, pa.string())})


def _make(uri: Path, version: str, builder: str) -> Path:
    """INVERTED indices of `text` (without positions) and `ptext` (with),
    each of two partitions (an optimize after an append), then deletions:
    rows of every fragment, and every document of partition 1 (its fragment
    keeps rows without text), so that compaction empties that partition."""
    lance.write_dataset(_rows(0, random_texts(1, 300), random_texts(2, 300)), uri, data_storage_version=version,
                        max_rows_per_file=100)
    if builder == "pylance":
        lance.dataset(uri).create_scalar_index("text", "INVERTED", num_workers=1)
        lance.dataset(uri).create_scalar_index("ptext", "INVERTED", with_position=True, num_workers=1)
    else:
        _ok("create-index", uri, "text", "--type", "INVERTED")
        _ok("create-index", uri, "ptext", "--type", "INVERTED", "--with-position")
    gone = [None if i % 2 else "quick brown fox gone" for i in range(40)]
    lance.write_dataset(_rows(300, gone, gone), uri, mode="append")
    lance.dataset(uri).optimize.optimize_indices()
    lance.dataset(uri).delete("id % 4 = 1 OR (id >= 120 AND id < 150) OR (id >= 300 AND id % 2 = 0)")
    # An unindexed fragment: its own bin, left alone.
    lance.write_dataset(_rows(340, random_texts(3, 30), random_texts(4, 30)), uri, mode="append")
    return uri


def _search_ours(uri: Path, q: str, column: str, *flags) -> list:
    out = _ok("search", uri, "--full-text", q, "--fts-columns", column, *flags, "--columns", "id", "--format",
              "json").stdout
    return [(r["id"], r["_score"]) for r in map(json.loads, filter(str.strip, out.splitlines()))]


def _search_theirs(uri: Path, q) -> list:
    t = lance.dataset(uri).to_table(full_text_query=q, columns=["id"])
    return list(zip(t["id"].to_pylist(), t["_score"].to_pylist()))


def _assert_same_search(ours: Path, theirs: Path):
    """pylance and lance-cpp on `ours` answer as pylance on `theirs`."""
    for column in ("text", "ptext"):
        for q in QUERIES:
            want = _search_theirs(theirs, MatchQuery(q, column))
            assert_same_hits(_search_theirs(ours, MatchQuery(q, column)), want, f"pylance: {column} {q}")
            assert_same_hits(_search_ours(ours, q, column), want, f"lance-cpp: {column} {q}")
    for q in PHRASES:
        want = _search_theirs(theirs, PhraseQuery(q, "ptext"))
        assert_same_hits(_search_theirs(ours, PhraseQuery(q, "ptext")), want, f"pylance: phrase {q}")
        assert_same_hits(_search_ours(ours, q, "ptext", "--phrase"), want, f"lance-cpp: phrase {q}")


def _files_view(uri: Path) -> dict:
    """test_fts_index_build's _index_files with metadata.lance's partition
    list sorted: pylance loads the partitions in parallel and remaps them in
    the order they arrive ("[1,0]" or "[0,1]"); lance-cpp goes by the
    order metadata.lance lists them."""
    out = _index_files(uri)
    for files in out.values():
        version, schema, table, size, outside = files["metadata.lance"]
        meta = dict(schema.metadata)
        meta[b"partitions"] = json.dumps(sorted(json.loads(meta[b"partitions"])), separators=(",", ":")).encode()
        files["metadata.lance"] = (version, schema.with_metadata(meta), table, size, outside)
    return out


def _assert_files_equal(ours: Path, theirs: Path):
    """test_fts_index_build's comparison, over _files_view."""
    _assert_index_files_equal(ours, theirs, view=_files_view)


def _files_of_rewrites(uri: Path, version: str) -> list:
    """The Rewrite's rewritten_indices, files by name (pylance lists the
    partitions in the order it remapped them), without the sizes of
    part_N_invert.lance in 2.1+ files: lance-cpp's file writer picks some
    encodings by another rule (test_fts_index_build)."""
    out = []
    for e in _rewritten_indices(uri):
        files = [{k: v for k, v in f.items() if k != 2 or version == "2.0" or not f[1].endswith(b"_invert.lance")}
                 for f in e["files"]]
        out.append({**e, "files": sorted(files, key=lambda f: f[1])})
    return out


@pytest.mark.parametrize("version", ["2.0", "2.1"])
def test_compaction_remaps_inverted_as_pylance(tmp_path, version):
    ours = _make(tmp_path / "ours", version, "pylance")
    theirs = _make(tmp_path / "theirs", version, "pylance")
    before = {i["name"]: i["uuid"] for i in lance.dataset(ours).list_indices()}
    _ok("compact", ours)
    lance.dataset(theirs).optimize.compact_files()
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert a.version == b.version
    assert _entries(a) == _entries(b)
    assert all(before[i["name"]] != i["uuid"] for i in a.list_indices())
    views = [json.loads(_ok("inspect", uri, "--json").stdout) for uri in (ours, theirs)]
    assert _normalized(views[0]) == _normalized(views[1])
    rewritten = _files_of_rewrites(ours, version)
    assert len(rewritten) == 2
    assert rewritten == _files_of_rewrites(theirs, version)
    _assert_files_equal(ours, theirs)
    _assert_same_search(ours, theirs)


def test_pylance_compacts_lance_cpp_inverted(tmp_path):
    """lance-cpp's indices compacted by pylance answer as pylance's own
    compacted by pylance; then lance-cpp compacts again over pylance's
    remap."""
    ours = _make(tmp_path / "ours", "2.1", "lance-cpp")
    theirs = _make(tmp_path / "theirs", "2.1", "pylance")
    for uri in (ours, theirs):
        lance.dataset(uri).optimize.compact_files()
    _assert_files_equal(ours, theirs)
    _assert_same_search(ours, theirs)
    for uri in (ours, theirs):
        lance.dataset(uri).delete("id % 5 = 2")
    _ok("compact", ours)
    lance.dataset(theirs).optimize.compact_files()
    _assert_files_equal(ours, theirs)
    _assert_same_search(ours, theirs)


@pytest.mark.skipif(not FIXTURES_ROOT.exists(), reason=FIXTURES_MISSING)
def test_legacy_layout_refused_before_anything_is_written(tmp_path):
    """pylance 0.27's INVERTED layout (index_version 0) is not remapped:
    refused by name, nothing written."""
    uri = tmp_path / "legacy"
    shutil.copytree(FIXTURES_ROOT / "0.27.0" / "legacy_fts_index", uri)
    lance.dataset(uri).delete("text LIKE '%happy%'")  # a third of the indexed fragment: rewritten
    version = lance.dataset(uri).version
    files = sorted(p.relative_to(uri) for p in Path(uri).rglob("*"))
    proc = _run("compact", uri)
    assert proc.returncode == 1, proc.stderr
    assert "index 'text_idx'" in proc.stderr and "index_version 0," in proc.stderr, proc.stderr
    assert lance.dataset(uri).version == version
    assert sorted(p.relative_to(uri) for p in Path(uri).rglob("*")) == files
