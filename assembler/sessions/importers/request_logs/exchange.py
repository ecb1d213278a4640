"""One captured HTTP exchange → the request body and the response body it stands for.

A capture line (as a recording proxy writes it) is
``{"request": {"timestamp", "method", "url", "headers", "body"}, "response":
{"timestamp", "status_code", "headers", "body" | "body_raw"}}``. A body is a JSON object
or the JSON text of one; ``body_raw`` (or a text body) is the server-sent event stream
of a streamed call, reassembled here into the response the same call would have
returned unstreamed: Anthropic Messages events, OpenAI Responses events, or Chat
Completions chunks. Headers are never read: they hold keys and cookies, not context.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from assembler.limits import kind_of
from assembler.sessions.importers.request_logs.requests_lines import (
    STATUS_EXPECTED,
    shown,
    status_code,
    url_problem,
)


class ExchangeError(ValueError):
    """A capture line that cannot be read: ``str()`` names the field and what was expected."""


@dataclass(frozen=True)
class Exchange:
    """What a request log needs from one exchange; headers left behind."""

    timestamp: Any  # as written: ISO 8601 text or Unix seconds / milliseconds
    url: str | None
    status: int | None
    request: Mapping[str, Any]
    response: Mapping[str, Any] | None  # None: the capture holds no readable body


def is_capture(line: Mapping[str, Any]) -> bool:
    """A line in the capture shape: its request is an envelope with a body, not the body."""
    request = line.get("request")
    return (
        isinstance(request, Mapping)
        and "body" in request
        and any(k in request for k in ("method", "url", "headers"))
    )


def read_exchange(line: Mapping[str, Any]) -> Exchange:
    """The request body and the (reassembled) response body of one capture line."""
    request = line.get("request")
    if not isinstance(request, Mapping):
        raise ExchangeError(f"request: expected the captured request, found {kind_of(request)}")
    response = line.get("response")
    if response is not None and not isinstance(response, Mapping):
        raise ExchangeError(f"response: expected the captured response, found {kind_of(response)}")
    response = response or {}
    key = "status_code" if "status_code" in response else "status"
    raw_status = response.get(key)
    status = status_code(raw_status)
    if raw_status is not None and status is None:
        raise ExchangeError(f"response.{key}: {STATUS_EXPECTED}, found {shown(raw_status)}")
    url = request.get("url")
    why = None if url is None else url_problem(url)
    if why is not None:
        raise ExchangeError(f"request.url: {why}")
    body = _json_body(request.get("body"), "request.body")
    if body is None:
        raise ExchangeError(
            f"request.body: expected the request as a JSON object, found {kind_of(request.get('body'))}"
        )
    return Exchange(
        timestamp=request.get("timestamp", response.get("timestamp")),
        url=url if isinstance(url, str) else None,
        status=status,
        request=body,
        response=_response_body(response, (status or 200) >= 400),
    )


def _json_body(value: Any, field: str) -> Mapping[str, Any] | None:
    """A body written as an object or as the JSON text of one; None for anything else."""
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        if isinstance(parsed, Mapping):
            return parsed
        raise ExchangeError(f"{field}: expected a JSON object, found the JSON of {kind_of(parsed)}")
    return None


def _response_body(response: Mapping[str, Any], failed: bool) -> Mapping[str, Any] | None:
    for key in ("body_raw", "body"):
        value = response.get(key)
        if value is None:
            continue
        body = _json_body(value, f"response.{key}")
        if body is not None:
            return body
        if isinstance(value, str) and _looks_like_stream(value):
            return reassemble(value, f"response.{key}")
        if not failed:  # an error page may be HTML; a served call must say what it billed
            raise ExchangeError(
                f"response.{key}: expected a JSON object or a server-sent event stream, "
                f"found {kind_of(value)}"
            )
    return None


def _looks_like_stream(text: str) -> bool:
    head = text.lstrip()[:6]
    return head.startswith(("event:", "data:", ":"))


def sse_events(text: str) -> Iterator[tuple[str, str]]:
    """(event name, data) of each event of a server-sent event stream, as the HTML
    standard reads one: ``data`` lines joined by newlines, comments and ids ignored."""
    name, data = "", list[str]()
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            if data:
                yield name or "message", "\n".join(data)
            name, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    if data:
        yield name or "message", "\n".join(data)


def _payloads(text: str, field: str) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for number, (_, data) in enumerate(sse_events(text), start=1):
        if data.strip() == "[DONE]":
            continue
        try:
            value = json.loads(data)
        except ValueError:
            raise ExchangeError(f"{field}: event {number}: expected JSON data") from None
        if not isinstance(value, Mapping):
            raise ExchangeError(
                f"{field}: event {number}: expected an object, found {kind_of(value)}"
            )
        out.append(value)
    return out


def reassemble(text: str, field: str = "response.body_raw") -> Mapping[str, Any] | None:
    """The response a streamed call stands for; None for a stream with no event.

    A stream cut short gives what it holds: the request's usage so far, or none."""
    events = _payloads(text, field)
    if not events:
        return None
    types = {str(e.get("type", "")) for e in events}
    if "message_start" in types:
        return _anthropic(events, field)
    if any(t.startswith("response.") for t in types):
        return _responses(events)
    if any(e.get("object") == "chat.completion.chunk" for e in events):
        return _chat(events)
    error = next((e for e in events if "error" in e), None)
    if error is not None:
        return error
    raise ExchangeError(
        f"{field}: expected Anthropic Messages, OpenAI Responses or Chat Completions events"
    )


