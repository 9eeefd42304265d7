"""lance_cpp's version, tag, cleanup, compaction and index calls against pylance's."""
import os
import sys
import threading
import time
from datetime import timedelta

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_cpp


def test_checkout_restore(tmp_path, table):
    uri = tmp_path / "ds"
    ds = lance_cpp.write_dataset(table, uri)
    ds.delete("id < 500")
    assert ds.version == 2 and ds.count_rows() == 500
    old = ds.checkout_version(1)
    assert old.version == 1 and old.count_rows() == 1000
    assert old.latest_version == 2
    old.restore()
    assert old.version == 3
    ref = lance.dataset(uri)
    assert ref.version == 3 and ref.to_table() == table
    assert ref.versions()[-1]["version"] == 3


def test_tags(tmp_path, table):
    uri = tmp_path / "ds"
    ds = lance_cpp.write_dataset(table, uri)
    ds.insert(table)
    ds.tags.create("first", 1)
    ds.tags.create("second", 2)
    ref = lance.dataset(uri)
    assert {k: v["version"] for k, v in ref.tags.list().items()} == {"first": 1, "second": 2}
    listed = ds.tags.list()
    assert listed == {"first": {"branch": None, "version": 1}, "second": {"branch": None, "version": 2}}
    assert lance_cpp.dataset(uri, version="first").count_rows() == 1000
    assert ds.checkout_version("second").count_rows() == 2000
    ds.tags.update("second", 1)
    assert ref.tags.get_version("second") == 1
    ds.tags.delete("first")
    assert set(lance.dataset(uri).tags.list()) == {"second"}
    ref.tags.create("theirs", 2)
    assert ds.tags.get_version("theirs") == 2
    with pytest.raises(ValueError, match="nope"):
        ds.tags.delete("nope")
    with pytest.raises((OSError, ValueError)):
        ds.tags.create("theirs", 1)


def test_cleanup_old_versions(tmp_path, table):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for uri in (ours, theirs):
        lance.write_dataset(table, uri)
        lance.write_dataset(table, uri, mode="overwrite")
        lance.write_dataset(table, uri, mode="append")
    got = lance_cpp.dataset(ours).cleanup_old_versions(older_than=timedelta(0))
    want = lance.dataset(theirs).cleanup_old_versions(older_than=timedelta(0))
    assert isinstance(got, lance_cpp.CleanupStats)
    for field in ("old_versions", "data_files_removed", "transaction_files_removed", "deletion_files_removed",
                  "index_files_removed"):
        assert getattr(got, field) == getattr(want, field), field
    assert got.bytes_removed > 0
    assert [v["version"] for v in lance.dataset(ours).versions()] == [3]
    # a tagged old version: refused by default, as pylance
    ds = lance_cpp.dataset(ours)
    ds.insert(table)
    ds.tags.create("keep", 3)
    with pytest.raises(OSError, match="keep"):
        ds.cleanup_old_versions(older_than=timedelta(0))
    stats = ds.cleanup_old_versions(older_than=timedelta(0), error_if_tagged_old_versions=False)
    assert stats.old_versions == 0


def test_compact_files(tmp_path, table):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for uri in (ours, theirs):
        lance.write_dataset(table, uri, max_rows_per_file=100)
        lance.dataset(uri).delete("id % 10 = 0")
    ds, ref = lance_cpp.dataset(ours), lance.dataset(theirs)
    got = ds.optimize.compact_files(target_rows_per_fragment=450)
    want = ref.optimize.compact_files(target_rows_per_fragment=450)
    assert isinstance(got, lance_cpp.CompactionMetrics)
    assert (got.fragments_removed, got.fragments_added, got.files_removed, got.files_added) == (
        want.fragments_removed, want.fragments_added, want.files_removed, want.files_added)
    assert ds.version == ref.version
    assert lance.dataset(ours).to_table() == ref.to_table()
    assert len(lance.dataset(ours).get_fragments()) == len(ref.get_fragments())


