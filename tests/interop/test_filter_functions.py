"""List and string predicates in filters (array_has and its aliases, array_has_any,
array_has_all, contains, starts_with, ends_with, LIKE / ILIKE): lance-cpp's scan and
count against pylance's `to_table(filter=...)` and `count_rows(filter=...)` on a
dataset pylance writes, nulls everywhere (null lists, null elements, null needles,
empty lists), and deletes, an update and a merge-insert's delete-by-source through
such filters compared with pylance's own."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from conftest import lance_cpp_binary


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(lance_cpp_binary())] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=120)


def _table() -> pa.Table:
    nan = float("nan")
    return pa.table({
        "id": pa.array(range(10), pa.int64()),
        "li": pa.array([[1, 2], [3], [], None, [None, 1], [None], [2, 2, 5], [7], [-1, 0], [4, 5, 6]],
                       pa.list_(pa.int32())),
        "ll": pa.array([[10, 20], None, [30], [], [None], [20, 20], [10, None, 40], [5], [], [1]],
                       pa.large_list(pa.int64())),
        "ls": pa.array([["a", "b"], ["c"], [], None, [None, "a"], [None], ["B", "b"], ["x"], [""], ["1", "2"]],
                       pa.list_(pa.string())),
        "lls": pa.array([["apple"], ["Apple", "pie"], None, [], [None], ["pie", "apple"], ["x"], ["y", None],
                         ["apple", "pie"], [""]], pa.large_list(pa.large_string())),
        "fl": pa.array([[1, 2], [3, 4], [5, 6], None, [None, 1], [1, None], [2, 2], [7, 8], [0, 0], [None, None]],
                       pa.list_(pa.int64(), 2)),
        "lf": pa.array([[1.5, 2.0], [nan], [-0.0], [0.0], None, [None, 1.5], [], [float("inf")], [2.0], [1.0]],
                       pa.list_(pa.float64())),
        "lb": pa.array([[True], [False], [True, False], None, [None], [], [True, None], [False, False], [], [True]],
                       pa.list_(pa.bool_())),
        "s": pa.array(["apple", "Banana", "", None, "a_b%c", "APPLE pie", "cherry", "x\\y", "pineapple", "ban"]),
        "u": pa.array(["Émile", "émile", "STRASSE", "straße", "ǅ", None, "x", "", "É", "e"]),
        "n": pa.array([1, None, 3, 1, None, 2, 5, 7, 0, None], pa.int32()),
        "lu": pa.array([[1, 2 ** 64 - 1], [3], None, [None], [], [2 ** 63], [0], [5, 5], [1], [9]],
                       pa.list_(pa.uint64())),
        "big": pa.array(["apple", "Banana", "", None, "a_b%c", "APPLE pie", "cherry", "x\\y", "pineapple", "ban"],
                        pa.large_string()),
        "bin": pa.array([b"\x01", b"\x02", b"", None, b"\x02\x03", b"\xff", b"\x00", b"\x01", None, b"ab"],
                        pa.binary()),
        "lbin": pa.array([b"\x01", b"\x03", b"", None, b"\x02\x03", b"\xff", None, b"\x01", b"\x00", b"ab"],
                         pa.large_binary()),
        "fsb": pa.array([b"\x01\x01", b"\x02\x02", b"\x00\x00", None, b"\x02\x03", b"\xff\xff", b"ab", b"ab",
                         None, b"\x01\x02"], pa.binary(2)),
    })


# Filters where lance-cpp deliberately refuses what pylance runs, and why.
REFUSED_HERE = {
    "array_has_any(li, li)": "the second list must be a literal",
    "array_has_all(li, li)": "the second list must be a literal",
}

LIST_FILTERS = [
    # array_has and its aliases
    "array_has(li, 1)", "array_contains(li, 1)", "list_has(li, 1)", "list_contains(li, 1)",
    "ARRAY_HAS(li, 2)", "Array_Contains(ll, 20)", "array_has(`li`, 1)",
    "array_has(li, NULL)", "array_has(li, 1) IS NULL", "NOT array_has(li, 1)", "array_has(li, NULL) IS NULL",
    "array_has(li, -1)", "array_has(li, 1 + 0)", "array_has(li, 1.5)", "array_has(li, 3000000000)",
    "array_has(ll, 20)", "array_has(ll, 20) IS NULL", "array_has(ls, 'a')", "array_has(ls, 'A')",
    "array_has(ls, '')", "array_has(lls, 'apple')", "array_has(lls, 'apple') IS NULL",
    "array_has(fl, 1)", "NOT array_has(fl, 1)", "array_has(lf, 1.5)", "array_has(lf, 2)",
    "array_has(lb, TRUE)", "NOT array_has(lb, FALSE)",
    "array_has(li, id)", "array_has(li, n)", "array_has(li, n) IS NULL", "NOT array_has(li, n)",
    "array_has(ll, id * 10)", "array_has(ll, n * 10)", "array_has(fl, n)", "array_has(lf, n + 0.5)",
    "array_has(ls, s)", "array_has(lls, big)", "array_has(ls, big)", "array_has(lb, n > 2)",
    "array_has(NULL, 1)", "array_has(li, 1) AND id > 2", "array_has(li, 1) OR array_has(ls, 'c')",
    # array_has_any
    "array_has_any(li, [1, 7])", "list_has_any(li, [1])", "arrays_overlap(li, [5])",
    "array_has_any(li, [])", "array_has_any(li, []) IS NULL", "array_has_any(li, [NULL])",
    "array_has_any(li, [NULL]) IS NULL", "array_has_any(li, [1, NULL])", "NOT array_has_any(li, [1, 7])",
    "array_has_any(li, NULL) IS NULL", "array_has_any(li, [1.5, 2])", "array_has_any(li, ['1'])",
    "array_has_any(li, [1, '2'])", "array_has_any(li, [-1])", "array_has_any(ll, [20, 30])",
    "array_has_any(ll, [NULL, 5])", "array_has_any(ls, ['a'])", "array_has_any(ls, ['x', 'c'])",
    "array_has_any(ls, [NULL])", "array_has_any(lls, ['pie'])", "array_has_any(lls, ['pie']) IS NULL",
    "array_has_any(fl, [1])", "array_has_any(fl, [NULL])", "array_has_any(lf, [0.0])",
    "array_has_any(lf, [-0.0])", "array_has_any(lb, [FALSE])", "array_has_any(lb, [NULL, TRUE])",
    # array_has_all
    "array_has_all(li, [1, 2])", "list_has_all(li, [2])", "array_has_all(li, [])",
    "array_has_all(li, []) IS NULL", "array_has_all(li, [NULL])", "array_has_all(li, [1, NULL])",
    "NOT array_has_all(li, [1, NULL])", "array_has_all(li, [2, 2])", "array_has_all(li, [2, 5])",
    "array_has_all(li, [1, 2]) IS NULL", "array_has_all(ll, [20])", "array_has_all(ll, [10, 40])",
    "array_has_all(ls, ['a', 'b'])", "array_has_all(ls, [])", "array_has_all(lls, ['pie', 'apple'])",
    "array_has_all(fl, [1, 2])", "array_has_all(fl, [NULL])", "array_has_all(lf, [1.5, 2])",
    "array_has_all(lb, [TRUE, FALSE])",
    # uint64 lists meet int64 lists as decimal(20, 0)
    "array_has_any(lu, [1, 3])", "array_has_any(lu, [-1])", "array_has_all(lu, [1, 18446744073709551615])",
    "array_has_any(lu, [9223372036854775808])", "array_has(lu, 18446744073709551615)",
]

STRING_FILTERS = [
    "contains(s, 'a')", "contains(s, 'A')", "contains(s, '')", "contains(s, NULL)",
    "contains(s, NULL) IS NULL", "contains(s, 'a') IS NULL", "NOT contains(s, 'an')", "contains(big, 'an')",
    "contains(s, '%')", "contains(s, '_')", "contains(s, '\\')", "contains(s, \"a\")", "CONTAINS(s, 'pp')",
    "contains(NULL, 'a')", "contains('abc', 'a')",
    "contains(s, s)", "contains(big, s)", "contains(s, big) IS NULL", "starts_with(big, s)",
    "starts_with('pineapple pie', s)", "ends_with(s, big)", "ends_with('x', s)",
    "contains(s, 'a' || s)",
    "starts_with(s, 'a')", "starts_with(s, 'A')", "starts_with(s, '')", "starts_with(s, NULL)",
    "starts_with(big, 'APP')", "NOT starts_with(s, 'a')", "starts_with(s, 'a' || 'p')", "Starts_With(s, 'ban')",
    "ends_with(s, 'e')", "ends_with(s, '')", "ends_with(big, 'pie')", "NOT ends_with(s, 'a')",
    "s LIKE 'a%'", "s LIKE NULL", "s ILIKE 'A%'", "s LIKE 'a\\_b%'", "s LIKE 'a\\_b%' ESCAPE '\\'",
    "s NOT LIKE 'a%'", "s LIKE '%'", "s NOT ILIKE '%pie'", "s LIKE '_an%'", "big LIKE '%apple'",
    "big ILIKE '%APPLE%'", "s LIKE 'x\\\\y'", "s LIKE ''",
    # non-ASCII: one character per _, case folded character by character
    "u ILIKE 'émile'", "u ILIKE 'É%'", "u ILIKE 'straße'", "u ILIKE 'strasse'", "u ILIKE 'ǆ'",
    "u LIKE '_mile'", "u ILIKE '_'", "u NOT ILIKE 'é%'", "contains(u, 'É')", "starts_with(u, 'é')",
    "ends_with(u, 'ß' || 'e')",
]

# Binary literals X'..' (Lance's parser: an odd digit count takes a leading
# 0, anything but hex digits makes a NULL).
BINARY_FILTERS = [
    "bin = X'02'", "bin = x'0203'", "bin = X''", "lbin = X'01'", "fsb = X'0202'", "bin IN (X'01', X'FF')",
    "bin > X'01'", "bin < X'02'", "bin != X'02'", "bin = lbin", "X'01' = bin", "lbin IN (X'02', X'0203')",
    "fsb > X'0100'", "bin = X'1'", "bin = X'203'", "bin = X'0'", "bin = X'zz'", "(bin = X'zz') IS NULL",
    "bin = X'6162'", "fsb = X'6162' OR bin = X'00'", "NOT (bin = X'01')",
]

# pylance refuses these (when planning or when running); so must lance-cpp.
ERROR_FILTERS = [
    "fsb = X'02'", "bin = 'a'", "s = X'61'",
    "array_has(li)", "array_has(li, 1, 2)", "array_has()", "array_has(li, [1])", "array_has(s, 'a')",
    "array_has(id, 1)", "array_has(li, 'a')", "array_has(li, '1')", "array_has(li, TRUE)",
    "array_has(ls, TRUE)", "array_has(ls, 1)", "array_has(LI, 1)", "array_has(li, s)",
    "array_has(ls, n)", "array_has(lb, n)", "array_has(lu, 1)", "array_has(lu, -1)", "array_has(lu, id)",
    "array_has(lu, n)",
    "array_has_any(li, 1)", "array_has_any(li, 'a')", "array_has_any(li)", "array_has_any(li, [1], [2])",
    "array_has_any(s, ['a'])", "array_has_any(li, ['a'])", "array_has_any(li, [TRUE])",
    "array_has_any(li, [1, 'a'])", "array_has_any(ls, [1])", "array_has_any(li, [[1]])",
    "array_has_any(NULL, [1])", "array_has_all(li, NULL)", "array_has_all(li, 1)", "array_has_all(s, ['a'])",
    "array_has_all(li)",
    "contains(s, 1)", "contains(id, 'a')", "contains(s)", "contains(s, 'a', 'b')", "contains(li, 'a')",
    "starts_with(s, 1)", "starts_with(id, 'a')", "starts_with(S, 'a')", "starts_with(li, 'a')",
    "ends_with(id, 'x')", "s LIKE 'a!_b%' ESCAPE '!'", "li LIKE 'a'", "id LIKE '1'",
]


# Of those, the ones pylance plans and then fails on when it casts the list's strings
# to numbers (as lance-cpp does).
FAILS_WHEN_RUN = {"array_has(ls, 1)", "array_has_any(ls, [1])", "array_has(ls, n)"}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    uri = tmp_path_factory.mktemp("filter_functions") / "ds"
    # Two fragments, so that row ranges and batches do not line up with the data.
    lance.write_dataset(_table(), uri, max_rows_per_file=6)
    return uri


def _comparable(table: pa.Table) -> list:
    """Column values as Python lists, with NaN spelled so that it equals itself."""
    return [repr(table[name].to_pylist()) if name == "lf" else table[name].to_pylist()
            for name in table.schema.names]


def _pylance(ds, flt):
    try:
        ids = ds.to_table(filter=flt, columns=["id"])["id"].to_pylist()
    except Exception as e:  # noqa: BLE001 - any refusal counts
        return None, str(e).splitlines()[0]
    assert ds.count_rows(filter=flt) == len(ids), flt
    return ids, None


def _ours(tmp_path, uri, flt):
    out = tmp_path / "out.arrow"
    scan = _run("scan", uri, "--columns", "id", "--filter", flt, "--out", out)
    count = _run("count", uri, "--filter", flt)
    if scan.returncode != 0:
        assert count.returncode != 0, f"{flt}: scan fails but count does not"
        assert "Traceback" not in scan.stderr and scan.returncode < 128, scan.stderr
        return None, scan.stderr.strip()
    assert count.returncode == 0, f"{flt}: count fails: {count.stderr}"
    with ipc.open_file(out) as f:
        ids = f.read_all()["id"].to_pylist()
    assert int(count.stdout.strip()) == len(ids), f"{flt}: count {count.stdout} vs {len(ids)} rows"
    return ids, None


@pytest.mark.parametrize("flt", LIST_FILTERS + STRING_FILTERS + BINARY_FILTERS + list(REFUSED_HERE))
def test_filter_matches_pylance(tmp_path, dataset, flt):
    theirs, their_error = _pylance(lance.dataset(dataset), flt)
    assert their_error is None, f"{flt}: pylance refuses it ({their_error}); move it to ERROR_FILTERS"
    ours, our_error = _ours(tmp_path, dataset, flt)
    if flt in REFUSED_HERE:
        assert our_error is not None, f"{flt}: expected a refusal ({REFUSED_HERE[flt]}), got {ours}"
        assert "not supported" in our_error or "must be" in our_error, our_error
        return
    assert our_error is None, f"{flt}: pylance keeps {theirs}, lance-cpp fails: {our_error}"
    assert ours == theirs, flt


@pytest.mark.parametrize("flt", ERROR_FILTERS)
def test_filter_refused_like_pylance(tmp_path, dataset, flt):
    theirs, their_error = _pylance(lance.dataset(dataset), flt)
    assert their_error is not None, f"{flt}: pylance now keeps {theirs}"
    ours, our_error = _ours(tmp_path, dataset, flt)
    assert our_error is not None, f"{flt}: pylance refuses it ({their_error}) but lance-cpp keeps {ours}"
    if flt in FAILS_WHEN_RUN:
        # pylance too fails only when it meets a string that is not a number.
        assert "'a'" in our_error, our_error
    else:
        assert "filter" in our_error, our_error


def test_refusals_name_function_and_argument(tmp_path, dataset):
    cases = {
        "array_has(li, 1, 2)": ["array_has", "2 arguments"],
        "array_has(s, 'a')": ["array_has", "argument 1", "list"],
        "array_has_any(li, 1)": ["array_has_any", "argument 2", "list"],
        "array_has(li, 'a')": ["array_has", "string", "int32"],
        "contains(id, 'a')": ["contains", "argument 1", "string"],
        "starts_with(s, 1)": ["starts_with", "argument 2", "string"],
        "lower(s) = 'a'": ["lower", "not supported"],
        "s LIKE 'a!_b%' ESCAPE '!'": ["ESCAPE", "backslash"],
    }
    for flt, words in cases.items():
        ours, err = _ours(tmp_path, dataset, flt)
        assert err is not None, flt
        for w in words:
            assert w in err, f"{flt}: {err!r} does not mention {w!r}"


@pytest.mark.parametrize("flt", ["array_has_any(li, [1, 7]) OR contains(s, 'pp')",
                                 "array_has_all(ls, [NULL])", "starts_with(s, 'a') AND NOT array_has(ll, 20)",
                                 "s LIKE '%an%' OR array_has(lf, 1.5)"])
def test_delete_matches_pylance(tmp_path, dataset, flt):
    theirs_uri, ours_uri = tmp_path / "theirs", tmp_path / "ours"
    shutil.copytree(dataset, theirs_uri)
    shutil.copytree(dataset, ours_uri)
    lance.dataset(theirs_uri).delete(flt)
    proc = _run("delete", ours_uri, flt)
    assert proc.returncode == 0, proc.stderr
    theirs, ours = lance.dataset(theirs_uri), lance.dataset(ours_uri)
    assert _comparable(ours.to_table()) == _comparable(theirs.to_table()), flt
    # pylance reads lance-cpp's deletions and filters them the same way.
    assert ours.count_rows(filter=flt) == 0
    assert ours.count_rows() == theirs.count_rows()


def test_update_where_matches_pylance(tmp_path, dataset):
    flt = "array_has_any(ls, ['a', 'x']) OR ends_with(big, 'e')"
    theirs_uri, ours_uri = tmp_path / "theirs", tmp_path / "ours"
    shutil.copytree(dataset, theirs_uri)
    shutil.copytree(dataset, ours_uri)
    lance.dataset(theirs_uri).update({"id": "id + 100"}, where=flt)
    proc = _run("update", ours_uri, "--set", "id=id + 100", "--where", flt)
    assert proc.returncode == 0, proc.stderr
    # Updated rows move to a new fragment: compare in id order.
    ours = _comparable(lance.dataset(ours_uri).to_table().sort_by("id"))
    assert ours == _comparable(lance.dataset(theirs_uri).to_table().sort_by("id"))
    matched = lance.dataset(dataset).count_rows(filter=flt)
    assert matched > 0 and sum(i >= 100 for i in ours[0]) == matched


def test_merge_insert_delete_by_source_matches_pylance(tmp_path, dataset):
    flt = "array_has_any(li, [NULL, 5]) OR starts_with(s, 'ch')"
    theirs_uri, ours_uri = tmp_path / "theirs", tmp_path / "ours"
    shutil.copytree(dataset, theirs_uri)
    shutil.copytree(dataset, ours_uri)
    source = lance.dataset(dataset).to_table().slice(0, 3)  # ids 0..2 match; the rest do not
    source_file = tmp_path / "source.arrow"
    with ipc.new_file(source_file, source.schema) as w:
        w.write_table(source)
    (lance.dataset(theirs_uri).merge_insert("id").when_matched_update_all()
     .when_not_matched_by_source_delete(flt).execute(source))
    proc = _run("merge-insert", ours_uri, "--on", "id", "--input", source_file, "--when-matched-update-all",
                "--when-not-matched-by-source-delete", flt)
    assert proc.returncode == 0, proc.stderr
    ours = _comparable(lance.dataset(ours_uri).to_table().sort_by("id"))
    assert ours == _comparable(lance.dataset(theirs_uri).to_table().sort_by("id"))
    deleted = lance.dataset(dataset).count_rows(filter=f"id >= 3 AND ({flt})")
    assert deleted > 0 and len(ours[0]) == 10 - deleted
