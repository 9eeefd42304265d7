"""Blob columns at the dataset level (lance-encoding:blob on a large_binary
field). In 2.0 and 2.1 datasets both libraries store blob v1 files: lance-cpp
creates and appends, pylance reads the descriptions and take_blobs the
values, and each reads what the other wrote. 2.2 datasets keep blobs as blob
v2 descriptions, which lance-cpp reads as pylance's to_table does but refuses
to write (with nothing left behind)."""
from __future__ import annotations

import os
import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from conftest import assert_clean_failure, lance_cpp_binary

BLOB_META = {"lance-encoding:blob": "true"}


def _table(seed: int, n: int, meta=True) -> pa.Table:
    rng = np.random.default_rng(seed)
    values = [None if rng.random() < 0.15 else bytes(rng.integers(0, 256, int(k), dtype=np.uint8))
              for k in rng.integers(0, 400, n)]
    values[0] = b""
    schema = pa.schema([pa.field("id", pa.int64()),
                        pa.field("b", pa.large_binary(), metadata=BLOB_META if meta else None)])
    return pa.table({"id": pa.array(range(seed * 1000, seed * 1000 + n), pa.int64()),
                     "b": pa.array(values, pa.large_binary())}, schema=schema)


def _run(*args):
    return subprocess.run([str(lance_cpp_binary()), *map(str, args)], capture_output=True, text=True, timeout=120)


def _write_ipc(path, table):
    with ipc.new_file(str(path), table.schema) as w:
        w.write_table(table, max_chunksize=100)
    return path


def _cpp_scan(tmp_path, uri) -> pa.Table:
    out = tmp_path / "scan.arrow"
    proc = _run("scan", uri, "--out", out)
    assert proc.returncode == 0, proc.stderr
    return ipc.open_file(str(out)).read_all()


def _blob_values(ds) -> list:
    # take_blobs gives None for a null row
    files = ds.take_blobs("b", indices=list(range(ds.count_rows())))
    return [None if f is None else f.read() for f in files]


@pytest.mark.parametrize("version", ["2.0", "2.1"])
@pytest.mark.parametrize("creator", ["lance-cpp", "pylance"])
def test_blob_dataset_both_ways(tmp_path, version, creator):
    uri = tmp_path / "ds"
    first, second, third = _table(1, 250), _table(2, 120, meta=False), _table(3, 90)
    if creator == "pylance":
        lance.write_dataset(first, uri, data_storage_version=version, max_rows_per_file=200)
    else:
        proc = _run("write", uri, "--input", _write_ipc(tmp_path / "a.arrow", first),
                    "--data-storage-version", version, "--max-rows-per-file", 200)
        assert proc.returncode == 0, proc.stderr
    # The dataset's schema keeps the blob key, so input without it is written as blobs too.
    proc = _run("write", uri, "--input", _write_ipc(tmp_path / "b.arrow", second), "--mode", "append")
    assert proc.returncode == 0, proc.stderr
    ds = lance.dataset(uri)
    assert ds.data_storage_version == version
    assert ds.schema.field("b").metadata == {b"lance-encoding:blob": b"true"}
    want = pa.concat_tables([first, second.cast(first.schema)])
    assert _blob_values(ds) == want["b"].to_pylist()
    # pylance appends; we read everything back.
    ds = lance.write_dataset(third, uri, mode="append")
    want = pa.concat_tables([want, third])
    assert _blob_values(lance.dataset(uri)) == want["b"].to_pylist()
    got = _cpp_scan(tmp_path, uri)
    assert got["id"].to_pylist() == want["id"].to_pylist()
    assert got["b"].to_pylist() == want["b"].to_pylist()


def test_blob_columns_in_2_2_datasets_are_refused(tmp_path):
    table = _table(4, 20)
    src = _write_ipc(tmp_path / "a.arrow", table)
    uri = tmp_path / "ds"
    assert_clean_failure(_run("write", uri, "--input", src, "--data-storage-version", "2.2"), "'b'", "2.2")
    assert not (uri / "data").exists() or not any((uri / "data").iterdir())
    # Appending to pylance's 2.2 blob dataset is refused too, nothing written.
    lance.write_dataset(table, uri, data_storage_version="2.2")
    before = sorted(os.listdir(uri / "data"))
    assert_clean_failure(_run("write", uri, "--input", src, "--mode", "append"), "'b'", "blob v2")
    assert sorted(os.listdir(uri / "data")) == before
    assert lance.dataset(uri).count_rows() == 20



def _blob_v2_table(seed: int, n: int, external_uri: str) -> pa.Table:
    """Blob v2 values of every kind: with the thresholds below, up to 16 bytes
    stay inline, up to 100 go to a shared .blob file (packed), larger ones to a
    .blob file of their own (dedicated); strings are external URIs."""
    from lance.blob import Blob, blob_array, blob_field

    rng = np.random.default_rng(seed)
    values = [None if rng.random() < 0.15 else bytes(rng.integers(0, 256, int(k), dtype=np.uint8))
              for k in rng.integers(0, 300, n)]
    values[0] = b""
    values[1] = None
    values[2] = Blob.from_uri(external_uri, position=3, size=5)
    values[3] = external_uri
    field = blob_field("b", inline_size_threshold=16, dedicated_size_threshold=100)
    return pa.table({"id": pa.array(range(seed * 1000, seed * 1000 + n), pa.int64()),
                     "b": blob_array(values)}, schema=pa.schema([pa.field("id", pa.int64()), field]))


def _cpp_take(tmp_path, uri, indices) -> pa.Table:
    out = tmp_path / "take.arrow"
    proc = _run("take", uri, "--indices", ",".join(map(str, indices)), "--out", out)
    assert proc.returncode == 0, proc.stderr
    return ipc.open_file(str(out)).read_all()


def test_blob_v2_dataset_made_by_pylance_reads_as_descriptors(tmp_path):
    """pylance's 2.2 blob columns are blob v2: to_table gives one descriptor
    struct per row (kind, position, size, blob_id, blob_uri). lance-cpp's scan
    and take give the same structs, over several fragments, an append and a
    delete."""
    uri = tmp_path / "ds"
    external = tmp_path / "external.bin"
    external.write_bytes(bytes(range(100)))
    ext_uri = external.as_uri()
    lance.write_dataset(_blob_v2_table(1, 150, ext_uri), uri, data_storage_version="2.2", max_rows_per_file=60,
                        allow_external_blob_outside_bases=True)
    ds = lance.write_dataset(_blob_v2_table(2, 40, ext_uri), uri, mode="append",
                             allow_external_blob_outside_bases=True)
    ds.delete("id % 7 = 3")
    ds = lance.dataset(uri)
    assert len(ds.get_fragments()) == 4
    want = ds.to_table()
    kinds = {d["kind"] for d in want["b"].to_pylist() if d is not None}
    assert kinds == {0, 1, 2, 3}, kinds  # inline, packed, dedicated, external
    assert want["b"].null_count > 0

    got = _cpp_scan(tmp_path, uri)
    assert got.schema.field("b").type == want.schema.field("b").type
    assert got.schema.field("b").metadata == want.schema.field("b").metadata
    assert got["id"].to_pylist() == want["id"].to_pylist()
    assert got["b"].to_pylist() == want["b"].to_pylist()

    n = ds.count_rows()
    indices = [0, 1, 2, 3, 50, 51, 52, 120, n - 30, n - 2, n - 1]
    took = _cpp_take(tmp_path, uri, indices)
    assert took["id"].to_pylist() == ds.take(indices)["id"].to_pylist()
    assert took["b"].to_pylist() == ds.take(indices)["b"].to_pylist()
