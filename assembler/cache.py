"""Provider prompt-cache simulators, driven by ``assembler/data/cache_rules.yaml``.

One interface, :class:`Simulator`: ``request(blocks, model, at, store)`` returns
what the provider would have read from cache, written to it and sent uncached
for one request. A :class:`CacheStore` holds the entries across the steps of a
session (recorded timestamps drive expiry) and can be shared by several
sessions that share a prefix.

- Anthropic (:class:`AnthropicSimulator`) works on wire blocks: entries are
  written only at breakpoints, keyed by a hash of the whole prefix up to and
  including that block; each breakpoint looks back up to 20 positions for an
  entry an earlier request wrote.
- OpenAI, Gemini (implicit) and DeepSeek (:class:`TokenPrefixSimulator`) cache
  the longest token prefix. A request is a sequence of *segments* (each block
  split into lines) with cumulative prefix hashes; a hit is the longest run of
  leading segments an earlier request stored, rounded down to the provider's
  unit.

Approximation: blocks and lines are tokenized separately (the token count of
a block is the sum of its lines' counts, each memoized per distinct line), so
counts can differ by a token or so per line from tokenizing the joined text,
and a token-prefix hit ends on a line boundary. Each wire block counts as one
Anthropic block position (the real request splits the tools block into one
position per tool).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from importlib import resources
from itertools import accumulate, repeat
from math import inf
from operator import neg
from typing import Any, Protocol

import yaml

from assembler.errors import UsageError
from assembler.tokens import TokenCounter
from assembler.versions import common_prefix, narrow
from assembler.wire import WireBlock

READ, WRITE, UNCACHED = "read", "write", "uncached"


# --- rules ---------------------------------------------------------------------


@cache
def rules() -> dict[str, Any]:
    """The rules data file, parsed once."""
    text = resources.files("assembler.data").joinpath("cache_rules.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def parse_duration(text: str) -> timedelta:
    """``"5m"``, ``"1h"``, ``"30s"`` → timedelta."""
    m = re.fullmatch(r"(\d+)([smh])", str(text).strip())
    if not m:
        raise UsageError(f"expected a duration like 5m or 1h, found {text!r}")
    value, unit = int(m.group(1)), m.group(2)
    name = {"s": "seconds", "m": "minutes", "h": "hours"}[unit]
    return timedelta(**{name: value})


def by_model(entries: Sequence[Mapping[str, Any]], model: str, key: str, default: Any) -> Any:
    """The value of the longest ``match`` prefixing ``model``; ``default`` when none does."""
    m = model.lower()
    best: Mapping[str, Any] | None = None
    for entry in entries:
        match = str(entry["match"]).lower()
        if m.startswith(match) and (best is None or len(match) > len(str(best["match"]))):
            best = entry
    return default if best is None else best[key]


@cache
def anthropic_minimum(model: str) -> int:
    rule = rules()["anthropic"]["min_cacheable_tokens"]
    return int(by_model(rule["models"], model, "tokens", rule["default"]))


@cache
def gemini_minimum(model: str) -> int:
    rule = rules()["gemini"]["min_cacheable_tokens"]
    return int(by_model(rule["models"], model, "tokens", rule["default"]))


@cache
def openai_increment(model: str) -> int:
    rule = rules()["openai"]["increment"]
    return int(by_model(rule.get("models", []), model, "value", rule["default"]))


@dataclass(frozen=True)
class Retention:
    """How long an entry lives: ``idle`` after its last use, at most ``max_age`` after its write."""

    idle: timedelta
    max_age: timedelta

    @classmethod
    def fixed(cls, ttl: timedelta) -> Retention:
        return cls(ttl, timedelta.max)


@cache
def _default_retention(provider: str) -> Retention:
    return Retention.fixed(parse_duration(rules()[provider]["ttl"]["default"]))


@cache
def openai_retention(model: str) -> Retention:
    rule = rules()["openai"]["retention"]
    default = rule["default"]
    idle = by_model(rule["models"], model, "idle", default["idle"])
    max_age = by_model(rule["models"], model, "max_age", default["max_age"])
    return Retention(parse_duration(idle), parse_duration(max_age))


# --- the store -------------------------------------------------------------------


ALIVE, EXPIRED, MISSING = 0, 1, 2
_NEVER = -inf  # the expiry read for a key never written (any real one is finite)


class _Path:
    """The segment keys of the latest request written to a scope, kept lazily.

    That request touched every key on it at ``touched`` with lifetime ``idle``,
    so key ``i``'s entry expires at ``min(touched + idle, hard[i])``; the maps
    get a key's state only when a later request leaves the key behind. A
    request that shares most of its prefix with the one before (a history
    growing at its tail) then costs only its new segments.
    """

    __slots__ = ("floor", "hard", "idle", "keys", "touched")

    def __init__(
        self, keys: list[int], hard: list[float], floor: list[float], touched: float, idle: float
    ) -> None:
        self.keys = keys
        self.hard = hard  # hard[i]: key i's hard limit
        self.floor = floor  # floor[i] = -min(hard[:i + 1]): non-decreasing, for bisection
        self.touched = touched
        self.idle = idle


@dataclass(frozen=True, slots=True)
class _PathRead:
    shared: int  # leading keys equal to the scope's path
    dead_at: int  # the first shared key whose entry had expired (shared if none)
    first_dead: int  # the first key not alive: the read ends before it
    expired: bool  # that key has an entry, expired (rather than none)
    tail_expires: list[float]  # expiry of each key after the shared ones (_NEVER: none)


class Scope:
    """The entries of one cache: key → expiry, key → the hard limit a hit never
    extends past (epoch seconds), plus the latest request's keys kept lazily
    (:class:`_Path`). Flat maps rather than an object per entry, so a request's
    new segment keys are looked up and written with C-level ``map`` / ``update``."""

    __slots__ = ("expires", "hard", "path")

    def __init__(self) -> None:
        self.expires: dict[int, float] = {}
        self.hard: dict[int, float] = {}
        self.path: _Path | None = None

    def state(self, key: int, now: float) -> int:
        """An entry's state, for scopes written by :meth:`put` alone (no path)."""
        expires = self.expires.get(key)
        if expires is None:
            return MISSING
        return ALIVE if expires > now else EXPIRED

    def put(self, key: int, now: float, ret: Retention) -> None:
        """Write or refresh: lifetime counted from the start of the request.

        For breakpoint caches (Anthropic), whose scopes never hold a path."""
        until = now + _seconds(ret.idle)
        if self.expires.get(key, _NEVER) > now:
            self.expires[key] = min(until, self.hard[key])
            return
        limit = self.hard[key] = now + _seconds(ret.max_age)
        self.expires[key] = min(until, limit)

    def read_path(self, keys: list[int], now: float, known: int = 0) -> _PathRead:
        """Where the longest alive run of leading ``keys`` ends; the caller may know
        that the first ``known`` of them are the path's."""
        path = self.path
        shared = _common_length(path.keys, keys, known) if path is not None else 0
        dead_at = 0
        if path is not None and shared and path.touched + path.idle > now:
            dead_at = bisect_left(path.floor, -now, 0, shared)
        tail_expires = list(map(self.expires.get, keys[shared:], repeat(_NEVER)))
        if dead_at < shared:
            return _PathRead(shared, dead_at, dead_at, True, tail_expires)
        alive = list(map(now.__lt__, tail_expires))
        try:
            j = alive.index(False)
        except ValueError:
            return _PathRead(shared, shared, len(keys), False, tail_expires)
        return _PathRead(shared, shared, shared + j, tail_expires[j] != _NEVER, tail_expires)

    def write_path(self, keys: list[int], now: float, ret: Retention, read: _PathRead) -> None:
        """Write or refresh every key (see :meth:`put`); ``read`` from :meth:`read_path`."""
        idle, age = _seconds(ret.idle), _seconds(ret.max_age)
        limit = now + age
        shared, path = read.shared, self.path
        hard: list[float] = []
        floor: list[float] = []
        if path is not None:
            if shared < len(path.keys):  # left behind: their state goes to the maps
                gone, gone_hard = path.keys[shared:], path.hard[shared:]
                self.hard.update(zip(gone, gone_hard, strict=True))
                until = path.touched + path.idle
                self.expires.update(zip(gone, map(min, repeat(until), gone_hard), strict=True))
            hard, floor = path.hard, path.floor  # the old path is replaced: reuse its lists
            del hard[shared:], floor[shared:]
            if read.dead_at < shared:  # shared entries that had expired are written anew
                if path.touched + path.idle <= now:
                    hard = [limit] * shared
                else:
                    hard = [h if h > now else limit for h in hard]
                floor = []
        tail = keys[shared:]
        # an alive entry keeps its hard limit; any other is written anew
        old = self.hard
        hard.extend(
            [old[k] if e > now else limit for k, e in zip(tail, read.tail_expires, strict=True)]
        )
        lows = accumulate(hard[len(floor) :], min, initial=-floor[-1] if floor else inf)
        next(lows)  # the initial value
        floor.extend(map(neg, lows))
        self.path = _Path(keys, hard, floor, now, idle)

    def __len__(self) -> int:
        if self.path is None:
            return len(self.expires)
        return len(self.expires.keys() | set(self.path.keys))


