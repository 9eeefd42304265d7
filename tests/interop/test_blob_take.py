"""Blob values as bytes: lance-cpp's `take-blobs` against pylance's
take_blobs(...).read() on datasets pylance writes (blob v2 of every kind:
inline, packed, dedicated, external; legacy blob columns of 2.0/2.1), by
indices, row ids and addresses, random, repeated and unsorted, with
deletions. And external URIs written by lance-cpp: the descriptors pylance
stores for the same input, read back by both libraries; refused where
pylance refuses."""
from __future__ import annotations

import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from conftest import assert_clean_failure, lance_cpp_binary


def _run(*args):
    return subprocess.run([str(lance_cpp_binary()), *map(str, args)], capture_output=True, text=True, timeout=120)


def _write_ipc(path, table):
    with ipc.new_file(str(path), table.schema) as w:
        w.write_table(table, max_chunksize=50)
    return path


def _cpp_take_blobs(tmp_path, uri, flag, rows, column="b") -> list:
    out = tmp_path / "blobs.arrow"
    proc = _run("take-blobs", uri, column, flag, ",".join(map(str, rows)), "--out", out)
    assert proc.returncode == 0, proc.stderr
    table = ipc.open_file(str(out)).read_all()
    assert table.schema.field(column).type == pa.large_binary()
    return table[column].to_pylist()


def _py_take_blobs(ds, column="b", **rows) -> list:
    return [None if f is None else f.read() for f in ds.take_blobs(column, **rows)]


def _values(rng, n, max_size=300):
    return [None if rng.random() < 0.15 else bytes(rng.integers(0, 256, int(k), dtype=np.uint8))
            for k in rng.integers(0, max_size, n)]


def _blob_v2_table(seed, n, ext_uri):
    """Up to 16 bytes inline, up to 100 packed, larger dedicated; some
    external URIs, whole and ranges."""
    from lance.blob import Blob, blob_array, blob_field

    rng = np.random.default_rng(seed)
    values = _values(rng, n)
    values[0] = b""
    values[1] = None
    for i in range(2, n, 9):
        values[i] = Blob.from_uri(ext_uri, position=int(rng.integers(0, 50)), size=int(rng.integers(1, 50)))
    for i in range(3, n, 13):
        values[i] = ext_uri
    field = blob_field("b", inline_size_threshold=16, dedicated_size_threshold=100)
    return pa.table({"id": pa.array(range(seed * 1000, seed * 1000 + n), pa.int64()), "b": blob_array(values)},
                    schema=pa.schema([pa.field("id", pa.int64()), field]))


@pytest.fixture
def external_file(tmp_path):
    path = tmp_path / "ext dir" / "external.bin"
    path.parent.mkdir()
    path.write_bytes(bytes(np.random.default_rng(0).integers(0, 256, 120, dtype=np.uint8)))
    return path


@pytest.mark.parametrize("stable_row_ids", [False, True])
def test_take_blobs_every_kind_matches_pylance(tmp_path, external_file, stable_row_ids):
    uri = tmp_path / "ds"
    ext_uri = external_file.as_uri()
    lance.write_dataset(_blob_v2_table(1, 150, ext_uri), uri, data_storage_version="2.2", max_rows_per_file=60,
                        allow_external_blob_outside_bases=True, enable_stable_row_ids=stable_row_ids)
    ds = lance.write_dataset(_blob_v2_table(2, 40, ext_uri), uri, mode="append",
                             allow_external_blob_outside_bases=True)
    ds.delete("id % 7 = 3")
    ds = lance.dataset(uri)
    kinds = {d["kind"] for d in ds.to_table()["b"].to_pylist() if d is not None}
    assert kinds == {0, 1, 2, 3}, kinds

    n = ds.count_rows()
    rng = np.random.default_rng(3)
    indices = [int(i) for i in rng.integers(0, n, 60)] + [0, 1, 2, 3, n - 1, 5, 5, 0]
    want = _py_take_blobs(ds, indices=indices)
    assert any(v is None for v in want) and b"" in want
    assert _cpp_take_blobs(tmp_path, uri, "--indices", indices) == want

    table = ds.to_table(columns=["id"], with_row_id=True, with_row_address=True)
    pick = [int(i) for i in rng.permutation(n)[:40]] + [7, 7]
    ids = [table["_rowid"][i].as_py() for i in pick]
    addresses = [table["_rowaddr"][i].as_py() for i in pick]
    want = _py_take_blobs(ds, ids=ids)
    assert want == _py_take_blobs(ds, addresses=addresses)
    assert _cpp_take_blobs(tmp_path, uri, "--row-ids", ids) == want
    assert _cpp_take_blobs(tmp_path, uri, "--addresses", addresses) == want


