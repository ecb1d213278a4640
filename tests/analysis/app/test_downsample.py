"""Thinning long series keeps every spike and dip."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from assembler.analysis.app.downsample import BINS, MAX_POINTS, extreme_indices


def test_short_series_are_kept_whole() -> None:
    assert extreme_indices([[1.0] * MAX_POINTS]) == list(range(MAX_POINTS))


def test_a_single_spike_in_5000_steps_survives() -> None:
    values = [100.0] * 5000
    values[3217] = 90_000.0
    values[1200] = 0.0
    keep = extreme_indices([values])
    assert 3217 in keep and 1200 in keep
    assert len(keep) <= 3 * BINS + 2
    assert keep == sorted(set(keep)) and keep[0] == 0 and keep[-1] == 4999


@given(st.lists(st.floats(-1e6, 1e6), min_size=21, max_size=300), st.integers(1, 40))
def test_global_extremes_and_ends_are_always_kept(values: list[float], bins: int) -> None:
    keep = extreme_indices([values], bins=bins, max_points=20)
    kept = [values[i] for i in keep]
    assert max(kept) == max(values) and min(kept) == min(values)
    assert keep[0] == 0 and keep[-1] == len(values) - 1


def test_every_series_keeps_its_own_extremes() -> None:
    rng = random.Random(7)
    a = [rng.random() for _ in range(4000)]
    b = [rng.random() for _ in range(4000)]
    keep = set(extreme_indices([a, b]))
    assert a.index(max(a)) in keep and b.index(min(b)) in keep
