"""Table writes, both directions, against pylance: lance-cpp commits (write,
delete, restore, tag) and pylance reads and modifies the result, and the
other way round. Stable row ids on and off, V1 and V2 manifest naming.
`write` is parametrized over data storage versions."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pytest

import lance
from cli_output import parse_change
from conftest import assert_clean_failure, lance_cpp_binary
import manifest_wire

STORAGE_VERSIONS = ["2.0", "2.1", "2.2"]
LAYOUTS = [  # (stable row ids, v2 manifest paths)
    pytest.param(False, True, id="addr-v2names"),
    pytest.param(True, True, id="stable-v2names"),
    pytest.param(False, False, id="addr-v1names"),
    pytest.param(True, False, id="stable-v1names"),
]


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(lance_cpp_binary())] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def _ok(*args) -> subprocess.CompletedProcess:
    proc = _run(*args)
    assert proc.returncode == 0, f"lance-cpp {' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stderr}"
    return proc


def _scan(tmp_path: Path, uri, *extra) -> pa.Table:
    out = tmp_path / f"scan-{os.urandom(4).hex()}.arrow"
    _ok("scan", uri, "--out", out, *extra)
    with ipc.open_file(out) as f:
        return f.read_all()


def _table(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([None if i % 7 == 3 else f"row-{i}" for i in ids], pa.string()),
        "score": pa.array([i * 0.5 for i in ids], pa.float64()),
        "pt": pa.array([{"x": i, "y": -i} for i in ids],
                       pa.struct([("x", pa.int32()), ("y", pa.int32())])),
    })


def _write_ipc(path: Path, table: pa.Table, stream: bool = False) -> Path:
    with pa.OSFile(str(path), "wb") as sink:
        writer = (ipc.new_stream if stream else ipc.new_file)(sink, table.schema)
        for batch in table.to_batches(max_chunksize=97):
            writer.write_batch(batch)
        writer.close()
    return path


def _sorted(t: pa.Table) -> pa.Table:
    return t.sort_by("id")


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def _naming(uri: Path) -> str:
    names = [p.name for p in (uri / "_versions").iterdir() if p.name.endswith(".manifest")]
    return "v2" if all(len(n) == 29 for n in names) else "v1"


def _pylance_create(uri: Path, table: pa.Table, stable: bool, v2names: bool, **kw):
    return lance.write_dataset(table, uri, enable_stable_row_ids=stable,
                               enable_v2_manifest_paths=v2names, **kw)


def _cpp_write(tmp_path: Path, uri: Path, table: pa.Table, *flags):
    """lance-cpp write, which must succeed."""
    src = _write_ipc(tmp_path / f"in-{os.urandom(4).hex()}.arrow", table)
    proc = _run("write", uri, "--input", src, *flags)
    assert proc.returncode == 0, f"lance-cpp write failed:\n{proc.stderr}"
    return proc


# --------------------------------------------------------------------------- #
# pylance creates -> lance-cpp modifies -> pylance reads (and modifies) -> both agree
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("stable,v2names", LAYOUTS)
def test_cpp_delete_on_pylance_dataset(tmp_path, stable, v2names):
    uri = tmp_path / "ds"
    _pylance_create(uri, _table(0, 300), stable, v2names, max_rows_per_file=100)
    lance.write_dataset(_table(300, 50), uri, mode="append")
    before = lance.dataset(uri)
    rowids_before = dict(zip(*[before.to_table(with_row_id=True).column(c).to_pylist()
                               for c in ("id", "_rowid")]))

    out = _ok("delete", uri, "id % 10 = 3 OR (id >= 100 AND id < 200)")
    change = parse_change(out.stdout)
    assert (change.committed, change.version) == (True, 3)
    assert change.count("deleted") == 350 - lance.dataset(uri).count_rows()

    ds = lance.dataset(uri)
    assert ds.version == 3
    assert _naming(uri) == ("v2" if v2names else "v1")
    expected = _keep_mask(_table(0, 350))
    assert _sorted(ds.to_table()).equals(_sorted(expected))
    assert ds.count_rows() == expected.num_rows
    # The fragment 100..199 had every row deleted: it is gone.
    assert [f.fragment_id for f in ds.get_fragments()] == [0, 2, 3]
    assert [v["version"] for v in ds.versions()] == [1, 2, 3]
    # Row ids of the surviving rows did not change.
    after = ds.to_table(with_row_id=True)
    for i, rid in zip(after.column("id").to_pylist(), after.column("_rowid").to_pylist()):
        assert rowids_before[i] == rid
    # Deletions are visible as deletion files with the right counts.
    frag0 = ds.get_fragment(0)
    assert frag0.metadata.deletion_file is not None
    assert frag0.count_rows() == 90

    # pylance continues on top; lance-cpp reads what pylance reads.
    ds.delete("id = 250")
    ds = lance.write_dataset(_table(1000, 20), uri, mode="append")
    ds.update({"score": "score + 1000"}, where="id < 20")
    ds = lance.dataset(uri)
    ours = _scan(tmp_path, uri)
    assert _sorted(ours).equals(_sorted(ds.to_table()))
    ours_ids = _scan(tmp_path, uri, "--with-row-id")
    theirs_ids = ds.to_table(with_row_id=True)
    assert sorted(zip(ours_ids["id"].to_pylist(), ours_ids["_rowid"].to_pylist())) == \
        sorted(zip(theirs_ids["id"].to_pylist(), theirs_ids["_rowid"].to_pylist()))


def _keep_mask(t: pa.Table) -> pa.Table:
    ids = t.column("id").to_pylist()
    keep = [not (i % 10 == 3 or 100 <= i < 200) for i in ids]
    return t.filter(pa.array(keep))


def test_cpp_delete_many_rows_writes_bitmap_and_merges(tmp_path):
    uri = tmp_path / "ds"
    lance.write_dataset(pa.table({"id": pa.array(range(20000), pa.int64())}), uri)
    ds = lance.dataset(uri)
    ds.delete("id < 10")  # pylance's .arrow deletion file
    _ok("delete", uri, "id >= 10000")
    ds = lance.dataset(uri)
    assert ds.count_rows() == 9990
    frag = ds.get_fragments()[0]
    assert frag.metadata.deletion_file.file_type == "bitmap" or \
        str(frag.metadata.deletion_file.file_type).lower().endswith("bitmap")
    bins = list((uri / "_deletions").glob("*.bin"))
    assert len(bins) == 1
    assert ds.to_table()["id"].to_pylist() == list(range(10, 10000))
    # Small follow-up delete on top of the bitmap stays a bitmap; count agrees.
    _ok("delete", uri, "id = 500")
    assert lance.dataset(uri).count_rows() == 9989
    assert _ok("count", uri).stdout.strip() == "9989"


def test_cpp_delete_nothing_matches_commits_an_empty_delete(tmp_path):
    """As pylance 14: a new version whose Delete changes no fragment."""
    uri = tmp_path / "ds"
    lance.write_dataset(_table(0, 10), uri)
    out = _ok("delete", uri, "id > 1000")
    assert out.stdout == "deleted 0 rows; new version 2\n"
    theirs = tmp_path / "theirs"
    lance.write_dataset(_table(0, 10), theirs)
    lance.dataset(theirs).delete("id > 1000")
    assert lance.dataset(uri).version == lance.dataset(theirs).version == 2
    assert lance.dataset(uri).count_rows() == 10


def test_cpp_delete_everything(tmp_path):
    uri = tmp_path / "ds"
    lance.write_dataset(_table(0, 30), uri, max_rows_per_file=10)
    _ok("delete", uri, "id >= 0")
    ds = lance.dataset(uri)
    assert ds.count_rows() == 0
    assert ds.get_fragments() == []
    lance.write_dataset(_table(30, 5), uri, mode="append")
    ds = lance.dataset(uri)
    assert [f.fragment_id for f in ds.get_fragments()] == [3]  # max_fragment_id was kept
    assert _sorted(_scan(tmp_path, uri)).equals(_sorted(ds.to_table()))


@pytest.mark.parametrize("stable,v2names", LAYOUTS)
def test_cpp_restore_and_tags(tmp_path, stable, v2names):
    uri = tmp_path / "ds"
    _pylance_create(uri, _table(0, 40), stable, v2names)
    lance.write_dataset(_table(40, 10), uri, mode="append")
    lance.dataset(uri).delete("id < 5")
    v1 = lance.dataset(uri, version=1).to_table()

    out = _ok("restore", uri, "1")
    assert out.stdout == "restored version 1; new version 4\n"
    ds = lance.dataset(uri)
    assert ds.version == 4
    assert ds.to_table().equals(v1)
    assert _naming(uri) == ("v2" if v2names else "v1")
    # pylance appends after the restore; fragment ids keep growing, no reuse clash.
    ds = lance.write_dataset(_table(100, 3), uri, mode="append")
    assert _sorted(_scan(tmp_path, uri)).equals(_sorted(ds.to_table()))

    _ok("tag", uri, "create", "before-append", "2")
    _ok("tag", "create", uri, "first", "1")  # the other argument order
    ds = lance.dataset(uri)
    tags = ds.tags.list()
    assert tags["before-append"]["version"] == 2 and tags["first"]["version"] == 1
    assert lance.dataset(uri, version="before-append").to_table().equals(
        lance.dataset(uri, version=2).to_table())
    ds.tags.create("from-pylance", 3)
    listed = _ok("tag", uri, "list").stdout.split("\n")
    assert "before-append 2" in listed and "first 1" in listed and "from-pylance 3" in listed
    _ok("tag", uri, "delete", "first")
    assert "first" not in lance.dataset(uri).tags.list()
    # Errors: duplicate tag, missing version, missing tag, bad name.
    assert_clean_failure(_run("tag", uri, "create", "before-append", "1"), "before-append")
    assert_clean_failure(_run("tag", uri, "create", "t9", "99"), "99")
    assert_clean_failure(_run("tag", uri, "delete", "nope"), "nope")
    assert_clean_failure(_run("tag", uri, "create", "bad/name", "1"), "bad/name")
    assert_clean_failure(_run("restore", uri, "77"), "77")


def test_config_metadata_and_tags_survive_our_commits(tmp_path):
    uri = tmp_path / "ds"
    t = _table(0, 20).replace_schema_metadata({"owner": "team-a"})
    ds = lance.write_dataset(t, uri)
    ds.update_config({"user.setting": "42"})
    ds = lance.dataset(uri)
    ds.tags.create("keep", 1)
    flags_before = ds.version
    _ok("delete", uri, "id < 3")
    _ok("restore", uri, str(flags_before))
    _ok("delete", uri, "id = 10")
    ds = lance.dataset(uri)
    assert ds.config()["user.setting"] == "42"
    assert ds.schema.metadata[b"owner"] == b"team-a"
    assert ds.tags.list()["keep"]["version"] == 1
    assert ds.count_rows() == 19
    ds.update({"name": "'x'"}, where="id = 11")  # pylance still commits on top
    assert lance.dataset(uri).to_table(filter="id = 11")["name"].to_pylist() == ["x"]


def _patch_writer_flags(manifest: Path, flags: int) -> None:
    manifest_wire.patch_varint_field(manifest, 10, flags)  # writer_feature_flags


def test_unknown_writer_flag_is_refused_with_nothing_written(tmp_path):
    uri = tmp_path / "ds"
    lance.write_dataset(_table(0, 10), uri)
    latest = max((uri / "_versions").glob("*.manifest"), key=lambda p: p.stat().st_mtime)
    _patch_writer_flags(latest, 1 << 40)
    # pylance still reads it (reader flags are untouched).
    assert lance.dataset(uri).count_rows() == 10
    before = _files(uri)
    src = _write_ipc(tmp_path / "more.arrow", _table(10, 5))
    for args in (("delete", uri, "id = 1"), ("restore", uri, "1"),
                 ("write", uri, "--input", src, "--mode", "append"),
                 ("write", uri, "--input", src, "--mode", "overwrite")):
        assert_clean_failure(_run(*args), "upgrade")
        assert _files(uri) == before, f"{args[0]} left files behind"


def test_usage_errors(tmp_path):
    assert _run("delete", tmp_path / "x").returncode == 2
    assert _run("restore", tmp_path / "x", "abc").returncode == 2
    assert _run("tag", tmp_path / "x", "rename").returncode == 2
    assert _run("write", tmp_path / "x").returncode == 2
    assert _run("write", tmp_path / "x", "--input", "f", "--mode", "upsert").returncode == 2
    assert _run("write", tmp_path / "x", "--input", "f", "--data-storage-version", "3.0").returncode == 2
    assert_clean_failure(_run("delete", tmp_path / "missing", "id = 1"), "missing")
    assert_clean_failure(_run("write", tmp_path / "y", "--input", tmp_path / "nope.arrow"), "nope.arrow")


# --------------------------------------------------------------------------- #
# lance-cpp writes -> pylance reads and modifies -> lance-cpp reads
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("version", STORAGE_VERSIONS)
@pytest.mark.parametrize("stable,v2names", LAYOUTS)
def test_cpp_write_create_append_overwrite(tmp_path, version, stable, v2names):
    uri = tmp_path / "ds"
    flags = ["--data-storage-version", version, "--max-rows-per-file", "120"]
    if stable:
        flags.append("--enable-stable-row-ids")
    if not v2names:
        flags.append("--disable-v2-manifest-paths")
    _cpp_write(tmp_path, uri, _table(0, 300), *flags)
    ds = lance.dataset(uri)
    assert ds.version == 1
    assert ds.data_storage_version == version
    assert _naming(uri) == ("v2" if v2names else "v1")
    assert ds.to_table().equals(_table(0, 300))
    assert [f.count_rows() for f in ds.get_fragments()] == [120, 120, 60]
    rowids = ds.to_table(with_row_id=True)["_rowid"].to_pylist()
    if stable:
        assert rowids == list(range(300))
    else:
        assert rowids[:3] == [0, 1, 2] and rowids[120] == 1 << 32
    assert ds.config() == {}

    # Append from a stream file with the columns in another order.
    shuffled = _table(300, 50).select(["score", "pt", "id", "name"])
    src = _write_ipc(tmp_path / "append.arrows", shuffled, stream=True)
    _ok("write", uri, "--input", src, "--mode", "append")
    ds = lance.dataset(uri)
    assert ds.version == 2 and ds.count_rows() == 350
    assert ds.to_table().equals(_table(0, 350))
    if stable:
        assert ds.to_table(with_row_id=True)["_rowid"].to_pylist() == list(range(350))

    # pylance on top of ours, then we read what pylance reads.
    ds.delete("id % 3 = 0")
    ds = lance.write_dataset(_table(1000, 10), uri, mode="append")
    ds.update({"name": "'updated'"}, where="id < 30")
    ds = lance.dataset(uri)
    assert _sorted(_scan(tmp_path, uri)).equals(_sorted(ds.to_table()))
    ours = _scan(tmp_path, uri, "--with-row-id")
    theirs = ds.to_table(with_row_id=True)
    assert sorted(zip(ours["id"].to_pylist(), ours["_rowid"].to_pylist())) == \
        sorted(zip(theirs["id"].to_pylist(), theirs["_rowid"].to_pylist()))

    # Our delete and append on top of pylance's commits.
    _ok("delete", uri, "id >= 1005")
    src = _write_ipc(tmp_path / "more.arrow", _table(2000, 7))
    _ok("write", uri, "--input", src, "--mode", "append")
    ds = lance.dataset(uri)
    assert ds.count_rows(filter="id >= 2000") == 7 and ds.count_rows(filter="id >= 1005 and id < 2000") == 0

    # Overwrite: new schema, keeps the naming, storage version and row-id mode.
    new = pa.table({"k": pa.array(["a", "b", "c"]), "v": pa.array([1.5, 2.5, None])})
    src = _write_ipc(tmp_path / "new.arrow", new)
    _ok("write", uri, "--input", src, "--mode", "overwrite")
    ds = lance.dataset(uri)
    assert ds.to_table().equals(new)
    assert [f.name for f in ds.schema] == ["k", "v"]
    assert _naming(uri) == ("v2" if v2names else "v1")
    assert ds.data_storage_version == version
    assert lance.dataset(uri, version=1).count_rows() == 300
    # Create on an existing dataset is refused.
    assert_clean_failure(_run("write", uri, "--input", src), "exists")


@pytest.mark.parametrize("version", STORAGE_VERSIONS)
def test_cpp_append_to_pylance_dataset(tmp_path, version):
    uri = tmp_path / "ds"
    lance.write_dataset(_table(0, 100), uri, data_storage_version=version, enable_stable_row_ids=True)
    _cpp_write(tmp_path, uri, _table(100, 30), "--mode", "append")
    ds = lance.dataset(uri)
    assert ds.to_table().equals(_table(0, 130))
    assert ds.to_table(with_row_id=True)["_rowid"].to_pylist() == list(range(130))
    # Schema mismatch is refused and leaves nothing behind.
    before = _files(uri)
    bad = _write_ipc(tmp_path / "bad.arrow", pa.table({"id": pa.array(["x"])}))
    assert_clean_failure(_run("write", uri, "--input", bad, "--mode", "append"), "id")
    assert _files(uri) == before


def test_racing_appends_from_two_processes(tmp_path):
    uri = tmp_path / "ds"
    lance.write_dataset(_table(0, 10), uri, data_storage_version="2.0")
    probe = _run("delete", uri, "id < 0")  # an empty Delete: version 2
    assert probe.returncode == 0
    srcs = [_write_ipc(tmp_path / f"r{i}.arrow", _table(100 * (i + 1), 5)) for i in range(4)]
    procs = [subprocess.Popen([str(lance_cpp_binary()), "write", str(uri), "--input", str(s), "--mode", "append"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for s in srcs]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    assert all(rc == 0 for _, _, rc in results), results
    ds = lance.dataset(uri)
    assert ds.version == 6
    assert ds.count_rows() == 30
    assert len({f.fragment_id for f in ds.get_fragments()}) == 5


# --------------------------------------------------------------------------- #
# Old datasets (fixtures): our delete equals pylance's delete on a copy
# --------------------------------------------------------------------------- #

OLD_DATASETS = ["v0.15.0/v1_with_files.lance", "v0.15.0/v2_with_files.lance", "v0.7.5/with_deletions",
                "v0.18.2/index_no_details.lance", "v0.20.0/old_btree_bitmap_indices.lance"]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", OLD_DATASETS)
def test_cpp_delete_on_old_datasets_matches_pylance(tmp_path, name):
    from conftest import FIXTURES_ROOT, require_shared_fixtures
    require_shared_fixtures()
    src = FIXTURES_ROOT / name
    assert src.is_dir(), f"fixture {name} missing from {FIXTURES_ROOT}"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(src, ours)
    shutil.copytree(src, theirs)
    ds = lance.dataset(theirs)
    table = ds.to_table()
    column = next((f.name for f in table.schema if pa.types.is_integer(f.type)), None)
    # Every dataset listed has one (the test would test nothing otherwise).
    assert column is not None and table.num_rows >= 2, f"{name}: no integer column to filter on"
    value = sorted(v for v in table[column].to_pylist() if v is not None)[table.num_rows // 2]
    pred = f"{column} < {value}"
    ds.delete(pred)
    _ok("delete", ours, pred)
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert a.version == b.version
    assert a.to_table().equals(b.to_table())
    assert a.count_rows() == b.count_rows()
    assert [i["name"] for i in a.list_indices()] == [i["name"] for i in b.list_indices()]
    assert a.data_storage_version == b.data_storage_version
    # And both keep working with pylance on top.
    a.delete(f"{column} = {value}")
    assert _sorted_by(lance.dataset(ours).to_table(), column).equals(
        _sorted_by(_scan(tmp_path, ours), column))


def _sorted_by(t: pa.Table, column: str) -> pa.Table:
    return t.sort_by(column)


# --------------------------------------------------------------------------- #
# Every key of `inspect --json` agrees with pylance's view of what we wrote
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("stable,v2names", LAYOUTS)
def test_inspect_of_our_commits_matches_pylance_view(tmp_path, lance_cpp, stable, v2names):
    from conftest import assert_view_matches, pylance_view
    uri = tmp_path / "ds"
    flags = ["--data-storage-version", "2.0", "--max-rows-per-file", "50"]
    if stable:
        flags.append("--enable-stable-row-ids")
    if not v2names:
        flags.append("--disable-v2-manifest-paths")
    _cpp_write(tmp_path, uri, _table(0, 120), *flags)
    _ok("delete", uri, "id < 10 OR id >= 100")
    _ok("tag", uri, "create", "t", "1")
    _ok("restore", uri, "2")
    for version in (1, 2, 3):
        actual = lance_cpp.inspect(uri, version=version)
        expected = pylance_view(uri, version=version, next_row_id=120 if stable else None)
        assert_view_matches(actual, expected, f"version {version}")


def test_parquet_csv_input_and_byte_limit(tmp_path):
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq
    table = _table(0, 5000).drop_columns(["pt"])
    pq.write_table(table, tmp_path / "in.parquet")
    pacsv.write_csv(table, tmp_path / "in.csv")
    uri = tmp_path / "pq"
    # The pinned pyarrow wheel always ships libparquet, and the build links it.
    proc = _run("write", uri, "--input", tmp_path / "in.parquet", "--data-storage-version", "2.0",
                "--max-bytes-per-file", "30000")
    assert proc.returncode == 0, proc.stderr
    ds = lance.dataset(uri)
    assert ds.to_table().equals(table)
    assert len(ds.get_fragments()) > 1  # split by bytes
    uri = tmp_path / "csv"
    _ok("write", uri, "--input", tmp_path / "in.csv", "--data-storage-version", "2.0")
    got = lance.dataset(uri).to_table()
    assert got["id"].to_pylist() == table["id"].to_pylist()
    assert got["score"].to_pylist() == table["score"].to_pylist()
    assert got.num_rows == 5000
