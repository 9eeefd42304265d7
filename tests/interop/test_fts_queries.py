"""Structured full-text queries: lance-cpp's `search --fts-query-json` (and
--fts-columns, --boost, --fuzziness) gives pylance 14's rows and scores (to
1e-4) for MultiMatchQuery, BooleanQuery, BoostQuery and MatchQuery's boost,
operator and fuzziness, over pylance's INVERTED indices and lance-cpp's,
with deleted rows, optimized (two-partition) indices and appended rows no
index covers (searched flat)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

import lance
from lance.query import (BooleanQuery, BoostQuery, FullTextOperator as Operator, MatchQuery, MultiMatchQuery,
                         Occur, PhraseQuery)

from test_fts_search import assert_same_hits, json_rows, random_texts

FUZZY_WORDS = "cat cats bat hat car cart card care dog dogs fog log quick quirk quack zebra".split()


def make2(tmp_path: Path, name: str, n: int, seed: int) -> Path:
    uri = tmp_path / name
    lance.write_dataset(table2(0, n, seed), uri, max_rows_per_file=300)
    return uri


def table2(start: int, n: int, seed: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "a": pa.array(random_texts(seed, n), pa.string()),
                     "b": pa.array(random_texts(seed + 100, n), pa.string())})


def index(lance_cpp, uri: Path, builder: str, column: str, positions: bool = False) -> None:
    if builder == "pylance":
        lance.dataset(uri).create_scalar_index(column, "INVERTED", with_position=positions)
    else:
        lance_cpp.run_ok("create-index", uri, column, "--type", "INVERTED", *(["--with-position"] if positions else []))


def theirs(uri: Path, query, **kw) -> list[tuple[int, float]]:
    t = lance.dataset(uri).to_table(full_text_query=query, columns=["id", "_score"], **kw)
    return list(zip(t["id"].to_pylist(), t["_score"].to_pylist()))


def ours(lance_cpp, uri: Path, *args) -> list[tuple[int, float]]:
    proc = lance_cpp.run_ok("search", uri, *args, "--columns", "id", "--format", "json")
    return [(r["id"], r["_score"]) for r in json_rows(proc.stdout)]


# pylance's query objects and the JSON lance-cpp reads for each.
def m(terms, column, **kw):
    j = {"terms": terms, "column": column}
    if "operator" in kw:
        j["operator"] = kw["operator"].value
    j.update({k: v for k, v in kw.items() if k != "operator"})
    return MatchQuery(terms, column, **kw), {"match": j}


def ph(terms, column, slop=0):
    return PhraseQuery(terms, column, slop=slop), {"phrase": {"terms": terms, "column": column, "slop": slop}}


def mm(terms, columns, boosts=None, operator=Operator.OR):
    j = {"query": terms, "columns": columns, "operator": operator.value}
    if boosts is not None:
        j["boost"] = boosts
    return MultiMatchQuery(terms, columns, boosts=boosts, operator=operator), {"multi_match": j}


def boolean(*clauses):
    j = {"should": [], "must": [], "must_not": []}
    for occur, (_, qj) in clauses:
        j[occur.value.lower()].append(qj)
    return BooleanQuery([(occur, q) for occur, (q, _) in clauses]), {"boolean": j}


def boost(pos, neg, negative_boost=0.5):
    return (BoostQuery(pos[0], neg[0], negative_boost=negative_boost),
            {"boost": {"positive": pos[1], "negative": neg[1], "negative_boost": negative_boost}})


def check(lance_cpp, uri, pair, what, k=None):
    query, qj = pair
    args = ["--fts-query-json", json.dumps(qj)]
    everything = theirs(uri, query)
    assert_same_hits(ours(lance_cpp, uri, *args), everything, what)
    if k is not None:
        assert_same_hits(ours(lance_cpp, uri, *args, "--k", str(k)), theirs(uri, query, limit=k), f"{what} k={k}",
                         everything=everything)


def compound_queries():
    return {
        "multi": mm("quick brown fox", ["a", "b"]),
        "multi boosts": mm("run zebra the", ["a", "b"], boosts=[2.0, 0.5]),
        "multi and": mm("quick fox", ["a", "b"], operator=Operator.AND),
        "must must": boolean((Occur.MUST, m("quick", "a")), (Occur.MUST, m("fox dog", "b"))),
        "should should": boolean((Occur.SHOULD, m("zebra", "a")), (Occur.SHOULD, m("yak run", "a"))),
        "must should not": boolean((Occur.MUST, m("data lake", "a")), (Occur.SHOULD, m("format", "b")),
                                   (Occur.MUST_NOT, m("the", "a"))),
        "should not": boolean((Occur.SHOULD, m("cat dog", "b")), (Occur.MUST_NOT, m("cats", "b")),
                              (Occur.MUST_NOT, m("sleep", "a"))),
        "nested": boolean((Occur.MUST, mm("fast search", ["a", "b"])),
                          (Occur.SHOULD, boost(m("index", "a"), m("table", "a"), 0.3)),
                          (Occur.MUST_NOT, boolean((Occur.MUST, m("slow", "b")), (Occur.MUST, m("query", "b"))))),
        "boost": boost(m("quick brown", "a"), m("fox", "a")),
        "boost multi": boost(mm("run", ["a", "b"]), m("runs running", "b"), 1.5),
        "match boost and": m("quick brown", "a", boost=2.5, operator=Operator.AND),
    }


@pytest.mark.parametrize("builder", ["pylance", "lance-cpp"])
def test_compound_queries_as_pylance(lance_cpp, tmp_path, builder):
    uri = make2(tmp_path, "ds", 700, 21)
    index(lance_cpp, uri, builder, "a")
    index(lance_cpp, uri, builder, "b")
    for step in range(3):
        for name, pair in compound_queries().items():
            check(lance_cpp, uri, pair, f"{builder} step {step}: {name}", k=9)
        if step == 0:
            lance.dataset(uri).delete("id % 6 = 1")
        elif step == 1:
            lance.write_dataset(table2(700, 120, 22), uri, mode="append")  # rows no index covers


def test_multiple_columns_on_the_cli(lance_cpp, tmp_path):
    uri = make2(tmp_path, "ds", 500, 23)
    lance.dataset(uri).create_scalar_index("a", "INVERTED")
    lance.dataset(uri).create_scalar_index("b", "INVERTED")
    lance.write_dataset(table2(500, 60, 24), uri, mode="append")
    lance.dataset(uri).delete("id % 5 = 2")
    for q in ["quick brown fox", "zebra", "the data lake"]:
        # A query string over every indexed column is pylance's multi-match.
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q), theirs(uri, q), q)
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q, "--fts-columns", "a,b", "--k", "8"),
                         theirs(uri, MultiMatchQuery(q, ["a", "b"]), limit=8), q + " k=8",
                         everything=theirs(uri, MultiMatchQuery(q, ["a", "b"])))
        assert_same_hits(ours(lance_cpp, uri, "--full-text", q, "--fts-columns", "b", "--boost", "1.75"),
                         theirs(uri, MatchQuery(q, "b", boost=1.75)), q + " boost")
    # Filters apply to every clause (prefilter) or to the best k (postfilter).
    q = BooleanQuery([(Occur.SHOULD, MatchQuery("quick", "a")), (Occur.SHOULD, MatchQuery("fox", "b"))])
    qj = json.dumps({"boolean": {"should": [{"match": {"terms": "quick", "column": "a"}},
                                            {"match": {"terms": "fox", "column": "b"}}]}})
    f = "id >= 100 AND id < 450"
    assert_same_hits(ours(lance_cpp, uri, "--fts-query-json", qj, "--filter", f),
                     theirs(uri, q, filter=f, prefilter=True), "boolean prefiltered")
    ranking = theirs(uri, q)
    k = 30
    while abs(ranking[k - 1][1] - ranking[k][1]) <= 1e-5 * ranking[k][1]:
        k -= 1
    assert_same_hits(ours(lance_cpp, uri, "--fts-query-json", qj, "--filter", f, "--k", str(k), "--postfilter"),
                     theirs(uri, q, filter=f, limit=k), "boolean postfiltered")


def fuzzy_texts(seed: int, n: int) -> list:
    import random
    rng = random.Random(seed)
    return [" ".join(rng.choice(FUZZY_WORDS) for _ in range(rng.randint(1, 7))) for _ in range(n)]


def fuzzy_table(start: int, n: int, seed: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "a": pa.array(fuzzy_texts(seed, n), pa.string())})


FUZZY = [("car", {"fuzziness": 1}), ("cat", {"fuzziness": 2}), ("cat car", {"fuzziness": 1}),
         ("cat cat dog", {"fuzziness": 1}), ("quik", {"fuzziness": 1}), ("quick", {"fuzziness": 2}),
         ("car", {"fuzziness": 1, "max_expansions": 2}), ("cat car", {"fuzziness": 1, "max_expansions": 2}),
         ("cat dog", {"fuzziness": 1, "max_expansions": 3}), ("cat", {"fuzziness": 1, "prefix_length": 1}),
         ("care", {"fuzziness": 2, "prefix_length": 2}), ("cat dog", {"fuzziness": 1, "operator": Operator.AND}),
         ("car zebr", {"fuzziness": 1, "operator": Operator.AND}), ("cat", {"fuzziness": 1, "boost": 3.0}),
         ("CAR Dogs", {"fuzziness": 1}), ("cats", {"fuzziness": None}), ("xyzzy", {"fuzziness": 1})]


@pytest.mark.parametrize("builder", ["pylance", "lance-cpp"])
def test_fuzzy_matches_as_pylance(lance_cpp, tmp_path, builder):
    uri = tmp_path / "ds"
    lance.write_dataset(fuzzy_table(0, 400, 31), uri, max_rows_per_file=150)
    index(lance_cpp, uri, builder, "a")
    lance.write_dataset(fuzzy_table(400, 150, 32), uri, mode="append")

    def run_all(what):
        for terms, kw in FUZZY:
            check(lance_cpp, uri, m(terms, "a", **kw), f"{builder} {what}: {terms} {kw}", k=6)
            if kw.get("fuzziness") is None or set(kw) - {"fuzziness", "max_expansions", "prefix_length", "boost"}:
                continue
            flags = [f"--{k.replace('_', '-')}" for k in kw for _ in [0]]
            args = [x for k, v in kw.items() for x in (f"--{k.replace('_', '-')}", str(v))]
            assert_same_hits(ours(lance_cpp, uri, "--full-text", terms, *args),
                             theirs(uri, MatchQuery(terms, "a", **kw)), f"{builder} {what} flags: {terms} {kw}")

    run_all("indexed + flat")
    # Two partitions (optimize) with different token sets, then deletions.
    if builder == "pylance":
        lance.dataset(uri).optimize.optimize_indices()
    else:
        lance_cpp.run_ok("optimize-indices", uri)
    lance.write_dataset(fuzzy_table(550, 80, 33), uri, mode="append")
    lance.dataset(uri).delete("id % 7 = 3")
    run_all("optimized")


def test_refused_and_invalid_queries(lance_cpp, tmp_path):
    uri = make2(tmp_path, "ds", 50, 41)
    lance.dataset(uri).create_scalar_index("a", "INVERTED")
    lance.dataset(uri).create_scalar_index("b", "INVERTED")
    cases = [
        ({"combined_fields": {"query": "fox", "columns": ["a", "b"]}}, "combined_fields"),
        ({"match": {"terms": "fox", "column": "a", "document_granularity": "row"}}, "document_granularity"),
        ({"boolean": {"must_not": [{"match": {"terms": "fox", "column": "a"}}]}}, "should/must"),
        ({"phrase": {"terms": "quick fox"}}, "column"),
        ({"multi_match": {"query": "fox", "columns": ["a", "b"], "boost": [1.0]}}, "boost"),
    ]
    for qj, word in cases:
        proc = lance_cpp.run("search", uri, "--fts-query-json", json.dumps(qj))
        assert proc.returncode != 0 and word in proc.stderr, (qj, proc.stderr)
    with pytest.raises(Exception, match="should/must"):
        lance.dataset(uri).to_table(full_text_query=BooleanQuery([(Occur.MUST_NOT, MatchQuery("fox", "a"))]))
    proc = lance_cpp.run("search", uri, "--fts-query-json", "{not json")
    assert proc.returncode == 2
