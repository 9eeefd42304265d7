"""update and merge-insert on 2.2 datasets with a blob v2 column, both ways.

pylance 14 rewrites a changed row whole: its blob bytes are read and written
anew beside the new data file (inline, packed or dedicated by the field's
thresholds, blob ids counted from 1 again). lance-cpp does the same, so after
the same operation on two copies of one dataset both libraries see the same
rows, the same descriptors and the same bytes from take_blobs."""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

import lance
from conftest import assert_clean_failure, lance_cpp_binary

WHERE = "id % 3 = 1"


def _run(*args):
    return subprocess.run([str(lance_cpp_binary()), *map(str, args)], capture_output=True, text=True, timeout=120)


def _run_ok(*args):
    proc = _run(*args)
    assert proc.returncode == 0, proc.stderr
    return proc


def _write_ipc(path, table):
    with ipc.new_file(str(path), table.schema) as w:
        w.write_table(table)
    return path


def _field():
    from lance.blob import blob_field
    return blob_field("b", inline_size_threshold=16, dedicated_size_threshold=100)


def _values(seed: int, n: int) -> list:
    """Inline (<= 16 bytes), packed (<= 100) and dedicated (> 100) values, nulls and an empty one."""
    rng = np.random.default_rng(seed)
    values = [None if rng.random() < 0.1 else bytes(rng.integers(0, 256, int(k), dtype=np.uint8))
              for k in rng.integers(0, 250, n)]
    values[:5] = [b"", None, b"i" * 10, b"p" * 60, b"d" * 180][:n]
    return values


def _table(ids, seed: int) -> pa.Table:
    from lance.blob import blob_array
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "x": pa.array([i * 3 + seed for i in ids], pa.int32()),
                     "b": blob_array(_values(seed, len(ids)))},
                    schema=pa.schema([pa.field("id", pa.int64()), pa.field("x", pa.int32()), _field()]))


def _sorted(ds) -> pa.Table:
    return ds.to_table().sort_by("id")


def _blobs_by_id(ds) -> dict:
    """id -> bytes, from pylance's take_blobs."""
    ids = ds.to_table(columns=["id"])["id"].to_pylist()
    files = ds.take_blobs("b", indices=list(range(len(ids))))
    return {i: None if f is None else f.read() for i, f in zip(ids, files)}


def _cpp_scan(tmp_path, uri) -> pa.Table:
    out = tmp_path / "scan.arrow"
    _run_ok("scan", uri, "--out", out)
    return ipc.open_file(str(out)).read_all()


def _sidecars(uri) -> int:
    return sum(f.endswith(".blob") for _, _, fs in os.walk(uri / "data") for f in fs)


def _assert_same(tmp_path, ours, theirs, want_blobs: dict):
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert _sorted(a).to_pylist() == _sorted(b).to_pylist()  # descriptors included
    assert _blobs_by_id(a) == want_blobs
    assert _blobs_by_id(b) == want_blobs
    got = _cpp_scan(tmp_path, ours)
    assert got.sort_by("id").to_pylist() == _sorted(a).to_pylist()
    assert _sidecars(ours) == _sidecars(theirs)


def test_lance_cpp_rewrites_pylance_blob_v2_rows(tmp_path):
    """pylance creates (two fragments, every blob kind); lance-cpp updates
    and merge-inserts one copy, pylance the other; both agree and
    take_blobs gives the right bytes, kept for rewritten rows."""
    first = _table(range(120), 1)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    lance.write_dataset(first, ours, data_storage_version="2.2", max_rows_per_file=70)
    shutil.copytree(ours, theirs)
    kinds = {d["kind"] for d in lance.dataset(ours).to_table()["b"].to_pylist() if d}
    assert kinds == {0, 1, 2}
    blobs = dict(zip(first["id"].to_pylist(), _values(1, 120)))

    # update: non-blob columns change, blob values move to the new file.
    proc = _run_ok("update", ours, "--set", "x = x + 1000", "--where", WHERE)
    assert "40" in proc.stdout
    lance.dataset(theirs).update({"x": "x + 1000"}, where=WHERE)
    _assert_same(tmp_path, ours, theirs, blobs)
    assert lance.dataset(ours).to_table(filter="id = 4")["x"].to_pylist() == [4 * 3 + 1 + 1000]

    # merge-insert with a partial source (no blob column): matched rows keep their blobs.
    partial = pa.table({"id": pa.array([3, 4, 10, 64, 100], pa.int64()), "x": pa.array([-1] * 5, pa.int32())})
    _run_ok("merge-insert", ours, "--on", "id", "--input", _write_ipc(tmp_path / "p.arrow", partial),
            "--when-matched-update-all")
    lance.dataset(theirs).merge_insert("id").when_matched_update_all().execute(partial)
    _assert_same(tmp_path, ours, theirs, blobs)

    # merge-insert with blob values: matched rows take the new bytes, new rows are inserted.
    source = _table([5, 6, 64, 200, 201, 202], 2)
    _run_ok("merge-insert", ours, "--on", "id", "--input", _write_ipc(tmp_path / "s.arrow", source),
            "--when-matched-update-all", "--when-not-matched-insert-all")
    lance.dataset(theirs).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(source)
    blobs.update(zip(source["id"].to_pylist(), _values(2, 6)))
    _assert_same(tmp_path, ours, theirs, blobs)

    # Plain binary input (no blob key) for the blob column works too.
    plain = pa.table({"id": pa.array([7, 300], pa.int64()), "x": pa.array([0, 0], pa.int32()),
                      "b": pa.array([b"q" * 70, b"r" * 5], pa.large_binary())})
    _run_ok("merge-insert", ours, "--on", "id", "--input", _write_ipc(tmp_path / "plain.arrow", plain),
            "--when-matched-update-all", "--when-not-matched-insert-all")
    blobs.update({7: b"q" * 70, 300: b"r" * 5})
    assert _blobs_by_id(lance.dataset(ours)) == blobs


