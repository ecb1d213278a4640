"""Anthropic's breakpoint cache: entries written at breakpoints, found by a 20-position lookback."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from assembler.cache.rules import Retention, anthropic_minimum, parse_duration, rules
from assembler.cache.segmenter import Segmenter
from assembler.cache.simulation import CacheResult, block_states
from assembler.cache.store import ALIVE, EXPIRED, CacheStore
from assembler.design.wire import WireBlock
from assembler.errors import UsageError

# --- Anthropic ----------------------------------------------------------------------------


class AnthropicSimulator:
    """Breakpoint caching as the Messages API does it (see the module docstring)."""

    provider = "anthropic"

    def __init__(
        self, segmenter: Segmenter, ttl: str | None = None, *, automatic: bool = False
    ) -> None:
        r = rules()["anthropic"]
        ttl = ttl or r["ttl"]["default"]
        if ttl not in r["ttl"]["allowed"]:
            raise UsageError(
                f"--ttl: expected one of {', '.join(r['ttl']['allowed'])}, found {ttl!r}"
            )
        self.segmenter = segmenter
        self.ttl = ttl
        self.retention = Retention.fixed(parse_duration(r["ttl"]["allowed"][ttl]))
        self.lookback = int(r["lookback"]["value"])
        self.max_breakpoints = int(r["max_breakpoints"]["value"])
        self.automatic = automatic
        # the previous request: model, blocks, tokens, running totals, prefix keys
        self._last: (
            tuple[str, tuple[WireBlock, ...], tuple[int, ...], list[int], list[int]] | None
        ) = None

    def minimum(self, model: str) -> int:
        return anthropic_minimum(model)

    def breakpoints(self, blocks: Sequence[WireBlock]) -> list[int]:
        marks = [i for i, b in enumerate(blocks) if b.breakpoint is not None]
        if self.automatic and len(marks) < self.max_breakpoints:
            last = max((i for i, b in enumerate(blocks) if b.cacheable), default=None)
            if last is not None and last not in marks:
                marks = sorted([*marks, last])
        return marks[: self.max_breakpoints]

    def _prefix_keys(
        self, blocks: Sequence[WireBlock], model: str
    ) -> tuple[tuple[int, ...], list[int], list[int]]:
        """Per block: its tokens, the running total and the key of the prefix ending there.

        The leading blocks that are the very objects of the previous request (an
        unchanged system prompt) keep their figures; only the rest are measured.
        """
        same = 0
        last = self._last
        if last is not None and last[0] == model:
            before = last[1]
            n = min(len(before), len(blocks))
            while same < n and blocks[same] is before[same]:
                same += 1
        if same:
            assert last is not None
            tokens, cum, hashes = list(last[2][:same]), last[3][:same], last[4][:same]
            running, h = cum[-1], hashes[-1]
        else:
            tokens, cum, hashes = [], [], []
            running, h = 0, hash(("anthropic", model))
        measure = self.segmenter.measure
        for b in blocks[same:]:
            n, fingerprint = measure(b)
            running += n
            h = hash((h, b.section, fingerprint))
            tokens.append(n)
            cum.append(running)
            hashes.append(h)
        kept = tuple(tokens)
        self._last = (model, tuple(blocks), kept, cum, hashes)
        return kept, cum, hashes

    def request(
        self, blocks: Sequence[WireBlock], model: str, at: datetime, store: CacheStore
    ) -> CacheResult:
        tokens, cum, hashes = self._prefix_keys(blocks, model)
        scope = store.scope("anthropic", model)
        now = at.timestamp()
        minimum = self.minimum(model)
        marks = self.breakpoints(blocks)
        eligible = [i for i in marks if cum[i] >= minimum]
        hit, expired_at = -1, -1
        for mark in eligible:
            for pos in range(mark, max(-1, mark - self.lookback), -1):
                state = scope.state(hashes[pos], now)
                if state == ALIVE:
                    hit = max(hit, pos)
                    break
                if state == EXPIRED:
                    expired_at = max(expired_at, pos)
        read = cum[hit] if hit >= 0 else 0
        if hit >= 0:  # every hit refreshes the entry's lifetime
            scope.put(hashes[hit], now, self.retention)
        last_written = hit
        for mark in eligible:
            if mark > hit or scope.state(hashes[mark], now) == ALIVE:
                scope.put(hashes[mark], now, self.retention)
            if mark > hit:
                last_written = mark
        write = cum[last_written] - read if last_written > hit else 0
        total = cum[-1] if cum else 0
        states, full = block_states(tokens, read, write)
        return CacheResult(
            total=total,
            read=read,
            write=write,
            block_tokens=tokens,
            block_cache=states,
            expired=expired_at > hit,
            below_minimum=bool(marks) and not eligible,
            cached_blocks=full,
        )
