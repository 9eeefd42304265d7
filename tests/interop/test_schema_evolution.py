"""Schema evolution: add-columns, drop-columns, alter-column against pylance.

Each change is made by lance-cpp on one copy of a dataset and by pylance's
add_columns / drop_columns / alter_columns on another. The two commits must
be the same: the manifest and the transaction field by field (uuids, paths
and times aside, as test_manifest_parity normalizes them), so the same
schema with the same field ids, the same data files per fragment (fields,
column indices, file versions) and the same feature flags; the new data
files hold the same values in every physical row (deleted rows included,
which pylance fills with its blanks). Then each side reads the other's
result and appends to it and deletes from it.

Runs for storage versions 2.0, 2.1, 2.2 with stable row ids off, and 2.2
with them on.
"""

from __future__ import annotations

import decimal
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lance
from lance.file import LanceFileReader

import test_manifest_parity as parity

VERSIONS = ["2.0", "2.1", "2.2"]


def base_table(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "x": pa.array([None if i % 5 == 0 else i * 0.5 for i in ids], pa.float64()),
        "s": pa.array([f"s{i}" if i % 7 else None for i in ids], pa.string()),
        "st": pa.array([{"a": i, "b": f"b{i}"} for i in ids],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
    })


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict:
    """Three fragments (1500 + 1500 + 1000 rows, so a fragment spans more
    than one 1024-row updater batch), deletions in two of them."""
    out = {}
    root = tmp_path_factory.mktemp("schema_evolution_bases")
    for v in VERSIONS:
        for stable in ((False, True) if v == "2.2" else (False,)):
            uri = root / f"{v}-{int(stable)}.lance"
            lance.write_dataset(base_table(0, 4000), str(uri), max_rows_per_file=1500,
                                data_storage_version=v, enable_stable_row_ids=stable)
            lance.dataset(str(uri)).delete("id = 3 OR id = 1100 OR id = 1101 OR id = 3999")
            out[(v, stable)] = uri
    return out


# --------------------------------------------------------------------------- #
# The changes: (lance-cpp arguments after the URI, pylance call)
# --------------------------------------------------------------------------- #

def _add_sql(exprs: dict):
    return (["add-columns", *[f"{k}={v}" for k, v in exprs.items()]],
            lambda ds: ds.add_columns(exprs))


STEPS = {
    # Numbers and strings from existing columns, nested ones included.
    "add-sql": _add_sql({"y": "id * 2", "z": "s || '-z'", "t": "x + 1.5", "u": "st.a + 1"}),
    # A literal: a non-nullable new field (preserves_nullability false).
    "add-literal": _add_sql({"k": "'lit'", "b": "id > 100"}),
    "add-nulls": (["add-columns", "--null", "n:int32", "--null", "ts:timestamp[us]", "--null", "ls:large_string"],
                  lambda ds: ds.add_columns([pa.field("n", pa.int32()), pa.field("ts", pa.timestamp("us")),
                                             pa.field("ls", pa.large_string())])),
    "drop": (["drop-columns", "x,s"], lambda ds: ds.drop_columns(["x", "s"])),
    "drop-nested": (["drop-columns", "st.a"], lambda ds: ds.drop_columns(["st.a"])),
    "rename": (["alter-column", "s", "--rename", "s2"],
               lambda ds: ds.alter_columns({"path": "s", "name": "s2"})),
    "rename-nested": (["alter-column", "st.b", "--rename", "bb"],
                      lambda ds: ds.alter_columns({"path": "st.b", "name": "bb"})),
    # id has no null: allowed, and the Project withholds preserves_nullability.
    "not-nullable": (["alter-column", "id", "--not-nullable"],
                     lambda ds: ds.alter_columns({"path": "id", "nullable": False})),
    # A struct's child, checked for nulls as pylance does.
    "not-nullable-nested": (["alter-column", "st.a", "--not-nullable"],
                            lambda ds: ds.alter_columns({"path": "st.a", "nullable": False})),
    # A cast: new data files under a new field id, a Merge; the old files
    # keep listing the old id.
    "cast-int": (["alter-column", "id", "--cast", "int32"],
                 lambda ds: ds.alter_columns({"path": "id", "data_type": pa.int32()})),
    "cast-float": (["alter-column", "x", "--cast", "float32"],
                   lambda ds: ds.alter_columns({"path": "x", "data_type": pa.float32()})),
    "cast-rename": (["alter-column", "s", "--rename", "s3", "--cast", "large_string"],
                    lambda ds: ds.alter_columns({"path": "s", "name": "s3", "data_type": pa.large_string()})),
    # Add a column, drop it: its data files leave the fragments, so the next
    # column added takes its field id again (the reference's
    # test_drop_add_columns); dropping x keeps x's id taken (its file stays).
    "add-drop-add": None,
}

