"""Table config and metadata (UpdateConfig), automatic cleanup and inline-only
transactions, lance-cpp against pylance.

* Parity: each config or metadata change made with `lance-cpp config` on one
  copy of a pylance dataset and with pylance's own call on another gives the
  same manifest and transaction, field by field (decoded by protoc, as
  test_manifest_parity does; uuids, file names and times aside).
* Both ways: each side reads the config and metadata the other wrote, then
  writes to the dataset, and the config and metadata stay.
* Auto-cleanup: the same history under the same `lance.auto_cleanup.*` config
  leaves the same versions and files on both sides.
* Inline transactions: lance-cpp's --disable-transaction-file commits carry
  their transaction only in the manifest (writer flag 32) and pylance reads and
  writes on top of them; lance-cpp finds pylance's transactions inline when the
  _transactions/ files are gone, for reading and for conflict checks.
"""

from __future__ import annotations

import os
import shutil
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import lance
import manifest_wire as wire
from test_manifest_parity import Renamer, _base_names, _listing, committed, diff, normalize

warnings.filterwarnings("ignore", category=DeprecationWarning)

FLAG_TABLE_CONFIG = 8
FLAG_DISABLE_TRANSACTION_FILE = 32


def rows(ids: list[int]) -> pa.Table:
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([f"n{i}" for i in ids], pa.string()),
        "s": pa.array([{"a": i, "b": f"b{i}"} for i in ids], pa.struct([("a", pa.int32()), ("b", pa.string())])),
    })


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A pylance dataset at version 4: two fragments, a deletion file, and
    config, schema and field metadata already set (so updates and removals
    have something to change)."""
    uri = tmp_path_factory.mktemp("config-base") / "base.lance"
    lance.write_dataset(rows(list(range(20))), str(uri), max_rows_per_file=10)
    ds = lance.dataset(str(uri))
    ds.delete("id = 3")
    ds = lance.dataset(str(uri))
    ds.update_config({"k1": "v1", "k2": "v2"})
    ds = lance.dataset(str(uri))
    ds.update_schema_metadata({"sm1": "x", "sm2": "y"})
    return uri


def _py(fn):
    return lambda p: fn(lance.dataset(str(p)))


# (lance-cpp config arguments after the URI, the same change with pylance)
CHANGES = {
    "set": (["set", "k3=v3", "k1=new"], _py(lambda d: d.update_config({"k3": "v3", "k1": "new"}))),
    "unset": (["unset", "k2", "missing"], _py(lambda d: d.delete_config_keys(["k2", "missing"]))),
    "set-none-via-update": (["unset", "k1"], _py(lambda d: d.update_config({"k1": None}))),
    "replace": (["set", "only=1", "--replace"], _py(lambda d: d.update_config({"only": "1"}, replace=True))),
    "set-lance-key": (["set", "lance.auto_cleanup.interval=1000"],
                      _py(lambda d: d.update_config({"lance.auto_cleanup.interval": "1000"}))),
    "table-metadata": (["set-table-metadata", "owner=me", "team=x"],
                       _py(lambda d: d.update_metadata({"owner": "me", "team": "x"}))),
    "schema-metadata": (["set-schema-metadata", "sm3=z", "sm1=x2"],
                        _py(lambda d: d.update_schema_metadata({"sm3": "z", "sm1": "x2"}))),
    "schema-metadata-unset": (["unset-schema-metadata", "sm1"],
                              _py(lambda d: d.update_schema_metadata({"sm1": None}))),
    "schema-metadata-replace": (["set-schema-metadata", "r=1", "--replace"],
                                _py(lambda d: d.replace_schema_metadata({"r": "1"}))),
    "schema-metadata-clear": (["set-schema-metadata", "--replace"],
                              _py(lambda d: d.update_schema_metadata({}, replace=True))),
    "field-metadata": (["set-field-metadata", "name", "desc=the name"],
                       _py(lambda d: d.update_field_metadata({"name": {"desc": "the name"}}))),
    "field-metadata-nested": (["set-field-metadata", "s.b", "unit=cm"],
                              _py(lambda d: d.update_field_metadata({"s.b": {"unit": "cm"}}))),
    "field-metadata-replace": (["set-field-metadata", "id", "z=9", "--replace"],
                               _py(lambda d: d.replace_field_metadata("id", {"z": "9"}))),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_update_config_parity(change, base, tmp_path, lance_cpp):
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    kept_paths, kept_ids = _base_names(ours)
    base_listing = _listing(ours)
    cpp_args, py_op = CHANGES[change]
    lance_cpp.run_ok("config", ours, *cpp_args)
    py_op(theirs)
    a = committed(ours, base_listing, Renamer(kept_paths, kept_ids))
    b = committed(theirs, base_listing, Renamer(kept_paths, kept_ids))
    assert "update_config" in b["transaction"], b["transaction"]
    problems = []
    for part in ("version", "footer", "manifest", "transaction", "index_section", "added", "removed"):
        problems += [f"{part}: {d}" for d in diff(a[part], b[part])]
    assert not problems, f"{change}: lance-cpp's commit differs from pylance's:\n  " + "\n  ".join(problems)
    m = wire.read_manifest_file(wire.manifest_path(ours, a["version"]))["manifest"]
    flags = m.get("writer_feature_flags", [0])[0]
    assert bool(flags & FLAG_TABLE_CONFIG) == ("config" in m), m


def test_field_metadata_unknown_field_refused(base, tmp_path, lance_cpp):
    uri = tmp_path / "d.lance"
    shutil.copytree(base, uri)
    proc = lance_cpp.run("config", uri, "set-field-metadata", "s.nope", "k=v")
    assert proc.returncode == 1 and "field 's.nope' not found" in proc.stderr, proc.stderr
    with pytest.raises(OSError, match="not found"):
        lance.dataset(str(uri)).update_field_metadata({"s.nope": {"k": "v"}})
    assert lance.dataset(str(uri)).version == 4


def test_config_list_reads_pylance(base, lance_cpp):
    out = lance_cpp.run_ok("config", base, "list").stdout
    assert out == "k1=v1\nk2=v2\n"


@pytest.mark.parametrize("flag", [["--replace"], ["--max-retries", "3"], ["--disable-transaction-file"]])
def test_config_list_refuses_commit_options(flag, base, lance_cpp):
    """A listing commits nothing, so the options of a commit are refused
    rather than ignored."""
    proc = lance_cpp.run("config", base, "list", *flag)
    assert proc.returncode == 2 and f"{flag[0]} does not go with list, which commits nothing" in proc.stderr, proc.stderr


def test_pylance_writes_keep_lance_cpp_config(base, tmp_path, lance_cpp):
    """lance-cpp sets config and every metadata kind; pylance reads them, then
    appends and deletes, and they stay."""
    uri = tmp_path / "d.lance"
    shutil.copytree(base, uri)
    lance_cpp.run_ok("config", uri, "set", "k9=v9")
    lance_cpp.run_ok("config", uri, "set-table-metadata", "t=1")
    lance_cpp.run_ok("config", uri, "set-field-metadata", "s.a", "f=2")
    ds = lance.dataset(str(uri))
    assert ds.config() == {"k1": "v1", "k2": "v2", "k9": "v9"}
    assert ds.metadata == {"t": "1"}
    assert ds.schema.field("s").type.field("a").metadata == {b"f": b"2"}
    lance.write_dataset(rows([100, 101]), str(uri), mode="append")
    lance.dataset(str(uri)).delete("id = 100")
    ds = lance.dataset(str(uri))
    assert ds.config() == {"k1": "v1", "k2": "v2", "k9": "v9"}
    assert ds.metadata == {"t": "1"}
    assert ds.schema_metadata == {"sm1": "x", "sm2": "y"}
    assert ds.schema.field("s").type.field("a").metadata == {b"f": b"2"}
    assert ds.count_rows() == 20 - 1 + 1


def test_lance_cpp_writes_keep_pylance_config(base, tmp_path, lance_cpp):
    """pylance sets config and metadata; lance-cpp reads them, appends,
    deletes and updates, and pylance still sees them."""
    uri = tmp_path / "d.lance"
    shutil.copytree(base, uri)
    ds = lance.dataset(str(uri))
    ds.update_field_metadata({"name": {"d": "x"}})
    lance.dataset(str(uri)).update_metadata({"owner": "py"})
    src = tmp_path / "more.arrow"
    with pa.OSFile(str(src), "wb") as sink, pa.ipc.new_file(sink, rows([50]).schema) as w:
        w.write_table(rows([50]))
    lance_cpp.run_ok("write", uri, "--input", src, "--mode", "append", "--quiet")
    lance_cpp.run_ok("delete", uri, "id = 5", "--quiet")
    lance_cpp.run_ok("update", uri, "--set", "name='u'", "--where", "id = 6", "--quiet")
    assert lance_cpp.run_ok("config", uri, "list").stdout == "k1=v1\nk2=v2\n"
    assert lance_cpp.run_ok("config", uri, "list-table-metadata").stdout == "owner=py\n"
    assert lance_cpp.run_ok("config", uri, "list-schema-metadata").stdout == "sm1=x\nsm2=y\n"
    assert lance_cpp.run_ok("config", uri, "list-field-metadata", "name").stdout == "d=x\n"
    ds = lance.dataset(str(uri))
    assert ds.config() == {"k1": "v1", "k2": "v2"}
    assert ds.metadata == {"owner": "py"}
    assert ds.schema_metadata == {"sm1": "x", "sm2": "y"}
    assert ds.schema.field("name").metadata == {b"d": b"x"}
    assert ds.count_rows() == 20 - 2 + 1


# --------------------------------------------------------------------------- #
# Automatic cleanup
# --------------------------------------------------------------------------- #

def _state(uri: Path) -> dict:
    ds = lance.dataset(str(uri))
    return {"versions": [v["version"] for v in ds.versions()],
            "data": len(os.listdir(uri / "data")),
            "transactions": len(os.listdir(uri / "_transactions")) if (uri / "_transactions").exists() else 0,
            "deletions": len(os.listdir(uri / "_deletions")) if (uri / "_deletions").exists() else 0}


def _write_arrow(path: Path, table: pa.Table) -> Path:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return path


AUTO_CLEANUP = {
    # Every third version, versions older than 0 s: only the version the
    # commit read and the new one stay.
    "interval-3": {"lance.auto_cleanup.interval": "3", "lance.auto_cleanup.older_than": "0s"},
    # Every version (interval 0), keeping the last 3.
    "retain-3": {"lance.auto_cleanup.interval": "0", "lance.auto_cleanup.retain_versions": "3"},
    # An interval alone: every version not kept for another reason goes.
    "interval-only": {"lance.auto_cleanup.interval": "2"},
    # Old enough only after a long time: nothing goes.
    "older-than-1h": {"lance.auto_cleanup.interval": "1", "lance.auto_cleanup.older_than": "1h 30min"},
    # Both conditions must hold.
    "both": {"lance.auto_cleanup.interval": "1", "lance.auto_cleanup.older_than": "0s",
             "lance.auto_cleanup.retain_versions": "4"},
}


@pytest.mark.parametrize("case", list(AUTO_CLEANUP))
@pytest.mark.parametrize("tagged", [False, True])
def test_auto_cleanup_as_pylance(case, tagged, tmp_path, lance_cpp):
    """The same history on both sides: create, a tag (or not), the config,
    then overwrites, appends and deletes; after each step both datasets hold
    the same versions and as many files of each kind."""
    config = AUTO_CLEANUP[case]
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    for uri in (ours, theirs):
        lance.write_dataset(rows(list(range(10))), str(uri))
        if tagged:
            lance.dataset(str(uri)).tags.create("keep", 1)
    args = [f"{k}={v}" for k, v in config.items()]
    lance_cpp.run_ok("config", ours, "set", *args)
    lance.dataset(str(theirs)).update_config(dict(config))
    assert _state(ours) == _state(theirs)
    src = _write_arrow(tmp_path / "r.arrow", rows(list(range(100, 105))))
    steps = [
        (["write", ours, "--input", src, "--mode", "overwrite", "--quiet"],
         lambda: lance.write_dataset(rows(list(range(100, 105))), str(theirs), mode="overwrite")),
        (["write", ours, "--input", src, "--mode", "append", "--quiet"],
         lambda: lance.write_dataset(rows(list(range(100, 105))), str(theirs), mode="append")),
        (["delete", ours, "id = 101", "--quiet"], lambda: lance.dataset(str(theirs)).delete("id = 101")),
        (["write", ours, "--input", src, "--mode", "overwrite", "--quiet"],
         lambda: lance.write_dataset(rows(list(range(100, 105))), str(theirs), mode="overwrite")),
        (["delete", ours, "id = 102", "--quiet"], lambda: lance.dataset(str(theirs)).delete("id = 102")),
        (["write", ours, "--input", src, "--mode", "append", "--quiet"],
         lambda: lance.write_dataset(rows(list(range(100, 105))), str(theirs), mode="append")),
        # Two commits each side (ReserveFragments, Rewrite), each a trigger.
        (["compact", ours, "--quiet"], lambda: lance.dataset(str(theirs)).optimize.compact_files()),
        (["config", ours, "set", "x=1"], lambda: lance.dataset(str(theirs)).update_config({"x": "1"})),
        # Only while version 1 is still there (tagged, or not cleaned yet).
        (["restore", ours, "1"], lambda: lance.dataset(str(theirs), version=1).restore()),
    ]
    for i, (cpp, py) in enumerate(steps):
        time.sleep(0.01)  # distinct manifest timestamps
        if cpp[0] == "restore" and 1 not in _state(ours)["versions"]:
            continue
        proc = lance_cpp.run_ok(*cpp)
        py()
        a, b = _state(ours), _state(theirs)
        assert a == b, f"{case}, step {i} ({cpp[0]}): lance-cpp {a}, pylance {b}"
        if tagged and case != "older-than-1h":
            # pylance refuses to clean up around a tagged old version, and
            # warns; the commit stands.
            assert "tagged" in proc.stderr or a["versions"][0] == 1, proc.stderr
    assert lance.dataset(str(ours)).to_table().equals(lance.dataset(str(theirs)).to_table())


def _branch_state(uri: Path, name: str) -> dict:
    ds = lance.dataset(str(uri)).checkout_version((name, None))
    tree = uri / "tree" / name
    return {"versions": [v["version"] for v in ds.versions()],
            "data": len(os.listdir(tree / "data")) if (tree / "data").exists() else 0,
            "deletions": len(os.listdir(tree / "_deletions")) if (tree / "_deletions").exists() else 0,
            "main": _state(uri)}


@pytest.mark.parametrize("keep", ["nothing", "tag", "child-branch"])
def test_auto_cleanup_on_a_branch_as_pylance(keep, tmp_path, lance_cpp):
    """A commit on a branch whose config asks for cleanup cleans the branch's
    own old versions, as pylance's: main is left alone, a tag on the branch
    makes pylance refuse (a warning, the commit stands), and a branch made
    from the branch keeps the version it was made from."""
    config = {"lance.auto_cleanup.interval": "1", "lance.auto_cleanup.older_than": "0s"}
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    for uri in (ours, theirs):
        lance.write_dataset(rows(list(range(10))), str(uri))
        lance.write_dataset(rows(list(range(10, 15))), str(uri), mode="append")
        lance.dataset(str(uri)).create_branch("dev", 2)
        dev = lance.dataset(str(uri)).checkout_version(("dev", None))
        dev.update_config(dict(config))
        lance.dataset(str(uri)).checkout_version(("dev", None)).insert(rows([100]))
        if keep == "tag":
            lance.dataset(str(uri)).checkout_version(("dev", None)).tags.create("dev-tag", 4)
        elif keep == "child-branch":
            lance.dataset(str(uri)).checkout_version(("dev", None)).create_branch("dev/fix", 4)
    assert _branch_state(ours, "dev") == _branch_state(theirs, "dev")
    src = _write_arrow(tmp_path / "r.arrow", rows([200, 201]))
    steps = [
        (["write", ours, "--input", src, "--mode", "append", "--quiet", "--branch", "dev"],
         lambda d: d.insert(rows([200, 201]))),
        (["delete", ours, "id = 200", "--quiet", "--branch", "dev"], lambda d: d.delete("id = 200")),
        (["config", ours, "set", "x=1", "--branch", "dev"], lambda d: d.update_config({"x": "1"})),
        (["write", ours, "--input", src, "--mode", "append", "--quiet", "--branch", "dev"],
         lambda d: d.insert(rows([200, 201]))),
    ]
    warned = []
    for i, (cpp, py) in enumerate(steps):
        time.sleep(0.01)  # distinct manifest timestamps
        proc = lance_cpp.run_ok(*cpp)
        py(lance.dataset(str(theirs)).checkout_version(("dev", None)))
        a, b = _branch_state(ours, "dev"), _branch_state(theirs, "dev")
        assert a == b, f"{keep}, step {i} ({cpp[0]}): lance-cpp {a}, pylance {b}"
        warned.append(proc.stderr)
    # pylance's refusal around the tagged version is a warning here; no
    # other cleanup warns.
    if keep == "tag":
        assert any("tagged" in e for e in warned), warned
    else:
        assert not any("warning" in e for e in warned), warned
    kept = _branch_state(ours, "dev")["versions"]
    # The commit's read version and the new one, and what a tag or a branch
    # holds; main (versions 1 and 2) untouched.
    assert kept == {"nothing": [7, 8], "tag": [4, 5, 6, 7, 8], "child-branch": [4, 7, 8]}[keep], kept
    assert _branch_state(ours, "dev")["main"]["versions"] == [1, 2]
    # Each side reads the other's branch.
    for uri in (ours, theirs):
        expected = lance.dataset(str(uri)).checkout_version(("dev", None)).to_table()
        assert lance_cpp.run_ok("count", uri, "--branch", "dev").stdout.split()[0] == str(expected.num_rows)
    assert (lance.dataset(str(ours)).checkout_version(("dev", None)).to_table()
            .equals(lance.dataset(str(theirs)).checkout_version(("dev", None)).to_table()))
    if keep == "child-branch":
        for uri in (ours, theirs):
            assert lance.dataset(str(uri)).checkout_version(("dev/fix", None)).count_rows() == 16


def test_auto_cleanup_bad_value_warns_and_commits(tmp_path, lance_cpp):
    uri = tmp_path / "d.lance"
    lance.write_dataset(rows([1, 2]), str(uri))
    proc = lance_cpp.run_ok("config", uri, "set", "lance.auto_cleanup.interval=1",
                            "lance.auto_cleanup.older_than=soon")
    assert "warning: automatic cleanup" in proc.stderr and "older_than" in proc.stderr, proc.stderr
    assert _state(uri)["versions"] == [1, 2]


@pytest.mark.parametrize("key,value", [("lance.row_lineage.spill", "true"),
                                       ("lance.auto_cleanup.referenced_branch", "true")])
def test_unimplemented_lance_keys_refused(key, value, tmp_path, lance_cpp):
    """pylance implements these keys and lance-cpp does not: writes refuse,
    naming the key; the key can still be removed."""
    uri = tmp_path / "d.lance"
    lance.write_dataset(rows([1, 2, 3]), str(uri))
    lance.dataset(str(uri)).update_config({key: value})
    src = _write_arrow(tmp_path / "r.arrow", rows([9]))
    for args in (["write", uri, "--input", src, "--mode", "append", "--quiet"], ["delete", uri, "id = 1", "--quiet"],
                 ["update", uri, "--set", "name='x'", "--quiet"]):
        proc = lance_cpp.run(*args)
        assert proc.returncode == 1 and key in proc.stderr, (args, proc.stderr)
    assert lance.dataset(str(uri)).version == 2
    lance_cpp.run_ok("config", uri, "unset", key)
    lance_cpp.run_ok("delete", uri, "id = 1", "--quiet")
    assert lance.dataset(str(uri)).count_rows() == 2


# --------------------------------------------------------------------------- #
# Transactions in the manifest only
# --------------------------------------------------------------------------- #

INLINE_OPS = {
    "append": lambda src: (["write", "{uri}", "--input", src, "--mode", "append", "--quiet"],
                           lambda p: lance.write_dataset(rows([200, 201]), str(p), mode="append")),
    "delete": lambda src: (["delete", "{uri}", "id = 4 OR id = 12", "--quiet"],
                           lambda p: lance.dataset(str(p)).delete("id = 4 OR id = 12")),
    "update": lambda src: (["update", "{uri}", "--set", "name='u'", "--where", "id < 3", "--quiet"],
                           lambda p: lance.dataset(str(p)).update({"name": "'u'"}, where="id < 3")),
    "merge-insert": lambda src: (["merge-insert", "{uri}", "--on", "id", "--input", src,
                                  "--when-matched-update-all", "--when-not-matched-insert-all", "--quiet"],
                                 lambda p: lance.dataset(str(p)).merge_insert("id").when_matched_update_all()
                                 .when_not_matched_insert_all().execute(rows([200, 201]))),
    "config": lambda src: (["config", "{uri}", "set", "k7=v7"],
                           lambda p: lance.dataset(str(p)).update_config({"k7": "v7"})),
    "restore": lambda src: (["restore", "{uri}", "2"], lambda p: lance.dataset(str(p), version=2).restore()),
    # Two commits (ReserveFragments, then Rewrite), both inline only.
    "compact": lambda src: (["compact", "{uri}", "--quiet"],
                            lambda p: lance.dataset(str(p)).optimize.compact_files()),
}


def _inline_commit(uri: Path, base_listing: dict, renamer: Renamer) -> dict:
    version = lance.dataset(str(uri)).version
    mf = wire.read_manifest_file(wire.manifest_path(uri, version))
    m = dict(mf["manifest"])
    listing = _listing(uri)
    return {"manifest": m, "transaction": mf["transaction"],
            "added": {d: len(listing[d] - base_listing.get(d, set())) for d in listing},
            "renamer": renamer}


@pytest.mark.parametrize("op", list(INLINE_OPS))
def test_disable_transaction_file_as_pylance(op, base, tmp_path, lance_cpp):
    """lance-cpp's commit with --disable-transaction-file equals pylance's
    commit of the same change, except that the transaction is only inline:
    no _transactions/ file, the manifest names none, writer flag 32."""
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    kept_paths, kept_ids = _base_names(ours)
    base_listing = _listing(ours)
    src = _write_arrow(tmp_path / "src.arrow", rows([200, 201]))
    cpp_args, py_op = INLINE_OPS[op](src)
    lance_cpp.run_ok(*[str(ours) if a == "{uri}" else a for a in cpp_args], "--disable-transaction-file")
    py_op(theirs)
    a = _inline_commit(ours, base_listing, Renamer(kept_paths, kept_ids))
    b = _inline_commit(theirs, base_listing, Renamer(kept_paths, kept_ids))
    assert "transaction_file" not in a["manifest"], a["manifest"].get("transaction_file")
    assert a["added"]["_transactions"] == 0 and b["added"]["_transactions"] == (2 if op == "compact" else 1)
    flags_a = a["manifest"].pop("writer_feature_flags", [0])[0]
    flags_b = b["manifest"].pop("writer_feature_flags", [0])[0]
    assert flags_a == flags_b | FLAG_DISABLE_TRANSACTION_FILE, (flags_a, flags_b)
    b["manifest"].pop("transaction_file")
    problems = diff(normalize(a["manifest"], a["renamer"]), normalize(b["manifest"], b["renamer"]))
    problems += diff(normalize(a["transaction"], a["renamer"], "transaction"),
                     normalize(b["transaction"], b["renamer"], "transaction"))
    assert not problems, f"{op}: " + "\n  ".join(problems)
    # pylance reads it, and its next commit writes a file again and clears the bit.
    assert lance.dataset(str(ours)).to_table().equals(lance.dataset(str(theirs)).to_table())
    lance.dataset(str(ours)).delete("id = 15")
    nxt = wire.read_manifest_file(wire.manifest_path(ours, a["manifest"]["version"][0] + 1))["manifest"]
    assert not nxt.get("writer_feature_flags", [0])[0] & FLAG_DISABLE_TRANSACTION_FILE
    assert "transaction_file" in nxt


def test_pylance_rebases_on_inline_only_commit(base, tmp_path, lance_cpp):
    """pylance's delete read before lance-cpp's inline-only delete commits on
    top of it: pylance checks it through the inline transaction."""
    uri = tmp_path / "d.lance"
    shutil.copytree(base, uri)
    stale = lance.dataset(str(uri))
    lance_cpp.run_ok("delete", uri, "id = 1", "--disable-transaction-file", "--quiet")
    lance_cpp.run_ok("config", uri, "set", "k8=v8", "--disable-transaction-file")
    stale.delete("id = 2")
    ds = lance.dataset(str(uri))
    assert ds.version == 7 and ds.count_rows() == 20 - 3
    assert ds.config()["k8"] == "v8"
    assert sorted(ds.to_table().column("id").to_pylist()) == [i for i in range(20) if i not in (1, 2, 3)]


def test_lance_cpp_reads_pylance_inline_transactions(base, tmp_path, lance_cpp):
    """pylance writes every transaction inline too: with the _transactions/
    files gone (as an inline-only writer leaves it), lance-cpp still names
    every version's operation and writes on top."""
    uri = tmp_path / "d.lance"
    shutil.copytree(base, uri)
    lance.dataset(str(uri)).update_config({"k": "1"})
    shutil.rmtree(uri / "_transactions")
    lines = lance_cpp.run_ok("versions", uri).stdout.splitlines()
    assert [line.split()[2] for line in lines] == ["Overwrite", "Delete", "UpdateConfig", "UpdateConfig",
                                                   "UpdateConfig"]
    lance_cpp.run_ok("delete", uri, "id = 7", "--quiet")
    lance_cpp.run_ok("config", uri, "unset", "k")
    ds = lance.dataset(str(uri))
    assert ds.version == 7 and ds.count_rows() == 18 and "k" not in ds.config()


