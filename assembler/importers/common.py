"""Pieces every importer shares: reading JSON Lines, errors and warnings,
timestamps, request blocks, measured usage and the event stream.

An importer turns a foreign file into ``context-session/1`` data: a ``session``
header and events whose ``llm`` events carry ``request: {blocks}`` (the request
as the provider saw it) and ``usage`` normalised to our meaning (``input`` is
the UNCACHED input).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assembler.session import FORMAT, format_time

MAX_BYTES = 200 * 1024 * 1024  # transcripts grow large; refuse what cannot be a transcript
UNRECORDED_TEXT = "[system prompt and tool definitions: not recorded in the transcript]"
PREVIEW = 60


class ImporterError(ValueError):
    """A foreign file cannot be imported. ``str()`` is one line: file, line, what was expected."""

    def __init__(self, source: str, message: str, *, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.message = " ".join(message.split())
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {self.message}")


@dataclass(frozen=True)
class Record:
    """One JSON object of a JSON Lines file, with its 1-based line."""

    line: int
    data: Mapping[str, Any]
    source: str

    def fail(self, message: str) -> ImporterError:
        return ImporterError(self.source, message, line=self.line)

    def get_str(self, key: str, default: str | None = None) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str):
            raise self.fail(f"{key}: expected a string, found {kind(value)}")
        return value

    def get_map(self, key: str) -> Mapping[str, Any]:
        value = self.data.get(key)
        if not isinstance(value, Mapping):
            raise self.fail(f"{key}: expected an object, found {kind(value)}")
        return value

    def at(self, key: str = "timestamp") -> datetime:
        return parse_time(self.get_str(key), self)


@dataclass
class Skipped:
    """Lines that were not JSON objects: skipped, counted, the first one described."""

    count: int = 0
    first_line: int = 0
    first_source: str = ""
    first_reason: str = ""

    def add(self, source: str, line: int, reason: str) -> None:
        if self.count == 0:
            self.first_source, self.first_line, self.first_reason = source, line, reason
        self.count += 1

    def warnings(self, main: str) -> tuple[str, ...]:
        """``skipped N malformed lines (first at line K: …)``, naming the file if not ``main``."""
        if not self.count:
            return ()
        plural = "line" if self.count == 1 else "lines"
        where = f"line {self.first_line}"
        if self.first_source != main:
            where += f" of {self.first_source}"
        return (f"skipped {self.count} malformed {plural} (first at {where}: {self.first_reason})",)


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def read_jsonl(path: Path, skipped: Skipped) -> list[Record]:
    """Every line holding a JSON object; other non-blank lines are skipped and counted.

    A recording cut short ends in a truncated line, and a crashed writer can leave
    garbage in the middle: neither should cost the user the rest of the file.
    """
    source = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ImporterError(source, f"the file is {size:,} bytes; the limit is {MAX_BYTES:,}")
        raw = path.read_bytes()
    except OSError as exc:
        raise ImporterError(source, f"cannot read the file: {exc.strerror or exc}") from None
    records: list[Record] = []
    for number, line in enumerate(raw.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            skipped.add(source, number, f"not UTF-8 text (byte {exc.start})")
            continue
        except (json.JSONDecodeError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            skipped.add(source, number, f"not valid JSON: {reason}")
            continue
        if not isinstance(value, dict):
            skipped.add(source, number, f"expected a JSON object, found {kind(value)}")
            continue
        records.append(Record(number, value, source))
    return records


def parse_time(text: str, record: Record) -> datetime:
    """ISO 8601 with a zone; a time without one is read as UTC (transcripts write ``Z``)."""
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise record.fail(f"expected an ISO 8601 timestamp, found {text[:40]!r}") from None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def preview(text: str, limit: int = PREVIEW) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def as_int(value: Any) -> int:
    """A usage count: non-negative integers only; anything else counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


# --- usage ----------------------------------------------------------------------------


def usage(input: int, cache_read: int, cache_write: int, output: int) -> dict[str, int]:
    return {
        "input": max(0, input),
        "cache_read": max(0, cache_read),
        "cache_write": max(0, cache_write),
        "output": max(0, output),
    }


