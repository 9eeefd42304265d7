"""update, merge-insert and cleanup: lance-cpp against pylance.

Each test builds one dataset with pylance and copies it. lance-cpp modifies
one copy, pylance does the same to the other with its own API, and the two
must then agree as pylance reads them (rows sorted by key, row counts,
versions, stable row ids per key) and as lance-cpp reads them. Then pylance
keeps modifying the lance-cpp copy (update, delete, merge_insert,
compact_files, create_scalar_index) and lance-cpp must read what pylance
reads.
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lance

from cli_output import parse_change
from conftest import assert_clean_failure, assert_view_matches, pylance_view

VERSIONS = ["2.0", "2.1", "2.2"]
ROWS = 900
ROWS_PER_FILE = 300  # three fragments


def make_rows(ids, seed: int) -> pa.Table:
    ids = list(ids)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "v": pa.array([(i * 7 + seed) % 1000 for i in ids], pa.int32()),
        "s": pa.array([None if (i + seed) % 11 == 0 else f"s{i}-{seed}" for i in ids], pa.string()),
        "f": pa.array([float(i) / 4 + seed for i in ids], pa.float64()),
        "tags": pa.array([[i % 3, seed] if i % 5 else None for i in ids], pa.list_(pa.int32())),
    })


def pylance_dataset(path: Path, version: str, stable: bool) -> lance.LanceDataset:
    lance.write_dataset(make_rows(range(ROWS), 0), path, data_storage_version=version,
                        enable_stable_row_ids=stable, max_rows_per_file=ROWS_PER_FILE)
    ds = lance.dataset(path)
    ds.delete("id % 10 = 9")  # existing deletion vectors get merged into
    return lance.dataset(path)


@pytest.fixture(params=[(v, s) for v in VERSIONS for s in (False, True)],
                ids=lambda p: f"{p[0]}-{'stable' if p[1] else 'addr'}")
def pair(request, tmp_path, lance_cpp):
    """(ours, theirs, stable): the same pylance dataset twice."""
    version, stable = request.param
    ours = tmp_path / "ours.lance"
    theirs = tmp_path / "theirs.lance"
    pylance_dataset(ours, version, stable)
    shutil.copytree(ours, theirs)
    # Both rewrite one row (a data file is written) before the test proper.
    probe = lance_cpp.run("update", ours, "--set", "v=v", "--where", "id = 0")
    assert probe.returncode == 0, probe.stderr
    lance.dataset(theirs).update({"v": "v"}, where="id = 0")
    return ours, theirs, stable


def sorted_table(t: pa.Table) -> pa.Table:
    return t.sort_by("id")


def cpp_scan(lance_cpp, path: Path, tmp_path: Path, *extra: str) -> pa.Table:
    out = tmp_path / f"scan-{len(list(tmp_path.iterdir()))}.arrow"
    lance_cpp.run_ok("scan", path, "--out", out, *extra)
    with pa.memory_map(str(out)) as f:
        return pa.ipc.open_file(f).read_all()


def row_ids_by_key(t: pa.Table) -> dict:
    return dict(zip(t["id"].to_pylist(), t["_rowid"].to_pylist()))


def assert_same(lance_cpp, ours: Path, theirs: Path, stable: bool, tmp_path: Path,
                same_row_ids: bool = True) -> None:
    a = lance.dataset(ours)
    b = lance.dataset(theirs)
    assert a.version == b.version
    assert a.count_rows() == b.count_rows()
    assert sorted_table(a.to_table()).equals(sorted_table(b.to_table()))
    # lance-cpp reads its own result as pylance does.
    mine = cpp_scan(lance_cpp, ours, tmp_path)
    assert sorted_table(mine).equals(sorted_table(a.to_table()))
    if stable:
        ra = row_ids_by_key(a.to_table(columns=["id"], with_row_id=True))
        assert len(set(ra.values())) == len(ra), "row ids must be unique"
        if same_row_ids:
            rb = row_ids_by_key(b.to_table(columns=["id"], with_row_id=True))
            assert ra == rb
            # Row lineage as pylance records it for its own update.
            cols = ["id", "_row_created_at_version", "_row_last_updated_at_version"]
            assert (a.to_table(columns=cols).sort_by("id").to_pylist()
                    == b.to_table(columns=cols).sort_by("id").to_pylist())
        rc = row_ids_by_key(cpp_scan(lance_cpp, ours, tmp_path, "--columns", "id", "--with-row-id"))
        assert rc == ra


def assert_inspect_matches(lance_cpp, path: Path) -> None:
    """Every version of the dataset, as lance-cpp inspects it, is what pylance sees."""
    for v in lance.dataset(path).versions():
        assert_view_matches(lance_cpp.inspect(path, version=v["version"]),
                            pylance_view(path, version=v["version"]), f"version {v['version']}")


def assert_same_transaction(ours: Path, theirs: Path) -> None:
    """The latest versions were committed by the same kind of Update."""
    a = lance.dataset(ours)
    b = lance.dataset(theirs)
    ta = a.read_transaction(a.version).operation
    tb = b.read_transaction(b.version).operation
    assert type(ta) is type(tb)
    for name in ("fields_modified", "update_mode"):
        assert getattr(ta, name) == getattr(tb, name), name
    assert sorted(ta.fields_for_preserving_frag_bitmap) == sorted(tb.fields_for_preserving_frag_bitmap)
    assert sorted(ta.removed_fragment_ids) == sorted(tb.removed_fragment_ids)
    assert (sorted((f.id, f.deletion_file.num_deleted_rows) for f in ta.updated_fragments)
            == sorted((f.id, f.deletion_file.num_deleted_rows) for f in tb.updated_fragments))
    assert (sum(f.physical_rows for f in ta.new_fragments)
            == sum(f.physical_rows for f in tb.new_fragments))


def further_pylance_changes(path: Path, seed: int) -> None:
    """What pylance does to a dataset after lance-cpp changed it."""
    ds = lance.dataset(path)
    ds.update({"f": "f + 1.5"}, where="id % 4 = 1")
    lance.dataset(path).delete("id % 13 = 0")
    source = make_rows(list(range(5, 60, 5)) + list(range(ROWS + 100, ROWS + 120)), seed)
    (lance.dataset(path).merge_insert("id").when_matched_update_all()
     .when_not_matched_insert_all().execute(source))
    lance.dataset(path).optimize.compact_files(target_rows_per_fragment=2000)
    lance.dataset(path).create_scalar_index("id", "BTREE")


def test_update(pair, lance_cpp, tmp_path):
    ours, theirs, stable = pair
    before = lance.dataset(ours).to_table(columns=["id"], with_row_id=True)
    proc = lance_cpp.run_ok("update", ours, "--set", "v = v * 2 + 1", "--set", "s = 'x' || s",
                            "--where", "id % 3 = 0 AND id < 700")
    expected = lance.dataset(theirs).update({"v": "v * 2 + 1", "s": "'x' || s"},
                                            where="id % 3 = 0 AND id < 700")
    assert parse_change(proc.stdout).count("updated") == expected["num_rows_updated"] > 0
    assert_same(lance_cpp, ours, theirs, stable, tmp_path)
    assert_same_transaction(ours, theirs)
    assert_inspect_matches(lance_cpp, ours)
    if stable:
        # Updated rows kept their row ids.
        after = lance.dataset(ours).to_table(columns=["id"], with_row_id=True)
        assert row_ids_by_key(after) == row_ids_by_key(before)
        lineage = lance.dataset(ours).to_table(
            columns=["id", "_row_created_at_version", "_row_last_updated_at_version"])
        new_version = lance.dataset(ours).version
        for row in lineage.to_pylist():
            hit = row["id"] % 3 == 0 and row["id"] < 700
            assert row["_row_created_at_version"] == 1
            assert row["_row_last_updated_at_version"] == (new_version if hit else 1)

    # Few rows (5%, over fragments with deletions): found on the predicate's
    # column, then taken by address.
    proc = lance_cpp.run_ok("update", ours, "--set", "f = f * 2", "--set", "tags = NULL", "--where", "id % 20 = 3")
    expected = lance.dataset(theirs).update({"f": "f * 2", "tags": "NULL"}, where="id % 20 = 3")
    assert parse_change(proc.stdout).count("updated") == expected["num_rows_updated"] > 0
    assert_same(lance_cpp, ours, theirs, stable, tmp_path)
    assert_same_transaction(ours, theirs)

    # A float into an int column: truncated as DataFusion casts; literals cast too.
    lance_cpp.run_ok("update", ours, "--set", "v = -f", "--set", "s = 7", "--where", "id % 7 = 2")
    lance.dataset(theirs).update({"v": "-f", "s": "7"}, where="id % 7 = 2")
    assert_same(lance_cpp, ours, theirs, stable, tmp_path)

    # Every row, no predicate; then pylance carries on.
    proc = lance_cpp.run_ok("update", ours, "--set", "f = -f")
    lance.dataset(theirs).update({"f": "-f"})
    assert parse_change(proc.stdout).count("updated") == lance.dataset(ours).count_rows()
    assert_same(lance_cpp, ours, theirs, stable, tmp_path)

    further_pylance_changes(ours, 1)
    further_pylance_changes(theirs, 1)
    assert_same(lance_cpp, ours, theirs, stable, tmp_path, same_row_ids=False)
    assert lance_cpp.run_ok("count", ours).stdout.strip() == str(lance.dataset(ours).count_rows())


MERGE_MODES = {
    "upsert": (["--when-matched-update-all", "--when-not-matched-insert-all"],
               lambda m: m.when_matched_update_all().when_not_matched_insert_all()),
    "insert-only": (["--when-not-matched-insert-all"], lambda m: m.when_not_matched_insert_all()),
    "update-delete-if": (["--when-matched-update-all", "--when-not-matched-by-source-delete", "id < 400"],
                         lambda m: m.when_matched_update_all().when_not_matched_by_source_delete("id < 400")),
    "replace-all": (["--when-matched-update-all", "--when-not-matched-insert-all",
                     "--when-not-matched-by-source-delete"],
                    lambda m: m.when_matched_update_all().when_not_matched_insert_all()
                    .when_not_matched_by_source_delete()),
}


@pytest.mark.parametrize("mode", list(MERGE_MODES))
def test_merge_insert(pair, lance_cpp, tmp_path, mode):
    ours, theirs, stable = pair
    flags, build = MERGE_MODES[mode]
    before = row_ids_by_key(lance.dataset(ours).to_table(columns=["id"], with_row_id=True))
    # Existing keys (some deleted already: id % 10 == 9), and new ones.
    source = make_rows(list(range(0, 600, 7)) + list(range(ROWS, ROWS + 50)), 3)
    source_path = tmp_path / "source.arrow"
    with pa.OSFile(str(source_path), "wb") as f, pa.ipc.new_file(f, source.schema) as w:
        w.write_table(source, max_chunksize=40)
    proc = lance_cpp.run_ok("merge-insert", ours, "--on", "id", "--input", source_path, *flags)
    expected = build(lance.dataset(theirs).merge_insert("id")).execute(source)
    change = parse_change(proc.stdout)
    assert change.committed and change.version == lance.dataset(ours).version
    assert {k: change.count(k) for k in ("inserted", "updated", "deleted")} == {
        "inserted": expected["num_inserted_rows"],
        "updated": expected["num_updated_rows"],
        "deleted": expected["num_deleted_rows"],
    }
    # Inserted rows get fresh ids in both, not necessarily the same ones.
    assert_same(lance_cpp, ours, theirs, stable, tmp_path, same_row_ids=False)
    assert_same_transaction(ours, theirs)
    assert_inspect_matches(lance_cpp, ours)
    if stable:
        after = row_ids_by_key(lance.dataset(ours).to_table(columns=["id"], with_row_id=True))
        for key, row_id in after.items():
            if key in before:
                assert row_id == before[key], f"id {key} changed its row id"

    further_pylance_changes(ours, 4)
    further_pylance_changes(theirs, 4)
    assert_same(lance_cpp, ours, theirs, stable, tmp_path, same_row_ids=False)


def write_source(path: Path, table: pa.Table) -> Path:
    with pa.OSFile(str(path), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table, max_chunksize=40)
    return path


PARTIAL_MODES = {
    "update": (["--when-matched-update-all"], lambda m: m.when_matched_update_all()),
    "upsert": (["--when-matched-update-all", "--when-not-matched-insert-all"],
               lambda m: m.when_matched_update_all().when_not_matched_insert_all()),
    "upsert-delete-if": (["--when-matched-update-all", "--when-not-matched-insert-all",
                          "--when-not-matched-by-source-delete", "id > 800"],
                         lambda m: m.when_matched_update_all().when_not_matched_insert_all()
                         .when_not_matched_by_source_delete("id > 800")),
}


@pytest.mark.parametrize("mode", list(PARTIAL_MODES))
def test_merge_insert_partial_source(pair, lance_cpp, tmp_path, mode):
    """A source with the key and some of the columns (pylance 14 accepts it):
    matched rows keep the target's values of the other columns, inserted
    rows get nulls there."""
    ours, theirs, stable = pair
    flags, build = PARTIAL_MODES[mode]
    before = row_ids_by_key(lance.dataset(ours).to_table(columns=["id"], with_row_id=True))
    full = make_rows(list(range(0, 600, 7)) + list(range(ROWS, ROWS + 50)), 3)
    source = full.select(["v", "id", "tags"])  # other order than the dataset's, s and f missing
    proc = lance_cpp.run_ok("merge-insert", ours, "--on", "id", "--input",
                            write_source(tmp_path / "partial.arrow", source), *flags)
    expected = build(lance.dataset(theirs).merge_insert("id")).execute(source)
    change = parse_change(proc.stdout)
    assert [change.count(k) for k in ("inserted", "updated", "deleted")] == [
        expected["num_inserted_rows"], expected["num_updated_rows"], expected["num_deleted_rows"]]
    assert expected["num_updated_rows"] > 0
    assert_same(lance_cpp, ours, theirs, stable, tmp_path, same_row_ids=False)
    assert_same_transaction(ours, theirs)
    assert_inspect_matches(lance_cpp, ours)
    got = {r["id"]: r for r in lance.dataset(ours).to_table().to_pylist()}
    assert got[7]["s"] == "s7-0" and got[7]["v"] == (7 * 7 + 3) % 1000  # s kept, v from the source
    if mode != "update":
        assert got[ROWS]["s"] is None and got[ROWS]["f"] is None and got[ROWS]["v"] == (ROWS * 7 + 3) % 1000
    if stable:
        after = row_ids_by_key(lance.dataset(ours).to_table(columns=["id"], with_row_id=True))
        for key, row_id in after.items():
            if key in before:
                assert row_id == before[key], f"id {key} changed its row id"

    # The other way: pylance merges a partial source into what lance-cpp
    # wrote (and into its own copy); lance-cpp reads both alike.
    other = make_rows(list(range(3, 900, 11)) + list(range(ROWS + 200, ROWS + 210)), 6).select(["id", "f"])
    for path in (ours, theirs):
        build(lance.dataset(path).merge_insert("id")).execute(other)
    assert_same(lance_cpp, ours, theirs, stable, tmp_path, same_row_ids=False)
    further_pylance_changes(ours, 5)
    further_pylance_changes(theirs, 5)
    assert_same(lance_cpp, ours, theirs, stable, tmp_path, same_row_ids=False)


def test_merge_insert_partial_source_refusals(tmp_path, lance_cpp):
    """Where pylance refuses a partial source, lance-cpp refuses it too and
    leaves the dataset as it was."""
    path = tmp_path / "r.lance"
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.int32(), nullable=False),
                        pa.field("s", pa.string())])
    lance.write_dataset(pa.table({"id": [1, 2, 3], "v": pa.array([1, 2, 3], pa.int32()), "s": ["a", "b", "c"]},
                                 schema=schema), path, data_storage_version="2.1")
    files = sorted(p.relative_to(path) for p in path.rglob("*"))
    no_v = pa.table({"id": pa.array([2, 9], pa.int64()), "s": ["x", "y"]})
    src = write_source(tmp_path / "no_v.arrow", no_v)
    message = "Cannot insert rows with a partial-schema source"
    assert_clean_failure(lance_cpp.run("merge-insert", path, "--on", "id", "--input", src,
                                       "--when-matched-update-all", "--when-not-matched-insert-all"),
                         message, '["v"]')
    with pytest.raises(OSError, match=message):
        lance.dataset(path).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(no_v)
    no_key = write_source(tmp_path / "no_key.arrow", pa.table({"s": ["x"]}))
    assert_clean_failure(lance_cpp.run("merge-insert", path, "--on", "id", "--input", no_key,
                                       "--when-matched-update-all"), "no key column 'id'")
    with pytest.raises(OSError, match="id"):
        lance.dataset(path).merge_insert("id").when_matched_update_all().execute(pa.table({"s": ["x"]}))
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == files
    # Without inserts the non-nullable column is simply kept.
    lance_cpp.run_ok("merge-insert", path, "--on", "id", "--input", src, "--when-matched-update-all")
    assert lance.dataset(path).to_table().sort_by("id").to_pydict() == {
        "id": [1, 2, 3], "v": [1, 2, 3], "s": ["a", "x", "c"]}


def test_reverse_chain(pair, lance_cpp, tmp_path):
    """pylance changes the dataset first, then lance-cpp, then pylance reads."""
    ours, theirs, stable = pair
    for path in (ours, theirs):
        further_pylance_changes(path, 7)
    assert_same(lance_cpp, ours, theirs, stable, tmp_path, same_row_ids=False)
    before = row_ids_by_key(lance.dataset(ours).to_table(columns=["id"], with_row_id=True))

    lance_cpp.run_ok("update", ours, "--set", "tags = NULL", "--where", "v > 500")
    lance.dataset(theirs).update({"tags": "NULL"}, where="v > 500")
    source = make_rows(range(100, 1200, 9), 8)
    source_path = tmp_path / "source.arrow"
    with pa.OSFile(str(source_path), "wb") as f, pa.ipc.new_file(f, source.schema) as w:
        w.write_table(source)
    lance_cpp.run_ok("merge-insert", ours, "--on", "id", "--input", source_path,
                     "--when-matched-update-all")
    lance.dataset(theirs).merge_insert("id").when_matched_update_all().execute(source)
    assert_same(lance_cpp, ours, theirs, stable, tmp_path, same_row_ids=False)
    if stable:
        after = row_ids_by_key(lance.dataset(ours).to_table(columns=["id"], with_row_id=True))
        assert after == before
    # The scalar index pylance built still answers (its fragments may be stale).
    got = lance.dataset(ours).to_table(filter="id = 100")
    assert got.num_rows == 1


def test_duplicate_source_keys(tmp_path, lance_cpp):
    path = tmp_path / "d.lance"
    pylance_dataset(path, "2.1", False)
    versions = len(lance.dataset(path).versions())
    files = sorted(p.relative_to(path) for p in path.rglob("*"))
    source = make_rows([5, 5, 6], 1)
    source_path = tmp_path / "dup.arrow"
    with pa.OSFile(str(source_path), "wb") as f, pa.ipc.new_file(f, source.schema) as w:
        w.write_table(source)
    proc = lance_cpp.run("merge-insert", path, "--on", "id", "--input", source_path,
                         "--when-matched-update-all", "--when-not-matched-insert-all")
    assert_clean_failure(proc, "Ambiguous merge inserts are prohibited", "id = 5")
    with pytest.raises(OSError, match="Ambiguous merge inserts are prohibited"):
        lance.dataset(path).merge_insert("id").when_matched_update_all().execute(source)
    assert len(lance.dataset(path).versions()) == versions
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == files


@pytest.mark.parametrize("form", ["uri-last", "inline"])
def test_merge_insert_delete_predicate_forms(tmp_path, lance_cpp, form):
    path = tmp_path / "m.lance"
    pylance_dataset(path, "2.2", False)
    source = make_rows([1, 2, 3], 5)
    source_path = tmp_path / "src.arrow"
    with pa.OSFile(str(source_path), "wb") as f, pa.ipc.new_file(f, source.schema) as w:
        w.write_table(source)
    common = ["--on", "id", "--input", source_path]
    if form == "uri-last":
        args = ["merge-insert", *common, "--when-not-matched-by-source-delete", "id < 20", path]
    else:
        args = ["merge-insert", path, *common, "--when-not-matched-by-source-delete=id < 20"]
    proc = lance_cpp.run_ok(*args)
    # ids 0..19 without 9 and 19 (deleted before) and without the matched 1, 2, 3.
    change = parse_change(proc.stdout)
    assert [change.count(k) for k in ("inserted", "updated", "deleted")] == [0, 0, 15]
    assert sorted(lance.dataset(path).to_table(filter="id < 20")["id"].to_pylist()) == [1, 2, 3]


def test_merge_insert_composite_keys_with_nulls(tmp_path, lance_cpp):
    """Two key columns, a string one; a null in a key matches nothing."""
    ours = tmp_path / "ours.lance"
    theirs = tmp_path / "theirs.lance"
    pylance_dataset(ours, "2.2", True)
    shutil.copytree(ours, theirs)
    source = make_rows([0, 1, 11, 22, 33, 44, 2000], 0)  # the target has s null for 0, 11, 22, 33, 44
    source = source.set_column(2, "s", pa.array([None, "s1-0", None, "s22-0", "zz", None, None]))
    source = source.set_column(1, "v", pa.array([-1, -2, -3, -4, -5, -6, -7], pa.int32()))
    source_path = tmp_path / "src.arrow"
    with pa.OSFile(str(source_path), "wb") as f, pa.ipc.new_file(f, source.schema) as w:
        w.write_table(source)
    proc = lance_cpp.run_ok("merge-insert", ours, "--on", "id,s", "--input", source_path,
                            "--when-matched-update-all", "--when-not-matched-insert-all")
    expected = (lance.dataset(theirs).merge_insert(["id", "s"]).when_matched_update_all()
                .when_not_matched_insert_all().execute(source))
    change = parse_change(proc.stdout)
    assert [change.count(k) for k in ("inserted", "updated", "deleted")] == [
        expected["num_inserted_rows"], expected["num_updated_rows"], expected["num_deleted_rows"]]
    assert expected["num_updated_rows"] == 1
    keys = [("id", "ascending"), ("v", "ascending")]
    assert lance.dataset(ours).to_table().sort_by(keys).equals(lance.dataset(theirs).to_table().sort_by(keys))


def test_bad_update_arguments(tmp_path, lance_cpp):
    path = tmp_path / "b.lance"
    pylance_dataset(path, "2.1", False)
    assert_clean_failure(lance_cpp.run("update", path, "--set", "nope = 1"), "nope")
    assert_clean_failure(lance_cpp.run("update", path, "--set", "v = v +"), "v +")
    assert_clean_failure(lance_cpp.run("update", path, "--set", "v = 1", "--where", "id >"), "id >")
    assert_clean_failure(lance_cpp.run("update", path, "--set", "v = f * 1e12", "--where", "id = 5"),
                         "SET v = f * 1e12", "int32")
    assert lance_cpp.run("update", path).returncode == 2
    source_path = tmp_path / "src.arrow"
    with pa.OSFile(str(source_path), "wb") as f, pa.ipc.new_file(f, make_rows([1], 0).schema) as w:
        w.write_table(make_rows([1], 0))
    assert_clean_failure(lance_cpp.run("merge-insert", path, "--on", "nokey", "--input", source_path,
                                       "--when-matched-update-all"), "nokey")
    assert_clean_failure(lance_cpp.run("merge-insert", path, "--on", "id", "--input", tmp_path / "missing.arrow",
                                       "--when-matched-update-all"), "missing.arrow")
    alien = pa.table({"id": pa.array([1], pa.int64()), "zz": pa.array([1], pa.int32())})
    with pa.OSFile(str(source_path), "wb") as f, pa.ipc.new_file(f, alien.schema) as w:
        w.write_table(alien)
    assert_clean_failure(lance_cpp.run("merge-insert", path, "--on", "id", "--input", source_path,
                                       "--when-matched-update-all"), "'zz'")
    assert lance_cpp.run("merge-insert", path, "--input", source_path).returncode == 2
    assert_clean_failure(lance_cpp.run("cleanup", tmp_path / "nowhere", "--older-than", "0"), "nowhere")
    assert lance_cpp.run("cleanup", path, "--older-than", "soon").returncode == 2
    assert len(lance.dataset(path).versions()) == 2


def test_cleanup_error_if_tagged_old_versions(tmp_path, lance_cpp):
    """pylance's default refusal when a tagged version is old enough to go:
    the CLI's --error-if-tagged-old-versions refuses the same way, removing
    nothing; without it the tagged version is kept and the rest cleaned."""
    ours = tmp_path / "ours.lance"
    for mode in ("create", "overwrite", "overwrite"):
        lance.write_dataset(make_rows(range(10), 0), ours, mode=mode)
    lance.dataset(ours).tags.create("t1", 1)
    theirs = tmp_path / "theirs.lance"
    shutil.copytree(ours, theirs)
    with pytest.raises(OSError, match="t1"):
        lance.dataset(theirs).cleanup_old_versions(older_than=timedelta(0))
    before = file_set(ours)
    proc = lance_cpp.run("cleanup", ours, "--older-than", "0", "--error-if-tagged-old-versions")
    assert_clean_failure(proc, "tagged version", "t1 (version 1)")
    assert file_set(ours) == before
    lance_cpp.run_ok("cleanup", ours, "--older-than", "0")
    lance.dataset(theirs).cleanup_old_versions(older_than=timedelta(0), error_if_tagged_old_versions=False)
    assert [v["version"] for v in lance.dataset(ours).versions()] == [1, 3]
    assert file_set(ours) == file_set(theirs)


def file_set(path: Path) -> set:
    return {str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()}


@pytest.mark.parametrize("delete_unverified", [False, True])
def test_cleanup(tmp_path, lance_cpp, delete_unverified):
    ours = tmp_path / "ours.lance"
    pylance_dataset(ours, "2.1", True)                                        # v1, v2
    lance_cpp.run_ok("update", ours, "--set", "v = 0", "--where", "id < 50")  # v3
    lance.dataset(ours).tags.create("keep", 3)
    lance.write_dataset(make_rows(range(ROWS, ROWS + 10), 2), ours, mode="append")  # v4
    lance_cpp.run_ok("update", ours, "--set", "v = 1", "--where", "id < 20")  # v5
    lance.dataset(ours).delete("id < 5")                                      # v6
    lance.dataset(ours).create_scalar_index("id", "BTREE")                    # v7
    lance.dataset(ours).create_scalar_index("id", "BTREE", replace=True)      # v8: v7's index unused
    (ours / "data" / "stray.lance").write_bytes(b"not referenced by any version")
    theirs = tmp_path / "theirs.lance"
    shutil.copytree(ours, theirs)

    def snapshot(path):
        return {v["version"]: sorted_table(lance.dataset(path, version=v["version"]).to_table())
                for v in lance.dataset(path).versions()}

    before = snapshot(ours)
    args = ["cleanup", ours, "--older-than", "0"] + (["--delete-unverified"] if delete_unverified else [])
    proc = lance_cpp.run_ok(*args)
    change = parse_change(proc.stdout)
    assert not change.committed and change.version == lance.dataset(ours).version
    stats = {k: change.count(k.replace("_", " ")[:-1]) for k in ("old_versions", "index_files")}
    expected = lance.dataset(theirs).cleanup_old_versions(
        older_than=timedelta(0), delete_unverified=delete_unverified, error_if_tagged_old_versions=False)
    assert stats["old_versions"] == expected.old_versions == 6
    assert stats["index_files"] > 0
    # The same files are left as pylance leaves.
    assert file_set(ours) == file_set(theirs)
    assert ("data/stray.lance" in file_set(ours)) == (not delete_unverified)
    kept = [v["version"] for v in lance.dataset(ours).versions()]
    assert kept == [3, 8]
    for v in kept:
        assert sorted_table(lance.dataset(ours, version=v).to_table()).equals(before[v])
        mine = cpp_scan(lance_cpp, ours, tmp_path, "--version", str(v))
        assert sorted_table(mine).equals(before[v])
    # The latest version's index survived and answers.
    assert len(lance.dataset(ours).describe_indices()) == 1
    assert lance.dataset(ours).to_table(filter="id = 100")["v"].to_pylist() == [(100 * 7) % 1000]
    tagged = lance.dataset(ours, version="keep").to_table()
    assert sorted_table(tagged).equals(before[3])
    # A second run has nothing left to remove.
    proc = lance_cpp.run_ok(*args)
    assert parse_change(proc.stdout).count("old version") == 0
