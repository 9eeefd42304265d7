"""Shallow and deep clones, writes to registered bases, and branches made by
each side, read and written by the other.

pylance makes a source with deletion files, a BTREE index and a tag; each
side clones the same version of it (the latest, an older one, a tag), and
the two new manifests are compared field by field (uuids, paths of the
commit and timestamps aside), with their inline transactions and index
sections. Then the other side reads the clone (the index answers a filter
through the clone's base path) and writes to it (append, delete), and the
source is untouched. A deep clone must stand alone: its source is removed
before it is read and written. Blob v2 sidecars are copied by a deep clone.

Registered bases: the same create (initial_bases) and appends (target_bases)
on each side give pylance's manifests. Branches: each side's branch (and a
branch of it) gives pylance's manifests and _refs/branches files, and is
listed, read, written and tagged by the other; every command takes
--branch; refusals and cleanup follow pylance's.
"""
from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pytest

import lance
import manifest_wire as wire

from conftest import assert_clean_failure

if wire.protoc() is None:
    pytest.skip("protoc not found (it is a build dependency)", allow_module_level=True)

VERSIONS = ["2.0", "2.1", "2.2"]


def _rows(ids, seed: int = 0) -> pa.Table:
    ids = list(ids)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "v": pa.array([(i * 7 + seed) % 100 for i in ids], pa.int32()),
        "s": pa.array([None if i % 11 == 0 else f"s{i}-{seed}" for i in ids], pa.string()),
    })


def _write_ipc(path: Path, table: pa.Table) -> Path:
    with ipc.new_file(str(path), table.schema) as w:
        w.write_table(table)
    return path


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def _source(path: Path, version: str) -> None:
    """v1: 30 rows in 3 fragments; v2: deletions; v3: a BTREE index on id
    (tag "indexed"); v4: an append."""
    lance.write_dataset(_rows(range(30)), path, data_storage_version=version, max_rows_per_file=10)
    lance.dataset(path).delete("id % 4 = 1 OR id = 20")
    lance.dataset(path).create_scalar_index("id", "BTREE")
    ds = lance.dataset(path)
    ds.tags.create("indexed", ds.version)
    lance.write_dataset(_rows(range(30, 40), 1), path, mode="append")


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("clone-sources")
    out = {}
    for v in VERSIONS:
        out[v] = root / f"source-{v}.lance"
        _source(out[v], v)
    return out


# --------------------------------------------------------------------------- #
# Manifest comparison
# --------------------------------------------------------------------------- #

def _normalize(msg, where: str = ""):
    """What must differ between two clones of the same version: the commit's
    time, the writing library, the transaction's uuid; base paths are a map
    (pylance writes them in hash order), so they are sorted by id."""
    if not isinstance(msg, dict):
        return msg
    out = {}
    for key, values in msg.items():
        if where == "manifest" and key == "timestamp":
            continue
        if where == "manifest" and key == "writer_version":
            values = [{k: v for k, v in wv.items() if k not in ("library", "version")} for wv in values]
        elif where == "manifest" and key == "transaction_file":
            values = [v.split(b"-", 1)[0] for v in values]
        elif where == "transaction" and key == "uuid":
            values = ["<uuid>"]
        elif key == "base_paths":
            values = sorted(values, key=lambda b: b.get("id", [0])[0])
        out[key] = [_normalize(v, where) for v in values]
    return out


def _committed(uri: Path) -> dict:
    version = lance.dataset(str(uri)).version
    mf = wire.read_manifest_file(wire.manifest_path(uri, version))
    txn_name = mf["manifest"]["transaction_file"][0].decode()
    txn_file = wire.read_transaction_file(uri / "_transactions" / txn_name)
    assert mf["transaction"] == txn_file, f"{uri}: the inline transaction differs from {txn_name}"
    return {"manifest": _normalize(mf["manifest"], "manifest"),
            "transaction": _normalize(mf["transaction"], "transaction"),
            "index_section": _normalize(mf["index_section"], "index_section"), "footer": mf["footer"]}


def _assert_same_commit(ours: Path, theirs: Path) -> None:
    a, b = _committed(ours), _committed(theirs)
    assert a == b, f"lance-cpp's clone {ours} differs from pylance's {theirs}:\n{a}\n{b}"
    listing = lambda root: sorted(str(p.relative_to(root).parent) for p in root.rglob("*")
                                  if p.is_file() and p.name != "latest_version_hint.json")
    assert listing(ours) == listing(theirs)


def _reference_args(ref):
    return [] if ref is None else ["--version", str(ref)]