def anthropic_usage(u: Mapping[str, Any]) -> dict[str, int]:
    """Anthropic ``input_tokens`` already excludes cached tokens.

    ``cache_creation_input_tokens`` is the write total; when only the 5m/1h split
    is given, the split is summed.
    """
    write = as_int(u.get("cache_creation_input_tokens"))
    split = u.get("cache_creation")
    if not write and isinstance(split, Mapping):
        write = as_int(split.get("ephemeral_5m_input_tokens")) + as_int(
            split.get("ephemeral_1h_input_tokens")
        )
    return usage(
        as_int(u.get("input_tokens")),
        as_int(u.get("cache_read_input_tokens")),
        write,
        as_int(u.get("output_tokens")),
    )


def openai_usage(total_input: int, cached: int, written: int, output: int) -> dict[str, int]:
    """OpenAI input counts INCLUDE cached (and written) tokens: take them out."""
    return usage(total_input - cached - written, cached, written, output)


def total_input(u: Mapping[str, int]) -> int:
    return u["input"] + u["cache_read"] + u["cache_write"]


# --- blocks ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One content item of the history: a message block once placed in a request."""

    role: str  # user | assistant
    kind: str  # text | tool_use | tool_result | summary | image | …
    text: str
    label: str = ""  # e.g. the tool name

    def block(self, index: int) -> dict[str, Any]:
        name = f"messages[{index}] {self.kind}" + (f" {self.label}" if self.label else "")
        return {"section": "messages", "name": name, "role": self.role, "text": self.text}


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
    history: list[Item]
    output: list[Item] = field(default_factory=list)
    usage: dict[str, int] | None = None
    label: str | None = None


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


def history_blocks(items: list[Item]) -> list[dict[str, Any]]:
    return [item.block(i) for i, item in enumerate(items)]


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


def _same_but_marker(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return {k: v for k, v in a.items() if k != "breakpoint"} == {
        k: v for k, v in b.items() if k != "breakpoint"
    }


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
                kept = before[: request["keep"]]
                blocks = [{**b, "breakpoint": k in marked} for k, b in enumerate(kept)] + blocks
            out.append(event)
            before = blocks
            continue
        keep = 0
        if before is not None:
            limit = min(len(before), len(blocks))
            while keep < limit and _same_but_marker(before[keep], blocks[keep]):
                keep += 1
        if keep:
            compact: dict[str, Any] = {"keep": keep, "blocks": blocks[keep:]}
            marks = [k for k in range(keep) if blocks[k].get("breakpoint")]
            if marks:
                compact["breakpoints"] = marks
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
) -> dict[str, Any]:
    session: dict[str, Any] = {
        "id": (id or "imported")[:200],
        "agent": {"name": agent},
        "provider": provider,
        "model": model[:200] or "unknown",
    }
    if title:
        session["title"] = title
    if environment:
        session["environment"] = dict(environment)
    return {"format": FORMAT, "session": session, "events": compact_requests(events)}


@dataclass(frozen=True)
class Imported:
    data: dict[str, Any]
    warnings: tuple[str, ...] = ()


def no_requests(source: str, what: str) -> ImporterError:
    return ImporterError(source, f"no API request found; expected {what}")


def iter_items(value: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(value, list):
        for v in value:
            if isinstance(v, Mapping):
                yield v


# --- the unrecorded prefix ------------------------------------------------------------


def counted_tokens(items: list[Item]) -> int:
    """Tokens of the recorded history, counted with o200k (an approximation for Claude)."""
    from assembler.tokens import counter

    count = counter("o200k_base").count
    return sum(count(item.text) for item in items)


def infer_prefix(requests: list[tuple[dict[str, int] | None, list[Item]]]) -> int:
    """Size of what a transcript does not record (system prompt + tools).

    Each request's measured total input is the prefix plus its history. The
    prefix is taken as the smallest ``total - counted history`` over the requests
    with usage, floored at 0: the smallest, because history we under-count
    (omitted thinking, images) only ever makes the difference larger.
    """
    gaps = [total_input(u) - counted_tokens(items) for u, items in requests if u is not None]
    return max(0, min(gaps)) if gaps else 0
