"""BTREE and BITMAP indices built by lance-cpp (`create-index`), against pylance.

The same data is written twice; pylance indexes one copy
(create_scalar_index) and lance-cpp the other. The manifest entries, the
CreateIndex transactions and the decoded index files must be equal (uuids,
times and the file sizes that follow from the Lance file writer's bytes
aside); pylance must list and use lance-cpp's indices, and both sides'
filtered results must equal the unindexed results. Then appends by either
side, --replace, drop-index both ways and the refusals."""
from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from lance.file import LanceFileReader
from conftest import lance_cpp_binary

pytestmark = pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")

ROWS = 1200
ROWS_PER_FILE = 500

# (file version, stable row ids, index type per column): both types on
# columns of each kind across the variants.
VARIANTS = [
    ("2.0", False, {"i": "BTREE", "s": "BITMAP", "f": "BTREE", "d": "BITMAP"}),
    ("2.0", True, {"i": "BITMAP", "s": "BTREE", "f": "BITMAP", "d": "BTREE"}),
    ("2.1", False, {"i": "BITMAP", "s": "BTREE", "f": "BITMAP", "d": "BTREE"}),
    ("2.1", True, {"i": "BTREE", "s": "BITMAP", "f": "BTREE", "d": "BITMAP"}),
    ("2.2", False, {"i": "BTREE", "s": "BITMAP", "f": "BTREE", "d": "BITMAP"}),
    ("2.2", True, {"i": "BITMAP", "s": "BTREE", "f": "BITMAP", "d": "BTREE"}),
]
FILTERS = ["i < 50", "i = 7", "i IS NULL", "s = 'b'", "s IN ('a', 'e')", "s IS NULL", "f > 0.9", "f IS NULL",
           "d = DATE '2020-01-05'", "d BETWEEN DATE '2020-01-03' AND DATE '2020-01-09'", "d IS NULL"]
TYPE_NAMES = {"BTREE": "BTree", "BITMAP": "Bitmap"}
FILES = {"BTREE": ["page_data.lance", "page_lookup.lance"], "BITMAP": ["bitmap_page_lookup.lance"]}


def _table(seed: int, start: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    null = lambda: rng.random(n) < 0.1  # noqa: E731
    f = rng.random(n)
    f[rng.random(n) < 0.03] = np.nan
    days = rng.integers(0, 20, n)
    return pa.table({
        "id": pa.array(np.arange(start, start + n), pa.int64()),
        "i": pa.array(rng.integers(0, 300, n), pa.int32(), mask=null()),
        "s": pa.array(rng.choice(["a", "b", "c", "d", "e"], n), pa.string(), mask=null()),
        "f": pa.array(f, pa.float64(), mask=null()),
        "d": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=int(k)) for k in days], pa.date32(),
                      mask=null()),
    })


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(lance_cpp_binary())] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120)


def _ok(*args) -> subprocess.CompletedProcess:
    proc = _run(*args)
    assert proc.returncode == 0, f"lance-cpp {' '.join(map(str, args))} failed:\n{proc.stderr}"
    return proc


def _write(uri: Path, version: str, stable: bool) -> Path:
    lance.write_dataset(_table(1, 0, ROWS), uri, data_storage_version=version, max_rows_per_file=ROWS_PER_FILE,
                        enable_stable_row_ids=stable)
    return uri


def _append_arrow(tmp_path: Path, uri: Path, table: pa.Table):
    path = tmp_path / "append.arrow"
    with ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    _ok("write", uri, "--input", path, "--mode", "append")


def _entries(ds) -> dict:
    """The manifest's index entries by name, without what differs by
    nature (uuid, creation time) or follows from the file writer's bytes."""
    out = {}
    for index in ds.list_indices():
        e = dict(index)
        e.pop("uuid")
        e["fragment_ids"] = sorted(e["fragment_ids"])
        out[e.pop("name")] = e
    return out


