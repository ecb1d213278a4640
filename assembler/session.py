"""Recorded sessions: load, validate and type them.

One schema (``assembler/data/session.schema.json``, format
``context-session/1``) in two spellings: a YAML document for people, JSON Lines
for large files (the header object on line 1, one event per line after it).
Every error names the file, the line where it can, the field path, and what was
expected and found.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import fastjsonschema
import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from assembler.calltree import Expose, RenderRange
from assembler.context import (
    Agent,
    Bindings,
    ContractKind,
    Environment,
    Memory,
    MemoryState,
    OutputContract,
    Profile,
    Skill,
    Tool,
    WorkspaceFile,
)

FORMAT = "context-session/1"
MAX_BYTES = 50 * 1024 * 1024


class SessionError(ValueError):
    """A session file is malformed. ``str()`` is one line naming file, line and field."""

    def __init__(
        self, source: str, message: str, *, line: int | None = None, field: str | None = None
    ) -> None:
        self.source = source
        self.line = line
        self.field = field
        message = " ".join(message.split())  # always one line
        self.message = message
        where = source if line is None else f"{source}:{line}"
        at = f" {field}:" if field else ""
        super().__init__(f"{where}:{at} {message}")


def format_time(at: datetime) -> str:
    """A timestamp as the session format writes it: ISO 8601, ``Z`` for UTC."""
    return at.isoformat().replace("+00:00", "Z")


# --- typed values --------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    """Measured usage of a real request (tokens)."""

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0


@dataclass(frozen=True)
class FunctionSpec:
    doc: str = ""
    expose: Expose | None = None
    render_range: RenderRange | None = None


@dataclass(frozen=True)
class Event:
    index: int
    at: datetime
    line: int | None

    @property
    def field(self) -> str:
        return f"events[{self.index}]"


@dataclass(frozen=True)
class Enter(Event):
    function: str = ""
    input: str | None = None
    dispatched_by: str | None = None
    doc: str | None = None
    expose: Expose | None = None


@dataclass(frozen=True)
class Exit(Event):
    function: str = ""
    output: str | None = None
    key_output: str | None = None


@dataclass(frozen=True)
class RecordedBlock:
    """A block of a request recorded verbatim (imported logs and transcripts)."""

    section: str  # tools | system | messages
    name: str
    text: str = ""
    role: str = "user"
    layer: str | None = None
    tokens: int | None = None
    breakpoint: bool = False


@dataclass(frozen=True)
class LLMCall(Event):
    label: str | None = None
    input: str = ""
    output: str = ""
    position: str | None = None
    contract: OutputContract | None = None
    output_schema: dict[str, Any] | None = None
    memory_prefetch: str | None = None
    usage: Usage | None = None
    request: tuple[RecordedBlock, ...] | None = None


@dataclass(frozen=True)
class ToolCall(Event):
    name: str = ""
    input: str | None = None
    output: str | None = None


@dataclass(frozen=True)
class Change(Event):
    memory_state: MemoryState | None = None
    add_tools: tuple[Tool, ...] = ()
    remove_tools: tuple[str, ...] = ()
    provider: str | None = None
    model: str | None = None
    channel: str | None = None


@dataclass(frozen=True)
class Session:
    source: str
    id: str
    title: str
    profile: Profile
    functions: Mapping[str, FunctionSpec] = field(default_factory=dict)
    events: tuple[Event, ...] = ()


# --- reading ------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as text: the schema checks their form."""


