"""OpenTelemetry spans read from an OTLP JSON export: which span is a model call, its
attributes, time and usage counts under each convention (see ``otel``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from assembler.sessions.importers.records import Record, as_int, kind

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


def _value(v: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value (64-bit integers come as strings)."""
    if not isinstance(v, Mapping):
        return None
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in v:
        return v["doubleValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "arrayValue" in v and isinstance(v["arrayValue"], Mapping):
        return [_value(x) for x in v["arrayValue"].get("values", [])]
    return None


def _attrs(rec: Record, raw: Any, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise rec.fail(
            f"{where}.attributes: expected a list of key/value objects, found {kind(raw)}"
        )
    return {a["key"]: _value(a.get("value")) for a in raw if isinstance(a, Mapping) and "key" in a}


def _time(rec: Record, span: Mapping[str, Any]) -> datetime:
    raw = span.get("startTimeUnixNano")
    try:
        return datetime.fromtimestamp(int(raw) // 1000 / 1_000_000, tz=UTC)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, OSError):
        raise rec.fail(
            f"startTimeUnixNano: expected nanoseconds since 1970, found {kind(raw)}"
        ) from None


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


def _skip(span: Mapping[str, Any], attrs: Mapping[str, Any]) -> str | None:
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
    if _failed(span, attrs) and usage_counts(attrs) is None:
        return "failed call without usage"  # a refused request (429, …) bills nothing
    return None


def model_spans(records: list[Record], skips: Counter[str]) -> list[LlmSpan]:
    found: list[LlmSpan] = []
    for rec in records:
        resources = rec.data.get("resourceSpans")
        if not isinstance(resources, list):
            raise rec.fail(
                f"resourceSpans: expected a list (an OTLP JSON export), found {kind(resources)}"
            )
        for rs in resources:
            scopes = rs.get("scopeSpans") if isinstance(rs, Mapping) else None
            for ss in scopes if isinstance(scopes, list) else []:
                spans = ss.get("spans") if isinstance(ss, Mapping) else None
                scope = ss.get("scope") if isinstance(ss, Mapping) else None
                source = str(scope.get("name", "")) if isinstance(scope, Mapping) else ""
                for span in spans if isinstance(spans, list) else []:
                    if not isinstance(span, Mapping):
                        continue
                    name = str(span.get("name", ""))
                    attrs = _attrs(rec, span.get("attributes"), f"span {name!r}")
                    why = _skip(span, attrs)
                    if why is None:
                        found.append(LlmSpan(rec, name, _time(rec, span), attrs, source))
                    elif why:
                        skips[why] += 1
    found.sort(key=lambda s: s.start)  # stable: spans of one instant keep file order
    return found


def usage_counts(a: Mapping[str, Any]) -> dict[str, int] | None:
    """The usage counts as recorded, from any convention; None if absent."""
    if not any(k in a for names in USAGE_KEYS.values() for k in names):
        return None
    return {w: next((as_int(a[k]) for k in names if k in a), 0) for w, names in USAGE_KEYS.items()}
