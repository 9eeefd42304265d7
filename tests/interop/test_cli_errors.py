"""Bad inputs: runtime errors exit 1 with exactly one `error: ...` line on
stderr that names the path (or the version / tag asked for), print nothing on
stdout, and never crash.  Usage errors exit 2.

Every corrupted dataset is first shown to be unreadable by pylance too, so a
failure here is never a test that corrupted nothing.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

import lance
from conftest import assert_clean_failure, small_table

NAMINGS = ["v1", "v2"]


@pytest.fixture(scope="session")
def good_datasets(tmp_path_factory) -> dict[str, Path]:
    """Two-version datasets, one per manifest naming scheme (never modified)."""
    root = tmp_path_factory.mktemp("errors-src")
    out = {}
    for naming in NAMINGS:
        uri = root / f"good-{naming}.lance"
        lance.write_dataset(small_table(0, 100), str(uri),
                            enable_v2_manifest_paths=(naming == "v2"))
        lance.write_dataset(small_table(100, 200), str(uri), mode="append")
        out[naming] = uri
    return out


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst.resolve()


def latest_manifest(uri: Path) -> Path:
    """The manifest of version 2 (the latest) under either naming scheme."""
    v1 = uri / "_versions" / "2.manifest"
    v2 = uri / "_versions" / f"{(2**64 - 1) - 2:020d}.manifest"
    found = [p for p in (v1, v2) if p.exists()]
    assert len(found) == 1, list((uri / "_versions").iterdir())
    return found[0]


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:10])


def _bad_magic(path: Path) -> None:
    data = path.read_bytes()
    assert data[-4:] == b"LANC"
    path.write_bytes(data[:-4] + b"NOPE")


def _framed(payload: bytes) -> bytes:
    """A manifest file with valid framing (u32 length, message, then the
    16-byte footer: i64 position | i16 major 0 | i16 minor 2 | "LANC")
    around a payload that is not a valid Manifest protobuf."""
    return struct.pack("<I", len(payload)) + payload + struct.pack("<qhh", 0, 0, 2) + b"LANC"


def _garbage_varint(path: Path) -> None:
    # A tag varint that never terminates.
    path.write_bytes(_framed(b"\xff" * 32))


def _garbage_overrun(path: Path) -> None:
    # Field 2 (fragments, length-delimited) claims 127 bytes, only 5 follow.
    path.write_bytes(_framed(b"\x12\x7f" + b"abcde"))


def _garbage_wiretype(path: Path) -> None:
    # Field 1 (fields, a message) sent with wire type 5 (fixed32), then junk.
    path.write_bytes(_framed(b"\x0d\x01\x02\x03\x04" + b"\x0b" * 8))


CORRUPTIONS = {
    "truncated-to-10-bytes": _truncate,
    "bad-magic": _bad_magic,
    "garbage-protobuf-varint": _garbage_varint,
    "garbage-protobuf-overrun": _garbage_overrun,
    "garbage-protobuf-wiretype": _garbage_wiretype,
}


@pytest.mark.parametrize("naming", NAMINGS)
@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
@pytest.mark.parametrize("command", ["inspect", "versions"])
def test_corrupt_latest_manifest(lance_cpp, good_datasets, tmp_path, naming, corruption, command):
    uri = _copy(good_datasets[naming], tmp_path)
    CORRUPTIONS[corruption](latest_manifest(uri))
    with pytest.raises(Exception):
        lance.dataset(str(uri)).versions()  # the oracle refuses it too
    args = [command, uri] + (["--json"] if command == "inspect" else [])
    assert_clean_failure(lance_cpp.run(*args), str(uri))


def test_nonexistent_dataset(lance_cpp, tmp_path):
    uri = (tmp_path / "no-such-dataset.lance").resolve()
    for args in (["inspect", uri, "--json"], ["inspect", uri], ["versions", uri]):
        assert_clean_failure(lance_cpp.run(*args), str(uri))


def test_empty_directory_is_not_a_dataset(lance_cpp, tmp_path):
    uri = (tmp_path / "empty.lance").resolve()
    uri.mkdir()
    with pytest.raises(Exception):
        lance.dataset(str(uri))
    assert_clean_failure(lance_cpp.run("inspect", uri, "--json"), str(uri))


@pytest.mark.parametrize("naming", NAMINGS)
def test_missing_version(lance_cpp, good_datasets, tmp_path, naming):
    uri = _copy(good_datasets[naming], tmp_path)
    with pytest.raises(Exception):
        lance.dataset(str(uri), version=99)
    proc = lance_cpp.run("inspect", uri, "--json", "--version", "99")
    assert_clean_failure(proc, "99", str(uri))


def test_missing_tag(lance_cpp, good_datasets, tmp_path):
    uri = _copy(good_datasets["v2"], tmp_path)
    lance.dataset(str(uri)).tags.create("exists", 1)
    with pytest.raises(Exception):
        lance.dataset(str(uri), version="no-such-tag")
    proc = lance_cpp.run("inspect", uri, "--json", "--version", "no-such-tag")
    assert_clean_failure(proc, "no-such-tag", str(uri))
    # The tag that does exist still works.
    assert lance_cpp.inspect(uri, "exists")["version"] == 1


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
@pytest.mark.parametrize("naming", NAMINGS)
def test_older_versions_survive_corrupt_latest(lance_cpp, good_datasets, tmp_path, naming, corruption):
    """A corrupt latest manifest does not stop `--version 1`: pylance opens
    version 1 (only its versions() fails), and so do we, with the version
    list bare and the unreadable manifest named."""
    uri = _copy(good_datasets[naming], tmp_path)
    bad = latest_manifest(uri)
    CORRUPTIONS[corruption](bad)
    oracle = lance.dataset(str(uri), version=1)
    with pytest.raises(Exception):
        oracle.versions()
    proc = lance_cpp.run("inspect", uri, "--json", "--version", "1")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["version"] == 1 and got["latest_version"] == 2
    assert got["num_rows"] == oracle.count_rows()
    assert [f["id"] for f in got["fragments"]] == [f.fragment_id for f in oracle.get_fragments()]
    assert [v["version"] for v in got["versions"]] == [1, 2]
    assert bad.name in got["versions_error"]
    assert "warning:" in proc.stderr and bad.name in proc.stderr
    # The rows of version 1 read back as pylance reads them.
    rows = lance_cpp.run("scan", uri, "--version", "1", "--format", "json")
    assert rows.returncode == 0, rows.stderr
    # The human form works too.
    human = lance_cpp.run("inspect", uri, "--version", "1")
    assert human.returncode == 0, human.stderr
    assert "2 versions" in human.stdout


USAGE_ERRORS = {
    "no-arguments": [],
    "unknown-command": ["frobnicate"],
    "inspect-without-uri": ["inspect"],
    "versions-without-uri": ["versions"],
    "unknown-flag": ["inspect", "{uri}", "--no-such-flag"],
    "version-without-value": ["inspect", "{uri}", "--version"],
}


@pytest.mark.parametrize("case", list(USAGE_ERRORS))
def test_usage_errors(lance_cpp, good_datasets, case):
    args = [a.format(uri=good_datasets["v1"]) for a in USAGE_ERRORS[case]]
    proc = lance_cpp.run(*args)
    assert proc.returncode >= 0, f"crashed with signal {-proc.returncode}: {proc.stderr}"
    assert proc.returncode == 2, (
        f"expected exit 2 for a usage error, got {proc.returncode}\n"
        f"stderr: {proc.stderr}\nstdout: {proc.stdout[:500]}")
    first = proc.stderr.lstrip().splitlines()[0] if proc.stderr.strip() else ""
    assert first.startswith("error: "), f"first stderr line should start with 'error: ': {proc.stderr!r}"
