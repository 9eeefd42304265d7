"""Damaged files never crash or hang the CLI: a pylance-written dataset has
one of its files truncated, bit-flipped or zeroed at the tail (seeded), and
every reading command either succeeds (a flipped value bit is not
detectable: Lance files carry no checksums) or exits 1 with exactly one
`error:` line. `verify --deep` reports findings or that one error line."""
from __future__ import annotations

import random
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import lance
from conftest import describe_result

KINDS = ["data", "deletion", "index", "transaction", "manifest"]
DAMAGES = ["truncate", "flip", "zero_tail"]
SEEDS = [0, 1]


@pytest.fixture(scope="module", params=["2.0", "2.1"])
def source(request, tmp_path_factory) -> Path:
    uri = tmp_path_factory.mktemp(f"damage-{request.param}") / "ds.lance"
    n = 3000
    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "name": pa.array([f"name-{i % 97}" for i in range(n)]),
        "v": pa.array([float(i) * 0.5 for i in range(n)]),
        "tags": pa.array([[f"t{i % 5}", f"t{i % 3}"] for i in range(n)], pa.list_(pa.string())),
    })
    lance.write_dataset(table, uri, data_storage_version=request.param, max_rows_per_file=1000)
    ds = lance.dataset(uri)
    ds.delete("id % 7 = 0")
    ds.create_scalar_index("id", "BTREE")
    return uri


def _pick(root: Path, kind: str) -> Path:
    pattern = {
        "data": "data/*.lance",
        "deletion": "_deletions/*",
        "index": "_indices/*/*",
        "transaction": "_transactions/*.txn",
        "manifest": "_versions/*.manifest",
    }[kind]
    files = sorted(root.glob(pattern))
    assert files, f"no {kind} file in {root}"
    if kind == "manifest":
        # The latest: the one every command reads (v1 or v2 naming).
        version = lance.dataset(root).version
        names = {f"{version}.manifest", f"{2**64 - 1 - version:020}.manifest"}
        latest = [f for f in files if f.name in names]
        assert len(latest) == 1, files
        return latest[0]
    return files[0]


def _damage(path: Path, damage: str, rng: random.Random) -> None:
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: rng.randrange(len(data))]
    elif damage == "flip":
        for _ in range(8):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    else:
        n = rng.randint(1, min(len(data), 4096))
        data[len(data) - n:] = bytes(n)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("kind", KINDS)
def test_damaged_file_never_crashes(lance_cpp, source, tmp_path, kind, damage, seed):
    uri = tmp_path / "ds.lance"
    shutil.copytree(source, uri)
    rng = random.Random(f"{kind}-{damage}-{seed}")
    target = _pick(uri, kind)
    _damage(target, damage, rng)

    def check(proc) -> None:
        # Rows already printed may precede the error of a streaming scan;
        # the exit status says the output is incomplete.
        assert proc.returncode in (0, 1), "crash or bad exit status\n" + describe_result(proc)
        if proc.returncode == 0:
            return
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), describe_result(proc)
        assert target.name in lines[0] or target.parent.name in lines[0], (
            f"the error does not name {target}\n" + describe_result(proc))

    for args in (
        ["count", uri],
        ["count", uri, "--filter", "id > 100"],
        ["scan", uri, "--filter", "id BETWEEN 990 AND 1010", "--format", "json"],
        ["scan", uri, "--columns", "name,tags", "--limit", "20", "--offset", "1500", "--format", "json"],
        ["take", uri, "--indices", "0,5,1500,2400"],
        ["inspect", uri, "--json"],
    ):
        check(lance_cpp.run(*args))

    proc = lance_cpp.run("verify", uri, "--deep")
    if proc.stdout.strip():
        # Findings, one per line, each naming a file.
        assert proc.returncode == 1, describe_result(proc)
        assert target.name in proc.stdout or target.parent.name in proc.stdout, describe_result(proc)
    else:
        check(proc)
