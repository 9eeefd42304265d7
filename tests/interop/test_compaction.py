"""compaction: lance-cpp's `compact` against pylance's `compact_files`.

The plan: `lance-cpp compact --plan --json` must give the tasks (fragment ids)
of pylance's `Compaction.plan` on datasets built to hit each rule (deletions
over the threshold, small neighbours, large fragments ending a run, a lone
small fragment dropped, bins split by size, index coverage changing,
excluded fragments, the per-run source budgets).

The rewrite: the same pylance dataset, twice; lance-cpp compacts one copy,
pylance the other. Both must then hold the same fragments (ids, rows, no
deletions), the same rows in the same order, the same versions and
transactions, and with stable row ids the same row ids and lineage. Then
each side keeps working on the other's result.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import lance
from lance.optimize import Compaction

from cli_output import compaction_metrics, parse_change
from conftest import assert_view_matches, pylance_view, write_fragments

VERSIONS = ["2.0", "2.1", "2.2"]


def rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "s": pa.array([None if i % 7 == 0 else f"s{i}" for i in ids], pa.string()),
        "v": pa.array([[i, i % 3] if i % 4 else None for i in ids], pa.list_(pa.int32())),
    })


def build(path: Path, sizes: list, version: str = "2.1", stable: bool = False) -> None:
    """One fragment per entry of `sizes`, in order (ids 0, 1, ...)."""
    write_fragments(path, sizes, rows, data_storage_version=version, enable_stable_row_ids=stable)


def fragment_starts(sizes: list) -> list:
    out, at = [], 0
    for n in sizes:
        out.append(at)
        at += n
    return out


def delete_in(path: Path, sizes: list, fragment: int, fraction_of_10: int) -> None:
    """Deletes `fraction_of_10` tenths (rounded down) of a fragment's rows."""
    lo = fragment_starts(sizes)[fragment]
    n = sizes[fragment] * fraction_of_10 // 10
    lance.dataset(path).delete(f"id >= {lo} and id < {lo + n}")


def pylance_plan(path: Path, options: dict) -> list:
    plan = Compaction.plan(lance.dataset(path), options)
    return [[f.id for f in t.fragments] for t in plan.tasks]


def cpp_plan(lance_cpp, path: Path, *flags) -> list:
    proc = lance_cpp.run_ok("compact", path, "--plan", "--json", *flags)
    plan = json.loads(proc.stdout)
    assert plan["read_version"] == lance.dataset(path).version
    return [t["fragment_ids"] for t in plan["tasks"]]


