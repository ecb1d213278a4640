"""Keeping a long-lived analysis out of the cyclic garbage collector's way."""

from __future__ import annotations

import gc
from typing import TypeVar

T = TypeVar("T")

# Whether this process has frozen objects for reuse. ``gc.get_freeze_count()`` would say,
# but it walks the whole frozen list on every call (CPython 3.11: 0.13 s once a server holds
# a large analysis), and the engine asks at the end of every analysis.
_frozen = False


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
    global _frozen
    gc.collect()
    gc.freeze()
    _frozen = True
    return value


def holds_frozen() -> bool:
    """Whether :func:`freeze_for_reuse` has frozen objects in this process: then nothing may
    ``gc.unfreeze()``, which would hand those back to every collection."""
    return _frozen


def release_frozen() -> None:
    """Hand every frozen object back to the collector (a process done with what it kept,
    such as one test among many)."""
    global _frozen
    gc.unfreeze()
    _frozen = False
