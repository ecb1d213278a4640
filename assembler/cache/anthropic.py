"""Anthropic's breakpoint cache: entries written at breakpoints, found by a 20-position lookback.

Rules (each in ``cache_rules.yaml`` with its source): a run of consecutive
``tool_use`` blocks is one lookback position, and so is a run of ``tool_result``
blocks; an entry is readable only once the response of the request that wrote it
has started, so parallel requests on a cold prefix each pay the write; a changed
request setting (``tool_choice``, effort, …) invalidates the level the rules name
and every later one.
"""

from __future__ import annotations

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
from assembler.cache.simulation import CacheResult, block_states, name_kind
from assembler.cache.store import ALIVE, EXPIRED, PENDING, CacheStore
from assembler.design.wire import WireBlock
from assembler.errors import UsageError
from assembler.sessions.model import RequestSettings

# --- Anthropic ----------------------------------------------------------------------------


def block_kind(block: WireBlock) -> str:
    """The content kind of a recorded block, from the importers' names ``messages[N] <kind> …``."""
    return name_kind(block.name)


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
        # the previous request: model, blocks, tokens, running totals, prefix keys, salts, settings
        self._last: (
            tuple[
                str,
                tuple[WireBlock, ...],
                tuple[int, ...],
                list[int],
                list[int],
                tuple[int, int, int],
            ]
            | None
        ) = None
        self._settings: RequestSettings | None = None

    def minimum(self, model: str) -> int:
        return anthropic_minimum(model)

    def _retention(self, ttl: str) -> Retention:
        allowed = rules()["anthropic"]["ttl"]["allowed"]
        if ttl not in allowed:
            raise UsageError(f"ttl: expected one of {', '.join(allowed)}, found {ttl!r}")
        return Retention.fixed(parse_duration(allowed[ttl]))

    def breakpoints(self, blocks: Sequence[WireBlock]) -> list[int]:
        marks = [i for i, b in enumerate(blocks) if b.breakpoint is not None]
        if self.automatic and len(marks) < self.max_breakpoints:
            last = max((i for i, b in enumerate(blocks) if b.cacheable), default=None)
            if last is not None and last not in marks:
                marks = sorted([*marks, last])
        return marks[: self.max_breakpoints]

    def _prefix_keys(
        self, blocks: Sequence[WireBlock], model: str, salts: tuple[int, int, int]
    ) -> tuple[tuple[int, ...], list[int], list[int]]:
        """Per block: its tokens, the running total and the key of the prefix ending there.

        The leading blocks that are the very objects of the previous request (an
        unchanged system prompt) keep their figures; only the rest are measured.
        A level's settings enter the key at its first block, so a changed setting
        changes that level's keys and every later one.
        """
        same = 0
        last = self._last
        if last is not None and last[0] == model:
            before = last[1]
            n = min(len(before), len(blocks))
            while same < n and blocks[same] is before[same]:
                same += 1
            if last[5] != salts:  # keys are kept only up to the first changed level
                first = next(i for i in range(3) if last[5][i] != salts[i])
                same = min(
                    same,
                    next(
                        (i for i, b in enumerate(blocks[:same]) if SECTIONS[b.section] >= first),
                        same,
                    ),
                )
        if same:
            assert last is not None
            tokens, cum, hashes = list(last[2][:same]), last[3][:same], last[4][:same]
            running, h = cum[-1], hashes[-1]
            section = blocks[same - 1].section
        else:
            tokens, cum, hashes = [], [], []
            running, h = 0, hash(("anthropic", model, salts[0]))
            section = "tools"
        measure = self.segmenter.measure
        for b in blocks[same:]:
            if b.section != section:
                section = b.section
                h = hash((h, salts[SECTIONS[section]]))
            n, fingerprint = measure(b)
            running += n
            h = hash((h, b.section, fingerprint))
            tokens.append(n)
            cum.append(running)
            hashes.append(h)
        kept = tuple(tokens)
        self._last = (model, tuple(blocks), kept, cum, hashes, salts)
        return kept, cum, hashes

    def _window(self, blocks: Sequence[WireBlock], mark: int) -> int:
        """The first block index inside ``mark``'s lookback (runs of tool blocks are one position)."""
        runs = self.runs
        position, i = 1, mark
        kind = block_kind(blocks[mark]) if runs else ""
        while i > 0:
            prev = block_kind(blocks[i - 1]) if runs else ""
            if not (prev == kind and prev in runs):
                position += 1
                if position > self.lookback:
                    break
            kind = prev
            i -= 1
        return i

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
        lives = {default: self.retention if ttl is None else self._retention(ttl)}
        salts = level_salts(settings, invalidation_level)
        changes = changed_settings(self._settings, settings, invalidation_level)
        self._settings = settings
        tokens, cum, hashes = self._prefix_keys(blocks, model, salts)
        scope = store.scope("anthropic", model)
        now = at.timestamp()
        started = settings.response_started if settings is not None else None
        ready = started.timestamp() if started is not None else now + self.first_response_after
        minimum = self.minimum(model)
        marks = self.breakpoints(blocks)
        eligible = [i for i in marks if cum[i] >= minimum]
        hit, expired_at, pending_at, beyond = -1, -1, -1, -1
        life = {m: blocks[m].ttl or default for m in eligible}
        for name in set(life.values()) - set(lives):
            lives[name] = self._retention(name)
        hit_life = default
        for mark in eligible:
            start = self._window(blocks, mark)
            found = False
            for pos in range(mark, start - 1, -1):
                state = scope.state(hashes[pos], now)
                if state == ALIVE:
                    if pos > hit:
                        hit, hit_life = pos, life[mark]
                    found = True
                    break
                if state == EXPIRED:
                    expired_at = max(expired_at, pos)
                elif state == PENDING:
                    pending_at = max(pending_at, pos)
            if not found and start > 0:  # an entry the lookback cannot reach
                for pos in range(start - 1, hit, -1):
                    if scope.state(hashes[pos], now) == ALIVE:
                        beyond = max(beyond, pos)
                        break
        read = cum[hit] if hit >= 0 else 0
        if hit >= 0:  # every hit refreshes the entry's lifetime
            scope.put(hashes[hit], now, lives[hit_life])
        last_written = last_hour = hit
        for mark in eligible:
            if mark > hit or scope.state(hashes[mark], now) == ALIVE:
                scope.put(hashes[mark], now, lives[life[mark]], ready)
            if mark > hit:
                last_written = mark
                if life[mark] == "1h":
                    last_hour = mark
        write = cum[last_written] - read if last_written > hit else 0
        # written up to the last 1h mark is billed at the 1h rate, the rest at 5m
        write_1h = cum[last_hour] - read if last_hour > hit else 0
        total = cum[-1] if cum else 0
        states, full = block_states(tokens, read, write)
        cause = None
        if beyond > hit:
            cause = "lookback_exceeded"
        elif pending_at > hit:
            cause = "concurrent_cold_write"
        elif changes:
            cause = "setting_changed"
        notes: tuple[str, ...] = ()
        marked = sum(b.breakpoint is not None for b in blocks)
        if self.automatic and marked >= self.max_breakpoints:
            notes = ("automatic caching found all 4 breakpoint slots taken by explicit markers",)
        if marked > self.max_breakpoints:
            notes += (
                f"{marked} cache_control markers: the Messages API accepts at most "
                f"{self.max_breakpoints} and rejects the request; simulated with the first "
                f"{self.max_breakpoints}",
            )
        return CacheResult(
            total=total,
            read=read,
            write=write,
            block_tokens=tokens,
            block_cache=states,
            expired=expired_at > hit,
            below_minimum=bool(marks) and not eligible,
            cached_blocks=full,
            notes=notes,
            cause=cause,
            setting_changes=changes,
            write_1h=write_1h,
        )
