"""The short form of the crash campaign (tests/interop/crash_campaign.py; the
long one is `make test-crash`): each write path SIGKILLed a few times at
random moments, each kill followed by the campaign's checks."""
from __future__ import annotations

import shutil
import subprocess
import uuid

import pytest

import crash_campaign as campaign

KILLS_PER_PATH = 8


@pytest.fixture(scope="module")
def base(tmp_path_factory, lance_cpp):
    work = tmp_path_factory.mktemp("crash-campaign")
    dataset, inputs = campaign.build_base(work)
    return work, dataset, inputs


@pytest.mark.parametrize("name", campaign.PATH_NAMES)
def test_killed_write_path(base, name):
    work, dataset, inputs = base
    seed = 18_000 + campaign.PATH_NAMES.index(name)
    out = campaign.run_path(name, KILLS_PER_PATH, seed, work, dataset, inputs)
    print(out.line())
    assert not out.failures, "\n".join(out.failures)
    # Kills must land inside the work; a run that ended first proves nothing.
    assert out.kills >= KILLS_PER_PATH // 2, out.line()


def test_unreferenced_files_are_found(base, tmp_path):
    """The cleanup check sees a leftover of each kind a killed writer leaves."""
    _, dataset, _ = base
    uri = tmp_path / "d.lance"
    shutil.copytree(dataset, uri)
    assert campaign.unreferenced(uri) == []
    strays = [f"data/{uuid.uuid4()}.lance", f"_deletions/0-99-{uuid.uuid4().int % 10**6}.arrow",
              f"_transactions/99-{uuid.uuid4()}.txn", f"_indices/{uuid.uuid4()}/page_data.lance",
              "_versions/.tmp_99.manifest", "_versions/stray.json"]
    for rel in strays:
        (uri / rel).parent.mkdir(parents=True, exist_ok=True)
        (uri / rel).write_bytes(b"x")
    assert sorted(campaign.unreferenced(uri)) == sorted(strays)


def test_unreferenced_files_after_cleanup_of_old_versions(base, tmp_path):
    """Cleanup of the base's old versions leaves their superseded deletion,
    transaction and manifest files unreferenced until it removes them: the
    check is computed over the remaining versions only."""
    _, dataset, _ = base
    uri = tmp_path / "d.lance"
    shutil.copytree(dataset, uri)
    version = campaign.lance.dataset(str(uri)).version
    latest = campaign.manifest_wire.manifest_path(uri, version)
    for v in range(1, version):
        campaign.manifest_wire.manifest_path(uri, v).unlink()
    left = campaign.unreferenced(uri)
    assert any(p.startswith("_transactions/") for p in left), left
    assert any(p.startswith("_deletions/") for p in left), left
    subprocess.run(campaign.cpp("cleanup", uri, "--older-than", "0", "--delete-unverified"),
                   check=True, capture_output=True)
    assert campaign.unreferenced(uri) == []
    assert latest.exists()
