"""Data overlay files (reader/writer feature bit 64) between pylance and lance-cpp.

pylance 14 writes overlays through its DataOverlay operation: a Lance data
file of new values for some (physical row, field) cells of a fragment, with a
coverage bitmap shared by its fields (dense) or one per field (sparse). A
covered row's value sits at its rank in the coverage; the newest overlay wins
where coverages overlap; deletions apply after. Both sides accept the bit only
with LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES set.

* pylance's overlays (dense, sparse, overlapping, with deletions, on 2.0, 2.1
  and 2.2, stable row ids on and off) read by lance-cpp as pylance reads them:
  scan, projections, filters, count, take by offset and by row id.
* Each side writes (delete, update, append, merge-insert, compaction, restore)
  on an overlaid dataset and the other reads the result as the writer does.
* Compaction rewrites a fragment with more overlays than
  max_overlays_per_fragment (default 10) as pylance does.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from lance.dataset import LanceOperation
from lance.file import LanceFileWriter
from lance.fragment import DataFile

from conftest import assert_clean_failure

OVERLAY_ENV = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES"
VERSIONS = ["2.0", "2.1", "2.2"]


@pytest.fixture(autouse=True)
def _opt_in(monkeypatch):
    # pylance and the lance-cpp subprocesses (which inherit it) opt in.
    monkeypatch.setenv(OVERLAY_ENV, "1")


def _base(n: int = 30) -> pa.Table:
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "x": pa.array([float(i) for i in range(n)]),
        "s": pa.array([f"s{i}" for i in range(n)]),
        "l": pa.array([[i, i + 1] for i in range(n)], pa.list_(pa.int32())),
    })


def version_20(version: str) -> bool:
    return version == "2.0"


class Overlays:
    """Builds pylance DataOverlay commits on one dataset."""

    def __init__(self, uri: Path, version: str):
        self.uri, self.version, self.n = uri, version, 0
        ds = lance.dataset(uri)
        # Overlays name leaf ids: a list field by its item's id.
        self.ids = {f.name(): (f.children()[0].id() if f.children() else f.id())
                    for f in ds.lance_schema.fields()}
        self.parent_ids = {f.name(): f.id() for f in ds.lance_schema.fields()}
        self.types = ds.schema

    def file(self, columns: dict) -> DataFile:
        """An overlay data file holding `columns` (name -> values, in cell order)."""
        self.n += 1
        name = f"overlay-{self.n}.lance"
        schema = pa.schema([self.types.field(c) for c in columns])
        table = pa.table({c: pa.array(v, self.types.field(c).type) for c, v in columns.items()}, schema=schema)
        writer = LanceFileWriter(str(self.uri / "data" / name), schema, version=self.version)
        writer.write_batch(table)
        writer.close()
        major, minor = (int(p) for p in self.version.split("."))
        # 2.0 files list every field (a list and its item, each a column);
        # 2.1+ files only the leaves.
        entries = []
        for c in columns:
            if version_20(self.version) and self.parent_ids[c] != self.ids[c]:
                entries.append([self.parent_ids[c], self.ids[c]])
            else:
                entries.append([self.ids[c]])
        fields = [i for e in entries for i in e]
        self.widths = [len(e) for e in entries]
        return DataFile(name, fields, list(range(len(fields))), major, minor)

    def commit(self, groups: list) -> lance.LanceDataset:
        """groups: [(fragment_id, [(columns, offsets), ...]), ...]; offsets is a
        list of ints (dense) or a list of lists, one per column (sparse)."""
        ops = []
        for frag_id, overlays in groups:
            files = []
            for cols, offs in overlays:
                data_file = self.file(cols)
                if offs and isinstance(offs[0], list):  # sparse: one bitmap per listed field
                    offs = [o for o, w in zip(offs, self.widths) for _ in range(w)]
                files.append(LanceOperation.DataOverlayFile(data_file, offs))
            ops.append(LanceOperation.DataOverlayGroup(frag_id, files))
        ds = lance.dataset(self.uri)
        return lance.LanceDataset.commit(str(self.uri), LanceOperation.DataOverlay(ops), read_version=ds.version)


def _overlaid(tmp_path: Path, version: str, stable: bool, name: str = "ds") -> Path:
    """Three fragments of 10 rows; overlays on fragments 0 and 1: dense on x
    and s, sparse on x and l, overlapping the older ones, a null value, and
    deletions of an overlaid and a plain row."""
    uri = tmp_path / f"{name}.lance"
    lance.write_dataset(_base(), uri, data_storage_version=version, max_rows_per_file=10,
                        enable_stable_row_ids=stable)
    ov = Overlays(uri, version)
    # Dense: offsets given out of order (resolved ascending).
    ov.commit([(0, [({"x": [100.0, 103.0, 107.0], "s": ["A", "D", "H"]}, [0, 3, 7])])])
    # Sparse on fragment 0 overlapping the dense one (x at 3 and 8; l at 0),
    # and two overlays in one group on fragment 1, the later one winning at 12.
    ov.commit([
        (0, [({"x": [203.0, 208.0], "l": [[9, 9, 9], None]}, [[3, 8], [0]])]),
        (1, [({"x": [311.0, 312.0]}, [1, 2]), ({"x": [None], "s": ["Z"]}, [2])]),
    ])
    ds = lance.dataset(uri)
    ds.delete("id in (7, 15)")
    return uri


def _read_arrow(path: Path) -> pa.Table:
    with pa.memory_map(str(path)) as f:
        return ipc.open_file(f).read_all()


def _cpp_scan(lance_cpp, uri: Path, out: Path, *extra) -> pa.Table:
    lance_cpp.run_ok("scan", uri, "--out", out, *extra)
    return _read_arrow(out)


def _cpp_take(lance_cpp, uri: Path, out: Path, *extra) -> pa.Table:
    lance_cpp.run_ok("take", uri, "--out", out, *extra)
    return _read_arrow(out)


def _assert_reads_equal(lance_cpp, uri: Path, tmp_path: Path) -> None:
    """Every read lance-cpp offers equals pylance's on the latest version."""
    ds = lance.dataset(uri)
    out = tmp_path / "out.arrow"
    assert _cpp_scan(lance_cpp, uri, out).equals(ds.to_table())
    assert _cpp_scan(lance_cpp, uri, out, "--columns", "id,s").equals(ds.to_table(columns=["id", "s"]))
    # A projection that touches no overlaid field.
    assert _cpp_scan(lance_cpp, uri, out, "--columns", "id").equals(ds.to_table(columns=["id"]))
    for pred in ["x > 100", "x is null", "s = 'A' or s = 'Z'", "id < 5"]:
        assert _cpp_scan(lance_cpp, uri, out, "--filter", pred).equals(ds.to_table(filter=pred)), pred
        got = lance_cpp.run_ok("count", uri, "--filter", pred).stdout.strip()
        assert got == str(ds.count_rows(filter=pred)), pred
    assert lance_cpp.run_ok("count", uri).stdout.strip() == str(ds.count_rows())
    rows = ds.count_rows()
    idx = [i for i in [0, 3, 2, rows - 1, 8, 3, 11] if i < rows]
    got = _cpp_take(lance_cpp, uri, out, "--indices", ",".join(map(str, idx)))
    assert got.equals(ds.take(idx)), got
    rowids = ds.to_table(with_row_id=True)["_rowid"].to_pylist()
    pick = [rowids[i] for i in (3, 0, 10, 11, 2) if i < rows]
    got = _cpp_take(lance_cpp, uri, out, "--row-ids", ",".join(map(str, pick)))
    assert got.equals(ds._take_rows(pick)), got


