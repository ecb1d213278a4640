"""Request logs: one raw request and its response per line (from a proxy or SDK hook).

Each line is a JSON object ``{"timestamp", "request", "response"}`` (also
``time`` / ``request_body`` / ``response_body``; an optional ``url`` or
``provider`` settles the API), or a captured exchange whose request and response
carry their bodies (:mod:`exchange`, streamed responses reassembled). The API is one of Anthropic Messages, OpenAI
Chat Completions or OpenAI Responses. The blocks and breakpoints are the
request's own; usage comes from the response. See docs/importers.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from assembler.limits import MAX_NAME_CHARS, kind_of
from assembler.sessions.importers.history import (
    Events,
    Imported,
    compact_requests,
    content_text,
    json_text,
    session_doc,
)
from assembler.sessions.importers.records import (
    Record,
    Skipped,
    anthropic_usage,
    as_int,
    bad_usage,
    iter_items,
    no_requests,
    openai_usage,
    read_jsonl,
)
from assembler.sessions.importers.request_cache import request_settings, response_diagnostic
from assembler.sessions.importers.request_logs.exchange import (
    ExchangeError,
    flat_line,
    is_capture,
    read_exchange,
)
from assembler.sessions.importers.request_logs.requests_lines import (
    Failures,
    check_url,
    failure,
    id_problem,
    provider,
    request_time,
    url_model,
)
from assembler.sessions.importers.request_logs.requests_shapes import (
    anthropic_blocks,
    chat_blocks,
    known_part_text,
    own_lifetimes,
    responses_blocks,
    write_ttl,
)
from assembler.sessions.importers.request_logs.responses_chain import ResponsesChain

ROOT = "requests_log"
Block = dict[str, Any]
ANTHROPIC, CHAT, RESPONSES = "anthropic-messages", "openai-chat", "openai-responses"
__all__ = [
    "anthropic_blocks",
    "chat_blocks",
    "import_requests",
    "requests_session",
    "responses_blocks",
]


def _map(rec: Record, *keys: str) -> Mapping[str, Any]:
    for key in keys:
        value = rec.data.get(key)
        if isinstance(value, Mapping):
            return value
    found = next((rec.data[k] for k in keys if k in rec.data), None)
    raise rec.fail(f"{keys[0]}: expected the JSON body as an object, found {kind_of(found)}")


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
        # DeepSeek names its hits apart (``prompt_cache_hit_tokens``; misses are the rest)
        hits = u.get("prompt_cache_hit_tokens", d.get("cached_tokens"))
        return openai_usage(
            as_int(u.get("prompt_tokens")),
            as_int(hits),
            as_int(d.get("cache_write_tokens")),
            as_int(u.get("completion_tokens")),
        )
    d = _details(u, "input_tokens_details")
    out = openai_usage(
        as_int(u.get("input_tokens")),
        as_int(d.get("cached_tokens")),
        as_int(d.get("cache_write_tokens")),
        as_int(u.get("output_tokens")),
    )
    # the usage has no count: each web_search_call output item is one search, billed
    searches = sum(i.get("type") == "web_search_call" for i in iter_items(response.get("output")))
    if searches:
        out["web_searches"] = searches
    return out


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
    got = known_part_text(part)
    return got[1] if got else ""


BUILDERS = {ANTHROPIC: anthropic_blocks, CHAT: chat_blocks, RESPONSES: responses_blocks}


@dataclass
class _Call:
    """One served call of the log, read but not yet placed in time."""

    rec: Record
    at: datetime
    api: str
    request: Mapping[str, Any]
    response: Mapping[str, Any]
    provider: str
    model: str


def _read_call(rec: Record, failures: Failures) -> _Call | None:
    if is_capture(rec.data):
        try:
            rec = Record(rec.line, flat_line(read_exchange(rec.data)), rec.source)
        except ExchangeError as exc:
            raise rec.fail(str(exc)) from None
    else:
        check_url(rec)
    raw = next((rec.data[k] for k in ("response", "response_body") if k in rec.data), None)
    why = failure(rec, raw)
    if why is not None:
        failures.add(rec, why)
        return None
    request = _map(rec, "request", "request_body")
    response = _map(rec, "response", "response_body")
    bad = bad_usage(response.get("usage"), "response.usage")  # a captured body was JSON text
    if bad is not None:
        raise rec.fail(f"{bad[0]}: {bad[1]}")
    api = detect(rec, request, response)
    model = request.get("model") or url_model(rec) or response.get("model")
    if not isinstance(model, str) or not model:
        raise rec.fail(f"request.model: expected the model name, found {kind_of(model)}")
    served_by = provider(rec, api == ANTHROPIC, response, model)
    at = request_time(rec, response)
    return _Call(rec, at, api, request, response, served_by, model[:MAX_NAME_CHARS])


def _check_ids(call: _Call) -> None:
    for field, value in (
        ("request.previous_response_id", call.request.get("previous_response_id")),
        ("response.id", call.response.get("id")),
    ):
        why = None if value is None else id_problem(value)
        if why is not None:
            raise call.rec.fail(f"{field}: {why}")


def _written(
    blocks: list[Block], before: list[Block] | None, shared: int, marks: list[int]
) -> dict[str, Any]:
    """The request as the session writes it: ``keep`` (the blocks it starts with of the
    request written before) and its own blocks. ``shared``: how many are known to be the
    same (a continued Responses conversation; ``marks``: its marked blocks); else they
    are compared, as the session document compares every importer's requests."""
    if not shared:
        if before is None:
            return {"blocks": blocks}
        pair = [{"type": "llm", "request": {"blocks": b}} for b in (before, blocks)]
        out: dict[str, Any] = compact_requests(pair)[1]["request"]
        return out
    out = {"keep": shared, "blocks": blocks[shared:]}
    marks = [k for k in marks if k < shared]
    if marks:
        out["breakpoints"] = marks
        hours = [k for k in marks if blocks[k].get("ttl") == "1h"]
        if hours:
            out["breakpoints_1h"] = hours
    return out


