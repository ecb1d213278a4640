"""The libraries the other pages need, imported while the server waits on its first visitor.

The step view draws no table; the first page that does (the Timeline's data frame,
Compare's and Registry's tables) imported pandas and pyarrow as it ran: about half a
second on two cores, measured, paid by the first page switch after an upload. Once the
first page of the process has been drawn, a thread imports them instead, while the
browser paints and the user picks a file; a page that needs them sooner waits on
Python's import lock, as it would have imported them itself. The same thread then builds
each chart once (:func:`ui.views.charts.warm`): the first figure of a process paid
another 140 ms of plotly's imports on first use, on the Timeline's first visit.
"""

from __future__ import annotations

import importlib
import logging
import threading

log = logging.getLogger("inspector")

#: Imported in this order; each is what a page's first table or chart imports.
MODULES = ("pyarrow", "pandas")

_lock = threading.Lock()
_started = False


def _import_all() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # a page that needs it says so, with its own error
            log.warning("warm-up: could not import %s", name, exc_info=True)
    try:
        from ui.views import charts  # in the thread: the first page does not wait on plotly

        charts.warm()
    except Exception:  # the Timeline builds its charts itself, and says what went wrong
        log.warning("warm-up: could not build the charts", exc_info=True)


def start() -> threading.Thread | None:
    """Start the imports once per process (the thread, the first time; else None)."""
    global _started
    with _lock:
        if _started:
            return None
        _started = True
    thread = threading.Thread(target=_import_all, name="warm-up", daemon=True)
    thread.start()
    return thread
