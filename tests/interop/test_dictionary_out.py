"""Dictionary columns whose dictionaries differ from fragment to fragment (two
appends of `dictionary_encode()`d values), as pylance writes them: every
command that writes `--out` gives an Arrow IPC file pyarrow reads as pylance's
`to_table()` / `take()` (same types, same values, nulls included), and the
table / csv / json printers show the same values."""
from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from lance.file import LanceFileWriter
from conftest import lance_cpp_binary

VERSIONS = ["2.0", "2.1", "2.2"]
# Each append draws from its own words, so each fragment has its own dictionary.
WORDS = [["apple", "pear", "fig"], ["fig", "kiwi", "lime", "plum"], ["zucchini"]]
ROWS = [1500, 900, 300]


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(lance_cpp_binary())] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120)


def _part(k: int, start: int) -> pa.Table:
    rng = np.random.default_rng(k)
    n = ROWS[k]
    words = WORDS[k]
    vals = [None if rng.random() < 0.15 else words[int(rng.integers(0, len(words)))] for _ in range(n)]
    inner = [None if rng.random() < 0.1 else words[int(rng.integers(0, len(words)))] for _ in range(n)]
    return pa.table({
        "id": pa.array(range(start, start + n), pa.int64()),
        "c": pa.array(vals, pa.string()).dictionary_encode(),
        "s": pa.StructArray.from_arrays([pa.array(inner, pa.string()).dictionary_encode(),
                                         pa.array(range(n), pa.int32())], ["d", "n"]),
    })


@pytest.fixture(scope="module", params=VERSIONS)
def dataset(request, tmp_path_factory) -> Path:
    uri = tmp_path_factory.mktemp("dict") / f"d-{request.param}.lance"
    start = 0
    for k in range(len(ROWS)):
        lance.write_dataset(_part(k, start), uri, mode="create" if k == 0 else "append",
                            data_storage_version=request.param)
        start += ROWS[k]
    ds = lance.dataset(uri)
    assert len(ds.get_fragments()) == 3
    # pylance keeps the dictionary type in every version, one dictionary per fragment.
    table = ds.to_table()
    assert pa.types.is_dictionary(table.schema.field("c").type)
    assert len({c.dictionary.to_pylist().__repr__() for c in table.column("c").chunks}) > 1
    return uri


def _read_out(tmp_path: Path, *args) -> pa.Table:
    out = tmp_path / f"out-{abs(hash(args))}.arrow"
    proc = _run(*args, "--out", out)
    assert proc.returncode == 0, f"lance-cpp {' '.join(map(str, args))} failed:\n{proc.stderr}"
    with ipc.open_file(out) as f:
        return f.read_all()


def _assert_same(ours: pa.Table, theirs: pa.Table):
    assert ours.schema.names == theirs.schema.names
    assert [f.type for f in ours.schema] == [f.type for f in theirs.schema]
    assert ours.num_rows == theirs.num_rows
    # to_pylist decodes the dictionaries: values (and nulls) are what must agree.
    assert ours.to_pylist() == theirs.to_pylist()


def test_scan_out(tmp_path, dataset):
    _assert_same(_read_out(tmp_path, "scan", dataset), lance.dataset(dataset).to_table())


def test_scan_out_filter_and_projection(tmp_path, dataset):
    ds = lance.dataset(dataset)
    for filt, cols in [("id >= 1400 AND id < 2500", ["c", "id"]),
                       ("c IS NULL OR id > 2300", ["s", "c"]),
                       ("id < 100 OR id >= 2600", ["c"])]:
        ours = _read_out(tmp_path, "scan", dataset, "--filter", filt, "--columns", ",".join(cols))
        _assert_same(ours, ds.to_table(columns=cols, filter=filt))
    ours = _read_out(tmp_path, "scan", dataset, "--columns", "s.d,id", "--limit", "50", "--offset", "1480")
    theirs = ds.to_table(columns={"s.d": "s.d", "id": "id"}, limit=50, offset=1480)
    _assert_same(ours, theirs)


def test_take_out(tmp_path, dataset):
    ds = lance.dataset(dataset)
    indices = [2699, 0, 1500, 3, 2400, 1499, 1500, 2000]
    _assert_same(_read_out(tmp_path, "take", dataset, "--indices", ",".join(map(str, indices))), ds.take(indices))
    _assert_same(_read_out(tmp_path, "take", dataset, "--indices", ",".join(map(str, indices)), "--columns", "s,c"),
                 ds.take(indices, columns=["s", "c"]))
    # Without stable row ids, row ids are addresses: (fragment << 32) | offset.
    row_ids = [(2 << 32) | 5, 7, (1 << 32) | 899, 0]
    _assert_same(_read_out(tmp_path, "take", dataset, "--row-ids", ",".join(map(str, row_ids))),
                 ds._take_rows(row_ids))


def test_printers(dataset):
    """table / csv / json: the values of every fragment, nulls included."""
    ds = lance.dataset(dataset)
    want = ds.to_table(columns=["id", "c"]).to_pylist()
    proc = _run("scan", dataset, "--columns", "id,c", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line) for line in proc.stdout.splitlines()] == want
    proc = _run("scan", dataset, "--columns", "id,c", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.reader(io.StringIO(proc.stdout)))
    assert rows[0] == ["id", "c"]
    assert [(int(r[0]), r[1]) for r in rows[1:]] == [(w["id"], w["c"] or "") for w in want]
    proc = _run("scan", dataset, "--columns", "id,c", "--format", "table")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["id", "c"]
    assert [line.split() for line in lines[2:-1]] == [[str(w["id"]), w["c"] or "null"] for w in want]
    assert lines[-1] == f"({len(want)} rows)"


@pytest.mark.parametrize("version", VERSIONS)
def test_file_read_out(tmp_path, version):
    """One .lance file whose batches had their own dictionaries."""
    parts = [_part(k, sum(ROWS[:k])) for k in range(len(ROWS))]
    path = tmp_path / "f.lance"
    with LanceFileWriter(str(path), parts[0].schema, version=version) as w:
        for p in parts:
            w.write_batch(p)
    ours = _read_out(tmp_path, "file", "read", path)
    from lance.file import LanceFileReader
    _assert_same(ours, LanceFileReader(str(path)).read_all().to_table())
