"""The fragments lance-cpp writes are laid out as pylance's.

One pylance dataset is copied; lance-cpp changes one copy, pylance the other
with its own API, the same operations in the same order (append, update,
merge-insert updating and inserting, from a full and a partial source, then
with a by-source delete, with and without its predicate). After each, both must have the same fragments: ids,
physical rows, per data file the recorded file version, field ids and
column indices, deletion files (kind, rows, read version), which row-id and
lineage sequences exist, and, as pylance scans them, the same rows in the
same order with the same row ids, addresses and lineage versions. Then each
library reads what the other wrote.

pylance's merge-insert writes updated rows in target order, then inserted
rows in source order, into the same new fragments. Its join splits larger
inputs across threads, which reorders rows by core count, so the datasets
here stay far below one 8192-row batch.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance

VERSIONS = ["2.0", "2.1", "2.2"]
LINEAGE = ["_rowid", "_rowaddr", "_row_created_at_version", "_row_last_updated_at_version"]


def make_rows(ids, seed: int) -> pa.Table:
    ids = list(ids)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "v": pa.array([(i * 7 + seed) % 1000 for i in ids], pa.int32()),
        "s": pa.array([None if (i + seed) % 11 == 0 else f"s{i}-{seed}" for i in ids], pa.string()),
        # A struct: 2.0 files record it as a field of its own, 2.1+ only its leaves.
        "p": pa.array([{"x": i + seed, "y": float(i) / 2} for i in ids],
                      pa.struct([("x", pa.int64()), ("y", pa.float64())])),
    })


def write_ipc(path: Path, table: pa.Table) -> Path:
    with ipc.new_file(str(path), table.schema) as w:
        w.write_table(table)
    return path


def layout(path: Path) -> list:
    """Every fragment of the latest version, as pylance reports it."""
    out = []
    for frag in lance.dataset(path).get_fragments():
        m = frag.metadata
        d = m.deletion_file
        out.append({
            "id": m.id,
            "physical_rows": m.physical_rows,
            "files": [{"version": (f.file_major_version, f.file_minor_version), "fields": list(f.fields),
                       "column_indices": list(f.column_indices), "base_id": f.base_id}
                      for f in m.files],
            "deletion": None if d is None else (d.file_type, d.num_deleted_rows, d.read_version),
            "row_id_meta": m.row_id_meta is not None,
            "created_at_meta": m.created_at_version_meta is not None,
            "last_updated_meta": m.last_updated_at_version_meta is not None,
        })
    return out


def rows(path: Path) -> pa.Table:
    """Every live row in dataset order, with its id, address and lineage."""
    ds = lance.dataset(path)
    return ds.to_table(columns=ds.schema.names + LINEAGE)


def assert_same_layout(ours: Path, theirs: Path, step: str) -> None:
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert a.version == b.version, step
    la, lb = layout(ours), layout(theirs)
    assert len(la) == len(lb), f"{step}: {len(la)} fragments, pylance {len(lb)}:\n{la}\n{lb}"
    for fa, fb in zip(la, lb):
        assert fa == fb, f"{step}: fragment {fb['id']}:\n lance-cpp {fa}\n pylance   {fb}"
    ra, rb = rows(ours), rows(theirs)
    assert ra.num_rows == rb.num_rows, step
    for name in ra.column_names:
        assert ra[name].to_pylist() == rb[name].to_pylist(), f"{step}: column {name} differs in row order or value"


def cpp_rows(lance_cpp, path: Path, out: Path) -> pa.Table:
    lance_cpp.run_ok("scan", path, "--with-row-id", "--with-row-address", "--out", out)
    with pa.memory_map(str(out)) as f:
        return ipc.open_file(f).read_all()


@pytest.fixture(params=[(v, s) for v in VERSIONS for s in (False, True)],
                ids=lambda p: f"{p[0]}-{'stable' if p[1] else 'addr'}")
def pair(request, tmp_path):
    """(ours, theirs): one pylance dataset of 3 fragments with deletions, twice."""
    version, stable = request.param
    ours = tmp_path / "ours.lance"
    theirs = tmp_path / "theirs.lance"
    lance.write_dataset(make_rows(range(60), 0), ours, data_storage_version=version,
                        enable_stable_row_ids=stable, max_rows_per_file=20)
    lance.dataset(ours).delete("id % 10 = 9")
    shutil.copytree(ours, theirs)
    return ours, theirs


def test_append_update_merge_insert_layout(pair, lance_cpp, tmp_path):
    ours, theirs = pair
    assert_same_layout(ours, theirs, "start")

    # Append, split by max_rows_per_file.
    extra = make_rows(range(60, 85), 1)
    lance_cpp.run_ok("write", ours, "--input", write_ipc(tmp_path / "append.arrow", extra), "--mode", "append",
                     "--max-rows-per-file", "10", "--quiet")
    lance.write_dataset(extra, theirs, mode="append", max_rows_per_file=10)
    assert_same_layout(ours, theirs, "append")

    # Update of rows in old and appended fragments.
    lance_cpp.run_ok("update", ours, "--set", "v=v + 1000", "--where", "id % 7 = 3")
    lance.dataset(theirs).update({"v": "v + 1000"}, where="id % 7 = 3")
    assert_same_layout(ours, theirs, "update")

    # Merge-insert: matched keys out of target order, new keys between them.
    source = make_rows([70, 200, 5, 33, 201, 62, 12, 202, 3], 2)
    lance_cpp.run_ok("merge-insert", ours, "--on", "id", "--input", write_ipc(tmp_path / "m1.arrow", source),
                     "--when-matched-update-all", "--when-not-matched-insert-all")
    (lance.dataset(theirs).merge_insert("id").when_matched_update_all()
     .when_not_matched_insert_all().execute(source))
    assert_same_layout(ours, theirs, "merge-insert")

    # A source with the key and only some columns: matched rows keep the
    # others, inserted rows get nulls, still in one set of fragments.
    source = make_rows([500, 64, 501, 7], 5).select(["id", "v", "p"])
    lance_cpp.run_ok("merge-insert", ours, "--on", "id", "--input", write_ipc(tmp_path / "m0.arrow", source),
                     "--when-matched-update-all", "--when-not-matched-insert-all")
    (lance.dataset(theirs).merge_insert("id").when_matched_update_all()
     .when_not_matched_insert_all().execute(source))
    assert_same_layout(ours, theirs, "merge-insert, partial source")

    # With a by-source delete of some unmatched rows.
    source = make_rows([41, 300, 17, 301, 80], 3)
    lance_cpp.run_ok("merge-insert", ours, "--on", "id", "--input", write_ipc(tmp_path / "m2.arrow", source),
                     "--when-matched-update-all", "--when-not-matched-insert-all",
                     "--when-not-matched-by-source-delete", "id >= 40 AND id < 50")
    (lance.dataset(theirs).merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
     .when_not_matched_by_source_delete("id >= 40 AND id < 50").execute(source))
    assert_same_layout(ours, theirs, "merge-insert, by-source delete if")

    # With a by-source delete of every unmatched row: most fragments go.
    source = make_rows([200, 400, 12, 401], 4)
    lance_cpp.run_ok("merge-insert", ours, "--on", "id", "--input", write_ipc(tmp_path / "m3.arrow", source),
                     "--when-matched-update-all", "--when-not-matched-insert-all",
                     "--when-not-matched-by-source-delete")
    (lance.dataset(theirs).merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
     .when_not_matched_by_source_delete().execute(source))
    assert_same_layout(ours, theirs, "merge-insert, by-source delete")

    # Each library reads what the other wrote, rows in the same order.
    expected = rows(theirs)
    for i, path in enumerate((ours, theirs)):
        mine = cpp_rows(lance_cpp, path, tmp_path / f"scan-{i}.arrow")
        for name in lance.dataset(path).schema.names + ["_rowid", "_rowaddr"]:
            assert mine[name].to_pylist() == expected[name].to_pylist(), f"lance-cpp scan of {path.name}: {name}"


@pytest.mark.parametrize("version", ["2.0", "2.2"])
def test_rewrite_beyond_max_rows_per_file(version, lance_cpp, tmp_path):
    """Update and merge-insert cut their new fragments at pylance's default
    max_rows_per_file (1024 * 1024 rows), as pylance's own do. (About 5 s
    each: the cut is the same code for every version, so two of them.)"""
    n = 1024 * 1024 + 3000
    ours = tmp_path / "ours.lance"
    theirs = tmp_path / "theirs.lance"
    table = pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.array([i % 97 for i in range(n)], pa.int32())})
    lance.write_dataset(table, ours, data_storage_version=version, max_rows_per_file=600_000)
    shutil.copytree(ours, theirs)

    lance_cpp.run_ok("update", ours, "--set", "v=v + 1")
    lance.dataset(theirs).update({"v": "v + 1"})
    assert layout(ours) == layout(theirs)
    a, b = lance.dataset(ours).to_table(), lance.dataset(theirs).to_table()
    assert a["id"].equals(b["id"]) and a["v"].equals(b["v"])

    # Merge-insert: its rows are many, so pylance's join may order them by
    # thread; the layout must agree and the rows as a set.
    source = pa.table({"id": pa.array(range(n + 1000), pa.int64()), "v": pa.array([7] * (n + 1000), pa.int32())})
    lance_cpp.run_ok("merge-insert", ours, "--on", "id", "--input", write_ipc(tmp_path / "m.arrow", source),
                     "--when-matched-update-all", "--when-not-matched-insert-all")
    (lance.dataset(theirs).merge_insert("id").when_matched_update_all()
     .when_not_matched_insert_all().execute(source))
    assert layout(ours) == layout(theirs)
    a, b = lance.dataset(ours).to_table(), lance.dataset(theirs).to_table()
    assert a.sort_by("id").equals(b.sort_by("id"))
