"""Crash campaign: every write path of the lance-cpp CLI SIGKILLed at random
moments, each kill followed by the same checks.

For each write path a base dataset (several fragments, deletion files, older
versions, a BTREE index) is copied, the command started on the copy and
killed after a random delay in [0, 1.2 x its measured duration]. Then:

* the dataset is at the version before or the version after, with that
  version's rows, and pylance and lance-cpp read the same rows from it;
* `lance-cpp verify` exits 0;
* the next commit (an append) works;
* `lance-cpp cleanup --older-than 0 --delete-unverified` leaves only files a
  remaining version references: data/, _deletions/, _transactions/,
  _indices/<uuid>/, and in _versions/ only the remaining manifests and
  latest_version_hint.json.

A kill that lands after the process exited counts as "completed", not as a
kill. Seeds are deterministic (random.Random(seed) per write path).

    python tests/interop/crash_campaign.py --kills-per-path 100

exits 1 when any check failed; the failing dataset copies stay in --keep-dir.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

os.environ.setdefault("LANCE_LOG", "error")

import pyarrow as pa  # noqa: E402
import pyarrow.ipc as ipc  # noqa: E402

import lance  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import manifest_wire  # noqa: E402
from conftest import CLI_TIMEOUT_S, lance_cpp_binary, write_fragments  # noqa: E402

# Base dataset: 16 fragments of 5000 rows, a version each, then a delete
# and an update (deletion files, rewritten rows, unreferenced old files) and
# a BTREE index. Big enough that each command runs for tens of milliseconds.
FRAGMENT_ROWS = 5_000
FRAGMENTS = 16
BASE_ROWS = FRAGMENT_ROWS * FRAGMENTS
NEXT_APPEND_ROWS = 10
TAG = "crash"
RESTORE_TO = 2
MAX_FAILURES_PER_PATH = 5


class CheckFailed(Exception):
    pass


def table(start: int, n: int) -> pa.Table:
    ids = range(start, start + n)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([f"name-{i}" for i in ids]),
        "v": pa.array([float(i) for i in ids]),
    })


def write_ipc(path: Path, t: pa.Table) -> Path:
    with ipc.new_file(path, t.schema) as w:
        w.write_table(t, max_chunksize=10_000)
    return path


def cpp(*args) -> list[str]:
    return [str(lance_cpp_binary())] + [str(a) for a in args]


def run_cpp(*args) -> subprocess.CompletedProcess:
    return subprocess.run(cpp(*args), capture_output=True, text=True, timeout=CLI_TIMEOUT_S,
                          stdin=subprocess.DEVNULL)


def check_cpp(what: str, *args) -> subprocess.CompletedProcess:
    proc = run_cpp(*args)
    if proc.returncode != 0:
        raise CheckFailed(f"{what}: `{' '.join(cpp(*args))}` exited {proc.returncode}: "
                          f"{(proc.stderr + proc.stdout).strip()[:2000]}")
    return proc


def killed_run(args: list[str], delay: float) -> bool:
    """Runs `args`, SIGKILLs it after `delay` s; True when it was still running."""
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    time.sleep(delay)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    rc = proc.wait(timeout=CLI_TIMEOUT_S)
    # The exit status, not poll(), tells: the process may exit between the two.
    if rc == -signal.SIGKILL:
        return True
    if rc != 0:
        raise CheckFailed(f"the command exited {rc} on its own (not killed)")
    return False


def startup_time() -> float:
    """How long the binary takes to load and exit (an unknown command): kills
    before this land before any work, whatever the command."""
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run(cpp("no-such-command"), capture_output=True, timeout=CLI_TIMEOUT_S)
        runs.append(time.perf_counter() - t0)
    return min(runs)


def sorted_rows(uri: Path, version: Optional[int] = None) -> pa.Table:
    ds = lance.dataset(str(uri), version=version)
    return ds.to_table().sort_by("id")


# --------------------------------------------------------------------------- #
# Referenced files
# --------------------------------------------------------------------------- #


def unreferenced(uri: Path) -> list[str]:
    """Files under data/, _deletions/, _transactions/, _indices/ and _versions/
    that no remaining version references (pylance for fragments and indices,
    the manifest itself, decoded by protoc, for the transaction file)."""
    ds = lance.dataset(str(uri))
    referenced: set[str] = set()
    index_dirs: set[str] = set()
    manifests: set[str] = {"_versions/latest_version_hint.json"}
    for v in ds.versions():
        n = v["version"]
        dv = lance.dataset(str(uri), version=n)
        for frag in dv.get_fragments():
            md = frag.metadata
            for df in md.files:
                referenced.add("data/" + df.path)
            if md.deletion_file is not None:
                referenced.add(md.deletion_file.path(md.id))
        for ix in dv.describe_indices():
            for seg in ix.segments:
                index_dirs.add(f"_indices/{seg.uuid}/")
        mpath = manifest_wire.manifest_path(uri, n)
        manifests.add("_versions/" + mpath.name)
        txn = manifest_wire.read_manifest_file(mpath)["manifest"].get("transaction_file")
        if txn and txn[0]:
            name = txn[0].decode() if isinstance(txn[0], bytes) else str(txn[0])
            referenced.add("_transactions/" + name)
    # pylance gives deletion paths absolute or relative depending on base_uri.
    root = str(uri).rstrip("/") + "/"
    referenced = {r[len(root):] if r.startswith(root) else r for r in referenced}
    left = []
    for top in ("data", "_deletions", "_transactions", "_indices", "_versions"):
        for p in sorted((uri / top).rglob("*")) if (uri / top).is_dir() else []:
            if p.is_dir():
                continue
            rel = p.relative_to(uri).as_posix()
            if top == "_versions":
                if rel not in manifests:
                    left.append(rel)
            elif top == "_indices":
                if not any(rel.startswith(d) for d in index_dirs):
                    left.append(rel)
            elif rel not in referenced:
                left.append(rel)
    return left


# --------------------------------------------------------------------------- #
# Write paths
# --------------------------------------------------------------------------- #


@dataclass
class WritePath:
    name: str
    args: Callable[[Path], list]
    commits: bool = True  # False: the latest version stays (cleanup, tag)


def write_paths(inputs: Path) -> list[WritePath]:
    new = inputs / "new.arrow"
    upsert = inputs / "upsert.arrow"
    return [
        WritePath("append", lambda u: ["write", u, "--input", new, "--mode", "append",
                                       "--max-rows-per-file", 20_000, "--quiet"]),
        WritePath("overwrite", lambda u: ["write", u, "--input", new, "--mode", "overwrite",
                                          "--max-rows-per-file", 20_000, "--quiet"]),
        WritePath("delete", lambda u: ["delete", u, "id % 3 = 0", "--quiet"]),
        WritePath("update", lambda u: ["update", u, "--set", "v = v + 1", "--where", "id % 2 = 0",
                                       "--quiet"]),
        WritePath("merge-insert", lambda u: ["merge-insert", u, "--on", "id", "--input", upsert,
                                             "--when-matched-update-all",
                                             "--when-not-matched-insert-all", "--quiet"]),
        WritePath("compaction", lambda u: ["compact", u, "--quiet"]),
        WritePath("index", lambda u: ["create-index", u, "v", "--type", "BTREE"]),
        WritePath("cleanup", lambda u: ["cleanup", u, "--older-than", "0", "--delete-unverified",
                                        "--quiet"], commits=False),
        WritePath("restore", lambda u: ["restore", u, RESTORE_TO]),
        WritePath("tag", lambda u: ["tag", u, "create", TAG, RESTORE_TO], commits=False),
    ]


PATH_NAMES = ["append", "overwrite", "delete", "update", "merge-insert", "compaction", "index",
              "cleanup", "restore", "tag"]


def build_base(work: Path) -> tuple[Path, Path]:
    """The base dataset and the directory of input files."""
    base = work / "base.lance"
    # A version per fragment: old manifests and transactions for cleanup.
    write_fragments(base, [FRAGMENT_ROWS] * FRAGMENTS, table, data_storage_version="2.1")
    ds = lance.dataset(str(base))
    ds.delete("id % 10 = 3")
    ds = lance.dataset(str(base))
    ds.update({"v": "v + 0.5"}, where="id % 10 = 5")
    ds = lance.dataset(str(base))
    ds.create_scalar_index("id", "BTREE")
    inputs = work / "inputs"
    inputs.mkdir()
    write_ipc(inputs / "new.arrow", table(1_000_000, 100_000))
    # Half the keys match existing rows, half are new.
    write_ipc(inputs / "upsert.arrow", table(BASE_ROWS - 20_000, 40_000))
    write_ipc(inputs / "next.arrow", table(5_000_000, NEXT_APPEND_ROWS))
    return base, inputs


# --------------------------------------------------------------------------- #
# The campaign
# --------------------------------------------------------------------------- #


@dataclass
class Outcome:
    name: str
    kills: int = 0
    completed: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    measured: float = 0.0
    startup: float = 0.0
    early: int = 0  # kills before the process could have started its work

    def line(self) -> str:
        return (f"{self.name:13s} kills {self.kills:4d}  completed {self.completed:4d}  "
                f"failures {len(self.failures):3d}  (run {self.measured * 1000:.0f} ms, "
                f"{self.early} kills within the {self.startup * 1000:.0f} ms process start, "
                f"{self.seconds:.1f} s)")


def check_after_kill(path: WritePath, uri: Path, inputs: Path,
                     states: dict[int, pa.Table], tag_expected: Optional[int]) -> None:
    ds = lance.dataset(str(uri))
    version = ds.version
    if version not in states:
        raise CheckFailed(f"pylance opens version {version}, expected one of {sorted(states)}")
    got = ds.to_table().sort_by("id")
    if not got.equals(states[version]):
        raise CheckFailed(f"pylance: version {version} has {got.num_rows} rows that are not "
                          f"that version's ({states[version].num_rows} rows)")
    listed = check_cpp("lance-cpp versions", "versions", uri).stdout.split()
    if not listed or listed[-3] != str(version):
        raise CheckFailed(f"lance-cpp's latest version is {listed[-3:]}, pylance's {version}")
    out = uri.parent / (uri.name + ".scan.arrow")
    check_cpp("lance-cpp scan", "scan", uri, "--out", out)
    cpp_rows = ipc.open_file(out).read_all().sort_by("id")
    out.unlink()
    if not cpp_rows.equals(got):
        raise CheckFailed(f"lance-cpp scan ({cpp_rows.num_rows} rows) and pylance "
                          f"({got.num_rows} rows) disagree at version {version}")
    if path.name == "tag":
        tags = {k: t["version"] for k, t in ds.tags.list().items()}
        if tags not in ({}, {TAG: tag_expected}):
            raise CheckFailed(f"pylance tags after a killed tag create: {tags}")
        listed = check_cpp("lance-cpp tag list", "tag", uri, "list").stdout.split()
        if (TAG in listed) != (TAG in tags):
            raise CheckFailed(f"lance-cpp tag list {listed!r}, pylance {tags}")
    check_cpp("verify", "verify", uri, "--quiet")
    # The next commit works on whatever survived.
    check_cpp("next append", "write", uri, "--input", inputs / "next.arrow",
              "--mode", "append", "--quiet")
    ds = lance.dataset(str(uri))
    if ds.version != version + 1 or ds.count_rows() != got.num_rows + NEXT_APPEND_ROWS:
        raise CheckFailed(f"next append: version {ds.version} with {ds.count_rows()} rows, "
                          f"expected {version + 1} with {got.num_rows + NEXT_APPEND_ROWS}")
    check_cpp("cleanup", "cleanup", uri, "--older-than", "0", "--delete-unverified", "--quiet")
    left = unreferenced(uri)
    if left:
        raise CheckFailed(f"cleanup left {len(left)} unreferenced files: {left[:8]}")
    check_cpp("verify after cleanup", "verify", uri, "--quiet")
    if lance.dataset(str(uri)).count_rows() != got.num_rows + NEXT_APPEND_ROWS:
        raise CheckFailed("rows changed by cleanup")


def run_path(name: str, kills: int, seed: int, work: Path, base: Path, inputs: Path,
             keep_dir: Optional[Path] = None, max_attempts: Optional[int] = None,
             log: Callable[[str], None] = lambda s: None) -> Outcome:
    """Kills `name` until `kills` runs were cut short (or max_attempts tried,
    default 4 x kills), checking the dataset after each."""
    path = next(p for p in write_paths(inputs) if p.name == name)
    out = Outcome(name)
    started = time.perf_counter()
    base_version = lance.dataset(str(base)).version
    before = sorted_rows(base)
    # Whole runs: how long the command takes (the fastest of three, as a
    # first run's cold caches would put most kill points after the exit),
    # and the versions it commits.
    runs = []
    for i in range(3):
        probe = work / f"probe-{name}-{i}.lance"
        shutil.copytree(base, probe)
        t0 = time.perf_counter()
        check_cpp("uninterrupted run", *path.args(probe))
        runs.append(time.perf_counter() - t0)
        if i < 2:
            shutil.rmtree(probe)
    out.measured = min(runs)
    out.startup = startup_time()
    # Every version the whole run committed is a valid end state: compaction
    # commits ReserveFragments, then Rewrite, as pylance does.
    states = {base_version: before}
    for v in range(base_version + 1, lance.dataset(str(probe)).version + 1):
        states[v] = sorted_rows(probe, v)
    if path.commits != (len(states) > 1):
        raise CheckFailed(f"the whole run left versions {sorted(states)}")
    tag_expected = RESTORE_TO if name == "tag" else None
    shutil.rmtree(probe)

    rng = random.Random(seed)
    attempts = max_attempts if max_attempts is not None else 4 * kills
    for k in range(attempts):
        # Past a few failures the rest say nothing new (or the binary is gone).
        if out.kills >= kills or len(out.failures) >= MAX_FAILURES_PER_PATH:
            break
        uri = work / f"{name}-{k}.lance"
        shutil.copytree(base, uri)
        # Most kills after the process start (before it, no command has
        # done anything yet), some during it.
        low = 0.0 if rng.random() < 0.2 else min(out.startup * 0.9, out.measured)
        delay = rng.uniform(low, out.measured * 1.2)
        alive = None
        try:
            alive = killed_run(cpp(*path.args(uri)), delay)
            out.kills += alive
            out.early += alive and delay < out.startup
            out.completed += not alive
            check_after_kill(path, uri, inputs, states, tag_expected)
        except Exception as exc:  # pylance and protoc errors are failures too
            what = {None: "no kill outcome", True: "killed", False: "completed"}[alive]
            msg = (f"{name} attempt {k} (seed {seed}, delay {delay * 1000:.1f} ms, {what}): "
                   f"{type(exc).__name__}: {exc}\n  command: {' '.join(cpp(*path.args(uri)))}")
            if keep_dir is not None:
                kept = keep_dir / uri.name
                shutil.copytree(uri, kept, dirs_exist_ok=True)
                msg += f"\n  dataset kept at {kept} (after the checks ran on it)"
            out.failures.append(msg)
            log("FAIL " + msg)
        shutil.rmtree(uri, ignore_errors=True)
    out.seconds = time.perf_counter() - started
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills-per-path", type=int, default=100)
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--paths", default=",".join(PATH_NAMES),
                    help="comma-separated subset of " + ",".join(PATH_NAMES))
    ap.add_argument("--keep-dir", type=Path, default=None,
                    help="where failing datasets are copied (default: a new temporary directory)")
    args = ap.parse_args(argv)
    names = [n for n in args.paths.split(",") if n]
    unknown_names = set(names) - set(PATH_NAMES)
    if unknown_names:
        ap.error(f"unknown write paths: {sorted(unknown_names)}")
    if not os.access(lance_cpp_binary(), os.X_OK):
        ap.error(f"lance-cpp binary not found: {lance_cpp_binary()} (set LANCE_CPP_BIN)")
    keep_dir = args.keep_dir or Path(tempfile.mkdtemp(prefix="lance-crash-failures-"))
    started = time.perf_counter()
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="lance-crash-") as tmp:
        work = Path(tmp)
        base, inputs = build_base(work)
        for i, name in enumerate(names):
            o = run_path(name, args.kills_per_path, args.seed * 1000 + i, work, base, inputs,
                         keep_dir=keep_dir, log=lambda s: print(s, flush=True))
            print(o.line(), flush=True)
            outcomes.append(o)
    kills = sum(o.kills for o in outcomes)
    early = sum(o.early for o in outcomes)
    completed = sum(o.completed for o in outcomes)
    failures = sum(len(o.failures) for o in outcomes)
    short = [o.name for o in outcomes if o.kills < args.kills_per_path]
    print(f"total         kills {kills:4d}  completed {completed:4d}  failures {failures:3d}  "
          f"({early} kills within the process start, {time.perf_counter() - started:.0f} s, "
          f"seed {args.seed})")
    if short:
        print(f"too few kills landed (< {args.kills_per_path}) for: {', '.join(short)}")
    if failures:
        print(f"FAILURE: {failures} checks failed; datasets kept in {keep_dir}")
    else:
        shutil.rmtree(keep_dir, ignore_errors=True) if args.keep_dir is None else None
    return 1 if failures or short else 0


if __name__ == "__main__":
    sys.exit(main())
