"""Load a session: read, validate, and build the typed values."""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from assembler.collector import collector_paused
from assembler.design.calltree import Expose, RenderRange
from assembler.design.context import (
    Agent,
    Attachment,
    Bindings,
    Environment,
    Memory,
    MemoryState,
    Profile,
    Skill,
    WorkspaceFile,
)
from assembler.limits import ReadRefused, read_capped
from assembler.sessions.event_values import (
    BUILDERS,
    Times,
    at_value,
    change_event,
    contract_value,
    time_value,
    tool_value,
)
from assembler.sessions.model import (
    MAX_BYTES,
    Event,
    FunctionSpec,
    LLMCall,
    RecordedBlock,
    RecordedRequest,
    Session,
    SessionError,
    Usage,
    built,
    kept_counts,
)
from assembler.sessions.reader import kind_of, read_jsonl, read_one_line_json, read_yaml
from assembler.sessions.request_settings import diagnostic_from, settings_from
from assembler.sessions.validation import validate

# --- typing -------------------------------------------------------------------


def _range(raw: Mapping[str, Any] | None) -> RenderRange | None:
    if raw is None:
        return None
    return RenderRange(callers=raw.get("callers"), subcalls=raw.get("subcalls", -1))


def _profile(raw: Mapping[str, Any]) -> Profile:
    agent = raw["agent"]
    env = raw.get("environment", {})
    mem = raw.get("memory", {})
    bindings = raw.get("bindings")
    return Profile(
        agent=Agent(
            name=agent["name"],
            id=agent.get("id", "main"),
            description=agent.get("description", ""),
            inline_prompt=agent.get("inline_prompt"),
        ),
        provider=raw["provider"],
        model=raw["model"],
        channel=raw.get("channel", "webui"),
        environment=Environment(**env),
        skills=tuple(Skill(s["name"], s.get("description", "")) for s in raw.get("skills", [])),
        tools=tuple(tool_value(t) for t in raw.get("tools", [])),
        deferred_tools=tuple(raw.get("deferred_tools", [])),
        computer_use=raw.get("computer_use", False),
        memory=Memory(
            backend=mem.get("backend", "none"),
            state=MemoryState(mem.get("state", "healthy")),
            subsystem=mem.get("subsystem", "the background memory writer"),
            workspace=mem.get("workspace"),
            budget_tokens=mem.get("budget_tokens"),
            global_summary=mem.get("global", ""),
            project=mem.get("project", ""),
        ),
        workspace_files=tuple(
            WorkspaceFile(f["path"], f["content"]) for f in raw.get("workspace_files", [])
        ),
        user_profile=raw.get("user_profile", ""),
        bindings=Bindings(
            session_id=bindings["session_id"],
            model=bindings["model"],
            thinking=bindings.get("thinking", "off"),
            tier=bindings.get("tier", "default"),
        )
        if bindings
        else None,
    )


def _check_zone(zone: str, source: str, line: int | None) -> None:
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name part too long
        raise SessionError(
            source,
            f"expected an IANA time zone such as Europe/Berlin or UTC, found {kind_of(zone)}",
            line=line,
            field="session.environment.timezone",
        ) from None


#: The request of the latest earlier llm event that has one: (event index, request).
Previous = tuple[int, RecordedRequest] | None


def _kept_marks(
    raw: Mapping[str, Any],
    name: str,
    allowed: Container[int],
    expected: str,
    source: str,
    line: int | None,
    where: str,
) -> frozenset[int]:
    """The kept blocks a request's ``name`` list marks, each one of ``allowed``."""
    for k, mark in enumerate(raw.get(name, [])):
        if mark not in allowed:
            raise SessionError(
                source,
                f"expected {expected}, found {mark}",
                line=line,
                field=f"{where}.{name}[{k}]",
            )
    return frozenset(raw.get(name, []))


#: The recorded block's fields that have a default: a block read is these and its own keys.
_BLOCK_DEFAULTS: dict[str, Any] = {
    f.name: f.default
    for f in dataclasses.fields(RecordedBlock)
    if f.default is not dataclasses.MISSING
}


