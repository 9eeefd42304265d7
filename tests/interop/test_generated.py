"""`lance-cpp inspect --json` / `versions` against datasets that pylance writes
at test time.  Every scenario is built once per session (fixed seeds) and
compared at its latest version and at every version (`--version N`), plus
tag names where the scenario has tags.  One test id per scenario/version.
"""

from __future__ import annotations

import datetime as dt
import decimal
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pyarrow as pa
import pytest

import lance
from conftest import (
    OneOf,
    assert_versions_output,
    assert_view_matches,
    manifest_naming_from_listing,
    probe_next_row_id,
    pylance_view,
    small_table,
)

# --------------------------------------------------------------------------- #
# Data
# --------------------------------------------------------------------------- #

INNER = pa.struct([("c", pa.string()), ("d", pa.list_(pa.float64()))])
RICH_STRUCT = pa.struct([("a", pa.int32()), ("b", INNER)])
RICH_SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("st", RICH_STRUCT),
    pa.field("tags", pa.list_(pa.int16())),
    pa.field("words", pa.large_list(pa.string())),
    pa.field("vector", pa.list_(pa.float32(), 8)),
    pa.field("category", pa.dictionary(pa.int32(), pa.string())),
    pa.field("ts_utc", pa.timestamp("us", tz="UTC")),
    pa.field("ts_ny", pa.timestamp("ns", tz="America/New_York")),
    pa.field("ts_naive", pa.timestamp("ms")),
    pa.field("price", pa.decimal128(12, 3)),
    pa.field("text", pa.large_string()),
    pa.field("blob", pa.large_binary()),
    pa.field("raw", pa.binary()),
    pa.field("fixed", pa.binary(4)),
    pa.field("day", pa.date32()),
    pa.field("flag", pa.bool_(), nullable=False),
    pa.field("half", pa.float16()),
    pa.field("tod", pa.time64("us")),
    pa.field("small", pa.uint8()),
    pa.field("note", pa.string(), nullable=False),
])


def rich_table(start: int, stop: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = list(range(start, stop))
    n = len(ids)
    base_ts = dt.datetime(2024, 1, 1)
    cats = ["red", "green", "blue"]
    cols = {
        "id": pa.array(ids, pa.int64()),
        # (no null structs: file version 2.0 cannot encode struct validity)
        "st": pa.array([{"a": i if i % 11 else None,
                         "b": {"c": f"c{i}", "d": [i * 0.5, -i * 0.25]}} for i in ids],
                        RICH_STRUCT),
        "tags": pa.array([[i % 5, (i * 3) % 7] if i % 13 else None for i in ids], pa.list_(pa.int16())),
        "words": pa.array([[f"w{i}", f"x{i % 3}"] for i in ids], pa.large_list(pa.string())),
        "vector": pa.FixedSizeListArray.from_arrays(
            pa.array(rng.random(n * 8, dtype=np.float32)), 8),
        "category": pa.array([cats[i % 3] for i in ids]).dictionary_encode()
        .cast(pa.dictionary(pa.int32(), pa.string())),
        "ts_utc": pa.array([base_ts + dt.timedelta(seconds=i) for i in ids], pa.timestamp("us", tz="UTC")),
        "ts_ny": pa.array([base_ts + dt.timedelta(minutes=i) for i in ids],
                          pa.timestamp("ns", tz="America/New_York")),
        "ts_naive": pa.array([base_ts + dt.timedelta(hours=i) for i in ids], pa.timestamp("ms")),
        "price": pa.array([decimal.Decimal(i) / 1000 for i in ids], pa.decimal128(12, 3)),
        "text": pa.array([f"text {i}" * (i % 4) for i in ids], pa.large_string()),
        "blob": pa.array([bytes([i % 256]) * (i % 5) for i in ids], pa.large_binary()),
        "raw": pa.array([None if i % 9 == 0 else bytes([i % 256]) for i in ids], pa.binary()),
        "fixed": pa.array([int(i).to_bytes(4, "little") for i in ids], pa.binary(4)),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 400) for i in ids], pa.date32()),
        "flag": pa.array([i % 2 == 0 for i in ids], pa.bool_()),
        "half": pa.array(rng.random(n).astype(np.float16), pa.float16()),
        "tod": pa.array([dt.time(i % 24, i % 60, i % 60) for i in ids], pa.time64("us")),
        "small": pa.array([i % 256 for i in ids], pa.uint8()),
        "note": pa.array([f"note-{i}" for i in ids], pa.string()),
    }
    return pa.table(cols, schema=RICH_SCHEMA)


