"""Volatile blocks in recorded requests: a few characters that differ from the previous request.

A clock, a counter or an id rendered into a block ahead of a breakpoint shows
up as the same block sent twice with a handful of characters changed; the
cached prefix behind it is then written again on every request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from assembler.analysis.engine import AssembledStep
from assembler.design.wire import CIRCLED, WireBlock, prefix_links
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


def _keys(blocks: Sequence[WireBlock]) -> list[tuple[str, int]]:
    """Each block's name and, for a name sent twice (two calls of one tool in one message),
    which of them it is."""
    seen: dict[str, int] = {}
    keys: list[tuple[str, int]] = []
    for b in blocks:
        k = seen[b.name] = seen.get(b.name, -1) + 1
        keys.append((b.name, k))
    return keys


def recorded_flags(steps: Sequence[AssembledStep]) -> list[RecordedFlag]:
    """Blocks ahead of a breakpoint that differ from the previous request in a few characters.

    The previous request is the one this request continues, as the cache sees it: the
    earlier request with the longest common block prefix, else (a block changed at its very
    head) the request just before. A subagent's requests come between a thread's, and each
    continues its own thread. A block is compared with the block of its name there (its
    section, message and content kind), not with whatever stood at its place: a request that
    adds a block near its head (a compaction call's own instructions) moves every block
    after it, and two neighbouring tool calls of one tool differ in a few characters. The
    comparison ends where the history diverges (a block the previous request did not have,
    or one rewritten at length): past it the blocks are another history, not these changed."""
    flags: list[RecordedFlag] = []
    requests = [s.wire.blocks for s in steps]
    for n, (link, _) in enumerate(prefix_links(requests)):
        if n == 0:
            continue
        before, after = requests[n - 1 if link is None else link], requests[n]
        cur = steps[n]
        marks = [i for i, b in enumerate(after) if b.breakpoint is not None]
        named = dict(zip(_keys(before), before, strict=True))
        for i, (key, b) in enumerate(zip(_keys(after), after, strict=True)):
            a = before[i] if i < len(before) and before[i] is b else named.get(key)
            if a is b:  # the very block of the request before
                continue
            if a is None or a.section != b.section:
                break  # the history diverges here: what follows is not those blocks changed
            if a.declared_tokens or b.declared_tokens or a.text == b.text:
                continue  # sized by the bill alone, or the same text
            diff = _difference(a.text, b.text)
            if diff is None:
                break  # rewritten at length: an edit, or another conversation from here on
            ahead = [m for m in marks if m >= i]
            if not ahead:
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
