"""The token-prefix simulators (OpenAI before GPT-5.6, Gemini implicit, DeepSeek, and
DeepSeek V4's prefix units) as they were before their key lists were kept in
place: each request copied the previous request's keys up to its first change.
Kept as the reference the in-place simulators are checked against."""

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
from assembler.design.wire import WireBlock, leading_same
from assembler.sessions.model import RequestSettings
from tests.cache.reference_store import NEVER, CacheStore, common_length

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


class PrefixUnitSimulator(TokenPrefixSimulator):
    """DeepSeek V4 (``deepseek.generation: prefix_units`` in the rules)."""

    def __init__(self, segmenter: Segmenter, retention: Retention | None = None) -> None:
        super().__init__("deepseek", segmenter, retention=retention)
        interval = rules()["deepseek"]["prefix_units"]["fixed_interval_tokens"]
        self.interval = int(interval) if interval else 0
        self._last_at = 0.0  # when the previous request ran

    def request(
        self,
        blocks: Sequence[WireBlock],
        model: str,
        at: datetime,
        store: CacheStore,
        settings: RequestSettings | None = None,
    ) -> CacheResult:
        scope = store.scope("deepseek-units", model)
        now = at.timestamp()
        ret = self.retention or _default_retention("deepseek")
        minimum = self.minimum(model)
        prev, prev_at, self._last_at = self._last, self._last_at, now
        keys, cums, block_tokens, known = self._keys(blocks, model)
        sent = self._last
        assert sent is not None
        shared = (
            common_length(prev.keys, keys, known) if prev is not None and prev.model == model else 0
        )
        if prev is not None and shared == len(prev.keys):
            # the previous request's answer, sent back right after its input, is a unit
            j = len(prev.ends)
            while j < len(blocks) and blocks[j].role == "assistant":
                j += 1
            if j > len(prev.ends) and cums[sent.ends[j - 1] - 1] >= minimum:
                scope.put(keys[sent.ends[j - 1] - 1], prev_at, ret)
        read, expired = 0, False
        # the longest unit fully matched: Scope.state inlined, as this walks every
        # segment back from the end until one is stored and readable
        expiry, readable = scope.expires.get, scope.ready.get
        for i in range(len(keys) - 1, -1, -1):
            expires = expiry(keys[i])
            if expires is None:
                continue
            if expires <= now:
                expired = True
            elif readable(keys[i], NEVER) < now:
                read = cums[i]
                scope.put(keys[i], now, ret)
                break
        total = cums[-1] if cums else 0
        units = [len(keys) - 1] if keys else []
        if prev is not None and 0 < shared < min(len(keys), len(prev.keys)):
            units.append(shared - 1)  # the common prefix of two diverging requests
        if self.interval:
            mark = self.interval
            for i, c in enumerate(cums):
                if c >= mark:
                    units.append(i)
                    mark = (c // self.interval + 1) * self.interval
        written = [i for i in units if cums[i] >= minimum and cums[i] > read]
        for i in written:
            scope.put(keys[i], now, ret)
        write = max((cums[i] for i in written), default=read) - read
        states, full = block_states(block_tokens, read, write)
        return CacheResult(
            total=total,
            read=read,
            write=write,
            block_tokens=tuple(block_tokens),
            block_cache=states,
            expired=expired and read < total,
            below_minimum=total < minimum,
            cached_blocks=full,
            cause="prefix_unit_mismatch" if shared and cums[shared - 1] > read else None,
        )
