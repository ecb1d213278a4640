"""The miss-cause taxonomy: our causes, and the provider diagnostic types each one matches.

One code per cause, next to the human reason of a :class:`Miss`. The providers'
own diagnostics (Anthropic ``diagnostics.cache_miss_reason.type``, OpenAI
``prompt_cache_diagnostics``) compare request structure; a cause that is not
structural (an expiry, a minimum, the lookback, a parallel write) matches "no
divergence". docs/cache-engine.md has the same table.
"""

from __future__ import annotations

from dataclasses import dataclass

#: human reason (results.Miss.reason) → cause code, for the reasons that map one to one
REASON_CAUSES = {
    "model switched": "model_changed",
    "below minimum": "below_minimum",
    "no breakpoint": "no_breakpoint",
    "io released": "io_released",
    "history compacted": "history_compacted",
    "component added": "component_added",
    "component removed": "component_removed",
    "content changed": "content_changed",
    "history re-sent": "history_resent_by_client",
    "setting changed": "setting_changed",
    "parallel cold write": "concurrent_cold_write",
    "lookback exceeded": "lookback_exceeded",
    "cache key changed": "provider_routing",
    "breakpoint mismatch": "breakpoint_mismatch",
    "prefix unit mismatch": "prefix_unit_mismatch",
}

#: causes that name a block: the provider reports the section the block is in
COMPONENT_CAUSES = frozenset(
    {
        "content_changed",
        "component_added",
        "component_removed",
        "io_released",
        "history_compacted",
        "history_resent_by_client",
    }
)

NO_DIVERGENCE = "no divergence"  # Anthropic null, OpenAI cache_hit: the structure matched
#: provider types that give no verdict either way
NO_VERDICT = frozenset({"previous_message_not_found", "comparison_response_not_found"})


def expiry_cause(ttl: str) -> str:
    """``ttl_expired_5m`` / ``ttl_expired_1h`` / ``ttl_expired_24h``; OpenAI's idle 10m is in-memory."""
    return "ttl_expired_in_memory" if ttl == "10m" else f"ttl_expired_{ttl}"


@dataclass(frozen=True)
class Expected:
    anthropic: frozenset[str]
    openai: frozenset[str]


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


_STRUCTURAL = {
    "model_changed": Expected(_set("model_changed"), _set("model_changed")),
    "setting_changed": Expected(
        _set("unavailable", "tools_changed", "system_changed", "messages_changed"),
        _set(
            "reasoning_effort_changed",
            "verbosity_changed",
            "text_format_changed",
            "service_tier_changed",
        ),
    ),
    "provider_routing": Expected(_set(NO_DIVERGENCE), _set("prompt_cache_key_changed")),
    "breakpoint_mismatch": Expected(_set(NO_DIVERGENCE), _set("input_changed")),
}


def expected_types(cause: str | None, section: str) -> Expected:
    """The provider types that agree with ``cause`` for a block in ``section``."""
    if cause is None:
        return Expected(_set(NO_DIVERGENCE), _set(NO_DIVERGENCE))
    if cause in COMPONENT_CAUSES:
        anthropic = {f"{section}_changed"}
        openai = {"tools_changed" if section == "tools" else "input_changed"}
        if cause == "history_compacted":
            openai.add("context_compacted")
        return Expected(frozenset(anthropic), frozenset(openai))
    known = _STRUCTURAL.get(cause)
    if known is not None:
        return known
    # expiry, minimum, lookback, parallel write, no breakpoint, prefix unit: the structure matched
    return Expected(_set(NO_DIVERGENCE), _set(NO_DIVERGENCE))