def _common_length(a: list[int], b: list[int], known: int = 0) -> int:
    """How many leading items ``a`` and ``b`` share (the first ``known`` are known to
    be equal), by C-level slice comparisons."""
    return narrow(a, b, known, min(len(a), len(b)))


class CacheStore:
    """Cache entries by scope (provider, model, key), shared across steps and sessions.

    Expired entries are kept (and reported as expired) so a miss can say why.
    """

    def __init__(self) -> None:
        self._scopes: dict[tuple[str, ...], Scope] = {}

    def scope(self, *key: str) -> Scope:
        scope = self._scopes.get(key)
        if scope is None:
            scope = self._scopes[key] = Scope()
        return scope

    def __len__(self) -> int:
        return sum(len(s) for s in self._scopes.values())


_FOREVER = 1e18


def _seconds(d: timedelta) -> float:
    return _FOREVER if d == timedelta.max else d.total_seconds()


# --- segments and token counts -------------------------------------------------------


#: Below this many characters a block is split afresh and fingerprinted by its
#: hash: cheaper than finding what it shares with its previous text.
SHORT_BLOCK = 2048


class _Split:
    """A block's text cut into lines, with its token total and content fingerprint.

    A long block also keeps running character ends, token sums and line hashes,
    so its next text can be split from where it stops sharing lines with this one.
    """

    __slots__ = (
        "counts",
        "ends",
        "fingerprint",
        "kept_from",
        "kept_lines",
        "line_prints",
        "lines",
        "prints",
        "sums",
        "text",
        "total",
    )

    def __init__(
        self,
        text: str,
        lines: list[str],
        counts: list[int],
        ends: list[int] | None = None,  # ends[i]: characters up to and including line i
        sums: list[int] | None = None,  # sums[i]: tokens up to and including line i
        prints: list[int] | None = None,  # prints[i]: a running hash of lines 0..i
    ) -> None:
        self.text = text
        self.lines = lines
        self.counts = counts
        self.ends = ends
        self.sums = sums
        self.prints = prints
        self.line_prints = prints  # a short block's are worked out when first asked for
        self.kept_from: str | None = None  # the previous text this split extended, if any
        self.kept_lines = 0  # how many of its leading lines it kept
        if sums is None or prints is None:
            self.total, self.fingerprint = sum(counts), hash(text)
        else:
            # a long block is fingerprinted line by line, so a step hashes only its
            # new lines instead of the whole (possibly very long) text
            self.total, self.fingerprint = sums[-1], prints[-1]


