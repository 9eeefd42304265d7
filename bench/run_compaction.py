"""Side-by-side compaction benchmark: `lance-cpp compact` and the pinned
pylance's `optimize.compact_files` on copies of the same dataset in the same
run, reported as ratios.

    .venv/bin/python bench/run_compaction.py [--fragments N] [--fragment-rows R]
        [--dim D] [--versions 2.1] [--repeat R]

The dataset is written by pylance as many small fragments, then 20% of its
rows are deleted (every fifth id, so every fragment has deletions). Both
sides compact it with their defaults; the script checks first that both
plan the same tasks, and after each run that both give the same rows in the
same order. Each side runs in a child process (of a small launcher) so
that its peak RSS (ru_maxrss) is its own. lance-cpp's time is its whole process; pylance's is
measured inside its child around `compact_files` (its import and process
start are not counted), and so is its CPU time; CPU seconds are less
sensitive than wall time to a loaded machine. Ratios > 1 mean lance-cpp is better. Numbers are
measurements, never assertions.

Larger datasets come from the same options: `--fragments 1250 --fragment-rows 1000 --dim 1024`
writes about 5 GB (the table is built in memory first; the results are compared a batch at a
time), for issue 13's bound of 300 MiB compacting 5 GB; `--repeat 1` keeps it to one run."""
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

import pyarrow as pa

import lance

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import REPO, make_table  # noqa: E402

DELETE = "id % 5 = 0"  # 20% of the rows, in every fragment

# The pylance side, run in a child: prints its compaction seconds and metrics.
PY_CHILD = """
import json, resource, sys, time
import lance
ds = lance.dataset(sys.argv[1])
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
base = hwm()  # the interpreter, pyarrow and lance loaded, the dataset open
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
t, c = time.perf_counter(), cpu()
m = ds.optimize.compact_files()
print(json.dumps({"seconds": time.perf_counter() - t, "cpu_s": cpu() - c, "base_rss_kib": base,
                  "fragments_removed": m.fragments_removed, "fragments_added": m.fragments_added}))
"""


# Runs argv[1:] as its own child and prints that child's ru_maxrss (KiB) on
# stderr's last line. Linux carries a process's peak RSS across exec, so a
# child forked straight from this (large) benchmark process would report
# the benchmark's own RSS; forked from this small launcher it reports its own.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write(f"\\nmaxrss_kib {usage.ru_maxrss} cpu_s {usage.ru_utime + usage.ru_stime}\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def measured(argv: list[str]) -> tuple[float, int, float, str]:
    """Wall seconds, peak RSS (KiB), CPU seconds of the process itself, and its stdout."""
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-S", "-c", LAUNCHER] + argv, capture_output=True, text=True)
    secs = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} ... failed ({proc.returncode}): {proc.stderr.strip()}")
    last = proc.stderr.strip().splitlines()[-1].split()
    return secs, int(last[1]), float(last[3]), proc.stdout


def same_rows(a: lance.LanceDataset, b: lance.LanceDataset) -> bool:
    """Whether both datasets hold the same rows in the same order, compared a
    batch at a time (a large run's tables need not fit in memory)."""
    if a.count_rows() != b.count_rows():
        return False
    left, right = a.to_batches(), b.to_batches()
    x = y = None
    while True:
        if x is None or x.num_rows == 0:
            x = next(left, None)
        if y is None or y.num_rows == 0:
            y = next(right, None)
        if x is None or y is None:
            return x is None and y is None
        n = min(x.num_rows, y.num_rows)
        if n and not x.slice(0, n).equals(y.slice(0, n)):
            return False
        x, y = x.slice(n), y.slice(n)


def plan_of_pylance(uri: Path) -> list[list[int]]:
    from lance.optimize import Compaction
    plan = Compaction.plan(lance.dataset(uri), {})
    return [[f.id for f in t.fragments] for t in plan.tasks]


