"""OpenAI's GPT-5.6+ breakpoint simulator and the per-generation dispatch as they were
before the breakpoint simulator kept its per-block lists in place; with the
reference token-prefix simulators, the reference for the in-place ones."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from assembler.cache.rules import Retention, generation, openai_retention, parse_duration, rules
from assembler.cache.segmenter import Segmenter
from assembler.cache.simulation import CacheResult, cache_key, states_at
from assembler.design.wire import WireBlock, leading_same
from assembler.sessions.model import RequestSettings
from tests.cache.reference_store import ALIVE, EXPIRED, CacheStore, common_length
from tests.cache.reference_token_prefix import PrefixUnitSimulator, TokenPrefixSimulator


class BreakpointSimulator:
    """GPT-5.6 and later (``openai.generation: breakpoint`` in the rules)."""

    provider = "openai"

    def __init__(self, segmenter: Segmenter, cache_key: str | None = None) -> None:
        r = rules()["openai"]
        self.segmenter = segmenter
        self.cache_key = cache_key or ""
        self.min_tokens = int(r["min_tokens"]["value"])
        self.max_writes = int(r["breakpoints"]["max_writes_per_request"])
        self.considered = int(r["breakpoints"]["breakpoints_considered"])
        # the previous request: model, blocks, and per block tokens, running totals, keys
        self._last: tuple[str, tuple[WireBlock, ...], list[int], list[int], list[int]] = (
            "",
            (),
            [],
            [],
            [],
        )
        self._last_key: str | None = None

    def minimum(self, model: str) -> int:
        return self.min_tokens

    def breakpoints(self, blocks: Sequence[WireBlock], mode: str) -> list[int]:
        """The explicit marks, plus the managed one in implicit mode."""
        marks = {i for i, b in enumerate(blocks) if b.breakpoint is not None}
        if mode != "explicit":
            latest = max(
                (i for i, b in enumerate(blocks) if b.section == "messages" and b.role == "user"),
                default=None,
            )
            if latest is not None:
                marks.add(latest)
        return sorted(marks)

    def _keyed(
        self, blocks: Sequence[WireBlock], model: str
    ) -> tuple[list[int], list[int], list[int], int]:
        """Per block: its tokens, the running total and the key of the prefix ending
        there; and how many leading blocks are the very objects of the previous
        request, whose figures are kept (only the rest are measured)."""
        last_model, last_blocks, last_tokens, last_cum, last_keys = self._last
        same = leading_same(blocks, last_blocks) if last_model == model else 0
        tokens, cum, keys = last_tokens[:same], last_cum[:same], last_keys[:same]
        h, running = (keys[-1], cum[-1]) if same else (hash(("openai-breakpoints", model)), 0)
        measure = self.segmenter.measure
        for b in blocks[same:]:
            n, fingerprint = measure(b)
            running += n
            h = hash((h, b.section, fingerprint))
            tokens.append(n)
            cum.append(running)
            keys.append(h)
        self._last = (model, tuple(blocks), tokens, cum, keys)
        return tokens, cum, keys, same

    def request(
        self,
        blocks: Sequence[WireBlock],
        model: str,
        at: datetime,
        store: CacheStore,
        settings: RequestSettings | None = None,
    ) -> CacheResult:
        key = cache_key(settings, self.cache_key)
        moved = self._last_key is not None and key != self._last_key
        self._last_key = key
        scope = store.scope("openai", model, key)
        mode = (settings.cache_mode if settings is not None else None) or "implicit"
        requested = None if settings is None else settings.cache_ttl or settings.retention
        retention = openai_retention(model, requested)
        now = at.timestamp()
        before = self._last[4]
        tokens, cum, keys, same = self._keyed(blocks, model)
        running = cum[-1] if cum else 0
        marks = [i for i in self.breakpoints(blocks, mode) if cum[i] >= self.min_tokens]
        recent = set(scope.recent)
        hit, expired_at = -1, -1
        for i in range(len(keys) - 1, -1, -1):  # the longest stored breakpoint, exactly
            if keys[i] in recent and cum[i] >= self.min_tokens:
                state = scope.state(keys[i], now)
                if state == ALIVE:
                    hit = i
                    break
                if state == EXPIRED:
                    expired_at = max(expired_at, i)
        read = cum[hit] if hit >= 0 else 0
        if hit >= 0:
            scope.put(keys[hit], now, retention)
        written = [m for m in marks if m > hit][-self.max_writes :]
        for mark in written:
            scope.put(keys[mark], now, retention)
        fresh = [keys[m] for m in written if keys[m] not in recent]
        if fresh:
            scope.recent = [*scope.recent, *fresh][-self.considered :]
        write = cum[written[-1]] - read if written else 0
        # a stable prefix this request shares with the previous one, left unread
        shared = common_length(before, keys, same)
        cause = None
        if moved:
            cause = "cache_key_changed"
        elif shared and cum[shared - 1] > read and expired_at <= hit:
            cause = "breakpoint_mismatch"
        states, full = states_at(cum, read, write)
        return CacheResult(
            total=running,
            read=read,
            write=write,
            block_tokens=tuple(tokens),
            block_cache=states,
            expired=expired_at > hit,
            below_minimum=running < self.min_tokens,
            cached_blocks=full,
            cause=cause,
        )


class ByGeneration(TokenPrefixSimulator):
    """:class:`assembler.cache.providers.ByGeneration` over the reference simulators."""

    def __init__(
        self,
        provider: str,
        segmenter: Segmenter,
        newer: dict[str, Any],
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


def reference_simulator(
    provider: str, segmenter: Segmenter, ttl: str | None = None, cache_key: str | None = None
) -> TokenPrefixSimulator:
    """:func:`assembler.cache.providers.simulator` for a token-prefix provider, over the
    reference simulators (which take a reference store)."""
    retention = Retention.fixed(parse_duration(ttl)) if ttl else None
    if provider == "openai":
        newer: dict[str, Any] = {"breakpoint": BreakpointSimulator(segmenter, cache_key)}
        return ByGeneration(provider, segmenter, newer, retention=retention, cache_key=cache_key)
    if provider == "gemini":
        return TokenPrefixSimulator(provider, segmenter, retention=retention)
    unit = int(rules()["deepseek"]["unit"]["value"])
    units: dict[str, Any] = {"prefix_units": PrefixUnitSimulator(segmenter, retention)}
    return ByGeneration(provider, segmenter, units, unit=unit, retention=retention)
