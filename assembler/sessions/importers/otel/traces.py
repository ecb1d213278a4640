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

The older GenAI names (before 1.27, as OpenLLMetry writes them) are fallbacks, the
current name winning: see ``spans.USAGE_KEYS``, ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``
messages, ``llm.request.functions.N.*`` tools and ``llm.request.type`` operations.

Only model calls become requests, one each, in start-time order; spans naming a model
that are no call (invoke_agent, embeddings, …) and failed calls without usage are
skipped and counted in a warning; see docs/fleet.md.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assembler.limits import MAX_ID_CHARS, ReadRefused, clip, kind_of, read_capped
from assembler.sessions.importers.history import (
    Events,
    Imported,
    TokenCount,
    content_text,
    json_text,
    session_doc,
)
from assembler.sessions.importers.otel.spans import LlmSpan, model_spans
from assembler.sessions.importers.records import (
    MAX_BYTES,
    ImporterError,
    Record,
    Skipped,
    no_requests,
    read_jsonl,
    usage,
)

ROOT = "otel_trace"
PREFIX_TEXT = "[system prompt and tool definitions: not recorded in the trace]"
Block = dict[str, Any]
_INDEXED = re.compile(
    r"^(llm\.(?:input_messages|output_messages|tools|request\.functions)|gen_ai\.(?:prompt|completion))"
    r"\.(\d+)\.(.+)$",
    re.DOTALL,
)
_INDEXED_HEADS = ("llm.", "gen_ai.prompt.", "gen_ai.completion.")
#: Digits of a flattened attribute's index (``llm.input_messages.N.…``): a list position.
_INDEX_DIGITS = 9
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


def _model(s: LlmSpan) -> str:
    for key in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"):
        if isinstance(s.attrs.get(key), str) and s.attrs[key]:
            return str(s.attrs[key])
    key = next((k for k in _MODEL_NAMES if k in s.attrs), "gen_ai.request.model")
    raise s.fail(key, f"expected the model name, found {kind_of(s.attrs.get(key))}")


_MODEL_NAMES = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")


def _provider(s: LlmSpan, model: str) -> str:
    names = [
        s.attrs.get(k)
        for k in ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
    ]
    text = " ".join(str(n).lower() for n in names if isinstance(n, str)) + " " + model.lower()
    for keyword, provider in _PROVIDERS:
        if keyword in text:
            return provider
    raise s.fail(
        "gen_ai.provider.name",
        "expected anthropic, openai, gemini or deepseek (or a model of theirs), "
        f"found {clip(text.strip())!r}",
    )


def _session_id(s: LlmSpan) -> str | None:
    for key in ("session.id", "gen_ai.conversation.id"):
        value = s.attrs.get(key)
        if value is None or value == "":
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or len(value) > MAX_ID_CHARS:
            found = f"{len(value):,} characters" if isinstance(value, str) else kind_of(value)
            raise s.fail(
                key, f"expected an id of at most {MAX_ID_CHARS:,} characters, found {found}"
            )
        return value
    return None


def _short(c: Mapping[str, int]) -> bool:
    """An input count smaller than its cached parts: no total, the uncached count."""
    return c["total"] < c["read"] + c["write"]


def measured(c: Mapping[str, int] | None, uncached_input: bool = False) -> dict[str, int] | None:
    """Usage in our terms (``input`` uncached) from the counts as recorded; None if absent.
    The conventions count cached tokens in the input (``uncached_input`` says this
    instrumentation does not)."""
    if c is None:
        return None
    total, read, write = c["total"], c["read"], c["write"]
    uncached = total if uncached_input or _short(c) else total - read - write
    return usage(uncached, read, write, c["output"])


def _uncached_input(spans: list[LlmSpan], providers: list[str]) -> set[tuple[str, str]]:
    """The (instrumentation scope, provider) pairs whose input counts leave cached tokens
    out. The GenAI conventions (and OpenInference) say the input count SHOULD include
    them; Anthropic's own ``input_tokens`` excludes them, and an instrumentation copying
    it does so on every span. A span whose input is smaller than its cache reads and
    writes holds no total: that proves the copy for its whole pair (decided per span, a
    copied count above its cached parts would pass for a total). Else the conventions hold."""
    return {
        (s.scope, p)
        for s, p in zip(spans, providers, strict=True)
        if (c := s.counts) is not None and _short(c)
    }


def _json_list(s: LlmSpan, key: str) -> list[Any]:
    """A JSON-text attribute holding a list (messages, parts); [] when absent."""
    raw = s.attrs.get(key)
    if raw is None:
        return []
    if not isinstance(raw, str | list):
        raise s.fail(key, f"expected JSON text, found {kind_of(raw)}")
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except (json.JSONDecodeError, RecursionError):
        raise s.fail(key, "expected JSON text") from None
    except ValueError:  # an integer over the interpreter's 4,300-digit limit
        raise s.fail(key, "expected JSON text, found a number of more than 4,300 digits") from None
    if not isinstance(value, list):
        raise s.fail(key, f"expected a JSON list, found {kind_of(value)}")
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
        text = "\n".join(_part_text(p) for p in _parts(msg))
        blocks.append(_message_block(i, len(blocks), msg.get("role"), text))
    return blocks


def _message_block(i: int, system_index: int, role: Any, text: str) -> Block:
    """Input message ``i``: a system block (named by ``system_index``) or a message."""
    if role == "system":
        return {"section": "system", "name": f"system[{system_index}]", "text": text}
    return {
        "section": "messages",
        "name": f"messages[{i}] {_shown_role(role)}",
        "role": "assistant" if role == "assistant" else "user",
        "text": text,
    }