def _txn_view(txn) -> dict:
    op = txn.operation
    view = lambda i: {  # noqa: E731
        "name": i.name, "fields": list(i.fields), "dataset_version": i.dataset_version,
        "fragment_ids": sorted(i.fragment_ids), "index_version": i.index_version, "base_id": i.base_id,
        "files": [f.path for f in i.files], "index_details": i.index_details,
        "covering_fields": list(i.covering_fields)}
    return {"type": type(op).__name__, "read_version": txn.read_version,
            "new": [view(i) for i in op.new_indices], "removed": [view(i) for i in op.removed_indices]}


def _normalized(view):
    """An `inspect --json` view without what differs by nature between two
    writers of the same steps: uuids, times, file names."""
    if isinstance(view, dict):
        return {k: _normalized(v) for k, v in view.items()
                if k not in ("uri", "uuid", "timestamp", "created_at_ms", "path")}
    if isinstance(view, list):
        return [_normalized(v) for v in view]
    return view


def _index_dir(uri: Path, ds, name: str) -> Path:
    (index,) = [i for i in ds.list_indices() if i["name"] == name]
    return Path(uri) / "_indices" / index["uuid"]


def _decoded(path: Path):
    reader = LanceFileReader(str(path))
    meta = reader.metadata()
    return (meta.major_version, meta.minor_version), meta.schema, reader.read_all().to_table()


def _cells(column) -> list:
    """A column's values, NaN made comparable."""
    return ["NaN" if isinstance(v, float) and v != v else v for v in column.to_pylist()]


def _assert_same_results(uri: Path, filt: str):
    ds = lance.dataset(uri)
    plan = ds.scanner(filter=filt).explain_plan()
    assert "ScalarIndexQuery" in plan, f"pylance does not use the index for {filt}:\n{plan}"
    indexed = ds.to_table(columns=["id"], filter=filt)["id"].to_pylist()
    full = ds.to_table(columns=["id"], filter=filt, use_scalar_index=False)["id"].to_pylist()
    assert sorted(indexed) == sorted(full), filt
    explain = _ok("scan", uri, "--filter", filt, "--explain").stdout
    assert "ScalarIndexQuery" in explain, f"lance-cpp does not use the index for {filt}:\n{explain}"
    ours = int(_ok("count", uri, "--filter", filt).stdout.strip())
    assert ours == len(full), f"{filt}: lance-cpp counts {ours} through the index, unindexed {len(full)}"
    out = Path(uri).parent / "scan.arrow"
    _ok("scan", uri, "--columns", "id", "--filter", filt, "--out", out)
    with ipc.open_file(out) as f:
        assert sorted(f.read_all()["id"].to_pylist()) == sorted(full), filt


@pytest.fixture(scope="module", params=VARIANTS, ids=lambda v: f"v{v[0]}-stable{int(v[1])}")
def built(request, tmp_path_factory):
    version, stable, types = request.param
    tmp = tmp_path_factory.mktemp("index_build")
    ours, theirs = _write(tmp / "ours", version, stable), _write(tmp / "theirs", version, stable)
    for col, kind in types.items():
        _ok("create-index", ours, col, "--type", kind)
        lance.dataset(theirs).create_scalar_index(col, kind)
    return ours, theirs, version, stable, types


def test_manifest_and_transaction_equal_pylance(built):
    ours, theirs, _, stable, types = built
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert _entries(a) == _entries(b)
    for name, entry in _entries(a).items():
        assert entry["type"] == TYPE_NAMES[types[entry["fields"][0]]]
    ta, tb = a.get_transactions(len(types)), b.get_transactions(len(types))
    assert [_txn_view(t) for t in ta] == [_txn_view(t) for t in tb]
    for t in ta:
        (new,) = t.operation.new_indices
        assert new.index_version == (1 if stable and new.index_details[0].endswith("BTreeIndexDetails") else 0)
    # The whole manifest as lance-cpp's inspect shows it.
    views = [json.loads(_ok("inspect", uri, "--json").stdout) for uri in (ours, theirs)]
    assert _normalized(views[0]) == _normalized(views[1])
    # describe_indices / index_statistics agree too.
    da = {d.name: (d.type_url, d.num_rows_indexed, d.field_names) for d in a.describe_indices()}
    db = {d.name: (d.type_url, d.num_rows_indexed, d.field_names) for d in b.describe_indices()}
    assert da == db


