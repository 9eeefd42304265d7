"""Filtered scans and counts through pylance's BTREE and BITMAP indices.

pylance builds the indices (int, string, float with NaN, date columns, all
with nulls) on datasets of file version 2.0 and 2.1, with and without stable
row ids. For every filter lance-cpp's indexed scan must give exactly the rows
of its own full scan (`--no-index`, same order, same row ids) and the rows
pylance gives; `--explain` must name the indices pylance's explain_plan uses.
Then both sides append (unindexed fragments), delete and update, and the
answers must still agree, and pylance must still use its indices after
lance-cpp's commits."""
from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from conftest import FIXTURES_ROOT, lance_cpp_binary, shared_fixture_params

# list_indices is the listing that shows each index's fragment bitmap.
pytestmark = pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")

ROWS = 1500
ROWS_PER_FILE = 500

# (version, stable row ids, index type per column): each variant puts both
# index types on columns of each kind.
VARIANTS = [
    ("2.0", False, {"i": "BTREE", "s": "BITMAP", "f": "BTREE", "d": "BITMAP"}),
    ("2.0", True, {"i": "BITMAP", "s": "BTREE", "f": "BITMAP", "d": "BTREE"}),
    ("2.1", False, {"i": "BITMAP", "s": "BTREE", "f": "BITMAP", "d": "BTREE"}),
    ("2.1", True, {"i": "BTREE", "s": "BITMAP", "f": "BTREE", "d": "BITMAP"}),
]

# Filters an index answers whole.
INDEXED = [
    "i = 5",
    "i IN (1, 5, 7, 400)",
    "i < 10",
    "i <= 10",
    "i > 990",
    "i >= 990",
    "i BETWEEN 100 AND 120",
    "i IS NULL",
    "i IS NOT NULL AND i < 3",
    "NOT (i > 5)",
    "i != 5 AND s = 'b'",
    "s = 'c' OR i = 3",
    "s IN ('a', 'c')",
    "s IS NULL",
    "s > 'c'",
    "f > 0.5",
    "f < 0.1",
    "f IS NULL",
    "d = DATE '2020-01-05'",
    "d BETWEEN DATE '2020-01-03' AND DATE '2020-01-10'",
    "NOT (s = 'a' OR i IS NULL)",
]
# Filters an index answers in part (refine) or not at all (full scan).
PARTIAL = [
    "i > 100 AND x < 50",
    "i > 100 OR x < 50",
    "NOT (i > 5 AND x < 3)",
    "x = 7",
]
AFTER_CHANGES = ["i < 50", "s = 'b' AND i > 500", "f > 0.9 OR s IS NULL", "d < DATE '2020-01-04'",
                 "i > 100 AND x < 50", "NOT (i > 5)"]


def _table(seed: int, start: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    null = lambda p=0.1: rng.random(n) < p  # noqa: E731
    f = rng.random(n)
    f[rng.random(n) < 0.03] = np.nan
    days = rng.integers(0, 30, n)
    return pa.table({
        "id": pa.array(np.arange(start, start + n), pa.int64()),
        "i": pa.array(rng.integers(0, 1000, n), pa.int64(), mask=null()),
        "s": pa.array(rng.choice(["a", "b", "c", "d", "e"], n), pa.string(), mask=null()),
        "f": pa.array(f, pa.float64(), mask=null()),
        "d": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=int(k)) for k in days], pa.date32(),
                      mask=null()),
        "x": pa.array(np.arange(start, start + n) % 100, pa.int64()),
    })


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(lance_cpp_binary())] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120)


def _ok(*args) -> subprocess.CompletedProcess:
    proc = _run(*args)
    assert proc.returncode == 0, f"lance-cpp {' '.join(map(str, args))} failed:\n{proc.stderr}"
    return proc


def _scan(tmp_path: Path, uri, filt: str, *flags, key: str = "id") -> pa.Table:
    out = tmp_path / "out.arrow"
    _ok("scan", uri, "--columns", key, "--with-row-id", "--filter", filt, "--out", out, *flags)
    with ipc.open_file(out) as f:
        return f.read_all()


def _make(tmp_path: Path, version: str, stable: bool, types: dict) -> Path:
    uri = tmp_path / f"ds-{version}-{int(stable)}"
    lance.write_dataset(_table(1, 0, ROWS), uri, data_storage_version=version, max_rows_per_file=ROWS_PER_FILE,
                        enable_stable_row_ids=stable)
    ds = lance.dataset(uri)
    for col, kind in types.items():
        ds.create_scalar_index(col, kind)
    return uri


