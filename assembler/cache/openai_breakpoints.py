"""OpenAI's cache from GPT-5.6 on: entries at breakpoints, read only on an exact match.

Implicit mode places one managed breakpoint at the end of the latest user or
tool message; explicit ``prompt_cache_breakpoint`` blocks add more (explicit
mode: only those). A request reads the longest prefix of itself that one of
the scope's latest 80 breakpoints stored, exactly: no fallback to a shorter
prefix where no breakpoint was written, no rounding. It writes at most 4 of
its own breakpoints after the read (billed as ``cache_write_tokens``). Each rule is in ``cache_rules.yaml`` with its source.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from assembler.cache.rules import openai_retention, rules
from assembler.cache.segmenter import Segmenter
from assembler.cache.simulation import CacheResult, cache_key, prefix_result
from assembler.cache.store import ALIVE, EXPIRED, CacheStore, common_length
from assembler.design.wire import WireBlock, leading_same
from assembler.sessions.model import RequestSettings


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
        # (the lists cut and extended in place from the first changed block)
        self._model = ""
        self._blocks: tuple[WireBlock, ...] = ()
        self._tokens: list[int] = []
        self._cum: list[int] = []
        self._keys: list[int] = []
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

    def _keyed(self, blocks: Sequence[WireBlock], model: str) -> tuple[int, list[int]]:
        """Per block (in ``_tokens``, ``_cum``, ``_keys``): its tokens, the running
        total and the key of the prefix ending there. Leading blocks that are the very
        objects of the previous request keep their figures (only the rest are
        measured); returns how many, and the previous request's keys after them."""
        same = leading_same(blocks, self._blocks) if self._model == model else 0
        tokens, cum, keys = self._tokens, self._cum, self._keys
        gone = keys[same:]
        del tokens[same:], cum[same:], keys[same:]
        h, running = (keys[-1], cum[-1]) if same else (hash(("openai-breakpoints", model)), 0)
        measure = self.segmenter.measure
        for b in blocks[same:]:
            n, fingerprint = measure(b)
            running += n
            h = hash((h, b.section, fingerprint))
            tokens.append(n)
            cum.append(running)
            keys.append(h)
        self._model, self._blocks = model, tuple(blocks)
        return same, gone

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
        same, gone = self._keyed(blocks, model)
        tokens, cum, keys = self._tokens, self._cum, self._keys
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
        shared = same + common_length(gone, keys[same:])
        cause = None
        if moved:
            cause = "cache_key_changed"
        elif shared and cum[shared - 1] > read and expired_at <= hit:
            cause = "breakpoint_mismatch"
        return prefix_result(
            tokens,
            read,
            write,
            total=running,
            minimum=self.min_tokens,
            expired=expired_at > hit,
            cause=cause,
            ends=cum,
        )
