"""Provider names and the simulator each one gets (per model, by the rules' ``generation``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from assembler.cache.anthropic import AnthropicSimulator
from assembler.cache.openai_breakpoints import BreakpointSimulator
from assembler.cache.prefix_units import PrefixUnitSimulator
from assembler.cache.rules import Retention, generation, parse_duration, rules
from assembler.cache.segmenter import Segmenter
from assembler.cache.simulation import CacheResult, Simulator
from assembler.cache.store import CacheStore
from assembler.cache.token_prefix import TokenPrefixSimulator
from assembler.design.wire import WireBlock
from assembler.errors import UsageError
from assembler.sessions.model import RequestSettings

PROVIDERS = ("anthropic", "openai", "gemini", "deepseek")
_ALIASES = {
    "google": "gemini",
    "google-gla": "gemini",
    "google-vertex": "gemini",
    # Claude served by AWS Bedrock or Google Vertex: Anthropic's cache rules, the platform's prices
    "anthropic-bedrock": "anthropic",
    "anthropic-vertex": "anthropic",
}


#: Platforms that serve a provider's models from caches of their own, apart from the
#: provider's API and from each other: Anthropic's API caches per workspace, Bedrock and
#: Vertex per organization of that platform; Vertex runs Gemini's implicit cache in tiers
#: of its own (provider caching reference: scope, isolation, Vertex).
_OWN_CACHE = frozenset({"anthropic-bedrock", "anthropic-vertex", "google-vertex"})


def cache_platform(provider: str) -> str:
    """The platform whose cache a request named ``provider`` uses ("" for the provider's own API)."""
    p = provider.lower()
    return p if p in _OWN_CACHE else ""


class UnknownProvider(UsageError):
    """A provider no cache simulator serves: the message names it and the ones there are."""


def normalize_provider(provider: str) -> str:
    p = provider.lower()
    p = _ALIASES.get(p, p)
    if p not in PROVIDERS:
        raise UnknownProvider(
            f"no cache simulator for provider {provider!r}; expected one of {', '.join(PROVIDERS)}"
        )
    return p


class ByGeneration(TokenPrefixSimulator):
    """A token-prefix simulator that hands the models of a newer cache generation
    (OpenAI GPT-5.6+, DeepSeek V4) to that generation's simulator."""

    def __init__(
        self,
        provider: str,
        segmenter: Segmenter,
        newer: dict[str, Simulator],
        *,
        unit: int = 1,
        retention: Retention | None = None,
        cache_key: str | None = None,
    ) -> None:
        super().__init__(provider, segmenter, unit=unit, retention=retention, cache_key=cache_key)
        self.newer = newer

    def minimum(self, model: str) -> int:
        sim = self.newer.get(generation(self.provider, model))
        return sim.minimum(model) if sim is not None else super().minimum(model)

    def uncounted_tokens(self, model: str, blocks: Iterable[tuple[str, int]]) -> int:
        if generation(self.provider, model) in self.newer:
            return 0
        return super().uncounted_tokens(model, blocks)

    def request(
        self,
        blocks: Sequence[WireBlock],
        model: str,
        at: datetime,
        store: CacheStore,
        settings: RequestSettings | None = None,
    ) -> CacheResult:
        sim = self.newer.get(generation(self.provider, model))
        if sim is not None:
            return sim.request(blocks, model, at, store, settings)
        return super().request(blocks, model, at, store, settings)


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
        newer: dict[str, Simulator] = {"breakpoint": BreakpointSimulator(segmenter, cache_key)}
        return ByGeneration(p, segmenter, newer, retention=retention, cache_key=cache_key)
    if p == "gemini":
        return TokenPrefixSimulator(p, segmenter, retention=retention)
    unit = int(rules()["deepseek"]["unit"]["value"])
    units: dict[str, Simulator] = {"prefix_units": PrefixUnitSimulator(segmenter, retention)}
    return ByGeneration(p, segmenter, units, unit=unit, retention=retention)