def _resolve(src: Path, ref):
    ds = lance.dataset(str(src))
    return ds.version if ref is None else ref


def _uses_index(ds: lance.LanceDataset, flt: str) -> bool:
    return "ScalarIndexQuery" in ds.scanner(filter=flt).explain_plan(True)


# --------------------------------------------------------------------------- #
# Shallow clones
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("ref", [None, 2, "indexed"], ids=["latest", "v2", "tag"])
def test_shallow_clone_as_pylance(version, ref, sources, tmp_path, lance_cpp):
    src = sources[version]
    before = _tree(src)
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    lance_cpp.run_ok("shallow-clone", src, ours, *_reference_args(ref))
    lance.dataset(str(src)).shallow_clone(str(theirs), _resolve(src, ref))
    _assert_same_commit(ours, theirs)
    # Nothing was copied: the clone names the source's files.
    assert not (ours / "data").exists() and not (ours / "_deletions").exists()
    assert not (ours / "_indices").exists()

    expected = lance.dataset(str(src), version=ref).to_table()
    clone = lance.dataset(str(ours))
    assert clone.version == lance.dataset(str(src), version=ref).version
    assert clone.to_table().equals(expected)
    if ref != 2:  # versions 3 and 4 have the index: it is found under the source's base
        assert _uses_index(clone, "id = 7")
        assert clone.to_table(filter="id = 7").equals(expected.filter(pc.equal(expected["id"], 7)))
    # lance-cpp reads pylance's clone the same way.
    assert lance_cpp.run_ok("count", theirs).stdout.strip() == str(expected.num_rows)

    # pylance writes to lance-cpp's clone, lance-cpp to pylance's: each side
    # reads the other's, and the source is untouched.
    lance.write_dataset(_rows(range(100, 105), 2), str(ours), mode="append")
    lance.dataset(str(ours)).delete("id = 2 OR id = 101")
    lance_cpp.run_ok("write", theirs, "--input", _write_ipc(tmp_path / "a.arrow", _rows(range(100, 105), 2)),
                     "--mode", "append")
    lance_cpp.run_ok("delete", theirs, "id = 2 OR id = 101")
    a, b = lance.dataset(str(ours)).to_table(), lance.dataset(str(theirs)).to_table()
    assert a.equals(b)
    assert a.num_rows == expected.num_rows + 5 - 1 - (1 if 2 in expected["id"].to_pylist() else 0)
    assert lance_cpp.run_ok("count", ours).stdout.strip() == str(a.num_rows)
    assert _tree(src) == before


# --------------------------------------------------------------------------- #
# Deep clones
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("ref", [None, "indexed"], ids=["latest", "tag"])
def test_deep_clone_as_pylance(version, ref, sources, tmp_path, lance_cpp):
    src = tmp_path / "source.lance"
    shutil.copytree(sources[version], src)
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    lance_cpp.run_ok("deep-clone", src, ours, *_reference_args(ref))
    lance.dataset(str(src)).deep_clone(str(theirs), _resolve(src, ref))
    _assert_same_commit(ours, theirs)
    for sub in ("data", "_deletions", "_indices"):
        files = {str(p.relative_to(theirs)): p.read_bytes() for p in (theirs / sub).rglob("*") if p.is_file()}
        assert {str(p.relative_to(ours)): p.read_bytes() for p in (ours / sub).rglob("*") if p.is_file()} == files

    expected = lance.dataset(str(src), version=ref).to_table()
    shutil.rmtree(src)  # a deep clone needs nothing of its source
    clone = lance.dataset(str(ours))
    assert clone.to_table().equals(expected)
    assert _uses_index(clone, "id = 7")
    assert clone.to_table(filter="id = 7").num_rows == 1

    lance.write_dataset(_rows(range(100, 105), 2), str(ours), mode="append")
    lance.dataset(str(ours)).delete("id = 3")
    lance_cpp.run_ok("write", theirs, "--input", _write_ipc(tmp_path / "a.arrow", _rows(range(100, 105), 2)),
                     "--mode", "append")
    lance_cpp.run_ok("delete", theirs, "id = 3")
    a, b = lance.dataset(str(ours)).to_table(), lance.dataset(str(theirs)).to_table()
    assert a.equals(b) and a.num_rows == expected.num_rows + 4
    assert lance_cpp.run_ok("count", ours).stdout.strip() == str(a.num_rows)


