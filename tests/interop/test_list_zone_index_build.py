"""LABEL_LIST and ZONEMAP indices built by lance-cpp (`create-index`), and
`optimize-indices`, against pylance.

The same data is written twice; pylance builds (or optimizes) one copy and
lance-cpp the other. The manifest entries, the CreateIndex transactions and
the decoded index files (schemas with their metadata, columns, the extra
global buffers) must be equal, uuids and times aside; each side must use
the other's indices, and every filtered answer must equal the unindexed
one."""
from __future__ import annotations

import datetime
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lance
from lance.file import LanceFileReader
from lance.indices import IndexConfig
from test_scalar_index_build import _cells, _entries, _normalized, _ok, _run, _txn_view

pytestmark = pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")

ROWS = 600
ROWS_PER_FILE = 250
# column -> (type, lance-cpp flags, pylance index type)
BUILDS = {
    "l": ("LABEL_LIST", [], "LABEL_LIST"),
    "ls": ("LABEL_LIST", [], "LABEL_LIST"),
    "i": ("ZONEMAP", ["--rows-per-zone", "64"], IndexConfig("zonemap", {"rows_per_zone": 64})),
    "s": ("ZONEMAP", [], "ZONEMAP"),
    "f": ("ZONEMAP", ["--rows-per-zone", "100"], IndexConfig("zonemap", {"rows_per_zone": 100})),
    "d": ("ZONEMAP", [], "ZONEMAP"),
}
FILTERS = ["array_has_any(l, [1, 2])", "array_has_all(l, [0, 3])", "array_contains(ls, 'b')",
           "NOT array_has_any(l, [4])", "i < 40", "i > 580", "i IS NULL", "s = 'k7'", "s IS NOT NULL",
           "d < DATE '2020-01-05'"]


def _table(seed: int, start: int, n: int, large: bool = False) -> pa.Table:
    rng = np.random.default_rng(seed)
    lists = []
    for k in range(n):
        r = rng.random()
        lists.append(None if r < 0.08 else [] if r < 0.15 else
                     [int(v) if v < 5 else None for v in rng.integers(0, 6, rng.integers(1, 4))])
    strings = [None if rng.random() < 0.1 else [["a", "b", "c", None][j] for j in rng.integers(0, 4, 2)]
               for _ in range(n)]
    f = rng.random(n)
    f[rng.random(n) < 0.05] = np.nan
    f[start % 7:start % 7 + 3] = np.nan  # a zone may hold NaN only
    null = lambda p: rng.random(n) < p  # noqa: E731
    return pa.table({
        "id": pa.array(np.arange(start, start + n), pa.int64()),
        "l": pa.array(lists, pa.large_list(pa.int64()) if large else pa.list_(pa.int64())),
        "ls": pa.array(strings, pa.list_(pa.string())),
        "i": pa.array(np.arange(start, start + n) % 700, pa.int32(), mask=null(0.1)),
        "s": pa.array([f"k{k}" for k in rng.integers(0, 20, n)], pa.string(), mask=null(0.1)),
        "f": pa.array(f, pa.float64(), mask=null(0.1)),
        "d": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=int(k)) for k in (np.arange(n) // 30)],
                      pa.date32(), mask=null(0.05)),
    })


def _write(uri: Path, version: str, stable: bool, large: bool = False) -> Path:
    lance.write_dataset(_table(1, 0, ROWS, large), uri, data_storage_version=version,
                        max_rows_per_file=ROWS_PER_FILE, enable_stable_row_ids=stable)
    return uri


def _decoded_files(uri: Path, ds) -> dict:
    """Each index's files decoded: footer version, schema (with metadata),
    columns, and the global buffers after the schema's."""
    out = {}
    for index in ds.list_indices():
        d = Path(uri) / "_indices" / index["uuid"]
        files = {}
        for p in sorted(d.iterdir()):
            reader = LanceFileReader(str(p))
            meta = reader.metadata()
            table = reader.read_all().to_table()
            if p.name == "page_data.lance":
                # Ids of equal values are in pylance's parallel-sort order.
                cols = sorted(zip(map(repr, _cells(table["values"])), table["ids"].to_pylist()))
            else:
                cols = {c: _cells(table[c]) for c in table.column_names}
            buffers = [bytes(reader.read_global_buffer(k)) for k in range(1, len(meta.global_buffers))]
            files[p.name] = ((meta.major_version, meta.minor_version), meta.schema, cols, buffers)
        out.setdefault(index["name"], []).append(files)
    return out


def _assert_files_equal(a: dict, b: dict):
    assert a.keys() == b.keys()
    for name in a:
        for fa, fb in zip(a[name], b[name], strict=True):
            assert fa.keys() == fb.keys(), name
            for f in fa:
                va, sa, ca, ba = fa[f]
                vb, sb, cb, bb = fb[f]
                assert va == vb, f"{name} {f}: file version"
                assert sa.equals(sb, check_metadata=True), f"{name} {f}: schema\n{sa}\nvs\n{sb}"
                assert ca == cb, f"{name} {f}: contents differ"
                assert ba == bb, f"{name} {f}: global buffers differ"


