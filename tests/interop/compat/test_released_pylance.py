"""Datasets written at test time by several RELEASED pylance versions (0.10 to
12; venvs.py installs each into a throwaway environment, generate.py writes,
both cached between runs: see README.md). For each release, lance-cpp must:
read every version of every dataset equal to what the pinned pylance 14.0.2
and the writing release itself read; inspect it and list its versions as
pylance 14 sees them; and append and delete on a copy so that pylance 14 reads
the result exactly as the same append and delete done by pylance 14 (on legacy
0.1 datasets the appended data file must also equal pylance 14's byte for byte).

A release that does not install or whose generator fails is a failure, never a
skip; only the exclusions listed in venvs.KNOWN_INCOMPATIBLE skip.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pytest

import lance
import venvs
from conftest import (assert_clean_failure, assert_versions_output, assert_view_matches,
                      describe_result, pylance_view)

RELEASES = list(venvs.RELEASES)

# What each release must have written (generate.py probes the API; a probe
# that silently found less would otherwise shrink the coverage unnoticed).
EXPECTED_DATASETS = {
    "0.10.18": ["legacy"],
    "0.20.0": ["legacy", "2.0"],
    "0.30.0": ["legacy", "2.0", "2.0-stable-rowids"],
    "0.39.0": ["legacy", "2.0", "2.1", "2.1-stable-rowids"],
    "1.0.4": ["legacy", "2.0", "2.1", "2.1-stable-rowids"],
    "4.0.2": ["legacy", "2.0", "2.1", "2.2", "2.2-stable-rowids"],
    "8.0.1": ["legacy", "2.0", "2.1", "2.2", "2.2-stable-rowids"],
    "12.0.0": ["legacy", "2.0", "2.1", "2.2", "2.2-stable-rowids"],
}


# Versions the release wrote wrongly, so that pylance 14 refuses to read them:
# lance-cpp must refuse them too (a clean error naming the problem).
KNOWN_REFUSED = {
    # 0.30's merge-insert on a dataset with (then experimental) move-stable row
    # ids writes a deletion vector of row ids, not offsets (row 449 of a 100-row
    # fragment); 0.30 itself reads past it, pylance 14 refuses.
    ("0.30.0", "2.0-stable-rowids", 6): "deletion file",
}


def _last_data_file(uri: Path) -> bytes:
    """The bytes of the data file of the latest version's last fragment."""
    frag = lance.dataset(str(uri)).get_fragments()[-1]
    return (uri / "data" / frag.data_files()[0].path).read_bytes()


@pytest.fixture(scope="session")
def released():
    """Every release's datasets; the first test to ask builds them all, in parallel."""
    return venvs.build_all(RELEASES)


@pytest.fixture
def release(released, request, tmp_path):
    """(writable copy of the release's datasets, its manifest.json)."""
    version = request.node.callspec.params["version"]
    result = released[version]
    if isinstance(result, str):
        pytest.skip(result)
    if isinstance(result, Exception):
        pytest.fail(f"released pylance {version} could not be installed or could not write its "
                    f"datasets (cache: {venvs.cache_root()}):\n{result}", pytrace=False)
    copy = tmp_path / f"pylance-{version}"
    shutil.copytree(result, copy)
    return copy, json.loads((copy / "manifest.json").read_text())


def _read_ipc(path: Path) -> pa.Table:
    with ipc.open_file(str(path)) as f:
        return f.read_all()


def _write_ipc(path: Path, table: pa.Table) -> Path:
    with pa.OSFile(str(path), "wb") as sink:
        with ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    return path


def _cpp_scan(lance_cpp, out: Path, uri: Path, *args) -> pa.Table:
    lance_cpp.run_ok("scan", uri, "--out", out, *args)
    return _read_ipc(out)


def _diff(what: str, ours: pa.Table, theirs: pa.Table) -> list[str]:
    if ours.equals(theirs):
        return []
    if ours.schema != theirs.schema:
        return [f"{what}: schema differs\n  ours:   {ours.schema}\n  theirs: {theirs.schema}"]
    if ours.num_rows != theirs.num_rows:
        return [f"{what}: {ours.num_rows} rows, expected {theirs.num_rows}"]
    for name in theirs.column_names:
        a, b = ours[name].to_pylist(), theirs[name].to_pylist()
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return [f"{what}: column {name} row {i}: {x!r}, expected {y!r}"]
    return [f"{what}: tables differ"]


@pytest.mark.parametrize("version", RELEASES)
def test_release_wrote_every_variant(release, version):
    root, manifest = release
    assert manifest["pylance"] == version
    names = [d["name"] for d in manifest["datasets"]]
    assert names == EXPECTED_DATASETS[version]
    for d in manifest["datasets"]:
        ds = lance.dataset(str(root / f"{d['name']}.lance"))
        assert [v["version"] for v in ds.versions()] == d["versions"], d["name"]
        assert len(d["versions"]) >= 5, f"{d['name']}: {d['ops']}"
        assert ds.has_stable_row_ids == d["stable_row_ids"], d["name"]
        want = "0.1" if d["name"] == "legacy" else d["storage"]
        assert ds.data_storage_version == want, d["name"]


