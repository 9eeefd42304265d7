"""Base paths (feature bit 16): shallow clones and registered bases, both ways.

pylance makes a dataset with deletions, an append and an index, shallow-clones
it (at the latest version, an older one and a tag), and lance-cpp must read
the clone (scan, take, count, inspect) exactly as pylance does: its data and
deletion files live under the source, named by base id. Then each side
writes to the clone (delete, append, update, merge-insert) and the other
reads it, the new files under the clone's own root and the source untouched.
Cleanup of the clone removes nothing of the source, and cleanup of a dataset
whose registered base lies inside its own directory keeps that base's files.
"""
from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance

from conftest import assert_clean_failure, assert_view_matches, pylance_view

VERSIONS = ["2.0", "2.1", "2.2"]


def _rows(ids, seed: int = 0) -> pa.Table:
    ids = list(ids)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "v": pa.array([(i * 7 + seed) % 100 for i in ids], pa.int32()),
        "s": pa.array([None if i % 11 == 0 else f"s{i}-{seed}" for i in ids], pa.string()),
    })


def _write_ipc(path: Path, table: pa.Table) -> Path:
    with ipc.new_file(str(path), table.schema) as w:
        w.write_table(table)
    return path


def _tree(root: Path) -> dict:
    """Every file under `root` with its size and modification time."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def _source(path: Path, version: str, stable: bool) -> lance.LanceDataset:
    """v1: 30 rows in 3 fragments; v2: deletions; v3: a btree index; v4: an
    append; tag "before-append" on v3."""
    lance.write_dataset(_rows(range(30)), path, data_storage_version=version,
                        enable_stable_row_ids=stable, max_rows_per_file=10)
    ds = lance.dataset(path)
    ds.delete("id % 4 = 1 OR id = 20")
    ds = lance.dataset(path)
    ds.create_scalar_index("id", "BTREE")
    ds = lance.dataset(path)
    ds.tags.create("before-append", ds.version)
    lance.write_dataset(_rows(range(30, 40), 1), path, mode="append")
    return lance.dataset(path)


def _scan(lance_cpp, uri: Path, tmp_path: Path, *extra: str) -> pa.Table:
    out = tmp_path / f"scan-{len(list(tmp_path.iterdir()))}.arrow"
    lance_cpp.run_ok("scan", uri, "--out", out, *extra)
    with pa.memory_map(str(out)) as f:
        return ipc.open_file(f).read_all()


def _take(lance_cpp, uri: Path, tmp_path: Path, *extra: str) -> pa.Table:
    out = tmp_path / f"take-{len(list(tmp_path.iterdir()))}.arrow"
    lance_cpp.run_ok("take", uri, "--out", out, *extra)
    with pa.memory_map(str(out)) as f:
        return ipc.open_file(f).read_all()


def assert_reads_like_pylance(lance_cpp, uri: Path, tmp_path: Path, stable: bool) -> None:
    ds = lance.dataset(uri)
    expected = ds.to_table()
    assert _scan(lance_cpp, uri, tmp_path).equals(expected)
    got = _scan(lance_cpp, uri, tmp_path, "--columns", "id", "--with-row-id", "--with-row-address")
    want = ds.to_table(columns=["id"], with_row_id=True, with_row_address=True)
    assert got.equals(want)
    assert _scan(lance_cpp, uri, tmp_path, "--filter", "v < 50").equals(ds.to_table(filter="v < 50"))
    n = ds.count_rows()
    assert lance_cpp.run_ok("count", uri).stdout.strip() == str(n)
    assert lance_cpp.run_ok("count", uri, "--filter", "id >= 12").stdout.strip() == \
        str(ds.count_rows(filter="id >= 12"))
    indices = [0, n - 1, n // 2, 3]
    assert _take(lance_cpp, uri, tmp_path, "--indices", ",".join(map(str, indices))).equals(ds.take(indices))
    if stable:
        ids = [r for r in want["_rowid"].to_pylist()][::3]
        got = _take(lance_cpp, uri, tmp_path, "--row-ids", ",".join(map(str, ids)))
        assert got.equals(ds._take_rows(ids))
    assert_view_matches(lance_cpp.inspect(uri), pylance_view(uri), str(uri))


@pytest.fixture(params=[(v, s) for v in VERSIONS for s in (False, True)],
                ids=lambda p: f"{p[0]}-{'stable' if p[1] else 'addr'}")
def cloned(request, tmp_path):
    """(source, clone, stable): a pylance shallow clone of the latest version."""
    version, stable = request.param
    source = tmp_path / "source.lance"
    clone = tmp_path / "clone.lance"
    ds = _source(source, version, stable)
    ds.shallow_clone(str(clone), ds.version)
    return source, clone, stable


def test_clone_reads_as_pylance(lance_cpp, cloned, tmp_path):
    source, clone, stable = cloned
    ds = lance.dataset(clone)
    # The clone's files really are the source's, through base ids.
    assert list(ds.base_paths().values())[0].path == str(source)
    assert not (clone / "data").exists() and not (clone / "_deletions").exists()
    assert ds.to_table().equals(lance.dataset(source).to_table())
    assert_reads_like_pylance(lance_cpp, clone, tmp_path, stable)
    flags = lance_cpp.inspect(clone)
    assert flags["reader_feature_flags"] & 16 and flags["writer_feature_flags"] & 16


@pytest.mark.parametrize("reference", ["version", "tag"])
def test_clone_of_an_older_version_reads_as_pylance(lance_cpp, tmp_path, reference):
    source = tmp_path / "source.lance"
    ds = _source(source, "2.1", stable=False)
    clone = tmp_path / "clone.lance"
    ds.shallow_clone(str(clone), 2 if reference == "version" else "before-append")
    want = lance.dataset(source, version=2 if reference == "version" else 3).to_table()
    assert lance.dataset(clone).to_table().equals(want)
    assert_reads_like_pylance(lance_cpp, clone, tmp_path, stable=False)


def test_cpp_writes_on_the_clone(lance_cpp, cloned, tmp_path):
    source, clone, stable = cloned
    before = _tree(source)
    source_rows = lance.dataset(source).to_table()
    # Deletes in a fragment whose deletion file is the source's: merged, and
    # the new file goes under the clone's own root.
    lance_cpp.run_ok("delete", clone, "id = 2 OR id = 33")
    lance_cpp.run_ok("write", clone, "--mode", "append", "--input", _write_ipc(tmp_path / "more.arrow",
                                                                             _rows(range(40, 45), 2)))
    lance_cpp.run_ok("update", clone, "--set", "v = v + 1000", "--where", "id = 4 OR id = 31 OR id = 41")
    lance_cpp.run_ok("merge-insert", clone, "--on", "id", "--input",
                     _write_ipc(tmp_path / "upsert.arrow", _rows([6, 46], 3)),
                     "--when-matched-update-all", "--when-not-matched-insert-all")

    assert _tree(source) == before, "lance-cpp changed the source of the clone"
    assert lance.dataset(source).to_table().equals(source_rows)
    assert (clone / "_deletions").is_dir() and (clone / "data").is_dir()

    ds = lance.dataset(clone)
    t = ds.to_table().sort_by("id")
    ids = t["id"].to_pylist()
    assert 2 not in ids and 33 not in ids
    assert ids[-6:] == [40, 41, 42, 43, 44, 46]
    by_id = dict(zip(ids, t["v"].to_pylist()))
    assert by_id[4] == (4 * 7) % 100 + 1000 and by_id[31] == (31 * 7 + 1) % 100 + 1000
    assert by_id[41] == (41 * 7 + 2) % 100 + 1000 and by_id[6] == (6 * 7 + 3) % 100
    assert_reads_like_pylance(lance_cpp, clone, tmp_path, stable)
    if stable:
        rowids = ds.to_table(columns=["id"], with_row_id=True)["_rowid"].to_pylist()
        assert len(set(rowids)) == len(rowids)

    # pylance keeps writing on top of ours.
    ds.delete("id = 7")
    ds.update({"s": "'p'"}, where="id = 8")
    lance.write_dataset(_rows(range(50, 52), 4), clone, mode="append")
    assert _tree(source) == before
    assert_reads_like_pylance(lance_cpp, clone, tmp_path, stable)


def test_pylance_writes_on_the_clone(lance_cpp, cloned, tmp_path):
    source, clone, stable = cloned
    before = _tree(source)
    ds = lance.dataset(clone)
    ds.delete("id = 3 OR id = 36")
    ds = lance.dataset(clone)
    ds.update({"v": "v * 2"}, where="id < 8")
    lance.write_dataset(_rows(range(60, 63), 5), clone, mode="append")
    ds = lance.dataset(clone)
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all() \
        .execute(_rows([0, 64], 6))
    assert _tree(source) == before
    assert_reads_like_pylance(lance_cpp, clone, tmp_path, stable)
    # And lance-cpp writes on top of pylance's changes.
    lance_cpp.run_ok("delete", clone, "id = 4")
    assert 4 not in lance.dataset(clone).to_table()["id"].to_pylist()
    assert _tree(source) == before


def test_cleanup_of_the_clone_keeps_the_source(lance_cpp, cloned, tmp_path):
    source, clone, stable = cloned
    before = _tree(source)
    # Versions of the clone's own whose files cleanup may remove: a deletion
    # file superseded by the next delete of the same fragment.
    lance_cpp.run_ok("delete", clone, "id = 2")
    own_deletion = set(_tree(clone / "_deletions"))
    lance_cpp.run_ok("delete", clone, "id = 3")
    lance_cpp.run_ok("cleanup", clone, "--older-than", "0", "--delete-unverified")
    assert _tree(source) == before, "cleanup of the clone removed files of its source"
    assert not own_deletion & set(_tree(clone / "_deletions")), "the clone's superseded deletion file stays"
    assert [v["version"] for v in lance.dataset(clone).versions()] == [lance.dataset(clone).version]
    assert_reads_like_pylance(lance_cpp, clone, tmp_path, stable)
    # pylance's own cleanup of the clone agrees: nothing more to remove.
    stats = lance.dataset(clone).cleanup_old_versions(older_than=timedelta(0), delete_unverified=True)
    assert stats.bytes_removed == 0
    assert _tree(source) == before


def test_cleanup_keeps_files_of_a_base_inside_the_root(lance_cpp, tmp_path):
    """A registered base inside the dataset's own directory: its files are
    listed with the root's, and must be recognized as referenced."""
    uri = tmp_path / "ds.lance"
    ds = lance.write_dataset(_rows(range(10)), uri, data_storage_version="2.1")
    inner = uri / "data" / "extra"
    inner.mkdir(parents=True)
    ds.add_bases([lance.DatasetBasePath(str(inner), name="extra", is_dataset_root=False)])
    lance.write_dataset(_rows(range(10, 20), 1), uri, mode="append", target_bases=["extra"])
    assert any(inner.iterdir()), "the append did not write into the inner base"
    lance_cpp.run_ok("delete", uri, "id = 12")
    expected = lance.dataset(uri).to_table()
    assert _scan(lance_cpp, uri, tmp_path).equals(expected)
    inner_files = _tree(inner)
    lance_cpp.run_ok("cleanup", uri, "--older-than", "0", "--delete-unverified")
    assert _tree(inner) == inner_files, "cleanup removed files of a registered base"
    assert lance.dataset(uri).to_table().equals(expected)
    assert _scan(lance_cpp, uri, tmp_path).equals(expected)


