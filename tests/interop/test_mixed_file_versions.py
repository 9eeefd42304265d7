"""Mixed data-file versions (feature bit 256), against pylance 14.

* Appending or compacting with another data_storage_version than the
  dataset's writes the new files at that version, keeps the dataset's own
  version, and sets bit 256 in both flag words; it stays set afterwards.
  Each side does it on a copy of the same dataset and the results compare.
* A dataset whose files disagree with its version without the bit, and a
  dataset with only one of the two bit-256 words set, are refused by both
  for reading and writing.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import lance

from conftest import assert_clean_failure
from test_feature_flags import _patch_flags, _scan, _tree, _write_ipc

PAIRS = [("2.0", "2.1"), ("2.1", "2.2"), ("2.2", "2.0")]


def _rows(ids) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "s": pa.array([f"v{i}" for i in ids])})


def _file_versions(uri: Path) -> list[list[tuple[int, int]]]:
    """Per fragment, the (major, minor) of its data files, as pylance reads them."""
    return [[(f.file_major_version, f.file_minor_version) for f in fr.metadata.files]
            for fr in lance.dataset(uri).get_fragments()]


def _state(lance_cpp, uri: Path) -> tuple:
    info = lance_cpp.inspect(uri)
    return (info["data_storage_version"], info["reader_feature_flags"], info["writer_feature_flags"],
            lance.dataset(uri).data_storage_version, _file_versions(uri))


def _latest_manifest(uri: Path) -> Path:
    return max((p for p in (uri / "_versions").iterdir() if p.suffix == ".manifest"),
               key=lambda p: p.stat().st_mtime_ns)


@pytest.mark.parametrize("first,second", PAIRS)
def test_append_with_another_version_sets_bit_256(lance_cpp, tmp_path, first, second):
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    lance.write_dataset(_rows(range(5)), ours, data_storage_version=first)
    shutil.copytree(ours, theirs)
    src = _write_ipc(tmp_path / "more.arrow", _rows(range(5, 8)))
    lance_cpp.run_ok("write", ours, "--mode", "append", "--input", src, "--data-storage-version", second)
    lance.write_dataset(_rows(range(5, 8)), theirs, mode="append", data_storage_version=second)

    state = _state(lance_cpp, ours)
    assert state[:4] == (first, 256, 256, first)
    assert state == _state(lance_cpp, theirs)
    assert _file_versions(ours)[-1] == [tuple(map(int, second.split(".")))]
    assert lance.dataset(ours).to_table().equals(lance.dataset(theirs).to_table())
    assert _scan(lance_cpp, ours, tmp_path).equals(lance.dataset(ours).to_table())

    # Sticky: later writes of either side at the dataset's own version keep it.
    lance.write_dataset(_rows(range(8, 9)), ours, mode="append")
    lance_cpp.run_ok("delete", ours, "id = 1")
    assert _state(lance_cpp, ours)[1:3] == (257, 257)  # and deletion files
    assert _scan(lance_cpp, ours, tmp_path).equals(lance.dataset(ours).to_table())
    assert lance.dataset(ours).to_table()["id"].to_pylist() == [0, 2, 3, 4, 5, 6, 7, 8]


@pytest.mark.parametrize("first,second", PAIRS)
def test_compact_with_another_version_sets_bit_256(lance_cpp, tmp_path, first, second):
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    lance.write_dataset(_rows(range(20)), ours, data_storage_version=first, max_rows_per_file=5)
    lance.dataset(ours).delete("id % 4 = 1")
    shutil.copytree(ours, theirs)
    lance_cpp.run_ok("compact", ours, "--data-storage-version", second, "--quiet")
    lance.dataset(theirs).optimize.compact_files(data_storage_version=second)

    state = _state(lance_cpp, ours)
    # Every file is now at `second`, yet the dataset keeps `first`: the bit.
    assert state[:4] == (first, 256, 256, first)
    assert state == _state(lance_cpp, theirs)
    assert lance.dataset(ours).to_table().equals(lance.dataset(theirs).to_table())
    assert _scan(lance_cpp, ours, tmp_path).equals(lance.dataset(ours).to_table())

    # Compacting again at the dataset's version keeps the bit, on both sides.
    lance.write_dataset(_rows(range(20, 22)), ours, mode="append")
    lance.write_dataset(_rows(range(20, 22)), theirs, mode="append")
    lance_cpp.run_ok("compact", ours, "--quiet")
    lance.dataset(theirs).optimize.compact_files()
    assert _state(lance_cpp, ours) == _state(lance_cpp, theirs)
    assert _state(lance_cpp, ours)[1:3] == (256, 256)
    assert lance.dataset(ours).to_table().equals(lance.dataset(theirs).to_table())


def test_pylance_mixed_dataset_read_appended_and_compacted(lance_cpp, tmp_path):
    """pylance writes the mix; lance-cpp reads, appends and compacts it, and
    pylance reads what lance-cpp wrote."""
    uri = tmp_path / "mixed.lance"
    lance.write_dataset(_rows(range(6)), uri, data_storage_version="2.0")
    lance.write_dataset(_rows(range(6, 9)), uri, mode="append", data_storage_version="2.1")
    lance.dataset(uri).delete("id = 2")
    assert _scan(lance_cpp, uri, tmp_path).equals(lance.dataset(uri).to_table())

    src = _write_ipc(tmp_path / "more.arrow", _rows(range(9, 11)))
    lance_cpp.run_ok("write", uri, "--mode", "append", "--input", src, "--data-storage-version", "2.2")
    theirs = tmp_path / "theirs.lance"
    shutil.copytree(uri, theirs)
    lance_cpp.run_ok("compact", uri, "--quiet")
    lance.dataset(theirs).optimize.compact_files()
    assert _state(lance_cpp, uri) == _state(lance_cpp, theirs)
    assert _state(lance_cpp, uri)[:3] == ("2.0", 256, 256)
    assert lance.dataset(uri).to_table()["id"].to_pylist() == [0, 1, 3, 4, 5, 6, 7, 8, 9, 10]
    assert _scan(lance_cpp, uri, tmp_path).equals(lance.dataset(theirs).to_table())


def _mixed_with_flags(tmp_path: Path, reader: int, writer: int) -> Path:
    uri = tmp_path / f"flags-{reader}-{writer}.lance"
    lance.write_dataset(_rows(range(4)), uri, data_storage_version="2.0")
    lance.write_dataset(_rows(range(4, 6)), uri, mode="append", data_storage_version="2.1")
    m = _latest_manifest(uri)
    _patch_flags(m, 9, reader)
    _patch_flags(m, 10, writer)
    return uri


def _refusals(lance_cpp, uri: Path, tmp_path: Path, *must_mention: str) -> None:
    src = _write_ipc(tmp_path / "rows.arrow", _rows(range(100, 102)))
    before = _tree(uri)
    for args in (("scan", uri), ("count", uri), ("delete", uri, "id = 1"),
                 ("write", uri, "--input", src, "--mode", "append"),
                 ("write", uri, "--input", src, "--mode", "append", "--data-storage-version", "2.1"),
                 ("compact", uri, "--quiet")):
        assert_clean_failure(lance_cpp.run(*args), *must_mention)
        assert _tree(uri) == before, f"{args[0]} changed the dataset"


def test_files_at_another_version_without_bit_256_are_refused(lance_cpp, tmp_path):
    uri = _mixed_with_flags(tmp_path, 0, 0)
    with pytest.raises(Exception, match="mixed data-file-version capability is not enabled"):
        lance.dataset(uri)
    with pytest.raises(Exception, match="mixed data-file-version capability is not enabled"):
        lance.write_dataset(_rows(range(9, 10)), uri, mode="append")
    files = sorted((uri / "data").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    # lance-cpp names the fragment and the file, as pylance does.
    _refusals(lance_cpp, uri, tmp_path, f"'{files[-1].name}' in fragment 1", "version 2.1", "2.0", "256")


@pytest.mark.parametrize("reader,writer", [(256, 0), (0, 256)])
def test_half_set_bit_256_is_corrupt(lance_cpp, tmp_path, reader, writer):
    uri = _mixed_with_flags(tmp_path, reader, writer)
    with pytest.raises(Exception, match="only one of the mixed data-file-version"):
        lance.dataset(uri)
    with pytest.raises(Exception, match="only one of the mixed data-file-version"):
        lance.write_dataset(_rows(range(9, 10)), uri, mode="append")
    _refusals(lance_cpp, uri, tmp_path, "corrupt manifest", "only one of the mixed data-file-versions")


def test_blob_columns_at_another_version_are_refused(lance_cpp, tmp_path):
    """pylance appends blob columns at another version; lance-cpp does not
    yet (each version stores blobs differently) and says so, writing nothing."""
    blob = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    schema = pa.schema([pa.field("id", pa.int64()), blob])
    t = pa.table({"id": pa.array([1, 2], pa.int64()), "b": pa.array([b"x" * 10, b"y" * 10], pa.large_binary())},
                 schema=schema)
    uri = tmp_path / "blobs.lance"
    lance.write_dataset(t, uri, data_storage_version="2.1")
    src = _write_ipc(tmp_path / "blobs.arrow", t)
    before = _tree(uri)
    assert_clean_failure(lance_cpp.run("write", uri, "--mode", "append", "--input", src,
                                       "--data-storage-version", "2.0"), "blob column 'b'", "2.0")
    assert _tree(uri) == before
    # The dataset's own version still appends.
    lance_cpp.run_ok("write", uri, "--mode", "append", "--input", src)
    assert lance.dataset(uri).count_rows() == 4