# (sizes, deletions as (fragment, tenths), pylance options, lance-cpp flags)
PLAN_CASES = {
    # Small neighbours merge; a large fragment ends the run; the lone small
    # fragment between two large ones is dropped; a large fragment with
    # many deletions is compacted on its own.
    "neighbours_and_lone": ([40, 40, 200, 30, 200, 40, 40, 200], [(7, 3)],
                            {"target_rows_per_fragment": 100}, ["--target-rows-per-fragment", "100"]),
    # Six fragments of 40 rows: cut after 120 live rows because the rest
    # reaches the target too; five of them stay one bin.
    "split_for_size": ([40] * 6 + [500] + [40] * 5, [],
                       {"target_rows_per_fragment": 100}, ["--target-rows-per-fragment", "100"]),
    # Deleted fractions around the threshold: exactly 10% is not above it.
    "threshold": ([200, 200, 200, 200], [(0, 1), (1, 2), (3, 5)],
                  {"target_rows_per_fragment": 100}, ["--target-rows-per-fragment", "100"]),
    "threshold_0.3": ([200, 200, 200, 200], [(0, 1), (1, 2), (3, 5)],
                      {"target_rows_per_fragment": 100, "materialize_deletions_threshold": 0.3},
                      ["--target-rows-per-fragment", "100", "--materialize-deletions-threshold", "0.3"]),
    "no_materialize": ([200, 200, 50, 200], [(0, 3), (3, 5)],
                       {"target_rows_per_fragment": 100, "materialize_deletions": False},
                       ["--target-rows-per-fragment", "100", "--no-materialize-deletions"]),
    "threshold_above_one": ([200, 30, 30], [(0, 5)],
                            {"target_rows_per_fragment": 100, "materialize_deletions_threshold": 1.5},
                            ["--target-rows-per-fragment", "100", "--materialize-deletions-threshold", "1.5"]),
    # Deletions shrink live rows: split_for_size counts live rows.
    "live_rows": ([60, 60, 60, 60, 60], [(0, 5), (2, 5)],
                  {"target_rows_per_fragment": 100}, ["--target-rows-per-fragment", "100"]),
    "excluded": ([30, 30, 30, 30, 30, 30], [],
                 {"target_rows_per_fragment": 1000, "excluded_fragment_ids": [2, 99]},
                 ["--target-rows-per-fragment", "1000", "--exclude-fragments", "2,99"]),
    "excluded_leaves_lone": ([30, 30, 30, 30], [],
                             {"target_rows_per_fragment": 1000, "excluded_fragment_ids": [1]},
                             ["--target-rows-per-fragment", "1000", "--exclude-fragments", "1"]),
    "max_source_fragments": ([20] * 12, [],
                             {"target_rows_per_fragment": 50, "max_source_fragments": 7},
                             ["--target-rows-per-fragment", "50", "--max-source-fragments", "7"]),
    "max_source_rows": ([20] * 12, [(1, 5)],
                        {"target_rows_per_fragment": 50, "max_source_rows": 100},
                        ["--target-rows-per-fragment", "50", "--max-source-rows", "100"]),
    "max_source_rows_first_too_big": ([20] * 6, [],
                                      {"target_rows_per_fragment": 50, "max_source_rows": 10},
                                      ["--target-rows-per-fragment", "50", "--max-source-rows", "10"]),
    "max_source_bytes": ([20] * 12, [],
                         {"target_rows_per_fragment": 50, "max_source_bytes": 9000},
                         ["--target-rows-per-fragment", "50", "--max-source-bytes", "9000"]),
    "defaults": ([100] * 5 + [10], [(2, 3)], {}, []),
}


@pytest.mark.parametrize("case", sorted(PLAN_CASES))
def test_plan_matches_pylance(tmp_path, lance_cpp, case):
    sizes, deletions, options, flags = PLAN_CASES[case]
    path = tmp_path / "plan.lance"
    build(path, sizes)
    for fragment, tenths in deletions:
        delete_in(path, sizes, fragment, tenths)
    expected = pylance_plan(path, options)
    assert cpp_plan(lance_cpp, path, *flags) == expected


def test_plan_cut_by_index_coverage(tmp_path, lance_cpp):
    """Bins end where the set of indices covering the fragments changes
    (lance-cpp plans them; executing them is refused, see below)."""
    path = tmp_path / "indexed.lance"
    sizes = [30, 30, 30]
    build(path, sizes, stable=True)
    lance.dataset(path).create_scalar_index("id", "BTREE")
    start = sum(sizes)
    for n in (30, 30):
        lance.write_dataset(rows(start, n), path, mode="append", max_rows_per_file=n)
        start += n
    lance.dataset(path).create_scalar_index("s", "BITMAP")
    for n in (30, 30):
        lance.write_dataset(rows(start, n), path, mode="append", max_rows_per_file=n)
        start += n
    options = {"target_rows_per_fragment": 1000}
    expected = pylance_plan(path, options)
    assert len(expected) == 3  # three coverage sets
    assert cpp_plan(lance_cpp, path, "--target-rows-per-fragment", "1000") == expected