@pytest.mark.parametrize("interval,older_than", [(5, 14 * 86400 + 5), (1, 0), (20, 59),
                                                  (3, 2 * 31557600 + 2630016 + 3 * 86400 + 3661)])
def test_create_with_auto_cleanup_as_pylance(interval, older_than, tmp_path, lance_cpp):
    """write --auto-cleanup-interval/--auto-cleanup-older-than on create gives
    pylance's auto_cleanup_options manifest (the duration formatted as it
    formats it)."""
    ours, theirs = tmp_path / "cpp.lance", tmp_path / "py.lance"
    src = _write_arrow(tmp_path / "src.arrow", rows(list(range(5))))
    lance_cpp.run_ok("write", ours, "--input", src, "--auto-cleanup-interval", interval,
                     "--auto-cleanup-older-than", older_than, "--quiet")
    lance.write_dataset(rows(list(range(5))), str(theirs),
                        auto_cleanup_options={"interval": interval, "older_than_seconds": older_than})
    assert lance.dataset(str(ours)).config() == lance.dataset(str(theirs)).config()
    a = committed(ours, {}, Renamer(set(), set()))
    b = committed(theirs, {}, Renamer(set(), set()))
    problems = diff(a["manifest"], b["manifest"]) + diff(a["transaction"], b["transaction"])
    assert not problems, "\n  ".join(problems)


