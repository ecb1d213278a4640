"""The quick validation path accepts and refuses exactly what the reference does.

``reference_loader`` holds the reader, validator and event builder as they were
before the quick path. Random documents, mostly valid with a few fields bent out
of shape (a wrong type, a missing or unknown field, a lone surrogate, a float for
an integer, a time with a trailing newline or non-ASCII digits), must give the
same outcome through both: the same one-line error, or equal sessions built of
equal values.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from typing import Any

import pytest
import reference_loader
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from assembler.sessions import fast_validation, validation
from assembler.sessions.loader import parse_session
from assembler.sessions.model import FORMAT, Session, SessionError

TIMES = st.sampled_from(
    [
        "2026-03-02T09:00:12Z",
        "2026-03-02T09:00:12.5+02:00",
        "2026-03-02T09:00:12.123456789Z",
        "2026-02-30T00:00:00Z",
        "0002-01-01T00:30:00+01:00",
        "0003-01-01T00:30:00+01:00",
        "9997-12-31T23:00:00-05:00",
        "9998-12-31T23:00:00-05:00",
        "2026-03-02T09:00:12+24:00",
        "2026-03-02T09:00:12Z\n",
        "٢٠٢٦-03-02T09:00:12Z",
        "2026-03-02 09:00:12Z",
    ]
)
TEXT = st.text(max_size=6)
NAME = st.text(min_size=1, max_size=6)
COUNT = st.integers(0, 5)
#: Values at or past a boundary somewhere in the schema or the value checks (one
#: field's length is cut to FIELD_CHARS below, so that a long text stays small).
FIELD_CHARS = 300
ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    1,
    -1,
    -2,
    2**53,
    2**53 - 1,
    1.0,
    1.5,
    "",
    "x" * 200,
    "x" * 201,
    "x" * (FIELD_CHARS + 1),
    "\ud800",
    "é",
    "x\n",
    "ok",
    "mcp:x",
    "2026-03-02T09:00:12Z",
    "2026-03-02T09:00:12Z\n",
    [],
    ["x"],
    [-1],
    [2**53],
    {},
    {"a": 1},
    {"k\udc00": 1},
    {"n": 2**60},
]
ODD = st.sampled_from(ODD_VALUES)


def _enum(*values: str) -> st.SearchStrategy[str]:
    return st.sampled_from(values)


BLOCK = st.fixed_dictionaries(
    {"section": _enum("tools", "system", "messages")},
    optional={
        "name": TEXT,
        "role": _enum("user", "assistant"),
        "layer": _enum("L0", "L1", "L2"),
        "text": TEXT,
        "tokens": COUNT,
        "breakpoint": st.booleans(),
        "inferred": st.booleans(),
        "ttl": _enum("5m", "1h"),
    },
)
TOOL = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["read", "a.b:c-d", "bad name", "x\n"]),
        "description": TEXT,
        "input_schema": st.sampled_from([{}, {"type": "object"}, {"a": [1, None, 2.5]}]),
    },
    optional={"source": st.one_of(st.none(), TEXT)},
)

# Per event type: required fields, optional fields.
EVENT_FIELDS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "enter": (
        {"function": NAME},
        {
            "input": TEXT,
            "dispatched_by": NAME,
            "doc": TEXT,
            "expose": _enum("io", "llm", "full", "hidden"),
            "id": NAME,
            "parent": NAME,
            "retry_of": NAME,
        },
    ),
    "exit": (
        {"function": NAME},
        {
            "output": TEXT,
            "key_output": TEXT,
            "id": NAME,
            "outcome": _enum("ok", "failed", "abandoned"),
            "error": TEXT,
        },
    ),
    "llm": (
        {},
        {
            "label": TEXT,
            "input": TEXT,
            "output": TEXT,
            "position": TEXT,
            "contract": st.fixed_dictionaries(
                {"kind": _enum("decision", "artifact", "next")},
                optional={"artifact": TEXT, "next_function": TEXT, "param": TEXT},
            ),
            "output_schema": st.sampled_from([{}, {"type": "object", "n": [1, 2.5, None]}]),
            "memory_prefetch": TEXT,
            "usage": st.fixed_dictionaries(
                {},
                optional={
                    "input": COUNT,
                    "cache_read": COUNT,
                    "cache_write_1h": COUNT,
                    "web_searches": COUNT,
                },
            ),
            "settings": st.fixed_dictionaries(
                {},
                optional={
                    "thinking": TEXT,
                    "web_search": st.booleans(),
                    "images": COUNT,
                    "retention": _enum("in_memory", "24h", "30m"),
                    "response_started": TIMES,
                    "service_tier": _enum("priority", "flex", "batch"),
                },
            ),
            "diagnostic": st.fixed_dictionaries(
                {"provider": _enum("anthropic", "openai"), "type": st.one_of(st.none(), TEXT)},
                optional={"reason": TEXT, "missed_tokens": COUNT},
            ),
            "ttl": _enum("5m", "1h"),
            "request": st.fixed_dictionaries(
                {"blocks": st.lists(BLOCK, max_size=3)},
                optional={
                    "keep": st.integers(1, 4),
                    "breakpoints": st.lists(COUNT, max_size=2),
                    "breakpoints_1h": st.lists(COUNT, max_size=2),
                },
            ),
            "call": NAME,
            "attachments": st.lists(
                st.fixed_dictionaries(
                    {"name": NAME}, optional={"media_type": TEXT, "text": TEXT, "tokens": COUNT}
                ),
                max_size=2,
            ),
        },
    ),
    "tool": ({"name": NAME}, {"input": TEXT, "output": TEXT, "call": NAME}),
    "change": (
        {},
        {
            "memory_state": _enum("healthy", "empty", "unavailable"),
            "add_tools": st.lists(TOOL, max_size=2),
            "remove_tools": st.lists(NAME, max_size=2),
            "provider": NAME,
            "model": NAME,
            "channel": NAME,
        },
    ),
}


def _mappings(value: Any) -> list[dict[str, Any]]:
    """Every mapping inside ``value``, itself first."""
    found: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            found.append(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return found


@st.composite
def bent(draw: st.DrawFn, value: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    """``value`` (a fresh copy) with one or two fields, at its top or inside it, set to
    odd values, dropped, or added."""
    out: dict[str, Any] = json.loads(json.dumps(value))
    for _ in range(draw(st.integers(1, 2))):
        target = draw(st.sampled_from(_mappings(out)))
        keys = fields if target is out else sorted(target)
        key = draw(st.sampled_from([*keys, "unknown"]))
        if draw(st.booleans()) and key in target:
            del target[key]
        else:
            target[key] = copy.deepcopy(draw(ODD))
    return out


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(EVENT_FIELDS)))
    required, optional = EVENT_FIELDS[kind]
    event = {
        "type": kind,
        "at": draw(TIMES),
        **draw(st.fixed_dictionaries(required, optional=optional)),
    }
    if draw(st.integers(0, 3)) == 0:  # one event in four bent
        event = draw(bent(event, ["type", "at", *required, *optional]))
    return event


SESSION = st.fixed_dictionaries(
    {
        "id": NAME,
        "agent": st.fixed_dictionaries({"name": NAME}, optional={"inline_prompt": st.none()}),
        "provider": st.just("anthropic"),
        "model": st.just("claude-sonnet-4-5"),
    },
    optional={
        "title": TEXT,
        "environment": st.fixed_dictionaries(
            {}, optional={"timezone": _enum("UTC", "Nowhere/City"), "git_repo": st.booleans()}
        ),
        "tools": st.lists(TOOL, max_size=2),
        "memory": st.fixed_dictionaries(
            {}, optional={"budget_tokens": st.one_of(st.none(), COUNT)}
        ),
        "functions": st.dictionaries(
            NAME,
            st.fixed_dictionaries(
                {},
                optional={
                    "expose": _enum("io", "hidden"),
                    "render_range": st.fixed_dictionaries(
                        {},
                        optional={
                            "callers": st.one_of(st.none(), COUNT),
                            "subcalls": st.integers(-2, 2),
                        },
                    ),
                },
            ),
            max_size=2,
        ),
    },
)


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    session = draw(SESSION)
    if draw(st.integers(0, 4)) == 0:
        session = draw(bent(session, ["id", "agent", "provider", "tools", "memory", "functions"]))
    return {"format": FORMAT, "session": session, "events": draw(st.lists(events(), max_size=6))}


def _jsonl(doc: dict[str, Any]) -> str:
    header = {k: v for k, v in doc.items() if k != "events"}
    return "\n".join(json.dumps(x) for x in [header, *doc["events"]]) + "\n"


def _outcome(read: Any) -> tuple[str, Any]:
    try:
        session: Session = read()
    except SessionError as exc:
        return "error", str(exc)
    except (TypeError, ValueError) as exc:  # a crash, if any, the same in both
        return type(exc).__name__, str(exc)
    return "ok", (
        session,
        [(type(e), vars(e)) for e in session.events],  # every field, and only fields
    )


@pytest.fixture(autouse=True)
def _short_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    """One text field holds at most FIELD_CHARS here, in both paths alike."""
    for module in (fast_validation, validation, reference_loader):
        monkeypatch.setattr(module, "MAX_FIELD_CHARS", FIELD_CHARS)


def _agree(text: str, *, jsonl: bool) -> None:
    source = "s.jsonl" if jsonl else "s.yaml"
    new = _outcome(lambda: parse_session(text, source, jsonl=jsonl))
    old = _outcome(lambda: reference_loader.parse_session(text, source, jsonl=jsonl))
    assert new == old


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@SETTINGS
@given(doc=documents())
@example(doc={"format": FORMAT, "session": {"id": "s"}, "events": []})
def test_jsonl_accepted_and_refused_alike(doc: dict[str, Any]) -> None:
    _agree(_jsonl(doc), jsonl=True)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents())
def test_yaml_accepted_and_refused_alike(doc: dict[str, Any]) -> None:
    try:
        text = yaml.safe_dump(doc, allow_unicode=True)
    except yaml.YAMLError:
        return  # a value YAML cannot write (a lone surrogate): the JSON Lines test has it
    _agree(text, jsonl=False)


@given(
    line=st.sampled_from(['{"a": 1}', ' {"a": 1}', '{"a": 1} \r', "\ufeff{}", '{"a": 1} x', "[1]"])
)
def test_lines_read_as_json_loads_reads_them(line: str) -> None:
    session = {"id": "s", "agent": {"name": "a"}, "provider": "anthropic", "model": "m"}
    header = json.dumps({"format": FORMAT, "session": session})
    _agree(f"{header}\n{line}\n", jsonl=True)


def test_every_event_type_has_a_spec_for_every_field() -> None:
    """The quick path's field lists are the model's: no field it would let through unread."""
    assert set(fast_validation.EVENTS) == set(EVENT_FIELDS)
    for kind, (required, optional) in EVENT_FIELDS.items():
        assert fast_validation.EVENTS[kind].names == {"type", "at", *required, *optional}


def test_built_events_equal_constructed_ones() -> None:
    text = _jsonl(
        {
            "format": FORMAT,
            "session": {"id": "s", "agent": {"name": "a"}, "provider": "anthropic", "model": "m"},
            "events": [
                {"type": "enter", "at": "2026-03-02T09:00:12Z", "function": "f"},
                {"type": "llm", "at": "2026-03-02T09:00:13Z", "input": "q"},
                {"type": "tool", "at": "2026-03-02T09:00:13Z", "name": "t"},
                {"type": "exit", "at": "2026-03-02T09:00:14Z", "function": "f"},
            ],
        }
    )
    for event in parse_session(text, "s.jsonl").events:
        assert event == dataclasses.replace(event)  # through __init__
        assert hash(event) == hash(dataclasses.replace(event))


def _full_document() -> dict[str, Any]:
    """A valid document with every field of the session and of each event type."""
    tool = {"name": "read", "description": "d", "input_schema": {"type": "object"}, "source": None}
    block = {
        "section": "messages",
        "name": "m",
        "role": "user",
        "layer": "L1",
        "text": "t",
        "tokens": 1,
        "breakpoint": False,
        "inferred": False,
    }
    at = "2026-03-02T09:00:12Z"
    session = {
        "id": "s",
        "title": "t",
        "agent": {"name": "a", "id": "main", "description": "d", "inline_prompt": None},
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "channel": "cli",
        "environment": {
            "os": "o",
            "shell": "s",
            "backend": "b",
            "cwd": "/",
            "harness": None,
            "state_dir": None,
            "git_repo": True,
            "timezone": "UTC",
        },
        "skills": [{"name": "k", "description": "d"}],
        "tools": [tool],
        "deferred_tools": ["later"],
        "computer_use": False,
        "memory": {
            "backend": "files",
            "state": "healthy",
            "subsystem": "s",
            "workspace": None,
            "budget_tokens": 10,
            "global": "g",
            "project": "p",
        },
        "workspace_files": [{"path": "a.md", "content": "c"}],
        "user_profile": "u",
        "bindings": {"session_id": "s", "model": "m", "thinking": "off", "tier": "default"},
        "functions": {
            "f": {"doc": "d", "expose": "io", "render_range": {"callers": 1, "subcalls": -1}}
        },
    }
    events = [
        {
            "type": "enter",
            "at": at,
            "function": "f",
            "input": "i",
            "dispatched_by": "g",
            "doc": "d",
            "expose": "llm",
            "id": "c1",
            "parent": "c0",
            "retry_of": "c2",
        },
        {"type": "llm", "at": at, "request": {"blocks": [block, block]}},
        {
            "type": "llm",
            "at": at,
            "label": "l",
            "input": "i",
            "output": "o",
            "position": "p",
            "contract": {
                "kind": "next",
                "next_function": "g",
                "artifact": "a",
                "consumer": "c",
                "param": "p",
            },
            "output_schema": {"type": "object"},
            "memory_prefetch": "m",
            "usage": dict.fromkeys(
                ("input", "cache_read", "cache_write", "cache_write_1h", "output", "web_searches"),
                1,
            ),
            "settings": {
                "tool_choice": "auto",
                "thinking": "on",
                "effort": "high",
                "web_search": False,
                "citations": True,
                "speed": "fast",
                "images": 0,
                "prompt_cache_key": "k",
                "retention": "24h",
                "cache_mode": "explicit",
                "cache_ttl": "1h",
                "response_started": at,
                "service_tier": "priority",
            },
            "diagnostic": {"provider": "openai", "type": None, "reason": "r", "missed_tokens": 3},
            "ttl": "1h",
            "request": {"blocks": [block], "keep": 1, "breakpoints": [0]},
            "call": "c1",
            "attachments": [{"name": "a.png", "media_type": "image/png", "text": "t", "tokens": 3}],
        },
        {"type": "tool", "at": at, "name": "read", "input": "i", "output": "o", "call": "c1"},
        {
            "type": "exit",
            "at": at,
            "function": "f",
            "output": "o",
            "key_output": "k",
            "id": "c1",
            "outcome": "failed",
            "error": "e",
        },
        {"type": "change", "at": at, "model": "claude-sonnet-4-5"},
        {
            "type": "change",
            "at": at,
            "memory_state": "empty",
            "add_tools": [{**tool, "name": "write"}],
            "remove_tools": ["read"],
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "channel": "web",
        },
    ]
    return {"format": FORMAT, "session": session, "events": events}


@pytest.mark.slow
def test_every_field_bent_every_way() -> None:
    """Each field of a full document, at any depth, dropped or set to each odd value
    (and an unknown field added to each mapping): the quick path accepts none the
    reference refuses, and what the reference accepts reads into equal sessions.

    (What both refuse goes down the very same code in both: no need to word it twice.)
    """
    full = _full_document()
    assert fast_validation.document_fits(full, FORMAT)  # else the quick path is never taken
    counts = {"quick": 0, "accepted": 0, "refused": 0}
    frozen = pickle.dumps(full)  # a copy per case, made at C speed (deepcopy: a third of the test)
    for at, mapping in enumerate(_mappings(full)):
        for key in [*sorted(mapping), "unknown"]:
            if at == 0 and key == "events":  # JSON Lines: the events are the lines
                continue
            for value in [_DROP, *ODD_VALUES]:
                if value is _DROP and key not in mapping:
                    continue
                doc = pickle.loads(frozen)
                target = _mappings(doc)[at]  # the same walk order on an equal copy
                if value is _DROP:
                    del target[key]
                else:
                    target[key] = copy.deepcopy(value)
                quick = fast_validation.document_fits(doc, FORMAT)
                accepted = reference_loader.accepts(doc)
                assert accepted or not quick, (at, key, value)
                if accepted:
                    _agree(_jsonl(doc), jsonl=True)
                counts["quick" if quick else "accepted" if accepted else "refused"] += 1
    assert counts["quick"] > 500 and counts["refused"] > 1_000, counts


_DROP = object()