SEQUENCES = {
    "add-drop-add": ["add-one", "drop-one", "add-two"],
    "drop-then-add": ["drop", "add-after-drop"],
    "rename-then-add": ["rename", "add-sql-renamed"],
    "nulls-then-drop": ["add-nulls", "drop-nulls"],
    # Every column of the first data files recast: those files leave.
    "cast-all": ["drop-x-s-st", "cast-int"],
    "add-then-cast": ["add-one", "cast-added"],
    # Rows rewritten after the schema changed: new fragments in the evolved
    # schema, with its field ids.
    "cast-then-update": ["cast-int", "update"],
    "add-nested-drop-then-update": ["add-sql", "drop-nested", "update"],
}
STEPS.update({
    "add-one": _add_sql({"w": "id + 1"}),
    "drop-one": (["drop-columns", "w"], lambda ds: ds.drop_columns(["w"])),
    "add-two": _add_sql({"w2": "id - 1"}),
    "add-sql-renamed": _add_sql({"y": "s2 || '!'"}),
    "add-after-drop": _add_sql({"y": "id * 2", "z": "st.b || '!'"}),
    "drop-nulls": (["drop-columns", "n"], lambda ds: ds.drop_columns(["n"])),
    "update": (["update", "--set", "x=x + 1", "--where", "id < 10 OR id = 2500", "--quiet"],
               lambda ds: ds.update({"x": "x + 1"}, where="id < 10 OR id = 2500")),
    "drop-x-s-st": (["drop-columns", "x,s,st"], lambda ds: ds.drop_columns(["x", "s", "st"])),
    "cast-added": (["alter-column", "w", "--cast", "int16"],
                   lambda ds: ds.alter_columns({"path": "w", "data_type": pa.int16()})),
})
del STEPS["add-drop-add"]

CASES = {name: [name] for name in ("add-sql", "add-literal", "add-nulls", "drop", "drop-nested", "rename",
                                   "rename-nested", "not-nullable", "not-nullable-nested", "cast-int", "cast-float", "cast-rename")}
CASES.update(SEQUENCES)


def _physical(uri: Path, path: str) -> pa.Table:
    return LanceFileReader(str(uri / "data" / path)).read_all().to_table()


def _sizes_of_new_files(msg):
    """The size of a new data file depends on the bytes under its null slots,
    which are the expression kernels' own (DataFusion's `||` leaves the
    literal's bytes under a null, Arrow's leaves none); the values are
    compared row by row instead, and bytes where no null slot is involved
    (test_add_columns_data_files_byte_identical)."""
    if isinstance(msg, list):
        return [_sizes_of_new_files(v) for v in msg]
    if not isinstance(msg, dict):
        return msg
    out = {k: _sizes_of_new_files(v) for k, v in msg.items()}
    paths = out.get("path", [])
    if "file_size_bytes" in out and paths and isinstance(paths[0], str) and paths[0].startswith("<new data file"):
        out["file_size_bytes"] = ["<size of a new file>"]
    return out


def _compare_commit(ours: Path, theirs: Path, listings: tuple, renamers: tuple) -> list[str]:
    """One step's commit on each side. Each side has its own Renamer for the
    whole case, so files an earlier step wrote keep their placeholders."""
    a = parity.committed(ours, listings[0], renamers[0])
    b = parity.committed(theirs, listings[1], renamers[1])
    for side in (a, b):
        for part in ("manifest", "transaction"):
            side[part] = _sizes_of_new_files(side[part])
    problems = []
    for part in ("version", "manifest", "transaction", "index_section", "added", "removed"):
        problems += [f"{part}: {d}" for d in parity.diff(a[part], b[part])]
    if a["new_data_files"].keys() != b["new_data_files"].keys():
        problems.append(f"new data files: {sorted(a['new_data_files'])} vs {sorted(b['new_data_files'])}")
    return problems


def _twins(base: Path, tmp_path: Path) -> tuple:
    """Two copies of `base`, lance-cpp's and pylance's, the names of the
    files they start with, and a Renamer for each side."""
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    kept_paths, kept_ids = parity._base_names(ours)
    renamers = (parity.Renamer(kept_paths, kept_ids), parity.Renamer(kept_paths, kept_ids))
    return ours, theirs, kept_paths, renamers


def _new_files(uri: Path, kept: set) -> list[tuple[int, str]]:
    out = []
    for frag in lance.dataset(str(uri)).get_fragments():
        for f in frag.metadata.files:
            if f.path.encode() not in kept:
                out.append((frag.fragment_id, f.path))
    return out


# Every case on every storage version; with stable row ids (whose lineage
# rules do not depend on the file version) on 2.2, to keep the file fast.
PARITY_CASES = [pytest.param(case, v, stable, id=f"{case}-{v}-{'stable' if stable else 'plain'}")
                for case in CASES for v in VERSIONS for stable in (False, True) if not stable or v == "2.2"]


@pytest.mark.parametrize("case,version,stable", PARITY_CASES)
def test_schema_change_parity(case, version, stable, bases, tmp_path, lance_cpp):
    _parity(bases[(version, stable)], [STEPS[step] for step in CASES[case]], f"{case} on {version}, stable {stable}",
            tmp_path, lance_cpp)