def test_missing_base_is_a_clean_error(lance_cpp, tmp_path):
    """The source of a clone gone: a clean error naming where it looked."""
    source = tmp_path / "source.lance"
    ds = _source(source, "2.1", stable=False)
    clone = tmp_path / "clone.lance"
    ds.shallow_clone(str(clone), ds.version)
    shutil.rmtree(source)
    assert_clean_failure(lance_cpp.run("scan", clone), str(source))
    assert_clean_failure(lance_cpp.run("delete", clone, "id = 2"), str(source))


def test_blob_v2_through_a_clone(lance_cpp, tmp_path):
    """Blob v2 values of a 2.2 source (inline, packed and dedicated) read
    through the clone, and rewritten by an update on the clone."""
    from lance.blob import blob_array, blob_field

    field = blob_field("b", inline_size_threshold=16, dedicated_size_threshold=100)
    values = [b"", None, b"i" * 10, b"p" * 60, b"d" * 180, b"q" * 70]
    t = pa.table({"id": pa.array(range(6), pa.int64()), "b": blob_array(values)},
                 schema=pa.schema([pa.field("id", pa.int64()), field]))
    source = tmp_path / "source.lance"
    ds = lance.write_dataset(t, source, data_storage_version="2.2")
    ds.delete("id = 5")
    clone = tmp_path / "clone.lance"
    lance.dataset(source).shallow_clone(str(clone), 2)
    before = _tree(source)

    out = tmp_path / "blobs.arrow"
    lance_cpp.run_ok("take-blobs", clone, "b", "--indices", "0,1,2,3,4", "--out", out)
    got = ipc.open_file(str(out)).read_all().column(0).to_pylist()
    assert got == values[:5]

    lance_cpp.run_ok("update", clone, "--set", "id = id + 100", "--where", "id >= 2")
    c = lance.dataset(clone)
    ids = c.to_table(columns=["id"])["id"].to_pylist()
    blobs = {i: (None if f is None else f.read())
             for i, f in zip(ids, c.take_blobs("b", indices=list(range(len(ids)))))}
    assert blobs == {0: b"", 1: None, 102: values[2], 103: values[3], 104: values[4]}
    assert _tree(source) == before
