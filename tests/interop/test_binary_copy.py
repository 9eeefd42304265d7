"""Binary-copy compaction: `lance-cpp compact --compaction-mode
try_binary_copy|force_binary_copy` against pylance's
`compact_files(compaction_mode=...)`.

The same pylance dataset, twice; lance-cpp compacts one copy, pylance the
other. The two commits must be the same, field by field (manifest, inline
transaction, _transactions/ file, decoded by protoc as in
test_manifest_parity.py), with the new data files equal byte for byte (a
copy re-encodes nothing, so pylance's output is deterministic), and both
tables the same as pylance reads them. With deletions, try_binary_copy
copies the tasks without them and re-encodes the rest; force_binary_copy
refuses as pylance does. Then each side compacts the other's result.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import lance

import test_manifest_parity as parity
from cli_output import compaction_metrics, parse_change
from conftest import write_fragments

VERSIONS = ["2.0", "2.1", "2.2"]


def rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "s": pa.array([None if i % 7 == 0 else f"s{i}" for i in ids], pa.string()),
        "v": pa.array([[i, i % 3] if i % 4 else None for i in ids], pa.list_(pa.int32())),
        "st": pa.array([{"a": i * 3, "b": f"b{i}"} for i in ids],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "f": pa.array([float(i) / 3 for i in ids], pa.float64()),
    })


def build(path: Path, sizes: list, version: str, stable: bool) -> None:
    """One fragment per entry of `sizes`, each its own version."""
    write_fragments(path, sizes, rows, data_storage_version=version, enable_stable_row_ids=stable)


SIZES = [30, 30, 30, 30, 25, 25, 200, 40, 40]


SEQUENCES = ("inline_row_ids", "inline_created_at_versions", "inline_last_updated_at_versions")


def _without_sequences(msg):
    if isinstance(msg, dict):
        return {k: _without_sequences(v) for k, v in msg.items() if k not in SEQUENCES}
    if isinstance(msg, list):
        return [_without_sequences(v) for v in msg]
    return msg


def compare_commits(ours: Path, theirs: Path, base_listing: dict, kept: tuple, sequences: bool = True) -> list:
    """Differences between the two last commits. With `sequences` False the
    row-id and lineage sequences are compared by the values they hold per
    row (as pylance reads them) instead of by their encoding."""
    a = parity.committed(ours, base_listing, parity.Renamer(*kept))
    b = parity.committed(theirs, base_listing, parity.Renamer(*kept))
    if not sequences:
        a, b = _without_sequences(a), _without_sequences(b)
        cols = ["id", "_rowid", "_row_created_at_version", "_row_last_updated_at_version"]
        ta, tb = lance.dataset(ours).to_table(columns=cols), lance.dataset(theirs).to_table(columns=cols)
        if not ta.equals(tb):
            return [f"row ids or lineage differ:\n{ta}\n{tb}"]
    problems = []
    for part in ("version", "footer", "manifest", "transaction", "index_section", "added", "removed"):
        problems += [f"{part}: {d}" for d in parity.diff(a[part], b[part])]
    if a["new_data_files"].keys() != b["new_data_files"].keys():
        problems.append(f"new data files: lance-cpp {sorted(a['new_data_files'])}, "
                        f"pylance {sorted(b['new_data_files'])}")
    for k in a["new_data_files"].keys() & b["new_data_files"].keys():
        x, y = a["new_data_files"][k], b["new_data_files"][k]
        if x != y:
            problems.append(f"{k}: {len(x)} vs {len(y)} bytes, differing from byte "
                            f"{next((i for i in range(min(len(x), len(y))) if x[i] != y[i]), min(len(x), len(y)))}")
    if not problems:
        ta, tb = parity._tables(ours), parity._tables(theirs)
        if not ta.equals(tb):
            problems.append(f"pylance reads different tables:\n{ta}\n{tb}")
    return problems


def compact_both(lance_cpp, ours: Path, theirs: Path, mode: str, target: int, sequences: bool = True) -> None:
    kept = parity._base_names(ours)
    base_listing = parity._listing(ours)
    proc = lance_cpp.run_ok("compact", ours, "--compaction-mode", mode, "--target-rows-per-fragment", str(target))
    change = parse_change(proc.stdout)
    m = lance.dataset(theirs).optimize.compact_files(compaction_mode=mode, target_rows_per_fragment=target,
                                                      num_threads=1)
    assert change.committed and change.version == lance.dataset(theirs).version
    assert compaction_metrics(change) == [
        m.fragments_removed, m.files_removed, m.fragments_added, m.files_added]
    problems = compare_commits(ours, theirs, base_listing, kept, sequences)
    assert not problems, f"{mode}: lance-cpp's compaction differs from pylance's:\n  " + "\n  ".join(problems)
    ops = lambda path: [line[-1] for line in lance_cpp.versions(path)]
    assert ops(ours) == ops(theirs)
    assert ops(ours)[-2:] == ["ReserveFragments", "Rewrite"]


@pytest.mark.parametrize("stable", [False, True], ids=["addr", "stable"])
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("mode", ["try_binary_copy", "force_binary_copy"])
def test_binary_copy_matches_pylance(tmp_path, lance_cpp, mode, version, stable):
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    build(ours, SIZES, version, stable)
    shutil.copytree(ours, theirs)
    before = lance.dataset(ours).to_table(with_row_id=True)
    compact_both(lance_cpp, ours, theirs, mode, 100)
    ds = lance.dataset(ours)
    # The new fragments take the old ones' place at the end (by id): the
    # same rows.
    assert (ds.to_table(with_row_id=stable).sort_by("id")
            .equals(before if stable else before.drop(["_rowid"])))
    # lance-cpp reads its result (and pylance's) as pylance does.
    for path in (ours, theirs):
        out = lance_cpp.run_ok("scan", path, "--format", "json", "--columns", "id")
        assert len(out.stdout.splitlines()) == sum(SIZES)

    # Each side goes on with the other's result: appends, then a copy again.
    ours2, theirs2 = tmp_path / "ours2.lance", tmp_path / "theirs2.lance"
    shutil.copytree(theirs, ours2)
    shutil.copytree(ours, theirs2)
    for path in (ours2, theirs2):
        lance.write_dataset(rows(1000, 30), path, mode="append", max_rows_per_file=10)
    # Now ours2 (pylance's) and theirs2 (lance-cpp's) differ only in file
    # names: compacting them again must agree.
    base_listing = parity._listing(ours2)
    lance_cpp.run_ok("compact", ours2, "--compaction-mode", mode, "--target-rows-per-fragment", "100", "--quiet")
    lance.dataset(theirs2).optimize.compact_files(compaction_mode=mode, target_rows_per_fragment=100,
                                                  num_threads=1)
    a, b = lance.dataset(ours2), lance.dataset(theirs2)
    assert ([f.metadata.physical_rows for f in a.get_fragments()]
            == [f.metadata.physical_rows for f in b.get_fragments()])
    assert a.to_table(with_row_id=True).equals(b.to_table(with_row_id=True))
    new_a = [(ours2 / "data" / f.path).read_bytes() for f in a.get_fragments()[-1].metadata.files]
    new_b = [(theirs2 / "data" / f.path).read_bytes() for f in b.get_fragments()[-1].metadata.files]
    assert new_a == new_b
    assert len(parity._listing(ours2)["data"] - base_listing["data"]) == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_binary_copy_of_lance_cpp_files(tmp_path, lance_cpp, version):
    """Files lance-cpp wrote, copied by both sides: the same commit, the
    same bytes."""
    src = tmp_path / "in.arrow"
    table = rows(0, 300)
    with pa.OSFile(str(src), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table)
    ours = tmp_path / "ours.lance"
    lance_cpp.run_ok("write", ours, "--input", src, "--max-rows-per-file", "40", "--data-storage-version", version,
                     "--enable-stable-row-ids")
    theirs = tmp_path / "theirs.lance"
    shutil.copytree(ours, theirs)
    compact_both(lance_cpp, ours, theirs, "force_binary_copy", 130)
    assert lance.dataset(ours).to_table().sort_by("id").equals(table)


def wide_rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    table = pa.table({
        "id": pa.array(ids, pa.int64()),
        "ls": pa.array([[{"x": i, "y": str(i)}] * (i % 3) for i in ids],
                       pa.list_(pa.struct([("x", pa.int32()), ("y", pa.string())]))),
        "ps": pa.array([{"p": i, "q": float(i)} for i in ids], pa.struct([("p", pa.int32()), ("q", pa.float64())])),
        "fsl": pa.array([[float(i)] * 4 for i in ids], pa.list_(pa.float32(), 4)),
        "nul": pa.array([None] * n, pa.int32()),
        "dict": pa.array(["a" if i % 2 else "b" for i in ids]).dictionary_encode(),
        "ss": pa.array([{"inner": {"z": i}} for i in ids]),
        "b": pa.array([bytes([i % 256]) * (i % 5) for i in ids], pa.binary()),
    })
    schema = table.schema
    packed = schema.field("ps").with_metadata({"lance-encoding:packed": "true"})
    return table.cast(schema.set(schema.get_field_index("ps"), packed))


@pytest.mark.parametrize("version", VERSIONS)
def test_binary_copy_nested_types(tmp_path, lance_cpp, version):
    """Lists of structs, packed and nested structs, fixed-size lists, an
    all-null column, dictionaries, binary: the same bytes as pylance's copy,
    and lance-cpp reads them."""
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    for i in range(4):
        lance.write_dataset(wide_rows(i * 30, 30), ours, mode="create" if i == 0 else "append",
                            data_storage_version=version)
    shutil.copytree(ours, theirs)
    compact_both(lance_cpp, ours, theirs, "force_binary_copy", 1000)
    out = tmp_path / "scan.arrow"
    lance_cpp.run_ok("scan", ours, "--out", out)
    with pa.OSFile(str(out), "rb") as f:
        try:
            got = pa.ipc.open_file(f).read_all()
        except pa.ArrowInvalid:
            f.seek(0)
            got = pa.ipc.open_stream(f).read_all()
    expected = lance.dataset(theirs).to_table()
    assert got.num_rows == expected.num_rows == 120
    for name in expected.column_names:  # dictionaries may differ, not their values
        assert got[name].to_pylist() == expected[name].to_pylist(), name


def with_deletions(tmp_path: Path, version: str, stable: bool) -> tuple:
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    build(ours, SIZES, version, stable)
    # Fragment 6 (200 rows) over the threshold: a task of its own, re-encoded;
    # fragment 1 under it: its task (0-3) re-encoded too; 4-5, 7-8 copied.
    lance.dataset(ours).delete("id >= 150 and id < 200")
    lance.dataset(ours).delete("id = 31")
    shutil.copytree(ours, theirs)
    return ours, theirs


@pytest.mark.parametrize("stable", [False, True], ids=["addr", "stable"])
@pytest.mark.parametrize("version", VERSIONS)
def test_try_binary_copy_with_deletions(tmp_path, lance_cpp, version, stable):
    """Tasks with deletions are re-encoded, the others copied, in one commit;
    with stable row ids the sequences too are as pylance encodes them."""
    ours, theirs = with_deletions(tmp_path, version, stable)
    compact_both(lance_cpp, ours, theirs, "try_binary_copy", 100)
    # Tasks without deletions were copied: their new files hold the input
    # pages as they were (as many pages as the inputs had).
    assert len(lance.dataset(ours).get_fragments()) < len(SIZES)


def test_reencoded_sequences_encoded_as_pylance(tmp_path, lance_cpp):
    ours, theirs = with_deletions(tmp_path, "2.1", True)
    compact_both(lance_cpp, ours, theirs, "reencode", 100)


@pytest.mark.parametrize("version", VERSIONS)
def test_force_binary_copy_refusals(tmp_path, lance_cpp, version):
    """Where pylance's force_binary_copy refuses, lance-cpp refuses with the
    same meaning and writes nothing."""
    cases = {}
    p = tmp_path / "deleted.lance"
    build(p, [30, 30, 30], version, False)
    lance.dataset(p).delete("id = 40")
    cases[p] = ((), "binary copy is not supported")
    p = tmp_path / "added.lance"
    build(p, [30, 30, 30], version, False)
    lance.dataset(p).add_columns({"g": "id * 2"})
    cases[p] = ((), "binary copy is not supported")
    p = tmp_path / "dropped.lance"
    build(p, [30, 30, 30], version, False)
    lance.dataset(p).drop_columns(["s"])
    cases[p] = ((), "binary copy is not supported")
    p = tmp_path / "target.lance"
    build(p, [30, 30, 30], version, False)
    other = "2.2" if version != "2.2" else "2.1"
    cases[p] = (("--data-storage-version", other), f"binary copy target is {other}, but data file")
    for path, (flags, words) in cases.items():
        copy = tmp_path / ("py-" + path.name)
        shutil.copytree(path, copy)
        kw = {"data_storage_version": flags[1]} if flags else {}
        with pytest.raises(OSError, match=words):
            lance.dataset(copy).optimize.compact_files(compaction_mode="force_binary_copy", **kw)
        files = sorted(q.name for q in (path / "data").iterdir())
        version_before = lance.dataset(path).version
        proc = lance_cpp.run("compact", path, "--compaction-mode", "force_binary_copy", *flags)
        assert proc.returncode == 1, (path, proc.stdout, proc.stderr)
        assert proc.stderr.startswith("error: ") and words in proc.stderr, proc.stderr
        assert sorted(q.name for q in (path / "data").iterdir()) == files
        assert lance.dataset(path).version == version_before
        # try_binary_copy re-encodes the same, as pylance does.
        ours, theirs = tmp_path / ("ours-" + path.name), tmp_path / ("theirs-" + path.name)
        shutil.copytree(path, ours)
        shutil.copytree(path, theirs)
        lance_cpp.run_ok("compact", ours, "--compaction-mode", "try_binary_copy", *flags, "--quiet")
        lance.dataset(theirs).optimize.compact_files(compaction_mode="try_binary_copy", num_threads=1, **kw)
        a, b = lance.dataset(ours), lance.dataset(theirs)
        assert ([(f.metadata.physical_rows, [(d.file_major_version, d.file_minor_version) for d in f.data_files()])
                 for f in a.get_fragments()]
                == [(f.metadata.physical_rows, [(d.file_major_version, d.file_minor_version) for d in f.data_files()])
                    for f in b.get_fragments()])
        assert a.to_table().equals(b.to_table())


def test_binary_copy_ignores_max_bytes_per_file(tmp_path, lance_cpp):
    """pylance 14's copy cuts files by rows only: max_bytes_per_file does
    not split them (the re-encode path's limit)."""
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    build(ours, [50] * 6, "2.1", False)
    shutil.copytree(ours, theirs)
    kept, base_listing = parity._base_names(ours), parity._listing(ours)
    lance_cpp.run_ok("compact", ours, "--compaction-mode", "force_binary_copy", "--max-bytes-per-file", "4000",
                     "--quiet")
    lance.dataset(theirs).optimize.compact_files(compaction_mode="force_binary_copy", max_bytes_per_file=4000,
                                                 num_threads=1)
    assert [f.metadata.physical_rows for f in lance.dataset(ours).get_fragments()] == [300]
    problems = compare_commits(ours, theirs, base_listing, kept)
    assert not problems, "\n".join(problems)


def _merge_reversed(path: Path, ids: list) -> None:
    """Rows updated through merge_insert from a source in descending id
    order: pylance writes their row ids as one-row Range segments."""
    src = rows(0, max(ids) + 1).take(sorted(ids, reverse=True))
    src = src.set_column(src.schema.get_field_index("f"), "f", pa.array([-1.0] * len(ids), pa.float64()))
    lance.dataset(path).merge_insert("id").when_matched_update_all().execute(src)


SEQUENCE_CASES = {
    # The first and last row of old segments deleted.
    "segment-edges": ([30, 30, 30, 30], 100, ["id = 0", "id = 29", "id = 30", "id = 59 or id = 119"]),
    # A whole old fragment deleted, another all but one row.
    "whole-fragments": ([30, 30, 30, 30], 100, ["id >= 30 and id < 60", "id >= 60 and id < 89"]),
    # Updated rows: row ids with holes (bitmaps, sorted arrays), version
    # runs of several versions, then masked.
    "range-and-array": ([40, 40, 40], 200, ["update:id % 5 = 0", "merge:3,17,50,41,90", "id = 10 or id = 41",
                                            "id = 64"]),
    # The one-row Range segments merge_insert writes, none deleted: pylance
    # re-encodes consecutive Range segments of an old fragment as one.
    "range-runs": ([40, 40, 40], 200, ["update:id % 5 = 0", "merge:3,17,50,41,90", "id = 64"]),
    # One task cut into several new fragments across old segments.
    "several-new": ([25] * 8, 60, ["id % 9 = 4", "id >= 70 and id < 80"]),
}


@pytest.mark.parametrize("case", sorted(SEQUENCE_CASES))
def test_reencoded_sequences_cases(tmp_path, lance_cpp, case):
    """The row id and version sequences of compacted fragments, byte for
    byte as pylance encodes them, on copies of the same dataset; compacted
    twice, so spans left with holes by the first are masked again."""
    _sequence_case(tmp_path, lance_cpp, *SEQUENCE_CASES[case])


def _sequence_case(tmp_path, lance_cpp, sizes, target, steps):
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    build(ours, sizes, "2.1", True)
    for step in steps:
        if step.startswith("update:"):
            lance.dataset(ours).update({"f": "f + 1000"}, where=step[len("update:"):])
        elif step.startswith("merge:"):
            _merge_reversed(ours, [int(x) for x in step[len("merge:"):].split(",")])
        else:
            lance.dataset(ours).delete(step)
    shutil.copytree(ours, theirs)
    compact_both(lance_cpp, ours, theirs, "reencode", target)
    # Again after deleting from the compacted fragments, on fresh copies.
    lance.dataset(ours).delete("id % 3 = 2")
    shutil.rmtree(theirs)
    shutil.copytree(ours, theirs)
    compact_both(lance_cpp, ours, theirs, "reencode", target)