def test_scalar_indices(tmp_path, table):
    uri = tmp_path / "ds"
    ds = lance_cpp.write_dataset(table, uri)
    assert not ds.has_index and ds.list_indices() == []
    ds.create_scalar_index("id", "BTREE")
    ds.create_scalar_index("name", index_type="BITMAP", name="names")
    assert ds.has_index
    ref = lance.dataset(uri)
    ours = sorted((i["name"], i["type"], tuple(i["fields"]), i["uuid"], i["version"], frozenset(i["fragment_ids"]))
                  for i in ds.list_indices())
    theirs = sorted((i["name"], i["type"], tuple(i["fields"]), i["uuid"], i["version"], frozenset(i["fragment_ids"]))
                    for i in ref.list_indices())
    assert ours == theirs
    assert ref.to_table(filter="id = 17 OR name = 'name-3'") == ds.to_table(filter="id = 17 OR name = 'name-3'")
    assert "id_idx" in ref.scanner(filter="id = 17").explain_plan()
    assert "id_idx" in ds.scanner(filter="id = 17").explain_plan()
    # pylance's index, used by lance_cpp
    ref.create_scalar_index("score", "BTREE")
    ds2 = lance_cpp.dataset(uri)
    assert "score_idx" in ds2.explain_plan(filter="score > 10")
    assert ds2.count_rows("score > 10") == ref.count_rows("score > 10")


def test_vector_index_and_nearest(tmp_path):
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((2000, 16)).astype(np.float32)
    table = pa.table({
        "id": pa.array(range(2000), pa.int64()),
        "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), 16),
    })
    uri = tmp_path / "ds"
    ds = lance_cpp.write_dataset(table, uri)
    q = vectors[42]
    # flat search: exact, equal to pylance's
    got = ds.to_table(columns=["id"], nearest={"column": "vec", "q": q, "k": 5})
    want = lance.dataset(uri).to_table(columns=["id"], nearest={"column": "vec", "q": q, "k": 5})
    assert got["id"].to_pylist() == want["id"].to_pylist()
    assert got["id"][0].as_py() == 42
    ds.create_index("vec", "IVF_FLAT", num_partitions=4)
    idx = lance.dataset(uri).list_indices()
    assert [(i["name"], i["type"]) for i in idx] == [("vec_idx", "IVF_FLAT")]
    got = ds.to_table(nearest={"column": "vec", "q": q, "k": 3, "nprobes": 4})
    want = lance.dataset(uri).to_table(nearest={"column": "vec", "q": q, "k": 3, "nprobes": 4})
    assert got["id"].to_pylist() == want["id"].to_pylist()
    assert got.column_names == want.column_names


def test_full_text_query(tmp_path):
    table = pa.table({"id": pa.array(range(4), pa.int64()),
                      "text": ["the quick brown fox", "lazy dog", "quick quick dog", "nothing here"]})
    uri = tmp_path / "ds"
    ds = lance_cpp.write_dataset(table, uri)
    ds.create_scalar_index("text", "INVERTED")
    got = ds.to_table(full_text_query="quick")
    want = lance.dataset(uri).to_table(full_text_query="quick")
    assert got["id"].to_pylist() == want["id"].to_pylist() == [2, 0]
    assert got.column_names == want.column_names


def test_fork_child_reads(tmp_path, table):
    uri = tmp_path / "ds"
    ds = lance_cpp.write_dataset(table, uri, max_rows_per_file=200)
    assert ds.count_rows("id > 10") == 989  # the parent has read (threads, cached readers) before forking
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: open anew, and read through the parent's handle
        try:
            n = lance_cpp.dataset(uri).to_table(filter="id > 10").num_rows + ds.count_rows("id < 5")
            os.write(w, str(n).encode())
        finally:
            os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    assert os.read(r, 100).decode() == str(989 + 5)
    assert status == 0


def test_gil_released(tmp_path, table):
    """While one thread waits on lance_cpp, another runs Python without long stalls."""
    big = pa.concat_tables([table] * 1000)
    ds = lance_cpp.write_dataset(big, tmp_path / "ds")
    heavy = "name LIKE '%9%8%7%' OR name LIKE '%1%2%3%' OR name LIKE '%5%5%'"
    t0 = time.perf_counter()
    ds.count_rows(heavy)
    one_call = time.perf_counter() - t0
    done = threading.Event()

    def work():
        for _ in range(3):
            ds.count_rows(heavy)
        done.set()

    worker = threading.Thread(target=work)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    worker.start()
    last, longest = time.perf_counter(), 0.0
    while not done.is_set():
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    worker.join()
    sys.setswitchinterval(interval)
    # holding the GIL would stall this loop for a whole call
    assert one_call > 0.05, one_call  # long enough to tell
    assert longest < one_call / 2, (longest, one_call)

    results = []
    threads = [threading.Thread(target=lambda: results.append(ds.count_rows("id % 3 = 0"))) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results == [1000 * 334] * 4
