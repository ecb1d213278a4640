"""What a raw request and response say about the cache beyond their blocks: the
settings that invalidate it and the provider's own diagnostic."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assembler.sessions.importers.history import json_text
from assembler.sessions.importers.records import as_int, iter_items
from assembler.sessions.model import STANDARD_TIERS

_IMAGE_PARTS = ("image", "input_image", "image_url")


def _choice(value: Any) -> str | None:
    """A setting as a short stable text: ``auto``, ``tool:search``, ``enabled:2048``, or its JSON."""
    if value is None:
        return None
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, Mapping) and set(value) <= {"type", "name", "budget_tokens"}:
        return ":".join(str(value[k]) for k in ("type", "name", "budget_tokens") if k in value)
    return json_text(value)


def _parts(items: Any) -> list[Mapping[str, Any]]:
    parts: list[Mapping[str, Any]] = []
    for msg in iter_items(items):
        content = msg.get("content")
        parts.extend(iter_items(content) if not isinstance(content, str) else [])
    return parts


def content_facts(items: Any) -> tuple[int, bool]:
    """(images, whether any part asks for citations) of messages or input items: the
    settings a request's content decides, summed over a conversation as it grows."""
    parts = _parts(items)
    images = sum(p.get("type") in _IMAGE_PARTS for p in parts)
    citations = any(
        isinstance(p.get("citations"), Mapping) and p["citations"].get("enabled") for p in parts
    )
    return images, citations


def service_tier(tier: Any) -> str | None:
    """A tier that served a request as the setting records it: none for a standard one
    (Claude Code marks every response ``standard``), so only a tier priced apart is kept."""
    if not isinstance(tier, str) or not tier or tier.lower() in STANDARD_TIERS:
        return None
    return tier[:40]


def response_tier(request: Mapping[str, Any], response: Mapping[str, Any]) -> str | None:
    """The tier that served the request: the response's (OpenAI ``service_tier``, Anthropic
    ``usage.service_tier``), else the one the request asked for."""
    usage = response.get("usage")
    for tier in (
        response.get("service_tier"),
        usage.get("service_tier") if isinstance(usage, Mapping) else None,
    ):
        if isinstance(tier, str) and tier:
            return service_tier(tier)
    return service_tier(request.get("service_tier"))


def request_settings(
    request: Mapping[str, Any],
    response: Mapping[str, Any] | None = None,
    facts: tuple[int, bool] | None = None,
) -> dict[str, Any] | None:
    """The cache-relevant settings of an Anthropic, Chat or Responses request body, and
    the service tier that priced it; ``facts``: its content's, when already counted
    (:func:`content_facts`)."""
    output = request.get("output_config")
    output = output if isinstance(output, Mapping) else {}
    reasoning = request.get("reasoning")
    reasoning = reasoning if isinstance(reasoning, Mapping) else {}
    options = request.get("prompt_cache_options")
    options = options if isinstance(options, Mapping) else {}
    tools = list(iter_items(request.get("tools")))
    images, citations = facts or content_facts(request.get("messages") or request.get("input"))
    found = {
        "tool_choice": _choice(request.get("tool_choice")),
        "thinking": _choice(request.get("thinking")),
        "effort": _choice(
            output.get("effort") or reasoning.get("effort") or request.get("reasoning_effort")
        ),
        "web_search": True
        if any(str(t.get("type", "")).startswith("web_search") for t in tools)
        else None,
        "citations": True if citations else None,
        "speed": _choice(request.get("speed")),
        "images": images or None,
        "prompt_cache_key": _choice(request.get("prompt_cache_key")),
        "retention": request.get("prompt_cache_retention")
        if request.get("prompt_cache_retention") in ("in_memory", "24h")
        else None,
        "cache_mode": options.get("mode")
        if options.get("mode") in ("implicit", "explicit")
        else None,
        "cache_ttl": _choice(options.get("ttl")),
        "service_tier": response_tier(request, response or {}),
    }
    kept = {k: v for k, v in found.items() if v is not None}
    return kept or None


def anthropic_diagnostic(diag: Any) -> dict[str, Any]:
    """A response's ``diagnostics`` (an object, or null) as the llm event's diagnostic:
    ``cache_miss_reason`` ``{type, cache_missed_input_tokens}``, a null reason ``type: null``."""
    reason = diag.get("cache_miss_reason") if isinstance(diag, Mapping) else None
    if not isinstance(reason, Mapping):
        return {"provider": "anthropic", "type": None}
    out: dict[str, Any] = {"provider": "anthropic", "type": str(reason.get("type"))}
    if "cache_missed_input_tokens" in reason:
        out["missed_tokens"] = as_int(reason.get("cache_missed_input_tokens"))
    return out


def response_diagnostic(
    api_is_anthropic: bool, request: Mapping[str, Any], response: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Anthropic's ``diagnostics.cache_miss_reason`` or OpenAI's ``prompt_cache_diagnostics``.

    Anthropic: ``null`` (or a null reason) means no divergence, or not computed yet;
    a response to a request that did not ask carries nothing to read."""
    if api_is_anthropic:
        if "diagnostics" not in response or (
            response["diagnostics"] is None and "diagnostics" not in request
        ):
            return None
        return anthropic_diagnostic(response["diagnostics"])
    diag = response.get("prompt_cache_diagnostics")
    if not isinstance(diag, Mapping) or not isinstance(diag.get("type"), str):
        return None
    out = {"provider": "openai", "type": diag["type"]}
    if isinstance(diag.get("reason"), str):
        out["reason"] = diag["reason"]
    if "cache_missed_tokens" in diag:
        out["missed_tokens"] = as_int(diag.get("cache_missed_tokens"))
    return out
