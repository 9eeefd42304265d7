"""Blob columns at the dataset level (lance-encoding:blob on a large_binary
field). In 2.0 and 2.1 datasets both libraries store blob v1 files: lance-cpp
creates and appends, pylance reads the descriptions and take_blobs the
values, and each reads what the other wrote. 2.2 datasets keep blobs as blob
v2 descriptions, which lance-cpp reads as pylance's to_table does and writes
for inline values (larger ones and URIs are refused, nothing left behind)."""
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


def test_blob_v2_inline_both_ways(tmp_path):
    """A binary blob column goes into a 2.2 dataset as blob v2, inline, as
    pylance lays it out: the same descriptors as pylance's for the same
    input, the same bytes from take_blobs; appends both ways read back in
    both libraries."""
    first, second, third = _table(5, 250), _table(6, 120, meta=False), _table(7, 90)
    src = _write_ipc(tmp_path / "a.arrow", first)
    uri, ref = tmp_path / "ds", tmp_path / "ref"
    proc = _run("write", uri, "--input", src, "--data-storage-version", "2.2", "--max-rows-per-file", 200)
    assert proc.returncode == 0, proc.stderr
    lance.write_dataset(first, ref, data_storage_version="2.2", max_rows_per_file=200)
    ds, want = lance.dataset(uri), lance.dataset(ref)
    assert ds.data_storage_version == "2.2"
    assert ds.schema == want.schema
    assert [f.metadata.files[0].fields for f in ds.get_fragments()] == [[0, 1], [0, 1]]
    assert ds.to_table()["b"].to_pylist() == want.to_table()["b"].to_pylist()
    assert _blob_values(ds) == first["b"].to_pylist()

    # lance-cpp appends to pylance's dataset (input without the blob key),
    # pylance appends to lance-cpp's; both read everything.
    proc = _run("write", ref, "--input", _write_ipc(tmp_path / "b.arrow", second), "--mode", "append")
    assert proc.returncode == 0, proc.stderr
    proc = _run("write", uri, "--input", _write_ipc(tmp_path / "b2.arrow", second), "--mode", "append")
    assert proc.returncode == 0, proc.stderr
    lance.write_dataset(third, uri, mode="append")
    lance.write_dataset(third, ref, mode="append")
    values = first["b"].to_pylist() + second["b"].to_pylist() + third["b"].to_pylist()
    ds, want = lance.dataset(uri), lance.dataset(ref)
    assert _blob_values(ds) == values
    assert _blob_values(want) == values
    assert ds.to_table()["b"].to_pylist() == want.to_table()["b"].to_pylist()
    for d in (uri, ref):
        got = _cpp_scan(tmp_path, d)
        assert got["id"].to_pylist() == want.to_table()["id"].to_pylist()
        assert got["b"].to_pylist() == want.to_table()["b"].to_pylist()


