"""Legacy (data storage version 0.1) writes against pylance 14's legacy writer:
for each group of types, lance-cpp's data files are byte-identical to
pylance's for the same input, the manifests agree (DataFile records, and
`inspect --json` against pylance's view), and each side reads the other's
dataset. Appends both ways, and lance-cpp's update, merge-insert,
compaction, add-columns and cast on legacy datasets, read back by pylance and
compared with the same operation done by pylance.

Legacy files store no validity: both sides read a null int as 0, a null
string as null only where the field is nullable, and so on; the tables are
compared as each side reads them."""
from __future__ import annotations

import datetime
import decimal
import hashlib
import math
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from conftest import assert_clean_failure, assert_view_matches, pylance_view

N = 300


def _groups() -> dict[str, pa.Table]:
    ints = {t: pa.array([None if i % 7 == 3 else (i * 37) % 100 for i in range(N)], t)
            for t in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]}
    return {
        "ints": pa.table(ints),
        "floats": pa.table({
            "f16": pa.array([None if i % 5 == 0 else i * 0.5 for i in range(N)], pa.float32()).cast(pa.float16()),
            "f32": pa.array([None if i % 5 == 0 else i * 0.5 - 3 for i in range(N)], pa.float32()),
            # NaN is never a bound; -0.0 / 0.0 bounds are normalized.
            "f64": pa.array([math.nan if i == 4 else (i - 150) * 1.25 for i in range(N)], pa.float64()),
            "zeros": pa.array([0.0] * N, pa.float64()),
        }),
        "bool": pa.table({"b": pa.array([None if i % 3 == 0 else i % 2 == 0 for i in range(N)]),
                          "t": pa.array([True] * N), "n": pa.array([None] * N, pa.bool_())}),
        "strings": pa.table({
            "s": pa.array([None if i % 4 == 0 else "v" * (i % 9) + str(i) for i in range(N)]),
            # Over 64 bytes: the statistics truncate and increment the bound.
            "ls": pa.array(["x" * (i % 70) + "é" * (i % 3) for i in range(N)], pa.large_string()),
            "bin": pa.array([bytes([i % 256]) * (i % 5) for i in range(N)], pa.binary()),
            "lb": pa.array([b"\xff" * 70 for _ in range(N)], pa.large_binary()),
            "nulls": pa.array([None] * N, pa.string()),
        }),
        "vectors": pa.table({
            "v": pa.FixedSizeListArray.from_arrays(pa.array([float(i) for i in range(N * 4)], pa.float32()), 4),
            "fsb": pa.array([bytes([i % 256]) * 3 for i in range(N)], pa.binary(3)),
        }),
        "lists": pa.table({
            "l": pa.array([None if i % 6 == 0 else list(range(i % 4)) for i in range(N)], pa.list_(pa.int32())),
            "ll": pa.array([["a"] * (i % 3) for i in range(N)], pa.large_list(pa.string())),
        }),
        "struct": pa.table({
            "id": pa.array(range(N)),
            "st": pa.array([{"a": i, "b": str(i), "c": {"d": i * 2.0}} if i % 5 else None for i in range(N)],
                           pa.struct([("a", pa.int32()), ("b", pa.string()),
                                      ("c", pa.struct([("d", pa.float64())]))])),
        }),
        "temporal": pa.table({
            "ts": pa.array([datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=i) for i in range(N)],
                           pa.timestamp("us")),
            "tz": pa.array(list(range(N)), pa.timestamp("ms", tz="UTC")),
            "d32": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i) for i in range(N)]),
            "d64": pa.array([i * 86_400_000 for i in range(N)], pa.date64()),
            "dec": pa.array([decimal.Decimal(i - 100) / 100 for i in range(N)], pa.decimal128(10, 2)),
            "t32": pa.array(list(range(N)), pa.time32("s")),
            "t64": pa.array([i * 1000 for i in range(N)], pa.time64("ns")),
            "dur": pa.array(list(range(N)), pa.duration("ms")),
            "d256": pa.array([decimal.Decimal(i) for i in range(N)], pa.decimal256(40, 0)),
        }),
        # Statistics of all-null columns: the type's bounds.
        "all_null": pa.table({"z": pa.array([None] * N, pa.null()),
                              "f16": pa.array([None] * N, pa.float16()),
                              "i": pa.array([None] * N, pa.int64()),
                              "f": pa.array([None] * N, pa.float32()),
                              "dec": pa.array([None] * N, pa.decimal128(5, 1))}),
        "nested": pa.table({
            "lol": pa.array([[[i], [i, i]] if i % 3 else [] for i in range(N)], pa.list_(pa.list_(pa.int64()))),
            "los": pa.array([[{"a": i, "b": "x"}] * (i % 3) for i in range(N)],
                            pa.list_(pa.struct([("a", pa.int32()), ("b", pa.string())]))),
            "swl": pa.array([{"l": [i % 100] * (i % 2), "f": [1.0, 2.0]} for i in range(N)],
                            pa.struct([("l", pa.list_(pa.int8())), ("f", pa.list_(pa.float64(), 2))])),
        }),
        # Non-nullable fields (their statistics bounds are nullable all the
        # same) and schema metadata.
        "non_nullable": pa.table({"nn": pa.array(range(N), pa.int32()), "ns": pa.array([str(i) for i in range(N)])},
                                 schema=pa.schema([pa.field("nn", pa.int32(), nullable=False),
                                                   pa.field("ns", pa.string(), nullable=False)],
                                                  metadata={"k": "v"})),
        # Truncated string bounds; a maximum that cannot be incremented is null.
        "unicode": pa.table({"u": pa.array(["日本語" * 30 + str(i) for i in range(N)]),
                             "z": pa.array(["\U0010ffff" * 20] * N)}),
    }


