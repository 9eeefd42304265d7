"""Vector search: lance-cpp's `search --column COL --vector ...` over the
datasets and IVF indices pylance 14 writes gives pylance's
`to_table(nearest=...)`: exact (flat) search and IVF_FLAT the same rows and
distances (1e-5 relative), IVF_PQ / IVF_SQ the same rows (>= 90% at k = 10)
with pylance's quantized distances, refine exact; prefilter and postfilter,
deletions and appends by either side (fragments the index does not cover
searched flat), delta segments, fast_search; index types lance-cpp does not
search are refused with an error naming them, never answered otherwise."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lance

from conftest import FIXTURES_MISSING, FIXTURES_ROOT, assert_clean_failure

RTOL = 1e-5


def vectors(seed: int, n: int, dim: int) -> np.ndarray:
    return np.random.default_rng(seed).random((n, dim), dtype=np.float32)


def table(vecs: np.ndarray, start: int = 0) -> pa.Table:
    n, dim = vecs.shape
    return pa.table({"id": pa.array(np.arange(start, start + n), pa.int64()),
                     "vec": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel(), pa.float32()), dim)})


def make(tmp_path: Path, name: str, vecs: np.ndarray, **write) -> Path:
    uri = tmp_path / name
    lance.write_dataset(table(vecs), uri, **write)
    return uri


def queries(seed: int, n: int, dim: int) -> np.ndarray:
    return np.random.default_rng(seed + 1000).random((n, dim), dtype=np.float32)


def theirs(uri: Path, q: np.ndarray, k: int, *, filter=None, prefilter=False, fast_search=False, **nearest):
    t = lance.dataset(uri).to_table(nearest={"column": "vec", "q": q, "k": k, **nearest}, columns=["id"],
                                    filter=filter, prefilter=prefilter, fast_search=fast_search)
    return list(zip(t["id"].to_pylist(), t["_distance"].to_pylist()))


def run_ours(lance_cpp, uri: Path, q: np.ndarray, k: int, *args):
    return lance_cpp.run("search", uri, "--column", "vec", "--vector", ",".join(repr(float(x)) for x in q),
                         "--k", str(k), "--columns", "id", "--format", "json", *args)


def ours(lance_cpp, uri: Path, q: np.ndarray, k: int, *args):
    proc = run_ours(lance_cpp, uri, q, k, *args)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    # JSON has no infinity: the CLI writes null for it.
    return [(r["id"], float("inf") if r["_distance"] is None else r["_distance"]) for r in rows]


def close(a: float, b: float) -> bool:
    if a == b:  # infinities too
        return True
    return abs(a - b) <= RTOL * max(abs(a), abs(b)) + 1e-6


def assert_identical(got, want, what=""):
    """Same rows in the same order, distances within RTOL. Rows whose
    distances are within RTOL of each other may come in either order (the
    float sums differ in their last bits from pylance's SIMD lanes), and at
    the k-th place either of such rows may be kept."""
    msg = f"{what}\nours   {got}\ntheirs {want}"
    assert len(got) == len(want), msg
    for (_, a), (_, b) in zip(got, want):
        assert close(a, b), msg
    theirs_at = {i: d for i, d in want}
    for pos, ((i, a), (j, b)) in enumerate(zip(got, want)):
        if i == j:
            continue
        if i in theirs_at:
            assert close(theirs_at[i], b), msg  # a near-tie swapped
        else:
            assert close(a, want[-1][1]), msg  # a near-tie at the k-th place


def assert_overlap(got, want, what="", at_least=0.9):
    """Quantized search: >= `at_least` of pylance's rows, and pylance's
    distance for every row both return (the same quantized distance)."""
    assert len(got) == len(want), f"{what}: {len(got)} rows vs {len(want)}"
    mine = dict(got)
    common = [i for i, _ in want if i in mine]
    assert len(common) >= at_least * len(want), f"{what}: overlap {len(common)}/{len(want)}\n{got}\n{want}"
    for i, d in want:
        if i in mine:
            assert mine[i] == pytest.approx(d, rel=1e-4, abs=1e-5), f"{what}: row {i}: {mine[i]} vs {d}"


def exact(vecs: np.ndarray, q: np.ndarray, k: int, metric: str = "l2", ids=None):
    """numpy's exact answer (float64), for checking pylance's too."""
    v = vecs.astype(np.float64)
    qq = q.astype(np.float64)
    if metric == "l2":
        d = ((v - qq) ** 2).sum(1)
    elif metric == "cosine":
        d = 1 - v @ qq / (np.linalg.norm(v, axis=1) * np.linalg.norm(qq))
    else:
        d = 1 - v @ qq
    ids = np.arange(len(v)) if ids is None else np.asarray(ids)
    order = np.lexsort((ids, d))[:k]
    return [(int(ids[i]), float(d[i])) for i in order]


def assert_same_probes(lance_cpp, uri: Path, q: np.ndarray, k: int, *args, **nearest):
    """lance-cpp's partitions searched (--explain, summed over segments) are
    pylance's (analyze_plan's partitions_searched of ANNSubIndex)."""
    plan = lance.dataset(uri).scanner(nearest={"column": "vec", "q": q, "k": k, **nearest},
                                      columns=["id"]).analyze_plan()
    want = sum(int(n) for n in re.findall(r"ANNSubIndex.*?partitions_searched=(\d+)", plan))
    proc = run_ours(lance_cpp, uri, q, k, *args, "--explain")
    assert proc.returncode == 0, proc.stderr
    got = sum(int(n) for n in re.findall(r"partitions_searched=(\d+)", proc.stdout))
    assert want > 0 and got == want, f"k={k} {nearest}: {got} partitions vs pylance's {want}\n{proc.stdout}\n{plan}"


# --------------------------------------------------------------------------- flat search


@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
def test_flat_search(lance_cpp, tmp_path, metric):
    vecs = vectors(1, 2000, 16)
    uri = make(tmp_path, "flat", vecs, max_rows_per_file=700)
    for qi, q in enumerate(queries(1, 4, 16)):
        for k in (1, 10, 37):
            want = theirs(uri, q, k, metric=metric)
            args = [] if metric == "l2" else ["--metric", metric]
            assert_identical(ours(lance_cpp, uri, q, k, *args), want, f"{metric} q{qi} k={k}")
            # pylance's own answer is the exact one
            assert [i for i, _ in want] == [i for i, _ in exact(vecs, q, k, metric)]


def test_flat_search_filters_deletes_and_ties(lance_cpp, tmp_path):
    vecs = vectors(2, 1500, 8)
    vecs[1101] = vecs[3]  # a tie across fragments: the lower row id first
    vecs[600] = vecs[3]
    uri = make(tmp_path, "flatf", vecs, max_rows_per_file=500)
    lance.dataset(uri).delete("id % 7 = 1")
    q = vecs[3] + np.float32(0.001)
    got = ours(lance_cpp, uri, q, 5, "--with-row-id")
    assert [i for i, _ in got][:3] == [3, 600, 1101]
    assert_identical(got, theirs(uri, q, 5))
    for q in queries(2, 3, 8):
        # --filter is a prefilter unless --postfilter (pylance: prefilter=True / default)
        assert_identical(ours(lance_cpp, uri, q, 10, "--filter", "id % 3 = 0"),
                         theirs(uri, q, 10, filter="id % 3 = 0", prefilter=True), "prefilter")
        post = theirs(uri, q, 10, filter="id % 3 = 0")
        assert len(post) < 10
        assert_identical(ours(lance_cpp, uri, q, 10, "--filter", "id % 3 = 0", "--postfilter"), post, "postfilter")
    # fast_search without an index: nothing is indexed, nothing returned (as pylance)
    assert theirs(uri, q, 10, fast_search=True) == [] == ours(lance_cpp, uri, q, 10, "--fast-search")
    # deletes by lance-cpp
    lance_cpp.run_ok("delete", uri, "id < 400")
    for q in queries(3, 3, 8):
        got = ours(lance_cpp, uri, q, 10)
        assert all(i >= 400 and i % 7 != 1 for i, _ in got)
        assert_identical(got, theirs(uri, q, 10))


def test_flat_search_null_vectors(lance_cpp, tmp_path):
    vecs = vectors(4, 300, 4)
    values = pa.array(vecs.ravel(), pa.float32())
    mask = pa.array([i % 5 == 0 for i in range(300)])
    col = pa.FixedSizeListArray.from_arrays(values, 4, mask=mask)
    uri = tmp_path / "nulls"
    lance.write_dataset(pa.table({"id": pa.array(range(300), pa.int64()), "vec": col}), uri)
    q = queries(4, 1, 4)[0]
    got = ours(lance_cpp, uri, q, 20)
    assert all(i % 5 != 0 for i, _ in got)
    assert_identical(got, theirs(uri, q, 20))


# --------------------------------------------------------------------------- IVF indices


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """One dataset per (index type, metric), 3000 x 32 in 3 fragments."""
    root = tmp_path_factory.mktemp("ivf")
    vecs = vectors(7, 3000, 32)
    made = {}

    def get(index_type: str, metric: str) -> Path:
        key = (index_type, metric)
        if key not in made:
            uri = make(root, f"{index_type}_{metric}", vecs, max_rows_per_file=1000)
            # Given centroids: the same partitions every run (k-means is seeded by the OS).
            centroids = vecs[::375][:8]
            if metric == "cosine":
                centroids = centroids / np.linalg.norm(centroids, axis=1, keepdims=True)
            params = {"num_partitions": 8, "metric": metric, "ivf_centroids": centroids}
            if index_type == "IVF_PQ":
                params["num_sub_vectors"] = 8
            lance.dataset(uri).create_index("vec", index_type, **params)
            made[key] = uri
        return made[key]

    get.vecs = vecs
    return get


def copy_of(uri: Path, tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copytree(uri, dst)
    return dst


@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
def test_ivf_flat(lance_cpp, indexed, metric):
    uri = indexed("IVF_FLAT", metric)
    for qi, q in enumerate(queries(7, 6, 32)):
        for k in (1, 10):
            for nprobes in (None, 1, 3, 8):
                kw = {} if nprobes is None else {"nprobes": nprobes}
                args = [] if nprobes is None else ["--nprobes", str(nprobes)]
                assert_identical(ours(lance_cpp, uri, q, k, *args), theirs(uri, q, k, **kw),
                                 f"{metric} q{qi} k={k} nprobes={nprobes}")


@pytest.mark.parametrize("index_type", ["IVF_PQ", "IVF_SQ"])
@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
def test_ivf_quantized(lance_cpp, indexed, index_type, metric):
    uri = indexed(index_type, metric)
    identical = total = 0
    for qi, q in enumerate(queries(8, 6, 32)):
        for nprobes in (None, 2, 8):
            kw = {} if nprobes is None else {"nprobes": nprobes}
            args = [] if nprobes is None else ["--nprobes", str(nprobes)]
            got, want = ours(lance_cpp, uri, q, 10, *args), theirs(uri, q, 10, **kw)
            assert_overlap(got, want, f"{index_type} {metric} q{qi} nprobes={nprobes}")
            identical += [i for i, _ in got] == [i for i, _ in want]
            total += 1
            # refine: exact distances of the candidates, pylance's rows
            assert_identical(ours(lance_cpp, uri, q, 10, *args, "--refine-factor", "3"),
                             theirs(uri, q, 10, refine_factor=3, **kw), f"refine q{qi}")
        for k in (1, 10):
            assert_same_probes(lance_cpp, uri, q, k)
            assert_same_probes(lance_cpp, uri, q, k, "--refine-factor", "3", refine_factor=3)
    assert identical >= total - 1, f"{identical}/{total} queries gave pylance's rows in pylance's order"


@pytest.mark.parametrize("index_type", ["IVF_FLAT", "IVF_PQ"])
def test_ivf_filters(lance_cpp, indexed, index_type):
    uri = indexed(index_type, "l2")
    check = assert_identical if index_type == "IVF_FLAT" else assert_overlap
    for qi, q in enumerate(queries(9, 4, 32)):
        for pred in ("id % 4 = 1", "id < 50", "id = 2500"):
            for nprobes in (None, 2):
                kw = {} if nprobes is None else {"nprobes": nprobes}
                args = [] if nprobes is None else ["--nprobes", str(nprobes)]
                want = theirs(uri, q, 10, filter=pred, prefilter=True, **kw)
                check(ours(lance_cpp, uri, q, 10, "--filter", pred, *args), want, f"prefilter {pred} {nprobes}")
                want = theirs(uri, q, 10, filter=pred, **kw)
                check(ours(lance_cpp, uri, q, 10, "--filter", pred, "--postfilter", *args), want,
                      f"postfilter {pred} {nprobes}")


@pytest.mark.parametrize("index_type", ["IVF_FLAT", "IVF_SQ"])
def test_ivf_deletes_appends_deltas(lance_cpp, indexed, tmp_path, index_type):
    uri = copy_of(indexed(index_type, "l2"), tmp_path, "work")
    vecs = indexed.vecs
    qs = queries(10, 4, 32)
    check = assert_identical if index_type == "IVF_FLAT" else assert_overlap

    def same(what, **kw):
        for qi, q in enumerate(qs):
            args = ["--nprobes", str(kw["nprobes"])] if "nprobes" in kw else []
            if kw.get("fast_search"):
                args.append("--fast-search")
            check(ours(lance_cpp, uri, q, 10, *args), theirs(uri, q, 10, **kw), f"{what} q{qi}")

    lance.dataset(uri).delete("id % 5 = 0")
    same("pylance's deletes")
    lance_cpp.run_ok("delete", uri, "id % 5 = 1")
    same("lance-cpp's deletes", nprobes=2)
    # Appends: fragments the index does not cover are searched flat, and
    # every distance is then exact (pylance re-scores the index's rows).
    extra = vectors(11, 600, 32)
    lance.write_dataset(table(extra, 3000), uri, mode="append")
    arrow_file = tmp_path / "more.arrow"
    more = table(vectors(12, 400, 32), 3600)
    with pa.OSFile(str(arrow_file), "wb") as sink, pa.ipc.new_file(sink, more.schema) as w:
        w.write_table(more)
    lance_cpp.run_ok("write", uri, "--input", arrow_file, "--mode", "append")
    for qi, q in enumerate(qs):
        assert_identical(ours(lance_cpp, uri, q, 10), theirs(uri, q, 10), f"unindexed q{qi}")
    same("fast_search", fast_search=True)
    # A delta segment for the new fragments, the first one kept.
    lance.dataset(uri).optimize.optimize_indices(num_indices_to_merge=0)
    stats = lance.dataset(uri).stats.index_stats("vec_idx")
    assert stats["num_indices"] == 2
    same("two segments")
    same("two segments nprobes", nprobes=3)
    for q in qs:
        for k in (1, 10, 50):
            assert_same_probes(lance_cpp, uri, q, k)
    lance_cpp.run_ok("delete", uri, "id >= 3500 AND id < 3550")
    same("two segments after deletes")
    # A whole fragment deleted: gone from the manifest, its rows still in the index.
    lance_cpp.run_ok("delete", uri, "id < 1000")
    assert len(lance.dataset(uri).get_fragments()) == 4
    same("a fragment gone")
    same("a fragment gone, all partitions", nprobes=8)


def test_adaptive_probes(lance_cpp, tmp_path):
    """Many partitions, few probed: the default (adaptive) probe count
    decides the rows, so equal rows over many queries say equal counts."""
    vecs = vectors(13, 4000, 16)
    uri = make(tmp_path, "many", vecs)
    lance.dataset(uri).create_index("vec", "IVF_FLAT", num_partitions=64)
    differs_from_one_probe = 0
    for qi, q in enumerate(queries(13, 20, 16)):
        for k in (1, 5, 20):
            want = theirs(uri, q, k)
            assert_identical(ours(lance_cpp, uri, q, k), want, f"q{qi} k={k}")
            differs_from_one_probe += want != theirs(uri, q, k, nprobes=1)
            assert_identical(ours(lance_cpp, uri, q, k, "--minimum-nprobes", "2", "--maximum-nprobes", "4"),
                             theirs(uri, q, k, minimum_nprobes=2, maximum_nprobes=4), f"min/max q{qi} k={k}")
    assert differs_from_one_probe > 0  # the test can tell probe counts apart
    # The probe counts themselves, against analyze_plan's partitions_searched
    # (no filter: no late search, whose concurrent probing pylance does not fix).
    for qi, q in enumerate(queries(13, 5, 16)):
        for k, kw, args in ((1, {}, []), (10, {}, []), (50, {}, []), (10, {"nprobes": 3}, ["--nprobes", "3"]),
                            (10, {"minimum_nprobes": 2, "maximum_nprobes": 4},
                             ["--minimum-nprobes", "2", "--maximum-nprobes", "4"])):
            assert_same_probes(lance_cpp, uri, q, k, *args, **kw)
    # Larger k: the profile's other rows (11 to 29 partitions here), and
    # k > 1000 (the reference's ratio rule, then late search).
    for qi, q in enumerate(queries(13, 2, 16)):
        for k in (50, 150, 300, 700, 1001):
            assert_identical(ours(lance_cpp, uri, q, k), theirs(uri, q, k), f"q{qi} k={k}")
    # A prefilter admitting at most k rows when late search may run (probes
    # not fixed, the adaptive count below the maximum): pylance returns them
    # all, those outside the first partitions at +inf.
    saw_inf = False
    for qi, q in enumerate(queries(19, 3, 16)):
        for pred in ("id < 3", "id < 10", "id < 12", "id < 40"):
            for kw, args in (({}, []), ({"nprobes": 1}, ["--nprobes", "1"]),
                             ({"maximum_nprobes": 3}, ["--maximum-nprobes", "3"]),
                             ({"maximum_nprobes": 30}, ["--maximum-nprobes", "30"]),
                             ({"minimum_nprobes": 2}, ["--minimum-nprobes", "2"]),
                             ({"refine_factor": 2}, ["--refine-factor", "2"])):
                want = theirs(uri, q, 10, filter=pred, prefilter=True, **kw)
                got = ours(lance_cpp, uri, q, 10, "--filter", pred, *args)
                assert [i for i, _ in got] == [i for i, _ in want], f"{pred} {kw}\n{got}\n{want}"
                for (_, a), (_, b) in zip(got, want):
                    assert a == b == float("inf") or close(a, b), f"{pred} {kw}\n{got}\n{want}"
                saw_inf = saw_inf or any(d == float("inf") for _, d in want)
    assert saw_inf


# --------------------------------------------------------------------------- refused


@pytest.mark.parametrize("index_type,what", [("IVF_HNSW_SQ", "HNSW"), ("IVF_HNSW_FLAT", "HNSW"),
                                             ("IVF_RQ", "IVF_RQ")])
def test_unsupported_index_refused(lance_cpp, tmp_path, index_type, what):
    vecs = vectors(14, 1000, 16)
    uri = make(tmp_path, "u", vecs)
    lance.dataset(uri).create_index("vec", index_type, num_partitions=2, name="my_vec_idx")
    q = queries(14, 1, 16)[0]
    assert_clean_failure(run_ours(lance_cpp, uri, q, 10), "my_vec_idx", what)
    # exact search stays available
    assert_identical(ours(lance_cpp, uri, q, 10, "--no-index"), theirs(uri, q, 10, use_index=False))


def test_metric_other_than_the_index_refused(lance_cpp, indexed):
    uri = indexed("IVF_FLAT", "cosine")
    q = queries(15, 1, 32)[0]
    assert_clean_failure(run_ours(lance_cpp, uri, q, 10, "--metric", "dot"), "vec_idx", "cosine")
    assert_identical(ours(lance_cpp, uri, q, 10, "--no-index", "--metric", "dot"),
                     theirs(uri, q, 10, use_index=False, metric="dot"))


def test_bad_queries(lance_cpp, tmp_path):
    uri = make(tmp_path, "bad", vectors(16, 100, 4))
    q = queries(16, 1, 4)[0]
    assert_clean_failure(run_ours(lance_cpp, uri, q[:3], 5), "3", "4")
    assert_clean_failure(lance_cpp.run("search", uri, "--column", "id", "--vector", "1,2", "--k", "3"), "id")
    assert_clean_failure(lance_cpp.run("search", uri, "--column", "nope", "--vector", "1,2", "--k", "3"), "nope")
    assert_clean_failure(run_ours(lance_cpp, uri, q, 5, "--metric", "manhattan"), "manhattan")
    # Zero k / nprobes / minimum_nprobes: pylance refuses them (with an index
    # or without), lance-cpp too (a usage error of the CLI).
    for nearest, flags in (({"k": 0}, ["--k", "0"]), ({"nprobes": 0}, ["--nprobes", "0"]),
                           ({"minimum_nprobes": 0}, ["--minimum-nprobes", "0"])):
        with pytest.raises(ValueError):
            lance.dataset(uri).to_table(nearest={"column": "vec", "q": q, "k": 5, **nearest})
        proc = lance_cpp.run("search", uri, "--column", "vec", "--vector", ",".join(repr(float(x)) for x in q),
                             *(["--k", "5"] if flags[0] != "--k" else []), *flags)
        assert proc.returncode == 2 and flags[0] in proc.stderr, proc.stderr
    f64 = tmp_path / "f64"
    lance.write_dataset(pa.table({"vec": pa.FixedSizeListArray.from_arrays(pa.array(np.zeros(8)), 4)}), f64)
    assert_clean_failure(run_ours(lance_cpp, f64, q, 1), "double")
    multi = tmp_path / "multi"
    inner = pa.FixedSizeListArray.from_arrays(pa.array(np.zeros(16, np.float32)), 4)
    lance.write_dataset(pa.table({"vec": pa.ListArray.from_arrays(pa.array([0, 2, 4], pa.int32()), inner)}), multi)
    assert_clean_failure(run_ours(lance_cpp, multi, q, 1), "multivector")
    u8 = tmp_path / "u8"
    lance.write_dataset(pa.table({"vec": pa.FixedSizeListArray.from_arrays(pa.array(np.zeros(8, np.uint8)), 4)}), u8)
    assert_clean_failure(run_ours(lance_cpp, u8, q, 1, "--metric", "hamming"), "hamming")
    assert_clean_failure(run_ours(lance_cpp, u8, q, 1), "uint8")


# --------------------------------------------------------------------------- row ids


def test_stable_row_ids(lance_cpp, tmp_path):
    """The index holds stable row ids; rows an update moved out of the
    indexed fragments are searched flat where they are now."""
    vecs = vectors(17, 2400, 16)
    uri = make(tmp_path, "stable", vecs, max_rows_per_file=800, enable_stable_row_ids=True)
    ds = lance.dataset(uri)
    ds.delete("id < 20")
    ds.create_index("vec", "IVF_FLAT", num_partitions=4)
    lance.dataset(uri).update({"id": "id + 100000"}, where="id >= 780 AND id < 820")
    lance_cpp.run_ok("delete", uri, "id % 9 = 4")
    for qi, q in enumerate(queries(17, 5, 16)):
        for args, kw in (([], {}), (["--nprobes", "1"], {"nprobes": 1}), (["--fast-search"], {"fast_search": True})):
            assert_identical(ours(lance_cpp, uri, q, 10, *args), theirs(uri, q, 10, **kw), f"q{qi} {args}")
        assert_identical(ours(lance_cpp, uri, q, 10, "--filter", "id > 100000"),
                         theirs(uri, q, 10, filter="id > 100000", prefilter=True), f"q{qi} moved rows")


@pytest.mark.parametrize("index_type", ["IVF_FLAT", "IVF_PQ"])
def test_after_deferred_compaction(lance_cpp, tmp_path, index_type):
    """An index older than a compaction with defer_index_remap names the old
    row addresses: mapped through the fragment reuse index."""
    vecs = vectors(18, 3000, 16)
    uri = make(tmp_path, "frag_reuse", vecs, max_rows_per_file=300)
    params = {"num_partitions": 4}
    if index_type == "IVF_PQ":
        params["num_sub_vectors"] = 4
    lance.dataset(uri).create_index("vec", index_type, **params)
    lance.dataset(uri).delete("id % 11 = 3")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=1200, defer_index_remap=True)
    check = assert_identical if index_type == "IVF_FLAT" else assert_overlap
    for qi, q in enumerate(queries(18, 5, 16)):
        for args, kw in (([], {}), (["--nprobes", "2"], {"nprobes": 2})):
            got = ours(lance_cpp, uri, q, 10, *args)
            assert all(i % 11 != 3 for i, _ in got)
            check(got, theirs(uri, q, 10, **kw), f"q{qi} {args}")


@pytest.mark.skipif(not FIXTURES_ROOT.exists(), reason=FIXTURES_MISSING)
@pytest.mark.parametrize("fixture,column,dim", [("v0.8.14/corrupt_index", "vector", 128),
                                                ("v0.21.0/bad_index_fragment_bitmap", "vector", 16),
                                                ("v0.27.1/pq_in_schema", "vec", 32)])
def test_older_index_layouts_refused(lance_cpp, tmp_path, fixture, column, dim):
    """Legacy single-file and 0.27 / 0.30 layouts: refused by name, and
    exact search (--no-index) still gives pylance's use_index=False rows."""
    uri = tmp_path / "old"
    shutil.copytree(FIXTURES_ROOT / fixture, uri)
    name = lance.dataset(uri).list_indices()[0]["name"]
    q = np.full(dim, 0.5, np.float32)
    vec = ",".join(repr(float(x)) for x in q)
    proc = lance_cpp.run("search", uri, "--column", column, "--vector", vec, "--k", "5")
    assert_clean_failure(proc, name, "older")
    proc = lance_cpp.run_ok("search", uri, "--column", column, "--vector", vec, "--k", "5", "--no-index",
                            "--format", "json", "--with-row-id")
    got = [(r["_rowid"], r["_distance"]) for r in map(json.loads, proc.stdout.splitlines()) if r]
    t = lance.dataset(uri).to_table(nearest={"column": column, "q": q, "k": 5, "use_index": False},
                                    columns=[], with_row_id=True)
    assert_identical(got, list(zip(t["_rowid"].to_pylist(), t["_distance"].to_pylist())))


