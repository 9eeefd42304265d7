"""Side-by-side scalar index benchmarks: lance-cpp (bench/lance_bench.cc,
`filter` mode) and the pinned pylance on the same dataset and the same
indices in the same run, reported as ratios.

    .venv/bin/python bench/run_index.py [--rows N] [--versions 2.0,2.1] [--repeat R]

Measures index build time (lance-cpp's CLI on a copy of the dataset, its
process start included, against pylance's create_scalar_index on another
copy; the median of three builds each), then
filtered-scan latency (projection `id`) through a BTREE index
(point lookup, narrow range, IN list) and a BITMAP index (equality), with the
indices pylance builds, and the same filters with no index. Each query is a
fresh value, the same on both sides, run alternately (ours, then pylance's)
after one untimed warm-up; the median is reported. Ratios > 1 mean lance-cpp
is quicker. Numbers are measurements, never assertions."""
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


def make_table(rows: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "i32": pa.array(rng.integers(0, 1 << 20, rows, dtype=np.int32)),
        "name": pa.array([f"name-{i % 5000}" for i in range(rows)]),
        "f64": pa.array(rng.random(rows)),
    })


class LineServer:
    """One lance-bench process answering a request per stdin line (`filter`
    mode: a SQL filter; `fts` mode: a full-text query) with a JSON line of
    its seconds and rows."""

    def __init__(self, args: list[str]):
        self.mode = args[1]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, request: str) -> tuple[float, int]:
        self.proc.stdin.write(request + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"lance-bench {self.mode} stopped (exit code {self.proc.wait()})")
        out = json.loads(line)
        return out["seconds"], out["rows"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def CppFilters(binary: Path, uri: Path, use_index: bool) -> LineServer:
    """lance-bench answering filters (projection `id`)."""
    args = [str(binary), "filter", str(uri), "--columns", "id"]
    if not use_index:
        args += ["--no-index", "1"]
    return LineServer(args)


def measure(cpp: LineServer, ds, queries: list[str], use_index: bool) -> tuple[float, float]:
    """Median seconds of lance-cpp and pylance over `queries` (the first one
    an untimed warm-up); both sides must return the same number of rows."""
    cpp_times, py_times = [], []
    for q in queries:
        cpp_s, cpp_rows = cpp.run(q)
        t = time.perf_counter()
        py_rows = ds.to_table(columns=["id"], filter=q, use_scalar_index=use_index).num_rows
        py_s = time.perf_counter() - t
        if cpp_rows != py_rows:
            raise RuntimeError(f"{q!r}: lance-cpp returned {cpp_rows} rows, pylance {py_rows}")
        cpp_times.append(cpp_s)
        py_times.append(py_s)
    return statistics.median(cpp_times[1:]), statistics.median(py_times[1:])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--versions", default="2.0,2.1")
    ap.add_argument("--repeat", type=int, default=15, help="timed queries per measure")
    ap.add_argument("--binary", default=str(REPO / "build" / "bin" / "lance-bench"))
    args = ap.parse_args()
    binary = Path(args.binary)
    cli = binary.parent / "lance-cpp"
    if not binary.exists() or not cli.exists():
        print(f"missing {binary} or {cli}: run `make` first", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="lance-bench-index-"))
    try:
        table = make_table(args.rows)
        i32 = table.column("i32").to_numpy()
        print(f"# {args.rows} rows; BTREE on i32 (random in [0, 2^20)), BITMAP on name (5000 values)")
        print(f"{'version':8} {'measure':32} {'lance-cpp':>12} {'pylance':>12} {'ratio':>8}")
        rng = np.random.default_rng(7)
        for version in args.versions.split(","):
            uri = tmp / f"v{version}.lance"
            lance.write_dataset(table, uri, data_storage_version=version)
            ds = lance.dataset(str(uri))
            # Index builds, each side on fresh copies of the dataset, the
            # median of three: lance-cpp's CLI (its process start included),
            # pylance's create_scalar_index in this process.
            for column, kind in (("i32", "BTREE"), ("name", "BITMAP")):
                cpp_times, py_times = [], []
                for k in range(3):
                    ours, theirs = tmp / f"v{version}-cpp-{k}.lance", tmp / f"v{version}-py-{k}.lance"
                    shutil.copytree(uri, ours)
                    shutil.copytree(uri, theirs)
                    t = time.perf_counter()
                    subprocess.run([str(cli), "create-index", str(ours), column, "--type", kind],
                                   check=True, capture_output=True)
                    cpp_times.append(time.perf_counter() - t)
                    copy = lance.dataset(str(theirs))
                    t = time.perf_counter()
                    copy.create_scalar_index(column, kind)
                    py_times.append(time.perf_counter() - t)
                    del copy
                    shutil.rmtree(ours, ignore_errors=True)
                    shutil.rmtree(theirs, ignore_errors=True)
                cpp_s, py_s = statistics.median(cpp_times), statistics.median(py_times)
                label = f"{kind} build (s)"
                print(f"{version:8} {label:32} {cpp_s:12.3f} {py_s:12.3f} {py_s / cpp_s:8.2f}", flush=True)
                ds.create_scalar_index(column, kind)  # the index the queries below use
            ds = lance.dataset(str(uri))
            n = args.repeat + 1
            measures = {
                "BTREE point lookup (ms)": [f"i32 = {v}" for v in rng.choice(i32, n)],
                "BTREE range 0.1% (ms)": [f"i32 BETWEEN {v} AND {v + 1048}"
                                          for v in rng.integers(0, (1 << 20) - 1048, n)],
                "BTREE IN of 10 (ms)": ["i32 IN (" + ", ".join(str(x) for x in rng.choice(i32, 10)) + ")"
                                        for _ in range(n)],
                "BITMAP equality (ms)": [f"name = 'name-{v}'" for v in rng.integers(0, 5000, n)],
            }
            for use_index in (True, False):
                cpp = CppFilters(binary, uri, use_index)
                try:
                    for label, queries in measures.items():
                        if not use_index and not label.startswith("BTREE point"):
                            continue  # one unindexed baseline is enough
                        cpp_s, py_s = measure(cpp, ds, queries, use_index)
                        name = label if use_index else label.replace("BTREE ", "no index, ")
                        print(f"{version:8} {name:32} {cpp_s * 1e3:12.2f} {py_s * 1e3:12.2f} "
                              f"{py_s / cpp_s:8.2f}", flush=True)
                finally:
                    cpp.close()
            del ds
            shutil.rmtree(uri, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
