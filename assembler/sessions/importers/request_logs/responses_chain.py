"""OpenAI Responses requests that continue a stored response (``previous_response_id``).

Such a request sends only what is new; the API reads the stored conversation before
it. Its blocks are therefore the blocks of the request it continues plus the new ones,
built as such rather than again from the whole conversation: a log chaining n requests
is read in time and memory linear in what it holds, and the blocks a request shares
with the one before are known without comparing them. Reasoning leaves the input at a
new user turn, so a turn that closes is built once more, without its reasoning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assembler.sessions.importers.records import iter_items
from assembler.sessions.importers.request_cache import content_facts
from assembler.sessions.importers.request_logs.requests_shapes import (
    Blocks,
    is_user_message,
    responses_head,
    responses_items,
    stored_conversation,
)

Block = dict[str, Any]


@dataclass
class Built:
    """One request's blocks; the first ``shared`` are the very blocks of ``base``, the
    request built before it in this chain (none: ``base`` is None)."""

    blocks: list[Block]
    shared: int
    base: list[Block] | None
    facts: tuple[int, bool]  # images and citations of the whole conversation
    marks: list[int]  # the blocks with a cache marker, in order


@dataclass
class _Conversation:
    """The last request built: its head (tools, instructions), its items, and their blocks
    in two parts: before the current turn (final) and the current turn (reasoning kept)."""

    request: Mapping[str, Any]
    head: list[Block]
    items: list[Any]
    turn: int
    stable: Blocks
    current: Blocks
    facts: tuple[int, bool]
    blocks: list[Block] = field(default_factory=list)
    response_id: Any = None
    output: list[Any] = field(default_factory=list)
    # the marked blocks of the head, of the stable part and of the current turn (each
    # counted from its own start), so no request scans the blocks it keeps
    head_marks: list[int] = field(default_factory=list)
    stable_marks: list[int] = field(default_factory=list)
    current_marks: list[int] = field(default_factory=list)

    def finish(self, shared: int, base: list[Block] | None) -> Built:
        head, stable = len(self.head), len(self.stable.blocks)
        self.blocks = self.head + self.stable.blocks + self.current.blocks
        marks = [
            *self.head_marks,
            *(head + i for i in self.stable_marks),
            *(head + stable + i for i in self.current_marks),
        ]
        return Built(self.blocks, shared, base, self.facts, marks)

    def same_head(self, request: Mapping[str, Any]) -> bool:
        old = self.request
        return request.get("tools") == old.get("tools") and request.get("instructions") == old.get(
            "instructions"
        )


def _last_user(items: list[Any], start: int) -> int | None:
    """The index of the last user message of ``items`` from ``start`` on, if any."""
    for i in range(len(items) - 1, start - 1, -1):
        if is_user_message(items[i]):
            return i
    return None


def _facts(a: tuple[int, bool], b: tuple[int, bool]) -> tuple[int, bool]:
    return a[0] + b[0], a[1] or b[1]


def _marked(blocks: list[Block], start: int = 0) -> list[int]:
    return [i for i in range(start, len(blocks)) if blocks[i].get("breakpoint")]


class ResponsesChain:
    """Stored responses by id (each the request it continued and its own new items), and
    the conversation of the last request built."""

    def __init__(self) -> None:
        self._stored: dict[str, tuple[str | None, list[Any]]] = {}
        self._last: _Conversation | None = None
        self.missing = 0
        self.first_missing = ""

    def build(self, line: int, request: Mapping[str, Any], response: Mapping[str, Any]) -> Built:
        prev = request.get("previous_response_id")
        own = stored_conversation(request, {})
        last = self._last
        known = isinstance(prev, str) and prev in self._stored
        if not (isinstance(prev, str) and prev):
            built = self._fresh(request, own)
        elif last is not None and prev == last.response_id and last.same_head(request):
            built = self._extend(last, request, last.output + own)
        elif known:
            built = self._fresh(request, self._conversation(prev) + own)
        else:
            self.missing += 1
            self.first_missing = self.first_missing or f"line {line}: {prev[:60]}"
            built = self._fresh(request, own)
        assert self._last is not None
        output = list(iter_items(response.get("output")))
        self._last.output, self._last.response_id = output, response.get("id")
        if isinstance(response.get("id"), str):
            self._stored[response["id"]] = (prev if known else None, own + output)
        return built

    def _conversation(self, response_id: str) -> list[Any]:
        """The items a request continuing ``response_id`` reads before its own."""
        parts: list[list[Any]] = []
        node: str | None = response_id
        while node is not None:
            node, items = self._stored[node]
            parts.append(items)
        return [item for part in reversed(parts) for item in part]

    def _fresh(self, request: Mapping[str, Any], items: list[Any]) -> Built:
        head = responses_head(request)
        listed = list(iter_items(items))
        turn = next((i for i in range(len(listed) - 1, -1, -1) if is_user_message(listed[i])), 0)
        stable = Blocks(head.messages, head.system)
        responses_items(stable, listed[:turn], turn)
        current = Blocks(stable.messages, stable.system)
        responses_items(current, listed[turn:], 0)
        facts = content_facts(listed)
        last = _Conversation(request, head.blocks, listed, turn, stable, current, facts)
        last.head_marks, last.stable_marks = _marked(head.blocks), _marked(stable.blocks)
        last.current_marks = _marked(current.blocks)
        self._last = last
        return last.finish(0, None)

    def _extend(self, last: _Conversation, request: Mapping[str, Any], new: list[Any]) -> Built:
        base = last.blocks
        new = list(iter_items(new))
        start = len(last.items)
        last.items.extend(new)
        user = _last_user(last.items, start)
        if user is None:  # the turn goes on: its new items add blocks
            shared = len(base)
            n = len(last.current.blocks)
            responses_items(last.current, new, 0)
            last.current_marks += _marked(last.current.blocks, n)
        else:  # the turn closes: its items again, without their reasoning
            old = last.current.blocks
            closing = Blocks(last.stable.messages, last.stable.system)
            responses_items(closing, last.items[last.turn : user], user - last.turn)
            n = len(last.stable.blocks)
            last.stable_marks += [n + i for i in _marked(closing.blocks)]
            last.stable.blocks.extend(closing.blocks)
            last.stable.messages, last.stable.system = closing.messages, closing.system
            last.turn = user
            last.current = Blocks(closing.messages, closing.system)
            responses_items(last.current, last.items[user:], 0)
            last.current_marks = _marked(last.current.blocks)
            again = closing.blocks + last.current.blocks
            same = next(
                (i for i, (a, b) in enumerate(zip(old, again, strict=False)) if a != b), None
            )
            shared = len(base) - len(old) + (min(len(old), len(again)) if same is None else same)
        last.request = request
        last.facts = _facts(last.facts, content_facts(new))
        return last.finish(shared, base)

    def warnings(self) -> tuple[str, ...]:
        if not self.missing:
            return ()
        return (
            f"{self.missing} request(s) continue a stored response not in the log "
            f"(previous_response_id, first at {self.first_missing}): their earlier "
            "conversation is not simulated",
        )
