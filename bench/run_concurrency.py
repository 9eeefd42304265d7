"""Concurrent-writer benchmark: commits per second with 1, 2, 4 and 8 writers
started together from a file barrier, lance-cpp (bench/lance_bench.cc, mode
`loop`) and the pinned pylance in the same run on the same data.

    .venv/bin/python bench/run_concurrency.py [--writers 1,2,4,8] [--commits N] [--rows R] [--batch B]

Two workloads, each on a fresh copy of one pylance-written dataset of a
single fragment of R rows per side and writer count:
  append  every writer appends N small batches (B rows, ids of its own);
  delete  every writer deletes N different rows of the one fragment
          (`id = X`, one commit each).

Both sides are measured the same way: one long-lived process per writer
(lance-bench, or a Python interpreter with lance imported), everything slow
(interpreter start, imports, reading the input) done before the barrier; each
writer then runs its N commits in a loop, each commit opening the latest
version as a new user's call would (`lance.dataset(uri).delete(...)`,
`lance.write_dataset(..., mode="append")`, lance::DeleteRows /
lance::WriteDataset). commits/s = all commits / (last commit's end - release
of the barrier), the median of --rounds runs per side (sides alternating, so
both see the same moments of a shared machine's load). Ratios > 1 mean
lance-cpp is faster.

Afterwards every run is checked with pylance: one version per commit, the
row count, every appended id exactly once, every deleted id gone and every
other row kept. A failed commit, a lost or a doubled effect is printed as
FAILURE and makes the run exit with status 1. Numbers are measurements,
never assertions of speed."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

REPO = Path(__file__).resolve().parent.parent
READY_TIMEOUT_S = 120
RUN_TIMEOUT_S = 600


def worker(op: str, uri: str, arg: str, ready: str, go: str) -> int:
    """The pylance writer: the same loop as lance-bench's `loop` mode."""
    os.environ.setdefault("LANCE_LOG", "error")
    import lance
    if op == "append":
        with pa.memory_map(arg) as f:
            batches = list(ipc.open_file(f).read_all().to_batches())
        work = [pa.Table.from_batches([b]) for b in batches]
    else:
        work = arg.split(",")
    Path(ready).write_text("ready")
    deadline = time.monotonic() + 60
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            print(json.dumps({"ok": False, "error": "barrier timed out"}), flush=True)
            return 1
        time.sleep(0.0005)
    for item in work:
        start = time.time()
        rec = {"ok": True}
        try:
            if op == "append":
                lance.write_dataset(item, uri, mode="append")
            else:
                lance.dataset(uri).delete(f"id = {item}")
        except Exception as e:  # noqa: BLE001 - reported by the driver
            rec = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        rec.update(start=start, end=time.time())
        print(json.dumps(rec), flush=True)
    return 0


def write_ipc(table: pa.Table, path: Path, max_chunksize: int | None = None) -> Path:
    with ipc.new_file(path, table.schema) as w:
        w.write_table(table, max_chunksize=max_chunksize)
    return path


def base_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(0)
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "value": pa.array(rng.random(rows)),
        "name": pa.array([f"name-{i}" for i in range(rows)]),
    })