def vector_table(start: int, stop: int, seed: int, dim: int = 16) -> pa.Table:
    rng = np.random.default_rng(seed)
    n = stop - start
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * dim, dtype=np.float32)), dim)
    return pa.table({"id": pa.array(range(start, stop), pa.int64()), "vec": vec})


def _del_types(ds) -> dict[int, Optional[str]]:
    return {f.fragment_id: (f.metadata.deletion_file.file_type if f.metadata.deletion_file else None)
            for f in ds.get_fragments()}


# --------------------------------------------------------------------------- #
# Scenarios
# --------------------------------------------------------------------------- #


@dataclass
class Scenario:
    build: Callable[[str], None]
    n_versions: int
    naming: str  # pylance 14.0.2 writes V2 manifest names by default
    tags: dict[str, int] = field(default_factory=dict)
    stable_row_ids: bool = False


def build_rich(dsv: str) -> Callable[[str], None]:
    def build(uri: str) -> None:
        lance.write_dataset(rich_table(0, 300, 1), uri, data_storage_version=dsv,
                            enable_v2_manifest_paths=(dsv != "2.1"))
        lance.write_dataset(rich_table(300, 500, 2), uri, mode="append")
        ds = lance.dataset(uri)
        ds.delete("id % 7 = 0")
        assert ds.data_storage_version == dsv
    return build


def build_history(v2_paths: bool) -> Callable[[str], None]:
    def build(uri: str) -> None:
        lance.write_dataset(small_table(0, 1000), uri, enable_v2_manifest_paths=v2_paths)  # v1
        for k in range(3):                                                                    # v2-4
            lance.write_dataset(small_table(1000 + 100 * k, 1100 + 100 * k), uri, mode="append")
        lance.dataset(uri).delete("id >= 500 AND id < 600")                                   # v5
        lance.write_dataset(small_table(5000, 5050), uri, mode="overwrite")                   # v6
        ds = lance.dataset(uri, version=3)
        ds.restore()                                                                          # v7
        assert manifest_naming_from_listing(uri) == ("v2" if v2_paths else "v1")
    return build


def build_migrated(uri: str) -> None:
    lance.write_dataset(small_table(0, 100), uri, enable_v2_manifest_paths=False)  # v1 (V1)
    ds = lance.write_dataset(small_table(100, 200), uri, mode="append")  # v2
    ds.migrate_manifest_paths_v2()
    lance.write_dataset(small_table(200, 300), uri, mode="append")  # v3 (all V2 names now)
    assert manifest_naming_from_listing(uri) == "v2"


def build_deletions(uri: str) -> None:
    lance.write_dataset(small_table(0, 12000), uri, max_rows_per_file=8000,
                        enable_v2_manifest_paths=False)                        # v1: 8000 + 4000 rows
    ds = lance.dataset(uri)
    ds.delete("id % 100 = 0")                                                  # v2: 80 + 40 -> .arrow
    assert set(_del_types(ds).values()) == {"array"}, _del_types(ds)
    ds.delete("id < 6000")                                                     # v3: frag 0 > 5000 -> .bin
    assert _del_types(ds) == {0: "bitmap", 1: "array"}, _del_types(ds)
    ds = lance.write_dataset(small_table(12000, 13000), uri, mode="append")   # v4
    ds.delete("id >= 12000")                                                   # v5: frag 2 removed
    assert sorted(_del_types(ds)) == [0, 1]


def build_stable_row_ids(uri: str) -> None:
    lance.write_dataset(small_table(0, 10000), uri, enable_stable_row_ids=True,
                        max_rows_per_file=6000)                                # v1
    lance.write_dataset(small_table(10000, 10500), uri, mode="append")        # v2
    ds = lance.write_dataset(small_table(10500, 11000), uri, mode="append")   # v3
    ds.update({"name": "'updated'"}, where="id < 100")                         # v4
    ds.delete("id >= 100 AND id < 5600")                                       # v5: bitmap
    ds.delete("id >= 10990")                                                   # v6: arrow
    assert ds.has_stable_row_ids
    assert "bitmap" in _del_types(ds).values() and "array" in _del_types(ds).values()


