"""Transcript entries turned into requests, blocks and a session document."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from assembler.design.context import format_time
from assembler.sessions.importers.hidden import Hidden
from assembler.sessions.importers.records import UNRECORDED_TEXT, total_input
from assembler.sessions.model import FORMAT

NAME_CHARS = 200  # session.schema.json: $defs.name maxLength
SIDE_CALL = "compaction-call"  # a request made beside the conversation on its history

# --- blocks ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One content item of the history: a message block once placed in a request."""

    role: str  # user | assistant
    kind: str  # text | tool_use | tool_result | summary | image | thinking | reasoning | …
    text: str
    label: str = ""  # e.g. the tool name
    hidden: Hidden | None = None  # a size the transcript does not show (image, thinking)
    use_id: str = ""  # the tool call's id, on a tool_use and on its tool_result

    def block(self, index: int) -> dict[str, Any]:
        name = f"messages[{index}] {self.kind}" + (f" {self.label}" if self.label else "")
        out: dict[str, Any] = {
            "section": "messages",
            "name": name,
            "role": self.role,
            "text": self.text,
        }
        if self.hidden is not None:
            out["tokens"] = self.hidden.tokens
            if self.hidden.inferred:
                out["inferred"] = True
        return out


# --- what a transcript reader collects, in order ------------------------------------


@dataclass
class TurnStart:
    """The user starts a turn: becomes one agentic function in the call tree."""

    at: datetime
    prompt: str


@dataclass
class Request:
    """One API request: the history as sent, then what came back."""

    at: datetime
    model: str
    history: Sequence[Item]  # shared with the requests after it: never changed in place
    output: list[Item] = field(default_factory=list)
    usage: dict[str, int] | None = None
    label: str | None = None
    ttl: str | None = None  # the lifetime its writes were billed with
    platform: str | None = None  # who served it (anthropic, anthropic-bedrock, …)
    thread: str = ""  # the conversation it belongs to ("" the main one)
    diagnostic: dict[str, Any] | None = None  # the provider's own cache verdict, if recorded
    service_tier: str | None = None  # a tier other than the standard one that served it
    marker: Item | None = None  # the history item carrying the tail cache marker (None: the last)
    rewrites: int = 0  # how often the client had re-sent the conversation rewritten before it
    retools: int = 0  # how often the client had listed its tools again before it


@dataclass
class ToolDone:
    """A plain tool call with its result; ``agent_id`` links a subagent's transcript."""

    at: datetime
    name: str
    input: str
    output: str
    agent_id: str | None = None


Entry = TurnStart | Request | ToolDone


def unrecorded_block(tokens: int, who: str = "") -> dict[str, Any]:
    """The system prompt and tools a transcript does not record, sized from usage.

    ``who`` keeps a subagent's prefix distinct from the main agent's, so the cache
    simulator does not count one as a hit on the other.
    """
    text = UNRECORDED_TEXT if not who else UNRECORDED_TEXT.replace("[", f"[{who}: ", 1)
    return {
        "section": "system",
        "name": "unrecorded prefix",
        "text": text,
        "tokens": max(0, tokens),
        "breakpoint": True,
    }


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def content_text(content: Any) -> str:
    """Text of a tool_result / message content: a string or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif part.get("type") in ("image", "input_image"):
                    parts.append("[image]")
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    if content is None:
        return ""
    return json_text(content)


# --- the event stream -----------------------------------------------------------------


@dataclass
class Events:
    """The event list under construction.

    Times are clamped so they never go backwards: parallel work (two subagents
    running at once) is written one call after the other, and the schema forbids
    time going backwards.
    """

    events: list[dict[str, Any]] = field(default_factory=list)
    last: datetime | None = None
    labels: dict[str, int] = field(default_factory=dict)
    stack: list[str] = field(default_factory=list)

    def _at(self, at: datetime) -> str:
        if self.last is not None and at < self.last:
            at = self.last
        self.last = at
        return format_time(at)

    def add(self, kind_: str, at: datetime, **fields: Any) -> None:
        if kind_ == "change" and isinstance(fields.get("model"), str):
            fields["model"] = fields["model"][:NAME_CHARS]  # the schema's limit on a name
        self.events.append(
            {
                "type": kind_,
                "at": self._at(at),
                **{k: v for k, v in fields.items() if v is not None},
            }
        )

    def enter(self, at: datetime, function: str, input: str | None = None) -> None:
        self.add("enter", at, function=function, input=input)
        self.stack.append(function)

    def exit(self, at: datetime, output: str | None = None) -> None:
        self.add("exit", at, function=self.stack.pop(), output=output)

    def unique_label(self, label: str) -> str:
        n = self.labels[label] = self.labels.get(label, 0) + 1
        return label if n == 1 else f"{label}-{n}"

    def close_all(self, at: datetime) -> None:
        while self.stack:
            self.exit(at)


_MARKER = ("breakpoint", "ttl")  # a block's cache marker and its lifetime: not its content


def same_but_marker(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two blocks are the same but for their cache marker and its lifetime."""
    if a == b:
        return True
    if a.get("text") != b.get("text"):  # most differing blocks differ in their text
        return False
    return {k: v for k, v in a.items() if k not in _MARKER} == {
        k: v for k, v in b.items() if k not in _MARKER
    }