def _chain(h: int, line: str) -> int:
    return hash((h, line))


class Segmenter:
    """Splits block texts into lines and counts tokens per distinct line.

    Counts come from ``counter`` (the shared per-encoding memo); a local
    line → count map lets a whole block be looked up with one C-level ``map``
    instead of a Python call per line, which is what keeps the call tree (new
    text at every step, mostly old lines) cheap. The last split of each block
    name is kept, so an unchanged block costs one string comparison.
    """

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._counts: dict[str, int] = {}
        self._last: dict[str, _Split] = {}

    def split(self, name: str, text: str) -> tuple[list[str], list[int], int]:
        last = self._last.get(name)
        if last is not None and (last.text is text or last.text == text):
            return last.lines, last.counts, last.total
        if len(text) < SHORT_BLOCK:
            lines = text.splitlines(keepends=True) or [""]
            counts = self._counts_of(lines)
            split = self._last[name] = _Split(text, lines, counts)
            return lines, counts, split.total
        keep = 0
        if last is not None and last.ends is not None:
            # The call tree grows and releases at its tail: keep the lines of the
            # common prefix with this block's previous text, split only the rest.
            common = common_prefix(last.text, text)
            keep = bisect_right(last.ends, common)
            # a kept line must end where it ends in the new text: at a "\n" it does
            while keep and not last.lines[keep - 1].endswith("\n"):
                keep -= 1
        if (
            last is None
            or last.ends is None
            or last.sums is None
            or last.prints is None
            or not keep
        ):
            lines = text.splitlines(keepends=True)
            counts = self._counts_of(lines)
            ends = list(accumulate(map(len, lines)))
            sums = list(accumulate(counts))
            prints = list(accumulate(lines, _chain, initial=0))
            del prints[0]
            split = self._last[name] = _Split(text, lines, counts, ends, sums, prints)
            return lines, counts, split.total
        # extend the previous lists in place: copying them would cost O(lines) per
        # step, and nothing holds on to a previous split
        lines, counts, ends, sums, prints = (
            last.lines,
            last.counts,
            last.ends,
            last.sums,
            last.prints,
        )
        start = ends[keep - 1]
        tail = text[start:].splitlines(keepends=True)
        tail_counts = self._counts_of(tail)
        for lst in (lines, counts, ends, sums, prints):
            del lst[keep:]
        lines.extend(tail)
        counts.extend(tail_counts)
        ends.extend(accumulate(map(len, tail), initial=start))
        del ends[keep]  # accumulate's initial value
        sums.extend(accumulate(tail_counts, initial=sums[-1]))
        del sums[keep]
        prints.extend(accumulate(tail, _chain, initial=prints[-1]))
        del prints[keep]
        before = last.text
        last.__init__(text, lines, counts, ends, sums, prints)  # type: ignore[misc]
        last.kept_from, last.kept_lines = before, keep
        return lines, counts, last.total

    def _counts_of(self, lines: list[str]) -> list[int]:
        # -1 marks a line not seen yet; map and min run at C speed
        counts = list(map(self._counts.get, lines, repeat(-1, len(lines))))
        if counts and min(counts) < 0:
            self._fill(lines, counts)
        return counts

    def _fill(self, lines: list[str], counts: list[int]) -> None:
        count, known = self.counter.count, self._counts
        i = counts.index(-1)
        while True:  # jump between unseen lines with C-level index(), not a Python scan
            counts[i] = known[lines[i]] = count(lines[i])
            try:
                i = counts.index(-1, i + 1)
            except ValueError:
                return

    def tokens(self, name: str, text: str) -> int:
        return self.split(name, text)[2]

    def measure(self, block: WireBlock) -> tuple[int, int]:
        """A block's token count and content fingerprint."""
        if block.declared_tokens is not None:
            return block.declared_tokens, hash((block.text, block.declared_tokens))
        last = self._last.get(block.name)
        if last is None or last.text is not block.text:
            self.split(block.name, block.text)
            last = self._last[block.name]
        return last.total, last.fingerprint

    def kept_lines(self, block: WireBlock, before: str) -> int:
        """How many leading lines ``block`` shares with ``before``, when its split
        was made by extending a split of ``before`` (0 when that is not known)."""
        split = self._last.get(block.name)
        if split is None or split.text is not block.text or split.kept_from is not before:
            return 0
        return split.kept_lines

    def segments(self, block: WireBlock) -> tuple[list[int], list[int], int]:
        """A wire block's token count per line, the running hash of its lines (entry
        ``i`` identifies lines ``0..i``) and its total; a block whose content the
        recording lacks is one segment of its declared size."""
        if block.declared_tokens is not None:
            n = block.declared_tokens
            return [n], [hash((block.text, n))], n
        self.split(block.name, block.text)
        split = self._last[block.name]
        prints = split.line_prints
        if prints is None:
            prints = split.line_prints = list(accumulate(split.lines, _chain, initial=0))[1:]
        return split.counts, prints, split.total

    def block(self, block: WireBlock) -> tuple[list[str], list[int], int]:
        """A wire block's segments; a block whose content the recording lacks is one
        segment of its declared size."""
        if block.declared_tokens is not None:
            return [block.text], [block.declared_tokens], block.declared_tokens
        return self.split(block.name, block.text)


