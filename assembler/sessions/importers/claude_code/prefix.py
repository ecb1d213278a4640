"""What a Claude Code transcript does not record, as blocks sized from the bill: the system
prompt and tools, the context the client prepends to the first message, the part of them
other traffic of the same client keeps cached, and their changes (the conversation re-sent
rewritten or restarted, the tools listed again)."""

from __future__ import annotations

from typing import Any

from assembler.sessions.importers.claude_code.transcript import Conversation, Transcript
from assembler.sessions.importers.history import SIDE_CALL, unrecorded_block

Block = dict[str, Any]
CONTEXT_TEXT = "[context the client prepends to the first message: not recorded in the transcript]"


# Requests whose read is the system prompt alone: after a compaction its messages are new,
# and after a task notification the client re-sends them rewritten.
_SYSTEM_ONLY = ("compaction", "task-notification")


def system_parts(t: Transcript) -> dict[str, int]:
    """Per model, the system prompt's own size, where the bill shows it apart from the
    context the client prepends to the first message: the read of the first main-thread
    request on that model whose messages are all new (see ``_SYSTEM_ONLY``)."""
    out: dict[str, int] = {}
    for r in t.requests:
        label = r.label or ""
        if r.thread or r.usage is None or label == SIDE_CALL or r.model in out:
            continue
        conversation = t.conversations.get(id(r))
        read = r.usage["cache_read"]
        if label.startswith(_SYSTEM_ONLY) and conversation and 0 < read < conversation.unrecorded:
            out[r.model] = read
    return out


def hour_parts(t: Transcript) -> dict[str, int]:
    """Per model, where the entries a bill mixing lifetimes wrote for an hour end: its read
    plus its 1-hour write (the API writes the 1-hour entries before the 5-minute ones)."""
    out: dict[str, int] = {}
    for r in t.requests:
        u = r.usage
        if u is not None and r.ttl == "5m" and u.get("cache_write_1h", 0) and r.model not in out:
            out[r.model] = u["cache_read"] + u["cache_write_1h"]
    return out


def prefix_blocks(
    who: str,
    conversation: Conversation,
    system: int | None,
    hour: int,
    ttl: str | None,
    rewrites: int = 0,
) -> list[Block]:
    """The unrecorded system prompt and tools; apart from the context prepended to the
    first message when the bill separates them: by the read after a compaction or a
    rewrite (main agent), or by a bill mixing lifetimes (Claude Code writes its system
    prompt and tools for an hour, the messages for five minutes). In a request of
    5-minute writes the part billed for an hour carries its own lifetime. After the
    client re-sent the conversation rewritten, or restarted it from a compaction's
    summary, the context is another text, sized from the bill of its first request."""
    size = system if system is not None and not who else None
    total = conversation.unrecorded
    if size is None and 0 < hour < total:
        size = hour
    if size is None or size >= total:
        blocks = [unrecorded_block(total, who)]
    else:
        head = unrecorded_block(size, who)
        head["name"] = "unrecorded system prompt"
        head["inferred"] = True
        text = CONTEXT_TEXT if not who else CONTEXT_TEXT.replace("[", f"[{who}: ", 1)
        if rewrites:
            text = text.replace("]", f" (re-sent rewritten, {rewrites}×)]", 1)
        if conversation.restarts:
            text = text.replace("]", f" (conversation restarted, {conversation.restarts}×)]", 1)
        context = {
            "section": "messages",
            "name": "unrecorded first-message context",
            "role": "user",
            "text": text,
            "tokens": total - size,
            "inferred": True,
        }
        blocks = [head, context]
    if hour and ttl == "5m":
        blocks[0]["ttl"] = "1h"
    return blocks


def who_of(main: Transcript | None, t: Transcript) -> str:
    """The thread's name in its blocks: empty for the main agent."""
    return "" if t is main else f"subagent {t.agent_id}"


def first_reads(main: Transcript, subs: list[Transcript]) -> dict[str, int]:
    """Per thread (``who``), the read billed to its first request: split off at that size
    on every model the thread runs on, so its blocks keep one text from model to model."""
    out: dict[str, int] = {}
    for t in (main, *subs):
        usage = next((r.usage for r in t.requests if r.usage is not None), None)
        if usage is not None:
            out.setdefault(who_of(main, t), usage["cache_read"])
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
