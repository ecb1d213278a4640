"""Token-prefix caches (OpenAI, Gemini implicit, DeepSeek): the longest stored prefix, rounded to the provider's unit."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import accumulate, repeat

from assembler.cache.rules import (
    Retention,
    _default_retention,
    gemini_minimum,
    openai_retention,
    openai_rounding,
    rules,
)
from assembler.cache.segmenter import Segmenter
from assembler.cache.simulation import (
    UNCACHED,
    CacheResult,
    block_states,
    cache_key,
    name_kind,
)
from assembler.cache.store import CacheStore
from assembler.design.wire import WireBlock, leading_same
from assembler.sessions.model import RequestSettings

# --- token-prefix providers ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Sent:
    """A request as a token-prefix simulator keyed it."""

    model: str
    blocks: tuple[WireBlock, ...]
    keys: list[int]
    cums: list[int]
    block_tokens: tuple[int, ...]
    ends: list[int]  # ends[j]: keys up to the end of block j
    uncounted: list[int]  # the blocks of a kind read but billed as uncached (images)


class TokenPrefixSimulator:
    """Longest-cached-token-prefix caching (OpenAI, Gemini implicit, DeepSeek).

    Every request of at least the minimum stores all its segment prefixes; a
    read is the longest run of stored leading segments, rounded down to the
    unit and zero below the minimum.
    """

    def __init__(
        self,
        provider: str,
        segmenter: Segmenter,
        *,
        unit: int = 1,
        retention: Retention | None = None,
        cache_key: str | None = None,
    ) -> None:
        self.provider = provider
        self.segmenter = segmenter
        self.unit = unit
        self.retention = retention
        self.cache_key = cache_key or ""
        self._last: _Sent | None = None  # the previous request, to reuse its keys
        self._last_key: str | None = None  # the previous request's prompt_cache_key
        self.expected = provider == "gemini" and (
            rules()["gemini"]["prediction"]["value"] == "expectation"
        )
        rule = rules()[provider].get("uncounted_kinds")
        self.uncounted = frozenset(rule["value"] if rule is not None else ())

    def _keys(
        self, blocks: Sequence[WireBlock], model: str
    ) -> tuple[list[int], list[int], list[int], int]:
        """Per segment (line): the key of the prefix ending there and the tokens up
        to it; per block its tokens; and how many leading keys are the previous
        request's. Leading blocks that are the very blocks of the previous request,
        and the lines a changed block kept, reuse its keys (lists copied at C speed)."""
        last = self._last
        same = 0
        if last is not None and last.model == model:
            same = leading_same(blocks, last.blocks)
        uncounted: list[int]
        if last is not None and same:
            reused = last.ends[same - 1]
            keys, cums = last.keys[:reused], last.cums[:reused]
            block_tokens, ends = list(last.block_tokens[:same]), last.ends[:same]
            uncounted = last.uncounted[: bisect_left(last.uncounted, same)]
            h, running = keys[-1], cums[-1]
        else:
            reused, keys, cums, block_tokens, ends, uncounted = 0, [], [], [], [], []
            h, running = hash((self.provider, model)), 0
        known = reused
        for index in range(same, len(blocks)):
            b = blocks[index]
            counts, prints, total_b = self.segmenter.segments(b)
            start = hash((h, b.section))
            kept = 0
            if (
                index == same
                and last is not None
                and last.model == model  # keys are chained from the model
                and index < len(last.blocks)
            ):
                old = last.blocks[index]
                if (
                    old.name == b.name
                    and old.section == b.section
                    # a declared block is one segment, whatever its text's lines
                    and old.declared_tokens is None
                    and b.declared_tokens is None
                ):
                    # its first lines are the old version's: same prefix, same lines
                    kept = self.segmenter.kept_lines(b, old.content)
                    if kept:
                        keys.extend(last.keys[reused : reused + kept])
                        cums.extend(last.cums[reused : reused + kept])
                        known += kept
            # line i's key: everything before this block, its section, its lines 0..i
            keys.extend(map(hash, zip(repeat(start), prints[kept:])))
            sums = accumulate(counts[kept:], initial=cums[-1] if kept else running)
            next(sums)
            cums.extend(sums)
            running += total_b
            h = keys[-1]
            block_tokens.append(total_b)
            ends.append(len(keys))
            if self.uncounted and name_kind(b.name) in self.uncounted:
                uncounted.append(index)
        self._last = _Sent(model, tuple(blocks), keys, cums, tuple(block_tokens), ends, uncounted)
        return keys, cums, block_tokens, known

    def _uncount(
        self, sent: _Sent, matched: int, read: int, states: tuple[str, ...]
    ) -> tuple[int, tuple[str, ...]]:
        """The rounded ``read`` less the blocks of the ``matched`` prefix the provider
        bills as uncached (images: ``uncounted_kinds`` in the rules), which it serves
        from the cache all the same."""
        if not sent.uncounted:
            return read, states
        out = list(states)
        for i in sent.uncounted:
            if sent.cums[sent.ends[i] - 1] > matched:  # the block ends past the match
                break
            n = sent.block_tokens[i]
            if n:
                read -= n
                out[i] = UNCACHED
        return max(0, read), tuple(out)

    def uncounted_tokens(self, model: str, blocks: Iterable[tuple[str, int]]) -> int:
        """Tokens of the (name, tokens) blocks a full read of them leaves out of the count."""
        return sum(n for name, n in blocks if name_kind(name) in self.uncounted)

    def minimum(self, model: str) -> int:
        if self.provider == "openai":
            return int(rules()["openai"]["min_tokens"]["value"])
        if self.provider == "gemini":
            return gemini_minimum(model)
        return int(rules()["deepseek"]["min_tokens"]["value"])

    def rounding(self, model: str) -> tuple[int, int]:
        """(step, offset) of the reads (see ``openai.increment`` in the rules)."""
        return openai_rounding(model) if self.provider == "openai" else (self.unit, 0)

    def unit_for(self, model: str) -> int:
        return self.rounding(model)[0]

    def retention_for(self, model: str, settings: RequestSettings | None = None) -> Retention:
        if self.retention is not None:
            return self.retention
        if self.provider == "openai":
            requested = None if settings is None else settings.cache_ttl or settings.retention
            return openai_retention(model, requested)
        return _default_retention(self.provider)

    def _floor(self, n: int, minimum: int, rounding: tuple[int, int]) -> int:
        step, offset = rounding
        if n < minimum:
            return 0
        return offset + (n - offset) // step * step if n >= offset else 0

    def scope_key(self, settings: RequestSettings | None) -> str:
        """The recorded prompt_cache_key, else the simulator's."""
        return cache_key(settings, self.cache_key)

    def request(
        self,
        blocks: Sequence[WireBlock],
        model: str,
        at: datetime,
        store: CacheStore,
        settings: RequestSettings | None = None,
    ) -> CacheResult:
        key = self.scope_key(settings)
        moved = self._last_key is not None and key != self._last_key
        self._last_key = key
        scope = store.scope(self.provider, model, key)
        now = at.timestamp()
        previous = self._last.keys if self._last is not None else None
        keys, cums, block_tokens, known = self._keys(blocks, model)
        running = cums[-1] if cums else 0
        path = scope.path
        # what this simulator knows of the keys holds for the path only if it wrote it
        state = scope.read_path(
            keys, now, known if path is not None and path.keys is previous else 0
        )
        matched = cums[state.first_dead - 1] if state.first_dead else 0
        expired = state.expired
        minimum, rounding = self.minimum(model), self.rounding(model)
        total = running
        read = self._floor(matched, minimum, rounding)
        write = max(0, self._floor(total, minimum, rounding) - read)
        if total >= minimum:
            scope.write_path(keys, now, self.retention_for(model, settings), state)
        states, full = block_states(block_tokens, read, write)
        if self.uncounted and read:
            assert self._last is not None
            read, states = self._uncount(self._last, matched, read, states)
        return CacheResult(
            total=total,
            read=read,
            write=write,
            block_tokens=tuple(block_tokens),
            block_cache=states,
            expired=expired,
            below_minimum=total < minimum,
            cached_blocks=full,
            cause="cache_key_changed" if moved else None,
            expected=self.expected,
        )
