"""Writes the compatibility datasets with ONE released pylance: the one
installed in the interpreter running this script (a throwaway venv made by
venvs.py, never the project's .venv).

    python generate.py OUT_DIR

OUT_DIR gets one dataset per variant this release can write (each storage
version it calls stable, and stable row ids where it has them), each taken
through create -> append -> deletes -> update -> merge-insert (what the
release has), plus tags; expected/<dataset>/v<N>.arrow holds this release's
own reading of every version, and manifest.json (written last) describes it
all. Features are found by probing this release's API, so the script runs
unchanged from 0.10 to today; anything that fails is an error, never skipped.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("LANCE_LOG", "error")

import pyarrow as pa  # noqa: E402
import pyarrow.ipc as ipc  # noqa: E402

import lance  # noqa: E402

ROWS_PER_FILE = 100


def _version_tuple(v: str) -> tuple:
    out = []
    for part in v.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


RELEASE = _version_tuple(lance.__version__)


def rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    vec = pa.array([float(i) + k / 4 for i in ids for k in range(4)], pa.float32())
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "i32": pa.array([None if i % 11 == 5 else i * 3 - 500 for i in ids], pa.int32()),
        "u8": pa.array([i % 256 for i in ids], pa.uint8()),
        "f64": pa.array([None if i % 13 == 7 else i * 0.25 for i in ids], pa.float64()),
        "f32": pa.array([i / 8 for i in ids], pa.float32()),
        "flag": pa.array([None if i % 17 == 1 else i % 3 == 0 for i in ids], pa.bool_()),
        "s": pa.array([None if i % 7 == 3 else f"s{i}-" * (i % 4) for i in ids], pa.string()),
        "bin": pa.array([bytes([i % 256]) * (i % 6) for i in ids], pa.binary()),
        "ls": pa.array([None if i % 9 == 4 else list(range(i, i + i % 5)) for i in ids],
                       pa.list_(pa.int32())),
        "st": pa.array([{"a": i, "b": None if i % 5 == 0 else f"b{i}"} for i in ids],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "vec": pa.FixedSizeListArray.from_arrays(vec, 4),
        "ts": pa.array([1_700_000_000_000_000 + i * 1_000_003 for i in ids], pa.timestamp("us")),
    })


def storage_versions() -> list:
    """The data storage versions this release writes as stable (unstable ones
    warn and may not be readable later): legacy always; 2.0 from the release
    that takes `data_storage_version`; 2.1 from 0.38 (the reference's own
    compat tests start 2.1 there); 2.2 from 4.0 (first release where writing
    it no longer warns). None: the release has no choice (legacy only)."""
    params = inspect.signature(lance.write_dataset).parameters
    if "data_storage_version" not in params:
        return [None]
    out = ["legacy", "2.0"]
    if RELEASE >= (0, 38, 0):
        out.append("2.1")
    if RELEASE >= (4, 0, 0):
        out.append("2.2")
    return out


def stable_row_id_kwarg():
    params = inspect.signature(lance.write_dataset).parameters
    for name in ("enable_stable_row_ids", "enable_move_stable_row_ids"):
        if name in params:
            return name
    return None


def variants() -> list:
    out = []
    versions = storage_versions()
    for sv in versions:
        out.append({"name": sv or "legacy", "storage": sv, "stable_row_ids": False,
                    "v2_manifest_paths": False})
    # Stable row ids (and V2 manifest naming where the release has it) on its
    # newest stable storage version.
    if stable_row_id_kwarg() is not None:
        params = inspect.signature(lance.write_dataset).parameters
        sv = versions[-1]
        out.append({"name": f"{sv or 'legacy'}-stable-rowids", "storage": sv, "stable_row_ids": True,
                    "v2_manifest_paths": "enable_v2_manifest_paths" in params})
    return out


def write(uri: Path, variant: dict) -> dict:
    create_kw = {"max_rows_per_file": ROWS_PER_FILE}
    if variant["storage"] is not None:
        create_kw["data_storage_version"] = variant["storage"]
    if variant["stable_row_ids"]:
        create_kw[stable_row_id_kwarg()] = True
    if variant["v2_manifest_paths"]:
        create_kw["enable_v2_manifest_paths"] = True
    ops = []

    ds = lance.write_dataset(rows(0, 300), str(uri), mode="create", **create_kw)
    ops.append("create 0..300 (3 files)")
    ds = lance.write_dataset(rows(300, 150), str(uri), mode="append", max_rows_per_file=ROWS_PER_FILE)
    ops.append("append 300..450")
    ds = lance.dataset(str(uri))
    ds.delete("id % 7 = 3")
    ops.append("delete id % 7 = 3")
    ds = lance.dataset(str(uri))
    ds.delete("id >= 100 AND id < 200")  # every row of the second fragment
    ops.append("delete id 100..200")
    ds = lance.dataset(str(uri))
    if hasattr(ds, "update"):
        ds.update({"f64": "f64 + 1000", "s": "'updated'"}, where="id < 40")
        ops.append("update id < 40")
        ds = lance.dataset(str(uri))
    if hasattr(ds, "merge_insert"):
        ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(rows(430, 40))
        ops.append("merge-insert 430..470 on id")
        ds = lance.dataset(str(uri))
    tags = {}
    if hasattr(ds, "tags"):
        ds.tags.create("first", 1)
        ds.tags.create("after_deletes", 4)
        tags = {"first": 1, "after_deletes": 4}
        ops.append("tags first, after_deletes")
    return {"ops": ops, "tags": tags}


def save_readings(uri: Path, out: Path) -> list:
    out.mkdir(parents=True)
    numbers = [v["version"] for v in lance.dataset(str(uri)).versions()]
    for n in numbers:
        table = lance.dataset(str(uri), version=n).to_table()
        with pa.OSFile(str(out / f"v{n}.arrow"), "wb") as sink:
            with ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
    return numbers


def main() -> int:
    out = Path(sys.argv[1])
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    datasets = []
    for variant in variants():
        uri = out / f"{variant['name']}.lance"
        try:
            info = write(uri, variant)
            numbers = save_readings(uri, out / "expected" / variant["name"])
        except Exception as exc:
            raise SystemExit(f"pylance {lance.__version__}: writing dataset {variant['name']} failed: "
                             f"{type(exc).__name__}: {exc}") from exc
        ds = lance.dataset(str(uri))
        datasets.append(dict(variant, **info, versions=numbers,
                             data_storage_version=getattr(ds, "data_storage_version", None),
                             num_rows=ds.count_rows(), fragments=len(ds.get_fragments())))
    manifest = {"pylance": lance.__version__, "pyarrow": pa.__version__,
                "python": sys.version.split()[0], "datasets": datasets}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
