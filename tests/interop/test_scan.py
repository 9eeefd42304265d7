"""Scan, take and count: lance-cpp against pylance on datasets pylance writes
at test time (file versions 2.0, 2.1, 2.2; several seeds), and on every
fixture dataset. Results travel as Arrow IPC files (`--out`) and are compared
column by column."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from conftest import FIXTURES_ROOT, lance_cpp_binary, shared_fixture_params
from test_generated import rich_table

VERSIONS = ["2.0", "2.1", "2.2"]
SEEDS = [1, 2]


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(lance_cpp_binary())] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=300)


def _ipc(tmp_path: Path, *args) -> pa.Table:
    out = tmp_path / f"out-{abs(hash(args))}.arrow"
    proc = _run(*args, "--out", out)
    assert proc.returncode == 0, f"lance-cpp {' '.join(map(str, args))} failed:\n{proc.stderr}"
    with ipc.open_file(out) as f:
        return f.read_all()


def assert_tables_equal(ours: pa.Table, theirs: pa.Table, what: str):
    assert ours.schema.names == theirs.schema.names, f"{what}: columns {ours.schema.names} vs {theirs.schema.names}"
    assert ours.num_rows == theirs.num_rows, f"{what}: {ours.num_rows} rows vs {theirs.num_rows}"
    for name in theirs.schema.names:
        a, b = ours.column(name).combine_chunks(), theirs.column(name).combine_chunks()
        assert a.type == b.type, f"{what}: column {name} type {a.type} vs {b.type}"
        if pa.types.is_dictionary(a.type):
            # Which dictionary holds the values (and in what order) is not
            # part of the data: compare the values themselves.
            a, b = a.dictionary_decode(), b.dictionary_decode()
        if not a.equals(b):
            diff = [i for i in range(len(a)) if a[i] != b[i]][:5]
            pytest.fail(f"{what}: column {name} differs at rows {diff}: "
                        f"{[a[i] for i in diff]} vs {[b[i] for i in diff]}")


def _random_table(seed: int, start: int, n: int) -> pa.Table:
    """Random nulls at every level the file version can hold."""
    rng = np.random.default_rng(seed * 1000 + start)
    ids = np.arange(start, start + n)
    def mask(p=0.2):
        return rng.random(n) < p
    ints = {f"i{w}": pa.array(rng.integers(-2 ** (w - 1), 2 ** (w - 1) - 1, n, dtype=f"int{w}"), mask=mask())
            for w in (8, 16, 32, 64)}
    uints = {f"u{w}": pa.array(rng.integers(0, 2 ** w - 1, n, dtype=f"uint{w}"), mask=mask())
             for w in (8, 16, 32, 64)}
    strs = [None if m else "".join(chr(97 + x) for x in rng.integers(0, 26, rng.integers(0, 40)))
            for m in mask()]
    lists = [None if m else [None if rng.random() < 0.1 else int(x) for x in rng.integers(0, 100, rng.integers(0, 6))]
             for m in mask()]
    # Two levels of repetition: mini-block pages with a depth-2 repetition index.
    nested = [None if m else [None if rng.random() < 0.1 else [int(x) for x in rng.integers(0, 9, rng.integers(0, 4))]
                              for _ in range(rng.integers(0, 4))]
              for m in mask(0.1)]
    t = pa.table({
        "id": pa.array(ids, pa.int64()),
        **ints, **uints,
        "f32": pa.array(rng.random(n, dtype=np.float32), mask=mask()),
        "f64": pa.array(rng.random(n), mask=mask()),
        "b": pa.array(rng.random(n) < 0.5, mask=mask()),
        "s": pa.array(strs, pa.string()),
        "ls": pa.array(strs, pa.large_string()),
        "bin": pa.array([None if x is None else x.encode() for x in strs], pa.binary()),
        "l": pa.array(lists, pa.list_(pa.int32())),
        "ll": pa.array(nested, pa.list_(pa.list_(pa.int32()))),
        "vec": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 4, dtype=np.float32)), 4),
        "long": pa.array([None if m else "x" * int(rng.integers(256, 600)) for m in mask(0.1)], pa.string()),
    })
    return t


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("scan")
    made = {}
    for v in VERSIONS:
        for seed in SEEDS:
            uri = root / f"rand-{v}-{seed}.lance"
            lance.write_dataset(_random_table(seed, 0, 700), uri, data_storage_version=v, max_rows_per_file=300)
            ds = lance.write_dataset(_random_table(seed, 700, 400), uri, mode="append")
            ds.delete("id % 10 = 3")           # few deletions: .arrow files
            made[("rand", v, seed)] = uri
        uri = root / f"rich-{v}.lance"
        lance.write_dataset(rich_table(0, 600, 3), uri, data_storage_version=v)
        ds = lance.write_dataset(rich_table(600, 6600, 4), uri, mode="append")
        ds.delete("id >= 700 AND id < 6000")   # many deletions: .bin files
        made[("rich", v, 0)] = uri
        uri = root / f"stable-{v}.lance"
        ds = lance.write_dataset(_random_table(5, 0, 500), uri, data_storage_version=v, enable_stable_row_ids=True)
        ds.update({"s": "'updated'"}, where="id < 50")
        ds.delete("id % 9 = 0")
        made[("stable", v, 0)] = uri
        # Wide rows (4 KiB vectors): scans cut the fragment into several
        # windows, so deletions, filters and row ids must line up across them.
        uri = root / f"wide-{v}.lance"
        wide = _random_table(8, 0, 10000)
        rng = np.random.default_rng(8)
        wide = wide.append_column("emb", pa.FixedSizeListArray.from_arrays(
            pa.array(rng.random(10000 * 1024, dtype=np.float32)), 1024))
        ds = lance.write_dataset(wide, uri, data_storage_version=v, enable_stable_row_ids=True)
        ds.delete("id % 7 = 1 OR (id > 3000 AND id < 3100)")
        ds.update({"s": "'changed'"}, where="id % 1000 = 5")
        made[("wide", v, 0)] = uri
        uri = root / f"empty-{v}.lance"
        lance.write_dataset(_random_table(6, 0, 0), uri, data_storage_version=v)
        made[("empty", v, 0)] = uri
        uri = root / f"one-{v}.lance"
        lance.write_dataset(_random_table(7, 0, 1), uri, data_storage_version=v)
        made[("one", v, 0)] = uri
    yield made
    shutil.rmtree(root, ignore_errors=True)


DATASETS = [(k, v, s) for v in VERSIONS for k, s in [("rand", 1), ("rand", 2), ("rich", 0), ("stable", 0),
                                                        ("wide", 0), ("empty", 0), ("one", 0)]]


def _id(p):
    return f"{p[0]}-{p[1]}-{p[2]}"


@pytest.mark.parametrize("key", DATASETS, ids=[_id(p) for p in DATASETS])
def test_full_scan(tmp_path, datasets, key):
    uri = datasets[key]
    theirs = lance.dataset(uri).to_table()
    ours = _ipc(tmp_path, "scan", uri)
    assert_tables_equal(ours, theirs, f"scan {uri.name}")


@pytest.mark.parametrize("key", [k for k in DATASETS if k[0] in ("rand", "stable", "wide")], ids=_id)
def test_scan_options(tmp_path, datasets, key):
    uri = datasets[key]
    ds = lance.dataset(uri)
    cases = [
        dict(columns=["s", "id"]),
        dict(columns=["id", "l"], limit=17, offset=250),
        dict(columns=["id"], with_row_id=True, with_row_address=True),
        dict(columns=["id", "f64"], filter="i32 > 0 AND s IS NOT NULL"),
        dict(columns=["id"], filter="id BETWEEN 100 AND 200 OR u8 IN (1, 2, 3)", limit=5, offset=2),
    ]
    for c in cases:
        args = ["scan", uri]
        if "columns" in c:
            args += ["--columns", ",".join(c["columns"])]
        if "filter" in c:
            args += ["--filter", c["filter"]]
        if "limit" in c:
            args += ["--limit", c["limit"]]
        if "offset" in c:
            args += ["--offset", c["offset"]]
        if c.get("with_row_id"):
            args.append("--with-row-id")
        if c.get("with_row_address"):
            args.append("--with-row-address")
        theirs = ds.to_table(**c)
        assert_tables_equal(_ipc(tmp_path, *args), theirs, f"{uri.name} {c}")


def test_nested_projection(tmp_path, datasets):
    uri = datasets[("rich", "2.2", 0)]
    theirs = lance.dataset(uri).to_table(columns=["st.b.c", "id", "st.a"])
    assert_tables_equal(_ipc(tmp_path, "scan", uri, "--columns", "st.b.c,id,st.a"), theirs, "nested projection")


@pytest.mark.parametrize("key", [k for k in DATASETS if k[0] in ("rand", "rich", "stable", "wide")], ids=_id)
def test_take(tmp_path, datasets, key):
    uri = datasets[key]
    ds = lance.dataset(uri)
    n = ds.count_rows()
    rng = np.random.default_rng(11)
    for indices in ([0], [n - 1], sorted(rng.choice(n, 50, replace=False).tolist()),
                    rng.integers(0, n, 100).tolist(),  # unsorted, repeated
                    [5, 5, 5, 0]):
        theirs = ds.take(indices)
        ours = _ipc(tmp_path, "take", uri, "--indices", ",".join(map(str, indices)))
        assert_tables_equal(ours, theirs, f"take {indices[:6]}")
    theirs = ds.take([3, 1], columns=["id"])
    assert_tables_equal(_ipc(tmp_path, "take", uri, "--indices", "3,1", "--columns", "id"), theirs, "take cols")


@pytest.mark.parametrize("key", [k for k in DATASETS if k[0] in ("rand", "stable", "wide")], ids=_id)
def test_take_row_ids(tmp_path, datasets, key):
    uri = datasets[key]
    ds = lance.dataset(uri)
    ids = ds.to_table(columns=["id"], with_row_id=True)["_rowid"].to_pylist()
    rng = np.random.default_rng(5)
    pick = [ids[i] for i in rng.integers(0, len(ids), 40)]
    theirs = ds._take_rows(pick)
    ours = _ipc(tmp_path, "take", uri, "--row-ids", ",".join(map(str, pick)))
    assert_tables_equal(ours, theirs, "take by row id")


@pytest.mark.parametrize("key", DATASETS, ids=[_id(p) for p in DATASETS])
def test_count(datasets, key):
    uri = datasets[key]
    ds = lance.dataset(uri)
    filters = [None, "id > 100"] + (["flag AND small < 10", "note LIKE 'note-1%'"] if key[0] == "rich"
                                     else ["s IS NULL", "i8 < 0 AND NOT b"])
    for flt in filters:
        args = ["count", uri] + (["--filter", flt] if flt else [])
        proc = _run(*args)
        assert proc.returncode == 0, proc.stderr
        assert int(proc.stdout.strip()) == ds.count_rows(filter=flt), flt


def fixture_datasets() -> list[str]:
    if not FIXTURES_ROOT.is_dir():
        return []
    return sorted(str(p.parent.relative_to(FIXTURES_ROOT)) for p in FIXTURES_ROOT.rglob("_versions") if p.is_dir())


@pytest.mark.parametrize("name", shared_fixture_params(fixture_datasets()), ids=str)
def test_fixture_scan(tmp_path, name):
    src = FIXTURES_ROOT / name
    uri = tmp_path / "ds"
    shutil.copytree(src, uri)
    try:
        theirs = lance.dataset(str(uri)).to_table()
    except Exception as exc:  # noqa: BLE001 - pylance itself cannot read it
        proc = _run("scan", uri)
        assert proc.returncode in (0, 1) and (proc.returncode == 0 or proc.stderr.startswith("error: ")), proc.stderr
        pytest.skip(f"pylance cannot scan {name}: {exc}")
    assert_tables_equal(_ipc(tmp_path, "scan", uri), theirs, f"fixture {name}")
