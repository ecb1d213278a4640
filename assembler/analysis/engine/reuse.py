"""Keeping a long-lived analysis out of the cyclic garbage collector's way."""

from __future__ import annotations

from typing import TypeVar

from assembler.collector import freeze_all, holds_frozen, release_frozen

__all__ = ["freeze_for_reuse", "holds_frozen", "release_frozen"]

T = TypeVar("T")


def freeze_for_reuse(value: T) -> T:
    """Exempt everything alive now, ``value`` included, from later collections.

    A server that keeps an analysis for many reruns and runs a full
    ``gc.collect()`` after each one (Streamlit does) would otherwise walk every
    record of it each time: most of a step switch's server time at 5,000 steps.
    Garbage is collected first so that none of it is frozen. Frozen objects are
    still freed by reference counting when the last reference goes (an analysis
    holds no reference cycles), so dropping a cached analysis frees it as before.
    Returns ``value`` so the call can wrap the expression that built it.
    """
    freeze_all()
    return value
