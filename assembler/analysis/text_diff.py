"""A block's text against its text at the previous step, line by line."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

#: Unchanged lines kept around each change; longer unchanged runs are elided.
CONTEXT = 3


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "+" added, "-" removed, " " unchanged, "…" elided unchanged lines
    text: str


def line_diff(old: str, new: str, context: int = CONTEXT) -> list[DiffLine]:
    """Added and removed lines with ``context`` unchanged lines around each change."""
    a, b = old.splitlines(), new.splitlines()
    out: list[DiffLine] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        if out:
            out.append(DiffLine("…", ""))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(DiffLine(" ", line) for line in a[i1:i2])
                continue
            out.extend(DiffLine("-", line) for line in a[i1:i2])
            out.extend(DiffLine("+", line) for line in b[j1:j2])
    return out


def counts(lines: list[DiffLine]) -> tuple[int, int]:
    """(added, removed) lines."""
    return sum(1 for x in lines if x.kind == "+"), sum(1 for x in lines if x.kind == "-")
