"""Concurrent writers, half lance-cpp (the CLI) and half pylance, started
together from a file barrier on one dataset: deletes of different rows of one
fragment, increments of one row, appends, and a mix of the three, with stable
row ids off and on. Every write must commit and nothing may be lost or
doubled; afterwards both readers give the same table and pylance opens every
version."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

import lance
from conftest import lance_cpp_binary

ROWS = 200
WORKER = Path(__file__).with_name("concurrency_worker.py")
READY_TIMEOUT_S = 60
RUN_TIMEOUT_S = 180


def _write_ipc(path: Path, table: pa.Table) -> Path:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return path


def _base_table() -> pa.Table:
    return pa.table({"id": pa.array(range(ROWS), pa.int64()), "c": pa.array([0] * ROWS, pa.int64())})


@pytest.fixture(params=[("py", False), ("cpp", True)], ids=["pylance-made-plain", "lance-cpp-made-stable"])
def dataset(request, tmp_path, lance_cpp):
    creator, stable = request.param
    path = tmp_path / "ds.lance"
    if creator == "py":
        lance.write_dataset(_base_table(), path, enable_stable_row_ids=stable)
    else:
        src = _write_ipc(tmp_path / "base.arrow", _base_table())
        args = ["write", path, "--input", src, "--quiet"]
        if stable:
            args.append("--enable-stable-row-ids")
        lance_cpp.run_ok(*args)
    ds = lance.dataset(path)
    assert len(ds.get_fragments()) == 1
    return path, stable


def run_together(tmp_path: Path, dataset: Path, jobs: list[tuple[str, str, str]]) -> list[dict]:
    """Starts one worker per (role, op, arg), waits until all are ready,
    releases them at once and returns their results."""
    run_dir = tmp_path / f"run-{time.monotonic_ns()}"
    run_dir.mkdir()
    go = run_dir / "go"
    env = dict(os.environ, LANCE_CPP_BIN=str(lance_cpp_binary()), LANCE_LOG="error")
    procs = []
    for i, (role, op, arg) in enumerate(jobs):
        cmd = [sys.executable, str(WORKER), role, op, str(dataset), arg, str(go),
               str(run_dir / f"ready-{i}"), str(run_dir / f"result-{i}.json")]
        procs.append(subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + READY_TIMEOUT_S
    try:
        while not all((run_dir / f"ready-{i}").exists() for i in range(len(jobs))):
            if time.monotonic() > deadline or any(p.poll() not in (None, 0) for p in procs):
                pytest.fail("workers did not get ready: " +
                            "; ".join(p.stderr.read() for p in procs if p.poll() not in (None, 0)))
            time.sleep(0.01)
        go.write_text("go")
        for p in procs:
            p.wait(timeout=RUN_TIMEOUT_S)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    results = []
    for i, p in enumerate(procs):
        result_file = run_dir / f"result-{i}.json"
        assert result_file.exists(), f"worker {jobs[i]} left no result: {p.stderr.read()}"
        results.append(json.loads(result_file.read_text()))
    return results


def assert_all_committed(results: list[dict]) -> None:
    failed = [r for r in results if not r.get("ok")]
    assert not failed, "writers failed:\n" + "\n".join(
        f"{r.get('role')} {r.get('op')} {r.get('arg')}: rc={r.get('returncode')} "
        f"{r.get('stderr') or r.get('error')}" for r in failed)


def cpp_table(lance_cpp, path: Path, tmp_path: Path, with_row_id: bool) -> pa.Table:
    out = tmp_path / f"scan-{time.monotonic_ns()}.arrow"
    args = ["scan", path, "--out", out]
    if with_row_id:
        args.append("--with-row-id")
    lance_cpp.run_ok(*args)
    with pa.memory_map(str(out)) as f:
        return pa.ipc.open_file(f).read_all()


def assert_readers_agree(lance_cpp, path: Path, tmp_path: Path, stable: bool, commits: int) -> pa.Table:
    ds = lance.dataset(path)
    versions = [v["version"] for v in ds.versions()]
    assert versions == list(range(1, 2 + commits)), "one version per commit"
    for v in versions:  # pylance opens every version
        old = lance.dataset(path, version=v)
        assert old.to_table().num_rows == old.count_rows()
    theirs = ds.to_table(with_row_id=stable).sort_by("id")
    mine = cpp_table(lance_cpp, path, tmp_path, with_row_id=stable).sort_by("id")
    assert mine.equals(theirs)
    if stable:
        ids = theirs["_rowid"].to_pylist()
        assert len(set(ids)) == len(ids), "stable row ids must stay unique"
    return ds.to_table().sort_by("id")


def data_files(path: Path) -> set:
    return {f.path for frag in lance.dataset(path).get_fragments() for f in frag.data_files()}


def test_deletes_of_one_fragment(dataset, lance_cpp, tmp_path):
    path, stable = dataset
    before = data_files(path)
    victims = [3, 17, 42, 77, 101, 150, 188, 199]
    jobs = [("cpp" if i % 2 == 0 else "py", "delete", str(k)) for i, k in enumerate(victims)]
    results = run_together(tmp_path, path, jobs)
    assert_all_committed(results)
    table = assert_readers_agree(lance_cpp, path, tmp_path, stable, commits=len(victims))
    assert table["id"].to_pylist() == [i for i in range(ROWS) if i not in victims]
    assert data_files(path) == before, "no data file may be rewritten"
    assert len(lance.dataset(path).get_fragments()) == 1


def test_increments_of_one_row(dataset, lance_cpp, tmp_path):
    path, stable = dataset
    jobs = [("cpp" if i % 2 == 0 else "py", "increment", "5") for i in range(6)]
    results = run_together(tmp_path, path, jobs)
    assert_all_committed(results)
    table = assert_readers_agree(lance_cpp, path, tmp_path, stable, commits=len(jobs))
    rows = [r for r in table.to_pylist() if r["id"] == 5]
    assert rows == [{"id": 5, "c": len(jobs)}], "the row once, counted once per commit"
    assert table.num_rows == ROWS
    assert sum(table["c"].to_pylist()) == len(jobs)


def test_appends(dataset, lance_cpp, tmp_path):
    path, stable = dataset
    jobs = []
    for i in range(8):
        ids = range(1000 + 10 * i, 1000 + 10 * i + 10)
        src = _write_ipc(tmp_path / f"append-{i}.arrow",
                         pa.table({"id": pa.array(ids, pa.int64()), "c": pa.array([i] * 10, pa.int64())}))
        jobs.append(("cpp" if i % 2 == 0 else "py", "append", str(src)))
    results = run_together(tmp_path, path, jobs)
    assert_all_committed(results)
    table = assert_readers_agree(lance_cpp, path, tmp_path, stable, commits=len(jobs))
    expected = list(range(ROWS)) + [1000 + j for j in range(80)]
    assert table["id"].to_pylist() == expected


def test_mix(dataset, lance_cpp, tmp_path):
    path, stable = dataset
    src = _write_ipc(tmp_path / "mix.arrow", pa.table({"id": pa.array([5000, 5001], pa.int64()),
                                                       "c": pa.array([0, 0], pa.int64())}))
    src2 = _write_ipc(tmp_path / "mix2.arrow", pa.table({"id": pa.array([6000], pa.int64()),
                                                         "c": pa.array([0], pa.int64())}))
    jobs = [("cpp", "delete", "10"), ("py", "delete", "20"), ("cpp", "delete", "30"), ("py", "delete", "40"),
            ("cpp", "increment", "7"), ("py", "increment", "7"),
            ("cpp", "append", str(src)), ("py", "append", str(src2))]
    results = run_together(tmp_path, path, jobs)
    assert_all_committed(results)
    table = assert_readers_agree(lance_cpp, path, tmp_path, stable, commits=len(jobs))
    expected_ids = [i for i in range(ROWS) if i not in (10, 20, 30, 40)] + [5000, 5001, 6000]
    assert table["id"].to_pylist() == expected_ids
    assert [r["c"] for r in table.to_pylist() if r["id"] == 7] == [2]


def test_retry_flags(dataset, lance_cpp, tmp_path):
    path, _ = dataset
    lance_cpp.run_ok("delete", path, "id = 1", "--max-retries", "3", "--retry-timeout", "5")
    lance_cpp.run_ok("update", path, "--set", "c=c + 1", "--where", "id = 2", "--max-retries", "0",
                     "--retry-timeout", "0.5")
    for args in (["delete", path, "id = 3", "--max-retries", "many"],
                 ["delete", path, "id = 3", "--retry-timeout", "-1"],
                 ["write", path, "--input", "x.arrow", "--mode", "append", "--max-retries", "-2"]):
        proc = lance_cpp.run(*args)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("error: ")
    table = lance.dataset(path).to_table().sort_by("id")
    assert 1 not in table["id"].to_pylist()
    assert [r["c"] for r in table.to_pylist() if r["id"] == 2] == [1]
