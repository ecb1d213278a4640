"""Validation against the session schema, with errors that name the file, the line and the field."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any, cast

import fastjsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from assembler.sessions.model import FORMAT, SessionError
from assembler.sessions.reader import kind_of, path_text


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
