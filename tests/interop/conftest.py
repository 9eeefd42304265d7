"""Shared helpers for the lance-cpp interop suite.

The oracle is pylance (the pinned reference implementation).  Everything the
expected views are built from comes from pylance's public Python API; nothing
here parses manifests or protobuf itself.  Two small exceptions, both still
pylance's or the file system's own answers: a field's lance logical type is read
from pylance's repr of the field (LanceField has no accessor for it), and the
manifest naming scheme from the `_versions/` file names.  Where pylance does not expose a key
of ``lance-cpp inspect --json`` the view holds a *matcher* (see below) that
checks what can be checked: a documented content rule (feature flags), a bound
(next_row_id), or nothing at all (``ANY``) when pylance itself cannot compute
the value.

Helpers exported to the test modules:

* ``lance_cpp`` fixture: a :class:`LanceCpp` runner around the binary named by
  ``$LANCE_CPP_BIN`` (default ``<repo>/build/bin/lance-cpp``).
* :func:`pylance_view` builds the dict that ``inspect --json`` should print.
* :func:`assert_view_matches` / :func:`diff_views` compare a CLI view with it
  and print a readable, path-addressed diff on mismatch.
* :func:`expected_versions_lines` / :func:`assert_versions_output` for the
  ``versions`` command.
* :func:`assert_clean_failure` for runtime errors (exit 1, one ``error:`` line).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

# Keep pylance's Rust logger quiet (it warns about e.g. unknown index types);
# must happen before `import lance`.
os.environ.setdefault("LANCE_LOG", "error")

import pyarrow as pa  # noqa: E402
import pytest  # noqa: E402

import lance  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
# CI clones the repo somewhere with `shared/` beside it; never hard-code /work.
FIXTURES_ROOT = REPO_ROOT.parent / "shared" / "fixtures" / "lance-test-data"
# A user's plain clone has no shared/: the tests that need these historical
# datasets skip with this reason, and the run's summary counts them.
FIXTURES_MISSING = ("../shared/fixtures/lance-test-data not found beside the clone "
                    "(historical pylance datasets)")

CLI_TIMEOUT_S = 120
# pylance converts manifest timestamps (ns) to datetime through float
# arithmetic, which can be off by a few hundred ns -> allow a few microseconds.
TIMESTAMP_TOLERANCE = timedelta(microseconds=3)
ISO_TS_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")

# Feature-flag bits (table-format-notes.md section 6).
FLAG_DELETION_FILES = 1
FLAG_STABLE_ROW_IDS = 2
FLAG_TABLE_CONFIG = 8
FLAG_BASE_PATHS = 16


# --------------------------------------------------------------------------- #
# The shared fixtures (released pylance datasets beside the clone)
# --------------------------------------------------------------------------- #


def require_shared_fixtures() -> None:
    if not FIXTURES_ROOT.is_dir():
        pytest.skip(FIXTURES_MISSING)


def shared_fixture_params(params: list, nargs: int = 1) -> list:
    """`params` for a parametrize over the shared fixtures; without them one
    placeholder skipped with FIXTURES_MISSING (an empty parameter set would be
    skipped with pytest's own reason, which says nothing about why)."""
    if FIXTURES_ROOT.is_dir():
        return params
    return [pytest.param(*([None] * nargs), id="no-shared-fixtures",
                         marks=pytest.mark.skip(reason=FIXTURES_MISSING))]


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = terminalreporter.stats.get("skipped", [])
    n = sum(1 for rep in skipped if FIXTURES_MISSING in _skip_reason(rep))
    if n:
        terminalreporter.write_line(f"{n} test{'s' if n != 1 else ''} skipped: {FIXTURES_MISSING}",
                                    yellow=True, bold=True)


# --------------------------------------------------------------------------- #
# The CLI runner
# --------------------------------------------------------------------------- #


def lance_cpp_binary() -> Path:
    env = os.environ.get("LANCE_CPP_BIN")
    return Path(env) if env else REPO_ROOT / "build" / "bin" / "lance-cpp"


def _fmt_cmd(args: Iterable[str]) -> str:
    return " ".join(str(a) for a in args)


def describe_result(proc: subprocess.CompletedProcess) -> str:
    return (
        f"command: {_fmt_cmd(proc.args)}\n"
        f"exit status: {proc.returncode}\n"
        f"--- stderr ---\n{proc.stderr.rstrip()}\n"
        f"--- stdout (first 2000 chars) ---\n{proc.stdout[:2000].rstrip()}"
    )


class LanceCpp:
    """Runs the lance-cpp binary; the *checked* helpers fail the test on error."""

    def __init__(self, binary: Path):
        self.binary = binary

    def run(self, *args: Any, timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess:
        cmd = [str(self.binary)] + [str(a) for a in args]
        try:
            return subprocess.run(
                cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"lance-cpp timed out after {timeout}s: {_fmt_cmd(cmd)}\n"
                        f"stderr so far:\n{exc.stderr}", pytrace=False)

    def run_ok(self, *args: Any) -> subprocess.CompletedProcess:
        proc = self.run(*args)
        if proc.returncode != 0:
            pytest.fail("lance-cpp failed\n" + describe_result(proc), pytrace=False)
        return proc

    def inspect(self, uri: Any, version: Any = None, rows: bool = False) -> dict:
        args = ["inspect", str(uri), "--json"]
        if version is not None:
            args += ["--version", str(version)]
        if rows:
            args.append("--rows")
        proc = self.run_ok(*args)
        try:
            out = json.loads(proc.stdout)
        except json.JSONDecodeError as exc:
            pytest.fail(f"inspect --json printed invalid JSON ({exc})\n" + describe_result(proc),
                        pytrace=False)
        if not isinstance(out, dict):
            pytest.fail("inspect --json did not print one JSON object\n" + describe_result(proc),
                        pytrace=False)
        return out

    def versions(self, uri: Any) -> list[list[str]]:
        proc = self.run_ok("versions", str(uri))
        rows = []
        for line in proc.stdout.splitlines():
            if not line.strip():
                continue
            rows.append(line.split())
        return rows


@pytest.fixture(scope="session")
def lance_cpp() -> LanceCpp:
    binary = lance_cpp_binary()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.fail(f"lance-cpp binary not found or not executable: {binary} "
                    f"(build it with `make`, or set LANCE_CPP_BIN)", pytrace=False)
    return LanceCpp(binary)


def assert_clean_failure(proc: subprocess.CompletedProcess, *must_mention: str,
                         expected_code: int = 1) -> None:
    """A runtime error: exit 1, nothing on stdout, exactly one stderr line that
    starts with ``error: `` and mentions every string in ``must_mention``."""
    problems = []
    if proc.returncode < 0:
        problems.append(f"killed by signal {-proc.returncode} (crash)")
    elif proc.returncode != expected_code:
        problems.append(f"exit status {proc.returncode}, expected {expected_code}")
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    if len(lines) != 1:
        problems.append(f"stderr has {len(lines)} non-empty lines, expected exactly 1")
    if not lines or not lines[0].startswith("error: "):
        problems.append("stderr does not start with 'error: '")
    for s in must_mention:
        if s not in proc.stderr:
            problems.append(f"error message does not mention {s!r}")
    if proc.stdout.strip():
        problems.append("something was printed on stdout")
    if problems:
        pytest.fail("; ".join(problems) + "\n" + describe_result(proc), pytrace=False)


def assert_no_crash(proc: subprocess.CompletedProcess) -> None:
    """Either success, or a clean runtime error (exit 1 + one `error:` line)."""
    if proc.returncode == 0:
        return
    assert_clean_failure(proc)


# --------------------------------------------------------------------------- #
# Matchers: expected values that are not plain JSON
# --------------------------------------------------------------------------- #


class Matcher:
    def matches(self, actual: Any) -> bool:  # pragma: no cover - interface
        raise NotImplementedError


class _Any(Matcher):
    def __init__(self, why: str = "unknown to pylance"):
        self.why = why

    def matches(self, actual):
        return True

    def __repr__(self):
        return f"<any: {self.why}>"


ANY = _Any()


def unknown(why: str) -> _Any:
    return _Any(why)


class OneOf(Matcher):
    def __init__(self, *options, why: str = ""):
        self.options = options
        self.why = why

    def matches(self, actual):
        return any(_leaf_equal(actual, o) for o in self.options)

    def __repr__(self):
        s = " or ".join(json.dumps(o) if not isinstance(o, Matcher) else repr(o)
                        for o in self.options)
        return f"<{s}{' (' + self.why + ')' if self.why else ''}>"


class IntAtLeast(Matcher):
    def __init__(self, lo: int, why: str = ""):
        self.lo = lo
        self.why = why

    def matches(self, actual):
        return isinstance(actual, int) and not isinstance(actual, bool) and actual >= self.lo

    def __repr__(self):
        return f"<int >= {self.lo}{' (' + self.why + ')' if self.why else ''}>"


class Timestamp(Matcher):
    """An ISO-8601 UTC string with microseconds within tolerance of `dt`,
    or JSON null when `dt` is None (the manifest has no timestamp)."""

    def __init__(self, dt: Optional[datetime]):
        self.dt = dt

    def matches(self, actual):
        if self.dt is None:
            return actual is None
        if not isinstance(actual, str) or not ISO_TS_RE.match(actual):
            return False
        got = parse_iso_utc(actual)
        return got is not None and abs(got - self.dt) <= TIMESTAMP_TOLERANCE

    def __repr__(self):
        if self.dt is None:
            return "<null (no timestamp in manifest)>"
        return f"<{self.dt.strftime('%Y-%m-%dT%H:%M:%S.%fZ')} +-{TIMESTAMP_TOLERANCE}>"


class SamePath(Matcher):
    """The dataset location, as given or as an absolute path / file:// URI."""

    def __init__(self, path: Any):
        self.path = os.path.realpath(str(path))

    def matches(self, actual):
        if not isinstance(actual, str):
            return False
        p = actual[len("file://"):] if actual.startswith("file://") else actual
        return os.path.realpath(p.rstrip("/") or "/") == self.path

    def __repr__(self):
        return f"<path {self.path}>"


class FlagWord(Matcher):
    """An integer flag word whose listed bits must be set (True) or clear (False);
    other bits are unconstrained."""

    def __init__(self, constraints: dict[int, tuple[bool, str]]):
        self.constraints = constraints

    def matches(self, actual):
        if not isinstance(actual, int) or isinstance(actual, bool) or actual < 0:
            return False
        return all(bool(actual & bit) == want for bit, (want, _) in self.constraints.items())

    def explain(self, actual) -> str:
        if not isinstance(actual, int) or isinstance(actual, bool):
            return "not an integer"
        bad = [f"bit {bit} should be {'set' if want else 'clear'} ({why})"
               for bit, (want, why) in self.constraints.items()
               if bool(actual & bit) != want]
        return "; ".join(bad)

    def __repr__(self):
        parts = [f"{bit}:{'set' if want else 'clear'}" for bit, (want, _) in self.constraints.items()]
        return "<flags " + ", ".join(parts) + ">"


class IndexFields(Matcher):
    """Index `fields`: field ids (as stored) or, tolerated, field names."""

    def __init__(self, ids: Optional[list[int]], names: list[str]):
        self.ids = ids
        self.names = names

    def matches(self, actual):
        if not isinstance(actual, list):
            return False
        if self.ids is not None and all(isinstance(a, int) and not isinstance(a, bool) for a in actual):
            return actual == self.ids
        return actual == self.names

    def __repr__(self):
        return f"<field ids {self.ids} (names {self.names})>"


class UnmodeledOperation(Matcher):
    """A transaction operation pylance reads but does not name in Python."""

    def matches(self, actual):
        from lance.dataset import LanceOperation

        modeled = {n for n in dir(LanceOperation) if not n.startswith("_")}
        return (isinstance(actual, str) and actual not in modeled and actual != "-"
                and actual.isidentifier())

    def __repr__(self):
        return "<an operation name pylance's Python API does not model>"


def parse_iso_utc(s: str) -> Optional[datetime]:
    try:
        if s.endswith("Z"):
            s = s[:-1] + "+00:00"
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        return None
    return dt.astimezone(timezone.utc)


# --------------------------------------------------------------------------- #
# Comparison
# --------------------------------------------------------------------------- #


def _leaf_equal(actual: Any, expected: Any) -> bool:
    if isinstance(expected, Matcher):
        return expected.matches(actual)
    # JSON has no bool/int distinction problems in Python unless we add them:
    # True == 1 in Python, so compare types strictly.
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, int):
        return isinstance(actual, int) and actual == expected
    return actual == expected


def _short(v: Any) -> str:
    if isinstance(v, Matcher):
        return repr(v)
    try:
        s = json.dumps(v, sort_keys=True)
    except TypeError:
        s = repr(v)
    return s if len(s) <= 300 else s[:300] + "..."


# Lists whose order is not part of the contract, with the key to sort them by.
UNORDERED_LISTS: dict[str, Callable[[Any], Any]] = {
    "indices": lambda d: (str(d.get("uuid")) if isinstance(d, dict) else str(d)),
}


def diff_views(actual: Any, expected: Any, path: str = "") -> list[str]:
    """Returns human-readable differences; [] when `actual` matches `expected`.
    Keys present in `actual` but not in `expected` are allowed (the contract
    lets the CLI add keys)."""
    out: list[str] = []
    where = path or "<root>"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, lance-cpp gave {_short(actual)}"]
        for k, ev in expected.items():
            sub = f"{path}.{k}" if path else k
            if k not in actual:
                out.append(f"{sub}: missing in lance-cpp output (pylance: {_short(ev)})")
                continue
            out.extend(diff_views(actual[k], ev, sub))
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{where}: expected a list, lance-cpp gave {_short(actual)}"]
        key = UNORDERED_LISTS.get(path.rsplit(".", 1)[-1])
        if key is not None:
            try:
                actual = sorted(actual, key=key)
                expected = sorted(expected, key=key)
            except TypeError:
                pass
        if len(actual) != len(expected):
            out.append(f"{where}: lance-cpp has {len(actual)} entries, pylance {len(expected)}\n"
                       f"      lance-cpp: {_short(actual)}\n      pylance:   {_short(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            out.extend(diff_views(a, e, f"{path}[{i}]"))
        return out
    if not _leaf_equal(actual, expected):
        extra = ""
        if isinstance(expected, FlagWord):
            extra = f" [{expected.explain(actual)}]"
        out.append(f"{where}: lance-cpp={_short(actual)} pylance={_short(expected)}{extra}")
    return out


def assert_view_matches(actual: dict, expected: dict, context: str = "") -> None:
    diffs = diff_views(actual, expected)
    if diffs:
        head = f"lance-cpp inspect disagrees with pylance{' (' + context + ')' if context else ''}:"
        pytest.fail(head + "\n  " + "\n  ".join(diffs), pytrace=False)


# --------------------------------------------------------------------------- #
# The pylance oracle
# --------------------------------------------------------------------------- #

_FIELD_REPR_RE = re.compile(
    r'^Field \{ name: "(?:[^"\\]|\\.)*", id: (-?\d+), parent_id: (-?\d+), '
    r'logical_type: LogicalType\("((?:[^"\\]|\\.)*)"\)'
)


def _pylance_timestamp(dt: Optional[datetime]) -> Optional[datetime]:
    """pylance gives naive *local* datetimes (datetime.fromtimestamp); a manifest
    without a timestamp comes back as the epoch."""
    if dt is None:
        return None
    aware = dt.astimezone(timezone.utc)  # a naive datetime is taken as local time
    if abs(aware - datetime(1970, 1, 1, tzinfo=timezone.utc)) <= TIMESTAMP_TOLERANCE:
        return None
    return aware


def _unescape_debug(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


def _schema_view(fields, parent_id: int = -1) -> list[dict]:
    """Pre-order flattening of pylance's LanceSchema.

    LanceField exposes name(), id(), children(), to_arrow(); the lance logical
    type string and parent id are only visible in its repr (Rust Debug), which
    we read for logical_type and cross-check parent_id with the tree."""
    out = []
    for f in fields:
        m = _FIELD_REPR_RE.match(repr(f))
        entry = {
            "name": f.name(),
            "id": f.id(),
            "parent_id": parent_id,
            "logical_type": _unescape_debug(m.group(3)) if m else
            unknown("pylance repr not parseable"),
            "nullable": f.to_arrow().nullable,
        }
        if m and int(m.group(2)) != parent_id:
            # Should never happen; keep what pylance stored.
            entry["parent_id"] = int(m.group(2))
        out.append(entry)
        out.extend(_schema_view(f.children(), f.id()))
    return out


def _try(fn: Callable[[], Any]) -> tuple[Any, Optional[str]]:
    try:
        return fn(), None
    except Exception as exc:  # pylance raises OSError/ValueError/... freely
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def manifest_naming_from_listing(uri: Any) -> str:
    """V2 names are 20 zero-padded digits (29 chars with '.manifest').  This is a
    directory listing, not a manifest parse; pylance does not expose the scheme."""
    names = [p.name for p in (Path(uri) / "_versions").iterdir()
             if p.name.endswith(".manifest") and not p.name.startswith("d")]
    return "v2" if any(len(n) == 29 for n in names) else "v1"


def versions_from_listing(uri: Any) -> list[int]:
    """Version numbers from `_versions/` file names (for test collection only)."""
    out = set()
    for p in (Path(uri) / "_versions").iterdir():
        n = p.name
        if not n.endswith(".manifest") or n.startswith("d"):
            continue
        stem = n[: -len(".manifest")]
        if not stem.isdigit():
            continue
        out.add((2**64 - 1) - int(stem) if len(n) == 29 else int(stem))
    return sorted(out)


def pylance_view(uri: Any, version: Any = None, *, next_row_id: Optional[int] = None,
                 manifest_naming: Optional[str] = None) -> dict:
    """The dict `lance-cpp inspect URI [--version V] --json` must match, built
    from pylance's public API.  Raises whatever pylance raises when it cannot
    open the dataset at all.

    `next_row_id`: the exact value when the caller knows it from pylance
    (see :func:`probe_next_row_id`); otherwise a lower bound is checked.
    `manifest_naming`: "v1"/"v2" when known; default: from the directory listing.
    """
    uri = str(uri)
    ds = lance.dataset(uri, version=version) if version is not None else lance.dataset(uri)

    versions = []
    for v in ds.versions():
        versions.append({"version": v["version"],
                         "timestamp": Timestamp(_pylance_timestamp(v.get("timestamp")))})

    fragments = []
    any_deletion_file = False
    total_live: Optional[int] = 0
    for frag in ds.get_fragments():
        md = frag.metadata
        live, live_err = _try(frag.count_rows)
        physical, phys_err = _try(lambda: frag.physical_rows)
        if physical is None:
            physical = md.physical_rows
        del_view = None
        stored_deleted = None
        if md.deletion_file is not None:
            any_deletion_file = True
            d = md.deletion_file
            ftype = {"array": "arrow", "arrow": "arrow", "bitmap": "bitmap"}.get(d.file_type, d.file_type)
            stored_deleted = d.num_deleted_rows
            del_view = {
                "type": ftype,
                "read_version": d.read_version,
                "id": d.id,
                "num_deleted_rows": stored_deleted,  # completed below when not stored
            }
        if physical is not None and live is not None:
            num_deleted: Any = physical - live
        elif md.deletion_file is None:
            num_deleted = 0
        elif stored_deleted:
            num_deleted = stored_deleted
        else:
            num_deleted = unknown(f"pylance: {live_err or phys_err}")
        if del_view is not None and not stored_deleted:
            # pylance gives None when the count is not stored (old writers) or
            # stored as 0 (= unknown).  Accept the stored value (null/0) or the
            # real count read from the deletion file.
            real = [num_deleted] if isinstance(num_deleted, int) else []
            del_view["num_deleted_rows"] = OneOf(None, 0, *real, why="not stored in the manifest")
        fragments.append({
            "id": md.id,
            "physical_rows": physical if physical is not None
            else unknown(f"pylance: {phys_err}"),
            "num_deleted_rows": num_deleted,
            "data_files": [
                {"path": df.path, "fields": list(df.fields),
                 "file_major_version": df.file_major_version,
                 "file_minor_version": df.file_minor_version}
                for df in md.files
            ],
            "deletion_file": del_view,
        })
        if live is None or total_live is None:
            total_live = None
        else:
            total_live += live

    num_rows, count_err = _try(ds.count_rows)
    if num_rows is None:
        num_rows = unknown(f"pylance: {count_err}")
    elif total_live is not None:
        assert num_rows == total_live, "pylance disagrees with itself about live rows"

    config = dict(ds.config())
    base_paths, _ = _try(ds.base_paths)
    has_base_paths = bool(base_paths)
    stable = bool(ds.has_stable_row_ids)

    reader_flags = FlagWord({
        FLAG_DELETION_FILES: (any_deletion_file, "iff some fragment has a deletion file"),
        FLAG_STABLE_ROW_IDS: (stable, "iff stable row ids"),
        FLAG_TABLE_CONFIG: (False, "TABLE_CONFIG is a writer-only flag"),
        FLAG_BASE_PATHS: (has_base_paths, "iff base paths"),
    })
    writer_flags = FlagWord({
        FLAG_DELETION_FILES: (any_deletion_file, "iff some fragment has a deletion file"),
        FLAG_STABLE_ROW_IDS: (stable, "iff stable row ids"),
        FLAG_TABLE_CONFIG: (bool(config), "iff config is non-empty"),
        FLAG_BASE_PATHS: (has_base_paths, "iff base paths"),
    })

    if next_row_id is not None:
        nri: Any = next_row_id
    elif stable:
        rowids, err = _try(lambda: ds.scanner(with_row_id=True, columns=[])
                           .to_table()["_rowid"].to_pylist())
        if rowids is None:
            nri = IntAtLeast(0, why=f"pylance could not scan: {err}")
        else:
            nri = IntAtLeast(max(rowids) + 1 if rowids else 0, why="max live _rowid + 1")
    else:
        nri = OneOf(None, 0, why="no stable row ids")

    indices = []
    with warnings.catch_warnings():
        # list_indices is deprecated but is the only public call that gives an
        # index's dataset_version; describe_indices supplies the field ids.
        warnings.simplefilter("ignore", DeprecationWarning)
        idx_list, idx_err = _try(ds.list_indices)
    if idx_list is None:
        indices = unknown(f"pylance list_indices: {idx_err}")
    else:
        desc, _ = _try(ds.describe_indices)
        ids_by_uuid: dict[str, list[int]] = {}
        for d in desc or []:
            for seg in d.segments:
                ids_by_uuid[str(seg.uuid)] = list(d.fields)
        for ix in idx_list:
            frag_ids = ix.get("fragment_ids")
            indices.append({
                "name": ix["name"],
                "uuid": str(ix["uuid"]),
                "fields": IndexFields(ids_by_uuid.get(str(ix["uuid"])), list(ix["fields"])),
                "fragment_ids": sorted(int(i) for i in frag_ids) if frag_ids is not None
                else unknown("pylance reports no fragment bitmap"),
                "dataset_version": ix["version"],
            })

    tags = {name: info["version"] for name, info in ds.tags.list().items()}

    return {
        "uri": SamePath(uri),
        "version": ds.version,
        "latest_version": ds.latest_version,
        "manifest_naming": manifest_naming or manifest_naming_from_listing(uri),
        "versions": versions,
        "data_storage_version": ds.data_storage_version,
        "reader_feature_flags": reader_flags,
        "writer_feature_flags": writer_flags,
        "num_rows": num_rows,
        "stable_row_ids": stable,
        "next_row_id": nri,
        "schema": _schema_view(ds.lance_schema.fields()),
        "fragments": fragments,
        "config": config,
        "tags": tags,
        "indices": indices,
    }


def probe_next_row_id(uri: Any, scratch: Path) -> Optional[int]:
    """Exact next_row_id of the LATEST version of a stable-row-id dataset, from
    pylance: copy the dataset, append one row, read that row's _rowid."""
    ds = lance.dataset(str(uri))
    if not ds.has_stable_row_ids:
        return None
    one = ds.to_table(limit=1)
    if one.num_rows == 0:
        return None
    dst = scratch / ("probe-" + Path(uri).name)
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(uri, dst)
    before = lance.dataset(str(dst)).version
    ds2 = lance.write_dataset(one, str(dst), mode="append")
    assert ds2.version == before + 1
    new_frag = ds2.get_fragments()[-1]
    ids = new_frag.scanner(with_row_id=True, columns=[]).to_table()["_rowid"].to_pylist()
    shutil.rmtree(dst)
    return ids[0]


# --------------------------------------------------------------------------- #
# `versions` command
# --------------------------------------------------------------------------- #


def expected_versions_lines(uri: Any) -> list[tuple[int, Optional[datetime], Any]]:
    """(number, utc timestamp or None, operation name | '-' | ANY) per version."""
    ds = lance.dataset(str(uri))
    rows = []
    for v in ds.versions():
        n = v["version"]
        txn, err = _try(lambda: ds.read_transaction(n))
        if err is not None:
            op: Any = unknown(f"pylance read_transaction: {err}")
        elif txn is None:
            op = "-"
        elif type(txn.operation).__name__ == "BaseOperation":
            # pylance's Python layer has no class for this operation (e.g.
            # UpdateBases, ReserveFragments): any other real name is fine.
            op = UnmodeledOperation()
        else:
            op = type(txn.operation).__name__
        rows.append((n, _pylance_timestamp(v.get("timestamp")), op))
    return rows


def assert_versions_output(rows: list[list[str]], uri: Any) -> None:
    expected = expected_versions_lines(uri)
    problems = []
    if len(rows) != len(expected):
        problems.append(f"lance-cpp printed {len(rows)} lines, pylance has {len(expected)} versions")
    for got, (n, ts, op) in zip(rows, expected):
        line = " ".join(got)
        if len(got) != 3:
            problems.append(f"line {line!r}: expected 3 fields '<number> <timestamp> <operation>'")
            continue
        gn, gts, gop = got
        if gn != str(n):
            problems.append(f"line {line!r}: version {gn}, pylance {n}")
        if ts is None:
            if gts not in ("-", "null"):
                problems.append(f"line {line!r}: timestamp should be absent ('-'), got {gts}")
        else:
            parsed = parse_iso_utc(gts)
            if parsed is None or abs(parsed - ts) > TIMESTAMP_TOLERANCE:
                problems.append(f"line {line!r}: timestamp {gts}, pylance "
                                f"{ts.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}")
        if not _leaf_equal(gop, op):
            problems.append(f"line {line!r}: operation {gop}, pylance {op!r}")
    if problems:
        pytest.fail("lance-cpp versions disagrees with pylance:\n  " + "\n  ".join(problems),
                    pytrace=False)


# --------------------------------------------------------------------------- #
# Misc fixtures
# --------------------------------------------------------------------------- #


def write_fragments(path: Path, sizes: list, make_rows: Callable[[int, int], pa.Table], **params) -> None:
    """One fragment per entry of `sizes`, each its own version (a create, then
    appends): make_rows(start, n) gives its n rows, numbered on from the
    previous fragment's; `params` go to every lance.write_dataset."""
    start = 0
    for i, n in enumerate(sizes):
        lance.write_dataset(make_rows(start, n), path, mode="create" if i == 0 else "append",
                            max_rows_per_file=n, **params)
        start += n


def small_table(start: int, stop: int) -> pa.Table:
    return pa.table({
        "id": pa.array(range(start, stop), pa.int64()),
        "name": pa.array([f"n{i}" for i in range(start, stop)], pa.string()),
    })