def _parity(base: Path, steps: list, label: str, tmp_path: Path, lance_cpp, cross: bool = True) -> None:
    """The steps on two copies of `base`, one by each side: the same commits,
    the same values in the new data files, the same tables; then each side
    modifies the other's."""
    ours, theirs, kept_paths, renamers = _twins(base, tmp_path)
    for step, (args, py) in enumerate(steps):
        listings = (parity._listing(ours), parity._listing(theirs))
        lance_cpp.run_ok(args[0], ours, *args[1:])
        py(lance.dataset(str(theirs)))
        problems = _compare_commit(ours, theirs, listings, renamers)
        # The new data files: the same values in every physical row.
        for (fa, pa_), (fb, pb) in zip(_new_files(ours, kept_paths), _new_files(theirs, kept_paths)):
            ta, tb = _physical(ours, pa_), _physical(theirs, pb)
            if fa != fb or not ta.equals(tb):
                problems.append(f"new data file of fragment {fa}/{fb} differs:\n{ta.slice(0, 5)}\n{tb.slice(0, 5)}")
        assert not problems, f"{label}, step {step}:\n  " + "\n  ".join(problems)
    a = lance.dataset(str(ours))
    b = lance.dataset(str(theirs))
    assert a.schema == b.schema
    assert a.to_table(with_row_id=True).equals(b.to_table(with_row_id=True))
    if cross:
        _cross_modify(ours, theirs, lance_cpp, tmp_path)


def typed_table(start: int, n: int) -> pa.Table:
    """Decimals and list-like columns, with nulls and empty lists."""
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "d": pa.array([None if i % 9 == 0 else decimal.Decimal(i * 37 - 5000) / 8 for i in ids],
                      pa.decimal128(9, 3)),
        "l": pa.array([None if i % 4 == 0 else list(range(i, i + i % 3)) for i in ids], pa.list_(pa.int32())),
        "ln": pa.array([[i, -i] for i in ids], pa.list_(pa.field("item", pa.int32(), nullable=False))),
        "v": pa.array([[i * 0.25, 1.5] for i in ids], pa.list_(pa.float32(), 2)),
        "ls": pa.array([[f"w{i}"] if i % 3 else [] for i in ids], pa.list_(pa.string())),
    })


@pytest.fixture(scope="module")
def typed_bases(tmp_path_factory) -> dict:
    """As `bases`, over typed_table; ln is a required column."""
    out = {}
    root = tmp_path_factory.mktemp("schema_evolution_typed")
    for v in VERSIONS:
        uri = root / f"{v}.lance"
        table = typed_table(0, 4000)
        schema = table.schema.set(table.schema.get_field_index("ln"),
                                  table.schema.field("ln").with_nullable(False))
        lance.write_dataset(table.cast(schema), str(uri), max_rows_per_file=1500, data_storage_version=v)
        lance.dataset(str(uri)).delete("id = 3 OR id = 1100 OR id = 1101 OR id = 3999")
        out[v] = uri
    return out


def _cast(col: str, cli_type: str, py_type: pa.DataType):
    return (["alter-column", col, "--cast", cli_type], lambda ds: ds.alter_columns({"path": col, "data_type": py_type}))


# Casts of decimals (precision and scale; a smaller scale rounds half away
# from zero) and of list-like columns (items, layout), as pylance takes them.
TYPED_CASTS = {
    "decimal-wider": [_cast("d", "decimal128(12, 3)", pa.decimal128(12, 3))],
    "decimal-rescale-down": [_cast("d", "decimal128(8, 1)", pa.decimal128(8, 1))],
    "decimal-rescale-up": [_cast("d", "decimal128(12, 5)", pa.decimal128(12, 5))],
    "decimal-256": [_cast("d", "decimal256(40, 2)", pa.decimal256(40, 2))],
    "list-int64": [_cast("l", "list<item: int64>", pa.list_(pa.int64()))],
    "list-to-large": [_cast("l", "large_list<item: int16>", pa.large_list(pa.int16()))],
    # A required column: its deleted rows' blanks are empty lists.
    "required-list": [_cast("ln", "large_list<item: int64 not null>",
                            pa.large_list(pa.field("item", pa.int64(), nullable=False)))],
    "vector-f16": [_cast("v", "fixed_size_list<item: halffloat>[2]", pa.list_(pa.float16(), 2))],
    "vector-to-list": [_cast("v", "list<item: double>", pa.list_(pa.float64()))],
    "list-strings": [_cast("ls", "large_list<item: large_string>", pa.large_list(pa.large_string()))],
    "two-casts-rename": [(["alter-column", "d", "--rename", "d2", "--cast", "decimal128(10, 2)"],
                          lambda ds: ds.alter_columns({"path": "d", "name": "d2", "data_type": pa.decimal128(10, 2)})),
                         _cast("l", "list<item: int16>", pa.list_(pa.int16()))],
}


