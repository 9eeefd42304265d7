"""Side-by-side nearest-neighbour search benchmarks: lance-cpp
(bench/lance_bench.cc, `vector` mode) and the pinned pylance on the same
dataset and the same (pylance-built) IVF_FLAT / IVF_PQ / IVF_SQ indices in
the same run, reported as ratios, with the recall@k curve as an SVG plot.

    .venv/bin/python bench/run_vector.py [--rows N] [--dim D] [--queries Q]
        [--index IVF_FLAT,IVF_PQ,IVF_SQ] [--nprobes 1,2,4,8,16,32]
        [--num-partitions P] [--num-sub-vectors M] [--refine-factor R]

The data are float32 vectors from a Gaussian mixture (--clusters centres
uniform in [-1, 1]^dim, --sigma spread, so that IVF partitions mean
something and recall still grows with nprobes) with an int64 `id` = row number; the
queries are fresh draws from the same mixture. Ground truth is exact L2
search in numpy. For flat search (no index) and then for each index type
and each nprobes, every query runs once on each side, alternately (ours,
then pylance's), single query at a time, projection `id`, after one untimed
warm-up query per side; the median latency is reported and QPS is
1 / median. recall@k is the mean over queries of |found & truth| / k; the
queries on which the two sides return different ids are counted. Ratios > 1
mean lance-cpp is quicker. Writes bench/out/vector-<rows>x<dim>.json and
.svg (recall on x, QPS on a log y axis, one line per side per index type).
Numbers are measurements, never assertions."""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