def test_index_files_equal_pylance(built):
    ours, theirs, version, _, types = built
    a, b = lance.dataset(ours), lance.dataset(theirs)
    for col, kind in types.items():
        da, db = _index_dir(ours, a, f"{col}_idx"), _index_dir(theirs, b, f"{col}_idx")
        assert sorted(p.name for p in da.iterdir()) == FILES[kind]
        for name in FILES[kind]:
            va, sa, ta = _decoded(da / name)
            vb, sb, tb = _decoded(db / name)
            assert va == vb, f"{col} {name}: file version"
            assert sa.equals(sb, check_metadata=True), f"{col} {name}: schema\n{sa}\nvs\n{sb}"
            if name == "page_data.lance":
                # The values in the same order; pylance's order of the ids of
                # equal values follows its parallel sort, so only the sets of
                # ids per value must agree.
                assert _cells(ta["values"]) == _cells(tb["values"]), f"{col} {name}: values differ"
                key = lambda t: sorted(zip(_cells(t["values"]), t["ids"].to_pylist()),  # noqa: E731
                                       key=lambda p: (p[0] is not None, str(p[0]), p[1]))
                assert key(ta) == key(tb), f"{col} {name}: ids differ"
            else:
                for c in ta.column_names:
                    assert _cells(ta[c]) == _cells(tb[c]), f"{col} {name}: column {c} differs"
        if kind == "BITMAP" and not (col == "f" and version == "2.1"):
            # The same bytes as pylance's. Not for float keys in 2.1: there
            # lance-cpp's file writer encodes the column differently from
            # pylance's (the decoded files are equal).
            assert (da / FILES[kind][0]).read_bytes() == (db / FILES[kind][0]).read_bytes(), f"{col} bitmap bytes"


@pytest.mark.parametrize("filt", FILTERS)
def test_pylance_and_lance_cpp_use_the_index(built, filt):
    ours, _, _, _, _ = built
    _assert_same_results(ours, filt)


@pytest.mark.parametrize("version,stable", [("2.1", True), ("2.2", False)])
def test_appends_and_replace(tmp_path, version, stable):
    uri = _write(tmp_path / "ds", version, stable)
    _ok("create-index", uri, "i", "--type", "BTREE")
    _ok("create-index", uri, "s", "--type", "BITMAP")
    lance.write_dataset(_table(2, ROWS, 300), uri, mode="append")
    _append_arrow(tmp_path, uri, _table(3, ROWS + 300, 300))
    listed = {d["name"]: d for d in json.loads(_ok("indices", uri, "--json").stdout)}
    ds = lance.dataset(uri)
    for name in ("i_idx", "s_idx"):
        stats = ds.stats.index_stats(name)
        assert listed[name]["num_unindexed_rows"] == stats["num_unindexed_rows"] == 600
        assert listed[name]["num_indexed_rows"] == stats["num_indexed_rows"] == ROWS
        (entry,) = [i for i in ds.list_indices() if i["name"] == name]
        assert listed[name]["fragment_ids"] == sorted(entry["fragment_ids"])
        assert listed[name]["uuids"] == [entry["uuid"]]
        assert listed[name]["type"] == entry["type"]
    for filt in ("i < 20", "s = 'c'"):
        _assert_same_results(uri, filt)
    # Without --replace the name is refused, as pylance's replace=False.
    proc = _run("create-index", uri, "i", "--type", "BTREE")
    assert proc.returncode == 1 and "already exists" in proc.stderr
    with pytest.raises(Exception, match="already exists"):
        lance.dataset(uri).create_scalar_index("i", "BTREE", replace=False)
    before = lance.dataset(uri)
    old = [i for i in before.list_indices() if i["name"] == "i_idx"][0]
    _ok("create-index", uri, "i", "--type", "BTREE", "--replace")
    ds = lance.dataset(uri)
    (txn,) = ds.get_transactions(1)
    assert [i.uuid for i in txn.operation.removed_indices] == [old["uuid"]]
    assert ds.stats.index_stats("i_idx")["num_unindexed_rows"] == 0
    _assert_same_results(uri, "i < 20")
    # pylance replaces lance-cpp's index; lance-cpp replaces pylance's.
    ds.create_scalar_index("s", "BITMAP", replace=True)
    _ok("create-index", uri, "i", "--type", "BITMAP", "--replace")
    ds = lance.dataset(uri)
    assert {i["name"]: i["type"] for i in ds.list_indices()} == {"i_idx": "Bitmap", "s_idx": "Bitmap"}
    for filt in ("i < 20", "s = 'c'", "i IS NULL"):
        _assert_same_results(uri, filt)


