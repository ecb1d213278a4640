"""Long transcripts of each importer's format, written at test time: ``turns`` user turns,
each a tool call and an answer, every request billed. The shapes are the ones the
importers' fixtures hold; only their number grows, so the time and memory an import
takes can be measured against the size of its input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

START = datetime(2026, 3, 12, 9, 0, tzinfo=UTC)
MODEL = "claude-sonnet-4-5-20250929"


def _iso(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def _lines(records: Iterator[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


# --- Claude Code ----------------------------------------------------------------------


def _claude_usage(turn: int, step: int) -> dict[str, Any]:
    read = 12_000 + 300 * turn + 150 * step
    return {
        "input_tokens": 3,
        "cache_creation_input_tokens": 150,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": 150, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 40,
        "service_tier": "standard",
    }


def _claude_records(turns: int) -> Iterator[dict[str, Any]]:
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/ledgerline",
        "sessionId": "5a0ddcd0-cafe-4000-8000-00000000beef",
        "version": "2.1.12",
        "gitBranch": "main",
    }
    parent: str | None = None
    clock = 0.0

    def record(kind: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
        nonlocal parent, clock
        clock += 2.0
        uuid = f"u-{clock:.0f}"
        out = {**base, "parentUuid": parent, "type": kind, "uuid": uuid, "timestamp": _iso(clock)}
        out.update(extra)
        out["message"] = message
        parent = uuid
        return out

    for turn in range(turns):
        yield record("user", {"role": "user", "content": f"Turn {turn}: count the late orders."})
        use = f"toolu_{turn:06d}"
        yield record(
            "assistant",
            {
                "model": MODEL,
                "id": f"msg_{turn}_a",
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": use,
                        "name": "Grep",
                        "input": {"pattern": f"t{turn}"},
                    }
                ],
                "stop_reason": "tool_use",
                "usage": _claude_usage(turn, 0),
            },
            requestId=f"req_{turn}_a",
        )
        yield record(
            "user",
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": use, "content": f"{turn} matches"}
                ],
            },
        )
        yield record(
            "assistant",
            {
                "model": MODEL,
                "id": f"msg_{turn}_b",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": f"Found {turn} late orders."}],
                "stop_reason": "end_turn",
                "usage": _claude_usage(turn, 1),
            },
            requestId=f"req_{turn}_b",
        )


def claude_code(turns: int) -> str:
    return _lines(_claude_records(turns))


# --- Codex ----------------------------------------------------------------------------


def _codex_records(turns: int) -> Iterator[dict[str, Any]]:
    yield {
        "timestamp": _iso(0),
        "type": "session_meta",
        "payload": {
            "id": "019a9776-0a34-7842-8627-00000000beef",
            "timestamp": _iso(0),
            "cwd": "/home/dev/ledgerline",
            "originator": "codex_cli_rs",
            "cli_version": "0.58.0",
            "model_provider": "openai",
        },
    }
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    clock = 0.0
    for turn in range(turns):
        clock += 1
        yield {
            "timestamp": _iso(clock),
            "type": "turn_context",
            "payload": {"cwd": "/home/dev/ledgerline", "model": "gpt-5-codex", "effort": "medium"},
        }
        prompt = f"Turn {turn}: count the late orders."
        yield {
            "timestamp": _iso(clock),
            "type": "event_msg",
            "payload": {"type": "user_message", "message": prompt, "images": []},
        }
        yield {
            "timestamp": _iso(clock),
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": prompt}],
            },
        }
        for step, item in enumerate(
            (
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": json.dumps({"command": ["rg", f"t{turn}"]}),
                    "call_id": f"call_{turn}",
                },
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": f"Found {turn} late orders."}],
                },
            )
        ):
            clock += 1
            yield {"timestamp": _iso(clock), "type": "response_item", "payload": item}
            last = {
                "input_tokens": 9_000 + 200 * turn + 100 * step,
                "cached_input_tokens": 8_800 + 200 * turn,
                "output_tokens": 30,
            }
            total = {k: total[k] + last[k] for k in total}
            yield {
                "timestamp": _iso(clock),
                "type": "event_msg",
                "payload": {
                    "type": "token_count",
                    "info": {"total_token_usage": dict(total), "last_token_usage": last},
                },
            }
            if step == 0:
                yield {
                    "timestamp": _iso(clock),
                    "type": "response_item",
                    "payload": {
                        "type": "function_call_output",
                        "call_id": f"call_{turn}",
                        "output": f"{turn} matches",
                    },
                }


def codex(turns: int) -> str:
    return _lines(_codex_records(turns))


# --- request log: OpenAI Responses, each request continuing the one before ------------


def _responses_records(turns: int) -> Iterator[dict[str, Any]]:
    previous: str | None = None
    for turn in range(turns):
        request: dict[str, Any] = {
            "model": "gpt-5",
            "input": [{"role": "user", "content": f"Turn {turn}: count the late orders."}],
        }
        if previous is not None:
            request["previous_response_id"] = previous
        previous = f"resp_{turn:06d}"
        yield {
            "timestamp": _iso(turn * 3),
            "url": "https://api.openai.com/v1/responses",
            "request": request,
            "response": {
                "id": previous,
                "object": "response",
                "model": "gpt-5",
                "output": [
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": f"Found {turn}."}],
                    }
                ],
                "usage": {
                    "input_tokens": 2_000 + 40 * turn,
                    "input_tokens_details": {"cached_tokens": 1_024 + 40 * turn},
                    "output_tokens": 12,
                },
            },
        }


def request_log(turns: int) -> str:
    return _lines(_responses_records(turns))


# --- OTel: one span per model call, usage only ---------------------------------------


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def otel_spans(spans: int, messages: bool = True) -> str:
    """``spans`` chat spans in one export (JSON Lines of one request each 1,000 spans);
    ``messages``: each span records its newest input message."""
    lines: list[str] = []
    batch: list[dict[str, Any]] = []
    start_ns = int(START.timestamp()) * 1_000_000_000
    for n in range(spans):
        attrs = [
            _attr("gen_ai.operation.name", "chat"),
            _attr("gen_ai.provider.name", "anthropic"),
            _attr("gen_ai.request.model", "claude-sonnet-4-5"),
            _attr("gen_ai.usage.input_tokens", 2_000 + n),
            _attr("gen_ai.usage.cache_read.input_tokens", 1_900 + n),
            _attr("gen_ai.usage.output_tokens", 10),
        ]
        if messages:
            text = json.dumps([{"role": "user", "parts": [{"type": "text", "content": f"q{n}"}]}])
            attrs.append(_attr("gen_ai.input.messages", text))
        batch.append(
            {
                "traceId": f"{n // 1000:032x}",
                "spanId": f"{n:016x}",
                "name": "chat claude-sonnet-4-5",
                "startTimeUnixNano": str(start_ns + n * 1_000_000_000),
                "attributes": attrs,
            }
        )
        if len(batch) == 1000 or n == spans - 1:
            export = {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "t"}, "spans": batch}]}]}
            lines.append(json.dumps(export))
            batch = []
    return "\n".join(lines) + "\n"
