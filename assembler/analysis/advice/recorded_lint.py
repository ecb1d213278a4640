"""Volatile blocks in recorded requests: a few characters that differ from the previous request.

A clock, a counter or an id rendered into a block ahead of a breakpoint shows
up as the same block sent twice with a handful of characters changed; the
cached prefix behind it is then written again on every request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise

from assembler.analysis.engine import AssembledStep
from assembler.design.wire import CIRCLED

#: Up to this many changed characters a difference reads as a clock, counter or id, not an edit.
FEW_CHARACTERS = 40


@dataclass(frozen=True)
class RecordedFlag:
    step: int
    block: str
    before: str  # the differing text in the previous request
    after: str  # and in this one
    position: str
    fix: str = "render it after the last breakpoint, or make it stable"


def _difference(a: str, b: str) -> tuple[str, str] | None:
    """The differing parts of two texts when they are few characters, else None."""
    if a == b:
        return None
    # one changed span (a clock, an id) reads best whole: strip what both ends share
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    mid_a, mid_b = a[start : len(a) - end], b[start : len(b) - end]
    if max(len(mid_a), len(mid_b)) <= FEW_CHARACTERS:
        return mid_a, mid_b
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    old: list[str] = []
    new: list[str] = []
    changed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        changed += max(i2 - i1, j2 - j1)
        if changed > FEW_CHARACTERS:
            return None
        old.append(a[i1:i2])
        new.append(b[j1:j2])
    return "…".join(old), "…".join(new)


def recorded_flags(steps: Sequence[AssembledStep]) -> list[RecordedFlag]:
    """Blocks ahead of a breakpoint that differ from the previous request in a few characters."""
    flags: list[RecordedFlag] = []
    for prev, cur in pairwise(steps):
        before, after = prev.wire.blocks, cur.wire.blocks
        marks = [i for i, b in enumerate(after) if b.breakpoint is not None]
        for i, (a, b) in enumerate(zip(before, after, strict=False)):
            ahead = [m for m in marks if m >= i]
            if not ahead or a.section != b.section or a.declared_tokens or b.declared_tokens:
                continue
            diff = _difference(a.text, b.text)
            if diff is None:
                continue
            mark = after[ahead[0]].breakpoint or 1
            flags.append(
                RecordedFlag(
                    step=cur.step.number,
                    block=b.name,
                    before=diff[0],
                    after=diff[1],
                    position="sits before "
                    + (CIRCLED[mark - 1] if mark <= len(CIRCLED) else f"breakpoint {mark}"),
                )
            )
    return flags