@pytest.mark.parametrize("case,version", [(c, v) for c in TYPED_CASTS for v in VERSIONS])
def test_typed_cast_parity(case, version, typed_bases, tmp_path, lance_cpp):
    _parity(typed_bases[version], TYPED_CASTS[case], f"{case} on {version}", tmp_path, lance_cpp)


@pytest.mark.parametrize("version", VERSIONS)
def test_dictionary_cast_parity(version, tmp_path, lance_cpp):
    """A dictionary column cast by its values, as pylance takes it on v2
    files: to its value type, to another string type, to another index."""
    base = tmp_path / "base.lance"
    ids = list(range(4000))
    lance.write_dataset(pa.table({"id": pa.array(ids, pa.int64()),
                                  "c": pa.array([f"v{i % 7}" if i % 5 else None for i in ids]).dictionary_encode()}),
                        str(base), max_rows_per_file=1500, data_storage_version=version)
    lance.dataset(str(base)).delete("id = 3 OR id = 1600")
    for cli, ty in [("string", pa.string()), ("large_string", pa.large_string()),
                    ("dictionary<values=string, indices=int16, ordered=0>", pa.dictionary(pa.int16(), pa.string()))]:
        shutil.rmtree(tmp_path / "cpp.lance", ignore_errors=True)
        shutil.rmtree(tmp_path / "py.lance", ignore_errors=True)
        # lance-cpp reads a dictionary with another (equally valid) values
        # array than pylance's, so that case compares values, not arrays.
        dictionary = pa.types.is_dictionary(ty)
        _parity(base, [_cast("c", cli, ty)], f"c to {ty} on {version}", tmp_path, lance_cpp, cross=not dictionary)
        if dictionary:
            out = tmp_path / "scan.arrow"
            lance_cpp.run_ok("scan", tmp_path / "py.lance", "--out", out)
            with ipc.open_file(out) as f:
                assert f.read_all().column("c").to_pylist() == \
                    lance.dataset(str(tmp_path / "py.lance")).to_table().column("c").to_pylist()


def test_cast_to_dictionary_refused_on_legacy(tmp_path, lance_cpp):
    """Legacy files do not materialize dictionaries: pylance refuses the cast."""
    uri = tmp_path / "d.lance"
    lance.write_dataset(pa.table({"id": pa.array(range(4), pa.int64()), "s": pa.array(list("abca"))}), str(uri),
                        data_storage_version="legacy")
    with pytest.raises(Exception, match="Cannot cast column"):
        lance.dataset(str(uri)).alter_columns({"path": "s", "data_type": pa.dictionary(pa.int16(), pa.string())})
    proc = lance_cpp.run("alter-column", uri, "s", "--cast", "dictionary<values=string, indices=int16, ordered=0>")
    assert proc.returncode == 1 and "Cannot cast column" in proc.stderr, proc.stderr
    assert lance.dataset(str(uri)).version == 1


TYPED_REFUSALS = [
    (_cast("d", "double", pa.float64()), "Cannot cast column"),
    (_cast("d", "int64", pa.int64()), "Cannot cast column"),
    (_cast("l", "list<item: string>", pa.list_(pa.string())), "Cannot cast column"),
    (_cast("v", "fixed_size_list<item: float>[3]", pa.list_(pa.float32(), 3)), "Cannot cast column"),
    (_cast("v", "fixed_size_list<item: int32>[2]", pa.list_(pa.int32(), 2)), "Cannot cast column"),
    # Values the target cannot hold: the first one named, as arrow-rs words it.
    (_cast("d", "decimal128(5, 3)", pa.decimal128(5, 3)),
     "-620.375 is too small to store in a Decimal128 of precision 5. Min is -99.999"),
    (_cast("d", "decimal128(4, 1)", pa.decimal128(4, 1)),
     "1003.0 is too large to store in a Decimal128 of precision 4. Max is 999.9"),
    (_cast("l", "list<item: int8>", pa.list_(pa.int8())), "Cast error"),
    (_cast("l", "list<item: uint16>", pa.list_(pa.uint16())), None),  # fits: the control
    (_cast("l", "fixed_size_list<item: int32>[2]", pa.list_(pa.int32(), 2)), "Cast error"),
]


@pytest.mark.parametrize("step,message", TYPED_REFUSALS, ids=[" ".join(r[0][0][1:]) for r in TYPED_REFUSALS])
def test_typed_cast_refusals(step, message, typed_bases, tmp_path, lance_cpp):
    (args, py) = step
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    shutil.copytree(typed_bases["2.1"], ours)
    shutil.copytree(typed_bases["2.1"], theirs)
    before = lance.dataset(str(ours)).version
    if message is None:
        py(lance.dataset(str(theirs)))
        lance_cpp.run_ok(args[0], ours, *args[1:])
        assert lance.dataset(str(ours)).to_table().equals(lance.dataset(str(theirs)).to_table())
        return
    with pytest.raises(Exception) as err:
        py(lance.dataset(str(theirs)))
    assert message in str(err.value)
    proc = lance_cpp.run(args[0], ours, *args[1:])
    assert proc.returncode == 1, proc
    assert proc.stderr.startswith("error: ") and message in proc.stderr, proc.stderr
    assert lance.dataset(str(ours)).version == before
    assert sorted(p.name for p in (ours / "data").iterdir()) == sorted(p.name for p in (theirs / "data").iterdir())