def test_pylance_rewrites_lance_cpp_blob_v2_rows(tmp_path):
    """lance-cpp creates; pylance updates and merge-inserts; lance-cpp reads
    what pylance reads, then updates again and pylance reads the bytes."""
    first = _table(range(90), 3)
    uri = tmp_path / "ds"
    _run_ok("write", uri, "--input", _write_ipc(tmp_path / "a.arrow", first), "--data-storage-version", "2.2",
            "--max-rows-per-file", 50)
    blobs = dict(zip(first["id"].to_pylist(), _values(3, 90)))
    ds = lance.dataset(uri)
    ds.update({"x": "x * 2"}, where=WHERE)
    source = _table([1, 2, 95], 4)
    lance.dataset(uri).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(source)
    blobs.update(zip(source["id"].to_pylist(), _values(4, 3)))
    ds = lance.dataset(uri)
    assert _blobs_by_id(ds) == blobs
    got = _cpp_scan(tmp_path, uri)
    assert got.sort_by("id").to_pylist() == _sorted(ds).to_pylist()

    _run_ok("update", uri, "--set", "x = 0", "--where", "id < 10")
    ds = lance.dataset(uri)
    assert _blobs_by_id(ds) == blobs
    assert ds.to_table(filter="id < 10")["x"].to_pylist() == [0] * 10


def test_blob_v2_refusals(tmp_path):
    """Setting a blob column is refused, as pylance refuses it; rewriting a
    row whose blob is an external URI is refused (lance-cpp writes no
    external blobs). Nothing is left behind."""
    from lance.blob import Blob, blob_array

    external = tmp_path / "external.bin"
    external.write_bytes(bytes(range(100)))
    table = pa.table({"id": pa.array(range(3), pa.int64()), "x": pa.array(range(3), pa.int32()),
                      "b": blob_array([b"a" * 5, Blob.from_uri(external.as_uri(), position=3, size=5), b"d" * 200])},
                     schema=pa.schema([pa.field("id", pa.int64()), pa.field("x", pa.int32()), _field()]))
    uri = tmp_path / "ds"
    lance.write_dataset(table, uri, data_storage_version="2.2", allow_external_blob_outside_bases=True)
    before = sorted(os.listdir(uri / "data"))

    assert_clean_failure(_run("update", uri, "--set", "b = NULL"), "'b'", "blob v2")
    assert_clean_failure(_run("update", uri, "--set", "x = 7"), "'b'", "external")
    partial = pa.table({"id": pa.array([1], pa.int64()), "x": pa.array([9], pa.int32())})
    assert_clean_failure(_run("merge-insert", uri, "--on", "id", "--input", _write_ipc(tmp_path / "p.arrow", partial),
                              "--when-matched-update-all"), "'b'", "external")
    assert sorted(os.listdir(uri / "data")) == before
    assert lance.dataset(uri).version == 1

    # Rows without external blobs are rewritten.
    _run_ok("update", uri, "--set", "x = 7", "--where", "id != 1")
    ds = lance.dataset(uri)
    assert _blobs_by_id(ds) == {0: b"a" * 5, 1: bytes(range(3, 8)), 2: b"d" * 200}
    assert sorted(ds.to_table()["x"].to_pylist()) == [1, 7, 7]
