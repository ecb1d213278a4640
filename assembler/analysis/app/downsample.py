"""Long per-step series thinned for drawing: a few points per bin, the extremes kept.

A 5,000-step session drawn point by point is a solid block and costs the browser
seconds. Splitting the steps into ``bins`` runs and keeping, in each, the first
step and the steps with the smallest and largest value of every given series
keeps each spike and dip visible (what a reader looks for) at a few hundred
points.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Series longer than this are thinned.
MAX_POINTS = 800
BINS = 200


def extreme_indices(
    series: Sequence[Sequence[float]], bins: int = BINS, max_points: int = MAX_POINTS
) -> list[int]:
    """Indices to keep, ascending: per bin its first index and each series' argmin and argmax.

    ``series`` are equally long columns; columns of at most ``max_points`` are kept whole.
    """
    n = len(series[0]) if series else 0
    if n <= max_points or bins <= 0:
        return list(range(n))
    keep: set[int] = {0, n - 1}
    for b in range(bins):
        lo, hi = b * n // bins, (b + 1) * n // bins
        if lo >= hi:
            continue
        keep.add(lo)
        for col in series:
            window = range(lo, hi)
            keep.add(min(window, key=col.__getitem__))
            keep.add(max(window, key=col.__getitem__))
    return sorted(keep)
