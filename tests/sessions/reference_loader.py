"""The session reader, validator and event builder as they were before the quick
path (``fast_validation``, ``model.built``, the direct JSON decoder), kept as the
reference the property tests compare against: every document accepted or refused
alike, with the same message, and read into equal values.

The wording of schema errors (``validation._explain``) is shared, not copied: both
paths reach it the same way; what could differ is which documents get there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import fastjsonschema

from assembler.design.calltree import Expose, Outcome
from assembler.design.context import Attachment, ContractKind, MemoryState, OutputContract
from assembler.limits import MAX_FIELD_CHARS
from assembler.sessions import loader, reader, validation
from assembler.sessions.event_values import tool_value as _tool
from assembler.sessions.loader import Previous, _recorded
from assembler.sessions.model import (
    FORMAT,
    Change,
    Enter,
    Event,
    Exit,
    FunctionSpec,
    LLMCall,
    Session,
    SessionError,
    ToolCall,
    Usage,
)
from assembler.sessions.reader import _Duplicate, _header_pairs, _number_message, kind_of, path_text
from assembler.sessions.request_settings import diagnostic_from, settings_from

Lines = Mapping[tuple[str | int, ...], int]
MAX_INT = 2**53 - 1
MAX_CALL_DEPTH = 1_000
_SURROGATE = re.compile("[\ud800-\udfff]")


def _time(text: str, source: str, line: int | None, field: str) -> datetime:
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
        # A day's margin at the calendar's ends: offsets, gaps and cache lifetimes are added.
        if not 1 < at.astimezone(UTC).year < 9999:
            raise OverflowError
        return at
    except (ValueError, OverflowError):
        raise SessionError(
            source,
            f"expected a real date and time between the years 2 and 9998, found {kind_of(text)}",
            line=line,
            field=field,
        ) from None


def read_jsonl(text: str, source: str) -> tuple[Any, dict[tuple[str | int, ...], int]]:
    header: Any = None
    events: list[Any] = []
    lines: dict[tuple[str | int, ...], int] = {}
    # LF only (a CR before it is JSON whitespace): U+2028, U+2029 and U+0085 are
    # text inside a string, not line ends.
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            # numbers read as the reader reads them (1.0 is the integer 1)
            value = json.loads(
                raw,
                object_pairs_hook=_header_pairs if header is None else None,
                parse_float=reader._number,
            )
        except json.JSONDecodeError as exc:
            raise SessionError(source, f"not valid JSON: {exc.msg}", line=number) from None
        except _Duplicate as exc:
            raise SessionError(
                source, "duplicate key", line=number, field=path_text((str(exc),))
            ) from None
        except ValueError as exc:
            raise SessionError(source, _number_message(exc), line=number) from None
        if header is None:
            if not isinstance(value, dict):
                raise SessionError(
                    source,
                    f"expected the header object {{format, session}}, found {kind_of(value)}",
                    line=number,
                )
            header = value
            lines[()] = number
            for key in value:
                lines[(key,)] = number
        else:
            lines[("events", len(events))] = number
            events.append(value)
    if header is None:
        raise SessionError(source, "the file is empty; expected a header line and events")
    if "events" in header:
        raise SessionError(
            source, "events go one per line after the header, not inside it", line=lines[()]
        )
    return {**header, "events": events}, lines


def _fail(
    source: str, lines: Mapping[tuple[str | int, ...], int], path: tuple[str | int, ...], msg: str
) -> SessionError:
    line = None
    for n in range(len(path), -1, -1):
        if path[:n] in lines:
            line = lines[path[:n]]
            break
    return SessionError(source, msg, line=line, field=path_text(path))


def check_values(data: Any, source: str, lines: Mapping[tuple[str | int, ...], int]) -> None:
    """What the schema cannot say: one text field's size, lone surrogates, huge integers."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if len(value) > MAX_FIELD_CHARS:
                raise _fail(
                    source,
                    lines,
                    path,
                    f"the text is {len(value):,} characters; one field may hold at most "
                    f"{MAX_FIELD_CHARS:,}",
                )
            if not value.isascii() and _SURROGATE.search(value):
                raise _fail(
                    source,
                    lines,
                    path,
                    "a lone surrogate (\\ud800-\\udfff) is not text; expected UTF-8",
                )
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(k, str) and not k.isascii() and _SURROGATE.search(k):
                    raise _fail(source, lines, path, "a key holds a lone surrogate; expected UTF-8")
                stack.append((v, (*path, k)))
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
            raise _fail(source, lines, path, f"expected an integer of at most {MAX_INT:,}")


def check_events(
    data: Mapping[str, Any], source: str, lines: Mapping[tuple[str | int, ...], int]
) -> None:
    """Duplicate tool names and call depth."""
    names: set[str] = set()
    for i, tool in enumerate(data["session"].get("tools", [])):
        if tool["name"] in names:
            raise _fail(source, lines, ("session", "tools", i, "name"), "duplicate tool name")
        names.add(tool["name"])
    depth = 0
    for i, event in enumerate(data["events"]):
        kind = event["type"]
        if kind == "enter":
            depth += 1
            if depth > MAX_CALL_DEPTH:
                raise _fail(
                    source,
                    lines,
                    ("events", i),
                    f"calls nest deeper than {MAX_CALL_DEPTH:,}; expected an agent's call stack",
                )
        elif kind == "exit":
            depth -= 1


