"""`search --explain`: lance-cpp prints the plan of a full-text search instead
of its rows. Compared with pylance's scanner(full_text_query=...).explain_plan():
every scalar index pylance's plan names (`NAME(Type)`) is named by ours as
`NAME (Type)`, each INVERTED index searched is named `NAME (INVERTED)`, and
the unindexed fragments are searched flat exactly when pylance's plan has a
FlatMatchQuery."""
from __future__ import annotations

import re
import subprocess

import pyarrow as pa
import pytest

import lance

from conftest import lance_cpp_binary


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(lance_cpp_binary())] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120)


def _explain(uri, *args) -> str:
    proc = _run("search", uri, *args, "--explain")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _table(start: int, n: int) -> pa.Table:
    words = ["fox dog", "cat", "quick fox", "lazy dog", "data lake"]
    return pa.table({"id": list(range(start, start + n)),
                     "text": [words[i % 5] for i in range(start, start + n)],
                     "title": [words[(i * 3) % 5] for i in range(start, start + n)],
                     "cat": [f"c{i % 4}" for i in range(start, start + n)]})


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    uri = tmp_path_factory.mktemp("fts_explain") / "d"
    ds = lance.write_dataset(_table(0, 60), uri, max_rows_per_file=30)
    ds.create_scalar_index("text", "INVERTED", name="text_fts")
    ds.create_scalar_index("title", "INVERTED", name="title_fts")
    ds.create_scalar_index("id", "BTREE", name="id_idx")
    ds.create_scalar_index("cat", "BITMAP", name="cat_idx")
    indexed_version = ds.version
    ds = lance.write_dataset(_table(60, 10), uri, mode="append")  # fragment 2: no index covers it
    return uri, indexed_version


def _named_scalar(plan: str) -> set:
    return set(re.findall(r"@(\w+)\((\w+)\)", plan))


CASES = [
    ("fox", {}),
    ("fox", {"filter": "id > 10", "prefilter": True}),
    ("fox", {"filter": "cat = 'c1'", "prefilter": True}),
    ("fox", {"filter": "id > 10 AND cat = 'c2'", "prefilter": True}),
    ("fox", {"filter": "id > 10", "prefilter": False}),
]


@pytest.mark.parametrize("query,kw", CASES, ids=lambda c: str(c))
@pytest.mark.parametrize("indexed_only", [False, True], ids=["appended", "indexed"])
def test_plan_names_what_pylance_names(dataset, query, kw, indexed_only):
    uri, indexed_version = dataset
    ds = lance.dataset(uri, version=indexed_version) if indexed_only else lance.dataset(uri)
    pylance_plan = ds.scanner(full_text_query={"query": query, "columns": ["text"]}, **kw).explain_plan()
    args = ["--full-text", query, "--fts-columns", "text", "--version", ds.version]
    if "filter" in kw:
        args += ["--filter", kw["filter"]] + ([] if kw["prefilter"] else ["--postfilter"])
    ours = _explain(uri, *args)
    assert "text_fts (INVERTED), fragments=[0, 1]" in ours, ours
    assert "title_fts" not in ours, ours
    # Unindexed fragments are searched flat exactly where pylance does.
    assert ("FlatMatchQuery" in pylance_plan) == ("FlatSearch" in ours), f"{ours}\npylance's:\n{pylance_plan}"
    if not indexed_only:
        assert "FlatSearch: unindexed fragments=[2]" in ours, ours
    for name, kind in _named_scalar(pylance_plan):
        assert f"{name} ({kind})" in ours, f"{ours}\npylance's:\n{pylance_plan}"
    if "filter" in kw:
        assert ("Prefilter" if kw["prefilter"] else "Postfilter") in ours, ours
    # The plan, not rows: the same run without --explain gives the rows.
    rows = _run("search", uri, *args, "--format", "json")
    assert rows.returncode == 0 and "_score" in rows.stdout and "_score" not in ours


def test_multi_column_and_structured_queries(dataset):
    uri, _ = dataset
    ours = _explain(uri, "--full-text", "fox")  # every INVERTED column: a multi-match
    assert "MultiMatchQuery" in ours and "text_fts (INVERTED)" in ours and "title_fts (INVERTED)" in ours, ours
    pylance_plan = lance.dataset(uri).scanner(full_text_query="fox").explain_plan()
    assert "FlatMatchQuery" in pylance_plan and ours.count("FlatSearch: unindexed fragments=[2]") == 2, ours
    q = ('{"boolean": {"must": [{"match": {"column": "text", "terms": "fox"}}], '
         '"must_not": [{"match": {"column": "title", "terms": "cat"}}]}}')
    ours = _explain(uri, "--fts-query-json", q, "--filter", "cat = 'c1'")
    assert "must:" in ours and "must_not:" in ours and "title_fts (INVERTED)" in ours, ours
    assert "cat_idx (Bitmap)" in ours, ours


def test_refused_without_index(dataset):
    uri, _ = dataset
    proc = _run("search", uri, "--full-text", "fox", "--fts-columns", "cat", "--explain")
    assert proc.returncode != 0 and "has no INVERTED index" in proc.stderr, proc.stderr
