"""OpenTelemetry spans read from an OTLP JSON export: which span is a model call, its
attributes, time and usage counts under each convention (see ``traces``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from assembler.limits import (
    FIRST_YEAR,
    LAST_YEAR,
    MAX_DIGITS,
    MAX_ID_CHARS,
    MAX_INT,
    clip,
    count_problem,
    kind_of,
    time_problem,
)
from assembler.sessions.importers.records import ImporterError, Record

_MODEL_KEYS = ("gen_ai.request.model", "gen_ai.response.model")
# gen_ai.operation.name values of a model call; the others (invoke_agent, create_agent,
# execute_tool, embeddings, …) do not bill a prompt of their own, or not one to cache
_CALLS = frozenset({"chat", "text_completion", "generate_content"})
_LEGACY_OPS = {"completion": "text_completion", "embedding": "embeddings"}  # llm.request.type
USAGE_KEYS = {  # ours → each convention's name, the current GenAI name first
    "total": ("gen_ai.usage.input_tokens", "llm.token_count.prompt", "gen_ai.usage.prompt_tokens"),
    "read": (
        "gen_ai.usage.cache_read.input_tokens",
        "llm.token_count.prompt_details.cache_read",
        "gen_ai.usage.cache_read_input_tokens",
    ),
    "write": (
        "gen_ai.usage.cache_creation.input_tokens",
        "llm.token_count.prompt_details.cache_write",
        "gen_ai.usage.cache_creation_input_tokens",
    ),
    "output": (
        "gen_ai.usage.output_tokens",
        "llm.token_count.completion",
        "gen_ai.usage.completion_tokens",
    ),
}


@dataclass
class LlmSpan:
    record: Record
    name: str
    start: datetime
    attrs: dict[str, Any]
    scope: str  # the instrumentation that wrote it
    counts: dict[str, int] | None = None  # its usage as recorded (``usage_counts``)
    groups: dict[str, list[dict[str, Any]]] | None = None  # ``group.N.key`` read once

    def fail(self, field: str, why: str) -> ImporterError:
        return self.record.fail(f"span {self.name!r}: {field}: {why}")


def _value(v: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value (64-bit integers come as strings; one of
    more digits than an integer converts stays text, for the reader to refuse)."""
    if type(v) is not dict:  # JSON objects are dicts: no abstract-class check per value
        return None
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        raw = v["intValue"]
        if isinstance(raw, str) and len(raw) <= MAX_DIGITS:
            try:
                return int(raw)
            except ValueError:
                return raw
        return raw if isinstance(raw, int | str) else None
    if "doubleValue" in v:
        return v["doubleValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "arrayValue" in v:
        return [_value(x) for x in _values(v["arrayValue"])]
    if "kvlistValue" in v:  # an object: a reader wanting text or a number refuses it
        pairs = _values(v["kvlistValue"])
        return {
            p["key"]: _value(p.get("value"))
            for p in pairs
            if isinstance(p, Mapping) and isinstance(p.get("key"), str)
        }
    return None


def _values(listed: Any) -> list[Any]:
    values = listed.get("values") if isinstance(listed, Mapping) else None
    return values if isinstance(values, list) else []


def _attrs(rec: Record, raw: Any, name: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if type(raw) is not list:
        raise rec.fail(
            f"span {name!r}: attributes: expected a list of key/value objects, found {kind_of(raw)}"
        )
    out: dict[str, Any] = {}
    for a in raw:
        if type(a) is not dict:
            continue
        key = a.get("key")
        if type(key) is str and len(key) <= MAX_ID_CHARS:
            out[key] = _value(a.get("value"))
        elif key is not None:
            found = f"{len(key):,} characters" if isinstance(key, str) else kind_of(key)
            raise rec.fail(
                f"span {name!r}: attributes[{raw.index(a)}].key: expected an attribute name "
                f"of at most {MAX_ID_CHARS:,} characters, found {found}"
            )
    return out


def _time(rec: Record, span: Mapping[str, Any], name: str) -> datetime:
    raw = span.get("startTimeUnixNano")
    try:
        at = datetime.fromtimestamp(int(raw) // 1000 / 1_000_000, tz=UTC)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, OSError):
        found = f"{len(raw):,} characters" if isinstance(raw, str) else kind_of(raw)
        raise rec.fail(
            f"span {name!r}: startTimeUnixNano: expected nanoseconds since 1970, found {found}"
        ) from None
    if not FIRST_YEAR < at.year < LAST_YEAR:  # the calendar's ends: their years checked
        why = time_problem(at)
        if why is not None:
            raise rec.fail(f"span {name!r}: startTimeUnixNano: {why}")
    return at


def _operation(attrs: Mapping[str, Any]) -> str | None:
    op = attrs.get("gen_ai.operation.name")
    if not isinstance(op, str):
        legacy = attrs.get("llm.request.type")
        op = _LEGACY_OPS.get(legacy, legacy) if isinstance(legacy, str) else None
    return op.lower()[:40] if op else None


def _failed(span: Mapping[str, Any], attrs: Mapping[str, Any]) -> bool:
    status = span.get("status")
    code = status.get("code") if isinstance(status, Mapping) else None
    return code in (2, "2", "STATUS_CODE_ERROR") or "error.type" in attrs


def _skip(
    span: Mapping[str, Any], attrs: Mapping[str, Any], counts: dict[str, int] | None
) -> str | None:
    """Why a span is no request: a kind to count, "" for a span that names no model
    (tools, HTTP, …: never a candidate), None for a model call."""
    oi = attrs.get("openinference.span.kind")
    named = any(k in attrs for k in _MODEL_KEYS)
    if isinstance(oi, str) and oi != "LLM":
        named = named or "llm.model_name" in attrs
        return f"{oi.lower()[:40]} span" if named else ""
    if oi != "LLM":
        if not named:
            return ""
        op = _operation(attrs)
        if op is not None and op not in _CALLS:
            return f"{op} span"
    if _failed(span, attrs) and counts is None:
        return "failed call without usage"  # a refused request (429, …) bills nothing
    return None


def model_spans(records: list[Record], skips: Counter[str]) -> list[LlmSpan]:
    found: list[LlmSpan] = []
    for rec in records:
        resources = rec.data.get("resourceSpans")
        # A span keeps where it was read, not the parsed export: the export is freed once
        # its spans are read, which is most of an import's peak memory.
        where = Record(rec.line, {}, rec.source)
        if not isinstance(resources, list):
            raise rec.fail(
                f"resourceSpans: expected a list (an OTLP JSON export), found {kind_of(resources)}"
            )
        for rs in resources:
            scopes = rs.get("scopeSpans") if isinstance(rs, Mapping) else None
            for ss in scopes if isinstance(scopes, list) else []:
                spans = ss.get("spans") if isinstance(ss, Mapping) else None
                scope = ss.get("scope") if isinstance(ss, Mapping) else None
                source = clip(str(scope.get("name", ""))) if isinstance(scope, Mapping) else ""
                for span in spans if isinstance(spans, list) else []:
                    if type(span) is not dict:
                        continue
                    name = span.get("name", "")
                    name = name if type(name) is str and len(name) <= 60 else clip(str(name))
                    attrs = _attrs(rec, span.get("attributes"), name)
                    counts = usage_counts(attrs, rec, name)
                    why = _skip(span, attrs, counts)
                    if why is None:
                        at = _time(rec, span, name)
                        found.append(LlmSpan(where, name, at, attrs, source, counts))
                    elif why:
                        skips[why] += 1
    found.sort(key=lambda s: s.start)  # stable: spans of one instant keep file order
    return found


_ALL_USAGE_KEYS = frozenset(k for names in USAGE_KEYS.values() for k in names)
_USAGE_ITEMS = tuple(USAGE_KEYS.items())


def usage_counts(a: Mapping[str, Any], rec: Record, name: str) -> dict[str, int] | None:
    """The usage counts as recorded, from any convention; None if absent. A count that
    is not a whole number of tokens (text of digits taken) is refused, naming it."""
    if _ALL_USAGE_KEYS.isdisjoint(a):
        return None
    out: dict[str, int] = {}
    for ours, names in _USAGE_ITEMS:
        key = next((k for k in names if k in a), None)
        value = 0 if key is None else a[key]
        if type(value) is not int or not 0 <= value <= MAX_INT:
            value = _count(value, rec, name, key)
        out[ours] = value
    return out


def _count(value: Any, rec: Record, name: str, key: str | None) -> int:
    """A count in another form than an integer: its digits as text, a whole float, null."""
    if value is None:
        return 0
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 16:
        value = int(value)
    why = count_problem(value)
    if why is not None:
        if isinstance(value, str):
            why = f"expected a whole number of tokens, found a string of {len(value):,} characters"
        raise rec.fail(f"span {name!r}: {key}: {why}")
    return int(value)
