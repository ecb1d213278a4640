"""The current step: one canonical value in ``st.session_state["step"]`` (1-based).

The URL's ``?step=N`` is applied whenever it differs from what the app last
wrote there, so a deep link works on a fresh server and a ``page_link`` with a
step moves there; the app writes the current step back on every run.
"""

from __future__ import annotations

import streamlit as st

STEP = "step"
SLIDER = "step_slider"


def _clamp(value: int, total: int) -> int:
    return max(1, min(total, value))


def current(total: int) -> int:
    """The current step, clamped to ``1..total``, the URL's ``step`` applied if it is new."""
    raw = st.query_params.get("step")
    if raw is not None and raw != st.session_state.get("_qp_step_written"):
        try:
            st.session_state[STEP] = int(raw)
        except ValueError:
            st.toast(f"step: expected a step number, found {raw[:40]!r}", icon=":material/error:")
    step = _clamp(int(st.session_state.get(STEP, 1)), max(1, total))
    st.session_state[STEP] = step
    return step


def set_step(value: int, total: int) -> None:
    st.session_state[STEP] = _clamp(value, total)


def _shift(delta: int, total: int) -> None:
    set_step(int(st.session_state.get(STEP, 1)) + delta, total)


def _from_slider() -> None:
    st.session_state[STEP] = int(st.session_state[SLIDER])


def write_query(step: int | None, extra: dict[str, str]) -> None:
    """Put the current step (and session/layout) in the URL so it can be shared.

    What the app writes is remembered, so the next run does not mistake it for
    a new deep link.
    """
    wanted = ({"step": str(step)} if step is not None else {}) | extra
    if dict(st.query_params) != wanted:
        st.query_params.from_dict(wanted)
    if step is not None:
        st.session_state["_qp_step_written"] = str(step)
    st.session_state["_qp_sel_applied"] = (wanted.get("session"), wanted.get("layout"))


def controls(step: int, total: int) -> None:
    """Prev / slider / Next, the buttons bound to ← and →."""
    left, middle, right = st.columns([2, 6, 2], vertical_alignment="center")
    left.button(
        "Prev",
        key="prev",
        icon=":material/chevron_left:",
        shortcut="Left",
        on_click=_shift,
        args=(-1, total),
        disabled=step <= 1,
        help="Previous step (←)",
        width="stretch",
    )
    if total > 1:
        st.session_state[SLIDER] = step
        middle.slider(
            "Step",
            min_value=1,
            max_value=total,
            key=SLIDER,
            on_change=_from_slider,
            label_visibility="collapsed",
        )
    else:
        middle.caption("This session has one step.")
    right.button(
        "Next",
        key="next",
        icon=":material/chevron_right:",
        icon_position="right",
        shortcut="Right",
        on_click=_shift,
        args=(1, total),
        disabled=step >= total,
        help="Next step (→)",
        width="stretch",
    )


def follow(steps: int, query: dict[str, str], nothing: str) -> int | None:
    """The current step of a session with ``steps`` steps, written back to the URL;
    ``None`` (with ``nothing`` shown) when the session has no step."""
    if steps == 0:
        st.warning(nothing)
        return None
    n = current(steps)
    write_query(n, query)
    return n
