"""Throwaway environments with RELEASED pylance versions, and the datasets
generate.py writes with each, both cached outside the clone:

    ${LANCE_CPP_COMPAT_CACHE:-${XDG_CACHE_HOME:-~/.cache}/lance-cpp/compat}/
      wheels/                        every wheel downloaded (reused by rebuilds)
      pylance-<ver>/venv-<key>/      the environment (key: pins + Python)
      pylance-<ver>/data-<key>/      its datasets (key: environment + generate.py)

A directory counts only once its marker is written (last), so an interrupted
run leaves nothing that a later one trusts. Each version is built under its
own file lock: concurrent runs on one machine wait instead of racing.

    .venv/bin/python tests/interop/compat/venvs.py   # build everything now
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
GENERATOR = HERE / "generate.py"

# The pyarrow/numpy each release gets: the newest with Python 3.11 wheels that
# the release accepts, the same pair for most (one download serves them all).
_NEW = ["pyarrow==26.0.1", "numpy==2.4.6"]
# lance-namespace: releases before 6.0 import names that lance-namespace 0.7
# removed (the reference's own compat tests pin it the same way).
_NS06 = ["lance-namespace==0.6.1", "lance-namespace-urllib3-client==0.6.1"]

# Released pylance versions, spread over the 0.x line and the majors since.
RELEASES: dict[str, list[str]] = {
    "0.10.18": ["pyarrow==15.0.0", "numpy==1.26.4"],  # it requires pyarrow < 15.0.1
    "0.20.0": _NEW,
    "0.30.0": _NEW,
    "0.39.0": _NEW + _NS06,
    "1.0.4": _NEW + _NS06,
    "4.0.2": _NEW + _NS06,
    "8.0.1": _NEW + ["lance-namespace==0.8.6", "lance-namespace-urllib3-client==0.8.6"],
    "12.0.0": _NEW + ["lance-namespace==0.11.1", "lance-namespace-urllib3-client==0.11.1"],
}

# Known incompatibilities, excluded up front: (version, Python from which it
# cannot install, why). Anything not listed that fails to install is a failure.
KNOWN_INCOMPATIBLE: list[tuple[str, tuple[int, int], str]] = [
    ("0.10.18", (3, 13), "pyarrow 15 / numpy 1.26 have no wheels for Python 3.13+"),
]

PIP_ATTEMPTS = 3
PARALLEL = 4


def cache_root() -> Path:
    env = os.environ.get("LANCE_CPP_COMPAT_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lance-cpp" / "compat"


def excluded(version: str) -> Optional[str]:
    for v, py, why in KNOWN_INCOMPATIBLE:
        if v == version and sys.version_info[:2] >= py:
            return f"pylance {version} excluded on Python {sys.version_info[0]}.{sys.version_info[1]}: {why}"
    return None


def _hash(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()[:12]


def venv_key(version: str) -> str:
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return _hash(version, *RELEASES[version], py, sys.base_prefix)


def data_key(version: str) -> str:
    return _hash(venv_key(version), GENERATOR.read_text())


class BuildError(Exception):
    pass


def _run(cmd: list, what: str, timeout: float, attempts: int = 1) -> None:
    for attempt in range(1, attempts + 1):
        try:
            proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            err = f"timed out after {timeout:.0f}s"
        else:
            if proc.returncode == 0:
                return
            err = f"exit status {proc.returncode}\n{proc.stderr.strip()[-3000:]}"
        if attempt == attempts:
            raise BuildError(f"{what} failed (attempt {attempt} of {attempts}): {err}\n"
                             f"command: {' '.join(map(str, cmd))}")
        time.sleep(2 * attempt)


def _pip(*args: str) -> list:
    # The running interpreter's pip drives every environment (--python), so
    # the throwaway ones need no pip of their own.
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]


class _Lock:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.f = open(path, "w")

    def __enter__(self):
        fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def _drop_stale(parent: Path, prefix: str, keep: Path) -> None:
    for p in parent.glob(prefix + "*"):
        if p != keep and p.is_dir():
            shutil.rmtree(p, ignore_errors=True)


def ensure_venv(version: str) -> Path:
    """The environment's python, built if the cache has none for this key."""
    root = cache_root()
    home = root / f"pylance-{version}"
    venv = home / f"venv-{venv_key(version)}"
    python = venv / "bin" / "python"
    marker = venv / ".ready"
    if marker.is_file() and python.exists():
        return python
    with _Lock(home / ".lock"):
        if marker.is_file() and python.exists():
            return python
        if venv.exists():
            shutil.rmtree(venv)  # an interrupted build
        wheels = root / "wheels"
        wheels.mkdir(parents=True, exist_ok=True)
        reqs = [f"pylance=={version}", *RELEASES[version]]
        _run([sys.executable, "-m", "venv", "--without-pip", venv],
             f"pylance {version}: creating the environment", timeout=120)
        # Every wheel lands in wheels/ first, one download at a time (the
        # releases share their big pyarrow/numpy wheels; kept, so a rebuild
        # downloads nothing), then installs run in parallel from there alone.
        with _Lock(wheels / ".lock"):
            _run(_pip("download", "--quiet", "--dest", wheels, *reqs),
                 f"pylance {version}: downloading {' '.join(reqs)}", timeout=900,
                 attempts=PIP_ATTEMPTS)
        _run(_pip("--python", python, "install", "--quiet", "--no-compile", "--no-index",
                  "--find-links", wheels, *reqs),
             f"pylance {version}: installing {' '.join(reqs)}", timeout=900)
        _run([python, "-c", f"import lance; assert lance.__version__ == {version!r}, lance.__version__"],
             f"pylance {version}: importing lance in the new environment", timeout=300)
        marker.write_text(json.dumps({"pylance": version, "pins": RELEASES[version]}))
        _drop_stale(home, "venv-", venv)
    return python


def ensure_datasets(version: str) -> Path:
    """The directory generate.py filled with this release (manifest.json inside)."""
    home = cache_root() / f"pylance-{version}"
    data = home / f"data-{data_key(version)}"
    if (data / "manifest.json").is_file():
        return data
    python = ensure_venv(version)
    with _Lock(home / ".lock"):
        if (data / "manifest.json").is_file():
            return data
        env_tmp = data.with_name(data.name + ".tmp")
        _run([python, GENERATOR, env_tmp], f"pylance {version}: generate.py", timeout=900)
        if data.exists():
            shutil.rmtree(data)
        env_tmp.rename(data)
        _drop_stale(home, "data-", data)
    return data


def build_all(versions: Optional[list] = None) -> dict:
    """version -> datasets directory, or the BuildError/exception that stopped it,
    or the exclusion reason (a str) for a known incompatibility."""
    versions = list(versions or RELEASES)
    out: dict = {}
    todo = []
    for v in versions:
        why = excluded(v)
        if why:
            out[v] = why
        else:
            todo.append(v)

    def one(v):
        try:
            return v, ensure_datasets(v)
        except Exception as exc:  # noqa: BLE001 - reported per version by the tests
            return v, exc

    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        for v, result in pool.map(one, todo):
            out[v] = result
    return out


if __name__ == "__main__":
    start = time.monotonic()
    results = build_all(sys.argv[1:] or None)
    bad = 0
    for v, r in results.items():
        if isinstance(r, Exception):
            bad += 1
        print(f"pylance {v}: {r}")
    print(f"{time.monotonic() - start:.0f}s, cache {cache_root()}")
    sys.exit(1 if bad else 0)
