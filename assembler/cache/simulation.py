"""What every simulator shares: the result of one request and the simulator interface."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from assembler.cache.store import CacheStore
from assembler.design.wire import WireBlock
from assembler.sessions.model import RequestSettings

# --- results and the interface ----------------------------------------------------------


READ, WRITE, UNCACHED = "read", "write", "uncached"


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


def block_states(tokens: Sequence[int], read: int, write: int) -> tuple[tuple[str, ...], int]:
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
