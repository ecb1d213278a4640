"""Request logs: one raw request and its response per line (from a proxy or SDK hook).

Each line is a JSON object ``{"timestamp", "request", "response"}`` (also
``time`` / ``request_body`` / ``response_body``; an optional ``url`` or
``provider`` settles the API). The API is one of Anthropic Messages, OpenAI
Chat Completions or OpenAI Responses. The blocks and breakpoints are the
request's own; usage comes from the response. See docs/importers.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assembler.sessions.importers.history import (
    Events,
    Imported,
    content_text,
    json_text,
    session_doc,
)
from assembler.sessions.importers.records import (
    Record,
    Skipped,
    anthropic_usage,
    as_int,
    iter_items,
    kind,
    no_requests,
    openai_usage,
    parse_time,
    read_jsonl,
)
from assembler.sessions.importers.request_cache import request_settings, response_diagnostic

ROOT = "requests_log"
ANTHROPIC, CHAT, RESPONSES = "anthropic-messages", "openai-chat", "openai-responses"
Block = dict[str, Any]


def _map(rec: Record, *keys: str) -> Mapping[str, Any]:
    for key in keys:
        value = rec.data.get(key)
        if isinstance(value, Mapping):
            return value
    found = next((rec.data[k] for k in keys if k in rec.data), None)
    raise rec.fail(f"{keys[0]}: expected the JSON body as an object, found {kind(found)}")


def detect(rec: Record, request: Mapping[str, Any], response: Mapping[str, Any]) -> str:
    """Which API a line speaks: its URL, else the response, else the request shape."""
    url = rec.data.get("url") or rec.data.get("path") or ""
    if isinstance(url, str):
        for marker, api in (
            ("/messages", ANTHROPIC),
            ("/chat/completions", CHAT),
            ("/responses", RESPONSES),
        ):
            if marker in url:
                return api
    u = response.get("usage")
    u = u if isinstance(u, Mapping) else {}
    if response.get("object") == "chat.completion" or "prompt_tokens" in u:
        return CHAT
    if response.get("object") == "response" or "input_tokens_details" in u or "input" in request:
        return RESPONSES
    if response.get("type") == "message" or "cache_read_input_tokens" in u or "system" in request:
        return ANTHROPIC
    if rec.data.get("provider") == "anthropic":
        return ANTHROPIC
    if "messages" in request:
        return CHAT
    raise rec.fail("request: expected an Anthropic Messages, OpenAI Chat or Responses body")


_MARKERS = ("cache_control", "prompt_cache_breakpoint")  # Anthropic; OpenAI GPT-5.6+


def _marked(part: Mapping[str, Any]) -> bool:
    return any(isinstance(part.get(m), Mapping) for m in _MARKERS)


def _mark(block: Block, part: Mapping[str, Any] | None) -> None:
    """Put ``part``'s cache marker, if it has one, on ``block``, with the lifetime it
    asks for (``cache_control.ttl``; kept only where it differs from the request's)."""
    if part is None or not _marked(part):
        return
    block["breakpoint"] = True
    control = part.get("cache_control")
    if isinstance(control, Mapping) and control.get("ttl") in ("5m", "1h"):
        block["ttl"] = control["ttl"]


def own_lifetimes(blocks: list[Block], request_ttl: str | None) -> list[Block]:
    """``blocks`` with a marker's lifetime kept only where it differs from the request's
    (a request mixing 1-hour and 5-minute markers); none when the request has no lifetime
    the API takes."""
    for block in blocks:
        if "ttl" in block and (request_ttl is None or block["ttl"] == request_ttl):
            del block["ttl"]
    return blocks


def _without_marker(part: Mapping[str, Any]) -> dict[str, Any]:
    # The marker is not content: moving it must not look like a changed block.
    return {k: v for k, v in part.items() if k not in _MARKERS}


def write_ttl(request: Mapping[str, Any]) -> str | None:
    """The lifetime an Anthropic request's cache writes are made with, from its markers'
    ``cache_control.ttl``: ``1h`` when every marker asks for an hour, ``5m`` when any
    asks for five minutes or names none (the API's default); 1-hour entries must come
    first, so the tail the next request reads is then a 5-minute one. ``None`` when no
    marker names a lifetime or one names a value the API does not take."""
    markers = [
        part["cache_control"]
        for part in (
            request,
            *iter_items(request.get("tools")),
            *iter_items(request.get("system")),
            *(p for m in iter_items(request.get("messages")) for p in iter_items(m.get("content"))),
        )
        if isinstance(part.get("cache_control"), Mapping)
    ]
    if not any("ttl" in m for m in markers):
        return None
    ttls = {m.get("ttl", "5m") for m in markers}
    if not ttls <= {"5m", "1h"}:
        return None
    return "5m" if "5m" in ttls else "1h"


def _tool_blocks(tools: Any) -> list[Block]:
    """One block per tool definition, so a marker on the last tool lands exactly."""
    blocks = []
    for i, tool in enumerate(iter_items(tools)):
        fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        name = fn.get("name") if isinstance(fn, Mapping) else None
        block: Block = {
            "section": "tools",
            "name": f"tools[{i}]" + (f" {name}" if isinstance(name, str) else ""),
            "text": json_text(_without_marker(tool)),
        }
        _mark(block, tool)
        blocks.append(block)
    return blocks


def _part_text(part: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kind, text) of one content part; thinking and reasoning are left out."""
    ptype = part.get("type")
    if ptype in ("text", "input_text", "output_text"):
        return "text", str(part.get("text", ""))
    if ptype == "tool_use":
        body = {
            "type": "tool_use",
            "id": part.get("id"),
            "name": part.get("name"),
            "input": part.get("input"),
        }
        return "tool_use", json_text(body)
    if ptype == "tool_result":
        return "tool_result", content_text(part.get("content"))
    if ptype in ("image", "input_image", "image_url", "document", "input_file"):
        return str(ptype), f"[{ptype}]"
    return None


def _role(value: Any) -> str:
    # The schema knows user and assistant; tool results are input the user side sends.
    return "assistant" if value == "assistant" else "user"


class _Blocks:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.messages = 0
        self.system = 0

    def system_text(self, text: str, marker: Mapping[str, Any] | None = None) -> None:
        block: Block = {"section": "system", "name": f"system[{self.system}]", "text": text}
        _mark(block, marker)
        self.blocks.append(block)
        self.system += 1

    def message(
        self, role: str, what: str, text: str, marker: Mapping[str, Any] | None = None
    ) -> None:
        block: Block = {
            "section": "messages",
            "name": f"messages[{self.messages}] {what}",
            "role": role,
            "text": text,
        }
        _mark(block, marker)
        self.blocks.append(block)
        self.messages += 1

    def content(self, role: str, content: Any) -> None:
        if isinstance(content, str):
            self.message(role, "text", content)
            return
        for part in iter_items(content):
            got = _part_text(part)
            if got is not None:
                self.message(role, got[0], got[1], part)


def anthropic_blocks(request: Mapping[str, Any]) -> list[Block]:
    b = _Blocks()
    b.blocks.extend(_tool_blocks(request.get("tools")))
    system = request.get("system")
    if isinstance(system, str):
        b.system_text(system)
    for part in iter_items(system):
        b.system_text(str(part.get("text", "")), part)
    for msg in iter_items(request.get("messages")):
        b.content(_role(msg.get("role")), msg.get("content"))
    if _marked(request) and b.blocks:  # top-level cache_control: automatic, on the last block
        _mark(b.blocks[-1], request)
    return b.blocks


def chat_blocks(request: Mapping[str, Any]) -> list[Block]:
    b = _Blocks()
    b.blocks.extend(_tool_blocks(request.get("tools")))
    for msg in iter_items(request.get("messages")):
        role = msg.get("role")
        if role in ("system", "developer"):
            b.system_text(content_text(msg.get("content")))
            continue
        if msg.get("content") is not None:
            b.content(_role(role), msg.get("content"))
        for call in iter_items(msg.get("tool_calls")):
            b.message("assistant", "tool_call", json_text(call))
    return b.blocks


def responses_blocks(request: Mapping[str, Any]) -> list[Block]:
    b = _Blocks()
    b.blocks.extend(_tool_blocks(request.get("tools")))
    if isinstance(request.get("instructions"), str):
        b.system_text(request["instructions"])
    items = request.get("input")
    if isinstance(items, str):
        b.message("user", "text", items)
    for item in iter_items(items):
        itype = item.get("type", "message")
        if itype == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                marker = next((p for p in iter_items(item.get("content")) if _marked(p)), None)
                b.system_text(content_text(item.get("content")), marker)
            else:
                b.content(_role(role), item.get("content"))
        elif itype == "function_call":
            body = {k: item.get(k) for k in ("type", "call_id", "name", "arguments")}
            b.message("assistant", "function_call", json_text(body))
        elif itype == "function_call_output":
            b.message("user", "function_call_output", content_text(item.get("output")))
    return b.blocks


def _details(u: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = u.get(key)
    return value if isinstance(value, Mapping) else {}


def measured(api: str, response: Mapping[str, Any]) -> dict[str, int] | None:
    u = response.get("usage")
    if not isinstance(u, Mapping):
        return None
    if api == ANTHROPIC:
        return anthropic_usage(u)
    if api == CHAT:
        d = _details(u, "prompt_tokens_details")
        return openai_usage(
            as_int(u.get("prompt_tokens")),
            as_int(d.get("cached_tokens")),
            as_int(d.get("cache_write_tokens")),
            as_int(u.get("completion_tokens")),
        )
    d = _details(u, "input_tokens_details")
    return openai_usage(
        as_int(u.get("input_tokens")),
        as_int(d.get("cached_tokens")),
        as_int(d.get("cache_write_tokens")),
        as_int(u.get("output_tokens")),
    )


def answer(api: str, response: Mapping[str, Any]) -> str:
    if api == ANTHROPIC:
        return "\n".join(t for p in iter_items(response.get("content")) if (t := _answer_part(p)))
    if api == CHAT:
        choice = next(iter_items(response.get("choices")), {})
        msg = choice.get("message")
        if not isinstance(msg, Mapping):
            return ""
        calls = [json_text(c) for c in iter_items(msg.get("tool_calls"))]
        return "\n".join([content_text(msg.get("content")), *calls]).strip()
    parts = []
    for item in iter_items(response.get("output")):
        if item.get("type") == "message":
            parts.append(content_text(item.get("content")))
        elif item.get("type") == "function_call":
            parts.append(json_text({k: item.get(k) for k in ("name", "arguments")}))
    return "\n".join(parts)


def _answer_part(part: Mapping[str, Any]) -> str:
    got = _part_text(part)
    return got[1] if got else ""


def _time(rec: Record, response: Mapping[str, Any]) -> datetime:
    for key in ("timestamp", "time", "created_at"):
        if isinstance(rec.data.get(key), str):
            return parse_time(rec.data[key], rec)
    for key in ("created", "created_at"):  # OpenAI responses carry a Unix time
        value = response.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1e11:
            return datetime.fromtimestamp(value, tz=UTC)
    raise rec.fail(
        "timestamp: expected an ISO 8601 time on the line or a Unix created time in the response"
    )


BUILDERS = {ANTHROPIC: anthropic_blocks, CHAT: chat_blocks, RESPONSES: responses_blocks}


def import_requests(path: Path) -> Imported:
    skipped = Skipped()
    events = Events()
    initial: tuple[str, str] | None = None  # the session header's provider and model
    current = ("", "")
    for rec in read_jsonl(path, skipped):
        request = _map(rec, "request", "request_body")
        response = _map(rec, "response", "response_body")
        api = detect(rec, request, response)
        model = request.get("model") or response.get("model")
        if not isinstance(model, str) or not model:
            raise rec.fail(f"request.model: expected the model name, found {kind(model)}")
        request_ttl = write_ttl(request) if api == ANTHROPIC else None
        blocks = own_lifetimes(BUILDERS[api](request), request_ttl)
        if not blocks:
            raise rec.fail("request: expected at least one message, system prompt or tool")
        at = _time(rec, response)
        now = ("anthropic" if api == ANTHROPIC else "openai", model[:200])
        if initial is None:
            initial = current = now
            events.enter(at, ROOT)
        elif now != current:
            change = {"model": now[1]} | ({"provider": now[0]} if now[0] != current[0] else {})
            events.add("change", at, **change)
            current = now
        events.add(
            "llm",
            at,
            output=answer(api, response),
            usage=measured(api, response),
            request={"blocks": blocks},
            settings=request_settings(request, response),
            diagnostic=response_diagnostic(api == ANTHROPIC, request, response),
            ttl=request_ttl,
        )
    if initial is None or events.last is None:
        raise no_requests(str(path), 'lines like {"timestamp", "request", "response"}')
    events.close_all(events.last)
    data = session_doc(
        id=path.stem,
        agent="requests-log",
        provider=initial[0],
        model=initial[1],
        environment=None,
        events=events.events,
    )
    return Imported(data, skipped.warnings(str(path)))