def _cross_modify(ours: Path, theirs: Path, lance_cpp, tmp_path: Path) -> None:
    """Each side reads the other's result, appends to it and deletes from it;
    both copies then hold the same rows."""
    schema = lance.dataset(str(ours)).schema
    # lance-cpp reads pylance's result.
    out = tmp_path / "scan.arrow"
    lance_cpp.run_ok("scan", theirs, "--out", out)
    with ipc.open_file(out) as f:
        assert f.read_all().equals(lance.dataset(str(theirs)).to_table())
    # Take and count over fragments whose files cover different fields.
    indices = [0, 5, 1499, 1500, 2999, 3990]
    lance_cpp.run_ok("take", theirs, "--indices", ",".join(map(str, indices)), "--out", out)
    with ipc.open_file(out) as f:
        assert f.read_all().equals(lance.dataset(str(theirs)).take(indices))
    counted = lance_cpp.run_ok("count", theirs, "--filter", "id >= 1000").stdout.split()[0]
    assert int(counted) == lance.dataset(str(theirs)).count_rows(filter="id >= 1000")
    # New rows in the evolved schema: derived from existing rows' values.
    extra = lance.dataset(str(ours)).to_table(filter="id < 20").cast(schema)
    src = tmp_path / "extra.arrow"
    with ipc.new_file(src, extra.schema) as w:
        w.write_table(extra)
    # lance-cpp appends to pylance's, pylance to lance-cpp's; each deletes
    # from the other's.
    lance_cpp.run_ok("write", theirs, "--input", src, "--mode", "append", "--quiet")
    lance.write_dataset(extra, str(ours), mode="append")
    lance_cpp.run_ok("delete", theirs, "id = 7 OR id = 2000", "--quiet")
    lance.dataset(str(ours)).delete("id = 7 OR id = 2000")
    a = lance.dataset(str(ours)).to_table().sort_by("id")
    b = lance.dataset(str(theirs)).to_table().sort_by("id")
    assert a.equals(b)
    with ipc.open_file(_scan(lance_cpp, ours, tmp_path / "a.arrow")) as f:
        assert f.read_all().sort_by("id").equals(a)


def _scan(lance_cpp, uri: Path, out: Path) -> Path:
    lance_cpp.run_ok("scan", uri, "--out", out)
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_add_columns_data_files_byte_identical(version, bases, tmp_path, lance_cpp):
    """Columns computed from varied values are written as pylance writes
    them, byte for byte (deleted rows' blanks included)."""
    ours, theirs, kept, _ = _twins(bases[(version, False)], tmp_path)
    exprs = {"y": "id * 3 - 7", "z": "st.b || '-z'", "t": "st.a * 2"}
    lance_cpp.run_ok("add-columns", ours, *[f"{k}={v}" for k, v in exprs.items()])
    lance.dataset(str(theirs)).add_columns(exprs)
    pairs = list(zip(_new_files(ours, kept), _new_files(theirs, kept)))
    assert len(pairs) == 3
    for (_, a), (_, b) in pairs:
        assert (ours / "data" / a).read_bytes() == (theirs / "data" / b).read_bytes()


# --------------------------------------------------------------------------- #
# Refusals: what pylance refuses, lance-cpp refuses with the same meaning
# --------------------------------------------------------------------------- #

REFUSALS = [
    (["add-columns", "id=id + 1"], lambda ds: ds.add_columns({"id": "id + 1"}), "already exists"),
    (["add-columns", "--null", "id:int64"], lambda ds: ds.add_columns(pa.field("id", pa.int64())), "already exists"),
    (["add-columns", "--null", "id:int32"], lambda ds: ds.add_columns(pa.field("id", pa.int32())),
     "Type conflicts between id"),
    (["drop-columns", "nope"], lambda ds: ds.drop_columns(["nope"]), "does not exist"),
    (["drop-columns", "id,x,s,st"], lambda ds: ds.drop_columns(["id", "x", "s", "st"]), "Cannot drop all columns"),
    (["alter-column", "nope", "--rename", "z"], lambda ds: ds.alter_columns({"path": "nope", "name": "z"}),
     "does not exist"),
    (["alter-column", "x", "--rename", "id"], lambda ds: ds.alter_columns({"path": "x", "name": "id"}),
     "Duplicate field name"),
    (["alter-column", "x", "--cast", "string"], lambda ds: ds.alter_columns({"path": "x", "data_type": pa.string()}),
     "Cannot cast column"),
    (["alter-column", "id", "--cast", "int8"], lambda ds: ds.alter_columns({"path": "id", "data_type": pa.int8()}),
     "Cast error"),
    # x holds nulls.
    (["alter-column", "x", "--not-nullable"], lambda ds: ds.alter_columns({"path": "x", "nullable": False}),
     "contains NULL values"),
]


