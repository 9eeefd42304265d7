"""Feature flags against real pylance datasets: lance-cpp accepts a bit only
where it implements the bit's meaning (src/lance/table/feature_flags.h).

* Data overlay files (bit 64), written by pylance's DataOverlay operation,
  change cell values on read. As pylance 14, lance-cpp accepts the bit only
  with the opt-in LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES set: without it
  every reader and writer refuses such a dataset with an "upgrade" error and
  writes nothing; versions before the overlay still read. With it the
  overlaid values are read (test_overlays.py covers the reads and writes).
* A reader bit lance-cpp does not know stops its writers too (a commit is
  built from content it must read), as it stops pylance's.
* Mixed data file versions (bit 256), which pylance writes when fragments of
  another file version are appended, read and write both ways.
Base paths (bit 16) have their own file, test_base_paths.py.
"""
from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from lance.dataset import LanceOperation
from lance.file import LanceFileWriter
from lance.fragment import DataFile, LanceFragment

from conftest import assert_clean_failure
import manifest_wire

OVERLAY_ENV = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES"


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def _write_ipc(path: Path, table: pa.Table) -> Path:
    with ipc.new_file(str(path), table.schema) as w:
        w.write_table(table)
    return path


def _scan(lance_cpp, uri: Path, tmp_path: Path, *extra: str) -> pa.Table:
    out = tmp_path / f"scan-{len(list(tmp_path.iterdir()))}.arrow"
    lance_cpp.run_ok("scan", uri, "--out", out, *extra)
    with pa.memory_map(str(out)) as f:
        return ipc.open_file(f).read_all()


def _base_table() -> pa.Table:
    return pa.table({"id": pa.array([0, 1, 2, 3], pa.int64()), "x": pa.array([1.0, 2.0, 3.0, 4.0])})


def _overlay_dataset(uri: Path, version: str) -> None:
    """v1: four rows; v2: a DataOverlay giving row 0 of fragment 0 x = 100."""
    ds = lance.write_dataset(_base_table(), uri, data_storage_version=version)
    name = "overlay-0.lance"
    writer = LanceFileWriter(str(uri / "data" / name), pa.schema([("x", pa.float64())]), version=version)
    writer.write_batch(pa.table({"x": pa.array([100.0])}))
    writer.close()
    x_id = next(f.id() for f in ds.lance_schema.fields() if f.name() == "x")
    major, minor = (int(p) for p in version.split("."))
    overlay = LanceOperation.DataOverlayFile(DataFile(name, [x_id], [0], major, minor), [0])
    op = LanceOperation.DataOverlay([LanceOperation.DataOverlayGroup(0, [overlay])])
    lance.LanceDataset.commit(str(uri), op, read_version=ds.version)


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_overlay_dataset_is_refused_without_the_opt_in(lance_cpp, tmp_path, monkeypatch, version):
    uri = tmp_path / "overlay.lance"
    _overlay_dataset(uri, version)
    # The hazard is real: pylance, opted in, reads the overlaid value.
    monkeypatch.setenv(OVERLAY_ENV, "1")
    ds = lance.dataset(uri)
    assert ds.to_table()["x"].to_pylist() == [100.0, 2.0, 3.0, 4.0]
    assert ds.get_fragments()[0].metadata.overlays
    v1 = lance.dataset(uri, version=1).to_table()
    # With the opt-in (subprocesses inherit it) lance-cpp reads what pylance reads.
    assert _scan(lance_cpp, uri, tmp_path).equals(ds.to_table())
    assert _scan(lance_cpp, uri, tmp_path, "--filter", "x > 50").equals(ds.to_table(filter="x > 50"))
    monkeypatch.delenv(OVERLAY_ENV)
    with pytest.raises(Exception, match="upgrade"):
        lance.dataset(uri)
    latest = [p for p in (uri / "_versions").iterdir() if p.suffix == ".manifest"]
    src = _write_ipc(tmp_path / "rows.arrow", _base_table())
    reads = [("scan", uri), ("scan", uri, "--filter", "x > 50"), ("count", uri),
             ("take", uri, "--indices", "0"), ("inspect", uri), ("inspect", uri, "--json")]
    writes = [("delete", uri, "id = 1"),
              ("update", uri, "--set", "x = 5", "--where", "id = 2"),
              ("write", uri, "--input", src, "--mode", "append"),
              ("write", uri, "--input", src, "--mode", "overwrite"),
              ("merge-insert", uri, "--on", "id", "--input", src, "--when-matched-update-all"),
              ("restore", uri, "1"),
              ("cleanup", uri, "--older-than", "0", "--delete-unverified")]
    before = _tree(uri)
    for args in reads + writes:
        proc = lance_cpp.run(*args)
        # What (the bit, by name) and where (the manifest of the version).
        assert_clean_failure(proc, "upgrade", "64 (data overlay files)", OVERLAY_ENV, "_versions/")
        assert any(p.name in proc.stderr for p in latest), proc.stderr
        assert _tree(uri) == before, f"{args[0]} changed the dataset"
    # The version before the overlay reads as pylance reads it.
    assert _scan(lance_cpp, uri, tmp_path, "--version", "1").equals(v1)
    assert lance_cpp.run_ok("count", uri, "--version", "1").stdout.strip() == "4"