def plan_of_cpp(cli: Path, uri: Path) -> list[list[int]]:
    out = subprocess.run([str(cli), "compact", str(uri), "--plan", "--json"], capture_output=True, text=True,
                         check=True).stdout
    return [t["fragment_ids"] for t in json.loads(out)["tasks"]]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fragments", type=int, default=400, help="small fragments written")
    ap.add_argument("--fragment-rows", type=int, default=1000, help="rows per small fragment")
    ap.add_argument("--dim", type=int, default=32, help="float32 vector width")
    ap.add_argument("--versions", default="2.1")
    ap.add_argument("--repeat", type=int, default=3, help="runs per side; the best time and the largest RSS")
    ap.add_argument("--binary", default=str(REPO / "build" / "bin" / "lance-cpp"))
    args = ap.parse_args()
    cli = Path(args.binary)
    if not cli.exists():
        print(f"missing {cli}: run `make` first", file=sys.stderr)
        return 2
    rows = args.fragments * args.fragment_rows
    tmp = Path(tempfile.mkdtemp(prefix="lance-bench-compact-"))
    try:
        table = make_table(rows, args.dim)
        live = rows - rows // 5
        print(f"# {args.fragments} fragments x {args.fragment_rows} rows = {rows} rows, "
              f"{table.num_columns} columns incl. {args.dim}-dim float32 vectors, "
              f"{table.nbytes / 2**20:.0f} MiB in memory; 20% deleted, {live} live rows compacted")
        print(f"# load: {os.getloadavg()[0]:.1f} (1-min average, {os.cpu_count()} cores)")
        print(f"{'version':8} {'measure':26} {'lance-cpp':>12} {'pylance':>12} {'ratio':>8}")
        for version in args.versions.split(","):
            base = tmp / f"base{version}.lance"
            lance.write_dataset(table, base, data_storage_version=version, max_rows_per_file=args.fragment_rows)
            lance.dataset(base).delete(DELETE)
            cpp_plan, py_plan = plan_of_cpp(cli, base), plan_of_pylance(base)
            if cpp_plan != py_plan:
                print(f"{version:8} plans differ: lance-cpp {len(cpp_plan)} tasks, pylance {len(py_plan)}")
                return 1
            work_c, work_p = tmp / f"c{version}.lance", tmp / f"p{version}.lance"
            cpp_s = py_s = cpp_cpu = py_cpu = float("inf")
            cpp_rss = py_rss = py_base = 0
            for _ in range(args.repeat):
                for w in (work_c, work_p):
                    shutil.rmtree(w, ignore_errors=True)
                    shutil.copytree(base, w)
                secs, rss, cpu, _ = measured([str(cli), "compact", str(work_c), "--quiet"])
                cpp_s, cpp_rss, cpp_cpu = min(cpp_s, secs), max(cpp_rss, rss), min(cpp_cpu, cpu)
                _, rss, _, out = measured([sys.executable, "-c", PY_CHILD, str(work_p)])
                py_cpu = min(py_cpu, json.loads(out)["cpu_s"])
                py_s, py_rss = min(py_s, json.loads(out)["seconds"]), max(py_rss, rss)
                py_base = max(py_base, json.loads(out)["base_rss_kib"])
                a = lance.dataset(work_c)
                b = lance.dataset(work_p)
                if len(a.get_fragments()) != len(b.get_fragments()) or not same_rows(a, b):
                    print(f"{version:8} results differ between lance-cpp and pylance")
                    return 1
            print(f"{version:8} {'compaction rows/s':26} {live / cpp_s:12.0f} {live / py_s:12.0f} "
                  f"{py_s / cpp_s:8.2f}")
            print(f"{version:8} {'CPU seconds (user+sys)':26} {cpp_cpu:12.2f} {py_cpu:12.2f} "
                  f"{py_cpu / cpp_cpu:8.2f}")
            print(f"{version:8} {'peak RSS MiB':26} {cpp_rss / 1024:12.0f} {py_rss / 1024:12.0f} "
                  f"{py_rss / max(cpp_rss, 1):8.2f}")
            print(f"{version:8} {'(pylance before compacting)':26} {'':>12} {py_base / 1024:12.0f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