@pytest.mark.parametrize("version", ["2.0", "2.1"])
def test_take_blobs_legacy_blob_columns(tmp_path, version):
    rng = np.random.default_rng(11)
    values = _values(rng, 230, 2000)
    values[0] = b""
    schema = pa.schema([pa.field("id", pa.int64()),
                        pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})])
    table = pa.table({"id": pa.array(range(230), pa.int64()), "b": pa.array(values, pa.large_binary())},
                     schema=schema)
    uri = tmp_path / "ds"
    ds = lance.write_dataset(table, uri, data_storage_version=version, max_rows_per_file=100)
    ds.delete("id % 5 = 1")
    ds = lance.dataset(uri)
    n = ds.count_rows()
    indices = [int(i) for i in np.random.default_rng(4).integers(0, n, 50)] + [n - 1, 0, 0]
    want = _py_take_blobs(ds, indices=indices)
    assert _cpp_take_blobs(tmp_path, uri, "--indices", indices) == want
    addresses = [(1 << 32) | 3, 0, (2 << 32) | 29, 5]
    assert _cpp_take_blobs(tmp_path, uri, "--addresses", addresses) == _py_take_blobs(ds, addresses=addresses)


def test_take_blobs_errors(tmp_path, external_file):
    from lance.blob import blob_array, blob_field

    uri = tmp_path / "ds"
    table = pa.table({"id": pa.array([0, 1], pa.int64()), "b": blob_array([b"x" * 300, "s3://bucket/key"])},
                     schema=pa.schema([pa.field("id", pa.int64()),
                                       blob_field("b", inline_size_threshold=16, dedicated_size_threshold=100)]))
    lance.write_dataset(table, uri, data_storage_version="2.2", allow_external_blob_outside_bases=True)
    assert_clean_failure(_run("take-blobs", uri, "b", "--indices", "1"), "unsupported scheme 's3'")
    assert_clean_failure(_run("take-blobs", uri, "id", "--indices", "0"), "'id'", "not a blob column")
    assert_clean_failure(_run("take-blobs", uri, "b", "--indices", "2"), "out of range")
    # The dedicated .blob file of row 0, gone.
    blob_files = list((uri / "data").rglob("*.blob"))
    assert len(blob_files) == 1
    blob_files[0].unlink()
    assert_clean_failure(_run("take-blobs", uri, "b", "--indices", "0"), blob_files[0].name)


def _ipc_with_blobs(tmp_path, name, values, field=None):
    from lance.blob import blob_array, blob_field

    field = field or blob_field("b")
    table = pa.table({"id": pa.array(range(len(values)), pa.int64()), "b": blob_array(values)},
                     schema=pa.schema([pa.field("id", pa.int64()), field]))
    return table, _write_ipc(tmp_path / f"{name}.arrow", table)


def test_external_uris_written_by_lance_cpp(tmp_path, external_file):
    """lance-cpp stores external URIs (whole files and ranges, outside any
    base path when allowed) with pylance's descriptors; pylance reads them,
    lance-cpp reads pylance's, and appends mix both."""
    from lance.blob import Blob, blob_field

    ext_uri = external_file.as_uri()
    values = [ext_uri, Blob.from_uri(ext_uri, position=7, size=20), b"inline", None, b"p" * 50, b"d" * 150,
              Blob.from_uri(ext_uri.replace("file://", "FILE://"), position=100, size=20)]
    field = blob_field("b", inline_size_threshold=16, dedicated_size_threshold=100)
    table, src = _ipc_with_blobs(tmp_path, "a", values, field)
    uri, ref = tmp_path / "ds", tmp_path / "ref"
    proc = _run("write", uri, "--input", src, "--allow-external-blob-outside-bases")
    assert proc.returncode == 0, proc.stderr
    lance.write_dataset(table, ref, data_storage_version="2.2", allow_external_blob_outside_bases=True)
    ds, want = lance.dataset(uri), lance.dataset(ref)
    assert ds.schema == want.schema
    got_desc = ds.to_table()["b"].to_pylist()
    assert got_desc == want.to_table()["b"].to_pylist()
    assert got_desc[0]["kind"] == 3 and got_desc[0]["blob_uri"] == ext_uri
    raw = external_file.read_bytes()
    expected = [raw, raw[7:27], b"inline", None, b"p" * 50, b"d" * 150, raw[100:120]]
    indices = list(range(len(values)))
    assert _py_take_blobs(ds, indices=indices) == expected
    assert _cpp_take_blobs(tmp_path, ref, "--indices", indices[::-1]) == expected[::-1]

    # Appends both ways.
    more_values = [Blob.from_uri(ext_uri, position=1, size=2), None]
    more, more_src = _ipc_with_blobs(tmp_path, "more", more_values, field)
    proc = _run("write", ref, "--input", more_src, "--mode", "append", "--allow-external-blob-outside-bases")
    assert proc.returncode == 0, proc.stderr
    lance.write_dataset(more, uri, mode="append", allow_external_blob_outside_bases=True)
    for d in (uri, ref):
        ds = lance.dataset(d)
        all_rows = list(range(ds.count_rows()))
        assert _py_take_blobs(ds, indices=all_rows) == expected + [raw[1:3], None]
        assert _cpp_take_blobs(tmp_path, d, "--indices", all_rows) == expected + [raw[1:3], None]


