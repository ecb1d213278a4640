"""The app's budgets: time for work that reports no progress, its end with the browser,
and the memory kept for all users (:class:`ByteBudget`).

The step view's analysis checks its budget at every step it reports. A comparison, a
lint or a recommendation search reports nothing while it runs, so a watchdog thread
does the checking: past the budget, or once the browser session that asked for the work
has gone, it raises an exception in the page's thread, which ends the work at its next
Python instruction. The search's memory goes with it; nothing half-made is cached.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import math
import os
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from assembler.cache import long_texts
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


#: In a browser session's state: how many page runs it has had (``page.setup`` counts them).
#: A new upload's answer is due on the run after the one that read it.
RUNS = "_page_runs"


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
            # A long text is one call of seconds that the watchdog's stop would wait for:
            # counted beside this thread, which waits in slices the stop can land in.
            with long_texts.stoppable():
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


_BUDGETS: weakref.WeakSet[ByteBudget] = weakref.WeakSet()
_BUDGETS_LOCK = threading.Lock()


class ByteBudget:
    """Least recently used entries, bounded by the bytes they stand for, not their count.

    A parsed session or its analysis costs a multiple of its file's size, so the
    file's size is the weight: one user's 40 MB upload evicts several small
    entries rather than sitting beside eleven more like it. Each entry remembers
    the browser sessions that used it, so what a closed one alone used is dropped.
    """

    def __init__(self, limit: int, max_items: int | None = None) -> None:
        self.limit = limit
        self.max_items = max_items
        self.items: OrderedDict[Any, tuple[Any, int, set[str]]] = OrderedDict()
        self.total = 0
        self.lock = threading.Lock()
        with _BUDGETS_LOCK:  # each one loses what only ended browser sessions used
            _BUDGETS.add(self)

    def get(self, key: Any, owner: str | None = None) -> Any:
        with self.lock:
            hit = self.items.get(key)
            if hit is None:
                return None
            self.items.move_to_end(key)
            if owner is not None:
                hit[2].add(owner)
            return hit[0]

    def put(self, key: Any, value: Any, weight: int, owner: str | None = None) -> None:
        with self.lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.total -= old[1]
            owners = old[2] if old is not None else set()
            if owner is not None:
                owners.add(owner)
            self.items[key] = (value, weight, owners)
            self.total += weight
            while len(self.items) > 1 and (
                self.total > self.limit
                or (self.max_items is not None and len(self.items) > self.max_items)
            ):
                _, (_, dropped, _) = self.items.popitem(last=False)
                self.total -= dropped

    def drop_owners(self, gone: set[str]) -> int:
        """Forget closed browser sessions; drop the entries only they used (how many)."""
        dropped = 0
        with self.lock:
            for key in list(self.items):
                _, weight, owners = self.items[key]
                if owners and owners <= gone:
                    del self.items[key]
                    self.total -= weight
                    dropped += 1
                else:
                    owners -= gone
        return dropped


def give_back_memory() -> None:
    """Collect what was dropped and hand the freed heap back to the system: the
    allocator keeps freed pages for reuse, so the server's size would not go down."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: it keeps its pages
        ctypes.CDLL("libc.so.6").malloc_trim(0)


# --- browser sessions: who uses what the server keeps, and when they end ---------------


#: A browser session not seen for this long is taken as closed, whatever Streamlit says
#: of its connection. Its entries stay while another session uses them.
IDLE_SECONDS = 30 * 60
#: A browser session whose connection has been gone this long has ended (a reload
#: reconnects well within it): Streamlit tells the app nothing when a tab closes, so a
#: background sweep asks every few seconds which sessions are still connected.
#: ``INSPECTOR_CLOSED_SECONDS`` sets another for a server (a test server's is a few seconds).
CLOSED_SECONDS = _budget("INSPECTOR_CLOSED_SECONDS", 15.0)
SWEEP_SECONDS = min(5.0, CLOSED_SECONDS / 3)
#: Where a browser session keeps its id (Streamlit's own id is not public API).
VISITOR_KEY = "_cai_visitor"


def _now() -> float:
    return time.monotonic()


@st.cache_resource(show_spinner=False)
def _visitors() -> dict[str, Any]:
    # seen: visitor -> last rerun; connection: visitor -> Streamlit's session id;
    # unplugged: visitor -> when its connection was first found gone
    return {"seen": {}, "connection": {}, "unplugged": {}, "lock": threading.Lock()}


def visitor() -> str | None:
    """This browser session's id, marked as seen now; sessions that ended are dropped."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:  # called outside a page run (tests, scripts): owned by nobody
        return None
    sid = st.session_state.get(VISITOR_KEY)
    if not isinstance(sid, str):
        sid = uuid.uuid4().hex
        st.session_state[VISITOR_KEY] = sid
    store = _visitors()
    with store["lock"]:
        store["seen"][sid] = _now()
        store["connection"][sid] = ctx.session_id
        store["unplugged"].pop(sid, None)
    _sweeper()
    release_ended()
    return sid


def _connected(connection: str) -> bool:
    from streamlit import runtime

    return not runtime.exists() or runtime.get_instance().is_active_session(connection)


def release_ended() -> set[str]:
    """Forget the browser sessions that ended (idle too long, or disconnected past
    :data:`CLOSED_SECONDS`) and drop what only they used; the memory that frees goes back
    to the system. The visitors dropped."""
    now = _now()
    store = _visitors()
    with store["lock"]:
        seen: dict[str, float] = store["seen"]
        unplugged: dict[str, float] = store["unplugged"]
        for sid, connection in store["connection"].items():
            if _connected(connection):
                unplugged.pop(sid, None)
            else:
                unplugged.setdefault(sid, now)
        gone = {sid for sid, at in seen.items() if now - at > IDLE_SECONDS}
        gone |= {sid for sid, at in unplugged.items() if now - at > CLOSED_SECONDS}
        for sid in gone:
            for part in ("seen", "connection", "unplugged"):
                store[part].pop(sid, None)
    if gone:
        with _BUDGETS_LOCK:
            budgets = list(_BUDGETS)
        if sum(budget.drop_owners(gone) for budget in budgets):
            give_back_memory()
    return gone


@st.cache_resource(show_spinner=False)
def _sweeper() -> threading.Thread | None:
    """The background sweep (one per server) that ends closed browser sessions even when
    nobody reruns a page; none outside a server (AppTest, scripts)."""
    from streamlit import runtime

    if not runtime.exists():
        return None

    def sweep() -> None:
        while True:
            time.sleep(SWEEP_SECONDS)
            try:
                release_ended()
            except Exception:  # a sweep never takes the server down; the next one retries
                log.exception("releasing ended browser sessions failed")

    thread = threading.Thread(target=sweep, name="session-sweeper", daemon=True)
    thread.start()
    return thread