def _recorded(
    raw: Mapping[str, Any], previous: Previous, source: str, line: int | None, where: str
) -> RecordedRequest:
    """A recorded request; ``keep: N`` starts it with the previous request's first N blocks.

    Kept blocks come without their cache markers: ``breakpoints`` lists the ones
    that carry a marker in this request. A history that only grows is thus
    written once, not again with every request, and read as shared, not copied.
    """
    keep = raw.get("keep", 0)
    before: RecordedRequest | None = None
    marks: frozenset[int] = frozenset()
    hours: frozenset[int] = frozenset()
    if keep:
        if previous is None:
            raise SessionError(
                source,
                "no earlier llm event has a request to keep blocks from",
                line=line,
                field=f"{where}.keep",
            )
        at, before = previous
        if keep > len(before):
            raise SessionError(
                source,
                f"expected at most {len(before)}, the number of blocks in the request of "
                f"events[{at}]; found {keep}",
                line=line,
                field=f"{where}.keep",
            )
        kept = f"the index of a kept block (0 to {keep - 1})"
        marks = _kept_marks(raw, "breakpoints", range(keep), kept, source, line, where)
        listed = "the index of a kept block listed in breakpoints"
        hours = _kept_marks(raw, "breakpoints_1h", marks, listed, source, line, where)
    else:
        for name in ("breakpoints", "breakpoints_1h"):
            if name in raw:
                raise SessionError(
                    source,
                    f"{name} marks kept blocks; it goes with keep",
                    line=line,
                    field=f"{where}.{name}",
                )
    if not keep and not raw["blocks"]:
        raise SessionError(
            source,
            "expected at least one block (or keep, to start from the previous request)",
            line=line,
            field=f"{where}.blocks",
        )
    start = kept_counts(before, keep)
    counts = dict(start)
    tail: list[RecordedBlock] = []
    for i, b in enumerate(raw["blocks"]):
        section = b["section"]
        n = counts.get(section, 0)
        counts[section] = n + 1
        if "ttl" in b and not b.get("breakpoint"):
            raise SessionError(
                source,
                "ttl is the lifetime of the block's cache marker; it goes with breakpoint: true",
                line=line,
                field=f"{where}.blocks[{i}].ttl",
            )
        fields = {**_BLOCK_DEFAULTS, **b}  # validated: a block's keys are its fields
        if "name" not in b:
            fields["name"] = f"{section}[{n}]"
        tail.append(built(RecordedBlock, fields))
    return RecordedRequest(tuple(tail), before, keep, marks, hours, start)


def _llm(
    raw: dict[str, Any],
    index: int,
    at: datetime,
    line: int | None,
    source: str,
    previous: Previous,
    times: Times,
) -> LLMCall:
    get = raw.get
    u = get("usage")
    request = get("request")
    settings = get("settings")
    attachments = get("attachments")
    return built(
        LLMCall,
        {
            "index": index,
            "at": at,
            "line": line,
            "label": get("label"),
            "input": get("input", ""),
            "output": get("output", ""),
            "position": get("position"),
            "contract": contract_value(get("contract")),
            "output_schema": get("output_schema"),
            "memory_prefetch": get("memory_prefetch"),
            "usage": Usage(**u) if u is not None else None,
            "request": None
            if request is None
            else _recorded(request, previous, source, line, f"events[{index}].request"),
            "settings": None
            if settings is None
            else settings_from(
                settings,
                lambda t: at_value(
                    t, times, source, line, f"events[{index}].settings.response_started"
                ),
            ),
            "diagnostic": diagnostic_from(get("diagnostic")),
            "ttl": get("ttl"),
            "call": get("call"),
            "attachments": ()
            if not attachments
            else tuple(
                Attachment(
                    name=a["name"],
                    media_type=a.get("media_type", "text/plain"),
                    text=a.get("text"),
                    tokens=a.get("tokens"),
                )
                for a in attachments
            ),
        },
    )


def _events(
    raws: list[dict[str, Any]], lines: Mapping[tuple[str | int, ...], int], source: str
) -> tuple[Event, ...]:
    """The typed events, in order (validated already: only times and ``keep`` can fail)."""
    events: list[Event] = []
    append = events.append
    previous: Previous = None
    times: Times = {}
    line_of = lines.get
    simple = BUILDERS
    for i, raw in enumerate(raws):
        line = line_of(("events", i))
        text = raw["at"]
        at = times.get(text)
        if at is None:
            at = times[text] = time_value(text, source, line, f"events[{i}].at")
        kind = raw["type"]
        make = simple.get(kind)
        if make is not None:
            append(make(raw, i, at, line))
        elif kind == "llm":
            call = _llm(raw, i, at, line, source, previous, times)
            if call.request is not None:
                previous = (i, call.request)
            append(call)
        else:
            append(change_event(raw, i, at, line))
    return tuple(events)