class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The same constructors and resolvers on libyaml's parser (about 6x faster on
    a large session).

    On any error the pure-Python loader reads the text again, so messages and
    lines are those it gives. libyaml is a little more lenient (it accepts a tab
    after a colon, for one); a session either reader accepts is then validated
    against the schema like any other.
    """


_Loader.yaml_implicit_resolvers = _FastLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


MAX_VALUES = 2_000_000


def _line_map(node: yaml.Node, source: str) -> dict[tuple[str | int, ...], int]:
    """Field path → 1-based line, and checks YAML itself would let through.

    Duplicate keys are refused. An alias is walked once; its expanded size is
    still counted, so nested aliases cannot expand into a memory bomb.
    """
    lines: dict[tuple[str | int, ...], int] = {}
    sizes: dict[int, int] = {}
    total = 0

    def walk(n: yaml.Node, path: tuple[str | int, ...]) -> int:
        nonlocal total
        if id(n) in sizes:  # an alias: already walked
            size = sizes[id(n)]
        else:
            lines[path] = n.start_mark.line + 1
            size = 1
            if isinstance(n, yaml.MappingNode):
                seen: set[str] = set()
                for k, v in n.value:
                    key = str(k.value)
                    if key in seen:
                        raise SessionError(
                            source,
                            "duplicate key",
                            line=k.start_mark.line + 1,
                            field=_path_text((*path, key)),
                        )
                    seen.add(key)
                    size += walk(v, (*path, key))
            elif isinstance(n, yaml.SequenceNode):
                for i, v in enumerate(n.value):
                    size += walk(v, (*path, i))
            sizes[id(n)] = size
            return size
        total += size
        if total > MAX_VALUES:
            raise SessionError(
                source,
                f"aliases expand to more than {MAX_VALUES:,} values",
                line=n.start_mark.line + 1,
                field=_path_text(path),
            )
        return size

    walk(node, ())
    return lines


def _path_text(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part.isidentifier():  # odd keys stay readable and on one line
            out += f"[{json.dumps(part)}]"
        else:
            out += f".{part}" if out else part
    return out or "(document)"


def _read_yaml(text: str, source: str) -> tuple[Any, dict[tuple[str | int, ...], int]]:
    try:
        return _compose(_FastLoader(text), source)
    except (yaml.YAMLError, UnicodeError):
        pass  # read again below for the precise message (libyaml cannot encode a lone surrogate)
    try:
        return _compose(_Loader(text), source)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise SessionError(source, f"not valid YAML: {exc.problem or exc}", line=line) from None
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise SessionError(
            source, f"not valid YAML: character #x{exc.character:04x} is not allowed", line=line
        ) from None
    except yaml.YAMLError as exc:
        raise SessionError(source, f"not valid YAML: {exc}") from None


def _compose(loader: Any, source: str) -> tuple[Any, dict[tuple[str | int, ...], int]]:
    try:
        node = loader.get_single_node()
        if node is None:
            raise SessionError(source, "the file is empty; expected a session document")
        lines = _line_map(node, source)
        return loader.construct_document(node), lines
    finally:
        loader.dispose()


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):
        raise _Duplicate
    return out


def _no_constant(name: str) -> Any:
    raise _Duplicate  # NaN / Infinity: not JSON; let the YAML reader word it


class _LineOne(Mapping[tuple[str | int, ...], int]):
    """Every field of a one-line document is on line 1."""

    def __getitem__(self, key: tuple[str | int, ...]) -> int:
        return 1

    def __contains__(self, key: object) -> bool:
        return True

    def __iter__(self) -> Iterator[tuple[str | int, ...]]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _read_one_line_json(text: str) -> tuple[Any, Mapping[tuple[str | int, ...], int]] | None:
    """A session written as JSON on one line, read by :mod:`json` (6x faster than
    libyaml on a large one): every line number is 1. Anything else, including
    JSON the YAML reader would refuse or word differently (duplicate keys, NaN),
    is None and goes to the YAML reader."""
    body = text.strip()
    if not body.startswith("{") or "\n" in body or "\r" in body:
        return None
    try:
        data = json.loads(body, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    return data, _LineOne()


def _read_jsonl(text: str, source: str) -> tuple[Any, dict[tuple[str | int, ...], int]]:
    header: Any = None
    events: list[Any] = []
    lines: dict[tuple[str | int, ...], int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SessionError(source, f"not valid JSON: {exc.msg}", line=number) from None
        if header is None:
            if not isinstance(value, dict):
                raise SessionError(
                    source,
                    f"expected the header object {{format, session}}, found {_kind(value)}",
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


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {json.dumps(shown)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


@cache
def schema() -> dict[str, Any]:
    """The published JSON Schema of the session format."""
    text = resources.files("assembler.data").joinpath("session.schema.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(schema())


@cache
def _fast_check() -> Callable[[Any], Any]:
    """A compiled validator for the common case (valid input): ~15x faster.

    The identifiers are dropped so it never tries to resolve anything remotely;
    on failure the reference validator runs to produce the precise error.
    """
    local = {k: v for k, v in schema().items() if k not in ("$id", "$schema")}
    check: Callable[[Any], Any] = fastjsonschema.compile(local)
    return check


_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
    "null": "null",
}


def _expected(error: ValidationError) -> str:
    v, s = error.validator, cast(Any, error.validator_value)
    if v == "type":
        names = s if isinstance(s, list) else [s]
        return " or ".join(_TYPE_NAMES.get(str(n), str(n)) for n in names)
    if v == "enum":
        return "one of " + ", ".join(json.dumps(x) for x in s)
    if v == "const":
        return json.dumps(s)
    if v == "pattern":
        if "\\d{4}-" in s:
            return "an ISO 8601 time with a timezone, like 2026-06-24T14:30:00Z"
        return f"text matching {s}"
    if v in ("minimum", "exclusiveMinimum"):
        return f"a number ≥ {s}"
    if v == "minLength":
        return "a non-empty string"
    if v == "maxLength":
        return f"at most {s} characters"
    if v == "minProperties":
        return (
            "at least one change (memory_state, add_tools, remove_tools, provider, model, channel)"
        )
    return str(error.message)


def _choose(errors: list[ValidationError]) -> ValidationError:
    # The deepest error is the most specific; required/additional come first at a tie.
    return max(
        errors,
        key=lambda e: (len(e.absolute_path), e.validator in ("required", "additionalProperties")),
    )


def _validate(data: Any, source: str, lines: Mapping[tuple[str | int, ...], int]) -> None:
    if not isinstance(data, dict):
        raise SessionError(
            source,
            f"expected a mapping with format, session and events, found {_kind(data)}",
            line=1,
        )
    if data.get("format") != FORMAT and "format" in data:
        raise SessionError(
            source,
            f"expected {json.dumps(FORMAT)}, found {_kind(data.get('format'))}",
            line=lines.get(("format",)),
            field="format",
        )
    try:
        _fast_check()(data)
        return
    except fastjsonschema.JsonSchemaException:
        pass
    errors = list(_validator().iter_errors(data))
    if not errors:
        return
    error = _choose(errors)
    path = tuple(error.absolute_path)
    line = None
    for n in range(len(path), -1, -1):
        if path[:n] in lines:
            line = lines[path[:n]]
            break
    if error.validator == "required":
        missing = next(
            (
                k
                for k in cast(list[str], error.validator_value)
                if not isinstance(error.instance, dict) or k not in error.instance
            ),
            "?",
        )
        raise SessionError(
            source, "required field is missing", line=line, field=_path_text((*path, missing))
        )
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(cast(dict[str, Any], error.schema).get("properties", {}))
        extra = sorted(k for k in error.instance if k not in allowed)
        key = extra[0] if extra else "?"
        line = lines.get((*path, key), line)
        raise SessionError(
            source,
            f"unknown field; expected one of {', '.join(allowed)}",
            line=line,
            field=_path_text((*path, key)),
        )
    raise SessionError(
        source,
        f"expected {_expected(error)}, found {_kind(error.instance)}",
        line=line,
        field=_path_text(path),
    )


# --- typing -------------------------------------------------------------------


def _time(text: str, source: str, line: int | None, field: str) -> datetime:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise SessionError(
            source, f"expected a real date and time, found {_kind(text)}", line=line, field=field
        ) from None


def _tool(raw: Mapping[str, Any]) -> Tool:
    return Tool(raw["name"], raw["description"], raw["input_schema"], raw.get("source"))


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
        tools=tuple(_tool(t) for t in raw.get("tools", [])),
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
    except (ZoneInfoNotFoundError, ValueError):
        raise SessionError(
            source,
            f"expected an IANA time zone such as Europe/Berlin or UTC, found {_kind(zone)}",
            line=line,
            field="session.environment.timezone",
        ) from None


#: The request of the latest earlier llm event that has one: (event index, blocks).
Previous = tuple[int, tuple[RecordedBlock, ...]] | None


def _recorded(
    raw: Mapping[str, Any], previous: Previous, source: str, line: int | None, where: str
) -> tuple[RecordedBlock, ...]:
    """A recorded request; ``keep: N`` starts it with the previous request's first N blocks.

    Kept blocks come without their cache markers: ``breakpoints`` lists the ones
    that carry a marker in this request. A history that only grows is thus
    written once, not again with every request.
    """
    keep = raw.get("keep", 0)
    kept: tuple[RecordedBlock, ...] = ()
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
        marks = raw.get("breakpoints", [])
        for k, mark in enumerate(marks):
            if mark >= keep:
                raise SessionError(
                    source,
                    f"expected the index of a kept block (0 to {keep - 1}), found {mark}",
                    line=line,
                    field=f"{where}.breakpoints[{k}]",
                )
        marked = set(marks)
        kept = tuple(
            b if b.breakpoint == (k in marked) else replace(b, breakpoint=k in marked)
            for k, b in enumerate(before[:keep])
        )
    elif "breakpoints" in raw:
        raise SessionError(
            source,
            "breakpoints marks kept blocks; it goes with keep",
            line=line,
            field=f"{where}.breakpoints",
        )
    if not keep and not raw["blocks"]:
        raise SessionError(
            source,
            "expected at least one block (or keep, to start from the previous request)",
            line=line,
            field=f"{where}.blocks",
        )
    counts: dict[str, int] = {}
    for b in kept:
        counts[b.section] = counts.get(b.section, -1) + 1
    blocks = list(kept)
    for b in raw["blocks"]:
        n = counts[b["section"]] = counts.get(b["section"], -1) + 1
        blocks.append(
            RecordedBlock(
                section=b["section"],
                name=b.get("name", f"{b['section']}[{n}]"),
                text=b.get("text", ""),
                role=b.get("role", "user"),
                layer=b.get("layer"),
                tokens=b.get("tokens"),
                breakpoint=b.get("breakpoint", False),
            )
        )
    return tuple(blocks)


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
        )
    if kind == "exit":
        return Exit(
            **base,
            function=raw["function"],
            output=raw.get("output"),
            key_output=raw.get("key_output"),
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
        )
    if kind == "tool":
        return ToolCall(**base, name=raw["name"], input=raw.get("input"), output=raw.get("output"))
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


def parse_session(text: str, source: str = "<session>", *, jsonl: bool | None = None) -> Session:
    """Parse and validate session text. ``jsonl`` defaults to sniffing the first line."""
    if jsonl is None:
        first = text.lstrip()[:1]
        jsonl = source.endswith(".jsonl") or (first == "{" and "\n{" in text.strip())
    lines: Mapping[tuple[str | int, ...], int]
    try:
        if jsonl:
            data, lines = _read_jsonl(text, source)
        else:
            data, lines = _read_one_line_json(text) or _read_yaml(text, source)
        _validate(data, source, lines)
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
        profile=_profile(raw_session),
        functions=functions,
        events=tuple(events),
    )


def load_session(path: str | Path, *, max_bytes: int = MAX_BYTES) -> Session:
    """Read a ``.yaml`` / ``.yml`` / ``.json`` / ``.jsonl`` session file."""
    p = Path(path)
    source = str(path)
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise SessionError(source, f"the file is {size:,} bytes; the limit is {max_bytes:,}")
        raw = p.read_bytes()
    except OSError as exc:
        raise SessionError(source, f"cannot read the file: {exc.strerror or exc}") from None
    return parse_bytes(raw, source)


def parse_bytes(raw: bytes, source: str) -> Session:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionError(source, f"not UTF-8 text (byte {exc.start})") from None
    return parse_session(text.removeprefix("\ufeff"), source)


def iter_events(session: Session) -> Iterator[Event]:
    return iter(session.events)
