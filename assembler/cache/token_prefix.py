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
    cache_key,
    name_kind,
    prefix_result,
)
from assembler.cache.store import CacheStore
from assembler.design.wire import WireBlock, leading_same
from assembler.sessions.model import RequestSettings

NAMES_KEPT = 1 << 16  # block names remembered per simulator, then forgotten at once

# --- token-prefix providers ----------------------------------------------------------


class _Sent:
    """The latest request as a token-prefix simulator keyed it: its lists are cut
    and extended in place at the first change, so a request that keeps the head
    of the one before costs its changed tail, not its length."""

    __slots__ = ("block_tokens", "blocks", "cums", "ends", "keys", "model", "uncounted")

    def __init__(self) -> None:
        self.model: str | None = None
        self.blocks: tuple[WireBlock, ...] = ()
        self.keys: list[int] = []
        self.cums: list[int] = []
        self.block_tokens: list[int] = []
        self.ends: list[int] = []  # ends[j]: keys up to the end of block j
        self.uncounted: list[int] = []  # the blocks of a kind read but billed as uncached (images)


@dataclass(frozen=True, slots=True)
class _Keyed:
    """What :meth:`TokenPrefixSimulator._keys` changed: the leading keys it kept
    (``known``); of the request before, its keys past them and its sizes."""

    known: int
    gone: list[int]  # the previous request's keys from ``known`` on (none: another model)
    keys_before: int
    blocks_before: int
    same_model: bool  # the request before was for this model (else: none, or another)


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
        self._last = _Sent()  # the previous request, to reuse its keys
        self._last_key: str | None = None  # the previous request's prompt_cache_key
        # the path the previous request left in its scope: while a scope's path is
        # still that one, it holds the previous request's keys
        self._wrote: object | None = None
        self.expected = provider == "gemini" and (
            rules()["gemini"]["prediction"]["value"] == "expectation"
        )
        rule = rules()[provider].get("uncounted_kinds")
        self.uncounted = frozenset(rule["value"] if rule is not None else ())
        # whether a block name is of an uncounted kind: a session's requests resend the
        # same names, and every request's blocks are asked about again
        self._uncounted_names: dict[str, bool] = {}

    def _keys(self, blocks: Sequence[WireBlock], model: str) -> _Keyed:
        """Per segment (line): the key of the prefix ending there and the tokens up
        to it; per block its tokens (all in ``self._last``). Leading blocks that are
        the very blocks of the previous request, and the lines a changed block kept,
        keep their keys: the lists are cut after them and extended."""
        last = self._last
        same_model = last.model == model  # keys are chained from the model
        same = leading_same(blocks, last.blocks) if same_model else 0
        keys, cums, ends = last.keys, last.cums, last.ends
        keys_before, blocks_before = len(keys), len(ends)
        if same:
            reused = ends[same - 1]
            h, running = keys[reused - 1], cums[reused - 1]
        else:
            reused, h, running = 0, hash((self.provider, model)), 0
        kept = 0
        first = None
        if same < len(blocks):
            b = blocks[same]
            first = self.segmenter.segments(b)
            if same_model and same < len(last.blocks):
                old = last.blocks[same]
                if (
                    old.name == b.name
                    and old.section == b.section
                    # a declared block is one segment, whatever its text's lines
                    and old.declared_tokens is None
                    and b.declared_tokens is None
                ):
                    # its first lines are the old version's: same prefix, same lines
                    kept = self.segmenter.kept_lines(b, old.content)
        known = reused + kept
        gone = keys[known:] if same_model else []
        del keys[known:], cums[known:], ends[same:], last.block_tokens[same:]
        del last.uncounted[bisect_left(last.uncounted, same) :]
        block_tokens, uncounted = last.block_tokens, last.uncounted
        for index in range(same, len(blocks)):
            b = blocks[index]
            if index == same and first is not None:
                counts, prints, total_b = first
                skip = kept
            else:
                counts, prints, total_b = self.segmenter.segments(b)
                skip = 0
            start = hash((h, b.section))
            # line i's key: everything before this block, its section, its lines 0..i
            keys.extend(map(hash, zip(repeat(start), prints[skip:])))
            sums = accumulate(counts[skip:], initial=cums[-1] if skip else running)
            next(sums)
            cums.extend(sums)
            running += total_b
            h = keys[-1]
            block_tokens.append(total_b)
            ends.append(len(keys))
            if self.uncounted and name_kind(b.name) in self.uncounted:
                uncounted.append(index)
        last.model, last.blocks = model, tuple(blocks)
        return _Keyed(known, gone, keys_before, blocks_before, same_model)

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
        if not self.uncounted:
            return 0
        known = self._uncounted_names
        if len(known) > NAMES_KEPT:  # one simulator may serve a folder of sessions
            known.clear()
        total = 0
        for name, n in blocks:
            hit = known.get(name)
            if hit is None:
                hit = known[name] = name_kind(name) in self.uncounted
            if hit:
                total += n
        return total

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
        known = self._keys(blocks, model).known
        sent = self._last
        keys, cums, block_tokens = sent.keys, sent.cums, sent.block_tokens
        running = cums[-1] if cums else 0
        path = scope.path
        # what this simulator knows of the keys holds for the path only if it wrote it
        state = scope.read_path(keys, now, known if path is not None and path is self._wrote else 0)
        matched = cums[state.first_dead - 1] if state.first_dead else 0
        expired = state.expired
        minimum, rounding = self.minimum(model), self.rounding(model)
        total = running
        read = self._floor(matched, minimum, rounding)
        write = max(0, self._floor(total, minimum, rounding) - read)
        self._wrote = None
        if total >= minimum:
            scope.write_path(keys, now, self.retention_for(model, settings), state)
            self._wrote = scope.path
        result = prefix_result(
            block_tokens,
            read,
            write,
            total=total,
            minimum=minimum,
            expired=expired,
            cause="cache_key_changed" if moved else None,
            expected=self.expected,
        )
        if self.uncounted and read:  # still being made: the one place it is changed
            result.read, result.block_cache = self._uncount(sent, matched, read, result.block_cache)
        return result