os.environ.setdefault("LANCE_LOG", "error")
import lance  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_index import LineServer  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def make_data(rows: int, dim: int, queries: int, clusters: int, sigma: float = 0.15, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`rows` data vectors and `queries` query vectors from one Gaussian
    mixture: centres uniform in [-1, 1]^dim, points N(centre, sigma^2)."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-1.0, 1.0, size=(clusters, dim)).astype(np.float32)

    def draw(n: int) -> np.ndarray:
        out = np.empty((n, dim), dtype=np.float32)
        for start in range(0, n, 65536):
            m = min(65536, n - start)
            which = rng.integers(0, clusters, m)
            out[start:start + m] = centres[which] + rng.normal(0.0, sigma, size=(m, dim)).astype(np.float32)
        return out

    return draw(rows), draw(queries)


def exact_topk(data: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """The ids of the k nearest rows (squared L2) of each query."""
    norms = np.einsum("ij,ij->i", data, data)
    out = np.empty((len(queries), k), dtype=np.int64)
    for i, q in enumerate(queries):
        d = norms - 2.0 * (data @ q)
        part = np.argpartition(d, k)[:k]
        out[i] = part[np.argsort(d[part], kind="stable")]
    return out


def recall(found: list[list[int]], truth: np.ndarray, k: int) -> float:
    return float(np.mean([len(set(f) & set(t.tolist())) / k for f, t in zip(found, truth)]))


class CppVector(LineServer):
    """lance-bench answering `Q NPROBES` lines with seconds, rows and ids."""

    def query(self, q: int, nprobes: int) -> tuple[float, list[int]]:
        self.proc.stdin.write(f"{q} {nprobes}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"lance-bench vector stopped (exit code {self.proc.wait()})")
        out = json.loads(line)
        return out["seconds"], out["ids"]


def measure(cpp: CppVector, ds, queries: np.ndarray, k: int, nprobes: int, refine: int | None,
            use_index: bool) -> dict:
    """Both sides over every query, alternately, after one untimed warm-up."""
    nearest = {"column": "vec", "k": k, "use_index": use_index}
    if nprobes:
        nearest["nprobes"] = nprobes
    if refine:
        nearest["refine_factor"] = refine

    def py(q: int) -> tuple[float, list[int]]:
        t = time.perf_counter()
        table = ds.to_table(columns=["id"], nearest={**nearest, "q": queries[q]})
        s = time.perf_counter() - t
        return s, table.column("id").to_pylist()

    cpp.query(0, nprobes)
    py(0)
    cpp_t, py_t, cpp_ids, py_ids = [], [], [], []
    for q in range(len(queries)):
        s, ids = cpp.query(q, nprobes)
        cpp_t.append(s)
        cpp_ids.append(ids)
        s, ids = py(q)
        py_t.append(s)
        py_ids.append(ids)
    return {"cpp_s": statistics.median(cpp_t), "py_s": statistics.median(py_t), "cpp_ids": cpp_ids, "py_ids": py_ids}


def svg_plot(path: Path, title: str, series: list[dict]) -> None:
    """A hand-written SVG line chart: recall on x, QPS on a log y axis.
    Each series: {"label", "color", "dash" (bool), "points": [(x, y)]}."""
    w, h, left, right, top, bottom = 760, 480, 70, 200, 40, 50
    pts = [p for s in series for p in s["points"] if p[1] > 0]
    xmin = min(p[0] for p in pts)
    xmin = max(0.0, math.floor(xmin * 10) / 10)
    xmax = 1.0
    ylo = math.floor(math.log10(min(p[1] for p in pts)))
    yhi = math.ceil(math.log10(max(p[1] for p in pts)))
    if yhi == ylo:
        yhi += 1
    pw, ph = w - left - right, h - top - bottom

    def px(x: float) -> float:
        return left + (x - xmin) / (xmax - xmin or 1) * pw

    def py(y: float) -> float:
        return top + ph - (math.log10(y) - ylo) / (yhi - ylo) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="20" font-size="14">{title}</text>',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>']
    steps = 10
    for i in range(steps + 1):
        x = xmin + (xmax - xmin) * i / steps
        out.append(f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{top + ph}" stroke="#ddd"/>')
        out.append(f'<text x="{px(x):.1f}" y="{top + ph + 16}" text-anchor="middle">{x:.2f}</text>')
    for e in range(ylo, yhi + 1):
        y = py(10.0 ** e)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{10.0 ** e:g}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{h - 10}" text-anchor="middle">recall@10</text>')
    out.append(f'<text x="18" y="{top + ph / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {top + ph / 2})">queries per second (log)</text>')
    for i, s in enumerate(series):
        p = [(px(x), py(y)) for x, y in s["points"] if y > 0]
        dash = ' stroke-dasharray="6,4"' if s["dash"] else ""
        if len(p) > 1:
            coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in p)
            out.append(f'<polyline points="{coords}" fill="none" stroke="{s["color"]}" stroke-width="2"{dash}/>')
        for x, y in p:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{s["color"]}"/>')
        ly = top + 10 + 18 * i
        out.append(f'<line x1="{left + pw + 12}" y1="{ly}" x2="{left + pw + 40}" y2="{ly}" '
                   f'stroke="{s["color"]}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{left + pw + 46}" y="{ly + 4}">{s["label"]}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--clusters", type=int, default=1000, help="Gaussian mixture centres")
    ap.add_argument("--sigma", type=float, default=0.6, help="standard deviation around a centre")
    ap.add_argument("--index", default="IVF_FLAT,IVF_PQ,IVF_SQ")
    ap.add_argument("--nprobes", default="1,2,4,8,16,32")
    ap.add_argument("--num-partitions", type=int, default=None, help="default: sqrt(rows)")
    ap.add_argument("--num-sub-vectors", type=int, default=None, help="IVF_PQ; default: dim / 16")
    ap.add_argument("--refine-factor", type=int, default=None)
    ap.add_argument("--no-flat", action="store_true", help="skip the flat (no index) measure")
    ap.add_argument("--version", default="2.1")
    ap.add_argument("--out", default=str(REPO / "bench" / "out"))
    ap.add_argument("--binary", default=str(REPO / "build" / "bin" / "lance-bench"))
    args = ap.parse_args()
    binary = Path(args.binary)
    if not binary.exists():
        print(f"missing {binary}: run `make` first", file=sys.stderr)
        return 2
    k = args.k
    partitions = args.num_partitions or max(1, round(math.sqrt(args.rows)))
    sub_vectors = args.num_sub_vectors or max(1, args.dim // 16)
    nprobes_list = [int(n) for n in args.nprobes.split(",") if n]
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"vector-{args.rows}x{args.dim}"
    result = {"rows": args.rows, "dim": args.dim, "queries": args.queries, "k": k, "clusters": args.clusters,
              "sigma": args.sigma,
              "num_partitions": partitions, "num_sub_vectors": sub_vectors, "refine_factor": args.refine_factor,
              "file_version": args.version, "pylance": lance.__version__,
              "loadavg_start": os.getloadavg(), "flat": None, "indices": {}}
    tmp = Path(tempfile.mkdtemp(prefix="lance-bench-vector-"))
    try:
        t = time.perf_counter()
        data, queries = make_data(args.rows, args.dim, args.queries, args.clusters, args.sigma)
        truth = exact_topk(data, queries, k)
        qfile = tmp / "queries.f32"
        queries.astype("<f4").tofile(qfile)
        vec = pa.FixedSizeListArray.from_arrays(pa.array(data.reshape(-1)), args.dim)
        table = pa.table({"id": pa.array(np.arange(args.rows, dtype=np.int64)), "vec": vec})
        base = tmp / "base.lance"
        lance.write_dataset(table, base, data_storage_version=args.version, max_rows_per_file=1 << 24)
        del table, vec
        print(f"# {args.rows} x {args.dim} float32 ({args.clusters} clusters), {args.queries} queries, top {k}, "
              f"file version {args.version}; data + ground truth {time.perf_counter() - t:.1f} s; "
              f"load {os.getloadavg()[0]:.2f}")
        print(f"{'measure':28} {'cpp QPS':>9} {'py QPS':>9} {'ratio':>6} {'cpp rec':>8} {'py rec':>8} {'differ':>6}")

        def row(label: str, m: dict) -> dict:
            r = {"cpp_qps": 1.0 / m["cpp_s"], "py_qps": 1.0 / m["py_s"], "ratio": m["py_s"] / m["cpp_s"],
                 "cpp_recall": recall(m["cpp_ids"], truth, k), "py_recall": recall(m["py_ids"], truth, k),
                 "differ": sum(a != b for a, b in zip(m["cpp_ids"], m["py_ids"])),
                 "differ_as_sets": sum(set(a) != set(b) for a, b in zip(m["cpp_ids"], m["py_ids"])),
                 "cpp_median_ms": m["cpp_s"] * 1e3, "py_median_ms": m["py_s"] * 1e3}
            print(f"{label:28} {r['cpp_qps']:9.1f} {r['py_qps']:9.1f} {r['ratio']:6.2f} "
                  f"{r['cpp_recall']:8.4f} {r['py_recall']:8.4f} {r['differ']:6d}", flush=True)
            return r

        def cpp_server(uri: Path, use_index: bool) -> CppVector:
            cmd = [str(binary), "vector", str(uri), "--column", "vec", "--queries-file", str(qfile),
                   "--dim", str(args.dim), "--k", str(k)]
            if args.refine_factor:
                cmd += ["--refine-factor", str(args.refine_factor)]
            if not use_index:
                cmd += ["--no-index", "1"]
            return CppVector(cmd)

        if not args.no_flat:
            cpp = cpp_server(base, False)
            try:
                result["flat"] = row("flat (no index)", measure(cpp, lance.dataset(str(base)), queries, k, 0,
                                                                None, False))
            finally:
                cpp.close()
        for index_type in [s for s in args.index.split(",") if s]:
            uri = tmp / f"{index_type}.lance"
            shutil.copytree(base, uri)
            ds = lance.dataset(str(uri))
            kwargs = {"num_partitions": partitions}
            if index_type == "IVF_PQ":
                kwargs["num_sub_vectors"] = sub_vectors
            t = time.perf_counter()
            ds.create_index("vec", index_type=index_type, metric="L2", **kwargs)
            build_s = time.perf_counter() - t
            print(f"# {index_type} {kwargs} built by pylance in {build_s:.1f} s", flush=True)
            ds = lance.dataset(str(uri))
            entry = {"build_s": build_s, "params": kwargs, "sweep": {}}
            cpp = cpp_server(uri, True)
            try:
                for n in nprobes_list:
                    entry["sweep"][n] = row(f"{index_type} nprobes={n}",
                                            measure(cpp, ds, queries, k, n, args.refine_factor, True))
            finally:
                cpp.close()
            result["indices"][index_type] = entry
            del ds
            shutil.rmtree(uri, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result["loadavg_end"] = os.getloadavg()
    (out_dir / f"{stem}.json").write_text(json.dumps(result, indent=1) + "\n")
    colors = {"IVF_FLAT": "#1f77b4", "IVF_PQ": "#d62728", "IVF_SQ": "#2ca02c"}
    series = []
    for index_type, entry in result["indices"].items():
        color = colors.get(index_type, "#555")
        pts = list(entry["sweep"].values())
        series.append({"label": f"{index_type} lance-cpp", "color": color, "dash": False,
                       "points": [(p["cpp_recall"], p["cpp_qps"]) for p in pts]})
        series.append({"label": f"{index_type} pylance", "color": color, "dash": True,
                       "points": [(p["py_recall"], p["py_qps"]) for p in pts]})
    if result["flat"]:
        f = result["flat"]
        series.append({"label": "flat lance-cpp", "color": "#000", "dash": False,
                       "points": [(f["cpp_recall"], f["cpp_qps"])]})
        series.append({"label": "flat pylance", "color": "#888", "dash": True,
                       "points": [(f["py_recall"], f["py_qps"])]})
    if series:
        svg_plot(out_dir / f"{stem}.svg",
                 f"recall@{k} vs QPS, {args.rows} x {args.dim}, nprobes {args.nprobes}", series)
    print(f"# wrote {out_dir / stem}.json and .svg; load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
