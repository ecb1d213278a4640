"""Breakpoints with a lifetime each: 1h entries first, 5m entries after them.

The same branch and bound as :mod:`breakpoint_search`, with a lifetime chosen
per boundary. A request then reads up to its longest marked prefix still alive
under that mark's own lifetime, and what it writes is billed at the 1h rate up
to the last 1h mark and at the 5m rate beyond. Once a 5m mark is chosen no 1h
mark may follow it (a shorter-lived entry ahead of a longer-lived one would
expire first and take the longer one's prefix with it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise, product

import numpy as np

from assembler.analysis.advice.breakpoint_search import Floats, Trace, child_slices

HOUR, FIVE = "1h", "5m"


@dataclass(frozen=True)
class MixedChoice:
    marks: tuple[tuple[str, str], ...]  # (boundary, lifetime) in wire order
    usd: float
    read: float


def _cost(trace: Trace, h: Floats, m1: Floats, m: Floats) -> Floats:
    top1 = np.maximum(h, m1)
    return (
        trace.read_rate * h
        + trace.write_rate[HOUR] * (top1 - h)
        + trace.write_rate[FIVE] * (m - top1)
        + trace.uncached_rate * (trace.total - m)
    )


def _add(
    trace: Trace, c: int, ttl: str, h: Floats, m1: Floats, m: Floats
) -> tuple[Floats, Floats, Floats]:
    h2 = np.maximum(h, trace.read(ttl)[c])
    m2 = np.maximum(m, trace.cum[c])
    m12 = np.maximum(m1, trace.cum[c]) if ttl == HOUR else m1
    return h2, m12, m2


def evaluate_mixed(trace: Trace, marks: Sequence[tuple[int, str]]) -> MixedChoice:
    zero = np.zeros(trace.steps)
    h, m1, m = zero, zero, zero
    for c, ttl in marks:
        h, m1, m = _add(trace, c, ttl, h, m1, m)
    usd = float(_cost(trace, h, m1, m).sum()) + trace.output_usd
    return MixedChoice(tuple((trace.names[c], t) for c, t in marks), usd, float(h.sum()))


def _allowed(labels: Sequence[str]) -> bool:
    return all(not (a == FIVE and b == HOUR) for a, b in pairwise(labels))


def brute_force_mixed(trace: Trace, limit: int) -> MixedChoice:
    """Every ordered set of at most ``limit`` marks with every allowed lifetime (tests)."""
    best = evaluate_mixed(trace, ())
    for k in range(1, limit + 1):
        for chosen in combinations(range(len(trace.names)), k):
            for labels in product((HOUR, FIVE), repeat=k):
                if _allowed(labels):
                    c = evaluate_mixed(trace, list(zip(chosen, labels, strict=True)))
                    if c.usd < best.usd - 1e-11:
                        best = c
    return best


def search_mixed(trace: Trace, limit: int) -> MixedChoice:
    """The cheapest marks with a lifetime each, 1h ones ahead of 5m ones."""
    n = len(trace.names)
    zero = np.zeros(trace.steps)
    best_usd = float(_cost(trace, zero, zero, zero).sum())
    best: tuple[tuple[int, str], ...] = ()
    # the bound assumes writing costs at least sending uncached, and 1h at least 5m
    bounded = bool(
        (trace.write_rate[FIVE] >= trace.uncached_rate).all()
        and (trace.write_rate[HOUR] >= trace.write_rate[FIVE]).all()
    )
    marked = {t: trace.read(t) for t in (HOUR, FIVE)}
    reads = {t: np.where(marked[t] > 0, marked[t], -1.0) for t in (HOUR, FIVE)}

    def bounds(
        hs: Floats, m1s: Floats, ms: Floats, costs: Floats, start: int, hour_ok: bool
    ) -> list[float]:
        """Per child (boundary ``start + i`` marked, giving ``hs[i]``, ``m1s[i]``, ``ms[i]``
        and the cost per request ``costs[i]``): the least it or one more mark can cost."""
        if not bounded:
            return [-np.inf] * len(hs)
        least = costs.copy()
        cum = trace.cum[start:]
        for ttl in (HOUR, FIVE) if hour_ok else (FIVE,):
            tail = reads[ttl][start:]
            for rows, after in child_slices(len(hs), trace.steps):
                hh, mm = np.maximum(hs[rows, None, :], tail), np.maximum(ms[rows, None, :], cum)
                mm1 = np.maximum(m1s[rows, None, :], cum) if ttl == HOUR else m1s[rows, None, :]
                options = np.where(after & (tail >= 0), _cost(trace, hh, mm1, mm), np.inf)
                np.minimum(least[rows], options.min(axis=1), out=least[rows])
        return least.sum(axis=1).tolist()  # type: ignore[no-any-return]

    def visit(
        chosen: tuple[tuple[int, str], ...], h: Floats, m1: Floats, m: Floats, start: int
    ) -> None:
        nonlocal best_usd, best
        if start >= n:
            return
        hour_ok = not chosen or chosen[-1][1] == HOUR
        # every next boundary under each lifetime at once, one array operation per lifetime
        cum = trace.cum[start:]
        ms = np.maximum(m, cum)
        deeper = len(chosen) + 1 < limit
        per_ttl = {}
        for ttl in (HOUR, FIVE) if hour_ok else (FIVE,):
            hs = np.maximum(h, marked[ttl][start:])
            m1s = np.maximum(m1, cum) if ttl == HOUR else np.broadcast_to(m1, ms.shape)
            costs = _cost(trace, hs, m1s, ms)
            least = bounds(hs, m1s, ms, costs, start, ttl == HOUR) if deeper else []
            per_ttl[ttl] = (hs, m1s, costs.sum(axis=1).tolist(), least)
        for i, c in enumerate(range(start, n)):
            for ttl, (hs, m1s, usds, least) in per_ttl.items():
                new = (*chosen, (c, ttl))
                if usds[i] < best_usd - 1e-11:
                    best_usd, best = usds[i], new
                if deeper and least[i] < best_usd - 1e-11:
                    visit(new, hs[i], m1s[i], ms[i], c + 1)

    if limit > 0 and n:
        visit((), zero, zero, zero, 0)
    return evaluate_mixed(trace, best)
