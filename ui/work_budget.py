"""The analysis time budget for work that reports no progress, and its end with the browser.

The step view's analysis checks its budget at every step it reports. A comparison, a
lint or a recommendation search reports nothing while it runs, so a watchdog thread
does the checking: past the budget, or once the browser session that asked for the work
has gone, it raises an exception in the page's thread, which ends the work at its next
Python instruction. The search's memory goes with it; nothing half-made is cached.
"""

from __future__ import annotations

import ctypes
import logging
import math
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from assembler.errors import UsageError

log = logging.getLogger("inspector")

#: The longest one analysis may hold a server thread: past it the user gets a message
#: and every other user's steps keep their speed. ``INSPECTOR_ANALYSIS_SECONDS`` sets
#: another for a server (a test server's is a few seconds).
DEFAULT_SECONDS = 60.0
#: How often the watchdog looks at the clock and at the browser session.
POLL_SECONDS = 0.25


def _budget(name: str, default: float) -> float:
    given = os.environ.get(name)
    if given is None:
        return default
    try:
        seconds = float(given)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        log.warning(
            "%s: expected a number of seconds > 0, found %r; using %g", name, given, default
        )
        return default
    return seconds


ANALYSIS_SECONDS = _budget("INSPECTOR_ANALYSIS_SECONDS", DEFAULT_SECONDS)
#: A new upload is answered within this: its first page, or one line saying what was
#: refused and why. Reading it (import, parse, replay check) and its first analysis share
#: it; ``DRAW_SECONDS`` of it are left for drawing the page. ``INSPECTOR_ANSWER_SECONDS``
#: sets another for a server.
ANSWER_SECONDS = _budget("INSPECTOR_ANSWER_SECONDS", 10.0)
#: Of it, what reading and analysing may use: the rest is for drawing, and for the one
#: call no watchdog can stop midway (tokenizing a text at the field limit of 4,194,304
#: characters takes up to 2.8 s of CPU when it is one run of a letter).
WORK_SECONDS = max(ANSWER_SECONDS / 2, ANSWER_SECONDS - 3.0)


class AnalysisTooLong(UsageError):
    """An analysis stopped at its time budget."""


class _Stopped(BaseException):
    """Raised into the page's thread by the watchdog; a BaseException, so that no
    ``except Exception`` in the library takes it for a bad file and carries on."""


def _session_alive(session_id: str | None) -> bool:
    if session_id is None:
        return True
    from streamlit import runtime

    return not runtime.exists() or runtime.get_instance().is_active_session(session_id)


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    # ``None`` clears an exception sent but not yet raised
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None
    )


@contextmanager
def bounded(what: str, hint: str, seconds: float | None = None) -> Iterator[None]:
    """Run the block under the analysis budget; :class:`AnalysisTooLong` past it (``what``
    stopped after N s; ``hint``: where to run it without a limit). When the browser
    session ends first, Streamlit's own stop ends the page run quietly."""
    from streamlit.runtime.scriptrunner import StopException, get_script_run_ctx

    limit = ANALYSIS_SECONDS if seconds is None else seconds
    ctx = get_script_run_ctx(suppress_warning=True)
    session_id = ctx.session_id if ctx is not None else None
    target = threading.get_ident()
    lock = threading.Lock()
    state: dict[str, object] = {"armed": True, "why": None}
    finished = threading.Event()

    def watch() -> None:
        deadline = time.monotonic() + limit
        while not finished.wait(POLL_SECONDS):
            why = "budget" if time.monotonic() > deadline else None
            if why is None and not _session_alive(session_id):
                why = "gone"
            if why is not None:
                with lock:
                    if state["armed"]:
                        state["why"] = why
                        _raise_in(target, _Stopped)
                return

    watchdog = threading.Thread(target=watch, name="analysis-budget", daemon=True)
    started = time.monotonic()
    try:
        try:
            watchdog.start()
            yield
        finally:
            with lock:
                state["armed"] = False
                sent = state["why"] is not None
            if sent:
                _raise_in(target, None)
            finished.set()
    except _Stopped:
        why = "its browser session ended" if state["why"] == "gone" else "the time budget"
        log.warning("%s stopped after %.1f s: %s", what, time.monotonic() - started, why)
        if state["why"] == "gone":
            raise StopException() from None
        raise AnalysisTooLong(
            f"{what} stopped after {limit:g} s, the app's limit; {hint}"
        ) from None
