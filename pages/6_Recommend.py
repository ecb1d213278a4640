"""Recommend: the volatile components found by perturbation, and the cheapest layout for this session."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from assembler.analysis.advice import LintReport, layout_text, only_recorded
from ui.frame import page, recommend_view
from ui.frame.sidebar import Selection, sidebar
from ui.html import md
from ui.state import data
from ui.views import step


def _lint(sel: Selection) -> LintReport:
    report = recommend_view.lint_report(sel.session_key, sel.session, sel.layout)
    st.subheader("Lint: what each component's text depends on", anchor=False)
    failed, verdict = recommend_view.lint_verdict(report)
    if failed:
        st.error(verdict, icon=":material/error:")
    else:
        st.success(verdict, icon=":material/check_circle:")
    rows = recommend_view.lint_rows(report)
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    if report.recorded:
        st.caption(
            "Recorded requests: blocks that differ from the previous request in a few characters"
        )
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "step": f.step,
                        "block": f.block,
                        "before": f.before,
                        "after": f.after,
                        "position": f.position,
                    }
                    for f in report.recorded
                ]
            ),
            hide_index=True,
            width="stretch",
        )
    return report


def _plan(sel: Selection, report: LintReport) -> None:
    """A session of recorded requests: where its cache markers should go, and their ttl."""
    p = recommend_view.recorded_plan(sel.session_key, sel.session, sel.provider, sel.model)
    st.caption(
        f"{md(sel.session.source)}: every call is a recorded request, sent as recorded, so no"
        " layout changes it; its cache_control markers and their lifetimes do. "
        + recommend_view.recorded_note(report)
    )
    per_month = int(
        st.number_input("Sessions per month", min_value=0, value=1000, step=100, key="rec_volume")
    )
    m = st.columns(4)
    m[0].metric(
        "Recorded markers", f"${p.recorded.usd:,.4f}", help=f"hit ratio {p.recorded.hit:.1%}"
    )
    m[1].metric(
        "With the plan" if p.changed else "No better plan",
        f"${p.plan.usd:,.4f}",
        help="the plan applied to the recorded requests and simulated again",
    )
    m[2].metric("Saving per session", f"${p.saving_per_session:,.4f}")
    m[3].metric(
        f"Saving per month ({per_month:,} sessions)", f"${p.saving_per_month(per_month):,.2f}"
    )
    rows = recommend_view.plan_rows(p)
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    for sentence in (*p.sentences, p.lifetime, p.keep_alive):
        st.markdown(f"- {md(sentence)}")


def _recommend(sel: Selection, report: LintReport) -> None:
    if only_recorded(sel.session):
        st.subheader("Recommend: where the cache markers go, and their lifetime", anchor=False)
        _plan(sel, report)
        return
    st.subheader("Recommend: the cheapest layout the design allows", anchor=False)
    r = recommend_view.recommendation(
        sel.session_key, sel.session, sel.layout, sel.provider, sel.model
    )
    per_month = int(
        st.number_input("Sessions per month", min_value=0, value=1000, step=100, key="rec_volume")
    )
    m = st.columns(4)
    m[0].metric("Cost now", f"${r.before_usd:,.4f}", help=f"hit ratio {r.before_hit:.1%}")
    m[1].metric(
        "Cost recommended",
        f"${r.after_usd:,.4f}",
        delta=f"{(r.after_hit - r.before_hit) * 100:+.1f} points hit ratio"
        if abs(r.after_hit - r.before_hit) >= 0.0005
        else None,
    )
    m[2].metric("Saving per session", f"${r.saving_per_session:,.4f}")
    m[3].metric(
        f"Saving per month ({per_month:,} sessions)", f"${r.saving_per_month(per_month):,.2f}"
    )
    for sentence in (*r.changes, r.keep_alive):
        st.markdown(f"- {md(sentence)}")
    text = layout_text(r.recommended)
    left, right = st.columns(2, gap="medium")
    with left:
        st.caption(f"Current layout: {md(sel.layout.label)}")
        st.code(recommend_view.current_text(sel.layout), language="yaml")
    with right:
        st.caption("Recommended layout")
        st.code(text, language="yaml")
        note = recommend_view.lifetime_note(r.recommended, sel.ttl)
        if note:
            st.caption(md(note))
        st.download_button(
            "Download recommended.yaml",
            text,
            file_name=recommend_view.RECOMMENDED_FILE,
            key="rec_download",
        )
    head = data.layout_choice(text, recommend_view.RECOMMENDED_FILE)
    cmp = data.comparison(
        sel.session_key, sel.session, sel.layout, head, sel.provider, sel.model, sel.ttl
    )
    st.caption(
        f"Compare, under this sidebar's pricing: {md(sel.layout.label)} ${cmp.base.totals['usd']:,.4f}"
        f" → recommended ${cmp.head.totals['usd']:,.4f}."
    )
    b1, b2 = st.columns(2)
    if b1.button("Open in Compare", icon=":material/compare_arrows:", key="rec_compare"):
        recommend_view.open_in_compare(sel.layout, text)
    if b2.button("Open in the step view", icon=":material/stacks:", key="rec_step"):
        recommend_view.open_in_step_view(text)


def body() -> None:
    sel = sidebar()
    if sel is None:
        return
    step.write_query(None, sel.query())
    st.title(":material/auto_fix_high: Recommend", anchor=False)
    searched = (
        "the recorded requests are searched for the cache markers and lifetimes that bill least"
        if only_recorded(sel.session)
        else "the layouts the design allows are searched for the cheapest bill"
    )
    st.caption(
        f"{md(sel.session.title)} · {md(sel.provider_label)}. Every component is rendered again under"
        f" controlled changes of its context; then {searched}."
    )
    _recommend(sel, _lint(sel))


page.setup("Recommend", ":material/auto_fix_high:")
page.guarded(body)
