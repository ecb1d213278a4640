"""OpenTelemetry traces: LLM spans of an OTLP JSON export → one session with measured usage.

The file is OTLP JSON: one ``ExportTraceServiceRequest`` object
(``{"resourceSpans": [...]}``), or one per line (JSON Lines, as the Collector's
file exporter writes). Two attribute conventions are read:

- **GenAI semantic conventions**: ``gen_ai.request.model`` / ``gen_ai.response.model``,
  ``gen_ai.provider.name`` (or the older ``gen_ai.system``), ``gen_ai.usage.input_tokens``,
  ``gen_ai.usage.cache_read.input_tokens``, ``gen_ai.usage.cache_creation.input_tokens``,
  ``gen_ai.usage.output_tokens``, and the messages when recorded:
  ``gen_ai.system_instructions``, ``gen_ai.input.messages``, ``gen_ai.output.messages``
  (JSON text of ``{role, parts: [{type, content | name, arguments | response}]}``).
- **OpenInference** (as Phoenix writes it): ``openinference.span.kind = LLM``,
  ``llm.model_name``, ``llm.provider`` / ``llm.system``, ``llm.token_count.prompt``,
  ``llm.token_count.prompt_details.cache_read`` / ``cache_write``,
  ``llm.token_count.completion``, and the flattened ``llm.input_messages.N.message.*``,
  ``llm.output_messages.N.message.*`` and ``llm.tools.N.tool.json_schema``.

Both conventions count cached tokens in the input count, so the uncached input
is ``input − cache_read − cache_write``; an input smaller than its cached parts
was already the uncached count (some instrumentations report it so) and is kept.
Every LLM span becomes one request, in start-time order; see docs/fleet.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assembler.sessions.importers.history import (
    Events,
    Imported,
    TokenCount,
    content_text,
    json_text,
    session_doc,
)
from assembler.sessions.importers.records import (
    MAX_BYTES,
    ImporterError,
    Record,
    Skipped,
    as_int,
    kind,
    no_requests,
    read_jsonl,
    usage,
)

ROOT = "otel_trace"
PREFIX_TEXT = "[system prompt and tool definitions: not recorded in the trace]"
Block = dict[str, Any]
_INDEXED = re.compile(r"^llm\.(input_messages|output_messages|tools)\.(\d+)\.(.+)$")
_PROVIDERS = (  # a keyword of the provider or model name → our provider
    ("anthropic", "anthropic"),
    ("claude", "anthropic"),
    ("deepseek", "deepseek"),
    ("gemini", "gemini"),
    ("vertex", "gemini"),
    ("google", "gemini"),
    ("openai", "openai"),
    ("azure", "openai"),
    ("gpt", "openai"),
)


@dataclass
class LlmSpan:
    record: Record
    name: str
    start: datetime
    attrs: dict[str, Any]


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


def _is_llm(attrs: Mapping[str, Any]) -> bool:
    if attrs.get("openinference.span.kind") == "LLM":
        return True
    return any(k in attrs for k in ("gen_ai.request.model", "gen_ai.response.model"))


def _spans(records: list[Record]) -> list[LlmSpan]:
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
                for span in spans if isinstance(spans, list) else []:
                    if not isinstance(span, Mapping):
                        continue
                    name = str(span.get("name", ""))
                    attrs = _attrs(rec, span.get("attributes"), f"span {name!r}")
                    if _is_llm(attrs):
                        found.append(LlmSpan(rec, name, _time(rec, span), attrs))
    found.sort(key=lambda s: s.start)  # stable: spans of one instant keep file order
    return found


def _model(s: LlmSpan) -> str:
    for key in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"):
        if isinstance(s.attrs.get(key), str) and s.attrs[key]:
            return str(s.attrs[key])
    raise s.record.fail(f"span {s.name!r}: gen_ai.request.model: expected the model name")


def _provider(s: LlmSpan, model: str) -> str:
    names = [
        s.attrs.get(k)
        for k in ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
    ]
    text = " ".join(str(n).lower() for n in names if isinstance(n, str)) + " " + model.lower()
    for keyword, provider in _PROVIDERS:
        if keyword in text:
            return provider
    raise s.record.fail(
        f"span {s.name!r}: gen_ai.provider.name: expected anthropic, openai, gemini or deepseek"
        f" (or a model of theirs), found {text.strip()[:60]!r}"
    )


def measured(a: Mapping[str, Any]) -> dict[str, int] | None:
    """Usage in our terms (``input`` uncached), from either convention; None if absent."""
    keys = {
        "total": ("gen_ai.usage.input_tokens", "llm.token_count.prompt"),
        "read": (
            "gen_ai.usage.cache_read.input_tokens",
            "llm.token_count.prompt_details.cache_read",
        ),
        "write": (
            "gen_ai.usage.cache_creation.input_tokens",
            "llm.token_count.prompt_details.cache_write",
        ),
        "output": ("gen_ai.usage.output_tokens", "llm.token_count.completion"),
    }
    if not any(k in a for names in keys.values() for k in names):
        return None
    got = {what: next((as_int(a[k]) for k in names if k in a), 0) for what, names in keys.items()}
    total, read, write = got["total"], got["read"], got["write"]
    uncached = total - read - write if total >= read + write else total
    return usage(uncached, read, write, got["output"])


def _json_list(s: LlmSpan, key: str) -> list[Any]:
    """A JSON-text attribute holding a list (messages, parts); [] when absent."""
    raw = s.attrs.get(key)
    if raw is None:
        return []
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except (json.JSONDecodeError, RecursionError):
        raise s.record.fail(f"span {s.name!r}: {key}: expected JSON text") from None
    if not isinstance(value, list):
        raise s.record.fail(f"span {s.name!r}: {key}: expected a JSON list, found {kind(value)}")
    return value


def _parts(msg: Mapping[str, Any]) -> list[Any]:
    parts = msg.get("parts")
    return parts if isinstance(parts, list) else []


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, Mapping):
        return ""
    if part.get("type") == "text":
        return content_text(part.get("content"))
    return json_text(part)  # a tool call or its response, as sent


def _genai_blocks(s: LlmSpan) -> list[Block]:
    blocks: list[Block] = []
    for part in _json_list(s, "gen_ai.system_instructions"):
        blocks.append(
            {"section": "system", "name": f"system[{len(blocks)}]", "text": _part_text(part)}
        )
    for i, msg in enumerate(_json_list(s, "gen_ai.input.messages")):
        if not isinstance(msg, Mapping):
            continue
        role = msg.get("role")
        text = "\n".join(_part_text(p) for p in _parts(msg))
        if role == "system":
            blocks.append({"section": "system", "name": f"system[{len(blocks)}]", "text": text})
        else:
            who = "assistant" if role == "assistant" else "user"
            blocks.append(
                {"section": "messages", "name": f"messages[{i}] {role}", "role": who, "text": text}
            )
    return blocks


def _indexed(s: LlmSpan, group: str) -> list[dict[str, Any]]:
    items: dict[int, dict[str, Any]] = {}
    for key, value in s.attrs.items():
        m = _INDEXED.match(key)
        if m and m.group(1) == group:
            items.setdefault(int(m.group(2)), {})[m.group(3)] = value
    return [items[i] for i in sorted(items)]


def _message_text(m: Mapping[str, Any]) -> str:
    parts = [str(m["message.content"])] if isinstance(m.get("message.content"), str) else []
    parts += [str(v) for k, v in sorted(m.items()) if k.endswith("message_content.text")]
    parts += [str(v) for k, v in sorted(m.items()) if ".tool_call.function." in k]
    return "\n".join(parts)


def _openinference_blocks(s: LlmSpan) -> list[Block]:
    blocks: list[Block] = [
        {"section": "tools", "name": f"tools[{i}]", "text": str(t.get("tool.json_schema", ""))}
        for i, t in enumerate(_indexed(s, "tools"))
    ]
    for i, m in enumerate(_indexed(s, "input_messages")):
        role, text = m.get("message.role"), _message_text(m)
        if role == "system":
            blocks.append({"section": "system", "name": f"system[{i}]", "text": text})
        else:
            who = "assistant" if role == "assistant" else "user"
            blocks.append(
                {"section": "messages", "name": f"messages[{i}] {role}", "role": who, "text": text}
            )
    return blocks


def _answer(s: LlmSpan) -> str:
    if "gen_ai.output.messages" in s.attrs:
        out = _json_list(s, "gen_ai.output.messages")
        return "\n".join(_part_text(p) for m in out if isinstance(m, Mapping) for p in _parts(m))
    return "\n".join(_message_text(m) for m in _indexed(s, "output_messages"))


def _records(path: Path, skipped: Skipped) -> list[Record]:
    """One JSON document (pretty-printed or not), else JSON Lines."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ImporterError(str(path), f"the file is over the {MAX_BYTES:,}-byte limit")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImporterError(str(path), f"cannot read the file: {exc}") from None
    try:
        whole = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return read_jsonl(path, skipped)
    if not isinstance(whole, dict):
        raise ImporterError(str(path), f"expected an OTLP JSON object, found {kind(whole)}", line=1)
    return [Record(1, whole, str(path))]


