"""What a Claude Code transcript does not record, as blocks sized from the bill: the system
prompt and tools, the context the client prepends to the first message, the part of them
other traffic of the same client keeps cached, and their changes (the conversation re-sent
rewritten, the tools listed again)."""

from __future__ import annotations

from typing import Any

from assembler.sessions.importers.claude_code_transcript import Transcript
from assembler.sessions.importers.history import SIDE_CALL, unrecorded_block

Block = dict[str, Any]
CONTEXT_TEXT = "[context the client prepends to the first message: not recorded in the transcript]"


# Requests whose read is the system prompt alone: after a compaction its messages are new,
# and after a task notification the client re-sends them rewritten.
_SYSTEM_ONLY = ("compaction", "task-notification")


def system_part(t: Transcript) -> int | None:
    """The system prompt's own size, when the bill shows it apart from the context the
    client prepends to the first message: the read of a main-thread request whose
    messages are all new (see ``_SYSTEM_ONLY``)."""
    requests = t.requests
    for k, r in enumerate(requests):
        label = r.label or ""
        if r.thread == "" and label != SIDE_CALL and label.startswith(_SYSTEM_ONLY):
            after = next((x for x in requests[k:] if x.usage is not None), None)
            if after is not None and after.usage is not None:
                read = after.usage["cache_read"]
                if 0 < read < t.prefix:
                    return read
    return None


def prefix_blocks(
    t: Transcript, who: str, system: int | None, ttl: str | None, rewrites: int = 0
) -> list[Block]:
    """The unrecorded system prompt and tools; apart from the context prepended to the
    first message when the bill separates them: by the read after a compaction or a
    rewrite (main agent), or by a bill mixing lifetimes (Claude Code writes its system
    prompt and tools for an hour, the messages for five minutes). In a request of
    5-minute writes the part billed for an hour carries its own lifetime. After the
    client re-sent the conversation rewritten, the context is another text."""
    size = system if system is not None and not who else None
    if size is None and 0 < t.hour < t.prefix:
        size = t.hour
    if size is None:
        blocks = [unrecorded_block(t.prefix, who)]
    else:
        head = unrecorded_block(size, who)
        head["name"] = "unrecorded system prompt"
        head["inferred"] = True
        text = CONTEXT_TEXT if not who else CONTEXT_TEXT.replace("[", f"[{who}: ", 1)
        if rewrites:
            text = text.replace("]", f" (re-sent rewritten, {rewrites}×)]", 1)
        context = {
            "section": "messages",
            "name": "unrecorded first-message context",
            "role": "user",
            "text": text,
            "tokens": max(0, t.prefix - size),
            "inferred": True,
        }
        blocks = [head, context]
    if t.hour and ttl == "5m":
        blocks[0]["ttl"] = "1h"
    return blocks


def first_reads(main: Transcript, subs: list[Transcript]) -> dict[str, int]:
    """Per thread (``who``), the read billed to its first request."""
    out: dict[str, int] = {}
    for t in (main, *subs):
        who = "" if t is main else f"subagent {t.agent_id}"
        usage = next((r.usage for r in t.requests if r.usage is not None), None)
        if usage is not None:
            out.setdefault(who, usage["cache_read"])
    return out


def warm_split(blocks: list[Block], tokens: int, first: bool) -> list[Block]:
    """The unrecorded blocks with their first ``tokens`` split off the block they end in,
    so that every request of the thread has the same blocks; on the thread's first
    request that part is marked as cached before the session (the simulator finds it
    warm, as the provider did)."""
    if tokens <= 0:
        return blocks
    out: list[Block] = []
    left = tokens
    for k, b in enumerate(blocks):
        size = b["tokens"]
        if 0 < left < size:
            head = {**b, "name": f"{b['name']}, cached before", "tokens": left}
            head.pop("breakpoint", None)
            head.pop("ttl", None)
            head["text"] = b["text"].replace("]", " (the part cached before the session)]", 1)
            if first:
                head["warm"] = True
            return [*out, head, {**b, "tokens": size - left}, *blocks[k + 1 :]]
        left -= size
        out.append(b)
        if left <= 0 or k == len(blocks) - 1:
            if first:
                out[-1] = {**b, "warm": True}
            return [*out, *blocks[k + 1 :]]
    return out


def retooled(blocks: list[Block], times: int) -> list[Block]:
    """After the client listed its tools again, the system prompt and tools past the part
    other traffic shares are another text."""
    if not times:
        return blocks
    k = next(i for i, b in enumerate(blocks) if "cached before" not in b["name"])
    again = blocks[k]["text"].replace("]", f" (tools listed again, {times}×)]", 1)
    return [*blocks[:k], {**blocks[k], "text": again}, *blocks[k + 1 :]]