GROUPS = _groups()


def _ipc(path: Path, table: pa.Table, chunk: int | None = None) -> Path:
    with ipc.new_file(str(path), table.schema) as w:
        for b in table.to_batches(max_chunksize=chunk) if chunk else table.to_batches():
            w.write_batch(b)
    return path


def _data_files(uri: Path) -> list[dict]:
    """Every data file of the latest version, in fragment order: its record
    (path aside) and the sha256 of its bytes."""
    out = []
    for frag in lance.dataset(str(uri)).get_fragments():
        for f in frag.data_files():
            out.append({"fragment": frag.fragment_id, "fields": list(f.fields),
                        "column_indices": list(f.column_indices),
                        "version": (f.file_major_version, f.file_minor_version),
                        "size": f.file_size_bytes,
                        "sha256": hashlib.sha256((uri / "data" / f.path).read_bytes()).hexdigest()})
    return out


def _rows(t: pa.Table) -> list:
    """Rows comparable with NaN in them."""
    def norm(v):
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v
    return [norm(r) for r in t.to_pylist()]


def _cpp_scan(lance_cpp, tmp_path: Path, uri: Path) -> pa.Table:
    out = tmp_path / f"scan-{os.urandom(4).hex()}.arrow"
    lance_cpp.run_ok("scan", uri, "--out", out)
    with ipc.open_file(str(out)) as f:
        return f.read_all()


def _view_without_names(view: dict) -> dict:
    """An inspect view with what differs between two writers of the same
    data removed: the uri, times, file names and deletion file ids (random)."""
    view = dict(view)
    for key in ("uri", "versions"):
        view.pop(key, None)
    view["fragments"] = [{**f, "data_files": [{k: v for k, v in d.items() if k != "path"}
                                              for d in f["data_files"]],
                          "deletion_file": f["deletion_file"] and
                          {k: v for k, v in f["deletion_file"].items() if k != "id"}}
                         for f in view["fragments"]]
    return view


def _check_same(lance_cpp, tmp_path: Path, ours: Path, theirs: Path) -> None:
    """Same data files, same manifests (as records and as inspect views), and
    each side reads the other's dataset as the other does."""
    assert _data_files(ours) == _data_files(theirs)
    assert _view_without_names(lance_cpp.inspect(ours)) == _view_without_names(lance_cpp.inspect(theirs))
    assert_view_matches(lance_cpp.inspect(ours), pylance_view(ours), "lance-cpp's legacy dataset")
    py_ours = lance.dataset(str(ours)).to_table()
    py_theirs = lance.dataset(str(theirs)).to_table()
    assert _rows(py_ours) == _rows(py_theirs)
    assert _rows(_cpp_scan(lance_cpp, tmp_path, theirs)) == _rows(py_theirs)
    assert _rows(_cpp_scan(lance_cpp, tmp_path, ours)) == _rows(py_ours)


