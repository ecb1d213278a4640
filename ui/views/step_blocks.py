"""The step view's block stack for long recorded histories, and what one block and the request hold.

Pages only draw: folding, the line diff and the wire JSON come from ``assembler.analysis``
(``app.fold_history``, ``app.line_diff``, ``engine.wire_json``).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from assembler.analysis.app import (
    MIN_FOLD_BLOCKS,
    Fold,
    counts,
    filter_rows,
    fold_history,
    line_diff,
)
from assembler.analysis.engine import SessionAnalysis, StepAnalysis, wire_format, wire_json
from assembler.sessions.model import LLMCall, Session
from ui import html, picks

STATES = {"read": "read", "write": "written", "uncached": "uncached"}
RECORDED_NOTE = (
    "Recorded request: it is replayed with its own blocks and its own cache markers, so a "
    "layout's component moves and breakpoints do not change it; the cache lifetime (the "
    "sidebar's, or the layout's ttl) and the provider do. Layers are a reading of the request: "
    "tools and system as L0, the history as L1, the last user message as L2 — and any of them "
    "is written and read like the others."
)


@st.cache_resource(show_spinner=False, max_entries=8)
def _roles(session_key: str, _session: Session) -> tuple[tuple[str, ...] | None, ...]:
    return tuple(
        tuple(b.role for b in e.request) if e.request is not None else None
        for e in _session.events
        if isinstance(e, LLMCall)
    )


def roles(session_key: str, session: Session, step: int) -> tuple[str, ...] | None:
    """The roles of the recorded request's blocks at ``step``; None for an assembled step."""
    all_roles = _roles(session_key, session)
    return all_roles[step - 1] if 0 < step <= len(all_roles) else None


def stack(session_key: str, session: Session, s: StepAnalysis, approx: bool) -> None:
    """Legend, cache-state filter and the block stack (history folded by turn when recorded)."""
    step_roles = roles(session_key, session, s.step)
    if step_roles is not None:
        st.caption(RECORDED_NOTE)
    st.html(html.legend())
    rows: list[Any] = fold_history(s.blocks, step_roles, MIN_FOLD_BLOCKS)
    folds = [r for r in rows if isinstance(r, Fold)]
    chosen = st.pills(
        "Show blocks",
        list(STATES),
        format_func=lambda k: STATES[k],
        selection_mode="multi",
        default=list(STATES),
        key="cache_filter",
        label_visibility="collapsed",
    )
    shown = filter_rows(rows, chosen or [])
    st.html(html.block_stack(shown, s.cached_prefix_tokens, approx))
    if folds:
        st.caption(
            "Folded (nothing in them changed since the previous step): "
            + "; ".join(f.label for f in folds)
            + "."
        )
    if len(shown) < len(rows):
        st.caption(f"{len(rows) - len(shown)} rows hidden by the cache filter.")


def _diff_html(old: str, new: str) -> str:
    lines = line_diff(old, new)
    if not lines:
        return '<div class="cai-diff-none">no line changed since the previous step</div>'
    added, removed = counts(lines)
    css = {"+": "cai-add", "-": "cai-del", " ": "cai-same", "…": "cai-gap"}
    body = "".join(
        f'<div class="{css[x.kind]}"><span>{x.kind}</span>{html.esc(x.text) or "&nbsp;"}</div>'
        for x in lines
    )
    return (
        DIFF_STYLE + f'<div class="cai-diffsum">+{added} / −{removed} lines</div>'
        f'<div class="cai-diff">{body}</div>'
    )


DIFF_STYLE = """<style>
.cai-diff{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.78rem;line-height:1.4;
  border:1px solid #e3e6ee;border-radius:6px;max-height:26rem;overflow:auto;white-space:pre-wrap;word-break:break-word}
.cai-diff div{padding:0 .5rem}
.cai-diff span{display:inline-block;width:1.1rem;color:#888}
.cai-add{background:#e6fcf5;color:#0b7285}
.cai-del{background:#fff0f0;color:#a61e4d;text-decoration:line-through;text-decoration-color:#f4a3b5}
.cai-gap{color:#aaa;background:#f8f9fa}
.cai-diffsum{font-size:.78rem;color:#666;margin:.2rem 0}
</style>"""


#: The state of the step view's "Block text and what changed" expander (open or closed).
DETAIL_OPEN = "block_detail_open"
#: The block picked in it; kept while the expander is closed (its widget then is not drawn).
PICKED = "_block_text_picked"


def choice_key(step: int, shown: str) -> str:
    """The Block picker's key at ``step`` opening on block ``shown`` (``picks.key``)."""
    return picks.key(f"block_text_choice_{step}", shown)


#: The slot holding the key of the Block picker the last run drew (``ui.picks``).
DRAWN = "_block_text_drawn"


def _pick(key: str) -> None:
    if picks.is_drawn(DRAWN, key):  # else the browser's echo of an earlier picker
        st.session_state[PICKED] = st.session_state[key]


def block_detail(a: SessionAnalysis, s: StepAnalysis) -> None:
    """Pick a block: its text, and its line diff against the previous step."""
    names = [b.name for b in s.blocks]
    if not names:
        return
    changed = [b.name for b in s.blocks if b.change in ("changed", "released", "new")]
    picked = st.session_state.get(PICKED)
    shown = picked if picked in names else changed[0] if changed else names[0]
    key = choice_key(s.step, shown)
    picks.drawn(DRAWN, key)
    chosen = st.selectbox(
        "Block",
        names,
        index=names.index(shown),
        key=key,
        on_change=_pick,
        args=(key,),
        help="Changed blocks are chosen first.",
    )
    block = next(b for b in s.blocks if b.name == chosen)
    previous = a.steps[s.step - 2] if s.step > 1 else None
    before = next((b for b in previous.blocks if b.name == chosen), None) if previous else None
    diff_tab, text_tab = st.tabs(["Diff against the previous step", "Text"])
    with diff_tab:
        if previous is None:
            st.caption("First step: there is no previous step to compare with.")
        elif before is None:
            st.caption(f"New at this step: the block was not in step {previous.step}.")
            st.html(_diff_html("", block.text))
        else:
            st.html(_diff_html(before.text, block.text))
    with text_tab:
        st.code(block.text, language=None, wrap_lines=True)


def wire_view(session: Session, layout: Any, s: StepAnalysis, provider: str, ttl: str | None, model: str | None = None) -> None:  # fmt: skip
    """The step's request as the provider receives it, on demand, viewable and downloadable."""
    fmt = wire_format(provider)
    show = st.toggle(f"Show the {fmt} request JSON", key="show_wire")

    def make() -> str:
        return wire_json(session, layout, s.step, provider, ttl, model)

    if show:
        st.code(make(), language="json", wrap_lines=True, height=360)
    st.download_button(
        f"Request of step {s.step} ({fmt} JSON)",
        lambda: make().encode("utf-8"),
        file_name=f"{session.id}-step{s.step}-{fmt}.json"[:120],
        mime="application/json",
        icon=":material/download:",
        key="download_wire",
    )
