"""The Live page's step view: any request of the followed log as its step, with the block
stack and the line diff of the step view (``ui.views.step_blocks``), beside its prediction and bill."""

from __future__ import annotations

from typing import Any

import streamlit as st

from assembler.analysis.app import header_sentence
from assembler.errors import UsageError
from assembler.live.follow import LiveRow, LogFollower
from assembler.live.replay import Replayed, replay
from ui import picks
from ui.html import literal, md
from ui.views import step_blocks

PICKED = "_live_request_picked"
PINNED = "_live_request_pinned"  # a request the user picked; else the newest is followed


def picker_key(newest: str, shown: str) -> str:
    """The Request picker's key while ``newest`` is the newest request and ``shown`` the one
    shown (``picks.key``): a new widget when a request arrives or another is picked."""
    return picks.key("live_request", newest, shown)


#: The slot holding the key of the Request picker the last run drew (``ui.picks``).
DRAWN = "_live_request_drawn"


def _pin(key: str, newest: str) -> None:
    if picks.is_drawn(DRAWN, key):  # else the browser's echo of an earlier picker
        st.session_state[PICKED] = st.session_state[key]
        st.session_state[PINNED] = st.session_state[key] != newest


def _label(number: int, row: LiveRow) -> str:
    where = f" · {row.session}" if row.session else ""
    status = row.status or "---"
    return f"#{number} · {row.time} · {row.model or '?'}{where} · {row.request} · {status}"


@st.cache_resource(show_spinner=False, max_entries=16)
def _replayed(path: str, session: str, at: tuple[int, int], started: str, _lines: list[dict[str, Any]], _scales: dict[str, float]) -> Replayed:  # fmt: skip
    """Keyed by where the request's line is: the lines before it never change."""
    return replay(_lines, session, _scales)


def _numbers(row: LiveRow, s: Any) -> None:
    m = st.columns(4)
    m[0].metric("Read", f"{s.read:,}", help="the cache read this analysis gives")
    m[1].metric("Written", f"{s.write:,}")
    m[2].metric("Uncached", f"{s.uncached:,}")
    billed = (row.billed_read, row.billed_write, row.billed_uncached)
    m[3].metric(
        "Provider's r / w / u",
        " / ".join(f"{x:,}" if x is not None else "?" for x in billed),
        help="what the provider billed for this request",
    )


def request_step(follower: LogFollower, rows: list[LiveRow]) -> None:
    """Pick a request (the latest first); draw its step and the diff against the one before."""
    model_calls = [r for r in rows if r.prediction]  # requests the cache sees
    if not model_calls:
        return
    numbered = {r.at: n for n, r in enumerate(follower.rows, 1)}
    by_label = {_label(numbered.get(r.at, 0), r): r for r in reversed(model_calls)}
    labels = list(by_label)  # the latest first
    picked = st.session_state.get(PICKED)
    if picked == labels[0] or picked not in by_label or not st.session_state.get(PINNED):
        st.session_state[PICKED], st.session_state[PINNED] = labels[0], False
    shown = st.session_state[PICKED]
    key = picker_key(labels[0], shown)
    picks.drawn(DRAWN, key)
    st.markdown("#### :material/stacks: A request as its step")
    chosen = st.selectbox(
        "Request",
        labels,
        index=labels.index(shown),
        key=key,
        on_change=_pin,
        args=(key, labels[0]),
        help="the newest is followed until another is picked; numbered as the log's lines; its session's requests up to it, analysed as "
        "analyze reads the log",
    )
    row = by_label[chosen]
    order = (row.started, row.at[0])
    before = [r for r in model_calls if r.session == row.session and (r.started, r.at[0]) < order]
    mine = [*sorted(before, key=lambda r: (r.started, r.at[0])), row]
    try:
        lines = follower.lines(mine)
        scales = {row.model: row.scale} if row.scale else {}
        done = _replayed(str(follower.path), row.session, row.at, row.started, lines, scales)
    except (
        OSError,
        ValueError,
        KeyError,
        UsageError,
    ) as exc:  # a log cut or rewritten, a call refused
        st.warning(literal(f"{follower.path}: this request cannot be shown as a step: {exc}"))
        return
    if done.step is None:
        st.info("This call failed: it is not in the cache's history, so it has no step.")
        return
    a, n = done.analysis, done.step
    s = a.steps[n - 1]
    st.caption(
        f"Step {n} of session {md(row.session or '?')} · {md(s.model)}"
        + (f" · sizes × {row.scale:g}, as predicted" if row.scale and row.scale != 1 else "")
    )
    _numbers(row, s)
    verdict = md(header_sentence(s, first=n == 1))
    (st.warning if s.miss is not None else st.success)(verdict)
    key = f"live:{follower.path}:{row.session}:{row.at[0]}"
    step_blocks.stack(key, done.session, s, bool(a.approximate_tokens))
    with st.expander("Block text and what changed", icon=":material/difference:", expanded=True):
        step_blocks.block_detail(a, s)
    if row.error:
        st.caption(literal(f"error: {row.error}"))