@pytest.mark.parametrize("group", list(GROUPS))
def test_write_legacy_matches_pylance(group, tmp_path, lance_cpp):
    table = GROUPS[group]
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    lance_cpp.run_ok("write", ours, "--input", _ipc(tmp_path / "in.arrow", table),
                     "--data-storage-version", "legacy", "--quiet")
    lance.write_dataset(table, str(theirs), data_storage_version="legacy")
    assert lance.dataset(str(ours)).data_storage_version == "0.1"
    _check_same(lance_cpp, tmp_path, ours, theirs)


def test_row_groups_and_files_as_pylance(tmp_path, lance_cpp):
    """Input batches of 300 rows are regrouped into row groups of 1024 as the
    reference does; files are cut at max_rows_per_file."""
    table = pa.table({"a": pa.array(range(2500), pa.int64()), "s": pa.array([str(i) for i in range(2500)])})
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    lance_cpp.run_ok("write", ours, "--input", _ipc(tmp_path / "in.arrow", table, chunk=300),
                     "--data-storage-version", "legacy", "--max-rows-per-file", "2048", "--quiet")
    lance.write_dataset(pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=300)),
                        str(theirs), data_storage_version="legacy", max_rows_per_file=2048)
    assert len(lance.dataset(str(ours)).get_fragments()) == 2
    _check_same(lance_cpp, tmp_path, ours, theirs)


def _base(uri: Path, n: int = 40, start: int = 0) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "name": pa.array([f"n{i}" for i in ids]),
                     "pt": pa.array([{"x": i, "y": float(-i)} for i in ids],
                                    pa.struct([("x", pa.int32()), ("y", pa.float64())]))})


def _pylance_base(tmp_path: Path) -> tuple[Path, Path]:
    base = tmp_path / "base.lance"
    lance.write_dataset(_base(base), str(base), data_storage_version="legacy", max_rows_per_file=20)
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    return ours, theirs


def test_cpp_appends_to_pylance_legacy_dataset(tmp_path, lance_cpp):
    ours, theirs = _pylance_base(tmp_path)
    new = _base(tmp_path, 25, 100)
    lance_cpp.run_ok("write", ours, "--input", _ipc(tmp_path / "new.arrow", new), "--mode", "append", "--quiet")
    lance.write_dataset(new, str(theirs), mode="append")
    _check_same(lance_cpp, tmp_path, ours, theirs)


def test_pylance_appends_to_cpp_legacy_dataset(tmp_path, lance_cpp):
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    first, new = _base(tmp_path, 40), _base(tmp_path, 25, 100)
    lance_cpp.run_ok("write", ours, "--input", _ipc(tmp_path / "first.arrow", first),
                     "--data-storage-version", "legacy", "--max-rows-per-file", "20", "--quiet")
    lance.write_dataset(first, str(theirs), data_storage_version="legacy", max_rows_per_file=20)
    lance.write_dataset(new, str(ours), mode="append")
    lance.write_dataset(new, str(theirs), mode="append")
    _check_same(lance_cpp, tmp_path, ours, theirs)


def test_cpp_update_on_legacy_read_by_pylance(tmp_path, lance_cpp):
    ours, theirs = _pylance_base(tmp_path)
    lance_cpp.run_ok("update", ours, "--set", "name='u'", "--where", "id < 4 OR id = 27", "--quiet")
    lance.dataset(str(theirs)).update({"name": "'u'"}, where="id < 4 OR id = 27")
    _check_same(lance_cpp, tmp_path, ours, theirs)