def import_otel(path: Path, count: TokenCount) -> Imported:
    skipped = Skipped()
    spans = _spans(_records(path, skipped))
    if not spans:
        raise no_requests(
            str(path), "spans with gen_ai.request.model or openinference.span.kind LLM"
        )
    steps = []
    for s in spans:
        model = _model(s)
        blocks = _genai_blocks(s) or _openinference_blocks(s)
        steps.append((s, model, _provider(s, model), blocks, measured(s.attrs)))
    # What the span does not record (the tools, a system prompt) is sized from usage:
    # the smallest gap between a request's measured input and its recorded blocks.
    gaps = [
        u["input"] + u["cache_read"] + u["cache_write"] - sum(count(b["text"]) for b in blocks)
        for _, _, _, blocks, u in steps
        if u is not None
    ]
    prefix = max(0, min(gaps, default=0))
    events = Events()
    first = steps[0]
    ident = first[0].attrs.get("session.id") or first[0].attrs.get("gen_ai.conversation.id")
    current = (first[2], first[1])
    events.enter(first[0].start, ROOT)
    for number, (s, model, provider, blocks, u) in enumerate(steps, start=1):
        if (provider, model) != current:
            change = {"model": model} | ({"provider": provider} if provider != current[0] else {})
            events.add("change", s.start, **change)
            current = (provider, model)
        request: list[Block] = []
        if prefix or not blocks:  # an empty prefix is written only when nothing else is
            request.append(
                {
                    "section": "system",
                    "name": "unrecorded prefix",
                    "text": PREFIX_TEXT,
                    "tokens": prefix,
                }
            )
        request += blocks
        if not blocks and u is not None:
            # nothing recorded: the rest of the input, sized from usage; the text names
            # the request, so no two requests' unknown messages pass for the same
            rest = u["input"] + u["cache_read"] + u["cache_write"] - prefix
            text = f"[messages of request {number}: not recorded in the trace]"
            request.append(
                {
                    "section": "messages",
                    "name": "unrecorded messages",
                    "role": "user",
                    "text": text,
                    "tokens": max(0, rest),
                }
            )
        request[0]["breakpoint"] = True  # the usual agent markers: end of the prefix, last block
        request[-1]["breakpoint"] = True
        events.add("llm", s.start, output=_answer(s), usage=u, request={"blocks": request})
    events.close_all(spans[-1].start)
    data = session_doc(
        id=str(ident) if ident else path.stem,
        agent="otel",
        provider=first[2],
        model=first[1],
        environment=None,
        events=events.events,
    )
    return Imported(data, skipped.warnings(str(path)))