def _assert_answers(uri: Path, filters=FILTERS):
    """pylance and lance-cpp use the indices and answer as the full scan."""
    ds = lance.dataset(uri)
    for filt in filters:
        full = sorted(ds.to_table(columns=["id"], filter=filt, use_scalar_index=False)["id"].to_pylist())
        assert "ScalarIndexQuery" in ds.scanner(filter=filt).explain_plan(), filt
        assert sorted(ds.to_table(columns=["id"], filter=filt)["id"].to_pylist()) == full, filt
        assert "ScalarIndexQuery" in _ok("scan", uri, "--filter", filt, "--explain").stdout, filt
        assert int(_ok("count", uri, "--filter", filt).stdout) == len(full), filt


def _build_ours(uri: Path):
    for col, (kind, flags, _) in BUILDS.items():
        _ok("create-index", uri, col, "--type", kind, *flags)


def _build_theirs(uri: Path):
    for col, (_, _, kind) in BUILDS.items():
        lance.dataset(uri).create_scalar_index(col, kind)


def _assert_same_commits(ours: Path, theirs: Path, n: int, compare_files=None):
    """The last `n` commits equal pylance's: manifest entries, transactions,
    inspect views, and the index files (decoded, or by `compare_files`)."""
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert _entries(a) == _entries(b)
    assert [_txn_view(t) for t in a.get_transactions(n)] == [_txn_view(t) for t in b.get_transactions(n)]
    views = [json.loads(_ok("inspect", uri, "--json").stdout) for uri in (ours, theirs)]
    for view in views:
        for fragment in view["fragments"]:
            if fragment["deletion_file"]:
                fragment["deletion_file"].pop("id")  # random, by nature
    assert _normalized(views[0]) == _normalized(views[1])
    if compare_files is not None:
        compare_files(ours, theirs)
    else:
        _assert_files_equal(_decoded_files(ours, a), _decoded_files(theirs, b))


@pytest.mark.parametrize("version,stable,large", [("2.0", False, False), ("2.1", True, True), ("2.2", False, False)])
def test_built_as_pylance_builds_and_used_both_ways(tmp_path, version, stable, large):
    ours, theirs = _write(tmp_path / "ours", version, stable, large), _write(tmp_path / "theirs", version, stable, large)
    for uri in (ours, theirs):
        lance.dataset(uri).delete("id % 9 = 4 OR (id >= 250 AND id < 300)")
    _build_ours(ours)
    _build_theirs(theirs)
    _assert_same_commits(ours, theirs, len(BUILDS))
    types = {i["name"]: i["type"] for i in lance.dataset(ours).list_indices()}
    assert types == {"l_idx": "LabelList", "ls_idx": "LabelList", "i_idx": "ZoneMap", "s_idx": "ZoneMap",
                     "f_idx": "ZoneMap", "d_idx": "ZoneMap"}
    _assert_answers(ours)
    # pylance's indices, lance-cpp's queries (the same files: a check of the test).
    _assert_answers(theirs, FILTERS[:3] + FILTERS[4:6])


def _changes(uri: Path, seed: int):
    """Appends two fragments, deletes rows of old and new fragments and one
    old fragment whole."""
    lance.write_dataset(_table(seed, ROWS, 300), uri, mode="append", max_rows_per_file=200)
    ds = lance.dataset(uri)
    ds.delete("id % 11 = 3 OR (id >= 250 AND id < 500)")


OPT_TYPES = {"l": "LABEL_LIST", "s": "ZONEMAP", "i": "BTREE", "d": "BITMAP"}
OPT_FILTERS = ["array_has_any(l, [1, 2])", "NOT array_has_all(l, [0])", "s = 'k3'", "s IS NULL", "i < 30",
               "i > 650", "i IS NULL", "d = DATE '2020-01-03'", "d IS NULL"]


@pytest.mark.parametrize("stable", [False, True])
def test_optimize_commits_as_pylance(tmp_path, stable):
    """lance-cpp's optimize-indices over pylance's indices commits what
    pylance's optimize_indices() commits for the same steps."""
    ours, theirs = _write(tmp_path / "ours", "2.1", stable), _write(tmp_path / "theirs", "2.1", stable)
    for uri in (ours, theirs):
        for col, kind in OPT_TYPES.items():
            lance.dataset(uri).create_scalar_index(col, kind, name=f"{col}_{kind.lower()}")
        _changes(uri, 2)
    before = lance.dataset(ours).version
    _ok("optimize-indices", ours)
    lance.dataset(theirs).optimize.optimize_indices()
    assert lance.dataset(ours).version == before + 1
    _assert_same_commits(ours, theirs, 1)
    ds = lance.dataset(ours)
    for i in ds.list_indices():
        assert ds.stats.index_stats(i["name"])["num_unindexed_rows"] == 0, i["name"]
    _assert_answers(ours, OPT_FILTERS)
    # Nothing left to do: no commit, as pylance.
    proc = _ok("optimize-indices", ours)
    assert "up to date" in proc.stdout
    assert lance.dataset(ours).version == before + 1