def parse_session(text: str, source: str = "<session>", *, jsonl: bool | None = None) -> Session:
    """Parse and validate session text. ``jsonl`` defaults to sniffing the first line."""
    with collector_paused():  # long-lived values, no cycles: nothing for it to find
        return _parse_session(text, source, jsonl)


def _parse_session(text: str, source: str, jsonl: bool | None) -> Session:
    if jsonl is None:
        first = text.lstrip()[:1]
        jsonl = source.endswith(".jsonl") or (first == "{" and "\n{" in text.strip())
    lines: Mapping[tuple[str | int, ...], int]
    try:
        if jsonl:
            data, lines = read_jsonl(text, source)
        else:
            data, lines = read_one_line_json(text) or read_yaml(text, source)
    except RecursionError:
        raise SessionError(source, "values are nested too deeply to read") from None
    return _session(data, lines, source)


def session_from_document(data: Mapping[str, Any], source: str) -> Session:
    """The session a JSON Lines file of ``data`` (``generator.jsonl_lines``) reads as,
    checked as the loader checks the file, without writing or reading it: what the loader
    accepts is JSON's own values, which a JSON round trip gives back unchanged, and line
    numbers are those of the file (the header, then an event a line)."""
    doc = {"format": data.get("format"), "session": data.get("session"), "events": data["events"]}
    lines: dict[tuple[str | int, ...], int] = {(): 1, ("format",): 1, ("session",): 1}
    for i in range(len(doc["events"])):
        lines["events", i] = i + 2
    with collector_paused():
        return _session(doc, lines, source)


def _session(data: Any, lines: Mapping[tuple[str | int, ...], int], source: str) -> Session:
    try:
        validate(data, source, lines)
    except RecursionError:
        raise SessionError(source, "values are nested too deeply to read") from None
    raw_session = data["session"]
    zone = raw_session.get("environment", {}).get("timezone")
    if zone is not None:
        _check_zone(zone, source, lines.get(("session", "environment", "timezone")))
    functions = {
        name: FunctionSpec(
            doc=spec.get("doc", ""),
            expose=Expose(spec["expose"]) if "expose" in spec else None,
            render_range=_range(spec.get("render_range")),
        )
        for name, spec in raw_session.get("functions", {}).items()
    }
    return Session(
        source=source,
        id=raw_session["id"],
        title=raw_session.get("title", raw_session["id"]),
        profile=_profile(raw_session),
        functions=functions,
        events=_events(data["events"], lines, source),
        token_scale={k: float(v) for k, v in raw_session.get("token_scale", {}).items()},
    )


#: Blocks an analysis reads over all steps. Each step reads its whole request, kept
#: blocks included, and keeps a record per block: measured, 8 µs and 150 bytes a
#: block (a 3,000-request chain, 4.5 million blocks: 38 s, 676 MB). Reading one
#: step (``steps``, ``render``) costs only that request, so this bounds analyses.
MAX_ANALYSED_BLOCKS = 2_000_000


def check_analysis_work(session: Session) -> None:
    """Refuse a session whose analysis would read more than :data:`MAX_ANALYSED_BLOCKS`."""
    total = 0
    for event in session.events:
        if isinstance(event, LLMCall) and event.request is not None:
            total += len(event.request)
            if total > MAX_ANALYSED_BLOCKS:
                raise SessionError(
                    session.source,
                    f"an analysis reads every request whole, more than {MAX_ANALYSED_BLOCKS:,} "
                    "blocks in all once keep is resolved; split the session (steps and render "
                    "read one request at a time)",
                    line=event.line,
                    field=f"{event.field}.request",
                )


def load_session(path: str | Path, *, max_bytes: int = MAX_BYTES) -> Session:
    """Read a ``.yaml`` / ``.yml`` / ``.json`` / ``.jsonl`` session file."""
    source = str(path)
    try:
        raw = read_capped(path, max_bytes)
    except ReadRefused as exc:
        raise SessionError(source, str(exc)) from None
    return parse_bytes(raw, source)


def parse_bytes(raw: bytes, source: str) -> Session:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionError(source, f"not UTF-8 text (byte {exc.start})") from None
    return parse_session(text.removeprefix("\ufeff"), source)


def iter_events(session: Session) -> Iterator[Event]:
    return iter(session.events)
