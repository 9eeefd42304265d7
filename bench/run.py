"""Side-by-side read benchmarks: lance-cpp (bench/lance_bench.cc) and the
pinned pylance on the same datasets in the same run, reported as ratios.

    .venv/bin/python bench/run.py [--rows N] [--dim D] [--versions 2.0,2.1,2.2] [--repeat R] [--take-repeat T]

Ratios > 1 mean lance-cpp is faster (scan rows/s) or quicker (take latency).
Scans report the best of --repeat runs; takes the median of --take-repeat takes of
fresh random rows (the same rows on both sides) after one untimed warm-up,
with the pages of those rows in the OS page cache for both sides.
Numbers are measurements, never assertions."""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

import lance

REPO = Path(__file__).resolve().parent.parent


def make_table(rows: int, dim: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "i32": pa.array(rng.integers(0, 1 << 20, rows, dtype=np.int32)),
        "f64": pa.array(rng.random(rows)),
        "flag": pa.array(rng.random(rows) < 0.5),
        "name": pa.array([f"name-{i % 5000}" for i in range(rows)]),
        "text": pa.array([f"row {i} " * int(i % 7) for i in range(rows)]),
        "tags": pa.array([[i % 10, i % 7] for i in range(rows)], pa.list_(pa.int32())),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(rows * dim, dtype=np.float32)), dim),
    })


def time_it(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def median_time(fn, inputs: list) -> float:
    """Median seconds of fn(x) over inputs[1:]; inputs[0] is an untimed warm-up."""
    fn(inputs[0])
    times = []
    for x in inputs[1:]:
        t = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run_cpp(binary: Path, args: list[str]) -> list[dict]:
    proc = subprocess.run([str(binary)] + args, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--versions", default="2.0,2.1,2.2")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--take-repeat", type=int, default=9,
                    help="timed takes per size (each of fresh rows); the median is reported")
    ap.add_argument("--binary", default=str(REPO / "build" / "bin" / "lance-bench"))
    args = ap.parse_args()
    binary = Path(args.binary)
    if not binary.exists():
        print(f"missing {binary}: run `make` first", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="lance-bench-"))
    try:
        table = make_table(args.rows, args.dim)
        print(f"# {args.rows} rows, {table.num_columns} columns incl. {args.dim}-dim float32 vectors, "
              f"{table.nbytes / 2**20:.0f} MiB in memory")
        print(f"{'version':8} {'measure':24} {'lance-cpp':>12} {'pylance':>12} {'ratio':>8}")
        for version in args.versions.split(","):
            uri = tmp / f"v{version}.lance"
            lance.write_dataset(table, uri, data_storage_version=version)
            ds = lance.dataset(str(uri))
            # Full scan, all columns.
            cpp = run_cpp(binary, ["scan", str(uri), "--repeat", str(args.repeat)])
            cpp_s = min(r["seconds"] for r in cpp)
            py_s = time_it(lambda: ds.to_table(), args.repeat)
            print(f"{version:8} {'scan rows/s':24} {args.rows / cpp_s:12.0f} {args.rows / py_s:12.0f} "
                  f"{py_s / cpp_s:8.2f}")
            # (pylance's own peak is not comparable here: its process also built the data.)
            print(f"{version:8} {'scan peak RSS MiB':24} {max(r['peak_rss_kib'] for r in cpp) / 1024:12.0f} "
                  f"{'-':>12} {'':>8}")
            # Takes of 1, 100, 10k random rows: a fresh set of rows per
            # repeat (the same sets, in the same order, on both sides), one
            # untimed warm-up take first on each side (thread pools, first
            # touch of memory, pylance's file-metadata cache), then the
            # median of the timed takes. Before either side is timed, every
            # set is taken once untimed, so the pages of those rows are in
            # the OS page cache for both: on a shared machine the cache
            # does not hold the whole dataset, and whichever side ran first
            # would otherwise pay the cold reads.
            rng = np.random.default_rng(1)
            for n in (1, 100, 10_000):
                sets = [rng.integers(0, args.rows, n).tolist() for _ in range(args.take_repeat + 1)]
                for s in sets:
                    ds.take(s)
                f = tmp / f"idx-{n}.txt"
                f.write_text("\n".join(" ".join(map(str, s)) for s in sets) + "\n")
                cpp = run_cpp(binary, ["take", str(uri), "--indices-file", str(f)])
                cpp_s = statistics.median(r["seconds"] for r in cpp[1:])
                py_s = median_time(lambda s: ds.take(s), sets)
                print(f"{version:8} {f'take {n} rows (ms)':24} {cpp_s * 1e3:12.2f} {py_s * 1e3:12.2f} "
                      f"{py_s / cpp_s:8.2f}", flush=True)
            # Each version's copy is ~3 GiB at 1M rows: gone before the next.
            del ds
            shutil.rmtree(uri, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