def test_drop_index_both_ways(tmp_path):
    ours = _write(tmp_path / "ours", "2.1", False)
    theirs = _write(tmp_path / "theirs", "2.1", False)
    # lance-cpp drops an index pylance made, pylance one lance-cpp made.
    lance.dataset(ours).create_scalar_index("i", "BTREE")
    _ok("create-index", ours, "s", "--type", "BITMAP")
    _ok("drop-index", ours, "i_idx")
    lance.dataset(ours).drop_index("s_idx")
    lance.dataset(theirs).create_scalar_index("i", "BTREE")
    lance.dataset(theirs).create_scalar_index("s", "BITMAP")
    lance.dataset(theirs).drop_index("i_idx")
    lance.dataset(theirs).drop_index("s_idx")
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert a.list_indices() == b.list_indices() == []
    assert [_txn_view(t) for t in a.get_transactions(2)] == [_txn_view(t) for t in b.get_transactions(2)]
    assert _ok("indices", ours, "--json").stdout.strip() == "[]"
    proc = _run("drop-index", ours, "i_idx")
    assert proc.returncode == 1 and "not found" in proc.stderr
    with pytest.raises(Exception, match="not found"):
        a.drop_index("i_idx")


def test_refusals_match_pylance(tmp_path):
    table = pa.table({"i": pa.array([1, 2, 3], pa.int32()), "l": pa.array([[1], [2], []]),
                      "st": pa.array([{"x": 1}, {"x": 2}, {"x": None}]),
                      "v": pa.array([[1.0, 2.0]] * 3, pa.list_(pa.float32(), 2))})
    uri = tmp_path / "ds"
    lance.write_dataset(table, uri)
    ds = lance.dataset(uri)
    with pytest.raises(KeyError, match="not found in schema"):
        ds.create_scalar_index("nope", "BTREE")
    proc = _run("create-index", uri, "nope", "--type", "BTREE")
    assert proc.returncode == 1 and "'nope' not found in schema" in proc.stderr
    for col in ("l", "st", "v"):
        for kind in ("BTREE", "BITMAP"):
            with pytest.raises(TypeError, match="must be int"):
                ds.create_scalar_index(col, kind)
            proc = _run("create-index", uri, col, "--type", kind)
            assert proc.returncode == 1 and f"BTREE/BITMAP index column {col} must be int" in proc.stderr, \
                proc.stderr
    with pytest.raises(NotImplementedError):
        ds.create_scalar_index("i", "FOO")
    proc = _run("create-index", uri, "i", "--type", "FOO")
    assert proc.returncode == 1 and "unknown index type 'FOO'" in proc.stderr
    proc = _run("create-index", uri, "i", "--type", "IVF_PQ")
    assert proc.returncode == 1 and "index type IVF_PQ is not implemented in lance-cpp yet" in proc.stderr
    # INVERTED is built, but only on strings, as pylance refuses it.
    with pytest.raises(TypeError, match="INVERTED index column i must be string"):
        ds.create_scalar_index("i", "INVERTED")
    proc = _run("create-index", uri, "i", "--type", "INVERTED")
    assert proc.returncode == 1 and "INVERTED index column i must be string" in proc.stderr, proc.stderr
    for flag in (["--num-partitions", "4"], ["--with-position"]):
        proc = _run("create-index", uri, "i", "--type", "BTREE", *flag)
        assert proc.returncode == 2 and f"{flag[0]} does not apply to a BTREE index" in proc.stderr
    assert lance.dataset(uri).version == 1
    assert not (uri / "_indices").exists()
    # A nested field pylance indexes, lance-cpp indexes the same way.
    _ok("create-index", uri, "st.x", "--type", "BTREE")
    ds = lance.dataset(uri)
    assert [(i["name"], i["type"], i["fields"]) for i in ds.list_indices()] == [("st.x_idx", "BTree", ["st.x"])]
    assert ds.to_table(filter="st.x = 2")["i"].to_pylist() == [2]