def _check(tmp_path: Path, uri: Path, filt: str, expect_index: bool | None = None, same_use: bool = True,
           key: str = "id"):
    ours = _scan(tmp_path, uri, filt, key=key)
    full = _scan(tmp_path, uri, filt, "--no-index", key=key)
    assert ours.equals(full), f"{filt}: indexed scan differs from the full scan"
    ds = lance.dataset(uri)
    theirs = sorted(ds.to_table(columns=[key], filter=filt, with_row_id=True)["_rowid"].to_pylist())
    assert sorted(ours["_rowid"].to_pylist()) == theirs, f"{filt}: rows differ from pylance's"
    count = _ok("count", uri, "--filter", filt).stdout.strip()
    assert int(count) == len(theirs) == ds.count_rows(filter=filt), f"{filt}: count {count} vs {len(theirs)}"
    explain = _ok("scan", uri, "--filter", filt, "--explain").stdout
    pylance_plan = ds.scanner(filter=filt).explain_plan()
    if same_use:
        # An index is used exactly where pylance uses one.
        assert ("ScalarIndexQuery" in explain) == ("ScalarIndexQuery" in pylance_plan), \
            f"{filt}: plan\n{explain}\npylance's:\n{pylance_plan}"
    if expect_index is not None:
        assert ("ScalarIndexQuery" in explain) == expect_index, f"{filt}: plan\n{explain}"
        assert ("ScalarIndexQuery" in pylance_plan) == expect_index, f"{filt}: pylance's plan\n{pylance_plan}"
    return explain, pylance_plan


@pytest.fixture(scope="module", params=VARIANTS, ids=lambda v: f"v{v[0]}-stable{int(v[1])}")
def variant(request, tmp_path_factory):
    version, stable, types = request.param
    tmp = tmp_path_factory.mktemp("scalar_index")
    return _make(tmp, version, stable, types), types


@pytest.mark.parametrize("filt", INDEXED)
def test_indexed_filters(tmp_path, variant, filt):
    uri, types = variant
    explain, pylance_plan = _check(tmp_path, uri, filt, expect_index=True)
    # Each index named as NAME (TYPE), the type as pylance shows it.
    for col, kind in types.items():
        shown = {"BTREE": "BTree", "BITMAP": "Bitmap"}[kind]
        if f"{col}_idx({shown})" in pylance_plan:
            assert f"{col}_idx ({shown})" in explain, f"{filt}: plan\n{explain}"
    assert "Refine: --" in explain, f"{filt}: an index answers it whole\n{explain}"


@pytest.mark.parametrize("filt", PARTIAL)
def test_partly_indexed_filters(tmp_path, variant, filt):
    uri, _ = variant
    explain, _ = _check(tmp_path, uri, filt)
    if filt == "i > 100 AND x < 50":
        assert "ScalarIndexQuery" in explain and "rechecked" in explain, explain
    else:
        assert "ScalarIndexQuery" not in explain, explain


def test_explain_without_index_and_no_index_flag(tmp_path, variant):
    uri, _ = variant
    assert "ScalarIndexQuery" not in _ok("scan", uri, "--filter", "i = 5", "--explain", "--no-index").stdout