def test_blob_v2_struct_input_and_refusals(tmp_path):
    """pylance's own blob array as input, both ways; external URIs outside
    registered base paths are refused without consent, nothing left behind."""
    from lance.blob import Blob, blob_array, blob_field

    field = blob_field("b", inline_size_threshold=16, dedicated_size_threshold=100)
    values = [b"abc", None, b"", b"0123456789abcdef"]
    table = pa.table({"id": pa.array(range(4), pa.int64()), "b": blob_array(values)},
                     schema=pa.schema([pa.field("id", pa.int64()), field]))
    uri, ref = tmp_path / "ds", tmp_path / "ref"
    proc = _run("write", uri, "--input", _write_ipc(tmp_path / "a.arrow", table))
    assert proc.returncode == 0, proc.stderr
    lance.write_dataset(table, ref, data_storage_version="2.2")
    ds = lance.dataset(uri)
    assert ds.schema == lance.dataset(ref).schema
    assert ds.to_table()["b"].to_pylist() == lance.dataset(ref).to_table()["b"].to_pylist()
    assert _blob_values(ds) == values

    # Plain binary appended to pylance's blob_field() dataset (whose struct
    # has position/size children too); pylance appends its blob array to ours.
    more = pa.table({"id": pa.array([4, 5], pa.int64()), "b": pa.array([b"xy", None], pa.large_binary())})
    proc = _run("write", ref, "--input", _write_ipc(tmp_path / "more.arrow", more), "--mode", "append")
    assert proc.returncode == 0, proc.stderr
    lance.write_dataset(table, uri, mode="append")
    assert _blob_values(lance.dataset(ref)) == values + [b"xy", None]
    assert _blob_values(lance.dataset(uri)) == values + values
    got = _cpp_scan(tmp_path, ref)
    assert got["b"].to_pylist() == lance.dataset(ref).to_table()["b"].to_pylist()

    # An external URI outside any base is refused; the .blob files of the rows before it go too.
    before = _files(uri / "data")
    ext = pa.table({"id": pa.array([9, 10], pa.int64()), "b": blob_array([b"p" * 40, Blob.from_uri("file:///x")])},
                   schema=table.schema)
    assert_clean_failure(_run("write", uri, "--input", _write_ipc(tmp_path / "ext.arrow", ext), "--mode", "append"),
                         "'b'", "external")
    assert _files(uri / "data") == before
    assert lance.dataset(uri).count_rows() == 8


def _files(root) -> list:
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def test_blob_v2_packed_and_dedicated_as_pylance(tmp_path):
    """Values over the inline threshold go to .blob files beside the data
    file as pylance puts them: a shared pack file (rolled over at its size
    limit) and dedicated files, ids counted per data file. The descriptors
    and file names equal pylance's for the same input; both read each
    other's bytes."""
    from lance.blob import blob_array, blob_field

    field = blob_field("b", inline_size_threshold=16, dedicated_size_threshold=100, pack_file_size_threshold=120)
    rng = np.random.default_rng(8)
    values = [None if rng.random() < 0.1 else bytes(rng.integers(0, 256, int(k), dtype=np.uint8))
              for k in rng.integers(0, 160, 70)]
    values[:4] = [b"", None, b"x" * 16, b"y" * 17]
    table = pa.table({"id": pa.array(range(70), pa.int64()), "b": blob_array(values)},
                     schema=pa.schema([pa.field("id", pa.int64()), field]))
    uri, ref = tmp_path / "ds", tmp_path / "ref"
    proc = _run("write", uri, "--input", _write_ipc(tmp_path / "a.arrow", table), "--max-rows-per-file", 30)
    assert proc.returncode == 0, proc.stderr
    lance.write_dataset(table, ref, data_storage_version="2.2", max_rows_per_file=30)
    ds, want = lance.dataset(uri), lance.dataset(ref)
    got_desc, want_desc = ds.to_table()["b"].to_pylist(), want.to_table()["b"].to_pylist()
    assert {d["kind"] for d in want_desc if d} == {0, 1, 2}
    assert got_desc == want_desc
    sidecars = lambda root: sorted(os.path.basename(f) for f in _files(root / "data") if f.endswith(".blob"))
    assert sidecars(uri) == sidecars(ref)
    assert _blob_values(ds) == values

    # Binary input appended by lance-cpp to pylance's dataset, pylance's
    # append to ours; both libraries read all of it.
    more = pa.table({"id": pa.array([70, 71, 72], pa.int64()),
                     "b": pa.array([b"z" * 300, b"w" * 50, None], pa.large_binary())})
    proc = _run("write", ref, "--input", _write_ipc(tmp_path / "more.arrow", more), "--mode", "append")
    assert proc.returncode == 0, proc.stderr
    lance.write_dataset(table, uri, mode="append")
    assert _blob_values(lance.dataset(ref)) == values + more["b"].to_pylist()
    assert _blob_values(lance.dataset(uri)) == values + values
    for d in (uri, ref):
        got = _cpp_scan(tmp_path, d)
        assert got["b"].to_pylist() == lance.dataset(d).to_table()["b"].to_pylist()


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