# --- results and the interface ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CacheResult:
    total: int
    read: int
    write: int
    block_tokens: tuple[int, ...]
    block_cache: tuple[str, ...]  # read | write | uncached, per block
    expired: bool = False  # an expired entry matched beyond the read prefix
    below_minimum: bool = False  # the request's prefixes were too short to cache
    cached_blocks: int = 0  # leading blocks served entirely from cache
    notes: tuple[str, ...] = field(default=())

    @property
    def uncached(self) -> int:
        return self.total - self.read - self.write


class Simulator(Protocol):
    provider: str

    def minimum(self, model: str) -> int: ...

    def request(
        self, blocks: Sequence[WireBlock], model: str, at: datetime, store: CacheStore
    ) -> CacheResult: ...


def _block_states(tokens: Sequence[int], read: int, write: int) -> tuple[tuple[str, ...], int]:
    """Per block: read if it lies inside the read prefix, write if it starts inside the written part."""
    states: list[str] = []
    start = 0
    full = 0
    for n in tokens:
        end = start + n
        if end <= read and (n > 0 or start < read):
            states.append(READ)
            full += 1
        elif start < read + write:
            states.append(WRITE)
        else:
            states.append(UNCACHED)
        start = end
    return tuple(states), full


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
        states, full = _block_states(tokens, read, write)
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
            n = min(len(blocks), len(last.blocks))
            while same < n and blocks[same] is last.blocks[same]:
                same += 1
        if last is not None and same:
            reused = last.ends[same - 1]
            keys, cums = last.keys[:reused], last.cums[:reused]
            block_tokens, ends = list(last.block_tokens[:same]), last.ends[:same]
            h, running = keys[-1], cums[-1]
        else:
            reused, keys, cums, block_tokens, ends = 0, [], [], [], []
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
                    kept = self.segmenter.kept_lines(b, old.text)
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
        self._last = _Sent(model, tuple(blocks), keys, cums, tuple(block_tokens), ends)
        return keys, cums, block_tokens, known

    def minimum(self, model: str) -> int:
        if self.provider == "openai":
            return int(rules()["openai"]["min_tokens"]["value"])
        if self.provider == "gemini":
            return gemini_minimum(model)
        return int(rules()["deepseek"]["min_tokens"]["value"])

    def unit_for(self, model: str) -> int:
        return openai_increment(model) if self.provider == "openai" else self.unit

    def retention_for(self, model: str) -> Retention:
        if self.retention is not None:
            return self.retention
        if self.provider == "openai":
            return openai_retention(model)
        return _default_retention(self.provider)

    def _floor(self, n: int, minimum: int, unit: int) -> int:
        return 0 if n < minimum else n - n % unit

    def request(
        self, blocks: Sequence[WireBlock], model: str, at: datetime, store: CacheStore
    ) -> CacheResult:
        scope = store.scope(self.provider, model, self.cache_key)
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
        minimum, unit = self.minimum(model), self.unit_for(model)
        total = running
        read = self._floor(matched, minimum, unit)
        write = max(0, self._floor(total, minimum, unit) - read)
        if total >= minimum:
            scope.write_path(keys, now, self.retention_for(model), state)
        states, full = _block_states(block_tokens, read, write)
        return CacheResult(
            total=total,
            read=read,
            write=write,
            block_tokens=tuple(block_tokens),
            block_cache=states,
            expired=expired,
            below_minimum=total < minimum,
            cached_blocks=full,
        )


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
