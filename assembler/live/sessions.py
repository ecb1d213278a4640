"""Telling sessions apart as the provider's cache does: by the id a client sends where it
sends one (``prompt_cache_key``, Claude Code's ``metadata.user_id``, a session header),
else by what a request shares with the last request of a session so far: its whole
tools-and-system prefix, or the conversation's first message."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# headers clients send to name their session (never credentials: those are redacted)
SESSION_HEADERS = ("x-claude-code-session-id", "session_id", "session-id", "x-session-id")

Block = Mapping[str, Any]


def session_hint(body: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    """The session id the client sends, if any."""
    key = body.get("prompt_cache_key")
    if isinstance(key, str) and key:
        return key[:200]
    metadata = body.get("metadata")
    user = metadata.get("user_id") if isinstance(metadata, Mapping) else None
    if isinstance(user, str) and user:
        return user[:200]
    lowered = {k.lower(): v for k, v in headers.items()}
    for name in SESSION_HEADERS:
        if lowered.get(name):
            return lowered[name][:200]
    return None


def _key(block: Block) -> tuple[Any, ...]:
    # the cache marker is not content: moving it keeps a block the same
    return (block.get("section"), block.get("role"), block.get("text"))


def shared_blocks(blocks: Sequence[Block], before: Sequence[Block]) -> int:
    """How many leading blocks two requests share."""
    n = 0
    for a, b in zip(blocks, before, strict=False):
        if _key(a) != _key(b):
            break
        n += 1
    return n


def _prompt_length(blocks: Sequence[Block]) -> int:
    """How many leading blocks are tools and system prompt."""
    return next((i for i, b in enumerate(blocks) if b.get("section") == "messages"), len(blocks))


def _first_message(blocks: Sequence[Block]) -> tuple[Any, ...] | None:
    return next((_key(b) for b in blocks if b.get("section") == "messages"), None)


def continues(blocks: Sequence[Block], last: Sequence[Block]) -> int:
    """How strongly a request continues a session whose last request was ``last``: the
    blocks they share when it keeps the whole tools-and-system prefix, or when it opens
    with the same first message (a conversation whose tools or system prompt changed);
    0 when it does neither."""
    n = shared_blocks(blocks, last)
    if n and n >= _prompt_length(last):
        return n
    first = _first_message(blocks)
    return n + 1 if first is not None and first == _first_message(last) else 0


def closest(blocks: Sequence[Block], candidates: Mapping[str, Sequence[Block]]) -> str | None:
    """The candidate session ``blocks`` continues most strongly (the latest on a tie), or
    ``None`` when it continues none."""
    best, best_n = None, 0
    for name, last in candidates.items():
        n = continues(blocks, last)
        if n and n >= best_n:
            best, best_n = name, n
    return best
