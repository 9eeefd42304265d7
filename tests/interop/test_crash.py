"""A lance-cpp process killed (SIGKILL) at random points while it writes
data files or commits leaves the dataset at its last committed version, or
the next one whole: pylance and lance-cpp both open it, agree on it, and can
keep writing to it. Deterministic seeds; the kill points spread over one
measured run of the same command."""
from __future__ import annotations

import random
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import lance
from crash_campaign import cpp as _cpp, killed_run as _killed_run, table as _table, write_ipc as _write_ipc


def _count(uri: Path) -> int:
    proc = subprocess.run(_cpp("count", uri), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.strip())


@pytest.mark.parametrize("version", ["2.0", "2.2"])
def test_killed_append_leaves_a_committed_version(tmp_path, version):
    base = tmp_path / "base.lance"
    lance.write_dataset(_table(0, 1000), base, data_storage_version=version)
    rows = 200_000
    src = _write_ipc(tmp_path / "in.arrow", _table(1000, rows))
    args = lambda uri: _cpp("write", uri, "--input", src, "--mode", "append",  # noqa: E731
                            "--max-rows-per-file", 15_000, "--quiet")
    # One whole run, to know how long a write takes.
    probe = tmp_path / "probe.lance"
    shutil.copytree(base, probe)
    start = time.perf_counter()
    subprocess.run(args(probe), check=True, capture_output=True, timeout=300)
    whole = time.perf_counter() - start
    rng = random.Random(int(version[-1]))
    killed = 0
    # Kill points spread over the measured run. A loaded machine makes run
    # times vary, so a run that finished before its kill does not count and
    # later attempts aim earlier, until 4 runs were cut short (or 16 tried).
    scale = 1.0
    for k in range(16):
        if k >= 8 and killed >= 4:
            break
        uri = tmp_path / f"run{k}.lance"
        shutil.copytree(base, uri)
        delay = scale * whole * (k % 8 + rng.random()) / 8
        alive = _killed_run(args(uri), delay)
        killed += alive
        if not alive:
            scale *= 0.7
        ds = lance.dataset(uri)
        assert ds.version in (1, 2), f"kill at {delay:.3f}s: version {ds.version}"
        want = 1000 if ds.version == 1 else 1000 + rows
        assert ds.count_rows() == want
        assert _count(uri) == want
        assert ds.to_table(columns=["id"]).column("id").to_pylist()[:3] == [0, 1, 2]
        # Both keep writing on top of whatever survived.
        ds = lance.write_dataset(_table(10_000_000, 10), uri, mode="append")
        subprocess.run(_cpp("delete", uri, "id < 10"), check=True, capture_output=True, timeout=120)
        assert _count(uri) == want + 10 - 10
        assert lance.dataset(uri).count_rows() == want
    assert killed >= 4, "most runs should be killed while writing"


def test_killed_row_operations_leave_a_committed_version(tmp_path):
    base = tmp_path / "base.lance"
    lance.write_dataset(_table(0, 60_000), base, data_storage_version="2.1", max_rows_per_file=5_000)
    source = _write_ipc(tmp_path / "src.arrow", _table(50_000, 20_000))
    ops = {
        "delete": lambda uri: _cpp("delete", uri, "id % 3 = 0"),
        "update": lambda uri: _cpp("update", uri, "--set", "v = v + 1", "--where", "id % 2 = 0"),
        "merge-insert": lambda uri: _cpp("merge-insert", uri, "--on", "id", "--input", source,
                                         "--when-matched-update-all", "--when-not-matched-insert-all"),
    }
    rng = random.Random(7)
    for name, args in ops.items():
        probe = tmp_path / f"probe-{name}.lance"
        shutil.copytree(base, probe)
        start = time.perf_counter()
        subprocess.run(args(probe), check=True, capture_output=True, timeout=300)
        whole = time.perf_counter() - start
        after = lance.dataset(probe).to_table().sort_by("id")
        before = lance.dataset(base).to_table().sort_by("id")
        for k in range(4):
            uri = tmp_path / f"{name}{k}.lance"
            shutil.copytree(base, uri)
            _killed_run(args(uri), whole * (k + rng.random()) / 4)
            ds = lance.dataset(uri)
            assert ds.version in (1, 2), f"{name}: version {ds.version}"
            got = ds.to_table().sort_by("id")
            assert got.equals(before if ds.version == 1 else after), f"{name} run {k}"
            assert _count(uri) == got.num_rows
