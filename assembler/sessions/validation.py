"""Validation against the session schema, with errors that name the file, the line and the field."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

from assembler.limits import MAX_FIELD_CHARS, MAX_INT
from assembler.sessions.fast_validation import SURROGATE, document_fits
from assembler.sessions.model import FORMAT, SessionError
from assembler.sessions.reader import kind_of, path_text

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError


@cache
def schema() -> dict[str, Any]:
    """The published JSON Schema of the session format."""
    text = resources.files("assembler.data").joinpath("session.schema.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # a fifth of a second to import: errors only

    return Draft202012Validator(schema())


@cache
def _fast_check() -> Callable[[Any], Any]:
    """A compiled validator for the common case (valid input): ~15x faster.

    The identifiers are dropped so it never tries to resolve anything remotely;
    on failure the reference validator runs to produce the precise error.
    """
    import fastjsonschema

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


#: Calls nested deeper than this are no agent's call stack; the rendered tree grows
#: with the square of the depth (each level indents the ones below it).
MAX_CALL_DEPTH = 1_000


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
            if not value.isascii() and SURROGATE.search(value):
                raise _fail(
                    source,
                    lines,
                    path,
                    "a lone surrogate (\\ud800-\\udfff) is not text; expected UTF-8",
                )
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(k, str) and not k.isascii() and SURROGATE.search(k):
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
    if not document_fits(data, FORMAT):  # only then is there an error to find and word
        check_values(data, source, lines)
        _schema_check(data, source, lines)
    check_events(data, source, lines)


def _schema_check(data: Any, source: str, lines: Mapping[tuple[str | int, ...], int]) -> None:
    import fastjsonschema

    try:
        _fast_check()(data)
    except fastjsonschema.JsonSchemaException:
        _explain(data, source, lines)


def _explain(data: Any, source: str, lines: Mapping[tuple[str | int, ...], int]) -> None:
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
            source, "required field is missing", line=line, field=path_text((*path, missing))
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
            field=path_text((*path, key)),
        )
    raise SessionError(
        source,
        f"expected {_expected(error)}, found {kind_of(error.instance)}",
        line=line,
        field=path_text(path),
    )