def test_deep_clone_of_a_shallow_clone(sources, tmp_path, lance_cpp):
    """Files under the source's base and under the clone's own root (a delete
    and an append on the clone) are all copied; the result needs neither."""
    src = tmp_path / "source.lance"
    shutil.copytree(sources["2.2"], src)
    shallow = tmp_path / "shallow.lance"
    lance.dataset(str(src)).shallow_clone(str(shallow), 4)
    lance.dataset(str(shallow)).delete("id = 4 OR id = 33")
    lance.write_dataset(_rows(range(50, 53)), str(shallow), mode="append")
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    lance_cpp.run_ok("deep-clone", shallow, ours)
    lance.dataset(str(shallow)).deep_clone(str(theirs), lance.dataset(str(shallow)).version)
    _assert_same_commit(ours, theirs)
    expected = lance.dataset(str(shallow)).to_table()
    shutil.rmtree(src)
    shutil.rmtree(shallow)
    assert lance.dataset(str(ours)).to_table().equals(expected)
    assert lance_cpp.run_ok("count", ours).stdout.strip() == str(expected.num_rows)
    assert _uses_index(lance.dataset(str(ours)), "id = 7")


def test_shallow_clone_of_a_shallow_clone(sources, tmp_path, lance_cpp):
    """The second clone adds base id 1 for the first clone's own files;
    files and the index already under base 0 keep it."""
    shallow = tmp_path / "shallow.lance"
    lance.dataset(str(sources["2.1"])).shallow_clone(str(shallow), 4)
    lance.dataset(str(shallow)).delete("id = 4")
    lance.write_dataset(_rows(range(50, 53)), str(shallow), mode="append")
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    lance_cpp.run_ok("shallow-clone", shallow, ours)
    lance.dataset(str(shallow)).shallow_clone(str(theirs), lance.dataset(str(shallow)).version)
    _assert_same_commit(ours, theirs)
    clone = lance.dataset(str(ours))
    assert clone.to_table().equals(lance.dataset(str(shallow)).to_table())
    assert _uses_index(clone, "id = 7")


def test_deep_clone_copies_blob_sidecars(tmp_path, lance_cpp):
    """Dedicated blob v2 values live in sidecar files beside their data
    file: a deep clone copies them, so the values read without the source."""
    from lance.blob import blob_array, blob_field

    field = blob_field("b", inline_size_threshold=16, dedicated_size_threshold=100)
    values = [b"", None, b"i" * 10, b"p" * 60, b"d" * 180, b"q" * 270]
    t = pa.table({"id": pa.array(range(6), pa.int64()), "b": blob_array(values)},
                 schema=pa.schema([pa.field("id", pa.int64()), field]))
    src = tmp_path / "source.lance"
    lance.write_dataset(t, src, data_storage_version="2.2").delete("id = 2")
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    lance_cpp.run_ok("deep-clone", src, ours)
    lance.dataset(str(src)).deep_clone(str(theirs), 2)
    _assert_same_commit(ours, theirs)
    shutil.rmtree(src)
    for uri in (ours, theirs):
        blobs = [None if f is None else f.read() for f in lance.dataset(str(uri)).take_blobs("b", indices=range(5))]
        assert blobs == [values[i] for i in (0, 1, 3, 4, 5)], uri
    out = tmp_path / "blobs.arrow"
    lance_cpp.run_ok("take-blobs", ours, "b", "--indices", "0,1,2,3,4", "--out", out)
    assert ipc.open_file(str(out)).read_all().column(0).to_pylist() == [values[i] for i in (0, 1, 3, 4, 5)]


def test_clone_refusals(sources, tmp_path, lance_cpp):
    """What pylance refuses: a target that already holds a dataset, a version
    or tag the source does not have. Nothing is left at the target."""
    src = sources["2.2"]
    existing = tmp_path / "existing.lance"
    lance.write_dataset(_rows(range(3)), existing)
    for cmd in ("shallow-clone", "deep-clone"):
        with pytest.raises(OSError, match="already exists"):
            getattr(lance.dataset(str(src)), cmd.replace("-", "_"))(str(existing), 1)
        assert_clean_failure(lance_cpp.run(cmd, src, existing), "already exists")
        assert lance.dataset(str(existing)).version == 1
        for bad in ("99", "no-such-tag"):
            target = tmp_path / f"{cmd}-{bad}.lance"
            proc = lance_cpp.run(cmd, src, target, "--version", bad)
            assert_clean_failure(proc, bad)
            assert not (target / "_versions").exists()


# --------------------------------------------------------------------------- #
# Writes to registered bases (initial_bases / target_bases)
# --------------------------------------------------------------------------- #