class _Pieces:
    """Streamed text kept as its pieces and joined once at the end: adding each delta to
    the text so far copies it every time, quadratic in the number of deltas."""

    def __init__(self) -> None:
        self._texts: dict[tuple[int, str], tuple[dict[str, Any], list[str]]] = {}

    def add(self, target: dict[str, Any], key: str, piece: Any) -> None:
        got = self._texts.get((id(target), key))
        if got is None:
            got = self._texts[(id(target), key)] = (target, [str(target.get(key) or "")])
        got[1].append(str(piece or ""))

    def join(self) -> None:
        for (_, key), (target, pieces) in self._texts.items():
            target[key] = "".join(pieces)


def _anthropic(events: list[Mapping[str, Any]], field: str) -> Mapping[str, Any]:
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    texts = _Pieces()
    for e in events:
        kind_ = e.get("type")
        if kind_ == "error":
            return {"type": "error", "error": e.get("error")}
        if kind_ == "message_start" and isinstance(e.get("message"), Mapping):
            message = dict(e["message"])
            message["usage"] = dict(message.get("usage") or {})
        elif kind_ == "content_block_start" and isinstance(e.get("content_block"), Mapping):
            blocks[_index(e)] = dict(e["content_block"])
        elif kind_ == "content_block_delta" and isinstance(e.get("delta"), Mapping):
            _apply_delta(blocks.setdefault(_index(e), {}), partial, _index(e), e["delta"], texts)
        elif kind_ == "message_delta":
            delta = e.get("delta")
            if isinstance(delta, Mapping):
                message.update({k: v for k, v in delta.items() if v is not None})
            usage = e.get("usage")
            if isinstance(usage, Mapping):  # cumulative: the later count stands
                message.setdefault("usage", {}).update(
                    {k: v for k, v in usage.items() if v is not None}
                )
    texts.join()
    for index, pieces in partial.items():
        joined = "".join(pieces)
        try:
            blocks[index]["input"] = json.loads(joined) if joined.strip() else {}
        except ValueError:
            raise ExchangeError(
                f"{field}: content block {index}: the streamed tool input is not JSON"
            ) from None
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _index(event: Mapping[str, Any]) -> int:
    index = event.get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else 0