def build_config_tags(uri: str) -> None:
    ds = lance.write_dataset(small_table(0, 100), uri, enable_v2_manifest_paths=False)  # v1
    ds.update_config({"app.owner": "interop", "app.batch": "1000"})           # v2
    ds = lance.write_dataset(small_table(100, 200), uri, mode="append")       # v3
    ds.update_config({"app.batch": None})                                      # v4
    ds = lance.dataset(uri)
    ds.tags.create("first", 1)
    ds.tags.create("configured", 2)
    ds.tags.create("appended", 3)
    assert ds.config() == {"app.owner": "interop"}


def build_indices(uri: str) -> None:
    ds = lance.write_dataset(vector_table(0, 2000, 7), uri)                   # v1
    ds.create_scalar_index("id", "BTREE")                                      # v2
    ds.create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=2)      # v3
    ds = lance.write_dataset(vector_table(2000, 2500, 8), uri, mode="append")  # v4
    ds.optimize.optimize_indices(num_indices_to_merge=0)                       # v5: delta indices
    ds.delete("id % 10 = 0")                                                   # v6
    segs = {d.name: len(d.segments) for d in lance.dataset(uri).describe_indices()}
    assert segs == {"id_idx": 2, "vec_idx": 2}, segs  # each index has a delta segment


def build_base_paths(uri: str) -> None:
    ext = Path(uri).parent / (Path(uri).stem + "-ext")
    ext.mkdir()
    ds = lance.write_dataset(small_table(0, 100), uri)                         # v1
    ds.add_bases([lance.DatasetBasePath(str(ext), name="ext", is_dataset_root=True)])  # v2
    lance.write_dataset(small_table(100, 150), uri, mode="append",
                        target_bases=["ext"])                                  # v3
    ds = lance.dataset(uri)
    assert [b.name for b in ds.base_paths().values()] == ["ext"]
    assert any((ext / "data").iterdir()), "append did not write into the extra base"


SCENARIOS: dict[str, Scenario] = {
    "rich-2.0": Scenario(build_rich("2.0"), 3, naming="v2"),
    "rich-2.1": Scenario(build_rich("2.1"), 3, naming="v1"),
    "rich-2.2": Scenario(build_rich("2.2"), 3, naming="v2"),
    "history-v1-paths": Scenario(build_history(False), 7, naming="v1"),
    "history-v2-paths": Scenario(build_history(True), 7, naming="v2"),
    "migrated-to-v2-paths": Scenario(build_migrated, 3, naming="v2"),
    "deletions": Scenario(build_deletions, 5, naming="v1"),
    "stable-row-ids": Scenario(build_stable_row_ids, 6, naming="v2", stable_row_ids=True),
    "config-tags": Scenario(build_config_tags, 4, naming="v1",
                            tags={"first": 1, "configured": 2, "appended": 3}),
    "indices": Scenario(build_indices, 6, naming="v2"),
    "base-paths": Scenario(build_base_paths, 3, naming="v2"),
}


def _version_params():
    for name, sc in SCENARIOS.items():
        yield pytest.param(name, None, id=f"{name}@latest")
        for v in range(1, sc.n_versions + 1):
            yield pytest.param(name, v, id=f"{name}@v{v}")
        for tag in sc.tags:
            yield pytest.param(name, tag, id=f"{name}@tag:{tag}")


@dataclass
class Built:
    uri: Path
    scenario: Scenario
    next_row_id_latest: Optional[int]


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("generated")
    cache: dict[str, Built] = {}

    def get(name: str) -> Built:
        if name not in cache:
            sc = SCENARIOS[name]
            uri = root / f"{name}.lance"
            sc.build(str(uri))
            ds = lance.dataset(str(uri))
            assert ds.latest_version == sc.n_versions, (name, ds.latest_version)
            assert {t: i["version"] for t, i in ds.tags.list().items()} == sc.tags
            assert ds.has_stable_row_ids == sc.stable_row_ids
            assert manifest_naming_from_listing(uri) == sc.naming, name
            nri = probe_next_row_id(uri, root) if sc.stable_row_ids else None
            cache[name] = Built(uri, sc, nri)
        return cache[name]

    yield get
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("name,version", list(_version_params()))
def test_inspect(lance_cpp, generated, name, version):
    b = generated(name)
    is_latest = version is None or version == b.scenario.n_versions
    expected = pylance_view(
        b.uri, version,
        next_row_id=b.next_row_id_latest if is_latest else None,
        manifest_naming=b.scenario.naming,
    )
    actual = lance_cpp.inspect(b.uri, version)
    assert_view_matches(actual, expected, f"{name} --version {version}")


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_versions_command(lance_cpp, generated, name):
    b = generated(name)
    assert_versions_output(lance_cpp.versions(b.uri), b.uri)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_inspect_human_readable(lance_cpp, generated, name):
    """Without --json, inspect prints a table for people; it must succeed."""
    b = generated(name)
    proc = lance_cpp.run_ok("inspect", b.uri)
    assert proc.stdout.strip(), "inspect printed nothing"


