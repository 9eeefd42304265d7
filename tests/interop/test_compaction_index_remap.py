"""Compaction over indexed fragments: lance-cpp remaps the indices as
pylance 14 does (defer_index_remap false). The same dataset compacted by
each side gives the same index entries (new uuids for the remapped ones,
fragment bitmaps swapped; zone maps and Bloom filters left as pylance
leaves them), the same Rewrite rewritten_indices, index files decoding to
the same contents, and indexed answers equal to the unindexed ones on both
sides. Also the reverse: pylance compacts over lance-cpp's indices. Vector
indices (and the refusal of those lance-cpp cannot remap):
test_compaction_vector_remap.py."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lance
from test_list_zone_index_build import _assert_files_equal, _decoded_files
from test_scalar_index_build import _entries, _normalized, _ok, _run

pytestmark = pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")

INDICES = [("id", "BTREE", "id_idx"), ("s", "BITMAP", "s_idx"), ("l", "LABEL_LIST", "l_idx"),
           ("t", "NGRAM", "t_ng"), ("id", "ZONEMAP", "id_zm"), ("s", "BLOOMFILTER", "s_bf")]
FILTERS = ["id = 7", "id < 130", "id > 2950", "s = 'k3'", "s IN ('k1', 'k8')", "s IS NULL",
           "array_has_any(l, [2])", "array_has_all(l, [0, 1])", "contains(t, 'abc')", "t LIKE 'xyz%'"]


def _table(seed: int, start: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    words = ["abcde", "xyzab", "qwabc", "zzzzz", "mnopq"]
    return pa.table({
        "id": pa.array(np.arange(start, start + n), pa.int64()),
        "s": pa.array([f"k{k}" for k in rng.integers(0, 10, n)], pa.string(), mask=rng.random(n) < 0.05),
        "l": pa.array([[int(v) for v in rng.integers(0, 4, rng.integers(0, 3))] for _ in range(n)],
                      pa.list_(pa.int64())),
        "t": pa.array([words[k] + str(k) for k in rng.integers(0, 5, n)], pa.string()),
    })


def _make(uri: Path, version: str, stable: bool, builder: str) -> Path:
    lance.write_dataset(_table(1, 0, 3000), uri, max_rows_per_file=500, data_storage_version=version,
                        enable_stable_row_ids=stable)
    for col, kind, name in INDICES:
        if builder == "pylance":
            lance.dataset(uri).create_scalar_index(col, kind, name=name)
        else:
            _ok("create-index", uri, col, "--type", kind, "--name", name)
    lance.dataset(uri).delete("id % 5 = 0 OR (id >= 1200 AND id < 1300)")
    # An unindexed fragment: its own bin, left alone.
    lance.write_dataset(_table(2, 3000, 100), uri, mode="append")
    return uri


def _varint(b: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def _fields(b: bytes) -> list[tuple[int, object]]:
    """A protobuf message's (field, value) pairs: ints, or bytes for the
    length-delimited ones."""
    out, i = [], 0
    while i < len(b):
        key, i = _varint(b, i)
        wire = key & 7
        if wire == 0:
            v, i = _varint(b, i)
        elif wire == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise AssertionError(f"wire type {wire}")
        out.append((key >> 3, v))
    return out


def _rewritten_indices(uri: Path) -> list[dict]:
    """The rewritten_indices of the latest Rewrite transaction, by field
    (pylance 14 cannot read its own back: get_transactions fails)."""
    rewrites = [dict(_fields(t.read_bytes())) for t in (Path(uri) / "_transactions").glob("*.txn")]
    rewrite = max((r for r in rewrites if 104 in r), key=lambda r: r[1])[104]
    out = []
    for f, v in _fields(rewrite):
        if f != 4:
            continue
        entry = {"files": [], "version": 0}
        for g, w in _fields(v):
            if g == 3:
                entry["details"] = [(h, x) for h, x in _fields(w)]
            elif g == 4:
                entry["version"] = w
            elif g == 5:
                entry["files"].append(dict(_fields(w)))
            elif g not in (1, 2):
                raise AssertionError(f"RewrittenIndex field {g}")
        out.append(entry)
    return sorted(out, key=lambda e: repr(e["details"]))


def _assert_answers(uri: Path):
    ds = lance.dataset(uri)
    for filt in FILTERS:
        full = sorted(ds.to_table(columns=["id"], filter=filt, use_scalar_index=False)["id"].to_pylist())
        assert sorted(ds.to_table(columns=["id"], filter=filt)["id"].to_pylist()) == full, filt
        assert int(_ok("count", uri, "--filter", filt).stdout) == len(full), filt
        out = Path(uri).parent / "scan.arrow"
        _ok("scan", uri, "--columns", "id", "--filter", filt, "--out", out)
        with pa.ipc.open_file(out) as f:
            assert sorted(f.read_all()["id"].to_pylist()) == full, filt


@pytest.mark.parametrize("version,stable", [("2.0", False), ("2.1", False), ("2.2", False), ("2.1", True),
                                            ("2.2", True)])
def test_compaction_remaps_indices_as_pylance(tmp_path, version, stable):
    ours = _make(tmp_path / "ours", version, stable, "pylance")
    theirs = _make(tmp_path / "theirs", version, stable, "pylance")
    before = {uri: {i["name"]: i["uuid"] for i in lance.dataset(uri).list_indices()} for uri in (ours, theirs)}
    _ok("compact", ours)
    lance.dataset(theirs).optimize.compact_files()
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert a.version == b.version
    assert _entries(a) == _entries(b)
    views = [json.loads(_ok("inspect", uri, "--json").stdout) for uri in (ours, theirs)]
    assert _normalized(views[0]) == _normalized(views[1])
    # The remapped ones have new uuids, as pylance's; the others keep theirs.
    kept = lambda uri: sorted(i["name"] for i in lance.dataset(uri).list_indices()  # noqa: E731
                              if before[uri][i["name"]] == i["uuid"])
    assert kept(ours) == kept(theirs)
    assert kept(ours) == (["id_zm", "l_idx", "s_bf", "s_idx", "t_ng"] if stable else ["id_zm", "s_bf"])
    assert _rewritten_indices(ours) == _rewritten_indices(theirs)
    _assert_files_equal(_decoded_files(ours, a), _decoded_files(theirs, b))
    _assert_answers(ours)
    _assert_answers(theirs)


def test_pylance_compacts_lance_cpp_indices_and_back(tmp_path):
    uri = _make(tmp_path / "ds", "2.1", False, "lance-cpp")
    lance.dataset(uri).optimize.compact_files()
    _assert_answers(uri)
    lance.dataset(uri).delete("id % 7 = 1")
    lance.write_dataset(_table(3, 5000, 300), uri, mode="append", max_rows_per_file=100)
    # (lance-cpp does not optimize NGRAM indices yet.)
    _ok("optimize-indices", uri, "--index", "id_idx,s_idx,l_idx,id_zm,s_bf")
    before = lance.dataset(uri).version
    _ok("compact", uri)
    assert lance.dataset(uri).version == before + 2  # ReserveFragments, then the Rewrite
    _assert_answers(uri)
    # pylance optimizes what lance-cpp remapped.
    lance.write_dataset(_table(4, 9000, 50), uri, mode="append")
    lance.dataset(uri).optimize.optimize_indices()
    _assert_answers(uri)