MORE_TYPES = {
    "b": (lambda k: None if k % 7 == 0 else k % 2 == 0, pa.bool_(), "b = true"),
    "ls": (lambda k: None if k % 5 == 0 else f"v{k % 4}", pa.large_string(), "ls = 'v1'"),
    "bin": (lambda k: None if k % 6 == 0 else bytes([k % 3]), pa.binary(), "bin IS NULL"),
    "ts": (lambda k: None if k % 4 == 0 else k % 9, pa.timestamp("us"), "ts IS NOT NULL"),
    "u8": (lambda k: None if k % 3 == 0 else k % 11, pa.uint8(), "u8 < 3"),
    "f32": (lambda k: None if k % 3 == 0 else (k % 5) / 2, pa.float32(), "f32 > 1.0"),
    "fsb": (lambda k: None if k % 3 == 0 else bytes([k % 2, 1]), pa.binary(2), "fsb IS NULL"),
}


@pytest.mark.parametrize("version", ["2.1"])
def test_more_column_types(tmp_path, version):
    """Every other type pylance indexes: the decoded files and the answers
    equal pylance's."""
    n = 700
    table = pa.table({c: pa.array([f(k) for k in range(n)], t) for c, (f, t, _) in MORE_TYPES.items()})
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for uri in (ours, theirs):
        lance.write_dataset(table, uri, data_storage_version=version, max_rows_per_file=300)
    for col in MORE_TYPES:
        for kind in ("BTREE", "BITMAP"):
            _ok("create-index", ours, col, "--type", kind, "--name", f"{col}_{kind}")
            lance.dataset(theirs).create_scalar_index(col, kind, name=f"{col}_{kind}")
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert _entries(a) == _entries(b)
    for col in MORE_TYPES:
        for kind in ("BTREE", "BITMAP"):
            da, db = _index_dir(ours, a, f"{col}_{kind}"), _index_dir(theirs, b, f"{col}_{kind}")
            for name in FILES[kind]:
                _, sa, ta = _decoded(da / name)
                _, sb, tb = _decoded(db / name)
                assert sa.equals(sb, check_metadata=True), f"{col} {name}"
                first = ta.column_names[0]
                assert _cells(ta[first]) == _cells(tb[first]), f"{col} {name}"
                pairs = lambda t: sorted(map(repr, zip(*(_cells(t[c]) for c in t.column_names))))  # noqa: E731
                assert pairs(ta) == pairs(tb), f"{col} {name}"
    for col, (_, _, filt) in MORE_TYPES.items():
        expected = sorted(b.to_table(columns=[], filter=filt, with_row_id=True)["_rowid"].to_pylist())
        assert sorted(a.to_table(columns=[], filter=filt, with_row_id=True)["_rowid"].to_pylist()) == expected, filt
        assert int(_ok("count", ours, "--filter", filt).stdout) == len(expected), filt