def make_pair(tmp_path: Path, version: str, stable: bool):
    """Many small fragments, about 20% of the rows deleted (some fragments
    over the threshold, some under, some untouched); copied twice."""
    ours = tmp_path / "ours.lance"
    theirs = tmp_path / "theirs.lance"
    sizes = [100] * 8 + [40, 40, 40, 700]
    build(ours, sizes, version=version, stable=stable)
    ds = lance.dataset(ours)
    ds.delete("id % 5 = 0 and id < 500")           # 20% of fragments 0-4
    lance.dataset(ours).delete("id >= 600 and id < 640")  # 40% of fragment 6
    lance.dataset(ours).delete("id = 850")         # a few of a small one
    # 20% of the large last one: it is rewritten, into two files
    lance.dataset(ours).delete("id >= 920 and id % 5 = 1")
    shutil.copytree(ours, theirs)
    return ours, theirs


def fragments_of(path: Path) -> list:
    return [(f.fragment_id, f.metadata.physical_rows, f.metadata.deletion_file is None, len(f.data_files()))
            for f in lance.dataset(path).get_fragments()]


def data_versions(path: Path) -> list:
    return sorted({(d.file_major_version, d.file_minor_version)
                   for f in lance.dataset(path).get_fragments() for d in f.data_files()})


def assert_same_compaction(lance_cpp, ours: Path, theirs: Path, stable: bool) -> None:
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert a.version == b.version
    assert [v["version"] for v in a.versions()] == [v["version"] for v in b.versions()]
    assert fragments_of(ours) == fragments_of(theirs)
    assert data_versions(ours) == data_versions(theirs)
    assert a.data_storage_version == b.data_storage_version
    # Same rows, same order.
    assert a.to_table().equals(b.to_table())
    assert (a.to_table(columns=["id"], with_row_id=True, with_row_address=True)
            .equals(b.to_table(columns=["id"], with_row_id=True, with_row_address=True)))
    ta, tb = a.read_transaction(a.version).operation, b.read_transaction(b.version).operation
    assert type(ta).__name__ == type(tb).__name__ == "Rewrite"
    assert ([([f.id for f in g.old_fragments], [f.id for f in g.new_fragments]) for g in ta.groups]
            == [([f.id for f in g.old_fragments], [f.id for f in g.new_fragments]) for g in tb.groups])
    # pylance's Python API has no ReserveFragments: the operations as
    # lance-cpp reads them from both.
    ops = lambda path: [line[-1] for line in lance_cpp.versions(path)]
    assert ops(ours) == ops(theirs)
    assert ops(ours)[-2:] == ["ReserveFragments", "Rewrite"]
    if stable:
        cols = ["id", "_rowid", "_row_created_at_version", "_row_last_updated_at_version"]
        assert a.to_table(columns=cols).equals(b.to_table(columns=cols))
        ids = a.to_table(columns=["id"], with_row_id=True)
        some = ids["_rowid"].to_pylist()[::37]
        assert a._take_rows(some).equals(b._take_rows(some))
        out = lance_cpp.run_ok("take", ours, "--row-ids", ",".join(map(str, some)), "--format", "json")
        taken = [json.loads(line)["id"] for line in out.stdout.splitlines()]
        assert taken == a._take_rows(some, columns=["id"])["id"].to_pylist()
    # lance-cpp reads its own result as pylance does.
    assert_view_matches(lance_cpp.inspect(ours), pylance_view(ours), "after compaction")