@pytest.mark.parametrize("stable", [False, True], ids=["addr-ids", "stable-ids"])
@pytest.mark.parametrize("version", VERSIONS)
def test_pylance_overlays_read_by_lance_cpp(lance_cpp, tmp_path, version, stable):
    uri = _overlaid(tmp_path, version, stable)
    ds = lance.dataset(uri)
    frags = ds.get_fragments()
    assert [len(f.metadata.overlays) for f in frags] == [2, 2, 0]
    # The overlays do change what pylance reads (the test would catch stale values).
    x = dict(zip(ds.to_table()["id"].to_pylist(), ds.to_table()["x"].to_pylist()))
    assert (x[0], x[3], x[8], x[11], x[12], x[13]) == (100.0, 203.0, 208.0, 311.0, None, 13.0)
    lists = ds.to_table(columns=["l"])["l"].to_pylist()
    assert lists[:2] == [[9, 9, 9], [1, 2]]
    _assert_reads_equal(lance_cpp, uri, tmp_path)
    # Earlier versions read as pylance reads them.
    for v in (1, 2):
        out = tmp_path / f"v{v}.arrow"
        assert _cpp_scan(lance_cpp, uri, out, "--version", str(v)).equals(
            lance.dataset(uri, version=v).to_table())


def test_without_the_opt_in_both_refuse(lance_cpp, tmp_path, monkeypatch):
    uri = _overlaid(tmp_path, "2.1", False)
    monkeypatch.delenv(OVERLAY_ENV)
    with pytest.raises(Exception, match="upgrade"):
        lance.dataset(uri)
    for args in [("scan", uri), ("count", uri), ("take", uri, "--indices", "0"), ("delete", uri, "id = 1")]:
        proc = lance_cpp.run(*args)
        assert_clean_failure(proc, "upgrade", "64 (data overlay files)", OVERLAY_ENV)


