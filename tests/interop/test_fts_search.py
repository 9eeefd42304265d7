"""Full-text search: lance-cpp's `search --full-text` over pylance's INVERTED
indices gives pylance's rows, in pylance's order, with its BM25 scores (to
1e-4): match queries (OR, AND), phrases with positions, limits, filters,
rows appended after the index (searched unindexed), deleted and updated
rows, stable row ids, and the legacy index layout of pylance 0.27."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import lance
from lance.query import FullTextOperator as Operator, MatchQuery, PhraseQuery

from conftest import FIXTURES_MISSING, FIXTURES_ROOT

WORDS = ("the a of and to in is it run runs running ran runner quick quicker quickly brown fox foxes jump jumped "
         "jumping lazy dog dogs sleep sleeping cat cats data lake lakes format formats column columnar vector "
         "search searches searched index indexes indexing table tables query queries fast faster fastest slow "
         "Café café naïve résumé UNIVERSITY universities organize organization zebra yak").split()


def random_texts(seed: int, n: int, nulls: bool = True) -> list:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        r = rng.random()
        if nulls and r < 0.03:
            out.append(None)
        elif nulls and r < 0.05:
            out.append("")
        else:
            out.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 25))))
    return out


def make(tmp_path: Path, name: str, texts: list, *, start: int = 0, **write) -> Path:
    uri = tmp_path / name
    ids = pa.array(range(start, start + len(texts)), pa.int64())
    lance.write_dataset(pa.table({"id": ids, "text": pa.array(texts, pa.string())}), uri, **write)
    return uri


def append(uri: Path, texts: list, start: int) -> None:
    ids = pa.array(range(start, start + len(texts)), pa.int64())
    lance.write_dataset(pa.table({"id": ids, "text": pa.array(texts, pa.string())}), uri, mode="append")


def theirs(uri: Path, query, **kw) -> list[tuple[int, float]]:
    t = lance.dataset(uri).to_table(full_text_query=query, columns=["id"], **kw)
    return list(zip(t["id"].to_pylist(), t["_score"].to_pylist()))


def ours(lance_cpp, uri: Path, *args) -> list[tuple[int, float]]:
    proc = lance_cpp.run_ok("search", uri, *args, "--columns", "id", "--format", "json")
    return [(r["id"], r["_score"]) for r in json_rows(proc.stdout)]


def json_rows(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def assert_same_hits(got, want, what="", everything=None):
    """Same scores in the same order, and the same rows for each score:
    pylance orders rows of equal score as its top-k heap leaves them, which
    is no order a reader can rely on. With a limit, the rows of the lowest
    score kept may be any of that score's rows in `everything` (pylance's
    answer without the limit)."""
    assert len(got) == len(want), f"{what}: {len(got)} hits vs pylance's {len(want)}\nours {got[:10]}\ntheirs {want[:10]}"
    for i, ((gid, gs), (wid, ws)) in enumerate(zip(got, want)):
        assert abs(gs - ws) <= 1e-4 * max(1.0, abs(ws)), f"{what}: hit {i}: score {gs} vs {ws}\nours {got[:20]}\ntheirs {want[:20]}"

    # Scores summed in another order may differ in the last bits: a group
    # is a run of scores within 1e-5 of its first (pylance's value).
    keys = []
    for _, s in want + (everything or []):
        if not any(abs(s - k) <= 1e-5 * max(1.0, abs(k)) for k in keys):
            keys.append(s)

    def key(s):
        return min(keys, key=lambda k: abs(k - s))

    def groups(hits):
        out = {}
        for rid, s in hits:
            out.setdefault(key(s), set()).add(rid)
        return out
    g, w = groups(got), groups(want)
    if everything is not None and got:
        last = key(got[-1][1])
        assert g.pop(last) <= groups(everything)[last], f"{what}: rows of the last score are not pylance's"
        w.pop(last)
    assert g == w, f"{what}: different rows\nours {got[:20]}\ntheirs {want[:20]}"


QUERIES = ["run", "quick brown fox", "the", "café naive", "universities organize", "zebra yak zebra",
           "jumping dogs sleep", "nothingmatches", "RUNNING Runs ran", "data lake format column vector search"]


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_match_queries_as_pylance(lance_cpp, tmp_path, version):
    uri = make(tmp_path, "ds", random_texts(1, 600), data_storage_version=version, max_rows_per_file=250)
    lance.dataset(uri).create_scalar_index("text", "INVERTED")
    for q in QUERIES:
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q), theirs(uri, q), q)
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q, "--k", "7"), theirs(uri, q, limit=7), q + " k=7",
                         everything=theirs(uri, q))
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q, "--operator", "and"),
                         theirs(uri, MatchQuery(q, "text", operator=Operator.AND)), q + " AND")


def test_filters_unindexed_rows_deletes_updates(lance_cpp, tmp_path):
    uri = make(tmp_path, "ds", random_texts(2, 400))
    lance.dataset(uri).create_scalar_index("text", "INVERTED")
    append(uri, random_texts(3, 150), 400)
    append(uri, random_texts(4, 50), 550)
    steps = [lambda ds: None,
             lambda ds: ds.delete("id % 7 = 0"),
             lambda ds: ds.update({"text": "'quick zebra runs'"}, where="id % 11 = 3"),
             lambda ds: ds.delete("id > 560")]
    for n, step in enumerate(steps):
        step(lance.dataset(uri))
        for q in QUERIES[:6]:
            what = f"step {n}: {q}"
            assert_same_hits(ours(lance_cpp, uri, "--full-text", q), theirs(uri, q), what)
            f = "id >= 100 AND id < 500"
            assert_same_hits(ours(lance_cpp, uri, "--full-text", q, "--filter", f, "--k", "20"),
                             theirs(uri, q, filter=f, limit=20, prefilter=True), what + " prefiltered",
                             everything=theirs(uri, q, filter=f, prefilter=True))
            # pylance's default: the best k of all rows, then the filter (k
            # where the ranking has no tie across it, which either side may
            # break its own way).
            ranking = theirs(uri, q)
            k = min(20, len(ranking))
            while 0 < k < len(ranking) and abs(ranking[k - 1][1] - ranking[k][1]) <= 1e-5 * ranking[k][1]:
                k -= 1
            k = k or len(ranking) or 20
            assert_same_hits(ours(lance_cpp, uri, "--full-text", q, "--filter", f, "--k", str(k), "--postfilter"),
                             theirs(uri, q, filter=f, limit=k), what + f" postfiltered k={k}")


def test_stable_row_ids(lance_cpp, tmp_path):
    uri = make(tmp_path, "ds", random_texts(5, 300), enable_stable_row_ids=True)
    lance.dataset(uri).create_scalar_index("text", "INVERTED")
    append(uri, random_texts(6, 80), 300)
    lance.dataset(uri).delete("id % 5 = 1")
    for q in QUERIES[:5]:
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q), theirs(uri, q), q)
    # An update keeps a row's id and moves the row to a new fragment, which
    # the index does not cover: the row answers with its new text only.
    lance.dataset(uri).update({"text": "'zebra zebra quick'"}, where="id % 13 = 2")
    for q in QUERIES[:6]:
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q), theirs(uri, q), "after update: " + q)
    # _rowid as pylance's.
    proc = lance_cpp.run_ok("search", uri, "--full-text", "run", "--with-row-id", "--columns", "id", "--format", "json")
    got = sorted(r["_rowid"] for r in json_rows(proc.stdout))
    want = sorted(lance.dataset(uri).to_table(full_text_query="run", with_row_id=True)["_rowid"].to_pylist())
    assert got == want


@pytest.mark.parametrize("params", [{}, {"stem": False, "remove_stop_words": False},
                                    {"base_tokenizer": "whitespace", "lower_case": False},
                                    {"base_tokenizer": "ngram"}, {"ascii_folding": False, "max_token_length": 5}])
def test_tokenizer_params_as_pylance(lance_cpp, tmp_path, params):
    uri = make(tmp_path, "ds", random_texts(7, 300))
    lance.dataset(uri).create_scalar_index("text", "INVERTED", **params)
    for q in QUERIES[:6]:
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q), theirs(uri, q), f"{params}: {q}")


def test_phrases_as_pylance(lance_cpp, tmp_path):
    texts = random_texts(8, 400) + ["the quick brown fox", "quick the brown", "brown quick fox", "quick brown the fox",
                                    "quick zebra brown yak fox", "quick zebra yak brown fox"]
    uri = make(tmp_path, "ds", texts)
    lance.dataset(uri).create_scalar_index("text", "INVERTED", with_position=True)
    append(uri, ["quick brown", "fox quick brown", "quick a brown", "quick yak brown zebra fox"], 406)
    for q in ["quick brown", "quick brown fox", "lazy dog", "run the", "the quick", "brown quick"]:
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q, "--phrase"), theirs(uri, PhraseQuery(q, "text")), q)
        # A quoted query string is a phrase, as pylance reads it.
        assert_same_hits(ours(lance_cpp, uri, "--full-text", f'"{q}"'), theirs(uri, f'"{q}"'), f'"{q}"')
        for slop in (1, 2):
            assert_same_hits(ours(lance_cpp, uri, "--full-text", q, "--phrase", "--slop", str(slop)),
                             theirs(uri, PhraseQuery(q, "text", slop=slop)), f"{q} slop {slop}")


def test_phrase_needs_positions(lance_cpp, tmp_path):
    uri = make(tmp_path, "ds", random_texts(9, 50))
    lance.dataset(uri).create_scalar_index("text", "INVERTED")
    with pytest.raises(Exception, match="position"):
        lance.dataset(uri).to_table(full_text_query=PhraseQuery("quick brown", "text"))
    proc = lance_cpp.run("search", uri, "--full-text", "quick brown", "--phrase")
    assert proc.returncode == 1 and "position" in proc.stderr


def test_refusals(lance_cpp, tmp_path):
    uri = make(tmp_path, "ds", random_texts(10, 20))
    proc = lance_cpp.run("search", uri, "--full-text", "run")
    assert proc.returncode == 1 and "INVERTED" in proc.stderr
    lance.dataset(uri).create_scalar_index("text", "INVERTED")
    proc = lance_cpp.run("search", uri, "--full-text", "run", "--fts-columns", "id")
    assert proc.returncode == 1 and "id" in proc.stderr


@pytest.mark.skipif(not FIXTURES_ROOT.exists(), reason=FIXTURES_MISSING)
def test_legacy_index_of_pylance_0_27(lance_cpp, tmp_path):
    uri = tmp_path / "legacy"
    shutil.copytree(FIXTURES_ROOT / "0.27.0" / "legacy_fts_index", uri)
    for q in ["frodo", "frodo happy", "puppy tail", "with a", "nothing"]:
        t = lance.dataset(uri).to_table(full_text_query=q)
        want = list(zip(t["text"].to_pylist(), t["_score"].to_pylist()))
        proc = lance_cpp.run_ok("search", uri, "--full-text", q, "--format", "json")
        got = [(r["text"], r["_score"]) for r in json_rows(proc.stdout)]
        assert [g[0] for g in got] == [w[0] for w in want], q
        assert all(abs(g[1] - w[1]) < 1e-4 for g, w in zip(got, want)), q


def test_optimized_index_partitions(lance_cpp, tmp_path):
    """pylance's optimize_indices adds a partition for appended rows (one
    index, part_0 and part_1): statistics and postings over both."""
    uri = make(tmp_path, "ds", random_texts(11, 1500), max_rows_per_file=400)
    lance.dataset(uri).create_scalar_index("text", "INVERTED", with_position=True)
    append(uri, random_texts(12, 300), 1500)
    lance.dataset(uri).optimize.optimize_indices()
    ds = lance.dataset(uri)
    assert len(list((uri / "_indices").glob("*/part_1_invert.lance"))) == 1
    append(uri, random_texts(13, 100), 1800)  # and rows no partition holds
    ds.delete("id % 9 = 4")
    for q in QUERIES:
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q), theirs(uri, q), q)
    for q in ["quick brown", "lazy dog sleep"]:
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q, "--phrase"), theirs(uri, PhraseQuery(q, "text")), q)
