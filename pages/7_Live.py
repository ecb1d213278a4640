"""Live: a recording proxy's log followed as it grows (``python -m assembler proxy``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from assembler.live.follow import LiveRow, LogFollower, live_totals
from ui.frame import page
from ui.html import literal
from ui.views import live_view

SHOWN = 500  # the latest rows drawn; the totals count them all
COLUMNS = {
    "time": "time",
    "session": "session",
    "model": "model",
    "status": "status",
    "predicted_read": "predicted read",
    "billed_read": "billed read",
    "predicted_write": "predicted write",
    "billed_write": "billed write",
    "predicted_uncached": "predicted uncached",
    "billed_uncached": "billed uncached",
    "agrees": "as predicted",
    "billed_usd": "billed $",
    "scale": "sizes ×",
    "miss": "miss or note",
    "error": "error",
}


def _money(usd: float) -> str:
    return f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"


def _follower(path: Path) -> LogFollower:
    follower = st.session_state.get("live_follower")
    if not isinstance(follower, LogFollower) or follower.path != path:
        follower = st.session_state["live_follower"] = LogFollower(path)
    return follower


def _frame(rows: list[LiveRow]) -> pd.DataFrame:
    latest = [{k: getattr(r, k) for k in COLUMNS} for r in reversed(rows[-SHOWN:])]
    frame = pd.DataFrame(latest, columns=list(COLUMNS)) if latest else pd.DataFrame()
    return frame.rename(columns=COLUMNS)


@st.fragment(run_every=1.0)
def follow(path: Path) -> None:
    """Polled every second: new lines become rows without a reload."""
    follower = _follower(path)
    follower.poll()
    rows = follower.rows
    if not rows:
        where = "does not exist yet" if not path.exists() else "holds no exchange yet"
        st.info(f"Waiting for requests: {literal(path)} {where}.", icon=":material/hourglass:")
        return
    sessions = sorted({r.session for r in rows if r.session})
    if len(sessions) > 1:
        chosen = st.selectbox(
            "Session",
            ["All sessions", *sessions],
            key="live_session",
            help="told apart as the provider's cache would (docs/live.md)",
        )
        if chosen != "All sessions":
            rows = [r for r in rows if r.session == chosen]
    t = live_totals(rows)
    c = st.columns(5)
    c[0].metric("Requests", f"{t.requests:,}", help="exchanges in the log")
    c[1].metric(
        "As predicted",
        f"{t.agreed:,} of {t.compared:,}",
        help="requests whose billed cache read and write equal the prediction",
    )
    c[2].metric("Billed", _money(t.billed_usd))
    c[3].metric("Simulated", _money(t.simulated_usd), help="the predicted read / write, priced")
    c[4].metric("Without caching", _money(t.no_cache_usd))
    st.dataframe(_frame(rows), hide_index=True, key="live_rows")
    if follower.skipped:
        st.caption(
            literal(
                f"{follower.skipped:,} lines that are not model calls were skipped "
                f"(the first at {follower.first_skipped})."
            )
        )
    live_view.request_step(follower, rows)


def body() -> None:
    st.title(":material/sensors: Live", anchor=False)
    st.caption(
        "Requests through `python -m assembler proxy` as they arrive: the cache read and "
        "write predicted before each response, the bill after it, and the running cost."
    )
    text = st.text_input(
        "Proxy log",
        value=st.query_params.get("log", "proxy-log.jsonl"),
        key="live_log",
        help="the file a running proxy writes (its --log)",
    )
    st.query_params["log"] = text
    follow(Path(text).expanduser())


page.setup("Live", ":material/sensors:")
page.guarded(body)
