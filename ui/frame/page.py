"""Page frame: config, shared style, and the guard that keeps tracebacks off the page."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable

import streamlit as st

from assembler.analysis.engine import LayoutError
from assembler.errors import UsageError
from assembler.limits import one_line
from assembler.sessions.model import SessionError
from ui.frame import warm_browser, warm_up
from ui.html import STYLE, literal
from ui.state.work_budget import RUNS

log = logging.getLogger("inspector")

#: Errors whose message is already one clear line naming the file and field.
CLEAR_ERRORS: tuple[type[Exception], ...] = (
    SessionError,
    LayoutError,
    UsageError,
    ValueError,
    KeyError,
)


def setup(title: str, icon: str) -> None:
    st.set_page_config(
        page_title=f"{title} · Context Assembly Inspector",
        page_icon=icon,
        layout="wide",
        initial_sidebar_state="expanded",
    )
    st.html(STYLE)
    st.session_state[RUNS] = int(st.session_state.get(RUNS, 0)) + 1
    nav()


PAGES: tuple[tuple[str, str, str], ...] = (
    ("app.py", "Step view", ":material/stacks:"),
    ("pages/1_Timeline.py", "Timeline", ":material/timeline:"),
    ("pages/2_Compare_layouts.py", "Compare layouts", ":material/compare_arrows:"),
    ("pages/3_Registry.py", "Registry", ":material/widgets:"),
    ("pages/4_Savings.py", "Savings", ":material/savings:"),
    ("pages/5_Learn.py", "Learn", ":material/school:"),
    ("pages/6_Recommend.py", "Recommend", ":material/tips_and_updates:"),
    ("pages/7_Live.py", "Live", ":material/sensors:"),
)


def nav() -> None:
    """The page list, drawn by hand so each page has its material icon.

    Routing stays the ``pages/`` folder convention (no ``st.navigation``); only
    the default sidebar list is hidden in ``.streamlit/config.toml``.
    """
    with st.sidebar:
        st.markdown("**Context Assembly Inspector**")
        for path, label, icon in PAGES:
            st.page_link(path, label=label, icon=icon)
        st.divider()


def guarded(body: Callable[[], None]) -> None:
    """Run a page body; any exception becomes one ``st.error`` line, never a traceback.

    Streamlit's own control flow (rerun, stop, switch_page) derives from
    BaseException and passes through untouched.
    """
    try:
        body()
    except CLEAR_ERRORS as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, KeyError):
            message = f"not found: {message}"
        st.error(literal(one_line(message)), icon=":material/error:")
    except Exception as exc:
        log.error("unexpected error in page body\n%s", traceback.format_exc())
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        detail = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
        st.error(
            f"Something went wrong while drawing this page ({literal(one_line(detail, 200))}). "
            "The details are in the server log.",
            icon=":material/error:",
        )
    # the page is drawn: the libraries the next pages need load while the user reads it,
    # in the server and in the browser
    warm_up.start()
    warm_browser.place()