@pytest.mark.parametrize("kind", ["BTREE", "BITMAP"])
def test_deleted_rows_and_empty_dataset(tmp_path, kind):
    """Deleted rows (and a fragment deleted whole) are not indexed; an empty
    dataset gets empty index files, as pylance's."""
    for rows, name in (([1, 2, 3, 4, 5, 6], "del"), ([], "empty")):
        ours, theirs = tmp_path / f"{name}-ours", tmp_path / f"{name}-theirs"
        for uri in (ours, theirs):
            lance.write_dataset(pa.table({"i": pa.array(rows, pa.int32())}), uri, max_rows_per_file=3)
            if rows:
                lance.dataset(uri).delete("i <= 3")
                lance.dataset(uri).delete("i = 5")
        _ok("create-index", ours, "i", "--type", kind)
        lance.dataset(theirs).create_scalar_index("i", kind)
        a, b = lance.dataset(ours), lance.dataset(theirs)
        assert _entries(a) == _entries(b)
        assert [_txn_view(t) for t in a.get_transactions(1)] == [_txn_view(t) for t in b.get_transactions(1)]
        for file in FILES[kind]:
            _, sa, ta = _decoded(_index_dir(ours, a, "i_idx") / file)
            _, sb, tb = _decoded(_index_dir(theirs, b, "i_idx") / file)
            assert sa.equals(sb, check_metadata=True) and ta.equals(tb), f"{name} {file}"
        if rows:
            assert a.to_table(filter="i > 3")["i"].to_pylist() == [4, 6]


def test_spilling_sort_equals_in_memory(tmp_path):
    """A BTREE built from sorted runs spilled to disk and merged is the one
    sorted in memory, page for page."""
    import os
    uri = tmp_path / "ds"
    lance.write_dataset(_table(5, 0, 20000), uri, data_storage_version="2.1", max_rows_per_file=6000)
    for col in ("f", "s"):
        _ok("create-index", uri, col, "--type", "BTREE", "--name", f"{col}_mem")
        env = dict(os.environ, LANCE_CPP_INDEX_SORT_RUN_ROWS="5000", TMPDIR=str(tmp_path))
        proc = subprocess.run([str(lance_cpp_binary()), "create-index", str(uri), col, "--type", "BTREE",
                               "--name", f"{col}_spill"], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert not list(tmp_path.glob("lance-cpp-index-sort-*")), "temporary runs left behind"
        ds = lance.dataset(uri)
        for name in FILES["BTREE"]:
            _, sa, ta = _decoded(_index_dir(uri, ds, f"{col}_mem") / name)
            _, sb, tb = _decoded(_index_dir(uri, ds, f"{col}_spill") / name)
            assert sa.equals(sb, check_metadata=True)
            for c in ta.column_names:
                assert _cells(ta[c]) == _cells(tb[c]), f"{col} {name} {c}"
        assert ds.stats.index_stats(f"{col}_spill")["num_indexed_rows"] == 20000


def test_pylance_compacts_and_optimizes_lance_cpp_indices(tmp_path):
    """pylance remaps lance-cpp's indices through a compaction and merges new
    rows into them (optimize_indices); both sides then use them."""
    uri = tmp_path / "ds"
    lance.write_dataset(pa.table({"i": pa.array(list(range(100)) * 3, pa.int32()), "s": pa.array(["a", "b", "c"] * 100)}),
                        uri, max_rows_per_file=50)
    _ok("create-index", uri, "i", "--type", "BTREE")
    _ok("create-index", uri, "s", "--type", "BITMAP")
    lance.write_dataset(pa.table({"i": pa.array([5, 6], pa.int32()), "s": pa.array(["a", "z"])}), uri, mode="append")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=1000)
    lance.dataset(uri).optimize.optimize_indices()
    ds = lance.dataset(uri)
    for name in ("i_idx", "s_idx"):
        assert ds.stats.index_stats(name)["num_unindexed_rows"] == 0
    for filt in ("i = 5", "s = 'z'", "s = 'a' AND i < 3"):
        n = ds.to_table(filter=filt, use_scalar_index=False).num_rows
        assert n > 0 and ds.count_rows(filt) == n, filt
        assert "ScalarIndexQuery" in ds.scanner(filter=filt).explain_plan(), filt
        assert int(_ok("count", uri, "--filter", filt).stdout) == n, filt
        assert "ScalarIndexQuery" in _ok("scan", uri, "--filter", filt, "--explain").stdout, filt
