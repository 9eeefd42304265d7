"""`lance-cpp verify`: clean on what pylance 14 and lance-cpp write (as
pylance's own `validate()` is), and each damage a test makes is found,
naming the file, with exit 1; a dataset that does not open at all is one
`error:` line. Where pylance's validate() refuses the same damage, both
must refuse it (refusal parity)."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance

import manifest_wire
from conftest import assert_clean_failure, describe_result, require_shared_fixtures, shared_fixture_params


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #


def _table(start: int, n: int, dim: int = 8) -> pa.Table:
    ids = list(range(start, start + n))
    vec = pa.FixedSizeListArray.from_arrays(
        pa.array([float((i * 7 + j) % 13) for i in ids for j in range(dim)], pa.float32()), dim)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([f"name-{i % 17}" for i in ids], pa.string()),
        "vec": vec,
    })


def _write(uri: Path, sizes: list[int], **params) -> Path:
    """One fragment per size, each its own version."""
    start = 0
    for i, n in enumerate(sizes):
        lance.write_dataset(_table(start, n), uri, mode="create" if i == 0 else "append",
                            max_rows_per_file=n, **params)
        start += n
    return uri


def _verify(lance_cpp, uri, *extra):
    return lance_cpp.run("verify", str(uri), *[str(e) for e in extra])


def assert_verify_clean(lance_cpp, uri, *extra) -> None:
    proc = _verify(lance_cpp, uri, *extra)
    assert proc.returncode == 0 and not proc.stdout.strip() and not proc.stderr.strip(), \
        "verify found problems in a good dataset\n" + describe_result(proc)
    proc = _verify(lance_cpp, uri, "--json", *extra)
    assert proc.returncode == 0, describe_result(proc)
    out = json.loads(proc.stdout)
    assert out["ok"] is True and out["findings"] == [], out
    assert out["versions_checked"], out


def assert_flagged(lance_cpp, uri, *must_mention, check: str | None = None, extra=()) -> list[str]:
    """Exit 1, one stdout line per finding, and one line names every string
    in `must_mention` (the damaged file) and `check`."""
    proc = _verify(lance_cpp, uri, *extra)
    assert proc.returncode == 1, "verify missed the damage\n" + describe_result(proc)
    assert not proc.stderr.strip(), "findings are not errors\n" + describe_result(proc)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert lines and all(ln.startswith("version ") for ln in lines), describe_result(proc)
    hits = [ln for ln in lines if all(m in ln for m in must_mention) and
            (check is None or f": {check}: " in ln)]
    assert hits, f"no finding mentions {must_mention} ({check})\n" + describe_result(proc)
    # The same findings as JSON.
    jproc = _verify(lance_cpp, uri, "--json", *extra)
    assert jproc.returncode == 1, describe_result(jproc)
    out = json.loads(jproc.stdout)
    assert out["ok"] is False and len(out["findings"]) == len(lines), out
    for f in out["findings"]:
        assert set(f) == {"version", "path", "check", "message"}, f
    return lines


def _pylance_validate_fails(uri) -> bool:
    try:
        lance.dataset(str(uri)).validate()
    except Exception:  # noqa: BLE001 - any refusal counts
        return True
    return False


def _copy(src: Path, tmp_path: Path, name: str = "copy.lance") -> Path:
    dst = tmp_path / name
    shutil.copytree(src, dst)
    return dst


def _data_files(uri: Path) -> list[Path]:
    """The data files of the latest version, fragment by fragment."""
    ds = lance.dataset(str(uri))
    return [uri / "data" / f.path for frag in ds.get_fragments() for f in frag.metadata.files]


def _latest_manifest(uri: Path) -> Path:
    return manifest_wire.manifest_path(uri, lance.dataset(str(uri)).version)


def _edit_manifest(path: Path, edit) -> None:
    """Rewrites the Manifest message of a manifest file through protoc's text
    format: `edit` maps the decoded text to the new text. The index section
    and transaction before it keep their offsets."""
    data = path.read_bytes()
    pos = struct.unpack_from("<q", data, len(data) - 16)[0]
    (n,) = struct.unpack_from("<I", data, pos)
    body = len(data) - 16
    assert pos + 4 + n == body
    args = [manifest_wire.protoc(), *manifest_wire._include_dirs(), "lance/table.proto"]
    text = subprocess.run([args[0], "--decode=lance.pb.table.Manifest", *args[1:]],
                          input=data[pos + 4: body], capture_output=True, check=True).stdout.decode()
    new_text = edit(text)
    assert new_text != text, "the edit changed nothing"
    msg = subprocess.run([args[0], "--encode=lance.pb.table.Manifest", *args[1:]],
                         input=new_text.encode(), capture_output=True, check=True).stdout
    path.write_bytes(data[:pos] + struct.pack("<I", len(msg)) + msg + data[body:])


def _patch_flags(manifest: Path, field: int, flags: int) -> None:
    manifest_wire.patch_varint_field(manifest, field, flags)


# --------------------------------------------------------------------------- #
# good datasets: clean, as pylance's validate() finds them
# --------------------------------------------------------------------------- #


def _plain(uri: Path, version: str) -> None:
    _write(uri, [100, 60, 40], data_storage_version=version)


def _deletions(uri: Path) -> None:
    _write(uri, [100, 60, 40])
    ds = lance.dataset(str(uri))
    ds.delete("id % 7 = 0")
    ds.delete("id >= 100 AND id < 160")  # a whole fragment


def _stable_row_ids(uri: Path) -> None:
    _write(uri, [100, 60], enable_stable_row_ids=True)
    ds = lance.dataset(str(uri))
    ds.delete("id % 5 = 0")
    ds.update({"name": "'updated'"}, where="id < 30")


def _indices(uri: Path) -> None:
    _write(uri, [200, 100])
    ds = lance.dataset(str(uri))
    ds.create_scalar_index("id", "BTREE")
    ds.create_scalar_index("name", "BITMAP")
    ds.create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=2)
    lance.write_dataset(_table(300, 50), uri, mode="append")
    lance.dataset(str(uri)).optimize.optimize_indices()  # a second segment of each


def _index_and_fragment_deleted(uri: Path) -> None:
    """pylance keeps a fragment deleted whole in the index bitmaps."""
    _write(uri, [10, 10, 10])
    ds = lance.dataset(str(uri))
    ds.create_scalar_index("id", "BTREE")
    ds.delete("id >= 10 AND id < 20")


def _compacted(uri: Path) -> None:
    _write(uri, [30, 30, 30, 30])
    ds = lance.dataset(str(uri))
    ds.create_scalar_index("id", "BTREE")
    ds.delete("id % 3 = 0")
    ds.optimize.compact_files(target_rows_per_fragment=1000)


def _compacted_stable(uri: Path) -> None:
    _write(uri, [30, 30, 30], enable_stable_row_ids=True)
    ds = lance.dataset(str(uri))
    ds.delete("id % 4 = 0")
    ds.optimize.compact_files(target_rows_per_fragment=1000)


def _legacy(uri: Path) -> None:
    _write(uri, [50, 30], data_storage_version="legacy")
    lance.dataset(str(uri)).delete("id = 3")


GOOD = {
    "plain-2.0": lambda uri: _plain(uri, "2.0"),
    "plain-2.1": lambda uri: _plain(uri, "2.1"),
    "plain-2.2": lambda uri: _plain(uri, "2.2"),
    "legacy": _legacy,
    "deletions": _deletions,
    "stable-row-ids": _stable_row_ids,
    "indices": _indices,
    "index-fragment-deleted": _index_and_fragment_deleted,
    "compacted": _compacted,
    "compacted-stable-row-ids": _compacted_stable,
}


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("verify-good")
    out = {}
    for name, make in GOOD.items():
        uri = root / f"{name}.lance"
        make(uri)
        out[name] = uri
    return out


@pytest.mark.parametrize("name", list(GOOD))
def test_pylance_datasets_verify_clean(lance_cpp, good, name):
    uri = good[name]
    lance.dataset(str(uri)).validate()  # pylance agrees they are good
    assert_verify_clean(lance_cpp, uri)
    assert_verify_clean(lance_cpp, uri, "--all-versions", "--deep")
    assert_verify_clean(lance_cpp, uri, "--version", "1", "--deep")


def test_all_versions_lists_every_version(lance_cpp, good):
    uri = good["indices"]
    proc = _verify(lance_cpp, uri, "--all-versions", "--json")
    assert proc.returncode == 0, describe_result(proc)
    versions = [v["version"] for v in lance.dataset(str(uri)).versions()]
    assert json.loads(proc.stdout)["versions_checked"] == versions
    proc = _verify(lance_cpp, uri, "--json")
    assert json.loads(proc.stdout)["versions_checked"] == [versions[-1]]


def test_lance_cpp_written_dataset_verifies_clean(lance_cpp, tmp_path):
    src = tmp_path / "rows.arrow"
    with ipc.new_file(src, _table(0, 120).schema) as w:
        w.write_table(_table(0, 120))
    uri = tmp_path / "ours.lance"
    lance_cpp.run_ok("write", uri, "--input", src, "--max-rows-per-file", "50", "--quiet")
    lance_cpp.run_ok("write", uri, "--input", src, "--mode", "append", "--quiet")
    lance_cpp.run_ok("delete", uri, "id % 9 = 0", "--quiet")
    lance_cpp.run_ok("create-index", uri, "id", "--type", "BTREE")
    lance_cpp.run_ok("compact", uri, "--quiet")
    lance.dataset(str(uri)).validate()
    assert_verify_clean(lance_cpp, uri, "--all-versions", "--deep")
    stable = tmp_path / "stable.lance"
    lance_cpp.run_ok("write", stable, "--input", src, "--enable-stable-row-ids", "--max-rows-per-file", "40",
                     "--quiet")
    lance_cpp.run_ok("update", stable, "--set", "name='x'", "--where", "id < 10", "--quiet")
    lance.dataset(str(stable)).validate()
    assert_verify_clean(lance_cpp, stable, "--all-versions", "--deep")


# --------------------------------------------------------------------------- #
# damage: each is found, naming the file
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """Three fragments of different lengths, deletions, and indices."""
    uri = tmp_path_factory.mktemp("verify-base") / "base.lance"
    _write(uri, [100, 60, 40], data_storage_version="2.1")
    ds = lance.dataset(str(uri))
    ds.delete("id % 7 = 0")
    ds.create_scalar_index("id", "BTREE")
    return uri


def test_missing_data_file(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    victim = _data_files(uri)[1]
    victim.unlink()
    assert_flagged(lance_cpp, uri, victim.name, "missing", check="data_file")
    assert _pylance_validate_fails(uri)


def test_truncated_data_file(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    victim = _data_files(uri)[0]
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])
    assert_flagged(lance_cpp, uri, victim.name, check="data_file")
    assert _pylance_validate_fails(uri)


def test_swapped_data_files(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    a, b = _data_files(uri)[:2]  # 100 and 60 rows
    tmp = a.with_suffix(".tmp")
    a.rename(tmp)
    b.rename(a)
    tmp.rename(b)
    lines = assert_flagged(lance_cpp, uri, a.name, check="physical_rows")
    assert any(b.name in ln for ln in lines), lines
    assert _pylance_validate_fails(uri)


def test_missing_deletion_file(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    victim = sorted((uri / "_deletions").iterdir())[0]
    victim.unlink()
    assert_flagged(lance_cpp, uri, victim.name, "missing", check="deletion_file")
    assert _pylance_validate_fails(uri)


def test_wrong_physical_rows(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    first = _data_files(uri)[0]
    _edit_manifest(_latest_manifest(uri), lambda t: t.replace("physical_rows: 100", "physical_rows: 101", 1))
    assert_flagged(lance_cpp, uri, first.name, "101", check="physical_rows")
    assert _pylance_validate_fails(uri)


def test_wrong_deleted_row_count(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    _edit_manifest(_latest_manifest(uri), lambda t: t.replace("num_deleted_rows: 15", "num_deleted_rows: 14", 1))
    assert_flagged(lance_cpp, uri, "_deletions/", "14", check="deletion_file")
    assert _pylance_validate_fails(uri)


def test_missing_index_directory(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    dirs = sorted((uri / "_indices").iterdir())
    assert len(dirs) == 1
    shutil.rmtree(dirs[0])
    assert_flagged(lance_cpp, uri, dirs[0].name, "missing", check="index_file")


def test_damaged_index_file(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    index_dir = next((uri / "_indices").iterdir())
    victim = sorted(index_dir.iterdir())[0]
    victim.write_bytes(victim.read_bytes()[:20])
    assert_flagged(lance_cpp, uri, victim.name, check="index_file")


def test_bad_feature_flags(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    manifest = _latest_manifest(uri)
    # The dataset has deletion files: clearing bit 1 would let a reader that
    # knows no deletions read deleted rows.
    _patch_flags(manifest, 9, 0)
    _patch_flags(manifest, 10, 0)
    lines = assert_flagged(lance_cpp, uri, manifest.name, "1 (deletion files)", check="feature_flags")
    assert any("reader" in ln for ln in lines) and any("writer" in ln for ln in lines), lines
    # A bit the content does not use.
    uri2 = _copy(base, tmp_path, "copy2.lance")
    manifest = _latest_manifest(uri2)
    _patch_flags(manifest, 9, 1 | 16)
    _patch_flags(manifest, 10, 1 | 16)
    assert_flagged(lance_cpp, uri2, manifest.name, "16 (base paths)", check="feature_flags")


def test_missing_transaction_file(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    txns = sorted((uri / "_transactions").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    victim = txns[-1]
    victim.unlink()
    assert_flagged(lance_cpp, uri, victim.name, check="transaction")


# Fragment 2's entry in protoc's text format (fragment ids 0 are not printed).
FRAGMENT_2 = "fragments {\n  id: 2\n"


def test_fragment_id_above_max_fragment_id(lance_cpp, base, tmp_path):
    """max_fragment_id below a fragment's id (the next fragment would reuse
    it), and an index covering a fragment id the dataset never handed out."""
    uri = _copy(base, tmp_path)
    manifest = _latest_manifest(uri)
    _edit_manifest(manifest, lambda t: t.replace("max_fragment_id: 2", "max_fragment_id: 1"))
    assert_flagged(lance_cpp, uri, manifest.name, "fragment id 2 is above max_fragment_id 1", check="fragment_ids")
    # Fragment 2 dropped from the manifest as if it never was: the index
    # still covers it.
    uri = _copy(base, tmp_path, "copy2.lance")
    manifest = _latest_manifest(uri)
    _edit_manifest(manifest, lambda t: re.sub(r"fragments \{\n  id: 2\n.*?\n\}\n", "", t, count=1, flags=re.S)
                   .replace("max_fragment_id: 2", "max_fragment_id: 1"))
    lines = assert_flagged(lance_cpp, uri, manifest.name, "never had: 2", check="indices")
    assert len(lines) == 1, lines


def test_duplicate_fragment_ids(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    manifest = _latest_manifest(uri)
    _edit_manifest(manifest, lambda t: t.replace(FRAGMENT_2, "fragments {\n  id: 1\n", 1))
    assert_flagged(lance_cpp, uri, manifest.name, "duplicate fragment id 1", check="fragment_ids")
    assert _pylance_validate_fails(uri)


def test_row_ids_not_matching_rows(lance_cpp, tmp_path):
    uri = _write(tmp_path / "stable.lance", [30, 20], enable_stable_row_ids=True)
    manifest = _latest_manifest(uri)
    # Fragment 1's physical_rows and its row id sequence disagree once its
    # count changes (its data file then disagrees too).
    _edit_manifest(manifest, lambda t: t.replace("physical_rows: 20", "physical_rows: 21", 1))
    lines = assert_flagged(lance_cpp, uri, "20 row ids for 21", check="row_ids")
    assert any(": physical_rows: " in ln for ln in lines), lines
    assert _pylance_validate_fails(uri)


def _flip_page_bytes(path: Path) -> None:
    """Overwrites the middle of the file's data pages (before the column
    metadata) with 0xff bytes."""
    data = bytearray(path.read_bytes())
    lo, hi = len(data) // 8, len(data) // 3
    data[lo:hi] = b"\xff" * (hi - lo)
    path.write_bytes(bytes(data))


def test_bit_flips_need_deep(lance_cpp, tmp_path):
    uri = tmp_path / "strings.lance"
    names = pa.array([f"value-{i}-" + "x" * (i % 50) for i in range(4000)], pa.string())
    lance.write_dataset(pa.table({"id": pa.array(range(4000), pa.int64()), "s": names}), uri,
                        data_storage_version="2.0")
    victim = _data_files(uri)[0]
    _flip_page_bytes(victim)
    # The footer and column metadata are intact: only decoding finds it.
    proc = _verify(lance_cpp, uri)
    assert proc.returncode == 0, describe_result(proc)
    assert_flagged(lance_cpp, uri, victim.name, check="data_page", extra=("--deep",))


# --------------------------------------------------------------------------- #
# damaged manifests, usage
# --------------------------------------------------------------------------- #


def test_damaged_latest_manifest_is_an_error(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    manifest = _latest_manifest(uri)
    data = manifest.read_bytes()
    manifest.write_bytes(data[: len(data) // 2])
    assert_clean_failure(_verify(lance_cpp, uri), manifest.name)
    manifest.write_bytes(b"\x00" * 40 + data[-16:])
    assert_clean_failure(_verify(lance_cpp, uri, "--all-versions"))
    assert_clean_failure(_verify(lance_cpp, tmp_path / "nothing-here"))


def test_damaged_old_manifest_is_a_finding(lance_cpp, base, tmp_path):
    uri = _copy(base, tmp_path)
    old = manifest_wire.manifest_path(uri, 2)
    old.write_bytes(old.read_bytes()[:30])
    assert_verify_clean(lance_cpp, uri)  # the latest version is fine
    assert_flagged(lance_cpp, uri, old.name, check="manifest", extra=("--all-versions",))
    proc = _verify(lance_cpp, uri, "--version", "2")
    assert_clean_failure(proc, old.name)


def test_usage_errors(lance_cpp, base):
    for args in ((), ("--deep",), (str(base), "--bogus"), (str(base), "--all-versions", "--version", "1"),
                 (str(base), str(base))):
        proc = lance_cpp.run("verify", *args)
        assert proc.returncode == 2, describe_result(proc)
        assert proc.stderr.startswith("error: "), describe_result(proc)


# --------------------------------------------------------------------------- #
# released pylance datasets: verify refuses exactly what validate() refuses
# --------------------------------------------------------------------------- #


def _shared_fixture_dirs() -> list:
    from conftest import FIXTURES_ROOT
    if not FIXTURES_ROOT.is_dir():
        return []
    return sorted(str(p.relative_to(FIXTURES_ROOT)) for p in FIXTURES_ROOT.glob("*/*") if p.is_dir())


@pytest.mark.parametrize("name", shared_fixture_params(_shared_fixture_dirs()))
def test_released_datasets_refusal_parity(lance_cpp, tmp_path, name):
    from conftest import FIXTURES_ROOT
    require_shared_fixtures()
    uri = tmp_path / "ds"
    shutil.copytree(FIXTURES_ROOT / name, uri)
    pylance_refuses = _pylance_validate_fails(uri)
    proc = _verify(lance_cpp, uri)
    if proc.returncode == 1 and proc.stderr.strip():
        assert_clean_failure(proc)  # does not open at all: pylance's open fails too
        with pytest.raises(Exception):
            lance.dataset(str(uri))
        return
    assert proc.returncode == (1 if pylance_refuses else 0), \
        f"pylance validate() {'refuses' if pylance_refuses else 'accepts'} it\n" + describe_result(proc)