def validate(data: Any, source: str, lines: Mapping[tuple[str | int, ...], int]) -> None:
    if not isinstance(data, dict):
        raise SessionError(
            source,
            f"expected a mapping with format, session and events, found {kind_of(data)}",
            line=1,
        )
    if data.get("format") != FORMAT and "format" in data:
        raise SessionError(
            source,
            f"expected {json.dumps(FORMAT)}, found {kind_of(data.get('format'))}",
            line=lines.get(("format",)),
            field="format",
        )
    check_values(data, source, lines)
    try:
        validation._fast_check()(data)
    except fastjsonschema.JsonSchemaException:
        validation._explain(data, source, lines)
    check_events(data, source, lines)


def accepts(data: Any) -> bool:
    """Whether :func:`validate` passes ``data`` (without wording the error: quicker)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return False
    try:
        check_values(data, "", {})
    except SessionError:
        return False
    try:
        validation._fast_check()(data)
    except fastjsonschema.JsonSchemaException:
        if not validation._validator().is_valid(data):
            return False
    try:
        check_events(data, "", {})
    except SessionError:
        return False
    return True


def _event(
    raw: Mapping[str, Any], index: int, line: int | None, source: str, previous: Previous = None
) -> Event:
    at = _time(raw["at"], source, line, f"events[{index}].at")
    kind = raw["type"]
    base: dict[str, Any] = {"index": index, "at": at, "line": line}
    if kind == "enter":
        expose = raw.get("expose")
        return Enter(
            **base,
            function=raw["function"],
            input=raw.get("input"),
            dispatched_by=raw.get("dispatched_by"),
            doc=raw.get("doc"),
            expose=Expose(expose) if expose else None,
            id=raw.get("id"),
            parent=raw.get("parent"),
            retry_of=raw.get("retry_of"),
        )
    if kind == "exit":
        return Exit(
            **base,
            function=raw["function"],
            output=raw.get("output"),
            key_output=raw.get("key_output"),
            id=raw.get("id"),
            outcome=Outcome(raw.get("outcome", "ok")),
            error=raw.get("error"),
        )
    if kind == "llm":
        c = raw.get("contract")
        u = raw.get("usage")
        return LLMCall(
            **base,
            label=raw.get("label"),
            input=raw.get("input", ""),
            output=raw.get("output", ""),
            position=raw.get("position"),
            contract=OutputContract(
                kind=ContractKind(c["kind"]),
                artifact=c.get("artifact"),
                consumer=c.get("consumer"),
                next_function=c.get("next_function"),
                param=c.get("param"),
            )
            if c
            else None,
            output_schema=raw.get("output_schema"),
            memory_prefetch=raw.get("memory_prefetch"),
            usage=Usage(**u) if u is not None else None,
            request=_recorded(raw["request"], previous, source, line, f"events[{index}].request")
            if "request" in raw
            else None,
            settings=settings_from(
                raw.get("settings"),
                lambda t: _time(t, source, line, f"events[{index}].settings.response_started"),
            ),
            diagnostic=diagnostic_from(raw.get("diagnostic")),
            ttl=raw.get("ttl"),
            call=raw.get("call"),
            attachments=tuple(
                Attachment(
                    name=a["name"],
                    media_type=a.get("media_type", "text/plain"),
                    text=a.get("text"),
                    tokens=a.get("tokens"),
                )
                for a in raw.get("attachments", ())
            ),
        )
    if kind == "tool":
        return ToolCall(
            **base,
            name=raw["name"],
            input=raw.get("input"),
            output=raw.get("output"),
            call=raw.get("call"),
        )
    state = raw.get("memory_state")
    return Change(
        **base,
        memory_state=MemoryState(state) if state else None,
        add_tools=tuple(_tool(t) for t in raw.get("add_tools", [])),
        remove_tools=tuple(raw.get("remove_tools", [])),
        provider=raw.get("provider"),
        model=raw.get("model"),
        channel=raw.get("channel"),
    )


def parse_session(text: str, source: str, *, jsonl: bool) -> Session:
    """``loader.parse_session`` on the reference reader, validator and builder."""
    lines: Lines
    try:
        if jsonl:
            data, lines = read_jsonl(text, source)
        else:
            data, lines = reader.read_one_line_json(text) or reader.read_yaml(text, source)
        validate(data, source, lines)
    except RecursionError:
        raise SessionError(source, "values are nested too deeply to read") from None
    raw_session = data["session"]
    zone = raw_session.get("environment", {}).get("timezone")
    if zone is not None:
        loader._check_zone(zone, source, lines.get(("session", "environment", "timezone")))
    functions = {
        name: FunctionSpec(
            doc=spec.get("doc", ""),
            expose=Expose(spec["expose"]) if "expose" in spec else None,
            render_range=loader._range(spec.get("render_range")),
        )
        for name, spec in raw_session.get("functions", {}).items()
    }
    events: list[Event] = []
    previous: Previous = None
    for i, raw in enumerate(data["events"]):
        event = _event(raw, i, lines.get(("events", i)), source, previous)
        if isinstance(event, LLMCall) and event.request is not None:
            previous = (i, event.request)
        events.append(event)
    return Session(
        source=source,
        id=raw_session["id"],
        title=raw_session.get("title", raw_session["id"]),
        profile=loader._profile(raw_session),
        functions=functions,
        events=tuple(events),
    )
