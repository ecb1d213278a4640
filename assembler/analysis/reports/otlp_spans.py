"""An analysed session as OpenTelemetry spans (OTLP JSON), for tracing tools.

One trace per session: a root span ``session <id>`` and one child span per step.
A step span carries the GenAI semantic-convention attributes a tracing tool
already shows (``gen_ai.operation.name``, ``gen_ai.provider.name``,
``gen_ai.request.model`` and, when the step recorded what the provider billed,
``gen_ai.usage.*``) and the simulator's explanation under the
``context_assembly.`` namespace (:data:`NAMESPACE`; the names are listed in
docs/fleet.md). IDs are hashes of the source and the step, so writing again
gives the same spans. The file written is OTLP JSON Lines: one
``ExportTraceServiceRequest`` object per session and line, as the OpenTelemetry
Collector's file exporter writes them.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from assembler.analysis.engine import SessionAnalysis, StepAnalysis
from assembler.analysis.reports.parquet_tables import outcome

NAMESPACE = "context_assembly"
SERVICE = "context-assembly-inspector"
KIND_INTERNAL, KIND_CLIENT = 1, 3


def _value(v: str | int | float | bool | list[str]) -> dict[str, Any]:
    # OTLP JSON writes 64-bit integers as strings
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [{"stringValue": x} for x in v]}}
    return {"stringValue": v}


def attributes(values: dict[str, str | int | float | bool | list[str] | None]) -> list[Any]:
    return [{"key": k, "value": _value(v)} for k, v in values.items() if v is not None]


def _nanos(at: datetime) -> str:
    return str(int(at.timestamp()) * 1_000_000_000 + at.microsecond * 1000)


def _hex(text: str, digits: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:digits]


def step_attributes(a: SessionAnalysis, s: StepAnalysis) -> dict[str, Any]:
    ns = NAMESPACE
    m, u = s.miss, s.measured
    values: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": s.provider or a.provider,
        "gen_ai.request.model": s.model or a.model,
        "gen_ai.conversation.id": a.session,
        "session.id": a.session,  # how Phoenix groups a conversation's traces
        f"{ns}.session.id": a.session,
        f"{ns}.layout": a.layout,
        f"{ns}.step": s.step,
        f"{ns}.function": s.function,
        f"{ns}.label": s.label,
        f"{ns}.call_path": list(s.call_path),
        f"{ns}.tokens.total": s.tokens["total"],
        f"{ns}.tokens.tools": s.tokens["tools"],
        f"{ns}.tokens.l0": s.tokens["L0"],
        f"{ns}.tokens.l1": s.tokens["L1"],
        f"{ns}.tokens.l2": s.tokens["L2"],
        f"{ns}.cache.outcome": outcome(s.read, s.tokens["total"]),
        f"{ns}.cache.read": s.read,
        f"{ns}.cache.write": s.write,
        f"{ns}.cache.uncached": s.uncached,
        f"{ns}.cache.hit_ratio": s.hit_ratio,
        f"{ns}.cost.usd": s.usd,
        f"{ns}.cost.usd_without_cache": s.usd_without_cache,
    }
    if m is not None:
        values |= {
            f"{ns}.miss.component": m.component,
            f"{ns}.miss.layer": m.layer,
            f"{ns}.miss.reason": m.reason,
            f"{ns}.miss.tokens_lost": m.tokens_lost,
            f"{ns}.miss.sentence": m.sentence,
        }
    if u is not None:
        # the semantic conventions count cached tokens in the input tokens
        values |= {
            "gen_ai.usage.input_tokens": u.input + u.cache_read + u.cache_write,
            "gen_ai.usage.cache_read.input_tokens": u.cache_read,
            "gen_ai.usage.cache_creation.input_tokens": u.cache_write,
            "gen_ai.usage.output_tokens": u.output,
        }
    return values


def session_spans(a: SessionAnalysis, source: str) -> dict[str, Any]:
    """One ``ExportTraceServiceRequest`` (as a JSON-ready dict) for one session."""
    trace = _hex(f"{source}\n{a.session}", 32)
    root = _hex(f"{trace}/root", 16)
    times = [s.timestamp for s in a.steps]
    t = a.totals
    spans: list[dict[str, Any]] = []
    if times:
        spans.append(
            {
                "traceId": trace,
                "spanId": root,
                "name": f"session {a.session}",
                "kind": KIND_INTERNAL,
                "startTimeUnixNano": _nanos(min(times)),
                "endTimeUnixNano": _nanos(max(times)),
                "attributes": attributes(
                    {
                        f"{NAMESPACE}.session.id": a.session,
                        f"{NAMESPACE}.layout": a.layout,
                        f"{NAMESPACE}.ttl": a.ttl,
                        f"{NAMESPACE}.steps": len(a.steps),
                        f"{NAMESPACE}.cache.hit_ratio": t["hit_ratio"],
                        f"{NAMESPACE}.cost.usd": t["usd"],
                        f"{NAMESPACE}.cost.usd_without_cache": t["usd_without_cache"],
                    }
                ),
            }
        )
    for s in a.steps:
        spans.append(
            {
                "traceId": trace,
                "spanId": _hex(f"{trace}/{s.step}", 16),
                "parentSpanId": root,
                "name": f"chat {s.model or a.model}",
                "kind": KIND_CLIENT,
                "startTimeUnixNano": _nanos(s.timestamp),
                "endTimeUnixNano": _nanos(s.timestamp),
                "attributes": attributes(step_attributes(a, s)),
            }
        )
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attributes({"service.name": SERVICE})},
                "scopeSpans": [{"scope": {"name": "assembler.analysis"}, "spans": spans}],
            }
        ]
    }


def otlp_line(a: SessionAnalysis, source: str) -> str:
    """The session's spans as one line of OTLP JSON Lines (with its newline)."""
    return json.dumps(session_spans(a, source), ensure_ascii=False, separators=(",", ":")) + "\n"
