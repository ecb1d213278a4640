"""The current step: one canonical value in ``st.session_state["step"]`` (1-based).

The URL's ``?step=N`` is applied when a page is opened with it (a load, a
reload, a ``page_link``) or when it names a step the app did not write there
recently, so a deep link works on a fresh server; an echo of the app's own
recent writes, a run or two late while keys step fast, is not taken again.
The app writes the current step back on every run.
"""

from __future__ import annotations

import streamlit as st

from ui.html import literal

STEP = "step"
#: The query parameters that name the sidebar's choice (``ui.frame.sidebar``), in this order.
SELECTION_KEYS = ("session", "layout", "provider", "model", "ttl")
SLIDER = "step_slider"


def _clamp(value: int, total: int) -> int:
    return max(1, min(total, value))


def _page_id() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return str(getattr(ctx, "page_script_hash", "")) if ctx is not None else ""


def current(total: int) -> int:
    """The current step, clamped to ``1..total``, the URL's ``step`` applied if it is new."""
    raw = st.query_params.get("step")
    # The URL's step is a deep link when the page is opened (a load, a reload, a link from
    # another page). Within one page the URL only echoes what the app wrote, and during fast
    # stepping the echo can be a run or two behind: taking it again would undo key presses.
    page = _page_id()
    opened = st.session_state.get("_qp_page") != page
    st.session_state["_qp_page"] = page
    echo = raw in st.session_state.get("_qp_steps_written", ())
    if raw is not None and (opened or not echo) and raw != st.session_state.get("_qp_step_written"):
        try:
            st.session_state[STEP] = int(raw)
        except ValueError:
            st.toast(
                literal(f"step: expected a step number, found {raw[:40]!r}"),
                icon=":material/error:",
            )
    step = _clamp(int(st.session_state.get(STEP, 1)), max(1, total))
    st.session_state[STEP] = step
    return step


def set_step(value: int, total: int) -> None:
    st.session_state[STEP] = _clamp(value, total)


def _shift(delta: int, total: int) -> None:
    set_step(int(st.session_state.get(STEP, 1)) + delta, total)


def slider_key(step: int) -> str:
    """The slider's key while ``step`` is shown.

    A new key per step: every rerun request carries the slider's value as the
    browser last drew it, which during fast stepping is a step or two old; under
    one key that stale value reads as a drag and undoes key presses. A value
    from the slider of a step no longer shown is ignored (:func:`_from_slider`).
    """
    return f"{SLIDER}_{step}"


def _from_slider(key: str) -> None:
    if key != slider_key(int(st.session_state.get(STEP, 1))):
        return  # the slider of an earlier step, sent again by a browser a run behind
    st.session_state[STEP] = int(st.session_state[key])


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
        recent = [*st.session_state.get("_qp_steps_written", ())[-31:], str(step)]
        st.session_state["_qp_steps_written"] = tuple(recent)
    st.session_state["_qp_sel_applied"] = tuple(wanted.get(k) for k in SELECTION_KEYS)


def controls(step: int, total: int) -> None:
    """Prev / slider / Next; ← and → step through ``ui.keys`` (every press counts)."""
    left, middle, right = st.columns([2, 6, 2], vertical_alignment="center")
    left.button(
        "Prev",
        key="prev",
        icon=":material/chevron_left:",
        on_click=_shift,
        args=(-1, total),
        disabled=step <= 1,
        help="Previous step (←)",
        width="stretch",
    )
    if total > 1:
        key = slider_key(step)
        st.session_state[key] = step
        middle.slider(
            "Step",
            min_value=1,
            max_value=total,
            key=key,
            on_change=_from_slider,
            args=(key,),
            label_visibility="collapsed",
        )
    else:
        middle.caption("This session has one step.")
    right.button(
        "Next",
        key="next",
        icon=":material/chevron_right:",
        icon_position="right",
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
    from ui import keys

    keys.listen(lambda delta: _shift(delta, steps))
    n = current(steps)
    write_query(n, query)
    return n
