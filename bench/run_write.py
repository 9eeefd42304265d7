"""Side-by-side write benchmarks: lance-cpp (bench/lance_bench.cc) and the
pinned pylance on the same data in the same run, reported as ratios.

    .venv/bin/python bench/run_write.py [--rows N] [--dim D] [--versions 2.0,2.1,2.2] [--repeat R]

Measures, per file version: creating a dataset from an in-memory table
(rows/s and MB/s of Arrow data), and deleting, updating and merge-inserting
1% of its rows (each run on a fresh copy of the same pylance-written
dataset). Ratios > 1 mean lance-cpp is faster. Both sides run in one warm
process per file version (lance-bench `serve`, and this interpreter), so
neither pays process start-up in its times; the best of --repeat runs is
reported. Numbers are measurements, never assertions."""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

import lance

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import REPO, make_table  # noqa: E402

WHERE = "id % 100 = 7"   # 1% of the rows, spread over every fragment


def write_ipc(table: pa.Table, path: Path):
    with ipc.new_file(path, table.schema) as w:
        w.write_table(table)


def best_of(repeat: int, prepare, run) -> float:
    """Smallest time of `run` over `repeat` runs, each after an untimed `prepare`."""
    best = float("inf")
    for _ in range(repeat):
        prepare()
        t = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t)
    return best


class CppServer:
    """A long-lived lance-bench `serve` process: one command, one report."""

    def __init__(self, binary: Path):
        self.proc = subprocess.Popen([str(binary), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)

    def run(self, args: list[str]) -> dict:
        self.proc.stdin.write("\t".join(args) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"lance-bench serve stopped (exit code {self.proc.wait()}) on {args}")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--versions", default="2.0,2.1,2.2")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--binary", default=str(REPO / "build" / "bin" / "lance-bench"))
    args = ap.parse_args()
    binary = Path(args.binary)
    if not binary.exists():
        print(f"missing {binary}: run `make` first", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="lance-bench-write-"))
    try:
        table = make_table(args.rows, args.dim)
        mib = table.nbytes / 2**20
        src = tmp / "input.arrow"
        write_ipc(table, src)
        # Merge-insert source: 1% of the rows, half of them existing ids
        # (updated) and half new ids (inserted).
        k = args.rows // 100
        upd = table.take(np.arange(7, args.rows, 200)[: k // 2])
        new = make_table(k - upd.num_rows, args.dim, seed=9)
        new = new.set_column(0, "id", pa.array(np.arange(args.rows, args.rows + new.num_rows, dtype=np.int64)))
        source = pa.concat_tables([upd, new])
        source_file = tmp / "source.arrow"
        write_ipc(source, source_file)
        print(f"# {args.rows} rows, {table.num_columns} columns incl. {args.dim}-dim float32 vectors, "
              f"{mib:.0f} MiB in memory; modify ops touch 1% ({k} rows)")
        print(f"{'version':8} {'measure':26} {'lance-cpp':>12} {'pylance':>12} {'ratio':>8}")
        for version in args.versions.split(","):
            out = tmp / f"w{version}.lance"
            clear = lambda: shutil.rmtree(out, ignore_errors=True)  # noqa: E731
            server = CppServer(binary)
            cpp_times, peak = [], 0
            for _ in range(args.repeat):
                clear()
                r = server.run(["write", str(out), "--input", str(src), "--version", version])
                cpp_times.append(r["seconds"])
                peak = max(peak, r["peak_rss_kib"])
            cpp_s = min(cpp_times)
            py_s = best_of(args.repeat, clear, lambda: lance.write_dataset(table, out, data_storage_version=version))
            print(f"{version:8} {'write rows/s':26} {args.rows / cpp_s:12.0f} {args.rows / py_s:12.0f} "
                  f"{py_s / cpp_s:8.2f}")
            print(f"{version:8} {'write MB/s':26} {table.nbytes / 1e6 / cpp_s:12.1f} {table.nbytes / 1e6 / py_s:12.1f} "
                  f"{py_s / cpp_s:8.2f}")
            print(f"{version:8} {'write peak RSS MiB (-input)':26} {peak / 1024 - mib:12.0f} {'-':>12} {'':>8}")
            base = tmp / f"base{version}.lance"
            lance.write_dataset(table, base, data_storage_version=version)
            work = tmp / f"work{version}.lance"

            def fresh():
                shutil.rmtree(work, ignore_errors=True)
                shutil.copytree(base, work)

            ops = {
                "delete 1% (ms)": (["delete", str(work), "--where", WHERE],
                                   lambda: lance.dataset(work).delete(WHERE)),
                "update 1% (ms)": (["update", str(work), "--set", "i32=i32 + 1", "--where", WHERE],
                                   lambda: lance.dataset(work).update({"i32": "i32 + 1"}, where=WHERE)),
                "merge-insert 1% (ms)": (["merge-insert", str(work), "--input", str(source_file), "--on", "id"],
                                         lambda: lance.dataset(work).merge_insert("id").when_matched_update_all()
                                         .when_not_matched_insert_all().execute(source)),
            }
            for name, (cpp_args, py_op) in ops.items():
                cpp_times = []
                for _ in range(args.repeat):
                    fresh()
                    cpp_times.append(server.run(cpp_args)["seconds"])
                cpp_s = min(cpp_times)
                py_s = best_of(args.repeat, fresh, py_op)
                print(f"{version:8} {name:26} {cpp_s * 1e3:12.1f} {py_s * 1e3:12.1f} {py_s / cpp_s:8.2f}", flush=True)
            server.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
