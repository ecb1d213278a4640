"""The cache store: the entries written across a session's requests, with their expiry, per scope."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from datetime import timedelta
from itertools import accumulate, compress, repeat
from math import inf
from operator import ge, neg

from assembler.cache.rules import Retention
from assembler.sessions.versions import narrow

ALIVE, EXPIRED, MISSING, PENDING = 0, 1, 2, 3  # PENDING: written, not yet readable
NEVER = -inf  # the expiry read for a key never written (any real one is finite)


#: Keys per chunk of a path's hard limits: the limits passed at a request are
#: looked for chunk by chunk, by each chunk's least limit.
CHUNK = 64


class _Limits:
    """The hard limits of a path's keys, with the least of each chunk of them.

    A request finds the first passed limit by bisection over the chunks and
    renews the passed ones chunk by chunk; where keys are cut or added only
    their chunks are worked out again. A session active for longer than the
    entries' lifetime then costs per request the limits that passed, not the
    ones written since the oldest of those.
    """

    __slots__ = ("floor", "lows", "values")

    def __init__(self) -> None:
        self.values: list[float] = []  # values[i]: key i's hard limit
        self.lows: list[float] = []  # lows[c]: the least limit of chunk c
        self.floor: list[float] = []  # floor[c] = -min(lows[:c + 1]): non-decreasing, for bisection

    def first_passed(self, now: float, stop: int) -> int:
        """The first of the leading ``stop`` keys whose limit is not after ``now`` (``stop``: none)."""
        start = bisect_left(self.floor, -now) * CHUNK
        if start >= stop:
            return stop
        flags = list(map(ge, repeat(now), self.values[start : min(start + CHUNK, stop)]))
        flags.append(True)
        return min(start + flags.index(True), stop)

    def cut(self, n: int) -> None:
        """Keep the limits of the leading ``n`` keys."""
        del self.values[n:]
        self._relow(n // CHUNK)

    def extend(self, values: list[float]) -> None:
        start = len(self.values)
        self.values.extend(values)
        self._relow(start // CHUNK)

    def fill(self, limit: float) -> None:
        """Every key gets ``limit``."""
        chunks = -(-len(self.values) // CHUNK)
        self.values = [limit] * len(self.values)
        self.lows, self.floor = [limit] * chunks, [-limit] * chunks

    def renew(self, now: float, limit: float, start: int) -> None:
        """Every limit not after ``now``, from key ``start`` on, becomes ``limit``."""
        values, lows = self.values, self.lows
        first = start // CHUNK
        passed = list(compress(range(first, len(lows)), map(ge, repeat(now), lows[first:])))
        for c in passed:
            a = c * CHUNK
            new = [h if h > now else limit for h in values[a : a + CHUNK]]
            values[a : a + CHUNK] = new
            lows[c] = min(new)
        if passed:
            self._refloor(passed[0])

    def _relow(self, c: int) -> None:
        """Work out the chunks from ``c`` on again."""
        values, lows = self.values, self.lows
        del lows[c:]
        lows.extend(map(min, (values[i : i + CHUNK] for i in range(c * CHUNK, len(values), CHUNK))))
        self._refloor(c)

    def _refloor(self, c: int) -> None:
        floor = self.floor
        del floor[c:]
        mins = accumulate(self.lows[c:], min, initial=-floor[-1] if floor else inf)
        next(mins)  # the initial value
        floor.extend(map(neg, mins))


class _Path:
    """The segment keys of the latest request written to a scope, kept lazily.

    That request touched every key on it at ``touched`` with lifetime ``idle``,
    so key ``i``'s entry expires at ``min(touched + idle, hard limit i)``; the
    maps get a key's state only when a later request leaves the key behind. A
    request that shares most of its prefix with the one before (a history
    growing at its tail) then costs only its new segments. The key list is the
    scope's own, cut and extended in place at the first changed key: the
    caller's key list changes under it from one request to the next.
    """

    __slots__ = ("idle", "keys", "limits", "touched")

    def __init__(self, keys: list[int], limits: _Limits, touched: float, idle: float) -> None:
        self.keys = keys
        self.limits = limits
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
            hard = path.limits
            dead_at = hard.first_passed(now, shared)
            end = shared
            if dead_at < shared:  # some shared entry passed its hard limit: the last alive one
                values = hard.values
                end = next(
                    (i + 1 for i in range(shared - 1, dead_at, -1) if values[i] > now), dead_at
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
        tail = keys[shared:]
        if path is None:
            limits, own = _Limits(), list(tail)
        else:
            limits, own = path.limits, path.keys
            if shared < len(own):  # left behind: their state goes to the maps
                gone, gone_hard = own[shared:], limits.values[shared:]
                self.hard.update(zip(gone, gone_hard, strict=True))
                until = path.touched + path.idle
                self.expires.update(zip(gone, map(min, repeat(until), gone_hard), strict=True))
            # only the keys past the shared ones change: a copy would cost the whole path
            del own[shared:]
            limits.cut(shared)
            if read.dead_at < shared:  # shared entries that had expired are written anew
                if path.touched + path.idle <= now:  # all of them
                    limits.fill(limit)
                else:  # those from the first past its hard limit on (the ones before are alive)
                    limits.renew(now, limit, read.dead_at)
            own.extend(tail)
        # an alive entry keeps its hard limit; any other is written anew
        old = self.hard
        limits.extend(
            [old[k] if e > now else limit for k, e in zip(tail, read.tail_expires, strict=True)]
        )
        self.path = _Path(own, limits, now, idle)

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