def _copy(uri: Path, tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copytree(uri, dst)
    return dst


def _write_ipc(path: Path, table: pa.Table) -> Path:
    with ipc.new_file(str(path), table.schema) as w:
        w.write_table(table)
    return path


def _overlay_counts(uri: Path) -> list:
    return [(f.fragment_id, len(f.metadata.overlays)) for f in lance.dataset(uri).get_fragments()]


@pytest.mark.parametrize("version", ["2.0", "2.2"])
def test_writes_on_overlaid_datasets_match_pylance(lance_cpp, tmp_path, version):
    """The same write by each side on copies of one overlaid dataset: the
    rows and the fragments' overlays agree, and lance-cpp reads pylance's
    result (and pylance lance-cpp's) as its writer does."""
    uri = _overlaid(tmp_path, version, False)
    new_rows = _write_ipc(tmp_path / "new.arrow", _base(3).set_column(
        0, "id", pa.array([3, 40, 41], pa.int64())))
    cases = [
        ("delete", lambda ds: ds.delete("x > 150"), ("delete", "x > 150")),
        ("update", lambda ds: ds.update({"x": "x + 1"}, where="s = 'A' or id = 12"),
         ("update", "--set", "x = x + 1", "--where", "s = 'A' or id = 12")),
        ("append", lambda ds: lance.write_dataset(_read_arrow(new_rows), ds.uri, mode="append"),
         ("write", "--input", new_rows, "--mode", "append")),
        ("merge", lambda ds: ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
         .execute(_read_arrow(new_rows)),
         ("merge-insert", "--on", "id", "--input", new_rows, "--when-matched-update-all",
          "--when-not-matched-insert-all")),
        ("restore", lambda ds: lance.dataset(ds.uri, version=3).restore(), ("restore", "3")),
    ]
    for name, py_write, cpp_args in cases:
        py_uri = _copy(uri, tmp_path, f"py-{name}.lance")
        cpp_uri = _copy(uri, tmp_path, f"cpp-{name}.lance")
        py_write(lance.dataset(py_uri))
        lance_cpp.run_ok(cpp_args[0], cpp_uri, *cpp_args[1:])
        py, cpp = lance.dataset(py_uri), lance.dataset(cpp_uri)
        key = "id"
        assert cpp.to_table().sort_by(key).equals(py.to_table().sort_by(key)), name
        assert _overlay_counts(cpp_uri) == _overlay_counts(py_uri), name
        assert cpp.version == py.version, name
        # Each side reads the other's result.
        _assert_reads_equal(lance_cpp, py_uri, tmp_path)
        _assert_reads_equal(lance_cpp, cpp_uri, tmp_path)


def _many_overlays(tmp_path: Path, name: str, count: int) -> Path:
    """One fragment of 10 rows with `count` single-cell overlays on x."""
    uri = tmp_path / f"{name}.lance"
    lance.write_dataset(_base(10), uri, data_storage_version="2.1")
    ov = Overlays(uri, "2.1")
    ov.commit([(0, [({"x": [1000.0 + k]}, [k % 10]) for k in range(count)])])
    return uri


CONFIG_KEY = "lance.compaction.max_overlays_per_fragment"


@pytest.mark.parametrize("count,config,flag", [
    (10, None, None), (11, None, None),   # the default, 10
    (1, "0", None), (20, "none", None),   # pylance's table config key, honoured by both
    (3, "2", None),
    (1, None, "0"), (20, None, "none"),   # lance-cpp's flag against the same config in pylance
])
def test_compaction_materializes_as_pylance(lance_cpp, tmp_path, count, config, flag):
    uri = _many_overlays(tmp_path, "src", count)
    if config is not None:
        lance.dataset(uri).update_config({CONFIG_KEY: config})
    py_uri = _copy(uri, tmp_path, "py.lance")
    cpp_uri = _copy(uri, tmp_path, "cpp.lance")
    if flag is not None:  # pylance takes it from the config only
        lance.dataset(py_uri).update_config({CONFIG_KEY: flag})
    metrics = lance.dataset(py_uri).optimize.compact_files()
    lance_cpp.run_ok("compact", cpp_uri, *(("--max-overlays-per-fragment", flag) if flag else ()))
    py, cpp = lance.dataset(py_uri), lance.dataset(cpp_uri)
    rewritten = metrics.fragments_removed > 0
    base = len(lance.dataset(uri).versions()) + (flag is not None)  # pylance's config commit
    assert len(cpp.versions()) - base + (flag is not None) == len(py.versions()) - base
    assert (len(py.versions()) > base) == rewritten
    assert _overlay_counts(cpp_uri) == _overlay_counts(py_uri)
    assert cpp.to_table().equals(py.to_table())
    if rewritten:  # the overlays became base data, and bit 64 went away
        assert all(not f.metadata.overlays for f in cpp.get_fragments())
    _assert_reads_equal(lance_cpp, py_uri, tmp_path)
    _assert_reads_equal(lance_cpp, cpp_uri, tmp_path)


def test_bad_config_value_is_refused(lance_cpp, tmp_path):
    uri = _many_overlays(tmp_path, "src", 2)
    lance.dataset(uri).update_config({CONFIG_KEY: "lots"})
    proc = lance_cpp.run("compact", uri)
    assert_clean_failure(proc, CONFIG_KEY, "lots")


def test_pylance_compacts_and_deletes_on_lance_cpp_writes(lance_cpp, tmp_path):
    """lance-cpp writes on pylance's overlaid dataset; pylance then deletes,
    appends and compacts on it; lance-cpp reads each step as pylance does."""
    uri = _overlaid(tmp_path, "2.1", True)
    lance_cpp.run_ok("delete", uri, "id = 3")
    _assert_reads_equal(lance_cpp, uri, tmp_path)
    ds = lance.dataset(uri)
    ds.delete("id = 0")
    lance.write_dataset(_base(2), uri, mode="append")
    _assert_reads_equal(lance_cpp, uri, tmp_path)
    lance.dataset(uri).update_config({CONFIG_KEY: "0"})
    lance.dataset(uri).optimize.compact_files()
    assert all(not f.metadata.overlays for f in lance.dataset(uri).get_fragments())
    _assert_reads_equal(lance_cpp, uri, tmp_path)


def test_cleanup_keeps_the_overlay_files(lance_cpp, tmp_path):
    uri = _overlaid(tmp_path, "2.2", False)
    before = lance.dataset(uri).to_table()
    lance_cpp.run_ok("cleanup", uri, "--older-than", "0", "--delete-unverified")
    names = {p.name for p in (uri / "data").iterdir()}
    for f in lance.dataset(uri).get_fragments():
        for o in f.metadata.overlays:
            assert o.data_file.path in names
    assert lance.dataset(uri).to_table().equals(before)
    _assert_reads_equal(lance_cpp, uri, tmp_path)


@pytest.mark.parametrize("kind", ["shallow-clone", "deep-clone"])
def test_clones_of_overlaid_versions_are_refused(lance_cpp, tmp_path, kind):
    """Overlay files are neither named through the clone's base path nor
    copied yet: lance-cpp refuses rather than make a clone that lost them."""
    uri = _overlaid(tmp_path, "2.2", False)
    target = tmp_path / "clone"
    proc = lance_cpp.run(kind, uri, target)
    assert_clean_failure(proc, "data overlay files", "does not clone yet")
    assert not target.exists() or not any(target.iterdir())



# --------------------------------------------------------------------------- #
# Overlays written by lance-cpp (update --overlay, the DataOverlay operation)
# --------------------------------------------------------------------------- #

def _plain(tmp_path: Path, version: str, stable: bool, name: str) -> Path:
    uri = tmp_path / f"{name}.lance"
    lance.write_dataset(_base(), uri, data_storage_version=version, max_rows_per_file=10,
                        enable_stable_row_ids=stable)
    lance.dataset(uri).delete("id = 4")
    return uri


UPDATE_SET = [("x", "x * 10"), ("s", "'new'")]
UPDATE_WHERE = "id in (1, 3, 8, 14, 29)"


@pytest.mark.parametrize("stable", [False, True], ids=["addr-ids", "stable-ids"])
@pytest.mark.parametrize("version", VERSIONS)
def test_lance_cpp_overlays_read_by_pylance(lance_cpp, tmp_path, version, stable):
    """update --overlay gives the rows pylance's update gives, read by pylance
    (and by lance-cpp) through the overlays, without rewriting any row."""
    uri = _plain(tmp_path, version, stable, "cpp")
    expected = _copy(uri, tmp_path, "expected.lance")
    before = [(f.fragment_id, [d.path for d in f.metadata.files]) for f in lance.dataset(uri).get_fragments()]
    args = [a for c, e in UPDATE_SET for a in ("--set", f"{c} = {e}")]
    out = lance_cpp.run_ok("update", uri, *args, "--where", UPDATE_WHERE, "--overlay")
    assert "updated 5 rows" in out.stdout
    lance.dataset(expected).update(dict(UPDATE_SET), where=UPDATE_WHERE)
    ds = lance.dataset(uri)
    # The rows are where they were: only overlays were added (fragments 0-2).
    assert [(f.fragment_id, [d.path for d in f.metadata.files]) for f in ds.get_fragments()] == before
    assert [len(f.metadata.overlays) for f in ds.get_fragments()] == [1, 1, 1]
    assert ds.to_table().sort_by("id").equals(lance.dataset(expected).to_table().sort_by("id"))
    rows_before = lance.dataset(uri, version=ds.version - 1).to_table(with_row_id=True)["_rowid"]
    assert ds.to_table(with_row_id=True)["_rowid"].equals(rows_before)  # row ids unchanged
    _assert_reads_equal(lance_cpp, uri, tmp_path)
    # pylance writes on lance-cpp's overlaid dataset; lance-cpp reads it.
    ds.delete("id = 3")
    lance.write_dataset(_base(2), uri, mode="append")
    _assert_reads_equal(lance_cpp, uri, tmp_path)


def test_update_overlay_is_refused_without_the_opt_in(lance_cpp, tmp_path, monkeypatch):
    uri = _plain(tmp_path, "2.1", False, "cpp")
    monkeypatch.delenv(OVERLAY_ENV)
    files = sorted(p.name for p in uri.rglob("*"))
    proc = lance_cpp.run("update", uri, "--set", "x = 1", "--where", "id = 1", "--overlay")
    assert_clean_failure(proc, "overlay", OVERLAY_ENV)
    assert sorted(p.name for p in uri.rglob("*")) == files  # nothing written


def test_update_overlay_disable_transaction_file(lance_cpp, tmp_path):
    """update --overlay --disable-transaction-file records the DataOverlay
    only inline (no _transactions/ file, writer flag 32), as update does
    without --overlay; pylance reads the overlaid rows."""
    import manifest_wire as wire

    uri = _plain(tmp_path, "2.1", False, "d")
    expected = _copy(uri, tmp_path, "expected.lance")
    transactions = set(p.name for p in (uri / "_transactions").iterdir())
    args = [a for c, e in UPDATE_SET for a in ("--set", f"{c} = {e}")]
    lance_cpp.run_ok("update", uri, *args, "--where", UPDATE_WHERE, "--overlay", "--disable-transaction-file")
    ds = lance.dataset(uri)
    assert [len(f.metadata.overlays) for f in ds.get_fragments()] == [1, 1, 1]
    assert set(p.name for p in (uri / "_transactions").iterdir()) == transactions
    manifest = wire.read_manifest_file(wire.manifest_path(uri, ds.version))["manifest"]
    assert "transaction_file" not in manifest
    assert manifest.get("writer_feature_flags", [0])[0] & 32
    lance.dataset(expected).update(dict(UPDATE_SET), where=UPDATE_WHERE)
    assert ds.to_table().sort_by("id").equals(lance.dataset(expected).to_table().sort_by("id"))


@pytest.mark.parametrize("stable", [False, True], ids=["addr-ids", "stable-ids"])
@pytest.mark.parametrize("version", ["2.0", "2.2"])
def test_data_overlay_manifest_matches_pylance(lance_cpp, tmp_path, version, stable):
    """The same DataOverlay committed by each side (lance-cpp's update
    --overlay; pylance's LanceOperation.DataOverlay with the very overlay
    files lance-cpp wrote) gives the same manifest and transaction."""
    from test_manifest_parity import Renamer, _base_names, _listing, committed, diff

    base = _plain(tmp_path, version, stable, "base")
    ours, theirs = _copy(base, tmp_path, "cpp.lance"), _copy(base, tmp_path, "py.lance")
    kept_paths, kept_ids = _base_names(ours)
    base_listing = _listing(ours)
    args = [a for c, e in UPDATE_SET for a in ("--set", f"{c} = {e}")]
    lance_cpp.run_ok("update", ours, *args, "--where", UPDATE_WHERE, "--overlay")
    groups = []
    for frag in lance.dataset(ours).get_fragments():
        files = []
        for o in frag.metadata.overlays:
            shutil.copy(ours / "data" / o.data_file.path, theirs / "data" / o.data_file.path)
            d = o.data_file
            files.append(LanceOperation.DataOverlayFile(
                DataFile(d.path, list(d.fields), list(d.column_indices), d.file_major_version,
                         d.file_minor_version, d.file_size_bytes), list(o.offsets)))
        if files:
            groups.append(LanceOperation.DataOverlayGroup(frag.fragment_id, files))
    lance.LanceDataset.commit(str(theirs), LanceOperation.DataOverlay(groups),
                              read_version=lance.dataset(theirs).version)
    a = committed(ours, base_listing, Renamer(kept_paths, kept_ids))
    b = committed(theirs, base_listing, Renamer(kept_paths, kept_ids))
    problems = []
    for part in ("version", "manifest", "transaction", "index_section", "added", "removed"):
        problems += [f"{part}: {d}" for d in diff(a[part], b[part])]
    assert not problems, "\n".join(problems)
    assert lance.dataset(ours).to_table().equals(lance.dataset(theirs).to_table())