@pytest.mark.parametrize("stable", [False, True], ids=["addr", "stable"])
@pytest.mark.parametrize("version", VERSIONS)
def test_compact_matches_pylance(tmp_path, lance_cpp, version, stable):
    ours, theirs = make_pair(tmp_path, version, stable)
    before = lance.dataset(ours).to_table(with_row_id=True)

    proc = lance_cpp.run_ok("compact", ours, "--target-rows-per-fragment", "250")
    change = parse_change(proc.stdout)
    m = lance.dataset(theirs).optimize.compact_files(target_rows_per_fragment=250, num_threads=1)
    assert change.committed and change.version == lance.dataset(theirs).version
    assert compaction_metrics(change) == [
        m.fragments_removed, m.files_removed, m.fragments_added, m.files_added]
    assert_same_compaction(lance_cpp, ours, theirs, stable)
    if stable:
        after = lance.dataset(ours).to_table(with_row_id=True)
        assert dict(zip(after["id"].to_pylist(), after["_rowid"].to_pylist())) == dict(
            zip(before["id"].to_pylist(), before["_rowid"].to_pylist()))

    # Nothing left to do: no commit.
    again = parse_change(lance_cpp.run_ok("compact", ours, "--target-rows-per-fragment", "250").stdout)
    assert not again.committed and again.version == lance.dataset(ours).version

    # Each side goes on with the other's result: pylance deletes and
    # compacts what lance-cpp compacted, lance-cpp what pylance did.
    for path in (ours, theirs):
        lance.dataset(path).delete("id % 3 = 0 and id < 700")
        lance.write_dataset(rows(2000, 30), path, mode="append", max_rows_per_file=10)
    ours2, theirs2 = tmp_path / "ours2.lance", tmp_path / "theirs2.lance"
    shutil.copytree(theirs, ours2)
    shutil.copytree(ours, theirs2)
    lance_cpp.run_ok("compact", ours2, "--target-rows-per-fragment", "300", "--quiet")
    lance.dataset(theirs2).optimize.compact_files(target_rows_per_fragment=300, num_threads=1)
    # ours2 started as pylance's, theirs2 as lance-cpp's: the same data, so
    # the same result but for file names.
    assert fragments_of(ours2) == fragments_of(theirs2)
    assert lance.dataset(ours2).to_table().equals(lance.dataset(theirs2).to_table())
    assert_same_compaction(lance_cpp, ours2, theirs2, stable)


def test_compact_lance_cpp_written(tmp_path, lance_cpp):
    """A dataset lance-cpp wrote and deleted from, compacted by both."""
    src = tmp_path / "in.arrow"
    with pa.OSFile(str(src), "wb") as f, pa.ipc.new_file(f, rows(0, 600).schema) as w:
        w.write_table(rows(0, 600))
    ours = tmp_path / "ours.lance"
    lance_cpp.run_ok("write", ours, "--input", src, "--max-rows-per-file", "50", "--enable-stable-row-ids")
    lance_cpp.run_ok("delete", ours, "id % 4 = 1")
    theirs = tmp_path / "theirs.lance"
    shutil.copytree(ours, theirs)
    lance_cpp.run_ok("compact", ours)
    lance.dataset(theirs).optimize.compact_files(num_threads=1)
    assert_same_compaction(lance_cpp, ours, theirs, True)


def vec_rows(start: int, n: int) -> pa.Table:
    """rows() and a small float vector column, for a vector index."""
    values = pa.array([float(x) for i in range(start, start + n) for x in (i, i % 3, 1, 0)], pa.float32())
    return rows(start, n).append_column("vec", pa.FixedSizeListArray.from_arrays(values, 4))