def _placeholders(msg, root: Path, names: dict):
    """A manifest with the data file names (random) and the test's directory
    replaced by placeholders, so two writers' manifests compare."""
    if not isinstance(msg, dict):
        return msg
    out = {}
    for k, vs in msg.items():
        if k == "deletion_file":  # random ids
            vs = [dict(d, id=["<id>"]) for d in vs]
        elif k == "updated_fragments":  # pylance's come in no fixed order
            vs = sorted(vs, key=lambda f: f.get("id", [0])[0])
        out[k] = [_rename(v, root, names) if k in ("path", "ref_path") else _placeholders(v, root, names)
                  for v in vs]
    return out


def _rename(v, root: Path, names: dict):
    if not isinstance(v, bytes):
        return v
    s = v.decode()
    if s.startswith(str(root)):
        return "<root>" + s[len(str(root)):]
    if s.endswith(".lance"):
        return names.setdefault(s, f"<file {len(names)}>")
    return s


def _version_view(uri: Path, version: int, root: Path, names: dict) -> dict:
    mf = wire.read_manifest_file(wire.manifest_path(uri, version))
    view = {"manifest": _normalize(mf["manifest"], "manifest"),
            "transaction": _normalize(mf["transaction"], "transaction")}
    return {k: _placeholders(v, root, names) for k, v in view.items()}


@pytest.mark.parametrize("version", VERSIONS)
def test_target_bases_as_pylance(version, tmp_path, lance_cpp):
    """The same writes on each side: a dataset created with two registered
    bases (a plain directory and a dataset root) writing to one, appends to
    the other, to none, and by path, then a delete. Every manifest is
    pylance's, flag 16 included, and each side reads the other's."""
    sides = {}
    for side in ("cpp", "py"):
        root = tmp_path / side
        root.mkdir()
        sides[side] = root
    steps = [("create", ["plain"], _rows(range(10))), ("append", ["dsroot"], _rows(range(10, 15))),
             ("append", [], _rows(range(15, 18))), ("append", ["<dsroot path>"], _rows(range(18, 20)))]
    for side, root in sides.items():
        uri = root / "ds.lance"
        plain, dsroot = root / "plain", root / "dsroot"
        for mode, targets, table in steps:
            targets = [str(dsroot) if t == "<dsroot path>" else t for t in targets]
            if side == "py":
                kw = {"target_bases": targets} if targets else {}
                if mode == "create":
                    kw["initial_bases"] = [lance.DatasetBasePath(str(plain), name="plain"),
                                           lance.DatasetBasePath(str(dsroot), name="dsroot", is_dataset_root=True)]
                lance.write_dataset(table, str(uri), mode=mode, data_storage_version=version, **kw)
            else:
                args = ["write", uri, "--input", _write_ipc(root / f"in-{len(list(root.iterdir()))}.arrow", table),
                        "--mode", mode, "--data-storage-version", version]
                if targets:
                    args += ["--target-base", ",".join(targets)]
                if mode == "create":
                    args += ["--initial-bases", f"plain={plain},root:dsroot={dsroot}"]
                lance_cpp.run_ok(*args)
        if side == "py":
            lance.dataset(str(uri)).delete("id = 3 OR id = 12")
        else:
            lance_cpp.run_ok("delete", uri, "id = 3 OR id = 12")
    cpp, py = sides["cpp"] / "ds.lance", sides["py"] / "ds.lance"
    for v in range(1, 6):
        ours = _version_view(cpp, v, sides["cpp"], {})
        theirs = _version_view(py, v, sides["py"], {})
        ours["manifest"].pop("base_paths"), theirs["manifest"].pop("base_paths")
        assert ours == theirs, f"version {v}"
    # Base paths: the same ids, names, kinds and (relative) paths.
    bp = lambda uri, root: sorted(((b.id, b.name, b.is_dataset_root, str(Path(b.path).relative_to(root)))
                                   for b in lance.dataset(str(uri)).base_paths().values()))
    assert bp(cpp, sides["cpp"]) == bp(py, sides["py"]) == [(1, "plain", False, "plain"),
                                                             (2, "dsroot", True, "dsroot")]
    assert len(list((sides["cpp"] / "plain").glob("*.lance"))) == 1
    assert len(list((sides["cpp"] / "dsroot" / "data").glob("*.lance"))) == 2
    for uri in (cpp, py):
        assert lance.dataset(str(uri)).to_table().equals(lance.dataset(str(py)).to_table())
        assert lance_cpp.run_ok("count", uri).stdout.strip() == "18"
        inspect = lance_cpp.inspect(uri)
        assert inspect["reader_feature_flags"] & 16 and inspect["writer_feature_flags"] & 16


