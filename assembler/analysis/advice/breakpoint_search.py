"""The cheapest breakpoint set for a request sequence, by branch and bound over block boundaries.

A :class:`Trace` holds, per candidate boundary (a component, in wire order)
and per request, the prefix tokens up to it and whether a breakpoint there
would find its entry alive. With breakpoints at the same components on every
request, an entry is written or refreshed at every request that marks it, so
aliveness is a property of the boundary alone, and a request's bill depends on
the set only through two numbers: the longest alive marked prefix (read) and
the longest marked prefix (written up to it). Adding a boundary can only raise
either, so the set is built in position order, and a branch is cut when even
the best single alive boundary after it on every request (a lower bound per
request, summed) cannot beat the best set found.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]
Bools = NDArray[np.bool_]


@dataclass(frozen=True)
class Trace:
    """One arrangement's requests, seen from every candidate boundary."""

    names: tuple[str, ...]  # candidate boundaries in wire order
    cum: Floats  # (n, T): tokens up to and including the boundary; 0 where it cannot be marked
    alive: dict[str, Bools]  # ttl → (n, T): a mark there reads its own entry
    total: Floats  # (T,) input tokens of each request
    uncached_rate: Floats  # (T,) USD per token
    read_rate: Floats
    write_rate: dict[str, Floats]  # ttl → (T,)
    output_usd: float  # the same under every set
    # ttl → (n, T): what a mark there reads, where that can fall short of its own prefix
    # (recorded requests: an entry found through the lookback); None: ``cum`` where alive
    reads: dict[str, Floats] | None = None

    def read(self, ttl: str) -> Floats:
        """(n, T): the tokens a mark at each boundary reads under ``ttl``."""
        if self.reads is not None:
            return self.reads[ttl]
        return np.where(self.alive[ttl], self.cum, 0.0)

    @property
    def steps(self) -> int:
        return int(self.total.shape[0])


@dataclass(frozen=True)
class Choice:
    breakpoints: tuple[str, ...]
    ttl: str
    usd: float
    read: float  # tokens read over all requests
    nodes: int = 0  # branches the search visited


def _vectors(trace: Trace, ttl: str, chosen: Sequence[int]) -> tuple[Floats, Floats]:
    h = np.zeros(trace.steps)
    m = np.zeros(trace.steps)
    read = trace.read(ttl)
    for c in chosen:
        np.maximum(h, read[c], out=h)
        np.maximum(m, trace.cum[c], out=m)
    return h, m


def _cost(trace: Trace, ttl: str, h: Floats, m: Floats) -> Floats:
    w = trace.write_rate[ttl]
    return trace.read_rate * h + w * (m - h) + trace.uncached_rate * (trace.total - m)


def evaluate(trace: Trace, ttl: str, chosen: Sequence[int]) -> Choice:
    """The bill of one breakpoint set (indices into ``trace.names``)."""
    h, m = _vectors(trace, ttl, chosen)
    usd = float(_cost(trace, ttl, h, m).sum()) + trace.output_usd
    return Choice(tuple(trace.names[c] for c in chosen), ttl, usd, float(h.sum()))


def brute_force(trace: Trace, ttl: str, limit: int) -> Choice:
    """Every set of at most ``limit`` boundaries (for tests and small cases)."""
    best = evaluate(trace, ttl, ())
    for k in range(1, limit + 1):
        for chosen in combinations(range(len(trace.names)), k):
            c = evaluate(trace, ttl, chosen)
            if _better(c.usd, c.read, (best.usd, best.read)):
                best = c
    return best


def _better(usd: float, read: float, best: tuple[float, float]) -> bool:
    """Cheaper, or as cheap (to a billionth of a cent) with more read."""
    return usd < best[0] - 1e-11 or (abs(usd - best[0]) <= 1e-11 and read > best[1])


def child_slices(k: int, steps: int) -> Iterator[tuple[slice, Bools]]:
    """The ``k`` children of a node in slices, each with its (child, next boundary, 1) mask of
    the boundaries after the child: one array operation bounds a slice of children, and a
    long trace never holds more than about a million numbers at once."""
    after = np.arange(k)[None, :, None] > np.arange(k)[:, None, None]
    size = max(1, (1 << 20) // (k * steps or 1))
    for lo in range(0, k, size):
        yield slice(lo, lo + size), after[lo : lo + size]


def search(trace: Trace, ttl: str, limit: int) -> Choice:
    """The cheapest set of at most ``limit`` boundaries, ties to the higher hit ratio."""
    n = len(trace.names)
    reads = trace.read(ttl)
    best_set: tuple[int, ...] = ()
    h0, m0 = _vectors(trace, ttl, ())
    best = (float(_cost(trace, ttl, h0, m0).sum()), 0.0)
    nodes = 0
    # per boundary and request, what it reads (-1: nothing)
    read_here = np.where(reads > 0, reads, -1.0)

    # the bound assumes a write costs at least an uncached token; otherwise search everything
    bounded = bool((trace.write_rate[ttl] >= trace.uncached_rate).all())

    def bounds(hs: Floats, ms: Floats, costs: Floats, start: int) -> list[float]:
        """Per child (boundary ``start + i`` added, giving ``hs[i]``, ``ms[i]`` and the cost
        per request ``costs[i]``): the least it or one more boundary after it can cost."""
        if not bounded:
            return [-np.inf] * len(hs)
        tail, cum = read_here[start:], trace.cum[start:]
        least = costs.copy()
        for rows, after in child_slices(len(hs), trace.steps):
            hh = np.maximum(hs[rows, None, :], tail)
            mm = np.maximum(ms[rows, None, :], cum)
            options = np.where(after & (tail >= 0), _cost(trace, ttl, hh, mm), np.inf)
            np.minimum(least[rows], options.min(axis=1), out=least[rows])
        return least.sum(axis=1).tolist()  # type: ignore[no-any-return]

    def visit(chosen: tuple[int, ...], h: Floats, m: Floats, start: int) -> None:
        nonlocal best, best_set, nodes
        nodes += 1
        if len(chosen) == limit or start >= n:
            return
        # every next boundary at once: one array operation per level instead of per child
        hs = np.maximum(h, reads[start:])
        ms = np.maximum(m, trace.cum[start:])
        costs = _cost(trace, ttl, hs, ms)
        usds = costs.sum(axis=1).tolist()
        read_sums = hs.sum(axis=1).tolist()
        deeper = len(chosen) + 1 < limit
        least = bounds(hs, ms, costs, start) if deeper else []
        for i, c in enumerate(range(start, n)):
            usd, read = usds[i], read_sums[i]
            new = (*chosen, c)
            if _better(usd, read, best):
                best, best_set = (usd, read), new
            if deeper and least[i] < best[0] - 1e-11:
                visit(new, hs[i], ms[i], c + 1)

    if limit > 0 and n:
        visit((), h0, m0, 0)
    found = evaluate(trace, ttl, best_set)
    return Choice(found.breakpoints, ttl, found.usd, found.read, nodes)
