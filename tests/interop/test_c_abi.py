"""The C ABI (include/lance/lance_c.h) against pylance: the C test program
(build/bin/lance_c_test, beside $LANCE_CPP_BIN) writes, reads, deletes and
updates through the C ABI only, and pylance reads what it wrote and writes
what it reads.
"""

from __future__ import annotations

import subprocess

import pyarrow as pa
import pytest

import lance

from conftest import lance_cpp_binary


@pytest.fixture(scope="module")
def c_test():
    binary = lance_cpp_binary().parent / "lance_c_test"
    if not binary.is_file():
        pytest.fail(f"{binary} not found (it is built with lance-cpp)", pytrace=False)

    def run(*args) -> str:
        proc = subprocess.run([str(binary)] + [str(a) for a in args], capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, f"lance_c_test {args} failed ({proc.returncode}):\n{proc.stderr}"
        return proc.stdout

    return run


def expected(ids) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "name": pa.array([f"n{i}" for i in ids], pa.string()),
                     "score": pa.array([i * 0.5 for i in ids], pa.float64())})


def written_by_c(ids) -> pa.Table:
    """expected(ids) as lance_c_test writes it: `id` declared not null."""
    table = expected(ids)
    return table.cast(pa.schema([table.schema.field("id").with_nullable(False)] + list(table.schema)[1:]))


def parse_dump(text: str) -> list[tuple[int, str, float]]:
    rows = []
    for line in text.splitlines():
        i, name, score = line.split(" ")
        rows.append((int(i), name, float(score)))
    return rows


def test_c_selftest_runs_in_given_directory(c_test, tmp_path):
    assert "all checks passed" in c_test(tmp_path)
    # The datasets it left are pylance-readable: t.lance ends overwritten with ids 0..9, at version 9.
    ds = lance.dataset(tmp_path / "t.lance")
    assert ds.version == 9
    assert ds.to_table().sort_by("id").equals(written_by_c(range(10)))
    ops = [v["version"] for v in ds.versions()]
    assert ops == list(range(1, 10))


def test_c_writes_pylance_reads_and_modifies(c_test, tmp_path):
    uri = tmp_path / "c.lance"
    c_test("write", uri, 300)  # files of at most 100 rows
    ds = lance.dataset(uri)
    assert ds.version == 1
    assert len(ds.get_fragments()) == 3
    assert ds.to_table().combine_chunks().equals(written_by_c(range(300)))
    assert ds.count_rows("id >= 250") == 50
    assert ds.schema.field("id").nullable is False

    # the C ABI deletes and updates; pylance sees it
    assert c_test("delete", uri, "id < 20").strip() == "20"
    assert c_test("update", uri, "name", "'x'", "id >= 290").strip() == "10"
    ds = lance.dataset(uri)
    assert ds.version == 3
    table = ds.to_table().sort_by("id")
    assert table.num_rows == 280
    assert table["id"].to_pylist() == list(range(20, 300))
    assert table["name"].to_pylist()[-10:] == ["x"] * 10

    # pylance modifies; the C ABI reads it
    ds.delete("id % 2 = 1")
    ds.update({"score": "score * 2"}, where="id < 30")
    rows = parse_dump(c_test("dump", uri))
    assert sorted(r[0] for r in rows) == list(range(20, 300, 2))
    by_id = {r[0]: r for r in rows}
    assert by_id[20] == (20, "n20", 20.0)
    assert by_id[40] == (40, "n40", 20.0)
    assert by_id[298] == (298, "x", 149.0)


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_pylance_writes_c_reads(c_test, tmp_path, version):
    uri = tmp_path / "py.lance"
    lance.write_dataset(expected(range(500)), uri, data_storage_version=version, max_rows_per_file=200)
    ds = lance.dataset(uri)
    ds.delete("id >= 100 AND id < 150")
    rows = parse_dump(c_test("dump", uri, "id % 3 = 0"))
    want = [i for i in range(500) if i % 3 == 0 and not (100 <= i < 150)]
    assert [r[0] for r in rows] == want
    assert all(r == (i, f"n{i}", i * 0.5) for r, i in zip(rows, want))
    # a bad filter is an error with a message, not a crash
    binary = lance_cpp_binary().parent / "lance_c_test"
    proc = subprocess.run([str(binary), "dump", str(uri), "id >>>"], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: scan: ")