@pytest.mark.parametrize("version,stable,types", VARIANTS, ids=lambda v: str(v))
def test_after_appends_deletes_updates(tmp_path, version, stable, types):
    uri = _make(tmp_path, version, stable, types)
    steps = []
    # pylance appends: an unindexed fragment.
    lance.write_dataset(_table(2, ROWS, 300), uri, mode="append")
    steps.append("pylance append")
    # lance-cpp appends.
    extra = tmp_path / "extra.arrow"
    with ipc.new_file(extra, _table(3, ROWS + 300, 300).schema) as w:
        w.write_table(_table(3, ROWS + 300, 300))
    _ok("write", uri, "--input", extra, "--mode", "append")
    steps.append("lance-cpp append")
    lance.dataset(uri).delete("id % 7 = 0")
    steps.append("pylance delete")
    _ok("delete", uri, "id % 11 = 0", "--quiet")
    steps.append("lance-cpp delete")
    lance.dataset(uri).update({"i": "i + 1", "s": "'e'"}, where="id < 120")
    steps.append("pylance update")
    # Its update finds the rows through the index on i.
    _ok("update", uri, "--set", "i=i+2", "--set", "d=DATE '2020-01-02'", "--where", "i BETWEEN 200 AND 260",
        "--quiet")
    steps.append("lance-cpp update")
    for filt in AFTER_CHANGES:
        _check(tmp_path, uri, filt)
    # pylance still uses its indices after lance-cpp's commits, with the
    # answers of its own full scan.
    ds = lance.dataset(uri)
    assert {i["name"] for i in ds.list_indices()} >= {f"{c}_idx" for c in types}
    for filt in ["i < 50", "s = 'b'", "d < DATE '2020-01-04'"]:
        assert "ScalarIndexQuery" in ds.scanner(filter=filt).explain_plan(), filt
        used = ds.to_table(columns=["id"], filter=filt)["id"].to_pylist()
        scanned = ds.to_table(columns=["id"], filter=filt, use_scalar_index=False)["id"].to_pylist()
        assert sorted(used) == sorted(scanned), f"pylance after {steps}: {filt}"


def test_unimplemented_index_types_are_not_used(tmp_path):
    uri = tmp_path / "zm"
    lance.write_dataset(_table(4, 0, 600), uri, max_rows_per_file=300)
    ds = lance.dataset(uri)
    ds.create_scalar_index("s", "INVERTED")
    for filt in ["s = 'a'", "s IS NULL"]:
        explain, _ = _check(tmp_path, uri, filt, same_use=False)
        assert "ScalarIndexQuery" not in explain, explain


FIXTURE_CASES = [
    # (fixture, filters, the indices lance-cpp uses there)
    # Its BTREE files are legacy (0.1) Lance files (ids named row_ids),
    # read whole. It records no index_version: predicates true for null are
    # not asked of it.
    ("v0.20.0/old_btree_bitmap_indices.lance", ["bitmap = 3", "bitmap IN (2, 4)", "btree > 1", "bitmap < 4 AND btree > 0",
                                                "bitmap IS NULL", "NOT (bitmap = 3)", "btree = 2", "btree IN (1, 4)",
                                                "btree IS NULL"],
     {"bitmap_idx (Bitmap)", "btree_idx (BTree)"}),
    ("0.36.0/btree_in_index_pkg.lance", ["x = 3", "x BETWEEN 10 AND 20", "x > 990 OR x < 2"], {"x_idx (BTree)"}),
    ("v0.18.2/index_no_details.lance", ["id = 3", "id > 90"], set()),  # no index details: not used
]


@pytest.mark.parametrize("fixture,filters,used", shared_fixture_params(FIXTURE_CASES, nargs=3),
                         ids=lambda v: str(v) if isinstance(v, str) else None)
def test_older_index_layouts(tmp_path, fixture, filters, used):
    uri = FIXTURES_ROOT / fixture
    seen = set()
    for filt in filters:
        explain, _ = _check(tmp_path, uri, filt, same_use=False, key=lance.dataset(uri).schema.names[0])
        if filt == "bitmap IS NULL":
            assert "ScalarIndexQuery" not in explain, explain
        seen |= {name for name in ("bitmap_idx (Bitmap)", "btree_idx (BTree)", "x_idx (BTree)", "id_idx (BTree)")
                 if name in explain}
    assert seen == used


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable"])
def test_after_pylance_compaction(tmp_path, stable):
    """pylance's compaction remaps its indices (new files, new fragment
    bitmaps), over row addresses and over stable row ids."""
    uri = _make(tmp_path, "2.1", stable, {"i": "BTREE", "s": "BITMAP"})
    lance.write_dataset(_table(5, ROWS, 200), uri, mode="append")
    lance.dataset(uri).delete("id % 5 = 0")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=2000)
    for filt in ["i < 50", "s = 'b' AND i > 500", "NOT (s = 'a' OR i IS NULL)"]:
        _check(tmp_path, uri, filt)