def _apply_delta(
    block: dict[str, Any],
    partial: dict[int, list[str]],
    index: int,
    delta: Mapping[str, Any],
    texts: _Pieces,
) -> None:
    kind_ = delta.get("type")
    if kind_ == "text_delta":
        texts.add(block, "text", delta.get("text"))
    elif kind_ == "thinking_delta":
        texts.add(block, "thinking", delta.get("thinking"))
    elif kind_ == "signature_delta":
        block["signature"] = delta.get("signature")
    elif kind_ == "input_json_delta":
        partial.setdefault(index, []).append(str(delta.get("partial_json") or ""))


_FINAL = ("response.completed", "response.incomplete", "response.failed")


def _responses(events: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The terminal event's response (it carries the output and the usage), else the last
    response object seen; an ``error`` event as the error it reports."""
    final: Mapping[str, Any] | None = None
    seen: Mapping[str, Any] | None = None
    for e in events:
        if e.get("type") == "error":
            return {"error": {"type": e.get("code") or "error", "message": e.get("message")}}
        if isinstance(e.get("response"), Mapping):
            seen = e["response"]
            if e.get("type") in _FINAL:
                final = seen
    return final or seen


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _chat(events: list[Mapping[str, Any]]) -> Mapping[str, Any]:
    out: dict[str, Any] = {"object": "chat.completion"}
    choices: dict[int, dict[str, Any]] = {}
    calls: dict[tuple[int, int], dict[str, Any]] = {}
    texts = _Pieces()
    for chunk in events:
        if isinstance(chunk.get("error"), Mapping):
            return {"error": chunk["error"]}
        for key in ("id", "created", "model", "system_fingerprint", "service_tier"):
            if key in chunk and key not in out:
                out[key] = chunk[key]
        if isinstance(chunk.get("usage"), Mapping):  # the final chunk, with include_usage
            out["usage"] = chunk["usage"]
        for c in _listed(chunk.get("choices")):
            if not isinstance(c, Mapping):
                continue
            i = _index(c)
            choice = choices.setdefault(
                i, {"index": i, "message": {"role": "assistant", "content": None}}
            )
            message = choice["message"]
            raw_delta = c.get("delta")
            delta: Mapping[str, Any] = raw_delta if isinstance(raw_delta, Mapping) else {}
            if isinstance(delta.get("content"), str):
                texts.add(message, "content", delta["content"])
            for tc in _listed(delta.get("tool_calls")):
                if isinstance(tc, Mapping):
                    _tool_call_delta(calls, message, i, tc, texts)
            if c.get("finish_reason") is not None:
                choice["finish_reason"] = c["finish_reason"]
    texts.join()
    out["choices"] = [choices[i] for i in sorted(choices)]
    return out


def _tool_call_delta(
    calls: dict[tuple[int, int], dict[str, Any]],
    message: dict[str, Any],
    choice: int,
    tc: Mapping[str, Any],
    texts: _Pieces,
) -> None:
    key = (choice, _index(tc))
    call = calls.get(key)
    if call is None:
        call = calls[key] = {
            "id": "",
            "type": "function",
            "function": {"name": "", "arguments": ""},
        }
        message.setdefault("tool_calls", []).append(call)
    if tc.get("id"):
        call["id"] = tc["id"]
    fn = tc.get("function")
    if isinstance(fn, Mapping):
        texts.add(call["function"], "name", fn.get("name"))
        texts.add(call["function"], "arguments", fn.get("arguments"))


def flat_line(exchange: Exchange) -> dict[str, Any]:
    """The exchange as a request log's flat line (``timestamp``, ``url``, ``status``,
    ``request``, ``response``), the shape :mod:`requests_log` reads."""
    line = {
        "timestamp": exchange.timestamp,
        "url": exchange.url,
        "status": exchange.status,
        "request": exchange.request,
        "response": exchange.response,
    }
    return {k: v for k, v in line.items() if v is not None}
