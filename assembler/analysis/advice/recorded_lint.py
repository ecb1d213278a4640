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
from assembler.sessions.versions import common_prefix

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
    if abs(len(a) - len(b)) > FEW_CHARACTERS:
        # every alignment changes at least the difference in length: not a few characters
        # (the matcher below took seconds on a message rewritten at length)
        return None
    # one changed span (a clock, an id) reads best whole: strip what both ends share
    start = common_prefix(a, b)
    end = min(common_prefix(a[::-1], b[::-1]), min(len(a), len(b)) - start)
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
            if a is b:  # the very block of the request before: nothing differs
                continue
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
