"""NGRAM indices (contains / starts_with / LIKE) between pylance and lance-cpp.

pylance builds an NGRAM index on text with nulls, empty and short strings,
punctuation, mixed case and non-ASCII words; lance-cpp's indexed scans and
counts must give exactly its own full scan's rows and pylance's, and use the
index exactly where pylance's explain_plan does, also after appends and
deletes by either side. lance-cpp builds the index (`create-index --type
NGRAM`) in pylance's layout: the same tokens and posting lists, manifest
entry and transaction, and pylance lists and uses it with its unindexed
answers."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lance
from lance.file import LanceFileReader
from test_scalar_index_build import _assert_same_results, _entries, _txn_view
from test_scalar_index_read import _check, _ok, _run

pytestmark = pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")

ROWS = 600
ROWS_PER_FILE = 250
ASCII_WORDS = ["hello", "Hello", "HELLO", "world", "abc", "abcd", "ab", "a", "", "x-y", "r2d2", "C3PO", "zzz",
               "foo_bar", "bar", "wor ld", "hel lo", "12345", "LLo"]
LATIN_WORDS = ["café", "Ünïcode", "Straße", "naïve", "résumé", "ŒUVRE", "İstanbul"]
OTHER_WORDS = LATIN_WORDS + ["日本語", "Ωmega", "ΣΊΣΥΦΟΣ"]

FILTERS = [
    "contains(s, 'llo')", "contains(s, 'ell')", "contains(s, 'Hel')", "contains(s, 'hello world')",
    "contains(s, 'abcd')", "contains(s, '2d2')", "contains(s, 'qqq')", "contains(s, 'ab')", "contains(s, 'a b')",
    "contains(s, 'caf')", "contains(s, 'café')", "contains(s, 'é')", "contains(s, 'Straße')",
    "s LIKE '%orl%'", "s LIKE 'Hel%'", "s LIKE '%ab_d%'", "s LIKE '%llo'", "s ILIKE '%LLO%'",
    "s NOT LIKE '%llo%'", "starts_with(s, 'wor')", "starts_with(s, 'ab')", "ends_with(s, 'rld')",
    "NOT contains(s, 'llo')", "contains(s, 'llo') AND id > 100", "contains(s, 'llo') AND contains(s, 'wor')",
    "contains(s, 'llo') OR contains(s, 'zzz')", "contains(s, 'llo') OR id < 5", "s IS NULL", "s = 'abc'",
    "s LIKE '%foo\\_bar%'", "s LIKE '%ŒUV%'", "contains(s, 'İst')", "contains(s, 'ΣΊΣ')", "s LIKE '%日本語%'",
    "contains(s, 'résumé')", "contains(s, 'RESUME')", "s LIKE 'hello'", "s LIKE 'hel_o'", "s LIKE 'abc\\%d%'",
]


def _text(seed: int, start: int, n: int, words: list[str]) -> pa.Table:
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n):
        if rng.random() < 0.1:
            values.append(None)
            continue
        k = int(rng.integers(1, 4))
        values.append(" ".join(rng.choice(words, k)))
    return pa.table({"id": pa.array(np.arange(start, start + n), pa.int64()), "s": pa.array(values, pa.string())})


def _write(uri: Path, table: pa.Table, version: str, stable: bool) -> Path:
    lance.write_dataset(table, uri, data_storage_version=version, max_rows_per_file=ROWS_PER_FILE,
                        enable_stable_row_ids=stable)
    return uri


VARIANTS = [("2.0", False), ("2.1", True), ("2.2", False)]


@pytest.fixture(scope="module", params=VARIANTS, ids=lambda v: f"v{v[0]}-stable{int(v[1])}")
def pylance_indexed(request, tmp_path_factory):
    version, stable = request.param
    uri = _write(tmp_path_factory.mktemp("ngram") / "ds", _text(1, 0, ROWS, ASCII_WORDS + OTHER_WORDS), version,
                 stable)
    lance.dataset(uri).create_scalar_index("s", "NGRAM")
    return uri


@pytest.mark.parametrize("filt", FILTERS)
def test_pylance_index_used_by_lance_cpp(tmp_path, pylance_indexed, filt):
    explain, pylance_plan = _check(tmp_path, pylance_indexed, filt)
    if "ScalarIndexQuery" in pylance_plan:
        assert "s_idx (NGram)" in explain, explain
        assert "rechecked" in explain, f"{filt}: ngram candidates must be rechecked\n{explain}"


def test_after_appends_and_deletes(tmp_path):
    words = ASCII_WORDS + OTHER_WORDS
    uri = _write(tmp_path / "ds", _text(2, 0, ROWS, words), "2.1", True)
    lance.dataset(uri).create_scalar_index("s", "NGRAM")
    lance.write_dataset(_text(3, ROWS, 100, words), uri, mode="append")
    _ok("delete", uri, "contains(s, 'world') AND id % 3 = 0")
    lance.dataset(uri).delete("id % 7 = 0")
    for filt in ["contains(s, 'llo')", "contains(s, 'wor')", "s LIKE '%abc%'", "contains(s, 'café')"]:
        _check(tmp_path, uri, filt)
    # pylance folds the appended rows into its index (a new segment).
    lance.dataset(uri).optimize.optimize_indices()
    for filt in ["contains(s, 'llo')", "s LIKE '%abc%'"]:
        _check(tmp_path, uri, filt)


def _postings_file(uri: Path) -> Path:
    ds = lance.dataset(uri)
    (index,) = [i for i in ds.list_indices() if i["name"] == "s_idx"]
    files = sorted(p.name for p in (Path(uri) / "_indices" / index["uuid"]).iterdir())
    assert files == ["ngram_postings.lance"]
    return Path(uri) / "_indices" / index["uuid"] / "ngram_postings.lance"


def _postings(uri: Path) -> tuple:
    reader = LanceFileReader(str(_postings_file(uri)))
    meta = reader.metadata()
    return (meta.major_version, meta.minor_version), meta.schema, reader.read_all().to_table()


@pytest.mark.parametrize("version,stable", [("2.0", True), ("2.1", False), ("2.2", True)])
def test_lance_cpp_builds_pylance_layout(tmp_path, version, stable):
    table = _text(4, 0, ROWS, ASCII_WORDS + LATIN_WORDS)
    ours, theirs = _write(tmp_path / "ours", table, version, stable), _write(tmp_path / "theirs", table, version,
                                                                              stable)
    for uri in (ours, theirs):  # deleted rows are left out of both
        lance.dataset(uri).delete("id % 11 = 0")
    _ok("create-index", ours, "s", "--type", "NGRAM")
    lance.dataset(theirs).create_scalar_index("s", "NGRAM")
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert _entries(a) == _entries(b)
    assert [_txn_view(t) for t in a.get_transactions(1)] == [_txn_view(t) for t in b.get_transactions(1)]
    (va, sa, ta), (vb, sb, tb) = _postings(ours), _postings(theirs)
    assert va == vb
    assert sa.equals(sb, check_metadata=True), f"{sa}\nvs\n{sb}"
    assert ta.equals(tb), "tokens or posting lists differ from pylance's"
    assert _postings_file(ours).read_bytes() == _postings_file(theirs).read_bytes(), "file bytes differ"
    for filt in ["contains(s, 'llo')", "contains(s, 'r2d')", "s LIKE '%orl%'", "starts_with(s, 'Hel')",
                 "contains(s, 'a b')"]:
        _assert_same_results(ours, filt)
    # pylance and lance-cpp keep using it after an append it does not cover.
    lance.write_dataset(_text(5, ROWS, 50, ASCII_WORDS), ours, mode="append")
    for filt in ["contains(s, 'llo')", "s LIKE 'abc%'"]:
        _assert_same_results(ours, filt)
        _check(tmp_path, ours, filt)


def test_empty_and_all_null_columns(tmp_path):
    for name, values in (("empty", []), ("nulls", [None, None, None])):
        table = pa.table({"id": pa.array(range(len(values)), pa.int64()), "s": pa.array(values, pa.string())})
        ours, theirs = _write(tmp_path / f"o-{name}", table, "2.1", False), _write(tmp_path / f"t-{name}", table,
                                                                                   "2.1", False)
        _ok("create-index", ours, "s", "--type", "NGRAM")
        lance.dataset(theirs).create_scalar_index("s", "NGRAM")
        (va, sa, ta), (vb, sb, tb) = _postings(ours), _postings(theirs)
        assert va == vb and sa.equals(sb, check_metadata=True) and ta.equals(tb), name
        if values:
            _check(tmp_path, ours, "contains(s, 'abc')")


def test_build_refusals(tmp_path):
    table = pa.table({"id": pa.array([1, 2], pa.int64()), "s": pa.array(["abc", "café 日本"]),
                      "b": pa.array([b"abc", b"x"])})
    uri = _write(tmp_path / "ds", table, "2.1", False)
    proc = _run("create-index", uri, "s", "--type", "NGRAM")
    assert proc.returncode == 1 and "past U+017F" in proc.stderr and "column s" in proc.stderr, proc.stderr
    proc = _run("create-index", uri, "b", "--type", "NGRAM")
    assert proc.returncode == 1 and "NGRAM index column b must be a string" in proc.stderr, proc.stderr
    with pytest.raises(TypeError, match="NGRAM index column b must be a string"):
        lance.dataset(uri).create_scalar_index("b", "NGRAM")
    proc = _run("create-index", uri, "s", "--type", "NGRAM", "--with-position")
    assert proc.returncode == 2 and "--with-position does not apply to a NGRAM index" in proc.stderr, proc.stderr
    assert lance.dataset(uri).version == 1


def test_fold_table_matches_pylance(tmp_path):
    """Every character lance-cpp folds (U+0080..U+017F), between letters and
    at the ends of a value, tokenized as pylance's index tokenizes it."""
    chars = [chr(c) for c in range(0x80, 0x180)]
    values = [f"qq{c}qq" for c in chars] + [f"{c}{c}{c}" for c in chars] + ["".join(chars)]
    table = pa.table({"id": pa.array(range(len(values)), pa.int64()), "s": pa.array(values, pa.string())})
    ours, theirs = _write(tmp_path / "ours", table, "2.1", False), _write(tmp_path / "theirs", table, "2.1", False)
    _ok("create-index", ours, "s", "--type", "NGRAM")
    lance.dataset(theirs).create_scalar_index("s", "NGRAM")
    (_, _, ta), (_, _, tb) = _postings(ours), _postings(theirs)
    assert ta["tokens"].to_pylist() == tb["tokens"].to_pylist()
    assert ta.equals(tb), "posting lists differ from pylance's"


