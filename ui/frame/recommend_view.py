"""What the Recommend page needs besides drawing: cached lint and recommendation, the lint
table as rows, and the hand-over of the recommended layout to Compare and the step view."""

from __future__ import annotations

from typing import Any

import streamlit as st

from assembler.analysis.advice import (
    LintReport,
    Recommendation,
    RecordedPlan,
    layout_text,
    lint_session,
    recommend,
    recommend_recorded,
)
from assembler.analysis.bill import billed_usd
from assembler.analysis.engine import BUILTIN_LAYOUTS, Layout, runs_as_recorded
from assembler.sessions.model import Session
from ui.frame.sidebar import SCROLL_TOP
from ui.state import data, layout_store
from ui.state.work_budget import bounded

#: Read by ``ui.frame.sidebar`` on the next page: open it at its top, not at this page's offset.
#: The file name the recommended layout carries once handed to another page.
RECOMMENDED_FILE = "recommended.yaml"
#: Compare's own picker values (pages/2_Compare_layouts.py) and the sidebar's upload choice.
COMPARE_EDIT = "Edit in the page…"
SIDEBAR_UPLOAD = "Upload a file…"


@st.cache_resource(show_spinner=False, max_entries=8)
def _lint(session_key: str, layout_key: str, _session: Session, _layout: Layout) -> LintReport:
    return lint_session(_session, _layout)


def lint_report(session_key: str, session: Session, layout: data.LayoutChoice) -> LintReport:
    with st.spinner("Perturbing every component…"), bounded("the lint", data.CLI_HINT):
        return _lint(session_key, layout.key, session, layout.layout)


@st.cache_resource(show_spinner=False, max_entries=8)
def _recommend(
    session_key: str,
    layout_key: str,
    provider: str | None,
    model: str | None,
    _session: Session,
    _layout: Layout,
) -> Recommendation:
    return recommend([_session], _layout, provider=provider, model=model)


def recommendation(
    session_key: str,
    session: Session,
    layout: data.LayoutChoice,
    provider: str | None,
    model: str | None,
) -> Recommendation:
    with (
        st.spinner("Searching the layouts the design allows…"),
        bounded("the search for the cheapest layout", data.CLI_HINT),
    ):
        return _recommend(session_key, layout.key, provider, model, session, layout.layout)


@st.cache_resource(show_spinner=False, max_entries=8)
def _plan(
    session_key: str, provider: str | None, model: str | None, _session: Session
) -> RecordedPlan:
    return recommend_recorded([_session], provider=provider, model=model, billed_of=billed_usd)


def recorded_plan(
    session_key: str, session: Session, provider: str | None, model: str | None
) -> RecordedPlan:
    """The marker plan for a session of recorded requests; at the session's own provider and
    model each request keeps its own (a subagent's model too)."""
    if runs_as_recorded(session, provider, model):
        provider = model = None
    with st.spinner("Searching marker positions and lifetimes over the recorded requests…"):
        return _plan(session_key, provider, model, session)


def plan_rows(plan: RecordedPlan) -> list[dict[str, Any]]:
    """One row per marker of the plan: the block it goes on, in rule and words, its ttl."""
    return [
        {
            "block": m.rule.name,
            "which block": m.rule.meaning,
            "cache_control": f'{{"type": "ephemeral", "ttl": "{m.ttl}"}}',
            "requests": m.requests,
            "e.g.": m.example,
        }
        for m in plan.marks
    ]


def lint_rows(report: LintReport) -> list[dict[str, Any]]:
    """One row per component: where it sits, and ✓/changes per perturbation."""
    rows = []
    for c in report.components:
        row: dict[str, Any] = {"component": c.name, "layer": c.layer, "position": c.position}
        for p in report.perturbations:
            row[p.label] = "changes" if p.key in c.changes else ""
        row["cost"] = c.cost
        row["verdict"] = f"error: {c.fix}" if c.severity == "error" else c.severity
        rows.append(row)
    return rows


def current_text(layout: data.LayoutChoice) -> str:
    """The layout's own text: the built-in file, the uploaded or edited text, else rendered."""
    if layout.key in BUILTIN_LAYOUTS:
        return data.builtin_layout_text(layout.key)
    kept = layout_store.find(layout_store.link(layout))
    return kept[1] if kept is not None else layout_text(layout.layout)


def open_in_compare(current: data.LayoutChoice, text: str) -> None:
    """Compare's pickers set to the current layout (base) and the recommended one, edited (head).

    A current layout that is not built in (uploaded, edited, recommended before) goes to the
    base side as edited text: the same text, so the same layout and the same bill.
    """
    if current.key in BUILTIN_LAYOUTS:
        st.session_state["base_choice"] = current.key
    else:
        st.session_state["base_choice"] = COMPARE_EDIT
        st.session_state["base_text_seed"] = current_text(current)
    st.session_state["base_start"] = "seed"
    st.session_state["head_choice"] = COMPARE_EDIT
    st.session_state["head_start"] = "seed"
    st.session_state["head_text_seed"] = text
    st.session_state[SCROLL_TOP] = True
    st.switch_page("pages/2_Compare_layouts.py")


def open_in_step_view(text: str) -> None:
    """The sidebar's layout set to the recommended one, as if uploaded."""
    st.session_state["sel_layout"] = SIDEBAR_UPLOAD
    st.session_state["uploaded_layout"] = (RECOMMENDED_FILE, text)
    st.session_state[SCROLL_TOP] = True
    st.switch_page("app.py")


def lint_verdict(report: LintReport) -> tuple[bool, str]:
    """(error?, the banner): what "no error" means, and what the volatile components cost."""
    if report.errors:
        return True, (
            f"{report.errors} error(s): a component changes within the session ahead of stable"
            " cached content."
        )
    costly = sum(1 for c in report.components if c.changes and c.severity != "stable")
    said = (
        "No error: nothing that changes on every call sits ahead of stable cached content."
        if report.components
        else "No error: no block of the recorded requests changes from one to the next in a few"
        " characters (a stamp or an id) ahead of cached content."
    )
    if costly:
        said += (
            f" {costly} volatile component{'s' if costly != 1 else ''} in the cached prefix"
            " cost rewrites when they change (the table's cost column)."
        )
    return False, said


def recorded_note(report: LintReport) -> str:
    """What the lint says about a session of recorded requests, for the Recommend section."""
    if report.recorded:
        return "The lint above lists the blocks that changed from one request to the next."
    return (
        "The lint found no block that changed between one request and the next in a few"
        " characters (a stamp or an id)."
    )


def lifetime_note(layout: Layout, sidebar_ttl: str | None) -> str | None:
    """The recommended breakpoints' own lifetimes, and what the sidebar's lifetime still sets."""
    if not layout.breakpoint_ttl:
        return None
    own = ", ".join(f"{ttl} {anchor}" for anchor, ttl in layout.breakpoint_ttl.items())
    note = f"A lifetime per breakpoint ({own}): each write lives and is billed at its own rate."
    if sidebar_ttl:
        note += f" The sidebar's {sidebar_ttl} applies only to breakpoints without one."
    return note