def _patch_flags(manifest: Path, field: int, flags: int) -> None:
    manifest_wire.patch_varint_field(manifest, field, flags)


def test_unknown_reader_bit_stops_writers_too(lance_cpp, tmp_path):
    uri = tmp_path / "ds.lance"
    lance.write_dataset(_base_table(), uri)
    lance.dataset(uri).delete("id = 3")
    latest = max((p for p in (uri / "_versions").iterdir() if p.suffix == ".manifest"),
                 key=lambda p: p.stat().st_mtime_ns)
    _patch_flags(latest, 9, 1 | (1 << 40))  # deletion files + an unknown reader bit
    # pylance refuses to write it too.
    with pytest.raises(Exception, match="upgrade"):
        lance.write_dataset(_base_table(), uri, mode="append")
    src = _write_ipc(tmp_path / "rows.arrow", _base_table())
    before = _tree(uri)
    for args in (("scan", uri), ("delete", uri, "id = 1"),
                 ("write", uri, "--input", src, "--mode", "append"),
                 ("update", uri, "--set", "x = 5"), ("restore", uri, "1"),
                 ("cleanup", uri, "--older-than", "0")):
        assert_clean_failure(lance_cpp.run(*args), "upgrade", str(1 | (1 << 40)))
        assert _tree(uri) == before, f"{args[0]} changed the dataset"


@pytest.mark.parametrize("first,second", [("2.0", "2.1"), ("2.1", "2.2")])
def test_mixed_data_file_versions_read_and_write(lance_cpp, tmp_path, first, second):
    """Bit 256: fragments of another file version appended by pylance. Each
    file is read by its own version; lance-cpp's writes keep the bit."""
    uri = tmp_path / "mixed.lance"
    rows = lambda ids: pa.table({"id": pa.array(ids, pa.int64()),  # noqa: E731
                                 "s": pa.array([f"v{i}" for i in ids])})
    ds = lance.write_dataset(rows(range(6)), uri, data_storage_version=first)
    frag = LanceFragment.create(str(uri), rows(range(6, 9)), data_storage_version=second)
    ds = lance.LanceDataset.commit(str(uri), LanceOperation.Append([frag]), read_version=ds.version)
    flags = lance_cpp.inspect(uri)
    assert flags["reader_feature_flags"] & 256 and flags["writer_feature_flags"] & 256
    assert _scan(lance_cpp, uri, tmp_path).equals(ds.to_table())

    lance_cpp.run_ok("delete", uri, "id = 1 OR id = 7")
    lance_cpp.run_ok("update", uri, "--set", "s = 'u'", "--where", "id = 8")
    lance_cpp.run_ok("write", uri, "--mode", "append", "--input", _write_ipc(tmp_path / "more.arrow",
                                                                           rows(range(9, 11))))
    ds = lance.dataset(uri)
    assert ds.to_table().sort_by("id")["id"].to_pylist() == [0, 2, 3, 4, 5, 6, 8, 9, 10]
    assert ds.to_table(filter="id = 8")["s"].to_pylist() == ["u"]
    assert _scan(lance_cpp, uri, tmp_path).equals(ds.to_table())
    versions = {(f.file_major_version, f.file_minor_version)
                for fr in ds.get_fragments() for f in fr.metadata.files}
    assert len(versions) >= 2
    flags = lance_cpp.inspect(uri)
    assert flags["reader_feature_flags"] & 256 and flags["writer_feature_flags"] & 256
    # pylance writes on top of lance-cpp's commit.
    ds.delete("id = 0")
    assert _scan(lance_cpp, uri, tmp_path).equals(lance.dataset(uri).to_table())
    assert os.path.isdir(uri / "_deletions")
