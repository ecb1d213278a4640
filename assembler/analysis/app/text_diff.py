"""A block's text against its text at the previous step, line by line."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from assembler.sessions.versions import narrow

#: Unchanged lines kept around each change; longer unchanged runs are elided.
CONTEXT = 3


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "+" added, "-" removed, " " unchanged, "…" elided unchanged lines
    text: str


def line_diff(old: str, new: str, context: int = CONTEXT) -> list[DiffLine]:
    """Added and removed lines with ``context`` unchanged lines around each change."""
    a, b = old.splitlines(), new.splitlines()
    # The matcher is quadratic in the lines it is given; a call tree grows at its tail,
    # so the lines both share at the start and the end (found at C speed) are cut
    # off first, all but the context shown around the change.
    n = min(len(a), len(b))
    start = max(narrow(a, b, 0, n) - context, 0)
    end = max(narrow(a[::-1], b[::-1], 0, n - start) - context, 0)
    out: list[DiffLine] = []
    matcher = difflib.SequenceMatcher(
        a=a[start : len(a) - end], b=b[start : len(b) - end], autojunk=False
    )
    for group in matcher.get_grouped_opcodes(context):
        if out:
            out.append(DiffLine("…", ""))
        for tag, i1, i2, j1, j2 in group:
            i1, i2, j1, j2 = i1 + start, i2 + start, j1 + start, j2 + start
            if tag == "equal":
                out.extend(DiffLine(" ", line) for line in a[i1:i2])
                continue
            out.extend(DiffLine("-", line) for line in a[i1:i2])
            out.extend(DiffLine("+", line) for line in b[j1:j2])
    return out


def counts(lines: list[DiffLine]) -> tuple[int, int]:
    """(added, removed) lines."""
    return sum(1 for x in lines if x.kind == "+"), sum(1 for x in lines if x.kind == "-")
