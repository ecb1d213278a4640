"""A quick, conservative answer to "is this session document surely valid?".

It says True only for a document both the value checks and the schema accept,
checking each event against the fields its ``type`` allows: a few dictionary
and type tests per field, no exception raised. Anything it is unsure of (a float
where an integer goes, a digit outside ASCII in a time, a trailing newline after
a pattern) is False, and the reference validation runs on the whole document
and words the error: the messages come from one place only.

It mirrors ``session.schema.json``; ``tests/sessions/test_fast_validation.py``
checks that it never accepts what the reference refuses.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from assembler.limits import MAX_FIELD_CHARS, MAX_INT

#: A lone surrogate is not text (``validation.check_values`` words it).
SURROGATE = re.compile("[\ud800-\udfff]")
# Stricter than the schema's patterns (ASCII digits, no newline before the end):
# what these refuse goes to the reference validator, which decides.
_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})",
    re.ASCII,
).fullmatch
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,128}", re.ASCII).fullmatch

# Field kinds. A frozenset is an enum of strings; a callable checks the value itself.
TEXT, NAME, REF, TIME, INT0, INT1, BOOL, TEXT_OR_NULL, INT0_OR_NULL, INT1_OR_NULL = range(10)
Kind = int | frozenset[str] | Callable[[Any], bool]


class Spec:
    """An object's allowed fields with their kinds, and its required ones."""

    __slots__ = ("fields", "min_fields", "names", "required")

    def __init__(
        self, fields: Mapping[str, Kind], required: tuple[str, ...] = (), min_fields: int = 0
    ) -> None:
        self.fields = dict(fields)
        self.names = frozenset(fields)
        self.required = frozenset(required)
        self.min_fields = min_fields


def _text(v: Any) -> bool:
    return type(v) is str and len(v) <= MAX_FIELD_CHARS and (v.isascii() or not SURROGATE.search(v))


def fits(obj: Any, spec: Spec) -> bool:
    """``obj`` is a mapping with only ``spec``'s fields, the required ones, each of its kind."""
    if type(obj) is not dict or not obj.keys() <= spec.names or not spec.required <= obj.keys():
        return False
    if len(obj) < spec.min_fields:
        return False
    kinds = spec.fields
    for key, v in obj.items():
        kind = kinds[key]
        if type(kind) is not int:  # an enum of strings, or a check of its own
            if type(kind) is frozenset:
                if type(v) is not str or v not in kind:
                    return False
            elif not kind(v):  # type: ignore[operator]  # the remaining kind: a callable
                return False
        # the integer kinds, the most frequent first
        elif kind is TEXT:
            if type(v) is not str or not (
                len(v) <= MAX_FIELD_CHARS and (v.isascii() or not SURROGATE.search(v))
            ):
                return False
        elif kind is INT0:
            if type(v) is not int or not 0 <= v <= MAX_INT:
                return False
        elif kind is BOOL:
            if type(v) is not bool:
                return False
        elif kind is NAME:
            if type(v) is not str or not (
                0 < len(v) <= 200 and (v.isascii() or not SURROGATE.search(v))
            ):
                return False
        elif kind is TIME:
            if type(v) is not str or len(v) > 64 or not _TIME(v):
                return False
        elif kind is REF:
            if not (_text(v) and v):
                return False
        elif kind is TEXT_OR_NULL:
            if v is not None and not _text(v):
                return False
        elif kind is INT1:
            if type(v) is not int or not 1 <= v <= MAX_INT:
                return False
        elif kind is INT0_OR_NULL:
            if v is not None and (type(v) is not int or not 0 <= v <= MAX_INT):
                return False
        elif v is not None and (type(v) is not int or not 1 <= v <= MAX_INT):  # INT1_OR_NULL
            return False
    return True