def test_optimize_merges_segments_as_pylance(tmp_path):
    """Several segments of a name (pylance's deltas), stable row ids with
    deletions: BTREE and BITMAP segments are merged, LABEL_LIST and ZONEMAP
    ones rebuilt, as pylance."""
    ours, theirs = _write(tmp_path / "ours", "2.2", True), _write(tmp_path / "theirs", "2.2", True)
    for uri in (ours, theirs):
        for col, kind in OPT_TYPES.items():
            lance.dataset(uri).create_scalar_index(col, kind, name=f"{col}_{kind.lower()}")
        lance.write_dataset(_table(3, ROWS, 100), uri, mode="append")
        lance.dataset(uri).optimize.optimize_indices(num_indices_to_merge=0)
        _changes(uri, 4)
    _ok("optimize-indices", ours)
    lance.dataset(theirs).optimize.optimize_indices()
    _assert_same_commits(ours, theirs, 1)
    _assert_answers(ours, OPT_FILTERS)


def test_pylance_optimizes_lance_cpp_indices_and_back(tmp_path):
    uri = _write(tmp_path / "ds", "2.1", False)
    _build_ours(uri)
    _changes(uri, 5)
    lance.dataset(uri).optimize.optimize_indices()
    ds = lance.dataset(uri)
    assert all(ds.stats.index_stats(i["name"])["num_unindexed_rows"] == 0 for i in ds.list_indices())
    _assert_answers(uri)
    # Rows appended by lance-cpp, brought in by lance-cpp's optimize over
    # the indices pylance wrote.
    extra = tmp_path / "extra.arrow"
    with pa.ipc.new_file(extra, _table(6, 2000, 120).schema) as w:
        w.write_table(_table(6, 2000, 120))
    _ok("write", uri, "--input", extra, "--mode", "append")
    _ok("optimize-indices", uri, "--index", "l_idx,s_idx", "--index", "f_idx")
    ds = lance.dataset(uri)
    stats = {i["name"]: ds.stats.index_stats(i["name"])["num_unindexed_rows"] for i in ds.list_indices()}
    assert stats == {"l_idx": 0, "s_idx": 0, "f_idx": 0, "ls_idx": 120, "i_idx": 120, "d_idx": 120}
    _assert_answers(uri)


def test_refusals(tmp_path):
    uri = _write(tmp_path / "ds", "2.1", False)
    ds = lance.dataset(uri)
    with pytest.raises(TypeError, match="must be a list or large list"):
        ds.create_scalar_index("i", "LABEL_LIST")
    proc = _run("create-index", uri, "i", "--type", "LABEL_LIST")
    assert proc.returncode == 1 and "LABEL_LIST index column must be a list or large list" in proc.stderr
    proc = _run("create-index", uri, "l", "--type", "ZONEMAP")
    assert proc.returncode == 1 and "ZONEMAP index on a list<item: int64> column is not implemented" in proc.stderr
    for args in (["i", "--type", "BTREE", "--rows-per-zone", "5"], ["i", "--type", "ZONEMAP", "--rows-per-zone", "0"],
                 ["i", "--type", "ZONEMAP", "--rows-per-zone", "x"]):
        proc = _run("create-index", uri, *args)
        assert proc.returncode == 2, (args, proc.stderr)
    proc = _run("optimize-indices", uri, "--index", "nope")
    assert proc.returncode == 1 and "index not found: name=nope" in proc.stderr
    assert "up to date" in _ok("optimize-indices", uri).stdout
    assert lance.dataset(uri).version == 1
    assert not (uri / "_indices").exists()


@pytest.mark.parametrize("stable", [False, True])
def test_optimize_ngram_as_pylance(tmp_path, stable):
    """An NGRAM index optimized by lance-cpp commits what pylance's
    optimize_indices() commits: the old postings of live rows merged with
    the new fragments' (the same files), used by both after."""
    ours, theirs = _write(tmp_path / "ours", "2.1", stable), _write(tmp_path / "theirs", "2.1", stable)
    for uri in (ours, theirs):
        lance.dataset(uri).create_scalar_index("s", "NGRAM")
        _changes(uri, 2)
    _ok("optimize-indices", ours)
    lance.dataset(theirs).optimize.optimize_indices()
    _assert_same_commits(ours, theirs, 1)
    ds = lance.dataset(ours)
    assert ds.stats.index_stats("s_idx")["num_unindexed_rows"] == 0
    _assert_answers(ours, ["contains(s, 'k13')", "s LIKE 'k13%'", "contains(s, 'k17') OR contains(s, 'k19')"])
    # Several segments (pylance's deltas) are rebuilt into one.
    for uri in (ours, theirs):
        lance.write_dataset(_table(3, 2000, 100), uri, mode="append")
        lance.dataset(uri).optimize.optimize_indices(num_indices_to_merge=0)
        lance.write_dataset(_table(4, 3000, 100), uri, mode="append")
    _ok("optimize-indices", ours)
    lance.dataset(theirs).optimize.optimize_indices()
    _assert_same_commits(ours, theirs, 1)
    _assert_answers(ours, ["contains(s, 'k13')", "s LIKE 'k13%'", "contains(s, 'k17') OR contains(s, 'k19')"])