@pytest.mark.parametrize("damage", ["truncate_aux", "truncate_index", "missing_aux", "garbage_aux"])
def test_damaged_index_files_fail_cleanly(lance_cpp, indexed, tmp_path, damage):
    uri = copy_of(indexed("IVF_PQ", "l2"), tmp_path, "damaged")
    (seg,) = list((uri / "_indices").iterdir())
    aux, idx = seg / "auxiliary.idx", seg / "index.idx"
    if damage == "truncate_aux":
        aux.write_bytes(aux.read_bytes()[: aux.stat().st_size // 2])
    elif damage == "truncate_index":
        idx.write_bytes(idx.read_bytes()[:100])
    elif damage == "missing_aux":
        aux.unlink()
    else:
        data = bytearray(aux.read_bytes())
        for i in range(0, len(data) - 64, 97):
            data[i] ^= 0x5A
        aux.write_bytes(bytes(data))
    q = queries(20, 1, 32)[0]
    assert_clean_failure(run_ours(lance_cpp, uri, q, 10, "--nprobes", "8"))
    ours(lance_cpp, uri, q, 10, "--no-index")  # exact search does not read the index


@pytest.mark.parametrize("version", ["2.0", "2.1"])
@pytest.mark.parametrize("index_type", ["IVF_FLAT", "IVF_PQ", "IVF_SQ"])
def test_index_files_of_older_storage_versions(lance_cpp, tmp_path, version, index_type):
    """pylance writes the index files in the dataset's storage version (2.0: file version 0.3)."""
    vecs = vectors(21, 2000, 16)
    uri = make(tmp_path, "v", vecs, max_rows_per_file=700, data_storage_version=version)
    params = {"num_partitions": 4}
    if index_type == "IVF_PQ":
        params["num_sub_vectors"] = 4
    lance.dataset(uri).create_index("vec", index_type, **params)
    check = assert_identical if index_type == "IVF_FLAT" else assert_overlap
    for qi, q in enumerate(queries(21, 4, 16)):
        for args, kw in (([], {}), (["--nprobes", "2"], {"nprobes": 2})):
            check(ours(lance_cpp, uri, q, 10, *args), theirs(uri, q, 10, **kw), f"{version} q{qi} {args}")