def test_target_base_refusals(tmp_path, lance_cpp):
    uri = tmp_path / "ds.lance"
    src = _write_ipc(tmp_path / "in.arrow", _rows(range(5)))
    lance_cpp.run_ok("write", uri, "--input", src, "--initial-bases", f"b={tmp_path / 'b'}", "--target-base", "b")
    with pytest.raises(OSError, match="not found"):
        lance.write_dataset(_rows(range(5)), str(uri), mode="append", target_bases=["nope"])
    assert_clean_failure(lance_cpp.run("write", uri, "--input", src, "--mode", "append", "--target-base", "nope"),
                         "nope")
    with pytest.raises(Exception, match="CREATE"):
        lance.write_dataset(_rows(range(5)), str(uri), mode="append",
                            initial_bases=[lance.DatasetBasePath(str(tmp_path / "c"), name="c")])
    assert_clean_failure(lance_cpp.run("write", uri, "--input", src, "--mode", "append", "--initial-bases",
                                       f"c={tmp_path / 'c'}"), "creating")
    # By id (lance-cpp's spelling of the reference's target base ids).
    lance_cpp.run_ok("write", uri, "--input", src, "--mode", "append", "--target-base", "1")
    assert len(list((tmp_path / "b").glob("*.lance"))) == 2
    assert lance.dataset(str(uri)).count_rows() == 10


# --------------------------------------------------------------------------- #
# Branches
# --------------------------------------------------------------------------- #

def _branch_json(root: Path, name: str) -> dict:
    return json.loads((root / "_refs" / "branches" / (name.replace("/", "%2F") + ".json")).read_text())


def _branch_commit(root: Path, name: str) -> dict:
    view = _committed_at(root / "tree" / name)
    return {k: _placeholders(v, root, {}) for k, v in view.items()}


def _committed_at(uri: Path) -> dict:
    latest = json.loads((uri / "_versions" / "latest_version_hint.json").read_text())["version"]
    mf = wire.read_manifest_file(wire.manifest_path(uri, latest))
    txn_name = mf["manifest"]["transaction_file"][0].decode()
    assert mf["transaction"] == wire.read_transaction_file(uri / "_transactions" / txn_name)
    return {"manifest": _normalize(mf["manifest"], "manifest"),
            "transaction": _normalize(mf["transaction"], "transaction"),
            "index_section": _normalize(mf["index_section"], "index_section")}


def _branch(ds_uri: Path, name: str) -> lance.LanceDataset:
    return lance.dataset(str(ds_uri)).checkout_version((name, None))