@pytest.mark.parametrize("args,py,message", REFUSALS, ids=[" ".join(r[0]) for r in REFUSALS])
def test_refusals(args, py, message, bases, tmp_path, lance_cpp):
    uri = tmp_path / "d.lance"
    shutil.copytree(bases[("2.1", False)], uri)
    before = lance.dataset(str(uri)).version
    with pytest.raises(Exception) as err:
        py(lance.dataset(str(uri)))
    assert message in str(err.value)
    proc = lance_cpp.run(args[0], uri, *args[1:])
    assert proc.returncode == 1, proc
    assert proc.stderr.startswith("error: ") and message in proc.stderr, proc.stderr
    assert lance.dataset(str(uri)).version == before


# --------------------------------------------------------------------------- #
# Sub-columns of an existing struct (pylance 14: from file version 2.2)
# --------------------------------------------------------------------------- #

SUB_COLUMNS = pa.struct([("c", pa.int64()), ("d", pa.struct([("e", pa.string())]))])


def test_all_null_sub_columns_parity(bases, tmp_path, lance_cpp):
    """Schema only: the new children go after the struct's own, then the new
    top-level column; ids in the merged schema's pre-order. Then a column
    computed from the struct's old child."""
    step = (["add-columns", "--null", "st:struct<c: int64, d: struct<e: string>>",
             "--null", "n:int32"],
            lambda ds: ds.add_columns([pa.field("st", SUB_COLUMNS), pa.field("n", pa.int32())]))
    _parity(bases[("2.2", False)], [step, STEPS["add-sql"]], "all-null sub-columns", tmp_path, lance_cpp)
    assert lance.dataset(str(tmp_path / "cpp.lance")).schema.field("st").type.num_fields == 4


SUB_COLUMN_REFUSALS = [
    ("2.0", ["--null", "st:struct<c: int64>"], lambda ds: ds.add_columns(pa.field("st", pa.struct([("c", pa.int64())]))),
     "Column st is a struct col, add sub column is not supported in Lance file version 2.0"),
    ("2.1", ["--null", "st:struct<c: int64>"], lambda ds: ds.add_columns(pa.field("st", pa.struct([("c", pa.int64())]))),
     "Column st is a struct col, add sub column is not supported in Lance file version 2.1"),
    ("2.1", ["st=st"], lambda ds: ds.add_columns({"st": "st"}),
     "Column st is a struct col, add sub column is not supported in Lance file version 2.1"),
    ("2.2", ["--null", "st:struct<a: int32>"], lambda ds: ds.add_columns(pa.field("st", pa.struct([("a", pa.int32())]))),
     "Column a already exists in the dataset"),
    ("2.2", ["--null", "st:struct<c: int8, a: int64>"],
     lambda ds: ds.add_columns(pa.field("st", pa.struct([("c", pa.int8()), ("a", pa.int64())]))),
     "Type conflicts between a"),
    ("2.2", ["st=st"], lambda ds: ds.add_columns({"st": "st"}), "Column a already exists in the dataset"),
]


@pytest.mark.parametrize("version,args,py,message", SUB_COLUMN_REFUSALS,
                         ids=[f"{r[0]} {' '.join(r[1])}" for r in SUB_COLUMN_REFUSALS])
def test_sub_column_refusals(version, args, py, message, bases, tmp_path, lance_cpp):
    uri = tmp_path / "d.lance"
    shutil.copytree(bases[(version, False)], uri)
    before = lance.dataset(str(uri)).version
    with pytest.raises(Exception) as err:
        py(lance.dataset(str(uri)))
    assert message in str(err.value)
    proc = lance_cpp.run("add-columns", uri, *args)
    assert proc.returncode == 1, proc
    assert proc.stderr.startswith("error: ") and message in proc.stderr, proc.stderr
    assert lance.dataset(str(uri)).version == before


def test_list_item_conflict_refused_as_pylance(typed_bases, tmp_path, lance_cpp):
    """A list onto a list is checked by its items, as pylance names them."""
    uri = tmp_path / "d.lance"
    shutil.copytree(typed_bases["2.2"], uri)
    for cli, field, message in [("l:list<item: int32>", pa.field("l", pa.list_(pa.int32())),
                                 "Column item already exists in the dataset"),
                                ("l:list<item: int64>", pa.field("l", pa.list_(pa.int64())),
                                 "Type conflicts between item")]:
        with pytest.raises(Exception, match=message):
            lance.dataset(str(uri)).add_columns(field)
        proc = lance_cpp.run("add-columns", uri, "--null", cli)
        assert proc.returncode == 1 and message in proc.stderr, proc.stderr