@pytest.mark.parametrize("rounds", [1, 2], ids=["one-compaction", "two-compactions"])
def test_deferred_index_remap(tmp_path, rounds):
    """A deferred remap leaves the indices on the old row addresses and a
    fragment reuse index mapping them to the compacted rows: lance-cpp maps
    them as pylance does (through every compaction it records, in order),
    uses the indices where pylance does, and gives pylance's rows, also
    after its own delete and update commits on top."""
    uri = _make(tmp_path, "2.1", False, {"i": "BTREE", "s": "BITMAP"})
    lance.dataset(uri).delete("id % 5 = 0")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=1000, defer_index_remap=True)
    if rounds == 2:
        lance.write_dataset(_table(5, ROWS, 300), uri, mode="append", max_rows_per_file=100)
        lance.dataset(uri).delete("id % 7 = 0")
        lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=2000, defer_index_remap=True)
    ds = lance.dataset(uri)
    assert "__lance_frag_reuse" in {i["name"] for i in ds.list_indices()}
    # The indices' bitmaps, as pylance lists them, are lance-cpp's too.
    theirs = {i["name"]: sorted(i["fragment_ids"]) for i in ds.list_indices()}
    filters = ["i < 50", "s = 'b'", "s = 'b' AND i > 500", "NOT (s = 'a' OR i IS NULL)", "i > 100 AND x < 50"]
    for filt in filters:
        explain, _ = _check(tmp_path, uri, filt)
        if filt == "i < 50":
            assert "ScalarIndexQuery" in explain, explain
    _ok("delete", uri, "id % 11 = 0", "--quiet")
    _ok("update", uri, "--set", "i=i+2", "--where", "i BETWEEN 200 AND 260", "--quiet")
    ds = lance.dataset(uri)
    after = {i["name"]: sorted(i["fragment_ids"]) for i in ds.list_indices()}
    for name, frags in theirs.items():
        assert set(after[name]) <= set(frags), f"{name}: {after[name]} vs {frags}"
    for filt in filters:
        _check(tmp_path, uri, filt)


def test_overlaid_fragments_are_scanned(tmp_path, monkeypatch):
    """Data overlay files change cells the index was built without: their
    fragments are scanned, the others still answered by the index."""
    from test_overlays import OVERLAY_ENV, Overlays, _base
    monkeypatch.setenv(OVERLAY_ENV, "1")
    uri = tmp_path / "o.lance"
    lance.write_dataset(_base(), uri, data_storage_version="2.1", max_rows_per_file=10)
    lance.dataset(uri).create_scalar_index("x", "BTREE")
    Overlays(uri, "2.1").commit([(0, [({"x": [100.0, 103.0, 107.0]}, [0, 3, 7])])])
    for filt in ["x = 3", "x = 103", "x > 50", "x < 5"]:
        explain, _ = _check(tmp_path, uri, filt)
        assert "fragments=[1, 2]" in explain and "unindexed fragments=[0]" in explain, explain


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable"])
def test_btree_pages(tmp_path, stable):
    """BTREE indices of several pages (4096 values each, nulls first, runs of
    equal values across page bounds): pages are skipped by their bounds, and
    the answer is still the scan's."""
    n = 13000
    rng = np.random.default_rng(7)
    table = pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "i": pa.array(rng.integers(0, 300, n), pa.int32(), mask=rng.random(n) < 0.4),
        "s": pa.array([f"k{v:03d}" for v in rng.integers(0, 500, n)], pa.string(), mask=rng.random(n) < 0.1),
        "d": pa.array(rng.integers(18000, 18100, n).astype("int32"), pa.int32()).cast(pa.date32()),
    })
    uri = tmp_path / "pages"
    lance.write_dataset(table, uri, max_rows_per_file=5000, enable_stable_row_ids=stable)
    ds = lance.dataset(uri)
    for col in ("i", "s", "d"):
        ds.create_scalar_index(col, "BTREE")
    for filt in ["i = 0", "i = 299", "i = 150", "i < 3", "i <= 0", "i > 297", "i >= 299", "i IN (0, 150, 299)",
                 "i IS NULL", "i BETWEEN 100 AND 101", "i != 5", "NOT (i < 290)", "150 < i", "i = 150 OR s = 'k001'",
                 "s = 'k250'", "s >= 'k498'", "s < 'k002'", "s IS NULL", "d = DATE '2019-04-15'",
                 "d > DATE '2019-04-30' AND i < 10"]:
        _check(tmp_path, uri, filt)


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable"])
def test_commits_carry_index_metadata_as_pylance(tmp_path, stable):
    """lance-cpp's append, delete and update leave the indices (names, fields,
    fragment bitmaps) as pylance's own do, on twin datasets."""
    def twin(who):
        uri = tmp_path / who
        t = pa.table({"id": pa.array(range(20), pa.int64()), "a": pa.array(range(20), pa.int64()),
                      "b": pa.array([v % 3 for v in range(20)], pa.int64())})
        lance.write_dataset(t, uri, max_rows_per_file=10, enable_stable_row_ids=stable)
        ds = lance.dataset(uri)
        ds.create_scalar_index("a", "BTREE")
        ds.create_scalar_index("b", "BITMAP")
        return uri
    more = pa.table({"id": pa.array([20, 21], pa.int64()), "a": pa.array([20, 21], pa.int64()),
                     "b": pa.array([0, 1], pa.int64())})
    extra = tmp_path / "more.arrow"
    with ipc.new_file(extra, more.schema) as w:
        w.write_table(more)
    py, cpp = twin("py"), twin("cpp")
    indices = lambda uri: sorted((i["name"], tuple(i["fields"]), tuple(sorted(i["fragment_ids"])))  # noqa: E731
                                 for i in lance.dataset(uri).list_indices())
    lance.write_dataset(more, py, mode="append")
    _ok("write", cpp, "--input", extra, "--mode", "append")
    assert indices(py) == indices(cpp)
    lance.dataset(py).delete("id = 4 OR id >= 15")
    _ok("delete", cpp, "id = 4 OR id >= 15", "--quiet")
    assert indices(py) == indices(cpp)
    lance.dataset(py).update({"b": "b + 100"}, where="a < 3")
    _ok("update", cpp, "--set", "b=b+100", "--where", "a < 3", "--quiet")
    assert indices(py) == indices(cpp)
    for filt in ["a < 3", "b = 100", "b = 1"]:
        _check(tmp_path, cpp, filt)
        assert sorted(lance.dataset(cpp).to_table(filter=filt)["id"].to_pylist()) == \
            sorted(lance.dataset(py).to_table(filter=filt)["id"].to_pylist())


