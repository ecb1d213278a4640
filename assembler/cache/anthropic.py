"""Anthropic's breakpoint cache: entries written at breakpoints, found by a 20-position lookback.

Rules (each in ``cache_rules.yaml`` with its source): a run of consecutive
``tool_use`` blocks is one lookback position, and so is a run of ``tool_result``
blocks; an entry is readable only once the response of the request that wrote it
has started, so parallel requests on a cold prefix each pay the write; a changed
request setting (``tool_choice``, effort, …) invalidates the level the rules name
and every later one.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from datetime import datetime

from assembler.cache.rules import (
    Retention,
    anthropic_minimum,
    invalidation_level,
    parse_duration,
    rules,
)
from assembler.cache.segmenter import Segmenter
from assembler.cache.settings_salt import SECTIONS, changed_settings, level_salts
from assembler.cache.simulation import CacheResult, name_kind, states_at
from assembler.cache.store import NEVER, CacheStore, Scope, to_seconds
from assembler.design.wire import WireBlock, leading_same
from assembler.errors import UsageError
from assembler.sessions.model import RequestSettings

# --- Anthropic ----------------------------------------------------------------------------


def block_kind(block: WireBlock) -> str:
    """The content kind of a recorded block, from the importers' names ``messages[N] <kind> …``."""
    return name_kind(block.name)


class _Sent:
    """A request as the simulator keyed it. Per block: its tokens, the running total,
    the key of the prefix ending there and its lookback position (counted from the
    first block; a run of tool blocks shares one); and the indices
    of the marked and of the cacheable blocks. All of it depends only on the blocks
    and the salts, so the next request keeps the part its identical leading blocks
    share and works out only the rest."""

    __slots__ = (
        "blocks",
        "cacheable",
        "cum",
        "hashes",
        "marked",
        "model",
        "positions",
        "salts",
        "tokens",
    )

    def __init__(self, model: str, salts: tuple[int, int, int]) -> None:
        self.model = model
        self.salts = salts
        self.blocks: tuple[WireBlock, ...] = ()
        self.tokens: tuple[int, ...] = ()
        self.cum: list[int] = []
        self.hashes: list[int] = []
        self.positions: list[int] = []
        self.marked: list[int] = []
        self.cacheable: list[int] = []


