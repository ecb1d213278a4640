"""What every simulator shares: the result of one request and the simulator interface."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import accumulate
from typing import Protocol

from assembler.cache.store import CacheStore
from assembler.design.wire import WireBlock
from assembler.sessions.model import RequestSettings

# --- results and the interface ----------------------------------------------------------


READ, WRITE, UNCACHED = "read", "write", "uncached"


# Never changed once made; not frozen, as every step makes one and a frozen
# dataclass costs 2.5x to make (each field set through object.__setattr__).
@dataclass(slots=True, unsafe_hash=True)
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
    # what the simulator saw that explains a shortfall: lookback_exceeded,
    # concurrent_cold_write, setting_changed, cache_key_changed, breakpoint_mismatch
    cause: str | None = None
    setting_changes: tuple[tuple[str, str, str], ...] = ()  # (setting, before, now)
    expected: bool = False  # a best-effort cache: the read is an expectation
    write_1h: int | None = None  # the part of ``write`` with a 1h lifetime; None: as the ttl says

    @property
    def uncached(self) -> int:
        return self.total - self.read - self.write


class Simulator(Protocol):
    provider: str

    def minimum(self, model: str) -> int: ...

    def request(
        self,
        blocks: Sequence[WireBlock],
        model: str,
        at: datetime,
        store: CacheStore,
        settings: RequestSettings | None = None,
    ) -> CacheResult: ...


def name_kind(name: str) -> str:
    """The content kind a recorded block's name carries (``messages[N] <kind> …``), or ""."""
    parts = name.split(" ", 2)
    return parts[1] if len(parts) > 1 and parts[0].startswith("messages[") else ""


def cache_key(settings: RequestSettings | None, default: str) -> str:
    """The prompt_cache_key the request recorded, else the simulator's own."""
    recorded = settings.prompt_cache_key if settings is not None else None
    return recorded if recorded is not None else default


def prefix_result(
    tokens: Sequence[int],
    read: int,
    write: int,
    *,
    total: int,
    minimum: int,
    expired: bool,
    cause: str | None,
    expected: bool = False,
    ends: Sequence[int] | None = None,
) -> CacheResult:
    """The result of a request to a cache that holds prefixes: the blocks of ``tokens``
    inside the first ``read`` tokens are read, those starting in the next ``write``
    written, the rest uncached (``ends``: the blocks' running totals, if at hand)."""
    states, full = (
        block_states(tokens, read, write) if ends is None else states_at(ends, read, write)
    )
    return CacheResult(
        total=total,
        read=read,
        write=write,
        block_tokens=tuple(tokens),
        block_cache=states,
        expired=expired,
        below_minimum=total < minimum,
        cached_blocks=full,
        cause=cause,
        expected=expected,
    )


def block_states(tokens: Sequence[int], read: int, write: int) -> tuple[tuple[str, ...], int]:
    """Per block: read if it lies inside the read prefix, write if it starts inside the written part."""
    return states_at(list(accumulate(tokens)), read, write)


def states_at(ends: Sequence[int], read: int, write: int) -> tuple[tuple[str, ...], int]:
    """:func:`block_states` from the blocks' running token totals (``ends[i]``: the
    tokens up to and including block ``i``), and how many leading blocks are read.

    A block is read when it ends inside the read prefix, except a block of no
    tokens at its very end (it starts there, not inside); a later one is written
    when it starts before ``read + write``. Both are runs found by bisection, so
    the states are built at C speed whatever the number of blocks.
    """
    n = len(ends)
    first = bisect_left(ends, read)  # blocks before it end strictly inside the read
    full = first + 1 if read > 0 and first < n and ends[first] == read else first
    # block i starts at ends[i - 1]: those starting before the written part's end
    limit = read + write
    written = (bisect_left(ends, limit, 0, n - 1) + 1 if limit > 0 else 0) if n else 0
    written = max(written, full)
    return (READ,) * full + (WRITE,) * (written - full) + (UNCACHED,) * (n - written), full