@pytest.mark.parametrize("stable", [False, True], ids=["addr", "stable"])
def test_index_refusals(tmp_path, lance_cpp, stable):
    """A compacted fragment's rows move, and the indices over them are
    remapped (tests/interop/test_compaction_index_remap.py). One lance-cpp
    cannot remap (an IVF_HNSW_SQ index over row addresses) is refused, naming
    the index, nothing written; over stable row ids a full-text index's ids
    do not move and it follows the rewrite, as pylance's. Fragments no index
    covers still compact, and the indices answer as before."""
    path = tmp_path / "idx.lance"
    write_fragments(path, [30, 30, 30], vec_rows, data_storage_version="2.1", enable_stable_row_ids=stable)
    lance.dataset(path).create_scalar_index("id", "BTREE", name="id_idx")
    if stable:
        lance.dataset(path).create_scalar_index("s", "INVERTED", name="s_fts")
    else:
        lance.dataset(path).create_index("vec", "IVF_HNSW_SQ", name="vec_ivf", num_partitions=1)
    lance.dataset(path).delete("id % 5 = 2")
    files = sorted(p.name for p in (path / "data").iterdir())
    version = lance.dataset(path).version
    if stable:
        uuid = {i["name"]: i["uuid"] for i in lance.dataset(path).list_indices()}["s_fts"]
        proc = lance_cpp.run("compact", path)
        assert proc.returncode == 0, proc.stderr
        ds = lance.dataset(path)
        after = {i["name"]: i for i in ds.list_indices()}
        assert after["s_fts"]["uuid"] == uuid and sorted(after["s_fts"]["fragment_ids"]) == [3]
        assert ds.to_table(full_text_query="s41")["id"].to_pylist() == [41]
        return
    proc = lance_cpp.run("compact", path)
    assert proc.returncode == 1
    assert "vec_ivf" in proc.stderr and "HNSW" in proc.stderr and "remap" in proc.stderr, proc.stderr
    assert sorted(p.name for p in (path / "data").iterdir()) == files
    assert lance.dataset(path).version == version
    # The plan is pylance's; only its execution is refused.
    assert cpp_plan(lance_cpp, path) == pylance_plan(path, {}) == [[0, 1, 2]]
    lance.dataset(path).drop_index("vec_ivf")
    start = 90
    for n in (20, 20):
        lance.write_dataset(vec_rows(start, n), path, mode="append", max_rows_per_file=n)
        start += n
    lance.dataset(path).create_scalar_index("s", "BITMAP", name="s_idx")  # covers 0-4
    for n in (20, 20):
        lance.write_dataset(vec_rows(start, n), path, mode="append", max_rows_per_file=n)
        start += n
    proc = lance_cpp.run("compact", path, "--exclude-fragments", "0,1,2,3,4")
    assert proc.returncode == 0, proc.stderr
    ds = lance.dataset(path)
    assert [f.fragment_id for f in ds.get_fragments()] == [0, 1, 2, 3, 4, 7]
    expected = [i for i in range(170) if i >= 90 or i % 5 != 2]
    assert ds.to_table().sort_by("id")["id"].to_pylist() == expected
    for flt in ("id = 41", "id = 42", "id > 70 and id < 150", "s = 's13'", "s = 's160'"):
        assert (ds.to_table(filter=flt).sort_by("id")
                .equals(ds.to_table(filter=flt, use_scalar_index=False).sort_by("id"))), flt
    assert sorted((i["name"], sorted(i["fragment_ids"])) for i in ds.list_indices()) == [
        ("id_idx", [0, 1, 2]), ("s_idx", [0, 1, 2, 3, 4])]
    # The BTREE is remapped now that nothing else is in the way.
    proc = lance_cpp.run("compact", path)
    assert proc.returncode == 0, proc.stderr
    ds = lance.dataset(path)
    for flt in ("id = 41", "id = 42", "id > 70 and id < 150", "s = 's13'"):
        assert (ds.to_table(filter=flt).sort_by("id")
                .equals(ds.to_table(filter=flt, use_scalar_index=False).sort_by("id"))), flt


def test_option_refusals(tmp_path, lance_cpp):
    path = tmp_path / "r.lance"
    build(path, [30, 30], version="2.1")
    # (force_binary_copy: tests/interop/test_binary_copy.py.)
    # (--defer-index-remap: tests/interop/test_frag_reuse_index.py.)
    for flags, word in ((["--data-storage-version", "legacy"], "data_storage_version"),
                        (["--max-source-rows", "0"], "max_source_rows")):
        proc = lance_cpp.run("compact", path, *flags)
        assert proc.returncode == 1, (flags, proc.stderr)
        assert word in proc.stderr
    assert lance.dataset(path).version == 2
    lance_cpp.run_ok("compact", path, "--compaction-mode", "try_binary_copy")
    assert len(lance.dataset(path).get_fragments()) == 1