def test_external_uris_under_a_base_path(tmp_path, external_file):
    """pylance's dataset registers an external base path: URIs under it are
    stored relative to it with the base's id, by lance-cpp's appends as by
    pylance's; URIs elsewhere are refused without consent, as pylance
    refuses them."""
    from lance.blob import Blob

    base_dir = external_file.parent
    (base_dir / "sub").mkdir()
    inner = base_dir / "sub" / "inner.bin"
    inner.write_bytes(bytes(range(64)))
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"outside")
    uri = tmp_path / "ds"
    first, _ = _ipc_with_blobs(tmp_path, "first", [inner.as_uri(), Blob.from_uri(external_file.as_uri(), 2, 3)])
    lance.write_dataset(first, uri, data_storage_version="2.2",
                        initial_bases=[lance.DatasetBasePath(base_dir.as_uri(), name="ext", is_dataset_root=False)])
    values = [Blob.from_uri(inner.as_uri(), position=4, size=8), external_file.as_uri(), b"bytes"]
    _, src = _ipc_with_blobs(tmp_path, "second", values)
    proc = _run("write", uri, "--input", src, "--mode", "append")
    assert proc.returncode == 0, proc.stderr
    ds = lance.dataset(uri)
    desc = ds.to_table()["b"].to_pylist()
    assert [(d["blob_id"], d["blob_uri"]) for d in desc[:2]] == [(1, "sub/inner.bin"), (1, "external.bin")]
    assert [(d["kind"], d["blob_id"], d["blob_uri"], d["position"], d["size"]) for d in desc[2:4]] == \
        [(3, 1, "sub/inner.bin", 4, 8), (3, 1, "external.bin", 0, 0)]
    raw = external_file.read_bytes()
    want = [bytes(range(64)), raw[2:5], bytes(range(4, 12)), raw, b"bytes"]
    assert _py_take_blobs(ds, indices=list(range(5))) == want
    assert _cpp_take_blobs(tmp_path, uri, "--indices", [4, 3, 2, 1, 0]) == want[::-1]

    # Outside the base: both refuse without consent.
    rejected, src = _ipc_with_blobs(tmp_path, "outside", [outside.as_uri()])
    with pytest.raises(Exception, match="outside registered external bases"):
        lance.write_dataset(rejected, uri, mode="append")
    assert_clean_failure(_run("write", uri, "--input", src, "--mode", "append"),
                         "outside registered external bases")
    assert lance.dataset(uri).count_rows() == 5


@pytest.mark.parametrize("value,message", [
    ("relative/path.bin", "not a valid absolute URI"),
    ("foo://host/x", "unknown scheme"),
])
def test_external_uris_pylance_refuses(tmp_path, value, message):
    table, src = _ipc_with_blobs(tmp_path, "bad", [value])
    with pytest.raises(Exception):
        lance.write_dataset(table, tmp_path / "ref", data_storage_version="2.2",
                            allow_external_blob_outside_bases=True)
    uri = tmp_path / "ds"
    assert_clean_failure(_run("write", uri, "--input", src, "--allow-external-blob-outside-bases"), message)
    assert not uri.exists() or not (uri / "_versions").exists()


def test_blob_rows_pylance_refuses(tmp_path):
    """Rows pylance's writer refuses (built without the Blob helper's checks)."""
    from lance.blob import BlobType

    def storage(data, uri_, position, size):
        return pa.StructArray.from_arrays(
            [pa.array([data], pa.large_binary()), pa.array([uri_], pa.utf8()),
             pa.array([position], pa.uint64()), pa.array([size], pa.uint64())],
            names=["data", "uri", "position", "size"])

    cases = [(storage(b"x", "file:///x", None, None), "exactly one of `data` and `uri`"),
             (storage(None, None, None, None), "exactly one of `data` and `uri`"),
             (storage(None, "file:///x", 3, None), "both `position` and `size`"),
             (storage(None, "file:///x", 3, 0), "greater than zero")]
    for i, (st, message) in enumerate(cases):
        table = pa.table({"b": pa.ExtensionArray.from_storage(BlobType(), st)})
        with pytest.raises(Exception, match="must set|greater than zero"):
            lance.write_dataset(table, tmp_path / f"ref{i}", data_storage_version="2.2",
                                allow_external_blob_outside_bases=True)
        proc = _run("write", tmp_path / f"ds{i}", "--input", _write_ipc(tmp_path / f"bad{i}.arrow", table),
                    "--allow-external-blob-outside-bases")
        assert_clean_failure(proc, message)