@pytest.mark.parametrize("version,how", [("2.2", "sub-columns"), ("2.1", "nested-cast"), ("2.2", "nested-cast")])
def test_structs_split_over_files_read_as_pylance(version, how, bases, tmp_path, lance_cpp):
    """pylance puts a struct's new or recast children in new data files;
    lance-cpp assembles the struct from every file holding part of it (by
    field id), for scan, take and count, and appends to and deletes from
    the result as pylance does."""
    theirs, ours = tmp_path / "py.lance", tmp_path / "py-copy.lance"
    shutil.copytree(bases[(version, False)], theirs)
    ds = lance.dataset(str(theirs))
    if how == "sub-columns":
        ds.add_columns({"st": "named_struct('c', id * 2)"})
    else:
        ds.alter_columns({"path": "st.a", "data_type": pa.int64()})
    assert all(len(f.metadata.files) == 2 for f in lance.dataset(str(theirs)).get_fragments())
    shutil.copytree(theirs, ours)
    _cross_modify(ours, theirs, lance_cpp, tmp_path)


def test_nested_not_nullable_with_nulls_refused(tmp_path, lance_cpp):
    uri = tmp_path / "d.lance"
    lance.write_dataset(pa.table({"id": pa.array(range(4), pa.int64()),
                                  "st": pa.array([{"a": None if i == 2 else i, "b": "x"} for i in range(4)],
                                                 pa.struct([("a", pa.int32()), ("b", pa.string())]))}), str(uri))
    message = 'Column "st.a" contains NULL values and cannot be made non-nullable'
    with pytest.raises(Exception, match=message):
        lance.dataset(str(uri)).alter_columns({"path": "st.a", "nullable": False})
    proc = lance_cpp.run("alter-column", uri, "st.a", "--not-nullable")
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr
    assert lance.dataset(str(uri)).version == 1
    lance_cpp.run_ok("alter-column", uri, "st.b", "--not-nullable")
    assert not lance.dataset(str(uri)).schema.field("st").type.field("b").nullable


def test_non_nullable_all_null_column_refused(bases, tmp_path, lance_cpp):
    """pylance refuses an all-null column that is not nullable; the CLI's
    --null columns are always nullable, so the API refuses it (unit test)
    and the CLI cannot express it. Here: a bad type is a usage error."""
    uri = tmp_path / "d.lance"
    shutil.copytree(bases[("2.1", False)], uri)
    with pytest.raises(Exception, match="must be nullable"):
        lance.dataset(str(uri)).add_columns(pa.field("q", pa.int32(), nullable=False))
    proc = lance_cpp.run("add-columns", uri, "--null", "q:notatype")
    assert proc.returncode == 2 and "unknown type" in proc.stderr


NESTED_CASTS = {
    # The struct rewritten with its recast child only, under the struct's id.
    "nested": [(["alter-column", "st.a", "--cast", "int64"],
                lambda ds: ds.alter_columns({"path": "st.a", "data_type": pa.int64()}))],
    # Two children and a top-level column in one call; then the files'
    # parts read together by a computed column, and an update.
    "nested-two": [(["alter-column", "st.b", "--cast", "large_string"],
                    lambda ds: ds.alter_columns({"path": "st.b", "data_type": pa.large_string()})),
                   (["alter-column", "st.a", "--cast", "int16"],
                    lambda ds: ds.alter_columns({"path": "st.a", "data_type": pa.int16()})),
                   _add_sql({"u": "st.a + 1"}), STEPS["update"]],
    "nested-rename": [(["alter-column", "st.a", "--rename", "aa", "--cast", "int64"],
                       lambda ds: ds.alter_columns({"path": "st.a", "name": "aa", "data_type": pa.int64()})),
                      (["alter-column", "st.b", "--rename", "bb"],
                       lambda ds: ds.alter_columns({"path": "st.b", "name": "bb"}))],
}


@pytest.mark.parametrize("case,version,stable", [(c, v, s) for c in NESTED_CASTS
                                                 for v, s in (("2.1", False), ("2.2", False), ("2.2", True))])
def test_nested_cast_parity(case, version, stable, bases, tmp_path, lance_cpp):
    _parity(bases[(version, stable)], NESTED_CASTS[case], f"{case} on {version}, stable {stable}", tmp_path,
            lance_cpp)


def test_nested_cast_on_2_0_refused(bases, tmp_path, lance_cpp):
    """pylance 14 casts a struct's child of a 2.0 dataset but cannot read
    the result back; lance-cpp refuses it, committing nothing."""
    theirs, ours = tmp_path / "py.lance", tmp_path / "d.lance"
    shutil.copytree(bases[("2.0", False)], theirs)
    shutil.copytree(bases[("2.0", False)], ours)
    lance.dataset(str(theirs)).alter_columns({"path": "st.a", "data_type": pa.int64()})
    with pytest.raises(Exception):
        lance.dataset(str(theirs)).to_table()
    before = lance.dataset(str(ours)).version
    proc = lance_cpp.run("alter-column", ours, "st.a", "--cast", "int64")
    assert proc.returncode == 1 and "cannot read back" in proc.stderr, proc.stderr
    assert lance.dataset(str(ours)).version == before