@pytest.mark.parametrize("version", VERSIONS)
def test_branch_as_pylance(version, sources, tmp_path, lance_cpp):
    """Each side makes branch "dev" from version 3 (the index's) of its copy,
    then "dev/fix" from dev: the same manifests and branch files. Then each
    side writes to the other's branches (append, delete, a tag), reads them,
    and main is unchanged."""
    cpp, py = tmp_path / "cpp.lance", tmp_path / "py.lance"
    shutil.copytree(sources[version], cpp)
    shutil.copytree(sources[version], py)
    main_rows = lance.dataset(str(py)).to_table()

    lance_cpp.run_ok("branch", cpp, "create", "dev", "--version", "3")
    lance.dataset(str(py)).create_branch("dev", 3)
    lance_cpp.run_ok("branch", cpp, "create", "dev/fix", "--branch", "dev")
    _branch(py, "dev").create_branch("dev/fix", 3)
    for name in ("dev", "dev/fix"):
        ours, theirs = _branch_commit(cpp, name), _branch_commit(py, name)
        assert ours == theirs, f"branch {name}:\n{ours}\n{theirs}"
        a, b = _branch_json(cpp, name), _branch_json(py, name)
        for j, root in ((a, cpp), (b, py)):
            j.pop("createAt")
            # The size of the parent's manifest (whose writer differs for dev/fix).
            parent = root / "tree" / j["parentBranch"] if j["parentBranch"] else root
            assert j.pop("manifestSize") == wire.manifest_path(parent, j["parentVersion"]).stat().st_size
            j["identifier"] = [(v, len(i)) for v, i in j["identifier"]["version_mapping"]]
        assert a == b, name
    assert _branch_json(cpp, "dev/fix")["identifier"]["version_mapping"][0] == \
        _branch_json(cpp, "dev")["identifier"]["version_mapping"][0]
    listed = lambda uri: {k: (v["parent_branch"], v["parent_version"], len(v["branch_identifier"]))
                          for k, v in lance.dataset(str(uri)).branches.list().items()}
    assert listed(cpp) == listed(py) == {"dev": (None, 3, 1), "dev/fix": ("dev", 3, 2)}
    assert lance_cpp.run_ok("branch", py, "list").stdout.splitlines() == ["dev main 3", "dev/fix dev 3"]

    # Writes to the other side's branches: pylance on lance-cpp's, lance-cpp on pylance's.
    extra = _rows(range(200, 204), 3)
    b = _branch(cpp, "dev")
    b.insert(extra)
    _branch(cpp, "dev").delete("id = 0 OR id = 201")
    _branch(cpp, "dev").tags.create("dev-head", 5)
    lance_cpp.run_ok("write", py, "--input", _write_ipc(tmp_path / "x.arrow", extra), "--mode", "append",
                     "--branch", "dev")
    lance_cpp.run_ok("delete", py, "id = 0 OR id = 201", "--branch", "dev")
    lance_cpp.run_ok("tag", py, "create", "dev-head", "5", "--branch", "dev")
    for uri in (cpp, py):
        tags = lance.dataset(str(uri)).tags.list()
        assert (tags["dev-head"]["branch"], tags["dev-head"]["version"]) == ("dev", 5), uri
        assert "dev-head 5 dev" in lance_cpp.run_ok("tag", uri, "list").stdout
    a, b = _branch(cpp, "dev").to_table(), _branch(py, "dev").to_table()
    assert a.equals(b)
    assert lance.dataset(str(cpp), version="dev-head").to_table().equals(a)
    for uri in (cpp, py):
        n = str(a.num_rows)
        assert lance_cpp.run_ok("count", uri, "--branch", "dev").stdout.strip() == n
        assert lance_cpp.run_ok("count", uri, "--version", "dev-head").stdout.strip() == n
        assert lance_cpp.run_ok("count", uri / "tree" / "dev").stdout.strip() == n
        assert lance_cpp.run_ok("count", uri, "--branch", "dev/fix").stdout.strip() == \
            str(lance.dataset(str(uri), version=3).count_rows())
        assert [r[0] for r in lance_cpp.versions(uri / "tree" / "dev")] == ["3", "4", "5"]
        assert lance.dataset(str(uri)).to_table().equals(main_rows)  # main untouched
        assert _uses_index(_branch(uri, "dev"), "id = 7")
    # New files of a branch live under its directory, not main's.
    assert not any((cpp / "data").glob("*.lance")) or \
        {p.name for p in (cpp / "data").glob("*.lance")} == {p.name for p in (sources[version] / "data").glob("*.lance")}
    assert any((py / "tree" / "dev" / "data").glob("*.lance"))


def test_branch_refusals(sources, tmp_path, lance_cpp):
    """Refused as pylance refuses: "main", an invalid name, a branch that
    exists, deleting one a branch was made from or a tag points at, one that
    does not exist; the branch stays."""
    uri = tmp_path / "ds.lance"
    shutil.copytree(sources["2.2"], uri)
    lance_cpp.run_ok("branch", uri, "create", "a")
    ds = lance.dataset(str(uri))
    for bad in ("main", "bad name", "x..y", "end/"):
        with pytest.raises(OSError, match="Ref is invalid"):
            ds.create_branch(bad, 1)
        assert_clean_failure(lance_cpp.run("branch", uri, "create", bad), "Ref is invalid")
    assert_clean_failure(lance_cpp.run("branch", uri, "create", "a"), "already exists")
    assert_clean_failure(lance_cpp.run("branch", uri, "create", "z", "--version", "99"), "99")
    assert not (uri / "tree" / "z").exists()
    ds.checkout_version(("a", None)).create_branch("a/b", 4)
    with pytest.raises(OSError, match="referenced by"):
        ds.branches.delete("a")
    assert_clean_failure(lance_cpp.run("branch", uri, "delete", "a"), "referenced by", "a/b")
    lance_cpp.run_ok("tag", uri, "create", "on-b", "4", "--branch", "a/b")
    with pytest.raises(OSError, match="referenced by tags"):
        ds.branches.delete("a/b")
    assert_clean_failure(lance_cpp.run("branch", uri, "delete", "a/b"), "referenced by tags", "on-b")
    lance_cpp.run_ok("tag", uri, "delete", "on-b")
    lance_cpp.run_ok("branch", uri, "delete", "a/b")
    assert not (uri / "tree" / "a" / "b").exists() and (uri / "tree" / "a" / "_versions").exists()
    assert set(lance.dataset(str(uri)).branches.list()) == {"a"}
    with pytest.raises(ValueError, match="does not exist"):
        ds.branches.delete("nope")
    assert_clean_failure(lance_cpp.run("branch", uri, "delete", "nope"), "does not exist")
    assert_clean_failure(lance_cpp.run("count", uri, "--branch", "nope"), "nope")
    assert_clean_failure(lance_cpp.run("write", uri, "--input", _write_ipc(tmp_path / "i.arrow", _rows(range(2))),
                                       "--mode", "append", "--branch", "nope"), "nope")
    lance_cpp.run_ok("branch", uri, "delete", "a")
    assert not (uri / "tree").exists() or not any((uri / "tree").iterdir())
    assert lance.dataset(str(uri)).branches.list() == {}