def plain_value(value: Any) -> bool:
    """Any JSON value (a free-form object such as a tool's input schema) within the value checks."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str:
            if not _text(v):
                return False
        elif t is dict:
            for k in v:
                if not _text(k):
                    return False
            stack.extend(v.values())
        elif t is list:
            stack.extend(v)
        elif t is int:
            if not -MAX_INT <= v <= MAX_INT:
                return False
        elif t is not float and t is not bool and v is not None:
            return False
    return True


def _object(v: Any) -> bool:
    return type(v) is dict and plain_value(v)


def _list_of(spec: Spec) -> Callable[[Any], bool]:
    def check(v: Any) -> bool:
        return type(v) is list and all(fits(x, spec) for x in v)

    return check


def _list_of_kind(kind: Kind) -> Callable[[Any], bool]:
    probe = Spec({"v": kind})

    def check(v: Any) -> bool:
        return type(v) is list and all(fits({"v": x}, probe) for x in v)

    return check


def _tool_name(v: Any) -> bool:
    return type(v) is str and _TOOL_NAME(v) is not None


TOOL = Spec(
    {"name": _tool_name, "description": TEXT, "input_schema": _object, "source": TEXT_OR_NULL},
    ("name", "description", "input_schema"),
)
_CONTRACT = Spec(
    {
        "kind": frozenset({"decision", "artifact", "next"}),
        "artifact": TEXT,
        "consumer": TEXT,
        "next_function": TEXT,
        "param": TEXT,
    },
    ("kind",),
)


def _contract(v: Any) -> bool:
    if not fits(v, _CONTRACT):
        return False
    kind = v["kind"]
    return not (kind == "artifact" and "artifact" not in v) and not (
        kind == "next" and "next_function" not in v
    )


_USAGE = Spec(
    dict.fromkeys(
        ("input", "cache_read", "cache_write", "cache_write_1h", "output", "web_searches"), INT0
    )
)
_SETTINGS = Spec(
    {
        "tool_choice": TEXT,
        "thinking": TEXT,
        "effort": TEXT,
        "web_search": BOOL,
        "citations": BOOL,
        "speed": TEXT,
        "images": INT0,
        "prompt_cache_key": TEXT,
        "retention": frozenset({"in_memory", "24h", "30m"}),
        "cache_mode": frozenset({"implicit", "explicit"}),
        "cache_ttl": TEXT,
        "response_started": TIME,
        "service_tier": TEXT,
    }
)
_DIAGNOSTIC = Spec(
    {
        "provider": frozenset({"anthropic", "openai"}),
        "type": TEXT_OR_NULL,
        "reason": TEXT,
        "missed_tokens": INT0,
    },
    ("provider", "type"),
)
_BLOCK = Spec(
    {
        "section": frozenset({"tools", "system", "messages"}),
        "name": TEXT,
        "role": frozenset({"user", "assistant"}),
        "layer": frozenset({"L0", "L1", "L2"}),
        "text": TEXT,
        "tokens": INT0,
        "breakpoint": BOOL,
        "inferred": BOOL,
        "ttl": frozenset({"5m", "1h"}),
        "warm": BOOL,
    },
    ("section",),
)
_REQUEST = Spec(
    {
        "blocks": _list_of(_BLOCK),
        "keep": INT1,
        "breakpoints": _list_of_kind(INT0),
        "breakpoints_1h": _list_of_kind(INT0),
    },
    ("blocks",),
)
_ATTACHMENT = Spec(
    {"name": REF, "media_type": TEXT, "text": TEXT, "tokens": INT0},
    ("name",),
)
_EXPOSE = frozenset({"io", "llm", "full", "hidden"})
_MEMORY_STATE = frozenset({"healthy", "empty", "unavailable"})


def _event(kind: str, fields: Mapping[str, Kind], required: tuple[str, ...] = ()) -> Spec:
    return Spec(
        {"type": frozenset({kind}), "at": TIME, **fields},
        ("type", "at", *required),
        min_fields=3 if kind == "change" else 0,
    )


#: Per event type, what the schema's ``if type == ...`` branch allows.
EVENTS: dict[str, Spec] = {
    "enter": _event(
        "enter",
        {
            "function": NAME,
            "input": TEXT,
            "dispatched_by": NAME,
            "doc": TEXT,
            "expose": _EXPOSE,
            "id": REF,
            "parent": REF,
            "retry_of": REF,
        },
        ("function",),
    ),
    "exit": _event(
        "exit",
        {
            "function": NAME,
            "output": TEXT,
            "key_output": TEXT,
            "id": REF,
            "outcome": frozenset({"ok", "failed", "abandoned"}),
            "error": TEXT,
        },
        ("function",),
    ),
    "llm": _event(
        "llm",
        {
            "label": TEXT,
            "input": TEXT,
            "output": TEXT,
            "position": TEXT,
            "contract": _contract,
            "output_schema": _object,
            "memory_prefetch": TEXT,
            "usage": lambda v: fits(v, _USAGE),
            "settings": lambda v: fits(v, _SETTINGS),
            "diagnostic": lambda v: fits(v, _DIAGNOSTIC),
            "ttl": frozenset({"5m", "1h"}),
            "request": lambda v: fits(v, _REQUEST),
            "call": REF,
            "attachments": _list_of(_ATTACHMENT),
        },
    ),
    "tool": _event("tool", {"name": NAME, "input": TEXT, "output": TEXT, "call": REF}, ("name",)),
    "change": _event(
        "change",
        {
            "memory_state": _MEMORY_STATE,
            "add_tools": _list_of(TOOL),
            "remove_tools": _list_of_kind(NAME),
            "provider": NAME,
            "model": NAME,
            "channel": NAME,
        },
    ),
}


def events_fit(events: list[Any]) -> bool:
    """Every event is surely valid (values and schema)."""
    specs = EVENTS
    for event in events:
        if type(event) is not dict:
            return False
        kind = event.get("type")
        spec = specs.get(kind) if type(kind) is str else None
        if spec is None or not fits(event, spec):
            return False
    return True


def _subcalls(v: Any) -> bool:
    return type(v) is int and -1 <= v <= MAX_INT


_FUNCTION = Spec(
    {
        "doc": TEXT,
        "expose": _EXPOSE,
        "render_range": lambda v: fits(v, Spec({"callers": INT0_OR_NULL, "subcalls": _subcalls})),
    }
)


def _functions(v: Any) -> bool:
    return type(v) is dict and all(_text(k) and fits(f, _FUNCTION) for k, f in v.items())


def _scales(v: Any) -> bool:
    return type(v) is dict and all(
        _text(k) and type(x) in (int, float) and 0.1 <= x <= 10 for k, x in v.items()
    )


def _spec(fields: Mapping[str, Kind], required: tuple[str, ...] = ()) -> Callable[[Any], bool]:
    spec = Spec(fields, required)
    return lambda v: fits(v, spec)


SESSION = Spec(
    {
        "id": NAME,
        "title": TEXT,
        "agent": _spec(
            {"name": NAME, "id": NAME, "description": TEXT, "inline_prompt": TEXT_OR_NULL},
            ("name",),
        ),
        "provider": NAME,
        "model": NAME,
        "channel": NAME,
        "environment": _spec(
            {
                **dict.fromkeys(("os", "shell", "backend", "cwd", "timezone"), TEXT),
                "harness": TEXT_OR_NULL,
                "state_dir": TEXT_OR_NULL,
                "git_repo": BOOL,
            }
        ),
        "skills": _list_of(Spec({"name": NAME, "description": TEXT}, ("name",))),
        "token_scale": _scales,
        "tools": _list_of(TOOL),
        "deferred_tools": _list_of_kind(NAME),
        "computer_use": BOOL,
        "memory": _spec(
            {
                "backend": TEXT,
                "state": _MEMORY_STATE,
                "subsystem": TEXT,
                "workspace": TEXT_OR_NULL,
                "budget_tokens": INT1_OR_NULL,
                "global": TEXT,
                "project": TEXT,
            }
        ),
        "workspace_files": _list_of(Spec({"path": NAME, "content": TEXT}, ("path", "content"))),
        "user_profile": TEXT,
        "bindings": _spec(
            {"session_id": NAME, "model": NAME, "thinking": TEXT, "tier": TEXT},
            ("session_id", "model"),
        ),
        "functions": _functions,
    },
    ("id", "agent", "provider", "model"),
)
_DOCUMENT_FIELDS = frozenset({"format", "session", "events"})


def document_fits(data: Any, format_name: str) -> bool:
    """The whole document is surely valid: the reference validation would find nothing."""
    return (
        type(data) is dict
        and data.keys() == _DOCUMENT_FIELDS
        and data["format"] == format_name
        and type(data["events"]) is list
        and fits(data["session"], SESSION)
        and events_fit(data["events"])
    )
