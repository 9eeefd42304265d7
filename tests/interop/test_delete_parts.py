"""lance-cpp deletes from a fragment large enough to be scanned in parallel
parts (600k rows; and from several fragments), with deletion vectors pylance wrote before: pylance then
reads exactly the rows a pylance delete of the same predicate leaves, from
deletion files of the same kind, and keeps deleting."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lance
from conftest import lance_cpp_binary

ROWS = 600_005
PREDICATE = "id % 100 = 7 OR v IS NULL OR id >= 600003"


def _table() -> pa.Table:
    ids = np.arange(ROWS, dtype=np.int64)
    v = pa.array((ids % 7).astype(np.int32), mask=(ids % 9973 == 0))
    return pa.table({"id": pa.array(ids), "v": v})


def _deletions(uri: Path) -> list[tuple[int, int, str]]:
    out = []
    for f in lance.dataset(uri).get_fragments():
        d = f.metadata.deletion_file
        out.append((f.fragment_id, d.num_deleted_rows if d else 0, d.file_type if d else ""))
    return out


@pytest.mark.parametrize("per_file", [ROWS, 300_000])
@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_delete_in_parts_matches_pylance(tmp_path, version, per_file):
    base = tmp_path / "base.lance"
    lance.write_dataset(_table(), base, data_storage_version=version, max_rows_per_file=per_file)
    lance.dataset(base).delete("id % 1000 = 3")  # deletion files to merge into
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)

    proc = subprocess.run([str(lance_cpp_binary()), "delete", str(ours), PREDICATE],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lance.dataset(theirs).delete(PREDICATE)

    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert a.version == b.version == 3
    assert a.count_rows() == b.count_rows()
    assert _deletions(ours) == _deletions(theirs)
    ids_a = a.to_table(columns=["id"])["id"].to_pylist()
    assert ids_a == b.to_table(columns=["id"])["id"].to_pylist()
    ids = np.arange(ROWS)
    expected = ids[(ids % 1000 != 3) & (ids % 100 != 7) & (ids % 9973 != 0) & (ids < 600003)]
    assert ids_a == expected.tolist()

    # pylance keeps deleting on top of ours.
    a.delete("id < 10")
    assert lance.dataset(ours).count_rows() == int((expected >= 10).sum())