def test_cleanup_keeps_what_branches_use(sources, tmp_path, lance_cpp):
    """Cleanup of main keeps the version a branch was made from and its
    files (pylance 14 keeps it too); cleanup of the branch removes only the
    branch's old versions. Both sides then read the branch."""
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    shutil.copytree(sources["2.1"], ours)
    shutil.copytree(sources["2.1"], theirs)
    for uri in (ours, theirs):
        lance.dataset(str(uri)).create_branch("keep", 2)
        lance.write_dataset(_rows(range(300, 305)), str(uri), mode="overwrite")
        lance.write_dataset(_rows(range(305, 310)), str(uri), mode="append")
        b = _branch(uri, "keep")
        b.insert(_rows(range(400, 402)))
        _branch(uri, "keep").delete("id = 400")
    expected = _branch(theirs, "keep").to_table()
    lance_cpp.run_ok("cleanup", ours, "--older-than", "0", "--delete-unverified")
    lance.dataset(str(theirs)).cleanup_old_versions(older_than=timedelta(seconds=0), delete_unverified=True,
                                                               error_if_tagged_old_versions=False)
    names = lambda uri, d: sorted(p.name for p in (uri / d).glob("*"))
    assert names(ours, "_versions") == names(theirs, "_versions")
    assert len(names(ours, "data")) == len(names(theirs, "data"))
    for uri in (ours, theirs):
        assert _branch(uri, "keep").to_table().equals(expected)
        assert lance_cpp.run_ok("count", uri, "--branch", "keep").stdout.strip() == str(expected.num_rows)
    lance_cpp.run_ok("cleanup", ours, "--older-than", "0", "--delete-unverified", "--branch", "keep")
    _branch(theirs, "keep").cleanup_old_versions(older_than=timedelta(seconds=0), delete_unverified=True,
                                                               error_if_tagged_old_versions=False)
    assert names(ours / "tree" / "keep", "_versions") == names(theirs / "tree" / "keep", "_versions")
    assert names(ours, "_versions") == names(theirs, "_versions")
    for uri in (ours, theirs):
        assert _branch(uri, "keep").to_table().equals(expected)
        assert lance_cpp.run_ok("count", uri, "--branch", "keep").stdout.strip() == str(expected.num_rows)


def test_clones_of_a_branch(sources, tmp_path, lance_cpp):
    """A branch cloned (by --branch, and by a tag on the branch): the base
    path names the branch and points at its directory, as pylance's."""
    uri = tmp_path / "ds.lance"
    shutil.copytree(sources["2.2"], uri)
    lance.dataset(str(uri)).create_branch("dev", 3)
    _branch(uri, "dev").insert(_rows(range(500, 503)))
    _branch(uri, "dev").tags.create("dev-tag", 4)
    dev = _branch(uri, "dev")
    for i, args in enumerate((["--branch", "dev"], ["--version", "dev-tag"])):
        for kind in ("shallow", "deep"):
            ours, theirs = tmp_path / f"cpp-{kind}-{i}.lance", tmp_path / f"py-{kind}-{i}.lance"
            lance_cpp.run_ok(f"{kind}-clone", uri, ours, *args)
            getattr(dev, f"{kind}_clone")(str(theirs), 4)
            _assert_same_commit(ours, theirs)
            assert lance.dataset(str(ours)).to_table().equals(dev.to_table())
    bases = lance.dataset(str(tmp_path / "cpp-shallow-0.lance")).base_paths()
    assert {(b.id, b.name, b.path) for b in bases.values()} == {(0, None, str(uri)), (1, "dev", str(uri / "tree" / "dev"))}