def test_compaction_racing_pylance_delete(tmp_path, lance_cpp):
    """pylance plans and executes, lance-cpp deletes rows of a fragment it
    rewrites, pylance's commit must fail; and the reverse order: after a
    pylance delete, lance-cpp compacts the new latest."""
    path = tmp_path / "race.lance"
    build(path, [30, 30, 30, 30])
    ds = lance.dataset(path)
    plan = Compaction.plan(ds, {"target_rows_per_fragment": 1000})
    results = [t.execute(ds) for t in plan.tasks]
    lance_cpp.run_ok("delete", path, "id = 35")
    with pytest.raises(OSError, match="(?i)conflict|retry"):
        Compaction.commit(lance.dataset(path), results)
    lance_cpp.run_ok("compact", path)
    assert lance.dataset(path).count_rows() == 119
    assert len(lance.dataset(path).get_fragments()) == 1


def test_cli_usage_and_plain_plan(tmp_path, lance_cpp):
    path = tmp_path / "u.lance"
    build(path, [30, 30, 200, 30, 30])
    for flags in (["--json"], ["--compaction-mode", "copy"], ["--target-rows-per-fragment", "x"],
                  ["--materialize-deletions-threshold", "lots"], ["--exclude-fragments", "1,a"]):
        proc = lance_cpp.run("compact", path, *flags)
        assert proc.returncode == 2, (flags, proc.stderr)
        assert proc.stderr.startswith("error: ")
    proc = lance_cpp.run_ok("compact", path, "--plan", "--target-rows-per-fragment", "100")
    assert proc.stdout == ("task 0: fragments 0, 1\n"
                           "task 1: fragments 3, 4\n"
                           "planned 2 tasks; version 5 unchanged\n")
    assert pylance_plan(path, {"target_rows_per_fragment": 100}) == [[0, 1], [3, 4]]
    assert lance.dataset(path).version == 5



def test_blob_v2_columns(tmp_path, lance_cpp):
    """Blob v2 values are read and written anew beside the new files, as
    pylance 14 compacts them: the same descriptors and the same bytes."""
    from test_blob_v2_row_ops import _blobs_by_id, _table
    ours = tmp_path / "ours.lance"
    lance.write_dataset(_table(range(0, 60), 0), ours, data_storage_version="2.2", max_rows_per_file=20)
    lance.dataset(ours).delete("id % 5 = 0")
    theirs = tmp_path / "theirs.lance"
    shutil.copytree(ours, theirs)
    expected = _blobs_by_id(lance.dataset(ours))
    lance_cpp.run_ok("compact", ours, "--target-rows-per-fragment", "30")
    lance.dataset(theirs).optimize.compact_files(target_rows_per_fragment=30, num_threads=1)
    assert fragments_of(ours) == fragments_of(theirs)
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert a.to_table().equals(b.to_table())  # descriptors too
    assert _blobs_by_id(a) == _blobs_by_id(b) == expected
    # And pylance goes on with what lance-cpp compacted as with its own.
    for path in (ours, theirs):
        lance.dataset(path).delete("id % 7 = 1")
        lance.write_dataset(_table(range(100, 110), 3), path, mode="append")
        lance.dataset(path).optimize.compact_files(num_threads=1)
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert a.to_table().equals(b.to_table())
    assert _blobs_by_id(a) == _blobs_by_id(b)
    assert len(_blobs_by_id(a)) == 48 - 7 + 10


def test_legacy_blob_refused(tmp_path, lance_cpp):
    path = tmp_path / "legacy.lance"
    schema = pa.schema([pa.field("id", pa.int64()),
                        pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})])
    for i in range(2):
        t = pa.table({"id": [i], "b": [b"x" * 10]}, schema=schema)
        lance.write_dataset(t, path, data_storage_version="2.1", mode="create" if i == 0 else "append")
    proc = lance_cpp.run("compact", path)
    assert proc.returncode == 1 and "legacy blobs" in proc.stderr, proc.stderr
    assert len(lance.dataset(path).get_fragments()) == 2
