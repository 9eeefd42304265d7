"""The one line every writing command of lance-cpp prints (README, "Command line"):

    <what changed>; new version N          (it committed version N)
    <what changed>; version N unchanged    (it committed nothing; N is the latest)

e.g. "updated 5 rows; new version 4",
"inserted 1 row, updated 2 rows, deleted 0 rows; new version 5".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE = re.compile(r"(?P<what>.+); (?:new version (?P<new>\d+)|version (?P<same>\d+) unchanged)")
_COMPACTION = re.compile(r"removed (\d+) fragments? and (\d+) files?, added (\d+) fragments? and (\d+) files?")


@dataclass
class Change:
    what: str
    version: int
    committed: bool

    def count(self, word: str) -> int:
        """The number after a verb ("updated 5 rows") or before a noun
        ("3 old versions", "1 data file")."""
        after = re.search(rf"\b{re.escape(word)} (\d+)\b", self.what)
        if after:
            return int(after.group(1))
        before = re.search(rf"\b(\d+) {re.escape(word)}s?\b", self.what)
        if before:
            return int(before.group(1))
        raise AssertionError(f"no count for {word!r} in {self.what!r}")


def compaction_metrics(change: Change) -> list[int]:
    """compact's counts in pylance's CompactionMetrics order: fragments and
    files removed, fragments and files added."""
    m = _COMPACTION.fullmatch(change.what)
    assert m, f"not compact's 'removed N fragments and N files, added ...': {change.what!r}"
    return [int(x) for x in m.groups()]


def parse_change(stdout: str) -> Change:
    """The summary line of a writing command's stdout (exactly one line)."""
    lines = stdout.splitlines()
    assert len(lines) == 1, f"expected one line, got {stdout!r}"
    m = _LINE.fullmatch(lines[0])
    assert m, f"not '<what changed>; new version N' or '...; version N unchanged': {lines[0]!r}"
    committed = m.group("new") is not None
    return Change(m.group("what"), int(m.group("new") or m.group("same")), committed)
