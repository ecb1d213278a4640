"""What a rollout does not record of a request's head: Codex's base instructions (recorded in
``session_meta.base_instructions`` since about 0.12x, else not) and its tools, sized from the
bill; and the part of them other sessions of the same client keep cached.

**Size.** Each request's billed input is this head plus its history. With the history
counted as the model reads it (items.py), ``billed input − counted history`` is the same on
every request of a turn up to a few tokens; the head is taken as the smallest such gap over
the requests before the history is first rewritten, floored at 0, the smallest because what
the rollout cannot show (a hosted tool's results sized later, an image) only ever makes the
gap larger.

**Shared part.** The first request of a session reads what other sessions of the client left
cached (on the moonmind rollouts 3,072 tokens, the base instructions and tools, on all three;
on codemie-code nothing): its billed read, at most the head, is marked as cached before the
first request and before any request sent after an idle gap during which the session's own
entries may have expired (moonmind: the three requests after gaps of 20 minutes to 3 hours
read exactly that part again).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from assembler.sessions.importers.history import (
    Request,
    TokenCount,
    counted_tokens,
    unrecorded_block,
)
from assembler.sessions.importers.records import total_input
from assembler.sessions.importers.shared_history import continues_exactly

Block = dict[str, Any]

#: An idle gap past which a session's own cache entries may be gone (OpenAI keeps in-memory
#: entries 5 to 10 minutes idle): the shared part is marked cached again after it.
IDLE = timedelta(minutes=5)
TOOLS_TEXT = "[tool definitions: not recorded in the rollout]"


def head_size(requests: list[Request], count: TokenCount) -> int:
    """The smallest gap over the requests before the first rewrite of the history (a
    label): a small error in what a rewrite removes (reasoning dropped at a new turn, on
    the moonmind rollouts 10 to 35 tokens per item beyond what the fit of the growth within
    a turn gives) would otherwise shift every request's head, and weighs most on the first,
    smallest requests. All of them when the first request is already a rewrite."""
    first = next((k for k, r in enumerate(requests) if k and r.label is not None), None)
    gaps: list[int] = []
    before: Request | None = None
    counted = 0
    for r in requests[:first]:
        if before is not None and continues_exactly(r.history, before.history):
            counted += counted_tokens(r.history[len(before.history) :], count)
        else:
            counted = counted_tokens(r.history, count)
        before = r
        if r.usage is not None:
            gaps.append(total_input(r.usage) - counted)
    return max(0, min(gaps)) if gaps else 0


def base_instructions(meta: Mapping[str, Any]) -> str:
    """The base instructions a newer rollout records, else ``""``."""
    base = meta.get("base_instructions")
    if isinstance(base, Mapping) and isinstance(base.get("text"), str):
        return str(base["text"])
    return base if isinstance(base, str) else ""


def head_blocks(size: int, base: str, count: TokenCount) -> list[Block]:
    """The head as blocks: the recorded base instructions, then what is left of ``size``
    (the tools); one unrecorded block when no base instructions are recorded or they do
    not fit in ``size``. OpenAI caches prefixes automatically: no breakpoints."""
    counted = count(base) if base else 0
    if not base or counted > size:
        block = unrecorded_block(size)
        del block["breakpoint"]
        return [block]
    return [
        {"section": "system", "name": "base instructions", "text": base, "tokens": counted},
        {
            "section": "system",
            "name": "unrecorded tools",
            "text": TOOLS_TEXT,
            "tokens": size - counted,
            "inferred": True,
        },
    ]


def shared_split(blocks: list[Block], shared: int) -> list[Block]:
    """``blocks`` with their first ``shared`` tokens ending a block: the part of the
    unrecorded block they end in split off it (every request has the same blocks). A
    recorded text is not split: the part ends before it."""
    left = shared
    for k, b in enumerate(blocks):
        size = b["tokens"]
        if left < size:
            if left <= 0 or not b["name"].startswith("unrecorded"):
                return blocks
            head = {**b, "name": f"{b['name']}, cached before", "tokens": left}
            head["text"] = b["text"].replace("]", " (the part other sessions keep cached)]", 1)
            return [*blocks[:k], head, {**b, "tokens": size - left}, *blocks[k + 1 :]]
        left -= size
    return blocks


def shared_end(blocks: list[Block], shared: int) -> int:
    """The index of the last block within the shared part (-1: none)."""
    total, end = 0, -1
    for k, b in enumerate(blocks):
        total += b["tokens"]
        if total > shared:
            break
        end = k
    return end if shared > 0 else -1


def first_read(requests: list[Request], size: int) -> int:
    """What the session's first billed request read, at most the head: the part other
    sessions keep cached."""
    usage = next((r.usage for r in requests if r.usage is not None), None)
    return min(usage["cache_read"], size) if usage is not None else 0
