"""Provider names and the simulator each one gets."""

from __future__ import annotations

from assembler.cache.anthropic import AnthropicSimulator
from assembler.cache.rules import Retention, parse_duration, rules
from assembler.cache.segmenter import Segmenter
from assembler.cache.simulation import Simulator
from assembler.cache.token_prefix import TokenPrefixSimulator
from assembler.errors import UsageError

PROVIDERS = ("anthropic", "openai", "gemini", "deepseek")
_ALIASES = {"google": "gemini", "google-gla": "gemini", "google-vertex": "gemini"}


def normalize_provider(provider: str) -> str:
    p = provider.lower()
    p = _ALIASES.get(p, p)
    if p not in PROVIDERS:
        raise UsageError(
            f"no cache simulator for provider {provider!r}; expected one of {', '.join(PROVIDERS)}"
        )
    return p


def simulator(
    provider: str,
    segmenter: Segmenter,
    ttl: str | None = None,
    *,
    automatic: bool = False,
    cache_key: str | None = None,
) -> Simulator:
    """The simulator for ``provider``; ``ttl`` replaces the rules' lifetime when given."""
    p = normalize_provider(provider)
    if p == "anthropic":
        return AnthropicSimulator(segmenter, ttl, automatic=automatic)
    retention = Retention.fixed(parse_duration(ttl)) if ttl else None
    if p == "openai":
        return TokenPrefixSimulator(p, segmenter, retention=retention, cache_key=cache_key)
    if p == "gemini":
        return TokenPrefixSimulator(p, segmenter, retention=retention)
    unit = int(rules()["deepseek"]["unit"]["value"])
    return TokenPrefixSimulator(p, segmenter, unit=unit, retention=retention)