@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_auto_cleanup_options_refused_on_existing_dataset(mode, base, tmp_path, lance_cpp):
    """pylance takes auto_cleanup_options only when creating a dataset;
    lance-cpp's write refuses them on an existing one rather than ignore them."""
    uri = tmp_path / "d.lance"
    shutil.copytree(base, uri)
    before = lance.dataset(str(uri)).version
    src = _write_arrow(tmp_path / "src.arrow", rows([200, 201]))
    proc = lance_cpp.run("write", uri, "--input", src, "--mode", mode, "--auto-cleanup-interval", 5,
                         "--auto-cleanup-older-than", 0, "--quiet")
    assert proc.returncode == 2 and "taken only when creating a dataset" in proc.stderr, proc.stderr
    assert lance.dataset(str(uri)).version == before


@pytest.mark.parametrize("cpp,py,conflict", [
    (["set", "k=cpp"], lambda d: d.update_config({"k": "py"}), True),
    (["unset", "k1"], lambda d: d.update_config({"k1": "py"}), True),
    (["set", "a=cpp"], lambda d: d.update_config({"b": "py"}), False),
    (["set-schema-metadata", "a=1"], lambda d: d.update_schema_metadata({"b": "2"}), True),
    (["set-field-metadata", "id", "a=1"], lambda d: d.update_field_metadata({"id": {"b": "2"}}), True),
    (["set-field-metadata", "id", "a=1"], lambda d: d.update_field_metadata({"name": {"b": "2"}}), False),
    (["set", "k=cpp"], lambda d: d.delete("id = 9"), False),
], ids=["same-key", "set-vs-unset", "other-keys", "schema-metadata", "same-field", "other-fields", "delete"])
def test_pylance_checks_lance_cpp_update_config(cpp, py, conflict, base, tmp_path, lance_cpp):
    """A pylance commit read before lance-cpp's UpdateConfig is checked
    against it by pylance's own conflict rules."""
    uri = tmp_path / "d.lance"
    shutil.copytree(base, uri)
    stale = lance.dataset(str(uri))
    lance_cpp.run_ok("config", uri, *cpp)
    if conflict:
        with pytest.raises(Exception, match="(?i)conflict"):
            py(stale)
        assert lance.dataset(str(uri)).version == 5
    else:
        py(stale)
        assert lance.dataset(str(uri)).version == 6
