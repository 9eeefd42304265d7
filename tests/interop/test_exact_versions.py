"""The exact-version fixtures (tests/fixtures/exact_versions) are the bytes
README.md's SHA-256 table records. Verification only: regeneration (two runs
of the reference compared) is `datagen.py --write`."""
from __future__ import annotations

import subprocess
import sys

from conftest import REPO_ROOT

DATAGEN = REPO_ROOT / "tests" / "fixtures" / "exact_versions" / "datagen.py"


def test_fixtures_match_their_sha256_table():
    proc = subprocess.run([sys.executable, str(DATAGEN)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