def test_cpp_merge_insert_on_legacy_read_by_pylance(tmp_path, lance_cpp):
    ours, theirs = _pylance_base(tmp_path)
    source = _base(tmp_path, 10, 35)
    lance_cpp.run_ok("merge-insert", ours, "--on", "id", "--input", _ipc(tmp_path / "src.arrow", source),
                     "--when-matched-update-all", "--when-not-matched-insert-all", "--quiet")
    lance.dataset(str(theirs)).merge_insert("id").when_matched_update_all() \
        .when_not_matched_insert_all().execute(source)
    _check_same(lance_cpp, tmp_path, ours, theirs)


def test_cpp_compaction_on_legacy_read_by_pylance(tmp_path, lance_cpp):
    ours, theirs = _pylance_base(tmp_path)
    for uri in (ours, theirs):
        lance.dataset(str(uri)).delete("id = 3 OR id = 30")
    lance_cpp.run_ok("compact", ours)
    lance.dataset(str(theirs)).optimize.compact_files()
    _check_same(lance_cpp, tmp_path, ours, theirs)


def test_cpp_add_and_cast_columns_on_legacy_read_by_pylance(tmp_path, lance_cpp):
    """New columns (add-columns, a cast) go to new legacy data files."""
    ours, theirs = _pylance_base(tmp_path)
    lance_cpp.run_ok("add-columns", ours, "z=id * 2")
    lance.dataset(str(theirs)).add_columns({"z": "id * 2"})
    _check_same(lance_cpp, tmp_path, ours, theirs)
    lance_cpp.run_ok("alter-column", ours, "z", "--cast", "int32")
    lance.dataset(str(theirs)).alter_columns({"path": "z", "data_type": pa.int32()})
    _check_same(lance_cpp, tmp_path, ours, theirs)


def test_unwritable_legacy_types_are_refused(tmp_path, lance_cpp):
    """What lance-cpp does not write as legacy is refused, naming the column,
    with nothing committed; v1 and v2 files are never mixed."""
    table = pa.table({"id": pa.array([1, 2, 3]),
                      "d": pa.array([1.5, 2.5, 1.5]).dictionary_encode()})
    uri = tmp_path / "dict.lance"
    proc = lance_cpp.run("write", uri, "--input", _ipc(tmp_path / "d.arrow", table),
                         "--data-storage-version", "legacy", "--quiet")
    assert_clean_failure(proc, "'d'", "legacy")
    assert not (uri / "_versions").exists() or not any((uri / "_versions").iterdir())

    ours, _ = _pylance_base(tmp_path)
    proc = lance_cpp.run("write", ours, "--input", _ipc(tmp_path / "new.arrow", _base(tmp_path, 5, 100)),
                         "--mode", "append", "--data-storage-version", "2.1", "--quiet")
    assert_clean_failure(proc, "cannot be mixed")
    assert lance.dataset(str(ours)).version == 1


def _dict_table(ids, names=("a", "bb", "ccc")) -> pa.Table:
    """Dictionary columns with fixed dictionaries: a string one (its index
    type int8) and an int32 one."""
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "d": pa.DictionaryArray.from_arrays(pa.array([i % 3 for i in ids], pa.int8()),
                                                         pa.array(list(names))),
                     "di": pa.DictionaryArray.from_arrays(pa.array([i % 2 for i in ids], pa.int32()),
                                                          pa.array([70, 7], pa.int32()))})


def _manifest_bytes(uri: Path) -> bytes:
    ds = lance.dataset(str(uri))
    versions = sorted((uri / "_versions").glob("*.manifest"), key=lambda p: p.stat().st_mtime_ns)
    assert versions, uri
    return versions[-1].read_bytes() if ds.version else b""


# The dictionaries at the head of a legacy manifest: "abbccc", 4 positions,
# then 70 and 7 as int32.
DICT_HEAD = 6 + 4 * 8 + 2 * 4


def _check_same_dict(lance_cpp, tmp_path: Path, ours: Path, theirs: Path) -> None:
    """As _check_same, and the manifests' dictionary values (which pylance
    reads the columns through) are the same bytes at the same place."""
    _check_same(lance_cpp, tmp_path, ours, theirs)
    assert _manifest_bytes(ours)[:DICT_HEAD] == _manifest_bytes(theirs)[:DICT_HEAD]
    assert _manifest_bytes(ours)[:6] == b"abbccc"
    table = lance.dataset(str(ours)).to_table()
    assert set(table.column("d").to_pylist()) <= {"a", "bb", "ccc"}
    assert set(table.column("di").to_pylist()) <= {70, 7}