def test_pylance_writer_concurrent_with_lance_cpp_merge(tmp_path, lance_cpp):
    """pylance, appending from a handle opened before lance-cpp's add-columns,
    reads lance-cpp's Merge as its conflict rules say: a nullable new column
    lets the append through (its rows read the column as nulls, on both
    sides); a required one (preserves_nullability false) makes it retry."""
    uri = tmp_path / "d.lance"
    lance.write_dataset(pa.table({"id": pa.array(range(10), pa.int64())}), str(uri))
    stale = lance.dataset(str(uri))
    lance_cpp.run_ok("add-columns", uri, "y=id * 2")
    stale.insert(pa.table({"id": pa.array([100], pa.int64())}))
    rows = lance.dataset(str(uri)).to_table().to_pylist()
    assert rows[-2:] == [{"id": 9, "y": 18}, {"id": 100, "y": None}]
    out = tmp_path / "scan.arrow"
    lance_cpp.run_ok("scan", uri, "--out", out)
    with ipc.open_file(out) as f:
        assert f.read_all().to_pylist() == rows
    stale = lance.dataset(str(uri))
    lance_cpp.run_ok("add-columns", uri, "k='v'")
    with pytest.raises(OSError, match="Retryable commit conflict"):
        stale.insert(pa.table({"id": pa.array([101], pa.int64()), "y": pa.array([1], pa.int64())}))
    assert lance.dataset(str(uri)).count_rows() == 11


@pytest.mark.parametrize("case", ["drop-indexed", "drop-other", "add-sql", "rename"])
def test_indices_after_schema_changes(case, bases, tmp_path, lance_cpp):
    """An index on a dropped column leaves the manifest's index section; the
    others stay as they were (an added or renamed column keeps them)."""
    base = tmp_path / "base.lance"
    shutil.copytree(bases[("2.1", False)], base)
    ds = lance.dataset(str(base))
    ds.create_scalar_index("x", "BTREE")
    ds.create_scalar_index("id", "BTREE")
    ours, theirs, kept_paths, renamers = _twins(base, tmp_path)
    listings = (parity._listing(ours), parity._listing(theirs))
    args, py = {"drop-indexed": (["drop-columns", "x"], lambda d: d.drop_columns(["x"])),
                "drop-other": (["drop-columns", "s"], lambda d: d.drop_columns(["s"])),
                "add-sql": STEPS["add-sql"],
                "rename": STEPS["rename"]}[case]
    lance_cpp.run_ok(args[0], ours, *args[1:])
    py(lance.dataset(str(theirs)))
    problems = _compare_commit(ours, theirs, listings, renamers)
    assert not problems, "\n  ".join(problems)
    names = sorted(i.name for i in lance.dataset(str(ours)).describe_indices())
    assert names == (["id_idx"] if case == "drop-indexed" else ["id_idx", "x_idx"])


def test_cast_of_indexed_column_refused(bases, tmp_path, lance_cpp):
    """As pylance 14: a cast would invalidate the index, so it is refused."""
    uri = tmp_path / "d.lance"
    shutil.copytree(bases[("2.1", False)], uri)
    lance.dataset(str(uri)).create_scalar_index("id", "BTREE")
    before = lance.dataset(str(uri)).version
    message = "Cannot cast column(s) [id] to a new type"
    with pytest.raises(OSError) as err:
        lance.dataset(str(uri)).alter_columns({"path": "id", "data_type": pa.int32()})
    assert message in str(err.value)
    proc = lance_cpp.run("alter-column", uri, "id", "--cast", "int32")
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr
    assert lance.dataset(str(uri)).version == before


@pytest.mark.parametrize("pred", ["id < 2100", "(id >= 3 AND id < 2100) OR id = 2500"],
                         ids=["leading-batches-deleted", "middle-batch-deleted"])
def test_add_columns_over_fully_deleted_batches(pred, tmp_path, lance_cpp):
    """A 1024-row updater batch whose rows are all deleted takes its blanks
    from the last batch with a live row, or the next one before any: the
    same values in every physical row as pylance's."""
    base = tmp_path / "base.lance"
    lance.write_dataset(base_table(0, 3000).drop_columns(["st"]), str(base), data_storage_version="2.1")
    lance.dataset(str(base)).delete(pred)
    ours, theirs, kept_paths, renamers = _twins(base, tmp_path)
    listings = (parity._listing(ours), parity._listing(theirs))
    exprs = {"y": "id * 2 + 1", "z": "s || 'q'", "t": "x"}
    lance_cpp.run_ok("add-columns", ours, *[f"{k}={v}" for k, v in exprs.items()])
    lance.dataset(str(theirs)).add_columns(exprs)
    problems = _compare_commit(ours, theirs, listings, renamers)
    assert not problems, "\n  ".join(problems)
    [(_, a)], [(_, b)] = _new_files(ours, kept_paths), _new_files(theirs, kept_paths)
    assert _physical(ours, a).equals(_physical(theirs, b))
    assert lance.dataset(str(ours)).to_table().equals(lance.dataset(str(theirs)).to_table())
