"""A fake provider on loopback, answering as the Anthropic and OpenAI APIs do: status codes,
JSON bodies and event streams with the event types and usage fields of their references.

The ``x-fake`` request header picks a behaviour: ``fail-500`` (an API error), ``slow`` (no answer),
``midstream-error`` (an error event inside the stream), ``drop`` (the connection cut
mid-stream), ``long-N`` (N MiB of text deltas), ``trickle`` (deltas 50 ms apart).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

DEFAULT_USAGE = {"input": 12, "cache_read": 0, "cache_write": 1800, "write_1h": 0, "output": 7}


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: bytes
    query: str


@dataclass
class FakeUpstream:
    """Serves in a thread of its own; ``usage`` (a queue) sets each response's bill."""

    seen: list[Seen] = field(default_factory=list)
    usage: list[dict[str, int]] = field(default_factory=list)
    port: int = 0

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._started.wait(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application(client_max_size=512 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._started.set()
        self._loop.run_forever()

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _bill(self) -> dict[str, int]:
        return self.usage.pop(0) if self.usage else dict(DEFAULT_USAGE)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.seen.append(Seen(request.path, dict(request.headers), body, request.query_string))
        try:
            req = json.loads(body)
        except ValueError:
            req = None
        if not isinstance(req, dict):
            return _json(400, _invalid(request.path, "the body is not valid JSON"))
        model = str(req.get("model", ""))
        behaviour = request.headers.get("x-fake", "")
        if behaviour == "fail-500":
            return _json(500, _api_error(request.path, "api_error", "Internal server error"))
        if behaviour == "slow":
            await asyncio.sleep(30)
        path = request.path
        if path.endswith("/messages/count_tokens"):
            return _json(200, {"input_tokens": len(body) // 4})
        bill = self._bill()
        if path.endswith("/messages"):
            if req.get("stream"):
                return await self._stream(request, behaviour, _anthropic_events(model, bill))
            return _json(200, _anthropic_message(model, bill))
        if path.endswith("/responses"):
            if req.get("stream"):
                return await self._stream(request, behaviour, _responses_events(model, bill))
            return _json(200, _response(model, bill))
        if path.endswith("/chat/completions"):
            if req.get("stream"):
                return await self._stream(request, behaviour, _chat_events(model, bill, req))
            return _json(200, _chat(model, bill))
        return _json(404, _api_error(path, "not_found_error", f"no route {path}"))

    async def _stream(
        self, request: web.Request, behaviour: str, events: list[bytes]
    ) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream; charset=utf-8"})
        await resp.prepare(request)
        async for piece in _paced(behaviour, events):
            if piece is None:  # cut the connection mid-stream
                assert request.transport is not None
                request.transport.close()
                return resp
            await resp.write(piece)
        await resp.write_eof()
        return resp


async def _paced(behaviour: str, events: list[bytes]) -> AsyncIterator[bytes | None]:
    head, tail = events[:3], events[3:]
    for e in head:
        yield e
    if behaviour == "drop":
        yield None
        return
    if behaviour == "midstream-error":
        yield _sse(
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
        return
    if behaviour.startswith("long-"):
        delta = _sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "x" * 16_000},
            },
        )
        for _ in range(int(behaviour[5:]) * 1024 * 1024 // len(delta)):
            yield delta
    for e in tail:
        if behaviour == "trickle":
            await asyncio.sleep(0.05)
        yield e


def _json(status: int, body: dict[str, Any]) -> web.Response:
    return web.Response(
        status=status,
        body=json.dumps(body).encode(),
        content_type="application/json",
        headers={"request-id": "req_fake0001", "x-request-id": "req_fake0001"},
    )


def _sse(event: str | None, data: dict[str, Any]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _api_error(path: str, kind: str, message: str) -> dict[str, Any]:
    if "/messages" in path:
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _invalid(path: str, message: str) -> dict[str, Any]:
    return _api_error(path, "invalid_request_error", message)


def _anthropic_usage(bill: dict[str, int], output: int) -> dict[str, Any]:
    five = bill["cache_write"] - bill["write_1h"]
    return {
        "input_tokens": bill["input"],
        "cache_creation_input_tokens": bill["cache_write"],
        "cache_read_input_tokens": bill["cache_read"],
        "cache_creation": {
            "ephemeral_5m_input_tokens": five,
            "ephemeral_1h_input_tokens": bill["write_1h"],
        },
        "output_tokens": output,
        "service_tier": "standard",
    }


def _anthropic_message(model: str, bill: dict[str, int]) -> dict[str, Any]:
    return {
        "id": "msg_01FakeUpstream",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "Hello from the fake upstream."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(bill, bill["output"]),
    }


def _anthropic_events(model: str, bill: dict[str, int]) -> list[bytes]:
    start = _anthropic_message(model, bill) | {"content": [], "stop_reason": None}
    start["usage"] = _anthropic_usage(bill, 1)
    return [
        _sse("message_start", {"type": "message_start", "message": start}),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        _sse("ping", {"type": "ping"}),
        _sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hello from the fake upstream."},
            },
        ),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": bill["output"]},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]


def _openai_input(bill: dict[str, int]) -> int:
    return bill["input"] + bill["cache_read"] + bill["cache_write"]


def _response(model: str, bill: dict[str, int], status: str = "completed") -> dict[str, Any]:
    total = _openai_input(bill)
    return {
        "id": "resp_fake0001",
        "object": "response",
        "created_at": 1764633600,
        "status": status,
        "model": model,
        "output": [
            {
                "type": "message",
                "id": "msg_fake0001",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": "Hello from the fake upstream.",
                        "annotations": [],
                    }
                ],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": total,
            "input_tokens_details": {"cached_tokens": bill["cache_read"]},
            "output_tokens": bill["output"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": total + bill["output"],
        },
    }


def _responses_events(model: str, bill: dict[str, int]) -> list[bytes]:
    done = _response(model, bill)
    started = done | {"status": "in_progress", "output": [], "usage": None}
    item = done["output"][0]
    part = item["content"][0]
    events = [
        ("response.created", {"response": started}),
        ("response.in_progress", {"response": started}),
        ("response.output_item.added", {"output_index": 0, "item": item | {"content": []}}),
        (
            "response.content_part.added",
            {
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "part": part | {"text": ""},
            },
        ),
        (
            "response.output_text.delta",
            {"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": part["text"]},
        ),
        (
            "response.output_text.done",
            {"item_id": item["id"], "output_index": 0, "content_index": 0, "text": part["text"]},
        ),
        (
            "response.content_part.done",
            {"item_id": item["id"], "output_index": 0, "content_index": 0, "part": part},
        ),
        ("response.output_item.done", {"output_index": 0, "item": item}),
        ("response.completed", {"response": done}),
    ]
    return [_sse(k, {"type": k, "sequence_number": i} | v) for i, (k, v) in enumerate(events)]


def _chat(model: str, bill: dict[str, int]) -> dict[str, Any]:
    total = _openai_input(bill)
    return {
        "id": "chatcmpl-fake0001",
        "object": "chat.completion",
        "created": 1764633600,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello from the fake upstream."},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": total,
            "completion_tokens": bill["output"],
            "total_tokens": total + bill["output"],
            "prompt_tokens_details": {"cached_tokens": bill["cache_read"]},
        },
    }


def _chat_events(model: str, bill: dict[str, int], req: dict[str, Any]) -> list[bytes]:
    base = {
        "id": "chatcmpl-fake0001",
        "object": "chat.completion.chunk",
        "created": 1764633600,
        "model": model,
    }
    usage = _chat(model, bill)["usage"]
    chunks = [
        base
        | {
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ]
        },
        base
        | {
            "choices": [
                {
                    "index": 0,
                    "delta": {"content": "Hello from the fake upstream."},
                    "finish_reason": None,
                }
            ]
        },
        base | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    options = req.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        chunks.append(base | {"choices": [], "usage": usage})
    return [_sse(None, c) for c in chunks] + [b"data: [DONE]\n\n"]