def _in_time_order(calls: list[_Call]) -> tuple[list[_Call], tuple[str, ...]]:
    """Calls by request time, ties in file order: a log written as calls complete puts a
    long call after shorter ones that started later."""
    late = next((c for p, c in pairwise(calls) if c.at < p.at), None)
    if late is None:
        return calls, ()
    ordered = sorted(calls, key=lambda c: c.at)
    first = late.rec.line
    return ordered, (
        f"lines not in time order were put in order of their timestamps (first at line {first})",
    )


def import_requests(path: Path) -> Imported:
    skipped = Skipped()
    got = requests_session(read_jsonl(path, skipped), str(path), path.stem)
    return Imported(got.data, skipped.warnings(str(path)) + got.warnings)


def requests_session(records: Iterable[Record], source: str, id: str) -> Imported:
    """The session of a request log's lines, already read (a file's, or a proxy's so far)."""
    failures = Failures()
    calls = [c for rec in records if (c := _read_call(rec, failures))]
    calls, order_note = _in_time_order(calls)
    chain = ResponsesChain()
    events = Events()
    initial: tuple[str, str] | None = None  # the session header's provider and model
    current = ("", "")
    before: list[Block] | None = None  # the blocks of the request written last
    for call in calls:
        rec, api, response, request = call.rec, call.api, call.response, call.request
        request_ttl = write_ttl(request) if api == ANTHROPIC else None
        shared, facts, marks = 0, None, []
        if api == RESPONSES:
            _check_ids(call)
            built = chain.build(rec.line, request, response)
            blocks, facts, marks = built.blocks, built.facts, built.marks
            shared = built.shared if built.base is before else 0
            own_lifetimes(blocks[built.shared :], None)  # the blocks before were done
        else:
            blocks = own_lifetimes(BUILDERS[api](request), request_ttl)
        if not blocks:
            raise rec.fail("request: expected at least one message, system prompt or tool")
        at = call.at
        now = (call.provider, call.model)
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
            request=_written(blocks, before, shared, marks),
            settings=request_settings(request, response, facts),
            diagnostic=response_diagnostic(api == ANTHROPIC, request, response),
            ttl=request_ttl,
        )
        before = blocks
    if initial is None or events.last is None:
        raise no_requests(
            source,
            'lines like {"timestamp", "request", "response"} or captured exchanges '
            '{"request": {"url", "body"}, "response": {"status_code", "body"}}',
        )
    events.close_all(events.last)
    data = session_doc(
        id=id,
        agent="requests-log",
        provider=initial[0],
        model=initial[1],
        environment=None,
        events=[],
    )
    # Written with keep already: compacting again would copy every kept block per request.
    data["events"] = events.events
    notes = failures.warnings() + order_note + chain.warnings()
    return Imported(data, notes)
