"""Side-by-side full-text search benchmarks: lance-cpp (bench/lance_bench.cc,
`fts` mode) and the pinned pylance on the same dataset and the same INVERTED
index (pylance's) in the same run, reported as ratios.

    .venv/bin/python bench/run_fts.py [--rows N] [--repeat R] [--k K]

Texts are 8-40 words drawn from a Zipf-distributed vocabulary of 20000
words. Measures the index build (lance-cpp's CLI on a copy of the dataset,
its process start included, against pylance's create_scalar_index), then
the latency of top-k queries (projection `id`) of one rare word, one common
word, three words, and a two-word phrase (index with positions), each query
a fresh one, the same on both sides, run alternately after one untimed
warm-up; the median is reported. Both sides must return the same rows.
Ratios > 1 mean lance-cpp is quicker. Numbers are measurements, never
assertions."""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

import os
os.environ.setdefault("LANCE_LOG", "error")
import lance  # noqa: E402
from lance.query import PhraseQuery  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_index import LineServer  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
VOCAB = 20000


def word(i: int) -> str:
    # Pronounceable, distinct, unchanged by the stemmer and no stop word.
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    out = []
    i += 1
    while i:
        i, r = divmod(i, 70)
        out.append(consonants[r % 14] + vowels[r // 14])
    return "".join(out) + "x"


def make_table(rows: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    ranks = np.minimum(rng.zipf(1.2, size=rows * 24), VOCAB) - 1
    lengths = rng.integers(8, 41, rows)
    words = [word(i) for i in range(VOCAB)]
    texts, pos = [], 0
    for n in lengths:
        texts.append(" ".join(words[r] for r in ranks[pos:pos + n]))
        pos += n
        if pos + 40 > len(ranks):
            pos = 0
    return pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)), "text": pa.array(texts)})


def CppSearch(binary: Path, uri: Path, k: int, phrase: bool) -> LineServer:
    """lance-bench answering full-text queries (top k, projection `id`)."""
    return LineServer([str(binary), "fts", str(uri), "--k", str(k), "--phrase", "1" if phrase else "0"])


def measure(cpp: LineServer, ds, queries: list[str], k: int, phrase: bool) -> tuple[float, float]:
    cpp_times, py_times = [], []
    for q in queries:
        cpp_s, cpp_rows = cpp.run(q)
        t = time.perf_counter()
        fq = PhraseQuery(q, "text") if phrase else q
        py_rows = ds.to_table(columns=["id"], full_text_query=fq, limit=k).num_rows
        py_s = time.perf_counter() - t
        if cpp_rows != py_rows:
            raise RuntimeError(f"{q!r}: lance-cpp returned {cpp_rows} rows, pylance {py_rows}")
        cpp_times.append(cpp_s)
        py_times.append(py_s)
    return statistics.median(cpp_times[1:]), statistics.median(py_times[1:])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=15, help="timed queries per measure")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--version", default="2.1")
    ap.add_argument("--binary", default=str(REPO / "build" / "bin" / "lance-bench"))
    args = ap.parse_args()
    binary = Path(args.binary)
    cli = binary.parent / "lance-cpp"
    if not binary.exists() or not cli.exists():
        print(f"missing {binary} or {cli}: run `make` first", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="lance-bench-fts-"))
    try:
        table = make_table(args.rows)
        print(f"# {args.rows} rows of 8-40 Zipf words (vocabulary {VOCAB}), top {args.k}, file version {args.version}")
        print(f"{'measure':34} {'lance-cpp':>12} {'pylance':>12} {'ratio':>8}")
        rng = np.random.default_rng(7)
        n = args.repeat + 1
        for with_position in (False, True):
            uri = tmp / f"p{int(with_position)}.lance"
            lance.write_dataset(table, uri, data_storage_version=args.version)
            ours = tmp / f"p{int(with_position)}-cpp.lance"
            shutil.copytree(uri, ours)
            cmd = [str(cli), "create-index", str(ours), "text", "--type", "INVERTED"]
            if with_position:
                cmd.append("--with-position")
            t = time.perf_counter()
            built = subprocess.run(cmd, capture_output=True, text=True)
            cpp_build = time.perf_counter() - t
            ds = lance.dataset(str(uri))
            t = time.perf_counter()
            ds.create_scalar_index("text", "INVERTED", with_position=with_position)
            py_build = time.perf_counter() - t
            label = "INVERTED build" + (" +positions" if with_position else "") + " (s)"
            if built.returncode == 0:
                print(f"{label:34} {cpp_build:12.3f} {py_build:12.3f} {py_build / cpp_build:8.2f}", flush=True)
            else:
                print(f"{label:34} {'refused':>12} {py_build:12.3f} {'-':>8}   ({built.stderr.strip()[:80]})")
            shutil.rmtree(ours, ignore_errors=True)
            ds = lance.dataset(str(uri))
            if with_position:
                measures = {"phrase of 2 words (ms)": ([f"{word(a)} {word(b)}" for a, b in
                                                        zip(rng.integers(0, 30, n), rng.integers(0, 30, n))], True)}
            else:
                measures = {
                    "1 rare word (ms)": ([word(v) for v in rng.integers(2000, VOCAB, n)], False),
                    "1 common word (ms)": ([word(v) for v in rng.integers(0, 20, n)], False),
                    "3 words (ms)": ([" ".join(word(v) for v in rng.integers(0, 2000, 3)) for _ in range(n)], False),
                }
            for label, (queries, phrase) in measures.items():
                cpp = CppSearch(binary, uri, args.k, phrase)
                try:
                    cpp_s, py_s = measure(cpp, ds, queries, args.k, phrase)
                finally:
                    cpp.close()
                print(f"{label:34} {cpp_s * 1e3:12.2f} {py_s * 1e3:12.2f} {py_s / cpp_s:8.2f}", flush=True)
            del ds
            shutil.rmtree(uri, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