def run_writers(side: str, binary: Path, op: str, uri: Path, args: list[str], run_dir: Path) -> tuple[float, list]:
    """Starts one writer per entry of `args`, releases them together and
    returns (seconds from release to the last commit's end, per-commit records)."""
    run_dir.mkdir(parents=True)
    go = run_dir / "go"
    procs = []
    for i, arg in enumerate(args):
        ready = run_dir / f"ready-{i}"
        if side == "cpp":
            flag = "--input" if op == "append" else "--ids"
            cmd = [str(binary), "loop", str(uri), "--op", op, flag, arg, "--ready", str(ready), "--go", str(go)]
        else:
            cmd = [sys.executable, __file__, "--worker", op, str(uri), arg, str(ready), str(go)]
        procs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=dict(os.environ, LANCE_LOG="error")))
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not all((run_dir / f"ready-{i}").exists() for i in range(len(args))):
            bad = [p for p in procs if p.poll() not in (None, 0)]
            if bad or time.monotonic() > deadline:
                raise RuntimeError("writers did not get ready: " + "; ".join(p.stderr.read() for p in bad))
            time.sleep(0.005)
        released = time.time()
        go.write_text("go")
        outs = [p.communicate(timeout=RUN_TIMEOUT_S) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    records = []
    for i, (out, err) in enumerate(outs):
        recs = [json.loads(line) for line in out.splitlines() if line.strip()]
        if procs[i].returncode != 0:
            recs.append({"ok": False, "error": f"writer exited {procs[i].returncode}: {err.strip()}"})
        records.append(recs)
    ends = [r["end"] for recs in records for r in recs if "end" in r]
    return (max(ends) - released if ends else float("nan")), records


def check(op: str, uri: Path, rows: int, expected_commits: int, touched: list[int], records: list) -> list[str]:
    """What went wrong: failed commits, lost or doubled effects."""
    import lance
    problems = []
    failed = [r for recs in records for r in recs if not r.get("ok")]
    for r in failed[:5]:
        problems.append(f"failed commit: {r.get('error')}")
    if len(failed) > 5:
        problems.append(f"... {len(failed) - 5} more failed commits")
    ok = sum(1 for recs in records for r in recs if r.get("ok"))
    if ok + len(failed) != expected_commits:
        problems.append(f"{ok + len(failed)} commit outcomes reported, {expected_commits} expected")
    ds = lance.dataset(str(uri))
    versions = len(ds.versions())
    if versions != 1 + ok:
        problems.append(f"{versions} versions for {ok} successful commits (expected {1 + ok})")
    ids = ds.to_table(columns=["id"])["id"].to_numpy()
    uniq, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        problems.append(f"DOUBLED: {int((counts > 1).sum())} ids present more than once, e.g. {uniq[counts > 1][:5]}")
    present = set(uniq.tolist())
    if op == "append":
        missing = [i for i in range(rows) if i not in present] + [i for i in touched if i not in present]
        if missing:
            problems.append(f"LOST: {len(missing)} rows missing, e.g. {missing[:5]}")
        extra = len(present) - rows - len(touched)
        if extra > 0:
            problems.append(f"{extra} unexpected rows")
    else:
        still = [i for i in touched if i in present]
        if still:
            problems.append(f"LOST: {len(still)} deleted rows still present, e.g. {still[:5]}")
        gone = rows - len(touched) - (len(present) - len(still))
        if gone > 0:
            problems.append(f"{gone} rows gone that no writer deleted")
        if len(ds.get_fragments()) != 1:
            problems.append(f"{len(ds.get_fragments())} fragments, expected 1")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--writers", default="1,2,4,8")
    ap.add_argument("--commits", type=int, default=8, help="commits per writer")
    ap.add_argument("--rows", type=int, default=10_000, help="rows of the one fragment")
    ap.add_argument("--batch", type=int, default=100, help="rows per appended batch")
    ap.add_argument("--ops", default="append,delete")
    ap.add_argument("--rounds", type=int, default=3,
                    help="runs per side and writer count, alternating sides; the median rate is reported")
    ap.add_argument("--binary", default=str(REPO / "build" / "bin" / "lance-bench"))
    ap.add_argument("--worker", nargs=5, metavar=("OP", "URI", "ARG", "READY", "GO"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(*args.worker)
    import lance
    binary = Path(args.binary)
    if not binary.exists():
        print(f"missing {binary}: run `make` first", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="lance-bench-conc-"))
    failures = 0
    try:
        base = tmp / "base.lance"
        lance.write_dataset(base_table(args.rows), base)
        print(f"# one fragment of {args.rows} rows; {args.commits} commits per writer; appends of {args.batch} "
              f"rows; one long-lived process per writer on both sides (start-up before the barrier)")
        print(f"{'op':7} {'writers':>7} {'lance-cpp c/s':>14} {'pylance c/s':>12} {'ratio':>7}  check")
        for op in args.ops.split(","):
            for w in (int(x) for x in args.writers.split(",")):
                rates, notes = {"cpp": [], "py": []}, []
                for rnd, side in ((r, s) for r in range(args.rounds) for s in ("cpp", "py")):
                    uri = tmp / f"{op}-{w}-{side}.lance"
                    shutil.copytree(base, uri)
                    run_dir = tmp / f"run-{op}-{w}-{side}-{rnd}"
                    work_args, touched = [], []
                    for k in range(w):
                        if op == "append":
                            first = args.rows + k * args.commits * args.batch
                            ids = np.arange(first, first + args.commits * args.batch, dtype=np.int64)
                            t = base_table(len(ids)).set_column(0, "id", pa.array(ids))
                            (tmp / "inputs").mkdir(exist_ok=True)
                            path = write_ipc(t, tmp / "inputs" / f"{op}-{w}-{side}-{k}.arrow", args.batch)
                            work_args.append(str(path))
                            touched += ids.tolist()
                        else:
                            # Different rows of the one fragment, interleaved
                            # between writers and spread over it.
                            step = max(1, args.rows // (w * args.commits))
                            ids = [(j * w + k) * step for j in range(args.commits)]
                            work_args.append(",".join(map(str, ids)))
                            touched += ids
                    secs, records = run_writers(side, binary, op, uri, work_args, run_dir)
                    problems = check(op, uri, args.rows, w * args.commits, touched, records)
                    ok = sum(1 for recs in records for r in recs if r.get("ok"))
                    rates[side].append(ok / secs)
                    for p in problems:
                        notes.append(f"{'lance-cpp' if side == 'cpp' else 'pylance'} (round {rnd + 1}): {p}")
                    shutil.rmtree(uri, ignore_errors=True)
                failures += bool(notes)
                verdict = "ok" if not notes else "FAILURE"
                cpp, py = float(np.median(rates["cpp"])), float(np.median(rates["py"]))
                print(f"{op:7} {w:7d} {cpp:14.1f} {py:12.1f} {cpp / py:7.2f}  "
                      f"{verdict}", flush=True)
                for n in notes:
                    print(f"    FAILURE {n}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"FAILURE: {failures} runs lost, doubled or failed commits (see above)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
