"""Takes from 2.1/2.2 files through the layouts a take reads in part: FSST
strings in mini-block chunks (only the kept strings are expanded), bit-packed
integers (only the kept values unpacked), constant pages with levels (lists
all null, or null and empty), lists (repetition index) and fixed-size lists of
structs (leaves counting items). pylance writes; lance-cpp takes random,
repeated and unsorted rows, before and after pylance deletes some; results
are compared with pylance's own take."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lance
from test_scan import _ipc, assert_tables_equal

ROWS = 6000


def _table(version: str) -> pa.Table:
    rng = np.random.default_rng(21)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "lambda"]
    text = [" ".join(words[(i * 7 + k) % 8] for k in range(i % 13)) + f" #{i}" for i in range(ROWS)]
    cols = {
        "id": pa.array(np.arange(ROWS, dtype=np.int64)),
        "small": pa.array(rng.integers(0, 1000, ROWS, dtype=np.int32)),
        "wide": pa.array(rng.integers(-2**62, 2**62, ROWS, dtype=np.int64)),
        "text": pa.array(text),
        "text_nulls": pa.array([None if i % 5 == 0 else t for i, t in enumerate(text)]),
        "tags": pa.array([[i % 10] * (i % 4) if i % 9 else None for i in range(ROWS)], pa.list_(pa.int32())),
        "all_null_lists": pa.array([None] * ROWS, pa.list_(pa.int32())),
        "null_or_empty": pa.array([None if i % 3 else [] for i in range(ROWS)], pa.list_(pa.int64())),
    }
    fields = [pa.field(k, v.type) for k, v in cols.items()]
    fields[3] = pa.field("text", pa.string(), metadata={"lance-encoding:compression": "fsst"})
    table = pa.Table.from_arrays(list(cols.values()), schema=pa.schema(fields))
    if version == "2.2":
        item = pa.struct([("a", pa.int32()), ("b", pa.string())])
        fsl = pa.array([[{"a": i, "b": f"b{i}"}, {"a": -i, "b": None if i % 4 == 0 else f"c{i}"}]
                        if i % 11 else None for i in range(ROWS)], pa.list_(item, 2))
        table = table.append_column("fsl_struct", fsl)
    return table


@pytest.fixture(scope="module", params=["2.1", "2.2"])
def dataset(request, tmp_path_factory):
    uri = tmp_path_factory.mktemp("take21") / f"t-{request.param}.lance"
    lance.write_dataset(_table(request.param), uri, data_storage_version=request.param)
    return uri


def _indices(n: int, seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [[n // 2], [0, n - 1], rng.integers(0, n, 100).tolist(),      # unsorted, repeated
            sorted(rng.choice(n, 300, replace=False).tolist()), [7, 7, 3, 7, n - 1, 0]]


def _column_groups(ds) -> list[list[str]]:
    # pylance 14 refuses to take a fixed-size list of structs together with
    # other columns ("columns of differing lengths"): it is taken alone.
    names = ds.schema.names
    return [[n for n in names if n != "fsl_struct"]] + [["fsl_struct"]] * ("fsl_struct" in names)


def _check_takes(tmp_path, uri, seed):
    ds = lance.dataset(uri)
    for indices in _indices(ds.count_rows(), seed):
        for columns in _column_groups(ds) + [["text", "null_or_empty"]]:
            ours = _ipc(tmp_path, "take", uri, "--indices", ",".join(map(str, indices)), "--columns", ",".join(columns))
            assert_tables_equal(ours, ds.take(indices, columns=columns), f"take {columns} {indices[:6]}")


def test_take_matches_pylance(tmp_path, dataset):
    _check_takes(tmp_path, dataset, 5)


def test_take_after_pylance_deletes(tmp_path, dataset, tmp_path_factory):
    # A copy, so the other test sees the dataset as written.
    uri = tmp_path_factory.mktemp("take21del") / dataset.name
    version = "2.2" if "2.2" in dataset.name else "2.1"
    ds = lance.write_dataset(_table(version), uri, data_storage_version=version)
    ds.delete("id % 7 = 2 OR (id > 1000 AND id < 1400)")
    _check_takes(tmp_path, uri, 6)
