"""What the writing commands print: one summary line on stdout in one form
(tests/interop/cli_output.py), and a progress bar on stderr when stderr is a
terminal (run here under a pseudo-terminal), nothing there otherwise or with
--quiet. Counts and versions are checked against what pylance reads, and
pylance's own changes are what lance-cpp reports on."""

from __future__ import annotations

import fcntl
import os
import re
import select
import shutil
import struct
import subprocess
import termios
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from cli_output import parse_change
from conftest import lance_cpp_binary

ROWS = 5000


def _table(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "v": pa.array([i % 100 for i in ids], pa.int32()),
                     "s": pa.array([f"s{i}" for i in ids])})


def _ipc_file(path: Path, table: pa.Table, chunk: int = 1000) -> Path:
    with pa.OSFile(str(path), "wb") as f, ipc.new_file(f, table.schema) as w:
        w.write_table(table, max_chunksize=chunk)
    return path


def _ipc_stream(path: Path, table: pa.Table) -> Path:
    with pa.OSFile(str(path), "wb") as f, ipc.new_stream(f, table.schema) as w:
        w.write_table(table, max_chunksize=1000)
    return path


def _cmd(*args) -> list[str]:
    return [str(lance_cpp_binary())] + [str(a) for a in args]


def _run(*args) -> subprocess.CompletedProcess:
    """stdout and stderr to pipes: stderr is not a terminal."""
    return subprocess.run(_cmd(*args), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def _run_tty(*args, timeout: float = 120) -> tuple[int, str, str]:
    """Runs with stderr on a pseudo-terminal (160 columns); stdout to a pipe.
    Returns the exit status, stdout and what reached the terminal."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    try:
        proc = subprocess.Popen(_cmd(*args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    finally:
        os.close(slave)
    seen = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer of the terminal is gone
                break
            if not data:
                break
            seen += data
        out = proc.stdout.read().decode()
        status = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return status, out, seen.decode()


def _ok(*args) -> subprocess.CompletedProcess:
    proc = _run(*args)
    assert proc.returncode == 0, f"{args}: {proc.stderr}"
    return proc


def _bar(stage: str, total: int, unit: str = "rows") -> re.Pattern:
    """A bar line of `stage` with its total: "[##..] done/total unit  pct%  rate unit/s  ETA m:ss"."""
    return re.compile(rf"\r{re.escape(stage)} \[[#.]+\] (\d+)/{total} {unit} +(\d+)%"
                      rf"(?:  \S+ {unit}/s  ETA [\d:-]+)?\x1b\[K")


def _assert_bar(tty: str, stage: str, total: int, unit: str = "rows"):
    found = _bar(stage, total, unit).findall(tty)
    assert found, f"no {stage!r} bar with total {total} on the terminal: {tty!r}"
    for done, pct in found:
        assert 0 <= int(done) <= total
        assert int(pct) == (int(done) * 100 // total if total else 100)
    # The line is cleared at the end.
    assert tty.endswith("\r\x1b[K"), repr(tty[-40:])


@pytest.fixture
def dataset(tmp_path) -> Path:
    uri = tmp_path / "ds.lance"
    lance.write_dataset(_table(0, ROWS), uri, max_rows_per_file=2000)
    return uri


# --------------------------------------------------------------------------- #
# The summary line
# --------------------------------------------------------------------------- #


def test_every_writing_command_says_what_changed_and_the_version(tmp_path):
    uri = tmp_path / "ds.lance"
    theirs = tmp_path / "theirs.lance"
    first = _ipc_file(tmp_path / "a.arrow", _table(0, 3000))
    change = parse_change(_ok("write", uri, "--input", first, "--max-rows-per-file", 1000).stdout)
    assert change.what == "wrote 3000 rows in 3 fragments"
    assert (change.version, change.committed) == (lance.dataset(uri).version, True) == (1, True)

    more = _ipc_file(tmp_path / "b.arrow", _table(3000, 10))
    assert _ok("write", uri, "--input", more, "--mode", "append").stdout == \
        "wrote 10 rows in 1 fragment; new version 2\n"
    assert lance.dataset(uri).count_rows() == 3010
    shutil.copytree(uri, theirs)

    change = parse_change(_ok("delete", uri, "id % 10 = 3").stdout)
    expected = lance.dataset(theirs).count_rows()
    lance.dataset(theirs).delete("id % 10 = 3")
    expected -= lance.dataset(theirs).count_rows()
    assert change.what == f"deleted {expected} rows" and expected == 301
    assert (change.version, change.committed) == (lance.dataset(uri).version, True) == (3, True)
    assert _ok("delete", uri, "id < 0").stdout == "deleted 0 rows; new version 4\n"  # as pylance 14, a new version

    change = parse_change(_ok("update", uri, "--set", "v = v + 1", "--where", "id < 7").stdout)
    expected = lance.dataset(theirs).update({"v": "v + 1"}, where="id < 7")["num_rows_updated"]
    assert change.what == f"updated {expected} rows" and expected == 6  # id 3 is deleted
    assert (change.version, change.committed) == (lance.dataset(uri).version, True) == (5, True)

    source = _ipc_file(tmp_path / "src.arrow", _table(3005, 10))  # 5 present, 5 new
    out = _ok("merge-insert", uri, "--on", "id", "--input", source,
              "--when-matched-update-all", "--when-not-matched-insert-all").stdout
    stats = (lance.dataset(theirs).merge_insert("id").when_matched_update_all()
             .when_not_matched_insert_all().execute(ipc.open_file(pa.memory_map(str(source))).read_all()))
    assert out == (f"inserted {stats['num_inserted_rows']} rows, updated {stats['num_updated_rows']} rows, "
                   f"deleted {stats['num_deleted_rows']} rows; new version 6\n")
    assert lance.dataset(uri).version == 6

    # One row: no plural.
    one = _ipc_file(tmp_path / "one.arrow", _table(0, 1))
    assert _ok("merge-insert", uri, "--on", "id", "--input", one, "--when-matched-update-all").stdout == \
        "inserted 0 rows, updated 1 row, deleted 0 rows; new version 7\n"

    assert _ok("restore", uri, "2").stdout == "restored version 2; new version 8\n"
    assert lance.dataset(uri).version == 8 and lance.dataset(uri).count_rows() == 3010
    assert _ok("tag", uri, "create", "keep", "3").stdout == "created tag keep on version 3; version 8 unchanged\n"
    assert lance.dataset(uri).tags.list()["keep"]["version"] == 3
    assert _ok("tag", uri, "delete", "keep").stdout == "deleted tag keep; version 8 unchanged\n"

    overwrite = _ipc_file(tmp_path / "c.arrow", _table(0, 5))
    assert _ok("write", uri, "--input", overwrite, "--mode", "overwrite").stdout == \
        "wrote 5 rows in 1 fragment; new version 9\n"

    change = parse_change(_ok("cleanup", uri, "--older-than", "0").stdout)
    assert (change.version, change.committed) == (9, False)
    assert change.count("old version") == 8
    assert re.fullmatch(r"removed 8 old versions, \d+ data files?, \d+ deletion files?, \d+ transaction files?, "
                        r"0 index files \(\d+ bytes\)", change.what), change.what
    assert [v["version"] for v in lance.dataset(uri).versions()] == [9]


# --------------------------------------------------------------------------- #
# The progress bar
# --------------------------------------------------------------------------- #


def test_write_shows_a_bar_with_the_files_total(tmp_path):
    uri = tmp_path / "ds.lance"
    status, out, tty = _run_tty("write", uri, "--input", _ipc_file(tmp_path / "a.arrow", _table(0, ROWS)))
    assert status == 0, tty
    _assert_bar(tty, "writing", ROWS)
    assert parse_change(out).what == f"wrote {ROWS} rows in 1 fragment"
    # CSV knows its rows too once parsed; an Arrow stream does not: done and rate only.
    stream = _ipc_stream(tmp_path / "b.stream", _table(ROWS, 3000))
    status, out, tty = _run_tty("write", uri, "--input", stream, "--mode", "append")
    assert status == 0, tty
    assert re.search(r"\rwriting \d+ rows(?:  \S+ rows/s)?\x1b\[K", tty), repr(tty)
    assert "/" not in tty.replace("rows/s", "") and "%" not in tty
    assert lance.dataset(uri).count_rows() == ROWS + 3000


def test_delete_update_merge_insert_cleanup_show_bars(dataset, tmp_path):
    status, out, tty = _run_tty("delete", dataset, "id % 10 = 3")
    assert status == 0, tty
    _assert_bar(tty, "scanning", ROWS)
    assert parse_change(out).count("deleted") == ROWS // 10

    # Many rows match: one scan that rewrites as it goes, by position.
    status, out, tty = _run_tty("update", dataset, "--set", "v = v + 1", "--where", "id >= 1000")
    assert status == 0, tty
    _assert_bar(tty, "updating", ROWS)
    assert parse_change(out).count("updated") == lance.dataset(dataset).count_rows(filter="id >= 1000")
    # Few rows: found on the predicate's column, then taken.
    physical = sum(f.physical_rows for f in lance.dataset(dataset).get_fragments())
    status, out, tty = _run_tty("update", dataset, "--set", "v = 0", "--where", "id % 100 = 1")
    assert status == 0, tty
    _assert_bar(tty, "scanning", physical)
    _assert_bar(tty, "updating", 50)

    live = lance.dataset(dataset).count_rows()
    source = _ipc_file(tmp_path / "src.arrow", _table(ROWS - 100, 300))  # 100 present, 200 new
    status, out, tty = _run_tty("merge-insert", dataset, "--on", "id", "--input", source,
                                "--when-matched-update-all", "--when-not-matched-insert-all")
    assert status == 0, tty
    _assert_bar(tty, "matching", live)
    change = parse_change(out)
    _assert_bar(tty, "writing", change.count("inserted") + change.count("updated"))

    versions = len(lance.dataset(dataset).versions())
    status, out, tty = _run_tty("cleanup", dataset, "--older-than", "0")
    assert status == 0, tty
    _assert_bar(tty, "reading versions", versions, unit="versions")
    assert parse_change(out).count("old version") == versions - 1
    assert re.search(r"\rremoving \[[#.]+\] \d+/\d+ files", tty), repr(tty)


def test_compact_shows_a_bar(dataset):
    lance.dataset(dataset).delete("id % 10 = 3")
    live = lance.dataset(dataset).count_rows()
    status, out, tty = _run_tty("compact", dataset)
    assert status == 0, tty
    _assert_bar(tty, "compacting", live)
    assert parse_change(out).what == "removed 3 fragments and 6 files, added 1 fragment and 1 file"


def test_nothing_on_stderr_off_a_terminal_or_with_quiet(dataset, tmp_path):
    src = _ipc_file(tmp_path / "a.arrow", _table(ROWS, 2000))
    merge = _ipc_file(tmp_path / "m.arrow", _table(ROWS - 10, 20))
    commands = [
        ("write", tmp_path / "new.lance", "--input", src),
        ("write", dataset, "--input", src, "--mode", "append"),
        ("delete", dataset, "id % 10 = 3"),
        ("update", dataset, "--set", "v = v + 1", "--where", "id >= 1000"),
        ("update", dataset, "--set", "v = 1", "--where", "id = 5"),
        ("merge-insert", dataset, "--on", "id", "--input", merge, "--when-matched-update-all",
         "--when-not-matched-insert-all"),
        ("cleanup", dataset, "--older-than", "0"),
        ("compact", dataset),
    ]
    for args in commands:
        proc = _run(*args)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == "", f"{args[0]} printed on a pipe: {proc.stderr!r}"
        parse_change(proc.stdout)
    # The same under a terminal with --quiet: the terminal stays empty.
    shutil.rmtree(tmp_path / "new.lance")
    for args in commands:
        status, out, tty = _run_tty(*args, "--quiet")
        assert status == 0, tty
        assert tty == "", f"{args[0]} --quiet printed on the terminal: {tty!r}"
        parse_change(out)


def test_error_after_a_bar_starts_on_a_clean_line(dataset, tmp_path):
    # A merge-insert whose source has two rows for one key fails after
    # matching began: the key is in the last rows of the target.
    dup = _ipc_file(tmp_path / "dup.arrow", pa.concat_tables([_table(ROWS - 3, 1), _table(ROWS - 3, 1)]))
    status, out, tty = _run_tty("merge-insert", dataset, "--on", "id", "--input", dup,
                                "--when-matched-update-all")
    assert status == 1 and out == ""
    assert re.match(r"\rmatching \[", tty), repr(tty)
    assert "\r\x1b[Kerror: " in tty, repr(tty)
    assert tty.rstrip("\r\n").endswith("Please ensure each target row is matched by at most one source row.")
