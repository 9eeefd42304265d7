"""`lance-cpp inspect --json` and `lance-cpp versions` against every reference
dataset in shared/fixtures/lance-test-data, with pylance as the oracle.

Each dataset is copied to a temporary directory first; shared/ is never
touched.  One test id per dataset (latest) and per dataset@version.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import lance
from conftest import (
    FIXTURES_ROOT,
    assert_no_crash,
    assert_versions_output,
    assert_view_matches,
    pylance_view,
    shared_fixture_params,
    versions_from_listing,
)


def _discover() -> list[Path]:
    if not FIXTURES_ROOT.is_dir():
        return []
    return sorted(p.parent for p in FIXTURES_ROOT.rglob("_versions") if p.is_dir())


DATASETS = shared_fixture_params([pytest.param(p, id=str(p.relative_to(FIXTURES_ROOT)))
                                  for p in _discover()])

# (dataset, version) for every dataset with more than one version on disk.
VERSIONED = shared_fixture_params([
    pytest.param(p, v, id=f"{p.relative_to(FIXTURES_ROOT)}@v{v}")
    for p in _discover()
    for vs in [versions_from_listing(p)] if len(vs) > 1
    for v in vs
], nargs=2)


@pytest.fixture(scope="session")
def fixture_copy(tmp_path_factory):
    """Returns a copy (made once per session) of a shared fixture dataset."""
    import shutil

    root = tmp_path_factory.mktemp("fixtures")
    cache: dict[Path, Path] = {}

    def get(src: Path) -> Path:
        if src not in cache:
            dst = root / src.relative_to(FIXTURES_ROOT)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(src, dst)
            cache[src] = dst
        return cache[src]

    return get


def _pylance_or_skip(lance_cpp, uri: Path, version=None) -> dict:
    """pylance's view; if pylance cannot open the dataset, lance-cpp must at
    least not crash (exit 0, or exit 1 with one `error:` line) and the test is
    skipped with pylance's reason."""
    try:
        return pylance_view(uri, version)
    except Exception as exc:  # noqa: BLE001 - anything pylance raises
        args = ["inspect", str(uri), "--json"] + (["--version", str(version)] if version else [])
        assert_no_crash(lance_cpp.run(*args))
        pytest.skip(f"pylance cannot open it: {type(exc).__name__}: {str(exc).splitlines()[0]}")


@pytest.mark.parametrize("src", DATASETS)
def test_inspect_latest(lance_cpp, fixture_copy, src):
    uri = fixture_copy(src)
    expected = _pylance_or_skip(lance_cpp, uri)
    actual = lance_cpp.inspect(uri)
    assert_view_matches(actual, expected, f"{src.relative_to(FIXTURES_ROOT)}, latest")


@pytest.mark.parametrize("src,version", VERSIONED)
def test_inspect_version(lance_cpp, fixture_copy, src, version):
    uri = fixture_copy(src)
    expected = _pylance_or_skip(lance_cpp, uri, version)
    actual = lance_cpp.inspect(uri, version)
    assert_view_matches(actual, expected, f"{src.relative_to(FIXTURES_ROOT)}, --version {version}")


@pytest.mark.parametrize("src", DATASETS)
def test_versions_command(lance_cpp, fixture_copy, src):
    uri = fixture_copy(src)
    try:
        lance.dataset(str(uri)).versions()
    except Exception as exc:  # noqa: BLE001
        assert_no_crash(lance_cpp.run("versions", str(uri)))
        pytest.skip(f"pylance cannot list versions: {type(exc).__name__}: {exc}")
    assert_versions_output(lance_cpp.versions(uri), uri)


@pytest.mark.parametrize("src", DATASETS)
def test_inspect_human_readable(lance_cpp, fixture_copy, src):
    """Without --json, inspect must succeed wherever pylance opens the dataset."""
    uri = fixture_copy(src)
    _pylance_or_skip(lance_cpp, uri)
    proc = lance_cpp.run_ok("inspect", uri)
    assert proc.stdout.strip(), "inspect printed nothing"