@pytest.mark.parametrize("version", RELEASES)
def test_every_version_reads_as_pylance_reads_it(release, version, lance_cpp, tmp_path):
    root, manifest = release
    problems: list[str] = []
    for d in manifest["datasets"]:
        uri = root / f"{d['name']}.lance"
        for n in d["versions"]:
            what = f"pylance {version} {d['name']} v{n}"
            refusal = KNOWN_REFUSED.get((version, d["name"], n))
            if refusal is not None:
                with pytest.raises(Exception):
                    lance.dataset(str(uri), version=n).to_table()
                assert_clean_failure(lance_cpp.run("scan", uri, "--version", n), refusal)
                continue
            own = _read_ipc(root / "expected" / d["name"] / f"v{n}.arrow")
            theirs = lance.dataset(str(uri), version=n).to_table()
            problems += _diff(f"{what}: pylance 14 vs pylance {version}", theirs, own)
            ours = _cpp_scan(lance_cpp, tmp_path / f"{d['name']}-v{n}.arrow", uri, "--version", n)
            problems += _diff(f"{what}: lance-cpp vs pylance 14", ours, theirs)
        for tag, n in d["tags"].items():
            ours = _cpp_scan(lance_cpp, tmp_path / f"{d['name']}-{tag}.arrow", uri, "--version", tag)
            problems += _diff(f"pylance {version} {d['name']} tag {tag}: lance-cpp",
                              ours, lance.dataset(str(uri), version=n).to_table())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("version", RELEASES)
def test_inspect_and_versions_as_pylance_sees_them(release, version, lance_cpp):
    root, manifest = release
    for d in manifest["datasets"]:
        uri = root / f"{d['name']}.lance"
        for n in (d["versions"][0], None):
            assert_view_matches(lance_cpp.inspect(uri, n), pylance_view(uri, n),
                                f"pylance {version} {d['name']} version {n or 'latest'}")
        assert_versions_output(lance_cpp.versions(uri), uri)


@pytest.mark.parametrize("version", RELEASES)
def test_cpp_append_and_delete_read_back_by_pylance(release, version, lance_cpp, tmp_path):
    root, manifest = release
    problems: list[str] = []
    for d in manifest["datasets"]:
        if (version, d["name"], d["versions"][-1]) in KNOWN_REFUSED:
            continue  # its latest version does not read (see KNOWN_REFUSED)
        src = root / f"{d['name']}.lance"
        ours, theirs = tmp_path / f"ours-{d['name']}", tmp_path / f"theirs-{d['name']}"
        shutil.copytree(src, ours)
        shutil.copytree(src, theirs)
        head = lance.dataset(str(src)).to_table().slice(0, 25)
        new = head.set_column(0, "id", pc.add(head["id"], 100_000))
        source = _write_ipc(tmp_path / f"append-{d['name']}.arrow", new)

        what = f"pylance {version} {d['name']}"
        proc = lance_cpp.run("write", ours, "--input", source, "--mode", "append", "--quiet")
        if proc.returncode != 0:
            problems.append(f"{what}: lance-cpp append failed\n{describe_result(proc)}")
            continue
        lance.write_dataset(new, str(theirs), mode="append")
        if d["name"] == "legacy":
            # Legacy (0.1) files as pylance 14's legacy writer makes them, byte for byte.
            mine, its = (_last_data_file(p) for p in (ours, theirs))
            if mine != its:
                problems.append(f"{what}: lance-cpp's appended legacy data file differs from pylance 14's "
                                f"({len(mine)} vs {len(its)} bytes)")
        proc = lance_cpp.run("delete", ours, "id < 60 OR id >= 100010")
        if proc.returncode != 0:
            problems.append(f"{what}: lance-cpp delete failed\n{describe_result(proc)}")
            continue
        lance.dataset(str(theirs)).delete("id < 60 OR id >= 100010")

        a, b = lance.dataset(str(ours)), lance.dataset(str(theirs))
        if hasattr(a, "validate"):
            try:
                a.validate()
            except Exception as exc:  # noqa: BLE001 - pylance's verdict on our commit
                problems.append(f"{what}: pylance 14 validate() refuses lance-cpp's commits: {exc}")
        if (a.version, a.data_storage_version) != (b.version, b.data_storage_version):
            problems.append(f"{what}: version/storage {a.version}/{a.data_storage_version}, "
                            f"pylance's own {b.version}/{b.data_storage_version}")
        problems += _diff(f"{what}: pylance 14 reading lance-cpp's commits",
                          a.to_table(), b.to_table())
        problems += _diff(f"{what}: lance-cpp reading its commits",
                          _cpp_scan(lance_cpp, tmp_path / f"back-{d['name']}.arrow", ours), b.to_table())
    assert not problems, "\n".join(problems)
