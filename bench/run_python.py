"""The Python binding lance_cpp beside pylance, in one interpreter, on one dataset.

    .venv/bin/python bench/run_python.py [--rows N] [--repeat R] [--take-rows K]

Scans (all rows; a filter), counts and takes of K random offsets, each the best
of --repeat runs, alternating sides. Ratios > 1 mean lance_cpp is quicker.
Numbers are measurements, never assertions."""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

import lance
import lance_cpp


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--take-rows", type=int, default=1000)
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    n = args.rows
    table = pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "name": pa.array([f"name-{i}" for i in range(n)]),
        "x": pa.array(rng.random(n)),
    })
    tmp = Path(tempfile.mkdtemp(prefix="lance-py-bench-"))
    try:
        uri = tmp / "ds"
        lance.write_dataset(table, uri)
        ours, theirs = lance_cpp.dataset(uri), lance.dataset(uri)
        idx = rng.integers(0, n, args.take_rows).tolist()
        cases = [
            ("scan all", lambda d: d.to_table()),
            ("scan x < 0.1", lambda d: d.to_table(filter="x < 0.1")),
            ("scan id, limit 1000", lambda d: d.to_table(columns=["id"], limit=1000)),
            ("count x < 0.5", lambda d: d.count_rows("x < 0.5")),
            (f"take {args.take_rows}", lambda d: d.take(idx)),
        ]
        print(f"{n} rows, best of {args.repeat}")
        for name, fn in cases:
            assert fn(ours) == fn(theirs), name  # same result, and a warm-up
            a, b = best(lambda: fn(ours), args.repeat), best(lambda: fn(theirs), args.repeat)
            print(f"{name:24s} lance_cpp {a * 1e3:8.2f} ms   pylance {b * 1e3:8.2f} ms   ratio {b / a:5.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