def test_write_legacy_dictionaries_as_pylance(tmp_path, lance_cpp):
    """Dictionary columns: keys as plain pages, the values once per file
    after the statistics, and once more at the head of the manifest."""
    table = _dict_table(range(50))
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    lance_cpp.run_ok("write", ours, "--input", _ipc(tmp_path / "in.arrow", table, chunk=20),
                     "--data-storage-version", "legacy", "--max-rows-per-file", "30", "--quiet")
    lance.write_dataset(pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=20)),
                        str(theirs), data_storage_version="legacy", max_rows_per_file=30)
    _check_same_dict(lance_cpp, tmp_path, ours, theirs)
    assert lance.dataset(str(ours)).to_table().column("d").to_pylist()[:4] == ["a", "bb", "ccc", "a"]


def _pylance_dict_base(tmp_path: Path) -> tuple[Path, Path]:
    base = tmp_path / "base.lance"
    lance.write_dataset(_dict_table(range(40)), str(base), data_storage_version="legacy", max_rows_per_file=20)
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    return ours, theirs


def test_legacy_dictionary_appends_both_ways(tmp_path, lance_cpp):
    ours, theirs = _pylance_dict_base(tmp_path)
    new = _dict_table(range(100, 110))
    lance_cpp.run_ok("write", ours, "--input", _ipc(tmp_path / "new.arrow", new), "--mode", "append", "--quiet")
    lance.write_dataset(new, str(theirs), mode="append")
    _check_same_dict(lance_cpp, tmp_path, ours, theirs)
    # pylance appends to lance-cpp's commit, and the reverse again.
    lance.write_dataset(new, str(ours), mode="append")
    lance.write_dataset(new, str(theirs), mode="append")
    _check_same_dict(lance_cpp, tmp_path, ours, theirs)


def test_legacy_dictionary_row_ops_as_pylance(tmp_path, lance_cpp):
    """Delete, update, merge-insert and compaction on a legacy dataset with
    dictionary columns commit what pylance 14 commits."""
    ours, theirs = _pylance_dict_base(tmp_path)
    lance_cpp.run_ok("delete", ours, "id = 2 OR id = 31")
    lance.dataset(str(theirs)).delete("id = 2 OR id = 31")
    _check_same_dict(lance_cpp, tmp_path, ours, theirs)
    lance_cpp.run_ok("update", ours, "--set", "id=id + 1000", "--where", "id < 4", "--quiet")
    lance.dataset(str(theirs)).update({"id": "id + 1000"}, where="id < 4")
    _check_same_dict(lance_cpp, tmp_path, ours, theirs)
    source = _dict_table(range(35, 45))
    lance_cpp.run_ok("merge-insert", ours, "--on", "id", "--input", _ipc(tmp_path / "src.arrow", source),
                     "--when-matched-update-all", "--when-not-matched-insert-all", "--quiet")
    lance.dataset(str(theirs)).merge_insert("id").when_matched_update_all() \
        .when_not_matched_insert_all().execute(source)
    _check_same_dict(lance_cpp, tmp_path, ours, theirs)
    lance_cpp.run_ok("compact", ours)
    lance.dataset(str(theirs)).optimize.compact_files()
    _check_same_dict(lance_cpp, tmp_path, ours, theirs)


def test_legacy_dictionary_other_values_refused(tmp_path, lance_cpp):
    """A dictionary other than the dataset's is refused, naming the column, as
    pylance 14 refuses it on append (its update would read other values)."""
    ours, _ = _pylance_dict_base(tmp_path)
    other = _dict_table(range(100, 103), names=("a", "bb", "zz"))
    proc = lance_cpp.run("write", ours, "--input", _ipc(tmp_path / "o.arrow", other), "--mode", "append", "--quiet")
    assert_clean_failure(proc, "'d'", "dictionary")
    proc = lance_cpp.run("update", ours, "--set", "di=9", "--where", "id = 1", "--quiet")
    assert_clean_failure(proc, "di", "dictionary")
    assert lance.dataset(str(ours)).version == 1