@pytest.mark.parametrize("name", ["history-v2-paths", "config-tags"])
def test_file_uri(lance_cpp, generated, name):
    """A file:// URI names the same dataset as the plain path."""
    b = generated(name)
    uri = b.uri.resolve().as_uri()
    expected = pylance_view(uri, manifest_naming=b.scenario.naming)
    expected["uri"] = OneOf(uri, str(b.uri.resolve()), why="as given or as a path")
    assert_view_matches(lance_cpp.inspect(uri), expected, f"{name} via {uri}")


def _pylance_rows_by_fragment(uri: Path, version: Any) -> dict[int, dict[str, list]]:
    """Live rows of each fragment as pylance scans them, in physical order."""
    ds = lance.dataset(str(uri), version=version)
    t = ds.to_table(columns=["_row_created_at_version", "_row_last_updated_at_version"],
                    with_row_id=True, with_row_address=True)
    out: dict[int, dict[str, list]] = {}
    cols = t.to_pydict()
    for i, addr in enumerate(cols["_rowaddr"]):
        frag = out.setdefault(addr >> 32, {"offsets": [], "row_ids": [], "created": [], "updated": []})
        frag["offsets"].append(addr & 0xFFFFFFFF)
        frag["row_ids"].append(cols["_rowid"][i])
        frag["created"].append(cols["_row_created_at_version"][i])
        frag["updated"].append(cols["_row_last_updated_at_version"][i])
    for frag in out.values():  # scans go in fragment order; keep physical order regardless
        order = sorted(range(len(frag["offsets"])), key=frag["offsets"].__getitem__)
        for k in frag:
            frag[k] = [frag[k][i] for i in order]
    return out


@pytest.mark.parametrize("name,version", list(_version_params()))
def test_row_ids_and_lineage(lance_cpp, generated, name, version):
    """inspect --rows decodes deletion vectors, row-id sequences and lineage
    exactly as pylance's _rowid/_rowaddr/_row_*_version columns report them."""
    b = generated(name)
    ours = lance_cpp.inspect(b.uri, version, rows=True)
    theirs = _pylance_rows_by_fragment(b.uri, version)
    problems = []
    for frag in ours["fragments"]:
        fid = frag["id"]
        physical = frag["physical_rows"]
        deleted = set(frag["deleted_offsets"])
        live = [o for o in range(physical) if o not in deleted]
        exp = theirs.get(fid, {"offsets": [], "row_ids": [], "created": [], "updated": []})
        if live != exp["offsets"]:
            problems.append(f"fragment {fid}: live offsets differ ({len(live)} vs {len(exp['offsets'])})")
            continue
        want_ids = exp["row_ids"] if b.scenario.stable_row_ids else None
        got_ids = frag["row_ids"]
        if b.scenario.stable_row_ids:
            if got_ids != want_ids:
                problems.append(f"fragment {fid}: row ids differ: {got_ids[:8]}... vs {want_ids[:8]}...")
        elif got_ids is not None:
            problems.append(f"fragment {fid}: row ids reported without stable row ids")
        # No lineage metadata means version 1 for every row, as pylance reports it.
        for key, col in (("row_created_at_versions", "created"), ("row_last_updated_at_versions", "updated")):
            got = frag[key] if frag[key] is not None else [1] * len(live)
            if got != exp[col]:
                problems.append(f"fragment {fid}: {key} differ: {got[:8]}... vs {exp[col][:8]}...")
    extra = set(theirs) - {f["id"] for f in ours["fragments"]}
    if extra:
        problems.append(f"pylance scans fragments lance-cpp does not list: {sorted(extra)}")
    assert not problems, f"{name} --version {version}:\n  " + "\n  ".join(problems)