def test_btree_range_id_is_ignored_by_pylance_14(tmp_path):
    """pylance 14.0.2 cannot write the range-partitioned BTREE layout: it
    ignores BTREE's range_id (deprecated) and writes the plain layout, which
    lance-cpp uses. A range-partitioned lookup is refused by name
    (tests/unit/scalar_index_test.cc, on a hand-made index directory)."""
    from lance.file import LanceFileReader
    uri = tmp_path / "range_id"
    ds = lance.write_dataset(pa.table({"x": [(i * 37) % 200 for i in range(200)]}), uri, max_rows_per_file=50)
    ds.create_scalar_index("x", "BTREE", name="x_idx", range_id=0)
    ds = lance.dataset(uri)
    lookups = list((uri / "_indices").glob("*/*page_lookup.lance"))
    assert [p.name for p in lookups] == ["page_lookup.lance"]
    meta = LanceFileReader(str(lookups[0])).metadata().schema.metadata
    assert meta[b"range_partitioned"] == b"false", meta
    explain = _ok("scan", uri, "--filter", "x < 10", "--explain").stdout
    assert "x_idx (BTree)" in explain, explain
    ours = _scan(tmp_path, uri, "x < 10", key="x")
    assert sorted(ours["x"].to_pylist()) == sorted(ds.to_table(filter="x < 10")["x"].to_pylist())


def test_btree_built_in_segments(tmp_path):
    """How pylance 14 builds a BTREE over fragments in parallel: one segment
    per fragment (create_index_uncommitted), some merged
    (merge_existing_index_segments), committed as one index of several
    segments. lance-cpp uses every segment and gives pylance's rows."""
    uri = tmp_path / "segments"
    ds = lance.write_dataset(pa.table({"x": [(i * 37) % 200 for i in range(200)]}), uri, max_rows_per_file=50)
    segs = [ds.create_index_uncommitted("x", "BTREE", name="x_idx", fragment_ids=[f.fragment_id])
            for f in ds.get_fragments()]
    ds = ds.commit_existing_index_segments("x_idx", "x", [ds.merge_existing_index_segments(segs[:2])] + segs[2:])
    for filt in ["x < 10", "x = 37", "x BETWEEN 50 AND 60"]:
        explain, _ = _check(tmp_path, uri, filt, expect_index=True, key="x")  # pylance's rows and count
        assert "x_idx (BTree), fragments=[0, 1, 2, 3]" in explain, explain
