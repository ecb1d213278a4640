"""The cyclic garbage collector paused while a reader or the analysis builds its records.

Reading a session, importing a transcript and analysing a session each allocate
hundreds of thousands of long-lived objects and no reference cycles; the
collections those allocations trigger re-scan them for nothing (measured: loading
100,000 llm events 7.3 s with the collector, 3.2 s without; importing 100,000 OTel
spans 14.6 s and 8.0 s). Reference counting frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Whether this process froze objects for good (an app server keeping an analysis).
# ``gc.get_freeze_count()`` would say, but it walks the whole frozen list on every call
# (CPython 3.11: 0.13 s once a server holds a large analysis), at the end of every block.
_frozen = False


def freeze_all() -> None:
    """Collect the garbage, then exempt everything alive from later collections."""
    global _frozen
    gc.collect()
    gc.freeze()
    _frozen = True


def holds_frozen() -> bool:
    """Whether :func:`freeze_all` froze objects in this process: then nothing may
    ``gc.unfreeze()``, which would hand those back to every collection."""
    return _frozen


def release_frozen() -> None:
    """Hand every frozen object back to the collector (a process done with what it kept,
    such as one test among many)."""
    global _frozen
    gc.unfreeze()
    _frozen = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the collector for the block; back on only if it was on, so nested or
    concurrent users end with it on.

    Switched back on as it was, the next allocation would scan every object the
    block made, all still in the youngest generation (4 % of an analysis at 5,000
    steps). They are long-lived records, so they go straight to the oldest generation
    instead (freeze then unfreeze moves them there without a scan), which a full
    collection still visits. Skipped while this process holds objects frozen by
    :func:`freeze_all`: the unfreeze would let those go too.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if not _frozen:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
