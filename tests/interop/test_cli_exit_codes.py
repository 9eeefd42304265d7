"""CLI exit codes of a write that loses to a concurrent commit (README, "Exit
status"): 3 for a conflict retries did not resolve, 4 for too much write
contention; the message names both operations and both versions, and nothing
is committed.

The concurrent commit is made deterministically between lance-cpp's read and
its commit: a small LD_PRELOAD shim, built here, stops lance-cpp in link(2)
just before it creates its manifest (the atomic create-if-absent of a local
commit) until the test has committed with pylance.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pytest

import lance
from conftest import describe_result, lance_cpp_binary, small_table

PAUSE_TIMEOUT_S = 60

SHIM_SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first link(2) onto a manifest in _versions/ waits for $PAUSE_DIR/go,
   after announcing itself as $PAUSE_DIR/paused. Later ones (retries) pass. */
int link(const char* from, const char* to) {
  static int (*real)(const char*, const char*);
  static int paused;
  if (!real) real = (int (*)(const char*, const char*))dlsym(RTLD_NEXT, "link");
  const char* dir = getenv("LANCE_TEST_PAUSE_DIR");
  if (dir && !paused && strstr(to, "/_versions/") && strstr(to, ".manifest")) {
    char p[4096];
    paused = 1;
    snprintf(p, sizeof p, "%s/paused", dir);
    close(open(p, O_CREAT | O_WRONLY, 0644));
    snprintf(p, sizeof p, "%s/go", dir);
    for (int i = 0; i < 12000 && access(p, F_OK) != 0; ++i) usleep(5000);
  }
  return real(from, to);
}
"""


@pytest.fixture(scope="session")
def pause_shim(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.fail("no C compiler (cc, gcc or clang) for the LD_PRELOAD shim")
    d = tmp_path_factory.mktemp("pause-shim")
    src = d / "pause_link.c"
    src.write_text(SHIM_SOURCE)
    lib = d / "pause_link.so"
    proc = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(src), "-ldl"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return lib


def run_preempted(shim: Path, tmp_path: Path, args: list, commit_between) -> subprocess.CompletedProcess:
    """Runs lance-cpp ARGS, stopped just before it creates its manifest while
    `commit_between()` commits with pylance."""
    pause = tmp_path / f"pause-{time.monotonic_ns()}"
    pause.mkdir()
    env = dict(os.environ, LD_PRELOAD=str(shim), LANCE_TEST_PAUSE_DIR=str(pause),
               # An AddressSanitizer build wants its runtime first; the shim
               # only adds a symbol.
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    cmd = [str(lance_cpp_binary())] + [str(a) for a in args]
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + PAUSE_TIMEOUT_S
        while not (pause / "paused").exists():
            if proc.poll() is not None:
                out, err = proc.communicate()
                pytest.fail(f"lance-cpp ended before its commit (rc {proc.returncode}): {err}{out}")
            if time.monotonic() > deadline:
                pytest.fail("lance-cpp never reached its commit")
            time.sleep(0.005)
        commit_between()
        (pause / "go").write_text("go")
        out, err = proc.communicate(timeout=PAUSE_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def assert_exit(proc: subprocess.CompletedProcess, code: int, *patterns: str) -> None:
    problems = []
    if proc.returncode != code:
        problems.append(f"exit status {proc.returncode}, expected {code}")
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    if len(lines) != 1 or not lines[0].startswith("error: "):
        problems.append("stderr is not one 'error: ' line")
    for p in patterns:
        if not re.search(p, proc.stderr):
            problems.append(f"the message does not match {p!r}")
    if proc.stdout.strip():
        problems.append("something was printed on stdout")
    assert not problems, "; ".join(problems) + "\n" + describe_result(proc)


@pytest.fixture
def dataset(tmp_path) -> Path:
    uri = tmp_path / "ds.lance"
    lance.write_dataset(small_table(0, 20), str(uri))
    return uri


def write_input(tmp_path: Path, table: pa.Table) -> Path:
    path = tmp_path / "input.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return path


def versions(uri: Path) -> list[int]:
    return [v["version"] for v in lance.dataset(str(uri)).versions()]


def test_incompatible_commit_exits_3(dataset, tmp_path, pause_shim):
    """An append read version 1; an overwrite became version 2 meanwhile."""
    src = write_input(tmp_path, small_table(100, 105))
    proc = run_preempted(pause_shim, tmp_path, ["write", dataset, "--input", src, "--mode", "append"],
                         lambda: lance.write_dataset(small_table(50, 60), str(dataset), mode="overwrite"))
    assert_exit(proc, 3, r"\bAppend\b", r"\bOverwrite\b", r"\bversion 1\b", r"\bversion 2\b")
    assert versions(dataset) == [1, 2]
    assert lance.dataset(str(dataset)).to_table() == small_table(50, 60)


def test_lost_race_on_every_attempt_exits_3(dataset, tmp_path, pause_shim):
    """One commit attempt (--max-retries 1) that another append beats."""
    src = write_input(tmp_path, small_table(100, 105))
    proc = run_preempted(pause_shim, tmp_path,
                         ["write", dataset, "--input", src, "--mode", "append", "--max-retries", "1"],
                         lambda: lance.write_dataset(small_table(20, 25), str(dataset), mode="append"))
    assert_exit(proc, 3, r"\bAppend\b", r"\bversion 2\b", r"\b1 attempts?\b")
    assert versions(dataset) == [1, 2]


@pytest.mark.parametrize("op", ["delete", "update", "merge-insert"])
def test_too_much_contention_exits_4(op, dataset, tmp_path, pause_shim):
    """A row operation with no re-runs (--max-retries 0) whose rows a pylance
    delete of the same row took first: a retryable conflict it may not retry."""
    if op == "delete":
        args = ["delete", dataset, "id = 3"]
        kind = "Delete"
    elif op == "update":
        args = ["update", dataset, "--set", "name='x'", "--where", "id = 3"]
        kind = "Update"
    else:
        src = write_input(tmp_path, small_table(3, 4))
        args = ["merge-insert", dataset, "--on", "id", "--input", src, "--when-matched-update-all"]
        kind = "Update"
    proc = run_preempted(pause_shim, tmp_path, args + ["--max-retries", "0"],
                         lambda: lance.dataset(str(dataset)).delete("id = 3"))
    assert_exit(proc, 4, r"too much write contention", rf"\b{kind}\b", r"\bDelete\b",
                r"\bversion 1\b", r"\bversion 2\b")
    assert versions(dataset) == [1, 2]
    assert 3 not in lance.dataset(str(dataset)).to_table()["id"].to_pylist()


def test_contention_resolved_by_a_rerun(dataset, tmp_path, pause_shim):
    """The same preempted delete with its default re-runs commits on version 2."""
    proc = run_preempted(pause_shim, tmp_path, ["delete", dataset, "id = 3 OR id = 4"],
                         lambda: lance.dataset(str(dataset)).delete("id = 3"))
    assert proc.returncode == 0, describe_result(proc)
    assert versions(dataset) == [1, 2, 3]
    ids = lance.dataset(str(dataset)).to_table()["id"].to_pylist()
    assert 3 not in ids and 4 not in ids and len(ids) == 18