def _hour_after_five(lifetimes: list[str]) -> bool:
    """Whether a 1h marker follows a 5m one, which the Messages API refuses."""
    return "5m" in lifetimes and "1h" in lifetimes[lifetimes.index("5m") :]


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
        self.runs = frozenset(r["lookback"]["runs_count_as_one"])
        self.max_breakpoints = int(r["max_breakpoints"]["value"])
        self.first_response_after = parse_duration(
            r["availability"]["first_response_after"]
        ).total_seconds()
        self.automatic = automatic
        self._last: _Sent | None = None  # the previous request
        self._settings: RequestSettings | None = None  # and its settings, salts
        self._salts = level_salts(None, invalidation_level)
        self._lives: dict[str, tuple[float, float]] = {}  # lifetime name → (idle, max age) s
        self._minimums: dict[str, int] = {}
        self._kinds: dict[str, str] = {}  # block name → content kind
        # the store and model of the last request and their scope (a scope, once made,
        # is the store's for good): a session's steps ask for the same one
        self._scope: tuple[CacheStore | None, str, Scope] = (None, "", Scope())

    def minimum(self, model: str) -> int:
        return anthropic_minimum(model)

    def _retention(self, ttl: str) -> Retention:
        allowed = rules()["anthropic"]["ttl"]["allowed"]
        if ttl not in allowed:
            raise UsageError(f"ttl: expected one of {', '.join(allowed)}, found {ttl!r}")
        return Retention.fixed(parse_duration(allowed[ttl]))

    def _life(self, ttl: str) -> tuple[float, float]:
        """A lifetime's idle time and maximum age in seconds, parsed once per name."""
        life = self._lives.get(ttl)
        if life is None:
            ret = self._retention(ttl)
            life = self._lives[ttl] = (to_seconds(ret.idle), to_seconds(ret.max_age))
        return life

    def _marks(self, marked: list[int], cacheable: list[int]) -> list[int]:
        """The breakpoints used: the marked blocks (in automatic mode plus the last
        cacheable one while a slot is free), at most ``max_breakpoints``."""
        marks = marked
        if self.automatic and len(marks) < self.max_breakpoints and cacheable:
            last = cacheable[-1]
            if last not in marks:
                marks = sorted([*marks, last])
        return marks[: self.max_breakpoints]

    def breakpoints(self, blocks: Sequence[WireBlock]) -> list[int]:
        marked = [i for i, b in enumerate(blocks) if b.breakpoint is not None]
        return self._marks(marked, [i for i, b in enumerate(blocks) if b.cacheable])

    def _keyed(self, blocks: Sequence[WireBlock], model: str, salts: tuple[int, int, int]) -> _Sent:
        """The request's per-block figures (see :class:`_Sent`).

        The leading blocks that are the very objects of the previous request keep
        their figures; only the rest are measured. A level's settings enter the key
        at its first block, so a changed setting changes that level's keys and every
        later one. The previous request's lists are cut and extended in place:
        nothing else holds them (and it is forgotten until this one is complete).
        """
        last, self._last = self._last, None
        same = 0
        kind: str | None  # the kind of the last block kept
        if last is not None and last.model == model:
            same = leading_same(blocks, last.blocks)
            if last.salts != salts:  # keys are kept only up to the first changed level
                first = next(i for i in range(3) if last.salts[i] != salts[i])
                same = next(
                    (i for i, b in enumerate(blocks[:same]) if SECTIONS[b.section] >= first),
                    same,
                )
            elif same == len(blocks) == len(last.blocks):
                self._last = last
                return last
        if not same or last is None:
            sent = _Sent(model, salts)
            running, h = 0, hash(("anthropic", model, salts[0]))
            section, kind, position = "tools", None, -1
        else:
            sent = last
            sent.salts = salts
            cum, hashes, positions = sent.cum, sent.hashes, sent.positions
            del cum[same:], hashes[same:], positions[same:]
            del sent.marked[bisect_left(sent.marked, same) :]
            del sent.cacheable[bisect_left(sent.cacheable, same) :]
            running, h, position = cum[-1], hashes[-1], positions[-1]
            kept = blocks[same - 1]  # the very block of the last request: its kind is known
            section, kind = kept.section, self._kinds[kept.name]
        cum, hashes, positions = sent.cum, sent.hashes, sent.positions
        marked, cacheable = sent.marked, sent.cacheable
        measure, runs, known = self.segmenter.measure, self.runs, self._kinds
        tokens: list[int] = []
        for i in range(same, len(blocks)):
            b = blocks[i]
            if b.section != section:
                section = b.section
                h = hash((h, salts[SECTIONS[section]]))
            n, fingerprint = measure(b)
            running += n
            h = hash((h, section, fingerprint))
            tokens.append(n)
            cum.append(running)
            hashes.append(h)
            if b.breakpoint is not None:
                marked.append(i)
            if b.cacheable:
                cacheable.append(i)
            # its lookback position: a run of tool_use (or of tool_result) blocks is one
            # position, any other block one of its own
            k = known.get(b.name)
            if k is None:
                k = known[b.name] = block_kind(b) if runs else ""
            if not (k == kind and k in runs):
                position += 1
            kind = k
            positions.append(position)
        sent.tokens = sent.tokens[:same] + tuple(tokens)
        sent.blocks = tuple(blocks)
        self._last = sent
        return sent

    def _lookup(
        self,
        sent: _Sent,
        eligible: list[int],
        life: list[str],
        scope: Scope,
        now: float,
        default: str,
    ) -> tuple[int, str, int, int, bool]:
        """The hit (the longest entry alive within a mark's lookback) and the lifetime of
        the first mark whose lookback holds it; the last expired and the last pending
        entry seen in the lookbacks; whether an alive entry longer than the hit lay
        before some mark's lookback.

        The marks are walked from the last: a lookback ends at its mark and the walk
        down from a mark stops at the first alive entry, so once a hit is found no
        mark before it can find a longer one, and every entry past the hit has been
        seen. A mark at or after the hit still walks down to it: if its lookback
        holds the hit, that mark comes first and its lifetime is the hit's.
        """
        hashes, positions = sent.hashes, sent.positions
        # an entry's state, inlined (Scope.state): alive, expired, or written but not
        # yet readable (pending); a key never written is passed over
        expiry, readable = scope.expires.get, scope.ready.get
        hit, hit_life, expired_at, pending_at = -1, default, -1, -1
        missed: list[int] = []  # the lookback starts of marks that found nothing
        reach = 1 - self.lookback
        for k in range(len(eligible) - 1, -1, -1):
            mark = eligible[k]
            if mark < hit:
                break
            # the first block within the mark's lookback (the mark's own position is the first)
            start = bisect_left(positions, positions[mark] + reach, 0, mark)
            for pos in range(mark, max(start, hit) - 1, -1):
                expires = expiry(hashes[pos])
                if expires is None:
                    continue
                if expires <= now:
                    expired_at = max(expired_at, pos)
                elif readable(hashes[pos], NEVER) >= now:
                    pending_at = max(pending_at, pos)
                else:
                    hit, hit_life = pos, life[k]
                    break
            else:
                if start > 0:
                    missed.append(start)
        for start in missed:  # an alive entry longer than the hit that no lookback reached
            for pos in range(start - 1, hit, -1):
                expires = expiry(hashes[pos])
                if expires is not None and expires > now and readable(hashes[pos], NEVER) < now:
                    return hit, hit_life, expired_at, pending_at, True
        return hit, hit_life, expired_at, pending_at, False

    def request(
        self,
        blocks: Sequence[WireBlock],
        model: str,
        at: datetime,
        store: CacheStore,
        settings: RequestSettings | None = None,
        *,
        ttl: str | None = None,
    ) -> CacheResult:
        """``ttl`` is this request's own write lifetime (a recorded request's bill), if known;
        a breakpoint with a lifetime of its own writes for that long, at that rate."""
        default = ttl or self.ttl
        lives = self._lives
        if default not in lives:  # an unknown lifetime is an error even when nothing is written
            self._life(default)
        before = self._settings
        if settings is before or settings == before:  # equal settings: equal salts
            changes: tuple[tuple[str, str, str], ...] = ()
        else:
            changes = changed_settings(before, settings, invalidation_level)
            self._salts = level_salts(settings, invalidation_level)
        self._settings = settings
        sent = self._keyed(blocks, model, self._salts)
        cum, hashes = sent.cum, sent.hashes
        last_store, last_model, scope = self._scope
        if store is not last_store or model != last_model:
            scope = store.scope("anthropic", model)
            self._scope = (store, model, scope)
        now = at.timestamp()
        started = settings.response_started if settings is not None else None
        ready = started.timestamp() if started is not None else now + self.first_response_after
        minimum = self._minimums.get(model)
        if minimum is None:
            minimum = self._minimums[model] = self.minimum(model)
        marks = sent.marked  # _marks without a copy when it would change nothing
        if self.automatic or len(marks) > self.max_breakpoints:
            marks = self._marks(marks, sent.cacheable)
        eligible = [i for i in marks if cum[i] >= minimum]
        life = [blocks[m].ttl or default for m in eligible]
        for name in life:
            if name not in lives:
                self._life(name)
        hit, hit_life, expired_at, pending_at, unreachable = self._lookup(
            sent, eligible, life, scope, now, default
        )
        expiry, readable = scope.expires.get, scope.ready.get
        read = cum[hit] if hit >= 0 else 0
        put = scope.put_for
        if hit >= 0 and hit not in eligible:  # every hit refreshes the entry's lifetime
            put(hashes[hit], now, *lives[hit_life])  # (a mark's own below, for its lifetime)
        last_written = last_hour = hit
        entries, hard = scope.expires, scope.hard
        for mark, name in zip(eligible, life, strict=True):
            if mark > hit:
                put(hashes[mark], now, *lives[name], ready)
                last_written = mark
                if name == "1h":
                    last_hour = mark
            elif (
                (expires := expiry(key := hashes[mark])) is not None
                and expires > now
                and readable(key, NEVER) < now
            ):
                # put_for of an alive entry, inlined: a refresh up to its hard limit
                entries[key] = min(now + lives[name][0], hard[key])
        write = cum[last_written] - read if last_written > hit else 0
        # written up to the last 1h mark is billed at the 1h rate, the rest at 5m
        write_1h = cum[last_hour] - read if last_hour > hit else 0
        total = cum[-1] if cum else 0
        states, full = states_at(cum, read, write)
        cause = None
        if unreachable:
            cause = "lookback_exceeded"
        elif pending_at > hit:
            cause = "concurrent_cold_write"
        elif changes:
            cause = "setting_changed"
        notes: tuple[str, ...] = ()
        marked = len(sent.marked)
        if self.automatic and marked >= self.max_breakpoints:
            notes = ("automatic caching found all 4 breakpoint slots taken by explicit markers",)
        if marked > 1 and _hour_after_five([blocks[m].ttl or default for m in sent.marked]):
            notes += (
                "a 1h cache_control marker after a 5m one: the Messages API rejects the "
                "request (1-hour entries must come first); simulated as marked",
            )
        if marked > self.max_breakpoints:
            notes += (
                f"{marked} cache_control markers: the Messages API accepts at most "
                f"{self.max_breakpoints} and rejects the request; simulated with the first "
                f"{self.max_breakpoints}",
            )
        # positional, in field order: keyword arguments cost more than the init itself
        return CacheResult(
            total,
            read,
            write,
            sent.tokens,  # block_tokens
            states,  # block_cache
            expired_at > hit,  # expired
            bool(marks) and not eligible,  # below_minimum
            full,  # cached_blocks
            notes,
            cause,
            changes,  # setting_changes
            False,  # expected
            write_1h,
        )