def _indexed_any(s: LlmSpan) -> bool:
    """Whether the span has any flattened ``group.N.key`` attribute."""
    _indexed(s, "")
    return bool(s.groups)


def _indexed(s: LlmSpan, group: str) -> list[dict[str, Any]]:
    """``group.N.key`` attributes as one ``{key: value}`` per N, in N order (every group
    read in one pass over the span's attributes, the first time one is asked for)."""
    if s.groups is None:
        found: dict[str, dict[int, dict[str, Any]]] = {}
        for key, value in s.attrs.items():
            m = _INDEXED.match(key) if key.startswith(_INDEXED_HEADS) else None
            if m is None:
                continue
            if len(m.group(2)) > _INDEX_DIGITS:
                raise s.fail(
                    clip(key),
                    f"the index has {len(m.group(2)):,} digits; expected a list position",
                )
            found.setdefault(m.group(1), {}).setdefault(int(m.group(2)), {})[m.group(3)] = value
        s.groups = {g: [items[i] for i in sorted(items)] for g, items in found.items()}
    return s.groups.get(group, [])


def _shown_role(role: Any) -> str:
    """A recorded role as a block's name shows it: short text, never a structure."""
    return clip(role, 40) if isinstance(role, str) else kind_of(role)


def _message_text(m: Mapping[str, Any]) -> str:
    """An OpenInference message (``message.*``) or an older GenAI one (``content``, …)."""
    content = m.get("message.content", m.get("content"))
    parts = [content] if isinstance(content, str) else []
    parts += [str(v) for k, v in sorted(m.items()) if k.endswith("message_content.text")]
    parts += [
        str(v)
        for k, v in sorted(m.items())
        if ".tool_call.function." in k or k.startswith("tool_calls.")
    ]
    return "\n".join(parts)


def _flat_blocks(s: LlmSpan, tools: str, inputs: str) -> list[Block]:
    """Blocks of flattened ``tools.N.*`` and ``inputs.N.*`` attributes."""
    blocks: list[Block] = [
        {
            "section": "tools",
            "name": f"tools[{i}]",  # an older GenAI function is name, description, parameters
            "text": str(t.get("tool.json_schema", "")) if tools == "llm.tools" else json_text(t),
        }
        for i, t in enumerate(_indexed(s, tools))
    ]
    for i, m in enumerate(_indexed(s, inputs)):
        blocks.append(_message_block(i, i, m.get("message.role", m.get("role")), _message_text(m)))
    return blocks


def _answer(s: LlmSpan) -> str:
    if "gen_ai.output.messages" in s.attrs:
        out = _json_list(s, "gen_ai.output.messages")
        return "\n".join(_part_text(p) for m in out if isinstance(m, Mapping) for p in _parts(m))
    if not _indexed_any(s):
        return ""
    out = _indexed(s, "llm.output_messages") or _indexed(s, "gen_ai.completion")
    return "\n".join(_message_text(m) for m in out)


def _records(path: Path, skipped: Skipped) -> list[Record]:
    """One JSON document (pretty-printed or not), else JSON Lines."""
    try:
        text = read_capped(path, MAX_BYTES).decode("utf-8-sig")
    except ReadRefused as exc:
        raise ImporterError(str(path), str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ImporterError(str(path), f"not UTF-8 text (byte {exc.start})") from None
    try:
        whole = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return read_jsonl(path, skipped)
    if not isinstance(whole, dict):
        raise ImporterError(
            str(path), f"expected an OTLP JSON object, found {kind_of(whole)}", line=1
        )
    return [Record(1, whole, str(path))]


def _counted(n: int, what: str) -> str:
    """``2 embeddings spans``, ``2 failed calls without usage``: the plural on the noun."""
    if n == 1:
        return f"1 {what}"
    head, sep, tail = what.partition(" without ")
    return f"{n} {head}s{sep}{tail}"


def import_otel(path: Path, count: TokenCount) -> Imported:
    skipped, skips = Skipped(), Counter[str]()
    spans = model_spans(_records(path, skipped), skips)
    counted = ", ".join(_counted(n, why) for why, n in skips.items())
    if not spans:
        what = "spans with gen_ai.request.model or openinference.span.kind LLM"
        raise no_requests(str(path), what + (f" (skipped {counted})" if skips else ""))
    models = [_model(s) for s in spans]
    providers = [_provider(s, m) for s, m in zip(spans, models, strict=True)]
    uncached = _uncached_input(spans, providers)
    steps = []
    for s, model, provider in zip(spans, models, providers, strict=True):
        blocks = _genai_blocks(s)
        if not blocks and _indexed_any(s):
            blocks = _flat_blocks(s, "llm.tools", "llm.input_messages") or _flat_blocks(
                s, "llm.request.functions", "gen_ai.prompt"
            )
        u = measured(s.counts, (s.scope, provider) in uncached)
        steps.append((s, model, provider, blocks, u))
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
    ident = _session_id(first[0])
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
    warnings = skipped.warnings(str(path))
    if skips:
        warnings += (f"skipped {counted}: only billed model calls are requests",)
    for scope, provider in sorted(uncached):
        n = sum((s.scope, p) == (scope, provider) for s, p in zip(spans, providers, strict=True))
        warnings += (
            f"{provider} spans of instrumentation {scope!r} report input tokens without the"
            f" cached ones (an input smaller than its cache reads and writes): all {n} read so",
        )
    if all(u is None for *_, u in steps):
        warnings += (
            "no span carries usage (gen_ai.usage.* or llm.token_count.*): the requests have "
            "no measured usage; analyze simulates only",
        )
    return Imported(data, warnings)