@pytest.mark.parametrize("version", ["2.0", "2.2"])
def test_stable_row_ids_through_clones_and_branches(version, tmp_path, lance_cpp):
    """With stable row ids (flag 2): shallow and deep clones and a branch as
    pylance makes them, and row ids read through each the same way."""
    src = tmp_path / "src.lance"
    lance.write_dataset(_rows(range(20)), str(src), data_storage_version=version, enable_stable_row_ids=True,
                        max_rows_per_file=8)
    lance.dataset(str(src)).delete("id = 5")
    lance.write_dataset(_rows(range(20, 25)), str(src), mode="append")
    for kind in ("shallow", "deep"):
        ours, theirs = tmp_path / f"cpp-{kind}.lance", tmp_path / f"py-{kind}.lance"
        lance_cpp.run_ok(f"{kind}-clone", src, ours)
        getattr(lance.dataset(str(src)), f"{kind}_clone")(str(theirs), 3)
        _assert_same_commit(ours, theirs)
        want = lance.dataset(str(theirs)).to_table(with_row_id=True)
        assert lance.dataset(str(ours)).to_table(with_row_id=True).equals(want)
        out = tmp_path / f"{kind}.arrow"
        lance_cpp.run_ok("scan", ours, "--with-row-id", "--out", out)
        assert ipc.open_file(str(out)).read_all().equals(want)
    cpp, py = tmp_path / "cpp", tmp_path / "py"
    shutil.copytree(src, cpp)
    shutil.copytree(src, py)
    lance_cpp.run_ok("branch", cpp, "create", "b", "--version", "2")
    lance.dataset(str(py)).create_branch("b", 2)
    assert _branch_commit(cpp, "b") == _branch_commit(py, "b")
    lance_cpp.run_ok("write", py, "--input", _write_ipc(tmp_path / "a.arrow", _rows(range(60, 63))),
                     "--mode", "append", "--branch", "b")
    _branch(cpp, "b").insert(_rows(range(60, 63)))
    a = _branch(cpp, "b").to_table(with_row_id=True)
    assert a.equals(_branch(py, "b").to_table(with_row_id=True))
    assert a["_rowid"].to_pylist()[-3:] == [20, 21, 22]  # next_row_id of the parent version


def test_every_command_on_a_branch(sources, tmp_path, lance_cpp):
    """update, merge-insert, compact, restore, scan, take, inspect and
    versions with --branch on a pylance branch give what pylance's same
    calls give on the same branch of a copy; main is untouched."""
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    for uri in (ours, theirs):
        shutil.copytree(sources["2.1"], uri)
        lance.dataset(str(uri)).create_branch("w", 2)  # before the index
    main_rows = lance.dataset(str(theirs)).to_table()
    upsert = _rows([1, 2, 70, 71], 9)
    lance_cpp.run_ok("update", ours, "--set", "v = v + 1000", "--where", "id < 6", "--branch", "w")
    lance_cpp.run_ok("merge-insert", ours, "--on", "id", "--input", _write_ipc(tmp_path / "u.arrow", upsert),
                     "--when-matched-update-all", "--when-not-matched-insert-all", "--branch", "w")
    lance_cpp.run_ok("compact", ours, "--branch", "w")
    b = _branch(theirs, "w")
    b.update({"v": "v + 1000"}, where="id < 6")
    _branch(theirs, "w").merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(upsert)
    _branch(theirs, "w").optimize.compact_files()
    a, p = _branch(ours, "w"), _branch(theirs, "w")
    assert a.version == p.version == 6
    assert a.to_table().sort_by("id").equals(p.to_table().sort_by("id"))
    ops = ["Clone", "Update", "Update", "ReserveFragments", "Rewrite"]
    for uri in (ours, theirs):
        proc = lance_cpp.run_ok("versions", uri, "--branch", "w")
        assert [line.split()[2] for line in proc.stdout.splitlines()] == ops
    out = tmp_path / "s.arrow"
    lance_cpp.run_ok("scan", theirs, "--branch", "w", "--out", out)
    assert ipc.open_file(str(out)).read_all().equals(p.to_table())
    lance_cpp.run_ok("take", theirs, "--branch", "w", "--indices", "0,3", "--out", out)
    assert ipc.open_file(str(out)).read_all().equals(p.take([0, 3]))
    js = lance_cpp.run_ok("inspect", theirs, "--branch", "w", "--json").stdout
    assert json.loads(js)["version"] == 6 and json.loads(js)["num_rows"] == p.count_rows()
    lance_cpp.run_ok("restore", ours, "2", "--branch", "w")
    _branch(theirs, "w").checkout_version(("w", 2)).restore()
    assert _branch(ours, "w").to_table().equals(_branch(theirs, "w").to_table())
    assert _branch(ours, "w").version == _branch(theirs, "w").version == 7
    for uri in (ours, theirs):
        assert lance.dataset(str(uri)).to_table().equals(main_rows)