def _unmarked(b: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in b.items() if k not in _MARKER}


def compact_requests(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write each recorded request as ``keep`` (the blocks it shares with the previous
    request) plus its new blocks, so a long transcript's history is written once
    instead of once per request. Reading the session expands them again."""
    out: list[dict[str, Any]] = []
    before: list[dict[str, Any]] | None = None
    for event in events:
        request = event.get("request") if event.get("type") == "llm" else None
        if request is None:
            out.append(event)
            continue
        blocks: list[dict[str, Any]] = request["blocks"]
        if "keep" in request:  # already written this way: what it reads back as
            if before is not None:
                marked = set(request.get("breakpoints", []))
                hours = set(request.get("breakpoints_1h", []))
                kept = [_unmarked(b) for b in before[: request["keep"]]]
                for k, b in enumerate(kept):
                    b["breakpoint"] = k in marked
                    if k in hours:
                        b["ttl"] = "1h"
                blocks = kept + blocks
            out.append(event)
            before = blocks
            continue
        keep = 0
        if before is not None:
            limit = min(len(before), len(blocks))
            while keep < limit and same_but_marker(before[keep], blocks[keep]):
                keep += 1
        if keep:
            compact: dict[str, Any] = {"keep": keep, "blocks": blocks[keep:]}
            marks = [k for k in range(keep) if blocks[k].get("breakpoint")]
            if marks:
                compact["breakpoints"] = marks
            hour_marks = [k for k in marks if blocks[k].get("ttl") == "1h"]
            if hour_marks:
                compact["breakpoints_1h"] = hour_marks
            event = {**event, "request": compact}
        out.append(event)
        before = blocks
    return out


def session_doc(
    *,
    id: str,
    agent: str,
    provider: str,
    model: str,
    environment: Mapping[str, Any] | None,
    events: list[dict[str, Any]],
    title: str | None = None,
    token_scale: Mapping[str, float] | None = None,
    shared: bool = False,
) -> dict[str, Any]:
    """The session document; ``shared``: the requests are written with ``keep`` already
    (``shared_history.SharedWriter``), else they are compacted here."""
    session: dict[str, Any] = {
        "id": (id or "imported")[:200],
        "agent": {"name": agent},
        "provider": provider,
        "model": model[:NAME_CHARS] or "unknown",
    }
    if token_scale:
        session["token_scale"] = dict(token_scale)
    if title:
        session["title"] = title
    if environment:
        session["environment"] = dict(environment)
    return {
        "format": FORMAT,
        "session": session,
        "events": events if shared else compact_requests(events),
    }


@dataclass(frozen=True)
class Imported:
    data: dict[str, Any]
    warnings: tuple[str, ...] = ()
    #: the subagent transcripts read beside a Claude Code transcript (its summary says so)
    subagent_files: int = 0


# --- the unrecorded prefix ------------------------------------------------------------


TokenCount = Callable[[str], int]
"""Counts a text's tokens. The caller brings it: sessions do not depend on the cache engine."""


def counted_tokens(items: Sequence[Item], count: TokenCount) -> int:
    """Tokens of the recorded history; a hidden block counts its size once known."""
    visible = sum(count(item.text) for item in items if item.hidden is None)
    hidden = sum(i.hidden.tokens for i in items if i.hidden is not None and i.hidden.sized)
    return visible + hidden


def infer_prefix(
    requests: list[tuple[dict[str, int] | None, Sequence[Item]]], count: TokenCount
) -> int:
    """Size of what a transcript does not record (system prompt + tools).

    Each request's measured total input is the prefix plus its history. The
    prefix is taken as the smallest ``total - counted history`` over the requests
    with usage, floored at 0: the smallest, because history we under-count
    (omitted thinking, images) only ever makes the difference larger.
    """
    gaps = [total_input(u) - counted_tokens(items, count) for u, items in requests if u is not None]
    return max(0, min(gaps)) if gaps else 0