@pytest.mark.parametrize("first", ["BTREE", "NGRAM"])
def test_ngram_beside_another_index_on_the_column(tmp_path, first):
    """pylance plans with the first index of a column only; so does lance-cpp."""
    uri = _write(tmp_path / "ds", _text(6, 0, 300, ASCII_WORDS), "2.1", False)
    ds = lance.dataset(uri)
    for kind in (first, "NGRAM" if first == "BTREE" else "BTREE"):
        ds.create_scalar_index("s", kind, name=f"s_{kind.lower()}")
    for filt in ["contains(s, 'llo')", "s = 'abc'", "s = 'abc' AND contains(s, 'abc')",
                 "s = 'abc' OR contains(s, 'wor')"]:
        _check(tmp_path, uri, filt)


def test_large_string_column(tmp_path):
    t = _text(7, 0, 200, ASCII_WORDS + LATIN_WORDS)
    table = t.set_column(1, "s", t["s"].cast(pa.large_string()))
    ours, theirs = _write(tmp_path / "ours", table, "2.1", True), _write(tmp_path / "theirs", table, "2.1", True)
    _ok("create-index", ours, "s", "--type", "NGRAM")
    lance.dataset(theirs).create_scalar_index("s", "NGRAM")
    (_, _, ta), (_, _, tb) = _postings(ours), _postings(theirs)
    assert ta.equals(tb)
    for uri in (ours, theirs):
        for filt in ["contains(s, 'llo')", "s LIKE '%café%'"]:
            _check(tmp_path, uri, filt)


def test_spilled_build_equals_pylance(tmp_path):
    """With a small memory budget the postings are spilled per run of rows
    and merged by token: the same file as pylance's, the spill files gone."""
    import os
    import subprocess
    from conftest import lance_cpp_binary

    table = _text(8, 0, ROWS, ASCII_WORDS + LATIN_WORDS)
    ours, theirs = _write(tmp_path / "ours", table, "2.1", True), _write(tmp_path / "theirs", table, "2.1", True)
    spill_dir = tmp_path / "tmp"
    spill_dir.mkdir()
    env = dict(os.environ, LANCE_CPP_INDEX_SORT_RUN_ROWS="100", TMPDIR=str(spill_dir))
    proc = subprocess.run([str(lance_cpp_binary()), "create-index", str(ours), "s", "--type", "NGRAM"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert list(spill_dir.iterdir()) == []
    lance.dataset(theirs).create_scalar_index("s", "NGRAM")
    (_, _, ta), (_, _, tb) = _postings(ours), _postings(theirs)
    assert ta.equals(tb)
    _assert_same_results(ours, "contains(s, 'llo')")
