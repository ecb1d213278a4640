"""The cache store as it was before a path kept its own key list and chunked hard
limits: kept as the reference the in-place simulators are checked against.

A path here holds the very key list its writer handed over, copied anew by the
writer at every request, and one running minimum per key."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from datetime import timedelta
from itertools import accumulate, repeat
from math import inf
from operator import neg

from assembler.cache.rules import Retention
from assembler.sessions.versions import narrow

ALIVE, EXPIRED, MISSING, PENDING = 0, 1, 2, 3  # PENDING: written, not yet readable
NEVER = -inf  # the expiry read for a key never written (any real one is finite)


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
    tail_expires: list[float]  # expiry of each key after the shared ones (NEVER: none)


class Scope:
    """The entries of one cache: key → expiry, key → the hard limit a hit never
    extends past (epoch seconds), plus the latest request's keys kept lazily
    (:class:`_Path`). Flat maps rather than an object per entry, so a request's
    new segment keys are looked up and written with C-level ``map`` / ``update``."""

    __slots__ = ("expires", "hard", "path", "ready", "recent")

    def __init__(self) -> None:
        self.expires: dict[int, float] = {}
        self.hard: dict[int, float] = {}
        self.ready: dict[int, float] = {}  # readable by requests that start after this
        self.recent: list[int] = []  # the latest breakpoints written (OpenAI GPT-5.6+)
        self.path: _Path | None = None

    def state(self, key: int, now: float) -> int:
        """An entry's state, for scopes written by :meth:`put` alone (no path)."""
        expires = self.expires.get(key)
        if expires is None:
            return MISSING
        if expires <= now:
            return EXPIRED
        return PENDING if self.ready.get(key, NEVER) >= now else ALIVE

    def put(self, key: int, now: float, ret: Retention, ready: float | None = None) -> None:
        """Write or refresh: lifetime counted from the start of the request.

        A new entry is readable only by requests that start after ``ready`` (the
        writer's first response; default its start). For breakpoint caches
        (Anthropic), whose scopes never hold a path."""
        self.put_for(key, now, to_seconds(ret.idle), to_seconds(ret.max_age), ready)

    def put_for(
        self, key: int, now: float, idle: float, age: float, ready: float | None = None
    ) -> None:
        """:meth:`put` with the retention in seconds (a caller writing many entries
        converts it once)."""
        until = now + idle
        if self.expires.get(key, NEVER) > now:
            self.expires[key] = min(until, self.hard[key])
            return
        limit = self.hard[key] = now + age
        self.expires[key] = min(until, limit)
        self.ready[key] = now if ready is None else ready

    def read_path(self, keys: list[int], now: float, known: int = 0) -> _PathRead:
        """Where the read of leading ``keys`` ends: at the longest prefix whose own entry
        is alive (each entry ages from its own write, so a longer prefix written after
        the head may outlive the head's hard limit); the caller may know that the first
        ``known`` of them are the path's."""
        path = self.path
        shared = common_length(path.keys, keys, known) if path is not None else 0
        dead_at = end = 0
        if path is not None and shared and path.touched + path.idle > now:
            dead_at = bisect_left(path.floor, -now, 0, shared)
            end = shared
            if dead_at < shared:  # some shared entry passed its hard limit: the last alive one
                hard = path.hard
                end = next(
                    (i + 1 for i in range(shared - 1, dead_at, -1) if hard[i] > now), dead_at
                )
        tail_expires = list(map(self.expires.get, keys[shared:], repeat(NEVER)))
        try:  # a prefix never written: no longer one was either
            stop = tail_expires.index(NEVER)
        except ValueError:
            stop = len(tail_expires)
        alive = [i for i in range(stop) if tail_expires[i] > now]
        if alive:
            end = shared + alive[-1] + 1
        expired = end < shared + stop
        return _PathRead(shared, dead_at, end, expired, tail_expires)

    def write_path(self, keys: list[int], now: float, ret: Retention, read: _PathRead) -> None:
        """Write or refresh every key (see :meth:`put`); ``read`` from :meth:`read_path`."""
        idle, age = to_seconds(ret.idle), to_seconds(ret.max_age)
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
                if path.touched + path.idle <= now:  # all of them
                    hard, floor = [limit] * shared, [-limit] * shared
                else:  # those from the first past its hard limit on (the ones before are alive)
                    dead = read.dead_at
                    hard[dead:] = [h if h > now else limit for h in hard[dead:]]
                    del floor[dead:]
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


def common_length(a: list[int], b: list[int], known: int = 0) -> int:
    """How many leading items ``a`` and ``b`` share (the first ``known`` are known to
    be equal), by C-level slice comparisons."""
    return narrow(a, b, known, min(len(a), len(b)))


class CacheStore:
    """Cache entries by scope (provider, model, key), shared across steps and sessions.

    Expired entries are kept (and reported as expired) so a miss can say why.
    """

    def __init__(
        self, platform: str = "", scopes: dict[tuple[str, ...], Scope] | None = None
    ) -> None:
        self.platform = platform  # "": the provider's own API
        self._scopes: dict[tuple[str, ...], Scope] = {} if scopes is None else scopes

    def on_platform(self, platform: str) -> CacheStore:
        """The same store as the simulators of one serving platform see it: a platform
        other than the provider's own API (Bedrock, Vertex) keeps its entries apart, so
        a request never reads what another platform wrote."""
        if platform == self.platform:
            return self
        return CacheStore(platform, self._scopes)

    def scope(self, *key: str) -> Scope:
        if self.platform:
            key = (self.platform, *key)
        scope = self._scopes.get(key)
        if scope is None:
            scope = self._scopes[key] = Scope()
        return scope

    def __len__(self) -> int:
        return sum(len(s) for s in self._scopes.values())


FOREVER = 1e18


def to_seconds(d: timedelta) -> float:
    return FOREVER if d == timedelta.max else d.total_seconds()
